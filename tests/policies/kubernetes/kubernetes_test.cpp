// The kubernetes policy: the acceptance scenarios K1-K5 of docs POLICIES.md section 1.8 with
// their exact outcomes, the scheduling queue's backoff timing, no head-of-line blocking,
// invariants over random workloads, and the policy block of a scenario file.
#include "policies/kubernetes/kubernetes.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "scenarios/run_options.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/test_support.hpp"
#include "traces/import.hpp"
#include "traces/synthetic.hpp"

using namespace headroom;
using headroom::testing::params;
using headroom::testing::replace;
using headroom::testing::scenario_errors;
using models::JobIndex;
using models::JobState;
using sim::kSecond;
namespace k8s = policies::k8s;
namespace ht = headroom::testing;

namespace {

constexpr std::int64_t kGiB = 1024;  // in MiB

models::ClusterSpec nodes(int count, int gpus, int cpus = 0, std::int64_t memory_gib = 0) {
  models::ClusterSpec spec;
  spec.pools.push_back({"pool", count, gpus, "A100", cpus, memory_gib});
  return spec;
}

// One run of the kubernetes policy, kept alive for inspection.
struct K8sRun {
  K8sRun(models::Workload workload, models::ClusterSpec cluster, const policies::PolicyParams& p = {},
         std::uint64_t seed = 1, models::SimObserver* observer = nullptr)
      : w(std::move(workload)), c(std::move(cluster)), policy(policies::make_policy("kubernetes", p, seed)) {
    sim = std::make_unique<simulation::Simulation>(w, c, *policy, observer);
    stats = sim->run();
  }
  double start(JobIndex j) const { return sim::to_seconds(sim->job_start(j)); }
  double end(JobIndex j) const { return sim::to_seconds(sim->job_end(j)); }
  models::NodeId node(JobIndex j) const { return sim->job_placement(j).at(0).node; }
  int preemptions(JobIndex j) const { return sim->job_preemptions(j); }
  JobState state(JobIndex j) const { return sim->job_state(j); }

  models::Workload w;
  models::ClusterSpec c;
  std::unique_ptr<policies::Policy> policy;
  std::unique_ptr<simulation::Simulation> sim;
  simulation::SimulationStats stats;
};

void set(models::Workload& w, JobIndex j, std::int32_t priority, std::int32_t cpus = 0, std::int64_t memory_mib = 0) {
  w.jobs[j].priority = priority;
  w.jobs[j].cpus = cpus;
  w.jobs[j].memory_mib = memory_mib;
}

}  // namespace

// --- K1 --------------------------------------------------------------------------------------

TEST(KubernetesScore, LeastAllocatedScoresTheEmptyNode93AndTheUsedOne87) {
  models::Node node;
  node.gpus = 8;
  node.cpus = 64;
  node.memory_mib = 256 * kGiB;
  models::Job pod;
  pod.gpus = 1;
  pod.cpus = 4;
  pod.memory_mib = 16 * kGiB;
  const k8s::NodeUsage empty;
  const k8s::NodeUsage used{1, 4000, 16 * kGiB, 4000, 16 * kGiB};
  const k8s::ScoringStrategy least;
  EXPECT_EQ(k8s::score_node(least, node, empty, pod).fit, 93);  // (60000*100/64000 + 240*100/256) / 2
  EXPECT_EQ(k8s::score_node(least, node, used, pod).fit, 87);
  EXPECT_EQ(k8s::score_node(least, node, empty, pod).balanced, 100);
  EXPECT_EQ(k8s::score_node(least, node, used, pod).balanced, 100);

  k8s::ScoringStrategy most;
  most.type = k8s::ScoringType::MostAllocated;
  most.gpu_weight = 3;
  EXPECT_EQ(k8s::score_node(most, node, empty, pod).fit, 9);  // (12*3 + 6 + 6) / 5
  EXPECT_EQ(k8s::score_node(most, node, used, pod).fit, 19);  // (25*3 + 12 + 12) / 5

  // GPUs play no part by default: a node with its GPUs taken scores like an empty one.
  const k8s::NodeUsage gpus_taken{7, 0, 0, 0, 0};
  EXPECT_EQ(k8s::score_node(least, node, gpus_taken, pod).fit, 93);
  // Requests of 0 count as 100 mCPU / 200 MiB; a pod with no cpu/memory request skips balance.
  models::Job best_effort;
  best_effort.gpus = 1;
  EXPECT_EQ(k8s::score_node(least, node, empty, best_effort).fit, 99);  // 63900*100/64000, 261944*100/262144
  EXPECT_EQ(k8s::score_node(least, node, empty, best_effort).balanced, 0);
  // Unmodelled node resources are left out; with none left the score is 0.
  models::Node gpu_only;
  gpu_only.gpus = 8;
  EXPECT_EQ(k8s::score_node(least, gpu_only, empty, pod).fit, 0);
  EXPECT_EQ(k8s::score_node(most, gpu_only, used, pod).fit, 25);  // only the GPU: 2*100/8
  // Unequal fractions: cpu 0.5, memory 0.0625 -> std 0.21875 -> 78.
  models::Job skewed = pod;
  skewed.cpus = 32;
  EXPECT_EQ(k8s::score_node(least, node, empty, skewed).balanced, 78);
}

TEST(KubernetesScore, RequestedToCapacityRatioFollowsTheShape) {
  models::Node node;
  node.gpus = 8;
  models::Job pod;
  pod.gpus = 2;
  k8s::ScoringStrategy rtcr;
  rtcr.type = k8s::ScoringType::RequestedToCapacityRatio;
  rtcr.gpu_weight = 1;
  rtcr.cpu_weight = rtcr.memory_weight = 0;
  rtcr.shape = {{0, 0}, {100, 100}};  // "0:0,100:10", scores already scaled
  EXPECT_EQ(k8s::score_node(rtcr, node, {}, pod).fit, 25);
  EXPECT_EQ(k8s::score_node(rtcr, node, {4, 0, 0, 0, 0}, pod).fit, 75);
  rtcr.shape = {{0, 100}, {100, 0}};  // spreading
  EXPECT_EQ(k8s::score_node(rtcr, node, {}, pod).fit, 75);
  EXPECT_EQ(k8s::score_node(rtcr, node, {6, 0, 0, 0, 0}, pod).fit, 0);
}

TEST(Kubernetes, K1DefaultScoringSpreadsGpuPodsAndStrandsTheWholeNodePod) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(1, 1, 200).job(2, 8, 50).build();
  set(w, 0, 0, 4, 16 * kGiB);
  set(w, 1, 0, 4, 16 * kGiB);
  set(w, 2, 0, 8, 32 * kGiB);
  const K8sRun r(w, nodes(2, 8, 64, 256));
  EXPECT_EQ(r.node(0), 0u) << "a tie: the lowest node index";
  EXPECT_EQ(r.node(1), 1u) << "LeastAllocated: 93 for the empty node against 87";
  EXPECT_EQ(r.start(2), 100) << "P3 stays Pending until P1 frees node 0";
  EXPECT_EQ(r.node(2), 0u);
  EXPECT_EQ(r.state(2), JobState::Completed);
}

TEST(Kubernetes, K1MostAllocatedWithGpuWeight3BinPacksAndTheWholeNodePodRuns) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(1, 1, 200).job(2, 8, 50).build();
  set(w, 0, 0, 4, 16 * kGiB);
  set(w, 1, 0, 4, 16 * kGiB);
  set(w, 2, 0, 8, 32 * kGiB);
  const K8sRun r(w, nodes(2, 8, 64, 256),
                 params({{"scoringStrategy.type", "MostAllocated"},
                         {"scoringStrategy.resources.gpu", "3"},
                         {"scoringStrategy.resources.cpu", "1"},
                         {"scoringStrategy.resources.memory", "1"}}));
  EXPECT_EQ(r.node(0), 0u);
  EXPECT_EQ(r.node(1), 0u) << "P2 joins P1";
  EXPECT_EQ(r.start(2), 2);
  EXPECT_EQ(r.node(2), 1u) << "P3 runs on the other node at once";
}

// --- K2 --------------------------------------------------------------------------------------

TEST(Kubernetes, K2TheYoungerEqualPriorityPodIsTheOnlyVictim) {
  auto w = ht::WorkloadBuilder().job(0, 4, 1000).job(10, 4, 1000).job(20, 4, 100).build();
  set(w, 0, 100);   // A
  set(w, 1, 100);   // B
  set(w, 2, 1000);  // H
  const K8sRun r(w, nodes(1, 8));
  EXPECT_EQ(r.preemptions(0), 0) << "A is older, so reprieved";
  EXPECT_EQ(r.preemptions(1), 1) << "B is the only victim";
  EXPECT_EQ(r.start(2), 50) << "H binds once B's 30 s grace period is over";
  EXPECT_EQ(r.end(0), 1000) << "A keeps running";
  EXPECT_EQ(r.end(1), 150 + 1000) << "B, recreated at 50, runs again when H ends at 150";
  EXPECT_EQ(r.state(1), JobState::Completed);

  const K8sRun fast(w, nodes(1, 8), params({{"termination_grace_period", "5s"}}));
  EXPECT_EQ(fast.start(2), 25);
}

TEST(Kubernetes, NominatedNodeIsReservedForThePreemptor) {
  // Grace 0: B goes at once, but H is still in backoff (1 s); C, of B's priority, must not take
  // the room H was nominated for; B (recreated at 20) queues before C (20.5).
  auto w = ht::WorkloadBuilder().job(0, 4, 1000).job(10, 4, 1000).job(20, 4, 100).job(20.5, 4, 10).build();
  set(w, 0, 100);
  set(w, 1, 100);
  set(w, 2, 1000);
  set(w, 3, 100);
  const K8sRun r(w, nodes(1, 8), params({{"termination_grace_period", "0s"}}));
  EXPECT_EQ(r.start(2), 21) << "binds when its backoff ends";
  EXPECT_EQ(r.sim->job_placement(1).at(0).node, 0u);
  EXPECT_EQ(r.end(1), 121 + 1000) << "B restarts when H ends";
  EXPECT_EQ(r.start(3), 1000) << "C waits for A";
}

// --- K3 / K4 ---------------------------------------------------------------------------------

