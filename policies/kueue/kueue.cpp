// The kueue policy: admission of whole Workloads against ClusterQueue quota, then placement of the
// admitted pods by kube-scheduler rules. The rules and their sources are listed in kueue.hpp.
#include "policies/kueue/kueue.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "models/topology.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/kueue/index.hpp"

namespace headroom::policies::kueue {

using models::Job;
using models::JobState;
using models::NodeId;

namespace {

constexpr std::array<std::string_view, kResources> kResourceNames = {"gpu", "cpu", "memory"};

enum class WState : std::uint8_t { Waiting, Queued, Reserved, Admitted, Evicting, Holding, Finished, Rejected };
enum class Mode : std::uint8_t { NoFit, Preempt, Fit };

struct Target {
  int wl = -1;
  std::string reason;
};

struct Assignment {
  int flavor = -1;
  Mode mode = Mode::NoFit;
  bool borrow = false;
  bool exceeds_max = false;
  bool no_domain = false;  // quota fits, but no topology domain holds the workload (TAS required)
  std::vector<Target> targets;
};

struct Wl {
  std::vector<JobIndex> pods;
  std::size_t submitted = 0;
  int cq = -1;
  models::TenantId ns = 0;
  std::array<std::int64_t, kResources> req{};
  std::int32_t priority = 0;
  Tick queue_ts = 0;
  WState st = WState::Waiting;
  int flavor = -1;
  Tick reserved_at = 0;
  bool inadmissible = false;
  bool ray = false;
  bool evicted_by_timeout = false;
  int evicted_by = -1;     // the preemptor of the last eviction
  int requeues = 0;        // waitForPodsReady requeues
  int check_attempts = 0;  // admission-check rounds answered
  Tick checks_at = -1;
  Tick ready_deadline = -1;
  Tick backoff_until = -1;
  Tick hold_until = -1;
  bool afs_penalty = false;  // an admission-fair-sharing entry penalty is pending for it
  bool afs_counted = false;  // counted in its LocalQueue's admitted usage
  int running = 0;           // pods holding node resources
  int ended = 0;
  std::uint64_t failed_epoch = UINT64_MAX;  // capacity epoch of the last failed placement
};

struct TreeNode {
  std::string name;
  int parent = -1;
  bool is_cq = false;
  std::vector<int> child_cqs, child_cohorts;
  std::vector<std::int64_t> nominal, blimit, llimit, subtree, local, usage;
  double weight = 1.0;
};

struct Cq {
  const ClusterQueueConfig* cfg = nullptr;
  std::vector<int> flavors;  // global flavor indices, in the written order
  std::array<bool, kResources> covered{};
  std::vector<int> checks;
  int root = 0;
  std::set<std::tuple<std::int64_t, Tick, int>> active;  // (-priority, queue time, workload)
  // With admission fair sharing: the same entries by LocalQueue (namespace).
  std::map<models::TenantId, std::set<std::tuple<std::int64_t, Tick, int>>> by_lq;
  std::vector<int> inadmissible;
  std::set<int> holding;  // workloads holding quota here
  // Parking (ParkedIndex): in a ClusterQueue that never preempts, does not block at its head and
  // orders by priority and time, an inadmissible workload whose pods all show the quota reason
  // waits in the index instead of `inadmissible`. Those with a key >= `cursor` are in the active
  // queue (requeued), the others inadmissible; trying one that still does not fit changes nothing
  // but moving it, so the admission pass passes over those whose GPUs exceed what is available.
  bool parks = false;
  ParkedIndex::Key cursor = ParkedIndex::min_key();
};

// A LocalQueue's admission-fair-sharing state (pkg/cache/queue/afs/usage_ledger.go).
struct Lq {
  std::array<double, kResources> consumed{};         // decayed usage (memory in bytes)
  std::array<std::int64_t, kResources> admitted{};   // quota of its admitted workloads
  std::array<std::int64_t, kResources> penalized{};  // requests with a pending entry penalty
  Tick last = 0;                                     // last decay
  double weight = 1;
};

struct Drs {
  double unweighted = 0;
  double weight = 1;
  bool borrowing = false;
  bool zero_weight_borrows() const { return weight == 0 && unweighted != 0; }
  double share() const {
    if (unweighted == 0) return 0;
    if (weight == 0) return std::numeric_limits<double>::infinity();
    return unweighted / weight;
  }
};
constexpr Drs kNegativeDrs{-1, 1, false};

int compare_drs(const Drs& a, const Drs& b) {
  auto cmp = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.zero_weight_borrows() && b.zero_weight_borrows()) return cmp(a.unweighted, b.unweighted);
  if (a.zero_weight_borrows()) return 1;
  if (b.zero_weight_borrows()) return -1;
  return cmp(a.share(), b.share());
}

std::string wl_name(const models::Workload& w, const std::vector<JobIndex>& pods) {
  const Job& j = w.jobs[pods.front()];
  if (j.group != models::kNone) return "workload " + w.groups.name(j.group);
  return "workload of job " + std::to_string(j.trace_id);
}

class KueuePolicy final : public Policy {
 public:
  explicit KueuePolicy(Config config) : cfg_(std::move(config)) {}

  std::string_view name() const override { return "kueue"; }

