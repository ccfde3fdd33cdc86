#pragma once

// The bake-off scorecard (docs/planner.md, "Scorecard"): each drill's acceptance targets, written
// in the scenario's `targets:` (or given with `headroom compare --target`, the syntax of `plan`),
// checked under each system: met, missed (with the measured value), or not modelled (the run has
// no such KPI, e.g. a recovery time in a drill without outages).
#include <string>
#include <vector>

#include "planner/compare.hpp"
#include "planner/plan.hpp"
#include "scenarios/scenario.hpp"

namespace headroom::planner {

enum class Verdict { Met, Missed, NotModelled, Failed };

struct ScoreCell {
  Verdict verdict = Verdict::NotModelled;
  double value = 0;  // the measured value (Met, Missed)
  std::string note;  // why a figure cannot be trusted, e.g. "12 jobs never started"
};

struct ScoreRow {
  std::string drill;  // the scenario's name
  Target target;
  std::vector<ScoreCell> cells;  // one per policy, in the order of Scorecard::policies
};

struct Scorecard {
  std::vector<std::string> policies;
  std::vector<ScoreRow> rows;
};

// The scenario's `targets:` followed by `extra` (command-line targets), parsed. A bad target in
// the scenario is an error at its file:line:column.
std::vector<Target> scenario_targets(const scenarios::Scenario& sc, const std::vector<std::string>& extra);

// Before any run (plan's check, planner::unknown_name): throws sim::InputErrors for a target of
// a drill's `targets:` that names a tenant or service the drill does not have, and for a
// command-line target that names one no drill has (under a drill without it, its cell is n/m).
// `targets[d]` are drill d's, as scenario_targets returns them.
void check_drill_targets(const std::vector<scenarios::Scenario>& drills,
                         const std::vector<std::vector<Target>>& targets);

// One verdict: a run that failed is Failed; a KPI the run does not have is NotModelled. A wait or
// JCT target is Missed while jobs of the run never started (their waits are only lower bounds).
ScoreCell score(const PolicyRun& run, const Target& target);

// Appends one row per target of one drill.
void add_drill(Scorecard& card, const std::string& drill, const std::vector<Target>& targets,
               const CompareResult& result);

// "met", "MISSED", "n/m" (not modelled) or "failed".
const char* verdict_word(Verdict v);

}  // namespace headroom::planner
