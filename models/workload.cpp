#include "models/workload.hpp"

namespace headroom::models {

std::uint32_t NameTable::intern(std::string_view name) {
  // Traces repeat a name row after row (one queue, a user's burst of jobs): the last one first.
  if (last_ < names_.size() && names_[last_] == name) return last_;
  auto it = index_.find(name);
  if (it == index_.end()) {
    it = index_.emplace(std::string(name), static_cast<std::uint32_t>(names_.size())).first;
    names_.emplace_back(name);
  }
  return last_ = it->second;
}

std::optional<std::uint32_t> NameTable::find(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace headroom::models
