#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/node_set.hpp"

namespace headroom::models {

// What one simulated cluster may hold (README, "Scenario format"): nodes of the whole cluster, GPUs
// and CPUs of one node. Per-node state is allocated up front, so a typo of a few zeros must not ask
// for gigabytes. The scenario's `cluster:`, slurm.conf and `headroom import-cluster` all check these.
inline constexpr std::int64_t kMaxClusterNodes = 1'000'000;
inline constexpr std::int64_t kMaxNodeGpus = 1024;
inline constexpr std::int64_t kMaxNodeCpus = 1'000'000;
// The free-GPU index (ClusterState::nodes_with_free) holds a set per pool and free count, 0 to the
// units one of its nodes advertises: its entries are the pools x (units + 1), which time-slicing
// replicas multiply. Bounded so that a run's index stays under about 450 MB (about 215 bytes an
// entry); real sites need far fewer (RICC 9, openb's 15 pools 78, 100 pools of 8 GPUs time-sliced
// 48 ways 38,500).
inline constexpr std::int64_t kMaxFreeIndexEntries = std::int64_t{1} << 21;

struct NodePool {
  std::string name;
  std::int32_t nodes = 0;
  std::int32_t gpus_per_node = 0;
  std::string gpu_type;            // catalogue name or a trace's own model name
  std::int32_t cpus_per_node = 0;  // 0 = not modelled
  std::int64_t memory_gib = 0;     // 0 = not modelled
  // Schedulable units each physical GPU is advertised as (NVIDIA device plugin: time-slicing
  // replicas, or MIG slices per GPU). ClusterState counts a node's GPUs in these units (Node::gpus,
  // free_gpus, Slice::gpus and a job's gpus on this pool are units); 1 = whole GPUs. Set by the
  // policy (Policy::advertised_cluster), not by scenario files.
  std::int32_t units_per_gpu = 1;
  // The units are time-slices of the same GPUs (device-plugin time-slicing), not partitions (MIG):
  // the pods on a node share its GPUs' throughput evenly (scenarios/simulation.cpp).
  bool time_sliced = false;
  // When > 0, the units one node advertises in all, for nodes whose GPUs are cut differently (MIG
  // geometries per device, or whole GPUs beside MIG ones); overrides gpus_per_node x units_per_gpu.
  // Set by the policy, like units_per_gpu.
  std::int32_t units_per_node = 0;
  // What one GPU-hour of this pool costs (scenario `costs.gpu_hour`, by GPU type); 0 = unpriced.
  // Only the cost KPIs read it (results/summary.hpp); no policy does.
  double gpu_hour_price = 0;

  // The pool's GPUs: nodes x gpus_per_node.
  std::int64_t gpus() const { return static_cast<std::int64_t>(nodes) * gpus_per_node; }
  // Units one node advertises: units_per_node, or gpus_per_node x units_per_gpu.
  std::int64_t node_units() const {
    return units_per_node > 0 ? units_per_node : std::int64_t{gpus_per_node} * std::max(units_per_gpu, 1);
  }
};

class Topology;  // models/topology.hpp

struct ClusterSpec {
  std::vector<NodePool> pools;
  // The interconnect (cluster.topology, docs/topology.md); null = not modelled, and nothing that
  // reads it changes then. Built over these pools' nodes; immutable, shared by copies of the spec.
  std::shared_ptr<const Topology> topology;
  std::int64_t total_gpus() const;  // physical GPUs
  std::int32_t total_nodes() const;
};

// The entries of a cluster's free-GPU index (see kMaxFreeIndexEntries), with the units its pools
// advertise (NodePool::units_per_gpu, units_per_node).
std::int64_t free_index_entries(const ClusterSpec& spec);
// Why that index would pass kMaxFreeIndexEntries (its pools, the widest node's units, its entries
// and what to change), or "" when it would not.
std::string free_index_overflow(const ClusterSpec& spec);

using PoolId = std::uint32_t;

struct Node {
  PoolId pool = 0;
  std::int32_t gpus = 0;
  std::int32_t free_gpus = 0;
  std::int32_t cpus = 0;
  std::int32_t free_cpus = 0;
  std::int64_t memory_mib = 0;
  std::int64_t free_memory_mib = 0;
  std::int32_t jobs = 0;         // jobs with a slice here
  std::int32_t shared_gpus = 0;  // GPUs shared by GPU shares (Slice::gpu_milli); not in free_gpus
  bool up = true;
};

// One node's share of a job's placement.
struct Slice {
  NodeId node = 0;
  std::int32_t gpus = 0;
  std::int32_t cpus = 0;
  std::int64_t memory_mib = 0;
  // A share of one GPU (KAI gpu-fraction): gpu_milli thousandths (1..999) of GPU `device`
  // (0..gpus-1 of the node) that other shares may use too; gpus is 0 then. A device that holds a
  // share leaves the node's free GPUs until its last share is released. Only on pools of whole
  // GPUs (units_per_gpu 1). 0 = no share.
  std::int32_t gpu_milli = 0;
  std::int32_t device = 0;
};
using Placement = std::vector<Slice>;

// The index of the first slice whose node an earlier slice already names; placement.size() when
// every node is named once. Linear-logarithmic: a gang over thousands of nodes (CEA Curie's
// widest jobs hold 4,988) is checked as fast as it is placed.
std::size_t first_repeat(const Placement& placement);

// The mutable state of the cluster's nodes. Owned by the simulation; policies see it only
// through a const reference. Every allocation is checked: exceeding capacity is a bug
// (InternalError), never silently clamped.
class ClusterState {
 public:
  explicit ClusterState(const ClusterSpec& spec);

