// The POC drills (docs/drills.md): node failures, outages, maintenance drains and job retries from
// checkpoints with exact times on hand-made cases; the same failures under every policy; GPU-time
// conservation and no overcommit with failures on the bundled RICC trace; the permission-denial
// drill; the lost work of each preemption in /events; the drill KPIs in the summary.
#include "models/failures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "apps/pipeline.hpp"
#include "policies/registry.hpp"
#include "results/hdf5_io.hpp"
#include "results/recorder.hpp"
#include "results/summary.hpp"
#include "scenarios/run_options.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"

using namespace headroom;
using models::AuditKind;
using models::JobIndex;
using models::JobState;
using sim::kHour;
using sim::kMinute;
using sim::kSecond;
using sim::Tick;
namespace ht = headroom::testing;

namespace {

// Checks capacity and GPU-time as the simulation reports them, following jobs through kills,
// requeues and node outages; records node and kill events.
class DrillObserver : public models::SimObserver {
 public:
  DrillObserver(const models::Workload& w, const models::ClusterSpec& c) : w_(w) {
    for (const auto& p : c.pools)
      for (int i = 0; i < p.nodes; ++i) node_cap_.push_back(p.gpus_per_node);
    node_used_.assign(node_cap_.size(), 0);
    placeable_.assign(node_cap_.size(), true);
    run_start_.assign(w.jobs.size(), -1);
    ran_gpu_ms_.assign(w.jobs.size(), 0);
    lost_gpu_ms_.assign(w.jobs.size(), 0);
    ends_.assign(w.jobs.size(), 0);
  }
  void on_event(Tick t, AuditKind k, JobIndex j, std::int32_t detail, std::string_view reason) override {
    on_lost_work(t, k, j, detail, reason, 0);
  }
  void on_lost_work(Tick t, AuditKind k, JobIndex j, std::int32_t detail, std::string_view reason,
                    std::int64_t lost) override {
    advance(t);
    const auto node = static_cast<std::size_t>(detail);
    switch (k) {
      case AuditKind::NodeDown:
        node_events.emplace_back(t, 'D', node, std::string(reason));
        placeable_[node] = false;
        break;
      case AuditKind::NodeUp:
        node_events.emplace_back(t, 'U', node, std::string(reason));
        placeable_[node] = true;
        break;
      case AuditKind::Drain:
        node_events.emplace_back(t, 'd', node, std::string(reason));
        placeable_[node] = false;
        break;
      case AuditKind::Kill:
        kills.emplace_back(t, j, node);
        lost_gpu_ms_[j] += lost;
        stop(t, j);
        break;
      case AuditKind::Requeue: stop(t, j); break;
      default: break;
    }
  }
  void on_start(Tick t, JobIndex j, const models::Placement& p) override {
    advance(t);
    for (const auto& s : p) {
      if (!placeable_[s.node]) ++starts_on_unplaceable;
      node_used_[s.node] += s.gpus;
      if (node_used_[s.node] > node_cap_[s.node]) ++overcommits;
    }
    used_ += w_.jobs[j].gpus;
    run_start_[j] = t;
    placement_[j] = p;
  }
  void on_end(Tick t, JobIndex j, JobState s) override {
    advance(t);
    ++ends_[j];
    if (run_start_[j] >= 0 && s != JobState::Unfinished) stop(t, j);
  }
  void on_sample(const models::Sample& s) override {
    for (std::size_t p = 0; p < s.pool_used_gpus.size(); ++p) {
      pool_sum_ok = pool_sum_ok && s.pool_used_gpus[p] >= 0 && s.pool_free_gpus[p] >= 0 && s.pool_down_gpus[p] >= 0;
      sample_down_max = std::max(sample_down_max, s.pool_down_gpus[p]);
    }
  }
  void stop(Tick t, JobIndex j) {
    ASSERT_GE(run_start_[j], 0) << "job " << j << " stopped without running";
    ran_gpu_ms_[j] += static_cast<std::int64_t>(w_.jobs[j].gpus) * (t - run_start_[j]);
    for (const auto& s : placement_[j]) node_used_[s.node] -= s.gpus;
    used_ -= w_.jobs[j].gpus;
    run_start_[j] = -1;
  }
  void advance(Tick t) {
    EXPECT_GE(t, last_);
    area_gpu_ms += used_ * (t - last_);
    last_ = t;
  }

  const models::Workload& w_;
  std::vector<std::int32_t> node_cap_, node_used_;
  std::vector<bool> placeable_;
  std::vector<Tick> run_start_;
  std::map<JobIndex, models::Placement> placement_;
  std::int64_t used_ = 0;
  Tick last_ = 0;

