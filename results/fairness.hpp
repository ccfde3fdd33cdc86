#pragma once

// Fairness metrics of one run, per tenant and overall, for people tuning sharing policies.
//
// Definitions (all computed from /jobs and /timeseries of a RunResult, so a result file read
// back gives the same numbers as the run that wrote it):
//
// - Entitlement e_t: the tenant's fraction of the cluster. By default weight-proportional,
//   e_t = w_t / sum_u w_u over every tenant the run knows (scenario `tenants:` weights, 1 for a
//   tenant the scenario does not list). A caller may pass its own (a policy-defined quota).
// - Share s_t: GPU-time the tenant's jobs held (start..end, or the end of the run) divided by
//   total GPUs x (sim_end - sim_start); the same accounting as the summary's GPU-hours.
//   share_ratio = s_t / e_t (1 = exactly its entitlement).
// - Jain's index (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984) over normalised shares
//   x_t = s_t / e_t: J = (sum x)^2 / (n sum x^2), in [1/n, 1]; n = tenants with at least one job.
//   J = 1 when every x is 0. Over time: the same over the tenants active in each sample (GPUs in
//   use or jobs pending); jain_mean is the mean over the samples that have an active tenant.
// - Dominant share (DRF, Ghodsi et al., NSDI'11): the largest of the tenant's shares of each
//   modelled resource (GPU; CPU cores and memory when the caller passes them), time-averaged like s_t.
// - Finish-time fairness (Themis, K. Mahajan et al., "Themis: Fair and Efficient GPU Cluster
//   Scheduling", NSDI'20): rho = T_shared / T_ideal. For a completed job j: T_shared = end - submit
//   (its JCT); T_ideal = its run time alone on an equal 1/N share of the cluster, where N = number
//   of tenants with a job in the system (submitted, not ended) at j's submit time, counting j's
//   own: T_ideal = runtime_j x max(1, gpus_j / (C / N)) with C the cluster's GPUs and runtime_j
//   the recorded run time (capped by the time limit). A tenant is a Themis "app": its rho is
//   sum T_shared / sum T_ideal over its completed jobs (0 when it completed none). rho_max is
//   the largest tenant rho (Themis' unfairness), rho_mean the mean of the per-job rho.
// - Max wait: start - submit, or sim_end - submit for a job never started (rejected jobs
//   excluded: they were refused, not kept waiting). Starved: jobs whose wait so measured exceeds
//   the threshold (default 24 h).
// - Borrowing: GPU-hours a tenant held above its entitlement (e_t x total GPUs), integrated
//   exactly over the runs of its jobs (/placements; each run holds the job's GPUs from its start
//   until its release), and the starts that took a tenant above its entitlement. This is what
//   Kueue calls borrowing and KAI/Volcano over-quota or over-deserved use, measured the same way
//   for every policy against the one tenant description.
// - Reclaims: preemptions (/events) of one tenant's job made for another tenant's job, i.e.
//   capacity taken back across tenants (Kueue reclaimWithinCohort, KAI and Volcano reclaim; under
//   kubernetes and slurm, priority preemption across tenants). -1 when the file has no /events
//   but its jobs were preempted.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "results/run_result.hpp"
#include "results/summary.hpp"

namespace headroom::results {

// An extra resource for dominant shares: cluster capacity and what each job holds while it runs.
struct ResourceUse {
  std::string name;             // "cpu", "memory"
  double capacity = 0;          // cluster total (0: not modelled, ignored)
  std::vector<double> per_job;  // by job row; same unit as capacity
};

struct FairnessOptions {
  std::vector<double> weights;      // by tenant index; missing entries weigh 1
  std::vector<double> entitlement;  // by tenant index, fractions of the cluster; empty: from weights
  // false: the scenario describes no tenants (no `tenants:`), so every tenant is "entitled" to an
  // equal 1/N of the cluster only for the share ratios and Jain's index. Borrowing above such an
  // entitlement is no quota anyone set: it is then left unreported (Fairness::entitlements_set).
  bool entitlements_set = true;
  Tick starvation = 24 * sim::kHour;
  std::vector<ResourceUse> resources;
};

struct TenantFairness {
  std::string name;
  std::int64_t jobs = 0;
  double weight = 1;
  double entitlement = 0;  // fraction of the cluster
  double share = 0;        // fraction of the cluster's GPU-time
  double share_ratio = 0;  // share / entitlement
  double dominant_share = 0;
  std::string dominant_resource = "gpu";
  double rho = 0;          // finish-time fairness (sum JCT / sum ideal), 0 without completed jobs
  double rho_job_max = 0;  // largest per-job rho
  std::int64_t completed = 0;
  double max_wait_s = 0;
  std::int64_t starved = 0;
  double borrowed_gpu_hours = 0;      // held above the entitlement
  std::int64_t borrowing_starts = 0;  // starts that took the tenant above its entitlement
  std::int64_t reclaimed = 0;         // its jobs preempted for another tenant's job (-1: unknown)
};

struct Fairness {
  std::vector<TenantFairness> tenants;  // by tenant index
  double jain = 1;                      // over tenants with jobs
  double jain_mean = 1;                 // time-average over samples with active tenants
  double rho_max = 0;                   // max tenant rho
  double rho_mean = 0;                  // mean job rho
  double min_share_ratio = 0;           // smallest share_ratio among tenants with jobs
  double max_dominant_share = 0;
  double max_wait_s = 0;
  std::int64_t starved = 0;
  bool entitlements_set = true;  // FairnessOptions::entitlements_set: false, borrowing is not reported
  double borrowed_gpu_hours = 0;
  std::int64_t borrowing_starts = 0;
  std::int64_t reclaims = 0;  // -1: unknown (no /events)
  // Over time: the timeseries' sample times, GPU share per tenant (row-major [sample x tenant])
  // and Jain's index per sample (NaN when no tenant is active in that sample).
  std::vector<Tick> time;
  std::vector<double> share_over_time;
  std::vector<double> jain_over_time;
};

// Weight per tenant index of `result`, looked up by name (1 when not listed).
std::vector<double> tenant_weights(const RunResult& result, const std::vector<std::string>& names,
                                   const std::vector<double>& weights);
// Weights as written in the scenario text a result file carries (`tenants:` list).
std::vector<double> weights_from_scenario_text(const RunResult& result);
// Whether the scenario text a result file carries describes tenants (a non-empty `tenants:` list):
// FairnessOptions::entitlements_set for a result read back.
bool tenants_in_scenario_text(const RunResult& result);

Fairness compute_fairness(const RunResult& result, const FairnessOptions& options = {});

void print_fairness(std::ostream& out, const Fairness& f, std::size_t max_tenants = 10);
// print_summary_json's object with a "fairness" member added (the object print_fairness_json writes).
void print_summary_json_with_fairness(std::ostream& out, const Summary& s, const Fairness& f);
// The fairness block as a JSON object (no trailing newline), indented by `indent` spaces.
void print_fairness_json(std::ostream& out, const Fairness& f, int indent = 2);

}  // namespace headroom::results
