// Parameters of the volcano policy in volcano-scheduler.conf and Queue CRD vocabulary.
// Long file: the one key table (kKeys), the readers its rows call and the cross-key checks that run
// after it are one unit: splitting them would put the table and what it validates in two places.
#include "policies/common/params.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "policies/common/param_table.hpp"
#include "policies/common/param_text.hpp"
#include "policies/common/param_tree.hpp"
#include "policies/volcano/volcano.hpp"
#include "sim/suggest.hpp"

namespace headroom::policies::volcano {

namespace {

constexpr int kDims = 3;
constexpr const char* kDimName[kDims] = {"nvidia.com/gpu", "cpu", "memory"};
constexpr int kMaxQueueDepth = 5;  // webhook-manager --max-queue-depth default

// A quantity in headroom units written back in Kubernetes notation.
std::string quantity(int dim, std::int64_t v) {
  if (dim == 1) return v % 1000 == 0 ? std::to_string(v / 1000) : std::to_string(v) + "m";
  if (dim == 2) return v % 1024 == 0 ? std::to_string(v / 1024) + "Gi" : std::to_string(v) + "Mi";
  return std::to_string(v);
}

// A Kubernetes quantity in headroom units: gpu whole; cpu in millicores ("8", "500m"); memory
// in MiB ("64Gi", "512Mi", "1Ti", or plain bytes).
std::optional<std::int64_t> parse_quantity(int dim, std::string_view t) {
  if (dim == 0) {  // a GPU count: at most what a job's count holds (int32)
    auto n = parse_int(t);
    return n && *n >= 0 && *n <= 2147483647 ? n : std::nullopt;
  }
  if (dim == 1) {
    if (t.ends_with("m")) {
      auto n = parse_int(t.substr(0, t.size() - 1));
      return n && *n >= 0 ? n : std::nullopt;
    }
    auto n = parse_int(t);
    return n && *n >= 0 && *n < (std::int64_t{1} << 40) ? std::optional<std::int64_t>(*n * 1000) : std::nullopt;
  }
  static const std::pair<std::string_view, std::int64_t> kUnits[] = {
      {"Ki", -1024}, {"Mi", 1}, {"Gi", 1024}, {"Ti", 1024 * 1024}};
  for (const auto& [suffix, mult] : kUnits) {
    if (!t.ends_with(suffix)) continue;
    auto n = parse_int(t.substr(0, t.size() - 2));
    if (!n || *n < 0 || *n >= (std::int64_t{1} << 40)) return std::nullopt;
    return mult < 0 ? *n / 1024 : *n * mult;
  }
  auto n = parse_int(t);
  return n && *n >= 0 ? std::optional<std::int64_t>(*n / (1024 * 1024)) : std::nullopt;
}

// What a queues.<queue>.<field> key sets; the cross-key checks find where a field was given by
// field * kDims + dim.
enum QueueField : int {
  kWeight,
  kCapability,
  kGuarantee,
  kReclaimable,
  kPriority,
  kState,
  kDeserved,
  kParent,
  kHierarchy,         // annotation volcano.sh/hierarchy
  kHierarchyWeights,  // annotation volcano.sh/hierarchy-weights
};

// The parse state of a `policy:` block (the Config being filled, the errors found, where each
// queue field was given) and the typed readers of one value. Every error names its key
// ("policy.<key>") and the value's file:line:column.
struct Reader {
  Config& out;
  std::vector<sim::InputError>& errors;
  std::map<std::string, std::map<int, ParamValue>> where{};  // queue -> field * kDims + dim -> its value

  void error(const std::string& key, const ParamValue& v, const std::string& msg) { param_error(errors, key, v, msg); }

  // true or false: the value's text, or a switch inside it.
  std::optional<bool> boolean(const std::string& key, const ParamValue& v, const std::string& text) {
    bool b = false;
    if (!read_boolean(errors, key, v, text, b)) return std::nullopt;
    return b;
  }

  // An integer from lo to hi; `expected` says what in the error ("an integer from 1 to 64").
  std::optional<std::int64_t> integer(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi,
                                      std::string_view expected) {
    const auto n = parse_int(v.text);
    if (n && *n >= lo && *n <= hi) return n;
    error(key, v, "expected " + std::string(expected) + ", got " + quoted(v.text));
    return std::nullopt;
  }

  // A duration such as 1s or 500ms, not negative; not zero either when `positive`.
  std::optional<sim::Tick> duration(const std::string& key, const ParamValue& v, bool positive) {
    const auto d = sim::parse_duration(v.text);
    if (d && *d >= 0 && (!positive || *d > 0)) return d;
    error(key, v,
          std::string("expected a ") + (positive ? "positive " : "") + "duration such as 1s, 500ms or 30s, got " +
              quoted(v.text));
    return std::nullopt;
  }

  // The index of the value among `names`; `what` names the value in the error.
  std::optional<std::size_t> choice(const std::string& key, const ParamValue& v, std::string_view what,
                                    std::initializer_list<std::string_view> names) {
    std::size_t i = 0;
    for (const auto n : names) {
      if (v.text == n) return i;
      ++i;
    }
    std::string known;
    for (const auto n : names) known += (known.empty() ? "" : ", ") + std::string(n);
    error(key, v, "unknown " + std::string(what) + " " + quoted(v.text) + "; expected: " + known);
    return std::nullopt;
  }

