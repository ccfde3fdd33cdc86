#pragma once

// The split tests' set-up (docs/split.md): a folder of the test's own with the trace in t.csv,
// scenarios parsed from text there and run or refused, and the checks every split run must pass
// (each job in its partition, on a node its system owned, no job on a node while it was down).

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/observer.hpp"
#include "planner/run.hpp"
#include "results/run_result.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "temp_dir.hpp"

namespace headroom::testing {

// Two 8-GPU nodes of pool p: node 0 system A's, node 1 system B's (fifo on both); tenant tb's
// jobs go to B, the rest to A. A scenario adds its name, its moves and its workload.
inline constexpr const char* kMoveCluster =
    "cluster:\n  pools:\n    - {name: p, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
    "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
    "    B: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
    "  routes: [{tenant: tb, to: B}]\n  default: A\n";

class SplitSite : public ::testing::Test {
 protected:
  // Writes the trace (CSV) to t.csv, the file the scenarios' workload names.
  void trace(const std::string& csv) const { dir.write("t.csv", csv); }
  // The scenario of `text`, run.
  planner::RunOutcome run_text(const std::string& text) const {
    return planner::run_scenario(scenarios::parse_scenario(text, dir.path("s.yaml")));
  }
  planner::RunOutcome run_text(const std::string& csv, const std::string& text) const {
    trace(csv);
    return run_text(text);
  }
  // Every error message of a scenario that must not load, joined ("" when it loads).
  std::string load_errors(const std::string& text) const {
    try {
      (void)scenarios::parse_scenario(text, dir.path("s.yaml"));
    } catch (const sim::InputErrors& e) {
      return e.what();
    } catch (const sim::InputError& e) {
      return e.what();
    }
    return "";
  }

  TempDir dir;
};

// Every placement of the run lies in the partition of its job (no moves).
// The scenario run at 1 and at 2 threads, whose fingerprints must be the same (determinism at
// any thread count); both outcomes, the 1-thread one first.
inline std::pair<planner::RunOutcome, planner::RunOutcome> run_at_one_and_two_threads(const scenarios::Scenario& sc) {
  std::pair<planner::RunOutcome, planner::RunOutcome> out;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    out.first = planner::run_scenario(sc);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    out.second = planner::run_scenario(sc);
  }
  EXPECT_EQ(out.first.result.fingerprint, out.second.result.fingerprint);
  return out;
}

inline void expect_isolated(const results::RunResult& r) {
  ASSERT_EQ(r.job_partition.size(), r.jobs.size());
  ASSERT_FALSE(r.placements.empty());
  for (const auto& pl : r.placements) {
    const auto& part = r.partitions.at(r.job_partition.at(pl.job));
    EXPECT_GE(pl.node, part.first_node) << "job " << r.jobs[pl.job].trace_id << " of " << part.name;
    EXPECT_LT(pl.node, part.first_node + part.nodes) << "job " << r.jobs[pl.job].trace_id << " of " << part.name;
  }
}

// Every placement lies on a node its job's system owned for the whole placement: the node's home
// partition, changed by the moves of /moves in order (a node changes owner at `changed`).
inline void expect_owned(const results::RunResult& r) {
  ASSERT_EQ(r.job_partition.size(), r.jobs.size());
  auto owner_at = [&](std::int32_t node, sim::Tick t) {
    std::int32_t owner = -1;
    for (std::size_t p = 0; p < r.partitions.size(); ++p)
      if (node >= r.partitions[p].first_node && node < r.partitions[p].first_node + r.partitions[p].nodes)
        owner = static_cast<std::int32_t>(p);
    for (const auto& m : r.moves)
      if (m.node == node && m.changed >= 0 && m.changed <= t) owner = m.to;
    return owner;
  };
  for (const auto& pl : r.placements) {
    const auto mine = static_cast<std::int32_t>(r.job_partition.at(pl.job));
    EXPECT_EQ(owner_at(pl.node, pl.start), mine) << "job " << r.jobs[pl.job].trace_id << " on node " << pl.node;
    for (const auto& m : r.moves)
      if (m.node == pl.node && m.changed >= 0 && pl.end >= 0) {
        EXPECT_FALSE(m.changed > pl.start && m.changed < pl.end)
            << "node " << pl.node << " changed owner under job " << r.jobs[pl.job].trace_id;
        // A node in its move delay runs nothing.
        if (m.ready >= 0) {
          EXPECT_FALSE(pl.start >= m.changed && pl.start < m.ready)
              << "job " << r.jobs[pl.job].trace_id << " started on node " << pl.node << " in its move delay";
        }
      }
  }
}

// (time, node) of every NodeDown row of the audit log before `before`.
inline std::vector<std::pair<sim::Tick, std::int32_t>> node_downs(const results::RunResult& r, sim::Tick before) {
  std::vector<std::pair<sim::Tick, std::int32_t>> out;
  for (const auto& e : r.events)
    if (e.kind == static_cast<std::uint8_t>(models::AuditKind::NodeDown) && e.time < before)
      out.emplace_back(e.time, e.detail);
  return out;
}

// The runs (start, end) of job j, from /placements (one row per node of a run).
inline std::vector<std::pair<sim::Tick, sim::Tick>> runs_of(const results::RunResult& r, std::uint32_t j) {
  std::vector<std::pair<sim::Tick, sim::Tick>> out;
  for (const auto& pl : r.placements)
    if (pl.job == j && (out.empty() || out.back().first != pl.start)) out.emplace_back(pl.start, pl.end);
  return out;
}

// No job starts on a node while it is down (between a NodeDown row of the audit log and the
// node's next NodeUp); the number of placements on nodes that were down at some time.
inline std::int64_t expect_no_start_while_down(const results::RunResult& r) {
  std::map<std::int32_t, std::vector<std::pair<sim::Tick, sim::Tick>>> down;
  for (const auto& e : r.events) {
    if (e.kind == static_cast<std::uint8_t>(models::AuditKind::NodeDown))
      down[e.detail].emplace_back(e.time, sim::kNever);
    if (e.kind == static_cast<std::uint8_t>(models::AuditKind::NodeUp) && !down[e.detail].empty())
      down[e.detail].back().second = e.time;
  }
  std::int64_t checked = 0;
  for (const auto& pl : r.placements) {
    const auto it = down.find(pl.node);
    if (it == down.end()) continue;
    ++checked;
    for (const auto& [from, to] : it->second)
      EXPECT_FALSE(pl.start >= from && pl.start < to)
          << "job " << r.jobs[pl.job].trace_id << " started on node " << pl.node << " while it was down";
  }
  return checked;
}

}  // namespace headroom::testing
