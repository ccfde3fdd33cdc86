// The simulation engine's preemption and timer support, driven by a small test policy.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <deque>

#include "policies/common/consolidate.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::JobState;
using policies::PreemptMode;
using sim::kSecond;

namespace {

// FIFO; a pending job with a higher priority than a running one evicts the lowest-priority
// running job (latest started first) with the configured mode and grace period.
class PriorityPreemptor final : public policies::Policy {
 public:
  PriorityPreemptor(PreemptMode mode, sim::Tick grace, sim::Tick overhead = 0)
      : mode_(mode), grace_(grace), overhead_(overhead) {}
  std::string_view name() const override { return "test-preemptor"; }
  void on_submit(const policies::ClusterView&, JobIndex j) override { queue_.push_back(j); }
  void on_requeue(const policies::ClusterView&, JobIndex j) override {
    ++requeues;
    queue_.push_back(j);
  }
  void on_release(const policies::ClusterView&, JobIndex) override { ++releases; }
  void schedule(policies::Session& s) override {
    const auto& jobs = s.workload().jobs;
    for (auto it = queue_.begin(); it != queue_.end();) {
      const JobIndex j = *it;
      if (auto p = policies::consolidate_placement(s.cluster(), jobs[j], s.workload())) {
        EXPECT_EQ(s.start(j, *p, "fits"), "");
        it = queue_.erase(it);
        continue;
      }
      JobIndex victim = models::kNoJob;
      for (models::NodeId n = 0; n < s.cluster().nodes().size(); ++n) {
        for (JobIndex r : s.jobs_on_node(n)) {
          if (s.terminating(r) || jobs[r].priority >= jobs[j].priority) continue;
          if (victim == models::kNoJob || jobs[r].priority < jobs[victim].priority ||
              (jobs[r].priority == jobs[victim].priority && s.run_start(r) > s.run_start(victim)))
            victim = r;
        }
      }
      bool any_terminating = false;
      for (models::NodeId n = 0; n < s.cluster().nodes().size(); ++n)
        for (JobIndex r : s.jobs_on_node(n)) any_terminating = any_terminating || s.terminating(r);
      if (victim != models::kNoJob && !any_terminating) {
        EXPECT_EQ(s.preempt(victim, mode_, grace_, j, "priority", overhead_), "");
      }
      if (grace_ > 0) s.wake_at(s.now() + grace_);
      break;
    }
  }
  int requeues = 0, releases = 0;

 private:
  PreemptMode mode_;
  sim::Tick grace_, overhead_;
  std::deque<JobIndex> queue_;
};

models::Workload two_jobs() {
  // J0: low priority, whole node, 100 s. J1: high priority, whole node, 10 s, arrives at 20 s.
  auto w = headroom::testing::WorkloadBuilder().job(0, 8, 100).job(20, 8, 10).build();
  w.jobs[1].priority = 10;
  return w;
}

}  // namespace

namespace {
struct TenantSamples : models::SimObserver {
  void on_event(sim::Tick, models::AuditKind, JobIndex, std::int32_t, std::string_view) override {}
  void on_start(sim::Tick, JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample& s) override {
    times.push_back(s.time / kSecond);
    used.emplace_back(s.tenant_used_gpus.begin(), s.tenant_used_gpus.end());
    pending.emplace_back(s.tenant_pending_gpus.begin(), s.tenant_pending_gpus.end());
  }
  std::vector<sim::Tick> times;
  std::vector<std::vector<std::int32_t>> used, pending;
};
}  // namespace

