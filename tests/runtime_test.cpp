// Heterogeneous GPUs: the throughput matrix, run-time scaling in the simulation, the placement
// speed hook and the `runtime:` YAML block (docs/heterogeneity.md).
#include <gtest/gtest.h>

#include <deque>
#include <memory>

#include "models/throughput.hpp"
#include "planner/run.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/run_options.hpp"
#include "simulation/simulation.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "test_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::JobState;
using models::kSpeedOne;
using policies::PreemptMode;
using sim::kSecond;

namespace {

// FIFO with consolidate placement; at `preempt_at` the first running job is preempted with
// `mode` (no grace, no overhead) and queued again at the end.
class FifoPreemptAt final : public policies::Policy {
 public:
  explicit FifoPreemptAt(sim::Tick preempt_at = -1, PreemptMode mode = PreemptMode::Checkpoint)
      : at_(preempt_at), mode_(mode) {}
  std::string_view name() const override { return "test-fifo"; }
  void on_submit(const policies::ClusterView& v, JobIndex j) override {
    queue_.push_back(j);
    if (at_ >= 0 && v.now() < at_) woken_ = false;
  }
  void schedule(policies::Session& s) override {
    if (at_ >= 0 && s.now() >= at_ && !done_) {
      done_ = true;
      for (models::NodeId n = 0; n < s.cluster().nodes().size() && !fired_; ++n)
        for (JobIndex r : s.jobs_on_node(n)) {
          EXPECT_EQ(s.preempt(r, mode_, 0, models::kNoJob, "test"), "");
          fired_ = true;
          break;
        }
    }
    if (at_ >= 0 && !woken_) {
      s.wake_at(at_);
      woken_ = true;
    }
    while (!queue_.empty()) {
      const JobIndex j = queue_.front();
      auto p = policies::consolidate_placement(s.cluster(), s.workload().jobs[j], s.workload());
      if (!p) break;
      EXPECT_EQ(s.start(j, *p, "fits"), "");
      queue_.pop_front();
    }
  }

 private:
  sim::Tick at_;
  PreemptMode mode_;
  bool done_ = false, fired_ = false, woken_ = false;
  std::deque<JobIndex> queue_;
};

models::ClusterSpec pools(std::initializer_list<std::pair<const char*, int>> list, int gpus_per_node = 8) {
  models::ClusterSpec spec;
  for (const auto& [type, nodes] : list) spec.pools.push_back({type, nodes, gpus_per_node, type, 0, 0});
  return spec;
}

models::RuntimeSpec reference_v100() {
  models::RuntimeSpec rt;
  rt.enabled = true;
  rt.reference_gpu = "V100";
  return rt;
}

models::Workload train_job(double runtime_s, int gpus = 8) {
  auto w = headroom::testing::WorkloadBuilder().job(0, gpus, runtime_s).build();
  w.jobs[0].kind = models::JobKind::Train;
  return w;
}

}  // namespace

// ---- integer speeds -----------------------------------------------------------------------------

