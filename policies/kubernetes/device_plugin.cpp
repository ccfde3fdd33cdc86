// The NVIDIA device plugin (NVIDIA/k8s-device-plugin api/config/v1, internal/rm): how each node's
// GPUs are advertised (whole GPUs, time-slicing replicas, MIG devices under migStrategy single or
// mixed), checked against each pool's GPU model, and the per-pool resources the policy tracks.

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu_share.hpp"
#include "policies/common/param_text.hpp"
#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

namespace {

// The MIG layout of one GPU of a pool's nodes: MIG mode and its instances.
struct GpuLayout {
  bool mig = false;
  std::map<std::string, std::int32_t> instances;
};

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : std::string(sep)) + x;
  return out;
}

// Memory slices a device's instances occupy, as "0-3, 6".
std::string slice_ranges(std::uint32_t used, int slices) {
  std::vector<std::string> parts;
  for (int i = 0; i < slices;) {
    if (((used >> i) & 1U) == 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < slices && ((used >> (j + 1)) & 1U) != 0) ++j;
    parts.push_back(i == j ? std::to_string(i) : std::to_string(i) + "-" + std::to_string(j));
    i = j + 1;
  }
  return parts.empty() ? "none" : join(parts, ", ");
}

std::string geometry_text(const std::map<std::string, std::int32_t>& g) {
  std::vector<std::string> parts;
  for (const auto& [profile, n] : g) parts.push_back(profile + ": " + std::to_string(n));
  std::string out = "{";  // appended, not `"{" + ... + "}"`: GCC 12 warns (-Wrestrict) on that here
  out += join(parts, ", ");
  out += "}";
  return out;
}

