// plugins/network-topology-aware/network_topology_aware.go and the HyperNode search of
// actions/allocate/allocate.go (allocateForJob, selectBestHyperNodeForJob).
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "models/topology.hpp"
#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// Nodes of the group's running (not terminating) members.
void VolcanoPolicy::running_nodes(const Group& g, std::vector<NodeId>& out) const {
  for (JobIndex m : members(g))
    if (view_->state(m) == JobState::Running && !view_->terminating(m))
      for (const auto& sl : view_->placement(m)) out.push_back(sl.node);
}

// Hard mode (hyperNodeGradientFn, allocateForJob, selectBestHyperNodeForJob): tier by tier from
// the leaves up to highestTierAllowed, the HyperNodes (switches) of the tier whose idle or future
// idle covers minResources (the pre-filter; skipped, and the search limited to the subtree of the
// highest allowed ancestor of the nodes it holds, for a group with running members); the tasks
// are dry-run on each one's nodes, and of those where the group becomes ready or pipelined the
// one with the highest HyperNode binpack score wins (ties: more of the group's running tasks
// inside, then the smallest switch id, for Go's map order). The winner's allocation is redone
// for real into `ops`.
VolcanoPolicy::TaskRun VolcanoPolicy::run_hard(Group& g, std::uint32_t q, std::vector<Op>& ops,
                                               models::SwitchId& chosen) {
  touch(static_cast<std::uint32_t>(&g - groups_.data()));
  const models::Topology& t = *cluster_topology();
  const std::size_t cursor0 = g.cursor;
  std::vector<NodeId> held;
  running_nodes(g, held);
  models::SwitchId root = models::kNoSwitch;
  if (!held.empty()) {
    const models::SwitchId lca = t.lowest_common_switch(held);
    for (models::SwitchId a = lca; a != models::kNoSwitch && t.level(a) <= cfg_.highest_tier_allowed;) {
      root = a;
      const auto up = t.parents(a);
      a = up.empty() ? models::kNoSwitch : up.front();
    }
    if (root == models::kNoSwitch) {
      TaskRun r;
      r.fit_failed = true;
      return r;
    }
  }
  Res need{};
  for (std::size_t i = cursor0; i < g.pending.size(); ++i)
    if (mark(g.pending[i]) == Mark::None) need = add(need, members_[g.pending[i]].total);
  in_domain_.assign(cap_.size(), 0);
  TaskRun last;
  last.fit_failed = true;
  const std::int32_t top = std::min(cfg_.highest_tier_allowed, t.levels());
  for (std::int32_t tier = 1; tier <= top && chosen == models::kNoSwitch; ++tier) {
    double best_score = -1;
    std::int64_t best_inside = -1;
    for (const models::SwitchId sw : t.switches_at(tier)) {
      const auto under = t.nodes_under(sw);
      if (under.empty()) continue;
      if (root != models::kNoSwitch) {
        const auto anc = t.ancestors(under.front());
        if (sw != root && std::find(anc.begin(), anc.end(), root) == anc.end()) continue;
      } else if (g.has_min_res) {
        Res idle{}, future{};
        for (NodeId n : under)
          if (view_->cluster().node(n).up) {
            idle = add(idle, idle_[n]);
            future = add(future, future_idle(n));
          }
        bool fits_idle = true, fits_future = true;
        for (int d = 0; d < kDims; ++d) {
          fits_idle = fits_idle && g.min_res[d] <= idle[d];
          fits_future = fits_future && g.min_res[d] <= future[d];
        }
        if (!fits_idle && !fits_future) continue;
      }
      for (NodeId n : under) in_domain_[n] = 1;
      domain_on_ = true;
      g.cursor = cursor0;
      const TaskRun r = run_tasks(g, q, ops);
      domain_on_ = false;
      for (NodeId n : under) in_domain_[n] = 0;
      const bool ok = job_ready(g) || job_pipelined(g);
      undo(ops);
      if (!ok) {
        last = r;
        continue;
      }
      const double score = hypernode_binpack(under, need);
      std::int64_t inside = 0;
      for (NodeId n : held) inside += std::binary_search(under.begin(), under.end(), n) ? 1 : 0;
      if (score > best_score + 1e-12 || (std::abs(score - best_score) <= 1e-12 && inside > best_inside)) {
        best_score = score;
        best_inside = inside;
        chosen = sw;
      }
    }
  }
  g.cursor = cursor0;
  if (chosen == models::kNoSwitch) {
    last.push_back = false;
    return last;
  }
  for (NodeId n : t.nodes_under(chosen)) in_domain_[n] = 1;
  domain_on_ = true;
  const TaskRun r = run_tasks(g, q, ops);
  domain_on_ = false;
  return r;
}