  // A Kubernetes quantity of resource `dim` (parse_quantity).
  std::optional<std::int64_t> resource(const std::string& key, const ParamValue& v, int dim) {
    if (auto n = parse_quantity(dim, v.text)) return n;
    error(key, v,
          std::string("expected a quantity such as ") +
              (dim == 0   ? "8"
               : dim == 1 ? "64 or 500m"
                          : "256Gi") +
              ", got " + quoted(v.text));
    return std::nullopt;
  }
};

// The readers of one key.

void read_actions(Reader& r, const std::string& key, const ParamValue& v) {
  const std::vector<std::string>& kNames = action_names();
  r.out.actions.clear();
  std::string_view rest = v.text;
  if (rest.starts_with("[") && rest.ends_with("]")) rest = rest.substr(1, rest.size() - 2);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) continue;
    std::size_t k = 0;
    while (k < kNames.size() && kNames[k] != item) ++k;
    if (k == kNames.size()) {
      std::string msg = "unknown action " + quoted(item);
      if (auto s = sim::closest_match(item, kNames)) msg += "; did you mean \"" + *s + "\"?";
      r.error(key, v, msg + " (known: enqueue, allocate, backfill, preempt, reclaim)");
      continue;
    }
    const auto a = static_cast<Action>(k);
    for (Action b : r.out.actions)
      if (a == b) r.error(key, v, "action " + quoted(item) + " is listed twice");
    r.out.actions.push_back(a);
  }
}

// Go's time.ParseDuration (what sla.go reads sla-waiting-time with): decimal numbers each with
// a unit, h m s ms us (or µs) ns, summed; in whole milliseconds (rounded down). A sign, or a
// value above a century, is refused here.
std::optional<sim::Tick> go_duration(std::string_view t) {
  if (t.empty()) return std::nullopt;
  long double ns = 0;
  std::size_t i = 0;
  while (i < t.size()) {
    const std::size_t n0 = i;
    while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
    const std::string_view num = t.substr(n0, i - n0);
    if (num.empty() || num == "." || std::count(num.begin(), num.end(), '.') > 1 || num.size() > 30)
      return std::nullopt;
    const std::size_t u0 = i;
    while (i < t.size() && !std::isdigit(static_cast<unsigned char>(t[i])) && t[i] != '.') ++i;
    const std::string_view unit = t.substr(u0, i - u0);
    long double scale = 0;
    if (unit == "h")
      scale = 3600e9L;
    else if (unit == "m")
      scale = 60e9L;
    else if (unit == "s")
      scale = 1e9L;
    else if (unit == "ms")
      scale = 1e6L;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs")  // µs: micro sign or Greek mu
      scale = 1e3L;
    else if (unit == "ns")
      scale = 1;
    else
      return std::nullopt;
    ns += std::strtold(std::string(num).c_str(), nullptr) * scale;
    if (ns > 100 * 365.25L * 86400e9L) return std::nullopt;
  }
  return static_cast<sim::Tick>(ns / 1e6L);
}

// A waiting time of the sla plugin (its argument, the Job annotation) into `out`: a positive Go
// duration, else an error prefixed with `where`.
void read_waiting_time(Reader& r, const std::string& key, const ParamValue& v, const std::string& text,
                       const std::string& where, sim::Tick& out) {
  if (auto d = go_duration(text); d && *d > 0)
    out = *d;
  else
    r.error(key, v,
            where + "expected a positive Go duration such as 1h, 30m or 1h2m3s (units h, m, s, ms, us, ns), got " +
                quoted(text));
}

