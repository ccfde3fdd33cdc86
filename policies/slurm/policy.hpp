#pragma once

// The Slurm policy's class, private to policies/slurm/ (README.md there maps its parts onto the Slurm
// source tree): the declaration, the state it keeps, and the small helpers the hot loops call,
// defined here so that they stay inline. Each member function that is not defined here lives in
// the .cpp of its seam.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "policies/slurm/slurm.hpp"

namespace headroom::models {
class Topology;
}

namespace headroom::policies::slurm::detail {

using models::Job;
using models::JobState;
using models::kNoJob;
using models::NodeId;

inline constexpr Tick kYear = 365 * sim::kDay;
inline constexpr int kNoPart = -1;

inline Tick ceil_to(Tick t, Tick res) { return res <= 1 ? t : (t + res - 1) / res * res; }
// slurmctld's clock is time_t, whole seconds: backfill plans from the second a job started (its
// end_time = start_time + limit) and from the second it runs in (issue #38).
inline Tick whole_second(Tick t) { return t >= 0 ? t / sim::kSecond * sim::kSecond : t; }

struct Avail {
  std::int32_t gpus = 0;
  std::int32_t cpus = 0;
  std::int64_t mem = 0;
  bool ok = false;  // up, not held by an exclusive job or for a suspended job
  // Backfill's profile only (0 in avail_): how many of the pass's reservations counted at the
  // cursor block the node.
  std::int32_t overlap = 0;
};

struct NodeCap {
  std::int32_t gpus = 0;
  std::int32_t cpus = 0;
  std::int64_t memory_mib = 0;
};

struct Part {
  PartitionConf conf;
  std::vector<NodeId> nodes;  // by (weight, id)
  std::vector<char> member;
  std::int64_t gpus = 0, cpus = 0, mem = 0;
  std::int32_t biggest = 1;         // the most GPUs one of its nodes has (at least 1)
  bool by_id = false;               // nodes is in id order (one weight): choose() may read bits
  std::vector<std::uint64_t> bits;  // member, as bits by node id
  // With node classes (SlurmPolicy::node_cls_): the classes whose nodes it holds (a class's nodes
  // are all in a partition or none is).
  std::vector<std::uint8_t> classes;
};

struct QosR {
  QosConf conf;
  std::vector<int> preempts;  // indices into qos_
  std::int64_t level = 0;     // depth in the Preempt graph
};

// What one job asks of the nodes.
struct Shape {
  bool fixed = false;
  std::vector<std::int32_t> slices;  // fixed: GPUs per node, largest first
  std::int32_t need = 0;             // fixed: GPUs every chosen node must have free
  std::int32_t total = 0;            // GPUs in all
  std::int32_t cpn = 0;              // fixed: CPUs per node
  std::int64_t mpn = 0;              // fixed: memory per node
  std::int32_t cpg = 0;              // flexible: CPUs per GPU
  std::int64_t mpg = 0;              // flexible: memory per GPU
  bool exclusive = false;
};

struct Key {
  std::int64_t level;
  std::int64_t tier;
  std::uint32_t prio;
  Tick submit;
  JobIndex j;
  bool operator<(const Key& o) const {
    if (level != o.level) return level > o.level;
    if (tier != o.tier) return tier > o.tier;
    if (prio != o.prio) return prio > o.prio;
    if (submit != o.submit) return submit < o.submit;
    return j < o.j;
  }
};

// The clear nodes (up, not held, no reservation counted) by free GPUs: how many have g free
// (counts above `max` in the last), which ones (bits by node id, `words` words per count), their
// GPUs in all, and how many have more than `max` free (then the counts do not describe them).
struct ClearTally {
  std::int32_t max = 0;
  std::size_t words = 0;
  std::vector<std::int64_t> count;
  std::vector<std::uint64_t> bits;
  std::int64_t gpus = 0, over = 0;
  // Optional: the GPUs of the clear nodes per node class (cls: the class of each node by id;
  // null: not kept). A partition's clear GPUs are those of its classes.
  const std::uint8_t* cls = nullptr;
  std::vector<std::int64_t> cls_gpus;
  void reset(std::int32_t max_gpus, std::size_t nodes, const std::uint8_t* node_cls = nullptr,
             std::size_t classes = 0) {
    max = max_gpus;
    words = (nodes + 63) / 64;
    count.assign(static_cast<std::size_t>(max) + 1, 0);
    bits.assign((static_cast<std::size_t>(max) + 1) * words, 0);
    gpus = over = 0;
    cls = node_cls;
    cls_gpus.assign(cls != nullptr ? classes : 0, 0);
  }
  // The clear GPUs on the nodes of these classes (cls must be set).
  std::int64_t gpus_of(const std::vector<std::uint8_t>& classes) const {
    std::int64_t sum = 0;
    for (const std::uint8_t c : classes) sum += cls_gpus[c];
    return sum;
  }
  // Updates of many nodes in a loop: the arrays and sizes read once (the tally's members would be
  // read again after every store, its word count having the type of the bits it stores), the GPUs
  // summed apart and added when the batch ends. over is kept in the tally; over_seen says whether
  // it was above 0 after any update of the batch.
  class Batch {
   public:
    explicit Batch(ClearTally& t)
        : t_(t),
          count_(t.count.data()),
          bits_(t.bits.data()),
          cls_gpus_(t.cls != nullptr ? t.cls_gpus.data() : nullptr),
          cls_(t.cls),
          words_(t.words),
          max_(t.max) {}
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;
    ~Batch() { t_.gpus += gpus_; }
    bool over_seen() const { return over_seen_; }
    // A clear node's free GPUs from `from` to `to` (both at least 0): put(id, from, -1) and
    // put(id, to, 1) in one step.
    [[gnu::always_inline]] void move(NodeId id, std::int32_t from, std::int32_t to) {
      if (from == to) return;
      if (from > max_ || to > max_) add_over((to > max_ ? 1 : 0) - (from > max_ ? 1 : 0));
      gpus_ += to - from;
      if (cls_gpus_ != nullptr) cls_gpus_[cls_[id]] += to - from;
      const auto bf = static_cast<std::size_t>(std::min(from, max_)), bt = static_cast<std::size_t>(std::min(to, max_));
      if (bf == bt) return;
      --count_[bf];
      ++count_[bt];
      const std::uint64_t bit = std::uint64_t{1} << (id % 64);
      bits_[bf * words_ + id / 64] &= ~bit;
      bits_[bt * words_ + id / 64] |= bit;
    }
    // Node id with g GPUs free added (sign 1) or taken out (-1); g < 0: not clear, nothing to do.
    [[gnu::always_inline]] void put(NodeId id, std::int32_t g, int sign) {
      if (g < 0) return;
      if (g > max_) add_over(sign);
      const auto b = static_cast<std::size_t>(std::min(g, max_));
      count_[b] += sign;
      gpus_ += sign * g;
      if (cls_gpus_ != nullptr) cls_gpus_[cls_[id]] += sign * g;
      const std::uint64_t bit = std::uint64_t{1} << (id % 64);
      if (sign > 0)
        bits_[b * words_ + id / 64] |= bit;
      else
        bits_[b * words_ + id / 64] &= ~bit;
    }

