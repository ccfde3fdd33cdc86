#include "scenarios/scenario.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "models/gpu_types.hpp"
#include "models/topology.hpp"
#include "policies/common/manifests.hpp"
#include "policies/common/params.hpp"
#include "policies/registry.hpp"
#include "policies/split/split.hpp"
#include "policies/system_module.hpp"
#include "sim/errors.hpp"
#include "sim/read_text.hpp"
#include "sim/suggest.hpp"
#include "sim/text.hpp"
#include "sim/yaml_documents.hpp"
#include "traces/import.hpp"

namespace headroom::scenarios {

namespace {

using sim::InputError;

// Longest value quoted back in a message; garbage input can hold megabyte-long scalars.
constexpr std::size_t kMaxQuoted = 60;
// Nested maps under `policy:` deeper than this are refused (flattened keys stay readable).
constexpr int kMaxParamDepth = 8;
// Nodes visited while flattening the `policy:` block; bounds alias bombs and cycles.
constexpr int kMaxParamNodes = 10'000;
// Lists and maps nest at most this deep inside one policy parameter.
constexpr int kMaxNesting = 32;
// Problems listed at most; the rest are counted in one last line.
constexpr std::size_t kMaxErrors = 100;
// Each extra copy of a job gets trace_id = original * 1000 + copy, so at most 999 copies.
constexpr double kMaxArrivalScale = 1000.0;
constexpr double kMaxPrice = 1e9;
constexpr std::int32_t kMaxReplicas = 100000;  // per GPU-hour, in any currency
// Link bandwidths in Gbit/s stay below this (100 Pbit/s).
constexpr double kMaxGbps = 1e8;
// Cluster size limits: models/cluster.hpp.
constexpr std::int64_t kMaxPoolNodes = models::kMaxClusterNodes;
constexpr std::int64_t kMaxGpusPerNode = models::kMaxNodeGpus;
constexpr std::int64_t kMaxCpusPerNode = models::kMaxNodeCpus;
// A tenant's fair-share weight: ratios of weights matter, so six orders of magnitude are plenty
// (1e308 made every share ratio overflow into nonsense).
constexpr double kMaxWeight = 1e6;
// Default bandwidth of a node link when a topology does not give one: one 400 Gbit/s NIC
// (NDR InfiniBand / 400GbE).
constexpr double kDefaultNodeGbps = 400;

// A value quoted for a message: control characters as \xNN, long ones cut. The text has been
// checked to be UTF-8 (check_text), so multi-byte characters pass through and are never split.
std::string quote(std::string_view text) {
  std::string out = "\"";
  std::size_t n = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool continuation = sim::utf8_continuation(ch);
    if (n >= kMaxQuoted && !continuation) {
      out += "...";
      break;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    if (!continuation) ++n;
  }
  return out + "\"";
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return quote(node.Scalar());
    default: return "nothing";
  }
}

std::string join_keys(std::span<const std::string> keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item_path(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

struct Location {
  int line = 0;
  int column = 0;
};

Location location_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

// A value with where it came from. `key` is the map key that holds it (undefined for list items);
// errors on a missing value (`key:` with nothing after it) point at the key, because yaml-cpp
// places an empty value at the start of the next line.
struct Entry {
  YAML::Node key;  // a null node for list items
  YAML::Node value;
  std::string path;
  bool has_key = true;

  Location location() const {
    if (value.IsNull() && has_key) return location_of(key);
    return location_of(value);
  }
};

// The first byte that a scenario text cannot hold: invalid UTF-8, NUL or another control character.
std::optional<InputError> check_text(const std::string& text, const std::string& file) {
  std::size_t i = 0;
  int line = 1;
  int column = 1;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = 1;
    bool ok = true;
    if (c < 0x80) {
      ok = c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
      ok = ok && c != 0x7f;
    } else {
      std::uint32_t cp = 0;
      if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
      } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
      } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
      } else {
        ok = false;
      }
      if (ok && i + len > text.size()) ok = false;
      for (std::size_t k = 1; ok && k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        if ((cc & 0xc0) != 0x80) ok = false;
        cp = (cp << 6) | (cc & 0x3f);
      }
      // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
      if (ok &&
          ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)))
        ok = false;
    }
    if (!ok) {
      const std::string byte = sim::hex_byte(c);
      return InputError(file, line, column, "",
                        c < 0x80
                            ? "not a text file: control character " + byte + " is not allowed in a scenario file"
                            : "not UTF-8 text: byte " + byte + " is not valid UTF-8 (a scenario file must be UTF-8)");
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += len;
  }
  return std::nullopt;
}

// Checks the keys of one YAML map against the keys it may have.
class MapReader {
 public:
  MapReader(const YAML::Node& map, std::string path, std::vector<std::string> known, std::vector<InputError>& errors,
            const std::string& file)
      : map_(map), path_(std::move(path)), file_(file), errors_(errors) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        add(location_of(key), path_, "expected a key name, got " + describe(key));
        continue;
      }
      const std::string& name = key.Scalar();
      const std::string where = child_path(path_, name);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string msg = "unknown key " + quote(name);
        if (auto s = sim::closest_match(name, known))
          msg += "; did you mean " + quote(*s) + "?";
        else
          msg += " (expected one of: " + join_keys(known) + ")";
        add(location_of(key), where, msg);
        continue;
      }
      if (const Entry* first = find(name)) {
        add(location_of(key), where,
            "duplicate key " + quote(name) + " (first given at line " + std::to_string(first->location().line) + ")");
        continue;
      }
      entries_.push_back({key, it->second, where});
    }
  }

  const Entry* find(std::string_view name) const {
    for (const auto& e : entries_)
      if (e.key.Scalar() == name) return &e;
    return nullptr;
  }

  // The entry for `name`, or null after reporting it missing at the map's location.
  const Entry* require(std::string_view name) {
    const Entry* e = find(name);
    if (e == nullptr) add(location_of(map_), child_path(path_, name), "missing required key " + quote(name));
    return e;
  }

  // The entry for `name` when given with a value; `key:` with nothing counts as not given.
  const Entry* optional(std::string_view name) const {
    const Entry* e = find(name);
    return e != nullptr && !e->value.IsNull() ? e : nullptr;
  }

 private:
  void add(Location at, std::string where, std::string message) {
    errors_.emplace_back(file_, at.line, at.column, std::move(where), std::move(message));
  }

  YAML::Node map_;
  std::string path_;
  const std::string& file_;
  std::vector<InputError>& errors_;
  std::vector<Entry> entries_;
};

class Loader {
 public:
  explicit Loader(const std::string& file) : file_(file) {}

  std::vector<InputError>& errors() { return errors_; }

  void load(const YAML::Node& root, Scenario& out) {
    if (!root.IsMap()) {
      error(location_of(root), "",
            "expected a map with keys name, cluster, policy and workload at the top level, got " + describe(root));
      return;
    }
    MapReader top(root, "",
                  {"name", "seed", "cluster", "tenants", "policy", "policies", "workload", "horizon", "output",
                   "variants", "seeds", "failures", "costs", "services", "runtime", "targets", "split", "prime_time"},
                  errors_, file_);
    if (const Entry* e = top.require("name")) {
      if (auto v = string_value(*e)) out.name = *v;
    }
    if (const Entry* e = top.optional("seed")) {
      if (auto v = unsigned_value(*e)) out.seed = *v;
    }
    if (const Entry* e = top.require("cluster")) {
      cluster_at_ = location_of(e->key);
      load_cluster(*e, out.cluster);
    }
    out.topology_spec = topology_spec_;
    if (const Entry* e = top.optional("tenants")) load_tenants(*e, out.tenants, out.queue_grants);
    cluster_ = &out.cluster;
    const Entry* split = top.optional("split");
    if (split != nullptr) {
      // The systems of the split name their policies; `policy:` would name a second one.
      if (const Entry* e = top.find("policy"))
        error(location_of(e->key), e->path,
              "a scenario with split: runs the policy of each system (split.systems.NAME.policy); remove "
              "policy: and give its parameters under policies: {NAME: {...}}");
      out.policy.name = "split";
    } else if (const Entry* e = top.require("policy")) {
      load_policy(*e, out.policy);
    }
    if (const Entry* e = top.optional("policies")) load_policy_overrides(*e, out.policy_overrides);
    if (split != nullptr) load_split(*split, out);
    if (const Entry* e = top.require("workload")) load_workload(*e, out.workload);
    if (const Entry* e = top.optional("horizon")) {
      if (auto v = duration_value(*e, true)) out.horizon = *v;
    }
    if (const Entry* e = top.optional("output")) load_output(*e, out.output);
    if (const Entry* e = top.optional("failures")) load_failures(*e, out.cluster, out.failures);
    if (const Entry* e = top.optional("costs")) load_costs(*e, out.cluster, out.costs);
    if (const Entry* e = top.optional("services")) load_services(*e, out.services);
    if (const Entry* e = top.optional("runtime")) load_runtime(*e, out.cluster, out.runtime);
    if (const Entry* e = top.optional("prime_time")) load_prime_time(*e, out.prime_time);
    if (const Entry* e = top.optional("targets")) {
      // Strings here; their syntax is checked where they are scored (planner::parse_target).
      for (const Entry& item : list_items(*e)) {
        if (auto v = string_value(item)) {
          const Location at = item.location();
          out.targets.push_back(TargetSpec{*v, at.line, at.column});
        }
      }
    }
  }

 private:
  void error(Location at, std::string where, std::string message) {
    errors_.emplace_back(file_, at.line, at.column, std::move(where), std::move(message));
  }
  void error(const Entry& e, std::string message) { error(e.location(), e.path, std::move(message)); }

  bool expect_map(const Entry& e, std::string_view what) {
    if (e.value.IsMap()) return true;
    error(e, "expected " + std::string(what) + ", got " + describe(e.value));
    return false;
  }

  // A non-empty string scalar.
  std::optional<std::string> string_value(const Entry& e) {
    if (!e.value.IsScalar()) {
      error(e, "expected a string, got " + describe(e.value));
      return std::nullopt;
    }
    if (e.value.Scalar().empty()) {
      error(e, "expected a non-empty string, got \"\"");
      return std::nullopt;
    }
    return e.value.Scalar();
  }

  std::optional<std::int64_t> integer_value(const Entry& e, std::int64_t min, std::int64_t max) {
    const std::string expected = "expected an integer >= " + std::to_string(min);
    if (!e.value.IsScalar()) {
      error(e, expected + ", got " + describe(e.value));
      return std::nullopt;
    }
    std::string_view text = e.value.Scalar();
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || end != text.data() + text.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      error(e, expected + ", got " + describe(e.value));
      return std::nullopt;
    }
    if (ec == std::errc::result_out_of_range || v > max) {
      error(e, expected + " and <= " + std::to_string(max) + ", got " + describe(e.value));
      return std::nullopt;
    }
    if (v < min) {
      error(e, expected + ", got " + describe(e.value));
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::int32_t> int32_value(const Entry& e, std::int32_t min) {
    auto v = integer_value(e, min, INT32_MAX);
    if (!v) return std::nullopt;
    return static_cast<std::int32_t>(*v);
  }

  std::optional<std::uint64_t> unsigned_value(const Entry& e) {
    const std::string expected = "expected a non-negative integer";
    if (!e.value.IsScalar()) {
      error(e, expected + ", got " + describe(e.value));
      return std::nullopt;
    }
    std::string_view text = e.value.Scalar();
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || end != text.data() + text.size() || ec != std::errc()) {
      error(e, expected + (ec == std::errc::result_out_of_range ? " < 2^64" : "") + ", got " + describe(e.value));
      return std::nullopt;
    }
    return v;
  }

  // A finite number > 0 and < max.
  std::optional<double> positive_number(const Entry& e, double max) {
    std::string expected = "expected a number > 0";
    if (max < INFINITY) {
      std::ostringstream s;
      s << " and < " << max;
      expected += s.str();
    }
    const auto v = finite_number(e);
    if (!v || *v <= 0 || *v >= max) {
      error(e, expected + ", got " + describe(e.value));
      return std::nullopt;
    }
    return v;
  }