// The automatic sample interval: about 2,000 samples over the submissions, and no more than the
// samples' kMaxSampleBytes hold once the tenants (or pools) are many. 30 days, 8 tenants: 30 min
// (1,440 samples). 100,000 tenants: a sample takes 1,200,068 bytes and 894 fit in 1 GiB: 1 h
// (720). 7.5 M pools (as many bytes as 10^7 tenants): 8 fit: 7 d over 30 days, and over a year
// 7 d doubled until at most 7 intervals span it: 56 d.
TEST(Samples, TheAutomaticIntervalKeepsTheSamplesWithinTheirBound) {
  auto with = [](std::size_t tenants, std::size_t pools, sim::Tick span) {
    models::Workload w = headroom::testing::WorkloadBuilder()
                             .job(0, 1, 10, "t0")
                             .job(static_cast<double>(span / kSecond), 1, 10, "t0")
                             .build();
    for (std::size_t t = 1; t < tenants; ++t) w.tenants.intern(std::string("t").append(std::to_string(t)));
    return simulation::auto_sample_interval(w, pools);
  };
  EXPECT_EQ(simulation::sample_bytes(1, 100'000), 1'200'068);
  EXPECT_EQ(with(8, 1, 30 * sim::kDay), 30 * sim::kMinute);
  EXPECT_EQ(with(100'000, 1, 30 * sim::kDay), sim::kHour);
  EXPECT_EQ(with(1, 7'500'000, 30 * sim::kDay), 7 * sim::kDay);
  EXPECT_EQ(with(1, 7'500'000, 365 * sim::kDay), 56 * sim::kDay);
}

// Each tenant's used and pending GPUs in the samples follow starts and ends: J0 (a, 4 GPUs) runs
// 0-100 s, J1 (b, 8 GPUs) waits until 100 s and runs to 150 s, J2 (a, 2 GPUs) waits behind it
// and runs 150-180 s.
TEST(Samples, TenantGpusFollowStartsAndEnds) {
  const auto w =
      headroom::testing::WorkloadBuilder().job(0, 4, 100, "a").job(10, 8, 50, "b").job(20, 2, 30, "a").build();
  PriorityPreemptor policy(PreemptMode::Requeue, 0);
  TenantSamples obs;
  simulation::SimulationOptions o;
  o.sample_interval = 25 * kSecond;
  simulation::Simulation sim(w, headroom::testing::cluster(1, 8), policy, &obs, o);
  sim.run();
  using V = std::vector<std::int32_t>;
  EXPECT_EQ(obs.times, (std::vector<sim::Tick>{0, 25, 50, 75, 100, 125, 150, 175, 200}));
  EXPECT_EQ(obs.used, (std::vector<V>{{4, 0}, {4, 0}, {4, 0}, {4, 0}, {0, 8}, {0, 8}, {2, 0}, {2, 0}, {0, 0}}));
  EXPECT_EQ(obs.pending, (std::vector<V>{{0, 0}, {2, 8}, {2, 8}, {2, 8}, {2, 0}, {2, 0}, {0, 0}, {0, 0}, {0, 0}}));
}

TEST(Preemption, RequeueRestartsTheVictimFromScratchAfterTheGracePeriod) {
  const auto w = two_jobs();
  PriorityPreemptor p(PreemptMode::Requeue, 5 * kSecond);
  simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_start(1), 25 * kSecond) << "binds when the victim's grace period ends";
  EXPECT_EQ(sim.job_end(1), 35 * kSecond);
  EXPECT_EQ(sim.job_start(0), 0) << "first start is kept";
  EXPECT_EQ(sim.job_end(0), 135 * kSecond) << "restarted at 35 s with its full 100 s";
  EXPECT_EQ(sim.job_preemptions(0), 1);
  EXPECT_EQ(sim.lost_gpu_ms(), 8 * 25 * kSecond);
  EXPECT_EQ(p.requeues, 1);
  EXPECT_EQ(p.releases, 3);
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
}

TEST(Preemption, CheckpointKeepsProgressPlusOverhead) {
  const auto w = two_jobs();
  PriorityPreemptor p(PreemptMode::Checkpoint, 0, 30 * kSecond);
  simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_start(1), 20 * kSecond);
  EXPECT_EQ(sim.job_end(1), 30 * kSecond);
  // 20 s done before the preemption; 80 s left + 30 s overhead from t=30.
  EXPECT_EQ(sim.job_end(0), 140 * kSecond);
  EXPECT_EQ(sim.lost_gpu_ms(), 8 * 30 * kSecond);
}

TEST(Preemption, CancelEndsTheVictim) {
  const auto w = two_jobs();
  PriorityPreemptor p(PreemptMode::Cancel, 0);
  simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_state(0), JobState::Cancelled);
  EXPECT_EQ(sim.job_end(0), 20 * kSecond);
  EXPECT_EQ(sim.job_start(1), 20 * kSecond);
  EXPECT_EQ(p.requeues, 0);
}

TEST(Preemption, VictimFinishingWithinItsGracePeriodCompletes) {
  auto w = headroom::testing::WorkloadBuilder().job(0, 8, 22).job(20, 8, 10).build();
  w.jobs[1].priority = 10;
  PriorityPreemptor p(PreemptMode::Requeue, 30 * kSecond);
  simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
  EXPECT_EQ(sim.job_end(0), 22 * kSecond);
  EXPECT_EQ(sim.job_start(1), 22 * kSecond);
  EXPECT_EQ(sim.lost_gpu_ms(), 0);
  EXPECT_EQ(p.requeues, 0);
}

TEST(Engine, JobsNoEventCanStartEndUnfinished) {
  // The 16-GPU job can never fit one 8-GPU node; this policy keeps it queued at the head (as a
  // strict queue would) and, with a grace period, keeps asking to be woken. The run still ends.
  const auto w = headroom::testing::WorkloadBuilder().job(0, 16, 10).job(1, 4, 10).build();
  for (sim::Tick grace : {sim::Tick{0}, 5 * kSecond}) {
    PriorityPreemptor p(PreemptMode::Requeue, grace);
    simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, nullptr);
    const auto stats = sim.run();
    EXPECT_EQ(sim.job_state(0), JobState::Unfinished);
    EXPECT_EQ(sim.job_state(1), JobState::Unfinished) << "blocked behind the head";
    EXPECT_LT(stats.end, sim::kDay);
  }
}

