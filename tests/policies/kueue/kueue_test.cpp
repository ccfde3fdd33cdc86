// The kueue policy: the acceptance scenarios Q1-Q7 of docs POLICIES.md section 5.6 with their exact
// outcomes, the quota arithmetic, flavor fungibility, waitForPodsReady, the OpenShift AI stack
// (PyTorchJob, RayCluster), invariants over random workloads and the bundled real trace, and the
// policy block of a scenario file.
#include "policies/kueue/kueue.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "policies/kueue/index.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/test_support.hpp"

using namespace headroom;
using headroom::testing::expect_one_error;
using headroom::testing::replace;
using headroom::testing::scenario_errors;
using models::JobIndex;
using models::JobState;
using sim::kSecond;
namespace ht = headroom::testing;

namespace {

const std::string kInline = headroom::testing::kInlineScenario;

// The `policy:` block of a scenario (the text below `name: kueue`, indented by two spaces). The
// scenario has a pool of each name the flavors below refer to (validation checks them); the runs
// use clusters of their own.
policies::PolicyParams kueue_params(const std::string& body) {
  const std::string text =
      "name: q\ncluster:\n  pools:\n    - {name: pool, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: a100, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: h100, nodes: 1, gpus_per_node: 8, gpu_type: H100}\n"
      "policy:\n  name: kueue\n" +
      body + "workload:\n  trace: tiny.csv\n";
  return scenarios::parse_scenario(text, kInline).policy.params;
}

models::ClusterSpec pools(std::vector<std::tuple<std::string, int, int, std::string>> ps) {
  models::ClusterSpec spec;
  for (auto& [name, nodes, gpus, type] : ps) spec.pools.push_back({name, nodes, gpus, type, 0, 0});
  return spec;
}

// Records preemptions: (victim, by, reason).
struct Preemption {
  JobIndex job;
  std::int32_t by;
  std::string reason;
};
class PreemptionLog : public models::SimObserver {
 public:
  void on_event(sim::Tick, models::AuditKind k, JobIndex j, std::int32_t v, std::string_view reason) override {
    if (k == models::AuditKind::Preempt) log.push_back({j, v, std::string(reason)});
  }
  void on_start(sim::Tick, JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample&) override {}
  std::vector<Preemption> log;
};

struct KueueRun {
  KueueRun(models::Workload workload, models::ClusterSpec cluster, const std::string& policy,
           simulation::SimulationOptions options = {})
      : w(std::move(workload)), c(std::move(cluster)), policy(policies::make_policy("kueue", kueue_params(policy), 1)) {
    sim = std::make_unique<simulation::Simulation>(w, c, *this->policy, &log, options);
    stats = sim->run();
  }
  double start(JobIndex j) const { return sim->job_start(j) < 0 ? -1 : sim::to_seconds(sim->job_start(j)); }
  double end(JobIndex j) const { return sim::to_seconds(sim->job_end(j)); }
  int preemptions(JobIndex j) const { return sim->job_preemptions(j); }
  JobState state(JobIndex j) const { return sim->job_state(j); }
  models::PoolId pool(JobIndex j) const {
    const auto node = sim->job_placement(j).at(0).node;
    models::NodeId first = 0;
    for (models::PoolId p = 0; p < c.pools.size(); ++p) {
      if (node < first + static_cast<models::NodeId>(c.pools[p].nodes)) return p;
      first += static_cast<models::NodeId>(c.pools[p].nodes);
    }
    return UINT32_MAX;
  }

  models::Workload w;
  models::ClusterSpec c;
  std::unique_ptr<policies::Policy> policy;
  PreemptionLog log;
  std::unique_ptr<simulation::Simulation> sim;
  simulation::SimulationStats stats;
};

const std::string kTwoCqs = R"(  resourceFlavors:
    default: {pools: [pool]}
  clusterQueues:
    cq-a:
      cohort: team
      namespaces: [research]
      resources: {default: {gpu: {nominalQuota: 4}}}
    cq-b:
      cohort: team
      namespaces: [prod]
      resources: {default: {gpu: {nominalQuota: 4}}}
)";

}  // namespace

// --- Q1 --------------------------------------------------------------------------------------

TEST(Kueue, Q1BorrowingThenReclaimEvictsTheNewestBorrowingWorkload) {
  const auto w = ht::WorkloadBuilder()
                     .job(0, 3, 1000, "research")  // w1
                     .job(1, 3, 1000, "research")  // w2
                     .job(2, 3, 1000, "research")  // w3
                     .job(10, 4, 100, "prod")      // wb
                     .build();
  const std::string reclaim = replace(kTwoCqs, "      namespaces: [prod]\n",
                                      "      namespaces: [prod]\n      preemption: {reclaimWithinCohort: Any}\n");
  const KueueRun r(w, ht::cluster(2, 8), reclaim);
  EXPECT_EQ(r.start(0), 0) << "w1: Fit";
  EXPECT_EQ(r.start(1), 1) << "w2: Fit with borrow 2 (available 8 - 3 = 5)";
  EXPECT_EQ(r.preemptions(0), 0);
  EXPECT_EQ(r.preemptions(1), 1) << "w2 is borrowing and the most recently admitted";
  ASSERT_EQ(r.log.log.size(), 1u);
  EXPECT_EQ(r.log.log[0].job, 1u);
  EXPECT_EQ(r.log.log[0].by, 3);
  EXPECT_EQ(r.log.log[0].reason, "kueue: reclaimWithinCohort, cq-b reclaims from borrowing cq-a");
  EXPECT_EQ(r.start(3), 40) << "wb is admitted once w2's pods have terminated (30 s grace)";
  // w3 (available 2 < 3, policies Never) waits; after wb ends at 140 it fits, ahead of w2, which
  // was requeued at 40 and waits for w1.
  EXPECT_EQ(r.start(2), 140);
  EXPECT_EQ(r.end(1), 2000) << "w2 runs again whole once w1 ends at 1000";

  // Default Never: wb waits for A's workloads to finish.
  const KueueRun never(w, ht::cluster(2, 8), kTwoCqs);
  for (JobIndex j = 0; j < 4; ++j) EXPECT_EQ(never.preemptions(j), 0);
  EXPECT_EQ(never.start(3), 1000) << "wb waits for w1 to finish";
  EXPECT_EQ(never.start(2), 1001) << "then wb goes first (not borrowing) and w3 waits for w2 too";
}

// --- Q2 / Q3 ---------------------------------------------------------------------------------

TEST(Kueue, Q2BorrowingLimitCapsPotentialAvailableAtFive) {
  const std::string limited =
      replace(kTwoCqs, "{gpu: {nominalQuota: 4}}", "{gpu: {nominalQuota: 4, borrowingLimit: 1}}");
  const KueueRun five(ht::WorkloadBuilder().job(0, 5, 100, "research").build(), ht::cluster(2, 8), limited);
  EXPECT_EQ(five.start(0), 0) << "potentialAvailable(A) = min(4 + 1, 8) = 5";
  const KueueRun six(ht::WorkloadBuilder().job(0, 6, 100, "research").job(5, 1, 10, "research").build(),
                     ht::cluster(2, 8), limited);
  EXPECT_EQ(six.state(0), JobState::Unfinished) << "NoFit: inadmissible indefinitely, never rejected";
  EXPECT_EQ(six.start(1), 5) << "BestEffortFIFO: the inadmissible head does not block";
  // Without the limit A may borrow all of B's idle quota.
  const KueueRun open(ht::WorkloadBuilder().job(0, 8, 100, "research").build(), ht::cluster(2, 8), kTwoCqs);
  EXPECT_EQ(open.start(0), 0);
}

