// The volcano policy: the acceptance scenarios V1-V5 of docs POLICIES.md section 2.8 with their
// exact outcomes (and the variants the section names), the tier rules, invariants over random
// gang workloads and the bundled RICC trace, and the policy block of a scenario file.
#include "policies/volcano/volcano.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/test_support.hpp"

using namespace headroom;
using headroom::testing::expect_one_error;
using headroom::testing::params;
using headroom::testing::replace;
using headroom::testing::scenario_errors;
using models::JobIndex;
using models::JobState;
using sim::kSecond;
namespace vc = policies::volcano;
namespace ht = headroom::testing;

namespace {

// Records the preemption audit events (reason and preemptor), rejections and the last "why
// pending" of each job.
class AuditObserver : public models::SimObserver {
 public:
  void on_event(sim::Tick t, models::AuditKind k, JobIndex j, std::int32_t detail, std::string_view reason) override {
    if (k == models::AuditKind::Preempt) preempts.push_back({sim::to_seconds(t), j, detail, std::string(reason)});
    if (k == models::AuditKind::Reject) rejects[j] = std::string(reason);
    if (k == models::AuditKind::Waiting && !reason.empty()) waiting[j] = std::string(reason);
  }
  void on_start(sim::Tick, JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample&) override {}
  struct Preempt {
    double time;
    JobIndex job;
    std::int32_t by;
    std::string reason;
  };
  std::vector<Preempt> preempts;
  std::map<JobIndex, std::string> rejects, waiting;
};

struct VRun {
  VRun(models::Workload workload, models::ClusterSpec cluster, const policies::PolicyParams& p = {})
      : w(std::move(workload)), c(std::move(cluster)), policy(policies::make_policy("volcano", p, 1)) {
    sim = std::make_unique<simulation::Simulation>(w, c, *policy, &audit);
    stats = sim->run();
  }
  double start(JobIndex j) const { return sim::to_seconds(sim->job_start(j)); }
  double end(JobIndex j) const { return sim::to_seconds(sim->job_end(j)); }
  models::NodeId node(JobIndex j) const { return sim->job_placement(j).at(0).node; }
  int preemptions(JobIndex j) const { return sim->job_preemptions(j); }
  JobState state(JobIndex j) const { return sim->job_state(j); }
  // Jobs in [first, last) whose first start is at `t` seconds.
  int started_at(JobIndex first, JobIndex last, double t) const {
    int n = 0;
    for (JobIndex j = first; j < last; ++j) n += start(j) == t;
    return n;
  }

  models::Workload w;
  models::ClusterSpec c;
  AuditObserver audit;
  std::unique_ptr<policies::Policy> policy;
  std::unique_ptr<simulation::Simulation> sim;
  simulation::SimulationStats stats;
};

// Makes jobs [first, last) one PodGroup with minMember `min`.
void group(models::Workload& w, JobIndex first, JobIndex last, const std::string& name, int min) {
  const auto id = w.groups.intern(name);
  for (JobIndex j = first; j < last; ++j) {
    w.jobs[j].group = id;
    w.jobs[j].gang_min = min;
  }
}

void queue(models::Workload& w, JobIndex first, JobIndex last, const std::string& name) {
  const auto id = w.queues.intern(name);
  for (JobIndex j = first; j < last; ++j) w.jobs[j].queue = id;
}

}  // namespace

// --- V1 --------------------------------------------------------------------------------------

TEST(Volcano, V1GangAllOrNothingOvercommitKeepsBPendingAndCPassesIt) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 6; ++i) b.job(0, 1, 100);  // A: 6 x 1 GPU, minAvailable 6
  for (int i = 0; i < 4; ++i) b.job(1, 1, 10);   // B: 4 x 1 GPU, minAvailable 4
  for (int i = 0; i < 2; ++i) b.job(2, 1, 50);   // C: 2 x 1 GPU, minAvailable 2
  auto w = b.build();
  group(w, 0, 6, "A", 6);
  group(w, 6, 10, "B", 4);
  group(w, 10, 12, "C", 2);
  const VRun r(w, ht::cluster(2, 4));
  for (JobIndex j = 0; j < 6; ++j) EXPECT_EQ(r.start(j), 0);
  EXPECT_EQ(r.node(0), 0u);
  EXPECT_EQ(r.node(3), 0u);
  EXPECT_EQ(r.node(4), 1u) << "A runs on node1 x4 and node2 x2";
  EXPECT_EQ(r.node(5), 1u);
  EXPECT_EQ(r.start(10), 2) << "C is Inqueue (2 <= 3.6) and both pods bind in the same session";
  EXPECT_EQ(r.start(11), 2);
  // B stays Pending (overcommit: 8 x 1.2 - 6 = 3.6 < 4), also after C ends at 52 (3.6 again),
  // and binds whole once A's 6 GPUs are free.
  for (JobIndex j = 6; j < 10; ++j) {
    EXPECT_EQ(r.start(j), 100) << j;
    EXPECT_EQ(r.state(j), JobState::Completed);
  }
  EXPECT_TRUE(r.audit.preempts.empty());
}

// --- V2 --------------------------------------------------------------------------------------

namespace {
models::Workload v2_workload() {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 40; ++i) b.job(0, 1, 100);
  auto w = b.build();
  queue(w, 0, 20, "q1");
  queue(w, 20, 40, "q2");
  return w;
}
}  // namespace

