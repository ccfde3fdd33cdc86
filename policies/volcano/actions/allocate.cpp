// actions/allocate/allocate.go: queues and jobs in order, tasks in TaskOrder, a node per task
// (predicates, then the highest NodeOrder score over the idle and future-idle gradients), and the
// statement committed, kept or discarded per job.
#include <algorithm>
#include <string>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// prioritizeNodes: the idle gradient, else the future-idle one; highest score, lowest index.
std::pair<NodeId, bool> VolcanoPolicy::select_node(JobIndex j, const SliceReq& sl) const {
  const Job& job = (*jobs_)[j];
  const auto n_nodes = static_cast<NodeId>(cap_.size());
  const bool flat = flat_scores() && !soft_on_;
  if (flat) {
    // The first node in index order that fits: the GPU index skips the nodes short of GPUs.
    for (NodeId n = free_tree_.first_at_least(0, sl.r[0]); n != kNoNode;
         n = free_tree_.first_at_least(n + 1, sl.r[0])) {
      if (domain_on_ && !in_domain_[n]) continue;
      if (!pool_ok(node_pool_[n], job)) {
        n = pool_last(n);
        continue;
      }
      if (node_fits(n, idle_[n], sl.r) && eligible(n, job)) return {n, false};
    }
    // Without releasing or pipelined resources the future idle gradient is the idle one.
    if (!future_on_) return {kNoNode, false};
  }
  for (int gradient = flat ? 1 : 0; gradient < 2; ++gradient) {
    // Without releasing or pipelined resources the future idle gradient is the idle one.
    if (gradient == 1 && !future_on_) break;
    NodeId best = kNoNode;
    double best_score = -1;
    if (gradient == 0 && classes_on_ && !soft_on_ && !domain_on_ && live_classes_ * 4 <= n_nodes) {
      // The idle gradient over node classes: a class's nodes all fit or all do not, and score
      // alike, so in the scan below each would lose to its class's lowest index (it comes
      // first, and a later node must score more than the best so far).
      class_firsts_.clear();
      for (const NodeClass& c : node_classes_) {
        if (c.nodes.empty()) continue;
        const NodeId n = *c.nodes.begin();
        if (node_fits(n, idle_[n], sl.r) && eligible(n, job)) class_firsts_.push_back(n);
      }
      std::sort(class_firsts_.begin(), class_firsts_.end());
      for (const NodeId n : class_firsts_) {
        const double sc = node_score(n, sl);
        if (sc > best_score + 1e-12) {
          best_score = sc;
          best = n;
        }
      }
      if (best != kNoNode) return {best, false};
      continue;
    }
    if (soft_on_) soft_scores(j, sl, gradient);
    for (NodeId n = 0; n < n_nodes; ++n) {
      if (domain_on_ && !in_domain_[n]) continue;
      if (!pool_ok(node_pool_[n], job)) {
        n = pool_last(n);
        continue;
      }
      const Res avail = gradient == 0 ? idle_[n] : future_idle(n);
      if (!node_fits(n, avail, sl.r) || !eligible(n, job)) continue;
      if (flat) return {n, gradient == 1};
      const double sc = node_score(n, sl) + (soft_on_ ? nta_score_[n] : 0.0);
      if (sc > best_score + 1e-12) {
        best_score = sc;
        best = n;
      }
    }
    if (best != kNoNode) return {best, gradient == 1};
  }
  return {kNoNode, false};
}

// Gives back what place_member took from idle_ / pipe_ for op's slices so far.
void VolcanoPolicy::undo_tentative(const Op& op) {
  for (const auto& [m, r, p] : op.where) {
    if (p)
      pipe_[m] = sub(pipe_[m], r);
    else
      set_idle(m, add(idle_[m], r));
  }
}

// Places every slice of member `j` (Allocate on idle, else Pipeline on future idle).
bool VolcanoPolicy::place_member(JobIndex j, std::vector<Op>& ops) {
  Op op{Op::Alloc, j, {}, models::kNoJob, {}};
  bool pipelined = false;
  soft_on_ = topology_mode(groups_[members_[j].group]) == NetworkTopologyMode::Soft;
  if (soft_on_) soft_anchor(members_[j].group, ops);
  for (const SliceReq& sl : slices(j)) {
    const auto [n, pipe] = select_node(j, sl);
    if (soft_on_ && n != kNoNode) anchor_.push_back(n);
    if (n == kNoNode) {
      soft_on_ = false;
      undo_tentative(op);
      return false;
    }
    if (pipe) {
      pipe_[n] = add(pipe_[n], sl.r);
      future_on_ = true;
    } else {
      set_idle(n, sub(idle_[n], sl.r));
    }
    pipelined = pipelined || pipe;
    op.where.emplace_back(n, sl.r, pipe);
  }
  soft_on_ = false;
  // Undo the tentative node use and apply the op through the common path.
  undo_tentative(op);
  op.kind = pipelined ? Op::Pipe : Op::Alloc;
  apply_place(op, +1);
  ops.push_back(std::move(op));
  return true;
}

