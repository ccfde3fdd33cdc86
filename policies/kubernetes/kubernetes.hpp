#pragma once

// The default kube-scheduler profile with the NVIDIA device plugin in whole-GPU mode
// (docs POLICIES.md section 1). One headroom job is one pod; its requests are job.gpus
// nvidia.com/gpu, job.cpus cores and job.memory_mib MiB. There is no gang scheduling: a pod
// larger than every node stays Pending, as in Kubernetes (the engine ends it as Unfinished once
// nothing else can happen); it is never rejected.
//
// Rules modelled, with their sources in kubernetes/kubernetes:
//  - Queue (pkg/scheduler/internal/queue/scheduling_queue.go, queuesort/priority_sort.go): the
//    active queue orders by priority (higher first), then queue-entry time, then job index. No
//    head-of-line blocking: every active pod is tried in one engine pass. A pod that fails goes to
//    the unschedulable pool with a backoff of podInitialBackoffSeconds doubling per attempt up to
//    podMaxBackoffSeconds, counted from the failure; its queue timestamp becomes the failure time.
//    A pod release (a cluster event) moves every unschedulable pod to the backoff queue (backoff
//    not over) or the active queue; so does podMaxInUnschedulablePodsDuration (5 min) in the
//    pool. Backoff expiry and the 5-minute flush are exact times here (kube-scheduler checks them
//    every 1 s and 30 s).
//  - Filter NodeResourcesFit: free resources minus those of higher-or-equal priority pods
//    nominated to the node must cover the request; cpu and memory only where the node models them
//    (cpus > 0, memory_mib > 0). Nodes that are down, or of another GPU type than the job asks
//    for (a node selector), are excluded and are not preemption candidates.
//  - Score (noderesources/least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go,
//    balanced_allocation.go, resource_allocation.go): NodeResourcesFit (weight 1) with the
//    configured strategy over its resources (default LeastAllocated over cpu and memory, weight 1
//    each: GPUs play no part by default) plus NodeResourcesBalancedAllocation (weight 1, cpu and
//    memory). Integer arithmetic as the reference; a node resource that is not modelled is left
//    out; cpu/memory requests of 0 count as 100 mCPU / 200 MiB in NodeResourcesFit scoring; a pod
//    requesting no cpu and no memory skips BalancedAllocation. Highest total wins; ties go to the
//    lowest node index, or to a seeded reservoir sample (tie_break: seeded). Every node is scored
//    (percentageOfNodesToScore is not modelled).
//  - Preemption (framework/preemption/preemption.go, defaultpreemption/default_preemption.go):
//    eligibility (preemptionPolicy Never; a lower-priority pod still terminating on the pod's
//    nominated node), candidate nodes (at least max(10 %, 100) from an offset: 0, or seeded),
//    SelectVictimsOnNode with reprieve in (higher priority, earlier start) order, node choice by
//    (lowest highest-priority victim, smallest sum of (priority + 2^31) over victims, fewest
//    victims, latest earliest-start among the highest-priority victims, first candidate). No PDBs.
//    Victims are requeued after termination_grace_period; the preemptor is nominated to the node,
//    binds there once the resources are free, and lower-priority pods nominated there lose their
//    nomination.
//  - ResourceQuota (quota.<tenant>.gpu = requests.nvidia.com/gpu of the namespace = tenant, and
//    quota.<tenant>.cpu = requests.cpu, .memory = requests.memory, .pods = count/pods; a job of
//    several pods counts Job::nodes pods, at least 1; cpu and memory count where jobs give them): a
//    pod that would push its namespace over quota is refused at admission and never enters the
//    scheduling queue; its controller creates it again every quota_retry (constant, default 10 s;
//    real controllers back off, which this does not model). In headroom the job therefore stays
//    Pending (never Rejected), with the pending reason "quota: rejected at admission, retrying",
//    and runs once quota frees. Admitted pods (pending or running) count against the quota until
//    they end or are evicted; an evicted pod is admitted again like a new one. A pod asking for
//    more than the whole quota is never retried.
//  - NVIDIA device plugin (NVIDIA/k8s-device-plugin: api/config/v1/config.go and consts.go,
//    internal/rm/rm.go, internal/rm/allocate.go), under `devicePlugin:` in its own vocabulary:
//    * sharing.timeSlicing.replicas: N: every GPU is advertised as N nvidia.com/gpu units (the
//      engine's ClusterState counts units: NodePool::units_per_gpu via advertised_cluster, so its
//      capacity checks stay exact); a pod's request is in units; samples count GPUs (units in use
//      rounded up to whole GPUs per pool). Sharing applies to every pool without a MIG geometry.
//      failRequestsGreaterThanOne: true: a pod asking for more than 1 unit on a time-sliced node is
//      bound, then fails at the kubelet's admission: it ends Failed, reason
//      "UnexpectedAdmissionError ..." (Session::fail). Pods sharing GPUs slow down: there is no
//      compute isolation and CUDA time-slices evenly, so with P pods (with GPUs) on a node of G GPUs
//      each progresses at min(1, G/P) of full speed (exact on 1-GPU nodes, the node's average
//      otherwise; a pod holding several replicas still gets one share). The engine moves their
//      finish times whenever a pod starts on or leaves the node (NodePool::time_sliced,
//      scenarios/simulation.cpp reslice). Not modelled: renameByDefault (nvidia.com/gpu.shared),
//      sharedDevicesAllocationPolicy (which GPU gets a replica), GPU memory, MPS.
//    * migStrategy: none | single | mixed, with migDevices.<pool> = the MIG geometry mig-parted
//      applies to that pool's nodes (fixed per node), in one of three forms:
//        migDevices.<pool>.<profile>: n     n instances of the profile on every GPU;
//        migDevices.<pool>: all-balanced    a named config of NVIDIA's default mig-parted config
//                                           (models/gpu_share.hpp mig_named_config);
//        migDevices.<pool>: [{devices: [0,1], mig-devices: {"3g.20gb": 2}}, {devices: [2],
//                           mig-enabled: false}, ...]   mig-parted config entries: GPU indices
//                           of each node (or `all`), mig-enabled (default true), mig-devices.
//      A GPU no entry names stays whole (MIG off). The pool's GPU type gives the MIG model
//      (gpu_share.hpp mig_models_for: A100-40GB, A100-80GB, H100-80GB, A30; a bare "A100" is the
//      80 GB one unless only the 40 GB one has the profiles named); each profile must be one of the
//      model's and each GPU's instances must fit its memory slices, placed largest first at their
//      first free allowed start as NVML does (e.g. 3g.20gb x2 + 1g.5gb is refused on an
//      A100-40GB: the two 3g take all 8 slices). A node advertises the sum over its GPUs
//      (internal/rm/device_map.go): single: all its MIG devices as nvidia.com/gpu, and, as the
//      plugin requires, every GPU in MIG mode with instances of one profile. mixed: each profile is
//      an independent integer resource nvidia.com/mig-<profile>, requested by a job whose GPU type
//      is "mig-<profile>" (or "<profile>"), and only the node's whole GPUs are nvidia.com/gpu (a
//      pool of all-MIG GPUs advertises none). Time-slicing does not apply to a pool with MIG. The
//      engine counts a MIG node in units: units_per_gpu when all its GPUs advertise as many, else
//      NodePool::units_per_node (the sum); the policy tracks each resource per node itself.
//  - A job wider than one node (models::pod_gpus: node-sized pods) is an Indexed Job / PyTorchJob
//    of that many pods sharing one queue entry: each pod that fits binds at once (Session::bind)
//    and holds its GPUs idle while the others wait; the job's work begins when its last pod binds.
//    Partial placement and the deadlocks it causes are real behaviour here (kubeflow/trainer#165).
//    A node failure or drain deletes bound pods; the controller recreates them. Bound pods of a
//    waiting job are not preemption victims (a simplification). `coscheduling: true` adds the
//    scheduler-plugins Coscheduling plugin: minMember = every pod, all bind together or none.
//  - No gang scheduling: pods of one group (Job::group) are placed one by one. While some but not
//    all of a group's live pods run, its pending pods get the reason "gang: partially placed for
//    N s, k of n pods running" once that has lasted partial_placement_threshold (default 60 s).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "policies/api.hpp"

