#pragma once

// What the calibration searches share (planner/calibrate.cpp's fifo + EASY family and a system's
// SystemModule::calibration): the ladders of limits tried.

#include <cstdint>
#include <vector>

namespace headroom::policies {

// Powers of two in [lo, hi], and hi.
std::vector<std::int64_t> limit_ladder(std::int64_t lo, std::int64_t hi);
// num/den of v rounded up, at least 1.
inline std::int64_t scaled_share(std::int64_t v, int num, int den) {
  const std::int64_t s = (v * num + den - 1) / den;
  return s < 1 ? 1 : s;
}

}  // namespace headroom::policies