// Each action pops the tasks still Pending afresh (placed ones are Allocated or Pipelined).
void VolcanoPolicy::reset_cursors() {
  // A group nothing touched in this session has its cursor at 0 and no task placed.
  for (std::uint32_t gi : dirty_) {
    Group& g = groups_[gi];
    g.cursor = 0;
    skip_placed(g);
  }
}

VolcanoPolicy::TaskRun VolcanoPolicy::run_tasks(Group& g, std::uint32_t q, std::vector<Op>& ops) {
  touch(static_cast<std::uint32_t>(&g - groups_.data()));
  TaskRun r;
  r.blocker = q;
  const bool rigid = g.min >= g.submitted - g.ended;
  while (g.cursor < g.pending.size()) {
    const JobIndex j = g.pending[g.cursor++];
    skip_placed(g);
    if (!allocatable(q, members_[j].total)) {
      if (capacity_) r.blocker = capacity_block(q, members_[j].total);
      r.skipped = true;
      continue;
    }
    if (!place_member(j, ops)) {
      r.fit_failed = true;
      if (rigid) break;
      continue;
    }
    if (job_ready(g) && g.cursor < g.pending.size()) {
      r.push_back = true;
      break;
    }
  }
  return r;
}

// allocate.go pickUpQueuesAndJobs: when the actions list has no enqueue, a Pending PodGroup is
// set Inqueue here ("no enqueue action is configured") and allocated like any other; with
// enqueue listed, allocate passes over it.
void VolcanoPolicy::inqueue_without_enqueue() {
  std::vector<std::uint32_t> listed = pending_groups();
  std::sort(listed.begin(), listed.end());
  for (std::uint32_t gi : listed) {
    groups_[gi].phase = Phase::Inqueue;
    pend_erase(gi);
    touch(gi);
    set_live(gi, true);
    changed_ = true;
  }
}

void VolcanoPolicy::park(Group& g) {
  unpark(g);
  Park p;
  p.gi = static_cast<std::uint32_t>(&g - groups_.data());
  p.queue = g.queue;
  p.least.fill(std::numeric_limits<std::int64_t>::max());
  for (const JobIndex j : g.pending) {
    const Res& r = members_[j].total;
    for (int d = 0; d < kDims; ++d) {
      const auto k = static_cast<std::size_t>(d);
      if (r[k] > 0)
        p.least[k] = std::min(p.least[k], r[k]);
      else
        p.zero = static_cast<std::uint8_t>(p.zero | 1u << d);
    }
  }
  // Tasks refused in different dimensions (none refusing them all): tried again next session.
  p.d = park_witness(p);
  if (p.d < 0) return;
  std::uint32_t slot = 0;
  if (free_parks_.empty()) {
    slot = static_cast<std::uint32_t>(parks_.size());
    parks_.push_back(p);
  } else {
    slot = free_parks_.back();
    free_parks_.pop_back();
    parks_[slot] = p;
  }
  if (by_least_.size() < queues_.size()) by_least_.resize(queues_.size());
  by_least_[p.queue][static_cast<std::size_t>(p.d)].insert({p.least[static_cast<std::size_t>(p.d)], slot});
  g.park = slot;
  awake_.erase(p.gi);
}

void VolcanoPolicy::offer_parks() {
  // A park whose witness no longer refuses moves to another dimension that does; when none does,
  // a task of it might pass at the figures now, and allocate offers it in its turn (it stays
  // parked unless a task passes then). Within allocate a queue's allocated only grows, so a park
  // refused now is refused all session.
  offers_.clear();
  for (std::uint32_t q = 0; q < by_least_.size(); ++q)
    for (int d = 0; d < kDims; ++d) {
      auto& set = by_least_[q][static_cast<std::size_t>(d)];
      for (auto it = set.begin(); it != set.end();) {
        const std::uint32_t slot = it->second;
        Park& p = parks_[slot];
        if (park_refuses(p, d)) break;  // the least request refused: all that follow are too
        if (const int w = park_witness(p); w >= 0) {
          it = set.erase(it);
          p.d = w;
          by_least_[q][static_cast<std::size_t>(w)].insert({p.least[static_cast<std::size_t>(w)], slot});
          continue;
        }
        if (live_.contains(p.gi)) offers_.push_back(p.gi);
        ++it;
      }
    }
  std::sort(offers_.begin(), offers_.end());
}

