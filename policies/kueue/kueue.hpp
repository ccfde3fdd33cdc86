#pragma once

// Kueue as shipped in Red Hat OpenShift AI (docs POLICIES.md section 5): quota-level admission of
// whole Workloads into ClusterQueues, then placement of the admitted pods by kube-scheduler rules.
// User documentation with a YAML example: docs/policies/kueue.md.
//
// Model. A Workload is every job sharing Job::group (its pods), or one job when group is kNone;
// it exists once all its pods are submitted, and its request is the sum over its pods of gpus
// (nvidia.com/gpu), cpus (cores) and memory_mib (MiB). The namespace is the tenant; the LocalQueue
// of a namespace points to the ClusterQueue whose `namespaces` list it (or the one listing "*").
// A Workload whose namespace has no LocalQueue is rejected at once (the permission drill).
//
// Rules modelled, with their sources in kubernetes-sigs/kueue:
//  - Quota arithmetic per (flavor, resource) (pkg/cache/scheduler/resource_node.go): guaranteed
//    (local) quota max(0, subtreeQuota - lendingLimit) when a lendingLimit is set, else 0; a cohort's
//    SubtreeQuota = own nominal + sum(child SubtreeQuota - child local); its Usage = sum(max(0,
//    child usage - child local)); available() and potentialAvailable() with borrowingLimit exactly
//    as POLICIES.md 5.2. Hierarchical cohorts (cohorts.<name>.parentName) with their own quota.
//  - Flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go fitsResourceQuota,
//    isPreferred): the CQ's flavors in written order, skipping flavors whose node pools do not
//    match the pods' GPU type; per resource NoFit when request > potentialAvailable, Fit when
//    request <= available (borrowing when usage + request > nominal), else Preempt when request
//    <= nominal or preemption while borrowing is possible (borrowWithinCohort, or fair sharing with
//    reclaimWithinCohort), confirmed by simulating the preemption (no candidates: NoFit, "waiting
//    for quota"). flavorFungibility whenCanBorrow (MayStopSearch | TryNextFlavor), whenCanPreempt
//    (TryNextFlavor | MayStopSearch) and preference (BorrowingOverPreemption |
//    PreemptionOverBorrowing) choose among flavors. One resource group: gpu, cpu and memory share
//    the flavor; a resource no flavor of the CQ lists is not quota-managed (as Kueue's
//    resources.excludeResourcePrefixes).
//  - Admission cycle (pkg/scheduler/scheduler.go, pkg/cache/queue/cluster_queue.go): one head per
//    ClusterQueue per cycle, the queue ordered by priority then creation/eviction time; under
//    BestEffortFIFO a head that does not fit goes to the inadmissible list until quota is released
//    in its cohort tree, under StrictFIFO it blocks its queue. Classic entry order
//    (classicalIterator): non-borrowing first, then priority, then FIFO; fair sharing
//    (fair_sharing_iterator.go): a tournament per cohort, lowest DRS including the nominated
//    workload first, then priority, then FIFO. An entry that no longer fits after an earlier one
//    this cycle is skipped; a Preempt entry whose targets overlap another's is skipped; cycles repeat
//    until nothing is admitted.
//  - Admission fair sharing (pkg/util/admissionfairsharing, pkg/cache/queue/afs,
//    controller/core/{localqueue,workload}_controller.go): in a CQ with admissionScope
//    UsageBasedAdmissionFairSharing the head is the workload whose LocalQueue (its namespace) has
//    the lowest usage = sum over covered resources of resourceWeight * (consumed + pending entry
//    penalty) / LocalQueue weight (weight 0: infinite), ties by the base order. Consumed decays
//    every usageSamplingInterval from the last update: C = C * (1 - a) + U * a, a = 1 -
//    0.5^(elapsed / usageHalfLifeTime), U the LocalQueue's admitted usage (memory in bytes);
//    reserving quota adds an entry penalty a(sampling) * request, settled into C when the
//    workload is admitted (after its checks), with the decay up to that moment. Candidates of one
//    CQ from different LocalQueues are preempted higher usage first.
//  - Classic preemption (pkg/scheduler/preemption/preemption.go, common/ordering.go): candidates in
//    the CQ per withinClusterQueue (LowerPriority, LowerOrNewerEqualPriority) and in borrowing CQs
//    of the cohort tree per reclaimWithinCohort (LowerPriority, Any) or borrowWithinCohort
//    (LowerPriority, maxPriorityThreshold); ordered evicted first, other CQs first, lower priority,
//    most recently admitted, id; greedy removal until the workload fits (borrowing allowed or not
//    as the attempt says: same-CQ-only with borrowing; borrowWithinCohort; under-nominal reclaim
//    without borrowing, then same-CQ with borrowing), then fill-back in reverse order. The
//    hierarchical-advantage candidates of newer Kueue (classical/candidate_generator.go) are not
//    modelled.
//  - Fair sharing (pkg/cache/scheduler/fair_sharing.go, preemption/fairsharing/): DRS =
//    max over resources of sum over flavors of borrowing * 1000 / lendable (potentialAvailable of
//    the parent), divided by fairSharing.weight (weight 0 while borrowing: infinite), compared as
//    doubles; targets by the TargetClusterQueueOrdering (highest DRS CQ first, pruning non-borrowing
//    nodes); strategies LessThanOrEqualToFinalShare (S2-a) then LessThanInitialShare (S2-b) on
//    the almost-least-common-ancestors; then fill-back.
//  - Eviction: every pod of the workload is deleted through Session::preempt (Requeue, after
//    termination_grace_period, `by` the preemptor's first pod, a reason naming the rule); once
//    none runs the quota is released and the workload requeued whole, its queue time the eviction.
//    A Preempt entry's usage counts for the rest of its cycle (scheduler.go cq.AddUsage). A
//    workload evicted by a preemptor that is still pending re-enters its queue when the preemptor
//    reserves quota (at the latest a grace period later), else 1 ms after its eviction completes:
//    Kueue's controllers take real time there, and without it a simulation could trade the quota
//    back and forth at one instant.
//  - Admission checks (pkg/controller/admissionchecks, workload conditions): a workload of a CQ with
//    admissionChecks gets QuotaReserved and stays suspended until every check is Ready (after the
//    check's delay); a check answering Retry releases the quota and requeues the workload.
//  - waitForPodsReady (pkg/controller/core/workload_controller.go, apis/config/v1beta2/defaults.go):
//    off by default; when on, an admitted workload whose pods are not all running `timeout` after
//    admission is evicted and requeued after backoffBaseSeconds * 2^(n-1) (capped at
//    backoffMaxSeconds, no jitter); after backoffLimitCount requeues it is deactivated (rejected).
//  - Placement by kube-scheduler (policies/kubernetes/kubernetes.hpp): each admitted pod is filtered
//    (NodeResourcesFit, nodes up, the flavor's node pools, the GPU type) and scored by
//    k8s::score_node with the configured scoringStrategy, ties to the lowest node index, in
//    (priority, admission time) order. No gang at placement: a pod that does not fit stays pending
//    while its workload holds the quota. kube-scheduler's own backoff and pod preemption are not
//    modelled. A job larger than one node is node-sized worker pods (models::pod_gpus; a
//    PyTorchJob of that many workers): each pod that fits binds at once (Session::bind) and holds
//    its GPUs while the others wait; the job runs when its last pod binds. An evicted workload's
//    bound pods are deleted (Session::unbind).
//  - OpenShift AI: jobs of the kinds in rayCluster.kinds are RayClusters: they hold their quota
//    until deleted, rayCluster.deleteAfterIdle after their work ends (kueue PR#1607). PyTorchJobs
//    are workloads of several pods admitted as one.
//
// Speed (same decisions): like Kueue's own cache, state lives between passes. A ClusterQueue that
// never preempts, does not block at its head and manages GPUs only parks its inadmissible
// workloads in an index by queue order and GPUs (kueue_index.hpp); a release requeues them all at
// once, and the admission cycles pass over those whose GPUs exceed what is available, which would
// be tried and found inadmissible for the same reason again.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/job.hpp"
#include "policies/api.hpp"
#include "policies/kubernetes/kubernetes.hpp"

