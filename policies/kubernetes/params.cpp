// The `policy:` block's reader: kube-scheduler's KubeSchedulerConfiguration fields headroom models
// (scoringStrategy, plugin weights, pod backoff), ResourceQuota limits, the NVIDIA device plugin's
// config (devicePlugin:) and headroom's own settings. param_keys, check_params and parse_config.

#include "policies/common/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/gpu_share.hpp"
#include "policies/common/param_table.hpp"
#include "policies/common/param_text.hpp"
#include "policies/common/param_tree.hpp"
#include "policies/kubernetes/kubernetes.hpp"
#include "sim/quantity.hpp"

namespace headroom::policies::k8s {

namespace {

void add_error(std::vector<sim::InputError>& errors, const std::string& key, const ParamValue& v,
               const std::string& msg) {
  param_error(errors, key, v, msg);
}

// "quota.<tenant>.<resource>" with resource gpu, cpu, memory or pods.
bool is_quota_key(std::string_view key, std::string* tenant, std::string* resource) {
  constexpr std::string_view kPrefix = "quota.";
  if (!key.starts_with(kPrefix)) return false;
  const auto dot = key.rfind('.');
  if (dot <= kPrefix.size()) return false;
  const std::string_view r = key.substr(dot + 1);
  if (r != "gpu" && r != "cpu" && r != "memory" && r != "pods") return false;
  if (tenant != nullptr) *tenant = std::string(key.substr(kPrefix.size(), dot - kPrefix.size()));
  if (resource != nullptr) *resource = std::string(r);
  return true;
}

// A Kubernetes quantity of cpu in millicores ("8", "500m", "1.5") or of memory in MiB, rounded
// down ("64Gi", "512Mi", "1G", plain bytes).
std::optional<std::int64_t> parse_quota_quantity(std::string_view t, bool cpu) {
  const auto q = sim::parse_quantity(t);
  if (!q) return std::nullopt;
  const double units = cpu ? *q * 1000.0 : *q / 1048576.0;
  if (units > 1e15) return std::nullopt;
  return static_cast<std::int64_t>(std::floor(units + 1e-9));
}

// "<g>g.<mem>gb", e.g. 1g.5gb, 3g.20gb, 1g.10gb.
bool is_mig_profile(std::string_view p) {
  const auto g = p.find("g.");
  if (g == std::string_view::npos || g == 0 || !p.ends_with("gb") || p.size() < g + 5) return false;
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(p.substr(0, g)) && digits(p.substr(g + 2, p.size() - g - 4));
}

// The compute slices (of 7) a profile takes: its leading number.
std::int64_t mig_compute_slices(std::string_view profile) {
  return parse_int(profile.substr(0, profile.find('g'))).value_or(7);
}

// Names of NVIDIA's default mig-parted configs that headroom resolves per GPU model.
bool is_named_mig_config(std::string_view name) {
  return name == "all-disabled" || name == "all-enabled" || name == "all-balanced" ||
         (name.starts_with("all-") && is_mig_profile(name.substr(4)));
}

// Parses one list entry of migDevices.<pool>; returns an error message or "".
std::string parse_mig_entry(const ParamTree& v, MigDeviceEntry& out) {
  if (v.kind != ParamTree::Map) return "each entry must be a map with devices, mig-enabled and mig-devices";
  for (const auto& [key, value] : v.entries) {
    if (key == "devices") {
      if (value.kind == ParamTree::Scalar && value.text == "all") continue;
      if (value.kind != ParamTree::List || value.items.empty())
        return "devices must be all or a list of GPU indices such as [0, 1]";
      for (const auto& item : value.items) {
        const std::int64_t n = item.kind == ParamTree::Scalar ? parse_int(item.text).value_or(-1) : -1;
        if (n < 0 || n >= models::gpushare::kMaxGpusPerNode)
          return "devices must be all or a list of GPU indices from 0 to " +
                 std::to_string(models::gpushare::kMaxGpusPerNode - 1) + ", got " + quoted(item.text);
        out.devices.push_back(static_cast<std::int32_t>(n));
      }
    } else if (key == "mig-enabled") {
      if (value.kind != ParamTree::Scalar || (value.text != "true" && value.text != "false"))
        return "mig-enabled must be true or false";
      out.mig_enabled = value.text == "true";
    } else if (key == "mig-devices") {
      if (value.kind != ParamTree::Map) return "mig-devices must be a map of MIG profiles to counts";
      for (const auto& [profile, count] : value.entries) {
        const std::int64_t n = count.kind == ParamTree::Scalar ? parse_int(count.text).value_or(0) : 0;
        if (!is_mig_profile(profile)) return "unknown MIG profile " + quoted(profile) + "; expected <g>g.<mem>gb";
        if (n < 1 || n > 7) return "count of " + profile + " must be an integer from 1 to 7";
        out.mig_devices[profile] = static_cast<std::int32_t>(n);
      }
    } else {
      return "unknown key " + quoted(key) + "; expected: devices, mig-enabled, mig-devices";
    }
  }
  if (!out.mig_enabled && !out.mig_devices.empty()) return "mig-devices given with mig-enabled: false";
  return "";
}

// The parse state of one `policy:` block: the configuration being filled, the errors found, and
// where the keys the checks after the last one need were given.
struct Reader {
  Config& out;
  std::vector<sim::InputError> errors;
  bool weights_given = false;
  const ParamValue* shape_at = nullptr;
  const ParamValue* type_at = nullptr;
  const ParamValue* max_backoff_at = nullptr;
  const ParamValue* initial_backoff_at = nullptr;