TEST(Speed, DurationsRoundUpAndWorkRoundsDown) {
  EXPECT_EQ(models::scaled_duration(100, kSpeedOne), 100);
  EXPECT_EQ(models::scaled_work(100, kSpeedOne), 100);
  EXPECT_EQ(models::scaled_duration(100, 3 * kSpeedOne), 34);  // ceil(33.3)
  EXPECT_EQ(models::scaled_work(100, 3 * kSpeedOne), 300);
  EXPECT_EQ(models::scaled_duration(100000, 2'200'000), 45455);  // ceil(45454.5)
  EXPECT_EQ(models::scaled_work(20000, 2'200'000), 44000);
  EXPECT_EQ(models::scaled_work(7, 500'000), 3);  // floor(3.5)
  // A time-sliced share num/den multiplies the speed: 1 GPU for 3 pods at 2x = 2/3.
  EXPECT_EQ(models::scaled_duration(100, 2 * kSpeedOne, 1, 3), 150);
  EXPECT_EQ(models::scaled_work(150, 2 * kSpeedOne, 1, 3), 100);
  EXPECT_EQ(models::scaled_duration(10, kSpeedOne, 2, 3), 15);  // the old ceil(10 * 3 / 2)
  EXPECT_EQ(models::speed_to_ppm(2.2), 2'200'000);
  EXPECT_EQ(models::speed_to_ppm(1e-9), 1);
  EXPECT_EQ(models::combine_speeds(2'200'000, 500'000), 1'100'000);
  EXPECT_EQ(models::combine_speeds(kSpeedOne, 700'000), 700'000);
}

// ---- the matrix ---------------------------------------------------------------------------------

TEST(Throughput, DefaultsAreRelativeToV100AndResolveAliases) {
  const auto m = models::ThroughputMatrix::defaults();
  const std::size_t train = *m.find_class("train");
  const std::size_t cnn = *m.find_class("cnn");
  EXPECT_EQ(m.throughput(train, "V100"), 1.0);
  EXPECT_EQ(m.throughput(train, "V100M32"), 1.0);
  EXPECT_EQ(m.throughput(train, "A100"), 2.2);
  EXPECT_EQ(m.throughput(train, "a100-sxm4-40gb"), 2.2);
  EXPECT_EQ(m.throughput(train, "H100"), 4.4);
  EXPECT_EQ(m.throughput(cnn, "K80"), 0.141);
  EXPECT_EQ(m.throughput(cnn, "k80"), 0.141);
  EXPECT_EQ(m.throughput(*m.find_class("recommendation"), "P100"), 2.222);
  EXPECT_EQ(m.throughput(*m.find_class("interactive"), "H200"), 1.0);
  EXPECT_EQ(m.throughput(train, "G2"), 1.0) << "unknown types run at the reference speed";
  EXPECT_EQ(m.gpus()[*m.find_gpu("a100")], "A100-80G");
  EXPECT_EQ(m.values().rows(), static_cast<Eigen::Index>(m.classes().size()));
  EXPECT_EQ(m.values().cols(), 8);
}

TEST(Throughput, RuntimeModelSpeedsByClassReferenceAndSlowestPool) {
  auto w = headroom::testing::WorkloadBuilder()
               .job(0, 8, 100, "nlp")
               .job(0, 8, 100, "vision")
               .job(0, 8, 100, "nlp")
               .job(0, 8, 100, "nlp")
               .build();
  for (auto& j : w.jobs) j.kind = models::JobKind::Train;
  w.gpu_type_names = {"A100"};
  w.jobs[2].gpu_type = 1;  // recorded on an A100: that is its reference
  w.jobs[3].service = 0;   // a service replica: never scaled
  auto rt = reference_v100();
  rt.rules.push_back({models::ClassRule::Field::Tenant, "vision", "cnn"});
  const auto cluster = pools({{"V100", 1}, {"A100", 1}, {"H100", 1}, {"G2", 1}});
  const models::RuntimeModel m(rt, w, cluster);
  EXPECT_EQ(m.pool_speed(0, 0), kSpeedOne);
  EXPECT_EQ(m.pool_speed(0, 1), 2'200'000);
  EXPECT_EQ(m.pool_speed(0, 2), 4'400'000);
  EXPECT_EQ(m.pool_speed(0, 3), kSpeedOne);
  EXPECT_EQ(m.pool_speed(1, 1), 2'000'000) << "the cnn row";
  EXPECT_EQ(m.pool_speed(1, 2), 3'600'000);
  EXPECT_EQ(m.pool_speed(2, 0), 454'545) << "1 / 2.2 of its A100 speed on a V100";
  EXPECT_EQ(m.pool_speed(3, 2), kSpeedOne);
  // A job spanning the V100 and H100 pools runs at its slowest GPU's speed.
  const models::ClusterState state(cluster);
  const models::Placement span{{0, 4, 0, 0}, {2, 4, 0, 0}};
  EXPECT_EQ(m.placement_speed(0, span, state), kSpeedOne);
  EXPECT_EQ(m.placement_speed(0, {{2, 8, 0, 0}}, state), 4'400'000);
}

TEST(Throughput, NoReferenceMeansNoScaling) {
  auto rt = reference_v100();
  rt.reference_gpu.clear();
  const auto w = train_job(100);
  const models::RuntimeModel m(rt, w, pools({{"H100", 1}}));
  EXPECT_EQ(m.pool_speed(0, 0), kSpeedOne);
}

// ---- the simulation -----------------------------------------------------------------------------

TEST(RuntimeScaling, DurationIsWorkOverSpeedRoundedUp) {
  const auto w = train_job(100);
  const auto cluster = pools({{"A100", 1}});
  FifoPreemptAt p;
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, p, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.job_speed(0), 2'200'000);
  EXPECT_EQ(sim.job_end(0), 45455);
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
}

TEST(RuntimeScaling, CheckpointPreemptionKeepsTheWorkDoneAtItsSpeed) {
  // 100 s of V100 work on an A100 (2.2x): preempted at 20 s it has done 44 s of work; restarted
  // at once it needs ceil(56000 / 2.2) = 25455 ms more.
  const auto w = train_job(100);
  const auto cluster = pools({{"A100", 1}});
  FifoPreemptAt p(20 * kSecond, PreemptMode::Checkpoint);
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, p, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.job_preemptions(0), 1);
  EXPECT_EQ(sim.job_end(0), 20000 + 25455);
}

TEST(RuntimeScaling, RequeuePreemptionLosesAllWork) {
  const auto w = train_job(100);
  const auto cluster = pools({{"A100", 1}});
  FifoPreemptAt p(20 * kSecond, PreemptMode::Requeue);
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, p, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.job_end(0), 20000 + 45455);
  EXPECT_EQ(sim.lost_gpu_ms(), 8 * 20000) << "losses are wall-clock GPU time";
}

TEST(RuntimeScaling, FailureKillKeepsCheckpointedWorkAtItsSpeed) {
  // Killed at 35 s with checkpoints every 10 s: 30 s of wall clock kept = 66 s of work; 34 s of
  // work left. The node is back at 45 s; the retry starts then and needs ceil(34000/2.2) = 15455.
  const auto w = train_job(100);
  const auto cluster = pools({{"A100", 1}});
  models::FailureSpec f;
  f.events.push_back({35 * kSecond, 10 * kSecond, {0}, "test"});
  f.checkpoint_interval = 10 * kSecond;
  f.backoff = kSecond;
  FifoPreemptAt p;
  simulation::SimulationOptions o;
  o.failures = f;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, p, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.jobs_killed(), 1);
  EXPECT_EQ(sim.job_end(0), 45000 + 15455);
  EXPECT_EQ(sim.failure_lost_gpu_ms(), 8 * 5000) << "5 s of wall clock since the last checkpoint";
}

TEST(RuntimeScaling, TimeSlicedPoolsProgressAtRateTimesSpeed) {
  const auto w = train_job(100, 1);
  auto cluster = pools({{"H100", 1}}, 1);
  cluster.pools[0].time_sliced = true;
  FifoPreemptAt p(30 * kSecond, PreemptMode::Checkpoint);
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, p, nullptr, o);
  sim.run();
  // 4.4x: by 30 s, 100 s of work is done (ceil(100000/4.4) = 22728 ms): it ended before.
  EXPECT_EQ(sim.job_end(0), 22728);
  EXPECT_EQ(sim.job_preemptions(0), 0);
}

TEST(RuntimeScaling, TimeSharedGpuProgressesAtShareTimesSpeed) {
  // Two pods on one time-sliced A100 (advertised as 2 units): each gets half of it at 2.2x, so
  // 1.1x. The 50 s job ends at ceil(50000 / 1.1) = 45455 ms; by then the 100 s job has done
  // floor(45455 x 1.1) = 50000 ms of work; alone at 2.2x its last 50 s take 22728 ms.
  class Sliced final : public policies::Policy {
   public:
    std::string_view name() const override { return "test-sliced"; }
    void on_submit(const policies::ClusterView&, JobIndex j) override { queue_.push_back(j); }
    void schedule(policies::Session& s) override {
      for (JobIndex j : queue_) EXPECT_EQ(s.start(j, {{0, 1, 0, 0}}, "slice"), "");
      queue_.clear();
    }
    models::ClusterSpec advertised_cluster(const models::ClusterSpec& spec) const override {
      models::ClusterSpec out = spec;
      out.pools[0].units_per_gpu = 2;
      return out;
    }

   private:
    std::vector<JobIndex> queue_;
  };
  auto w = headroom::testing::WorkloadBuilder().job(0, 1, 100).job(0, 1, 50).build();
  for (auto& j : w.jobs) j.kind = models::JobKind::Train;
  auto cluster = pools({{"A100", 1}}, 1);
  cluster.pools[0].time_sliced = true;
  Sliced p;
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, p, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.job_end(1), 45455);
  EXPECT_EQ(sim.job_end(0), 45455 + 22728);
}

