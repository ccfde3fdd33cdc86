#pragma once

// The trace subcommands of `headroom`: trace-stats, import-cluster and synth.

#include <cstdint>
#include <string>

#include "sim/time.hpp"

namespace CLI {
class App;
}

namespace headroom::app {

// Prints the figures of a trace (every job kept, CPU-only ones included). `format` is a
// traces::Format name; throws sim::InputError on bad input. Returns the exit code.
int cmd_trace_stats(const std::string& path, const std::string& format, bool skip_bad_rows = false,
                    const std::string& fields = "", const std::string& assume_runtime = "");
// --assume-runtime: a duration ("1h", "90m", seconds) above zero; -1 when `text` is empty.
sim::Tick assume_runtime_option(const std::string& text);

// Prints (or writes to `output`, atomically) a scenario `cluster:` block built from a node list.
int cmd_import_cluster(const std::string& path, const std::string& output);

// `headroom synth`: its options as given on the command line.
struct SynthArgs {
  std::int64_t jobs = 0;
  std::string span;
  std::uint64_t seed = 1;
  int tenants = 8;
  std::string tenant_dist = "zipf";
  std::string gpu_mix;
  std::string runtime_median = "600s";
  double runtime_sigma = 2.0;
  double load = 0;
  std::int64_t cluster_gpus = 0;
  std::string output;
};

// Adds the `synth` subcommand to `app`, its options bound to `args`.
CLI::App* add_synth_command(CLI::App& app, SynthArgs& args);

// Writes a synthetic trace in headroom's native CSV (to `args.output` atomically, or stdout).
int cmd_synth(const SynthArgs& args);

}  // namespace headroom::app