TEST(Kubernetes, K3EvictsOnTheNodeWithTheLowestHighestPriorityVictim) {
  // L1 first: the priority queue would otherwise place L2 first.
  auto w = ht::WorkloadBuilder().job(0, 4, 1000).job(1, 4, 1000).job(20, 4, 100).build();
  set(w, 0, 10);   // L1
  set(w, 1, 50);   // L2
  set(w, 2, 100);  // H
  const K8sRun r(w, nodes(2, 4));
  EXPECT_EQ(r.node(1), 1u);
  EXPECT_EQ(r.preemptions(0), 1) << "L1 is preempted";
  EXPECT_EQ(r.preemptions(1), 0) << "L2 is untouched";
  EXPECT_EQ(r.start(2), 50);
  EXPECT_EQ(r.node(2), 0u);
  EXPECT_EQ(r.end(1), 1001);
  EXPECT_EQ(r.end(0), 150 + 1000);
}

TEST(Kubernetes, K4PreemptionPolicyNeverEvictsNobodyAndPriorityOrdersTheQueue) {
  auto w = ht::WorkloadBuilder().job(0, 4, 200).job(1, 4, 100).job(5, 4, 10).job(10, 4, 1000).build();
  set(w, 0, 10);   // L1
  set(w, 1, 50);   // L2
  set(w, 2, 10);   // L3, queued before H
  set(w, 3, 100);  // H
  w.jobs[3].preempt_never = true;
  const K8sRun r(w, nodes(2, 4));
  for (JobIndex j = 0; j < 4; ++j) EXPECT_EQ(r.preemptions(j), 0);
  EXPECT_EQ(r.start(3), 101) << "H binds when L2 finishes";
  EXPECT_EQ(r.node(3), 1u);
  EXPECT_EQ(r.start(2), 200) << "L3 waits for L1 although it was queued first";

  // Without Never, H preempts L1 at once.
  w.jobs[3].preempt_never = false;
  const K8sRun p(w, nodes(2, 4));
  EXPECT_EQ(p.preemptions(0), 1);
  EXPECT_EQ(p.start(3), 40);
}

// --- K5 --------------------------------------------------------------------------------------

TEST(Kubernetes, K5QuotaRejectsAtAdmissionAndTheControllerRetries) {
  auto w = ht::WorkloadBuilder().job(0, 4, 100, "team").job(5, 1, 10, "team").job(6, 4, 50, "other").build();
  const K8sRun r(w, nodes(1, 8), params({{"quota.team.gpu", "4"}}));
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.start(2), 6) << "other namespaces are not limited";
  // Refused at 5, created again every 10 s: 15, ..., 95 still over quota; 105 admitted.
  EXPECT_EQ(r.start(1), 105);
  EXPECT_EQ(r.state(1), JobState::Completed) << "pending while refused, never Rejected";

  const K8sRun slow(w, nodes(1, 8), params({{"quota.team.gpu", "4"}, {"quota_retry", "30s"}}));
  EXPECT_EQ(slow.start(1), 125);

  // A pod larger than the whole quota is never admitted; it ends Unfinished, not Rejected.
  const K8sRun never(w, nodes(1, 8), params({{"quota.team.gpu", "0"}}));
  EXPECT_EQ(never.state(0), JobState::Unfinished);
  EXPECT_EQ(never.state(1), JobState::Unfinished);
  EXPECT_EQ(never.start(2), 6);
}

// --- queue -----------------------------------------------------------------------------------

namespace {
// F holds the whole 8-GPU node for `f_runtime`; X (1 GPU) arrives at 10. With `churn`, 0-GPU
// pods start and end every 0.5 s until `churn_until`, so each of X's failures is followed by a
// cluster event that moves it to the backoff queue.
models::Workload backoff_workload(double f_runtime, bool churn, double churn_until) {
  ht::WorkloadBuilder b;
  b.job(0, 8, f_runtime).job(10, 1, 10);
  if (churn)
    for (double t = 10.25; t < churn_until; t += 0.5) b.job(t, 0, 0.1);
  return b.build();
}
}  // namespace

TEST(KubernetesQueue, BackoffDoublesFromOneToTenSeconds) {
  // X fails at 10, 11, 13, 17 (backoff 1, 2, 4, 8 s) and would next try at 25.
  EXPECT_EQ(K8sRun(backoff_workload(20, true, 20), nodes(1, 8)).start(1), 25);
  // ... then 35 and 45 (capped at 10 s).
  EXPECT_EQ(K8sRun(backoff_workload(40, true, 40), nodes(1, 8)).start(1), 45);
  // podInitialBackoffSeconds 2, podMaxBackoffSeconds 4: tries at 10, 12, 16, 20.
  EXPECT_EQ(K8sRun(backoff_workload(19, true, 19), nodes(1, 8),
                   params({{"podInitialBackoffSeconds", "2"}, {"podMaxBackoffSeconds", "4"}}))
                .start(1),
            20);
  // Without cluster events X waits in the unschedulable pool; F's end moves it straight back.
  EXPECT_EQ(K8sRun(backoff_workload(20, false, 0), nodes(1, 8)).start(1), 20);
}

namespace {
// Forwards to the kubernetes policy and records when it is asked to schedule.
class RecordingPolicy final : public policies::Policy {
 public:
  explicit RecordingPolicy(std::unique_ptr<policies::Policy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  void on_submit(const policies::ClusterView& v, JobIndex j) override { inner_->on_submit(v, j); }
  void on_end(const policies::ClusterView& v, JobIndex j) override { inner_->on_end(v, j); }
  void on_requeue(const policies::ClusterView& v, JobIndex j) override { inner_->on_requeue(v, j); }
  void on_release(const policies::ClusterView& v, JobIndex j) override { inner_->on_release(v, j); }
  void schedule(policies::Session& s) override {
    passes.push_back(sim::to_seconds(s.now()));
    inner_->schedule(s);
  }
  std::vector<double> passes;

 private:
  std::unique_ptr<policies::Policy> inner_;
};
}  // namespace

TEST(KubernetesQueue, UnschedulablePodsAreRetriedEveryFiveMinutesWithoutEvents) {
  // X fails at 10; with no cluster event until F ends at 1000 it is retried when it has been in
  // the unschedulable pool for 5 minutes: 310, 610, 910. The timer asked for at 910 still fires
  // at 1210 (a wake cannot be withdrawn) and finds nothing to do; nothing else wakes the policy.
  const auto w = backoff_workload(1000, false, 0);
  const auto c = nodes(1, 8);
  RecordingPolicy p(policies::make_policy("kubernetes", {}, 1));
  simulation::Simulation sim(w, c, p, nullptr);
  sim.run();
  EXPECT_EQ(p.passes, (std::vector<double>{0, 10, 310, 610, 910, 1000, 1010, 1210}));
  EXPECT_EQ(sim.job_start(1), 1000 * kSecond);

  RecordingPolicy q(policies::make_policy("kubernetes", params({{"podMaxInUnschedulablePodsDuration", "10m"}}), 1));
  simulation::Simulation sim2(w, c, q, nullptr);
  sim2.run();
  EXPECT_EQ(q.passes, (std::vector<double>{0, 10, 610, 1000, 1010, 1210}));
}

// --- Jobs wider than one node: pods bound one by one (docs/policies.md, "One workload model") --

TEST(KubernetesPods, WideJobBindsItsPodsOneByOneAndRunsFromItsLastPod) {
  // 2 nodes x 8 GPUs. S (4 GPUs, t 0..100) takes node 0. W (16 GPUs, 10 s of work) arrives at 1 s:
  // two 8-GPU pods. The first binds node 1 at once and holds it idle; the second fits nowhere
  // until S ends at 100 s. W's work runs 100..110.
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(1, 16, 10).build();
  const K8sRun r(w, nodes(2, 8));
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.start(1), 100);
  EXPECT_EQ(r.end(1), 110);
  ASSERT_EQ(r.sim->job_placement(1).size(), 2u);
  EXPECT_EQ(r.sim->job_placement(1)[0].node, 1u) << "the first pod, bound at 1 s";
  EXPECT_EQ(r.sim->job_placement(1)[0].gpus, 8);
  EXPECT_EQ(r.sim->job_placement(1)[1].node, 0u);
  EXPECT_EQ(r.sim->job_placement(1)[1].gpus, 8);
  EXPECT_EQ(r.sim->held_idle_gpu_ms(), 8 * 99 * kSecond) << "8 GPUs held idle from 1 s to 100 s";
}

namespace {
// Records the reason of each job's terminal event (Finish, or Unfinished at the end of the run)
// and the used GPUs of each sample.
class EndReasons : public models::SimObserver {
 public:
  void on_event(sim::Tick, models::AuditKind k, JobIndex j, std::int32_t, std::string_view reason) override {
    if (k == models::AuditKind::Finish) reasons[j] = std::string(reason);
    if (k == models::AuditKind::Unfinished) unfinished[j] = std::string(reason);
  }
  void on_start(sim::Tick, JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample& s) override { used.push_back(s.pool_used_gpus[0]); }
  std::map<JobIndex, std::string> reasons, unfinished;
  std::vector<std::int32_t> used;
};
}  // namespace

TEST(KubernetesPods, PartialPlacementDeadlocksTwoWideJobs) {
  // S (4 GPUs) holds node 0 until 100 s. A (16 GPUs) binds one pod on node 1 at 1 s. B (16 GPUs,
  // priority 10, so first in the active queue) arrives at 100 s, when S ends: B's first pod takes
  // node 0, A's second finds nothing, and each holds one node waiting for the other: neither ever
  // runs (kubeflow/trainer#165). Coscheduling (PodGroup minMember) avoids it.
  auto w = ht::WorkloadBuilder().job(0, 4, 100).job(1, 16, 10).job(100, 16, 10).build();
  set(w, 2, 10);
  EndReasons why;
  const K8sRun r(w, nodes(2, 8), {}, 1, &why);
  EXPECT_EQ(r.state(1), JobState::Unfinished);
  EXPECT_EQ(r.state(2), JobState::Unfinished);
  EXPECT_EQ(r.sim->job_start(1), -1) << "never started";
  EXPECT_GT(r.sim->held_idle_gpu_ms(), 0);
  // Each stranded job's last word says what holds the cluster.
  const std::string deadlock =
      "never scheduled: no further event could start it (deadlock: 2 jobs hold 16 GPUs through pods bound while "
      "their other pods wait; no gang scheduling)";
  EXPECT_EQ(why.unfinished[1], deadlock);
  EXPECT_EQ(why.unfinished[2], deadlock);

  const K8sRun gang(w, nodes(2, 8), params({{"coscheduling", "true"}}));
  EXPECT_EQ(gang.state(1), JobState::Completed);
  EXPECT_EQ(gang.state(2), JobState::Completed);
  EXPECT_EQ(gang.start(2), 100) << "B (priority 10) is tried first once both nodes are free";
  EXPECT_EQ(gang.start(1), 110);
  EXPECT_EQ(gang.sim->held_idle_gpu_ms(), 0) << "a PodGroup binds all its pods or none";
}

