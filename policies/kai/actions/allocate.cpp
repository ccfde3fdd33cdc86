// KAI-Scheduler's allocate action (pkg/scheduler/actions/allocate/allocate.go): the pending pod
// groups in job order (actions/utils/job_order_by_queue.go, with plugins/proportion/queue_order.go's
// queue order, kept here beside its one hot caller), each placed all or nothing
// (attempt), with the capacity checks of plugins/proportion/capacity_policy first.
#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

// The allocate action of one session: pipelined groups whose victims are gone bind first, then
// every pending group in job order (actions/allocate/allocate.go); the groups that fail are left in
// failed_ for consolidation, reclaim and preempt.
void KaiPolicy::allocate(Session& s) {
  const Tick now = s.now();
  min_failed_plain_gpus_ = min_failed_multi_gpus_ = kInf;
  // Pipelined groups whose victims are gone bind first.
  std::vector<std::uint32_t> ready;
  for (std::uint32_t u : pipelined_)
    if (units_[u].outstanding_victims == 0) ready.push_back(u);
  for (std::uint32_t u : ready) {
    pipelined_.erase(u);
    Unit& unit = units_[u];
    unit.pipelined = false;
    add_path(unit.queue, &QNode::alloc, unit.reserved, -1);
    add_path(unit.queue, &QNode::pending, unit.reserved, 1);
    if (!unit.preemptible()) add_path(unit.queue, &QNode::np_alloc, unit.reserved, -1);
    unit.reserved = {};
    for (const auto& p : plans_[u]) reserve(p, -1);
    plans_.erase(u);
    refresh(u, now);
    if (unit.in_pending) attempt(s, u);
  }

  // allocate
  std::vector<FailedUnit>& failed = failed_;  // kept between sessions for its capacity
  failed.clear();
  failed_count_ = 0;
  failed_runs_.clear();
  failed_keys_.clear();
  live_runs_from_ = 0;
  for (int q : leaves_) {
    nodes_[q].pending_units.compact();
    nodes_[q].cursor = 0;
  }
  in_allocate_ = true;
  cut_ = false;
  walk(s, true);
  in_allocate_ = false;
}

std::int64_t KaiPolicy::smallest_plain_pending() const {
  for (std::size_t g = 1; g < single_pending_.size(); ++g)
    if (single_pending_[g] > 0) return static_cast<std::int64_t>(g);
  return kInf;
}

// The walk of allocate: every pending group in job order until the stop test. With may_cut, it
// may stop early where no group left can start (try_cut).
void KaiPolicy::walk(Session& s, bool may_cut) {
  std::vector<FailedUnit>& failed = failed_;
  bool cut_tried = !may_cut;
  std::uint64_t bounds_at = ~std::uint64_t{0};
  bool none_can_start = false;
  std::int64_t max_node_free = 0, max_pool_free = 0;
  while (true) {
    // With the stop test short of its shapes (it passed, or failed_ would have ended), and only
    // lone plain pods pending: once the free GPUs hold none of their shapes, try_cut.
    if (!cut_tried && other_pending_ == 0 && failed_count_ >= static_cast<std::size_t>(kVictimSearchesPerSession)) {
      if (bounds_at != starts_) {
        bounds_at = starts_;
        max_node_free = max_pool_free = 0;
        for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
          max_pool_free = std::max(max_pool_free, cluster_->pool_free_gpus(p));
          for (std::int32_t f = cluster_->spec().pools[p].gpus_per_node; f > max_node_free; --f)
            if (!cluster_->nodes_with_free(p, f).empty()) {
              max_node_free = f;
              break;
            }
        }
        none_can_start = smallest_plain_pending() > max_node_free && smallest_multi_pending() > max_pool_free;
      }
      if (none_can_start) {
        cut_tried = true;
        if (try_cut(max_node_free, max_pool_free)) {
          cut_ = true;
          return;
        }
      }
    }
    const int leaf = pick(0);
    if (leaf < 0) break;
    QNode& node = nodes_[leaf];
    const QNode::PendKey k = node.pending_units.keys[node.cursor];
    ++node.cursor;
    // attempt's fast NoFit path, read from the key.
    const bool fast = known_no_fit(leaf, -k.neg_priority, k.simple_gpus, k.simple_multi);
    if (fast) set_reason(k.single, Reason::NoFit);
    const Reason r = fast ? Reason::NoFit : attempt(s, k.unit);
    // A failed attempt changes nothing of the unit: the key still holds what it has.
    if (r != Reason::None) {
      failed.push_back(FailedUnit{k.unit, r, r == Reason::NoFit && k.lone, k.simple_multi, k.simple_gpus,
                                  -k.neg_priority, leaf, kNoRun, simple_demand(k.simple_gpus)[0]});
      ++failed_count_;
    }
    // Once every pending pod is known not to fit, stop when the later actions have enough
    // candidates (they are bounded per session).
    if (failed_count_ >= static_cast<std::size_t>(kVictimSearchesPerSession) && all_would_fail()) break;
    if (fast && node.parent == 0 && fast_run(leaf)) break;
  }
}

