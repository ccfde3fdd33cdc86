#pragma once

#include <vector>

#include "gui/replay_data.hpp"

namespace headroom::gui {

// The timeline's fidelity curve (docs/fidelity.md): GPUs in use as the trace recorded them
// (results::recorded_gpus_in_use) and as the replay simulated them, at the samples t_days of the
// result's time series, then the cluster size; recorded samples above it are drawn at it and the
// recorded curve's name says how many there were and their peak (issue #36). Empty when no job
// has a recorded start.
Pyramid fidelity_curves(const results::RunResult& r, std::vector<double> t_days);

}  // namespace headroom::gui
