#pragma once

// What a trace says about the system that produced it (`headroom trace-infer`, docs/fidelity.md):
// the capacity actually in use over time against the nominal size, the most jobs and GPUs each
// user and queue ever ran at once, the queues, and the scheduler the log's header names. Each
// figure maps to a knob of the policies (Slurm MaxJobsPerUser / MaxTRESPerUser / GrpTRES,
// partitions, availability; Kueue nominalQuota, KAI and Volcano queue limits), and `headroom
// calibrate` searches only knobs this inference supports.
//
// Everything is computed from the recorded starts and ends (models::Job::trace_start,
// trace_start + runtime): a job without a recorded start is left out and counted.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/workload.hpp"
#include "sim/time.hpp"

namespace headroom::traces {

struct Concurrency {
  std::string name;              // user (tenant) or queue
  std::int64_t jobs = 0;         // jobs with a recorded start
  std::int32_t max_jobs = 0;     // most of its jobs running at once
  std::int64_t max_gpus = 0;     // most GPUs its jobs held at once (whole GPUs)
  std::int64_t largest_job = 0;  // most GPUs one of its jobs held
  double mean_wait_s = 0;        // recorded
};

struct CapacityWindow {
  sim::Tick start = 0;  // window [start, start + window)
  std::int64_t max_busy = 0;
  double mean_busy = 0;  // time-weighted over the window
};

struct Inference {
  std::int64_t jobs = 0, recorded = 0;  // jobs, and of them with a recorded start
  std::int64_t nominal_gpus = -1;       // MaxProcs header / units per GPU; -1 unknown
  std::int64_t max_busy = 0;            // most GPUs in use at once over the trace
  sim::Tick window = 0;
  std::vector<CapacityWindow> capacity;
  std::vector<Concurrency> users;         // most jobs first, ties by name
  std::vector<Concurrency> queues;        // likewise
  std::string scheduler;                  // "easy", "conservative", "backfill", "fcfs" or "" (header silent)
  std::vector<std::string> header_notes;  // the header's Note / Scheduler / Queue / Partition lines
};

// `header_path`: the trace file, read for its SWF header comments (';' lines); "" to skip.
Inference infer_system(const models::Workload& w, sim::Tick window, std::int64_t units_per_gpu = 1,
                       const std::string& header_path = "");

// The scheduler named by SWF header text (case-insensitive): "easy" (EASY backfilling),
// "conservative" (conservative backfilling), "backfill", "fcfs", or "".
std::string scheduler_from_header(const std::string& text);

void print_inference(std::ostream& out, const Inference& inf, std::size_t max_rows = 10);

}  // namespace headroom::traces
