#pragma once

// Fidelity of a replay: how close the simulated waits come to the waits the trace recorded
// (docs/fidelity.md). Computed from /jobs alone, so a result file read back gives the same block.
//
// Compared jobs: every job with a recorded start (JobRecord::trace_start >= 0) that the policy did
// not reject. Recorded wait r = trace_start - submit. Simulated wait s = start - submit; a job
// that never started in the replay is censored: s = (its end, or else the end of the run) -
// submit, a lower bound, and it is counted in never_started. Over the n compared jobs:
// - mean and median absolute error: mean and nearest-rank median of |s - r|;
// - mean wait simulated and recorded, and bias = mean s - mean r;
// - Pearson's product-moment correlation of (s, r) (K. Pearson, Proc. R. Soc. Lond. 58, 1895);
//   0 when either side is constant;
// - Spearman's rank correlation (C. Spearman, Am. J. Psychol. 15, 1904): Pearson's correlation
//   of the ranks, tied values sharing their mean rank (the usual tie correction, as
//   scipy.stats.spearmanr);
// - within 10 min / within 1 h: the share of jobs with |s - r| <= 600 s / 3,600 s.
// The same figures per tenant and per queue.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "results/run_result.hpp"

namespace headroom::results {

struct FidelityStats {
  std::string name;                // tenant or queue; "" for the whole run
  std::int64_t jobs = 0;           // compared
  std::int64_t never_started = 0;  // of them, censored at the end of the run
  double mean_abs_error_s = 0, median_abs_error_s = 0;
  double mean_wait_sim_s = 0, mean_wait_recorded_s = 0;
  double pearson = 0, spearman = 0;
  double within_10m = 0, within_1h = 0;  // shares in [0, 1]
};

struct Fidelity {
  std::int64_t jobs = 0;            // jobs in the window
  std::int64_t without_record = 0;  // of them, no recorded start (not compared)
  std::int64_t rejected = 0;        // with a record, rejected by the policy (not compared)
  FidelityStats all;
  std::vector<FidelityStats> tenants;  // tenants with compared jobs, most jobs first, ties by name
  std::vector<FidelityStats> queues;   // likewise
  bool available() const { return all.jobs > 0; }
};

// Jobs submitted in [from, to) only; the defaults take every job.
Fidelity compute_fidelity(const RunResult& r, Tick from = INT64_MIN, Tick to = INT64_MAX);

// The statistics of paired simulated and recorded waits (ms), as defined above; `censored`
// counts the pairs whose simulated side is censored. Exposed for the tests and for calibrate.
FidelityStats fidelity_stats(const std::vector<Tick>& sim, const std::vector<Tick>& recorded,
                             std::int64_t censored = 0);

// GPUs in use at each time of `times` as the trace recorded it: the sum of the GPUs of the jobs
// with trace_start <= t < trace_start + runtime (whole GPUs; a share of one GPU counts its
// fraction). Beside TimeSeries::pool_used_gpus it shows recorded against simulated use.
std::vector<double> recorded_gpus_in_use(const RunResult& r, const std::vector<Tick>& times);

// "fidelity vs the recorded history: 13,607 jobs compared ..." and a per-tenant / per-queue table
// of the `max_rows` largest; nothing when no job has a recorded start.
void print_fidelity(std::ostream& out, const Fidelity& f, std::size_t max_rows = 10);
// The block as one JSON object (indent: spaces before each member line).
void print_fidelity_json(std::ostream& out, const Fidelity& f, int indent = 2);
// The report's section (`headroom report`): the block as tables, recorded vs simulated wait CDFs,
// and recorded vs simulated GPUs in use over time; "" when no job has a recorded start.
std::string fidelity_section(const RunResult& r);

// `json_object` (a JSON object ending in "}", as print_summary_json writes it) with a "fidelity"
// member added before its closing brace when the run has one; unchanged otherwise.
void print_json_with_fidelity(std::ostream& out, const std::string& json_object, const Fidelity& f);

}  // namespace headroom::results
