#include "apps/compare_cmd.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "apps/output_check.hpp"
#include "apps/progress_line.hpp"
#include "models/workload.hpp"
#include "planner/compare.hpp"
#include "planner/scorecard.hpp"
#include "policies/registry.hpp"
#include "policies/system_module.hpp"
#include "results/format.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"
#include "results/table.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::app {

using results::json_number;
using results::json_string;

namespace {

// A cell of the text table: results::with_unit (units, thousands separators, one duration
// format), except that counts stay plain digits: scripts (checks/poc-bakeoff) read the jobs,
// unfinished, rejected and denied rows as integers, one whitespace-separated field per policy.
std::string show(double v, const std::string& unit) {
  if (unit == "s") return results::with_unit(v, unit);  // "never" for a time never reached
  if (!std::isfinite(v)) return "-";
  if (unit == "count") {
    char b[48];
    std::snprintf(b, sizeof b, "%.0f", v);
    return b;
  }
  return results::with_unit(v, unit);
}

}  // namespace

namespace {

void print_json_run_list(const planner::CompareResult& result) {
  std::cout << "[";
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    const auto& r = result.runs[i];
    std::cout << (i ? ",\n" : "\n") << "    {\"policy\": " << json_string(r.policy)
              << ", \"status\": " << json_string(r.done ? "done" : "failed")
              << ", \"fingerprint\": " << json_string(r.summary.fingerprint) << ", \"error\": " << json_string(r.error)
              << ", \"warning\": " << json_string(r.summary.banner)
              << ", \"never_started\": " << r.summary.never_started << "}";
  }
  std::cout << "\n  ]";
}

void print_json_metrics(const planner::CompareResult& result, const results::Table& table) {
  const auto& metric = table.columns[0].strings;
  const auto& unit = table.columns[1].strings;
  std::cout << "[";
  for (std::size_t m = 0; m < table.rows(); ++m) {
    std::cout << (m ? ",\n" : "\n") << "    {\"metric\": " << json_string(metric[m])
              << ", \"unit\": " << json_string(unit[m]) << ", \"values\": {";
    for (std::size_t i = 0; i < result.runs.size(); ++i)
      std::cout << (i ? ", " : "") << json_string(result.runs[i].policy) << ": "
                << json_number(table.columns[i + 2].numbers[m], "null");
    std::cout << "}}";
  }
  std::cout << "\n  ]";
}

// The rows (tenant rows aside) that read the same under every system that finished, as the text
// table shows them: they do not tell these systems apart. Empty with fewer than two finished runs.
// docs/drills.md says, drill by drill, why each such row of the bundled drills must be so.
std::vector<std::string> same_under_every_system(const planner::CompareResult& result, const results::Table& table) {
  std::vector<std::string> same;
  std::vector<std::size_t> done;
  for (std::size_t i = 0; i < result.runs.size(); ++i)
    if (result.runs[i].done) done.push_back(i + 2);
  if (done.size() < 2) return same;
  const auto& metric = table.columns[0].strings;
  const auto& unit = table.columns[1].strings;
  for (std::size_t m = 0; m < table.rows(); ++m) {
    if (metric[m].rfind("tenant:", 0) == 0) continue;
    const std::string first = show(table.columns[done[0]].numbers[m], unit[m]);
    bool all = true;
    for (std::size_t k = 1; k < done.size() && all; ++k)
      all = show(table.columns[done[k]].numbers[m], unit[m]) == first;
    if (all) same.push_back(metric[m]);
  }
  return same;
}

