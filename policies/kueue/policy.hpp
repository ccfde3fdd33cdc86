#pragma once

// The kueue policy's class, private to policies/kueue/ (nothing outside this folder includes it).
// Its member functions are defined one seam of Kueue per file, named as upstream names them
// (README.md in this folder maps each file to its upstream source):
//   cluster_queue.cpp    pkg/cache: ClusterQueue and cohort quota, the queues, requeueing
//   flavor_assigner.cpp  pkg/scheduler/flavorassigner/
//   preemption.cpp       pkg/scheduler/preemption/ (classical and fair-sharing targets)
//   fair_sharing.cpp     DRS, the fair-sharing iterator, admission fair sharing
//   scheduler.cpp        pkg/scheduler/scheduler.go: the admission cycle, the workload lifecycle,
//                        admission checks, waitForPodsReady
//   placement.cpp        kube-scheduler placing the admitted pods, TAS
// The small functions the hot loops call (quota arithmetic, queue keys) are defined here, in the
// class, so that every seam inlines them.

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/node_set.hpp"
#include "models/topology.hpp"
#include "policies/common/consolidate.hpp"
#include "policies/common/node_sampling.hpp"
#include "policies/kueue/index.hpp"
#include "policies/kueue/kueue.hpp"

namespace headroom::policies::kueue {

using models::Job;
using models::JobState;
using models::NodeId;

enum class WState : std::uint8_t { Waiting, Queued, Reserved, Admitted, Evicting, Holding, Finished, Rejected };
enum class Mode : std::uint8_t { NoFit, Preempt, Fit };

struct Target {
  int wl = -1;
  std::string reason;
};

struct Assignment {
  int flavor = -1;  // a choice (KueuePolicy::choices_): one flavor, or one per resource group
  Mode mode = Mode::NoFit;
  bool borrow = false;
  bool exceeds_max = false;
  bool no_domain = false;  // quota fits, but no topology domain holds the workload (TAS required)
  int uncovered = -1;      // a resource the workload asks for and no resource group covers
  bool inactive = false;   // its ClusterQueue is stopped (stopPolicy Hold, HoldAndDrain)
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
  // Its resourceGroups when the site declared them (ClusterQueueConfig::resource_groups): uncovered
  // resources are refused; with two or more groups each group's flavors and, per flavor, the
  // choice that charges that group's resources only.
  bool strict = false;
  std::vector<std::array<bool, kResources>> groups;
  std::vector<std::vector<int>> group_flavors, group_choices;
  std::vector<int> checks;
  int root = 0;
  std::set<std::tuple<std::int64_t, Tick, int>> active;  // (-priority, queue time, workload)
  // With admission fair sharing: the same entries by LocalQueue (namespace).
  std::map<models::TenantId, std::set<std::tuple<std::int64_t, Tick, int>>> by_lq;
  std::vector<int> inadmissible;
  // Workloads holding quota here, in id order: a bitset over the workloads (insert and erase
  // O(1); a tree of the admitted ones cost a tenth of bench/scale in cache misses).
  models::NodeIdSet holding;
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

inline int compare_drs(const Drs& a, const Drs& b) {
  auto cmp = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.zero_weight_borrows() && b.zero_weight_borrows()) return cmp(a.unweighted, b.unweighted);
  if (a.zero_weight_borrows()) return 1;
  if (b.zero_weight_borrows()) return -1;
  return cmp(a.share(), b.share());
}

class KueuePolicy final : public Policy {
 public:
  explicit KueuePolicy(Config config) : cfg_(std::move(config)) {}

  std::string_view name() const override { return "kueue"; }

  Denial deny(const models::Workload& w, const Job& job) const override;
  void on_submit(const ClusterView& view, JobIndex j) override;
  void on_requeue(const ClusterView& view, JobIndex j) override;
  void on_release(const ClusterView& view, JobIndex j) override;
  void on_end(const ClusterView& view, JobIndex j) override;
  void on_withdraw(const ClusterView& view, JobIndex j) override;
  bool supports_resubmit() const override { return true; }
  void on_resubmit(const ClusterView& view, JobIndex j) override;
  void schedule(Session& s) override;

