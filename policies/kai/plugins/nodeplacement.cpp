// Where a pod group's pods go: KAI-Scheduler's nodeplacement plugin (plugins/nodeplacement/pack.go,
// spread.go), gpusharingorder and gpupack / gpuspread for shared devices, the pods larger than a
// node, and the topology plugin's domains (plugins/topology/job_filtering.go; the domain search
// itself is policies/kai/topology.cpp).
#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "models/topology.hpp"
#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

// The node that pack.go / spread.go scores best for a single-node pod, or kNoNode.
NodeId KaiPolicy::best_node(const Job& job, Overlay& ov, NodeId exclude) const {
  const bool spread =
      job.gpus > 0 ? cfg_.gpu_placement == PlacementStrategy::Spread : cfg_.cpu_placement == PlacementStrategy::Spread;
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
std::tuple<NodeId, std::int32_t, std::int32_t> KaiPolicy::best_share(const Job& job, Overlay& ov,
                                                                     NodeId exclude) const {
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
std::optional<models::Placement> KaiPolicy::multi_node_placement(const Job& job, Overlay& ov) const {
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
// inside the first of the plugin's domains that holds them all (topology.hpp).
std::optional<std::vector<models::Placement>> KaiPolicy::place(const std::vector<JobIndex>& pods, Overlay& ov,
                                                               NodeId exclude) const {
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

std::vector<models::SwitchId> KaiPolicy::topology_domains_of(const std::vector<JobIndex>& pods, Overlay& ov) const {
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

std::optional<std::vector<models::Placement>> KaiPolicy::place_pods(const std::vector<JobIndex>& pods, Overlay& ov,
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
    if (larger_than_node_[j] != 0) return std::nullopt;  // its trace shape fits no node
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

}  // namespace headroom::policies::kai::detail
