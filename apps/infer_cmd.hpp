#pragma once

#include <string>

namespace headroom::app {

// `headroom trace-infer INPUT [--window 1d]`: what a trace says about the real system
// (traces/infer.hpp). INPUT is a scenario (its workload, window and units per GPU) or a trace.
int cmd_trace_infer(const std::string& input, const std::string& window, const std::string& format);

}  // namespace headroom::app
