#include "policies/kai/kai.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "models/gpu_types.hpp"
#include "models/topology.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/kai/topology.hpp"

namespace headroom::policies::kai {

using models::Job;
using models::JobState;
using models::NodeId;

// ---------------------------------------------------------------------------------------------
// Fair-share division (resource_division.go).

std::vector<std::int64_t> divide(const std::vector<DivisionEntry>& queues, std::int64_t total, double k_value,
                                 std::int64_t unit) {
  const std::size_t n = queues.size();
  std::vector<std::int64_t> fs(n, 0), requestable(n, 0);
  std::int64_t remaining = total;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& q = queues[i];
    requestable[i] = q.limit < 0 ? q.request : std::min(q.request, q.limit);
    const std::int64_t deserved = q.deserved < 0 ? total : q.deserved;
    fs[i] = std::max<std::int64_t>(0, std::min(deserved, requestable[i]));
    remaining -= fs[i];
  }
  std::vector<std::int64_t> levels;
  for (const auto& q : queues) levels.push_back(q.priority);
  std::sort(levels.begin(), levels.end(), std::greater<>());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  std::vector<double> fraction(n, 0.0);
  for (std::int64_t level : levels) {
    auto unsatisfied = [&] {
      std::vector<std::size_t> out;
      for (std::size_t i = 0; i < n; ++i) {
        if (queues[i].priority != level) continue;
        const auto& q = queues[i];
        if (q.request <= fs[i] || (q.limit >= 0 && q.limit <= fs[i])) continue;
        out.push_back(i);
      }
      return out;
    };
    while (remaining > 0) {
      const auto unsat = unsatisfied();
      if (unsat.empty()) break;
      double weights = 0;
      for (auto i : unsat) weights += queues[i].weight;
      if (weights <= 0) break;
      std::vector<double> share(n, 0.0);
      double shares = 0;
      for (auto i : unsat) {
        const double nw = queues[i].weight / weights;
        share[i] = std::max(0.0, nw + k_value * (nw - queues[i].usage));
        shares += share[i];
      }
      if (shares <= 0) break;
      std::int64_t given = 0;
      bool took_less = false;
      const auto rem = static_cast<double>(remaining);
      for (auto i : unsat) {
        const double offer = rem * share[i] / shares;
        const std::int64_t want = requestable[i] - fs[i];
        if (static_cast<double>(want) <= offer) {
          fs[i] += want;
          given += want;
          took_less = took_less || static_cast<double>(want) < offer;
          fraction[i] = 0;
        } else {
          const auto whole = static_cast<std::int64_t>(std::floor(offer / static_cast<double>(unit))) * unit;
          fs[i] += whole;
          given += whole;
          fraction[i] = offer - static_cast<double>(whole);
        }
      }
      remaining -= given;
      if (!took_less || given == 0) break;
    }
    // The leftover of the floors, one unit at a time.
    while (remaining > 0) {
      auto unsat = unsatisfied();
      std::erase_if(unsat, [&](std::size_t i) { return requestable[i] <= fs[i] || queues[i].weight <= 0; });
      if (unsat.empty()) break;
      std::sort(unsat.begin(), unsat.end(), [&](std::size_t a, std::size_t b) {
        if (fraction[a] != fraction[b]) return fraction[a] > fraction[b];
        if (queues[a].creation != queues[b].creation) return queues[a].creation < queues[b].creation;
        return a < b;
      });
      for (auto i : unsat) {
        if (remaining == 0) break;
        const std::int64_t give = std::min(unit, remaining);  // a fraction of a unit when that is all
        fs[i] += give;
        remaining -= give;
        fraction[i] = 0;
      }
    }
  }
  return fs;
}

namespace {

constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max() / 4;
constexpr NodeId kNoNode = UINT32_MAX;
constexpr std::uint32_t kNoUnit = UINT32_MAX;
// Consolidation is tried for at most this many pending jobs per session, over at most this many
// candidate nodes each (bounds the cost of a session on large clusters).
constexpr int kConsolidationJobsPerSession = 8;
constexpr int kConsolidationNodesPerJob = 64;
// Reclaim and preempt solvers run for at most this many pending groups per session.
constexpr int kVictimSearchesPerSession = 64;

enum class Reason : std::uint8_t {
  None,
  OverLimit,
  NonPreemptibleOverQuota,
  NoFit,
  GangIncomplete,
  Pipelined,
  TopologyNoFit
};

std::string_view reason_text(Reason r) {
  switch (r) {
    case Reason::None: return "";
    case Reason::OverLimit: return "OverLimit: the queue or an ancestor would exceed its limit";
    case Reason::NonPreemptibleOverQuota:
      return "NonPreemptibleOverQuota: a non-preemptible job may only use its queue's quota";
    case Reason::NoFit: return "Unschedulable: no node (set) can hold the pod group now";
    case Reason::GangIncomplete: return "gang: fewer pods than minMember have been created";
    case Reason::Pipelined: return "pipelined: waiting for evicted pods to terminate";
    case Reason::TopologyNoFit:
      return "Unschedulable: no domain of cluster.topology at the required level or below can hold the pod group "
             "(topology)";
  }
  return "";
}

void add(Amounts& a, const Amounts& b, std::int64_t sign = 1) {
  for (int r = 0; r < kResources; ++r) a[r] += sign * b[r];
}

// Allocates each element on a cache line of its own: a node of a leaf's pending set (its links and
// the 32-byte key) is one line, which the allocate walk reads in order every session.
template <class T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <class U>
  LineAllocator(const LineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const LineAllocator<U>&) const {
    return true;
  }
};

struct QNode {
  std::string name;
  int parent = -1;
  std::vector<int> children;
  int creation = 0;
  std::int64_t priority = 100;
  std::array<QueueResource, kResources> res;
  Tick preempt_min_runtime = 0, reclaim_min_runtime = 0;
  bool declared = false;
  int depth = 0;
  // No limit (any resource) on the path from this node to the root, and no quota: capacity() has
  // nothing to check (rebuild_leaves keeps them).
  bool unlimited = true, unquoted = true;
  Amounts alloc{}, np_alloc{}, pending{};
  Amounts fair{}, allocatable{};
  double usage = 0;  // decayed GPU-ms
  // Leaves only.
  // Ordered by -priority, tier, created, unit. The rest is copied from the unit (Unit::single,
  // simple_gpus, simple_multi; lone: simple_gpus > 0 and minMember 1) so that the allocate walk
  // reads no unit for a lone plain pod; a key whose copy changes is put back (refresh).
  struct PendKey {
    std::int32_t neg_priority = 0;
    int tier = 0;
    Tick created = 0;
    std::uint32_t unit = 0;
    models::JobIndex single = models::kNoJob;
    std::int32_t simple_gpus = 0;
    bool simple_multi = false, lone = false;
    bool operator<(const PendKey& o) const {
      return std::tie(neg_priority, tier, created, unit) < std::tie(o.neg_priority, o.tier, o.created, o.unit);
    }
    bool operator==(const PendKey& o) const = default;
  };
  using RunKey = std::tuple<std::int32_t, Tick, std::int64_t>;  // priority, -created, -unit
  using PendingSet = std::set<PendKey, std::less<PendKey>, LineAllocator<PendKey>>;
  PendingSet pending_units;
  std::set<RunKey> running_units;
  PendingSet::iterator cursor;
};

struct Unit {
  // What the allocate walk and the failed walk read of most units first, together at the front.
  int queue = 0;
  std::int32_t priority = 50;
  // With one member: it, and when it is a plain GPU pod (GPUs only: no share, GPU type, cpu or
  // memory) its GPUs and whether it spans nodes, so the allocate walk reads neither the member list
  // nor the job.
  models::JobIndex single = models::kNoJob;
  std::int32_t simple_gpus = 0;
  bool simple_multi = false;
  bool in_pending = false;
  bool pipelined = false;
  bool in_running = false;
  int min_member = 1;
  int members_without_gpus = 0;  // of the members, asking for no GPU
  int running = 0;               // running and not terminating
  Tick created = 0;
  std::vector<models::JobIndex> members;  // submitted members, index order
  int succeeded = 0;
  int pending = 0;
  Amounts running_req{};
  QNode::PendKey pkey{};
  QNode::RunKey rkey{};
  Tick stale_since = -1;
  int outstanding_victims = 0;
  Amounts reserved{};
  bool preemptible() const { return preemptible_priority(priority); }
  static bool preemptible_priority(std::int32_t p) { return p < 100; }
};

struct Free {
  NodeId node = kNoNode;
  std::int64_t gpus = 0, cpus = 0, memory = 0;
  // Milli-GPUs that shares use on each device of the node (gpuSharing); empty = as in the cluster.
  // In reserved_: the milli-GPUs reserved per device.
  std::vector<std::int32_t> dev;
};

// Tentative node state inside one solver run (a Statement): nodes whose free resources differ from
// the cluster's.
struct Overlay {
  std::vector<Free> nodes;
  Free* find(NodeId n) {
    for (auto& f : nodes)
      if (f.node == n) return &f;
    return nullptr;
  }
  Free get(const models::ClusterState& c, NodeId n) {
    if (Free* f = find(n)) return *f;
    const auto& node = c.node(n);
    return Free{n, node.free_gpus, node.free_cpus, node.free_memory_mib, {}};
  }
  Free& at(const models::ClusterState& c, NodeId n) {
    if (Free* f = find(n)) return *f;
    nodes.push_back(get(c, n));
    return nodes.back();
  }
  void take(const models::ClusterState& c, const models::Placement& p, std::int64_t sign) {
    for (const auto& s : p) {
      Free& f = at(c, s.node);
      f.gpus -= sign * s.gpus;
      f.cpus -= sign * s.cpus;
      f.memory -= sign * s.memory_mib;
      if (s.gpu_milli > 0) share(c, f, s.device, static_cast<std::int32_t>(sign) * s.gpu_milli);
    }
  }
  // Milli-GPUs that shares use on device d of f's node.
  static std::int32_t used_milli(const models::ClusterState& c, const Free& f, std::int32_t d) {
    return f.dev.empty() ? c.device_milli(f.node, d) : f.dev[static_cast<std::size_t>(d)];
  }
  // Adds `delta` milli-GPUs to device d; a device that starts or stops being shared leaves or
  // rejoins the node's whole free GPUs, as in ClusterState.
  static void share(const models::ClusterState& c, Free& f, std::int32_t d, std::int32_t delta) {
    if (f.dev.empty()) {
      const std::int32_t gpus = c.node(f.node).gpus;
      f.dev.resize(static_cast<std::size_t>(gpus));
      for (std::int32_t k = 0; k < gpus; ++k) f.dev[static_cast<std::size_t>(k)] = c.device_milli(f.node, k);
    }
    std::int32_t& used = f.dev[static_cast<std::size_t>(d)];
    const bool was = used > 0;
    used += delta;
    if (was != (used > 0)) f.gpus += was ? 1 : -1;
  }
};