 private:
  // ------------------------------------------------------------------------------------------
  // Inline, called from every seam: accessors, the lazy setup (build: cluster_queue.cpp), queue
  // state, quota arithmetic, queue keys, the TAS switch.

  const std::vector<Job>& jobs() const { return *jobs_; }
  int fr(int flavor, int r) const { return flavor * kResources + r; }
  // The flavor-resource a choice charges for r, or -1 when it charges none. Choices 0 .. F-1 are
  // the flavors themselves (every resource on that flavor).
  int cfr(int choice, int r) const {
    const int f = choices_[choice][r];
    return f < 0 ? -1 : f * kResources + r;
  }

  void ensure(const ClusterView& view) {
    jobs_ = &view.workload().jobs;
    cluster_ = &view.cluster();
    workload_ = &view.workload();
    if (built_) return;
    built_ = true;
    build(view);
  }

  // Whether ClusterQueue q orders by admission fair sharing (fair_sharing.cpp).
  bool afs_on(int q) const { return cfg_.afs.enabled && cqs_[q].cfg->usage_based_afs; }

  // Whether the ClusterQueue has a workload in its active queue (fresh or requeued from parking).
  bool has_active(int q) const {
    const Cq& cq = cqs_[q];
    return !cq.active.empty() || (cq.parks && parking_.first(q, cq.cursor, ParkedIndex::kAny) >= 0);
  }

  // A bound on the GPUs a workload of a parking ClusterQueue can be admitted with now: it fits
  // only if its request is at most what one of the queue's flavors has available.
  std::int64_t fit_limit(int q) const {
    std::int64_t a = 0;
    for (int f : cqs_[q].flavors) a = std::max(a, available(q, fr(f, 0)));  // parking CQs: one group
    return a;
  }

  // Quota arithmetic (pkg/cache/scheduler/resource_node.go).

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

