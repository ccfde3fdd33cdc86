// Policy-block parameters of the kai policy (Queue CRD and scheduler option names).
#include "policies/common/params.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>

#include "policies/common/param_table.hpp"
#include "policies/common/param_text.hpp"
#include "policies/kai/kai.hpp"

namespace headroom::policies::kai {

namespace {

constexpr std::string_view kResourceNames[kResources] = {"gpu", "cpu", "memory"};

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

// The queues, in the order they are written (creation order): the name of every "queues.<name>."
// key (up to its first dot, whatever follows), placed by its first line and column. Returns each
// name's position in out.queues.
std::map<std::string, std::size_t> create_queues(const PolicyParams& params, Config& out) {
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
  return index;
}

// The parse state the key table's rows fill: the configuration, the errors found (each located
// at its value) and the typed readers the rows share.
struct Reader {
  Config& out;
  std::vector<sim::InputError>& errors;
  std::map<std::string, std::size_t> index;            // queue name -> position in out.queues
  std::map<std::string, const ParamValue*> parent_at;  // queue name -> its parentQueue / parent value

  void err(const std::string& key, const ParamValue& v, const std::string& msg) { param_error(errors, key, v, msg); }
  void duration(const std::string& key, const ParamValue& v, bool positive, Tick& dst) {
    read_duration(errors, key, v, positive, dst);
  }
  // An integer from lo to hi; `what` names it in the error ("expected <what>, got ...").
  template <typename Int>
  void integer(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::string_view what,
               Int& dst) {
    if (auto n = parse_int(v.text); n && *n >= lo && *n <= hi) {
      dst = static_cast<Int>(*n);
    } else {
      err(key, v, "expected " + std::string(what) + ", got " + quoted(v.text));
    }
  }
  void number(const std::string& key, const ParamValue& v, double lo, double hi, std::string_view what, double& dst) {
    if (auto d = parse_number(v.text); d && *d >= lo && *d <= hi) {
      dst = *d;
    } else {
      err(key, v, "expected " + std::string(what) + ", got " + quoted(v.text));
    }
  }
  void boolean(const std::string& key, const ParamValue& v, bool& dst) { read_boolean(errors, key, v, v.text, dst); }
  void placement(const std::string& key, const ParamValue& v, PlacementStrategy& dst) {
    if (v.text == "binpack") {
      dst = PlacementStrategy::Binpack;
    } else if (v.text == "spread") {
      dst = PlacementStrategy::Spread;
    } else {
      err(key, v, "unknown placement strategy " + quoted(v.text) + "; expected: binpack, spread");
    }
  }
  void topology_level(const std::string& key, const ParamValue& v, std::int32_t& dst) {
    integer(key, v, 1, 64, "a switch level of cluster.topology from 1 (leaf) to 64", dst);
  }
  // The queue a "queues.<queue>.<field>" key sets. Null when the key's <queue> text holds a dot:
  // queues are named up to the first dot (create_queues), so "queues.a.b.priority" names queue
  // "a" (created, with its defaults) and a field "b.priority" that sets nothing.
  QueueConfig* queue(const std::string& key, std::string_view field) {
    std::string name, rest;
    if (!split_queue_key(key, name, rest) || rest != field) return nullptr;
    return &out.queues[index.at(name)];
  }
  QueueResource* resource(const std::string& key, std::size_t r, std::string_view field) {
    QueueConfig* q = queue(key, "resources." + std::string(kResourceNames[r]) + "." + std::string(field));
    return q == nullptr ? nullptr : &q->resources[r];
  }
};

void read_parent(Reader& r, const std::string& key, const ParamValue& v, std::string_view field) {
  if (QueueConfig* q = r.queue(key, field)) {
    q->parent = v.text;
    r.parent_at[q->name] = &v;
  }
}

template <std::size_t R>
void read_quota(Reader& r, const std::string& key, const ParamValue& v) {
  if (QueueResource* res = r.resource(key, R, "quota"))
    r.integer(key, v, -1, std::int64_t{1} << 50, "an integer >= -1 (-1 = unlimited)", res->quota);
}
template <std::size_t R>
void read_over_quota_weight(Reader& r, const std::string& key, const ParamValue& v) {
  if (QueueResource* res = r.resource(key, R, "overQuotaWeight"))
    r.number(key, v, 0, 1e9, "a number >= 0", res->over_quota_weight);
}
template <std::size_t R>
void read_limit(Reader& r, const std::string& key, const ParamValue& v) {
  if (QueueResource* res = r.resource(key, R, "limit"))
    r.integer(key, v, -1, std::int64_t{1} << 50, "an integer >= -1 (-1 = unlimited)", res->limit);
}

void read_priority_class(Reader& r, const std::string& key, const ParamValue& v) {
  const std::string kind(key_placeholder("priorityClassName.<kind>", key));
  models::JobKind k{};
  if (!models::parse_job_kind(kind, k)) {
    r.err(key, v, "unknown job kind " + quoted(kind) + "; expected: train, inference, interactive, batch");
    return;
  }
  std::int32_t prio = -1;
  if (v.text == "train") prio = 50;
  if (v.text == "build-preemptible") prio = 75;
  if (v.text == "build") prio = 100;
  if (v.text == "inference") prio = 125;
  if (prio < 0) {
    r.err(key, v,
          "unknown priority class " + quoted(v.text) + "; expected: train, build-preemptible, build, inference");
    return;
  }
  r.out.kind_priority[static_cast<std::size_t>(k)] = prio;
}

using Key = ParamKey<Reader>;

// The kai policy's keys, in the catalogue's order (param_keys), each with its reader. The last
// row is no catalogue key: "priorityClassName." names no kind (the registry reports the key
// unknown), and the parser reports the empty kind as well, as it always has.
constexpr Key kKeys[] = {
    {"queues.<queue>.parentQueue",
     [](Reader& r, const std::string& key, const ParamValue& v) { read_parent(r, key, v, "parentQueue"); }},
    {"queues.<queue>.parent",
     [](Reader& r, const std::string& key, const ParamValue& v) { read_parent(r, key, v, "parent"); }},
    {"queues.<queue>.priority",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (QueueConfig* q = r.queue(key, "priority"))
         r.integer(key, v, -1'000'000'000, 1'000'000'000, "an integer queue priority", q->priority);
     }},
    {"queues.<queue>.preemptMinRuntime",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (QueueConfig* q = r.queue(key, "preemptMinRuntime")) r.duration(key, v, false, q->preempt_min_runtime);
     }},
    {"queues.<queue>.reclaimMinRuntime",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (QueueConfig* q = r.queue(key, "reclaimMinRuntime")) r.duration(key, v, false, q->reclaim_min_runtime);
     }},
    {"queues.<queue>.resources.gpu.quota", read_quota<0>},
    {"queues.<queue>.resources.gpu.overQuotaWeight", read_over_quota_weight<0>},
    {"queues.<queue>.resources.gpu.limit", read_limit<0>},
    {"queues.<queue>.resources.cpu.quota", read_quota<1>},
    {"queues.<queue>.resources.cpu.overQuotaWeight", read_over_quota_weight<1>},
    {"queues.<queue>.resources.cpu.limit", read_limit<1>},
    {"queues.<queue>.resources.memory.quota", read_quota<2>},
    {"queues.<queue>.resources.memory.overQuotaWeight", read_over_quota_weight<2>},
    {"queues.<queue>.resources.memory.limit", read_limit<2>},
    {"placementStrategy.gpu",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.placement(key, v, r.out.gpu_placement); }},
    {"placementStrategy.cpu",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.placement(key, v, r.out.cpu_placement); }},
    {"schedulePeriod",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.duration(key, v, true, r.out.schedule_period); }},
    {"kValue", [](Reader& r, const std::string& key,
                  const ParamValue& v) { r.number(key, v, 0, 1000, "a number from 0 to 1000", r.out.k_value); }},
    {"reclaimerUtilizationMultiplier",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       r.number(key, v, 1, 1000, "a number from 1 to 1000", r.out.reclaimer_utilization_multiplier);
     }},
    {"default-staleness-grace-period",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.duration(key, v, false, r.out.staleness_grace); }},
    {"max-consolidation-preemptees",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       r.integer(key, v, 0, 1000, "an integer from 0 to 1000", r.out.max_consolidation_preemptees);
     }},
    {"terminationGracePeriod", [](Reader& r, const std::string& key,
                                  const ParamValue& v) { r.duration(key, v, false, r.out.termination_grace); }},
    {"preemptMinRuntime", [](Reader& r, const std::string& key,
                             const ParamValue& v) { r.duration(key, v, false, r.out.preempt_min_runtime); }},
    {"reclaimMinRuntime", [](Reader& r, const std::string& key,
                             const ParamValue& v) { r.duration(key, v, false, r.out.reclaim_min_runtime); }},
    {"timeBasedFairshare",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.boolean(key, v, r.out.time_based_fairshare); }},
    {"gpuSharing",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.boolean(key, v, r.out.gpu_sharing); }},
    {"usageParams.halfLifePeriod",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.duration(key, v, false, r.out.half_life); }},
    {"priorityClassName.<kind>", read_priority_class},
    {"topologyConstraint.requiredTopologyLevel",
     [](Reader& r, const std::string& key, const ParamValue& v) { r.topology_level(key, v, r.out.topology.required); }},
    {"topologyConstraint.preferredTopologyLevel",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       r.topology_level(key, v, r.out.topology.preferred);
     }},
    {"topologyConstraint.kinds",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       std::vector<std::string> unknown;
       parse_job_kinds(v.text, r.out.topology.kinds, unknown);
       for (const auto& u : unknown)
         r.err(key, v, "unknown job kind " + quoted(u) + "; expected: train, inference, interactive, batch");
     }},
    {"priorityClassName.", read_priority_class},
};
constexpr std::size_t kCatalogued = std::size(kKeys) - 1;

