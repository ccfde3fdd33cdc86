#include "policies/volcano/volcano.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "models/topology.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/kubernetes/kubernetes.hpp"

namespace headroom::policies::volcano {

using models::Job;
using models::JobState;
using models::NodeId;

namespace {

using Res = Resources;
using FRes = std::array<double, 3>;
constexpr int kDims = 3;
constexpr double kEps = 1e-9;
constexpr NodeId kNoNode = UINT32_MAX;
constexpr const char* kDimName[kDims] = {"nvidia.com/gpu", "cpu", "memory"};

Res add(Res a, const Res& b) {
  for (int d = 0; d < kDims; ++d) a[d] += b[d];
  return a;
}
Res sub(Res a, const Res& b) {
  for (int d = 0; d < kDims; ++d) a[d] -= b[d];
  return a;
}
bool is_zero(const Res& a) { return a[0] == 0 && a[1] == 0 && a[2] == 0; }

enum class Phase : std::uint8_t { Pending, Inqueue, Running };
enum class JobOrderFn : std::uint8_t { Priority, Gang, Drf };
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

struct Member {
  std::uint32_t group = 0;
  std::vector<SliceReq> slices;
  Res total{};
  bool best_effort = false;
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

bool entry_less(const PendEntry& a, const PendEntry& b) {
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
constexpr std::uint32_t kEnqueueOk = 0, kEnqueueOvercommit = 1, kEnqueueClosed = 4, kEnqueueCapability = 5,
                        kEnqueueClosedNoMin = 6, kEnqueueCapacity = 8, kEnqueueUnknown = UINT32_MAX;

struct Group {
  std::vector<JobIndex> members;  // task order is computed per use
  std::int32_t min = 1;
  Res min_res{};
  bool has_min_res = false;
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
  bool active = false, dirty = false;
  // In its queue's PendList (as `entry`), and the reason enqueue last gave its pending tasks
  // (kEnqueueUnknown: none since the last refresh).
  bool in_pend = false;
  PendEntry entry{};
  std::uint32_t enqueue_reason = kEnqueueUnknown;
};

constexpr std::uint32_t kNoQueue = UINT32_MAX;

struct QueueS {
  std::string name;
  QueueConf conf;
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
  explicit VolcanoPolicy(Config cfg) : cfg_(std::move(cfg)) {
    if (cfg_.tiers.empty()) cfg_.tiers = default_tiers();
    for (const auto& tier : cfg_.tiers)
      for (const auto& p : tier) {
        if (p.name == "gang") gang_ = true;
        if (p.name == "proportion") proportion_ = true;
        if (p.name == "overcommit" && p.job_enqueued) overcommit_ = true;
        if (p.name == "proportion" && p.job_enqueued) proportion_enqueue_ = true;
        if (p.name == "capacity") capacity_ = true;
        if (p.name == "capacity" && p.job_enqueued) capacity_enqueue_ = true;
        if (p.name == "capacity" && p.hierarchy) hierarchy_ = true;
        if (p.name == "drf" && p.hierarchy) hdrf_ = true;
        if (p.queue_order && p.name == "drf" && p.hierarchy) queue_order_.push_back(QueueOrderFn::Hdrf);
        if (p.queue_order && p.name == "capacity") queue_order_.push_back(QueueOrderFn::Capacity);
        if (p.queue_order && p.name == "proportion") queue_order_.push_back(QueueOrderFn::Proportion);
        if (p.name == "binpack" && p.node_order) binpack_ = true;
        if (p.name == "nodeorder" && p.node_order) nodeorder_ = true;
        if (p.name == "priority" && p.task_order) task_priority_ = true;
        if (p.job_order && p.name == "priority") job_order_.push_back(JobOrderFn::Priority);
        if (p.job_order && p.name == "gang") job_order_.push_back(JobOrderFn::Gang);
        if (p.job_order && p.name == "drf") job_order_.push_back(JobOrderFn::Drf);
        if (p.name == "network-topology-aware") nta_ = true;
      }
    // A plugin listed again never decides a JobOrder comparison the first one left tied.
    for (const JobOrderFn f : job_order_)
      if (std::find(key_fns_.begin(), key_fns_.end(), f) == key_fns_.end()) key_fns_.push_back(f);
    // Session.Preemptable / Reclaimable: the plugins of each tier that register the function.
    for (int reclaim = 0; reclaim < 2; ++reclaim) {
      for (const auto& tier : cfg_.tiers) {
        std::vector<std::pair<VictimFn, std::string>> fns;
        for (const auto& p : tier) {
          if (!(reclaim ? p.reclaimable : p.preemptable)) continue;
          if (p.name == "priority" && !reclaim) fns.emplace_back(VictimFn::Priority, p.name);
          if (p.name == "gang") fns.emplace_back(VictimFn::Gang, p.name);
          if (p.name == "conformance") fns.emplace_back(VictimFn::Conformance, p.name);
          if (p.name == "drf" && !reclaim) fns.emplace_back(VictimFn::Drf, p.name);
          if (p.name == "proportion" && reclaim) fns.emplace_back(VictimFn::Proportion, p.name);
          if (p.name == "capacity" && reclaim) fns.emplace_back(VictimFn::Capacity, p.name);
          if (p.name == "drf" && reclaim && p.hierarchy) fns.emplace_back(VictimFn::Hdrf, p.name);
        }
        victim_tiers_[reclaim].push_back(std::move(fns));
      }
    }
  }

  std::string_view name() const override { return "volcano"; }

  // Volcano's admission webhook refuses the vcjob when it is created.
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {false, "permission denied: admission webhook \"validatejob.volcano.sh\" denied the request: user " +
                       name_of(w.tenants, job.tenant) + " may not submit to queue " + name_of(w.queues, job.queue)};
  }

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    Group& g = groups_[members_[j].group];
    submitted_upto_ = std::max(submitted_upto_, j + 1);
    ++g.submitted;
    if (g.submitted == 1) g.created = view.workload().jobs[j].submit;
    const std::uint32_t gi = members_[j].group;
    auto at = std::lower_bound(active_.begin(), active_.end(), gi);
    if (at == active_.end() || *at != gi) {
      active_.insert(at, gi);
      g.active = true;
      ++queues_[g.queue].active_groups;
    }
    touch(gi);
  }

  void on_end(const ClusterView& view, JobIndex j) override {
    ensure(view);
    const std::uint32_t gi = members_[j].group;
    Group& g = groups_[gi];
    ++g.ended;
    if (view.state(j) == JobState::Completed) ++g.succeeded;
    if (g.ended == static_cast<int>(g.members.size())) {
      auto at = std::lower_bound(active_.begin(), active_.end(), gi);
      if (at != active_.end() && *at == gi) {
        active_.erase(at);
        g.active = false;
        --queues_[g.queue].active_groups;
      }
    }
    touch(gi);
    ++epoch_;
  }

  void on_requeue(const ClusterView& view, JobIndex j) override {
    ensure(view);
    touch(members_[j].group);
  }

  void on_release(const ClusterView& view, JobIndex j) override {
    ensure(view);
    touch(members_[j].group);
    for (const auto& sl : view.placement(j)) node_changed(sl.node);
    ++epoch_;
  }

  void schedule(Session& s) override {
    ensure(s);
    if (hierarchy_) reject_outside_leaves(s);
    const Tick now = s.now();
    const Tick period = cfg_.schedule_period;
    const Tick tick = now % period == 0 ? now : (now / period + 1) * period;
    if (tick != now || (last_session_ >= 0 && now < last_session_ + period)) {
      s.wake_at(std::max(tick, last_session_ < 0 ? tick : last_session_ + period));
      return;
    }
    last_session_ = now;
    changed_ = false;
    open_session(s);
    for (Action a : cfg_.actions) {
      switch (a) {
        case Action::Enqueue: enqueue(s); break;
        case Action::Allocate: allocate(s); break;
        case Action::Backfill: backfill(s); break;
        case Action::Preempt: preempt_action(s); break;
        case Action::Reclaim: reclaim_action(s); break;
      }
    }
    close_session();
    if (changed_) s.wake_at(now + period);
  }

 private:
  // The Job admission webhook (webhooks/admission/jobs/validate/admit_job.go) refuses a job for
  // the root queue or for a queue with child queues; the job is rejected when it arrives.
  void reject_outside_leaves(Session& s) {
    std::vector<std::pair<JobIndex, std::uint32_t>> out;
    for (std::uint32_t gi : active()) {
      const Group& g = groups_[gi];
      if (queues_[g.queue].children == 0 && g.queue != root_) continue;
      for (JobIndex j : g.members)
        if (j < submitted_upto_ && s.state(j) == JobState::Pending && !s.retrying(j)) out.emplace_back(j, g.queue);
    }
    for (const auto& [j, q] : out) {
      const QueueS& qs = queues_[q];
      s.reject(j, q == root_ ? std::string("volcano admission: can not submit job to root queue")
                             : "volcano admission: can only submit job to leaf queue, queue `" + qs.name + "` has " +
                                   std::to_string(qs.children) + " child queues");
    }
  }

  // ------------------------------------------------------------------------------------------
  // Set-up.

  void ensure(const ClusterView& view) {
    if (jobs_ != nullptr) return;
    const auto& w = view.workload();
    jobs_ = &w.jobs;
    const auto& nodes = view.cluster().nodes();
    for (const auto& n : nodes) {
      modelled_[1] = modelled_[1] || n.cpus > 0;
      modelled_[2] = modelled_[2] || n.memory_mib > 0;
    }
    idle_.resize(nodes.size());
    rel_.resize(nodes.size());
    pipe_.resize(nodes.size());
    cap_.resize(nodes.size());
    up_.assign(nodes.size(), 0);
    node_is_dirty_.assign(nodes.size(), 0);
    free_tree_.resize(nodes.size());
    classes_on_ = !flat_scores();
    node_class_.assign(nodes.size(), kNoClass);
    node_pool_.resize(nodes.size());
    for (NodeId n = 0; n < nodes.size(); ++n) node_pool_[n] = nodes[n].pool;
    // Queues: the workload's, in first-seen order.
    for (std::uint32_t q = 0; q < w.queues.size(); ++q) {
      QueueS qs;
      qs.name = w.queues.name(q);
      if (auto it = cfg_.queues.find(qs.name); it != cfg_.queues.end()) qs.conf = it->second;
      queues_.push_back(qs);
    }
    if (queues_.empty()) queues_.push_back(QueueS{"default", QueueConf{}});
    if (hierarchy_) build_tree();
    for (const QueueS& qs : queues_) {
      std::vector<std::string> path;
      std::vector<double> weights;
      for (auto [text, out] : {std::pair{&qs.conf.hierarchy, 0}, std::pair{&qs.conf.hierarchy_weights, 1}}) {
        std::size_t at = 0;
        while (true) {
          const auto slash = text->find('/', at);
          const std::string part = text->substr(at, slash == std::string::npos ? std::string::npos : slash - at);
          if (out == 0) {
            path.push_back(part);
          } else {
            double w = 0;
            std::from_chars(part.data(), part.data() + part.size(), w);
            weights.push_back(w);
          }
          if (slash == std::string::npos) break;
          at = slash + 1;
        }
      }
      qpath_.push_back(std::move(path));
      qweights_.push_back(std::move(weights));
    }
    for (const auto& [name, conf] : cfg_.queues)
      for (int d = 0; d < kDims; ++d) total_guarantee_[d] += conf.guarantee[d];
    pend_.resize(queues_.size());
    // Groups.
    members_.resize(w.jobs.size());
    marks_.assign(w.jobs.size(), Mark::None);
    std::vector<std::uint32_t> named(w.groups.size(), UINT32_MAX);
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      const Job& job = w.jobs[j];
      std::uint32_t gi = 0;
      if (job.group != models::kNone && job.group < named.size()) {
        if (named[job.group] == UINT32_MAX) {
          named[job.group] = static_cast<std::uint32_t>(groups_.size());
          groups_.emplace_back();
        }
        gi = named[job.group];
      } else {
        gi = static_cast<std::uint32_t>(groups_.size());
        groups_.emplace_back();
      }
      Group& g = groups_[gi];
      if (g.members.empty()) {
        g.queue = job.queue < queues_.size() ? job.queue : 0;
        g.priority = job.priority;
        g.uid = j;
        g.created = job.submit;
        g.min = job.gang_min;
      }
      g.members.push_back(j);
      members_[j].group = gi;
      split(view, j);
    }
    for (Group& g : groups_) {
      const auto n = static_cast<std::int32_t>(g.members.size());
      if (g.min <= 0 || g.min > n) g.min = n;
      std::vector<JobIndex> order = g.members;
      std::sort(order.begin(), order.end(), [&](JobIndex a, JobIndex b) { return task_cmp(a, b) < 0; });
      g.members = order;
      g.has_min_res = cfg_.min_resources;
      for (std::int32_t i = 0; i < g.min; ++i) g.min_res = add(g.min_res, members_[order[i]].total);
    }
  }

