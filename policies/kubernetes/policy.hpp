#pragma once

// The kubernetes policy's class, shared by the files that define it (one per kube-scheduler seam;
// README.md maps them to upstream). Internal: included only by policies/kubernetes/*.cpp. Small
// functions the filter, score and queue loops call stay defined here, inline. A member declared
// `inline` here without a body is defined in, and called only from, its seam's .cpp; with
// [[gnu::always_inline]] (as every hot one) it is inlined into its callers there, as it was while
// the class lived in one file (benchmarks: bench/full-log/run kubernetes).

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "policies/common/consolidate.hpp"
#include "policies/common/node_sampling.hpp"
#include "policies/kubernetes/kubernetes.hpp"
#include "sim/rng.hpp"

namespace headroom::policies::k8s {

using models::Job;
using models::JobState;
using models::NodeId;

constexpr NodeId kNoNode = UINT32_MAX;

struct Amount {
  std::int64_t gpus = 0, cpus = 0, memory_mib = 0;
};

enum class Where : std::uint8_t {
  None,
  Active,
  Backoff,
  Unschedulable,
  QuotaWait,
  QuotaNever,
  Running,
  Done,
  // A pod no eligible node can hold even empty (and in no pod group): every cycle it gets fails the
  // same way without touching anything else, so it is kept out of the ordered queues (HopelessPods).
  Hopeless,
  // In a FailedBatch (below): its queue state is the batch's.
  Batched,
};

struct Pod {
  Where where = Where::None;
  Tick timestamp = 0;  // queue entry (admission, or the last failure)
  int attempts = 0;
  Tick backoff_until = 0;
  Tick unschedulable_since = 0;
  Tick retry_at = 0;  // next admission retry (QuotaWait)
  NodeId nominated = kNoNode;
  Amount nominated_for;   // what it asked of its nominated node (the pod that preempted)
  NodeId node = kNoNode;  // while running
  // A job wider than one node runs as several pods (models::pod_gpus), bound one by one: the pods
  // bound so far (pending), or all of them (running).
  std::vector<models::Slice> pods;
  bool admitted = false;  // counts against its namespace's quota
  // Bumped whenever the pod enters a queue: entries of the lazily cleaned queues below carry the
  // value they were made with, and an entry whose pod has since moved on is skipped.
  std::uint32_t qseq = 0;
  std::uint32_t batch = UINT32_MAX;  // while Batched
  // The pod set of a job wider than one node (pod_sizes), found at its first cycle; empty before.
  std::vector<std::int32_t> sizes;
  // What the last pending reason said (a kind and its numbers), so that a cycle ending like the
  // one before does not build the same text again; kind -1 = unknown.
  std::array<std::int64_t, 4> said{-1, 0, 0, 0};
  std::int8_t fits_somewhere = -1;  // whether some eligible node could hold it empty; -1 unknown
  bool quota_reason_due = false;
  const char* quota_never_by = "GPUs";  // the resource a QuotaNever pod asks too much of
};

// The pods that no eligible node could hold even empty, outside any pod group. Each of their
// scheduling cycles ends the same way: the failure (attempts + 1, queue timestamp and backoff
// counted from now) with a pending reason already given. They still move through the queues
// exactly as kube-scheduler moves them: unschedulable -> (cluster event) backoff or active ->
// (backoff expiry, 5-minute flush) active -> one failed cycle per pass -> unschedulable. Only
// their order in the active queue is dropped (their cycles change nothing the others see).
// Pods tried in the same pass whose next backoff ends at the same instant (all pods once their
// backoff reached podMaxBackoffSeconds) share that state from then on, so they move as one
// cohort: a cluster event or a pass costs one step per cohort, not one per pending pod. A pod's
// cohort is found through a union-find forest (cohorts merge when tried together).
class HopelessPods {
 public:
  // j has just failed its first cycle (Pod::attempts, backoff_until, unschedulable_since set).
  void add(std::vector<Pod>& pods, JobIndex j) {
    if (cohort_of_.size() < pods.size()) cohort_of_.resize(pods.size(), kNoCohort);
    Pod& p = pods[j];
    p.where = Where::Hopeless;
    const auto c = static_cast<std::uint32_t>(cohorts_.size());
    cohorts_.push_back({p.unschedulable_since, p.backoff_until, p.attempts, 1, c, State::Unschedulable});
    cohort_of_[j] = c;
    fresh_.push_back(c);
  }

