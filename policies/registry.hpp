#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policies/api.hpp"

namespace headroom::policies {

// Every policy headroom knows, with the parameters each accepts.
const std::vector<PolicyInfo>& policy_catalogue();

// Problems with a `policy:` block: unknown policy name (with "did you mean"), unknown
// parameter keys, malformed values. `file`, `line`, `column` locate the policy name.
std::vector<sim::InputError> check_policy(std::string_view name, const PolicyParams& params, const std::string& file,
                                          int line, int column);

// References of the named policy's parameters that the cluster does not resolve (pools, the node
// names of a Slurm topology), reported where they were written; the parameters have passed
// check_policy. Empty for a system without such references (SystemModule::check_cluster_refs).
std::vector<sim::InputError> check_cluster_refs(std::string_view name, const PolicyParams& params,
                                                const models::ClusterSpec& cluster);

// Builds a policy; throws sim::InputError on what check_policy reports.
std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyParams& params, std::uint64_t seed);

}  // namespace headroom::policies
