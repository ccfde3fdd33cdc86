#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace headroom::results {

using sim::Tick;

// One row of /jobs. Times in ticks (ms); -1 when the job never started / ended.
struct JobRecord {
  std::int64_t trace_id = 0;
  std::uint32_t tenant = 0;
  std::uint32_t queue = 0;
  std::uint8_t kind = 0;   // models::JobKind
  std::uint8_t state = 0;  // models::JobState (terminal)
  std::int32_t gpus = 0;
  std::int32_t gpu_milli = 0;
  Tick submit = 0;
  Tick start = -1;  // first start
  Tick end = -1;
  Tick runtime = 0;  // recorded run time from the trace
  Tick walltime = -1;
  Tick trace_start = -1;  // the trace's own start, for validation
  std::int32_t preemptions = 0;
  std::int32_t nodes_used = 0;   // distinct nodes of the (last) placement
  std::int32_t first_node = -1;  // lowest node id of the (last) placement
  std::int32_t pool = -1;        // pool of first_node
};

// One row of /events (the audit log).
struct EventRecord {
  Tick time = 0;
  std::uint8_t kind = 0;     // models::AuditKind
  std::uint32_t job = 0;     // row index in jobs
  std::int32_t detail = 0;   // kind-specific (state, GPUs, preemptor)
  std::uint32_t reason = 0;  // index into RunResult::reasons
};

// One row of /placements: one node's slice of one run of a job, from its start until its
// resources are released (finish, preemption taking effect, failure); end -1 while it still runs
// at the end of the simulation. The GUI's cluster map draws the cluster at any time from these.
struct PlacementRecord {
  std::uint32_t job = 0;  // row index in jobs
  Tick start = 0;
  Tick end = -1;
  std::int32_t node = 0;  // node id: pools' nodes in order (pool p's first node follows pool p-1's last)
  std::int32_t gpus = 0;
};

// Fixed-interval samples. Matrices are row-major [sample][pool] or [sample][tenant].
struct TimeSeries {
  Tick interval = 0;
  std::vector<Tick> time;
  std::vector<std::int32_t> running_jobs;
  std::vector<std::int32_t> pending_jobs;
  std::vector<std::int32_t> pool_used_gpus;
  std::vector<std::int32_t> pool_free_gpus;
  std::vector<std::int32_t> tenant_used_gpus;
  std::vector<std::int32_t> tenant_pending_jobs;
  std::vector<std::int32_t> tenant_pending_gpus;
  // [sample][models::PendingCode]: pending jobs by why they wait (column 0: no reason given).
  // Empty in files written before it existed.
  std::vector<std::int32_t> pending_by_reason;
};

struct PoolInfo {
  std::string name;
  std::string gpu_type;
  std::int32_t nodes = 0;
  std::int32_t gpus_per_node = 0;
};

// Everything one run produced; what /jobs, /timeseries, /events and the root attributes hold.
struct RunResult {
  // root attributes
  std::string scenario_name;
  std::string scenario_text;
  std::string scenario_file;
  std::string policy;
  std::uint64_t seed = 0;
  std::string version;      // headroom version + git describe
  std::string fingerprint;  // 16 hex digits
  std::uint64_t events_processed = 0;
  Tick sim_start = 0;  // first submit
  Tick sim_end = 0;    // last event processed (or horizon)
  std::int64_t total_gpus = 0;
  std::int64_t lost_gpu_ms = 0;  // GPU time spent on work that preemption threw away

  std::vector<std::string> tenants;
  std::vector<std::string> queues;
  std::vector<PoolInfo> pools;
  std::vector<std::string> reasons;  // distinct audit reasons; index 0 is ""

  std::vector<JobRecord> jobs;
  std::vector<EventRecord> events;
  std::vector<PlacementRecord> placements;  // empty in files written before it existed
  TimeSeries timeseries;
};

}  // namespace headroom::results
