#pragma once

// The kueue policy's index of parked workloads (policies/kueue/policy.hpp, cluster_queue.cpp): workloads of a
// ClusterQueue that were found inadmissible, kept in queue order with a value each (the GPUs they request), so that an
// admission pass finds the first one at or after a position whose value is within a limit in O(log n) instead of trying
// every one of them again.
//
// A treap per ClusterQueue over one shared node pool, ordered by the key (-priority, queue time,
// workload id) and augmented with the minimum value and the size of each subtree. The heap priorities are a
// hash of the workload id, so the shape (never the answers) is the same in every run.

#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "sim/time.hpp"

namespace headroom::policies::kueue {

class ParkedIndex {
 public:
  using Key = std::tuple<std::int64_t, sim::Tick, int>;  // (-priority, queue time, workload)
  static constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::max();

  static constexpr Key min_key() {
    return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<sim::Tick>::min(),
            std::numeric_limits<int>::min()};
  }
  static constexpr Key max_key() {
    return {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<sim::Tick>::max(),
            std::numeric_limits<int>::max()};
  }
  // The smallest key after `k` (workload ids are unique, so no key lies between).
  static constexpr Key after(const Key& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k) + 1}; }

  // `trees` ClusterQueues, workload ids 0..workloads-1; empties the index.
  void reset(std::size_t trees, std::size_t workloads) {
    roots_.assign(trees, -1);
    slot_.assign(workloads, -1);
    nodes_.clear();
    free_.clear();
  }

  bool contains(int w) const { return slot_[static_cast<std::size_t>(w)] >= 0; }

  // Adds workload std::get<2>(key), which must not be in the index, to tree `tree`.
  void insert(int tree, const Key& key, std::int64_t value) {
    int n = -1;
    if (free_.empty()) {
      n = static_cast<int>(nodes_.size());
      nodes_.emplace_back();
    } else {
      n = free_.back();
      free_.pop_back();
    }
    Node& x = nodes_[static_cast<std::size_t>(n)];
    x = Node{key, value, value, mix(static_cast<std::uint64_t>(std::get<2>(key))), -1, -1, 1};
    slot_[static_cast<std::size_t>(std::get<2>(key))] = n;
    int& root = roots_[static_cast<std::size_t>(tree)];
    int l = -1, r = -1;
    split(root, key, l, r);
    root = merge(merge(l, n), r);
  }

  // Removes workload `w` from tree `tree`; nothing when it is not in the index.
  void erase(int tree, int w) {
    const int n = slot_[static_cast<std::size_t>(w)];
    if (n < 0) return;
    const Key key = nodes_[static_cast<std::size_t>(n)].key;
    int& root = roots_[static_cast<std::size_t>(tree)];
    int l = -1, mid = -1, r = -1;
    split(root, key, l, r);
    split(r, after(key), mid, r);
    root = merge(l, r);
    slot_[static_cast<std::size_t>(w)] = -1;
    free_.push_back(n);
  }

  // The workload with the smallest key >= `from` whose value is at most `limit` in tree `tree`,
  // or -1.
  int first(int tree, const Key& from, std::int64_t limit) const {
    return first_in(roots_[static_cast<std::size_t>(tree)], from, limit);
  }

  // How many entries of tree `tree` have a key < `key`.
  std::size_t rank(int tree, const Key& key) const {
    std::size_t n = 0;
    for (int t = roots_[static_cast<std::size_t>(tree)]; t >= 0;) {
      const Node& x = at(t);
      if (x.key < key) {
        n += size_of(x.left) + 1;
        t = x.right;
      } else {
        t = x.left;
      }
    }
    return n;
  }

  // The key of the entry of rank `i` (0 = the first) in tree `tree`; i < its size.
  Key nth(int tree, std::size_t i) const {
    int t = roots_[static_cast<std::size_t>(tree)];
    while (true) {
      const Node& x = at(t);
      const std::size_t left = size_of(x.left);
      if (i == left) return x.key;
      if (i < left) {
        t = x.left;
      } else {
        i -= left + 1;
        t = x.right;
      }
    }
  }

 private:
  struct Node {
    Key key;
    std::int64_t value = 0, min = 0;
    std::uint64_t heap = 0;
    int left = -1, right = -1;
    std::size_t size = 1;
  };

  static std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }

  Node& at(int n) { return nodes_[static_cast<std::size_t>(n)]; }
  const Node& at(int n) const { return nodes_[static_cast<std::size_t>(n)]; }

  std::size_t size_of(int n) const { return n < 0 ? 0 : at(n).size; }

  void pull(int n) {
    Node& x = at(n);
    x.size = 1 + size_of(x.left) + size_of(x.right);
    x.min = x.value;
    if (x.left >= 0) x.min = std::min(x.min, at(x.left).min);
    if (x.right >= 0) x.min = std::min(x.min, at(x.right).min);
  }

  // l: the keys < k, r: the keys >= k.
  void split(int t, const Key& k, int& l, int& r) {
    if (t < 0) {
      l = r = -1;
      return;
    }
    if (at(t).key < k) {
      split(at(t).right, k, at(t).right, r);
      l = t;
    } else {
      split(at(t).left, k, l, at(t).left);
      r = t;
    }
    pull(t);
  }

  int merge(int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (at(a).heap > at(b).heap) {
      at(a).right = merge(at(a).right, b);
      pull(a);
      return a;
    }
    at(b).left = merge(a, at(b).left);
    pull(b);
    return b;
  }

  int first_in(int t, const Key& from, std::int64_t limit) const {
    while (t >= 0) {
      const Node& x = at(t);
      if (x.min > limit) return -1;
      if (x.key < from) {
        t = x.right;
        continue;
      }
      // Every key of the right subtree is >= from: the left one may hold an earlier match.
      if (const int found = first_in(x.left, from, limit); found >= 0) return found;
      if (x.value <= limit) return std::get<2>(x.key);
      return first_all(x.right, limit);
    }
    return -1;
  }

  // The first entry of subtree t (all its keys qualify) whose value is at most `limit`.
  int first_all(int t, std::int64_t limit) const {
    while (t >= 0 && at(t).min <= limit) {
      const Node& x = at(t);
      if (x.left >= 0 && at(x.left).min <= limit) {
        t = x.left;
      } else if (x.value <= limit) {
        return std::get<2>(x.key);
      } else {
        t = x.right;
      }
    }
    return -1;
  }

  std::vector<int> roots_;  // per tree
  std::vector<int> slot_;   // per workload: its node, or -1
  std::vector<Node> nodes_;
  std::vector<int> free_;
};

}  // namespace headroom::policies::kueue
