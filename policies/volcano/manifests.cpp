// Volcano's Queue objects (scheduling.volcano.sh/v1beta1 QueueSpec: weight, capability, deserved,
// guarantee.resource, reclaimable, parent, priority; status.state; the volcano.sh/hierarchy
// annotations) as the volcano policy's queues.<name>.* parameters (policies/volcano/params.cpp).
// metadata other than name and annotations, and status other than state, are the controller's
// and ignored.
#include "policies/volcano/manifests.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "policies/common/manifest_reader.hpp"
#include "policies/volcano/volcano.hpp"
#include "sim/text.hpp"
#include "sim/yaml_documents.hpp"

namespace headroom::policies::manifests {

namespace {

// The reader's tables; site_keys_markdown() prints them for docs/importing.md.
constexpr const char* kQueueScalars[] = {"weight", "reclaimable", "parent", "priority"};
constexpr const char* kQueueResourceLists[] = {"capability", "deserved"};  // and guarantee.resource
constexpr const char* kQueueResources[] = {"nvidia.com/gpu", "cpu", "memory"};
constexpr const char* kQueueAnnotations[] = {"volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"};
constexpr const char* kConfKeys[] = {"actions", "tiers"};

bool listed(const auto& table, const std::string& s) {
  for (const char* t : table)
    if (s == t) return true;
  return false;
}

struct VolcanoReader : Reader {
  // Queue parents, held until every object is read: Volcano's webhook takes a parent whatever the
  // plugins (validate_queue.go), and without the capacity plugin's enableHierarchy the scheduler
  // treats the queues as flat (proportion ignores parent). A scheduler ConfigMap read here that
  // does not enable the hierarchy drops them with a warning; without one, the scenario's own
  // tiers decide (the policy refuses a parent there without the hierarchy).
  std::vector<std::pair<std::string, YAML::Node>> parents;
  bool conf_read = false, hierarchy = false;

  void finish_parents() {
    for (const auto& [key, v] : parents) {
      if (!conf_read || hierarchy) {
        set(key, v);
      } else {
        warn(v, "parent-flat",
             "Queue parent is not used: the scheduler ConfigMap has no capacity plugin with enableHierarchy: true, "
             "so the plugins headroom models treat the queues as flat; ignored");
      }
    }
  }

