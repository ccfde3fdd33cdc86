#pragma once

#include <atomic>
#include <string>

namespace headroom::app {

// `headroom sweep SCENARIO.yaml --mpi [-o sweep.h5] [--csv sweep.csv] [--keep-runs DIR]` under
// mpirun or srun: rank R of N runs shard R/N of the sweep; rank 0 gathers the shard tables
// (serialised over MPI, so the ranks need no shared file system for the table), merges them with
// planner::merge_tables and writes the outputs, which equal those of one unsharded run byte for
// byte. Every rank loads the scenario and checks the outputs first; if any rank fails there, no
// rank runs, rank 0 reports the error (file:line) and every rank exits 2. `--shard` is refused
// (the ranks are the shards). Built when CMake finds MPI (HEADROOM_MPI); without it
// apps/sweep_cmd.cpp's fallback refuses --mpi. Declared with the sweep in apps/sweep_cmd.hpp.
int cmd_sweep_mpi(const std::string& scenario, const std::string& output, const std::string& csv,
                  const std::string& keep_runs, const std::string& shard, std::atomic<bool>* stop);

}  // namespace headroom::app
