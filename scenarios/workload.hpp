#pragma once

#include "models/workload.hpp"
#include "scenarios/scenario.hpp"

namespace headroom::scenarios {

// Imports the scenario's trace and applies its transforms (time window, arrival scale with a
// seeded stream named "workload/arrival_scale"). Throws sim::InputError on trace problems.
models::Workload build_workload(const Scenario& scenario);

}  // namespace headroom::scenarios
