#pragma once

// A scenario's run options for the simulation (simulation/simulation.hpp).

#include "models/workload.hpp"
#include "scenarios/scenario.hpp"
#include "simulation/simulation.hpp"

namespace headroom::scenarios {

// Options for a scenario's run: horizon, sample interval, failures, seed and queue permissions
// resolved against the workload's tenant and queue names.
simulation::SimulationOptions simulation_options(const Scenario& scenario, const models::Workload& workload);

}  // namespace headroom::scenarios