  // MoveAllToActiveOrBackoffQueue for the cohorts that failed since the last cluster event.
  void move_all(Tick now) {
    for (std::size_t i = fresh_head_; i < fresh_.size(); ++i)
      if (live(fresh_[i], State::Unschedulable)) to_active_or_backoff(fresh_[i], now);
    fresh_.clear();
    fresh_head_ = 0;
  }

  // flushBackoffQCompleted and flushUnschedulablePodsLeftover.
  void flush(Tick now, Tick max_in_unschedulable) {
    while (!backoff_.empty() && backoff_.top().first <= now) {
      const auto [until, c] = backoff_.top();
      backoff_.pop();
      if (!live(c, State::Backoff)) {
        --dead_in_backoff_;
        continue;
      }
      cohorts_[c].state = State::Active;
      active_.push_back(c);
    }
    while (fresh_head_ < fresh_.size()) {
      const std::uint32_t c = fresh_[fresh_head_];
      if (live(c, State::Unschedulable)) {
        if (cohorts_[c].since + max_in_unschedulable > now) break;
        to_active_or_backoff(c, now);
      }
      ++fresh_head_;
    }
  }

  // One failed cycle for each active cohort; cohorts whose next backoff ends together merge.
  template <typename BackoffFn>
  void try_active(Tick now, BackoffFn backoff) {
    merged_.clear();
    for (const std::uint32_t c : active_) {
      if (!live(c, State::Active)) continue;  // ended since
      Cohort& k = cohorts_[c];
      const int attempts = k.attempts + 1;
      const Tick until = now + backoff(attempts);
      auto it =
          std::find_if(merged_.begin(), merged_.end(), [&](std::uint32_t m) { return cohorts_[m].until == until; });
      if (it != merged_.end()) {
        k.parent = *it;
        cohorts_[*it].live += k.live;
        k.live = 0;
        continue;
      }
      k.attempts = attempts;
      k.since = now;
      k.until = until;
      k.state = State::Unschedulable;
      fresh_.push_back(c);
      merged_.push_back(c);
    }
    active_.clear();
  }

  void remove(JobIndex j) {
    Cohort& k = cohorts_[find(cohort_of_[j])];
    --k.live;  // a cohort left empty is skipped wherever it is listed
    if (k.live == 0 && k.state == State::Backoff) ++dead_in_backoff_;
  }

  bool backing_off() {
    drop_dead_backoff();
    return !backoff_.empty();
  }
  Tick first_backoff() {
    drop_dead_backoff();
    return backoff_.top().first;
  }

 private:
  enum class State : std::uint8_t { Unschedulable, Backoff, Active };
  struct Cohort {
    Tick since;  // failure time: queue timestamp and unschedulable since
    Tick until;  // backoff end
    int attempts;
    std::uint32_t live;    // member pods not ended
    std::uint32_t parent;  // itself while a root
    State state;
  };
  static constexpr std::uint32_t kNoCohort = UINT32_MAX;

  std::uint32_t find(std::uint32_t c) {
    std::uint32_t r = c;
    while (cohorts_[r].parent != r) r = cohorts_[r].parent;
    while (cohorts_[c].parent != r) c = std::exchange(cohorts_[c].parent, r);
    return r;
  }

  bool live(std::uint32_t c, State state) const {
    const Cohort& k = cohorts_[c];
    return k.parent == c && k.live > 0 && k.state == state;
  }

  // A cohort leaves the backoff heap only when flushed, so its only stale entries are cohorts
  // whose pods all ended; they are counted, and looked for only while there are some.
  void drop_dead_backoff() {
    while (dead_in_backoff_ > 0 && !backoff_.empty() && !live(backoff_.top().second, State::Backoff)) {
      backoff_.pop();
      --dead_in_backoff_;
    }
  }