// Where no pending group can start any more (the free GPUs of every node and pool hold none of
// the pending shapes: each step left fails with NoFit and starts nothing), the rest of the walk
// matters only (1) for the pending reasons it sets, (2) where it stops (the stop test turns once
// a pod of each smallest pending shape, plain and multi-node, has failed, failed_ holding 64
// already), and (3) for the walk of failed groups after allocate, which passes over a lone NoFit
// entry that no first check of consolidate, reclaim or preempt would act for (may_act).
// try_cut follows the rest of the walk without its steps: while nothing starts, the min-head
// merge of the leaves (pick) takes the keys in the order of the largest key of their leaf up to
// them (a key goes when that prefix's largest is the smallest of all leaves'; keys of two leaves
// never tie), and a lone plain pod's key grows with its GPUs, so a leaf keeps the turn while its
// pods stay within the GPUs that go before the other leaves' (one queue_before answers for all).
// It checks that each group up to the stop is a lone plain pod of a root child that cannot start,
// within its queue's capacity, that may_act would pass over whatever the walk of failed groups has
// done before it; then it sets, in walk order, the reason of each group whose reason was not
// NoFit already, and allocate stops. If something is evicted or pipelined later in the session,
// resume_walk first finishes the walk from where it stopped, on the same state, so that failed_
// is then what the whole walk makes. False: nothing done, the walk goes on.
bool KaiPolicy::try_cut(std::int64_t max_node_free, std::int64_t max_pool_free) {
  if (cluster_->spec().topology) return false;
  const std::int64_t min_plain = smallest_plain_pending();
  const std::int64_t min_multi = smallest_multi_pending();
  bool need_plain = min_plain < kInf && min_failed_plain_gpus_ > min_plain;
  bool need_multi = min_multi < kInf && min_failed_multi_gpus_ > min_multi;
  if (!need_plain && !need_multi) return false;
  const bool consolidation_open = cluster_->free_gpus() > 0 && cfg_.max_consolidation_preemptees > 0;
  std::int64_t all_pools_free = 0;
  for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) all_pools_free += cluster_->pool_free_gpus(p);
  struct Lane {
    int leaf;
    std::size_t i;
    std::int32_t gmax;
    std::int64_t room;
    std::int32_t lowest;
  };
  std::vector<Lane> lanes;
  for (int q : leaves_) {
    const QNode& node = nodes_[q];
    std::size_t i = node.cursor;
    while (i < node.pending_units.keys.size() && node.pending_units.keys[i].erased) ++i;
    if (i == node.pending_units.keys.size()) continue;
    if (node.parent != 0) return false;
    lanes.push_back(Lane{q, i, 0, active(0) ? node.fair[0] - node.alloc[0] : kInf,
                         node.running_units.empty() ? std::numeric_limits<std::int32_t>::max()
                                                    : std::get<0>(*node.running_units.begin())});
  }
  auto head_key = [&](const Lane& l) {
    const auto& k = nodes_[l.leaf].pending_units.keys[l.i];
    return Candidate{l.leaf, l.leaf, simple_demand(std::max(l.gmax, k.simple_gpus))};
  };
  std::vector<JobIndex> unsettled;
  while (true) {
    // The lane whose next key goes first (the smallest largest-key-so-far), and the best of the others.
    std::size_t best = lanes.size(), second = lanes.size();
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      if (lanes[l].i == nodes_[lanes[l].leaf].pending_units.keys.size()) continue;
      if (best == lanes.size() || queue_before(head_key(lanes[l]), head_key(lanes[best]))) {
        second = best;
        best = l;
      } else if (second == lanes.size() || queue_before(head_key(lanes[l]), head_key(lanes[second]))) {
        second = l;
      }
    }
    if (best == lanes.size()) return false;  // the stop was not found (never the case)
    Lane& lane = lanes[best];
    const QNode& node = nodes_[lane.leaf];
    const std::vector<QNode::PendKey>& keys = node.pending_units.keys;
    const Candidate rival = second == lanes.size() ? Candidate{} : head_key(lanes[second]);
    std::int32_t first_upto = lane.gmax, rival_from = std::numeric_limits<std::int32_t>::max();
    while (lane.i < keys.size()) {
      // The rest of a block, when every key there passes the checks below, keeps the turn, is not
      // where the walk stops and has its reason (NoFit) already (the block's summary answers).
      {
        const QNode::PendingList::Block& b = block(lane.leaf, lane.i / QNode::PendingList::kBlock);
        constexpr std::int32_t kNone = std::numeric_limits<std::int32_t>::max();
        const std::int32_t min_gpus = std::min(b.min_plain, b.min_multi);
        bool take = b.plain;
        if (take && (b.live_mask >> (lane.i % QNode::PendingList::kBlock)) != 0) {
          take = (b.min_plain == kNone || b.min_plain > max_node_free) &&
                 (b.min_multi == kNone || b.min_multi > max_pool_free) && capacity_free(lane.leaf, b.max_priority) &&
                 !(consolidation_open && b.min_plain <= all_pools_free) && simple_demand(min_gpus)[0] > lane.room &&
                 lane.lowest >= b.max_priority && !(need_plain && b.min_plain <= min_plain) &&
                 !(need_multi && b.min_multi <= min_multi);
          if (take && rival.leaf >= 0 && b.max_gpus > first_upto) {
            take = b.max_gpus < rival_from &&
                   queue_before(Candidate{lane.leaf, lane.leaf, simple_demand(b.max_gpus)}, rival);
            if (take) first_upto = b.max_gpus;
          }
          if (take) lane.gmax = std::max(lane.gmax, b.max_gpus);
        }
        if (take) {
          lane.i = std::min((lane.i / QNode::PendingList::kBlock + 1) * QNode::PendingList::kBlock, keys.size());
          continue;
        }
      }
      const QNode::PendKey& k = keys[lane.i];
      if (k.erased) {
        ++lane.i;
        continue;
      }
      if (k.single == models::kNoJob || k.simple_gpus <= 0 || !k.lone) return false;
      const std::int32_t g = k.simple_gpus, priority = -k.neg_priority;
      if (rival.leaf >= 0 && g > first_upto) {  // does the lane keep the turn?
        if (g >= rival_from) break;
        if (!queue_before(Candidate{lane.leaf, lane.leaf, simple_demand(g)}, rival)) {
          rival_from = g;
          break;
        }
        first_upto = g;
      }
      if (g <= (k.simple_multi ? max_pool_free : max_node_free)) return false;
      if (capacity(lane.leaf, priority, simple_demand(g), {}) != Reason::None) return false;
      if (consolidation_open && !k.simple_multi && all_pools_free >= g) return false;
      if (simple_demand(g)[0] <= lane.room || lane.lowest < priority) return false;
      lane.gmax = std::max(lane.gmax, g);
      ++lane.i;
      if (reasons_[k.single] != Reason::NoFit) unsettled.push_back(k.single);
      if (k.simple_multi ? g == min_multi : g == min_plain) (k.simple_multi ? need_multi : need_plain) = false;
      if (!need_plain && !need_multi) {  // the walk stops after this step
        for (JobIndex j : unsettled) set_reason(j, Reason::NoFit);
        return true;
      }
    }
  }
}

