#pragma once

// The placement-only experiment of the FGD study (Weng et al., USENIX ATC'23, Fig. 7; artifact
// hkust-adsl/kubernetes-scheduler-simulator, experiments/): the openb pods are shuffled, topped up
// by sampling the trace with replacement until their GPU demand reaches `tune_ratio` times the
// cluster's GPUs (pkg/simulator/simulator.go SortClusterPods, tuneUpPods), then placed one by one
// and never removed. After each pod the arrived GPU demand and the allocated milli-GPUs are
// sampled; the allocation ratio at X % arrived is the mean over the samples whose arrived demand
// rounds to X % of the cluster's GPUs (or to X +- 1 % when none does), as
// experiments/analysis/merge_alloc_discrete.py computes it.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_share.hpp"
#include "policies/baselines/fgd.hpp"

namespace headroom::planner::fgd {

// A node list (sn,cpu_milli,memory_mib,gpu,model) and a pod list in the openb layout
// (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...). Nodes keep file order, CPU-only
// nodes included; pods keep file order, CPU-only pods included. Throws sim::InputError naming
// file:line:column on malformed rows.
struct OpenbInput {
  models::gpushare::ShareCluster cluster;
  std::vector<models::gpushare::SharePod> pods;
};
OpenbInput load_openb(const std::string& nodes_csv, const std::string& pods_csv);

struct ExperimentOptions {
  std::vector<policies::fgd::Policy> policies;  // empty = all six
  std::uint64_t first_seed = 42;
  int seeds = 10;
  double tune_ratio = 1.3;                      // GPU demand sampled up (or down) to this x capacity
  std::vector<int> ratios{100, 110, 120, 130};  // arrived demand, % of the cluster's GPUs
  int popularity_pct = 95;                      // target workload: shapes covering this % of pods
  bool shuffle = true;
};

struct RunResult {
  policies::fgd::Policy policy{};
  std::uint64_t seed = 0;
  std::vector<double> alloc;  // per ratio, allocated % of GPUs; NaN when no sample
  std::int64_t pods = 0;
  std::int64_t failed = 0;
  double final_frag_pct = 0.0;  // expected fragmented share of the idle GPUs at the end, %
  double seconds = 0.0;
};

// The arrival sequence of one seed: the pods shuffled, then sampled up to the demand (the same
// for every policy, as in the reference, so policies are compared on the same pods).
std::vector<models::gpushare::SharePod> workload_for_seed(const std::vector<models::gpushare::SharePod>& pods,
                                                          std::int64_t capacity_milli, double tune_ratio,
                                                          std::uint64_t seed, bool shuffle);

// One policy on one seed.
RunResult run_one(const OpenbInput& input, const models::gpushare::TargetWorkload& target, policies::fgd::Policy policy,
                  std::uint64_t seed, const ExperimentOptions& options);

// Every policy x seed, in parallel (results in policy-major, seed-minor order; bit-identical at
// any thread count).
std::vector<RunResult> run_experiment(const OpenbInput& input, const ExperimentOptions& options);

// Per policy, the mean allocation ratio at each arrived % over the seeds of a results table
// (the reference's analysis_allo_discrete.csv layout: workload,sc_policy,tune,seed,total_gpus,0..130).
struct ReferenceTable {
  std::map<policies::fgd::Policy, std::map<int, double>> mean;  // policy -> ratio -> mean %
  std::map<policies::fgd::Policy, int> seeds;
};
ReferenceTable load_reference(const std::string& csv, const std::string& workload, const std::vector<int>& ratios);

// Mean over seeds of our runs: policy -> ratio -> %.
std::map<policies::fgd::Policy, std::map<int, double>> mean_alloc(const std::vector<RunResult>& runs,
                                                                  const std::vector<int>& ratios);

// The comparison table (ours, reference, difference) and whether every mean is within
// `tolerance_pp` and the policies rank the same at every ratio. Without a reference, ours only.
struct Comparison {
  bool within_tolerance = true;
  bool same_order = true;
  double max_abs_diff = 0.0;
};
Comparison print_table(std::ostream& os, const std::vector<RunResult>& runs, const ExperimentOptions& options,
                       const ReferenceTable* reference, double tolerance_pp);

}  // namespace headroom::planner::fgd
