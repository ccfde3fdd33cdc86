// KAI-Scheduler's Queue objects (scheduling.run.ai/v2 QueueSpec: parentQueue, priority,
// preemptMinRuntime, reclaimMinRuntime, resources.{gpu,cpu,memory}.{quota,limit,overQuotaWeight};
// displayName is for people and ignored) as the kai policy's queues.<name>.* parameters
// (policies/kai/params.cpp), in the order they are read (KAI's creation order). Units as KAI's
// (docs/queues/README.md): gpu in devices, cpu in millicores, memory in MB (10^6 bytes), which
// become MiB here. PriorityClass: KAI's own four classes are what the kai policy applies by job
// kind (priorityClassName.<kind>); any other is a warning.
#include "policies/kai/manifests.hpp"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "policies/common/manifest_reader.hpp"

namespace headroom::policies::manifests {

namespace {

// The reader's tables; site_keys_markdown() prints them for docs/importing.md.
constexpr const char* kQueueScalars[] = {"parentQueue", "priority", "preemptMinRuntime", "reclaimMinRuntime"};
constexpr const char* kQueueQuiet[] = {"displayName"};
constexpr const char* kResources[] = {"gpu", "cpu", "memory"};
constexpr const char* kResourceFields[] = {"quota", "limit", "overQuotaWeight"};
constexpr std::pair<const char*, std::int64_t> kKaiClasses[] = {
    {"train", 50}, {"build-preemptible", 75}, {"build", 100}, {"inference", 125}};

bool listed(const auto& table, const std::string& s) {
  for (const char* t : table)
    if (s == t) return true;
  return false;
}

struct KaiReader : Reader {
  void resources(const std::string& queue, const YAML::Node& res) {
    if (!res.IsMap()) fail(res, "Queue " + queue + ": resources: expected a map of gpu, cpu and memory");
    for (auto it = res.begin(); it != res.end(); ++it) {
      const std::string r = it->first.Scalar();
      if (!listed(kResources, r)) {
        warn(it->second, "resource-" + r, "Queue resources." + r + " is not modelled (gpu, cpu and memory are)");
        continue;
      }
      if (!it->second.IsMap())
        fail(it->second, "Queue " + queue + ": resources." + r + ": expected quota, limit, overQuotaWeight");
      for (auto f = it->second.begin(); f != it->second.end(); ++f) {
        const std::string field = f->first.Scalar();
        const YAML::Node v = f->second;
        const std::string key = "queues." + queue + ".resources." + r + "." + field;
        static_assert(std::size(kResourceFields) == 3, "the branches below read these three");
        if (field == kResourceFields[2]) {
          set(key, v);
        } else if (field == kResourceFields[0] || field == kResourceFields[1]) {
          const std::string text = scalar(v, "a number");
          if (r == "memory" && text != "-1") {
            // MB (10^6 bytes) to MiB, rounded down.
            char* end = nullptr;
            const double mb = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(mb) || mb < 0)
              fail(v, "Queue " + queue + ": resources.memory." + field + ": expected a number of MB or -1, got \"" +
                          text + "\"");
            set(key, v, std::to_string(static_cast<std::int64_t>(std::floor(mb * 1e6 / 1048576.0))));
          } else {
            set(key, v);
          }
        } else {
          warn(v, "resource-field-" + field, "Queue resources." + r + "." + field + " is not modelled; ignored");
        }
      }
    }
  }

  void queue(const Object& o) {
    if (o.name.empty()) fail(o.node, "Queue: missing metadata.name");
    const std::string prefix = "queues." + o.name;
    bool any = false;
    for (auto it = o.spec.begin(); it != o.spec.end(); ++it) {
      const std::string f = it->first.Scalar();
      const YAML::Node v = it->second;
      if (listed(kQueueQuiet, f)) continue;
      if (listed(kQueueScalars, f)) {
        set(prefix + "." + f, v);
        any = true;
      } else if (f == "resources") {
        resources(o.name, v);
        any = true;
      } else {
        warn(v, "queue-" + f, "Queue " + f + " is not modelled; ignored");
      }
    }
    // A queue with nothing set still exists (KAI's defaults): declare it by its GPU quota default.
    if (!any) set(prefix + ".resources.gpu.quota", o.node, "0");
  }

  void object(const Object& o) {
    if (o.kind == "Namespace") return;
    if (o.kind == "PriorityClass") {
      const PriorityClass pc = priority_class(o);
      for (const auto& [name, value] : kKaiClasses)
        if (pc.name == name && pc.value == value) return;  // KAI's own, applied by job kind
      warn(o.node, "priorityclass",
           "PriorityClass " + pc.name + " (value " + std::to_string(pc.value) +
               ") is not one of KAI's own (train 50, build-preemptible 75, build 100, inference 125); the kai "
               "policy gives jobs those by kind (priorityClassName.<kind>)");
    } else if (o.kind == "Queue" && o.api.starts_with("scheduling.run.ai/")) {
      queue(o);
    } else if (o.kind == "ResourceQuota") {
      warn(o.node, "kind-ResourceQuota",
           "ResourceQuota is modelled by the kubernetes policy (quota.<namespace>.*); ignored under kai");
    } else {
      warn(o.node, "kind-" + o.kind, "kind " + o.kind + " (" + o.api + ") is not a KAI Queue; ignored");
    }
  }
};

}  // namespace

}  // namespace headroom::policies::manifests

namespace headroom::policies::kai {

std::string site_keys_markdown() {
  std::string classes;
  for (const auto& [name, value] : manifests::kKaiClasses)
    classes += (classes.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(value);
  std::string out;
  out += "| kai: object, field | Read (modelled) | Warned once, left out | Accepted quietly |\n";
  out += "|---|---|---|---|\n";
  out += "| Queue (scheduling.run.ai) spec | " + manifests::join_names(manifests::kQueueScalars) +
         ", resources | every other field | " + manifests::join_names(manifests::kQueueQuiet) + " |\n";
  out += "| Queue resources | " + manifests::join_names(manifests::kResources) + ", each with " +
         manifests::join_names(manifests::kResourceFields) +
         " (memory in MB, read as MiB) | every other resource or field | |\n";
  out += "| PriorityClass | | any class other than KAI's own | KAI's own (" + classes +
         "; the kai policy applies them by job kind) |\n";
  out += "| other kinds | | ResourceQuota (the kubernetes policy's), any other kind | Namespace |\n";
  out +=
      "\nRefused, naming file:line:column: a Queue without metadata.name, resources or a resource that is not a "
      "map, memory that is not a number of MB or -1, a PriorityClass the API server would refuse.\n";
  return out;
}

ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec&, const PoolLabels&) {
  manifests::KaiReader r;
  r.read(paths, [&](const manifests::Object& o) { r.object(o); });
  return r.out;
}

}  // namespace headroom::policies::kai
