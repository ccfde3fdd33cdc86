// kube-scheduler pkg/scheduler/schedule_one.go: one scheduling cycle per pod (ScheduleOne:
// filter, score, selectHost, bind), the pods of a job wider than one node, and the node classes
// that let one node stand for all nodes alike.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "policies/kubernetes/policy.hpp"
#include "sim/parallel.hpp"

namespace headroom::policies::k8s {

namespace {

constexpr std::size_t kParallelScoreNodes = 1000;

}  // namespace

// The pods of a job wider than one node (models::pod_gpus cut to models::PodWidth of the pools it
// may use: the node size holding most of their GPUs); one entry for a job that is a single pod. Only plain
// nvidia.com/gpu requests on whole-GPU pools split: a MIG or time-sliced request stays one pod.
std::vector<std::int32_t> KubernetesPolicy::pod_sizes(const ClusterView& view, const Job& job) const {
  if (job.gpus <= 1 || resource(job) >= 0 || any_mig_) return {job.gpus};
  models::PodWidth width;
  const auto& spec = view.cluster().spec();
  for (models::PoolId p = 0; p < spec.pools.size(); ++p) {
    if (!eligible(view, p, job)) continue;
    if (spec.pools[p].units_per_gpu != 1) return {job.gpus};
    width.add(spec.pools[p].gpus_per_node, spec.pools[p].nodes);
  }
  auto sizes = models::pod_gpus(job, width.width());
  if (std::any_of(sizes.begin(), sizes.end(), [](std::int32_t g) { return g <= 0; })) return {job.gpus};
  return sizes;
}

// Pod k of n of a job: its GPUs, and an even share of the job's cpu and memory.
Job KubernetesPolicy::pod_of(const Job& job, const std::vector<std::int32_t>& sizes, std::size_t k) {
  Job pod = job;
  const auto n = static_cast<std::int32_t>(sizes.size());
  const auto i = static_cast<std::int32_t>(k);
  pod.gpus = sizes[k];
  pod.cpus = job.cpus / n + (i < job.cpus % n ? 1 : 0);
  pod.memory_mib = job.memory_mib / n + (i < job.memory_mib % n ? 1 : 0);
  pod.gpus_per_node = 0;
  pod.nodes = 0;
  return pod;
}

void KubernetesPolicy::schedule_one(Session& s, JobIndex j, const Job& job) {
  Pod& p = pods_[j];
  if (job.gpus > 1) {
    if (p.sizes.empty()) p.sizes = pod_sizes(s, job);
    if (p.sizes.size() > 1) {
      schedule_pods(s, j, job, p.sizes);
      return;
    }
  }
  if (!fits_somewhere(s, j, job)) {
    fail(j, s.now());
    say(s, j, {0}, [] { return "unschedulable: larger than every node (no gang scheduling); stays Pending"; });
    // From now on its reason stays (nothing else names one for a pod in no group), so its cycles
    // are kept apart. Not under failRequestsGreaterThanOne, whose in-pass releases would move it
    // in the middle of a pass.
    if (job.group == models::kNone && !cfg_.device_plugin.fail_requests_greater_than_one) {
      hopeless_.add(pods_, j);  // its unschedulable entry goes stale
    }
    return;
  }
  if (p.nominated != kNoNode && fits(s, p.nominated, job, j)) {
    bind(s, j, job, p.nominated, "kubernetes: bound to its nominated node");
    return;
  }
  if (const NodeId node = select_host(s, job, j); node != kNoNode) {
    bind(s, j, job, node, "kubernetes: highest-scoring feasible node");
    return;
  }
  const bool nominated = preempt(s, j, job);
  fail(j, s.now(), nominated ? std::nullopt : batch_key(s, j, job, 3));
  const auto at = static_cast<std::int64_t>(p.nominated);
  if (nominated) {
    say(s, j, {1, at}, [&] {
      return "preemption: nominated to node " + std::to_string(at) + ", waiting for its victims to terminate";
    });
  } else if (p.nominated != kNoNode) {
    say(s, j, {2, at},
        [&] { return "unschedulable: waiting for a terminating pod on its nominated node " + std::to_string(at); });
  } else {
    say(s, j, {3}, [] { return "unschedulable: no node has enough free nvidia.com/gpu, cpu or memory"; });
  }
}

// A job of several pods (an Indexed Job / PyTorchJob with one worker per node): its pending
// pods share one queue entry, as they share a priority and a creation time, and are tried one
// after the other. Each pod that fits binds at once and holds its node's GPUs while the others
// wait (no gang scheduling); the job's work begins when its last pod binds. A pod that fits
// nowhere may preempt (DefaultPreemption, for that pod) and the entry backs off as one pod does.
void KubernetesPolicy::schedule_pods(Session& s, JobIndex j, const Job& job, const std::vector<std::int32_t>& sizes) {
  Pod& p = pods_[j];
  const std::size_t n = sizes.size();
  if (p.fits_somewhere == 0 || (p.fits_somewhere < 0 && !fits_somewhere(s, j, pod_of(job, sizes, 0)))) {
    fail(j, s.now());
    say(s, j, {4}, [] { return "unschedulable: a pod of this job is larger than every node; stays Pending"; });
    return;
  }
  if (cfg_.coscheduling && p.pods.empty() && !cfg_.seeded_tie_break) {
    // A PodGroup whose pods cannot all find room now is rejected whole: binding its pods one by
    // one only to unbind them all (coscheduling_post_filter) leaves the same state behind, so a
    // group that the free GPUs alone cannot hold fails at once.
    if (gang_room(s, job, sizes) < static_cast<std::int64_t>(n)) {
      coscheduling_reject(s, j, n);
      return;
    }
  }
  while (p.pods.size() < n) {
    const std::size_t k = p.pods.size();
    const Job pod = pod_of(job, sizes, k);
    NodeId node = kNoNode;
    if (p.nominated != kNoNode && fits(s, p.nominated, pod, j)) {
      node = p.nominated;
    } else {
      node = select_host(s, pod, j);
    }
    if (node == kNoNode) break;
    const models::Slice slice{node, pod.gpus, pod.cpus, pod.memory_mib};
    clear_nomination(j);
    if (k + 1 == n) {
      const std::string why =
          s.start(j, {slice}, "kubernetes: last pod bound (" + std::to_string(n) + " pods, no gang scheduling)");
      HEADROOM_ASSERT(why.empty(), "kubernetes produced an invalid placement: " + why);
      p.pods.push_back(slice);
      add_usage(slice, 1);
      mark_running(s, j, job, p.pods.front().node);
      return;
    }
    const std::string why = s.bind(j, slice, "kubernetes: pod bound, no gang scheduling");
    HEADROOM_ASSERT(why.empty(), "kubernetes bound a pod the engine refused: " + why);
    p.pods.push_back(slice);
    add_usage(slice, 1);
  }
  const Job pod = pod_of(job, sizes, p.pods.size());
  if (cfg_.coscheduling) {
    coscheduling_post_filter(s, j, n);
    return;
  }
  const bool nominated = preempt(s, j, pod);
  fail(j, s.now(), nominated ? std::nullopt : batch_key(s, j, pod, p.pods.empty() ? 8 : 7));
  // The job's pod sizes are fixed, so how many pods are bound says what they hold and what the
  // next one asks for.
  const auto k = static_cast<std::int64_t>(p.pods.size());
  auto bound = [&] { return std::to_string(k) + " of " + std::to_string(n) + " pods bound"; };
  if (nominated) {
    const auto at = static_cast<std::int64_t>(p.nominated);
    say(s, j, {6, k, at}, [&] {
      return "preemption: " + bound() + "; the next pod is nominated to node " + std::to_string(at) +
             ", waiting for its victims to terminate";
    });
  } else if (k > 0) {
    say(s, j, {7, k}, [&] {
      std::int64_t held = 0;
      for (const auto& sl : p.pods) held += sl.gpus;
      return "gang: partially placed, " + bound() + " holding " + std::to_string(held) + " GPUs idle; no node has " +
             std::to_string(pod.gpus) + " free nvidia.com/gpu for the next (no gang scheduling)";
    });
  } else {
    say(s, j, {8}, [&] {
      return "unschedulable: no node has " + std::to_string(pod.gpus) +
             " free nvidia.com/gpu, cpu or memory for its first pod (" + std::to_string(n) + " pods)";
    });
  }
}

void KubernetesPolicy::refresh_classes(const ClusterView& view) {
  const std::size_t n = view.cluster().nodes().size();
  if (node_class_.size() != n || up_changes_seen_ != view.cluster().up_changes()) {
    classes_.clear();
    special_.clear();
    node_class_.assign(n, classes_.end());
    for (NodeId id = 0; id < n; ++id) place(view, id);
    up_changes_seen_ = view.cluster().up_changes();
  } else {
    for (const NodeId id : dirty_) {
      unplace(id);
      place(view, id);
    }
  }
  for (const NodeId id : dirty_) dirty_flag_[id] = 0;
  dirty_.clear();
}

NodeId KubernetesPolicy::select_host_by_class(const ClusterView& view, const Job& job, JobIndex self) {
  refresh_classes(view);
  NodeId best = kNoNode;
  std::int64_t best_score = -1;
  auto consider = [&](NodeId id) {
    if (!fits(view, id, job, self)) return;
    const std::int64_t sc = total_score(view, id, job);
    if (sc > best_score || (sc == best_score && id < best)) {
      best_score = sc;
      best = id;
    }
  };
  for (const auto& [key, cls] : classes_) consider(*cls.members.begin());
  for (const NodeId id : special_) consider(id);
  return best;
}

// findNodesThatFitPod + prioritizeNodes + selectHost: the chosen node or kNoNode. When no node
// has the GPUs, every node fails the filter (the next start index stays). When the cycle looks
// for every node (percentageOfNodesToScore 100, or a cluster under 100 nodes) it filters and
// scores them all, ties to the lowest index (by node class); otherwise it samples.
NodeId KubernetesPolicy::select_host(const ClusterView& view, const Job& job, JobIndex self) {
  if (!gpus_free_somewhere(view, job)) return kNoNode;
  const std::size_t n = view.cluster().nodes().size();
  if (num_feasible_nodes_to_find(cfg_.percentage_of_nodes_to_score, static_cast<std::int64_t>(n)) <
      static_cast<std::int64_t>(n))
    return select_host_sampled(view, job, self);
  if (use_classes()) return select_host_by_class(view, job, self);
  scores_.assign(n, -1);
  auto eval = [&](std::size_t i) {
    const auto id = static_cast<NodeId>(i);
    if (fits(view, id, job, self)) scores_[i] = total_score(view, id, job);
  };
  if (n >= kParallelScoreNodes) {
    sim::parallel_ranges(n, 0, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) eval(i);
    });
  } else {
    for (std::size_t i = 0; i < n; ++i) eval(i);
  }
  NodeId best = kNoNode;
  std::int64_t best_score = -1;
  std::uint64_t ties = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t sc = scores_[i];
    if (sc < 0 || sc < best_score) continue;
    if (sc > best_score) {
      best_score = sc;
      best = static_cast<NodeId>(i);
      ties = 1;
    } else if (cfg_.seeded_tie_break && tie_rng_.below(++ties) == 0) {
      best = static_cast<NodeId>(i);  // reservoir sampling, as selectHost
    }
  }
  return best;
}

