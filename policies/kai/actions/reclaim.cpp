// KAI-Scheduler's reclaim action (pkg/scheduler/actions/reclaim/reclaim.go) with the proportion
// plugin's reclaimable rules (plugins/proportion/reclaimable: MaintainFairShare,
// GuaranteeDeservedQuota, the reclaimer's saturation) and the victim solver (solve).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

// Tries victims in order until the preemptor's pods fit; returns the victims or nothing.
// `next(v)` yields the candidates in order (false at the end); `accept(v)` says whether v may be
// a victim.
template <class Next, class Accept>
std::optional<std::vector<std::uint32_t>> KaiPolicy::solve(const std::vector<JobIndex>& pods, Next&& next,
                                                           Accept&& accept, std::vector<models::Placement>& plan,
                                                           const std::vector<std::pair<double, int>>* victim_queues) {
  Overlay ov = base();
  std::vector<std::uint32_t> chosen;
  const Amounts req = pods_demand(pods);
  std::int64_t freed = 0;
  // What place() sees, exactly, without shares: the whole GPUs free in the overlay on the pools
  // some pod may use (GPU type, node set), kept as victims are taken. Pods that ask more cannot
  // all be placed, so place() is not tried (the bound above it is the upstream-shaped heuristic
  // and decides; this one only skips attempts that fail). A reclaim taking thousands of victims
  // for pods confined to some pools tried place() after each, over a growing overlay.
  bool exact = !cfg_.gpu_sharing;
  std::vector<char> usable(cluster_->pool_count(), 0);
  std::int64_t need = 0, have = 0;
  // place() reads the overlay only on nodes of pools some pod may use (pool_ok), except under a
  // topology constraint (its domains are sized over every node): without one and without GPU
  // shares, a victim's pod with no slice on those pools is left out of the overlay. CEA Curie's
  // gangs waiting for thin nodes searched the fat ones' running jobs, thousands of nodes each.
  std::uint64_t usable_bits = 0;
  const bool skip_unusable = exact && !topology_applies(pods);
  if (exact) {
    for (JobIndex j : pods) {
      need += workload_->jobs[j].gpus;
      for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
        usable[p] = usable[p] || pool_ok(p, workload_->jobs[j]);
    }
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
      if (!usable[p]) continue;
      usable_bits |= p < 64 ? std::uint64_t{1} << p : ~std::uint64_t{0};
      have += cluster_->pool_free_gpus(p);
    }
    for (const Free& f : ov.nodes)
      if (usable[cluster_->node(f.node).pool]) have += f.gpus - cluster_->node(f.node).free_gpus;
    // Every pod of the victim queues taken would free at most what they hold on those pools:
    // when even that leaves the pods short, no victim order places them (the walk below would
    // take them all and fail).
    if (victim_queues != nullptr) {
      std::int64_t most = have;
      for (const auto& vq : *victim_queues)
        for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
          if (usable[p]) most += pool_run(-vq.second, p);
      if (most < need) return std::nullopt;
    }
  }
  for (std::uint32_t v = 0; next(v);) {
    if (!accept(v)) continue;
    chosen.push_back(v);
    for (JobIndex j : active_members(units_[v])) {
      if (skip_unusable && (pod_pools_[j] & usable_bits) == 0) continue;  // frees nothing the pods can use
      ov.take(*cluster_, view_->placement(j), -1);
      if (exact)
        for (const models::Slice& sl : view_->placement(j)) {
          if (usable[cluster_->node(sl.node).pool]) have += sl.gpus;
          exact = exact && sl.gpu_milli == 0;  // a share's device may free a whole GPU: no bound
        }
    }
    freed += units_[v].running_req[0];
    // (Whole free GPUs bound what can fit, except for shares, which also fit on shared devices.)
    if (!cfg_.gpu_sharing && freed + cluster_->free_gpus() < req[0]) continue;
    if (exact && have < need) continue;
    Overlay trial = ov;
    if (auto p = place(pods, trial)) {
      plan = std::move(*p);
      return chosen;
    }
  }
  return std::nullopt;
}

// Ancestors of q from q up to (excluding) the root.
std::vector<int> KaiPolicy::path(int q) const {
  std::vector<int> out;
  for (int n = q; n > 0; n = nodes_[n].parent) out.push_back(n);
  return out;
}

// The children of the lowest common ancestor on the sides of a and b.
std::pair<int, int> KaiPolicy::below_lca(int a, int b) const {
  auto pa = path(a), pb = path(b);
  std::reverse(pa.begin(), pa.end());
  std::reverse(pb.begin(), pb.end());
  std::size_t i = 0;
  while (i < pa.size() && i < pb.size() && pa[i] == pb[i]) ++i;
  return {pa[std::min(i, pa.size() - 1)], pb[std::min(i, pb.size() - 1)]};
}

double KaiPolicy::saturation(const QNode& q, const Amounts& alloc) const {
  double s = 0;
  for (int r = 0; r < kResources; ++r) {
    if (!active(r)) continue;
    if (q.fair[r] <= 0) {
      if (alloc[r] > 0) return std::numeric_limits<double>::infinity();
      continue;
    }
    s = std::max(s, static_cast<double>(alloc[r]) / static_cast<double>(q.fair[r]));
  }
  return s;
}

