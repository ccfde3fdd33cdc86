#pragma once

// What every reader of a results file relies on, checked once when the file is read: each index
// points into the table it names, each matrix has one row per sample and one column per pool or
// tenant, times and counts lie in the range the writer gives them. A file that breaks one (an
// older tool's bug, a hand-edited or crafted file) is refused with the dataset and row, instead
// of reaching the summary, the report or the desktop app with an index past its table.

#include <string>

#include "results/run_result.hpp"
#include "results/table.hpp"

namespace headroom::results {

// Throws sim::InputError(file, 0, 0, dataset, what was expected) at the first value out of range.
void check_result(const RunResult& r, const std::string& file);

// A sweep table (`headroom sweep -o`, `headroom merge -o`) as `report` and `merge` rely on it:
// - a numeric `run` column first, each run a whole number below total_runs, none twice;
// - the attribute total_runs (when present; else the rows) a whole number from 1 to
//   kMaxSweepRuns and at least the rows; the attribute shard (when present) "I/N" with
//   0 <= I < N <= kMaxSweepRuns (a shard may hold no run: N may be more than the runs);
// - where present, `seed` whole numbers from 0 to 2^64 - 1 and `status` text;
// - column names and text values valid UTF-8.
// Throws sim::InputError(file, 0, 0, "/runs/<column>" or "attribute /@<name>", what was expected,
// with the row) at the first that is not. Returns the sweep's runs and the table's shard, as read.
struct SweepShape {
  std::size_t total_runs = 0;  // total_runs, or the rows when it is absent
  std::size_t shard_index = 0, shard_count = 1;
};
SweepShape check_sweep_table(const Table& t, const std::string& file);

}  // namespace headroom::results
