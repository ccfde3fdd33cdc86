#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace headroom::app {

// `headroom compare SCENARIO.yaml --policies a,b,c [-o compare.csv] [--json] [--seed N]`: runs
// the scenario under each policy in parallel and prints the KPIs side by side (planner/compare.hpp).
int cmd_compare(const std::string& scenario, const std::string& policies, const std::string& csv, bool json,
                std::optional<std::uint64_t> seed, std::size_t tenant_rows, std::atomic<bool>* stop);

}  // namespace headroom::app
