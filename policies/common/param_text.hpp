#pragma once

// The small text helpers every system's parameter and site-file readers use: numbers read whole
// (no trailing text, no overflow), values quoted back in errors, lists as the scenario loader
// writes them. One copy here; the system folders do not keep their own.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::policies {

// `s` in double quotes for an error message, cut after 60 characters ("..." marks the cut).
inline std::string quoted(std::string_view s) {
  std::string out = "\"";
  out.append(s.substr(0, 60));
  out += s.size() > 60 ? "...\"" : "\"";
  return out;
}

// The whole text as a decimal integer; nullopt when empty, not a number, trailing text or out of
// range.
inline std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) return std::nullopt;
  return v;
}

// The whole text as a finite number; nullopt when empty, not a number, trailing text, inf or nan.
inline std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Without leading and trailing spaces and tabs.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "[a, b]" (a YAML flow list) or "a,b" -> items, trimmed, empty ones dropped; commas inside
// brackets do not split ("[a[1-2], b]" -> "a[1-2]", "b").
inline std::vector<std::string> split_list(std::string_view text) {
  text = trim(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  std::vector<std::string> out;
  std::size_t depth = 0, start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']' && depth > 0) --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      const auto item = trim(text.substr(start, i - start));
      if (!item.empty()) out.emplace_back(item);
      start = i + 1;
    }
  }
  return out;
}

}  // namespace headroom::policies
