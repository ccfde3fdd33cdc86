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
// The rules modelled, their KAI sources, the bounds per session and what is not modelled:
// policies/kai/README.md.

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
  TopologyConstraint topology;  // topologyConstraint over cluster.topology (topology.hpp)
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