TEST(RuntimeScaling, PlacementSpeedHookMultipliesIn) {
  const auto w = train_job(100);
  const auto cluster = pools({{"A100", 2}}, 4);  // 8 GPUs need both 4-GPU nodes
  std::size_t slices_seen = 0;
  simulation::SimulationOptions o;
  o.placement_speed = [&](const models::Job& job, const models::Placement& pl) {
    EXPECT_EQ(job.gpus, 8);
    slices_seen = pl.size();
    return pl.size() > 1 ? 0.5 : 1.0;
  };
  {
    FifoPreemptAt p;
    simulation::Simulation sim(w, cluster, p, nullptr, o);
    sim.run();
    EXPECT_EQ(slices_seen, 2u);
    EXPECT_EQ(sim.job_speed(0), 500'000);
    EXPECT_EQ(sim.job_end(0), 200000);
  }
  {
    o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
    FifoPreemptAt p;
    simulation::Simulation sim(w, cluster, p, nullptr, o);
    sim.run();
    EXPECT_EQ(sim.job_speed(0), 1'100'000) << "2.2 x 0.5";
    EXPECT_EQ(sim.job_end(0), 90910);  // ceil(100000 / 1.1)
  }
}

TEST(RuntimeScaling, WithoutModelOrHookNothingChanges) {
  const auto w = train_job(100);
  const auto cluster = pools({{"A100", 1}});
  FifoPreemptAt p1, p2;
  simulation::Simulation a(w, cluster, p1, nullptr);
  const auto fa = a.run().fingerprint;
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(models::RuntimeSpec{}, w, cluster);  // no reference
  simulation::Simulation b(w, cluster, p2, nullptr, o);
  EXPECT_EQ(b.run().fingerprint, fa);
  EXPECT_EQ(a.job_end(0), 100000);
}

// ---- YAML ---------------------------------------------------------------------------------------

namespace {

const std::string kDataDir = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios";
const std::string kInline = kDataDir + "/inline.yaml";
const std::string kBase = R"(name: base
cluster:
  pools:
    - name: v100
      nodes: 4
      gpus_per_node: 8
      gpu_type: V100
    - name: g2
      nodes: 2
      gpus_per_node: 8
      gpu_type: G2
policy: fifo
workload:
  trace: tiny.csv
)";

std::vector<sim::InputError> errors_of(const std::string& text) {
  try {
    scenarios::parse_scenario(text, kInline);
  } catch (const sim::InputErrors& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected InputErrors for:\n" << text;
  return {};
}

}  // namespace

TEST(RuntimeYaml, ParsesReferenceRulesAndRows) {
  const auto s = scenarios::parse_scenario(kBase + R"(runtime:
  reference_gpu: V100
  classes:
    - {tenant: vision, class: cnn}
    - {kind: inference, class: llm}
  throughput:
    llm: {V100: 1, A100: 3, G2: 1.5}
    cnn: {G2: 0.8}
)",
                                           kInline);
  const auto& rt = s.runtime;
  EXPECT_TRUE(rt.enabled);
  EXPECT_EQ(rt.reference_gpu, "V100");
  ASSERT_EQ(rt.rules.size(), 2u);
  EXPECT_EQ(rt.rules[0].field, models::ClassRule::Field::Tenant);
  EXPECT_EQ(rt.rules[0].value, "vision");
  EXPECT_EQ(rt.rules[1].field, models::ClassRule::Field::Kind);
  EXPECT_EQ(rt.rules[1].cls, "llm");
  const auto llm = *rt.matrix.find_class("llm");
  EXPECT_EQ(rt.matrix.throughput(llm, "A100-80G"), 3.0);
  EXPECT_EQ(rt.matrix.throughput(llm, "H100"), 1.0) << "a new row is 1 where not given";
  EXPECT_EQ(rt.matrix.throughput(llm, "g2"), 1.5);
  EXPECT_EQ(rt.matrix.throughput(*rt.matrix.find_class("cnn"), "G2"), 0.8);
  EXPECT_EQ(rt.matrix.throughput(*rt.matrix.find_class("cnn"), "A100"), 2.0) << "defaults kept";
  EXPECT_FALSE(scenarios::parse_scenario(kBase, kInline).runtime.enabled);
}

