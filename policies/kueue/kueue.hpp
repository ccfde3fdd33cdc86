#pragma once

// Kueue as shipped in Red Hat OpenShift AI (docs POLICIES.md section 5): quota-level admission of
// whole Workloads into ClusterQueues, then placement of the admitted pods by kube-scheduler rules.
// User documentation with a YAML example: docs/policies/kueue.md.
//
// Model. A Workload is every job sharing Job::group (its pods), or one job when group is kNone;
// it exists once all its pods are submitted, and its request is the sum over its pods of gpus
// (nvidia.com/gpu), cpus (cores) and memory_mib (MiB). The namespace is the tenant; the LocalQueue
// of a namespace points to the ClusterQueue whose `namespaces` list it (or the one listing "*");
// where a namespace has several LocalQueues (`localQueues`), the job's queue picks one, and a job
// naming none of them goes to the namespace's first.
// A Workload whose namespace has no LocalQueue is rejected at once (the permission drill).
//
// The rules modelled, their upstream sources, the known differences and which file of this folder
// mirrors which part of Kueue: policies/kueue/README.md.
//
// Speed (same decisions): like Kueue's own cache, state lives between passes. A ClusterQueue that
// never preempts, does not block at its head and manages GPUs only parks its inadmissible
// workloads in an index by queue order and GPUs (index.hpp); a release requeues them all at
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
  // The LocalQueues pointing here, "namespace/name": a job whose namespace and queue
  // (kueue.x-k8s.io/queue-name) name one of them is that LocalQueue's. A namespace may have
  // several LocalQueues, of one or several ClusterQueues.
  std::vector<std::string> local_queues;
  bool strict_fifo = false;
  std::vector<FlavorQuotas> resources;  // in the written order
  // The coveredResources of each resourceGroup (gpu, cpu, memory), as the manifest wrote them.
  // Given: a workload asking for a resource no group covers stays pending ("resource ...
  // unavailable in ClusterQueue"), and each group gets its own flavor (flavorassigner.go). Empty
  // (headroom's own keys): one group, and resources the quotas do not name are not checked.
  std::vector<std::array<bool, kResources>> resource_groups;
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::Never;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::Never;
  bool borrow_within_cohort = false;  // policy LowerPriority
  std::optional<std::int32_t> max_priority_threshold;
  bool stop_when_can_borrow = true;    // whenCanBorrow: MayStopSearch
  bool stop_when_can_preempt = false;  // whenCanPreempt: TryNextFlavor
  bool prefer_borrowing = true;        // preference: BorrowingOverPreemption
  double weight = 1.0;                 // fairSharing.weight
  std::vector<std::string> admission_checks;
  // stopPolicy Hold or HoldAndDrain: the ClusterQueue is inactive and admits nothing ("ClusterQueue
  // ... is inactive"). A replay starts with nothing admitted, so draining evicts nothing.
  bool stopped = false;
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
