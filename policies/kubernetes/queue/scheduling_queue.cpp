// kube-scheduler pkg/scheduler/internal/queue/scheduling_queue.go: the active, backoff and
// unschedulable queues (lazily cleaned), backoff, MoveAllToActiveOrBackoffQueue, the flushes, the
// nominator (nominator.go), and headroom's FailedBatch grouping of interchangeable failed cycles;
// the engine's pass (schedule), which pops the active queue into schedule_one.cpp's cycles.

#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

// One pass: the queues' flushes, then one scheduling cycle (schedule_one.cpp) per pod popped
// from the active queue, best first (Scheduler.Run / ScheduleOne's NextPod).
void KubernetesPolicy::schedule(Session& s) {
  ensure(s);
  const Tick now = s.now();
  const auto& jobs = s.workload().jobs;
  quota_controller_retries(s, now);
  flush_queues(s, now);
  // One scheduling cycle per pod, best first; a failing pod does not block the others.
  while (live_top(active_, Where::Active)) {
    const std::uint32_t id = active_.top().id;
    active_.pop();
    if (id & kBatchBit) {
      run_batch(s, id & ~kBatchBit);
      continue;
    }
    const JobIndex j = id;
    pods_[j].where = Where::None;
    if (s.state(j) != JobState::Pending) continue;
    ++pods_[j].attempts;
    schedule_one(s, j, jobs[j]);
  }
  // The hopeless pods' cycles: each fails as before, with nothing else to do.
  hopeless_.try_active(now, [&](int attempts) { return backoff_duration(attempts); });
  report_partial_groups(s);
  // Timers for what is waiting; none when nothing is.
  const bool backing_off = live_top(backoff_, Where::Backoff);
  if (backing_off || hopeless_.backing_off()) {
    Tick first = hopeless_.backing_off() ? hopeless_.first_backoff() : sim::kNever;
    if (backing_off) first = std::min(first, backoff_.top().key1);
    s.wake_at(first);
  }
  if (!quota_wait_.empty()) s.wake_at(quota_wait_.begin()->first);
  // The 5-minute flush can only matter while something may still change, and only for pods
  // that fit some node.
  if (running_ > 0 || backing_off || hopeless_.backing_off() || !quota_wait_.empty()) {
    if (live_front(unschedulable_fitting_, Where::Unschedulable))
      s.wake_at(unschedulable_fitting_.front().key1 + cfg_.max_in_unschedulable);
  }
}

// flushBackoffQCompleted and flushUnschedulablePodsLeftover, at the start of each pass (schedule).
void KubernetesPolicy::flush_queues(const ClusterView& view, Tick now) {
  while (live_top(backoff_, Where::Backoff) && backoff_.top().key1 <= now) {
    const std::uint32_t id = backoff_.top().id;
    backoff_.pop();
    push_active(id);
  }
  while (live_front(unschedulable_, Where::Unschedulable) &&
         unschedulable_.front().key1 + cfg_.max_in_unschedulable <= now) {
    const std::uint32_t id = unschedulable_.front().id;
    unschedulable_.pop();
    to_active_or_backoff(id, now);
  }
  hopeless_.flush(now, cfg_.max_in_unschedulable);
  // A node that came back (or went) is a cluster event too (NodeUpdate): every unschedulable pod
  // gets another chance.
  // (After the flushes above, what this moves lands in the active queue or in a backoff that
  // has not ended yet, so nothing is left to flush.)
  if (up_changes_moved_ != view.cluster().up_changes()) {
    up_changes_moved_ = view.cluster().up_changes();
    move_all_to_active_or_backoff(now);
  }
}

void KubernetesPolicy::move_all_to_active_or_backoff(Tick now) {
  unschedulable_fitting_.clear();
  // Where each lands is ordered by its own key, so the order they are moved in does not matter.
  for (std::size_t i = unschedulable_.head; i < unschedulable_.v.size(); ++i) {
    const QueueEntry& e = unschedulable_.v[i];
    if (in_queue(e, Where::Unschedulable)) to_active_or_backoff(e.id, now);
  }
  unschedulable_.clear();
  hopeless_.move_all(now);
}

