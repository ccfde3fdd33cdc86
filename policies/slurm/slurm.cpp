#include "policies/slurm/slurm.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "models/topology.hpp"
#include "sim/text.hpp"

namespace headroom::policies::slurm {

using models::Job;
using models::JobState;
using models::kNoJob;
using models::NodeId;

// ---------------------------------------------------------------------------------------------
// Fair-share arithmetic.

int AssocTree::add(const std::string& n, int par, double sh, bool user) {
  const int id = static_cast<int>(name.size());
  name.push_back(n);
  parent.push_back(par);
  shares.push_back(sh);
  is_user.push_back(user);
  children.emplace_back();
  if (par >= 0) children[static_cast<std::size_t>(par)].push_back(id);
  return id;
}

namespace {

// Subtree usage of every node from the users' usage (non-users' own entries are ignored).
std::vector<double> subtree_usage(const AssocTree& t, const std::vector<double>& usage) {
  const std::size_t n = t.name.size();
  std::vector<double> u(n, 0.0);
  // Children may be added after their parent or before; walk depth-first from root.
  std::vector<std::pair<int, bool>> stack{{0, false}};
  while (!stack.empty()) {
    auto [i, done] = stack.back();
    stack.pop_back();
    const auto si = static_cast<std::size_t>(i);
    if (done) {
      if (t.is_user[si]) {
        u[si] = si < usage.size() ? usage[si] : 0.0;
      } else {
        for (int c : t.children[si]) u[si] += u[static_cast<std::size_t>(c)];
      }
      continue;
    }
    stack.push_back({i, true});
    for (int c : t.children[si]) stack.push_back({c, false});
  }
  return u;
}

// Per association: the sum of `v` over its children, in the children's order (so every sibling
// sees the same sum as a per-sibling loop would give, once per parent instead of once per child).
std::vector<double> child_sums(const AssocTree& t, const std::vector<double>& v) {
  std::vector<double> sum(t.name.size(), 0.0);
  for (std::size_t p = 0; p < sum.size(); ++p)
    for (int c : t.children[p]) sum[p] += v[static_cast<std::size_t>(c)];
  return sum;
}

}  // namespace

std::vector<double> classic_fairshare(const AssocTree& t, const std::vector<double>& usage, double dampening) {
  const std::size_t n = t.name.size();
  const auto u = subtree_usage(t, usage);
  const double total = u[0];
  std::vector<double> s(n, 1.0), ue(n, 0.0), f(n, 1.0);
  std::vector<int> order{0};
  for (std::size_t k = 0; k < order.size(); ++k)
    for (int c : t.children[static_cast<std::size_t>(order[k])]) order.push_back(c);
  const auto shares_under = child_sums(t, t.shares);
  for (int i : order) {
    const auto si = static_cast<std::size_t>(i);
    const int p = t.parent[si];
    if (p < 0) continue;
    const auto sp = static_cast<std::size_t>(p);
    const double sib = shares_under[sp];
    const double norm = sib > 0 ? t.shares[si] / sib : 0.0;
    s[si] = s[sp] * norm;
    const double ua = total > 0 ? u[si] / total : 0.0;
    ue[si] = p == 0 ? ua : ua + (ue[sp] - ua) * norm;
    f[si] = s[si] > 0 ? std::exp2(-(ue[si] / s[si]) / dampening) : 0.0;
  }
  return f;
}

std::vector<double> fair_tree_fairshare(const AssocTree& t, const std::vector<double>& usage,
                                        std::vector<double>* level_fs) {
  const std::size_t n = t.name.size();
  const auto u = subtree_usage(t, usage);
  std::vector<double> lf(n, 0.0), f(n, 0.0);
  const auto shares_under = child_sums(t, t.shares), usage_under = child_sums(t, u);
  for (std::size_t i = 1; i < n; ++i) {
    const auto p = static_cast<std::size_t>(t.parent[i]);
    const double sib = shares_under[p];
    const double sib_usage = usage_under[p];
    const double sn = sib > 0 ? t.shares[i] / sib : 0.0;
    const double un = sib_usage > 0 ? u[i] / sib_usage : 0.0;
    lf[i] = sn == 0 ? 0.0 : (un == 0 ? std::numeric_limits<double>::infinity() : sn / un);
  }
  double users = 0;
  for (std::size_t i = 0; i < n; ++i) users += t.is_user[i] ? 1 : 0;
  double rank = users;
  // Depth-first over siblings sorted by level FS (fair_tree.c _calc_tree_fs).
  auto visit = [&](auto&& self, std::vector<int> sibs) -> void {
    std::stable_sort(sibs.begin(), sibs.end(),
                     [&](int a, int b) { return lf[static_cast<std::size_t>(a)] > lf[static_cast<std::size_t>(b)]; });
    bool have_prev = false;
    double prev_lf = 0, prev_hi = 0;
    std::size_t i = 0;
    while (i < sibs.size()) {
      const auto si = static_cast<std::size_t>(sibs[i]);
      if (t.is_user[si]) {
        if (have_prev && lf[si] == prev_lf) {
          f[si] = prev_hi / users;
        } else {
          prev_hi = rank;
          f[si] = rank / users;
        }
        rank -= 1;
        have_prev = true;
        prev_lf = lf[si];
        ++i;
        continue;
      }
      // Tied sibling accounts have their children merged.
      std::size_t j = i;
      std::vector<int> merged;
      while (j < sibs.size() && !t.is_user[static_cast<std::size_t>(sibs[j])] &&
             lf[static_cast<std::size_t>(sibs[j])] == lf[si]) {
        for (int c : t.children[static_cast<std::size_t>(sibs[j])]) merged.push_back(c);
        ++j;
      }
      const double hi = (have_prev && lf[si] == prev_lf) ? prev_hi : rank;
      self(self, merged);
      have_prev = true;
      prev_lf = lf[si];
      prev_hi = hi;
      i = j;
    }
  };
  visit(visit, t.children[0]);
  if (level_fs != nullptr) *level_fs = lf;
  return f;
}

std::uint32_t multifactor_priority(const Config& c, const Factors& fa) {
  double p = c.w_age * fa.age + c.w_fairshare * fa.fairshare + c.w_jobsize * fa.jobsize + c.w_partition * fa.partition +
             c.w_qos * fa.qos;
  for (const auto& [r, w] : c.w_tres) {
    const auto it = fa.tres.find(r);
    if (it != fa.tres.end()) p += w * it->second;
  }
  if (!(p >= 1)) return 1;
  if (p >= 4294967295.0) return 4294967295u;
  return static_cast<std::uint32_t>(std::floor(p));
}

// ---------------------------------------------------------------------------------------------
// The policy.

namespace {

constexpr Tick kYear = 365 * sim::kDay;
constexpr int kNoPart = -1;

Tick ceil_to(Tick t, Tick res) { return res <= 1 ? t : (t + res - 1) / res * res; }

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
  void reset(std::int32_t max_gpus, std::size_t nodes) {
    max = max_gpus;
    words = (nodes + 63) / 64;
    count.assign(static_cast<std::size_t>(max) + 1, 0);
    bits.assign((static_cast<std::size_t>(max) + 1) * words, 0);
    gpus = over = 0;
  }
  // A clear node's free GPUs from `from` to `to` (both at least 0): put(id, from, -1) and
  // put(id, to, 1) in one step.
  [[gnu::always_inline]] void move(NodeId id, std::int32_t from, std::int32_t to) {
    if (from == to) return;
    over += (to > max ? 1 : 0) - (from > max ? 1 : 0);
    gpus += to - from;
    const auto bf = static_cast<std::size_t>(std::min(from, max)), bt = static_cast<std::size_t>(std::min(to, max));
    if (bf == bt) return;
    --count[bf];
    ++count[bt];
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    bits[bf * words + id / 64] &= ~bit;
    bits[bt * words + id / 64] |= bit;
  }
  // Node id with g GPUs free added (sign 1) or taken out (-1); g < 0: not clear, nothing to do.
  [[gnu::always_inline]] void put(NodeId id, std::int32_t g, int sign) {
    if (g < 0) return;
    if (g > max) over += sign;
    const auto b = static_cast<std::size_t>(std::min(g, max));
    count[b] += sign;
    gpus += sign * g;
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    if (sign > 0)
      bits[b * words + id / 64] |= bit;
    else
      bits[b * words + id / 64] &= ~bit;
  }
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
  template <typename F>
  void read(F&& f) const {
    std::size_t a = 0, b = 0;
    while (true) {
      while (a < long_.size() && long_[a].gone) ++a;
      while (b < new_.size() && new_[b].gone) ++b;
      const bool take_a = a < long_.size() && (b == new_.size() || long_[a].r <= new_[b].r);
      if (!take_a && b == new_.size()) return;
      if (!f(take_a ? long_[a++] : new_[b++])) return;
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

// Node names <pool><index> in hostlist syntax: "gpu[0-3,8],cpu0".
std::vector<std::string> expand_hostlist(const std::string& text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    int depth = 0;
    while (j < text.size() && (text[j] != ',' || depth > 0)) {
      if (text[j] == '[') ++depth;
      if (text[j] == ']') --depth;
      ++j;
    }
    std::string item = text.substr(i, j - i);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    const auto open = item.find('[');
    if (open == std::string::npos || item.back() != ']') {
      if (!item.empty()) out.push_back(item);
    } else {
      const std::string prefix = item.substr(0, open);
      const std::string ranges = item.substr(open + 1, item.size() - open - 2);
      std::size_t k = 0;
      while (k <= ranges.size()) {
        std::size_t e = ranges.find(',', k);
        if (e == std::string::npos) e = ranges.size();
        const std::string r = ranges.substr(k, e - k);
        const auto dash = r.find('-');
        try {
          const long lo = std::stol(r.substr(0, dash));
          const long hi = dash == std::string::npos ? lo : std::stol(r.substr(dash + 1));
          for (long x = lo; x <= hi && x - lo < 1'000'000; ++x) out.push_back(prefix + std::to_string(x));
        } catch (...) {
          out.push_back(prefix + r);  // not a number: an unknown node name, reported as such
        }
        k = e + 1;
      }
    }
    i = j + 1;
  }
  return out;
}

class SlurmPolicy final : public Policy, public Inspect {
 public:
  explicit SlurmPolicy(Config c) : c_(std::move(c)) {}

  std::string_view name() const override { return "slurm"; }

  // slurmctld's association check refuses the submission (sbatch exits with an error).
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {false,
            "permission denied: sbatch: error: Batch job submission failed: Invalid account or "
            "account/partition combination specified (user " +
                name_of(w.tenants, job.tenant) + ", partition " + name_of(w.queues, job.queue) + ")"};
  }

  void on_submit(const ClusterView& view, JobIndex j) override {
    init(view);
    advance_usage(view.now());
    const Job& job = view.workload().jobs[j];
    part_[j] = partition_of(view, job);
    eligible_[j] = job.submit;
    if (part_[j] == kNoPart) {
      to_reject_.push_back({j, "invalid partition \"" + view.workload().queues.name(job.queue) +
                                   "\": not among the configured partitions"});
      return;
    }
    if (const PartitionState st = parts_[static_cast<std::size_t>(part_[j])].conf.state;
        st == PartitionState::Drain || st == PartitionState::Inactive) {
      to_reject_.push_back({j, "partition " + parts_[static_cast<std::size_t>(part_[j])].conf.name + " is " +
                                   (st == PartitionState::Drain ? "DRAIN" : "INACTIVE") +
                                   ": sbatch: error: Batch job submission failed: Partition in invalid state"});
      return;
    }
    shape_[j] = make_shape(view, job, parts_[static_cast<std::size_t>(part_[j])]);
    limit_[j] = time_limit(job, parts_[static_cast<std::size_t>(part_[j])]);
    if (std::string why = never_fits(view, j); !why.empty()) {
      to_reject_.push_back({j, why});
      return;
    }
    prio_[j] = compute_priority(view, j, view.now());
    enqueue(j);
    fresh_.push_back(j);
    dirty_ = true;
  }

  void on_requeue(const ClusterView& view, JobIndex j) override {
    advance_usage(view.now());
    dirty_ = true;
    if (suspended_.count(j) != 0) return;  // waits for its preemptor to end, off the queue
    used_limit_[j] = 0;
    eligible_[j] = view.now() + c_.cred_expire + sim::kSecond;
    waiting_.insert({eligible_[j], j});
    begin_wait_.push_back(j);
  }

  void on_release(const ClusterView& view, JobIndex j) override {
    advance_usage(view.now());
    dirty_ = true;
    for (const auto& sl : view.placement(j)) avail_stale_.push_back(sl.node);
    by_kill_.erase({kill_at_[j], j});
    unbook_release(j);
    const Job& job = view.workload().jobs[j];
    const auto leaf = static_cast<std::size_t>(leaf_of_[job.tenant]);
    charge(leaf, view.now());
    rate_[leaf] -= rate_of_[j];
    if (std::abs(rate_[leaf]) < 1e-9) rate_[leaf] = 0;
    rate_of_[j] = 0;
    if (shape_[j].exclusive)
      for (const auto& s : view.placement(j)) --excl_[s.node];
    if (suspended_.count(j) != 0) used_limit_[j] += view.now() - my_start_[j];
    if (suspended_.count(j) == 0) limits_.on_end(j, job);  // a suspended job keeps counting
    ++queue_version_;                                      // a limit may hold a job no more
    // Victims this job suspended resume once it is gone.
    for (auto& [victim, s] : suspended_)
      if (s.by == j) s.resumable = true;
    nominee_.erase(j);
  }

  void on_end(const ClusterView& view, JobIndex j) override {
    limits_.on_end(j, view.workload().jobs[j]);
    ++queue_version_;
    dequeue(j);
    nominee_.erase(j);
    dirty_ = true;
  }

  void schedule(Session& s) override {
    init(s);
    const Tick now = s.now();
    advance_usage(now);
    for (const auto& [j, why] : to_reject_)
      if (s.state(j) == JobState::Pending) s.reject(j, why);
    to_reject_.clear();
    kill_overruns(s);
    while (!waiting_.empty() && waiting_.begin()->first <= now) {
      const JobIndex j = waiting_.begin()->second;
      waiting_.erase(waiting_.begin());
      if (s.state(j) != JobState::Pending) continue;
      prio_[j] = compute_priority(s, j, now);
      enqueue(j);
      fresh_.push_back(j);
      dirty_ = true;
    }
    // Requeued jobs not yet eligible again: squeue's BeginTime.
    for (JobIndex j : std::exchange(begin_wait_, {}))
      if (s.state(j) == JobState::Pending && !s.retrying(j) && eligible_[j] > now)
        s.pending_reason(j,
                         "BeginTime: the job's earliest start time has not yet been reached (requeued: eligible "
                         "again after cred_expire + 1 s)");
    if (prio_stale_) recompute_priorities(s, now);
    rotate_gangs(s);
    resume_suspended(s);
    build_avail(s);
    main_scheduler(s);
    if (c_.backfill && dirty_ && now >= last_bf_ + c_.bf_interval) {
      backfill(s);
      last_bf_ = now;
      dirty_ = false;
    }
    // Wake only when something can change.
    if (!waiting_.empty()) s.wake_at(waiting_.begin()->first);
    if (!queue_.empty()) {
      if (c_.backfill && dirty_) s.wake_at(last_bf_ + c_.bf_interval);
      if (c_.multifactor && (c_.w_age > 0 || c_.w_fairshare > 0) && queue_.size() > 1) s.wake_at(next_calc_);
    }
  }

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

  void init(const ClusterView& view) {
    if (ready_) return;
    ready_ = true;
    workload_ = &view.workload();
    limits_ = Limits(c_.limits);
    limits_.init(view.workload());
    const auto& cl = view.cluster();
    const auto& w = view.workload();
    const std::size_t n = cl.nodes().size(), jobs = w.jobs.size();
    weight_.assign(n, 1);
    for (NodeId id = 0; id < n; ++id) {
      const auto it = c_.node_weight.find(cl.spec().pools[cl.node(id).pool].name);
      if (it != c_.node_weight.end()) weight_[id] = it->second;
    }
    excl_.assign(n, 0);
    for (const auto& node : cl.nodes()) cap_.push_back(NodeCap{node.gpus, node.cpus, node.memory_mib});
    plain_nodes_ =
        std::all_of(cap_.begin(), cap_.end(), [](const NodeCap& c) { return c.cpus == 0 && c.memory_mib == 0; }) &&
        std::all_of(weight_.begin(), weight_.end(), [&](std::int64_t w) { return w == weight_.front(); });
    held_for_.assign(n, kNoJob);
    for (const auto& node : cl.nodes()) {
      total_gpus_ += node.gpus;
      total_cpus_ += node.cpus;
    }
    // Partitions.
    auto make_part = [&](const PartitionConf& conf) {
      Part p;
      p.conf = conf;
      p.member.assign(n, 0);
      for (NodeId id = 0; id < n; ++id) {
        const auto& pool = cl.spec().pools[cl.node(id).pool].name;
        if (conf.pools.empty() || std::find(conf.pools.begin(), conf.pools.end(), pool) != conf.pools.end()) {
          p.member[id] = 1;
          p.nodes.push_back(id);
          p.gpus += cl.node(id).gpus;
          p.cpus += cl.node(id).cpus;
          p.mem += cl.node(id).memory_mib;
          p.biggest = std::max(p.biggest, cl.node(id).gpus);
        }
      }
      std::stable_sort(p.nodes.begin(), p.nodes.end(), [&](NodeId a, NodeId b) { return weight_[a] < weight_[b]; });
      p.by_id = std::is_sorted(p.nodes.begin(), p.nodes.end());
      p.bits.assign((n + 63) / 64, 0);
      for (NodeId id : p.nodes) p.bits[id / 64] |= std::uint64_t{1} << (id % 64);
      return p;
    };
    configured_parts_ = !c_.partitions.empty();
    if (configured_parts_) {
      for (const auto& pc : c_.partitions) parts_.push_back(make_part(pc));
    } else {
      for (const auto& q : w.queues.names()) {
        PartitionConf pc;
        pc.name = q;
        parts_.push_back(make_part(pc));
      }
    }
    for (const auto& p : parts_) max_job_factor_ = std::max(max_job_factor_, p.conf.job_factor);
    // QOS: configured ones, then "normal" and every name of the workload not configured.
    for (const auto& q : c_.qos) qos_.push_back({q, {}, 0});
    auto qos_index = [&](const std::string& name) {
      for (std::size_t i = 0; i < qos_.size(); ++i)
        if (qos_[i].conf.name == name) return static_cast<int>(i);
      QosR r;
      r.conf.name = name;
      qos_.push_back(r);
      return static_cast<int>(qos_.size() - 1);
    };
    normal_qos_ = qos_index("normal");
    for (const auto& q : w.qos.names()) qos_of_id_.push_back(qos_index(q));
    for (auto& q : qos_) {
      for (const auto& target : q.conf.preempt)
        for (std::size_t i = 0; i < qos_.size(); ++i)
          if (qos_[i].conf.name == target) q.preempts.push_back(static_cast<int>(i));
      max_qos_prio_ = std::max(max_qos_prio_, q.conf.priority);
    }
    // Levels in the Preempt graph (longest chain, bounded against cycles).
    for (std::size_t round = 0; round < qos_.size(); ++round)
      for (auto& q : qos_)
        for (int t : q.preempts)
          q.level = std::max(q.level, std::min<std::int64_t>(qos_[static_cast<std::size_t>(t)].level + 1,
                                                             static_cast<std::int64_t>(qos_.size())));
    // Associations.
    tree_.add("root", -1, 1, false);
    std::map<std::string, int> account, user;
    for (const auto& a : c_.accounts) account[a.name] = tree_.add(a.name, -1, static_cast<double>(a.shares), false);
    for (const auto& a : c_.accounts) {
      const int id = account[a.name];
      const int par = a.parent == "root" ? 0 : account.at(a.parent);
      tree_.parent[static_cast<std::size_t>(id)] = par;
      tree_.children[static_cast<std::size_t>(par)].push_back(id);
    }
    for (const auto& a : c_.accounts)
      for (const auto& u : a.users)
        if (user.count(u) == 0) user[u] = tree_.add(u, account[a.name], 1, true);
    for (const auto& t : w.tenants.names()) {
      if (user.count(t) != 0) {
        leaf_of_.push_back(user[t]);
      } else if (account.count(t) != 0) {
        user[t] = tree_.add(t, account[t], 1, true);
        leaf_of_.push_back(user[t]);
      } else {
        const int acc = tree_.add(t, 0, 1, false);
        user[t] = tree_.add(t, acc, 1, true);
        leaf_of_.push_back(user[t]);
      }
    }
    const std::size_t na = tree_.name.size();
    usage_.assign(na, 0);
    for (const auto& [who, u] : c_.raw_usage)  // sshare's RawUsage, on the tree's leaves
      if (const auto it = user.find(who); it != user.end()) usage_[static_cast<std::size_t>(it->second)] = u;
    pend_.assign(na, 0);
    rate_.assign(na, 0);
    since_.assign(na, 0);
    refresh_fairshare();
    // Topology.
    std::map<std::string, NodeId> node_by_name;
    for (NodeId id = 0; id < n; ++id) {
      const auto p = cl.node(id).pool;
      node_by_name[cl.spec().pools[p].name + std::to_string(id - cl.pool_first_node(p))] = id;
    }
    if (c_.switches.empty() && cl.spec().topology) use_cluster_topology(*cl.spec().topology);
    for (const auto& sc : c_.switches) {
      Switch sw;
      sw.name = sc.name;
      for (const auto& nn : expand_hostlist(sc.nodes)) {
        const auto it = node_by_name.find(nn);
        if (it != node_by_name.end()) sw.nodes.push_back(it->second);
      }
      switches_.push_back(std::move(sw));
    }
    for (std::size_t i = 0; i < c_.switches.size(); ++i)
      for (const auto& child : c_.switches[i].switches)
        for (std::size_t k = 0; k < switches_.size(); ++k)
          if (switches_[k].name == child && k != i) {
            switches_[i].children.push_back(static_cast<int>(k));
            switches_[i].leaf = false;
          }
    for (std::size_t round = 0; round < switches_.size(); ++round)
      for (auto& sw : switches_)
        for (int ch : sw.children)
          sw.level = std::max(sw.level, std::min(switches_[static_cast<std::size_t>(ch)].level + 1,
                                                 static_cast<int>(switches_.size())));
    // Nodes below each switch (leaves first by level order).
    std::vector<std::size_t> by_level(switches_.size());
    std::iota(by_level.begin(), by_level.end(), 0);
    std::stable_sort(by_level.begin(), by_level.end(),
                     [&](std::size_t a, std::size_t b) { return switches_[a].level < switches_[b].level; });
    for (std::size_t i : by_level) {
      auto& sw = switches_[i];
      for (int ch : sw.children)
        for (NodeId id : switches_[static_cast<std::size_t>(ch)].nodes) sw.nodes.push_back(id);
      std::sort(sw.nodes.begin(), sw.nodes.end());
      sw.nodes.erase(std::unique(sw.nodes.begin(), sw.nodes.end()), sw.nodes.end());
    }
    // Per-job state.
    part_.assign(jobs, kNoPart);
    shape_.assign(jobs, {});
    limit_.assign(jobs, kUnlimited);
    used_limit_.assign(jobs, 0);
    eligible_.assign(jobs, 0);
    prio_.assign(jobs, 1);
    key_.assign(jobs, {});
    queued_.assign(jobs, 0);
    kill_at_.assign(jobs, 0);
    my_start_.assign(jobs, 0);
    rate_of_.assign(jobs, 0);
    next_calc_ = (w.jobs.empty() ? 0 : w.jobs.front().submit) + c_.calc_period;
    last_calc_ = next_calc_ - c_.calc_period;
  }

  int partition_of(const ClusterView& view, const Job& job) const {
    const std::string& q = view.workload().queues.name(job.queue);
    for (std::size_t i = 0; i < parts_.size(); ++i)
      if (parts_[i].conf.name == q) return static_cast<int>(i);
    if (q.find(',') != std::string::npos) {
      // `sbatch -p lo,hi`: the listed partition that takes jobs, an UP one before a DOWN one,
      // then the highest PriorityTier, then the first listed.
      int best = kNoPart;
      const auto rank = [&](int i) {
        const auto& c = parts_[static_cast<std::size_t>(i)].conf;
        return std::pair<int, std::int64_t>(c.state == PartitionState::Up ? 1 : 0, c.tier);
      };
      for (const std::string& name : sim::split_on(q, ',')) {
        for (std::size_t i = 0; i < parts_.size(); ++i) {
          const auto& c = parts_[i].conf;
          if (c.name != name || c.state == PartitionState::Drain || c.state == PartitionState::Inactive) continue;
          if (best == kNoPart || rank(static_cast<int>(i)) > rank(best)) best = static_cast<int>(i);
        }
      }
      if (best != kNoPart) return best;
    }
    if (configured_parts_ && (q.empty() || q == "default")) {
      for (std::size_t i = 0; i < parts_.size(); ++i)
        if (parts_[i].conf.is_default) return static_cast<int>(i);
      return 0;
    }
    return kNoPart;
  }

  static Tick time_limit(const Job& job, const Part& p) {
    Tick limit = job.walltime > 0 ? job.walltime : p.conf.default_time;
    if (limit == kUnlimited || limit <= 0)
      limit = p.conf.max_time;
    else if (p.conf.max_time != kUnlimited)
      limit = std::min(limit, p.conf.max_time);
    return limit;  // kUnlimited when neither
  }

  Shape make_shape(const ClusterView& view, const Job& job, const Part& p) const {
    Shape s;
    s.total = job.gpus;
    s.exclusive = p.conf.exclusive;
    const std::int32_t g = job.gpus;
    std::int32_t k = 0;
    if (job.gpus_per_node > 0 && g > 0) {
      k = (g + job.gpus_per_node - 1) / job.gpus_per_node;
      if (job.nodes > k) k = job.nodes;
    } else if (job.nodes > 0 || g <= 0) {
      k = std::max<std::int32_t>(1, job.nodes);
    }
    if (k > 0) {
      s.fixed = true;
      if (job.gpus_per_node > 0 && g > 0) {
        for (std::int32_t left = g, i = 0; i < k; ++i) {
          s.slices.push_back(std::min(left, job.gpus_per_node));
          left -= s.slices.back();
        }
      } else {
        for (std::int32_t i = 0; i < k; ++i) s.slices.push_back(g / k + (i < g % k ? 1 : 0));
      }
      s.need = s.slices.front();
      s.cpn = job.cpus > 0 ? (job.cpus + k - 1) / k : 0;
      s.mpn = job.memory_mib > 0 ? (job.memory_mib + k - 1) / k : 0;
    } else {
      s.cpg = job.cpus > 0 ? (job.cpus + g - 1) / g : 0;
      s.mpg = job.memory_mib > 0 ? (job.memory_mib + g - 1) / g : 0;
    }
    (void)view;
    return s;
  }

  bool type_ok(const ClusterView& view, const Job& job, NodeId id) const {
    if (job.gpu_type == 0) return true;  // the common case: no virtual call
    const auto& w = view.workload();
    const auto& pool = view.cluster().spec().pools[view.cluster().node(id).pool];
    return pool.gpu_type == w.gpu_type_names.at(job.gpu_type - 1u);
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

  std::string never_fits(const ClusterView& view, JobIndex j) const {
    const Job& job = view.workload().jobs[j];
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    const Shape& s = shape_[j];
    // What the partition's nodes hold of this shape when empty, once per kind of ask.
    const auto key = std::tuple(part_[j], job.gpu_type, s.fixed, s.exclusive, s.need, s.cpn, s.mpn, s.cpg, s.mpg);
    auto [at, fresh] = room_of_.try_emplace(key, 0);
    if (fresh)
      for (NodeId id : p.nodes) {
        if (!type_ok(view, job, id)) continue;
        const auto& node = view.cluster().node(id);
        const Avail full{node.gpus, node.cpus, node.memory_mib, true};
        at->second += capacity(view, s, id, full) > 0 ? (s.fixed ? 1 : capacity(view, s, id, full)) : 0;
      }
    const std::int64_t have = at->second;
    const std::int64_t want = s.fixed ? static_cast<std::int64_t>(s.slices.size()) : s.total;
    if (have >= want) return {};
    return "never fits partition " + p.conf.name + ": asks for " + std::to_string(job.gpus) + " GPUs" +
           (s.fixed ? " on " + std::to_string(s.slices.size()) + " nodes" : "") +
           " (Requested node configuration is not available)";
  }

  // --- Priority and usage ----------------------------------------------------------------------

  double billing(const Job& job) const {
    if (c_.billing.empty()) return job.cpus > 0 ? job.cpus : job.gpus;
    double b = 0;
    for (const auto& [r, w] : c_.billing) {
      if (r == "CPU") b += w * (job.cpus > 0 ? job.cpus : 0);
      if (r == "Mem") b += w * static_cast<double>(job.memory_mib) / 1024.0;
      if (r == "GRES/gpu") b += w * job.gpus;
    }
    return b;
  }

  const QosR& qos_of(const Job& job) const {
    return qos_[static_cast<std::size_t>(job.qos == models::kNone ? normal_qos_ : qos_of_id_.at(job.qos))];
  }

  void charge(std::size_t leaf, Tick now) {
    if (now > since_[leaf]) pend_[leaf] += rate_[leaf] * sim::to_seconds(now - since_[leaf]);
    since_[leaf] = std::max(since_[leaf], now);
  }

  // Applies every PriorityCalcPeriod tick up to `now`.
  void advance_usage(Tick now) {
    if (!ready_ || now < next_calc_) return;
    while (next_calc_ <= now) {
      bool quiet = c_.usage_reset == ResetPeriod::None;
      for (std::size_t i = 0; quiet && i < rate_.size(); ++i) quiet = rate_[i] == 0 && pend_[i] == 0;
      Tick t = next_calc_;
      if (quiet) t = next_calc_ + (now - next_calc_) / c_.calc_period * c_.calc_period;
      const double d =
          c_.half_life > 0 ? std::exp2(-sim::to_seconds(t - last_calc_) / sim::to_seconds(c_.half_life)) : 1.0;
      // From time 0 of the trace; months, quarters and years of 30, 91 and 365 days.
      const Tick period = c_.usage_reset == ResetPeriod::Daily       ? sim::kDay
                          : c_.usage_reset == ResetPeriod::Weekly    ? 7 * sim::kDay
                          : c_.usage_reset == ResetPeriod::Monthly   ? 30 * sim::kDay
                          : c_.usage_reset == ResetPeriod::Quarterly ? 91 * sim::kDay
                                                                     : 365 * sim::kDay;
      const bool reset = c_.usage_reset != ResetPeriod::None && t / period != last_calc_ / period;
      for (std::size_t i = 0; i < usage_.size(); ++i) {
        charge(i, t);
        usage_[i] = (reset ? 0.0 : usage_[i] * d) + pend_[i];
        pend_[i] = 0;
      }
      last_calc_ = t;
      next_calc_ = t + c_.calc_period;
    }
    refresh_fairshare();
    prio_stale_ = true;
  }

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

  std::uint32_t compute_priority(const ClusterView& view, JobIndex j, Tick now) const {
    if (!c_.multifactor) return 1;
    const Job& job = view.workload().jobs[j];
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    const Shape& s = shape_[j];
    Factors f;
    if (c_.w_age > 0) f.age = std::clamp(sim::to_seconds(now - eligible_[j]) / sim::to_seconds(c_.max_age), 0.0, 1.0);
    if (c_.w_fairshare > 0) f.fairshare = fairshare().at(static_cast<std::size_t>(leaf_of_.at(job.tenant)));
    const bool have_cpus = total_cpus_ > 0 && job.cpus > 0;
    const double cpus = have_cpus ? job.cpus : job.gpus;
    const double cluster_cpus = static_cast<double>(have_cpus ? total_cpus_ : total_gpus_);
    if (c_.w_jobsize > 0 && cluster_cpus > 0) {
      const double nodes_total = static_cast<double>(view.cluster().nodes().size());
      double min_nodes = s.fixed ? static_cast<double>(s.slices.size()) : 1.0;
      if (!s.fixed) min_nodes = std::ceil(static_cast<double>(job.gpus) / p.biggest);
      if (c_.small_relative_to_time) {
        const Tick lim = limit_[j] == kUnlimited ? kYear : limit_[j];
        const double per_node = cluster_cpus / nodes_total;
        const double size = std::max(cpus, min_nodes * per_node) / std::max(1.0, sim::to_seconds(lim) / 60.0);
        f.jobsize = std::min(1.0, size / cluster_cpus);
        if (c_.favor_small) f.jobsize = 1.0 - f.jobsize;
      } else if (c_.favor_small) {
        f.jobsize = ((nodes_total - min_nodes) / nodes_total + (cluster_cpus - cpus) / cluster_cpus) / 2;
      } else {
        f.jobsize = (min_nodes / nodes_total + cpus / cluster_cpus) / 2;
      }
    }
    if (c_.w_partition > 0)
      f.partition = c_.no_normal_part
                        ? static_cast<double>(p.conf.job_factor)
                        : (max_job_factor_ > 0 ? static_cast<double>(p.conf.job_factor) / max_job_factor_ : 0);
    if (c_.w_qos > 0) {
      const double qp = static_cast<double>(qos_of(job).conf.priority);
      f.qos = c_.no_normal_qos ? qp : (max_qos_prio_ > 0 ? qp / static_cast<double>(max_qos_prio_) : 0);
    }
    for (const auto& [r, w] : c_.w_tres) {
      (void)w;
      if (r == "CPU") f.tres[r] = p.cpus > 0 ? job.cpus / static_cast<double>(p.cpus) : 0;
      if (r == "Mem") f.tres[r] = p.mem > 0 ? static_cast<double>(job.memory_mib) / static_cast<double>(p.mem) : 0;
      if (r == "GRES/gpu") f.tres[r] = p.gpus > 0 ? job.gpus / static_cast<double>(p.gpus) : 0;
    }
    return multifactor_priority(c_, f);
  }

  void recompute_priorities(const ClusterView& view, Tick now) {
    prio_stale_ = false;
    // Only the age and fair-share factors change while a job waits: without their weights every
    // priority stays what it was when the job was queued.
    if (!c_.multifactor || (c_.w_age <= 0 && c_.w_fairshare <= 0)) return;
    std::vector<JobIndex> jobs;
    jobs.reserve(queue_.size());
    for (const auto& k : queue_) jobs.push_back(k.j);
    bool changed = false;
    for (JobIndex j : jobs) {
      const auto p = compute_priority(view, j, now);
      if (p == prio_[j]) continue;
      changed = true;
      dequeue(j);
      prio_[j] = p;
      enqueue(j);
    }
    if (changed) dirty_ = true;
  }

  void enqueue(JobIndex j) {
    if (said_.size() <= j) said_.resize(workload_->jobs.size(), 0);
    said_[j] = 0;  // (again) pending: the engine has no reason for it yet
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    const std::int64_t level = c_.preempt_type == PreemptType::Qos ? qos_of(workload_->jobs[j]).level : 0;
    key_[j] = Key{level, p.conf.tier, prio_[j], workload_->jobs[j].submit, j};
    queue_.insert(key_[j]);
    queued_[j] = 1;
    ++queue_version_;
  }
  void dequeue(JobIndex j) {
    if (j < queued_.size() && queued_[j] != 0) {
      queue_.erase(key_[j]);
      queued_[j] = 0;
      ++queue_version_;
    }
  }

  // --- Resources -------------------------------------------------------------------------------

  // avail_ from the cluster: in full when a node went down or came back, a node was held or let
  // go, or at the start; else only the nodes jobs released since (a start updates avail_ itself).
  void build_avail(const ClusterView& view) {
    const auto& nodes = view.cluster().nodes();
    // Node id's free GPUs (held or not) count by sign in free_now_ / held_free_.
    auto tally = [&](NodeId id, int sign) {
      if (avail_[id].ok) (held_for_[id] == kNoJob ? free_now_ : held_free_) += sign * avail_[id].gpus;
    };
    auto load = [&](NodeId id) {
      const auto& n = nodes[id];
      avail_[id] = Avail{n.free_gpus, n.free_cpus, n.free_memory_mib, n.up && excl_[id] == 0};
      tally(id, 1);
      note_avail_free(id);
    };
    if (!avail_all_ && avail_.size() == nodes.size() && view.cluster().up_changes() == avail_up_changes_) {
      for (NodeId id : avail_stale_) {
        tally(id, -1);
        load(id);
      }
      avail_stale_.clear();
      return;
    }
    avail_all_ = false;
    base_ok_ = false;
    avail_up_changes_ = view.cluster().up_changes();
    avail_stale_.clear();
    avail_.resize(nodes.size());
    avail_free_.resize(nodes.size());
    avail_bits_.assign((nodes.size() + 63) / 64, 0);
    free_now_ = held_free_ = 0;
    for (NodeId id = 0; id < nodes.size(); ++id) load(id);
  }

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

  // Without a topology block of its own, topology/tree follows the cluster's topology
  // (cluster.topology, docs/topology.md): its switches, levels (leaf = Slurm level 0) and nodes.
  void use_cluster_topology(const models::Topology& t) {
    for (models::SwitchId i = 0; i < t.switch_count(); ++i) {
      Switch sw;
      sw.name = t.switch_name(i);
      sw.level = t.level(i) - 1;
      for (models::SwitchId ch : t.children(i)) sw.children.push_back(static_cast<int>(ch));
      sw.leaf = sw.children.empty();
      const auto under = t.nodes_under(i);
      sw.nodes.assign(under.begin(), under.end());
      switches_.push_back(std::move(sw));
    }
  }

  // topology/tree: keep the candidates of the lowest switch that holds the job, and there of one
  // best-fit leaf or of the leaves with the most room first.
  void restrict_to_topology(const Shape& s, std::int64_t want) {
    // The candidates' capacities by node (-1: not a candidate), reset before returning.
    if (tcap_.size() < cap_.size()) tcap_.assign(cap_.size(), -1);
    for (const auto& [id, c] : cand_) tcap_[id] = c;
    auto reset = [&] {
      for (const auto& c : cand_) tcap_[c.first] = -1;
    };
    auto room = [&](const Switch& sw) {
      std::int64_t r = 0;
      for (NodeId id : sw.nodes)
        if (tcap_[id] >= 0) r += s.fixed ? 1 : tcap_[id];
      return r;
    };
    int best = -1;
    std::int64_t best_room = 0;
    for (std::size_t i = 0; i < switches_.size(); ++i) {
      const std::int64_t r = room(switches_[i]);
      if (r < want) continue;
      if (best < 0 || switches_[i].level < switches_[static_cast<std::size_t>(best)].level ||
          (switches_[i].level == switches_[static_cast<std::size_t>(best)].level && r < best_room)) {
        best = static_cast<int>(i);
        best_room = r;
      }
    }
    if (best < 0) {  // no switch holds the job: topology is ignored
      reset();
      return;
    }
    const Switch& top = switches_[static_cast<std::size_t>(best)];
    std::vector<NodeId> keep;
    if (top.leaf) {
      keep = top.nodes;
    } else {
      if (leaves_under_.size() != switches_.size()) {
        leaves_under_.assign(switches_.size(), {});
        for (std::size_t u = 0; u < switches_.size(); ++u)
          for (std::size_t i = 0; i < switches_.size(); ++i) {
            const auto& un = switches_[u].nodes;
            const auto& ln = switches_[i].nodes;
            if (switches_[i].leaf && !ln.empty() && std::includes(un.begin(), un.end(), ln.begin(), ln.end()))
              leaves_under_[u].push_back(i);
          }
      }
      std::vector<std::pair<std::int64_t, std::size_t>> leaves;
      for (std::size_t i : leaves_under_[static_cast<std::size_t>(best)]) leaves.push_back({room(switches_[i]), i});
      std::stable_sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      std::int64_t got = 0;
      for (const auto& [r, i] : leaves) {
        if (got >= want) break;
        keep.insert(keep.end(), switches_[i].nodes.begin(), switches_[i].nodes.end());
        got += r;
      }
      // One leaf enough: the best-fit one.
      for (auto it = leaves.rbegin(); it != leaves.rend(); ++it)
        if (it->first >= want) {
          keep = switches_[it->second].nodes;
          break;
        }
    }
    reset();
    std::sort(keep.begin(), keep.end());
    std::erase_if(cand_, [&](const auto& c) { return !std::binary_search(keep.begin(), keep.end(), c.first); });
  }

  models::Placement pick(const ClusterView& view, JobIndex j, const std::vector<Avail>& av) {
    const Job& job = view.workload().jobs[j];
    const Shape& s = shape_[j];
    models::Placement pl;
    auto slice = [&](NodeId id, std::int32_t g) {
      const auto& node = view.cluster().node(id);
      models::Slice sl{id, g, 0, 0};
      if (node.cpus > 0 && job.cpus > 0) sl.cpus = s.fixed ? s.cpn : std::min(av[id].cpus, g * s.cpg);
      if (node.memory_mib > 0 && job.memory_mib > 0) sl.memory_mib = s.fixed ? s.mpn : std::min(av[id].mem, g * s.mpg);
      pl.push_back(sl);
    };
    auto gpus_of = [&](NodeId id) { return av[id].gpus; };
    if (s.fixed) {
      // Best fit: lowest weight, fewest free GPUs, lowest id.
      const std::size_t k = s.slices.size();
      auto better = [&](const auto& a, const auto& b) {
        return std::tuple(weight_[a.first], gpus_of(a.first), a.first) <
               std::tuple(weight_[b.first], gpus_of(b.first), b.first);
      };
      std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(k), cand_.end(), better);
      for (std::size_t i = 0; i < k; ++i) slice(cand_[i].first, s.slices[i]);
      return pl;
    }
    // Flexible: the best-fit single node within the lowest weight that can hold the job...
    std::int64_t min_w = std::numeric_limits<std::int64_t>::max();
    {
      std::map<std::int64_t, std::int64_t> room;
      for (const auto& [id, c] : cand_) room[weight_[id]] += c;
      std::int64_t acc = 0;
      for (const auto& [w, r] : room) {
        acc += r;
        if (acc >= s.total) {
          min_w = w;
          break;
        }
      }
    }
    std::erase_if(cand_, [&](const auto& c) { return weight_[c.first] > min_w; });
    const std::pair<NodeId, std::int32_t>* single = nullptr;
    for (const auto& c : cand_)
      if (c.second >= s.total &&
          (single == nullptr || std::tuple(weight_[c.first], c.second, c.first) <
                                    std::tuple(weight_[single->first], single->second, single->first)))
        single = &c;
    if (single != nullptr) {
      slice(single->first, s.total);
      return pl;
    }
    // ...else the nodes with the most room first, and the best fit for what is left.
    std::stable_sort(cand_.begin(), cand_.end(), [&](const auto& a, const auto& b) {
      return std::tuple(weight_[a.first], -a.second, a.first) < std::tuple(weight_[b.first], -b.second, b.first);
    });
    std::int32_t left = s.total;
    std::size_t i = 0;
    for (; i < cand_.size() && left > cand_[i].second; ++i) {
      slice(cand_[i].first, cand_[i].second);
      left -= cand_[i].second;
    }
    std::size_t fit = i;
    for (std::size_t k = i; k < cand_.size(); ++k)
      if (cand_[k].second >= left && cand_[k].second < cand_[fit].second) fit = k;
    slice(cand_[fit].first, left);
    return pl;
  }

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
  // The same into `pl` (cleared first; its storage is kept).
  void quick_pick(const ClearTally& t, std::int32_t total, models::Placement& pl) const {
    constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
    pl.clear();
    if (t.gpus < total) return;
    auto lowest = [&](std::int32_t g, NodeId from) -> NodeId {  // the first node >= from with g GPUs free
      if (t.count[static_cast<std::size_t>(g)] == 0) return kNoNode;
      const std::uint64_t* bits = t.bits.data() + static_cast<std::size_t>(g) * t.words;
      std::size_t w = from / 64;
      if (w >= t.words) return kNoNode;
      std::uint64_t x = bits[w] & (~std::uint64_t{0} << (from % 64));
      while (x == 0) {
        if (++w == t.words) return kNoNode;
        x = bits[w];
      }
      return static_cast<NodeId>(w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
    };
    for (std::int32_t g = total; g <= t.max; ++g)
      if (const NodeId id = lowest(g, 0); id != kNoNode) {
        pl.push_back({id, total, 0, 0});
        return;
      }
    std::int32_t left = total;
    for (std::int32_t g = t.max; g >= 1; --g)
      for (NodeId id = lowest(g, 0); id != kNoNode; id = lowest(g, id + 1)) {
        if (left > g) {
          pl.push_back({id, g, 0, 0});
          left -= g;
          continue;
        }
        NodeId fit = id;
        for (std::int32_t h = left; h < g; ++h)
          if (const NodeId k = lowest(h, 0); k != kNoNode) {
            fit = k;
            break;
          }
        pl.push_back({fit, left, 0, 0});
        return;
      }
    pl.clear();
  }
  // Whether quick_pick may serve job j: a flexible job without GPU type on an Up partition of every
  // node, nodes of one weight without CPUs or memory modelled, no topology and no held node.
  bool quick_ok(JobIndex j, bool held_any) const {
    const Shape& a = shape_[j];
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    return plain_nodes_ && cap_.size() == avail_.size() && switches_.empty() && !held_any && !a.fixed && !a.exclusive &&
           workload_->jobs[j].gpu_type == 0 && p.conf.state == PartitionState::Up && p.nodes.size() == avail_.size();
  }

  std::string start(Session& s, JobIndex j, const models::Placement& pl, std::string_view reason) {
    std::string why = s.start(j, pl, reason);
    if (!why.empty()) return why;
    dequeue(j);
    const Job& job = s.workload().jobs[j];
    limits_.on_start(j, job);
    const Tick now = s.now();
    my_start_[j] = now;
    const Tick left = limit_[j] == kUnlimited ? kYear : limit_[j] - used_limit_[j];
    kill_at_[j] = now + std::max<Tick>(left, 0);
    by_kill_.insert({kill_at_[j], j});
    book_release(s, j);
    if (limit_[j] != kUnlimited) s.wake_at(kill_at_[j]);
    take(s, avail_, pl, shape_[j].exclusive);
    for (const auto& sl : pl) note_avail_free(sl.node);
    for (const auto& sl : pl) (held_for_[sl.node] == kNoJob ? free_now_ : held_free_) -= sl.gpus;
    if (shape_[j].exclusive)
      for (const auto& sl : pl) ++excl_[sl.node];
    const auto leaf = static_cast<std::size_t>(leaf_of_[job.tenant]);
    charge(leaf, now);
    rate_of_[j] = billing(job) * qos_of(job).conf.usage_factor;
    rate_[leaf] += rate_of_[j];
    return {};
  }

  // A job still running at its TimeLimit ends there in state TIMEOUT: here Failed (as the sacct
  // importer reads TIMEOUT) with the reason, not a preemption. Collected first: failing a job
  // calls back into this policy (on_release, on_end), which edits by_kill_.
  void kill_overruns(Session& s) {
    const Tick now = s.now();
    std::vector<JobIndex> due;
    for (auto it = by_kill_.begin(); it != by_kill_.end() && it->first <= now; ++it) {
      const JobIndex j = it->second;
      if (limit_[j] == kUnlimited || s.terminating(j)) continue;
      due.push_back(j);
    }
    for (const JobIndex j : due)
      if (s.state(j) == JobState::Running) s.fail(j, "timeout: TimeLimit reached");
  }

  // Gang time-slicing (SchedulerTimeSlice): when a pair's slice is over, the running member is
  // suspended for the suspended one, which resumes on its own nodes in this pass. A pair ends
  // when either member is gone; the other then resumes or runs on as after any suspension.
  void rotate_gangs(Session& s) {
    for (std::size_t i = 0; i < gangs_.size();) {
      Gang& g = gangs_[i];
      const auto alive = [&](JobIndex x) {
        const JobState st = s.state(x);
        return st == JobState::Pending || st == JobState::Running;
      };
      if (!alive(g.running) || !alive(g.waiting)) {
        gangs_.erase(gangs_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      // Mid-switch (a suspension still taking effect, a resume not yet applied): wait for it.
      const bool on = s.state(g.running) == JobState::Running && !s.terminating(g.running);
      const auto it = suspended_.find(g.waiting);
      const bool off = it != suspended_.end() && it->second.by == g.running && !it->second.resumable &&
                       s.state(g.waiting) == JobState::Pending;
      if (on && off && s.now() >= g.next) {
        const JobIndex on = g.running;
        if (s.preempt(on, PreemptMode::Checkpoint, 0, g.waiting, "gang: time slice over (SUSPEND)", 0).empty()) {
          suspended_[on] = Suspended{g.waiting, s.placement(on), false};
          for (const auto& sl : s.placement(on)) held_for_[sl.node] = g.waiting;
          base_ok_ = false;
          avail_all_ = true;
          std::swap(g.running, g.waiting);
        }
        g.next = s.now() + c_.time_slice;
      }
      // A slice over while the pair is mid-switch is taken up by the event that ends the switch
      // (the suspension or resume taking effect asks for a pass): a wake-up at now would repeat
      // this pass at the same instant for ever.
      if (g.next > s.now()) s.wake_at(g.next);
      ++i;
    }
  }

  void resume_suspended(Session& s) {
    for (auto it = suspended_.begin(); it != suspended_.end();) {
      if (!it->second.resumable || s.state(it->first) != JobState::Pending) {
        ++it;
        continue;
      }
      const JobIndex v = it->first;
      const models::Placement pl = it->second.placement;
      for (const auto& sl : pl)
        if (held_for_[sl.node] == it->second.by) held_for_[sl.node] = kNoJob;
      base_ok_ = false;
      avail_all_ = true;
      it = suspended_.erase(it);
      build_avail(s);
      if (!start(s, v, pl, "resumed: preemptor ended").empty()) {
        // Its nodes were taken after all: it queues like a requeued job.
        prio_[v] = compute_priority(s, v, s.now());
        enqueue(v);
      }
    }
  }

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
  void say_priority(Session& s, JobIndex j) {
    said_[j] = 3;
    const auto pi = static_cast<std::size_t>(part_[j]);
    if (priority_reason_.size() != parts_.size()) {
      priority_reason_.clear();
      for (const auto& part : parts_)
        priority_reason_.push_back("Priority: one or more higher priority jobs exist for partition " + part.conf.name);
    }
    s.pending_reason(j, priority_reason_[pi]);
  }

  // A job over a per-user limit (policies/slurm/limits.hpp) is passed over by the main scheduler
  // and by backfill; it marks no partition failed.
  bool held_by_limit(Session& s, JobIndex j) {
    const LimitReason r = limits_.blocks(s.workload().jobs[j]);
    if (r == LimitReason::None) return false;
    if (said_[j] != 3 + static_cast<int>(r)) s.pending_reason(j, limit_reason_text(r));
    said_[j] = static_cast<std::uint8_t>(3 + static_cast<int>(r));
    return true;
  }

  void main_scheduler(Session& s) {
    if (queue_.empty()) {
      fresh_.clear();
      return;
    }
    // With nothing free and no preemption the pass only gives the head its reasons, which are said
    // once: a queue unchanged since such a pass (and no other pass between) has nothing to say.
    const bool idle = free_now_ <= 0 && c_.preempt_type == PreemptType::None;
    if (idle && fresh_.empty() && idle_version_ == queue_version_) return;
    idle_version_ = idle ? queue_version_ : ~std::uint64_t{0};
    std::vector<JobIndex>& head = head_;
    head.resize(static_cast<std::size_t>(
        std::clamp<std::int64_t>(c_.default_queue_depth, 0, static_cast<std::int64_t>(queue_.size()))));
    {
      auto it = queue_.begin();
      for (JobIndex& h : head) h = (it++)->j;
    }
    // Jobs new to the queue beyond the head the loop below looks at wait behind it.
    for (JobIndex j : std::exchange(fresh_, {}))
      if (s.state(j) == JobState::Pending && queued_[j] && key_[head.back()] < key_[j]) reason_priority(s, j);
    std::vector<char> failed(parts_.size(), 0);
    if (idle) {
      for (JobIndex j : head) {
        const auto pi = static_cast<std::size_t>(part_[j]);
        if (held_by_limit(s, j)) continue;
        if (failed[pi] != 0) {
          reason_priority(s, j);
        } else {
          reason_resources(s, j, false);
          failed[pi] = 1;
        }
      }
      return;
    }
    std::size_t failed_count = 0;
    for (JobIndex j : head) {
      const auto pi = static_cast<std::size_t>(part_[j]);
      if (held_by_limit(s, j)) continue;
      if (failed[pi] != 0) {
        reason_priority(s, j);
        continue;
      }
      bool waiting = false;
      if (auto nit = nominee_.find(j); nit != nominee_.end()) {
        for (JobIndex v : nit->second) waiting = waiting || s.state(v) == JobState::Running;
        if (!waiting) nominee_.erase(nit);
      }
      if (!waiting) {
        const Job& job = s.workload().jobs[j];
        if (free_now_ + held_free_ >= job.gpus) {
          // The kept clear nodes (every node up and not held, with its free GPUs) serve as backfill's
          // do, where choose() would take exactly those.
          auto pl = job.gpus > 0 && base_ok_ && base_held_ == 0 && base_.over == 0 && quick_ok(j, false)
                        ? quick_pick(base_, shape_[j].total)
                        : choose(
                              s, j, avail_, [](NodeId) { return true; }, &avail_free_);
          if (!pl.empty() && start(s, j, pl, "main scheduler").empty()) continue;
        }
        if (c_.preempt_type != PreemptType::None && c_.preempt_mode != PreemptModeS::Off && try_preempt(s, j)) {
          // It starts once its victims are gone.
          waiting = true;
        }
      }
      reason_resources(s, j, waiting);
      failed[pi] = 1;
      ++failed_count;
      (void)failed_count;
    }
  }

  // --- Preemption ------------------------------------------------------------------------------

  bool can_preempt(const ClusterView& v, JobIndex p, JobIndex victim) const {
    const Tick at = preemptible_at(v, p, victim);
    return at >= 0 && v.now() >= at;
  }

  // When `p` may preempt `victim`: from the victim's start plus its PreemptExemptTime, or -1 when
  // the rules never allow it.
  Tick preemptible_at(const ClusterView& v, JobIndex p, JobIndex victim) const {
    const auto& jobs = v.workload().jobs;
    const Part& pp = parts_[static_cast<std::size_t>(part_[p])];
    const Part& vp = parts_[static_cast<std::size_t>(part_[victim])];
    if (c_.preempt_type == PreemptType::PartitionPrio) {
      if (pp.conf.tier <= vp.conf.tier) return -1;
    } else {
      const QosR& pq = qos_of(jobs[p]);
      const QosR& vq = qos_of(jobs[victim]);
      const bool listed =
          std::find(pq.preempts.begin(), pq.preempts.end(), static_cast<int>(&vq - qos_.data())) != pq.preempts.end();
      const bool within = c_.preempt_within && &pq == &vq && prio_[p] > prio_[victim];
      if (!listed && !within) return -1;
      if (c_.preempt_priority && prio_[p] <= prio_[victim]) return -1;
    }
    const QosR& vq = qos_of(jobs[victim]);
    const Tick exempt = vq.conf.preempt_exempt != kUnlimited ? vq.conf.preempt_exempt : c_.preempt_exempt;
    return v.run_start(victim) + exempt;
  }

  bool fits_with(const ClusterView& v, JobIndex j, const std::vector<JobIndex>& victims, models::Placement* out) {
    sim_ = avail_;
    for (JobIndex x : victims) {
      for (const auto& sl : v.placement(x)) {
        auto& a = sim_[sl.node];
        a.gpus += sl.gpus;
        a.cpus += sl.cpus;
        a.mem += sl.memory_mib;
        if (shape_[x].exclusive && excl_[sl.node] == 1) a.ok = v.cluster().node(sl.node).up;
      }
    }
    auto pl = choose(v, j, sim_, [](NodeId) { return true; });
    if (pl.empty()) return false;
    if (out != nullptr) *out = std::move(pl);
    return true;
  }

  bool try_preempt(Session& s, JobIndex j) {
    const Part& p = parts_[static_cast<std::size_t>(part_[j])];
    std::vector<JobIndex> cands;
    // The earliest PreemptExemptTime expiry of a victim the rules allow but its exemption still
    // protects: the preemptor tries again then, with no other event needed.
    Tick exempt_until = sim::kNever;
    for (const auto& [t, x] : by_kill_) {
      (void)t;
      if (s.state(x) != JobState::Running || s.terminating(x)) continue;
      bool overlap = false;
      for (const auto& sl : s.placement(x)) overlap = overlap || p.member[sl.node] != 0;
      if (!overlap) continue;
      const Tick at = preemptible_at(s, j, x);
      if (at < 0) continue;
      if (s.now() >= at) {
        cands.push_back(x);
      } else {
        exempt_until = std::min(exempt_until, at);
      }
    }
    bool ok_so_far = !cands.empty();
    if (!ok_so_far) {
      if (exempt_until != sim::kNever) s.wake_at(exempt_until);
      return false;
    }
    const auto& jobs = s.workload().jobs;
    auto prio_key = [&](JobIndex x) {
      const std::int64_t level = c_.preempt_type == PreemptType::Qos
                                     ? qos_of(jobs[x]).conf.priority
                                     : parts_[static_cast<std::size_t>(part_[x])].conf.tier;
      return (level << 16) + static_cast<std::int64_t>(s.placement(x).size());
    };
    std::stable_sort(cands.begin(), cands.end(), [&](JobIndex a, JobIndex b) {
      if (c_.youngest_first) return std::pair(-s.run_start(a), a) < std::pair(-s.run_start(b), b);
      return std::pair(prio_key(a), a) < std::pair(prio_key(b), b);
    });
    std::vector<JobIndex> victims;
    models::Placement chosen;
    bool ok = false;
    for (JobIndex x : cands) {
      victims.push_back(x);
      if ((ok = fits_with(s, j, victims, &chosen))) break;
    }
    if (!ok) {
      if (exempt_until != sim::kNever) s.wake_at(exempt_until);
      return false;
    }
    // Reorder: the last one needed first, then by overlap with the chosen nodes; run again.
    std::vector<JobIndex> order{victims.back()};
    std::vector<std::pair<int, JobIndex>> rest;
    for (std::size_t i = 0; i + 1 < victims.size(); ++i) {
      int overlap = 0;
      for (const auto& sl : s.placement(victims[i]))
        for (const auto& c : chosen) overlap += sl.node == c.node ? 1 : 0;
      rest.push_back({overlap, victims[i]});
    }
    std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& r : rest) order.push_back(r.second);
    std::vector<JobIndex> minimal;
    for (JobIndex x : order) {
      minimal.push_back(x);
      if (fits_with(s, j, minimal, nullptr)) break;
    }
    const PreemptMode mode = c_.preempt_mode == PreemptModeS::Cancel    ? PreemptMode::Cancel
                             : c_.preempt_mode == PreemptModeS::Requeue ? PreemptMode::Requeue
                                                                        : PreemptMode::Checkpoint;
    for (JobIndex x : minimal) {
      const Tick grace = c_.preempt_type == PreemptType::Qos ? qos_of(jobs[x]).conf.grace
                                                             : parts_[static_cast<std::size_t>(part_[x])].conf.grace;
      const char* why = c_.preempt_mode == PreemptModeS::Cancel    ? "preempted (CANCEL)"
                        : c_.preempt_mode == PreemptModeS::Requeue ? "preempted (REQUEUE)"
                                                                   : "preempted (SUSPEND)";
      if (!s.preempt(x, mode, grace, j, why, 0).empty()) continue;
      if (c_.preempt_mode == PreemptModeS::Suspend) {
        suspended_[x] = Suspended{j, s.placement(x), false};
        for (const auto& sl : s.placement(x)) held_for_[sl.node] = j;
        base_ok_ = false;
        avail_all_ = true;
        // preempt/qos inside one partition: Slurm's gang scheduler time-slices the two
        // (doc/html/preempt.shtml, "SUSPEND"); they take turns of SchedulerTimeSlice.
        if (c_.preempt_type == PreemptType::Qos && part_[j] == part_[x]) {
          gangs_.push_back({j, x, s.now() + c_.time_slice});
          s.wake_at(s.now() + c_.time_slice);
        }
      }
    }
    nominee_[j] = minimal;
    return true;
  }

  // --- Backfill --------------------------------------------------------------------------------

  void backfill(Session& s) {
    if (queue_.empty() || free_now_ <= 0) return;
    const Tick now = s.now();
    const Tick horizon = now + c_.bf_window;
    const Tick res = c_.bf_resolution;
    first_res_.assign(avail_.size(), std::numeric_limits<Tick>::max());
    by_start_.clear();
    by_end_.clear();
    res_nodes_.clear();
    res_span_.clear();
    res_off_.assign(1, 0);
    const auto& jobs = s.workload().jobs;
    // Running jobs release at start + limit, rounded up, node by node in time order.
    // An upper bound on the GPUs free at the window's end (none when exclusive nodes could free
    // more than their jobs hold): a job asking for more cannot start or reserve in the window.
    const bool bounded = std::none_of(parts_.begin(), parts_.end(), [](const Part& p) { return p.conf.exclusive; });
    std::int64_t final_bound = bounded ? free_now_ : std::numeric_limits<std::int64_t>::max();
    rslice_.clear();
    booked_.settle();
    booked_.read([&](const Booked& b) {
      const Tick r = std::max(b.r, now + 1);  // still running now
      if (r > horizon) return false;
      if (bounded) final_bound += b.job_gpus;
      rslice_.push_back({r, b.node, b.gpus, b.cpus, b.mem, b.exclusive, false});
      return true;
    });
    // Held jobs do not count towards bf_max_job_test.
    order_.resize(static_cast<std::size_t>(
        std::clamp<std::int64_t>(c_.bf_max_job_test, 0, static_cast<std::int64_t>(queue_.size()))));
    {
      std::size_t n = 0;
      for (auto it = queue_.begin(); it != queue_.end() && n < order_.size(); ++it)
        if (!limits_.active() || limits_.blocks(jobs[it->j]) == LimitReason::None) order_[n++] = it->j;
      order_.resize(n);
    }
    const std::vector<JobIndex>& order = order_;
    std::int64_t starts = 0;
    // The smallest GPU demand from each tested job on: once fewer GPUs are free now, nothing else
    // can start in this pass, and reservations only matter for what starts now.
    std::vector<std::int32_t> least(order.size() + 1, std::numeric_limits<std::int32_t>::max());
    for (std::size_t i = order.size(); i-- > 0;) least[i] = std::min(least[i + 1], jobs[order[i]].gpus);
    // The shortest limit from each tested job on, and the nodes with free GPUs now: once the GPUs
    // free now on nodes no reservation blocks over [now, now + shortest limit) are fewer than the
    // least demand, no later job can start now and the pass is over (its reservations would be
    // thrown away).
    std::vector<Tick> shortest(order.size() + 1, std::numeric_limits<Tick>::max());
    for (std::size_t i = order.size(); i-- > 0;)
      shortest[i] = std::min(shortest[i + 1], limit_[order[i]] == kUnlimited ? kYear : limit_[order[i]]);
    freenodes_.clear();
    free_mark_.resize(avail_.size(), 0);
    ++pass_no_;
    clear_at_.clear();
    for (std::size_t w = 0; w < avail_bits_.size(); ++w)
      for (std::uint64_t x = avail_bits_[w]; x != 0; x &= x - 1) {
        const auto id = static_cast<NodeId>(w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
        if (held_for_[id] == kNoJob) {
          freenodes_.push_back(id);
          free_mark_[id] = pass_no_;
        }
      }
    if (!base_ok_) base_build(s);
    const bool held_any = base_held_ > 0;
    const std::int32_t max_gpus = base_.max;
    bool hist_ok = !held_any && base_.over == 0;

    // The profile is kept at a cursor time cur_t for the whole pass, and each walk moves it
    // (mostly forward: a job dominated by an earlier one starts where that one stopped).
    // prof_ = avail_ plus the releases rslice_[0, cur_ri) (those at or before cur_t); its overlap
    // counts the reservations of the pass that start by cur_x (see go below) but not
    // those ended by cur_t (by_end_[0, cur_be)): a reservation [b, e) blocks t for a limit L when
    // b - L < t < e, so a walk at t counts those with b <= t + L - 1 = cur_x.
    // cur_total: GPUs free at cur_t; cur_blocked: those on nodes a counted reservation blocks;
    // clear_: the clear nodes (up, not held, overlap 0) by free GPUs (ClearTally).
    // All four are functions of the state, so the order of the updates does not matter.
    Tick cur_t = now;
    std::size_t cur_ri = 0, cur_be = 0;
    std::int64_t cur_total = free_now_, cur_blocked = 0;
    auto counted = [&](NodeId id) { return prof_[id].ok && held_for_[id] == kNoJob ? prof_[id].gpus : 0; };
    auto clear_gpus = [&](NodeId id) -> std::int32_t {
      const Avail& a = prof_[id];
      return a.ok && held_for_[id] == kNoJob && a.overlap == 0 ? std::max(a.gpus, 0) : -1;
    };
    auto count = [&](NodeId id, std::int32_t g, int sign) {
      clear_.put(id, g, sign);
      if (clear_.over > 0) hist_ok = false;
    };
    auto block = [&](NodeId id) {
      if (prof_[id].overlap == 0) {
        cur_blocked += counted(id);
        count(id, clear_gpus(id), -1);
      }
      ++prof_[id].overlap;
    };
    auto unblock = [&](NodeId id) {
      if (--prof_[id].overlap == 0) {
        cur_blocked -= counted(id);
        count(id, clear_gpus(id), 1);
      }
    };
    // A reservation's nodes (res_nodes_[res_off_[r], res_off_[r + 1])), blocked or unblocked.
    auto block_res = [&](std::uint32_t r) {
      for (std::uint32_t k = res_off_[r]; k < res_off_[r + 1]; ++k) block(res_nodes_[k]);
    };
    auto unblock_res = [&](std::uint32_t r) {
      for (std::uint32_t k = res_off_[r]; k < res_off_[r + 1]; ++k) unblock(res_nodes_[k]);
    };
    // On plain nodes with none held, a slice that is not exclusive changes only the node's GPUs:
    // its CPUs and memory are 0, its ok stays, and nothing is held (see plain_releases below).
    const bool plain_release = plain_nodes_ && !held_any;
    // A release slice applied (sign 1) or taken back (sign -1, in reverse order of application).
    auto release = [&](RSlice& sl, int sign) {
      auto& a = prof_[sl.node];
      prof_free_ok_ = false;
      const bool was_ok = a.ok;
      const std::int32_t was = a.gpus;
      if (sign > 0) sl.was_ok = was_ok;
      a.gpus += sign * sl.gpus;
      a.cpus += sign * sl.cpus;
      a.mem += sign * sl.mem;
      if (sl.exclusive) a.ok = sign > 0 ? s.cluster().node(sl.node).up : sl.was_ok;
      if (held_for_[sl.node] != kNoJob) return;  // neither counted nor clear
      const std::int64_t delta = static_cast<std::int64_t>(a.ok ? a.gpus : 0) - (was_ok ? was : 0);
      cur_total += delta;
      if (a.overlap > 0) {
        cur_blocked += delta;
      } else {
        if (was_ok) count(sl.node, std::max(was, 0), -1);
        if (a.ok) count(sl.node, std::max(a.gpus, 0), 1);
      }
    };
    // The releases up to t applied and those after it taken back, as release() does them, with the
    // plain slices' steps written out and the totals summed apart.
    auto plain_releases = [&](Tick t) {
      std::int64_t total = 0, blocked = 0;
      auto plain = [&](const RSlice& sl, std::int32_t d) __attribute__((always_inline)) {
        Avail& a = prof_[sl.node];
        const std::int32_t was = a.gpus;
        a.gpus = was + d;
        if (!a.ok) return;
        total += d;
        if (a.overlap > 0) {
          blocked += d;
        } else {
          clear_.move(sl.node, std::max(was, 0), std::max(a.gpus, 0));
          if (clear_.over > 0) hist_ok = false;
        }
      };
      const std::size_t ri = cur_ri;
      for (; cur_ri < rslice_.size() && rslice_[cur_ri].t <= t; ++cur_ri) {
        RSlice& sl = rslice_[cur_ri];
        if (sl.exclusive)
          release(sl, 1);
        else
          plain(sl, sl.gpus);
      }
      for (; cur_ri > 0 && rslice_[cur_ri - 1].t > t; --cur_ri) {
        RSlice& sl = rslice_[cur_ri - 1];
        if (sl.exclusive)
          release(sl, -1);
        else
          plain(sl, -sl.gpus);
      }
      if (cur_ri != ri) prof_free_ok_ = false;
      cur_total += total;
      cur_blocked += blocked;
    };
    // The reservations counted are those that start by cur_x (by_start_[0, cur_bs)) and end after
    // cur_t (not in by_end_[0, cur_be)); a walk at t for a limit L sets cur_x to t + L - 1, so
    // consecutive walks of one limit move it little.
    Tick cur_x = now;
    std::size_t cur_bs = 0;
    auto counted_at = [&](std::uint32_t r, Tick t, Tick x) {
      return res_span_[r].first <= x && res_span_[r].second > t;
    };
    // Moves the cursor to (t, x): the releases up to t applied, and only the reservations whose
    // counting changes blocked or unblocked (one that starts and ends within the move is neither).
    auto go = [&](Tick t, Tick x) {
      if (plain_release) {
        plain_releases(t);
      } else {
        while (cur_ri < rslice_.size() && rslice_[cur_ri].t <= t) release(rslice_[cur_ri++], 1);
        while (cur_ri > 0 && rslice_[cur_ri - 1].t > t) release(rslice_[--cur_ri], -1);
      }
      const Tick t0 = cur_t, x0 = cur_x;
      auto flip = [&](std::uint32_t r) {
        const bool was = counted_at(r, t0, x0), is = counted_at(r, t, x);
        if (was && !is) unblock_res(r);
        if (!was && is) block_res(r);
      };
      while (cur_bs < by_start_.size() && by_start_[cur_bs].first <= x) flip(by_start_[cur_bs++].second);
      while (cur_bs > 0 && by_start_[cur_bs - 1].first > x) flip(by_start_[--cur_bs].second);
      // Those whose start lies between x0 and x were flipped above.
      const Tick lo = std::min(x0, x), hi = std::max(x0, x);
      auto flip_end = [&](std::uint32_t r) {
        if (res_span_[r].first <= lo || res_span_[r].first > hi) flip(r);
      };
      while (cur_be < by_end_.size() && by_end_[cur_be].first <= t) flip_end(by_end_[cur_be++].second);
      while (cur_be > 0 && by_end_[cur_be - 1].first > t) flip_end(by_end_[--cur_be].second);
      cur_t = t;
      cur_x = x;
    };
    // The state at now with nothing counted (cursor and threshold at now: every reservation starts
    // after now) is avail_ itself and the totals kept with it.
    auto restore_now = [&] {
      copy_avail();
      clear_ = base_;  // same sizes: no allocation
      cur_blocked = 0;
      cur_total = free_now_;
      cur_t = cur_x = now;
      cur_ri = cur_be = cur_bs = 0;
    };
    // Going back: undo the steps from the cursor back to t, or start again from now when that is
    // fewer steps (a reservation's entry counts as its nodes on average; a restore as kRestore).
    constexpr std::size_t kRestore = 256;
    auto per_res = [&]() -> std::size_t {  // nodes per reservation, rounded up (at least 1)
      return res_off_.size() > 1 ? res_nodes_.size() / (res_off_.size() - 1) + 1 : 1;
    };
    auto cheaper_from_now = [&](Tick t, Tick x) {
      const auto ri = static_cast<std::size_t>(
          std::upper_bound(rslice_.begin(), rslice_.end(), t, [](Tick v, const RSlice& q) { return v < q.t; }) -
          rslice_.begin());
      if (ri + kRestore >= cur_ri - ri) return false;
      auto by_time = [](Tick v, const std::pair<Tick, std::uint32_t>& q) { return v < q.first; };
      const auto be =
          static_cast<std::size_t>(std::upper_bound(by_end_.begin(), by_end_.end(), t, by_time) - by_end_.begin());
      const auto bs = static_cast<std::size_t>(std::upper_bound(by_start_.begin(), by_start_.end(), x, by_time) -
                                               by_start_.begin());
      const std::size_t per = per_res();
      const std::size_t back = (cur_ri - ri) + per * ((cur_be - be) + (cur_bs > bs ? cur_bs - bs : bs - cur_bs));
      const std::size_t fresh = ri + kRestore + per * (be + bs);
      return fresh < back;
    };
    auto go_to = [&](Tick t, Tick x) {
      if (t < cur_t && cheaper_from_now(t, x)) restore_now();
      go(t, x);
    };
    // One node's part of cur_blocked and clear_, added (1) or taken out (-1).
    auto tally = [&](NodeId id, int sign) {
      if (prof_[id].overlap > 0) cur_blocked += sign * counted(id);
      count(id, clear_gpus(id), sign);
    };
    restore_now();  // the pass starts at now, with no reservation
    // A reservation's nodes from the clear nodes' bits where choose() would take exactly those.
    auto quick = [&](JobIndex j) { return hist_ok && quick_ok(j, held_any); };

    // Whether the GPUs free now on nodes that no reservation of this pass blocks for a limit L
    // (first_res_ at or after now + L) are at least `want`: the GPUs of the nodes no reservation
    // blocks, plus those of clear_at_'s first nodes, summed again after a start or a reservation on
    // a free node.
    bool clear_stale = true;
    std::int64_t clear_free = 0, clear_later = 0;  // GPUs on nodes no reservation blocks; on the others
    auto clear_holds = [&](Tick limit, std::int64_t want) -> bool {
      if (clear_stale) {
        clear_free = 0;
        for (NodeId id : freenodes_)
          if (first_res_[id] == std::numeric_limits<Tick>::max() && avail_[id].ok && avail_[id].gpus > 0)
            clear_free += avail_[id].gpus;
        clear_first_.clear();
        clear_sum_.clear();
        std::int64_t acc = 0;
        for (const auto& [first, id] : clear_at_)
          if (avail_[id].ok && avail_[id].gpus > 0) {
            acc += avail_[id].gpus;
            clear_first_.push_back(first);
            clear_sum_.push_back(acc);
          }
        clear_later = acc;
        clear_stale = false;
      }
      if (clear_free >= want) return true;
      if (clear_free + clear_later < want) return false;
      const Tick bar = now + limit;
      const auto k = static_cast<std::size_t>(
          std::partition_point(clear_first_.begin(), clear_first_.end(), [&](Tick f) { return f >= bar; }) -
          clear_first_.begin());
      return clear_free + (k == 0 ? 0 : clear_sum_[k - 1]) >= want;
    };
    // Whether order[i] could still start now: reservations and starts only take GPUs away from
    // now, so once a job cannot, it cannot for the rest of the pass. Reservations are only kept
    // for this pass and matter only for what starts now: when no job left could start now, the
    // pass is over. (A node held for a job would count for it alone: then the coarser test below.)
    std::size_t probe = 0;
    auto could_start_now = [&](std::size_t i) {
      const JobIndex m = order[i];
      if (nominee_.count(m) != 0 || jobs[m].gpus > final_bound) return false;  // skipped below
      if (jobs[m].gpus <= 0) return true;
      return clear_holds(limit_[m] == kUnlimited ? kYear : limit_[m], jobs[m].gpus);
    };
    // What each walk of this pass found: no start before `from` (kNever: none in the window) for
    // its job's ask. Reservations and starts only take from what is free at any time, so a job
    // that asks at least as much on the same nodes (no_more(record, its ask)) finds none before
    // `from` either.
    recs_.clear();
    auto no_more = [](const WalkRec& a, const WalkRec& b) {  // a asks no more than b
      if (a.part != b.part || a.gpu_type != b.gpu_type || a.fixed != b.fixed || a.limit > b.limit) return false;
      if (a.fixed) return a.nodes <= b.nodes && a.need <= b.need && a.cpn <= b.cpn && a.mpn <= b.mpn;
      return a.gpus <= b.gpus && a.cpg <= b.cpg && a.mpg <= b.mpg;
    };
    constexpr Tick kNever = std::numeric_limits<Tick>::max();
    // A walk's next time after t: the next release or reservation end (kNever: none).
    auto step_after = [&](Tick t) {
      const auto ri =
          std::upper_bound(rslice_.begin(), rslice_.end(), t, [](Tick v, const RSlice& x) { return v < x.t; });
      const auto ei = std::upper_bound(by_end_.begin(), by_end_.end(), t,
                                       [](Tick v, const std::pair<Tick, std::uint32_t>& x) { return v < x.first; });
      return std::min(ri != rslice_.end() ? ri->t : kNever, ei != by_end_.end() ? ei->first : kNever);
    };

    for (std::size_t oi = 0; oi < order.size(); ++oi) {
      const JobIndex j = order[oi];
      if (free_now_ <= 0 || free_now_ < least[oi]) break;
      if (!held_any) {
        probe = std::max(probe, oi);
        while (probe < order.size() && !could_start_now(probe)) ++probe;
        if (probe == order.size()) break;
      } else if (!by_start_.empty()) {
        std::int64_t clear = 0;
        for (NodeId id : freenodes_)
          if (first_res_[id] >= now + shortest[oi]) clear += std::max(avail_[id].gpus, 0);
        if (clear < least[oi]) break;
      }
      if (c_.bf_max_job_start > 0 && starts >= c_.bf_max_job_start) break;
      if (nominee_.count(j) != 0) continue;
      if (limits_.blocks(jobs[j]) != LimitReason::None) continue;  // no start, no reservation
      if (jobs[j].gpus > final_bound) continue;
      const Tick limit = limit_[j] == kUnlimited ? kYear : limit_[j];
      const Shape& sh = shape_[j];
      WalkRec ask{part_[j], jobs[j].gpu_type, sh.fixed, limit,  jobs[j].gpus, sh.slices.size(),
                  sh.need,  sh.cpn,           sh.mpn,   sh.cpg, sh.mpg,       now};
      Tick from = now;
      if (!held_any)
        for (const WalkRec& r : recs_)
          if (r.from > from && no_more(r, ask)) from = r.from;
      if (from == kNever) continue;
      // Only what can raise some later job's `from` is kept: a record asking no more than another
      // and stopping no earlier makes that one useless (a job dominating it dominates this one).
      auto remember = [&](Tick t) {
        if (held_any) return;
        ask.from = t;
        for (const WalkRec& r : recs_)
          if (r.from >= ask.from && no_more(r, ask)) return;
        std::erase_if(recs_, [&](const WalkRec& r) { return ask.from >= r.from && no_more(ask, r); });
        recs_.push_back(ask);
      };
      // t = now: start the job if it fits clear of every reservation that overlaps [now, now + limit).
      if (from == now && (held_any || jobs[j].gpus <= 0 || clear_holds(limit, jobs[j].gpus))) {
        auto pl = choose(
            s, j, avail_, [&](NodeId id) { return first_res_[id] >= now + limit; }, &avail_free_);
        if (!pl.empty()) {
          // The cursor goes back to now first (nothing counted): the start changes avail_ and the
          // releases.
          if (cur_ri + per_res() * (cur_be + cur_bs) > kRestore)
            restore_now();
          else
            go(now, now);
          // Only the placement's nodes change: their part of the totals is taken out and put back.
          touched_.clear();
          for (const auto& sl : pl) touched_.push_back(sl.node);
          std::sort(touched_.begin(), touched_.end());
          touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
          for (NodeId id : touched_) tally(id, -1);
          const bool started = start(s, j, pl, "backfill").empty();
          for (NodeId id : touched_) {
            const std::int32_t overlap = prof_[id].overlap;  // the reservations counted stay
            prof_[id] = avail_[id];
            prof_[id].overlap = overlap;
            note_free(id);
            tally(id, 1);
          }
          cur_total = free_now_;
          clear_stale = true;
          if (started) {
            ++starts;
            ++bf_starts_;
            const std::pair<Tick, JobIndex> r{std::max(ceil_to(now + limit, res), now + 1), j};
            if (r.first <= horizon) {
              auto at = std::upper_bound(rslice_.begin(), rslice_.end(), r.first,
                                         [](Tick v, const RSlice& x) { return v < x.t; });
              std::vector<RSlice> add;
              for (const auto& sl : pl)
                add.push_back({r.first, sl.node, sl.gpus, sl.cpus, sl.memory_mib, shape_[j].exclusive, false});
              rslice_.insert(at, add.begin(), add.end());
            } else {
              final_bound -= jobs[j].gpus;
            }
          }
          continue;
        }
      }
      // Earliest start inside the window after now: step through the releases and reservation
      // ends in time order from `from` (a time some walk stopped at, or the first step after now).
      // The exact node choice runs only when the totals say enough could be clear.
      const Tick t = from == now ? step_after(now) : from;
      if (t > horizon) {
        remember(kNever);
        continue;
      }
      go_to(t, t + limit - 1);
      models::Placement& reserved = reserved_;
      reserved.clear();
      while (true) {
        bool fits = cur_total - cur_blocked >= jobs[j].gpus;
        if (fits && hist_ok) {
          if (!sh.fixed && clear_.gpus < sh.total) fits = false;
          if (sh.fixed && sh.need >= 1) {
            std::int64_t nodes = 0;
            for (std::int32_t g = sh.need; g <= max_gpus; ++g) nodes += clear_.count[static_cast<std::size_t>(g)];
            if (nodes < static_cast<std::int64_t>(sh.slices.size())) fits = false;
          }
        }
        if (fits) {
          if (quick(j)) {
            quick_pick(clear_, shape_[j].total, reserved);
          } else {
            if (!prof_free_ok_) {
              for (NodeId id = 0; id < prof_.size(); ++id) note_free(id);
              prof_free_ok_ = true;
            }
            reserved = choose(
                s, j, prof_, [&](NodeId id) { return prof_[id].overlap == 0; }, &prof_free_);
          }
          if (!reserved.empty()) break;
        }
        // The cursor's next release and reservation end are the first past cur_t.
        const Tick next = std::min(cur_ri < rslice_.size() ? rslice_[cur_ri].t : kNever,
                                   cur_be < by_end_.size() ? by_end_[cur_be].first : kNever);
        if (next > horizon) break;
        go_to(next, next + limit - 1);
      }
      if (reserved.empty()) {
        remember(kNever);
        continue;
      }
      const Tick at = cur_t;
      remember(at);
      // One entry per list, after the entries of the same time (only the times are ordered).
      const auto rid = static_cast<std::uint32_t>(res_off_.size() - 1);
      res_span_.push_back({at, at + limit});
      const std::size_t base = res_nodes_.size();
      res_nodes_.resize(base + reserved.size());
      for (std::size_t k = 0; k < reserved.size(); ++k) res_nodes_[base + k] = reserved[k].node;
      res_off_.push_back(static_cast<std::uint32_t>(res_nodes_.size()));
      auto by_time = [](Tick v, const std::pair<Tick, std::uint32_t>& x) { return v < x.first; };
      by_start_.insert(std::upper_bound(by_start_.begin(), by_start_.end(), at, by_time),
                       {at, rid});  // at <= cur_x: counted
      ++cur_bs;
      by_end_.insert(std::upper_bound(by_end_.begin(), by_end_.end(), at + limit, by_time),
                     {at + limit, rid});  // after by_end_[0, cur_be)
      block_res(rid);
      for (const auto& sl : reserved) {
        // clear_holds() reads the nodes with GPUs free now: only a reservation on one of them,
        // earlier than what it had, changes what it says. clear_at_ keeps them by first_res_.
        const NodeId id = sl.node;
        if (at < first_res_[id] && free_mark_[id] == pass_no_) {
          if (first_res_[id] != std::numeric_limits<Tick>::max())
            clear_at_.erase(
                std::find_if(clear_at_.begin(), clear_at_.end(), [&](const auto& e) { return e.second == id; }));
          clear_at_.insert(
              std::partition_point(clear_at_.begin(), clear_at_.end(), [&](const auto& e) { return e.first >= at; }),
              {at, id});
          if (avail_[id].ok && avail_[id].gpus > 0) clear_stale = true;
        }
        first_res_[id] = std::min(first_res_[id], at);
      }
    }
  }

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
  bool plain_nodes_ = false;  // one weight, no CPUs or memory modelled: backfill's quick_pick may serve
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
  std::uint64_t queue_version_ = 0;                 // changes with every enqueue, dequeue and end (limits)
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
  Tick last_bf_ = std::numeric_limits<Tick>::min() / 2;
  std::int64_t bf_starts_ = 0;

  // Scratch.
  std::vector<Avail> avail_, sim_, prof_;
  std::vector<std::uint8_t> prof_free_;  // per node: prof_ has it up with a GPU free (choose)
  bool prof_free_ok_ = false;            // prof_free_ follows prof_ (a release leaves it to be redone)
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
  models::Placement reserved_;   // backfill: a walk's reservation
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
    bool was_ok;  // the node's ok before this release was applied (backfill's cursor takes it back)
  };
  std::vector<RSlice> rslice_;
  ReleaseBook booked_;  // every running job's release, slice by slice (backfill reads it)
  void book_release(const ClusterView& view, JobIndex j) {
    const Tick r = ceil_to(kill_at_[j], c_.bf_resolution);
    std::int32_t job_gpus = view.workload().jobs[j].gpus;
    for (const auto& sl : view.placement(j))
      booked_.add(
          {r, sl.node, sl.gpus, sl.cpus, sl.memory_mib, j, std::exchange(job_gpus, 0), shape_[j].exclusive, false});
  }
  void unbook_release(JobIndex j) { booked_.remove(j, ceil_to(kill_at_[j], c_.bf_resolution)); }
  // This pass's reservations: by_start_ and by_end_ hold (time, reservation) in time order, and
  // reservation r holds the nodes res_nodes_[res_off_[r], res_off_[r + 1]).
  std::vector<std::pair<Tick, std::uint32_t>> by_start_, by_end_;
  std::vector<NodeId> res_nodes_;
  std::vector<std::uint32_t> res_off_;
  std::vector<std::pair<Tick, Tick>> res_span_;  // per reservation: [start, end)
  // Backfill: what one walk asked and found (no start before `from`).
  struct WalkRec {
    int part;
    std::uint32_t gpu_type;
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
  // never_fits: per partition, GPU type and shape, the GPUs (or nodes) its empty nodes hold.
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
  std::vector<JobIndex> order_;  // backfill: the jobs it tests, in queue order
  std::vector<JobIndex> head_;   // main scheduler: the jobs it looks at, in queue order
  void base_note(NodeId id) {
    const Avail& a = avail_[id];
    const std::int32_t g = a.ok && held_for_[id] == kNoJob ? std::max(a.gpus, 0) : -1;
    if (g == base_g_[id]) return;
    base_.put(id, base_g_[id], -1);
    base_.put(id, g, 1);
    base_g_[id] = g;
  }
  void base_build(const ClusterView& view) {
    std::int32_t max_gpus = 0;
    for (const auto& n : view.cluster().nodes()) max_gpus = std::max(max_gpus, n.gpus);
    base_.reset(max_gpus, avail_.size());
    base_g_.assign(avail_.size(), -1);
    base_held_ = static_cast<std::size_t>(
        std::count_if(held_for_.begin(), held_for_.end(), [](JobIndex x) { return x != kNoJob; }));
    base_ok_ = true;
    for (NodeId id = 0; id < avail_.size(); ++id) base_note(id);
  }

  friend std::unique_ptr<Policy> make_policy(Config config);
};

}  // namespace

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<SlurmPolicy>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params) { return make_policy(parse_config(params)); }

}  // namespace headroom::policies::slurm
