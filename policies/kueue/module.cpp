// Kueue (OpenShift AI) as a SystemModule (policies/system_module.hpp).
#include <algorithm>

#include "policies/kueue/cluster_refs.hpp"
#include "policies/kueue/kueue.hpp"
#include "policies/kueue/manifests.hpp"
#include "policies/system_module.hpp"

namespace headroom::policies::kueue {

namespace {

// `total` split over the pools in proportion to their GPUs, by largest remainder (the parts sum
// to `total`; equal remainders go to the earlier pool).
std::vector<std::int64_t> by_pool(const models::ClusterSpec& cluster, std::int64_t total) {
  std::vector<std::int64_t> out;
  const std::int64_t all = cluster.total_gpus();
  if (all <= 0) return std::vector<std::int64_t>(cluster.pools.size(), 0);
  std::vector<std::pair<std::int64_t, std::size_t>> rest;  // -remainder, pool
  std::int64_t given = 0;
  for (std::size_t i = 0; i < cluster.pools.size(); ++i) {
    // total x gpus / all in 128 bits: a cluster of millions of GPUs does not overflow.
    const auto num = static_cast<__int128>(total) * cluster.pools[i].gpus();
    out.push_back(static_cast<std::int64_t>(num / all));
    rest.emplace_back(-static_cast<std::int64_t>(num % all), i);
    given += out.back();
  }
  std::sort(rest.begin(), rest.end());
  for (std::size_t k = 0; given < total && k < rest.size(); ++k, ++given) ++out[rest[k].second];
  return out;
}

// A ResourceFlavor per pool, when the jobs carry node selectors by queue (compare, from Slurm
// partitions): a workload is then admitted against the quota of the pools its pods may use, as a
// site with several node pools configures Kueue. Without tenants one ClusterQueue holds each
// pool's GPUs. With tenants each tenant's ClusterQueue holds its quota on every flavor, split
// over the pools in proportion to their GPUs (nominal quota and borrowing limit alike: Kueue
// limits borrowing per flavor, not over a ClusterQueue's flavors together); "unlisted-tenants"
// holds what the tenants leave of each pool.
Derived by_pools(const DeriveRequest& r) {
  Derived d;
  const auto& pools = r.cluster->pools;
  for (const auto& pool : pools) d.put("resourceFlavors." + pool.name + ".pools", "[" + pool.name + "]", r.file);
  if (r.tenants.empty()) {
    d.put("clusterQueues.all-tenants.namespaces", "[\"*\"]", r.file);
    for (const auto& pool : pools)
      d.put("clusterQueues.all-tenants.resources." + pool.name + ".gpu.nominalQuota", std::to_string(pool.gpus()),
            r.file);
    d.pools_set_up = "a ResourceFlavor per pool, with the pool's GPUs as the ClusterQueue's quota";
    return d;
  }
  std::vector<std::int64_t> left;
  for (const auto& pool : pools) left.push_back(pool.gpus());
  for (const auto& t : r.tenants) {
    const std::string cq = "clusterQueues." + t.name;
    d.put(cq + ".namespaces", "[" + t.name + "]", r.file);
    d.put(cq + ".cohort", "all", r.file);
    const auto nominal = by_pool(*r.cluster, t.guaranteed);
    const auto borrow = by_pool(*r.cluster, std::max<std::int64_t>(0, t.max_gpus - t.guaranteed));
    for (std::size_t i = 0; i < pools.size(); ++i) {
      const std::string res = cq + ".resources." + pools[i].name + ".gpu.";
      d.put(res + "nominalQuota", std::to_string(nominal[i]), r.file);
      if (t.max_gpus >= 0) d.put(res + "borrowingLimit", std::to_string(borrow[i]), r.file);
      left[i] -= nominal[i];
    }
  }
  d.put("clusterQueues.unlisted-tenants.namespaces", "[\"*\"]", r.file);
  d.put("clusterQueues.unlisted-tenants.cohort", "all", r.file);
  for (std::size_t i = 0; i < pools.size(); ++i)
    d.put("clusterQueues.unlisted-tenants.resources." + pools[i].name + ".gpu.nominalQuota",
          std::to_string(std::max<std::int64_t>(0, left[i])), r.file);
  d.pools_set_up =
      "a ResourceFlavor per pool, each tenant's ClusterQueue quota split over the pools in proportion to their GPUs";
  return d;
}

// Kueue admits nothing without a ClusterQueue. Without tenants: one ClusterQueue over every
// namespace and the whole cluster (a platform team's first install). With tenants: a ClusterQueue
// per tenant in one cohort, nominal quota its guaranteed GPUs, borrowing up to its cap, and one for
// the tenants the scenario does not list, with what is left. When the jobs carry node selectors
// by queue and the cluster has several pools: by_pools.
std::optional<Derived> derive(const DeriveRequest& r) {
  Derived d;
  const std::int64_t total = r.cluster->total_gpus();
  const bool plain_names = std::all_of(r.cluster->pools.begin(), r.cluster->pools.end(), [](const auto& p) {
    return !p.name.empty() && p.name.find_first_of(". \t\"[]{},:#") == std::string::npos;
  });
  if (!r.node_sets.empty() && r.cluster->pools.size() > 1 && plain_names) return by_pools(r);
  d.put("resourceFlavors.default.pools", pool_list(*r.cluster), r.file);
  if (r.tenants.empty()) {
    d.put("clusterQueues.all-tenants.namespaces", "[\"*\"]", r.file);
    d.put("clusterQueues.all-tenants.resources.default.gpu.nominalQuota", std::to_string(total), r.file);
    return d;
  }
  std::int64_t given = 0;
  for (const auto& t : r.tenants) {
    const std::string cq = "clusterQueues." + t.name;
    d.put(cq + ".namespaces", "[" + t.name + "]", r.file);
    d.put(cq + ".cohort", "all", r.file);
    d.put(cq + ".resources.default.gpu.nominalQuota", std::to_string(t.guaranteed), r.file);
    if (t.max_gpus >= 0)
      d.put(cq + ".resources.default.gpu.borrowingLimit",
            std::to_string(std::max<std::int64_t>(0, t.max_gpus - t.guaranteed)), r.file);
    given += t.guaranteed;
  }
  d.put("clusterQueues.unlisted-tenants.namespaces", "[\"*\"]", r.file);
  d.put("clusterQueues.unlisted-tenants.cohort", "all", r.file);
  d.put("clusterQueues.unlisted-tenants.resources.default.gpu.nominalQuota",
        std::to_string(std::max<std::int64_t>(0, total - given)), r.file);
  return d;
}

// ResourceFlavors that select part of the pools confine the ClusterQueues using them, by
// namespace: said, not counted by queue.
NodeRules node_rules(const PolicyParams& params, const models::ClusterSpec& cluster) {
  NodeRules out;
  for (const FlavorConfig& f : parse_config(params).flavors) {
    if (f.pools.empty()) continue;
    for (const auto& pool : cluster.pools)
      out.other = out.other || std::find(f.pools.begin(), f.pools.end(), pool.name) == f.pools.end();
  }
  return out;
}

}  // namespace

SystemModule module() {
  SystemModule m;
  m.info = {"kueue",
            "Kueue on OpenShift AI: ClusterQueues, cohorts and flavors admit whole workloads (nominal, borrowing and "
            "lending quota, classic or fair-sharing preemption, admission checks, waitForPodsReady); kube-scheduler "
            "places the admitted pods",
            param_keys()};
  m.check = check_params;
  m.make = [](const PolicyParams& params, std::uint64_t) { return make_policy(params); };
  m.read_manifests = read_manifests;
  m.check_cluster_refs = check_cluster_refs;
  m.derive = derive;
  m.node_rules = node_rules;
  m.run_cost = 3;  // pods placed one by one after admission
  return m;
}

}  // namespace headroom::policies::kueue
