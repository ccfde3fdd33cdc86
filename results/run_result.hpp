#pragma once

#include <cstdint>
#include <memory>
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
  // GPU-milliseconds of work the event threw away: on a preempt row, the victim's lost work once
  // the preemption took effect (0 if it finished within its grace period); on a kill row, the
  // work since the last checkpoint plus the restart overhead. The column sums to
  // lost_gpu_ms + failure_lost_gpu_ms.
  std::int64_t lost_gpu_ms = 0;
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
  // A share of one GPU (models::Slice::gpu_milli): milli-GPUs of GPU `device` of the node; gpus
  // is 0 then. 0 = whole GPUs.
  std::int32_t gpu_milli = 0;
  std::int32_t device = 0;
};

// Fixed-interval samples. Matrices are row-major [sample][pool] or [sample][tenant].
struct TimeSeries {
  Tick interval = 0;
  std::vector<Tick> time;
  std::vector<std::int32_t> running_jobs;
  std::vector<std::int32_t> pending_jobs;
  std::vector<std::int32_t> pool_used_gpus;
  std::vector<std::int32_t> pool_free_gpus;
  std::vector<std::int32_t> pool_down_gpus;  // neither used nor free: node down or draining
  // Free GPUs no pending job could use (models::Sample::pool_frag_gpus); empty in files written
  // before it existed.
  std::vector<std::int32_t> pool_frag_gpus;
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
  double gpu_hour_price = 0;  // scenario `costs.gpu_hour` for this pool's GPU type; 0 = unpriced
};

// One inference service of the scenario (models/service.hpp) and how it fared: a row of /services.
struct ServiceRecord {
  std::string name;
  std::string tenant;
  std::int32_t gpus_per_replica = 0;
  std::int32_t min_replicas = 0, max_replicas = 0;
  double throughput = 0;                // requests/s per replica within the latency SLO
  Tick from = 0, to = 0;                // the service's life
  std::int64_t replicas = 0;            // replica pods the autoscaler created
  std::int64_t replicas_withdrawn = 0;  // of them, removed before they ever ran
  double time_attainment = 0;           // fraction of [from, to) in which running replicas covered the demand
  double request_attainment = 0;        // fraction of requests served within the SLO
  double mean_running = 0;              // replicas running, time-averaged
  double mean_wanted = 0;               // replicas the autoscaler asked for, time-averaged
  double replica_gpu_hours = 0;
  double requests = 0;
};

// One outage that killed jobs (docs/drills.md, "Recovery per outage"): the kills at one instant
// with one cause, a row of /recovery/outages.
enum class OutageKind : std::uint8_t { Failure = 0, Scripted = 1, Maintenance = 2 };
struct OutageRecord {
  Tick start = 0;
  Tick end = -1;             // when the last of its nodes was back up; -1 = not by the end of the run
  std::uint8_t kind = 0;     // OutageKind
  std::int32_t drill = -1;   // Scripted: its index in failures.events
  std::uint32_t reason = 0;  // index into RunResult::reasons: the kills' reason
  std::int32_t nodes = 0;    // nodes it took down
};
// One kill of a job by an outage, a row of /recovery/kills.
struct KillRecord {
  std::uint32_t outage = 0;  // row of RunResult::outages
  std::uint32_t job = 0;     // row index in jobs
  Tick time = 0;
  Tick restart = -1;  // the job's next start; -1 = never ran again
  std::int64_t lost_gpu_ms = 0;
  std::int32_t nodes = 0;  // nodes its run held when killed (> 1: a multi-node gang)
  // Pods of the job bound while the rest waited (partial placement) between the kill and its
  // restart (or the end of the run): GPU-ms they held; partial = some were bound at all.
  std::uint8_t partial = 0;
  std::int64_t partial_gpu_ms = 0;
};
// SLO attainment of the inference services around one scripted outage (the lowest over the
// services): during [start, start + duration) and after it, [start + duration, + kAfterOutage).
struct OutageSlo {
  std::int32_t drill = -1;
  Tick from = 0, to = 0;  // the outage window
  double during = 1, after = 1;
};
inline constexpr Tick kAfterOutage = sim::kHour;
// One system of a split site (docs/split.md): a row of /partitions. Its nodes are
// [first_node, first_node + nodes) and its pools [first_pool, first_pool + pools) of the file's
// pools (named "pool@system").
struct PartitionRecord {
  std::string name;
  std::string policy;
  std::int32_t first_node = 0, nodes = 0;
  std::int32_t first_pool = 0, pools = 0;
  std::int64_t gpus = 0;
  // The cost of the boundary: GPU-ms of this partition's idle GPUs that the other partitions'
  // waiting jobs would have used.
  std::int64_t boundary_idle_gpu_ms = 0;
};

