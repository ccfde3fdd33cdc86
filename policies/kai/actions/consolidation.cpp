// KAI-Scheduler's consolidation action (pkg/scheduler/actions/consolidation/consolidation.go):
// room for a pending single-pod group made by moving at most max-consolidation-preemptees
// preemptible single-node pods off one node, each of them placeable elsewhere at once.
#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

bool KaiPolicy::consolidate(Session& s, std::uint32_t id, int& attempts) {
  Unit& u = units_[id];
  // A plain pod spanning nodes is never consolidated; the checks before `++attempts` have no
  // effect, so their order does not matter.
  if (u.simple_gpus > 0 && u.min_member == 1 && u.simple_multi) return false;
  // next_pods gives one pod only when one is wanted.
  if (wanted(u) != 1) return false;
  JobIndex first = models::kNoJob;
  if (!each_next_pod(s, u, [&](JobIndex j) { first = j; })) return false;
  const std::array<JobIndex, 1> pods{first};
  const Job& job = workload_->jobs[pods[0]];
  if (job.gpus <= 0 || is_share(job) || multi_node(job) || cfg_.max_consolidation_preemptees <= 0) return false;
  std::int64_t eligible_free = 0;
  for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
    if (pool_ok(p, job)) eligible_free += cluster_->pool_free_gpus(p);
  if (eligible_free < job.gpus) return false;
  ++attempts;
  // What follows reads of the pod only its shape; a failure changes nothing. While nothing starts,
  // is evicted or reserved (and within one session: the same time), a shape that failed fails.
  const std::array<std::uint64_t, 4> version{sessions_, starts_, base_version_, movable_epoch_};
  if (version != consolidation_misses_at_) {
    consolidation_misses_.clear();
    consolidation_misses_at_ = version;
  }
  const ConsolidationShape shape{job.gpus, job.cpus, job.memory_mib, job.gpu_type, job.node_set};
  if (std::find(consolidation_misses_.begin(), consolidation_misses_.end(), shape) != consolidation_misses_.end())
    return false;
  const Tick now = s.now();
  int tried = 0;
  for (models::PoolId p = 0; p < cluster_->pool_count() && tried < kConsolidationNodesPerJob; ++p) {
    if (!pool_ok(p, job)) continue;
    const std::int32_t g = cluster_->spec().pools[p].gpus_per_node;
    if (job.gpus > g) continue;
    for (std::int32_t f = job.gpus - 1; f >= 0 && tried < kConsolidationNodesPerJob; --f) {
      for (NodeId n : cluster_->nodes_with_free(p, f)) {
        if (tried++ >= kConsolidationNodesPerJob) break;
        if (try_consolidate_on(s, id, pods[0], n, now)) return true;
      }
    }
  }
  consolidation_misses_.push_back(shape);
  return false;
}

bool KaiPolicy::try_consolidate_on(Session& s, std::uint32_t id, JobIndex pod, NodeId n, Tick now) {
  const Job& job = workload_->jobs[pod];
  if (movable_.size() < cluster_->nodes().size()) {
    movable_.resize(cluster_->nodes().size());
    movable_at_.resize(cluster_->nodes().size());
  }
  if (node_changes_.size() < cluster_->nodes().size()) node_changes_.resize(cluster_->nodes().size(), 0);
  auto& movable = movable_[n];  // gpus, -start, job
  MovableAt& at = movable_at_[n];
  if (at.epoch == 0 || at.node_changes != node_changes_[n] || at.member_changes != member_changes_ ||
      (at.timed && at.epoch != movable_epoch_)) {
    // (protected_by_min_runtime's earliest end of protection is the same when read again.)
    at = MovableAt{movable_epoch_, node_changes_[n], member_changes_, false, false, 0};
    movable.clear();
    for (JobIndex j : s.jobs_on_node(n)) {
      if (terminating_[j] || s.state(j) != JobState::Running) continue;
      const Unit& v = units_[job_unit_[j]];
      if (!v.preemptible() || v.members.size() != 1 || s.placement(j).size() != 1) continue;
      const Tick min_runtime = nodes_[v.queue].preempt_min_runtime;
      if (min_runtime > 0) at.timed = true;
      if (protected_by_min_runtime(v, min_runtime, now)) continue;
      movable.emplace_back(workload_->jobs[j].gpus, -s.run_start(j), j);
      const models::Slice& sl = s.placement(j)[0];
      at.gpus += sl.gpus;
      if (sl.gpu_milli > 0) at.shares = true;
    }
    std::sort(movable.begin(), movable.end());
  }
  if (consolidation_base_session_ != sessions_ || consolidation_base_starts_ != starts_ ||
      consolidation_base_version_ != base_version_) {
    base_into(consolidation_base_);
    consolidation_base_session_ = sessions_;
    consolidation_base_starts_ = starts_;
    consolidation_base_version_ = base_version_;
  }
  // Moving every pod off the node would not free the pod's GPUs there (each move adds its slice's
  // GPUs back, a share aside): the walk below would end with too few and return false.
  if (movable.empty()) return false;
  if (!at.shares) {
    const Free* b = consolidation_base_.find(n);
    const std::int64_t free = b != nullptr ? b->gpus : cluster_->node(n).free_gpus;
    if (free + at.gpus < job.gpus) return false;
  }
  Overlay& ov = consolidation_ov_;
  ov.nodes.assign(consolidation_base_.nodes.begin(), consolidation_base_.nodes.end());
  ov.reset_index();
  ov.at(*cluster_, n);
  std::vector<JobIndex>& victims = victims_;
  victims.clear();
  for (const auto& [gpus, neg_start, j] : movable) {
    (void)gpus, (void)neg_start;
    const Free target = *ov.find(n);
    if (target.gpus >= job.gpus && fits_cpu_mem(cluster_->node(n), target, job)) break;
    if (static_cast<int>(victims.size()) >= cfg_.max_consolidation_preemptees) return false;
    victims.push_back(j);
    ov.take(*cluster_, s.placement(j), -1);
  }
  Free* t = ov.find(n);
  if (victims.empty() || t->gpus < job.gpus || !fits_cpu_mem(cluster_->node(n), *t, job)) return false;
  t->gpus -= job.gpus;
  t->cpus -= job.cpus;
  t->memory -= job.memory_mib;
  // Every victim must find a place elsewhere now.
  std::vector<JobIndex>& order = victim_order_;
  order.assign(victims.begin(), victims.end());
  std::sort(order.begin(), order.end(), [&](JobIndex a, JobIndex b) {
    if (workload_->jobs[a].gpus != workload_->jobs[b].gpus) return workload_->jobs[a].gpus > workload_->jobs[b].gpus;
    return a < b;
  });
  for (JobIndex v : order)
    if (!place({v}, ov, n)) return false;
  for (JobIndex v : victims)
    evict(s, job_unit_[v], pod, id,
          "consolidation: moved off node " + std::to_string(n) + " to make room (re-placeable elsewhere)");
  pipeline(s, id, {pod}, {models::Placement{models::Slice{n, job.gpus, job.cpus, job.memory_mib}}});
  return true;
}

}  // namespace headroom::policies::kai::detail
