// kube-scheduler pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
// framework/preemption/preemption.go: DefaultPreemption's PostFilter (candidates,
// SelectVictimsOnNode, pickOneNodeForPreemption).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

// SelectVictimsOnNode.
std::optional<Candidate> KubernetesPolicy::select_victims(const ClusterView& view, JobIndex j, const Job& job,
                                                          NodeId id) const {
  const models::Node& n = view.cluster().node(id);
  const Amount r = reserved(id, job.priority, j);
  Amount free{gpu_free(id, n, job) - r.gpus, n.free_cpus - r.cpus, n.free_memory_mib - r.memory_mib};
  const int res = resource(job);
  std::vector<JobIndex> potential;
  // A victim gives back what its pods hold on this node. Pods bound to a job still waiting for
  // its other pods are not considered (a simplification: kube-scheduler would weigh them too).
  auto held_here = [&](JobIndex k) {
    Amount a;
    for (const auto& sl : view.placement(k)) {
      if (sl.node != id) continue;
      a.gpus += sl.gpus;
      a.cpus += sl.cpus;
      a.memory_mib += sl.memory_mib;
    }
    return a;
  };
  for (JobIndex k : view.jobs_on_node(id)) {
    if (priority(k) >= job.priority || view.state(k) != JobState::Running) continue;
    potential.push_back(k);
    const Amount h = held_here(k);
    if (resource((*jobs_)[k]) == res) free.gpus += h.gpus;
    free.cpus += h.cpus;
    free.memory_mib += h.memory_mib;
  }
  if (!covers(n, free, job)) return std::nullopt;
  std::sort(potential.begin(), potential.end(), [&](JobIndex a, JobIndex b) {
    if (priority(a) != priority(b)) return priority(a) > priority(b);
    if (view.run_start(a) != view.run_start(b)) return view.run_start(a) < view.run_start(b);
    return a < b;
  });
  Candidate c{id, {}};
  for (JobIndex k : potential) {
    const Amount h = held_here(k);
    const std::int64_t kg = resource((*jobs_)[k]) == res ? h.gpus : 0;
    const Amount back{free.gpus - kg, free.cpus - h.cpus, free.memory_mib - h.memory_mib};
    if (covers(n, back, job)) {
      free = back;  // reprieved
    } else {
      c.victims.push_back(k);
    }
  }
  return c;
}

// DefaultPreemption's PostFilter. True when the pod was nominated to a node.
bool KubernetesPolicy::preempt(Session& s, JobIndex j, const Job& job) {
  Pod& p = pods_[j];
  if (job.preempt_never) return false;
  if (running_by_priority_.empty() || running_by_priority_.begin()->first >= job.priority) {
    // No running pod has a lower priority: no node can offer victims (SelectVictimsOnNode finds
    // none, and without them the pod fits nowhere, or it would have bound).
    clear_nomination(j);
    return false;
  }
  if (p.nominated != kNoNode && !unresolvable(s, p.nominated, job)) {
    for (JobIndex k : s.jobs_on_node(p.nominated))
      if (priority(k) < job.priority && s.terminating(k)) return false;  // keeps its nomination
  }
  std::vector<NodeId> potential;
  for (NodeId id = 0; id < s.cluster().nodes().size(); ++id)
    if (!unresolvable(s, id, job)) potential.push_back(id);
  std::vector<Candidate> candidates;
  if (!potential.empty()) {
    const std::size_t n = potential.size();
    const std::size_t want = std::min(n, std::max<std::size_t>(n * 10 / 100, 100));
    const std::size_t offset = cfg_.seeded_tie_break ? offset_rng_.below(n) : 0;
    for (std::size_t i = 0; i < n && candidates.size() < want; ++i)
      if (auto c = select_victims(s, j, job, potential[(offset + i) % n])) candidates.push_back(std::move(*c));
  }
  if (candidates.empty()) {
    clear_nomination(j);
    return false;
  }
  const Candidate& chosen = pick_one(s, candidates);
  for (JobIndex v : chosen.victims) {
    if (s.terminating(v)) continue;
    const std::string why = s.preempt(v, PreemptMode::Requeue, cfg_.termination_grace_period, j,
                                      "kubernetes: preempted by a higher-priority pod (DefaultPreemption)");
    HEADROOM_ASSERT(why.empty(), "kubernetes preemption refused: " + why);
  }
  // Lower-priority pods nominated to the node lose their nomination.
  const std::vector<JobIndex> others = nominated_[chosen.node];
  for (JobIndex k : others)
    if (k != j && priority(k) < job.priority) clear_nomination(k);
  set_nomination(j, chosen.node, job);
  return true;
}

// pickOneNodeForPreemption without PDBs.
const Candidate& KubernetesPolicy::pick_one(const ClusterView& view, const std::vector<Candidate>& cs) const {
  struct Key {
    std::int64_t highest, sum, count, earliest;
  };
  auto key = [&](const Candidate& c) {
    Key k{std::numeric_limits<std::int64_t>::min(), 0, static_cast<std::int64_t>(c.victims.size()),
          std::numeric_limits<std::int64_t>::max()};
    if (c.victims.empty()) return k;
    k.highest = priority(c.victims.front());
    for (JobIndex v : c.victims) {
      k.sum += std::int64_t{priority(v)} + (std::int64_t{1} << 31);
      if (priority(v) == k.highest) k.earliest = std::min(k.earliest, view.run_start(v));
    }
    return k;
  };
  std::size_t best = 0;
  Key bk = key(cs[0]);
  for (std::size_t i = 1; i < cs.size(); ++i) {
    const Key k = key(cs[i]);
    if (std::tie(k.highest, k.sum, k.count) < std::tie(bk.highest, bk.sum, bk.count) ||
        (std::tie(k.highest, k.sum, k.count) == std::tie(bk.highest, bk.sum, bk.count) && k.earliest > bk.earliest)) {
      best = i;
      bk = k;
    }
  }
  return cs[best];
}

}  // namespace headroom::policies::k8s
