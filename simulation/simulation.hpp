#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/failures.hpp"
#include "models/observer.hpp"
#include "models/prime_time.hpp"
#include "models/speed.hpp"
#include "models/workload.hpp"
#include "policies/api.hpp"
#include "sim/engine.hpp"
#include "sim/rng.hpp"

namespace headroom::models {
class RuntimeModel;
}

namespace headroom::simulation {

using sim::Tick;

struct SimulationOptions {
  Tick horizon = sim::kNever;  // stop here; jobs still pending or running end as Unfinished
  Tick sample_interval = 0;    // 0: chosen from the trace span (about 2,000 samples)
  // Called every 1,024 jobs ended and every 4,096 events with (jobs ended, jobs in total); for
  // progress bars on long runs.
  std::function<void(std::size_t, std::size_t)> progress;
  // Set every 4,096 events to the simulated time since the first submission: a progress line can
  // show the clock moving while no job ends (a long job alone, a preemption livelock).
  std::atomic<Tick>* clock = nullptr;
  // The failure drill: node failures, outages, maintenance drains, job retries (docs/drills.md).
  models::FailureSpec failures;
  std::uint64_t seed = 1;  // the failure RNG streams derive from it
  // The permission drill: queue_access[tenant][queue] says whether the tenant may submit to the
  // queue. An empty outer vector, or an empty row, means no restriction. A denied job is
  // rejected at submit, before the policy sees it.
  std::vector<std::vector<bool>> queue_access;
  // Heterogeneous GPUs (models/throughput.hpp, docs/heterogeneity.md): a job's recorded run time
  // is work on its reference GPU type; placed elsewhere it runs at the model's speed. Null: every
  // job runs at its recorded speed.
  std::shared_ptr<const models::RuntimeModel> runtime;
  // Placement locality (e.g. a topology slowdown): a factor (finite, > 0) that multiplies the
  // job's speed on the placement it starts on, called once per start. Null = 1.0.
  std::function<double(const models::Job&, const models::Placement&)> placement_speed;
  // Prime time (models/prime_time.hpp): a job it holds enters the policy's queue when prime time
  // ends, keeping its submit time; needs the workload's calendar origin (TraceMeta::unix_start).
  models::PrimeTime prime_time;
};

// What a run keeps per sample until it ends: four columns per pool, three per tenant, one per
// pending reason and the job counts (int32), and the time. Samples are kept within
// kMaxSampleBytes: the automatic interval grows past its ~2,000 samples where the tenants would
// pass it, and planner::run_scenario refuses a set interval that would.
inline constexpr std::int64_t kMaxSampleBytes = std::int64_t{1} << 30;
inline std::int64_t sample_bytes(std::size_t pools, std::size_t tenants) {
  return 4 * (4 * static_cast<std::int64_t>(pools) + 3 * static_cast<std::int64_t>(tenants) + models::kPendingCodes +
              2) +
         8;
}
// The most samples (at least 2) kept within kMaxSampleBytes.
inline std::int64_t max_samples(std::size_t pools, std::size_t tenants) {
  return std::max<std::int64_t>(kMaxSampleBytes / sample_bytes(pools, tenants), 2);
}
// The automatic interval: the first of 1, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1 d, 7 d (then
// doubled) giving at most 2,000 samples over the workload's submissions and kMaxSampleBytes.
Tick auto_sample_interval(const models::Workload& w, std::size_t pools);

struct SimulationStats {
  std::uint64_t events = 0;
  std::string fingerprint;  // 16 hex digits over the ordered event log and every decision
  Tick start = 0;           // first submit
  Tick end = 0;             // last event processed, or the horizon if reached first
  Tick sample_interval = 0;
  bool cancelled = false;  // stopped through the stop flag
  std::string stalled;     // why the run stopped itself (a preemption livelock), else empty
};

// Replays a workload on a cluster under one policy. The simulation owns the cluster state and
// the event loop; the policy reads a ClusterView and requests decisions through a Session, which
// the simulation validates and applies. Each job ends in exactly one terminal state, reported to
// the observer together with every audit event and the periodic samples.
class Simulation final : private sim::EventHandler, private policies::Session {
 public:
  Simulation(const models::Workload& workload, const models::ClusterSpec& cluster, policies::Policy& policy,
             models::SimObserver* observer, SimulationOptions options = {});