  // capacity with enableHierarchy (plugins/capacity/capacity.go buildHierarchicalQueueAttrs,
  // updateAncestors): every declared queue joins the workload's; a queue without a parent hangs
  // under the root queue "root".
  void build_tree() {
    auto index = [&](const std::string& name) {
      for (std::uint32_t q = 0; q < queues_.size(); ++q)
        if (queues_[q].name == name) return q;
      QueueS qs;
      qs.name = name;
      if (auto it = cfg_.queues.find(name); it != cfg_.queues.end()) qs.conf = it->second;
      queues_.push_back(qs);
      return static_cast<std::uint32_t>(queues_.size() - 1);
    };
    for (const auto& [name, conf] : cfg_.queues) index(name);
    root_ = index("root");
    for (std::uint32_t q = 0; q < queues_.size(); ++q)
      if (q != root_) queues_[q].parent = index(queues_[q].conf.parent.empty() ? "root" : queues_[q].conf.parent);
    for (std::uint32_t q = 0; q < queues_.size(); ++q) {
      std::vector<std::uint32_t> up;
      for (std::uint32_t a = queues_[q].parent; a != kNoQueue; a = queues_[a].parent) {
        HEADROOM_ASSERT(up.size() < queues_.size(), "volcano: cycle in the queue hierarchy");
        up.push_back(a);
      }
      queues_[q].ancestors.assign(up.rbegin(), up.rend());
      if (queues_[q].parent != kNoQueue) ++queues_[queues_[q].parent].children;
    }
  }

  // A job's tasks: one per node it needs.
  void split(const ClusterView& view, JobIndex j) {
    const Job& job = (*jobs_)[j];
    Member& m = members_[j];
    std::int32_t largest = 0;
    const auto& cl = view.cluster();
    for (models::PoolId p = 0; p < cl.pool_count(); ++p)
      if (pool_eligible(cl, p, job, view.workload())) largest = std::max(largest, cl.spec().pools[p].gpus_per_node);
    const std::vector<std::int32_t> gpus = models::pod_gpus(job, largest);
    const auto n = static_cast<std::int32_t>(gpus.size());
    for (std::int32_t i = 0; i < n; ++i) {
      SliceReq s;
      s.gpus = gpus[i];
      s.cpus = job.cpus / n + (i < job.cpus % n);
      s.memory_mib = job.memory_mib / n + (i < job.memory_mib % n);
      s.r = {s.gpus, modelled_[1] ? std::int64_t{s.cpus} * 1000 : 0, modelled_[2] ? s.memory_mib : 0};
      m.total = add(m.total, s.r);
      m.slices.push_back(s);
    }
    m.best_effort = is_zero(m.total);
  }

  // ------------------------------------------------------------------------------------------
  // Session snapshot.

  void open_session(Session& s) {
    view_ = &s;
    const auto& nodes = s.cluster().nodes();
    if (s.cluster().up_changes() != up_changes_seen_) {
      // A node went down or came back: everything is read again.
      up_changes_seen_ = s.cluster().up_changes();
      total_ = used_ = {};
      up_nodes_ = 0;
      for (NodeId n = 0; n < nodes.size(); ++n) {
        const auto& node = nodes[n];
        cap_[n] = {node.gpus, std::int64_t{node.cpus} * 1000, node.memory_mib};
        idle_[n] = {node.free_gpus, std::int64_t{node.free_cpus} * 1000, node.free_memory_mib};
        rel_[n] = {};
        pipe_[n] = {};
        up_[n] = node.up;
        free_tree_.set(n, node.up ? idle_[n][0] : -1);
        reclass(n);
        if (!node.up) continue;
        ++up_nodes_;
        total_ = add(total_, cap_[n]);
        used_ = add(used_, sub(cap_[n], idle_[n]));
      }
      for (NodeId n : node_dirty_) node_is_dirty_[n] = 0;
    } else {
      // Only the nodes where something started or ended since the last session changed.
      for (NodeId n : node_dirty_) {
        node_is_dirty_[n] = 0;
        const auto& node = nodes[n];
        set_idle(n, {node.free_gpus, std::int64_t{node.free_cpus} * 1000, node.free_memory_mib});
      }
      if (future_on_)
        for (NodeId n = 0; n < nodes.size(); ++n) rel_[n] = pipe_[n] = {};
    }
    node_dirty_.clear();
    future_on_ = !evicting_.empty();
    // Releasing: tasks evicted and still inside their grace period.
    for (auto it = evicting_.begin(); it != evicting_.end();) {
      if (s.state(*it) != JobState::Running || !s.terminating(*it)) {
        it = evicting_.erase(it);
        continue;
      }
      for (const auto& sl : s.placement(*it))
        rel_[sl.node] = add(rel_[sl.node], {sl.gpus, modelled_[1] ? std::int64_t{sl.cpus} * 1000 : 0,
                                            modelled_[2] ? sl.memory_mib : 0});
      ++it;
    }
    fit_key_ = epoch_ * 1'000'003 + up_nodes_;
    // Only the groups something happened to since the last session are looked at again: the
    // others would come out the same (their members' states are unchanged).
    for (std::uint32_t gi : dirty_) refresh(s, gi);
    dirty_.clear();
    for (auto& q : queues_) {
      q.allocated = q.base_allocated;
      q.request = q.base_request;
      q.inqueue = q.base_inqueue;
      q.elastic = q.base_elastic;
      q.has_jobs = q.active_groups > 0;
    }
    inqueue_total_ = base_inqueue_total_;
    if (capacity_)
      capacity_attrs();
    else
      compute_deserved();
    if (hdrf_) hdrf_build();
  }

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

  // A group's session state from the engine's view (Volcano's snapshot of one PodGroup), and its
  // part of the queue sums.
  void refresh(const ClusterView& s, std::uint32_t gi) {
    Group& g = groups_[gi];
    g.dirty = false;
    QueueS& q = queues_[g.queue];
    q.base_request = sub(q.base_request, g.own_request);
    q.base_allocated = sub(q.base_allocated, g.own_allocated);
    q.base_inqueue = sub(q.base_inqueue, g.own_inqueue);
    q.base_elastic = sub(q.base_elastic, g.own_elastic);
    base_inqueue_total_ = sub(base_inqueue_total_, g.own_inqueue);
    g.own_request = g.own_allocated = g.own_inqueue = g.own_elastic = {};
    g.cursor = 0;
    g.enqueue_reason = kEnqueueUnknown;
    set_live(gi, false);
    if (g.in_pend) pend_erase(gi);
    if (!g.active) return;
    g.ready = g.succeeded;
    g.waiting = g.pending_be = 0;
    g.alloc = {};
    g.pending.clear();
    int running = 0;
    for (JobIndex j : g.members) {
      const JobState st = s.state(j);
      if (st == JobState::Pending) {
        // Not yet submitted, or killed by a failure and waiting for its retry back-off (its pod
        // is recreated only then).
        if (j >= submitted_upto_ || s.retrying(j)) continue;
        g.own_request = add(g.own_request, members_[j].total);
        if (members_[j].best_effort)
          ++g.pending_be;
        else
          g.pending.push_back(j);
      } else if (st == JobState::Running) {
        g.own_request = add(g.own_request, members_[j].total);
        if (s.terminating(j)) continue;
        ++running;
        g.alloc = add(g.alloc, members_[j].total);
      }
    }
    g.ready += running;
    g.own_allocated = g.alloc;
    // framework/job_updater.go: enough allocated -> Running; a Running group that fell below
    // minMember (evictions) goes back to Pending; Inqueue stays Inqueue.
    if (running + g.succeeded >= g.min && g.phase != Phase::Pending) {
      g.phase = Phase::Running;
    } else if (g.phase == Phase::Running) {
      g.phase = Phase::Pending;
    }
    if (g.phase == Phase::Inqueue && g.has_min_res) g.own_inqueue = g.min_res;
    if (g.phase == Phase::Running && g.has_min_res)
      for (int d = 0; d < kDims; ++d) g.own_elastic[d] = std::max<std::int64_t>(0, g.alloc[d] - g.min_res[d]);
    q.base_request = add(q.base_request, g.own_request);
    q.base_allocated = add(q.base_allocated, g.own_allocated);
    q.base_inqueue = add(q.base_inqueue, g.own_inqueue);
    q.base_elastic = add(q.base_elastic, g.own_elastic);
    base_inqueue_total_ = add(base_inqueue_total_, g.own_inqueue);
    set_live(gi, g.phase != Phase::Pending && (!g.pending.empty() || g.pending_be > 0));
    if (g.phase == Phase::Pending && (!g.pending.empty() || g.pending_be > 0)) pend_insert(gi);
  }

  // ------------------------------------------------------------------------------------------
  // The PodGroups waiting for enqueue, per queue in JobOrder (PendList).

  static constexpr std::size_t kBlock = 64;

  PendEntry pend_key(std::uint32_t gi) const {
    const Group& g = groups_[gi];
    PendEntry e;
    for (std::size_t i = 0; i < key_fns_.size(); ++i) {
      switch (key_fns_[i]) {
        case JobOrderFn::Priority: e.key[i] = -static_cast<double>(g.priority); break;
        case JobOrderFn::Gang: e.key[i] = job_ready(g) ? 1 : 0; break;
        case JobOrderFn::Drf: e.key[i] = job_share(g); break;
      }
    }
    e.created = g.created;
    e.uid = g.uid;
    e.gi = gi;
    return e;
  }

  void block_update(PendBlock& b) const {
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    b.overcommit = b.capability = b.irregular = 0;
    b.overcommit_min = b.capability_min = kMax;
    b.capability_max = {};
    b.max_seq = 0;
    for (const PendEntry& e : b.e) block_add(b, e);
  }
  void block_add(PendBlock& b, const PendEntry& e) const {
    const Group& g = groups_[e.gi];
    b.max_seq = std::max(b.max_seq, e.seq);
    if (!g.has_min_res || g.min_res[0] <= 0) {
      ++b.irregular;
    } else if (g.enqueue_reason == kEnqueueOvercommit) {
      ++b.overcommit;
      b.overcommit_min = std::min(b.overcommit_min, g.min_res[0]);
    } else if (g.enqueue_reason == kEnqueueCapability) {
      ++b.capability;
      b.capability_min = std::min(b.capability_min, g.min_res[0]);
      for (int d = 0; d < kDims; ++d) b.capability_max[d] = std::max(b.capability_max[d], g.min_res[d]);
    } else {
      ++b.irregular;
    }
  }