TEST(RuntimeYaml, ErrorsNameLineColumnAndKey) {
  auto e = errors_of(kBase + "runtime:\n  reference_gpu: V10\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].line(), 16);
  EXPECT_EQ(e[0].column(), 18);
  EXPECT_EQ(e[0].where(), "runtime.reference_gpu");
  EXPECT_NE(std::string(e[0].what()).find("unknown GPU type \"V10\""), std::string::npos) << e[0].what();
  EXPECT_NE(std::string(e[0].what()).find("did you mean"), std::string::npos) << e[0].what();

  e = errors_of(kBase + "runtime:\n  throughput:\n    cnn: {Z100: 2, V100: 0, A100: -1}\n");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].line(), 17);
  EXPECT_EQ(e[0].column(), 11);
  EXPECT_EQ(e[0].where(), "runtime.throughput.cnn.Z100");
  EXPECT_NE(std::string(e[0].what()).find("unknown GPU type \"Z100\""), std::string::npos) << e[0].what();
  EXPECT_EQ(e[1].where(), "runtime.throughput.cnn.V100");
  EXPECT_EQ(e[1].column(), 26);
  EXPECT_NE(std::string(e[1].what()).find("expected a number > 0"), std::string::npos) << e[1].what();
  EXPECT_EQ(e[2].where(), "runtime.throughput.cnn.A100");

  e = errors_of(kBase +
                "runtime:\n  classes:\n    - {tenant: a, class: cnnn}\n    - {kind: training, class: cnn}\n"
                "    - {tenant: a, queue: b, class: cnn}\n");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].line(), 17);
  EXPECT_EQ(e[0].where(), "runtime.classes[0].class");
  EXPECT_NE(std::string(e[0].what()).find("unknown job class \"cnnn\""), std::string::npos) << e[0].what();
  EXPECT_NE(std::string(e[0].what()).find("did you mean \"cnn\""), std::string::npos) << e[0].what();
  EXPECT_EQ(e[1].where(), "runtime.classes[1].kind");
  EXPECT_NE(std::string(e[1].what()).find("unknown job kind \"training\""), std::string::npos) << e[1].what();
  EXPECT_EQ(e[2].where(), "runtime.classes[2]");
  EXPECT_EQ(e[2].line(), 19);
  EXPECT_EQ(e[2].column(), 7);

  e = errors_of(kBase + "runtime: V100\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].where(), "runtime");
}

