// Kueue's cache (pkg/cache): the ClusterQueue and cohort tree with its quota (built once), the
// ClusterQueues' queues (pkg/cache/queue/cluster_queue.go: the head, the inadmissible list, parking)
// and the release of quota that requeues inadmissible workloads.
#include "policies/kueue/policy.hpp"

namespace headroom::policies::kueue {

// The cache: workloads, flavors, the cohort tree and the LocalQueues, built on the first call.
void KueuePolicy::build(const ClusterView& view) {
  const auto& w = view.workload();
  const auto& cluster = view.cluster();
  // Workloads: one per group, one per job without a group.
  wl_of_.assign(w.jobs.size(), -1);
  pod_bound_.assign(w.jobs.size(), {});
  std::map<models::GroupId, int> by_group;
  wls_.reserve(w.jobs.size());  // at most one per job: never moved while it fills
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    const Job& job = w.jobs[j];
    int idx = -1;
    if (job.group != models::kNone) {
      auto [it, fresh] = by_group.emplace(job.group, static_cast<int>(wls_.size()));
      idx = it->second;
      if (fresh) wls_.emplace_back();
    } else {
      idx = static_cast<int>(wls_.size());
      wls_.emplace_back();
    }
    wl_of_[j] = idx;
    wls_[idx].pods.push_back(j);
    for (auto k : cfg_.ray_kinds) wls_[idx].ray = wls_[idx].ray || job.kind == k;
  }
  // Flavors -> node pools.
  flavor_pools_.clear();
  for (const auto& f : cfg_.flavors) {
    flavor_index_[f.name] = static_cast<int>(flavor_pools_.size());
    std::vector<bool> pools(cluster.pool_count(), f.pools.empty());
    for (const auto& name : f.pools) {
      bool found = false;
      for (models::PoolId p = 0; p < cluster.pool_count(); ++p) {
        if (cluster.spec().pools[p].name == name) {
          pools[p] = true;
          found = true;
        }
      }
      if (!found)
        throw sim::InputError("kueue: resourceFlavors." + f.name + ".pools names pool \"" + name +
                              "\", which the cluster does not have");
    }
    flavor_pools_.push_back(std::move(pools));
  }
  choices_.clear();
  choice_index_.clear();
  for (int f = 0; f < static_cast<int>(cfg_.flavors.size()); ++f) {
    std::array<int, kResources> all;
    all.fill(f);
    choice_index_.emplace(all, f);
    choices_.push_back(all);
  }
  nfr_ = static_cast<int>(cfg_.flavors.size()) * kResources;
  // Tree: ClusterQueues first, then cohorts.
  std::map<std::string, int> cohort_index;
  const int ncq = static_cast<int>(cfg_.cluster_queues.size());
  nodes_.resize(ncq + cfg_.cohorts.size());
  cqs_.resize(ncq);
  for (Cq& q : cqs_) q.holding = models::NodeIdSet(0, wls_.size());  // any dense ids: workloads here
  for (std::size_t c = 0; c < cfg_.cohorts.size(); ++c) cohort_index[cfg_.cohorts[c].name] = ncq + static_cast<int>(c);
  auto init_quota = [&](TreeNode& n, const std::vector<FlavorQuotas>& res) {
    n.nominal.assign(nfr_, 0);
    n.blimit.assign(nfr_, -1);
    n.llimit.assign(nfr_, -1);
    n.usage.assign(nfr_, 0);
    for (const auto& fq : res) {
      const int f = flavor_index_.at(fq.flavor);
      for (int r = 0; r < kResources; ++r) {
        if (!fq.resources[r]) continue;
        n.nominal[fr(f, r)] = fq.resources[r]->nominal;
        n.blimit[fr(f, r)] = fq.resources[r]->borrowing_limit;
        n.llimit[fr(f, r)] = fq.resources[r]->lending_limit;
      }
    }
  };
  for (int q = 0; q < ncq; ++q) {
    const auto& c = cfg_.cluster_queues[q];
    TreeNode& n = nodes_[q];
    n.name = c.name;
    n.is_cq = true;
    n.weight = c.weight;
    n.parent = c.cohort.empty() ? -1 : cohort_index.at(c.cohort);
    init_quota(n, c.resources);
    Cq& cq = cqs_[q];
    cq.cfg = &c;
    for (const auto& fq : c.resources) {
      cq.flavors.push_back(flavor_index_.at(fq.flavor));
      for (int r = 0; r < kResources; ++r) cq.covered[r] = cq.covered[r] || fq.resources[r].has_value();
    }
    // Declared resource groups: each group's flavors are those whose quotas name its resources.
    cq.strict = !c.resource_groups.empty();
    for (const auto& g : c.resource_groups) {
      if (std::none_of(g.begin(), g.end(), [](bool b) { return b; })) continue;  // only unmodelled ones
      cq.groups.push_back(g);
      cq.group_flavors.emplace_back();
      for (const auto& fq : c.resources) {
        bool in = false;
        for (int r = 0; r < kResources; ++r) in = in || (g[r] && fq.resources[r].has_value());
        if (in) cq.group_flavors.back().push_back(flavor_index_.at(fq.flavor));
      }
    }
    if (cq.groups.size() < 2) {
      cq.groups.clear();
      cq.group_flavors.clear();
    }
    for (std::size_t g = 0; g < cq.groups.size(); ++g) {
      cq.group_choices.emplace_back();
      for (int f : cq.group_flavors[g]) {
        std::array<int, kResources> part;
        for (int r = 0; r < kResources; ++r) part[r] = cq.groups[g][r] ? f : -1;
        cq.group_choices.back().push_back(choice_of(part));
      }
    }
    for (const auto& name : c.admission_checks)
      for (std::size_t k = 0; k < cfg_.admission_checks.size(); ++k)
        if (cfg_.admission_checks[k].name == name) cq.checks.push_back(static_cast<int>(k));
  }
  for (std::size_t c = 0; c < cfg_.cohorts.size(); ++c) {
    TreeNode& n = nodes_[ncq + c];
    n.name = cfg_.cohorts[c].name;
    n.weight = cfg_.cohorts[c].weight;
    n.parent = cfg_.cohorts[c].parent.empty() ? -1 : cohort_index.at(cfg_.cohorts[c].parent);
    init_quota(n, cfg_.cohorts[c].resources);
  }
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    const int p = nodes_[i].parent;
    if (p >= 0) (nodes_[i].is_cq ? nodes_[p].child_cqs : nodes_[p].child_cohorts).push_back(i);
  }
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) compute_subtree(i);
  // Parking needs a queue that never preempts, does not block at its head, orders by priority
  // and time, and has GPUs as its only quota-managed resource (a workload that does not fit
  // then fails on its GPUs alone, always for the same reason).
  parking_.reset(cqs_.size(), wls_.size());
  for (int q = 0; q < ncq; ++q) {
    const ClusterQueueConfig& c = cfg_.cluster_queues[q];
    cqs_[q].parks = !c.strict_fifo && !(cfg_.afs.enabled && c.usage_based_afs) &&
                    c.within_cluster_queue == PreemptionPolicy::Never &&
                    c.reclaim_within_cohort == PreemptionPolicy::Never && !c.borrow_within_cohort &&
                    !cqs_[q].covered[1] && !cqs_[q].covered[2] && !cqs_[q].strict && !c.stopped;
  }
  subtree_cqs_.assign(nodes_.size(), {});
  for (int q = 0; q < ncq; ++q) {
    cqs_[q].root = root_of(q);
    subtree_cqs_[cqs_[q].root].push_back(q);
  }
  // LocalQueues: namespace (tenant) -> ClusterQueue.
  ns_cq_.assign(w.tenants.size(), -1);
  for (int q = 0; q < ncq; ++q) {
    for (const auto& ns : cfg_.cluster_queues[q].namespaces) {
      if (ns == "*") {
        default_cq_ = q;
      } else if (auto t = w.tenants.find(ns); t && ns_cq_[*t] < 0) {
        ns_cq_[*t] = q;  // the first ClusterQueue with a LocalQueue there
      }
    }
    for (const auto& lq : cfg_.cluster_queues[q].local_queues) {
      const auto slash = lq.find('/');
      const auto t = w.tenants.find(lq.substr(0, slash));
      const auto name = w.queues.find(lq.substr(slash + 1));
      if (t && name) lq_cq_.emplace(std::make_pair(*t, *name), q);
    }
  }
  if (default_cq_ >= 0)
    for (auto& q : ns_cq_)
      if (q < 0) q = default_cq_;
  usage_.assign(cluster.nodes().size(), {});
  lqs_.assign(w.tenants.size(), Lq{});
  for (models::TenantId t = 0; t < lqs_.size(); ++t) {
    lqs_[t].last = view.now();  // created with the run
    if (auto it = cfg_.local_queue_weights.find(w.tenants.name(t)); it != cfg_.local_queue_weights.end())
      lqs_[t].weight = it->second;
  }
}

