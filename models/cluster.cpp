#include "models/cluster.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::models {

std::int64_t ClusterSpec::total_gpus() const {
  std::int64_t n = 0;
  for (const auto& p : pools) n += p.gpus();
  return n;
}

std::int32_t ClusterSpec::total_nodes() const {
  std::int32_t n = 0;
  for (const auto& p : pools) n += p.nodes;
  return n;
}

std::int64_t free_index_entries(const ClusterSpec& spec) {
  std::int64_t n = 0;
  for (const NodePool& pool : spec.pools) n += pool.node_units() + 1;
  return n;
}

std::string free_index_overflow(const ClusterSpec& spec) {
  const std::int64_t entries = free_index_entries(spec);
  if (entries <= kMaxFreeIndexEntries) return "";
  std::int64_t widest = 0;
  for (const NodePool& pool : spec.pools) widest = std::max(widest, pool.node_units());
  return sim::thousands(static_cast<std::int64_t>(spec.pools.size())) + " pools of nodes advertising up to " +
         sim::thousands(widest) + " GPU units each (GPUs per node x time-slicing replicas) need a free-GPU index of " +
         sim::thousands(entries) + " entries (a pool's units + 1, summed), more than the " +
         sim::thousands(kMaxFreeIndexEntries) + " a run holds; join pools of like nodes, or give fewer replicas";
}

ClusterState::ClusterState(const ClusterSpec& spec) : spec_(spec) {
  // Scenarios check it where they are read; a cluster made otherwise (a policy's own view of it)
  // still gets the reason rather than gigabytes of empty sets.
  if (std::string why = free_index_overflow(spec_); !why.empty()) throw sim::InputError("cluster: " + why);
  by_free_.resize(spec_.pools.size());
  std::int32_t max_units = 0;
  for (PoolId p = 0; p < spec_.pools.size(); ++p) max_units = std::max(max_units, node_units(p));
  pools_by_free_.assign(static_cast<std::size_t>(max_units) + 1, NodeIdSet(0, spec_.pools.size()));
  pool_free_.assign(spec_.pools.size(), 0);
  pool_used_.assign(spec_.pools.size(), 0);
  pool_up_.assign(spec_.pools.size(), 0);
  for (PoolId p = 0; p < spec_.pools.size(); ++p) {
    const auto& pool = spec_.pools[p];
    HEADROOM_ASSERT(pool.nodes >= 0 && pool.gpus_per_node >= 0 && pool.units_per_gpu >= 1 &&
                        static_cast<std::int64_t>(pool.gpus_per_node) * pool.units_per_gpu <= INT32_MAX / 2 &&
                        pool.units_per_node >= 0 && pool.units_per_node <= INT32_MAX / 2,
                    "invalid pool size");
    const std::int32_t units = node_units(p);
    pool_first_.push_back(static_cast<NodeId>(nodes_.size()));
    by_free_[p].assign(static_cast<std::size_t>(units) + 1,
                       NodeIdSet(static_cast<NodeId>(nodes_.size()), static_cast<std::size_t>(pool.nodes)));
    for (std::int32_t i = 0; i < pool.nodes; ++i) {
      Node n;
      n.pool = p;
      n.gpus = n.free_gpus = units;
      n.cpus = n.free_cpus = pool.cpus_per_node;
      n.memory_mib = n.free_memory_mib = pool.memory_gib * 1024;
      const auto id = static_cast<NodeId>(nodes_.size());
      nodes_.push_back(n);
      by_free_[p][n.free_gpus].insert(id);
      pools_by_free_[static_cast<std::size_t>(n.free_gpus)].insert(p);
    }
    pool_free_[p] = pool_up_[p] = static_cast<std::int64_t>(pool.nodes) * units;
    total_gpus_ += pool_free_[p];
  }
  free_gpus_ = up_gpus_ = total_gpus_;
}