// One node handed from one system of a split site to another (docs/split.md, "Moving nodes"):
// a row of /moves. `from` and `to` are rows of /partitions; times in ms, -1 when it never came.
struct MoveRecord {
  std::int32_t node = 0;  // the file's node id (pools "pool@system" in order)
  std::int32_t from = 0, to = 0;
  std::int32_t rule = 0;       // index into the scenario's split.moves
  std::int32_t on_demand = 0;  // 1: a move on demand (an idle node); 0: scheduled (drained)
  std::int32_t gpus = 0;
  Tick requested = 0;          // the drain began
  Tick changed = -1;           // the node was empty and changed owner
  Tick ready = -1;             // it joined `to` (after the move delay)
  std::int32_t preempted = 0;  // jobs preempted when the drain deadline passed
};

namespace chunks {
class ChunkCache;
}

// One verdict of `headroom compare`'s scorecard on this run (its drill's acceptance target under
// this run's system), kept in the run's file by `compare --keep-runs` for the report and the
// desktop app: the target as written, the verdict ("passed", "FAILED", "not covered",
// "integration needed: kubernetes+coscheduling", "error") and why, in one line (the KPI, its
// value against the target, the add-on that passes it).
struct VerdictLine {
  std::string target, verdict, why;
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
  std::string currency;     // of PoolInfo::gpu_hour_price (scenario `costs.currency`)
  std::uint64_t events_processed = 0;
  Tick sim_start = 0;  // first submit
  Tick sim_end = 0;    // last event processed (or horizon)
  // The trace's calendar origin (models::TraceMeta::unix_start: SWF UnixStartTime, the first
  // sacct / kubectl timestamp) in seconds since the Unix epoch: tick t is unix_start * 1000 + t
  // ms; -1 when the trace gives no date.
  std::int64_t unix_start = -1;
  std::int64_t total_gpus = 0;
  std::int64_t lost_gpu_ms = 0;  // GPU time spent on work that preemption threw away
  // GPU time held by pods bound while their job's other pods waited (no gang scheduling: the
  // kubernetes and kueue placement of jobs wider than one node), idle until the job started.
  std::int64_t bound_idle_gpu_ms = 0;
  // The failure drill (docs/drills.md), counted from the audit events as they happen.
  std::int64_t failure_lost_gpu_ms = 0;     // work lost by jobs killed by failures
  std::int64_t node_outages = 0;            // times a node went down (failure, outage, maintenance)
  std::int64_t jobs_killed = 0;             // kills by node failures (one job may be killed several times)
  std::int64_t job_retries = 0;             // killed jobs pending again after their back-off
  std::int64_t jobs_failed_by_failure = 0;  // killed by node failures past their retry limit
  std::int64_t jobs_failed_by_policy = 0;   // ended Failed by the system itself (TimeLimit kills, ...)
  std::vector<Tick> drill_start;            // scripted outages: when each began
  std::vector<Tick> drill_recovered;        // when the pending queue was back to its level before; -1 never
  // Recovery per outage (empty in files written before it existed, or with no kills).
  std::vector<OutageRecord> outages;
  std::vector<KillRecord> kills;
  std::vector<OutageSlo> outage_slo;  // scripted outages, when the scenario has inference services
  // The permission drill: jobs rejected at submit because the tenant may not use the queue,
  // indexed like tenants (empty when none).
  std::vector<std::int64_t> tenant_denied;

  std::vector<std::string> tenants;
  std::vector<std::string> queues;
  std::vector<PoolInfo> pools;
  std::vector<std::string> reasons;  // distinct audit reasons; index 0 is ""

  std::vector<JobRecord> jobs;
  std::vector<EventRecord> events;
  std::vector<PlacementRecord> placements;  // empty in files written before it existed
  std::vector<ServiceRecord> services;      // the scenario's inference services (/services)
  // A split site's systems (/partitions) and each job's partition (/jobs/partition); both empty
  // for a run under one policy and in files written before they existed.
  std::vector<PartitionRecord> partitions;
  std::vector<std::uint32_t> job_partition;
  // Node moves between the systems of a split site (/moves); empty without moves and in files
  // written before they existed.
  std::vector<MoveRecord> moves;
  TimeSeries timeseries;
  // The root attribute `scorecard` (one line a verdict: target, verdict and why, tab-separated);
  // empty unless `headroom compare --keep-runs` scored the run.
  std::vector<VerdictLine> scorecard;

  // Not content: chunks of the file already filtered while the run went on
  // (Recorder::stream_chunks); write_hdf5 takes those whose elements still match.
  std::shared_ptr<chunks::ChunkCache> chunk_cache;
};

}  // namespace headroom::results