// The nodes from nextStartNodeIndex on until numFeasibleNodesToFind of them pass the filter; the
// best score among those, ties to the first found (or, seeded, a reservoir sample in that order).
NodeId KubernetesPolicy::select_host_sampled(const ClusterView& view, const Job& job, JobIndex self) {
  const models::ClusterState& c = view.cluster();
  // Plain nvidia.com/gpu requests go through the cluster's free-GPU index (k8s::visit_words_from).
  const std::int32_t min_free = resource(job) < 0 && !any_mig_ ? std::max(job.gpus, 0) : -1;
  NodeId best = kNoNode;
  std::int64_t best_score = -1;
  std::uint64_t ties = 0;
  // The members of a node class pass the filter and score alike (see NodeClass): each class is
  // judged once per cycle; nodes with nominations, or all without classes, one by one.
  const bool by_class = use_classes();
  if (by_class) {
    refresh_classes(view);
    ++class_stamp_;
  }
  score_memo_.begin();
  auto pool_ok = [&](models::PoolId p) { return eligible(view, p, job); };
  // Every node the free-GPU index can offer (up, eligible pool, at least min_free free) is in a
  // class; when each such class passes the filter with one and the same score, the cycle keeps the
  // first node offered and counts the rest 64 at a time (NodeSampler::cycle_all_pass).
  if (by_class && min_free >= 0 && special_.empty() && all_offered_alike(view, job, self, min_free))
    return sampler_.cycle_all_pass(c, cfg_.percentage_of_nodes_to_score, min_free, pool_ok);
  auto judge = [&](NodeId id) -> std::int64_t {
    if (!fits(view, id, job, self)) return -1;
    return score_memo_.get(c.node(id), usage_[id], [&] { return total_score(view, id, job); });
  };
  sampler_.cycle(c, cfg_.percentage_of_nodes_to_score, min_free, pool_ok, [&](NodeId id) {
    std::int64_t sc = -1;
    if (by_class && node_class_[id] != classes_.end()) {
      NodeClass& k = node_class_[id]->second;
      if (k.stamp != class_stamp_) {
        k.stamp = class_stamp_;
        k.score = fits(view, id, job, self) ? total_score(view, id, job) : -1;
      }
      sc = k.score;
    } else {
      sc = judge(id);
    }
    if (sc < 0) return false;
    if (sc > best_score) {
      best_score = sc;
      best = id;
      ties = 1;
    } else if (sc == best_score && cfg_.seeded_tie_break && tie_rng_.below(++ties) == 0) {
      best = id;
    }
    return true;
  });
  return best;
}