 public:
  std::vector<std::int64_t> ran_gpu_ms_, lost_gpu_ms_;
  std::vector<int> ends_;
  std::vector<std::tuple<Tick, char, std::size_t, std::string>> node_events;
  std::vector<std::tuple<Tick, JobIndex, std::size_t>> kills;
  std::int64_t overcommits = 0, starts_on_unplaceable = 0, area_gpu_ms = 0;
  std::int32_t sample_down_max = 0;
  bool pool_sum_ok = true;
};

struct DrillRun {
  DrillRun(models::Workload workload, models::ClusterSpec cluster, models::FailureSpec failures,
           const std::string& policy_name = "fifo", std::uint64_t seed = 1)
      : w(std::move(workload)), c(std::move(cluster)), policy(policies::make_policy(policy_name, {}, seed)), obs(w, c) {
    simulation::SimulationOptions o;
    o.failures = std::move(failures);
    o.seed = seed;
    sim = std::make_unique<simulation::Simulation>(w, c, *policy, &obs, o);
    stats = sim->run();
  }
  double start(JobIndex j) const { return sim::to_seconds(sim->job_start(j)); }
  double end(JobIndex j) const { return sim::to_seconds(sim->job_end(j)); }

  models::Workload w;
  models::ClusterSpec c;
  std::unique_ptr<policies::Policy> policy;
  DrillObserver obs;
  std::unique_ptr<simulation::Simulation> sim;
  simulation::SimulationStats stats;
};

models::FailureEvent outage(Tick at, Tick duration, std::vector<models::NodeId> nodes) {
  models::FailureEvent e;
  e.at = at;
  e.duration = duration;
  e.nodes = std::move(nodes);
  e.what = "test";
  return e;
}

constexpr double kH = 3600;

}  // namespace

// ---- failures: exact times --------------------------------------------------------------------

// sjf's head waits for GPUs; a node coming back (no job released anything) lets it start at once,
// and a later arrival in between changes nothing.
TEST(Failures, SjfHeadStartsWhenANodeComesBackWithoutARelease) {
  const auto w = ht::WorkloadBuilder().job(1, 8, 1000).job(2, 8, 10).job(10, 8, 20).build();
  models::FailureSpec f;
  f.events.push_back(outage(0, 49 * kSecond, {1}));  // node 1 is down from t = 1 s to 50 s
  DrillRun r(w, ht::cluster(2, 8), f, "sjf");
  EXPECT_EQ(r.start(0), 1);
  EXPECT_EQ(r.start(1), 50) << "J1 starts on node 1 when it comes back";
  EXPECT_EQ(r.start(2), 60) << "J2 (longer) waits behind J1 until J1 releases node 1";
  EXPECT_EQ(r.sim->job_placement(1).front().node, 1u);
  EXPECT_EQ(r.sim->jobs_killed(), 0);
}

TEST(Failures, KilledJobRestartsFromItsLastCheckpointAfterBackoffAndRepair) {
  // One 8-GPU node; a 10 h job; checkpoints every hour; the node is down 3h30 .. 4h30.
  // Killed at 3h30 it keeps 3 h of work and loses 30 m; its retry (back-off 60 s) waits for the
  // node, starts at 4h30 with 7 h + 2 m (restart overhead) left, and ends at 11h32.
  models::FailureSpec f;
  f.events.push_back(outage(3 * kHour + 30 * kMinute, kHour, {0}));
  f.checkpoint_interval = kHour;
  f.backoff = 60 * kSecond;
  f.restart_overhead = 2 * kMinute;
  DrillRun r(ht::WorkloadBuilder().job(0, 8, 10 * kH).build(), ht::cluster(1, 8), f);
  EXPECT_EQ(r.sim->job_state(0), JobState::Completed);
  EXPECT_EQ(r.sim->job_retries(0), 1);
  EXPECT_EQ(r.sim->jobs_killed(), 1);
  EXPECT_EQ(r.start(0), 0) << "first start";
  EXPECT_EQ(r.end(0), 11 * kH + 32 * 60);
  EXPECT_EQ(r.sim->failure_lost_gpu_ms(), 8 * (30 + 2) * kMinute);
  ASSERT_EQ(r.obs.kills.size(), 1u);
  EXPECT_EQ(std::get<0>(r.obs.kills[0]), 3 * kHour + 30 * kMinute);
  EXPECT_EQ(r.obs.lost_gpu_ms_[0], 8 * 32 * kMinute);
  EXPECT_EQ(r.sim->lost_gpu_ms(), 0) << "preemption losses are counted apart";
}

TEST(Failures, RetryStartsAfterTheBackoffWhenCapacityIsThere) {
  // Two nodes: the retry does not wait for the repair; it starts on the other node when its
  // back-off (60 s) ends. No checkpoints: it restarts from scratch.
  models::FailureSpec f;
  f.events.push_back(outage(kHour, 5 * kHour, {0}));
  f.backoff = 60 * kSecond;
  DrillRun r(ht::WorkloadBuilder().job(0, 8, 2 * kH).build(), ht::cluster(2, 8), f);
  ASSERT_EQ(r.sim->job_placement(0).at(0).node, 1u);
  EXPECT_EQ(r.end(0), kH + 60 + 2 * kH);
  EXPECT_EQ(r.sim->failure_lost_gpu_ms(), 8 * kHour);
}