class KaiPolicy final : public Policy {
 public:
  explicit KaiPolicy(Config cfg) : cfg_(std::move(cfg)) {}

  std::string_view name() const override { return "kai"; }

  Reason reason(JobIndex j) const { return j < reasons_.size() ? reasons_[j] : Reason::None; }

  // A pod that asks for a fraction (gpu-fraction) or the memory (gpu-memory) of one GPU and, with
  // gpuSharing, gets a share of one device.
  bool is_share(const Job& j) const {
    return cfg_.gpu_sharing && (j.gpu_milli > 0 || j.gpu_memory_mib > 0) && j.gpus <= 1;
  }
  static bool is_memory_pod(const Job& j) { return j.gpu_memory_mib > 0 && j.gpu_milli == 0 && j.gpus <= 1; }

  // The memory of one GPU of pool p in MiB, as KAI reads it from the node label
  // nvidia.com/gpu.memory (node_info.go getNodeGpuMemory): the GPU type's memory_gib x 1024, floored
  // to a multiple of 100; without a memory figure (no label) KAI's DefaultGpuMemory, 100 MiB.
  std::int64_t device_memory_mib(models::PoolId p) const { return pool_gpu_memory_[p]; }

  // The milli-GPUs a share of `j` takes on a device of pool p, or 0 when it cannot be a share there:
  // gpu_milli, or for a gpu-memory pod KAI's fraction on the node (getGpuMemoryFractionalOnNode:
  // memory / device memory rounded up to hundredths, in float64 as KAI computes it). A fraction of
  // 1.00 or more is not a share (KAI would give such a pod a whole device of its own).
  std::int32_t share_milli(const Job& j, models::PoolId p) const {
    if (j.gpu_milli > 0) return j.gpu_milli;
    const double hundredths =
        std::ceil(static_cast<double>(j.gpu_memory_mib) / static_cast<double>(device_memory_mib(p)) * 100.0);
    return hundredths >= 100.0 ? 0 : static_cast<std::int32_t>(hundredths) * 10;
  }

