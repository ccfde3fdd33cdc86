#pragma once

#include <vector>

#include "models/cluster.hpp"
#include "policies/api.hpp"
#include "sim/errors.hpp"

namespace headroom::policies::kueue {

// resourceFlavors.<f>.pools name pools.
void check_cluster_refs(const PolicyParams& params, const models::ClusterSpec& cluster,
                        std::vector<sim::InputError>& errors);

}  // namespace headroom::policies::kueue
