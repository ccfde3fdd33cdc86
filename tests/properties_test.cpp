// Invariants that must hold for every policy on every workload: capacity is never exceeded, each
// job ends exactly once, GPU-seconds are conserved; and runs are deterministic.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "apps/pipeline.hpp"
#include "policies/registry.hpp"
#include "results/recorder.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::JobState;

namespace {

// Checks invariants as the simulation reports them.
class InvariantObserver : public models::SimObserver {
 public:
  InvariantObserver(const models::Workload& w, const models::ClusterSpec& c)
      : w_(w), capacity_(c.total_gpus()), ends_(w.jobs.size(), 0), starts_(w.jobs.size(), -1) {
    for (const auto& p : c.pools)
      for (int i = 0; i < p.nodes; ++i) node_cap_.push_back(p.gpus_per_node);
    node_used_.assign(node_cap_.size(), 0);
  }
  void on_event(sim::Tick, models::AuditKind, JobIndex, std::int32_t, std::string_view) override {}
  void on_start(sim::Tick t, JobIndex j, const models::Placement& p) override {
    advance(t);
    std::int32_t g = 0;
    for (const auto& s : p) {
      node_used_[s.node] += s.gpus;
      g += s.gpus;
      if (node_used_[s.node] > node_cap_[s.node]) overcommits_++;
    }
    EXPECT_EQ(g, w_.jobs[j].gpus);
    EXPECT_GE(t, w_.jobs[j].submit) << "started before it was submitted";
    used_ += g;
    if (used_ > capacity_) overcommits_++;
    starts_[j] = t;
    placements_[j] = p;
  }
  void on_end(sim::Tick t, JobIndex j, JobState s) override {
    advance(t);
    ends_[j]++;
    if (s == JobState::Completed || s == JobState::Failed || s == JobState::Cancelled) {
      EXPECT_EQ(t - starts_[j], w_.jobs[j].runtime) << "job " << j << " ran for a different time than recorded";
      job_gpu_ms_ += static_cast<std::int64_t>(w_.jobs[j].gpus) * (t - starts_[j]);
      for (const auto& sl : placements_[j]) node_used_[sl.node] -= sl.gpus;
      used_ -= w_.jobs[j].gpus;
    }
  }
  void on_sample(const models::Sample& s) override {
    std::int64_t used = 0;
    for (auto u : s.pool_used_gpus) used += u;
    EXPECT_EQ(used, used_) << "sample at " << s.time;
  }
  void advance(sim::Tick t) {
    EXPECT_GE(t, last_) << "time went backwards";
    area_gpu_ms_ += used_ * (t - last_);
    last_ = t;
  }

  const models::Workload& w_;
  std::int64_t capacity_;
  std::vector<int> ends_;
  std::vector<sim::Tick> starts_;
  std::map<JobIndex, models::Placement> placements_;
  std::vector<std::int32_t> node_cap_, node_used_;
  std::int64_t used_ = 0, overcommits_ = 0, area_gpu_ms_ = 0, job_gpu_ms_ = 0;
  sim::Tick last_ = 0;
};

models::Workload random_workload(std::uint64_t seed, int n, int max_gpus) {
  sim::RngStream rng(seed, "test/workload");
  headroom::testing::WorkloadBuilder b;
  double t = 0;
  static const int kSizes[] = {1, 1, 1, 2, 4, 8, 12, 16, 3, 24};
  for (int i = 0; i < n; ++i) {
    t += std::floor(rng.exponential(1.0 / 30.0));
    const int gpus = i % 97 == 0 ? 64 : std::min(max_gpus, kSizes[rng.below(10)]);
    const double runtime = std::floor(rng.lognormal(5.0, 1.5));
    b.job(t, gpus, runtime, "tenant" + std::to_string(rng.below(5)));
    if (rng.bernoulli(0.1)) b.status(models::TraceStatus::Failed);
  }
  return b.build();
}

}  // namespace

class PolicyProperties : public ::testing::TestWithParam<std::tuple<std::string, std::uint64_t>> {};

