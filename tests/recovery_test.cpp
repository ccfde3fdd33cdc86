// Recovery per outage (docs/drills.md, issue #32 item 4): how long the jobs each outage killed took
// to run again (p50 / p95 / max, never-restarted jobs counted as such), the work lost, and gangs
// left partially placed, on hand-built clusters with times known by hand; the outage and kill
// tables through HDF5; the recovery KPIs of the scorecard.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

#include "apps/pipeline.hpp"
#include "planner/plan.hpp"
#include "policies/registry.hpp"
#include "results/hdf5_io.hpp"
#include "results/recorder.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"

using namespace headroom;
using models::JobState;
using sim::kHour;
using sim::kMinute;
using sim::kSecond;
using sim::Tick;
namespace ht = headroom::testing;

namespace {

models::FailureEvent outage(Tick at, Tick duration, std::vector<models::NodeId> nodes) {
  models::FailureEvent e;
  e.at = at;
  e.duration = duration;
  e.nodes = std::move(nodes);
  e.what = "nodes under test";
  return e;
}

// One run recorded as `headroom run` records it (results::Recorder), then summarized.
struct RecordedRun {
  RecordedRun(models::Workload workload, models::ClusterSpec cluster, models::FailureSpec failures,
              const std::string& policy_name)
      : w(std::move(workload)), c(std::move(cluster)), rec(w, c) {
    auto policy = policies::make_policy(policy_name, {}, 1);
    simulation::SimulationOptions o;
    o.failures = std::move(failures);
    o.seed = 1;
    simulation::Simulation sim(w, c, *policy, &rec, o);
    const auto stats = sim.run();
    rec.result().sim_start = stats.start;
    rec.result().sim_end = stats.end;
    rec.result().total_gpus = c.total_gpus();
    summary = results::summarize(rec.result());
  }
  const results::RunResult& r() { return rec.result(); }

  models::Workload w;
  models::ClusterSpec c;
  results::Recorder rec;
  results::Summary summary;
};

// Four 8-GPU nodes; three 10-hour jobs fill nodes 0-2, node 3 is free. A scripted outage takes
// nodes 0 and 1 down from 1 h to 3 h, killing two jobs. Both retry after the 60 s back-off: the
// first takes the free node 3 (back after 60 s), the second waits for the outage to end (back
// after 2 h). No checkpoints: each loses the hour it ran, 8 GPU-hours.
models::FailureSpec two_kills(std::int32_t retry_limit) {
  models::FailureSpec f;
  f.events.push_back(outage(kHour, 2 * kHour, {0, 1}));
  f.backoff = 60 * kSecond;
  f.retry_limit = retry_limit;
  return f;
}

models::Workload three_jobs() {
  return ht::WorkloadBuilder().job(0, 8, 36000).job(0, 8, 36000).job(0, 8, 36000).build();
}

}  // namespace