// Into the active queue: a pod, or a batch (id | kBatchBit) at its first member's place.
void KubernetesPolicy::push_active(std::uint32_t id) {
  if (id & kBatchBit) {
    const std::uint32_t b = id & ~kBatchBit;
    FailedBatch& B = batches_[b];
    settle(b);
    B.where = Where::Active;
    active_.push({-static_cast<std::int64_t>(B.key.priority), B.since, B.members[B.head], id, ++B.seq});
    return;
  }
  Pod& p = pods_[id];
  p.where = Where::Active;
  active_.push({-static_cast<std::int64_t>(priority(id)), p.timestamp, id, id, ++p.qseq});
}

// A pod leaving its queue early (it ended while waiting): the lazily cleaned queues skip its entry
// once the caller has moved it on (Pod::where).
void KubernetesPolicy::leave_queue(JobIndex j) {
  Pod& p = pods_[j];
  switch (p.where) {
    case Where::QuotaWait: quota_wait_.erase({p.retry_at, j}); break;
    case Where::Hopeless: hopeless_.remove(j); break;
    case Where::Batched: {
      const std::uint32_t b = p.batch;
      p.where = Where::None;  // no longer a member (the caller moves it on)
      p.batch = UINT32_MAX;
      --batches_[b].live;
      member_left(b);
      break;
    }
    default: break;
  }
}

// A member leaves batch B with the batch's queue state (timestamp, unschedulable since, backoff
// end); the caller gives it its place.
void KubernetesPolicy::take_out(JobIndex j, FailedBatch& B) {
  Pod& p = pods_[j];
  --B.live;
  p.where = Where::None;
  p.batch = UINT32_MAX;
  p.timestamp = B.since;
  p.unschedulable_since = B.since;
  p.backoff_until = B.until;
}

// After a member left batch b: an empty batch is freed; one in the active queue is pushed again,
// since its entry stands at its first member's place, which may have been the one that left (the
// entry made before is then stale).
void KubernetesPolicy::member_left(std::uint32_t b) {
  if (batches_[b].live == 0) {
    free_batch(b);
  } else if (batches_[b].where == Where::Active) {
    push_active(b | kBatchBit);
  }
}

// A member leaves its batch and takes the batch's place in the queues as a pod of its own (an
// unschedulable one is appended out of time order: the caller moves every unschedulable pod
// right after).
void KubernetesPolicy::unbatch(JobIndex j) {
  Pod& p = pods_[j];
  const std::uint32_t b = p.batch;
  const Where where = batches_[b].where;
  take_out(j, batches_[b]);
  member_left(b);
  switch (where) {
    case Where::Active: push_active(j); break;
    case Where::Backoff:
      p.where = Where::Backoff;
      backoff_.push({p.backoff_until, 0, j, j, ++p.qseq});
      break;
    default: push_unschedulable(j, p.unschedulable_since); break;
  }
}

// Sorts the members that joined into place and skips those that left from the front.
void KubernetesPolicy::settle(std::uint32_t b) {
  FailedBatch& B = batches_[b];
  if (!B.joined.empty()) {
    B.members.erase(B.members.begin(), B.members.begin() + static_cast<std::ptrdiff_t>(B.head));
    B.head = 0;
    std::sort(B.joined.begin(), B.joined.end());
    const auto mid = static_cast<std::ptrdiff_t>(B.members.size());
    B.members.insert(B.members.end(), B.joined.begin(), B.joined.end());
    std::inplace_merge(B.members.begin(), B.members.begin() + mid, B.members.end());
    B.joined.clear();
  }
  while (B.head < B.members.size() && !member(b, B.members[B.head])) ++B.head;
}

void KubernetesPolicy::free_batch(std::uint32_t b) {
  FailedBatch& B = batches_[b];
  B.members.clear();
  B.joined.clear();
  B.head = 0;
  B.live = 0;
  B.where = Where::None;
  B.min_pods = SIZE_MAX;
  ++B.seq;
  free_batches_.push_back(b);
}

// The batch of pods failing now with this key, made on first use (unschedulable since now).
std::uint32_t KubernetesPolicy::forming(const BatchKey& key, Tick now) {
  for (const std::uint32_t b : forming_)
    if (batches_[b].key == key && batches_[b].where == Where::Unschedulable && batches_[b].since == now &&
        batches_[b].live > 0)
      return b;
  std::uint32_t b = 0;
  if (!free_batches_.empty()) {
    b = free_batches_.back();
    free_batches_.pop_back();
  } else {
    b = static_cast<std::uint32_t>(batches_.size());
    HEADROOM_ASSERT(b < kBatchBit, "too many kubernetes pod batches");
    batches_.emplace_back();
  }
  mark_failed(b, key, now);
  return b;
}