TEST_P(PolicyProperties, NoOvercommitOneTerminalStateGpuSecondsConserved) {
  const auto& [policy_name, seed] = GetParam();
  const auto w = random_workload(seed, 2000, 24);
  models::ClusterSpec c;
  c.pools.push_back({"big", 3, 8, "A100", 0, 0});
  c.pools.push_back({"small", 4, 4, "T4", 0, 0});
  auto policy = policies::make_policy(policy_name, {}, seed);
  InvariantObserver obs(w, c);
  simulation::Simulation sim(w, c, *policy, &obs);
  const auto stats = sim.run();
  EXPECT_EQ(obs.overcommits_, 0);
  EXPECT_LE(sim.peak_used_gpus(), c.total_gpus());
  std::int64_t expected_gpu_ms = 0;
  int rejected = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends_[j], 1) << "job " << j << " ended " << obs.ends_[j] << " times";
    const auto s = sim.job_state(j);
    EXPECT_TRUE(s != JobState::Pending && s != JobState::Running);
    if (s == JobState::Rejected) {
      ++rejected;
      EXPECT_GT(w.jobs[j].gpus, 24) << "only jobs larger than the largest pool are rejected";
    } else {
      expected_gpu_ms += static_cast<std::int64_t>(w.jobs[j].gpus) * w.jobs[j].runtime;
    }
  }
  EXPECT_GT(rejected, 0) << "the workload includes jobs that never fit";
  obs.advance(stats.end);
  EXPECT_EQ(obs.job_gpu_ms_, expected_gpu_ms);
  EXPECT_EQ(obs.area_gpu_ms_, expected_gpu_ms) << "GPU-seconds of the utilisation curve equal the jobs' GPU-seconds";
  EXPECT_EQ(obs.used_, 0);
}

TEST_P(PolicyProperties, HorizonLeavesActiveJobsUnfinished) {
  const auto& [policy_name, seed] = GetParam();
  const auto w = random_workload(seed, 500, 24);
  const auto c = headroom::testing::cluster(2, 8);
  auto policy = policies::make_policy(policy_name, {}, seed);
  InvariantObserver obs(w, c);
  simulation::SimulationOptions opt;
  opt.horizon = w.jobs[250].submit;
  simulation::Simulation sim(w, c, *policy, &obs, opt);
  const auto stats = sim.run();
  EXPECT_EQ(stats.end, opt.horizon);
  int unfinished = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends_[j], 1);
    unfinished += sim.job_state(j) == JobState::Unfinished;
    if (w.jobs[j].submit > opt.horizon) {
      EXPECT_EQ(sim.job_state(j), JobState::Unfinished);
    }
  }
  EXPECT_GE(unfinished, 249);
  EXPECT_EQ(obs.overcommits_, 0);
}

TEST_P(PolicyProperties, SameSeedSameFingerprint) {
  // Not a structured binding: fp captures them (clang before 16 cannot capture bindings).
  const std::string policy_name = std::get<0>(GetParam());
  const auto seed = std::get<1>(GetParam());
  const auto w = random_workload(seed, 1000, 16);
  const auto c = headroom::testing::cluster(4, 8);
  auto fp = [&] {
    auto policy = policies::make_policy(policy_name, {}, seed);
    simulation::Simulation sim(w, c, *policy, nullptr);
    return sim.run().fingerprint;
  };
  const auto a = fp();
  EXPECT_EQ(a, fp());
  const auto other = random_workload(seed + 100, 1000, 16);
  auto policy = policies::make_policy(policy_name, {}, seed);
  simulation::Simulation sim(other, c, *policy, nullptr);
  EXPECT_NE(a, sim.run().fingerprint);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PolicyProperties,
                         ::testing::Combine(::testing::Values("fifo", "sjf"), ::testing::Values(1u, 2u, 3u, 4u, 5u)));

// The bundled real trace, through the whole pipeline, at 1 and 2 threads, under every policy
// headroom knows: its own example scenarios/examples/ricc-14d-<policy>.yaml when there is one,
// else the fifo example with the policy swapped in at its defaults.
class RealTraceDeterminism : public ::testing::TestWithParam<std::string> {};

std::vector<std::string> every_policy() {
  std::vector<std::string> names;
  for (const auto& info : policies::policy_catalogue()) names.push_back(info.name);
  return names;
}

// A test name for a policy: a variant's `+` becomes `_` (kubernetes_coscheduling).
std::string test_name(std::string policy) {
  std::replace(policy.begin(), policy.end(), '+', '_');
  return policy;
}