void KaiPolicy::resume_walk(Session& s) {
  if (!cut_) return;
  cut_ = false;
  in_allocate_ = true;
  walk(s, false);
  in_allocate_ = false;
}

double KaiPolicy::share(const Amounts& a) const {
  double s = 0;
  for (int r = 0; r < kResources; ++r)
    if (active(r)) s = std::max(s, static_cast<double>(a[r]) / static_cast<double>(total_[r]));
  return s;
}

// queue_order.go: true if a goes before b.
bool KaiPolicy::queue_before(const Candidate& ca, const Candidate& cb) const {
  const QNode& a = nodes_[ca.node];
  const QNode& b = nodes_[cb.node];
  auto within = [&](const QNode& q, const Amounts& field_limit, const Amounts& req) {
    for (int r = 0; r < kResources; ++r)
      if (active(r) && q.alloc[r] + req[r] > field_limit[r]) return false;
    return true;
  };
  const Amounts none{};
  const bool a_fair = within(a, a.fair, none), b_fair = within(b, b.fair, none);
  if (a_fair != b_fair) return a_fair;
  auto deserved = [&](const QNode& q) {
    Amounts d{};
    for (int r = 0; r < kResources; ++r) d[r] = q.res[r].quota < 0 ? kInf : q.res[r].quota;
    return d;
  };
  const bool a_quota = within(a, deserved(a), ca.req), b_quota = within(b, deserved(b), cb.req);
  if (a_quota != b_quota) return a_quota;
  if (a.priority != b.priority) return a.priority > b.priority;
  auto zero_share = [&](const QNode& q, const Amounts& req) {
    for (int r = 0; r < kResources; ++r)
      if (active(r) && req[r] > 0 && q.allocatable[r] == 0) return true;
    return false;
  };
  const bool a_zero = zero_share(a, ca.req), b_zero = zero_share(b, cb.req);
  if (a_zero != b_zero) return b_zero;
  Amounts aw = a.alloc, bw = b.alloc;
  add(aw, ca.req);
  add(bw, cb.req);
  const double sa = share(aw), sb = share(bw);
  if (sa != sb) return sa < sb;
  const double sa0 = share(a.alloc), sb0 = share(b.alloc);
  if (sa0 != sb0) return sa0 < sb0;
  for (int r = 0; r < kResources; ++r)
    if (active(r) && a.allocatable[r] != b.allocatable[r]) return a.allocatable[r] < b.allocatable[r];
  return a.creation < b.creation;
}