std::size_t first_repeat(const Placement& placement) {
  const std::size_t n = placement.size();
  if (n <= 16) {  // the common placement: a handful of slices, no allocation
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (placement[j].node == placement[i].node) return i;
    return n;
  }
  // (node, index) sorted: within a node's run the second index is its first repeat.
  std::vector<std::pair<NodeId, std::size_t>> by_node(n);
  for (std::size_t i = 0; i < n; ++i) by_node[i] = {placement[i].node, i};
  std::sort(by_node.begin(), by_node.end());
  std::size_t first = n;
  for (std::size_t k = 1; k < n; ++k)
    if (by_node[k].first == by_node[k - 1].first && (k < 2 || by_node[k - 2].first != by_node[k].first))
      first = std::min(first, by_node[k].second);
  return first;
}

std::string ClusterState::check(const Placement& placement) const {
  // A job may hold at most one slice per node; sum per node in case a policy repeats one.
  const std::size_t repeat = first_repeat(placement);
  for (std::size_t i = 0; i < placement.size(); ++i) {
    const Slice& s = placement[i];
    if (s.node >= nodes_.size()) return "node " + std::to_string(s.node) + " does not exist";
    if (s.gpus < 0 || s.cpus < 0 || s.memory_mib < 0) return "negative request";
    if (i == repeat) return "node " + std::to_string(s.node) + " appears twice";
    const Node& n = nodes_[s.node];
    if (!n.up) return "node " + std::to_string(s.node) + " is down";
    std::int32_t whole = s.gpus;
    if (s.gpu_milli != 0) {
      const std::string at = "node " + std::to_string(s.node) + " GPU " + std::to_string(s.device);
      if (s.gpu_milli < 0 || s.gpu_milli >= 1000) return "a GPU share must be 1..999 milli-GPUs";
      if (s.gpus != 0) return "a slice holds whole GPUs or a GPU share, not both";
      if (spec_.pools[n.pool].units_per_gpu != 1 || spec_.pools[n.pool].units_per_node > 0)
        return "GPU shares need whole GPUs (the pool advertises units)";
      if (s.device < 0 || s.device >= n.gpus) return at + " does not exist";
      const std::int32_t used = device_milli(s.node, s.device);
      if (used + s.gpu_milli > 1000)
        return at + " has " + std::to_string(1000 - used) + " milli-GPUs free, " + std::to_string(s.gpu_milli) +
               " requested";
      if (used == 0) whole = 1;  // opens the device for sharing: it leaves the free GPUs
    }
    if (whole > n.free_gpus)
      return "node " + std::to_string(s.node) + " has " + std::to_string(n.free_gpus) + " free GPUs, " +
             std::to_string(whole) + " requested";
    if (n.cpus > 0 && s.cpus > n.free_cpus) return "node " + std::to_string(s.node) + " lacks CPUs";
    if (n.memory_mib > 0 && s.memory_mib > n.free_memory_mib) return "node " + std::to_string(s.node) + " lacks memory";
  }
  return {};
}

void ClusterState::index_remove(NodeId id) {
  const Node& n = nodes_[id];
  NodeIdSet& set = by_free_[n.pool][n.free_gpus];
  if (set.erase(id) && set.empty()) pools_by_free_[static_cast<std::size_t>(n.free_gpus)].erase(n.pool);
}

void ClusterState::index_add(NodeId id) {
  const Node& n = nodes_[id];
  if (n.up && by_free_[n.pool][n.free_gpus].insert(id) && by_free_[n.pool][n.free_gpus].size() == 1)
    pools_by_free_[static_cast<std::size_t>(n.free_gpus)].insert(n.pool);
}

// As index_remove then index_add.
void ClusterState::reindex(PoolId p, NodeId id, std::int32_t was_free, std::int32_t now_free, bool up) {
  if (was_free == now_free && up) return;
  std::vector<NodeIdSet>& sets = by_free_[p];
  NodeIdSet& was = sets[static_cast<std::size_t>(was_free)];
  if (was.erase(id) && was.empty()) pools_by_free_[static_cast<std::size_t>(was_free)].erase(p);
  if (!up) return;
  NodeIdSet& now = sets[static_cast<std::size_t>(now_free)];
  if (now.insert(id) && now.size() == 1) pools_by_free_[static_cast<std::size_t>(now_free)].insert(p);
}