   private:
    void add_over(std::int64_t d) {
      t_.over += d;
      if (t_.over > 0) over_seen_ = true;
    }
    ClearTally& t_;
    std::int64_t* const count_;
    std::uint64_t* const bits_;
    std::int64_t* const cls_gpus_;
    const std::uint8_t* const cls_;
    const std::size_t words_;
    const std::int32_t max_;
    std::int64_t gpus_ = 0;
    bool over_seen_ = false;
  };
  // One node's update (see Batch).
  [[gnu::always_inline]] void move(NodeId id, std::int32_t from, std::int32_t to) { Batch(*this).move(id, from, to); }
  [[gnu::always_inline]] void put(NodeId id, std::int32_t g, int sign) { Batch(*this).put(id, g, sign); }
};

// One release slice of a running job: its node's part, at the job's kill time rounded up to
// bf_resolution.
struct Booked {
  Tick r;
  NodeId node;
  std::int32_t gpus, cpus;
  std::int64_t mem;
  JobIndex job;
  std::int32_t job_gpus;  // the job's GPUs on its first slice, else 0 (backfill's final bound)
  bool exclusive;
  bool gone;
};

// Every running job's release slices, kept from pass to pass in the order backfill reads them (by
// r; the order within one time does not matter, every release of a time is applied together).
// Slices are booked at start and marked gone at release. The book is a long list and a short one
// of recent starts (a sorted part and an unsorted tail), read together in order; the short one
// is merged into the long one, and the gone slices taken out, only when they have grown to a
// fraction of it, so that a start or a release costs O(1) amortized plus a search.
class ReleaseBook {
 public:
  void add(const Booked& b) {
    new_.push_back(b);
    if (new_.size() - new_sorted_ > kTail) settle();  // backfill may not read it for a long time
  }
  // Marks job j's slices (booked at time r) gone.
  void remove(JobIndex j, Tick r) {
    for (std::size_t k = new_sorted_; k < new_.size(); ++k) mark(new_[k], j);
    mark_range(new_.begin(), new_.begin() + static_cast<std::ptrdiff_t>(new_sorted_), j, r);
    mark_range(long_.begin(), long_.end(), j, r);
  }
  // Before reading: the tail sorted into the short list, which joins the long one once large.
  void settle() {
    auto by_r = [](const Booked& a, const Booked& b) { return a.r < b.r; };
    if (new_sorted_ < new_.size()) {
      const auto mid = new_.begin() + static_cast<std::ptrdiff_t>(new_sorted_);
      std::sort(mid, new_.end(), by_r);
      std::inplace_merge(new_.begin(), mid, new_.end(), by_r);
      new_sorted_ = new_.size();
    }
    if (gone_ * 4 > long_.size() + new_.size()) drop_gone();
    if (new_.size() * 8 > long_.size() + 64) {
      drop_gone();
      const auto mid = static_cast<std::ptrdiff_t>(long_.size());
      long_.insert(long_.end(), new_.begin(), new_.end());
      std::inplace_merge(long_.begin(), long_.begin() + mid, long_.end(), by_r);
      new_.clear();
      new_sorted_ = 0;
    }
  }
  // Calls f on the slices not gone in order of r (after settle) until it returns false.
  // (A slice of the long list goes before one of the short list with the same r: the long list
  // is read in runs up to the short list's next r.)
  template <typename F>
  void read(F&& f) const {
    const Booked *a = long_.data(), *const a_end = a + long_.size();
    const Booked *b = new_.data(), *const b_end = b + new_.size();
    while (true) {
      while (b != b_end && b->gone) ++b;
      if (b == b_end) {
        for (; a != a_end; ++a)
          if (!a->gone && !f(*a)) return;
        return;
      }
      for (const Tick lim = b->r; a != a_end && a->r <= lim; ++a)
        if (!a->gone && !f(*a)) return;
      if (!f(*b++)) return;
    }
  }