  // A scalar that reads whole as a finite number (a leading '+' allowed), else nullopt.
  static std::optional<double> finite_number(const Entry& e) {
    if (!e.value.IsScalar()) return std::nullopt;
    std::string_view text = e.value.Scalar();
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || end != text.data() + text.size() || ec != std::errc() || !std::isfinite(v)) return std::nullopt;
    return v;
  }

  // A YAML integer (seconds) or a string for sim::parse_duration; `positive` refuses zero.
  std::optional<sim::Tick> duration_value(const Entry& e, bool positive) {
    std::optional<sim::Tick> v;
    if (e.value.IsScalar()) v = sim::parse_duration(e.value.Scalar());
    if (!v) {
      error(e, "expected a duration like 90s, 15m, 2h or 7d, got " + describe(e.value));
      return std::nullopt;
    }
    if (positive && *v <= 0) {
      error(e, "expected a duration > 0, got " + describe(e.value));
      return std::nullopt;
    }
    return v;
  }

  std::optional<bool> bool_value(const Entry& e) {
    if (e.value.IsScalar()) {
      std::string t = e.value.Scalar();
      for (auto& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (t == "true" || t == "yes" || t == "on") return true;
      if (t == "false" || t == "no" || t == "off") return false;
    }
    error(e, "expected true or false, got " + describe(e.value));
    return std::nullopt;
  }

  // The items of a list, each as an entry with its [index] path.
  std::vector<Entry> list_items(const Entry& e) {
    std::vector<Entry> items;
    if (!e.value.IsSequence()) {
      error(e, "expected a list, got " + describe(e.value));
      return items;
    }
    std::size_t i = 0;
    for (auto it = e.value.begin(); it != e.value.end(); ++it, ++i)
      items.push_back({YAML::Node(), *it, item_path(e.path, i), false});
    return items;
  }

  void load_cluster(const Entry& e, models::ClusterSpec& cluster) {
    if (!expect_map(e, "a map with a pools list")) return;
    // A system's own description of its nodes may stand for the pools (SystemModule::cluster_file,
    // e.g. slurm.conf's GPU nodes).
    std::vector<std::string> keys{"pools", "topology"};
    for (const auto& system : policies::system_modules())
      if (system.cluster_file != nullptr) keys.emplace_back(system.cluster_file->key);
    MapReader reader(e.value, e.path, keys, errors_, file_);
    for (const auto& system : policies::system_modules()) {
      if (system.cluster_file == nullptr) continue;
      const std::string key(system.cluster_file->key);
      const Entry* conf = reader.optional(key);
      if (conf == nullptr) continue;
      const auto text = string_value(*conf);
      if (const auto imported =
              text ? read_site_file(*system.cluster_file, *text, conf->path, conf->location()) : std::nullopt) {
        cluster.pools = imported->cluster.pools;
        if (reader.optional("pools") != nullptr) error(*conf, "give either pools or " + key + ", not both");
      }
      return;
    }
    const Entry* pools = reader.require("pools");
    if (pools == nullptr) return;
    const auto items = list_items(*pools);
    if (pools->value.IsSequence() && items.empty()) error(*pools, "expected at least one pool, got an empty list");
    FirstLines names;
    std::int64_t total_nodes = 0;
    for (const auto& item : items) {
      if (!expect_map(item, "a pool (a map with name, nodes, gpus_per_node and gpu_type)")) continue;
      models::NodePool pool;
      MapReader r(item.value, item.path,
                  {"name", "nodes", "gpus_per_node", "gpu_type", "cpus_per_node", "memory_gib", "labels"}, errors_,
                  file_);
      std::vector<std::pair<std::string, std::string>> labels;  // node labels: Kueue nodeLabels select by them
      if (const Entry* f = r.optional("labels")) {
        if (expect_map(*f, "a map of node labels, e.g. {nvidia.com/gpu.product: A100}")) {
          for (auto it = f->value.begin(); it != f->value.end(); ++it) {
            const Entry label{it->first, it->second, f->path + "." + it->first.Scalar(), true};
            if (auto v = string_value(label)) labels.emplace_back(it->first.Scalar(), *v);
          }
        }
      }
      pool_labels_.push_back(std::move(labels));
      if (const Entry* f = r.require("name")) {
        if (auto v = string_value(*f)) {
          pool.name = *v;
          note_first_name(*f, *v, names, "pool name");
        }
      }
      if (const Entry* f = r.require("nodes")) {
        pool.nodes = static_cast<std::int32_t>(integer_value(*f, 1, kMaxPoolNodes).value_or(0));
        if (total_nodes + pool.nodes > kMaxPoolNodes && total_nodes <= kMaxPoolNodes)
          error(*f, "the cluster has more than " + std::to_string(kMaxPoolNodes) +
                        " nodes with this pool (the limit of one simulation)");
        total_nodes += pool.nodes;
      }
      if (const Entry* f = r.require("gpus_per_node"))
        pool.gpus_per_node = static_cast<std::int32_t>(integer_value(*f, 0, kMaxGpusPerNode).value_or(0));
      // Any non-empty model name is accepted: traces name undisclosed models (G1, G2) that are
      // not in the catalogue, so an unknown name is not an error here.
      if (const Entry* f = r.require("gpu_type")) pool.gpu_type = string_value(*f).value_or("");
      if (const Entry* f = r.optional("cpus_per_node"))
        pool.cpus_per_node = static_cast<std::int32_t>(integer_value(*f, 0, kMaxCpusPerNode).value_or(0));
      if (const Entry* f = r.optional("memory_gib"))
        pool.memory_gib = integer_value(*f, 0, INT64_MAX / 1024).value_or(0);
      cluster.pools.push_back(std::move(pool));
    }
    const Entry* topology = reader.optional("topology");
    if (topology == nullptr) return;
    for (const auto& pool : cluster.pools)
      if (pool.nodes <= 0 || pool.name.empty()) return;  // reported above; node names are unknown
    load_topology(*topology, cluster);
  }

  // ---- cluster.topology (docs/topology.md) ----

  // Nodes by name or hostlist range: "a100-3", "a100-[0-15]", "a100-[0-3,8]", or a list of them.
  std::vector<models::NodeId> node_set(const Entry& e, const models::ClusterSpec& cluster) {
    std::vector<models::NodeId> out;
    if (e.value.IsSequence()) {
      for (const Entry& item : list_items(e)) {
        auto more = node_set(item, cluster);
        out.insert(out.end(), more.begin(), more.end());
      }
      if (e.value.size() == 0) error(e, "expected at least one node, got an empty list");
      return out;
    }
    auto text = string_value(e);
    if (!text) return out;
    std::vector<std::string> names;
    const auto open = text->find('[');
    if (open == std::string::npos) {
      names.push_back(*text);
    } else {
      const std::string prefix = text->substr(0, open);
      bool ok = text->back() == ']' && open + 2 < text->size();
      std::string_view body = ok ? std::string_view(*text).substr(open + 1, text->size() - open - 2) : "";
      while (ok && !body.empty()) {
        const auto comma = body.find(',');
        const std::string_view part = body.substr(0, comma);
        body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
        const auto dash = part.find('-');
        std::uint32_t lo = 0, hi = 0;
        const std::string_view a = part.substr(0, dash);
        const std::string_view b = dash == std::string_view::npos ? a : part.substr(dash + 1);
        const auto r1 = std::from_chars(a.data(), a.data() + a.size(), lo);
        const auto r2 = std::from_chars(b.data(), b.data() + b.size(), hi);
        ok = !a.empty() && !b.empty() && r1.ec == std::errc() && r1.ptr == a.data() + a.size() &&
             r2.ec == std::errc() && r2.ptr == b.data() + b.size() && lo <= hi &&
             hi - lo <= static_cast<std::uint32_t>(std::max(cluster.total_nodes(), 1));
        for (std::uint32_t i = lo; ok && i <= hi; ++i) names.push_back(prefix + std::to_string(i));
      }
      if (!ok) {
        error(e, "expected a node name or a range like \"a100-[0-15]\" or \"a100-[0-3,8]\", got " + describe(e.value));
        return out;
      }
    }
    for (const std::string& name : names) {
      if (auto node = models::find_node(cluster, name)) {
        out.push_back(*node);
        continue;
      }
      std::string msg = "no node named " + quote(name);
      const auto dash = name.rfind('-');
      const std::string pool = dash == std::string::npos ? name : name.substr(0, dash);
      std::vector<std::string> pools;
      for (const auto& p : cluster.pools) {
        pools.push_back(p.name);
        if (p.name == pool)
          msg += " (pool " + quote(pool) + " has nodes " + pool + "-0 to " + pool + "-" + std::to_string(p.nodes - 1) +
                 ")";
      }
      if (std::find(pools.begin(), pools.end(), pool) == pools.end()) {
        msg += " (nodes are named <pool>-<index>";
        if (auto m = sim::closest_match(pool, pools)) msg += "; did you mean pool " + quote(*m) + "?";
        msg += ")";
      }
      error(e, msg);
      break;
    }
    return out;
  }

  // A bandwidth in Gbit/s (> 0).
  std::optional<double> gbps_value(const Entry& e) { return positive_number(e, kMaxGbps); }

  void load_topology(const Entry& e, models::ClusterSpec& cluster) {
    if (!expect_map(e, "a map with one of switches, fat_tree, racks or rail")) return;
    MapReader r(e.value, e.path,
                {"switches", "fat_tree", "racks", "rail", "nvlink_gbps", "comm_intensity", "reference_gbps"}, errors_,
                file_);
    const std::size_t before = errors_.size();
    const Entry* forms[] = {r.optional("switches"), r.optional("fat_tree"), r.optional("racks"), r.optional("rail")};
    const int given = (forms[0] != nullptr) + (forms[1] != nullptr) + (forms[2] != nullptr) + (forms[3] != nullptr);
    if (given != 1) {
      error(e, given == 0 ? "a topology needs one of switches (an explicit list), fat_tree, racks or rail"
                          : "give only one of switches, fat_tree, racks or rail");
      return;
    }
    models::TopologySpec spec;
    if (forms[0] != nullptr) load_switches(*forms[0], cluster, spec);
    if (forms[1] != nullptr) load_fat_tree(*forms[1], cluster, spec);
    if (forms[2] != nullptr) load_rack_topology(*forms[2], cluster, spec);
    if (forms[3] != nullptr) load_rail(*forms[3], cluster, spec);
    if (const Entry* f = r.optional("nvlink_gbps")) {
      if (expect_map(*f, "a map from GPU type to its intra-node bandwidth in Gbit/s, e.g. {A100: 4800}")) {
        std::vector<std::string> types;
        for (const auto& pool : cluster.pools)
          if (std::find(types.begin(), types.end(), pool.gpu_type) == types.end()) types.push_back(pool.gpu_type);
        MapReader items(f->value, f->path, types, errors_, file_);
        for (const std::string& type : types)
          if (const Entry* g = items.optional(type))
            if (auto v = gbps_value(*g)) spec.nvlink_gbps.emplace_back(type, *v);
      }
    }
    if (const Entry* f = r.optional("comm_intensity")) {
      if (expect_map(*f, "a map from job kind (train, inference, interactive, batch) to a number from 0 to 1")) {
        static const std::vector<std::string> kKinds = {"train", "inference", "interactive", "batch"};
        MapReader items(f->value, f->path, kKinds, errors_, file_);
        for (std::size_t k = 0; k < kKinds.size(); ++k)
          if (const Entry* g = items.optional(kKinds[k]))
            spec.intensity.by_kind[k] = number_in(*g, 0.0, 1.0).value_or(spec.intensity.by_kind[k]);
      }
    }
    if (const Entry* f = r.optional("reference_gbps")) spec.reference_gbps = gbps_value(*f).value_or(0);
    if (errors_.size() != before) return;
    std::string why;
    cluster.topology = models::Topology::build(cluster, spec, why);
    if (!cluster.topology) error(e, why);
    if (cluster.topology) topology_spec_ = std::make_shared<const models::TopologySpec>(std::move(spec));
  }

  void load_switches(const Entry& e, const models::ClusterSpec& cluster, models::TopologySpec& spec) {
    struct Item {
      Entry entry;
      const Entry* name = nullptr;
      const Entry* level = nullptr;
      const Entry* nodes = nullptr;
      std::vector<Entry> children;
      int given_level = 0;
    };
    std::vector<Item> items;
    std::vector<std::string> names;
    std::vector<std::pair<std::string, int>> owner(static_cast<std::size_t>(cluster.total_nodes()), {"", 0});
    const auto list = list_items(e);
    if (e.value.IsSequence() && list.empty()) error(e, "expected at least one switch, got an empty list");
    std::vector<MapReader> readers;
    readers.reserve(list.size());
    for (const Entry& item : list) {
      if (!expect_map(item, "a switch (a map with name and nodes or switches)")) continue;
      readers.emplace_back(item.value, item.path,
                           std::vector<std::string>{"name", "level", "nodes", "switches", "node_gbps", "uplink_gbps"},
                           errors_, file_);
      MapReader& r = readers.back();
      Item it;
      it.entry = item;
      models::TopologySpec::Switch sw;
      it.name = r.require("name");
      if (it.name != nullptr) {
        if (auto v = string_value(*it.name)) {
          if (std::find(names.begin(), names.end(), *v) != names.end())
            error(*it.name, "duplicate switch name " + quote(*v));
          sw.name = *v;
        }
      }
      names.push_back(sw.name);
      it.level = r.optional("level");
      if (it.level != nullptr) it.given_level = int32_value(*it.level, 1).value_or(0);
      it.nodes = r.optional("nodes");
      const Entry* children = r.optional("switches");
      if (it.nodes != nullptr && children != nullptr) {
        error(*children, "a switch links either nodes (a leaf) or switches, not both");
      } else if (it.nodes == nullptr && children == nullptr) {
        error(item, "a switch needs nodes (a leaf) or switches (the switches below it)");
      }
      if (it.nodes != nullptr) {
        sw.nodes = node_set(*it.nodes, cluster);
        std::vector<models::NodeId> unique;
        for (models::NodeId node : sw.nodes) {
          auto& [by, line] = owner[node];
          if (!by.empty()) {
            error(*it.nodes, "node " + quote(models::node_name(cluster, node)) + " is already under switch " +
                                 quote(by) + " (line " + std::to_string(line) +
                                 "); a node links to one leaf switch (for rails use the rail generator)");
            continue;
          }
          by = sw.name.empty() ? "?" : sw.name;
          line = it.nodes->location().line;
          unique.push_back(node);
        }
        sw.nodes = std::move(unique);
        sw.node_gbps = kDefaultNodeGbps;
        if (const Entry* g = r.optional("node_gbps")) sw.node_gbps = gbps_value(*g).value_or(kDefaultNodeGbps);
      } else if (const Entry* g = r.optional("node_gbps")) {
        error(*g, "node_gbps applies to a leaf (a switch with nodes)");
      }
      if (children != nullptr) it.children = list_items(*children);
      if (const Entry* g = r.optional("uplink_gbps")) sw.uplink_gbps = gbps_value(*g).value_or(0);
      spec.switches.push_back(std::move(sw));
      items.push_back(std::move(it));
    }
    // Children -> parents.
    for (std::size_t s = 0; s < items.size(); ++s) {
      for (const Entry& child : items[s].children) {
        auto v = string_value(child);
        if (!v) continue;
        const auto found = std::find(names.begin(), names.end(), *v);
        if (found == names.end()) {
          std::string msg = "no switch named " + quote(*v);
          if (auto m = sim::closest_match(*v, names)) msg += "; did you mean " + quote(*m) + "?";
          error(child, msg);
          continue;
        }
        const auto c = static_cast<std::size_t>(found - names.begin());
        auto& parents = spec.switches[c].parents;
        if (std::find(parents.begin(), parents.end(), s) != parents.end()) {
          error(child, "switch " + quote(*v) + " is listed twice");
          continue;
        }
        parents.push_back(static_cast<models::SwitchId>(s));
      }
    }
    // Levels: a leaf is 1, a switch one above its highest child (or its `level:` when higher).
    std::vector<int> state(items.size(), 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::size_t> path;
    bool cycle = false;
    std::function<int(std::size_t)> level_of = [&](std::size_t s) -> int {
      if (state[s] == 2) return spec.switches[s].level;
      if (state[s] == 1) {
        if (!cycle) {
          std::string text;
          for (auto it = std::find(path.begin(), path.end(), s); it != path.end(); ++it)
            text += quote(names[*it]) + " -> ";
          error(*items[s].name, "switches form a cycle: " + text + quote(names[s]));
        }
        cycle = true;
        return 1;
      }
      state[s] = 1;
      path.push_back(s);
      int level = 1;
      for (std::size_t c = 0; c < items.size(); ++c) {
        const auto& parents = spec.switches[c].parents;
        if (std::find(parents.begin(), parents.end(), s) != parents.end()) level = std::max(level, level_of(c) + 1);
      }
      path.pop_back();
      state[s] = 2;
      const Item& it = items[s];
      if (it.given_level > 0) {
        if (it.nodes != nullptr && it.given_level != 1)
          error(*it.level, "a switch with nodes is a leaf (level 1), got " + describe(it.level->value));
        else if (it.given_level < level)
          error(*it.level, "expected a level >= " + std::to_string(level) + " (one above the switches below it), got " +
                               describe(it.level->value));
        else
          level = it.given_level;
      }
      spec.switches[s].level = level;
      return level;
    };
    for (std::size_t s = 0; s < items.size(); ++s)
      if (items[s].name != nullptr) level_of(s);
  }

  void load_fat_tree(const Entry& e, const models::ClusterSpec& cluster, models::TopologySpec& spec) {
    if (!expect_map(e, "a map with k, or nodes_per_leaf and leaves_per_spine")) return;
    MapReader r(
        e.value, e.path,
        {"k", "nodes_per_leaf", "leaves_per_spine", "node_gbps", "uplink_gbps", "spine_uplink_gbps", "link_gbps"},
        errors_, file_);
    const Entry* k = r.optional("k");
    if (k != nullptr) {
      for (const char* other : {"nodes_per_leaf", "leaves_per_spine", "node_gbps", "uplink_gbps", "spine_uplink_gbps"})
        if (const Entry* g = r.optional(other))
          error(*g,
                std::string(other) + " does not apply to a k-ary fat tree (k sets the shape; link_gbps every link)");
      const auto v = int32_value(*k, 2);
      if (!v) return;
      const std::int64_t capacity = static_cast<std::int64_t>(*v) * *v * *v / 4;
      if (*v % 2 != 0 || *v > 1024) {
        error(*k, "expected an even k from 2 to 1024 (switch ports), got " + describe(k->value));
        return;
      }
      if (capacity < cluster.total_nodes()) {
        error(*k, "a k=" + std::to_string(*v) + " fat tree holds " + std::to_string(capacity) +
                      " nodes (k^3/4); the cluster has " + std::to_string(cluster.total_nodes()));
        return;
      }
      double link = kDefaultNodeGbps;
      if (const Entry* g = r.optional("link_gbps")) link = gbps_value(*g).value_or(link);
      spec = models::fat_tree_k_spec(cluster, *v, link);
      return;
    }
    if (const Entry* g = r.optional("link_gbps")) error(*g, "link_gbps applies to a k-ary fat tree (with k)");
    const Entry* npl = r.require("nodes_per_leaf");
    if (npl == nullptr) return;
    const auto nodes_per_leaf = int32_value(*npl, 1);
    std::int32_t leaves_per_spine = INT32_MAX;
    if (const Entry* g = r.optional("leaves_per_spine")) leaves_per_spine = int32_value(*g, 1).value_or(INT32_MAX);
    double node = kDefaultNodeGbps, up = 0, spine_up = 0;
    if (const Entry* g = r.optional("node_gbps")) node = gbps_value(*g).value_or(node);
    if (const Entry* g = r.optional("uplink_gbps")) up = gbps_value(*g).value_or(0);
    if (const Entry* g = r.optional("spine_uplink_gbps")) spine_up = gbps_value(*g).value_or(0);
    if (nodes_per_leaf) spec = models::leaf_spine_spec(cluster, *nodes_per_leaf, leaves_per_spine, node, up, spine_up);
  }

  void load_rack_topology(const Entry& e, const models::ClusterSpec& cluster, models::TopologySpec& spec) {
    if (!expect_map(e, "a map with nodes_per_rack")) return;
    MapReader r(e.value, e.path, {"nodes_per_rack", "node_gbps", "uplink_gbps"}, errors_, file_);
    double node = kDefaultNodeGbps, up = 0;
    if (const Entry* g = r.optional("node_gbps")) node = gbps_value(*g).value_or(node);
    if (const Entry* g = r.optional("uplink_gbps")) up = gbps_value(*g).value_or(0);
    if (const Entry* g = r.require("nodes_per_rack"))
      if (auto n = int32_value(*g, 1)) spec = models::racks_spec(cluster, *n, node, up);
  }

  void load_rail(const Entry& e, const models::ClusterSpec& cluster, models::TopologySpec& spec) {
    if (!expect_map(e, "a map with nodes_per_group (and rails)")) return;
    MapReader r(e.value, e.path, {"nodes_per_group", "rails", "node_gbps", "uplink_gbps"}, errors_, file_);
    std::int32_t rails = 1;
    for (const auto& pool : cluster.pools) rails = std::max(rails, pool.gpus_per_node);
    if (const Entry* g = r.optional("rails"))
      rails = static_cast<std::int32_t>(integer_value(*g, 1, 64).value_or(rails));
    double node = kDefaultNodeGbps, up = 0;
    if (const Entry* g = r.optional("node_gbps")) node = gbps_value(*g).value_or(node);
    if (const Entry* g = r.optional("uplink_gbps")) up = gbps_value(*g).value_or(0);
    if (const Entry* g = r.require("nodes_per_group"))
      if (auto n = int32_value(*g, 1)) spec = models::rail_spec(cluster, *n, rails, node, up);
  }

  void load_tenants(const Entry& e, std::vector<models::Tenant>& tenants, std::vector<QueueGrant>& grants) {
    FirstLines names;
    for (const auto& item : list_items(e)) {
      if (!expect_map(item, "a tenant (a map with name and weight)")) continue;
      models::Tenant tenant;
      MapReader r(item.value, item.path, {"name", "weight", "gpus", "max_gpus", "queues"}, errors_, file_);
      if (const Entry* f = r.require("name")) {
        if (auto v = string_value(*f)) {
          tenant.name = *v;
          note_first_name(*f, *v, names, "tenant name");
        }
      }
      if (const Entry* f = r.optional("weight")) tenant.weight = positive_number(*f, kMaxWeight).value_or(1.0);
      if (const Entry* f = r.optional("gpus")) tenant.gpus = integer_value(*f, 0, std::int64_t{1} << 40).value_or(-1);
      if (const Entry* f = r.optional("max_gpus")) {
        tenant.max_gpus = integer_value(*f, 0, std::int64_t{1} << 40).value_or(-1);
        if (tenant.gpus >= 0 && tenant.max_gpus >= 0 && tenant.max_gpus < tenant.gpus)
          error(*f, "expected max_gpus >= gpus (" + std::to_string(tenant.gpus) + "), got " + describe(f->value));
      }
      QueueGrant grant;
      grant.tenant = tenant.name;
      // The permission drill: `queues: [a, b]` grants those queues only; `queues: []` none.
      if (const Entry* f = r.find("queues"); f != nullptr) {
        grant.restricted = true;
        if (!f->value.IsNull() && !(f->value.IsSequence() && f->value.size() == 0)) grant.queues = string_list(*f);
      }
      grants.push_back(std::move(grant));
      tenants.push_back(std::move(tenant));
    }
  }

  // A site file a system reads (SystemModule::site_files), each read once; its warnings go to the
  // scenario.
  std::optional<policies::SiteImport> read_site_file(const policies::SiteFile& kind, const std::string& text,
                                                     const std::string& where, Location at) {
    if (text.empty()) {
      error(at, where, "expected a path to a file");
      return std::nullopt;
    }
    std::filesystem::path p(text);
    if (p.is_relative()) p = std::filesystem::path(file_).parent_path() / p;
    const std::string path = p.string();
    const std::string cache_key = std::string(kind.key) + ":" + path;
    if (auto it = site_files_.find(cache_key); it != site_files_.end()) return it->second;
    try {
      auto imported = kind.read(path);
      const std::string what(kind.key);
      record(what, path);
      for (const auto& f : imported.files)
        if (f != path) record("file read by " + what, f);
      for (const auto& w : imported.warnings)
        if (std::find(warnings_.begin(), warnings_.end(), w) == warnings_.end()) warnings_.push_back(w);
      site_files_.emplace(cache_key, imported);
      return imported;
    } catch (const sim::InputError& err) {
      errors_.push_back(err);
    }
    return std::nullopt;
  }

  // The admins' own files named under a policy (manifests:, and its system's site files such as
  // slurm_conf:, sacctmgr_qos:, sshare:) become its parameters, under those written in the scenario.
  void read_site_files(PolicySpec& policy, const std::string& path) {
    const policies::SystemModule* system = policies::find_system(policy.name);
    if (system == nullptr) return;
    if (const auto it = policy.params.find("manifests");
        it != policy.params.end() && system->read_manifests != nullptr) {
      // The policy's own objects (policies/common/manifests.hpp), under the keys written here.
      const policies::ParamValue v = it->second;
      policy.params.erase(it);
      std::vector<std::string> paths;
      for (const auto& item : policies::parse_flow_list(v.text)) {
        std::filesystem::path p(item);
        if (p.is_relative()) p = std::filesystem::path(file_).parent_path() / p;
        paths.push_back(p.string());
      }
      if (paths.empty()) error(Location{v.line, v.column}, child_path(path, "manifests"), "expected manifest files");
      for (const auto& p : paths) record("manifest", p);
      try {
        const auto imported = system->read_manifests(paths, *cluster_, pool_labels_);
        for (const auto& [k, pv] : imported.params) policy.params.emplace(k, pv);
        for (const auto& w : imported.warnings) warnings_.push_back(w);
      } catch (const sim::InputError& err) {
        errors_.push_back(err);
      }
    }
    for (const policies::SiteFile& kind : system->site_files) {
      const std::string key(kind.key);
      const auto it = policy.params.find(key);
      if (it == policy.params.end()) continue;
      // The site's files' parameters, under those written here.
      const policies::ParamValue v = it->second;
      policy.params.erase(it);
      if (const auto imported = read_site_file(kind, v.text, child_path(path, key), Location{v.line, v.column}))
        for (const auto& [k, pv] : imported->params) policy.params.emplace(k, pv);
    }
  }

  void load_policy(const Entry& e, PolicySpec& policy) {
    Location name_at;
    bool have_name = false;
    if (e.value.IsScalar()) {
      if (auto v = string_value(e)) policy.name = *v;
      name_at = e.location();
    } else if (e.value.IsMap()) {
      // Every key but `name` is a parameter of the policy, checked by the policy registry.
      for (auto it = e.value.begin(); it != e.value.end(); ++it) {
        const YAML::Node key = it->first;
        if (key.IsScalar() && key.Scalar() == "name") {
          if (have_name) {
            error(location_of(key), child_path(e.path, "name"), "duplicate key \"name\"");
            continue;
          }
          have_name = true;
          const Entry name{key, it->second, child_path(e.path, "name")};
          name_at = name.location();
          if (auto v = string_value(name)) policy.name = *v;
          continue;
        }
        add_params(key, it->second, "", e.path, 1, policy.params);
      }
      if (!have_name) error(e.location(), child_path(e.path, "name"), "missing required key \"name\"");
    } else {
      error(e, "expected a policy name or a map with a name key, got " + describe(e.value));
      return;
    }
    if (policy.name.empty() || param_budget_reported_) return;
    read_site_files(policy, e.path);
    auto problems = policies::check_policy(policy.name, policy.params, file_, name_at.line, name_at.column);
    for (auto& p : problems) errors_.push_back(std::move(p));
  }

  // `split: {systems: {NAME: {policy: P, pools: [POOL | {pool: POOL, nodes: N}]}}, routes: [{kind:
  // K, tenant: T, queue: Q, to: NAME}], default: NAME}` (docs/split.md).
  void load_split(const Entry& e, Scenario& out) {
    policies::split::SplitSpec& split = out.split;
    const Location at = location_of(e.key);
    split.file = file_;
    split.line = at.line;
    split.column = at.column;
    if (!expect_map(e, "a map with keys systems, routes and default")) return;
    MapReader keys(e.value, e.path, {"systems", "routes", "default", "moves", "dispatch", "shares"}, errors_, file_);
    const models::ClusterSpec& cluster = out.cluster;
    if (const Entry* sys = keys.require("systems")) {
      if (!sys->value.IsMap() || sys->value.size() == 0) {
        error(*sys, "expected a map of system name to its partition, e.g. {slurm: {pools: [a100]}}, got " +
                        describe(sys->value));
      } else {
        for (auto it = sys->value.begin(); it != sys->value.end(); ++it) {
          const YAML::Node key = it->first;
          if (!key.IsScalar() || key.Scalar().empty()) {
            error(location_of(key), sys->path, "expected a system name, got " + describe(key));
            continue;
          }
          const Entry entry{key, it->second, child_path(sys->path, key.Scalar())};
          bool duplicate = false;
          for (const auto& s : split.systems) duplicate = duplicate || s.name == key.Scalar();
          if (duplicate) {
            error(location_of(key), entry.path, "system " + quote(key.Scalar()) + " is declared twice");
            continue;
          }
          load_split_system(entry, cluster, out);
        }
      }
    }
    // `shares: "slurm 0.7 / kueue 0.3"`: the pools the systems share cut by these shares (a value
    // a sweep can vary: variants: {split.shares: [...]}).
    if (const Entry* sh = keys.optional("shares")) {
      if (auto v = string_value(*sh)) {
        try {
          split.systems = policies::split::split_variant(split, cluster, *v, sh->path).systems;
        } catch (const InputError& x) {
          error(*sh, x.message());
        }
      }
    }
    std::vector<std::string> names;
    for (const auto& s : split.systems) names.push_back(s.name);
    auto system_ref = [&](const Entry& v) -> std::optional<std::string> {
      auto name = string_value(v);
      if (!name) return std::nullopt;
      if (std::find(names.begin(), names.end(), *name) != names.end()) return name;
      std::string msg = "no system named " + quote(*name) + " in split.systems";
      if (auto m = sim::closest_match(*name, names))
        msg += "; did you mean " + quote(*m) + "?";
      else if (!names.empty())
        msg += " (declared: " + join_keys(names) + ")";
      error(v, msg);
      return std::nullopt;
    };
    if (const Entry* r = keys.optional("routes")) {
      for (const Entry& item : list_items(*r)) {
        if (!expect_map(item, "a map with keys kind, tenant, queue and to")) continue;
        MapReader rk(item.value, item.path, {"kind", "tenant", "queue", "to"}, errors_, file_);
        policies::split::Route route;
        const Location rat = item.location();
        route.line = rat.line;
        route.column = rat.column;
        bool ok = true;
        if (const Entry* k = rk.optional("kind")) {
          auto v = string_value(*k);
          if (v && !models::parse_job_kind(*v, route.kind)) {
            static const std::vector<std::string> kinds = {"train", "inference", "interactive", "batch"};
            std::string msg = "unknown job kind " + quote(*v);
            if (auto m = sim::closest_match(*v, kinds))
              msg += "; did you mean " + quote(*m) + "?";
            else
              msg += " (expected one of: " + join_keys(kinds) + ")";
            error(*k, msg);
            ok = false;
          }
          route.has_kind = v.has_value() && ok;
          ok = ok && v.has_value();
        }
        if (const Entry* t = rk.optional("tenant")) {
          if (auto v = string_value(*t))
            route.tenant = *v;
          else
            ok = false;
        }
        if (const Entry* q = rk.optional("queue")) {
          if (auto v = string_value(*q))
            route.queue = *v;
          else
            ok = false;
        }
        if (ok && !route.has_kind && route.tenant.empty() && route.queue.empty() && rk.find("to") != nullptr)
          error(item, "a route needs kind, tenant or queue to match jobs on (split.default takes the rest)");
        if (const Entry* to = rk.require("to")) {
          if (auto v = system_ref(*to))
            route.to = *v;
          else
            ok = false;
        }
        if (ok) split.routes.push_back(std::move(route));
      }
    }
    if (const Entry* d = keys.optional("default")) {
      if (auto v = system_ref(*d)) split.default_to = *v;
    }
    if (const Entry* m = keys.optional("moves"))
      for (const Entry& item : list_items(*m)) load_split_move(item, cluster, system_ref, split);
    // `dispatch: multikueue | least-backlog`: the systems are clusters behind one front door.
    if (const Entry* d = keys.optional("dispatch")) {
      const Location dat = d->location();
      split.dispatch_line = dat.line;
      split.dispatch_column = dat.column;
      if (auto v = string_value(*d)) {
        static const std::vector<std::string> names = {"routes", "multikueue", "least-backlog"};
        if (*v == "multikueue") {
          split.dispatch = policies::split::Dispatch::MultiKueue;
        } else if (*v == "least-backlog") {
          split.dispatch = policies::split::Dispatch::LeastBacklog;
        } else if (*v != "routes") {
          std::string msg = "unknown dispatcher " + quote(*v);
          if (auto m = sim::closest_match(*v, names))
            msg += "; did you mean " + quote(*m) + "?";
          else
            msg += " (expected one of: " + join_keys(names) + ")";
          error(*d, msg);
        }
      }
      if (split.dispatch != policies::split::Dispatch::Routes &&
          split.systems.size() > policies::split::kMaxDispatchClusters)
        error(*d, "dispatch: " + d->value.Scalar() + " spreads jobs over at most " +
                      std::to_string(policies::split::kMaxDispatchClusters) + " clusters; split.systems declares " +
                      std::to_string(split.systems.size()));
      if (split.dispatch != policies::split::Dispatch::Routes) {
        for (const char* key : {"routes", "default", "moves"})
          if (const Entry* x = keys.find(key))
            error(*x, "not used with dispatch: " + d->value.Scalar() +
                          " (the dispatcher sends each job to a cluster when it is submitted)");
      }
      for (auto& w : policies::split::dispatch_warnings(split, dat.line)) warnings_.push_back(std::move(w));
    }
    // Every node of the site belongs to exactly one system.
    for (const models::NodePool& pool : cluster.pools) {
      std::int64_t claimed = 0;
      std::vector<const policies::split::System*> by;
      const policies::split::PoolShare* whole = nullptr;
      for (const auto& s : split.systems)
        for (const auto& share : s.pools)
          if (share.pool == pool.name) {
            by.push_back(&s);
            if (share.nodes < 0) whole = &share;
            claimed += share.nodes < 0 ? pool.nodes : share.nodes;
          }
      const std::string where = child_path(e.path, "systems");
      if (by.size() > 1 && (whole != nullptr || claimed > pool.nodes)) {
        const policies::split::PoolShare* last = nullptr;
        for (const auto& share : by.back()->pools)
          if (share.pool == pool.name) last = &share;
        error(Location{last->line, last->column}, child_path(where, by.back()->name),
              "pool " + quote(pool.name) + " is claimed by two systems, " + quote(by.front()->name) + " (line " +
                  std::to_string(by.front()->line) + ") and " + quote(by.back()->name) + ": " +
                  (whole != nullptr
                       ? std::string("one takes all of it")
                       : "their nodes add up to " + std::to_string(claimed) + " of its " + std::to_string(pool.nodes)) +
                  "; give each a number of nodes (pools: [{pool: " + pool.name + ", nodes: N}])");
      } else if (claimed < pool.nodes && !split.systems.empty()) {
        error(Location{split.line, split.column}, where,
              std::to_string(pool.nodes - claimed) + " of the " + std::to_string(pool.nodes) + " nodes of pool " +
                  quote(pool.name) + " belong to no system; every node of the site must belong to one");
      }
    }
  }

  // `split.moves[i]`: `{at: "daily 20:00" | DURATION, every: DURATION, nodes: N, from: S, to: S,
  // pool: P, drain_deadline: D, grace: D, delay: D}` (scheduled) or `{when: idle, nodes: N, from: S,
  // to: S, pool: P, threshold: N, hold: D, delay: D}` (on demand) (docs/split.md, "Moving nodes").
  template <class Ref>
  void load_split_move(const Entry& item, const models::ClusterSpec& cluster, Ref& system_ref,
                       policies::split::SplitSpec& split) {
    if (!expect_map(item, "a map with keys at (or when), nodes, from and to")) return;
    MapReader r(
        item.value, item.path,
        {"at", "every", "when", "nodes", "from", "to", "pool", "drain_deadline", "grace", "delay", "threshold", "hold"},
        errors_, file_);
    policies::split::Move m;
    const Location at = item.location();
    m.line = at.line;
    m.column = at.column;
    bool ok = true;
    const Entry* at_e = r.optional("at");
    const Entry* when_e = r.optional("when");
    if ((at_e == nullptr) == (when_e == nullptr)) {
      error(item, at_e == nullptr
                      ? "a move needs at: (a schedule, e.g. \"daily 20:00\" or 12h) or when: idle (on demand)"
                      : "a move has at: or when:, not both");
      ok = false;
    }
    if (at_e != nullptr && at_e->value.IsScalar() && at_e->value.Scalar().rfind("daily", 0) == 0) {
      // "daily HH:MM": every day at that time of day (UTC of the trace's calendar).
      const std::string text = at_e->value.Scalar();
      int hh = -1, mm = -1;
      char tail = 0;
      if (std::sscanf(text.c_str(), "daily %2d:%2d%c", &hh, &mm, &tail) != 2 || hh < 0 || hh > 23 || mm < 0 ||
          mm > 59) {
        error(*at_e, "expected \"daily HH:MM\" (00:00 to 23:59) or a duration after the run start like 12h, got " +
                         describe(at_e->value));
        ok = false;
      } else {
        m.daily_at = static_cast<sim::Tick>(hh) * sim::kHour + static_cast<sim::Tick>(mm) * sim::kMinute;
      }
      if (const Entry* ev = r.optional("every")) error(*ev, "a daily move repeats every day; remove every:");
    } else if (at_e != nullptr) {
      if (auto v = duration_value(*at_e, false))
        m.at = *v;
      else
        ok = false;
      if (const Entry* ev = r.optional("every")) {
        if (auto v = duration_value(*ev, true); v && *v >= sim::kMinute)
          m.every = *v;
        else if (v)
          error(*ev, "expected a period of at least 1m, got " + describe(ev->value)), ok = false;
        else
          ok = false;
      }
    }
    if (when_e != nullptr) {
      m.on_demand = true;
      auto v = string_value(*when_e);
      if (v && *v != "idle") {
        error(*when_e,
              "expected idle (move idle nodes while the other system has a backlog), got " + describe(when_e->value));
        ok = false;
      }
      if (const Entry* ev = r.optional("every")) error(*ev, "every: belongs to a scheduled move (at:)"), ok = false;
      if (const Entry* d = r.optional("drain_deadline"))
        error(*d, "a move on demand takes idle nodes only: it has no drain"), ok = false;
    } else {
      for (const char* key : {"threshold", "hold"})
        if (const Entry* x = r.optional(key))
          error(*x, std::string(key) + ": belongs to a move on demand (when: idle)"), ok = false;
    }
    if (const Entry* n = r.require("nodes")) {
      if (auto v = int32_value(*n, 1))
        m.nodes = *v;
      else
        ok = false;
    }
    if (const Entry* f = r.require("from")) {
      if (auto v = system_ref(*f))
        m.from = *v;
      else
        ok = false;
    }
    if (const Entry* t = r.require("to")) {
      if (auto v = system_ref(*t)) {
        m.to = *v;
        if (m.to == m.from && !m.from.empty())
          error(*t, "a move goes to another system than from: (" + quote(m.from) + ")"), ok = false;
      } else {
        ok = false;
      }
    }
    if (const Entry* pe = r.optional("pool")) {
      if (auto p = pool_value(*pe, cluster)) {
        m.pool = cluster.pools[*p].name;
        // `from` must hold some of it at the start.
        bool held = false;
        for (const auto& s : split.systems)
          if (s.name == m.from)
            for (const auto& share : s.pools) held = held || share.pool == m.pool;
        if (!held && !m.from.empty())
          error(*pe, "system " + quote(m.from) + " holds no node of pool " + quote(m.pool)), ok = false;
      } else {
        ok = false;
      }
    }
    if (const Entry* d = r.optional("drain_deadline")) m.drain_deadline = duration_value(*d, false).value_or(-1);
    if (const Entry* g = r.optional("grace")) m.grace = duration_value(*g, false).value_or(m.grace);
    if (const Entry* d = r.optional("delay")) m.delay = duration_value(*d, false).value_or(0);
    if (const Entry* t = r.optional("threshold")) m.threshold = int32_value(*t, 1).value_or(1);
    if (const Entry* h = r.optional("hold")) m.hold = duration_value(*h, false).value_or(0);
    if (ok) split.moves.push_back(std::move(m));
  }

  void load_split_system(const Entry& e, const models::ClusterSpec& cluster, Scenario& out) {
    policies::split::System sys;
    sys.name = e.key.Scalar();
    sys.policy = sys.name;
    const Location at = location_of(e.key);
    sys.line = at.line;
    sys.column = at.column;
    Location policy_at = at;
    if (!expect_map(e, "a map with keys policy and pools")) return;
    MapReader keys(e.value, e.path, {"policy", "pools"}, errors_, file_);
    if (const Entry* p = keys.optional("policy")) {
      auto v = string_value(*p);
      if (!v) return;
      sys.policy = *v;
      policy_at = p->location();
    }
    // The system's parameters: the `policies.<policy>` block.
    bool found = false;
    for (const auto& o : out.policy_overrides)
      if (o.name == sys.policy) {
        sys.params = o.params;
        found = true;
      }
    const bool known = std::any_of(policies::policy_catalogue().begin(), policies::policy_catalogue().end(),
                                   [&](const policies::PolicyInfo& i) { return i.name == sys.policy; });
    if (!found || !known) {
      // Unknown names get the registry's answer ("did you mean"), located at the name.
      for (auto& x : policies::check_policy(sys.policy, sys.params, file_, policy_at.line, policy_at.column)) {
        std::string where = x.where();
        if (where == "policy" || where == "policy.name")
          where = child_path(e.path, "policy");
        else if (where.rfind("policy.", 0) == 0)
          where = child_path(e.path, "policy") + where.substr(6);
        errors_.emplace_back(x.file(), x.line(), x.column(), where, x.message());
      }
    }
    if (const Entry* pools = keys.require("pools")) {
      const auto items = list_items(*pools);
      if (pools->value.IsSequence() && items.empty()) error(*pools, "expected at least one pool, got an empty list");
      for (const Entry& item : items) {
        policies::split::PoolShare share;
        const Location iat = item.location();
        share.line = iat.line;
        share.column = iat.column;
        std::optional<models::PoolId> pool;
        if (item.value.IsMap()) {
          MapReader sk(item.value, item.path, {"pool", "nodes"}, errors_, file_);
          if (const Entry* pe = sk.require("pool")) pool = pool_value(*pe, cluster);
          if (const Entry* ne = sk.require("nodes"); ne != nullptr && pool) {
            if (auto n = integer_value(*ne, 1, cluster.pools[*pool].nodes))
              share.nodes = static_cast<std::int32_t>(*n);
            else
              continue;
          }
        } else {
          pool = pool_value(item, cluster);
        }
        if (!pool) continue;
        share.pool = cluster.pools[*pool].name;
        bool twice = false;
        for (const auto& s : sys.pools) twice = twice || s.pool == share.pool;
        if (twice) {
          error(item, "pool " + quote(share.pool) + " is named twice in system " + quote(sys.name));
          continue;
        }
        sys.pools.push_back(std::move(share));
      }
    }
    out.split.systems.push_back(std::move(sys));
  }

  // `policies: {kubernetes: {...}, kueue: {...}}`: each policy's own parameters, used by
  // `headroom compare` when it runs that policy; checked like a `policy:` block.
  void load_policy_overrides(const Entry& e, std::vector<PolicySpec>& out) {
    if (!e.value.IsMap()) {
      error(e, "expected a map of policy name to its parameters, e.g. {kubernetes: {podMaxBackoffSeconds: 20}}, got " +
                   describe(e.value));
      return;
    }
    for (auto it = e.value.begin(); it != e.value.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar() || key.Scalar().empty()) {
        error(location_of(key), e.path, "expected a policy name, got " + describe(key));
        continue;
      }
      PolicySpec p;
      p.name = key.Scalar();
      const std::string path = child_path(e.path, p.name);
      const YAML::Node v = it->second;
      if (v.IsMap()) {
        for (auto pit = v.begin(); pit != v.end(); ++pit) {
          if (pit->first.IsScalar() && pit->first.Scalar() == "name") {
            error(location_of(pit->first), child_path(path, "name"), "the key above names the policy; remove \"name\"");
            continue;
          }
          add_params(pit->first, pit->second, "", path, 1, p.params);
        }
      } else if (!v.IsNull()) {
        error(Entry{key, v, path}, "expected a map of the policy's parameters, got " + describe(v));
        continue;
      }
      if (!param_budget_reported_) read_site_files(p, path);
      if (!param_budget_reported_) {
        const Location at = location_of(key);
        // The registry names keys as under `policy:`; here they live under `policies.NAME`.
        for (auto& x : policies::check_policy(p.name, p.params, file_, at.line, at.column)) {
          std::string where = x.where();
          if (where.rfind("policy.", 0) == 0) where = path + where.substr(6);
          if (where == "policy") where = path;
          errors_.emplace_back(x.file(), x.line(), x.column(), where, x.message());
        }
      }
      out.push_back(std::move(p));
    }
  }

  // Flattens one `policy:` entry into dotted-path parameters.
  void add_params(const YAML::Node& key, const YAML::Node& value, const std::string& prefix,
                  const std::string& policy_path, int depth, policies::PolicyParams& params) {
    if (!key.IsScalar() || key.Scalar().empty()) {
      error(location_of(key), policy_path, "expected a parameter name, got " + describe(key));
      return;
    }
    const std::string name = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
    const Entry entry{key, value, child_path(policy_path, name)};
    if (params.count(name) != 0) {
      error(location_of(key), entry.path, "duplicate key " + quote(key.Scalar()));
      return;
    }
    if (!count_nodes(value, param_budget_)) {
      if (!param_budget_reported_)
        error(entry, "the policy block is too large (more than " + std::to_string(kMaxParamNodes) +
                         " values, or nested more than " + std::to_string(kMaxNesting) + " deep)");
      param_budget_reported_ = true;
      return;
    }
    if (value.IsMap()) {
      if (depth >= kMaxParamDepth) {
        error(entry, "policy parameters nest at most " + std::to_string(kMaxParamDepth) + " maps deep");
        return;
      }
      for (auto it = value.begin(); it != value.end(); ++it)
        add_params(it->first, it->second, name, policy_path, depth + 1, params);
      return;
    }
    std::string text;
    if (value.IsScalar()) {
      text = value.Scalar();
    } else if (value.IsSequence()) {
      YAML::Emitter emitter;
      emitter << YAML::Flow << value;
      text = emitter.c_str();
    }
    const Location at = entry.location();
    params[name] = policies::ParamValue{text, file_, at.line, at.column};
  }

  // Walks a node tree, spending one unit of `budget` per node; false once it runs out or the tree
  // nests deeper than kMaxNesting. Aliases are walked again each time, so shared structures run
  // out of budget and cyclic ones out of depth rather than loop. A nested map is counted once per
  // enclosing level, so at most kMaxParamDepth times.
  static bool count_nodes(const YAML::Node& node, int& budget, int depth = 0) {
    if (--budget < 0 || depth > kMaxNesting) return false;
    if (node.IsSequence()) {
      for (auto it = node.begin(); it != node.end(); ++it)
        if (!count_nodes(*it, budget, depth + 1)) return false;
    } else if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it)
        if (!count_nodes(it->first, budget, depth + 1) || !count_nodes(it->second, budget, depth + 1)) return false;
    }
    return true;
  }

  void load_workload(const Entry& e, WorkloadSpec& workload) {
    if (!expect_map(e, "a map with a trace key")) return;
    MapReader r(e.value, e.path,
                {"trace", "format", "window", "arrival_scale", "units_per_gpu", "tenants", "queues", "runtime_scale",
                 "gpu_type_map", "skip_bad_rows", "fields", "assume_runtime", "time_limits", "kinds", "sessions",
                 "node_selectors"},
                errors_, file_);
    if (const Entry* f = r.require("trace")) {
      if (auto v = string_value(*f)) {
        std::filesystem::path trace(*v);
        if (trace.is_relative()) trace = std::filesystem::path(file_).parent_path() / trace;
        workload.trace = trace.string();
        std::error_code ec;
        if (!std::filesystem::exists(trace, ec)) {
          error(*f, "trace file not found: " + workload.trace);
        } else if (std::filesystem::is_directory(trace, ec) || !std::ifstream(trace, std::ios::binary).is_open()) {
          error(*f, "cannot read trace file: " + workload.trace);
        }
      }
    }
    if (const Entry* f = r.optional("format")) {
      std::optional<traces::Format> format;
      if (f->value.IsScalar()) format = traces::parse_format(f->value.Scalar());
      if (format) {
        workload.format = std::string(traces::to_string(*format));
      } else {
        static const std::vector<std::string> kFormats = {"auto", "swf", "csv"};
        std::string known;
        for (const auto& n : traces::format_names()) known += (known.empty() ? "" : ", ") + n;
        std::string msg = "expected one of " + known + ", got " + describe(f->value);
        if (f->value.IsScalar())
          if (auto s = sim::closest_match(f->value.Scalar(), kFormats)) msg += "; did you mean " + quote(*s) + "?";
        error(*f, msg);
      }
    }
    if (const Entry* f = r.optional("window")) load_window(*f, workload);
    if (const Entry* f = r.optional("arrival_scale"))
      workload.arrival_scale = positive_number(*f, kMaxArrivalScale).value_or(1.0);
    if (const Entry* f = r.optional("units_per_gpu")) workload.units_per_gpu = int32_value(*f, 1).value_or(1);
    if (const Entry* f = r.optional("skip_bad_rows")) workload.skip_bad_rows = bool_value(*f).value_or(false);
    if (const Entry* f = r.optional("assume_runtime")) workload.assume_runtime = duration_value(*f, true).value_or(-1);
    if (const Entry* f = r.optional("time_limits")) {
      static const std::vector<std::string> kModes = {"auto", "enforce", "as_recorded"};
      if (f->value.IsScalar() && std::find(kModes.begin(), kModes.end(), f->value.Scalar()) != kModes.end()) {
        workload.time_limits = f->value.Scalar();
      } else {
        std::string msg = "expected auto, enforce or as_recorded, got " + describe(f->value);
        if (f->value.IsScalar())
          if (auto s = sim::closest_match(f->value.Scalar(), kModes)) msg += "; did you mean " + quote(*s) + "?";
        error(*f, msg);
      }
    }
    if (const Entry* f = r.optional("fields")) {
      // sacct's --format list: "jobid,user,..." or a YAML list of names.
      if (f->value.IsScalar()) {
        workload.fields = traces::split_fields(f->value.Scalar());
      } else {
        for (const std::string& name : string_list(*f))
          for (std::string& part : traces::split_fields(name)) workload.fields.push_back(std::move(part));
      }
      if (workload.fields.empty()) error(*f, "expected sacct field names such as \"jobid,user,submit\" or xdmod");
      // A misspelt name would otherwise be a column silently left out.
      else if (const auto why = traces::check_sacct_fields(workload.fields))
        error(*f, *why);
    }
    if (const Entry* f = r.optional("tenants")) workload.tenants = string_list(*f);
    if (const Entry* f = r.optional("queues")) workload.queues = string_list(*f);
    if (const Entry* f = r.optional("kinds")) load_kind_rules(*f, workload.kinds);
    if (const Entry* f = r.optional("sessions")) load_sessions(*f, workload.sessions);
    if (const Entry* f = r.optional("runtime_scale"))
      workload.runtime_scale = positive_number(*f, kMaxArrivalScale).value_or(1.0);
    if (const Entry* f = r.optional("node_selectors")) load_node_selectors(*f, workload);
    if (const Entry* f = r.optional("gpu_type_map")) {
      if (expect_map(*f, "a map from the trace's GPU type to a pool's GPU type")) {
        for (auto it = f->value.begin(); it != f->value.end(); ++it) {
          const Entry item{it->first, it->second, f->path + "." + it->first.Scalar(), true};
          if (auto v = string_value(item)) workload.gpu_type_map.emplace_back(it->first.Scalar(), *v);
        }
      }
    }
  }

  // `workload.node_selectors: {QUEUE: [pool, ...]}` (a pool name alone for one): pools of the
  // cluster, at most 255 different sets.
  void load_node_selectors(const Entry& f, WorkloadSpec& workload) {
    workload.node_selectors_given = true;
    if (f.value.IsNull()) return;
    if (!expect_map(f, "a map from a queue name to the pools its jobs may use")) return;
    std::vector<std::vector<std::string>> sets;
    for (auto it = f.value.begin(); it != f.value.end(); ++it) {
      const Entry item{it->first, it->second, f.path + "." + it->first.Scalar(), true};
      std::vector<std::string> pools;
      const std::vector<Entry> names = item.value.IsScalar() ? std::vector<Entry>{item} : list_items(item);
      for (const Entry& name : names)
        if (cluster_ != nullptr)
          if (auto p = pool_value(name, *cluster_))
            if (std::find(pools.begin(), pools.end(), cluster_->pools[*p].name) == pools.end())
              pools.push_back(cluster_->pools[*p].name);
      if (item.value.IsSequence() && item.value.size() == 0)
        error(item, "expected at least one pool, got an empty list");
      if (pools.empty()) continue;
      std::sort(pools.begin(), pools.end());
      if (std::find(sets.begin(), sets.end(), pools) == sets.end()) sets.push_back(pools);
      if (sets.size() > 255) {
        error(item, "more than 255 different pool sets; give queues that share pools the same list");
        return;
      }
      workload.node_selectors.emplace_back(it->first.Scalar(), std::move(pools));
    }
  }

  // A list of non-empty strings (e.g. tenant names).
  std::vector<std::string> string_list(const Entry& e) {
    std::vector<std::string> out;
    for (const Entry& item : list_items(e))
      if (auto v = string_value(item)) out.push_back(*v);
    if (e.value.IsSequence() && e.value.size() == 0) error(e, "expected at least one name, got an empty list");
    return out;
  }

  // ---- failures: (the failure drill; docs/drills.md) ----

  std::optional<models::PoolId> pool_value(const Entry& e, const models::ClusterSpec& cluster) {
    auto name = string_value(e);
    if (!name) return std::nullopt;
    std::vector<std::string> known;
    for (models::PoolId p = 0; p < cluster.pools.size(); ++p) {
      if (cluster.pools[p].name == *name) return p;
      known.push_back(cluster.pools[p].name);
    }
    std::string msg = "no pool named " + quote(*name);
    if (auto m = sim::closest_match(*name, known)) msg += "; did you mean " + quote(*m) + "?";
    error(e, msg);
    return std::nullopt;
  }

  std::optional<models::NodeId> node_value(const Entry& e, const models::ClusterSpec& cluster) {
    auto name = string_value(e);
    if (!name) return std::nullopt;
    if (auto node = models::find_node(cluster, *name)) return node;
    error(e, "no node named " + quote(*name) + " (nodes are named <pool>-<index>, e.g. " +
                 quote(cluster.pools.empty() ? "a100-0" : cluster.pools.front().name + "-0") + ")");
    return std::nullopt;
  }

  std::vector<models::NodeId> node_list(const Entry& e, const models::ClusterSpec& cluster) {
    std::vector<models::NodeId> out;
    for (const Entry& item : list_items(e)) {
      auto node = node_value(item, cluster);
      if (!node) continue;
      if (std::find(out.begin(), out.end(), *node) != out.end()) {
        error(item, "node " + quote(item.value.Scalar()) + " is listed twice");
        continue;
      }
      out.push_back(*node);
    }
    if (e.value.IsSequence() && e.value.size() == 0) error(e, "expected at least one node, got an empty list");
    return out;
  }

  // ---- prime_time: (docs/fidelity.md, "Prime time") ----
  // "HH:MM" on a 24-hour clock, 24:00 allowed as an end; minutes since midnight.
  static std::optional<std::int32_t> clock_minutes(const std::string& t) {
    if (t.size() != 5 || t[2] != ':') return std::nullopt;
    for (const std::size_t i : {0u, 1u, 3u, 4u})
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
    const int h = (t[0] - '0') * 10 + (t[1] - '0'), m = (t[3] - '0') * 10 + (t[4] - '0');
    if (m > 59 || h > 24 || (h == 24 && m != 0)) return std::nullopt;
    return h * 60 + m;
  }

  void load_prime_time(const Entry& e, models::PrimeTime& p) {
    if (!expect_map(e, "a map with longer_than, days, hours, utc_offset and dst")) return;
    MapReader r(e.value, e.path, {"longer_than", "days", "hours", "utc_offset", "dst"}, errors_, file_);
    const Location at = e.location();
    p.line = static_cast<std::uint32_t>(at.line);
    p.column = static_cast<std::uint32_t>(at.column);
    if (const Entry* g = r.require("longer_than")) {
      if (auto v = duration_value(*g, false)) p.longer_than = *v;
    }
    if (const Entry* g = r.optional("days")) {
      if (auto v = string_value(*g); v && !models::parse_days(*v, p.days))
        error(*g, "expected days like Mon-Fri or Sat,Sun, got " + describe(g->value));
    }
    if (const Entry* g = r.optional("hours")) {
      if (auto v = string_value(*g)) {
        const std::size_t dash = v->find('-');
        const auto from = dash == std::string::npos ? std::nullopt : clock_minutes(v->substr(0, dash));
        const auto to = dash == std::string::npos ? std::nullopt : clock_minutes(v->substr(dash + 1));
        if (!from || !to || *from >= *to)
          error(*g, "expected local hours like \"08:00-18:00\" (start before end, within one day), got " +
                        describe(g->value));
        else {
          p.from_minute = *from;
          p.to_minute = *to;
        }
      }
    }
    if (const Entry* g = r.optional("utc_offset")) {
      // "+01:00", "-08:00", or "UTC" / "0"
      std::optional<std::int32_t> minutes;
      if (g->value.IsScalar()) {
        const std::string t = g->value.Scalar();
        if (t == "0" || t == "UTC" || t == "Z") {
          minutes = 0;
        } else if (t.size() == 6 && (t[0] == '+' || t[0] == '-')) {
          if (auto m = clock_minutes(t.substr(1)); m && *m <= 14 * 60) minutes = t[0] == '-' ? -*m : *m;
        }
      }
      if (!minutes)
        error(*g, "expected the local clock's standard offset from UTC like \"+01:00\" or \"-08:00\", got " +
                      describe(g->value));
      else
        p.utc_offset_minutes = *minutes;
    }
    if (const Entry* g = r.optional("dst")) {
      if (auto v = string_value(*g)) {
        if (*v == "none")
          p.dst = models::DstRule::None;
        else if (*v == "eu")
          p.dst = models::DstRule::Eu;
        else if (*v == "us")
          p.dst = models::DstRule::Us;
        else
          error(*g, "expected none, eu or us (the summer time rules of the local clock), got " + describe(g->value));
      }
    }
  }

  void load_failures(const Entry& e, const models::ClusterSpec& cluster, models::FailureSpec& f) {
    if (!expect_map(e, "a map with nodes, racks, events, maintenance and jobs")) return;
    MapReader r(e.value, e.path, {"racks", "nodes", "events", "maintenance", "jobs"}, errors_, file_);
    if (const Entry* g = r.optional("racks")) load_racks(*g, cluster, f);
    if (const Entry* g = r.optional("nodes")) {
      if (g->value.IsSequence()) {
        for (const Entry& item : list_items(*g)) load_random(item, cluster, f);
      } else {
        load_random(*g, cluster, f);
      }
    }
    if (const Entry* g = r.optional("events"))
      for (const Entry& item : list_items(*g)) load_outage(item, cluster, f);
    if (const Entry* g = r.optional("maintenance"))
      for (const Entry& item : list_items(*g)) load_maintenance(item, cluster, f);
    if (const Entry* g = r.optional("jobs")) load_job_failures(*g, f);
  }

  void load_racks(const Entry& e, const models::ClusterSpec& cluster, models::FailureSpec& f) {
    if (e.value.IsMap()) {
      MapReader r(e.value, e.path, {"nodes_per_rack"}, errors_, file_);
      if (const Entry* g = r.require("nodes_per_rack"))
        if (auto n = int32_value(*g, 1)) f.racks = models::racks_of_size(cluster, *n);
      return;
    }
    if (!e.value.IsSequence()) {
      error(e, "expected {nodes_per_rack: N} or a list of racks ({name, nodes}), got " + describe(e.value));
      return;
    }
    std::vector<int> owner(static_cast<std::size_t>(cluster.total_nodes()), -1);  // line of the rack holding it
    for (const Entry& item : list_items(e)) {
      if (!expect_map(item, "a rack (a map with name and nodes)")) continue;
      MapReader r(item.value, item.path, {"name", "nodes"}, errors_, file_);
      models::Rack rack;
      if (const Entry* g = r.require("name")) {
        if (auto v = string_value(*g)) {
          for (const auto& other : f.racks)
            if (other.name == *v) error(*g, "duplicate rack name " + quote(*v));
          rack.name = *v;
        }
      }
      if (const Entry* g = r.require("nodes")) {
        rack.nodes = node_list(*g, cluster);
        for (models::NodeId node : rack.nodes) {
          if (owner[node] >= 0) {
            error(*g, "node " + quote(models::node_name(cluster, node)) + " is already in the rack at line " +
                          std::to_string(owner[node]) + " (a node belongs to one rack)");
          }
          owner[node] = item.location().line;
        }
      }
      f.racks.push_back(std::move(rack));
    }
  }

  void load_random(const Entry& e, const models::ClusterSpec& cluster, models::FailureSpec& f) {
    if (!expect_map(e, "a map with mtbf and repair")) return;
    MapReader r(e.value, e.path, {"pools", "domain", "level", "mtbf", "distribution", "shape", "repair"}, errors_,
                file_);
    models::RandomFailures rf;
    if (const Entry* g = r.optional("pools")) {
      for (const Entry& item : list_items(*g))
        if (auto p = pool_value(item, cluster)) rf.pools.push_back(*p);
      if (g->value.IsSequence() && g->value.size() == 0) error(*g, "expected at least one pool, got an empty list");
    }
    if (const Entry* g = r.optional("domain")) {
      const std::string v = g->value.IsScalar() ? g->value.Scalar() : "";
      if (v == "rack") {
        rf.per_rack = true;
        if (f.racks.empty()) error(*g, "domain rack needs racks (failures.racks: {nodes_per_rack: N} or a list)");
      } else if (v == "switch") {
        // Each switch of `level` (default 1, the leaves) fails with every node under it.
        rf.per_rack = true;
        std::int32_t level = 1;
        const Entry* l = r.optional("level");
        if (l != nullptr) level = int32_value(*l, 1).value_or(1);
        if (!cluster.topology) {
          error(*g, "domain switch needs a topology (cluster.topology)");
        } else if (level > cluster.topology->levels()) {
          error(*l, "expected a switch level from 1 to " + std::to_string(cluster.topology->levels()) + ", got " +
                        describe(l->value));
        } else {
          rf.switches = models::switch_domains(*cluster.topology, level);
        }
      } else if (v != "node") {
        std::string msg = "expected node, rack or switch, got " + describe(g->value);
        static const std::vector<std::string> kDomains = {"node", "rack", "switch"};
        if (auto m = sim::closest_match(v, kDomains)) msg += "; did you mean " + quote(*m) + "?";
        error(*g, msg);
      }
    }
    const Entry* domain = r.optional("domain");
    const bool switch_domain = domain != nullptr && domain->value.IsScalar() && domain->value.Scalar() == "switch";
    if (const Entry* l = r.optional("level"); l != nullptr && !switch_domain)
      error(*l, "level applies to domain switch only");
    if (const Entry* g = r.require("mtbf")) rf.mtbf = duration_value(*g, true).value_or(sim::kDay);
    if (const Entry* g = r.require("repair")) rf.repair = duration_value(*g, true).value_or(sim::kHour);
    const Entry* shape = r.optional("shape");
    if (const Entry* g = r.optional("distribution")) {
      const std::string v = g->value.IsScalar() ? g->value.Scalar() : "";
      if (v == "weibull") {
        rf.distribution = models::FailureDistribution::Weibull;
        if (shape == nullptr) error(*g, "distribution weibull needs a shape (e.g. shape: 0.8)");
      } else if (v != "exponential") {
        std::string msg = "expected exponential or weibull, got " + describe(g->value);
        static const std::vector<std::string> kKnown = {"exponential", "weibull"};
        if (auto m = sim::closest_match(v, kKnown)) msg += "; did you mean " + quote(*m) + "?";
        error(*g, msg);
      }
    }
    if (shape != nullptr) {
      rf.shape = positive_number(*shape, 100.0).value_or(1.0);
      if (rf.distribution != models::FailureDistribution::Weibull)
        error(*shape, "shape applies to distribution weibull only");
    }
    f.random.push_back(std::move(rf));
  }

  void load_outage(const Entry& e, const models::ClusterSpec& cluster, models::FailureSpec& f) {
    if (!expect_map(e, "an outage (a map with at, duration and one of rack, nodes, pool)")) return;
    MapReader r(e.value, e.path, {"at", "duration", "rack", "nodes", "pool", "switch"}, errors_, file_);
    models::FailureEvent ev;
    if (const Entry* g = r.require("at")) ev.at = duration_value(*g, false).value_or(0);
    if (const Entry* g = r.require("duration")) ev.duration = duration_value(*g, true).value_or(sim::kHour);
    const Entry* rack = r.optional("rack");
    const Entry* nodes = r.optional("nodes");
    const Entry* pool = r.optional("pool");
    const Entry* sw = r.optional("switch");
    const int given = (rack != nullptr) + (nodes != nullptr) + (pool != nullptr) + (sw != nullptr);
    if (given != 1) {
      error(e, given == 0 ? "an outage needs one of rack, nodes, pool or switch"
                          : "give only one of rack, nodes, pool or switch");
      return;
    }
    if (sw != nullptr) {
      // A switch going down takes every node under it off the network.
      auto name = string_value(*sw);
      if (!name) return;
      const models::Topology* t = cluster.topology.get();
      const auto id = t != nullptr ? t->find_switch(*name) : std::nullopt;
      if (!id) {
        std::string msg =
            t == nullptr ? "no topology is defined (cluster.topology)" : "no switch named " + quote(*name);
        if (t != nullptr) {
          std::vector<std::string> known;
          for (models::SwitchId s = 0; s < t->switch_count(); ++s) known.push_back(t->switch_name(s));
          if (auto m = sim::closest_match(*name, known)) msg += "; did you mean " + quote(*m) + "?";
        }
        error(*sw, msg);
        return;
      }
      const auto under = t->nodes_under(*id);
      ev.nodes.assign(under.begin(), under.end());
      ev.what = "switch " + *name;
    } else if (rack != nullptr) {
      if (!rack->value.IsScalar()) {
        error(*rack, "expected a rack index or name, got " + describe(rack->value));
        return;
      }
      const std::string& v = rack->value.Scalar();
      const models::Rack* found = nullptr;
      for (const auto& rk : f.racks)
        if (rk.name == v) found = &rk;
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), index);
      if (found == nullptr && ec == std::errc() && end == v.data() + v.size() && index < f.racks.size())
        found = &f.racks[index];
      if (found == nullptr) {
        error(*rack, f.racks.empty() ? "no racks are defined (failures.racks: {nodes_per_rack: N} or a list)"
                                     : "no rack " + quote(v) + " (racks 0.." + std::to_string(f.racks.size() - 1) +
                                           " or a rack name)");
        return;
      }
      ev.nodes = found->nodes;
      ev.what = "rack " + found->name;
    } else if (nodes != nullptr) {
      ev.nodes = node_list(*nodes, cluster);
      for (models::NodeId node : ev.nodes)
        ev.what += (ev.what.empty() ? "nodes " : ", ") + models::node_name(cluster, node);
    } else if (auto p = pool_value(*pool, cluster)) {
      models::NodeId first = 0;
      for (models::PoolId q = 0; q < *p; ++q) first += static_cast<models::NodeId>(cluster.pools[q].nodes);
      for (std::int32_t i = 0; i < cluster.pools[*p].nodes; ++i)
        ev.nodes.push_back(first + static_cast<models::NodeId>(i));
      ev.what = "pool " + cluster.pools[*p].name;
    }
    f.events.push_back(std::move(ev));
  }

  void load_maintenance(const Entry& e, const models::ClusterSpec& cluster, models::FailureSpec& f) {
    if (!expect_map(e, "a maintenance window (a map with pool, start and duration)")) return;
    MapReader r(e.value, e.path, {"pool", "start", "every", "duration", "drain", "batch", "drain_timeout"}, errors_,
                file_);
    models::Maintenance m;
    if (const Entry* g = r.require("pool")) m.pool = pool_value(*g, cluster).value_or(0);
    if (const Entry* g = r.require("start")) m.start = duration_value(*g, false).value_or(0);
    if (const Entry* g = r.optional("every")) m.every = duration_value(*g, true).value_or(0);
    if (const Entry* g = r.require("duration")) m.duration = duration_value(*g, true).value_or(sim::kHour);
    if (const Entry* g = r.optional("drain")) m.drain = bool_value(*g).value_or(true);
    if (const Entry* g = r.optional("batch")) m.batch = int32_value(*g, 1).value_or(0);
    if (const Entry* g = r.optional("drain_timeout")) m.drain_timeout = duration_value(*g, false).value_or(-1);
    f.maintenance.push_back(m);
  }

  void load_job_failures(const Entry& e, models::FailureSpec& f) {
    if (!expect_map(e, "a map with retry, checkpoint_interval and restart_overhead")) return;
    MapReader r(e.value, e.path, {"retry", "checkpoint_interval", "restart_overhead"}, errors_, file_);
    if (const Entry* g = r.optional("retry")) {
      if (expect_map(*g, "a map with limit, backoff and backoff_max")) {
        MapReader rr(g->value, g->path, {"limit", "backoff", "backoff_max"}, errors_, file_);
        if (const Entry* h = rr.optional("limit")) f.retry_limit = int32_value(*h, 0).value_or(f.retry_limit);
        if (const Entry* h = rr.optional("backoff")) f.backoff = duration_value(*h, false).value_or(f.backoff);
        const Entry* max = rr.optional("backoff_max");
        if (max != nullptr) f.backoff_max = duration_value(*max, false).value_or(f.backoff_max);
        if (max != nullptr && f.backoff_max < f.backoff)
          error(*max, "expected a duration >= backoff, got " + describe(max->value));
        else if (max == nullptr)
          f.backoff_max = std::max(f.backoff_max, f.backoff);
      }
    }
    if (const Entry* g = r.optional("checkpoint_interval"))
      f.checkpoint_interval = duration_value(*g, true).value_or(0);
    if (const Entry* g = r.optional("restart_overhead")) f.restart_overhead = duration_value(*g, false).value_or(0);
  }

  void load_window(const Entry& e, WorkloadSpec& workload) {
    if (!expect_map(e, "a map with start and end durations")) return;
    MapReader r(e.value, e.path, {"start", "end"}, errors_, file_);
    std::optional<sim::Tick> start, end;
    const Entry* start_entry = r.optional("start");
    const Entry* end_entry = r.optional("end");
    if (start_entry != nullptr) start = duration_value(*start_entry, false);
    if (end_entry != nullptr) end = duration_value(*end_entry, false);
    if (start) workload.window_start = *start;
    if (end) workload.window_end = *end;
    if (end && *end <= workload.window_start && (start || start_entry == nullptr)) {
      const std::string start_text = start_entry != nullptr ? start_entry->value.Scalar() : "0s";
      error(*end_entry,
            "expected a duration after the window start (" + start_text + "), got " + describe(end_entry->value));
    }
  }

  // A number in [lo, hi].
  std::optional<double> number_in(const Entry& e, double lo, double hi) {
    std::ostringstream expected;
    expected << "expected a number from " << lo << " to " << hi;
    if (const auto v = finite_number(e); v && *v >= lo && *v <= hi) return v;
    error(e, expected.str() + ", got " + describe(e.value));
    return std::nullopt;
  }

  // services: inference deployments with an autoscaler (models/service.hpp, docs/services.md).
  // `workload.kinds`: [{kind: train, min_gpus: 9}, ...] (KindRule).
  void load_kind_rules(const Entry& e, std::vector<KindRule>& rules) {
    for (const Entry& item : list_items(e)) {
      if (!expect_map(item, "a rule such as {kind: train, min_gpus: 9} (kind, and min_gpus and/or max_gpus)")) continue;
      KindRule rule;
      MapReader r(item.value, item.path, {"kind", "min_gpus", "max_gpus"}, errors_, file_);
      if (const Entry* f = r.require("kind")) {
        if (auto v = string_value(*f); v && !models::parse_job_kind(*v, rule.kind))
          error(*f, "unknown job kind " + quote(*v) + " (expected one of: train, inference, interactive, batch)");
      }
      if (const Entry* f = r.optional("min_gpus")) rule.min_gpus = int32_value(*f, 0).value_or(0);
      if (const Entry* f = r.optional("max_gpus")) {
        rule.max_gpus = int32_value(*f, 0).value_or(INT32_MAX);
        if (rule.max_gpus < rule.min_gpus)
          error(*f, "expected max_gpus >= min_gpus (" + std::to_string(rule.min_gpus) + "), got " + describe(f->value));
      }
      rules.push_back(rule);
    }
  }

  // The lines each name of a list was used at (a hash: lists of any length are checked in linear time).
  using NameLines = std::unordered_map<std::string, std::vector<int>>;
  // The line each name of a list was first used at (the same).
  using FirstLines = std::unordered_map<std::string, int>;

  // A pool's or tenant's name checked against the earlier items': an error at `f` naming the first
  // use ("duplicate <what> ..."); only a first use is recorded.
  void note_first_name(const Entry& f, const std::string& v, FirstLines& names, const std::string& what) {
    if (const auto [at, first] = names.try_emplace(v, f.location().line); !first)
      error(f, "duplicate " + what + " " + quote(v) + " (first used at line " + std::to_string(at->second) + ")");
  }

  // A list item's name checked against the earlier items' (`names`: name and lines): an error at
  // `f` for each earlier use ("duplicate <what> ..."), then recorded.
  void note_name(const Entry& f, const std::string& v, NameLines& names, const std::string& what) {
    std::vector<int>& lines = names[v];
    for (const int line : lines)
      error(f, "duplicate " + what + " " + quote(v) + " (first used at line " + std::to_string(line) + ")");
    lines.push_back(f.location().line);
  }

  // Optional `start` and `end` (after the run's first submit) of a session stream or a service;
  // an end not after the start is an error naming `whose` start.
  void start_end(MapReader& r, sim::Tick& start, sim::Tick& end, const std::string& whose) {
    if (const Entry* f = r.optional("start")) start = duration_value(*f, false).value_or(0);
    if (const Entry* f = r.optional("end")) {
      if (auto v = duration_value(*f, true)) {
        end = *v;
        if (end <= start) error(*f, "expected a time after " + whose + " start, got " + describe(f->value));
      }
    }
  }

  // `workload.sessions`: generated interactive sessions (SessionSpec).
  void load_sessions(const Entry& e, std::vector<SessionSpec>& sessions) {
    NameLines names;
    for (const Entry& item : list_items(e)) {
      if (!expect_map(item, "a session stream (a map with name, tenant, per_day, hours and duration)")) continue;
      SessionSpec s;
      MapReader r(item.value, item.path,
                  {"name", "tenant", "queue", "gpus", "priority", "per_day", "hours", "duration", "start", "end"},
                  errors_, file_);
      if (const Entry* f = r.require("name")) {
        if (auto v = string_value(*f)) {
          s.name = *v;
          note_name(*f, *v, names, "session stream");
        }
      }
      if (const Entry* f = r.require("tenant")) s.tenant = string_value(*f).value_or("");
      if (const Entry* f = r.optional("queue")) s.queue = string_value(*f).value_or("");
      if (const Entry* f = r.optional("gpus")) s.gpus = int32_value(*f, 1).value_or(1);
      if (const Entry* f = r.optional("priority"))
        s.priority = static_cast<std::int32_t>(integer_value(*f, INT32_MIN, INT32_MAX).value_or(0));
      if (const Entry* f = r.require("per_day")) s.per_day = positive_number(*f, 1e6).value_or(0);
      if (const Entry* f = r.optional("hours")) {
        if (expect_map(*f, "a map with start and end, times of day such as 9h and 18h")) {
          MapReader hr(f->value, f->path, {"start", "end"}, errors_, file_);
          if (const Entry* g = hr.require("start")) s.hours_start = duration_value(*g, false).value_or(s.hours_start);
          if (const Entry* g = hr.require("end")) {
            if (auto v = duration_value(*g, true)) {
              s.hours_end = *v;
              if (s.hours_end <= s.hours_start || s.hours_end > 24 * sim::kHour)
                error(*g, "expected a time of day after start and at most 24h, got " + describe(g->value));
            }
          }
        }
      }
      if (const Entry* f = r.optional("duration")) {
        if (expect_map(*f, "a map with median (and sigma, max)")) {
          MapReader dr(f->value, f->path, {"median", "sigma", "max"}, errors_, file_);
          if (const Entry* g = dr.require("median"))
            s.median_duration = duration_value(*g, true).value_or(s.median_duration);
          if (const Entry* g = dr.optional("sigma")) s.sigma = number_in(*g, 0.0, 5.0).value_or(s.sigma);
          if (const Entry* g = dr.optional("max")) {
            if (auto v = duration_value(*g, true)) {
              s.max_duration = *v;
              if (s.max_duration < s.median_duration)
                error(*g, "expected a max at least the median duration, got " + describe(g->value));
            }
          }
        }
      }
      start_end(r, s.start, s.end, "the stream's");
      sessions.push_back(std::move(s));
    }
  }

  void load_services(const Entry& e, std::vector<models::ServiceSpec>& services) {
    const auto items = list_items(e);
    NameLines names;
    for (const Entry& item : items) {
      if (!expect_map(item, "a service (a map with name, tenant, gpus_per_replica, throughput, replicas and load)"))
        continue;
      models::ServiceSpec s;
      MapReader r(item.value, item.path,
                  {"name", "tenant", "queue", "gpus_per_replica", "cpus_per_replica", "memory_gib_per_replica",
                   "priority", "preemptible", "throughput", "replicas", "autoscaler", "load", "start", "end"},
                  errors_, file_);
      if (const Entry* f = r.require("name")) {
        if (auto v = string_value(*f)) {
          s.name = *v;
          note_name(*f, *v, names, "service name");
        }
      }
      if (const Entry* f = r.require("tenant")) s.tenant = string_value(*f).value_or("");
      if (const Entry* f = r.optional("queue")) s.queue = string_value(*f).value_or("");
      if (const Entry* f = r.require("gpus_per_replica")) s.gpus_per_replica = int32_value(*f, 1).value_or(1);
      if (const Entry* f = r.optional("cpus_per_replica")) s.cpus_per_replica = int32_value(*f, 0).value_or(0);
      if (const Entry* f = r.optional("memory_gib_per_replica"))
        s.memory_mib_per_replica = integer_value(*f, 0, INT64_MAX / 1024).value_or(0) * 1024;
      if (const Entry* f = r.optional("priority"))
        s.priority = static_cast<std::int32_t>(integer_value(*f, INT32_MIN, INT32_MAX).value_or(0));
      if (const Entry* f = r.optional("preemptible")) s.preemptible = bool_value(*f).value_or(false);
      if (const Entry* f = r.require("throughput")) s.throughput = positive_number(*f, 1e12).value_or(1);
      if (const Entry* f = r.require("replicas")) {
        if (expect_map(*f, "a map with min and max")) {
          MapReader rr(f->value, f->path, {"min", "max"}, errors_, file_);
          if (const Entry* g = rr.require("min")) s.min_replicas = int32_value(*g, 0).value_or(0);
          if (const Entry* g = rr.require("max")) {
            s.max_replicas = int32_value(*g, 1).value_or(s.min_replicas);
            if (s.max_replicas < s.min_replicas)
              error(*g, "expected max >= min (" + std::to_string(s.min_replicas) + "), got " + describe(g->value));
            if (s.max_replicas > kMaxReplicas)
              error(*g, "expected at most " + std::to_string(kMaxReplicas) + " replicas, got " + describe(g->value));
          }
        }
      }
      if (const Entry* f = r.optional("autoscaler")) {
        if (expect_map(*f, "a map with target_utilization, interval, scale_up_window, scale_down_window, tolerance")) {
          models::Autoscaler& a = s.autoscaler;
          MapReader ar(f->value, f->path,
                       {"target_utilization", "interval", "scale_up_window", "scale_down_window", "tolerance"}, errors_,
                       file_);
          if (const Entry* g = ar.optional("target_utilization"))
            a.target_utilization = number_in(*g, 0.01, 1.0).value_or(a.target_utilization);
          if (const Entry* g = ar.optional("interval")) a.interval = duration_value(*g, true).value_or(a.interval);
          if (const Entry* g = ar.optional("scale_up_window"))
            a.scale_up_window = duration_value(*g, false).value_or(a.scale_up_window);
          if (const Entry* g = ar.optional("scale_down_window"))
            a.scale_down_window = duration_value(*g, false).value_or(a.scale_down_window);
          if (const Entry* g = ar.optional("tolerance")) a.tolerance = number_in(*g, 0.0, 1.0).value_or(a.tolerance);
        }
      }
      if (const Entry* f = r.require("load")) load_curve(*f, s.load);
      start_end(r, s.start, s.end, "the service's");
      services.push_back(std::move(s));
    }
  }

  void load_curve(const Entry& e, models::LoadCurve& load) {
    if (!expect_map(e, "a map with mean_rate (and diurnal_amplitude, peak) or file")) return;
    MapReader r(e.value, e.path, {"mean_rate", "diurnal_amplitude", "peak", "file"}, errors_, file_);
    const Entry* file = r.optional("file");
    const Entry* mean = r.optional("mean_rate");
    if ((file == nullptr) == (mean == nullptr)) {
      error(e, "expected either mean_rate (a parametric diurnal curve) or file (a CSV of time,rate rows)");
      return;
    }
    if (mean != nullptr) load.mean_rate = positive_number(*mean, 1e12).value_or(0);
    if (const Entry* f = r.optional("diurnal_amplitude")) load.diurnal_amplitude = number_in(*f, 0.0, 1.0).value_or(0);
    if (const Entry* f = r.optional("peak")) {
      if (auto v = duration_value(*f, false)) {
        if (*v >= sim::kDay) error(*f, "expected a time of day below 24h, got " + describe(f->value));
        load.peak = *v;
      }
    }
    if (file != nullptr) {
      if (auto v = string_value(*file)) {
        std::filesystem::path path(*v);
        if (path.is_relative()) path = std::filesystem::path(file_).parent_path() / path;
        record("service load curve", path.string());
        read_load_csv(*file, path.string(), load);
      }
    }
  }

  // time,rate rows (time in seconds from the trace's start, or a duration like 2h; rate in
  // requests/s), an optional header row, '#' comments; times strictly increasing.
  void read_load_csv(const Entry& at, const std::string& path, models::LoadCurve& load) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error(at, "cannot open load file " + quote(path));
      return;
    }
    std::istringstream rows;
    try {
      rows.str(sim::read_capped(in, path, sim::kMaxTableBytes, "a load curve"));
    } catch (const InputError& e) {
      errors_.emplace_back(e.file(), e.line(), e.column(), "", e.message() + " (in the load file of " + at.path + ")");
      return;
    }
    std::string line;
    int n = 0;
    while (std::getline(rows, line)) {
      ++n;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      const auto comma = line.find(',');
      auto fail_row = [&](const std::string& why) {
        errors_.emplace_back(path, n, 1, "", why + " (in the load file of " + at.path + ")");
      };
      if (comma == std::string::npos) {
        fail_row("expected time,rate, got " + quote(line));
        return;
      }
      const std::string t_text = line.substr(0, comma), r_text = line.substr(comma + 1);
      auto t = sim::parse_duration(t_text);
      double rate = 0;
      const auto [end, ec] = std::from_chars(r_text.data(), r_text.data() + r_text.size(), rate);
      const bool rate_ok = !r_text.empty() && ec == std::errc() && end == r_text.data() + r_text.size() &&
                           std::isfinite(rate) && rate >= 0;
      if (!t || !rate_ok) {
        if (load.table.empty() && !t) continue;  // a header row
        fail_row(!t ? "expected a time (seconds or a duration like 2h), got " + quote(t_text)
                    : "expected a rate >= 0 (requests/s), got " + quote(r_text));
        return;
      }
      if (!load.table.empty() && *t <= load.table.back().first) {
        fail_row("times must increase: " + quote(t_text) + " is not after the row before");
        return;
      }
      load.table.emplace_back(*t, rate);
    }
    if (load.table.empty()) error(at, "load file " + quote(path) + " has no time,rate rows");
  }

  // costs: {currency: EUR, gpu_hour: {H100: 2.99, A100: 1.29}}. Each GPU type must be a pool's.
  void load_costs(const Entry& e, models::ClusterSpec& cluster, CostSpec& costs) {
    if (!expect_map(e, "a map with gpu_hour (prices per GPU-hour by GPU type) and currency")) return;
    MapReader r(e.value, e.path, {"currency", "gpu_hour"}, errors_, file_);
    if (const Entry* f = r.optional("currency")) costs.currency = string_value(*f).value_or(costs.currency);
    const Entry* prices = r.require("gpu_hour");
    if (prices == nullptr || !expect_map(*prices, "a map from GPU type to its price per GPU-hour, e.g. {H100: 2.99}"))
      return;
    std::vector<std::string> types;
    for (const auto& pool : cluster.pools)
      if (std::find(types.begin(), types.end(), pool.gpu_type) == types.end()) types.push_back(pool.gpu_type);
    MapReader items(prices->value, prices->path, types, errors_, file_);
    for (const std::string& type : types) {
      const Entry* f = items.optional(type);
      if (f == nullptr) continue;
      const auto price = positive_number(*f, kMaxPrice);
      if (!price) continue;
      costs.gpu_hour.emplace_back(type, *price);
      for (auto& pool : cluster.pools)
        if (pool.gpu_type == type) pool.gpu_hour_price = *price;
    }
  }

  // runtime: {reference_gpu: V100, classes: [{tenant: vision, class: cnn}], throughput: {cnn: {V100: 1}}}
  // (docs/heterogeneity.md). GPU names must be catalogue types, default columns or pool types.
  void load_runtime(const Entry& e, const models::ClusterSpec& cluster, models::RuntimeSpec& rt) {
    if (!expect_map(e, "a map with reference_gpu, classes and throughput")) return;
    rt.enabled = true;
    MapReader r(e.value, e.path, {"reference_gpu", "classes", "throughput"}, errors_, file_);
    std::vector<std::string> gpu_names;  // for "did you mean"
    for (const auto& g : models::gpu_catalogue()) gpu_names.push_back(g.name);
    for (const auto& g : rt.matrix.gpus())
      if (std::find(gpu_names.begin(), gpu_names.end(), g) == gpu_names.end()) gpu_names.push_back(g);
    for (const auto& pool : cluster.pools)
      if (std::find(gpu_names.begin(), gpu_names.end(), pool.gpu_type) == gpu_names.end())
        gpu_names.push_back(pool.gpu_type);
    auto known_gpu = [&](const Entry& f, const std::string& name) {
      if (models::find_gpu_type(name) != nullptr || rt.matrix.find_gpu(name)) return true;
      for (const auto& pool : cluster.pools)
        if (models::canonical_gpu_name(pool.gpu_type) == models::canonical_gpu_name(name)) return true;
      std::string msg =
          "unknown GPU type " + quote(name) + " (not in the catalogue, the default throughput table or a pool)";
      if (auto s = sim::closest_match(name, gpu_names)) msg += "; did you mean " + quote(*s) + "?";
      error(f, msg);
      return false;
    };
    // Keys of a map as given, so MapReader reports duplicates and non-scalar keys.
    auto keys_of = [](const YAML::Node& map) {
      std::vector<std::string> keys;
      for (auto it = map.begin(); it != map.end(); ++it)
        if (it->first.IsScalar()) keys.push_back(it->first.Scalar());
      return keys;
    };
    if (const Entry* f = r.optional("throughput")) {
      if (expect_map(*f, "a map from job class to {GPU type: relative throughput}")) {
        const auto classes = keys_of(f->value);
        MapReader rows(f->value, f->path, classes, errors_, file_);
        for (const auto& cls : classes) {
          const Entry* row = rows.find(cls);
          if (row == nullptr ||
              !expect_map(*row, "a map from GPU type to relative throughput, e.g. {V100: 1, A100: 2.2}"))
            continue;
          const std::size_t ri = rt.matrix.add_class(cls);
          const auto gpus = keys_of(row->value);
          MapReader cols(row->value, row->path, gpus, errors_, file_);
          for (const auto& gpu : gpus) {
            const Entry* v = cols.find(gpu);
            if (v == nullptr) continue;
            const Entry key_entry{v->key, v->key, v->path};
            if (!known_gpu(key_entry, gpu)) continue;
            if (const auto x = positive_number(*v, 1e6)) rt.matrix.set(ri, rt.matrix.add_gpu(gpu), *x);
          }
        }
      }
    }
    if (const Entry* f = r.optional("reference_gpu")) {
      if (auto v = string_value(*f); v && known_gpu(*f, *v)) rt.reference_gpu = *v;
    }
    if (const Entry* f = r.optional("classes")) {
      for (const auto& item : list_items(*f)) {
        if (!expect_map(item, "a rule such as {tenant: vision, class: cnn} (one of tenant, queue or kind)")) continue;
        MapReader m(item.value, item.path, {"tenant", "queue", "kind", "class"}, errors_, file_);
        models::ClassRule rule;
        int fields = 0;
        for (const auto& [name, field] :
             {std::pair{"tenant", models::ClassRule::Field::Tenant},
              std::pair{"queue", models::ClassRule::Field::Queue}, std::pair{"kind", models::ClassRule::Field::Kind}}) {
          const Entry* g = m.find(name);
          if (g == nullptr) continue;
          ++fields;
          rule.field = field;
          rule.value = string_value(*g).value_or("");
          models::JobKind kind{};
          if (field == models::ClassRule::Field::Kind && !rule.value.empty() &&
              !models::parse_job_kind(rule.value, kind))
            error(*g,
                  "unknown job kind " + quote(rule.value) + " (expected one of: train, inference, interactive, batch)");
        }
        if (fields != 1) {
          error(item, "expected exactly one of tenant, queue or kind in a class rule, got " + std::to_string(fields));
          continue;
        }
        const Entry* c = m.require("class");
        if (c == nullptr) continue;
        const auto cls = string_value(*c);
        if (!cls) continue;
        if (!rt.matrix.find_class(*cls)) {
          std::string msg = "unknown job class " + quote(*cls) + " (define its row under runtime.throughput";
          if (auto s = sim::closest_match(*cls, rt.matrix.classes())) msg += "; did you mean " + quote(*s) + "?";
          error(*c, msg + ")");
          continue;
        }
        rule.cls = *cls;
        rt.rules.push_back(std::move(rule));
      }
    }
  }

  void load_output(const Entry& e, OutputSpec& output) {
    if (!expect_map(e, "a map with sample_interval and events")) return;
    MapReader r(e.value, e.path, {"sample_interval", "events"}, errors_, file_);
    if (const Entry* f = r.optional("sample_interval")) {
      output.sample_interval = duration_value(*f, true).value_or(0);
      const Location at = f->location();
      output.interval_line = at.line;
      output.interval_column = at.column;
    }
    if (const Entry* f = r.optional("events")) output.events = bool_value(*f).value_or(true);
  }

  // One more file read (once).
  void record(const std::string& what, const std::string& path) {
    for (const auto& f : files_)
      if (f.path == path) return;
    files_.push_back({what, path});
  }

  const std::string& file_;
  std::vector<InputError> errors_;
  std::map<std::string, policies::SiteImport> site_files_;     // by "<key>:<path>"
  const models::ClusterSpec* cluster_ = nullptr;               // the scenario's, once loaded
  std::shared_ptr<const models::TopologySpec> topology_spec_;  // cluster.topology's, once built
  policies::PoolLabels pool_labels_;                           // per pool of `cluster.pools`

 public:
  std::vector<std::string> warnings_;
  std::vector<FileRead> files_;  // Scenario::files but the scenario and its trace
  Location cluster_at_;          // the `cluster:` key

 private:
  int param_budget_ = kMaxParamNodes;  // spent by count_nodes over the whole `policy:` block
  bool param_budget_reported_ = false;
};