  SimulationStats run(const std::atomic<bool>* stop = nullptr);

  // Inspection for tests.
  models::JobState job_state(models::JobIndex j) const { return state_[j]; }
  Tick job_start(models::JobIndex j) const { return start_[j]; }
  std::int32_t job_preemptions(models::JobIndex j) const { return preemptions_[j]; }
  // GPU-milliseconds spent on work that preemption threw away (Requeue, Cancel) or on restore
  // overheads (Checkpoint).
  std::int64_t lost_gpu_ms() const { return lost_gpu_ms_; }
  // GPU-milliseconds that bound pods held while their job waited for its other pods
  // (Session::bind: partial placement without gang scheduling).
  std::int64_t held_idle_gpu_ms() const { return held_idle_gpu_ms_; }
  // GPU-milliseconds of work lost to failures: run time since the last checkpoint of killed jobs,
  // plus the restart overheads of their retries.
  std::int64_t failure_lost_gpu_ms() const { return failure_lost_gpu_ms_; }
  std::int32_t job_retries(models::JobIndex j) const { return retries_[j]; }
  std::int64_t jobs_killed() const { return jobs_killed_; }
  std::int64_t jobs_denied() const { return jobs_denied_; }
  bool node_up(models::NodeId n) const { return cluster_.node(n).up; }
  Tick job_end(models::JobIndex j) const { return end_[j]; }
  const models::Placement& job_placement(models::JobIndex j) const { return placement_[j]; }
  // The speed (ppm, models::kSpeedOne = recorded speed) of the job's current or last run.
  std::int64_t job_speed(models::JobIndex j) const { return speed_[j]; }
  std::int64_t peak_used_gpus() const { return peak_used_gpus_; }

 private:
  // EventHandler
  void handle(const sim::Event& event, sim::Engine& engine) override;
  // ClusterView / Session
  Tick now() const override { return engine_.now(); }
  const models::ClusterState& cluster() const override { return cluster_; }
  const models::Workload& workload() const override { return workload_; }
  models::JobState state(models::JobIndex job) const override { return state_.at(job); }
  bool retrying(models::JobIndex job) const override { return backoff_.at(job); }
  std::size_t pending_count() const override { return pending_jobs_; }
  Tick run_start(models::JobIndex job) const override { return run_start_.at(job); }
  const models::Placement& placement(models::JobIndex job) const override { return placement_.at(job); }
  bool terminating(models::JobIndex job) const override { return evict_event_.at(job) != kNoEvent; }
  std::span<const models::JobIndex> jobs_on_node(models::NodeId node) const override { return node_jobs_.at(node); }
  std::string start(models::JobIndex job, models::Placement placement, std::string_view reason) override;
  std::string bind(models::JobIndex job, const models::Slice& slice, std::string_view reason) override;
  std::span<const models::Slice> bound(models::JobIndex job) const override { return bound_.at(job); }
  std::string unbind(models::JobIndex job, std::string_view reason) override;
  void reject(models::JobIndex job, std::string_view reason) override;
  void pending_reason(models::JobIndex job, std::string_view reason) override;
  std::string preempt(models::JobIndex job, policies::PreemptMode mode, Tick grace, models::JobIndex by,
                      std::string_view reason, Tick overhead) override;
  void wake_at(Tick time) override;
  std::int64_t pool_speed(models::JobIndex job, models::PoolId pool) const override;
  std::string fail(models::JobIndex job, std::string_view reason) override;

  void on_submit(models::JobIndex j);
  void on_finish(models::JobIndex j);
  void on_evict(models::JobIndex j);
  void release(models::JobIndex j);
  // Releases the pods a pending job had bound (Session::bind) and tells the policy.
  void release_bound(models::JobIndex j, std::string_view reason, bool notify_policy);
  // GPU-ms the pods bound to pending job j have held idle from their binding until `until`.
  std::int64_t bound_idle_gpu_ms(models::JobIndex j, Tick until) const;
  std::string stranded_reason() const;
  void unbind_on(models::NodeId node, std::string_view reason);
  void request_schedule();
  void take_sample(Tick t);
  void leave_pending(models::JobIndex j);
  void clear_pending_reason(models::JobIndex j);
  void end_job(models::JobIndex j, models::JobState state, std::string_view reason, bool notify_policy = true);
  void finish_at_horizon(Tick t, std::string_view reason);
  void admit(models::JobIndex j);  // the job enters the policy's queue (after prime time, if held)
  bool permitted(models::JobIndex j) const;