TEST(Recovery, TwoKilledJobsBackAfterOneMinuteAndTwoHours) {
  RecordedRun run(three_jobs(), ht::cluster(4, 8), two_kills(3), "fifo");
  const auto& r = run.r();
  ASSERT_EQ(r.kills.size(), 2u);
  ASSERT_EQ(r.outages.size(), 1u);
  const results::OutageRecord& o = r.outages[0];
  EXPECT_EQ(o.kind, static_cast<std::uint8_t>(results::OutageKind::Scripted));
  EXPECT_EQ(o.drill, 0);
  EXPECT_EQ(o.start, kHour);
  EXPECT_EQ(o.end, 3 * kHour) << "both nodes back when the outage ends";
  EXPECT_EQ(o.nodes, 2);
  EXPECT_EQ(r.reasons.at(o.reason), "outage: nodes under test");
  std::vector<Tick> restarts;
  for (const auto& k : r.kills) {
    EXPECT_EQ(k.outage, 0u);
    EXPECT_EQ(k.time, kHour);
    EXPECT_EQ(k.lost_gpu_ms, 8 * kHour);
    EXPECT_EQ(k.nodes, 1);
    EXPECT_EQ(k.partial, 0);
    restarts.push_back(k.restart);
  }
  std::sort(restarts.begin(), restarts.end());
  EXPECT_EQ(restarts, (std::vector<Tick>{kHour + 60 * kSecond, 3 * kHour}));

  const results::FailureSummary& f = run.summary.failures;
  EXPECT_EQ(f.outages, 1);
  const results::RecoveryStats& st = f.recovery;
  EXPECT_EQ(st.killed, 2);
  EXPECT_EQ(st.not_recovered, 0);
  EXPECT_EQ(st.p50_s, 60.0) << "nearest rank of two: the first";
  EXPECT_EQ(st.p95_s, 7200.0);
  EXPECT_EQ(st.max_s, 7200.0);
  EXPECT_EQ(st.all_running_s, 7200.0) << "from the outage's start until the second job ran again";
  EXPECT_DOUBLE_EQ(st.lost_gpu_hours, 16.0);
  EXPECT_EQ(st.gangs, 0);
  EXPECT_EQ(f.by_kind[static_cast<std::size_t>(results::OutageKind::Scripted)].killed, 2);
  EXPECT_EQ(f.by_kind[static_cast<std::size_t>(results::OutageKind::Failure)].killed, 0);
  ASSERT_EQ(f.drills.size(), 1u);
  EXPECT_EQ(f.drills[0].nodes, 2);
  EXPECT_EQ(f.drills[0].duration_s, 7200.0);
  EXPECT_EQ(f.drills[0].recovery.max_s, 7200.0);

  std::ostringstream text;
  results::print_summary(text, run.summary);
  EXPECT_NE(text.str().find("recovery (kill to next start): 1 outages killed jobs: 2 killed, not running again 0   "
                            "back p50 1m 00s p95 2h 00m max 2h 00m   lost work 16.0 GPU-h"),
            std::string::npos)
      << text.str();
  std::ostringstream json;
  results::print_summary_json(json, run.summary);
  EXPECT_NE(
      json.str().find("\"recovery\": {\"killed\": 2, \"not_recovered\": 0, \"retry_exhausted\": 0, "
                      "\"withdrawn\": 0, \"p50_s\": 60, \"p95_s\": 7200, \"max_s\": 7200, \"all_running_s\": 7200, "
                      "\"lost_gpu_hours\": 16"),
      std::string::npos)
      << json.str();
}

TEST(Recovery, JobsPastTheirRetryLimitAreNotRecoveredNotDropped) {
  // No retries: both killed jobs end Failed at the kill and never run again.
  RecordedRun run(three_jobs(), ht::cluster(4, 8), two_kills(0), "fifo");
  const results::RecoveryStats& st = run.summary.failures.recovery;
  EXPECT_EQ(st.killed, 2);
  EXPECT_EQ(st.not_recovered, 2);
  EXPECT_EQ(st.retry_exhausted, 2);
  EXPECT_EQ(st.p50_s, -1) << "never";
  EXPECT_EQ(st.max_s, -1);
  EXPECT_EQ(st.all_running_s, -1);
  planner::Target t;
  t.kpi = "recovery_max";
  EXPECT_EQ(planner::kpi_value(run.summary, t), std::numeric_limits<double>::infinity());
  t.kpi = "not_recovered";
  EXPECT_EQ(planner::kpi_value(run.summary, t), 2.0);
  std::ostringstream text;
  results::print_summary(text, run.summary);
  EXPECT_NE(text.str().find("2 killed, not running again 2 (2 past their retry limit)   back p50 never p95 never "
                            "max never"),
            std::string::npos)
      << text.str();
}

TEST(Recovery, QuantilesOverThreeKillsOfTwoOutages) {
  // Nodes 0 and 1 go down at 1 h for good, killing jobs 0 and 1; node 2 goes down at 2 h for 30
  // minutes, killing job 2. Node 3 is free: job 0 runs again there at 1h01 (back after 60 s) until
  // 11h01. Job 1 waits until node 2 returns at 2h30 (back after 1h30), job 2 until node 3 frees at
  // 11h01 (back after 9h01). Nearest rank over 60 s, 1h30, 9h01: p50 1h30, p95 and max 9h01.
  models::FailureSpec f;
  f.events.push_back(outage(kHour, 1000 * kHour, {0, 1}));
  f.events.push_back(outage(2 * kHour, 30 * kMinute, {2}));
  f.backoff = 60 * kSecond;
  RecordedRun run(three_jobs(), ht::cluster(4, 8), f, "fifo");
  const auto& r = run.r();
  ASSERT_EQ(r.kills.size(), 3u);
  ASSERT_EQ(r.outages.size(), 2u);
  EXPECT_EQ(r.outages[0].drill, 0);
  EXPECT_EQ(r.outages[1].drill, 1);
  EXPECT_EQ(r.outages[0].end, -1) << "its nodes never came back";
  EXPECT_EQ(r.outages[1].end, 150 * kMinute);
  const results::FailureSummary& s = run.summary.failures;
  EXPECT_EQ(s.recovery.killed, 3);
  EXPECT_EQ(s.recovery.p50_s, 5400.0);
  EXPECT_EQ(s.recovery.p95_s, 32460.0);
  EXPECT_EQ(s.recovery.max_s, 32460.0);
  ASSERT_EQ(s.drills.size(), 2u);
  EXPECT_EQ(s.drills[0].recovery.killed, 2);
  EXPECT_EQ(s.drills[0].recovery.p50_s, 60.0);
  EXPECT_EQ(s.drills[0].recovery.max_s, 5400.0);
  EXPECT_EQ(s.drills[0].recovery.all_running_s, 5400.0);
  EXPECT_EQ(s.drills[0].duration_s, -1);
  EXPECT_EQ(s.drills[1].recovery.killed, 1);
  EXPECT_EQ(s.drills[1].recovery.max_s, 32460.0);
  EXPECT_EQ(s.drills[1].duration_s, 1800.0);
  planner::Target t;
  t.kpi = "recovery_p95";
  EXPECT_EQ(planner::kpi_value(run.summary, t), 32460.0);
}