TEST(Kueue, Q3LendingLimitLetsAUseAtMostFive) {
  const std::string lending =
      replace(kTwoCqs, "      namespaces: [prod]\n      resources: {default: {gpu: {nominalQuota: 4}}}",
              "      namespaces: [prod]\n      resources: {default: {gpu: {nominalQuota: 4, lendingLimit: 1}}}");
  const KueueRun five(ht::WorkloadBuilder().job(0, 5, 100, "research").build(), ht::cluster(2, 8), lending);
  EXPECT_EQ(five.start(0), 0);
  const KueueRun six(ht::WorkloadBuilder().job(0, 6, 100, "research").build(), ht::cluster(2, 8), lending);
  EXPECT_EQ(six.state(0), JobState::Unfinished);
  // B keeps its 3 guaranteed GPUs while A borrows the lendable one.
  const KueueRun both(
      ht::WorkloadBuilder().job(0, 5, 100, "research").job(1, 3, 1000, "prod").job(2, 1, 10, "prod").build(),
      ht::cluster(2, 8), lending);
  EXPECT_EQ(both.start(1), 1);
  EXPECT_EQ(both.start(2), 100) << "B's fourth GPU is lent to A until A's workload ends";
}

// --- Q4 --------------------------------------------------------------------------------------

TEST(Kueue, Q4WithinClusterQueueEvictsTheLowerPriorityWorkloadWhole) {
  auto w = ht::WorkloadBuilder().job(0, 4, 1000, "ns").job(10, 2, 100, "ns").build();
  w.jobs[0].priority = 10;   // w_low
  w.jobs[1].priority = 100;  // w_high
  const std::string single = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources: {default: {gpu: {nominalQuota: 4}}}
      preemption: {withinClusterQueue: LowerPriority}
)";
  const KueueRun r(w, ht::cluster(1, 8), single);
  EXPECT_EQ(r.preemptions(0), 1);
  ASSERT_EQ(r.log.log.size(), 1u);
  EXPECT_EQ(r.log.log[0].by, 1);
  EXPECT_EQ(r.log.log[0].reason, "kueue: withinClusterQueue, cq preempts a lower-priority workload of its own");
  EXPECT_EQ(r.start(1), 40) << "admitted once w_low's pods terminated";
  EXPECT_EQ(r.end(0), 140 + 1000) << "w_low is re-admitted only after w_high finishes at 140";

  const KueueRun never(w, ht::cluster(1, 8), replace(single, "LowerPriority", "Never"));
  EXPECT_EQ(never.preemptions(0), 0);
  EXPECT_EQ(never.start(1), 1000) << "w_high waits";
}

// --- Q5 --------------------------------------------------------------------------------------

TEST(Kueue, Q5StrictFifoBlocksBehindItsHeadBestEffortFifoDoesNot) {
  const auto w = ht::WorkloadBuilder().job(0, 3, 100, "ns").job(1, 2, 50, "ns").job(2, 1, 50, "ns").build();
  const std::string cq = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [ns]
      queueingStrategy: BestEffortFIFO
      resources: {default: {gpu: {nominalQuota: 4}}}
)";
  const KueueRun best(w, ht::cluster(1, 8), cq);
  EXPECT_EQ(best.start(2), 2) << "w2 is admitted in the next cycle";
  EXPECT_EQ(best.start(1), 100) << "w1 waits for w0";
  const KueueRun strict(w, ht::cluster(1, 8), replace(cq, "BestEffortFIFO", "StrictFIFO"));
  EXPECT_EQ(strict.start(1), 100) << "w1 is admitted when w0 finishes";
  EXPECT_EQ(strict.start(2), 100) << "w2 waits behind w1, then fits as well";
}

// --- Admission fair sharing ---------------------------------------------------------------------

namespace {

// One ClusterQueue of 8 GPUs shared by the LocalQueues of namespaces a and b, with admission fair
// sharing (half-life 10 min, samples every 5 min: the entry penalty is 1 - 0.5^0.5 = 0.2929 of
// the request).
const std::string kAfs = R"(  resourceFlavors: {default: {pools: [pool]}}
  admissionFairSharing: {usageHalfLifeTime: 10m, usageSamplingInterval: 5m}
  clusterQueues:
    shared:
      namespaces: [a, b]
      admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
      resources: {default: {gpu: {nominalQuota: 8}}}
)";

}  // namespace

TEST(KueueAdmissionFairSharing, TheLocalQueueThatUsedLessIsAdmittedFirst) {
  // a used the whole queue (entry penalty 8 x 0.2929 = 2.34); a1 is older than b1, but b has no
  // usage, so b1 goes first when a0 ends.
  const auto w = ht::WorkloadBuilder().job(0, 8, 100, "a").job(1, 8, 100, "a").job(2, 8, 100, "b").build();
  const KueueRun afs(w, ht::cluster(1, 8), kAfs);
  EXPECT_EQ(afs.start(2), 100);
  EXPECT_EQ(afs.start(1), 200);

  // A zero half-life resets usage at every sample and makes the entry penalty 0: the base order.
  const KueueRun reset(w, ht::cluster(1, 8), replace(kAfs, "usageHalfLifeTime: 10m", "usageHalfLifeTime: 0s"));
  EXPECT_EQ(reset.start(1), 100);
  EXPECT_EQ(reset.start(2), 200);

  // Without the admission scope the ClusterQueue orders by priority and time only.
  const KueueRun plain(w, ht::cluster(1, 8), replace(kAfs, "UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"));
  EXPECT_EQ(plain.start(1), 100);
  EXPECT_EQ(plain.start(2), 200);
}

TEST(KueueAdmissionFairSharing, LocalQueueWeightDividesItsUsage) {
  // a0 and b0 (4 GPUs each) leave both LocalQueues at 4 x 0.2929: equal usage, so the older a1
  // goes first; with weight 2, b's usage halves and b1 goes first.
  const auto w =
      ht::WorkloadBuilder().job(0, 4, 100, "a").job(0, 4, 100, "b").job(1, 8, 100, "a").job(2, 8, 100, "b").build();
  const KueueRun equal(w, ht::cluster(1, 8), kAfs);
  EXPECT_EQ(equal.start(2), 100);
  EXPECT_EQ(equal.start(3), 200);
  const KueueRun weighted(w, ht::cluster(1, 8), kAfs + "  localQueues: {b: {fairSharing: {weight: 2}}}\n");
  EXPECT_EQ(weighted.start(3), 100);
  EXPECT_EQ(weighted.start(2), 200);
}

TEST(KueueAdmissionFairSharing, UsageDecaysWithTheHalfLife) {
  // a0 at 0 s leaves a at 8 x 0.2929 = 2.343, decayed by a's samples at 300, 600 and 900 s (no
  // usage then) to 2.343 x 0.7071^3 = 0.828. b0 (4 GPUs) at 1000 s settles at 4 x (1 -
  // 0.5^(100/600)) + 4 x 0.2929 = 1.608. When b0 ends at 1100 s, a1 goes before the older b1.
  const auto w = ht::WorkloadBuilder()
                     .job(0, 8, 100, "a")
                     .job(1000, 4, 100, "b")
                     .job(1001, 8, 100, "b")
                     .job(1002, 8, 100, "a")
                     .build();
  const KueueRun afs(w, ht::cluster(1, 8), kAfs);
  EXPECT_EQ(afs.start(1), 1000);
  EXPECT_EQ(afs.start(3), 1100);
  EXPECT_EQ(afs.start(2), 1200);
  // With a one-week half-life a's usage has hardly decayed (8 x 3.44e-4 = 2.75e-3) and stays above
  // b's (4 x 1.15e-4 + 4 x 3.44e-4 = 1.83e-3): b1 goes first.
  const KueueRun slow(w, ht::cluster(1, 8), replace(kAfs, "usageHalfLifeTime: 10m", "usageHalfLifeTime: 168h"));
  EXPECT_EQ(slow.start(2), 1100);
  EXPECT_EQ(slow.start(3), 1200);
}

