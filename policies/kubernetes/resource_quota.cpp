// ResourceQuota admission (kubernetes pkg/quota/v1/evaluator/core, the API server's quota
// admission plugin): a pod over its namespace's quota is refused and its controller retries.

#include <algorithm>
#include <array>
#include <string>

#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

// ResourceQuota admission: the pod enters the active queue, or its controller retries later.
// What a job counts against its namespace's quota: gpu, cpu (millicores), memory, pods.
std::array<std::int64_t, 4> KubernetesPolicy::quota_demand(const Job& job) {
  return {job.gpus, std::int64_t{job.cpus} * 1000, job.memory_mib, std::max<std::int64_t>(1, job.nodes)};
}

std::array<std::int64_t, 4> KubernetesPolicy::quota_fields(const Config::Quota& q) {
  return {q.gpu, q.cpu_milli, q.memory_mib, q.pods};
}

void KubernetesPolicy::admit(const ClusterView& view, JobIndex j, Tick now) {
  const Job& job = view.workload().jobs[j];
  Pod& p = pods_[j];
  const auto limit = job.tenant < quota_.size() ? quota_fields(quota_[job.tenant]) : quota_fields({});
  const bool limited = std::any_of(limit.begin(), limit.end(), [](std::int64_t l) { return l >= 0; });
  if (limited) {
    const auto demand = quota_demand(job);
    const auto used = quota_fields(quota_used_[job.tenant]);
    bool over = false, never = false;
    for (std::size_t r = 0; r < limit.size(); ++r) {
      if (limit[r] < 0) continue;
      over = over || used[r] + demand[r] > limit[r];
      if (!never && demand[r] > limit[r]) {
        never = true;
        p.quota_never_by = kQuotaNames[r];
      }
    }
    if (over) {
      p.quota_reason_due = true;
      quota_reasons_.push_back(j);
      if (never) {
        p.where = Where::QuotaNever;
        return;
      }
      p.where = Where::QuotaWait;
      p.retry_at = now + cfg_.quota_retry;
      quota_wait_.emplace(p.retry_at, j);
      return;
    }
    count_quota(job, 1);
    p.admitted = true;
  }
  p.timestamp = now;
  push_active(j);
}

void KubernetesPolicy::count_quota(const Job& job, std::int64_t sign) {
  const auto d = quota_demand(job);
  Config::Quota& u = quota_used_[job.tenant];
  u.gpu += sign * d[0];
  u.cpu_milli += sign * d[1];
  u.memory_mib += sign * d[2];
  u.pods += sign * d[3];
}

void KubernetesPolicy::unadmit(const ClusterView& view, JobIndex j) {
  Pod& p = pods_[j];
  if (!p.admitted) return;
  count_quota(view.workload().jobs[j], -1);
  p.admitted = false;
}

// Controllers create the pods that quota refused again, at the start of each pass (schedule); the
// refused pods get their pending reason.
void KubernetesPolicy::quota_controller_retries(Session& s, Tick now) {
  while (!quota_wait_.empty() && quota_wait_.begin()->first <= now) {
    const JobIndex j = quota_wait_.begin()->second;
    quota_wait_.erase(quota_wait_.begin());
    pods_[j].where = Where::None;
    admit(s, j, now);
  }
  for (JobIndex j : quota_reasons_) {
    if (pods_[j].quota_reason_due && s.state(j) == JobState::Pending) {
      s.pending_reason(j, pods_[j].where == Where::QuotaNever
                              ? "quota: requests more " + std::string(pods_[j].quota_never_by) +
                                    " than its namespace's whole quota; never admitted"
                              : "quota: rejected at admission, retrying");
      pods_[j].said[0] = -1;
    }
    pods_[j].quota_reason_due = false;
  }
  quota_reasons_.clear();
}

}  // namespace headroom::policies::k8s
