#pragma once

// What the calibration searches share (planner/calibrate.cpp's fifo + EASY family and a system's
// SystemModule::calibration): the ladders of limits tried, and how a limit learned from a fit
// window keeps headroom for what a later window brings.
//
// Every candidate's label names its rule without the values of one window ("QOS MaxGPUsPerUser
// at 1/2 of the most one user held"): calibrate instantiates the same rules on each inner fold of
// the fit window and matches them by label (docs/fidelity.md, "Validation inside the fit window").

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

// A user gets a limit of its own only when the fit window saw this many of its jobs start: a
// user seen a few times says little about what it runs later (issue #33). Others get none (or
// the QOS cap of the rule).
inline constexpr std::int64_t kMinJobsForUserLimit = 20;

// The headroom above what a user reached that a per-user limit keeps: num/den of it.
struct Headroom {
  int num = 1, den = 1;
  const char* text = "";  // "1.5x"
};
inline constexpr Headroom kUserHeadroom[] = {{3, 2, "1.5x"}, {2, 1, "2x"}};

// The shares of the most one user reached that a QOS (global) cap is tried at.
struct Share {
  int num = 1, den = 1;
  const char* text = "";  // "1/2 of", "all of"
};
inline constexpr Share kCapShares[] = {{1, 2, "1/2 of"}, {1, 1, "all of"}};

}  // namespace headroom::policies