[[noreturn]] void fail(InputError error) { throw sim::InputErrors({std::move(error)}); }

InputError parser_error(const YAML::ParserException& e, const std::string& file) {
  std::string msg = e.msg;
  if (msg.find("tab") != std::string::npos) msg += " (YAML indents with spaces, never tabs)";
  // yaml-cpp stops at a depth of its own (a few hundred to 2000 nested lists and maps) with "bad file".
  if (dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr)
    msg = "lists and maps nested too deep for the YAML parser (a scenario nests a few levels)";
  return InputError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0, "", msg);
}

// A scenario is one YAML document, checked before the tree is built (sim/yaml_documents.hpp):
// yaml-cpp 0.7 silently drops, or loops forever on, a token that cannot start a node, so at most
// three documents are walked; a stray token and a second document are errors.
std::optional<InputError> check_documents(const std::string& text, const std::string& file) {
  sim::YamlDocuments walk;
  try {
    walk = sim::walk_yaml_documents(text, file, 3);
  } catch (const YAML::ParserException& e) {
    return parser_error(e, file);
  } catch (const InputError& e) {  // an alias bomb or too deep a nesting (sim/yaml_documents.hpp)
    return e;
  }
  const auto& docs = walk.docs;
  if (walk.stray) {
    const YAML::Mark at = *walk.stray;
    std::string what = "unexpected text";
    if (at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size()) {
      const char c = text[static_cast<std::size_t>(at.pos)];
      if (c > 0x20 && c < 0x7f) what = "unexpected " + quote(std::string_view(&c, 1));
    }
    return InputError(file, at.line + 1, at.column + 1, "", what + " where a YAML value or a new key should be");
  }
  if (docs.size() > 1)
    return InputError(file, docs[1].start.line + 1, docs[1].start.column + 1, "",
                      "a scenario file holds one YAML document; a second one starts here");
  return std::nullopt;
}

}  // namespace

