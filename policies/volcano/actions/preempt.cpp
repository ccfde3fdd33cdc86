// actions/preempt/preempt.go, and the victim selection and eviction it shares with reclaim
// (evict_for_member, evict_for_slice).
#include <algorithm>
#include <string>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// Candidates on node `n` for preemptor `j`: running, not terminating, not evicted this session.
std::vector<JobIndex> VolcanoPolicy::candidates(NodeId n, JobIndex j, bool reclaim) const {
  std::vector<JobIndex> out;
  const std::uint32_t pg = members_[j].group;
  const std::uint32_t pq = groups_[pg].queue;
  for (JobIndex v : view_->jobs_on_node(n)) {
    if (view_->state(v) != JobState::Running || view_->terminating(v) || mark(v) != Mark::None) continue;
    const std::uint32_t vg = members_[v].group;
    const std::uint32_t vq = groups_[vg].queue;
    if (reclaim ? (vq == pq || !queues_[vq].conf.reclaimable) : (vg == pg || vq != pq)) continue;
    out.push_back(v);
  }
  return out;
}

Res VolcanoPolicy::on_node(JobIndex v, NodeId n) const {
  for (const auto& sl : view_->placement(v))
    if (sl.node == n)
      return {sl.gpus, modelled_[1] ? std::int64_t{sl.cpus} * 1000 : 0, modelled_[2] ? sl.memory_mib : 0};
  return {};
}

void VolcanoPolicy::evict(JobIndex v, JobIndex by, const std::string& reason, std::vector<Op>& ops) {
  Op op{Op::Evict, v, {}, by, reason};
  for (const auto& sl : view_->placement(v))
    op.where.emplace_back(
        sl.node, Res{sl.gpus, modelled_[1] ? std::int64_t{sl.cpus} * 1000 : 0, modelled_[2] ? sl.memory_mib : 0},
        false);
  apply_evict(op, +1);
  ops.push_back(std::move(op));
}

std::string VolcanoPolicy::reason(bool reclaim, JobIndex j, const std::vector<JobIndex>& victims,
                                  const std::string& rule) const {
  std::string r = reclaim ? "volcano reclaim: " : "volcano preempt: ";
  if (rule.find("proportion") != std::string::npos || rule.find("capacity") != std::string::npos) {
    const std::uint32_t q = groups_[members_[victims.front()].group].queue;
    r += "queue " + queues_[q].name + " above deserved";
  } else if (rule.find("priority") != std::string::npos) {
    r += "lower priority than job " + std::to_string(j);
  } else if (rule.find("drf") != std::string::npos && reclaim) {
    const std::uint32_t q = groups_[members_[victims.front()].group].queue;
    r += "queue " + queues_[q].name + " above the reclaimer's in hierarchical DRF";
  } else if (rule.find("drf") != std::string::npos) {
    r += "higher dominant share than the preemptor's";
  } else {
    r += "victim's PodGroup keeps minMember";
  }
  return r + " (" + rule + ")";
}

// Preempts or reclaims for one slice of member `j` on some node; pipelines it there.
bool VolcanoPolicy::evict_for_slice(JobIndex j, const SliceReq& sl, bool reclaim, std::vector<Op>& ops, Op& place) {
  const Job& job = (*jobs_)[j];
  std::vector<NodeId> order;
  for (NodeId n = 0; n < cap_.size(); ++n)
    if (eligible(n, job) && node_fits(n, cap_[n], sl.r)) order.push_back(n);
  if (!reclaim && !flat_scores()) {
    std::vector<double> sc(cap_.size(), 0);
    for (NodeId n : order) sc[n] = node_score(n, sl);
    std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) { return sc[a] > sc[b]; });
  }
  for (NodeId n : order) {
    auto cands = candidates(n, j, reclaim);
    if (cands.empty()) continue;
    // Victims are a subset of the candidates: if all of them would not make room, none do.
    Res bound = future_idle(n);
    for (JobIndex v : cands) bound = add(bound, on_node(v, n));
    if (!node_fits(n, bound, sl.r)) continue;
    std::sort(cands.begin(), cands.end(), [&](JobIndex a, JobIndex b) { return victim_before(a, b, j); });
    std::string rule;
    auto victims = tiered_victims(reclaim, j, sl.r, cands, rule);
    if (victims.empty()) continue;
    std::sort(victims.begin(), victims.end(), [&](JobIndex a, JobIndex b) { return victim_before(a, b, j); });
    Res all = future_idle(n);
    for (JobIndex v : victims) all = add(all, on_node(v, n));
    if (!node_fits(n, all, sl.r)) continue;  // ValidateVictims
    const std::string why = reason(reclaim, j, victims, rule);
    Res reclaimed{};
    for (JobIndex v : victims) {
      if (reclaim ? node_fits(n, reclaimed, sl.r) : node_fits(n, future_idle(n), sl.r)) break;
      reclaimed = add(reclaimed, on_node(v, n));
      evict(v, j, why, ops);
    }
    if (!node_fits(n, future_idle(n), sl.r)) return false;
    pipe_[n] = add(pipe_[n], sl.r);
    future_on_ = true;
    place.where.emplace_back(n, sl.r, true);
    return true;
  }
  return false;
}

bool VolcanoPolicy::evict_for_member(JobIndex j, bool reclaim, std::vector<Op>& ops) {
  Op place{Op::Pipe, j, {}, models::kNoJob, {}};
  const std::size_t mark_ops = ops.size();
  for (const SliceReq& sl : slices(j)) {
    if (!evict_for_slice(j, sl, reclaim, ops, place)) {
      for (auto& [n, r, p] : place.where) pipe_[n] = sub(pipe_[n], r);
      std::vector<Op> tail(std::make_move_iterator(ops.begin() + static_cast<std::ptrdiff_t>(mark_ops)),
                           std::make_move_iterator(ops.end()));
      ops.resize(mark_ops);
      undo(tail);
      return false;
    }
  }
  for (auto& [n, r, p] : place.where) pipe_[n] = sub(pipe_[n], r);
  apply_place(place, +1);
  ops.push_back(std::move(place));
  return true;
}

void VolcanoPolicy::preempt_action(Session& s) {
  reset_cursors();
  auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
  auto jcmp = [this](std::uint32_t a, std::uint32_t b) { return job_cmp(a, b); };
  std::vector<std::uint32_t> qs;
  for (std::uint32_t q = 0; q < queues_.size(); ++q) qs.push_back(q);
  std::sort(qs.begin(), qs.end(), [&](std::uint32_t a, std::uint32_t b) { return qcmp(a, b) < 0; });
  for (std::uint32_t q : qs) {
    std::vector<std::uint32_t> heap;
    for (std::uint32_t gi : active()) {
      const Group& g = groups_[gi];
      if (g.queue != q || g.phase == Phase::Pending || !job_valid(g) || !job_starving(g)) continue;
      if (g.cursor >= g.pending.size()) continue;
      heap_push(heap, gi, jcmp);
    }
    while (!heap.empty()) {
      const std::uint32_t gi = heap_pop(heap, jcmp);
      Group& g = groups_[gi];
      touch(gi);
      std::vector<Op> ops;
      while (g.cursor < g.pending.size() && job_starving(g)) {
        const JobIndex j = g.pending[g.cursor++];
        skip_placed(g);
        if ((*jobs_)[j].preempt_never) continue;
        evict_for_member(j, false, ops);
      }
      if (job_pipelined(g)) {
        commit(s, ops, "volcano preempt");
      } else {
        undo(ops);
      }
    }
  }
}

}  // namespace headroom::policies::volcano::detail