  void to_active_or_backoff(std::uint32_t c, Tick now) {
    Cohort& k = cohorts_[c];
    if (k.until > now) {
      k.state = State::Backoff;
      backoff_.emplace(k.until, c);
    } else {
      k.state = State::Active;
      active_.push_back(c);
    }
  }

  std::vector<Cohort> cohorts_;
  std::vector<std::uint32_t> cohort_of_;  // job -> the cohort it joined (find() gives the current)
  std::vector<std::uint32_t> fresh_;      // unschedulable since the last cluster event, by failure time
  std::size_t fresh_head_ = 0;            // fresh_[..head) left by the 5-minute flush
  std::priority_queue<std::pair<Tick, std::uint32_t>, std::vector<std::pair<Tick, std::uint32_t>>, std::greater<>>
      backoff_;
  std::vector<std::uint32_t> active_;
  std::vector<std::uint32_t> merged_;  // this pass's cohorts, one per backoff end
  std::size_t dead_in_backoff_ = 0;    // entries of backoff_ whose cohort has no live pod
};

// An entry of the active, backoff or unschedulable queue: a key, the pod, and the pod's qseq when
// it was made. The queues are binary heaps and time-ordered vectors cleaned lazily: an entry whose
// pod has left that queue is skipped when reached, instead of being searched for and erased.
// A FailedBatch's id in QueueEntry::id carries this bit; a pod's id is its job index.
constexpr std::uint32_t kBatchBit = 1u << 31;

struct QueueEntry {
  std::int64_t key1;  // active: -priority; backoff: backoff end; unschedulable: since
  Tick key2;          // active: timestamp; otherwise 0
  JobIndex order;     // active: the pod's index (a batch's: its first member's)
  std::uint32_t id;   // the pod, or a batch | kBatchBit
  std::uint32_t seq;  // the pod's qseq or the batch's seq when the entry was made
  friend bool operator>(const QueueEntry& a, const QueueEntry& b) {
    return std::tie(a.key1, a.key2, a.order, a.id) > std::tie(b.key1, b.key2, b.order, b.id);
  }
};

// What makes the failed cycles of several pods interchangeable: the same priority, the same
// reason (kind: 3 a single pod, 8 the first pod of a pod set with none bound, 7 the next pod of a
// pod set with pods bound) and the same GPU request over the same eligible pools (pool_set: the
// set's number, KubernetesPolicy::pool_set).
// Kind 5 (kGangKind) is a Coscheduling PodGroup rejected whole; gpus is then its smallest pod.
// A member that loses its bound pods (node failure, drain) leaves its batch (unbatch).
constexpr std::int32_t kGangKind = 5;

struct BatchKey {
  std::int32_t priority = 0;
  std::int32_t kind = 0;
  std::int32_t gpus = 0;
  std::uint32_t pool_set = 0;
  friend bool operator==(const BatchKey&, const BatchKey&) = default;
};

// Pods whose cycles failed at the same instant for want of GPUs, with their backoff at
// podMaxBackoffSeconds, nothing nominated and nothing to preempt. Their queue state (timestamp,
// unschedulable since, backoff end) is the same, so they move through the queues as one entry:
// unschedulable -> backoff or active, exactly as each would. In the active queue the batch stands
// at its first member's place (-priority, timestamp, index); when it is reached and no eligible
// node has the GPUs its pods ask for (and no lower-priority pod runs), every member's cycle would
// fail the same way without changing anything another pod sees, and nothing before the last of
// them can free GPUs (no pod of that priority can preempt), so they fail together; otherwise the
// first member leaves the batch and has its cycle as any pod does.
// A batch of PodGroups (kGangKind) fails the same way when its pods' GPUs (counted as gang_room
// counts them) are fewer than every member's pod count, as its members' own cycles would one after
// the other (the count only falls during a pass); members with no more pods than that leave the
// batch for their own cycles, at their own places, and the rest fail.
struct FailedBatch {
  std::vector<JobIndex> members;  // sorted by index; [head, end) not yet taken out
  std::vector<JobIndex> joined;   // joined since the last settle, unsorted
  std::size_t head = 0;
  std::size_t live = 0;  // members still in the batch
  Tick since = 0;        // when they failed: their queue timestamp and unschedulable time
  Tick until = 0;        // their backoff end
  BatchKey key;
  Where where = Where::None;
  std::uint32_t seq = 0;
  std::size_t min_pods = SIZE_MAX;  // kGangKind: at most the fewest pods of a member
};
using QueueHeap = std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>>;

// Entries appended in time order (the unschedulable pods, by the time they failed), consumed from
// the front.
struct TimeQueue {
  std::vector<QueueEntry> v;
  std::size_t head = 0;
  void push(const QueueEntry& e) { v.push_back(e); }
  bool empty() const { return head == v.size(); }
  const QueueEntry& front() const { return v[head]; }
  void pop() {
    if (++head == v.size()) clear();
  }
  void clear() {
    v.clear();
    head = 0;
  }
};

struct Candidate {
  NodeId node = 0;
  std::vector<models::JobIndex> victims;  // most important first
};

class KubernetesPolicy final : public Policy {
 public:
  KubernetesPolicy(Config config, std::uint64_t seed)
      : cfg_(std::move(config)),
        tie_rng_(seed, "kubernetes/tie_break"),
        offset_rng_(seed, "kubernetes/preemption_offset") {}

