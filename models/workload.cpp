#include "models/workload.hpp"

namespace headroom::models {

std::uint32_t NameTable::intern(std::string_view name) {
  auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(name);
  index_.emplace(std::string(name), id);
  return id;
}

std::optional<std::uint32_t> NameTable::find(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace headroom::models
