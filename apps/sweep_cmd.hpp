#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace headroom::app {

// `headroom sweep SCENARIO.yaml [-o sweep.h5] [--csv sweep.csv] [--keep-runs DIR]`: runs every
// variant x seed in parallel, prints the table, and writes it. On `stop` (Ctrl-C) the finished
// runs are kept and written; exit code 130.
int cmd_sweep(const std::string& scenario, const std::string& output, const std::string& csv,
              const std::string& keep_runs, std::atomic<bool>* stop, const std::string& shard = {});

// `headroom merge`: joins the tables of `headroom sweep --shard I/N` runs into one.
int cmd_merge(const std::vector<std::string>& inputs, const std::string& output, const std::string& csv);

}  // namespace headroom::app
