#include "policies/kubernetes/kubernetes.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/gpu_share.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/common/param_tree.hpp"
#include "policies/common/params.hpp"
#include "sim/parallel.hpp"
#include "sim/quantity.hpp"
#include "sim/rng.hpp"

namespace headroom::policies::k8s {

using models::Job;
using models::JobState;
using models::NodeId;

namespace {

constexpr std::int64_t kMaxNodeScore = 100;
constexpr std::int64_t kMaxCustomPriorityScore = 10;
constexpr std::size_t kParallelScoreNodes = 1000;
constexpr NodeId kNoNode = UINT32_MAX;

// ---------------------------------------------------------------------------------------------
// Scoring (integer arithmetic of noderesources/*.go).

std::int64_t least_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

std::int64_t most_requested_score(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0) return 0;
  requested = std::min(requested, capacity);  // non-zero defaults may exceed the capacity
  return requested * kMaxNodeScore / capacity;
}

// helper.BuildBrokenLinearFunction over points whose scores are already scaled to 0..100.
std::int64_t broken_linear(const std::vector<ShapePoint>& shape, std::int64_t p) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      return shape[i - 1].score + (shape[i].score - shape[i - 1].score) * (p - shape[i - 1].utilization) /
                                      (shape[i].utilization - shape[i - 1].utilization);
    }
  }
  return shape.empty() ? 0 : shape.back().score;
}

std::int64_t scaled_utilization(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0 || requested <= 0) return 0;
  if (requested >= capacity) return kMaxNodeScore;
  return requested * kMaxNodeScore / capacity;
}

struct Resource {
  std::int64_t requested;  // the node's (non-zero) requests plus the pod's
  std::int64_t allocatable;
  std::int64_t weight;
};

std::int64_t pod_nonzero_cpu(const Job& j) {
  return j.cpus > 0 ? std::int64_t{j.cpus} * 1000 : kDefaultMilliCpuRequest;
}
std::int64_t pod_nonzero_memory(const Job& j) { return j.memory_mib > 0 ? j.memory_mib : kDefaultMemoryRequestMib; }

std::int64_t fit_score(const ScoringStrategy& s, const models::Node& node, const NodeUsage& u, const Job& pod) {
  Resource res[3];
  std::size_t n = 0;
  // Extended resources the pod does not request are bypassed (resource_allocation.go).
  if (s.gpu_weight > 0 && pod.gpus > 0) res[n++] = {u.gpus + pod.gpus, node.gpus, s.gpu_weight};
  if (s.cpu_weight > 0)
    res[n++] = {u.nonzero_cpu_milli + pod_nonzero_cpu(pod), std::int64_t{node.cpus} * 1000, s.cpu_weight};
  if (s.memory_weight > 0)
    res[n++] = {u.nonzero_memory_mib + pod_nonzero_memory(pod), node.memory_mib, s.memory_weight};
  std::int64_t score = 0, weights = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Resource& r = res[i];
    if (r.allocatable == 0) continue;  // not modelled on this node
    std::int64_t rs = 0;
    switch (s.type) {
      case ScoringType::LeastAllocated: rs = least_requested_score(r.requested, r.allocatable); break;
      case ScoringType::MostAllocated: rs = most_requested_score(r.requested, r.allocatable); break;
      case ScoringType::RequestedToCapacityRatio:
        rs = broken_linear(s.shape, scaled_utilization(r.requested, r.allocatable));
        if (rs <= 0) continue;  // requested_to_capacity_ratio.go counts only positive scores
        break;
    }
    score += rs * r.weight;
    weights += r.weight;
  }
  if (weights == 0) return 0;
  if (s.type == ScoringType::RequestedToCapacityRatio)
    return static_cast<std::int64_t>(std::round(static_cast<double>(score) / static_cast<double>(weights)));
  return score / weights;
}

