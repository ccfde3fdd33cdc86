#pragma once

// `headroom calibrate SCENARIO --fit 0:7d --test 7d:14d` (docs/fidelity.md): searches the policy
// knobs that the trace itself supports (traces/infer.hpp) for rules that bring the replay's waits
// closer to the recorded ones, keeps a rule only when it holds on parts of the fit window it was
// not learned from, and measures the chosen rule and the scenario as given (the baseline) on the
// held-out test window.
//
// Validation inside the fit window (issue #33): the fit window is cut into inner_folds + 1 equal
// parts; fold k learns every rule's values from parts 0..k and scores it on part k + 1 (rolling
// origin). A rule passes when it beats the scenario as given by the objective in most folds and
// on their mean by a margin, does not lower the folds' mean Pearson by more than a little
// (judge_candidate), and never holds a scored job longer than both the longest wait the log
// recorded up to then and the baseline's longest. Of those that pass, the smallest mean objective
// wins; within kMeanErrorBand of it, the rule with fewer parameters (a QOS cap for everyone before
// per-user limits), then the smaller median error. When none passes, the scenario is written as
// given and says so. The chosen rule is then learned on the whole fit window.
//
// For a scenario whose system has calibration knobs of its own (SystemModule::calibration; or
// --scheduler naming it) the rules keep its configuration and set that system's knobs. For slurm
// (policies/slurm/calibration.cpp): QOS MaxGPUsPerUser / MaxJobsPerUser at 1/2 or all of the most
// one user reached, association limits (GrpTRES=gres/gpu, MaxJobs) at 1.5x or 2x what each user
// seen 20+ times reached; each with the scenario's backfill or one as deep as the recorded queue,
// and with the scenario's priority or Slurm's fair share (not when the log's header names an
// FCFS-order scheduler). Otherwise fifo with `backfill: none | easy` and the same limit rules
// (policies/baselines/easy.hpp). The cluster keeps its size. What the log shows but no rule fits
// (recorded use above the cluster, time limits, idle capacity while jobs waited) is reported:
// log_findings.
//
// Each run replays the jobs submitted from `warmup` before its scored window to the window's end
// (the warm-up fills the queue; earlier jobs are not replayed) and scores those submitted in the
// window. The trace is read once. Runs go in parallel (TBB), each owning its simulation, and are
// ranked in index order: the result is the same at any thread count.
//
// The held-out guard (issue #33, item 3 applied to the test window): the chosen rule is replayed on
// the test window's submissions, as is the scenario as given. A rule that holds some job submitted
// there longer than both the longest wait the log recorded for a job submitted in the fit window
// and the longest wait of the scenario as given on the same test window is refused (suspect); so is
// a rule whose mean wait there is longer than both the mean wait the log recorded for the fit
// window's jobs and the scenario as given's mean wait on the test window (it makes waits longer
// than both the log's level and the uncalibrated replay: it extrapolates beyond what it was fitted
// on). Then the next rule that passed the inner folds is chosen and replayed in its place; when every rule
// that passed is refused, the scenario as given is the result. The guard reads only the test
// window's submissions (never its recorded waits or starts) and what the fit window recorded. As
// --test is required, the guard always runs, and the rule chosen (and written) depends on the
// test window given. choose_held_out.
//
// --folds K (outer_folds) repeats everything on K fit / test pairs, each shifted by the test
// window's length, and reports the held-out figures of each pair, their mean and the worst; the
// scenario written is the first pair's (the windows given).

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/prime_time.hpp"
#include "results/fidelity.hpp"
#include "results/run_result.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
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
  std::string system;                // with System: whose knobs ("" = the scenario's policy)
  int inner_folds = 3;               // rolling-origin folds inside the fit window (>= 1)
  int outer_folds = 1;               // --folds: fit / test pairs (>= 1)
  sim::Tick warmup = 7 * sim::kDay;  // replayed before each scored window
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;  // runs ended
};

struct Candidate {
  std::string policy = "fifo";                              // fifo, or a system with calibration knobs
  std::string label;                                        // the rule: "EASY backfill, MaxGPUsPerUser at 1/2 of ..."
  std::vector<std::pair<std::string, std::string>> params;  // the policy's keys, in order; a system's: set
                                                            // over the scenario's own keys of that system
  std::int32_t nodes = -1;                                  // first pool's nodes; -1 unchanged
  // The scenario's policy as given (params unused), with the prime time the fit window's recorded
  // starts show (traces::detect_prime_time; docs/fidelity.md, "Prime time").
  bool as_given_policy = false;
  models::PrimeTime prime_time;
  // What the near-tie rule counts: the policy keys set, and prime time's bound and hours as three.
  std::size_t parameters() const { return params.size() + (prime_time.enabled() ? 3 : 0); }
};

struct CandidateScore {
  Candidate candidate;                        // the rule's values learned on the whole fit window
  results::FidelityStats fit;                 // inner folds: each figure's mean over the folds that offered the rule
  std::vector<results::FidelityStats> folds;  // per inner fold; jobs == 0: the fold did not offer it
  double objective = 0;                       // mean over the inner folds (smaller is better)
  int wins = 0;                               // inner folds where it beat the scenario as given
  bool suspect = false;  // held a scored job longer than the log's longest wait and the baseline's longest
  bool passed = false;   // may be chosen
  bool refused = false;  // passed the inner folds but refused by the held-out guard (choose_held_out)
};

