#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "models/cluster.hpp"
#include "models/job.hpp"

namespace headroom::models {

// Audit event kinds, stored in the results' /events table.
enum class AuditKind : std::uint8_t {
  Submit = 0,
  Start = 1,
  Finish = 2,   // terminal: completed / failed / cancelled (detail = JobState)
  Reject = 3,   // terminal: policy or admission rejected the job
  Preempt = 4,  // detail = preemptor job index or -1
  Requeue = 5,
  Unfinished = 6,  // terminal at the horizon
  // The failure drill (models/failures.hpp). Node events have job = kNoJob, detail = node id.
  NodeDown = 7,    // a node leaves service (failure, scripted outage, maintenance); reason says which
  NodeUp = 8,      // repaired, outage over, maintenance done
  Drain = 9,       // a node is cordoned for maintenance: no new placements, it goes down once empty
  Kill = 10,       // a running job killed by its node going down; detail = node, lost work recorded
  Retry = 11,      // a killed job is pending again after its back-off; detail = retry number
  Drill = 12,      // a scripted outage begins; job = kNoJob, detail = drill index
  Recovered = 13,  // the pending queue is back to its level before drill `detail`; job = kNoJob
  Waiting = 14,    // a pending job's "why pending" changed: reason = the policy's words, detail = PendingCode
};
inline constexpr int kAuditKindCount = 15;
// Reject detail: why a job was rejected.
inline constexpr std::int32_t kRejectByPolicy = 0;
inline constexpr std::int32_t kRejectPermission = 1;  // tenant may not submit to the job's queue
// How the reason of an Unfinished event begins when the run stopped itself (the simulation's
// livelock guard) rather than at the horizon or with nothing left to happen; the summary warns then.
inline constexpr std::string_view kRunStopped = "stopped: ";
std::string_view to_string(AuditKind k);

// Why a job is pending, as a code for counting and colouring; the policy's own words stay in the
// audit reason. A policy's reason starts with a word that says which ("quota: over the namespace
// quota", "gang: 3 of 4 pods placeable"); see classify_pending_reason.
enum class PendingCode : std::uint8_t {
  None = 0,         // the policy has not said (yet)
  Capacity = 1,     // no free resources that fit: "capacity", "unschedulable", "head of line", "fit"
  Quota = 2,        // a quota, limit or deserved share: "quota", "limit", "deserved", "overquota"
  Priority = 3,     // others go first: "priority", "order", "fairshare", "queue", "strictfifo"
  Gang = 4,         // not enough of its group can start together: "gang", "podgroup", "minmember"
  Reservation = 5,  // resources reserved for another job: "reservation", "backfill"
  Preemption = 6,   // waiting for its victims to terminate: "preemption", "nominated", "pipelined"
  Admission = 7,    // an admission step: "admission", "check", "permission", "suspended"
  Other = 8,
};
inline constexpr int kPendingCodes = 9;
std::string_view to_string(PendingCode c);
PendingCode classify_pending_reason(std::string_view reason);

// State of the cluster at one sampling instant, per pool and per tenant.
struct Sample {
  Tick time = 0;
  std::span<const std::int32_t> pool_used_gpus;  // by pool
  std::span<const std::int32_t> pool_free_gpus;  // by pool (up nodes only)
  std::span<const std::int32_t> pool_down_gpus;  // by pool: neither used nor free (node down or draining)
  // By pool: free GPUs no pending job could use, on nodes with fewer free GPUs than the smallest
  // per-node need of the jobs waiting (0 while none waits); a subset of pool_free_gpus.
  std::span<const std::int32_t> pool_frag_gpus;
  std::span<const std::int32_t> tenant_used_gpus;  // by tenant
  std::span<const std::int32_t> tenant_pending_jobs;
  std::span<const std::int32_t> tenant_pending_gpus;
  std::span<const std::int32_t> pending_by_reason;  // pending jobs by PendingCode (kPendingCodes)
  std::int32_t running_jobs = 0;
  std::int32_t pending_jobs = 0;
};

// Receives what the simulation does, in order. results/ implements this to build its tables;
// it never reaches into the event loop.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void on_event(Tick time, AuditKind kind, JobIndex job, std::int32_t detail, std::string_view reason) = 0;
  // An audit event that threw work away: `lost_gpu_ms` is the GPU time lost (work since the last
  // checkpoint, restore overheads). Sent for preemptions when they take effect (kind Requeue, or
  // Finish for a cancelled victim) and for Kill. By default forwarded to on_event.
  virtual void on_lost_work(Tick time, AuditKind kind, JobIndex job, std::int32_t detail, std::string_view reason,
                            std::int64_t lost_gpu_ms) {
    (void)lost_gpu_ms;
    on_event(time, kind, job, detail, reason);
  }
  virtual void on_start(Tick time, JobIndex job, const Placement& placement) = 0;
  // A pending job's pods bound ahead of its start (Session::bind: partial placement without gang
  // scheduling) now hold `gpus` GPUs; 0 when they were deleted. A start takes them over (on_start).
  virtual void on_bound(Tick time, JobIndex job, std::int32_t gpus) {
    (void)time;
    (void)job;
    (void)gpus;
  }
  virtual void on_end(Tick time, JobIndex job, JobState state) = 0;
  virtual void on_sample(const Sample& sample) = 0;
};

}  // namespace headroom::models