// The batch's members failed at `now`: unschedulable since now, their backoff at its maximum.
void KubernetesPolicy::mark_failed(std::uint32_t b, const BatchKey& key, Tick now) {
  FailedBatch& B = batches_[b];
  B.key = key;
  B.since = now;
  B.until = now + cfg_.max_backoff;
  B.where = Where::Unschedulable;
  const QueueEntry e{now, 0, 0, b | kBatchBit, ++B.seq};
  unschedulable_.push(e);
  unschedulable_fitting_.push(e);  // every member fits some node when it is empty
  if (forming_at_ != now) {
    forming_.clear();
    forming_at_ = now;
  }
  forming_.push_back(b);
}

// Whether a pod's failed cycle (just ended, Pod::attempts counted) can join a batch, and its key.
std::optional<BatchKey> KubernetesPolicy::batch_key(const ClusterView& view, JobIndex j, const Job& pod, int kind) {
  const Pod& p = pods_[j];
  const Job& job = (*jobs_)[j];
  if (!batching_ || job.group != models::kNone || p.fits_somewhere != 1 || p.nominated != kNoNode || pod.gpus <= 0 ||
      resource(pod) >= 0 || backoff_duration(p.attempts) != cfg_.max_backoff)
    return std::nullopt;
  return BatchKey{job.priority, kind, pod.gpus, pool_set(view, pod)};
}

// The number of the set of pools eligible for `job`, the same for the same set.
std::uint32_t KubernetesPolicy::pool_set(const ClusterView& view, const Job& job) {
  const models::PoolId n = view.cluster().pool_count();
  pool_bits_.assign((n + 63) / 64, 0);
  for (models::PoolId q = 0; q < n; ++q)
    if (eligible(view, q, job)) pool_bits_[q / 64] |= std::uint64_t{1} << (q % 64);
  const auto [it, added] = pool_set_ids_.try_emplace(pool_bits_, static_cast<std::uint32_t>(pool_sets_.size()));
  if (added) {
    std::vector<models::PoolId>& set = pool_sets_.emplace_back();
    for (models::PoolId q = 0; q < n; ++q)
      if ((pool_bits_[q / 64] >> (q % 64) & 1) != 0) set.push_back(q);
  }
  return it->second;
}

// Whether a PodGroup that Coscheduling has just rejected whole (no pod bound) can join a batch,
// and its key: its smallest pod and the pools of its first, as gang_room counts them.
std::optional<BatchKey> KubernetesPolicy::gang_batch_key(const ClusterView& view, JobIndex j) {
  const Pod& p = pods_[j];
  const Job& job = (*jobs_)[j];
  if (!batching_ || !cfg_.coscheduling || cfg_.seeded_tie_break || job.group != models::kNone ||
      p.fits_somewhere != 1 || p.nominated != kNoNode || !p.pods.empty() || p.sizes.size() < 2 ||
      backoff_duration(p.attempts) != cfg_.max_backoff)
    return std::nullopt;
  if (p.sizes[0] <= 0 || resource(job) >= 0) return std::nullopt;
  // Its pools as for its pods (gang_room).
  return BatchKey{job.priority, kGangKind, *std::min_element(p.sizes.begin(), p.sizes.end()), pool_set(view, job)};
}

// A batch of rejected PodGroups reached the head of the active queue with nothing that could free
// GPUs before its last member's turn: the members whose pods the free GPUs could hold (gang_room)
// go back to the active queue, each at its own place, for a cycle of their own; the rest fail, as
// each would at its turn, since the room only falls until then. False when all left.
bool KubernetesPolicy::run_gang_batch(Session& s, std::uint32_t b) {
  FailedBatch& B = batches_[b];
  const std::int64_t room = gang_room_in(s, B.key.gpus, B.key.pool_set);
  if (room < static_cast<std::int64_t>(B.min_pods)) return true;
  std::size_t kept = B.head, fewest = SIZE_MAX;
  for (std::size_t i = B.head; i < B.members.size(); ++i) {
    const JobIndex j = B.members[i];
    if (!member(b, j)) continue;
    const std::size_t n = pods_[j].sizes.size();
    if (static_cast<std::int64_t>(n) <= room) {
      take_out(j, B);
      push_active(j);
    } else {
      B.members[kept++] = j;
      fewest = std::min(fewest, n);
    }
  }
  B.members.resize(kept);
  B.min_pods = fewest;
  if (B.live > 0) return true;
  free_batch(b);
  return false;
}