 private:
  // Takes the gone slices out of both lists (new_ is wholly sorted when this runs).
  void drop_gone() {
    std::erase_if(long_, [](const Booked& b) { return b.gone; });
    std::erase_if(new_, [](const Booked& b) { return b.gone; });
    new_sorted_ = new_.size();
    gone_ = 0;
  }
  void mark(Booked& b, JobIndex j) {
    if (b.job == j && !b.gone) {
      b.gone = true;
      ++gone_;
    }
  }
  template <typename It>
  void mark_range(It first, It last, JobIndex j, Tick r) {
    auto it = std::lower_bound(first, last, r, [](const Booked& b, Tick v) { return b.r < v; });
    for (; it != last && it->r == r; ++it) mark(*it, j);
  }
  static constexpr std::size_t kTail = 64;
  std::vector<Booked> long_, new_;  // long_ by r; new_ by r up to new_sorted_, then as started
  std::size_t new_sorted_ = 0;
  std::size_t gone_ = 0;  // marked gone in either list
};

struct Switch {
  std::string name;
  int level = 0;
  std::vector<int> children;  // switch indices
  std::vector<NodeId> nodes;  // every node below
  bool leaf = true;
};

class SlurmPolicy final : public Policy, public Inspect {
 public:
  explicit SlurmPolicy(Config c) : c_(std::move(c)) {}

  std::string_view name() const override { return "slurm"; }

  Denial deny(const models::Workload& w, const Job& job) const override;

  void on_submit(const ClusterView& view, JobIndex j) override;

  void on_requeue(const ClusterView& view, JobIndex j) override;

  void on_release(const ClusterView& view, JobIndex j) override;

  void on_end(const ClusterView& view, JobIndex j) override;

  void schedule(Session& s) override;

  // Inspect
  std::uint32_t job_priority(JobIndex j) const override { return prio_.at(j); }
  double fairshare_of(models::TenantId t) const override {
    const auto& fs = fairshare();
    return fs.empty() ? 1.0 : fs.at(static_cast<std::size_t>(leaf_of_.at(t)));
  }
  double usage_of(models::TenantId t) const override { return usage_.at(static_cast<std::size_t>(leaf_of_.at(t))); }
  std::int64_t backfill_starts() const override { return bf_starts_; }

 private:
  struct Suspended {
    JobIndex by = kNoJob;
    models::Placement placement;
    bool resumable = false;
  };

  // --- Setup ---------------------------------------------------------------------------------

  void init(const ClusterView& view);

  int partition_of(const ClusterView& view, const Job& job) const;

  static Tick time_limit(const Job& job, const Part& p) {
    Tick limit = job.walltime > 0 ? job.walltime : p.conf.default_time;
    if (limit == kUnlimited || limit <= 0)
      limit = p.conf.max_time;
    else if (p.conf.max_time != kUnlimited)
      limit = std::min(limit, p.conf.max_time);
    return limit;  // kUnlimited when neither
  }

  Shape make_shape(const ClusterView& view, const Job& job, const Part& p) const;

  // The GPU type and node set as one key: asks compare (backfill's walk records, never_fits' room)
  // only under the same one.
  static std::uint32_t constraint_of(const Job& job) { return job.gpu_type | (std::uint32_t{job.node_set} << 16); }

  bool type_ok(const ClusterView& view, const Job& job, NodeId id) const {
    if (job.gpu_type == 0 && job.node_set == 0) return true;  // the common case: no virtual call
    const auto& w = view.workload();
    const auto& pool = view.cluster().spec().pools[view.cluster().node(id).pool];
    if (!models::in_node_set(w, job, pool.name)) return false;  // sbatch --constraint
    return job.gpu_type == 0 || pool.gpu_type == w.gpu_type_names.at(job.gpu_type - 1u);
  }