  // The failure drill (simulation.cpp, "Failures and maintenance").
  enum class NodeEvent : std::uint8_t {
    UnitFail = 1,
    UnitRepair,
    DrillStart,
    DrillEnd,
    MaintCycle,
    MaintDeadline,
    MaintNodeUp,
    RetryReady
  };
  void start_failures(Tick t0);
  sim::EventId schedule_node_event(Tick t, NodeEvent type, std::uint64_t a, std::uint64_t b = 0);
  void check_quiet();
  void on_node_event(std::uint64_t payload);
  void hold_down(models::NodeId node, std::string_view reason, bool kill);
  void release_hold(models::NodeId node, std::string_view reason);
  void kill_job(models::JobIndex j, models::NodeId node, std::string_view reason);
  void on_retry(models::JobIndex j);
  void on_withdraw(models::JobIndex j);
  void start_maintenance_batch(std::size_t m);
  // A maintenance window's nodes: how many, and the k-th in batch order (Maintenance::nodes).
  std::int64_t maint_node_count(const models::Maintenance& m) const;
  models::NodeId maint_node(const models::Maintenance& m, std::int64_t k) const;
  void drained(models::NodeId node);
  void check_drained(models::NodeId node);
  void check_recovery();
  bool failures_active();
  void resume_failures();
  std::size_t waiting() const { return pending_jobs_ + backoff_jobs_; }
  // Time-sliced pools (NodePool::time_sliced): jobs on a node share its GPUs evenly.
  void reslice(models::NodeId node);
  Tick work_done(models::JobIndex j) const;

  const models::Workload& workload_;
  models::ClusterState cluster_;
  policies::Policy& policy_;
  models::SimObserver* observer_;
  SimulationOptions options_;
  sim::Engine engine_;

