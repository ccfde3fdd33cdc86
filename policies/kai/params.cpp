// Policy-block parameters of the kai policy (Queue CRD and scheduler option names).
#include "policies/common/params.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "policies/common/param_text.hpp"
#include "policies/kai/kai.hpp"

namespace headroom::policies::kai {

namespace {

constexpr std::string_view kResourceNames[kResources] = {"gpu", "cpu", "memory"};
constexpr std::string_view kQueueFields[] = {"parentQueue", "parent", "priority", "preemptMinRuntime",
                                             "reclaimMinRuntime"};
constexpr std::string_view kResourceFields[] = {"quota", "overQuotaWeight", "limit"};

// "queues.<name>.<rest>" -> name and rest.
bool split_queue_key(std::string_view key, std::string& name, std::string& rest) {
  constexpr std::string_view kPrefix = "queues.";
  if (!key.starts_with(kPrefix)) return false;
  key.remove_prefix(kPrefix.size());
  const auto dot = key.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  name = std::string(key.substr(0, dot));
  rest = std::string(key.substr(dot + 1));
  return true;
}

std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& out) {
  std::vector<sim::InputError> errors;
  auto err = [&](const std::string& key, const ParamValue& v, const std::string& msg) {
    errors.emplace_back(v.file, v.line, v.column, "policy." + key, msg);
  };
  auto duration = [&](const std::string& key, const ParamValue& v, bool positive, Tick& dst) {
    const auto d = sim::parse_duration(v.text);
    if (!d || *d < 0 || (positive && *d == 0)) {
      err(key, v,
          std::string("expected a ") + (positive ? "positive " : "") + "duration such as 30s, 500ms or 5m, got " +
              quoted(v.text));
      return;
    }
    dst = *d;
  };
  auto placement = [&](const std::string& key, const ParamValue& v, PlacementStrategy& dst) {
    if (v.text == "binpack") {
      dst = PlacementStrategy::Binpack;
    } else if (v.text == "spread") {
      dst = PlacementStrategy::Spread;
    } else {
      err(key, v, "unknown placement strategy " + quoted(v.text) + "; expected: binpack, spread");
    }
  };

  // Queues, in the order they are written (creation order).
  struct Seen {
    int line = 0, column = 0;
    std::size_t index = 0;
  };
  std::map<std::string, Seen> first;
  for (const auto& [key, v] : params) {
    std::string name, rest;
    if (!split_queue_key(key, name, rest)) continue;
    auto [it, fresh] = first.try_emplace(name, Seen{v.line, v.column, 0});
    if (!fresh && std::pair(v.line, v.column) < std::pair(it->second.line, it->second.column))
      it->second = Seen{v.line, v.column, 0};
  }
  std::vector<std::pair<std::string, Seen>> order(first.begin(), first.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::pair(a.second.line, a.second.column) < std::pair(b.second.line, b.second.column);
  });
  std::map<std::string, std::size_t> index;
  for (const auto& [name, seen] : order) {
    QueueConfig q;
    q.name = name;
    q.resources[1] = q.resources[2] = QueueResource{-1, 1, -1};  // cpu and memory: unlimited by default
    index[name] = out.queues.size();
    out.queues.push_back(std::move(q));
  }
  std::map<std::string, const ParamValue*> parent_at;

