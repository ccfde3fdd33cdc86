// The kai policy: the acceptance scenarios A1-A7 of docs POLICIES.md section 4.6 with their exact
// outcomes, the fair-share arithmetic, reclaim / preempt / consolidation / stale-gang details,
// min-runtime protection, the policy block's validation, and invariants over random workloads and
// the bundled real trace.
#include "policies/kai/kai.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apps/pipeline.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/test_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::JobState;
using sim::kSecond;
namespace kai = policies::kai;
namespace ht = headroom::testing;

namespace {

// Tracks which jobs are running, with every preemption's time, reason and preemptor.
class Recorder : public models::SimObserver {
 public:
  struct Preemption {
    sim::Tick time;
    JobIndex job;
    std::int32_t by;
    std::string reason;
  };
  void on_event(sim::Tick t, models::AuditKind kind, JobIndex j, std::int32_t detail,
                std::string_view reason) override {
    if (kind == models::AuditKind::Preempt) preemptions.push_back({t, j, detail, std::string(reason)});
    if (kind == models::AuditKind::Requeue) running.erase(j);
  }
  void on_start(sim::Tick, JobIndex j, const models::Placement& p) override {
    running.insert(j);
    for (const auto& s : p) {
      node_used[s.node] += s.gpus;
      EXPECT_LE(node_used[s.node], node_cap) << "node " << s.node << " overcommitted";
    }
    placements[j] = p;
  }
  void on_end(sim::Tick, JobIndex j, JobState s) override {
    if (s != JobState::Unfinished) running.erase(j);
  }
  void on_sample(const models::Sample&) override {}

  std::set<JobIndex> running;
  std::vector<Preemption> preemptions;
  std::map<models::NodeId, int> node_used;
  std::map<JobIndex, models::Placement> placements;
  int node_cap = 1 << 30;
};

struct KaiRun {
  KaiRun(models::Workload workload, models::ClusterSpec cluster, const policies::PolicyParams& p,
         sim::Tick horizon = sim::kNever)
      : w(std::move(workload)), c(std::move(cluster)), policy(policies::make_policy("kai", p, 1)) {
    simulation::SimulationOptions opt;
    opt.horizon = horizon;
    sim = std::make_unique<simulation::Simulation>(w, c, *policy, &rec, opt);
    stats = sim->run();
  }
  double start(JobIndex j) const { return sim::to_seconds(sim->job_start(j)); }
  bool started(JobIndex j) const { return sim->job_start(j) >= 0; }
  models::NodeId node(JobIndex j) const { return sim->job_placement(j).at(0).node; }
  int preemptions(JobIndex j) const { return sim->job_preemptions(j); }
  JobState state(JobIndex j) const { return sim->job_state(j); }
  std::string reason(JobIndex j) const { return kai::last_pending_reason(*policy, j); }
  int running_in(const std::string& q) const {
    int n = 0;
    for (JobIndex j : rec.running) n += w.queues.name(w.jobs[j].queue) == q;
    return n;
  }

  models::Workload w;
  models::ClusterSpec c;
  std::unique_ptr<policies::Policy> policy;
  Recorder rec;
  std::unique_ptr<simulation::Simulation> sim;
  simulation::SimulationStats stats;
};

// n jobs arriving at floored exponential gaps of rate `rate` per second, of a GPU count drawn from
// `sizes` and a floored lognormal(mu, sigma) run time plus one second, in that draw order.
template <std::size_t N>
models::Workload random_arrivals(sim::RngStream& rng, int n, const int (&sizes)[N], double rate, double mu,
                                 double sigma) {
  ht::WorkloadBuilder b;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += std::floor(rng.exponential(rate));
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const double run = std::floor(rng.lognormal(mu, sigma)) + 1;
    b.job(t, sizes[rng.below(N)], run);
  }
  return b.build();
}

void in_queue(models::Workload& w, JobIndex j, const std::string& q, models::JobKind kind = models::JobKind::Train) {
  w.jobs[j].queue = w.queues.intern(q);
  w.jobs[j].kind = kind;
}

void in_group(models::Workload& w, JobIndex j, const std::string& g, int min_member) {
  w.jobs[j].group = w.groups.intern(g);
  w.jobs[j].gang_min = min_member;
}

}  // namespace

// --- A1 --------------------------------------------------------------------------------------

TEST(KaiFairShare, A1_FloorsAndLeftoverGoToTheOlderQueue) {
  // 10 GPUs; A (quota 2, weight 1, older) and B (quota 2, weight 3), each requesting 10.
  std::vector<kai::DivisionEntry> q(2);
  q[0] = {2, -1, 10, 1.0, 100, 0.0, 0};
  q[1] = {2, -1, 10, 3.0, 100, 0.0, 1};
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{4, 6}));
  // Deserved 2 + 2, offers 1.5 -> 1 and 4.5 -> 4, the leftover unit to the older queue.
  q[0].creation = 1;
  q[1].creation = 0;  // B older
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{3, 7}));
}

TEST(KaiFairShare, DeservedLimitPriorityAndUsage) {
  std::vector<kai::DivisionEntry> q(2);
  // A queue asking less than its offer is satisfied and the rest goes round again.
  q[0] = {0, -1, 1, 1.0, 100, 0.0, 0};
  q[1] = {0, -1, 20, 1.0, 100, 0.0, 1};
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{1, 9}));
  // A limit caps the share.
  q[0] = {0, 3, 20, 1.0, 100, 0.0, 0};
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{3, 7}));
  // A higher priority level takes the over-quota resources first.
  q[0] = {2, -1, 20, 1.0, 100, 0.0, 0};
  q[1] = {2, -1, 20, 1.0, 200, 0.0, 1};
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{2, 8}));
  // Weight 0: no over-quota share; quota -1 means everything requested.
  q[0] = {1, -1, 20, 0.0, 100, 0.0, 0};
  q[1] = {1, -1, 4, 1.0, 100, 0.0, 1};
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{1, 4}));
  q[0] = {-1, -1, 7, 1.0, 100, 0.0, 0};
  EXPECT_EQ(kai::divide(q, 10, 1.0)[0], 7);
  // Historical usage: nW 0.5 each, nU 0.75 / 0.25 -> shareWeight 0.25 / 0.75 of 8 -> 2 / 6.
  q[0] = {1, -1, 20, 1.0, 100, 0.75, 0};
  q[1] = {1, -1, 20, 1.0, 100, 0.25, 1};
  EXPECT_EQ(kai::divide(q, 10, 1.0), (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(kai::divide(q, 10, 0.0), (std::vector<std::int64_t>{5, 5}));  // kValue 0 ignores usage
}

namespace {

KaiRun a1_run(bool b_older) {
  // 10 x 1-GPU jobs per queue, all at t=0, running longer than the horizon.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 20; ++i) b.job(0, 1, 100000);
  auto w = b.build();
  for (JobIndex j = 0; j < 20; ++j) in_queue(w, j, j < 10 ? "A" : "B");
  std::vector<std::pair<std::string, std::string>> kv;
  if (b_older) {
    ht::kai_queue(kv, "B", 2, 3, -1);
    ht::kai_queue(kv, "A", 2, 1, -1);
  } else {
    ht::kai_queue(kv, "A", 2, 1, -1);
    ht::kai_queue(kv, "B", 2, 3, -1);
  }
  return KaiRun(w, ht::cluster(1, 10), ht::ordered_params(kv), 1000 * kSecond);
}

}  // namespace

TEST(Kai, A1_SteadyAllocationIsFourSixAndThreeSevenWhenBIsOlder) {
  const auto run = a1_run(false);
  EXPECT_EQ(run.running_in("A"), 4);
  EXPECT_EQ(run.running_in("B"), 6);
  for (const auto& p : run.rec.preemptions) EXPECT_EQ(run.w.queues.name(run.w.jobs[p.job].queue), "A");
  const auto older = a1_run(true);
  EXPECT_EQ(older.running_in("A"), 3);
  EXPECT_EQ(older.running_in("B"), 7);
}

// --- A2 --------------------------------------------------------------------------------------

namespace {

KaiRun a2_run(int b_jobs, const std::string& reclaim_min_runtime = "") {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 100000);
  for (int i = 0; i < b_jobs; ++i) b.job(10, 1, 100000);
  auto w = b.build();
  for (JobIndex j = 0; j < w.jobs.size(); ++j) in_queue(w, j, j < 8 ? "A" : "B");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 4, 1, -1);
  ht::kai_queue(kv, "B", 4, 1, -1);
  if (!reclaim_min_runtime.empty()) kv.emplace_back("queues.A.reclaimMinRuntime", reclaim_min_runtime);
  return KaiRun(w, ht::cluster(1, 8), ht::ordered_params(kv), 2000 * kSecond);
}

}  // namespace