  std::vector<models::JobState> state_;
  static constexpr sim::EventId kNoEvent = UINT64_MAX;
  std::vector<Tick> start_, end_, run_start_;
  std::vector<Tick> remaining_;      // work left at run_start_ (ms at the recorded speed)
  std::vector<std::int64_t> speed_;  // ppm of the recorded speed, set at each start
  // Jobs on time-sliced nodes: work left (ms at full speed) at slice_since_, and each node's
  // progress rate num/den (the share of a GPU each unit gets).
  std::vector<Tick> slice_left_, slice_since_;
  std::vector<std::pair<std::int64_t, std::int64_t>> node_rate_;
  std::vector<models::Placement> placement_;
  // Pods bound to a pending job (Session::bind), and when each was bound.
  std::vector<models::Placement> bound_;
  // The whole GPUs of bound_[j], kept as pods bind: a gang of thousands of pods binding one by
  // one summed its bound pods at every bind (CEA Curie under kubernetes+coscheduling).
  std::vector<std::int32_t> bound_gpus_;
  std::vector<std::vector<Tick>> bound_at_;
  std::int64_t held_idle_gpu_ms_ = 0;
  std::vector<sim::EventId> finish_event_, evict_event_;
  struct EvictPlan {
    policies::PreemptMode mode = policies::PreemptMode::Requeue;
    Tick overhead = 0;
  };
  std::vector<EvictPlan> evict_plan_;
  std::vector<std::int32_t> preemptions_;
  std::vector<std::vector<models::JobIndex>> node_jobs_;
  std::set<Tick> wake_times_;
  std::int64_t lost_gpu_ms_ = 0;
  static constexpr int kMaxIdleWakeups = 1000;
  std::size_t submitted_ = 0;
  std::uint64_t progress_ = 0, progress_at_last_wake_ = 0;
  int idle_wakeups_ = 0;
  std::uint64_t handled_ = 0;  // events handled, for SimulationOptions::clock
  Tick first_submit_ = 0;
  // The livelock guard (no horizon set): once every job is submitted, a run in which no job ends
  // for stall_span_ (ten times the longest run time in the workload, at least 30 days) while the
  // policy keeps preempting running jobs is stopped: every run was cut short before it could end,
  // so it would never finish. last_admit_: when the last job was submitted; stall_preemptions_:
  // preemptions since the last job ended.
  Tick stall_span_ = 0, last_admit_ = 0;
  std::uint64_t stall_preemptions_ = 0;
  std::string stalled_;
  void check_stall();
  std::vector<std::int32_t> tenant_used_, tenant_pending_jobs_, tenant_pending_gpus_;
  // Milli-GPUs per tenant held by running jobs' placements / asked for by pending jobs; the
  // samples report them rounded up to whole GPUs (a share counts as part of a GPU):
  // tenant_used_ and tenant_pending_gpus_, updated with them.
  std::vector<std::int64_t> tenant_used_milli_, tenant_pending_milli_;
  std::vector<std::int32_t> pool_used_, pool_free_, pool_down_, pool_frag_;
  // Pending jobs by the GPUs they need on one node (fragmentation in the samples): index k =
  // min(per-node request, largest node's GPUs); 0 = needs no whole GPU (CPU-only).
  std::vector<std::int64_t> pending_need_;
  std::size_t need_of(const models::Job& job) const;
  void count_pending(const models::Job& job, int sign);
  std::size_t pending_jobs_ = 0;
  // "Why pending": each pending job's current reason (id + 1 into reason_codes_, 0 = none given),
  // the distinct reasons seen, and pending jobs per models::PendingCode.
  std::vector<std::uint32_t> job_reason_;
  std::map<std::string, std::uint32_t, std::less<>> reason_ids_;
  std::string last_reason_;           // the reason pending_reason looked up last
  std::uint32_t last_reason_id_ = 0;  // and its id + 1 (0: none)
  std::vector<models::PendingCode> reason_codes_;
  std::array<std::int32_t, models::kPendingCodes> pending_by_code_{};
  std::array<std::int32_t, models::kPendingCodes> pending_sample_{};
  std::size_t running_jobs_ = 0;
  std::size_t ended_jobs_ = 0;
  // When the last job ended: the run ends there, not at a policy timer left after it (a backfill
  // reservation at a job's time limit), so makespan and utilization stop with the work.
  Tick last_end_ = 0;
  std::int64_t peak_used_gpus_ = 0;
  std::int64_t failure_lost_gpu_ms_ = 0;
  std::int64_t jobs_killed_ = 0, jobs_denied_ = 0;
  std::vector<std::int32_t> retries_;
  std::vector<bool> backoff_;  // killed, waiting for its retry (state Pending, not yet queued)
  std::size_t backoff_jobs_ = 0;
  std::vector<std::int32_t> node_down_;    // reasons the node is down (failure, outage, maintenance)
  std::vector<std::int32_t> drain_owner_;  // maintenance draining the node, or -1
  std::size_t down_nodes_ = 0;
  Tick idle_since_ = -1;  // first failure event seen with nothing running, arriving or retrying
  std::vector<std::size_t> dormant_units_, dormant_maint_;
  std::vector<sim::EventId> unit_next_, maint_next_;  // pending UnitFail / MaintCycle event, or kNoEvent
  struct FailureUnit {
    std::size_t spec = 0;
    std::vector<models::NodeId> nodes;
    std::string reason;
    sim::RngStream rng;
  };
  std::vector<FailureUnit> units_;
  struct DrillState {
    std::size_t baseline = 0;  // jobs waiting just before the outage
    bool over = false;         // the outage ended
    bool open = false;         // not yet recovered
  };
  std::vector<DrillState> drills_;
  struct MaintState {
    std::int32_t batch = -1;  // batch in progress, -1 = none
    std::int32_t left = 0;    // nodes of the batch not yet back
    Tick cycle_start = 0;
  };
  std::vector<MaintState> maint_;
  std::vector<sim::EventId> node_events_;  // cancelled once every job has ended
  bool time_sliced_ = false;               // some pool is time-sliced (else reslice has nothing to do)
  bool schedule_queued_ = false;
  bool in_schedule_ = false;
};

}  // namespace headroom::simulation
