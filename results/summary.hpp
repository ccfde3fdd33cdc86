#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "results/format.hpp"
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
  double mean_wait_s = 0;  // over its jobs, never-started ones censored (see Summary::wait)
  double p95_wait_s = 0;
  double max_wait_s = 0;
  std::int64_t denied = 0;         // submissions rejected by the permission drill
  std::int64_t never_started = 0;  // jobs that never started, rejected ones aside
  std::int64_t rejected = 0;       // rejected by the policy (permission denials aside)
  Quantiles wait;                  // every job but rejected ones (mean_wait_s etc. repeat these)
  Quantiles wait_started;          // over its started jobs only
  Quantiles jct;                   // over its completed jobs
};

// Jobs of one kind (models::JobKind: train, inference, interactive, batch).
struct KindSummary {
  std::string name;
  std::int64_t jobs = 0;
  std::int64_t never_started = 0;
  // Rejected by the policy; permission denials aside when the audit log says which (without
  // /events every rejection counts here).
  std::int64_t rejected = 0;
  Quantiles wait, jct;     // wait as Summary::wait (never-started jobs censored)
  Quantiles wait_started;  // over its started jobs only
  // Ended Completed: the jobs its JCT counts.
  std::int64_t completed = 0;
};

// Recovery of the jobs one outage (or a set of outages) killed: seconds from each kill to the
// job's next start (docs/drills.md, "Recovery per outage").
struct RecoveryStats {
  std::int64_t killed = 0;
  std::int64_t not_recovered = 0;    // never ran again: failed past the retry limit, or still waiting at the end
  std::int64_t retry_exhausted = 0;  // of them, ended Failed by the drill (retry limit reached)
  // Killed, then withdrawn while waiting (a service replica scaled down, a cancelled job): left
  // out of the quantiles, nothing to recover.
  std::int64_t withdrawn = 0;
  // Nearest-rank quantiles over the kills (withdrawn ones aside), one never recovered counting as
  // infinitely long:
  // -1 (shown "never") when the rank falls on one. all_running_s: the longest, from the
  // outage's start until the last of its jobs was running again (-1 never).
  double p50_s = 0, p95_s = 0, max_s = 0;
  double all_running_s = 0;
  double lost_gpu_hours = 0;       // work lost back to the last checkpoint, + restart overheads
  std::int64_t gangs = 0;          // multi-node jobs among the kills
  std::int64_t partial_gangs = 0;  // of them, with pods bound while others waited (not re-formed whole)
  double partial_gpu_hours = 0;    // GPU-hours those bound pods held while partial
};

// One outage that killed jobs.
struct OutageRecovery {
  std::string kind;  // "failure", "drill", "maintenance"
  std::int32_t drill = -1;
  std::string reason;      // the kills' reason ("outage: rack rack-5", "node failure", ...)
  double start_s = 0;      // since the run's first submit
  double duration_s = -1;  // until its last node was back; -1 = not back by the end of the run
  std::int32_t nodes = 0;
  RecoveryStats recovery;
};

// The failure drill (docs/drills.md).
struct FailureSummary {
  std::int64_t node_outages = 0;
  std::int64_t jobs_killed = 0;
  std::int64_t job_retries = 0;
  std::int64_t jobs_failed = 0;  // killed by node failures past their retry limit
  // Ended Failed by the system itself (a Slurm TimeLimit kill, a kubelet refusal): not the drill's
  // doing, so reported apart from jobs_failed.
  std::int64_t jobs_failed_by_policy = 0;
  double lost_gpu_hours = 0;  // work lost to failures (since the last checkpoint, + restart overheads)
  // Scripted outages: seconds from each one's start until the pending queue was back to its level
  // before it, once the outage was over; -1 = not recovered by the end of the run.
  std::vector<double> drill_recovery_s;
  std::int64_t drills_recovered = 0;
  double worst_recovery_s = -1;  // over the recovered drills; -1 = none recovered
  // Recovery per outage (RunResult::outages / kills; empty for files written before them):
  // over every kill, per kind of outage (failure, drill, maintenance), and each scripted outage.
  std::int64_t outages = 0;              // outages that killed at least one job
  RecoveryStats recovery;                // every kill
  std::array<RecoveryStats, 3> by_kind;  // by results::OutageKind
  std::vector<OutageRecovery> drills;    // the scripted outages (failures.events), in order
  // Inference SLO attainment around the scripted outages (RunResult::outage_slo): the share of
  // the outage windows' time (and of the hours after them) in which the services met their SLO,
  // each window's figure being the lowest of the services, weighted by the windows' lengths;
  // -1 = no service then.
  double outage_slo_attainment = -1, after_outage_slo_attainment = -1;
  std::vector<OutageSlo> outage_slo;
  bool any() const { return node_outages > 0 || jobs_killed > 0 || !drill_recovery_s.empty(); }
};