void VolcanoPolicy::allocate(Session& s) {
  if (!enqueue_listed_) inqueue_without_enqueue();
  reset_cursors();
  auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
  auto jcmp = [this](std::uint32_t a, std::uint32_t b) { return job_cmp(a, b); };
  std::vector<std::vector<std::uint32_t>> jobs(queues_.size());
  std::vector<std::uint32_t> qheap;
  // The awake groups and the parks offered, in index order (the others stay out: proportion
  // would refuse every task of them again). A queue's offered parks wait in a heap of their own,
  // merged with its groups' in job order, with the least of their least requests per dimension
  // (0: some park asks for none of it).
  offer_parks();
  std::vector<std::vector<std::uint32_t>> offered(queues_.size());
  std::vector<Res> offered_least(queues_.size());
  auto offer = [&](std::uint32_t gi) {
    Group& g = groups_[gi];
    if (g.phase == Phase::Pending || g.cursor >= g.pending.size() || !job_valid(g)) return;
    if (g.failed_epoch == fit_key_) return;  // nothing has been released since it fitted nowhere
    const std::uint32_t q = g.queue;
    if (jobs[q].empty() && offered[q].empty()) heap_push(qheap, q, qcmp);
    if (g.park == kNoPark) {
      heap_push(jobs[q], gi, jcmp);
      return;
    }
    if (offered[q].empty()) offered_least[q].fill(std::numeric_limits<std::int64_t>::max());
    offered[q].push_back(gi);
    const Park& p = parks_[g.park];
    for (int d = 0; d < kDims; ++d) {
      auto& m = offered_least[q][static_cast<std::size_t>(d)];
      m = (p.zero >> d & 1) != 0 ? 0 : std::min(m, p.least[static_cast<std::size_t>(d)]);
    }
  };
  std::size_t po = 0;
  for (std::uint32_t gi : awake_) {
    for (; po < offers_.size() && offers_[po] < gi; ++po) offer(offers_[po]);
    offer(gi);
  }
  for (; po < offers_.size(); ++po) offer(offers_[po]);
  for (auto& h : offered) heap_make(h, jcmp);
  std::vector<Op> ops;
  // Proportion's refusal, per queue, made once a session (most of a stranded backlog's refusals).
  std::vector<std::string> share_refusal(queues_.size());
  auto refusal = [&](std::uint32_t q) -> const std::string& {
    if (share_refusal[q].empty())
      share_refusal[q] = "volcano allocate: queue " + queues_[q].name + " would exceed its deserved share (proportion)";
    return share_refusal[q];
  };
  // What trying a park proportion still refuses would do (every task skipped, nothing placed): the
  // reason, unless sla's permit pipelines the group.
  auto refuse = [&](Group& g, std::uint32_t q) {
    if (!job_ready(g) && !job_pipelined(g))
      for (JobIndex j : g.pending) s.pending_reason(j, refusal(q));
  };
  while (!qheap.empty()) {
    const std::uint32_t q = heap_pop(qheap, qcmp);
    if (overused(queues_[q]) || (jobs[q].empty() && offered[q].empty())) continue;
    const bool park_first =
        !offered[q].empty() && (jobs[q].empty() || job_cmp(offered[q].front(), jobs[q].front()) < 0);
    const std::uint32_t gi = park_first ? heap_pop(offered[q], jcmp) : heap_pop(jobs[q], jcmp);
    Group& g = groups_[gi];
    if (park_first) {
      // An offered park still refused is not tried (see refuse); one that might pass wakes.
      const Park& p = parks_[g.park];
      if (const int w = park_witness(p); w >= 0) {
        refuse(g, q);
        // The queue's allocated only grows: when no offered park asks for less in w, the others
        // are refused too.
        if (p.least[static_cast<std::size_t>(w)] <= offered_least[q][static_cast<std::size_t>(w)]) {
          for (const std::uint32_t other : offered[q]) refuse(groups_[other], q);
          offered[q].clear();
        }
        heap_push(qheap, q, qcmp);
        continue;
      }
      unpark(g);
    }
    const bool hard = topology_mode(g) == NetworkTopologyMode::Hard;
    models::SwitchId domain = models::kNoSwitch;
    const TaskRun r = hard ? run_hard(g, q, ops, domain) : run_tasks(g, q, ops);
    // Every task refused by proportion's allocatable, none placed: parked (not with capacity,
    // whose refusal reads the ancestors too, nor in hard mode).
    const bool refused_all =
        !hard && !capacity_ && proportion_ && r.skipped && !r.fit_failed && !r.push_back && ops.empty();
    if (r.push_back) heap_push(jobs[q], gi, jcmp);
    if (job_ready(g)) {
      commit(s, ops,
             domain == models::kNoSwitch
                 ? "volcano allocate: PodGroup ready (gang), highest-scoring node"
                 : "volcano allocate: PodGroup ready (gang), highest-scoring node in HyperNode " +
                       cluster_topology()->switch_name(domain) + " (network-topology-aware, hard mode)");
    } else if (job_pipelined(g)) {
      ops.clear();  // the session keeps the holds; nothing binds
    } else {
      undo(ops);
      if (r.fit_failed && !r.skipped) g.failed_epoch = fit_key_;
      const std::string why = r.skipped ? (capacity_ ? capacity_refusal("volcano allocate", q, r.blocker) : refusal(q))
                              : hard    ? "volcano allocate: no HyperNode of tier " +
                                           std::to_string(cfg_.highest_tier_allowed) +
                                           " or below (cluster.topology) fits minMember tasks of the PodGroup "
                                           "(network-topology-aware, hard mode)"
                                     : "volcano allocate: fewer than minMember tasks fit (gang)";
      for (JobIndex j : g.pending) s.pending_reason(j, why);
    }
    if (refused_all && !job_ready(g)) park(g);
    heap_push(qheap, q, qcmp);
  }
}

}  // namespace headroom::policies::volcano::detail