TEST(Volcano, V2DeservedFollowsWeightsWithoutMinResources) {
  const VRun r(v2_workload(), ht::cluster(1, 8),
               params({{"minResources", "none"}, {"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  // deserved Q1 = 8 * 1/4 = 2, Q2 = 6: steady allocation while both have demand.
  for (double t : {0.0, 100.0, 200.0}) {
    EXPECT_EQ(r.started_at(0, 20, t), 2) << "q1 at " << t;
    EXPECT_EQ(r.started_at(20, 40, t), 6) << "q2 at " << t;
  }
  // Q2's 20 jobs: 6, 6, 6, then 2 at 300; Q1 then takes the rest (deserved grows with demand).
  EXPECT_EQ(r.started_at(20, 40, 300), 2);
  EXPECT_EQ(r.started_at(0, 20, 300), 6);
}

TEST(Volcano, V2CautionWithMinResourcesQ1FillsOvercommitAndQ2Starves) {
  // minResources set and the pods created at submit (a PodGroup with minResources whose pods a
  // controller such as Kubeflow's training-operator creates at once): the Pending groups' tasks
  // count in their queues' requests, so deserved is Q1 2, Q2 6. Enqueue pops Q1 (older) first
  // while shares tie; Q1 puts 8 PodGroups Inqueue (proportion caps Q1 at 8), Q2 gets one (9 <= 9.6,
  // 10 > 9.6). Q1 can only allocate its deserved 2, so 3 of 8 GPUs run.
  const VRun r(v2_workload(), ht::cluster(1, 8),
               params({{"podsCreated", "submit"}, {"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  EXPECT_EQ(r.started_at(0, 20, 0), 2);
  EXPECT_EQ(r.started_at(20, 40, 0), 1) << "Q2 starves below its deserved 6";
  EXPECT_EQ(r.started_at(0, 40, 0), 3);
}

TEST(Volcano, V2WithVolcanoJobsThePendingGroupsAskForNothingAndInqueueQ1TakesTheIdleGpus) {
  // Volcano Jobs (podsCreated: inqueue, the default): the Job controller creates a job's pods only
  // once its PodGroup has left Pending, so at t=0 neither queue requests anything and both deserve
  // 0. Enqueue admits 8 Q1 groups and 1 Q2 group as above; with their tasks, water-filling gives
  // Q1 2 and Q2 6, Q2 is capped at its request 1 and the remaining 5 go to Q1: deserved 7 and 1.
  // Q2 still starves below 6 (the caution), but no GPU stays idle.
  const VRun r(v2_workload(), ht::cluster(1, 8), params({{"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  EXPECT_EQ(r.started_at(0, 20, 0), 7);
  EXPECT_EQ(r.started_at(20, 40, 0), 1) << "Q2 starves below its deserved 6";
  for (JobIndex j = 0; j < 40; ++j) EXPECT_EQ(r.state(j), JobState::Completed) << j;
}

TEST(Volcano, APendingVolcanoJobDoesNotHoldDeservedFromTheInqueueJobThatBlocksIt) {
  // One 8-GPU node, three queues of weight 1. X (q1, 4 GPUs) runs 0-50. A (q2, 5 GPUs) enters
  // Inqueue at 1 (5 <= 9.6 - 4) but does not fit. B (q3, 5 GPUs) stays Pending: overcommit
  // 5 + 5 > 9.6 - 4, and after X ends 5 + 5 > 9.6.
  ht::WorkloadBuilder b;
  b.job(0, 4, 50);
  b.job(1, 5, 50);
  b.job(2, 5, 10);
  auto w = b.build();
  queue(w, 0, 1, "q1");
  queue(w, 1, 2, "q2");
  queue(w, 2, 3, "q3");
  // Volcano Jobs: B has no pods while Pending, so once X ends q2 deserves A's 5 and A starts; B
  // enters at 100 when A's GPUs are free (5 <= 9.6).
  const VRun jobs(w, ht::cluster(1, 8));
  EXPECT_EQ(jobs.start(0), 0);
  EXPECT_EQ(jobs.start(1), 50);
  EXPECT_EQ(jobs.start(2), 100);
  // Pods created at submit: B's pending task asks for 5 in q3, water-filling splits the 8 GPUs
  // 4 / 4, A (5 > 4) is never Allocatable and B never passes overcommit while A is Inqueue: both
  // wait for ever, as proportion and overcommit would have them.
  const VRun pods(w, ht::cluster(1, 8), params({{"podsCreated", "submit"}}));
  EXPECT_EQ(pods.start(0), 0);
  EXPECT_EQ(pods.state(1), JobState::Unfinished);
  EXPECT_EQ(pods.state(2), JobState::Unfinished);
}

// --- V3 --------------------------------------------------------------------------------------

namespace {
models::Workload v3_workload() {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);  // Q1: one job, 8 x 1 GPU, minAvailable 1
  for (int i = 0; i < 6; ++i) b.job(10, 1, 500);  // Q2: six 1-GPU jobs
  auto w = b.build();
  group(w, 0, 8, "q1-job", 1);
  queue(w, 0, 8, "q1");
  queue(w, 8, 14, "q2");
  return w;
}
}  // namespace

TEST(Volcano, V3ReclaimBackToDeserved) {
  const VRun r(
      v3_workload(), ht::cluster(2, 4),
      params(
          {{"actions", "enqueue, allocate, reclaim, backfill"}, {"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(r.start(j), 0);
  // One Q2 job is Inqueue at a time (overcommit 9.6 - 8 = 1.6); each reclaims one Q1 task, which
  // leaves after its 30 s grace period; the job binds there and the next one enters.
  const double starts[] = {40, 70, 100, 130, 160, 190};
  for (JobIndex j = 8; j < 14; ++j) EXPECT_EQ(r.start(j), starts[j - 8]) << j;
  // Gang keeps at least 1 (tier 1 decides: gang and conformance); victims go highest pod index
  // first on the first node that works: node 0 (tasks 3..0), then node 1 (7, 6). Q1 keeps 4 and 5.
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(r.preemptions(j), (j == 4 || j == 5) ? 0 : 1) << j;
  ASSERT_EQ(r.audit.preempts.size(), 6u);
  EXPECT_EQ(r.audit.preempts[0].job, 3u);
  EXPECT_EQ(r.audit.preempts[0].by, 8);
  EXPECT_EQ(r.audit.preempts[0].time, 10);
  EXPECT_EQ(r.audit.preempts[0].reason, "volcano reclaim: victim's PodGroup keeps minMember (gang, conformance)");
  for (JobIndex j = 8; j < 14; ++j) EXPECT_EQ(r.state(j), JobState::Completed);
}

TEST(Volcano, V3PreemptiveCapsTheReclaimingQueueAtDeserved) {
  // Seven Q2 jobs: deserved Q2 = 6 (weights 1:3), so the seventh waits; Q1 keeps 2.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 7; ++i) b.job(10, 1, 500);
  auto w = b.build();
  group(w, 0, 8, "q1-job", 1);
  queue(w, 0, 8, "q1");
  queue(w, 8, 15, "q2");
  const VRun r(
      w, ht::cluster(2, 4),
      params(
          {{"actions", "enqueue, allocate, reclaim, backfill"}, {"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  int preempted = 0;
  for (JobIndex j = 0; j < 8; ++j) preempted += r.preemptions(j);
  EXPECT_EQ(preempted, 6) << "Q1 keeps 2 tasks";
  EXPECT_GE(r.start(14), 540) << "the seventh Q2 job waits for a Q2 job to end";
}

TEST(Volcano, V3WithoutReclaimQ2WaitsForQ1) {
  const VRun r(v3_workload(), ht::cluster(2, 4), params({{"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(r.preemptions(j), 0);
  EXPECT_EQ(r.start(8), 1000);
  EXPECT_TRUE(r.audit.preempts.empty());
}

TEST(Volcano, ReclaimFallsThroughToProportionWhenGangReturnsNoVictims) {
  // Q1's jobs are rigid (no group: minAvailable == #tasks), so gang admits no victim, tier 1
  // falls through and proportion (tier 2) evicts while Q1 is above its deserved.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 6; ++i) b.job(10, 1, 500);
  auto w = b.build();
  queue(w, 0, 8, "q1");
  queue(w, 8, 14, "q2");
  const VRun r(
      w, ht::cluster(2, 4),
      params(
          {{"actions", "enqueue, allocate, reclaim, backfill"}, {"queues.q1.weight", "1"}, {"queues.q2.weight", "3"}}));
  int preempted = 0;
  for (JobIndex j = 0; j < 8; ++j) preempted += r.preemptions(j) > 0;
  EXPECT_EQ(preempted, 6);
  ASSERT_FALSE(r.audit.preempts.empty());
  EXPECT_EQ(r.audit.preempts[0].reason, "volcano reclaim: queue q1 above deserved (proportion)");
  EXPECT_EQ(r.start(13), 190);
}

// --- V4 --------------------------------------------------------------------------------------

namespace {
models::Workload v4_workload() {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 4; ++i) b.job(0, 1, 1000);  // L: 4 x 1 GPU, minAvailable 1
  b.job(10, 2, 100);                              // H: 1 task x 2 GPU
  auto w = b.build();
  group(w, 0, 4, "L", 1);
  w.jobs[4].priority = 100;
  return w;
}
}  // namespace

TEST(Volcano, V4WithinQueuePriorityPreemptionEvictsExactlyTwo) {
  const VRun r(v4_workload(), ht::cluster(1, 4),
               params({{"actions", "enqueue, allocate, preempt, backfill"}, {"minResources", "none"}}));
  EXPECT_EQ(r.preemptions(3), 1) << "highest pod index first";
  EXPECT_EQ(r.preemptions(2), 1);
  EXPECT_EQ(r.preemptions(1), 0) << "L keeps running with 2 tasks";
  EXPECT_EQ(r.preemptions(0), 0);
  EXPECT_EQ(r.start(4), 40) << "H binds once the victims' 30 s grace period is over";
  EXPECT_EQ(r.end(0), 1000);
  ASSERT_EQ(r.audit.preempts.size(), 2u);
  EXPECT_EQ(r.audit.preempts[0].by, 4);
  EXPECT_EQ(r.audit.preempts[0].reason, "volcano preempt: lower priority than job 4 (priority, conformance)");
}

TEST(Volcano, V4WithMinResourcesOvercommitKeepsHPendingSoNothingIsPreempted) {
  // A Volcano Job's minResources (2 GPUs) against overcommit: 4 x 1.2 - 4 = 0.8, so H never gets
  // Inqueue and preempt skips Pending PodGroups (volcano#2337-style "preempt does not work").
  const VRun r(v4_workload(), ht::cluster(1, 4), params({{"actions", "enqueue, allocate, preempt, backfill"}}));
  for (JobIndex j = 0; j < 4; ++j) EXPECT_EQ(r.preemptions(j), 0);
  EXPECT_EQ(r.start(4), 1000);
}

TEST(Volcano, GangEnablePreemptableDecidesWhetherTheVictimsGangMayBreak) {
  // L with minAvailable 3. The Helm tiers switch gang off for preemption (enablePreemptable:
  // false), so priority and conformance decide: 2 victims, L falls below its minAvailable.
  auto w = v4_workload();
  for (JobIndex j = 0; j < 4; ++j) w.jobs[j].gang_min = 3;
  const auto actions = std::pair<std::string, std::string>{"actions", "enqueue, allocate, preempt, backfill"};
  const VRun helm(w, ht::cluster(1, 4), params({actions, {"minResources", "none"}}));
  EXPECT_EQ(helm.preemptions(3) + helm.preemptions(2), 2);
  EXPECT_EQ(helm.start(4), 40);
  // With gang's Preemptable on, tier 1 is priority ∩ gang ∩ conformance = one task (4 > 3), which
  // cannot make room for 2 GPUs, so nothing is evicted and H waits.
  const VRun gang(w, ht::cluster(1, 4),
                  params({actions,
                          {"minResources", "none"},
                          {"tiers", "[[priority, gang, conformance], [overcommit, drf, proportion]]"}}));
  for (JobIndex j = 0; j < 4; ++j) EXPECT_EQ(gang.preemptions(j), 0) << j;
  EXPECT_EQ(gang.start(4), 1000);
}

TEST(Volcano, DrfPreemptsForTheLowerShareWhenPriorityAbstainsAndTier1FallsThrough) {
  // Equal priorities: priority admits no victim, so tier 1 is nil and tier 2 decides. In the Helm
  // tiers drf is switched off for preemption (nothing is evicted); switched on, B (share 1/8 after
  // its request) may take a task from A (7/8 after removal).
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);
  b.job(10, 1, 100);
  auto w = b.build();
  group(w, 0, 8, "A", 1);
  const auto actions = std::pair<std::string, std::string>{"actions", "enqueue, allocate, preempt, backfill"};
  const VRun helm(w, ht::cluster(1, 8), params({actions}));
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(helm.preemptions(j), 0);
  EXPECT_EQ(helm.start(8), 1000);
  const VRun drf(w, ht::cluster(1, 8),
                 params({actions, {"tiers", "[[priority, gang, conformance], [overcommit, drf, proportion]]"}}));
  EXPECT_EQ(drf.preemptions(7), 1) << "highest pod index first";
  for (JobIndex j = 0; j < 7; ++j) EXPECT_EQ(drf.preemptions(j), 0);
  EXPECT_EQ(drf.start(8), 40);
  ASSERT_EQ(drf.audit.preempts.size(), 1u);
  EXPECT_EQ(drf.audit.preempts[0].reason, "volcano preempt: higher dominant share than the preemptor's (drf)");
}

TEST(Volcano, PreemptIsOffByDefault) {
  const VRun r(v4_workload(), ht::cluster(1, 4), params({{"minResources", "none"}}));
  for (JobIndex j = 0; j < 4; ++j) EXPECT_EQ(r.preemptions(j), 0);
  EXPECT_EQ(r.start(4), 1000);
}

// --- V5 --------------------------------------------------------------------------------------

namespace {
models::Workload v5_workload() {
  ht::WorkloadBuilder b;
  b.job(0, 3, 1000);                              // F1
  b.job(0, 1, 50);                                // F2: frees 1 GPU at 50
  for (int i = 0; i < 3; ++i) b.job(1, 1, 1000);  // A holds 3
  b.job(2, 1, 1000);                              // B holds 1
  b.job(3, 1, 100);                               // A's pending task
  b.job(3, 1, 100);                               // B's pending task
  auto w = b.build();
  const auto a = w.groups.intern("A"), bg = w.groups.intern("B");
  for (JobIndex j : {2u, 3u, 4u, 6u}) w.jobs[j].group = a, w.jobs[j].gang_min = 1;
  for (JobIndex j : {5u, 7u}) w.jobs[j].group = bg, w.jobs[j].gang_min = 1;
  return w;
}
}  // namespace

TEST(Volcano, V5DrfGivesTheFreedGpuToTheLowerDominantShare) {
  const VRun r(v5_workload(), ht::cluster(1, 8));
  EXPECT_EQ(r.start(7), 50) << "B (1/8) before A (3/8)";
  EXPECT_EQ(r.start(6), 150) << "A's task waits for B's to end";
  // Without drf the fallback (creation time) puts A first.
  const VRun no_drf(v5_workload(), ht::cluster(1, 8),
                    params({{"tiers", "[[priority, gang, conformance], [overcommit, predicates, proportion]]"}}));
  EXPECT_EQ(no_drf.start(6), 50);
  EXPECT_EQ(no_drf.start(7), 150);
}

// --- sessions and tiers ------------------------------------------------------------------------

TEST(Volcano, SessionsRunOnTheSchedulePeriod) {
  auto w = ht::WorkloadBuilder().job(0.2, 1, 10).job(3.5, 1, 10).build();
  const VRun r(w, ht::cluster(1, 8));
  EXPECT_EQ(r.start(0), 1);
  EXPECT_EQ(r.start(1), 4);
  const VRun slow(w, ht::cluster(1, 8), params({{"schedule-period", "5s"}}));
  EXPECT_EQ(slow.start(0), 5);
  EXPECT_EQ(slow.start(1), 5);
}

TEST(Volcano, ClosedQueueDoesNotAllocate) {
  auto w = ht::WorkloadBuilder().job(0, 1, 10).job(0, 1, 10).build();
  queue(w, 1, 2, "closed");
  const VRun r(w, ht::cluster(1, 8), params({{"queues.closed.state", "Closed"}}));
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.state(1), JobState::Unfinished);
}

TEST(Volcano, CapabilityCapsTheQueue) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 6; ++i) b.job(0, 1, 100);
  const VRun r(b.build(), ht::cluster(1, 8), params({{"queues.default.capability.nvidia.com/gpu", "4"}}));
  EXPECT_EQ(r.started_at(0, 6, 0), 4);
  EXPECT_EQ(r.started_at(0, 6, 100), 2);
}

TEST(Volcano, RigidJobTakesAllItsNodesAtOnce) {
  // A 12-GPU job without a group on 8-GPU nodes: two tasks (8 + 4), all or nothing.
  auto w = ht::WorkloadBuilder().job(0, 6, 100).job(1, 12, 10).job(2, 2, 10).build();
  const VRun r(w, ht::cluster(2, 8));
  EXPECT_EQ(r.start(1), 100);
  EXPECT_EQ(r.sim->job_placement(1).size(), 2u);
  EXPECT_EQ(r.start(2), 2) << "no FIFO: the small job passes the big one";
}

TEST(Volcano, BinpackWithGpuWeightPacksNodes) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(1, 1, 100).build();
  // Default binpack ignores GPUs: every node scores 0 and the lowest index wins.
  const VRun plain(w, ht::cluster(2, 8));
  EXPECT_EQ(plain.node(1), 0u);
  const VRun packed(
      w, ht::cluster(2, 8),
      params({{"tiers",
               "[{plugins: [{name: priority}, {name: gang}]}, {plugins: [{name: proportion}, {name: binpack, "
               "arguments: {binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 5}}]}]"}}));
  EXPECT_EQ(packed.node(1), 0u);
}

TEST(Volcano, BinpackAndLeastRequestedPullInOppositeDirections) {
  // cpu and memory modelled: for the second pod, binpack scores node 0 12.5 (node 1: 6.25),
  // leastrequested 87 (93), balancedresource 100 on both: 199.5 against 199.25, so it packs.
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(1, 1, 100).build();
  for (auto& j : w.jobs) {
    j.cpus = 4;
    j.memory_mib = 16 * 1024;
  }
  models::ClusterSpec c;
  c.pools.push_back({"pool", 2, 8, "A100", 64, 256});
  const VRun helm(w, c);
  EXPECT_EQ(helm.node(1), 0u);
  // leastrequested weight 2: 286.5 against 292.25, so it spreads.
  const VRun spread(w, c,
                    params({{"tiers",
                             "[{plugins: [{name: priority}, {name: gang}]}, {plugins: [{name: proportion}, "
                             "{name: nodeorder, arguments: {leastrequested.weight: 2}}, {name: binpack}]}]"}}));
  EXPECT_EQ(spread.node(1), 1u);
}

namespace {
// Forwards to the volcano policy and counts its scheduling passes.
class CountingPolicy final : public policies::Policy {
 public:
  explicit CountingPolicy(std::unique_ptr<policies::Policy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  void on_submit(const policies::ClusterView& v, JobIndex j) override { inner_->on_submit(v, j); }
  void on_end(const policies::ClusterView& v, JobIndex j) override { inner_->on_end(v, j); }
  void on_requeue(const policies::ClusterView& v, JobIndex j) override { inner_->on_requeue(v, j); }
  void on_release(const policies::ClusterView& v, JobIndex j) override { inner_->on_release(v, j); }
  void schedule(policies::Session& s) override {
    ++passes;
    inner_->schedule(s);
  }
  int passes = 0;

 private:
  std::unique_ptr<policies::Policy> inner_;
};
}  // namespace

TEST(Volcano, NoIdleSessionsWhileNothingCanChange) {
  // A 16-GPU rigid job on one 8-GPU node fits nowhere; a 1-GPU job runs 10,000 s. Sessions run
  // only after events (and once after a session that changed something), not every second.
  const auto w = ht::WorkloadBuilder().job(0, 1, 10000).job(5, 16, 10).build();
  const auto c = ht::cluster(1, 8);
  CountingPolicy p(policies::make_policy("volcano", {}, 1));
  simulation::Simulation sim(w, c, p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
  EXPECT_EQ(sim.job_state(1), JobState::Unfinished);
  EXPECT_LE(p.passes, 10);
}

// --- sla (plugins/sla/sla.go) -----------------------------------------------------------------
// One 8-GPU node. A (2 GPUs) runs 0-1000 s; G, eight 1-GPU pods with minMember 8, comes at 1 s;
// S0..S14 (1 GPU, 300 s each) come every 100 s from 10 s to 1410 s, keeping 3 GPUs busy. G needs
// the whole node at one session: without sla it starts only when the stream has gone (S14 ends at
// 1710 s). sla-waiting-time is 60 s.

namespace {
models::Workload sla_workload() {
  ht::WorkloadBuilder b;
  b.job(0, 2, 1000);                                         // A
  for (int i = 0; i < 8; ++i) b.job(1, 1, 100);              // G: jobs 1..8
  for (int k = 0; k < 15; ++k) b.job(10 + 100 * k, 1, 300);  // S0..S14: jobs 9..23
  auto w = b.build();
  group(w, 1, 9, "G", 8);
  return w;
}
constexpr JobIndex kS1 = 10;
const std::string kSlaArg = "{name: sla, arguments: {sla-waiting-time: 60s}}";
}  // namespace

TEST(VolcanoSla, AGlobalWaitingTimePermitsEveryJobSoTheStreamOnlyShifts) {
  // Default tiers: proportion's capability refuses G at enqueue while 8 + the 3 GPUs in use exceed
  // the queue's 8, which the stream keeps up; G enters at 1610 (1 GPU used) and binds at 1710.
  const VRun plain(sla_workload(), ht::cluster(1, 8));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(plain.start(j), 1710) << j;
  EXPECT_EQ(plain.start(kS1), 110);
  EXPECT_EQ(plain.audit.waiting.at(1), "volcano enqueue: queue default would exceed its capability (proportion)");
  // sla in the first tier with priority and gang, as Volcano's sla guide lists it. At 61 s G has
  // waited 60 s and sla's Permit admits it (overcommit and proportion, in the second tier, are not
  // asked). Its 8 GPUs now count as Inqueue, so overcommit refuses S1 (8 + 1 > 9.6 - 3), but the
  // waiting time is every job's: S1 is admitted at 170 s, 60 s after it came, and each later S
  // likewise. Allocate gives the free GPUs to S, since gang discards G's tasks while fewer than
  // 8 fit: the stream shifts by 60 s and G binds when its last job ends, at 1770 s.
  const VRun sla(sla_workload(), ht::cluster(1, 8),
                 params({{"tiers", "[[priority, gang, conformance, " + kSlaArg +
                                       "], [overcommit, drf, predicates, proportion, nodeorder, binpack]]"}}));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(sla.start(j), 1770) << j;
  EXPECT_EQ(sla.start(kS1), 170);
  EXPECT_EQ(sla.start(9), 10);  // S0 came before G was admitted
  EXPECT_EQ(sla.start(23), 1470);
  EXPECT_EQ(sla.audit.waiting.at(kS1),
            "volcano enqueue: overcommit: inqueue minResources + this PodGroup's exceed total x overcommit-factor - "
            "used (nvidia.com/gpu)");
}

TEST(VolcanoSla, TheAnnotationOnTheWideJobAloneReservesItsRoom) {
  // The Job annotation sla-waiting-time on the PodGroups of 8 GPUs or more: G only. sla beside
  // gang as in Volcano's guide: at 61 s G is admitted, and its Inqueue claim makes overcommit
  // refuse every S (8 + 1 > 9.6 - used), which no permit lets in now; the node drains, and G binds
  // at 1,000 s when A ends. S1 is admitted once G runs and starts when G ends.
  const VRun r(sla_workload(), ht::cluster(1, 8),
               params({{"tiers",
                        "[[priority, gang, conformance, sla], [overcommit, drf, predicates, proportion, "
                        "nodeorder, binpack]]"},
                       {"slaAnnotation.waitingTime", "60s"},
                       {"slaAnnotation.minGpus", "8"}}));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(r.start(j), 1000) << j;
  EXPECT_EQ(r.start(9), 10);
  EXPECT_EQ(r.start(kS1), 1100);
  // Without the sla plugin in the tiers the annotation is read by nothing.
  const VRun off(sla_workload(), ht::cluster(1, 8),
                 params({{"slaAnnotation.waitingTime", "60s"}, {"slaAnnotation.minGpus", "8"}}));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(off.start(j), 1710) << j;
}

TEST(VolcanoSla, ThePipelinedPermitHoldsIdleGpusOnlyFromATierBeforeGangs) {
  // Without overcommit, proportion's capability refuses G at enqueue as above: G binds at 1710.
  const std::string rest = "[drf, predicates, proportion, nodeorder, binpack]";
  const VRun plain(sla_workload(), ht::cluster(1, 8),
                   params({{"tiers", "[[priority, gang, conformance], " + rest + "]"}}));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(plain.start(j), 1710) << j;
  // sla in gang's tier: gang's Reject wins over sla's Permit within a tier (JobPipelined), so G
  // holds nothing; admitted at 61 s, it makes proportion refuse each S until that S's own 60 s are
  // up, and binds after the shifted stream, at 1770 s.
  const VRun same(sla_workload(), ht::cluster(1, 8),
                  params({{"tiers", "[[priority, gang, conformance, " + kSlaArg + "], " + rest + "]"}}));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(same.start(j), 1770) << j;
  EXPECT_EQ(same.start(kS1), 170);
  // sla in a tier of its own before gang's: from 61 s G is pipelined with what fits (5 GPUs, then
  // more as S0 ends) and, first in JobOrder (sla's: creation + waiting time), holds it each
  // session, so S1 and the later jobs wait; at 1000 s A ends and G binds whole.
  const VRun first(sla_workload(), ht::cluster(1, 8),
                   params({{"tiers", "[[" + kSlaArg + "], [priority, gang, conformance], " + rest + "]"}}));
  for (JobIndex j = 1; j <= 8; ++j) EXPECT_EQ(first.start(j), 1000) << j;
  EXPECT_EQ(first.start(kS1), 1100);
  EXPECT_EQ(first.start(9), 10);
}

// Allocate parks a PodGroup whose every task proportion refused (Group::park) while its queue's
// allocated plus the least request stays above deserved. On the bundled RICC sample with sla
// beside gang (every job Inqueue after an hour) that skips about 666,000 tries; the fingerprint is
// the one the code before any such memo gave (a1ed2b6).
TEST(VolcanoSla, ProportionRefusalMemoDecidesAsBefore) {
  const auto sc =
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-volcano.yaml");
  const auto w = scenarios::build_workload(sc);
  auto policy =
      policies::make_policy("volcano",
                            params({{"tiers",
                                     "[[priority, gang, conformance, {name: sla, arguments: {sla-waiting-time: 1h}}], "
                                     "[overcommit, drf, predicates, proportion, nodeorder, binpack]]"},
                                    {"queues.queue1.weight", "1"},
                                    {"queues.queue2.weight", "1"}}),
                            1);
  simulation::Simulation sim(w, sc.cluster, *policy, nullptr);
  const auto stats = sim.run();
  EXPECT_EQ(stats.fingerprint, "d3cd102c9df8fcb2");
}

// The parks on a generated workload (tests/data/scenarios/volcano-parks.yaml: gangs whose members ask
// for GPUs, CPUs and memory in different mixes, some for none of a dimension, in three weighted
// queues, with a global sla waiting time) checked against the code before them (a1ea086), with
// preempt and reclaim after allocate (parks dropped as the evictions touch their groups) and with
// reclaim alone (about 2,900 offers: 1,350 refused in their turn, 1,500 woken; 34 moves to another
// witness dimension).
TEST(VolcanoSla, ParkedGroupsDecideAsTryingThemEverySession) {
  const auto sc =
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios/volcano-parks.yaml");
  const auto w = scenarios::build_workload(sc);
  ASSERT_EQ(w.jobs.size(), 607u);
  for (const auto& [actions, fingerprint] :
       {std::pair<std::string, std::string>{"enqueue, allocate, preempt, reclaim, backfill", "a86b673371a2b4e7"},
        {"enqueue, allocate, reclaim, backfill", "7ff6bd62d8cd1224"}}) {
    auto p = sc.policy.params;
    p["actions"].text = actions;
    auto policy = policies::make_policy("volcano", p, sc.seed);
    simulation::Simulation sim(w, sc.cluster, *policy, nullptr);
    EXPECT_EQ(sim.run().fingerprint, fingerprint) << actions;
  }
}

TEST(VolcanoSla, WaitingTimeIsAGoDuration) {
  std::vector<sim::InputError> errors;
  vc::check_params(params({{"tiers", "[[{name: sla, arguments: {sla-waiting-time: 1h2m3s4ms5us6ns}}], [gang]]"}}),
                   errors);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front().what());
  for (const std::string bad : {"60", "-1h", "0s", "1d", "soon"}) {
    errors.clear();
    vc::check_params(params({{"tiers", "[[{name: sla, arguments: {sla-waiting-time: " + bad + "}}], [gang]]"}}),
                     errors);
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_NE(std::string(errors[0].what()).find("expected a positive Go duration"), std::string::npos)
        << errors[0].what();
  }
  errors.clear();
  vc::check_params(params({{"slaAnnotation.waitingTime", "a day"}}), errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(std::string(errors[0].what()).find("expected a positive Go duration"), std::string::npos);
  errors.clear();
  vc::check_params(params({{"tiers", "[[{name: gang, arguments: {sla-waiting-time: 1h}}]]"}}), errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(std::string(errors[0].what()).find("an argument of the sla plugin"), std::string::npos);
}

// --- capacity plugin and hierarchical queues ----------------------------------------------------
// Tiers as docs/user-guide/how_to_use_capacity_plugin.md (capacity in place of proportion, no
// overcommit). Jobs without a group are rigid PodGroups, so gang (tier 1) admits no reclaim victim
// and capacity (tier 2) decides.

namespace {
const std::string kCapacityTiers = "[[priority, gang, conformance], [drf, predicates, capacity, nodeorder, binpack]]";
const std::string kHierarchyTiers =
    "[[priority, gang, conformance], [drf, predicates, {name: capacity, enableHierarchy: true}, nodeorder, binpack]]";
const std::pair<std::string, std::string> kReclaim{"actions", "enqueue, allocate, reclaim, backfill"};
}  // namespace

TEST(VolcanoCapacity, BorrowedGpusAreReclaimedExactlyBackToDeserved) {
  // 8 GPUs, deserved 4 / 4. q1 borrows all 8 while q2 is idle; q2's arrival reclaims one q1 task
  // per q2 task while q1's allocated (less the victims so far) is above 4, and Preemptive stops q2
  // at its deserved 4 (allocated + 1 <= 4 fails for the fifth job).
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 5; ++i) b.job(10, 1, 500);
  auto w = b.build();
  queue(w, 0, 8, "q1");
  queue(w, 8, 13, "q2");
  const VRun r(w, ht::cluster(2, 4),
               params({kReclaim,
                       {"tiers", kCapacityTiers},
                       {"queues.q1.deserved.nvidia.com/gpu", "4"},
                       {"queues.q2.deserved.nvidia.com/gpu", "4"}}));
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(r.start(j), 0) << "q1 borrows the idle GPUs (realCapability 8)";
  // Victims on node 0 (the first node that works), highest pod index first; they leave after the
  // 30 s grace period and the pipelined q2 tasks bind at 40.
  ASSERT_EQ(r.audit.preempts.size(), 4u);
  const JobIndex victims[] = {3, 2, 1, 0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.audit.preempts[i].time, 10);
    EXPECT_EQ(r.audit.preempts[i].job, victims[i]);
    EXPECT_EQ(r.audit.preempts[i].by, 8 + i);
    EXPECT_EQ(r.audit.preempts[i].reason, "volcano reclaim: queue q1 above deserved (capacity)");
  }
  for (JobIndex j = 4; j < 8; ++j) EXPECT_EQ(r.preemptions(j), 0) << "q1 keeps its deserved 4";
  for (JobIndex j = 8; j < 12; ++j) EXPECT_EQ(r.start(j), 40) << j;
  // The fifth q2 job waits for q2's own jobs (540); the requeued q1 tasks then take the other
  // three free GPUs (q2's share 1/4 is below q1's 4/4, so q2 goes first) and the last one waits
  // for q1's running tasks (1000).
  EXPECT_EQ(r.start(12), 540);
  EXPECT_EQ(r.end(0), 1540);
  EXPECT_EQ(r.end(2), 1540);
  EXPECT_EQ(r.end(3), 2000);
}

TEST(VolcanoCapacity, CapabilityCapsTheQueueEvenWithIdleGpus) {
  // capability 3 on 8 idle GPUs: enqueue admits three (minResources + allocated + inqueue <= 3), the
  // other two wait until they end. With minResources none, Allocatable caps instead.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 5; ++i) b.job(0, 1, 100);
  auto w = b.build();
  queue(w, 0, 5, "q1");
  const auto p = std::map<std::string, std::string>{{"tiers", kCapacityTiers},
                                                    {"queues.q1.deserved.nvidia.com/gpu", "2"},
                                                    {"queues.q1.capability.nvidia.com/gpu", "3"}};
  const VRun r(w, ht::cluster(1, 8), params(p));
  EXPECT_EQ(r.started_at(0, 5, 0), 3);
  EXPECT_EQ(r.started_at(0, 5, 100), 2);
  EXPECT_EQ(r.audit.waiting.at(3), "volcano enqueue: queue q1 would exceed its capability (capacity)");
  auto none = p;
  none["minResources"] = "none";
  const VRun n(w, ht::cluster(1, 8), params(none));
  EXPECT_EQ(n.started_at(0, 5, 0), 3);
  EXPECT_EQ(n.started_at(0, 5, 100), 2);
  EXPECT_EQ(n.audit.waiting.at(3), "volcano allocate: queue q1 would exceed its capability (capacity)");
}

TEST(VolcanoCapacity, GuaranteeIsKeptFromOtherQueuesEvenWhenIdle) {
  // Flat: realCapability(q2) = max(0, 8 - Σ guarantee 4) + 0 = 4, so q2 leaves q1's guaranteed
  // GPUs idle although q1 has no jobs.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 100);
  auto w = b.build();
  queue(w, 0, 8, "q2");
  const VRun r(w, ht::cluster(1, 8),
               params({{"tiers", kCapacityTiers},
                       {"queues.q1.deserved.nvidia.com/gpu", "4"},
                       {"queues.q1.guarantee.resource.nvidia.com/gpu", "4"},
                       {"queues.q2.deserved.nvidia.com/gpu", "4"}}));
  EXPECT_EQ(r.started_at(0, 8, 0), 4);
  EXPECT_EQ(r.started_at(0, 8, 100), 4);
}

TEST(VolcanoCapacity, GuaranteeProtectsAVictimQueueAboveItsDeserved) {
  // Hierarchical (the root's realCapability is unlimited, so q1's guarantee does not cap q2): q1
  // (deserved 3) runs four 2-GPU jobs; q2 (deserved 6) reclaims for three 2-GPU jobs. Victims 1
  // and 0 are taken (8 > 3, 6 > 3); for the third, q1 is at 4 > 3 but 4 - 2 < guarantee 3.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 4; ++i) b.job(0, 2, 1000);
  for (int i = 0; i < 3; ++i) b.job(10, 2, 500);
  auto w = b.build();
  queue(w, 4, 7, "q2");  // created first: wins share ties (QueueOrder's fallback)
  queue(w, 0, 4, "q1");
  auto p = std::map<std::string, std::string>{kReclaim,
                                              {"tiers", kHierarchyTiers},
                                              {"queues.q1.deserved.nvidia.com/gpu", "3"},
                                              {"queues.q1.guarantee.resource.nvidia.com/gpu", "3"},
                                              {"queues.q2.deserved.nvidia.com/gpu", "6"}};
  const VRun r(w, ht::cluster(2, 4), params(p));
  EXPECT_EQ(r.preemptions(1), 1);
  EXPECT_EQ(r.preemptions(0), 1);
  EXPECT_EQ(r.preemptions(2), 0);
  EXPECT_EQ(r.preemptions(3), 0) << "q1 keeps its guarantee";
  EXPECT_EQ(r.start(4), 40);
  EXPECT_EQ(r.start(5), 40);
  EXPECT_EQ(r.start(6), 540) << "waits for q2's own jobs";
  // Without the guarantee the third victim (on node 1) is taken too and q1 drops to 2, below its
  // deserved. At 40, q2 (4/6) and q1 (2/3) tie on share and q2 goes first, so job 6 binds.
  p.erase("queues.q1.guarantee.resource.nvidia.com/gpu");
  const VRun g(w, ht::cluster(2, 4), params(p));
  EXPECT_EQ(g.preemptions(3), 1);
  EXPECT_EQ(g.preemptions(2), 0);
  EXPECT_EQ(g.start(6), 40);
}

namespace {
// root -> dept-a (deserved 4) -> {team-1 (2), team-2 (2)}; root -> dept-b (4).
std::map<std::string, std::string> tree_params() {
  return {kReclaim,
          {"tiers", kHierarchyTiers},
          {"queues.dept-a.deserved.nvidia.com/gpu", "4"},
          {"queues.team-1.parent", "dept-a"},
          {"queues.team-1.deserved.nvidia.com/gpu", "2"},
          {"queues.team-2.parent", "dept-a"},
          {"queues.team-2.deserved.nvidia.com/gpu", "2"},
          {"queues.dept-b.deserved.nvidia.com/gpu", "4"}};
}
}  // namespace

TEST(VolcanoCapacity, TwoLevelTreeTeamBorrowsFromTheOtherDepartmentAndIsReclaimed) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);  // team-1: all 8 GPUs
  for (int i = 0; i < 4; ++i) b.job(10, 1, 500);  // dept-b: its deserved 4
  for (int i = 0; i < 2; ++i) b.job(60, 1, 300);  // team-2: its deserved 2
  b.job(60, 1, 10);                               // submitted to dept-a, not a leaf
  b.job(60, 1, 10);                               // submitted to root
  auto w = b.build();
  queue(w, 0, 8, "team-1");
  queue(w, 8, 12, "dept-b");
  queue(w, 12, 14, "team-2");
  queue(w, 14, 15, "dept-a");
  queue(w, 15, 16, "root");
  const VRun r(w, ht::cluster(2, 4), params(tree_params()));
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(r.start(j), 0);
  // t=10: dept-b goes first (QueueOrder of two leaves compares dept-a's share 8/4 with dept-b's
  // 0/4) and reclaims 4 of team-1's tasks on node 0 (team-1 above its deserved 2); at 40 they
  // have left and dept-b binds (its share stays at or below dept-a's 4/4 while it allocates).
  // t=60: team-2 reclaims from its sibling down to team-1's deserved 2 (4 > 2, 3 > 2; not 2 > 2):
  // dept-b on node 0 is not above its deserved 4, so tasks 7 and 6 on node 1; they bind at 90.
  ASSERT_EQ(r.audit.preempts.size(), 6u);
  const JobIndex victims[] = {3, 2, 1, 0, 7, 6};
  const std::int32_t by[] = {8, 9, 10, 11, 12, 13};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r.audit.preempts[i].time, i < 4 ? 10 : 60) << i;
    EXPECT_EQ(r.audit.preempts[i].job, victims[i]) << i;
    EXPECT_EQ(r.audit.preempts[i].by, by[i]) << i;
    EXPECT_EQ(r.audit.preempts[i].reason, "volcano reclaim: queue team-1 above deserved (capacity)");
  }
  EXPECT_EQ(r.preemptions(4), 0);
  EXPECT_EQ(r.preemptions(5), 0);
  for (JobIndex j = 8; j < 12; ++j) EXPECT_EQ(r.start(j), 40) << j;
  EXPECT_EQ(r.start(12), 90);
  EXPECT_EQ(r.start(13), 90);
  // Only leaf queues hold jobs (the Job admission webhook).
  EXPECT_EQ(r.state(14), JobState::Rejected);
  EXPECT_EQ(r.audit.rejects.at(14),
            "volcano admission: can only submit job to leaf queue, queue `dept-a` has 2 child queues");
  EXPECT_EQ(r.state(15), JobState::Rejected);
  EXPECT_EQ(r.audit.rejects.at(15), "volcano admission: can not submit job to root queue");
}

TEST(VolcanoCapacity, VictimsComeFirstFromTheQueueSharingTheDeeperAncestor) {
  // team-2 reclaims one GPU on a node shared by its sibling team-1 (no deserved: its tasks are
  // immediate victims) and by dept-b (2 > deserved 1). VictimQueueOrderFn puts team-1 (common
  // ancestor dept-a) before dept-b (common ancestor root), so team-1's task 1 goes, although by
  // reverse QueueOrder dept-b (share 2/1 against dept-a's 2/2) would come first.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 4; ++i) b.job(0, 1, 1000);
  b.job(10, 1, 100);
  auto w = b.build();
  queue(w, 0, 2, "team-1");
  queue(w, 2, 4, "dept-b");
  queue(w, 4, 5, "team-2");
  const VRun r(w, ht::cluster(1, 4),
               params({kReclaim,
                       {"tiers", kHierarchyTiers},
                       {"queues.dept-a.deserved.nvidia.com/gpu", "2"},
                       {"queues.team-1.parent", "dept-a"},
                       {"queues.team-2.parent", "dept-a"},
                       {"queues.team-2.deserved.nvidia.com/gpu", "2"},
                       {"queues.dept-b.deserved.nvidia.com/gpu", "1"}}));
  ASSERT_EQ(r.audit.preempts.size(), 1u);
  EXPECT_EQ(r.audit.preempts[0].job, 1u);
  EXPECT_EQ(r.audit.preempts[0].reason, "volcano reclaim: queue team-1 above deserved (capacity)");
  EXPECT_EQ(r.start(4), 40);
}

TEST(VolcanoCapacity, AParentsCapabilityBoundsItsChildren) {
  // dept-a capability 4; its children set none and inherit 4. team-1 runs 3, so team-2's second
  // job would take dept-a to 5: enqueue (and, without minResources, Allocatable) refuse it.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 3; ++i) b.job(0, 1, 100);
  for (int i = 0; i < 2; ++i) b.job(1, 1, 100);
  auto w = b.build();
  queue(w, 0, 3, "team-1");
  queue(w, 3, 5, "team-2");
  auto p = std::map<std::string, std::string>{{"tiers", kHierarchyTiers},
                                              {"queues.dept-a.capability.nvidia.com/gpu", "4"},
                                              {"queues.team-1.parent", "dept-a"},
                                              {"queues.team-2.parent", "dept-a"}};
  const VRun r(w, ht::cluster(1, 8), params(p));
  EXPECT_EQ(r.started_at(0, 3, 0), 3);
  EXPECT_EQ(r.start(3), 1);
  EXPECT_EQ(r.start(4), 100);
  EXPECT_EQ(r.audit.waiting.at(4),
            "volcano enqueue: queue team-2's ancestor dept-a would exceed its capability (capacity)");
  p["minResources"] = "none";
  const VRun n(w, ht::cluster(1, 8), params(p));
  EXPECT_EQ(n.start(3), 1);
  EXPECT_EQ(n.start(4), 100);
  EXPECT_EQ(n.audit.waiting.at(4),
            "volcano allocate: queue team-2's ancestor dept-a would exceed its capability (capacity)");
}

TEST(VolcanoCapacity, EnqueueRefusesAPodGroupWhoseMinResourcesExceedTheRemainingCapability) {
  // capability 4: A holds 2; B's minResources 3 (minMember 3) gives 3 + 2 > 4 and B stays Pending,
  // while C (1 GPU: 1 + 2 <= 4) passes it. B enters, and binds whole, when A ends.
  ht::WorkloadBuilder b;
  b.job(0, 2, 100);                             // A
  for (int i = 0; i < 3; ++i) b.job(1, 1, 50);  // B
  b.job(2, 1, 10);                              // C
  auto w = b.build();
  group(w, 1, 4, "B", 3);
  queue(w, 0, 5, "q1");
  const VRun r(w, ht::cluster(1, 8),
               params({{"tiers", kCapacityTiers},
                       {"queues.q1.deserved.nvidia.com/gpu", "4"},
                       {"queues.q1.capability.nvidia.com/gpu", "4"}}));
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.start(4), 2);
  for (JobIndex j = 1; j < 4; ++j) EXPECT_EQ(r.start(j), 100) << j;
  EXPECT_EQ(r.audit.waiting.at(1), "volcano enqueue: queue q1 would exceed its capability (capacity)");
}

TEST(VolcanoCapacity, QueueOrderPutsAQueueWithoutDeservedLast) {
  // A queue without deserved has share 1; at equal shares the queue with deserved goes first. So
  // q-d (deserved 1) takes both GPUs (share 0, then 1 against 1) although q-be's jobs came first.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 4; ++i) b.job(0, 1, 100);
  auto w = b.build();
  queue(w, 0, 2, "q-be");
  queue(w, 2, 4, "q-d");
  // Both queues declared (a job of an undeclared queue is rejected, as Volcano's admission does).
  const VRun r(
      w, ht::cluster(1, 2),
      params({{"tiers", kCapacityTiers}, {"queues.q-d.deserved.nvidia.com/gpu", "1"}, {"queues.q-be.weight", "1"}}));
  EXPECT_EQ(r.started_at(2, 4, 0), 2);
  EXPECT_EQ(r.started_at(0, 2, 100), 2);
}

TEST(VolcanoCapacity, AncestorReclaimLevelOneSparesADepartmentWithinItsDeserved) {
  // dept-a (deserved 6) -> team-1 (2); dept-b (8). team-1 runs 6 (dept-a's share is computed at
  // session open only, so team-1 is served first at t=0), dept-b 2. dept-b's two new jobs reclaim
  // from team-1 (6 > 2); with ancestorReclaimLevel 1, dept-a must be above its deserved too (6 > 6
  // fails), so nothing is evicted.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 6; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 2; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 2; ++i) b.job(10, 1, 100);
  auto w = b.build();
  queue(w, 0, 6, "team-1");
  queue(w, 6, 10, "dept-b");
  auto p = std::map<std::string, std::string>{kReclaim,
                                              {"tiers", kHierarchyTiers},
                                              {"queues.dept-a.deserved.nvidia.com/gpu", "6"},
                                              {"queues.team-1.parent", "dept-a"},
                                              {"queues.team-1.deserved.nvidia.com/gpu", "2"},
                                              {"queues.dept-b.deserved.nvidia.com/gpu", "8"}};
  const VRun r(w, ht::cluster(2, 4), params(p));
  EXPECT_EQ(r.audit.preempts.size(), 2u);
  EXPECT_EQ(r.preemptions(3), 1);
  EXPECT_EQ(r.preemptions(2), 1);
  EXPECT_EQ(r.start(8), 40);
  EXPECT_EQ(r.start(9), 40);
  p["tiers"] =
      "[[priority, gang, conformance], [drf, predicates, {name: capacity, enableHierarchy: true, arguments: "
      "{ancestorReclaimLevel: 1}}, nodeorder, binpack]]";
  const VRun level(w, ht::cluster(2, 4), params(p));
  EXPECT_TRUE(level.audit.preempts.empty());
  EXPECT_EQ(level.start(8), 1000);
}

// --- hierarchical DRF ----------------------------------------------------------------------------
// drf with enableHierarchy and the queues' volcano.sh/hierarchy annotations. One 8-GPU node: a job
// holding its one GPU is saturated (it has all it requests) and counts unscaled; a pending job has
// share 0 and is ignored, so a path node's share is its running GPUs / 8.

namespace {
const std::string kHdrfTiers =
    "[[priority, gang, conformance], [{name: drf, enableHierarchy: true}, predicates, nodeorder]]";

std::map<std::string, std::string> hdrf_params(const std::string& a_weights) {
  return {{"tiers", kHdrfTiers},
          {"queues.q-a.annotations.volcano.sh/hierarchy", "root/a"},
          {"queues.q-a.annotations.volcano.sh/hierarchy-weights", a_weights},
          {"queues.q-b.annotations.volcano.sh/hierarchy", "root/b"},
          {"queues.q-b.annotations.volcano.sh/hierarchy-weights", "1/1"}};
}
}  // namespace

TEST(VolcanoHdrf, QueueOrderFollowsShareOverWeight) {
  // a (weight 3) and b (weight 1), ten 1-GPU jobs each. Allocation goes to the lower share/weight
  // (ties: creation order, a first): a, b, a, a, a (3/24 = 1/8), b, a, a: 6 and 2. At 100 a's last
  // four and b's next four (a: 4/24 < 1/8 until a runs out); b's last four at 200.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 20; ++i) b.job(0, 1, 100);
  auto w = b.build();
  queue(w, 0, 10, "q-a");
  queue(w, 10, 20, "q-b");
  const VRun r(w, ht::cluster(1, 8), params(hdrf_params("1/3")));
  EXPECT_EQ(r.started_at(0, 10, 0), 6);
  EXPECT_EQ(r.started_at(10, 20, 0), 2);
  EXPECT_EQ(r.started_at(0, 10, 100), 4);
  EXPECT_EQ(r.started_at(10, 20, 100), 4);
  EXPECT_EQ(r.started_at(10, 20, 200), 4);
  // Equal weights alternate: 4 and 4.
  const VRun even(w, ht::cluster(1, 8), params(hdrf_params("1/1")));
  EXPECT_EQ(even.started_at(0, 10, 0), 4);
  EXPECT_EQ(even.started_at(10, 20, 0), 4);
}

TEST(VolcanoHdrf, ReclaimUntilTheReclaimersQueueNoLongerSortsFirst) {
  // a holds all 8 GPUs; b's four jobs reclaim (gang admits no victim of rigid jobs, so drf decides
  // in tier 2). A victim is admitted when, with the reclaimer's GPU added and the victim's removed,
  // b's share is below a's: 1/8 < 7/8, 2/8 < 6/8, 3/8 < 5/8, but not 4/8 < 4/8. So three victims.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 1000);
  for (int i = 0; i < 4; ++i) b.job(10, 1, 500);
  auto w = b.build();
  queue(w, 0, 8, "q-a");
  queue(w, 8, 12, "q-b");
  auto p = hdrf_params("1/1");
  p.insert(kReclaim);
  const VRun r(w, ht::cluster(1, 8), params(p));
  ASSERT_EQ(r.audit.preempts.size(), 3u);
  const JobIndex victims[] = {7, 6, 5};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.audit.preempts[i].time, 10);
    EXPECT_EQ(r.audit.preempts[i].job, victims[i]);
    EXPECT_EQ(r.audit.preempts[i].by, 8 + i);
    EXPECT_EQ(r.audit.preempts[i].reason, "volcano reclaim: queue q-a above the reclaimer's in hierarchical DRF (drf)");
  }
  for (JobIndex j = 8; j < 11; ++j) EXPECT_EQ(r.start(j), 40) << j;
  EXPECT_EQ(r.start(11), 540) << "b's fourth job waits for b's own (b 0/8 sorts before a 5/8 then)";
}

// --- invariants --------------------------------------------------------------------------------

namespace {

class CapacityObserver : public models::SimObserver {
 public:
  explicit CapacityObserver(const models::ClusterSpec& c, std::size_t jobs) : ends(jobs, 0) {
    for (const auto& p : c.pools)
      for (int i = 0; i < p.nodes; ++i) cap_.push_back(p.gpus_per_node);
    used_.assign(cap_.size(), 0);
    where_.resize(jobs);
  }
  void on_event(sim::Tick, models::AuditKind k, JobIndex j, std::int32_t by, std::string_view reason) override {
    if (k == models::AuditKind::Preempt) {
      ++preempts;
      if (by < 0 || !reason.starts_with("volcano ")) ++bad_reasons;
    }
    if (k != models::AuditKind::Finish && k != models::AuditKind::Requeue) return;
    for (const auto& s : where_[j]) used_[s.node] -= s.gpus;
    where_[j].clear();
  }
  void on_start(sim::Tick, JobIndex j, const models::Placement& p) override {
    if (!where_[j].empty()) ++double_starts;
    where_[j] = p;
    for (const auto& s : p)
      if ((used_[s.node] += s.gpus) > cap_[s.node]) ++overcommits;
  }
  void on_end(sim::Tick, JobIndex j, JobState) override { ++ends[j]; }
  void on_sample(const models::Sample&) override {}
  std::vector<int> ends;
  std::vector<std::int64_t> cap_, used_;
  std::vector<models::Placement> where_;
  int overcommits = 0, double_starts = 0, preempts = 0, bad_reasons = 0;
};

models::Workload random_gangs(std::uint64_t seed, int n) {
  sim::RngStream rng(seed, "test/volcano");
  ht::WorkloadBuilder b;
  double t = 0;
  struct G {
    int size, min;
  };
  std::vector<G> gs;
  static const int kGpus[] = {1, 1, 2, 4, 8, 3, 12};
  for (int i = 0; i < n;) {
    t += std::floor(rng.exponential(1.0 / 30.0));
    const int size = rng.bernoulli(0.4) ? 1 + static_cast<int>(rng.below(6)) : 1;
    const int gpus = size > 1 ? 1 + static_cast<int>(rng.below(2)) : kGpus[rng.below(7)];
    const double run = std::floor(rng.lognormal(4.5, 1.0)) + 1;
    const char tenant[] = {'t', static_cast<char>('0' + rng.below(3)), '\0'};
    for (int k = 0; k < size; ++k) b.job(t, gpus, run, tenant);
    gs.push_back({size, size > 1 ? 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(size))) : 0});
    i += size;
  }
  auto w = b.build();
  JobIndex j = 0;
  for (std::size_t g = 0; g < gs.size(); ++g) {
    const bool grouped = gs[g].size > 1;
    std::string name = std::to_string(g);
    name.insert(name.begin(), 'g');
    const auto id = grouped ? w.groups.intern(name) : models::kNone;
    const auto q = w.queues.intern(rng.bernoulli(0.5) ? "q1" : "q2");
    const std::int32_t prio = static_cast<std::int32_t>(rng.below(3)) * 10;
    for (int k = 0; k < gs[g].size; ++k, ++j) {
      w.jobs[j].group = id;
      w.jobs[j].gang_min = gs[g].min;
      w.jobs[j].queue = q;
      w.jobs[j].priority = prio;
    }
  }
  return w;
}

}  // namespace

class VolcanoProperties : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(VolcanoProperties, NoOvercommitGangStartsEveryJobEndsOnceDeterministic) {
  const std::uint64_t seed = GetParam();
  const auto w = random_gangs(seed, 500);
  const auto c = ht::cluster(4, 8);
  const auto p = params({{"actions", "enqueue, allocate, preempt, reclaim, backfill"},
                         {"queues.q1.weight", "1"},
                         {"queues.q2.weight", "2"},
                         {"termination_grace_period", std::to_string(seed * 7 % 40) + "s"},
                         {"minResources", seed % 2 == 0 ? "auto" : "none"}});
  CapacityObserver obs(c, w.jobs.size());
  auto policy = policies::make_policy("volcano", p, seed);
  simulation::Simulation sim(w, c, *policy, &obs);
  const auto stats = sim.run();
  EXPECT_EQ(obs.overcommits, 0);
  EXPECT_EQ(obs.double_starts, 0);
  EXPECT_EQ(obs.bad_reasons, 0);
  EXPECT_GT(obs.preempts, 0);
  std::map<std::uint32_t, std::vector<JobIndex>> groups;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends[j], 1) << j;
    EXPECT_EQ(sim.job_state(j), JobState::Completed) << "job " << j << " (" << w.jobs[j].gpus << " GPUs)";
    if (w.jobs[j].group != models::kNone) groups[w.jobs[j].group].push_back(j);
  }
  // Gang: at a PodGroup's first start at least minMember members start together.
  for (const auto& [g, members] : groups) {
    sim::Tick first = sim::kNever;
    for (JobIndex j : members) first = std::min(first, sim.job_start(j));
    int together = 0;
    for (JobIndex j : members) together += sim.job_start(j) == first;
    EXPECT_GE(together, w.jobs[members[0]].gang_min) << "group " << g;
  }
  for (auto u : obs.used_) EXPECT_EQ(u, 0);
  auto again = policies::make_policy("volcano", p, seed);
  simulation::Simulation sim2(w, c, *again, nullptr);
  EXPECT_EQ(stats.fingerprint, sim2.run().fingerprint);
}

INSTANTIATE_TEST_SUITE_P(Seeds, VolcanoProperties, ::testing::Values(1u, 2u, 3u, 4u));

namespace {
// Two queues under the capacity plugin (deserved 12 and 20, q2 capped at 28, q1 guaranteed 4),
// flat or below one parent `org` (enableHierarchy).
void capacity_queues(std::map<std::string, std::string>& kv, bool hierarchical) {
  kv["tiers"] = "[[priority, gang, conformance], [drf, predicates, " +
                std::string(hierarchical ? "{name: capacity, enableHierarchy: true}" : "capacity") + ", nodeorder]]";
  kv["queues.q1.deserved.nvidia.com/gpu"] = "12";
  kv["queues.q2.deserved.nvidia.com/gpu"] = "20";
  kv["queues.q2.capability.nvidia.com/gpu"] = "28";
  kv["queues.q1.guarantee.resource.nvidia.com/gpu"] = "4";
  if (hierarchical) {
    kv["queues.org.deserved.nvidia.com/gpu"] = "32";
    kv["queues.org.guarantee.resource.nvidia.com/gpu"] = "4";
    kv["queues.q1.parent"] = "org";
    kv["queues.q2.parent"] = "org";
  }
}

// Two queues under hierarchical DRF: root/org/q1 and root/org/q2, weights 1 and 2.
void hdrf_queues(std::map<std::string, std::string>& kv) {
  kv["tiers"] = "[[priority, gang, conformance], [{name: drf, enableHierarchy: true}, predicates, nodeorder]]";
  kv["queues.q1.annotations.volcano.sh/hierarchy"] = "root/org/q1";
  kv["queues.q1.annotations.volcano.sh/hierarchy-weights"] = "1/1/1";
  kv["queues.q2.annotations.volcano.sh/hierarchy"] = "root/org/q2";
  kv["queues.q2.annotations.volcano.sh/hierarchy-weights"] = "1/1/2";
}
}  // namespace

// The same invariants under capacity (flat, hierarchical) and hierarchical DRF, with reclaim.
class VolcanoQueueProperties : public ::testing::TestWithParam<std::tuple<std::uint64_t, int>> {};

TEST_P(VolcanoQueueProperties, NoOvercommitGangStartsEveryJobEndsOnceDeterministic) {
  const auto [seed, mode] = GetParam();
  const auto w = random_gangs(seed, 500);
  const auto c = ht::cluster(4, 8);
  std::map<std::string, std::string> kv = {{"actions", "enqueue, allocate, reclaim, backfill"},
                                           {"termination_grace_period", std::to_string(seed * 7 % 40) + "s"},
                                           {"minResources", seed % 2 == 0 ? "auto" : "none"}};
  if (mode == 0 || mode == 1) {
    capacity_queues(kv, mode == 1);
  } else {
    hdrf_queues(kv);
  }
  const auto p = params(kv);
  CapacityObserver obs(c, w.jobs.size());
  auto policy = policies::make_policy("volcano", p, seed);
  simulation::Simulation sim(w, c, *policy, &obs);
  const auto stats = sim.run();
  EXPECT_EQ(obs.overcommits, 0);
  EXPECT_EQ(obs.double_starts, 0);
  EXPECT_EQ(obs.bad_reasons, 0);
  EXPECT_GT(obs.preempts, 0);
  std::map<std::uint32_t, std::vector<JobIndex>> groups;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends[j], 1) << j;
    EXPECT_EQ(sim.job_state(j), JobState::Completed) << "job " << j;
    if (w.jobs[j].group != models::kNone) groups[w.jobs[j].group].push_back(j);
  }
  for (const auto& [g, members] : groups) {
    sim::Tick first = sim::kNever;
    for (JobIndex j : members) first = std::min(first, sim.job_start(j));
    int together = 0;
    for (JobIndex j : members) together += sim.job_start(j) == first;
    EXPECT_GE(together, w.jobs[members[0]].gang_min) << "group " << g;
  }
  for (auto u : obs.used_) EXPECT_EQ(u, 0);
  auto again = policies::make_policy("volcano", p, seed);
  simulation::Simulation sim2(w, c, *again, nullptr);
  EXPECT_EQ(stats.fingerprint, sim2.run().fingerprint);
}

INSTANTIATE_TEST_SUITE_P(SeedsAndModes, VolcanoQueueProperties,
                         ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u), ::testing::Values(0, 1, 2)));

// Its speed is a benchmark figure (bench/RESULTS.md), not asserted here.
TEST(VolcanoRealTrace, Ricc14DaysEveryJobEndsOnceWithoutOvercommit) {
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-volcano.yaml";
  const auto sc = scenarios::load_scenario(path);
  const auto w = scenarios::build_workload(sc);
  models::ClusterSpec c = sc.cluster;
  CapacityObserver obs(c, w.jobs.size());
  auto policy = policies::make_policy(sc.policy.name, sc.policy.params, sc.seed);
  simulation::Simulation sim(w, c, *policy, &obs);
  const auto stats = sim.run();
  EXPECT_EQ(w.jobs.size(), 13607u);
  EXPECT_EQ(obs.overcommits, 0);
  EXPECT_EQ(obs.double_starts, 0);
  int completed = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends[j], 1) << j;
    completed += sim.job_state(j) != JobState::Unfinished;
    if (sim.job_start(j) >= 0) {
      EXPECT_GE(sim.job_start(j), w.jobs[j].submit);
    }
  }
  EXPECT_EQ(completed, static_cast<int>(w.jobs.size()));
  auto again = policies::make_policy(sc.policy.name, sc.policy.params, sc.seed);
  simulation::Simulation sim2(w, c, *again, nullptr);
  EXPECT_EQ(sim2.run().fingerprint, stats.fingerprint) << "deterministic";
}

// The RICC trace under capacity with reclaim (the Helm tiers with capacity for proportion; without
// overcommit every PodGroup of the backlog would be Inqueue at once): flat (queue1 and queue2 with
// deserved, queue2 a guarantee and a capability) and hierarchical (both under org, beside an idle
// department).
// Mode 2: hierarchical DRF instead (queue1 and queue2 under root/batch, weights 3 and 1; the
// first 4 days).
class VolcanoCapacityRealTrace : public ::testing::TestWithParam<int> {};

TEST_P(VolcanoCapacityRealTrace, Ricc14DaysEveryJobEndsOnceWithoutOvercommit) {
  const bool hierarchy = GetParam() == 1;
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-volcano.yaml";
  auto sc = scenarios::load_scenario(path);
  // hDRF puts no quota on reclaim, so every session's starving jobs scan the nodes: 4 days suffice.
  if (GetParam() == 2) sc.workload.window_end = 4 * 24 * 3600 * sim::kSecond;
  const auto w = scenarios::build_workload(sc);
  std::map<std::string, std::string> kv = {
      {"actions", "enqueue, allocate, reclaim, backfill"},
      {"tiers", "[[priority, gang, conformance], [overcommit, drf, predicates, " +
                    std::string(hierarchy ? "{name: capacity, enableHierarchy: true}" : "capacity") +
                    ", nodeorder, binpack]]"},
      {"queues.queue1.deserved.nvidia.com/gpu", "4096"},
      {"queues.queue2.deserved.nvidia.com/gpu", "2048"},
      {"queues.queue2.guarantee.resource.nvidia.com/gpu", "512"},
      {"queues.queue2.capability.nvidia.com/gpu", "6144"}};
  if (hierarchy) {
    kv["queues.org.deserved.nvidia.com/gpu"] = "6144";
    kv["queues.org.guarantee.resource.nvidia.com/gpu"] = "512";
    kv["queues.queue1.parent"] = "org";
    kv["queues.queue2.parent"] = "org";
    kv["queues.spare.deserved.nvidia.com/gpu"] = "2048";
  }
  if (GetParam() == 2) {
    kv = {{"actions", "enqueue, allocate, reclaim, backfill"},
          {"tiers",
           "[[priority, gang, conformance], [overcommit, {name: drf, enableHierarchy: true}, predicates, nodeorder, "
           "binpack]]"},
          {"queues.queue1.annotations.volcano.sh/hierarchy", "root/batch/q1"},
          {"queues.queue1.annotations.volcano.sh/hierarchy-weights", "1/1/3"},
          {"queues.queue2.annotations.volcano.sh/hierarchy", "root/batch/q2"},
          {"queues.queue2.annotations.volcano.sh/hierarchy-weights", "1/1/1"}};
  }
  const auto p = params(kv);
  CapacityObserver obs(sc.cluster, w.jobs.size());
  auto policy = policies::make_policy("volcano", p, sc.seed);
  simulation::Simulation sim(w, sc.cluster, *policy, &obs);
  const auto stats = sim.run();
  EXPECT_EQ(obs.overcommits, 0);
  EXPECT_EQ(obs.double_starts, 0);
  EXPECT_EQ(obs.bad_reasons, 0);
  int completed = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends[j], 1) << j;
    completed += sim.job_state(j) != JobState::Unfinished;
    if (sim.job_start(j) >= 0) {
      EXPECT_GE(sim.job_start(j), w.jobs[j].submit);
    }
  }
  EXPECT_EQ(completed, static_cast<int>(w.jobs.size()));
  for (auto u : obs.used_) EXPECT_EQ(u, 0);
  if (hierarchy) {
    EXPECT_GT(obs.preempts, 0) << "the run exercises reclaim";
  }
  auto again = policies::make_policy("volcano", p, sc.seed);
  simulation::Simulation sim2(w, sc.cluster, *again, nullptr);
  EXPECT_EQ(sim2.run().fingerprint, stats.fingerprint) << "deterministic";
}

