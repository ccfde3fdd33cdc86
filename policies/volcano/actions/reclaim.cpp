// actions/reclaim/reclaim.go.
#include <string>
#include <utility>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

void VolcanoPolicy::reclaim_action(Session& s) {
  reset_cursors();
  auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
  auto jcmp = [this](std::uint32_t a, std::uint32_t b) { return job_cmp(a, b); };
  std::vector<std::vector<std::uint32_t>> jobs(queues_.size());
  std::vector<std::uint32_t> qheap;
  std::vector<bool> queued(queues_.size(), false);
  for (std::uint32_t gi : active()) {
    Group& g = groups_[gi];
    if (g.phase == Phase::Pending || !job_valid(g)) continue;
    if (!queued[g.queue]) {
      queued[g.queue] = true;
      heap_push(qheap, g.queue, qcmp);
    }
    if (g.cursor < g.pending.size() && job_starving(g)) heap_push(jobs[g.queue], gi, jcmp);
  }
  std::vector<std::pair<std::uint32_t, std::vector<Op>>> stmts;
  auto stmt = [&](std::uint32_t gi) -> std::vector<Op>& {
    for (auto& [g, o] : stmts)
      if (g == gi) return o;
    stmts.emplace_back(gi, std::vector<Op>{});
    return stmts.back().second;
  };
  while (!qheap.empty()) {
    const std::uint32_t q = heap_pop(qheap, qcmp);
    if (overused(queues_[q]) || jobs[q].empty()) continue;
    const std::uint32_t gi = heap_pop(jobs[q], jcmp);
    Group& g = groups_[gi];
    if (g.cursor >= g.pending.size()) continue;
    touch(gi);
    const JobIndex j = g.pending[g.cursor++];
    skip_placed(g);
    if (!preemptive(q, members_[j].total)) continue;  // the queue is dropped
    const bool assigned = !(*jobs_)[j].preempt_never && evict_for_member(j, true, stmt(gi));
    if (assigned && g.cursor < g.pending.size() && job_starving(g)) heap_push(jobs[q], gi, jcmp);
    heap_push(qheap, q, qcmp);
  }
  for (auto& [gi, o] : stmts) {
    if (job_pipelined(groups_[gi]))
      commit(s, o, "volcano reclaim");
    else
      undo(o);
  }
}

}  // namespace headroom::policies::volcano::detail