// The leaf whose next job comes first under `node`, or -1.
int KaiPolicy::pick(int node) { return pick_candidate(node).leaf; }

KaiPolicy::Candidate KaiPolicy::leaf_candidate(int c) {
  QNode& leaf = nodes_[c];
  const std::vector<QNode::PendKey>& keys = leaf.pending_units.keys;
  // Skip erased keys, and groups whose pods are not all there yet.
  for (; leaf.cursor < keys.size(); ++leaf.cursor) {
    const QNode::PendKey& k = keys[leaf.cursor];
    if (k.erased) continue;
    if (k.single != models::kNoJob) {  // the common case, without building a pod list
      const JobIndex j = k.single;
      if (placeable(*view_, j))
        return Candidate{c, c, k.simple_gpus > 0 ? simple_demand(k.simple_gpus) : demand(workload_->jobs[j])};
    }
    const Unit& u = units_[k.unit];
    if (Amounts req{}; next_demand(*view_, u, req)) return Candidate{c, c, req};
    for (JobIndex j : u.members)
      if (view_->state(j) == JobState::Pending) set_reason(j, Reason::GangIncomplete);
  }
  return Candidate{};
}

KaiPolicy::Candidate KaiPolicy::pick_candidate(int node) {
  Candidate best;
  for (int c : nodes_[node].children) {
    Candidate cand;
    if (nodes_[c].children.empty()) {
      cand = leaf_candidate(c);
      if (cand.leaf < 0) continue;
    } else {
      Candidate sub = pick_candidate(c);
      if (sub.leaf < 0) continue;
      cand = Candidate{c, sub.leaf, sub.req};
    }
    if (best.leaf < 0 || queue_before(cand, best)) best = cand;
  }
  return best;
}

