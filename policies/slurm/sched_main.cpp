// The main scheduler (src/slurmctld/job_scheduler.c: schedule / _schedule over the queue sorted
// as sort_job_queue2 sorts it, at most default_queue_depth jobs, PART_FLAG_SCHED_FAILED per
// partition; the pending reasons Resources and Priority), the event pass around it, and a job's
// start.

#include "policies/slurm/policy.hpp"

namespace headroom::policies::slurm::detail {

void SlurmPolicy::schedule(Session& s) {
  init(s);
  const Tick now = s.now();
  advance_usage(now);
  for (const auto& [j, why] : to_reject_)
    if (s.state(j) == JobState::Pending) s.reject(j, why);
  to_reject_.clear();
  kill_overruns(s);
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    const JobIndex j = waiting_.begin()->second;
    waiting_.erase(waiting_.begin());
    if (s.state(j) != JobState::Pending) continue;
    prio_[j] = compute_priority(s, j, now);
    enqueue(j);
    fresh_.push_back(j);
    dirty_ = true;
  }
  // Requeued jobs not yet eligible again: squeue's BeginTime.
  for (JobIndex j : std::exchange(begin_wait_, {}))
    if (s.state(j) == JobState::Pending && !s.retrying(j) && eligible_[j] > now)
      s.pending_reason(j,
                       "BeginTime: the job's earliest start time has not yet been reached (requeued: eligible "
                       "again after cred_expire + 1 s)");
  if (prio_stale_) recompute_priorities(s, now);
  rotate_gangs(s);
  resume_suspended(s);
  build_avail(s);
  auto backfill_pass = [&] {
    if (!c_.backfill || !dirty_ || now < next_backfill(now)) return;
    // A pass that started jobs while bf_max_job_test (or bf_max_job_start) left jobs untested is
    // followed by another one bf_interval later, as slurmctld's periodic passes are: the started
    // jobs have left the queue and the next ones come within the limit (issue #38).
    const bool capped = static_cast<std::int64_t>(queue_.size()) > c_.bf_max_job_test || c_.bf_max_job_start > 0;
    const auto starts_before = bf_starts_;
    backfill(s);
    last_bf_ = now;
    dirty_ = (capped || c_.will_run_groups) && bf_starts_ > starts_before;
  };
  if (c_.first_pass_backfill && !first_pass_done_ && !queue_.empty()) {
    first_pass_done_ = true;
    backfill_pass();
    // The main scheduler follows; it may start what backfill's reservations held back, and a
    // pass it changes nothing for is skipped as usual.
  }
  main_scheduler(s);
  backfill_pass();
  // Wake only when something can change.
  if (!waiting_.empty()) s.wake_at(waiting_.begin()->first);
  if (!queue_.empty()) {
    if (c_.backfill && dirty_) s.wake_at(next_backfill(now));
    if (c_.multifactor && (c_.w_age > 0 || c_.w_fairshare > 0) && queue_.size() > 1) s.wake_at(next_calc_);
  }
}

// avail_ from the cluster: in full when a node went down or came back, a node was held or let
// go, or at the start; else only the nodes jobs released since (a start updates avail_ itself).
void SlurmPolicy::build_avail(const ClusterView& view) {
  const auto& nodes = view.cluster().nodes();
  // Node id's free GPUs (held or not) count by sign in free_now_ / held_free_.
  auto tally = [&](NodeId id, int sign) {
    if (avail_[id].ok) (held_for_[id] == kNoJob ? free_now_ : held_free_) += sign * avail_[id].gpus;
  };
  auto load = [&](NodeId id) {
    const auto& n = nodes[id];
    avail_[id] = Avail{n.free_gpus, n.free_cpus, n.free_memory_mib, n.up && excl_[id] == 0};
    tally(id, 1);
    note_avail_free(id);
  };
  if (!avail_all_ && avail_.size() == nodes.size() && view.cluster().up_changes() == avail_up_changes_) {
    for (NodeId id : avail_stale_) {
      tally(id, -1);
      load(id);
    }
    avail_stale_.clear();
    return;
  }
  avail_all_ = false;
  base_ok_ = false;
  avail_up_changes_ = view.cluster().up_changes();
  avail_stale_.clear();
  avail_.resize(nodes.size());
  avail_free_.resize(nodes.size());
  avail_bits_.assign((nodes.size() + 63) / 64, 0);
  free_now_ = held_free_ = 0;
  for (NodeId id = 0; id < nodes.size(); ++id) load(id);
}

std::string SlurmPolicy::start(Session& s, JobIndex j, const models::Placement& pl, std::string_view reason) {
  std::string why = s.start(j, pl, reason);
  if (!why.empty()) return why;
  dequeue(j);
  const Job& job = s.workload().jobs[j];
  limits_.on_start(j, job);
  const Tick now = s.now();
  my_start_[j] = now;
  const Tick left = limit_[j] == kUnlimited ? kYear : limit_[j] - used_limit_[j];
  kill_at_[j] = now + std::max<Tick>(left, 0);
  by_kill_.insert({kill_at_[j], j});
  book_release(s, j);
  if (limit_[j] != kUnlimited) s.wake_at(kill_at_[j]);
  take(s, avail_, pl, shape_[j].exclusive);
  for (const auto& sl : pl) note_avail_free(sl.node);
  for (const auto& sl : pl) (held_for_[sl.node] == kNoJob ? free_now_ : held_free_) -= sl.gpus;
  if (shape_[j].exclusive)
    for (const auto& sl : pl) ++excl_[sl.node];
  const auto leaf = static_cast<std::size_t>(leaf_of_[job.tenant]);
  charge(leaf, now);
  rate_of_[j] = billing(job) * qos_of(job).conf.usage_factor;
  rate_[leaf] += rate_of_[j];
  return {};
}