TEST(KubernetesPods, NodeFailureDeletesBoundPodsAndTheControllerRecreatesThem) {
  // W's first pod binds node 1 at 1 s while S holds node 0; node 1 fails at 50 s for 100 s (its
  // bound pod is deleted). S ends at 100 s: a new first pod binds node 0 and waits for node 1,
  // back at 150 s, when the second binds and W starts.
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(1, 16, 10).build();
  simulation::SimulationOptions o;
  models::FailureEvent e;
  e.at = 50 * kSecond;
  e.duration = 100 * kSecond;
  e.nodes = {1};
  e.what = "node 1";
  o.failures.events.push_back(e);
  const auto c = nodes(2, 8);
  auto policy = policies::make_policy("kubernetes", {}, 1);
  simulation::Simulation sim(w, c, *policy, nullptr, o);
  sim.run();
  EXPECT_EQ(sim.job_state(1), JobState::Completed);
  EXPECT_EQ(sim.job_start(1), 150 * kSecond);
  EXPECT_EQ(sim.held_idle_gpu_ms(), 8 * 99 * kSecond) << "pod 1 held 1..50 s (deleted), again 100..150 s";
}

TEST(KubernetesQueue, NoHeadOfLineBlocking) {
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(1, 8, 10).job(2, 2, 10).build();
  const K8sRun r(w, nodes(1, 8));
  EXPECT_EQ(r.start(2), 2) << "the small pod passes the big one that does not fit";
  EXPECT_EQ(r.start(1), 100);
}

TEST(KubernetesQueue, PodLargerThanEveryNodeStaysPendingAndIsNeverRejected) {
  auto w = ht::WorkloadBuilder().job(0, 2, 50).job(1, 8, 10).job(2, 2, 10).build();
  set(w, 1, 1000, 64);  // high priority, but no eviction can make 64 cores fit a 32-core node
  const K8sRun r(w, nodes(2, 8, 32));
  EXPECT_EQ(r.state(1), JobState::Unfinished);
  EXPECT_EQ(r.preemptions(0), 0);
  EXPECT_EQ(r.start(2), 2);
  EXPECT_EQ(r.end(0), 50);
  EXPECT_LE(r.stats.end, 60 * kSecond) << "no timers for a pod that fits no node (the last sample is at 60 s)";
}

TEST(KubernetesQueue, CpuAndMemoryFilterWhereTheNodeModelsThem) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(1, 1, 10).job(2, 1, 10).build();
  set(w, 0, 0, 60, 0);
  set(w, 1, 0, 8, 0);           // 8 cores: only node 1 has them
  set(w, 2, 0, 0, 300 * kGiB);  // more memory than any node: Pending
  const K8sRun r(w, nodes(2, 8, 64, 256));
  EXPECT_EQ(r.node(0), 0u);
  EXPECT_EQ(r.node(1), 1u);
  EXPECT_EQ(r.state(2), JobState::Unfinished);
  // Where memory is not modelled, it does not filter.
  const K8sRun unmodelled(w, nodes(2, 8, 64, 0));
  EXPECT_EQ(unmodelled.start(2), 2);
}

TEST(KubernetesQueue, SeededTieBreakIsDeterministicAndSpreadsTies) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 40; ++i) b.job(i, 1, 1000);
  const auto w = b.build();
  const auto seeded = params({{"tie_break", "seeded"}});
  // Nothing models cpu/memory, so every feasible node ties.
  const K8sRun a(w, nodes(8, 8), seeded, 7), again(w, nodes(8, 8), seeded, 7), index(w, nodes(8, 8));
  EXPECT_EQ(a.stats.fingerprint, again.stats.fingerprint);
  bool differs = false;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(a.node(j), again.node(j));
    differs = differs || a.node(j) != index.node(j);
  }
  EXPECT_TRUE(differs);
  for (JobIndex j = 0; j < 8; ++j) EXPECT_EQ(index.node(j), 0u) << "index order fills node 0 first";
}

// --- invariants ------------------------------------------------------------------------------

namespace {

class CapacityObserver : public models::SimObserver {
 public:
  CapacityObserver(const models::Workload& w, const models::ClusterSpec& c) : w_(w), ends(w.jobs.size(), 0) {
    for (const auto& p : c.pools)
      for (int i = 0; i < p.nodes; ++i) cap_.push_back({p.gpus_per_node, p.cpus_per_node, p.memory_gib * kGiB});
    used_.assign(cap_.size(), {0, 0, 0});
    where_.resize(w.jobs.size());
    last_start.assign(w.jobs.size(), -1);
  }
  void on_event(sim::Tick, models::AuditKind k, JobIndex j, std::int32_t, std::string_view) override {
    if (k != models::AuditKind::Finish && k != models::AuditKind::Requeue) return;
    for (const auto& s : where_[j]) {
      used_[s.node][0] -= s.gpus;
      used_[s.node][1] -= s.cpus;
      used_[s.node][2] -= s.memory_mib;
    }
    where_[j].clear();
  }
  void on_start(sim::Tick t, JobIndex j, const models::Placement& p) override {
    EXPECT_TRUE(where_[j].empty()) << "job " << j << " started twice";
    where_[j] = p;
    last_start[j] = t;
    for (const auto& s : p) {
      auto& u = used_[s.node];
      u[0] += s.gpus;
      u[1] += s.cpus;
      u[2] += s.memory_mib;
      if (u[0] > cap_[s.node][0] || (cap_[s.node][1] > 0 && u[1] > cap_[s.node][1]) ||
          (cap_[s.node][2] > 0 && u[2] > cap_[s.node][2]))
        ++overcommits;
    }
  }
  void on_end(sim::Tick, JobIndex j, JobState) override { ++ends[j]; }
  void on_sample(const models::Sample&) override {}

  const models::Workload& w_;
  std::vector<std::array<std::int64_t, 3>> cap_, used_;
  std::vector<models::Placement> where_;
  std::vector<int> ends;
  std::vector<sim::Tick> last_start;
  int overcommits = 0;
};

models::Workload random_pods(std::uint64_t seed, int n) {
  sim::RngStream rng(seed, "test/kubernetes");
  ht::WorkloadBuilder b;
  double t = 0;
  // Single pods only: jobs wider than a node are multi-pod jobs that may deadlock (KubernetesPods).
  static const int kGpus[] = {0, 1, 1, 1, 2, 4, 8, 3, 6};
  for (int i = 0; i < n; ++i) {
    t += std::floor(rng.exponential(1.0 / 20.0));
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const std::string tenant = "tenant" + std::to_string(rng.below(3));
    const double run = std::floor(rng.lognormal(4.5, 1.2));
    b.job(t, kGpus[rng.below(9)], run, tenant);
  }
  auto w = b.build();
  for (auto& j : w.jobs) {
    j.priority = static_cast<std::int32_t>(rng.below(4)) * 100;
    j.preempt_never = rng.bernoulli(0.1);
    j.cpus = static_cast<std::int32_t>(rng.below(17));
    j.memory_mib = static_cast<std::int64_t>(rng.below(65)) * kGiB;
  }
  return w;
}

}  // namespace

class KubernetesProperties : public ::testing::TestWithParam<std::tuple<std::uint64_t, std::string>> {};

TEST_P(KubernetesProperties, NoOvercommitEveryJobEndsOnceNothingRejected) {
  const auto& [seed, strategy] = GetParam();
  const auto w = random_pods(seed, 600);
  const auto c = nodes(4, 8, 32, 128);
  auto p = params({{"scoringStrategy.type", strategy},
                   {"tie_break", seed % 2 == 0 ? "seeded" : "index"},
                   {"termination_grace_period", std::to_string(seed * 7 % 40) + "s"},
                   {"quota.tenant0.gpu", "8"}});
  if (strategy == "RequestedToCapacityRatio") p["scoringStrategy.shape"] = {"0:0,50:8,100:10", "t.yaml", 9, 3};
  CapacityObserver obs(w, c);
  const K8sRun r(w, c, p, seed, &obs);
  EXPECT_EQ(obs.overcommits, 0);
  int preempted = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    const auto& job = w.jobs[j];
    EXPECT_EQ(obs.ends[j], 1) << "job " << j;
    const JobState s = r.state(j);
    EXPECT_NE(s, JobState::Rejected);
    preempted += r.preemptions(j) > 0;
    // A 16-GPU job is two 8-GPU pods (models::pod_gpus); tenant0's quota admits no more than 8.
    const bool can_run =
        job.cpus <= 32 && job.memory_mib <= 128 * kGiB && (job.tenant != w.tenants.find("tenant0") || job.gpus <= 8);
    if (can_run) {
      EXPECT_EQ(s, JobState::Completed) << "job " << j << " (" << job.gpus << " GPUs)";
      EXPECT_EQ(r.sim->job_end(j) - obs.last_start[j], job.runtime) << "job " << j;
    } else {
      EXPECT_EQ(s, JobState::Unfinished) << "job " << j;
    }
  }
  EXPECT_GT(preempted, 0);
  for (const auto& u : obs.used_) EXPECT_EQ(u[0], 0);
  // Deterministic: the same seed gives the same run.
  const K8sRun again(w, c, p, seed);
  EXPECT_EQ(r.stats.fingerprint, again.stats.fingerprint);
}

INSTANTIATE_TEST_SUITE_P(Seeds, KubernetesProperties,
                         ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u),
                                            ::testing::Values("LeastAllocated", "MostAllocated",
                                                              "RequestedToCapacityRatio")));

TEST(KubernetesProperties, ManyNodesScoreInParallelDeterministically) {
  // 1,000 nodes take the parallel scoring path; one thread or many give the same run.
  const auto w = random_pods(9, 1500);
  const auto c = nodes(1000, 8, 32, 128);
  const auto p = params({{"tie_break", "seeded"}});
  const K8sRun many(w, c, p, 3);
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  const K8sRun single(w, c, p, 3);
  EXPECT_EQ(many.stats.fingerprint, single.stats.fingerprint);
}

// --- parameters ------------------------------------------------------------------------------

