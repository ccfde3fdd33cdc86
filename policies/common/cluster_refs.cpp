// The cluster references several systems' parameters make (policies/common/cluster_refs.hpp).
#include "policies/common/cluster_refs.hpp"

#include <algorithm>

#include "policies/common/param_text.hpp"
#include "sim/suggest.hpp"

namespace headroom::policies {

namespace {

std::vector<std::string> pool_names(const models::ClusterSpec& cluster) {
  std::vector<std::string> out;
  for (const auto& p : cluster.pools) out.push_back(p.name);
  return out;
}

}  // namespace

// "no pool named "x" (pools: a, b); did you mean "a"?"
std::string no_pool(const std::string& name, const models::ClusterSpec& cluster) {
  const auto names = pool_names(cluster);
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  std::string msg = "no pool named " + quoted(name) + " (pools: " + known + ")";
  if (auto m = sim::closest_match(name, names)) msg += "; did you mean " + quoted(*m) + "?";
  return msg;
}

bool has_pool(const std::string& name, const models::ClusterSpec& cluster) {
  return std::any_of(cluster.pools.begin(), cluster.pools.end(), [&](const auto& p) { return p.name == name; });
}

// "partitions.gpu.Nodes" -> "gpu" for prefix "partitions." and suffix ".Nodes".
bool named_key(const std::string& key, std::string_view prefix, std::string_view suffix, std::string& name) {
  if (key.size() <= prefix.size() + suffix.size() || !key.starts_with(prefix) || !key.ends_with(suffix)) return false;
  name = key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
  return true;
}

}  // namespace headroom::policies
