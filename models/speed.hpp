#pragma once

// Job speeds as integers: parts per million of the speed its recorded run time was measured at
// (models/throughput.hpp, docs/heterogeneity.md), so that durations and progress stay integer
// ticks and results are the same on every machine.

#include <cstdint>

#include "sim/time.hpp"

namespace headroom::models {

inline constexpr std::int64_t kSpeedOne = 1'000'000;  // 1.0

// Wall time to do `work` at `speed_ppm` x num/den (a time-sliced share), rounded up:
// ceil(work * den * 1e6 / (num * speed)). Exact in 128 bits, saturating at INT64_MAX.
sim::Tick scaled_duration(sim::Tick work, std::int64_t speed_ppm, std::int64_t num = 1, std::int64_t den = 1);
// Work done in `elapsed` at `speed_ppm` x num/den, rounded down: floor(elapsed * num * speed /
// (den * 1e6)). At kSpeedOne and num = den = 1 both return their argument unchanged.
sim::Tick scaled_work(sim::Tick elapsed, std::int64_t speed_ppm, std::int64_t num = 1, std::int64_t den = 1);
// A factor (finite, > 0) in ppm, rounded to nearest, at least 1.
std::int64_t speed_to_ppm(double factor);
// a * b / kSpeedOne rounded down, at least 1: two speeds combined.
std::int64_t combine_speeds(std::int64_t a, std::int64_t b);

}  // namespace headroom::models
