// plugins/capacity/capacity.go: queue attributes (flat and hierarchical), Preemptive,
// JobEnqueueable and ReclaimableFn. Allocatable and the QueueOrderFn are inline in policy.hpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// capacity with enableHierarchy (plugins/capacity/capacity.go buildHierarchicalQueueAttrs,
// updateAncestors): every declared queue joins the workload's; a queue without a parent hangs
// under the root queue "root".
void VolcanoPolicy::build_tree() {
  auto index = [&](const std::string& name) {
    for (std::uint32_t q = 0; q < queues_.size(); ++q)
      if (queues_[q].name == name) return q;
    QueueS qs;
    qs.name = name;
    if (auto it = cfg_.queues.find(name); it != cfg_.queues.end()) qs.conf = it->second;
    queues_.push_back(qs);
    return static_cast<std::uint32_t>(queues_.size() - 1);
  };
  for (const auto& [name, conf] : cfg_.queues) index(name);
  root_ = index("root");
  for (std::uint32_t q = 0; q < queues_.size(); ++q)
    if (q != root_) queues_[q].parent = index(queues_[q].conf.parent.empty() ? "root" : queues_[q].conf.parent);
  for (std::uint32_t q = 0; q < queues_.size(); ++q) {
    std::vector<std::uint32_t> up;
    for (std::uint32_t a = queues_[q].parent; a != kNoQueue; a = queues_[a].parent) {
      HEADROOM_ASSERT(up.size() < queues_.size(), "volcano: cycle in the queue hierarchy");
      up.push_back(a);
    }
    queues_[q].ancestors.assign(up.rbegin(), up.rend());
    if (queues_[q].parent != kNoQueue) ++queues_[queues_[q].parent].children;
  }
}

// capacity (plugins/capacity/capacity.go buildQueueAttrs / buildHierarchicalQueueAttrs and
// checkHierarchicalQueue). Flat: realCapability = min(capability, max(0, total - Σ guarantee) +
// guarantee) (cpu or memory capability <= 0 is unlimited), deserved = the declared one clamped to
// realCapability, then raised to guarantee. Hierarchical: the root's capability and
// realCapability are unlimited and its deserved and guarantee sum its children's; a child's
// unset capability dimension inherits its parent's, deserved is raised to guarantee (not clamped),
// realCapability = min(capability, max(0, parent's realCapability - Σ siblings' guarantee) +
// guarantee); allocated, inqueue and elastic add up along the ancestors.
void VolcanoPolicy::capacity_attrs() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!hierarchy_) {
    for (QueueS& qs : queues_) {
      if (!qs.has_jobs) continue;
      const QueueConf& c = qs.conf;
      for (int d = 0; d < kDims; ++d) {
        double rc = static_cast<double>(std::max<std::int64_t>(0, total_[d] - total_guarantee_[d]) + c.guarantee[d]);
        if (c.capability[d] > 0 || (d == 0 && c.capability[d] == 0))
          rc = std::min(rc, static_cast<double>(c.capability[d]));
        qs.real_cap[d] = rc;
        double des = static_cast<double>(std::max<std::int64_t>(0, c.deserved[d]));
        if (d != 0 || c.deserved[d] >= 0) des = std::min(des, rc);
        qs.deserved[d] = std::max(des, static_cast<double>(c.guarantee[d]));
      }
      qs.gpu_deserved = c.deserved[0] >= 0 || c.guarantee[0] > 0;
      update_share(qs);
    }
    return;
  }
  for (QueueS& qs : queues_) {
    if (qs.children > 0) continue;
    for (std::uint32_t a : qs.ancestors) {
      QueueS& as = queues_[a];
      as.allocated = add(as.allocated, qs.allocated);
      as.request = add(as.request, qs.request);
      as.inqueue = add(as.inqueue, qs.inqueue);
      as.elastic = add(as.elastic, qs.elastic);
    }
  }
  // Parents before children: by depth.
  std::vector<std::uint32_t> order(queues_.size());
  for (std::uint32_t q = 0; q < order.size(); ++q) order[q] = q;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return queues_[a].ancestors.size() < queues_[b].ancestors.size();
  });
  std::vector<Res> child_guarantee(queues_.size(), Res{});
  for (const QueueS& qs : queues_)
    if (qs.parent != kNoQueue) child_guarantee[qs.parent] = add(child_guarantee[qs.parent], qs.conf.guarantee);
  QueueS& root = queues_[root_];
  root.deserved = {};
  root.gpu_deserved = false;
  for (std::uint32_t q : order) {
    QueueS& qs = queues_[q];
    const QueueConf& c = qs.conf;
    if (q == root_) {
      qs.capability = qs.real_cap = {kInf, kInf, kInf};
      continue;
    }
    const QueueS& p = queues_[qs.parent];
    for (int d = 0; d < kDims; ++d) {
      const bool set = c.capability[d] > 0 || (d == 0 && c.capability[d] == 0);
      qs.capability[d] = set ? static_cast<double>(c.capability[d]) : p.capability[d];
      qs.deserved[d] = static_cast<double>(std::max(std::max<std::int64_t>(0, c.deserved[d]), c.guarantee[d]));
      const double left = std::max(0.0, p.real_cap[d] - static_cast<double>(child_guarantee[qs.parent][d]));
      qs.real_cap[d] = std::min(left + static_cast<double>(c.guarantee[d]), qs.capability[d]);
    }
    qs.gpu_deserved = c.deserved[0] >= 0 || c.guarantee[0] > 0;
    if (qs.parent == root_) {
      for (int d = 0; d < kDims; ++d) root.deserved[d] += qs.deserved[d];
      root.gpu_deserved = root.gpu_deserved || qs.gpu_deserved;
    }
  }
  for (QueueS& qs : queues_) update_share(qs);
}