TEST(Failures, BackoffDoublesUpToItsCap) {
  models::FailureSpec f;
  f.backoff = 10 * kSecond;
  f.backoff_max = 6 * kMinute;
  EXPECT_EQ(models::retry_backoff(f, 1), 10 * kSecond);
  EXPECT_EQ(models::retry_backoff(f, 2), 20 * kSecond);
  EXPECT_EQ(models::retry_backoff(f, 3), 40 * kSecond);
  EXPECT_EQ(models::retry_backoff(f, 7), 6 * kMinute);
  EXPECT_EQ(models::retry_backoff(f, 100), 6 * kMinute);
  EXPECT_EQ(models::checkpointed_work(150 * kMinute, kHour), 2 * kHour);
  EXPECT_EQ(models::checkpointed_work(150 * kMinute, 0), 0);
}

TEST(Failures, RetryLimitReachedEndsFailedWithReason) {
  // Limit 1: killed at 1 h; at 1h10, when the node is back, FIFO starts job 1 (queued before the
  // retry) until 1h40, then the retry; killed again at 2 h -> Failed.
  models::FailureSpec f;
  f.events.push_back(outage(kHour, 10 * kMinute, {0}));
  f.events.push_back(outage(2 * kHour, 10 * kMinute, {0}));
  f.retry_limit = 1;
  f.backoff = 60 * kSecond;
  auto w = ht::WorkloadBuilder().job(0, 8, 5 * kH).job(0, 8, 30 * 60).build();  // job 1 waits, then runs
  DrillRun r(w, ht::cluster(1, 8), f);
  EXPECT_EQ(r.sim->job_state(0), JobState::Failed);
  EXPECT_EQ(r.end(0), 2 * kH);
  EXPECT_EQ(r.sim->job_retries(0), 1);
  EXPECT_EQ(r.sim->jobs_killed(), 2);
  EXPECT_EQ(r.sim->job_state(1), JobState::Completed);
  EXPECT_EQ(r.start(1), kH + 10 * 60) << "the next job starts once the node is repaired";
  EXPECT_EQ(r.end(1), kH + 40 * 60);
}

TEST(Failures, DrainWaitsForTheRunningJobThenTakesTheNodeDown) {
  // Two nodes, maintenance of one node at a time from 1 h for 2 h each. Job 0 (node 0) runs until
  // 3 h: node 0 is cordoned at 1 h, goes down at 3 h when job 0 ends, and is back at 5 h; job 2,
  // submitted while node 0 drains, goes to node 1. Then node 1 is drained (empty: down at once).
  models::FailureSpec f;
  models::Maintenance m;
  m.start = kHour;
  m.duration = 2 * kHour;
  m.batch = 1;
  f.maintenance.push_back(m);
  auto w = ht::WorkloadBuilder()
               .job(0, 8, 3 * kH)
               .job(0, 8, 0.5 * kH)
               .job(1.5 * kH, 8, 4 * kH)
               .job(1.5 * kH, 8, 4 * kH)
               .build();
  DrillRun r(w, ht::cluster(2, 8), f);
  ASSERT_EQ(r.sim->job_placement(0).at(0).node, 0u);
  EXPECT_EQ(r.sim->job_state(0), JobState::Completed) << "a drain does not kill";
  EXPECT_EQ(r.end(0), 3 * kH);
  EXPECT_EQ(r.sim->job_placement(2).at(0).node, 1u) << "nothing lands on a draining node";
  EXPECT_EQ(r.start(2), 1.5 * kH);
  // Job 3 waits: node 0 drains then is down until 5 h, node 1 runs job 2 until 5h30.
  EXPECT_EQ(r.start(3), 5 * kH);
  EXPECT_EQ(r.sim->job_placement(3).at(0).node, 0u);
  using E = std::tuple<Tick, char, std::size_t, std::string>;
  const std::vector<E> expected = {
      {kHour, 'd', 0, "maintenance drain"},
      {3 * kHour, 'D', 0, "maintenance"},
      {5 * kHour, 'U', 0, "maintenance done"},
      {5 * kHour, 'd', 1, "maintenance drain"},
  };
  ASSERT_GE(r.obs.node_events.size(), expected.size());
  EXPECT_EQ(std::vector<E>(r.obs.node_events.begin(), r.obs.node_events.begin() + 4), expected);
  // Job 2 keeps running on the draining node 1 until 5h30; node 1 then goes down.
  EXPECT_EQ(r.end(2), 5.5 * kH);
  EXPECT_EQ(r.sim->jobs_killed(), 0);
  EXPECT_EQ(r.obs.starts_on_unplaceable, 0);
}

TEST(Failures, DrainTimeoutKillsWhatStillRuns) {
  models::FailureSpec f;
  models::Maintenance m;
  m.start = kHour;
  m.duration = kHour;
  m.drain_timeout = 30 * kMinute;
  f.maintenance.push_back(m);
  f.backoff = 0;
  DrillRun r(ht::WorkloadBuilder().job(0, 8, 5 * kH).build(), ht::cluster(1, 8), f);
  ASSERT_EQ(r.obs.kills.size(), 1u);
  EXPECT_EQ(std::get<0>(r.obs.kills[0]), 90 * kMinute);
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.end(0), 2.5 * kH + 5 * kH) << "restarts from scratch when the node is back at 2h30";
}