  for (const auto& [key, v] : params) {
    std::string name, rest;
    if (split_queue_key(key, name, rest)) {
      QueueConfig& q = out.queues[index.at(name)];
      if (rest == "parentQueue" || rest == "parent") {
        q.parent = v.text;
        parent_at[name] = &v;
      } else if (rest == "priority") {
        if (auto n = parse_int(v.text); n && *n >= -1'000'000'000 && *n <= 1'000'000'000) {
          q.priority = *n;
        } else {
          err(key, v, "expected an integer queue priority, got " + quoted(v.text));
        }
      } else if (rest == "preemptMinRuntime") {
        duration(key, v, false, q.preempt_min_runtime);
      } else if (rest == "reclaimMinRuntime") {
        duration(key, v, false, q.reclaim_min_runtime);
      } else if (rest.starts_with("resources.")) {
        const std::string_view tail = std::string_view(rest).substr(std::string_view("resources.").size());
        const auto dot = tail.find('.');
        int r = -1;
        for (int i = 0; i < kResources; ++i)
          if (dot != std::string_view::npos && tail.substr(0, dot) == kResourceNames[i]) r = i;
        const std::string_view field = dot == std::string_view::npos ? tail : tail.substr(dot + 1);
        if (r < 0) continue;  // the registry reports the unknown key
        QueueResource& res = q.resources[static_cast<std::size_t>(r)];
        if (field == "overQuotaWeight") {
          if (auto d = parse_number(v.text); d && *d >= 0 && *d <= 1e9) {
            res.over_quota_weight = *d;
          } else {
            err(key, v, "expected a number >= 0, got " + quoted(v.text));
          }
        } else if (field == "quota" || field == "limit") {
          if (auto n = parse_int(v.text); n && *n >= -1 && *n <= std::int64_t{1} << 50) {
            (field == "quota" ? res.quota : res.limit) = *n;
          } else {
            err(key, v, "expected an integer >= -1 (-1 = unlimited), got " + quoted(v.text));
          }
        }
      }
    } else if (key == "placementStrategy.gpu") {
      placement(key, v, out.gpu_placement);
    } else if (key == "placementStrategy.cpu") {
      placement(key, v, out.cpu_placement);
    } else if (key == "schedulePeriod") {
      duration(key, v, true, out.schedule_period);
    } else if (key == "kValue") {
      if (auto d = parse_number(v.text); d && *d >= 0 && *d <= 1000) {
        out.k_value = *d;
      } else {
        err(key, v, "expected a number from 0 to 1000, got " + quoted(v.text));
      }
    } else if (key == "reclaimerUtilizationMultiplier") {
      if (auto d = parse_number(v.text); d && *d >= 1 && *d <= 1000) {
        out.reclaimer_utilization_multiplier = *d;
      } else {
        err(key, v, "expected a number from 1 to 1000, got " + quoted(v.text));
      }
    } else if (key == "default-staleness-grace-period") {
      duration(key, v, false, out.staleness_grace);
    } else if (key == "max-consolidation-preemptees") {
      if (auto n = parse_int(v.text); n && *n >= 0 && *n <= 1000) {
        out.max_consolidation_preemptees = static_cast<int>(*n);
      } else {
        err(key, v, "expected an integer from 0 to 1000, got " + quoted(v.text));
      }
    } else if (key == "terminationGracePeriod") {
      duration(key, v, false, out.termination_grace);
    } else if (key == "preemptMinRuntime") {
      duration(key, v, false, out.preempt_min_runtime);
    } else if (key == "reclaimMinRuntime") {
      duration(key, v, false, out.reclaim_min_runtime);
    } else if (key == "timeBasedFairshare") {
      if (v.text == "true" || v.text == "false") {
        out.time_based_fairshare = v.text == "true";
      } else {
        err(key, v, "expected true or false, got " + quoted(v.text));
      }
    } else if (key == "gpuSharing") {
      if (v.text == "true" || v.text == "false") {
        out.gpu_sharing = v.text == "true";
      } else {
        err(key, v, "expected true or false, got " + quoted(v.text));
      }
    } else if (key == "usageParams.halfLifePeriod") {
      duration(key, v, false, out.half_life);
    } else if (key == "topologyConstraint.requiredTopologyLevel" ||
               key == "topologyConstraint.preferredTopologyLevel") {
      const auto n = parse_int(v.text);
      if (!n || *n < 1 || *n > 64) {
        err(key, v, "expected a switch level of cluster.topology from 1 (leaf) to 64, got " + quoted(v.text));
        continue;
      }
      (key.ends_with("requiredTopologyLevel") ? out.topology.required : out.topology.preferred) =
          static_cast<std::int32_t>(*n);
    } else if (key == "topologyConstraint.kinds") {
      std::vector<std::string> unknown;
      parse_job_kinds(v.text, out.topology.kinds, unknown);
      for (const auto& u : unknown)
        err(key, v, "unknown job kind " + quoted(u) + "; expected: train, inference, interactive, batch");
    } else if (key.starts_with("priorityClassName.")) {
      const std::string kind = key.substr(std::string_view("priorityClassName.").size());
      models::JobKind k{};
      if (!models::parse_job_kind(kind, k)) {
        err(key, v, "unknown job kind " + quoted(kind) + "; expected: train, inference, interactive, batch");
        continue;
      }
      std::int32_t prio = -1;
      if (v.text == "train") prio = 50;
      if (v.text == "build-preemptible") prio = 75;
      if (v.text == "build") prio = 100;
      if (v.text == "inference") prio = 125;
      if (prio < 0) {
        err(key, v,
            "unknown priority class " + quoted(v.text) + "; expected: train, build-preemptible, build, inference");
        continue;
      }
      out.kind_priority[static_cast<std::size_t>(k)] = prio;
    }
  }
  // A preferred level inside the required one (KAI: the preferred level must be at or below it).
  if (out.topology.required > 0 && out.topology.preferred > out.topology.required) {
    const auto& v = params.at("topologyConstraint.preferredTopologyLevel");
    err("topologyConstraint.preferredTopologyLevel", v,
        "the preferred level " + v.text + " is above the required level " + std::to_string(out.topology.required));
  }
  if (!out.topology.active() && params.count("topologyConstraint.kinds") != 0)
    err("topologyConstraint.kinds", params.at("topologyConstraint.kinds"),
        "give requiredTopologyLevel or preferredTopologyLevel");
  // Parents must be declared queues, without cycles.
  for (const auto& [name, at] : parent_at) {
    const std::string key =
        "queues." + name + (params.count("queues." + name + ".parentQueue") ? ".parentQueue" : ".parent");
    if (!index.count(at->text)) {
      err(key, *at, "parent queue " + quoted(at->text) + " is not declared under queues");
      continue;
    }
    std::set<std::string> seen{name};
    std::string p = at->text;
    while (!p.empty()) {
      if (!seen.insert(p).second) {
        err(key, *at, "queue " + quoted(name) + " is its own ancestor");
        break;
      }
      const auto it = index.find(p);
      p = it == index.end() ? "" : out.queues[it->second].parent;
    }
  }
  return errors;
}

}  // namespace

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (auto f : kQueueFields) keys.push_back("queues.<queue>." + std::string(f));
    for (auto r : kResourceNames)
      for (auto f : kResourceFields)
        keys.push_back("queues.<queue>.resources." + std::string(r) + "." + std::string(f));
    for (const char* k :
         {"placementStrategy.gpu", "placementStrategy.cpu", "schedulePeriod", "kValue",
          "reclaimerUtilizationMultiplier", "default-staleness-grace-period", "max-consolidation-preemptees",
          "terminationGracePeriod", "preemptMinRuntime", "reclaimMinRuntime", "timeBasedFairshare", "gpuSharing",
          "usageParams.halfLifePeriod", "priorityClassName.<kind>", "topologyConstraint.requiredTopologyLevel",
          "topologyConstraint.preferredTopologyLevel", "topologyConstraint.kinds"})
      keys.emplace_back(k);
    return keys;
  }();
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse_into);
}

Config parse_config(const PolicyParams& params) { return parse_params_or_throw<Config>(params, parse_into); }

}  // namespace headroom::policies::kai