  // The (flavor-resource, amount) pairs a workload charges in choice `flavor`.
  template <typename F>
  void for_each_fr(int w, int flavor, F&& f) const {
    const Wl& wl = wls_[w];
    const Cq& cq = cqs_[wl.cq];
    for (int r = 0; r < kResources; ++r)
      if (cq.covered[r] && wl.req[r] > 0)
        if (const int k = cfr(flavor, r); k >= 0) f(k, wl.req[r]);
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

  // An entry of the admission cycle: a head and its flavor assignment.
  struct Entry {
    int wl;
    Assignment a;
  };

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

  // Queue order (priority, then creation or eviction time) and placement order.
  std::tuple<std::int64_t, Tick, int> key(int w) const {
    return {-static_cast<std::int64_t>(wls_[w].priority), wls_[w].queue_ts, w};
  }

  std::tuple<std::int64_t, Tick, int> place_key(int w) const {
    return {-static_cast<std::int64_t>(wls_[w].priority), wls_[w].reserved_at, w};
  }

  // Whether workload w asks for topology-aware scheduling (Kueue TAS, podset-required/preferred-
  // topology over cluster.topology).
  bool tas(int w) const {
    if (cfg_.tas_level <= 0 || !cluster_->spec().topology || wls_[w].pods.empty()) return false;
    if (cfg_.tas_kinds.empty()) return true;
    const auto kind = jobs()[wls_[w].pods.front()].kind;
    return std::find(cfg_.tas_kinds.begin(), cfg_.tas_kinds.end(), kind) != cfg_.tas_kinds.end();
  }

  // A placed or released slice in the nodes' usage that kube-scheduler scores with.
  void add_usage(const models::Slice& sl, int sign) {
    k8s::add_slice_usage(usage_[sl.node], sl, sign);
    if (!node_class_.empty()) reclass(sl.node);  // kept once a cycle scored by class
  }

  // Node classes (placement.cpp): nodes of the same capacity and usage score alike for any pod,
  // so a sampled cycle scores each class once per pod shape (class_score) and its nodes look the score
  // up by class. A way of computing, not of deciding.
  void reclass(NodeId id);
  std::int64_t class_score(NodeId id, const models::Node& n, const Job& pod);
  struct ClassScore {
    std::uint64_t stamp = 0;  // the pod (score_stamp_) total is for
    std::int64_t total = 0;
  };
  std::unordered_map<k8s::ScoreKey, std::uint32_t, k8s::ScoreKeyHash> class_index_;
  std::vector<std::uint32_t> node_class_;  // node -> class; empty until a cycle scores by class
  std::vector<ClassScore> class_scores_;   // by class
  // The pod shape (gpus, cpus, memory) class_scores_ stamped class_stamp_ are for: a class's key
  // never changes, so its score holds for every pod of that shape until the shape changes.
  std::array<std::int64_t, 3> class_shape_{-1, -1, -1};
  std::uint64_t class_stamp_ = 0;

  k8s::ScoreMemo score_memo_;      // the scores node_score remembers for the pod (placement.cpp)
  std::uint64_t score_stamp_ = 0;  // one per pod placed: class_stamp_'s source
  k8s::NodeSampler sampler_;       // kube-scheduler's nextStartNodeIndex for the pods placed

  // ------------------------------------------------------------------------------------------
  // cluster_queue.cpp: the cache (setup), the queues and requeueing.

  void build(const ClusterView& view);
  int head(int q) const;
  void active_insert(int w);
  void active_erase(int w);
  void park(const Session& s, int w);
  void unpark(int w);
  void compute_subtree(int i);
  int root_of(int n) const;
  void enqueue(int w);
  void requeue_inadmissible(int root);
  void release_quota(int w);

  // ------------------------------------------------------------------------------------------
  // fair_sharing.cpp: admission fair sharing, DRS and the fair-sharing iterator.

  double afs_alpha(Tick elapsed) const;
  static double afs_units(int r, std::int64_t amount);
  void afs_decay(Lq& lq, Tick elapsed) const;
  void afs_advance(Lq& lq);
  double afs_usage(models::TenantId ns) const;
  std::array<std::int64_t, kResources> covered_request(int w) const;
  void push_penalty(int w);
  void drop_penalty(int w);
  void afs_admit(int w);
  void afs_release(int w);
  Drs drs(int n) const;
  std::size_t pop_fair(const std::vector<Entry>& es, const std::vector<bool>& done);
  int tournament(int cohort, const std::vector<Entry>& es, const std::vector<bool>& done,
                 const std::map<std::pair<int, int>, Drs>& values) const;

  // ------------------------------------------------------------------------------------------
  // preemption.cpp: classical and fair-sharing preemption targets.

  bool uses(int c, int flavor, const std::vector<int>& frs) const;
  static bool policy_allows(PreemptionPolicy p, const Wl& pre, const Wl& cand);
  std::vector<int> find_candidates(int w, int flavor, const std::vector<int>& frs) const;
  bool candidate_less(int a, int b, int own) const;
  std::string reason_for(int w, int target, const char* rule) const;
  std::vector<Target> minimal_preemptions(int w, int flavor, const std::vector<int>& frs,
                                          const std::vector<int>& candidates, bool allow_borrowing,
                                          std::optional<std::int32_t> threshold);
  void fill_back(int w, int flavor, std::vector<Target>& targets, bool allow_borrowing);
  bool under_nominal(int q, const std::vector<int>& frs) const;
  std::vector<Target> classical(int w, int flavor, const std::vector<int>& frs);
  Ordering make_ordering(int q, const std::vector<int>& cands) const;
  int next_target(Ordering& o, int preemptor_cq, int cohort) const;
  std::pair<int, int> almost_lcas(int a, int b) const;
  static bool strategy_passes(FsStrategy s, const Drs& preemptor_new, const Drs& target_old, const Drs& target_new);
  bool fits_fair(int w, int flavor);
  std::vector<Target> fair_preemptions(int w, int flavor, const std::vector<int>& frs);

  // ------------------------------------------------------------------------------------------
  // flavor_assigner.cpp: flavor assignment.

  bool flavor_matches(int w, int flavor) const;
  Assignment try_flavor(int w, int flavor);
  int rank(const Assignment& a, bool prefer_borrowing) const;
  Assignment assign(int w);
  Assignment assign_groups(int w);
  int choice_of(const std::array<int, kResources>& flavors);
  std::string choice_name(int choice) const;

  // ------------------------------------------------------------------------------------------
  // scheduler.cpp: the admission cycle and the workload lifecycle.

  void compute_request(const ClusterView& view, int w);
  std::string reject_reason(int w) const;
  void reject(Session& s, int w, const std::string& reason);
  void pending_reason(Session& s, int w, const std::string& reason);
  void admission_cycles(Session& s);
  void walk(Session& s, int q);
  void skip_cycles();
  bool process(Session& s, const Entry& e, std::set<int>& targeted, std::vector<std::pair<int, int>>& claims);
  void reserve(Session& s, int w, int flavor);
  void admit(int w);
  void clear_ready(int w);
  void evict(Session& s, int w, int by, const std::string& reason, bool timeout);
  void finish_eviction(Session& s, int w);
  void workload_done(int w);
  void process_dirty(Session& s);
  void process_timers(Session& s);

  // ------------------------------------------------------------------------------------------
  // placement.cpp: kube-scheduler placement of the admitted pods, TAS.

  models::SwitchId tas_domain(int w, int flavor, const Session* session) const;
  std::string tas_reason(int w) const;
  std::vector<std::int32_t> pod_sizes(const ClusterView& view, const Job& job, int flavor) const;
  std::optional<models::Placement> place(const ClusterView& view, const Job& job, int flavor,
                                         const std::vector<NodeId>* allowed = nullptr, std::size_t first = 0,
                                         bool per_pod = false, const std::vector<std::int32_t>* sizes = nullptr);
  // Called for every feasible node of every pod: inlined into place (defined and called only in
  // placement.cpp), as it was while the class was one file.
  [[gnu::always_inline]] inline std::int64_t node_score(const models::Node& n, const k8s::NodeUsage& u, const Job& pod);
  bool place_wide(Session& s, const Wl& wl, JobIndex p, const std::vector<std::int32_t>& sizes,
                  const std::vector<NodeId>* allowed);
  void drop_bound(Session& s, JobIndex p, const std::string& reason);
  void place_pods(Session& s);

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
  std::vector<std::vector<bool>> flavor_pools_;              // by choice: the pools every flavor of it selects
  std::vector<std::array<int, kResources>> choices_;         // choice -> flavor per resource (-1: none)
  std::map<std::array<int, kResources>, int> choice_index_;  // the inverse
  mutable std::vector<std::int32_t> tas_free_;               // scratch of tas_domain
  std::vector<int> taken_at_;                                // scratch of place: node -> its tentative slice
  std::vector<std::uint64_t> taken_bits_;                    // scratch of place: the nodes in taken_at_
  std::vector<std::uint64_t> full_bits_;                     // scratch of place: those a pod no longer fits
  int nfr_ = 0;
  std::vector<TreeNode> nodes_;
  std::vector<Cq> cqs_;
  std::vector<std::vector<int>> subtree_cqs_;
  std::vector<int> ns_cq_;
  std::map<std::pair<models::TenantId, models::QueueId>, int> lq_cq_;  // (namespace, LocalQueue) -> CQ
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

}  // namespace headroom::policies::kueue
