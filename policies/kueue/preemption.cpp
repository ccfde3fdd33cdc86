// Preemption (pkg/scheduler/preemption/): candidates and their order (common/ordering.go), the
// classical attempts (preemption.go) and fair-sharing targets (fairsharing/ordering.go, strategy.go).
#include "policies/kueue/policy.hpp"

namespace headroom::policies::kueue {

namespace {

constexpr Drs kNegativeDrs{-1, 1, false};

}  // namespace

// Preemption (preemption.go).

// Whether admitted workload c charges one of the flavor-resources `frs` (those of the choice
// `flavor` the preemptor needs).
bool KueuePolicy::uses(int c, int flavor, const std::vector<int>& frs) const {
  (void)flavor;
  const Wl& cw = wls_[c];
  if (cw.flavor < 0) return false;
  for (int k : frs) {
    const int r = k % kResources;
    if (cqs_[cw.cq].covered[r] && cw.req[r] > 0 && cfr(cw.flavor, r) == k) return true;
  }
  return false;
}

bool KueuePolicy::policy_allows(PreemptionPolicy p, const Wl& pre, const Wl& cand) {
  switch (p) {
    case PreemptionPolicy::Never: return false;
    case PreemptionPolicy::LowerPriority: return cand.priority < pre.priority;
    case PreemptionPolicy::LowerOrNewerEqualPriority:
      return cand.priority < pre.priority || (cand.priority == pre.priority && pre.queue_ts < cand.queue_ts);
    case PreemptionPolicy::Any: return true;
  }
  return false;
}

std::vector<int> KueuePolicy::find_candidates(int w, int flavor, const std::vector<int>& frs) const {
  const Wl& wl = wls_[w];
  const Cq& cq = cqs_[wl.cq];
  const ClusterQueueConfig& c = *cq.cfg;
  std::vector<int> out;
  if (c.within_cluster_queue != PreemptionPolicy::Never) {
    for (int k : cq.holding)
      if (k != w && policy_allows(c.within_cluster_queue, wl, wls_[k]) && uses(k, flavor, frs)) out.push_back(k);
  }
  const bool cohort_policy =
      c.reclaim_within_cohort != PreemptionPolicy::Never || (!cfg_.fair_sharing && c.borrow_within_cohort);
  if (nodes_[wl.cq].parent >= 0 && cohort_policy) {
    // Classic: LowerPriority unless reclaimWithinCohort is Any (borrowWithinCohort alone too).
    const PreemptionPolicy p =
        c.reclaim_within_cohort == PreemptionPolicy::Any ? PreemptionPolicy::Any : PreemptionPolicy::LowerPriority;
    for (int q : subtree_cqs_[cq.root]) {
      if (q == wl.cq || !cq_borrowing(q, frs)) continue;
      for (int k : cqs_[q].holding)
        if (policy_allows(p, wl, wls_[k]) && uses(k, flavor, frs)) out.push_back(k);
    }
  }
  const int own = wl.cq;
  std::sort(out.begin(), out.end(), [&](int a, int b) { return candidate_less(a, b, own); });
  return out;
}

// CandidatesOrdering: evicted first, other CQs first, lower priority, most recently admitted, id.
bool KueuePolicy::candidate_less(int a, int b, int own) const {
  const Wl& x = wls_[a];
  const Wl& y = wls_[b];
  const bool ex = x.st == WState::Evicting, ey = y.st == WState::Evicting;
  if (ex != ey) return ex;
  const bool ox = x.cq == own, oy = y.cq == own;
  if (ox != oy) return !ox;
  if (x.cq == y.cq && x.ns != y.ns && afs_on(x.cq)) {
    const double ux = afs_usage(x.ns), uy = afs_usage(y.ns);
    if (ux != uy) return ux > uy;  // the LocalQueue that used more is preempted first
  }
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.reserved_at != y.reserved_at) return x.reserved_at > y.reserved_at;
  return a < b;
}

std::string KueuePolicy::reason_for(int w, int target, const char* rule) const {
  const std::string& pre = nodes_[wls_[w].cq].name;
  const std::string& tgt = nodes_[wls_[target].cq].name;
  if (wls_[target].cq == wls_[w].cq)
    return std::string("kueue: ") + rule + ", " + pre + " preempts a lower-priority workload of its own";
  if (std::string_view(rule) == "borrowWithinCohort")
    return "kueue: borrowWithinCohort, " + pre + " borrows and preempts from " + tgt;
  if (std::string_view(rule).starts_with("fairSharing"))
    return std::string("kueue: ") + rule + ", " + pre + " preempts from " + tgt;
  return std::string("kueue: ") + rule + ", " + pre + " reclaims from borrowing " + tgt;
}

