#include "policies/registry.hpp"

#include <algorithm>
#include <cmath>

#include "policies/common/param_table.hpp"
#include "policies/system_module.hpp"
#include "sim/suggest.hpp"

namespace headroom::policies {

// Each system's module, defined in its folder (module.cpp).
namespace baselines {
SystemModule fifo_module();
SystemModule sjf_module();
SystemModule srtf_module();
SystemModule las_module();
SystemModule gavel_module();
}  // namespace baselines
namespace k8s {
SystemModule module();
}
namespace volcano {
SystemModule module();
}
namespace kueue {
SystemModule module();
}
namespace kai {
SystemModule module();
}
namespace slurm {
SystemModule module();
}

namespace {

// The registry: an explicit table, in the order of the policy catalogue. Adding a system is one
// folder plus one row here (and its declaration above).
const std::vector<SystemModule>& modules() {
  static const std::vector<SystemModule> kModules = {
      baselines::fifo_module(), baselines::sjf_module(),   k8s::module(),   baselines::srtf_module(),
      baselines::las_module(),  volcano::module(),         kueue::module(), kai::module(),
      slurm::module(),          baselines::gavel_module(),
  };
  return kModules;
}

}  // namespace

std::span<const SystemModule> system_modules() { return modules(); }

namespace {

struct VariantName {
  const SystemModule* system = nullptr;
  const AddOn* add_on = nullptr;  // null for a plain system name
};

VariantName resolve(std::string_view name) {
  const auto plus = name.find('+');
  const std::string_view base = name.substr(0, plus);
  for (const auto& m : modules()) {
    if (m.info.name != base) continue;
    if (plus == std::string_view::npos) return {&m, nullptr};
    for (const auto& a : m.add_ons)
      if (a.name == name.substr(plus + 1)) return {&m, &a};
    return {};
  }
  return {};
}

}  // namespace

const SystemModule* find_system(std::string_view name) { return resolve(name).system; }

const AddOn* find_add_on(std::string_view name) { return resolve(name).add_on; }

PolicyParams with_add_on(std::string_view name, const PolicyParams& params, std::vector<sim::InputError>& errors) {
  const AddOn* a = find_add_on(name);
  if (a == nullptr) return params;
  PolicyParams out = params;
  for (const auto& [key, value] : a->params) {
    const auto it = out.find(std::string(key));
    if (it == out.end()) {
      out[std::string(key)] = ParamValue{std::string(value), "", 0, 0};
    } else if (it->second.text != value) {
      errors.emplace_back(it->second.file, it->second.line, it->second.column, "policy." + std::string(key),
                          std::string(name) + " sets " + std::string(key) + ": " + std::string(value) + ", not \"" +
                              it->second.text + "\" (run " + std::string(name.substr(0, name.find('+'))) +
                              " for another value)");
    }
  }
  return out;
}

std::string integer_weight(double weight) {
  return std::to_string(std::clamp<std::int64_t>(std::llround(weight * 100), 1, 1'000'000));
}

std::string pool_list(const models::ClusterSpec& cluster) {
  std::string pools;
  for (const auto& pool : cluster.pools) pools += (pools.empty() ? "" : ", ") + pool.name;
  return "[" + pools + "]";
}

const std::vector<PolicyInfo>& policy_catalogue() {
  static const std::vector<PolicyInfo> kInfos = [] {
    std::vector<PolicyInfo> out;
    for (const auto& m : modules()) {
      out.push_back(m.info);
      for (const auto& a : m.add_ons)
        out.push_back({m.info.name + "+" + std::string(a.name), std::string(a.summary), m.info.params});
    }
    return out;
  }();
  return kInfos;
}

std::vector<sim::InputError> check_policy(std::string_view name, const PolicyParams& params, const std::string& file,
                                          int line, int column) {
  std::vector<sim::InputError> errors;
  const SystemModule* m = find_system(name);
  if (m == nullptr) {
    std::vector<std::string> names;
    std::string known;
    for (const auto& info : policy_catalogue()) {
      names.push_back(info.name);
      known += (known.empty() ? "" : ", ") + info.name;
    }
    std::string msg = "unknown policy \"" + std::string(name) + "\"";
    if (auto s = sim::closest_match(name, names)) msg += "; did you mean \"" + *s + "\"?";
    msg += " (known: " + known + ")";
    errors.emplace_back(file, line, column, "policy.name", msg);
    return errors;
  }
  for (const auto& [key, value] : params) {
    bool known = false;
    for (const auto& k : m->info.params) known = known || key_matches(k, key);
    if (known) continue;
    std::string msg = "unknown parameter \"" + key + "\" for policy " + m->info.name;
    if (auto s = sim::closest_match(key, m->info.params)) msg += "; did you mean \"" + *s + "\"?";
    errors.emplace_back(value.file, value.line, value.column, "policy." + key, msg);
  }
  m->check(with_add_on(name, params, errors), errors);
  return errors;
}

std::vector<sim::InputError> check_cluster_refs(std::string_view name, const PolicyParams& params,
                                                const models::ClusterSpec& cluster) {
  std::vector<sim::InputError> errors;
  if (const SystemModule* m = find_system(name); m != nullptr && m->check_cluster_refs != nullptr)
    m->check_cluster_refs(params, cluster, errors);
  return errors;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyParams& params, std::uint64_t seed) {
  auto errors = check_policy(name, params, "", 0, 0);
  if (!errors.empty()) throw errors.front();
  std::vector<sim::InputError> unused;
  return find_system(name)->make(with_add_on(name, params, unused), seed);
}

}  // namespace headroom::policies