void read_argument(Reader& r, const std::string& key, const ParamValue& v, const std::string& plugin,
                   const std::string& name, const ParamTree& value) {
  const std::string where = "plugin " + plugin + " argument " + quoted(name) + ": ";
  if (value.kind != ParamTree::Scalar) {
    r.error(key, v, where + "expected a scalar");
    return;
  }
  const std::string& t = value.text;
  auto number = [&](double lo, double hi, double& dst) {
    auto n = parse_number(t);
    if (!n || *n < lo || *n > hi) {
      r.error(key, v,
              where + "expected a number from " + std::to_string(static_cast<long long>(lo)) + " to " +
                  std::to_string(static_cast<long long>(hi)) + ", got " + quoted(t));
      return;
    }
    dst = *n;
  };
  auto integer = [&](std::int64_t& dst) {
    auto n = parse_int(t);
    if (!n || *n < 0 || *n > 100) {
      r.error(key, v, where + "expected an integer from 0 to 100, got " + quoted(t));
      return;
    }
    dst = *n;
  };
  std::int64_t ignored = 0;
  if (name == "binpack.weight") {
    number(0, 100, r.out.binpack_weight);
  } else if (name == "binpack.cpu") {
    number(0, 100, r.out.binpack_cpu);
  } else if (name == "binpack.memory") {
    number(0, 100, r.out.binpack_memory);
  } else if (name == "binpack.resources") {
    if (t != "nvidia.com/gpu") r.error(key, v, where + "only nvidia.com/gpu is modelled, got " + quoted(t));
    if (r.out.binpack_gpu == 0) r.out.binpack_gpu = 1;
  } else if (name == "binpack.resources.nvidia.com/gpu") {
    number(0, 100, r.out.binpack_gpu);
  } else if (name == "sla-waiting-time") {
    if (plugin != "sla") r.error(key, v, where + "sla-waiting-time is an argument of the sla plugin");
    read_waiting_time(r, key, v, t, where, r.out.sla_waiting_time);
  } else if (name == "overcommit-factor") {
    number(1, 1000, r.out.overcommit_factor);
  } else if (name == "leastrequested.weight") {
    integer(r.out.leastrequested_weight);
  } else if (name == "mostrequested.weight") {
    integer(r.out.mostrequested_weight);
  } else if (name == "balancedresource.weight") {
    integer(r.out.balancedresource_weight);
  } else if (plugin == "network-topology-aware" && name == "weight") {
    number(0, 100, r.out.nta_weight);
  } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.cpu") {
    number(0, 100, r.out.nta_binpack_cpu);
  } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.memory") {
    number(0, 100, r.out.nta_binpack_memory);
  } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.resources") {
    if (t != "nvidia.com/gpu") r.error(key, v, where + "only nvidia.com/gpu is modelled, got " + quoted(t));
    if (r.out.nta_binpack_gpu == 0) r.out.nta_binpack_gpu = 1;
  } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.resources.nvidia.com/gpu") {
    number(0, 100, r.out.nta_binpack_gpu);
  } else if (name == "weight" || name.starts_with("hypernode.")) {
    r.error(key, v, where + "an argument of the network-topology-aware plugin");
  } else if (name == "ancestorReclaimLevel") {
    if (plugin != "capacity") r.error(key, v, where + "ancestorReclaimLevel is an argument of the capacity plugin");
    integer(r.out.ancestor_reclaim_level);
  } else if (is_dra_argument(name)) {
    if (t != "true" && t != "false") r.error(key, v, where + "expected true or false, got " + quoted(t));
  } else if (name.ends_with(".weight") && sim::closest_match(name, argument_names()) == name) {
    integer(ignored);  // constraints headroom does not have: accepted, score 0
  } else {
    std::string msg = where + "unknown argument";
    if (auto s = sim::closest_match(name, argument_names())) msg += "; did you mean \"" + *s + "\"?";
    r.error(key, v, msg);
  }
}

std::optional<PluginConf> read_plugin(Reader& r, const std::string& key, const ParamValue& v, const ParamTree& f) {
  PluginConf p;
  const ParamTree* args = nullptr;
  if (f.kind == ParamTree::Scalar) {
    p.name = f.text;
  } else if (f.kind == ParamTree::Map) {
    for (const auto& [k, val] : f.entries) {
      if (k == "name" && val.kind == ParamTree::Scalar) {
        p.name = val.text;
      } else if (k == "arguments" && val.kind == ParamTree::Map) {
        args = &val;
      } else if (k.starts_with("enable") && val.kind == ParamTree::Scalar) {
        auto b = r.boolean(key, v, val.text);
        if (!b) continue;
        if (k == "enablePreemptable")
          p.preemptable = *b;
        else if (k == "enableReclaimable")
          p.reclaimable = *b;
        else if (k == "enableJobOrder")
          p.job_order = *b;
        else if (k == "enableTaskOrder")
          p.task_order = *b;
        else if (k == "enableQueueOrder")
          p.queue_order = *b;
        else if (k == "enableNodeOrder")
          p.node_order = *b;
        else if (k == "enableJobEnqueued")
          p.job_enqueued = *b;
        else if (k == "enableHierarchy")
          p.hierarchy = *b;
        else {
          std::string msg = "unknown plugin switch " + quoted(k);
          if (auto s = sim::closest_match(k, switch_names())) msg += "; did you mean \"" + *s + "\"?";
          r.error(key, v, msg);
        }
      } else {
        r.error(key, v, "unknown plugin field " + quoted(k) + " (expected name, arguments or enable... switches)");
      }
    }
  } else {
    r.error(key, v, "expected a plugin name or a {name: ...} map in a tier");
    return std::nullopt;
  }
  bool known = false;
  for (const auto& n : plugin_names()) known = known || n == p.name;
  if (!known && std::find(upstream_unmodelled_plugins().begin(), upstream_unmodelled_plugins().end(), p.name) !=
                    upstream_unmodelled_plugins().end()) {
    r.error(key, v,
            "plugin " + quoted(p.name) +
                " is Volcano's but not modelled by headroom; remove it from tiers (a site's ConfigMap read through "
                "manifests: leaves it out with a warning)");
    return std::nullopt;
  }
  if (!known) {
    std::string msg = "unknown plugin " + quoted(p.name);
    if (auto s = sim::closest_match(p.name, plugin_names())) msg += "; did you mean \"" + *s + "\"?";
    r.error(key, v,
            msg +
                " (known: priority, gang, conformance, overcommit, drf, predicates, proportion, capacity, "
                "nodeorder, binpack, network-topology-aware, sla)");
    return std::nullopt;
  }
  if (p.hierarchy && p.name != "capacity" && p.name != "drf")
    r.error(key, v, "plugin " + p.name + ": enableHierarchy applies to the capacity plugin (and drf)");
  if (args != nullptr)
    for (const auto& [k, val] : args->entries) read_argument(r, key, v, p.name, k, val);
  return p;
}