TEST(Recovery, GangOfTwoPodsLeftPartialUnderKubernetesWholeWithCoscheduling) {
  // Two 8-GPU nodes and one 16-GPU job: two pods, one a node. Node 0 fails at 1 h for 2 h. The
  // job is killed (a gang of 2 nodes) and retries after 60 s: plain kube-scheduler binds the pod
  // that fits on node 1 and leaves the other pending until node 0 is back at 3 h: a partial gang
  // holding 8 GPUs idle from its bind to 3 h. With the Coscheduling plugin the pod group waits
  // whole: nothing is bound until both pods fit.
  models::FailureSpec f;
  f.events.push_back(outage(kHour, 2 * kHour, {0}));
  f.backoff = 60 * kSecond;
  const auto w = ht::WorkloadBuilder().job(0, 16, 36000).build();
  RecordedRun plain(w, ht::cluster(2, 8), f, "kubernetes");
  ASSERT_EQ(plain.r().kills.size(), 1u);
  const results::KillRecord& k = plain.r().kills[0];
  EXPECT_EQ(k.nodes, 2);
  EXPECT_EQ(k.restart, 3 * kHour);
  EXPECT_EQ(k.partial, 1);
  // The retry is pending again at 1h01m and the pod binds then: 8 GPUs x 1h59m.
  EXPECT_EQ(k.partial_gpu_ms, 8 * (2 * kHour - 60 * kSecond));
  const results::RecoveryStats& st = plain.summary.failures.recovery;
  EXPECT_EQ(st.gangs, 1);
  EXPECT_EQ(st.partial_gangs, 1);
  EXPECT_DOUBLE_EQ(st.partial_gpu_hours, 8.0 * 7140.0 / 3600.0);
  EXPECT_EQ(st.max_s, 7200.0);
  planner::Target t;
  t.kpi = "partial_gangs";
  EXPECT_EQ(planner::kpi_value(plain.summary, t), 1.0);

  RecordedRun gang(w, ht::cluster(2, 8), f, "kubernetes+coscheduling");
  ASSERT_EQ(gang.r().kills.size(), 1u);
  EXPECT_EQ(gang.r().kills[0].restart, 3 * kHour);
  EXPECT_EQ(gang.r().kills[0].partial, 0);
  EXPECT_EQ(gang.summary.failures.recovery.partial_gangs, 0);
  EXPECT_EQ(gang.summary.failures.recovery.gangs, 1);
  EXPECT_EQ(planner::kpi_value(gang.summary, t), 0.0);
}

TEST(Recovery, RandomFailureAndMaintenanceKillsAreTheirOwnKinds) {
  // A drain with a 30-minute timeout on a one-node pool kills the 10 h job at 1h30 (maintenance);
  // it is back once the node returns from its hour of maintenance at 2h30.
  models::FailureSpec f;
  models::Maintenance m;
  m.start = kHour;
  m.duration = kHour;
  m.drain = true;
  m.drain_timeout = 30 * kMinute;
  f.maintenance.push_back(m);
  f.backoff = 60 * kSecond;
  RecordedRun run(ht::WorkloadBuilder().job(0, 8, 36000).build(), ht::cluster(1, 8), f, "fifo");
  const auto& r = run.r();
  ASSERT_EQ(r.kills.size(), 1u);
  const results::OutageRecord& o = r.outages[r.kills[0].outage];
  EXPECT_EQ(o.kind, static_cast<std::uint8_t>(results::OutageKind::Maintenance));
  EXPECT_EQ(o.start, 90 * kMinute);
  EXPECT_EQ(o.nodes, 1) << "the node drained by the kill goes down in the same outage";
  EXPECT_EQ(o.end, 150 * kMinute);
  EXPECT_EQ(r.kills[0].restart, 150 * kMinute);
  const auto& by = run.summary.failures.by_kind[static_cast<std::size_t>(results::OutageKind::Maintenance)];
  EXPECT_EQ(by.killed, 1);
  EXPECT_EQ(by.max_s, 3600.0);
}

