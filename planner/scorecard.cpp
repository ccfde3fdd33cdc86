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
      out.back().file = sc.file;
      out.back().line = t.line;
      out.back().column = t.column;
    } catch (const sim::InputError& e) {
      errors.emplace_back(sc.file, t.line, t.column, "targets", "\"" + t.text + "\": " + e.message());
    }
  }
  if (!errors.empty()) throw sim::InputErrors(std::move(errors));
  for (const auto& text : extra) out.push_back(parse_target(text));
  return out;
}

void check_drill_targets(const std::vector<scenarios::Scenario>& drills,
                         const std::vector<std::vector<Target>>& targets, scenarios::TraceCache* traces) {
  std::vector<sim::InputError> errors;
  // A command-line target (the same for every drill) names a tenant or service at least one drill
  // has; under the others its cell is n/m. A scenario's own target names one of its own.
  std::vector<std::pair<const Target*, std::string>> option_first;
  std::vector<std::size_t> option_known;
  for (std::size_t d = 0; d < drills.size() && d < targets.size(); ++d) {
    const TargetNames names = target_names(drills[d], targets[d], traces);
    std::size_t k = 0;
    for (const auto& t : targets[d]) {
      const auto why = unknown_name(t, names);
      if (!t.file.empty()) {
        if (why) errors.push_back(target_error(t, *why));
        continue;
      }
      if (option_known.size() <= k) {
        option_known.push_back(0);
        option_first.emplace_back(&t, why.value_or(""));
      }
      option_known[k] += !why;
      ++k;
    }
  }
  for (std::size_t k = 0; k < option_known.size(); ++k)
    if (option_known[k] == 0) errors.push_back(target_error(*option_first[k].first, option_first[k].second));
  if (!errors.empty()) throw sim::InputErrors(std::move(errors));
}

namespace {

bool about_waits(const Target& t) {
  const auto has = [&](const char* w) { return t.kpi.find(w) != std::string::npos; };
  return has("wait") || has("jct") || t.kpi == "makespan";
}

// Jobs of the target's own population still waiting at the end: a job kind's or a tenant's
// never-started jobs for its wait and JCT targets (the training jobs a system left pending say
// nothing of the notebooks' waits), every unfinished job of the run for the others.
std::int64_t unfinished_of(const results::Summary& s, const Target& t) {
  if (t.kpi.rfind("kind.", 0) == 0 || t.kpi.rfind("tenant", 0) == 0) return not_run(s, t).never_started;
  return s.by_state[static_cast<std::size_t>(models::JobState::Unfinished)];
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
  const auto unfinished = unfinished_of(run.summary, target);
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
        row.cells.push_back(ScoreCell{Verdict::NotModelled, 0, "not run", "", 0});
      } else {
        row.cells.push_back(score(*run, t));
      }
    }
    // Integration needed: the system as configured fails the target, one of its variants passes.
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      if (row.cells[i].verdict != Verdict::Missed || card.policies[i].find('+') != std::string::npos) continue;
      const std::string prefix = card.policies[i] + "+";
      for (std::size_t k = 0; k < row.cells.size(); ++k) {
        if (card.policies[k].rfind(prefix, 0) != 0 || row.cells[k].verdict != Verdict::Met) continue;
        row.cells[i].verdict = Verdict::IntegrationNeeded;
        row.cells[i].add_on = card.policies[k];
        row.cells[i].add_on_value = row.cells[k].value;
        break;
      }
    }
    card.rows.push_back(std::move(row));
  }
}

const char* verdict_word(Verdict v) {
  switch (v) {
    case Verdict::Met: return "passed";
    case Verdict::Missed: return "FAILED";
    case Verdict::NotModelled: return "not covered";
    case Verdict::Failed: return "error";
    case Verdict::IntegrationNeeded: return "integration needed";
  }
  return "?";
}

}  // namespace headroom::planner
