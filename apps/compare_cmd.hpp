#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace headroom::app {

// `headroom compare SCENARIO.yaml... --policies a,b,c [-o compare.csv] [--json] [--seed N]
// [--target "KPI OP VALUE"]... [--keep-runs DIR]`: runs each scenario under each policy in parallel,
// prints the KPIs side by side per scenario and a scorecard of the scenarios' `targets:` (and the
// --target ones): met, missed or not modelled (planner/compare.hpp, planner/scorecard.hpp).
int cmd_compare(const std::vector<std::string>& scenarios, const std::string& policies, const std::string& csv,
                bool json, std::optional<std::uint64_t> seed, std::size_t tenant_rows,
                const std::vector<std::string>& targets, const std::string& keep_runs, std::atomic<bool>* stop);

}  // namespace headroom::app