TEST(KueueAdmissionFairSharing, PreemptsFromTheLocalQueueWithMoreUsageFirst) {
  // a0 (6 GPUs) and b0 (2 GPUs, admitted later) fill the queue; c's high-priority workload needs 2.
  // Kueue's candidate order puts the most recently admitted (b0) first; with admission fair
  // sharing the LocalQueue with more usage (a: 6 x 0.2929 against b: 2 x 0.2929 + a little) goes
  // first.
  auto w = ht::WorkloadBuilder().job(0, 6, 1000, "a").job(1, 2, 1000, "b").job(10, 2, 100, "c").build();
  w.jobs[2].priority = 100;
  const std::string cfg =
      replace(replace(kAfs, "namespaces: [a, b]", "namespaces: [a, b, c]"),
              "      resources:", "      preemption: {withinClusterQueue: LowerPriority}\n      resources:");
  const KueueRun afs(w, ht::cluster(1, 8), cfg);
  EXPECT_EQ(afs.preemptions(0), 1);
  EXPECT_EQ(afs.preemptions(1), 0);
  const KueueRun plain(w, ht::cluster(1, 8), replace(cfg, "UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"));
  EXPECT_EQ(plain.preemptions(0), 0);
  EXPECT_EQ(plain.preemptions(1), 1);
}

// --- Q6 --------------------------------------------------------------------------------------

TEST(Kueue, Q6FairSharingWithWeightsStopsAtAFourBEight) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 12; ++i) b.job(i, 1, 100000, "team-a");
  for (int i = 0; i < 12; ++i) b.job(100 + i, 1, 100000, "team-b");
  const std::string fair = R"(  resourceFlavors: {default: {pools: [pool]}}
  fairSharing: {enable: true}
  clusterQueues:
    cq-l:
      cohort: all
      resources: {default: {gpu: {nominalQuota: 12}}}
    cq-a:
      cohort: all
      namespaces: [team-a]
      fairSharing: {weight: 1}
      preemption: {reclaimWithinCohort: Any}
      resources: {default: {gpu: {nominalQuota: 0}}}
    cq-b:
      cohort: all
      namespaces: [team-b]
      fairSharing: {weight: 2}
      preemption: {reclaimWithinCohort: Any}
      resources: {default: {gpu: {nominalQuota: 0}}}
)";
  simulation::SimulationOptions opt;
  opt.horizon = 10000 * kSecond;
  const KueueRun r(b.build(), ht::cluster(2, 8), fair, opt);
  // A keeps 4 and B gets 8: DRS_B(9) = 375 fails S2-a against DRS_A(3) = 250 and S2-b against
  // DRS_A(4) = 333. The newest of A's workloads go first, one per cycle, each after 30 s of grace;
  // none of them comes back.
  for (JobIndex j = 0; j < 12; ++j) EXPECT_EQ(r.preemptions(j), j >= 4 ? 1 : 0) << "a" << j;
  for (JobIndex j = 12; j < 20; ++j) EXPECT_GE(r.start(j), 0) << "b" << j - 12 << " runs";
  ASSERT_EQ(r.log.log.size(), 8u);
  EXPECT_EQ(r.log.log[0].job, 11u);
  EXPECT_EQ(r.log.log[0].reason, "kueue: fairSharing LessThanOrEqualToFinalShare, cq-b preempts from cq-a");
  EXPECT_EQ(r.start(12 + 7), 100 + 8 * 30) << "the eighth of B's workloads runs after the eighth eviction";
  for (JobIndex j = 12 + 8; j < 24; ++j) EXPECT_LT(r.start(j), 0) << "b" << j - 12 << " stays pending";

  // Equal weights: the split is even (6 and 6).
  const KueueRun even(b.build(), ht::cluster(2, 8), replace(fair, "weight: 2", "weight: 1"), opt);
  int preempted = 0;
  for (JobIndex j = 0; j < 12; ++j) preempted += even.preemptions(j);
  EXPECT_EQ(preempted, 6);
}

// --- Q7 --------------------------------------------------------------------------------------

TEST(Kueue, Q7AdmissionCheckHoldsQuotaUntilReadyAndRetryRequeues) {
  const std::string checked = R"(  resourceFlavors: {default: {pools: [pool]}}
  admissionChecks:
    provisioning: {delay: 60s}
  clusterQueues:
    cq:
      namespaces: [ns]
      admissionChecks: [provisioning]
      resources: {default: {gpu: {nominalQuota: 4}}}
)";
  const auto w = ht::WorkloadBuilder().job(0, 2, 100, "ns").job(10, 3, 50, "ns").build();
  const KueueRun r(w, ht::cluster(1, 8), checked);
  EXPECT_EQ(r.start(0), 60) << "QuotaReserved at 0, suspended until the check is Ready at 60";
  EXPECT_EQ(r.start(1), 160 + 60) << "the reserved quota keeps the second workload out while the first waits";

  // Retry once: the quota is released at 60 and the workload requeued; the second check passes.
  const KueueRun retry(ht::WorkloadBuilder().job(0, 2, 100, "ns").build(), ht::cluster(1, 8),
                       replace(checked, "{delay: 60s}", "{delay: 60s, retries: 1}"));
  EXPECT_EQ(retry.start(0), 120);
  // While the quota is released the other workload, earlier in the queue, reserves it (at 60) and
  // gets Retry in turn (at 120); the first passes its second round at 180 and ends at 280; the
  // other then reserves again and passes at 340.
  const KueueRun taken(w, ht::cluster(1, 8), replace(checked, "{delay: 60s}", "{delay: 60s, retries: 1}"));
  EXPECT_EQ(taken.start(0), 180);
  EXPECT_EQ(taken.start(1), 340);
}

// --- more rules ------------------------------------------------------------------------------

TEST(Kueue, NamespaceWithoutLocalQueueIsRejected) {
  const auto w = ht::WorkloadBuilder().job(0, 1, 10, "research").job(1, 1, 10, "intruder").build();
  const KueueRun r(w, ht::cluster(1, 8), kTwoCqs);
  EXPECT_EQ(r.state(0), JobState::Completed);
  EXPECT_EQ(r.state(1), JobState::Rejected);
  // "*" gives every other namespace a LocalQueue.
  const KueueRun all(w, ht::cluster(1, 8), replace(kTwoCqs, "[prod]", "[prod, \"*\"]"));
  EXPECT_EQ(all.state(1), JobState::Completed);
}

TEST(Kueue, FlavorFungibilityTriesTheNextFlavorAndPlacesOnItsPools) {
  const std::string two = R"(  resourceFlavors:
    a100: {pools: [a100]}
    h100: {pools: [h100]}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources:
        a100: {gpu: {nominalQuota: 4}}
        h100: {gpu: {nominalQuota: 8}}
)";
  const auto c = pools({{"a100", 1, 8, "A100"}, {"h100", 1, 8, "H100"}});
  const auto w = ht::WorkloadBuilder().job(0, 4, 100, "ns").job(1, 4, 100, "ns").job(2, 8, 100, "ns").build();
  const KueueRun r(w, c, two);
  EXPECT_EQ(r.pool(0), 0u) << "the first flavor in the written order";
  EXPECT_EQ(r.start(1), 1);
  EXPECT_EQ(r.pool(1), 1u) << "a100 has no quota left: the next flavor";
  EXPECT_EQ(r.start(2), 101) << "8 GPUs exceed a100's quota; h100 frees at 101";
  EXPECT_EQ(r.pool(2), 1u);
  // Flavors in the other order: h100 first.
  const std::string swapped =
      replace(two, "        a100: {gpu: {nominalQuota: 4}}\n        h100: {gpu: {nominalQuota: 8}}",
              "        h100: {gpu: {nominalQuota: 8}}\n        a100: {gpu: {nominalQuota: 4}}");
  const KueueRun s(w, c, swapped);
  EXPECT_EQ(s.pool(0), 1u);
  EXPECT_EQ(s.pool(1), 1u);
}

