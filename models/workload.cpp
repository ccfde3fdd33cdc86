#include "models/workload.hpp"

namespace headroom::models {

namespace {

// FNV-1a, 64 bits (a few instructions a byte for the short names of traces), then a Fibonacci
// multiply: FNV's last byte reaches only its lower bits, and probe() takes the slot from the top
// bits.
std::uint64_t hash_name(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h * 0x9e3779b97f4a7c15ull;
}

}  // namespace

std::size_t NameTable::probe(std::string_view name) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = static_cast<std::size_t>(hash_name(name) >> shift_);; i = (i + 1) & mask) {
    const std::uint32_t slot = slots_[i];
    if (slot == 0 || names_[slot - 1] == name) return i;
  }
}

void NameTable::grow() {
  constexpr int kMinShift = 64 - 4;  // 16 slots at first
  shift_ = slots_.empty() ? kMinShift : shift_ - 1;
  slots_.assign(std::size_t{1} << (64 - shift_), 0);
  for (std::uint32_t id = 0; id < names_.size(); ++id) slots_[probe(names_[id])] = id + 1;
}

std::uint32_t NameTable::intern(std::string_view name) {
  // Traces repeat a name row after row (one queue, a user's burst of jobs): the last one first.
  if (last_ < names_.size() && names_[last_] == name) return last_;
  if ((names_.size() + 1) * 2 > slots_.size()) grow();
  const std::size_t i = probe(name);
  if (slots_[i] == 0) {
    names_.emplace_back(name);
    slots_[i] = static_cast<std::uint32_t>(names_.size());
  }
  return last_ = slots_[i] - 1;
}

std::optional<std::uint32_t> NameTable::find(std::string_view name) const {
  if (slots_.empty()) return std::nullopt;
  const std::uint32_t slot = slots_[probe(name)];
  if (slot == 0) return std::nullopt;
  return slot - 1;
}

}  // namespace headroom::models