TEST(RuntimeYaml, ScenarioOptionsCarryTheModel) {
  const auto s = scenarios::parse_scenario(kBase + "runtime: {reference_gpu: V100}\n", kInline);
  const auto w = train_job(100);
  const auto o = scenarios::simulation_options(s, w);
  ASSERT_NE(o.runtime, nullptr);
  EXPECT_EQ(o.runtime->pool_speed(0, 0), kSpeedOne);
  EXPECT_EQ(o.runtime->pool_speed(0, 1), kSpeedOne) << "G2 has no column";
  EXPECT_EQ(scenarios::simulation_options(scenarios::parse_scenario(kBase, kInline), w).runtime, nullptr);
}

// ---- the gavel policy -----------------------------------------------------------------------------

namespace {

policies::PolicyParams gavel_params(const std::string& round) {
  policies::PolicyParams p;
  p["round"] = policies::ParamValue{round, "test", 1, 1};
  return p;
}

// Two 1-GPU jobs of 100 s (V100 work) on one V100 and one A100 GPU: tenant "rl" jobs gain 1.25x
// on an A100, tenant "nlp" (transformer) jobs 2.2x.
struct GavelRun {
  models::Workload w;
  models::ClusterSpec cluster = pools({{"V100", 1}, {"A100", 1}}, 1);
  std::unique_ptr<policies::Policy> policy;
  std::unique_ptr<simulation::Simulation> sim;
  GavelRun(models::Workload workload, const std::string& round) : w(std::move(workload)) {
    for (auto& j : w.jobs) j.kind = models::JobKind::Train;
    auto rt = reference_v100();
    rt.rules.push_back({models::ClassRule::Field::Tenant, "rl", "rl"});
    rt.rules.push_back({models::ClassRule::Field::Tenant, "nlp", "transformer"});
    simulation::SimulationOptions o;
    o.runtime = std::make_shared<const models::RuntimeModel>(rt, w, cluster);
    policy = policies::make_policy("gavel", gavel_params(round), 1);
    sim = std::make_unique<simulation::Simulation>(w, cluster, *policy, nullptr, o);
    sim->run();
  }
};

}  // namespace

