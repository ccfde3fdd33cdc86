// slurm.conf and gres.conf, read as slurmctld reads them (slurm.conf(5), gres.conf(5)): one
// `Key=Value ...` record a line, '#' starts a comment, a trailing '\' continues the line, keys are
// case-insensitive, `Include FILE` reads another file (relative to slurm.conf's folder). Global
// keys the slurm policy models become its parameters; NodeName and PartitionName records become
// node pools and partitions.
#include "policies/slurm/slurm_conf.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "policies/common/param_text.hpp"
#include "policies/slurm/slurm.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::policies::slurm {

namespace {

constexpr int kMaxIncludeDepth = 16;
constexpr std::size_t kMaxHosts = 1'000'000;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

struct Item {
  std::string key;  // as written
  std::string value;
};

struct Record {
  std::string file;
  int line = 0;
  std::vector<Item> items;
  const std::string* get(std::string_view key) const {
    for (const auto& i : items)
      if (lower(i.key) == key) return &i.value;
    return nullptr;
  }
};

[[noreturn]] void fail(const std::string& file, int line, const std::string& msg) {
  throw sim::InputError(file, line, 0, "", msg);
}

// Splits a logical line into Key=Value items (values may be "quoted").
std::vector<Item> tokenize(const std::string& text, const std::string& file, int line) {
  std::vector<Item> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    std::string token;
    bool quoted = false;
    while (i < text.size() && (quoted || !std::isspace(static_cast<unsigned char>(text[i])))) {
      if (text[i] == '"') {
        quoted = !quoted;
      } else {
        token += text[i];
      }
      ++i;
    }
    if (quoted) fail(file, line, "a quote is not closed");
    const std::size_t eq = token.find('=');
    if (eq == std::string::npos) {
      out.push_back({token, ""});
    } else {
      out.push_back({token.substr(0, eq), token.substr(eq + 1)});
    }
  }
  return out;
}

void read_file(const std::filesystem::path& path, int depth, std::vector<Record>& out) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(file, 0, "cannot read the Slurm configuration file");
  std::string raw, logical;
  int line = 0, start = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    bool in_quote = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '"') in_quote = !in_quote;
      if (raw[i] == '#' && !in_quote) {
        raw.resize(i);
        break;
      }
    }
    if (logical.empty()) start = line;
    const bool more = !raw.empty() && raw.back() == '\\';
    if (more) raw.pop_back();
    logical += raw;
    if (more) continue;
    std::vector<Item> items = tokenize(logical, file, start);
    logical.clear();
    if (items.empty()) continue;
    if (lower(items[0].key) == "include" && items[0].value.empty()) {
      if (items.size() != 2 || !items[1].value.empty())
        fail(file, start, "expected `Include FILE`, got " + std::to_string(items.size() - 1) + " words after Include");
      if (depth >= kMaxIncludeDepth) fail(file, start, "Include nests more than 16 files deep (a loop?)");
      std::filesystem::path inc = items[1].key;
      if (inc.is_relative()) inc = path.parent_path() / inc;
      read_file(inc, depth + 1, out);
      continue;
    }
    for (const auto& it : items)
      if (it.key.empty()) fail(file, start, "expected Key=Value, got \"=" + it.value + "\"");
    out.push_back({file, start, std::move(items)});
  }
}

std::int64_t to_int(const Record& r, const std::string& key, const std::string& v, std::int64_t lo, std::int64_t hi) {
  std::int64_t n = 0;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, n);
  if (ec != std::errc() || p != end || v.empty() || n < lo || n > hi)
    fail(
        r.file, r.line,
        key + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got \"" + v + "\"");
  return n;
}

