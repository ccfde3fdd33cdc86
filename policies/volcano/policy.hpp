#pragma once

// The volcano policy's class, private to policies/volcano/: declared here, its member functions
// defined in one .cpp per seam of the upstream scheduler (framework/, actions/, plugins/; see
// README.md in this folder). The small functions the inner loops call are defined here, in the
// class, so that they stay inline.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/topology.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/common/index_set.hpp"
#include "policies/volcano/volcano.hpp"

namespace headroom::policies::volcano {

using models::Job;
using models::JobState;
using models::NodeId;

namespace detail {

using Res = Resources;
using FRes = std::array<double, 3>;
inline constexpr int kDims = 3;
inline constexpr double kEps = 1e-9;
inline constexpr NodeId kNoNode = UINT32_MAX;
inline constexpr const char* kDimName[kDims] = {"nvidia.com/gpu", "cpu", "memory"};

inline Res add(Res a, const Res& b) {
  for (int d = 0; d < kDims; ++d) a[d] += b[d];
  return a;
}
inline Res sub(Res a, const Res& b) {
  for (int d = 0; d < kDims; ++d) a[d] -= b[d];
  return a;
}
inline bool is_zero(const Res& a) { return a[0] == 0 && a[1] == 0 && a[2] == 0; }

enum class Phase : std::uint8_t { Pending, Inqueue, Running };
enum class JobOrderFn : std::uint8_t { Priority, Gang, Drf, Sla };
enum class VictimFn : std::uint8_t { Priority, Gang, Conformance, Drf, Proportion, Capacity, Hdrf };
enum class QueueOrderFn : std::uint8_t { Hdrf, Capacity, Proportion };

// A node of hierarchical DRF's tree (plugins/drf/drf.go hierarchicalNode): a level of a queue's
// volcano.sh/hierarchy path, or a job (a leaf). Children have larger indices than their parent.
struct HNode {
  std::string name;
  double weight = 1;
  std::vector<std::uint32_t> children{};
  std::uint32_t group = UINT32_MAX;  // a job leaf
  std::array<double, 3> request{}, alloc{};
  double share = 0;
  bool saturated = false;
};
enum class Mark : std::uint8_t { None, Allocated, Pipelined, Evicted };

struct SliceReq {
  Res r{};  // masked to the modelled dimensions
  std::int32_t gpus = 0, cpus = 0;
  std::int64_t memory_mib = 0;
};

// A task's slices are slices_[slice0, slice0 + slice_count) (VolcanoPolicy::slices): one list for
// every task, as they never change, which keeps a million tasks in a few tens of MB less.
struct Member {
  std::uint32_t group = 0;
  std::uint32_t slice0 = 0, slice_count = 0;
  bool best_effort = false;
  Res total{};
};

// A PodGroup waiting for enqueue, as its queue's list holds it: its JobOrder key (the deciding
// plugins' values in tier order, then creation time and uid) and when it joined the list.
struct PendEntry {
  std::array<double, 3> key{};
  Tick created = 0;
  JobIndex uid = 0;
  std::uint32_t gi = 0;
  std::uint64_t seq = 0;
};

inline bool entry_less(const PendEntry& a, const PendEntry& b) {
  if (a.key != b.key) return a.key < b.key;
  if (a.created != b.created) return a.created < b.created;
  return a.uid < b.uid;
}

// A run of entries in JobOrder with what lets enqueue pass over it. Of the entries with a GPU
// minResources that enqueue last refused by overcommit for GPUs: how many, their smallest GPU
// minResources; of those it last refused by proportion's capability: how many, their smallest GPU
// and largest minResources; how many entries are neither; the newest entry.
struct PendBlock {
  std::vector<PendEntry> e;
  std::uint32_t overcommit = 0, capability = 0, irregular = 0;
  std::int64_t overcommit_min = std::numeric_limits<std::int64_t>::max();
  std::int64_t capability_min = std::numeric_limits<std::int64_t>::max();
  Resources capability_max{};
  std::uint64_t max_seq = 0;
};

// One queue's PodGroups waiting for enqueue, in JobOrder, in blocks. `walked_key` and
// `walked_seq`: the fit key of the last enqueue pass over the queue and the last entry it saw;
// every entry that pass saw and left here was refused at that key.
struct PendList {
  std::vector<PendBlock> blocks;
  std::uint64_t walked_key = UINT64_MAX, walked_seq = 0, max_seq = 0;
  std::size_t size = 0;
};

// The reasons enqueue gives (kEnqueueOvercommit + dimension, ..., kEnqueueCapacity + queue).
inline constexpr std::uint32_t kEnqueueOk = 0, kEnqueueOvercommit = 1, kEnqueueClosed = 4, kEnqueueCapability = 5,
                               kEnqueueClosedNoMin = 6, kEnqueueCapacity = 8, kEnqueueUnknown = UINT32_MAX;

struct Group {
  // Its tasks are VolcanoPolicy::group_members_[member0, member0 + member_count), in task order.
  std::uint32_t member0 = 0, member_count = 0;
  std::int32_t min = 1;
  Res min_res{};
  std::uint32_t queue = 0;
  std::int32_t priority = 0;
  Tick created = 0;
  JobIndex uid = 0;
  Phase phase = Phase::Pending;
  int submitted = 0, ended = 0, succeeded = 0;
  // Session state.
  int ready = 0, waiting = 0, pending_be = 0;
  Res alloc{};
  std::vector<JobIndex> pending;  // pending tasks (not best effort), task order
  std::size_t cursor = 0;
  // Allocation that failed for lack of nodes at this epoch (memo; see fit_key_).
  std::uint64_t failed_epoch = UINT64_MAX;
  std::uint64_t enqueue_failed = UINT64_MAX;
  // Kept between sessions: the group's part of its queue's sums as of its last refresh, and
  // whether something (an engine event, a session's tentative step) changed it since.
  Res own_request{}, own_allocated{}, own_inqueue{}, own_elastic{};
  // While a Volcano Job's group (pods_after_inqueue) is Pending: its pending tasks' requests. The Job controller
  // creates the pods only once the PodGroup leaves Pending (pkg/controllers/job/job_controller_actions.go, syncTask),
  // so until then they are in no queue's request (proportion); enqueue adds them when it admits the group.
  Res unborn{};
  bool pods_after_inqueue = false;  // a Volcano Job (training or batch work, podsCreated: inqueue)
  bool active = false, dirty = false;
  bool has_min_res = false;  // min_res is the PodGroup's minResources (set)
  // sla: the group has waited sla-waiting-time since its creation (sla.go permitableFn: Permit).
  bool sla_due = false;
  // In its queue's PendList (as `entry`), and the reason enqueue last gave its pending tasks
  // (kEnqueueUnknown: none since the last refresh).
  bool in_pend = false;
  PendEntry entry{};
  std::uint32_t enqueue_reason = kEnqueueUnknown;
  // Allocate's park of a group all of whose tasks proportion refused (allocatable): its slot in
  // VolcanoPolicy::parks_ (kNoPark: none), kept out of the group so that a million groups do not
  // carry its 40 bytes each.
  std::uint32_t park = UINT32_MAX;
  Tick sla_wait = 0;  // its waiting time: the annotation's, else the plugin's argument; 0 = none
};

// A group parked by allocate (VolcanoPolicy::park): proportion refuses each of its tasks while, in
// dimension `d` (the witness), its queue's allocated plus the least request among its tasks is above
// the queue's deserved, no task asking for none of that dimension (allocatable skips a dimension a
// task does not ask for). Nothing but the queue's figures changes that until something touches the
// group (a task ends, is placed or evicted, ...), which unparks it.
struct Park {
  std::uint32_t gi = 0, queue = 0;
  int d = 0;
  Res least{};            // per dimension: the least request among the tasks asking for some
  std::uint8_t zero = 0;  // bit d: some task asks for none of dimension d
};
inline constexpr std::uint32_t kNoPark = UINT32_MAX;

inline constexpr std::uint32_t kNoQueue = UINT32_MAX;

struct QueueS {
  std::string name;
  QueueConf conf;
  bool undeclared = false;  // the site declares its queues and not this one (reject_undeclared)
  Res allocated{}, request{}, inqueue{}, elastic{};
  // The sums over the queue's groups as of their last refresh, and how many groups are active.
  Res base_allocated{}, base_request{}, base_inqueue{}, base_elastic{};
  std::int64_t active_groups = 0;
  FRes deserved{}, real_cap{};
  bool has_jobs = false;
  // capacity plugin: the share (a non-leaf queue's is computed at session open only, as Volcano
  // updates only the leaf's on Allocate/Evict), whether deserved names the GPU (a scalar present
  // even at 0), and with enableHierarchy the tree (ancestors root first) and inherited capability.
  double share = 0;
  bool gpu_deserved = false;
  std::uint32_t parent = kNoQueue;
  std::vector<std::uint32_t> ancestors{};
  int children = 0;
  FRes capability{};
};

struct Op {
  enum Kind : std::uint8_t { Alloc, Pipe, Evict } kind;
  JobIndex job;
  std::vector<std::tuple<NodeId, Res, bool>> where;  // node, resources, pipelined (Alloc/Pipe)
  JobIndex by = models::kNoJob;
  std::string reason;
};

// Values per index (-1: none) with the first index at or after `from` holding at least `v`, in
// O(log n): a max segment tree.
class MaxTree {
 public:
  void resize(std::size_t n) {
    n_ = n;
    size_ = 1;
    while (size_ < n) size_ *= 2;
    t_.assign(2 * size_, std::numeric_limits<std::int64_t>::min());
  }
  void set(std::size_t i, std::int64_t v) {
    i += size_;
    t_[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
      const std::int64_t m = std::max(t_[2 * i], t_[2 * i + 1]);
      if (t_[i] == m) break;  // the maxima above are unchanged too
      t_[i] = m;
    }
  }
  NodeId first_at_least(std::size_t from, std::int64_t v) const {
    if (from >= n_) return kNoNode;
    std::size_t i = from + size_;
    while (t_[i] < v) {
      while (i & 1) i /= 2;  // up while a right child
      if (i == 0) return kNoNode;
      ++i;
    }
    while (i < size_) {
      i *= 2;
      if (t_[i] < v) ++i;
    }
    return i - size_ < n_ ? static_cast<NodeId>(i - size_) : kNoNode;
  }