// The per-GPU layout of a pool's nodes under the device plugin's MIG configuration, checked against
// the pool's GPU model; nullopt when the pool has no GPU in MIG mode (no geometry, migStrategy
// none, or all-disabled). Throws sim::InputError located at the pool's geometry.
std::optional<std::vector<GpuLayout>> resolve_mig(const DevicePlugin& dp, const models::NodePool& pool) {
  namespace gs = models::gpushare;
  if (dp.mig_strategy == MigStrategy::None) return std::nullopt;
  std::vector<MigDeviceEntry> entries;
  if (const auto it = dp.mig_devices.find(pool.name); it != dp.mig_devices.end()) {
    entries.push_back(MigDeviceEntry{{}, true, it->second, {}});
  } else if (const auto jt = dp.mig_layouts.find(pool.name); jt != dp.mig_layouts.end()) {
    entries = jt->second;
  } else {
    return std::nullopt;
  }
  const ParamValue& at = dp.mig_devices_at.at(pool.name);
  auto fail = [&](const std::string& message) {
    throw sim::InputError(at.file, at.line, at.column, "policy.devicePlugin.migDevices." + pool.name, message);
  };
  const auto models = gs::mig_models_for(pool.gpu_type);
  if (models.empty())
    fail("pool " + quoted(pool.name) + " has GPU type " + quoted(pool.gpu_type) +
         ", which has no MIG; expected an A100-40GB, A100-80GB, H100-80GB or A30 pool, or no geometry for it");
  // The first model (a bare "A100" has two) that knows every profile and config named.
  auto unknown_on = [&](std::string_view model) -> std::string {
    for (const auto& e : entries) {
      if (!e.config.empty()) {
        if (!gs::mig_named_config(model, e.config)) return e.config;
        continue;
      }
      for (const auto& [profile, n] : e.mig_devices)
        if (gs::find_mig_profile(model, profile) == nullptr) return profile;
    }
    return "";
  };
  std::string_view model = models.front();
  for (auto it = models.rbegin(); it != models.rend(); ++it)
    if (unknown_on(*it).empty()) model = *it;
  if (const std::string bad = unknown_on(model); !bad.empty()) {
    const std::string gpu = quoted(pool.gpu_type) + (pool.gpu_type == model ? "" : " = " + std::string(model));
    if (bad.starts_with("all-")) {
      fail("MIG config " + quoted(bad) + " of pool " + quoted(pool.name) + " does not exist for its GPU " + gpu +
           "; expected all-disabled, all-enabled, all-balanced or all-<profile> with one of its profiles");
    }
    std::vector<std::string> names;
    for (const auto& p : gs::mig_profiles(model)) names.push_back(p.name);
    fail("unknown MIG profile " + quoted(bad) + " for pool " + quoted(pool.name) + " (GPU " + gpu +
         "); expected one of: " + join(names, ", "));
  }
  const int gpus = pool.gpus_per_node;
  std::vector<GpuLayout> layout(static_cast<std::size_t>(std::max(gpus, 0)));
  for (const auto& e : entries) {
    gs::MigGeometry g{e.mig_enabled, e.mig_devices};
    if (!e.config.empty()) g = *gs::mig_named_config(model, e.config);
    if (e.devices.empty()) {
      for (auto& l : layout) l = {g.enabled, g.devices};
      continue;
    }
    for (const std::int32_t d : e.devices) {
      if (d >= gpus)
        fail("GPU " + std::to_string(d) + " in migDevices of pool " + quoted(pool.name) + ": its nodes have " +
             std::to_string(gpus) + " GPUs; expected indices 0 to " + std::to_string(gpus - 1));
      layout[static_cast<std::size_t>(d)] = {g.enabled, g.devices};
    }
  }
  bool any_mig = false, any_whole = false, any_empty = false;
  std::set<std::string> kinds;
  std::int64_t units = 0;
  for (const auto& l : layout) {
    (l.mig ? any_mig : any_whole) = true;
    if (!l.mig) {
      ++units;
      continue;
    }
    any_empty = any_empty || l.instances.empty();
    for (const auto& [profile, n] : l.instances) {
      kinds.insert(profile);
      units += n;
    }
    gs::MigDevice device{gs::mig_memory_slices(model), 0};
    if (const gs::MigProfile* p = gs::place_geometry(model, l.instances, device)) {
      std::vector<std::string> starts;
      for (const int st : p->starts) starts.push_back(std::to_string(st));
      fail("MIG geometry " + geometry_text(l.instances) + " of pool " + quoted(pool.name) + " does not fit an " +
           std::string(model) +
           ": placed largest first at their highest free start, the instances before it take memory slices " +
           slice_ranges(device.used, device.slices) + " of " + std::to_string(device.slices) + " and " + p->name +
           " (" + std::to_string(p->size) + " slice" + (p->size == 1 ? "" : "s") + ", starting at " +
           join(starts, ", ") + ") has no free placement; expected instances that fit the GPU's " +
           std::to_string(device.slices) + " memory slices");
    }
  }
  if (!any_mig) return std::nullopt;
  if (dp.mig_strategy == MigStrategy::Single) {
    // internal/rm/device_map.go: the single strategy's checks.
    if (any_whole)
      fail("migStrategy single: all devices on the node must be configured with the same migEnabled value; pool " +
           quoted(pool.name) + " has GPUs with MIG and GPUs without");
    if (any_empty)
      fail("migStrategy single: every MIG-enabled device needs MIG devices; pool " + quoted(pool.name) +
           " has a GPU in MIG mode with none");
    if (kinds.size() > 1)
      fail("migStrategy single: more than one MIG device type present on node; pool " + quoted(pool.name) + " has " +
           join(std::vector<std::string>(kinds.begin(), kinds.end()), ", "));
  }
  if (units == 0)
    fail("pool " + quoted(pool.name) + " advertises no GPU resource: its GPUs are in MIG mode with no MIG devices");
  return layout;
}

}  // namespace

