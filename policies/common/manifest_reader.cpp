// Shared walk over Kubernetes manifests (policies/common/manifest_reader.hpp).
#include "policies/common/manifest_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string_view>

#include "sim/errors.hpp"
#include "sim/quantity.hpp"
#include "sim/read_text.hpp"
#include "sim/text.hpp"
#include "sim/yaml_documents.hpp"

namespace headroom::policies::manifests {

namespace {

// Kinds outside any namespace (the API server ignores a metadata.namespace on them).
bool cluster_scoped(const std::string& kind) {
  static const std::set<std::string> kKinds = {
      "ClusterQueue",    "ResourceFlavor", "Cohort", "Topology",  "AdmissionCheck", "WorkloadPriorityClass",
      "PriorityClass",   "Namespace",      "Queue",  "HyperNode", "Node",           "MultiKueueCluster",
      "MultiKueueConfig"};
  return kKinds.count(kind) != 0;
}

// The group of an apiVersion: "kueue.x-k8s.io/v1beta1" -> "kueue.x-k8s.io", "v1" -> "".
std::string api_group(const std::string& api) {
  const std::size_t slash = api.find('/');
  return slash == std::string::npos ? std::string() : api.substr(0, slash);
}

}  // namespace

ParamValue Reader::at(const YAML::Node& n, const std::string& text) const {
  const YAML::Mark m = n.Mark();
  return ParamValue{text, file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

void Reader::fail(const YAML::Node& n, const std::string& msg) const {
  const YAML::Mark m = n.Mark();
  throw sim::InputError(file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, "", msg);
}

void Reader::warn(const YAML::Node& n, const std::string& key, const std::string& msg) {
  if (!warned_.insert(key).second) return;
  out.warnings.push_back(file + ":" + std::to_string(n.Mark().line + 1) + ": " + msg);
}

std::string Reader::scalar(const YAML::Node& n, const std::string& what) const {
  if (!n.IsScalar()) fail(n, "expected " + what);
  return n.Scalar();
}

void Reader::set(const std::string& key, const YAML::Node& n) {
  out.params[key] = at(n, scalar(n, key + " as a value"));
}

void Reader::set(const std::string& key, const YAML::Node& n, const std::string& text) {
  out.params[key] = at(n, text);
}

void Reader::object(const YAML::Node& o, const std::function<void(const Object&)>& each) {
  if (!o.IsMap()) fail(o, "expected a Kubernetes object (a map with apiVersion and kind)");
  const YAML::Node kindn = o["kind"];
  if (!kindn) fail(o, "missing kind");
  Object obj;
  obj.kind = scalar(kindn, "a kind");
  if (obj.kind == "List" || (obj.kind.size() > 4 && obj.kind.ends_with("List") && o["items"])) {
    const YAML::Node items = o["items"];
    if (items && !items.IsSequence() && !items.IsNull()) fail(items, "items: expected a list of objects");
    for (const auto& item : items) object(item, each);
    return;
  }
  obj.node = o;
  obj.api = o["apiVersion"] ? scalar(o["apiVersion"], "an apiVersion") : "";
  obj.meta = o["metadata"] && o["metadata"].IsMap() ? o["metadata"] : YAML::Node(YAML::NodeType::Map);
  if (obj.meta["name"]) obj.name = scalar(obj.meta["name"], "metadata.name");
  if (obj.meta["namespace"]) obj.ns = scalar(obj.meta["namespace"], "metadata.namespace");
  obj.spec = o["spec"] && o["spec"].IsMap() ? o["spec"] : YAML::Node(YAML::NodeType::Map);
  if (o["spec"] && !o["spec"].IsMap() && !o["spec"].IsNull()) fail(o["spec"], obj.kind + ": spec: expected a map");
  each(obj);
}

void Reader::read(const std::vector<std::string>& paths, const std::function<void(const Object&)>& each) {
  std::vector<Object> all;  // every object of every file, in order
  for (const auto& path : paths) {
    file = path;
    std::vector<YAML::Node> docs;
    try {
      std::ifstream in(path, std::ios::binary);
      if (!in) throw YAML::BadFile(path);
      // An ifstream opens a folder and fails only when read (std::ios_base::failure, not an input
      // error). kubectl apply -f would read the files in it; headroom takes files only: say so.
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec))
        throw sim::InputError(path, 0, 0, "", "a folder, not a manifest file (name the files in it)");
      const std::string text = sim::read_capped(in, path, sim::kMaxConfigBytes, "a manifest file");
      // kubectl's YAML reader (go-yaml's reader: "invalid leading UTF-8 octet") refuses a file
      // with any byte that is not UTF-8, comments included: so does headroom, before any name
      // from it can reach a result file.
      if (const std::size_t bad = sim::utf8_error(text); bad != std::string::npos) {
        const std::size_t nl = bad == 0 ? std::string::npos : text.rfind('\n', bad - 1);
        const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
        const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
        throw sim::InputError(path, static_cast<int>(line) + 1, static_cast<int>(bad - start) + 1, "",
                              "not UTF-8 text: byte " + sim::hex_byte(static_cast<unsigned char>(text[bad])) +
                                  " is not valid UTF-8 (kubectl's YAML reader refuses the file)");
      }
      if (const auto stray = sim::walk_yaml_documents(text, path).stray)
        throw sim::InputError(path, stray->line + 1, stray->column + 1, "",
                              "not YAML: unexpected text where a value or a new key should be");
      docs = YAML::LoadAll(text);
    } catch (const YAML::BadFile&) {
      throw sim::InputError(path, 0, 0, "", "cannot read the manifest file");
    } catch (const YAML::ParserException& e) {
      throw sim::InputError(path, e.mark.line + 1, e.mark.column + 1, "", "not YAML: " + e.msg);
    }
    const std::size_t before = all.size();
    for (const auto& d : docs) {
      if (d.IsNull()) continue;
      try {
        object(d, [&](const Object& o) {
          all.push_back(o);
          all.back().file = path;
        });
      } catch (const YAML::Exception& e) {
        throw sim::InputError(path, e.mark.line + 1, e.mark.column + 1, "", "unexpected manifest shape: " + e.msg);
      }
    }
    // kubectl apply -f of a file without objects (empty, comments, `---`, an empty List):
    // "error: no objects passed to apply" (kubectl's apply.go), and nothing applied.
    if (all.size() == before)
      throw sim::InputError(
          path, 0, 0, "", "no objects in the manifest file (kubectl apply refuses it: \"no objects passed to apply\")");
  }
  // One object per kind, API group, namespace and name: `kubectl apply` of a second document
  // naming the same object patches the first into it (the later fields win, the earlier ones it
  // does not name are gone, as kubectl's last-applied configuration drops them); the object
  // keeps its creation, the first one's place.
  std::vector<std::size_t> content(all.size());
  std::vector<bool> later(all.size(), false);
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < all.size(); ++i) {
    content[i] = i;
    const Object& o = all[i];
    if (o.name.empty()) continue;  // refused by the kind's reader
    const bool scoped = !cluster_scoped(o.kind);
    const std::string ns = scoped ? (o.ns.empty() ? std::string("default") : o.ns) : std::string();
    const std::string shown = scoped ? ns + "/" + o.name : o.name;
    const auto [it, fresh] = first.emplace(o.kind + "\n" + api_group(o.api) + "\n" + shown, i);
    if (fresh) continue;
    const Object& was = all[it->second];
    content[it->second] = i;
    later[i] = true;
    out.warnings.push_back(o.file + ":" + std::to_string(o.node.Mark().line + 1) + ": " + o.kind + " \"" + shown +
                           "\" is declared again (first at " + was.file + ":" +
                           std::to_string(was.node.Mark().line + 1) +
                           "); as with kubectl apply, the later one replaces the earlier one");
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (later[i]) continue;
    const Object& o = all[content[i]];
    file = o.file;
    try {
      each(o);
    } catch (const YAML::Exception& e) {
      throw sim::InputError(file, e.mark.line + 1, e.mark.column + 1, "", "unexpected manifest shape: " + e.msg);
    }
  }
}