  // GPUs node `id` can give the job under `a` (fixed: need or 0).
  std::int32_t capacity(const ClusterView& view, const Shape& s, NodeId id, const Avail& a) const {
    (void)view;
    if (!a.ok) return 0;
    const auto& node = cap_[id];
    if (s.exclusive && (a.gpus != node.gpus || (node.cpus > 0 && a.cpus != node.cpus))) return 0;
    if (s.fixed) {
      if (a.gpus < s.need) return 0;
      if (node.cpus > 0 && a.cpus < s.cpn) return 0;
      if (node.memory_mib > 0 && a.mem < s.mpn) return 0;
      return std::max<std::int32_t>(1, s.need);
    }
    std::int64_t cap = a.gpus;
    if (s.cpg > 0 && node.cpus > 0) cap = std::min<std::int64_t>(cap, a.cpus / s.cpg);
    if (s.mpg > 0 && node.memory_mib > 0) cap = std::min<std::int64_t>(cap, a.mem / s.mpg);
    return static_cast<std::int32_t>(cap);
  }

  std::string never_fits(const ClusterView& view, JobIndex j) const;

  // --- Priority and usage ----------------------------------------------------------------------

  double billing(const Job& job) const;

  const QosR& qos_of(const Job& job) const {
    return qos_[static_cast<std::size_t>(job.qos == models::kNone ? normal_qos_ : qos_of_id_.at(job.qos))];
  }

  void charge(std::size_t leaf, Tick now) {
    if (now > since_[leaf]) pend_[leaf] += rate_[leaf] * sim::to_seconds(now - since_[leaf]);
    since_[leaf] = std::max(since_[leaf], now);
  }

  void advance_usage(Tick now);

  // The fair-share factors follow usage_, which changes only here and at init; they are computed
  // when read (a priority with a fair-share weight, or an inspection), not every PriorityCalcPeriod.
  void refresh_fairshare() { fs_stale_ = true; }
  const std::vector<double>& fairshare() const {
    if (fs_stale_) {
      fs_ = c_.fair_tree ? fair_tree_fairshare(tree_, usage_) : classic_fairshare(tree_, usage_, c_.dampening);
      fs_stale_ = false;
    }
    return fs_;
  }

  std::uint32_t compute_priority(const ClusterView& view, JobIndex j, Tick now) const;

  void recompute_priorities(const ClusterView& view, Tick now);

  void enqueue(JobIndex j) {
    if (said_.size() <= j) said_.resize(workload_->jobs.size(), 0);
    said_[j] = 0;  // (again) pending: the engine has no reason for it yet
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    const std::int64_t level = c_.preempt_type == PreemptType::Qos ? qos_of(workload_->jobs[j]).level : 0;
    key_[j] = Key{level, p.conf.tier, prio_[j], workload_->jobs[j].submit, j};
    queue_.insert(key_[j]);
    queued_[j] = 1;
    ++queue_version_;
    ++keys_version_;
    // top_ is the queue's first min(top_cap(), size) jobs: j joins it when it sorts before its
    // last job or when it holds the whole queue.
    const std::size_t cap = top_cap();
    if (cap > 0 && (top_.size() < cap || key_[j] < key_[top_.back()])) {
      top_.insert(
          std::upper_bound(top_.begin(), top_.end(), j, [&](JobIndex a, JobIndex b) { return key_[a] < key_[b]; }), j);
      if (top_.size() > cap) top_.pop_back();
    }
  }
  void dequeue(JobIndex j) {
    if (j < queued_.size() && queued_[j] != 0) {
      queue_.erase(key_[j]);
      queued_[j] = 0;
      ++queue_version_;
      ++keys_version_;
      // j leaves top_ when it was in it (its key sorts no later than top_'s last), and the job that
      // follows top_'s last in the queue (if any) takes its place at the end.
      if (!top_.empty() && !(key_[top_.back()] < key_[j])) {
        top_.erase(
            std::lower_bound(top_.begin(), top_.end(), j, [&](JobIndex a, JobIndex b) { return key_[a] < key_[b]; }));
        if (queue_.size() > top_.size())
          top_.push_back((top_.empty() ? queue_.begin() : queue_.upper_bound(key_[top_.back()]))->j);
      }
    }
  }
  // The queue's first jobs kept in top_ as jobs enter and leave it: as many as the main scheduler
  // (default_queue_depth) and backfill (bf_max_job_test) read, unless that is more than kTopMax
  // (then 0: both walk queue_ itself, as top_'s inserts would cost more than the walks).
  static constexpr std::int64_t kTopMax = 4096;
  std::size_t top_cap() const {
    const std::int64_t n = std::max<std::int64_t>({c_.default_queue_depth, c_.bf_max_job_test, 0});
    return n <= kTopMax ? static_cast<std::size_t>(n) : 0;
  }