TEST(Failures, RackFailureTakesExactlyItsNodes) {
  // Four nodes in racks of two: rack 1 = nodes 2 and 3. Each job fills one node.
  models::ClusterSpec c = ht::cluster(4, 8);
  models::FailureSpec f;
  f.racks = models::racks_of_size(c, 2);
  ASSERT_EQ(f.racks.size(), 2u);
  EXPECT_EQ(f.racks[1].nodes, (std::vector<models::NodeId>{2, 3}));
  f.events.push_back(outage(kHour, kHour, f.racks[1].nodes));
  auto w = ht::WorkloadBuilder().job(0, 8, 5 * kH).job(0, 8, 5 * kH).job(0, 8, 5 * kH).job(0, 8, 5 * kH).build();
  DrillRun r(w, c, f);
  std::set<std::size_t> down, killed_on;
  for (const auto& [t, kind, node, reason] : r.obs.node_events)
    if (kind == 'D') {
      EXPECT_EQ(t, kHour);
      down.insert(node);
    }
  for (const auto& [t, j, node] : r.obs.kills) killed_on.insert(node);
  EXPECT_EQ(down, (std::set<std::size_t>{2, 3}));
  EXPECT_EQ(killed_on, (std::set<std::size_t>{2, 3}));
  for (JobIndex j = 0; j < 4; ++j) {
    const auto node = r.sim->job_placement(j).at(0).node;
    EXPECT_EQ(r.end(j), node < 2 ? 5 * kH : 2 * kH + 5 * kH) << "job " << j << " on node " << node;
  }
}

TEST(Failures, OverlappingOutagesEndWithTheLastOne) {
  models::FailureSpec f;
  f.events.push_back(outage(kHour, 2 * kHour, {0}));
  f.events.push_back(outage(2 * kHour, 2 * kHour, {0}));
  f.backoff = 0;
  DrillRun r(ht::WorkloadBuilder().job(0, 8, 10 * kH).build(), ht::cluster(1, 8), f);
  EXPECT_EQ(r.sim->jobs_killed(), 1);
  EXPECT_EQ(r.end(0), 4 * kH + 10 * kH);
  ASSERT_EQ(r.obs.node_events.size(), 2u);
  EXPECT_EQ(std::get<0>(r.obs.node_events[1]), 4 * kHour);
}

// ---- random failures: same seed, same failures under every policy -----------------------------

namespace {
models::Workload random_workload(std::uint64_t seed, int n) {
  sim::RngStream rng(seed, "test/workload");
  ht::WorkloadBuilder b;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += rng.exponential(1.0 / 120.0);
    // At most one T4 node: every pod fits some node under Kubernetes, so no run gets stuck.
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const std::string tenant = "t" + std::to_string(rng.below(3));
    const auto run = rng.between(60, 6 * 3600);
    b.job(t, static_cast<int>(rng.between(1, 4)), run, tenant);
  }
  return b.build();
}

std::vector<std::tuple<Tick, char, std::size_t, std::string>> failures_until(const DrillRun& r, Tick until) {
  std::vector<std::tuple<Tick, char, std::size_t, std::string>> out;
  for (const auto& e : r.obs.node_events)
    if (std::get<0>(e) < until) out.push_back(e);
  return out;
}
}  // namespace

TEST(Failures, SameSeedSameFailuresUnderFifoAndKubernetes) {
  const auto w = random_workload(7, 800);
  models::ClusterSpec c;
  c.pools.push_back({"a100", 8, 8, "A100", 0, 0});
  c.pools.push_back({"t4", 4, 4, "T4", 0, 0});
  models::FailureSpec f;
  models::RandomFailures rf;
  rf.mtbf = 2 * sim::kDay;
  rf.distribution = models::FailureDistribution::Weibull;
  rf.shape = 0.8;
  rf.repair = 3 * kHour;
  f.random.push_back(rf);
  f.racks = models::racks_of_size(c, 4);
  models::RandomFailures racks = rf;
  racks.per_rack = true;
  racks.mtbf = 5 * sim::kDay;
  f.random.push_back(racks);
  f.checkpoint_interval = 30 * kMinute;
  DrillRun fifo(w, c, f, "fifo", 3);
  DrillRun k8s(w, c, f, "kubernetes", 3);
  DrillRun again(w, c, f, "fifo", 3);
  DrillRun other_seed(w, c, f, "fifo", 4);
  const Tick until = std::min(fifo.stats.end, k8s.stats.end);
  const auto a = failures_until(fifo, until);
  EXPECT_GT(a.size(), 20u) << "the test needs failures";
  const auto b = failures_until(k8s, until);
  EXPECT_EQ(a, b) << a.size() << " vs " << b.size();
  EXPECT_EQ(fifo.stats.fingerprint, again.stats.fingerprint);
  EXPECT_NE(a, failures_until(other_seed, until));
  EXPECT_GT(fifo.sim->jobs_killed(), 0);
  for (const DrillRun* r : {&fifo, &k8s}) {
    EXPECT_EQ(r->obs.overcommits, 0);
    EXPECT_EQ(r->obs.starts_on_unplaceable, 0);
    for (JobIndex j = 0; j < w.jobs.size(); ++j) EXPECT_EQ(r->obs.ends_[j], 1);
  }
}