 private:
  std::size_t n_ = 0, size_ = 1;
  std::vector<std::int64_t> t_;
};

// Nodes alike for node scoring: same pool, up state, capacity and idle resources. Every plugin
// that scores a node in allocate (binpack, nodeorder) reads only these, and the pool and up
// state decide eligibility, so a node class's lowest index stands for all of its nodes.
struct NodeClassKey {
  models::PoolId pool = 0;
  bool up = false;
  Res cap{}, idle{};
  bool operator==(const NodeClassKey&) const = default;
};

struct NodeClassHash {
  std::size_t operator()(const NodeClassKey& k) const {
    std::uint64_t h = (std::uint64_t{k.pool} << 1) | (k.up ? 1u : 0u);
    for (const std::int64_t v : k.cap) h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL;
    for (const std::int64_t v : k.idle) h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct NodeClass {
  NodeClassKey key;
  std::set<NodeId> nodes;  // empty: the slot is free
};

class VolcanoPolicy final : public Policy {
 public:
  explicit VolcanoPolicy(Config cfg);

  std::string_view name() const override { return "volcano"; }

  // Volcano's admission webhook refuses the vcjob when it is created.
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {false, "permission denied: admission webhook \"validatejob.volcano.sh\" denied the request: user " +
                       name_of(w.tenants, job.tenant) + " may not submit to queue " + name_of(w.queues, job.queue)};
  }

  void on_submit(const ClusterView& view, JobIndex j) override;

  void on_end(const ClusterView& view, JobIndex j) override;

  void on_requeue(const ClusterView& view, JobIndex j) override;

  void on_release(const ClusterView& view, JobIndex j) override;

  void schedule(Session& s) override;

 private:
  void reject_outside_leaves(Session& s);
  void reject_undeclared(Session& s);

  // ------------------------------------------------------------------------------------------
  // Set-up.

  void ensure(const ClusterView& view);

  void build_tree();

  void split(const ClusterView& view, JobIndex j);

  // ------------------------------------------------------------------------------------------
  // Session snapshot.

  void open_session(Session& s);

  // Node `n` changed in the engine (a start, a release): read again at the next session.
  void node_changed(NodeId n) {
    if (node_is_dirty_[n]) return;
    node_is_dirty_[n] = 1;
    node_dirty_.push_back(n);
  }

  // Every change of a node's idle resources goes through here: the GPU index and the used sum
  // over the nodes that are up follow it.
  void set_idle(NodeId n, const Res& v) {
    if (up_[n]) used_ = add(used_, sub(idle_[n], v));
    idle_[n] = v;
    free_tree_.set(n, up_[n] ? v[0] : -1);
    reclass(n);
  }

  // Moves node `n` to the class of its pool, up state, capacity and idle resources (when scores
  // differ per node; see NodeClass).
  void reclass(NodeId n) {
    if (!classes_on_) return;
    const NodeClassKey key{node_pool_[n], up_[n] != 0, cap_[n], idle_[n]};
    std::uint32_t& c = node_class_[n];
    if (c != kNoClass) {
      NodeClass& old = node_classes_[c];
      if (old.key == key) return;
      old.nodes.erase(n);
      if (old.nodes.empty()) {
        class_of_.erase(old.key);
        free_classes_.push_back(c);
        --live_classes_;
      }
    }
    auto [it, fresh] = class_of_.try_emplace(key, 0u);
    if (fresh) {
      if (free_classes_.empty()) {
        it->second = static_cast<std::uint32_t>(node_classes_.size());
        node_classes_.emplace_back();
      } else {
        it->second = free_classes_.back();
        free_classes_.pop_back();
      }
      node_classes_[it->second].key = key;
      ++live_classes_;
    }
    c = it->second;
    node_classes_[c].nodes.insert(n);
  }

  void refresh(const ClusterView& s, std::uint32_t gi);

  // ------------------------------------------------------------------------------------------
  // The PodGroups waiting for enqueue, per queue in JobOrder (PendList).

  static constexpr std::size_t kBlock = 64;

  PendEntry pend_key(std::uint32_t gi) const;

  void block_update(PendBlock& b) const;
  void block_add(PendBlock& b, const PendEntry& e) const;

  bool block_refused_again(const PendBlock& b, std::uint32_t q) const;

  static std::size_t pend_block(const PendList& l, const PendEntry& e);

  void pend_insert(std::uint32_t gi);

  std::uint64_t enqueue_memo(const PendList& l, const PendEntry& e) const;

  void pend_erase(std::uint32_t gi);

  void pend_rekey(std::uint32_t gi);

  // Something changed the group: it is refreshed when the next session opens.
  void touch(std::uint32_t gi) {
    Group& g = groups_[gi];
    unpark(g);
    if (g.dirty) return;
    g.dirty = true;
    dirty_.push_back(gi);
  }

  // live_: the groups past enqueue with tasks to place, in index order. Allocate walks awake_ (those
  // not parked) and backfill be_live_ (those with best-effort tasks when they were refreshed): they
  // look at no others.
  void set_live(std::uint32_t gi, bool on) {
    const Group& g = groups_[gi];
    if (on) {
      live_.insert(gi);
      if (g.park == kNoPark) awake_.insert(gi);
      if (g.pending_be > 0)
        be_live_.insert(gi);
      else
        be_live_.erase(gi);
    } else {
      live_.erase(gi);
      awake_.erase(gi);
      be_live_.erase(gi);
    }
  }

  void close_session() {
    for (JobIndex j : marked_) marks_[j] = Mark::None;
    marked_.clear();
  }

  Mark mark(JobIndex j) const { return marks_[j]; }
  void set_mark(JobIndex j, Mark m) {
    if (m != Mark::None && marks_[j] == Mark::None) marked_.push_back(j);
    marks_[j] = m;
  }

  void compute_deserved();
  bool unborn_admitted_ = false;  // enqueue admitted a group with unborn tasks this session

  void capacity_attrs();

  // updateQueueAttrShare: no deserved (best effort) -> 1, else max over deserved dimensions of
  // allocated / deserved.
  static void update_share(QueueS& qs) {
    double share = 0;
    bool any = false;
    for (int d = 0; d < kDims; ++d) {
      if (qs.deserved[d] < 0.1) continue;
      any = true;
      share = std::max(share, static_cast<double>(qs.allocated[d]) / qs.deserved[d]);
    }
    qs.share = any ? share : 1;
  }

  // compareShareWithDeserved: lower share first; at equal shares a queue with deserved first.
  static int share_cmp(const QueueS& a, const QueueS& b) {
    if (a.share != b.share) return a.share < b.share ? -1 : 1;
    const bool da = a.deserved[0] >= 0.1 || a.deserved[1] >= 0.1 || a.deserved[2] >= 0.1;
    const bool db = b.deserved[0] >= 0.1 || b.deserved[1] >= 0.1 || b.deserved[2] >= 0.1;
    return da == db ? 0 : da ? -1 : 1;
  }

  // getQueueLevel: the depth of the deepest common entry of two ancestor lists.
  static int queue_level(const QueueS& a, const QueueS& b) {
    int level = 0;
    for (std::size_t i = 0; i < std::min(a.ancestors.size(), b.ancestors.size()); ++i) {
      if (a.ancestors[i] != b.ancestors[i]) return level;
      level = static_cast<int>(i);
    }
    return level;
  }

  // The capacity QueueOrderFn: queue priority, then (hierarchical) leaves before other queues and
  // two leaves by the shares of their subtrees below their common ancestor, then share.
  int capacity_queue_cmp(std::uint32_t a, std::uint32_t b) const {
    const QueueS &qa = queues_[a], &qb = queues_[b];
    if (qa.conf.priority != qb.conf.priority) return qa.conf.priority > qb.conf.priority ? -1 : 1;
    if (!hierarchy_) return share_cmp(qa, qb);
    const bool la = qa.children == 0, lb = qb.children == 0;
    if (la != lb) return la ? -1 : 1;
    if (!la) return share_cmp(qa, qb);
    const auto level = static_cast<std::size_t>(queue_level(qa, qb));
    const std::uint32_t pa = level + 1 < qa.ancestors.size() ? qa.ancestors[level + 1] : a;
    const std::uint32_t pb = level + 1 < qb.ancestors.size() ? qb.ancestors[level + 1] : b;
    return share_cmp(queues_[pa], queues_[pb]);
  }

  // The queue, then (enableHierarchy) its ancestors up to the root:
  // checkQueueAllocatableHierarchically's order. `f` returns true to stop; returns the queue it
  // stopped at, or kNoQueue.
  template <typename F>
  std::uint32_t leaf_up(std::uint32_t q, F f) const {
    if (f(q)) return q;
    if (!hierarchy_) return kNoQueue;
    const auto& up = queues_[q].ancestors;
    for (auto it = up.rbegin(); it != up.rend(); ++it)
      if (f(*it)) return *it;
    return kNoQueue;
  }

  // The queue whose limit refuses `req` (capacity Allocatable: Open, a leaf, and allocated + req
  // <= realCapability in the requested dimensions for the queue and every ancestor), or kNoQueue.
  std::uint32_t capacity_block(std::uint32_t q, const Res& req) const {
    if (queues_[q].conf.state != QueueState::Open || (hierarchy_ && queues_[q].children > 0)) return q;
    return leaf_up(q, [&](std::uint32_t a) {
      const QueueS& as = queues_[a];
      for (int d = 0; d < kDims; ++d)
        if (req[d] > 0 && static_cast<double>(as.allocated[d] + req[d]) > as.real_cap[d]) return true;
      return false;
    });
  }

  static bool within_deserved_somewhere(const QueueS& qs, const Res& req);

  std::uint32_t ancestor_at(const QueueS& qs, std::int64_t depth) const;

  bool preemptive(std::uint32_t q, const Res& req) const;

  std::uint32_t capacity_enqueue_block(std::uint32_t q, const Res& min_res) const;

  std::string capacity_refusal(const std::string& action, std::uint32_t q, std::uint32_t by) const;

  // ------------------------------------------------------------------------------------------
  // Plugin functions.

  double queue_share(const QueueS& q) const {
    double share = 0;
    for (int d = 0; d < kDims; ++d) {
      if (total_[d] <= 0) continue;
      const double a = static_cast<double>(q.allocated[d]);
      const double s = q.deserved[d] == 0 ? (a == 0 ? 0 : 1) : a / q.deserved[d];
      share = std::max(share, s);
    }
    return share;
  }

  double job_share(const Group& g) const {
    double share = 0;
    for (int d = 0; d < kDims; ++d)
      if (total_[d] > 0) share = std::max(share, static_cast<double>(g.alloc[d]) / static_cast<double>(total_[d]));
    return share;
  }

  bool overused(const QueueS& q) const {
    if (!proportion_) return false;
    for (int d = 0; d < kDims; ++d)
      if (total_[d] > 0 && q.deserved[d] > static_cast<double>(q.allocated[d]) + kEps) return false;
    return true;
  }

  bool allocatable(std::uint32_t qi, const Res& req) const {
    if (capacity_) return capacity_block(qi, req) == kNoQueue;
    const QueueS& q = queues_[qi];
    if (q.conf.state != QueueState::Open) return false;
    if (!proportion_) return true;
    for (int d = 0; d < kDims; ++d)
      if (req[d] > 0 && over_deserved(q, d, req[d])) return false;
    return true;
  }
  // proportion's allocatable in one dimension: the queue's allocated plus `amount` above its deserved.
  static bool over_deserved(const QueueS& q, int d, std::int64_t amount) {
    const auto k = static_cast<std::size_t>(d);
    return static_cast<double>(q.allocated[k] + amount) > q.deserved[k] + kEps;
  }

  bool job_ready(const Group& g) const { return !gang_ || g.ready + g.pending_be >= g.min; }
  // Session.JobPipelined: gang permits a group with minMember tasks placed or pipelined and rejects
  // any other; sla permits a group past its waiting time. A tier's reject wins over its permits, so
  // sla's permit counts only from a tier before gang's (sla_pipelined_).
  bool job_pipelined(const Group& g) const {
    return !gang_ || g.waiting + g.ready + g.pending_be >= g.min || (sla_pipelined_ && g.sla_due);
  }
  bool job_starving(const Group& g) const { return g.waiting + g.ready < (gang_ ? g.min : 1); }
  bool job_valid(const Group& g) const { return !gang_ || g.submitted - g.ended + g.succeeded >= g.min; }

  // Session.QueueOrderFn: the first plugin, in tier order, with a non-zero answer.
  int queue_cmp(std::uint32_t a, std::uint32_t b) const {
    for (const QueueOrderFn f : queue_order_) {
      if (f == QueueOrderFn::Hdrf) {
        const double d = hdrf_compare(a, b);
        if (d != 0) return d < 0 ? -1 : 1;
      } else if (f == QueueOrderFn::Capacity) {
        if (const int c = capacity_queue_cmp(a, b); c != 0) return c;
      } else {
        const QueueS &qa = queues_[a], &qb = queues_[b];
        if (qa.conf.priority != qb.conf.priority) return qa.conf.priority > qb.conf.priority ? -1 : 1;
        const double sa = queue_share(qa), sb = queue_share(qb);
        if (sa < sb) return -1;
        if (sa > sb) return 1;
      }
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // ------------------------------------------------------------------------------------------
  // Hierarchical DRF (plugins/drf/drf.go with enableHierarchy; docs/design/hdrf.md).

  void hdrf_build();

  double drf_share(const FRes& alloc) const;

  void hdrf_compute(const std::vector<std::pair<std::uint32_t, Res>>& delta = {}) const;

  double hdrf_compare(std::uint32_t a, std::uint32_t b) const;

  std::vector<JobIndex> hdrf_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const;
  double hdrf_compare_now(std::uint32_t a, std::uint32_t b) const;

  int job_cmp(std::uint32_t a, std::uint32_t b) const {
    const Group &ga = groups_[a], &gb = groups_[b];
    for (const JobOrderFn f : job_order_) {
      switch (f) {
        case JobOrderFn::Priority:
          if (ga.priority != gb.priority) return ga.priority > gb.priority ? -1 : 1;
          break;
        case JobOrderFn::Gang: {
          const bool ra = job_ready(ga), rb = job_ready(gb);
          if (ra != rb) return ra ? 1 : -1;
          break;
        }
        case JobOrderFn::Drf: {
          const double sa = job_share(ga), sb = job_share(gb);
          if (sa < sb) return -1;
          if (sa > sb) return 1;
          break;
        }
        case JobOrderFn::Sla: {  // the earlier creation + waiting time first; one without after
          if ((ga.sla_wait > 0) != (gb.sla_wait > 0)) return ga.sla_wait > 0 ? -1 : 1;
          const Tick da = ga.created + ga.sla_wait, db = gb.created + gb.sla_wait;
          if (ga.sla_wait > 0 && da != db) return da < db ? -1 : 1;
          break;
        }
      }
    }
    if (ga.created != gb.created) return ga.created < gb.created ? -1 : 1;
    return ga.uid < gb.uid ? -1 : ga.uid > gb.uid ? 1 : 0;
  }

  int task_cmp(JobIndex a, JobIndex b) const {
    if (task_priority_ && (*jobs_)[a].priority != (*jobs_)[b].priority)
      return (*jobs_)[a].priority > (*jobs_)[b].priority ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // BuildVictimsPriorityQueue: reverse JobOrder, then reverse TaskOrder. With capacity, victims of
  // different queues go by VictimQueueOrderFn (hierarchical: the queue sharing the deeper ancestor
  // with the preemptor's first), else by reverse QueueOrder (framework/session_plugins.go).
  bool victim_before(JobIndex a, JobIndex b, JobIndex preemptor) const {
    const std::uint32_t ga = members_[a].group, gb = members_[b].group;
    if (ga != gb) {
      const std::uint32_t qa = groups_[ga].queue, qb = groups_[gb].queue;
      if (capacity_ && qa != qb) {
        if (hierarchy_) {
          const QueueS& pq = queues_[groups_[members_[preemptor].group].queue];
          const int la = queue_level(queues_[qa], pq), lb = queue_level(queues_[qb], pq);
          if (la != lb) return la > lb;
        }
        return queue_cmp(qa, qb) > 0;
      }
      return job_cmp(ga, gb) > 0;
    }
    return task_cmp(a, b) > 0;
  }

  // Each plugin's PreemptableFn / ReclaimableFn (plugins/<plugin>.cpp).
  std::vector<JobIndex> priority_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const;
  std::vector<JobIndex> gang_victims(const std::vector<JobIndex>& cands) const;
  std::vector<JobIndex> drf_victims(JobIndex preemptor, const Res& req, const std::vector<JobIndex>& cands) const;
  std::vector<JobIndex> proportion_victims(const std::vector<JobIndex>& cands) const;

  std::vector<JobIndex> plugin_victims(VictimFn plugin, bool reclaim, JobIndex preemptor, const Res& req,
                                       const std::vector<JobIndex>& cands) const;

  static bool relevant_deserved(const Res& req, const QueueS& qs);

  static bool above_deserved(const Res& allocated, const QueueS& qs, const Res& req);

  std::vector<JobIndex> capacity_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const;

  std::vector<JobIndex> tiered_victims(bool reclaim, JobIndex preemptor, const Res& req,
                                       const std::vector<JobIndex>& cands, std::string& rule) const;

  // ------------------------------------------------------------------------------------------
  // Nodes.

  bool node_fits(NodeId n, const Res& avail, const Res& req) const {
    for (int d = 0; d < kDims; ++d)
      if ((d == 0 || cap_[n][d] > 0) && avail[d] < req[d]) return false;
    return true;
  }

  Res future_idle(NodeId n) const { return sub(add(idle_[n], rel_[n]), pipe_[n]); }

  bool flat_scores() const {
    const bool cpu_mem = modelled_[1] || modelled_[2];
    return !cpu_mem && !(binpack_ && cfg_.binpack_gpu > 0 && cfg_.binpack_weight > 0);
  }

  double node_score(NodeId n, const SliceReq& sl) const;

  bool eligible(NodeId n, const Job& job) const { return view_->cluster().node(n).up && pool_ok(node_pool_[n], job); }

  // pool_eligible (GPU type, node selector), worked out once per (GPU type, node set, pool): the
  // node scans asked it of every node, thousands a pod on CEA Curie with its partitions' pools.
  bool pool_ok(models::PoolId p, const Job& job) const { return pool_ok_(view_->cluster(), p, job, view_->workload()); }

  // The last node of n's pool: a scan in node order passes over a pool the job may not use.
  NodeId pool_last(NodeId n) const {
    const models::PoolId p = node_pool_[n];
    return view_->cluster().pool_first_node(p) + static_cast<NodeId>(view_->cluster().pool_node_count(p)) - 1;
  }

  std::pair<NodeId, bool> select_node(JobIndex j, const SliceReq& sl) const;

  // ------------------------------------------------------------------------------------------
  // Statement operations (applied to the session at once; undone on discard).

  void apply_place(Op& op, int sign);

  void apply_evict(const Op& op, int sign);

  void account(std::uint32_t qi, const Res& t, int sign);

  void undo(std::vector<Op>& ops);

  void commit(Session& s, std::vector<Op>& ops, std::string_view start_reason);

  bool place_member(JobIndex j, std::vector<Op>& ops);
  void undo_tentative(const Op& op);

  // ------------------------------------------------------------------------------------------
  // Actions.

  // A heap whose front is the first by cmp (cmp(a, b) < 0: a before b).
  template <typename Cmp>
  static void heap_make(std::vector<std::uint32_t>& h, Cmp cmp) {
    std::make_heap(h.begin(), h.end(), [&](std::uint32_t a, std::uint32_t b) { return cmp(b, a) < 0; });
  }
  template <typename Cmp>
  static void heap_push(std::vector<std::uint32_t>& h, std::uint32_t v, Cmp cmp) {
    h.push_back(v);
    std::push_heap(h.begin(), h.end(), [&](std::uint32_t a, std::uint32_t b) { return cmp(b, a) < 0; });
  }
  template <typename Cmp>
  static std::uint32_t heap_pop(std::vector<std::uint32_t>& h, Cmp cmp) {
    std::pop_heap(h.begin(), h.end(), [&](std::uint32_t a, std::uint32_t b) { return cmp(b, a) < 0; });
    const std::uint32_t v = h.back();
    h.pop_back();
    return v;
  }

  void enqueue(Session& s);
  void inqueue_without_enqueue();
  std::vector<std::uint32_t> pending_groups() const;

  void enqueue_queue(Session& s, std::uint32_t q);

  std::uint32_t enqueue_verdict(const Group& g, std::uint32_t q) const;

  std::string enqueue_reason_text(std::uint32_t verdict, std::uint32_t q) const;

  void reset_cursors();
  void skip_placed(Group& g) const {
    while (g.cursor < g.pending.size() && mark(g.pending[g.cursor]) != Mark::None) ++g.cursor;
  }

  // The tasks of `g` from its cursor, in task order, until the group is ready (elastic groups are
  // then pushed back), or a rigid group's first task that fits nowhere.
  struct TaskRun {
    bool skipped = false, fit_failed = false, push_back = false;
    std::uint32_t blocker = kNoQueue;
  };
  TaskRun run_tasks(Group& g, std::uint32_t q, std::vector<Op>& ops);

  // ------------------------------------------------------------------------------------------
  // network-topology-aware (plugins/network-topology-aware, actions/allocate allocateForJob).

  const models::Topology* cluster_topology() const { return view_->cluster().spec().topology.get(); }

  NetworkTopologyMode topology_mode(const Group& g) const {
    if (!nta_ || cfg_.network_topology == NetworkTopologyMode::Off || cluster_topology() == nullptr)
      return NetworkTopologyMode::Off;
    const auto& kinds = cfg_.network_topology_kinds;
    if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), (*jobs_)[g.uid].kind) == kinds.end())
      return NetworkTopologyMode::Off;
    return cfg_.network_topology;
  }

  void running_nodes(const Group& g, std::vector<NodeId>& out) const;

  TaskRun run_hard(Group& g, std::uint32_t q, std::vector<Op>& ops, models::SwitchId& chosen);

  double hypernode_binpack(std::span<const NodeId> under, const Res& need) const;

  void soft_anchor(std::uint32_t gi, const std::vector<Op>& ops);

  void soft_scores(JobIndex j, const SliceReq& sl, int gradient) const;

  void allocate(Session& s);

  void backfill(Session& s);

  std::vector<JobIndex> candidates(NodeId n, JobIndex j, bool reclaim) const;

  Res on_node(JobIndex v, NodeId n) const;

  void evict(JobIndex v, JobIndex by, const std::string& reason, std::vector<Op>& ops);

  std::string reason(bool reclaim, JobIndex j, const std::vector<JobIndex>& victims, const std::string& rule) const;

  bool evict_for_slice(JobIndex j, const SliceReq& sl, bool reclaim, std::vector<Op>& ops, Op& place);

  bool evict_for_member(JobIndex j, bool reclaim, std::vector<Op>& ops);

  void preempt_action(Session& s);

  void reclaim_action(Session& s);

  Config cfg_;
  bool gang_ = false, proportion_ = false, overcommit_ = false, proportion_enqueue_ = false;
  bool binpack_ = false, nodeorder_ = false, task_priority_ = false;
  // network-topology-aware: the plugin is listed; a hard-mode dry run's nodes (in_domain_), and
  // a soft-mode member's anchor (the nodes its PodGroup holds) while one of them is placed.
  bool nta_ = false, domain_on_ = false, soft_on_ = false;
  std::vector<char> in_domain_;
  std::vector<NodeId> anchor_;
  mutable std::vector<double> nta_score_;
  bool capacity_ = false, capacity_enqueue_ = false, hierarchy_ = false;
  // The sla plugin (plugins/sla/sla.go) with a waiting time: sla_; its enqueue permit can pass a
  // refusal (overcommit, proportion or capacity listed in a later tier than sla's: sla_enqueue_);
  // its pipelined permit counts (a tier before gang's, or no gang: sla_pipelined_). The tiers of
  // the plugins whose JobEnqueueable refuses (-1: not listed with enableJobEnqueued).
  bool sla_ = false, sla_enqueue_ = false, sla_pipelined_ = false;
  bool sla_timed_ = false;  // either permit: the waiting times' ends are followed (sla_heap_)
  int sla_enqueue_tier_ = -1, overcommit_tier_ = -1, proportion_tier_ = -1, capacity_tier_ = -1;
  // Whether a refusal by a plugin of `tier` stands for g: sla's permit, in an earlier tier, passes it.
  bool refuses(const Group& g, int tier) const { return !(sla_enqueue_ && g.sla_due && tier > sla_enqueue_tier_); }
  // The groups whose waiting time ends, by that time (a min-heap): each session marks those due.
  std::vector<std::pair<Tick, std::uint32_t>> sla_heap_;
  void sla_mark_due(Tick now);
  bool enqueue_listed_ = true;   // the actions list has enqueue (else allocate moves Pending groups on)
  bool any_undeclared_ = false;  // a job names a queue the declared ones do not include
  bool admission_due_ = false;   // a job arrived or was requeued since reject_undeclared last ran
  bool hdrf_ = false;
  std::vector<QueueOrderFn> queue_order_;
  // Hierarchical DRF: each queue's path and weights, and the session's tree.
  std::vector<std::vector<std::string>> qpath_;
  std::vector<std::vector<double>> qweights_;
  mutable std::vector<HNode> hnodes_;
  mutable bool hdirty_ = true;
  std::uint32_t root_ = kNoQueue;
  std::vector<JobOrderFn> job_order_;
  std::array<std::vector<std::vector<std::pair<VictimFn, std::string>>>, 2> victim_tiers_;
  const std::vector<Job>* jobs_ = nullptr;
  const ClusterView* view_ = nullptr;
  std::array<bool, 3> modelled_{true, false, false};
  std::vector<Member> members_;
  std::vector<SliceReq> slices_;         // every member's slices, member by member
  std::vector<JobIndex> group_members_;  // every group's tasks, group by group
  std::span<const JobIndex> members(const Group& g) const {
    return {group_members_.data() + g.member0, g.member_count};
  }
  std::span<const SliceReq> slices(JobIndex j) const {
    return {slices_.data() + members_[j].slice0, members_[j].slice_count};
  }
  std::vector<Group> groups_;
  std::vector<QueueS> queues_;
  std::vector<std::uint32_t> queue_of_;  // a workload queue's index in queues_ (kUnknownName: "default")
  // The groups with a member submitted and not ended, in index order.
  std::vector<std::uint32_t> active_;
  const std::vector<std::uint32_t>& active() const { return active_; }
  // Groups to refresh at the next session (during a session: the ones it touched so far).
  std::vector<std::uint32_t> dirty_;
  policies::IndexSet live_, awake_, be_live_;
  // Allocate's parks (slots; the free ones) and, per queue and dimension, the slots parked with
  // that witness by least request: a rise of the queue's headroom reaches the least first. With a
  // large stranded backlog (a global sla waiting time lets every job past enqueue), trying each
  // refused group in every session was most of a run (LANL's log, bench/RESULTS.md).
  std::vector<Park> parks_;
  std::vector<std::uint32_t> free_parks_;
  std::vector<std::array<std::set<std::pair<std::int64_t, std::uint32_t>>, kDims>> by_least_;
  std::vector<std::uint32_t> offers_;  // this session's parks a task of which might pass, by index
  // The group leaves its park and, while live, joins allocate's walk again.
  void unpark(Group& g) {
    if (g.park == kNoPark) return;
    const std::uint32_t slot = g.park;
    g.park = kNoPark;
    const Park& p = parks_[slot];
    by_least_[p.queue][static_cast<std::size_t>(p.d)].erase({p.least[static_cast<std::size_t>(p.d)], slot});
    free_parks_.push_back(slot);
    if (live_.contains(p.gi)) awake_.insert(p.gi);
  }
  // Whether proportion refuses each task of a park in dimension d at its queue's figures now (the
  // test of allocatable), and the first such dimension (-1: none).
  bool park_refuses(const Park& p, int d) const {
    return (p.zero >> d & 1) == 0 && over_deserved(queues_[p.queue], d, p.least[static_cast<std::size_t>(d)]);
  }
  int park_witness(const Park& p) const {
    for (int d = 0; d < kDims; ++d)
      if (park_refuses(p, d)) return d;
    return -1;
  }
  // Parks a group all of whose tasks proportion refused, when one dimension refuses them all.
  void park(Group& g);
  // The parks a task of which might pass at the queue's figures now, into offers_.
  void offer_parks();
  Res base_inqueue_total_{};
  // The PodGroups waiting for enqueue, per queue; the JobOrder functions that make their keys, and
  // the cluster total the keys were made with (drf's share).
  std::vector<PendList> pend_;
  std::vector<JobOrderFn> key_fns_;
  std::uint64_t pend_seq_ = 0;
  Res keys_total_{};
  std::set<JobIndex> evicting_;
  std::vector<Res> idle_, rel_, pipe_, cap_;
  // Node bookkeeping kept between sessions: whether each node was up when the session opened (and
  // the count of up/down changes seen then), the nodes to read again, the idle GPUs of the nodes
  // that are up as an index, the used resources of the nodes that are up, and whether some node
  // may have releasing or pipelined resources in this session.
  std::vector<char> up_, node_is_dirty_;
  std::vector<NodeId> node_dirty_;
  std::uint64_t up_changes_seen_ = UINT64_MAX;
  MaxTree free_tree_;
  // With scores that differ per node: the nodes by class (NodeClass), each node's class and pool.
  static constexpr std::uint32_t kNoClass = UINT32_MAX;
  bool classes_on_ = false;
  std::vector<NodeClass> node_classes_;
  std::unordered_map<NodeClassKey, std::uint32_t, NodeClassHash> class_of_;
  std::vector<std::uint32_t> free_classes_, node_class_;
  std::vector<models::PoolId> node_pool_;
  PoolEligibility pool_ok_;                 // pool_ok's answers
  std::vector<std::uint32_t> commit_slot_;  // commit: a node's slice in the placement, + 1
  std::size_t live_classes_ = 0;
  mutable std::vector<NodeId> class_firsts_;
  Res used_{};
  bool future_on_ = false;
  Res total_{}, total_guarantee_{}, inqueue_total_{};
  std::vector<Mark> marks_;  // by job; reset at the end of each session
  std::vector<JobIndex> marked_;
  std::uint64_t epoch_ = 0, fit_key_ = 0;
  std::int64_t up_nodes_ = 0;
  JobIndex submitted_upto_ = 0;
  Tick last_session_ = -1;
  bool changed_ = false;
};

}  // namespace detail

}  // namespace headroom::policies::volcano