TEST(Kueue, FlavorFungibilityWhenCanBorrowStopsOrTriesTheNextFlavor) {
  const std::string cohort = R"(  resourceFlavors:
    a100: {pools: [a100]}
    h100: {pools: [h100]}
  clusterQueues:
    cq:
      cohort: c
      namespaces: [ns]
      resources:
        a100: {gpu: {nominalQuota: 2}}
        h100: {gpu: {nominalQuota: 8}}
    lender:
      cohort: c
      resources:
        a100: {gpu: {nominalQuota: 8}}
        h100: {gpu: {nominalQuota: 0}}
)";
  const auto c = pools({{"a100", 1, 8, "A100"}, {"h100", 1, 8, "H100"}});
  const auto w = ht::WorkloadBuilder().job(0, 4, 100, "ns").build();
  EXPECT_EQ(KueueRun(w, c, cohort).pool(0), 0u) << "MayStopSearch: a100 with borrowing";
  const std::string next = replace(cohort, "      namespaces: [ns]\n",
                                   "      namespaces: [ns]\n      flavorFungibility: {whenCanBorrow: TryNextFlavor}\n");
  EXPECT_EQ(KueueRun(w, c, next).pool(0), 1u) << "TryNextFlavor: h100 fits without borrowing";
}

TEST(Kueue, HierarchicalCohortQuotaIsSharedAcrossLevels) {
  // root (own quota 4) <- org (no quota) <- cq-x (2), cq-y (0): cq-y may borrow 2 + 4.
  const std::string tree = R"(  resourceFlavors: {default: {pools: [pool]}}
  cohorts:
    root: {resources: {default: {gpu: {nominalQuota: 4}}}}
    org: {parentName: root}
  clusterQueues:
    cq-x: {cohort: org, namespaces: [x], resources: {default: {gpu: {nominalQuota: 2}}}}
    cq-y: {cohort: org, namespaces: [y], resources: {default: {gpu: {nominalQuota: 0}}}}
)";
  const KueueRun r(ht::WorkloadBuilder().job(0, 6, 100, "y").job(1, 1, 10, "x").job(2, 7, 10, "y").build(),
                   ht::cluster(2, 8), tree);
  EXPECT_EQ(r.start(0), 0) << "6 = cq-x's 2 + root's 4";
  EXPECT_EQ(r.start(1), 100) << "nothing left for cq-x until cq-y's workload ends";
  EXPECT_EQ(r.state(2), JobState::Unfinished) << "7 exceeds potentialAvailable 6";
}

TEST(Kueue, BorrowWithinCohortPreemptsLowerPriorityWorkloadsWhileBorrowing) {
  // cq-a (nominal 4, borrowWithinCohort LowerPriority) borrows B's idle quota by preempting B's
  // low-priority workload that itself borrows from cq-c.
  const std::string cfg = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq-a:
      cohort: c
      namespaces: [a]
      resources: {default: {gpu: {nominalQuota: 4}}}
      preemption: {reclaimWithinCohort: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}
    cq-b:
      cohort: c
      namespaces: [b]
      resources: {default: {gpu: {nominalQuota: 2}}}
    cq-c:
      cohort: c
      resources: {default: {gpu: {nominalQuota: 2}}}
)";
  auto w = ht::WorkloadBuilder().job(0, 4, 1000, "b").job(1, 4, 1000, "a").job(2, 2, 100, "a").build();
  w.jobs[0].priority = 1;
  w.jobs[1].priority = 5;
  w.jobs[2].priority = 5;
  const KueueRun r(w, ht::cluster(2, 8), cfg);
  EXPECT_EQ(r.start(1), 1);
  EXPECT_EQ(r.preemptions(0), 1) << "the 2-GPU a-workload borrows; B's borrowing, lower-priority workload goes";
  ASSERT_EQ(r.log.log.size(), 1u);
  EXPECT_EQ(r.log.log[0].reason, "kueue: borrowWithinCohort, cq-a borrows and preempts from cq-b");
  EXPECT_EQ(r.start(2), 32);
  // Without borrowWithinCohort, cq-a is at its nominal quota and cannot reclaim while borrowing.
  const KueueRun plain(w, ht::cluster(2, 8), replace(cfg, ", borrowWithinCohort: {policy: LowerPriority}", ""));
  EXPECT_EQ(plain.preemptions(0), 0);
  EXPECT_EQ(plain.start(2), 1000);
}

TEST(Kueue, PyTorchJobPodsAreAdmittedAsOneWorkload) {
  auto w =
      ht::WorkloadBuilder().job(0, 4, 100, "ns").job(0, 4, 100, "ns").job(0, 4, 100, "ns").job(1, 4, 10, "ns").build();
  for (JobIndex j = 0; j < 3; ++j) w.jobs[j].group = w.groups.intern("pytorchjob-1");
  const std::string cq = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources: {default: {gpu: {nominalQuota: 12}}}
)";
  const KueueRun r(w, ht::cluster(2, 8), cq);
  for (JobIndex j = 0; j < 3; ++j) EXPECT_EQ(r.start(j), 0) << "master and workers together";
  EXPECT_EQ(r.start(3), 100) << "quota 12 is held by the whole workload";
  const KueueRun small(w, ht::cluster(2, 8), replace(cq, "12", "8"));
  for (JobIndex j = 0; j < 3; ++j) EXPECT_EQ(small.state(j), JobState::Unfinished) << "12 > 8: never admitted";
  EXPECT_EQ(small.start(3), 1);
}

TEST(Kueue, RayClusterHoldsItsQuotaUntilDeleted) {
  auto w = ht::WorkloadBuilder().job(0, 8, 100, "ns").job(10, 8, 10, "ns").build();
  w.jobs[0].kind = models::JobKind::Interactive;
  const std::string cq = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources: {default: {gpu: {nominalQuota: 8}}}
)";
  EXPECT_EQ(KueueRun(w, ht::cluster(2, 8), cq).start(1), 100);
  const KueueRun ray(w, ht::cluster(2, 8), cq + "  rayCluster: {kinds: [interactive], deleteAfterIdle: 10m}\n");
  EXPECT_EQ(ray.start(1), 700) << "idle for 10 minutes after its work, still holding 8 GPUs of quota";
}

TEST(Kueue, WaitForPodsReadyEvictsAPartlyPlacedWorkloadAndBacksOff) {
  // Two 8-GPU pods, one 8-GPU node: one pod runs, the other stays pending; quota is not the limit.
  auto w = ht::WorkloadBuilder().job(0, 8, 10000, "ns").job(0, 8, 10000, "ns").build();
  for (JobIndex j = 0; j < 2; ++j) w.jobs[j].group = w.groups.intern("wl");
  const std::string cq = R"(  resourceFlavors: {default: {pools: [pool]}}
  waitForPodsReady: {enable: true, timeout: 5m, requeuingStrategy: {backoffLimitCount: 1}}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources: {default: {gpu: {nominalQuota: 16}}}
)";
  const KueueRun r(w, ht::cluster(1, 8), cq);
  EXPECT_EQ(r.start(0), 0);
  EXPECT_EQ(r.preemptions(0), 2) << "timeouts at 300 and at 390 + 300";
  ASSERT_EQ(r.log.log.size(), 2u);
  EXPECT_EQ(r.log.log[0].by, -1);
  EXPECT_EQ(r.log.log[0].reason, "kueue: waitForPodsReady, workload wl not ready within 300 s of admission");
  EXPECT_EQ(r.state(0), JobState::Rejected) << "deactivated after backoffLimitCount requeues";
  EXPECT_EQ(r.state(1), JobState::Rejected);
  EXPECT_EQ(r.end(0), 720) << "evicted at 690, terminated at 720 (requeued at 330, backoff 60 s, admitted at 390)";

  // Off (the default): the running pod keeps going and its quota stays reserved.
  const KueueRun off(w, ht::cluster(1, 8), replace(cq, "enable: true", "enable: false"));
  EXPECT_EQ(off.preemptions(0), 0);
  EXPECT_EQ(off.start(1), 10000);
}

