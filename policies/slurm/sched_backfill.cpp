// Conservative backfill (src/plugins/sched/backfill/backfill.c: _attempt_backfill), with its
// node profile over [now, now + bf_window), reservations, and quick_pick over a ClearTally.
// Long file: about 820 lines, most of them backfill(): one pass is one function whose cursor
// state the earliest-fit walk and will_run_groups' walk over groups of ends share through lambdas,
// as _attempt_backfill (with cons_tres's _will_run_test below it) is one function upstream.

#include "policies/slurm/policy.hpp"

namespace headroom::policies::slurm::detail {

// The same into `pl` (cleared first; its storage is kept).
void SlurmPolicy::quick_pick(const ClearTally& t, std::int32_t total, models::Placement& pl,
                             const std::uint64_t* mask) const {
  // Without a mask the words are read as they are (no test per word on the common path).
  auto run = [&](auto masked) {
    constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
    pl.clear();
    if (t.gpus < total) return;
    auto lowest = [&](std::int32_t g, NodeId from) -> NodeId {  // the first node >= from with g GPUs free
      if (t.count[static_cast<std::size_t>(g)] == 0) return kNoNode;
      const std::uint64_t* bits = t.bits.data() + static_cast<std::size_t>(g) * t.words;
      std::size_t w = from / 64;
      if (w >= t.words) return kNoNode;
      auto word = [&](std::size_t k) {
        if constexpr (decltype(masked)::value)
          return bits[k] & mask[k];
        else
          return bits[k];
      };
      std::uint64_t x = word(w) & (~std::uint64_t{0} << (from % 64));
      while (x == 0) {
        if (++w == t.words) return kNoNode;
        x = word(w);
      }
      return static_cast<NodeId>(w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
    };
    for (std::int32_t g = total; g <= t.max; ++g)
      if (const NodeId id = lowest(g, 0); id != kNoNode) {
        pl.push_back({id, total, 0, 0});
        return;
      }
    std::int32_t left = total;
    for (std::int32_t g = t.max; g >= 1; --g)
      for (NodeId id = lowest(g, 0); id != kNoNode; id = lowest(g, id + 1)) {
        if (left > g) {
          pl.push_back({id, g, 0, 0});
          left -= g;
          continue;
        }
        NodeId fit = id;
        for (std::int32_t h = left; h < g; ++h)
          if (const NodeId k = lowest(h, 0); k != kNoNode) {
            fit = k;
            break;
          }
        pl.push_back({fit, left, 0, 0});
        return;
      }
    pl.clear();
  };
  if (mask == nullptr)
    run(std::false_type{});
  else
    run(std::true_type{});
}

void SlurmPolicy::backfill(Session& s) {
  if (queue_.empty() || free_now_ <= 0) return;
  const Tick now = s.now();
  const Tick sec_now =
      whole_second(now);  // slurmctld's time(NULL): a job started now ends, for the plan, at sec_now + limit
  const Tick horizon = now + c_.bf_window;
  const Tick res = c_.bf_resolution;
  // first_res_ is set only on the last pass's reservations' nodes (res_nodes_): those are reset.
  if (first_res_.size() != avail_.size() || res_nodes_.size() >= avail_.size())
    first_res_.assign(avail_.size(), std::numeric_limits<Tick>::max());
  else
    for (const NodeId id : res_nodes_) first_res_[id] = std::numeric_limits<Tick>::max();
  by_start_.clear();
  by_end_.clear();
  res_nodes_.clear();
  res_span_.clear();
  res_gpus_.clear();
  res_off_.assign(1, 0);
  const auto& jobs = s.workload().jobs;
  // Running jobs release at start + limit, rounded up, node by node in time order.
  // An upper bound on the GPUs free at the window's end (none when exclusive nodes could free
  // more than their jobs hold): a job asking for more cannot start or reserve in the window.
  const bool bounded = std::none_of(parts_.begin(), parts_.end(), [](const Part& p) { return p.conf.exclusive; });
  std::int64_t final_bound = bounded ? free_now_ : std::numeric_limits<std::int64_t>::max();
  rslice_.clear();
  booked_.settle();
  booked_.read([&](const Booked& b) {
    const Tick r = std::max(b.r, now + 1);  // still running now
    if (r > horizon) return false;
    if (bounded) final_bound += b.job_gpus;
    rslice_.push_back({r, b.node, b.gpus, b.cpus, b.mem, b.exclusive, false, b.job});
    return true;
  });
  // will_run_groups: the jobs ending in one second in job order, as the will-run test walks them.
  auto slice_before = [](const RSlice& a, const RSlice& b) { return a.t != b.t ? a.t < b.t : a.job < b.job; };
  if (c_.will_run_groups) std::stable_sort(rslice_.begin(), rslice_.end(), slice_before);
  // slurmctld's node_space table (backfill.c): one record for [now, now + bf_window) at first,
  // split by each reservation's start and end (_add_reservation); the pass ends when a
  // reservation is due while the table holds bf_node_space_size records (bf_max_job_test unless
  // set): "table size limit of N reached". With bf_max_job_test=3 a pass makes one reservation.
  // Only the number of distinct bounds matters, and only once it could be bf_max_job_test: until
  // then the bounds are collected as they come (their count is at least the distinct one), then
  // sorted, made unique and kept so.
  space_marks_.clear();
  space_marks_.push_back(sec_now);
  space_marks_.push_back(sec_now + c_.bf_window);
  const Tick marks_end = std::max(sec_now, sec_now + c_.bf_window);  // the last bound
  bool marks_unique = false;
  // Held jobs do not count towards bf_max_job_test. Without limits the jobs are the queue's first
  // ones, read again only when its keys changed since the last pass.
  if (limits_.active() || order_keys_ != keys_version_) {
    order_.resize(static_cast<std::size_t>(
        std::clamp<std::int64_t>(c_.bf_max_job_test, 0, static_cast<std::int64_t>(queue_.size()))));
    std::size_t n = 0;
    if (!limits_.active() && top_cap() > 0) {  // top_ holds at least bf_max_job_test jobs when the queue does
      n = order_.size();
      std::copy_n(top_.begin(), n, order_.begin());
    } else {
      for (auto it = queue_.begin(); it != queue_.end() && n < order_.size(); ++it)
        if (!limits_.active() || limits_.blocks(jobs[it->j]) == LimitReason::None) order_[n++] = it->j;
    }
    order_.resize(n);
    order_keys_ = limits_.active() ? ~std::uint64_t{0} : keys_version_;
    // The smallest GPU demand from each tested job on: once fewer GPUs are free now, nothing else
    // can start in this pass, and reservations only matter for what starts now. A job's GPUs do
    // not change, so this follows order_.
    least_.assign(order_.size() + 1, std::numeric_limits<std::int32_t>::max());
    for (std::size_t i = order_.size(); i-- > 0;) least_[i] = std::min(least_[i + 1], jobs[order_[i]].gpus);
  }
  const std::vector<JobIndex>& order = order_;
  const std::vector<std::int32_t>& least = least_;
  std::int64_t starts = 0;
  freenodes_.clear();
  free_mark_.resize(avail_.size(), 0);
  ++pass_no_;
  clear_at_.clear();
  for (std::size_t w = 0; w < avail_bits_.size(); ++w)
    for (std::uint64_t x = avail_bits_[w]; x != 0; x &= x - 1) {
      const auto id = static_cast<NodeId>(w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
      if (held_for_[id] == kNoJob) {
        freenodes_.push_back(id);
        free_mark_[id] = pass_no_;
      }
    }
  if (!base_ok_) base_build(s);
  const bool held_any = base_held_ > 0;
  // With a node held: the shortest limit from each tested job on, and the nodes with free GPUs
  // now: once the GPUs free now on nodes no reservation blocks over [now, now + shortest limit)
  // are fewer than the least demand, no later job can start now and the pass is over (its
  // reservations would be thrown away). Without, the probe below (clear_holds) says it per job.
  std::vector<Tick>& shortest = shortest_;
  if (held_any) {
    shortest.assign(order.size() + 1, std::numeric_limits<Tick>::max());
    for (std::size_t i = order.size(); i-- > 0;)
      shortest[i] = std::min(shortest[i + 1], limit_[order[i]] == kUnlimited ? kYear : limit_[order[i]]);
  }
  const std::int32_t max_gpus = base_.max;
  bool hist_ok = !held_any && base_.over == 0;

  // The profile is kept at a cursor time cur_t for the whole pass, and each walk moves it
  // (mostly forward: a job dominated by an earlier one starts where that one stopped).
  // prof_ = avail_ plus the releases rslice_[0, cur_ri) (those at or before cur_t); its overlap
  // counts the reservations of the pass that start by cur_x (see go below) but not
  // those ended by cur_t (by_end_[0, cur_be)): a reservation [b, e) blocks t for a limit L when
  // b - L < t < e, so a walk at t counts those with b <= t + L - 1 = cur_x.
  // cur_total: GPUs free at cur_t; cur_blocked: those on nodes a counted reservation blocks;
  // clear_: the clear nodes (up, not held, overlap 0) by free GPUs (ClearTally).
  // All four are functions of the state, so the order of the updates does not matter.
  Tick cur_t = now, cur_rt = now;  // the window's start; the releases applied (those at or before cur_rt)
  std::size_t cur_ri = 0, cur_be = 0;
  std::int64_t cur_total = free_now_, cur_blocked = 0;
  auto counted = [&](NodeId id) { return prof_[id].ok && held_for_[id] == kNoJob ? prof_[id].gpus : 0; };
  auto clear_gpus = [&](NodeId id) -> std::int32_t {
    const Avail& a = prof_[id];
    return a.ok && held_for_[id] == kNoJob && a.overlap == 0 ? std::max(a.gpus, 0) : -1;
  };
  auto count = [&](NodeId id, std::int32_t g, int sign) {
    clear_.put(id, g, sign);
    if (clear_.over > 0) hist_ok = false;
  };
  // A reservation's nodes (res_nodes_[res_off_[r], res_off_[r + 1])), blocked (sign 1) or
  // unblocked (-1), in one ClearTally::Batch. A node that turns blocked (clear) takes counted() out
  // of (puts it into) cur_blocked and leaves (joins) the tally with clear_gpus() of the node as if
  // it were not blocked: both are its GPUs when it is up and not held (at least 0 for the tally),
  // else nothing. (With a node held hist_ok is false already: over_seen need not be read then.)
  auto flip_res = [&](std::uint32_t r, auto sign) {
    constexpr int kSign = decltype(sign)::value;
    const NodeId* id_at = res_nodes_.data() + res_off_[r];
    const NodeId* const id_end = res_nodes_.data() + res_off_[r + 1];
    Avail* const prof = prof_.data();
    std::int64_t gpus = 0;
    {
      ClearTally::Batch tally(clear_);
      for (; id_at != id_end; ++id_at) {
        const NodeId id = *id_at;
        Avail& a = prof[id];
        if constexpr (kSign > 0) {
          if (a.overlap++ != 0) continue;
        } else {
          if (--a.overlap != 0) continue;
        }
        if (!a.ok || (held_any && held_for_[id] != kNoJob)) continue;
        gpus += a.gpus;
        tally.put(id, std::max(a.gpus, 0), -kSign);
      }
      if (tally.over_seen()) hist_ok = false;
    }
    cur_blocked += kSign * gpus;
  };
  auto block_res = [&](std::uint32_t r) { flip_res(r, std::integral_constant<int, 1>{}); };
  auto unblock_res = [&](std::uint32_t r) { flip_res(r, std::integral_constant<int, -1>{}); };
  // On plain nodes with none held, a slice that is not exclusive changes only the node's GPUs:
  // its CPUs and memory are 0, its ok stays, and nothing is held (see plain_releases below).
  const bool plain_release = plain_nodes_ && !held_any;
  // prof_free_ is read only by choose(): the plain slices keep it node by node once a walk of the
  // pass has needed it (rebuilt in full then), and mark it stale until then.
  bool track_free = false;
  // A release slice applied (sign 1) or taken back (sign -1, in reverse order of application).
  auto release = [&](RSlice& sl, int sign) {
    auto& a = prof_[sl.node];
    const bool was_ok = a.ok;
    const std::int32_t was = a.gpus;
    if (sign > 0) sl.was_ok = was_ok;
    a.gpus += sign * sl.gpus;
    a.cpus += sign * sl.cpus;
    a.mem += sign * sl.mem;
    if (sl.exclusive) a.ok = sign > 0 ? s.cluster().node(sl.node).up : sl.was_ok;
    note_free(sl.node);                        // prof_free_ follows prof_ node by node, never rebuilt in full
    if (held_for_[sl.node] != kNoJob) return;  // neither counted nor clear
    const std::int64_t delta = static_cast<std::int64_t>(a.ok ? a.gpus : 0) - (was_ok ? was : 0);
    cur_total += delta;
    if (a.overlap > 0) {
      cur_blocked += delta;
    } else {
      if (was_ok) count(sl.node, std::max(was, 0), -1);
      if (a.ok) count(sl.node, std::max(a.gpus, 0), 1);
    }
  };
  // will_run_groups: the releases stop at this index of rslice_ too (a will-run group ends after
  // one job of those ending in one second: rslice_ holds them in job order); none: every release.
  std::size_t ri_cap = std::numeric_limits<std::size_t>::max();
  // The releases up to t applied and those after it taken back, as release() does them, with the
  // plain slices' steps written out and the totals summed apart.
  auto plain_releases = [&](Tick t) {
    std::int64_t total = 0, blocked = 0;
    const std::size_t ri = cur_ri;
    // keep_free: prof_free_ kept node by node (track_free), chosen once per move, not per slice.
    ClearTally::Batch tally(clear_);  // every clear node's move of this call
    auto steps = [&](auto keep_free) {
      auto plain = [&](const RSlice& sl, std::int32_t d) __attribute__((always_inline)) {
        Avail& a = prof_[sl.node];
        const std::int32_t was = a.gpus;
        a.gpus = was + d;
        if constexpr (decltype(keep_free)::value) prof_free_[sl.node] = a.ok && a.gpus > 0 ? 1 : 0;
        if (!a.ok) return;
        total += d;
        if (a.overlap > 0)
          blocked += d;
        else
          tally.move(sl.node, std::max(was, 0), std::max(a.gpus, 0));
      };
      for (const std::size_t lim = std::min(rslice_.size(), ri_cap); cur_ri < lim && rslice_[cur_ri].t <= t; ++cur_ri) {
        RSlice& sl = rslice_[cur_ri];
        if (sl.exclusive)
          release(sl, 1);
        else
          plain(sl, sl.gpus);
      }
      // Back past ri_cap first, then past t (the same slices in the same order as one loop).
      auto back = [&](std::size_t k) {
        RSlice& sl = rslice_[k];
        if (sl.exclusive)
          release(sl, -1);
        else
          plain(sl, -sl.gpus);
      };
      for (; cur_ri > ri_cap; --cur_ri) back(cur_ri - 1);
      for (; cur_ri > 0 && rslice_[cur_ri - 1].t > t; --cur_ri) back(cur_ri - 1);
    };
    if (track_free)
      steps(std::true_type{});
    else
      steps(std::false_type{});
    if (!track_free && cur_ri != ri) prof_free_ok_ = false;
    if (tally.over_seen()) hist_ok = false;
    cur_total += total;
    cur_blocked += blocked;
  };
  // The reservations counted are those that start by cur_x (by_start_[0, cur_bs)) and end after
  // cur_t (not in by_end_[0, cur_be)); a walk at t for a limit L sets cur_x to t + L (a
  // reservation that begins when the job would end overlaps it: backfill.c tests the slots with
  // begin_time <= end_reserve), so consecutive walks of one limit move it little.
  Tick cur_x = now;
  std::size_t cur_bs = 0;
  auto counted_at = [&](std::uint32_t r, Tick t, Tick x) { return res_span_[r].first <= x && res_span_[r].second > t; };
  // Moves the cursor to (t, x): the releases up to t applied, and only the reservations whose
  // counting changes blocked or unblocked (one that starts and ends within the move is neither).
  // The releases (up to rt) and the window (t, x) move apart: Slurm's will-run test frees running
  // jobs on the nodes that the window at the trial start leaves (see the walk below).
  auto go = [&](Tick rt, Tick t, Tick x) {
    if (plain_release) {
      plain_releases(rt);
    } else {
      while (cur_ri < rslice_.size() && cur_ri < ri_cap && rslice_[cur_ri].t <= rt) release(rslice_[cur_ri++], 1);
      while (cur_ri > 0 && (rslice_[cur_ri - 1].t > rt || cur_ri > ri_cap)) release(rslice_[--cur_ri], -1);
    }
    const Tick t0 = cur_t, x0 = cur_x;
    auto flip = [&](std::uint32_t r) {
      const bool was = counted_at(r, t0, x0), is = counted_at(r, t, x);
      if (was && !is) unblock_res(r);
      if (!was && is) block_res(r);
    };
    while (cur_bs < by_start_.size() && by_start_[cur_bs].first <= x) flip(by_start_[cur_bs++].second);
    while (cur_bs > 0 && by_start_[cur_bs - 1].first > x) flip(by_start_[--cur_bs].second);
    // Those whose start lies between x0 and x were flipped above.
    const Tick lo = std::min(x0, x), hi = std::max(x0, x);
    auto flip_end = [&](std::uint32_t r) {
      if (res_span_[r].first <= lo || res_span_[r].first > hi) flip(r);
    };
    while (cur_be < by_end_.size() && by_end_[cur_be].first <= t) flip_end(by_end_[cur_be++].second);
    while (cur_be > 0 && by_end_[cur_be - 1].first > t) flip_end(by_end_[--cur_be].second);
    cur_rt = rt;
    cur_t = t;
    cur_x = x;
  };
  // The state at now with nothing counted (cursor and threshold at now: every reservation starts
  // after now) is avail_ itself and the totals kept with it.
  auto restore_now = [&] {
    copy_avail();
    clear_ = base_;  // same sizes: no allocation
    cur_blocked = 0;
    cur_total = free_now_;
    cur_t = cur_x = cur_rt = now;
    cur_ri = cur_be = cur_bs = 0;
  };
  // Going back: undo the steps from the cursor back to t, or start again from now when that is
  // fewer steps (a reservation's entry counts as its nodes on average; a restore as kRestore).
  constexpr std::size_t kRestore = 256;
  auto per_res = [&]() -> std::size_t {  // nodes per reservation, rounded up (at least 1)
    return res_off_.size() > 1 ? res_nodes_.size() / (res_off_.size() - 1) + 1 : 1;
  };
  auto cheaper_from_now = [&](Tick rt, Tick t, Tick x) {
    const auto ri = static_cast<std::size_t>(
        std::upper_bound(rslice_.begin(), rslice_.end(), rt, [](Tick v, const RSlice& q) { return v < q.t; }) -
        rslice_.begin());
    if (ri + kRestore >= cur_ri - ri) return false;
    auto by_time = [](Tick v, const std::pair<Tick, std::uint32_t>& q) { return v < q.first; };
    const auto be =
        static_cast<std::size_t>(std::upper_bound(by_end_.begin(), by_end_.end(), t, by_time) - by_end_.begin());
    const auto bs =
        static_cast<std::size_t>(std::upper_bound(by_start_.begin(), by_start_.end(), x, by_time) - by_start_.begin());
    const std::size_t per = per_res();
    const std::size_t back =
        (cur_ri - ri) + per * ((cur_be > be ? cur_be - be : be - cur_be) + (cur_bs > bs ? cur_bs - bs : bs - cur_bs));
    const std::size_t fresh = ri + kRestore + per * (be + bs);
    return fresh < back;
  };
  auto go_to = [&](Tick rt, Tick t, Tick x) {
    if (rt < cur_rt && cheaper_from_now(rt, t, x)) restore_now();
    go(rt, t, x);
  };
  // One node's part of cur_blocked and clear_, added (1) or taken out (-1).
  auto tally = [&](NodeId id, int sign) {
    if (prof_[id].overlap > 0) cur_blocked += sign * counted(id);
    count(id, clear_gpus(id), sign);
  };
  restore_now();  // the pass starts at now, with no reservation
  // A reservation's nodes from the clear nodes' bits where choose() would take exactly those.
  // A partition on part of the nodes reads its members' bits only (quick_ok_masked).
  auto quick = [&](JobIndex j) { return hist_ok && quick_ok_masked(j, held_any); };
  auto quick_mask = [&](JobIndex j) -> const std::uint64_t* {
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    return p.nodes.size() == avail_.size() ? nullptr : p.bits.data();
  };

  // Whether the GPUs free now on nodes that no reservation of this pass blocks for a limit L
  // (first_res_ after now + L) are at least `want`: the GPUs of the nodes no reservation
  // blocks (summed once, then kept as starts and reservations change them), plus those of
  // clear_at_'s first nodes (summed again after a start or a reservation on one of them).
  bool free_stale = true, later_stale = true;
  std::int64_t clear_free = 0, clear_later = 0;  // GPUs on nodes no reservation blocks; on the others
  auto free_gpus = [&](NodeId id) -> std::int64_t {
    return avail_[id].ok && avail_[id].gpus > 0 ? avail_[id].gpus : 0;
  };
  auto clear_holds = [&](Tick limit, std::int64_t want) -> bool {
    if (free_stale) {
      clear_free = 0;
      for (NodeId id : freenodes_)
        if (first_res_[id] == std::numeric_limits<Tick>::max()) clear_free += free_gpus(id);
      free_stale = false;
    }
    if (later_stale) {
      clear_first_.clear();
      clear_sum_.clear();
      std::int64_t acc = 0;
      for (const auto& [first, id] : clear_at_)
        if (avail_[id].ok && avail_[id].gpus > 0) {
          acc += avail_[id].gpus;
          clear_first_.push_back(first);
          clear_sum_.push_back(acc);
        }
      clear_later = acc;
      later_stale = false;
    }
    if (clear_free >= want) return true;
    if (clear_free + clear_later < want) return false;
    const Tick bar = sec_now + limit;
    const auto k = static_cast<std::size_t>(
        std::partition_point(clear_first_.begin(), clear_first_.end(), [&](Tick f) { return f > bar; }) -
        clear_first_.begin());
    return clear_free + (k == 0 ? 0 : clear_sum_[k - 1]) >= want;
  };
  // Whether order[i] could still start now: reservations and starts only take GPUs away from
  // now, so once a job cannot, it cannot for the rest of the pass. Reservations are only kept
  // for this pass and matter only for what starts now: when no job left could start now, the
  // pass is over. (A node held for a job would count for it alone: then the coarser test below.)
  std::size_t probe = 0;
  auto could_start_now = [&](std::size_t i) {
    const JobIndex m = order[i];
    if (nominee_.count(m) != 0 || jobs[m].gpus > final_bound) return false;  // skipped below
    if (jobs[m].gpus <= 0) return true;
    return clear_holds(limit_[m] == kUnlimited ? kYear : limit_[m], jobs[m].gpus);
  };
  // What each walk of this pass found: no start before `from` (kNever: none in the window) for
  // its job's ask. Reservations and starts only take from what is free at any time, so a job
  // that asks at least as much on the same nodes (no_more(record, its ask)) finds none before
  // `from` either.
  recs_.clear();
  auto no_more = [](const WalkRec& a, const WalkRec& b) {  // a asks no more than b
    if (a.part != b.part || a.gpu_type != b.gpu_type || a.fixed != b.fixed || a.limit > b.limit) return false;
    if (a.fixed) return a.nodes <= b.nodes && a.need <= b.need && a.cpn <= b.cpn && a.mpn <= b.mpn;
    return a.gpus <= b.gpus && a.cpg <= b.cpg && a.mpg <= b.mpg;
  };
  constexpr Tick kNever = std::numeric_limits<Tick>::max();
  // A walk's next time after t: the next release or reservation end (kNever: none).
  auto step_after = [&](Tick t) {
    const auto ri =
        std::upper_bound(rslice_.begin(), rslice_.end(), t, [](Tick v, const RSlice& x) { return v < x.t; });
    const auto ei = std::upper_bound(by_end_.begin(), by_end_.end(), t,
                                     [](Tick v, const std::pair<Tick, std::uint32_t>& x) { return v < x.first; });
    return std::min(ri != rslice_.end() ? ri->t : kNever, ei != by_end_.end() ? ei->first : kNever);
  };
  // The first step time after the cursor's (t, t + L) by which the clear GPUs could have grown by
  // `want` (and those on partition p's nodes by `want_part`); kNever when not by `until`. Clear
  // GPUs grow only by releases on nodes clear at the cursor (their GPUs), by releases that give a
  // node back whole (exclusive: its GPUs), and by the end of a reservation counted at the cursor
  // (at most its nodes' GPUs): a node blocked now stays blocked until every reservation counted
  // on it has ended, and reservations counted later only block more. So no step before the time
  // returned can fit by the totals a walk tests first: the walk may go there at once. (Default
  // walk only: its release cursor and window start move together, cur_rt == cur_t.)
  auto gain_by = [&](std::int64_t want, std::int64_t want_part, const Part* p, Tick until) {
    std::int64_t got = 0, got_part = 0;
    std::size_t ri = cur_ri, be = cur_be;
    while (true) {
      const Tick t =
          std::min(ri < rslice_.size() ? rslice_[ri].t : kNever, be < by_end_.size() ? by_end_[be].first : kNever);
      if (t > until) return kNever;
      for (; ri < rslice_.size() && rslice_[ri].t == t; ++ri) {
        const RSlice& sl = rslice_[ri];
        if (held_for_[sl.node] != kNoJob) continue;  // never counted in this pass
        const Avail& a = prof_[sl.node];
        const std::int64_t g = sl.exclusive ? cap_[sl.node].gpus : a.ok && a.overlap == 0 ? sl.gpus : 0;
        got += g;
        if (p != nullptr && p->member[sl.node] != 0) got_part += g;
      }
      for (; be < by_end_.size() && by_end_[be].first == t; ++be) {
        const std::uint32_t r = by_end_[be].second;
        if (res_span_[r].first > cur_x) continue;  // not counted at the cursor
        got += res_gpus_[r];
        got_part += res_gpus_[r];
      }
      if (got >= want && got_part >= want_part) return t;
    }
  };
  constexpr Tick kBarrier = 30 * sim::kSecond;  // job_test.c: time_window = 30
  struct Cut {  // a will-run group: its last end, and rslice_'s index after that job's slices
    Tick t;
    std::size_t end;
  };
  std::vector<Cut> cuts;
  std::size_t walk_at = 0;  // the will-run walk's place in rslice_, its first group's barrier, its window
  Tick walk_end = 0, walk_window = 0;
  auto by_time = [](Tick v, const std::pair<Tick, std::uint32_t>& x) { return v < x.first; };
  // slurmctld's node_space records are bounded by the reservations' starts and ends and the
  // table's end: the first bound after v.
  const Tick table_end = sec_now + c_.bf_window;
  auto next_bound = [&](Tick v) {
    Tick n = table_end;
    if (auto it = std::upper_bound(by_start_.begin(), by_start_.end(), v, by_time); it != by_start_.end())
      n = std::min(n, it->first);
    if (auto it = std::upper_bound(by_end_.begin(), by_end_.end(), v, by_time); it != by_end_.end())
      n = std::min(n, it->first);
    return n;
  };
  auto start_key = [](Tick t, NodeId id) { return static_cast<std::uint64_t>(t) << 24 | id; };
  res_start_at_.clear();
  auto holds = [&](std::uint32_t r, NodeId id) {
    return std::find(res_nodes_.begin() + res_off_[r], res_nodes_.begin() + res_off_[r + 1], id) !=
           res_nodes_.begin() + res_off_[r + 1];
  };
  // backfill.c's later_start for a trial at try_at with window end x: the end of the first record
  // after try_at whose next record frees a node of the partition (up, reserved in the record,
  // not in the next), among the records up to the first one that begins after x (kNever: none).
  auto later_start = [&](const Part& p, Tick try_at, Tick x) {
    const Tick first_after = next_bound(x);
    const Tick cut = first_after >= table_end ? table_end : next_bound(first_after);
    for (auto it = std::upper_bound(by_end_.begin(), by_end_.end(), try_at, by_time);
         it != by_end_.end() && it->first <= cut && it->first < table_end; ++it) {
      const Tick e = it->first;
      for (std::uint32_t k = res_off_[it->second]; k < res_off_[it->second + 1]; ++k) {
        const NodeId id = res_nodes_[k];
        if (p.member[id] == 0 || !s.cluster().node(id).up) continue;
        if (!res_start_at_.contains(start_key(e, id))) return e;
      }
    }
    return kNever;
  };
  // backfill.c _test_resv_overlap: a reservation of the pass on one of pl's nodes runs within
  // [a, b) (its end after a, its start before b). pl's nodes are clear of every reservation that
  // starts by x (the trial's window end) and ends after the trial's start, and one that ends by
  // then ends before a: only those starting after x can overlap.
  auto res_overlap = [&](const models::Placement& pl, Tick a, Tick b, Tick x) {
    for (auto it = std::upper_bound(by_start_.begin(), by_start_.end(), x, by_time);
         it != by_start_.end() && it->first < b; ++it)
      if (res_span_[it->second].second > a)
        for (const auto& sl : pl)
          if (holds(it->second, sl.node)) return true;
    return false;
  };

  for (std::size_t oi = 0; oi < order.size(); ++oi) {
    const JobIndex j = order[oi];
    if (free_now_ <= 0 || free_now_ < least[oi]) break;
    if (!held_any) {
      probe = std::max(probe, oi);
      while (probe < order.size() && !could_start_now(probe)) ++probe;
      if (probe == order.size()) break;
    } else if (!by_start_.empty()) {
      std::int64_t clear = 0;
      for (NodeId id : freenodes_)
        if (first_res_[id] > sec_now + shortest[oi]) clear += std::max(avail_[id].gpus, 0);
      if (clear < least[oi]) break;
    }
    if (c_.bf_max_job_start > 0 && starts >= c_.bf_max_job_start) break;
    if (nominee_.count(j) != 0) continue;
    if (limits_.blocks(jobs[j]) != LimitReason::None) continue;  // no start, no reservation
    if (jobs[j].gpus > final_bound) continue;
    const Tick limit = limit_[j] == kUnlimited ? kYear : limit_[j];
    const Shape& sh = shape_[j];
    WalkRec ask{part_[j],     constraint_of(jobs[j]),
                sh.fixed,     limit,
                jobs[j].gpus, sh.slices.size(),
                sh.need,      sh.cpn,
                sh.mpn,       sh.cpg,
                sh.mpg,       now};
    Tick from = now;
    // will_run_groups: `known` is a release time up to which the job cannot fit on the nodes its
    // window at now leaves (a job asking no more found none there).
    Tick known = now;
    if (!held_any)
      for (const WalkRec& r : recs_)
        if (r.from > from && no_more(r, ask)) from = r.from;
    if (c_.will_run_groups) std::swap(known, from);
    if (from == kNever) continue;
    // Only what can raise some later job's `from` is kept: a record asking no more than another
    // and stopping no earlier makes that one useless (a job dominating it dominates this one).
    auto remember = [&](Tick t) {
      if (held_any) return;
      ask.from = t;
      for (const WalkRec& r : recs_)
        if (r.from >= ask.from && no_more(r, ask)) return;
      std::erase_if(recs_, [&](const WalkRec& r) { return ask.from >= r.from && no_more(ask, r); });
      recs_.push_back(ask);
    };
    // t = now: start the job if it fits clear of every reservation that overlaps [now, now + limit).
    if (from == now && (held_any || jobs[j].gpus <= 0 || clear_holds(limit, jobs[j].gpus))) {
      auto pl = choose(
          s, j, avail_, [&](NodeId id) { return first_res_[id] > sec_now + limit; }, &avail_free_);
      if (!pl.empty()) {
        // The start changes avail_ on the placement's nodes and adds the job's release. A job on
        // nodes it does not hold whole (its slices add and take back GPUs, CPUs and memory, and
        // no node's ok changes) is patched into the cursor where it stands: the nodes' part of
        // the totals taken out, their profile moved by what the start took (and gave back, when
        // its release is at or before the releases applied), and put back. Otherwise (and with
        // will_run_groups, whose cursor may stop inside one time) the cursor goes back to now
        // first (nothing counted), as before.
        const bool patch = !c_.will_run_groups && !shape_[j].exclusive;
        if (!patch) {
          if (cur_ri + per_res() * (cur_be + cur_bs) > kRestore)
            restore_now();
          else
            go(now, now, now);
        }
        // Only the placement's nodes change: their part of the totals is taken out and put back.
        touched_.clear();
        for (const auto& sl : pl) touched_.push_back(sl.node);
        std::sort(touched_.begin(), touched_.end());
        touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
        before_.clear();
        // clear_holds(): a free node's GPUs leave clear_free (or clear_at_'s sums) and come back.
        auto free_part = [&](NodeId id, int sign) {
          if (free_mark_[id] != pass_no_) return;
          if (first_res_[id] == std::numeric_limits<Tick>::max())
            clear_free += sign * free_gpus(id);
          else
            later_stale = true;
        };
        for (NodeId id : touched_) {
          free_part(id, -1);
          tally(id, -1);
          if (patch) {
            cur_total -= counted(id);  // its part of cur_total
            before_.push_back(avail_[id]);
          }
        }
        const bool started = start(s, j, pl, "backfill").empty();
        for (NodeId id : touched_) free_part(id, 1);
        if (patch) {
          for (std::size_t k = 0; k < touched_.size(); ++k) {
            Avail& a = prof_[touched_[k]];
            const Avail& now_a = avail_[touched_[k]];
            a.gpus += now_a.gpus - before_[k].gpus;
            a.cpus += now_a.cpus - before_[k].cpus;
            a.mem += now_a.mem - before_[k].mem;
          }
        } else {
          for (NodeId id : touched_) {
            const std::int32_t overlap = prof_[id].overlap;  // the reservations counted stay
            prof_[id] = avail_[id];
            prof_[id].overlap = overlap;
          }
          cur_total = free_now_;
        }
        if (started) {
          ++starts;
          ++bf_starts_;
          const std::pair<Tick, JobIndex> r{std::max(ceil_to(sec_now + limit, res), now + 1), j};
          if (r.first <= horizon) {
            auto at = std::upper_bound(rslice_.begin(), rslice_.end(), r.first,
                                       [](Tick v, const RSlice& x) { return v < x.t; });
            std::vector<RSlice> add;
            for (const auto& sl : pl)
              add.push_back({r.first, sl.node, sl.gpus, sl.cpus, sl.memory_mib, shape_[j].exclusive, false, j});
            if (c_.will_run_groups) at = std::upper_bound(rslice_.begin(), rslice_.end(), add.front(), slice_before);
            rslice_.insert(at, add.begin(), add.end());
            if (patch && r.first <= cur_rt) {  // among the releases applied (all of those at or before cur_rt)
              cur_ri += add.size();
              for (const RSlice& sl : add) {
                Avail& a = prof_[sl.node];
                a.gpus += sl.gpus;
                a.cpus += sl.cpus;
                a.mem += sl.mem;
              }
            }
          } else {
            final_bound -= jobs[j].gpus;
          }
        }
        for (NodeId id : touched_) {
          note_free(id);
          tally(id, 1);
          if (patch) cur_total += counted(id);
        }
        continue;
      }
    }
    // Where and when it can start. By default at the earliest fit (below). With will_run_groups, as
    // backfill.c _attempt_backfill with cons_tres _will_run_test do (slurmctld 22.05): a trial at start_res s (now
    // first) takes the nodes that no reservation of the pass holds over [s, s + limit] (A); the will-run test frees the
    // running jobs that have a node in A in groups of ends (the first up to the 30-s barrier after the first end plus
    // 30 s, then windows doubled from that barrier: bounds at barrier + 30 s x 2^m) and tries the job after each group,
    // on A only; it starts at the LAST end of the group after which it fits (or at s, when it fits before s's group),
    // not at the end that made room. A start later than later_start (the first end of a reservation after s that frees
    // a node of the partition, within the window's slots) tries again from there; so does a start whose nodes a
    // reservation overlaps in [start, start + limit). The nodes are those chosen after the group.
    models::Placement& reserved = reserved_;
    reserved.clear();
    const Part& jp = parts_[static_cast<std::size_t>(part_[j])];
    auto in_a = [&](NodeId id) { return prof_[id].overlap == 0 && jp.member[id] != 0; };
    // When try_fit fails by the clear GPUs: how many more it needs, on every node and on the
    // partition's nodes (0: it failed otherwise).
    std::int64_t short_all = 0, short_part = 0;
    const bool part_only = jp.nodes.size() != avail_.size();
    auto try_fit = [&]() {
      reserved.clear();
      short_all = short_part = 0;
      bool fits = cur_total - cur_blocked >= jobs[j].gpus;
      if (!fits) short_all = jobs[j].gpus - (cur_total - cur_blocked);
      if (fits && hist_ok) {
        if (!sh.fixed && clear_.gpus < sh.total) {
          fits = false;
          short_all = sh.total - clear_.gpus;
        }
        // A flexible job takes clear nodes of its partition only: their GPUs must hold it.
        if (fits && !sh.fixed && clear_.cls != nullptr && part_only) {
          const std::int64_t mine = clear_.gpus_of(jp.classes);
          if (mine < sh.total) {
            fits = false;
            short_part = sh.total - mine;
          }
        }
        if (sh.fixed && sh.need >= 1) {
          std::int64_t nodes = 0;
          for (std::int32_t g = sh.need; g <= max_gpus; ++g) nodes += clear_.count[static_cast<std::size_t>(g)];
          if (nodes < static_cast<std::int64_t>(sh.slices.size())) fits = false;
        }
      }
      if (!fits) return false;
      if (quick(j)) {
        quick_pick(clear_, shape_[j].total, reserved, quick_mask(j));
      } else {
        if (!prof_free_ok_) {
          for (NodeId id = 0; id < prof_.size(); ++id) note_free(id);
          prof_free_ok_ = true;
        }
        track_free = true;
        reserved = choose(
            s, j, prof_, [&](NodeId id) { return prof_[id].overlap == 0; }, &prof_free_);
      }
      return !reserved.empty();
    };
    // will_run_groups: the will-run test's groups of ends (select/cons_common/job_test.c
    // _will_run_test, 22.05): the running jobs in order of end (whole seconds; equal ends in job
    // order, as job_list holds them), each with whether it has a node in A. A job with no node in A
    // is skipped ("if (overlap == 0) continue;") before the test that closes a group (the next job
    // ends past the bound), so when one ends inside the bound right after the group's last job on A,
    // the next job on A joins the group whatever its end. cuts: each group's last end, where the
    // test starts the job when it fits after that group.
    auto group_cuts = [&]() {
      cuts.clear();
      walk_at = 0;
      walk_end = kNever;
      walk_window = kBarrier;
    };
    // Whether group g exists, walking on (one job at a time: rslice_ holds a job's slices together)
    // only as far as it: a trial stops at the first group after which the job fits.
    auto have = [&](std::size_t g) {
      while (cuts.size() <= g) {
        bool any = false;
        Cut last{0, 0};
        while (walk_at < rslice_.size()) {
          const Tick t = rslice_[walk_at].t;
          const JobIndex job = rslice_[walk_at].job;
          bool on_a = false;
          for (; walk_at < rslice_.size() && rslice_[walk_at].t == t && rslice_[walk_at].job == job; ++walk_at)
            on_a = on_a || in_a(rslice_[walk_at].node);
          if (!on_a) continue;  // skipped before the peek below
          const Tick sec = whole_second(t);
          if (walk_end == kNever) walk_end = sec - sec % kBarrier + kBarrier;
          any = true;
          last = {t, walk_at};
          if (walk_at < rslice_.size() && whole_second(rslice_[walk_at].t) > walk_end + walk_window) break;
        }
        if (!any) return false;
        do walk_window *= 2;
        while (walk_at < rslice_.size() && whole_second(rslice_[walk_at].t) > walk_end + walk_window);
        cuts.push_back(last);
      }
      return true;
    };
    // The state after a group: the releases up to its last job (in rslice_'s order).
    auto go_cut = [&](const Cut& c, Tick t, Tick x) {
      ri_cap = c.end;
      go_to(c.t, t, x);
      ri_cap = std::numeric_limits<std::size_t>::max();
    };
    Tick at = kNever;
    if (!c_.will_run_groups) {
      // Earliest start inside the window after now: step through the releases and reservation
      // ends in time order from `from` (a time some walk stopped at, or the first step after now).
      // The exact node choice runs only when the totals say enough could be clear.
      const Tick t = from == now ? step_after(now) : from;
      if (t > horizon) {
        remember(kNever);
        continue;
      }
      go_to(t, t, t + limit);
      while (!try_fit()) {
        // The cursor's next release and reservation end are the first past cur_t.
        Tick next = std::min(cur_ri < rslice_.size() ? rslice_[cur_ri].t : kNever,
                             cur_be < by_end_.size() ? by_end_[cur_be].first : kNever);
        // Short of clear GPUs: the steps before enough could come free fail too (gain_by, whose
        // first time is next).
        if (short_all > 0 || short_part > 0) next = gain_by(short_all, short_part, part_only ? &jp : nullptr, horizon);
        if (next > horizon) break;
        go_to(next, next, next + limit);
      }
      if (reserved.empty()) {
        remember(kNever);
        continue;
      }
      at = cur_t;
      remember(at);
    } else {
      for (Tick try_at = now;;) {
        const Tick x = (try_at == now ? sec_now : try_at) + limit;
        const Tick later = later_start(jp, try_at, x);
        if (try_at == now) {
          // The first trial walks the group bounds up from the first one past `known`, to the
          // bound that holds later_start at most: a walk stops where a job asking no more did.
          Tick start = kNever;
          Tick nofit = known;  // what this job adds to `known`
          go(cur_rt, now, x);  // the window first: it decides which nodes are A
          group_cuts();
          if (!have(0)) {
            nofit = kNever;  // nothing on A ends: it fits no better later
          } else if (known != kNever) {
            const Tick upto = later == kNever ? horizon : later;
            std::size_t g = 0;
            while (have(g) && cuts[g].t <= known) ++g;
            for (; have(g); ++g) {
              go_cut(cuts[g], now, x);
              if (try_fit()) {
                start = cuts[g].t;  // the group's last end
                break;
              }
              if (cuts[g].end == rslice_.size() || rslice_[cuts[g].end].t > cuts[g].t)
                nofit = cuts[g].t;  // every release up to then applied
              if (cuts[g].t >= upto) break;
            }
            if (start == kNever && later == kNever && (!have(g) || cuts[g].t >= horizon))
              nofit = kNever;  // every running job on A gone and still no fit in the window
          }
          remember(nofit);
          if (start == kNever || (later != kNever && start > later)) {
            if (later == kNever) break;
            try_at = later;
            continue;
          }
          if (start > horizon) break;
          if (start > now && res_overlap(reserved, start, start + limit, x)) {
            try_at = start;
            continue;
          }
          at = start;
          break;
        }
        // A start by `later` (or in the window) needs the job to fit once the running jobs ending
        // by then are gone (fitting only gains from releases): when it does not, the trial ends in
        // TRY_LATER whatever the groups. When it does, the first group after which it fits is
        // found walking the groups up from the first (group_cuts), on the nodes chosen there.
        const Tick upto = later == kNever ? horizon : later;
        go_to(upto, try_at, x);
        Tick start = kNever;
        if (try_fit()) {
          group_cuts();
          if (!have(0)) {
            if (try_at > now) start = try_at;  // nothing on A ends: the nodes as they are now
          } else {
            // The first group after which it fits (one ends by upto at the latest, or the groups
            // reach past upto: then TRY_LATER below), on the nodes chosen there.
            std::size_t g = 0;
            for (; have(g); ++g) {
              go_cut(cuts[g], try_at, x);
              if (try_fit()) break;
            }
            if (!have(g)) {  // not expected (the last group frees every job on A): as after it
              g = cuts.size() - 1;
              go_to(upto, try_at, x);
              try_fit();
            }
            if (g == 0 && try_at > now) {  // will-run's first test: the nodes as they are now
              saved_pl_ = reserved;
              go_to(now, try_at, x);
              if (try_fit())
                start = try_at;
              else
                reserved = saved_pl_;
            }
            if (start == kNever) start = std::max(try_at, cuts[g].t);  // the group's last end
          }
        }
        if (start == kNever || (later != kNever && start > later)) {
          if (later == kNever) break;
          try_at = later;
          continue;
        }
        if (start > horizon) break;  // "starts too far in the future": no reservation
        if (start > try_at && res_overlap(reserved, start, start + limit, x)) {
          try_at = start;
          continue;
        }
        at = start;
        break;
      }
    }
    if (at == kNever) continue;
    if (static_cast<std::int64_t>(space_marks_.size()) - 1 >= c_.bf_max_job_test) {
      if (!marks_unique) {
        std::sort(space_marks_.begin(), space_marks_.end());
        space_marks_.erase(std::unique(space_marks_.begin(), space_marks_.end()), space_marks_.end());
        marks_unique = true;
      }
      if (static_cast<std::int64_t>(space_marks_.size()) - 1 >= c_.bf_max_job_test) break;  // table full
    }
    for (const Tick mark : {at, at + limit}) {
      if (mark >= marks_end) continue;
      if (!marks_unique) {
        space_marks_.push_back(mark);
      } else if (auto it = std::lower_bound(space_marks_.begin(), space_marks_.end(), mark);
                 it == space_marks_.end() || *it != mark) {
        space_marks_.insert(it, mark);
      }
    }
    // One entry per list, after the entries of the same time (only the times are ordered).
    const auto rid = static_cast<std::uint32_t>(res_off_.size() - 1);
    res_span_.push_back({at, at + limit});
    std::int64_t res_gpus = 0;
    for (const auto& sl : reserved) res_gpus += cap_[sl.node].gpus;
    res_gpus_.push_back(res_gpus);
    const std::size_t base = res_nodes_.size();
    res_nodes_.resize(base + reserved.size());
    for (std::size_t k = 0; k < reserved.size(); ++k) res_nodes_[base + k] = reserved[k].node;
    if (c_.will_run_groups)
      for (const auto& sl : reserved) res_start_at_.insert(start_key(at, sl.node));
    res_off_.push_back(static_cast<std::uint32_t>(res_nodes_.size()));
    auto by_time = [](Tick v, const std::pair<Tick, std::uint32_t>& x) { return v < x.first; };
    by_start_.insert(std::upper_bound(by_start_.begin(), by_start_.end(), at, by_time), {at, rid});
    by_end_.insert(std::upper_bound(by_end_.begin(), by_end_.end(), at + limit, by_time),
                   {at + limit, rid});  // after by_end_[0, cur_be): at >= cur_t
    if (at <= cur_x) {                  // counted at the cursor's window
      ++cur_bs;
      block_res(rid);
    }
    for (const auto& sl : reserved) {
      // clear_holds() reads the nodes with GPUs free now: only a reservation on one of them,
      // earlier than what it had, changes what it says. clear_at_ keeps them by first_res_.
      const NodeId id = sl.node;
      if (at < first_res_[id] && free_mark_[id] == pass_no_) {
        if (first_res_[id] == std::numeric_limits<Tick>::max())
          clear_free -= free_gpus(id);  // off the nodes no reservation blocks
        else
          clear_at_.erase(
              std::find_if(clear_at_.begin(), clear_at_.end(), [&](const auto& e) { return e.second == id; }));
        clear_at_.insert(
            std::partition_point(clear_at_.begin(), clear_at_.end(), [&](const auto& e) { return e.first >= at; }),
            {at, id});
        if (free_gpus(id) > 0) later_stale = true;
      }
      first_res_[id] = std::min(first_res_[id], at);
    }
  }
}

void SlurmPolicy::base_build(const ClusterView& view) {
  std::int32_t max_gpus = 0;
  for (const auto& n : view.cluster().nodes()) max_gpus = std::max(max_gpus, n.gpus);
  base_.reset(max_gpus, avail_.size(), node_cls_.empty() ? nullptr : node_cls_.data(), classes_);
  base_g_.assign(avail_.size(), -1);
  base_held_ = static_cast<std::size_t>(
      std::count_if(held_for_.begin(), held_for_.end(), [](JobIndex x) { return x != kNoJob; }));
  base_ok_ = true;
  for (NodeId id = 0; id < avail_.size(); ++id) base_note(id);
}

}  // namespace headroom::policies::slurm::detail