// LessEqualPartlyWithDimensionZeroFiltered(deserved, req) on allocated + req: some requested
// dimension, not zero on both sides, has allocated + req <= deserved.
bool VolcanoPolicy::within_deserved_somewhere(const QueueS& qs, const Res& req) {
  for (int d = 0; d < kDims; ++d) {
    if (req[d] <= 0) continue;
    const double fut = static_cast<double>(qs.allocated[d] + req[d]);
    if (fut < 0.1 && qs.deserved[d] < 0.1) continue;
    if (fut < qs.deserved[d] || std::abs(fut - qs.deserved[d]) < 0.1) return true;
  }
  return false;
}

// The ancestor `depth` levels up (queueAncestorAtDepth), or kNoQueue.
std::uint32_t VolcanoPolicy::ancestor_at(const QueueS& qs, std::int64_t depth) const {
  if (depth <= 0 || static_cast<std::int64_t>(qs.ancestors.size()) < depth) return kNoQueue;
  return qs.ancestors[qs.ancestors.size() - static_cast<std::size_t>(depth)];
}

// Preemptive: proportion uses Allocatable; capacity needs the queue Open, allocated + req <=
// realCapability, and allocated + req <= deserved in some requested dimension (with
// ancestorReclaimLevel, of the queue or of an ancestor up to that level).
bool VolcanoPolicy::preemptive(std::uint32_t q, const Res& req) const {
  if (!capacity_) return allocatable(q, req);
  const QueueS& qs = queues_[q];
  if (qs.conf.state != QueueState::Open) return false;
  for (int d = 0; d < kDims; ++d)
    if (req[d] > 0 && static_cast<double>(qs.allocated[d] + req[d]) > qs.real_cap[d]) return false;
  if (within_deserved_somewhere(qs, req)) return true;
  if (!hierarchy_) return false;
  for (std::int64_t level = 1; level <= cfg_.ancestor_reclaim_level; ++level) {
    const std::uint32_t a = ancestor_at(qs, level);
    if (a == kNoQueue || a == root_) continue;
    if (within_deserved_somewhere(queues_[a], req)) return true;
  }
  return false;
}

// capacity JobEnqueueable (jobEnqueueable, checkJobEnqueueableHierarchically): the queue is Open
// and minResources + allocated + inqueue - elastic <= realCapability in minResources' dimensions,
// for the queue and every ancestor. Returns the refusing queue, or kNoQueue.
std::uint32_t VolcanoPolicy::capacity_enqueue_block(std::uint32_t q, const Res& min_res) const {
  if (queues_[q].conf.state != QueueState::Open) return q;
  return leaf_up(q, [&](std::uint32_t a) {
    const QueueS& as = queues_[a];
    for (int d = 0; d < kDims; ++d)
      if (min_res[d] > 0 &&
          static_cast<double>(min_res[d] + as.allocated[d] + as.inqueue[d] - as.elastic[d]) > as.real_cap[d])
        return true;
    return false;
  });
}

std::string VolcanoPolicy::capacity_refusal(const std::string& action, std::uint32_t q, std::uint32_t by) const {
  if (queues_[q].conf.state != QueueState::Open)
    return action + ": queue " + queues_[q].name + " is not Open (capacity)";
  if (by == q) return action + ": queue " + queues_[q].name + " would exceed its capability (capacity)";
  return action + ": queue " + queues_[q].name + "'s ancestor " + queues_[by].name +
         " would exceed its capability (capacity)";
}

