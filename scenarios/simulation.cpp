#include "scenarios/simulation.hpp"

#include <algorithm>
#include <array>

#include "sim/errors.hpp"

namespace headroom::scenarios {

using models::AuditKind;
using models::JobIndex;
using models::JobState;
using sim::EventClass;

namespace {

Tick auto_interval(const models::Workload& w) {
  if (w.jobs.empty()) return sim::kMinute;
  const Tick span = w.jobs.back().submit - w.jobs.front().submit;
  static constexpr std::array<Tick, 12> kNice = {
      sim::kMinute,   5 * sim::kMinute, 10 * sim::kMinute, 15 * sim::kMinute, 30 * sim::kMinute, sim::kHour,
      2 * sim::kHour, 3 * sim::kHour,   6 * sim::kHour,    12 * sim::kHour,   sim::kDay,         7 * sim::kDay};
  for (Tick t : kNice)
    if (span / t <= 2000) return t;
  return kNice.back();
}

JobState terminal_state(models::TraceStatus s) {
  switch (s) {
    case models::TraceStatus::Failed: return JobState::Failed;
    case models::TraceStatus::Cancelled: return JobState::Cancelled;
    default: return JobState::Completed;
  }
}

std::int32_t placement_gpus(const models::Placement& p) {
  std::int32_t n = 0;
  for (const auto& s : p) n += s.gpus;
  return n;
}

// The policy's view of the cluster: only the units each GPU is advertised as may differ.
models::ClusterSpec advertised(const policies::Policy& policy, const models::ClusterSpec& cluster) {
  models::ClusterSpec spec = policy.advertised_cluster(cluster);
  HEADROOM_ASSERT(spec.pools.size() == cluster.pools.size(), "a policy changed the cluster's pools");
  for (std::size_t p = 0; p < spec.pools.size(); ++p)
    HEADROOM_ASSERT(
        spec.pools[p].nodes == cluster.pools[p].nodes && spec.pools[p].gpus_per_node == cluster.pools[p].gpus_per_node,
        "a policy changed a pool's nodes or GPUs");
  return spec;
}

}  // namespace

Simulation::Simulation(const models::Workload& workload, const models::ClusterSpec& cluster, policies::Policy& policy,
                       models::SimObserver* observer, SimulationOptions options)
    : workload_(workload),
      cluster_(advertised(policy, cluster)),
      policy_(policy),
      observer_(observer),
      options_(options) {
  const std::size_t n = workload_.jobs.size();
  state_.assign(n, JobState::Pending);
  start_.assign(n, -1);
  end_.assign(n, -1);
  run_start_.assign(n, -1);
  remaining_.resize(n);
  for (std::size_t i = 0; i < n; ++i) remaining_[i] = workload_.jobs[i].runtime;
  placement_.resize(n);
  finish_event_.assign(n, kNoEvent);
  evict_event_.assign(n, kNoEvent);
  evict_plan_.resize(n);
  preemptions_.assign(n, 0);
  node_jobs_.resize(cluster_.nodes().size());
  tenant_used_.assign(workload_.tenants.size(), 0);
  tenant_pending_jobs_.assign(workload_.tenants.size(), 0);
  tenant_pending_gpus_.assign(workload_.tenants.size(), 0);
  pool_used_.assign(cluster_.pool_count(), 0);
  pool_free_.assign(cluster_.pool_count(), 0);
  for (std::size_t i = 1; i < n; ++i)
    HEADROOM_ASSERT(workload_.jobs[i - 1].submit <= workload_.jobs[i].submit, "workload is not sorted by submit time");
  if (options_.sample_interval <= 0) options_.sample_interval = auto_interval(workload_);
}

SimulationStats Simulation::run(const std::atomic<bool>* stop) {
  SimulationStats stats;
  stats.sample_interval = options_.sample_interval;
  const std::size_t n = workload_.jobs.size();
  if (n == 0) return stats;
  const Tick t0 = workload_.jobs.front().submit;
  stats.start = t0;
  engine_.schedule(t0, EventClass::JobSubmit, 0);
  engine_.schedule(t0, EventClass::Sample);

  stats.events = engine_.run(*this, options_.horizon, stop);
  if (stop != nullptr && stop->load()) {
    stats.cancelled = true;
    stats.end = engine_.now();
    stats.fingerprint = engine_.fingerprint().hex();
    return stats;
  }
  if (ended_jobs_ < n && engine_.queue().empty()) {
    // Nothing left that could ever start the jobs still pending (e.g. a pod no node can hold
    // under a policy that keeps it queued, as Kubernetes does).
    HEADROOM_ASSERT(running_jobs_ == 0, "event queue ran dry with jobs still running");
    finish_at_horizon(engine_.now(), "never scheduled: no further event could start it");
    stats.end = engine_.now();
  } else if (ended_jobs_ < n) {
    finish_at_horizon(options_.horizon, "horizon reached");
    stats.end = options_.horizon;
  } else {
    stats.end = engine_.now();
  }
  stats.fingerprint = engine_.fingerprint().hex();
  return stats;
}

void Simulation::handle(const sim::Event& event, sim::Engine& engine) {
  switch (event.cls) {
    case EventClass::JobSubmit: {
      const auto j = static_cast<JobIndex>(event.payload);
      if (j + 1u < workload_.jobs.size()) engine.schedule(workload_.jobs[j + 1].submit, EventClass::JobSubmit, j + 1);
      on_submit(j);
      break;
    }
    case EventClass::JobFinish: on_finish(static_cast<JobIndex>(event.payload)); break;
    case EventClass::JobEvict: on_evict(static_cast<JobIndex>(event.payload)); break;
    case EventClass::Timer:
      wake_times_.erase(event.time);
      // With nothing running and nothing left to arrive the cluster is frozen; a policy that
      // keeps waking without ever changing anything (retrying a pod that cannot fit) is
      // stopped after kMaxIdleWakeups so the run ends.
      if (running_jobs_ == 0 && submitted_ == workload_.jobs.size() && progress_ == progress_at_last_wake_) {
        ++idle_wakeups_;
      } else {
        idle_wakeups_ = 0;
      }
      progress_at_last_wake_ = progress_;
      request_schedule();
      break;
    case EventClass::Schedule:
      schedule_queued_ = false;
      in_schedule_ = true;
      policy_.schedule(*this);
      in_schedule_ = false;
      break;
    case EventClass::Sample:
      take_sample(event.time);
      // Keep sampling while anything else can still happen.
      if (ended_jobs_ < workload_.jobs.size() && engine.queue().live_size() > 0)
        engine.schedule(event.time + options_.sample_interval, EventClass::Sample);
      break;
    default: throw sim::InternalError("unexpected event class");
  }
}

void Simulation::request_schedule() {
  if (schedule_queued_) return;
  schedule_queued_ = true;
  engine_.schedule(engine_.now(), EventClass::Schedule);
}

void Simulation::on_submit(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  ++submitted_;
  ++progress_;
  ++pending_jobs_;
  ++tenant_pending_jobs_[job.tenant];
  tenant_pending_gpus_[job.tenant] += job.gpus;
  if (observer_ != nullptr) observer_->on_event(engine_.now(), AuditKind::Submit, j, job.gpus, "");
  policy_.on_submit(*this, j);
  request_schedule();
}

void Simulation::leave_pending(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  HEADROOM_ASSERT(state_[j] == JobState::Pending, "job " + std::to_string(j) + " is not pending");
  --pending_jobs_;
  --tenant_pending_jobs_[job.tenant];
  tenant_pending_gpus_[job.tenant] -= job.gpus;
}

std::string Simulation::start(JobIndex j, const models::Placement& placement, std::string_view reason) {
  if (!in_schedule_) return "start outside a scheduling pass";
  if (j >= state_.size()) return "no such job";
  if (state_[j] != JobState::Pending) return "job " + std::to_string(j) + " is not pending";
  const models::Job& job = workload_.jobs[j];
  if (placement_gpus(placement) != job.gpus)
    return "placement has " + std::to_string(placement_gpus(placement)) + " GPUs, job requests " +
           std::to_string(job.gpus);
  if (std::string why = cluster_.check(placement); !why.empty()) return why;
  if (placement.empty()) return "empty placement";

  leave_pending(j);
  ++progress_;
  cluster_.allocate(placement);
  state_[j] = JobState::Running;
  if (start_[j] < 0) start_[j] = engine_.now();
  run_start_[j] = engine_.now();
  placement_[j] = placement;
  for (const auto& s : placement) node_jobs_[s.node].push_back(j);
  ++running_jobs_;
  tenant_used_[job.tenant] += job.gpus;
  peak_used_gpus_ = std::max(peak_used_gpus_, cluster_.total_gpus() - cluster_.free_gpus());
  finish_event_[j] = engine_.schedule(engine_.now() + remaining_[j], EventClass::JobFinish, j);
  for (const auto& s : placement) reslice(s.node);

  engine_.record(0x5354415254000000ull ^ j);
  for (const auto& s : placement)
    engine_.record((static_cast<std::uint64_t>(s.node) << 32) | static_cast<std::uint32_t>(s.gpus));
  if (observer_ != nullptr) {
    observer_->on_event(engine_.now(), AuditKind::Start, j, job.gpus, reason);
    observer_->on_start(engine_.now(), j, placement);
  }
  return {};
}

void Simulation::reject(JobIndex j, std::string_view reason) {
  HEADROOM_ASSERT(j < state_.size() && state_[j] == JobState::Pending, "reject of a job that is not pending");
  leave_pending(j);
  ++progress_;
  engine_.record(0x52454a4543540000ull ^ j);
  if (observer_ != nullptr) observer_->on_event(engine_.now(), AuditKind::Reject, j, 0, reason);
  end_job(j, JobState::Rejected, reason);
}

void Simulation::pending_reason(JobIndex j, std::string_view reason) {
  (void)j;
  (void)reason;  // kept for the GUI's queue view once results store pending reasons
}

void Simulation::release(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  ++progress_;
  cluster_.release(placement_[j]);
  for (const auto& s : placement_[j]) {
    auto& v = node_jobs_[s.node];
    v.erase(std::find(v.begin(), v.end(), j));
    reslice(s.node);
  }
  --running_jobs_;
  tenant_used_[job.tenant] -= job.gpus;
  run_start_[j] = -1;
  finish_event_[j] = kNoEvent;
  policy_.on_release(*this, j);
}

std::string Simulation::preempt(JobIndex j, policies::PreemptMode mode, Tick grace, JobIndex by,
                                std::string_view reason, Tick overhead) {
  if (!in_schedule_) return "preempt outside a scheduling pass";
  if (j >= state_.size() || state_[j] != JobState::Running) return "job is not running";
  if (evict_event_[j] != kNoEvent) return "job is already terminating";
  if (grace < 0 || overhead < 0) return "negative grace period or overhead";
  evict_plan_[j] = EvictPlan{mode, overhead};
  ++preemptions_[j];
  engine_.record(0x5052454d50540000ull ^ (static_cast<std::uint64_t>(j) << 8) ^ static_cast<std::uint64_t>(mode));
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::Preempt, j, by == models::kNoJob ? -1 : static_cast<std::int32_t>(by),
                        reason);
  evict_event_[j] = engine_.schedule(engine_.now() + grace, EventClass::JobEvict, j);
  return {};
}