TEST(Gavel, TheJobThatGainsMostGetsTheFasterType) {
  for (const bool nlp_first : {true, false}) {
    auto b = headroom::testing::WorkloadBuilder();
    if (nlp_first) {
      b.job(0, 1, 100, "nlp").job(0, 1, 100, "rl");
    } else {
      b.job(0, 1, 100, "rl").job(0, 1, 100, "nlp");
    }
    GavelRun r(b.build(), "1h");
    const JobIndex nlp = nlp_first ? 0 : 1, rl = nlp_first ? 1 : 0;
    EXPECT_EQ(r.sim->job_start(nlp), 0);
    EXPECT_EQ(r.sim->job_start(rl), 0);
    EXPECT_EQ(r.sim->job_speed(nlp), 2'200'000) << "on the A100";
    EXPECT_EQ(r.sim->job_speed(rl), kSpeedOne) << "on the V100";
    EXPECT_EQ(r.sim->job_end(nlp), 45455);
    EXPECT_EQ(r.sim->job_end(rl), 100000);
    EXPECT_EQ(r.sim->job_preemptions(0) + r.sim->job_preemptions(1), 0);
  }
}

TEST(Gavel, JobsMoveToTheirBestTypeAtTheNextRound) {
  // The rl job arrives alone and takes the A100 (1.25x); the transformer job arriving at 10 s gets
  // the V100. At the round boundary (60 s) they swap, each keeping its work: rl has done
  // 60 x 1.25 = 75 s of work (25 s left, on the V100: ends at 85 s), the transformer 50 s (50 s
  // left at 2.2x: ceil(50000 / 2.2) = 22728 ms, ends at 82.728 s).
  GavelRun r(headroom::testing::WorkloadBuilder().job(0, 1, 100, "rl").job(10, 1, 100, "nlp").build(), "60s");
  EXPECT_EQ(r.sim->job_start(0), 0);
  EXPECT_EQ(r.sim->job_start(1), 10000);
  EXPECT_EQ(r.sim->job_preemptions(0), 1);
  EXPECT_EQ(r.sim->job_preemptions(1), 1);
  EXPECT_EQ(r.sim->job_speed(0), kSpeedOne);
  EXPECT_EQ(r.sim->job_speed(1), 2'200'000);
  EXPECT_EQ(r.sim->job_end(0), 85000);
  EXPECT_EQ(r.sim->job_end(1), 82728);
}

