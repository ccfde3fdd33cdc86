// Volcano's Queue objects (scheduling.volcano.sh/v1beta1 QueueSpec: weight, capability, deserved,
// guarantee.resource, reclaimable, parent, priority; status.state; the volcano.sh/hierarchy
// annotations) as the volcano policy's queues.<name>.* parameters (policies/volcano/params.cpp).
// metadata other than name and annotations, and status other than state, are the controller's
// and ignored.
#include "policies/volcano/manifests.hpp"

#include <cmath>
#include <string>

#include "policies/common/manifest_reader.hpp"
#include "policies/volcano/volcano.hpp"
#include "sim/yaml_documents.hpp"

namespace headroom::policies::manifests {

namespace {

struct VolcanoReader : Reader {
  // A ResourceList (capability, deserved, guarantee.resource) as queues.<q>.<field>.<resource>,
  // in the units volcano_params.cpp reads: whole GPUs, cpu millicores, memory MiB.
  void resources(const std::string& queue, const std::string& field, const YAML::Node& list) {
    if (!list.IsMap()) fail(list, "Queue " + queue + ": " + field + ": expected a map of resource to quantity");
    for (auto it = list.begin(); it != list.end(); ++it) {
      const std::string res = it->first.Scalar();
      const YAML::Node v = it->second;
      const std::string key = "queues." + queue + "." + field + ".";
      const std::string what = "Queue " + queue + ": " + field + ": " + res;
      if (res == "nvidia.com/gpu") {
        // A device count: Kubernetes takes extended resources as integers only (the API server's
        // validateResourceQuantityValue, "must be an integer"), and a count written with a
        // suffix ("4Gi", "2k") or beyond what headroom counts (int32) is a mistake, not a site.
        const double n = quantity(v, res);
        if (n != std::floor(n)) fail(v, "Queue " + queue + ": " + field + ": nvidia.com/gpu must be a whole number");
        if (v.Scalar().find_first_not_of("+0123456789") != std::string::npos || n > 2147483647.0)
          fail(v, what + ": expected a whole number of GPUs up to 2147483647, got \"" + v.Scalar() + "\"");
        set(key + res, v, std::to_string(static_cast<std::int64_t>(n)));
      } else if (res == "cpu") {
        set(key + res, v, std::to_string(scaled(v, what, 1000.0, 1e-6)) + "m");
      } else if (res == "memory") {
        set(key + res, v, std::to_string(scaled(v, what, 1.0 / 1048576.0)) + "Mi");
      } else {
        warn(v, "resource-" + res,
             "resource " + res + " is not modelled (nvidia.com/gpu, cpu and memory are); left out of queue " + queue +
                 "'s " + field);
      }
    }
  }

  void queue(const Object& o) {
    if (o.name.empty()) fail(o.node, "Queue: missing metadata.name");
    const std::string& q = o.name;
    const std::string prefix = "queues." + q;
    for (auto it = o.spec.begin(); it != o.spec.end(); ++it) {
      const std::string f = it->first.Scalar();
      const YAML::Node v = it->second;
      if (q == "root" && (f == "capability" || f == "deserved" || f == "guarantee")) {
        continue;  // the root queue's resources are the cluster's, set by the controller
      } else if (f == "parent" && scalar(v, "a parent queue name") == "root") {
        continue;  // a top-level queue, as without parent
      } else if (f == "weight" || f == "reclaimable" || f == "parent" || f == "priority") {
        set(prefix + "." + f, v);
      } else if (f == "capability" || f == "deserved") {
        resources(q, f, v);
      } else if (f == "guarantee") {
        if (!v.IsMap()) fail(v, "Queue " + q + ": guarantee: expected a map with resource");
        for (auto g = v.begin(); g != v.end(); ++g) {
          if (g->first.Scalar() == "resource")
            resources(q, "guarantee.resource", g->second);
          else
            warn(g->second, "guarantee-" + g->first.Scalar(),
                 "Queue guarantee." + g->first.Scalar() + " is not modelled (guarantee.resource is)");
        }
      } else if (f == "dequeueStrategy") {
        if (scalar(v, "a dequeueStrategy") != "traverse")
          warn(v, "dequeueStrategy", "Queue dequeueStrategy " + v.Scalar() + " is not modelled (traverse is)");
      } else {
        warn(v, "queue-" + f, "Queue " + f + " is not modelled; ignored");
      }
    }
    if (const YAML::Node ann = o.meta["annotations"]; ann && ann.IsMap()) {
      for (auto it = ann.begin(); it != ann.end(); ++it) {
        const std::string a = it->first.Scalar();
        if (a == "volcano.sh/hierarchy" || a == "volcano.sh/hierarchy-weights") {
          set(prefix + ".annotations." + a, it->second);
        } else if (a == "volcano.sh/dequeue-strategy") {
          if (scalar(it->second, "a dequeue strategy") != "traverse")
            warn(it->second, "dequeueStrategy",
                 "Queue dequeue strategy " + it->second.Scalar() + " is not modelled (traverse is)");
        }
      }
    }
    // status.state is the queue's live state (Open, Closing, Closed), as the scheduler reads it.
    if (const YAML::Node st = o.node["status"]; st && st.IsMap() && st["state"]) set(prefix + ".state", st["state"]);
  }

