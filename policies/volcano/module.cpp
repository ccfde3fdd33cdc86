// The Volcano batch scheduler as a SystemModule (policies/system_module.hpp).
#include <algorithm>

#include "policies/system_module.hpp"
#include "policies/volcano/manifests.hpp"
#include "policies/volcano/volcano.hpp"

namespace headroom::policies::volcano {

namespace {

// The GPUs of the cluster's pools named in `pools`.
std::int64_t pool_gpus(const models::ClusterSpec& cluster, const std::vector<std::string>& pools) {
  std::int64_t n = 0;
  for (const auto& p : cluster.pools)
    if (std::find(pools.begin(), pools.end(), p.name) != pools.end()) n += p.gpus();
  return n;
}

// Without tenants, when the jobs carry node selectors by queue (compare, from Slurm partitions):
// a Queue per partition, as a site moving its partitions to Volcano creates them, and on each
// queue kept to part of the pools a capability of those pools' GPUs. proportion water-fills
// deserved over the whole cluster and knows no node selector: without the capability a queue
// whose pools are full is still deserved a share of the others' nodes, and the queue that could
// use them is held below its share (bench/RESULTS.md, CEA Curie). Jobs that name no queue go to
// "default", which takes the Default partition's pools.
std::optional<Derived> derive_by_pools(const DeriveRequest& r) {
  Derived d;
  for (const auto& q : r.declared_queues)
    if (!q.empty()) d.put("queues." + q + ".weight", "1", r.file);
  for (const auto& [q, pools] : r.queue_node_sets) {
    if (q.empty() || q == models::kUnknownName) continue;  // such jobs queue in "default"
    d.put("queues." + q + ".capability.gpu", std::to_string(pool_gpus(*r.cluster, pools)), r.file);
  }
  d.pools_set_up = "a Queue per partition, capability the GPUs of its pools";
  return d;
}

// A Queue per tenant (jobs queue by their tenant): weight, capability from the tenant's cap and
// guarantee from its GPUs. The permission drill's queue grants name the trace's queues, so then
// nothing is derived.
std::optional<Derived> derive(const DeriveRequest& r) {
  if (r.tenants.empty() && !r.restricted && !r.queue_node_sets.empty()) return derive_by_pools(r);
  return queue_per_tenant(r, [&](Derived& d, const TenantQuota& t) {
    const std::string q = "queues." + t.name;
    d.put(q + ".weight", integer_weight(t.weight), r.file);
    if (t.max_gpus >= 0) d.put(q + ".capability.gpu", std::to_string(t.max_gpus), r.file);
    if (t.gpus >= 0) d.put(q + ".guarantee.resource.gpu", std::to_string(t.gpus), r.file);
  });
}

}  // namespace

SystemModule module() {
  SystemModule m;
  m.info = {"volcano",
            "Volcano batch scheduler: sessions of enqueue/allocate/backfill (+ preempt, reclaim), PodGroup gang, "
            "overcommit, proportion deserved by queue weight, drf, priority, binpack/nodeorder, plugin tiers",
            param_keys()};
  m.check = check_params;
  m.make = make_policy;
  m.read_manifests = read_manifests;
  m.derive = derive;
  m.run_cost = 2;
  return m;
}

}  // namespace headroom::policies::volcano