// The device plugin advertises each GPU as `replicas` time-sliced units, or, on a pool with a MIG
// geometry (migStrategy single or mixed), as its MIG slices.
models::ClusterSpec KubernetesPolicy::advertised_cluster(const models::ClusterSpec& spec) const {
  const DevicePlugin& dp = cfg_.device_plugin;
  models::ClusterSpec out = spec;
  if (dp.mig_strategy != MigStrategy::None) {
    for (const auto& [pool_name, at] : dp.mig_devices_at) {
      // A named copy: C++17 lambdas (clang 14) may not capture a structured binding.
      const std::string& name = pool_name;
      const bool known =
          std::any_of(spec.pools.begin(), spec.pools.end(), [&](const models::NodePool& p) { return p.name == name; });
      if (known) continue;
      throw sim::InputError(at.file, at.line, at.column, "policy.devicePlugin.migDevices." + name,
                            "no cluster pool named " + quoted(name));
    }
  }
  for (auto& pool : out.pools) {
    if (const auto layout = resolve_mig(dp, pool)) {
      // Units: each GPU's MIG devices, or 1 for a whole GPU (mixed); per GPU when every GPU of a
      // node has as many, else per node.
      std::vector<std::int32_t> units;
      for (const auto& l : *layout) {
        std::int32_t u = l.mig ? 0 : 1;
        for (const auto& [profile, n] : l.instances) u += n;
        units.push_back(u);
      }
      const bool uniform = std::all_of(units.begin(), units.end(), [&](std::int32_t u) { return u == units[0]; });
      pool.units_per_gpu = uniform && !units.empty() && units[0] > 0 ? units[0] : 1;
      pool.units_per_node = uniform ? 0 : std::accumulate(units.begin(), units.end(), 0);
      pool.time_sliced = false;
    } else {
      pool.units_per_gpu = dp.replicas;
      pool.time_sliced = dp.replicas > 1;
    }
  }
  return out;
}

// Device plugin: MIG pools, their slices per node per profile, and the resource of each GPU type.
void KubernetesPolicy::load_device_plugin(const ClusterView& view) {
  const std::size_t nodes = view.cluster().nodes().size();
  const auto& spec = view.cluster().spec();
  const DevicePlugin& dp = cfg_.device_plugin;
  profiles_.clear();
  std::vector<std::optional<std::vector<GpuLayout>>> layouts;
  for (const auto& pool : spec.pools) {
    layouts.push_back(resolve_mig(dp, pool));
    if (layouts.back())
      for (const auto& l : *layouts.back())
        for (const auto& [profile, n] : l.instances) profiles_.push_back(profile);
  }
  std::sort(profiles_.begin(), profiles_.end());
  profiles_.erase(std::unique(profiles_.begin(), profiles_.end()), profiles_.end());
  pool_mig_.assign(spec.pools.size(), 0);
  pool_whole_.assign(spec.pools.size(), 0);
  pool_slices_.assign(spec.pools.size(), std::vector<std::int64_t>(profiles_.size(), 0));
  any_mig_ = false;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    if (!layouts[p]) continue;
    pool_mig_[p] = 1;
    any_mig_ = true;
    for (const auto& l : *layouts[p]) {
      pool_whole_[p] += l.mig ? 0 : 1;
      for (const auto& [profile, n] : l.instances) {
        const auto k =
            static_cast<std::size_t>(std::lower_bound(profiles_.begin(), profiles_.end(), profile) - profiles_.begin());
        pool_slices_[p][k] += n;
      }
    }
  }
  mig_used_.assign(nodes, std::vector<std::int64_t>(profiles_.size(), 0));
  whole_used_.assign(nodes, 0);
  res_by_type_.clear();
  for (const auto& type : view.workload().gpu_type_names) {
    std::string t = type;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t.starts_with("nvidia.com/")) t = t.substr(11);
    if (t.starts_with("mig-")) t = t.substr(4);
    const auto it = std::lower_bound(profiles_.begin(), profiles_.end(), t);
    res_by_type_.push_back(dp.mig_strategy == MigStrategy::Mixed && it != profiles_.end() && *it == t
                               ? static_cast<int>(it - profiles_.begin())
                               : kGpuResource);
  }
}

}  // namespace headroom::policies::k8s
