// Kueue manifests to kueue policy parameters. Field names are Kueue's API (kueue.x-k8s.io
// v1beta1/v1beta2: ResourceFlavorSpec, ClusterQueueSpec, LocalQueueSpec, CohortSpec, Topology);
// apiVersion's version, metadata other than name/namespace, and status are not needed and ignored.
#include "policies/kueue/manifests.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "policies/common/manifest_reader.hpp"
#include "policies/kueue/kueue.hpp"

namespace headroom::policies::kueue {

namespace {

// The reader's tables; site_keys_markdown() prints them for docs/importing.md.
constexpr const char* kGpuNames[] = {"nvidia.com/gpu", "amd.com/gpu", "gpu"};
constexpr const char* kQuotaFields[] = {"nominalQuota", "borrowingLimit", "lendingLimit"};
// ClusterQueue spec fields copied under clusterQueues.<cq>.<field> (the kueue policy's key table
// checks each leaf).
constexpr const char* kCqCopied[] = {"queueingStrategy", "preemption",      "flavorFungibility",
                                     "fairSharing",      "admissionChecks", "admissionScope"};

bool listed(const auto& table, const std::string& s) {
  for (const char* t : table)
    if (s == t) return true;
  return false;
}

struct Reader : manifests::Reader {
  const models::ClusterSpec& cluster;
  const PoolLabels& labels;
  std::map<std::string, std::vector<std::string>> namespaces;  // ClusterQueue -> LocalQueue namespaces
  std::map<std::string, ParamValue> namespaces_at;
  std::map<std::string, std::vector<std::string>> local_queues;  // ClusterQueue -> "namespace/name"

  Reader(const models::ClusterSpec& c, const PoolLabels& l) : cluster(c), labels(l) {}

  // Copies the scalar leaves of `n` under `prefix` (preemption, flavorFungibility, ...).
  void copy(const std::string& prefix, const YAML::Node& n) {
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) copy(prefix + "." + it->first.Scalar(), it->second);
    } else if (n.IsScalar()) {
      set(prefix, n);
    } else if (n.IsSequence()) {
      std::string list;
      for (const auto& item : n) list += (list.empty() ? "" : ", ") + scalar(item, "a name");
      out.params[prefix] = at(n, "[" + list + "]");
    }
  }

  static std::string resource(const std::string& name) {
    if (listed(kGpuNames, name)) return "gpu";
    if (name == "cpu" || name == "memory") return name;
    return "";
  }

  // A quota as the kueue policy's keys count it (whole GPUs, whole cores, memory in Mi), from any
  // Kubernetes quantity: "300m" cores is 1 (headroom's pods ask for whole cores, rounded up; one
  // warning), "1G" of memory 954Mi (rounded up). Text already in those units is kept as written.
  std::string amount(const YAML::Node& q, const std::string& res, const std::string& rname) {
    const std::string text = scalar(q, rname + " as a quantity");
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (res != "memory" && digits) return text;
    if (res == "memory" && text.size() > 2 && (text.ends_with("Mi") || text.ends_with("Gi") || text.ends_with("Ti")) &&
        text.substr(0, text.size() - 2).find_first_not_of("0123456789") == std::string::npos)
      return text;
    const double v = quantity(q, rname);
    if (res == "memory") return std::to_string(static_cast<std::int64_t>(std::ceil(v / 1048576.0 - 1e-9))) + "Mi";
    const double whole = std::ceil(v - 1e-9);
    if (!(whole < 1099511627776.0)) fail(q, rname + ": quantity \"" + text + "\" is out of range");
    if (whole != v)
      warn(q, "fraction-" + res,
           rname + " quota " + text + " is counted in whole " + (res == "cpu" ? "cores" : "devices") +
               " (rounded up to " + std::to_string(static_cast<std::int64_t>(whole)) +
               "; headroom's pods ask for whole ones)");
    return std::to_string(static_cast<std::int64_t>(whole));
  }

  void resource_groups(const std::string& owner, const YAML::Node& groups) {
    if (!groups.IsSequence()) fail(groups, "resourceGroups: expected a list");
    // The groups' coveredResources (the modelled ones): a ClusterQueue refuses what none covers
    // and assigns each group its own flavor.
    std::string covered_list;
    for (const auto& g : groups) {
      const YAML::Node covered = g.IsMap() ? g["coveredResources"] : YAML::Node();
      if (!covered || !covered.IsSequence()) continue;
      std::string names;
      for (const auto& c : covered) {
        const std::string res = resource(scalar(c, "a resource name"));
        if (!res.empty() && names.find(res) == std::string::npos) names += (names.empty() ? "" : ", ") + res;
      }
      covered_list += std::string(covered_list.empty() ? "" : ", ") + "[" + names + "]";
    }
    if (owner.rfind("clusterQueues.", 0) == 0 && !covered_list.empty())
      out.params[owner + ".resourceGroups"] = at(groups, "[" + covered_list + "]");
    for (const auto& g : groups) {
      const YAML::Node flavors = g["flavors"];
      if (!flavors || !flavors.IsSequence()) fail(g, "resourceGroups[]: expected a flavors list");
      for (const auto& f : flavors) {
        const std::string flavor = scalar(f["name"], "a flavor name");
        for (const auto& r : f["resources"]) {
          const std::string rname = scalar(r["name"], "a resource name");
          const std::string res = resource(rname);
          if (res.empty()) {
            warn(r, "resource-" + rname,
                 "resource " + rname + " is not modelled (gpu, cpu and memory are); its quota is left out");
            continue;
          }
          for (const char* field : kQuotaFields)
            if (const YAML::Node q = r[field])
              set(owner + ".resources." + flavor + "." + res + "." + field, q, amount(q, res, rname));
        }
      }
    }
  }