// The CQ's next workload: the first by priority and time, or with admission fair sharing the
// first of the LocalQueue with the lowest usage (cluster_queue.go queueOrderingFunc).
int KueuePolicy::head(int q) const {
  const Cq& cq = cqs_[q];
  if (!afs_on(q)) {
    const int f = cq.active.empty() ? -1 : std::get<2>(*cq.active.begin());
    const int m = cq.parks ? parking_.first(q, cq.cursor, ParkedIndex::kAny) : -1;
    return m < 0 || (f >= 0 && key(f) < key(m)) ? f : m;
  }
  int best = -1;
  double best_usage = 0;
  for (const auto& [ns, entries] : cq.by_lq) {
    const int w = std::get<2>(*entries.begin());
    const double u = afs_usage(ns);
    if (best < 0 || u < best_usage || (u == best_usage && key(w) < key(best))) {
      best = w;
      best_usage = u;
    }
  }
  return best;
}

void KueuePolicy::active_insert(int w) {
  Cq& cq = cqs_[wls_[w].cq];
  cq.active.insert(key(w));
  if (afs_on(wls_[w].cq)) cq.by_lq[wls_[w].ns].insert(key(w));
}

void KueuePolicy::active_erase(int w) {
  Cq& cq = cqs_[wls_[w].cq];
  cq.active.erase(key(w));
  if (cq.parks) parking_.erase(wls_[w].cq, w);
  if (auto it = cq.by_lq.find(wls_[w].ns); it != cq.by_lq.end()) {
    it->second.erase(key(w));
    if (it->second.empty()) cq.by_lq.erase(it);
  }
}

