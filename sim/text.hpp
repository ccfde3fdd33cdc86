#pragma once
// Small text helpers shared by the readers of configuration files.

#include <cstdint>
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

// 13607 -> "13,607" (the whole range of int64, its least value included).
inline std::string thousands(std::int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -(n + 1) + std::uint64_t{1} : static_cast<std::uint64_t>(n));
  std::string out;  // built forwards: std::string::insert here trips GCC 12's -Wrestrict
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// The offset of the first byte of `text` that is not valid UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF included), or npos when it is all valid. Every reader that keeps names
// for a result file checks them with it.
inline std::size_t utf8_error(std::string_view text) {
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

// Whether `c` continues a UTF-8 character (10xxxxxx): text cut just before it splits a character.
inline bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// A byte as messages show it: "0xe9".
inline std::string hex_byte(unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[c >> 4] + kHex[c & 15];
}

}  // namespace headroom::sim