// "gpu:a100:8,gpu:2(S:0-1),mps:100" -> GPUs and the one type (empty when none or several).
void parse_gres(const Record& r, const std::string& text, std::int64_t& gpus, std::string& type) {
  gpus = 0;
  type.clear();
  bool several = false;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = at;
    int depth = 0;
    for (; end < text.size(); ++end) {
      if (text[end] == '(') ++depth;
      if (text[end] == ')') depth = std::max(depth - 1, 0);
      if (text[end] == ',' && depth == 0) break;
    }
    std::string item = text.substr(at, end - at);
    at = end + 1;
    item = item.substr(0, item.find('('));
    const auto c1 = item.find(':');
    if (item.substr(0, c1) == "gpu") {
      std::string t, count = "1";
      if (c1 != std::string::npos) {
        const std::string rest = item.substr(c1 + 1);
        const auto c2 = rest.find(':');
        if (c2 != std::string::npos) {
          t = rest.substr(0, c2);
          count = rest.substr(c2 + 1);
        } else if (!rest.empty() && std::all_of(rest.begin(), rest.end(), ::isdigit)) {
          count = rest;
        } else {
          t = rest;
        }
      }
      // "no_consume" and size suffixes are not GPU counts.
      if (!count.empty() && (count.back() == 'K' || count.back() == 'k')) count.pop_back();
      gpus += to_int(r, "Gres", count, 0, 1'000'000);
      if (!t.empty()) {
        if (!type.empty() && type != t) several = true;
        if (type.empty()) type = t;
      }
    }
    if (end >= text.size()) break;
  }
  if (several) type.clear();
}

std::string compress_hostlist(const std::vector<std::string>& names) {
  // "gpu01","gpu02","gpu04" -> "gpu[01-02,04]" when they share a prefix and digit width.
  std::string out;
  std::size_t i = 0;
  while (i < names.size()) {
    const std::string& n = names[i];
    std::size_t d = n.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(n[d - 1]))) --d;
    if (d == n.size() || n.size() - d > 18) {  // no number, or one too long to count with
      out += (out.empty() ? "" : ",") + n;
      ++i;
      continue;
    }
    const std::string prefix = n.substr(0, d);
    const std::size_t width = n.size() - d;
    std::vector<std::pair<std::string, std::string>> ranges;
    std::size_t j = i;
    std::int64_t prev = -2;
    // Zero-padded numbers keep their width; unpadded ones (9, 10) go together.
    const bool padded = width > 1 && n[d] == '0';
    for (; j < names.size(); ++j) {
      const std::string& m = names[j];
      if (m.size() <= prefix.size() || m.compare(0, prefix.size(), prefix) != 0) break;
      const std::string digits = m.substr(prefix.size());
      if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) break;
      const bool m_padded = digits.size() > 1 && digits[0] == '0';
      if (digits.size() > 18 || (padded ? digits.size() != width : m_padded)) break;
      const std::int64_t v = std::stoll(digits);
      if (v == prev + 1 && !ranges.empty()) {
        ranges.back().second = digits;
      } else {
        ranges.emplace_back(digits, digits);
      }
      prev = v;
    }
    std::string body;
    for (const auto& [a, b] : ranges) body += (body.empty() ? "" : ",") + (a == b ? a : a + "-" + b);
    const bool bracket = ranges.size() > 1 || ranges[0].first != ranges[0].second;
    out += (out.empty() ? "" : ",") + prefix + (bracket ? "[" + body + "]" : body);
    i = j;
  }
  return out;
}

struct NodeDef {
  std::string pool_base;  // the NodeName value
  std::string name;
  std::int64_t gpus = 0;
  std::string gpu_type;
  std::int64_t cpus = 0;
  std::int64_t memory_mib = 0;
  std::int64_t weight = 1;
  int line_index = 0;
  std::set<std::string> partitions;
  std::set<std::string> features;  // Feature= (for NodeSet=... Feature=...)
};

// Keys of slurm.conf that change scheduling but are not modelled: listed once as a warning.
const std::set<std::string>& unmodelled_keys() {
  static const std::set<std::string> k = {"defmempercpu",
                                          "defmempernode",
                                          "defcpupergpu",
                                          "defmempergpu",
                                          "maxmempercpu",
                                          "maxmempernode",
                                          "enforcepartlimits",
                                          "overtimelimit",
                                          "accountingstorageenforce",
                                          "topologyplugin",
                                          "topologyparam",
                                          "priorityparameters",
                                          "prioritysitefactorplugins",
                                          "prioritysitefactorparameters",
                                          "jobrequeue"};
  return k;
}