// One system of a split site (RunResult::partitions, docs/split.md).
struct PartitionSummary {
  std::string name, policy;
  std::int64_t gpus = 0, jobs = 0;
  double gpu_utilization = 0;  // GPU time its jobs held / (its GPUs x (sim_end - sim_start))
  // GPU-hours of its GPUs left idle while the other systems' waiting jobs would have fit them.
  double boundary_idle_gpu_hours = 0;
  // Node moves (RunResult::moves): nodes it gave and got (that changed owner), and the GPUs it
  // holds at the end. With moves, gpu_utilization is over the GPU time it owned.
  std::int64_t nodes_out = 0, nodes_in = 0, gpus_at_end = 0;
  Quantiles wait;  // as Summary::wait, over its jobs
  // Waits of its jobs by kind (models::JobKind name) and by queue (RunResult::queues), for the
  // kinds and queues it has jobs of, in id order.
  std::vector<std::pair<std::string, Quantiles>> wait_by_kind, wait_by_queue;
};

struct Summary {
  std::string scenario_name, policy, fingerprint;
  std::uint64_t seed = 0;
  // The run's first submit and its end in calendar time, ms since the Unix epoch (UTC), when the
  // trace gives a start date (RunResult::unix_start); -1 otherwise.
  std::int64_t first_submit_unix_ms = -1, end_unix_ms = -1;
  std::int64_t jobs = 0;
  std::array<std::int64_t, 7> by_state{};  // indexed by models::JobState
  // Wait over every job but rejected ones (policy rejections and permission denials, counted in
  // by_state and denied): a job that never started waits until it left the queue or the run
  // ended (headline_wait), so with never_started > 0 every figure is a lower bound.
  Quantiles wait;
  Quantiles wait_started;          // over started jobs only
  std::int64_t never_started = 0;  // jobs that never started, rejected ones aside
  std::int64_t rejected = 0;       // rejected by the policy: by_state's rejected less denied
  // Set when more than 1 % of the jobs never started or were rejected by the policy (permission
  // denials, which the scenario asks for, aside): how many, their share and the most frequent
  // reason among them; and a second line (a NOTE) when more than 1 % were ended Failed by the
  // system itself (a Finish reason: a Slurm TimeLimit kill, a failure past its retry limit), with
  // its main reason. Empty otherwise.
  std::string banner;
  Quantiles jct;               // submit to end, over completed jobs
  double gpu_utilization = 0;  // GPU-seconds allocated / (total GPUs x (sim_end - sim_start))
  // Allocated GPU time less the work thrown away (preempted without a checkpoint, killed by
  // failures: lost_gpu_ms + failure_lost_gpu_ms), over the same capacity: the useful share.
  double gpu_busy_utilization = 0;
  double makespan_s = 0;
  std::int64_t preemptions = 0;
  double lost_gpu_hours = 0;  // GPU-hours thrown away by preemption and by jobs a policy ended (TimeLimit kills)
  // GPU-hours held idle by pods bound while their job's other pods waited (RunResult::bound_idle_gpu_ms).
  double held_idle_gpu_hours = 0;
  std::int64_t starved_jobs = 0;  // jobs that waited longer than kStarvationWait (or never started)
  double pending_gpus_mean = 0;   // mean over the samples of the GPUs requested by pending jobs
  // Fragmentation (TimeSeries::pool_frag_gpus): fragmented free GPUs / free GPUs, summed over the
  // samples in which jobs waited for GPUs (0 when there were none, or the file predates it);
  // fragmented_gpus_mean is the mean over all samples.
  double fragmentation = 0;
  double fragmented_gpus_mean = 0;
  // fragmentation's denominator per sample: the mean free GPUs over the samples in which jobs
  // waited for GPUs (96 % of 1 free GPU and 13 % of 200 are both possible: issue #36).
  double free_gpus_waiting_mean = 0;
  // Cost (scenario `costs:`; priced is false when no pool has a price). cost: every priced GPU
  // for the whole run (sim_end - sim_start), what owning or renting the cluster costs; cost_used:
  // the GPU-hours jobs held (same accounting as gpu_utilization) at their pool's price.
  bool priced = false;
  std::string currency;
  double cost = 0;
  double cost_used = 0;
  double cost_per_used_gpu_hour = 0;  // cost / GPU-hours held on priced pools; 0 when none
  // Inference services (RunResult::services); slo_attainment is the lowest time attainment of
  // any service, 1 without services.
  std::vector<ServiceRecord> services;
  double slo_attainment = 1;
  std::vector<TenantSummary> tenants;  // sorted by GPU-hours, descending; ties by name
  std::vector<KindSummary> kinds;      // by models::JobKind, every kind
  FailureSummary failures;
  std::vector<PartitionSummary> partitions;  // empty unless the run split the site
  // Node moves of a split site: moves begun, by kind, and those whose drain deadline preempted
  // jobs; mean drain (request to owner change) and mean delay (owner change to ready), seconds.
  std::int64_t moves = 0, moves_on_demand = 0, move_preempted_jobs = 0;
  double move_drain_mean_s = 0, move_delay_mean_s = 0;
  double boundary_idle_gpu_hours = 0;  // the cost of the boundary: the partitions' sum
  std::int64_t denied = 0;             // submissions rejected by the permission drill, over all tenants
  // Jobs the system ended at their time limit (FailureSummary::jobs_failed_by_policy) that the log
  // shows running at most a minute past it: their system ended them there too (SIGTERM at the
  // limit, KillWait, SIGKILL), so the replay ended them as recorded.
  std::int64_t ended_at_recorded_limit = 0;
};