  void object(const manifests::Object& ob) {
    const YAML::Node& o = ob.node;
    const std::string& kind = ob.kind;
    const std::string& api = ob.api;
    const std::string& name = ob.name;
    const YAML::Node& spec = ob.spec;
    const bool is_kueue = api.rfind("kueue.x-k8s.io/", 0) == 0;
    if (kind == "Namespace") return;
    if (kind == "WorkloadPriorityClass") {
      warn(o, "kind-" + kind, kind + " is read from the trace's job priorities, not from manifests");
      return;
    }
    if (kind == "PriorityClass") {
      priority_class_from_pods(ob);
      return;
    }
    if (!is_kueue) {
      warn(o, "kind-" + kind, "kind " + kind + " (" + api + ") is not a Kueue object; ignored");
      return;
    }
    if (name.empty()) fail(o, kind + ": missing metadata.name");
    if (kind == "ResourceFlavor") {
      std::vector<std::string> pools;
      const YAML::Node labels = spec["nodeLabels"];
      for (std::size_t pi = 0; pi < cluster.pools.size(); ++pi) {
        const auto& p = cluster.pools[pi];
        static const std::vector<std::pair<std::string, std::string>> kNone;
        const auto& have = pi < this->labels.size() ? this->labels[pi] : kNone;
        bool all = true;
        if (labels && labels.IsMap())
          for (auto it = labels.begin(); it != labels.end(); ++it) {
            const auto pair = std::make_pair(it->first.Scalar(), it->second.Scalar());
            if (std::find(have.begin(), have.end(), pair) == have.end()) all = false;
          }
        if (all) pools.push_back(p.name);
      }
      if (pools.empty())
        fail(labels ? labels : o, "ResourceFlavor " + name +
                                      ": no pool's labels match its nodeLabels; give the pools `labels:` as the "
                                      "nodes carry them");
      std::string list;
      for (const auto& p : pools) list += (list.empty() ? "" : ", ") + p;
      out.params["resourceFlavors." + name + ".pools"] = at(labels ? labels : o, "[" + list + "]");
      if (spec["topologyName"])
        warn(spec["topologyName"], "topologyName",
             "ResourceFlavor topologyName is read as the cluster's topology (cluster.topology), not from the "
             "Topology object");
      if (spec["nodeTaints"] || spec["tolerations"])
        warn(o, "taints", "ResourceFlavor nodeTaints/tolerations are not modelled");
    } else if (kind == "ClusterQueue") {
      const std::string cq = "clusterQueues." + name;
      for (auto it = spec.begin(); it != spec.end(); ++it) {
        const std::string f = it->first.Scalar();
        const YAML::Node v = it->second;
        if (f == "resourceGroups") {
          resource_groups(cq, v);
        } else if (f == "cohort" || f == "cohortName") {
          set(cq + ".cohort", v);
        } else if (listed(kCqCopied, f)) {
          copy(cq + "." + f, v);
        } else if (f == "namespaceSelector") {
          if (v.IsMap() && v.size() > 0)
            warn(v, "namespaceSelector",
                 "namespaceSelector labels are not modelled: the namespaces of the LocalQueues pointing at a "
                 "ClusterQueue submit to it");
        } else if (f == "stopPolicy") {
          set(cq + ".stopPolicy", v);
        } else {
          warn(v, "cq-" + f, "ClusterQueue " + f + " is not modelled");
        }
      }
      // A ClusterQueue with nothing set still exists (Kueue's defaults): declared by its default
      // queueingStrategy, so that a LocalQueue naming it is not taken for one naming no queue.
      if (const auto it = out.params.lower_bound(cq + ".");
          it == out.params.end() || it->first.compare(0, cq.size() + 1, cq + ".") != 0)
        set(cq + ".queueingStrategy", o, "BestEffortFIFO");
    } else if (kind == "LocalQueue") {
      const std::string ns = ob.ns.empty() ? "default" : ob.ns;
      const std::string cq = spec["clusterQueue"] ? scalar(spec["clusterQueue"], "spec.clusterQueue") : "";
      if (cq.empty()) fail(o, "LocalQueue " + name + ": missing spec.clusterQueue");
      auto& list = namespaces[cq];
      if (std::find(list.begin(), list.end(), ns) == list.end()) list.push_back(ns);
      local_queues[cq].push_back(ns + "/" + name);
      namespaces_at.emplace(cq, at(spec["clusterQueue"], ""));
      if (spec["fairSharing"]) copy("localQueues." + ns + ".fairSharing", spec["fairSharing"]);
    } else if (kind == "Cohort") {
      const std::string c = "cohorts." + name;
      for (auto it = spec.begin(); it != spec.end(); ++it) {
        const std::string f = it->first.Scalar();
        if (f == "resourceGroups") {
          resource_groups(c, it->second);
        } else if (f == "parentName" || f == "parent") {
          set(c + ".parentName", it->second);
        } else if (f == "fairSharing") {
          copy(c + ".fairSharing", it->second);
        } else {
          warn(it->second, "cohort-" + f, "Cohort " + f + " is not modelled");
        }
      }
    } else if (kind == "Topology") {
      // Its levels (outermost first, as node labels) name cluster.topology's levels, so that a
      // podset-required or -preferred topology can be given as the label Kueue uses.
      const YAML::Node levels = spec["levels"];
      if (!levels || !levels.IsSequence() || levels.size() == 0)
        fail(levels ? levels : o, "Topology " + name + ": expected spec.levels, a list of {nodeLabel: ...}");
      std::string list;
      for (const auto& l : levels) {
        if (!l.IsMap() || !l["nodeLabel"]) fail(l, "Topology " + name + ": each level needs a nodeLabel");
        list += (list.empty() ? "" : ", ") + scalar(l["nodeLabel"], "a node label");
      }
      out.params["topologies." + name + ".levels"] = at(levels, "[" + list + "]");
    } else {
      warn(o, "kind-" + kind, "Kueue kind " + kind + " is not modelled; ignored");
    }
  }
};

}  // namespace

