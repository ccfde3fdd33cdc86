#pragma once

// What the systems' checks of cluster references share (each system's own check is its
// SystemModule::check_cluster_refs): a `policy:` block that names a pool or node the scenario's
// cluster lacks is reported at the place it was written, instead of a run rejecting every job.

#include <string>
#include <string_view>

#include "models/cluster.hpp"

namespace headroom::policies {

// "no pool named "x" (pools: a, b); did you mean "a"?"
std::string no_pool(const std::string& name, const models::ClusterSpec& cluster);
bool has_pool(const std::string& name, const models::ClusterSpec& cluster);
// "partitions.gpu.Nodes" -> "gpu" for prefix "partitions." and suffix ".Nodes".
bool named_key(const std::string& key, std::string_view prefix, std::string_view suffix, std::string& name);

}  // namespace headroom::policies