namespace {
const std::string kInline = headroom::testing::kInlineScenario;
const std::string kScenario = R"(name: k8s
cluster:
  pools:
    - name: a100
      nodes: 2
      gpus_per_node: 8
      gpu_type: A100
      cpus_per_node: 64
      memory_gib: 256
policy:
  name: kubernetes
  scoringStrategy:
    type: MostAllocated
    resources: {gpu: 3, cpu: 1, memory: 1}
  termination_grace_period: 45s
  podMaxBackoffSeconds: 20
  tie_break: seeded
  quota:
    team-a:
      gpu: 4
workload:
  trace: tiny.csv
)";

}  // namespace

TEST(KubernetesParams, ScenarioBlockUsesKubeSchedulerVocabulary) {
  const auto s = scenarios::parse_scenario(kScenario, kInline);
  EXPECT_EQ(s.policy.name, "kubernetes");
  const auto cfg = k8s::parse_config(s.policy.params);
  EXPECT_EQ(cfg.scoring.type, k8s::ScoringType::MostAllocated);
  EXPECT_EQ(cfg.scoring.gpu_weight, 3);
  EXPECT_EQ(cfg.scoring.cpu_weight, 1);
  EXPECT_EQ(cfg.termination_grace_period, 45 * kSecond);
  EXPECT_EQ(cfg.initial_backoff, 1 * kSecond);
  EXPECT_EQ(cfg.max_backoff, 20 * kSecond);
  EXPECT_TRUE(cfg.seeded_tie_break);
  EXPECT_EQ(cfg.quota.at("team-a").gpu, 4);
  EXPECT_NE(policies::make_policy(s.policy.name, s.policy.params, 1), nullptr);

  // Defaults.
  const auto d = k8s::parse_config({});
  EXPECT_EQ(d.scoring.type, k8s::ScoringType::LeastAllocated);
  EXPECT_EQ(d.scoring.gpu_weight, 0);
  EXPECT_EQ(d.termination_grace_period, 30 * kSecond);
  EXPECT_EQ(d.max_in_unschedulable, 5 * sim::kMinute);
  EXPECT_EQ(d.quota_retry, 10 * kSecond);
}

TEST(KubernetesParams, BadValuesNameTheirLocation) {
  ht::expect_one_error(
      replace(kScenario, "type: MostAllocated", "type: Most"), 13, "policy.scoringStrategy.type",
      "unknown scoring strategy \"Most\"; expected: LeastAllocated, MostAllocated, RequestedToCapacityRatio", 11);

  auto errors = scenario_errors(replace(kScenario, "gpu: 3", "gpu: 300"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 14);
  EXPECT_EQ(errors[0].where(), "policy.scoringStrategy.resources.gpu");

  errors = scenario_errors(replace(kScenario, "      gpu: 4", "      gpus: 4"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 20);
  EXPECT_EQ(errors[0].message(), "unknown parameter \"quota.team-a.gpus\" for policy kubernetes");

  errors = scenario_errors(replace(kScenario, "45s", "soon"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 15);
  EXPECT_EQ(errors[0].column(), 29);

  errors = scenario_errors(replace(kScenario, "podMaxBackoffSeconds: 20", "podMaxBackoffSeconds: 0"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 16);

  errors = scenario_errors(replace(kScenario, "tie_break: seeded", "tie_break: random"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message(), "unknown tie_break \"random\"; expected: index, seeded");

  // RequestedToCapacityRatio needs a shape; a shape needs RequestedToCapacityRatio.
  errors = scenario_errors(replace(kScenario, "MostAllocated", "RequestedToCapacityRatio"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 13);
  errors = scenario_errors(replace(kScenario, "    resources:", "    shape: \"0:0,100:10\"\n    resources:"));
  ASSERT_EQ(errors.size(), 1u);
  errors = scenario_errors(
      replace(kScenario, "type: MostAllocated", "type: RequestedToCapacityRatio\n    shape: \"0:0,100:11\""));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where(), "policy.scoringStrategy.shape");

  const auto ok = scenarios::parse_scenario(
      replace(kScenario, "type: MostAllocated", "type: RequestedToCapacityRatio\n    shape: \"0:0, 100:10\""), kInline);
  EXPECT_EQ(k8s::parse_config(ok.policy.params).scoring.shape.size(), 2u);

  EXPECT_THROW(policies::make_policy("kubernetes", params({{"quota.t.gpu", "-1"}}), 1), sim::InputError);
  EXPECT_TRUE(policies::check_policy("kubernetes", params({{"quota.a.b.gpu", "2"}}), "", 0, 0).empty())
      << "tenant names may hold dots";
}

// --- device plugin: time-slicing (K6) and MIG ---------------------------------------------------

namespace {

const std::map<std::string, std::string> kReplicas4 = {{"devicePlugin.sharing.timeSlicing.replicas", "4"}};

}  // namespace

TEST(Kubernetes, K6TimeSlicingAdvertisesFourUnitsAndTheFifthPodWaits) {
  // One node with one GPU and replicas 4: five 1-unit pods of 100 s at 0.
  const auto w =
      ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).build();
  EndReasons obs;
  const K8sRun r(w, nodes(1, 1), params(kReplicas4), 1, &obs);
  for (JobIndex j = 0; j < 4; ++j) {
    EXPECT_EQ(r.start(j), 0) << "the first four pods share the one GPU";
    EXPECT_EQ(r.node(j), 0u);
    EXPECT_EQ(r.end(j), 400) << "each gets a quarter of the GPU's throughput";
  }
  EXPECT_EQ(r.start(4), 400) << "the fifth stays Pending until a replica frees";
  EXPECT_EQ(r.end(4), 500) << "alone on the GPU, it runs at full speed";
  ASSERT_FALSE(obs.used.empty());
  EXPECT_EQ(obs.used.front(), 1) << "samples count the physical GPU, not the 4 units";

  // Whole GPUs (no time-slicing): one pod at a time.
  const K8sRun whole(w, nodes(1, 1));
  EXPECT_EQ(whole.start(1), 100);
  EXPECT_EQ(whole.start(4), 400);
  EXPECT_EQ(whole.end(4), 500);
}

TEST(KubernetesDevicePlugin, TimeSlicedPodsSlowDownWhileTheyShareAGpu) {
  // replicas 2 on one 1-GPU node: A (100 s) and B (50 s) at 0 run at half speed; B's 50 s of work
  // end at 100, then A runs alone at full speed for its last 50 s: 150.
  const auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 50).build();
  const auto p = params({{"devicePlugin.sharing.timeSlicing.replicas", "2"}});
  const K8sRun r(w, nodes(1, 1), p);
  EXPECT_EQ(r.end(1), 100);
  EXPECT_EQ(r.end(0), 150);
  // On a 2-GPU node the two units sit on different GPUs: no slowdown.
  const K8sRun two(w, nodes(1, 2), p);
  EXPECT_EQ(two.end(0), 100);
  EXPECT_EQ(two.end(1), 50);
  // C (1 unit) joins A and B at 20 on a 2-GPU node with replicas 2: three pods on two GPUs run at
  // 2/3 each (the node's average). By 20: A 80 s left, B 30 s left. B ends at 20 + 30 x 3/2 = 65; then A (80 - 30 =
  // 50 s left) and C (100 - 30 = 70 s left) run at full speed: A ends at 115, C at 135.
  const auto w3 = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 50).job(20, 1, 100).build();
  const K8sRun three(w3, nodes(1, 2), p);
  EXPECT_EQ(three.end(1), 65);
  EXPECT_EQ(three.end(0), 115);
  EXPECT_EQ(three.end(2), 135);
}

TEST(KubernetesDevicePlugin, PreemptedTimeSlicedPodKeepsOnlyTheWorkItDid) {
  // replicas 2, 1 GPU: L1 and L2 (priority 0, 100 s) share the GPU from 0. H (priority 10, 2
  // units) at 20 preempts both (grace 30 s: they stop at 50, having done 25 s each). Recreated
  // pods restart from scratch (Requeue) once H, alone on the GPU at full speed, ends at 150.
  const auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).job(20, 2, 100).build();
  auto wl = w;
  wl.jobs[2].priority = 10;
  const auto p = params({{"devicePlugin.sharing.timeSlicing.replicas", "2"}});
  const K8sRun r(wl, nodes(1, 1), p);
  EXPECT_EQ(r.preemptions(0), 1);
  EXPECT_EQ(r.preemptions(1), 1);
  EXPECT_EQ(r.start(2), 50);
  EXPECT_EQ(r.end(2), 150) << "one pod holding both replicas: one share, the whole GPU";
  EXPECT_EQ(r.end(0), 350) << "both restart at 150 and share the GPU: 200 s";
  EXPECT_EQ(r.end(1), 350);
}

TEST(Kubernetes, K6FailRequestsGreaterThanOneBindsThenFailsAtAdmission) {
  const auto w = ht::WorkloadBuilder().job(0, 2, 100).job(1, 1, 100).build();
  auto p = kReplicas4;
  p["devicePlugin.sharing.timeSlicing.failRequestsGreaterThanOne"] = "true";
  EndReasons obs;
  const K8sRun r(w, nodes(1, 1), params(p), 1, &obs);
  EXPECT_EQ(r.start(0), 0) << "the scheduler binds the 2-unit pod";
  EXPECT_EQ(r.state(0), JobState::Failed);
  EXPECT_EQ(r.end(0), 0);
  EXPECT_EQ(obs.reasons.at(0).rfind("UnexpectedAdmissionError", 0), 0u) << obs.reasons.at(0);
  EXPECT_EQ(r.start(1), 1);
  EXPECT_EQ(r.state(1), JobState::Completed);

  // Default (false): the 2-unit pod runs, holding two replicas but one share of the GPU: alone for
  // 1 s, then at half speed beside the 1-unit pod (99 s of work take 198 s); that pod's last second
  // runs alone.
  const K8sRun lenient(w, nodes(1, 1), params(kReplicas4));
  EXPECT_EQ(lenient.state(0), JobState::Completed);
  EXPECT_EQ(lenient.end(0), 199);
  EXPECT_EQ(lenient.end(1), 200);
  // Without time-slicing the flag does nothing.
  p.erase("devicePlugin.sharing.timeSlicing.replicas");
  const K8sRun whole(w, nodes(1, 2), params(p));
  EXPECT_EQ(whole.state(0), JobState::Completed);
}

namespace {
models::Workload mig_workload(const std::vector<std::pair<std::string, int>>& pods) {
  ht::WorkloadBuilder b;
  for (std::size_t i = 0; i < pods.size(); ++i) b.job(static_cast<double>(i), pods[i].second, 100);
  auto w = b.build();
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].first.empty()) continue;
    auto it = std::find(w.gpu_type_names.begin(), w.gpu_type_names.end(), pods[i].first);
    if (it == w.gpu_type_names.end()) it = w.gpu_type_names.insert(w.gpu_type_names.end(), pods[i].first);
    w.jobs[i].gpu_type = static_cast<std::uint16_t>(it - w.gpu_type_names.begin() + 1);
  }
  return w;
}
}  // namespace

