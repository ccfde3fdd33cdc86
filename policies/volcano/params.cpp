// Parameters of the volcano policy in volcano-scheduler.conf and Queue CRD vocabulary.
#include "policies/common/params.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

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

const std::vector<std::string>& plugin_names() {
  static const std::vector<std::string> k = {
      "priority",  "gang",    "conformance",           "overcommit", "drf", "predicates", "proportion", "capacity",
      "nodeorder", "binpack", "network-topology-aware"};
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
                                             "hypernode.binpack.resources.nvidia.com/gpu"};
  return k;
}

const std::vector<std::string>& switch_names() {
  static const std::vector<std::string> k = {"enablePreemptable", "enableReclaimable", "enableJobOrder",
                                             "enableTaskOrder",   "enableQueueOrder",  "enableNodeOrder",
                                             "enableJobEnqueued", "enableHierarchy"};
  return k;
}

// A Kubernetes quantity in headroom units: gpu whole; cpu in millicores ("8", "500m"); memory
// in MiB ("64Gi", "512Mi", "1Ti", or plain bytes).
std::optional<std::int64_t> parse_quantity(int dim, std::string_view t) {
  if (dim == 0) {
    auto n = parse_int(t);
    return n && *n >= 0 ? n : std::nullopt;
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

struct QueueField {
  std::string_view suffix;
  int kind;  // 0 weight, 1 capability, 2 guarantee, 3 reclaimable, 4 priority, 5 state, 6 deserved,
             // 7 parent, 8 hierarchy annotation, 9 hierarchy-weights annotation
  int dim;
};

const std::vector<QueueField>& queue_fields() {
  static const std::vector<QueueField> k = {
      {".weight", 0, 0},
      {".capability.nvidia.com/gpu", 1, 0},
      {".capability.gpu", 1, 0},
      {".capability.cpu", 1, 1},
      {".capability.memory", 1, 2},
      {".guarantee.resource.nvidia.com/gpu", 2, 0},
      {".guarantee.resource.gpu", 2, 0},
      {".guarantee.resource.cpu", 2, 1},
      {".guarantee.resource.memory", 2, 2},
      {".guarantee.nvidia.com/gpu", 2, 0},
      {".guarantee.gpu", 2, 0},
      {".guarantee.cpu", 2, 1},
      {".guarantee.memory", 2, 2},
      {".reclaimable", 3, 0},
      {".priority", 4, 0},
      {".state", 5, 0},
      {".deserved.nvidia.com/gpu", 6, 0},
      {".deserved.gpu", 6, 0},
      {".deserved.cpu", 6, 1},
      {".deserved.memory", 6, 2},
      {".parent", 7, 0},
      {".annotations.volcano.sh/hierarchy", 8, 0},
      {".annotations.volcano.sh/hierarchy-weights", 9, 0},
  };
  return k;
}

class Parser {
 public:
  explicit Parser(Config& out) : out_(out) {}
  std::vector<sim::InputError> errors;

  void error(const std::string& key, const ParamValue& v, const std::string& msg) {
    errors.emplace_back(v.file, v.line, v.column, "policy." + key, msg);
  }

  std::optional<bool> boolean(const std::string& key, const ParamValue& v, const std::string& text) {
    if (text == "true") return true;
    if (text == "false") return false;
    error(key, v, "expected true or false, got " + quoted(text));
    return std::nullopt;
  }

  void actions(const std::string& key, const ParamValue& v) {
    static const std::vector<std::string> kNames = {"enqueue", "allocate", "backfill", "preempt", "reclaim"};
    out_.actions.clear();
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
        error(key, v, msg + " (known: enqueue, allocate, backfill, preempt, reclaim)");
        continue;
      }
      const auto a = static_cast<Action>(k);
      for (Action b : out_.actions)
        if (a == b) error(key, v, "action " + quoted(item) + " is listed twice");
      out_.actions.push_back(a);
    }
  }

  void argument(const std::string& key, const ParamValue& v, const std::string& plugin, const std::string& name,
                const ParamTree& value) {
    const std::string where = "plugin " + plugin + " argument " + quoted(name) + ": ";
    if (value.kind != ParamTree::Scalar) {
      error(key, v, where + "expected a scalar");
      return;
    }
    const std::string& t = value.text;
    auto number = [&](double lo, double hi, double& dst) {
      auto n = parse_number(t);
      if (!n || *n < lo || *n > hi) {
        error(key, v,
              where + "expected a number from " + std::to_string(static_cast<long long>(lo)) + " to " +
                  std::to_string(static_cast<long long>(hi)) + ", got " + quoted(t));
        return;
      }
      dst = *n;
    };
    auto integer = [&](std::int64_t& dst) {
      auto n = parse_int(t);
      if (!n || *n < 0 || *n > 100) {
        error(key, v, where + "expected an integer from 0 to 100, got " + quoted(t));
        return;
      }
      dst = *n;
    };
    std::int64_t ignored = 0;
    if (name == "binpack.weight") {
      number(0, 100, out_.binpack_weight);
    } else if (name == "binpack.cpu") {
      number(0, 100, out_.binpack_cpu);
    } else if (name == "binpack.memory") {
      number(0, 100, out_.binpack_memory);
    } else if (name == "binpack.resources") {
      if (t != "nvidia.com/gpu") error(key, v, where + "only nvidia.com/gpu is modelled, got " + quoted(t));
      if (out_.binpack_gpu == 0) out_.binpack_gpu = 1;
    } else if (name == "binpack.resources.nvidia.com/gpu") {
      number(0, 100, out_.binpack_gpu);
    } else if (name == "overcommit-factor") {
      number(1, 1000, out_.overcommit_factor);
    } else if (name == "leastrequested.weight") {
      integer(out_.leastrequested_weight);
    } else if (name == "mostrequested.weight") {
      integer(out_.mostrequested_weight);
    } else if (name == "balancedresource.weight") {
      integer(out_.balancedresource_weight);
    } else if (plugin == "network-topology-aware" && name == "weight") {
      number(0, 100, out_.nta_weight);
    } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.cpu") {
      number(0, 100, out_.nta_binpack_cpu);
    } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.memory") {
      number(0, 100, out_.nta_binpack_memory);
    } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.resources") {
      if (t != "nvidia.com/gpu") error(key, v, where + "only nvidia.com/gpu is modelled, got " + quoted(t));
      if (out_.nta_binpack_gpu == 0) out_.nta_binpack_gpu = 1;
    } else if (plugin == "network-topology-aware" && name == "hypernode.binpack.resources.nvidia.com/gpu") {
      number(0, 100, out_.nta_binpack_gpu);
    } else if (name == "weight" || name.starts_with("hypernode.")) {
      error(key, v, where + "an argument of the network-topology-aware plugin");
    } else if (name == "ancestorReclaimLevel") {
      if (plugin != "capacity") error(key, v, where + "ancestorReclaimLevel is an argument of the capacity plugin");
      integer(out_.ancestor_reclaim_level);
    } else if (name.ends_with(".weight") && sim::closest_match(name, argument_names()) == name) {
      integer(ignored);  // constraints headroom does not have: accepted, score 0
    } else {
      std::string msg = where + "unknown argument";
      if (auto s = sim::closest_match(name, argument_names())) msg += "; did you mean \"" + *s + "\"?";
      error(key, v, msg);
    }
  }

  std::optional<PluginConf> plugin(const std::string& key, const ParamValue& v, const ParamTree& f) {
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
          auto b = boolean(key, v, val.text);
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
            error(key, v, msg);
          }
        } else {
          error(key, v, "unknown plugin field " + quoted(k) + " (expected name, arguments or enable... switches)");
        }
      }
    } else {
      error(key, v, "expected a plugin name or a {name: ...} map in a tier");
      return std::nullopt;
    }
    bool known = false;
    for (const auto& n : plugin_names()) known = known || n == p.name;
    if (!known) {
      std::string msg = "unknown plugin " + quoted(p.name);
      if (auto s = sim::closest_match(p.name, plugin_names())) msg += "; did you mean \"" + *s + "\"?";
      error(key, v,
            msg +
                " (known: priority, gang, conformance, overcommit, drf, predicates, proportion, capacity, "
                "nodeorder, binpack, network-topology-aware)");
      return std::nullopt;
    }
    if (p.hierarchy && p.name != "capacity" && p.name != "drf")
      error(key, v, "plugin " + p.name + ": enableHierarchy applies to the capacity plugin (and drf)");
    if (args != nullptr)
      for (const auto& [k, val] : args->entries) argument(key, v, p.name, k, val);
    return p;
  }

  void tiers(const std::string& key, const ParamValue& v) {
    auto flow = parse_param_tree(v.text);
    if (!flow || flow->kind != ParamTree::List || flow->items.empty()) {
      error(key, v,
            "expected a list of tiers, each a list of plugins ([[priority, gang], [drf, proportion]]) or "
            "{plugins: [{name: ..., arguments: {...}}]}, got " +
                quoted(v.text));
      return;
    }
    out_.tiers.clear();
    for (const ParamTree& tier : flow->items) {
      const ParamTree* list = &tier;
      if (tier.kind == ParamTree::Map) {
        list = nullptr;
        for (const auto& [k, val] : tier.entries)
          if (k == "plugins") list = &val;
      }
      if (list == nullptr || list->kind != ParamTree::List) {
        error(key, v, "a tier must be a list of plugins or a map with a plugins list");
        continue;
      }
      std::vector<PluginConf> plugins;
      for (const ParamTree& p : list->items)
        if (auto conf = plugin(key, v, p)) plugins.push_back(*conf);
      out_.tiers.push_back(std::move(plugins));
    }
  }

  void queue(const std::string& key, const ParamValue& v) {
    for (const auto& f : queue_fields()) {
      if (key.size() <= 7 + f.suffix.size() || !key.ends_with(f.suffix)) continue;
      const std::string name = key.substr(7, key.size() - 7 - f.suffix.size());
      QueueConf& q = out_.queues[name];
      where_[name][f.kind * kDims + f.dim] = v;
      switch (f.kind) {
        case 0: {
          auto n = parse_int(v.text);
          if (!n || *n < 1 || *n > 1'000'000)
            error(key, v, "expected an integer weight from 1 to 1000000, got " + quoted(v.text));
          else
            q.weight = *n;
          break;
        }
        case 1:
        case 2:
        case 6: {
          auto n = parse_quantity(f.dim, v.text);
          if (!n) {
            error(key, v,
                  std::string("expected a quantity such as ") +
                      (f.dim == 0   ? "8"
                       : f.dim == 1 ? "64 or 500m"
                                    : "256Gi") +
                      ", got " + quoted(v.text));
          } else {
            (f.kind == 1 ? q.capability : f.kind == 2 ? q.guarantee : q.deserved)[static_cast<std::size_t>(f.dim)] = *n;
          }
          break;
        }
        case 3:
          if (auto b = boolean(key, v, v.text)) q.reclaimable = *b;
          break;
        case 4: {
          auto n = parse_int(v.text);
          if (!n || *n < -2'000'000'000 || *n > 2'000'000'000)
            error(key, v, "expected an integer priority, got " + quoted(v.text));
          else
            q.priority = static_cast<std::int32_t>(*n);
          break;
        }
        case 5:
          if (v.text == "Open")
            q.state = QueueState::Open;
          else if (v.text == "Closing")
            q.state = QueueState::Closing;
          else if (v.text == "Closed")
            q.state = QueueState::Closed;
          else
            error(key, v, "unknown queue state " + quoted(v.text) + "; expected: Open, Closing, Closed");
          break;
        case 7:
          if (v.text.empty())
            error(key, v, "expected a queue name");
          else
            q.parent = v.text;
          break;
        case 8: q.hierarchy = v.text; break;
        case 9: q.hierarchy_weights = v.text; break;
        default: break;
      }
      return;
    }
  }

  // The Queue webhook's rules (webhooks/admission/queues/validate/validate_queue.go) and the
  // scheduler's conflicts (pkg/scheduler/util.go; docs/user-guide/how_to_use_capacity_plugin.md).
  void check_queues(const PolicyParams& params) {
    bool capacity = false, hierarchy = false, proportion = false, hdrf = false;
    for (const auto& tier : out_.tiers) {
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
        error("tiers", it != params.end() ? it->second : ParamValue{},
              "proportion and drf with hierarchy enabled conflict (in one tier)");
      }
    }
    check_hdrf(hdrf);
    if (capacity && proportion) {
      const auto it = params.find("tiers");
      const ParamValue at = it != params.end() ? it->second : ParamValue{};
      error("tiers", at,
            "the capacity and proportion plugins conflict; use one of them (capacity replaces proportion)");
    }
    auto loc = [&](const std::string& q, int kind, int dim) -> const ParamValue* {
      auto it = where_.find(q);
      if (it == where_.end()) return nullptr;
      auto f = it->second.find(kind * kDims + dim);
      return f == it->second.end() ? nullptr : &f->second;
    };
    auto err = [&](const std::string& q, int kind, int dim, const std::string& field, const std::string& msg) {
      if (const ParamValue* at = loc(q, kind, dim)) error("queues." + q + "." + field, *at, msg);
    };
    for (const auto& [name, q] : out_.queues) {
      if (!q.parent.empty() && !hierarchy)
        err(name, 7, 0, "parent", "a parent queue needs the capacity plugin with enableHierarchy: true");
      if (!capacity) continue;
      for (int d = 0; d < kDims; ++d) {
        const std::string dn = kDimName[d];
        if (loc(name, 2, d) != nullptr && q.guarantee[d] > 0 && (q.deserved[d] < 0 || q.deserved[d] < q.guarantee[d]))
          err(name, loc(name, 6, d) != nullptr ? 6 : 2, d, loc(name, 6, d) != nullptr ? "deserved" : "guarantee",
              "deserved[" + dn + "]" + (q.deserved[d] < 0 ? "" : "=" + quantity(d, q.deserved[d])) +
                  " must be >= guarantee[" + dn + "]=" + quantity(d, q.guarantee[d]));
        if (q.deserved[d] >= 0 && q.capability[d] >= 0 && q.deserved[d] > q.capability[d])
          err(name, 6, d, "deserved",
              "deserved[" + dn + "]=" + quantity(d, q.deserved[d]) + " must be <= capability[" + dn +
                  "]=" + quantity(d, q.capability[d]));
      }
    }
    if (!hierarchy) return;
    std::vector<std::string> names{"root"};
    for (const auto& [name, q] : out_.queues)
      if (name != "root") names.push_back(name);
    auto parent_of = [&](const std::string& q) -> std::string {
      auto it = out_.queues.find(q);
      return it == out_.queues.end() || it->second.parent.empty() ? "root" : it->second.parent;
    };
    bool tree_ok = true;
    for (const auto& [name, q] : out_.queues) {
      if (name == "root") {
        for (int kind : {1, 2, 6})
          for (int d = 0; d < kDims; ++d)
            err(name, kind, d,
                kind == 1   ? "capability"
                : kind == 2 ? "guarantee"
                            : "deserved",
                "the root queue's resources are not set by users: its capability is unlimited and its deserved and "
                "guarantee are its children's sums");
        if (!q.parent.empty()) err(name, 7, 0, "parent", "the root queue has no parent");
        tree_ok = tree_ok && q.parent.empty();
        continue;
      }
      if (q.parent.empty() || q.parent == "root") continue;
      if (q.parent == name) {
        err(name, 7, 0, "parent", "queue " + name + " cannot use itself as parent");
        tree_ok = false;
      } else if (!out_.queues.contains(q.parent)) {
        std::string msg = "unknown parent queue " + quoted(q.parent);
        if (auto s = sim::closest_match(q.parent, names)) msg += "; did you mean \"" + *s + "\"?";
        err(name, 7, 0, "parent", msg + " (a parent must be a queue of this block, or root)");
        tree_ok = false;
      }
    }
    if (!tree_ok) return;
    // Cycles and depth: walk up from every queue.
    for (const auto& [name, q] : out_.queues) {
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
        err(name, 7, 0, "parent", "cycle in the queue hierarchy: " + chain + name);
        tree_ok = false;
      } else if (static_cast<int>(path.size()) > kMaxQueueDepth) {
        err(name, 7, 0, "parent",
            "queue " + name + " exceeds the maximum allowed depth of " + std::to_string(kMaxQueueDepth) +
                " (the webhook's --max-queue-depth)");
      }
    }
    if (!tree_ok) return;
    for (const auto& [name, q] : out_.queues) {
      if (name == "root") continue;
      // validateChildAgainstAncestor: capability <= the nearest ancestor's that sets it.
      for (int d = 0; d < kDims; ++d) {
        if (q.capability[d] <= 0) continue;
        for (std::string a = parent_of(name); a != "root"; a = parent_of(a)) {
          const std::int64_t up = out_.queues.at(a).capability[d];
          if (up <= 0) continue;
          if (q.capability[d] > up)
            err(name, 1, d, "capability",
                "capability[" + std::string(kDimName[d]) + "]=" + quantity(d, q.capability[d]) +
                    " exceeds its ancestor " + a + "'s capability=" + quantity(d, up));
          break;
        }
      }
      // validateChildrenConstraints: the children's guarantee and deserved sum to at most the parent's.
      std::vector<std::string> children;
      for (const auto& [c, cq] : out_.queues)
        if (c != "root" && parent_of(c) == name) children.push_back(c);
      if (children.empty()) continue;
      for (int kind : {2, 6}) {
        const char* field = kind == 2 ? "guarantee" : "deserved";
        for (int d = 0; d < kDims; ++d) {
          std::int64_t sum = 0;
          const std::string* first = nullptr;
          for (const auto& c : children) {
            const auto& cq = out_.queues.at(c);
            const std::int64_t v = kind == 2 ? cq.guarantee[d] : cq.deserved[d];
            if (v <= 0) continue;
            sum += v;
            if (first == nullptr) first = &c;
          }
          const std::int64_t mine = std::max<std::int64_t>(0, kind == 2 ? q.guarantee[d] : q.deserved[d]);
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

  // Hierarchical DRF's queue annotations (plugins/drf/drf.go buildHierarchy, docs/design/hdrf.md).
  void check_hdrf(bool hdrf) {
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
    for (const auto& [name, q] : out_.queues) {
      const auto at = where_.find(name);
      if (at == where_.end()) continue;
      const auto hv = at->second.find(8 * kDims), wv = at->second.find(9 * kDims);
      if (hv == at->second.end() && wv == at->second.end()) continue;
      const std::string key = "queues." + name + ".annotations.volcano.sh/hierarchy";
      if (!hdrf) {
        error(key, hv != at->second.end() ? hv->second : wv->second,
              "the volcano.sh/hierarchy annotations need drf with enableHierarchy: true");
        continue;
      }
      if (hv == at->second.end()) {
        error(key + "-weights", wv->second, "volcano.sh/hierarchy-weights without volcano.sh/hierarchy");
        continue;
      }
      const auto parts = split(q.hierarchy);
      if (parts.front() != "root" || std::any_of(parts.begin(), parts.end(), [](const auto& x) { return x.empty(); })) {
        error(key, hv->second, "expected a path from the root such as root/eng/dev, got " + quoted(q.hierarchy));
        continue;
      }
      const auto weights = wv == at->second.end() ? std::vector<std::string>{} : split(q.hierarchy_weights);
      if (weights.size() != parts.size()) {
        error(key + "-weights", wv != at->second.end() ? wv->second : hv->second,
              "expected one weight per level of " + quoted(q.hierarchy) + ", got " + quoted(q.hierarchy_weights));
        continue;
      }
      bool ok = true;
      std::string node = "root";
      for (std::size_t i = 1; i < parts.size() && ok; ++i) {
        const auto w = parse_number(weights[i]);
        if (!w || *w <= 0) {
          error(key + "-weights", wv->second, "expected positive numbers, got " + quoted(q.hierarchy_weights));
          ok = false;
          break;
        }
        node += "/" + parts[i];
        const std::string norm = std::to_string(std::max(1.0, *w));
        const auto [it, fresh] = node_weight.emplace(node, std::make_pair(norm, name));
        if (!fresh && it->second.first != norm) {
          error(key + "-weights", wv->second,
                node + " has another weight in queue " + it->second.second +
                    "'s annotations (Volcano would take either)");
          ok = false;
        }
      }
      if (ok) paths.emplace_back(q.hierarchy, name);
    }
    // docs/design/hdrf.md: a queue containing both queues and jobs is not allowed.
    for (const auto& [p, qn] : paths)
      for (const auto& [o, on] : paths)
        if (o.starts_with(p + "/"))
          error("queues." + qn + ".annotations.volcano.sh/hierarchy", where_.at(qn).at(8 * kDims),
                p + " is above queue " + on + "'s " + o + "; a queue cannot hold both queues and jobs");
  }

  void run(const PolicyParams& params) {
    out_.tiers = default_tiers();
    for (const auto& [key, v] : params) {
      if (key == "actions") {
        actions(key, v);
      } else if (key == "tiers") {
        tiers(key, v);
      } else if (key == "schedule-period" || key == "termination_grace_period") {
        const auto d = sim::parse_duration(v.text);
        const bool period = key == "schedule-period";
        if (!d || *d < 0 || (period && *d <= 0)) {
          error(key, v,
                std::string("expected a ") + (period ? "positive " : "") + "duration such as 1s, 500ms or 30s, got " +
                    quoted(v.text));
        } else {
          (period ? out_.schedule_period : out_.termination_grace_period) = *d;
        }
      } else if (key == "minResources") {
        if (v.text == "auto" || v.text == "none")
          out_.min_resources = v.text == "auto";
        else
          error(key, v, "unknown minResources " + quoted(v.text) + "; expected: auto, none");
      } else if (key.starts_with("queues.")) {
        queue(key, v);
      } else if (key.starts_with("networkTopology.")) {
        network_topology(key, v);
      }
    }
    check_queues(params);
    check_network_topology(params);
  }

  // Job spec.networkTopology {mode, highestTierAllowed}, for the PodGroups of `kinds`.
  void network_topology(const std::string& key, const ParamValue& v) {
    const std::string field = key.substr(16);
    if (field == "mode") {
      if (v.text == "hard")
        out_.network_topology = NetworkTopologyMode::Hard;
      else if (v.text == "soft")
        out_.network_topology = NetworkTopologyMode::Soft;
      else
        error(key, v, "unknown mode " + quoted(v.text) + "; expected: hard, soft");
    } else if (field == "highestTierAllowed") {
      auto n = parse_int(v.text);
      if (!n || *n < 1 || *n > 64)
        error(key, v, "expected an integer from 1 to 64, got " + quoted(v.text));
      else
        out_.highest_tier_allowed = static_cast<std::int32_t>(*n);
    } else if (field == "kinds") {
      std::vector<std::string> unknown;
      parse_job_kinds(v.text, out_.network_topology_kinds, unknown);
      for (const auto& u : unknown)
        error(key, v, "unknown job kind " + quoted(u) + "; expected: train, inference, interactive, batch");
    } else {
      std::string msg = "unknown key";
      static const std::vector<std::string> fields = {"mode", "highestTierAllowed", "kinds"};
      if (auto s = sim::closest_match(field, fields)) msg += "; did you mean \"networkTopology." + *s + "\"?";
      error(key, v, msg + " (expected: mode, highestTierAllowed, kinds)");
    }
  }

  // Hard mode needs highestTierAllowed; the network-topology-aware plugin must be in the tiers
  // (Session.HyperNodeGradientForJobFn without it returns the whole cluster): added to the last
  // tier of the default ones, an error when `tiers` is given without it.
  void check_network_topology(const PolicyParams& params) {
    if (out_.network_topology == NetworkTopologyMode::Off) {
      for (const auto& [key, v] : params)
        if (key.starts_with("networkTopology.") && key != "networkTopology.mode") {
          error(key, v, "networkTopology needs a mode (hard or soft)");
          break;
        }
      return;
    }
    const auto& mode = params.at("networkTopology.mode");
    if (out_.network_topology == NetworkTopologyMode::Hard && out_.highest_tier_allowed == 0)
      error("networkTopology.mode", mode, "hard mode needs highestTierAllowed");
    bool listed = false;
    for (const auto& tier : out_.tiers)
      for (const auto& p : tier) listed = listed || p.name == "network-topology-aware";
    if (listed) return;
    if (params.count("tiers") != 0)
      error("tiers", params.at("tiers"),
            "networkTopology needs the network-topology-aware plugin in the tiers (Volcano ignores the constraint "
            "without it)");
    else
      out_.tiers.back().push_back(PluginConf{"network-topology-aware"});
  }

 private:
  Config& out_;
  std::map<std::string, std::map<int, ParamValue>> where_;  // queue -> (kind, dim) -> its value
};

}  // namespace

std::vector<std::vector<PluginConf>> default_tiers() {
  PluginConf gang{"gang"}, drf{"drf"};
  gang.preemptable = false;
  drf.preemptable = false;
  return {{PluginConf{"priority"}, gang, PluginConf{"conformance"}},
          {PluginConf{"overcommit"}, drf, PluginConf{"predicates"}, PluginConf{"proportion"}, PluginConf{"nodeorder"},
           PluginConf{"binpack"}}};
}

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> k = {"actions",
                                  "tiers",
                                  "schedule-period",
                                  "termination_grace_period",
                                  "minResources",
                                  "networkTopology.mode",
                                  "networkTopology.highestTierAllowed",
                                  "networkTopology.kinds"};
    for (const auto& f : queue_fields()) k.push_back("queues.<queue>" + std::string(f.suffix));
    return k;
  }();
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  Config c;
  Parser p(c);
  p.run(params);
  for (auto& e : p.errors) errors.push_back(std::move(e));
}

Config parse_config(const PolicyParams& params) {
  Config c;
  Parser p(c);
  p.run(params);
  if (!p.errors.empty()) throw p.errors.front();
  return c;
}

}  // namespace headroom::policies::volcano
