// kube-scheduler + the NVIDIA device plugin as a SystemModule (policies/system_module.hpp).
#include "policies/kubernetes/kubernetes.hpp"
#include "policies/kubernetes/manifests.hpp"
#include "policies/system_module.hpp"

namespace headroom::policies::k8s {

namespace {

// ResourceQuota: a hard cap per namespace (tenant); Kubernetes has no guarantee.
std::optional<Derived> derive(const DeriveRequest& r) {
  if (r.tenants.empty()) return std::nullopt;
  Derived d;
  for (const auto& t : r.tenants)
    if (t.max_gpus >= 0) d.put("quota." + t.name + ".gpu", std::to_string(t.max_gpus), r.file);
  return d;
}

// kubernetes-sigs/scheduler-plugins Coscheduling (pkg/coscheduling), the gang scheduling a site
// adds to kube-scheduler for multi-pod jobs: each job is a PodGroup whose minMember is all its pods.
constexpr std::pair<std::string_view, std::string_view> kCoschedulingParams[] = {{"coscheduling", "true"}};
constexpr AddOn kAddOns[] = {
    {"coscheduling",
     "kube-scheduler + scheduler-plugins Coscheduling (kubernetes-sigs/scheduler-plugins pkg/coscheduling): "
     "a job's pods bind all together or none (PodGroup minMember = all its pods)",
     kCoschedulingParams},
};

}  // namespace

SystemModule module() {
  SystemModule m;
  m.info = {"kubernetes",
            "kube-scheduler default profile + NVIDIA device plugin (whole GPUs): priority queue with backoff, "
            "NodeResourcesFit + BalancedAllocation scoring, DefaultPreemption, ResourceQuota admission",
            param_keys()};
  m.check = check_params;
  m.make = make_policy;
  m.read_manifests = read_manifests;
  m.derive = derive;
  m.run_cost = 3;  // pods bound one by one
  m.add_ons = kAddOns;
  return m;
}

}  // namespace headroom::policies::k8s
