#pragma once

// The run pipeline lives in planner/; the CLI keeps its historical names.
#include "planner/run.hpp"

namespace headroom::app {
using planner::RunOptions;
using planner::RunOutcome;
using planner::run_scenario;
using planner::version_string;
}  // namespace headroom::app