  bool integer(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
    return read_integer(errors, key, v, v.text, lo, hi, dst);
  }
  bool duration(const std::string& key, const ParamValue& v, bool positive, Tick& dst) {
    return read_duration(errors, key, v, positive, dst);
  }
};

void read_resource_weight(Reader& rd, const std::string& key, const ParamValue& v) {
  if (!rd.weights_given) {
    // Giving any resource replaces the default list (cpu and memory), as in kube-scheduler.
    rd.out.scoring.gpu_weight = rd.out.scoring.cpu_weight = rd.out.scoring.memory_weight = 0;
    rd.weights_given = true;
  }
  const std::string r = key.substr(std::string_view("scoringStrategy.resources.").size());
  if (r == "gpu") rd.integer(key, v, 1, 100, rd.out.scoring.gpu_weight);
  if (r == "cpu") rd.integer(key, v, 1, 100, rd.out.scoring.cpu_weight);
  if (r == "memory") rd.integer(key, v, 1, 100, rd.out.scoring.memory_weight);
}

void read_backoff_seconds(Reader& rd, const std::string& key, const ParamValue& v) {
  const bool is_max = key == "podMaxBackoffSeconds";
  (is_max ? rd.max_backoff_at : rd.initial_backoff_at) = &v;
  if (std::int64_t seconds = 0; rd.integer(key, v, 1, 86400, seconds))
    (is_max ? rd.out.max_backoff : rd.out.initial_backoff) = seconds * sim::kSecond;
}

void read_quota(Reader& rd, const std::string& key, const ParamValue& v) {
  std::string tenant, res;
  is_quota_key(key, &tenant, &res);
  Config::Quota& q = rd.out.quota[tenant];
  std::int64_t n = 0;
  if (res == "gpu" || res == "pods") {
    if (rd.integer(key, v, 0, std::numeric_limits<std::int32_t>::max(), n)) (res == "gpu" ? q.gpu : q.pods) = n;
  } else if (const auto m = parse_quota_quantity(v.text, res == "cpu")) {
    (res == "cpu" ? q.cpu_milli : q.memory_mib) = *m;
  } else {
    add_error(rd.errors, key, v,
              std::string("expected a quantity such as ") + (res == "cpu" ? "64 or 500m" : "256Gi") + ", got " +
                  quoted(v.text));
  }
}

void read_mig_devices(Reader& rd, const std::string& key, const ParamValue& v) {
  // devicePlugin.migDevices.<pool>.<g>g.<mem>gb: the profile is the last two segments;
  // otherwise devicePlugin.migDevices.<pool> holds a named config or a list of entries.
  const std::string rest = key.substr(std::string_view("devicePlugin.migDevices.").size());
  const auto last = rest.rfind('.');
  const auto dot = last == std::string::npos || last == 0 ? std::string::npos : rest.rfind('.', last - 1);
  const std::string profile = dot == std::string::npos ? std::string() : rest.substr(dot + 1);
  const std::string pool = dot == std::string::npos ? std::string() : rest.substr(0, dot);
  std::int64_t n = 0;
  if (is_mig_profile(profile) && !pool.empty()) {
    if (rd.integer(key, v, 1, 7, n)) {
      rd.out.device_plugin.mig_devices[pool][profile] = static_cast<std::int32_t>(n);
      rd.out.device_plugin.mig_devices_at.emplace(pool, v);
    }
  } else if (v.text.starts_with("[") || v.text.starts_with("- ")) {
    const auto list = parse_param_tree(v.text);
    std::vector<MigDeviceEntry> entries;
    std::string problem = !list || list->kind != ParamTree::List || list->items.empty()
                              ? "expected a list of mig-parted entries such as [{devices: [0, 1], mig-devices: "
                                "{\"3g.20gb\": 2}}]"
                              : "";
    std::vector<int> owner(models::gpushare::kMaxGpusPerNode, -1);
    for (std::size_t i = 0; problem.empty() && i < list->items.size(); ++i) {
      MigDeviceEntry e;
      problem = parse_mig_entry(list->items[i], e);
      if (!problem.empty()) {
        problem = "entry " + std::to_string(i) + ": " + problem;
        break;
      }
      std::vector<std::int32_t> devices = e.devices;
      if (devices.empty())
        for (std::int32_t d = 0; d < models::gpushare::kMaxGpusPerNode; ++d) devices.push_back(d);
      for (const std::int32_t d : devices) {
        if (owner[static_cast<std::size_t>(d)] >= 0) {
          problem = "entry " + std::to_string(i) + ": GPU " + std::to_string(d) + " is already in entry " +
                    std::to_string(owner[static_cast<std::size_t>(d)]) + "; expected each GPU in one entry";
          break;
        }
        owner[static_cast<std::size_t>(d)] = static_cast<int>(i);
      }
      entries.push_back(std::move(e));
    }
    if (!problem.empty()) {
      add_error(rd.errors, key, v, "migDevices." + rest + ": " + problem);
    } else {
      rd.out.device_plugin.mig_layouts[rest] = std::move(entries);
      rd.out.device_plugin.mig_devices_at.emplace(rest, v);
    }
  } else if (is_named_mig_config(v.text)) {
    rd.out.device_plugin.mig_layouts[rest] = {MigDeviceEntry{{}, true, {}, v.text}};
    rd.out.device_plugin.mig_devices_at.emplace(rest, v);
  } else {
    add_error(rd.errors, key, v,
              "unknown MIG config " + quoted(v.text) + " for pool " + quoted(rest) +
                  "; expected a map of profiles such as {\"1g.5gb\": 7}, a list of mig-parted entries, or one "
                  "of NVIDIA's default configs all-disabled, all-enabled, all-balanced, all-<profile>");
  }
}

// The keys under `policy:`, in the order the policy catalogue lists them, and how each is read.
const ParamKey<Reader> kParams[] = {
    {"scoringStrategy.type",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.type_at = &v;
       if (v.text == "LeastAllocated") {
         rd.out.scoring.type = ScoringType::LeastAllocated;
       } else if (v.text == "MostAllocated") {
         rd.out.scoring.type = ScoringType::MostAllocated;
       } else if (v.text == "RequestedToCapacityRatio") {
         rd.out.scoring.type = ScoringType::RequestedToCapacityRatio;
       } else {
         add_error(rd.errors, key, v,
                   "unknown scoring strategy " + quoted(v.text) +
                       "; expected: LeastAllocated, MostAllocated, RequestedToCapacityRatio");
       }
     }},
    {"scoringStrategy.resources.gpu", read_resource_weight},
    {"scoringStrategy.resources.cpu", read_resource_weight},
    {"scoringStrategy.resources.memory", read_resource_weight},
    {"scoringStrategy.shape",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.shape_at = &v;
       std::vector<ShapePoint> shape;
       bool ok = true;
       std::string_view rest = v.text;
       while (ok && !rest.empty()) {
         const auto comma = rest.find(',');
         std::string_view item = rest.substr(0, comma);
         rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
         while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
         while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
         const auto colon = item.find(':');
         const auto u = colon == std::string_view::npos ? std::nullopt : parse_int(item.substr(0, colon));
         const auto s = colon == std::string_view::npos ? std::nullopt : parse_int(item.substr(colon + 1));
         ok = u && s && *u >= 0 && *u <= 100 && *s >= 0 && *s <= kMaxCustomPriorityScore &&
              (shape.empty() || *u > shape.back().utilization);
         if (ok) shape.push_back({*u, *s * (kMaxNodeScore / kMaxCustomPriorityScore)});
       }
       if (!ok || shape.empty()) {
         add_error(rd.errors, key, v,
                   "expected utilization:score points such as \"0:0,100:10\" (utilization 0..100, increasing; "
                   "score 0..10), got " +
                       quoted(v.text));
       } else {
         rd.out.scoring.shape = std::move(shape);
       }
     }},
    {"weights.NodeResourcesFit",
     [](Reader& rd, const std::string& key, const ParamValue& v) { rd.integer(key, v, 0, 100, rd.out.fit_weight); }},
    {"weights.NodeResourcesBalancedAllocation",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.integer(key, v, 0, 100, rd.out.balanced_weight);
     }},
    {"termination_grace_period",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.duration(key, v, false, rd.out.termination_grace_period);
     }},
    {"podInitialBackoffSeconds", read_backoff_seconds},
    {"podMaxBackoffSeconds", read_backoff_seconds},
    {"podMaxInUnschedulablePodsDuration",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.duration(key, v, true, rd.out.max_in_unschedulable);
     }},
    {"percentageOfNodesToScore",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.integer(key, v, 0, 100, rd.out.percentage_of_nodes_to_score);
     }},
    {"tie_break",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       if (v.text == "index" || v.text == "seeded") {
         rd.out.seeded_tie_break = v.text == "seeded";
       } else {
         add_error(rd.errors, key, v, "unknown tie_break " + quoted(v.text) + "; expected: index, seeded");
       }
     }},
    {"quota.<tenant>.gpu", read_quota},
    {"quota.<tenant>.cpu", read_quota},
    {"quota.<tenant>.memory", read_quota},
    {"quota.<tenant>.pods", read_quota},
    {"quota_retry",
     [](Reader& rd, const std::string& key, const ParamValue& v) { rd.duration(key, v, true, rd.out.quota_retry); }},
    {"partial_placement_threshold",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       rd.duration(key, v, false, rd.out.partial_placement_threshold);
     }},
    {"coscheduling", [](Reader& rd, const std::string& key,
                        const ParamValue& v) { read_boolean(rd.errors, key, v, v.text, rd.out.coscheduling); }},
    {"devicePlugin.migStrategy",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       if (v.text == "none") {
         rd.out.device_plugin.mig_strategy = MigStrategy::None;
       } else if (v.text == "single") {
         rd.out.device_plugin.mig_strategy = MigStrategy::Single;
       } else if (v.text == "mixed") {
         rd.out.device_plugin.mig_strategy = MigStrategy::Mixed;
       } else {
         add_error(rd.errors, key, v, "unknown migStrategy " + quoted(v.text) + "; expected: none, single, mixed");
       }
     }},
    {"devicePlugin.sharing.timeSlicing.replicas",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       std::int64_t n = 0;
       if (rd.integer(key, v, 1, 1024, n)) rd.out.device_plugin.replicas = static_cast<std::int32_t>(n);
     }},
    {"devicePlugin.sharing.timeSlicing.failRequestsGreaterThanOne",
     [](Reader& rd, const std::string& key, const ParamValue& v) {
       read_boolean(rd.errors, key, v, v.text, rd.out.device_plugin.fail_requests_greater_than_one);
     }},
    {"devicePlugin.migDevices.<pool>", read_mig_devices}};

