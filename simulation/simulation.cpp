#include "simulation/simulation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "models/throughput.hpp"
#include "models/topology.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::simulation {

using models::AuditKind;
using models::JobIndex;
using models::JobState;
using sim::EventClass;

namespace {

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

// Milli-GPUs a placement holds: 1000 per whole GPU (unit) of its slices plus their shares.
std::int64_t placement_milli(const models::Placement& p) {
  std::int64_t m = 0;
  for (const auto& s : p) m += static_cast<std::int64_t>(s.gpus) * 1000 + s.gpu_milli;
  return m;
}

// Whole GPUs the samples report for milli-GPUs (a share counts as part of a GPU).
std::int32_t whole_gpus(std::int64_t milli) { return static_cast<std::int32_t>((milli + 999) / 1000); }

// GPU-ms of `t` ms on what a placement holds (a share its thousandths of one GPU); whole GPUs
// and the share are multiplied separately, so large gangs over long runs do not overflow.
std::int64_t held_gpu_ms(const models::Placement& p, Tick t) {
  const std::int64_t milli = placement_milli(p);
  return milli / 1000 * t + milli % 1000 * t / 1000;
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

Tick auto_sample_interval(const models::Workload& w, std::size_t pools) {
  if (w.jobs.empty()) return sim::kMinute;
  const Tick span = w.jobs.back().submit - w.jobs.front().submit;
  const std::int64_t most = max_samples(pools, w.tenants.size());
  auto fits = [&](Tick t) { return span / t <= std::min<std::int64_t>(2000, most - 1); };
  static constexpr std::array<Tick, 12> kNice = {
      sim::kMinute,   5 * sim::kMinute, 10 * sim::kMinute, 15 * sim::kMinute, 30 * sim::kMinute, sim::kHour,
      2 * sim::kHour, 3 * sim::kHour,   6 * sim::kHour,    12 * sim::kHour,   sim::kDay,         7 * sim::kDay};
  for (Tick t : kNice)
    if (fits(t)) return t;
  Tick t = kNice.back();
  while (!fits(t) && t < span) t *= 2;  // more tenants than 2,000 weekly samples hold
  return t;
}

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
  speed_.assign(n, models::kSpeedOne);
  placement_.resize(n);
  bound_.resize(n);
  bound_gpus_.assign(n, 0);
  bound_at_.resize(n);
  finish_event_.assign(n, kNoEvent);
  evict_event_.assign(n, kNoEvent);
  evict_plan_.resize(n);
  preemptions_.assign(n, 0);
  node_jobs_.resize(cluster_.nodes().size());
  for (const auto& pool : cluster_.spec().pools) time_sliced_ = time_sliced_ || pool.time_sliced;
  tenant_used_.assign(workload_.tenants.size(), 0);
  tenant_used_milli_.assign(workload_.tenants.size(), 0);
  tenant_pending_milli_.assign(workload_.tenants.size(), 0);
  tenant_pending_jobs_.assign(workload_.tenants.size(), 0);
  job_reason_.assign(n, 0);
  tenant_pending_gpus_.assign(workload_.tenants.size(), 0);
  pool_used_.assign(cluster_.pool_count(), 0);
  pool_free_.assign(cluster_.pool_count(), 0);
  pool_down_.assign(cluster_.pool_count(), 0);
  pool_frag_.assign(cluster_.pool_count(), 0);
  {
    std::int32_t widest = 0;
    for (const auto& pool : cluster_.spec().pools) widest = std::max(widest, pool.gpus_per_node);
    pending_need_.assign(static_cast<std::size_t>(widest) + 1, 0);
  }
  retries_.assign(n, 0);
  backoff_.assign(n, false);
  node_down_.assign(cluster_.nodes().size(), 0);
  drain_owner_.assign(cluster_.nodes().size(), -1);
  for (const auto& e : options_.failures.events)
    for (models::NodeId node : e.nodes) HEADROOM_ASSERT(node < cluster_.nodes().size(), "outage on a missing node");
  for (const auto& m : options_.failures.maintenance) {
    HEADROOM_ASSERT(m.pool < cluster_.pool_count(), "maintenance of a missing pool");
    for (models::NodeId node : m.nodes)
      HEADROOM_ASSERT(node < cluster_.nodes().size(), "maintenance of a missing node");
  }
  HEADROOM_ASSERT(
      options_.failures.node_names.empty() || options_.failures.node_names.size() == cluster_.nodes().size(),
      "failure stream names for another cluster");
  for (std::size_t i = 1; i < n; ++i)
    HEADROOM_ASSERT(workload_.jobs[i - 1].submit <= workload_.jobs[i].submit, "workload is not sorted by submit time");
  if (options_.sample_interval <= 0) options_.sample_interval = auto_sample_interval(workload_, cluster_.pool_count());
  HEADROOM_ASSERT(!options_.prime_time.enabled() || workload_.meta.unix_start >= 0,
                  "prime time needs the trace's calendar origin");
}

SimulationStats Simulation::run(const std::atomic<bool>* stop) {
  SimulationStats stats;
  stats.sample_interval = options_.sample_interval;
  const std::size_t n = workload_.jobs.size();
  if (n == 0) return stats;
  const Tick t0 = workload_.jobs.front().submit;
  first_submit_ = t0;
  stats.start = t0;
  engine_.schedule(t0, EventClass::JobSubmit, 0);
  engine_.schedule(t0, EventClass::Sample);
  start_failures(t0);

  if (options_.horizon == sim::kNever) {
    Tick longest = 0;
    for (const auto& job : workload_.jobs) longest = std::max(longest, job.runtime);
    stall_span_ = longest > std::numeric_limits<Tick>::max() / 20 ? std::numeric_limits<Tick>::max() / 2
                                                                  : std::max(30 * sim::kDay, 10 * longest);
  }
  stats.events = engine_.run(*this, options_.horizon, stop);
  if (stop != nullptr && stop->load()) {
    stats.cancelled = true;
    stats.end = engine_.now();
    stats.fingerprint = engine_.fingerprint().hex();
    return stats;
  }
  if (!stalled_.empty()) {
    finish_at_horizon(engine_.now(), stalled_);
    stats.end = engine_.now();
    stats.stalled = stalled_;
  } else if (ended_jobs_ < n && engine_.queue().empty()) {
    // Nothing left that could ever start the jobs still pending (e.g. a pod no node can hold
    // under a policy that keeps it queued, as Kubernetes does).
    HEADROOM_ASSERT(running_jobs_ == 0, "event queue ran dry with jobs still running");
    finish_at_horizon(engine_.now(), stranded_reason());
    stats.end = engine_.now();
  } else if (ended_jobs_ < n) {
    finish_at_horizon(options_.horizon, "horizon reached");
    stats.end = options_.horizon;
  } else {
    stats.end = std::max(last_end_, t0);
  }
  stats.fingerprint = engine_.fingerprint().hex();
  return stats;
}

namespace {
// A JobFinish event whose payload has this bit withdraws the job (models::Job::withdraw_at).
constexpr std::uint64_t kWithdrawBit = std::uint64_t{1} << 62;
// A JobSubmit event whose payload has this bit admits a job that prime time held.
constexpr std::uint64_t kHeldBit = std::uint64_t{1} << 61;
}  // namespace

void Simulation::handle(const sim::Event& event, sim::Engine& engine) {
  if ((++handled_ & 0xfff) == 0) {  // the progress line, also while no job ends
    if (options_.clock != nullptr) options_.clock->store(event.time - first_submit_, std::memory_order_relaxed);
    if (options_.progress) options_.progress(ended_jobs_, state_.size());
  }
  switch (event.cls) {
    case EventClass::JobSubmit: {
      if ((event.payload & kHeldBit) != 0) {
        admit(static_cast<JobIndex>(event.payload & ~kHeldBit));
        break;
      }
      const auto j = static_cast<JobIndex>(event.payload);
      if (j + 1u < workload_.jobs.size()) engine.schedule(workload_.jobs[j + 1].submit, EventClass::JobSubmit, j + 1);
      on_submit(j);
      break;
    }
    case EventClass::NodeChange: on_node_event(event.payload); break;
    case EventClass::JobFinish:
      if ((event.payload & kWithdrawBit) != 0) {
        on_withdraw(static_cast<JobIndex>(event.payload & ~kWithdrawBit));
      } else {
        on_finish(static_cast<JobIndex>(event.payload));
      }
      break;
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
      if (!unit_next_.empty() || !maint_next_.empty()) check_quiet();
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

bool Simulation::permitted(JobIndex j) const {
  const models::Job& job = workload_.jobs[j];
  const auto& access = options_.queue_access;
  if (job.tenant >= access.size() || access[job.tenant].empty()) return true;
  return job.queue < access[job.tenant].size() && access[job.tenant][job.queue];
}

void Simulation::on_submit(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  if (options_.prime_time.holds(job.walltime) && permitted(j)) {
    const Tick at = options_.prime_time.release(engine_.now(), workload_.meta.unix_start);
    if (at > engine_.now()) {
      engine_.record(0x5052494d00000000ull ^ j);
      engine_.schedule(at, EventClass::JobSubmit, kHeldBit | j);
      return;
    }
  }
  admit(j);
}

void Simulation::admit(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  ++submitted_;
  last_admit_ = engine_.now();
  ++progress_;
  if (!permitted(j)) {
    // The permission drill: refused by the platform before any scheduler sees the job.
    ++jobs_denied_;
    const policies::Policy::Denial denial = policy_.deny(workload_, job);
    const std::string& why = denial.reason;
    engine_.record(0x44454e5900000000ull ^ j);
    if (observer_ != nullptr) {
      observer_->on_event(engine_.now(), AuditKind::Submit, j, job.gpus, "");
      observer_->on_event(engine_.now(), AuditKind::Reject, j, models::kRejectPermission, why);
    }
    end_job(j, JobState::Rejected, why, false);
    return;
  }
  count_pending(job, 1);
  if (job.withdraw_at != sim::kNever)
    engine_.schedule(std::max(job.withdraw_at, engine_.now()), EventClass::JobFinish, kWithdrawBit | j);
  if (observer_ != nullptr) observer_->on_event(engine_.now(), AuditKind::Submit, j, job.gpus, "");
  policy_.on_submit(*this, j);
  request_schedule();
}

void Simulation::leave_pending(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  HEADROOM_ASSERT(state_[j] == JobState::Pending && !backoff_[j], "job " + std::to_string(j) + " is not pending");
  clear_pending_reason(j);
  count_pending(job, -1);
  if (!drills_.empty()) check_recovery();
}

std::string Simulation::start(JobIndex j, models::Placement placement, std::string_view reason) {
  if (!in_schedule_) return "start outside a scheduling pass";
  if (j >= state_.size()) return "no such job";
  if (state_[j] != JobState::Pending) return "job " + std::to_string(j) + " is not pending";
  if (backoff_[j]) return "job " + std::to_string(j) + " waits for its retry back-off";
  const models::Job& job = workload_.jobs[j];
  const bool share = placement.size() == 1 && placement[0].gpu_milli > 0;
  if (share) {
    // A gpu-memory pod's share is its fraction on the node, which the policy computes.
    if ((job.gpu_memory_mib > 0 ? job.gpu_milli != 0 : job.gpu_milli != placement[0].gpu_milli) || job.gpus > 1)
      return "placement holds a share of " + std::to_string(placement[0].gpu_milli) + " milli-GPUs, job requests " +
             (job.gpus > 1 || job.gpu_milli == 0 ? std::to_string(job.gpus) + " GPUs"
                                                 : std::to_string(job.gpu_milli) + " milli-GPUs");
  } else if (placement_gpus(placement) + bound_gpus_[j] != job.gpus) {
    return "placement has " + std::to_string(placement_gpus(placement) + bound_gpus_[j]) + " GPUs, job requests " +
           std::to_string(job.gpus);
  }
  if (placement.empty()) return "empty placement";
  if (share && !bound_[j].empty()) return "a GPU share cannot join bound pods";
  if (std::string why = cluster_.try_allocate(placement); !why.empty()) return why;

  leave_pending(j);
  const std::size_t already = bound_[j].size();
  const std::int64_t new_milli = placement_milli(placement);  // the bound pods are counted already
  if (already > 0) {
    // The bound pods join the placement; the time they waited idle for this start is counted.
    held_idle_gpu_ms_ += bound_idle_gpu_ms(j, engine_.now());
    placement.insert(placement.begin(), bound_[j].begin(), bound_[j].end());
    bound_[j].clear();
    bound_gpus_[j] = 0;
    bound_at_[j].clear();
  }
  ++progress_;
  state_[j] = JobState::Running;
  if (start_[j] < 0) start_[j] = engine_.now();
  run_start_[j] = engine_.now();
  placement_[j] = std::move(placement);
  const models::Placement& held = placement_[j];
  for (std::size_t i = already; i < held.size(); ++i) node_jobs_[held[i].node].push_back(j);
  ++running_jobs_;
  tenant_used_milli_[job.tenant] += new_milli;
  tenant_used_[job.tenant] = whole_gpus(tenant_used_milli_[job.tenant]);
  peak_used_gpus_ = std::max(peak_used_gpus_, cluster_.used_gpus());
  std::int64_t speed = models::kSpeedOne;
  if (options_.runtime) speed = options_.runtime->placement_speed(j, held, cluster_);
  if (options_.placement_speed) {
    const double factor = options_.placement_speed(job, held);
    HEADROOM_ASSERT(std::isfinite(factor) && factor > 0, "placement_speed must return a finite factor > 0");
    speed = models::combine_speeds(speed, models::speed_to_ppm(factor));
  }
  speed_[j] = speed;
  if (speed != models::kSpeedOne)
    engine_.record(0x5350454400000000ull ^ (static_cast<std::uint64_t>(j) << 24) ^ static_cast<std::uint64_t>(speed));
  finish_event_[j] =
      engine_.schedule(engine_.now() + models::scaled_duration(remaining_[j], speed), EventClass::JobFinish, j);
  if (!dormant_units_.empty() || !dormant_maint_.empty()) resume_failures();
  if (time_sliced_)
    for (const auto& s : held) reslice(s.node);

  engine_.record(0x5354415254000000ull ^ j);
  for (const auto& s : held) {
    engine_.record((static_cast<std::uint64_t>(s.node) << 32) | static_cast<std::uint32_t>(s.gpus));
    if (s.gpu_milli > 0) engine_.record((std::uint64_t{0x5348} << 48) | (std::uint64_t(s.device) << 16) | s.gpu_milli);
  }
  if (observer_ != nullptr) {
    observer_->on_event(engine_.now(), AuditKind::Start, j, job.gpus, reason);
    observer_->on_start(engine_.now(), j, held);
  }
  return {};
}

std::string Simulation::bind(JobIndex j, const models::Slice& slice, std::string_view reason) {
  if (!in_schedule_) return "bind outside a scheduling pass";
  if (j >= state_.size()) return "no such job";
  if (state_[j] != JobState::Pending) return "job " + std::to_string(j) + " is not pending";
  if (backoff_[j]) return "job " + std::to_string(j) + " waits for its retry back-off";
  const models::Job& job = workload_.jobs[j];
  if (slice.gpu_milli > 0 || slice.gpus <= 0) return "a bound pod holds whole GPUs";
  if (bound_gpus_[j] + slice.gpus >= job.gpus)
    return "binding " + std::to_string(slice.gpus) + " more GPUs would hold the whole job: start it instead";
  if (std::string why = cluster_.try_allocate({slice}); !why.empty()) return why;
  ++progress_;
  bound_[j].push_back(slice);
  bound_gpus_[j] += slice.gpus;
  bound_at_[j].push_back(engine_.now());
  node_jobs_[slice.node].push_back(j);
  tenant_used_milli_[job.tenant] += std::int64_t{slice.gpus} * 1000;
  tenant_used_[job.tenant] = whole_gpus(tenant_used_milli_[job.tenant]);
  peak_used_gpus_ = std::max(peak_used_gpus_, cluster_.used_gpus());
  engine_.record(0x42494e4400000000ull ^ (static_cast<std::uint64_t>(j) << 8) ^ slice.node);
  if (observer_ != nullptr) {
    // One Waiting event when the job's first pod binds, in words that do not change from pod to
    // pod: a reason per pod (its index, node and the GPUs held so far) made every bind a new
    // string in the result's reason table, and a PodGroup bound and unbound at every cycle (CEA
    // Curie's 4,752-pod jobs under coscheduling) grew it by millions (5.5 GB). The GPUs held are
    // on_bound's, and the pods' nodes the placement's once the job starts.
    if (bound_[j].size() == 1)
      observer_->on_event(engine_.now(), AuditKind::Waiting, j, static_cast<std::int32_t>(models::PendingCode::Gang),
                          std::string(reason) +
                              " (its pods bind one by one and hold their GPUs while the job waits "
                              "for its other pods)");
    observer_->on_bound(engine_.now(), j, bound_gpus_[j]);
  }
  return {};
}

std::string Simulation::unbind(JobIndex j, std::string_view reason) {
  if (!in_schedule_) return "unbind outside a scheduling pass";
  if (j >= state_.size() || state_[j] != JobState::Pending) return "job is not pending";
  release_bound(j, reason, false);
  return {};
}

void Simulation::release_bound(JobIndex j, std::string_view reason, bool notify_policy) {
  if (bound_[j].empty()) return;
  const models::Job& job = workload_.jobs[j];
  ++progress_;
  cluster_.release(bound_[j]);
  held_idle_gpu_ms_ += bound_idle_gpu_ms(j, engine_.now());
  for (const auto& s : bound_[j]) {
    auto& v = node_jobs_[s.node];
    v.erase(std::find(v.begin(), v.end(), j));
  }
  tenant_used_milli_[job.tenant] -= placement_milli(bound_[j]);
  tenant_used_[job.tenant] = whole_gpus(tenant_used_milli_[job.tenant]);
  const models::Placement freed = std::move(bound_[j]);
  bound_[j].clear();
  bound_gpus_[j] = 0;
  bound_at_[j].clear();
  engine_.record(0x554e42494e440000ull ^ j);
  if (observer_ != nullptr) {
    observer_->on_event(engine_.now(), AuditKind::Waiting, j, static_cast<std::int32_t>(models::PendingCode::Gang),
                        "bound pods deleted: " + std::string(reason));
    observer_->on_bound(engine_.now(), j, 0);
  }
  if (notify_policy) policy_.on_release(*this, j);
  for (const auto& s : freed) check_drained(s.node);
  if (notify_policy) request_schedule();
}

std::int64_t Simulation::bound_idle_gpu_ms(JobIndex j, Tick until) const {
  std::int64_t ms = 0;
  for (std::size_t i = 0; i < bound_[j].size(); ++i)
    ms += held_gpu_ms({bound_[j][i]}, std::max<Tick>(0, until - bound_at_[j][i]));
  return ms;
}

// Pending jobs with pods bound on `node` lose them (the node failed or is drained).
void Simulation::unbind_on(models::NodeId node, std::string_view reason) {
  const std::vector<JobIndex> jobs = node_jobs_[node];
  for (JobIndex j : jobs)
    if (state_[j] == JobState::Pending && !bound_[j].empty()) release_bound(j, reason, true);
}

void Simulation::reject(JobIndex j, std::string_view reason) {
  HEADROOM_ASSERT(j < state_.size() && state_[j] == JobState::Pending && !backoff_[j],
                  "reject of a job that is not pending");
  release_bound(j, "job rejected", true);
  leave_pending(j);
  ++progress_;
  engine_.record(0x52454a4543540000ull ^ j);
  if (observer_ != nullptr) observer_->on_event(engine_.now(), AuditKind::Reject, j, models::kRejectByPolicy, reason);
  end_job(j, JobState::Rejected, reason);
}

void Simulation::pending_reason(JobIndex j, std::string_view reason) {
  if (j >= state_.size() || state_[j] != JobState::Pending || backoff_[j]) return;
  // A policy usually repeats its last reason: that one is checked before the index.
  if (last_reason_id_ == 0 || reason != last_reason_) {
    auto it = reason_ids_.find(reason);
    if (it == reason_ids_.end()) {
      it = reason_ids_.emplace(std::string(reason), static_cast<std::uint32_t>(reason_codes_.size())).first;
      reason_codes_.push_back(models::classify_pending_reason(reason));
    }
    last_reason_.assign(reason);
    last_reason_id_ = it->second + 1;
  }
  const std::uint32_t id = last_reason_id_;
  if (job_reason_[j] == id) return;  // said before: only changes are recorded
  clear_pending_reason(j);
  job_reason_[j] = id;
  const models::PendingCode code = reason_codes_[id - 1];
  ++pending_by_code_[static_cast<std::size_t>(code)];
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::Waiting, j, static_cast<std::int32_t>(code), reason);
}

void Simulation::clear_pending_reason(JobIndex j) {
  if (job_reason_[j] == 0) return;
  --pending_by_code_[static_cast<std::size_t>(reason_codes_[job_reason_[j] - 1])];
  job_reason_[j] = 0;
}

void Simulation::release(JobIndex j) {
  const models::Job& job = workload_.jobs[j];
  ++progress_;
  cluster_.release(placement_[j]);
  for (const auto& s : placement_[j]) {
    auto& v = node_jobs_[s.node];
    v.erase(std::find(v.begin(), v.end(), j));
    if (time_sliced_) reslice(s.node);
  }
  --running_jobs_;
  tenant_used_milli_[job.tenant] -= placement_milli(placement_[j]);
  tenant_used_[job.tenant] = whole_gpus(tenant_used_milli_[job.tenant]);
  run_start_[j] = -1;
  finish_event_[j] = kNoEvent;
  policy_.on_release(*this, j);
  for (const auto& s : placement_[j]) check_drained(s.node);
}

std::string Simulation::preempt(JobIndex j, policies::PreemptMode mode, Tick grace, JobIndex by,
                                std::string_view reason, Tick overhead) {
  if (!in_schedule_) return "preempt outside a scheduling pass";
  if (j >= state_.size() || state_[j] != JobState::Running) return "job is not running";
  if (evict_event_[j] != kNoEvent) return "job is already terminating";
  if (grace < 0 || overhead < 0) return "negative grace period or overhead";
  evict_plan_[j] = EvictPlan{mode, overhead};
  ++preemptions_[j];
  ++stall_preemptions_;
  check_stall();
  engine_.record(0x5052454d50540000ull ^ (static_cast<std::uint64_t>(j) << 8) ^ static_cast<std::uint64_t>(mode));
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::Preempt, j, by == models::kNoJob ? -1 : static_cast<std::int32_t>(by),
                        reason);
  evict_event_[j] = engine_.schedule(engine_.now() + grace, EventClass::JobEvict, j);
  return {};
}

std::int64_t Simulation::pool_speed(JobIndex job, models::PoolId pool) const {
  return options_.runtime ? options_.runtime->pool_speed(job, pool) : models::kSpeedOne;
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
  lost_gpu_ms_ += held_gpu_ms(placement_[j], engine_.now() - run_start_[j]);
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
  const std::int64_t ran_gpu_ms = held_gpu_ms(placement_[j], ran);
  const std::int64_t overhead_gpu_ms = held_gpu_ms(placement_[j], plan.overhead);
  release(j);
  switch (plan.mode) {
    case policies::PreemptMode::Cancel:
      lost_gpu_ms_ += ran_gpu_ms;
      if (observer_ != nullptr)
        observer_->on_lost_work(engine_.now(), AuditKind::Finish, j, static_cast<std::int32_t>(JobState::Cancelled),
                                "preempted", ran_gpu_ms);
      end_job(j, JobState::Cancelled, "preempted");
      break;
    case policies::PreemptMode::Requeue:
    case policies::PreemptMode::Checkpoint: {
      std::int64_t lost = 0;
      if (plan.mode == policies::PreemptMode::Requeue) {
        lost = ran_gpu_ms;
        remaining_[j] = job.runtime;
      } else {
        remaining_[j] = remaining_[j] - done + plan.overhead;
        lost = overhead_gpu_ms;
      }
      lost_gpu_ms_ += lost;
      state_[j] = JobState::Pending;
      count_pending(job, 1);
      if (observer_ != nullptr) observer_->on_lost_work(engine_.now(), AuditKind::Requeue, j, job.gpus, "", lost);
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

void Simulation::end_job(JobIndex j, JobState s, std::string_view reason, bool notify_policy) {
  (void)reason;
  state_[j] = s;
  end_[j] = engine_.now();
  last_end_ = std::max(last_end_, engine_.now());
  stall_preemptions_ = 0;
  ++ended_jobs_;
  if (options_.progress && (ended_jobs_ & 0x3ff) == 0) options_.progress(ended_jobs_, state_.size());
  if (notify_policy) policy_.on_end(*this, j);
  if (observer_ != nullptr) observer_->on_end(engine_.now(), j, s);
  if (ended_jobs_ == state_.size()) {
    // Nothing left to fail: the failure and maintenance processes would only stretch the run.
    for (sim::EventId id : node_events_) engine_.cancel(id);
    node_events_.clear();
  }
}

void Simulation::check_stall() {
  if (stall_span_ <= 0 || !stalled_.empty() || submitted_ < workload_.jobs.size()) return;
  const Tick since = std::max(last_end_, last_admit_);
  if (engine_.now() - since <= stall_span_) return;
  stalled_ = std::string(models::kRunStopped) + "a preemption livelock: no job ended in " +
             std::to_string((engine_.now() - since) / sim::kDay) +
             " days of simulated time while the policy preempted running jobs " +
             sim::thousands(static_cast<std::int64_t>(stall_preemptions_)) +
             " times (each run cut short before it could end); set horizon: to run on";
  engine_.halt();
}

// Why the jobs still pending when nothing is left to happen never start: when some of them hold
// GPUs through pods bound while their other pods wait (no gang scheduling), that deadlock.
std::string Simulation::stranded_reason() const {
  std::int64_t jobs = 0, gpus = 0;
  for (JobIndex j = 0; j < state_.size(); ++j) {
    if (state_[j] != JobState::Pending || bound_[j].empty()) continue;
    ++jobs;
    gpus += bound_gpus_[j];
  }
  std::string why = "never scheduled: no further event could start it";
  if (jobs > 0)
    why += " (deadlock: " + std::to_string(jobs) + (jobs == 1 ? " job holds " : " jobs hold ") + std::to_string(gpus) +
           " GPUs through pods bound while their other pods wait; no gang scheduling)";
  return why;
}

void Simulation::finish_at_horizon(Tick t, std::string_view reason) {
  for (JobIndex j = 0; j < state_.size(); ++j) {
    if (state_[j] != JobState::Pending && state_[j] != JobState::Running) continue;
    held_idle_gpu_ms_ += bound_idle_gpu_ms(j, t);
    state_[j] = JobState::Unfinished;
    ++ended_jobs_;
    if (observer_ != nullptr) {
      observer_->on_event(t, AuditKind::Unfinished, j, 0, reason);
      observer_->on_end(t, j, JobState::Unfinished);
    }
  }
}

// The pending counts the samples report: +1 when a job becomes pending, -1 when it leaves.
void Simulation::count_pending(const models::Job& job, int sign) {
  pending_jobs_ = sign > 0 ? pending_jobs_ + 1 : pending_jobs_ - 1;
  tenant_pending_jobs_[job.tenant] += sign;
  tenant_pending_milli_[job.tenant] += sign * models::gpu_demand_milli(job);
  tenant_pending_gpus_[job.tenant] = whole_gpus(tenant_pending_milli_[job.tenant]);
  pending_need_[need_of(job)] += sign;
}

std::size_t Simulation::need_of(const models::Job& job) const {
  if (job.gpus <= 0) return job.gpu_milli > 0 || job.gpu_memory_mib > 0 ? 1 : 0;  // a share fits any free GPU
  const std::int32_t per_node = job.gpus_per_node > 0 ? std::min(job.gpus_per_node, job.gpus) : job.gpus;
  return std::min(static_cast<std::size_t>(per_node), pending_need_.size() - 1);
}

void Simulation::take_sample(Tick t) {
  if (observer_ == nullptr) return;
  // Fragmentation: free GPUs on nodes with fewer free GPUs than the smallest per-node need of any
  // pending job (capped at the pool's node size: a wider job takes whole nodes), so no waiting
  // job could use them. Nothing is fragmented while no job needing a GPU waits.
  std::size_t smallest = 0;
  for (std::size_t k = 1; k < pending_need_.size(); ++k) {
    if (pending_need_[k] > 0) {
      smallest = k;
      break;
    }
  }
  for (models::PoolId p = 0; p < cluster_.pool_count(); ++p) {
    const auto& pool = cluster_.spec().pools[p];
    // In GPUs: on a pool advertised in units (time-slicing, MIG), units in use rounded up to GPUs.
    // A node advertising `node_units` units for its g GPUs (units_per_node: GPUs cut differently)
    // counts f units as f x g / node_units GPUs.
    const std::int64_t units = std::max(pool.units_per_gpu, 1);
    const std::int64_t node_units = pool.units_per_node > 0 ? pool.units_per_node : pool.gpus_per_node * units;
    const std::int64_t per = pool.units_per_node > 0 ? pool.gpus_per_node : 1;  // GPUs per `div` units
    const std::int64_t div = pool.units_per_node > 0 ? node_units : units;
    pool_free_[p] = static_cast<std::int32_t>(cluster_.pool_free_gpus(p) * per / div);
    pool_used_[p] = static_cast<std::int32_t>((cluster_.pool_used_gpus(p) * per + div - 1) / div);
    pool_down_[p] = pool.nodes * pool.gpus_per_node - pool_used_[p] - pool_free_[p];
    std::int64_t frag = 0;
    const std::int64_t need = std::min<std::int64_t>(static_cast<std::int64_t>(smallest), pool.gpus_per_node);
    // Free units f on a node are f x per / div whole GPUs; fragmented while that is in [1, need).
    for (std::int64_t f = 1; f <= node_units && f * per / div < need; ++f)
      if (const std::int64_t whole = f * per / div; whole >= 1)
        frag += whole * static_cast<std::int64_t>(cluster_.nodes_with_free(p, static_cast<std::int32_t>(f)).size());
    pool_frag_[p] = static_cast<std::int32_t>(frag);
  }
  models::Sample s;
  s.time = t;
  s.pool_used_gpus = pool_used_;
  s.pool_free_gpus = pool_free_;
  s.pool_down_gpus = pool_down_;
  s.pool_frag_gpus = pool_frag_;
  s.tenant_used_gpus = tenant_used_;
  s.tenant_pending_jobs = tenant_pending_jobs_;
  s.tenant_pending_gpus = tenant_pending_gpus_;
  // Pending jobs whose policy has given no reason count as PendingCode::None.
  std::int32_t explained = 0;
  for (std::size_t c = 1; c < pending_sample_.size(); ++c) explained += pending_sample_[c] = pending_by_code_[c];
  pending_sample_[0] = static_cast<std::int32_t>(pending_jobs_) - explained;
  s.pending_by_reason = pending_sample_;
  s.running_jobs = static_cast<std::int32_t>(running_jobs_);
  s.pending_jobs = static_cast<std::int32_t>(pending_jobs_);
  observer_->on_sample(s);
}

// ---- Failures and maintenance (the failure drill; models/failures.hpp, docs/drills.md) ----
//
// A node is up (placeable) when nothing holds it down and no maintenance drains it. Holds are
// counted, so overlapping outages (a random failure inside a rack drill) end when the last one
// does. A node going down kills the jobs with a slice on it: each loses the work since its last
// checkpoint and is retried after a back-off (pending again, the policy told through on_requeue)
// while it has retries left, else it ends Failed. Node events sort before job events at the same
// tick, so a node failing when a job would end kills it.

namespace {
constexpr std::uint64_t kNodeEventShift = 56;
constexpr std::uint64_t kLow32 = 0xffffffffull;
}  // namespace

sim::EventId Simulation::schedule_node_event(Tick t, NodeEvent type, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t payload = (static_cast<std::uint64_t>(type) << kNodeEventShift) | (a << 32) | (b & kLow32);
  node_events_.push_back(engine_.schedule(std::max(t, engine_.now()), EventClass::NodeChange, payload));
  if (type == NodeEvent::UnitFail) unit_next_[a] = node_events_.back();
  if (type == NodeEvent::MaintCycle) maint_next_[a] = node_events_.back();
  return node_events_.back();
}

void Simulation::start_failures(Tick t0) {
  const models::FailureSpec& f = options_.failures;
  for (std::size_t i = 0; i < f.random.size(); ++i) {
    const models::RandomFailures& r = f.random[i];
    auto in_pools = [&](models::NodeId node) {
      return r.pools.empty() || std::find(r.pools.begin(), r.pools.end(), cluster_.node(node).pool) != r.pools.end();
    };
    const std::string prefix = "failures/" + std::to_string(i) + "/";
    if (r.per_rack) {
      // Switch units (domain: switch) have streams of their own kind, so racks keep theirs.
      const std::string kind = r.switches.empty() ? "rack" : "switch";
      for (const models::Rack& rack : r.switches.empty() ? f.racks : r.switches) {
        if (rack.nodes.empty() || !in_pools(rack.nodes.front())) continue;
        units_.push_back({i, rack.nodes, kind + " failure (" + rack.name + ")",
                          sim::RngStream(options_.seed, prefix + kind + "/" + rack.name)});
      }
    } else {
      for (models::NodeId node = 0; node < cluster_.nodes().size(); ++node) {
        if (!in_pools(node)) continue;
        const std::string name =
            f.node_names.empty() ? models::node_name(cluster_.spec(), node) : f.node_names.at(node);
        units_.push_back({i, {node}, "node failure", sim::RngStream(options_.seed, prefix + "node/" + name)});
      }
    }
  }
  unit_next_.assign(units_.size(), kNoEvent);
  maint_next_.assign(f.maintenance.size(), kNoEvent);
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const Tick ttf = models::time_to_failure(f.random[units_[u].spec], units_[u].rng);
    if (ttf < sim::kNever - t0) schedule_node_event(t0 + ttf, NodeEvent::UnitFail, u);
  }
  drills_.resize(f.events.size());
  for (std::size_t d = 0; d < f.events.size(); ++d) schedule_node_event(t0 + f.events[d].at, NodeEvent::DrillStart, d);
  maint_.resize(f.maintenance.size());
  for (std::size_t m = 0; m < f.maintenance.size(); ++m)
    schedule_node_event(t0 + f.maintenance[m].start, NodeEvent::MaintCycle, m);
}

// Random failures (and maintenance cycles) go on while jobs run, arrive or wait for a retry, so
// they are the same under every policy. When none do, the pending jobs wait for capacity: while
// some node is down, failures go on for up to the longest repair time of the idle spell, since a
// repair may let a job start; after that, or at once when every node is up (the policy has then
// seen the whole cluster), more failures could only stretch the run: the failing unit (or the
// maintenance window) goes dormant. Dormant ones resume with a fresh draw from their own stream
// when a job starts again.
bool Simulation::failures_active() {
  if (ended_jobs_ >= state_.size()) return false;
  if (running_jobs_ > 0 || submitted_ < state_.size() || backoff_jobs_ > 0) {
    idle_since_ = -1;
    return true;
  }
  if (idle_since_ < 0) idle_since_ = engine_.now();
  if (cluster_.up_gpus() == cluster_.total_gpus()) return false;
  Tick grace = 0;
  for (const auto& r : options_.failures.random) grace = std::max(grace, r.repair);
  return engine_.now() - idle_since_ <= grace;
}

// The cluster is idle with every node up: the pending jobs have seen the whole cluster, so the
// failure units and maintenance windows go dormant now rather than at their next (possibly far)
// event, which would stretch the run.
void Simulation::check_quiet() {
  if (running_jobs_ > 0 || submitted_ < state_.size() || backoff_jobs_ > 0 || ended_jobs_ >= state_.size()) return;
  if (cluster_.up_gpus() != cluster_.total_gpus()) return;
  for (std::size_t u = 0; u < unit_next_.size(); ++u)
    if (unit_next_[u] != kNoEvent && engine_.cancel(unit_next_[u])) {
      unit_next_[u] = kNoEvent;
      dormant_units_.push_back(u);
    }
  for (std::size_t m = 0; m < maint_next_.size(); ++m)
    if (maint_next_[m] != kNoEvent && maint_[m].batch < 0 && engine_.cancel(maint_next_[m])) {
      maint_next_[m] = kNoEvent;
      dormant_maint_.push_back(m);
    }
}

void Simulation::resume_failures() {
  const Tick now = engine_.now();
  for (std::size_t u : dormant_units_) {
    const Tick ttf = models::time_to_failure(options_.failures.random[units_[u].spec], units_[u].rng);
    if (ttf < sim::kNever - now) schedule_node_event(now + ttf, NodeEvent::UnitFail, u);
  }
  for (std::size_t m : dormant_maint_) schedule_node_event(now, NodeEvent::MaintCycle, m);
  dormant_units_.clear();
  dormant_maint_.clear();
}

void Simulation::on_node_event(std::uint64_t payload) {
  const auto type = static_cast<NodeEvent>(payload >> kNodeEventShift);
  const std::uint64_t a = (payload >> 32) & ((1ull << (kNodeEventShift - 32)) - 1);
  const std::uint64_t b = payload & kLow32;
  const models::FailureSpec& f = options_.failures;
  switch (type) {
    case NodeEvent::UnitFail: {
      unit_next_[a] = kNoEvent;
      if (!failures_active()) {
        dormant_units_.push_back(a);
        break;
      }
      FailureUnit& unit = units_[a];
      for (models::NodeId node : unit.nodes) hold_down(node, unit.reason, true);
      schedule_node_event(engine_.now() + f.random[unit.spec].repair, NodeEvent::UnitRepair, a);
      break;
    }
    case NodeEvent::UnitRepair: {
      FailureUnit& unit = units_[a];
      for (models::NodeId node : unit.nodes) release_hold(node, "repaired");
      const Tick ttf = models::time_to_failure(f.random[unit.spec], unit.rng);
      if (ttf < sim::kNever - engine_.now()) schedule_node_event(engine_.now() + ttf, NodeEvent::UnitFail, a);
      break;
    }
    case NodeEvent::DrillStart: {
      const models::FailureEvent& e = f.events[a];
      DrillState& d = drills_[a];
      d.baseline = waiting();
      d.open = true;
      if (observer_ != nullptr)
        observer_->on_event(engine_.now(), AuditKind::Drill, models::kNoJob, static_cast<std::int32_t>(a),
                            "outage: " + e.what + " for " + sim::format_duration(e.duration));
      for (models::NodeId node : e.nodes) hold_down(node, "outage: " + e.what, true);
      schedule_node_event(engine_.now() + e.duration, NodeEvent::DrillEnd, a);
      break;
    }
    case NodeEvent::DrillEnd: {
      for (models::NodeId node : f.events[a].nodes) release_hold(node, "outage over");
      drills_[a].over = true;
      check_recovery();
      break;
    }
    case NodeEvent::MaintCycle: {
      MaintState& ms = maint_[a];
      maint_next_[a] = kNoEvent;
      if (ms.batch >= 0) break;  // a cycle still going schedules the next one
      if (!failures_active()) {
        dormant_maint_.push_back(a);
        break;
      }
      ms.cycle_start = engine_.now();
      ms.batch = 0;
      start_maintenance_batch(a);
      break;
    }
    case NodeEvent::MaintDeadline: {
      if (maint_[a].batch != static_cast<std::int32_t>(b)) break;
      // Drain timeout: what still runs on the batch's nodes is killed; the nodes then go down.
      const models::Maintenance& m = f.maintenance[a];
      const std::int64_t count = maint_node_count(m);
      for (std::int64_t k = 0; k < count; ++k) {
        const models::NodeId node = maint_node(m, k);
        if (drain_owner_[node] != static_cast<std::int32_t>(a)) continue;
        const std::vector<JobIndex> jobs = node_jobs_[node];
        for (JobIndex j : jobs)
          if (state_[j] == JobState::Running) kill_job(j, node, "maintenance drain timeout");
        unbind_on(node, "maintenance drain timeout");
      }
      break;
    }
    case NodeEvent::MaintNodeUp: {
      const auto node = static_cast<models::NodeId>(b);
      release_hold(node, "maintenance done");
      MaintState& ms = maint_[a];
      if (--ms.left > 0) break;
      ++ms.batch;
      start_maintenance_batch(a);
      break;
    }
    case NodeEvent::RetryReady: on_retry(static_cast<JobIndex>(b)); break;
    default: throw sim::InternalError("unexpected node event");
  }
}

std::int64_t Simulation::maint_node_count(const models::Maintenance& m) const {
  return m.nodes.empty() ? static_cast<std::int64_t>(cluster_.pool_node_count(m.pool))
                         : static_cast<std::int64_t>(m.nodes.size());
}

models::NodeId Simulation::maint_node(const models::Maintenance& m, std::int64_t k) const {
  return m.nodes.empty() ? cluster_.pool_first_node(m.pool) + static_cast<models::NodeId>(k)
                         : m.nodes[static_cast<std::size_t>(k)];
}

void Simulation::start_maintenance_batch(std::size_t mi) {
  const models::Maintenance& m = options_.failures.maintenance[mi];
  MaintState& ms = maint_[mi];
  const std::int64_t pool_nodes = maint_node_count(m);
  const std::int64_t size = m.batch > 0 ? m.batch : pool_nodes;
  const std::int64_t begin = static_cast<std::int64_t>(ms.batch) * size;
  if (begin >= pool_nodes) {
    // Cycle done; the next one starts `every` after this one started (or now, if that is past).
    ms.batch = -1;
    if (m.every > 0) schedule_node_event(ms.cycle_start + m.every, NodeEvent::MaintCycle, mi);
    return;
  }
  std::vector<models::NodeId> nodes;
  for (std::int64_t k = begin; k < std::min(begin + size, pool_nodes); ++k) {
    const models::NodeId node = maint_node(m, k);
    if (drain_owner_[node] >= 0) continue;  // already drained by another window
    nodes.push_back(node);
  }
  ms.left = static_cast<std::int32_t>(nodes.size());
  if (nodes.empty()) {
    ++ms.batch;
    start_maintenance_batch(mi);
    return;
  }
  if (m.drain && m.drain_timeout >= 0)
    schedule_node_event(engine_.now() + m.drain_timeout, NodeEvent::MaintDeadline, mi,
                        static_cast<std::uint64_t>(ms.batch));
  for (models::NodeId node : nodes) {
    drain_owner_[node] = static_cast<std::int32_t>(mi);
    cluster_.set_up(node, false);
    engine_.record(0x4452414e00000000ull ^ node);
    if (observer_ != nullptr)
      observer_->on_event(engine_.now(), AuditKind::Drain, models::kNoJob, static_cast<std::int32_t>(node),
                          m.drain ? "maintenance drain" : "maintenance (no drain)");
  }
  for (models::NodeId node : nodes) {
    if (!m.drain) {
      const std::vector<JobIndex> jobs = node_jobs_[node];
      for (JobIndex j : jobs)
        if (state_[j] == JobState::Running) kill_job(j, node, "maintenance (no drain)");
    }
    // A drain evicts pods that are not running work (kubectl drain): bound pods of a waiting job.
    unbind_on(node, m.drain ? "maintenance drain" : "maintenance (no drain)");
    check_drained(node);
  }
}

void Simulation::check_drained(models::NodeId node) {
  if (drain_owner_[node] >= 0 && node_jobs_[node].empty()) drained(node);
}

void Simulation::drained(models::NodeId node) {
  const auto mi = static_cast<std::size_t>(drain_owner_[node]);
  drain_owner_[node] = -1;
  hold_down(node, "maintenance", false);
  schedule_node_event(engine_.now() + options_.failures.maintenance[mi].duration, NodeEvent::MaintNodeUp, mi, node);
}

void Simulation::hold_down(models::NodeId node, std::string_view reason, bool kill) {
  if (node_down_[node]++ == 0) {
    ++down_nodes_;
    engine_.record(0x444f574e00000000ull ^ node);
    if (observer_ != nullptr)
      observer_->on_event(engine_.now(), AuditKind::NodeDown, models::kNoJob, static_cast<std::int32_t>(node), reason);
  }
  cluster_.set_up(node, false);
  if (!kill) return;
  const std::vector<JobIndex> jobs = node_jobs_[node];  // kill_job edits the list
  for (JobIndex j : jobs)
    if (state_[j] == JobState::Running) kill_job(j, node, reason);
  unbind_on(node, reason);
}

void Simulation::release_hold(models::NodeId node, std::string_view reason) {
  HEADROOM_ASSERT(node_down_[node] > 0, "node " + std::to_string(node) + " is not down");
  if (--node_down_[node] > 0) return;
  --down_nodes_;
  engine_.record(0x55500000000000ull ^ node);
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::NodeUp, models::kNoJob, static_cast<std::int32_t>(node), reason);
  if (drain_owner_[node] < 0) {
    // Not counted as progress: with nothing running, repairs alone must not keep a policy's
    // idle wake-ups (and so the failure processes) going forever.
    cluster_.set_up(node, true);
    request_schedule();
  }
}

void Simulation::kill_job(JobIndex j, models::NodeId node, std::string_view reason) {
  HEADROOM_ASSERT(state_[j] == JobState::Running, "kill of a job that is not running");
  const models::FailureSpec& f = options_.failures;
  if (evict_event_[j] != kNoEvent) {
    engine_.cancel(evict_event_[j]);  // the failure overtakes the preemption
    evict_event_[j] = kNoEvent;
  }
  engine_.cancel(finish_event_[j]);
  const Tick ran = engine_.now() - run_start_[j];
  // Checkpoints are taken by wall clock; what they keep is the work done by then.
  const Tick kept = models::checkpointed_work(ran, f.checkpoint_interval);
  remaining_[j] = std::max<Tick>(0, remaining_[j] - models::scaled_work(kept, speed_[j]));
  const bool retry = retries_[j] < f.retry_limit;
  Tick lost = ran - kept;
  if (retry) {
    remaining_[j] += f.restart_overhead;
    lost += f.restart_overhead;
  }
  const std::int64_t lost_gpu_ms = held_gpu_ms(placement_[j], lost);
  failure_lost_gpu_ms_ += lost_gpu_ms;
  ++jobs_killed_;
  engine_.record(0x4b494c4c00000000ull ^ (static_cast<std::uint64_t>(j) << 8));
  if (observer_ != nullptr)
    observer_->on_lost_work(engine_.now(), AuditKind::Kill, j, static_cast<std::int32_t>(node), reason, lost_gpu_ms);
  release(j);
  if (retry) {
    ++retries_[j];
    state_[j] = JobState::Pending;
    backoff_[j] = true;
    ++backoff_jobs_;
    schedule_node_event(engine_.now() + models::retry_backoff(f, retries_[j]), NodeEvent::RetryReady, 0, j);
  } else {
    const std::string why = std::string(reason) + "; retry limit (" + std::to_string(f.retry_limit) + ") reached";
    if (observer_ != nullptr)
      observer_->on_event(engine_.now(), AuditKind::Finish, j, static_cast<std::int32_t>(JobState::Failed), why);
    end_job(j, JobState::Failed, why);
  }
  request_schedule();
}

void Simulation::on_retry(JobIndex j) {
  if (state_[j] != JobState::Pending && !backoff_[j]) return;  // withdrawn during its back-off
  HEADROOM_ASSERT(backoff_[j] && state_[j] == JobState::Pending, "retry of a job not in back-off");
  const models::Job& job = workload_.jobs[j];
  backoff_[j] = false;
  --backoff_jobs_;
  count_pending(job, 1);
  ++progress_;
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::Retry, j, retries_[j],
                        "retry " + std::to_string(retries_[j]) + " of " +
                            std::to_string(options_.failures.retry_limit) + " after a node failure");
  policy_.on_requeue(*this, j);
  request_schedule();
}

// A job's withdraw_at: an autoscaler removed the replica. Running, it ends as completed;
// pending, it leaves the queue without running (Cancelled) and the policy forgets it.
void Simulation::on_withdraw(JobIndex j) {
  if (state_[j] == JobState::Running) {
    if (finish_event_[j] != kNoEvent) engine_.cancel(finish_event_[j]);
    on_finish(j);
    return;
  }
  if (state_[j] != JobState::Pending) return;  // it ended before
  const std::string why = "withdrawn: the autoscaler removed this replica before it could start";
  ++progress_;
  if (observer_ != nullptr)
    observer_->on_event(engine_.now(), AuditKind::Finish, j, static_cast<std::int32_t>(JobState::Cancelled), why);
  if (backoff_[j]) {
    // Killed by a failure and waiting to retry: in no policy queue.
    backoff_[j] = false;
    --backoff_jobs_;
    end_job(j, JobState::Cancelled, why);
  } else {
    release_bound(j, "withdrawn", true);
    leave_pending(j);
    end_job(j, JobState::Cancelled, why, false);
    policy_.on_withdraw(*this, j);
  }
  request_schedule();
}

// Recovery after a drill: the first instant, once its outage is over, when no more jobs wait
// (pending or in retry back-off) than just before it began.
void Simulation::check_recovery() {
  for (std::size_t d = 0; d < drills_.size(); ++d) {
    DrillState& ds = drills_[d];
    if (!ds.open || !ds.over || waiting() > ds.baseline) continue;
    ds.open = false;
    if (observer_ != nullptr)
      observer_->on_event(engine_.now(), AuditKind::Recovered, models::kNoJob, static_cast<std::int32_t>(d),
                          "pending queue back to " + std::to_string(ds.baseline) + " jobs");
  }
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
      slice_left_[k] =
          std::max<Tick>(0, slice_left_[k] - models::scaled_work(now - slice_since_[k], speed_[k], num, den));
    }
    slice_since_[k] = now;
    engine_.cancel(finish_event_[k]);
    const Tick at = now + models::scaled_duration(slice_left_[k], speed_[k], rate.first, rate.second);
    finish_event_[k] = engine_.schedule(at, EventClass::JobFinish, k);
  }
}

// Work (ms at the recorded speed) a running job has done since it last started.
Tick Simulation::work_done(JobIndex j) const {
  const Tick now = engine_.now();
  if (slice_since_.empty() || slice_since_[j] < 0 || placement_[j].empty() ||
      !cluster_.spec().pools[cluster_.node(placement_[j].front().node).pool].time_sliced)
    return std::min(remaining_[j], models::scaled_work(now - run_start_[j], speed_[j]));
  const auto [num, den] = node_rate_[placement_[j].front().node];
  return remaining_[j] -
         std::max<Tick>(0, slice_left_[j] - models::scaled_work(now - slice_since_[j], speed_[j], num, den));
}

}  // namespace headroom::simulation