// Groups of finished systems whose columns read the same on every row, tenant rows included (at
// least two systems each, in the order listed). A bake-off whose columns coincide tells nothing
// about those systems; the table says so instead of leaving it to be noticed.
std::vector<std::vector<std::size_t>> same_columns(const planner::CompareResult& result, const results::Table& table) {
  const auto& unit = table.columns[1].strings;
  std::vector<std::vector<std::size_t>> groups;
  std::vector<bool> taken(result.runs.size(), false);
  auto equal = [&](std::size_t a, std::size_t b) {
    for (std::size_t m = 0; m < table.rows(); ++m)
      if (show(table.columns[a + 2].numbers[m], unit[m]) != show(table.columns[b + 2].numbers[m], unit[m]))
        return false;
    return true;
  };
  for (std::size_t a = 0; a < result.runs.size(); ++a) {
    if (!result.runs[a].done || taken[a]) continue;
    std::vector<std::size_t> group{a};
    for (std::size_t b = a + 1; b < result.runs.size(); ++b)
      if (result.runs[b].done && !taken[b] && equal(a, b)) {
        group.push_back(b);
        taken[b] = true;
      }
    if (group.size() > 1) groups.push_back(std::move(group));
  }
  return groups;
}

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k > 0) out.append(k + 1 == names.size() ? " and " : ", ");
    out.append(names[k]);
  }
  return out;
}

// `words` joined by single spaces into lines of at most `width` characters, each after `indent`
// (a word longer than `width` has a line of its own).
std::string wrapped(const std::vector<std::string>& words, std::size_t width, const std::string& indent) {
  std::string out, line;
  for (const std::string& word : words) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out.append(indent).append(line).append("\n");
      line.clear();
    }
    if (!line.empty()) line.push_back(' ');
    line.append(word);
  }
  if (!line.empty()) out.append(indent).append(line).append("\n");
  return out;
}

void print_same_columns(const planner::CompareResult& result, const results::Table& table,
                        const scenarios::Scenario& base) {
  for (const auto& group : same_columns(result, table)) {
    std::vector<std::string> names, twins;
    for (std::size_t i : group) names.push_back(result.runs[i].policy);
    for (std::size_t i : group)
      for (std::size_t j : group)
        if (j != i && result.runs[j].summary.fingerprint == result.runs[i].summary.fingerprint) {
          twins.push_back(result.runs[i].policy);
          break;
        }
    std::string line = listed(names) + " read the same on every row";
    if (twins.size() == names.size())
      line += ", and made the very same decisions (equal fingerprints)";
    else if (!twins.empty())
      line += " (" + listed(twins) + " made the very same decisions: equal fingerprints)";
    // Systems that derive queues, quotas or accounts from the scenario's tenants
    // (planner::derived_params), run here without: with their defaults, no shares tell them apart.
    std::vector<std::string> defaults;
    if (base.tenants.empty())
      for (const std::string& n : names) {
        const policies::SystemModule* sys = policies::find_system(n);
        if (planner::own_block(base, n) == nullptr && sys != nullptr && sys->derive != nullptr) defaults.push_back(n);
      }
    if (defaults.size() >= 2)
      line += ": the scenario has no `tenants:` and no block for " + listed(defaults) +
              ", so each runs with its defaults and no tenant shares or quotas set them apart (docs/planner.md: "
              "Kueue gets one ClusterQueue for every namespace, Volcano and KAI queue the jobs by the trace's own "
              "queues, of equal weight); describe the tenants (`tenants:`) to compare their fair share";
    std::printf("\n%s", wrapped(sim::split_on(line, ' '), 100, "").c_str());
  }
}

// Columns whose rules keep jobs on part of the cluster by their queue (Slurm's partitions and
// their Nodes); the finished columns that got the same pools as node selectors by queue (compare
// derives them from the scenario's own system, planner/compare.hpp); and those with neither, which
// place the same jobs on any node: their waits then differ by the node sets, whatever the
// schedulers do.
struct NodeRulesGap {
  std::vector<std::size_t> confining, selected, any_node;
};

NodeRulesGap node_rules_gap(const planner::CompareResult& result) {
  NodeRulesGap gap;
  for (std::size_t i = 0; i < result.runs.size(); ++i) {
    const auto& r = result.runs[i];
    if (!r.done) continue;
    if (r.confined_jobs > 0)
      gap.confining.push_back(i);
    else if (!r.node_selectors_from.empty())
      gap.selected.push_back(i);
    else if (!r.other_node_rules && !r.node_selectors)
      gap.any_node.push_back(i);
  }
  if (gap.confining.empty() || (gap.any_node.empty() && gap.selected.empty())) return {};
  return gap;
}