TEST(Kueue, FairSharingTournamentAdmitsTheLowerDrsClusterQueueFirst) {
  // cq-a already borrows 2 of cq-l's 4 GPUs; at 10 both cq-a and cq-b nominate a 2-GPU workload
  // and only 2 GPUs are left. Classic order: equal priority and time, cq-a's was created first.
  // Fair sharing: DRS with the workload is 4000/4 = 1000 for cq-a against 500 for cq-b.
  const std::string cohort = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq-l: {cohort: c, resources: {default: {gpu: {nominalQuota: 4}}}}
    cq-a: {cohort: c, namespaces: [a], resources: {default: {gpu: {nominalQuota: 0}}}}
    cq-b: {cohort: c, namespaces: [b], resources: {default: {gpu: {nominalQuota: 0}}}}
)";
  const auto w = ht::WorkloadBuilder().job(0, 2, 1000, "a").job(10, 2, 100, "a").job(10, 2, 100, "b").build();
  const KueueRun classic(w, ht::cluster(1, 8), cohort);
  EXPECT_EQ(classic.start(1), 10);
  EXPECT_EQ(classic.start(2), 110);
  const KueueRun fair(w, ht::cluster(1, 8), cohort + "  fairSharing: {enable: true}\n");
  EXPECT_EQ(fair.start(2), 10);
  EXPECT_EQ(fair.start(1), 110);
}

TEST(Kueue, LowerOrNewerEqualPriorityPreemptsANewerWorkloadOfEqualPriority) {
  // All priority 5. w_pre (4 GPUs, created at 5) cannot preempt the older w_a; w_b (created at
  // 10) fits beside w_a. When w_a ends at 20, w_pre preempts w_b, which is newer.
  const std::string cq = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources: {default: {gpu: {nominalQuota: 4}}}
      preemption: {withinClusterQueue: LowerOrNewerEqualPriority}
)";
  auto w = ht::WorkloadBuilder().job(0, 2, 20, "ns").job(5, 4, 100, "ns").job(10, 2, 1000, "ns").build();
  for (auto& j : w.jobs) j.priority = 5;
  const KueueRun r(w, ht::cluster(1, 8), cq);
  EXPECT_EQ(r.preemptions(0), 0) << "w_a is older than w_pre";
  EXPECT_EQ(r.preemptions(2), 1) << "w_b is newer";
  EXPECT_EQ(r.start(1), 50);
  const KueueRun lower(w, ht::cluster(1, 8), replace(cq, "LowerOrNewerEqualPriority", "LowerPriority"));
  EXPECT_EQ(lower.preemptions(2), 0);
  EXPECT_EQ(lower.start(1), 1010);
}

// --- invariants ------------------------------------------------------------------------------

namespace {

class Invariants : public models::SimObserver {
 public:
  Invariants(const models::Workload& w, const models::ClusterSpec& c) : w_(w), ends(w.jobs.size(), 0) {
    for (const auto& p : c.pools)
      for (int i = 0; i < p.nodes; ++i) cap_.push_back(p.gpus_per_node);
    used_.assign(cap_.size(), 0);
    where_.resize(w.jobs.size());
    start.assign(w.jobs.size(), -1);
  }
  void on_event(sim::Tick, models::AuditKind k, JobIndex j, std::int32_t by, std::string_view reason) override {
    if (k == models::AuditKind::Preempt) {
      ++preemptions;
      EXPECT_TRUE(reason.starts_with("kueue: ")) << reason;
      if (!reason.starts_with("kueue: waitForPodsReady")) {
        EXPECT_GE(by, 0);
      }
    }
    if (k != models::AuditKind::Finish && k != models::AuditKind::Requeue) return;
    for (const auto& s : where_[j]) used_[s.node] -= s.gpus;
    where_[j].clear();
  }
  void on_start(sim::Tick t, JobIndex j, const models::Placement& p) override {
    EXPECT_TRUE(where_[j].empty());
    where_[j] = p;
    start[j] = t;
    for (const auto& s : p)
      if ((used_[s.node] += s.gpus) > cap_[s.node]) ++overcommits;
  }
  void on_end(sim::Tick t, JobIndex j, JobState s) override {
    ++ends[j];
    if (s == JobState::Completed) {
      EXPECT_EQ(t - start[j], w_.jobs[j].runtime) << j;
    }
  }
  void on_sample(const models::Sample&) override {}

  const models::Workload& w_;
  std::vector<int> cap_, used_;
  std::vector<models::Placement> where_;
  std::vector<int> ends;
  std::vector<sim::Tick> start;
  int overcommits = 0, preemptions = 0;
};

// Quota usage per ClusterQueue never exceeds what its cohort tree allows: checked through the
// GPUs running per namespace (a lower bound of the reserved quota).
models::Workload random_workload(std::uint64_t seed, int n) {
  sim::RngStream rng(seed, "test/kueue");
  ht::WorkloadBuilder b;
  double t = 0;
  static const int kGpus[] = {1, 1, 2, 4, 8, 16, 3};
  static const char* kNs[] = {"a", "b", "c", "d"};
  for (int i = 0; i < n; ++i) {
    t += std::floor(rng.exponential(1.0 / 30.0));
    // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
    // sequenced: under clang these workloads differed and the pinned fingerprints with them).
    const char* ns = kNs[rng.below(4)];
    const double run = std::floor(rng.lognormal(5, 1)) + 1;
    b.job(t, kGpus[rng.below(7)], run, ns);
  }
  auto w = b.build();
  for (auto& j : w.jobs) j.priority = static_cast<std::int32_t>(rng.below(3)) * 10;
  // Some two-pod workloads.
  for (std::size_t i = 0; i + 1 < w.jobs.size(); i += 17) {
    if (w.jobs[i].tenant != w.jobs[i + 1].tenant) continue;
    std::string name = "g";
    name += std::to_string(i);
    const auto g = w.groups.intern(name);
    w.jobs[i].group = w.jobs[i + 1].group = g;
  }
  return w;
}

const std::string kRandomPolicy = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq-a:
      cohort: c
      namespaces: [a]
      resources: {default: {gpu: {nominalQuota: 8, borrowingLimit: 8}}}
      preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
    cq-b:
      cohort: c
      namespaces: [b]
      queueingStrategy: StrictFIFO
      resources: {default: {gpu: {nominalQuota: 8, lendingLimit: 4}}}
      preemption: {withinClusterQueue: LowerOrNewerEqualPriority, reclaimWithinCohort: LowerPriority}
    cq-c:
      cohort: c
      namespaces: [c, d]
      resources: {default: {gpu: {nominalQuota: 16}}}
      preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 10}}
)";

}  // namespace

class KueueProperties : public ::testing::TestWithParam<std::tuple<std::uint64_t, bool>> {};

TEST_P(KueueProperties, NoOvercommitEveryJobEndsOnceAndRunsItsRecordedTime) {
  const auto& [seed, fair] = GetParam();
  const auto w = random_workload(seed, 500);
  const auto c = ht::cluster(4, 8);
  const std::string policy = kRandomPolicy + (fair ? "  fairSharing: {enable: true}\n" : "");
  Invariants obs(w, c);
  auto p = policies::make_policy("kueue", kueue_params(policy), 1);
  simulation::Simulation sim(w, c, *p, &obs);
  const auto stats = sim.run();
  EXPECT_EQ(obs.overcommits, 0);
  // A workload of namespace a larger than cq-a's potentialAvailable (8 + borrowingLimit 8) is never
  // admitted; every other job completes.
  std::map<models::GroupId, int> group_gpus;
  for (const auto& j : w.jobs)
    if (j.group != models::kNone) group_gpus[j.group] += j.gpus;
  const auto ns_a = w.tenants.find("a");
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    EXPECT_EQ(obs.ends[j], 1) << j;
    const auto& job = w.jobs[j];
    const int total = job.group != models::kNone ? group_gpus[job.group] : job.gpus;
    const bool never = job.tenant == ns_a && total > 16;
    EXPECT_EQ(sim.job_state(j), never ? JobState::Unfinished : JobState::Completed) << "job " << j << " " << total;
  }
  EXPECT_GT(obs.preemptions, 0);
  // Deterministic.
  auto p2 = policies::make_policy("kueue", kueue_params(policy), 1);
  simulation::Simulation again(w, c, *p2, nullptr);
  EXPECT_EQ(again.run().fingerprint, stats.fingerprint);
}