// getSubJobHyperNodeBinPackingScore: over the weighted resources the group requests,
// Σ w (used + request) / allocatable / Σ w for the HyperNode's nodes; 0 on overflow.
double VolcanoPolicy::hypernode_binpack(std::span<const NodeId> under, const Res& need) const {
  const double w[kDims] = {cfg_.nta_binpack_gpu, cfg_.nta_binpack_cpu, cfg_.nta_binpack_memory};
  Res cap{}, used{};
  for (NodeId n : under) {
    cap = add(cap, cap_[n]);
    used = add(used, sub(cap_[n], idle_[n]));
  }
  double sum = 0, wsum = 0;
  for (int d = 0; d < kDims; ++d) {
    if (need[d] == 0 || w[d] == 0) continue;
    if (used[d] + need[d] > cap[d]) return 0;
    sum += w[d] * static_cast<double>(used[d] + need[d]) / static_cast<double>(cap[d]);
    wsum += w[d];
  }
  return wsum > 0 ? sum / wsum : 0;
}

// Soft mode: the group's allocated HyperNode is the lowest switch above the nodes it holds
// (running members, members placed in this session, this member's slices so far).
void VolcanoPolicy::soft_anchor(std::uint32_t gi, const std::vector<Op>& ops) {
  anchor_.clear();
  running_nodes(groups_[gi], anchor_);
  for (const Op& op : ops)
    if (op.kind != Op::Evict && members_[op.job].group == gi)
      for (const auto& w : op.where) anchor_.push_back(std::get<0>(w));
}

// batchNodeOrderFnForNetworkAwarePods, scaled by MaxNodeScore x weight: 1 on the allocated
// HyperNode's own leaf, else (maxTier - tier of the lowest common switch) / (maxTier - minTier);
// the nodes with the top score gain the share of the group's tasks under their leaf. 0 for the
// group's first task.
void VolcanoPolicy::soft_scores(JobIndex j, const SliceReq& sl, int gradient) const {
  const models::Topology& t = *cluster_topology();
  nta_score_.assign(cap_.size(), 0.0);
  if (anchor_.empty()) return;
  const models::SwitchId anchor = t.lowest_common_switch(anchor_);
  const std::int32_t max_tier = t.levels();
  std::vector<NodeId> pair = anchor_;
  double top = -1;
  for (NodeId n = 0; n < cap_.size(); ++n) {
    const Res avail = gradient == 0 ? idle_[n] : future_idle(n);
    if (!node_fits(n, avail, sl.r) || !eligible(n, (*jobs_)[j])) continue;
    const auto leaves = t.node_leaves(n);
    double sc = 0;
    if (!leaves.empty() && leaves.front() == anchor) {
      sc = 1;
    } else {
      pair.push_back(n);
      const models::SwitchId lca = t.lowest_common_switch(pair);
      pair.pop_back();
      if (max_tier == 1)
        sc = 1;
      else if (lca != models::kNoSwitch)
        sc = static_cast<double>(max_tier - t.level(lca)) / static_cast<double>(max_tier - 1);
    }
    nta_score_[n] = sc;
    top = std::max(top, sc);
  }
  const auto tasks =
      static_cast<double>(std::max(std::size_t{groups_[members_[j].group].member_count}, anchor_.size()));
  for (NodeId n = 0; n < cap_.size(); ++n) {
    if (nta_score_[n] != top || top < 0) continue;
    const auto leaves = t.node_leaves(n);
    if (leaves.empty()) continue;
    const auto under = t.nodes_under(leaves.front());
    double inside = 0;
    for (NodeId a : anchor_) inside += std::binary_search(under.begin(), under.end(), a) ? 1 : 0;
    nta_score_[n] += inside / tasks;
  }
  for (double& v : nta_score_) v *= 100.0 * cfg_.nta_weight;
}

}  // namespace headroom::policies::volcano::detail