// Partition fields that change scheduling but are not modelled.
const std::set<std::string>& unmodelled_partition_fields() {
  static const std::set<std::string> k = {"allowaccounts", "allowgroups",  "allowqos",           "denyaccounts",
                                          "denyqos",       "maxnodes",     "minnodes",           "maxcpuspernode",
                                          "qos",           "preemptmode",  "tresbillingweights", "lln",
                                          "maxmempercpu",  "defmempercpu", "exclusiveuser",      "reqresv"};
  return k;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < list.size()) {
    // One host expression: text with [ranges] groups, up to a comma outside brackets.
    std::size_t end = i;
    int depth = 0;
    for (; end < list.size(); ++end) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      if (depth < 0) throw std::invalid_argument("unbalanced ']' in hostlist \"" + list + "\"");
      if (list[end] == ',' && depth == 0) break;
    }
    if (depth != 0) throw std::invalid_argument("unclosed '[' in hostlist \"" + list + "\"");
    const std::string expr = list.substr(i, end - i);
    i = end + 1;
    if (expr.empty()) continue;
    std::vector<std::string> partial{""};
    std::size_t k = 0;
    while (k < expr.size()) {
      if (expr[k] != '[') {
        const std::size_t open = expr.find('[', k);
        const std::string lit = expr.substr(k, open == std::string::npos ? std::string::npos : open - k);
        for (auto& p : partial) p += lit;
        k = open == std::string::npos ? expr.size() : open;
        continue;
      }
      const std::size_t close = expr.find(']', k);
      const std::string spec = expr.substr(k + 1, close - k - 1);
      k = close + 1;
      std::vector<std::string> values;
      std::size_t s = 0;
      while (s <= spec.size()) {
        const std::size_t comma = spec.find(',', s);
        const std::string r = spec.substr(s, comma == std::string::npos ? std::string::npos : comma - s);
        s = comma == std::string::npos ? spec.size() + 1 : comma + 1;
        const std::size_t dash = r.find('-');
        const std::string a = r.substr(0, dash), b = dash == std::string::npos ? a : r.substr(dash + 1);
        const auto digits = [](const std::string& x) {
          return !x.empty() && x.size() < 10 && std::all_of(x.begin(), x.end(), ::isdigit);
        };
        if (!digits(a) || !digits(b) || std::stoll(b) < std::stoll(a))
          throw std::invalid_argument("expected ranges like [1-4,7] in hostlist \"" + list + "\", got \"" + r + "\"");
        const std::size_t width = a.size();
        for (std::int64_t v = std::stoll(a); v <= std::stoll(b); ++v) {
          std::string n = std::to_string(v);
          if (n.size() < width) n = std::string(width - n.size(), '0') + n;
          values.push_back(n);
          if (values.size() > kMaxHosts) throw std::invalid_argument("hostlist names more than 1,000,000 hosts");
        }
      }
      std::vector<std::string> next;
      for (const auto& p : partial)
        for (const auto& v : values) next.push_back(p + v);
      if (next.size() > kMaxHosts) throw std::invalid_argument("hostlist names more than 1,000,000 hosts");
      partial = std::move(next);
    }
    for (auto& p : partial) out.push_back(std::move(p));
    if (out.size() > kMaxHosts) throw std::invalid_argument("hostlist names more than 1,000,000 hosts");
  }
  return out;
}