// After a fast NoFit step of `leaf`, a child of the root: the steps that pick(0) would take next
// while they are fast NoFit steps of the same leaf, without walking the other children each time.
// Such a step changes no queue, node, cursor of another leaf or pending count, so the best
// candidate of the other children (`rival`) stays what it was, and queue_before is a strict order
// on (queue, request) keys: the leaf keeps the pick exactly while its head goes before the rival.
// For a lone plain pod that key grows with its GPUs (within quota with it, then its share with it;
// the rest does not depend on the request), so one comparison answers for every pod no larger
// (or no smaller). Returns true when the walk stops (the stop test of allocate); false hands the
// next step back to allocate's loop.
bool KaiPolicy::fast_run(int leaf) {
  Candidate rival;
  for (int c : nodes_[0].children) {
    if (c == leaf) continue;
    Candidate cand;
    if (nodes_[c].children.empty()) {
      cand = leaf_candidate(c);
    } else {
      const Candidate sub = pick_candidate(c);
      if (sub.leaf >= 0) cand = Candidate{c, sub.leaf, sub.req};
    }
    if (cand.leaf >= 0 && (rival.leaf < 0 || queue_before(cand, rival))) rival = cand;
  }
  QNode& node = nodes_[leaf];
  const std::vector<QNode::PendKey>& keys = node.pending_units.keys;
  std::int32_t first_upto = 0, rival_from = std::numeric_limits<std::int32_t>::max();
  // The stop test's second half: fast steps change neither the failed minima nor the pending counts.
  const bool would_fail = all_would_fail();
  // The lone entries are kept as runs (FailedRun), the others one by one.
  FailedRun run{leaf, false, 0, 0, 0, 0, 0};
  bool open = false;
  auto close = [&] {
    if (!open) return;
    open = false;
    failed_.push_back(FailedUnit{kNoUnit, Reason::NoFit, true, false, 0, 0, leaf,
                                 static_cast<std::uint32_t>(failed_runs_.size()), 0});
    failed_runs_.push_back(run);
  };
  constexpr std::size_t kBlock = QNode::PendingList::kBlock;
  constexpr std::int32_t kNone = std::numeric_limits<std::int32_t>::max();
  while (true) {
    // The rest of a block whose keys are lone plain pods, placeable, within their queue's capacity,
    // each with its reason (NoFit) already: when every step there would be a fast NoFit step that
    // keeps the pick and does not reach the stop test (the block's summary, of the keys before the
    // cursor too, answers for them), taken at once; otherwise the keys up to the first that would
    // not be such a step, read for their GPUs only (the key-by-key step below takes that one).
    while (node.cursor < keys.size()) {
      const std::size_t at = node.cursor % kBlock, block_end = std::min(node.cursor - at + kBlock, keys.size());
      const QNode::PendingList::Block& b = block(leaf, node.cursor / kBlock);
      if (!b.plain || !capacity_free(leaf, b.max_priority)) break;
      auto extend = [&](std::uint32_t live, std::int32_t min_plain, std::int32_t min_gpus, std::int32_t max_priority) {
        if (!open) {
          open = true;
          run.begin = static_cast<std::uint32_t>(node.cursor);
          run.min_plain_gpus = run.min_gpus = kNone;
          run.max_priority = max_priority;
        }
        run.min_plain_gpus = std::min(run.min_plain_gpus, min_plain);
        run.min_gpus = std::min(run.min_gpus, min_gpus);
        run.max_priority = std::max(run.max_priority, max_priority);
        failed_count_ += live;
      };
      const auto live = static_cast<std::uint32_t>(std::popcount(b.live_mask >> at));
      bool whole = live == 0;
      if (!whole && (b.min_plain == kNone || b.min_plain >= min_failed_plain_gpus_) &&
          (b.min_multi == kNone || b.min_multi >= min_failed_multi_gpus_) &&
          !(would_fail && failed_count_ + live >= static_cast<std::size_t>(kVictimSearchesPerSession))) {
        whole = rival.leaf < 0 || b.max_gpus <= first_upto ||
                (b.max_gpus < rival_from && queue_before(Candidate{leaf, leaf, simple_demand(b.max_gpus)}, rival));
        if (whole) first_upto = std::max(first_upto, b.max_gpus);  // every pod no larger goes before the rival
        if (whole) extend(live, b.min_plain, std::min(b.min_plain, b.min_multi), b.max_priority);
      }
      if (whole) {
        node.cursor = block_end;
        if (open) run.end = static_cast<std::uint32_t>(node.cursor);
        continue;
      }
      std::size_t i = node.cursor;
      std::uint32_t taken = 0;
      std::int32_t min_plain = kNone, min_gpus = kNone, max_priority = std::numeric_limits<std::int32_t>::min();
      bool stop = false;
      for (; i < block_end; ++i) {
        const QNode::PendKey& k = keys[i];
        if (k.erased) continue;
        const std::int32_t g = k.simple_gpus;
        if (g < (k.simple_multi ? min_failed_multi_gpus_ : min_failed_plain_gpus_)) break;
        if (rival.leaf >= 0 && g > first_upto) {
          if (g >= rival_from) break;
          if (!queue_before(Candidate{leaf, leaf, simple_demand(g)}, rival)) {
            rival_from = g;
            break;
          }
          first_upto = g;
        }
        ++taken;
        if (!k.simple_multi) min_plain = std::min(min_plain, g);
        min_gpus = std::min(min_gpus, g);
        max_priority = std::max(max_priority, -k.neg_priority);
        if (would_fail && failed_count_ + taken >= static_cast<std::size_t>(kVictimSearchesPerSession)) {
          stop = true;
          ++i;
          break;
        }
      }
      if (taken > 0) extend(taken, min_plain, min_gpus, max_priority);
      node.cursor = i;
      if (open) run.end = static_cast<std::uint32_t>(node.cursor);
      if (stop) {
        close();
        return true;
      }
      if (i < block_end) break;
    }
    // leaf_candidate's step for a lone plain pod; any other head goes back to allocate's loop,
    // whose pick(0) meets it at the same point.
    while (node.cursor < keys.size() && keys[node.cursor].erased) ++node.cursor;
    if (node.cursor == keys.size()) break;
    const QNode::PendKey& k = keys[node.cursor];
    const std::int32_t g = k.simple_gpus;
    if (k.single == models::kNoJob || g == 0 || !placeable(*view_, k.single) ||
        !known_no_fit(leaf, -k.neg_priority, g, k.simple_multi))
      break;
    if (rival.leaf >= 0 && g > first_upto) {
      if (g >= rival_from) break;
      if (!queue_before(Candidate{leaf, leaf, simple_demand(g)}, rival)) {
        rival_from = g;
        break;
      }
      first_upto = g;
    }
    set_reason(k.single, Reason::NoFit);
    if (k.lone) {
      const std::int32_t priority = -k.neg_priority;
      if (!open) {
        open = true;
        run.begin = static_cast<std::uint32_t>(node.cursor);
        run.min_plain_gpus = run.min_gpus = kNone;
        run.max_priority = priority;
      }
      run.end = static_cast<std::uint32_t>(node.cursor) + 1;
      if (!k.simple_multi) run.min_plain_gpus = std::min(run.min_plain_gpus, g);
      run.min_gpus = std::min(run.min_gpus, g);
      run.max_priority = std::max(run.max_priority, priority);
    } else {
      close();
      failed_.push_back(FailedUnit{k.unit, Reason::NoFit, false, k.simple_multi, g, -k.neg_priority, leaf, kNoRun,
                                   simple_demand(g)[0]});
    }
    ++node.cursor;
    ++failed_count_;
    if (would_fail && failed_count_ >= static_cast<std::size_t>(kVictimSearchesPerSession)) {
      close();
      return true;
    }
  }
  close();
  return false;
}