TEST(Kai, A2_ReclaimEvictsTheFourNewestJobsOfTheOverServedQueue) {
  const auto run = a2_run(4);
  for (JobIndex j = 0; j < 8; ++j) {
    EXPECT_DOUBLE_EQ(run.start(j), 0.0);
    EXPECT_EQ(run.preemptions(j), j >= 4 ? 1 : 0) << "job " << j;
  }
  for (JobIndex j = 8; j < 12; ++j) EXPECT_DOUBLE_EQ(run.start(j), 40.0) << "reclaim at 10 s + 30 s grace";
  EXPECT_EQ(run.running_in("A"), 4);
  EXPECT_EQ(run.running_in("B"), 4);
  ASSERT_EQ(run.rec.preemptions.size(), 4u);
  for (const auto& p : run.rec.preemptions) {
    EXPECT_EQ(p.time, 10 * kSecond);
    EXPECT_GE(p.by, 8);
    EXPECT_NE(p.reason.find("reclaim: MaintainFairShare"), std::string::npos) << p.reason;
  }
}

TEST(Kai, A2_AFifthJobOfBStaysPendingAsNoStrategyHolds) {
  const auto run = a2_run(5);
  EXPECT_EQ(run.rec.preemptions.size(), 4u);
  EXPECT_FALSE(run.started(12));
  EXPECT_EQ(run.state(12), JobState::Unfinished);
  EXPECT_EQ(run.running_in("A"), 4);
  EXPECT_EQ(run.running_in("B"), 4);
}

TEST(Kai, QuotasAboveTheClusterStopReclaimAtTheVictimsQuota) {
  // KAI#1750: 8 GPUs, A quota 6, B quota 3. B runs 8; A asks for 6. The fair shares (6 and 3) sum
  // to more than the cluster, so once B is down to its quota no strategy holds: A gets 5.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 100000);
  for (int i = 0; i < 6; ++i) b.job(10, 1, 100000);
  auto w = b.build();
  for (JobIndex j = 0; j < w.jobs.size(); ++j) in_queue(w, j, j < 8 ? "B" : "A");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 6, 1, -1);
  ht::kai_queue(kv, "B", 3, 1, -1);
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv), 1000 * kSecond);
  EXPECT_EQ(run.rec.preemptions.size(), 5u);
  EXPECT_EQ(run.running_in("A"), 5);
  EXPECT_EQ(run.running_in("B"), 3);
  EXPECT_FALSE(run.started(13));
}

// Reclaim for a pod kept to pool y (a node selector): B's newest job, on pool x, is a victim
// the strategies allow, and the solver takes it first, but it frees nothing the pod may use; the
// next one, on y, makes room. The solver leaves pods on pools the preemptor cannot use out of
// its tentative node state (what CEA Curie's gangs waiting for thin nodes needed), and decides
// as before: both victims it took are evicted and A's job starts on y's node.
TEST(Kai, ReclaimForAPodKeptToOnePoolPassesOverVictimsOnOthers) {
  ht::WorkloadBuilder b;
  b.job(0, 8, 100000);   // 0: B, kept to y: node 1
  b.job(1, 8, 100000);   // 1: B, anywhere: node 0 (pool x), the newest
  b.job(10, 8, 100000);  // 2: A, kept to y
  auto w = b.build();
  in_queue(w, 0, "B");
  in_queue(w, 1, "B");
  in_queue(w, 2, "A");
  w.node_sets = {{"y"}};
  w.jobs[0].node_set = w.jobs[2].node_set = 1;
  models::ClusterSpec c;
  c.pools.push_back({"x", 1, 8, "A100", 0, 0});
  c.pools.push_back({"y", 1, 8, "A100", 0, 0});
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 8, 1, -1);
  ht::kai_queue(kv, "B", 0, 1, -1);
  const KaiRun run(w, c, ht::ordered_params(kv), 1000 * kSecond);
  EXPECT_EQ(run.node(0), 1u);
  ASSERT_EQ(run.rec.preemptions.size(), 2u);
  EXPECT_EQ(run.rec.preemptions[0].job, 1u);
  EXPECT_EQ(run.rec.preemptions[1].job, 0u);
  for (const auto& p : run.rec.preemptions) EXPECT_EQ(p.by, 2);
  ASSERT_TRUE(run.started(2));
  EXPECT_EQ(run.node(2), 1u);
  EXPECT_EQ(run.running_in("A"), 1);
}

TEST(Kai, ReclaimMinRuntimeProtectsYoungVictims) {
  const auto run = a2_run(4, "60s");
  for (const auto& p : run.rec.preemptions) EXPECT_EQ(p.time, 60 * kSecond);
  EXPECT_EQ(run.rec.preemptions.size(), 4u);
  for (JobIndex j = 8; j < 12; ++j) EXPECT_DOUBLE_EQ(run.start(j), 90.0);
}

// --- A3 --------------------------------------------------------------------------------------

TEST(Kai, A3_NonPreemptibleJobsOnlyWithinQuotaTrainJobsRunOverQuota) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 3; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 3; ++i) b.job(5, 1, 1000);
  auto w = b.build();
  for (JobIndex j = 0; j < 6; ++j) in_queue(w, j, "A", j < 3 ? models::JobKind::Interactive : models::JobKind::Train);
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 2, 1, -1);
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv), 500 * kSecond);
  EXPECT_DOUBLE_EQ(run.start(0), 0.0);
  EXPECT_DOUBLE_EQ(run.start(1), 0.0);
  EXPECT_FALSE(run.started(2)) << "6 GPUs idle, but build (100) is non-preemptible and over quota";
  EXPECT_EQ(run.reason(2).rfind("NonPreemptibleOverQuota", 0), 0u) << run.reason(2);
  for (JobIndex j = 3; j < 6; ++j) EXPECT_DOUBLE_EQ(run.start(j), 5.0);
  EXPECT_TRUE(run.rec.preemptions.empty());
}

