#include "planner/scorecard.hpp"

#include <cstddef>

#include "models/job.hpp"
#include "sim/errors.hpp"

namespace headroom::planner {

std::vector<Target> scenario_targets(const scenarios::Scenario& sc, const std::vector<std::string>& extra) {
  std::vector<Target> out;
  std::vector<sim::InputError> errors;
  for (const auto& t : sc.targets) {
    try {
      out.push_back(parse_target(t.text));
    } catch (const sim::InputError& e) {
      errors.emplace_back(sc.file, t.line, t.column, "targets", e.message());
    }
  }
  if (!errors.empty()) throw sim::InputErrors(std::move(errors));
  for (const auto& text : extra) out.push_back(parse_target(text));
  return out;
}

namespace {

bool about_waits(const Target& t) {
  const auto has = [&](const char* w) { return t.kpi.find(w) != std::string::npos; };
  return has("wait") || has("jct") || t.kpi == "makespan";
}

}  // namespace

ScoreCell score(const PolicyRun& run, const Target& target) {
  ScoreCell c;
  if (!run.done) {
    c.verdict = Verdict::Failed;
    c.note = run.error;
    return c;
  }
  const auto v = kpi_value(run.summary, run.fairness, target);
  if (!v) {
    c.verdict = Verdict::NotModelled;
    return c;
  }
  c.value = *v;
  c.verdict = meets(target, *v) ? Verdict::Met : Verdict::Missed;
  const auto unfinished = run.summary.by_state[static_cast<std::size_t>(models::JobState::Unfinished)];
  if (unfinished > 0 && about_waits(target)) {
    // The jobs still waiting at the end have no wait yet: the figure cannot show the target met.
    c.verdict = Verdict::Missed;
    c.note = std::to_string(unfinished) + " jobs unfinished";
  }
  return c;
}

void add_drill(Scorecard& card, const std::string& drill, const std::vector<Target>& targets,
               const CompareResult& result) {
  if (card.policies.empty())
    for (const auto& r : result.runs) card.policies.push_back(r.policy);
  for (const auto& t : targets) {
    ScoreRow row{drill, t, {}};
    for (const auto& p : card.policies) {
      const PolicyRun* run = nullptr;
      for (const auto& r : result.runs)
        if (r.policy == p) run = &r;
      if (run == nullptr) {
        row.cells.push_back(ScoreCell{Verdict::NotModelled, 0, "not run"});
      } else {
        row.cells.push_back(score(*run, t));
      }
    }
    card.rows.push_back(std::move(row));
  }
}

const char* verdict_word(Verdict v) {
  switch (v) {
    case Verdict::Met: return "met";
    case Verdict::Missed: return "MISSED";
    case Verdict::NotModelled: return "n/m";
    case Verdict::Failed: return "failed";
  }
  return "?";
}

}  // namespace headroom::planner