TEST(KubernetesDevicePlugin, MigMixedProfilesAreIndependentIntegerResources) {
  // Pool "mig": 1 node x 1 A100 cut into 3g.20gb + 2g.10gb + 2 x 1g.5gb; pool "plain": 1 whole GPU.
  models::ClusterSpec c;
  c.pools.push_back({"mig", 1, 1, "A100", 0, 0});
  c.pools.push_back({"plain", 1, 1, "A100", 0, 0});
  const auto w = mig_workload({{"mig-1g.5gb", 2}, {"mig-1g.5gb", 1}, {"mig-3g.20gb", 1}, {"", 1}, {"mig-2g.10gb", 2}});
  const auto p = params({{"devicePlugin.migStrategy", "mixed"},
                         {"devicePlugin.migDevices.mig.3g.20gb", "1"},
                         {"devicePlugin.migDevices.mig.2g.10gb", "1"},
                         {"devicePlugin.migDevices.mig.1g.5gb", "2"}});
  const K8sRun r(w, c, p);
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.node(0), 0u);
  EXPECT_EQ(r.start(1), 100) << "no 1g.5gb slice left, although 3g and 2g slices are free";
  EXPECT_EQ(r.start(2), 2) << "nvidia.com/mig-3g.20gb is its own resource";
  EXPECT_EQ(r.node(3), 1u) << "a whole-GPU pod: a MIG node advertises no nvidia.com/gpu under mixed";
  EXPECT_EQ(r.start(3), 3);
  EXPECT_EQ(r.state(4), JobState::Unfinished) << "asks for 2 x 2g.10gb; the node has one";
}

// A MIG-profile pod with a node selector (workload.node_selectors) goes only to its pools' nodes:
// the first node advertises the profile too, but its pool is not in the pod's set.
TEST(KubernetesDevicePlugin, MigProfilePodKeepsToItsNodeSelector) {
  models::ClusterSpec c;
  c.pools.push_back({"mig-a", 1, 1, "A100", 0, 0});
  c.pools.push_back({"mig-b", 1, 1, "A100", 0, 0});
  auto w = mig_workload({{"mig-1g.5gb", 1}, {"mig-1g.5gb", 1}});
  w.node_sets = {{"mig-b"}};
  w.jobs[0].node_set = 1;
  const auto p = params({{"devicePlugin.migStrategy", "mixed"},
                         {"devicePlugin.migDevices.mig-a.1g.5gb", "2"},
                         {"devicePlugin.migDevices.mig-b.1g.5gb", "2"}});
  const K8sRun r(w, c, p);
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.node(0), 1u) << "kept to mig-b";
  EXPECT_EQ(r.node(1), 0u) << "no selector: the first node";
}

// Whether a pod fits some node at all reads only the pools its node selector allows: a 16-GPU pod
// kept to 8-GPU nodes never binds although the 32-GPU node before them would hold it, and a pod
// kept to the pool after an ineligible one still finds its node there.
TEST(KubernetesNodeResourcesFit, FitsSomewhereReadsOnlyTheSelectedPools) {
  models::ClusterSpec c;
  c.pools.push_back({"big", 1, 32, "A100", 0, 0});
  c.pools.push_back({"small", 2, 8, "A100", 0, 0});
  auto w = ht::WorkloadBuilder().job(0, 16, 100).job(1, 8, 100).job(2, 16, 100).build();
  for (auto& j : w.jobs) j.gpus_per_node = j.gpus;
  w.node_sets = {{"small"}};
  w.jobs[0].node_set = 1;
  w.jobs[1].node_set = 1;
  const K8sRun r(w, c);
  EXPECT_EQ(r.state(0), JobState::Unfinished) << "a 16-GPU pod on 8-GPU nodes only";
  EXPECT_EQ(r.node(1), 1u) << "the first node of small";
  EXPECT_EQ(r.start(1), 1);
  EXPECT_EQ(r.node(2), 0u) << "no selector: the big node";
  EXPECT_EQ(r.start(2), 2);
}

TEST(KubernetesDevicePlugin, MigSingleAdvertisesSlicesAsGpus) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(i, 1, 100);
  const auto w = b.build();
  const auto p = params({{"devicePlugin.migStrategy", "single"}, {"devicePlugin.migDevices.pool.1g.5gb", "7"}});
  const K8sRun r(w, nodes(1, 1), p);
  for (JobIndex j = 0; j < 7; ++j) EXPECT_EQ(r.start(j), j);
  EXPECT_EQ(r.start(7), 100) << "seven 1g.5gb slices, seven nvidia.com/gpu";
}