std::int64_t balanced_score(const models::Node& node, const NodeUsage& u, const Job& pod) {
  // Actual requests (useRequested); a best-effort pod skips the plugin.
  if (pod.cpus <= 0 && pod.memory_mib <= 0) return 0;
  double f[2];
  int n = 0;
  if (node.cpus > 0)
    f[n++] = std::min(1.0, static_cast<double>(u.cpu_milli + std::int64_t{pod.cpus} * 1000) /
                               static_cast<double>(std::int64_t{node.cpus} * 1000));
  if (node.memory_mib > 0)
    f[n++] = std::min(1.0, static_cast<double>(u.memory_mib + pod.memory_mib) / static_cast<double>(node.memory_mib));
  const double std_dev = n == 2 ? std::abs((f[0] - f[1]) / 2) : 0.0;
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

// ---------------------------------------------------------------------------------------------
// Parameters.

std::string param_path(const std::string& key) { return "policy." + key; }

void add_error(std::vector<sim::InputError>& errors, const std::string& key, const ParamValue& v,
               const std::string& msg) {
  errors.emplace_back(v.file, v.line, v.column, param_path(key), msg);
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) return std::nullopt;
  return v;
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

std::string quoted(const std::string& s) { return "\"" + (s.size() > 60 ? s.substr(0, 60) + "..." : s) + "\""; }

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

// Parses the block into `out`; returns the errors found.
std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& out) {
  std::vector<sim::InputError> errors;
  auto integer = [&](const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
    const auto n = parse_int(v.text);
    if (!n || *n < lo || *n > hi) {
      add_error(
          errors, key, v,
          "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + quoted(v.text));
      return false;
    }
    dst = *n;
    return true;
  };
  auto duration = [&](const std::string& key, const ParamValue& v, bool positive, Tick& dst) {
    const auto d = sim::parse_duration(v.text);
    if (!d || *d < 0 || (positive && *d == 0)) {
      add_error(errors, key, v,
                std::string("expected a ") + (positive ? "positive " : "") + "duration such as 30s, 500ms or 5m, got " +
                    quoted(v.text));
      return false;
    }
    dst = *d;
    return true;
  };

  bool weights_given = false;
  const ParamValue* shape_at = nullptr;
  const ParamValue* type_at = nullptr;
  const ParamValue* max_backoff_at = nullptr;
  const ParamValue* initial_backoff_at = nullptr;
  for (const auto& [key, v] : params) {
    if (key == "scoringStrategy.type") {
      type_at = &v;
      if (v.text == "LeastAllocated") {
        out.scoring.type = ScoringType::LeastAllocated;
      } else if (v.text == "MostAllocated") {
        out.scoring.type = ScoringType::MostAllocated;
      } else if (v.text == "RequestedToCapacityRatio") {
        out.scoring.type = ScoringType::RequestedToCapacityRatio;
      } else {
        add_error(errors, key, v,
                  "unknown scoring strategy " + quoted(v.text) +
                      "; expected: LeastAllocated, MostAllocated, RequestedToCapacityRatio");
      }
    } else if (key.starts_with("scoringStrategy.resources.")) {
      if (!weights_given) {
        // Giving any resource replaces the default list (cpu and memory), as in kube-scheduler.
        out.scoring.gpu_weight = out.scoring.cpu_weight = out.scoring.memory_weight = 0;
        weights_given = true;
      }
      const std::string r = key.substr(std::string_view("scoringStrategy.resources.").size());
      if (r == "gpu") integer(key, v, 1, 100, out.scoring.gpu_weight);
      if (r == "cpu") integer(key, v, 1, 100, out.scoring.cpu_weight);
      if (r == "memory") integer(key, v, 1, 100, out.scoring.memory_weight);
    } else if (key == "scoringStrategy.shape") {
      shape_at = &v;
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
        add_error(errors, key, v,
                  "expected utilization:score points such as \"0:0,100:10\" (utilization 0..100, increasing; "
                  "score 0..10), got " +
                      quoted(v.text));
      } else {
        out.scoring.shape = std::move(shape);
      }
    } else if (key == "weights.NodeResourcesFit") {
      integer(key, v, 0, 100, out.fit_weight);
    } else if (key == "weights.NodeResourcesBalancedAllocation") {
      integer(key, v, 0, 100, out.balanced_weight);
    } else if (key == "termination_grace_period") {
      duration(key, v, false, out.termination_grace_period);
    } else if (key == "podInitialBackoffSeconds" || key == "podMaxBackoffSeconds") {
      const bool is_max = key == "podMaxBackoffSeconds";
      (is_max ? max_backoff_at : initial_backoff_at) = &v;
      if (std::int64_t seconds = 0; integer(key, v, 1, 86400, seconds))
        (is_max ? out.max_backoff : out.initial_backoff) = seconds * sim::kSecond;
    } else if (key == "podMaxInUnschedulablePodsDuration") {
      duration(key, v, true, out.max_in_unschedulable);
    } else if (key == "tie_break") {
      if (v.text == "index" || v.text == "seeded") {
        out.seeded_tie_break = v.text == "seeded";
      } else {
        add_error(errors, key, v, "unknown tie_break " + quoted(v.text) + "; expected: index, seeded");
      }
    } else if (key == "quota_retry") {
      duration(key, v, true, out.quota_retry);
    } else if (key == "partial_placement_threshold") {
      duration(key, v, false, out.partial_placement_threshold);
    } else if (key == "coscheduling") {
      if (v.text == "true" || v.text == "false") {
        out.coscheduling = v.text == "true";
      } else {
        add_error(errors, key, v, "expected true or false, got " + quoted(v.text));
      }
    } else if (key == "devicePlugin.migStrategy") {
      if (v.text == "none") {
        out.device_plugin.mig_strategy = MigStrategy::None;
      } else if (v.text == "single") {
        out.device_plugin.mig_strategy = MigStrategy::Single;
      } else if (v.text == "mixed") {
        out.device_plugin.mig_strategy = MigStrategy::Mixed;
      } else {
        add_error(errors, key, v, "unknown migStrategy " + quoted(v.text) + "; expected: none, single, mixed");
      }
    } else if (key == "devicePlugin.sharing.timeSlicing.replicas") {
      std::int64_t n = 0;
      if (integer(key, v, 1, 1024, n)) out.device_plugin.replicas = static_cast<std::int32_t>(n);
    } else if (key == "devicePlugin.sharing.timeSlicing.failRequestsGreaterThanOne") {
      if (v.text == "true" || v.text == "false") {
        out.device_plugin.fail_requests_greater_than_one = v.text == "true";
      } else {
        add_error(errors, key, v, "expected true or false, got " + quoted(v.text));
      }
    } else if (key.starts_with("devicePlugin.migDevices.")) {
      // devicePlugin.migDevices.<pool>.<g>g.<mem>gb: the profile is the last two segments;
      // otherwise devicePlugin.migDevices.<pool> holds a named config or a list of entries.
      const std::string rest = key.substr(std::string_view("devicePlugin.migDevices.").size());
      const auto last = rest.rfind('.');
      const auto dot = last == std::string::npos || last == 0 ? std::string::npos : rest.rfind('.', last - 1);
      const std::string profile = dot == std::string::npos ? std::string() : rest.substr(dot + 1);
      const std::string pool = dot == std::string::npos ? std::string() : rest.substr(0, dot);
      std::int64_t n = 0;
      if (is_mig_profile(profile) && !pool.empty()) {
        if (integer(key, v, 1, 7, n)) {
          out.device_plugin.mig_devices[pool][profile] = static_cast<std::int32_t>(n);
          out.device_plugin.mig_devices_at.emplace(pool, v);
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
          add_error(errors, key, v, "migDevices." + rest + ": " + problem);
        } else {
          out.device_plugin.mig_layouts[rest] = std::move(entries);
          out.device_plugin.mig_devices_at.emplace(rest, v);
        }
      } else if (is_named_mig_config(v.text)) {
        out.device_plugin.mig_layouts[rest] = {MigDeviceEntry{{}, true, {}, v.text}};
        out.device_plugin.mig_devices_at.emplace(rest, v);
      } else {
        add_error(errors, key, v,
                  "unknown MIG config " + quoted(v.text) + " for pool " + quoted(rest) +
                      "; expected a map of profiles such as {\"1g.5gb\": 7}, a list of mig-parted entries, or one "
                      "of NVIDIA's default configs all-disabled, all-enabled, all-balanced, all-<profile>");
      }
    } else if (std::string tenant, res; is_quota_key(key, &tenant, &res)) {
      Config::Quota& q = out.quota[tenant];
      std::int64_t n = 0;
      if (res == "gpu" || res == "pods") {
        if (integer(key, v, 0, std::numeric_limits<std::int32_t>::max(), n)) (res == "gpu" ? q.gpu : q.pods) = n;
      } else if (const auto m = parse_quota_quantity(v.text, res == "cpu")) {
        (res == "cpu" ? q.cpu_milli : q.memory_mib) = *m;
      } else {
        add_error(errors, key, v,
                  std::string("expected a quantity such as ") + (res == "cpu" ? "64 or 500m" : "256Gi") + ", got " +
                      quoted(v.text));
      }
    }
  }
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
  return "{" + join(parts, ", ") + "}";
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

// ---------------------------------------------------------------------------------------------
// The policy.

struct Amount {
  std::int64_t gpus = 0, cpus = 0, memory_mib = 0;
};

enum class Where : std::uint8_t {
  None,
  Active,
  Backoff,
  Unschedulable,
  QuotaWait,
  QuotaNever,
  Running,
  Done,
  // A pod no eligible node can hold even empty (and in no pod group): every cycle it gets fails the
  // same way without touching anything else, so it is kept out of the ordered queues (HopelessPods).
  Hopeless,
  // In a FailedBatch (below): its queue state is the batch's.
  Batched,
};

struct Pod {
  Where where = Where::None;
  Tick timestamp = 0;  // queue entry (admission, or the last failure)
  int attempts = 0;
  Tick backoff_until = 0;
  Tick unschedulable_since = 0;
  Tick retry_at = 0;  // next admission retry (QuotaWait)
  NodeId nominated = kNoNode;
  Amount nominated_for;   // what it asked of its nominated node (the pod that preempted)
  NodeId node = kNoNode;  // while running
  // A job wider than one node runs as several pods (models::pod_gpus), bound one by one: the pods
  // bound so far (pending), or all of them (running).
  std::vector<models::Slice> pods;
  bool admitted = false;  // counts against its namespace's quota
  // Bumped whenever the pod enters a queue: entries of the lazily cleaned queues below carry the
  // value they were made with, and an entry whose pod has since moved on is skipped.
  std::uint32_t qseq = 0;
  std::uint32_t batch = UINT32_MAX;  // while Batched
  // The pod set of a job wider than one node (pod_sizes), found at its first cycle; empty before.
  std::vector<std::int32_t> sizes;
  // What the last pending reason said (a kind and its numbers), so that a cycle ending like the
  // one before does not build the same text again; kind -1 = unknown.
  std::array<std::int64_t, 4> said{-1, 0, 0, 0};
  std::int8_t fits_somewhere = -1;  // whether some eligible node could hold it empty; -1 unknown
  bool quota_reason_due = false;
  const char* quota_never_by = "GPUs";  // the resource a QuotaNever pod asks too much of
};

// The pods that no eligible node could hold even empty, outside any pod group. Each of their
// scheduling cycles ends the same way: the failure (attempts + 1, queue timestamp and backoff
// counted from now) with a pending reason already given. They still move through the queues
// exactly as kube-scheduler moves them: unschedulable -> (cluster event) backoff or active ->
// (backoff expiry, 5-minute flush) active -> one failed cycle per pass -> unschedulable. Only
// their order in the active queue is dropped (their cycles change nothing the others see).
// Pods tried in the same pass whose next backoff ends at the same instant (all pods once their
// backoff reached podMaxBackoffSeconds) share that state from then on, so they move as one
// cohort: a cluster event or a pass costs one step per cohort, not one per pending pod. A pod's
// cohort is found through a union-find forest (cohorts merge when tried together).
class HopelessPods {
 public:
  // j has just failed its first cycle (Pod::attempts, backoff_until, unschedulable_since set).
  void add(std::vector<Pod>& pods, JobIndex j) {
    if (cohort_of_.size() < pods.size()) cohort_of_.resize(pods.size(), kNoCohort);
    Pod& p = pods[j];
    p.where = Where::Hopeless;
    const auto c = static_cast<std::uint32_t>(cohorts_.size());
    cohorts_.push_back({p.unschedulable_since, p.backoff_until, p.attempts, 1, c, State::Unschedulable});
    cohort_of_[j] = c;
    fresh_.push_back(c);
  }

  // MoveAllToActiveOrBackoffQueue for the cohorts that failed since the last cluster event.
  void move_all(Tick now) {
    for (std::size_t i = fresh_head_; i < fresh_.size(); ++i)
      if (live(fresh_[i], State::Unschedulable)) to_active_or_backoff(fresh_[i], now);
    fresh_.clear();
    fresh_head_ = 0;
  }

  // flushBackoffQCompleted and flushUnschedulablePodsLeftover.
  void flush(Tick now, Tick max_in_unschedulable) {
    while (!backoff_.empty() && backoff_.top().first <= now) {
      const auto [until, c] = backoff_.top();
      backoff_.pop();
      if (!live(c, State::Backoff)) {
        --dead_in_backoff_;
        continue;
      }
      cohorts_[c].state = State::Active;
      active_.push_back(c);
    }
    while (fresh_head_ < fresh_.size()) {
      const std::uint32_t c = fresh_[fresh_head_];
      if (live(c, State::Unschedulable)) {
        if (cohorts_[c].since + max_in_unschedulable > now) break;
        to_active_or_backoff(c, now);
      }
      ++fresh_head_;
    }
  }

  // One failed cycle for each active cohort; cohorts whose next backoff ends together merge.
  template <typename BackoffFn>
  void try_active(Tick now, BackoffFn backoff) {
    merged_.clear();
    for (const std::uint32_t c : active_) {
      if (!live(c, State::Active)) continue;  // ended since
      Cohort& k = cohorts_[c];
      const int attempts = k.attempts + 1;
      const Tick until = now + backoff(attempts);
      auto it =
          std::find_if(merged_.begin(), merged_.end(), [&](std::uint32_t m) { return cohorts_[m].until == until; });
      if (it != merged_.end()) {
        k.parent = *it;
        cohorts_[*it].live += k.live;
        k.live = 0;
        continue;
      }
      k.attempts = attempts;
      k.since = now;
      k.until = until;
      k.state = State::Unschedulable;
      fresh_.push_back(c);
      merged_.push_back(c);
    }
    active_.clear();
  }

  void remove(JobIndex j) {
    Cohort& k = cohorts_[find(cohort_of_[j])];
    --k.live;  // a cohort left empty is skipped wherever it is listed
    if (k.live == 0 && k.state == State::Backoff) ++dead_in_backoff_;
  }

  bool backing_off() {
    drop_dead_backoff();
    return !backoff_.empty();
  }
  Tick first_backoff() {
    drop_dead_backoff();
    return backoff_.top().first;
  }

 private:
  enum class State : std::uint8_t { Unschedulable, Backoff, Active };
  struct Cohort {
    Tick since;  // failure time: queue timestamp and unschedulable since
    Tick until;  // backoff end
    int attempts;
    std::uint32_t live;    // member pods not ended
    std::uint32_t parent;  // itself while a root
    State state;
  };
  static constexpr std::uint32_t kNoCohort = UINT32_MAX;

  std::uint32_t find(std::uint32_t c) {
    std::uint32_t r = c;
    while (cohorts_[r].parent != r) r = cohorts_[r].parent;
    while (cohorts_[c].parent != r) c = std::exchange(cohorts_[c].parent, r);
    return r;
  }

  bool live(std::uint32_t c, State state) const {
    const Cohort& k = cohorts_[c];
    return k.parent == c && k.live > 0 && k.state == state;
  }

  // A cohort leaves the backoff heap only when flushed, so its only stale entries are cohorts
  // whose pods all ended; they are counted, and looked for only while there are some.
  void drop_dead_backoff() {
    while (dead_in_backoff_ > 0 && !backoff_.empty() && !live(backoff_.top().second, State::Backoff)) {
      backoff_.pop();
      --dead_in_backoff_;
    }
  }

  void to_active_or_backoff(std::uint32_t c, Tick now) {
    Cohort& k = cohorts_[c];
    if (k.until > now) {
      k.state = State::Backoff;
      backoff_.emplace(k.until, c);
    } else {
      k.state = State::Active;
      active_.push_back(c);
    }
  }

  std::vector<Cohort> cohorts_;
  std::vector<std::uint32_t> cohort_of_;  // job -> the cohort it joined (find() gives the current)
  std::vector<std::uint32_t> fresh_;      // unschedulable since the last cluster event, by failure time
  std::size_t fresh_head_ = 0;            // fresh_[..head) left by the 5-minute flush
  std::priority_queue<std::pair<Tick, std::uint32_t>, std::vector<std::pair<Tick, std::uint32_t>>, std::greater<>>
      backoff_;
  std::vector<std::uint32_t> active_;
  std::vector<std::uint32_t> merged_;  // this pass's cohorts, one per backoff end
  std::size_t dead_in_backoff_ = 0;    // entries of backoff_ whose cohort has no live pod
};

// An entry of the active, backoff or unschedulable queue: a key, the pod, and the pod's qseq when
// it was made. The queues are binary heaps and time-ordered vectors cleaned lazily: an entry whose
// pod has left that queue is skipped when reached, instead of being searched for and erased.
// A FailedBatch's id in QueueEntry::id carries this bit; a pod's id is its job index.
constexpr std::uint32_t kBatchBit = 1u << 31;

struct QueueEntry {
  std::int64_t key1;  // active: -priority; backoff: backoff end; unschedulable: since
  Tick key2;          // active: timestamp; otherwise 0
  JobIndex order;     // active: the pod's index (a batch's: its first member's)
  std::uint32_t id;   // the pod, or a batch | kBatchBit
  std::uint32_t seq;  // the pod's qseq or the batch's seq when the entry was made
  friend bool operator>(const QueueEntry& a, const QueueEntry& b) {
    return std::tie(a.key1, a.key2, a.order, a.id) > std::tie(b.key1, b.key2, b.order, b.id);
  }
};

// What makes the failed cycles of several pods interchangeable: the same priority, the same
// reason (kind: 3 a single pod, 8 the first pod of a pod set with none bound, 7 the next pod of a
// pod set with pods bound) and the same GPU request over the same eligible pools (a bit per pool).
// A member that loses its bound pods (node failure, drain) leaves its batch (unbatch).
struct BatchKey {
  std::int32_t priority = 0;
  std::int32_t kind = 0;
  std::int32_t gpus = 0;
  std::uint64_t pools = 0;
  friend bool operator==(const BatchKey&, const BatchKey&) = default;
};

// Pods whose cycles failed at the same instant for want of GPUs, with their backoff at
// podMaxBackoffSeconds, nothing nominated and nothing to preempt. Their queue state (timestamp,
// unschedulable since, backoff end) is the same, so they move through the queues as one entry:
// unschedulable -> backoff or active, exactly as each would. In the active queue the batch stands
// at its first member's place (-priority, timestamp, index); when it is reached and no eligible
// node has the GPUs its pods ask for (and no lower-priority pod runs), every member's cycle would
// fail the same way without changing anything another pod sees, and nothing before the last of
// them can free GPUs (no pod of that priority can preempt), so they fail together; otherwise the
// first member leaves the batch and has its cycle as any pod does.
struct FailedBatch {
  std::vector<JobIndex> members;  // sorted by index; [head, end) not yet taken out
  std::vector<JobIndex> joined;   // joined since the last settle, unsorted
  std::size_t head = 0;
  std::size_t live = 0;  // members still in the batch
  Tick since = 0;        // when they failed: their queue timestamp and unschedulable time
  Tick until = 0;        // their backoff end
  BatchKey key;
  Where where = Where::None;
  std::uint32_t seq = 0;
};
using QueueHeap = std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>>;

// Entries appended in time order (the unschedulable pods, by the time they failed), consumed from
// the front.
struct TimeQueue {
  std::vector<QueueEntry> v;
  std::size_t head = 0;
  void push(const QueueEntry& e) { v.push_back(e); }
  bool empty() const { return head == v.size(); }
  const QueueEntry& front() const { return v[head]; }
  void pop() {
    if (++head == v.size()) clear();
  }
  void clear() {
    v.clear();
    head = 0;
  }
};

struct Candidate {
  NodeId node = 0;
  std::vector<models::JobIndex> victims;  // most important first
};

class KubernetesPolicy final : public Policy {
 public:
  KubernetesPolicy(Config config, std::uint64_t seed)
      : cfg_(std::move(config)),
        tie_rng_(seed, "kubernetes/tie_break"),
        offset_rng_(seed, "kubernetes/preemption_offset") {}

  std::string_view name() const override { return "kubernetes"; }

  // RBAC refuses the create request at the API server (403), before any scheduler sees it.
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {false, "permission denied: jobs.batch is forbidden: User \"" + name_of(w.tenants, job.tenant) +
                       "\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"" +
                       name_of(w.queues, job.queue) + "\" (RBAC, 403 Forbidden at submit)"};
  }

  // The device plugin advertises each GPU as `replicas` time-sliced units, or, on a pool with a MIG
  // geometry (migStrategy single or mixed), as its MIG slices.
  models::ClusterSpec advertised_cluster(const models::ClusterSpec& spec) const override {
    const DevicePlugin& dp = cfg_.device_plugin;
    models::ClusterSpec out = spec;
    if (dp.mig_strategy != MigStrategy::None) {
      for (const auto& [pool_name, at] : dp.mig_devices_at) {
        // A named copy: C++17 lambdas (clang 14) may not capture a structured binding.
        const std::string& name = pool_name;
        const bool known = std::any_of(spec.pools.begin(), spec.pools.end(),
                                       [&](const models::NodePool& p) { return p.name == name; });
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

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    admit(view, j, view.now());
  }

  void on_requeue(const ClusterView& view, JobIndex j) override {
    // The evicted pod is deleted; its controller creates a new one, admitted like any other.
    ensure(view);
    const std::uint32_t qseq = pods_[j].qseq;  // kept: older queue entries must stay stale
    pods_[j] = Pod{};
    pods_[j].qseq = qseq;
    admit(view, j, view.now());
  }

  void on_release(const ClusterView& view, JobIndex j) override {
    ensure(view);
    Pod& p = pods_[j];
    if (p.where != Where::Running && !p.pods.empty()) {
      // A waiting job lost the pods it had bound (their node failed or was drained): the
      // controller creates them again; they wait in the job's queue entry.
      for (const models::Slice& sl : p.pods) add_usage(sl, -1);
      p.pods.clear();
      p.said[0] = -1;
      // Its next pod is now its first: it leaves its batch (keyed by the next pod's GPUs).
      if (p.where == Where::Batched) unbatch(j);
      move_all_to_active_or_backoff(view.now());
      return;
    }
    if (p.where == Where::Running) {
      const Job& job = view.workload().jobs[j];
      if (!p.pods.empty()) {
        for (const models::Slice& sl : p.pods) add_usage(sl, -1);
        p.pods.clear();
      } else {
        add_usage(models::Slice{p.node, job.gpus, job.cpus, job.memory_mib}, -1);
      }
      --running_;
      if (--running_by_priority_[job.priority] == 0) running_by_priority_.erase(job.priority);
      if (const int res = resource(job); res >= 0) {
        mig_used_[p.node][static_cast<std::size_t>(res)] -= job.gpus;
      } else if (split(view.cluster().node(p.node).pool)) {
        whole_used_[p.node] -= job.gpus;
      }
      group_running(view.now(), job.group, -1);
      p.where = Where::None;
      p.node = kNoNode;
    }
    unadmit(view, j);
    // A deleted pod is a cluster event: MoveAllToActiveOrBackoffQueue.
    move_all_to_active_or_backoff(view.now());
  }

  void move_all_to_active_or_backoff(Tick now) {
    unschedulable_fitting_.clear();
    // Where each lands is ordered by its own key, so the order they are moved in does not matter.
    for (std::size_t i = unschedulable_.head; i < unschedulable_.v.size(); ++i) {
      const QueueEntry& e = unschedulable_.v[i];
      if (in_queue(e, Where::Unschedulable)) to_active_or_backoff(e.id, now);
    }
    unschedulable_.clear();
    hopeless_.move_all(now);
  }

  // What a slice's pod adds to (sign 1) or takes from (-1) its node's bound requests.
  void add_usage(const models::Slice& sl, int sign) {
    touch(sl.node);
    add_slice_usage(usage_[sl.node], sl, sign);
  }

  // The pods of a job wider than one node (models::pod_gpus over the widest node of the pools it
  // may use); one entry for a job that is a single pod. Only plain nvidia.com/gpu requests on
  // whole-GPU pools split: a MIG or time-sliced request stays one pod.
  std::vector<std::int32_t> pod_sizes(const ClusterView& view, const Job& job) const {
    if (job.gpus <= 1 || resource(job) >= 0 || any_mig_) return {job.gpus};
    std::int32_t widest = 0;
    const auto& spec = view.cluster().spec();
    for (models::PoolId p = 0; p < spec.pools.size(); ++p) {
      if (!eligible(view, p, job)) continue;
      if (spec.pools[p].units_per_gpu != 1) return {job.gpus};
      widest = std::max(widest, spec.pools[p].gpus_per_node);
    }
    auto sizes = models::pod_gpus(job, widest);
    if (std::any_of(sizes.begin(), sizes.end(), [](std::int32_t g) { return g <= 0; })) return {job.gpus};
    return sizes;
  }

  // Pod k of n of a job: its GPUs, and an even share of the job's cpu and memory.
  static Job pod_of(const Job& job, const std::vector<std::int32_t>& sizes, std::size_t k) {
    Job pod = job;
    const auto n = static_cast<std::int32_t>(sizes.size());
    const auto i = static_cast<std::int32_t>(k);
    pod.gpus = sizes[k];
    pod.cpus = job.cpus / n + (i < job.cpus % n ? 1 : 0);
    pod.memory_mib = job.memory_mib / n + (i < job.memory_mib % n ? 1 : 0);
    pod.gpus_per_node = 0;
    pod.nodes = 0;
    return pod;
  }

  void on_end(const ClusterView& view, JobIndex j) override {
    ensure(view);
    leave_queue(j);
    clear_nomination(j);
    unadmit(view, j);
    pods_[j].where = Where::Done;
    if (const auto g = view.workload().jobs[j].group; g != models::kNone) {
      --groups_[g].live;
      group_running(view.now(), g, 0);
    }
  }

  void schedule(Session& s) override {
    ensure(s);
    const Tick now = s.now();
    const auto& jobs = s.workload().jobs;
    // Controllers create the pods that quota refused again.
    while (!quota_wait_.empty() && quota_wait_.begin()->first <= now) {
      const JobIndex j = quota_wait_.begin()->second;
      quota_wait_.erase(quota_wait_.begin());
      pods_[j].where = Where::None;
      admit(s, j, now);
    }
    for (JobIndex j : quota_reasons_) {
      if (pods_[j].quota_reason_due && s.state(j) == JobState::Pending) {
        s.pending_reason(j, pods_[j].where == Where::QuotaNever
                                ? "quota: requests more " + std::string(pods_[j].quota_never_by) +
                                      " than its namespace's whole quota; never admitted"
                                : "quota: rejected at admission, retrying");
        pods_[j].said[0] = -1;
      }
      pods_[j].quota_reason_due = false;
    }
    quota_reasons_.clear();
    // flushBackoffQCompleted and flushUnschedulablePodsLeftover.
    while (live_top(backoff_, Where::Backoff) && backoff_.top().key1 <= now) {
      const std::uint32_t id = backoff_.top().id;
      backoff_.pop();
      push_active(id);
    }
    while (live_front(unschedulable_, Where::Unschedulable) &&
           unschedulable_.front().key1 + cfg_.max_in_unschedulable <= now) {
      const std::uint32_t id = unschedulable_.front().id;
      unschedulable_.pop();
      to_active_or_backoff(id, now);
    }
    hopeless_.flush(now, cfg_.max_in_unschedulable);
    // A node that came back (or went) is a cluster event too (NodeUpdate): every unschedulable pod
    // gets another chance.
    // (After the flushes above, what this moves lands in the active queue or in a backoff that
    // has not ended yet, so nothing is left to flush.)
    if (up_changes_moved_ != s.cluster().up_changes()) {
      up_changes_moved_ = s.cluster().up_changes();
      move_all_to_active_or_backoff(now);
    }
    // One scheduling cycle per pod, best first; a failing pod does not block the others.
    while (live_top(active_, Where::Active)) {
      const std::uint32_t id = active_.top().id;
      active_.pop();
      if (id & kBatchBit) {
        run_batch(s, id & ~kBatchBit);
        continue;
      }
      const JobIndex j = id;
      pods_[j].where = Where::None;
      if (s.state(j) != JobState::Pending) continue;
      ++pods_[j].attempts;
      schedule_one(s, j, jobs[j]);
    }
    // The hopeless pods' cycles: each fails as before, with nothing else to do.
    hopeless_.try_active(now, [&](int attempts) { return backoff_duration(attempts); });
    report_partial_groups(s);
    // Timers for what is waiting; none when nothing is.
    const bool backing_off = live_top(backoff_, Where::Backoff);
    if (backing_off || hopeless_.backing_off()) {
      Tick first = hopeless_.backing_off() ? hopeless_.first_backoff() : sim::kNever;
      if (backing_off) first = std::min(first, backoff_.top().key1);
      s.wake_at(first);
    }
    if (!quota_wait_.empty()) s.wake_at(quota_wait_.begin()->first);
    // The 5-minute flush can only matter while something may still change, and only for pods
    // that fit some node.
    if (running_ > 0 || backing_off || hopeless_.backing_off() || !quota_wait_.empty()) {
      if (live_front(unschedulable_fitting_, Where::Unschedulable))
        s.wake_at(unschedulable_fitting_.front().key1 + cfg_.max_in_unschedulable);
    }
  }

 private:
  void ensure(const ClusterView& view) {
    jobs_ = &view.workload().jobs;
    if (!pods_.empty() || view.workload().jobs.empty()) return;
    pods_.resize(view.workload().jobs.size());
    const std::size_t nodes = view.cluster().nodes().size();
    usage_.resize(nodes);
    nominated_.resize(nodes);
    dirty_flag_.assign(nodes, 0);
    const auto& tenants = view.workload().tenants;
    quota_.assign(tenants.size(), Config::Quota{});
    quota_used_.assign(tenants.size(), Config::Quota{0, 0, 0, 0});
    for (const auto& [name, limit] : cfg_.quota)
      if (auto t = tenants.find(name)) quota_[*t] = limit;
    // Pod groups: members, to report partial placement (no gang scheduling here).
    groups_.assign(view.workload().groups.size(), Group{});
    for (JobIndex j = 0; j < view.workload().jobs.size(); ++j) {
      const auto g = view.workload().jobs[j].group;
      if (g == models::kNone || g >= groups_.size()) continue;
      groups_[g].members.push_back(j);
      ++groups_[g].live;
    }
    // Device plugin: MIG pools, their slices per node per profile, and the resource of each GPU type.
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
          const auto k = static_cast<std::size_t>(std::lower_bound(profiles_.begin(), profiles_.end(), profile) -
                                                  profiles_.begin());
          pool_slices_[p][k] += n;
        }
      }
    }
    // Failed batches need the failing pods' cycles to change nothing: not with MIG profiles, nor
    // with failRequestsGreaterThanOne (pods fail and release in the middle of a pass).
    batching_ = cfg_.batch_failed_cycles && !any_mig_ && !dp.fail_requests_greater_than_one && spec.pools.size() <= 64;
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

  // A group is partially placed while some, but not all, of its live (not ended) pods run.
  void group_running(Tick now, models::GroupId g, int delta) {
    if (g == models::kNone || g >= groups_.size()) return;
    Group& gr = groups_[g];
    gr.running += delta;
    const bool partial = gr.running > 0 && gr.running < gr.live;
    if (partial && gr.partial_since < 0) {
      gr.partial_since = now;
      partial_.insert(g);
    } else if (!partial && gr.partial_since >= 0) {
      gr.partial_since = -1;
      partial_.erase(g);
    }
  }

  // Pending pods of groups partially placed for at least partial_placement_threshold get a reason.
  void report_partial_groups(Session& s) {
    const Tick now = s.now();
    for (models::GroupId g : partial_) {
      const Group& gr = groups_[g];
      const Tick due = gr.partial_since + cfg_.partial_placement_threshold;
      if (due > now) {
        s.wake_at(due);
        continue;
      }
      const std::string reason = "gang: partially placed for " +
                                 std::to_string((now - gr.partial_since) / sim::kSecond) + " s, " +
                                 std::to_string(gr.running) + " of " + std::to_string(gr.live) + " pods running";
      for (JobIndex j : gr.members)
        if (s.state(j) == JobState::Pending) {
          s.pending_reason(j, reason);
          pods_[j].said[0] = -1;
        }
    }
  }

  // The extended resource a pod requests: nvidia.com/gpu (kGpuResource) or, under migStrategy
  // mixed, nvidia.com/mig-<profile> (its index in profiles_) when its GPU type names a profile
  // ("mig-1g.5gb", "1g.5gb").
  int resource(const Job& job) const {
    if (job.gpu_type == 0 || job.gpu_type - 1u >= res_by_type_.size()) return kGpuResource;
    return res_by_type_[job.gpu_type - 1u];
  }

  // Whether a pool's nodes advertise what the pod requests (and match its GPU type).
  bool eligible(const ClusterView& view, models::PoolId pool, const Job& job) const {
    const int res = resource(job);
    if (res >= 0) return pool_slices_[pool][static_cast<std::size_t>(res)] > 0;
    if (!pool_eligible(view.cluster(), pool, job, view.workload())) return false;
    // Under mixed, a MIG node advertises as nvidia.com/gpu only its GPUs not in MIG mode.
    return !(job.gpus > 0 && split(pool) && pool_whole_[pool] == 0);
  }

  // Under migStrategy mixed, a pool with MIG: nvidia.com/gpu counts only its whole GPUs.
  bool split(models::PoolId pool) const {
    return pool_mig_[pool] != 0 && cfg_.device_plugin.mig_strategy == MigStrategy::Mixed;
  }

  // Allocatable and free amounts of the pod's GPU resource on a node.
  std::int64_t gpu_capacity(const models::Node& n, const Job& job) const {
    const int res = resource(job);
    if (res < 0) return split(n.pool) ? pool_whole_[n.pool] : n.gpus;
    return pool_slices_[n.pool][static_cast<std::size_t>(res)];
  }
  std::int64_t gpu_free(NodeId id, const models::Node& n, const Job& job) const {
    const int res = resource(job);
    if (res < 0) return split(n.pool) ? pool_whole_[n.pool] - whole_used_[id] : n.free_gpus;
    return gpu_capacity(n, job) - mig_used_[id][static_cast<std::size_t>(res)];
  }

  // ResourceQuota admission: the pod enters the active queue, or its controller retries later.
  // What a job counts against its namespace's quota: gpu, cpu (millicores), memory, pods.
  static std::array<std::int64_t, 4> quota_demand(const Job& job) {
    return {job.gpus, std::int64_t{job.cpus} * 1000, job.memory_mib, std::max<std::int64_t>(1, job.nodes)};
  }
  static constexpr const char* kQuotaNames[4] = {"GPUs", "cpu", "memory", "pods"};
  static std::array<std::int64_t, 4> quota_fields(const Config::Quota& q) {
    return {q.gpu, q.cpu_milli, q.memory_mib, q.pods};
  }

  void admit(const ClusterView& view, JobIndex j, Tick now) {
    const Job& job = view.workload().jobs[j];
    Pod& p = pods_[j];
    const auto limit = job.tenant < quota_.size() ? quota_fields(quota_[job.tenant]) : quota_fields({});
    const bool limited = std::any_of(limit.begin(), limit.end(), [](std::int64_t l) { return l >= 0; });
    if (limited) {
      const auto demand = quota_demand(job);
      const auto used = quota_fields(quota_used_[job.tenant]);
      bool over = false, never = false;
      for (std::size_t r = 0; r < limit.size(); ++r) {
        if (limit[r] < 0) continue;
        over = over || used[r] + demand[r] > limit[r];
        if (!never && demand[r] > limit[r]) {
          never = true;
          p.quota_never_by = kQuotaNames[r];
        }
      }
      if (over) {
        p.quota_reason_due = true;
        quota_reasons_.push_back(j);
        if (never) {
          p.where = Where::QuotaNever;
          return;
        }
        p.where = Where::QuotaWait;
        p.retry_at = now + cfg_.quota_retry;
        quota_wait_.emplace(p.retry_at, j);
        return;
      }
      count_quota(job, 1);
      p.admitted = true;
    }
    p.timestamp = now;
    push_active(j);
  }

  void count_quota(const Job& job, std::int64_t sign) {
    const auto d = quota_demand(job);
    Config::Quota& u = quota_used_[job.tenant];
    u.gpu += sign * d[0];
    u.cpu_milli += sign * d[1];
    u.memory_mib += sign * d[2];
    u.pods += sign * d[3];
  }

  void unadmit(const ClusterView& view, JobIndex j) {
    Pod& p = pods_[j];
    if (!p.admitted) return;
    count_quota(view.workload().jobs[j], -1);
    p.admitted = false;
  }

  // Into the active queue: a pod, or a batch (id | kBatchBit) at its first member's place.
  void push_active(std::uint32_t id) {
    if (id & kBatchBit) {
      const std::uint32_t b = id & ~kBatchBit;
      FailedBatch& B = batches_[b];
      settle(b);
      B.where = Where::Active;
      active_.push({-static_cast<std::int64_t>(B.key.priority), B.since, B.members[B.head], id, ++B.seq});
      return;
    }
    Pod& p = pods_[id];
    p.where = Where::Active;
    active_.push({-static_cast<std::int64_t>(priority(id)), p.timestamp, id, id, ++p.qseq});
  }

  void to_active_or_backoff(std::uint32_t id, Tick now) {
    if (id & kBatchBit) {
      FailedBatch& B = batches_[id & ~kBatchBit];
      if (B.until > now) {
        B.where = Where::Backoff;
        backoff_.push({B.until, 0, 0, id, ++B.seq});
      } else {
        push_active(id);
      }
      return;
    }
    Pod& p = pods_[id];
    if (p.backoff_until > now) {
      p.where = Where::Backoff;
      backoff_.push({p.backoff_until, 0, id, id, ++p.qseq});
    } else {
      push_active(id);
    }
  }

  // Whether a queue entry still stands for its pod's (or live batch's) place in that queue.
  bool in_queue(const QueueEntry& e, Where where) const {
    if (e.id & kBatchBit) {
      const FailedBatch& B = batches_[e.id & ~kBatchBit];
      return B.where == where && B.seq == e.seq && B.live > 0;
    }
    const Pod& p = pods_[e.id];
    return p.where == where && p.qseq == e.seq;
  }
  // Drop the stale entries at the top or front; true when a live one is left.
  bool live_top(QueueHeap& q, Where where) {
    while (!q.empty() && !in_queue(q.top(), where)) q.pop();
    return !q.empty();
  }
  bool live_front(TimeQueue& q, Where where) {
    while (!q.empty() && !in_queue(q.front(), where)) q.pop();
    return !q.empty();
  }

  // A pod leaving its queue early (it ended while waiting): the lazily cleaned queues skip its entry
  // once the caller has moved it on (Pod::where).
  void leave_queue(JobIndex j) {
    Pod& p = pods_[j];
    switch (p.where) {
      case Where::QuotaWait: quota_wait_.erase({p.retry_at, j}); break;
      case Where::Hopeless: hopeless_.remove(j); break;
      case Where::Batched: {
        const std::uint32_t b = p.batch;
        p.where = Where::None;  // no longer a member (the caller moves it on)
        p.batch = UINT32_MAX;
        --batches_[b].live;
        member_left(b);
        break;
      }
      default: break;
    }
  }

  // ---- Failed batches (FailedBatch) ----

  // A member leaves batch B with the batch's queue state (timestamp, unschedulable since, backoff
  // end); the caller gives it its place.
  void take_out(JobIndex j, FailedBatch& B) {
    Pod& p = pods_[j];
    --B.live;
    p.where = Where::None;
    p.batch = UINT32_MAX;
    p.timestamp = B.since;
    p.unschedulable_since = B.since;
    p.backoff_until = B.until;
  }

  // After a member left batch b: an empty batch is freed; one in the active queue is pushed again,
  // since its entry stands at its first member's place, which may have been the one that left (the
  // entry made before is then stale).
  void member_left(std::uint32_t b) {
    if (batches_[b].live == 0) {
      free_batch(b);
    } else if (batches_[b].where == Where::Active) {
      push_active(b | kBatchBit);
    }
  }

  // A member leaves its batch and takes the batch's place in the queues as a pod of its own (an
  // unschedulable one is appended out of time order: the caller moves every unschedulable pod
  // right after).
  void unbatch(JobIndex j) {
    Pod& p = pods_[j];
    const std::uint32_t b = p.batch;
    const Where where = batches_[b].where;
    take_out(j, batches_[b]);
    member_left(b);
    switch (where) {
      case Where::Active: push_active(j); break;
      case Where::Backoff:
        p.where = Where::Backoff;
        backoff_.push({p.backoff_until, 0, j, j, ++p.qseq});
        break;
      default: push_unschedulable(j, p.unschedulable_since); break;
    }
  }

  void push_unschedulable(JobIndex j, Tick since) {
    Pod& p = pods_[j];
    p.where = Where::Unschedulable;
    const QueueEntry e{since, 0, j, j, ++p.qseq};
    unschedulable_.push(e);
    if (p.fits_somewhere == 1) unschedulable_fitting_.push(e);
  }

  bool member(std::uint32_t b, JobIndex j) const { return pods_[j].where == Where::Batched && pods_[j].batch == b; }

  // Sorts the members that joined into place and skips those that left from the front.
  void settle(std::uint32_t b) {
    FailedBatch& B = batches_[b];
    if (!B.joined.empty()) {
      B.members.erase(B.members.begin(), B.members.begin() + static_cast<std::ptrdiff_t>(B.head));
      B.head = 0;
      std::sort(B.joined.begin(), B.joined.end());
      const auto mid = static_cast<std::ptrdiff_t>(B.members.size());
      B.members.insert(B.members.end(), B.joined.begin(), B.joined.end());
      std::inplace_merge(B.members.begin(), B.members.begin() + mid, B.members.end());
      B.joined.clear();
    }
    while (B.head < B.members.size() && !member(b, B.members[B.head])) ++B.head;
  }

  void free_batch(std::uint32_t b) {
    FailedBatch& B = batches_[b];
    B.members.clear();
    B.joined.clear();
    B.head = 0;
    B.live = 0;
    B.where = Where::None;
    ++B.seq;
    free_batches_.push_back(b);
  }

  // The batch of pods failing now with this key, made on first use (unschedulable since now).
  std::uint32_t forming(const BatchKey& key, Tick now) {
    for (const auto& [k, b] : forming_)
      if (k == key && batches_[b].where == Where::Unschedulable && batches_[b].since == now && batches_[b].live > 0)
        return b;
    std::uint32_t b = 0;
    if (!free_batches_.empty()) {
      b = free_batches_.back();
      free_batches_.pop_back();
    } else {
      b = static_cast<std::uint32_t>(batches_.size());
      HEADROOM_ASSERT(b < kBatchBit, "too many kubernetes pod batches");
      batches_.emplace_back();
    }
    mark_failed(b, key, now);
    return b;
  }

  // The batch's members failed at `now`: unschedulable since now, their backoff at its maximum.
  void mark_failed(std::uint32_t b, const BatchKey& key, Tick now) {
    FailedBatch& B = batches_[b];
    B.key = key;
    B.since = now;
    B.until = now + cfg_.max_backoff;
    B.where = Where::Unschedulable;
    const QueueEntry e{now, 0, 0, b | kBatchBit, ++B.seq};
    unschedulable_.push(e);
    unschedulable_fitting_.push(e);  // every member fits some node when it is empty
    if (forming_at_ != now) {
      forming_.clear();
      forming_at_ = now;
    }
    forming_.emplace_back(key, b);
  }

  // Whether a pod's failed cycle (just ended, Pod::attempts counted) can join a batch, and its key.
  std::optional<BatchKey> batch_key(const ClusterView& view, JobIndex j, const Job& pod, int kind) const {
    const Pod& p = pods_[j];
    const Job& job = (*jobs_)[j];
    if (!batching_ || job.group != models::kNone || p.fits_somewhere != 1 || p.nominated != kNoNode || pod.gpus <= 0 ||
        resource(pod) >= 0 || backoff_duration(p.attempts) != cfg_.max_backoff)
      return std::nullopt;
    BatchKey key{job.priority, kind, pod.gpus, 0};
    for (models::PoolId q = 0; q < view.cluster().pool_count(); ++q)
      if (eligible(view, q, pod)) key.pools |= std::uint64_t{1} << q;
    return key;
  }

  // A batch reached the head of the active queue.
  void run_batch(Session& s, std::uint32_t b) {
    FailedBatch& B = batches_[b];
    settle(b);
    B.where = Where::None;
    const Tick now = s.now();
    // No eligible node has the GPUs (its free GPUs only shrink until the last member's turn) and
    // nothing can be preempted: every member fails as it would one by one.
    const bool no_victims = running_by_priority_.empty() || running_by_priority_.begin()->first >= B.key.priority;
    if (no_victims && !gpus_free_in(s, B.key.gpus, B.key.pools)) {
      for (const auto& [k, f] : forming_) {
        if (f == b || !(k == B.key) || batches_[f].where != Where::Unschedulable || batches_[f].since != now ||
            batches_[f].live == 0)
          continue;
        // Another batch of this key already failed now: the smaller joins the larger.
        std::uint32_t from = b, to = f;
        if (batches_[f].live < B.live) std::swap(from, to);
        FailedBatch& F = batches_[from];
        FailedBatch& T = batches_[to];
        for (const std::vector<JobIndex>* list : {&F.members, &F.joined})
          for (const JobIndex j : *list)
            if (member(from, j)) {
              pods_[j].batch = to;
              T.joined.push_back(j);
            }
        T.live += F.live;
        F.live = 0;
        free_batch(from);
        if (to == b) mark_failed(b, B.key, now);  // b takes f's place (f's entries are now stale)
        return;
      }
      mark_failed(b, B.key, now);
      return;
    }
    // The first member has its own cycle; the rest keep their place.
    const JobIndex j = B.members[B.head++];
    take_out(j, B);
    Pod& p = pods_[j];
    if (B.live > 0) {
      push_active(b | kBatchBit);
    } else {
      free_batch(b);
    }
    if (s.state(j) != JobState::Pending) return;
    ++p.attempts;
    schedule_one(s, j, (*jobs_)[j]);
  }

  // gpus_free_somewhere for a plain request of `gpus` over the pools in `pools`.
  bool gpus_free_in(const ClusterView& view, std::int32_t gpus, std::uint64_t pools) const {
    const models::ClusterState& c = view.cluster();
    for (models::PoolId p = 0; p < c.pool_count(); ++p)
      if ((pools >> p & 1) != 0 && pool_has_free(c, p, gpus)) return true;
    return false;
  }

  std::int32_t priority(JobIndex j) const { return (*jobs_)[j].priority; }

  Tick backoff_duration(int attempts) const {
    Tick d = cfg_.initial_backoff;
    for (int i = 1; i < attempts; ++i) {
      if (d > cfg_.max_backoff - d) return cfg_.max_backoff;
      d += d;
    }
    return std::min(d, cfg_.max_backoff);
  }

  // A failed cycle: the pod becomes unschedulable (or joins the batch failing now with `key`).
  void fail(JobIndex j, Tick now, const std::optional<BatchKey>& key = std::nullopt) {
    Pod& p = pods_[j];
    p.timestamp = now;  // AddUnschedulableIfNotPresent refreshes the timestamp
    p.backoff_until = now + backoff_duration(p.attempts);
    p.unschedulable_since = now;
    if (key) {
      const std::uint32_t b = forming(*key, now);
      p.where = Where::Batched;
      p.batch = b;
      batches_[b].joined.push_back(j);
      ++batches_[b].live;
      return;
    }
    push_unschedulable(j, now);
  }

  // Resources of higher-or-equal priority pods (other than `self`) nominated to `node`.
  Amount reserved(NodeId node, std::int32_t prio, JobIndex self) const {
    Amount a;
    const int res = self < jobs_->size() ? resource((*jobs_)[self]) : kGpuResource;
    for (JobIndex k : nominated_[node]) {
      if (k == self || priority(k) < prio) continue;
      const Amount& want = pods_[k].nominated_for;
      if (resource((*jobs_)[k]) == res) a.gpus += want.gpus;
      a.cpus += want.cpus;
      a.memory_mib += want.memory_mib;
    }
    return a;
  }

  static bool covers(const models::Node& n, const Amount& free, const Job& job) {
    return free.gpus >= job.gpus && (n.cpus <= 0 || free.cpus >= job.cpus) &&
           (n.memory_mib <= 0 || free.memory_mib >= job.memory_mib);
  }

  // A filter failure that preemption cannot resolve (UnschedulableAndUnresolvable).
  bool unresolvable(const ClusterView& view, NodeId id, const Job& job) const {
    const models::Node& n = view.cluster().node(id);
    return !n.up || !eligible(view, n.pool, job);
  }

  bool fits(const ClusterView& view, NodeId id, const Job& job, JobIndex self) const {
    if (unresolvable(view, id, job)) return false;
    const models::Node& n = view.cluster().node(id);
    const Amount r = reserved(id, job.priority, self);
    return covers(n, {gpu_free(id, n, job) - r.gpus, n.free_cpus - r.cpus, n.free_memory_mib - r.memory_mib}, job);
  }

  std::int64_t total_score(const ClusterView& view, NodeId id, const Job& job) const {
    const NodeScores sc = score_node(cfg_.scoring, view.cluster().node(id), usage_[id], job);
    return cfg_.fit_weight * sc.fit + cfg_.balanced_weight * sc.balanced;
  }

  // Whether some up node of an eligible pool has at least the pod's GPUs free. When none has, no
  // node can pass the filter (nominations only take more away), so the scan is skipped: a pod
  // waiting for GPUs costs a few set lookups per attempt instead of a pass over every node.
  bool gpus_free_somewhere(const ClusterView& view, const Job& job) const {
    if (job.gpus <= 0 || resource(job) >= 0) return true;  // only plain nvidia.com/gpu requests
    const models::ClusterState& c = view.cluster();
    for (models::PoolId p = 0; p < c.pool_count(); ++p)
      if (eligible(view, p, job) && pool_has_free(c, p, job.gpus)) return true;
    return false;
  }

  // Whether some up node of pool p has at least `gpus` GPUs free.
  static bool pool_has_free(const models::ClusterState& c, models::PoolId p, std::int32_t gpus) {
    for (std::int32_t f = c.node_units(p); f >= gpus; --f)
      if (!c.nodes_with_free(p, f).empty()) return true;
    return false;
  }

  // Node classes: nodes of one pool with the same `up`, free resources and bound requests, and no
  // pod nominated to them, pass the filter and score alike for every pod. With ties going to the
  // lowest index, the best node of a class is its first, so one node per class (plus each node
  // with nominations) decides. Not used with seeded ties (the reservoir sample draws once per tied
  // node) or MIG profiles (per-profile usage).
  using NodeKey = std::array<std::int64_t, 10>;
  using ClassMap = std::map<NodeKey, std::set<NodeId>>;

  bool use_classes() const { return !cfg_.seeded_tie_break && !any_mig_; }

  void touch(NodeId id) {
    if (id >= dirty_flag_.size() || dirty_flag_[id]) return;
    dirty_flag_[id] = 1;
    dirty_.push_back(id);
  }

  void unplace(NodeId id) {
    auto& it = node_class_[id];
    if (it != classes_.end()) {
      it->second.erase(id);
      if (it->second.empty()) classes_.erase(it);
      it = classes_.end();
    }
    special_.erase(id);
  }

  void place(const ClusterView& view, NodeId id) {
    if (!nominated_[id].empty()) {
      special_.insert(id);
      return;
    }
    const models::Node& n = view.cluster().node(id);
    const NodeUsage& u = usage_[id];
    const NodeKey key{n.pool, n.up ? 1 : 0, n.free_gpus,  n.free_cpus,         n.free_memory_mib,
                      u.gpus, u.cpu_milli,  u.memory_mib, u.nonzero_cpu_milli, u.nonzero_memory_mib};
    auto it = classes_.try_emplace(key).first;
    it->second.insert(id);
    node_class_[id] = it;
  }

  void refresh_classes(const ClusterView& view) {
    const std::size_t n = view.cluster().nodes().size();
    if (node_class_.size() != n || up_changes_seen_ != view.cluster().up_changes()) {
      classes_.clear();
      special_.clear();
      node_class_.assign(n, classes_.end());
      for (NodeId id = 0; id < n; ++id) place(view, id);
      up_changes_seen_ = view.cluster().up_changes();
    } else {
      for (const NodeId id : dirty_) {
        unplace(id);
        place(view, id);
      }
    }
    for (const NodeId id : dirty_) dirty_flag_[id] = 0;
    dirty_.clear();
  }

  NodeId select_host_by_class(const ClusterView& view, const Job& job, JobIndex self) {
    refresh_classes(view);
    NodeId best = kNoNode;
    std::int64_t best_score = -1;
    auto consider = [&](NodeId id) {
      if (!fits(view, id, job, self)) return;
      const std::int64_t sc = total_score(view, id, job);
      if (sc > best_score || (sc == best_score && id < best)) {
        best_score = sc;
        best = id;
      }
    };
    for (const auto& [key, members] : classes_) consider(*members.begin());
    for (const NodeId id : special_) consider(id);
    return best;
  }

  // Filter + score over every node; the chosen node or kNoNode.
  NodeId select_host(const ClusterView& view, const Job& job, JobIndex self) {
    if (!gpus_free_somewhere(view, job)) return kNoNode;
    if (use_classes()) return select_host_by_class(view, job, self);
    const std::size_t n = view.cluster().nodes().size();
    scores_.assign(n, -1);
    auto eval = [&](std::size_t i) {
      const auto id = static_cast<NodeId>(i);
      if (fits(view, id, job, self)) scores_[i] = total_score(view, id, job);
    };
    if (n >= kParallelScoreNodes) {
      sim::parallel_ranges(n, 0, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) eval(i);
      });
    } else {
      for (std::size_t i = 0; i < n; ++i) eval(i);
    }
    NodeId best = kNoNode;
    std::int64_t best_score = -1;
    std::uint64_t ties = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t sc = scores_[i];
      if (sc < 0 || sc < best_score) continue;
      if (sc > best_score) {
        best_score = sc;
        best = static_cast<NodeId>(i);
        ties = 1;
      } else if (cfg_.seeded_tie_break && tie_rng_.below(++ties) == 0) {
        best = static_cast<NodeId>(i);  // reservoir sampling, as selectHost
      }
    }
    return best;
  }

  void bind(Session& s, JobIndex j, const Job& job, NodeId node, std::string_view reason) {
    const models::Placement placement{models::Slice{node, job.gpus, job.cpus, job.memory_mib}};
    const std::string why = s.start(j, placement, reason);
    HEADROOM_ASSERT(why.empty(), "kubernetes produced an invalid placement: " + why);
    clear_nomination(j);
    add_usage(placement[0], 1);
    mark_running(s, j, job, node);
    const int res = resource(job);
    if (res >= 0) {
      mig_used_[node][static_cast<std::size_t>(res)] += job.gpus;
    } else if (split(s.cluster().node(node).pool)) {
      whole_used_[node] += job.gpus;
    }
    // Time-slicing with failRequestsGreaterThanOne: the kubelet admits, then fails, a pod asking for
    // more than one replica (NVIDIA/k8s-device-plugin, internal/rm/allocate.go).
    const DevicePlugin& dp = cfg_.device_plugin;
    if (dp.fail_requests_greater_than_one && job.gpus > 1 && res < 0 &&
        s.cluster().spec().pools[s.cluster().node(node).pool].units_per_gpu > 1 &&
        !pool_mig_[s.cluster().node(node).pool]) {
      const std::string failed =
          s.fail(j,
                 "UnexpectedAdmissionError: time-sliced nvidia.com/gpu requests greater than one are refused "
                 "(failRequestsGreaterThanOne)");
      HEADROOM_ASSERT(failed.empty(), "kubernetes admission failure refused: " + failed);
    }
  }

  // The job's pods all bound and started (the first pod's node is the job's node).
  void mark_running(const ClusterView& view, JobIndex j, const Job& job, NodeId node) {
    Pod& p = pods_[j];
    p.where = Where::Running;
    p.node = node;
    ++running_;
    ++running_by_priority_[job.priority];
    group_running(view.now(), job.group, +1);
  }

  void set_nomination(JobIndex j, NodeId node, const Job& pod) {
    clear_nomination(j);
    pods_[j].nominated = node;
    pods_[j].nominated_for = {pod.gpus, pod.cpus, pod.memory_mib};
    nominated_[node].push_back(j);
    touch(node);
  }

  void clear_nomination(JobIndex j) {
    Pod& p = pods_[j];
    if (p.nominated == kNoNode) return;
    auto& v = nominated_[p.nominated];
    v.erase(std::find(v.begin(), v.end(), j));
    touch(p.nominated);
    p.nominated = kNoNode;
  }

  // Whether the pod fits some eligible node's allocatable at all (node capacities are fixed). A
  // pod that does not can neither bind nor preempt, so its cycles are cut short; the outcome is
  // the same failure.
  bool fits_somewhere(const ClusterView& view, JobIndex j, const Job& job) {
    Pod& p = pods_[j];
    if (p.fits_somewhere < 0) {
      p.fits_somewhere = 0;
      for (NodeId id = 0; id < view.cluster().nodes().size() && p.fits_somewhere == 0; ++id) {
        const models::Node& n = view.cluster().node(id);
        if (eligible(view, n.pool, job) && covers(n, {gpu_capacity(n, job), n.cpus, n.memory_mib}, job))
          p.fits_somewhere = 1;
      }
    }
    return p.fits_somewhere == 1;
  }

  // Gives a pending pod its reason unless the last one it was given says the same (`key`: a kind
  // and the numbers the text shows); the engine records only changes, so only the text is saved.
  template <typename Text>
  void say(Session& s, JobIndex j, std::array<std::int64_t, 4> key, Text text) {
    Pod& p = pods_[j];
    if (p.said[0] == key[0] && p.said[1] == key[1] && p.said[2] == key[2] && p.said[3] == key[3]) return;
    p.said = key;
    s.pending_reason(j, text());
  }

  void schedule_one(Session& s, JobIndex j, const Job& job) {
    Pod& p = pods_[j];
    if (job.gpus > 1) {
      if (p.sizes.empty()) p.sizes = pod_sizes(s, job);
      if (p.sizes.size() > 1) {
        schedule_pods(s, j, job, p.sizes);
        return;
      }
    }
    if (!fits_somewhere(s, j, job)) {
      fail(j, s.now());
      say(s, j, {0}, [] { return "unschedulable: larger than every node (no gang scheduling); stays Pending"; });
      // From now on its reason stays (nothing else names one for a pod in no group), so its cycles
      // are kept apart. Not under failRequestsGreaterThanOne, whose in-pass releases would move it
      // in the middle of a pass.
      if (job.group == models::kNone && !cfg_.device_plugin.fail_requests_greater_than_one) {
        hopeless_.add(pods_, j);  // its unschedulable entry goes stale
      }
      return;
    }
    if (p.nominated != kNoNode && fits(s, p.nominated, job, j)) {
      bind(s, j, job, p.nominated, "kubernetes: bound to its nominated node");
      return;
    }
    if (const NodeId node = select_host(s, job, j); node != kNoNode) {
      bind(s, j, job, node, "kubernetes: highest-scoring feasible node");
      return;
    }
    const bool nominated = preempt(s, j, job);
    fail(j, s.now(), nominated ? std::nullopt : batch_key(s, j, job, 3));
    const auto at = static_cast<std::int64_t>(p.nominated);
    if (nominated) {
      say(s, j, {1, at}, [&] {
        return "preemption: nominated to node " + std::to_string(at) + ", waiting for its victims to terminate";
      });
    } else if (p.nominated != kNoNode) {
      say(s, j, {2, at},
          [&] { return "unschedulable: waiting for a terminating pod on its nominated node " + std::to_string(at); });
    } else {
      say(s, j, {3}, [] { return "unschedulable: no node has enough free nvidia.com/gpu, cpu or memory"; });
    }
  }

  // A job of several pods (an Indexed Job / PyTorchJob with one worker per node): its pending
  // pods share one queue entry, as they share a priority and a creation time, and are tried one
  // after the other. Each pod that fits binds at once and holds its node's GPUs while the others
  // wait (no gang scheduling); the job's work begins when its last pod binds. A pod that fits
  // nowhere may preempt (DefaultPreemption, for that pod) and the entry backs off as one pod does.
  void schedule_pods(Session& s, JobIndex j, const Job& job, const std::vector<std::int32_t>& sizes) {
    Pod& p = pods_[j];
    const std::size_t n = sizes.size();
    if (!fits_somewhere(s, j, pod_of(job, sizes, 0))) {
      fail(j, s.now());
      say(s, j, {4}, [] { return "unschedulable: a pod of this job is larger than every node; stays Pending"; });
      return;
    }
    while (p.pods.size() < n) {
      const std::size_t k = p.pods.size();
      const Job pod = pod_of(job, sizes, k);
      NodeId node = kNoNode;
      if (p.nominated != kNoNode && fits(s, p.nominated, pod, j)) {
        node = p.nominated;
      } else {
        node = select_host(s, pod, j);
      }
      if (node == kNoNode) break;
      const models::Slice slice{node, pod.gpus, pod.cpus, pod.memory_mib};
      clear_nomination(j);
      if (k + 1 == n) {
        const std::string why =
            s.start(j, {slice}, "kubernetes: last pod bound (" + std::to_string(n) + " pods, no gang scheduling)");
        HEADROOM_ASSERT(why.empty(), "kubernetes produced an invalid placement: " + why);
        p.pods.push_back(slice);
        add_usage(slice, 1);
        mark_running(s, j, job, p.pods.front().node);
        return;
      }
      const std::string why = s.bind(j, slice, "kubernetes: pod bound, no gang scheduling");
      HEADROOM_ASSERT(why.empty(), "kubernetes bound a pod the engine refused: " + why);
      p.pods.push_back(slice);
      add_usage(slice, 1);
    }
    const Job pod = pod_of(job, sizes, p.pods.size());
    if (cfg_.coscheduling) {
      // Coscheduling (kubernetes-sigs/scheduler-plugins pkg/coscheduling): the PodGroup's
      // minMember is every pod of the job; a member that cannot be placed makes PostFilter reject
      // the group's waiting pods, so none stays bound and the group retries whole.
      const std::size_t had = p.pods.size();
      if (had > 0) {
        const std::string why = s.unbind(j, "coscheduling: PodGroup incomplete, waiting pods rejected");
        HEADROOM_ASSERT(why.empty(), "kubernetes unbind refused: " + why);
        for (const models::Slice& sl : p.pods) add_usage(sl, -1);
        p.pods.clear();
      }
      fail(j, s.now());
      say(s, j, {5, static_cast<std::int64_t>(n), static_cast<std::int64_t>(had)}, [&] {
        return "gang: coscheduling PodGroup needs all " + std::to_string(n) + " pods (minMember " + std::to_string(n) +
               "), only " + std::to_string(had) + " fit now";
      });
      return;
    }
    const bool nominated = preempt(s, j, pod);
    fail(j, s.now(), nominated ? std::nullopt : batch_key(s, j, pod, p.pods.empty() ? 8 : 7));
    // The job's pod sizes are fixed, so how many pods are bound says what they hold and what the
    // next one asks for.
    const auto k = static_cast<std::int64_t>(p.pods.size());
    auto bound = [&] { return std::to_string(k) + " of " + std::to_string(n) + " pods bound"; };
    if (nominated) {
      const auto at = static_cast<std::int64_t>(p.nominated);
      say(s, j, {6, k, at}, [&] {
        return "preemption: " + bound() + "; the next pod is nominated to node " + std::to_string(at) +
               ", waiting for its victims to terminate";
      });
    } else if (k > 0) {
      say(s, j, {7, k}, [&] {
        std::int64_t held = 0;
        for (const auto& sl : p.pods) held += sl.gpus;
        return "gang: partially placed, " + bound() + " holding " + std::to_string(held) + " GPUs idle; no node has " +
               std::to_string(pod.gpus) + " free nvidia.com/gpu for the next (no gang scheduling)";
      });
    } else {
      say(s, j, {8}, [&] {
        return "unschedulable: no node has " + std::to_string(pod.gpus) +
               " free nvidia.com/gpu, cpu or memory for its first pod (" + std::to_string(n) + " pods)";
      });
    }
  }

  // SelectVictimsOnNode.
  std::optional<Candidate> select_victims(const ClusterView& view, JobIndex j, const Job& job, NodeId id) const {
    const models::Node& n = view.cluster().node(id);
    const Amount r = reserved(id, job.priority, j);
    Amount free{gpu_free(id, n, job) - r.gpus, n.free_cpus - r.cpus, n.free_memory_mib - r.memory_mib};
    const int res = resource(job);
    std::vector<JobIndex> potential;
    // A victim gives back what its pods hold on this node. Pods bound to a job still waiting for
    // its other pods are not considered (a simplification: kube-scheduler would weigh them too).
    auto held_here = [&](JobIndex k) {
      Amount a;
      for (const auto& sl : view.placement(k)) {
        if (sl.node != id) continue;
        a.gpus += sl.gpus;
        a.cpus += sl.cpus;
        a.memory_mib += sl.memory_mib;
      }
      return a;
    };
    for (JobIndex k : view.jobs_on_node(id)) {
      if (priority(k) >= job.priority || view.state(k) != JobState::Running) continue;
      potential.push_back(k);
      const Amount h = held_here(k);
      if (resource((*jobs_)[k]) == res) free.gpus += h.gpus;
      free.cpus += h.cpus;
      free.memory_mib += h.memory_mib;
    }
    if (!covers(n, free, job)) return std::nullopt;
    std::sort(potential.begin(), potential.end(), [&](JobIndex a, JobIndex b) {
      if (priority(a) != priority(b)) return priority(a) > priority(b);
      if (view.run_start(a) != view.run_start(b)) return view.run_start(a) < view.run_start(b);
      return a < b;
    });
    Candidate c{id, {}};
    for (JobIndex k : potential) {
      const Amount h = held_here(k);
      const std::int64_t kg = resource((*jobs_)[k]) == res ? h.gpus : 0;
      const Amount back{free.gpus - kg, free.cpus - h.cpus, free.memory_mib - h.memory_mib};
      if (covers(n, back, job)) {
        free = back;  // reprieved
      } else {
        c.victims.push_back(k);
      }
    }
    return c;
  }

  // DefaultPreemption's PostFilter. True when the pod was nominated to a node.
  bool preempt(Session& s, JobIndex j, const Job& job) {
    Pod& p = pods_[j];
    if (job.preempt_never) return false;
    if (running_by_priority_.empty() || running_by_priority_.begin()->first >= job.priority) {
      // No running pod has a lower priority: no node can offer victims (SelectVictimsOnNode finds
      // none, and without them the pod fits nowhere, or it would have bound).
      clear_nomination(j);
      return false;
    }
    if (p.nominated != kNoNode && !unresolvable(s, p.nominated, job)) {
      for (JobIndex k : s.jobs_on_node(p.nominated))
        if (priority(k) < job.priority && s.terminating(k)) return false;  // keeps its nomination
    }
    std::vector<NodeId> potential;
    for (NodeId id = 0; id < s.cluster().nodes().size(); ++id)
      if (!unresolvable(s, id, job)) potential.push_back(id);
    std::vector<Candidate> candidates;
    if (!potential.empty()) {
      const std::size_t n = potential.size();
      const std::size_t want = std::min(n, std::max<std::size_t>(n * 10 / 100, 100));
      const std::size_t offset = cfg_.seeded_tie_break ? offset_rng_.below(n) : 0;
      for (std::size_t i = 0; i < n && candidates.size() < want; ++i)
        if (auto c = select_victims(s, j, job, potential[(offset + i) % n])) candidates.push_back(std::move(*c));
    }
    if (candidates.empty()) {
      clear_nomination(j);
      return false;
    }
    const Candidate& chosen = pick_one(s, candidates);
    for (JobIndex v : chosen.victims) {
      if (s.terminating(v)) continue;
      const std::string why = s.preempt(v, PreemptMode::Requeue, cfg_.termination_grace_period, j,
                                        "kubernetes: preempted by a higher-priority pod (DefaultPreemption)");
      HEADROOM_ASSERT(why.empty(), "kubernetes preemption refused: " + why);
    }
    // Lower-priority pods nominated to the node lose their nomination.
    const std::vector<JobIndex> others = nominated_[chosen.node];
    for (JobIndex k : others)
      if (k != j && priority(k) < job.priority) clear_nomination(k);
    set_nomination(j, chosen.node, job);
    return true;
  }

  // pickOneNodeForPreemption without PDBs.
  const Candidate& pick_one(const ClusterView& view, const std::vector<Candidate>& cs) const {
    struct Key {
      std::int64_t highest, sum, count, earliest;
    };
    auto key = [&](const Candidate& c) {
      Key k{std::numeric_limits<std::int64_t>::min(), 0, static_cast<std::int64_t>(c.victims.size()),
            std::numeric_limits<std::int64_t>::max()};
      if (c.victims.empty()) return k;
      k.highest = priority(c.victims.front());
      for (JobIndex v : c.victims) {
        k.sum += std::int64_t{priority(v)} + (std::int64_t{1} << 31);
        if (priority(v) == k.highest) k.earliest = std::min(k.earliest, view.run_start(v));
      }
      return k;
    };
    std::size_t best = 0;
    Key bk = key(cs[0]);
    for (std::size_t i = 1; i < cs.size(); ++i) {
      const Key k = key(cs[i]);
      if (std::tie(k.highest, k.sum, k.count) < std::tie(bk.highest, bk.sum, bk.count) ||
          (std::tie(k.highest, k.sum, k.count) == std::tie(bk.highest, bk.sum, bk.count) && k.earliest > bk.earliest)) {
        best = i;
        bk = k;
      }
    }
    return cs[best];
  }

  Config cfg_;
  sim::RngStream tie_rng_, offset_rng_;
  const std::vector<Job>* jobs_ = nullptr;
  std::vector<Pod> pods_;
  std::vector<NodeUsage> usage_;
  std::vector<std::vector<JobIndex>> nominated_;
  std::vector<Config::Quota> quota_, quota_used_;
  std::vector<JobIndex> quota_reasons_;
  std::vector<std::int64_t> scores_;
  static constexpr int kGpuResource = -1;
  struct Group {
    std::vector<JobIndex> members;
    std::int32_t live = 0;     // members not ended
    std::int32_t running = 0;  // members running
    Tick partial_since = -1;
  };
  std::vector<Group> groups_;
  std::set<models::GroupId> partial_;                   // groups partially placed
  std::vector<std::string> profiles_;                   // MIG profiles in the configuration, sorted
  std::vector<std::uint8_t> pool_mig_;                  // pool has a MIG geometry in force
  std::vector<std::vector<std::int64_t>> pool_slices_;  // pool -> slices per node, per profile
  std::vector<std::vector<std::int64_t>> mig_used_;     // node -> slices bound, per profile
  std::vector<std::int64_t> pool_whole_;                // pool with MIG -> GPUs per node not in MIG mode
  std::vector<std::int64_t> whole_used_;                // node -> nvidia.com/gpu bound (mixed, MIG pools)
  bool any_mig_ = false;                                // some pool has GPUs in MIG mode
  std::vector<int> res_by_type_;                        // GPU type index -> resource
  std::int64_t running_ = 0;
  std::map<std::int32_t, std::int64_t> running_by_priority_;  // running pods per priority
  QueueHeap active_;                                          // by (-priority, timestamp, index)
  QueueHeap backoff_;                                         // by (backoff end, index)
  TimeQueue unschedulable_;                                   // by failure time
  // The unschedulable pods that fit some node when it is empty: only they need the 5-minute flush.
  TimeQueue unschedulable_fitting_;
  std::vector<FailedBatch> batches_;
  std::vector<std::uint32_t> free_batches_;
  std::vector<std::pair<BatchKey, std::uint32_t>> forming_;  // the batches failing at forming_at_
  Tick forming_at_ = -1;
  bool batching_ = false;  // see ensure()
  std::set<std::pair<Tick, JobIndex>> quota_wait_;
  HopelessPods hopeless_;
  // Node classes for select_host (see use_classes); nodes changed since the last refresh.
  ClassMap classes_;
  std::vector<ClassMap::iterator> node_class_;
  std::set<NodeId> special_;  // nodes with nominated pods, scored one by one
  std::vector<NodeId> dirty_;
  std::vector<std::uint8_t> dirty_flag_;
  std::uint64_t up_changes_seen_ = 0;
  std::uint64_t up_changes_moved_ = 0;  // up_changes() when unschedulable pods were last moved for it
};

}  // namespace

