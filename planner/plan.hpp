#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/fairness.hpp"
#include "results/summary.hpp"

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
};

// Parses "KPI OP VALUE"; throws sim::InputError naming the target and what was expected.
Target parse_target(const std::string& text);
// The KPI's value in a summary (seconds / fraction / GPU-hours); nullopt when it does not
// exist (an unknown tenant).
std::optional<double> kpi_value(const results::Summary& s, const Target& t);
// Same, also for the fairness KPIs (jain, rho_max, tenant:NAME.share ...).
std::optional<double> kpi_value(const results::Summary& s, const results::Fairness& f, const Target& t);
bool meets(const Target& t, double value);

struct PlanRequest {
  std::string scenario;         // scenario file
  std::string vary;             // key path of an integer field, e.g. cluster.pools.h100.nodes
  std::int64_t lo = 0, hi = 0;  // inclusive range
  std::vector<Target> targets;
  std::vector<std::uint64_t> seeds;  // empty: the scenario's seed
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::int64_t value, bool pass)> on_probe;  // called as probes finish
};

struct Probe {
  std::int64_t value = 0;
  bool pass = false;
  std::size_t seeds_passing = 0;
  std::vector<double> worst;  // per target: the worst value over the seeds
};

struct PlanResult {
  std::optional<std::int64_t> answer;  // smallest value meeting every target on every seed
  std::vector<Probe> curve;            // every value measured, in increasing order
  bool monotone = true;                // false if a passing value lay below a failing one
  bool cancelled = false;
  std::size_t seeds = 0;
};

// Monotone search (assumes more of the varied resource never hurts): checks both ends, then
// bisects with as many probes per round as there are worker threads, all seeds of all probes
// of a round in parallel.
PlanResult plan(const PlanRequest& request);

}  // namespace headroom::planner