namespace {
// Every hour the running job is evicted (requeued, its work lost) for the one waiting, which
// starts at once: with run times over an hour no job ever ends (Volcano's drf with
// enablePreemptable does this to equal jobs).
class PingPong final : public policies::Policy {
 public:
  std::string_view name() const override { return "test-ping-pong"; }
  void on_submit(const policies::ClusterView&, JobIndex j) override { queue_.push_back(j); }
  void schedule(policies::Session& s) override {
    const auto& jobs = s.workload().jobs;
    if (!queue_.empty()) {
      if (auto p = policies::consolidate_placement(s.cluster(), jobs[queue_.front()], s.workload())) {
        EXPECT_EQ(s.start(queue_.front(), *p, "fits"), "");
        queue_.pop_front();
      }
    }
    for (JobIndex r : s.jobs_on_node(0)) {
      if (!queue_.empty() && !s.terminating(r) && s.now() - s.run_start(r) >= sim::kHour) {
        EXPECT_EQ(s.preempt(r, PreemptMode::Requeue, 0, queue_.front(), "ping-pong"), "");
      }
    }
    s.wake_at(s.now() + sim::kHour);
  }

 private:
  std::deque<JobIndex> queue_;
};

struct StopReasons : models::SimObserver {
  void on_event(sim::Tick, models::AuditKind k, JobIndex, std::int32_t, std::string_view reason) override {
    if (k == models::AuditKind::Unfinished) unfinished.emplace_back(reason);
  }
  void on_start(sim::Tick, JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample&) override {}
  std::vector<std::string> unfinished;
};
}  // namespace

// The livelock guard: with no horizon, a run in which no job ends for max(30 days, 10 x the longest
// run time) after the last submission while the policy keeps preempting is stopped there, its jobs
// Unfinished with the reason; a horizon turns the guard off; a job that does end resets it.
TEST(Engine, PreemptionLivelockIsStoppedAfterThirtyDaysWithoutAnEnd) {
  auto w = headroom::testing::WorkloadBuilder().job(0, 8, 7200).job(5, 8, 7200).build();
  simulation::SimulationOptions hourly;  // the samples' default interval for a two-hour workload is short
  hourly.sample_interval = sim::kHour;
  {
    PingPong p;
    StopReasons obs;
    // The progress line's clock and counts move while no job ends (every 4,096 events).
    std::atomic<sim::Tick> clock{0};
    std::vector<std::pair<std::size_t, std::size_t>> reports;
    simulation::SimulationOptions o = hourly;
    o.clock = &clock;
    o.progress = [&](std::size_t ended, std::size_t total) { reports.emplace_back(ended, total); };
    simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, &obs, o);
    const auto stats = sim.run();
    EXPECT_GT(clock.load(), 20 * sim::kDay);
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.front(), (std::pair<std::size_t, std::size_t>{0, 2}));
    EXPECT_EQ(sim.job_state(0), JobState::Unfinished);
    EXPECT_EQ(sim.job_state(1), JobState::Unfinished);
    // Last submission at 5 s; the first preemption after 30 days past it (on the hour) stops the run.
    EXPECT_EQ(stats.end, 30 * sim::kDay + sim::kHour);
    EXPECT_EQ(stats.stalled.rfind("stopped: a preemption livelock: no job ended in 30 days", 0), 0u) << stats.stalled;
    EXPECT_NE(stats.stalled.find("preempted running jobs 721 times"), std::string::npos) << stats.stalled;
    ASSERT_EQ(obs.unfinished.size(), 2u);
    EXPECT_EQ(obs.unfinished[0], stats.stalled);
  }
  {
    // Ten times the longest run time when that is longer: 5 days -> 50 days.
    auto longer = w;
    longer.jobs[1].runtime = 5 * sim::kDay;
    PingPong p;
    simulation::Simulation sim(longer, headroom::testing::cluster(1, 8), p, nullptr, hourly);
    const auto stats = sim.run();
    EXPECT_EQ(stats.end, 50 * sim::kDay + sim::kHour);
    EXPECT_EQ(stats.stalled.rfind("stopped: a preemption livelock: no job ended in 50 days", 0), 0u) << stats.stalled;
  }
  {
    PingPong p;
    simulation::SimulationOptions o = hourly;
    o.horizon = 40 * sim::kDay;
    simulation::Simulation sim(w, headroom::testing::cluster(1, 8), p, nullptr, o);
    const auto stats = sim.run();
    EXPECT_EQ(stats.end, 40 * sim::kDay);
    EXPECT_TRUE(stats.stalled.empty());
    EXPECT_EQ(sim.job_state(0), JobState::Unfinished);
  }
  {
    // A third job of half an hour, submitted on day 10, ends within its slot: the others still
    // never end, but the guard counts from the last end, so it fires 30 days after that one.
    auto w3 = headroom::testing::WorkloadBuilder().job(0, 8, 7200).job(5, 8, 7200).job(10 * sim::kDay, 8, 1800).build();
    PingPong p;
    simulation::Simulation sim(w3, headroom::testing::cluster(1, 8), p, nullptr, hourly);
    const auto stats = sim.run();
    EXPECT_EQ(sim.job_state(2), JobState::Completed);
    EXPECT_GT(stats.end, sim.job_end(2) + 30 * sim::kDay);
    EXPECT_LE(stats.end, sim.job_end(2) + 30 * sim::kDay + sim::kHour);
  }
}