TEST(Failures, WeibullMeanIsTheMtbf) {
  models::RandomFailures rf;
  rf.mtbf = 30 * sim::kDay;
  rf.distribution = models::FailureDistribution::Weibull;
  rf.shape = 0.8;
  sim::RngStream rng(1, "test/weibull");
  long double sum = 0;
  constexpr int kN = 200000;
  for (int i = 0; i < kN; ++i) sum += static_cast<long double>(models::time_to_failure(rf, rng));
  EXPECT_NEAR(static_cast<double>(sum / kN) / static_cast<double>(rf.mtbf), 1.0, 0.02);
}

// ---- the bundled RICC trace -------------------------------------------------------------------

TEST(Failures, RiccFailureDrillConservesGpuTimeWithoutOvercommit) {
  const auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml");
  const auto w = scenarios::build_workload(sc);
  auto policy = policies::make_policy(sc.policy.name, sc.policy.params, sc.seed);
  DrillObserver obs(w, sc.cluster);
  simulation::Simulation sim(w, sc.cluster, *policy, &obs, scenarios::simulation_options(sc, w));
  const auto stats = sim.run();
  obs.advance(stats.end);
  EXPECT_EQ(obs.overcommits, 0);
  EXPECT_EQ(obs.starts_on_unplaceable, 0);
  EXPECT_TRUE(obs.pool_sum_ok);
  EXPECT_GT(obs.sample_down_max, 0) << "GPUs down show in the timeseries";
  EXPECT_GT(sim.jobs_killed(), 0);
  std::int64_t ran = 0, lost = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends_[j], 1);
    ran += obs.ran_gpu_ms_[j];
    lost += obs.lost_gpu_ms_[j];
    // The chat service's replicas run until the autoscaler withdraws them, not for a recorded time.
    if (w.jobs[j].service < 0 && (sim.job_state(j) == JobState::Completed || sim.job_state(j) == JobState::Cancelled)) {
      // Each completed job ran its recorded run time plus exactly the work its kills lost.
      EXPECT_EQ(obs.ran_gpu_ms_[j], static_cast<std::int64_t>(w.jobs[j].gpus) * w.jobs[j].runtime + obs.lost_gpu_ms_[j])
          << "job " << j;
    }
  }
  EXPECT_EQ(obs.area_gpu_ms, ran) << "the utilisation curve integrates to the jobs' GPU time";
  EXPECT_EQ(lost, sim.failure_lost_gpu_ms());
  EXPECT_LE(sim.peak_used_gpus(), sc.cluster.total_gpus());
}

TEST(Failures, RiccDrillKpisInSummaryAndJson) {
  const auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml");
  const auto out = app::run_scenario(sc);
  const auto& r = out.result;
  const auto s = results::summarize(r);
  ASSERT_EQ(s.failures.drill_recovery_s.size(), 3u);
  EXPECT_EQ(r.drill_start[0] - r.sim_start, 3 * sim::kDay);
  EXPECT_EQ(r.drill_start[1] - r.sim_start, 4 * sim::kDay);
  EXPECT_EQ(r.drill_start[2] - r.sim_start, 8 * sim::kDay);
  // Recovery is measured once each outage is over: 6 h, 1 h and 30 m.
  const double duration_s[] = {6 * 3600, 3600, 1800};
  for (std::size_t d = 0; d < 3; ++d) {
    const double rec = s.failures.drill_recovery_s[d];
    EXPECT_TRUE(rec < 0 || rec >= duration_s[d]) << "drill " << d << " recovered before its outage ended: " << rec;
  }
  EXPECT_GT(s.failures.jobs_killed, 0);
  EXPECT_GT(s.failures.lost_gpu_hours, 0);
  EXPECT_EQ(s.failures.jobs_killed, r.jobs_killed);
  // /events: every kill and preemption row carries its lost work, summing to the totals.
  std::int64_t lost = 0;
  for (const auto& e : r.events) lost += e.lost_gpu_ms;
  EXPECT_EQ(lost, r.failure_lost_gpu_ms + r.lost_gpu_ms);
  std::ostringstream text, json;
  results::print_summary(text, s);
  results::print_summary_json(json, s);
  EXPECT_NE(text.str().find("failures: node outages "), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("failure drill: 3 outages"), std::string::npos) << text.str();
  EXPECT_NE(json.str().find("\"drill_recovery_s\": ["), std::string::npos);
  EXPECT_NE(json.str().find("\"worst_recovery_s\": "), std::string::npos);
}

// ---- the permission-denial drill ----------------------------------------------------------------

namespace {
// Counts what the policy is told.
class CountingFifo final : public policies::Policy {
 public:
  explicit CountingFifo(std::unique_ptr<policies::Policy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return "counting"; }
  void on_submit(const policies::ClusterView& v, JobIndex j) override {
    seen.insert(j);
    inner_->on_submit(v, j);
  }
  void on_end(const policies::ClusterView& v, JobIndex j) override { inner_->on_end(v, j); }
  void on_release(const policies::ClusterView& v, JobIndex j) override { inner_->on_release(v, j); }
  void on_requeue(const policies::ClusterView& v, JobIndex j) override { inner_->on_requeue(v, j); }
  void schedule(policies::Session& s) override { inner_->schedule(s); }
  std::set<JobIndex> seen;