// Parses the block into `out`; returns the errors found.
std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& out) {
  Reader rd{out, {}};
  read_params<Reader>(rd, params, kParams);
  std::vector<sim::InputError>& errors = rd.errors;
  const ParamValue* shape_at = rd.shape_at;
  const ParamValue* type_at = rd.type_at;
  const ParamValue* max_backoff_at = rd.max_backoff_at;
  const ParamValue* initial_backoff_at = rd.initial_backoff_at;
  if (out.scoring.type == ScoringType::RequestedToCapacityRatio && out.scoring.shape.empty() && shape_at == nullptr)
    add_error(errors, "scoringStrategy.type", *type_at,
              "RequestedToCapacityRatio needs scoringStrategy.shape (utilization:score points such as \"0:0,100:10\")");
  if (shape_at != nullptr && out.scoring.type != ScoringType::RequestedToCapacityRatio)
    add_error(errors, "scoringStrategy.shape", *shape_at,
              "scoringStrategy.shape applies only to scoringStrategy.type RequestedToCapacityRatio");
  const auto& dp = out.device_plugin;
  if (!dp.mig_devices_at.empty() && dp.mig_strategy == MigStrategy::None)
    add_error(errors, "devicePlugin.migDevices", dp.mig_devices_at.begin()->second,
              "devicePlugin.migDevices needs devicePlugin.migStrategy single or mixed");
  auto check_geometry = [&](const std::string& pool,
                            const std::vector<const std::map<std::string, std::int32_t>*>& gpus) {
    std::set<std::string> kinds;
    for (const auto* geometry : gpus) {
      std::int64_t slices = 0;
      for (const auto& [profile, n] : *geometry) {
        slices += n * mig_compute_slices(profile);
        kinds.insert(profile);
      }
      if (slices > 7)
        add_error(errors, "devicePlugin.migDevices." + pool, dp.mig_devices_at.at(pool),
                  "MIG geometry of pool " + quoted(pool) + " uses " + std::to_string(slices) +
                      " compute slices per GPU; a GPU has 7");
    }
    if (dp.mig_strategy == MigStrategy::Single && kinds.size() > 1)
      add_error(errors, "devicePlugin.migDevices." + pool, dp.mig_devices_at.at(pool),
                "migStrategy single needs one MIG profile per node; pool " + quoted(pool) + " has " +
                    std::to_string(kinds.size()));
  };
  for (const auto& [pool, geometry] : dp.mig_devices) check_geometry(pool, {&geometry});
  for (const auto& [pool, entries] : dp.mig_layouts) {
    std::vector<const std::map<std::string, std::int32_t>*> gpus;
    for (const auto& e : entries) gpus.push_back(&e.mig_devices);
    check_geometry(pool, gpus);
  }
  if (out.max_backoff < out.initial_backoff) {
    const bool at_max = max_backoff_at != nullptr;
    add_error(errors, at_max ? "podMaxBackoffSeconds" : "podInitialBackoffSeconds",
              at_max ? *max_backoff_at : *initial_backoff_at,
              "podMaxBackoffSeconds (" + std::to_string(out.max_backoff / sim::kSecond) +
                  ") must be at least podInitialBackoffSeconds (" + std::to_string(out.initial_backoff / sim::kSecond) +
                  ")");
  }
  return errors;
}

}  // namespace

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kKeys = param_patterns<Reader>(kParams);
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse_into);
}

Config parse_config(const PolicyParams& params) { return parse_params_or_throw<Config>(params, parse_into); }

}  // namespace headroom::policies::k8s
