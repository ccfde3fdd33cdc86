#pragma once
// A set of indices as bits with a summary level, walked in increasing order.

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace headroom::policies {

// A set of group indices as bits, walked in increasing order (what a std::set<std::uint32_t>
// gives, without a node per element): Volcano's allocate and backfill walk the live groups every
// session, and with a large stranded backlog the tree's walk was most of a run. A second level (a
// bit per word that is not empty) keeps the walk in step with the set's size rather than with the
// highest index: the full RICC log has 447,794 groups, about 7,000 words, and a few live ones in
// most sessions. The walk reads the words as it goes, so an index set or cleared behind the walk
// is not seen and one ahead of it is, as with the tree.
class IndexSet {
 public:
  static constexpr std::uint32_t kEnd = std::numeric_limits<std::uint32_t>::max();
  void insert(std::uint32_t i) {
    const std::size_t w = i / 64;
    if (w >= words_.size()) {
      words_.resize(w + 1, 0);
      summary_.resize((words_.size() + 63) / 64, 0);
    }
    words_[w] |= std::uint64_t{1} << (i % 64);
    summary_[w / 64] |= std::uint64_t{1} << (w % 64);
  }
  void erase(std::uint32_t i) {
    const std::size_t w = i / 64;
    if (w >= words_.size()) return;
    words_[w] &= ~(std::uint64_t{1} << (i % 64));
    if (words_[w] == 0) summary_[w / 64] &= ~(std::uint64_t{1} << (w % 64));
  }
  bool contains(std::uint32_t i) const {
    const std::size_t w = i / 64;
    return w < words_.size() && (words_[w] >> (i % 64) & 1) != 0;
  }
  // The first index at or after i in the set, or kEnd.
  std::uint32_t next(std::uint32_t i) const {
    std::size_t w = i / 64;
    if (w >= words_.size()) return kEnd;
    if (const std::uint64_t x = words_[w] & (~std::uint64_t{0} << (i % 64)); x != 0)
      return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
    // The next word that is not empty, from the summary.
    ++w;
    std::size_t s = w / 64;
    if (s >= summary_.size()) return kEnd;
    std::uint64_t y = summary_[s] & (~std::uint64_t{0} << (w % 64));
    while (y == 0) {
      if (++s == summary_.size()) return kEnd;
      y = summary_[s];
    }
    w = s * 64 + static_cast<std::size_t>(std::countr_zero(y));
    return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(words_[w])));
  }
  struct Iter {
    const IndexSet* set;
    std::uint32_t at;
    std::uint32_t operator*() const { return at; }
    Iter& operator++() {
      at = set->next(at + 1);
      return *this;
    }
    bool operator!=(const Iter& o) const { return at != o.at; }
  };
  Iter begin() const { return {this, next(0)}; }
  Iter end() const { return {this, kEnd}; }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> summary_;  // bit w: words_[w] != 0
};

}  // namespace headroom::policies