  // --- Resources -------------------------------------------------------------------------------

  void build_avail(const ClusterView& view);

  void take(const ClusterView& view, std::vector<Avail>& av, const models::Placement& pl, bool exclusive) {
    for (const auto& sl : pl) {
      auto& a = av[sl.node];
      a.gpus -= sl.gpus;
      a.cpus -= sl.cpus;
      a.mem -= sl.memory_mib;
      if (exclusive) a.ok = false;
      (void)view;
    }
  }

  // Chooses nodes for job j under `av`; `usable(node)` filters further. Empty when it does not fit.
  template <typename Usable>
  // `gpus_free` (optional): per node, whether av has it up with a GPU free; a node without can give a
  // job that needs GPUs on every node nothing, so it is passed over before the other checks.
  models::Placement choose(const ClusterView& view, JobIndex j, const std::vector<Avail>& av, Usable&& usable,
                           const std::vector<std::uint8_t>* gpus_free = nullptr) {
    const Job& job = view.workload().jobs[j];
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    if (p.conf.state != PartitionState::Up) return {};  // State=DOWN: queued jobs start nowhere
    const Shape& s = shape_[j];
    cand_.clear();
    std::int64_t sum = 0;
    if (s.fixed && s.need < 1) gpus_free = nullptr;  // such a shape takes nodes without free GPUs
    auto consider = [&](NodeId id) {
      if (held_for_[id] != kNoJob && held_for_[id] != j) return;
      if (!usable(id) || !type_ok(view, job, id)) return;
      const std::int32_t cap = capacity(view, s, id, av[id]);
      if (cap <= 0) return;
      cand_.push_back({id, cap});
      sum += cap;
    };
    if (gpus_free == &avail_free_ && p.by_id && avail_bits_.size() == p.bits.size()) {
      // The same nodes in the same order, read from the bits of the nodes with GPUs free now.
      for (std::size_t w = 0; w < p.bits.size(); ++w)
        for (std::uint64_t x = avail_bits_[w] & p.bits[w]; x != 0; x &= x - 1)
          consider(static_cast<NodeId>(w * 64 + static_cast<std::size_t>(std::countr_zero(x))));
    } else {
      for (NodeId id : p.nodes)
        if (gpus_free == nullptr || (*gpus_free)[id] != 0) consider(id);
    }
    const std::int64_t want = s.fixed ? static_cast<std::int64_t>(s.slices.size()) : s.total;
    if ((s.fixed ? static_cast<std::int64_t>(cand_.size()) : sum) < want) return {};
    if (!switches_.empty()) restrict_to_topology(s, want);
    return pick(view, j, av);
  }

  void use_cluster_topology(const models::Topology& t);

  void restrict_to_topology(const Shape& s, std::int64_t want);

  models::Placement pick(const ClusterView& view, JobIndex j, const std::vector<Avail>& av);

  // --- Decisions -------------------------------------------------------------------------------

  // pick() over clear nodes read from a ClearTally's bits, where choose() would take exactly those
  // nodes with their free GPUs as capacity (see quick_ok): the best-fit single node (fewest free
  // GPUs that hold the job, then lowest id), else the nodes with the most free GPUs first (lowest
  // id first) and for what is left the first of those after them with the fewest GPUs that hold
  // it. Same nodes, same order. Empty when the tally's nodes do not hold `total` GPUs.
  models::Placement quick_pick(const ClearTally& t, std::int32_t total) const {
    models::Placement pl;
    quick_pick(t, total, pl);
    return pl;
  }
  // `mask` (optional, bits by node id): only those nodes are candidates (a partition's members).
  void quick_pick(const ClearTally& t, std::int32_t total, models::Placement& pl,
                  const std::uint64_t* mask = nullptr) const;
  // Whether quick_pick may serve job j: a flexible job without GPU type on an Up partition of every
  // node, nodes of one weight, no topology and no held node, and a node's capacity for the job its
  // free GPUs: the job asks no CPUs (memory) per GPU, or no node models them (capacity() then
  // reads only the GPUs, and pick() gives each slice no CPUs or memory, as quick_pick does).
  bool quick_ok(JobIndex j, bool held_any) const {
    return quick_ok_masked(j, held_any) && parts_[static_cast<std::size_t>(part_[j])].nodes.size() == avail_.size();
  }
  // The same for a partition on part of the nodes, with its members as quick_pick's mask: with one
  // weight choose() reads them in id order (by_id), the order in which quick_pick reads the bits.
  bool quick_ok_masked(JobIndex j, bool held_any) const {
    const Shape& a = shape_[j];
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    return one_weight_ && (a.cpg <= 0 || !any_cpus_) && (a.mpg <= 0 || !any_mem_) && cap_.size() == avail_.size() &&
           switches_.empty() && !held_any && !a.fixed && !a.exclusive && workload_->jobs[j].gpu_type == 0 &&
           workload_->jobs[j].node_set == 0 && p.conf.state == PartitionState::Up && p.by_id &&
           p.bits.size() == (avail_.size() + 63) / 64;
  }