INSTANTIATE_TEST_SUITE_P(Seeds, KueueProperties,
                         ::testing::Combine(::testing::Values(1u, 2u, 3u), ::testing::Values(false, true)));

TEST(KueueProperties, RealTraceEveryJobEndsOnceAndQuotaBoundsTheRunningGpus) {
  // The bundled RICC example, with its single ClusterQueue cut to half the cluster.
  auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-kueue.yaml");
  sc.policy.params.at("clusterQueues.all.resources.default.gpu.nominalQuota").text = "4096";
  const auto w = scenarios::build_workload(sc);
  Invariants obs(w, sc.cluster);
  auto p = policies::make_policy("kueue", sc.policy.params, 1);
  simulation::Simulation sim(w, sc.cluster, *p, &obs);
  sim.run();
  EXPECT_EQ(obs.overcommits, 0);
  EXPECT_LE(sim.peak_used_gpus(), 4096) << "admitted quota bounds what runs";
  for (JobIndex j = 0; j < w.jobs.size(); ++j) EXPECT_EQ(obs.ends[j], 1) << j;
}

TEST(KueueProperties, RealTraceWithAdmissionFairSharingKeepsTheInvariants) {
  // The same run with the RICC users' LocalQueues ordered by their decayed usage (half-life 1 h):
  // every job still ends once within the quota, and the order changes.
  auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-kueue.yaml");
  sc.policy.params.at("clusterQueues.all.resources.default.gpu.nominalQuota").text = "4096";
  const auto w = scenarios::build_workload(sc);
  auto run = [&](const policies::PolicyParams& params, Invariants& obs) {
    auto p = policies::make_policy("kueue", params, 1);
    simulation::Simulation sim(w, sc.cluster, *p, &obs);
    const auto stats = sim.run();
    EXPECT_LE(sim.peak_used_gpus(), 4096);
    return stats.fingerprint;
  };
  Invariants base_obs(w, sc.cluster);
  const std::string base = run(sc.policy.params, base_obs);
  auto params = sc.policy.params;
  params["admissionFairSharing.usageHalfLifeTime"] = {"1h", "", 0, 0};
  params["clusterQueues.all.admissionScope.admissionMode"] = {"UsageBasedAdmissionFairSharing", "", 0, 0};
  Invariants obs(w, sc.cluster);
  const std::string afs = run(params, obs);
  EXPECT_EQ(obs.overcommits, 0);
  for (JobIndex j = 0; j < w.jobs.size(); ++j) EXPECT_EQ(obs.ends[j], 1) << j;
  EXPECT_NE(afs, base) << "usage-based order differs from priority/FIFO on a contended trace";
}

// --- parking: inadmissible workloads in an index (policies/kueue/index.hpp) ------------------

TEST(KueueParking, IndexFindsTheFirstEntryFromAKeyWithinALimit) {
  using Key = policies::kueue::ParkedIndex::Key;
  policies::kueue::ParkedIndex index;
  index.reset(2, 10);
  // Tree 0: workloads 1..6 in queue order (priority 5 first, then by time), with their GPUs.
  index.insert(0, Key{0, 30, 3}, 8);
  index.insert(0, Key{0, 10, 1}, 16);
  index.insert(0, Key{-5, 50, 5}, 32);
  index.insert(0, Key{0, 20, 2}, 4);
  index.insert(0, Key{0, 40, 4}, 2);
  index.insert(0, Key{0, 40, 6}, 0);
  index.insert(1, Key{0, 10, 7}, 1);  // another ClusterQueue's tree
  const Key all = policies::kueue::ParkedIndex::min_key();
  EXPECT_EQ(index.first(0, all, policies::kueue::ParkedIndex::kAny), 5) << "the higher priority first";
  EXPECT_EQ(index.first(0, all, 16), 1);
  EXPECT_EQ(index.first(0, all, 8), 2);
  EXPECT_EQ(index.first(0, all, 3), 4);
  EXPECT_EQ(index.first(0, all, 0), 6);
  EXPECT_EQ(index.first(0, Key{0, 20, 2}, 16), 2) << "from a key: that key included";
  EXPECT_EQ(index.first(0, policies::kueue::ParkedIndex::after(Key{0, 20, 2}), 16), 3);
  EXPECT_EQ(index.first(0, Key{0, 40, 5}, 8), 6);
  EXPECT_EQ(index.first(0, policies::kueue::ParkedIndex::after(Key{0, 40, 6}), 64), -1);
  EXPECT_EQ(index.first(1, all, 0), -1);
  EXPECT_EQ(index.first(1, all, 1), 7);
  EXPECT_TRUE(index.contains(2));
  index.erase(0, 2);
  index.erase(0, 9);  // not in the index: nothing
  EXPECT_FALSE(index.contains(2));
  EXPECT_EQ(index.first(0, all, 8), 3);
  index.insert(0, Key{0, 5, 2}, 1);  // back, earlier in the queue, in the freed node
  EXPECT_EQ(index.first(0, all, 8), 2);
  EXPECT_EQ(index.first(0, Key{0, 6, 0}, 8), 3);
  // Ranks and the entry of a rank: tree 0 is now 5, 2, 1, 3, 4, 6.
  EXPECT_EQ(index.rank(0, all), 0u);
  EXPECT_EQ(index.rank(0, Key{0, 10, 1}), 2u);
  EXPECT_EQ(index.rank(0, policies::kueue::ParkedIndex::after(Key{0, 10, 1})), 3u);
  EXPECT_EQ(index.rank(0, policies::kueue::ParkedIndex::max_key()), 6u);
  EXPECT_EQ(index.rank(1, policies::kueue::ParkedIndex::max_key()), 1u);
  EXPECT_EQ(std::get<2>(index.nth(0, 0)), 5);
  EXPECT_EQ(std::get<2>(index.nth(0, 3)), 3);
  EXPECT_EQ(std::get<2>(index.nth(0, 5)), 6);
  EXPECT_EQ(index.nth(1, 0), (Key{0, 10, 7}));
}

TEST(KueueParking, ParkedWorkloadsArePassedOverUntilTheirGpusAreAvailable) {
  // One ClusterQueue of 8 GPUs on 2 nodes of 8 (BestEffortFIFO). w0 takes 6; w1 (8) parks; w2
  // (2) fits at once; w3 (1) fits when w2 ends at 52; when w0 ends at 100, 7 GPUs are free and w1
  // is passed over again, until w3 ends at 160; w4 (10) exceeds the quota and never runs.
  const auto w = ht::WorkloadBuilder()
                     .job(0, 6, 100, "ns")
                     .job(1, 8, 10, "ns")
                     .job(2, 2, 50, "ns")
                     .job(60, 1, 100, "ns")
                     .job(70, 10, 10, "ns")
                     .build();
  const std::string cq = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [ns]
      resources: {default: {gpu: {nominalQuota: 8}}}
)";
  const KueueRun run(w, ht::cluster(2, 8), cq);
  EXPECT_EQ(run.start(0), 0);
  EXPECT_EQ(run.start(2), 2);
  EXPECT_EQ(run.start(3), 60);
  EXPECT_EQ(run.start(1), 160);
  EXPECT_EQ(run.start(4), -1);
  EXPECT_EQ(run.state(1), JobState::Completed);
  EXPECT_NE(run.state(4), JobState::Completed);
}

