#pragma once

// The POC bake-off: the same scenario (workload, tenants, cluster, drills) under several
// policies, side by side. Generic over the policy registry: any registered policy can be listed.
//
// Per-policy settings: a scenario may carry, next to its default `policy:`, a block per policy
//
//   policy: {name: fifo}
//   policies:
//     kubernetes: {podMaxBackoffSeconds: 20}
//     kueue: {...}
//
// Policy P runs with `policies.P` when the scenario has it; else with the `policy:` block when
// that names P; else with P's defaults.
#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "planner/run.hpp"
#include "policies/system_module.hpp"
#include "results/fairness.hpp"
#include "results/groups.hpp"
#include "results/summary.hpp"
#include "results/table.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"

namespace headroom::planner {

// Wait / JCT per tenant and per job kind (results/groups.hpp).
using results::GroupStats;
using results::stats_by_kind;
using results::stats_by_tenant;

struct PolicyRun {
  std::string policy;
  bool done = false;
  std::string error;  // when the run failed
  // The run failed on a bad input (sim::InputError / InputErrors): the exception, so that a
  // command can report it as the input error it is (file:line, exit 2) rather than as a failed
  // column, when it is the same for every policy (the workload itself is bad).
  std::exception_ptr input_error;
  results::Summary summary;
  results::Fairness fairness;
  std::vector<GroupStats> by_tenant;  // by tenant index of the result
  std::vector<GroupStats> by_kind;    // train, inference, interactive, batch
  // Notes on what the workload's build changed (scenarios::kTimeLimitsNote), the same under
  // every policy.
  std::vector<std::string> notes;
  // The system's rules that keep jobs on part of the pools (policies::SystemModule::node_rules,
  // as this run's parameters set them): the queues with jobs in this run, and how many jobs they
  // hold; `other_node_rules`: it also confines jobs by something else (not counted).
  std::vector<policies::QueueNodes> confined_queues;
  std::int64_t confined_jobs = 0;
  bool other_node_rules = false;
  std::string confined_what;  // what the system calls those queues ("partitions")
  // The run's jobs had node selectors (workload.node_selectors), and from where when compare
  // derived them from the scenario's own system ("slurm's partitions"; empty: the scenario's).
  bool node_selectors = false;
  std::string node_selectors_from;
  // What the set-up compare derived for this column does for those selectors (empty: nothing).
  std::string pools_set_up;
};

struct CompareResult {
  std::string scenario_name;
  std::vector<PolicyRun> runs;  // in the order the policies were listed
  bool cancelled = false;
};

// When every run of `result` failed on the same bad input (the trace does not read, whatever the
// policy), that input error; else null. One error, said once, rather than one failed column per
// policy.
std::exception_ptr common_input_error(const CompareResult& result);

// A policy's settings derived from the scenario's tenant description (`tenants:` weights, gpus,
// max_gpus), used when the scenario gives the policy no block of its own: each system's
// SystemModule::derive says what (policies/<system>/module.cpp: ResourceQuota caps, a ClusterQueue
// or queue per tenant, fair-share accounts; the systems' README files). Each tenant's guaranteed
// GPUs are its `gpus`, else its weight's share of the cluster (rounded down). nullopt: nothing to
// derive (a baseline policy, or the system has nothing to derive for this scenario).
std::optional<policies::PolicyParams> derived_params(const scenarios::Scenario& sc, const std::string& policy);

// The block the scenario gives `policy` by its exact name: its `policies.<name>` block, else the
// `policy:` block when that names it; null when it has none (the policy runs with what is derived
// from the tenants, else its defaults).
const scenarios::PolicySpec* own_block(const scenarios::Scenario& base, const std::string& policy);

// The scenario with `policy` in place of its default policy (see the header comment).
// Throws sim::InputError naming --policies for a policy the registry does not know.
scenarios::Scenario scenario_for_policy(const scenarios::Scenario& base, const std::string& policy);

// Splits "a,b,c", checks each name against the registry ("did you mean") and duplicates.
std::vector<std::string> parse_policy_list(const std::string& text);

// Runs every policy in parallel (TBB), one simulation each; results land by index, so the
// comparison is the same at any thread count. `progress` (optional, display only) gets one run
// per policy, labelled by its name.
CompareResult compare(const scenarios::Scenario& base, const std::vector<std::string>& policies,
                      const std::atomic<bool>* stop = nullptr, RunsProgress* progress = nullptr);

// Several scenarios (the POC drills) under the same policies: every (scenario, policy) run in one
// parallel loop, results by scenario then policy. With `keep_dir` each run's full result is
// written there as kept_run_path(keep_dir, scenario name, policy) (the directory must exist).
// The runs share one import of each trace: from `traces` when given (the command's cache, which
// a check before the runs may have filled), else from a cache of their own.
std::vector<CompareResult> compare_all(const std::vector<scenarios::Scenario>& bases,
                                       const std::vector<std::string>& policies, const std::atomic<bool>* stop,
                                       RunsProgress* progress, const std::string& keep_dir,
                                       scenarios::TraceCache* traces = nullptr);
// DIR/<scenario>-<policy>.h5, characters other than letters, digits, - _ . replaced by _.
std::string kept_run_path(const std::string& dir, const std::string& scenario, const std::string& policy);

// The tenants with jobs in any finished run, ranked by their largest GPU-hours under any finished
// policy (ties by name), at most `n` of them: the tenants a compare table shows first.
std::vector<std::string> largest_tenants(const CompareResult& result, std::size_t n);

// One row per metric, one column per policy (plus `metric` and `unit`): overall KPIs, fairness,
// then tenant:NAME.* rows (every tenant with jobs in any finished run, found by name in each run:
// NaN where a run lacks it) and kind:KIND.* rows.
results::Table compare_table(const CompareResult& result);

}  // namespace headroom::planner
