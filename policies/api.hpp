#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "models/speed.hpp"
#include "models/workload.hpp"
#include "sim/errors.hpp"
#include "sim/time.hpp"

namespace headroom::policies {

using models::JobIndex;
using models::Placement;
using sim::Tick;

// One scalar parameter from the scenario's `policy:` block, with where it was written.
// Keys are dotted paths below `policy:` ("placement", "backfill.bf_window").
struct ParamValue {
  std::string text;
  std::string file;
  int line = 0;
  int column = 0;
};
using PolicyParams = std::map<std::string, ParamValue>;

// Read-only view of the simulation that a policy decides on. Implemented by the engine.
class ClusterView {
 public:
  virtual ~ClusterView() = default;
  virtual Tick now() const = 0;
  virtual const models::ClusterState& cluster() const = 0;
  virtual const models::Workload& workload() const = 0;
  virtual models::JobState state(JobIndex job) const = 0;
  // A job killed by a failure that waits for its retry back-off (models::FailureSpec): its state
  // is Pending, but it is in no scheduler's queue until the policy hears on_requeue, and it may
  // not be started before.
  virtual bool retrying(JobIndex job) const {
    (void)job;
    return false;
  }
  virtual std::size_t pending_count() const = 0;
  // Start of the job's current run (-1 when not running) and where it runs.
  virtual Tick run_start(JobIndex job) const = 0;
  virtual const Placement& placement(JobIndex job) const = 0;
  // A running job that has been told to stop and is inside its grace period; it still holds
  // its resources.
  virtual bool terminating(JobIndex job) const = 0;
  // Jobs with a slice on `node`, in the order they started there.
  virtual std::span<const JobIndex> jobs_on_node(models::NodeId node) const = 0;
  // The pods a pending job already holds (Session::bind), in the order they were bound; empty
  // for a job that binds nothing before it starts. jobs_on_node lists such a job on their nodes.
  virtual std::span<const models::Slice> bound(JobIndex job) const {
    (void)job;
    return {};
  }
  // Heterogeneous GPUs (docs/heterogeneity.md): the job's speed on a GPU of `pool`, in parts per
  // million of the speed its recorded run time was measured at. models::kSpeedOne when the
  // scenario has no runtime model.
  virtual std::int64_t pool_speed(JobIndex job, models::PoolId pool) const {
    (void)job, (void)pool;
    return models::kSpeedOne;
  }
};

// What happens to a preempted job once its grace period is over.
enum class PreemptMode : std::uint8_t {
  Requeue,     // back to pending; its progress is lost (a deleted pod recreated by its controller)
  Checkpoint,  // back to pending, keeping its progress, plus a restore overhead
  Cancel,      // ends as Cancelled
};

// A scheduling pass. The policy reads the view and requests decisions; the engine validates
// each one and applies it at once, so later requests in the same pass see its effect.
class Session : public ClusterView {
 public:
  // Starts a pending job on `placement`. Returns an empty string on success, otherwise why the
  // engine refused (which is a policy bug: the engine reports it as an internal error). The
  // engine keeps the placement: pass it with std::move when it is not needed afterwards.
  // A job that bound pods before (bind) passes only the slices still missing: the engine adds
  // them to the bound ones, and the job's placement is the union.
  virtual std::string start(JobIndex job, Placement placement, std::string_view reason) = 0;
  // Binds one pod of a pending job that runs as several pods (models::pod_gpus) without starting
  // it: the slice is allocated at once and held, idle, while the job stays pending, as a pod
  // that kube-scheduler bound waits for its peers (no gang scheduling). The job's work begins when
  // start() places its last pod. Bound pods are released when their node fails or is drained, or
  // when the job is rejected or withdrawn (the policy hears on_release while the job is still
  // pending). Returns why the engine refused, or "".
  virtual std::string bind(JobIndex job, const models::Slice& slice, std::string_view reason) {
    (void)job, (void)slice, (void)reason;
    return "this session does not bind pods one by one";
  }
  // Releases every pod bound to a pending job (a gang that could not complete gives its pods
  // back, as the Coscheduling plugin's Permit stage rejects a PodGroup's waiting pods). The
  // policy does its own bookkeeping: no on_release follows. Returns why the engine refused, or "".
  virtual std::string unbind(JobIndex job, std::string_view reason) {
    (void)job, (void)reason;
    return "this session does not bind pods one by one";
  }
  // Rejects a pending job for good (e.g. it can never fit); the job ends as Rejected.
  virtual void reject(JobIndex job, std::string_view reason) = 0;
  // Records why a job is still pending (shown in the GUI's queue view).
  virtual void pending_reason(JobIndex job, std::string_view reason) = 0;
  // Tells a running job to stop: it keeps its resources for `grace`, then stops as `mode` says
  // (a job whose work ends within the grace period completes normally). `by` is the job the
  // eviction makes room for, or models::kNoJob. Returns why the engine refused, or "".
  // `overhead` is added to the remaining work in Checkpoint mode.
  virtual std::string preempt(JobIndex job, PreemptMode mode, Tick grace, JobIndex by, std::string_view reason,
                              Tick overhead = 0) = 0;
  // Asks for another scheduling pass at `time` (>= now), e.g. when a backoff expires.
  virtual void wake_at(Tick time) = 0;
  // A running job fails now (e.g. the kubelet refuses a pod it was bound to): it releases its
  // resources and ends as Failed. Returns why the engine refused, or "".
  virtual std::string fail(JobIndex job, std::string_view reason) = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // Notifications of what the engine applied; a policy may keep its own ordered queues.
  virtual void on_submit(const ClusterView& view, JobIndex job) = 0;
  virtual void on_end(const ClusterView& view, JobIndex job) { (void)view, (void)job; }
  // A pending job left without running (an autoscaler removed the replica, models::Job::
  // withdraw_at): the policy must forget it. By default on_end, which policies whose on_end
  // already drops a pending job from their queues rely on.
  virtual void on_withdraw(const ClusterView& view, JobIndex job) { on_end(view, job); }
  // A preempted job is pending again (Requeue or Checkpoint mode). By default: like a submit.
  virtual void on_requeue(const ClusterView& view, JobIndex job) { on_submit(view, job); }
  // MultiKueue's re-dispatch (docs/split.md): a job this policy was told was withdrawn (on_withdraw:
  // another cluster admitted its copy) comes back, pending, because the cluster that admitted it
  // evicted it; the policy takes it as a fresh submit at now. Only a policy whose
  // supports_resubmit() is true is asked; the default refuses.
  virtual bool supports_resubmit() const { return false; }
  virtual void on_resubmit(const ClusterView& view, JobIndex job) {
    (void)view, (void)job;
    HEADROOM_ASSERT(false, "policy " + std::string(name()) + " cannot take back a withdrawn job (on_resubmit)");
  }
  // A job's resources were released (it ended, or its preemption took effect), or a pending job's
  // bound pods were (Session::bind: a node failure or drain, a rejection, a withdrawal).
  virtual void on_release(const ClusterView& view, JobIndex job) { (void)view, (void)job; }
  virtual void schedule(Session& session) = 0;
  // The cluster as this policy's scheduler sees it; the engine builds its ClusterState from it.
  // By default the scenario's; a policy may set NodePool::units_per_gpu (device-plugin
  // time-slicing replicas or MIG slices), never change node or GPU counts.
  virtual models::ClusterSpec advertised_cluster(const models::ClusterSpec& spec) const { return spec; }
  // The permission drill: the job's tenant may not submit to its queue. This system's answer in
  // its own words: refused at submit (the default), or accepted and held pending as inadmissible
  // (`held`). Either way the job never runs; the engine ends it Rejected at submit and counts it
  // as denied, before the policy sees it.
  struct Denial {
    bool held = false;
    std::string reason;
  };
  virtual Denial deny(const models::Workload& w, const models::Job& job) const {
    return {false, "permission denied: tenant " + name_of(w.tenants, job.tenant) + " may not submit to queue " +
                       name_of(w.queues, job.queue)};
  }

 protected:
  static std::string name_of(const models::NameTable& t, std::uint32_t id) {
    return id < t.size() ? std::string(t.name(id)) : std::string("(none)");
  }
};

struct PolicyInfo {
  std::string name;
  std::string summary;
  std::vector<std::string> params;  // accepted keys
};

}  // namespace headroom::policies