const QNode::PendingList::Block& KaiPolicy::block(int leaf, std::size_t b) {
  QNode::PendingList& list = nodes_[leaf].pending_units;
  QNode::PendingList::Block& out = list.blocks[b];
  if (!out.dirty) return out;
  out = QNode::PendingList::Block{};
  out.dirty = false;
  out.plain = true;
  out.min_plain = out.min_multi = std::numeric_limits<std::int32_t>::max();
  out.max_priority = std::numeric_limits<std::int32_t>::min();
  const std::size_t end = std::min(list.keys.size(), (b + 1) * QNode::PendingList::kBlock);
  for (std::size_t i = b * QNode::PendingList::kBlock; i < end; ++i) {
    const QNode::PendKey& k = list.keys[i];
    if (k.erased) continue;
    out.live_mask |= std::uint64_t{1} << (i % QNode::PendingList::kBlock);
    if (k.single == models::kNoJob || k.simple_gpus <= 0 || !k.lone || !placeable(*view_, k.single) ||
        reasons_[k.single] != Reason::NoFit) {
      out.plain = false;
      continue;
    }
    (k.simple_multi ? out.min_multi : out.min_plain) =
        std::min(k.simple_multi ? out.min_multi : out.min_plain, k.simple_gpus);
    out.max_gpus = std::max(out.max_gpus, k.simple_gpus);
    out.max_priority = std::max(out.max_priority, -k.neg_priority);
  }
  return out;
}

