// NVIDIA KAI-Scheduler (Run:ai) as a SystemModule (policies/system_module.hpp).
#include <sstream>

#include "policies/kai/kai.hpp"
#include "policies/kai/manifests.hpp"
#include "policies/system_module.hpp"

namespace headroom::policies::kai {

namespace {

// A queue per tenant (jobs queue by their tenant): its guaranteed GPUs as quota, its weight as
// overQuotaWeight, its cap as limit. The permission drill's queue grants name the trace's queues,
// so then nothing is derived.
std::optional<Derived> derive(const DeriveRequest& r) {
  return queue_per_tenant(r, [&](Derived& d, const TenantQuota& t) {
    const std::string q = "queues." + t.name;
    d.put(q + ".priority", "100", r.file);
    d.put(q + ".resources.gpu.quota", std::to_string(t.guaranteed), r.file);
    std::ostringstream w;
    w << t.weight;
    d.put(q + ".resources.gpu.overQuotaWeight", w.str(), r.file);
    d.put(q + ".resources.gpu.limit", std::to_string(t.max_gpus), r.file);
  });
}

}  // namespace

SystemModule module() {
  SystemModule m;
  m.info = {"kai",
            "NVIDIA KAI-Scheduler (Run:ai): hierarchical queues with quota / overQuotaWeight / limit fair share, gang "
            "allocation, binpack or spread, reclaim, in-queue preemption, consolidation, stale-gang eviction",
            param_keys()};
  m.check = check_params;
  m.make = make_policy;
  m.read_manifests = read_manifests;
  m.derive = derive;
  return m;
}

}  // namespace headroom::policies::kai
