// Flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go).
#include "policies/kueue/policy.hpp"

namespace headroom::policies::kueue {

// Flavor assignment (flavorassigner.go).

bool KueuePolicy::flavor_matches(int w, int flavor) const {
  const auto& pools = flavor_pools_[flavor];
  for (JobIndex p : wls_[w].pods) {
    bool any = false;
    for (models::PoolId pool = 0; pool < pools.size() && !any; ++pool)
      any = pools[pool] && pool_eligible(*cluster_, pool, jobs()[p], *workload_);
    if (!any) return false;
  }
  return true;
}

Assignment KueuePolicy::try_flavor(int w, int flavor) {
  const Wl& wl = wls_[w];
  const int q = wl.cq;
  const ClusterQueueConfig& c = *cqs_[q].cfg;
  Assignment a;
  a.flavor = flavor;
  std::vector<int> need;
  bool nofit = false;
  for_each_fr(w, flavor, [&](int k, std::int64_t v) {
    if (nofit) return;
    if (v > potential(q, k)) {
      nofit = true;
      a.exceeds_max = true;
      return;
    }
    if (nodes_[q].usage[k] + v > nodes_[q].nominal[k]) a.borrow = true;
    if (v <= available(q, k)) return;
    const bool can_preempt_while_borrowing =
        c.borrow_within_cohort || (cfg_.fair_sharing && c.reclaim_within_cohort != PreemptionPolicy::Never);
    if (v <= nodes_[q].nominal[k] || can_preempt_while_borrowing) {
      need.push_back(k);
    } else {
      nofit = true;
    }
  });
  if (nofit) {
    a.mode = Mode::NoFit;
    return a;
  }
  if (need.empty()) {
    a.mode = Mode::Fit;
    // TAS: a required topology must hold the whole Workload in one domain of its level or below.
    if (tas(w) && cfg_.tas_required && tas_domain(w, flavor, nullptr) == models::kNoSwitch) {
      a.mode = Mode::NoFit;
      a.no_domain = true;
    }
    return a;
  }
  a.targets = cfg_.fair_sharing ? fair_preemptions(w, flavor, need) : classical(w, flavor, need);
  if (a.targets.empty()) {
    a.mode = Mode::NoFit;
    return a;
  }
  a.mode = Mode::Preempt;
  for (const auto& t : a.targets) charge(t.wl, -1);
  a.borrow = false;
  for_each_fr(w, flavor, [&](int k, std::int64_t v) {
    if (nodes_[q].usage[k] + v > nodes_[q].nominal[k]) a.borrow = true;
  });
  for (const auto& t : a.targets) charge(t.wl, +1);
  return a;
}

int KueuePolicy::rank(const Assignment& a, bool prefer_borrowing) const {
  if (a.mode == Mode::NoFit) return 10;
  if (a.mode == Mode::Fit && !a.borrow) return 0;
  if (a.mode == Mode::Preempt && a.borrow) return 3;
  const bool fit_borrow = a.mode == Mode::Fit;
  return prefer_borrowing ? (fit_borrow ? 1 : 2) : (fit_borrow ? 2 : 1);
}

Assignment KueuePolicy::assign(int w) {
  const Cq& cq = cqs_[wls_[w].cq];
  const ClusterQueueConfig& c = *cq.cfg;
  if (c.stopped) {
    Assignment a;
    a.inactive = true;
    return a;
  }
  if (cq.strict)
    for (int r = 0; r < kResources; ++r)
      if (wls_[w].req[r] > 0 && !cq.covered[r]) {
        Assignment a;
        a.uncovered = r;
        return a;
      }
  if (!cq.groups.empty()) return assign_groups(w);
  Assignment best;
  bool all_exceed = true;
  for (int f : cq.flavors) {
    if (!flavor_matches(w, f)) continue;
    Assignment a = try_flavor(w, f);
    all_exceed = all_exceed && a.exceeds_max;
    if (rank(a, c.prefer_borrowing) < rank(best, c.prefer_borrowing)) best = a;
    if (a.mode == Mode::Fit && !a.borrow) break;
    if (a.mode == Mode::Fit && c.stop_when_can_borrow) break;
    if (a.mode == Mode::Preempt && c.stop_when_can_preempt) break;
  }
  if (best.mode == Mode::NoFit) best.exceeds_max = all_exceed;
  return best;
}

// Two or more resource groups (flavorassigner.go assignFlavors): each group the workload asks
// for gets a flavor of its own, found among the group's flavors by the same rules as a single
// group (fit, borrowing, preemption, whenCanBorrow / whenCanPreempt, preference), over that
// group's resources only; a group that fits nowhere leaves the workload pending. The workload's
// mode is the worst of its groups', its preemption targets the union of theirs, and its pods go
// to the pools that every chosen flavor selects.
Assignment KueuePolicy::assign_groups(int w) {
  const Cq& cq = cqs_[wls_[w].cq];
  const ClusterQueueConfig& c = *cq.cfg;
  std::array<int, kResources> chosen;
  chosen.fill(-1);
  Assignment out;
  out.mode = Mode::Fit;
  bool any = false;
  for (std::size_t g = 0; g < cq.groups.size(); ++g) {
    bool asks = false;
    for (int r = 0; r < kResources; ++r) asks = asks || (cq.groups[g][r] && wls_[w].req[r] > 0);
    if (!asks) continue;
    any = true;
    Assignment best;
    int best_flavor = -1;
    bool all_exceed = true;
    for (std::size_t i = 0; i < cq.group_flavors[g].size(); ++i) {
      const int choice = cq.group_choices[g][i];
      if (!flavor_matches(w, choice)) continue;
      Assignment a = try_flavor(w, choice);
      all_exceed = all_exceed && a.exceeds_max;
      if (rank(a, c.prefer_borrowing) < rank(best, c.prefer_borrowing)) {
        best = a;
        best_flavor = cq.group_flavors[g][i];
      }
      if (a.mode == Mode::Fit && !a.borrow) break;
      if (a.mode == Mode::Fit && c.stop_when_can_borrow) break;
      if (a.mode == Mode::Preempt && c.stop_when_can_preempt) break;
    }
    if (best.mode == Mode::NoFit) {
      best.exceeds_max = all_exceed;
      best.flavor = -1;
      return best;
    }
    for (int r = 0; r < kResources; ++r)
      if (cq.groups[g][r]) chosen[r] = best_flavor;
    out.mode = std::min(out.mode, best.mode);
    out.borrow = out.borrow || best.borrow;
    for (auto& t : best.targets) {
      bool dup = false;
      for (const auto& o : out.targets) dup = dup || o.wl == t.wl;
      if (!dup) out.targets.push_back(std::move(t));
    }
  }
  if (!any) {  // it asks for nothing the queue manages: the first flavor of each group
    for (std::size_t g = 0; g < cq.groups.size(); ++g)
      for (int r = 0; r < kResources; ++r)
        if (cq.groups[g][r] && !cq.group_flavors[g].empty()) chosen[r] = cq.group_flavors[g].front();
  }
  out.flavor = choice_of(chosen);
  if (!flavor_matches(w, out.flavor)) {  // the chosen flavors select no common pool for its pods
    out.mode = Mode::NoFit;
    out.targets.clear();
  }
  return out;
}

}  // namespace headroom::policies::kueue
