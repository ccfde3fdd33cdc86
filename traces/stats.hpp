#pragma once

// Summary figures of an imported trace (`headroom trace-stats`).

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/workload.hpp"
#include "sim/time.hpp"

namespace headroom::traces {

// Nearest-rank quantiles (the smallest value with at least a fraction q of the values at or below
// it), in seconds. All zero when n is 0.
struct Distribution {
  std::int64_t n = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Values in seconds; `values` is sorted in place.
Distribution distribution(std::vector<double>& values);

struct TenantShare {
  std::string name;  // "(N others)" for the rest
  std::int64_t jobs = 0;
  double gpu_hours = 0;
  double share = 0;  // of all GPU-hours, 0..1 (of jobs when the trace has no GPU-hours)
};

struct TraceStats {
  std::string path, format;
  std::int64_t rows = 0, skipped = 0;
  std::int64_t jobs = 0;
  std::int64_t gpu_jobs = 0;                                  // asking for GPUs (whole or a fraction)
  std::int64_t fractional_jobs = 0;                           // a fraction of one GPU
  std::int64_t cpu_only_jobs = 0;                             // no GPU (kept only when imported with keep_cpu_only)
  std::int64_t max_gpus = 0;                                  // the largest whole-GPU request
  sim::Tick first_submit = 0, last_submit = 0, last_end = 0;  // last_end: of trace_end, -1 if none
  double gpu_hours = 0;                                       // sum of GPU demand x recorded run time
  Distribution runtime;                                       // recorded run time of every job
  Distribution queue_delay;                                   // trace_start - submit, where the trace has a start
  std::int64_t tenant_count = 0;
  std::vector<TenantShare> tenants;             // by GPU-hours, top `top_tenants`, then the rest
  std::array<std::int64_t, 4> status_counts{};  // by models::TraceStatus
};

TraceStats compute_stats(const models::Workload& w, std::size_t top_tenants = 10);
void print_stats(std::ostream& os, const TraceStats& s);

}  // namespace headroom::traces
