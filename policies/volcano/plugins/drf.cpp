// plugins/drf/drf.go: hierarchical DRF (enableHierarchy; docs/design/hdrf.md) and the flat
// PreemptableFn. The job share (JobOrderFn) is inline in policy.hpp.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// buildHierarchy for every job of the session: the nodes of its queue's path (a new node takes
// that queue's weight for its level, at least 1), then the job as a leaf requesting all its tasks.
void VolcanoPolicy::hdrf_build() {
  hnodes_.assign(1, HNode{"root"});
  for (std::uint32_t gi : active()) {
    const Group& g = groups_[gi];
    const auto& path = qpath_[g.queue];
    std::uint32_t node = 0;
    for (std::size_t i = 1; i < path.size(); ++i) {
      std::uint32_t next = UINT32_MAX;
      for (std::uint32_t c : hnodes_[node].children)
        if (hnodes_[c].group == UINT32_MAX && hnodes_[c].name == path[i]) next = c;
      if (next == UINT32_MAX) {
        next = static_cast<std::uint32_t>(hnodes_.size());
        HNode n{path[i]};
        n.weight = std::max(1.0, i < qweights_[g.queue].size() ? qweights_[g.queue][i] : 0.0);
        hnodes_.push_back(std::move(n));
        hnodes_[node].children.push_back(next);
      }
      node = next;
    }
    HNode leaf;
    leaf.group = gi;
    for (JobIndex j : members(g))
      if (j < submitted_upto_)
        for (int d = 0; d < kDims; ++d) leaf.request[d] += static_cast<double>(members_[j].total[d]);
    hnodes_[node].children.push_back(static_cast<std::uint32_t>(hnodes_.size()));
    hnodes_.push_back(std::move(leaf));
  }
  hdirty_ = true;
}

double VolcanoPolicy::drf_share(const FRes& alloc) const {
  double share = 0;
  for (int d = 0; d < kDims; ++d)
    if (static_cast<double>(total_[d]) >= 0.1) share = std::max(share, alloc[d] / static_cast<double>(total_[d]));
  return share;
}

// updateHierarchicalShare over the whole tree, the jobs' allocations changed by `delta`: a job is
// saturated when it holds all it requests of some resource, or requests a resource nobody can get
// any more (not demanding); a node scales its unsaturated children to their least dominant share
// and adds them up with the saturated ones, and is saturated when all its children are.
void VolcanoPolicy::hdrf_compute(const std::vector<std::pair<std::uint32_t, Res>>& delta) const {
  Res used{};
  for (const HNode& n : hnodes_)
    if (n.group != UINT32_MAX) used = add(used, groups_[n.group].alloc);
  for (const auto& [gi, r] : delta) used = add(used, r);
  std::array<bool, kDims> demanding{};
  for (int d = 0; d < kDims; ++d) demanding[d] = total_[d] > 0 && used[d] < total_[d];
  for (std::size_t i = hnodes_.size(); i-- > 0;) {
    HNode& n = hnodes_[i];
    if (n.group != UINT32_MAX) {
      Res a = groups_[n.group].alloc;
      for (const auto& [gi, r] : delta)
        if (gi == n.group) a = add(a, r);
      n.saturated = false;
      for (int d = 0; d < kDims; ++d) {
        n.alloc[d] = static_cast<double>(a[d]);
        if (n.alloc[d] < 0.1 || n.request[d] == 0) continue;
        if (n.alloc[d] >= n.request[d] || !demanding[d]) n.saturated = true;
      }
      n.share = drf_share(n.alloc);
      continue;
    }
    double mdr = 1;
    for (std::uint32_t c : n.children)
      if (hnodes_[c].share != 0 && !hnodes_[c].saturated) mdr = std::min(mdr, hnodes_[c].share);
    n.alloc = {};
    n.saturated = true;
    for (std::uint32_t c : n.children) {
      const HNode& ch = hnodes_[c];
      n.saturated = n.saturated && ch.saturated;
      if (ch.share == 0) continue;
      const double scale = ch.saturated ? 1 : mdr / ch.share;
      for (int d = 0; d < kDims; ++d) n.alloc[d] += ch.alloc[d] * scale;
    }
    n.share = drf_share(n.alloc);
  }
  hdirty_ = !delta.empty();
}

