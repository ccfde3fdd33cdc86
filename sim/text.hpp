#pragma once
// Small text helpers shared by the readers of configuration files.

#include <string>
#include <string_view>
#include <vector>

namespace headroom::sim {

// The parts of `text` between each `sep`, empty ones kept: "a..b" on '.' is {"a", "", "b"}, and
// "" is {""}.
inline std::vector<std::string> split_on(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const auto next = text.find(sep, at);
    out.emplace_back(text.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) break;
    at = next + 1;
  }
  return out;
}

}  // namespace headroom::sim