void SlurmPolicy::say_priority(Session& s, JobIndex j) {
  said_[j] = 3;
  const auto pi = static_cast<std::size_t>(part_[j]);
  if (priority_reason_.size() != parts_.size()) {
    priority_reason_.clear();
    for (const auto& part : parts_)
      priority_reason_.push_back("Priority: one or more higher priority jobs exist for partition " + part.conf.name);
  }
  s.pending_reason(j, priority_reason_[pi]);
}

void SlurmPolicy::main_scheduler(Session& s) {
  if (queue_.empty()) {
    fresh_.clear();
    return;
  }
  // With nothing free and no preemption the pass only gives the head its reasons, which are said
  // once: a queue unchanged since such a pass (and no other pass between) has nothing to say.
  const bool idle = free_now_ <= 0 && c_.preempt_type == PreemptType::None;
  if (idle && fresh_.empty() && idle_version_ == queue_version_) return;
  idle_version_ = idle ? queue_version_ : ~std::uint64_t{0};
  std::vector<JobIndex>& head = head_;
  if (head_keys_ != keys_version_) {  // else the queue holds the same keys as when head_ was read
    head.resize(static_cast<std::size_t>(
        std::clamp<std::int64_t>(c_.default_queue_depth, 0, static_cast<std::int64_t>(queue_.size()))));
    if (top_cap() > 0) {  // top_ holds at least default_queue_depth jobs when the queue does
      std::copy_n(top_.begin(), head.size(), head.begin());
    } else {
      auto it = queue_.begin();
      for (JobIndex& h : head) h = (it++)->j;
    }
    head_keys_ = keys_version_;
  }
  // Jobs new to the queue beyond the head the loop below looks at wait behind it.
  for (JobIndex j : std::exchange(fresh_, {}))
    if (s.state(j) == JobState::Pending && queued_[j] && key_[head.back()] < key_[j]) reason_priority(s, j);
  std::vector<char> failed(parts_.size(), 0);
  if (idle) {
    for (JobIndex j : head) {
      const auto pi = static_cast<std::size_t>(part_[j]);
      if (held_by_limit(s, j)) continue;
      if (failed[pi] != 0) {
        reason_priority(s, j);
      } else {
        reason_resources(s, j, false);
        failed[pi] = 1;
      }
    }
    return;
  }
  // A job that cannot start takes its partition's nodes out of the pass for every later job,
  // of any partition (job_scheduler.c: "Do not schedule more jobs in this partition or on nodes
  // in this partition", avail_node_bitmap less the partition's node_bitmap).
  // blocked_: those nodes as bits by node id (a partition's nodes are ORed in as its member bits).
  std::vector<std::uint64_t>& blocked = blocked_;
  auto is_blocked = [&](NodeId id) { return (blocked[id / 64] >> (id % 64) & 1) != 0; };
  // Whether every node of partition p is blocked: then choose() has no candidate and a job that
  // asks for something (nodes, or GPUs) cannot start; it is not asked.
  auto all_blocked = [&](const Part& p) {
    if (p.bits.size() != blocked.size()) return false;  // (both are by the cluster's nodes)
    for (std::size_t w = 0; w < p.bits.size(); ++w)
      if ((p.bits[w] & ~blocked[w]) != 0) return false;
    return true;
  };
  bool any_blocked = false;
  std::size_t failed_count = 0;
  for (JobIndex j : head) {
    const auto pi = static_cast<std::size_t>(part_[j]);
    if (held_by_limit(s, j)) continue;
    if (failed[pi] != 0) {
      reason_priority(s, j);
      continue;
    }
    bool waiting = false;
    if (auto nit = nominee_.find(j); nit != nominee_.end()) {
      for (JobIndex v : nit->second) waiting = waiting || s.state(v) == JobState::Running;
      if (!waiting) nominee_.erase(nit);
    }
    if (!waiting) {
      const Job& job = s.workload().jobs[j];
      if (free_now_ + held_free_ >= job.gpus) {
        // The kept clear nodes (every node up and not held, with its free GPUs) serve as backfill's
        // do, where choose() would take exactly those; they are built here when no backfill pass has
        // built them since the nodes were last read in full.
        const bool quick = !any_blocked && job.gpus > 0 && quick_ok(j, false);
        if (quick && !base_ok_) base_build(s);
        const Shape& sh = shape_[j];
        const bool asks = sh.fixed ? !sh.slices.empty() : sh.total > 0;
        auto pl = any_blocked ? (asks && all_blocked(parts_[pi])
                                     ? models::Placement{}
                                     : choose(
                                           s, j, avail_, [&](NodeId id) { return !is_blocked(id); }, &avail_free_))
                  : quick && base_held_ == 0 && base_.over == 0
                      ? quick_pick(base_, shape_[j].total)
                      : choose(
                            s, j, avail_, [](NodeId) { return true; }, &avail_free_);
        if (!pl.empty() && start(s, j, pl, "main scheduler").empty()) continue;
      }
      if (c_.preempt_type != PreemptType::None && c_.preempt_mode != PreemptModeS::Off && try_preempt(s, j)) {
        // It starts once its victims are gone.
        waiting = true;
      }
    }
    reason_resources(s, j, waiting);
    failed[pi] = 1;
    if (!any_blocked) blocked.assign((avail_.size() + 63) / 64, 0);
    any_blocked = true;
    const Part& fp = parts_[pi];
    for (std::size_t w = 0; w < fp.bits.size() && w < blocked.size(); ++w) blocked[w] |= fp.bits[w];
    ++failed_count;
    (void)failed_count;
  }
}

}  // namespace headroom::policies::slurm::detail