  std::string_view name() const override { return "kubernetes"; }

  // eventhandlers.cpp
  Denial deny(const models::Workload& w, const Job& job) const override;
  void on_submit(const ClusterView& view, JobIndex j) override;
  void on_requeue(const ClusterView& view, JobIndex j) override;
  void on_release(const ClusterView& view, JobIndex j) override;
  void on_end(const ClusterView& view, JobIndex j) override;
  // device_plugin.cpp
  models::ClusterSpec advertised_cluster(const models::ClusterSpec& spec) const override;
  // queue/scheduling_queue.cpp
  void schedule(Session& s) override;

 private:
  // eventhandlers.cpp
  void ensure(const ClusterView& view);

  // device_plugin.cpp
  void load_device_plugin(const ClusterView& view);

  // The extended resource a pod requests: nvidia.com/gpu (kGpuResource) or, under migStrategy
  // mixed, nvidia.com/mig-<profile> (its index in profiles_) when its GPU type names a profile
  // ("mig-1g.5gb", "1g.5gb").
  int resource(const Job& job) const {
    if (job.gpu_type == 0 || job.gpu_type - 1u >= res_by_type_.size()) return kGpuResource;
    return res_by_type_[job.gpu_type - 1u];
  }

  // Whether a pool's nodes advertise what the pod requests (and match its GPU type).
  bool eligible(const ClusterView& view, models::PoolId pool, const Job& job) const {
    const int res = resource(job);
    if (res >= 0)  // a MIG profile: its node selector still holds
      return pool_slices_[pool][static_cast<std::size_t>(res)] > 0 &&
             (job.node_set == 0 || models::in_node_set(view.workload(), job, view.cluster().spec().pools[pool].name));
    if (!pool_ok_(view.cluster(), pool, job, view.workload())) return false;
    // Under mixed, a MIG node advertises as nvidia.com/gpu only its GPUs not in MIG mode.
    return !(job.gpus > 0 && split(pool) && pool_whole_[pool] == 0);
  }

  // Under migStrategy mixed, a pool with MIG: nvidia.com/gpu counts only its whole GPUs.
  bool split(models::PoolId pool) const {
    return pool_mig_[pool] != 0 && cfg_.device_plugin.mig_strategy == MigStrategy::Mixed;
  }

  // Allocatable and free amounts of the pod's GPU resource on a node.
  std::int64_t gpu_capacity(const models::Node& n, const Job& job) const {
    const int res = resource(job);
    if (res < 0) return split(n.pool) ? pool_whole_[n.pool] : n.gpus;
    return pool_slices_[n.pool][static_cast<std::size_t>(res)];
  }

  std::int64_t gpu_free(NodeId id, const models::Node& n, const Job& job) const {
    const int res = resource(job);
    if (res < 0) return split(n.pool) ? pool_whole_[n.pool] - whole_used_[id] : n.free_gpus;
    return gpu_capacity(n, job) - mig_used_[id][static_cast<std::size_t>(res)];
  }