// The held-out guard's bar for one fit / test pair: a rule whose replay holds a job submitted in
// the test window longer than bar() is refused.
struct HeldOutBar {
  sim::Tick longest_recorded = 0;  // the longest recorded wait of a job submitted in the fit window
  sim::Tick longest_as_given = 0;  // the scenario as given's longest simulated wait on the test window
  sim::Tick bar() const { return longest_recorded > longest_as_given ? longest_recorded : longest_as_given; }
  // The same for the mean wait (mean_bar): a rule whose replay of the test window waits longer on
  // average than both is refused too. The longest wait alone misses a rule that holds many jobs
  // for days on a log whose fit window recorded a few held jobs waiting weeks.
  sim::Tick mean_recorded = 0;  // the mean recorded wait of the jobs submitted in the fit window
  sim::Tick mean_as_given = 0;  // the scenario as given's mean simulated wait on the test window
  sim::Tick mean_bar() const { return mean_recorded > mean_as_given ? mean_recorded : mean_as_given; }
};

// One replay of a test window for the guard: the figures against the recorded waits (reported,
// never used to refuse) and the longest simulated wait of a job submitted there.
struct HeldOutRun {
  results::FidelityStats stats;
  sim::Tick longest = 0;
  sim::Tick mean = 0;  // the mean simulated wait of the jobs submitted there (simulated_waits)
};

// A rule the guard refused: its longest simulated wait on the test window, and its held-out
// figures (what choosing it would have given; reported only).
struct HeldOutRefusal {
  std::string rule;
  sim::Tick longest = 0;
  results::FidelityStats test;
  sim::Tick mean = 0;
};

// What the log itself shows about the system, beside what calibrate fits (issue #33, item 4).
struct LogFindings {
  std::int64_t cluster_gpus = 0;
  // Recorded GPUs in use (from recorded starts and run times): the most at once, and when.
  std::int64_t max_in_use = 0;
  sim::Tick max_in_use_at = 0;
  // Time limits: jobs with a requested time, of them those that ran past it in the log, and of
  // those the ones whose limit the scenario raised to the run time (workload.time_limits).
  std::int64_t with_limit = 0, past_limit = 0, raised_limit = 0;
  // Hours where the recorded use stayed below 80 % of the cluster while a job that would have fit
  // in the idle GPUs waited: nodes down or reserved (outage / reservation candidates), merged into
  // windows of 6 h or more; `idle_gpus` is the fewest GPUs idle in the window.
  struct Gap {
    sim::Tick from = 0, to = 0;
    std::int64_t idle_gpus = 0;
  };
  std::vector<Gap> gaps;
  std::string pool;  // the first pool, whose nodes an outage candidate names
  std::int32_t gpus_per_node = 1;
  bool over_capacity() const { return max_in_use > cluster_gpus && cluster_gpus > 0; }
  // A gap as a failures.events entry to paste after checking the site's records: the first pool's
  // first nodes holding its idle GPUs down for the gap, e.g. {at: 20h, nodes: [p-0, p-1],
  // duration: 6h}; over 32 nodes the list is abbreviated ("[ricc-0 .. ricc-552, 553 names]").
  std::string outage_event(const Gap& gap) const;
};

// One fit / test pair of --folds.
struct CalibratePair {
  sim::Tick fit_from = 0, fit_to = 0, test_from = 0, test_to = 0;
  std::string chosen;  // the rule's label, "" when no rule passed (the scenario as given)
  results::FidelityStats baseline_test, calibrated_test;
  HeldOutBar bar;                       // the held-out guard's bar
  sim::Tick chosen_longest = 0;         // the chosen rule's longest wait on the test window (chosen != "")
  sim::Tick chosen_mean = 0;            // and its mean wait there
  std::vector<HeldOutRefusal> refused;  // rules the guard refused, in the order they were chosen
};