// "partition10 on thin; partition4 and partition17 on fat", queues with the same pools together
// (in the order first seen), at most six groups.
std::string confined_queues_text(const planner::PolicyRun& r) {
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> groups;  // pools, queues
  for (const auto& q : r.confined_queues) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == q.pools; });
    if (it == groups.end()) {
      groups.push_back({q.pools, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(q.queue);
  }
  std::string out;
  for (std::size_t g = 0; g < groups.size() && g < 6; ++g) {
    if (g > 0) out += "; ";
    out += listed(groups[g].second) + " on " + listed(groups[g].first);
  }
  if (groups.size() > 6) out += "; and " + std::to_string(groups.size() - 6) + " more node sets";
  return out;
}

void print_node_rules(const planner::CompareResult& result) {
  const NodeRulesGap gap = node_rules_gap(result);
  if (gap.confining.empty()) return;
  auto names = [&](const std::vector<std::size_t>& idx) {
    std::vector<std::string> n;
    for (std::size_t i : idx) n.push_back(result.runs[i].policy);
    return n;
  };
  const std::vector<std::string> confiners = names(gap.confining), selected = names(gap.selected),
                                 others = names(gap.any_node);
  std::string line;
  for (std::size_t i : gap.confining) {
    const auto& r = result.runs[i];
    const auto total = static_cast<double>(std::max<std::int64_t>(r.summary.jobs, 1));
    line += r.policy + " keeps " + results::thousands(r.confined_jobs) + " of " + results::thousands(r.summary.jobs) +
            " jobs (" + results::percent(static_cast<double>(r.confined_jobs) / total) +
            ") on part of the cluster by their " + (r.confined_what.empty() ? "queues" : r.confined_what) + ": " +
            confined_queues_text(r) + ". ";
  }
  if (!selected.empty())
    line += listed(selected) + (selected.size() == 1 ? " places" : " place") +
            " the same queues' jobs on the same pools, by node selectors on their pods taken from " +
            result.runs[gap.selected.front()].node_selectors_from +
            " (workload.node_selectors; writing `node_selectors: {}` there lets them use any node). ";
  // What the set-ups derived for those columns do for the selectors: a queue's jobs are then
  // admitted against the GPUs their pools hold, not the whole cluster's.
  std::string set_ups;
  for (std::size_t i : gap.selected)
    if (!result.runs[i].pools_set_up.empty())
      set_ups +=
          std::string(set_ups.empty() ? "" : "; ") + result.runs[i].policy + " gets " + result.runs[i].pools_set_up;
  if (!set_ups.empty())
    line += "So that a queue is admitted against the GPUs of its own pools, not the whole cluster's: " + set_ups + ". ";
  if (!others.empty()) {
    const bool one = others.size() == 1;
    line += listed(others) + (one ? " has" : " have") + " no such rule here and place" + (one ? "s" : "") +
            " the same jobs on any node, so a gap in waits between " + (one ? "it" : "them") + " and " +
            listed(confiners) + " is partly the node sets against one shared pool, not one scheduler against another.";
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::printf("\n%s", wrapped(sim::split_on(line, ' '), 100, "").c_str());
}

void print_table(const planner::CompareResult& result, const results::Table& table, std::uint64_t seed,
                 std::size_t tenant_rows, const scenarios::Scenario& base) {
  const auto& metric = table.columns[0].strings;
  const auto& unit = table.columns[1].strings;
  // Tenants shown: the largest by their largest GPU-hours under any finished policy (a tenant
  // that one policy never started still shows).
  const std::vector<std::string> shown = planner::largest_tenants(result, tenant_rows);
  auto visible = [&](const std::string& m) {
    if (m.rfind("tenant:", 0) != 0) return true;
    const std::string name = m.substr(7, m.rfind('.') - 7);
    return std::find(shown.begin(), shown.end(), name) != shown.end();
  };
  std::size_t width = 24;
  for (std::size_t m = 0; m < table.rows(); ++m)
    if (visible(metric[m])) width = std::max(width, std::min<std::size_t>(40, metric[m].size()));
  std::printf("scenario %s   seed %llu   %zu policies\n\n", result.scenario_name.c_str(),
              static_cast<unsigned long long>(seed), result.runs.size());
  // What the workload's build did to every policy's jobs (the time limits the log did not
  // enforce), said once.
  bool warned = false;
  for (const auto& r : result.runs) {
    if (!r.done) continue;
    for (const auto& note : r.notes) std::printf("note: %s\n", note.c_str());
    warned = !r.notes.empty();
    break;
  }
  // Jobs a policy never started or rejected: its wait figures are lower bounds, said first.
  for (const auto& r : result.runs) {
    if (!r.done || r.summary.banner.empty()) continue;
    for (const std::string& line : sim::split_on(r.summary.banner, '\n'))  // a warning, then notes
      std::printf("%s: %s\n", r.policy.c_str(), line.c_str());
    warned = true;
  }
  if (warned) std::printf("\n");
  // A wait row of a group (or of all jobs) whose never_started row is not 0 under a policy holds
  // lower bounds there: ">=" says so.
  auto row_of = [&](const std::string& name) {
    const auto it = std::find(metric.begin(), metric.end(), name);
    return it == metric.end() ? table.rows() : static_cast<std::size_t>(it - metric.begin());
  };
  auto lower_bound = [&](std::size_t m, std::size_t column) {
    const std::size_t dot = metric[m].rfind('.');
    const std::string prefix = dot == std::string::npos ? "" : metric[m].substr(0, dot + 1);
    if (metric[m].compare(prefix.size(), 5, "wait_") != 0) return false;
    const std::size_t n = row_of(prefix + "never_started");
    return n < table.rows() && table.columns[column].numbers[n] > 0;
  };
  // Every cell first: a column is as wide as its widest cell.
  std::vector<std::vector<std::string>> cells(table.rows());
  std::vector<std::size_t> col_width;
  for (const auto& r : result.runs) col_width.push_back(std::max<std::size_t>(12, r.policy.size()));
  for (std::size_t m = 0; m < table.rows(); ++m) {
    if (!visible(metric[m])) continue;
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      const double v = table.columns[i + 2].numbers[m];
      const bool bound = std::isfinite(v) && lower_bound(m, i + 2);
      cells[m].push_back((bound ? ">=" : "") + show(v, unit[m]));
      col_width[i] = std::max(col_width[i], cells[m].back().size());
    }
  }
  std::printf("%-*s", static_cast<int>(width), "metric");
  for (std::size_t i = 0; i < result.runs.size(); ++i)
    std::printf("  %*s", static_cast<int>(col_width[i]), result.runs[i].policy.c_str());
  std::printf("\n");
  std::string section;
  for (std::size_t m = 0; m < table.rows(); ++m) {
    if (!visible(metric[m])) continue;
    const std::string sec = metric[m].substr(0, metric[m].find(':') == std::string::npos ? 0 : metric[m].find('.'));
    if (sec != section && !sec.empty()) std::printf("\n");
    section = sec;
    std::printf("%-*s", static_cast<int>(width), metric[m].substr(0, 40).c_str());
    for (std::size_t i = 0; i < result.runs.size(); ++i)
      std::printf("  %*s", static_cast<int>(col_width[i]), cells[m][i].c_str());
    std::printf("\n");
  }
  const std::size_t tenants_total = planner::largest_tenants(result, SIZE_MAX).size();
  if (tenants_total > shown.size())
    std::printf("(%zu of %zu tenants shown, by GPU-hours; the CSV and --json have all)\n", shown.size(), tenants_total);
  // Rows that do not tell the systems apart, named once so nobody reads them as a result.
  const auto same = same_under_every_system(result, table);
  if (!same.empty()) {
    std::vector<std::string> items = same;  // "jobs, cancelled, ...": lines of at most 100 characters
    for (std::size_t k = 0; k + 1 < items.size(); ++k) items[k] += ',';
    std::printf(
        "\nthe same under every system (these rows do not tell the systems apart; docs/drills.md says why for "
        "the bundled drills):\n%s",
        wrapped(items, 98, "  ").c_str());
  }
  print_same_columns(result, table, base);
  print_node_rules(result);
  // Systems tell themselves apart only when jobs compete: when under every one almost no job
  // waited, the table's likeness is the workload's, and that is said (OSC's cluster log: 12.8 %
  // busy, every wait row 0 under all seven systems).
  {
    std::size_t finished = 0;
    double p99 = 0, busiest = 0;
    bool all_started = true;
    for (const auto& r : result.runs) {
      if (!r.done) continue;
      ++finished;
      p99 = std::max(p99, r.summary.wait.p99);
      busiest = std::max(busiest, r.summary.gpu_utilization);
      all_started = all_started && r.summary.never_started == 0 && r.summary.wait.n > 0;
    }
    if (finished >= 2 && all_started && p99 < 60)
      std::printf(
          "\nlittle to decide: under every system 99%% of the jobs waited under a minute (GPUs %.1f%% busy at "
          "most), so the systems barely differ; they part ways when jobs compete for GPUs (raise "
          "workload.arrival_scale, or give the cluster fewer nodes)\n",
          100.0 * busiest);
  }
  // The permission drill: how each system answered the denied submissions.
  bool any_denied = false;
  for (const auto& r : result.runs) any_denied = any_denied || (r.done && r.summary.denied > 0);
  if (any_denied) {
    std::printf("\ndenied submissions (permission drill):\n");
    for (const auto& r : result.runs) {
      if (!r.done || r.summary.denied == 0) continue;
      const auto policy = policies::make_policy(r.policy, {}, 1);
      models::Workload w;
      models::Job job;
      job.tenant = w.tenants.intern("<tenant>");
      job.queue = w.queues.intern("<queue>");
      const auto d = policy->deny(w, job);
      std::printf("  %-12s %s: %s\n", r.policy.c_str(), d.held ? "held pending as inadmissible" : "refused at submit",
                  d.reason.c_str());
    }
  }
  std::printf("\n%-*s", static_cast<int>(width), "fingerprint");
  for (const auto& r : result.runs) std::printf("  %16s", r.done ? r.summary.fingerprint.c_str() : "failed");
  std::printf("\n");
  for (const auto& r : result.runs)
    if (!r.done) std::fprintf(stderr, "error: policy %s: %s\n", r.policy.c_str(), r.error.c_str());
}

std::string value_text(double value, const planner::Target& t) {
  if (t.unit == "time") return results::duration(value);
  if (t.unit == "ratio") return results::percent(value);
  if (std::isfinite(value) && std::abs(value) >= 1000) return results::grouped(value, 0);
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", value);
  return b;
}

std::string cell_text(const planner::ScoreCell& c, const planner::Target& t) {
  std::string out = planner::verdict_word(c.verdict);
  if (c.verdict == planner::Verdict::IntegrationNeeded) return out + ": " + c.add_on;
  if (c.verdict != planner::Verdict::Met && c.verdict != planner::Verdict::Missed) return out;
  return out + " " + (c.note.empty() ? "" : ">=") + value_text(c.value, t);
}

// Why, in one line: the KPI and its value against the target, what makes the figure a lower
// bound, the variant that passes it, or why the run has no such figure.
std::string cell_why(const planner::ScoreCell& c, const planner::Target& t) {
  const std::string measured = t.kpi + " " + (c.note.empty() ? "" : ">=") + value_text(c.value, t);
  const std::string bound =
      std::string(t.at_most ? (t.strict ? "<" : "<=") : (t.strict ? ">" : ">=")) + " " + value_text(t.bound, t);
  switch (c.verdict) {
    case planner::Verdict::Met: return measured + ", target " + bound;
    case planner::Verdict::Missed: return measured + ", target " + bound + (c.note.empty() ? "" : " (" + c.note + ")");
    case planner::Verdict::IntegrationNeeded:
      return measured + ", target " + bound + (c.note.empty() ? "" : " (" + c.note + ")") + "; " + c.add_on +
             " passes it with " + value_text(c.add_on_value, t);
    case planner::Verdict::NotModelled:
      return c.note.empty() ? "the run has no " + t.kpi + " (nothing in this drill measures it)" : c.note;
    case planner::Verdict::Failed: return "the run failed: " + c.note;
  }
  return "";
}

void print_scorecard(const planner::Scorecard& card) {
  if (card.rows.empty()) return;
  std::size_t dw = 5, tw = 6, cw = 14;
  for (const auto& r : card.rows) {
    dw = std::max(dw, r.drill.size());
    tw = std::max(tw, r.target.text.size());
    for (const auto& c : r.cells) cw = std::max(cw, cell_text(c, r.target).size());
  }
  std::printf(
      "\nscorecard: the drills' acceptance targets under each system (passed, FAILED, not covered, "
      "integration needed: a variant with a real add-on passes it)\n");
  std::printf("%-*s  %-*s", static_cast<int>(dw), "drill", static_cast<int>(tw), "target");
  for (const auto& p : card.policies) std::printf("  %*s", static_cast<int>(cw), p.c_str());
  std::printf("\n");
  std::vector<std::size_t> met(card.policies.size(), 0);
  for (const auto& r : card.rows) {
    std::printf("%-*s  %-*s", static_cast<int>(dw), r.drill.c_str(), static_cast<int>(tw), r.target.text.c_str());
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      std::printf("  %*s", static_cast<int>(cw), cell_text(r.cells[i], r.target).c_str());
      met[i] += r.cells[i].verdict == planner::Verdict::Met;
    }
    std::printf("\n");
  }
  std::printf("%-*s  %-*s", static_cast<int>(dw), "", static_cast<int>(tw), "targets passed");
  for (std::size_t i = 0; i < card.policies.size(); ++i)
    std::printf("  %*s", static_cast<int>(cw),
                (std::to_string(met[i]) + " of " + std::to_string(card.rows.size())).c_str());
  std::printf("\n");
  // Why each cell that is not a pass says what it says, one line each.
  for (const auto& r : card.rows)
    for (std::size_t i = 0; i < r.cells.size(); ++i)
      if (r.cells[i].verdict != planner::Verdict::Met)
        std::printf("  %s under %s, %s: %s: %s\n", r.drill.c_str(), card.policies[i].c_str(), r.target.text.c_str(),
                    planner::verdict_word(r.cells[i].verdict), cell_why(r.cells[i], r.target).c_str());
}

