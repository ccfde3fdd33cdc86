// KAI-Scheduler topology-aware scheduling over cluster.topology (rules: topology.hpp).
#include "policies/kai/topology.hpp"

#include <algorithm>

#include "models/topology.hpp"

namespace headroom::policies::kai {

namespace {

constexpr double kResourceNotInDomainRatio = 1000.0;  // job_filtering.go requiredResourceNotInDomainRatio

// getJobRatioToFreeResources: the largest request / free over the requested resources.
double ratio(const NodeFree& request, const NodeFree& free) {
  double r = 0;
  for (int d = 0; d < 3; ++d) {
    if (request[d] <= 0) continue;
    r = std::max(
        r, free[d] <= 0 ? kResourceNotInDomainRatio : static_cast<double>(request[d]) / static_cast<double>(free[d]));
  }
  return r;
}

}  // namespace

bool TopologyConstraint::applies_to(models::JobKind kind) const {
  return active() && (kinds.empty() || std::find(kinds.begin(), kinds.end(), kind) != kinds.end());
}

std::vector<models::SwitchId> topology_domains(const models::Topology& t, const TopologyConstraint& c,
                                               std::span<const NodeFree> free, std::span<const NodeFree> pods,
                                               bool multi_node, std::span<const models::NodeId> held) {
  const std::size_t switches = t.switch_count();
  const auto root = static_cast<models::SwitchId>(switches);  // the whole cluster
  const std::int32_t top = t.levels();
  // Free resources per domain and the job's request.
  std::vector<NodeFree> dfree(switches + 1, NodeFree{});
  for (const NodeFree& f : free)
    for (int d = 0; d < 3; ++d) dfree[root][d] += f[d];
  NodeFree request{}, largest{};
  for (const NodeFree& p : pods)
    for (int d = 0; d < 3; ++d) {
      request[d] += p[d];
      largest[d] = std::max(largest[d], p[d]);
    }
  auto level_of = [&](models::SwitchId s) { return s == root ? top + 1 : t.level(s); };
  auto nodes_of = [&](models::SwitchId s, std::vector<models::NodeId>& out) {
    out.clear();
    if (s == root) {
      for (models::NodeId n = 0; n < free.size(); ++n) out.push_back(n);
    } else {
      const auto u = t.nodes_under(s);
      out.assign(u.begin(), u.end());
    }
  };
  std::vector<models::NodeId> nodes;
  // checkJobDomainFit: representor pods (AllocatablePods) or, with a pod larger than a node, the
  // ratio to the domain's free resources.
  auto fits = [&](models::SwitchId s) {
    if (ratio(request, dfree[s]) > 1.0) return false;  // also implied by the representor count
    if (multi_node) return true;
    nodes_of(s, nodes);
    std::int64_t allocatable = 0;
    for (models::NodeId n : nodes) {
      std::int64_t k = static_cast<std::int64_t>(pods.size());
      for (int d = 0; d < 3; ++d)
        if (largest[d] > 0) k = std::min(k, free[n][d] / largest[d]);
      allocatable += k;
      if (allocatable >= static_cast<std::int64_t>(pods.size())) return true;
    }
    return false;
  };
  if (!fits(root)) return {};
  for (models::SwitchId s = 0; s < switches; ++s)
    for (models::NodeId n : t.nodes_under(s))
      for (int d = 0; d < 3; ++d) dfree[s][d] += free[n][d];
  // Relevant levels.
  const std::int32_t lo = c.preferred > 0 ? c.preferred : c.required;
  const std::int32_t hi = c.required > 0 ? c.required : top + 1;
  // With running pods and a required level: only inside the required-level domains holding them.
  std::vector<char> allowed;
  if (c.required > 0 && !held.empty()) {
    allowed.assign(switches + 1, 0);
    for (models::NodeId n : held)
      for (models::SwitchId a : t.ancestors(n))
        if (t.level(a) == c.required) {
          allowed[a] = 1;
          for (models::SwitchId s = 0; s < switches; ++s) {
            const auto u = t.nodes_under(s);
            if (t.level(s) < c.required && !u.empty()) {
              const auto au = t.ancestors(u.front());
              if (std::find(au.begin(), au.end(), a) != au.end()) allowed[s] = 1;
            }
          }
        }
  }
  // The tree sorted for bin-packing, in breadth-first levels from the root.
  auto children_of = [&](models::SwitchId s, std::vector<models::SwitchId>& out) {
    out.clear();
    if (s == root) {
      for (models::SwitchId x = 0; x < switches; ++x)
        if (t.parents(x).empty()) out.push_back(x);
    } else {
      const auto ch = t.children(s);
      out.assign(ch.begin(), ch.end());
    }
    std::stable_sort(out.begin(), out.end(), [&](models::SwitchId a, models::SwitchId b) {
      const double ra = ratio(request, dfree[a]), rb = ratio(request, dfree[b]);
      if (ra != rb) return ra > rb;
      return a < b;
    });
  };
  std::vector<std::vector<models::SwitchId>> levels;
  std::vector<char> seen(switches + 1, 0);
  std::vector<models::SwitchId> current{root}, next, kids;
  seen[root] = 1;
  while (!current.empty()) {
    levels.push_back(current);
    next.clear();
    for (models::SwitchId s : current) {
      children_of(s, kids);
      for (models::SwitchId k : kids)
        if (!seen[k]) {
          seen[k] = 1;
          next.push_back(k);
        }
    }
    current.swap(next);
  }
  std::vector<models::SwitchId> out;
  for (auto it = levels.rbegin(); it != levels.rend(); ++it)
    for (models::SwitchId s : *it) {
      const std::int32_t l = level_of(s);
      if (l < lo || l > hi) continue;
      if (!allowed.empty() && !allowed[s]) continue;
      if (s != root && !fits(s)) continue;
      out.push_back(s == root ? models::kNoSwitch : s);
    }
  return out;
}

void domain_mask(const models::Topology& t, models::SwitchId domain, std::vector<char>& mask) {
  if (domain == models::kNoSwitch) {
    mask.assign(mask.size(), 1);
    return;
  }
  mask.assign(mask.size(), 0);
  for (models::NodeId n : t.nodes_under(domain)) mask[n] = 1;
}

std::optional<models::Placement> fill_most_free(std::vector<std::pair<std::int64_t, models::NodeId>> candidates,
                                                std::int64_t gpus) {
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  models::Placement out;
  for (const auto& [free, n] : candidates) {
    if (gpus == 0) break;
    if (free <= 0) continue;
    const std::int64_t take = std::min(gpus, free);
    out.push_back(models::Slice{n, static_cast<std::int32_t>(take), 0, 0});
    gpus -= take;
  }
  if (gpus > 0) return std::nullopt;
  return out;
}

}  // namespace headroom::policies::kai
