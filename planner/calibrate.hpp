#pragma once

// `headroom calibrate SCENARIO --fit 0:7d --test 7d:14d` (docs/fidelity.md): searches the policy
// knobs that the trace itself supports (traces/infer.hpp) for the replay whose waits come closest
// to the recorded ones on the fit window, then measures the chosen knobs and the scenario as given
// (the baseline) on the held-out test window.
//
// For a scenario whose system has calibration knobs of its own (SystemModule::calibration; or
// --scheduler naming it) the search keeps its configuration and sets that system's knobs. For
// slurm (policies/slurm/calibration.cpp) these are Slurm's own per-user limits
// (policies/slurm/limits.hpp): a QOS MaxGPUsPerUser ladder from the
// largest job to the largest concurrency a user reached, a QOS MaxJobsPerUser ladder, and per-user
// association limits (MaxJobs, GrpTRES=gres/gpu) at 1/2, 3/4 and all of what each user reached,
// with the QOS at the largest of those for users first seen later. Its backfill stays as given
// unless the log's header names FCFS (then sched/builtin). Each limit set runs with the scenario's
// priority and, when that weighs no fair share and the log has more than one user, with Slurm's
// multifactor fair-share factor (PriorityWeightFairshare; Fair Tree and the 7-day half-life, Slurm's
// defaults).
//
// Otherwise the searched family is fifo with `backfill: none | easy` and per-user limits
// (policies/baselines/easy.hpp: Slurm's QOS MaxJobsPerUser / MaxTRESPerUser and association limits):
// global limits from a ladder of powers of two between the smallest and the largest concurrency a
// user reached on the fit window (and that largest), and per-user limits at 1/2, 3/4 and all of
// what each user reached there. The cluster's size is a knob only when the fit window never used
// it all (then also its most GPUs busy at once). Backfill is offered unless the log's header names
// the scheduler: EASY fixes easy, FCFS fixes none. Nothing is inferred from the test window.
//
// Each fit run replays the jobs submitted before the fit window ends and scores those submitted in
// it; each test run replays those submitted before the test window ends and scores those in it.
// Candidates run in parallel (TBB), each owning its simulation, and are ranked in index order:
// the result is the same at any thread count.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "results/fidelity.hpp"
#include "scenarios/scenario.hpp"
#include "traces/infer.hpp"

namespace headroom::planner {

enum class CalibrateObjective { MedianError, MeanError, Pearson };
// The knobs searched: Auto keeps the scenario's policy when its system has calibration knobs of
// its own (System: SystemModule::calibration) and takes fifo with EASY backfilling and limits
// (Easy) for every other.
enum class CalibrateFamily { Auto, Easy, System };

struct CalibrateRequest {
  scenarios::Scenario scenario;
  sim::Tick fit_from = 0, fit_to = 0, test_from = 0, test_to = 0;
  CalibrateObjective objective = CalibrateObjective::MeanError;
  CalibrateFamily family = CalibrateFamily::Auto;
  std::string system;  // with System: whose knobs ("" = the scenario's policy)
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;  // runs ended
};

struct Candidate {
  std::string policy = "fifo";                              // fifo, or a system with calibration knobs
  std::string label;                                        // "EASY backfill, MaxGPUsPerUser 1024"
  std::vector<std::pair<std::string, std::string>> params;  // the policy's keys, in order; a system's: set
                                                            // over the scenario's own keys of that system
  std::int32_t nodes = -1;                                  // first pool's nodes; -1 unchanged
};

struct CandidateScore {
  Candidate candidate;
  results::FidelityStats fit;
  double objective = 0;  // smaller is better
};

struct CalibrateResult {
  traces::Inference inference;   // of the fit window
  std::int64_t queue_depth = 0;  // recorded_queue_depth of the fit window
  std::vector<CandidateScore> candidates;
  std::size_t best = 0;
  results::FidelityStats baseline_fit, baseline_test, calibrated_test;
  std::string baseline_policy;
  scenarios::Scenario calibrated;
  bool cancelled = false;
};

CalibrateFamily resolve_family(CalibrateFamily family, const scenarios::Scenario& scenario);
// The knobs to search, from what the fit window's log says.
// `queue_depth`: recorded_queue_depth of the fit window (0: unknown).
std::vector<Candidate> calibration_candidates(const traces::Inference& fit, const scenarios::Scenario& scenario,
                                              CalibrateFamily family = CalibrateFamily::Auto,
                                              std::int64_t queue_depth = 0, const std::string& system = "");
// The deepest the recorded system reached into its queue: the most jobs submitted before a job
// and still waiting when it started (recorded starts only; a submit at the start's time counts
// after it). Slurm's backfill looks at bf_max_job_test jobs.
std::int64_t recorded_queue_depth(const models::Workload& w);
// The objective of a candidate's fit statistics (smaller is better).
double calibration_objective(const results::FidelityStats& s, CalibrateObjective objective);

// The candidate calibrate chooses: the smallest objective (ties: higher Pearson, then the first).
// With the mean absolute error (the default), every candidate within kMeanErrorBand (1 %) of the
// smallest mean error is a near tie, and of those the one with the smallest median absolute error
// is chosen (ties: higher Pearson, smaller mean error, the first): the mean is decided by the few
// longest waits, the median by the bulk of the jobs.
inline constexpr double kMeanErrorBand = 0.01;
std::size_t choose_candidate(const std::vector<CandidateScore>& candidates, CalibrateObjective objective);

// Throws sim::InputError (--fit, --test) when the test window overlaps or equals the fit window,
// or when either holds no job of the trace (naming the window and the trace's span). calibrate
// checks this before any run.
void check_windows(const CalibrateRequest& request);
CalibrateResult calibrate(const CalibrateRequest& request);

// The scenario file for the calibrated knobs: the original YAML with its `policy:` (and the first
// pool's `nodes:` when calibrated) replaced and the trace path made relative to `output`.
std::string calibrated_yaml(const CalibrateResult& result, const scenarios::Scenario& original,
                            const std::string& output);

// "0:7d" -> [0, 7d); throws sim::InputError naming `option`.
std::pair<sim::Tick, sim::Tick> parse_span(const std::string& text, const std::string& option);

}  // namespace headroom::planner
