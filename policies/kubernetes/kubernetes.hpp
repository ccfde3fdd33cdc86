#pragma once

// The default kube-scheduler profile with the NVIDIA device plugin in whole-GPU mode
// (docs POLICIES.md section 1). One headroom job is one pod; its requests are job.gpus
// nvidia.com/gpu, job.cpus cores and job.memory_mib MiB. There is no gang scheduling: a pod
// larger than every node stays Pending, as in Kubernetes (the engine ends it as Unfinished once
// nothing else can happen); it is never rejected.
//
// The rules modelled, their upstream sources, the known differences and which file holds which
// seam: policies/kubernetes/README.md.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "policies/api.hpp"
#include "policies/common/node_scoring.hpp"

namespace headroom::policies::k8s {

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
  // percentageOfNodesToScore: a cycle stops filtering once it has found this share of the nodes
  // feasible (policies/common/node_sampling.hpp); 0 = kube-scheduler's adaptive default, 100 =
  // every node (as headroom did before it modelled the sampling).
  std::int64_t percentage_of_nodes_to_score = 0;
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
  // together for want of GPUs move through the queues as one batch (FailedBatch,
  // queue/scheduling_queue.cpp).
  // Tests turn it off to show that every decision and pending reason stays the same.
  bool batch_failed_cycles = true;
};

// A node's total score for a pod (prioritizeNodes): each Score plugin's score times its weight,
// summed.
inline std::int64_t weighted_score(const Config& cfg, const models::Node& n, const NodeUsage& u,
                                   const models::Job& pod) {
  const NodeScores sc = score_node(cfg.scoring, n, u, pod);
  return cfg.fit_weight * sc.fit + cfg.balanced_weight * sc.balanced;
}

// Parameter keys accepted under `policy:` (a <tenant> segment matches any tenant name).
const std::vector<std::string>& param_keys();
// Checks the values of known keys; appends one error per problem, located at the value.
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
// Builds the configuration; throws the first error check_params reports.
Config parse_config(const PolicyParams& params);

std::unique_ptr<Policy> make_policy(Config config, std::uint64_t seed);
std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed);

}  // namespace headroom::policies::k8s
