#pragma once

// The kai policy's class, private to policies/kai/ (not included elsewhere; the public API is
// kai.hpp). Its member functions are defined one seam of NVIDIA/KAI-Scheduler per file (the map is
// in policies/kai/README.md); the small ones that the allocate walk calls for every pending group
// are defined here so that they stay inline.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "models/job.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/kai/kai.hpp"
#include "policies/kai/topology.hpp"

namespace headroom::policies::kai::detail {

using models::Job;
using models::JobState;
using models::NodeId;

inline constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max() / 4;
inline constexpr NodeId kNoNode = UINT32_MAX;
inline constexpr std::uint32_t kNoUnit = UINT32_MAX;
inline constexpr std::uint32_t kNoRun = UINT32_MAX;
// Consolidation is tried for at most this many pending jobs per session, over at most this many
// candidate nodes each (bounds the cost of a session on large clusters).
inline constexpr int kConsolidationJobsPerSession = 8;
inline constexpr int kConsolidationNodesPerJob = 64;
// Reclaim and preempt solvers run for at most this many pending groups per session.
inline constexpr int kVictimSearchesPerSession = 64;

enum class Reason : std::uint8_t {
  None,
  OverLimit,
  NonPreemptibleOverQuota,
  NoFit,
  GangIncomplete,
  Pipelined,
  TopologyNoFit,
  LargerThanNode
};

inline std::string_view reason_text(Reason r) {
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
    case Reason::LargerThanNode:
      return "Unschedulable: no nodes with enough resources were found: a pod of the group asks more GPUs than any "
             "node has (node(s) didn't have enough resources: GPUs); it stays Pending";
  }
  return "";
}

