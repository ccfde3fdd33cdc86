#pragma once

// kube-scheduler's two resource score plugins (pkg/scheduler/framework/plugins/noderesources:
// NodeResourcesFit's scoringStrategy and NodeResourcesBalancedAllocation), in the reference's
// integer arithmetic. The kubernetes policy scores with them, and so do volcano (its
// nodeorder plugin's leastrequested, mostrequested and balancedresource) and kueue (kube-scheduler
// placing the admitted pods).

#include <cstdint>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"

namespace headroom::policies::k8s {

inline constexpr std::int64_t kMaxNodeScore = 100;           // framework.MaxNodeScore
inline constexpr std::int64_t kMaxCustomPriorityScore = 10;  // config.MaxCustomPriorityScore

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
inline void add_slice_usage(NodeUsage& u, const models::Slice& sl, int sign) {
  u.gpus += sign * std::int64_t{sl.gpus};
  u.cpu_milli += sign * std::int64_t{sl.cpus} * 1000;
  u.memory_mib += sign * sl.memory_mib;
  u.nonzero_cpu_milli += sign * (sl.cpus > 0 ? std::int64_t{sl.cpus} * 1000 : kDefaultMilliCpuRequest);
  u.nonzero_memory_mib += sign * (sl.memory_mib > 0 ? sl.memory_mib : kDefaultMemoryRequestMib);
}

struct NodeScores {
  std::int64_t fit = 0;       // NodeResourcesFit, 0..100
  std::int64_t balanced = 0;  // NodeResourcesBalancedAllocation, 0..100
};

// The two resource score plugins for `pod` on a node of capacity `node` (its gpus, cpus,
// memory_mib) already holding `usage`.
NodeScores score_node(const ScoringStrategy& strategy, const models::Node& node, const NodeUsage& usage,
                      const models::Job& pod);

}  // namespace headroom::policies::k8s