void read_tiers(Reader& r, const std::string& key, const ParamValue& v) {
  auto flow = parse_param_tree(v.text);
  if (!flow || flow->kind != ParamTree::List || flow->items.empty()) {
    r.error(key, v,
            "expected a list of tiers, each a list of plugins ([[priority, gang], [drf, proportion]]) or "
            "{plugins: [{name: ..., arguments: {...}}]}, got " +
                quoted(v.text));
    return;
  }
  r.out.tiers.clear();
  for (const ParamTree& tier : flow->items) {
    const ParamTree* list = &tier;
    if (tier.kind == ParamTree::Map) {
      list = nullptr;
      for (const auto& [k, val] : tier.entries)
        if (k == "plugins") list = &val;
    }
    if (list == nullptr || list->kind != ParamTree::List) {
      r.error(key, v, "a tier must be a list of plugins or a map with a plugins list");
      continue;
    }
    std::vector<PluginConf> plugins;
    for (const ParamTree& p : list->items)
      if (auto conf = read_plugin(r, key, v, p)) plugins.push_back(*conf);
    r.out.tiers.push_back(std::move(plugins));
  }
}

void read_kinds(Reader& r, const std::string& key, const ParamValue& v) {
  std::vector<std::string> unknown;
  parse_job_kinds(v.text, r.out.network_topology_kinds, unknown);
  for (const auto& u : unknown)
    r.error(key, v, "unknown job kind " + quoted(u) + "; expected: train, inference, interactive, batch");
}

// A key pattern as a template argument, so that a row's reader can find the <queue> in its key.
template <std::size_t N>
struct Pattern {
  char text[N];
  constexpr Pattern(const char (&s)[N]) { std::copy_n(s, N, text); }  // implicit: "queues.<queue>.weight" converts
  constexpr std::string_view view() const { return {text, N - 1}; }
};

// The row of a queues.<queue>.<field> key: notes where the field was given (the cross-key checks
// report there) and reads the value into the queue's QueueConf (resources of dimension `Dim`).
template <Pattern P, QueueField F, int Dim = 0>
constexpr ParamKey<Reader> queue_key() {
  return {P.view(), [](Reader& r, const std::string& key, const ParamValue& v) {
            const std::string name(key_placeholder(P.view(), key));
            QueueConf& q = r.out.queues[name];
            r.where[name][F * kDims + Dim] = v;
            if constexpr (F == kWeight) {
              if (auto n = r.integer(key, v, 1, 1'000'000, "an integer weight from 1 to 1000000")) q.weight = *n;
            } else if constexpr (F == kCapability || F == kGuarantee || F == kDeserved) {
              Resources& res = F == kCapability ? q.capability : F == kGuarantee ? q.guarantee : q.deserved;
              if (auto n = r.resource(key, v, Dim)) res[Dim] = *n;
            } else if constexpr (F == kReclaimable) {
              if (auto b = r.boolean(key, v, v.text)) q.reclaimable = *b;
            } else if constexpr (F == kPriority) {
              if (auto n = r.integer(key, v, -2'000'000'000, 2'000'000'000, "an integer priority"))
                q.priority = static_cast<std::int32_t>(*n);
            } else if constexpr (F == kState) {
              if (auto s = r.choice(key, v, "queue state", {"Open", "Closing", "Closed"}))
                q.state = static_cast<QueueState>(*s);
            } else if constexpr (F == kParent) {
              if (v.text.empty())
                r.error(key, v, "expected a queue name");
              else
                q.parent = v.text;
            } else if constexpr (F == kHierarchy) {
              q.hierarchy = v.text;
            } else {
              static_assert(F == kHierarchyWeights);
              q.hierarchy_weights = v.text;
            }
          }};
}