std::vector<Target> KueuePolicy::minimal_preemptions(int w, int flavor, const std::vector<int>& frs,
                                                     const std::vector<int>& candidates, bool allow_borrowing,
                                                     std::optional<std::int32_t> threshold) {
  const int q = wls_[w].cq;
  std::vector<Target> targets;
  bool ok = false;
  for (int c : candidates) {
    const char* rule = "withinClusterQueue";
    if (wls_[c].cq != q) {
      if (!cq_borrowing(wls_[c].cq, frs)) continue;
      rule = threshold ? "borrowWithinCohort" : "reclaimWithinCohort";
      if (threshold && wls_[c].priority >= *threshold) allow_borrowing = false;
    }
    charge(c, -1);
    targets.push_back({c, reason_for(w, c, rule)});
    if (fits(w, flavor, allow_borrowing)) {
      ok = true;
      break;
    }
  }
  if (!ok) {
    for (const auto& t : targets) charge(t.wl, +1);
    return {};
  }
  fill_back(w, flavor, targets, allow_borrowing);
  for (const auto& t : targets) charge(t.wl, +1);
  return targets;
}

void KueuePolicy::fill_back(int w, int flavor, std::vector<Target>& targets, bool allow_borrowing) {
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    charge(targets[i].wl, +1);
    if (fits(w, flavor, allow_borrowing)) {
      targets[i] = std::move(targets.back());
      targets.pop_back();
    } else {
      charge(targets[i].wl, -1);
    }
  }
}

bool KueuePolicy::under_nominal(int q, const std::vector<int>& frs) const {
  for (int k : frs)
    if (nodes_[q].nominal[k] <= nodes_[q].usage[k]) return false;
  return true;
}

std::vector<Target> KueuePolicy::classical(int w, int flavor, const std::vector<int>& frs) {
  const Wl& wl = wls_[w];
  const ClusterQueueConfig& c = *cqs_[wl.cq].cfg;
  std::vector<int> cands = find_candidates(w, flavor, frs);
  std::vector<int> same;
  for (int k : cands)
    if (wls_[k].cq == wl.cq) same.push_back(k);
  if (same.size() == cands.size()) return minimal_preemptions(w, flavor, frs, cands, true, std::nullopt);
  if (c.borrow_within_cohort) {
    std::int32_t threshold = wl.priority;
    if (c.max_priority_threshold && *c.max_priority_threshold < wl.priority) threshold = *c.max_priority_threshold + 1;
    if (!under_nominal(wl.cq, frs)) {
      std::vector<int> kept;
      for (int k : cands)
        if (wls_[k].cq == wl.cq || wls_[k].priority < threshold) kept.push_back(k);
      cands = std::move(kept);
    }
    return minimal_preemptions(w, flavor, frs, cands, true, threshold);
  }
  if (under_nominal(wl.cq, frs)) {
    auto t = minimal_preemptions(w, flavor, frs, cands, false, std::nullopt);
    if (!t.empty()) return t;
  }
  return minimal_preemptions(w, flavor, frs, same, true, std::nullopt);
}

KueuePolicy::Ordering KueuePolicy::make_ordering(int q, const std::vector<int>& cands) const {
  Ordering o;
  for (int p = nodes_[q].parent; p >= 0; p = nodes_[p].parent) o.ancestors.insert(p);
  for (int c : cands) o.cands[wls_[c].cq].push_back(c);
  return o;
}

int KueuePolicy::next_target(Ordering& o, int preemptor_cq, int cohort) const {
  int best_cq = -1;
  Drs best_cq_drs = kNegativeDrs;
  for (int q : nodes_[cohort].child_cqs) {
    if (o.pruned_cq.count(q)) continue;
    const Drs d = drs(q);
    if ((!d.borrowing && q != preemptor_cq) || !o.has(q)) {
      o.pruned_cq.insert(q);
    } else if (best_cq >= 0 && compare_drs(d, best_cq_drs) == 0) {
      if (candidate_less(o.cands.at(q).front(), o.cands.at(best_cq).front(), preemptor_cq)) best_cq = q;
    } else if (compare_drs(d, best_cq_drs) > 0) {
      best_cq_drs = d;
      best_cq = q;
    }
  }
  int best_cohort = -1;
  Drs best_cohort_drs = kNegativeDrs;
  for (int c : nodes_[cohort].child_cohorts) {
    if (o.pruned_cohort.count(c)) continue;
    const Drs d = drs(c);
    if (!d.borrowing && !o.ancestors.count(c)) {
      o.pruned_cohort.insert(c);
    } else if (compare_drs(d, best_cohort_drs) >= 0) {
      best_cohort_drs = d;
      best_cohort = c;
    }
  }
  if (best_cohort < 0 && best_cq < 0) {
    o.pruned_cohort.insert(cohort);
    return -1;
  }
  if (best_cohort >= 0 && compare_drs(best_cohort_drs, best_cq_drs) >= 0)
    return next_target(o, preemptor_cq, best_cohort);
  return best_cq;
}

