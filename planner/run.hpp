#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "results/fairness.hpp"
#include "results/run_result.hpp"
#include "scenarios/scenario.hpp"

namespace headroom::planner {

struct RunOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's seed
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;
  // The result will be written: deflate its file's chunks on a thread of their own during the
  // run (results::Recorder::stream_chunks), so that write_hdf5 has less left to do.
  bool stream_chunks = false;
};

struct RunOutcome {
  results::RunResult result;
  bool cancelled = false;
  // Fairness inputs the result file alone does not hold: tenant weights from the scenario, and
  // the CPU cores and memory each job holds (when the cluster models them) for dominant shares.
  results::FairnessOptions fairness;
  double import_seconds = 0, simulate_seconds = 0;
  models::TraceMeta trace;  // what the import noticed: skipped and bad rows, warnings
};

// The whole `headroom run`: trace import and transforms, policy, simulation, result tables.
// Throws sim::InputError(s) on bad input and sim::InternalError on bugs.
RunOutcome run_scenario(const scenarios::Scenario& scenario, const RunOptions& options = {});

std::string version_string();

// The fairness metrics of a finished run (compute_fairness with the outcome's options).
results::Fairness fairness_of(const RunOutcome& outcome);

}  // namespace headroom::planner
