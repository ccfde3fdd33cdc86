#pragma once

// Internal to results/: a stable LSD radix sort of (time, index) records by time, for the
// metrics that walk a run's starts and ends in time order. On tens of thousands of records it
// does a few linear passes where std::sort spends most of its time on mispredicted comparisons.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace headroom::results::detail {

struct Keyed {
  std::int64_t key;
  std::uint32_t index;
};

// Sorts by key, keeping the present order among equal keys (so records made in index order end
// in (key, index) order, as std::sort of (key, index) pairs would give). Byte passes in which
// every key has the same byte are skipped.
inline void stable_sort_by_key(std::vector<Keyed>& v) {
  const std::size_t n = v.size();
  if (n < 2) return;
  auto ordered = [](std::int64_t k) { return static_cast<std::uint64_t>(k) ^ (std::uint64_t{1} << 63); };
  std::array<std::array<std::size_t, 256>, 8> count{};
  for (const Keyed& r : v) {
    const std::uint64_t k = ordered(r.key);
    for (int b = 0; b < 8; ++b) ++count[b][(k >> (8 * b)) & 0xff];
  }
  std::vector<Keyed> other(n);
  std::vector<Keyed>* from = &v;
  std::vector<Keyed>* to = &other;
  for (int b = 0; b < 8; ++b) {
    const std::uint64_t first = (ordered((*from)[0].key) >> (8 * b)) & 0xff;
    if (count[b][first] == n) continue;  // one value in this byte: the pass would not move anything
    std::array<std::size_t, 256> at{};
    std::size_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      at[d] = sum;
      sum += count[b][d];
    }
    for (const Keyed& r : *from) (*to)[at[(ordered(r.key) >> (8 * b)) & 0xff]++] = r;
    std::swap(from, to);
  }
  if (from != &v) v.swap(other);
}

}  // namespace headroom::results::detail
