// Shared walk over Kubernetes manifests (policies/common/manifest_reader.hpp).
#include "policies/common/manifest_reader.hpp"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string_view>

#include "sim/errors.hpp"
#include "sim/quantity.hpp"
#include "sim/yaml_documents.hpp"

namespace headroom::policies::manifests {

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
  for (const auto& path : paths) {
    file = path;
    std::vector<YAML::Node> docs;
    try {
      std::ifstream in(path, std::ios::binary);
      if (!in) throw YAML::BadFile(path);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (const auto stray = sim::walk_yaml_documents(text, path).stray)
        throw sim::InputError(path, stray->line + 1, stray->column + 1, "",
                              "not YAML: unexpected text where a value or a new key should be");
      docs = YAML::LoadAll(text);
    } catch (const YAML::BadFile&) {
      throw sim::InputError(path, 0, 0, "", "cannot read the manifest file");
    } catch (const YAML::ParserException& e) {
      throw sim::InputError(path, e.mark.line + 1, e.mark.column + 1, "", "not YAML: " + e.msg);
    }
    for (const auto& d : docs) {
      if (d.IsNull()) continue;
      try {
        object(d, each);
      } catch (const YAML::Exception& e) {
        throw sim::InputError(path, e.mark.line + 1, e.mark.column + 1, "", "unexpected manifest shape: " + e.msg);
      }
    }
  }
}

double Reader::quantity(const YAML::Node& n, const std::string& what) const {
  const std::string text = scalar(n, what + " as a quantity such as 2, 500m or 64Gi");
  const auto q = sim::parse_quantity(text);
  if (!q) fail(n, what + ": expected a non-negative quantity such as 2, 500m or 64Gi, got \"" + text + "\"");
  return *q;
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
