#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace headroom::sim {

// Running 64-bit hash of the ordered event log (FNV-1a over 64-bit words, then a final mix).
// Two runs with the same fingerprint processed the same events in the same order with the same
// decisions.
class Fingerprint {
 public:
  void add(std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (word >> (8 * i)) & 0xffu;
      h_ *= 0x100000001b3ull;
    }
    ++count_;
  }
  void add(std::string_view s);
  std::uint64_t value() const;
  std::uint64_t count() const { return count_; }
  std::string hex() const;

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
  std::uint64_t count_ = 0;
};

std::uint64_t hash_string(std::string_view s);

}  // namespace headroom::sim
