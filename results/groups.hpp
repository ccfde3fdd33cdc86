#pragma once

// Wait, JCT and GPU-hours per group of jobs (a tenant, a job kind) of one result: the tenant:NAME.*
// and kind:KIND.* rows of `headroom compare`, and the same rows in the desktop app's Compare tab.
#include <cstdint>
#include <string>
#include <vector>

#include "results/run_result.hpp"

namespace headroom::results {

// Wait and JCT of one group of jobs (a tenant or a job kind), in seconds. Wait over every job but
// rejected ones, a job that never started censored at the end of the run (headline_wait: with
// never_started > 0 the waits are lower bounds), JCT over completed jobs; nearest-rank p95 as in
// the run summary; NaN for no such job.
struct GroupStats {
  std::string name;
  std::int64_t jobs = 0, started = 0, completed = 0, rejected = 0, never_started = 0;
  double wait_mean_s = 0, wait_p95_s = 0, jct_mean_s = 0, jct_p95_s = 0, gpu_hours = 0;
};

// By tenant index of the result (a tenant past the name table is "#N").
std::vector<GroupStats> stats_by_tenant(const RunResult& r);
// Train, inference, interactive, batch.
std::vector<GroupStats> stats_by_kind(const RunResult& r);

}  // namespace headroom::results