namespace {

// Every decision and every pending reason of a run, in order.
class DecisionLog : public models::SimObserver {
 public:
  void on_event(sim::Tick t, models::AuditKind k, JobIndex j, std::int32_t v, std::string_view reason) override {
    if (k == models::AuditKind::Waiting) ++waiting;
    events.push_back(std::to_string(t) + " " + std::to_string(static_cast<int>(k)) + " " + std::to_string(j) + " " +
                     std::to_string(v) + " " + std::string(reason));
  }
  void on_start(sim::Tick t, JobIndex j, const models::Placement& p) override {
    std::string line = std::to_string(t) + " start " + std::to_string(j);
    for (const auto& s : p) {
      line += ' ';
      line += std::to_string(s.node);
      line += ':';
      line += std::to_string(s.gpus);
    }
    events.push_back(line);
  }
  void on_end(sim::Tick t, JobIndex j, JobState s) override {
    events.push_back(std::to_string(t) + " end " + std::to_string(j) + " " + std::to_string(static_cast<int>(s)));
  }
  void on_sample(const models::Sample&) override {}
  std::vector<std::string> events;
  int waiting = 0;
};

// The first 3 days of the bundled RICC log under `policy` with quota for half the cluster.
struct RiccRun {
  explicit RiccRun(const std::string& policy) {
    auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-kueue.yaml");
    sc.workload.window_end = 3 * sim::kDay;
    // The policy block in a scenario with RICC's pool (validation checks the flavors' pools).
    params = scenarios::parse_scenario(
                 "name: q\ncluster:\n  pools:\n    - {name: ricc, nodes: 1024, gpus_per_node: 8, "
                 "gpu_type: A100}\npolicy:\n  name: kueue\n" +
                     policy + "workload:\n  trace: tiny.csv\n",
                 kInline)
                 .policy.params;
    w = scenarios::build_workload(sc);
    auto p = policies::make_policy("kueue", params, 1);
    simulation::Simulation sim(w, sc.cluster, *p, &log);
    fingerprint = sim.run().fingerprint;
    for (JobIndex j = 0; j < w.jobs.size(); ++j)
      waited += sim.job_start(j) > w.jobs[j].submit || sim.job_start(j) < 0 ? 1 : 0;
  }
  policies::PolicyParams params;
  models::Workload w;
  DecisionLog log;
  std::string fingerprint;
  int waited = 0;
};

}  // namespace

TEST(KueueParking, RealTraceDecisionsEqualThoseOfTheQueueThatRetriesEveryWorkload) {
  // A ClusterQueue that also manages cpu (a quota no job reaches) never parks: every release puts
  // each inadmissible workload back and tries it. The GPU-only queue parks them and passes over
  // those whose GPUs are not available. Same decisions, same reasons, same order.
  const std::string parked = R"(  resourceFlavors: {default: {pools: [ricc]}}
  clusterQueues:
    all:
      namespaces: ["*"]
      resources: {default: {gpu: {nominalQuota: 4096}}}
)";
  const RiccRun a(parked);
  const RiccRun b(
      replace(parked, "{gpu: {nominalQuota: 4096}}", "{gpu: {nominalQuota: 4096}, cpu: {nominalQuota: 1000000}}"));
  EXPECT_EQ(a.w.jobs.size(), 1002u);
  EXPECT_EQ(a.waited, 560) << "a backlog that waits through many releases";
  EXPECT_EQ(a.log.waiting, b.log.waiting);
  EXPECT_EQ(a.log.events, b.log.events);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
}

TEST(KueueParking, RealTraceTwoClusterQueuesInACohortDecideAsWithoutParking) {
  // Two ClusterQueues borrowing from each other: admission cycles take both heads, parked or not.
  const std::string parked = R"(  resourceFlavors: {default: {pools: [ricc]}}
  clusterQueues:
    some:
      cohort: all
      namespaces: [user24, user19]
      resources: {default: {gpu: {nominalQuota: 1024, borrowingLimit: 512}}}
    rest:
      cohort: all
      namespaces: ["*"]
      resources: {default: {gpu: {nominalQuota: 3072}}}
)";
  const RiccRun a(parked);
  const RiccRun b(
      replace(replace(parked, "borrowingLimit: 512}}", "borrowingLimit: 512}, cpu: {nominalQuota: 1000000}}"),
              "{gpu: {nominalQuota: 3072}}}", "{gpu: {nominalQuota: 3072}, cpu: {nominalQuota: 1000000}}}"));
  EXPECT_EQ(a.waited, 512);
  EXPECT_EQ(a.log.waiting, b.log.waiting);
  EXPECT_EQ(a.log.events, b.log.events);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
}

// --- parameters ------------------------------------------------------------------------------

namespace {
const std::string kScenario = R"(name: kueue
cluster:
  pools:
    - name: a100
      nodes: 2
      gpus_per_node: 8
      gpu_type: A100
policy:
  name: kueue
  resourceFlavors:
    default: {pools: [a100]}
  cohorts:
    org: {fairSharing: {weight: 2}}
  admissionChecks:
    prov: {delay: 2m, retries: 1}
  clusterQueues:
    cq-a:
      cohort: org
      namespaces: [research, ml]
      queueingStrategy: StrictFIFO
      admissionChecks: [prov]
      resources:
        default: {gpu: {nominalQuota: 4, borrowingLimit: 1}, memory: {nominalQuota: 512Gi}}
      preemption:
        withinClusterQueue: LowerOrNewerEqualPriority
        reclaimWithinCohort: Any
      flavorFungibility: {whenCanBorrow: TryNextFlavor}
  waitForPodsReady: {enable: true, timeout: 10m}
  scoringStrategy: {type: MostAllocated, resources: {gpu: 3}}
workload:
  trace: tiny.csv
)";

}  // namespace

TEST(KueueParams, ScenarioBlockUsesTheCrdVocabulary) {
  const auto s = scenarios::parse_scenario(kScenario, kInline);
  const auto cfg = policies::kueue::parse_config(s.policy.params);
  ASSERT_EQ(cfg.cluster_queues.size(), 1u);
  const auto& q = cfg.cluster_queues[0];
  EXPECT_EQ(q.cohort, "org");
  EXPECT_EQ(q.namespaces, (std::vector<std::string>{"research", "ml"}));
  EXPECT_TRUE(q.strict_fifo);
  ASSERT_EQ(q.resources.size(), 1u);
  EXPECT_EQ(q.resources[0].resources[0]->nominal, 4);
  EXPECT_EQ(q.resources[0].resources[0]->borrowing_limit, 1);
  EXPECT_EQ(q.resources[0].resources[2]->nominal, 512 * 1024);
  EXPECT_FALSE(q.resources[0].resources[1].has_value());
  EXPECT_EQ(q.within_cluster_queue, policies::kueue::PreemptionPolicy::LowerOrNewerEqualPriority);
  EXPECT_EQ(q.reclaim_within_cohort, policies::kueue::PreemptionPolicy::Any);
  EXPECT_FALSE(q.stop_when_can_borrow);
  ASSERT_EQ(cfg.cohorts.size(), 1u);
  EXPECT_EQ(cfg.cohorts[0].weight, 2.0);
  ASSERT_EQ(cfg.admission_checks.size(), 1u);
  EXPECT_EQ(cfg.admission_checks[0].delay, 120 * kSecond);
  EXPECT_EQ(cfg.admission_checks[0].retries, 1);
  EXPECT_TRUE(cfg.wait_for_pods_ready);
  EXPECT_EQ(cfg.pods_ready_timeout, 10 * sim::kMinute);
  EXPECT_EQ(cfg.scheduler.scoring.type, policies::k8s::ScoringType::MostAllocated);
  EXPECT_EQ(cfg.scheduler.scoring.gpu_weight, 3);
  EXPECT_NE(policies::make_policy(s.policy.name, s.policy.params, 1), nullptr);

  const auto d = policies::kueue::parse_config({});
  EXPECT_FALSE(d.fair_sharing);
  EXPECT_FALSE(d.wait_for_pods_ready);
  EXPECT_EQ(d.pods_ready_timeout, 30 * sim::kMinute);
  EXPECT_EQ(d.backoff_base, 60 * kSecond);
  EXPECT_EQ(d.backoff_max, 3600 * kSecond);
}

