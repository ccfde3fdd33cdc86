#include "apps/calibrate_cmd.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

#include "apps/output_check.hpp"
#include "apps/progress_line.hpp"
#include "planner/calibrate.hpp"
#include "policies/system_module.hpp"
#include "results/summary.hpp"
#include "sim/errors.hpp"

namespace headroom::app {

namespace {

void row(const char* label, const results::FidelityStats& s) {
  std::printf("  %-100.100s %7lld %10s %10s %10s %10s %7.2f %8.2f %6.0f%%\n", label, static_cast<long long>(s.jobs),
              results::short_duration(s.mean_wait_sim_s).c_str(),
              results::short_duration(s.mean_wait_recorded_s).c_str(),
              results::short_duration(s.median_abs_error_s).c_str(),
              results::short_duration(s.mean_abs_error_s).c_str(), s.pearson, s.spearman, 100 * s.within_1h);
}

// "auto, easy or slurm": the --scheduler values (the systems with calibration knobs of their own).
std::string scheduler_choices() {
  std::vector<std::string> names{"auto", "easy"};
  for (const auto& system : policies::system_modules())
    if (system.calibration != nullptr) names.push_back(system.info.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

void header(const char* first) {
  std::printf("  %-100s %7s %10s %10s %10s %10s %7s %8s %7s\n", first, "jobs", "wait sim", "wait rec", "med err",
              "mean err", "pearson", "spearman", "<=1h");
}

}  // namespace

int cmd_calibrate(const std::string& scenario, const std::string& fit, const std::string& test,
                  const std::string& output, const std::string& objective, const std::string& scheduler,
                  std::size_t rows, const std::atomic<bool>* stop) {
  planner::CalibrateRequest req;
  std::tie(req.fit_from, req.fit_to) = planner::parse_span(fit, "--fit");
  std::tie(req.test_from, req.test_to) = planner::parse_span(test, "--test");
  if (objective == "median")
    req.objective = planner::CalibrateObjective::MedianError;
  else if (objective == "mean")
    req.objective = planner::CalibrateObjective::MeanError;
  else if (objective == "pearson")
    req.objective = planner::CalibrateObjective::Pearson;
  else
    throw sim::InputError("", 0, 0, "--objective", "expected median, mean or pearson, got \"" + objective + "\"");
  if (scheduler == "auto")
    req.family = planner::CalibrateFamily::Auto;
  else if (scheduler == "easy")
    req.family = planner::CalibrateFamily::Easy;
  else if (const auto* system = policies::find_system(scheduler); system != nullptr && system->calibration != nullptr)
    req.family = planner::CalibrateFamily::System, req.system = scheduler;
  else
    throw sim::InputError("", 0, 0, "--scheduler", "expected " + scheduler_choices() + ", got \"" + scheduler + "\"");
  std::string out = output;
  if (out.empty()) {
    std::filesystem::path p(scenario);
    out = (p.parent_path() / (p.stem().string() + "-calibrated.yaml")).string();
  }
  req.scenario = scenarios::load_scenario(scenario);
  // As every command: the calibrated scenario never overwrites a file the scenario read, and its
  // folder is tried for writing before the search (apps/output_check.hpp).
  std::vector<CommandInput> inputs{{"scenario", scenario}};
  add_scenario_inputs(inputs, req.scenario);
  check_outputs({{"-o", out}}, inputs);
  req.stop = stop;
  std::atomic<std::size_t> done{0}, total{0};
  const auto begun = std::chrono::steady_clock::now();
  req.progress = [&](std::size_t d, std::size_t t) {
    done.store(d);
    total.store(t);
  };
  ProgressLine line([&] {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    char b[128];
    std::snprintf(b, sizeof b, "calibrate: %zu / %zu runs done, %.0f s", done.load(), total.load(), s);
    return std::string(b);
  });
  const planner::CalibrateResult r = planner::calibrate(req);
  line.stop();
  if (r.cancelled) {
    std::cerr << "interrupted: no output written\n";
    return 130;
  }
  const auto& inf = r.inference;
  std::printf("calibrate %s: fit %s, held-out test %s; %zu candidates from the log (docs/fidelity.md)\n",
              scenario.c_str(), fit.c_str(), test.c_str(), r.candidates.size());
  std::printf(
      "  the fit window's log: %lld jobs with recorded starts, %zu users (most at once: %lld GPUs, %d jobs), "
      "scheduler in the header: %s\n",
      static_cast<long long>(inf.recorded), inf.users.size(),
      static_cast<long long>(
          inf.users.empty() ? 0
                            : std::max_element(inf.users.begin(), inf.users.end(),
                                               [](const auto& a, const auto& b) { return a.max_gpus < b.max_gpus; })
                                  ->max_gpus),
      inf.users.empty() ? 0
                        : std::max_element(inf.users.begin(), inf.users.end(),
                                           [](const auto& a, const auto& b) { return a.max_jobs < b.max_jobs; })
                              ->max_jobs,
      inf.scheduler.empty() ? "none named" : inf.scheduler.c_str());
  std::vector<std::size_t> order(r.candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return r.candidates[a].objective < r.candidates[b].objective; });
  std::printf("\nfit window, best %zu of %zu candidates by %s absolute wait error:\n",
              std::min(rows, r.candidates.size()), r.candidates.size(),
              objective == "pearson" ? "(Pearson)" : objective.c_str());
  header("candidate");
  row(("baseline: " + r.baseline_policy + " as given").c_str(), r.baseline_fit);
  for (std::size_t k = 0; k < order.size() && k < rows; ++k)
    row(((order[k] == r.best ? "* " : "") + r.candidates[order[k]].candidate.label).c_str(),
        r.candidates[order[k]].fit);
  if (objective == "mean")
    std::printf("  * chosen: of the candidates within %.0f%% of the smallest mean error, the smallest median error\n",
                100 * planner::kMeanErrorBand);
  std::printf("\nheld-out test window %s:\n", test.c_str());
  header("");
  row(("baseline: " + r.baseline_policy + " as given").c_str(), r.baseline_test);
  row(("calibrated: " + r.candidates[r.best].candidate.label).c_str(), r.calibrated_test);
  const std::string text = planner::calibrated_yaml(r, req.scenario, out);
  {
    const std::string tmp = out + ".tmp";
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      throw sim::InputError(out, 0, 0, "", "cannot write the calibrated scenario");
    }
    std::filesystem::rename(tmp, out);
  }
  std::printf("\nwrote %s (run, plan, sweep and compare start from it)\n", out.c_str());
  return 0;
}

}  // namespace headroom::app