void print_json_scorecard(const planner::Scorecard& card) {
  std::cout << "[";
  for (std::size_t k = 0; k < card.rows.size(); ++k) {
    const auto& r = card.rows[k];
    std::cout << (k ? ",\n" : "\n") << "    {\"drill\": " << json_string(r.drill)
              << ", \"target\": " << json_string(r.target.text) << ", \"verdicts\": {";
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      const auto& c = r.cells[i];
      const bool valued = c.verdict == planner::Verdict::Met || c.verdict == planner::Verdict::Missed ||
                          c.verdict == planner::Verdict::IntegrationNeeded;
      std::cout << (i ? ", " : "") << json_string(card.policies[i])
                << ": {\"verdict\": " << json_string(planner::verdict_word(c.verdict))
                << ", \"value\": " << (valued ? json_number(c.value, "null") : "null")
                << ", \"note\": " << json_string(c.note) << ", \"add_on\": " << json_string(c.add_on)
                << ", \"why\": " << json_string(cell_why(c, r.target)) << "}";
    }
    std::cout << "}}";
  }
  std::cout << "\n  ]";
}

// With --keep-runs: each kept run's file gets the verdicts of its drill's targets under its
// system, with their why-lines (RunResult::scorecard), for `headroom report` and the desktop
// app's Compare tab. Each file is read and written again whole (write_hdf5: a temporary file,
// then a rename), so an interrupted compare never leaves a half-written file.
void keep_verdicts(const std::string& dir, const planner::Scorecard& card) {
  std::map<std::pair<std::string, std::string>, std::vector<results::VerdictLine>> by_run;
  for (const auto& r : card.rows)
    for (std::size_t i = 0; i < r.cells.size() && i < card.policies.size(); ++i)
      by_run[{r.drill, card.policies[i]}].push_back(
          {r.target.text, cell_text(r.cells[i], r.target), cell_why(r.cells[i], r.target)});
  for (auto& [key, lines] : by_run) {
    const std::string path = planner::kept_run_path(dir, key.first, key.second);
    if (!std::filesystem::exists(path)) continue;  // the run failed: nothing was kept
    results::RunResult run = results::read_hdf5(path);
    run.scorecard = std::move(lines);
    results::write_hdf5(run, path);
  }
}

}  // namespace

