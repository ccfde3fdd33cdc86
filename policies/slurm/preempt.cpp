// Preemption (src/plugins/preempt/partition_prio, src/plugins/preempt/qos, interfaces/preempt.c;
// the victim set as select/cons_tres job_test.c _will_run_test finds it), PreemptMode CANCEL,
// REQUEUE and SUSPEND, and SUSPEND's gang time-slicing (doc/html/preempt.shtml).

#include "policies/slurm/policy.hpp"

namespace headroom::policies::slurm::detail {

// Gang time-slicing (SchedulerTimeSlice): when a pair's slice is over, the running member is
// suspended for the suspended one, which resumes on its own nodes in this pass. A pair ends
// when either member is gone; the other then resumes or runs on as after any suspension.
void SlurmPolicy::rotate_gangs(Session& s) {
  for (std::size_t i = 0; i < gangs_.size();) {
    Gang& g = gangs_[i];
    const auto alive = [&](JobIndex x) {
      const JobState st = s.state(x);
      return st == JobState::Pending || st == JobState::Running;
    };
    if (!alive(g.running) || !alive(g.waiting)) {
      gangs_.erase(gangs_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    // Mid-switch (a suspension still taking effect, a resume not yet applied): wait for it.
    const bool on = s.state(g.running) == JobState::Running && !s.terminating(g.running);
    const auto it = suspended_.find(g.waiting);
    const bool off = it != suspended_.end() && it->second.by == g.running && !it->second.resumable &&
                     s.state(g.waiting) == JobState::Pending;
    if (on && off && s.now() >= g.next) {
      const JobIndex on = g.running;
      if (s.preempt(on, PreemptMode::Checkpoint, 0, g.waiting, "gang: time slice over (SUSPEND)", 0).empty()) {
        suspended_[on] = Suspended{g.waiting, s.placement(on), false};
        for (const auto& sl : s.placement(on)) held_for_[sl.node] = g.waiting;
        base_ok_ = false;
        avail_all_ = true;
        std::swap(g.running, g.waiting);
      }
      g.next = s.now() + c_.time_slice;
    }
    // A slice over while the pair is mid-switch is taken up by the event that ends the switch
    // (the suspension or resume taking effect asks for a pass): a wake-up at now would repeat
    // this pass at the same instant for ever.
    if (g.next > s.now()) s.wake_at(g.next);
    ++i;
  }
}

void SlurmPolicy::resume_suspended(Session& s) {
  for (auto it = suspended_.begin(); it != suspended_.end();) {
    if (!it->second.resumable || s.state(it->first) != JobState::Pending) {
      ++it;
      continue;
    }
    const JobIndex v = it->first;
    const models::Placement pl = it->second.placement;
    for (const auto& sl : pl)
      if (held_for_[sl.node] == it->second.by) held_for_[sl.node] = kNoJob;
    base_ok_ = false;
    avail_all_ = true;
    it = suspended_.erase(it);
    build_avail(s);
    if (!start(s, v, pl, "resumed: preemptor ended").empty()) {
      // Its nodes were taken after all: it queues like a requeued job.
      prio_[v] = compute_priority(s, v, s.now());
      enqueue(v);
    }
  }
}

// When `p` may preempt `victim`: from the victim's start plus its PreemptExemptTime, or -1 when
// the rules never allow it.
Tick SlurmPolicy::preemptible_at(const ClusterView& v, JobIndex p, JobIndex victim) const {
  const auto& jobs = v.workload().jobs;
  const Part& pp = parts_[static_cast<std::size_t>(part_[p])];
  const Part& vp = parts_[static_cast<std::size_t>(part_[victim])];
  if (c_.preempt_type == PreemptType::PartitionPrio) {
    if (pp.conf.tier <= vp.conf.tier) return -1;
  } else {
    const QosR& pq = qos_of(jobs[p]);
    const QosR& vq = qos_of(jobs[victim]);
    const bool listed =
        std::find(pq.preempts.begin(), pq.preempts.end(), static_cast<int>(&vq - qos_.data())) != pq.preempts.end();
    const bool within = c_.preempt_within && &pq == &vq && prio_[p] > prio_[victim];
    if (!listed && !within) return -1;
    if (c_.preempt_priority && prio_[p] <= prio_[victim]) return -1;
  }
  const QosR& vq = qos_of(jobs[victim]);
  const Tick exempt = vq.conf.preempt_exempt != kUnlimited ? vq.conf.preempt_exempt : c_.preempt_exempt;
  return v.run_start(victim) + exempt;
}

bool SlurmPolicy::fits_with(const ClusterView& v, JobIndex j, const std::vector<JobIndex>& victims,
                            models::Placement* out) {
  sim_ = avail_;
  for (JobIndex x : victims) {
    for (const auto& sl : v.placement(x)) {
      auto& a = sim_[sl.node];
      a.gpus += sl.gpus;
      a.cpus += sl.cpus;
      a.mem += sl.memory_mib;
      if (shape_[x].exclusive && excl_[sl.node] == 1) a.ok = v.cluster().node(sl.node).up;
    }
  }
  auto pl = choose(v, j, sim_, [](NodeId) { return true; });
  if (pl.empty()) return false;
  if (out != nullptr) *out = std::move(pl);
  return true;
}

bool SlurmPolicy::try_preempt(Session& s, JobIndex j) {
  const Part& p = parts_[static_cast<std::size_t>(part_[j])];
  std::vector<JobIndex> cands;
  // The earliest PreemptExemptTime expiry of a victim the rules allow but its exemption still
  // protects: the preemptor tries again then, with no other event needed.
  Tick exempt_until = sim::kNever;
  for (const auto& [t, x] : by_kill_) {
    (void)t;
    if (s.state(x) != JobState::Running || s.terminating(x)) continue;
    bool overlap = false;
    for (const auto& sl : s.placement(x)) overlap = overlap || p.member[sl.node] != 0;
    if (!overlap) continue;
    const Tick at = preemptible_at(s, j, x);
    if (at < 0) continue;
    if (s.now() >= at) {
      cands.push_back(x);
    } else {
      exempt_until = std::min(exempt_until, at);
    }
  }
  bool ok_so_far = !cands.empty();
  if (!ok_so_far) {
    if (exempt_until != sim::kNever) s.wake_at(exempt_until);
    return false;
  }
  const auto& jobs = s.workload().jobs;
  auto prio_key = [&](JobIndex x) {
    const std::int64_t level = c_.preempt_type == PreemptType::Qos
                                   ? qos_of(jobs[x]).conf.priority
                                   : parts_[static_cast<std::size_t>(part_[x])].conf.tier;
    return (level << 16) + static_cast<std::int64_t>(s.placement(x).size());
  };
  std::stable_sort(cands.begin(), cands.end(), [&](JobIndex a, JobIndex b) {
    if (c_.youngest_first) return std::pair(-s.run_start(a), a) < std::pair(-s.run_start(b), b);
    return std::pair(prio_key(a), a) < std::pair(prio_key(b), b);
  });
  std::vector<JobIndex> victims;
  models::Placement chosen;
  bool ok = false;
  for (JobIndex x : cands) {
    victims.push_back(x);
    if ((ok = fits_with(s, j, victims, &chosen))) break;
  }
  if (!ok) {
    if (exempt_until != sim::kNever) s.wake_at(exempt_until);
    return false;
  }
  // Reorder: the last one needed first, then by overlap with the chosen nodes; run again.
  std::vector<JobIndex> order{victims.back()};
  std::vector<std::pair<int, JobIndex>> rest;
  for (std::size_t i = 0; i + 1 < victims.size(); ++i) {
    int overlap = 0;
    for (const auto& sl : s.placement(victims[i]))
      for (const auto& c : chosen) overlap += sl.node == c.node ? 1 : 0;
    rest.push_back({overlap, victims[i]});
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& r : rest) order.push_back(r.second);
  std::vector<JobIndex> minimal;
  for (JobIndex x : order) {
    minimal.push_back(x);
    if (fits_with(s, j, minimal, nullptr)) break;
  }
  const PreemptMode mode = c_.preempt_mode == PreemptModeS::Cancel    ? PreemptMode::Cancel
                           : c_.preempt_mode == PreemptModeS::Requeue ? PreemptMode::Requeue
                                                                      : PreemptMode::Checkpoint;
  for (JobIndex x : minimal) {
    const Tick grace = c_.preempt_type == PreemptType::Qos ? qos_of(jobs[x]).conf.grace
                                                           : parts_[static_cast<std::size_t>(part_[x])].conf.grace;
    const char* why = c_.preempt_mode == PreemptModeS::Cancel    ? "preempted (CANCEL)"
                      : c_.preempt_mode == PreemptModeS::Requeue ? "preempted (REQUEUE)"
                                                                 : "preempted (SUSPEND)";
    if (!s.preempt(x, mode, grace, j, why, 0).empty()) continue;
    if (c_.preempt_mode == PreemptModeS::Suspend) {
      suspended_[x] = Suspended{j, s.placement(x), false};
      for (const auto& sl : s.placement(x)) held_for_[sl.node] = j;
      base_ok_ = false;
      avail_all_ = true;
      // preempt/qos inside one partition: Slurm's gang scheduler time-slices the two
      // (doc/html/preempt.shtml, "SUSPEND"); they take turns of SchedulerTimeSlice.
      if (c_.preempt_type == PreemptType::Qos && part_[j] == part_[x]) {
        gangs_.push_back({j, x, s.now() + c_.time_slice});
        s.wake_at(s.now() + c_.time_slice);
      }
    }
  }
  nominee_[j] = minimal;
  return true;
}

}  // namespace headroom::policies::slurm::detail