// hasRelevantDeserved: a dimension the task requests and the queue's deserved names (>= 0.1).
bool VolcanoPolicy::relevant_deserved(const Res& req, const QueueS& qs) {
  for (int d = 0; d < kDims; ++d)
    if (req[d] > 0 && qs.deserved[d] >= 0.1) return true;
  return false;
}

// GreaterPartlyWithRelevantDimensions(deserved, req): allocated > deserved in a dimension the
// task requests and deserved has (cpu, memory: >= 0.1; the GPU scalar: named, even at 0).
bool VolcanoPolicy::above_deserved(const Res& allocated, const QueueS& qs, const Res& req) {
  for (int d = 0; d < kDims; ++d) {
    if (req[d] <= 0 || !(d == 0 ? qs.gpu_deserved : qs.deserved[d] >= 0.1)) continue;
    if (static_cast<double>(allocated[d]) > qs.deserved[d]) return true;
  }
  return false;
}

// capacity's ReclaimableFn (plugins/capacity/capacity.go), candidates in victim order: skip a
// task sharing no requested dimension with the reclaimer; keep the victim's queue at or above its
// guarantee; admit it if its queue's deserved names none of its dimensions (an immediate victim)
// or the queue's allocated (less the victims so far) is above deserved; with enableHierarchy and
// ancestorReclaimLevel L, the victim's ancestors 1..L levels up that the reclaimer does not share
// must be above deserved too, and an immediate victim is spared when the two queues share a
// non-root ancestor within L levels and the reclaimer's deserved names none of its dimensions.
std::vector<JobIndex> VolcanoPolicy::capacity_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
  const Res& preq = members_[preemptor].total;
  const std::uint32_t rq = groups_[members_[preemptor].group].queue;
  const QueueS& rqs = queues_[rq];
  const std::int64_t levels = hierarchy_ ? cfg_.ancestor_reclaim_level : 0;
  std::vector<std::pair<std::uint32_t, Res>> allocs;
  allocs.reserve(queues_.size());  // references stay valid
  auto alloc_of = [&](std::uint32_t q) -> Res& {
    for (auto& [a, r] : allocs)
      if (a == q) return r;
    allocs.emplace_back(q, queues_[q].allocated);
    return allocs.back().second;
  };
  auto shares_ancestor = [&](const QueueS& a, const QueueS& b) {
    for (std::int64_t i = 1; i <= levels; ++i) {
      const std::uint32_t x = ancestor_at(a, i);
      if (x == kNoQueue || x == root_) continue;
      for (std::int64_t k = 1; k <= levels; ++k)
        if (ancestor_at(b, k) == x) return true;
    }
    return false;
  };
  for (JobIndex v : cands) {
    const Res& vr = members_[v].total;
    bool shared = false;
    for (int d = 0; d < kDims; ++d) shared = shared || (vr[d] > 0 && preq[d] > 0);
    if (!shared) continue;
    const std::uint32_t vq = groups_[members_[v].group].queue;
    const QueueS& vqs = queues_[vq];
    Res& allocated = alloc_of(vq);
    bool keeps_guarantee = true;
    for (int d = 0; d < kDims; ++d) keeps_guarantee = keeps_guarantee && vqs.conf.guarantee[d] <= allocated[d] - vr[d];
    if (!keeps_guarantee) continue;
    if (!relevant_deserved(vr, vqs)) {
      if (levels > 0 && shares_ancestor(rqs, vqs) && !relevant_deserved(preq, rqs)) continue;
    } else if (!above_deserved(allocated, vqs, vr)) {
      continue;
    }
    std::vector<std::uint32_t> checked;
    bool eligible = true;
    for (std::int64_t level = 1; level <= levels && eligible; ++level) {
      const std::uint32_t a = ancestor_at(vqs, level);
      if (a == kNoQueue || a == root_ || ancestor_at(rqs, level) == a) continue;
      checked.push_back(a);
      if (!relevant_deserved(vr, queues_[a])) continue;
      eligible = above_deserved(alloc_of(a), queues_[a], vr);
    }
    if (!eligible) continue;
    allocated = sub(allocated, vr);
    for (std::uint32_t a : checked) alloc_of(a) = sub(alloc_of(a), vr);
    out.push_back(v);
  }
  return out;
}

}  // namespace headroom::policies::volcano::detail