// Before a key is inserted into a pending list (which moves the keys after it) or, after allocate,
// erased, the runs that read the pending lists get their own copy of their keys.
void KaiPolicy::copy_failed_runs() {
  for (; live_runs_from_ < failed_runs_.size(); ++live_runs_from_) {
    FailedRun& r = failed_runs_[live_runs_from_];
    const std::vector<QNode::PendKey>& keys = nodes_[r.leaf].pending_units.keys;
    const auto at = static_cast<std::uint32_t>(failed_keys_.size());
    failed_keys_.insert(failed_keys_.end(), keys.begin() + r.begin, keys.begin() + r.end);
    r.end = at + (r.end - r.begin);
    r.begin = at;
    r.copied = true;
  }
}

// Whether every pending pod is at least as large as one of its shape that failed this session.
bool KaiPolicy::all_would_fail() const {
  if (other_pending_ > 0) return false;
  if (!multi_pending_.empty() && multi_pending_.begin()->first < min_failed_multi_gpus_) return false;
  const auto upto = static_cast<std::size_t>(
      std::min<std::int64_t>(min_failed_plain_gpus_, static_cast<std::int64_t>(single_pending_.size())));
  for (std::size_t g = 1; g < upto; ++g)
    if (single_pending_[g] > 0) return false;
  return true;
}

// attempt's fast path: a single plain pod (Unit::simple_gpus, spanning nodes or not) of a queue
// with room for it, which one of its shape already showed cannot fit.
bool KaiPolicy::known_no_fit(int queue, std::int32_t priority, std::int32_t simple_gpus, bool multi) const {
  return simple_gpus > 0 && simple_gpus >= (multi ? min_failed_multi_gpus_ : min_failed_plain_gpus_) &&
         capacity(queue, priority, simple_demand(simple_gpus), {}) == Reason::None;
}