  // Every entry of the block would be refused for the reason enqueue last gave it: those refused
  // by overcommit for GPUs are still (their smallest GPU request is), and those refused by
  // proportion's capability still pass overcommit (their largest requests do) and are still
  // refused for GPUs (their smallest GPU request is). The checks are enqueue_verdict's.
  bool block_refused_again(const PendBlock& b, std::uint32_t q) const {
    if (b.irregular > 0) return false;
    if (b.overcommit > 0) {
      if (!overcommit_) return false;
      const double idle = static_cast<double>(total_[0]) * cfg_.overcommit_factor - static_cast<double>(used_[0]);
      if (!(static_cast<double>(inqueue_total_[0] + b.overcommit_min) > idle + kEps)) return false;
    }
    if (b.capability > 0) {
      const QueueS& qs = queues_[q];
      if (!proportion_enqueue_ || qs.conf.state != QueueState::Open) return false;
      if (overcommit_) {
        for (int d = 0; d < kDims; ++d) {
          if (b.capability_max[d] <= 0) continue;
          const double idle = static_cast<double>(total_[d]) * cfg_.overcommit_factor - static_cast<double>(used_[d]);
          if (static_cast<double>(inqueue_total_[d] + b.capability_max[d]) > idle + kEps) return false;
        }
      }
      const double r = static_cast<double>(b.capability_min + qs.allocated[0] + qs.inqueue[0] - qs.elastic[0]);
      if (!(r > qs.real_cap[0] + kEps)) return false;
    }
    return true;
  }

  // The first block whose last entry is not before `e` (the last block when none).
  static std::size_t pend_block(const PendList& l, const PendEntry& e) {
    std::size_t lo = 0, hi = l.blocks.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (entry_less(l.blocks[mid].e.back(), e))
        lo = mid + 1;
      else
        hi = mid;
    }
    return std::min(lo, l.blocks.size() - 1);
  }

  void pend_insert(std::uint32_t gi) {
    Group& g = groups_[gi];
    PendList& l = pend_[g.queue];
    PendEntry e = pend_key(gi);
    e.seq = ++pend_seq_;
    l.max_seq = e.seq;
    g.entry = e;
    g.in_pend = true;
    ++l.size;
    if (l.blocks.empty()) {
      l.blocks.emplace_back();
      block_update(l.blocks[0]);
    }
    const std::size_t bi = l.blocks[0].e.empty() ? 0 : pend_block(l, e);
    PendBlock& b = l.blocks[bi];
    b.e.insert(std::upper_bound(b.e.begin(), b.e.end(), e, entry_less), e);
    block_add(b, e);
    if (b.e.size() > 2 * kBlock) {
      PendBlock tail;
      tail.e.assign(b.e.begin() + static_cast<std::ptrdiff_t>(kBlock), b.e.end());
      b.e.resize(kBlock);
      block_update(b);
      block_update(tail);
      l.blocks.insert(l.blocks.begin() + static_cast<std::ptrdiff_t>(bi) + 1, std::move(tail));
    }
  }

  // The enqueue refusal a listed group carries: the last pass over its queue's, if it saw the
  // group, else its own.
  std::uint64_t enqueue_memo(const PendList& l, const PendEntry& e) const {
    return l.walked_key != UINT64_MAX && e.seq <= l.walked_seq ? l.walked_key : groups_[e.gi].enqueue_failed;
  }

  void pend_erase(std::uint32_t gi) {
    Group& g = groups_[gi];
    PendList& l = pend_[g.queue];
    g.enqueue_failed = enqueue_memo(l, g.entry);
    g.in_pend = false;
    const std::size_t bi = pend_block(l, g.entry);
    PendBlock& b = l.blocks[bi];
    auto it = std::lower_bound(b.e.begin(), b.e.end(), g.entry, entry_less);
    HEADROOM_ASSERT(it != b.e.end() && it->gi == gi, "volcano: enqueue list out of order");
    b.e.erase(it);
    --l.size;
    if (b.e.empty())
      l.blocks.erase(l.blocks.begin() + static_cast<std::ptrdiff_t>(bi));
    else
      block_update(b);
  }

  // Keys that moved (a group touched earlier in this session; the cluster's size changed under
  // drf's share): the group is listed again.
  void pend_rekey(std::uint32_t gi) {
    const PendEntry e = pend_key(gi);
    const PendEntry& old = groups_[gi].entry;
    if (e.key == old.key && e.created == old.created && e.uid == old.uid) return;
    pend_erase(gi);
    pend_insert(gi);
  }

  // Something changed the group: it is refreshed when the next session opens.
  void touch(std::uint32_t gi) {
    Group& g = groups_[gi];
    if (g.dirty) return;
    g.dirty = true;
    dirty_.push_back(gi);
  }

