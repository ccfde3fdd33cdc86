#pragma once

// What the manifest readers (kueue_manifests.cpp, volcano_manifests.cpp, kai_manifests.cpp,
// kubernetes_manifests.cpp) share: the walk over YAML documents and `kind: List` items, located
// parameters and errors, warnings given once, Kubernetes quantities and PriorityClass. Internal
// to the policies library.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "policies/common/manifests.hpp"

namespace headroom::policies::manifests {

// One object of a manifest file.
struct Object {
  std::string kind;
  std::string api;  // apiVersion ("" when absent)
  std::string name;
  std::string ns;               // metadata.namespace ("" when absent)
  YAML::Node node, meta, spec;  // meta and spec: empty maps when absent
  std::string file;             // the file it is in
};

struct PriorityClass {
  std::string name;
  std::int64_t value = 0;
  bool never = false;  // preemptionPolicy: Never
  bool global_default = false;
};

class Reader {
 public:
  ManifestImport out;
  std::string file;  // the file being read

  ParamValue at(const YAML::Node& n, const std::string& text) const;
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const;
  // "file:line: msg", once per `key` over all files.
  void warn(const YAML::Node& n, const std::string& key, const std::string& msg);
  std::string scalar(const YAML::Node& n, const std::string& what) const;
  // params[key] = the scalar at n (or `text`), located at n.
  void set(const std::string& key, const YAML::Node& n);
  void set(const std::string& key, const YAML::Node& n, const std::string& text);

  // Every object of every file, `kind: List` items one by one; empty documents are skipped. A
  // file that is not UTF-8, or holds no object, is an error (kubectl refuses both). An object
  // declared again (same kind, API group, namespace and name) replaces the earlier one, as
  // `kubectl apply` does, with a warning naming both places; it is read once, at the place of
  // the first (its creation), with the content of the last.
  void read(const std::vector<std::string>& paths, const std::function<void(const Object&)>& each);

  // A Kubernetes quantity ("2", "500m", "1.5", "8Gi", "64G", "1e3") in base units.
  double quantity(const YAML::Node& n, const std::string& what) const;
  // quantity() * scale + nudge, rounded down, as an integer: "<what>: quantity "1e30" is out of
  // range" when it is 2^62 or more (headroom's counters are 64-bit; a Kubernetes Quantity itself
  // holds at most 2^63-1, apimachinery's resource/quantity.go).
  std::int64_t scaled(const YAML::Node& n, const std::string& what, double scale, double nudge = 0) const;

  // A scheduling.k8s.io PriorityClass, checked as the API server does (value required and at most
  // 1000000000, preemptionPolicy PreemptLowerPriority or Never, one globalDefault over all files).
  PriorityClass priority_class(const Object& o) const;
  // The warning for a PriorityClass where the policy takes pod priorities from the workload.
  void priority_class_from_pods(const Object& o);

 private:
  std::set<std::string> warned_;
  // The PriorityClass with globalDefault: true, and where that is said.
  mutable std::string default_class_, default_class_at_;
  void object(const YAML::Node& o, const std::function<void(const Object&)>& each);
};

// "a, b, c": the names of a key table, as docs/importing.md's generated tables list them.
template <typename Items>
std::string join_names(const Items& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + std::string(i);
  return out;
}

// Each system's reader is in its folder (policies/<system>/manifests.hpp), called through its
// SystemModule::read_manifests.

}  // namespace headroom::policies::manifests