TEST(KubernetesDevicePlugin, BadValuesNameTheirKey) {
  auto check = [](const std::map<std::string, std::string>& kv) {
    return policies::check_policy("kubernetes", params(kv), "", 0, 0);
  };
  auto errors = check({{"devicePlugin.migStrategy", "auto"}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message(), "unknown migStrategy \"auto\"; expected: none, single, mixed");
  errors = check({{"devicePlugin.sharing.timeSlicing.replicas", "0"}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where(), "policy.devicePlugin.sharing.timeSlicing.replicas");
  errors = check({{"devicePlugin.sharing.timeSlicing.failRequestsGreaterThanOne", "yes"}});
  ASSERT_EQ(errors.size(), 1u);
  errors = check({{"devicePlugin.migStrategy", "single"},
                  {"devicePlugin.migDevices.a.1g.5gb", "2"},
                  {"devicePlugin.migDevices.a.2g.10gb", "1"}});
  ASSERT_EQ(errors.size(), 1u) << "single needs one profile per node";
  errors = check({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.a.3g.20gb", "3"}});
  ASSERT_EQ(errors.size(), 1u) << "9 compute slices > 7";
  errors = check({{"devicePlugin.migDevices.a.1g.5gb", "7"}});
  ASSERT_EQ(errors.size(), 1u) << "a geometry without a MIG strategy";
  errors = check({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.a.big", "1"}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(check({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.a.b.1g.10gb", "4"}}).empty())
      << "pool names may hold dots";
  // A geometry for a pool the cluster lacks is reported when the run is set up.
  const auto w = ht::WorkloadBuilder().job(0, 1, 10).build();
  EXPECT_THROW(K8sRun(w, nodes(1, 1),
                      params({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.gpu.1g.5gb", "7"}})),
               sim::InputError);
}

TEST(KubernetesDevicePlugin, ScenarioBlockUsesTheDevicePluginVocabulary) {
  const std::string text = replace(kScenario, "  tie_break: seeded\n",
                                   "  tie_break: seeded\n"
                                   "  devicePlugin:\n"
                                   "    migStrategy: mixed\n"
                                   "    sharing: {timeSlicing: {replicas: 4, failRequestsGreaterThanOne: true}}\n"
                                   "    migDevices:\n"
                                   "      a100: {\"3g.20gb\": 1, \"1g.5gb\": 4}\n");
  const auto s = scenarios::parse_scenario(text, kInline);
  const auto cfg = k8s::parse_config(s.policy.params);
  EXPECT_EQ(cfg.device_plugin.mig_strategy, k8s::MigStrategy::Mixed);
  EXPECT_EQ(cfg.device_plugin.replicas, 4);
  EXPECT_TRUE(cfg.device_plugin.fail_requests_greater_than_one);
  EXPECT_EQ(cfg.device_plugin.mig_devices.at("a100").at("3g.20gb"), 1);
  EXPECT_EQ(cfg.device_plugin.mig_devices.at("a100").at("1g.5gb"), 4);
}

// --- device plugin: MIG geometries checked against the GPU model ---------------------------------

namespace {

// The message of the InputError the policy raises when the run is set up, or "".
std::string setup_error(const models::ClusterSpec& c, const policies::PolicyParams& p) {
  const auto policy = policies::make_policy("kubernetes", p, 1);
  try {
    policy->advertised_cluster(c);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "";
}

models::ClusterSpec mig_pool(const std::string& name, int gpus, const std::string& type) {
  models::ClusterSpec c;
  c.pools.push_back({name, 1, gpus, type, 0, 0});
  return c;
}

const std::string kMixedList =
    "[{devices: [0, 1, 2, 3], mig-devices: {3g.20gb: 2}}, {devices: [4, 5], mig-devices: {2g.10gb: 3}}, "
    "{devices: [6], mig-devices: {1g.5gb: 7}}]";

}  // namespace

TEST(KubernetesMig, ALayoutThatDoesNotFitTheMemorySlicesIsAConfigErrorAtItsPosition) {
  // Two 3g.20gb and a 1g.5gb use 7 compute slices, but the two 3g take all 8 memory slices of an
  // A100-40GB: nvidia-smi refuses the 1g. The bare "A100" is the 40 GB one: the 80 GB one has no
  // 1g.5gb.
  const std::string text = replace(kScenario, "  tie_break: seeded\n",
                                   "  tie_break: seeded\n"
                                   "  devicePlugin:\n"
                                   "    migStrategy: mixed\n"
                                   "    migDevices:\n"
                                   "      a100: {\"3g.20gb\": 2, \"1g.5gb\": 1}\n");
  // Found when the scenario is read (so by `headroom validate`), not only when a run sets up.
  std::string error;
  try {
    (void)scenarios::parse_scenario(text, kInline);
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    error = e.errors()[0].what();
  }
  EXPECT_EQ(error,
            kInline +
                ":21:38: policy.devicePlugin.migDevices.a100: MIG geometry {1g.5gb: 1, 3g.20gb: 2} of pool \"a100\" "
                "does not fit an A100-40GB: placed largest first at their highest free start, the instances before it "
                "take memory slices 0-7 of 8 and 1g.5gb (1 slice, starting at 0, 1, 2, 3, 4, 5, 6) has no free "
                "placement; expected instances that fit the GPU's 8 memory slices");
  // 3g.20gb + 2g.10gb + 2 x 1g.5gb fits (3g at slices 4-7).
  EXPECT_EQ(setup_error(mig_pool("a100", 8, "A100"), params({{"devicePlugin.migStrategy", "mixed"},
                                                             {"devicePlugin.migDevices.a100.3g.20gb", "1"},
                                                             {"devicePlugin.migDevices.a100.2g.10gb", "1"},
                                                             {"devicePlugin.migDevices.a100.1g.5gb", "2"}})),
            "");
}

TEST(KubernetesMig, ProfilesAndGpuTypesAreCheckedAgainstTheModel) {
  const auto mixed = [](const std::string& key, const std::string& value) {
    return params({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices." + key, value}});
  };
  EXPECT_EQ(setup_error(mig_pool("p", 8, "A100-SXM4-80GB"), mixed("p.1g.5gb", "7")),
            "test.yaml:1:3: policy.devicePlugin.migDevices.p: unknown MIG profile \"1g.5gb\" for pool \"p\" (GPU "
            "\"A100-SXM4-80GB\" = A100-80GB); expected one of: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb");
  EXPECT_EQ(setup_error(mig_pool("p", 8, "T4"), mixed("p", "all-balanced")),
            "test.yaml:1:3: policy.devicePlugin.migDevices.p: pool \"p\" has GPU type \"T4\", which has no MIG; "
            "expected an A100-40GB, A100-80GB, H100-80GB or A30 pool, or no geometry for it");
  EXPECT_EQ(setup_error(mig_pool("p", 4, "A30"), mixed("p", "all-3g.20gb")),
            "test.yaml:1:3: policy.devicePlugin.migDevices.p: MIG config \"all-3g.20gb\" of pool \"p\" does not exist "
            "for its GPU \"A30\"; expected all-disabled, all-enabled, all-balanced or all-<profile> with one of its "
            "profiles");
  EXPECT_EQ(setup_error(mig_pool("p", 4, "A100-40GB"), mixed("p", kMixedList)),
            "test.yaml:1:3: policy.devicePlugin.migDevices.p: GPU 4 in migDevices of pool \"p\": its nodes have 4 "
            "GPUs; expected indices 0 to 3");
  EXPECT_EQ(setup_error(mig_pool("p", 8, "A100-40GB"), mixed("p", "all-enabled")),
            "test.yaml:1:3: policy.devicePlugin.migDevices.p: pool \"p\" advertises no GPU resource: its GPUs are in "
            "MIG mode with no MIG devices");
  // migStrategy single: the device plugin's own checks (internal/rm/device_map.go).
  EXPECT_EQ(setup_error(mig_pool("p", 8, "A100-40GB"),
                        params({{"devicePlugin.migStrategy", "single"},
                                {"devicePlugin.migDevices.p", "[{devices: [0, 1], mig-devices: {1g.5gb: 7}}]"}})),
            "test.yaml:1:3: policy.devicePlugin.migDevices.p: migStrategy single: all devices on the node must be "
            "configured with the same migEnabled value; pool \"p\" has GPUs with MIG and GPUs without");
  // Parse-time checks of the list form.
  auto check = [](const std::map<std::string, std::string>& kv) {
    return policies::check_policy("kubernetes", params(kv), "", 0, 0);
  };
  auto errors = check({{"devicePlugin.migStrategy", "mixed"},
                       {"devicePlugin.migDevices.p", "[{devices: [0, 1], mig-devices: {1g.5gb: 7}}, {devices: [1]}]"}});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message(), "migDevices.p: entry 1: GPU 1 is already in entry 0; expected each GPU in one entry");
  errors = check({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.p", "all-custom"}});
  ASSERT_EQ(errors.size(), 1u);
  errors = check({{"devicePlugin.migStrategy", "mixed"},
                  {"devicePlugin.migDevices.p", "[{devices: all, mig-devices: {3g.20gb: 3}}]"}});
  ASSERT_EQ(errors.size(), 1u) << "9 compute slices > 7";
}

TEST(KubernetesMig, AllBalancedOnAnA100With40GBResolvesToTwo1gOne2gOne3g) {
  // One A100-40GB in all-balanced: 1g.5gb x2, 2g.10gb x1, 3g.20gb x1 (mig-parted
  // config-default.yaml), 4 units. Pods of 100 s, one a second.
  const auto c = mig_pool("bal", 1, "A100-SXM4-40GB");
  const auto p = params({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.bal", "all-balanced"}});
  EXPECT_EQ(policies::make_policy("kubernetes", p, 1)->advertised_cluster(c).pools[0].units_per_gpu, 4);
  const auto w = mig_workload({{"mig-1g.5gb", 1},
                               {"mig-1g.5gb", 1},
                               {"mig-1g.5gb", 1},
                               {"mig-2g.10gb", 1},
                               {"mig-3g.20gb", 1},
                               {"mig-2g.10gb", 1},
                               {"", 1}});
  const K8sRun r(w, c, p);
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.start(1), 1);
  EXPECT_EQ(r.start(2), 100) << "two 1g.5gb instances: the third waits for the first to end";
  EXPECT_EQ(r.start(3), 3);
  EXPECT_EQ(r.start(4), 4);
  // One 2g.10gb instance. Pod 5 fails at 5 (backoff 1 s), again at 100 when pod 0 ends (2 s) and
  // at 102 when that backoff is over (4 s); pod 3 ends at 103, and the backoff keeps it until 106.
  EXPECT_EQ(r.start(5), 106);
  EXPECT_EQ(r.state(6), JobState::Unfinished) << "an all-MIG node advertises no nvidia.com/gpu under mixed";
  auto short_backoff = p;
  short_backoff["podMaxBackoffSeconds"] = policies::ParamValue{"1", "test.yaml", 9, 3};
  EXPECT_EQ(K8sRun(w, c, short_backoff).start(5), 103) << "with backoffs of 1 s, as soon as pod 3 ends";
}

TEST(KubernetesMig, MixedGeometriesAcrossTheGpusOfANodeAddUp) {
  // One node of 8 A100-40GB: GPUs 0-3 2 x 3g.20gb, GPUs 4-5 3 x 2g.10gb, GPU 6 7 x 1g.5gb, GPU 7
  // whole. It advertises nvidia.com/mig-3g.20gb 8, mig-2g.10gb 6, mig-1g.5gb 7 and nvidia.com/gpu
  // 1: 22 units.
  const auto c = mig_pool("mix", 8, "A100-SXM4-40GB");
  const auto p = params({{"devicePlugin.migStrategy", "mixed"}, {"devicePlugin.migDevices.mix", kMixedList}});
  const auto advertised = policies::make_policy("kubernetes", p, 1)->advertised_cluster(c);
  EXPECT_EQ(advertised.pools[0].units_per_node, 22);
  const auto w = mig_workload({{"mig-2g.10gb", 4},
                               {"mig-2g.10gb", 2},
                               {"mig-2g.10gb", 1},
                               {"", 1},
                               {"", 1},
                               {"mig-3g.20gb", 8},
                               {"mig-2g.10gb", 7},
                               {"mig-1g.5gb", 7}});
  EndReasons obs;
  const K8sRun r(w, c, p, 1, &obs);
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.start(1), 1) << "6 mig-2g.10gb in use";
  EXPECT_EQ(r.start(2), 100) << "waits for the first pod's four 2g.10gb";
  EXPECT_EQ(r.start(3), 3) << "GPU 7 is whole: one nvidia.com/gpu";
  // The only whole GPU is taken until 103; pod 4's backoff (failures at 4, 100 and 102, as in
  // the test above) lasts until 106.
  EXPECT_EQ(r.start(4), 106);
  EXPECT_EQ(r.start(5), 5);
  EXPECT_EQ(r.state(6), JobState::Unfinished) << "7 x 2g.10gb: the node has 6";
  EXPECT_EQ(r.start(7), 7);
  // Samples (one a minute) count GPUs: u of the node's 22 units in use are ceil(u x 8 / 22) GPUs:
  // at 60 s all 22 units, 8 GPUs; at 120 s and 180 s pods 2 and 4 hold 2 units, 1 GPU.
  ASSERT_GE(obs.used.size(), 4u);
  EXPECT_EQ(obs.used[1], 8);
  EXPECT_EQ(obs.used[2], 1);
  EXPECT_EQ(obs.used[3], 1);

  // The scenario's list (a YAML sequence of mig-parted entries) reads the same.
  const std::string text = replace(kScenario, "  tie_break: seeded\n",
                                   "  tie_break: seeded\n"
                                   "  devicePlugin:\n"
                                   "    migStrategy: mixed\n"
                                   "    migDevices:\n"
                                   "      a100:\n"
                                   "        - devices: [0, 1, 2, 3]\n"
                                   "          mig-enabled: true\n"
                                   "          mig-devices: {\"3g.20gb\": 2}\n"
                                   "        - devices: [4, 5]\n"
                                   "          mig-devices:\n"
                                   "            \"2g.10gb\": 3\n"
                                   "        - devices: [6]\n"
                                   "          mig-devices: {\"1g.5gb\": 7}\n"
                                   "        - devices: [7]\n"
                                   "          mig-enabled: false\n");
  const auto s = scenarios::parse_scenario(text, kInline);
  const auto cfg = k8s::parse_config(s.policy.params);
  const auto& entries = cfg.device_plugin.mig_layouts.at("a100");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].devices, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(entries[1].mig_devices, (std::map<std::string, std::int32_t>{{"2g.10gb", 3}}));
  EXPECT_EQ(entries[2].mig_devices, (std::map<std::string, std::int32_t>{{"1g.5gb", 7}}));
  EXPECT_FALSE(entries[3].mig_enabled);
  auto spec = s.cluster;
  spec.pools[0].nodes = 1;
  const K8sRun same(w, spec, s.policy.params);
  for (JobIndex j = 0; j < w.jobs.size(); ++j) EXPECT_EQ(same.state(j), r.state(j)) << j;
}

// --- no gang scheduling: partially placed groups -------------------------------------------------

namespace {

// Forwards a Session and records the pending reasons the policy gives.
class ReasonSession final : public policies::Session {
 public:
  ReasonSession(policies::Session& s, std::map<JobIndex, std::vector<std::pair<double, std::string>>>& out)
      : s_(s), out_(out) {}
  sim::Tick now() const override { return s_.now(); }
  const models::ClusterState& cluster() const override { return s_.cluster(); }
  const models::Workload& workload() const override { return s_.workload(); }
  JobState state(JobIndex j) const override { return s_.state(j); }
  std::size_t pending_count() const override { return s_.pending_count(); }
  sim::Tick run_start(JobIndex j) const override { return s_.run_start(j); }
  const models::Placement& placement(JobIndex j) const override { return s_.placement(j); }
  bool terminating(JobIndex j) const override { return s_.terminating(j); }
  std::span<const JobIndex> jobs_on_node(models::NodeId n) const override { return s_.jobs_on_node(n); }
  std::string start(JobIndex j, models::Placement p, std::string_view r) override {
    return s_.start(j, std::move(p), r);
  }
  void reject(JobIndex j, std::string_view r) override { s_.reject(j, r); }
  void pending_reason(JobIndex j, std::string_view r) override {
    out_[j].emplace_back(sim::to_seconds(s_.now()), std::string(r));
    s_.pending_reason(j, r);
  }
  std::string preempt(JobIndex j, policies::PreemptMode m, sim::Tick g, JobIndex by, std::string_view r,
                      sim::Tick o) override {
    return s_.preempt(j, m, g, by, r, o);
  }
  void wake_at(sim::Tick t) override { s_.wake_at(t); }
  std::string fail(JobIndex j, std::string_view r) override { return s_.fail(j, r); }

 private:
  policies::Session& s_;
  std::map<JobIndex, std::vector<std::pair<double, std::string>>>& out_;
};

class ReasonPolicy final : public policies::Policy {
 public:
  explicit ReasonPolicy(std::unique_ptr<policies::Policy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  void on_submit(const policies::ClusterView& v, JobIndex j) override { inner_->on_submit(v, j); }
  void on_end(const policies::ClusterView& v, JobIndex j) override { inner_->on_end(v, j); }
  void on_requeue(const policies::ClusterView& v, JobIndex j) override { inner_->on_requeue(v, j); }
  void on_release(const policies::ClusterView& v, JobIndex j) override { inner_->on_release(v, j); }
  models::ClusterSpec advertised_cluster(const models::ClusterSpec& c) const override {
    return inner_->advertised_cluster(c);
  }
  void schedule(policies::Session& s) override {
    ReasonSession rs(s, reasons);
    inner_->schedule(rs);
  }
  std::map<JobIndex, std::vector<std::pair<double, std::string>>> reasons;

 private:
  std::unique_ptr<policies::Policy> inner_;
};

}  // namespace

TEST(KubernetesGang, PartiallyPlacedGroupIsReportedOnItsWaitingPods) {
  // A group of three 4-GPU pods on one 8-GPU node: two run, the third waits until they end.
  auto w = ht::WorkloadBuilder().job(0, 4, 100).job(0, 4, 100).job(0, 4, 100).job(1, 4, 10).build();
  const auto g = w.groups.intern("trainer");
  for (JobIndex j = 0; j < 3; ++j) w.jobs[j].group = g;
  const auto c = nodes(1, 8);
  ReasonPolicy p(policies::make_policy("kubernetes", params({{"partial_placement_threshold", "30s"}}), 1));
  simulation::Simulation sim(w, c, p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_start(0), 0);
  EXPECT_EQ(sim.job_start(1), 0);
  EXPECT_EQ(sim.job_start(2), 100 * kSecond) << "no gang scheduling: the pods are placed one by one";
  const auto& r2 = p.reasons[2];
  const auto gang = std::find_if(r2.begin(), r2.end(), [](const auto& e) { return e.second.starts_with("gang:"); });
  ASSERT_NE(gang, r2.end());
  EXPECT_EQ(gang->first, 30) << "reported once partial placement has lasted the threshold";
  EXPECT_EQ(gang->second, "gang: partially placed for 30 s, 2 of 3 pods running");
  for (const auto& [t, reason] : r2) EXPECT_TRUE(t >= 30 || !reason.starts_with("gang:")) << t << " " << reason;
  for (const auto& [t, reason] : p.reasons[3]) EXPECT_FALSE(reason.starts_with("gang:")) << "not in the group";
}

TEST(KubernetesDevicePlugin, RandomPodsOnTimeSlicedAndMigPoolsEndOnceWithinUnits) {
  // Time-sliced pool (replicas 2, failRequestsGreaterThanOne) next to a MIG pool (mixed): the
  // engine's unit accounting holds (it would throw on an over-allocation), each pod ends once, and
  // only pods asking for more than one replica fail.
  auto w = random_pods(5, 400);
  const std::uint16_t mig = static_cast<std::uint16_t>(w.gpu_type_names.size() + 1);
  w.gpu_type_names.push_back("mig-1g.5gb");
  for (JobIndex j = 0; j < w.jobs.size(); j += 5) w.jobs[j].gpu_type = mig;
  models::ClusterSpec c;
  c.pools.push_back({"shared", 2, 4, "A100", 32, 128});
  c.pools.push_back({"mig", 1, 2, "A100", 32, 128});
  const auto p = params({{"devicePlugin.sharing.timeSlicing.replicas", "2"},
                         {"devicePlugin.sharing.timeSlicing.failRequestsGreaterThanOne", "true"},
                         {"devicePlugin.migStrategy", "mixed"},
                         {"devicePlugin.migDevices.mig.1g.5gb", "7"}});
  EndReasons obs;
  const K8sRun r(w, c, p, 5, &obs);
  int failed = 0, completed = 0;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    const JobState s = r.state(j);
    if (s == JobState::Failed) {
      ++failed;
      EXPECT_GT(w.jobs[j].gpus, 1) << "job " << j;
      EXPECT_NE(w.jobs[j].gpu_type, mig);
      EXPECT_EQ(r.end(j), r.start(j));
    } else if (s == JobState::Completed) {
      ++completed;
      if (w.jobs[j].gpu_type == mig) {
        EXPECT_EQ(r.node(j), 2u) << "MIG pods only on the MIG node";
      }
    } else {
      EXPECT_EQ(s, JobState::Unfinished);
    }
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(completed, 200);
  const K8sRun again(w, c, p, 5);
  EXPECT_EQ(r.stats.fingerprint, again.stats.fingerprint);
}

namespace {
// Engine check of time-slicing with checkpoints: a minimal policy on a time-sliced 1-GPU node
// (2 units) that starts every pending job it can, and checkpoints job 0 once at 40 s.
class SlicedCheckpointPolicy final : public policies::Policy {
 public:
  std::string_view name() const override { return "test"; }
  models::ClusterSpec advertised_cluster(const models::ClusterSpec& c) const override {
    auto out = c;
    for (auto& p : out.pools) {
      p.units_per_gpu = 2;
      p.time_sliced = true;
    }
    return out;
  }
  void on_submit(const policies::ClusterView&, JobIndex j) override { pending_.push_back(j); }
  void on_requeue(const policies::ClusterView&, JobIndex j) override { pending_.push_back(j); }
  void schedule(policies::Session& s) override {
    if (s.now() == 0) s.wake_at(40 * kSecond);
    if (s.now() == 40 * kSecond && !done_) {
      done_ = true;
      EXPECT_EQ(s.preempt(0, policies::PreemptMode::Checkpoint, 0, models::kNoJob, "test", 5 * kSecond), "");
    }
    std::vector<JobIndex> left;
    for (JobIndex j : pending_) {
      const auto& job = s.workload().jobs[j];
      if (s.cluster().node(0).free_gpus >= job.gpus) {
        EXPECT_EQ(s.start(j, {models::Slice{0, job.gpus, 0, 0}}, "test"), "");
      } else {
        left.push_back(j);
      }
    }
    pending_ = left;
  }

 private:
  std::vector<JobIndex> pending_;
  bool done_ = false;
};
}  // namespace

TEST(KubernetesDevicePlugin, EngineCheckpointOfATimeSlicedJobKeepsTheWorkDoneAtItsShare) {
  // A and B (100 s each) share one GPU from 0 at half speed. At 40, A is checkpointed (5 s
  // overhead) having done 20 s of work: 85 s left. It restarts at once beside B (80 s left): B ends
  // at 40 + 160 = 200, A has 5 s left then and ends at 205.
  const auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).build();
  SlicedCheckpointPolicy p;
  simulation::Simulation sim(w, nodes(1, 1), p, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_preemptions(0), 1);
  EXPECT_EQ(sim.job_end(1), 200 * kSecond);
  EXPECT_EQ(sim.job_end(0), 205 * kSecond);
  EXPECT_EQ(sim.lost_gpu_ms(), 5 * kSecond);
}

// --- queue bookkeeping at scale ----------------------------------------------------------------
// 20,000 synthetic pods (Poisson arrivals at 90 % load, lognormal run times, the default GPU mix:
// 4 % ask for more than a node's 8 GPUs: jobs of several 8-GPU pods bound one by one) on 64 nodes.
// Every pod release moves all unschedulable pods back to the queue; the fingerprints and the audit
// log below were first recorded with the implementation that did so pod by pod (main at 7d0c804),
// which the cheaper bookkeeping reproduced exactly; they were recorded again when jobs wider than
// a node became several pods (before, they stayed Pending as one pod larger than every node) and
// a node coming back became a cluster event.

namespace {

// FNV-1a over every audit event, start placement and end the observer sees, in order.
class AuditHash final : public models::SimObserver {
 public:
  void on_event(sim::Tick time, models::AuditKind kind, JobIndex job, std::int32_t detail,
                std::string_view reason) override {
    add(static_cast<std::uint64_t>(time));
    add((static_cast<std::uint64_t>(kind) << 40) ^ (static_cast<std::uint64_t>(job) << 8) ^
        static_cast<std::uint32_t>(detail));
    for (char c : reason) add(static_cast<unsigned char>(c));
    ++events;
  }
  void on_start(sim::Tick time, JobIndex job, const models::Placement& placement) override {
    add(static_cast<std::uint64_t>(time) ^ job);
    for (const auto& s : placement)
      add((static_cast<std::uint64_t>(s.node) << 32) | static_cast<std::uint32_t>(s.gpus));
  }
  void on_end(sim::Tick time, JobIndex job, JobState state) override {
    add(static_cast<std::uint64_t>(time) ^ (static_cast<std::uint64_t>(state) << 56) ^ job);
  }
  void on_sample(const models::Sample&) override {}
  void add(std::uint64_t w) { h = (h ^ w) * 0x100000001b3ull; }
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::uint64_t events = 0;
};

models::Workload synth_pods(std::int64_t jobs, std::int64_t cluster_gpus) {
  traces::SynthOptions o;
  o.jobs = jobs;
  o.load = 0.9;
  o.cluster_gpus = cluster_gpus;
  o.seed = 7;
  return traces::synthesize(o);
}

struct ScaleCase {
  const char* name;
  std::int64_t jobs;
  std::map<std::string, std::string> params;
  bool priorities;  // priority j % 3 and cpu/memory requests: preemption and nominations
  const char* fingerprint;
  std::uint64_t audit;
  std::uint64_t audit_events;
};

class KubernetesScale : public ::testing::TestWithParam<ScaleCase> {};

void PrintTo(const ScaleCase& c, std::ostream* os) { *os << c.name; }

}  // namespace

// The audit hashes and counts changed once, with no decision (the fingerprints are the same): a
// job's pods bound ahead of its last one make one Waiting event when the first binds, no longer
// one per pod with its own reason text (simulation/simulation.cpp, Simulation::bind).
TEST_P(KubernetesScale, SyntheticPodsReplayExactlyAsBefore) {
  const ScaleCase& c = GetParam();
  auto w = synth_pods(c.jobs, 64 * 8);
  if (c.priorities) {
    for (JobIndex j = 0; j < w.jobs.size(); ++j) set(w, j, static_cast<std::int32_t>(j % 3), 1 + j % 16, 4096);
  }
  AuditHash audit;
  const K8sRun r(w, nodes(64, 8, 64, 512), params(c.params), 5, &audit);
  EXPECT_EQ(r.stats.fingerprint, c.fingerprint);
  EXPECT_EQ(audit.h, c.audit);
  EXPECT_EQ(audit.events, c.audit_events);
}

INSTANTIATE_TEST_SUITE_P(
    Synth, KubernetesScale,
    ::testing::Values(ScaleCase{"defaults", 20000, {}, false, "6c6e997b381797fe", 0xea0c1cd0cfa08db5ull, 63733},
                      ScaleCase{"priorities", 5000, {}, true, "18fbd719ade9b73c", 0x53bb22d78ebc2e4aull, 18022},
                      ScaleCase{"binpack_seeded_quota",
                                5000,
                                {{"scoringStrategy.type", "MostAllocated"},
                                 {"scoringStrategy.resources.gpu", "3"},
                                 {"tie_break", "seeded"},
                                 {"quota.tenant-1.gpu", "64"},
                                 {"podMaxBackoffSeconds", "20"}},
                                true,
                                "43c8136e196523e7",
                                0x391a7b8ec6a7e537ull,
                                16641}),
    [](const ::testing::TestParamInfo<ScaleCase>& info) { return std::string(info.param.name); });

TEST(KubernetesScale, NodeFailuresReplayExactlyAsBefore) {
  // Nodes going down and coming back (random failures, 2 h repairs) while 5,000 synthetic pods run:
  // node classes must notice every change of `up`. Recorded like the cases above.
  auto w = synth_pods(5000, 64 * 8);
  for (JobIndex j = 0; j < w.jobs.size(); ++j) set(w, j, static_cast<std::int32_t>(j % 2), 1 + j % 16, 4096);
  models::RandomFailures rf;
  rf.mtbf = 2 * sim::kDay;
  rf.repair = 2 * 3600 * kSecond;
  simulation::SimulationOptions o;
  o.failures.random.push_back(rf);
  o.failures.checkpoint_interval = 1800 * kSecond;
  o.seed = 3;
  const auto c = nodes(64, 8, 64, 512);
  auto policy = policies::make_policy("kubernetes", {}, 5);
  AuditHash audit;
  simulation::Simulation sim(w, c, *policy, &audit, o);
  const auto stats = sim.run();
  EXPECT_EQ(sim.jobs_killed(), 147);
  EXPECT_EQ(stats.fingerprint, "6fe5642548ab27da");
  EXPECT_EQ(audit.h, 0xf3332b69b12b0ee6ull);
  EXPECT_EQ(audit.events, 18666u);
}

namespace {

// A case of the FailedBatch tests: a workload on a cluster with its options (failures).
struct BatchingCase {
  models::Workload w;
  models::ClusterSpec c;
  simulation::SimulationOptions o;
};

BatchingCase failure_drill_case() {
  const auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml");
  BatchingCase drill{scenarios::build_workload(sc), sc.cluster, {}};
  drill.o = scenarios::simulation_options(sc, drill.w);
  return drill;
}

// Each case run with failed cycles batched and not (Coscheduling on or off): the same fingerprint
// and the same audit events, of which there are many.
void expect_batching_changes_nothing(const std::vector<BatchingCase>& cases, bool coscheduling) {
  for (const BatchingCase& k : cases) {
    std::vector<AuditHash> audit(2);
    std::vector<std::string> fingerprint;
    for (int batched = 0; batched < 2; ++batched) {
      k8s::Config cfg;
      cfg.coscheduling = coscheduling;
      cfg.batch_failed_cycles = batched == 1;
      auto policy = k8s::make_policy(cfg, 5);
      simulation::Simulation sim(k.w, k.c, *policy, &audit[static_cast<std::size_t>(batched)], k.o);
      fingerprint.push_back(sim.run().fingerprint);
    }
    EXPECT_EQ(fingerprint[0], fingerprint[1]);
    EXPECT_EQ(audit[0].h, audit[1].h);
    EXPECT_EQ(audit[0].events, audit[1].events);
    EXPECT_GT(audit[0].events, 10000u);
  }
}

}  // namespace

// Pods whose cycles failed together move through the queues as one batch (scheduling_queue.cpp,
// FailedBatch): a way of computing, not of deciding. With it off, every pod has its own cycles;
// both ways give the same events, placements and pending reasons, on the real RICC sample (jobs up
// to 128 nodes wide, so pod sets bound in part) and on synthetic pods with priorities, preemption
// and node failures (which take bound pods from waiting pod sets), and on the POC failure drill
// (RICC with rack, node and site outages and drains: batched pod sets with pods bound lose them
// while their batch waits in the active queue, so the batch's place there must move on).
TEST(KubernetesScale, FailedBatchesChangeNoDecision) {
  using Case = BatchingCase;
  std::vector<Case> cases;
  {
    Case ricc{
        traces::import_trace(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz"),
        nodes(1024, 8),
        {}};
    cases.push_back(std::move(ricc));
  }
  {
    Case synth{synth_pods(5000, 64 * 8), nodes(64, 8, 64, 512), {}};
    for (JobIndex j = 0; j < synth.w.jobs.size(); ++j)
      set(synth.w, j, static_cast<std::int32_t>(j % 2), 1 + j % 16, 4096);
    models::RandomFailures rf;
    rf.mtbf = 2 * sim::kDay;
    rf.repair = 2 * 3600 * kSecond;
    synth.o.failures.random.push_back(rf);
    synth.o.seed = 3;
    cases.push_back(std::move(synth));
  }
  cases.push_back(failure_drill_case());
  expect_batching_changes_nothing(cases, false);
}

// More than 64 pools (a pool per rack, say) once turned failed batches off, and every failed pod
// had a cycle of its own (the batches keyed their pools by a bit of one 64-bit word): on RICC's 14
// days it cost 10x at 65 pools and 160x at 1,024. Batches now number their pools' sets. RICC's
// 1,024 nodes as 128 pools of 8 make the same decisions as one pool of 1,024, with and without
// batches, and with Coscheduling (gang batches count their pools' room) too.
TEST(KubernetesScale, OneHundredAndTwentyEightPoolsDecideAsOne) {
  const models::Workload ricc =
      traces::import_trace(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz");
  models::ClusterSpec racks;
  for (int r = 0; r < 128; ++r) racks.pools.push_back({"rack" + std::to_string(r), 8, 8, "A100", 0, 0});
  for (const bool coscheduling : {false, true}) {
    std::vector<std::string> fingerprint;
    std::vector<AuditHash> audit(3);
    for (int run = 0; run < 3; ++run) {  // one pool; 128 pools; 128 pools without batches
      k8s::Config cfg;
      cfg.coscheduling = coscheduling;
      cfg.batch_failed_cycles = run < 2;
      auto policy = k8s::make_policy(cfg, 5);
      const models::ClusterSpec cluster = run == 0 ? nodes(1024, 8) : racks;
      simulation::Simulation sim(ricc, cluster, *policy, &audit[static_cast<std::size_t>(run)]);
      fingerprint.push_back(sim.run().fingerprint);
    }
    EXPECT_EQ(fingerprint[1], fingerprint[0]) << "coscheduling " << coscheduling;
    EXPECT_EQ(fingerprint[2], fingerprint[0]) << "coscheduling " << coscheduling;
    EXPECT_EQ(audit[1].h, audit[0].h);
    EXPECT_EQ(audit[2].h, audit[0].h);
    EXPECT_GT(audit[0].events, 10000u);
  }
}

// The same under Coscheduling, where PodGroups rejected whole (gang_room) move through the queues as
// batches too and leave them for a cycle of their own when the free GPUs might hold their pods
// (run_gang_batch): on the RICC sample on 1,024 nodes (node sampling; PodGroups of up to 128 pods,
// many of mixed pod sizes, so many go on to bind and unbind), on synthetic pods with two
// priorities, cpu and memory and node failures, on synthetic PodGroups of one priority, and on the
// POC failure drill. (Batch ids freed and made again within one pass under another key once merged
// batches of two keys: only the whole RICC log showed it, bench/full-log, 12 single pods late.)
TEST(KubernetesScale, FailedPodGroupBatchesChangeNoDecision) {
  using Case = BatchingCase;
  std::vector<Case> cases;
  cases.push_back(
      {traces::import_trace(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz"),
       nodes(1024, 8),
       {}});
  {
    Case synth{synth_pods(5000, 64 * 8), nodes(64, 8, 64, 512), {}};
    for (JobIndex j = 0; j < synth.w.jobs.size(); ++j) {
      set(synth.w, j, static_cast<std::int32_t>(j % 2), 1 + j % 16, 4096);
      synth.w.jobs[j].gpus = synth.w.jobs[j].gpus * (1 + static_cast<std::int32_t>(j % 5));  // up to 5 pods
    }
    models::RandomFailures rf;
    rf.mtbf = 2 * sim::kDay;
    rf.repair = 2 * 3600 * kSecond;
    synth.o.failures.random.push_back(rf);
    synth.o.seed = 3;
    cases.push_back(std::move(synth));
  }
  for (int v = 0; v < 3; ++v) {  // one priority, PodGroups of up to 3, 5 and 7 pods
    Case synth{synth_pods(5000, 64 * 8), nodes(64, 8), {}};
    for (JobIndex j = 0; j < synth.w.jobs.size(); ++j)
      synth.w.jobs[j].gpus = synth.w.jobs[j].gpus * (1 + static_cast<std::int32_t>((j * (v + 1)) % (2 * v + 3)));
    cases.push_back(std::move(synth));
  }
  cases.push_back(failure_drill_case());
  expect_batching_changes_nothing(cases, true);
}
