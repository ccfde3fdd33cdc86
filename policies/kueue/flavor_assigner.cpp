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

}  // namespace headroom::policies::kueue
