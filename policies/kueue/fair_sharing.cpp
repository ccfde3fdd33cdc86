// Fair sharing: admission fair sharing (pkg/util/admissionfairsharing, pkg/cache/queue/afs), the
// dominant resource share (pkg/cache/scheduler/fair_sharing.go) and the fair-sharing iterator
// (pkg/scheduler/fair_sharing_iterator.go).
#include <cmath>

#include "policies/kueue/policy.hpp"

namespace headroom::policies::kueue {

// calculateAlphaRate: the weight of the new sample after `elapsed`.
double KueuePolicy::afs_alpha(Tick elapsed) const {
  if (cfg_.afs.half_life == 0) return 0.0;
  return 1.0 - std::pow(0.5, static_cast<double>(elapsed) / static_cast<double>(cfg_.afs.half_life));
}

double KueuePolicy::afs_units(int r, std::int64_t amount) {
  return r == 2 ? static_cast<double>(amount) * 1048576.0 : static_cast<double>(amount);  // memory in bytes
}

// CalculateDecayedConsumed with the LocalQueue's admitted usage, at `elapsed` since the last update.
void KueuePolicy::afs_decay(Lq& lq, Tick elapsed) const {
  const double a = afs_alpha(elapsed);
  for (int r = 0; r < kResources; ++r) lq.consumed[r] = lq.consumed[r] * (1 - a) + afs_units(r, lq.admitted[r]) * a;
}

// The LocalQueue reconciler's samples every usageSamplingInterval since the last update, up to
// now (its admitted usage did not change in between: every change advances first). With a zero
// half-life a sample resets the usage.
void KueuePolicy::afs_advance(Lq& lq) {
  const Tick n = (now_ - lq.last) / cfg_.afs.sampling;
  if (n <= 0) return;
  if (cfg_.afs.half_life == 0) {
    lq.consumed.fill(0);
  } else {
    afs_decay(lq, n * cfg_.afs.sampling);
  }
  lq.last += n * cfg_.afs.sampling;
}

// CalculateUsage: the LocalQueue's weighted consumed usage plus pending entry penalties.
double KueuePolicy::afs_usage(models::TenantId ns) const {
  const Lq& lq = lqs_[ns];
  const double alpha = afs_alpha(cfg_.afs.sampling);
  double usage = 0;
  for (int r = 0; r < kResources; ++r)
    usage += cfg_.afs.weights[r] * (lq.consumed[r] + afs_units(r, lq.penalized[r]) * alpha);
  if (lq.weight <= 0) return std::numeric_limits<double>::infinity();
  return usage / lq.weight;
}

std::array<std::int64_t, kResources> KueuePolicy::covered_request(int w) const {
  std::array<std::int64_t, kResources> out{};
  for (int r = 0; r < kResources; ++r)
    if (cqs_[wls_[w].cq].covered[r]) out[r] = wls_[w].req[r];
  return out;
}

// Quota reserved: the entry penalty alpha(sampling) * request is pushed (scheduler.go
// updateEntryPenalty); a workload keeps one record however often it is reserved.
void KueuePolicy::push_penalty(int w) {
  Wl& wl = wls_[w];
  if (!afs_on(wl.cq) || wl.afs_penalty) return;
  wl.afs_penalty = true;
  const auto req = covered_request(w);
  for (int r = 0; r < kResources; ++r) lqs_[wl.ns].penalized[r] += req[r];
}

void KueuePolicy::drop_penalty(int w) {
  Wl& wl = wls_[w];
  if (!wl.afs_penalty) return;
  wl.afs_penalty = false;
  const auto req = covered_request(w);
  for (int r = 0; r < kResources; ++r) lqs_[wl.ns].penalized[r] -= req[r];
}

// Admitted: its usage counts, and its entry penalty settles into the consumed usage after the
// decay up to now (workload_controller.go updateAfsConsumedUsage).
void KueuePolicy::afs_admit(int w) {
  Wl& wl = wls_[w];
  if (!afs_on(wl.cq)) return;
  Lq& lq = lqs_[wl.ns];
  afs_advance(lq);
  const auto req = covered_request(w);
  if (!wl.afs_counted)
    for (int r = 0; r < kResources; ++r) lq.admitted[r] += req[r];
  wl.afs_counted = true;
  afs_decay(lq, now_ - lq.last);
  if (wl.afs_penalty) {
    const double alpha = afs_alpha(cfg_.afs.sampling);
    for (int r = 0; r < kResources; ++r) lq.consumed[r] += afs_units(r, req[r]) * alpha;
    drop_penalty(w);
  }
  lq.last = now_;
}

// Quota released: its usage stops counting.
void KueuePolicy::afs_release(int w) {
  Wl& wl = wls_[w];
  if (!wl.afs_counted) return;
  Lq& lq = lqs_[wl.ns];
  afs_advance(lq);
  const auto req = covered_request(w);
  for (int r = 0; r < kResources; ++r) lq.admitted[r] -= req[r];
  wl.afs_counted = false;
}

// Fair sharing (fair_sharing.go).

Drs KueuePolicy::drs(int n) const {
  const TreeNode& node = nodes_[n];
  Drs d{0, node.weight, false};
  if (node.parent < 0) return d;
  std::array<std::int64_t, kResources> borrowed{};
  bool any = false;
  for (int k = 0; k < nfr_; ++k) {
    const std::int64_t b = node.usage[k] - node.subtree[k];
    if (b > 0) {
      borrowed[k % kResources] += b;
      any = true;
    }
  }
  if (!any) return d;
  d.borrowing = true;
  for (int r = 0; r < kResources; ++r) {
    if (borrowed[r] == 0) continue;
    std::int64_t lendable = 0;
    for (int f = 0; f * kResources < nfr_; ++f) lendable += potential(node.parent, fr(f, r));
    if (lendable <= 0) continue;
    const double ratio = static_cast<double>(borrowed[r]) * 1000.0 / static_cast<double>(lendable);
    d.unweighted = std::max(d.unweighted, ratio);
  }
  return d;
}

// The fair-sharing tournament (fair_sharing_iterator.go): the next entry to process.
std::size_t KueuePolicy::pop_fair(const std::vector<Entry>& es, const std::vector<bool>& done) {
  std::size_t first = 0;
  while (done[first]) ++first;
  const int q0 = wls_[es[first].wl].cq;
  if (nodes_[q0].parent < 0) return first;
  const int root = cqs_[q0].root;
  std::map<std::pair<int, int>, Drs> values;  // (cohort, entry) -> DRS of its child on the path
  for (std::size_t i = 0; i < es.size(); ++i) {
    if (done[i] || cqs_[wls_[es[i].wl].cq].root != root) continue;
    const int w = es[i].wl;
    const bool charged = es[i].a.mode != Mode::NoFit && es[i].a.flavor >= 0;
    if (charged) charge_as(w, es[i].a.flavor, +1);
    for (int n = wls_[w].cq; nodes_[n].parent >= 0; n = nodes_[n].parent)
      values[{nodes_[n].parent, static_cast<int>(i)}] = drs(n);
    if (charged) charge_as(w, es[i].a.flavor, -1);
  }
  const int winner = tournament(root, es, done, values);
  return static_cast<std::size_t>(winner);
}

int KueuePolicy::tournament(int cohort, const std::vector<Entry>& es, const std::vector<bool>& done,
                            const std::map<std::pair<int, int>, Drs>& values) const {
  std::vector<int> cands;
  for (int c : nodes_[cohort].child_cohorts)
    if (int t = tournament(c, es, done, values); t >= 0) cands.push_back(t);
  for (std::size_t i = 0; i < es.size(); ++i)
    if (!done[i] && nodes_[wls_[es[i].wl].cq].parent == cohort) cands.push_back(static_cast<int>(i));
  if (cands.empty()) return -1;
  auto less = [&](int a, int b) {
    const int c = compare_drs(values.at({cohort, a}), values.at({cohort, b}));
    if (c != 0) return c < 0;
    const Wl& x = wls_[es[a].wl];
    const Wl& y = wls_[es[b].wl];
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.queue_ts != y.queue_ts) return x.queue_ts < y.queue_ts;
    return es[a].wl < es[b].wl;
  };
  int best = cands[0];
  for (std::size_t i = 1; i < cands.size(); ++i)
    if (less(cands[i], best)) best = cands[i];
  return best;
}

}  // namespace headroom::policies::kueue