// --- A4 --------------------------------------------------------------------------------------

TEST(Kai, A4_BuildPodPreemptsTheTrainPodInItsQueue) {
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(5, 1, 1000).build();
  in_queue(w, 0, "test", models::JobKind::Train);
  in_queue(w, 1, "test", models::JobKind::Interactive);  // build, 100
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "default", -1, 1, -1);
  ht::kai_queue(kv, "test", 1, 1, 1, "default");
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv), 500 * kSecond);
  EXPECT_EQ(run.preemptions(0), 1);
  EXPECT_DOUBLE_EQ(run.start(1), 35.0);  // preempted at 5, 30 s grace
  ASSERT_EQ(run.rec.preemptions.size(), 1u);
  EXPECT_EQ(run.rec.preemptions[0].by, 1);
  EXPECT_NE(run.rec.preemptions[0].reason.find("preempt: strictly lower priority"), std::string::npos);
  // The train pod cannot come back: the queue's limit is 1.
  EXPECT_EQ(run.reason(0).rfind("OverLimit", 0), 0u) << run.reason(0);
}

TEST(Kai, PreemptNeedsStrictlyLowerPriority) {
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(5, 1, 1000).build();
  in_queue(w, 0, "test", models::JobKind::Train);
  in_queue(w, 1, "test", models::JobKind::Train);
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "test", 1, 1, 1);
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv));
  EXPECT_EQ(run.preemptions(0), 0);
  EXPECT_DOUBLE_EQ(run.start(1), 1000.0);
}

// --- A5 --------------------------------------------------------------------------------------

TEST(Kai, A5_TheThirdJobIsPendingWithOverLimit) {
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(0, 1, 1000).job(0, 1, 1000).build();
  for (JobIndex j = 0; j < 3; ++j) in_queue(w, j, "A");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 0, 1, 2);
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv), 500 * kSecond);
  EXPECT_DOUBLE_EQ(run.start(0), 0.0);
  EXPECT_DOUBLE_EQ(run.start(1), 0.0);
  EXPECT_FALSE(run.started(2));
  EXPECT_EQ(run.reason(2).rfind("OverLimit", 0), 0u) << run.reason(2);
}

TEST(Kai, UnsetLimitRefusesAnythingAsInKaiCode) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).build();
  in_queue(w, 0, "A");
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params({{"queues.A.resources.gpu.quota", "2"}}), 500 * kSecond);
  EXPECT_FALSE(run.started(0));
  EXPECT_EQ(run.reason(0).rfind("OverLimit", 0), 0u);
}

// --- A6 --------------------------------------------------------------------------------------

TEST(Kai, A6_GangOfFourDoesNotBindOnThreeFreeGpus) {
  ht::WorkloadBuilder b;
  b.job(0, 1, 100);
  for (int i = 0; i < 4; ++i) b.job(1, 1, 50);
  auto w = b.build();
  for (JobIndex j = 1; j < 5; ++j) in_group(w, j, "gang", 4);
  const KaiRun run(w, ht::cluster(1, 4), {});
  for (JobIndex j = 1; j < 5; ++j) {
    EXPECT_DOUBLE_EQ(run.start(j), 100.0) << "no pod binds while only 3 GPUs are free";
    EXPECT_EQ(run.state(j), JobState::Completed);
  }
  EXPECT_TRUE(run.rec.preemptions.empty());
}

namespace {

KaiRun stale_run(models::TraceStatus first_pod) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).status(first_pod).job(0, 1, 1000).build();
  in_group(w, 0, "g", 2);
  in_group(w, 1, "g", 2);
  return KaiRun(w, ht::cluster(1, 4), {}, 5000 * kSecond);
}

}  // namespace

TEST(Kai, A6_StaleGangIsEvictedWholeAfterTheGracePeriod) {
  const auto run = stale_run(models::TraceStatus::Failed);
  EXPECT_DOUBLE_EQ(run.start(0), 0.0);
  EXPECT_DOUBLE_EQ(run.start(1), 0.0);
  ASSERT_EQ(run.rec.preemptions.size(), 1u);
  EXPECT_EQ(run.rec.preemptions[0].job, 1u);
  EXPECT_EQ(run.rec.preemptions[0].time, 160 * kSecond);  // the pod died at 100 s, grace 60 s
  EXPECT_EQ(run.rec.preemptions[0].by, -1);
  EXPECT_EQ(run.rec.preemptions[0].reason.rfind("stalegangeviction", 0), 0u);
  EXPECT_EQ(run.state(1), JobState::Unfinished) << "below minMember it cannot start again";
  // A pod that succeeded still counts towards minMember: no eviction.
  const auto ok = stale_run(models::TraceStatus::Completed);
  EXPECT_TRUE(ok.rec.preemptions.empty());
  EXPECT_EQ(ok.state(1), JobState::Completed);
}

TEST(Kai, ElasticGroupStartsMinMemberThenTheRest) {
  // minMember 2 of 3 pods, 2 GPUs free: two start, the third once a GPU frees.
  ht::WorkloadBuilder b;
  b.job(0, 2, 100);
  for (int i = 0; i < 3; ++i) b.job(1, 1, 500);
  auto w = b.build();
  for (JobIndex j = 1; j < 4; ++j) in_group(w, j, "e", 2);
  const KaiRun run(w, ht::cluster(1, 4), {});
  EXPECT_DOUBLE_EQ(run.start(1), 1.0);
  EXPECT_DOUBLE_EQ(run.start(2), 1.0);
  EXPECT_DOUBLE_EQ(run.start(3), 100.0);
}

// --- A7 --------------------------------------------------------------------------------------

TEST(Kai, A7_BinpackPutsTheJobOnTheUsedNodeSpreadOnTheEmptyOne) {
  auto w = ht::WorkloadBuilder().job(0, 2, 1000).job(1, 1, 100).build();
  const KaiRun pack(w, ht::cluster(2, 8), {});
  EXPECT_EQ(pack.node(0), 0u);
  EXPECT_EQ(pack.node(1), 0u);
  const KaiRun spread(w, ht::cluster(2, 8), ht::ordered_params({{"placementStrategy.gpu", "spread"}}));
  EXPECT_EQ(spread.node(0), 0u);
  EXPECT_EQ(spread.node(1), 1u);
}

// --- Consolidation, sessions, hierarchy ----------------------------------------------------------

