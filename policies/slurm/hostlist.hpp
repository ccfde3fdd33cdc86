#pragma once

// A Slurm hostlist ("gpu[01-04,07],login1", "r[1-2]n[0-1]") parsed once and sized before anything
// is expanded: its names are made one at a time (name(k)), never all held, so a 69-byte line that
// names a million hosts costs a few kilobytes until they are asked for.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::policies::slurm {

class Hostlist {
 public:
  // The most names a hostlist (and all NodeName lines together) may name: the scenario's own
  // limit on nodes in a pool.
  static constexpr std::int64_t kMaxHosts = 1'000'000;

  Hostlist() = default;
  // Throws std::invalid_argument naming the problem when malformed or naming more than kMaxHosts.
  explicit Hostlist(const std::string& list);

  std::int64_t size() const { return size_; }
  // The bytes of all names together (the memory expanding it would take for the text alone).
  std::int64_t name_bytes() const { return bytes_; }
  // The k-th name (0 <= k < size()), in the order Slurm expands them: expressions left to right,
  // the last bracket of an expression varying fastest.
  std::string name(std::int64_t k) const;
  // The same into `out` (its storage kept): a loop over a million names allocates nothing.
  void name_into(std::int64_t k, std::string& out) const;

 private:
  struct Range {
    std::int64_t lo = 0, hi = 0;
    std::size_t width = 0;    // zero-padded to the width of the lower bound as written
    std::int64_t before = 0;  // values of the earlier ranges of its bracket
  };
  struct Bracket {
    std::vector<Range> ranges;
    std::int64_t size = 0;
    std::int64_t stride = 1;  // names per value: the product of the later brackets' sizes
  };
  struct Expr {
    std::vector<std::string> literals;  // one more than brackets: text before, between and after
    std::vector<Bracket> brackets;
    std::int64_t first = 0;  // names of the earlier expressions
    std::int64_t size = 1;
  };
  std::vector<Expr> exprs_;
  std::int64_t size_ = 0;
  std::int64_t bytes_ = 0;
};

// `text` in double quotes for a message of the site-file readers: bytes that are not printable ASCII
// as \xNN, text past 80 bytes cut ("..." marks the cut).
std::string shown(std::string_view text);

// FNV-1a of `text`: a fixed algorithm, so lookups behave the same on every platform.
std::uint64_t name_hash(const std::string& text);

}  // namespace headroom::policies::slurm