// Every key of the policy block, in the catalogue's order (param_keys), each with its reader. A
// queue key takes the first row whose suffix it ends with ("queues.a.b.weight" is queue "a.b").
constexpr ParamKey<Reader> kKeys[] = {
    {"actions", read_actions},
    {"tiers", read_tiers},
    {"schedule-period",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto d = r.duration(key, v, true)) r.out.schedule_period = *d;
     }},
    {"termination_grace_period",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto d = r.duration(key, v, false)) r.out.termination_grace_period = *d;
     }},
    {"minResources",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto c = r.choice(key, v, "minResources", {"auto", "none"})) r.out.min_resources = *c == 0;
     }},
    {"podsCreated",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto c = r.choice(key, v, "podsCreated", {"inqueue", "submit"})) r.out.pods_at_submit = *c == 1;
     }},
    // Job spec.networkTopology {mode, highestTierAllowed}, for the PodGroups of `kinds`.
    {"networkTopology.mode",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto c = r.choice(key, v, "mode", {"hard", "soft"}))
         r.out.network_topology = *c == 0 ? NetworkTopologyMode::Hard : NetworkTopologyMode::Soft;
     }},
    {"networkTopology.highestTierAllowed",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto n = r.integer(key, v, 1, 64, "an integer from 1 to 64"))
         r.out.highest_tier_allowed = static_cast<std::int32_t>(*n);
     }},
    {"networkTopology.kinds", read_kinds},
    // The Job annotation sla-waiting-time on the PodGroups of at least minGpus GPUs (the sla plugin).
    {"slaAnnotation.waitingTime",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       read_waiting_time(r, key, v, v.text, "", r.out.sla_annotation_time);
     }},
    {"slaAnnotation.minGpus",
     [](Reader& r, const std::string& key, const ParamValue& v) {
       if (auto n = r.integer(key, v, 0, 1'000'000'000, "an integer from 0 to 1000000000"))
         r.out.sla_annotation_min_gpus = *n;
     }},
    queue_key<"queues.<queue>.weight", kWeight>(),
    queue_key<"queues.<queue>.capability.nvidia.com/gpu", kCapability, 0>(),
    queue_key<"queues.<queue>.capability.gpu", kCapability, 0>(),
    queue_key<"queues.<queue>.capability.cpu", kCapability, 1>(),
    queue_key<"queues.<queue>.capability.memory", kCapability, 2>(),
    queue_key<"queues.<queue>.guarantee.resource.nvidia.com/gpu", kGuarantee, 0>(),
    queue_key<"queues.<queue>.guarantee.resource.gpu", kGuarantee, 0>(),
    queue_key<"queues.<queue>.guarantee.resource.cpu", kGuarantee, 1>(),
    queue_key<"queues.<queue>.guarantee.resource.memory", kGuarantee, 2>(),
    queue_key<"queues.<queue>.guarantee.nvidia.com/gpu", kGuarantee, 0>(),
    queue_key<"queues.<queue>.guarantee.gpu", kGuarantee, 0>(),
    queue_key<"queues.<queue>.guarantee.cpu", kGuarantee, 1>(),
    queue_key<"queues.<queue>.guarantee.memory", kGuarantee, 2>(),
    queue_key<"queues.<queue>.reclaimable", kReclaimable>(),
    queue_key<"queues.<queue>.priority", kPriority>(),
    queue_key<"queues.<queue>.state", kState>(),
    queue_key<"queues.<queue>.deserved.nvidia.com/gpu", kDeserved, 0>(),
    queue_key<"queues.<queue>.deserved.gpu", kDeserved, 0>(),
    queue_key<"queues.<queue>.deserved.cpu", kDeserved, 1>(),
    queue_key<"queues.<queue>.deserved.memory", kDeserved, 2>(),
    queue_key<"queues.<queue>.parent", kParent>(),
    queue_key<"queues.<queue>.annotations.volcano.sh/hierarchy", kHierarchy>(),
    queue_key<"queues.<queue>.annotations.volcano.sh/hierarchy-weights", kHierarchyWeights>(),
};

// A networkTopology.* key no row matches (a misspelled field): volcano's own error, beside the
// registry's unknown-parameter one; the fields it suggests are the table's.
void unknown_network_topology_key(Reader& r, const std::string& key, const ParamValue& v) {
  constexpr std::string_view kPrefix = "networkTopology.";
  std::vector<std::string> fields;
  std::string known;
  for (const auto& row : kKeys)
    if (row.pattern.starts_with(kPrefix)) {
      fields.emplace_back(row.pattern.substr(kPrefix.size()));
      known += (known.empty() ? "" : ", ") + fields.back();
    }
  std::string msg = "unknown key";
  if (auto s = sim::closest_match(key.substr(kPrefix.size()), fields))
    msg += "; did you mean \"" + std::string(kPrefix) + *s + "\"?";
  r.error(key, v, msg + " (expected: " + known + ")");
}

// read_params (param_table.hpp) over kKeys with a fallback for the keys no row matches, called in
// key order with the others so that the errors keep their order: read_params has no fallback.
void read_keys(Reader& r, const PolicyParams& params) {
  for (const auto& [key, v] : params) {
    const auto row = std::find_if(std::begin(kKeys), std::end(kKeys),
                                  [&key = key](const ParamKey<Reader>& k) { return key_matches(k.pattern, key); });
    if (row != std::end(kKeys))
      row->read(r, key, v);
    else if (key.starts_with("networkTopology."))
      unknown_network_topology_key(r, key, v);
  }
}

// The checks across keys, once every key is read.

// Hierarchical DRF's queue annotations (plugins/drf/drf.go buildHierarchy, docs/design/hdrf.md).
void check_hdrf(Reader& r, bool hdrf) {
  std::map<std::string, std::pair<std::string, std::string>> node_weight;  // node -> (weight, queue)
  std::vector<std::pair<std::string, std::string>> paths;                  // (path, queue)
  auto split = [](const std::string& t) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (true) {
      const auto slash = t.find('/', at);
      out.push_back(t.substr(at, slash == std::string::npos ? std::string::npos : slash - at));
      if (slash == std::string::npos) break;
      at = slash + 1;
    }
    return out;
  };
  for (const auto& [name, q] : r.out.queues) {
    const auto at = r.where.find(name);
    if (at == r.where.end()) continue;
    const auto hv = at->second.find(kHierarchy * kDims), wv = at->second.find(kHierarchyWeights * kDims);
    if (hv == at->second.end() && wv == at->second.end()) continue;
    const std::string key = "queues." + name + ".annotations.volcano.sh/hierarchy";
    if (!hdrf) {
      r.error(key, hv != at->second.end() ? hv->second : wv->second,
              "the volcano.sh/hierarchy annotations need drf with enableHierarchy: true");
      continue;
    }
    if (hv == at->second.end()) {
      r.error(key + "-weights", wv->second, "volcano.sh/hierarchy-weights without volcano.sh/hierarchy");
      continue;
    }
    const auto parts = split(q.hierarchy);
    if (parts.front() != "root" || std::any_of(parts.begin(), parts.end(), [](const auto& x) { return x.empty(); })) {
      r.error(key, hv->second, "expected a path from the root such as root/eng/dev, got " + quoted(q.hierarchy));
      continue;
    }
    const auto weights = wv == at->second.end() ? std::vector<std::string>{} : split(q.hierarchy_weights);
    if (weights.size() != parts.size()) {
      r.error(key + "-weights", wv != at->second.end() ? wv->second : hv->second,
              "expected one weight per level of " + quoted(q.hierarchy) + ", got " + quoted(q.hierarchy_weights));
      continue;
    }
    bool ok = true;
    std::string node = "root";
    for (std::size_t i = 1; i < parts.size() && ok; ++i) {
      const auto w = parse_number(weights[i]);
      if (!w || *w <= 0) {
        r.error(key + "-weights", wv->second, "expected positive numbers, got " + quoted(q.hierarchy_weights));
        ok = false;
        break;
      }
      node += "/" + parts[i];
      const std::string norm = std::to_string(std::max(1.0, *w));
      const auto [it, fresh] = node_weight.emplace(node, std::make_pair(norm, name));
      if (!fresh && it->second.first != norm) {
        r.error(
            key + "-weights", wv->second,
            node + " has another weight in queue " + it->second.second + "'s annotations (Volcano would take either)");
        ok = false;
      }
    }
    if (ok) paths.emplace_back(q.hierarchy, name);
  }
  // docs/design/hdrf.md: a queue containing both queues and jobs is not allowed.
  for (const auto& [p, qn] : paths)
    for (const auto& [o, on] : paths)
      if (o.starts_with(p + "/"))
        r.error("queues." + qn + ".annotations.volcano.sh/hierarchy", r.where.at(qn).at(kHierarchy * kDims),
                p + " is above queue " + on + "'s " + o + "; a queue cannot hold both queues and jobs");
}