void Simulation::wake_at(Tick time) {
  if (idle_wakeups_ >= kMaxIdleWakeups) return;
  time = std::max(time, engine_.now());
  if (wake_times_.insert(time).second) engine_.schedule(time, EventClass::Timer);
}

std::string Simulation::fail(JobIndex j, std::string_view reason) {
  if (!in_schedule_) return "fail outside a scheduling pass";
  if (j >= state_.size() || state_[j] != JobState::Running) return "job is not running";
  if (evict_event_[j] != kNoEvent) {
    engine_.cancel(evict_event_[j]);
    evict_event_[j] = kNoEvent;
  }
  engine_.cancel(finish_event_[j]);
  lost_gpu_ms_ += static_cast<std::int64_t>(workload_.jobs[j].gpus) * (engine_.now() - run_start_[j]);
  release(j);
  engine_.record(0x4641494c00000000ull ^ j);
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::Finish, j, static_cast<std::int32_t>(JobState::Failed), reason);
  end_job(j, JobState::Failed, reason);
  request_schedule();
  return {};
}

void Simulation::on_evict(JobIndex j) {
  HEADROOM_ASSERT(state_[j] == JobState::Running, "eviction of a job that is not running");
  evict_event_[j] = kNoEvent;
  engine_.cancel(finish_event_[j]);
  const models::Job& job = workload_.jobs[j];
  const Tick ran = engine_.now() - run_start_[j];
  const Tick done = work_done(j);
  const EvictPlan plan = evict_plan_[j];
  release(j);
  switch (plan.mode) {
    case policies::PreemptMode::Cancel:
      lost_gpu_ms_ += static_cast<std::int64_t>(job.gpus) * ran;
      if (observer_ != nullptr)
        observer_->on_event(engine_.now(), AuditKind::Finish, j, static_cast<std::int32_t>(JobState::Cancelled),
                            "preempted");
      end_job(j, JobState::Cancelled, "preempted");
      break;
    case policies::PreemptMode::Requeue:
    case policies::PreemptMode::Checkpoint: {
      if (plan.mode == policies::PreemptMode::Requeue) {
        lost_gpu_ms_ += static_cast<std::int64_t>(job.gpus) * ran;
        remaining_[j] = job.runtime;
      } else {
        remaining_[j] = remaining_[j] - done + plan.overhead;
        lost_gpu_ms_ += static_cast<std::int64_t>(job.gpus) * plan.overhead;
      }
      state_[j] = JobState::Pending;
      ++pending_jobs_;
      ++tenant_pending_jobs_[job.tenant];
      tenant_pending_gpus_[job.tenant] += job.gpus;
      if (observer_ != nullptr) observer_->on_event(engine_.now(), AuditKind::Requeue, j, job.gpus, "");
      policy_.on_requeue(*this, j);
      break;
    }
  }
  request_schedule();
}

