#pragma once

// One table of a system's `policy:` keys serves both the registry's unknown-key check (with "did
// you mean") and the parser: each row is a key pattern and the function that reads a value of it
// into the system's configuration, so the accepted keys and the parsed keys cannot drift apart
// (as kube-scheduler's validation_pluginargs.go keeps one validator per args type).
//
// A pattern is a dotted key; one segment written <name> ("queues.<queue>.weight") matches any
// non-empty text, dots included ("queues.a.b.weight" names queue "a.b").

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policies/api.hpp"
#include "policies/common/param_text.hpp"
#include "sim/errors.hpp"
#include "sim/time.hpp"

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

// The value readers whose words every system's reader shares. Each appends its error to `errors`,
// located at the value (file:line:column) under "policy.<key>", and returns whether it read one.

inline void param_error(std::vector<sim::InputError>& errors, const std::string& key, const ParamValue& v,
                        const std::string& msg) {
  errors.emplace_back(v.file, v.line, v.column, "policy." + key, msg);
}

// `text` (the value as written, or trimmed) as an integer from lo to hi; else "expected an integer
// from LO to HI, got "<value>"".
inline bool read_integer(std::vector<sim::InputError>& errors, const std::string& key, const ParamValue& v,
                         std::string_view text, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
  const auto n = parse_int(text);
  if (!n || *n < lo || *n > hi) {
    param_error(
        errors, key, v,
        "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + quoted(v.text));
    return false;
  }
  dst = *n;
  return true;
}

// A duration (sim::parse_duration), not negative, above zero when `positive`; else "expected a
// [positive ]duration such as 30s, 500ms or 5m, got "<value>"".
inline bool read_duration(std::vector<sim::InputError>& errors, const std::string& key, const ParamValue& v,
                          bool positive, sim::Tick& dst) {
  const auto d = sim::parse_duration(v.text);
  if (!d || *d < 0 || (positive && *d == 0)) {
    param_error(errors, key, v,
                std::string("expected a ") + (positive ? "positive " : "") + "duration such as 30s, 500ms or 5m, got " +
                    quoted(v.text));
    return false;
  }
  dst = *d;
  return true;
}

// `text` (the value, or a switch inside it) as exactly true or false; else "expected true or
// false, got "<text>"".
inline bool read_boolean(std::vector<sim::InputError>& errors, const std::string& key, const ParamValue& v,
                         std::string_view text, bool& dst) {
  if (text == "true" || text == "false") {
    dst = text == "true";
    return true;
  }
  param_error(errors, key, v, "expected true or false, got " + quoted(text));
  return false;
}

}  // namespace headroom::policies