INSTANTIATE_TEST_SUITE_P(FlatHierarchicalHdrf, VolcanoCapacityRealTrace, ::testing::Values(0, 1, 2));

// --- parameters ----------------------------------------------------------------------------------

namespace {
const std::string kInline = headroom::testing::kInlineScenario;
const std::string kScenario = R"(name: volcano
cluster:
  pools:
    - name: a100
      nodes: 2
      gpus_per_node: 8
      gpu_type: A100
policy:
  name: volcano
  actions: "enqueue, allocate, preempt, reclaim, backfill"
  tiers:
    - plugins:
        - name: priority
        - name: gang
          enablePreemptable: false
        - name: conformance
    - plugins:
        - name: overcommit
          arguments: {overcommit-factor: 1.5}
        - name: drf
        - name: proportion
        - name: binpack
          arguments:
            binpack.weight: 10
            binpack.resources: nvidia.com/gpu
            binpack.resources.nvidia.com/gpu: 5
  schedule-period: 2s
  queues:
    q1: {weight: 1, reclaimable: false}
    q2:
      weight: 3
      capability: {nvidia.com/gpu: 8, memory: 64Gi}
      guarantee: {resource: {cpu: 500m}}
      state: Closed
workload:
  trace: tiny.csv
)";

}  // namespace

