#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "results/run_result.hpp"

namespace headroom::results {

struct Quantiles {
  double mean = 0, median = 0, p95 = 0, p99 = 0, max = 0;  // seconds
  std::int64_t n = 0;
};

struct TenantSummary {
  std::string name;
  std::int64_t jobs = 0;
  double gpu_hours = 0;    // GPU-hours of service received (start..end)
  double mean_wait_s = 0;  // over jobs that started
  double p95_wait_s = 0;
  double max_wait_s = 0;
};

struct Summary {
  std::string scenario_name, policy, fingerprint;
  std::uint64_t seed = 0;
  std::int64_t jobs = 0;
  std::array<std::int64_t, 7> by_state{};  // indexed by models::JobState
  Quantiles wait;                          // over started jobs
  Quantiles jct;                           // submit to end, over completed jobs
  double gpu_utilization = 0;              // GPU-seconds allocated / (total GPUs x (sim_end - sim_start))
  double makespan_s = 0;
  std::int64_t preemptions = 0;
  double lost_gpu_hours = 0;           // GPU-hours of work thrown away by preemption
  std::int64_t starved_jobs = 0;       // jobs that waited longer than kStarvationWait (or never started)
  double pending_gpus_mean = 0;        // mean over the samples of the GPUs requested by pending jobs
  std::vector<TenantSummary> tenants;  // sorted by GPU-hours, descending; ties by name
};

inline constexpr Tick kStarvationWait = 24 * sim::kHour;

Summary summarize(const RunResult& result);
void print_summary(std::ostream& out, const Summary& s, std::size_t max_tenants = 10);
void print_summary_json(std::ostream& out, const Summary& s);

}  // namespace headroom::results
