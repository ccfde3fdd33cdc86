#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "planner/sweep.hpp"

namespace headroom::app {

// `headroom sweep SCENARIO.yaml [-o sweep.h5] [--csv sweep.csv] [--keep-runs DIR]`: runs every
// variant x seed in parallel, prints the table, and writes it. On `stop` (Ctrl-C) the finished
// runs are kept and written; exit code 130.
int cmd_sweep(const std::string& scenario, const std::string& output, const std::string& csv,
              const std::string& keep_runs, std::atomic<bool>* stop, const std::string& shard = {});

// Before any run: refuses an -o / --csv / --keep-runs that would overwrite an input of the sweep
// (the scenario, its trace, the files a swept key names) or another output (sim::InputError).
void check_sweep_outputs(const std::string& scenario, const planner::SweepSpec& spec, const std::string& output,
                         const std::string& csv, const std::string& keep_runs);

// `headroom sweep --mpi`: apps/mpi_sweep.hpp. A build without MPI has this too, refusing --mpi
// with a message naming the packages to install and the shard + merge route (sim::InputError).
int cmd_sweep_mpi(const std::string& scenario, const std::string& output, const std::string& csv,
                  const std::string& keep_runs, const std::string& shard, std::atomic<bool>* stop);

// `headroom merge`: joins the tables of `headroom sweep --shard I/N` runs into one.
int cmd_merge(const std::vector<std::string>& inputs, const std::string& output, const std::string& csv);

}  // namespace headroom::app