  // live_: the groups past enqueue with tasks to place, in index order (allocate and backfill
  // look at no others).
  void set_live(std::uint32_t gi, bool on) {
    if (on)
      live_.insert(gi);
    else
      live_.erase(gi);
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

  // proportion: water-filling of deserved by weight.
  void compute_deserved() {
    FRes remaining{};
    for (int d = 0; d < kDims; ++d) remaining[d] = static_cast<double>(total_[d]);
    std::vector<std::uint32_t> live;
    for (std::uint32_t q = 0; q < queues_.size(); ++q) {
      QueueS& qs = queues_[q];
      qs.deserved = {};
      for (int d = 0; d < kDims; ++d) {
        double cap = static_cast<double>(total_[d] - total_guarantee_[d] + qs.conf.guarantee[d]);
        if (qs.conf.capability[d] >= 0) cap = std::min(cap, static_cast<double>(qs.conf.capability[d]));
        qs.real_cap[d] = cap;
      }
      if (qs.has_jobs) live.push_back(q);
    }
    std::vector<bool> met(queues_.size(), false);
    for (int round = 0; round < 1000; ++round) {
      double tw = 0;
      for (auto q : live)
        if (!met[q]) tw += static_cast<double>(queues_[q].conf.weight);
      if (tw == 0) break;
      const FRes old_remaining = remaining;
      FRes inc{}, dec{};
      for (auto q : live) {
        if (met[q]) continue;
        QueueS& qs = queues_[q];
        const FRes old = qs.deserved;
        bool request_met = true;
        for (int d = 0; d < kDims; ++d) {
          double v = qs.deserved[d] + remaining[d] * static_cast<double>(qs.conf.weight) / tw;
          v = std::min(v, qs.real_cap[d]);
          v = std::min(v, static_cast<double>(qs.request[d]));
          v = std::max(v, static_cast<double>(qs.conf.guarantee[d]));
          qs.deserved[d] = v;
          request_met = request_met && static_cast<double>(qs.request[d]) <= v + kEps;
          if (v > old[d])
            inc[d] += v - old[d];
          else
            dec[d] += old[d] - v;
        }
        if (request_met || qs.deserved == old) met[q] = true;
      }
      bool empty = true;
      for (int d = 0; d < kDims; ++d) {
        remaining[d] = remaining[d] - inc[d] + dec[d];
        empty = empty && remaining[d] < 1e-6;
      }
      if (empty || remaining == old_remaining) break;
    }
  }

  // capacity (plugins/capacity/capacity.go buildQueueAttrs / buildHierarchicalQueueAttrs and
  // checkHierarchicalQueue). Flat: realCapability = min(capability, max(0, total - Σ guarantee) +
  // guarantee) (cpu or memory capability <= 0 is unlimited), deserved = the declared one clamped to
  // realCapability, then raised to guarantee. Hierarchical: the root's capability and
  // realCapability are unlimited and its deserved and guarantee sum its children's; a child's
  // unset capability dimension inherits its parent's, deserved is raised to guarantee (not clamped),
  // realCapability = min(capability, max(0, parent's realCapability - Σ siblings' guarantee) +
  // guarantee); allocated, inqueue and elastic add up along the ancestors.
  void capacity_attrs() {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (!hierarchy_) {
      for (QueueS& qs : queues_) {
        if (!qs.has_jobs) continue;
        const QueueConf& c = qs.conf;
        for (int d = 0; d < kDims; ++d) {
          double rc = static_cast<double>(std::max<std::int64_t>(0, total_[d] - total_guarantee_[d]) + c.guarantee[d]);
          if (c.capability[d] > 0 || (d == 0 && c.capability[d] == 0))
            rc = std::min(rc, static_cast<double>(c.capability[d]));
          qs.real_cap[d] = rc;
          double des = static_cast<double>(std::max<std::int64_t>(0, c.deserved[d]));
          if (d != 0 || c.deserved[d] >= 0) des = std::min(des, rc);
          qs.deserved[d] = std::max(des, static_cast<double>(c.guarantee[d]));
        }
        qs.gpu_deserved = c.deserved[0] >= 0 || c.guarantee[0] > 0;
        update_share(qs);
      }
      return;
    }
    for (QueueS& qs : queues_) {
      if (qs.children > 0) continue;
      for (std::uint32_t a : qs.ancestors) {
        QueueS& as = queues_[a];
        as.allocated = add(as.allocated, qs.allocated);
        as.request = add(as.request, qs.request);
        as.inqueue = add(as.inqueue, qs.inqueue);
        as.elastic = add(as.elastic, qs.elastic);
      }
    }
    // Parents before children: by depth.
    std::vector<std::uint32_t> order(queues_.size());
    for (std::uint32_t q = 0; q < order.size(); ++q) order[q] = q;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return queues_[a].ancestors.size() < queues_[b].ancestors.size();
    });
    std::vector<Res> child_guarantee(queues_.size(), Res{});
    for (const QueueS& qs : queues_)
      if (qs.parent != kNoQueue) child_guarantee[qs.parent] = add(child_guarantee[qs.parent], qs.conf.guarantee);
    QueueS& root = queues_[root_];
    root.deserved = {};
    root.gpu_deserved = false;
    for (std::uint32_t q : order) {
      QueueS& qs = queues_[q];
      const QueueConf& c = qs.conf;
      if (q == root_) {
        qs.capability = qs.real_cap = {kInf, kInf, kInf};
        continue;
      }
      const QueueS& p = queues_[qs.parent];
      for (int d = 0; d < kDims; ++d) {
        const bool set = c.capability[d] > 0 || (d == 0 && c.capability[d] == 0);
        qs.capability[d] = set ? static_cast<double>(c.capability[d]) : p.capability[d];
        qs.deserved[d] = static_cast<double>(std::max(std::max<std::int64_t>(0, c.deserved[d]), c.guarantee[d]));
        const double left = std::max(0.0, p.real_cap[d] - static_cast<double>(child_guarantee[qs.parent][d]));
        qs.real_cap[d] = std::min(left + static_cast<double>(c.guarantee[d]), qs.capability[d]);
      }
      qs.gpu_deserved = c.deserved[0] >= 0 || c.guarantee[0] > 0;
      if (qs.parent == root_) {
        for (int d = 0; d < kDims; ++d) root.deserved[d] += qs.deserved[d];
        root.gpu_deserved = root.gpu_deserved || qs.gpu_deserved;
      }
    }
    for (QueueS& qs : queues_) update_share(qs);
  }

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

  // LessEqualPartlyWithDimensionZeroFiltered(deserved, req) on allocated + req: some requested
  // dimension, not zero on both sides, has allocated + req <= deserved.
  static bool within_deserved_somewhere(const QueueS& qs, const Res& req) {
    for (int d = 0; d < kDims; ++d) {
      if (req[d] <= 0) continue;
      const double fut = static_cast<double>(qs.allocated[d] + req[d]);
      if (fut < 0.1 && qs.deserved[d] < 0.1) continue;
      if (fut < qs.deserved[d] || std::abs(fut - qs.deserved[d]) < 0.1) return true;
    }
    return false;
  }

  // The ancestor `depth` levels up (queueAncestorAtDepth), or kNoQueue.
  std::uint32_t ancestor_at(const QueueS& qs, std::int64_t depth) const {
    if (depth <= 0 || static_cast<std::int64_t>(qs.ancestors.size()) < depth) return kNoQueue;
    return qs.ancestors[qs.ancestors.size() - static_cast<std::size_t>(depth)];
  }

  // Preemptive: proportion uses Allocatable; capacity needs the queue Open, allocated + req <=
  // realCapability, and allocated + req <= deserved in some requested dimension (with
  // ancestorReclaimLevel, of the queue or of an ancestor up to that level).
  bool preemptive(std::uint32_t q, const Res& req) const {
    if (!capacity_) return allocatable(q, req);
    const QueueS& qs = queues_[q];
    if (qs.conf.state != QueueState::Open) return false;
    for (int d = 0; d < kDims; ++d)
      if (req[d] > 0 && static_cast<double>(qs.allocated[d] + req[d]) > qs.real_cap[d]) return false;
    if (within_deserved_somewhere(qs, req)) return true;
    if (!hierarchy_) return false;
    for (std::int64_t level = 1; level <= cfg_.ancestor_reclaim_level; ++level) {
      const std::uint32_t a = ancestor_at(qs, level);
      if (a == kNoQueue || a == root_) continue;
      if (within_deserved_somewhere(queues_[a], req)) return true;
    }
    return false;
  }

  // capacity JobEnqueueable (jobEnqueueable, checkJobEnqueueableHierarchically): the queue is Open
  // and minResources + allocated + inqueue - elastic <= realCapability in minResources' dimensions,
  // for the queue and every ancestor. Returns the refusing queue, or kNoQueue.
  std::uint32_t capacity_enqueue_block(std::uint32_t q, const Res& min_res) const {
    if (queues_[q].conf.state != QueueState::Open) return q;
    return leaf_up(q, [&](std::uint32_t a) {
      const QueueS& as = queues_[a];
      for (int d = 0; d < kDims; ++d)
        if (min_res[d] > 0 &&
            static_cast<double>(min_res[d] + as.allocated[d] + as.inqueue[d] - as.elastic[d]) > as.real_cap[d])
          return true;
      return false;
    });
  }

  std::string capacity_refusal(const std::string& action, std::uint32_t q, std::uint32_t by) const {
    if (queues_[q].conf.state != QueueState::Open)
      return action + ": queue " + queues_[q].name + " is not Open (capacity)";
    if (by == q) return action + ": queue " + queues_[q].name + " would exceed its capability (capacity)";
    return action + ": queue " + queues_[q].name + "'s ancestor " + queues_[by].name +
           " would exceed its capability (capacity)";
  }

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
      if (req[d] > 0 && static_cast<double>(q.allocated[d] + req[d]) > q.deserved[d] + kEps) return false;
    return true;
  }

  bool job_ready(const Group& g) const { return !gang_ || g.ready + g.pending_be >= g.min; }
  bool job_pipelined(const Group& g) const { return !gang_ || g.waiting + g.ready + g.pending_be >= g.min; }
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

  // buildHierarchy for every job of the session: the nodes of its queue's path (a new node takes
  // that queue's weight for its level, at least 1), then the job as a leaf requesting all its tasks.
  void hdrf_build() {
    hnodes_.assign(1, HNode{"root"});
    for (std::uint32_t gi : active()) {
      const Group& g = groups_[gi];
      const auto& path = qpath_[g.queue];
      std::uint32_t node = 0;
      for (std::size_t i = 1; i < path.size(); ++i) {
        std::uint32_t next = UINT32_MAX;
        for (std::uint32_t c : hnodes_[node].children)
          if (hnodes_[c].group == UINT32_MAX && hnodes_[c].name == path[i]) next = c;
        if (next == UINT32_MAX) {
          next = static_cast<std::uint32_t>(hnodes_.size());
          HNode n{path[i]};
          n.weight = std::max(1.0, i < qweights_[g.queue].size() ? qweights_[g.queue][i] : 0.0);
          hnodes_.push_back(std::move(n));
          hnodes_[node].children.push_back(next);
        }
        node = next;
      }
      HNode leaf;
      leaf.group = gi;
      for (JobIndex j : g.members)
        if (j < submitted_upto_)
          for (int d = 0; d < kDims; ++d) leaf.request[d] += static_cast<double>(members_[j].total[d]);
      hnodes_[node].children.push_back(static_cast<std::uint32_t>(hnodes_.size()));
      hnodes_.push_back(std::move(leaf));
    }
    hdirty_ = true;
  }

  double drf_share(const FRes& alloc) const {
    double share = 0;
    for (int d = 0; d < kDims; ++d)
      if (static_cast<double>(total_[d]) >= 0.1) share = std::max(share, alloc[d] / static_cast<double>(total_[d]));
    return share;
  }

  // updateHierarchicalShare over the whole tree, the jobs' allocations changed by `delta`: a job is
  // saturated when it holds all it requests of some resource, or requests a resource nobody can get
  // any more (not demanding); a node scales its unsaturated children to their least dominant share
  // and adds them up with the saturated ones, and is saturated when all its children are.
  void hdrf_compute(const std::vector<std::pair<std::uint32_t, Res>>& delta = {}) const {
    Res used{};
    for (const HNode& n : hnodes_)
      if (n.group != UINT32_MAX) used = add(used, groups_[n.group].alloc);
    for (const auto& [gi, r] : delta) used = add(used, r);
    std::array<bool, kDims> demanding{};
    for (int d = 0; d < kDims; ++d) demanding[d] = total_[d] > 0 && used[d] < total_[d];
    for (std::size_t i = hnodes_.size(); i-- > 0;) {
      HNode& n = hnodes_[i];
      if (n.group != UINT32_MAX) {
        Res a = groups_[n.group].alloc;
        for (const auto& [gi, r] : delta)
          if (gi == n.group) a = add(a, r);
        n.saturated = false;
        for (int d = 0; d < kDims; ++d) {
          n.alloc[d] = static_cast<double>(a[d]);
          if (n.alloc[d] < 0.1 || n.request[d] == 0) continue;
          if (n.alloc[d] >= n.request[d] || !demanding[d]) n.saturated = true;
        }
        n.share = drf_share(n.alloc);
        continue;
      }
      double mdr = 1;
      for (std::uint32_t c : n.children)
        if (hnodes_[c].share != 0 && !hnodes_[c].saturated) mdr = std::min(mdr, hnodes_[c].share);
      n.alloc = {};
      n.saturated = true;
      for (std::uint32_t c : n.children) {
        const HNode& ch = hnodes_[c];
        n.saturated = n.saturated && ch.saturated;
        if (ch.share == 0) continue;
        const double scale = ch.saturated ? 1 : mdr / ch.share;
        for (int d = 0; d < kDims; ++d) n.alloc[d] += ch.alloc[d] * scale;
      }
      n.share = drf_share(n.alloc);
    }
    hdirty_ = !delta.empty();
  }

  // compareQueues: down both queues' paths from the root, a saturated node last, then the lower
  // share / weight; equal nodes compare their children on the paths. < 0: `a` first.
  double hdrf_compare(std::uint32_t a, std::uint32_t b) const {
    if (hdirty_) hdrf_compute();
    const auto &pa = qpath_[a], &pb = qpath_[b];
    std::uint32_t l = 0, r = 0;
    const std::size_t depth = std::min(pa.size(), pb.size());
    for (std::size_t i = 0; i < depth; ++i) {
      const HNode &ln = hnodes_[l], &rn = hnodes_[r];
      if (ln.saturated != rn.saturated) return ln.saturated ? 1 : -1;
      const double ls = ln.share / ln.weight, rs = rn.share / rn.weight;
      if (ls != rs) return ls - rs;
      if (i + 1 == depth) break;
      auto child = [&](std::uint32_t node, const std::string& name) {
        for (std::uint32_t c : hnodes_[node].children)
          if (hnodes_[c].group == UINT32_MAX && hnodes_[c].name == name) return c;
        return UINT32_MAX;
      };
      l = child(l, pa[i + 1]);
      r = child(r, pb[i + 1]);
      if (l == UINT32_MAX || r == UINT32_MAX) return 0;  // a queue without jobs has no nodes
    }
    return 0;
  }

  // drf's ReclaimableFn with hierarchy: each candidate on its own, the reclaimer's job holding its
  // request more and the victim's job the victim less, is a victim if the reclaimer's queue then
  // sorts before the victim's.
  std::vector<JobIndex> hdrf_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const {
    std::vector<JobIndex> out;
    const std::uint32_t pg = members_[preemptor].group;
    for (JobIndex v : cands) {
      const std::uint32_t vg = members_[v].group;
      Res minus{};
      minus = sub(minus, members_[v].total);
      hdrf_compute({{pg, members_[preemptor].total}, {vg, minus}});
      if (hdrf_compare_now(groups_[pg].queue, groups_[vg].queue) < 0) out.push_back(v);
    }
    hdirty_ = true;
    return out;
  }
  double hdrf_compare_now(std::uint32_t a, std::uint32_t b) const {
    const bool dirty = hdirty_;
    hdirty_ = false;
    const double d = hdrf_compare(a, b);
    hdirty_ = dirty;
    return d;
  }

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

  // The victims one plugin admits among `cands` for `preemptor` (a task needing `req`).
  std::vector<JobIndex> plugin_victims(VictimFn plugin, bool reclaim, JobIndex preemptor, const Res& req,
                                       const std::vector<JobIndex>& cands) const {
    std::vector<JobIndex> out;
    const Group& pg = groups_[members_[preemptor].group];
    if (plugin == VictimFn::Priority) {
      for (JobIndex v : cands) {
        const std::uint32_t vg = members_[v].group;
        if (vg != members_[preemptor].group ? groups_[vg].priority < pg.priority
                                            : (*jobs_)[v].priority < (*jobs_)[preemptor].priority)
          out.push_back(v);
      }
    } else if (plugin == VictimFn::Gang) {
      std::vector<std::pair<std::uint32_t, int>> occupied;
      for (JobIndex v : cands) {
        const std::uint32_t vg = members_[v].group;
        auto it = std::find_if(occupied.begin(), occupied.end(), [&](const auto& o) { return o.first == vg; });
        if (it == occupied.end()) {
          occupied.emplace_back(vg, groups_[vg].ready);
          it = occupied.end() - 1;
        }
        if (it->second > groups_[vg].min) {
          --it->second;
          out.push_back(v);
        }
      }
    } else if (plugin == VictimFn::Conformance) {
      out = cands;  // headroom has no kube-system or system-critical pods
    } else if (plugin == VictimFn::Drf) {
      Res l = add(pg.alloc, req);
      double ls = 0;
      for (int d = 0; d < kDims; ++d)
        if (total_[d] > 0) ls = std::max(ls, static_cast<double>(l[d]) / static_cast<double>(total_[d]));
      std::vector<std::pair<std::uint32_t, Res>> allocs;
      for (JobIndex v : cands) {
        const std::uint32_t vg = members_[v].group;
        auto it = std::find_if(allocs.begin(), allocs.end(), [&](const auto& o) { return o.first == vg; });
        if (it == allocs.end()) {
          allocs.emplace_back(vg, groups_[vg].alloc);
          it = allocs.end() - 1;
        }
        it->second = sub(it->second, members_[v].total);
        double rs = 0;
        for (int d = 0; d < kDims; ++d)
          if (total_[d] > 0) rs = std::max(rs, static_cast<double>(it->second[d]) / static_cast<double>(total_[d]));
        if (ls < rs || std::abs(ls - rs) <= 1e-6) out.push_back(v);
      }
    } else if (plugin == VictimFn::Hdrf && reclaim) {
      out = hdrf_victims(preemptor, cands);
    } else if (plugin == VictimFn::Capacity && reclaim) {
      out = capacity_victims(preemptor, cands);
    } else if (plugin == VictimFn::Proportion && reclaim) {
      std::vector<std::pair<std::uint32_t, Res>> allocs;
      for (JobIndex v : cands) {
        const std::uint32_t q = groups_[members_[v].group].queue;
        auto it = std::find_if(allocs.begin(), allocs.end(), [&](const auto& o) { return o.first == q; });
        if (it == allocs.end()) {
          allocs.emplace_back(q, queues_[q].allocated);
          it = allocs.end() - 1;
        }
        bool above = false;
        for (int d = 0; d < kDims; ++d)
          above = above || (total_[d] > 0 && static_cast<double>(it->second[d]) > queues_[q].deserved[d] + kEps);
        if (above) {
          it->second = sub(it->second, members_[v].total);
          out.push_back(v);
        }
      }
    }
    return out;
  }

  // hasRelevantDeserved: a dimension the task requests and the queue's deserved names (>= 0.1).
  static bool relevant_deserved(const Res& req, const QueueS& qs) {
    for (int d = 0; d < kDims; ++d)
      if (req[d] > 0 && qs.deserved[d] >= 0.1) return true;
    return false;
  }

  // GreaterPartlyWithRelevantDimensions(deserved, req): allocated > deserved in a dimension the
  // task requests and deserved has (cpu, memory: >= 0.1; the GPU scalar: named, even at 0).
  static bool above_deserved(const Res& allocated, const QueueS& qs, const Res& req) {
    for (int d = 0; d < kDims; ++d) {
      if (req[d] <= 0 || !(d == 0 ? qs.gpu_deserved : qs.deserved[d] >= 0.1)) continue;
      if (static_cast<double>(allocated[d]) > qs.deserved[d]) return true;
    }
    return false;
  }

  // capacity's ReclaimableFn (plugins/capacity/capacity.go), candidates in victim order: skip a
  // task sharing no requested dimension with the reclaimer; keep the victim's queue at or above its
  // guarantee; admit it if its queue's deserved names none of its dimensions (an immediate victim)
  // or the queue's allocated (less the victims so far) is above deserved; with enableHierarchy and
  // ancestorReclaimLevel L, the victim's ancestors 1..L levels up that the reclaimer does not share
  // must be above deserved too, and an immediate victim is spared when the two queues share a
  // non-root ancestor within L levels and the reclaimer's deserved names none of its dimensions.
  std::vector<JobIndex> capacity_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const {
    std::vector<JobIndex> out;
    const Res& preq = members_[preemptor].total;
    const std::uint32_t rq = groups_[members_[preemptor].group].queue;
    const QueueS& rqs = queues_[rq];
    const std::int64_t levels = hierarchy_ ? cfg_.ancestor_reclaim_level : 0;
    std::vector<std::pair<std::uint32_t, Res>> allocs;
    allocs.reserve(queues_.size());  // references stay valid
    auto alloc_of = [&](std::uint32_t q) -> Res& {
      for (auto& [a, r] : allocs)
        if (a == q) return r;
      allocs.emplace_back(q, queues_[q].allocated);
      return allocs.back().second;
    };
    auto shares_ancestor = [&](const QueueS& a, const QueueS& b) {
      for (std::int64_t i = 1; i <= levels; ++i) {
        const std::uint32_t x = ancestor_at(a, i);
        if (x == kNoQueue || x == root_) continue;
        for (std::int64_t k = 1; k <= levels; ++k)
          if (ancestor_at(b, k) == x) return true;
      }
      return false;
    };
    for (JobIndex v : cands) {
      const Res& vr = members_[v].total;
      bool shared = false;
      for (int d = 0; d < kDims; ++d) shared = shared || (vr[d] > 0 && preq[d] > 0);
      if (!shared) continue;
      const std::uint32_t vq = groups_[members_[v].group].queue;
      const QueueS& vqs = queues_[vq];
      Res& allocated = alloc_of(vq);
      bool keeps_guarantee = true;
      for (int d = 0; d < kDims; ++d)
        keeps_guarantee = keeps_guarantee && vqs.conf.guarantee[d] <= allocated[d] - vr[d];
      if (!keeps_guarantee) continue;
      if (!relevant_deserved(vr, vqs)) {
        if (levels > 0 && shares_ancestor(rqs, vqs) && !relevant_deserved(preq, rqs)) continue;
      } else if (!above_deserved(allocated, vqs, vr)) {
        continue;
      }
      std::vector<std::uint32_t> checked;
      bool eligible = true;
      for (std::int64_t level = 1; level <= levels && eligible; ++level) {
        const std::uint32_t a = ancestor_at(vqs, level);
        if (a == kNoQueue || a == root_ || ancestor_at(rqs, level) == a) continue;
        checked.push_back(a);
        if (!relevant_deserved(vr, queues_[a])) continue;
        eligible = above_deserved(alloc_of(a), queues_[a], vr);
      }
      if (!eligible) continue;
      allocated = sub(allocated, vr);
      for (std::uint32_t a : checked) alloc_of(a) = sub(alloc_of(a), vr);
      out.push_back(v);
    }
    return out;
  }

  std::vector<JobIndex> tiered_victims(bool reclaim, JobIndex preemptor, const Res& req,
                                       const std::vector<JobIndex>& cands, std::string& rule) const {
    for (const auto& tier : victim_tiers_[reclaim ? 1 : 0]) {
      std::vector<JobIndex> victims;
      bool init = false;
      std::string names;
      for (const auto& [fn, name] : tier) {
        auto c = plugin_victims(fn, reclaim, preemptor, req, cands);
        if (c.empty()) {
          victims.clear();
          break;
        }
        names += (names.empty() ? "" : ", ") + name;
        if (!init) {
          victims = std::move(c);
          init = true;
        } else {
          std::vector<JobIndex> keep;
          for (JobIndex v : victims)
            if (std::find(c.begin(), c.end(), v) != c.end()) keep.push_back(v);
          victims = std::move(keep);
        }
      }
      if (!victims.empty()) {
        rule = names;
        return victims;
      }
    }
    return {};
  }

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

  double node_score(NodeId n, const SliceReq& sl) const {
    double score = 0;
    const models::Node& node = view_->cluster().node(n);
    const Res used = sub(cap_[n], idle_[n]);
    if (binpack_ && cfg_.binpack_weight > 0) {
      const double w[kDims] = {cfg_.binpack_gpu, cfg_.binpack_cpu, cfg_.binpack_memory};
      double sum = 0, wsum = 0;
      bool overflow = false;
      for (int d = 0; d < kDims; ++d) {
        if (sl.r[d] == 0 || w[d] == 0) continue;
        if (cap_[n][d] == 0 || used[d] + sl.r[d] > cap_[n][d]) {
          overflow = true;
          break;
        }
        sum += static_cast<double>(used[d] + sl.r[d]) * w[d] / static_cast<double>(cap_[n][d]);
        wsum += w[d];
      }
      if (!overflow && wsum > 0) score += sum / wsum * 100.0 * cfg_.binpack_weight;
    }
    if (nodeorder_ && (modelled_[1] || modelled_[2])) {
      k8s::NodeUsage u;
      u.gpus = used[0];
      u.cpu_milli = u.nonzero_cpu_milli = used[1];
      u.memory_mib = u.nonzero_memory_mib = used[2];
      Job pod;
      pod.gpus = sl.gpus;
      pod.cpus = sl.cpus;
      pod.memory_mib = sl.memory_mib;
      if (cfg_.leastrequested_weight > 0)
        score += static_cast<double>(cfg_.leastrequested_weight * k8s::score_node({}, node, u, pod).fit);
      if (cfg_.mostrequested_weight > 0) {
        k8s::ScoringStrategy most;
        most.type = k8s::ScoringType::MostAllocated;
        score += static_cast<double>(cfg_.mostrequested_weight * k8s::score_node(most, node, u, pod).fit);
      }
      if (cfg_.balancedresource_weight > 0)
        score += static_cast<double>(cfg_.balancedresource_weight * k8s::score_node({}, node, u, pod).balanced);
    }
    return score;
  }

  bool eligible(NodeId n, const Job& job) const {
    const models::Node& node = view_->cluster().node(n);
    return node.up && (job.gpu_type == 0 || pool_eligible(view_->cluster(), node.pool, job, view_->workload()));
  }

  // prioritizeNodes: the idle gradient, else the future-idle one; highest score, lowest index.
  std::pair<NodeId, bool> select_node(JobIndex j, const SliceReq& sl) const {
    const Job& job = (*jobs_)[j];
    const auto n_nodes = static_cast<NodeId>(cap_.size());
    const bool flat = flat_scores() && !soft_on_;
    if (flat) {
      // The first node in index order that fits: the GPU index skips the nodes short of GPUs.
      for (NodeId n = free_tree_.first_at_least(0, sl.r[0]); n != kNoNode;
           n = free_tree_.first_at_least(n + 1, sl.r[0])) {
        if (domain_on_ && !in_domain_[n]) continue;
        if (node_fits(n, idle_[n], sl.r) && eligible(n, job)) return {n, false};
      }
      // Without releasing or pipelined resources the future idle gradient is the idle one.
      if (!future_on_) return {kNoNode, false};
    }
    for (int gradient = flat ? 1 : 0; gradient < 2; ++gradient) {
      // Without releasing or pipelined resources the future idle gradient is the idle one.
      if (gradient == 1 && !future_on_) break;
      NodeId best = kNoNode;
      double best_score = -1;
      if (gradient == 0 && classes_on_ && !soft_on_ && !domain_on_ && live_classes_ * 4 <= n_nodes) {
        // The idle gradient over node classes: a class's nodes all fit or all do not, and score
        // alike, so in the scan below each would lose to its class's lowest index (it comes
        // first, and a later node must score more than the best so far).
        class_firsts_.clear();
        for (const NodeClass& c : node_classes_) {
          if (c.nodes.empty()) continue;
          const NodeId n = *c.nodes.begin();
          if (node_fits(n, idle_[n], sl.r) && eligible(n, job)) class_firsts_.push_back(n);
        }
        std::sort(class_firsts_.begin(), class_firsts_.end());
        for (const NodeId n : class_firsts_) {
          const double sc = node_score(n, sl);
          if (sc > best_score + 1e-12) {
            best_score = sc;
            best = n;
          }
        }
        if (best != kNoNode) return {best, false};
        continue;
      }
      if (soft_on_) soft_scores(j, sl, gradient);
      for (NodeId n = 0; n < n_nodes; ++n) {
        if (domain_on_ && !in_domain_[n]) continue;
        const Res avail = gradient == 0 ? idle_[n] : future_idle(n);
        if (!node_fits(n, avail, sl.r) || !eligible(n, job)) continue;
        if (flat) return {n, gradient == 1};
        const double sc = node_score(n, sl) + (soft_on_ ? nta_score_[n] : 0.0);
        if (sc > best_score + 1e-12) {
          best_score = sc;
          best = n;
        }
      }
      if (best != kNoNode) return {best, gradient == 1};
    }
    return {kNoNode, false};
  }

  // ------------------------------------------------------------------------------------------
  // Statement operations (applied to the session at once; undone on discard).

  void apply_place(Op& op, int sign) {
    touch(members_[op.job].group);
    Group& g = groups_[members_[op.job].group];
    bool pipelined = false;
    for (auto& [n, r, pipe] : op.where) {
      if (pipe) {
        pipe_[n] = sign > 0 ? add(pipe_[n], r) : sub(pipe_[n], r);
        future_on_ = true;
        pipelined = true;
      } else {
        set_idle(n, sign > 0 ? sub(idle_[n], r) : add(idle_[n], r));
        node_changed(n);
      }
    }
    (pipelined ? g.waiting : g.ready) += sign;
    const Res& t = members_[op.job].total;
    g.alloc = sign > 0 ? add(g.alloc, t) : sub(g.alloc, t);
    account(g.queue, t, sign);
    set_mark(op.job, sign > 0 ? (pipelined ? Mark::Pipelined : Mark::Allocated) : Mark::None);
  }

  void apply_evict(const Op& op, int sign) {
    for (const auto& [n, r, pipe] : op.where) rel_[n] = sign > 0 ? add(rel_[n], r) : sub(rel_[n], r);
    future_on_ = true;
    touch(members_[op.job].group);
    Group& g = groups_[members_[op.job].group];
    g.ready -= sign;
    const Res& t = members_[op.job].total;
    g.alloc = sign > 0 ? sub(g.alloc, t) : add(g.alloc, t);
    account(g.queue, t, -sign);
    set_mark(op.job, sign > 0 ? Mark::Evicted : Mark::None);
  }

  // The Allocate / Deallocate event handlers: the queue's allocated (and its ancestors' with
  // enableHierarchy); capacity updates the share of the job's queue only.
  void account(std::uint32_t qi, const Res& t, int sign) {
    leaf_up(qi, [&](std::uint32_t a) {
      queues_[a].allocated = sign > 0 ? add(queues_[a].allocated, t) : sub(queues_[a].allocated, t);
      return false;
    });
    if (capacity_) update_share(queues_[qi]);
    hdirty_ = true;
  }

  void undo(std::vector<Op>& ops) {
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      if (it->kind == Op::Evict)
        apply_evict(*it, -1);
      else
        apply_place(*it, -1);
    }
    ops.clear();
  }

  void commit(Session& s, std::vector<Op>& ops, std::string_view start_reason) {
    for (Op& op : ops) {
      if (op.kind == Op::Alloc) {
        models::Placement placement;
        const auto& slices = members_[op.job].slices;
        for (std::size_t i = 0; i < op.where.size(); ++i) {
          const NodeId n = std::get<0>(op.where[i]);
          auto it =
              std::find_if(placement.begin(), placement.end(), [&](const models::Slice& x) { return x.node == n; });
          if (it == placement.end()) {
            placement.push_back({n, 0, 0, 0});
            it = placement.end() - 1;
          }
          it->gpus += slices[i].gpus;
          it->cpus += slices[i].cpus;
          it->memory_mib += slices[i].memory_mib;
        }
        const std::string why = s.start(op.job, placement, start_reason);
        HEADROOM_ASSERT(why.empty(), "volcano produced an invalid placement: " + why);
        changed_ = true;
      } else if (op.kind == Op::Evict) {
        const std::string why =
            s.preempt(op.job, PreemptMode::Requeue, cfg_.termination_grace_period, op.by, op.reason);
        HEADROOM_ASSERT(why.empty(), "volcano eviction refused: " + why);
        evicting_.insert(op.job);
        ++epoch_;
        changed_ = true;
      }
    }
    ops.clear();
  }

  // Places every slice of member `j` (Allocate on idle, else Pipeline on future idle).
  bool place_member(JobIndex j, std::vector<Op>& ops) {
    Op op{Op::Alloc, j, {}, models::kNoJob, {}};
    bool pipelined = false;
    soft_on_ = topology_mode(groups_[members_[j].group]) == NetworkTopologyMode::Soft;
    if (soft_on_) soft_anchor(members_[j].group, ops);
    for (const SliceReq& sl : members_[j].slices) {
      const auto [n, pipe] = select_node(j, sl);
      if (soft_on_ && n != kNoNode) anchor_.push_back(n);
      if (n == kNoNode) {
        soft_on_ = false;
        for (auto& [m, r, p] : op.where) {
          if (p)
            pipe_[m] = sub(pipe_[m], r);
          else
            set_idle(m, add(idle_[m], r));
        }
        return false;
      }
      if (pipe) {
        pipe_[n] = add(pipe_[n], sl.r);
        future_on_ = true;
      } else {
        set_idle(n, sub(idle_[n], sl.r));
      }
      pipelined = pipelined || pipe;
      op.where.emplace_back(n, sl.r, pipe);
    }
    soft_on_ = false;
    // Undo the tentative node use and apply the op through the common path.
    for (auto& [m, r, p] : op.where) {
      if (p)
        pipe_[m] = sub(pipe_[m], r);
      else
        set_idle(m, add(idle_[m], r));
    }
    op.kind = pipelined ? Op::Pipe : Op::Alloc;
    apply_place(op, +1);
    ops.push_back(std::move(op));
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // Actions.

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

  // Volcano pops queues by QueueOrder and one PodGroup of the queue by JobOrder, then pushes the
  // queue back; no order key moves during enqueue (it changes no allocation), so each queue's
  // PodGroups come in JobOrder, one queue after the other. A refusal stays valid until something
  // is released: within an epoch, total x factor - used - inqueue and a queue's allocated +
  // inqueue - elastic only move against admission (the fit key memo). The PendList walk passes
  // over what changes nothing: entries refused at this fit key, and blocks whose PodGroups would
  // be refused for the reason they were given last time (block_refused_again; telling them
  // again would record nothing).
  void enqueue(Session& s) {
    if (total_ != keys_total_) {
      keys_total_ = total_;
      std::vector<std::uint32_t> listed;
      for (const PendList& l : pend_)
        for (const PendBlock& b : l.blocks)
          for (const PendEntry& e : b.e) listed.push_back(e.gi);
      for (std::uint32_t gi : listed) pend_rekey(gi);
    }
    for (std::size_t i = 0; i < dirty_.size(); ++i)
      if (groups_[dirty_[i]].in_pend) pend_rekey(dirty_[i]);
    auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
    std::vector<std::uint32_t> qheap;
    for (std::uint32_t q = 0; q < pend_.size(); ++q) {
      const PendList& l = pend_[q];
      if (l.size > 0 && (l.walked_key != fit_key_ || l.max_seq > l.walked_seq)) heap_push(qheap, q, qcmp);
    }
    while (!qheap.empty()) enqueue_queue(s, heap_pop(qheap, qcmp));
  }

  void enqueue_queue(Session& s, std::uint32_t q) {
    PendList& l = pend_[q];
    const std::uint64_t key = fit_key_;
    const bool seen = l.walked_key == key;
    std::vector<std::uint32_t> admitted;
    for (PendBlock& b : l.blocks) {
      if (seen && b.max_seq <= l.walked_seq) continue;
      if (block_refused_again(b, q)) continue;
      bool told = false;
      for (const PendEntry& e : b.e) {
        if (enqueue_memo(l, e) == key) continue;
        Group& g = groups_[e.gi];
        const std::uint32_t verdict = enqueue_verdict(g, q);
        if (verdict == kEnqueueOk) {
          g.phase = Phase::Inqueue;
          touch(e.gi);
          set_live(e.gi, true);
          changed_ = true;
          if (g.has_min_res) {
            inqueue_total_ = add(inqueue_total_, g.min_res);
            leaf_up(q, [&](std::uint32_t a) {
              queues_[a].inqueue = add(queues_[a].inqueue, g.min_res);
              return false;
            });
          }
          admitted.push_back(e.gi);
          continue;
        }
        g.enqueue_failed = key;
        if (verdict == g.enqueue_reason) continue;  // its tasks were told so already
        const std::string why = enqueue_reason_text(verdict, q);
        for (JobIndex j : g.pending) s.pending_reason(j, why);
        g.enqueue_reason = verdict;
        told = true;
      }
      if (told) block_update(b);
    }
    for (std::uint32_t gi : admitted) pend_erase(gi);
    l.walked_key = key;
    l.walked_seq = pend_seq_;
  }

  // JobEnqueueable over the plugins: kEnqueueOk or the refusal.
  std::uint32_t enqueue_verdict(const Group& g, std::uint32_t q) const {
    if (g.has_min_res) {
      if (overcommit_) {
        for (int d = 0; d < kDims; ++d) {
          if (g.min_res[d] <= 0) continue;
          const double idle = static_cast<double>(total_[d]) * cfg_.overcommit_factor - static_cast<double>(used_[d]);
          if (static_cast<double>(inqueue_total_[d] + g.min_res[d]) > idle + kEps)
            return kEnqueueOvercommit + static_cast<std::uint32_t>(d);
        }
      }
      if (proportion_enqueue_) {
        const QueueS& qs = queues_[q];
        if (qs.conf.state != QueueState::Open) return kEnqueueClosed;
        for (int d = 0; d < kDims; ++d) {
          if (g.min_res[d] <= 0) continue;
          const double r = static_cast<double>(g.min_res[d] + qs.allocated[d] + qs.inqueue[d] - qs.elastic[d]);
          if (r > qs.real_cap[d] + kEps) return kEnqueueCapability;
        }
      }
      if (capacity_enqueue_)
        if (const std::uint32_t b = capacity_enqueue_block(q, g.min_res); b != kNoQueue) return kEnqueueCapacity + b;
    } else if ((proportion_enqueue_ || capacity_enqueue_) && queues_[q].conf.state != QueueState::Open) {
      return kEnqueueClosedNoMin;
    }
    return kEnqueueOk;
  }

  std::string enqueue_reason_text(std::uint32_t verdict, std::uint32_t q) const {
    const QueueS& qs = queues_[q];
    if (verdict < kEnqueueClosed)
      return std::string("volcano enqueue: overcommit: inqueue minResources + this PodGroup's exceed ") +
             "total x overcommit-factor - used (" + kDimName[verdict - kEnqueueOvercommit] + ")";
    if (verdict == kEnqueueClosed) return "volcano enqueue: queue " + qs.name + " is not Open (proportion)";
    if (verdict == kEnqueueCapability)
      return "volcano enqueue: queue " + qs.name + " would exceed its capability (proportion)";
    if (verdict == kEnqueueClosedNoMin)
      return "volcano enqueue: queue " + qs.name + " is not Open (" + (capacity_enqueue_ ? "capacity" : "proportion") +
             ")";
    return capacity_refusal("volcano enqueue", q, verdict - kEnqueueCapacity);
  }

  // Each action pops the tasks still Pending afresh (placed ones are Allocated or Pipelined).
  void reset_cursors() {
    // A group nothing touched in this session has its cursor at 0 and no task placed.
    for (std::uint32_t gi : dirty_) {
      Group& g = groups_[gi];
      g.cursor = 0;
      skip_placed(g);
    }
  }
  void skip_placed(Group& g) const {
    while (g.cursor < g.pending.size() && mark(g.pending[g.cursor]) != Mark::None) ++g.cursor;
  }

  // The tasks of `g` from its cursor, in task order, until the group is ready (elastic groups are
  // then pushed back), or a rigid group's first task that fits nowhere.
  struct TaskRun {
    bool skipped = false, fit_failed = false, push_back = false;
    std::uint32_t blocker = kNoQueue;
  };
  TaskRun run_tasks(Group& g, std::uint32_t q, std::vector<Op>& ops) {
    touch(static_cast<std::uint32_t>(&g - groups_.data()));
    TaskRun r;
    r.blocker = q;
    const bool rigid = g.min >= g.submitted - g.ended;
    while (g.cursor < g.pending.size()) {
      const JobIndex j = g.pending[g.cursor++];
      skip_placed(g);
      if (!allocatable(q, members_[j].total)) {
        if (capacity_) r.blocker = capacity_block(q, members_[j].total);
        r.skipped = true;
        continue;
      }
      if (!place_member(j, ops)) {
        r.fit_failed = true;
        if (rigid) break;
        continue;
      }
      if (job_ready(g) && g.cursor < g.pending.size()) {
        r.push_back = true;
        break;
      }
    }
    return r;
  }

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

  // Nodes of the group's running (not terminating) members.
  void running_nodes(const Group& g, std::vector<NodeId>& out) const {
    for (JobIndex m : g.members)
      if (view_->state(m) == JobState::Running && !view_->terminating(m))
        for (const auto& sl : view_->placement(m)) out.push_back(sl.node);
  }

  // Hard mode (hyperNodeGradientFn, allocateForJob, selectBestHyperNodeForJob): tier by tier from
  // the leaves up to highestTierAllowed, the HyperNodes (switches) of the tier whose idle or future
  // idle covers minResources (the pre-filter; skipped, and the search limited to the subtree of the
  // highest allowed ancestor of the nodes it holds, for a group with running members); the tasks
  // are dry-run on each one's nodes, and of those where the group becomes ready or pipelined the
  // one with the highest HyperNode binpack score wins (ties: more of the group's running tasks
  // inside, then the smallest switch id, for Go's map order). The winner's allocation is redone
  // for real into `ops`.
  TaskRun run_hard(Group& g, std::uint32_t q, std::vector<Op>& ops, models::SwitchId& chosen) {
    touch(static_cast<std::uint32_t>(&g - groups_.data()));
    const models::Topology& t = *cluster_topology();
    const std::size_t cursor0 = g.cursor;
    std::vector<NodeId> held;
    running_nodes(g, held);
    models::SwitchId root = models::kNoSwitch;
    if (!held.empty()) {
      const models::SwitchId lca = t.lowest_common_switch(held);
      for (models::SwitchId a = lca; a != models::kNoSwitch && t.level(a) <= cfg_.highest_tier_allowed;) {
        root = a;
        const auto up = t.parents(a);
        a = up.empty() ? models::kNoSwitch : up.front();
      }
      if (root == models::kNoSwitch) {
        TaskRun r;
        r.fit_failed = true;
        return r;
      }
    }
    Res need{};
    for (std::size_t i = cursor0; i < g.pending.size(); ++i)
      if (mark(g.pending[i]) == Mark::None) need = add(need, members_[g.pending[i]].total);
    in_domain_.assign(cap_.size(), 0);
    TaskRun last;
    last.fit_failed = true;
    const std::int32_t top = std::min(cfg_.highest_tier_allowed, t.levels());
    for (std::int32_t tier = 1; tier <= top && chosen == models::kNoSwitch; ++tier) {
      double best_score = -1;
      std::int64_t best_inside = -1;
      for (const models::SwitchId sw : t.switches_at(tier)) {
        const auto under = t.nodes_under(sw);
        if (under.empty()) continue;
        if (root != models::kNoSwitch) {
          const auto anc = t.ancestors(under.front());
          if (sw != root && std::find(anc.begin(), anc.end(), root) == anc.end()) continue;
        } else if (g.has_min_res) {
          Res idle{}, future{};
          for (NodeId n : under)
            if (view_->cluster().node(n).up) {
              idle = add(idle, idle_[n]);
              future = add(future, future_idle(n));
            }
          bool fits_idle = true, fits_future = true;
          for (int d = 0; d < kDims; ++d) {
            fits_idle = fits_idle && g.min_res[d] <= idle[d];
            fits_future = fits_future && g.min_res[d] <= future[d];
          }
          if (!fits_idle && !fits_future) continue;
        }
        for (NodeId n : under) in_domain_[n] = 1;
        domain_on_ = true;
        g.cursor = cursor0;
        const TaskRun r = run_tasks(g, q, ops);
        domain_on_ = false;
        for (NodeId n : under) in_domain_[n] = 0;
        const bool ok = job_ready(g) || job_pipelined(g);
        undo(ops);
        if (!ok) {
          last = r;
          continue;
        }
        const double score = hypernode_binpack(under, need);
        std::int64_t inside = 0;
        for (NodeId n : held) inside += std::binary_search(under.begin(), under.end(), n) ? 1 : 0;
        if (score > best_score + 1e-12 || (std::abs(score - best_score) <= 1e-12 && inside > best_inside)) {
          best_score = score;
          best_inside = inside;
          chosen = sw;
        }
      }
    }
    g.cursor = cursor0;
    if (chosen == models::kNoSwitch) {
      last.push_back = false;
      return last;
    }
    for (NodeId n : t.nodes_under(chosen)) in_domain_[n] = 1;
    domain_on_ = true;
    const TaskRun r = run_tasks(g, q, ops);
    domain_on_ = false;
    return r;
  }

  // getSubJobHyperNodeBinPackingScore: over the weighted resources the group requests,
  // Σ w (used + request) / allocatable / Σ w for the HyperNode's nodes; 0 on overflow.
  double hypernode_binpack(std::span<const NodeId> under, const Res& need) const {
    const double w[kDims] = {cfg_.nta_binpack_gpu, cfg_.nta_binpack_cpu, cfg_.nta_binpack_memory};
    Res cap{}, used{};
    for (NodeId n : under) {
      cap = add(cap, cap_[n]);
      used = add(used, sub(cap_[n], idle_[n]));
    }
    double sum = 0, wsum = 0;
    for (int d = 0; d < kDims; ++d) {
      if (need[d] == 0 || w[d] == 0) continue;
      if (used[d] + need[d] > cap[d]) return 0;
      sum += w[d] * static_cast<double>(used[d] + need[d]) / static_cast<double>(cap[d]);
      wsum += w[d];
    }
    return wsum > 0 ? sum / wsum : 0;
  }

  // Soft mode: the group's allocated HyperNode is the lowest switch above the nodes it holds
  // (running members, members placed in this session, this member's slices so far).
  void soft_anchor(std::uint32_t gi, const std::vector<Op>& ops) {
    anchor_.clear();
    running_nodes(groups_[gi], anchor_);
    for (const Op& op : ops)
      if (op.kind != Op::Evict && members_[op.job].group == gi)
        for (const auto& w : op.where) anchor_.push_back(std::get<0>(w));
  }

  // batchNodeOrderFnForNetworkAwarePods, scaled by MaxNodeScore x weight: 1 on the allocated
  // HyperNode's own leaf, else (maxTier - tier of the lowest common switch) / (maxTier - minTier);
  // the nodes with the top score gain the share of the group's tasks under their leaf. 0 for the
  // group's first task.
  void soft_scores(JobIndex j, const SliceReq& sl, int gradient) const {
    const models::Topology& t = *cluster_topology();
    nta_score_.assign(cap_.size(), 0.0);
    if (anchor_.empty()) return;
    const models::SwitchId anchor = t.lowest_common_switch(anchor_);
    const std::int32_t max_tier = t.levels();
    std::vector<NodeId> pair = anchor_;
    double top = -1;
    for (NodeId n = 0; n < cap_.size(); ++n) {
      const Res avail = gradient == 0 ? idle_[n] : future_idle(n);
      if (!node_fits(n, avail, sl.r) || !eligible(n, (*jobs_)[j])) continue;
      const auto leaves = t.node_leaves(n);
      double sc = 0;
      if (!leaves.empty() && leaves.front() == anchor) {
        sc = 1;
      } else {
        pair.push_back(n);
        const models::SwitchId lca = t.lowest_common_switch(pair);
        pair.pop_back();
        if (max_tier == 1)
          sc = 1;
        else if (lca != models::kNoSwitch)
          sc = static_cast<double>(max_tier - t.level(lca)) / static_cast<double>(max_tier - 1);
      }
      nta_score_[n] = sc;
      top = std::max(top, sc);
    }
    const auto tasks = static_cast<double>(std::max(groups_[members_[j].group].members.size(), anchor_.size()));
    for (NodeId n = 0; n < cap_.size(); ++n) {
      if (nta_score_[n] != top || top < 0) continue;
      const auto leaves = t.node_leaves(n);
      if (leaves.empty()) continue;
      const auto under = t.nodes_under(leaves.front());
      double inside = 0;
      for (NodeId a : anchor_) inside += std::binary_search(under.begin(), under.end(), a) ? 1 : 0;
      nta_score_[n] += inside / tasks;
    }
    for (double& v : nta_score_) v *= 100.0 * cfg_.nta_weight;
  }

  void allocate(Session& s) {
    reset_cursors();
    auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
    auto jcmp = [this](std::uint32_t a, std::uint32_t b) { return job_cmp(a, b); };
    std::vector<std::vector<std::uint32_t>> jobs(queues_.size());
    std::vector<std::uint32_t> qheap;
    for (std::uint32_t gi : live_) {
      Group& g = groups_[gi];
      if (g.phase == Phase::Pending || g.cursor >= g.pending.size() || !job_valid(g)) continue;
      if (g.failed_epoch == fit_key_) continue;  // nothing has been released since it fitted nowhere
      if (jobs[g.queue].empty()) heap_push(qheap, g.queue, qcmp);
      heap_push(jobs[g.queue], gi, jcmp);
    }
    std::vector<Op> ops;
    while (!qheap.empty()) {
      const std::uint32_t q = heap_pop(qheap, qcmp);
      if (overused(queues_[q]) || jobs[q].empty()) continue;
      const std::uint32_t gi = heap_pop(jobs[q], jcmp);
      Group& g = groups_[gi];
      const bool hard = topology_mode(g) == NetworkTopologyMode::Hard;
      models::SwitchId domain = models::kNoSwitch;
      const TaskRun r = hard ? run_hard(g, q, ops, domain) : run_tasks(g, q, ops);
      if (r.push_back) heap_push(jobs[q], gi, jcmp);
      if (job_ready(g)) {
        commit(s, ops,
               domain == models::kNoSwitch
                   ? "volcano allocate: PodGroup ready (gang), highest-scoring node"
                   : "volcano allocate: PodGroup ready (gang), highest-scoring node in HyperNode " +
                         cluster_topology()->switch_name(domain) + " (network-topology-aware, hard mode)");
      } else if (job_pipelined(g)) {
        ops.clear();  // the session keeps the holds; nothing binds
      } else {
        undo(ops);
        if (r.fit_failed && !r.skipped) g.failed_epoch = fit_key_;
        const std::string why = r.skipped ? (capacity_ ? capacity_refusal("volcano allocate", q, r.blocker)
                                                       : "volcano allocate: queue " + queues_[q].name +
                                                             " would exceed its deserved share (proportion)")
                                : hard    ? "volcano allocate: no HyperNode of tier " +
                                             std::to_string(cfg_.highest_tier_allowed) +
                                             " or below (cluster.topology) fits minMember tasks of the PodGroup "
                                             "(network-topology-aware, hard mode)"
                                       : "volcano allocate: fewer than minMember tasks fit (gang)";
        for (JobIndex j : g.pending) s.pending_reason(j, why);
      }
      heap_push(qheap, q, qcmp);
    }
  }

  void backfill(Session& s) {
    for (std::uint32_t gi : live_) {
      Group& g = groups_[gi];
      if (g.phase == Phase::Pending || g.pending_be == 0) continue;
      for (JobIndex j : g.members) {
        if (!members_[j].best_effort || s.state(j) != JobState::Pending || j >= submitted_upto_ || s.retrying(j))
          continue;
        const Job& job = (*jobs_)[j];
        for (NodeId n = 0; n < cap_.size(); ++n) {
          if (!eligible(n, job)) continue;
          models::Placement p{models::Slice{n, job.gpus, job.cpus, job.memory_mib}};
          if (!s.cluster().check(p).empty()) continue;
          const std::string why = s.start(j, p, "volcano backfill: best-effort task");
          HEADROOM_ASSERT(why.empty(), "volcano backfill refused: " + why);
          node_changed(n);
          touch(gi);
          --g.pending_be;
          ++g.ready;
          changed_ = true;
          break;
        }
      }
    }
  }

  // Candidates on node `n` for preemptor `j`: running, not terminating, not evicted this session.
  std::vector<JobIndex> candidates(NodeId n, JobIndex j, bool reclaim) const {
    std::vector<JobIndex> out;
    const std::uint32_t pg = members_[j].group;
    const std::uint32_t pq = groups_[pg].queue;
    for (JobIndex v : view_->jobs_on_node(n)) {
      if (view_->state(v) != JobState::Running || view_->terminating(v) || mark(v) != Mark::None) continue;
      const std::uint32_t vg = members_[v].group;
      const std::uint32_t vq = groups_[vg].queue;
      if (reclaim ? (vq == pq || !queues_[vq].conf.reclaimable) : (vg == pg || vq != pq)) continue;
      out.push_back(v);
    }
    return out;
  }

  Res on_node(JobIndex v, NodeId n) const {
    for (const auto& sl : view_->placement(v))
      if (sl.node == n)
        return {sl.gpus, modelled_[1] ? std::int64_t{sl.cpus} * 1000 : 0, modelled_[2] ? sl.memory_mib : 0};
    return {};
  }

  void evict(JobIndex v, JobIndex by, const std::string& reason, std::vector<Op>& ops) {
    Op op{Op::Evict, v, {}, by, reason};
    for (const auto& sl : view_->placement(v))
      op.where.emplace_back(
          sl.node, Res{sl.gpus, modelled_[1] ? std::int64_t{sl.cpus} * 1000 : 0, modelled_[2] ? sl.memory_mib : 0},
          false);
    apply_evict(op, +1);
    ops.push_back(std::move(op));
  }

  std::string reason(bool reclaim, JobIndex j, const std::vector<JobIndex>& victims, const std::string& rule) const {
    std::string r = reclaim ? "volcano reclaim: " : "volcano preempt: ";
    if (rule.find("proportion") != std::string::npos || rule.find("capacity") != std::string::npos) {
      const std::uint32_t q = groups_[members_[victims.front()].group].queue;
      r += "queue " + queues_[q].name + " above deserved";
    } else if (rule.find("priority") != std::string::npos) {
      r += "lower priority than job " + std::to_string(j);
    } else if (rule.find("drf") != std::string::npos && reclaim) {
      const std::uint32_t q = groups_[members_[victims.front()].group].queue;
      r += "queue " + queues_[q].name + " above the reclaimer's in hierarchical DRF";
    } else if (rule.find("drf") != std::string::npos) {
      r += "higher dominant share than the preemptor's";
    } else {
      r += "victim's PodGroup keeps minMember";
    }
    return r + " (" + rule + ")";
  }

  // Preempts or reclaims for one slice of member `j` on some node; pipelines it there.
  bool evict_for_slice(JobIndex j, const SliceReq& sl, bool reclaim, std::vector<Op>& ops, Op& place) {
    const Job& job = (*jobs_)[j];
    std::vector<NodeId> order;
    for (NodeId n = 0; n < cap_.size(); ++n)
      if (eligible(n, job) && node_fits(n, cap_[n], sl.r)) order.push_back(n);
    if (!reclaim && !flat_scores()) {
      std::vector<double> sc(cap_.size(), 0);
      for (NodeId n : order) sc[n] = node_score(n, sl);
      std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) { return sc[a] > sc[b]; });
    }
    for (NodeId n : order) {
      auto cands = candidates(n, j, reclaim);
      if (cands.empty()) continue;
      // Victims are a subset of the candidates: if all of them would not make room, none do.
      Res bound = future_idle(n);
      for (JobIndex v : cands) bound = add(bound, on_node(v, n));
      if (!node_fits(n, bound, sl.r)) continue;
      std::sort(cands.begin(), cands.end(), [&](JobIndex a, JobIndex b) { return victim_before(a, b, j); });
      std::string rule;
      auto victims = tiered_victims(reclaim, j, sl.r, cands, rule);
      if (victims.empty()) continue;
      std::sort(victims.begin(), victims.end(), [&](JobIndex a, JobIndex b) { return victim_before(a, b, j); });
      Res all = future_idle(n);
      for (JobIndex v : victims) all = add(all, on_node(v, n));
      if (!node_fits(n, all, sl.r)) continue;  // ValidateVictims
      const std::string why = reason(reclaim, j, victims, rule);
      Res reclaimed{};
      for (JobIndex v : victims) {
        if (reclaim ? node_fits(n, reclaimed, sl.r) : node_fits(n, future_idle(n), sl.r)) break;
        reclaimed = add(reclaimed, on_node(v, n));
        evict(v, j, why, ops);
      }
      if (!node_fits(n, future_idle(n), sl.r)) return false;
      pipe_[n] = add(pipe_[n], sl.r);
      future_on_ = true;
      place.where.emplace_back(n, sl.r, true);
      return true;
    }
    return false;
  }

  bool evict_for_member(JobIndex j, bool reclaim, std::vector<Op>& ops) {
    Op place{Op::Pipe, j, {}, models::kNoJob, {}};
    const std::size_t mark_ops = ops.size();
    for (const SliceReq& sl : members_[j].slices) {
      if (!evict_for_slice(j, sl, reclaim, ops, place)) {
        for (auto& [n, r, p] : place.where) pipe_[n] = sub(pipe_[n], r);
        std::vector<Op> tail(std::make_move_iterator(ops.begin() + static_cast<std::ptrdiff_t>(mark_ops)),
                             std::make_move_iterator(ops.end()));
        ops.resize(mark_ops);
        undo(tail);
        return false;
      }
    }
    for (auto& [n, r, p] : place.where) pipe_[n] = sub(pipe_[n], r);
    apply_place(place, +1);
    ops.push_back(std::move(place));
    return true;
  }

  void preempt_action(Session& s) {
    reset_cursors();
    auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
    auto jcmp = [this](std::uint32_t a, std::uint32_t b) { return job_cmp(a, b); };
    std::vector<std::uint32_t> qs;
    for (std::uint32_t q = 0; q < queues_.size(); ++q) qs.push_back(q);
    std::sort(qs.begin(), qs.end(), [&](std::uint32_t a, std::uint32_t b) { return qcmp(a, b) < 0; });
    for (std::uint32_t q : qs) {
      std::vector<std::uint32_t> heap;
      for (std::uint32_t gi : active()) {
        const Group& g = groups_[gi];
        if (g.queue != q || g.phase == Phase::Pending || !job_valid(g) || !job_starving(g)) continue;
        if (g.cursor >= g.pending.size()) continue;
        heap_push(heap, gi, jcmp);
      }
      while (!heap.empty()) {
        const std::uint32_t gi = heap_pop(heap, jcmp);
        Group& g = groups_[gi];
        touch(gi);
        std::vector<Op> ops;
        while (g.cursor < g.pending.size() && job_starving(g)) {
          const JobIndex j = g.pending[g.cursor++];
          skip_placed(g);
          if ((*jobs_)[j].preempt_never) continue;
          evict_for_member(j, false, ops);
        }
        if (job_pipelined(g)) {
          commit(s, ops, "volcano preempt");
        } else {
          undo(ops);
        }
      }
    }
  }

  void reclaim_action(Session& s) {
    reset_cursors();
    auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
    auto jcmp = [this](std::uint32_t a, std::uint32_t b) { return job_cmp(a, b); };
    std::vector<std::vector<std::uint32_t>> jobs(queues_.size());
    std::vector<std::uint32_t> qheap;
    std::vector<bool> queued(queues_.size(), false);
    for (std::uint32_t gi : active()) {
      Group& g = groups_[gi];
      if (g.phase == Phase::Pending || !job_valid(g)) continue;
      if (!queued[g.queue]) {
        queued[g.queue] = true;
        heap_push(qheap, g.queue, qcmp);
      }
      if (g.cursor < g.pending.size() && job_starving(g)) heap_push(jobs[g.queue], gi, jcmp);
    }
    std::vector<std::pair<std::uint32_t, std::vector<Op>>> stmts;
    auto stmt = [&](std::uint32_t gi) -> std::vector<Op>& {
      for (auto& [g, o] : stmts)
        if (g == gi) return o;
      stmts.emplace_back(gi, std::vector<Op>{});
      return stmts.back().second;
    };
    while (!qheap.empty()) {
      const std::uint32_t q = heap_pop(qheap, qcmp);
      if (overused(queues_[q]) || jobs[q].empty()) continue;
      const std::uint32_t gi = heap_pop(jobs[q], jcmp);
      Group& g = groups_[gi];
      if (g.cursor >= g.pending.size()) continue;
      touch(gi);
      const JobIndex j = g.pending[g.cursor++];
      skip_placed(g);
      if (!preemptive(q, members_[j].total)) continue;  // the queue is dropped
      const bool assigned = !(*jobs_)[j].preempt_never && evict_for_member(j, true, stmt(gi));
      if (assigned && g.cursor < g.pending.size() && job_starving(g)) heap_push(jobs[q], gi, jcmp);
      heap_push(qheap, q, qcmp);
    }
    for (auto& [gi, o] : stmts) {
      if (job_pipelined(groups_[gi]))
        commit(s, o, "volcano reclaim");
      else
        undo(o);
    }
  }

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
  std::vector<Group> groups_;
  std::vector<QueueS> queues_;
  // The groups with a member submitted and not ended, in index order.
  std::vector<std::uint32_t> active_;
  const std::vector<std::uint32_t>& active() const { return active_; }
  // Groups to refresh at the next session (during a session: the ones it touched so far).
  std::vector<std::uint32_t> dirty_;
  std::set<std::uint32_t> live_;
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

}  // namespace

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<VolcanoPolicy>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed) {
  (void)seed;  // every tie breaks on stable ids
  return make_policy(parse_config(params));
}

}  // namespace headroom::policies::volcano