  std::string start(Session& s, JobIndex j, const models::Placement& pl, std::string_view reason);

  void kill_overruns(Session& s);

  void rotate_gangs(Session& s);

  void resume_suspended(Session& s);

  // squeue's reasons (slurm/slurm.h job_state_reason, src/slurmctld/job_scheduler.c): the first
  // job of a partition that cannot start waits for Resources; those behind it for Priority.
  // Said only when it changes (said_): the head is looked at on every pass.
  void reason_resources(Session& s, JobIndex j, bool preempting) {
    const std::uint8_t r = preempting ? 2 : 1;
    if (said_[j] == r) return;
    said_[j] = r;
    s.pending_reason(j, preempting ? "Resources: waiting for the jobs it preempts to end"
                                   : "Resources: the job is waiting for resources to become available");
  }
  void reason_priority(Session& s, JobIndex j) {
    if (said_[j] != 3) say_priority(s, j);
  }
  void say_priority(Session& s, JobIndex j);

  // A job over a per-user limit (policies/slurm/limits.hpp) is passed over by the main scheduler
  // and by backfill; it marks no partition failed.
  bool held_by_limit(Session& s, JobIndex j) {
    const LimitReason r = limits_.blocks(s.workload().jobs[j]);
    if (r == LimitReason::None) return false;
    if (said_[j] != 3 + static_cast<int>(r)) s.pending_reason(j, limit_reason_text(r));
    said_[j] = static_cast<std::uint8_t>(3 + static_cast<int>(r));
    return true;
  }

  void main_scheduler(Session& s);

  // --- Preemption ------------------------------------------------------------------------------

  bool can_preempt(const ClusterView& v, JobIndex p, JobIndex victim) const {
    const Tick at = preemptible_at(v, p, victim);
    return at >= 0 && v.now() >= at;
  }

  Tick preemptible_at(const ClusterView& v, JobIndex p, JobIndex victim) const;

  bool fits_with(const ClusterView& v, JobIndex j, const std::vector<JobIndex>& victims, models::Placement* out);

  bool try_preempt(Session& s, JobIndex j);

  // --- Backfill --------------------------------------------------------------------------------

  void backfill(Session& s);

  // When the next backfill pass may run, at `now` or later. slurmctld's backfill_agent
  // (src/plugins/sched/backfill/backfill.c) is a thread of its own: it sleeps bf_interval after a
  // pass, then wakes every second (short_sleep) and runs a pass when there is more work and
  // time(NULL) - last_backfill_time >= bf_interval, both in whole seconds. A pass therefore runs on
  // that one-second clock, never at an event between its ticks: a job whose nodes free at 9.06 s
  // is backfilled at 10 s (issue #38, cause (b)). The clock's phase is the simulation's seconds.
  Tick next_backfill(Tick now) const { return std::max(last_bf_ + c_.bf_interval, ceil_to(now, sim::kSecond)); }
  // Backfill: the bounds of slurmctld's node_space records in this pass (collected with repeats
  // until their number could reach bf_max_job_test, then sorted and unique).
  std::vector<Tick> space_marks_;

  Config c_;
  Limits limits_;
  bool ready_ = false;
  const models::Workload* workload_ = nullptr;
  std::vector<Part> parts_;
  std::vector<JobIndex> fresh_;               // queued since the last main scheduler pass (pending reasons)
  std::vector<JobIndex> begin_wait_;          // requeued since the last pass, waiting to be eligible
  std::vector<std::uint8_t> said_;            // the pending reason last given: 0 none, 1..3
  std::vector<std::string> priority_reason_;  // per partition
  bool configured_parts_ = false;
  std::int64_t max_job_factor_ = 0;
  std::vector<QosR> qos_;
  std::vector<int> qos_of_id_;
  int normal_qos_ = 0;
  std::int64_t max_qos_prio_ = 0;
  AssocTree tree_;
  std::vector<int> leaf_of_;
  std::vector<double> usage_, pend_, rate_;
  mutable std::vector<double> fs_;  // fair-share factor per association (fairshare())
  mutable bool fs_stale_ = false;
  std::vector<Tick> since_;
  Tick next_calc_ = 0, last_calc_ = 0;
  bool prio_stale_ = false;
  std::vector<Switch> switches_;
  std::vector<std::int64_t> weight_;
  std::vector<NodeCap> cap_;
  bool plain_nodes_ = false;  // one weight, no CPUs or memory modelled (plain release slices)
  bool one_weight_ = false;   // every node has the same Weight
  // Nodes by the partitions that hold them, when some partition holds part of the nodes and there
  // are at most kMaxClasses such sets: the class of each node (backfill keeps the clear GPUs per
  // class, and a partition's walk tests its own); else empty.
  static constexpr std::size_t kMaxClasses = 64;
  std::vector<std::uint8_t> node_cls_;
  std::size_t classes_ = 0;
  bool any_cpus_ = false, any_mem_ = false;  // some node models CPUs (memory)
  std::vector<std::int32_t> excl_;
  std::vector<JobIndex> held_for_;
  std::int64_t total_gpus_ = 0, total_cpus_ = 0;

