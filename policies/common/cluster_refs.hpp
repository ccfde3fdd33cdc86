#pragma once

// The names a `policy:` block refers to, checked against the scenario's cluster (pools, the node
// names of a Slurm topology), so that `headroom validate` reports a reference to nothing at the
// place it was written instead of a run rejecting every job.

#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "policies/api.hpp"

namespace headroom::policies {

// Every reference of the named policy's parameters that the cluster does not resolve (the
// parameters themselves have passed check_policy).
std::vector<sim::InputError> check_cluster_refs(std::string_view policy, const PolicyParams& params,
                                                const models::ClusterSpec& cluster);

namespace slurm {
// partitions.<p>.Nodes and nodes.<pool> name pools; qos.<q>.Preempt names QOS; topology.<s>.Switches
// names switches without cycles; topology.<s>.Nodes names nodes <pool><index> that exist.
void check_cluster_refs(const PolicyParams& params, const models::ClusterSpec& cluster,
                        std::vector<sim::InputError>& errors);
}  // namespace slurm

namespace kueue {
// resourceFlavors.<f>.pools name pools.
void check_cluster_refs(const PolicyParams& params, const models::ClusterSpec& cluster,
                        std::vector<sim::InputError>& errors);
}  // namespace kueue

}  // namespace headroom::policies
