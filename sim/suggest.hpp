#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace headroom::sim {

// Case-insensitive Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo (distance at most
// max(2, |word|/3)), for "did you mean" hints.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);

}  // namespace headroom::sim