double Reader::quantity(const YAML::Node& n, const std::string& what) const {
  const std::string text = scalar(n, what + " as a quantity such as 2, 500m or 64Gi");
  const auto q = sim::parse_quantity(text);
  if (!q) fail(n, what + ": expected a non-negative quantity such as 2, 500m or 64Gi, got \"" + text + "\"");
  return *q;
}

std::int64_t Reader::scaled(const YAML::Node& n, const std::string& what, double scale, double nudge) const {
  const double v = std::floor(quantity(n, what) * scale + nudge);
  if (!(v < 4611686018427387904.0)) fail(n, what + ": quantity \"" + n.Scalar() + "\" is out of range");
  return static_cast<std::int64_t>(v);
}

PriorityClass Reader::priority_class(const Object& o) const {
  PriorityClass pc;
  pc.name = o.name;
  if (pc.name.empty()) fail(o.node, "PriorityClass: missing metadata.name");
  const YAML::Node value = o.node["value"];
  if (!value) fail(o.node, "PriorityClass " + pc.name + ": missing value");
  const std::string text = scalar(value, "an integer value");
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // User classes go up to 1000000000; system-cluster-critical and system-node-critical are above.
  if (ec != std::errc() || p != text.data() + text.size() || v < -2147483648LL ||
      (v > 1000000000 && !pc.name.starts_with("system-")))
    fail(value, "PriorityClass " + pc.name + ": expected an integer value up to 1000000000, got \"" + text + "\"");
  pc.value = v;
  if (const YAML::Node pp = o.node["preemptionPolicy"]) {
    const std::string t = scalar(pp, "a preemptionPolicy");
    if (t != "PreemptLowerPriority" && t != "Never")
      fail(pp,
           "PriorityClass " + pc.name + ": preemptionPolicy must be PreemptLowerPriority or Never, got \"" + t + "\"");
    pc.never = t == "Never";
  }
  if (const YAML::Node g = o.node["globalDefault"]) {
    const std::string t = scalar(g, "true or false");
    if (t != "true" && t != "false") fail(g, "PriorityClass " + pc.name + ": globalDefault must be true or false");
    pc.global_default = t == "true";
    // The API server's Priority admission plugin (plugin/pkg/admission/priority/admission.go)
    // refuses a second class marked globalDefault: "Only one default can exist".
    if (pc.global_default && !default_class_.empty() && default_class_ != pc.name)
      fail(g, "PriorityClass " + pc.name + ": globalDefault: PriorityClass " + default_class_ + " (at " +
                  default_class_at_ + ") is already the default; the API server allows one");
    if (pc.global_default) {
      default_class_ = pc.name;
      default_class_at_ = file + ":" + std::to_string(g.Mark().line + 1);
    }
  }
  return pc;
}

void Reader::priority_class_from_pods(const Object& o) {
  const PriorityClass pc = priority_class(o);
  warn(o.node, "kind-PriorityClass",
       "PriorityClass " + pc.name + " (value " + std::to_string(pc.value) +
           "): checked, not applied; pods take their priority and preemptionPolicy from the workload (a pod "
           "list's spec.priority, which admission resolved from these classes)");
}

}  // namespace headroom::policies::manifests