  // queue/scheduling_queue.cpp
  [[gnu::always_inline]] inline void flush_queues(const ClusterView& view, Tick now);
  void move_all_to_active_or_backoff(Tick now);
  void push_active(std::uint32_t id);
  void leave_queue(JobIndex j);
  void take_out(JobIndex j, FailedBatch& B);
  void member_left(std::uint32_t b);
  void unbatch(JobIndex j);
  void settle(std::uint32_t b);
  void free_batch(std::uint32_t b);
  [[gnu::always_inline]] inline std::uint32_t forming(const BatchKey& key, Tick now);
  [[gnu::always_inline]] inline void mark_failed(std::uint32_t b, const BatchKey& key, Tick now);
  std::optional<BatchKey> batch_key(const ClusterView& view, JobIndex j, const Job& pod, int kind);
  std::optional<BatchKey> gang_batch_key(const ClusterView& view, JobIndex j);
  std::uint32_t pool_set(const ClusterView& view, const Job& job);
  [[gnu::always_inline]] inline void run_batch(Session& s, std::uint32_t b);
  [[gnu::always_inline]] inline bool run_gang_batch(Session& s, std::uint32_t b);
  void fail(JobIndex j, Tick now, const std::optional<BatchKey>& key = std::nullopt);
  void set_nomination(JobIndex j, NodeId node, const Job& pod);
  void clear_nomination(JobIndex j);

  // Whether a queue entry still stands for its pod's (or live batch's) place in that queue.
  bool in_queue(const QueueEntry& e, Where where) const {
    if (e.id & kBatchBit) {
      const FailedBatch& B = batches_[e.id & ~kBatchBit];
      return B.where == where && B.seq == e.seq && B.live > 0;
    }
    const Pod& p = pods_[e.id];
    return p.where == where && p.qseq == e.seq;
  }

  // Drop the stale entries at the top or front; true when a live one is left.
  bool live_top(QueueHeap& q, Where where) {
    while (!q.empty() && !in_queue(q.top(), where)) q.pop();
    return !q.empty();
  }

  bool live_front(TimeQueue& q, Where where) {
    while (!q.empty() && !in_queue(q.front(), where)) q.pop();
    return !q.empty();
  }

  bool member(std::uint32_t b, JobIndex j) const { return pods_[j].where == Where::Batched && pods_[j].batch == b; }

  std::int32_t priority(JobIndex j) const { return (*jobs_)[j].priority; }

  Tick backoff_duration(int attempts) const {
    Tick d = cfg_.initial_backoff;
    for (int i = 1; i < attempts; ++i) {
      if (d > cfg_.max_backoff - d) return cfg_.max_backoff;
      d += d;
    }
    return std::min(d, cfg_.max_backoff);
  }

  // gpus_free_somewhere for a plain request of `gpus` over the pools of pool set `set`.
  bool gpus_free_in(const ClusterView& view, std::int32_t gpus, std::uint32_t set) const {
    const models::ClusterState& c = view.cluster();
    for (const models::PoolId p : pool_sets_[set])
      if (c.pool_has_free(p, gpus)) return true;
    return false;
  }

  [[gnu::always_inline]] void to_active_or_backoff(std::uint32_t id, Tick now) {
    if (id & kBatchBit) {
      FailedBatch& B = batches_[id & ~kBatchBit];
      if (B.until > now) {
        B.where = Where::Backoff;
        backoff_.push({B.until, 0, 0, id, ++B.seq});
      } else {
        push_active(id);
      }
      return;
    }
    Pod& p = pods_[id];
    if (p.backoff_until > now) {
      p.where = Where::Backoff;
      backoff_.push({p.backoff_until, 0, id, id, ++p.qseq});
    } else {
      push_active(id);
    }
  }

  [[gnu::always_inline]] void push_unschedulable(JobIndex j, Tick since) {
    Pod& p = pods_[j];
    p.where = Where::Unschedulable;
    const QueueEntry e{since, 0, j, j, ++p.qseq};
    unschedulable_.push(e);
    if (p.fits_somewhere == 1) unschedulable_fitting_.push(e);
  }

