#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace headroom::models {

using NodeId = std::uint32_t;

// A set of node ids within one range [first, first + capacity), iterated in increasing id order:
// a bitset with one summary bit per 64-id word, so insert and erase are O(1) and finding the
// next member skips empty words 64 at a time. ClusterState keeps one per pool and free-GPU count.
class NodeIdSet {
 public:
  NodeIdSet() = default;
  NodeIdSet(NodeId first, std::size_t capacity)
      : first_(first), words_((capacity + 63) / 64, 0), summary_((words_.size() + 63) / 64, 0) {}

  // Precondition for both: first <= id < first + capacity. Return whether the set changed.
  bool insert(NodeId id) {
    const std::size_t i = id - first_;
    std::uint64_t& w = words_[i >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (i & 63);
    if ((w & bit) != 0) return false;
    w |= bit;
    summary_[i >> 12] |= std::uint64_t{1} << ((i >> 6) & 63);
    ++size_;
    return true;
  }
  bool erase(NodeId id) {
    const std::size_t i = id - first_;
    std::uint64_t& w = words_[i >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (i & 63);
    if ((w & bit) == 0) return false;
    w &= ~bit;
    if (w == 0) summary_[i >> 12] &= ~(std::uint64_t{1} << ((i >> 6) & 63));
    --size_;
    return true;
  }
  bool contains(NodeId id) const {
    const std::size_t i = id - first_;
    return id >= first_ && (i >> 6) < words_.size() && ((words_[i >> 6] >> (i & 63)) & 1u) != 0;
  }
  std::size_t count(NodeId id) const { return contains(id) ? 1 : 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Members first() + 64 w .. + 63 as bits (0 past the end), for scans that combine sets.
  NodeId first() const { return first_; }
  std::uint64_t word(std::size_t w) const { return w < words_.size() ? words_[w] : 0; }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NodeId;
    using difference_type = std::ptrdiff_t;
    using pointer = const NodeId*;
    using reference = NodeId;

    const_iterator() = default;
    NodeId operator*() const { return set_->first_ + static_cast<NodeId>(word_ * 64 + std::countr_zero(bits_)); }
    const_iterator& operator++() {
      bits_ &= bits_ - 1;
      if (bits_ == 0) seek(word_ + 1);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.word_ == b.word_ && a.bits_ == b.bits_;
    }

   private:
    friend class NodeIdSet;
    const_iterator(const NodeIdSet* set, std::size_t word) : set_(set) { seek(word); }
    // Moves to the first member in word `w` or after; the end is (words_.size(), 0).
    void seek(std::size_t w) {
      word_ = set_->next_word(w);
      bits_ = word_ < set_->words_.size() ? set_->words_[word_] : 0;
    }
    const NodeIdSet* set_ = nullptr;
    std::size_t word_ = 0;
    std::uint64_t bits_ = 0;  // members of word_ not yet visited
  };

  const_iterator begin() const { return size_ == 0 ? end() : const_iterator(this, 0); }
  const_iterator end() const {
    const_iterator it;
    it.set_ = this;
    it.word_ = words_.size();
    return it;
  }

 private:
  // The first non-empty word at index w or after, or words_.size().
  std::size_t next_word(std::size_t w) const {
    std::size_t s = w >> 6;
    if (s >= summary_.size()) return words_.size();
    std::uint64_t bits = summary_[s] & (~std::uint64_t{0} << (w & 63));
    while (bits == 0) {
      if (++s == summary_.size()) return words_.size();
      bits = summary_[s];
    }
    return s * 64 + static_cast<std::size_t>(std::countr_zero(bits));
  }

  NodeId first_ = 0;
  std::vector<std::uint64_t> words_;    // bit i: node first_ + i is a member
  std::vector<std::uint64_t> summary_;  // bit k: words_[k] is not 0
  std::size_t size_ = 0;
};

}  // namespace headroom::models