namespace headroom::policies::kueue {

inline constexpr int kResources = 3;  // gpu (nvidia.com/gpu), cpu (cores), memory (MiB)

enum class PreemptionPolicy : std::uint8_t { Never, LowerPriority, LowerOrNewerEqualPriority, Any };
enum class FsStrategy : std::uint8_t { LessThanOrEqualToFinalShare, LessThanInitialShare };

struct Quota {
  std::int64_t nominal = 0;
  std::int64_t borrowing_limit = -1;  // -1: none
  std::int64_t lending_limit = -1;    // -1: none
};

// One flavor's quotas in a ClusterQueue or Cohort; resources not listed are absent.
struct FlavorQuotas {
  std::string flavor;
  std::array<std::optional<Quota>, kResources> resources;
};

struct FlavorConfig {
  std::string name;
  std::vector<std::string> pools;  // node pools the flavor selects; empty = every pool
};

struct CohortConfig {
  std::string name;
  std::string parent;  // parentName, or empty
  std::vector<FlavorQuotas> resources;
  double weight = 1.0;
};

struct ClusterQueueConfig {
  std::string name;
  std::string cohort;
  std::vector<std::string> namespaces;  // "*" = every namespace no other CQ lists
  bool strict_fifo = false;
  std::vector<FlavorQuotas> resources;  // in the written order
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::Never;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::Never;
  bool borrow_within_cohort = false;  // policy LowerPriority
  std::optional<std::int32_t> max_priority_threshold;
  bool stop_when_can_borrow = true;    // whenCanBorrow: MayStopSearch
  bool stop_when_can_preempt = false;  // whenCanPreempt: TryNextFlavor
  bool prefer_borrowing = true;        // preference: BorrowingOverPreemption
  double weight = 1.0;                 // fairSharing.weight
  std::vector<std::string> admission_checks;
  // admissionScope.admissionMode: UsageBasedAdmissionFairSharing orders this CQ's workloads by
  // their LocalQueue's decayed usage (needs Config::afs).
  bool usage_based_afs = false;
};

struct AdmissionCheckConfig {
  std::string name;
  sim::Tick delay = 0;  // until the check answers
  int retries = 0;      // it answers Retry this many times for a workload, then Ready
};

// Kueue's Configuration `admissionFairSharing` (apis/config/v1beta2/configuration_types.go).
struct AdmissionFairSharingConfig {
  bool enabled = false;                             // the block is given
  sim::Tick half_life = 0;                          // usageHalfLifeTime; 0 resets usage at every sample
  sim::Tick sampling = 5 * sim::kMinute;            // usageSamplingInterval (defaults.go: 5 min)
  std::array<double, kResources> weights{1, 1, 1};  // resourceWeights; memory counts in bytes
};

struct Config {
  std::vector<FlavorConfig> flavors;
  std::vector<CohortConfig> cohorts;
  std::vector<ClusterQueueConfig> cluster_queues;
  std::vector<AdmissionCheckConfig> admission_checks;
  bool fair_sharing = false;
  std::vector<FsStrategy> strategies{FsStrategy::LessThanOrEqualToFinalShare, FsStrategy::LessThanInitialShare};
  bool wait_for_pods_ready = false;
  sim::Tick pods_ready_timeout = 30 * sim::kMinute;
  sim::Tick backoff_base = 60 * sim::kSecond;
  sim::Tick backoff_max = 3600 * sim::kSecond;
  std::int64_t backoff_limit = -1;  // -1: none
  std::vector<models::JobKind> ray_kinds;
  sim::Tick ray_delete_after_idle = 0;
  AdmissionFairSharingConfig afs;
  std::map<std::string, double> local_queue_weights;  // namespace -> LocalQueue fairSharing.weight
  // topologyAwareScheduling: the podset-required-topology (or -preferred-) annotation given to the
  // Workloads of `tas_kinds` (empty = every kind), as a switch level of cluster.topology (1 =
  // leaf); 0 = off. Without a cluster topology it does nothing (docs/topology.md).
  std::int32_t tas_level = 0;
  bool tas_required = true;
  std::vector<models::JobKind> tas_kinds;
  k8s::Config scheduler;  // scoringStrategy, weights, termination_grace_period
};

// Parameter keys accepted under `policy:` (a <...> segment matches any text, dots included).
const std::vector<std::string>& param_keys();
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
Config parse_config(const PolicyParams& params);

std::unique_ptr<Policy> make_policy(Config config);
std::unique_ptr<Policy> make_policy(const PolicyParams& params);

}  // namespace headroom::policies::kueue