  std::vector<int> part_;
  std::vector<Shape> shape_;
  std::vector<Tick> limit_, used_limit_, eligible_, kill_at_, my_start_;
  std::vector<std::uint32_t> prio_;
  std::vector<Key> key_;
  std::vector<char> queued_;
  std::vector<double> rate_of_;
  std::set<Key> queue_;
  std::vector<JobIndex> top_;        // queue_'s first min(top_cap(), size) jobs, in order (enqueue, dequeue)
  std::uint64_t queue_version_ = 0;  // changes with every enqueue, dequeue and end (limits)
  std::uint64_t keys_version_ = 0;   // changes with every enqueue and dequeue (queue_'s keys)
  std::uint64_t idle_version_ = ~std::uint64_t{0};  // queue_version_ at the last idle main pass, if it was the last
  std::set<std::pair<Tick, JobIndex>> waiting_;
  std::set<std::pair<Tick, JobIndex>> by_kill_;
  std::map<JobIndex, Suspended> suspended_;
  struct Gang {
    JobIndex running, waiting;  // the member on the nodes, the suspended one
    Tick next;                  // when the running member's slice ends
  };
  std::vector<Gang> gangs_;
  std::map<JobIndex, std::vector<JobIndex>> nominee_;
  std::vector<std::pair<JobIndex, std::string>> to_reject_;
  bool dirty_ = false;
  bool first_pass_done_ = false;  // first_pass_backfill: the first pass has run
  Tick last_bf_ = std::numeric_limits<Tick>::min() / 2;
  std::int64_t bf_starts_ = 0;