inline constexpr Tick kStarvationWait = 24 * sim::kHour;

// A job that never started and was not rejected: unfinished at the end, or withdrawn while pending.
bool never_started(const JobRecord& j);
// A job's wait in the headline figures: start - submit when it started; for one that never
// started, until it left the queue (its end) or else the end of the run, sim_end (censored: a
// lower bound), never negative; -1 for a rejected job, which has no wait.
Tick headline_wait(const JobRecord& j, Tick sim_end);

// One run of a job: [start, end) between a start and the release of its resources (a job has
// several when it was preempted and ran again).
struct JobRun {
  std::uint32_t job = 0;
  Tick start = 0, end = 0;
  std::int64_t milli = 0;  // milli-GPUs held during the run (1000 per whole GPU)
};
// The runs of every job, from /placements (a run's slices are consecutive rows with the same job
// and start; a run still going at the end of the simulation ends at sim_end), each holding what
// its slices hold: whole GPUs and GPU shares (a fractional job that a policy gave a whole GPU
// holds that GPU). A file without /placements gives each started job one run, from its first
// start to its end, holding what the job asks for.
std::vector<JobRun> job_runs(const RunResult& r);
// Time each job held its resources: the sum of its runs (a preempted job holds nothing between
// its eviction and its next start), by job row.
std::vector<Tick> held_times(const RunResult& r, const std::vector<JobRun>& runs);
// Milli-GPU-ms each job held: the sum over its runs of milli x duration, by job row.
std::vector<long double> held_milli_ms(const RunResult& r, const std::vector<JobRun>& runs);

Summary summarize(const RunResult& result);
void print_summary(std::ostream& out, const Summary& s, std::size_t max_tenants = 10);
void print_summary_json(std::ostream& out, const Summary& s);
// The recovery lines of the summary (FailureSummary::recovery, by_kind, drills): nothing when no
// outage killed a job and no service was measured around one.
void print_recovery(std::ostream& out, const FailureSummary& f);

// results::duration (results/format.hpp), under the name older callers use.
inline std::string short_duration(double seconds) { return duration(seconds); }

// Shortest text that reads back as the same double; `non_finite` for NaN and infinities (JSON
// has neither: "0" in the run summary, "null" where a missing value must stay visible).
std::string json_number(double v, std::string_view non_finite = "0");
// A JSON string literal; invalid UTF-8 bytes become U+FFFD so the output always parses.
std::string json_string(std::string_view s);

}  // namespace headroom::results