bool KaiPolicy::reclaim(Session& s, std::uint32_t id, int& searches) {
  Unit& u = units_[id];
  const QNode& leaf = nodes_[u.queue];
  // A queue at or above its fair share of GPUs cannot reclaim for a group whose every pod asks
  // for a GPU (the eligibility check below fails for its next pods, whichever they are).
  if (!cfg_.gpu_sharing && active(0) && u.members_without_gpus == 0 && leaf.alloc[0] >= leaf.fair[0]) return false;
  // Most failed groups are turned away by the checks below: their pod list is built after them.
  Amounts req{};
  if (!simple_next_demand(s, u, req)) return false;
  // Reclaimer eligibility: allocated + req <= fairShare.
  for (int r = 0; r < kResources; ++r)
    if (active(r) && req[r] > 0 && leaf.alloc[r] + req[r] > leaf.fair[r]) return false;
  if (capacity(u, req, {}) != Reason::None) return false;
  // Victim queues: other leaves with running preemptible groups, most saturated first.
  std::vector<std::pair<double, int>> queues;
  for (int q : leaves_) {
    if (q == u.queue || nodes_[q].running_units.empty()) continue;
    if (std::get<0>(*nodes_[q].running_units.begin()) >= 100) continue;
    queues.emplace_back(-saturation(nodes_[q], nodes_[q].alloc), -nodes_[q].creation);
  }
  if (queues.empty()) return false;
  const auto pods = next_pods(s, u);
  ++searches;
  std::sort(queues.begin(), queues.end());
  // Candidates queue by queue; a queue whose victims no strategy allows is left at once (its
  // remaining allocation only shrinks).
  std::size_t qi = 0;
  bool queue_done = false, started = false;
  std::set<QNode::RunKey>::const_iterator it;
  auto next = [&](std::uint32_t& v) {
    while (qi < queues.size()) {
      const QNode& vq = nodes_[-queues[qi].second];  // creation == node index
      if (!started) {
        it = vq.running_units.begin();
        started = true;
      }
      if (queue_done || it == vq.running_units.end() || std::get<0>(*it) >= 100) {
        ++qi;
        queue_done = started = false;
        continue;
      }
      v = static_cast<std::uint32_t>(-std::get<2>(*it));
      ++it;
      return true;
    }
    return false;
  };
  const Tick now = s.now();
  std::map<int, Amounts> taken;  // per queue node: allocation of the chosen victims
  std::string rule;
  auto accept = [&](std::uint32_t v) {
    const Unit& vu = units_[v];
    if (protected_by_min_runtime(vu, nodes_[vu.queue].reclaim_min_runtime, now)) return false;
    const auto [a, b] = below_lca(vu.queue, u.queue);
    const QNode& vq = nodes_[a];
    const QNode& rq = nodes_[b];
    Amounts remaining = vq.alloc;
    if (auto it = taken.find(a); it != taken.end()) add(remaining, it->second, -1);
    const Amounts va = unit_alloc(vu);
    bool maintain = false;
    for (int r = 0; r < kResources; ++r)
      if (active(r) && va[r] > 0 && remaining[r] > vq.allocatable[r]) maintain = true;
    bool guarantee = true, above = false;
    for (int r = 0; r < kResources; ++r) {
      if (!active(r)) continue;
      const std::int64_t dq = rq.res[r].quota < 0 ? kInf : rq.res[r].quota;
      if (rq.alloc[r] + req[r] > dq) guarantee = false;
      const std::int64_t dv = vq.res[r].quota < 0 ? kInf : vq.res[r].quota;
      if (remaining[r] > dv) above = true;
    }
    guarantee = guarantee && above;
    if (!maintain && !guarantee) {
      queue_done = true;
      return false;
    }
    rule = maintain ? "MaintainFairShare" : "GuaranteeDeservedQuota";
    for (int n : path(vu.queue)) add(taken[n], va);
    return true;
  };
  std::vector<models::Placement> plan;
  auto victims = solve(pods, next, accept, plan, &queues);
  if (!victims) return false;
  // Saturation: up the reclaimer's ancestors, an over-served reclaimer must stay below every
  // sibling.
  for (int x : path(u.queue)) {
    Amounts after = nodes_[x].alloc;
    add(after, req);
    if (auto it = taken.find(x); it != taken.end()) add(after, it->second, -1);
    const double ratio = saturation(nodes_[x], after);
    if (ratio <= 1) continue;
    for (int sib : nodes_[nodes_[x].parent].children) {
      if (sib == x) continue;
      Amounts sa = nodes_[sib].alloc;
      if (auto it = taken.find(sib); it != taken.end()) add(sa, it->second, -1);
      if (!(ratio * cfg_.reclaimer_utilization_multiplier < saturation(nodes_[sib], sa))) return false;
    }
  }
  const JobIndex by = pods.front();
  for (std::uint32_t v : *victims)
    evict(s, v, by, id,
          "reclaim: " + rule + " (queue " + nodes_[units_[v].queue].name + " for queue " + leaf.name + ")");
  pipeline(s, id, pods, plan);
  return true;
}

}  // namespace headroom::policies::kai::detail