Scenario load_scenario(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(InputError(path, 0, 0, "", "cannot read scenario file (a directory)"));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    fail(InputError(path, 0, 0, "", std::string("cannot read scenario file: ") + std::strerror(err)));
  }
  std::string text;
  try {
    text = sim::read_capped(in, path, sim::kMaxConfigBytes, "a scenario file");
  } catch (InputError& e) {
    fail(std::move(e));
  }
  return parse_scenario(text, path);
}

Scenario parse_scenario(const std::string& text, const std::string& file) {
  Scenario out;
  out.file = file;
  out.text = text;
  if (auto bad = check_text(text, file)) fail(std::move(*bad));

  if (auto bad = check_documents(text, file)) fail(std::move(*bad));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(parser_error(e, file));
  } catch (const YAML::Exception& e) {
    fail(InputError(file, 0, 0, "", e.msg));
  }
  if (root.IsNull())
    fail(InputError(file, 1, 1, "",
                    "the scenario is empty; expected a map with keys name, cluster, policy and workload"));

  Loader loader(file);
  try {
    loader.load(root, out);
  } catch (const YAML::Exception& e) {
    // Not expected: every node is type-checked before use. Reported rather than leaked.
    loader.errors().emplace_back(file, e.mark.line + 1, e.mark.column + 1, "", "unreadable YAML: " + e.msg);
  }
  auto& errors = loader.errors();
  out.warnings = loader.warnings_;
  out.files.push_back({"scenario", file});
  if (!out.workload.trace.empty()) out.files.push_back({"trace", out.workload.trace});
  out.files.insert(out.files.end(), loader.files_.begin(), loader.files_.end());
  if (errors.empty()) {
    // The free-GPU index a run of this cluster holds, with the units the policy advertises
    // (time-slicing replicas, MIG slices): bounded (models::kMaxFreeIndexEntries).
    auto check_free_index = [&](const models::ClusterSpec& advertised, const std::string& whose) {
      if (std::string why = models::free_index_overflow(advertised); !why.empty())
        errors.emplace_back(file, loader.cluster_at_.line, loader.cluster_at_.column, "cluster", whose + why);
    };
    // What the policy makes of the cluster (the device plugin's MIG geometries against the pools'
    // GPU models) is checked here too, so `headroom validate` finds it before a run does.
    if (out.split.declared()) {
      // Each system's policy on its own partition.
      policies::split::Partitioning parts;
      try {
        parts = policies::split::partition_cluster(out.split, out.cluster, out.topology_spec.get());
      } catch (const InputError& e) {
        errors.push_back(e);
      }
      // The engine's index holds every system's home pools as that system advertises them.
      std::vector<models::ClusterSpec> advertised;
      const std::size_t errors_before = errors.size();
      for (std::size_t s = 0; s < out.split.systems.size() && s < parts.parts.size(); ++s) {
        const auto& sys = out.split.systems[s];
        try {
          advertised.push_back(
              policies::make_policy(sys.policy, sys.params, out.seed)->advertised_cluster(parts.parts[s]));
          check_free_index(advertised.back(), "system " + quote(sys.name) + "'s ");
        } catch (const InputError& e) {
          errors.push_back(e);
        }
        for (auto& e : policies::check_cluster_refs(sys.policy, sys.params, parts.parts[s]))
          errors.push_back(std::move(e));
      }
      if (errors.size() == errors_before)
        check_free_index(policies::split::engine_cluster(parts, advertised), "the systems' ");
    } else {
      try {
        check_free_index(
            policies::make_policy(out.policy.name, out.policy.params, out.seed)->advertised_cluster(out.cluster), "");
      } catch (const InputError& e) {
        errors.push_back(e);
      }
      // The pools, switches and nodes the policy block names exist, each problem at its reference.
      for (auto& e : policies::check_cluster_refs(out.policy.name, out.policy.params, out.cluster))
        errors.push_back(std::move(e));
    }
    for (const auto& o : out.policy_overrides)
      for (auto& e : policies::check_cluster_refs(o.name, o.params, out.cluster)) errors.push_back(std::move(e));
  }
  if (errors.empty()) return out;
  // Reported in reading order; problems at the same place keep the order they were found in.
  std::stable_sort(errors.begin(), errors.end(), [](const InputError& a, const InputError& b) {
    return a.line() != b.line() ? a.line() < b.line() : a.column() < b.column();
  });
  if (errors.size() > kMaxErrors) {
    const std::size_t more = errors.size() - kMaxErrors;
    errors.erase(errors.begin() + kMaxErrors, errors.end());
    errors.emplace_back(file, 0, 0, "", "... and " + std::to_string(more) + " more problems");
  }
  throw sim::InputErrors(std::move(errors));
}

}  // namespace headroom::scenarios
