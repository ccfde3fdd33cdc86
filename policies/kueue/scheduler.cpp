// The admission cycle (pkg/scheduler/scheduler.go): heads, entries, reserving quota; the workload
// lifecycle (eviction, requeue, finishing), admission checks and waitForPodsReady; the Policy
// callbacks and make_policy.
#include "policies/kueue/policy.hpp"

namespace headroom::policies::kueue {

namespace {

std::string wl_name(const models::Workload& w, const std::vector<JobIndex>& pods) {
  const Job& j = w.jobs[pods.front()];
  if (j.group != models::kNone) return "workload " + w.groups.name(j.group);
  return "workload of job " + std::to_string(j.trace_id);
}

}  // namespace

// Kueue does not refuse: a job whose namespace has no LocalQueue for it is created and stays
// suspended, its Workload inadmissible, and never runs.
KueuePolicy::Denial KueuePolicy::deny(const models::Workload& w, const Job& job) const {
  return {true, "permission denied: held pending as inadmissible: LocalQueue " + name_of(w.queues, job.queue) +
                    " doesn't exist in namespace " + name_of(w.tenants, job.tenant) +
                    " (Kueue keeps the job suspended; it never starts)"};
}

void KueuePolicy::on_submit(const ClusterView& view, JobIndex j) {
  ensure(view);
  const int w = wl_of_[j];
  Wl& wl = wls_[w];
  if (++wl.submitted < wl.pods.size()) return;
  const Job& job = jobs()[j];
  wl.ns = job.tenant;
  if (const auto lq = lq_cq_.find({job.tenant, job.queue}); lq != lq_cq_.end()) {
    wl.cq = lq->second;
  } else {
    wl.cq = job.tenant < ns_cq_.size() ? ns_cq_[job.tenant] : default_cq_;
  }
  if (wl.cq < 0) {
    to_reject_.push_back(w);
    return;
  }
  for (JobIndex p : wl.pods) wl.priority = std::max(wl.priority, jobs()[p].priority);
  compute_request(view, w);
  wl.queue_ts = view.now();
  enqueue(w);
}

void KueuePolicy::on_requeue(const ClusterView& view, JobIndex j) {
  ensure(view);
  unpark(wl_of_[j]);
  dirty_.push_back(wl_of_[j]);
}

void KueuePolicy::on_release(const ClusterView& view, JobIndex j) {
  ensure(view);
  const int w = wl_of_[j];
  unpark(w);
  if (view.state(j) == JobState::Pending && !pod_bound_[j].empty()) {
    // Its bound pods were deleted (node failure, drain): they are placed again.
    for (const auto& sl : pod_bound_[j]) add_usage(sl, -1);
    pod_bound_[j].clear();
    ++releases_;
    dirty_.push_back(w);
    return;
  }
  --wls_[w].running;
  for (const auto& sl : view.placement(j)) add_usage(sl, -1);
  ++releases_;
  dirty_.push_back(w);
}

void KueuePolicy::on_end(const ClusterView& view, JobIndex j) {
  ensure(view);
  const int w = wl_of_[j];
  unpark(w);
  ++wls_[w].ended;
  dirty_.push_back(w);
}

// A pod removed before it ran (models::Job::withdraw_at). A workload whose pods are all gone
// while it still queues leaves its ClusterQueue; an admitted one finishes and frees its quota
// (process_dirty).
void KueuePolicy::on_withdraw(const ClusterView& view, JobIndex j) {
  on_end(view, j);
  now_ = view.now();
  const int w = wl_of_[j];
  Wl& wl = wls_[w];
  if (wl.cq < 0 || wl.ended < static_cast<int>(wl.pods.size())) return;
  if (wl.st == WState::Reserved) {  // quota reserved, admission checks outstanding
    workload_done(w);
    return;
  }
  if (wl.st != WState::Queued) return;
  active_erase(w);
  drop_penalty(w);
  if (wl.backoff_until >= 0) backoff_.erase({wl.backoff_until, w});
  wl.st = WState::Finished;
}

// MultiKueue's re-dispatch (policies/split, docs/split.md): this cluster's copy of the pod was
// removed when another worker admitted it (on_withdraw), and that worker has since evicted it. The
// manager deletes the remote copies and creates them again in every worker
// (pkg/controller/admissionchecks/multikueue/workload.go, reconcileGroup steps 2 and 4): here the
// workload starts over as a fresh submit at now, nothing of the first copy kept.
void KueuePolicy::on_resubmit(const ClusterView& view, JobIndex j) {
  ensure(view);
  now_ = view.now();
  const int w = wl_of_[j];
  Wl& wl = wls_[w];
  HEADROOM_ASSERT(wl.ended > 0, "kueue: on_resubmit of a pod that was never withdrawn");
  // Its withdrawal not yet processed (process_dirty): the first copy finishes now.
  if (wl.st == WState::Admitted && wl.running == 0 && wl.ended == static_cast<int>(wl.pods.size())) workload_done(w);
  if (wl.st == WState::Holding) {
    holds_.erase({wl.hold_until, w});
    wl.st = WState::Finished;
    release_quota(w);
  }
  if (wl.st != WState::Finished) {
    // Another pod of the workload still holds a copy here: this pod is pending in it again.
    --wl.ended;
    dirty_.push_back(w);
    return;
  }
  Wl fresh;
  fresh.pods = std::move(wl.pods);
  fresh.ray = wl.ray;
  wl = std::move(fresh);
  on_submit(view, j);
}

void KueuePolicy::schedule(Session& s) {
  ensure(s);
  now_ = s.now();
  if (cfg_.afs.enabled)
    for (Lq& lq : lqs_) afs_advance(lq);
  for (int w : std::exchange(to_reject_, {})) reject(s, w, reject_reason(w));
  process_dirty(s);
  process_timers(s);
  // Evictions of workloads with no running pod release their quota at once; the cycle runs
  // again for them (a bounded number of times per pass, then at the same time in a new pass).
  for (int round = 0;; ++round) {
    released_ = false;
    admission_cycles(s);
    place_pods(s);
    process_dirty(s);
    if (!released_) break;
    if (round == 100) {
      s.wake_at(now_ + sim::kSecond);
      break;
    }
  }
  Tick next = sim::kNever;
  for (const auto* timers : {&checks_, &ready_, &backoff_, &holds_})
    if (!timers->empty()) next = std::min(next, timers->begin()->first);
  if (next != sim::kNever) s.wake_at(next);
}

void KueuePolicy::compute_request(const ClusterView& view, int w) {
  Wl& wl = wls_[w];
  wl.req = {};
  for (JobIndex p : wl.pods) {
    if (view.state(p) != JobState::Pending && view.state(p) != JobState::Running) continue;
    const Job& j = jobs()[p];
    wl.req[0] += j.gpus;
    wl.req[1] += j.cpus;
    wl.req[2] += j.memory_mib;
  }
}

std::string KueuePolicy::reject_reason(int w) const {
  const Wl& wl = wls_[w];
  if (wl.st == WState::Rejected) return {};
  return "kueue: namespace \"" + workload_->tenants.name(jobs()[wl.pods.front()].tenant) +
         "\" has no LocalQueue (no ClusterQueue admits it)";
}

void KueuePolicy::reject(Session& s, int w, const std::string& reason) {
  Wl& wl = wls_[w];
  wl.st = WState::Rejected;
  drop_penalty(w);
  for (JobIndex p : wl.pods)
    if (s.state(p) == JobState::Pending) s.reject(p, reason);
}

void KueuePolicy::pending_reason(Session& s, int w, const std::string& reason) {
  for (JobIndex p : wls_[w].pods)
    if (s.state(p) == JobState::Pending) s.pending_reason(p, reason);
}

void KueuePolicy::admission_cycles(Session& s) {
  while (true) {
    int busy = -1, nbusy = 0;
    for (std::size_t q = 0; q < cqs_.size() && nbusy < 2; ++q) {
      if (!has_active(static_cast<int>(q))) continue;
      busy = static_cast<int>(q);
      ++nbusy;
    }
    if (nbusy == 1 && cqs_[busy].parks) {
      walk(s, busy);
      return;
    }
    if (nbusy > 1) skip_cycles();
    std::vector<Entry> entries;
    for (std::size_t q = 0; q < cqs_.size(); ++q) {
      if (!has_active(static_cast<int>(q))) continue;
      const int w = head(static_cast<int>(q));
      entries.push_back({w, assign(w)});
    }
    if (entries.empty()) return;
    if (!cfg_.fair_sharing) {
      std::stable_sort(entries.begin(), entries.end(), [&](const Entry& x, const Entry& y) {
        if (x.a.borrow != y.a.borrow) return !x.a.borrow;
        return key(x.wl) < key(y.wl);
      });
    }
    bool progressed = false;
    std::set<int> targeted;
    std::vector<std::pair<int, int>> claims;  // preemptors' usage, held for the rest of the cycle
    std::vector<bool> done(entries.size(), false);
    for (std::size_t n = 0; n < entries.size(); ++n) {
      const std::size_t i = cfg_.fair_sharing ? pop_fair(entries, done) : n;
      done[i] = true;
      const Entry& e = entries[i];
      progressed = process(s, e, targeted, claims) || progressed;
    }
    for (const auto& [w, flavor] : claims) charge_as(w, flavor, -1);
    if (!progressed) return;
  }
}

// The cycles while one parking ClusterQueue alone has work: one entry each, its head, until
// its queue is empty (it never preempts nor blocks). The head is the first of the fresh
// workloads and the parked ones whose GPUs are within fit_limit: a parked one before it would
// not fit, and trying it would only move it to the inadmissible side, as the cursor does.
void KueuePolicy::walk(Session& s, int q) {
  Cq& cq = cqs_[q];
  std::set<int> targeted;
  std::vector<std::pair<int, int>> claims;
  while (true) {
    const int f = cq.active.empty() ? -1 : std::get<2>(*cq.active.begin());
    const int m = parking_.first(q, cq.cursor, fit_limit(q));
    if (f < 0 && m < 0) {
      cq.cursor = ParkedIndex::max_key();
      return;
    }
    const int w = m < 0 || (f >= 0 && key(f) < key(m)) ? f : m;
    cq.cursor = key(w);
    const bool progressed = process(s, Entry{w, assign(w)}, targeted, claims);
    for (const auto& [cw, flavor] : std::exchange(claims, {})) charge_as(cw, flavor, -1);
    targeted.clear();
    if (!progressed) return;
  }
}

// Several ClusterQueues have work, all of them parking: a cycle whose heads are all parked
// workloads with more GPUs than their queue has available changes nothing but the cursors (its
// state is that of the cycle before). The k such cycles before one with another head, or with a
// queue run dry, are passed over at once: each queue's cursor moves past its next k parked ones.
void KueuePolicy::skip_cycles() {
  std::size_t k = std::numeric_limits<std::size_t>::max();
  std::vector<std::pair<int, std::size_t>> busy;  // (ClusterQueue, rank of its cursor)
  for (int q = 0; q < static_cast<int>(cqs_.size()); ++q) {
    if (!has_active(q)) continue;
    const Cq& cq = cqs_[q];
    if (!cq.parks) return;  // its head is tried every cycle
    ParkedIndex::Key stop = cq.active.empty() ? ParkedIndex::max_key() : *cq.active.begin();
    if (const int m = parking_.first(q, cq.cursor, fit_limit(q)); m >= 0) stop = std::min(stop, key(m));
    const std::size_t from = parking_.rank(q, cq.cursor);
    k = std::min(k, parking_.rank(q, stop) - from);
    if (k == 0) return;
    busy.emplace_back(q, from);
  }
  if (busy.empty()) return;
  for (const auto& [q, from] : busy) cqs_[q].cursor = ParkedIndex::after(parking_.nth(q, from + k - 1));
}

bool KueuePolicy::process(Session& s, const Entry& e, std::set<int>& targeted,
                          std::vector<std::pair<int, int>>& claims) {
  const int w = e.wl;
  Wl& wl = wls_[w];
  Cq& cq = cqs_[wl.cq];
  const std::string& cq_name = nodes_[wl.cq].name;
  switch (e.a.mode) {
    case Mode::NoFit: {
      pending_reason(
          s, w,
          e.a.inactive ? "admission: ClusterQueue " + cq_name + " is inactive (stopPolicy; kueue)"
          : e.a.uncovered >= 0
              ? "quota: couldn't assign flavors to pod set main: resource " +
                    std::string(e.a.uncovered == 0 ? "nvidia.com/gpu" : (e.a.uncovered == 1 ? "cpu" : "memory")) +
                    " unavailable in ClusterQueue " + cq_name + " (kueue)"
          : e.a.no_domain   ? tas_reason(w)
          : e.a.exceeds_max ? "quota: request exceeds the maximum quota of ClusterQueue " + cq_name + " (kueue)"
                            : "quota: waiting for quota in ClusterQueue " + cq_name + " (kueue)");
      if (cq.cfg->strict_fifo) return false;  // the head blocks its queue
      active_erase(w);
      wl.inadmissible = true;
      park(s, w);
      return true;
    }
    case Mode::Fit: {
      if (!fits(w, e.a.flavor, true)) return false;  // no longer fits after an earlier admission
      reserve(s, w, e.a.flavor);
      return true;
    }
    case Mode::Preempt: {
      for (const auto& t : e.a.targets)
        if (targeted.count(t.wl)) return false;
      // Skipped when it would no longer fit once its targets are gone (an earlier entry of the
      // cycle took the room).
      for (const auto& t : e.a.targets) charge(t.wl, -1);
      const bool fits_after = fits(w, e.a.flavor, true);
      for (const auto& t : e.a.targets) charge(t.wl, +1);
      if (!fits_after) return false;
      // The preemptor's usage counts for the rest of the cycle (scheduler.go cq.AddUsage), so
      // later entries do not take the quota its victims release.
      charge_as(w, e.a.flavor, +1);
      claims.emplace_back(w, e.a.flavor);
      for (const auto& t : e.a.targets) {
        targeted.insert(t.wl);
        if (wls_[t.wl].st != WState::Evicting) evict(s, t.wl, w, t.reason, false);
      }
      pending_reason(s, w, "preemption: kueue preempts to fit the workload in ClusterQueue " + cq_name);
      return false;
    }
  }
  return false;
}

// Workload lifecycle.

void KueuePolicy::reserve(Session& s, int w, int flavor) {
  Wl& wl = wls_[w];
  Cq& cq = cqs_[wl.cq];
  active_erase(w);
  wl.flavor = flavor;
  charge(w, +1);
  push_penalty(w);
  cq.holding.insert(w);
  wl.reserved_at = now_;
  wl.st = WState::Reserved;
  // The workloads it evicted return to their queues.
  if (auto it = parked_.find(w); it != parked_.end()) {
    for (int p : it->second) {
      Wl& pw = wls_[p];
      if (pw.st != WState::Queued || pw.backoff_until <= now_ + 1) continue;
      backoff_.erase({pw.backoff_until, p});
      pw.backoff_until = now_ + 1;
      backoff_.emplace(pw.backoff_until, p);
    }
    parked_.erase(it);
  }
  if (!cq.checks.empty()) {
    Tick delay = 0;
    for (int c : cq.checks) delay = std::max(delay, cfg_.admission_checks[c].delay);
    wl.checks_at = now_ + delay;
    checks_.emplace(wl.checks_at, w);
    pending_reason(
        s, w,
        "admission: QuotaReserved in ClusterQueue " + nodes_[wl.cq].name + ", waiting for admission checks (kueue)");
    return;
  }
  admit(w);
}

void KueuePolicy::admit(int w) {
  Wl& wl = wls_[w];
  afs_admit(w);
  wl.st = WState::Admitted;
  wl.failed_epoch = UINT64_MAX;
  placing_.insert(place_key(w));
  if (cfg_.wait_for_pods_ready) {
    wl.ready_deadline = now_ + cfg_.pods_ready_timeout;
    ready_.emplace(wl.ready_deadline, w);
  }
}

void KueuePolicy::clear_ready(int w) {
  Wl& wl = wls_[w];
  if (wl.ready_deadline >= 0) ready_.erase({wl.ready_deadline, w});
  wl.ready_deadline = -1;
}

void KueuePolicy::evict(Session& s, int w, int by, const std::string& reason, bool timeout) {
  Wl& wl = wls_[w];
  const JobIndex by_job = by >= 0 ? wls_[by].pods.front() : models::kNoJob;
  if (wl.st == WState::Reserved) {
    checks_.erase({wl.checks_at, w});
  } else if (wl.st == WState::Holding) {
    holds_.erase({wl.hold_until, w});
  }
  placing_.erase(place_key(w));
  clear_ready(w);
  wl.st = WState::Evicting;
  wl.evicted_by_timeout = timeout;
  wl.evicted_by = by;
  for (JobIndex p : wl.pods) {
    if (s.state(p) == JobState::Pending) drop_bound(s, p, reason);
    if (s.state(p) != JobState::Running || s.terminating(p)) continue;
    const std::string why = s.preempt(p, PreemptMode::Requeue, cfg_.scheduler.termination_grace_period, by_job, reason);
    HEADROOM_ASSERT(why.empty(), "kueue preemption refused: " + why);
  }
  dirty_.push_back(w);
}

void KueuePolicy::finish_eviction(Session& s, int w) {
  Wl& wl = wls_[w];
  release_quota(w);
  if (wl.ended == static_cast<int>(wl.pods.size())) {
    wl.st = WState::Finished;
    drop_penalty(w);
    return;
  }
  compute_request(s, w);
  wl.queue_ts = now_;
  if (wl.evicted_by_timeout) {
    ++wl.requeues;
    if (cfg_.backoff_limit >= 0 && wl.requeues > cfg_.backoff_limit) {
      reject(s, w,
             "kueue: deactivated after " + std::to_string(cfg_.backoff_limit) +
                 " waitForPodsReady requeues (backoffLimitCount)");
      return;
    }
    Tick d = cfg_.backoff_base;
    for (int i = 1; i < wl.requeues && d < cfg_.backoff_max; ++i) d *= 2;
    d = std::min(d, cfg_.backoff_max);
    wl.st = WState::Queued;
    wl.flavor = -1;
    wl.backoff_until = now_ + d;
    backoff_.emplace(wl.backoff_until, w);
    pending_reason(s, w, "admission: requeued after a waitForPodsReady timeout, in backoff (kueue)");
    return;
  }
  // Back in its queue 1 ms later (the workload controller's requeue), so the preemptor that
  // evicted it is admitted first rather than the two trading the quota at one instant.
  // While its preemptor is still pending it waits (at most a grace period) for the preemptor to
  // reserve the quota, so the two do not trade it back and forth.
  wl.st = WState::Queued;
  wl.flavor = -1;
  wl.backoff_until = now_ + 1;
  if (wl.evicted_by >= 0 && wls_[wl.evicted_by].st == WState::Queued) {
    wl.backoff_until = now_ + std::max<Tick>(1, cfg_.scheduler.termination_grace_period);
    parked_[wl.evicted_by].push_back(w);
  }
  backoff_.emplace(wl.backoff_until, w);
}

void KueuePolicy::workload_done(int w) {
  Wl& wl = wls_[w];
  placing_.erase(place_key(w));
  clear_ready(w);
  if (wl.ray && cfg_.ray_delete_after_idle > 0) {
    wl.st = WState::Holding;
    wl.hold_until = now_ + cfg_.ray_delete_after_idle;
    holds_.emplace(wl.hold_until, w);
    return;
  }
  wl.st = WState::Finished;
  drop_penalty(w);
  release_quota(w);
}

void KueuePolicy::process_dirty(Session& s) {
  while (!dirty_.empty()) {
    std::vector<int> batch = std::exchange(dirty_, {});
    std::sort(batch.begin(), batch.end());
    batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
    for (int w : batch) {
      Wl& wl = wls_[w];
      if (wl.st == WState::Evicting && wl.running == 0) {
        finish_eviction(s, w);
      } else if (wl.st == WState::Admitted && wl.ended == static_cast<int>(wl.pods.size())) {
        workload_done(w);
      } else if (wl.st == WState::Admitted && wl.running + wl.ended < static_cast<int>(wl.pods.size())) {
        // A pod is pending again (e.g. its node failed): it is placed again.
        wl.failed_epoch = UINT64_MAX;
        placing_.insert(place_key(w));
      }
    }
  }
}

void KueuePolicy::process_timers(Session& s) {
  while (!checks_.empty() && checks_.begin()->first <= now_) {
    const int w = checks_.begin()->second;
    checks_.erase(checks_.begin());
    Wl& wl = wls_[w];
    if (wl.st == WState::Finished) continue;  // its pods were withdrawn meanwhile
    const int attempt = wl.check_attempts++;
    std::string retry;
    for (int c : cqs_[wl.cq].checks)
      if (attempt < cfg_.admission_checks[c].retries) retry = cfg_.admission_checks[c].name;
    if (retry.empty()) {
      admit(w);
      continue;
    }
    // Retry: the quota is released and the workload requeued.
    release_quota(w);
    wl.queue_ts = now_;
    enqueue(w);
    pending_reason(s, w, "admission: check " + retry + " answered Retry; requeued (kueue)");
  }
  while (!ready_.empty() && ready_.begin()->first <= now_) {
    const int w = ready_.begin()->second;
    ready_.erase(ready_.begin());
    Wl& wl = wls_[w];
    wl.ready_deadline = -1;
    if (wl.st == WState::Admitted) {
      evict(s, w, -1,
            "kueue: waitForPodsReady, " + wl_name(*workload_, wl.pods) + " not ready within " +
                std::to_string(cfg_.pods_ready_timeout / sim::kSecond) + " s of admission",
            true);
    }
  }
  while (!backoff_.empty() && backoff_.begin()->first <= now_) {
    const int w = backoff_.begin()->second;
    backoff_.erase(backoff_.begin());
    wls_[w].backoff_until = -1;
    enqueue(w);
  }
  while (!holds_.empty() && holds_.begin()->first <= now_) {
    const int w = holds_.begin()->second;
    holds_.erase(holds_.begin());
    wls_[w].st = WState::Finished;
    release_quota(w);
  }
  process_dirty(s);
}

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<KueuePolicy>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params) { return make_policy(parse_config(params)); }

}  // namespace headroom::policies::kueue