TEST(RealTraceDeterminismCoverage, EveryPolicyIsChecked) {
  // The list is taken from the registry, so a new policy is covered without editing this file.
  EXPECT_GE(every_policy().size(), 3u);
}

TEST_P(RealTraceDeterminism, OneAndTwoThreadsGiveIdenticalResults) {
  const std::string examples = std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/";
  const std::string own = examples + "ricc-14d-" + GetParam() + ".yaml";
  auto sc = scenarios::load_scenario(std::filesystem::exists(own) ? own : examples + "ricc-14d-fifo.yaml");
  if (sc.policy.name != GetParam()) {
    sc.policy.name = GetParam();
    sc.policy.params.clear();
  }
  auto run_with = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return app::run_scenario(sc).result;
  };
  const auto one = run_with(1);
  const auto two = run_with(2);
  EXPECT_EQ(one.fingerprint, two.fingerprint);
  ASSERT_EQ(one.jobs.size(), two.jobs.size());
  EXPECT_EQ(one.jobs.size(), 13607u);
  for (std::size_t i = 0; i < one.jobs.size(); ++i) {
    ASSERT_EQ(one.jobs[i].start, two.jobs[i].start) << i;
    ASSERT_EQ(one.jobs[i].end, two.jobs[i].end) << i;
  }
  EXPECT_EQ(one.timeseries.pool_used_gpus, two.timeseries.pool_used_gpus);
  EXPECT_EQ(one.events.size(), two.events.size());
}

