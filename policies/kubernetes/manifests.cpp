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
#include <iterator>
#include <map>
#include <string>
#include <utility>

#include "policies/common/manifest_reader.hpp"

namespace headroom::policies::manifests {

namespace {

constexpr const char* kQuotaField[4] = {"gpu", "cpu", "memory", "pods"};

// The reader's tables; site_keys_markdown() prints them for docs/importing.md. spec.hard keys that
// set quota.<namespace>.<kQuotaField[i]> (limits.* are checked against the pods' requests, with a
// warning), then the object counts and storage that have no effect on where pods run.
constexpr const char* kGpuKeys[] = {"requests.nvidia.com/gpu"};
constexpr const char* kCpuKeys[] = {"requests.cpu", "cpu", "limits.cpu"};
constexpr const char* kMemoryKeys[] = {"requests.memory", "memory", "limits.memory"};
constexpr const char* kPodKeys[] = {"pods", "count/pods"};
constexpr const char* kQuietKeys[] = {
    "services",       "secrets",         "configmaps", "persistentvolumeclaims", "replicationcontrollers",
    "resourcequotas", "requests.storage"};
constexpr const char* kQuietPrefixes[] = {"count/", "services."};
constexpr const char* kQuietInfixes[] = {".storageclass.storage.k8s.io/"};
constexpr const char* kScopeFields[] = {"scopes", "scopeSelector"};

bool listed(const auto& table, const std::string& s) {
  for (const char* t : table)
    if (s == t) return true;
  return false;
}

bool quiet(const std::string& k) {
  if (listed(kQuietKeys, k)) return true;
  for (const char* p : kQuietPrefixes)
    if (k.starts_with(p)) return true;
  for (const char* i : kQuietInfixes)
    if (k.find(i) != std::string::npos) return true;
  return false;
}

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
    const char* scoped = nullptr;
    for (const char* f : kScopeFields)
      if (!scoped && o.spec[f]) scoped = f;
    if (scoped) {
      warn(o.spec[scoped], "quota-scopes",
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
      if (listed(kGpuKeys, k)) {
        limit(ns, 0, v, whole(v, k));
      } else if (listed(kCpuKeys, k)) {
        limit(ns, 1, v, scaled(v, k, 1000.0, 1e-6));
      } else if (listed(kMemoryKeys, k)) {
        limit(ns, 2, v, scaled(v, k, 1.0 / 1048576.0));
      } else if (listed(kPodKeys, k)) {
        limit(ns, 3, v, whole(v, k));
      } else if (quiet(k)) {
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

std::string site_keys_markdown() {
  std::string quiet = manifests::join_names(manifests::kQuietKeys);
  for (const char* p : manifests::kQuietPrefixes) quiet += ", " + std::string(p) + "RESOURCE";
  for (const char* i : manifests::kQuietInfixes) quiet += ", CLASS" + std::string(i) + "RESOURCE";
  std::string read;
  const std::pair<const char* const*, std::size_t> keys[4] = {
      {manifests::kGpuKeys, std::size(manifests::kGpuKeys)},
      {manifests::kCpuKeys, std::size(manifests::kCpuKeys)},
      {manifests::kMemoryKeys, std::size(manifests::kMemoryKeys)},
      {manifests::kPodKeys, std::size(manifests::kPodKeys)}};
  for (int i = 0; i < 4; ++i) {
    std::string list;
    for (std::size_t k = 0; k < keys[i].second; ++k)
      list += (list.empty() ? "" : " / ") + std::string(keys[i].first[k]);
    read += (read.empty() ? "" : "; ") + list + " -> quota.NAMESPACE." + manifests::kQuotaField[i];
  }
  std::string limits;  // the limits.* keys: read as the requests, with a warning
  for (const auto& table : {std::pair{manifests::kCpuKeys, std::size(manifests::kCpuKeys)},
                            std::pair{manifests::kMemoryKeys, std::size(manifests::kMemoryKeys)}})
    for (std::size_t k = 0; k < table.second; ++k)
      if (std::string(table.first[k]).starts_with("limits."))
        limits += (limits.empty() ? "" : ", ") + std::string(table.first[k]);
  std::string out;
  out += "| kubernetes: object, field | Read (modelled) | Warned once, left out | Accepted quietly |\n";
  out += "|---|---|---|---|\n";
  out += "| ResourceQuota spec.hard | " + read +
         " (no namespace is default; several quotas of one namespace give the tightest) | " + limits +
         " (read, and checked against the pods' requests), every other resource | " + quiet + " |\n";
  out += "| ResourceQuota spec | hard | " + manifests::join_names(manifests::kScopeFields) +
         " (the whole quota is left out) | every other field |\n";
  out +=
      "| other kinds | PriorityClass (checked; pods take their priority from the workload, one warning) | "
      "any other kind (LimitRange, Volcano, Kueue or KAI objects, ...) | Namespace |\n";
  out +=
      "\nRefused, naming file:line:column: spec.hard that is not a map, requests.nvidia.com/gpu or pods that is not "
      "a whole number up to 2147483647, a negative quantity or one out of range, a PriorityClass the API server "
      "would refuse.\n";
  return out;
}

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