  // A gpu-memory pod's GPUs before it has a node (the fair-share request, the capacity checks, queue
  // order, reclaim and preempt): its fraction on the pool with the least GPU memory it may use
  // (KAI's ClusterInfo.MinNodeGPUMemory conversion, rounded as on a node); 1000 if it fits none.
  std::int64_t pending_memory_milli(const Job& j) const {
    std::int64_t out = 0;
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
      if (!pool_ok(p, j) || cluster_->spec().pools[p].units_per_gpu != 1) continue;
      const std::int32_t m = share_milli(j, p);
      if (m > 0) out = std::max<std::int64_t>(out, m);
    }
    return out > 0 ? out : 1000;
  }

  // Why KAI could never run a gpu-memory pod, or nullopt. Without gpuSharing KAI's admission
  // webhook refuses it (admission/webhook/v1alpha2/gpusharing); with it, a pod whose memory no pool
  // it may use holds (as a share) waits forever in KAI, and headroom rejects it.
  std::optional<std::string> memory_pod_rejection(const Job& j) const {
    if (!is_memory_pod(j)) return std::nullopt;
    if (!cfg_.gpu_sharing)
      return std::string("gpu_memory_mib needs gpuSharing: KAI refuses a gpu-memory pod while GPU sharing is disabled");
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
      if (pool_ok(p, j) && cluster_->spec().pools[p].units_per_gpu == 1 && share_milli(j, p) > 0) return std::nullopt;
    return "gpu_memory_mib " + std::to_string(j.gpu_memory_mib) +
           " is less than one GPU's memory on no pool it may use (GPU memory comes from the pool's gpu_type; a "
           "type without a memory figure counts 100 MiB, as a KAI node without the nvidia.com/gpu.memory label)";
  }

  // demand() of a unit's single plain GPU pod (Unit::simple_gpus).
  Amounts simple_demand(const Unit& u) const { return simple_demand(u.simple_gpus); }
  Amounts simple_demand(std::int32_t gpus) const { return {cfg_.gpu_sharing ? std::int64_t{gpus} * 1000 : gpus, 0, 0}; }

  // Requests in the queue accounting's units: GPUs (milli-GPUs with gpuSharing, a share counting its
  // fraction), cpu millicores, memory MiB.
  Amounts demand(const Job& j) const {
    const std::int64_t gpu =
        !cfg_.gpu_sharing
            ? j.gpus
            : (is_share(j) ? (j.gpu_milli > 0 ? j.gpu_milli : pending_memory_milli(j)) : std::int64_t{j.gpus} * 1000);
    return {gpu, std::int64_t{j.cpus} * 1000, j.memory_mib};
  }

  // What a running (or evicted) pod is charged: a gpu-memory share its fraction on its node
  // (node_info.go setAcceptedResources / GetRequiredInitQuota), other pods their demand.
  Amounts held(JobIndex j) const {
    Amounts a = demand(workload_->jobs[j]);
    if (held_milli_[j] > 0) a[0] = held_milli_[j];
    return a;
  }

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    const Job& job = view.workload().jobs[j];
    const std::uint32_t u = unit_of(job, j);
    Unit& unit = units_[u];
    if (unit.members.empty()) {
      unit.queue = leaf_for(job.queue);
      unit.priority = cfg_.kind_priority[static_cast<std::size_t>(job.kind)];
      unit.created = job.submit;
      unit.min_member = job.group == models::kNone ? 1 : (job.gang_min > 0 ? job.gang_min : group_size_[job.group]);
    }
    unit.members.push_back(j);
    if (job.gpus <= 0) ++unit.members_without_gpus;
    std::sort(unit.members.begin(), unit.members.end());
    unit.single = unit.members.size() == 1 ? j : models::kNoJob;
    const bool simple = unit.members.size() == 1 && job.gpus > 0 && !is_share(job) && job.gpu_type == 0 &&
                        job.cpus == 0 && job.memory_mib == 0;
    unit.simple_gpus = simple ? job.gpus : 0;
    unit.simple_multi = simple && multi_node(job);
    if (!nodes_[unit.queue].children.empty() || memory_pod_rejection(job).has_value() ||
        never_fits(view.cluster(), job, view.workload()).has_value()) {
      to_reject_.push_back(j);
      rekey_pending(u);
      return;
    }
    add_pending(view, j);
  }

  void on_requeue(const ClusterView& view, JobIndex j) override { add_pending(view, j); }

  void on_release(const ClusterView& view, JobIndex j) override {
    advance_usage(view.now());
    Unit& u = units_[job_unit_[j]];
    if (terminating_[j]) {
      terminating_[j] = 0;
    } else {
      --u.running;
      add(u.running_req, held(j), -1);
      add_path(u.queue, &QNode::alloc, held(j), -1);
      if (!u.preemptible()) add_path(u.queue, &QNode::np_alloc, held(j), -1);
    }
    releasing_.erase(j);
    if (victim_of_[j] != kNoUnit) {
      Unit& p = units_[victim_of_[j]];
      if (p.outstanding_victims > 0) --p.outstanding_victims;
      victim_of_[j] = kNoUnit;
    }
    refresh(job_unit_[j], view.now());
  }

  // A pending pod removed before it ran (models::Job::withdraw_at): out of the pending counts.
  void on_withdraw(const ClusterView& view, JobIndex j) override {
    if (std::find(to_reject_.begin(), to_reject_.end(), j) != to_reject_.end()) return;  // never counted
    const Job& job = view.workload().jobs[j];
    Unit& u = units_[job_unit_[j]];
    --u.pending;
    count_pending(job, -1);
    add_path(u.queue, &QNode::pending, demand(job), -1);
    set_reason(j, Reason::None);
    refresh(job_unit_[j], view.now());
  }

  void on_end(const ClusterView& view, JobIndex j) override {
    const Job& job = view.workload().jobs[j];
    if (view.state(j) == JobState::Completed && job.group != models::kNone) {
      ++units_[job_unit_[j]].succeeded;
      refresh(job_unit_[j], view.now());
    }
  }

  void schedule(Session& s) override {
    ensure(s);
    const Tick now = s.now();
    const Tick period = cfg_.schedule_period;
    if (now > 0 && now % period != 0) {
      s.wake_at((now / period + 1) * period);
      return;
    }
    advance_usage(now);
    for (JobIndex j : to_reject_) {
      if (s.state(j) != JobState::Pending) continue;
      const Job& job = s.workload().jobs[j];
      const Unit& u = units_[job_unit_[j]];
      if (!nodes_[u.queue].children.empty()) {
        s.reject(j, "queue \"" + nodes_[u.queue].name + "\" is not a leaf queue; only leaf queues hold jobs");
      } else if (auto why = memory_pod_rejection(job)) {
        s.reject(j, *why);
      } else {
        s.reject(j, *never_fits(s.cluster(), job, s.workload()));
      }
    }
    to_reject_.clear();
    compute_fair_shares(s);
    protected_until_ = sim::kNever;

    min_failed_plain_gpus_ = min_failed_multi_gpus_ = kInf;
    // Pipelined groups whose victims are gone bind first.
    std::vector<std::uint32_t> ready;
    for (std::uint32_t u : pipelined_)
      if (units_[u].outstanding_victims == 0) ready.push_back(u);
    for (std::uint32_t u : ready) {
      pipelined_.erase(u);
      Unit& unit = units_[u];
      unit.pipelined = false;
      add_path(unit.queue, &QNode::alloc, unit.reserved, -1);
      add_path(unit.queue, &QNode::pending, unit.reserved, 1);
      if (!unit.preemptible()) add_path(unit.queue, &QNode::np_alloc, unit.reserved, -1);
      unit.reserved = {};
      for (const auto& p : plans_[u]) reserve(p, -1);
      plans_.erase(u);
      refresh(u, now);
      if (unit.in_pending) attempt(s, u);
    }

    // allocate
    std::vector<FailedUnit>& failed = failed_;  // kept between sessions for its capacity
    failed.clear();
    for (int q : leaves_) nodes_[q].cursor = nodes_[q].pending_units.begin();
    in_allocate_ = true;
    while (true) {
      const int leaf = pick(0);
      if (leaf < 0) break;
      QNode& node = nodes_[leaf];
      const QNode::PendKey k = *node.cursor;
      ++node.cursor;
      // attempt's fast NoFit path, read from the key.
      const bool fast = known_no_fit(leaf, -k.neg_priority, k.simple_gpus, k.simple_multi);
      if (fast) set_reason(k.single, Reason::NoFit);
      const Reason r = fast ? Reason::NoFit : attempt(s, k.unit);
      // A failed attempt changes nothing of the unit: the key still holds what it has.
      if (r != Reason::None)
        failed.push_back(FailedUnit{k.unit, r, r == Reason::NoFit && k.lone, k.simple_multi, k.simple_gpus,
                                    -k.neg_priority, leaf, simple_demand(k.simple_gpus)[0]});
      // Once every pending pod is known not to fit, stop when the later actions have enough
      // candidates (they are bounded per session).
      if (failed.size() >= static_cast<std::size_t>(kVictimSearchesPerSession) && all_would_fail()) break;
    }
    in_allocate_ = false;
    // consolidation, reclaim, preempt
    int consolidations = 0, searches = 0;
    // Until one of them acts, nothing that their first checks read changes (a check that fails
    // changes nothing but the counts of attempts and searches), and every lone plain pod that
    // failed is still pending and placeable, as allocate left it.
    bool acted = false;
    std::int64_t all_pools_free = 0;  // what consolidate counts as eligible for a pod of no GPU type
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) all_pools_free += cluster_->pool_free_gpus(p);
    // Per leaf, what reclaim's and preempt's first checks read of it until something acts.
    walk_room_.assign(nodes_.size(), kInf);
    walk_lowest_running_.assign(nodes_.size(), std::numeric_limits<std::int32_t>::max());
    for (int q : leaves_) {
      const QNode& leaf = nodes_[q];
      if (active(0)) walk_room_[static_cast<std::size_t>(q)] = leaf.fair[0] - leaf.alloc[0];
      if (!leaf.running_units.empty())
        walk_lowest_running_[static_cast<std::size_t>(q)] = std::get<0>(*leaf.running_units.begin());
    }
    for (std::size_t i = 0; i < failed.size(); ++i) {
      if (!acted) {  // pass over the lone pods that nothing would be done for
        const bool consolidation_open = consolidations < kConsolidationJobsPerSession && cluster_->free_gpus() > 0 &&
                                        cfg_.max_consolidation_preemptees > 0;
        const bool search_open = searches < kVictimSearchesPerSession;
        while (i < failed.size() && failed[i].lone &&
               !may_act(failed[i], consolidation_open, search_open, all_pools_free))
          ++i;
        if (i == failed.size()) break;
      }
      const FailedUnit& f = failed[i];
      const std::uint32_t u = f.unit;
      Reason r = f.reason;
      if (!units_[u].in_pending || units_[u].pipelined) continue;
      if (r == Reason::TopologyNoFit) r = Reason::NoFit;  // the solvers place inside the domains too
      if (r == Reason::NoFit && consolidations < kConsolidationJobsPerSession && cluster_->free_gpus() > 0) {
        if (consolidate(s, u, consolidations)) {
          acted = true;
          continue;
        }
      }
      if ((r == Reason::NoFit || r == Reason::OverLimit) && searches < kVictimSearchesPerSession) {
        if (r == Reason::NoFit && reclaim(s, u, searches)) {
          acted = true;
          continue;
        }
        if (preempt(s, u, searches)) {
          acted = true;
          continue;
        }
      }
    }
    stale_gang_eviction(s);
    if (!stale_.empty()) s.wake_at(std::max(now, stale_.begin()->first + cfg_.staleness_grace));
    if (protected_until_ != sim::kNever) s.wake_at(protected_until_);
  }

 private:
  // A group that failed in allocate, for the walk of consolidation, reclaim and preempt. `lone`: a
  // lone plain GPU pod (Unit::simple_gpus, minMember 1) that failed with NoFit; its GPUs, whether
  // it spans nodes, priority and queue are copied so that may_act reads no unit.
  struct FailedUnit {
    std::uint32_t unit;
    Reason reason;
    bool lone, multi;
    std::int32_t gpus, priority;
    int queue;
    std::int64_t demand;  // the pod's GPUs in the queue accounting's units (simple_demand)
  };

  // For a lone entry while nothing has acted: false when consolidate, reclaim and preempt would
  // each return false at their first checks, which read only what the entry holds, the counts
  // (consolidation_open: consolidate may still count an attempt; search_open: reclaim and preempt
  // may still search) and what the walk keeps per leaf (walk_room_, walk_lowest_running_).
  bool may_act(const FailedUnit& f, bool consolidation_open, bool search_open, std::int64_t all_pools_free) const {
    const auto q = static_cast<std::size_t>(f.queue);
    // consolidate: a pod spanning nodes is never moved; otherwise it counts an attempt (and may
    // act) only when the pools it may use have its GPUs free in all.
    const bool consolidation = consolidation_open & !f.multi & (all_pools_free >= f.gpus);
    // reclaim: the queue's GPUs with the pod's stay within its fair share (its eligibility);
    // preempt: a running group of the queue has a lower priority.
    const bool victims = search_open & ((f.demand <= walk_room_[q]) | (walk_lowest_running_[q] < f.priority));
    return consolidation | victims;
  }

  // ----- set-up --------------------------------------------------------------------------------
  void ensure(const ClusterView& view) {
    if (initialised_) return;
    initialised_ = true;
    const auto& w = view.workload();
    cluster_ = &view.cluster();
    workload_ = &w;
    const std::size_t n = w.jobs.size();
    job_unit_.assign(n, kNoUnit);
    held_milli_.assign(n, 0);
    pool_gpu_memory_.assign(cluster_->pool_count(), 100);
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
      const models::GpuType* type = models::find_gpu_type(cluster_->spec().pools[p].gpu_type);
      if (type == nullptr || type->memory_gib <= 0) continue;
      const auto mib = static_cast<std::int64_t>(std::floor(type->memory_gib * 1024.0));
      pool_gpu_memory_[p] = std::max<std::int64_t>(100, mib - mib % 100);
    }
    terminating_.assign(n, 0);
    victim_of_.assign(n, kNoUnit);
    reasons_.assign(n, Reason::None);
    group_size_.assign(w.groups.size(), 0);
    group_unit_.assign(w.groups.size(), kNoUnit);
    for (const auto& j : w.jobs)
      if (j.group != models::kNone && j.group < group_size_.size()) ++group_size_[j.group];
    // The tree: node 0 is the root; declared queues in creation order.
    nodes_.emplace_back();
    nodes_[0].name = "<root>";
    nodes_[0].res.fill(QueueResource{-1, 1, -1});
    for (const auto& q : cfg_.queues) {
      QNode node;
      node.name = q.name;
      node.priority = q.priority;
      node.res = q.resources;
      if (cfg_.gpu_sharing) {  // GPU amounts in milli-GPUs
        if (node.res[0].quota > 0) node.res[0].quota *= 1000;
        if (node.res[0].limit > 0) node.res[0].limit *= 1000;
      }
      node.declared = true;
      node.creation = static_cast<int>(nodes_.size());
      by_name_[q.name] = static_cast<int>(nodes_.size());
      nodes_.push_back(std::move(node));
    }
    for (std::size_t i = 0; i < cfg_.queues.size(); ++i) {
      const int id = static_cast<int>(i) + 1;
      const auto& parent = cfg_.queues[i].parent;
      nodes_[id].parent = parent.empty() ? 0 : by_name_.at(parent);
      nodes_[nodes_[id].parent].children.push_back(id);
    }
    // Min runtimes are inherited from the closest ancestor that sets them.
    for (std::size_t i = 0; i < cfg_.queues.size(); ++i) {
      const int id = static_cast<int>(i) + 1;
      Tick pmr = -1, rmr = -1;
      for (int a = id; a > 0; a = nodes_[a].parent) {
        const auto& q = cfg_.queues[static_cast<std::size_t>(a - 1)];
        if (pmr < 0) pmr = q.preempt_min_runtime;
        if (rmr < 0) rmr = q.reclaim_min_runtime;
      }
      nodes_[id].preempt_min_runtime = pmr < 0 ? cfg_.preempt_min_runtime : pmr;
      nodes_[id].reclaim_min_runtime = rmr < 0 ? cfg_.reclaim_min_runtime : rmr;
    }
    for (std::size_t i = 1; i < nodes_.size(); ++i)
      for (int a = nodes_[i].parent; a > 0; a = nodes_[a].parent) ++nodes_[i].depth;
    rebuild_leaves();
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
      largest_gpus_per_node_ = std::max(largest_gpus_per_node_, cluster_->spec().pools[p].gpus_per_node);
    total_ = {view.cluster().total_gpus() * (cfg_.gpu_sharing ? 1000 : 1), 0, 0};
    for (const auto& node : view.cluster().nodes()) {
      total_[1] += std::int64_t{node.cpus} * 1000;
      total_[2] += node.memory_mib;
    }
  }

  void rebuild_leaves() {
    leaves_.clear();
    for (std::size_t i = 1; i < nodes_.size(); ++i)
      if (nodes_[i].children.empty()) leaves_.push_back(static_cast<int>(i));
    for (std::size_t i = 1; i < nodes_.size(); ++i) {
      QNode& q = nodes_[i];
      q.unlimited = q.unquoted = true;
      for (int a = static_cast<int>(i); a > 0; a = nodes_[a].parent) {
        for (int r = 0; r < kResources; ++r) {
          if (nodes_[a].res[r].limit >= 0) q.unlimited = false;
          if (nodes_[a].res[r].quota >= 0) q.unquoted = false;
        }
      }
    }
  }

  int leaf_for(models::QueueId qid) {
    const std::string& name = workload_->queues.size() > qid ? workload_->queues.name(qid) : std::string("default");
    if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
    // An undeclared queue: top level, Helm defaults (quota 0, overQuotaWeight 1, limit -1).
    QNode node;
    node.name = name;
    node.res[0] = QueueResource{0, 1, -1};
    node.res[1] = node.res[2] = QueueResource{-1, 1, -1};
    node.parent = 0;
    node.creation = static_cast<int>(nodes_.size());
    node.preempt_min_runtime = cfg_.preempt_min_runtime;
    node.reclaim_min_runtime = cfg_.reclaim_min_runtime;
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(node));
    nodes_[0].children.push_back(id);
    by_name_[name] = id;
    rebuild_leaves();
    return id;
  }

  std::uint32_t unit_of(const Job& job, JobIndex j) {
    if (job_unit_[j] != kNoUnit) return job_unit_[j];
    std::uint32_t u = kNoUnit;
    if (job.group != models::kNone && job.group < group_unit_.size()) {
      if (group_unit_[job.group] == kNoUnit) {
        group_unit_[job.group] = static_cast<std::uint32_t>(units_.size());
        units_.emplace_back();
      }
      u = group_unit_[job.group];
    } else {
      u = static_cast<std::uint32_t>(units_.size());
      units_.emplace_back();
    }
    job_unit_[j] = u;
    return u;
  }

  // ----- bookkeeping ---------------------------------------------------------------------------
  void add_path(int q, Amounts QNode::*field, const Amounts& a, std::int64_t sign) {
    for (int n = q; n >= 0; n = nodes_[n].parent) add(nodes_[n].*field, a, sign);
  }

  void add_pending(const ClusterView& view, JobIndex j) {
    Unit& u = units_[job_unit_[j]];
    ++u.pending;
    count_pending(view.workload().jobs[j], 1);
    add_path(u.queue, &QNode::pending, demand(view.workload().jobs[j]), 1);
    refresh(job_unit_[j], view.now());
  }

  static QNode::PendKey pend_key(const Unit& u, int tier, std::uint32_t id) {
    return {-u.priority, tier,          u.created,      id,
            u.single,    u.simple_gpus, u.simple_multi, u.simple_gpus > 0 && u.min_member == 1};
  }

  // Puts a pending unit's key back when its copy of the unit's single and simple_* is out of date
  // (a member was added that does not wait); its place in the order is the same.
  void rekey_pending(std::uint32_t id) {
    Unit& u = units_[id];
    if (!u.in_pending) return;
    const QNode::PendKey pk = pend_key(u, u.pkey.tier, id);
    if (pk == u.pkey) return;
    QNode& leaf = nodes_[u.queue];
    leaf.pending_units.erase(u.pkey);
    leaf.pending_units.insert(pk);
    u.pkey = pk;
  }

  // Re-keys the unit in its leaf's pending and running sets and its staleness.
  void refresh(std::uint32_t id, Tick now) {
    Unit& u = units_[id];
    QNode& leaf = nodes_[u.queue];
    const bool pend = u.pending > 0 && !u.pipelined;
    const int tier = u.running < u.min_member ? 0 : (u.running == u.min_member ? 1 : 2);
    const QNode::PendKey pk = pend_key(u, tier, id);
    if (u.in_pending && (!pend || pk != u.pkey)) {
      if (in_allocate_ && leaf.cursor != leaf.pending_units.end() && *leaf.cursor == u.pkey) ++leaf.cursor;
      leaf.pending_units.erase(u.pkey);
      u.in_pending = false;
    }
    if (pend && !u.in_pending) {
      u.pkey = pk;
      leaf.pending_units.insert(pk);
      u.in_pending = true;
    }
    const bool run = u.running > 0;
    const QNode::RunKey rk{u.priority, -u.created, -static_cast<std::int64_t>(id)};
    if (u.in_running && !run) {
      leaf.running_units.erase(u.rkey);
      u.in_running = false;
    }
    if (run && !u.in_running) {
      u.rkey = rk;
      leaf.running_units.insert(rk);
      u.in_running = true;
    }
    const bool stale = u.running > 0 && u.running + u.succeeded < u.min_member;
    if (stale && u.stale_since < 0) {
      u.stale_since = now;
      stale_.insert({now, id});
    } else if (!stale && u.stale_since >= 0) {
      stale_.erase({u.stale_since, id});
      u.stale_since = -1;
    }
  }

  void advance_usage(Tick now) {
    if (!cfg_.time_based_fairshare || now <= usage_at_) {
      usage_at_ = std::max(usage_at_, now);
      return;
    }
    const auto dt = static_cast<double>(now - usage_at_);
    double decay = 1.0, integral = dt;
    if (cfg_.half_life > 0) {
      const double h = static_cast<double>(cfg_.half_life);
      decay = std::pow(0.5, dt / h);
      integral = h / std::log(2.0) * (1.0 - decay);
    }
    for (int q : leaves_)
      nodes_[q].usage = nodes_[q].usage * decay + static_cast<double>(nodes_[q].alloc[0]) * integral;
    window_ = window_ * decay + integral;
    usage_at_ = now;
  }

  // ----- fair share ----------------------------------------------------------------------------
  void compute_fair_shares(const ClusterView& view) {
    (void)view;
    // Usage of internal queues: the sum of their leaves'.
    std::vector<double> usage(nodes_.size(), 0.0);
    for (int q : leaves_)
      for (int a = q; a >= 0; a = nodes_[a].parent) usage[static_cast<std::size_t>(a)] += nodes_[q].usage;
    const double capacity = static_cast<double>(total_[0]) * window_;
    nodes_[0].fair = total_;
    nodes_[0].allocatable = total_;
    divide_children(0, usage, capacity);
  }

  void divide_children(int parent, const std::vector<double>& usage, double capacity) {
    const auto& kids = nodes_[parent].children;
    if (kids.empty()) return;
    for (int r = 0; r < kResources; ++r) {
      std::vector<DivisionEntry> entries;
      for (int c : kids) {
        const QNode& q = nodes_[c];
        DivisionEntry e;
        e.deserved = q.res[r].quota;
        e.limit = q.res[r].limit;
        e.request = q.alloc[r] + q.pending[r];
        e.weight = q.res[r].over_quota_weight;
        e.priority = q.priority;
        e.usage = r == 0 && capacity > 0 ? usage[static_cast<std::size_t>(c)] / capacity : 0.0;
        e.creation = q.creation;
        entries.push_back(e);
      }
      const auto fs = divide(entries, nodes_[parent].fair[r], cfg_.k_value, r == 0 && cfg_.gpu_sharing ? 1000 : 1);
      for (std::size_t i = 0; i < kids.size(); ++i) {
        QNode& q = nodes_[kids[i]];
        q.fair[r] = fs[i];
        const std::int64_t limit = q.res[r].limit < 0 ? kInf : q.res[r].limit;
        const std::int64_t deserved = q.res[r].quota < 0 ? kInf : q.res[r].quota;
        q.allocatable[r] = std::min(limit, std::max(deserved, fs[i]));
      }
    }
    for (int c : kids) divide_children(c, usage, capacity);
  }

  bool active(int r) const { return total_[r] > 0; }

  // ----- job order -----------------------------------------------------------------------------
  // The pods the group's next attempt places: up to minMember, then one at a time.
  static int wanted(const Unit& u) { return u.running < u.min_member ? u.min_member - u.running : 1; }
  bool placeable(const ClusterView& view, JobIndex j) const {
    return view.state(j) == JobState::Pending && !terminating_[j] && !view.retrying(j);
  }
  // Calls `take` with each of the next attempt's pods in member order; false when fewer than
  // wanted are there (`take` has then seen only those).
  template <typename Take>
  bool each_next_pod(const ClusterView& view, const Unit& u, Take take) const {
    const int want = wanted(u);
    int have = 0;
    for (JobIndex j : u.members) {
      if (have == want) break;
      if (placeable(view, j)) {
        take(j);
        ++have;
      }
    }
    return have == want;
  }

  std::vector<JobIndex> next_pods(const ClusterView& view, const Unit& u) const {
    std::vector<JobIndex> pods;
    if (!each_next_pod(view, u, [&](JobIndex j) { pods.push_back(j); })) pods.clear();
    return pods;
  }

  // pods_demand(next_pods(view, u)) without building the list; false when next_pods is empty.
  bool next_demand(const ClusterView& view, const Unit& u, Amounts& req) const {
    return each_next_pod(view, u, [&](JobIndex j) { add(req, demand(workload_->jobs[j])); });
  }

  // next_demand, read from the unit for a lone plain pod with minMember 1 (it is wanted when it is
  // placeable: nothing of the unit runs then).
  bool simple_next_demand(const ClusterView& view, const Unit& u, Amounts& req) const {
    if (u.simple_gpus == 0 || u.min_member != 1) return next_demand(view, u, req);
    if (!placeable(view, u.single)) return false;
    add(req, simple_demand(u));
    return true;
  }

  Amounts pods_demand(const std::vector<JobIndex>& pods) const {
    Amounts a{};
    for (JobIndex j : pods) add(a, demand(workload_->jobs[j]));
    return a;
  }

  double share(const Amounts& a) const {
    double s = 0;
    for (int r = 0; r < kResources; ++r)
      if (active(r)) s = std::max(s, static_cast<double>(a[r]) / static_cast<double>(total_[r]));
    return s;
  }

  struct Candidate {
    int node = -1;  // the child queue
    int leaf = -1;
    Amounts req{};
  };

  // queue_order.go: true if a goes before b.
  bool queue_before(const Candidate& ca, const Candidate& cb) const {
    const QNode& a = nodes_[ca.node];
    const QNode& b = nodes_[cb.node];
    auto within = [&](const QNode& q, const Amounts& field_limit, const Amounts& req) {
      for (int r = 0; r < kResources; ++r)
        if (active(r) && q.alloc[r] + req[r] > field_limit[r]) return false;
      return true;
    };
    const Amounts none{};
    const bool a_fair = within(a, a.fair, none), b_fair = within(b, b.fair, none);
    if (a_fair != b_fair) return a_fair;
    auto deserved = [&](const QNode& q) {
      Amounts d{};
      for (int r = 0; r < kResources; ++r) d[r] = q.res[r].quota < 0 ? kInf : q.res[r].quota;
      return d;
    };
    const bool a_quota = within(a, deserved(a), ca.req), b_quota = within(b, deserved(b), cb.req);
    if (a_quota != b_quota) return a_quota;
    if (a.priority != b.priority) return a.priority > b.priority;
    auto zero_share = [&](const QNode& q, const Amounts& req) {
      for (int r = 0; r < kResources; ++r)
        if (active(r) && req[r] > 0 && q.allocatable[r] == 0) return true;
      return false;
    };
    const bool a_zero = zero_share(a, ca.req), b_zero = zero_share(b, cb.req);
    if (a_zero != b_zero) return b_zero;
    Amounts aw = a.alloc, bw = b.alloc;
    add(aw, ca.req);
    add(bw, cb.req);
    const double sa = share(aw), sb = share(bw);
    if (sa != sb) return sa < sb;
    const double sa0 = share(a.alloc), sb0 = share(b.alloc);
    if (sa0 != sb0) return sa0 < sb0;
    for (int r = 0; r < kResources; ++r)
      if (active(r) && a.allocatable[r] != b.allocatable[r]) return a.allocatable[r] < b.allocatable[r];
    return a.creation < b.creation;
  }

  // The leaf whose next job comes first under `node`, or -1.
  int pick(int node) { return pick_candidate(node).leaf; }

  Candidate pick_candidate(int node) {
    Candidate best;
    for (int c : nodes_[node].children) {
      Candidate cand;
      if (nodes_[c].children.empty()) {
        QNode& leaf = nodes_[c];
        // Skip groups whose pods are not all there yet.
        while (leaf.cursor != leaf.pending_units.end()) {
          const QNode::PendKey& k = *leaf.cursor;
          if (k.single != models::kNoJob) {  // the common case, without building a pod list
            const JobIndex j = k.single;
            if (placeable(*view_, j)) {
              cand = Candidate{c, c, k.simple_gpus > 0 ? simple_demand(k.simple_gpus) : demand(workload_->jobs[j])};
              break;
            }
          }
          const Unit& u = units_[k.unit];
          if (Amounts req{}; next_demand(*view_, u, req)) {
            cand = Candidate{c, c, req};
            break;
          }
          for (JobIndex j : u.members)
            if (view_->state(j) == JobState::Pending) set_reason(j, Reason::GangIncomplete);
          ++leaf.cursor;
        }
        if (cand.leaf < 0) continue;
      } else {
        Candidate sub = pick_candidate(c);
        if (sub.leaf < 0) continue;
        cand = Candidate{c, sub.leaf, sub.req};
      }
      if (best.leaf < 0 || queue_before(cand, best)) best = cand;
    }
    return best;
  }

  // ----- placement -----------------------------------------------------------------------------
  bool pool_ok(models::PoolId p, const Job& job) const { return pool_eligible(*cluster_, p, job, *workload_); }

  static bool fits_cpu_mem(const models::Node& node, const Free& f, const Job& job) {
    if (node.cpus > 0 && job.cpus > f.cpus) return false;
    if (node.memory_mib > 0 && job.memory_mib > f.memory) return false;
    return true;
  }

  // Whether the pod needs more than one node.
  bool multi_node(const Job& job) const {
    if (job.gpu_type == 0) return job.gpus > largest_gpus_per_node_;  // every pool is eligible
    std::int32_t largest = 0;
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
      if (pool_ok(p, job)) largest = std::max(largest, cluster_->spec().pools[p].gpus_per_node);
    return job.gpus > largest;
  }

  // The node that pack.go / spread.go scores best for a single-node pod, or kNoNode.
  NodeId best_node(const Job& job, Overlay& ov, NodeId exclude) const {
    const bool spread = job.gpus > 0 ? cfg_.gpu_placement == PlacementStrategy::Spread
                                     : cfg_.cpu_placement == PlacementStrategy::Spread;
    NodeId best = kNoNode;
    std::int64_t best_free = 0;
    auto consider = [&](NodeId n, std::int64_t free) {
      if (best == kNoNode || (spread ? free > best_free : free < best_free) || (free == best_free && n < best)) {
        best = n;
        best_free = free;
      }
    };
    const auto& nodes = cluster_->nodes();
    if (job.gpus > 0) {
      for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
        if (!pool_ok(p, job)) continue;
        const std::int32_t g = cluster_->spec().pools[p].gpus_per_node;
        if (job.gpus > g) continue;
        bool found = false;
        for (std::int32_t k = 0; k <= g - job.gpus && !found; ++k) {
          const std::int32_t f = spread ? g - k : job.gpus + k;
          for (NodeId n : cluster_->nodes_with_free(p, f)) {
            if (n == exclude || ov.find(n) != nullptr || outside_domain(n)) continue;
            if (!fits_cpu_mem(nodes[n], ov.get(*cluster_, n), job)) continue;
            consider(n, f);
            found = true;
            break;
          }
        }
      }
      for (const Free& f : ov.nodes) {
        const auto& node = nodes[f.node];
        if (f.node == exclude || !node.up || !pool_ok(node.pool, job) || outside_domain(f.node)) continue;
        if (f.gpus >= job.gpus && fits_cpu_mem(node, f, job)) consider(f.node, f.gpus);
      }
      return best;
    }
    // CPU-only pods: scored on free CPU (or free GPUs where CPUs are not modelled).
    for (NodeId n = 0; n < nodes.size(); ++n) {
      const auto& node = nodes[n];
      if (n == exclude || !node.up || !pool_ok(node.pool, job) || outside_domain(n)) continue;
      const Free f = ov.get(*cluster_, n);
      if (!fits_cpu_mem(node, f, job)) continue;
      consider(n, node.cpus > 0 ? f.cpus : f.gpus);
    }
    return best;
  }

  // A fractional pod (gpuSharing): the node and device it goes to, or kNoNode. Nodes with a shared
  // device the pod fits on come first (plugins/gpusharingorder: score 1000, above nodeplacement's
  // at most 9), then binpack / spread on whole free GPUs as for other pods, then the lowest index.
  // On the node (framework FittingGPUs, plugins/gpupack, gpuspread): binpack takes the most used
  // shared device with room, else a whole free GPU; spread a whole free GPU, else the least used
  // shared device; equal devices go to the lowest index. Only pools of whole GPUs hold shares.
  // A gpu-memory pod takes its fraction on each node's GPU type (share_milli); it is returned third.
  std::tuple<NodeId, std::int32_t, std::int32_t> best_share(const Job& job, Overlay& ov, NodeId exclude) const {
    const bool spread = cfg_.gpu_placement == PlacementStrategy::Spread;
    NodeId best = kNoNode;
    std::int32_t best_dev = 0, best_milli = 0;
    std::tuple<bool, std::int64_t> best_key{};
    const auto& nodes = cluster_->nodes();
    for (NodeId n = 0; n < nodes.size(); ++n) {
      const auto& node = nodes[n];
      if (n == exclude || !node.up || !pool_ok(node.pool, job) || outside_domain(n)) continue;
      if (cluster_->spec().pools[node.pool].units_per_gpu != 1) continue;
      const std::int32_t m = share_milli(job, node.pool);
      if (m <= 0) continue;
      const Free f = ov.get(*cluster_, n);
      if (!fits_cpu_mem(node, f, job)) continue;
      std::int32_t shared = -1, shared_used = 0, whole = -1;
      for (std::int32_t d = 0; d < node.gpus; ++d) {
        const std::int32_t used = Overlay::used_milli(*cluster_, f, d);
        if (used == 0) {
          if (whole < 0) whole = d;
        } else if (used + m <= 1000 && (shared < 0 || (spread ? used < shared_used : used > shared_used))) {
          shared = d;
          shared_used = used;
        }
      }
      if (f.gpus < 1) whole = -1;
      if (shared < 0 && whole < 0) continue;
      if (job.gpu_milli == 0 && m > share_budget_) {  // the per-node capacity check (attempt)
        share_budget_hit_ = true;
        continue;
      }
      const std::int32_t dev = shared >= 0 && (!spread || whole < 0) ? shared : whole;
      // Smaller is better: a node without a fitting shared device after one with it.
      const std::tuple<bool, std::int64_t> key{shared < 0, spread ? -f.gpus : f.gpus};
      if (best == kNoNode || key < best_key) {
        best = n;
        best_dev = dev;
        best_milli = m;
        best_key = key;
      }
    }
    return {best, best_dev, best_milli};
  }

  // A pod larger than a node: the nodes with the most free GPUs first, within one pool.
  std::optional<models::Placement> multi_node_placement(const Job& job, Overlay& ov) const {
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
      if (!pool_ok(p, job)) continue;
      if (domain_ != nullptr) {  // topology: inside the domain's nodes of the pool
        std::vector<std::pair<std::int64_t, NodeId>> in;
        for (NodeId n = 0; n < cluster_->nodes().size(); ++n)
          if ((*domain_)[n] && cluster_->node(n).up && cluster_->node(n).pool == p)
            in.emplace_back(ov.get(*cluster_, n).gpus, n);
        if (auto out = fill_most_free(std::move(in), job.gpus)) return out;
        continue;
      }
      // What the pool has free under this statement.
      std::int64_t available = cluster_->pool_free_gpus(p);
      std::vector<std::pair<std::int64_t, NodeId>> changed;  // overlay nodes of this pool: -free, id
      for (const Free& f : ov.nodes) {
        const auto& node = cluster_->node(f.node);
        if (node.pool != p || !node.up) continue;
        available += f.gpus - node.free_gpus;
        if (f.gpus > 0) changed.emplace_back(-f.gpus, f.node);
      }
      if (available < job.gpus) continue;
      std::sort(changed.begin(), changed.end());
      // The nodes with the most free GPUs first (lowest id first among equals), from the index.
      models::Placement out;
      std::int64_t left = job.gpus;
      std::size_t ci = 0;
      auto take = [&](NodeId n, std::int64_t free) {
        const std::int64_t t = std::min(left, free);
        out.push_back(models::Slice{n, static_cast<std::int32_t>(t), 0, 0});
        left -= t;
      };
      for (std::int32_t f = cluster_->spec().pools[p].gpus_per_node; f >= 1 && left > 0; --f) {
        while (left > 0 && ci < changed.size() && -changed[ci].first >= f) {
          take(changed[ci].second, -changed[ci].first);
          ++ci;
        }
        for (NodeId n : cluster_->nodes_with_free(p, f)) {
          if (left == 0) break;
          if (ov.find(n) != nullptr) continue;
          take(n, f);
        }
      }
      while (left > 0 && ci < changed.size()) {
        take(changed[ci].second, -changed[ci].first);
        ++ci;
      }
      if (left == 0) return out;
    }
    return std::nullopt;
  }

  // Places the pods one after the other on the overlay; all or nothing. With a topology constraint,
  // inside the first of the plugin's domains that holds them all (kai_topology.hpp).
  std::optional<std::vector<models::Placement>> place(const std::vector<JobIndex>& pods, Overlay& ov,
                                                      NodeId exclude = kNoNode) const {
    if (!topology_applies(pods)) return place_pods(pods, ov, exclude);
    std::vector<char> mask(cluster_->nodes().size(), 0);
    for (const models::SwitchId d : topology_domains_of(pods, ov)) {
      domain_mask(*cluster_->spec().topology, d, mask);
      Overlay trial = ov;
      domain_ = &mask;
      auto out = place_pods(pods, trial, exclude);
      domain_ = nullptr;
      if (out) {
        ov = std::move(trial);
        return out;
      }
    }
    return std::nullopt;
  }

  bool outside_domain(NodeId n) const { return domain_ != nullptr && !(*domain_)[n]; }

  bool topology_applies(const std::vector<JobIndex>& pods) const {
    return !pods.empty() && cluster_->spec().topology && cfg_.topology.applies_to(workload_->jobs[pods[0]].kind);
  }

  std::vector<models::SwitchId> topology_domains_of(const std::vector<JobIndex>& pods, Overlay& ov) const {
    std::vector<NodeFree> free(cluster_->nodes().size(), NodeFree{});
    bool cpus = false, memory = false;  // modelled where some node has them (as fits_cpu_mem)
    for (NodeId n = 0; n < free.size(); ++n) {
      const auto& node = cluster_->node(n);
      cpus = cpus || node.cpus > 0;
      memory = memory || node.memory_mib > 0;
      if (!node.up) continue;
      const Free f = ov.get(*cluster_, n);
      free[n] = {f.gpus, f.cpus, f.memory};
    }
    std::vector<NodeFree> shapes;
    bool multi = false;
    for (JobIndex j : pods) {
      const Job& job = workload_->jobs[j];
      shapes.push_back({job.gpus, cpus ? job.cpus : 0, memory ? job.memory_mib : 0});
      multi = multi || multi_node(job);
    }
    std::vector<NodeId> held;
    for (JobIndex j : active_members(units_[job_unit_[pods[0]]]))
      for (const auto& sl : view_->placement(j)) held.push_back(sl.node);
    return topology_domains(*cluster_->spec().topology, cfg_.topology, free, shapes, multi, held);
  }

  std::optional<std::vector<models::Placement>> place_pods(const std::vector<JobIndex>& pods, Overlay& ov,
                                                           NodeId exclude) const {
    // What this attempt's gpu-memory pods take from share_budget_ comes back after it.
    struct Restore {
      std::int64_t& budget;
      std::int64_t saved;
      ~Restore() { budget = saved; }
    } restore{share_budget_, share_budget_};
    std::vector<models::Placement> out;
    for (JobIndex j : pods) {
      const Job& job = workload_->jobs[j];
      models::Placement p;
      if (is_share(job)) {
        const auto [n, dev, milli] = best_share(job, ov, exclude);
        if (n == kNoNode) return std::nullopt;
        if (job.gpu_milli == 0 && share_budget_ < kInf) share_budget_ -= milli;
        p = models::Placement{models::Slice{n, 0, job.cpus, job.memory_mib, milli, dev}};
      } else if (multi_node(job)) {
        auto mp = multi_node_placement(job, ov);
        if (!mp) return std::nullopt;
        p = std::move(*mp);
      } else {
        const NodeId n = best_node(job, ov, exclude);
        if (n == kNoNode) return std::nullopt;
        p = models::Placement{models::Slice{n, job.gpus, job.cpus, job.memory_mib}};
      }
      ov.take(*cluster_, p, 1);
      out.push_back(std::move(p));
    }
    return out;
  }

  // Resources that pipelined groups will bind to once their victims are gone.
  void reserve(const models::Placement& p, std::int64_t sign) {
    for (const auto& sl : p) {
      Free& r = reserved_[sl.node];
      r.node = sl.node;
      r.gpus += sign * sl.gpus;
      r.cpus += sign * sl.cpus;
      r.memory += sign * sl.memory_mib;
      if (sl.gpu_milli > 0) {
        if (r.dev.empty()) r.dev.assign(static_cast<std::size_t>(cluster_->node(sl.node).gpus), 0);
        r.dev[static_cast<std::size_t>(sl.device)] += static_cast<std::int32_t>(sign) * sl.gpu_milli;
      }
      if (r.gpus == 0 && r.cpus == 0 && r.memory == 0 &&
          std::all_of(r.dev.begin(), r.dev.end(), [](std::int32_t m) { return m == 0; }))
        reserved_.erase(sl.node);
    }
  }

  // A fresh statement: the cluster plus what the victims of pipelined groups are releasing, minus
  // the reservations of those groups.
  // With `now`, only what is free at this instant (for binding rather than pipelining).
  Overlay base(bool now = false) const {
    Overlay ov;
    for (const auto& [n, r] : reserved_) {
      const auto& node = cluster_->node(n);
      ov.nodes.push_back(
          Free{n, node.free_gpus - r.gpus, node.free_cpus - r.cpus, node.free_memory_mib - r.memory, {}});
      for (std::size_t d = 0; d < r.dev.size(); ++d)
        if (r.dev[d] != 0) Overlay::share(*cluster_, ov.nodes.back(), static_cast<std::int32_t>(d), r.dev[d]);
    }
    for (JobIndex j : releasing_) ov.take(*cluster_, view_->placement(j), -1);
    if (now) {
      for (Free& f : ov.nodes) {
        const auto& node = cluster_->node(f.node);
        f.gpus = std::min<std::int64_t>(f.gpus, node.free_gpus);
        f.cpus = std::min<std::int64_t>(f.cpus, node.free_cpus);
        f.memory = std::min(f.memory, node.free_memory_mib);
        for (std::size_t d = 0; d < f.dev.size(); ++d)
          f.dev[d] = std::max(f.dev[d], cluster_->device_milli(f.node, static_cast<std::int32_t>(d)));
      }
    }
    return ov;
  }

  void count_pending(const Job& job, std::int64_t sign) {
    const bool simple = job.group == models::kNone && job.gpus > 0 && !is_share(job) && job.gpu_type == 0 &&
                        job.cpus == 0 && job.memory_mib == 0;
    if (!simple) {
      other_pending_ += sign;
    } else if (multi_node(job)) {
      if ((multi_pending_[job.gpus] += sign) == 0) multi_pending_.erase(job.gpus);
    } else {
      if (single_pending_.size() <= static_cast<std::size_t>(job.gpus)) single_pending_.resize(job.gpus + 1u, 0);
      single_pending_[static_cast<std::size_t>(job.gpus)] += sign;
    }
  }

  // Whether every pending pod is at least as large as one of its shape that failed this session.
  bool all_would_fail() const {
    if (other_pending_ > 0) return false;
    if (!multi_pending_.empty() && multi_pending_.begin()->first < min_failed_multi_gpus_) return false;
    const auto upto = static_cast<std::size_t>(
        std::min<std::int64_t>(min_failed_plain_gpus_, static_cast<std::int64_t>(single_pending_.size())));
    for (std::size_t g = 1; g < upto; ++g)
      if (single_pending_[g] > 0) return false;
    return true;
  }

  // ----- capacity checks -----------------------------------------------------------------------
  // `released` is subtracted from the leaf's path (victims of the same queue).
  Reason capacity(const Unit& u, const Amounts& req, const Amounts& released) const {
    return capacity(u.queue, u.priority, req, released);
  }
  Reason capacity(int queue, std::int32_t priority, const Amounts& req, const Amounts& released) const {
    const bool preemptible = Unit::preemptible_priority(priority);
    if (nodes_[queue].unlimited && (nodes_[queue].unquoted || preemptible)) return Reason::None;
    for (int q = queue; q > 0; q = nodes_[q].parent) {
      const QNode& n = nodes_[q];
      for (int r = 0; r < kResources; ++r) {
        if (req[r] <= 0) continue;
        if (n.res[r].limit >= 0 && n.alloc[r] - released[r] + req[r] > n.res[r].limit) return Reason::OverLimit;
      }
    }
    if (!preemptible) {
      for (int q = queue; q > 0; q = nodes_[q].parent) {
        const QNode& n = nodes_[q];
        for (int r = 0; r < kResources; ++r)
          if (req[r] > 0 && n.res[r].quota >= 0 && n.np_alloc[r] + req[r] > n.res[r].quota)
            return Reason::NonPreemptibleOverQuota;
      }
    }
    return Reason::None;
  }

  // The GPUs (milli) that gpu-memory pods of `u` may still take beside `other` without going over
  // a limit, or for a non-preemptible group over a quota, at the queue or an ancestor; and the
  // reason to give when a pod fits no node within it.
  std::pair<std::int64_t, Reason> share_room(const Unit& u, std::int64_t other) const {
    std::int64_t room = kInf;
    Reason why = Reason::OverLimit;
    for (int q = u.queue; q > 0; q = nodes_[q].parent) {
      const QNode& n = nodes_[q];
      if (n.res[0].limit >= 0) room = std::min(room, n.res[0].limit - n.alloc[0] - other);
    }
    if (!u.preemptible()) {
      for (int q = u.queue; q > 0; q = nodes_[q].parent) {
        const QNode& n = nodes_[q];
        if (n.res[0].quota >= 0 && n.res[0].quota - n.np_alloc[0] - other < room) {
          room = n.res[0].quota - n.np_alloc[0] - other;
          why = Reason::NonPreemptibleOverQuota;
        }
      }
    }
    return {room, why};
  }

  void set_reason(JobIndex j, Reason r) {
    if (reasons_[j] == r) return;
    reasons_[j] = r;
    if (session_ != nullptr) session_->pending_reason(j, reason_text(r));
  }

  // ----- allocate ------------------------------------------------------------------------------
  // attempt's fast path: a single plain pod (Unit::simple_gpus, spanning nodes or not) of a queue
  // with room for it, which one of its shape already showed cannot fit.
  bool known_no_fit(int queue, std::int32_t priority, std::int32_t simple_gpus, bool multi) const {
    return simple_gpus > 0 && simple_gpus >= (multi ? min_failed_multi_gpus_ : min_failed_plain_gpus_) &&
           capacity(queue, priority, simple_demand(simple_gpus), {}) == Reason::None;
  }
  Reason attempt(Session& s, std::uint32_t id) {
    Unit& u = units_[id];
    if (known_no_fit(u.queue, u.priority, u.simple_gpus, u.simple_multi)) {
      set_reason(u.single, Reason::NoFit);
      return Reason::NoFit;
    }
    const auto pods = next_pods(s, u);
    if (pods.empty()) return Reason::GangIncomplete;
    Amounts req = pods_demand(pods);
    // KAI's job-level capacity check counts a gpu-memory pod as 0 GPUs (GetGpusQuota); each node
    // is then checked with the pod's fraction there (IsTaskAllocationOnNodeOverCapacity,
    // GetRequiredInitQuota): best_share skips nodes where it exceeds the queue's room.
    std::int64_t memory_gpu = 0;
    for (JobIndex j : pods)
      if (is_share(workload_->jobs[j]) && workload_->jobs[j].gpu_milli == 0)
        memory_gpu += demand(workload_->jobs[j])[0];
    req[0] -= memory_gpu;
    Reason r = capacity(u, req, {});
    Reason budget_reason = Reason::None;
    if (memory_gpu > 0 && r == Reason::None) std::tie(share_budget_, budget_reason) = share_room(u, req[0]);
    std::optional<std::vector<models::Placement>> placements;
    // A single plain pod no smaller than one that already failed in this session cannot fit.
    const Job& first = workload_->jobs[pods[0]];
    const bool single =
        pods.size() == 1 && !is_share(first) && first.gpu_type == 0 && first.cpus == 0 && first.memory_mib == 0;
    const bool is_plain = single && !multi_node(first);
    const bool is_multi = single && !is_plain;
    if (r == Reason::None) {
      if ((is_plain && first.gpus >= min_failed_plain_gpus_) || (is_multi && first.gpus >= min_failed_multi_gpus_)) {
        r = Reason::NoFit;
      } else {
        Overlay ov = base(true);
        share_budget_hit_ = false;
        placements = place(pods, ov);
        share_budget_ = kInf;
        if (!placements && share_budget_hit_) {
          r = budget_reason;
        } else if (!placements && topology_applies(pods) && !is_plain) {
          r = cfg_.topology.required > 0 ? Reason::TopologyNoFit : Reason::NoFit;
        } else if (!placements) {  // a one-node pod fits a domain iff it fits a node
          r = Reason::NoFit;
          if (is_plain) min_failed_plain_gpus_ = first.gpus;
          if (is_multi) min_failed_multi_gpus_ = first.gpus;
        }
      }
    }
    if (r != Reason::None) {
      for (JobIndex j : pods) set_reason(j, r);
      return r;
    }
    for (std::size_t i = 0; i < pods.size(); ++i) start(s, pods[i], (*placements)[i], "allocate");
    refresh(id, s.now());
    return Reason::None;
  }

  void start(Session& s, JobIndex j, const models::Placement& p, std::string_view why) {
    const std::string err = s.start(j, p, why);
    if (!err.empty()) throw sim::InternalError("kai: start refused: " + err);
    const Job& job = workload_->jobs[j];
    Unit& u = units_[job_unit_[j]];
    --u.pending;
    count_pending(job, -1);
    ++u.running;
    held_milli_[j] = is_share(job) && job.gpu_milli == 0 ? p.at(0).gpu_milli : 0;
    add(u.running_req, held(j));
    add_path(u.queue, &QNode::pending, demand(job), -1);
    add_path(u.queue, &QNode::alloc, held(j), 1);
    if (!u.preemptible()) add_path(u.queue, &QNode::np_alloc, held(j), 1);
    set_reason(j, Reason::None);
  }

  // ----- evictions -----------------------------------------------------------------------------
  // Running members of a unit that are not terminating.
  std::vector<JobIndex> active_members(const Unit& u) const {
    std::vector<JobIndex> out;
    for (JobIndex j : u.members)
      if (view_->state(j) == JobState::Running && !terminating_[j]) out.push_back(j);
    return out;
  }

  bool protected_by_min_runtime(const Unit& v, Tick min_runtime, Tick now) {
    if (min_runtime <= 0) return false;
    bool prot = false;
    for (JobIndex j : active_members(v)) {
      const Tick until = view_->run_start(j) + min_runtime;
      if (until > now) {
        prot = true;
        protected_until_ = std::min(protected_until_, until);
      }
    }
    return prot;
  }

  void evict(Session& s, std::uint32_t victim, JobIndex by, std::uint32_t by_unit, const std::string& why) {
    Unit& v = units_[victim];
    for (JobIndex j : active_members(v)) {
      const std::string err = s.preempt(j, PreemptMode::Requeue, cfg_.termination_grace, by, why);
      if (!err.empty()) throw sim::InternalError("kai: preempt refused: " + err);
      terminating_[j] = 1;
      --v.running;
      add(v.running_req, held(j), -1);
      add_path(v.queue, &QNode::alloc, held(j), -1);
      if (!v.preemptible()) add_path(v.queue, &QNode::np_alloc, held(j), -1);
      if (by_unit != kNoUnit) {
        releasing_.insert(j);
        victim_of_[j] = by_unit;
        ++units_[by_unit].outstanding_victims;
      }
    }
    refresh(victim, s.now());
  }

  // The preemptor waits for its victims with its resources reserved in its queue.
  void pipeline(Session& s, std::uint32_t id, const std::vector<JobIndex>& pods,
                const std::vector<models::Placement>& plan) {
    Unit& u = units_[id];
    for (const auto& p : plan) reserve(p, 1);
    plans_[id] = plan;
    const Amounts req = pods_demand(pods);
    u.pipelined = true;
    u.reserved = req;
    add_path(u.queue, &QNode::pending, req, -1);
    add_path(u.queue, &QNode::alloc, req, 1);
    if (!u.preemptible()) add_path(u.queue, &QNode::np_alloc, req, 1);
    pipelined_.insert(id);
    for (JobIndex j : pods) set_reason(j, Reason::Pipelined);
    refresh(id, s.now());
  }

  Amounts unit_alloc(const Unit& v) const { return v.running_req; }

  // Tries victims in order until the preemptor's pods fit; returns the victims or nothing.
  // `next(v)` yields the candidates in order (false at the end); `accept(v)` says whether v may be
  // a victim.
  template <class Next, class Accept>
  std::optional<std::vector<std::uint32_t>> solve(const std::vector<JobIndex>& pods, Next&& next, Accept&& accept,
                                                  std::vector<models::Placement>& plan) {
    Overlay ov = base();
    std::vector<std::uint32_t> chosen;
    const Amounts req = pods_demand(pods);
    std::int64_t freed = 0;
    for (std::uint32_t v = 0; next(v);) {
      if (!accept(v)) continue;
      chosen.push_back(v);
      for (JobIndex j : active_members(units_[v])) ov.take(*cluster_, view_->placement(j), -1);
      freed += units_[v].running_req[0];
      // (Whole free GPUs bound what can fit, except for shares, which also fit on shared devices.)
      if (!cfg_.gpu_sharing && freed + cluster_->free_gpus() < req[0]) continue;
      Overlay trial = ov;
      if (auto p = place(pods, trial)) {
        plan = std::move(*p);
        return chosen;
      }
    }
    return std::nullopt;
  }

  // Ancestors of q from q up to (excluding) the root.
  std::vector<int> path(int q) const {
    std::vector<int> out;
    for (int n = q; n > 0; n = nodes_[n].parent) out.push_back(n);
    return out;
  }

  // The children of the lowest common ancestor on the sides of a and b.
  std::pair<int, int> below_lca(int a, int b) const {
    auto pa = path(a), pb = path(b);
    std::reverse(pa.begin(), pa.end());
    std::reverse(pb.begin(), pb.end());
    std::size_t i = 0;
    while (i < pa.size() && i < pb.size() && pa[i] == pb[i]) ++i;
    return {pa[std::min(i, pa.size() - 1)], pb[std::min(i, pb.size() - 1)]};
  }

  double saturation(const QNode& q, const Amounts& alloc) const {
    double s = 0;
    for (int r = 0; r < kResources; ++r) {
      if (!active(r)) continue;
      if (q.fair[r] <= 0) {
        if (alloc[r] > 0) return std::numeric_limits<double>::infinity();
        continue;
      }
      s = std::max(s, static_cast<double>(alloc[r]) / static_cast<double>(q.fair[r]));
    }
    return s;
  }

  bool reclaim(Session& s, std::uint32_t id, int& searches) {
    Unit& u = units_[id];
    const QNode& leaf = nodes_[u.queue];
    // A queue at or above its fair share of GPUs cannot reclaim for a group whose every pod asks
    // for a GPU (the eligibility check below fails for its next pods, whichever they are).
    if (!cfg_.gpu_sharing && active(0) && u.members_without_gpus == 0 && leaf.alloc[0] >= leaf.fair[0]) return false;
    // Most failed groups are turned away by the checks below: their pod list is built after them.
    Amounts req{};
    if (!simple_next_demand(s, u, req)) return false;
    // Reclaimer eligibility: allocated + req <= fairShare.
    for (int r = 0; r < kResources; ++r)
      if (active(r) && req[r] > 0 && leaf.alloc[r] + req[r] > leaf.fair[r]) return false;
    if (capacity(u, req, {}) != Reason::None) return false;
    // Victim queues: other leaves with running preemptible groups, most saturated first.
    std::vector<std::pair<double, int>> queues;
    for (int q : leaves_) {
      if (q == u.queue || nodes_[q].running_units.empty()) continue;
      if (std::get<0>(*nodes_[q].running_units.begin()) >= 100) continue;
      queues.emplace_back(-saturation(nodes_[q], nodes_[q].alloc), -nodes_[q].creation);
    }
    if (queues.empty()) return false;
    const auto pods = next_pods(s, u);
    ++searches;
    std::sort(queues.begin(), queues.end());
    // Candidates queue by queue; a queue whose victims no strategy allows is left at once (its
    // remaining allocation only shrinks).
    std::size_t qi = 0;
    bool queue_done = false, started = false;
    std::set<QNode::RunKey>::const_iterator it;
    auto next = [&](std::uint32_t& v) {
      while (qi < queues.size()) {
        const QNode& vq = nodes_[-queues[qi].second];  // creation == node index
        if (!started) {
          it = vq.running_units.begin();
          started = true;
        }
        if (queue_done || it == vq.running_units.end() || std::get<0>(*it) >= 100) {
          ++qi;
          queue_done = started = false;
          continue;
        }
        v = static_cast<std::uint32_t>(-std::get<2>(*it));
        ++it;
        return true;
      }
      return false;
    };
    const Tick now = s.now();
    std::map<int, Amounts> taken;  // per queue node: allocation of the chosen victims
    std::string rule;
    auto accept = [&](std::uint32_t v) {
      const Unit& vu = units_[v];
      if (protected_by_min_runtime(vu, nodes_[vu.queue].reclaim_min_runtime, now)) return false;
      const auto [a, b] = below_lca(vu.queue, u.queue);
      const QNode& vq = nodes_[a];
      const QNode& rq = nodes_[b];
      Amounts remaining = vq.alloc;
      if (auto it = taken.find(a); it != taken.end()) add(remaining, it->second, -1);
      const Amounts va = unit_alloc(vu);
      bool maintain = false;
      for (int r = 0; r < kResources; ++r)
        if (active(r) && va[r] > 0 && remaining[r] > vq.allocatable[r]) maintain = true;
      bool guarantee = true, above = false;
      for (int r = 0; r < kResources; ++r) {
        if (!active(r)) continue;
        const std::int64_t dq = rq.res[r].quota < 0 ? kInf : rq.res[r].quota;
        if (rq.alloc[r] + req[r] > dq) guarantee = false;
        const std::int64_t dv = vq.res[r].quota < 0 ? kInf : vq.res[r].quota;
        if (remaining[r] > dv) above = true;
      }
      guarantee = guarantee && above;
      if (!maintain && !guarantee) {
        queue_done = true;
        return false;
      }
      rule = maintain ? "MaintainFairShare" : "GuaranteeDeservedQuota";
      for (int n : path(vu.queue)) add(taken[n], va);
      return true;
    };
    std::vector<models::Placement> plan;
    auto victims = solve(pods, next, accept, plan);
    if (!victims) return false;
    // Saturation: up the reclaimer's ancestors, an over-served reclaimer must stay below every
    // sibling.
    for (int x : path(u.queue)) {
      Amounts after = nodes_[x].alloc;
      add(after, req);
      if (auto it = taken.find(x); it != taken.end()) add(after, it->second, -1);
      const double ratio = saturation(nodes_[x], after);
      if (ratio <= 1) continue;
      for (int sib : nodes_[nodes_[x].parent].children) {
        if (sib == x) continue;
        Amounts sa = nodes_[sib].alloc;
        if (auto it = taken.find(sib); it != taken.end()) add(sa, it->second, -1);
        if (!(ratio * cfg_.reclaimer_utilization_multiplier < saturation(nodes_[sib], sa))) return false;
      }
    }
    const JobIndex by = pods.front();
    for (std::uint32_t v : *victims)
      evict(s, v, by, id,
            "reclaim: " + rule + " (queue " + nodes_[units_[v].queue].name + " for queue " + leaf.name + ")");
    pipeline(s, id, pods, plan);
    return true;
  }

  bool preempt(Session& s, std::uint32_t id, int& searches) {
    Unit& u = units_[id];
    QNode& leaf = nodes_[u.queue];
    if (leaf.running_units.empty() || std::get<0>(*leaf.running_units.begin()) >= u.priority) return false;
    Amounts req{};
    if (!next_demand(s, u, req)) return false;
    // The preemptor's non-preemptible quota rule first (victims are preemptible: they do not
    // change allocatedNonPreemptible).
    if (!u.preemptible() && capacity(u, req, {}) == Reason::NonPreemptibleOverQuota) return false;
    const auto pods = next_pods(s, u);
    ++searches;
    const Tick now = s.now();
    Amounts released{};
    auto accept = [&](std::uint32_t v) {
      if (protected_by_min_runtime(units_[v], leaf.preempt_min_runtime, now)) return false;
      add(released, unit_alloc(units_[v]));
      return true;
    };
    // Victims until the pods fit and the limit holds.
    Overlay ov = base();
    std::vector<models::Placement> plan;
    std::vector<std::uint32_t> chosen;
    std::optional<std::vector<std::uint32_t>> victims;
    for (const auto& key : leaf.running_units) {
      if (std::get<0>(key) >= u.priority || std::get<0>(key) >= 100) break;
      const auto v = static_cast<std::uint32_t>(-std::get<2>(key));
      if (!accept(v)) continue;
      chosen.push_back(v);
      for (JobIndex j : active_members(units_[v])) ov.take(*cluster_, view_->placement(j), -1);
      if (capacity(u, req, released) != Reason::None) continue;
      Overlay trial = ov;
      if (auto p = place(pods, trial)) {
        plan = std::move(*p);
        victims = chosen;
        break;
      }
    }
    if (!victims) return false;
    for (std::uint32_t v : *victims)
      evict(s, v, pods.front(), id, "preempt: strictly lower priority in queue " + leaf.name);
    pipeline(s, id, pods, plan);
    return true;
  }

  bool consolidate(Session& s, std::uint32_t id, int& attempts) {
    Unit& u = units_[id];
    // A plain pod spanning nodes is never consolidated; the checks before `++attempts` have no
    // effect, so their order does not matter.
    if (u.simple_gpus > 0 && u.min_member == 1 && u.simple_multi) return false;
    // next_pods gives one pod only when one is wanted.
    if (wanted(u) != 1) return false;
    JobIndex first = models::kNoJob;
    if (!each_next_pod(s, u, [&](JobIndex j) { first = j; })) return false;
    const std::array<JobIndex, 1> pods{first};
    const Job& job = workload_->jobs[pods[0]];
    if (job.gpus <= 0 || is_share(job) || multi_node(job) || cfg_.max_consolidation_preemptees <= 0) return false;
    std::int64_t eligible_free = 0;
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
      if (pool_ok(p, job)) eligible_free += cluster_->pool_free_gpus(p);
    if (eligible_free < job.gpus) return false;
    ++attempts;
    const Tick now = s.now();
    int tried = 0;
    for (models::PoolId p = 0; p < cluster_->pool_count() && tried < kConsolidationNodesPerJob; ++p) {
      if (!pool_ok(p, job)) continue;
      const std::int32_t g = cluster_->spec().pools[p].gpus_per_node;
      if (job.gpus > g) continue;
      for (std::int32_t f = job.gpus - 1; f >= 0 && tried < kConsolidationNodesPerJob; --f) {
        for (NodeId n : cluster_->nodes_with_free(p, f)) {
          if (tried++ >= kConsolidationNodesPerJob) break;
          if (try_consolidate_on(s, id, pods[0], n, now)) return true;
        }
      }
    }
    return false;
  }

  bool try_consolidate_on(Session& s, std::uint32_t id, JobIndex pod, NodeId n, Tick now) {
    const Job& job = workload_->jobs[pod];
    std::vector<std::tuple<std::int32_t, Tick, JobIndex>> movable;  // gpus, -start, job
    for (JobIndex j : s.jobs_on_node(n)) {
      if (terminating_[j] || s.state(j) != JobState::Running) continue;
      const Unit& v = units_[job_unit_[j]];
      if (!v.preemptible() || v.members.size() != 1 || s.placement(j).size() != 1) continue;
      if (protected_by_min_runtime(v, nodes_[v.queue].preempt_min_runtime, now)) continue;
      movable.emplace_back(workload_->jobs[j].gpus, -s.run_start(j), j);
    }
    std::sort(movable.begin(), movable.end());
    Overlay ov = base();
    ov.at(*cluster_, n);
    std::vector<JobIndex> victims;
    for (const auto& [gpus, neg_start, j] : movable) {
      (void)gpus, (void)neg_start;
      const Free target = *ov.find(n);
      if (target.gpus >= job.gpus && fits_cpu_mem(cluster_->node(n), target, job)) break;
      if (static_cast<int>(victims.size()) >= cfg_.max_consolidation_preemptees) return false;
      victims.push_back(j);
      ov.take(*cluster_, s.placement(j), -1);
    }
    Free* t = ov.find(n);
    if (victims.empty() || t->gpus < job.gpus || !fits_cpu_mem(cluster_->node(n), *t, job)) return false;
    t->gpus -= job.gpus;
    t->cpus -= job.cpus;
    t->memory -= job.memory_mib;
    // Every victim must find a place elsewhere now.
    std::vector<JobIndex> order = victims;
    std::sort(order.begin(), order.end(), [&](JobIndex a, JobIndex b) {
      if (workload_->jobs[a].gpus != workload_->jobs[b].gpus) return workload_->jobs[a].gpus > workload_->jobs[b].gpus;
      return a < b;
    });
    for (JobIndex v : order)
      if (!place({v}, ov, n)) return false;
    for (JobIndex v : victims)
      evict(s, job_unit_[v], pod, id,
            "consolidation: moved off node " + std::to_string(n) + " to make room (re-placeable elsewhere)");
    pipeline(s, id, {pod}, {models::Placement{models::Slice{n, job.gpus, job.cpus, job.memory_mib}}});
    return true;
  }

  void stale_gang_eviction(Session& s) {
    const Tick now = s.now();
    while (!stale_.empty() && stale_.begin()->first + cfg_.staleness_grace <= now) {
      const std::uint32_t id = stale_.begin()->second;
      const Unit& u = units_[id];
      evict(s, id, models::kNoJob, kNoUnit,
            "stalegangeviction: " + std::to_string(u.running + u.succeeded) + " of minMember " +
                std::to_string(u.min_member) + " pods for longer than the staleness grace period");
      // evict() refreshes the unit, which leaves the stale set once nothing runs.
      if (!stale_.empty() && stale_.begin()->second == id) {
        stale_.erase(stale_.begin());
        units_[id].stale_since = -1;
      }
    }
  }

  // ----- state ---------------------------------------------------------------------------------
  Config cfg_;
  bool initialised_ = false;
  bool in_allocate_ = false;
  const models::ClusterState* cluster_ = nullptr;
  const models::Workload* workload_ = nullptr;
  const ClusterView* view_ = nullptr;
  Session* session_ = nullptr;
  std::vector<QNode> nodes_;
  std::map<std::string, int> by_name_;
  std::vector<int> leaves_;
  std::vector<Unit> units_;
  std::vector<std::uint32_t> job_unit_, victim_of_, group_unit_;
  std::vector<std::uint8_t> terminating_;
  std::vector<std::int32_t> held_milli_;       // a running gpu-memory share's milli-GPUs on its node
  std::vector<std::int64_t> pool_gpu_memory_;  // MiB of one GPU, by pool (device_memory_mib)
  // In allocate: the milli-GPUs gpu-memory pods may still take (share_room), and whether a node
  // was skipped for it. kInf elsewhere (the solvers check capacity with the pending fraction).
  mutable std::int64_t share_budget_ = kInf;
  mutable bool share_budget_hit_ = false;
  std::vector<Reason> reasons_;
  std::vector<FailedUnit> failed_;  // schedule's list of the groups that failed in allocate
  // Per queue node during the walk of failed groups, until something acts: fair share of GPUs
  // minus allocated GPUs (kInf without GPUs), and the lowest priority of its running groups.
  std::vector<std::int64_t> walk_room_;
  std::vector<std::int32_t> walk_lowest_running_;
  std::vector<int> group_size_;
  std::vector<JobIndex> to_reject_;
  std::set<std::uint32_t> pipelined_;
  std::map<std::uint32_t, std::vector<models::Placement>> plans_;
  std::map<NodeId, Free> reserved_;
  std::set<JobIndex> releasing_;  // victims whose resources pipelined groups wait for
  std::set<std::pair<Tick, std::uint32_t>> stale_;
  Amounts total_{};
  std::int64_t min_failed_plain_gpus_ = kInf, min_failed_multi_gpus_ = kInf;
  mutable const std::vector<char>* domain_ = nullptr;  // topology: the nodes a placement may use
  Tick protected_until_ = sim::kNever;
  // Pending pods by shape, to know when nothing left can fit: single-pod groups without other
  // constraints by GPU count (one node / several nodes), and every other pod.
  std::vector<std::int64_t> single_pending_;
  std::map<std::int32_t, std::int64_t> multi_pending_;
  std::int64_t other_pending_ = 0;
  std::int32_t largest_gpus_per_node_ = 0;  // over every pool
  Tick usage_at_ = 0;
  double window_ = 0;

 public:
  // The view and session the current call works on (set by the entry points).
  void bind(const ClusterView* v, Session* s) {
    view_ = v;
    session_ = s;
  }
};