SlurmConfImport read_slurm_conf(const std::string& path) {
  std::vector<Record> records;
  read_file(path, 0, records);
  SlurmConfImport out;
  out.files.push_back(path);
  for (const Record& r : records)  // the Includes that held records (issue #31: outputs)
    if (std::find(out.files.begin(), out.files.end(), r.file) == out.files.end()) out.files.push_back(r.file);
  std::set<std::string> warned;
  auto warn_once = [&](const Record& r, const std::string& key, const std::string& what) {
    if (!warned.insert(lower(key)).second) return;
    out.warnings.push_back(r.file + ":" + std::to_string(r.line) + ": " + what);
  };
  auto set_param = [&](const Record& r, const std::string& key, const std::string& value) {
    out.params[key] = ParamValue{value, r.file, r.line, 0};
  };
  // Global keys the policy models, by lower-case name.
  std::map<std::string, std::string> modelled;
  for (const auto& k : param_keys())
    if (k.find('.') == std::string::npos) modelled[lower(k)] = k;

  std::vector<NodeDef> nodes;
  std::map<std::string, std::size_t> node_at;
  std::map<std::string, std::string> node_default, part_default;
  struct Part {
    const Record* record;
    std::map<std::string, std::string> fields;  // lower-case key -> value
    std::string name;
  };
  std::vector<Part> parts;
  struct NodeSet {
    const Record* record;
    std::string nodes, feature;  // Nodes= hostlist, Feature= name
  };
  std::map<std::string, NodeSet> nodesets;  // NodeSet name -> its record
  int node_line = 0;
  for (const Record& r : records) {
    const std::string head = lower(r.items[0].key);
    if (head == "nodename") {
      std::map<std::string, std::string> f = node_default;
      for (std::size_t i = 1; i < r.items.size(); ++i) f[lower(r.items[i].key)] = r.items[i].value;
      const std::string& list = r.items[0].value;
      if (list == "DEFAULT" || list == "default") {
        node_default = f;
        continue;
      }
      NodeDef d;
      d.pool_base = list;
      d.line_index = node_line++;
      if (f.count("gres")) parse_gres(r, f["gres"], d.gpus, d.gpu_type);
      if (f.count("cpus")) {
        d.cpus = to_int(r, "CPUs", f["cpus"], 0, 1'000'000);
      } else if (f.count("procs")) {
        d.cpus = to_int(r, "Procs", f["procs"], 0, 1'000'000);
      } else if (f.count("sockets") || f.count("corespersocket") || f.count("threadspercore")) {
        const auto get = [&](const char* k) { return f.count(k) ? to_int(r, k, f[k], 1, 100'000) : std::int64_t{1}; };
        d.cpus = get("boards") * get("sockets") * get("corespersocket") * get("threadspercore");
      }
      if (f.count("realmemory")) d.memory_mib = to_int(r, "RealMemory", f["realmemory"], 0, 1'000'000'000'000);
      if (f.count("weight")) d.weight = to_int(r, "Weight", f["weight"], 0, 65533);
      if (f.count("feature")) {
        for (auto& feature : sim::split_on(f["feature"], ','))
          if (!feature.empty()) d.features.insert(std::move(feature));
      }
      if (f.count("state") && lower(f["state"]) == "future") continue;  // not yet in service
      if (f.count("state") && lower(f["state"]) == "cloud")
        warn_once(r, "state=cloud",
                  "State=CLOUD nodes are counted as powered up: power saving (a node booted for a job, "
                  "ResumeTimeout, SuspendTime) is not modelled");
      std::vector<std::string> names;
      try {
        names = expand_hostlist(list);
      } catch (const std::invalid_argument& e) {
        fail(r.file, r.line, std::string("NodeName: ") + e.what());
      }
      for (const auto& n : names) {
        if (node_at.count(n)) fail(r.file, r.line, "node \"" + n + "\" is defined twice");
        node_at[n] = nodes.size();
        d.name = n;
        nodes.push_back(d);
        if (nodes.size() > kMaxHosts) fail(r.file, r.line, "more than 1,000,000 nodes");
      }
    } else if (head == "partitionname") {
      std::map<std::string, std::string> f = part_default;
      for (std::size_t i = 1; i < r.items.size(); ++i) f[lower(r.items[i].key)] = r.items[i].value;
      if (r.items[0].value == "DEFAULT" || r.items[0].value == "default") {
        part_default = f;
        continue;
      }
      parts.push_back({&r, f, r.items[0].value});
    } else if (head == "nodeset") {
      // NodeSet=name Nodes=hostlist | Feature=name: a name partitions' Nodes= may use for those nodes.
      NodeSet ns{&r, {}, {}};
      for (std::size_t i = 1; i < r.items.size(); ++i) {
        const std::string k = lower(r.items[i].key);
        if (k == "nodes")
          ns.nodes = r.items[i].value;
        else if (k == "feature")
          ns.feature = r.items[i].value;
      }
      if (ns.nodes.empty() == ns.feature.empty())
        fail(r.file, r.line, "NodeSet " + r.items[0].value + ": expected Nodes= or Feature= (one of them)");
      if (!nodesets.emplace(r.items[0].value, ns).second)
        fail(r.file, r.line, "NodeSet " + r.items[0].value + " is defined twice");
    } else if (head == "frontendname" || head == "downnodes" || head == "switchname") {
      warn_once(r, head, r.items[0].key + " records are not read");
    } else {
      for (const auto& it : r.items) {
        const std::string k = lower(it.key);
        if (k == "schedulerparameters") {
          // The items the policy models are kept; the others warn once each (those that do not
          // change a scheduling decision are accepted quietly), as every other key of the file.
          static const std::set<std::string> kQuiet = {"nohold_on_prolog_fail",  "enable_user_top",
                                                       "salloc_wait_nodes",      "sbatch_wait_nodes",
                                                       "requeue_setup_env_fail", "max_script_size"};
          std::string kept;
          for (const std::string& item : sim::split_on(it.value, ',')) {
            if (item.empty()) continue;
            const std::string name = item.substr(0, item.find('='));
            if (std::find(kSchedulerParameters.begin(), kSchedulerParameters.end(), name) !=
                kSchedulerParameters.end()) {
              kept += (kept.empty() ? "" : ",") + item;
            } else if (!kQuiet.count(name)) {
              warn_once(r, "SchedulerParameters." + name,
                        "SchedulerParameters item " + item + " changes scheduling and is not modelled");
            }
          }
          if (!kept.empty()) set_param(r, "SchedulerParameters", kept);
        } else if (auto m = modelled.find(k); m != modelled.end()) {
          set_param(r, m->second, it.value);
        } else if (k == "authinfo") {
          const auto at = it.value.find("cred_expire=");
          if (at != std::string::npos) {
            std::string v = it.value.substr(at + 12);
            set_param(r, "cred_expire", v.substr(0, v.find(',')));
          }
        } else if (k == "priorityweightassoc") {
          set_param(r, "PriorityWeightAssoc", it.value);
        } else if (unmodelled_keys().count(k)) {
          warn_once(r, it.key, it.key + "=" + it.value + " changes scheduling and is not modelled");
        }
      }
    }
  }
  // gres.conf beside slurm.conf: GPU types (and counts) for nodes whose Gres names none.
  const std::filesystem::path gres = std::filesystem::path(path).parent_path() / "gres.conf";
  if (std::filesystem::exists(gres)) {
    std::vector<Record> grecs;
    read_file(gres, 0, grecs);
    out.files.push_back(gres.string());
    for (const Record& r : grecs) {
      const std::string* name = r.get("name");
      if (name == nullptr || *name != "gpu") continue;
      const std::string* type = r.get("type");
      const std::string* list = r.get("nodename");
      std::vector<std::string> targets;
      try {
        if (list != nullptr) targets = expand_hostlist(*list);
      } catch (const std::invalid_argument& e) {
        fail(r.file, r.line, std::string("NodeName: ") + e.what());
      }
      for (auto& nd : nodes) {
        if (list != nullptr && std::find(targets.begin(), targets.end(), nd.name) == targets.end()) continue;
        if (type != nullptr && nd.gpu_type.empty()) nd.gpu_type = *type;
      }
    }
  }
  // Partition membership.
  for (const Part& p : parts) {
    const auto nit = p.fields.find("nodes");
    std::vector<std::string> members;
    if (nit == p.fields.end() || nit->second == "ALL" || nit->second == "all") {
      for (const auto& n : nodes) members.push_back(n.name);
    } else {
      try {
        for (auto& m : expand_hostlist(nit->second)) {
          const auto set = nodesets.find(m);
          if (set == nodesets.end()) {
            members.push_back(std::move(m));
          } else if (!set->second.feature.empty()) {
            for (const auto& n : nodes)
              if (n.features.count(set->second.feature)) members.push_back(n.name);
          } else {
            try {
              for (auto& n : expand_hostlist(set->second.nodes)) members.push_back(std::move(n));
            } catch (const std::invalid_argument& e) {
              fail(set->second.record->file, set->second.record->line, std::string("Nodes: ") + e.what());
            }
          }
        }
      } catch (const std::invalid_argument& e) {
        fail(p.record->file, p.record->line, std::string("Nodes: ") + e.what());
      }
    }
    for (const auto& m : members) {
      const auto it = node_at.find(m);
      if (it == node_at.end()) {
        warn_once(*p.record, "unknown-node-" + p.name,
                  "partition " + p.name + " names node \"" + m + "\", which no NodeName line defines");
        continue;
      }
      nodes[it->second].partitions.insert(p.name);
    }
  }
  // Pools: nodes with GPUs, grouped by (NodeName line, partitions), in file order.
  std::vector<std::string> keys;
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeDef& n = nodes[i];
    if (n.gpus == 0) {
      ++out.cpu_only_nodes;
      continue;
    }
    std::string key = std::to_string(n.line_index);
    for (const auto& p : n.partitions) key += "|" + p;
    if (!groups.count(key)) keys.push_back(key);
    groups[key].push_back(i);
  }
  std::map<std::string, std::vector<std::string>> pools_of_partition;
  for (const auto& key : keys) {
    const auto& idx = groups[key];
    const NodeDef& first = nodes[idx.front()];
    std::vector<std::string> names;
    for (auto i : idx) names.push_back(nodes[i].name);
    models::NodePool pool;
    // "gpu[01-04,07]" -> "gpu01-04_07": brackets are hostlist syntax in topology node names.
    pool.name = compress_hostlist(names);
    std::replace(pool.name.begin(), pool.name.end(), ',', '_');
    pool.name.erase(std::remove_if(pool.name.begin(), pool.name.end(), [](char c) { return c == '[' || c == ']'; }),
                    pool.name.end());
    pool.nodes = static_cast<std::int32_t>(idx.size());
    pool.gpus_per_node = static_cast<std::int32_t>(first.gpus);
    pool.gpu_type = first.gpu_type.empty() ? "gpu" : first.gpu_type;
    pool.cpus_per_node = static_cast<std::int32_t>(first.cpus);
    pool.memory_gib = first.memory_mib / 1024;
    out.cluster.pools.push_back(pool);
    if (first.weight != 1) {
      const Record* at = nullptr;
      for (const Record& r : records)
        if (lower(r.items[0].key) == "nodename" && r.items[0].value == first.pool_base) at = &r;
      out.params["nodes." + pool.name + ".Weight"] =
          ParamValue{std::to_string(first.weight), at ? at->file : path, at ? at->line : 0, 0};
    }
    for (const auto& p : first.partitions) pools_of_partition[p].push_back(pool.name);
  }
  for (const Part& p : parts) {
    const Record& r = *p.record;
    const auto& pools = pools_of_partition[p.name];
    if (pools.empty()) {
      warn_once(r, "partition-" + p.name, "partition " + p.name + " has no GPU nodes; left out");
      continue;
    }
    std::string list;
    for (const auto& n : pools) list += (list.empty() ? "" : ", ") + n;
    set_param(r, "partitions." + p.name + ".Nodes", "[" + list + "]");
    for (const auto& [k, v] : p.fields) {
      static const std::map<std::string, std::string> kFields = {{"prioritytier", "PriorityTier"},
                                                                 {"priorityjobfactor", "PriorityJobFactor"},
                                                                 {"maxtime", "MaxTime"},
                                                                 {"defaulttime", "DefaultTime"},
                                                                 {"default", "Default"},
                                                                 {"gracetime", "GraceTime"},
                                                                 {"state", "State"}};
      if (auto f = kFields.find(k); f != kFields.end()) {
        set_param(r, "partitions." + p.name + "." + f->second, v);
      } else if (k == "priority") {  // before Slurm 16.05: both tier and job factor
        set_param(r, "partitions." + p.name + ".PriorityTier", v);
        set_param(r, "partitions." + p.name + ".PriorityJobFactor", v);
      } else if (k == "oversubscribe" || k == "shared") {
        const std::string u = lower(v);
        if (u == "exclusive" || u == "no") {
          set_param(r, "partitions." + p.name + ".OverSubscribe", u == "no" ? "NO" : "EXCLUSIVE");
        } else {
          warn_once(r, "part-oversubscribe", "partition OverSubscribe=" + v + " is not modelled (NO, EXCLUSIVE are)");
        }
      } else if (unmodelled_partition_fields().count(k)) {
        warn_once(r, "part-" + k, "partition field " + k + "=" + v + " changes scheduling and is not modelled");
      }
    }
  }
  if (out.cluster.pools.empty())
    fail(path, 0,
         "no GPU nodes: no NodeName line has a Gres=gpu:... (" + std::to_string(out.cpu_only_nodes) +
             " CPU-only nodes)");
  return out;
}

namespace {

// A '|' table with a header row (sacctmgr -P, sshare -P): the rows as maps from lower-case
// column name to the cell (leading spaces kept), with their line numbers.
struct PipeTable {
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<int> lines;
};

PipeTable read_pipe_table(const std::string& path, std::initializer_list<const char*> required) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, "cannot read the file");
  PipeTable t;
  std::vector<std::string> header;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.find_first_not_of(" \t") == std::string::npos) continue;
    auto cells = sim::split_on(raw, '|');
    // `-p` (not -P) ends every line with the delimiter.
    const std::size_t want = header.empty() ? cells.size() : header.size();
    if (cells.size() > 1 && cells.back().empty() && (header.empty() || cells.size() == want + 1)) cells.pop_back();
    if (header.empty()) {
      for (auto& c : cells) header.push_back(lower(c));
      for (const char* r : required)
        if (std::find(header.begin(), header.end(), r) == header.end())
          fail(path, line,
               std::string("missing column \"") + r + "\" in the header (export with -P, which prints one)");
      continue;
    }
    if (cells.size() != header.size())
      fail(
          path, line,
          "expected " + std::to_string(header.size()) + " cells as in the header, got " + std::to_string(cells.size()));
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size(); ++i) row[header[i]] = cells[i];
    t.rows.push_back(std::move(row));
    t.lines.push_back(line);
  }
  if (header.empty()) fail(path, 0, "empty file; expected a header row");
  return t;
}

