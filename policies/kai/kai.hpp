#pragma once

// NVIDIA KAI-Scheduler (the open-source Run:ai scheduler), docs POLICIES.md section 4. Sources
// below are paths in NVIDIA/KAI-Scheduler (pkg/scheduler/... unless written otherwise).
//
// Model. A PodGroup is the set of jobs sharing Job::group (each job is one pod); minMember is
// Job::gang_min (0 = every member of the group in the workload). A job without a group is a
// PodGroup of one pod that takes all its GPUs at once (when it is larger than a node: over the
// nodes of one pool with the most free GPUs first). The KAI queue of a job is its Job::queue name; queues
// and their parents are declared in the policy block in the Queue CRD vocabulary (parentQueue,
// priority, resources.{gpu,cpu,memory}.{quota,overQuotaWeight,limit}); creation order (the final
// tie-break of queue order and of the leftover hand-out) is the order of the queues in the block.
// A job in an undeclared queue gets a top-level queue with the Helm defaults (gpu quota 0,
// overQuotaWeight 1, limit -1). Resources: gpu in units, cpu in millicores (Job::cpus * 1000),
// memory in MiB; cpu and memory count only where jobs request them.
//
// Rules modelled:
//  - Sessions (cmd/scheduler/app/options/options.go schedulePeriod, default 1 s): a session runs
//    at the next multiple of schedulePeriod after anything changed (a submit, a release, a timer),
//    with the actions allocate, consolidation, reclaim, preempt, stalegangeviction in that order.
//  - Fair share (plugins/proportion/resource_division/resource_division.go, proportion.go
//    setFairShareForQueues), per resource, top queues over the cluster total and each parent's
//    share over its children: deserved phase min(quota, min(request, limit)); over-quota
//    water-filling by queue priority, highest level first, shareWeight max(0, nW + k(nW - nU)),
//    whole-unit floors with the fraction remembered, more rounds while some queue took less than
//    its offer; the leftover one unit at a time by (largest fraction, older queue).
//    allocatableShare = min(limit, max(quota, fairShare)) (resource_share/resource_share.go).
//    Optional time-based fair share (docs/time-based-fairshare/README.md): nU is the queue's
//    GPU usage decayed with half-life usageParams.halfLifePeriod, normalised to the cluster's GPU
//    capacity over the same decayed window (GPU only; cpu and memory use nU = 0).
//  - Job order (actions/utils/job_order_by_queue.go, plugins/proportion/queue_order.go): at each
//    level of the queue tree the child with the best job wins by (not over fair share; within
//    quota with the job; higher queue priority; no resource with allocatable share 0; lower
//    dominant share with the job; lower share without it; smaller allocatable share; older
//    queue). In a leaf: higher priority (plugins/priority), then elastic tier below / at / above
//    minMember (plugins/elastic), then submit time, then job index.
//  - Allocate (actions/allocate): all-or-nothing per PodGroup (up to minMember pods, then the
//    rest one pod at a time as the group is pushed back); capacity checks first: limit at every
//    ancestor (capacity_policy/max_allowed_check.go, pending reason OverLimit) and, for
//    non-preemptible groups, allocatedNonPreemptible + req <= quota at every ancestor
//    (capacity_policy/quota_check.go, NonPreemptibleOverQuota). Placement
//    (plugins/nodeplacement/pack.go, spread.go): binpack picks the feasible node with the fewest
//    free GPUs (CPU-only pods: free cpu), spread the most; ties go to the lowest node index.
//  - Priority classes (pkg/scheduler/constants/priorities.go, docs/priority/README.md): train 50,
//    build-preemptible 75, build 100, inference 125; by job kind train/batch -> train,
//    interactive -> build, inference -> inference, unless priorityClassName.<kind> maps it.
//    Preemptible iff priority < 100 (pkg/common/podgroup/preemptible.go).
//  - Reclaim (actions/reclaim, plugins/proportion/reclaimable): reclaimer eligibility
//    allocated + req <= fairShare (and the non-preemptible quota rule); victims are running
//    preemptible groups of other queues, most saturated queue first, lowest priority and newest
//    first inside it, accumulated until the reclaimer fits; each victim must satisfy
//    MaintainFairShare or GuaranteeDeservedQuota at the level below the lowest common ancestor,
//    and the reclaimer's saturation condition must hold with reclaimerUtilizationMultiplier.
//  - Preempt (actions/preempt): victims from the same leaf queue, preemptible, strictly lower
//    priority, newest first.
//  - Consolidation (actions/consolidation): for a pending single-pod group, evict at most
//    max-consolidation-preemptees (16) preemptible single-node pods of one node when each of them
//    can be placed again on another node at once.
//  - Stale gangs (actions/stalegangeviction): a running group whose running plus succeeded pods
//    stay below minMember for default-staleness-grace-period (60 s) is evicted whole.
//  - minruntime (docs/plugins/minruntime.md): victims that have run less than the victim queue's
//    preemptMinRuntime / reclaimMinRuntime (inherited from parents, else the global value) are
//    protected.
//  - GPU sharing (docs/gpu-sharing/README.md; Helm global.gpuSharing, here `gpuSharing`, default
//    off): a pod with a fraction of one GPU (Job::gpu_milli with gpus <= 1, KAI gpu-fraction) gets
//    a share of one device (models::Slice::gpu_milli / device); shares of a device sum to at most
//    one GPU, and a device with shares leaves the node's whole free GPUs (KAI's reservation pod).
//    Queues then count GPUs in milli-GPUs: a share its fraction, a whole GPU 1000, quota and limit
//    x 1000 (KAI accounts ResReq.GPUs() as a float). The division floors over-quota offers to
//    whole GPUs and hands out the leftover min(1 GPU, left) at a time, as resource_division.go
//    does with float amounts. Node order (plugins/gpusharingorder, score 1000 above
//    nodeplacement's at most 9): nodes with a shared device the pod fits on first, then binpack /
//    spread on whole free GPUs. Device order (framework FittingGPUs with plugins/gpupack or
//    gpuspread, chosen by placementStrategy.gpu): binpack the most used shared device with room,
//    else a whole free GPU; spread a whole free GPU, else the least used shared device; equal
//    devices by index. Shares are not moved by consolidation (a pending share does not consolidate).
//    gpu-memory pods (Job::gpu_memory_mib, KAI gpu-memory): one GPU's memory is the pool's GPU type
//    memory_gib x 1024 floored to a multiple of 100 MiB (node label nvidia.com/gpu.memory,
//    api/node_info/node_info.go getNodeGpuMemory; no memory figure: DefaultGpuMemory 100 MiB); on a
//    node the pod is a share of ceil(memory / device memory x 100) / 100 (getGpuMemoryFractionalOnNode)
//    and its queue is charged that (AcceptedResource); limit and non-preemptible quota are checked
//    per node with it (capacity_policy IsTaskAllocationOnNodeOverCapacity), the job-level check
//    counting 0 GPUs; pending, it counts its fraction on the pool with the least GPU memory
//    (MinNodeGPUMemory, which KAI's snapshotNodes leaves at 100 MiB: not copied). Without
//    gpuSharing the pod is rejected (KAI's admission webhook refuses it).
//  - Topology (plugins/topology, policies/kai/topology.hpp): topologyConstraint's required /
//    preferred levels as switch levels of cluster.topology; every placement of a constrained
//    group (allocate, reclaim, preempt, consolidation) goes to the first domain, lowest level and
//    fullest first, that holds all its pods; with a required level and none, it stays pending.
// Every eviction goes through Session::preempt with `by` = the preemptor (kNoJob for stale gangs),
// in Requeue mode after terminationGracePeriod (30 s); the preemptor is pipelined: it is tried
// first once its victims are gone.
//
// Bounds per session (for large clusters): consolidation for at most 8 pending groups over 64
// candidate nodes each; reclaim / preempt solvers for at most 64 pending groups; the allocate pass
// stops once every pending pod is as large as one of its shape that failed in the session and 64
// groups have failed.
//
// Not modelled: multi-device fractions (gpu-fraction-num-devices), MIG, and KAI's distinction of a
// shared device whose pods are all releasing; with gpuSharing off a job with gpu_milli takes whole
// GPUs; a device's room for gpu-memory pods in MiB (headroom checks the rounded-up fractions, so it
// may pack less than KAI, never more), a gpu-memory pod of a whole GPU's memory or more; the topology
// plugin's node scores inside a domain; DRA and node affinity; partial eviction of elastic groups
// (groups are evicted whole); consolidation of gangs. Jobs that no pool could ever hold are
// rejected (headroom convention, as fifo).

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policies/api.hpp"
#include "policies/kai/topology.hpp"