// The Queue webhook's rules (webhooks/admission/queues/validate/validate_queue.go) and the
// scheduler's conflicts (pkg/scheduler/util.go; docs/user-guide/how_to_use_capacity_plugin.md).
void check_queues(Reader& r, const PolicyParams& params) {
  bool capacity = false, hierarchy = false, proportion = false, hdrf = false;
  for (const auto& tier : r.out.tiers) {
    bool tier_hdrf = false, tier_proportion = false;
    for (const auto& p : tier) {
      capacity = capacity || p.name == "capacity";
      hierarchy = hierarchy || (p.name == "capacity" && p.hierarchy);
      proportion = proportion || p.name == "proportion";
      tier_hdrf = tier_hdrf || (p.name == "drf" && p.hierarchy);
      tier_proportion = tier_proportion || p.name == "proportion";
    }
    hdrf = hdrf || tier_hdrf;
    if (tier_hdrf && tier_proportion) {
      const auto it = params.find("tiers");
      r.error("tiers", it != params.end() ? it->second : ParamValue{},
              "proportion and drf with hierarchy enabled conflict (in one tier)");
    }
  }
  check_hdrf(r, hdrf);
  if (capacity && proportion) {
    const auto it = params.find("tiers");
    const ParamValue at = it != params.end() ? it->second : ParamValue{};
    r.error("tiers", at,
            "the capacity and proportion plugins conflict; use one of them (capacity replaces proportion)");
  }
  auto loc = [&](const std::string& q, int kind, int dim) -> const ParamValue* {
    auto it = r.where.find(q);
    if (it == r.where.end()) return nullptr;
    auto f = it->second.find(kind * kDims + dim);
    return f == it->second.end() ? nullptr : &f->second;
  };
  auto err = [&](const std::string& q, int kind, int dim, const std::string& field, const std::string& msg) {
    if (const ParamValue* at = loc(q, kind, dim)) r.error("queues." + q + "." + field, *at, msg);
  };
  for (const auto& [name, q] : r.out.queues) {
    if (!q.parent.empty() && !hierarchy)
      err(name, kParent, 0, "parent", "a parent queue needs the capacity plugin with enableHierarchy: true");
    if (!capacity) continue;
    for (int d = 0; d < kDims; ++d) {
      const std::string dn = kDimName[d];
      if (loc(name, kGuarantee, d) != nullptr && q.guarantee[d] > 0 &&
          (q.deserved[d] < 0 || q.deserved[d] < q.guarantee[d]))
        err(name, loc(name, kDeserved, d) != nullptr ? kDeserved : kGuarantee, d,
            loc(name, kDeserved, d) != nullptr ? "deserved" : "guarantee",
            "deserved[" + dn + "]" + (q.deserved[d] < 0 ? "" : "=" + quantity(d, q.deserved[d])) +
                " must be >= guarantee[" + dn + "]=" + quantity(d, q.guarantee[d]));
      if (q.deserved[d] >= 0 && q.capability[d] >= 0 && q.deserved[d] > q.capability[d])
        err(name, kDeserved, d, "deserved",
            "deserved[" + dn + "]=" + quantity(d, q.deserved[d]) + " must be <= capability[" + dn +
                "]=" + quantity(d, q.capability[d]));
    }
  }
  if (!hierarchy) return;
  std::vector<std::string> names{"root"};
  for (const auto& [name, q] : r.out.queues)
    if (name != "root") names.push_back(name);
  auto parent_of = [&](const std::string& q) -> std::string {
    auto it = r.out.queues.find(q);
    return it == r.out.queues.end() || it->second.parent.empty() ? "root" : it->second.parent;
  };
  bool tree_ok = true;
  for (const auto& [name, q] : r.out.queues) {
    if (name == "root") {
      for (int kind : {kCapability, kGuarantee, kDeserved})
        for (int d = 0; d < kDims; ++d)
          err(name, kind, d,
              kind == kCapability  ? "capability"
              : kind == kGuarantee ? "guarantee"
                                   : "deserved",
              "the root queue's resources are not set by users: its capability is unlimited and its deserved and "
              "guarantee are its children's sums");
      if (!q.parent.empty()) err(name, kParent, 0, "parent", "the root queue has no parent");
      tree_ok = tree_ok && q.parent.empty();
      continue;
    }
    if (q.parent.empty() || q.parent == "root") continue;
    if (q.parent == name) {
      err(name, kParent, 0, "parent", "queue " + name + " cannot use itself as parent");
      tree_ok = false;
    } else if (!r.out.queues.contains(q.parent)) {
      std::string msg = "unknown parent queue " + quoted(q.parent);
      if (auto s = sim::closest_match(q.parent, names)) msg += "; did you mean \"" + *s + "\"?";
      err(name, kParent, 0, "parent", msg + " (a parent must be a queue of this block, or root)");
      tree_ok = false;
    }
  }
  if (!tree_ok) return;
  // Cycles and depth: walk up from every queue.
  for (const auto& [name, q] : r.out.queues) {
    if (name == "root") continue;
    std::vector<std::string> path{name};
    std::string at = parent_of(name);
    bool cycle = false;
    while (at != "root") {
      if (std::find(path.begin(), path.end(), at) != path.end()) {
        cycle = true;
        break;
      }
      path.push_back(at);
      at = parent_of(at);
    }
    if (cycle) {
      // Reported once, at the queue of the cycle that sorts first.
      std::vector<std::string> ring(std::find(path.begin(), path.end(), at), path.end());
      if (*std::min_element(ring.begin(), ring.end()) != name) continue;
      std::string chain;
      for (const auto& r : ring) chain += r + " -> ";
      err(name, kParent, 0, "parent", "cycle in the queue hierarchy: " + chain + name);
      tree_ok = false;
    } else if (static_cast<int>(path.size()) > kMaxQueueDepth) {
      err(name, kParent, 0, "parent",
          "queue " + name + " exceeds the maximum allowed depth of " + std::to_string(kMaxQueueDepth) +
              " (the webhook's --max-queue-depth)");
    }
  }
  if (!tree_ok) return;
  for (const auto& [name, q] : r.out.queues) {
    if (name == "root") continue;
    // validateChildAgainstAncestor: capability <= the nearest ancestor's that sets it.
    for (int d = 0; d < kDims; ++d) {
      if (q.capability[d] <= 0) continue;
      for (std::string a = parent_of(name); a != "root"; a = parent_of(a)) {
        const std::int64_t up = r.out.queues.at(a).capability[d];
        if (up <= 0) continue;
        if (q.capability[d] > up)
          err(name, kCapability, d, "capability",
              "capability[" + std::string(kDimName[d]) + "]=" + quantity(d, q.capability[d]) +
                  " exceeds its ancestor " + a + "'s capability=" + quantity(d, up));
        break;
      }
    }
    // validateChildrenConstraints: the children's guarantee and deserved sum to at most the parent's.
    std::vector<std::string> children;
    for (const auto& [c, cq] : r.out.queues)
      if (c != "root" && parent_of(c) == name) children.push_back(c);
    if (children.empty()) continue;
    for (int kind : {kGuarantee, kDeserved}) {
      const char* field = kind == kGuarantee ? "guarantee" : "deserved";
      for (int d = 0; d < kDims; ++d) {
        std::int64_t sum = 0;
        const std::string* first = nullptr;
        for (const auto& c : children) {
          const auto& cq = r.out.queues.at(c);
          const std::int64_t v = kind == kGuarantee ? cq.guarantee[d] : cq.deserved[d];
          if (v <= 0) continue;
          sum += v;
          if (first == nullptr) first = &c;
        }
        const std::int64_t mine = std::max<std::int64_t>(0, kind == kGuarantee ? q.guarantee[d] : q.deserved[d]);
        if (sum <= mine) continue;
        const std::string msg = "sum of children's " + std::string(field) + "[" + kDimName[d] + "] (" +
                                quantity(d, sum) + ") exceeds parent queue " + name + "'s " + field + " (" +
                                quantity(d, mine) + ")";
        if (loc(name, kind, d) != nullptr)
          err(name, kind, d, field, msg);
        else
          err(*first, kind, d, field, msg);
      }
    }
  }
}

