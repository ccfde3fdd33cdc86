// The Volcano batch scheduler as a SystemModule (policies/system_module.hpp).
#include "policies/system_module.hpp"
#include "policies/volcano/manifests.hpp"
#include "policies/volcano/volcano.hpp"

namespace headroom::policies::volcano {

namespace {

// A Queue per tenant (jobs queue by their tenant): weight, capability from the tenant's cap and
// guarantee from its GPUs. The permission drill's queue grants name the trace's queues, so then
// nothing is derived.
std::optional<Derived> derive(const DeriveRequest& r) {
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