 private:
  std::unique_ptr<policies::Policy> inner_;
};
}  // namespace

TEST(Permissions, DeniedSubmissionIsRejectedWithReasonBeforeThePolicySeesIt) {
  auto w = ht::WorkloadBuilder().job(0, 1, 60, "research").job(1, 1, 60, "research").job(2, 1, 60, "ops").build();
  const auto gpu = w.queues.intern("gpu");
  w.jobs[1].queue = gpu;  // research submits to gpu: not granted
  w.jobs[2].queue = gpu;  // ops has no restriction
  scenarios::Scenario sc;
  sc.queue_grants.push_back({"research", true, {"default", "debug"}});
  sc.queue_grants.push_back({"ops", false, {}});
  const auto c = ht::cluster(1, 8);
  CountingFifo policy(policies::make_policy("fifo", {}, 1));
  results::Recorder rec(w, c);
  simulation::Simulation sim(w, c, policy, &rec, scenarios::simulation_options(sc, w));
  sim.run();
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
  EXPECT_EQ(sim.job_state(1), JobState::Rejected);
  EXPECT_EQ(sim.job_state(2), JobState::Completed);
  EXPECT_EQ(sim.jobs_denied(), 1);
  EXPECT_EQ(policy.seen, (std::set<JobIndex>{0, 2})) << "the policy never sees a denied job";
  const auto& r = rec.result();
  bool found = false;
  for (const auto& e : r.events) {
    if (e.kind != static_cast<std::uint8_t>(AuditKind::Reject)) continue;
    EXPECT_EQ(e.job, 1u);
    EXPECT_EQ(e.time, 1 * kSecond);
    EXPECT_EQ(e.detail, models::kRejectPermission);
    EXPECT_EQ(r.reasons.at(e.reason), "permission denied: tenant research may not submit to queue gpu");
    found = true;
  }
  EXPECT_TRUE(found);
  ASSERT_GE(r.tenant_denied.size(), 1u);
  const auto s = results::summarize(r);
  EXPECT_EQ(s.denied, 1);
  for (const auto& t : s.tenants) EXPECT_EQ(t.denied, t.name == "research" ? 1 : 0) << t.name;
}

TEST(Permissions, RiccPermissionDrillDeniesExactlyTheUngrantedQueues) {
  const auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/permission-drill.yaml");
  for (const char* policy : {"fifo", "kubernetes"}) {
    auto run = sc;
    run.policy.name = policy;
    run.policy.params.clear();
    const auto s = results::summarize(app::run_scenario(run).result);
    // Counted from the log with awk: queue 2 jobs of users 69, 1, 50; queue 1 jobs of user 53.
    EXPECT_EQ(s.denied, 32 + 10 + 7 + 2665) << policy;
    std::map<std::string, std::int64_t> by;
    for (const auto& t : s.tenants)
      if (t.denied > 0) by[t.name] = t.denied;
    EXPECT_EQ(by,
              (std::map<std::string, std::int64_t>{{"user1", 10}, {"user50", 7}, {"user53", 2665}, {"user69", 32}}));
    EXPECT_EQ(s.by_state[static_cast<int>(JobState::Rejected)], 2714) << policy;
  }
}

// ---- preemption: victim, preemptor, rule and lost work in /events ------------------------------

TEST(Preemption, PreemptRowRecordsVictimPreemptorRuleAndLostWork) {
  // Kubernetes K3: H (job 2, submitted at 20 s) evicts L1 (job 0, 4 GPUs) with the default 30 s
  // grace period: L1 ran 50 s, so 200 GPU-seconds are lost.
  auto w = ht::WorkloadBuilder().job(0, 4, 1000).job(1, 4, 1000).job(20, 4, 100).build();
  w.jobs[0].priority = 10;
  w.jobs[1].priority = 50;
  w.jobs[2].priority = 100;
  models::ClusterSpec c = ht::cluster(2, 4);
  auto policy = policies::make_policy("kubernetes", {}, 1);
  results::Recorder rec(w, c);
  simulation::Simulation sim(w, c, *policy, &rec);
  sim.run();
  const auto& r = rec.result();
  int preempts = 0;
  std::int64_t total = 0;
  for (const auto& e : r.events) {
    total += e.lost_gpu_ms;
    if (e.kind != static_cast<std::uint8_t>(AuditKind::Preempt)) continue;
    ++preempts;
    EXPECT_EQ(e.job, 0u) << "victim";
    EXPECT_EQ(e.detail, 2) << "preemptor";
    EXPECT_FALSE(r.reasons.at(e.reason).empty()) << "rule";
    EXPECT_EQ(e.lost_gpu_ms, 4 * 50 * kSecond);
  }
  EXPECT_EQ(preempts, 1);
  EXPECT_EQ(total, sim.lost_gpu_ms());
}

// ---- scenario YAML ----------------------------------------------------------------------------

