// Placement of the admitted pods by kube-scheduler rules (policies/kubernetes/kubernetes.hpp) and
// topology-aware scheduling (Kueue TAS over cluster.topology).
#include <bit>

#include "policies/kueue/policy.hpp"

namespace headroom::policies::kueue {

namespace {

// Bits base .. base + 63 of a bitset over node ids (one spare word at its end).
std::uint64_t bits_at(const std::vector<std::uint64_t>& set, NodeId base) {
  const std::size_t w = base >> 6;
  const unsigned s = base & 63;
  return s == 0 ? set[w] : (set[w] >> s) | (set[w + 1] << (64 - s));
}

}  // namespace

// The domain for workload w on `flavor`: the lowest-level switch (at most the required level)
// whose up nodes of the flavor have free GPUs for the Workload's pods (those still pending under
// `session`, or all of them), best fit; kNoSwitch when none.
models::SwitchId KueuePolicy::tas_domain(int w, int flavor, const Session* session) const {
  const models::Topology& t = *cluster_->spec().topology;
  const Job& first = jobs()[wls_[w].pods.front()];
  tas_free_.assign(cluster_->nodes().size(), 0);
  for (NodeId id = 0; id < cluster_->nodes().size(); ++id) {
    const models::Node& n = cluster_->node(id);
    if (n.up && flavor_pools_[flavor][n.pool] && pool_eligible(*cluster_, n.pool, first, *workload_))
      tas_free_[id] = n.free_gpus;
  }
  std::int64_t need = 0;
  for (JobIndex p : wls_[w].pods)
    if (session == nullptr || session->state(p) == JobState::Pending) need += jobs()[p].gpus;
  return t.lowest_fitting_domain(tas_free_, need, cfg_.tas_required ? cfg_.tas_level : INT32_MAX);
}

std::string KueuePolicy::tas_reason(int w) const {
  return "topology: no domain at level " + std::to_string(cfg_.tas_level) +
         " or below (cluster.topology) has free GPUs for the whole workload in ClusterQueue " +
         nodes_[wls_[w].cq].name + " (kueue TAS, podset-required-topology)";
}

// The job's placement as worker pods: one pod when it fits a node, else node-sized pods (or
// gpus_per_node), each on the best node by kube-scheduler filter and score; only on `allowed`
// nodes (ascending) when given.
// Placement by kube-scheduler rules.

// The job's pods (models::pod_gpus cut to models::PodWidth of the flavor's eligible pools).
std::vector<std::int32_t> KueuePolicy::pod_sizes(const ClusterView& view, const Job& job, int flavor) const {
  const auto& cluster = view.cluster();
  models::PodWidth width;
  for (models::PoolId p = 0; p < cluster.pool_count(); ++p)
    if (flavor_pools_[flavor][p] && pool_eligible(cluster, p, job, *workload_))
      width.add(cluster.spec().pools[p].gpus_per_node, cluster.spec().pools[p].nodes);
  return models::pod_gpus(job, width.width());
}

// With `per_pod`, pods `first`.. are placed one after the other until one fits nowhere; the
// result has one slice per pod placed (kube-scheduler binds each pod that fits). `given`: the
// job's pod_sizes when the caller has them already.
std::optional<models::Placement> KueuePolicy::place(const ClusterView& view, const Job& job, int flavor,
                                                    const std::vector<NodeId>* allowed, std::size_t first, bool per_pod,
                                                    const std::vector<std::int32_t>* given) {
  const auto& cluster = view.cluster();
  std::vector<std::int32_t> own;
  if (given == nullptr) own = pod_sizes(view, job, flavor);
  const std::vector<std::int32_t>& sizes = given != nullptr ? *given : own;
  const auto count = static_cast<std::int32_t>(sizes.size());
  models::Placement pods_out;
  std::vector<std::pair<NodeId, models::Slice>> taken;  // tentative, per node
  // Where each node is in `taken` (taken_at_, all -1 again when this returns, and taken_bits_,
  // all 0 again): a wide job's pods look their nodes up in O(1) rather than scanning the pods
  // placed before them, and a sampled cycle finds them 64 nodes at a time.
  if (taken_at_.size() != cluster.nodes().size()) {
    taken_at_.assign(cluster.nodes().size(), -1);
    taken_bits_.assign(cluster.nodes().size() / 64 + 2, 0);
    full_bits_.assign(taken_bits_.size(), 0);
  }
  struct Forget {
    std::vector<int>& at;
    std::vector<std::uint64_t>& bits;
    std::vector<std::uint64_t>& full;
    const std::vector<std::pair<NodeId, models::Slice>>& taken;
    ~Forget() {
      for (const auto& t : taken) {
        at[t.first] = -1;
        bits[t.first >> 6] = 0;
        full[t.first >> 6] = 0;
      }
    }
  } forget{taken_at_, taken_bits_, full_bits_, taken};
  // full_bits_: the nodes of `taken` whose free GPUs, less this job's tentative pods there, are
  // fewer than `full_for` (the GPUs of the pod they were worked out for; -1: not kept). A sampled
  // cycle drops them a word at a time: the pods of a wide gang would otherwise test each node
  // their job's earlier pods filled, pod after pod.
  std::int32_t full_for = -1;
  auto full = [&](NodeId id, std::int32_t gpus) {
    return cluster.node(id).free_gpus - taken[static_cast<std::size_t>(taken_at_[id])].second.gpus < gpus;
  };
  auto mark_full = [&](NodeId id, std::int32_t gpus) {
    const std::uint64_t bit = std::uint64_t{1} << (id & 63);
    if (full(id, gpus))
      full_bits_[id >> 6] |= bit;
    else
      full_bits_[id >> 6] &= ~bit;
  };
  auto taken_on = [&](NodeId id) -> models::Slice* {
    const int i = taken_at_[id];
    return i < 0 ? nullptr : &taken[static_cast<std::size_t>(i)].second;
  };
  // Eligible pools, and whether every node scores alike (no modelled cpu/memory and GPUs not
  // scored): then the lowest-index feasible node wins and scoring is skipped.
  std::vector<models::PoolId> eligible;
  bool constant_score = cfg_.scheduler.scoring.gpu_weight == 0 || job.gpus == 0;
  bool no_cpus = true, no_memory = true;  // on every eligible pool
  for (models::PoolId p = 0; p < cluster.pool_count(); ++p) {
    if (!flavor_pools_[flavor][p] || !pool_eligible(cluster, p, job, *workload_)) continue;
    eligible.push_back(p);
    const auto& spec = cluster.spec().pools[p];
    no_cpus = no_cpus && spec.cpus_per_node == 0;
    no_memory = no_memory && spec.memory_gib == 0;
  }
  constant_score = constant_score && no_cpus && no_memory;
  // Whether a cycle looks at fewer than all nodes (percentageOfNodesToScore, node_sampling.hpp);
  // when it looks at all, the highest score wins, ties to the lowest index.
  const auto all_nodes = static_cast<std::int64_t>(cluster.nodes().size());
  const bool sampled =
      k8s::num_feasible_nodes_to_find(cfg_.scheduler.percentage_of_nodes_to_score, all_nodes) < all_nodes;
  auto pool_ok = [&](models::PoolId p) { return std::find(eligible.begin(), eligible.end(), p) != eligible.end(); };
  const std::vector<models::PoolId> none;
  for (auto i = static_cast<std::int32_t>(first); i < count; ++i) {
    const std::uint64_t stamp = ++score_stamp_;
    score_memo_.begin();  // node_score's remembered scores are for this pod
    Job pod = job;
    pod.gpus = sizes[static_cast<std::size_t>(i)];
    pod.cpus = job.cpus / count + (i < job.cpus % count ? 1 : 0);
    pod.memory_mib = job.memory_mib / count + (i < job.memory_mib % count ? 1 : 0);
    NodeId best = UINT32_MAX;
    std::int64_t best_score = -1;
    // Filter (NodeResourcesFit) with this job's pods already placed tentatively; true if it fits.
    auto feasible = [&](NodeId id, const models::Slice*& t) {
      const models::Node& n = cluster.node(id);
      t = taken_on(id);
      const std::int64_t tg = t ? t->gpus : 0, tc = t ? t->cpus : 0, tm = t ? t->memory_mib : 0;
      return n.free_gpus - tg >= pod.gpus && (n.cpus <= 0 || n.free_cpus - tc >= pod.cpus) &&
             (n.memory_mib <= 0 || n.free_memory_mib - tm >= pod.memory_mib);
    };
    // Score (the node's usage with this job's pods already placed on it tentatively, `t`).
    auto score = [&](NodeId id, const models::Slice* t) {
      k8s::NodeUsage u = usage_[id];
      if (t) {
        u.gpus += t->gpus;
        u.cpu_milli += std::int64_t{t->cpus} * 1000;
        u.memory_mib += t->memory_mib;
        u.nonzero_cpu_milli += std::int64_t{t->cpus} * 1000;
        u.nonzero_memory_mib += t->memory_mib;
      }
      return node_score(cluster.node(id), u, pod);
    };
    if (sampled) {
      // kube-scheduler's sampling (percentageOfNodesToScore): from nextStartNodeIndex until enough
      // nodes pass the filter; the highest score wins, ties to the first found.
      //
      // The filter: the index offers only up nodes with enough free GPUs, so when the pod asks
      // for no cpu or memory that a node models (allocations never leave them negative), only
      // the nodes holding this job's tentative pods need a look; else every node does.
      const bool index_decides = allowed == nullptr && (no_cpus || pod.cpus <= 0) && (no_memory || pod.memory_mib <= 0);
      if (index_decides && full_for != pod.gpus) {
        for (const auto& t : taken) mark_full(t.first, pod.gpus);
        full_for = pod.gpus;
      }
      auto filter = [&](NodeId base, std::uint64_t bits) {
        if (index_decides) {
          if (taken.empty()) return bits;
          bits &= ~bits_at(full_bits_, base);  // the rest of this job's nodes pass (checked below)
          for (std::uint64_t t = bits & bits_at(taken_bits_, base); t != 0; t &= t - 1) {
            const int b = std::countr_zero(t);
            const models::Slice* sl = nullptr;
            if (!feasible(base + static_cast<NodeId>(b), sl)) bits &= ~(std::uint64_t{1} << b);
          }
          return bits;
        }
        for (std::uint64_t t = bits; t != 0; t &= t - 1) {
          const int b = std::countr_zero(t);
          const NodeId id = base + static_cast<NodeId>(b);
          const models::Slice* sl = nullptr;
          if ((allowed != nullptr && !std::binary_search(allowed->begin(), allowed->end(), id)) || !feasible(id, sl))
            bits &= ~(std::uint64_t{1} << b);
        }
        return bits;
      };
      auto take = [&](NodeId base, std::uint64_t bits) {
        if (constant_score) {
          if (best == UINT32_MAX) best = base + static_cast<NodeId>(std::countr_zero(bits));
          return;
        }
        // Nodes without this job's tentative pods score by their class.
        const std::uint64_t tentative = taken.empty() ? 0 : bits_at(taken_bits_, base);
        for (; bits != 0; bits &= bits - 1) {
          const int b = std::countr_zero(bits);
          const NodeId id = base + static_cast<NodeId>(b);
          const std::int64_t total = (tentative >> b) & 1 ? score(id, taken_on(id))
                                     : class_scores_[node_class_[id]].stamp == class_stamp_
                                         ? class_scores_[node_class_[id]].total
                                         : class_score(id, cluster.node(id), pod);
          if (total > best_score) {
            best_score = total;
            best = id;
          }
        }
      };
      if (!constant_score) {
        if (node_class_.size() != usage_.size()) reclass(0);  // the classes, on first use
        if (const std::array<std::int64_t, 3> shape{pod.gpus, pod.cpus, pod.memory_mib}; shape != class_shape_) {
          class_shape_ = shape;
          class_stamp_ = stamp;
        }
      }
      // When the index decides, the nodes it offers bound how many can pass.
      std::int64_t offered = -1;
      if (index_decides) {
        offered = 0;
        for (models::PoolId p : eligible)
          for (std::int32_t f = std::max(pod.gpus, 0); f <= cluster.node_units(p); ++f)
            offered += static_cast<std::int64_t>(cluster.nodes_with_free(p, f).size());
      }
      sampler_.cycle_words(cluster, cfg_.scheduler.percentage_of_nodes_to_score, std::max(pod.gpus, 0), pool_ok, filter,
                           take, constant_score, offered);
    }
    // Only up nodes of the eligible pools with enough free GPUs (the cluster's index).
    for (models::PoolId p : sampled ? none : eligible) {
      for (std::int32_t f = pod.gpus; f <= cluster.spec().pools[p].gpus_per_node; ++f) {
        for (NodeId id : cluster.nodes_with_free(p, f)) {
          if (constant_score && id >= best) break;  // sets are in id order
          if (allowed != nullptr && !std::binary_search(allowed->begin(), allowed->end(), id)) continue;
          const models::Slice* t = nullptr;
          if (!feasible(id, t)) continue;
          if (constant_score) {
            best = id;
            break;
          }
          const std::int64_t total = score(id, t);
          if (total > best_score || (total == best_score && id < best)) {
            best_score = total;
            best = id;
          }
        }
      }
    }
    if (best == UINT32_MAX) {
      if (per_pod) return pods_out;
      return std::nullopt;
    }
    pods_out.push_back(models::Slice{best, pod.gpus, pod.cpus, pod.memory_mib});
    if (models::Slice* t = taken_on(best)) {
      t->gpus += pod.gpus;
      t->cpus += pod.cpus;
      t->memory_mib += pod.memory_mib;
    } else {
      taken_at_[best] = static_cast<int>(taken.size());
      taken_bits_[best >> 6] |= std::uint64_t{1} << (best & 63);
      taken.push_back({best, models::Slice{best, pod.gpus, pod.cpus, pod.memory_mib}});
    }
    if (full_for >= 0) mark_full(best, full_for);
  }
  if (per_pod) return pods_out;
  models::Placement out;
  for (auto& [n, sl] : taken) out.push_back(sl);
  return out;
}

// The weighted score of `pod` on a node, which k8s::score_node computes from the node's
// capacity and usage alone: remembered for the pod by those values (k8s::ScoreMemo), since many
// of thousands of nodes are alike (idle, or running the same shapes).
std::int64_t KueuePolicy::node_score(const models::Node& n, const k8s::NodeUsage& u, const Job& pod) {
  return score_memo_.get(n, u, [&] { return k8s::weighted_score(cfg_.scheduler, n, u, pod); });
}

// Node id's class again after its usage changed (all nodes' on first use). The classes are
// renumbered from the nodes' current ones when more than 4 per node (plus 1,024) were ever seen,
// so the table stays bounded however many usages a run passes through.
void KueuePolicy::reclass(NodeId id) {
  const auto& nodes = cluster_->nodes();
  auto intern = [&](NodeId k) {
    const auto [it, fresh] =
        class_index_.try_emplace(k8s::score_key(nodes[k], usage_[k]), static_cast<std::uint32_t>(class_index_.size()));
    if (fresh) class_scores_.emplace_back();
    return it->second;
  };
  if (node_class_.size() != nodes.size() || class_index_.size() > 4 * nodes.size() + 1024) {
    class_index_.clear();
    class_scores_.clear();
    node_class_.resize(nodes.size());
    for (NodeId k = 0; k < nodes.size(); ++k) node_class_[k] = intern(k);
    return;
  }
  node_class_[id] = intern(id);
}

// The weighted score of `pod` (of class_shape_) on node id of capacity n, with its usage and
// nothing tentative, for its whole class (the caller reads class_scores_ first; node_class_ is
// kept).
std::int64_t KueuePolicy::class_score(NodeId id, const models::Node& n, const Job& pod) {
  ClassScore& c = class_scores_[node_class_[id]];
  if (c.stamp != class_stamp_) c = {class_stamp_, k8s::weighted_score(cfg_.scheduler, n, usage_[id], pod)};
  return c.total;
}

// An admitted job wider than one node: kube-scheduler binds each of its pods that fits (no gang
// at placement); the job runs once its last pod binds. True when it started.
bool KueuePolicy::place_wide(Session& s, const Wl& wl, JobIndex p, const std::vector<std::int32_t>& sizes,
                             const std::vector<NodeId>* allowed) {
  const Job& job = jobs()[p];
  const std::size_t n = sizes.size();
  const std::size_t had = s.bound(p).size();
  const auto got = place(s, job, wl.flavor, allowed, had, true, &sizes);
  for (const auto& sl : *got) add_usage(sl, 1);
  if (had + got->size() == n) {
    models::Placement merged;  // one slice per node
    for (const auto& sl : *got) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const models::Slice& m) { return m.node == sl.node; });
      if (it == merged.end()) {
        merged.push_back(sl);
      } else {
        it->gpus += sl.gpus;
        it->cpus += sl.cpus;
        it->memory_mib += sl.memory_mib;
      }
    }
    const std::string why =
        s.start(p, std::move(merged),
                "kueue: admitted by ClusterQueue " + nodes_[wl.cq].name + " (flavor " + choice_name(wl.flavor) +
                    "); last of " + std::to_string(n) + " pods placed by kube-scheduler rules");
    HEADROOM_ASSERT(why.empty(), "kueue produced an invalid placement: " + why);
    pod_bound_[p].clear();
    return true;
  }
  for (const auto& sl : *got) {
    const std::string why = s.bind(p, sl, "kueue: admitted; pod placed by kube-scheduler, no gang at placement");
    HEADROOM_ASSERT(why.empty(), "kueue bound a pod the engine refused: " + why);
    pod_bound_[p].push_back(sl);
  }
  std::int64_t held = 0;
  for (const auto& sl : pod_bound_[p]) held += sl.gpus;
  s.pending_reason(p, "unschedulable: admitted to ClusterQueue " + nodes_[wl.cq].name + ", " +
                          std::to_string(pod_bound_[p].size()) + " of " + std::to_string(n) + " pods bound (holding " +
                          std::to_string(held) +
                          " GPUs); no node has room for the next (kube-scheduler, no gang at placement)");
  return false;
}