// Hard mode needs highestTierAllowed; the network-topology-aware plugin must be in the tiers
// (Session.HyperNodeGradientForJobFn without it returns the whole cluster): added to the last
// tier of the default ones, an error when `tiers` is given without it.
void check_network_topology(Reader& r, const PolicyParams& params) {
  if (r.out.network_topology == NetworkTopologyMode::Off) {
    for (const auto& [key, v] : params)
      if (key.starts_with("networkTopology.") && key != "networkTopology.mode") {
        r.error(key, v, "networkTopology needs a mode (hard or soft)");
        break;
      }
    return;
  }
  const auto& mode = params.at("networkTopology.mode");
  if (r.out.network_topology == NetworkTopologyMode::Hard && r.out.highest_tier_allowed == 0)
    r.error("networkTopology.mode", mode, "hard mode needs highestTierAllowed");
  bool listed = false;
  for (const auto& tier : r.out.tiers)
    for (const auto& p : tier) listed = listed || p.name == "network-topology-aware";
  if (listed) return;
  if (params.count("tiers") != 0)
    r.error("tiers", params.at("tiers"),
            "networkTopology needs the network-topology-aware plugin in the tiers (Volcano ignores the constraint "
            "without it)");
  else
    r.out.tiers.back().push_back(PluginConf{"network-topology-aware"});
}

