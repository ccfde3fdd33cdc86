#pragma once

// One table of a system's `policy:` keys serves both the registry's unknown-key check (with "did
// you mean") and the parser: each row is a key pattern and the function that reads a value of it
// into the system's configuration, so the accepted keys and the parsed keys cannot drift apart
// (as kube-scheduler's validation_pluginargs.go keeps one validator per args type).
//
// A pattern is a dotted key; one segment written <name> ("queues.<queue>.weight") matches any
// non-empty text, dots included ("queues.a.b.weight" names queue "a.b").

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policies/api.hpp"

namespace headroom::policies {

// Whether `key` is an instance of `pattern`.
inline bool key_matches(std::string_view pattern, std::string_view key) {
  const auto open = pattern.find('<');
  const auto close = open == std::string_view::npos ? open : pattern.find('>', open);
  if (close == std::string_view::npos) return pattern == key;
  const std::string_view prefix = pattern.substr(0, open), suffix = pattern.substr(close + 1);
  return key.size() > prefix.size() + suffix.size() && key.starts_with(prefix) && key.ends_with(suffix);
}

// What `key` has in place of the pattern's <name> segment ("" when the pattern has none).
inline std::string_view key_placeholder(std::string_view pattern, std::string_view key) {
  const auto open = pattern.find('<');
  const auto close = open == std::string_view::npos ? open : pattern.find('>', open);
  if (close == std::string_view::npos) return {};
  const std::size_t suffix = pattern.size() - close - 1;
  return key.substr(open, key.size() - open - suffix);
}

// A row of a system's key table. `Reader` is the system's parse state (its Config being filled
// and the errors found); `read` parses one value of a key matching `pattern` into it.
template <typename Reader>
struct ParamKey {
  std::string_view pattern;
  void (*read)(Reader& reader, const std::string& key, const ParamValue& value);
};

// The table's patterns, in its order (the policy catalogue lists them so).
template <typename Reader>
std::vector<std::string> param_patterns(std::span<const ParamKey<Reader>> table) {
  std::vector<std::string> out;
  out.reserve(table.size());
  for (const auto& row : table) out.emplace_back(row.pattern);
  return out;
}

// Reads every parameter through the first row whose pattern it matches; keys no row matches are
// left to the registry's unknown-key check.
template <typename Reader>
void read_params(Reader& reader, const PolicyParams& params, std::span<const ParamKey<Reader>> table) {
  for (const auto& [key, value] : params)
    for (const auto& row : table)
      if (key_matches(row.pattern, key)) {
        row.read(reader, key, value);
        break;
      }
}

}  // namespace headroom::policies