TEST(Gavel, RoundsShareOneGpuMaxMinFair) {
  // One V100, two 250 s jobs, 100 s rounds, no runtime model: the job with the lower attained
  // rate runs each round (ties: submit time, then index): J0 0-100, J1 100-200, J0 200-300,
  // J1 300-400, J0 400-450 (done); J1 takes the freed GPU at once and ends at 500.
  const auto w = headroom::testing::WorkloadBuilder().job(0, 1, 250).job(0, 1, 250).build();
  const auto cluster = pools({{"V100", 1}}, 1);
  auto policy = policies::make_policy("gavel", gavel_params("100s"), 1);
  simulation::Simulation sim(w, cluster, *policy, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_end(0), 450000);
  EXPECT_EQ(sim.job_end(1), 500000);
  EXPECT_EQ(sim.job_start(1), 100000);
  EXPECT_EQ(sim.job_preemptions(0), 2);
  EXPECT_EQ(sim.job_preemptions(1), 2);
}

TEST(Gavel, ParameterErrors) {
  auto errors = policies::check_policy("gavel", gavel_params("0s"), "f.yaml", 3, 3);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where(), "policy.round");
  policies::PolicyParams p;
  p["lease"] = policies::ParamValue{"6m", "f.yaml", 4, 3};
  errors = policies::check_policy("gavel", p, "f.yaml", 3, 3);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 4);
}

TEST(Gavel, RealTraceOnTwoGpuTypesKeepsTheInvariants) {
  // The first 14 days of RICC (bundled), 3 days of it, on 64 V100 and 32 H100 nodes of 8 GPUs;
  // run times are V100 work. Every job ends once; an unpreempted job's run is its work at the
  // speed of the pool it ran on; two runs give the same fingerprint.
  const std::string text = R"(name: ricc-hetero
cluster:
  pools:
    - {name: v100, nodes: 64, gpus_per_node: 8, gpu_type: V100}
    - {name: h100, nodes: 32, gpus_per_node: 8, gpu_type: H100}
policy: {name: gavel, round: 6m}
runtime: {reference_gpu: V100}
workload:
  trace: )" + std::string(HEADROOM_SOURCE_DIR) +
                           R"(/scenarios/examples/data/ricc-2010-first-14d.swf.gz
  format: swf
  window: {start: 0s, end: 3d}
)";
  const auto s = scenarios::parse_scenario(text, kInline);
  const auto a = planner::run_scenario(s);
  const auto b = planner::run_scenario(s);
  EXPECT_EQ(a.result.fingerprint, b.result.fingerprint);
  const auto& jobs = a.result.jobs;
  ASSERT_GT(jobs.size(), 1000u);
  const auto w = scenarios::build_workload(s);
  const models::RuntimeModel model(s.runtime, w, s.cluster);
  std::size_t completed = 0, on_h100 = 0, checked = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    const auto state = static_cast<JobState>(j.state);
    EXPECT_TRUE(state == JobState::Completed || state == JobState::Rejected || state == JobState::Failed ||
                state == JobState::Cancelled)
        << i;
    if (state != JobState::Completed) continue;
    ++completed;
    EXPECT_GE(j.start, j.submit);
    if (j.preemptions > 0 || j.gpus <= 0) continue;
    const std::int64_t speed = model.pool_speed(static_cast<JobIndex>(i), static_cast<models::PoolId>(j.pool));
    EXPECT_EQ(j.end - j.start, models::scaled_duration(j.runtime, speed)) << i;
    on_h100 += j.pool == 1 ? 1 : 0;
    ++checked;
  }
  EXPECT_GT(completed, jobs.size() / 2);
  EXPECT_GT(checked, 100u);
  EXPECT_GT(on_h100, 0u);
}