// Binds the view for the duration of each notification.
class BoundKai final : public Policy {
 public:
  explicit BoundKai(Config cfg) : inner_(std::move(cfg)) {}
  std::string_view name() const override { return "kai"; }
  // Access to a KAI queue is Kubernetes RBAC on the project's namespace: refused at submit.
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {false, "permission denied: pods is forbidden: User \"" + name_of(w.tenants, job.tenant) +
                       "\" cannot create resource \"pods\" for queue " + name_of(w.queues, job.queue) +
                       " (RBAC, 403 Forbidden at submit)"};
  }
  void on_submit(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_submit(v, j);
  }
  void on_end(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_end(v, j);
  }
  void on_withdraw(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_withdraw(v, j);
  }
  void on_requeue(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_requeue(v, j);
  }
  void on_release(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_release(v, j);
  }
  void schedule(Session& s) override {
    inner_.bind(&s, &s);
    inner_.schedule(s);
    inner_.bind(nullptr, nullptr);
  }
  const KaiPolicy& inner() const { return inner_; }

 private:
  KaiPolicy inner_;
};

}  // namespace

std::string last_pending_reason(const Policy& policy, JobIndex job) {
  const auto* p = dynamic_cast<const BoundKai*>(&policy);
  if (p == nullptr) return {};
  return std::string(reason_text(p->inner().reason(job)));
}

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<BoundKai>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed) {
  (void)seed;  // every tie breaks on queue creation order or job / node index
  return make_policy(parse_config(params));
}

}  // namespace headroom::policies::kai