int cmd_compare(const std::vector<std::string>& scenario_paths, const std::string& policy_list, const std::string& csv,
                bool json, std::optional<std::uint64_t> seed, std::size_t tenant_rows,
                const std::vector<std::string>& targets, const std::string& keep_runs, std::atomic<bool>* stop) {
  const std::vector<std::string> names = planner::parse_policy_list(policy_list);
  std::vector<scenarios::Scenario> bases;
  std::vector<std::vector<planner::Target>> drill_targets;
  std::vector<CommandInput> inputs;
  for (const auto& path : scenario_paths) {
    bases.push_back(scenarios::load_scenario(path));
    for (const auto& w : bases.back().warnings) std::cerr << "warning: " << w << '\n';
    if (seed) bases.back().seed = *seed;
    drill_targets.push_back(planner::scenario_targets(bases.back(), targets));
    inputs.push_back({"scenario", path});
    add_scenario_inputs(inputs, bases.back());  // its trace, site files, manifests, `policies:` blocks' files
  }
  scenarios::TraceCache traces;  // the runs' traces, read once (a tenant target's check included)
  planner::check_drill_targets(bases, drill_targets, &traces);
  if (!csv.empty()) check_outputs({{"-o", csv}}, inputs);
  if (!keep_runs.empty()) {
    std::vector<std::string> kept;
    for (const auto& b : bases)
      for (const auto& p : names)
        kept.push_back(std::filesystem::path(planner::kept_run_path(keep_runs, b.name, p)).filename().string());
    check_output_folder("--keep-runs", keep_runs, kept, inputs);
    std::error_code ec;
    std::filesystem::create_directories(keep_runs, ec);
    if (ec || !std::filesystem::is_directory(keep_runs))
      throw sim::InputError(keep_runs, 0, 0, "--keep-runs", "cannot create the directory: " + ec.message());
  }
  planner::RunsProgress progress;
  ProgressLine line([&] { return "compare: " + progress.line(bases.size() > 1 ? "runs" : "policies"); });
  const std::vector<planner::CompareResult> all = planner::compare_all(bases, names, stop, &progress, keep_runs, &traces);
  line.stop();
  bool cancelled = stop != nullptr && stop->load();
  for (const auto& r : all) cancelled = cancelled || r.cancelled;
  if (cancelled) {
    std::cerr << "interrupted: no output written\n";
    return 130;
  }
  // A workload that does not read is the input's fault under every policy: its error, once
  // (file:line, exit 2), and no table of empty columns.
  for (const auto& r : all)
    if (const std::exception_ptr e = planner::common_input_error(r)) std::rethrow_exception(e);
  std::vector<results::Table> tables;
  for (const auto& r : all) tables.push_back(planner::compare_table(r));
  planner::Scorecard card;
  for (std::size_t b = 0; b < all.size(); ++b) planner::add_drill(card, all[b].scenario_name, drill_targets[b], all[b]);
  std::size_t failed = 0;
  for (const auto& r : all)
    for (const auto& run : r.runs) failed += !run.done;
  if (!keep_runs.empty() && !card.rows.empty()) keep_verdicts(keep_runs, card);

  if (json) {
    // One scenario: its object, scorecard added; several: {drills: [objects], scorecard}.
    auto one = [&](std::size_t b) {
      std::cout << "{\n  \"scenario\": " << json_string(all[b].scenario_name) << ",\n  \"seed\": " << bases[b].seed
                << ",\n  \"runs\": ";
      print_json_run_list(all[b]);
      std::cout << ",\n  \"metrics\": ";
      print_json_metrics(all[b], tables[b]);
      std::cout << ",\n  \"same_under_every_system\": [";
      const auto same = same_under_every_system(all[b], tables[b]);
      for (std::size_t k = 0; k < same.size(); ++k) std::cout << (k ? ", " : "") << json_string(same[k]);
      std::cout << "]";
      // Systems whose columns read the same on every row (the line under the text table).
      std::cout << ",\n  \"same_columns\": [";
      const auto groups = same_columns(all[b], tables[b]);
      for (std::size_t g = 0; g < groups.size(); ++g) {
        std::cout << (g ? ", " : "") << "[";
        for (std::size_t k = 0; k < groups[g].size(); ++k)
          std::cout << (k ? ", " : "") << json_string(all[b].runs[groups[g][k]].policy);
        std::cout << "]";
      }
      std::cout << "]";
      // Columns that keep jobs on part of the cluster by their queue, next to columns that place
      // them anywhere (the node-rules line under the text table).
      std::cout << ",\n  \"node_rules\": [";
      const NodeRulesGap gap = node_rules_gap(all[b]);
      for (std::size_t k = 0; k < gap.confining.size(); ++k) {
        const auto& r = all[b].runs[gap.confining[k]];
        std::cout << (k ? ", " : "") << "{\"policy\": " << json_string(r.policy)
                  << ", \"confined_jobs\": " << r.confined_jobs << ", \"queues\": {";
        for (std::size_t q = 0; q < r.confined_queues.size(); ++q) {
          std::cout << (q ? ", " : "") << json_string(r.confined_queues[q].queue) << ": [";
          for (std::size_t p = 0; p < r.confined_queues[q].pools.size(); ++p)
            std::cout << (p ? ", " : "") << json_string(r.confined_queues[q].pools[p]);
          std::cout << "]";
        }
        std::cout << "}}";
      }
      std::cout << "],\n  \"node_selectors_from_rules\": [";
      for (std::size_t k = 0; k < gap.selected.size(); ++k)
        std::cout << (k ? ", " : "") << json_string(all[b].runs[gap.selected[k]].policy);
      std::cout << "],\n  \"pools_set_up\": {";
      bool first_set_up = true;
      for (std::size_t i : gap.selected) {
        const auto& r = all[b].runs[i];
        if (r.pools_set_up.empty()) continue;
        std::cout << (first_set_up ? "" : ", ") << json_string(r.policy) << ": " << json_string(r.pools_set_up);
        first_set_up = false;
      }
      std::cout << "},\n  \"any_node\": [";
      for (std::size_t k = 0; k < gap.any_node.size(); ++k)
        std::cout << (k ? ", " : "") << json_string(all[b].runs[gap.any_node[k]].policy);
      std::cout << "]";
    };
    if (all.size() == 1) {
      one(0);
    } else {
      std::cout << "{\"drills\": [";
      for (std::size_t b = 0; b < all.size(); ++b) {
        std::cout << (b ? ",\n" : "\n");
        one(b);
        std::cout << "\n}";
      }
      std::cout << "]";
    }
    std::cout << ",\n  \"scorecard\": ";
    print_json_scorecard(card);
    std::cout << "\n}\n";
  } else {
    for (std::size_t b = 0; b < all.size(); ++b) {
      if (b > 0) std::printf("\n\n");
      print_table(all[b], tables[b], bases[b].seed, tenant_rows, bases[b]);
    }
    print_scorecard(card);
    if (!keep_runs.empty())
      std::printf("\nresult files: %s/<scenario>-<policy>.h5 (open them with headroom-gui or headroom report)\n",
                  keep_runs.c_str());
  }
  if (!csv.empty()) {
    // One scenario: the table as it is. Several: one table, a `scenario` column first.
    results::Table out = tables.front();
    if (tables.size() > 1) {
      out.columns.insert(out.columns.begin(), results::Column{"scenario", true, {}, {}});
      out.columns[0].strings.assign(tables[0].rows(), all[0].scenario_name);
      for (std::size_t b = 1; b < tables.size(); ++b) {
        out.columns[0].strings.insert(out.columns[0].strings.end(), tables[b].rows(), all[b].scenario_name);
        for (std::size_t c = 0; c < tables[b].columns.size(); ++c) {
          auto& dst = out.columns[c + 1];
          const auto& src = tables[b].columns[c];
          dst.strings.insert(dst.strings.end(), src.strings.begin(), src.strings.end());
          dst.numbers.insert(dst.numbers.end(), src.numbers.begin(), src.numbers.end());
        }
      }
    }
    const std::string tmp = csv + ".tmp";
    {
      std::ofstream f(tmp);
      results::write_table_csv(out, f);
      if (!f) throw sim::InputError(csv, 0, 0, "", "cannot write the CSV table");
    }
    std::filesystem::rename(tmp, csv);
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace headroom::app