void Simulation::on_finish(JobIndex j) {
  HEADROOM_ASSERT(state_[j] == JobState::Running, "finish of a job that is not running");
  const models::Job& job = workload_.jobs[j];
  if (evict_event_[j] != kNoEvent) {
    engine_.cancel(evict_event_[j]);
    evict_event_[j] = kNoEvent;
  }
  release(j);
  const JobState s = terminal_state(job.trace_status);
  if (observer_ != nullptr) observer_->on_event(engine_.now(), AuditKind::Finish, j, static_cast<std::int32_t>(s), "");
  end_job(j, s, "");
  request_schedule();
}

void Simulation::end_job(JobIndex j, JobState s, std::string_view reason) {
  (void)reason;
  state_[j] = s;
  end_[j] = engine_.now();
  ++ended_jobs_;
  if (options_.progress && (ended_jobs_ & 0x3fff) == 0) options_.progress(ended_jobs_, state_.size());
  policy_.on_end(*this, j);
  if (observer_ != nullptr) observer_->on_end(engine_.now(), j, s);
}

void Simulation::finish_at_horizon(Tick t, std::string_view reason) {
  for (JobIndex j = 0; j < state_.size(); ++j) {
    if (state_[j] != JobState::Pending && state_[j] != JobState::Running) continue;
    state_[j] = JobState::Unfinished;
    ++ended_jobs_;
    if (observer_ != nullptr) {
      observer_->on_event(t, AuditKind::Unfinished, j, 0, reason);
      observer_->on_end(t, j, JobState::Unfinished);
    }
  }
}

