// Core Kubernetes objects for the kubernetes policy: ResourceQuota (v1: spec.hard
// requests.nvidia.com/gpu, requests.cpu / cpu, requests.memory / memory, pods / count/pods) as
// quota.<namespace>.{gpu,cpu,memory,pods}, the smallest where several quotas of one namespace set
// a resource (the API server enforces all of them); PriorityClass checked (pods carry their
// priority). Quotas for objects headroom does not have (services, secrets, configmaps,
// persistentvolumeclaims, storage) are accepted; scoped quotas and other compute resources warn.
#include "policies/kubernetes/manifests.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "policies/common/manifest_reader.hpp"

namespace headroom::policies::manifests {

namespace {

constexpr const char* kQuotaField[4] = {"gpu", "cpu", "memory", "pods"};

struct KubernetesReader : Reader {
  struct Limit {
    std::int64_t value = -1;
    ParamValue at;
  };
  std::map<std::string, std::array<Limit, 4>> quotas;  // namespace -> gpu, cpu (millicores), memory (MiB), pods

  void limit(const std::string& ns, int r, const YAML::Node& v, std::int64_t value) {
    Limit& l = quotas[ns][static_cast<std::size_t>(r)];
    if (l.value >= 0 && l.value <= value) return;
    l.value = value;
    l.at = at(v, "");
  }

  std::int64_t whole(const YAML::Node& v, const std::string& what) {
    const double n = quantity(v, what);
    if (n != std::floor(n) || n > 2147483647.0)
      fail(v, what + ": expected a whole number up to 2147483647, got \"" + v.Scalar() + "\"");
    return static_cast<std::int64_t>(n);
  }

  void resource_quota(const Object& o) {
    const std::string ns = o.ns.empty() ? "default" : o.ns;
    const std::string who = "ResourceQuota " + (o.name.empty() ? std::string("(unnamed)") : o.name);
    if (o.spec["scopes"] || o.spec["scopeSelector"]) {
      warn(o.spec["scopes"] ? o.spec["scopes"] : o.spec["scopeSelector"], "quota-scopes",
           who +
               ": scopes and scopeSelector are not modelled; a scoped quota (which counts only the pods its "
               "scopes select) is left out");
      return;
    }
    const YAML::Node hard = o.spec["hard"];
    if (!hard) return;
    if (!hard.IsMap()) fail(hard, who + ": spec.hard: expected a map of resource to quantity");
    for (auto it = hard.begin(); it != hard.end(); ++it) {
      const std::string k = it->first.Scalar();
      const YAML::Node v = it->second;
      if (k == "requests.nvidia.com/gpu") {
        limit(ns, 0, v, whole(v, k));
      } else if (k == "requests.cpu" || k == "cpu" || k == "limits.cpu") {
        limit(ns, 1, v, scaled(v, k, 1000.0, 1e-6));
      } else if (k == "requests.memory" || k == "memory" || k == "limits.memory") {
        limit(ns, 2, v, scaled(v, k, 1.0 / 1048576.0));
      } else if (k == "pods" || k == "count/pods") {
        limit(ns, 3, v, whole(v, k));
      } else if (k.starts_with("count/") || k == "services" || k == "secrets" || k == "configmaps" ||
                 k == "persistentvolumeclaims" || k == "replicationcontrollers" || k == "resourcequotas" ||
                 k.starts_with("services.") || k == "requests.storage" ||
                 k.find(".storageclass.storage.k8s.io/") != std::string::npos) {
        continue;  // objects and storage headroom does not have: no effect on where pods run
      } else {
        warn(v, "quota-" + k, who + ": " + k + " is not modelled (requests.nvidia.com/gpu, cpu, memory and pods are)");
        continue;
      }
      if (k.starts_with("limits."))
        warn(v, "quota-limits",
             who + ": " + k +
                 " is checked against the pods' requests (headroom keeps one figure per pod, the "
                 "request, or the limit where a container gives no request)");
    }
  }

  void object(const Object& o) {
    if (o.kind == "Namespace") return;
    if (o.kind == "PriorityClass") {
      priority_class_from_pods(o);
    } else if (o.kind == "ResourceQuota") {
      resource_quota(o);
    } else {
      warn(o.node, "kind-" + o.kind,
           "kind " + o.kind + " (" + o.api +
               ") is not read by the kubernetes policy (ResourceQuota and "
               "PriorityClass are); ignored");
    }
  }
};

}  // namespace

}  // namespace headroom::policies::manifests

namespace headroom::policies::k8s {

ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec&, const PoolLabels&) {
  manifests::KubernetesReader r;
  r.read(paths, [&](const manifests::Object& o) { r.object(o); });
  for (const auto& [ns, limits] : r.quotas)
    for (int i = 0; i < 4; ++i) {
      const auto& l = limits[static_cast<std::size_t>(i)];
      if (l.value < 0) continue;
      ParamValue v = l.at;
      v.text = i == 1   ? std::to_string(l.value) + "m"
               : i == 2 ? std::to_string(l.value) + "Mi"
                        : std::to_string(l.value);
      r.out.params["quota." + ns + "." + manifests::kQuotaField[i]] = v;
    }
  return r.out;
}

}  // namespace headroom::policies::k8s
