#pragma once

// A fuzz input read as a description, byte by byte (fuzz/results_input.hpp, fuzz/table_input.hpp).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace headroom::fuzz {

// The input read from the front; past its end every byte reads as 0.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : at_(data), end_(data + size) {}
  std::uint8_t byte() { return at_ < end_ ? *at_++ : 0; }
  bool flag() { return (byte() & 1) != 0; }
  std::size_t upto(std::size_t most) { return byte() % (most + 1); }  // 0 to min(most, 255)
  template <class T>
  T integral() {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t{byte()} << (8 * i);
    T out;
    std::memcpy(&out, &v, sizeof(T));  // the low bytes (little-endian)
    return out;
  }
  std::string text(std::size_t most) {
    std::string out(upto(most), '\0');
    for (char& c : out) c = static_cast<char>(byte());
    return out;
  }

 private:
  const std::uint8_t* at_;
  const std::uint8_t* end_;
};

}  // namespace headroom::fuzz
