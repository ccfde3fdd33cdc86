#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "results/fairness.hpp"
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
  std::string text;  // the file as load_sweep read it: every point is made from this text
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

// The most runs (points x seeds) one sweep holds: as many as a sweep table may hold.
inline constexpr std::int64_t kMaxSweepRuns = results::kMaxSweepRuns;

// Reads `variants:` and `seeds:` of a scenario file (the rest is validated as a scenario).
// Throws sim::InputErrors naming file:line:column, also when the runs are more than kMaxSweepRuns.
SweepSpec load_sweep(const std::string& path);
// The same of a scenario already loaded from `path` (load_scenario).
SweepSpec load_sweep(const scenarios::Scenario& base, const std::string& path);
std::vector<SweepPoint> expand(const SweepSpec& spec);
// The scenario of one point: the base file with that point's values put in, validated like
// any scenario (errors name the point's values).
scenarios::Scenario point_scenario(const SweepSpec& spec, const SweepPoint& point);

// Makes every point's scenario, in parallel, as a sweep does before its first run; throws
// sim::InputErrors with the errors of every point that does not make, in point order (as
// `headroom validate` and run_sweep report them). `each` (called from worker threads) sees each
// point's index and scenario; `stop` set (SIGINT / SIGTERM) ends it with sim::Interrupted.
void check_points(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::atomic<bool>* stop,
                  const std::function<void(std::size_t, const scenarios::Scenario&)>& each = {});

enum class RunStatus : std::uint8_t { Done, Cancelled, Failed };

struct PointResult {
  RunStatus status = RunStatus::Cancelled;
  results::Summary summary;
  results::Fairness fairness;  // without the over-time series
  std::string error;
};

struct SweepOptions {
  const std::atomic<bool>* stop = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;  // called from worker threads
  std::string keep_runs_dir;  // write each run's full results as DIR/run-<index>.h5 when set
  // Run only shard `shard_index` of `shard_count`: the points whose index % shard_count ==
  // shard_index (round robin, so every shard gets a mix of variants). 0 of 1: every point.
  std::size_t shard_index = 0, shard_count = 1;
};

struct SweepResult {
  SweepSpec spec;
  std::vector<SweepPoint> points;
  std::vector<PointResult> results;   // by point index
  std::vector<std::size_t> selected;  // the point indexes this run covered (its shard), increasing
  std::size_t shard_index = 0, shard_count = 1;
};

// Parses "I/N" (0 <= I < N); throws sim::InputError naming --shard.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text);

// Merges sweep tables written by shards of the same sweep (`headroom sweep --shard I/N`) into
// the table one unsharded run writes: rows in run order, shard attributes dropped. Throws
// sim::InputError when the shards disagree (another scenario, other columns), overlap, or a
// shard is missing (naming the missing shard indexes).
results::Table merge_tables(const std::vector<results::Table>& shards, const std::vector<std::string>& names);

// Runs every point in parallel (TBB); each run owns its simulation, results land by index, so
// the output is the same at any thread count.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options = {});

// One row per point of the shard: index, each variable's value, seed, status, KPIs, fingerprint.
results::Table sweep_table(const SweepResult& result);

}  // namespace headroom::planner
