#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace headroom::app {

// `headroom plan SCENARIO --vary PATH --range LO:HI --target "p95_wait <= 1h" [...] [--seeds N]`:
// the smallest value of PATH that meets every target on every seed, with the curve measured.
int cmd_plan(const std::string& scenario, const std::string& vary, const std::string& range,
             const std::vector<std::string>& targets, int seeds, std::atomic<bool>* stop);

}  // namespace headroom::app