std::string site_keys_markdown() {
  // The leaves the kueue policy's key table reads under each copied ClusterQueue field.
  std::vector<std::string> leaves;
  const std::string cq = "clusterQueues.<cq>.";
  for (const auto& k : param_keys())
    for (const char* f : kCqCopied)
      if (k.starts_with(cq + f)) leaves.push_back(k.substr(cq.size()));
  std::string out;
  out += "| kueue: object, field | Read (modelled) | Warned once, left out | Accepted quietly |\n";
  out += "|---|---|---|---|\n";
  out +=
      "| ResourceFlavor spec | nodeLabels (select the pools whose labels hold them all) | topologyName (the "
      "cluster's topology is used), nodeTaints, tolerations | every other field |\n";
  out += "| ClusterQueue spec | resourceGroups, cohort (cohortName), stopPolicy, " + manifests::join_names(leaves) +
         " | namespaceSelector with labels (the LocalQueues' namespaces submit), every other field | an empty "
         "namespaceSelector |\n";
  out += "| resourceGroups flavors' resources | " + manifests::join_names(kGpuNames) +
         " (as GPUs), cpu, memory; each with " + manifests::join_names(kQuotaFields) +
         " | every other resource (its quota left out) | coveredResources (they define the "
         "groups) |\n";
  out +=
      "| LocalQueue spec | clusterQueue, fairSharing.weight (several per namespace; a job picks one by "
      "kueue.x-k8s.io/queue-name) | | every other field |\n";
  out += "| Cohort spec | resourceGroups, parentName (parent), fairSharing.weight | every other field | |\n";
  out += "| Topology spec | levels[].nodeLabel (name cluster.topology's levels) | | every other field |\n";
  out +=
      "| other kinds | PriorityClass (checked; pods take their priority from the workload, one warning) | "
      "WorkloadPriorityClass (priorities come from the trace), any other Kueue kind (AdmissionCheck, "
      "ProvisioningRequestConfig, ...), any kind that is not Kueue's | Namespace |\n";
  out +=
      "\nRefused, naming file:line:column: an object without metadata.name, a LocalQueue without "
      "spec.clusterQueue, resourceGroups that is not a list or a group without flavors, a ResourceFlavor whose "
      "nodeLabels match no pool, a Topology without levels, a quota out of range; under the policy's own "
      "checks, every value the key table refuses (with \"did you mean\").\n";
  return out;
}

ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec& cluster,
                              const PoolLabels& labels) {
  Reader r(cluster, labels);
  r.read(paths, [&](const manifests::Object& o) { r.object(o); });
  for (const auto& [cq, list] : r.namespaces) {
    std::string text;
    for (const auto& ns : list) text += (text.empty() ? "" : ", ") + ns;
    ParamValue v = r.namespaces_at[cq];
    v.text = "[" + text + "]";
    r.out.params["clusterQueues." + cq + ".namespaces"] = v;
    text.clear();
    for (const auto& lq : r.local_queues[cq]) text += (text.empty() ? "" : ", ") + lq;
    v.text = "[" + text + "]";
    r.out.params["clusterQueues." + cq + ".localQueues"] = v;
  }
  return r.out;
}

}  // namespace headroom::policies::kueue