void add_slice_usage(NodeUsage& u, const models::Slice& sl, int sign) {
  u.gpus += sign * std::int64_t{sl.gpus};
  u.cpu_milli += sign * std::int64_t{sl.cpus} * 1000;
  u.memory_mib += sign * sl.memory_mib;
  u.nonzero_cpu_milli += sign * (sl.cpus > 0 ? std::int64_t{sl.cpus} * 1000 : kDefaultMilliCpuRequest);
  u.nonzero_memory_mib += sign * (sl.memory_mib > 0 ? sl.memory_mib : kDefaultMemoryRequestMib);
}

NodeScores score_node(const ScoringStrategy& strategy, const models::Node& node, const NodeUsage& usage,
                      const models::Job& pod) {
  return {fit_score(strategy, node, usage, pod), balanced_score(node, usage, pod)};
}

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kKeys = {"scoringStrategy.type",
                                                 "scoringStrategy.resources.gpu",
                                                 "scoringStrategy.resources.cpu",
                                                 "scoringStrategy.resources.memory",
                                                 "scoringStrategy.shape",
                                                 "weights.NodeResourcesFit",
                                                 "weights.NodeResourcesBalancedAllocation",
                                                 "termination_grace_period",
                                                 "podInitialBackoffSeconds",
                                                 "podMaxBackoffSeconds",
                                                 "podMaxInUnschedulablePodsDuration",
                                                 "tie_break",
                                                 "quota.<tenant>.gpu",
                                                 "quota.<tenant>.cpu",
                                                 "quota.<tenant>.memory",
                                                 "quota.<tenant>.pods",
                                                 "quota_retry",
                                                 "partial_placement_threshold",
                                                 "coscheduling",
                                                 "devicePlugin.migStrategy",
                                                 "devicePlugin.sharing.timeSlicing.replicas",
                                                 "devicePlugin.sharing.timeSlicing.failRequestsGreaterThanOne",
                                                 "devicePlugin.migDevices.<pool>"};
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse_into);
}

Config parse_config(const PolicyParams& params) { return parse_params_or_throw<Config>(params, parse_into); }

std::unique_ptr<Policy> make_policy(Config config, std::uint64_t seed) {
  return std::make_unique<KubernetesPolicy>(std::move(config), seed);
}

std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed) {
  return make_policy(parse_config(params), seed);
}

}  // namespace headroom::policies::k8s
