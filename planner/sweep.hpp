#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "results/summary.hpp"
#include "results/table.hpp"
#include "scenarios/scenario.hpp"

namespace headroom::planner {

// One swept key: `variants: {cluster.pools.h100.nodes: [16, 24, 32]}`. Path segments name map
// keys; inside a list they pick the element whose `name` is the segment (or a 0-based index).
struct Variable {
  std::string path;
  std::vector<std::string> values;  // each value as YAML text
  int line = 0, column = 0;
};

struct SweepSpec {
  std::string file;
  std::vector<Variable> variables;
  std::vector<std::uint64_t> seeds;  // `seeds: [1, 2]` or `seeds: N` (seed .. seed+N-1)
};

// One point of the cross product, in index order: the first variable varies slowest, seeds
// fastest.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::size_t> choice;  // value index per variable
  std::uint64_t seed = 0;
};

// Reads `variants:` and `seeds:` of a scenario file (the rest is validated as a scenario).
// Throws sim::InputErrors naming file:line:column.
SweepSpec load_sweep(const std::string& path);
std::vector<SweepPoint> expand(const SweepSpec& spec);
// The scenario of one point: the base file with that point's values put in, validated like
// any scenario (errors name the point's values).
scenarios::Scenario point_scenario(const SweepSpec& spec, const SweepPoint& point);

enum class RunStatus : std::uint8_t { Done, Cancelled, Failed };

struct PointResult {
  RunStatus status = RunStatus::Cancelled;
  results::Summary summary;
  std::string error;
};

struct SweepOptions {
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;  // called from worker threads
  std::string keep_runs_dir;  // write each run's full results as DIR/run-<index>.h5 when set
};

struct SweepResult {
  SweepSpec spec;
  std::vector<SweepPoint> points;
  std::vector<PointResult> results;  // by point index
};

// Runs every point in parallel (TBB); each run owns its simulation, results land by index, so
// the output is the same at any thread count.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options = {});

// One row per point: index, each variable's value, seed, status, KPIs, fingerprint.
results::Table sweep_table(const SweepResult& result);

}  // namespace headroom::planner
