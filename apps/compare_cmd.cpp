#include "apps/compare_cmd.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/progress_line.hpp"
#include "planner/compare.hpp"
#include "results/summary.hpp"
#include "results/table.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"

namespace headroom::app {

using results::json_number;
using results::json_string;

namespace {

std::string show(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  char b[48];
  if (unit == "s") return results::short_duration(v);
  if (unit == "fraction") {
    std::snprintf(b, sizeof b, "%.1f%%", 100.0 * v);
  } else if (unit == "count") {
    std::snprintf(b, sizeof b, "%.0f", v);
  } else if (unit.rfind("cost", 0) == 0) {
    std::snprintf(b, sizeof b, "%.2f", v);
  } else if (unit == "GPU-h" || unit == "GPUs") {
    std::snprintf(b, sizeof b, "%.1f", v);
  } else {
    std::snprintf(b, sizeof b, "%.3f", v);
  }
  return b;
}

}  // namespace

int cmd_compare(const std::string& scenario, const std::string& policy_list, const std::string& csv, bool json,
                std::optional<std::uint64_t> seed, std::size_t tenant_rows, std::atomic<bool>* stop) {
  const std::vector<std::string> names = planner::parse_policy_list(policy_list);
  if (!csv.empty()) {
    const auto dir = std::filesystem::absolute(csv).parent_path();
    if (!std::filesystem::is_directory(dir)) throw sim::InputError(csv, 0, 0, "", "output directory does not exist");
    if (std::filesystem::is_directory(csv)) throw sim::InputError(csv, 0, 0, "", "output path is a directory");
  }
  scenarios::Scenario base = scenarios::load_scenario(scenario);
  if (seed) base.seed = *seed;
  planner::RunsProgress progress;
  ProgressLine line([&] { return "compare: " + progress.line("policies"); });
  const planner::CompareResult result = planner::compare(base, names, stop, &progress);
  line.stop();
  if (result.cancelled || (stop != nullptr && stop->load())) {
    std::cerr << "interrupted: no output written\n";
    return 130;
  }
  const results::Table table = planner::compare_table(result);
  const auto& metric = table.columns[0].strings;
  const auto& unit = table.columns[1].strings;
  std::size_t failed = 0;
  for (const auto& r : result.runs) failed += !r.done;

  if (json) {
    std::cout << "{\n  \"scenario\": " << json_string(result.scenario_name) << ",\n  \"seed\": " << base.seed
              << ",\n  \"runs\": [";
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
      const auto& r = result.runs[i];
      std::cout << (i ? ",\n" : "\n") << "    {\"policy\": " << json_string(r.policy)
                << ", \"status\": " << json_string(r.done ? "done" : "failed")
                << ", \"fingerprint\": " << json_string(r.summary.fingerprint)
                << ", \"error\": " << json_string(r.error) << ", \"warning\": " << json_string(r.summary.banner)
                << ", \"never_started\": " << r.summary.never_started << "}";
    }
    std::cout << "\n  ],\n  \"metrics\": [";
    for (std::size_t m = 0; m < table.rows(); ++m) {
      std::cout << (m ? ",\n" : "\n") << "    {\"metric\": " << json_string(metric[m])
                << ", \"unit\": " << json_string(unit[m]) << ", \"values\": {";
      for (std::size_t i = 0; i < result.runs.size(); ++i)
        std::cout << (i ? ", " : "") << json_string(result.runs[i].policy) << ": "
                  << json_number(table.columns[i + 2].numbers[m], "null");
      std::cout << "}}";
    }
    std::cout << "\n  ]\n}\n";
  } else {
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
                static_cast<unsigned long long>(base.seed), result.runs.size());
    // Jobs a policy never started or rejected: its wait figures are lower bounds, said first.
    bool warned = false;
    for (const auto& r : result.runs) {
      if (!r.done || r.summary.banner.empty()) continue;
      std::printf("%s: %s\n", r.policy.c_str(), r.summary.banner.c_str());
      warned = true;
    }
    if (warned) std::printf("\n");
    std::printf("%-*s", static_cast<int>(width), "metric");
    for (const auto& r : result.runs) std::printf("  %12s", r.policy.c_str());
    std::printf("\n");
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
    std::string section;
    for (std::size_t m = 0; m < table.rows(); ++m) {
      if (!visible(metric[m])) continue;
      const std::string sec = metric[m].substr(0, metric[m].find(':') == std::string::npos ? 0 : metric[m].find('.'));
      if (sec != section && !sec.empty()) std::printf("\n");
      section = sec;
      std::printf("%-*s", static_cast<int>(width), metric[m].substr(0, 40).c_str());
      for (std::size_t i = 0; i < result.runs.size(); ++i) {
        const double v = table.columns[i + 2].numbers[m];
        const bool bound = std::isfinite(v) && lower_bound(m, i + 2);
        std::printf("  %12s", ((bound ? ">=" : "") + show(v, unit[m])).c_str());
      }
      std::printf("\n");
    }
    const std::size_t tenants_total = planner::largest_tenants(result, SIZE_MAX).size();
    if (tenants_total > shown.size())
      std::printf("(%zu of %zu tenants shown, by GPU-hours; the CSV and --json have all)\n", shown.size(),
                  tenants_total);
    std::printf("\n%-*s", static_cast<int>(width), "fingerprint");
    for (const auto& r : result.runs) std::printf("  %16s", r.done ? r.summary.fingerprint.c_str() : "failed");
    std::printf("\n");
    for (const auto& r : result.runs)
      if (!r.done) std::fprintf(stderr, "error: policy %s: %s\n", r.policy.c_str(), r.error.c_str());
  }
  if (!csv.empty()) {
    const std::string tmp = csv + ".tmp";
    {
      std::ofstream out(tmp);
      results::write_table_csv(table, out);
      if (!out) throw sim::InputError(csv, 0, 0, "", "cannot write the CSV table");
    }
    std::filesystem::rename(tmp, csv);
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace headroom::app