struct CalibrateResult {
  traces::Inference inference;   // of the fit window
  std::int64_t queue_depth = 0;  // recorded_queue_depth of the fit window
  std::vector<CandidateScore> candidates;
  std::size_t best = 0;                                // candidates.size(): none passed
  bool as_given = false;                               // no rule passed: the scenario as given is the result
  std::vector<sim::Tick> fold_edges;                   // inner folds: fold k scores [edges[k+1], edges[k+2])
  std::vector<results::FidelityStats> baseline_folds;  // the scenario as given on each inner fold
  results::FidelityStats baseline_fit, baseline_test, calibrated_test;  // baseline_fit: the folds' mean
  std::string baseline_policy;
  scenarios::Scenario calibrated;
  std::vector<CalibratePair> pairs;  // pairs[0]: the windows given
  LogFindings findings;              // of the fit window
  std::size_t runs = 0;              // simulations run
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

// The candidate calibrate chooses among those that passed: the smallest objective. Every passed
// candidate within kMeanErrorBand (1 %; 0.01 of Pearson) of it is a near tie, and of those the one
// with the fewest parameters is chosen (a cap for everyone before a limit per user), then the
// smallest median absolute error (the mean is decided by the few longest waits, the median by
// the bulk of the jobs), then higher Pearson, then the first. candidates.size() when none passed.
inline constexpr double kMeanErrorBand = 0.01;
std::size_t choose_candidate(const std::vector<CandidateScore>& candidates, CalibrateObjective objective);

// Whether a rule's inner-fold figures let it be chosen (see the top of this file): it beats the
// baseline's objective in more than half of the folds, and on their mean by kPassMargin (5 % of
// the baseline's mean error; 0.05 of Pearson), its mean Pearson is at most kPearsonSlack (0.02)
// below the baseline's, and it is not suspect. Folds the rule was not offered in count as lost.
inline constexpr double kPassMargin = 0.05, kPearsonSlack = 0.02;
void judge_candidate(CandidateScore& c, const std::vector<results::FidelityStats>& baseline_folds,
                     CalibrateObjective objective);

// The held-out guard (see the top of this file): from choose_candidate's choice, replays it on
// the test window (`replay(i)`: candidate i, learned on the whole fit window); a rule whose
// longest wait there exceeds bar.bar(), or whose mean wait there exceeds bar.mean_bar(), is refused (passed = false,
// refused = true, appended to `refused`) and the next choice is replayed. Returns the rule kept, its run in `kept`; or
// candidates.size() when none is left (the scenario as given).
std::size_t choose_held_out(std::vector<CandidateScore>& candidates, CalibrateObjective objective,
                            const HeldOutBar& bar, const std::function<HeldOutRun(std::size_t)>& replay,
                            std::vector<HeldOutRefusal>& refused, HeldOutRun& kept);

// The longest and the mean of a set of waits (both 0 when the set is empty): the held-out guard's
// two figures, taken over the same jobs in one pass.
struct WaitFigures {
  sim::Tick longest = 0;
  sim::Tick mean = 0;
};
// The recorded waits (recorded start - submit) of the jobs of `w` submitted in [from, to) with a
// recorded start.
WaitFigures recorded_waits(const models::Workload& w, sim::Tick from, sim::Tick to);
// The simulated waits of the jobs of `r` submitted in [from, to): start - submit, or for a job
// that never started, until it left the queue or the run ended (results::headline_wait; jobs the
// policy rejected have none). Recorded waits and starts are not read.
WaitFigures simulated_waits(const results::RunResult& r, sim::Tick from, sim::Tick to);

// What the log shows (LogFindings) about the jobs submitted in [from, to).
LogFindings log_findings(const models::Workload& w, std::int64_t cluster_gpus, sim::Tick from, sim::Tick to);

// Throws sim::InputError (--fit, --test) when the test window overlaps or equals the fit window,
// or when either holds no job of the trace (naming the window and the trace's span). calibrate
// checks this before any run. With a cache, the trace is read into it (a look, as
// scenarios::build_workload's `take` false), for the runs after the check.
void check_windows(const CalibrateRequest& request, scenarios::TraceCache* traces = nullptr);
CalibrateResult calibrate(const CalibrateRequest& request);

// The scenario file for the calibrated knobs: the original YAML with its `policy:` (and the first
// pool's `nodes:` when calibrated) replaced and the trace path made relative to `output`; when no
// rule passed, the original's content as given. A comment block on top records the rule chosen
// (or none), why, the inner-fold and held-out figures and what the log shows (LogFindings).
std::string calibrated_yaml(const CalibrateResult& result, const scenarios::Scenario& original,
                            const std::string& output);
// A rule the held-out guard refused, in words with its figures: "RULE held a test-window job
// 1d 01h (90000 s), longer than both the fit window's longest recorded wait, ... and the
// longest wait as given there, ...; its held-out figures would have been ...".
std::string refusal_text(const HeldOutRefusal& refusal, const HeldOutBar& bar);

// The calibrated scenario against the scenario as given over --folds pairs, pair by pair, by the
// three figures a planner reads (docs/fidelity.md, step 7): in how many pairs a rule was chosen,
// the held-out median error was lower, the mean error higher, and Pearson lower by more than
// kPearsonDrop; and the worst pair's difference in each (calibrated minus as given).
inline constexpr double kPearsonDrop = 0.05;
struct PairsVerdict {
  std::size_t pairs = 0, acted = 0, median_better = 0, mean_worse = 0, pearson_lower = 0;
  double worst_mean = 0, worst_median = 0, worst_pearson = 0;  // seconds, seconds, Pearson
};
PairsVerdict pairs_verdict(const std::vector<CalibratePair>& pairs);
// That comment block (`source`: the scenario's path).
std::string calibration_comment(const CalibrateResult& result, const std::string& source);

// "0:7d" -> [0, 7d); throws sim::InputError naming `option`.
std::pair<sim::Tick, sim::Tick> parse_span(const std::string& text, const std::string& option);

}  // namespace headroom::planner