namespace headroom::policies::k8s {

enum class ScoringType : std::uint8_t { LeastAllocated, MostAllocated, RequestedToCapacityRatio };

// One point of a RequestedToCapacityRatio shape: utilization 0..100, score 0..10 (scaled by 10
// to the 0..100 node score, as MaxCustomPriorityScore is 10).
struct ShapePoint {
  std::int64_t utilization = 0;
  std::int64_t score = 0;
};

// NodeResourcesFit's scoringStrategy. A weight of 0 leaves the resource out.
struct ScoringStrategy {
  ScoringType type = ScoringType::LeastAllocated;
  std::int64_t gpu_weight = 0;
  std::int64_t cpu_weight = 1;
  std::int64_t memory_weight = 1;
  std::vector<ShapePoint> shape;
};

inline constexpr std::int64_t kDefaultMilliCpuRequest = 100;   // schedutil.DefaultMilliCPURequest
inline constexpr std::int64_t kDefaultMemoryRequestMib = 200;  // schedutil.DefaultMemoryRequest

// What the pods bound to a node request in sum: actual requests and, for cpu and memory, the
// "non-zero" requests (0 counted as the defaults above) that NodeResourcesFit scores with.
struct NodeUsage {
  std::int64_t gpus = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::int64_t nonzero_cpu_milli = 0;
  std::int64_t nonzero_memory_mib = 0;
};

// Adds (sign 1) or removes (-1) what a bound pod's slice requests to a node's NodeUsage, its cpu
// and memory also as non-zero requests.
void add_slice_usage(NodeUsage& usage, const models::Slice& slice, int sign);

struct NodeScores {
  std::int64_t fit = 0;       // NodeResourcesFit, 0..100
  std::int64_t balanced = 0;  // NodeResourcesBalancedAllocation, 0..100
};

// The two resource score plugins for `pod` on a node of capacity `node` (its gpus, cpus,
// memory_mib) already holding `usage`.
NodeScores score_node(const ScoringStrategy& strategy, const models::Node& node, const NodeUsage& usage,
                      const models::Job& pod);

// The NVIDIA device plugin's configuration (NVIDIA/k8s-device-plugin api/config/v1): how each
// node's GPUs are advertised to the scheduler.
enum class MigStrategy : std::uint8_t { None, Single, Mixed };
// One entry of a mig-parted config (`mig-configs.<name>[i]`): the GPUs of each node it applies to
// and their geometry, or a named config of NVIDIA's default file for all GPUs (`config`).
struct MigDeviceEntry {
  std::vector<std::int32_t> devices;  // GPU indices on each node; empty = all
  bool mig_enabled = true;
  std::map<std::string, std::int32_t> mig_devices;  // profile -> instances per GPU
  std::string config;                               // "all-balanced", ...; then the rest is unused
};
struct DevicePlugin {
  MigStrategy mig_strategy = MigStrategy::None;  // migStrategy
  std::int32_t replicas = 1;                     // sharing.timeSlicing.replicas (1 = no sharing)
  bool fail_requests_greater_than_one = false;   // sharing.timeSlicing.failRequestsGreaterThanOne
  // migDevices.<pool>.<profile>: MIG slices of each profile per GPU on that pool's nodes (the
  // geometry mig-parted applies), e.g. {"a100": {"1g.5gb": 7}}. Profiles are "<g>g.<mem>gb".
  std::map<std::string, std::map<std::string, std::int32_t>> mig_devices;
  // migDevices.<pool>: a named config ("all-balanced") or a list of mig-parted entries.
  std::map<std::string, std::vector<MigDeviceEntry>> mig_layouts;
  std::map<std::string, ParamValue> mig_devices_at;  // where each pool's geometry was written
};

struct Config {
  ScoringStrategy scoring;
  std::int64_t fit_weight = 1;       // weights.NodeResourcesFit
  std::int64_t balanced_weight = 1;  // weights.NodeResourcesBalancedAllocation
  Tick termination_grace_period = 30 * sim::kSecond;
  Tick initial_backoff = 1 * sim::kSecond;
  Tick max_backoff = 10 * sim::kSecond;
  Tick max_in_unschedulable = 5 * sim::kMinute;
  bool seeded_tie_break = false;
  // ResourceQuota of a namespace (tenant name); -1 = that resource is not limited.
  struct Quota {
    std::int64_t gpu = -1;         // requests.nvidia.com/gpu
    std::int64_t cpu_milli = -1;   // requests.cpu
    std::int64_t memory_mib = -1;  // requests.memory
    std::int64_t pods = -1;        // count/pods
  };
  std::map<std::string, Quota> quota;
  Tick quota_retry = 10 * sim::kSecond;
  DevicePlugin device_plugin;
  // Pods of one group (Job::group) are placed one by one (no gang scheduling); the pending pods of
  // a group with some but not all of its pods running get the pending reason "gang: partially
  // placed for N s, k of n pods running" once that has lasted this long.
  Tick partial_placement_threshold = 60 * sim::kSecond;
  // The scheduler-plugins Coscheduling plugin (`coscheduling: true`): a job of several pods is a
  // PodGroup with minMember = its pods; its pods bind only all together (no partial placement,
  // no deadlock). Off by default, as in the default kube-scheduler profile.
  bool coscheduling = false;
  // Not a kube-scheduler setting but a way of computing the same thing: pods whose cycles failed
  // together for want of GPUs move through the queues as one batch (kubernetes.cpp, FailedBatch).
  // Tests turn it off to show that every decision and pending reason stays the same.
  bool batch_failed_cycles = true;
};

// Parameter keys accepted under `policy:` (a <tenant> segment matches any tenant name).
const std::vector<std::string>& param_keys();
// Checks the values of known keys; appends one error per problem, located at the value.
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
// Builds the configuration; throws the first error check_params reports.
Config parse_config(const PolicyParams& params);

std::unique_ptr<Policy> make_policy(Config config, std::uint64_t seed);
std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed);

}  // namespace headroom::policies::k8s