  // The scheduler's own configuration as the cluster holds it: a ConfigMap (Volcano's Helm chart
  // and guides name it volcano-scheduler-configmap) whose data key volcano-scheduler.conf is
  // the YAML the scheduler reads (conf/scheduler_conf.go SchedulerConfiguration): `actions` and
  // `tiers` become the policy's parameters of those names; `configurations` (action arguments)
  // and `metrics` change no modelled decision and warn.
  void scheduler_conf(const Object& o) {
    const YAML::Node text = o.node["data"]["volcano-scheduler.conf"];
    const std::string body = scalar(text, "volcano-scheduler.conf as text");
    // The same bounds as a manifest file's (aliases, nesting, documents) before yaml-cpp walks it.
    std::string problem;
    bool stray = false;
    try {
      stray = sim::walk_yaml_documents(body, file + " (volcano-scheduler.conf)").stray.has_value();
    } catch (const sim::InputError& e) {
      problem = e.message();
    } catch (const YAML::Exception& e) {
      problem = e.msg + " (at line " + std::to_string(e.mark.line + 1) + " of the embedded configuration)";
    }
    if (stray) problem = "not YAML: unexpected text where a value or a new key should be";
    if (!problem.empty()) fail(text, "volcano-scheduler.conf: " + problem);
    const YAML::Node conf = YAML::Load(body);
    if (!conf.IsMap()) fail(text, "volcano-scheduler.conf: expected a map with actions and tiers");
    for (auto it = conf.begin(); it != conf.end(); ++it) {
      const std::string k = it->first.Scalar();
      const YAML::Node v = it->second;
      if (k == "actions") {
        set("actions", text, scalar(v, "volcano-scheduler.conf actions as a string"));
      } else if (k == "tiers") {
        YAML::Emitter e;
        e.SetMapFormat(YAML::Flow);
        e.SetSeqFormat(YAML::Flow);
        e << v;
        set("tiers", text, e.c_str());
        dra_arguments(text, v);
      } else {
        warn(text, "conf-" + k, "volcano-scheduler.conf " + k + " is not modelled; ignored");
      }
    }
  }

  // The capacity plugin's (and predicates') DRA switches: accepted, one warning (headroom models
  // no ResourceClaim; GPUs are nvidia.com/gpu requests).
  void dra_arguments(const YAML::Node& at_node, const YAML::Node& tiers) {
    if (!tiers.IsSequence()) return;
    for (const auto& tier : tiers) {
      const YAML::Node plugins = tier.IsMap() ? tier["plugins"] : YAML::Node();
      if (!plugins || !plugins.IsSequence()) continue;
      for (const auto& p : plugins) {
        const YAML::Node args = p.IsMap() ? p["arguments"] : YAML::Node();
        if (!args || !args.IsMap()) continue;
        for (auto a = args.begin(); a != args.end(); ++a)
          if (volcano::is_dra_argument(a->first.Scalar()))
            warn(at_node, "dra-" + a->first.Scalar(),
                 "plugin argument " + a->first.Scalar() +
                     ": Dynamic Resource Allocation is not modelled (GPUs are nvidia.com/gpu requests); accepted");
      }
    }
  }

  void object(const Object& o) {
    if (o.kind == "Namespace") return;
    if (o.kind == "ConfigMap" && o.node["data"].IsMap() && o.node["data"]["volcano-scheduler.conf"]) {
      scheduler_conf(o);
      return;
    }
    if (o.kind == "PriorityClass") {
      priority_class_from_pods(o);
    } else if (o.kind == "Queue" && o.api.starts_with("scheduling.volcano.sh/")) {
      queue(o);
    } else if (o.kind == "ResourceQuota") {
      warn(o.node, "kind-ResourceQuota",
           "ResourceQuota is modelled by the kubernetes policy (quota.<namespace>.*); ignored under volcano");
    } else {
      warn(o.node, "kind-" + o.kind, "kind " + o.kind + " (" + o.api + ") is not a Volcano Queue; ignored");
    }
  }
};

}  // namespace

}  // namespace headroom::policies::manifests

namespace headroom::policies::volcano {

ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec&, const PoolLabels&) {
  manifests::VolcanoReader r;
  r.read(paths, [&](const manifests::Object& o) { r.object(o); });
  return r.out;
}

}  // namespace headroom::policies::volcano
