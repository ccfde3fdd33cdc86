#pragma once

#include <atomic>
#include <string>

namespace headroom::app {

// `headroom sweep SCENARIO.yaml --mpi [-o sweep.h5] [--csv sweep.csv]` under mpirun: rank R of
// N runs shard R/N of the sweep; rank 0 gathers the shard tables (serialised over MPI, so the
// ranks need no shared file system), merges them with planner::merge_tables and writes the
// outputs, which equal those of one unsharded run. Built only with -DHEADROOM_MPI=ON.
int cmd_sweep_mpi(const std::string& scenario, const std::string& output, const std::string& csv,
                  std::atomic<bool>* stop);

}  // namespace headroom::app
