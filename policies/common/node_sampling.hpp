#pragma once

// kube-scheduler's node sampling (pkg/scheduler/schedule_one.go): a scheduling cycle filters nodes
// starting where the last cycle stopped (nextStartNodeIndex) and stops once it has found
// numFeasibleNodesToFind feasible nodes; only those are scored. The kubernetes policy and the pods
// Kueue places use it. Nodes are taken in id order (pool by pool, as the scenario lists them):
// the order of a single-zone node tree; upstream interleaves zones (policies/kubernetes/README.md,
// Differences).

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "models/cluster.hpp"
#include "policies/common/node_scoring.hpp"

namespace headroom::policies::k8s {

inline constexpr std::int64_t kMinFeasibleNodesToFind = 100;          // minFeasibleNodesToFind
inline constexpr std::int64_t kMinFeasibleNodesPercentageToFind = 5;  // minFeasibleNodesPercentageToFind

// numFeasibleNodesToFind: how many feasible nodes a cycle looks for among num_all_nodes.
// percentage is percentageOfNodesToScore, 0 (the default) for the adaptive rule
// 50 % - 1 % per 125 nodes, at least 5 %; never fewer than 100 nodes, and every node of a cluster
// under 100 nodes.
constexpr std::int64_t num_feasible_nodes_to_find(std::int64_t percentage, std::int64_t num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage == 0) {
    percentage = 50 - num_all_nodes / 125;
    if (percentage < kMinFeasibleNodesPercentageToFind) percentage = kMinFeasibleNodesPercentageToFind;
  }
  const std::int64_t n = num_all_nodes * percentage / 100;
  return n < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : n;
}

// Calls visit(p) for each pool, in id order, with some up node of at least min_free free units
// (ClusterState::pools_with_free, so a full pool costs nothing), until visit returns false;
// returns whether it did. Where nodes advertise many units (time-slicing replicas), each pool's
// own index is asked instead, from its largest free count down.
template <typename Visit>
bool visit_pools_with_free(const models::ClusterState& c, std::int32_t min_free, Visit visit) {
  const std::int32_t top = c.max_node_units();
  min_free = std::max(min_free, 0);
  if (top - min_free >= 64) {
    for (models::PoolId p = 0; p < c.pool_count(); ++p)
      if (c.pool_has_free(p, min_free) && !visit(p)) return true;
    return false;
  }
  const std::size_t words = (c.pool_count() + 63) / 64;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t bits = 0;
    for (std::int32_t f = min_free; f <= top; ++f) bits |= c.pools_with_free(f).word(w);
    for (; bits != 0; bits &= bits - 1)
      if (!visit(static_cast<models::PoolId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))))) return true;
  }
  return false;
}

// Calls words(base, bits) for the nodes start, start + 1, ..., last, 0, ..., start - 1 of the
// pools pool_ok(p) accepts, in order, 64 ids from base at a time (bit i: node base + i; never 0),
// until words returns false; returns whether it did. With min_free >= 0 only the up nodes with at
// least min_free free units are offered (ClusterState's index: the others fail NodeResourcesFit),
// so a cycle costs the nodes (and pools) that can pass, not all nodes; with min_free < 0 every
// node is.
template <typename PoolOk, typename Words>
bool visit_words_from(const models::ClusterState& c, models::NodeId start, std::int32_t min_free, PoolOk pool_ok,
                      Words words) {
  const auto n = static_cast<models::NodeId>(c.nodes().size());
  // Pool p's part of [lo, hi); true when words stopped.
  auto pool_part = [&](models::PoolId p, models::NodeId lo, models::NodeId hi) {
    const models::NodeId pf = c.pool_first_node(p);
    const models::NodeId pe = p + 1 < c.pool_count() ? c.pool_first_node(p + 1) : n;
    const models::NodeId a = std::max(lo, pf), b = std::min(hi, pe);
    if (a >= b || !pool_ok(p)) return false;
    const std::int32_t top = c.node_units(p);
    for (std::size_t w = (a - pf) >> 6; w <= ((b - 1 - pf) >> 6); ++w) {
      std::uint64_t bits = ~std::uint64_t{0};
      if (min_free >= 0) {
        bits = 0;
        for (std::int32_t f = min_free; f <= top; ++f) bits |= c.nodes_with_free(p, f).word(w);
      }
      const models::NodeId base = pf + static_cast<models::NodeId>(w * 64);
      if (a > base) bits &= ~std::uint64_t{0} << (a - base);
      if (b - base < 64) bits &= (std::uint64_t{1} << (b - base)) - 1;
      if (bits != 0 && !words(base, bits)) return true;
    }
    return false;
  };
  auto range = [&](models::NodeId lo, models::NodeId hi) {  // [lo, hi); true when words stopped
    if (min_free >= 0)
      return visit_pools_with_free(c, min_free, [&](models::PoolId p) { return !pool_part(p, lo, hi); });
    for (models::PoolId p = 0; p < c.pool_count(); ++p)
      if (pool_part(p, lo, hi)) return true;
    return false;
  };
  return range(start, n) || range(0, start);
}