TEST(Gavel, RealTraceWithFailuresEndsEveryJobOnceDeterministically) {
  // The same three days with random node failures (checkpoints every 30 min) and a pool outage:
  // kills, retries and round moves mix; every job still ends in one terminal state and two runs
  // agree.
  const std::string text = R"(name: ricc-hetero-failures
cluster:
  pools:
    - {name: v100, nodes: 64, gpus_per_node: 8, gpu_type: V100}
    - {name: h100, nodes: 32, gpus_per_node: 8, gpu_type: H100}
policy: {name: gavel, round: 10m, checkpoint_overhead: 30s}
runtime: {reference_gpu: V100, classes: [{kind: batch, class: cnn}]}
failures:
  nodes: {mtbf: 5d, repair: 2h}
  events: [{at: 1d, pool: h100, duration: 3h}]
  jobs: {checkpoint_interval: 30m, restart_overhead: 1m}
workload:
  trace: )" + std::string(HEADROOM_SOURCE_DIR) +
                           R"(/scenarios/examples/data/ricc-2010-first-14d.swf.gz
  format: swf
  window: {start: 0s, end: 3d}
)";
  const auto s = scenarios::parse_scenario(text, kInline);
  const auto a = planner::run_scenario(s);
  const auto b = planner::run_scenario(s);
  EXPECT_EQ(a.result.fingerprint, b.result.fingerprint);
  EXPECT_GT(a.result.jobs_killed, 0);
  std::size_t completed = 0;
  for (const auto& j : a.result.jobs) {
    const auto state = static_cast<JobState>(j.state);
    EXPECT_NE(state, JobState::Pending);
    EXPECT_NE(state, JobState::Running);
    completed += state == JobState::Completed ? 1 : 0;
  }
  EXPECT_GT(completed, a.result.jobs.size() / 2);
}

TEST(RuntimeScaling, SlurmSuspendResumeKeepsTheWorkDoneAtItsSpeed) {
  // Slurm's S5 drill (tests/policies/slurm/slurm_test.cpp) on A100s with V100 run times (batch: 2.2x). L (4
  // GPUs, 1000 s of work) is suspended when H (2 GPUs, 300 s) arrives at 10 s, having done 22 s of
  // work; H runs ceil(300000 / 2.2) = 136364 ms; L resumes then with 978 s of work left,
  // ceil(978000 / 2.2) = 444546 ms.
  auto w = headroom::testing::WorkloadBuilder().job(0, 4, 1000).job(10, 2, 300).build();
  w.jobs[0].queue = w.queues.intern("lo");
  w.jobs[1].queue = w.queues.intern("hi");
  const auto cluster = pools({{"A100", 1}}, 4);
  policies::PolicyParams params;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"PreemptType", "preempt/partition_prio"},
                                                                             {"PreemptMode", "SUSPEND,GANG"},
                                                                             {"partitions.hi.PriorityTier", "2"},
                                                                             {"partitions.lo.PriorityTier", "1"},
                                                                             {"partitions.lo.Default", "YES"}})
    params[k] = policies::ParamValue{v, "test", 1, 1};
  auto policy = policies::make_policy("slurm", params, 1);
  simulation::SimulationOptions o;
  o.runtime = std::make_shared<const models::RuntimeModel>(reference_v100(), w, cluster);
  simulation::Simulation sim(w, cluster, *policy, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.job_start(1), 10000);
  EXPECT_EQ(sim.job_preemptions(0), 1);
  EXPECT_EQ(sim.job_end(1), 10000 + 136364);
  EXPECT_EQ(sim.job_end(0), 10000 + 136364 + 444546);
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
}