// An inadmissible workload (just tried, active_erase'd) waits: parked when its pods all show
// the reason it was given (pending and not in a retry back-off, or gone), else in the list.
// It was the head of its queue, so every parked one before it is inadmissible already.
void KueuePolicy::park(const Session& s, int w) {
  Wl& wl = wls_[w];
  Cq& cq = cqs_[wl.cq];
  bool shows = cq.parks;
  for (JobIndex p : wl.pods) shows = shows && !(s.state(p) == JobState::Pending && s.retrying(p));
  if (!shows) {
    cq.inadmissible.push_back(w);
    return;
  }
  parking_.insert(wl.cq, key(w), cq.covered[0] ? wl.req[0] : 0);
  cq.cursor = ParkedIndex::after(key(w));
}

// Something happened to a parked workload's pods: it leaves the index for the side it is on.
void KueuePolicy::unpark(int w) {
  if (!parking_.contains(w)) return;
  Wl& wl = wls_[w];
  Cq& cq = cqs_[wl.cq];
  parking_.erase(wl.cq, w);
  if (key(w) < cq.cursor) {
    cq.inadmissible.push_back(w);
  } else {
    wl.inadmissible = false;
    active_insert(w);
  }
}

void KueuePolicy::compute_subtree(int i) {
  TreeNode& n = nodes_[i];
  if (!n.subtree.empty()) return;
  n.subtree = n.nominal;
  for (const auto* kids : {&n.child_cqs, &n.child_cohorts}) {
    for (int c : *kids) {
      compute_subtree(c);
      for (int k = 0; k < nfr_; ++k) n.subtree[k] += nodes_[c].subtree[k] - nodes_[c].local[k];
    }
  }
  n.local.assign(nfr_, 0);
  for (int k = 0; k < nfr_; ++k)
    if (n.llimit[k] >= 0) n.local[k] = std::max<std::int64_t>(0, n.subtree[k] - n.llimit[k]);
}

int KueuePolicy::root_of(int n) const {
  while (nodes_[n].parent >= 0) n = nodes_[n].parent;
  return n;
}

void KueuePolicy::enqueue(int w) {
  Wl& wl = wls_[w];
  wl.st = WState::Queued;
  wl.flavor = -1;
  wl.inadmissible = false;
  active_insert(w);
}

// A workload finished or was evicted in this tree: inadmissible workloads are requeued.
void KueuePolicy::requeue_inadmissible(int root) {
  for (int q : subtree_cqs_[root]) {
    for (int w : std::exchange(cqs_[q].inadmissible, {})) {
      if (wls_[w].st != WState::Queued || !wls_[w].inadmissible) continue;
      wls_[w].inadmissible = false;
      active_insert(w);
    }
    cqs_[q].cursor = ParkedIndex::min_key();  // the parked ones too
  }
}

void KueuePolicy::release_quota(int w) {
  Wl& wl = wls_[w];
  charge(w, -1);
  afs_release(w);
  cqs_[wl.cq].holding.erase(w);
  requeue_inadmissible(cqs_[wl.cq].root);
  released_ = true;
}

// The choice that puts each resource on the given flavor (-1: none), made on first use; its pools
// are those every one of its flavors selects.
int KueuePolicy::choice_of(const std::array<int, kResources>& flavors) {
  if (const auto it = choice_index_.find(flavors); it != choice_index_.end()) return it->second;
  const int c = static_cast<int>(choices_.size());
  std::vector<bool> pools(flavor_pools_.empty() ? 0 : flavor_pools_.front().size(), true);
  for (int f : flavors)
    if (f >= 0)
      for (std::size_t p = 0; p < pools.size(); ++p) pools[p] = pools[p] && flavor_pools_[f][p];
  choices_.push_back(flavors);
  choice_index_.emplace(flavors, c);
  flavor_pools_.push_back(std::move(pools));
  return c;
}

std::string KueuePolicy::choice_name(int choice) const {
  if (choice < static_cast<int>(cfg_.flavors.size())) return cfg_.flavors[choice].name;
  std::string out;
  std::vector<int> seen;
  for (int f : choices_[choice]) {
    if (f < 0 || std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
    seen.push_back(f);
    out += (out.empty() ? "" : ", ") + cfg_.flavors[f].name;
  }
  return out;
}

}  // namespace headroom::policies::kueue