// nextStartNodeIndex and the cycle that advances it (findNodesThatFitPod).
class NodeSampler {
 public:
  // One cycle over `c`, 64 nodes at a time: from the next start index, the nodes the index offers
  // (visit_words_from, same arguments) go through filter(base, bits), which returns those that
  // pass the filter; take(base, bits) gets the passing ones, in order, up to the
  // numFeasibleNodesToFind-th. The next cycle starts after the last node processed: after that
  // one, or where this one started when fewer passed (every node processed). `offered`, when
  // known (>= 0), bounds how many nodes can pass: with none there is nothing to scan, and with
  // fewer than numFeasibleNodesToFind and first_only (take needs only the first passing node) the
  // scan stops at the first passing node; the start stays either way. Counting a word's passing
  // nodes at once is what makes a cycle cheap when the index alone (or with a few exceptions)
  // decides the filter.
  template <typename PoolOk, typename Filter, typename Take>
  void cycle_words(const models::ClusterState& c, std::int64_t percentage, std::int32_t min_free, PoolOk pool_ok,
                   Filter filter, Take take, bool first_only = false, std::int64_t offered = -1) {
    const auto n = static_cast<std::int64_t>(c.nodes().size());
    if (n == 0) return;
    if (next_start_ >= n) next_start_ = 0;
    const auto start = static_cast<models::NodeId>(next_start_);
    const std::int64_t want = num_feasible_nodes_to_find(percentage, n);
    if (offered == 0) return;
    if (first_only && offered >= 0 && offered < want) {
      visit_words_from(c, start, min_free, pool_ok, [&](models::NodeId base, std::uint64_t bits) {
        bits = filter(base, bits);
        if (bits != 0) take(base, bits);
        return bits == 0;
      });
      return;
    }
    std::int64_t found = 0;
    models::NodeId last = 0;
    visit_words_from(c, start, min_free, pool_ok, [&](models::NodeId base, std::uint64_t bits) {
      bits = filter(base, bits);
      if (bits == 0) return true;
      const auto k = static_cast<std::int64_t>(std::popcount(bits));
      if (found + k < want) {
        found += k;
        take(base, bits);
        return true;
      }
      std::uint64_t rest = bits;
      for (std::int64_t i = found + 1; i < want; ++i) rest &= rest - 1;  // the want-th is rest's lowest
      const int at = std::countr_zero(rest);
      last = base + static_cast<models::NodeId>(at);
      take(base, at == 63 ? bits : bits & ((std::uint64_t{2} << at) - 1));
      found = want;
      return false;
    });
    const std::int64_t processed = found == want ? (static_cast<std::int64_t>(last) - next_start_ + n) % n + 1 : n;
    next_start_ = (next_start_ + processed) % n;
  }

  // The same cycle offering the nodes one by one to feasible(id), which filters and, for a node
  // that passes, scores it; no node after the numFeasibleNodesToFind-th feasible one is offered.
  // Returns how many nodes were feasible.
  template <typename PoolOk, typename Feasible>
  std::int64_t cycle(const models::ClusterState& c, std::int64_t percentage, std::int32_t min_free, PoolOk pool_ok,
                     Feasible feasible) {
    const std::int64_t want = num_feasible_nodes_to_find(percentage, static_cast<std::int64_t>(c.nodes().size()));
    std::int64_t found = 0;
    cycle_words(
        c, percentage, min_free, pool_ok,
        [&](models::NodeId base, std::uint64_t bits) {
          std::uint64_t pass = 0;
          for (; bits != 0 && found < want; bits &= bits - 1) {
            const int b = std::countr_zero(bits);
            if (feasible(base + static_cast<models::NodeId>(b))) {
              pass |= std::uint64_t{1} << b;
              ++found;
            }
          }
          return pass;
        },
        [](models::NodeId, std::uint64_t) {});
    return found;
  }

  // The same cycle when every node the index offers passes the filter (no cpu or memory to check,
  // nothing else in the way). Returns the first node found, or UINT32_MAX when none.
  template <typename PoolOk>
  models::NodeId cycle_all_pass(const models::ClusterState& c, std::int64_t percentage, std::int32_t min_free,
                                PoolOk pool_ok) {
    models::NodeId first = UINT32_MAX;
    cycle_words(
        c, percentage, min_free, pool_ok, [](models::NodeId, std::uint64_t bits) { return bits; },
        [&](models::NodeId base, std::uint64_t bits) {
          if (first == UINT32_MAX) first = base + static_cast<models::NodeId>(std::countr_zero(bits));
        });
    return first;
  }

  std::int64_t next_start() const { return next_start_; }

 private:
  std::int64_t next_start_ = 0;
};

// What score_node reads of a node: its capacity and its pods' requests. Nodes with equal keys
// score alike for any pod (kueue's node classes, ScoreMemo).
using ScoreKey = std::array<std::int64_t, 8>;
inline ScoreKey score_key(const models::Node& n, const NodeUsage& u) {
  return {n.gpus, n.cpus, n.memory_mib, u.gpus, u.cpu_milli, u.memory_mib, u.nonzero_cpu_milli, u.nonzero_memory_mib};
}
// FNV-style mix of a ScoreKey's eight values.
inline std::uint64_t score_key_mix(const ScoreKey& k) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  for (std::int64_t v : k) h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ull;
  return h;
}
struct ScoreKeyHash {
  std::size_t operator()(const ScoreKey& k) const {
    const std::uint64_t h = score_key_mix(k);
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

// The weighted score of one pod on a node, which score_node computes from the node's capacity and
// its pods' requests alone: remembered for the cycle (begin) by those values, since many nodes of
// a large cluster are alike (idle, or running the same shapes). A way of computing, not of deciding.
class ScoreMemo {
 public:
  void begin() { ++stamp_; }
  template <typename Score>
  std::int64_t get(const models::Node& n, const NodeUsage& u, Score score) {
    const ScoreKey key = score_key(n, u);
    Entry& e = table_[(score_key_mix(key) >> 32) % table_.size()];
    if (e.stamp == stamp_ && e.key == key) return e.total;
    e = {stamp_, key, score()};
    return e.total;
  }

 private:
  struct Entry {
    std::uint64_t stamp = 0;
    ScoreKey key{};
    std::int64_t total = 0;
  };
  std::array<Entry, 256> table_{};
  std::uint64_t stamp_ = 0;
};

}  // namespace headroom::policies::k8s