inline void add(Amounts& a, const Amounts& b, std::int64_t sign = 1) {
  for (int r = 0; r < kResources; ++r) a[r] += sign * b[r];
}

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
    bool erased = false;  // in PendingList: left in place until the next compaction
    bool operator<(const PendKey& o) const {
      return std::tie(neg_priority, tier, created, unit) < std::tie(o.neg_priority, o.tier, o.created, o.unit);
    }
    bool operator==(const PendKey& o) const = default;
  };
  // The pending groups in key order, in one array that the allocate walk reads front to back every
  // session (a tree's nodes, one cache miss each, made most of its time). An erased key stays in
  // place, marked, until compact(), so that erasing is a binary search and the walk's cursor (an
  // index) stays valid; a key inserted in the middle moves the later ones up (the walk's cursor
  // with them). Keys are unique in their order (the unit is part of it).
  struct PendingList {
    std::vector<PendKey> keys;
    std::size_t erased = 0;
    // What the allocate walk needs to know of kBlock keys at a time to take them in one step
    // (KaiPolicy::block): recomputed when dirty, made dirty by any change to a key of the block or to
    // the reason of its pod (KaiPolicy::set_reason).
    static constexpr std::size_t kBlock = 64;  // the bits of Block::live_mask
    struct Block {
      bool dirty = true;
      bool plain = false;           // every key not erased is a lone plain pod, placeable, whose reason is NoFit
      std::uint64_t live_mask = 0;  // bit i: key i of the block is there, not erased
      // Of those keys: the fewest GPUs of a one-node pod and of a pod spanning nodes (int32 max
      // without one), the most GPUs, the highest priority.
      std::int32_t min_plain = 0, min_multi = 0, max_gpus = 0, max_priority = 0;
    };
    std::vector<Block> blocks;
    void fit_blocks() { blocks.resize((keys.size() + kBlock - 1) / kBlock); }
    void touch(std::size_t i) { blocks[i / kBlock].dirty = true; }
    void touch_key(const PendKey& k) {
      const auto it = std::lower_bound(keys.begin(), keys.end(), k);
      if (it != keys.end() && !(k < *it)) touch(static_cast<std::size_t>(it - keys.begin()));
    }
    bool empty() const { return keys.size() == erased; }
    // Inserts k. `cursor` (an index into keys) moves to the first key left at or after it and
    // keeps pointing at that key (or the end), as a tree's iterator would: a walk visits k only
    // when k comes after that key.
    void insert(const PendKey& k, std::size_t& cursor) {
      while (cursor < keys.size() && keys[cursor].erased) ++cursor;
      if (keys.empty() || keys.back() < k) {
        if (cursor == keys.size()) ++cursor;
        keys.push_back(k);
        fit_blocks();
        touch(keys.size() - 1);
        return;
      }
      const auto it = std::lower_bound(keys.begin(), keys.end(), k);
      const auto at = static_cast<std::size_t>(it - keys.begin());
      if (!(k < *it)) {  // an erased entry of the same order: k takes its place
        *it = k;
        --erased;
        touch(at);
        return;
      }
      keys.insert(it, k);
      if (at <= cursor) ++cursor;
      fit_blocks();
      for (std::size_t b = at / kBlock; b < blocks.size(); ++b) blocks[b].dirty = true;
    }
    void erase(const PendKey& k) {
      auto it = std::lower_bound(keys.begin(), keys.end(), k);
      if (it == keys.end() || k < *it || it->erased) return;  // not there (never the case)
      it->erased = true;
      ++erased;
      touch(static_cast<std::size_t>(it - keys.begin()));
    }
    // Drops the erased entries once they are half the array (never during a walk).
    void compact() {
      if (erased < 64 || erased * 2 < keys.size()) return;
      std::erase_if(keys, [](const PendKey& k) { return k.erased; });
      erased = 0;
      blocks.assign((keys.size() + kBlock - 1) / kBlock, Block{});
    }
  };
  using RunKey = std::tuple<std::int32_t, Tick, std::int64_t>;  // priority, -created, -unit
  PendingList pending_units;
  std::set<RunKey> running_units;
  std::size_t cursor = 0;  // the allocate walk's next index in pending_units.keys
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
  int members_without_gpus = 0;   // of the members, asking for no GPU
  bool larger_than_node = false;  // a member's pod is larger than every node it may use (never placed)
  int running = 0;                // running and not terminating
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
  Overlay() = default;
  // A copy takes the nodes; its index is built again on its first lookup among many nodes.
  Overlay(const Overlay& o) : nodes(o.nodes) {}
  Overlay& operator=(const Overlay& o) {
    nodes = o.nodes;
    reset_index();
    return *this;
  }
  Overlay(Overlay&&) = default;
  Overlay& operator=(Overlay&&) = default;
  // After changing `nodes` other than through at(): assign, clear, push_back.
  void reset_index() {
    pos_.clear();
    indexed_ = 0;
  }
  Free* find(NodeId n) {
    // A solver that takes thousands of victims touches thousands of nodes: past a few, a lookup
    // goes through the index (by node id, built as nodes are added) instead of a scan.
    if (nodes.size() <= kScan) {
      for (auto& f : nodes)
        if (f.node == n) return &f;
      return nullptr;
    }
    if (indexed_ > nodes.size()) reset_index();
    for (; indexed_ < nodes.size(); ++indexed_) {
      const NodeId id = nodes[indexed_].node;
      if (id >= pos_.size()) pos_.resize(std::max<std::size_t>(id + 1, 2 * pos_.size()), 0);
      if (pos_[id] == 0) pos_[id] = static_cast<std::uint32_t>(indexed_ + 1);
    }
    return n < pos_.size() && pos_[n] != 0 ? &nodes[pos_[n] - 1] : nullptr;
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

 private:
  static constexpr std::size_t kScan = 16;
  std::vector<std::uint32_t> pos_;  // pos_[node]: its index in nodes + 1 (0: absent), past kScan nodes
  std::size_t indexed_ = 0;         // nodes[0, indexed_) are in pos_
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

  // framework/session.cpp
  std::optional<std::string> memory_pod_rejection(const Job& j) const;

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

  // framework/session.cpp: the notifications and the session.
  void on_submit(const ClusterView& view, JobIndex j) override;

  void on_requeue(const ClusterView& view, JobIndex j) override;

  void on_release(const ClusterView& view, JobIndex j) override;

  void on_withdraw(const ClusterView& view, JobIndex j) override;

  void on_end(const ClusterView& view, JobIndex j) override;

  void schedule(Session& s) override;

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
    std::uint32_t run = kNoRun;  // an index into failed_runs_: this entry stands for that run's entries
    std::int64_t demand;         // the pod's GPUs in the queue accounting's units (simple_demand)
  };

  // Lone NoFit entries that fast_run took one after another from one leaf, kept as the range of
  // keys they were read from instead of one FailedUnit each (the walk of failed groups reads few of
  // them: a whole run is passed over when may_act is false for each of its entries, which the
  // run's minima and maximum answer). [begin, end) indexes the leaf's pending list, skipping the
  // keys erased then, or failed_keys_ once copied there (copy_failed_runs: before a key is inserted
  // into a pending list, which moves the later keys, or erased after allocate).
  struct FailedRun {
    int leaf;
    bool copied;
    std::uint32_t begin, end;
    std::int32_t min_plain_gpus, min_gpus, max_priority;  // min_plain_gpus: of the one-node pods
  };

  // may_act for some entry of the run.
  bool run_may_act(const FailedRun& r, bool consolidation_open, bool search_open, std::int64_t all_pools_free) const {
    const auto q = static_cast<std::size_t>(r.leaf);
    const bool consolidation = consolidation_open && r.min_plain_gpus <= all_pools_free;
    const bool victims =
        search_open && (simple_demand(r.min_gpus)[0] <= walk_room_[q] || walk_lowest_running_[q] < r.max_priority);
    return consolidation || victims;
  }

  // The key of entry `off` of run r (erased: no entry).
  const QNode::PendKey& run_key(const FailedRun& r, std::uint32_t off) const {
    return r.copied ? failed_keys_[r.begin + off] : nodes_[r.leaf].pending_units.keys[r.begin + off];
  }

  FailedUnit run_entry(const FailedRun& r, const QNode::PendKey& k) const {
    return FailedUnit{k.unit,         Reason::NoFit, true,
                      k.simple_multi, k.simple_gpus, -k.neg_priority,
                      r.leaf,         kNoRun,        simple_demand(k.simple_gpus)[0]};
  }

  void copy_failed_runs();

  // For a lone entry while nothing has acted: false when consolidate, reclaim and preempt would
  // each return false at their first checks, which read only what the entry holds, the counts
  // (consolidation_open: consolidate may still count an attempt; search_open: reclaim and preempt
  // may still search) and what the walk keeps per leaf (walk_room_, walk_lowest_running_).
  bool may_act(const FailedUnit& f, bool consolidation_open, bool search_open, std::int64_t all_pools_free) const {
    const auto q = static_cast<std::size_t>(f.queue);
    // consolidate: a pod spanning nodes is never moved; otherwise it counts an attempt (and may
    // act) only when the pools it may use have its GPUs free in all.
    const bool consolidation = consolidation_open && !f.multi && all_pools_free >= f.gpus;
    // reclaim: the queue's GPUs with the pod's stay within its fair share (its eligibility);
    // preempt: a running group of the queue has a lower priority.
    const bool victims = search_open && (f.demand <= walk_room_[q] || walk_lowest_running_[q] < f.priority);
    return consolidation || victims;
  }

  // ----- set-up (framework/session.cpp) -------------------------------------------------------
  void ensure(const ClusterView& view);

  void rebuild_leaves();

  bool undeclared(int queue) const;
  int leaf_for(models::QueueId qid);

  std::uint32_t unit_of(const Job& job, JobIndex j);

  // ----- bookkeeping ---------------------------------------------------------------------------
  void add_path(int q, Amounts QNode::*field, const Amounts& a, std::int64_t sign) {
    for (int n = q; n >= 0; n = nodes_[n].parent) add(nodes_[n].*field, a, sign);
  }

  void add_pending(const ClusterView& view, JobIndex j);

  static QNode::PendKey pend_key(const Unit& u, int tier, std::uint32_t id) {
    return {-u.priority, tier,          u.created,      id,
            u.single,    u.simple_gpus, u.simple_multi, u.simple_gpus > 0 && u.min_member == 1};
  }

  void rekey_pending(std::uint32_t id);

  void refresh(std::uint32_t id, Tick now);

  void advance_usage(Tick now);

  // ----- fair share (plugins/proportion.cpp) ---------------------------------------------------
  void compute_fair_shares(const ClusterView& view);

  void divide_children(int parent, const std::vector<double>& usage, double capacity);

  // The last division of a parent's children for one resource: divide's arguments and result.
  struct DivisionMemo {
    bool valid = false;
    std::int64_t total = 0;
    std::vector<DivisionEntry> entries;
    std::vector<std::int64_t> fs;
  };
  std::vector<std::array<DivisionMemo, kResources>> division_memo_;  // by parent queue node
  std::vector<DivisionEntry> division_entries_;
  std::vector<double> fair_usage_;

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

  // actions/allocate.cpp. The members declared inline below are defined there and used only there:
  // declared inline so that the allocate walk inlines them as when they were written in the class.
  inline double share(const Amounts& a) const;

  struct Candidate {
    int node = -1;  // the child queue
    int leaf = -1;
    Amounts req{};
  };

  inline bool queue_before(const Candidate& ca, const Candidate& cb) const;

  inline int pick(int node);

  inline Candidate pick_candidate(int node);

  // The candidate of leaf c: its first group whose pods are all there (pick_candidate's leaf step).
  inline Candidate leaf_candidate(int c);

  inline bool fast_run(int leaf);

  // The summary of block b of the leaf's pending list, up to date.
  inline const QNode::PendingList::Block& block(int leaf, std::size_t b);

  // capacity(leaf, p, ...) is None for every request and every priority p <= max_priority.
  bool capacity_free(int leaf, std::int32_t max_priority) const {
    return nodes_[leaf].unlimited && (nodes_[leaf].unquoted || Unit::preemptible_priority(max_priority));
  }

  // ----- placement -----------------------------------------------------------------------------
  // pool_eligible, its answers kept per (GPU type, node set, pool): node scans ask it of every node.
  bool pool_ok(models::PoolId p, const Job& job) const { return pool_ok_(*cluster_, p, job, *workload_); }

  static bool fits_cpu_mem(const models::Node& node, const Free& f, const Job& job) {
    if (node.cpus > 0 && job.cpus > f.cpus) return false;
    if (node.memory_mib > 0 && job.memory_mib > f.memory) return false;
    return true;
  }

  // Whether the job's pods, as its trace shapes them (gpus_per_node, or nodes: models::pod_gpus),
  // include one larger than every node of the pools it may use. KAI places pods whole on one node
  // (api/node_info/node_info.go IsTaskAllocatable; the fit error "node(s) didn't have enough
  // resources: GPUs", api/common_info/pod_errors.go): such a pod is never placed and its group stays
  // Pending. A job whose trace gives no per-node shape is never one (multi_node_placement spans
  // nodes with it).
  bool larger_than_every_node(const Job& job) const {
    if (job.gpus <= 1 || (job.gpus_per_node <= 0 && job.nodes <= 0)) return false;
    std::int32_t widest = 0;
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
      if (pool_ok(p, job)) widest = std::max(widest, cluster_->spec().pools[p].gpus_per_node);
    const std::vector<std::int32_t> pods = models::pod_gpus(job, widest);
    return widest > 0 && *std::max_element(pods.begin(), pods.end()) > widest;
  }

  // Whether the pod needs more than one node.
  bool multi_node(const Job& job) const {
    if (job.gpu_type == 0 && job.node_set == 0) return job.gpus > largest_gpus_per_node_;  // every pool is eligible
    std::int32_t largest = 0;
    for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
      if (pool_ok(p, job)) largest = std::max(largest, cluster_->spec().pools[p].gpus_per_node);
    return job.gpus > largest;
  }

  // plugins/nodeplacement.cpp
  NodeId best_node(const Job& job, Overlay& ov, NodeId exclude) const;

  std::tuple<NodeId, std::int32_t, std::int32_t> best_share(const Job& job, Overlay& ov, NodeId exclude) const;

  std::optional<models::Placement> multi_node_placement(const Job& job, Overlay& ov) const;

  std::optional<std::vector<models::Placement>> place(const std::vector<JobIndex>& pods, Overlay& ov,
                                                      NodeId exclude = kNoNode) const;

  bool outside_domain(NodeId n) const { return domain_ != nullptr && !(*domain_)[n]; }

  bool topology_applies(const std::vector<JobIndex>& pods) const {
    return !pods.empty() && cluster_->spec().topology && cfg_.topology.applies_to(workload_->jobs[pods[0]].kind);
  }

  std::vector<models::SwitchId> topology_domains_of(const std::vector<JobIndex>& pods, Overlay& ov) const;

  std::optional<std::vector<models::Placement>> place_pods(const std::vector<JobIndex>& pods, Overlay& ov,
                                                           NodeId exclude) const;

  // framework/session.cpp: the statement, and the pending counts.
  void reserve(const models::Placement& p, std::int64_t sign);

  Overlay base(bool now = false) const {
    Overlay ov;
    base_into(ov, now);
    return ov;
  }

  // base() into ov (emptied first), which keeps its capacity.
  void base_into(Overlay& ov, bool now = false) const;

  void count_pending(JobIndex j, std::int64_t sign);

  // actions/allocate.cpp
  inline bool all_would_fail() const;

  // ----- capacity checks -----------------------------------------------------------------------
  // KAI's plugins/proportion/capacity_policy (max_allowed_check.go: OverLimit; quota_check.go:
  // NonPreemptibleOverQuota), here because allocate checks every pending group with it.
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

  // plugins/proportion.cpp
  std::pair<std::int64_t, Reason> share_room(const Unit& u, std::int64_t other) const;

  void set_reason(JobIndex j, Reason r) {
    if (reasons_[j] == r) return;
    reasons_[j] = r;
    if (job_unit_[j] != kNoUnit) {  // the block summary of a pending pod's key reads its reason
      const Unit& u = units_[job_unit_[j]];
      if (u.in_pending && u.single == j) nodes_[u.queue].pending_units.touch_key(u.pkey);
    }
    if (session_ != nullptr) session_->pending_reason(j, reason_text(r));
  }

  // ----- allocate (actions/allocate.cpp) -------------------------------------------------------
  void allocate(Session& s);
  void walk(Session& s, bool may_cut);
  bool try_cut(std::int64_t max_node_free, std::int64_t max_pool_free);
  void resume_walk(Session& s);
  inline bool known_no_fit(int queue, std::int32_t priority, std::int32_t simple_gpus, bool multi) const;
  inline Reason attempt(Session& s, std::uint32_t id);

  inline void start(Session& s, JobIndex j, models::Placement p, std::string_view why);
  Overlay attempt_ov_;  // attempt's statement for a lone plain pod, kept for its capacity

  // ----- evictions -----------------------------------------------------------------------------
  // Running members of a unit that are not terminating.
  std::vector<JobIndex> active_members(const Unit& u) const {
    std::vector<JobIndex> out;
    for (JobIndex j : u.members)
      if (view_->state(j) == JobState::Running && !terminating_[j]) out.push_back(j);
    return out;
  }

  // plugins/minruntime.cpp
  bool protected_by_min_runtime(const Unit& v, Tick min_runtime, Tick now);

  // framework/session.cpp
  void evict(Session& s, std::uint32_t victim, JobIndex by, std::uint32_t by_unit, const std::string& why);

  void pipeline(Session& s, std::uint32_t id, const std::vector<JobIndex>& pods,
                const std::vector<models::Placement>& plan);

  Amounts unit_alloc(const Unit& v) const { return v.running_req; }

  // actions/reclaim.cpp (solve is instantiated there only)
  template <class Next, class Accept>
  std::optional<std::vector<std::uint32_t>> solve(const std::vector<JobIndex>& pods, Next&& next, Accept&& accept,
                                                  std::vector<models::Placement>& plan,
                                                  const std::vector<std::pair<double, int>>* victim_queues = nullptr);

  std::vector<int> path(int q) const;

  std::pair<int, int> below_lca(int a, int b) const;

  double saturation(const QNode& q, const Amounts& alloc) const;

  bool reclaim(Session& s, std::uint32_t id, int& searches);

  // actions/preempt.cpp, actions/consolidation.cpp, actions/stale_gang_eviction.cpp
  bool preempt(Session& s, std::uint32_t id, int& searches);

  bool consolidate(Session& s, std::uint32_t id, int& attempts);

  bool try_consolidate_on(Session& s, std::uint32_t id, JobIndex pod, NodeId n, Tick now);
  // try_consolidate_on's lists and statement, kept for their capacity (it runs for up to 64 nodes
  // per pending pod, eight pods per session).
  std::vector<JobIndex> victims_, victim_order_;
  // base() for consolidation, kept while nothing it reads changes: the reservations and the
  // releasing pods (base_version_), the cluster (starts_, and sessions_: between sessions it
  // changes without a start).
  Overlay consolidation_base_;
  std::uint64_t consolidation_base_session_ = ~std::uint64_t{0}, consolidation_base_starts_ = 0,
                consolidation_base_version_ = 0;
  std::uint64_t base_version_ = 0, sessions_ = 0;
  // Per node, the pods consolidation may move off it, in the order it moves them. What the list
  // reads of a pod on the node (its state, terminating_, its unit's priority and member count,
  // its placement's size, GPUs and start) changes only when kai starts, evicts or releases a pod
  // there (node_changes_ of the node) or a unit gets a second member (member_changes_); the
  // min-runtime protection also changes with the time: a list that read one (`timed`) is valid
  // only at the movable_epoch_ it was read (a session's walk of failed groups until an eviction).
  struct MovableAt {
    std::uint64_t epoch = 0;  // 0: never read
    std::uint64_t node_changes = 0, member_changes = 0;
    bool timed = false;
    bool shares = false;    // a pod holds a share of a device (gpu_milli)
    std::int64_t gpus = 0;  // the GPUs of the pods' placements, summed
  };
  std::vector<std::vector<std::tuple<std::int32_t, Tick, JobIndex>>> movable_;
  std::vector<MovableAt> movable_at_;
  std::uint64_t movable_epoch_ = 1;
  std::vector<std::uint64_t> node_changes_;
  std::uint64_t member_changes_ = 0;
  void node_changed(const models::Placement& p) {
    for (const auto& sl : p) {
      if (sl.node >= node_changes_.size()) node_changes_.resize(sl.node + std::size_t{1}, 0);
      ++node_changes_[sl.node];
    }
  }
  Overlay consolidation_ov_;
  // The shapes of the pods consolidate found no node for, at consolidation_misses_at_ (sessions_,
  // starts_, base_version_, movable_epoch_).
  struct ConsolidationShape {
    std::int32_t gpus, cpus;
    std::int64_t memory_mib;
    std::uint16_t gpu_type;
    std::uint8_t node_set;
    bool operator==(const ConsolidationShape&) const = default;
  };
  std::vector<ConsolidationShape> consolidation_misses_;
  std::array<std::uint64_t, 4> consolidation_misses_at_{};

  void stale_gang_eviction(Session& s);

  // ----- state ---------------------------------------------------------------------------------
  Config cfg_;
  bool initialised_ = false;
  bool in_allocate_ = false;
  const models::ClusterState* cluster_ = nullptr;
  PoolEligibility pool_ok_;  // pool_ok's answers
  const models::Workload* workload_ = nullptr;
  const ClusterView* view_ = nullptr;
  Session* session_ = nullptr;
  std::vector<QNode> nodes_;
  std::map<std::string, int> by_name_;
  std::vector<int> leaves_;
  std::vector<Unit> units_;
  std::vector<std::uint32_t> job_unit_, victim_of_, group_unit_;
  std::vector<std::uint8_t> terminating_;
  std::vector<std::uint8_t> larger_than_node_;  // by job: larger_than_every_node, from its submit
  std::vector<std::int32_t> held_milli_;        // a running gpu-memory share's milli-GPUs on its node
  // The pools of a running pod's placement as bits (pool p: bit p; all bits past 64 pools), so
  // that the reclaim solver passes over victims' pods on pools its pods cannot use.
  std::vector<std::uint64_t> pod_pools_;
  // [queue node x pools + pool]: the whole GPUs its running, not terminating pods hold on the
  // pool, kept as alloc is: what a reclaim could free there by taking all of a queue's pods.
  std::vector<std::int64_t> pool_run_;
  // Adds (sign 1) or takes back (-1) a pod's placement p in its queue's pool_run_; returns the
  // bits of p's pools (pod_pools_).
  std::uint64_t tally_pools(int queue, const models::Placement& p, std::int64_t sign) {
    const std::size_t pools = cluster_->pool_count();
    const std::size_t need = (static_cast<std::size_t>(queue) + 1) * pools;
    if (pool_run_.size() < need) pool_run_.resize(std::max(need, nodes_.size() * pools), 0);
    std::uint64_t bits = 0;
    for (const models::Slice& sl : p) {
      const models::PoolId pool = cluster_->node(sl.node).pool;
      pool_run_[static_cast<std::size_t>(queue) * pools + pool] += sign * sl.gpus;
      bits |= pool < 64 ? std::uint64_t{1} << pool : ~std::uint64_t{0};
    }
    return bits;
  }
  std::int64_t pool_run(int queue, models::PoolId p) const {
    const std::size_t at = static_cast<std::size_t>(queue) * cluster_->pool_count() + p;
    return at < pool_run_.size() ? pool_run_[at] : 0;
  }
  std::vector<std::int64_t> pool_gpu_memory_;  // MiB of one GPU, by pool (device_memory_mib)
  // In allocate: the milli-GPUs gpu-memory pods may still take (share_room), and whether a node
  // was skipped for it. kInf elsewhere (the solvers check capacity with the pending fraction).
  mutable std::int64_t share_budget_ = kInf;
  mutable bool share_budget_hit_ = false;
  std::vector<Reason> reasons_;
  std::vector<FailedUnit> failed_;  // schedule's list of the groups that failed in allocate
  std::size_t failed_count_ = 0;    // its entries, each run's counted
  std::vector<FailedRun> failed_runs_;
  std::vector<QNode::PendKey> failed_keys_;
  std::size_t live_runs_from_ = 0;  // failed_runs_ from here read the pending lists
  // allocate stopped its walk where nothing could start any more and failed_ ends there (try_cut);
  // resume_walk finishes it before anything changes.
  bool cut_ = false;
  std::uint64_t starts_ = 0;  // pods started by allocate, ever
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
  // The fewest GPUs of any such pending pod, plain (one node) and multi-node; kInf when none.
  std::int64_t smallest_plain_pending() const;
  std::int64_t smallest_multi_pending() const { return multi_pending_.empty() ? kInf : multi_pending_.begin()->first; }
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

}  // namespace headroom::policies::kai::detail