TEST(Kai, ConsolidationMovesASmallPodToMakeRoomForAWholeNodeJob) {
  // 2 nodes x 4 GPUs. x (3) on n0, y (3) on n1, z (1) binpacked onto n0. x ends at 100: n0 has 3
  // free, n1 1. w (4 GPUs) fits only if z moves to n1.
  auto w = ht::WorkloadBuilder().job(0, 3, 100).job(1, 3, 5000).job(2, 1, 5000).job(50, 4, 100).build();
  const KaiRun run(w, ht::cluster(2, 4), {});
  EXPECT_EQ(run.rec.placements.at(2).at(0).node, 1u) << "z restarted on n1";
  ASSERT_EQ(run.rec.preemptions.size(), 1u);
  EXPECT_EQ(run.rec.preemptions[0].job, 2u);
  EXPECT_EQ(run.rec.preemptions[0].time, 100 * kSecond);
  EXPECT_EQ(run.rec.preemptions[0].by, 3);
  EXPECT_EQ(run.rec.preemptions[0].reason.rfind("consolidation", 0), 0u);
  EXPECT_DOUBLE_EQ(run.start(3), 130.0);
  EXPECT_EQ(run.node(3), 0u);
}

TEST(Kai, NoConsolidationWhenTheVictimCannotBePlacedAgain) {
  // As above but y takes 4 GPUs on n1: z has nowhere to go, so w waits for z.
  auto w = ht::WorkloadBuilder().job(0, 3, 100).job(1, 4, 5000).job(2, 1, 300).job(50, 4, 100).build();
  const KaiRun run(w, ht::cluster(2, 4), {});
  EXPECT_TRUE(run.rec.preemptions.empty());
  EXPECT_DOUBLE_EQ(run.start(3), 302.0);
}

TEST(Kai, SessionsRunOnSchedulePeriodBoundaries) {
  auto w = ht::WorkloadBuilder().job(0.5, 1, 10).job(12.25, 1, 10).build();
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params({{"schedulePeriod", "5s"}}));
  EXPECT_DOUBLE_EQ(run.start(0), 5.0);
  EXPECT_DOUBLE_EQ(run.start(1), 15.0);
}

TEST(Kai, HierarchicalReclaimComparesBelowTheCommonAncestor) {
  // root: org1 (quota 4) { a (quota 2), b (quota 2) }, org2 (quota 4). org2 runs 8 jobs, then a
  // submits 2: org1's deserved 4 is reclaimed from org2.
  ht::WorkloadBuilder bld;
  for (int i = 0; i < 8; ++i) bld.job(0, 1, 100000);
  for (int i = 0; i < 2; ++i) bld.job(10, 1, 100000);
  auto w = bld.build();
  for (JobIndex j = 0; j < 10; ++j) in_queue(w, j, j < 8 ? "c" : "a");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "org1", 4, 1, -1);
  ht::kai_queue(kv, "org2", 4, 1, -1);
  ht::kai_queue(kv, "a", 2, 1, -1, "org1");
  ht::kai_queue(kv, "b", 2, 1, -1, "org1");
  ht::kai_queue(kv, "c", 4, 1, -1, "org2");
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv), 1000 * kSecond);
  EXPECT_EQ(run.rec.preemptions.size(), 2u);
  EXPECT_DOUBLE_EQ(run.start(8), 40.0);
  EXPECT_DOUBLE_EQ(run.start(9), 40.0);
  EXPECT_EQ(run.running_in("c"), 6);
}

TEST(Kai, NonPreemptibleJobsAreNeverVictims) {
  ht::WorkloadBuilder bld;
  for (int i = 0; i < 8; ++i) bld.job(0, 1, 1000);
  bld.job(10, 1, 100);
  auto w = bld.build();
  for (JobIndex j = 0; j < 8; ++j) in_queue(w, j, "A", models::JobKind::Inference);
  in_queue(w, 8, "B");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 8, 1, -1);
  ht::kai_queue(kv, "B", 0, 1, -1);
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv));
  EXPECT_TRUE(run.rec.preemptions.empty());
  EXPECT_DOUBLE_EQ(run.start(8), 1000.0);
}

namespace {

KaiRun usage_run(bool time_based) {
  // A used the whole cluster for 1000 s; then both queues ask for all of it.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 4; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 8; ++i) b.job(1001, 1, 100000);
  auto w = b.build();
  for (JobIndex j = 0; j < 12; ++j) in_queue(w, j, j < 4 || j >= 8 ? "A" : "B");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 0, 1, -1);
  ht::kai_queue(kv, "B", 0, 1, -1);
  if (time_based) {
    kv.emplace_back("timeBasedFairshare", "true");
    kv.emplace_back("usageParams.halfLifePeriod", "1h");
  }
  return KaiRun(w, ht::cluster(1, 4), ht::ordered_params(kv), 2000 * kSecond);
}

}  // namespace

TEST(Kai, TimeBasedFairshareGivesTheOverQuotaShareToTheQueueThatUsedLess) {
  const auto plain = usage_run(false);
  EXPECT_EQ(plain.running_in("A"), 2);
  EXPECT_EQ(plain.running_in("B"), 2);
  const auto aged = usage_run(true);
  EXPECT_EQ(aged.running_in("A"), 0);
  EXPECT_EQ(aged.running_in("B"), 4);
}

TEST(Kai, JobsInParentQueuesAndJobsThatNeverFitAreRejected) {
  auto w = ht::WorkloadBuilder().job(0, 1, 10).job(0, 9, 10).job(0, 1, 10).build();
  in_queue(w, 0, "org");
  in_queue(w, 1, "team");
  in_queue(w, 2, "team");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "org", -1, 1, -1);
  ht::kai_queue(kv, "team", 0, 1, -1, "org");
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv));
  EXPECT_EQ(run.state(0), JobState::Rejected);
  EXPECT_EQ(run.state(1), JobState::Rejected);
  EXPECT_EQ(run.state(2), JobState::Completed);
}

// Issue #32 item 6: KAI places each pod whole on one node (api/node_info/node_info.go
// IsTaskAllocatable), so a job whose trace gives a per-node shape larger than every node
// (gpus_per_node 16, or 16 GPUs on nodes: 1, on 8-GPU nodes) stays Pending with the fit error, its
// queue's later job runs at once and nothing is evicted for it; a job whose trace gives no shape,
// or a shape a node holds, still spans nodes.
TEST(Kai, APodLargerThanEveryNodeStaysPendingWithoutBlockingItsQueue) {
  auto w = ht::WorkloadBuilder()
               .job(0, 16, 3600)   // gpus_per_node 16: one 16-GPU pod
               .job(0, 16, 3600)   // nodes 1: one 16-GPU pod
               .job(5, 4, 3600)    // behind them in the same queue
               .job(10, 16, 3600)  // no shape: spans two nodes
               .job(10, 16, 3600)  // gpus_per_node 8: two 8-GPU pods
               .build();
  w.jobs[0].gpus_per_node = 16;
  w.jobs[1].nodes = 1;
  w.jobs[4].gpus_per_node = 8;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) in_queue(w, j, "A");
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "A", 0, 1, -1);
  const KaiRun run(w, ht::cluster(6, 8), ht::ordered_params(kv), 86400 * kSecond);
  for (JobIndex j : {0u, 1u}) {
    EXPECT_EQ(run.state(j), JobState::Unfinished) << j;
    EXPECT_FALSE(run.started(j)) << j;
    EXPECT_EQ(run.reason(j),
              "Unschedulable: no nodes with enough resources were found: a pod of the group asks more GPUs than any "
              "node has (node(s) didn't have enough resources: GPUs); it stays Pending")
        << j;
  }
  EXPECT_EQ(run.start(2), 5.0);
  EXPECT_EQ(run.start(3), 10.0);
  EXPECT_EQ(run.start(4), 10.0);
  EXPECT_EQ(run.sim->job_placement(3).size(), 2u);
  EXPECT_EQ(run.sim->job_placement(4).size(), 2u);
  EXPECT_TRUE(run.rec.preemptions.empty());
  for (JobIndex j : {2u, 3u, 4u}) EXPECT_EQ(run.state(j), JobState::Completed) << j;
}