TEST(KueueParams, BadValuesNameTheirLocation) {
  expect_one_error(replace(kScenario, "StrictFIFO", "Strict"), 20, "policy.clusterQueues.cq-a.queueingStrategy",
                   "unknown value \"Strict\"; expected: BestEffortFIFO, StrictFIFO");

  const auto errors = scenario_errors(replace(kScenario, "gpu: {nominalQuota: 4,", "tpu: {nominalQuota: 4,"));
  ASSERT_GE(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 23);
  EXPECT_EQ(errors[0].message(), "unknown resource \"tpu\"; expected: gpu, cpu, memory (did you mean \"gpu\"?)");

  expect_one_error(replace(kScenario, "512Gi", "512"), 23,
                   "policy.clusterQueues.cq-a.resources.default.memory.nominalQuota",
                   "expected a memory quantity such as 512Gi, 2Ti or 4096Mi, got \"512\"", 85);
  expect_one_error(replace(kScenario, "withinClusterQueue: Lower", "withinClusterQueues: Lower"), 25,
                   "policy.clusterQueues.cq-a.preemption.withinClusterQueues",
                   "unknown parameter \"clusterQueues.cq-a.preemption.withinClusterQueues\" for policy kueue; did you "
                   "mean \"clusterQueues.<cq>.preemption.withinClusterQueue\"?",
                   30);
  expect_one_error(replace(kScenario, "admissionChecks: [prov]", "admissionChecks: [nope]"), 21,
                   "policy.clusterQueues.cq-a.admissionChecks",
                   "unknown admission check \"nope\"; declare it under admissionChecks", 24);
  expect_one_error(replace(kScenario, "    default: {pools: [a100]}", "    other: {pools: [a100]}"), 21,
                   "policy.clusterQueues.cq-a.resources.default",
                   "unknown flavor \"default\"; declare it under resourceFlavors", 24);
  expect_one_error(replace(kScenario, "timeout: 10m", "timeout: soon"), 28, "policy.waitForPodsReady.timeout",
                   "expected a positive duration such as 30s, 500ms or 5m, got \"soon\"", 45);
  expect_one_error(replace(kScenario, "namespaces: [research, ml]", "namespaces: [research, research]"), 21,
                   "policy.clusterQueues.cq-a.namespaces",
                   "namespace \"research\" already has a LocalQueue for ClusterQueue \"cq-a\"", 24);
  expect_one_error(replace(kScenario, "org: {fairSharing: {weight: 2}}", "org: {parentName: org}"), 13,
                   "policy.cohorts.org.parentName", "cohort parents form a cycle through \"org\"", 23);
  expect_one_error(replace(kScenario, "type: MostAllocated", "type: Most"), 29, "policy.scoringStrategy.type",
                   "unknown scoring strategy \"Most\"; expected: LeastAllocated, MostAllocated, "
                   "RequestedToCapacityRatio",
                   27);
}

TEST(KueueAdmissionFairSharing, ConfigurationErrors) {
  expect_one_error(replace(kScenario, "waitForPodsReady: {enable: true",
                           "admissionFairSharing: {usageSamplingInterval: 0s}\n  waitForPodsReady: {enable: true"),
                   28, "policy.admissionFairSharing.usageSamplingInterval",
                   "expected a positive duration such as 30s, 500ms or 5m, got \"0s\"", 49);
  expect_one_error(replace(kScenario, "waitForPodsReady: {enable: true",
                           "admissionFairSharing: {resourceWeights: {gpus: 1}}\n  waitForPodsReady: {enable: true"),
                   28, "policy.admissionFairSharing.resourceWeights.gpus",
                   "unknown resource \"gpus\"; expected: gpu, cpu, memory (did you mean \"gpu\"?)", 50);
  expect_one_error(
      replace(kScenario, "queueingStrategy: StrictFIFO",
              "queueingStrategy: StrictFIFO\n      admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}"),
      21, "policy.clusterQueues.cq-a.admissionScope.admissionMode",
      "UsageBasedAdmissionFairSharing needs Kueue's admissionFairSharing block (usageHalfLifeTime, "
      "usageSamplingInterval, resourceWeights); without it Kueue ignores the admission scope",
      39);
}

// Pods are scored (k8s::score_node) once per distinct node capacity and usage, the score kept
// for the pod's other nodes alike (placement.cpp, node_score): a way of computing, not of deciding.
// These fingerprints are those of the code that scored every node (commit 0d3db00), on 48 nodes
// with CPUs and memory, jobs asking for both, under both scoring types.
TEST(KueueScoring, RememberedScoresPickAsScoringEveryNode) {
  auto w = random_workload(5, 800);
  sim::RngStream rng(9, "test/kueue-scoring");
  for (auto& j : w.jobs) {
    j.cpus = j.gpus * static_cast<std::int32_t>(1 + rng.below(6));
    j.memory_mib = j.gpus * static_cast<std::int64_t>(1 + rng.below(4)) * 32768;
  }
  models::ClusterSpec c;
  c.pools.push_back({"pool", 48, 8, "A100", 64, 512 * 1024});
  const std::string base = R"(  resourceFlavors: {default: {pools: [pool]}}
  clusterQueues:
    cq:
      namespaces: [a, b, c, d]
      resources: {default: {gpu: {nominalQuota: 384}}}
)";
  struct Case {
    const char* scoring;
    const char* fingerprint;
  };
  const Case cases[] = {
      {"  scoringStrategy: {type: LeastAllocated, resources: {cpu: 1, memory: 1}}\n", "92031c58efc28095"},
      {"  scoringStrategy: {type: MostAllocated, resources: {gpu: 3, cpu: 1, memory: 1}}\n", "6b1a7bd442309211"},
  };
  for (const Case& k : cases) {
    auto p = policies::make_policy("kueue", kueue_params(base + k.scoring), 1);
    simulation::Simulation sim(w, c, *p, nullptr);
    EXPECT_EQ(sim.run().fingerprint, k.fingerprint) << k.scoring;
  }
}

// Kube-scheduler node sampling where nodes are scored (160 nodes, 100 a cycle; one pool models
// cpu and memory and jobs ask for some or none, wide jobs included): the fingerprints are those
// of the placement before its speed-ups (main at cd4fc6e: every node offered one by one, scored
// through the eight-value memo), for the default LeastAllocated, MostAllocated with GPUs
// weighted, and every node scored. The node classes, word-wise counting and tentative-node
// checks (placement.cpp) must decide the same.
TEST(KueuePlacement, SampledScoredPlacementDecidesAsBeforeItsSpeedUps) {
  const auto sc =
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios/kueue-scored-sampling.yaml");
  const auto w = scenarios::build_workload(sc);
  struct Case {
    const char* key;
    const char* value;
    const char* fingerprint;
  };
  const Case cases[] = {
      {nullptr, nullptr, "a396ca938f9af067"},
      {"scoringStrategy.type", "MostAllocated", "e122653b5b61f509"},
      {"percentageOfNodesToScore", "100", "c8bcc9af14baab9e"},
  };
  for (const Case& k : cases) {
    auto params = sc.policy.params;
    if (k.key != nullptr) params[k.key] = {k.value, "", 0, 0};
    if (k.key != nullptr && std::string(k.key) == "scoringStrategy.type") {
      params["scoringStrategy.resources.gpu"] = {"3", "", 0, 0};
      params["scoringStrategy.resources.cpu"] = {"1", "", 0, 0};
      params["scoringStrategy.resources.memory"] = {"1", "", 0, 0};
    }
    auto p = policies::make_policy("kueue", params, 1);
    simulation::Simulation sim(w, sc.cluster, *p, nullptr);
    EXPECT_EQ(sim.run().fingerprint, k.fingerprint) << (k.key ? k.key : "default");
  }
}