  // resource_quota.cpp
  void quota_controller_retries(Session& s, Tick now);
  static std::array<std::int64_t, 4> quota_demand(const Job& job);
  static std::array<std::int64_t, 4> quota_fields(const Config::Quota& q);
  void admit(const ClusterView& view, JobIndex j, Tick now);
  void count_quota(const Job& job, std::int64_t sign);
  void unadmit(const ClusterView& view, JobIndex j);
  static constexpr const char* kQuotaNames[4] = {"GPUs", "cpu", "memory", "pods"};

  // schedule_one.cpp
  std::vector<std::int32_t> pod_sizes(const ClusterView& view, const Job& job) const;
  static Job pod_of(const Job& job, const std::vector<std::int32_t>& sizes, std::size_t k);
  void schedule_one(Session& s, JobIndex j, const Job& job);
  void schedule_pods(Session& s, JobIndex j, const Job& job, const std::vector<std::int32_t>& sizes);
  [[gnu::always_inline]] inline void refresh_classes(const ClusterView& view);
  [[gnu::always_inline]] inline NodeId select_host_by_class(const ClusterView& view, const Job& job, JobIndex self);
  NodeId select_host(const ClusterView& view, const Job& job, JobIndex self);
  NodeId select_host_sampled(const ClusterView& view, const Job& job, JobIndex self);
  bool all_offered_alike(const ClusterView& view, const Job& job, JobIndex self, std::int32_t min_free);
  void bind(Session& s, JobIndex j, const Job& job, NodeId node, std::string_view reason);
  void mark_running(const ClusterView& view, JobIndex j, const Job& job, NodeId node);

  // What a slice's pod adds to (sign 1) or takes from (-1) its node's bound requests.
  void add_usage(const models::Slice& sl, int sign) {
    touch(sl.node);
    add_slice_usage(usage_[sl.node], sl, sign);
  }

  // Node classes: nodes of one pool with the same `up`, free resources and bound requests, and no
  // pod nominated to them, pass the filter and score alike for every pod. With ties going to the
  // lowest index, the best node of a class is its first, so one node per class (plus each node
  // with nominations) decides. Not used with seeded ties (the reservoir sample draws once per tied
  // node) or MIG profiles (per-profile usage).
  using NodeKey = std::array<std::int64_t, 10>;
  struct NodeClass {
    // Its nodes, in id order: kept only where a cycle scans every node (select_host_by_class takes
    // the first of each class). Also, always, a list of them through class_next_ / class_prev_
    // (a sampled cycle judges a class on any member).
    std::set<NodeId> members;
    NodeId head = kNoNode;
    // A sampled cycle's verdict for its pod on every member: the score, or -1 when they fail the
    // filter; valid while stamp is the cycle's (select_host_sampled).
    std::uint64_t stamp = 0;
    std::int64_t score = -1;
  };
  using ClassMap = std::map<NodeKey, NodeClass>;

  bool use_classes() const { return !cfg_.seeded_tie_break && !any_mig_; }

  void touch(NodeId id) {
    if (id >= dirty_flag_.size() || dirty_flag_[id]) return;
    dirty_flag_[id] = 1;
    dirty_.push_back(id);
  }

  void unplace(NodeId id) {
    auto& it = node_class_[id];
    if (it != classes_.end()) {
      NodeClass& k = it->second;
      if (class_members_) k.members.erase(id);
      const NodeId prev = class_prev_[id], next = class_next_[id];
      (prev != kNoNode ? class_next_[prev] : k.head) = next;
      if (next != kNoNode) class_prev_[next] = prev;
      if (k.head == kNoNode) classes_.erase(it);
      it = classes_.end();
    }
    special_.erase(id);
  }

  [[gnu::always_inline]] void place(const ClusterView& view, NodeId id) {
    if (!nominated_[id].empty()) {
      special_.insert(id);
      return;
    }
    const models::Node& n = view.cluster().node(id);
    const NodeUsage& u = usage_[id];
    const NodeKey key{n.pool, n.up ? 1 : 0, n.free_gpus,  n.free_cpus,         n.free_memory_mib,
                      u.gpus, u.cpu_milli,  u.memory_mib, u.nonzero_cpu_milli, u.nonzero_memory_mib};
    auto it = classes_.try_emplace(key).first;
    NodeClass& k = it->second;
    if (class_members_) k.members.insert(id);
    class_prev_[id] = kNoNode;
    class_next_[id] = k.head;
    if (k.head != kNoNode) class_prev_[k.head] = id;
    k.head = id;
    node_class_[id] = it;
  }