  // Kueue does not refuse: a job whose namespace has no LocalQueue for it is created and stays
  // suspended, its Workload inadmissible, and never runs.
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {true, "permission denied: held pending as inadmissible: LocalQueue " + name_of(w.queues, job.queue) +
                      " doesn't exist in namespace " + name_of(w.tenants, job.tenant) +
                      " (Kueue keeps the job suspended; it never starts)"};
  }

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    const int w = wl_of_[j];
    Wl& wl = wls_[w];
    if (++wl.submitted < wl.pods.size()) return;
    const Job& job = jobs()[j];
    wl.ns = job.tenant;
    wl.cq = job.tenant < ns_cq_.size() ? ns_cq_[job.tenant] : default_cq_;
    if (wl.cq < 0) {
      to_reject_.push_back(w);
      return;
    }
    for (JobIndex p : wl.pods) wl.priority = std::max(wl.priority, jobs()[p].priority);
    compute_request(view, w);
    wl.queue_ts = view.now();
    enqueue(w);
  }

  void on_requeue(const ClusterView& view, JobIndex j) override {
    ensure(view);
    unpark(wl_of_[j]);
    dirty_.push_back(wl_of_[j]);
  }

  void on_release(const ClusterView& view, JobIndex j) override {
    ensure(view);
    const int w = wl_of_[j];
    unpark(w);
    if (view.state(j) == JobState::Pending && !pod_bound_[j].empty()) {
      // Its bound pods were deleted (node failure, drain): they are placed again.
      for (const auto& sl : pod_bound_[j]) add_usage(sl, -1);
      pod_bound_[j].clear();
      ++releases_;
      dirty_.push_back(w);
      return;
    }
    --wls_[w].running;
    for (const auto& sl : view.placement(j)) add_usage(sl, -1);
    ++releases_;
    dirty_.push_back(w);
  }

  void on_end(const ClusterView& view, JobIndex j) override {
    ensure(view);
    const int w = wl_of_[j];
    unpark(w);
    ++wls_[w].ended;
    dirty_.push_back(w);
  }

  // A pod removed before it ran (models::Job::withdraw_at). A workload whose pods are all gone
  // while it still queues leaves its ClusterQueue; an admitted one finishes and frees its quota
  // (process_dirty).
  void on_withdraw(const ClusterView& view, JobIndex j) override {
    on_end(view, j);
    now_ = view.now();
    const int w = wl_of_[j];
    Wl& wl = wls_[w];
    if (wl.cq < 0 || wl.ended < static_cast<int>(wl.pods.size())) return;
    if (wl.st == WState::Reserved) {  // quota reserved, admission checks outstanding
      workload_done(w);
      return;
    }
    if (wl.st != WState::Queued) return;
    active_erase(w);
    drop_penalty(w);
    if (wl.backoff_until >= 0) backoff_.erase({wl.backoff_until, w});
    wl.st = WState::Finished;
  }

  void schedule(Session& s) override {
    ensure(s);
    now_ = s.now();
    if (cfg_.afs.enabled)
      for (Lq& lq : lqs_) afs_advance(lq);
    for (int w : std::exchange(to_reject_, {})) reject(s, w, reject_reason(w));
    process_dirty(s);
    process_timers(s);
    // Evictions of workloads with no running pod release their quota at once; the cycle runs
    // again for them (a bounded number of times per pass, then at the same time in a new pass).
    for (int round = 0;; ++round) {
      released_ = false;
      admission_cycles(s);
      place_pods(s);
      process_dirty(s);
      if (!released_) break;
      if (round == 100) {
        s.wake_at(now_ + sim::kSecond);
        break;
      }
    }
    Tick next = sim::kNever;
    for (const auto* timers : {&checks_, &ready_, &backoff_, &holds_})
      if (!timers->empty()) next = std::min(next, timers->begin()->first);
    if (next != sim::kNever) s.wake_at(next);
  }

 private:
  // ------------------------------------------------------------------------------------------
  // Setup.

  const std::vector<Job>& jobs() const { return *jobs_; }
  int fr(int flavor, int r) const { return flavor * kResources + r; }

  void ensure(const ClusterView& view) {
    jobs_ = &view.workload().jobs;
    cluster_ = &view.cluster();
    workload_ = &view.workload();
    if (built_) return;
    built_ = true;
    const auto& w = view.workload();
    const auto& cluster = view.cluster();
    // Workloads: one per group, one per job without a group.
    wl_of_.assign(w.jobs.size(), -1);
    pod_bound_.assign(w.jobs.size(), {});
    std::map<models::GroupId, int> by_group;
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
    nfr_ = static_cast<int>(cfg_.flavors.size()) * kResources;
    // Tree: ClusterQueues first, then cohorts.
    std::map<std::string, int> cohort_index;
    const int ncq = static_cast<int>(cfg_.cluster_queues.size());
    nodes_.resize(ncq + cfg_.cohorts.size());
    cqs_.resize(ncq);
    for (std::size_t c = 0; c < cfg_.cohorts.size(); ++c)
      cohort_index[cfg_.cohorts[c].name] = ncq + static_cast<int>(c);
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
                      !cqs_[q].covered[1] && !cqs_[q].covered[2];
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
        } else if (auto t = w.tenants.find(ns)) {
          ns_cq_[*t] = q;
        }
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

  // ------------------------------------------------------------------------------------------
  // Admission fair sharing (pkg/util/admissionfairsharing/admission_fair_sharing.go).

  bool afs_on(int q) const { return cfg_.afs.enabled && cqs_[q].cfg->usage_based_afs; }

  // calculateAlphaRate: the weight of the new sample after `elapsed`.
  double afs_alpha(Tick elapsed) const {
    if (cfg_.afs.half_life == 0) return 0.0;
    return 1.0 - std::pow(0.5, static_cast<double>(elapsed) / static_cast<double>(cfg_.afs.half_life));
  }

  static double afs_units(int r, std::int64_t amount) {
    return r == 2 ? static_cast<double>(amount) * 1048576.0 : static_cast<double>(amount);  // memory in bytes
  }

  // CalculateDecayedConsumed with the LocalQueue's admitted usage, at `elapsed` since the last update.
  void afs_decay(Lq& lq, Tick elapsed) const {
    const double a = afs_alpha(elapsed);
    for (int r = 0; r < kResources; ++r) lq.consumed[r] = lq.consumed[r] * (1 - a) + afs_units(r, lq.admitted[r]) * a;
  }

  // The LocalQueue reconciler's samples every usageSamplingInterval since the last update, up to
  // now (its admitted usage did not change in between: every change advances first). With a zero
  // half-life a sample resets the usage.
  void afs_advance(Lq& lq) {
    const Tick n = (now_ - lq.last) / cfg_.afs.sampling;
    if (n <= 0) return;
    if (cfg_.afs.half_life == 0) {
      lq.consumed.fill(0);
    } else {
      afs_decay(lq, n * cfg_.afs.sampling);
    }
    lq.last += n * cfg_.afs.sampling;
  }

  // CalculateUsage: the LocalQueue's weighted consumed usage plus pending entry penalties.
  double afs_usage(models::TenantId ns) const {
    const Lq& lq = lqs_[ns];
    const double alpha = afs_alpha(cfg_.afs.sampling);
    double usage = 0;
    for (int r = 0; r < kResources; ++r)
      usage += cfg_.afs.weights[r] * (lq.consumed[r] + afs_units(r, lq.penalized[r]) * alpha);
    if (lq.weight <= 0) return std::numeric_limits<double>::infinity();
    return usage / lq.weight;
  }

  std::array<std::int64_t, kResources> covered_request(int w) const {
    std::array<std::int64_t, kResources> out{};
    for (int r = 0; r < kResources; ++r)
      if (cqs_[wls_[w].cq].covered[r]) out[r] = wls_[w].req[r];
    return out;
  }

  // Quota reserved: the entry penalty alpha(sampling) * request is pushed (scheduler.go
  // updateEntryPenalty); a workload keeps one record however often it is reserved.
  void push_penalty(int w) {
    Wl& wl = wls_[w];
    if (!afs_on(wl.cq) || wl.afs_penalty) return;
    wl.afs_penalty = true;
    const auto req = covered_request(w);
    for (int r = 0; r < kResources; ++r) lqs_[wl.ns].penalized[r] += req[r];
  }

  void drop_penalty(int w) {
    Wl& wl = wls_[w];
    if (!wl.afs_penalty) return;
    wl.afs_penalty = false;
    const auto req = covered_request(w);
    for (int r = 0; r < kResources; ++r) lqs_[wl.ns].penalized[r] -= req[r];
  }

  // Admitted: its usage counts, and its entry penalty settles into the consumed usage after the
  // decay up to now (workload_controller.go updateAfsConsumedUsage).
  void afs_admit(int w) {
    Wl& wl = wls_[w];
    if (!afs_on(wl.cq)) return;
    Lq& lq = lqs_[wl.ns];
    afs_advance(lq);
    const auto req = covered_request(w);
    if (!wl.afs_counted)
      for (int r = 0; r < kResources; ++r) lq.admitted[r] += req[r];
    wl.afs_counted = true;
    afs_decay(lq, now_ - lq.last);
    if (wl.afs_penalty) {
      const double alpha = afs_alpha(cfg_.afs.sampling);
      for (int r = 0; r < kResources; ++r) lq.consumed[r] += afs_units(r, req[r]) * alpha;
      drop_penalty(w);
    }
    lq.last = now_;
  }

  // Quota released: its usage stops counting.
  void afs_release(int w) {
    Wl& wl = wls_[w];
    if (!wl.afs_counted) return;
    Lq& lq = lqs_[wl.ns];
    afs_advance(lq);
    const auto req = covered_request(w);
    for (int r = 0; r < kResources; ++r) lq.admitted[r] -= req[r];
    wl.afs_counted = false;
  }

  // The CQ's next workload: the first by priority and time, or with admission fair sharing the
  // first of the LocalQueue with the lowest usage (cluster_queue.go queueOrderingFunc).
  int head(int q) const {
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

  void active_insert(int w) {
    Cq& cq = cqs_[wls_[w].cq];
    cq.active.insert(key(w));
    if (afs_on(wls_[w].cq)) cq.by_lq[wls_[w].ns].insert(key(w));
  }

  void active_erase(int w) {
    Cq& cq = cqs_[wls_[w].cq];
    cq.active.erase(key(w));
    if (cq.parks) parking_.erase(wls_[w].cq, w);
    if (auto it = cq.by_lq.find(wls_[w].ns); it != cq.by_lq.end()) {
      it->second.erase(key(w));
      if (it->second.empty()) cq.by_lq.erase(it);
    }
  }

  // Whether the ClusterQueue has a workload in its active queue (fresh or requeued from parking).
  bool has_active(int q) const {
    const Cq& cq = cqs_[q];
    return !cq.active.empty() || (cq.parks && parking_.first(q, cq.cursor, ParkedIndex::kAny) >= 0);
  }

  // An inadmissible workload (just tried, active_erase'd) waits: parked when its pods all show
  // the reason it was given (pending and not in a retry back-off, or gone), else in the list.
  // It was the head of its queue, so every parked one before it is inadmissible already.
  void park(const Session& s, int w) {
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
  void unpark(int w) {
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

  // A bound on the GPUs a workload of a parking ClusterQueue can be admitted with now: it fits
  // only if its request is at most what one of the queue's flavors has available.
  std::int64_t fit_limit(int q) const {
    std::int64_t a = 0;
    for (int f : cqs_[q].flavors) a = std::max(a, available(q, fr(f, 0)));
    return a;
  }

  void compute_subtree(int i) {
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

  int root_of(int n) const {
    while (nodes_[n].parent >= 0) n = nodes_[n].parent;
    return n;
  }

  void compute_request(const ClusterView& view, int w) {
    Wl& wl = wls_[w];
    wl.req = {};
    for (JobIndex p : wl.pods) {
      if (view.state(p) != JobState::Pending && view.state(p) != JobState::Running) continue;
      const Job& j = jobs()[p];
      wl.req[0] += j.gpus;
      wl.req[1] += j.cpus;
      wl.req[2] += j.memory_mib;
    }
  }

  std::string reject_reason(int w) const {
    const Wl& wl = wls_[w];
    if (wl.st == WState::Rejected) return {};
    return "kueue: namespace \"" + workload_->tenants.name(jobs()[wl.pods.front()].tenant) +
           "\" has no LocalQueue (no ClusterQueue admits it)";
  }

  void reject(Session& s, int w, const std::string& reason) {
    Wl& wl = wls_[w];
    wl.st = WState::Rejected;
    drop_penalty(w);
    for (JobIndex p : wl.pods)
      if (s.state(p) == JobState::Pending) s.reject(p, reason);
  }

  // ------------------------------------------------------------------------------------------
  // Quota arithmetic (resource_node.go).

  void add_usage(int n, int k, std::int64_t d) {
    while (true) {
      TreeNode& node = nodes_[n];
      const std::int64_t before = node.usage[k];
      node.usage[k] += d;
      if (node.parent < 0) return;
      const std::int64_t l = node.local[k];
      d = std::max<std::int64_t>(0, node.usage[k] - l) - std::max<std::int64_t>(0, before - l);
      if (d == 0) return;
      n = node.parent;
    }
  }

  std::int64_t available(int n, int k) const {
    const TreeNode& node = nodes_[n];
    if (node.parent < 0) return node.subtree[k] - node.usage[k];
    const std::int64_t local_avail = std::max<std::int64_t>(0, node.local[k] - node.usage[k]);
    std::int64_t parent_avail = available(node.parent, k);
    if (node.blimit[k] >= 0) {
      const std::int64_t stored = node.subtree[k] - node.local[k];
      const std::int64_t used = std::max<std::int64_t>(0, node.usage[k] - node.local[k]);
      parent_avail = std::min(parent_avail, stored - used + node.blimit[k]);
    }
    return local_avail + parent_avail;
  }

  std::int64_t potential(int n, int k) const {
    const TreeNode& node = nodes_[n];
    if (node.parent < 0) return node.subtree[k];
    std::int64_t a = node.local[k] + potential(node.parent, k);
    if (node.blimit[k] >= 0) a = std::min(a, node.subtree[k] + node.blimit[k]);
    return a;
  }

  // The (flavor-resource, amount) pairs a workload charges in `flavor`.
  template <typename F>
  void for_each_fr(int w, int flavor, F&& f) const {
    const Wl& wl = wls_[w];
    const Cq& cq = cqs_[wl.cq];
    for (int r = 0; r < kResources; ++r)
      if (cq.covered[r] && wl.req[r] > 0) f(fr(flavor, r), wl.req[r]);
  }

  void charge(int w, int sign) {
    const Wl& wl = wls_[w];
    for_each_fr(w, wl.flavor, [&](int k, std::int64_t v) { add_usage(wl.cq, k, sign * v); });
  }

  void charge_as(int w, int flavor, int sign) {
    for_each_fr(w, flavor, [&](int k, std::int64_t v) { add_usage(wls_[w].cq, k, sign * v); });
  }

  bool fits(int w, int flavor, bool allow_borrowing) const {
    bool ok = true;
    const int q = wls_[w].cq;
    for_each_fr(w, flavor, [&](int k, std::int64_t v) {
      if (!allow_borrowing && nodes_[q].usage[k] + v > nodes_[q].nominal[k]) ok = false;
      if (v > available(q, k)) ok = false;
    });
    return ok;
  }

  bool cq_borrowing(int q, const std::vector<int>& frs) const {
    for (int k : frs)
      if (nodes_[q].usage[k] > nodes_[q].nominal[k]) return true;
    return false;
  }

  // ------------------------------------------------------------------------------------------
  // Fair sharing (fair_sharing.go).

  Drs drs(int n) const {
    const TreeNode& node = nodes_[n];
    Drs d{0, node.weight, false};
    if (node.parent < 0) return d;
    std::array<std::int64_t, kResources> borrowed{};
    bool any = false;
    for (int k = 0; k < nfr_; ++k) {
      const std::int64_t b = node.usage[k] - node.subtree[k];
      if (b > 0) {
        borrowed[k % kResources] += b;
        any = true;
      }
    }
    if (!any) return d;
    d.borrowing = true;
    for (int r = 0; r < kResources; ++r) {
      if (borrowed[r] == 0) continue;
      std::int64_t lendable = 0;
      for (int f = 0; f * kResources < nfr_; ++f) lendable += potential(node.parent, fr(f, r));
      if (lendable <= 0) continue;
      const double ratio = static_cast<double>(borrowed[r]) * 1000.0 / static_cast<double>(lendable);
      d.unweighted = std::max(d.unweighted, ratio);
    }
    return d;
  }

  // ------------------------------------------------------------------------------------------
  // Preemption (preemption.go).

  bool uses(int c, int flavor, const std::vector<int>& frs) const {
    const Wl& cw = wls_[c];
    if (cw.flavor != flavor) return false;
    for (int k : frs) {
      const int r = k % kResources;
      if (cqs_[cw.cq].covered[r] && cw.req[r] > 0) return true;
    }
    return false;
  }

  static bool policy_allows(PreemptionPolicy p, const Wl& pre, const Wl& cand) {
    switch (p) {
      case PreemptionPolicy::Never: return false;
      case PreemptionPolicy::LowerPriority: return cand.priority < pre.priority;
      case PreemptionPolicy::LowerOrNewerEqualPriority:
        return cand.priority < pre.priority || (cand.priority == pre.priority && pre.queue_ts < cand.queue_ts);
      case PreemptionPolicy::Any: return true;
    }
    return false;
  }

  std::vector<int> find_candidates(int w, int flavor, const std::vector<int>& frs) const {
    const Wl& wl = wls_[w];
    const Cq& cq = cqs_[wl.cq];
    const ClusterQueueConfig& c = *cq.cfg;
    std::vector<int> out;
    if (c.within_cluster_queue != PreemptionPolicy::Never) {
      for (int k : cq.holding)
        if (k != w && policy_allows(c.within_cluster_queue, wl, wls_[k]) && uses(k, flavor, frs)) out.push_back(k);
    }
    const bool cohort_policy =
        c.reclaim_within_cohort != PreemptionPolicy::Never || (!cfg_.fair_sharing && c.borrow_within_cohort);
    if (nodes_[wl.cq].parent >= 0 && cohort_policy) {
      // Classic: LowerPriority unless reclaimWithinCohort is Any (borrowWithinCohort alone too).
      const PreemptionPolicy p =
          c.reclaim_within_cohort == PreemptionPolicy::Any ? PreemptionPolicy::Any : PreemptionPolicy::LowerPriority;
      for (int q : subtree_cqs_[cq.root]) {
        if (q == wl.cq || !cq_borrowing(q, frs)) continue;
        for (int k : cqs_[q].holding)
          if (policy_allows(p, wl, wls_[k]) && uses(k, flavor, frs)) out.push_back(k);
      }
    }
    const int own = wl.cq;
    std::sort(out.begin(), out.end(), [&](int a, int b) { return candidate_less(a, b, own); });
    return out;
  }

  // CandidatesOrdering: evicted first, other CQs first, lower priority, most recently admitted, id.
  bool candidate_less(int a, int b, int own) const {
    const Wl& x = wls_[a];
    const Wl& y = wls_[b];
    const bool ex = x.st == WState::Evicting, ey = y.st == WState::Evicting;
    if (ex != ey) return ex;
    const bool ox = x.cq == own, oy = y.cq == own;
    if (ox != oy) return !ox;
    if (x.cq == y.cq && x.ns != y.ns && afs_on(x.cq)) {
      const double ux = afs_usage(x.ns), uy = afs_usage(y.ns);
      if (ux != uy) return ux > uy;  // the LocalQueue that used more is preempted first
    }
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.reserved_at != y.reserved_at) return x.reserved_at > y.reserved_at;
    return a < b;
  }

  std::string reason_for(int w, int target, const char* rule) const {
    const std::string& pre = nodes_[wls_[w].cq].name;
    const std::string& tgt = nodes_[wls_[target].cq].name;
    if (wls_[target].cq == wls_[w].cq)
      return std::string("kueue: ") + rule + ", " + pre + " preempts a lower-priority workload of its own";
    if (std::string_view(rule) == "borrowWithinCohort")
      return "kueue: borrowWithinCohort, " + pre + " borrows and preempts from " + tgt;
    if (std::string_view(rule).starts_with("fairSharing"))
      return std::string("kueue: ") + rule + ", " + pre + " preempts from " + tgt;
    return std::string("kueue: ") + rule + ", " + pre + " reclaims from borrowing " + tgt;
  }

  std::vector<Target> minimal_preemptions(int w, int flavor, const std::vector<int>& frs,
                                          const std::vector<int>& candidates, bool allow_borrowing,
                                          std::optional<std::int32_t> threshold) {
    const int q = wls_[w].cq;
    std::vector<Target> targets;
    bool ok = false;
    for (int c : candidates) {
      const char* rule = "withinClusterQueue";
      if (wls_[c].cq != q) {
        if (!cq_borrowing(wls_[c].cq, frs)) continue;
        rule = threshold ? "borrowWithinCohort" : "reclaimWithinCohort";
        if (threshold && wls_[c].priority >= *threshold) allow_borrowing = false;
      }
      charge(c, -1);
      targets.push_back({c, reason_for(w, c, rule)});
      if (fits(w, flavor, allow_borrowing)) {
        ok = true;
        break;
      }
    }
    if (!ok) {
      for (const auto& t : targets) charge(t.wl, +1);
      return {};
    }
    fill_back(w, flavor, targets, allow_borrowing);
    for (const auto& t : targets) charge(t.wl, +1);
    return targets;
  }

  void fill_back(int w, int flavor, std::vector<Target>& targets, bool allow_borrowing) {
    for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
      charge(targets[i].wl, +1);
      if (fits(w, flavor, allow_borrowing)) {
        targets[i] = std::move(targets.back());
        targets.pop_back();
      } else {
        charge(targets[i].wl, -1);
      }
    }
  }

  bool under_nominal(int q, const std::vector<int>& frs) const {
    for (int k : frs)
      if (nodes_[q].nominal[k] <= nodes_[q].usage[k]) return false;
    return true;
  }

  std::vector<Target> classical(int w, int flavor, const std::vector<int>& frs) {
    const Wl& wl = wls_[w];
    const ClusterQueueConfig& c = *cqs_[wl.cq].cfg;
    std::vector<int> cands = find_candidates(w, flavor, frs);
    std::vector<int> same;
    for (int k : cands)
      if (wls_[k].cq == wl.cq) same.push_back(k);
    if (same.size() == cands.size()) return minimal_preemptions(w, flavor, frs, cands, true, std::nullopt);
    if (c.borrow_within_cohort) {
      std::int32_t threshold = wl.priority;
      if (c.max_priority_threshold && *c.max_priority_threshold < wl.priority)
        threshold = *c.max_priority_threshold + 1;
      if (!under_nominal(wl.cq, frs)) {
        std::vector<int> kept;
        for (int k : cands)
          if (wls_[k].cq == wl.cq || wls_[k].priority < threshold) kept.push_back(k);
        cands = std::move(kept);
      }
      return minimal_preemptions(w, flavor, frs, cands, true, threshold);
    }
    if (under_nominal(wl.cq, frs)) {
      auto t = minimal_preemptions(w, flavor, frs, cands, false, std::nullopt);
      if (!t.empty()) return t;
    }
    return minimal_preemptions(w, flavor, frs, same, true, std::nullopt);
  }

  // TargetClusterQueueOrdering (fairsharing/ordering.go).
  struct Ordering {
    std::map<int, std::deque<int>> cands;
    std::set<int> pruned_cq, pruned_cohort, ancestors;
    bool has(int q) const {
      auto it = cands.find(q);
      return it != cands.end() && !it->second.empty();
    }
    int pop(int q) {
      const int c = cands[q].front();
      cands[q].pop_front();
      return c;
    }
  };

  Ordering make_ordering(int q, const std::vector<int>& cands) const {
    Ordering o;
    for (int p = nodes_[q].parent; p >= 0; p = nodes_[p].parent) o.ancestors.insert(p);
    for (int c : cands) o.cands[wls_[c].cq].push_back(c);
    return o;
  }

  int next_target(Ordering& o, int preemptor_cq, int cohort) const {
    int best_cq = -1;
    Drs best_cq_drs = kNegativeDrs;
    for (int q : nodes_[cohort].child_cqs) {
      if (o.pruned_cq.count(q)) continue;
      const Drs d = drs(q);
      if ((!d.borrowing && q != preemptor_cq) || !o.has(q)) {
        o.pruned_cq.insert(q);
      } else if (best_cq >= 0 && compare_drs(d, best_cq_drs) == 0) {
        if (candidate_less(o.cands.at(q).front(), o.cands.at(best_cq).front(), preemptor_cq)) best_cq = q;
      } else if (compare_drs(d, best_cq_drs) > 0) {
        best_cq_drs = d;
        best_cq = q;
      }
    }
    int best_cohort = -1;
    Drs best_cohort_drs = kNegativeDrs;
    for (int c : nodes_[cohort].child_cohorts) {
      if (o.pruned_cohort.count(c)) continue;
      const Drs d = drs(c);
      if (!d.borrowing && !o.ancestors.count(c)) {
        o.pruned_cohort.insert(c);
      } else if (compare_drs(d, best_cohort_drs) >= 0) {
        best_cohort_drs = d;
        best_cohort = c;
      }
    }
    if (best_cohort < 0 && best_cq < 0) {
      o.pruned_cohort.insert(cohort);
      return -1;
    }
    if (best_cohort >= 0 && compare_drs(best_cohort_drs, best_cq_drs) >= 0)
      return next_target(o, preemptor_cq, best_cohort);
    return best_cq;
  }

  // The children of the least common ancestor of a and b on their paths (getAlmostLCAs).
  std::pair<int, int> almost_lcas(int a, int b) const {
    std::vector<int> pa{a}, pb{b};
    for (int p = nodes_[a].parent; p >= 0; p = nodes_[p].parent) pa.push_back(p);
    for (int p = nodes_[b].parent; p >= 0; p = nodes_[p].parent) pb.push_back(p);
    while (pa.size() > 1 && pb.size() > 1 && pa[pa.size() - 2] == pb[pb.size() - 2]) {
      pa.pop_back();
      pb.pop_back();
    }
    return {pa[pa.size() - 2], pb[pb.size() - 2]};
  }

  static bool strategy_passes(FsStrategy s, const Drs& preemptor_new, const Drs& target_old, const Drs& target_new) {
    if (s == FsStrategy::LessThanOrEqualToFinalShare) return compare_drs(preemptor_new, target_new) <= 0;
    return compare_drs(preemptor_new, target_old) < 0;
  }

  bool fits_fair(int w, int flavor) {
    charge_as(w, flavor, -1);
    const bool ok = fits(w, flavor, true);
    charge_as(w, flavor, +1);
    return ok;
  }

  std::vector<Target> fair_preemptions(int w, int flavor, const std::vector<int>& frs) {
    const int q = wls_[w].cq;
    const std::vector<int> cands = find_candidates(w, flavor, frs);
    if (cands.empty()) return {};
    charge_as(w, flavor, +1);
    std::vector<Target> targets;
    std::vector<int> retry;
    bool ok = false;
    auto take = [&](int c, std::string reason) {
      charge(c, -1);
      targets.push_back({c, std::move(reason)});
      return fits_fair(w, flavor);
    };
    const std::string rule0 =
        std::string("fairSharing ") + (cfg_.strategies[0] == FsStrategy::LessThanOrEqualToFinalShare
                                           ? "LessThanOrEqualToFinalShare"
                                           : "LessThanInitialShare");
    Ordering o = make_ordering(q, cands);
    if (nodes_[q].parent < 0) {
      while (!ok && o.has(q)) ok = take(o.pop(q), reason_for(w, q, "withinClusterQueue"));
    } else {
      const int root = cqs_[q].root;
      while (!ok && !o.pruned_cohort.count(root)) {
        const int t = next_target(o, q, root);
        if (t < 0) continue;
        if (t == q) {
          const int c = o.pop(t);
          ok = take(c, reason_for(w, c, "withinClusterQueue"));
          continue;
        }
        const auto [pa, ta] = almost_lcas(q, t);
        const Drs pre_new = drs(pa), tgt_old = drs(ta);
        while (o.has(t)) {
          const int c = o.pop(t);
          charge(c, -1);
          const Drs tgt_new = drs(ta);
          charge(c, +1);
          if (strategy_passes(cfg_.strategies[0], pre_new, tgt_old, tgt_new)) {
            ok = take(c, reason_for(w, c, rule0.c_str()));
            break;
          }
          retry.push_back(c);
        }
      }
      if (!ok && cfg_.strategies.size() > 1 && !retry.empty()) {
        Ordering o2 = make_ordering(q, retry);
        while (!ok && !o2.pruned_cohort.count(root)) {
          const int t = next_target(o2, q, root);
          if (t < 0) continue;
          const auto [pa, ta] = almost_lcas(q, t);
          const Drs pre_new = drs(pa), tgt_old = drs(ta);
          const int c = o2.pop(t);
          if (compare_drs(pre_new, tgt_old) < 0) ok = take(c, reason_for(w, c, "fairSharing LessThanInitialShare"));
          o2.pruned_cq.insert(t);
        }
      }
    }
    charge_as(w, flavor, -1);
    if (!ok) {
      for (const auto& t : targets) charge(t.wl, +1);
      return {};
    }
    fill_back(w, flavor, targets, true);
    for (const auto& t : targets) charge(t.wl, +1);
    return targets;
  }

  // ------------------------------------------------------------------------------------------
  // Flavor assignment (flavorassigner.go).

  bool flavor_matches(int w, int flavor) const {
    const auto& pools = flavor_pools_[flavor];
    for (JobIndex p : wls_[w].pods) {
      bool any = false;
      for (models::PoolId pool = 0; pool < pools.size() && !any; ++pool)
        any = pools[pool] && pool_eligible(*cluster_, pool, jobs()[p], *workload_);
      if (!any) return false;
    }
    return true;
  }

  Assignment try_flavor(int w, int flavor) {
    const Wl& wl = wls_[w];
    const int q = wl.cq;
    const ClusterQueueConfig& c = *cqs_[q].cfg;
    Assignment a;
    a.flavor = flavor;
    std::vector<int> need;
    bool nofit = false;
    for_each_fr(w, flavor, [&](int k, std::int64_t v) {
      if (nofit) return;
      if (v > potential(q, k)) {
        nofit = true;
        a.exceeds_max = true;
        return;
      }
      if (nodes_[q].usage[k] + v > nodes_[q].nominal[k]) a.borrow = true;
      if (v <= available(q, k)) return;
      const bool can_preempt_while_borrowing =
          c.borrow_within_cohort || (cfg_.fair_sharing && c.reclaim_within_cohort != PreemptionPolicy::Never);
      if (v <= nodes_[q].nominal[k] || can_preempt_while_borrowing) {
        need.push_back(k);
      } else {
        nofit = true;
      }
    });
    if (nofit) {
      a.mode = Mode::NoFit;
      return a;
    }
    if (need.empty()) {
      a.mode = Mode::Fit;
      // TAS: a required topology must hold the whole Workload in one domain of its level or below.
      if (tas(w) && cfg_.tas_required && tas_domain(w, flavor, nullptr) == models::kNoSwitch) {
        a.mode = Mode::NoFit;
        a.no_domain = true;
      }
      return a;
    }
    a.targets = cfg_.fair_sharing ? fair_preemptions(w, flavor, need) : classical(w, flavor, need);
    if (a.targets.empty()) {
      a.mode = Mode::NoFit;
      return a;
    }
    a.mode = Mode::Preempt;
    for (const auto& t : a.targets) charge(t.wl, -1);
    a.borrow = false;
    for_each_fr(w, flavor, [&](int k, std::int64_t v) {
      if (nodes_[q].usage[k] + v > nodes_[q].nominal[k]) a.borrow = true;
    });
    for (const auto& t : a.targets) charge(t.wl, +1);
    return a;
  }

  int rank(const Assignment& a, bool prefer_borrowing) const {
    if (a.mode == Mode::NoFit) return 10;
    if (a.mode == Mode::Fit && !a.borrow) return 0;
    if (a.mode == Mode::Preempt && a.borrow) return 3;
    const bool fit_borrow = a.mode == Mode::Fit;
    return prefer_borrowing ? (fit_borrow ? 1 : 2) : (fit_borrow ? 2 : 1);
  }

  Assignment assign(int w) {
    const Cq& cq = cqs_[wls_[w].cq];
    const ClusterQueueConfig& c = *cq.cfg;
    Assignment best;
    bool all_exceed = true;
    for (int f : cq.flavors) {
      if (!flavor_matches(w, f)) continue;
      Assignment a = try_flavor(w, f);
      all_exceed = all_exceed && a.exceeds_max;
      if (rank(a, c.prefer_borrowing) < rank(best, c.prefer_borrowing)) best = a;
      if (a.mode == Mode::Fit && !a.borrow) break;
      if (a.mode == Mode::Fit && c.stop_when_can_borrow) break;
      if (a.mode == Mode::Preempt && c.stop_when_can_preempt) break;
    }
    if (best.mode == Mode::NoFit) best.exceeds_max = all_exceed;
    return best;
  }

  // ------------------------------------------------------------------------------------------
  // Queues and the admission cycle (scheduler.go).

  std::tuple<std::int64_t, Tick, int> key(int w) const {
    return {-static_cast<std::int64_t>(wls_[w].priority), wls_[w].queue_ts, w};
  }

  void enqueue(int w) {
    Wl& wl = wls_[w];
    wl.st = WState::Queued;
    wl.flavor = -1;
    wl.inadmissible = false;
    active_insert(w);
  }

  // A workload finished or was evicted in this tree: inadmissible workloads are requeued.
  void requeue_inadmissible(int root) {
    for (int q : subtree_cqs_[root]) {
      for (int w : std::exchange(cqs_[q].inadmissible, {})) {
        if (wls_[w].st != WState::Queued || !wls_[w].inadmissible) continue;
        wls_[w].inadmissible = false;
        active_insert(w);
      }
      cqs_[q].cursor = ParkedIndex::min_key();  // the parked ones too
    }
  }

  void release_quota(int w) {
    Wl& wl = wls_[w];
    charge(w, -1);
    afs_release(w);
    cqs_[wl.cq].holding.erase(w);
    requeue_inadmissible(cqs_[wl.cq].root);
    released_ = true;
  }

  void pending_reason(Session& s, int w, const std::string& reason) {
    for (JobIndex p : wls_[w].pods)
      if (s.state(p) == JobState::Pending) s.pending_reason(p, reason);
  }

  struct Entry {
    int wl;
    Assignment a;
  };

  void admission_cycles(Session& s) {
    while (true) {
      int busy = -1, nbusy = 0;
      for (std::size_t q = 0; q < cqs_.size() && nbusy < 2; ++q) {
        if (!has_active(static_cast<int>(q))) continue;
        busy = static_cast<int>(q);
        ++nbusy;
      }
      if (nbusy == 1 && cqs_[busy].parks) {
        walk(s, busy);
        return;
      }
      if (nbusy > 1) skip_cycles();
      std::vector<Entry> entries;
      for (std::size_t q = 0; q < cqs_.size(); ++q) {
        if (!has_active(static_cast<int>(q))) continue;
        const int w = head(static_cast<int>(q));
        entries.push_back({w, assign(w)});
      }
      if (entries.empty()) return;
      if (!cfg_.fair_sharing) {
        std::stable_sort(entries.begin(), entries.end(), [&](const Entry& x, const Entry& y) {
          if (x.a.borrow != y.a.borrow) return !x.a.borrow;
          return key(x.wl) < key(y.wl);
        });
      }
      bool progressed = false;
      std::set<int> targeted;
      std::vector<std::pair<int, int>> claims;  // preemptors' usage, held for the rest of the cycle
      std::vector<bool> done(entries.size(), false);
      for (std::size_t n = 0; n < entries.size(); ++n) {
        const std::size_t i = cfg_.fair_sharing ? pop_fair(entries, done) : n;
        done[i] = true;
        const Entry& e = entries[i];
        progressed = process(s, e, targeted, claims) || progressed;
      }
      for (const auto& [w, flavor] : claims) charge_as(w, flavor, -1);
      if (!progressed) return;
    }
  }

  // The cycles while one parking ClusterQueue alone has work: one entry each, its head, until
  // its queue is empty (it never preempts nor blocks). The head is the first of the fresh
  // workloads and the parked ones whose GPUs are within fit_limit: a parked one before it would
  // not fit, and trying it would only move it to the inadmissible side, as the cursor does.
  void walk(Session& s, int q) {
    Cq& cq = cqs_[q];
    std::set<int> targeted;
    std::vector<std::pair<int, int>> claims;
    while (true) {
      const int f = cq.active.empty() ? -1 : std::get<2>(*cq.active.begin());
      const int m = parking_.first(q, cq.cursor, fit_limit(q));
      if (f < 0 && m < 0) {
        cq.cursor = ParkedIndex::max_key();
        return;
      }
      const int w = m < 0 || (f >= 0 && key(f) < key(m)) ? f : m;
      cq.cursor = key(w);
      const bool progressed = process(s, Entry{w, assign(w)}, targeted, claims);
      for (const auto& [cw, flavor] : std::exchange(claims, {})) charge_as(cw, flavor, -1);
      targeted.clear();
      if (!progressed) return;
    }
  }

  // Several ClusterQueues have work, all of them parking: a cycle whose heads are all parked
  // workloads with more GPUs than their queue has available changes nothing but the cursors (its
  // state is that of the cycle before). The k such cycles before one with another head, or with a
  // queue run dry, are passed over at once: each queue's cursor moves past its next k parked ones.
  void skip_cycles() {
    std::size_t k = std::numeric_limits<std::size_t>::max();
    std::vector<std::pair<int, std::size_t>> busy;  // (ClusterQueue, rank of its cursor)
    for (int q = 0; q < static_cast<int>(cqs_.size()); ++q) {
      if (!has_active(q)) continue;
      const Cq& cq = cqs_[q];
      if (!cq.parks) return;  // its head is tried every cycle
      ParkedIndex::Key stop = cq.active.empty() ? ParkedIndex::max_key() : *cq.active.begin();
      if (const int m = parking_.first(q, cq.cursor, fit_limit(q)); m >= 0) stop = std::min(stop, key(m));
      const std::size_t from = parking_.rank(q, cq.cursor);
      k = std::min(k, parking_.rank(q, stop) - from);
      if (k == 0) return;
      busy.emplace_back(q, from);
    }
    if (busy.empty()) return;
    for (const auto& [q, from] : busy) cqs_[q].cursor = ParkedIndex::after(parking_.nth(q, from + k - 1));
  }

  bool process(Session& s, const Entry& e, std::set<int>& targeted, std::vector<std::pair<int, int>>& claims) {
    const int w = e.wl;
    Wl& wl = wls_[w];
    Cq& cq = cqs_[wl.cq];
    const std::string& cq_name = nodes_[wl.cq].name;
    switch (e.a.mode) {
      case Mode::NoFit: {
        pending_reason(s, w,
                       e.a.no_domain ? tas_reason(w)
                       : e.a.exceeds_max
                           ? "quota: request exceeds the maximum quota of ClusterQueue " + cq_name + " (kueue)"
                           : "quota: waiting for quota in ClusterQueue " + cq_name + " (kueue)");
        if (cq.cfg->strict_fifo) return false;  // the head blocks its queue
        active_erase(w);
        wl.inadmissible = true;
        park(s, w);
        return true;
      }
      case Mode::Fit: {
        if (!fits(w, e.a.flavor, true)) return false;  // no longer fits after an earlier admission
        reserve(s, w, e.a.flavor);
        return true;
      }
      case Mode::Preempt: {
        for (const auto& t : e.a.targets)
          if (targeted.count(t.wl)) return false;
        // Skipped when it would no longer fit once its targets are gone (an earlier entry of the
        // cycle took the room).
        for (const auto& t : e.a.targets) charge(t.wl, -1);
        const bool fits_after = fits(w, e.a.flavor, true);
        for (const auto& t : e.a.targets) charge(t.wl, +1);
        if (!fits_after) return false;
        // The preemptor's usage counts for the rest of the cycle (scheduler.go cq.AddUsage), so
        // later entries do not take the quota its victims release.
        charge_as(w, e.a.flavor, +1);
        claims.emplace_back(w, e.a.flavor);
        for (const auto& t : e.a.targets) {
          targeted.insert(t.wl);
          if (wls_[t.wl].st != WState::Evicting) evict(s, t.wl, w, t.reason, false);
        }
        pending_reason(s, w, "preemption: kueue preempts to fit the workload in ClusterQueue " + cq_name);
        return false;
      }
    }
    return false;
  }

  // The fair-sharing tournament (fair_sharing_iterator.go): the next entry to process.
  std::size_t pop_fair(const std::vector<Entry>& es, const std::vector<bool>& done) {
    std::size_t first = 0;
    while (done[first]) ++first;
    const int q0 = wls_[es[first].wl].cq;
    if (nodes_[q0].parent < 0) return first;
    const int root = cqs_[q0].root;
    std::map<std::pair<int, int>, Drs> values;  // (cohort, entry) -> DRS of its child on the path
    for (std::size_t i = 0; i < es.size(); ++i) {
      if (done[i] || cqs_[wls_[es[i].wl].cq].root != root) continue;
      const int w = es[i].wl;
      const bool charged = es[i].a.mode != Mode::NoFit && es[i].a.flavor >= 0;
      if (charged) charge_as(w, es[i].a.flavor, +1);
      for (int n = wls_[w].cq; nodes_[n].parent >= 0; n = nodes_[n].parent)
        values[{nodes_[n].parent, static_cast<int>(i)}] = drs(n);
      if (charged) charge_as(w, es[i].a.flavor, -1);
    }
    const int winner = tournament(root, es, done, values);
    return static_cast<std::size_t>(winner);
  }

  int tournament(int cohort, const std::vector<Entry>& es, const std::vector<bool>& done,
                 const std::map<std::pair<int, int>, Drs>& values) const {
    std::vector<int> cands;
    for (int c : nodes_[cohort].child_cohorts)
      if (int t = tournament(c, es, done, values); t >= 0) cands.push_back(t);
    for (std::size_t i = 0; i < es.size(); ++i)
      if (!done[i] && nodes_[wls_[es[i].wl].cq].parent == cohort) cands.push_back(static_cast<int>(i));
    if (cands.empty()) return -1;
    auto less = [&](int a, int b) {
      const int c = compare_drs(values.at({cohort, a}), values.at({cohort, b}));
      if (c != 0) return c < 0;
      const Wl& x = wls_[es[a].wl];
      const Wl& y = wls_[es[b].wl];
      if (x.priority != y.priority) return x.priority > y.priority;
      if (x.queue_ts != y.queue_ts) return x.queue_ts < y.queue_ts;
      return es[a].wl < es[b].wl;
    };
    int best = cands[0];
    for (std::size_t i = 1; i < cands.size(); ++i)
      if (less(cands[i], best)) best = cands[i];
    return best;
  }

  // ------------------------------------------------------------------------------------------
  // Workload lifecycle.

  void reserve(Session& s, int w, int flavor) {
    Wl& wl = wls_[w];
    Cq& cq = cqs_[wl.cq];
    active_erase(w);
    wl.flavor = flavor;
    charge(w, +1);
    push_penalty(w);
    cq.holding.insert(w);
    wl.reserved_at = now_;
    wl.st = WState::Reserved;
    // The workloads it evicted return to their queues.
    if (auto it = parked_.find(w); it != parked_.end()) {
      for (int p : it->second) {
        Wl& pw = wls_[p];
        if (pw.st != WState::Queued || pw.backoff_until <= now_ + 1) continue;
        backoff_.erase({pw.backoff_until, p});
        pw.backoff_until = now_ + 1;
        backoff_.emplace(pw.backoff_until, p);
      }
      parked_.erase(it);
    }
    if (!cq.checks.empty()) {
      Tick delay = 0;
      for (int c : cq.checks) delay = std::max(delay, cfg_.admission_checks[c].delay);
      wl.checks_at = now_ + delay;
      checks_.emplace(wl.checks_at, w);
      pending_reason(
          s, w,
          "admission: QuotaReserved in ClusterQueue " + nodes_[wl.cq].name + ", waiting for admission checks (kueue)");
      return;
    }
    admit(w);
  }

  void admit(int w) {
    Wl& wl = wls_[w];
    afs_admit(w);
    wl.st = WState::Admitted;
    wl.failed_epoch = UINT64_MAX;
    placing_.insert(place_key(w));
    if (cfg_.wait_for_pods_ready) {
      wl.ready_deadline = now_ + cfg_.pods_ready_timeout;
      ready_.emplace(wl.ready_deadline, w);
    }
  }

  std::tuple<std::int64_t, Tick, int> place_key(int w) const {
    return {-static_cast<std::int64_t>(wls_[w].priority), wls_[w].reserved_at, w};
  }

  void clear_ready(int w) {
    Wl& wl = wls_[w];
    if (wl.ready_deadline >= 0) ready_.erase({wl.ready_deadline, w});
    wl.ready_deadline = -1;
  }

  void evict(Session& s, int w, int by, const std::string& reason, bool timeout) {
    Wl& wl = wls_[w];
    const JobIndex by_job = by >= 0 ? wls_[by].pods.front() : models::kNoJob;
    if (wl.st == WState::Reserved) {
      checks_.erase({wl.checks_at, w});
    } else if (wl.st == WState::Holding) {
      holds_.erase({wl.hold_until, w});
    }
    placing_.erase(place_key(w));
    clear_ready(w);
    wl.st = WState::Evicting;
    wl.evicted_by_timeout = timeout;
    wl.evicted_by = by;
    for (JobIndex p : wl.pods) {
      if (s.state(p) == JobState::Pending) drop_bound(s, p, reason);
      if (s.state(p) != JobState::Running || s.terminating(p)) continue;
      const std::string why =
          s.preempt(p, PreemptMode::Requeue, cfg_.scheduler.termination_grace_period, by_job, reason);
      HEADROOM_ASSERT(why.empty(), "kueue preemption refused: " + why);
    }
    dirty_.push_back(w);
  }

  void finish_eviction(Session& s, int w) {
    Wl& wl = wls_[w];
    release_quota(w);
    if (wl.ended == static_cast<int>(wl.pods.size())) {
      wl.st = WState::Finished;
      drop_penalty(w);
      return;
    }
    compute_request(s, w);
    wl.queue_ts = now_;
    if (wl.evicted_by_timeout) {
      ++wl.requeues;
      if (cfg_.backoff_limit >= 0 && wl.requeues > cfg_.backoff_limit) {
        reject(s, w,
               "kueue: deactivated after " + std::to_string(cfg_.backoff_limit) +
                   " waitForPodsReady requeues (backoffLimitCount)");
        return;
      }
      Tick d = cfg_.backoff_base;
      for (int i = 1; i < wl.requeues && d < cfg_.backoff_max; ++i) d *= 2;
      d = std::min(d, cfg_.backoff_max);
      wl.st = WState::Queued;
      wl.flavor = -1;
      wl.backoff_until = now_ + d;
      backoff_.emplace(wl.backoff_until, w);
      pending_reason(s, w, "admission: requeued after a waitForPodsReady timeout, in backoff (kueue)");
      return;
    }
    // Back in its queue 1 ms later (the workload controller's requeue), so the preemptor that
    // evicted it is admitted first rather than the two trading the quota at one instant.
    // While its preemptor is still pending it waits (at most a grace period) for the preemptor to
    // reserve the quota, so the two do not trade it back and forth.
    wl.st = WState::Queued;
    wl.flavor = -1;
    wl.backoff_until = now_ + 1;
    if (wl.evicted_by >= 0 && wls_[wl.evicted_by].st == WState::Queued) {
      wl.backoff_until = now_ + std::max<Tick>(1, cfg_.scheduler.termination_grace_period);
      parked_[wl.evicted_by].push_back(w);
    }
    backoff_.emplace(wl.backoff_until, w);
  }

  void workload_done(int w) {
    Wl& wl = wls_[w];
    placing_.erase(place_key(w));
    clear_ready(w);
    if (wl.ray && cfg_.ray_delete_after_idle > 0) {
      wl.st = WState::Holding;
      wl.hold_until = now_ + cfg_.ray_delete_after_idle;
      holds_.emplace(wl.hold_until, w);
      return;
    }
    wl.st = WState::Finished;
    drop_penalty(w);
    release_quota(w);
  }

  void process_dirty(Session& s) {
    while (!dirty_.empty()) {
      std::vector<int> batch = std::exchange(dirty_, {});
      std::sort(batch.begin(), batch.end());
      batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
      for (int w : batch) {
        Wl& wl = wls_[w];
        if (wl.st == WState::Evicting && wl.running == 0) {
          finish_eviction(s, w);
        } else if (wl.st == WState::Admitted && wl.ended == static_cast<int>(wl.pods.size())) {
          workload_done(w);
        } else if (wl.st == WState::Admitted && wl.running + wl.ended < static_cast<int>(wl.pods.size())) {
          // A pod is pending again (e.g. its node failed): it is placed again.
          wl.failed_epoch = UINT64_MAX;
          placing_.insert(place_key(w));
        }
      }
    }
  }

  void process_timers(Session& s) {
    while (!checks_.empty() && checks_.begin()->first <= now_) {
      const int w = checks_.begin()->second;
      checks_.erase(checks_.begin());
      Wl& wl = wls_[w];
      if (wl.st == WState::Finished) continue;  // its pods were withdrawn meanwhile
      const int attempt = wl.check_attempts++;
      std::string retry;
      for (int c : cqs_[wl.cq].checks)
        if (attempt < cfg_.admission_checks[c].retries) retry = cfg_.admission_checks[c].name;
      if (retry.empty()) {
        admit(w);
        continue;
      }
      // Retry: the quota is released and the workload requeued.
      release_quota(w);
      wl.queue_ts = now_;
      enqueue(w);
      pending_reason(s, w, "admission: check " + retry + " answered Retry; requeued (kueue)");
    }
    while (!ready_.empty() && ready_.begin()->first <= now_) {
      const int w = ready_.begin()->second;
      ready_.erase(ready_.begin());
      Wl& wl = wls_[w];
      wl.ready_deadline = -1;
      if (wl.st == WState::Admitted) {
        evict(s, w, -1,
              "kueue: waitForPodsReady, " + wl_name(*workload_, wl.pods) + " not ready within " +
                  std::to_string(cfg_.pods_ready_timeout / sim::kSecond) + " s of admission",
              true);
      }
    }
    while (!backoff_.empty() && backoff_.begin()->first <= now_) {
      const int w = backoff_.begin()->second;
      backoff_.erase(backoff_.begin());
      wls_[w].backoff_until = -1;
      enqueue(w);
    }
    while (!holds_.empty() && holds_.begin()->first <= now_) {
      const int w = holds_.begin()->second;
      holds_.erase(holds_.begin());
      wls_[w].st = WState::Finished;
      release_quota(w);
    }
    process_dirty(s);
  }

  // ------------------------------------------------------------------------------------------
  // Topology-aware scheduling (Kueue TAS, podset-required/preferred-topology over cluster.topology).

  bool tas(int w) const {
    if (cfg_.tas_level <= 0 || !cluster_->spec().topology || wls_[w].pods.empty()) return false;
    if (cfg_.tas_kinds.empty()) return true;
    const auto kind = jobs()[wls_[w].pods.front()].kind;
    return std::find(cfg_.tas_kinds.begin(), cfg_.tas_kinds.end(), kind) != cfg_.tas_kinds.end();
  }

  // The domain for workload w on `flavor`: the lowest-level switch (at most the required level)
  // whose up nodes of the flavor have free GPUs for the Workload's pods (those still pending under
  // `session`, or all of them), best fit; kNoSwitch when none.
  models::SwitchId tas_domain(int w, int flavor, const Session* session) const {
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

  std::string tas_reason(int w) const {
    return "topology: no domain at level " + std::to_string(cfg_.tas_level) +
           " or below (cluster.topology) has free GPUs for the whole workload in ClusterQueue " +
           nodes_[wls_[w].cq].name + " (kueue TAS, podset-required-topology)";
  }

  // The job's placement as worker pods: one pod when it fits a node, else node-sized pods (or
  // gpus_per_node), each on the best node by kube-scheduler filter and score; only on `allowed`
  // nodes (ascending) when given.
  // ------------------------------------------------------------------------------------------
  // Placement by kube-scheduler rules.

  // The job's pods (models::pod_gpus over the widest node of the flavor's eligible pools).
  std::vector<std::int32_t> pod_sizes(const ClusterView& view, const Job& job, int flavor) const {
    const auto& cluster = view.cluster();
    std::int32_t max_gpn = 0;
    for (models::PoolId p = 0; p < cluster.pool_count(); ++p)
      if (flavor_pools_[flavor][p] && pool_eligible(cluster, p, job, *workload_))
        max_gpn = std::max(max_gpn, cluster.spec().pools[p].gpus_per_node);
    return models::pod_gpus(job, max_gpn);
  }

  // With `per_pod`, pods `first`.. are placed one after the other until one fits nowhere; the
  // result has one slice per pod placed (kube-scheduler binds each pod that fits).
  std::optional<models::Placement> place(const ClusterView& view, const Job& job, int flavor,
                                         const std::vector<NodeId>* allowed = nullptr, std::size_t first = 0,
                                         bool per_pod = false) {
    const auto& cluster = view.cluster();
    const std::vector<std::int32_t> sizes = pod_sizes(view, job, flavor);
    const auto count = static_cast<std::int32_t>(sizes.size());
    models::Placement pods_out;
    std::vector<std::pair<NodeId, models::Slice>> taken;  // tentative, per node
    // Where each node is in `taken` (taken_at_, all -1 again when this returns): a wide job's
    // pods look their nodes up in O(1) rather than scanning the pods placed before them.
    if (taken_at_.size() != cluster.nodes().size()) taken_at_.assign(cluster.nodes().size(), -1);
    struct Forget {
      std::vector<int>& at;
      const std::vector<std::pair<NodeId, models::Slice>>& taken;
      ~Forget() {
        for (const auto& t : taken) at[t.first] = -1;
      }
    } forget{taken_at_, taken};
    auto taken_on = [&](NodeId id) -> models::Slice* {
      const int i = taken_at_[id];
      return i < 0 ? nullptr : &taken[static_cast<std::size_t>(i)].second;
    };
    // Eligible pools, and whether every node scores alike (no modelled cpu/memory and GPUs not
    // scored): then the lowest-index feasible node wins and scoring is skipped.
    std::vector<models::PoolId> eligible;
    bool constant_score = cfg_.scheduler.scoring.gpu_weight == 0 || job.gpus == 0;
    for (models::PoolId p = 0; p < cluster.pool_count(); ++p) {
      if (!flavor_pools_[flavor][p] || !pool_eligible(cluster, p, job, *workload_)) continue;
      eligible.push_back(p);
      const auto& spec = cluster.spec().pools[p];
      constant_score = constant_score && spec.cpus_per_node == 0 && spec.memory_gib == 0;
    }
    for (auto i = static_cast<std::int32_t>(first); i < count; ++i) {
      const std::uint64_t stamp = ++score_stamp_;  // node_score's remembered scores are for this pod
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
      // Only up nodes of the eligible pools with enough free GPUs (the cluster's index).
      for (models::PoolId p : eligible) {
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
            k8s::NodeUsage u = usage_[id];
            if (t) {
              u.gpus += t->gpus;
              u.cpu_milli += std::int64_t{t->cpus} * 1000;
              u.memory_mib += t->memory_mib;
              u.nonzero_cpu_milli += std::int64_t{t->cpus} * 1000;
              u.nonzero_memory_mib += t->memory_mib;
            }
            const std::int64_t total = node_score(cluster.node(id), u, pod, stamp);
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
        taken.push_back({best, models::Slice{best, pod.gpus, pod.cpus, pod.memory_mib}});
      }
    }
    if (per_pod) return pods_out;
    models::Placement out;
    for (auto& [n, sl] : taken) out.push_back(sl);
    return out;
  }

  // The weighted score of `pod` on a node, which k8s::score_node computes from the node's
  // capacity and usage alone: remembered for the pod (stamp) by those values, since many of
  // thousands of nodes are alike (idle, or running the same shapes).
  std::int64_t node_score(const models::Node& n, const k8s::NodeUsage& u, const Job& pod, std::uint64_t stamp) {
    const std::array<std::int64_t, 8> key{n.gpus,      n.cpus,       n.memory_mib,        u.gpus,
                                          u.cpu_milli, u.memory_mib, u.nonzero_cpu_milli, u.nonzero_memory_mib};
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (std::int64_t v : key) h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ull;
    ScoreMemo& m = score_memo_[(h >> 32) % score_memo_.size()];
    if (m.stamp == stamp && m.key == key) return m.total;
    const k8s::NodeScores sc = k8s::score_node(cfg_.scheduler.scoring, n, u, pod);
    m = {stamp, key, cfg_.scheduler.fit_weight * sc.fit + cfg_.scheduler.balanced_weight * sc.balanced};
    return m.total;
  }
  struct ScoreMemo {
    std::uint64_t stamp = 0;
    std::array<std::int64_t, 8> key{};
    std::int64_t total = 0;
  };
  std::array<ScoreMemo, 256> score_memo_{};
  std::uint64_t score_stamp_ = 0;

  void add_usage(const models::Slice& sl, int sign) { k8s::add_slice_usage(usage_[sl.node], sl, sign); }

  // An admitted job wider than one node: kube-scheduler binds each of its pods that fits (no gang
  // at placement); the job runs once its last pod binds. True when it started.
  bool place_wide(Session& s, const Wl& wl, JobIndex p, std::size_t n, const std::vector<NodeId>* allowed) {
    const Job& job = jobs()[p];
    const std::size_t had = s.bound(p).size();
    const auto got = place(s, job, wl.flavor, allowed, had, true);
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
                  "kueue: admitted by ClusterQueue " + nodes_[wl.cq].name + " (flavor " + cfg_.flavors[wl.flavor].name +
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
                            std::to_string(pod_bound_[p].size()) + " of " + std::to_string(n) +
                            " pods bound (holding " + std::to_string(held) +
                            " GPUs); no node has room for the next (kube-scheduler, no gang at placement)");
    return false;
  }

  // Pods bound to a pending job are deleted (its workload is evicted): their GPUs go back.
  void drop_bound(Session& s, JobIndex p, const std::string& reason) {
    if (pod_bound_[p].empty()) return;
    const std::string why = s.unbind(p, reason);
    HEADROOM_ASSERT(why.empty(), "kueue unbind refused: " + why);
    for (const auto& sl : pod_bound_[p]) add_usage(sl, -1);
    pod_bound_[p].clear();
  }

  void place_pods(Session& s) {
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
      for (JobIndex p : wl.pods) {
        if (s.state(p) != JobState::Pending) continue;
        if (s.retrying(p)) {
          // Killed by a failure: its controller creates the pod again after the retry back-off.
          all = false;
          continue;
        }
        const Job& job = jobs()[p];
        if (const std::size_t n = job.gpus > 1 ? pod_sizes(s, job, wl.flavor).size() : 1; n > 1) {
          if (place_wide(s, wl, p, n, in_domain ? &domain : nullptr)) {
            ++wl.running;
          } else {
            all = false;
          }
          continue;
        }
        auto placement = place(s, job, wl.flavor, in_domain ? &domain : nullptr);
        if (!placement) {
          all = false;
          s.pending_reason(p, "unschedulable: admitted to ClusterQueue " + nodes_[wl.cq].name +
                                  ", but no node has enough free nvidia.com/gpu, cpu or memory (kube-scheduler)");
          continue;
        }
        const std::string why = s.start(p, *placement,
                                        "kueue: admitted by ClusterQueue " + nodes_[wl.cq].name + " (flavor " +
                                            cfg_.flavors[wl.flavor].name + "); placed by kube-scheduler rules");
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

  Config cfg_;
  bool built_ = false;
  const std::vector<Job>* jobs_ = nullptr;
  const models::Workload* workload_ = nullptr;
  const models::ClusterState* cluster_ = nullptr;
  Tick now_ = 0;
  std::vector<Wl> wls_;
  std::vector<int> wl_of_;
  std::vector<models::Placement> pod_bound_;  // pods bound to a pending job (Session::bind)
  std::map<std::string, int> flavor_index_;
  std::vector<std::vector<bool>> flavor_pools_;
  mutable std::vector<std::int32_t> tas_free_;  // scratch of tas_domain
  std::vector<int> taken_at_;                   // scratch of place: node -> its tentative slice
  int nfr_ = 0;
  std::vector<TreeNode> nodes_;
  std::vector<Cq> cqs_;
  std::vector<std::vector<int>> subtree_cqs_;
  std::vector<int> ns_cq_;
  int default_cq_ = -1;
  std::vector<Lq> lqs_;  // admission fair sharing, by namespace (tenant)
  std::vector<k8s::NodeUsage> usage_;
  std::uint64_t releases_ = 0;
  std::uint64_t up_counted_at_ = 0;  // the cluster's up_changes() when up_nodes_ was counted
  std::int64_t up_nodes_ = -1;       // nodes up then; -1: not counted yet
  std::vector<int> to_reject_, dirty_;
  ParkedIndex parking_;  // inadmissible workloads of parking ClusterQueues (Cq::parks)
  std::set<std::tuple<std::int64_t, Tick, int>> placing_;
  std::set<std::pair<Tick, int>> checks_, ready_, backoff_, holds_;
  std::map<int, std::vector<int>> parked_;  // preemptor -> workloads it evicted, waiting for it
  bool released_ = false;                   // quota was released during this pass
};

}  // namespace

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<KueuePolicy>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params) { return make_policy(parse_config(params)); }

}  // namespace headroom::policies::kueue