  const ClusterSpec& spec() const { return spec_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_.at(id); }
  std::size_t pool_count() const { return spec_.pools.size(); }
  NodeId pool_first_node(PoolId p) const { return pool_first_[p]; }
  std::int32_t pool_node_count(PoolId p) const { return spec_.pools[p].nodes; }

  // Installed capacity, whether its node is up or not, in units (see NodePool::units_per_gpu):
  // physical GPUs when every pool has 1 unit per GPU.
  std::int64_t total_gpus() const { return total_gpus_; }
  // Free GPUs on nodes that are up (a node that is down or draining offers none).
  std::int64_t free_gpus() const { return free_gpus_; }
  std::int64_t pool_free_gpus(PoolId p) const { return pool_free_[p]; }
  // GPUs held by running jobs (also on nodes that went down or are draining).
  std::int64_t used_gpus() const { return used_gpus_; }
  std::int64_t pool_used_gpus(PoolId p) const { return pool_used_[p]; }
  // GPUs of nodes that are up: the capacity policies can place on.
  std::int64_t up_gpus() const { return up_gpus_; }
  std::int64_t pool_up_gpus(PoolId p) const { return pool_up_[p]; }

  // Takes a node out of service (`up` false: down or draining; its jobs keep their slices until
  // released, and it leaves every free-GPU index and count) or puts it back.
  void set_up(NodeId id, bool up);
  // How many times set_up has changed some node's `up`: a policy that caches per-node state can
  // tell that a node went down or came back without a callback.
  std::uint64_t up_changes() const { return up_changes_; }

  // Units one node of pool p advertises: units_per_node, or gpus_per_node x units_per_gpu.
  std::int32_t node_units(PoolId p) const { return static_cast<std::int32_t>(spec_.pools[p].node_units()); }
  // Whether some up node of pool p has at least min_free free units.
  bool pool_has_free(PoolId p, std::int32_t min_free) const {
    for (std::int32_t f = node_units(p); f >= min_free; --f)
      if (!nodes_with_free(p, f).empty()) return true;
    return false;
  }

  // Milli-GPUs that shares hold on GPU `device` of the node (0: the device is not shared; it is
  // free or held whole).
  std::int32_t device_milli(NodeId node, std::int32_t device) const {
    return device_milli_.empty() ? 0 : device_milli_[device_first_[node] + static_cast<std::size_t>(device)];
  }

  // Nodes of pool p (that are up) with exactly f free GPUs (units), in id order.
  const NodeIdSet& nodes_with_free(PoolId p, std::int32_t f) const { return by_free_[p][f]; }
  // The pools (a set of pool ids) with some up node of exactly f free units, for f up to
  // max_node_units(): a scan for room visits these, not every pool.
  const NodeIdSet& pools_with_free(std::int32_t f) const { return pools_by_free_[static_cast<std::size_t>(f)]; }
  std::int32_t max_node_units() const { return static_cast<std::int32_t>(pools_by_free_.size()) - 1; }

  // Why a placement cannot be applied now, or an empty string when it can.
  std::string check(const Placement& placement) const;
  void allocate(const Placement& placement);  // throws InternalError if check() fails
  // Applies the placement if check() accepts it; returns check()'s answer.
  std::string try_allocate(const Placement& placement);
  void release(const Placement& placement);  // throws InternalError on over-release

 private:
  void index_remove(NodeId id);
  void index_add(NodeId id);
  // Node id of pool p moves from by_free_[p][was_free] to [now_free] (or out when not up).
  void reindex(PoolId p, NodeId id, std::int32_t was_free, std::int32_t now_free, bool up);

  ClusterSpec spec_;
  std::vector<Node> nodes_;
  std::vector<NodeId> pool_first_;
  std::vector<std::int64_t> pool_free_;
  std::vector<std::int64_t> pool_used_;
  std::vector<std::int64_t> pool_up_;
  std::vector<std::vector<NodeIdSet>> by_free_;
  std::vector<NodeIdSet> pools_by_free_;  // [f]: the pools whose by_free_[p][f] is not empty
  // GPU shares: milli-GPUs used on each device (node n's devices from device_first_[n]); both
  // empty until the first share is placed.
  std::vector<std::int32_t> device_milli_;
  std::vector<std::size_t> device_first_;
  std::int64_t total_gpus_ = 0;
  std::int64_t free_gpus_ = 0;
  std::int64_t used_gpus_ = 0;
  std::int64_t up_gpus_ = 0;
  std::uint64_t up_changes_ = 0;
};

}  // namespace headroom::models