// A batch reached the head of the active queue.
void KubernetesPolicy::run_batch(Session& s, std::uint32_t b) {
  FailedBatch& B = batches_[b];
  settle(b);
  B.where = Where::None;
  const Tick now = s.now();
  // No eligible node has the GPUs (its free GPUs only shrink until the last member's turn) and
  // nothing can be preempted: every member fails as it would one by one. A gang batch first lets
  // the PodGroups that might fit go (run_gang_batch).
  const bool no_victims = running_by_priority_.empty() || running_by_priority_.begin()->first >= B.key.priority;
  if (no_victims && B.key.kind == kGangKind && !run_gang_batch(s, b)) return;
  if (no_victims && (B.key.kind == kGangKind || !gpus_free_in(s, B.key.gpus, B.key.pool_set))) {
    for (const std::uint32_t f : forming_) {
      if (f == b || !(batches_[f].key == B.key) || batches_[f].where != Where::Unschedulable ||
          batches_[f].since != now || batches_[f].live == 0)
        continue;
      // Another batch of this key already failed now: the smaller joins the larger.
      std::uint32_t from = b, to = f;
      if (batches_[f].live < B.live) std::swap(from, to);
      FailedBatch& F = batches_[from];
      FailedBatch& T = batches_[to];
      for (const std::vector<JobIndex>* list : {&F.members, &F.joined})
        for (const JobIndex j : *list)
          if (member(from, j)) {
            pods_[j].batch = to;
            T.joined.push_back(j);
          }
      T.live += F.live;
      T.min_pods = std::min(T.min_pods, F.min_pods);
      F.live = 0;
      free_batch(from);
      if (to == b) mark_failed(b, B.key, now);  // b takes f's place (f's entries are now stale)
      return;
    }
    mark_failed(b, B.key, now);
    return;
  }
  // The first member has its own cycle; the rest keep their place.
  const JobIndex j = B.members[B.head++];
  take_out(j, B);
  Pod& p = pods_[j];
  if (B.live > 0) {
    push_active(b | kBatchBit);
  } else {
    free_batch(b);
  }
  if (s.state(j) != JobState::Pending) return;
  ++p.attempts;
  schedule_one(s, j, (*jobs_)[j]);
}

// A failed cycle: the pod becomes unschedulable (or joins the batch failing now with `key`).
void KubernetesPolicy::fail(JobIndex j, Tick now, const std::optional<BatchKey>& key) {
  Pod& p = pods_[j];
  p.timestamp = now;  // AddUnschedulableIfNotPresent refreshes the timestamp
  p.backoff_until = now + backoff_duration(p.attempts);
  p.unschedulable_since = now;
  if (key) {
    const std::uint32_t b = forming(*key, now);
    p.where = Where::Batched;
    p.batch = b;
    batches_[b].joined.push_back(j);
    ++batches_[b].live;
    if (key->kind == kGangKind) batches_[b].min_pods = std::min(batches_[b].min_pods, p.sizes.size());
    return;
  }
  push_unschedulable(j, now);
}

void KubernetesPolicy::set_nomination(JobIndex j, NodeId node, const Job& pod) {
  clear_nomination(j);
  pods_[j].nominated = node;
  pods_[j].nominated_for = {pod.gpus, pod.cpus, pod.memory_mib};
  nominated_[node].push_back(j);
  touch(node);
}

void KubernetesPolicy::clear_nomination(JobIndex j) {
  Pod& p = pods_[j];
  if (p.nominated == kNoNode) return;
  auto& v = nominated_[p.nominated];
  v.erase(std::find(v.begin(), v.end(), j));
  touch(p.nominated);
  p.nominated = kNoNode;
}

}  // namespace headroom::policies::k8s
