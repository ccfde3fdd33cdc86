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
#include <string>

#include "policies/common/manifest_reader.hpp"

namespace headroom::policies::manifests {

namespace {

struct KaiReader : Reader {
  void resources(const std::string& queue, const YAML::Node& res) {
    if (!res.IsMap()) fail(res, "Queue " + queue + ": resources: expected a map of gpu, cpu and memory");
    for (auto it = res.begin(); it != res.end(); ++it) {
      const std::string r = it->first.Scalar();
      if (r != "gpu" && r != "cpu" && r != "memory") {
        warn(it->second, "resource-" + r, "Queue resources." + r + " is not modelled (gpu, cpu and memory are)");
        continue;
      }
      if (!it->second.IsMap())
        fail(it->second, "Queue " + queue + ": resources." + r + ": expected quota, limit, overQuotaWeight");
      for (auto f = it->second.begin(); f != it->second.end(); ++f) {
        const std::string field = f->first.Scalar();
        const YAML::Node v = f->second;
        const std::string key = "queues." + queue + ".resources." + r + "." + field;
        if (field == "overQuotaWeight") {
          set(key, v);
        } else if (field == "quota" || field == "limit") {
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
      if (f == "displayName") continue;
      if (f == "parentQueue" || f == "priority" || f == "preemptMinRuntime" || f == "reclaimMinRuntime") {
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
      static const std::pair<const char*, std::int64_t> kKai[] = {
          {"train", 50}, {"build-preemptible", 75}, {"build", 100}, {"inference", 125}};
      for (const auto& [name, value] : kKai)
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

ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec&, const PoolLabels&) {
  manifests::KaiReader r;
  r.read(paths, [&](const manifests::Object& o) { r.object(o); });
  return r.out;
}

}  // namespace headroom::policies::kai
