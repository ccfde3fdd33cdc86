#pragma once

#include <atomic>
#include <string>

namespace headroom::app {

struct CalibrateFolds {
  int outer = 1;              // --folds
  int inner = 3;              // --inner-folds
  std::string warmup = "7d";  // --warmup
};

// `headroom calibrate SCENARIO --fit 0:7d --test 7d:14d [-o OUT.yaml] [--objective median] [--folds K]`.
int cmd_calibrate(const std::string& scenario, const std::string& fit, const std::string& test,
                  const std::string& output, const std::string& objective, const std::string& scheduler,
                  std::size_t rows, const CalibrateFolds& folds, const std::atomic<bool>* stop);

}  // namespace headroom::app
