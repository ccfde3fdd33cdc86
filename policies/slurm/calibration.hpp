#pragma once

#include <string_view>
#include <vector>

#include "policies/system_module.hpp"

namespace headroom::policies::slurm {

// The candidates `headroom calibrate` tries for a slurm scenario (SystemModule::calibration).
std::vector<CalibrationCandidate> calibration_candidates(const CalibrationInput& input);
// The keys the search sets: MaxJobsPerUser, MaxGPUsPerUser, users.<name>.MaxJobs / MaxGPUs.
bool searched_key(std::string_view key);

}  // namespace headroom::policies::slurm