TEST(Recovery, OutageAndKillTablesRoundTripThroughHdf5AndOldFilesReadEmpty) {
  RecordedRun run(three_jobs(), ht::cluster(4, 8), two_kills(3), "fifo");
  results::RunResult r = run.r();
  r.outage_slo.push_back(results::OutageSlo{0, kHour, 3 * kHour, 0.75, 1.0});
  const std::string file = ::testing::TempDir() + "/recovery_roundtrip.h5";
  results::write_hdf5(r, file);
  const auto back = results::read_hdf5(file);
  ASSERT_EQ(back.outages.size(), r.outages.size());
  ASSERT_EQ(back.kills.size(), r.kills.size());
  for (std::size_t i = 0; i < r.kills.size(); ++i) {
    EXPECT_EQ(back.kills[i].restart, r.kills[i].restart);
    EXPECT_EQ(back.kills[i].lost_gpu_ms, r.kills[i].lost_gpu_ms);
    EXPECT_EQ(back.kills[i].job, r.kills[i].job);
  }
  EXPECT_EQ(back.outages[0].end, 3 * kHour);
  ASSERT_EQ(back.outage_slo.size(), 1u);
  EXPECT_EQ(back.outage_slo[0].during, 0.75);
  const auto s = results::summarize(back);
  EXPECT_EQ(s.failures.recovery.p95_s, 7200.0);
  EXPECT_EQ(s.failures.outage_slo_attainment, 0.75);
  EXPECT_EQ(s.failures.after_outage_slo_attainment, 1.0);

  // A file written before the tables existed: no /outages, /kills, /outage_slo.
  results::RunResult old = run.r();
  old.outages.clear();
  old.kills.clear();
  results::write_hdf5(old, file);
  const auto read_old = results::read_hdf5(file);
  EXPECT_TRUE(read_old.outages.empty());
  EXPECT_TRUE(read_old.kills.empty());
  EXPECT_EQ(results::summarize(read_old).failures.recovery.killed, 0);
  std::remove(file.c_str());
}

TEST(Recovery, RiccFailureDrillKillRowsMatchTheCounters) {
  const auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml");
  const auto r = app::run_scenario(sc).result;
  ASSERT_GT(r.jobs_killed, 0);
  EXPECT_EQ(static_cast<std::int64_t>(r.kills.size()), r.jobs_killed) << "one kill row a kill";
  std::int64_t lost = 0;
  for (const auto& k : r.kills) {
    lost += k.lost_gpu_ms;
    ASSERT_LT(k.outage, r.outages.size());
    EXPECT_EQ(r.outages[k.outage].start, k.time) << "killed when its outage began";
    if (k.restart >= 0) {
      EXPECT_GT(k.restart, k.time);
    }
  }
  EXPECT_EQ(lost, r.failure_lost_gpu_ms);
  std::int64_t nodes = 0;
  for (const auto& o : r.outages) nodes += o.nodes;
  EXPECT_EQ(nodes, r.node_outages) << "every node-down event belongs to one outage";
  const auto s = results::summarize(r);
  ASSERT_EQ(s.failures.drills.size(), 3u);
  std::int64_t by_kind = 0;
  for (const auto& k : s.failures.by_kind) by_kind += k.killed;
  EXPECT_EQ(by_kind, s.failures.recovery.killed);
  EXPECT_EQ(s.failures.drills[0].nodes, 32) << "rack 5: 32 nodes";
  EXPECT_EQ(s.failures.drills[0].duration_s, 6 * 3600.0);
  ASSERT_EQ(r.outage_slo.size(), 3u) << "the chat service around each scripted outage";
  EXPECT_EQ(r.outage_slo[2].during, 0.0) << "a site-wide power loss leaves no replica running";
}