// compareQueues: down both queues' paths from the root, a saturated node last, then the lower
// share / weight; equal nodes compare their children on the paths. < 0: `a` first.
double VolcanoPolicy::hdrf_compare(std::uint32_t a, std::uint32_t b) const {
  if (hdirty_) hdrf_compute();
  const auto &pa = qpath_[a], &pb = qpath_[b];
  std::uint32_t l = 0, r = 0;
  const std::size_t depth = std::min(pa.size(), pb.size());
  for (std::size_t i = 0; i < depth; ++i) {
    const HNode &ln = hnodes_[l], &rn = hnodes_[r];
    if (ln.saturated != rn.saturated) return ln.saturated ? 1 : -1;
    const double ls = ln.share / ln.weight, rs = rn.share / rn.weight;
    if (ls != rs) return ls - rs;
    if (i + 1 == depth) break;
    auto child = [&](std::uint32_t node, const std::string& name) {
      for (std::uint32_t c : hnodes_[node].children)
        if (hnodes_[c].group == UINT32_MAX && hnodes_[c].name == name) return c;
      return UINT32_MAX;
    };
    l = child(l, pa[i + 1]);
    r = child(r, pb[i + 1]);
    if (l == UINT32_MAX || r == UINT32_MAX) return 0;  // a queue without jobs has no nodes
  }
  return 0;
}

// drf's ReclaimableFn with hierarchy: each candidate on its own, the reclaimer's job holding its
// request more and the victim's job the victim less, is a victim if the reclaimer's queue then
// sorts before the victim's.
std::vector<JobIndex> VolcanoPolicy::hdrf_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
  const std::uint32_t pg = members_[preemptor].group;
  for (JobIndex v : cands) {
    const std::uint32_t vg = members_[v].group;
    Res minus{};
    minus = sub(minus, members_[v].total);
    hdrf_compute({{pg, members_[preemptor].total}, {vg, minus}});
    if (hdrf_compare_now(groups_[pg].queue, groups_[vg].queue) < 0) out.push_back(v);
  }
  hdirty_ = true;
  return out;
}

double VolcanoPolicy::hdrf_compare_now(std::uint32_t a, std::uint32_t b) const {
  const bool dirty = hdirty_;
  hdirty_ = false;
  const double d = hdrf_compare(a, b);
  hdirty_ = dirty;
  return d;
}

// PreemptableFn: a victim when the preemptor's job share with the task is at most the victim job's
// share without the victims so far (within 1e-6).
std::vector<JobIndex> VolcanoPolicy::drf_victims(JobIndex preemptor, const Res& req,
                                                 const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
  const Group& pg = groups_[members_[preemptor].group];
  Res l = add(pg.alloc, req);
  double ls = 0;
  for (int d = 0; d < kDims; ++d)
    if (total_[d] > 0) ls = std::max(ls, static_cast<double>(l[d]) / static_cast<double>(total_[d]));
  std::vector<std::pair<std::uint32_t, Res>> allocs;
  for (JobIndex v : cands) {
    const std::uint32_t vg = members_[v].group;
    auto it = std::find_if(allocs.begin(), allocs.end(), [&](const auto& o) { return o.first == vg; });
    if (it == allocs.end()) {
      allocs.emplace_back(vg, groups_[vg].alloc);
      it = allocs.end() - 1;
    }
    it->second = sub(it->second, members_[v].total);
    double rs = 0;
    for (int d = 0; d < kDims; ++d)
      if (total_[d] > 0) rs = std::max(rs, static_cast<double>(it->second[d]) / static_cast<double>(total_[d]));
    if (ls < rs || std::abs(ls - rs) <= 1e-6) out.push_back(v);
  }
  return out;
}

}  // namespace headroom::policies::volcano::detail
