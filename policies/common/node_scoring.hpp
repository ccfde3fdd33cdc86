#pragma once

// kube-scheduler's two resource score plugins (pkg/scheduler/framework/plugins/noderesources:
// NodeResourcesFit's scoringStrategy and NodeResourcesBalancedAllocation), in the reference's
// integer arithmetic. The kubernetes policy scores with them, and so do volcano (its
// nodeorder plugin's leastrequested, mostrequested and balancedresource) and kueue (kube-scheduler
// placing the admitted pods).

#include <algorithm>
#include <cmath>
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
// memory_mib) already holding `usage`. Inline: the placement loops of kubernetes, volcano and
// kueue call it for every feasible node of every pod.
namespace detail {

using models::Job;

// The integer arithmetic of noderesources/least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go, balanced_allocation.go and resource_allocation.go.

inline std::int64_t least_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

inline std::int64_t most_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0) return 0;
  requested = std::min(requested, capacity);  // non-zero defaults may exceed the capacity
  return requested * kMaxNodeScore / capacity;
}

// helper.BuildBrokenLinearFunction over points whose scores are already scaled to 0..100.
inline std::int64_t broken_linear(const std::vector<ShapePoint>& shape, std::int64_t p) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      return shape[i - 1].score + (shape[i].score - shape[i - 1].score) * (p - shape[i - 1].utilization) /
                                      (shape[i].utilization - shape[i - 1].utilization);
    }
  }
  return shape.empty() ? 0 : shape.back().score;
}

inline std::int64_t scaled_utilization(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0 || requested <= 0) return 0;
  if (requested >= capacity) return kMaxNodeScore;
  return requested * kMaxNodeScore / capacity;
}

struct Resource {
  std::int64_t requested;  // the node's (non-zero) requests plus the pod's
  std::int64_t allocatable;
  std::int64_t weight;
};

inline std::int64_t pod_nonzero_cpu(const Job& j) {
  return j.cpus > 0 ? std::int64_t{j.cpus} * 1000 : kDefaultMilliCpuRequest;
}
inline std::int64_t pod_nonzero_memory(const Job& j) {
  return j.memory_mib > 0 ? j.memory_mib : kDefaultMemoryRequestMib;
}

inline std::int64_t fit_score(const ScoringStrategy& s, const models::Node& node, const NodeUsage& u, const Job& pod) {
  Resource res[3];
  std::size_t n = 0;
  // Extended resources the pod does not request are bypassed (resource_allocation.go).
  if (s.gpu_weight > 0 && pod.gpus > 0) res[n++] = {u.gpus + pod.gpus, node.gpus, s.gpu_weight};
  if (s.cpu_weight > 0)
    res[n++] = {u.nonzero_cpu_milli + pod_nonzero_cpu(pod), std::int64_t{node.cpus} * 1000, s.cpu_weight};
  if (s.memory_weight > 0)
    res[n++] = {u.nonzero_memory_mib + pod_nonzero_memory(pod), node.memory_mib, s.memory_weight};
  std::int64_t score = 0, weights = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Resource& r = res[i];
    if (r.allocatable == 0) continue;  // not modelled on this node
    std::int64_t rs = 0;
    switch (s.type) {
      case ScoringType::LeastAllocated: rs = least_requested_score(r.requested, r.allocatable); break;
      case ScoringType::MostAllocated: rs = most_requested_score(r.requested, r.allocatable); break;
      case ScoringType::RequestedToCapacityRatio:
        rs = broken_linear(s.shape, scaled_utilization(r.requested, r.allocatable));
        if (rs <= 0) continue;  // requested_to_capacity_ratio.go counts only positive scores
        break;
    }
    score += rs * r.weight;
    weights += r.weight;
  }
  if (weights == 0) return 0;
  if (s.type == ScoringType::RequestedToCapacityRatio)
    return static_cast<std::int64_t>(std::round(static_cast<double>(score) / static_cast<double>(weights)));
  return score / weights;
}

inline std::int64_t balanced_score(const models::Node& node, const NodeUsage& u, const Job& pod) {
  // Actual requests (useRequested); a best-effort pod skips the plugin.
  if (pod.cpus <= 0 && pod.memory_mib <= 0) return 0;
  double f[2];
  int n = 0;
  if (node.cpus > 0)
    f[n++] = std::min(1.0, static_cast<double>(u.cpu_milli + std::int64_t{pod.cpus} * 1000) /
                               static_cast<double>(std::int64_t{node.cpus} * 1000));
  if (node.memory_mib > 0)
    f[n++] = std::min(1.0, static_cast<double>(u.memory_mib + pod.memory_mib) / static_cast<double>(node.memory_mib));
  const double std_dev = n == 2 ? std::abs((f[0] - f[1]) / 2) : 0.0;
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

}  // namespace detail

inline NodeScores score_node(const ScoringStrategy& strategy, const models::Node& node, const NodeUsage& usage,
                             const models::Job& pod) {
  return {detail::fit_score(strategy, node, usage, pod), detail::balanced_score(node, usage, pod)};
}

}  // namespace headroom::policies::k8s