void ClusterState::allocate(const Placement& placement) {
  const std::string why = try_allocate(placement);
  if (!why.empty()) throw sim::InternalError("invalid allocation: " + why);
}

std::string ClusterState::try_allocate(const Placement& placement) {
  std::string why = check(placement);
  if (!why.empty()) return why;
  for (const Slice& s : placement) {
    Node& n = nodes_[s.node];
    const std::int32_t was_free = n.free_gpus;
    std::int32_t take = s.gpus;
    if (s.gpu_milli > 0) {
      if (device_milli_.empty()) {
        device_first_.resize(nodes_.size());
        std::size_t at = 0;
        for (std::size_t k = 0; k < nodes_.size(); ++k) {
          device_first_[k] = at;
          at += static_cast<std::size_t>(nodes_[k].gpus);
        }
        device_milli_.assign(at, 0);
      }
      std::int32_t& used = device_milli_[device_first_[s.node] + static_cast<std::size_t>(s.device)];
      if (used == 0) {
        take = 1;
        ++n.shared_gpus;
      }
      used += s.gpu_milli;
    }
    n.free_gpus -= take;
    if (n.cpus > 0) n.free_cpus -= s.cpus;
    if (n.memory_mib > 0) n.free_memory_mib -= s.memory_mib;
    ++n.jobs;
    pool_free_[n.pool] -= take;
    free_gpus_ -= take;
    pool_used_[n.pool] += take;
    used_gpus_ += take;
    reindex(n.pool, s.node, was_free, n.free_gpus, n.up);
  }
  return why;
}

void ClusterState::release(const Placement& placement) {
  for (const Slice& s : placement) {
    HEADROOM_ASSERT(s.node < nodes_.size(), "release on a missing node");
    Node& n = nodes_[s.node];
    std::int32_t give = s.gpus;
    if (s.gpu_milli > 0) {
      HEADROOM_ASSERT(!device_milli_.empty() && s.device >= 0 && s.device < n.gpus,
                      "release of a GPU share never placed on node " + std::to_string(s.node));
      std::int32_t& used = device_milli_[device_first_[s.node] + static_cast<std::size_t>(s.device)];
      HEADROOM_ASSERT(used >= s.gpu_milli, "GPU share over-release on node " + std::to_string(s.node));
      used -= s.gpu_milli;
      if (used == 0) {
        give = 1;
        --n.shared_gpus;
      }
    }
    HEADROOM_ASSERT(n.free_gpus + give <= n.gpus && n.jobs > 0, "GPU over-release on node " + std::to_string(s.node));
    const std::int32_t was_free = n.free_gpus;
    n.free_gpus += give;
    if (n.cpus > 0) n.free_cpus += s.cpus;
    if (n.memory_mib > 0) n.free_memory_mib += s.memory_mib;
    --n.jobs;
    if (n.up) {
      pool_free_[n.pool] += give;
      free_gpus_ += give;
    }
    pool_used_[n.pool] -= give;
    used_gpus_ -= give;
    reindex(n.pool, s.node, was_free, n.free_gpus, n.up);
  }
}

void ClusterState::set_up(NodeId id, bool up) {
  HEADROOM_ASSERT(id < nodes_.size(), "set_up on a missing node");
  Node& n = nodes_[id];
  if (n.up == up) return;
  index_remove(id);
  const std::int64_t sign = up ? 1 : -1;
  pool_free_[n.pool] += sign * n.free_gpus;
  free_gpus_ += sign * n.free_gpus;
  pool_up_[n.pool] += sign * n.gpus;
  up_gpus_ += sign * n.gpus;
  n.up = up;
  ++up_changes_;
  index_add(id);
}

}  // namespace headroom::models