// --- The policy block ----------------------------------------------------------------------------

TEST(KaiParams, BadInputNamesTheKeyAndSuggests) {
  auto errs = policies::check_policy(
      "kai", ht::ordered_params({{"queues.a.resources.gpu.qouta", "2"}, {"placementStrategy.gpu", "tight"}}), "s.yaml",
      1, 1);
  ASSERT_EQ(errs.size(), 2u);
  std::string all;
  for (const auto& e : errs) all += std::string(e.what()) + "\n";
  EXPECT_NE(all.find("did you mean \"queues.<queue>.resources.gpu.quota\""), std::string::npos) << all;
  EXPECT_NE(all.find("unknown placement strategy \"tight\""), std::string::npos) << all;
  EXPECT_NE(all.find("test.yaml:2:3"), std::string::npos) << all;

  errs = policies::check_policy("kai", ht::ordered_params({{"queues.a.parentQueue", "nowhere"}}), "s.yaml", 1, 1);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(std::string(errs[0].what()).find("not declared"), std::string::npos);
  errs = policies::check_policy(
      "kai", ht::ordered_params({{"queues.a.parentQueue", "b"}, {"queues.b.parentQueue", "a"}}), "s", 1, 1);
  EXPECT_FALSE(errs.empty());
  errs = policies::check_policy("kai",
                                ht::ordered_params({{"queues.a.resources.gpu.limit", "-2"},
                                                    {"kValue", "x"},
                                                    {"reclaimerUtilizationMultiplier", "0.5"},
                                                    {"priorityClassName.train", "gold"},
                                                    {"default-staleness-grace-period", "soon"}}),
                                "s", 1, 1);
  EXPECT_EQ(errs.size(), 5u);
  EXPECT_TRUE(policies::check_policy("kai",
                                     ht::ordered_params({{"queues.a.resources.gpu.quota", "2"},
                                                         {"priorityClassName.interactive", "build-preemptible"},
                                                         {"timeBasedFairshare", "true"},
                                                         {"usageParams.halfLifePeriod", "1h"}}),
                                     "s", 1, 1)
                  .empty());
}

TEST(KaiParams, PriorityClassMappingMakesInteractiveJobsPreemptible) {
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(5, 1, 1000).build();
  in_queue(w, 0, "test", models::JobKind::Interactive);
  in_queue(w, 1, "test", models::JobKind::Inference);
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "test", 1, 1, 1);
  kv.emplace_back("priorityClassName.interactive", "build-preemptible");
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv));
  EXPECT_EQ(run.preemptions(0), 1);  // 75 < 125 and preemptible
  EXPECT_DOUBLE_EQ(run.start(1), 35.0);
}

// --- Invariants ----------------------------------------------------------------------------------

namespace {

class Invariants : public models::SimObserver {
 public:
  Invariants(const models::Workload& w, const models::ClusterSpec& c) : w_(w), ends(w.jobs.size(), 0) {
    for (const auto& p : c.pools)
      for (int i = 0; i < p.nodes; ++i) cap_.push_back(p.gpus_per_node);
    used_.assign(cap_.size(), 0);
  }
  void on_event(sim::Tick, models::AuditKind k, JobIndex j, std::int32_t, std::string_view) override {
    if (k == models::AuditKind::Requeue) free(j);
    if (k == models::AuditKind::Preempt) ++preempts;
  }
  void on_start(sim::Tick t, JobIndex j, const models::Placement& p) override {
    EXPECT_GE(t, w_.jobs[j].submit);
    std::int32_t g = 0;
    for (const auto& s : p) {
      used_[s.node] += s.gpus;
      g += s.gpus;
      if (used_[s.node] > cap_[s.node]) ++overcommits;
    }
    EXPECT_EQ(g, w_.jobs[j].gpus);
    placement_[j] = p;
  }
  void on_end(sim::Tick, JobIndex j, JobState s) override {
    ++ends[j];
    if (s != JobState::Unfinished && s != JobState::Rejected) free(j);
  }
  void on_sample(const models::Sample&) override {}
  void free(JobIndex j) {
    auto it = placement_.find(j);
    if (it == placement_.end()) return;
    for (const auto& s : it->second) used_[s.node] -= s.gpus;
    placement_.erase(it);
  }

  const models::Workload& w_;
  std::vector<int> ends;
  int overcommits = 0, preempts = 0;
  std::vector<int> cap_, used_;
  std::map<JobIndex, models::Placement> placement_;
};

models::Workload random_workload(std::uint64_t seed, int n) {
  sim::RngStream rng(seed, "test/kai");
  ht::WorkloadBuilder b;
  double t = 0;
  static const int kSizes[] = {1, 1, 1, 2, 4, 8, 2, 1, 3, 16};
  for (int i = 0; i < n; ++i) {
    t += std::floor(rng.exponential(1.0 / 20.0));
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const double run = std::floor(rng.lognormal(5.0, 1.5)) + 1;
    b.job(t, kSizes[rng.below(10)], run);
    if (rng.bernoulli(0.1)) b.status(models::TraceStatus::Failed);
  }
  auto w = b.build();
  static const char* kQueues[] = {"q0", "q1", "q2"};
  static const models::JobKind kKinds[] = {models::JobKind::Train, models::JobKind::Train, models::JobKind::Interactive,
                                           models::JobKind::Inference};
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const models::JobKind kind = kKinds[rng.below(4)];
    in_queue(w, j, kQueues[rng.below(3)], kind);
  }
  // Some gangs of 2-4 one-GPU pods submitted together.
  for (JobIndex j = 0; j + 4 < w.jobs.size(); j += 37) {
    const int size = 2 + static_cast<int>(rng.below(3));
    const std::string g = std::string(1, 'g').append(std::to_string(j));
    for (int k = 0; k < size; ++k) {
      w.jobs[j + k].submit = w.jobs[j].submit;
      w.jobs[j + k].gpus = 1;
      w.jobs[j + k].queue = w.jobs[j].queue;
      w.jobs[j + k].kind = w.jobs[j].kind;
      in_group(w, j + k, g, size);
    }
  }
  return w;
}

}  // namespace

