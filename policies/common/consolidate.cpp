#include "policies/common/consolidate.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace headroom::policies {

using models::ClusterState;
using models::Job;
using models::NodeId;
using models::Placement;
using models::PoolId;
using models::Slice;

namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<Placement> place_multi_node(const ClusterState& cluster, PoolId p, std::int32_t gpus) {
  const std::int32_t g = cluster.spec().pools[p].gpus_per_node;
  if (g <= 0) return std::nullopt;
  const std::int32_t node_num = (gpus + g - 1) / g;
  const std::int32_t rem = gpus % g;
  const auto& full = cluster.nodes_with_free(p, g);
  const auto k = static_cast<std::int32_t>(full.size());
  Placement out;
  if (rem == 0) {
    if (k < node_num) return std::nullopt;
    auto it = full.begin();
    for (std::int32_t i = 0; i < node_num; ++i, ++it) out.push_back(Slice{*it, g, 0, 0});
    return out;
  }
  if (k >= node_num) {
    auto it = full.begin();
    for (std::int32_t i = 0; i + 1 < node_num; ++i, ++it) out.push_back(Slice{*it, g, 0, 0});
    out.push_back(Slice{*it, rem, 0, 0});
    return out;
  }
  if (k != node_num - 1) return std::nullopt;
  for (NodeId id : full) out.push_back(Slice{id, g, 0, 0});
  for (std::int32_t f = g - 1; f >= 1; --f) {
    const auto& s = cluster.nodes_with_free(p, f);
    if (s.empty()) continue;
    if (f < rem) return std::nullopt;
    out.push_back(Slice{*s.begin(), rem, 0, 0});
    return out;
  }
  return std::nullopt;
}

}  // namespace

bool pool_eligible(const ClusterState& cluster, PoolId pool, const Job& job, const models::Workload& workload) {
  if (job.gpu_type == 0 && job.node_set == 0) return true;
  if (!models::in_node_set(workload, job, cluster.spec().pools[pool].name)) return false;
  if (job.gpu_type == 0) return true;
  const std::size_t idx = job.gpu_type - 1u;
  if (idx >= workload.gpu_type_names.size()) return false;
  return iequal(cluster.spec().pools[pool].gpu_type, workload.gpu_type_names[idx]);
}

std::optional<Placement> consolidate_placement(const ClusterState& cluster, const Job& job,
                                               const models::Workload& workload) {
  const std::int32_t gpus = job.gpus;
  // Best fit over all eligible pools whose nodes can hold the whole job: minimise (free, id).
  std::int32_t best_free = INT32_MAX;
  NodeId best_node = 0;
  bool found = false;
  for (PoolId p = 0; p < cluster.pool_count(); ++p) {
    if (!pool_eligible(cluster, p, job, workload)) continue;
    const std::int32_t g = cluster.spec().pools[p].gpus_per_node;
    for (std::int32_t f = std::max(gpus, 1); f <= g; ++f) {
      const auto& s = cluster.nodes_with_free(p, f);
      if (s.empty()) continue;
      if (f < best_free || (f == best_free && *s.begin() < best_node)) {
        best_free = f;
        best_node = *s.begin();
        found = true;
      }
      break;
    }
  }
  if (found) return Placement{Slice{best_node, gpus, 0, 0}};
  for (PoolId p = 0; p < cluster.pool_count(); ++p) {
    if (!pool_eligible(cluster, p, job, workload)) continue;
    if (gpus <= cluster.spec().pools[p].gpus_per_node) continue;
    if (auto placement = place_multi_node(cluster, p, gpus)) return placement;
  }
  return std::nullopt;
}

std::optional<Placement> consolidate_in_pool(const ClusterState& cluster, PoolId p, std::int32_t gpus) {
  const std::int32_t g = cluster.spec().pools[p].gpus_per_node;
  for (std::int32_t f = std::max(gpus, 1); f <= g; ++f) {
    const auto& s = cluster.nodes_with_free(p, f);
    if (!s.empty()) return Placement{Slice{*s.begin(), gpus, 0, 0}};
  }
  if (gpus > g) return place_multi_node(cluster, p, gpus);
  return std::nullopt;
}

std::optional<std::string> never_fits(const ClusterState& cluster, const Job& job, const models::Workload& workload) {
  std::int64_t largest = 0;
  bool any_pool = false;
  for (PoolId p = 0; p < cluster.pool_count(); ++p) {
    if (!pool_eligible(cluster, p, job, workload)) continue;
    any_pool = true;
    const auto& pool = cluster.spec().pools[p];
    largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(pool.nodes) * pool.gpus_per_node);
  }
  if (!any_pool) {
    const std::string type = job.gpu_type > 0 && job.gpu_type - 1u < workload.gpu_type_names.size()
                                 ? workload.gpu_type_names[job.gpu_type - 1u]
                                 : std::string("?");
    return "no pool has GPU type " + type;
  }
  if (job.gpus > largest)
    return "requests " + std::to_string(job.gpus) + " GPUs; the largest eligible pool has " + std::to_string(largest);
  return std::nullopt;
}

}  // namespace headroom::policies