INSTANTIATE_TEST_SUITE_P(Policies, RealTraceDeterminism, ::testing::ValuesIn(every_policy()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

// "Why pending" and the cluster map's placements, as the recorder stores them.
TEST(WhyPending, ReasonsAreClassified) {
  using models::PendingCode;
  EXPECT_EQ(models::classify_pending_reason("head of line: waiting for free GPUs"), PendingCode::Capacity);
  EXPECT_EQ(models::classify_pending_reason("unschedulable: no node has enough free nvidia.com/gpu"),
            PendingCode::Capacity);
  EXPECT_EQ(models::classify_pending_reason("quota: rejected at admission, retrying"), PendingCode::Quota);
  EXPECT_EQ(models::classify_pending_reason("OverLimit: queue limit 2 GPUs"), PendingCode::Quota);
  EXPECT_EQ(models::classify_pending_reason("gang: 3 of 4 pods placeable"), PendingCode::Gang);
  EXPECT_EQ(models::classify_pending_reason("reservation: nodes held for job 12 from 3600 s"),
            PendingCode::Reservation);
  EXPECT_EQ(models::classify_pending_reason("preemption: nominated to node 3, victims terminating"),
            PendingCode::Preemption);
  EXPECT_EQ(models::classify_pending_reason("priority: behind higher-priority jobs"), PendingCode::Priority);
  EXPECT_EQ(models::classify_pending_reason("admission check pending"), PendingCode::Admission);
  EXPECT_EQ(models::classify_pending_reason("mysterious"), PendingCode::Other);
  EXPECT_EQ(models::classify_pending_reason(""), PendingCode::None);
}

namespace {

// A fifo run of `w` on `c` through the recorder, with a sample every 30 s.
results::RunResult recorded_fifo_run(const models::Workload& w, const models::ClusterSpec& c) {
  auto policy = policies::make_policy("fifo", {}, 1);
  results::Recorder rec(w, c);
  simulation::SimulationOptions options;
  options.sample_interval = 30 * sim::kSecond;
  simulation::Simulation sim(w, c, *policy, &rec, options);
  sim.run();
  return std::move(rec.result());
}

}  // namespace

TEST(WhyPending, RecordedOnChangeWithPlacementsAndCounts) {
  // One 8-GPU node. J0 (8 GPUs, 100 s) runs at once; J1 (8 GPUs, 50 s) arrives at 10 s and waits
  // at the head of the fifo queue until 100 s; J2 (4 GPUs) waits behind it.
  auto w = headroom::testing::WorkloadBuilder().job(0, 8, 100).job(10, 8, 50).job(20, 4, 10).build();
  const auto c = headroom::testing::cluster(1, 8);
  const auto r = recorded_fifo_run(w, c);
  // Waiting events: J1 once when it becomes the blocked head (said again every pass, recorded
  // once); J2 when it queues behind J1 at 20 s, and again when it becomes the head at 100 s.
  std::vector<std::pair<std::uint32_t, sim::Tick>> waiting;
  const std::string head = "head of line: waiting for free GPUs";
  for (const auto& e : r.events)
    if (e.kind == static_cast<std::uint8_t>(models::AuditKind::Waiting)) {
      waiting.emplace_back(e.job, e.time);
      const bool behind = e.job == 2 && e.time == 20 * sim::kSecond;
      EXPECT_EQ(e.detail,
                static_cast<std::int32_t>(behind ? models::PendingCode::Priority : models::PendingCode::Capacity));
      EXPECT_EQ(r.reasons.at(e.reason),
                behind ? "priority: queued behind job 2, the head of line (strict order, no backfill)" : head);
    }
  EXPECT_EQ(waiting, (std::vector<std::pair<std::uint32_t, sim::Tick>>{
                         {1, 10 * sim::kSecond}, {2, 20 * sim::kSecond}, {2, 100 * sim::kSecond}}));
  // Placements: one node slice per run, closed when the job ends.
  ASSERT_EQ(r.placements.size(), 3u);
  EXPECT_EQ(r.placements[0].job, 0u);
  EXPECT_EQ(r.placements[0].start, 0);
  EXPECT_EQ(r.placements[0].end, 100 * sim::kSecond);
  EXPECT_EQ(r.placements[0].gpus, 8);
  EXPECT_EQ(r.placements[1].job, 1u);
  EXPECT_EQ(r.placements[1].start, 100 * sim::kSecond);
  EXPECT_EQ(r.placements[1].end, 150 * sim::kSecond);
  EXPECT_EQ(r.placements[2].start, 150 * sim::kSecond);
  // Pending jobs by reason per sample: at 30 s and 60 s J1 waits for capacity and J2 behind it
  // (priority: the queue's order).
  const auto& ts = r.timeseries;
  ASSERT_GE(ts.time.size(), 3u);
  ASSERT_EQ(ts.pending_by_reason.size(), ts.time.size() * models::kPendingCodes);
  for (std::size_t i = 0; i < ts.time.size(); ++i) {
    if (ts.time[i] != 30 * sim::kSecond && ts.time[i] != 60 * sim::kSecond) continue;
    const auto* row = &ts.pending_by_reason[i * models::kPendingCodes];
    EXPECT_EQ(row[static_cast<int>(models::PendingCode::Capacity)], 1) << ts.time[i];
    EXPECT_EQ(row[static_cast<int>(models::PendingCode::Priority)], 1) << ts.time[i];
    EXPECT_EQ(row[static_cast<int>(models::PendingCode::None)], 0) << ts.time[i];
  }
}

TEST(Fragmentation, FreeGpusNoWaitingJobFitsAreCountedInTheSamples) {
  // Two 4-GPU nodes. J0 and J1 (3 GPUs, 100 s) take one node each, leaving 1 GPU free on each;
  // J2 arrives at 1 s and needs a whole node (4 GPUs; or 8 = two whole nodes), so both free GPUs
  // are fragmented until 100 s. After J2 ends nothing waits and nothing is fragmented.
  for (int j2_gpus : {4, 8}) {
    SCOPED_TRACE(j2_gpus);
    auto w = headroom::testing::WorkloadBuilder().job(0, 3, 100).job(0, 3, 100).job(1, j2_gpus, 10).build();
    const auto result = recorded_fifo_run(w, headroom::testing::cluster(2, 4));
    const auto& ts = result.timeseries;
    ASSERT_EQ(ts.pool_frag_gpus.size(), ts.time.size());
    int checked = 0;
    for (std::size_t i = 0; i < ts.time.size(); ++i) {
      const sim::Tick t = ts.time[i];
      if (t >= 30 * sim::kSecond && t <= 90 * sim::kSecond) {
        EXPECT_EQ(ts.pool_free_gpus[i], 2) << t;
        EXPECT_EQ(ts.pool_frag_gpus[i], 2) << t;
        ++checked;
      } else if (t >= 110 * sim::kSecond) {
        EXPECT_EQ(ts.pool_frag_gpus[i], 0) << t;
      }
    }
    EXPECT_EQ(checked, 3);
    const results::Summary s = results::summarize(result);
    EXPECT_GT(s.fragmentation, 0.99);
    EXPECT_LE(s.fragmentation, 1.0);
  }
  // A 1-GPU job waiting behind J2 (fifo's head of line) fits either free GPU: they are idle, but
  // not fragmented.
  auto w = headroom::testing::WorkloadBuilder().job(0, 3, 100).job(0, 3, 100).job(1, 4, 10).job(2, 1, 10).build();
  const auto result = recorded_fifo_run(w, headroom::testing::cluster(2, 4));
  const auto& ts = result.timeseries;
  for (std::size_t i = 0; i < ts.time.size(); ++i) {
    if (ts.time[i] >= 30 * sim::kSecond && ts.time[i] <= 90 * sim::kSecond) {
      EXPECT_EQ(ts.pool_frag_gpus[i], 0);
    }
  }
}

// models::Job::withdraw_at under every policy: a pending job withdrawn leaves the policy's queue
// without running (Cancelled), a running one ends then as completed, and the rest runs as usual.
class Withdraw : public ::testing::TestWithParam<std::string> {};

TEST_P(Withdraw, PendingJobLeavesTheQueueAndRunningJobEndsAtItsTime) {
  // One 8-GPU node. J0 (8 GPUs) runs [0, 100 s). J1 (4 GPUs) waits from 10 s and is withdrawn at
  // 50 s. J2 (4 GPUs, 200 s) and J3 (4 GPUs, 1000 s) wait for J0; J3 is withdrawn at 400 s. (Run
  // times longer than J0's remaining one, so srtf preempts nothing.)
  auto w = headroom::testing::WorkloadBuilder().job(0, 8, 100).job(10, 4, 500).job(20, 4, 200).job(30, 4, 1000).build();
  w.jobs[1].withdraw_at = 50 * sim::kSecond;
  w.jobs[3].withdraw_at = 400 * sim::kSecond;
  const auto c = headroom::testing::cluster(1, 8);
  policies::PolicyParams params;
  if (GetParam() == "kueue") {  // by default kueue admits nothing: one ClusterQueue for every namespace
    params = scenarios::parse_scenario(
                 "name: q\ncluster:\n  pools:\n    - {name: pool, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
                 "policy:\n  name: kueue\n  resourceFlavors: {default: {pools: [pool]}}\n"
                 "  clusterQueues:\n    all:\n      namespaces: [\"*\"]\n"
                 "      resources: {default: {gpu: {nominalQuota: 8}}}\n"
                 "workload:\n  trace: tiny.csv\n",
                 std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios/inline.yaml")
                 .policy.params;
  }
  auto policy = policies::make_policy(GetParam(), params, 1);
  results::Recorder rec(w, c);
  simulation::Simulation sim(w, c, *policy, &rec);
  sim.run();
  EXPECT_EQ(sim.job_state(1), models::JobState::Cancelled);
  EXPECT_EQ(sim.job_start(1), -1);
  EXPECT_EQ(sim.job_end(1), 50 * sim::kSecond);
  EXPECT_EQ(sim.job_state(2), models::JobState::Completed);
  EXPECT_GE(sim.job_start(2), 100 * sim::kSecond);
  EXPECT_EQ(sim.job_state(3), models::JobState::Completed);
  EXPECT_GE(sim.job_start(3), 100 * sim::kSecond);
  // J1 holds nothing once withdrawn (no quota, no queue slot): J2 and J3 start together.
  EXPECT_EQ(sim.job_start(3), sim.job_start(2));
  EXPECT_EQ(sim.job_end(3), 400 * sim::kSecond);
  // The audit log says why J1 ended.
  bool said = false;
  for (const auto& e : rec.result().events)
    said = said || (e.job == 1 && e.kind == static_cast<std::uint8_t>(models::AuditKind::Finish) &&
                    rec.result().reasons.at(e.reason).rfind("withdrawn", 0) == 0);
  EXPECT_TRUE(said);
}

INSTANTIATE_TEST_SUITE_P(Policies, Withdraw, ::testing::ValuesIn(every_policy()),
                         [](const auto& info) { return test_name(info.param); });