class KaiProperties : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(KaiProperties, NoOvercommitEachJobEndsOnceDeterministic) {
  const auto w = random_workload(GetParam(), 1500);
  models::ClusterSpec c;
  c.pools.push_back({"big", 3, 8, "A100", 0, 0});
  c.pools.push_back({"small", 2, 4, "T4", 0, 0});
  std::vector<std::pair<std::string, std::string>> kv;
  ht::kai_queue(kv, "q0", 8, 1, -1);
  ht::kai_queue(kv, "q1", 8, 2, -1);
  ht::kai_queue(kv, "q2", 0, 1, 24);
  kv.emplace_back("preemptMinRuntime", "30s");
  auto run = [&] {
    auto policy = policies::make_policy("kai", ht::ordered_params(kv), 1);
    Invariants inv(w, c);
    simulation::Simulation sim(w, c, *policy, &inv);
    auto stats = sim.run();
    EXPECT_EQ(inv.overcommits, 0);
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      EXPECT_EQ(inv.ends[j], 1) << j;
      EXPECT_NE(sim.job_state(j), JobState::Pending);
      EXPECT_NE(sim.job_state(j), JobState::Running);
      if (sim.job_state(j) == JobState::Rejected) {
        EXPECT_GT(w.jobs[j].gpus, 24);
      }
    }
    EXPECT_LE(sim.peak_used_gpus(), c.total_gpus());
    return std::make_pair(stats.fingerprint, inv.preempts);
  };
  const auto a = run();
  EXPECT_EQ(a, run());
}

INSTANTIATE_TEST_SUITE_P(Seeds, KaiProperties, ::testing::Values(1u, 2u, 3u));

TEST(KaiRealTrace, Ricc14dInvariantsAndThreadIndependence) {
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-kai.yaml";
  const auto sc = scenarios::load_scenario(path);
  auto run_with = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return app::run_scenario(sc).result;
  };
  const auto one = run_with(1);
  const auto two = run_with(2);
  EXPECT_EQ(one.fingerprint, two.fingerprint);
  ASSERT_EQ(one.jobs.size(), 13607u);
  ASSERT_EQ(two.jobs.size(), one.jobs.size());
  std::size_t started = 0;
  for (std::size_t i = 0; i < one.jobs.size(); ++i) {
    ASSERT_EQ(one.jobs[i].start, two.jobs[i].start) << i;
    ASSERT_EQ(one.jobs[i].end, two.jobs[i].end) << i;
    started += one.jobs[i].start >= 0;
  }
  EXPECT_GT(started, 13000u);
  for (auto used : one.timeseries.pool_used_gpus) EXPECT_LE(used, 1024 * 8);
}

// A unit with one plain GPU pod is read from the unit in the allocate walk, the fast NoFit path,
// reclaim and consolidate (policy.hpp Unit::simple_gpus): a way of computing, not of deciding. A
// backlog of plain pods beside gangs, lone pods of a gang that wants two (never wanted), pods with
// cpu and memory, pods of a GPU type, three queues that reclaim and preempt; fingerprints recorded
// with the code before (commit 1ae3ee6).
TEST(KaiDecisions, LonePlainPodsDecideAsBefore) {
  const std::pair<std::uint64_t, const char*> cases[] = {
      {1, "c075562ff82f91a0"}, {2, "2d692a32f55bba8b"}, {3, "1cfae147a1f3d43d"}};
  for (const auto& [seed, fingerprint] : cases) {
    auto w = random_workload(seed, 3000);
    sim::RngStream rng(seed, "test/kai-lone");
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      w.jobs[j].submit /= 3;  // about three times what the cluster can run: a long backlog
      if (w.jobs[j].group != models::kNone) continue;
      const auto pick = rng.below(20);
      if (pick == 0) {
        in_group(w, j, "lone" + std::to_string(j), 2);
      } else if (pick == 1) {
        w.jobs[j].cpus = 4;
        w.jobs[j].memory_mib = 8192;
      } else if (pick == 2) {
        w.jobs[j].gpu_type = 1 + static_cast<std::int32_t>(rng.below(2));
      }
    }
    w.gpu_type_names = {"A100", "T4"};
    models::ClusterSpec c;
    c.pools.push_back({"big", 3, 8, "A100", 64, 512});
    c.pools.push_back({"small", 2, 4, "T4", 32, 256});
    std::vector<std::pair<std::string, std::string>> kv;
    ht::kai_queue(kv, "q0", 8, 1, -1);
    ht::kai_queue(kv, "q1", 8, 2, -1);
    ht::kai_queue(kv, "q2", 0, 1, 24);
    auto policy = policies::make_policy("kai", ht::ordered_params(kv), seed);
    simulation::Simulation sim(w, c, *policy, nullptr);
    EXPECT_EQ(sim.run().fingerprint, fingerprint) << "seed " << seed;
  }
}

// The walk over the groups that failed in allocate (consolidation, reclaim, preempt) passes over a
// lone plain pod that failed on the fast NoFit path without reading its unit when the first checks
// of consolidate, reclaim and preempt turn it away; the queue capacity check returns at once on a
// path without limits (policy.hpp FailedUnit, QNode::unlimited). A way of computing, not of deciding:
// a backlog about six times what the cluster runs, of lone plain pods mostly, on nodes that
// fragment (consolidation), three queues under and over their quotas (reclaim), kinds of three
// priorities (preempt, non-preemptible quota), with and without gpuSharing and limits; fingerprints
// recorded with the code before (commit 9c9565b).
TEST(KaiDecisions, FailedWalkShortcutsDecideAsBefore) {
  struct Case {
    std::uint64_t seed;
    bool sharing;
    int limit;
    const char* fingerprint;
  };
  const Case cases[] = {{1, false, -1, "acc035e5c41a0bc2"},
                        {2, false, 24, "eb5cfdfc282613c7"},
                        {3, true, -1, "9e60c3ab899aeb08"},
                        {4, true, 16, "2afce19aac9f1e97"}};
  for (const auto& c : cases) {
    auto w = random_workload(c.seed, 3000);
    for (JobIndex j = 0; j < w.jobs.size(); ++j) w.jobs[j].submit /= 6;
    models::ClusterSpec cl;
    cl.pools.push_back({"big", 4, 8, "A100", 0, 0});
    cl.pools.push_back({"small", 3, 4, "T4", 0, 0});
    std::vector<std::pair<std::string, std::string>> kv;
    ht::kai_queue(kv, "q0", 12, 1, -1);
    ht::kai_queue(kv, "q1", 4, 2, -1);
    ht::kai_queue(kv, "q2", 0, 1, c.limit);
    kv.emplace_back("reclaimMinRuntime", "60s");
    if (c.sharing) kv.emplace_back("gpuSharing", "true");
    auto policy = policies::make_policy("kai", ht::ordered_params(kv), c.seed);
    simulation::Simulation sim(w, cl, *policy, nullptr);
    const auto stats = sim.run();
    std::int64_t preemptions = 0;
    for (JobIndex j = 0; j < w.jobs.size(); ++j) preemptions += sim.job_preemptions(j);
    EXPECT_GT(preemptions, 0) << "seed " << c.seed;
    EXPECT_EQ(stats.fingerprint, c.fingerprint) << "seed " << c.seed << " preemptions " << preemptions;
  }
}