TEST(VolcanoParams, ScenarioBlockUsesVolcanoSchedulerConfVocabulary) {
  const auto s = scenarios::parse_scenario(kScenario, kInline);
  const auto cfg = vc::parse_config(s.policy.params);
  EXPECT_EQ(cfg.actions, (std::vector<vc::Action>{vc::Action::Enqueue, vc::Action::Allocate, vc::Action::Preempt,
                                                  vc::Action::Reclaim, vc::Action::Backfill}));
  ASSERT_EQ(cfg.tiers.size(), 2u);
  ASSERT_EQ(cfg.tiers[0].size(), 3u);
  EXPECT_EQ(cfg.tiers[0][1].name, "gang");
  EXPECT_FALSE(cfg.tiers[0][1].preemptable);
  EXPECT_TRUE(cfg.tiers[0][1].reclaimable);
  EXPECT_EQ(cfg.tiers[1][3].name, "binpack");
  EXPECT_DOUBLE_EQ(cfg.overcommit_factor, 1.5);
  EXPECT_DOUBLE_EQ(cfg.binpack_weight, 10);
  EXPECT_DOUBLE_EQ(cfg.binpack_gpu, 5);
  EXPECT_EQ(cfg.schedule_period, 2 * kSecond);
  EXPECT_FALSE(cfg.queues.at("q1").reclaimable);
  EXPECT_EQ(cfg.queues.at("q2").weight, 3);
  EXPECT_EQ(cfg.queues.at("q2").capability[0], 8);
  EXPECT_EQ(cfg.queues.at("q2").capability[2], 64 * 1024);
  EXPECT_EQ(cfg.queues.at("q2").guarantee[1], 500);
  EXPECT_EQ(cfg.queues.at("q2").state, vc::QueueState::Closed);
  EXPECT_NE(policies::make_policy(s.policy.name, s.policy.params, 1), nullptr);

  const auto d = vc::parse_config({});
  EXPECT_EQ(d.actions, (std::vector<vc::Action>{vc::Action::Enqueue, vc::Action::Allocate, vc::Action::Backfill}));
  ASSERT_EQ(d.tiers.size(), 2u);
  EXPECT_EQ(d.tiers[1].size(), 6u);
  EXPECT_FALSE(d.tiers[1][1].preemptable) << "drf enablePreemptable: false in the Helm chart";
  EXPECT_DOUBLE_EQ(d.overcommit_factor, 1.2);
  EXPECT_EQ(d.termination_grace_period, 30 * kSecond);
  EXPECT_TRUE(d.min_resources);

  // The short tier shape, in block style too.
  const auto block = scenarios::parse_scenario(
      replace(kScenario,
              kScenario.substr(kScenario.find("  tiers:"),
                               kScenario.find("  schedule-period") - kScenario.find("  tiers:")),
              "  tiers:\n    - [priority, gang]\n    -\n      - drf\n      - proportion\n"),
      kInline);
  const auto bcfg = vc::parse_config(block.policy.params);
  ASSERT_EQ(bcfg.tiers.size(), 2u);
  EXPECT_EQ(bcfg.tiers[0][1].name, "gang");
  EXPECT_EQ(bcfg.tiers[1][1].name, "proportion");
  // The short tier shape.
  const auto shortform = vc::parse_config(params({{"tiers", "[[priority, gang], [drf, proportion]]"}}));
  ASSERT_EQ(shortform.tiers.size(), 2u);
  EXPECT_EQ(shortform.tiers[1][0].name, "drf");
}