// Reads every key through the table, then the checks across keys.
void read(Reader& r, const PolicyParams& params) {
  r.out.tiers = default_tiers();
  read_keys(r, params);
  check_queues(r, params);
  check_network_topology(r, params);
}

}  // namespace

const std::vector<std::string>& plugin_names() {
  static const std::vector<std::string> k = {"priority",
                                             "gang",
                                             "conformance",
                                             "overcommit",
                                             "drf",
                                             "predicates",
                                             "proportion",
                                             "capacity",
                                             "nodeorder",
                                             "binpack",
                                             "network-topology-aware",
                                             "sla"};
  return k;
}

const std::vector<std::string>& argument_names() {
  static const std::vector<std::string> k = {"binpack.weight",
                                             "binpack.cpu",
                                             "binpack.memory",
                                             "binpack.resources",
                                             "binpack.resources.nvidia.com/gpu",
                                             "overcommit-factor",
                                             "leastrequested.weight",
                                             "mostrequested.weight",
                                             "balancedresource.weight",
                                             "nodeaffinity.weight",
                                             "podaffinity.weight",
                                             "tainttoleration.weight",
                                             "imagelocality.weight",
                                             "podtopologyspread.weight",
                                             "ancestorReclaimLevel",
                                             "weight",
                                             "hypernode.binpack.cpu",
                                             "hypernode.binpack.memory",
                                             "hypernode.binpack.resources",
                                             "hypernode.binpack.resources.nvidia.com/gpu",
                                             "sla-waiting-time"};
  return k;
}

const std::vector<std::string>& switch_names() {
  static const std::vector<std::string> k = {"enablePreemptable", "enableReclaimable", "enableJobOrder",
                                             "enableTaskOrder",   "enableQueueOrder",  "enableNodeOrder",
                                             "enableJobEnqueued", "enableHierarchy"};
  return k;
}

const std::vector<std::string>& action_names() {
  // In the order of the Action enumerators.
  static const std::vector<std::string> k = {"enqueue", "allocate", "backfill", "preempt", "reclaim"};
  return k;
}

const std::vector<std::string>& upstream_unmodelled_plugins() {
  // pkg/scheduler/plugins/factory.go registers these too; each PluginName as its package gives it.
  static const std::vector<std::string> k = {
      "deviceshare", "resource-strategy-fit", "tdm",   "task-topology", "numa-aware",
      "cdp",         "rescheduling",          "usage", "pdb",           "nodegroup",
      "extender",    "resourcequota"};
  return k;
}

const std::vector<std::string>& upstream_unmodelled_actions() {
  // pkg/scheduler/actions/factory.go registers these besides the five headroom models.
  static const std::vector<std::string> k = {"shuffle", "gangpreempt", "gangreclaim"};
  return k;
}

const std::vector<std::string>& upstream_unmodelled_switches() {
  // The PluginOption fields of pkg/scheduler/conf/scheduler_conf.go (their yaml names, some
  // spelled "enabled...") that switch off callbacks headroom's plugins do not have.
  static const std::vector<std::string> k = {
      "enableJobReady",          "enableJobPipelined", "enablePreemptive",       "enabledClusterOrder",
      "enablePredicate",         "enableBestNode",     "enableTargetJob",        "enableReservedNodes",
      "enabledVictim",           "enableJobStarving",  "enabledOverused",        "enabledAllocatable",
      "enabledHyperNodeOrder",   "enabledSubJobReady", "enabledSubJobPipelined", "enabledSubJobOrder",
      "enabledHyperNodeGradient"};
  return k;
}

bool is_modelled_argument(std::string_view name) {
  const auto& names = argument_names();
  return is_dra_argument(name) || std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::vector<PluginConf>> default_tiers() {
  PluginConf gang{"gang"}, drf{"drf"};
  gang.preemptable = false;
  drf.preemptable = false;
  return {{PluginConf{"priority"}, gang, PluginConf{"conformance"}},
          {PluginConf{"overcommit"}, drf, PluginConf{"predicates"}, PluginConf{"proportion"}, PluginConf{"nodeorder"},
           PluginConf{"binpack"}}};
}

bool is_dra_argument(std::string_view name) {
  return name == "capacity.DynamicResourceAllocationEnable" || name == "capacity.DRAConsumableCapacityEnable" ||
         name == "predicate.DynamicResourceAllocationEnable";
}

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kPatterns = param_patterns<Reader>(kKeys);
  return kPatterns;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  Config c;
  Reader r{c, errors};
  read(r, params);
}

Config parse_config(const PolicyParams& params) {
  Config c;
  std::vector<sim::InputError> errors;
  Reader r{c, errors};
  read(r, params);
  if (!errors.empty()) throw errors.front();
  return c;
}

}  // namespace headroom::policies::volcano