// Whether the classes of the up nodes with at least min_free free units in the pod's pools all
// pass the filter with the same score (judged once per cycle, on any member; see NodeClass).
bool KubernetesPolicy::all_offered_alike(const ClusterView& view, const Job& job, JobIndex self,
                                         std::int32_t min_free) {
  constexpr std::int64_t kLow = INT64_MIN;
  std::int64_t same = -2;  // the score so far; -2 none yet
  const bool differ = visit_pools_with_free(view.cluster(), min_free, [&](models::PoolId p) {
    if (!eligible(view, p, job)) return true;
    const std::int64_t pool = p;
    for (auto it = classes_.lower_bound({pool, 1, min_free, kLow, kLow, kLow, kLow, kLow, kLow, kLow});
         it != classes_.end() && it->first[0] == pool && it->first[1] == 1; ++it) {
      NodeClass& k = it->second;
      if (k.stamp != class_stamp_) {
        k.stamp = class_stamp_;
        k.score = fits(view, k.head, job, self) ? total_score(view, k.head, job) : -1;
      }
      if (k.score < 0 || (same >= 0 && k.score != same)) return false;
      same = k.score;
    }
    return true;
  });
  return !differ;
}

void KubernetesPolicy::bind(Session& s, JobIndex j, const Job& job, NodeId node, std::string_view reason) {
  const models::Placement placement{models::Slice{node, job.gpus, job.cpus, job.memory_mib}};
  const std::string why = s.start(j, placement, reason);
  HEADROOM_ASSERT(why.empty(), "kubernetes produced an invalid placement: " + why);
  clear_nomination(j);
  add_usage(placement[0], 1);
  mark_running(s, j, job, node);
  const int res = resource(job);
  if (res >= 0) {
    mig_used_[node][static_cast<std::size_t>(res)] += job.gpus;
  } else if (split(s.cluster().node(node).pool)) {
    whole_used_[node] += job.gpus;
  }
  // Time-slicing with failRequestsGreaterThanOne: the kubelet admits, then fails, a pod asking for
  // more than one replica (NVIDIA/k8s-device-plugin, internal/rm/allocate.go).
  const DevicePlugin& dp = cfg_.device_plugin;
  if (dp.fail_requests_greater_than_one && job.gpus > 1 && res < 0 &&
      s.cluster().spec().pools[s.cluster().node(node).pool].units_per_gpu > 1 &&
      !pool_mig_[s.cluster().node(node).pool]) {
    const std::string failed =
        s.fail(j,
               "UnexpectedAdmissionError: time-sliced nvidia.com/gpu requests greater than one are refused "
               "(failRequestsGreaterThanOne)");
    HEADROOM_ASSERT(failed.empty(), "kubernetes admission failure refused: " + failed);
  }
}

// The job's pods all bound and started (the first pod's node is the job's node).
void KubernetesPolicy::mark_running(const ClusterView& view, JobIndex j, const Job& job, NodeId node) {
  Pod& p = pods_[j];
  p.where = Where::Running;
  p.node = node;
  ++running_;
  ++running_by_priority_[job.priority];
  group_running(view.now(), job.group, +1);
}

}  // namespace headroom::policies::k8s
