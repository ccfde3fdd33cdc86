#pragma once

// The bake-off scorecard (docs/planner.md, "Scorecard"): each drill's acceptance targets, written
// in the scenario's `targets:` (or given with `headroom compare --target`, the syntax of `plan`),
// checked under each system, with the four verdicts of a POC record: passed, failed (with the
// measured value), not covered (the run has no such KPI, e.g. a recovery time in a drill without
// outages), or integration needed (failed by the system as configured, passed by the same system
// with a real add-on, a variant such as kubernetes+coscheduling listed in the same compare).
#include <string>
#include <vector>

#include "planner/compare.hpp"
#include "planner/plan.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"

namespace headroom::planner {

// Met: passed; Missed: failed; NotModelled: not covered; Failed: the run itself failed (an error).
enum class Verdict { Met, Missed, NotModelled, Failed, IntegrationNeeded };

struct ScoreCell {
  Verdict verdict = Verdict::NotModelled;
  double value = 0;  // the measured value (Met, Missed, IntegrationNeeded)
  std::string note;  // why a figure cannot be trusted, e.g. "12 jobs never started"
  // IntegrationNeeded: the variant that passes (its column's name) and its value there.
  std::string add_on;
  double add_on_value = 0;
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
// `targets[d]` are drill d's, as scenario_targets returns them. With `traces`, the tenant names
// come from the command's cache (target_names).
void check_drill_targets(const std::vector<scenarios::Scenario>& drills,
                         const std::vector<std::vector<Target>>& targets, scenarios::TraceCache* traces = nullptr);

// One verdict: a run that failed is Failed; a KPI the run does not have is NotModelled. A wait or
// JCT target is Missed while jobs of the run never started (their waits are only lower bounds).
ScoreCell score(const PolicyRun& run, const Target& target);

// Appends one row per target of one drill. A system's failed cell becomes IntegrationNeeded when a
// variant of it (`<system>+<add-on>`, a column of the same card) passes the same target.
void add_drill(Scorecard& card, const std::string& drill, const std::vector<Target>& targets,
               const CompareResult& result);

// "passed", "FAILED", "not covered", "error" (the run failed) or "integration needed".
const char* verdict_word(Verdict v);

}  // namespace headroom::planner
