// Kueue (OpenShift AI) as a SystemModule (policies/system_module.hpp).
#include <algorithm>

#include "policies/kueue/cluster_refs.hpp"
#include "policies/kueue/kueue.hpp"
#include "policies/kueue/manifests.hpp"
#include "policies/system_module.hpp"

namespace headroom::policies::kueue {

namespace {

// Kueue admits nothing without a ClusterQueue. Without tenants: one ClusterQueue over every
// namespace and the whole cluster (a platform team's first install). With tenants: a ClusterQueue
// per tenant in one cohort, nominal quota its guaranteed GPUs, borrowing up to its cap, and one for
// the tenants the scenario does not list, with what is left. When the jobs carry node selectors
// by queue (compare, from Slurm partitions) and there are no tenants: a ResourceFlavor per pool
// with its GPUs as the ClusterQueue's quota, as a site with several node pools configures Kueue,
// so that a workload is admitted against the quota of the pools its pods may use.
std::optional<Derived> derive(const DeriveRequest& r) {
  Derived d;
  const std::int64_t total = r.cluster->total_gpus();
  const bool plain_names = std::all_of(r.cluster->pools.begin(), r.cluster->pools.end(), [](const auto& p) {
    return !p.name.empty() && p.name.find_first_of(". \t\"[]{},:#") == std::string::npos;
  });
  if (!r.node_sets.empty() && r.tenants.empty() && r.cluster->pools.size() > 1 && plain_names) {
    d.put("clusterQueues.all-tenants.namespaces", "[\"*\"]", r.file);
    for (const auto& pool : r.cluster->pools) {
      d.put("resourceFlavors." + pool.name + ".pools", "[" + pool.name + "]", r.file);
      d.put("clusterQueues.all-tenants.resources." + pool.name + ".gpu.nominalQuota",
            std::to_string(static_cast<std::int64_t>(pool.nodes) * pool.gpus_per_node), r.file);
    }
    d.pools_set_up = "a ResourceFlavor per pool, with the pool's GPUs as the ClusterQueue's quota";
    return d;
  }
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