// Pods bound to a pending job are deleted (its workload is evicted): their GPUs go back.
void KueuePolicy::drop_bound(Session& s, JobIndex p, const std::string& reason) {
  if (pod_bound_[p].empty()) return;
  const std::string why = s.unbind(p, reason);
  HEADROOM_ASSERT(why.empty(), "kueue unbind refused: " + why);
  for (const auto& sl : pod_bound_[p]) add_usage(sl, -1);
  pod_bound_[p].clear();
}

void KueuePolicy::place_pods(Session& s) {
  if (placing_.empty()) return;
  // The nodes that are up are counted again only when some node went up or down.
  if (up_counted_at_ != s.cluster().up_changes() || up_nodes_ < 0) {
    up_counted_at_ = s.cluster().up_changes();
    up_nodes_ = 0;
    for (const auto& n : s.cluster().nodes()) up_nodes_ += n.up ? 1 : 0;
  }
  const std::uint64_t epoch = releases_ * 1'000'003u + static_cast<std::uint64_t>(up_nodes_);
  std::vector<int> complete;
  for (const auto& k : placing_) {
    const int w = std::get<2>(k);
    Wl& wl = wls_[w];
    if (wl.failed_epoch == epoch) continue;
    // TAS: the pending pods go to the lowest domain that holds them all (required: at most the
    // requested level, else they wait; preferred: anywhere when no domain does).
    std::vector<NodeId> domain;
    bool in_domain = false;
    if (tas(w)) {
      const models::SwitchId d = tas_domain(w, wl.flavor, &s);
      if (d != models::kNoSwitch) {
        const auto under = cluster_->spec().topology->nodes_under(d);
        domain.assign(under.begin(), under.end());
        in_domain = true;
      } else if (cfg_.tas_required) {
        pending_reason(s, w, tas_reason(w));
        wl.failed_epoch = epoch;
        continue;
      }
    }
    bool all = true;
    std::vector<std::int32_t> sizes;  // a job's pods (pod_sizes), when it asks for several GPUs
    for (JobIndex p : wl.pods) {
      if (s.state(p) != JobState::Pending) continue;
      if (s.retrying(p)) {
        // Killed by a failure: its controller creates the pod again after the retry back-off.
        all = false;
        continue;
      }
      const Job& job = jobs()[p];
      if (job.gpus > 1) sizes = pod_sizes(s, job, wl.flavor);  // else one pod
      if (job.gpus > 1 && sizes.size() > 1) {
        if (place_wide(s, wl, p, sizes, in_domain ? &domain : nullptr)) {
          ++wl.running;
        } else {
          all = false;
        }
        continue;
      }
      auto placement =
          place(s, job, wl.flavor, in_domain ? &domain : nullptr, 0, false, job.gpus > 1 ? &sizes : nullptr);
      if (!placement) {
        all = false;
        s.pending_reason(p, "unschedulable: admitted to ClusterQueue " + nodes_[wl.cq].name +
                                ", but no node has enough free nvidia.com/gpu, cpu or memory (kube-scheduler)");
        continue;
      }
      const std::string why = s.start(p, *placement,
                                      "kueue: admitted by ClusterQueue " + nodes_[wl.cq].name + " (flavor " +
                                          choice_name(wl.flavor) + "); placed by kube-scheduler rules");
      HEADROOM_ASSERT(why.empty(), "kueue produced an invalid placement: " + why);
      ++wl.running;
      for (const auto& sl : *placement) add_usage(sl, 1);
    }
    if (all) {
      complete.push_back(w);
      clear_ready(w);  // PodsReady
    } else {
      wl.failed_epoch = epoch;
    }
  }
  for (int w : complete) placing_.erase(place_key(w));
}

}  // namespace headroom::policies::kueue