namespace headroom::policies::kai {

inline constexpr int kResources = 3;  // gpu, cpu (millicores), memory (MiB)
using Amounts = std::array<std::int64_t, kResources>;

struct QueueResource {
  std::int64_t quota = 0;  // -1: unlimited
  double over_quota_weight = 0;
  std::int64_t limit = 0;  // -1: no limit; 0: nothing beyond quota
};

struct QueueConfig {
  std::string name;
  std::string parent;  // "" = top level
  std::int64_t priority = 100;
  std::array<QueueResource, kResources> resources;
  Tick preempt_min_runtime = -1;  // -1: inherit
  Tick reclaim_min_runtime = -1;
};

enum class PlacementStrategy : std::uint8_t { Binpack, Spread };

struct Config {
  std::vector<QueueConfig> queues;  // in creation order
  PlacementStrategy gpu_placement = PlacementStrategy::Binpack;
  PlacementStrategy cpu_placement = PlacementStrategy::Binpack;
  Tick schedule_period = sim::kSecond;
  double k_value = 1.0;
  double reclaimer_utilization_multiplier = 1.0;
  Tick staleness_grace = 60 * sim::kSecond;
  int max_consolidation_preemptees = 16;
  Tick termination_grace = 30 * sim::kSecond;
  Tick preempt_min_runtime = 0;
  Tick reclaim_min_runtime = 0;
  Tick half_life = 0;  // time-based fair share decay; 0 = no decay
  bool time_based_fairshare = false;
  bool gpu_sharing = false;  // Helm global.gpuSharing: fractional pods share devices
  std::array<std::int32_t, 4> kind_priority = {50, 125, 100, 50};  // by models::JobKind
  TopologyConstraint topology;  // topologyConstraint over cluster.topology (kai_topology.hpp)
};

// One queue in a fair-share division among siblings.
struct DivisionEntry {
  std::int64_t deserved = 0;  // -1: the whole total
  std::int64_t limit = -1;    // -1: none
  std::int64_t request = 0;
  double weight = 0;
  std::int64_t priority = 100;
  double usage = 0;  // normalised historical usage (0 without time-based fair share)
  int creation = 0;  // smaller = older
};

// The fair shares of siblings sharing `total` (resource_division.go). `unit` is one whole unit of
// the resource in the amounts' scale (1000 for GPUs counted in milli-GPUs under gpuSharing): the
// over-quota offers are floored to whole units and the leftover goes out min(unit, left) at a time.
std::vector<std::int64_t> divide(const std::vector<DivisionEntry>& queues, std::int64_t total, double k_value,
                                 std::int64_t unit = 1);

const std::vector<std::string>& param_keys();
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
Config parse_config(const PolicyParams& params);

std::unique_ptr<Policy> make_policy(Config config);
std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed);

// The last pending reason the policy gave a job ("" if none); for tests and diagnostics.
std::string last_pending_reason(const Policy& policy, JobIndex job);

}  // namespace headroom::policies::kai
