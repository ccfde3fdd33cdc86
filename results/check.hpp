#pragma once

// What every reader of a results file relies on, checked once when the file is read: each index
// points into the table it names, each matrix has one row per sample and one column per pool or
// tenant, times and counts lie in the range the writer gives them. A file that breaks one (an
// older tool's bug, a hand-edited or crafted file) is refused with the dataset and row, instead
// of reaching the summary, the report or the desktop app with an index past its table.

#include <string>

#include "results/run_result.hpp"

namespace headroom::results {

// Throws sim::InputError(file, 0, 0, dataset, what was expected) at the first value out of range.
void check_result(const RunResult& r, const std::string& file);

}  // namespace headroom::results
