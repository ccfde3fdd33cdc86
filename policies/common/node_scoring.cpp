#include "policies/common/node_scoring.hpp"

#include <algorithm>
#include <cmath>

namespace headroom::policies::k8s {

using models::Job;

namespace {

// The integer arithmetic of noderesources/least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go, balanced_allocation.go and resource_allocation.go.

std::int64_t least_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

std::int64_t most_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0) return 0;
  requested = std::min(requested, capacity);  // non-zero defaults may exceed the capacity
  return requested * kMaxNodeScore / capacity;
}

// helper.BuildBrokenLinearFunction over points whose scores are already scaled to 0..100.
std::int64_t broken_linear(const std::vector<ShapePoint>& shape, std::int64_t p) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      return shape[i - 1].score + (shape[i].score - shape[i - 1].score) * (p - shape[i - 1].utilization) /
                                      (shape[i].utilization - shape[i - 1].utilization);
    }
  }
  return shape.empty() ? 0 : shape.back().score;
}

std::int64_t scaled_utilization(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0 || requested <= 0) return 0;
  if (requested >= capacity) return kMaxNodeScore;
  return requested * kMaxNodeScore / capacity;
}

struct Resource {
  std::int64_t requested;  // the node's (non-zero) requests plus the pod's
  std::int64_t allocatable;
  std::int64_t weight;
};

std::int64_t pod_nonzero_cpu(const Job& j) {
  return j.cpus > 0 ? std::int64_t{j.cpus} * 1000 : kDefaultMilliCpuRequest;
}
std::int64_t pod_nonzero_memory(const Job& j) { return j.memory_mib > 0 ? j.memory_mib : kDefaultMemoryRequestMib; }

std::int64_t fit_score(const ScoringStrategy& s, const models::Node& node, const NodeUsage& u, const Job& pod) {
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

std::int64_t balanced_score(const models::Node& node, const NodeUsage& u, const Job& pod) {
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

}  // namespace

NodeScores score_node(const ScoringStrategy& strategy, const models::Node& node, const NodeUsage& usage,
                      const models::Job& pod) {
  return {fit_score(strategy, node, usage, pod), balanced_score(node, usage, pod)};
}

}  // namespace headroom::policies::k8s