void Simulation::take_sample(Tick t) {
  if (observer_ == nullptr) return;
  for (models::PoolId p = 0; p < cluster_.pool_count(); ++p) {
    const auto& pool = cluster_.spec().pools[p];
    // In GPUs: on a pool advertised in units (time-slicing, MIG), units in use rounded up to GPUs.
    const std::int64_t units = std::max(pool.units_per_gpu, 1);
    pool_free_[p] = static_cast<std::int32_t>(cluster_.pool_free_gpus(p) / units);
    pool_used_[p] = pool.nodes * pool.gpus_per_node - pool_free_[p];
  }
  models::Sample s;
  s.time = t;
  s.pool_used_gpus = pool_used_;
  s.pool_free_gpus = pool_free_;
  s.tenant_used_gpus = tenant_used_;
  s.tenant_pending_jobs = tenant_pending_jobs_;
  s.tenant_pending_gpus = tenant_pending_gpus_;
  s.running_jobs = static_cast<std::int32_t>(running_jobs_);
  s.pending_jobs = static_cast<std::int32_t>(pending_jobs_);
  observer_->on_sample(s);
}

// Time-slicing: the pods (with GPUs) on a node of G GPUs share them evenly; with P > G pods each
// gets G/P of a GPU (exact for 1-GPU nodes; the node's average otherwise; a pod holding several
// replicas gets no more than one share, as CUDA time-slices between processes). Called after a
// job starts on or leaves the node: brings every job there up to date at the old rate, then
// moves its finish to when its work is done at the new one.
void Simulation::reslice(models::NodeId node) {
  const models::Node& n = cluster_.node(node);
  const auto& pool = cluster_.spec().pools[n.pool];
  if (!pool.time_sliced) return;
  if (node_rate_.empty()) {
    node_rate_.assign(cluster_.nodes().size(), {1, 1});
    slice_left_.assign(state_.size(), 0);
    slice_since_.assign(state_.size(), -1);
  }
  const Tick now = engine_.now();
  const auto [num, den] = node_rate_[node];
  std::int64_t pods = 0;
  for (JobIndex k : node_jobs_[node])
    for (const auto& sl : placement_[k]) pods += sl.node == node && sl.gpus > 0 ? 1 : 0;
  const std::int64_t gpus = pool.gpus_per_node;
  const std::pair<std::int64_t, std::int64_t> rate =
      pods > gpus ? std::pair<std::int64_t, std::int64_t>{gpus, pods} : std::pair<std::int64_t, std::int64_t>{1, 1};
  node_rate_[node] = rate;
  for (JobIndex k : node_jobs_[node]) {
    if (slice_since_[k] < 0 || run_start_[k] == now) {  // just started: all its work is left
      slice_left_[k] = remaining_[k];
    } else {
      slice_left_[k] = std::max<Tick>(0, slice_left_[k] - (now - slice_since_[k]) * num / den);
    }
    slice_since_[k] = now;
    engine_.cancel(finish_event_[k]);
    const Tick at = now + (slice_left_[k] * rate.second + rate.first - 1) / rate.first;
    finish_event_[k] = engine_.schedule(at, EventClass::JobFinish, k);
  }
}

// Work (ms at full speed) a running job has done since it last started.
Tick Simulation::work_done(JobIndex j) const {
  const Tick now = engine_.now();
  if (slice_since_.empty() || slice_since_[j] < 0 || placement_[j].empty() ||
      !cluster_.spec().pools[cluster_.node(placement_[j].front().node).pool].time_sliced)
    return now - run_start_[j];
  const auto [num, den] = node_rate_[placement_[j].front().node];
  return remaining_[j] - std::max<Tick>(0, slice_left_[j] - (now - slice_since_[j]) * num / den);
}

}  // namespace headroom::scenarios