std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& out) {
  std::vector<sim::InputError> errors;
  Reader r{out, errors, create_queues(params, out), {}};
  read_params<Reader>(r, params, kKeys);

  // Checks across keys, once every key is read.
  // A preferred level inside the required one (KAI: the preferred level must be at or below it).
  if (out.topology.required > 0 && out.topology.preferred > out.topology.required) {
    const auto& v = params.at("topologyConstraint.preferredTopologyLevel");
    r.err("topologyConstraint.preferredTopologyLevel", v,
          "the preferred level " + v.text + " is above the required level " + std::to_string(out.topology.required));
  }
  if (!out.topology.active() && params.count("topologyConstraint.kinds") != 0)
    r.err("topologyConstraint.kinds", params.at("topologyConstraint.kinds"),
          "give requiredTopologyLevel or preferredTopologyLevel");
  // Parents must be declared queues, without cycles.
  for (const auto& [name, at] : r.parent_at) {
    const std::string key =
        "queues." + name + (params.count("queues." + name + ".parentQueue") ? ".parentQueue" : ".parent");
    if (!r.index.count(at->text)) {
      r.err(key, *at, "parent queue " + quoted(at->text) + " is not declared under queues");
      continue;
    }
    std::set<std::string> seen{name};
    std::string p = at->text;
    while (!p.empty()) {
      if (!seen.insert(p).second) {
        r.err(key, *at, "queue " + quoted(name) + " is its own ancestor");
        break;
      }
      const auto it = r.index.find(p);
      p = it == r.index.end() ? "" : out.queues[it->second].parent;
    }
  }
  return errors;
}

}  // namespace

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kPatterns = param_patterns<Reader>(std::span(kKeys).first(kCatalogued));
  return kPatterns;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse_into);
}

Config parse_config(const PolicyParams& params) { return parse_params_or_throw<Config>(params, parse_into); }

}  // namespace headroom::policies::kai
