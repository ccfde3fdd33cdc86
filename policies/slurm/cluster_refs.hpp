#pragma once

#include <vector>

#include "models/cluster.hpp"
#include "policies/api.hpp"
#include "sim/errors.hpp"

namespace headroom::policies::slurm {

// partitions.<p>.Nodes and nodes.<pool> name pools; qos.<q>.Preempt names QOS; topology.<s>.Switches
// names switches without cycles; topology.<s>.Nodes names nodes <pool><index> that exist.
void check_cluster_refs(const PolicyParams& params, const models::ClusterSpec& cluster,
                        std::vector<sim::InputError>& errors);

}  // namespace headroom::policies::slurm