  // A ResourceList (capability, deserved, guarantee.resource) as queues.<q>.<field>.<resource>,
  // in the units volcano_params.cpp reads: whole GPUs, cpu millicores, memory MiB.
  void resources(const std::string& queue, const std::string& field, const YAML::Node& list) {
    if (!list.IsMap()) fail(list, "Queue " + queue + ": " + field + ": expected a map of resource to quantity");
    for (auto it = list.begin(); it != list.end(); ++it) {
      const std::string res = it->first.Scalar();
      const YAML::Node v = it->second;
      const std::string key = "queues." + queue + "." + field + ".";
      const std::string what = "Queue " + queue + ": " + field + ": " + res;
      static_assert(std::size(kQueueResources) == 3, "the branches below read these three");
      if (res == kQueueResources[0]) {
        // A device count: Kubernetes takes extended resources as integers only (the API server's
        // validateResourceQuantityValue, "must be an integer"), and a count written with a
        // suffix ("4Gi", "2k") or beyond what headroom counts (int32) is a mistake, not a site.
        const double n = quantity(v, res);
        if (n != std::floor(n)) fail(v, "Queue " + queue + ": " + field + ": nvidia.com/gpu must be a whole number");
        if (v.Scalar().find_first_not_of("+0123456789") != std::string::npos || n > 2147483647.0)
          fail(v, what + ": expected a whole number of GPUs up to 2147483647, got \"" + v.Scalar() + "\"");
        set(key + res, v, std::to_string(static_cast<std::int64_t>(n)));
      } else if (res == kQueueResources[1]) {
        set(key + res, v, std::to_string(scaled(v, what, 1000.0, 1e-6)) + "m");
      } else if (res == kQueueResources[2]) {
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
      } else if (f == "parent") {
        parents.emplace_back(prefix + ".parent", v);  // set once the scheduler's tiers are known
      } else if (listed(kQueueScalars, f)) {
        set(prefix + "." + f, v);
      } else if (listed(kQueueResourceLists, f)) {
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
        if (listed(kQueueAnnotations, a)) {
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
      static_assert(std::size(kConfKeys) == 2, "the branches below read these two");
      if (k == kConfKeys[0]) {
        set("actions", text, modelled_actions(text, scalar(v, "volcano-scheduler.conf actions as a string")));
      } else if (k == kConfKeys[1]) {
        dra_arguments(text, v);
        YAML::Emitter e;
        e.SetMapFormat(YAML::Flow);
        e.SetSeqFormat(YAML::Flow);
        const YAML::Node tiers = modelled_tiers(text, v);
        e << tiers;
        set("tiers", text, e.c_str());
        conf_read = true;
        for (const auto& tier : tiers)
          for (const auto& p : tier["plugins"])
            if (p.IsMap() && p["name"] && p["name"].Scalar() == "capacity" && p["enableHierarchy"] &&
                p["enableHierarchy"].IsScalar() && p["enableHierarchy"].Scalar() == "true")
              hierarchy = true;
      } else {
        warn(text, "conf-" + k, "volcano-scheduler.conf " + k + " is not modelled; ignored");
      }
    }
  }

  // The actions list without the actions Volcano registers and headroom does not model (shuffle,
  // gangpreempt, gangreclaim): one warning each. A name Volcano does not know stays in, for the
  // policy's "unknown action" error (Volcano refuses it too: "failed to find Action").
  std::string modelled_actions(const YAML::Node& at_node, const std::string& actions) {
    const auto& skip = volcano::upstream_unmodelled_actions();
    std::string out;
    std::size_t from = 0;
    while (from <= actions.size()) {
      const std::size_t comma = std::min(actions.find(',', from), actions.size());
      std::string item = actions.substr(from, comma - from);
      from = comma + 1;
      const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      const std::string name = b == std::string::npos ? std::string() : item.substr(b, e - b + 1);
      if (std::find(skip.begin(), skip.end(), name) != skip.end()) {
        warn(at_node, "action-" + name, "action " + name + " is not modelled; left out of the actions");
        continue;
      }
      if (!out.empty() || !name.empty()) out += (out.empty() ? "" : ", ") + name;
    }
    return out;
  }

  // The tiers without what Volcano runs and headroom does not model, one warning each: plugins
  // (sla, tdm, deviceshare, ...), `enable...` switches of callbacks headroom's plugins lack, and
  // plugin arguments headroom does not read. Anything else (a name Volcano does not know either)
  // is kept for the policy's own errors with "did you mean".
  YAML::Node modelled_tiers(const YAML::Node& at_node, const YAML::Node& tiers) {
    if (!tiers.IsSequence()) return tiers;
    const auto has = [](const std::vector<std::string>& names, const std::string& n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    };
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& tier : tiers) {
      const YAML::Node plugins = tier.IsMap() ? tier["plugins"] : YAML::Node();
      if (!plugins || !plugins.IsSequence()) {
        out.push_back(tier);
        continue;
      }
      YAML::Node kept(YAML::NodeType::Sequence);
      for (const auto& p : plugins) {
        const std::string name = p.IsMap() && p["name"] && p["name"].IsScalar() ? p["name"].Scalar() : "";
        if (has(volcano::upstream_unmodelled_plugins(), name)) {
          warn(at_node, "plugin-" + name, "plugin " + name + " is not modelled; left out of the tiers");
          continue;
        }
        if (!p.IsMap() || !has(volcano::plugin_names(), name)) {
          kept.push_back(p);
          continue;
        }
        YAML::Node plugin(YAML::NodeType::Map);
        for (auto f = p.begin(); f != p.end(); ++f) {
          const std::string field = f->first.IsScalar() ? f->first.Scalar() : "";
          if (has(volcano::upstream_unmodelled_switches(), field)) {
            warn(at_node, "switch-" + field, "plugin switch " + field + " is not modelled; ignored");
          } else if (field == "arguments" && f->second.IsMap()) {
            YAML::Node args(YAML::NodeType::Map);
            for (auto a = f->second.begin(); a != f->second.end(); ++a) {
              const std::string arg = a->first.IsScalar() ? a->first.Scalar() : "";
              if ((arg == "binpack.resources" || arg == "hypernode.binpack.resources") && a->second.IsScalar() &&
                  a->second.Scalar().find(',') != std::string::npos) {
                // A list of resources (Volcano's guides write "nvidia.com/gpu, example.com/foo"): GPUs
                // are binpacked, the other resources are left out, one warning each.
                bool gpu = false;
                for (std::string item : sim::split_on(a->second.Scalar(), ',')) {
                  item.erase(0, item.find_first_not_of(' '));
                  item.erase(item.find_last_not_of(' ') + 1);
                  if (item == "nvidia.com/gpu")
                    gpu = true;
                  else if (!item.empty())
                    warn(at_node, "argument-" + arg + "-" + item,
                         "plugin " + name + " argument " + arg + ": resource " + item +
                             " is not modelled (nvidia.com/gpu is); ignored");
                }
                if (gpu) args[a->first] = "nvidia.com/gpu";
              } else if (volcano::is_modelled_argument(arg))
                args[a->first] = a->second;
              else
                warn(at_node, "argument-" + arg, "plugin " + name + " argument " + arg + " is not modelled; ignored");
            }
            if (args.size() > 0) plugin[f->first] = args;
          } else {
            plugin[f->first] = f->second;
          }
        }
        kept.push_back(plugin);
      }
      if (kept.size() == 0) continue;  // a tier of plugins headroom does not model only
      YAML::Node t(YAML::NodeType::Map);
      for (auto f = tier.begin(); f != tier.end(); ++f)
        if (!(f->first.IsScalar() && f->first.Scalar() == "plugins")) t[f->first] = f->second;
      t["plugins"] = kept;
      out.push_back(t);
    }
    return out;
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

std::string site_keys_markdown() {
  std::string out;
  out += "| volcano: object, field | Read (modelled) | Warned once, left out | Accepted quietly |\n";
  out += "|---|---|---|---|\n";
  out += "| Queue (scheduling.volcano.sh) spec | " + manifests::join_names(manifests::kQueueScalars) + ", " +
         manifests::join_names(manifests::kQueueResourceLists) +
         ", guarantee.resource, dequeueStrategy: traverse; status.state | every other field; guarantee other than "
         "resource; dequeueStrategy other than traverse | metadata other than name and annotations, status other "
         "than state; the root queue's capability, deserved and guarantee (the cluster's) |\n";
  out += "| Queue resources (capability, deserved, guarantee.resource) | " +
         manifests::join_names(manifests::kQueueResources) + " | every other resource | |\n";
  out += "| Queue annotations | " + manifests::join_names(manifests::kQueueAnnotations) +
         ", volcano.sh/dequeue-strategy: traverse | volcano.sh/dequeue-strategy other than traverse | every other "
         "annotation |\n";
  out += "| ConfigMap data volcano-scheduler.conf | " + manifests::join_names(manifests::kConfKeys) +
         " | every other key (configurations, metrics, ...) | |\n";
  out += "| volcano-scheduler.conf actions | " + manifests::join_names(action_names()) + " | " +
         manifests::join_names(upstream_unmodelled_actions()) + " | |\n";
  out += "| volcano-scheduler.conf tiers, plugins | " + manifests::join_names(plugin_names()) + " | " +
         manifests::join_names(upstream_unmodelled_plugins()) + " | |\n";
  out += "| plugin switches | " + manifests::join_names(switch_names()) + " | " +
         manifests::join_names(upstream_unmodelled_switches()) + " | |\n";
  out += "| plugin arguments | " + manifests::join_names(argument_names()) +
         "; the DRA switches (warned: DRA is not modelled) | every other argument; the resources other than "
         "nvidia.com/gpu of a binpack.resources or hypernode.binpack.resources list | |\n";
  out +=
      "| other kinds | PriorityClass (checked; pods take their priority from the workload, one warning) | "
      "ResourceQuota (the kubernetes policy's), any other kind | Namespace |\n";
  out +=
      "\nRefused, naming file:line:column: a Queue without metadata.name, a resource list that is not a map, "
      "nvidia.com/gpu that is not a whole number up to 2147483647, a quantity out of range, an embedded "
      "volcano-scheduler.conf that is not YAML or not a map; under the policy's own checks, an action or plugin "
      "Volcano does not know either (with \"did you mean\"), a plugin Volcano has and headroom does not model "
      "written in a scenario's own policy block.\n";
  return out;
}

ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec&, const PoolLabels&) {
  manifests::VolcanoReader r;
  r.read(paths, [&](const manifests::Object& o) { r.object(o); });
  r.finish_parents();
  return r.out;
}

}  // namespace headroom::policies::volcano