// "1-00:00:00", "00:05:00" -> whole seconds; empty -> empty.
std::string seconds_of(const std::string& path, int line, const std::string& key, const std::string& v) {
  if (v.empty()) return v;
  const auto t = parse_slurm_time(v, sim::kSecond);
  if (!t || *t < 0) fail(path, line, key + ": expected a time like 00:05:00, got \"" + v + "\"");
  return std::to_string(*t / sim::kSecond);
}

}  // namespace

SlurmConfImport read_sacctmgr_qos(const std::string& path) {
  const PipeTable t = read_pipe_table(path, {"name"});
  SlurmConfImport out;
  out.files.push_back(path);
  std::set<std::string> warned;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const int line = t.lines[i];
    const std::string name = std::string(trim(row.at("name")));
    if (name.empty()) fail(path, line, "Name: empty QOS name");
    const auto set = [&](const std::string& field, const std::string& v) {
      if (!v.empty()) out.params["qos." + name + "." + field] = ParamValue{v, path, line, 0};
    };
    for (const auto& [col, v] : row) {
      if (v.empty() || col == "name" || col == "preemptmode" || col == "id" || col == "description") continue;
      if (col == "priority") {
        set("Priority", v);
      } else if (col == "preempt") {
        set("Preempt", v);
      } else if (col == "usagefactor") {
        set("UsageFactor", v);
      } else if (col == "gracetime") {
        set("GraceTime", seconds_of(path, line, "GraceTime", v));
      } else if (col == "preemptexempttime") {
        set("PreemptExemptTime", v);
      } else if (col == "maxjobspu") {
        set("MaxJobsPerUser", v);
      } else if (col == "maxtrespu") {
        // "cpu=64,gres/gpu=8": the GPUs are modelled (policies/slurm/limits.hpp), the rest is not.
        std::string rest;
        for (const std::string& part : sim::split_on(v, ',')) {
          const std::string item = std::string(trim(part));
          if (item.empty()) continue;
          if (item.rfind("gres/gpu=", 0) == 0) {
            set("MaxGPUsPerUser", item.substr(9));
          } else {
            rest += (rest.empty() ? "" : ",") + item;
          }
        }
        if (!rest.empty() && warned.insert(col + ":" + rest).second)
          out.warnings.push_back(path + ":" + std::to_string(line) + ": QOS MaxTRESPU=" + rest + " (QOS " + name +
                                 ") changes scheduling and is not modelled (gres/gpu is)");
      } else if (col == "usagethres" || col == "flags" || col.rfind("grp", 0) == 0 || col.rfind("max", 0) == 0 ||
                 col.rfind("min", 0) == 0) {
        if (warned.insert(col).second)
          out.warnings.push_back(path + ":" + std::to_string(line) + ": QOS " + col + "=" + v + " (QOS " + name +
                                 ") changes scheduling and is not modelled");
      }
    }
  }
  return out;
}

