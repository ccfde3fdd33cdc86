#pragma once

#include <cstdint>
#include <string_view>

namespace headroom::sim {

// xoshiro256** with our own distributions, so streams are identical on every platform and
// standard library. Each stream is derived from (scenario seed, stable name), e.g.
// RngStream(seed, "arrivals/thinning"), so adding a stream never shifts another one.
class RngStream {
 public:
  RngStream(std::uint64_t seed, std::string_view name);
  explicit RngStream(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform integer in [0, n), unbiased. Precondition: n > 0.
  std::uint64_t below(std::uint64_t n);
  // Uniform integer in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi);
  double exponential(double rate);
  double normal(double mean, double stddev);
  double lognormal(double mu, double sigma);
  bool bernoulli(double p) { return uniform() < p; }

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace headroom::sim
