#include "sim/fingerprint.hpp"

#include <cstdio>

namespace headroom::sim {

std::uint64_t hash_string(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void Fingerprint::add(std::string_view s) { add(hash_string(s)); }

std::uint64_t Fingerprint::value() const {
  std::uint64_t z = h_ ^ (count_ * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string Fingerprint::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value()));
  return buf;
}

}  // namespace headroom::sim
