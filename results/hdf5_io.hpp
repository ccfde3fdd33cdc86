#pragma once

#include <string>

#include "results/run_result.hpp"

namespace headroom::results {

// Writes `result` to `path` as HDF5: the groups /jobs (one 1-D dataset per column),
// /timeseries (1-D and 2-D datasets), /events, /meta (tenant, queue, pool and reason names)
// and root attributes. Writes to a temporary file next to `path` and renames it, so `path` is
// either the previous complete file or the new complete one. Throws sim::InputError when the
// location is not writable.
void write_hdf5(const RunResult& result, const std::string& path);

// Reads a file written by write_hdf5. Throws sim::InputError naming the file and the missing or
// malformed dataset.
RunResult read_hdf5(const std::string& path);

}  // namespace headroom::results