// allocate stops its walk where no pending pod can start any more and finishes it only when the
// walk of failed groups is about to evict (try_cut, resume_walk): the same decisions and pending
// reasons as the whole walk. Lone plain pods only (1-8 GPUs and 16 spanning nodes), a backlog about
// eight times what the cluster runs, three flat queues under and over their quotas (reclaim), a
// limit, fragmenting sizes (consolidation), and jobs that fail and retry; fingerprints recorded
// with the whole walk (commit d0d0848).
// Every audit event (pending reasons included, which the run fingerprint leaves out), in order.
class EventHash : public models::SimObserver {
 public:
  void on_event(sim::Tick t, models::AuditKind kind, JobIndex j, std::int32_t detail,
                std::string_view reason) override {
    add(static_cast<std::uint64_t>(t));
    add((static_cast<std::uint64_t>(kind) << 40) ^ (static_cast<std::uint64_t>(j) << 8) ^
        static_cast<std::uint32_t>(detail));
    for (char c : reason) add(static_cast<unsigned char>(c));
  }
  void on_start(sim::Tick t, JobIndex j, const models::Placement&) override { add(static_cast<std::uint64_t>(t) ^ j); }
  void on_end(sim::Tick t, JobIndex j, JobState) override { add(static_cast<std::uint64_t>(t) + j); }
  void on_sample(const models::Sample&) override {}
  std::uint64_t hash = 1469598103934665603ull;

 private:
  void add(std::uint64_t v) { hash = (hash ^ v) * 1099511628211ull; }
};

TEST(KaiDecisions, WalkCutWhereNothingStartsDecidesAsBefore) {
  struct Case {
    std::uint64_t seed;
    const char* fingerprint;
    std::uint64_t events;
  };
  const Case cases[] = {{1, "9e8c120ddc98d4bc", 16230222951198104460ull},
                        {2, "67e63054a14b0870", 11918333869447779505ull},
                        {3, "4d701fba94c1a3b0", 12305562184101764493ull}};
  for (const auto& [seed, fingerprint, events] : cases) {
    sim::RngStream rng(seed, "test/kai-cut");
    static const int kSizes[] = {1, 1, 2, 4, 8, 8, 1, 3, 16, 6};
    auto w = random_arrivals(rng, 2500, kSizes, 1.0 / 3.0, 5.0, 1.2);
    static const char* kQueues[] = {"q0", "q1", "q2"};
    for (JobIndex j = 0; j < w.jobs.size(); ++j) in_queue(w, j, kQueues[rng.below(3)]);
    std::vector<std::pair<std::string, std::string>> kv;
    ht::kai_queue(kv, "q0", 16, 1, -1);
    ht::kai_queue(kv, "q1", 4, 2, -1);
    ht::kai_queue(kv, "q2", 0, 1, seed == 3 ? 24 : -1);
    kv.emplace_back("reclaimMinRuntime", "60s");
    auto policy = policies::make_policy("kai", ht::ordered_params(kv), seed);
    EventHash audit;
    simulation::Simulation sim(w, ht::cluster(6, 8), *policy, &audit);
    const auto stats = sim.run();
    std::int64_t preemptions = 0;
    for (JobIndex j = 0; j < w.jobs.size(); ++j) preemptions += sim.job_preemptions(j);
    EXPECT_GT(preemptions, 0) << "seed " << seed;
    EXPECT_EQ(stats.fingerprint, fingerprint) << "seed " << seed << " preemptions " << preemptions;
    EXPECT_EQ(audit.hash, events) << "seed " << seed;
  }
}

// The allocate walk takes the rest of a block of 64 pending keys in one step where its summary
// (QNode::PendingList::Block) shows every step there would be a fast NoFit step of a lone pod
// that keeps the pick, and try_cut passes over such blocks the same way: the same decisions and
// every audit event (pending reasons included) as the walk that takes one key at a time. A backlog
// of thousands of pods per queue with what makes a block not plain or not taken: 2-pod gangs,
// interactive pods (priority 100, not preemptible: their queue's quota is checked), pods spanning
// nodes (16 and 24 GPUs), a limit on one queue, reclaim and consolidation; fingerprints and event
// hashes recorded with main at bf6188b, before the blocks.
TEST(KaiDecisions, WalkBlocksDecideAsBefore) {
  struct Case {
    std::uint64_t seed;
    const char* fingerprint;
    std::uint64_t events;
  };
  const Case cases[] = {{1, "397655430da7c0e8", 4405095879962603584ull},
                        {2, "27bb3bf9d4eaf105", 3327103823712563527ull},
                        {3, "302d865d7106bdca", 14900237696686446460ull}};
  for (const auto& [seed, fingerprint, events] : cases) {
    sim::RngStream rng(seed, "test/kai-blocks");
    static const int kSizes[] = {8, 8, 4, 8, 2, 1, 8, 16, 6, 24, 3, 8};
    auto w = random_arrivals(rng, 6000, kSizes, 1.0 / 2.0, 5.0, 1.3);
    static const char* kQueues[] = {"q0", "q1", "q1", "q2"};
    int gangs = 0;
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      const std::uint64_t roll = rng.below(20);
      in_queue(w, j, kQueues[rng.below(4)], roll < 3 ? models::JobKind::Interactive : models::JobKind::Train);
      if (roll == 19 && j + 1 < w.jobs.size() && w.jobs[j].gpus <= 8 && w.jobs[j + 1].gpus <= 8) {
        std::string g = "g";
        g += std::to_string(gangs++);
        in_group(w, j, g, 2);
        in_group(w, j + 1, g, 2);
        w.jobs[j + 1].queue = w.jobs[j].queue;
        w.jobs[j + 1].kind = w.jobs[j].kind;
        ++j;
      }
    }
    std::vector<std::pair<std::string, std::string>> kv;
    ht::kai_queue(kv, "q0", 24, 1, -1);
    ht::kai_queue(kv, "q1", 16, 2, -1);
    ht::kai_queue(kv, "q2", 8, 1, seed == 2 ? 32 : -1);
    kv.emplace_back("reclaimMinRuntime", "60s");
    auto policy = policies::make_policy("kai", ht::ordered_params(kv), seed);
    EventHash audit;
    simulation::Simulation sim(w, ht::cluster(8, 8), *policy, &audit);
    const auto stats = sim.run();
    std::int64_t preemptions = 0, started = 0;
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      preemptions += sim.job_preemptions(j);
      started += sim.job_state(j) == JobState::Completed ? 1 : 0;
    }
    EXPECT_GT(preemptions, 0) << "seed " << seed;
    EXPECT_GT(started, 5000) << "seed " << seed;
    EXPECT_EQ(stats.fingerprint, fingerprint) << "seed " << seed << " preemptions " << preemptions;
    EXPECT_EQ(audit.hash, events) << "seed " << seed;
  }
}

