#pragma once

#include <string>
#include <vector>

namespace headroom::app {

// `headroom report RUN_OR_SWEEP.h5 [more.h5] -o report.html` (results/report.hpp).
int cmd_report(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace headroom::app
