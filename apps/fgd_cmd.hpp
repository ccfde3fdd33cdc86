#pragma once

// `headroom fgd`: the placement-only GPU-sharing experiment of the FGD study (planner/fgd_experiment.hpp).

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace headroom::app {

struct FgdArgs {
  std::string nodes;
  std::string pods;
  std::string policy = "all";  // comma-separated policy names, or "all"
  int seeds = 10;
  std::uint64_t seed = 42;  // the first seed
  std::string ratios = "100,110,120,130";
  double tune = 1.3;
  int popularity = 95;
  std::string reference;  // analysis_allo_discrete.csv
  std::string workload = "openb_pod_list_default";
  double tolerance = 0.5;
  bool check = false;
  std::string csv;
};

// Adds the `fgd` subcommand to `app`, its options bound to `args`.
CLI::App* add_fgd_command(CLI::App& app, FgdArgs& args);

// Runs every policy x seed, prints the table (next to the reference when given) and the wall
// time. Exit code 0; with --check, 3 when a mean is off by more than --tolerance or the policies
// rank differently from the reference.
int cmd_fgd(const FgdArgs& args);

}  // namespace headroom::app