namespace {
// Integrates allocated GPUs over time and counts terminal states.
class AreaObserver : public models::SimObserver {
 public:
  explicit AreaObserver(const models::Workload& w) : w_(w), ends(w.jobs.size(), 0) {}
  void on_event(sim::Tick t, models::AuditKind k, JobIndex j, std::int32_t, std::string_view) override {
    if (k == models::AuditKind::Requeue) {
      advance(t);
      used_ -= w_.jobs[j].gpus;
    }
    if (k == models::AuditKind::Finish) {
      advance(t);
      used_ -= w_.jobs[j].gpus;
    }
  }
  void on_start(sim::Tick t, JobIndex j, const models::Placement&) override {
    advance(t);
    used_ += w_.jobs[j].gpus;
  }
  void on_end(sim::Tick, JobIndex j, JobState) override { ++ends[j]; }
  void on_sample(const models::Sample&) override {}
  void advance(sim::Tick t) {
    area += used_ * (t - last_);
    last_ = t;
  }
  const models::Workload& w_;
  std::vector<int> ends;
  std::int64_t area = 0, used_ = 0;
  sim::Tick last_ = 0;
};
}  // namespace

class PreemptionProperties : public ::testing::TestWithParam<std::tuple<PreemptMode, int>> {};

TEST_P(PreemptionProperties, GpuTimeIsUsefulWorkPlusLostWork) {
  const auto [mode, seed] = GetParam();
  sim::RngStream rng(static_cast<std::uint64_t>(seed), "test/preemption");
  headroom::testing::WorkloadBuilder b;
  double t = 0;
  for (int i = 0; i < 600; ++i) {
    t += std::floor(rng.exponential(1.0 / 20.0));
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const double run = std::floor(rng.lognormal(4.0, 1.0));
    b.job(t, static_cast<int>(1 + rng.below(8)), run);
  }
  auto w = b.build();
  for (auto& j : w.jobs) j.priority = static_cast<std::int32_t>(rng.below(4));
  PriorityPreemptor p(mode, static_cast<sim::Tick>(rng.below(3)) * 10 * kSecond, 7 * kSecond);
  AreaObserver obs(w);
  simulation::Simulation sim(w, headroom::testing::cluster(2, 8), p, &obs);
  sim.run();
  std::int64_t useful = 0;
  int preempted = 0, cancelled = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends[j], 1);
    preempted += sim.job_preemptions(j) > 0;
    if (sim.job_state(j) == JobState::Cancelled) {
      ++cancelled;
    } else {
      EXPECT_EQ(sim.job_state(j), JobState::Completed);
      useful += static_cast<std::int64_t>(w.jobs[j].gpus) * w.jobs[j].runtime;
    }
  }
  EXPECT_GT(preempted, 10);
  // A victim whose work ends inside its grace period completes instead of being cancelled.
  if (mode == PreemptMode::Cancel) {
    EXPECT_GT(cancelled, 0);
    EXPECT_LE(cancelled, preempted);
  } else {
    EXPECT_EQ(cancelled, 0);
  }
  EXPECT_EQ(obs.area, useful + sim.lost_gpu_ms());
  EXPECT_EQ(obs.used_, 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, PreemptionProperties,
                         ::testing::Combine(::testing::Values(PreemptMode::Requeue, PreemptMode::Checkpoint,
                                                              PreemptMode::Cancel),
                                            ::testing::Values(1, 2, 3)));
