#pragma once
// Backfill's count of reservations per node (issue #37), bit-sliced so that a reservation is
// counted a word of 64 nodes at a time.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/node_set.hpp"

namespace headroom::policies::slurm::detail {

using models::NodeId;

// How many of backfill's reservations counted at the cursor block each node, bit-sliced: plane k
// holds bit k of every node's count, 64 nodes to a word, so that a reservation's nodes are counted
// a word at a time (a wide reservation over nodes already blocked costs its words, not its nodes).
// `any` has a node's bit set when its count is above 0: the node is blocked. Planes are added as
// counts grow and kept (zeroed) from pass to pass.
struct OverlapPlanes {
  std::size_t words = 0, planes = 0;
  std::vector<std::uint64_t> bits;  // plane k's word w at k * words + w
  std::vector<std::uint64_t> any;
  // Every count 0, for `nodes` nodes.
  void reset(std::size_t nodes) {
    const std::size_t w = (nodes + 63) / 64;
    if (w != words) {
      words = w;
      planes = 0;
      bits.clear();
      any.assign(words, 0);
      return;
    }
    std::fill(bits.begin(), bits.end(), 0);
    std::fill(any.begin(), any.end(), 0);
  }
  bool blocked(NodeId id) const { return (any[id / 64] >> (id % 64) & 1) != 0; }
  // Adds 1 to the counts of the nodes in `m` (word w): returns those whose count was 0.
  std::uint64_t add(std::size_t w, std::uint64_t m) {
    const std::uint64_t was_clear = m & ~any[w];
    any[w] |= m;
    std::uint64_t carry = m;
    for (std::size_t k = 0; carry != 0; ++k) {
      if (k == planes) {
        ++planes;
        bits.resize(planes * words, 0);
      }
      std::uint64_t& p = bits[k * words + w];
      const std::uint64_t next = p & carry;
      p ^= carry;
      carry = next;
    }
    return was_clear;
  }
  // Takes 1 from the counts of the nodes in `m` (word w; each above 0): returns those whose
  // count is now 0.
  std::uint64_t take(std::size_t w, std::uint64_t m) {
    std::uint64_t borrow = m, left = 0;
    std::size_t k = 0;
    for (; borrow != 0 && k < planes; ++k) {
      std::uint64_t& p = bits[k * words + w];
      const std::uint64_t next = ~p & borrow;
      p ^= borrow;
      borrow = next;
      left |= p;
    }
    for (; k < planes; ++k) left |= bits[k * words + w];
    const std::uint64_t now_clear = any[w] & ~left;
    any[w] = left;
    return now_clear;
  }
};

}  // namespace headroom::policies::slurm::detail