namespace {
std::string drill_yaml(const std::string& failures) {
  return "name: t\ncluster:\n  pools:\n    - {name: a100, nodes: 8, gpus_per_node: 8, gpu_type: A100}\n"
         "policy: fifo\nworkload:\n  trace: " +
         std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz\n" + failures;
}

std::string first_error(const std::string& text) {
  try {
    scenarios::parse_scenario(text, "drill.yaml");
  } catch (const sim::InputErrors& e) {
    return e.errors().front().what();
  }
  return "";
}
}  // namespace

TEST(FailuresYaml, ParsesTheDocumentedShape) {
  const auto sc = scenarios::parse_scenario(drill_yaml(R"(failures:
  racks: {nodes_per_rack: 4}
  nodes: {pools: [a100], mtbf: 30d, distribution: weibull, shape: 0.8, repair: 4h}
  events: [{at: 2d, rack: 1, duration: 6h}, {at: 3d, nodes: [a100-0, a100-1], duration: 1h}, {at: 4d, pool: a100, duration: 10m}]
  maintenance: [{pool: a100, start: 5d, every: 7d, duration: 4h, drain: true, batch: 4, drain_timeout: 1h}]
  jobs: {retry: {limit: 2, backoff: 60s, backoff_max: 5m}, checkpoint_interval: 1h, restart_overhead: 2m}
)"),
                                            "drill.yaml");
  const auto& f = sc.failures;
  ASSERT_EQ(f.racks.size(), 2u);
  ASSERT_EQ(f.random.size(), 1u);
  EXPECT_EQ(f.random[0].mtbf, 30 * sim::kDay);
  EXPECT_EQ(f.random[0].distribution, models::FailureDistribution::Weibull);
  EXPECT_EQ(f.random[0].shape, 0.8);
  EXPECT_EQ(f.random[0].repair, 4 * kHour);
  ASSERT_EQ(f.events.size(), 3u);
  EXPECT_EQ(f.events[0].nodes, (std::vector<models::NodeId>{4, 5, 6, 7}));
  EXPECT_EQ(f.events[1].nodes, (std::vector<models::NodeId>{0, 1}));
  EXPECT_EQ(f.events[2].nodes.size(), 8u);
  ASSERT_EQ(f.maintenance.size(), 1u);
  EXPECT_EQ(f.maintenance[0].every, 7 * sim::kDay);
  EXPECT_EQ(f.maintenance[0].batch, 4);
  EXPECT_EQ(f.maintenance[0].drain_timeout, kHour);
  EXPECT_EQ(f.retry_limit, 2);
  EXPECT_EQ(f.backoff, 60 * kSecond);
  EXPECT_EQ(f.backoff_max, 5 * kMinute);
  EXPECT_EQ(f.checkpoint_interval, kHour);
  EXPECT_EQ(f.restart_overhead, 2 * kMinute);
}

TEST(FailuresYaml, BadInputNamesFileLineColumnAndKey) {
  EXPECT_EQ(first_error(drill_yaml("failures:\n  nodes: {mtbf: 30d, repair: 4h, distrbution: weibull}\n")),
            "drill.yaml:9:34: failures.nodes.distrbution: unknown key \"distrbution\"; did you mean "
            "\"distribution\"?");
  EXPECT_EQ(first_error(drill_yaml("failures:\n  events: [{at: 1d, nodes: [a100-9], duration: 1h}]\n")),
            "drill.yaml:9:29: failures.events[0].nodes[0]: no node named \"a100-9\" (nodes are named "
            "<pool>-<index>, e.g. \"a100-0\")");
  EXPECT_EQ(first_error(drill_yaml("failures:\n  events: [{at: 1d, rack: 3, duration: 1h}]\n")),
            "drill.yaml:9:27: failures.events[0].rack: no racks are defined (failures.racks: {nodes_per_rack: N} "
            "or a list)");
  EXPECT_EQ(first_error(drill_yaml("failures:\n  maintenance: [{pool: a10, start: 1d, duration: 1h}]\n")),
            "drill.yaml:9:24: failures.maintenance[0].pool: no pool named \"a10\"; did you mean \"a100\"?");
  EXPECT_EQ(first_error(drill_yaml("failures:\n  nodes: {mtbf: 30d, repair: 4h, distribution: weibull}\n")),
            "drill.yaml:9:48: failures.nodes.distribution: distribution weibull needs a shape (e.g. shape: 0.8)");
  EXPECT_EQ(first_error(drill_yaml("tenants:\n  - {name: r, queues: gpu}\n")),
            "drill.yaml:9:23: tenants[0].queues: expected a list, got \"gpu\"");
}

TEST(FailuresYaml, TenantQueuesKey) {
  const auto sc = scenarios::parse_scenario(
      drill_yaml(
          "tenants:\n  - {name: research, queues: [gpu, debug]}\n  - {name: ops}\n  - {name: none, queues: []}\n"),
      "drill.yaml");
  ASSERT_EQ(sc.queue_grants.size(), 3u);
  EXPECT_TRUE(sc.queue_grants[0].restricted);
  EXPECT_EQ(sc.queue_grants[0].queues, (std::vector<std::string>{"gpu", "debug"}));
  EXPECT_FALSE(sc.queue_grants[1].restricted);
  EXPECT_TRUE(sc.queue_grants[2].restricted);
  EXPECT_TRUE(sc.queue_grants[2].queues.empty());
}

