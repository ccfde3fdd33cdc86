// kueue's parameters against the scenario's cluster: resourceFlavors.<f>.pools name pools.
#include "policies/kueue/cluster_refs.hpp"

#include "policies/common/cluster_refs.hpp"
#include "policies/common/params.hpp"

namespace headroom::policies::kueue {

void check_cluster_refs(const PolicyParams& params, const models::ClusterSpec& cluster,
                        std::vector<sim::InputError>& errors) {
  if (cluster.pools.empty()) return;
  for (const auto& [key, v] : params) {
    std::string name;
    if (!named_key(key, "resourceFlavors.", ".pools", name)) continue;
    for (const auto& pool : parse_flow_list(v.text))
      if (!has_pool(pool, cluster))
        errors.emplace_back(v.file, v.line, v.column, "policy." + key, no_pool(pool, cluster));
  }
}

}  // namespace headroom::policies::kueue