// Consolidation keeps each node's list of movable pods between sessions until kai starts, evicts
// or releases a pod there, a group gets a second member, or (a pod protected by a min runtime)
// the session ends; it skips a node whose movable pods could not free the pod's GPUs. Both must
// decide as reading every node afresh each session: fingerprints and event hashes recorded with
// main at b9cde3e (and 0cbe671), before the change, on a fragmented backlog of 1-8 GPU preemptible pods with
// consolidation acting, groups whose second member comes later, random node failures (pods killed
// and retried) and, for seed 2, a preemptMinRuntime on one queue.
TEST(KaiDecisions, ConsolidationNodeListsDecideAsBefore) {
  struct Case {
    std::uint64_t seed;
    const char* fingerprint;
    std::uint64_t events;
  };
  const Case cases[] = {{1, "d613fd619ac9bf50", 18393515511341781800ull},
                        {2, "41ba8251291b271e", 378021540662182789ull},
                        {3, "7373865247510d75", 3192151763559226050ull}};
  class Counting : public EventHash {
   public:
    void on_event(sim::Tick t, models::AuditKind kind, JobIndex j, std::int32_t detail,
                  std::string_view reason) override {
      EventHash::on_event(t, kind, j, detail, reason);
      if (reason.rfind("consolidation:", 0) == 0) ++consolidations;
    }
    std::int64_t consolidations = 0;
  };
  for (const auto& [seed, fingerprint, events] : cases) {
    sim::RngStream rng(seed, "test/kai-movable");
    static const int kSizes[] = {1, 2, 3, 4, 6, 8, 5, 2, 1, 7};
    auto w = random_arrivals(rng, 4000, kSizes, 1.0 / 20.0, 6.0, 1.0);
    static const char* kQueues[] = {"q0", "q1", "q1"};
    int groups = 0;
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
      // sequenced: under clang these workloads differed and the pinned fingerprints with them).
      const models::JobKind kind = rng.below(10) == 0 ? models::JobKind::Interactive : models::JobKind::Train;
      in_queue(w, j, kQueues[rng.below(3)], kind);
      if (rng.below(15) == 0 && j + 7 < w.jobs.size() && w.jobs[j].group == models::kNone) {
        std::string g = "g";
        g += std::to_string(groups++);
        // minMember 1: its first pod, small and long, runs alone (movable) until the second comes.
        in_group(w, j, g, 1);
        w.jobs[j].gpus = 1;
        w.jobs[j].runtime = 2 * sim::kHour;
        in_group(w, j + 7, g, 1);
        w.jobs[j + 7].queue = w.jobs[j].queue;
        w.jobs[j + 7].kind = w.jobs[j].kind;
      }
    }
    std::vector<std::pair<std::string, std::string>> kv;
    ht::kai_queue(kv, "q0", 24, 1, -1);
    ht::kai_queue(kv, "q1", 24, 2, -1);
    if (seed == 2) kv.emplace_back("queues.q1.preemptMinRuntime", "5m");
    auto policy = policies::make_policy("kai", ht::ordered_params(kv), seed);
    Counting audit;
    simulation::SimulationOptions options;
    options.seed = seed;
    models::RandomFailures random;
    random.mtbf = 3 * sim::kHour;
    random.repair = 20 * sim::kMinute;
    options.failures.random.push_back(random);
    simulation::Simulation sim(w, ht::cluster(8, 8), *policy, &audit, options);
    const auto stats = sim.run();
    std::int64_t preemptions = 0;
    for (JobIndex j = 0; j < w.jobs.size(); ++j) preemptions += sim.job_preemptions(j);
    EXPECT_GT(audit.consolidations, 20) << "seed " << seed;
    EXPECT_GT(sim.jobs_killed(), 0) << "seed " << seed;
    EXPECT_EQ(stats.fingerprint, fingerprint)
        << "seed " << seed << " preemptions " << preemptions << " consolidations " << audit.consolidations << " killed "
        << sim.jobs_killed() << " groups " << groups;
    EXPECT_EQ(audit.hash, events) << "seed " << seed;
  }
}

// Consolidation moves only pods of single-pod groups. Node 0 holds A (a 1-GPU pod of group g,
// preemptible) and X (4 GPUs, interactive: not movable), node 1 Y (5 GPUs, interactive). Q (5 GPUs)
// tries node 0 at t = 10 and fails (moving A frees 4); the second member of g comes at t = 20,
// nothing starts or ends on node 0 after; P (4 GPUs, t = 30) would fit node 0 with A moved to
// node 1, but A's group now has two pods: A stays. Without the second member, consolidation moves A.
TEST(KaiDecisions, ConsolidationSeesASecondMemberArrive) {
  for (const bool second : {true, false}) {
    ht::WorkloadBuilder b;
    b.job(0, 4, 10000);   // 0: X
    b.job(1, 1, 10000);   // 1: A
    b.job(2, 5, 10000);   // 2: Y
    b.job(10, 5, 10000);  // 3: Q
    b.job(20, 8, 10000);  // 4: the second member of A's group (or a lone pod)
    b.job(30, 4, 10000);  // 5: P
    auto w = b.build();
    for (JobIndex j = 0; j < w.jobs.size(); ++j)
      in_queue(w, j, "q", j == 0 || j == 2 ? models::JobKind::Interactive : models::JobKind::Train);
    in_group(w, 1, "g", 1);
    if (second) in_group(w, 4, "g", 1);
    std::vector<std::pair<std::string, std::string>> kv;
    ht::kai_queue(kv, "q", 16, 1, -1);
    const KaiRun run(w, ht::cluster(2, 8), ht::ordered_params(kv), 1000 * kSecond);
    ASSERT_TRUE(run.started(0) && run.started(1) && run.started(2));
    EXPECT_EQ(run.node(0), 0u);
    EXPECT_EQ(run.node(2), 1u);
    EXPECT_FALSE(run.started(3));
    if (second) {
      EXPECT_EQ(run.preemptions(1), 0);
      EXPECT_EQ(run.node(1), 0u);
      EXPECT_FALSE(run.started(5));
    } else {  // A moved to node 1, P in its place
      EXPECT_EQ(run.preemptions(1), 1);
      EXPECT_EQ(run.node(1), 1u);
      ASSERT_TRUE(run.started(5));
      EXPECT_EQ(run.node(5), 0u);
    }
  }
}

// The pending key's copy of a unit's single member (QNode::PendKey) is put back when a member is
// added that is refused at once: a gang of two whose second pod is larger than the cluster is no
// lone pod, and its first pod waits for the gang, not for a node, after a lone pod of its size
// failed in the same session.
TEST(KaiDecisions, GangWithARefusedMemberIsNoLonePod) {
  ht::WorkloadBuilder b;
  b.job(0, 8, 1000);    // fills the node
  b.job(5, 1, 1000);    // a lone 1-GPU pod: fails first in each session
  b.job(10, 1, 1000);   // the gang's first pod
  b.job(20, 16, 1000);  // the gang's second pod: more GPUs than the cluster has
  auto w = b.build();
  in_group(w, 2, "g", 2);
  in_group(w, 3, "g", 2);
  const std::vector<std::pair<std::string, std::string>> kv;
  const KaiRun run(w, ht::cluster(1, 8), ht::ordered_params(kv), 500 * kSecond);
  EXPECT_EQ(run.state(3), JobState::Rejected);
  EXPECT_FALSE(run.started(1));
  EXPECT_FALSE(run.started(2));
  EXPECT_EQ(run.reason(1).rfind("Unschedulable", 0), 0u) << run.reason(1);
  EXPECT_EQ(run.reason(2).rfind("gang:", 0), 0u) << run.reason(2);
}