// ---- results file -----------------------------------------------------------------------------

TEST(FailuresResults, DrillFieldsRoundTripThroughHdf5) {
  auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml");
  sc.queue_grants.push_back({"user53", true, {"queue2"}});
  const auto r = app::run_scenario(sc).result;
  ASSERT_GT(r.jobs_killed, 0);
  ASSERT_EQ(r.drill_start.size(), 3u);
  ASSERT_FALSE(r.tenant_denied.empty());
  const std::string file = ::testing::TempDir() + "/failures_roundtrip.h5";
  results::write_hdf5(r, file);
  const auto back = results::read_hdf5(file);
  EXPECT_EQ(back.failure_lost_gpu_ms, r.failure_lost_gpu_ms);
  EXPECT_EQ(back.node_outages, r.node_outages);
  EXPECT_EQ(back.jobs_killed, r.jobs_killed);
  EXPECT_EQ(back.job_retries, r.job_retries);
  EXPECT_EQ(back.jobs_failed_by_failure, r.jobs_failed_by_failure);
  EXPECT_EQ(back.drill_start, r.drill_start);
  EXPECT_EQ(back.drill_recovered, r.drill_recovered);
  EXPECT_EQ(back.tenant_denied, r.tenant_denied);
  EXPECT_EQ(back.timeseries.pool_down_gpus, r.timeseries.pool_down_gpus);
  ASSERT_EQ(back.events.size(), r.events.size());
  for (std::size_t i = 0; i < r.events.size(); ++i) ASSERT_EQ(back.events[i].lost_gpu_ms, r.events[i].lost_gpu_ms);
  const auto a = results::summarize(r), b = results::summarize(back);
  EXPECT_EQ(a.failures.drill_recovery_s, b.failures.drill_recovery_s);
  EXPECT_EQ(a.denied, b.denied);
  EXPECT_GT(a.denied, 0);
  std::remove(file.c_str());
}

TEST(Failures, StuckJobsDoNotStretchTheRunWithFarFailures) {
  // Under kubernetes a 24-GPU job is three 8-GPU pods; on two 8-GPU nodes two of them bind and
  // hold both nodes, the third never fits, and the job stays pending forever (no gang
  // scheduling). Once the cluster is idle with every node up, the failure processes go dormant
  // instead of running the clock to their next (far) failure: the run ends when it would without
  // failures.
  const auto w = ht::WorkloadBuilder().job(0, 4, 3600).job(0, 24, 60).build();
  const auto c = ht::cluster(2, 8);
  models::FailureSpec f;
  models::RandomFailures rf;
  rf.mtbf = 1000 * sim::kDay;
  rf.repair = kHour;
  f.random.push_back(rf);
  models::Maintenance m;
  m.start = 30 * sim::kDay;
  m.every = 7 * sim::kDay;
  m.duration = kHour;
  f.maintenance.push_back(m);
  DrillRun with(w, c, f, "kubernetes");
  DrillRun without(w, c, {}, "kubernetes");
  EXPECT_EQ(with.sim->job_state(0), JobState::Completed);
  EXPECT_EQ(with.sim->job_state(1), JobState::Unfinished);
  EXPECT_EQ(with.stats.end, without.stats.end);
  EXPECT_LT(with.stats.end, sim::kDay);
}

TEST(Failures, ClusterStateTakesADownNodeOutOfEveryIndex) {
  models::ClusterState cs(ht::cluster(3, 8));
  cs.allocate({{1, 3, 0, 0}});
  cs.set_up(1, false);
  EXPECT_FALSE(cs.node(1).up);
  EXPECT_EQ(cs.total_gpus(), 24) << "installed capacity";
  EXPECT_EQ(cs.up_gpus(), 16);
  EXPECT_EQ(cs.free_gpus(), 16) << "the down node's 5 free GPUs are not offered";
  EXPECT_EQ(cs.used_gpus(), 3) << "its job still holds its GPUs until released";
  EXPECT_EQ(cs.nodes_with_free(0, 5).count(1), 0u);
  EXPECT_EQ(std::vector<models::NodeId>(cs.nodes_with_free(0, 8).begin(), cs.nodes_with_free(0, 8).end()),
            (std::vector<models::NodeId>{0, 2}));
  EXPECT_NE(cs.check({{1, 1, 0, 0}}), "");
  cs.release({{1, 3, 0, 0}});
  EXPECT_EQ(cs.free_gpus(), 16);
  EXPECT_EQ(cs.used_gpus(), 0);
  EXPECT_TRUE(cs.nodes_with_free(0, 8).count(1) == 0);
  cs.set_up(1, true);
  EXPECT_EQ(cs.free_gpus(), 24);
  EXPECT_EQ(cs.up_gpus(), 24);
  EXPECT_EQ(std::vector<models::NodeId>(cs.nodes_with_free(0, 8).begin(), cs.nodes_with_free(0, 8).end()),
            (std::vector<models::NodeId>{0, 1, 2}));
}