  // Scratch.
  std::vector<Avail> avail_, sim_, prof_;
  std::vector<std::uint8_t> prof_free_;  // per node: prof_ has it up with a GPU free (choose)
  bool prof_free_ok_ = false;            // prof_free_ follows prof_ (kept node by node as releases move it)
  void note_free(NodeId id) { prof_free_[id] = prof_[id].ok && prof_[id].gpus > 0 ? 1 : 0; }
  void copy_avail() {  // prof_ = avail_ and prof_free_ = avail_free_, as plain copies
    static_assert(std::is_trivially_copyable_v<Avail>);
    prof_.resize(avail_.size());
    prof_free_.resize(avail_free_.size());
    std::memcpy(prof_.data(), avail_.data(), avail_.size() * sizeof(Avail));
    std::memcpy(prof_free_.data(), avail_free_.data(), avail_free_.size());
    prof_free_ok_ = true;
  }
  std::int64_t free_now_ = 0, held_free_ = 0;  // free GPUs now; those held for a suspended job's preemptor
  std::vector<std::pair<NodeId, std::int32_t>> cand_;
  std::vector<std::int32_t> tcap_;                      // restrict_to_topology: candidate capacity by node, else -1
  std::vector<std::vector<std::size_t>> leaves_under_;  // per switch: the leaf switches whose nodes it holds
  // Per node: the earliest start of this pass's reservations that end after now (a reservation
  // overlaps [now, now + d) when it starts before now + d).
  std::vector<Tick> first_res_;
  std::vector<NodeId> freenodes_;
  std::vector<NodeId> touched_;  // backfill: the nodes of a start
  std::vector<Avail> before_;    // backfill: avail_ of those nodes before the start
  models::Placement reserved_;   // backfill: a walk's reservation
  models::Placement saved_pl_;   // backfill (will_run_groups): the nodes chosen after a group
  // Backfill: the free nodes a reservation of the pass blocks, (first_res_, node) latest first,
  // and as clear_holds() last read them: first_res_ and the GPUs free now summed so far.
  std::vector<std::pair<Tick, NodeId>> clear_at_;
  std::vector<Tick> clear_first_;
  std::vector<std::int64_t> clear_sum_;
  std::vector<std::uint64_t> free_mark_;  // per node: the pass whose freenodes_ hold it
  std::uint64_t pass_no_ = 0;
  struct RSlice {
    Tick t;
    NodeId node;
    std::int32_t gpus, cpus;
    std::int64_t mem;
    bool exclusive;
    bool was_ok;   // the node's ok before this release was applied (backfill's cursor takes it back)
    JobIndex job;  // whose release (will_run_groups: the will-run test walks running jobs, not nodes)
  };
  std::vector<RSlice> rslice_;
  ReleaseBook booked_;  // every running job's release, slice by slice (backfill reads it)
  void book_release(const ClusterView& view, JobIndex j) {
    const Tick r = ceil_to(whole_second(kill_at_[j]), c_.bf_resolution);
    std::int32_t job_gpus = view.workload().jobs[j].gpus;
    for (const auto& sl : view.placement(j))
      booked_.add(
          {r, sl.node, sl.gpus, sl.cpus, sl.memory_mib, j, std::exchange(job_gpus, 0), shape_[j].exclusive, false});
  }
  void unbook_release(JobIndex j) { booked_.remove(j, ceil_to(whole_second(kill_at_[j]), c_.bf_resolution)); }
  // This pass's reservations: by_start_ and by_end_ hold (time, reservation) in time order, and
  // reservation r holds the nodes res_nodes_[res_off_[r], res_off_[r + 1]).
  std::vector<std::pair<Tick, std::uint32_t>> by_start_, by_end_;
  std::vector<NodeId> res_nodes_;
  std::vector<std::uint32_t> res_off_;
  std::vector<std::pair<Tick, Tick>> res_span_;  // per reservation: [start, end)
  std::vector<std::int64_t> res_gpus_;           // per reservation: its nodes' GPUs
  // will_run_groups: (start, node) of every reservation of the pass, as start << 24 | node
  // (backfill's later_start asks whether a node is reserved again where a reservation ends).
  std::unordered_set<std::uint64_t> res_start_at_;
  // Backfill: what one walk asked and found (no start before `from`).
  struct WalkRec {
    int part;
    std::uint32_t gpu_type;  // and node set: constraint_of
    bool fixed;
    Tick limit;
    std::int32_t gpus;
    std::size_t nodes;
    std::int32_t need, cpn;
    std::int64_t mpn;
    std::int32_t cpg;
    std::int64_t mpg;
    Tick from;
  };
  std::vector<WalkRec> recs_;
  // never_fits: per partition, GPU type and node set (constraint_of) and shape, the GPUs
  // (or nodes) its empty nodes hold.
  mutable std::map<
      std::tuple<int, std::uint32_t, bool, bool, std::int32_t, std::int32_t, std::int64_t, std::int32_t, std::int64_t>,
      std::int64_t>
      room_of_;
  ClearTally clear_;                       // backfill: the clear nodes at the cursor
  bool avail_all_ = true;                  // build_avail: rebuild every node
  std::uint64_t avail_up_changes_ = 0;     // the cluster's up_changes() at the last full build
  std::vector<NodeId> avail_stale_;        // nodes released since the last build
  std::vector<std::uint8_t> avail_free_;   // per node: avail_ has it up with a GPU free (choose)
  std::vector<std::uint64_t> avail_bits_;  // the same, as bits by node id
  void note_avail_free(NodeId id) {
    avail_free_[id] = avail_[id].ok && avail_[id].gpus > 0 ? 1 : 0;
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    if (avail_free_[id] != 0)
      avail_bits_[id / 64] |= bit;
    else
      avail_bits_[id / 64] &= ~bit;
    if (base_ok_) base_note(id);
  }
  // Backfill's clear nodes at the start of a pass (no reservation), kept as avail_ changes, with
  // per node the free GPUs counted (up and not held: its free GPUs, at least 0; else -1).
  bool base_ok_ = false;       // false: rebuilt at the next pass (a node held, or the nodes rebuilt)
  std::size_t base_held_ = 0;  // nodes held for a job (held_for_ changes only with base_ok_ = false)
  std::vector<std::int32_t> base_g_;
  ClearTally base_;
  std::vector<JobIndex> order_;      // backfill: the jobs it tests, in queue order
  std::vector<std::int32_t> least_;  // backfill: the fewest GPUs a job of order_ asks from each one on
  std::vector<Tick> shortest_;       // backfill, with a node held: the shortest limit from each job on
  std::vector<JobIndex> head_;       // main scheduler: the jobs it looks at, in queue order
  // keys_version_ when head_ (order_) was last read from queue_, with no job held by a limit
  // (order_); else ~0. The same keys give the same jobs: they are not read again.
  std::uint64_t head_keys_ = ~std::uint64_t{0}, order_keys_ = ~std::uint64_t{0};
  std::vector<std::uint64_t> blocked_;  // main scheduler: nodes of the partitions failed in this pass (bits by id)
  void base_note(NodeId id) {
    const Avail& a = avail_[id];
    const std::int32_t g = a.ok && held_for_[id] == kNoJob ? std::max(a.gpus, 0) : -1;
    if (g == base_g_[id]) return;
    base_.put(id, base_g_[id], -1);
    base_.put(id, g, 1);
    base_g_[id] = g;
  }
  void base_build(const ClusterView& view);

  friend std::unique_ptr<Policy> slurm::make_policy(Config config);
};

}  // namespace headroom::policies::slurm::detail
