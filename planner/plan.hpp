#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "planner/run.hpp"
#include "results/fairness.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"

namespace headroom::planner {

// A service-level target on one KPI, e.g. "p95_wait <= 1h" or "tenant:research.mean_wait <= 30m".
struct Target {
  std::string text;     // as written
  std::string kpi;      // canonical name: wait_mean, wait_median, wait_p95, wait_max, jct_mean, jct_median,
                        // jct_p95, utilization, makespan, completed_fraction, or tenant.mean_wait / tenant.gpu_hours
  std::string tenant;   // for tenant KPIs
  bool at_most = true;  // <= (or <) when true, >= (or >) when false
  bool strict = false;
  double bound = 0;  // seconds for times, a fraction for ratios, GPU-hours
  // How the value reads: "time" (seconds), "ratio" (a fraction, shown as %), "hours" (GPU-hours)
  // or "number" (a count or a plain number such as Jain's index or rho).
  std::string unit = "time";
  // Where it was written: a scenario's `targets:` (file, line, column), or an option (file
  // empty: `--target`).
  std::string file;
  int line = 0, column = 0;
};

// Parses "KPI OP VALUE"; throws sim::InputError naming the target and what was expected. A
// target no run can meet (`jain >= 1.5`, `utilization > 100%`, `p95_wait < 0s`) is refused.
Target parse_target(const std::string& text);

// The error about a target, at its origin: "FILE:LINE:COL: targets: \"TEXT\": MESSAGE" for one of
// a scenario's `targets:`, "--target \"TEXT\": MESSAGE" for one given on the command line.
sim::InputError target_error(const Target& t, const std::string& message);

// The tenants and services a scenario's runs report (its workload's tenants, after its filters,
// and the tenants it declares; its `services:`).
struct TargetNames {
  std::vector<std::string> tenants, services;
};
// Reads the scenario's workload only when a target names a tenant; with `traces`, from the
// command's cache, so that its runs do not read the trace again (a look, not one of its runs).
TargetNames target_names(const scenarios::Scenario& sc, const std::vector<Target>& targets,
                         scenarios::TraceCache* traces = nullptr);
// Why the target can never have a value in runs of a scenario with these names (a tenant or a
// service it does not have, with "did you mean"), or nullopt. One checker for plan and compare.
std::optional<std::string> unknown_name(const Target& t, const TargetNames& names);
// Throws sim::InputErrors for every target naming a tenant or a service the scenario lacks.
void check_target_names(const std::vector<Target>& targets, const scenarios::Scenario& sc,
                        scenarios::TraceCache* traces = nullptr);
// The KPI's value in a summary (seconds / fraction / GPU-hours); nullopt when it does not
// exist (an unknown tenant).
std::optional<double> kpi_value(const results::Summary& s, const Target& t);

// The share of the jobs the system was asked to run (permission denials aside) that it ran to
// the end the log records: completed, or failed or cancelled as the job itself did in the log (an
// end without a reason of the system's). Jobs that never started, were rejected by the policy or
// were still queued or running at the end count against it, and so do jobs the system ended
// (a Slurm TimeLimit kill, a kubelet refusal) or the failure drill killed past their retry limit,
// except a TimeLimit kill of a job the log shows ending at that limit too
// (Summary::ended_at_recorded_limit).
// The KPI of "completes >= 99 % of the jobs it does not deny" (issue #32); 1 with no job.
double served_fraction(const results::Summary& s);
// Same, also for the fairness KPIs (jain, rho_max, tenant:NAME.share ...).
std::optional<double> kpi_value(const results::Summary& s, const results::Fairness& f, const Target& t);
bool meets(const Target& t, double value);

// Jobs of a wait or JCT target's population (every job; the tenant's or the kind's for tenant and
// kind targets) that never ran: never started, or rejected by the policy (permission denials
// aside). A wait or JCT target is missed while any did: their waits are only lower bounds, and a
// job that never ran met no target. Both 0 for every other target.
struct NotRun {
  std::int64_t never_started = 0, rejected = 0;
  bool any() const { return never_started > 0 || rejected > 0; }
};
NotRun not_run(const results::Summary& s, const Target& t);
// "120 jobs never started", "3 jobs rejected by the policy", both joined by ", ", or "".
std::string describe(const NotRun& n);

struct PlanRequest {
  std::string scenario;         // scenario file
  std::string vary;             // key path of an integer field, e.g. cluster.pools.h100.nodes
  std::int64_t lo = 0, hi = 0;  // inclusive range
  std::vector<Target> targets;
  std::vector<std::uint64_t> seeds;  // empty: the scenario's seed
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::int64_t value, bool pass)> on_probe;  // called as probes finish
  // Display only: each round's runs, labelled "VALUE" or "VALUE seed S" (RunsProgress::begin per round).
  RunsProgress* progress = nullptr;
};

struct Probe {
  std::int64_t value = 0;
  bool pass = false;
  std::size_t seeds_passing = 0;
  std::vector<double> worst;  // per target: the worst value over the seeds
  // Per target: the most jobs of its population that never ran, over the seeds (a target with
  // any is missed, whatever its value).
  std::vector<NotRun> not_run;
  std::int64_t gpus = 0;  // GPUs of the cluster at this value
  // Cost of the run (results::Summary::cost, the largest over the seeds) in `currency`; NaN when
  // the scenario prices no GPU.
  double cost = std::numeric_limits<double>::quiet_NaN();
  std::string currency;
};

struct PlanResult {
  std::optional<std::int64_t> answer;  // smallest value meeting every target on every seed
  std::vector<Probe> curve;            // every value measured, in increasing order
  bool monotone = true;                // false if a passing value lay below a failing one
  bool cancelled = false;
  std::size_t seeds = 0;
  // The scenario as it is, for reference: the varied field's value when it is a pool's node
  // count (cluster.pools.NAME.nodes; nullopt otherwise) and the cluster's GPUs.
  std::optional<std::int64_t> current;
  std::int64_t current_gpus = 0;
};

// Monotone search (assumes more of the varied resource never hurts): checks both ends, then
// bisects with as many probes per round as there are worker threads, all seeds of all probes
// of a round in parallel.
PlanResult plan(const PlanRequest& request);

}  // namespace headroom::planner
