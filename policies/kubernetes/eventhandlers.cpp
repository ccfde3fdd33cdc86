// kube-scheduler pkg/scheduler/eventhandlers.go: what the engine's events (a pod created, requeued
// after eviction, deleted, ended) do to the scheduler's cache and queues, and the per-run state
// (ensure) they all need; the RBAC refusal at submit; make_policy.

#include <memory>
#include <string>
#include <utility>

#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

// RBAC refuses the create request at the API server (403), before any scheduler sees it.
Policy::Denial KubernetesPolicy::deny(const models::Workload& w, const Job& job) const {
  return {false, "permission denied: jobs.batch is forbidden: User \"" + name_of(w.tenants, job.tenant) +
                     "\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"" +
                     name_of(w.queues, job.queue) + "\" (RBAC, 403 Forbidden at submit)"};
}

void KubernetesPolicy::on_submit(const ClusterView& view, JobIndex j) {
  ensure(view);
  admit(view, j, view.now());
}

void KubernetesPolicy::on_requeue(const ClusterView& view, JobIndex j) {
  // The evicted pod is deleted; its controller creates a new one, admitted like any other.
  ensure(view);
  const std::uint32_t qseq = pods_[j].qseq;  // kept: older queue entries must stay stale
  pods_[j] = Pod{};
  pods_[j].qseq = qseq;
  admit(view, j, view.now());
}

void KubernetesPolicy::on_release(const ClusterView& view, JobIndex j) {
  ensure(view);
  Pod& p = pods_[j];
  if (p.where != Where::Running && !p.pods.empty()) {
    // A waiting job lost the pods it had bound (their node failed or was drained): the
    // controller creates them again; they wait in the job's queue entry.
    for (const models::Slice& sl : p.pods) add_usage(sl, -1);
    p.pods.clear();
    p.said[0] = -1;
    // Its next pod is now its first: it leaves its batch (keyed by the next pod's GPUs).
    if (p.where == Where::Batched) unbatch(j);
    move_all_to_active_or_backoff(view.now());
    return;
  }
  if (p.where == Where::Running) {
    const Job& job = view.workload().jobs[j];
    if (!p.pods.empty()) {
      for (const models::Slice& sl : p.pods) add_usage(sl, -1);
      p.pods.clear();
    } else {
      add_usage(models::Slice{p.node, job.gpus, job.cpus, job.memory_mib}, -1);
    }
    --running_;
    if (--running_by_priority_[job.priority] == 0) running_by_priority_.erase(job.priority);
    if (const int res = resource(job); res >= 0) {
      mig_used_[p.node][static_cast<std::size_t>(res)] -= job.gpus;
    } else if (split(view.cluster().node(p.node).pool)) {
      whole_used_[p.node] -= job.gpus;
    }
    group_running(view.now(), job.group, -1);
    p.where = Where::None;
    p.node = kNoNode;
  }
  unadmit(view, j);
  // A deleted pod is a cluster event: MoveAllToActiveOrBackoffQueue.
  move_all_to_active_or_backoff(view.now());
}

void KubernetesPolicy::on_end(const ClusterView& view, JobIndex j) {
  ensure(view);
  leave_queue(j);
  clear_nomination(j);
  unadmit(view, j);
  pods_[j].where = Where::Done;
  if (const auto g = view.workload().jobs[j].group; g != models::kNone) {
    --groups_[g].live;
    group_running(view.now(), g, 0);
  }
}

void KubernetesPolicy::ensure(const ClusterView& view) {
  jobs_ = &view.workload().jobs;
  if (!pods_.empty() || view.workload().jobs.empty()) return;
  pods_.resize(view.workload().jobs.size());
  const std::size_t nodes = view.cluster().nodes().size();
  usage_.resize(nodes);
  nominated_.resize(nodes);
  dirty_flag_.assign(nodes, 0);
  class_next_.assign(nodes, kNoNode);
  class_prev_.assign(nodes, kNoNode);
  class_members_ = num_feasible_nodes_to_find(cfg_.percentage_of_nodes_to_score, static_cast<std::int64_t>(nodes)) >=
                   static_cast<std::int64_t>(nodes);
  const auto& tenants = view.workload().tenants;
  quota_.assign(tenants.size(), Config::Quota{});
  quota_used_.assign(tenants.size(), Config::Quota{0, 0, 0, 0});
  for (const auto& [name, limit] : cfg_.quota)
    if (auto t = tenants.find(name)) quota_[*t] = limit;
  // Pod groups: members, to report partial placement (no gang scheduling here).
  groups_.assign(view.workload().groups.size(), Group{});
  for (JobIndex j = 0; j < view.workload().jobs.size(); ++j) {
    const auto g = view.workload().jobs[j].group;
    if (g == models::kNone || g >= groups_.size()) continue;
    groups_[g].members.push_back(j);
    ++groups_[g].live;
  }
  load_device_plugin(view);
  // Failed batches need the failing pods' cycles to change nothing: not with MIG profiles, nor
  // with failRequestsGreaterThanOne (pods fail and release in the middle of a pass).
  batching_ = cfg_.batch_failed_cycles && !any_mig_ && !cfg_.device_plugin.fail_requests_greater_than_one;
}

std::unique_ptr<Policy> make_policy(Config config, std::uint64_t seed) {
  return std::make_unique<KubernetesPolicy>(std::move(config), seed);
}

std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed) {
  return make_policy(parse_config(params), seed);
}

}  // namespace headroom::policies::k8s