TEST(VolcanoParams, BadValuesNameTheirLocation) {
  auto errors = scenario_errors(replace(kScenario, "name: gang", "name: gnag"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 12);
  EXPECT_EQ(errors[0].where(), "policy.tiers");
  EXPECT_NE(errors[0].message().find("unknown plugin \"gnag\"; did you mean \"gang\"?"), std::string::npos)
      << errors[0].message();

  errors = scenario_errors(replace(kScenario, "preempt, reclaim", "preemt, reclaim"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 10);
  EXPECT_EQ(errors[0].message(),
            "unknown action \"preemt\"; did you mean \"preempt\"? (known: enqueue, allocate, backfill, preempt, "
            "reclaim)");

  errors = scenario_errors(replace(kScenario, "q1: {weight: 1,", "q1: {wieght: 1,"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 29);
  EXPECT_EQ(errors[0].message(), "unknown parameter \"queues.q1.wieght\" for policy volcano");

  errors = scenario_errors(replace(kScenario, "weight: 3", "weight: 0"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 31);
  EXPECT_EQ(errors[0].where(), "policy.queues.q2.weight");

  errors = scenario_errors(replace(kScenario, "state: Closed", "state: Shut"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message(), "unknown queue state \"Shut\"; expected: Open, Closing, Closed");

  errors = scenario_errors(replace(kScenario, "overcommit-factor: 1.5", "overcommit-factr: 1.5"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message().find("did you mean \"overcommit-factor\"?"), std::string::npos);

  // capacity beside proportion conflicts; with capacity, q2's guarantee (cpu 500m) needs a deserved.
  errors = scenario_errors(replace(kScenario, "name: drf", "name: capacity"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].where(), "policy.tiers");
  EXPECT_EQ(errors[0].message(),
            "the capacity and proportion plugins conflict; use one of them (capacity replaces proportion)");
  EXPECT_EQ(errors[1].where(), "policy.queues.q2.guarantee");
  EXPECT_EQ(errors[1].line(), 33);
  EXPECT_EQ(errors[1].message(), "deserved[cpu] must be >= guarantee[cpu]=500m");

  errors = scenario_errors(replace(kScenario, "schedule-period: 2s", "schedule-period: 0s"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where(), "policy.schedule-period");

  EXPECT_THROW(policies::make_policy("volcano", params({{"minResources", "some"}}), 1), sim::InputError);
  EXPECT_THROW(policies::make_policy("volcano", params({{"tiers", "[[priority"}}), 1), sim::InputError);
}

namespace {
const std::string kCapacityScenario = R"(name: volcano-capacity
cluster:
  pools:
    - name: a100
      nodes: 2
      gpus_per_node: 8
      gpu_type: A100
policy:
  name: volcano
  actions: "enqueue, allocate, reclaim, backfill"
  tiers:
    - plugins:
        - name: priority
        - name: gang
        - name: conformance
    - plugins:
        - name: drf
        - name: predicates
        - name: capacity
          enableHierarchy: true
          arguments: {ancestorReclaimLevel: 1}
        - name: nodeorder
  queues:
    dept-a:
      deserved: {nvidia.com/gpu: 8}
      guarantee: {resource: {nvidia.com/gpu: 2}}
      capability: {nvidia.com/gpu: 12}
    team-1:
      parent: dept-a
      deserved: {nvidia.com/gpu: 4}
      guarantee: {resource: {nvidia.com/gpu: 2}}
    team-2:
      parent: dept-a
      deserved: {nvidia.com/gpu: 4}
      capability: {nvidia.com/gpu: 8}
    dept-b:
      deserved: {nvidia.com/gpu: 8}
workload:
  trace: tiny.csv
)";

}  // namespace

TEST(VolcanoParams, CapacityQueuesInTheQueueCrdVocabulary) {
  const auto s = scenarios::parse_scenario(kCapacityScenario, kInline);
  const auto cfg = vc::parse_config(s.policy.params);
  ASSERT_EQ(cfg.tiers.size(), 2u);
  EXPECT_EQ(cfg.tiers[1][2].name, "capacity");
  EXPECT_TRUE(cfg.tiers[1][2].hierarchy);
  EXPECT_EQ(cfg.ancestor_reclaim_level, 1);
  EXPECT_EQ(cfg.queues.at("dept-a").deserved[0], 8);
  EXPECT_EQ(cfg.queues.at("dept-a").parent, "");
  EXPECT_EQ(cfg.queues.at("team-1").parent, "dept-a");
  EXPECT_EQ(cfg.queues.at("team-1").guarantee[0], 2);
  EXPECT_EQ(cfg.queues.at("team-2").capability[0], 8);
  EXPECT_EQ(cfg.queues.at("dept-b").deserved[1], -1) << "unset";
  EXPECT_NE(policies::make_policy(s.policy.name, s.policy.params, 1), nullptr);
}

TEST(VolcanoParams, CapacityQueueErrorsNameTheirLocation) {
  const std::string& k = kCapacityScenario;
  expect_one_error(
      replace(k, "parent: dept-a\n      deserved: {nvidia.com/gpu: 4}\n      guarantee",
              "parent: dpt-a\n      deserved: {nvidia.com/gpu: 4}\n      guarantee"),
      29, "policy.queues.team-1.parent",
      "unknown parent queue \"dpt-a\"; did you mean \"dept-a\"? (a parent must be a queue of this block, or "
      "root)");
  expect_one_error(replace(k, "parent: dept-a\n      deserved: {nvidia.com/gpu: 4}\n      guarantee",
                           "parent: team-1\n      deserved: {nvidia.com/gpu: 4}\n      guarantee"),
                   29, "policy.queues.team-1.parent", "queue team-1 cannot use itself as parent");
  expect_one_error(replace(k, "    dept-a:\n", "    dept-a:\n      parent: team-2\n"), 25,
                   "policy.queues.dept-a.parent", "cycle in the queue hierarchy: dept-a -> team-2 -> dept-a");
  expect_one_error(
      replace(k, "deserved: {nvidia.com/gpu: 4}\n      capability", "deserved: {nvidia.com/gpu: 6}\n      capability"),
      25, "policy.queues.dept-a.deserved",
      "sum of children's deserved[nvidia.com/gpu] (10) exceeds parent queue dept-a's deserved (8)");
  expect_one_error(replace(k, "guarantee: {resource: {nvidia.com/gpu: 2}}\n    team-2",
                           "guarantee: {resource: {nvidia.com/gpu: 3}}\n    team-2"),
                   26, "policy.queues.dept-a.guarantee",
                   "sum of children's guarantee[nvidia.com/gpu] (3) exceeds parent queue dept-a's guarantee (2)");
  expect_one_error(replace(k, "capability: {nvidia.com/gpu: 8}", "capability: {nvidia.com/gpu: 16}"), 35,
                   "policy.queues.team-2.capability",
                   "capability[nvidia.com/gpu]=16 exceeds its ancestor dept-a's capability=12");
  expect_one_error(replace(k, "capability: {nvidia.com/gpu: 8}", "capability: {nvidia.com/gpu: 3}"), 34,
                   "policy.queues.team-2.deserved",
                   "deserved[nvidia.com/gpu]=4 must be <= capability[nvidia.com/gpu]=3");
  expect_one_error(
      replace(k, "      deserved: {nvidia.com/gpu: 8}\nworkload",
              "      deserved: {nvidia.com/gpu: 8}\n      guarantee: {resource: {nvidia.com/gpu: 9}}\nworkload"),
      37, "policy.queues.dept-b.deserved", "deserved[nvidia.com/gpu]=8 must be >= guarantee[nvidia.com/gpu]=9");
  expect_one_error(
      replace(kScenario, "        - name: drf\n", "        - name: drf\n          enableHierarchy: true\n"), 12,
      "policy.tiers", "proportion and drf with hierarchy enabled conflict (in one tier)");
  expect_one_error(
      replace(k, "        - name: nodeorder\n",
              "        - name: nodeorder\n          arguments: {ancestorReclaimLevel: 1}\n"),
      12, "policy.tiers",
      "plugin nodeorder argument \"ancestorReclaimLevel\": ancestorReclaimLevel is an argument of the capacity plugin");
  expect_one_error(replace(k, "workload:", "    root:\n      deserved: {nvidia.com/gpu: 4}\nworkload:"), 39,
                   "policy.queues.root.deserved",
                   "the root queue's resources are not set by users: its capability is unlimited and its deserved and "
                   "guarantee are its children's sums");
  // A parent needs enableHierarchy.
  const auto flat = scenario_errors(replace(k, "          enableHierarchy: true\n", ""));
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[0].line(), 28);
  EXPECT_EQ(flat[0].where(), "policy.queues.team-1.parent");
  EXPECT_EQ(flat[0].message(), "a parent queue needs the capacity plugin with enableHierarchy: true");
  EXPECT_EQ(flat[1].where(), "policy.queues.team-2.parent");
  // At most 5 levels below the root (the webhook's --max-queue-depth).
  std::map<std::string, std::string> deep = {
      {"tiers", "[[priority, gang], [drf, {name: capacity, enableHierarchy: true}]]"}};
  for (int i = 2; i <= 6; ++i) deep["queues.l" + std::to_string(i) + ".parent"] = "l" + std::to_string(i - 1);
  deep["queues.l1.weight"] = "1";
  std::vector<sim::InputError> errors;
  vc::check_params(params(deep), errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where(), "policy.queues.l6.parent");
  EXPECT_EQ(errors[0].message(), "queue l6 exceeds the maximum allowed depth of 5 (the webhook's --max-queue-depth)");
}

namespace {
const std::string kHdrfScenario = R"(name: volcano-hdrf
cluster:
  pools:
    - name: a100
      nodes: 2
      gpus_per_node: 8
      gpu_type: A100
policy:
  name: volcano
  tiers: [[priority, gang], [{name: drf, enableHierarchy: true}, predicates]]
  queues:
    eng-dev:
      annotations: {volcano.sh/hierarchy: root/eng/dev, volcano.sh/hierarchy-weights: 1/2/8}
    eng-prod:
      annotations: {volcano.sh/hierarchy: root/eng/prod, volcano.sh/hierarchy-weights: 1/2/2}
workload:
  trace: tiny.csv
)";
}  // namespace

TEST(VolcanoParams, HierarchicalDrfAnnotations) {
  const auto s = scenarios::parse_scenario(kHdrfScenario, kInline);
  const auto cfg = vc::parse_config(s.policy.params);
  EXPECT_TRUE(cfg.tiers[1][0].hierarchy);
  EXPECT_EQ(cfg.queues.at("eng-dev").hierarchy, "root/eng/dev");
  EXPECT_EQ(cfg.queues.at("eng-prod").hierarchy_weights, "1/2/2");
  const std::string& k = kHdrfScenario;
  expect_one_error(replace(k, "1/2/2", "1/3/2"), 15, "policy.queues.eng-prod.annotations.volcano.sh/hierarchy-weights",
                   "root/eng has another weight in queue eng-dev's annotations (Volcano would take either)");
  expect_one_error(replace(k, "1/2/2", "1/2"), 15, "policy.queues.eng-prod.annotations.volcano.sh/hierarchy-weights",
                   "expected one weight per level of \"root/eng/prod\", got \"1/2\"");
  expect_one_error(replace(k, "hierarchy: root/eng/prod", "hierarchy: eng/prod"), 15,
                   "policy.queues.eng-prod.annotations.volcano.sh/hierarchy",
                   "expected a path from the root such as root/eng/dev, got \"eng/prod\"");
  expect_one_error(
      replace(k, "root/eng/dev, volcano.sh/hierarchy-weights: 1/2/8", "root/eng, volcano.sh/hierarchy-weights: 1/2"),
      13, "policy.queues.eng-dev.annotations.volcano.sh/hierarchy",
      "root/eng is above queue eng-prod's root/eng/prod; a queue cannot hold both queues and jobs");
  const auto off = scenario_errors(replace(k, "{name: drf, enableHierarchy: true}", "drf"));
  ASSERT_EQ(off.size(), 2u);
  EXPECT_EQ(off[0].message(), "the volcano.sh/hierarchy annotations need drf with enableHierarchy: true");
}

namespace {
struct DecisionCase {
  std::uint64_t seed;
  int mode, jobs;
  const char* fingerprint;
};

void expect_decisions(const DecisionCase& k, const char* pods_created) {
  const auto w = random_gangs(k.seed, k.jobs);
  std::map<std::string, std::string> kv = {{"termination_grace_period", std::to_string(k.seed * 7 % 40) + "s"},
                                           {"minResources", k.seed % 2 == 0 ? "auto" : "none"},
                                           {"podsCreated", pods_created}};
  if (k.mode == 0) {
    kv["actions"] = "enqueue, allocate, preempt, reclaim, backfill";
    kv["queues.q1.weight"] = "1";
    kv["queues.q2.weight"] = "2";
  } else if (k.mode == 1 || k.mode == 2) {
    kv["actions"] = "enqueue, allocate, reclaim, backfill";
    capacity_queues(kv, k.mode == 2);
  } else if (k.mode == 3) {
    kv["actions"] = "enqueue, allocate, reclaim, backfill";
    hdrf_queues(kv);
  } else {
    kv["minResources"] = "auto";
    kv["queues.q1.weight"] = "3";
    kv["queues.q2.capability.nvidia.com/gpu"] = "10";
  }
  auto policy = policies::make_policy("volcano", params(kv), k.seed);
  // Mode 4 on two nodes: about as much work arrives as they can do, and the backlog grows.
  simulation::Simulation sim(w, ht::cluster(k.mode == 4 ? 2 : 4, 8), *policy, nullptr);
  EXPECT_EQ(sim.run().fingerprint, k.fingerprint)
      << "seed " << k.seed << ", mode " << k.mode << ", podsCreated " << pods_created;
}
}  // namespace

// Issue #23 made volcano fast on long traces (session state kept between sessions, enqueue over
// per-queue lists that pass over unchanged refusals, a node index) without changing a decision:
// these fingerprints (every start, preemption and reason) are those of the policy before that
// work (commit bb4b424), on random gangs with preempt and reclaim, capacity (flat and
// hierarchical), hierarchical DRF, and a backlog refused by overcommit and a queue's capability.
// That policy counted a Pending PodGroup's tasks in its queue's request, as `podsCreated: submit`
// does; the runs with the default (a Volcano Job has no pods while Pending) are pinned below.
TEST(VolcanoDecisions, FingerprintsOfThePolicyBeforeTheSpeedUp) {
  const DecisionCase cases[] = {
      {1, 0, 500, "1dc6fdc7a5250d1f"},  {2, 0, 500, "601be77180c37e0e"}, {1, 1, 500, "7b6d2cbc68a3dd99"},
      {2, 2, 500, "eb5a9b4e4435cc78"},  {3, 3, 500, "55408bb8f4db7937"}, {1, 4, 3000, "a85030ecc80ec8fa"},
      {2, 4, 3000, "0b334791b95f2090"},
  };
  for (const DecisionCase& k : cases) expect_decisions(k, "submit");
}

// The same runs with Volcano Jobs' pods created once their PodGroup is Inqueue (the default), as
// of the commit that made it so: the runs without minResources (seeds 1 and 3 outside mode 4) and
// those with the capacity plugin (modes 1 and 2: deserved is declared) decide as above.
TEST(VolcanoDecisions, FingerprintsWithPodsCreatedOnceInqueue) {
  const DecisionCase cases[] = {
      {1, 0, 500, "1dc6fdc7a5250d1f"},  {2, 0, 500, "fd0d53e1dd9da964"}, {1, 1, 500, "7b6d2cbc68a3dd99"},
      {2, 2, 500, "eb5a9b4e4435cc78"},  {3, 3, 500, "55408bb8f4db7937"}, {1, 4, 3000, "23f0e7edd65a96ac"},
      {2, 4, 3000, "1c0d663aafe5e22b"},
  };
  for (const DecisionCase& k : cases) expect_decisions(k, "inqueue");
}

// Scores that differ per node (cpu and memory modelled; nodeorder, binpack) pick the node among
// node classes (nodes of one pool, up state, capacity and idle resources) instead of scanning
// every node: a way of computing, not of deciding. Gangs with cpu and memory on 64 nodes of two
// shapes, with node failures, preemption and reclaim (releasing resources: the future idle
// gradient); fingerprints recorded with the code before the node classes (commit cb4d429).
TEST(VolcanoDecisions, NodeClassesPickAsTheFullScan) {
  struct Case {
    std::uint64_t seed;
    int mode;
    const char* fingerprint;
  };
  const Case cases[] = {
      {1, 0, "17dc225bb6af4e18"},
      {2, 1, "2be9535aab9d9989"},
      {3, 2, "c1017078aa63767a"},
      {4, 3, "b1a9549b0574e443"},
  };
  for (const Case& k : cases) {
    auto w = random_gangs(k.seed, 4000);
    sim::RngStream rng(k.seed, "test/volcano-classes");
    for (auto& job : w.jobs) {
      // Most pods ask for cpu and memory in step with their GPUs, some for none.
      if (rng.bernoulli(0.8)) {
        job.cpus = job.gpus * 8;
        job.memory_mib = std::int64_t{job.gpus} * 65536;
      }
      job.submit /= 8;
    }
    models::ClusterSpec c;
    c.pools.push_back({"small", 32, 8, "A100", 64, 512});
    c.pools.push_back({"large", 32, 8, "A100", 128, 1024});
    std::map<std::string, std::string> kv = {{"termination_grace_period", "20s"}};
    if (k.mode == 0) {
      kv["actions"] = "enqueue, allocate, preempt, reclaim, backfill";
      kv["queues.q1.weight"] = "1";
      kv["queues.q2.weight"] = "3";
    } else if (k.mode == 1) {
      kv["tiers"] =
          "[[priority, gang, conformance], [drf, predicates, proportion, {name: nodeorder, arguments: "
          "{mostrequested.weight: 2, leastrequested.weight: 0}}]]";
    } else if (k.mode == 2) {
      kv["tiers"] =
          "[[priority, gang, conformance], [drf, predicates, proportion, {name: binpack, arguments: "
          "{binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 5}}]]";
    } else {
      kv["actions"] = "enqueue, allocate, reclaim, backfill";
      kv["tiers"] = "[[priority, gang, conformance], [drf, predicates, capacity, nodeorder, binpack]]";
      kv["queues.q1.deserved.nvidia.com/gpu"] = "200";
      kv["queues.q2.deserved.nvidia.com/gpu"] = "312";
    }
    auto policy = policies::make_policy("volcano", params(kv), k.seed);
    models::RandomFailures rf;
    rf.mtbf = sim::kDay;
    rf.repair = 3600 * kSecond;
    simulation::SimulationOptions o;
    o.failures.random.push_back(rf);
    o.seed = k.seed;
    simulation::Simulation sim(w, c, *policy, nullptr, o);
    EXPECT_EQ(sim.run().fingerprint, k.fingerprint) << "seed " << k.seed << ", mode " << k.mode;
  }
}