// The children of the least common ancestor of a and b on their paths (getAlmostLCAs).
std::pair<int, int> KueuePolicy::almost_lcas(int a, int b) const {
  std::vector<int> pa{a}, pb{b};
  for (int p = nodes_[a].parent; p >= 0; p = nodes_[p].parent) pa.push_back(p);
  for (int p = nodes_[b].parent; p >= 0; p = nodes_[p].parent) pb.push_back(p);
  while (pa.size() > 1 && pb.size() > 1 && pa[pa.size() - 2] == pb[pb.size() - 2]) {
    pa.pop_back();
    pb.pop_back();
  }
  return {pa[pa.size() - 2], pb[pb.size() - 2]};
}

bool KueuePolicy::strategy_passes(FsStrategy s, const Drs& preemptor_new, const Drs& target_old,
                                  const Drs& target_new) {
  if (s == FsStrategy::LessThanOrEqualToFinalShare) return compare_drs(preemptor_new, target_new) <= 0;
  return compare_drs(preemptor_new, target_old) < 0;
}

bool KueuePolicy::fits_fair(int w, int flavor) {
  charge_as(w, flavor, -1);
  const bool ok = fits(w, flavor, true);
  charge_as(w, flavor, +1);
  return ok;
}

std::vector<Target> KueuePolicy::fair_preemptions(int w, int flavor, const std::vector<int>& frs) {
  const int q = wls_[w].cq;
  const std::vector<int> cands = find_candidates(w, flavor, frs);
  if (cands.empty()) return {};
  charge_as(w, flavor, +1);
  std::vector<Target> targets;
  std::vector<int> retry;
  bool ok = false;
  auto take = [&](int c, std::string reason) {
    charge(c, -1);
    targets.push_back({c, std::move(reason)});
    return fits_fair(w, flavor);
  };
  const std::string rule0 = std::string("fairSharing ") + (cfg_.strategies[0] == FsStrategy::LessThanOrEqualToFinalShare
                                                               ? "LessThanOrEqualToFinalShare"
                                                               : "LessThanInitialShare");
  Ordering o = make_ordering(q, cands);
  if (nodes_[q].parent < 0) {
    while (!ok && o.has(q)) ok = take(o.pop(q), reason_for(w, q, "withinClusterQueue"));
  } else {
    const int root = cqs_[q].root;
    while (!ok && !o.pruned_cohort.count(root)) {
      const int t = next_target(o, q, root);
      if (t < 0) continue;
      if (t == q) {
        const int c = o.pop(t);
        ok = take(c, reason_for(w, c, "withinClusterQueue"));
        continue;
      }
      const auto [pa, ta] = almost_lcas(q, t);
      const Drs pre_new = drs(pa), tgt_old = drs(ta);
      while (o.has(t)) {
        const int c = o.pop(t);
        charge(c, -1);
        const Drs tgt_new = drs(ta);
        charge(c, +1);
        if (strategy_passes(cfg_.strategies[0], pre_new, tgt_old, tgt_new)) {
          ok = take(c, reason_for(w, c, rule0.c_str()));
          break;
        }
        retry.push_back(c);
      }
    }
    if (!ok && cfg_.strategies.size() > 1 && !retry.empty()) {
      Ordering o2 = make_ordering(q, retry);
      while (!ok && !o2.pruned_cohort.count(root)) {
        const int t = next_target(o2, q, root);
        if (t < 0) continue;
        const auto [pa, ta] = almost_lcas(q, t);
        const Drs pre_new = drs(pa), tgt_old = drs(ta);
        const int c = o2.pop(t);
        if (compare_drs(pre_new, tgt_old) < 0) ok = take(c, reason_for(w, c, "fairSharing LessThanInitialShare"));
        o2.pruned_cq.insert(t);
      }
    }
  }
  charge_as(w, flavor, -1);
  if (!ok) {
    for (const auto& t : targets) charge(t.wl, +1);
    return {};
  }
  fill_back(w, flavor, targets, true);
  for (const auto& t : targets) charge(t.wl, +1);
  return targets;
}

}  // namespace headroom::policies::kueue