Reason KaiPolicy::attempt(Session& s, std::uint32_t id) {
  Unit& u = units_[id];
  if (known_no_fit(u.queue, u.priority, u.simple_gpus, u.simple_multi)) {
    set_reason(u.single, Reason::NoFit);
    return Reason::NoFit;
  }
  // A lone plain pod (the common group): the steps below for its one pod, without the pod and
  // placement lists. Its demand is simple_demand, it is no share, asks no cpu, memory or GPU type,
  // fits some node's shape (or spans nodes) and, without a topology constraint on its kind,
  // place() is best_node (multi_node_placement) on a fresh statement; what the statement holds
  // after its last pod is not read.
  if (u.simple_gpus > 0 && u.min_member == 1 &&
      !(cluster_->spec().topology && cfg_.topology.applies_to(workload_->jobs[u.single].kind))) {
    const JobIndex j = u.single;
    if (!placeable(s, j)) return Reason::GangIncomplete;  // next_pods is empty
    Reason r = capacity(u, simple_demand(u), {});
    std::optional<models::Placement> placed;
    if (r == Reason::None) {
      std::int64_t& min_failed = u.simple_multi ? min_failed_multi_gpus_ : min_failed_plain_gpus_;
      if (u.simple_gpus >= min_failed) {
        r = Reason::NoFit;
      } else {
        const Job& job = workload_->jobs[j];
        base_into(attempt_ov_, true);
        share_budget_hit_ = false;
        if (u.simple_multi) {
          placed = multi_node_placement(job, attempt_ov_);
        } else if (const NodeId n = best_node(job, attempt_ov_, kNoNode); n != kNoNode) {
          placed = models::Placement{models::Slice{n, u.simple_gpus, 0, 0}};
        }
        if (!placed) {
          r = Reason::NoFit;
          min_failed = u.simple_gpus;
        }
      }
    }
    if (r != Reason::None) {
      set_reason(j, r);
      return r;
    }
    start(s, j, std::move(*placed), "allocate");
    refresh(id, s.now());
    return Reason::None;
  }
  const auto pods = next_pods(s, u);
  if (pods.empty()) return Reason::GangIncomplete;
  Amounts req = pods_demand(pods);
  // KAI's job-level capacity check counts a gpu-memory pod as 0 GPUs (GetGpusQuota); each node
  // is then checked with the pod's fraction there (IsTaskAllocationOnNodeOverCapacity,
  // GetRequiredInitQuota): best_share skips nodes where it exceeds the queue's room.
  std::int64_t memory_gpu = 0;
  for (JobIndex j : pods)
    if (is_share(workload_->jobs[j]) && workload_->jobs[j].gpu_milli == 0) memory_gpu += demand(workload_->jobs[j])[0];
  req[0] -= memory_gpu;
  Reason r = capacity(u, req, {});
  Reason budget_reason = Reason::None;
  if (r == Reason::None && u.larger_than_node) r = Reason::LargerThanNode;  // no node holds one of its pods
  if (memory_gpu > 0 && r == Reason::None) std::tie(share_budget_, budget_reason) = share_room(u, req[0]);
  std::optional<std::vector<models::Placement>> placements;
  // A single plain pod no smaller than one that already failed in this session cannot fit.
  const Job& first = workload_->jobs[pods[0]];
  const bool single = pods.size() == 1 && !is_share(first) && first.gpu_type == 0 && first.node_set == 0 &&
                      first.cpus == 0 && first.memory_mib == 0;
  const bool is_plain = single && !multi_node(first);
  const bool is_multi = single && !is_plain;
  if (r == Reason::None) {
    if ((is_plain && first.gpus >= min_failed_plain_gpus_) || (is_multi && first.gpus >= min_failed_multi_gpus_)) {
      r = Reason::NoFit;
    } else {
      Overlay ov = base(true);
      share_budget_hit_ = false;
      placements = place(pods, ov);
      share_budget_ = kInf;
      if (!placements && share_budget_hit_) {
        r = budget_reason;
      } else if (!placements && topology_applies(pods) && !is_plain) {
        r = cfg_.topology.required > 0 ? Reason::TopologyNoFit : Reason::NoFit;
      } else if (!placements) {  // a one-node pod fits a domain iff it fits a node
        r = Reason::NoFit;
        if (is_plain) min_failed_plain_gpus_ = first.gpus;
        if (is_multi) min_failed_multi_gpus_ = first.gpus;
      }
    }
  }
  if (r != Reason::None) {
    for (JobIndex j : pods) set_reason(j, r);
    return r;
  }
  for (std::size_t i = 0; i < pods.size(); ++i) start(s, pods[i], std::move((*placements)[i]), "allocate");
  refresh(id, s.now());
  return Reason::None;
}

void KaiPolicy::start(Session& s, JobIndex j, models::Placement p, std::string_view why) {
  const Job& job = workload_->jobs[j];
  const std::int32_t milli = is_share(job) && job.gpu_milli == 0 ? p.at(0).gpu_milli : 0;
  node_changed(p);
  pod_pools_[j] = tally_pools(units_[job_unit_[j]].queue, p, 1);
  // The simulation keeps the placement for the run's results: one built by push_back (spare
  // capacity) goes as an exact copy, as before.
  const std::string err = s.start(j, p.capacity() == p.size() ? std::move(p) : models::Placement(p), why);
  if (!err.empty()) throw sim::InternalError("kai: start refused: " + err);
  ++starts_;
  Unit& u = units_[job_unit_[j]];
  --u.pending;
  count_pending(j, -1);
  ++u.running;
  held_milli_[j] = milli;
  add(u.running_req, held(j));
  add_path(u.queue, &QNode::pending, demand(job), -1);
  add_path(u.queue, &QNode::alloc, held(j), 1);
  if (!u.preemptible()) add_path(u.queue, &QNode::np_alloc, held(j), 1);
  set_reason(j, Reason::None);
}

}  // namespace headroom::policies::kai::detail