  // Gives a pending pod its reason unless the last one it was given says the same (`key`: a kind
  // and the numbers the text shows); the engine records only changes, so only the text is saved.
  template <typename Text>
  void say(Session& s, JobIndex j, std::array<std::int64_t, 4> key, Text text) {
    Pod& p = pods_[j];
    if (p.said[0] == key[0] && p.said[1] == key[1] && p.said[2] == key[2] && p.said[3] == key[3]) return;
    p.said = key;
    s.pending_reason(j, text());
  }

  // plugins/noderesources.cpp (NodeResourcesFit's filter; its scores are common/node_scoring.cpp)
  bool fits_somewhere(const ClusterView& view, JobIndex j, const Job& job);

  // Whether some up node of an eligible pool has at least the pod's GPUs free. When none has, no
  // node can pass the filter (nominations only take more away), so the scan is skipped: a pod
  // waiting for GPUs costs a few set lookups per attempt instead of a pass over every node.
  bool gpus_free_somewhere(const ClusterView& view, const Job& job) const {
    if (job.gpus <= 0 || resource(job) >= 0) return true;  // only plain nvidia.com/gpu requests
    return visit_pools_with_free(view.cluster(), job.gpus, [&](models::PoolId p) { return !eligible(view, p, job); });
  }

  // Resources of higher-or-equal priority pods (other than `self`) nominated to `node`.
  Amount reserved(NodeId node, std::int32_t prio, JobIndex self) const {
    Amount a;
    const int res = self < jobs_->size() ? resource((*jobs_)[self]) : kGpuResource;
    for (JobIndex k : nominated_[node]) {
      if (k == self || priority(k) < prio) continue;
      const Amount& want = pods_[k].nominated_for;
      if (resource((*jobs_)[k]) == res) a.gpus += want.gpus;
      a.cpus += want.cpus;
      a.memory_mib += want.memory_mib;
    }
    return a;
  }

  static bool covers(const models::Node& n, const Amount& free, const Job& job) {
    return free.gpus >= job.gpus && (n.cpus <= 0 || free.cpus >= job.cpus) &&
           (n.memory_mib <= 0 || free.memory_mib >= job.memory_mib);
  }

  // A filter failure that preemption cannot resolve (UnschedulableAndUnresolvable).
  bool unresolvable(const ClusterView& view, NodeId id, const Job& job) const {
    const models::Node& n = view.cluster().node(id);
    return !n.up || !eligible(view, n.pool, job);
  }

  [[gnu::always_inline]] bool fits(const ClusterView& view, NodeId id, const Job& job, JobIndex self) const {
    if (unresolvable(view, id, job)) return false;
    const models::Node& n = view.cluster().node(id);
    const Amount r = reserved(id, job.priority, self);
    return covers(n, {gpu_free(id, n, job) - r.gpus, n.free_cpus - r.cpus, n.free_memory_mib - r.memory_mib}, job);
  }

  std::int64_t total_score(const ClusterView& view, NodeId id, const Job& job) const {
    return weighted_score(cfg_, view.cluster().node(id), usage_[id], job);
  }

  // plugins/defaultpreemption.cpp
  std::optional<Candidate> select_victims(const ClusterView& view, JobIndex j, const Job& job, NodeId id) const;
  bool preempt(Session& s, JobIndex j, const Job& job);
  const Candidate& pick_one(const ClusterView& view, const std::vector<Candidate>& cs) const;