SlurmConfImport read_sshare(const std::string& path) {
  const PipeTable t = read_pipe_table(path, {"account", "user", "rawshares", "rawusage"});
  SlurmConfImport out;
  out.files.push_back(path);
  std::vector<std::pair<std::size_t, std::string>> stack;  // (depth, account)
  std::map<std::string, std::vector<std::string>> users;
  std::map<std::string, int> account_line;
  std::set<std::string> has_user_rows;
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, int>> account_usage;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const int line = t.lines[i];
    const std::string& acc_cell = row.at("account");
    const std::size_t depth = acc_cell.find_first_not_of(' ');
    const std::string account = std::string(trim(acc_cell));
    const std::string user = std::string(trim(row.at("user")));
    const std::string shares = std::string(trim(row.at("rawshares")));
    const std::string usage = std::string(trim(row.at("rawusage")));
    if (account.empty() || depth == std::string::npos) fail(path, line, "Account: empty");
    if (account == "root" && user.empty()) continue;
    const auto num = [&](const std::string& col, const std::string& v) {
      if (v.empty() || v == "parent") return;
      double d = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
      if (ec != std::errc() || p != v.data() + v.size() || d < 0)
        fail(path, line, col + ": expected a number, got \"" + v + "\"");
    };
    num("RawShares", shares);
    num("RawUsage", usage);
    if (!user.empty()) {
      users[account].push_back(user);
      has_user_rows.insert(account);
      if (!usage.empty() && usage != "0") out.params["usage." + user] = ParamValue{usage, path, line, 0};
      continue;
    }
    while (!stack.empty() && stack.back().first >= depth) stack.pop_back();
    const std::string parent = stack.empty() ? "root" : stack.back().second;
    stack.emplace_back(depth, account);
    if (account_line.count(account)) fail(path, line, "account \"" + account + "\" appears twice");
    account_line[account] = line;
    order.push_back(account);
    out.params["accounts." + account + ".parent"] = ParamValue{parent, path, line, 0};
    if (!shares.empty() && shares != "parent") {
      std::string whole = shares.substr(0, shares.find('.'));
      out.params["accounts." + account + ".shares"] = ParamValue{whole, path, line, 0};
    }
    if (!usage.empty() && usage != "0") account_usage[account] = {usage, line};
  }
  for (const auto& a : order) {
    if (users.count(a)) {
      std::string list;
      for (const auto& u : users[a]) list += (list.empty() ? "" : ", ") + u;
      out.params["accounts." + a + ".users"] = ParamValue{"[" + list + "]", path, account_line[a], 0};
    }
    // An account's usage seeds the account's own leaf only when no user row holds it.
    if (!has_user_rows.count(a) && account_usage.count(a))
      out.params["usage." + a] = ParamValue{account_usage[a].first, path, account_usage[a].second, 0};
  }
  return out;
}

}  // namespace headroom::policies::slurm
