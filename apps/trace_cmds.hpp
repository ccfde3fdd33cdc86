#pragma once

// The trace subcommands of `headroom`: trace-stats and import-cluster.

#include <string>

namespace headroom::app {

// Prints the figures of a trace (every job kept, CPU-only ones included). `format` is a
// traces::Format name; throws sim::InputError on bad input. Returns the exit code.
int cmd_trace_stats(const std::string& path, const std::string& format);

// Prints (or writes to `output`, atomically) a scenario `cluster:` block built from a node list.
int cmd_import_cluster(const std::string& path, const std::string& output);

}  // namespace headroom::app