  // plugins/coscheduling.cpp
  void coscheduling_post_filter(Session& s, JobIndex j, std::size_t n);
  void coscheduling_reject(Session& s, JobIndex j, std::size_t n);
  std::int64_t gang_room(const ClusterView& view, const Job& job, const std::vector<std::int32_t>& sizes) const;
  std::int64_t gang_room_in(const ClusterView& view, std::int32_t gpus, std::uint32_t set) const;
  static std::int64_t pool_room(const models::ClusterState& c, models::PoolId p, std::int32_t gpus);
  void group_running(Tick now, models::GroupId g, int delta);
  void report_partial_groups(Session& s);

  Config cfg_;
  sim::RngStream tie_rng_, offset_rng_;
  const std::vector<Job>* jobs_ = nullptr;
  std::vector<Pod> pods_;
  std::vector<NodeUsage> usage_;
  std::vector<std::vector<JobIndex>> nominated_;
  std::vector<Config::Quota> quota_, quota_used_;
  std::vector<JobIndex> quota_reasons_;
  std::vector<std::int64_t> scores_;
  NodeSampler sampler_;  // nextStartNodeIndex
  ScoreMemo score_memo_;
  std::uint64_t class_stamp_ = 0;  // NodeClass::stamp of the current sampled cycle
  static constexpr int kGpuResource = -1;
  struct Group {
    std::vector<JobIndex> members;
    std::int32_t live = 0;     // members not ended
    std::int32_t running = 0;  // members running
    Tick partial_since = -1;
  };
  std::vector<Group> groups_;
  std::set<models::GroupId> partial_;                   // groups partially placed
  std::vector<std::string> profiles_;                   // MIG profiles in the configuration, sorted
  std::vector<std::uint8_t> pool_mig_;                  // pool has a MIG geometry in force
  PoolEligibility pool_ok_;                             // pool_eligible's answers (eligible)
  std::vector<std::vector<std::int64_t>> pool_slices_;  // pool -> slices per node, per profile
  std::vector<std::vector<std::int64_t>> mig_used_;     // node -> slices bound, per profile
  std::vector<std::int64_t> pool_whole_;                // pool with MIG -> GPUs per node not in MIG mode
  std::vector<std::int64_t> whole_used_;                // node -> nvidia.com/gpu bound (mixed, MIG pools)
  bool any_mig_ = false;                                // some pool has GPUs in MIG mode
  std::vector<int> res_by_type_;                        // GPU type index -> resource
  std::int64_t running_ = 0;
  std::map<std::int32_t, std::int64_t> running_by_priority_;  // running pods per priority
  QueueHeap active_;                                          // by (-priority, timestamp, index)
  QueueHeap backoff_;                                         // by (backoff end, index)
  TimeQueue unschedulable_;                                   // by failure time
  // The unschedulable pods that fit some node when it is empty: only they need the 5-minute flush.
  TimeQueue unschedulable_fitting_;
  std::vector<FailedBatch> batches_;
  std::vector<std::uint32_t> free_batches_;
  // The batches made failing at forming_at_. An id freed since may have been made again, with
  // another key: its batch's own key is the one to compare.
  std::vector<std::uint32_t> forming_;
  Tick forming_at_ = -1;
  bool batching_ = false;  // see ensure()
  // The eligible pools of the batches' keys, each set once (BatchKey::pool_set numbers them).
  std::vector<std::vector<models::PoolId>> pool_sets_;
  std::map<std::vector<std::uint64_t>, std::uint32_t> pool_set_ids_;
  std::vector<std::uint64_t> pool_bits_;  // pool_set's scratch
  std::set<std::pair<Tick, JobIndex>> quota_wait_;
  HopelessPods hopeless_;
  // Node classes for select_host (see use_classes); nodes changed since the last refresh.
  ClassMap classes_;
  std::vector<ClassMap::iterator> node_class_;
  bool class_members_ = true;                    // NodeClass::members kept (cycles not sampled; see ensure())
  std::vector<NodeId> class_next_, class_prev_;  // each class's members, listed (NodeClass::head)
  std::set<NodeId> special_;                     // nodes with nominated pods, scored one by one
  std::vector<NodeId> dirty_;
  std::vector<std::uint8_t> dirty_flag_;
  std::uint64_t up_changes_seen_ = 0;
  std::uint64_t up_changes_moved_ = 0;  // up_changes() when unschedulable pods were last moved for it
};

}  // namespace headroom::policies::k8s
