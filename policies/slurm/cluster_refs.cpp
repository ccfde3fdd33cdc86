// slurm's parameters against the scenario's cluster: partitions.<p>.Nodes (pools, or ALL) and
// nodes.<pool> name pools; qos.<q>.Preempt names QOS; topology.<s>.Switches names switches
// without cycles; topology.<s>.Nodes names nodes <pool><index> that exist.
#include "policies/slurm/cluster_refs.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "policies/common/cluster_refs.hpp"
#include "policies/common/param_text.hpp"
#include "policies/common/params.hpp"
#include "policies/slurm/slurm.hpp"
#include "sim/suggest.hpp"

namespace headroom::policies::slurm {

namespace {

// A Slurm list as slurm_params reads it: "a,b", "[a, b]" or "a[0-3,8],b[1],c0", split at the
// commas outside brackets, items trimmed and unquoted.
std::vector<std::string> slurm_list(std::string_view text) {
  auto trim = [](std::string_view t) {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    return t;
  };
  text = trim(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  std::vector<std::string> out;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      std::string_view item = trim(text.substr(start, i - start));
      if (item.size() >= 2 && (item.front() == '"' || item.front() == '\'') && item.back() == item.front())
        item = item.substr(1, item.size() - 2);
      if (!item.empty()) out.emplace_back(item);
      start = i + 1;
    } else if (text[i] == '[') {
      ++depth;
    } else if (text[i] == ']' && depth > 0) {
      --depth;
    }
  }
  return out;
}

std::optional<std::int64_t> index_of(std::string_view digits) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v < 0) return std::nullopt;
  return v;
}

// One node name or range of a Slurm hostlist ("p3", "p[0-7,9]") against the pools: nodes are
// named <pool><index>. Returns the problem, or "" when every node exists. Ranges are checked by
// their bounds, never expanded.
std::string check_hostlist_item(const std::string& item, const models::ClusterSpec& cluster) {
  const auto open = item.find('[');
  std::string prefix;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (open == std::string::npos) {
    std::size_t d = item.size();
    while (d > 0 && item[d - 1] >= '0' && item[d - 1] <= '9') --d;
    prefix = item.substr(0, d);
    const auto i = index_of(std::string_view(item).substr(d));
    if (!i)
      return "expected node names <pool><index> such as " + quoted(cluster.pools.front().name + "0") + ", got " +
             quoted(item);
    ranges.emplace_back(*i, *i);
  } else {
    prefix = item.substr(0, open);
    if (item.back() != ']' || open + 2 >= item.size())
      return "expected a node range such as " + quoted(cluster.pools.front().name + "[0-7]") + ", got " + quoted(item);
    std::string_view body = std::string_view(item).substr(open + 1, item.size() - open - 2);
    for (const auto& part : slurm_list(body)) {
      const auto dash = part.find('-');
      const auto lo = index_of(std::string_view(part).substr(0, dash));
      const auto hi = dash == std::string::npos ? lo : index_of(std::string_view(part).substr(dash + 1));
      if (!lo || !hi || *hi < *lo)
        return "expected a node range such as " + quoted(cluster.pools.front().name + "[0-7]") + ", got " +
               quoted(item);
      ranges.emplace_back(*lo, *hi);
    }
  }
  const auto pool =
      std::find_if(cluster.pools.begin(), cluster.pools.end(), [&](const auto& p) { return p.name == prefix; });
  if (pool == cluster.pools.end()) return "node " + quoted(item) + ": " + no_pool(prefix, cluster);
  for (const auto& [lo, hi] : ranges)
    if (hi >= pool->nodes)
      return "no node named " + quoted(prefix + std::to_string(hi)) + " (pool " + quoted(prefix) + " has nodes " +
             prefix + "0 to " + prefix + std::to_string(pool->nodes - 1) + ")";
  return {};
}

}  // namespace

void check_cluster_refs(const PolicyParams& params, const models::ClusterSpec& cluster,
                        std::vector<sim::InputError>& errors) {
  if (cluster.pools.empty()) return;
  auto err = [&](const std::string& key, const ParamValue& v, const std::string& msg) {
    errors.emplace_back(v.file, v.line, v.column, "policy." + key, msg);
  };
  std::set<std::string> qos{"normal"};                       // Slurm's default QOS exists unless configured otherwise
  std::map<std::string, std::vector<std::string>> children;  // switch -> the switches below it
  std::map<std::string, const ParamValue*> switches_at;
  for (const auto& [key, v] : params) {
    std::string name;
    if (named_key(key, "qos.", "", name)) qos.insert(name.substr(0, name.find('.')));
    if (named_key(key, "topology.", ".Switches", name)) {
      children[name] = slurm_list(v.text);
      switches_at[name] = &v;
    } else if (named_key(key, "topology.", "", name)) {
      children.emplace(name.substr(0, name.find('.')), std::vector<std::string>{});
    }
  }
  for (const auto& [key, v] : params) {
    std::string name;
    if (named_key(key, "partitions.", ".Nodes", name)) {
      const auto pools = slurm_list(v.text);
      if (pools.size() == 1 && is_all_nodes(pools[0])) continue;  // every pool
      for (const auto& pool : pools)
        if (!has_pool(pool, cluster)) err(key, v, no_pool(pool, cluster));
    } else if (named_key(key, "nodes.", ".Weight", name)) {
      if (!has_pool(name, cluster)) err(key, v, no_pool(name, cluster));
    } else if (named_key(key, "qos.", ".Preempt", name)) {
      for (const auto& q : slurm_list(v.text)) {
        if (qos.count(q) != 0) continue;
        std::vector<std::string> known(qos.begin(), qos.end());
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        std::string msg = "Preempt names no QOS " + quoted(q) + " (QOS: " + list + ")";
        if (auto m = sim::closest_match(q, known)) msg += "; did you mean " + quoted(*m) + "?";
        err(key, v, msg);
      }
    } else if (named_key(key, "topology.", ".Nodes", name)) {
      for (const auto& item : slurm_list(v.text)) {
        const std::string problem = check_hostlist_item(item, cluster);
        if (!problem.empty()) {
          err(key, v, problem);
          break;
        }
      }
    }
  }
  // Switches name configured switches, and the tree has no cycle.
  std::vector<std::string> names;
  for (const auto& [s, below] : children) names.push_back(s);
  for (const auto& [s, below] : children)
    for (const auto& child : below)
      if (children.count(child) == 0) {
        std::string msg = "Switches names no switch " + quoted(child);
        if (auto m = sim::closest_match(child, names)) msg += "; did you mean " + quoted(*m) + "?";
        err("topology." + s + ".Switches", *switches_at[s], msg);
      }
  // Depth-first search from each switch; a switch met again on the current path closes a cycle.
  std::map<std::string, int> state;  // 1 on the path, 2 done
  std::set<std::string> reported;
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& s) {
    state[s] = 1;
    path.push_back(s);
    for (const auto& child : children[s]) {
      if (children.count(child) == 0) continue;
      if (state[child] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), child); it != path.end(); ++it) cycle += *it + " -> ";
        cycle += child;
        if (reported.insert(s).second)
          err("topology." + s + ".Switches", *switches_at[s], "the switches form a cycle: " + cycle);
      } else if (state[child] == 0) {
        visit(child);
      }
    }
    path.pop_back();
    state[s] = 2;
  };
  for (const auto& [s, below] : children)
    if (state[s] == 0) visit(s);
}

}  // namespace headroom::policies::slurm
