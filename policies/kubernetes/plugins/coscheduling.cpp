// Pod groups: kubernetes-sigs/scheduler-plugins pkg/coscheduling (`coscheduling: true`: a job's
// pods bind all together or none), and, without it, the partial-placement report of the default
// profile (no gang scheduling).

#include <algorithm>

#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

// Coscheduling (kubernetes-sigs/scheduler-plugins pkg/coscheduling): the PodGroup's
// minMember is every pod of the job; a member that cannot be placed makes PostFilter reject
// the group's waiting pods, so none stays bound and the group retries whole. For a job of n pods
// whose next pod fits nowhere (schedule_pods).
void KubernetesPolicy::coscheduling_post_filter(Session& s, JobIndex j, std::size_t n) {
  Pod& p = pods_[j];
  const std::size_t had = p.pods.size();
  if (had > 0) {
    const std::string why = s.unbind(j, "coscheduling: PodGroup incomplete, waiting pods rejected");
    HEADROOM_ASSERT(why.empty(), "kubernetes unbind refused: " + why);
    for (const models::Slice& sl : p.pods) add_usage(sl, -1);
    p.pods.clear();
  }
  coscheduling_reject(s, j, n);
}

// The group fails this cycle: none of its pods stays bound. The reason names no count of the pods
// that fit, so that it is made once per group, not at every cycle (and a batch of rejected groups
// fails with nothing to say).
void KubernetesPolicy::coscheduling_reject(Session& s, JobIndex j, std::size_t n) {
  fail(j, s.now(), gang_batch_key(s, j));
  say(s, j, {5, static_cast<std::int64_t>(n)}, [&] {
    return "gang: coscheduling PodGroup needs all " + std::to_string(n) + " pods (minMember " + std::to_string(n) +
           ") bound at once; they do not all fit now";
  });
}

// How many of the job's pods the free GPUs of its eligible pools could hold, counting each up
// node's free GPUs only (CPU, memory and nominations can only lower it): an upper bound on the
// pods that bind. Pods of several sizes are counted at the smallest. A pool is eligible for the
// job's pods as for the job (the same GPU type and resource, GPUs asked by both).
std::int64_t KubernetesPolicy::gang_room(const ClusterView& view, const Job& job,
                                         const std::vector<std::int32_t>& sizes) const {
  const std::int32_t smallest = *std::min_element(sizes.begin(), sizes.end());
  std::int64_t room = 0;
  for (models::PoolId p = 0; p < view.cluster().pool_count(); ++p)
    if (eligible(view, p, job)) room += pool_room(view.cluster(), p, smallest);
  return room;
}

// gang_room for pods of `gpus` GPUs over the pools of pool set `set` (a gang batch's key).
std::int64_t KubernetesPolicy::gang_room_in(const ClusterView& view, std::int32_t gpus, std::uint32_t set) const {
  std::int64_t room = 0;
  for (const models::PoolId p : pool_sets_[set]) room += pool_room(view.cluster(), p, gpus);
  return room;
}

// Pods of `gpus` GPUs that the free GPUs of pool p's up nodes could hold: a node of f free GPUs
// holds f / gpus of them.
std::int64_t KubernetesPolicy::pool_room(const models::ClusterState& c, models::PoolId p, std::int32_t gpus) {
  std::int64_t room = 0;
  for (std::int32_t f = gpus; f <= c.node_units(p); ++f)
    room += static_cast<std::int64_t>(c.nodes_with_free(p, f).size()) * (f / gpus);
  return room;
}

// A group is partially placed while some, but not all, of its live (not ended) pods run.
void KubernetesPolicy::group_running(Tick now, models::GroupId g, int delta) {
  if (g == models::kNone || g >= groups_.size()) return;
  Group& gr = groups_[g];
  gr.running += delta;
  const bool partial = gr.running > 0 && gr.running < gr.live;
  if (partial && gr.partial_since < 0) {
    gr.partial_since = now;
    partial_.insert(g);
  } else if (!partial && gr.partial_since >= 0) {
    gr.partial_since = -1;
    partial_.erase(g);
  }
}

// Pending pods of groups partially placed for at least partial_placement_threshold get a reason.
void KubernetesPolicy::report_partial_groups(Session& s) {
  const Tick now = s.now();
  for (models::GroupId g : partial_) {
    const Group& gr = groups_[g];
    const Tick due = gr.partial_since + cfg_.partial_placement_threshold;
    if (due > now) {
      s.wake_at(due);
      continue;
    }
    const std::string reason = "gang: partially placed for " + std::to_string((now - gr.partial_since) / sim::kSecond) +
                               " s, " + std::to_string(gr.running) + " of " + std::to_string(gr.live) + " pods running";
    for (JobIndex j : gr.members)
      if (s.state(j) == JobState::Pending) {
        s.pending_reason(j, reason);
        pods_[j].said[0] = -1;
      }
  }
}

}  // namespace headroom::policies::k8s
