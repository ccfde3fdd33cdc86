#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/fairness.hpp"
#include "results/run_result.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"

namespace headroom::planner {

struct RunOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's seed
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;
  std::atomic<sim::Tick>* clock = nullptr;  // simulation::SimulationOptions::clock
  // The result will be written: deflate its file's chunks on a thread of their own during the
  // run (results::Recorder::stream_chunks), so that write_hdf5 has less left to do.
  bool stream_chunks = false;
  // Runs of one command that share their traces (read once; see scenarios::TraceCache). None:
  // the run reads its trace itself.
  scenarios::TraceCache* traces = nullptr;
};

// Progress of several runs going on in parallel (compare's policies, a plan round's probes), for
// a progress line: each run's label, whether it waits, runs or is over, and its jobs ended of
// its jobs in total (RunOptions::progress). Thread-safe: the runs report, anyone reads. Only
// for display: it never changes what a run computes.
class RunsProgress {
 public:
  enum class State : std::uint8_t { Waiting, Running, Over };
  struct Run {
    std::string label;
    State state = State::Waiting;
    std::size_t ended = 0, total = 0;  // total 0: not known yet
  };
  // A new set of runs, all waiting (a plan starts one per round).
  void begin(std::vector<std::string> labels);
  void start(std::size_t run);
  void over(std::size_t run);
  // RunOptions::progress for run `run`.
  std::function<void(std::size_t, std::size_t)> hook(std::size_t run);
  std::vector<Run> runs() const;
  // One line: "2/5 policies done (slurm, kai running) 41% of jobs ended, ETA 0:35" (`noun` names
  // the runs; the ETA of this set of runs from the share of jobs ended since begin(), "?" before
  // anything ended).
  std::string line(std::string_view noun) const;

 private:
  mutable std::mutex mu_;
  std::vector<Run> runs_;
  std::chrono::steady_clock::time_point begun_ = std::chrono::steady_clock::now();
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
