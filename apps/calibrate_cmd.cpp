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
  std::printf("  %-150.150s %7lld %10s %10s %10s %10s %7.2f %8.2f %6.0f%%\n", label, static_cast<long long>(s.jobs),
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
  std::printf("  %-150s %7s %10s %10s %10s %10s %7s %8s %7s\n", first, "jobs", "wait sim", "wait rec", "med err",
              "mean err", "pearson", "spearman", "<=1h");
}

}  // namespace

namespace {

std::string clock_text(double s) {
  const auto t = static_cast<long long>(s + 0.5);
  char b[32];
  if (t >= 3600)
    std::snprintf(b, sizeof b, "%lldh %02lldm", t / 3600, t / 60 % 60);
  else
    std::snprintf(b, sizeof b, "%lldm %02llds", t / 60, t % 60);
  return b;
}

std::string window_text(sim::Tick from, sim::Tick to) {
  return results::short_duration(sim::to_seconds(from)) + "-" + results::short_duration(sim::to_seconds(to));
}

void pair_row(const char* label, const results::FidelityStats& b, const results::FidelityStats& c) {
  std::printf("  %-26s %10s %10s %6.2f %6.2f | %10s %10s %6.2f %6.2f\n", label,
              results::short_duration(b.median_abs_error_s).c_str(),
              results::short_duration(b.mean_abs_error_s).c_str(), b.pearson, b.spearman,
              results::short_duration(c.median_abs_error_s).c_str(),
              results::short_duration(c.mean_abs_error_s).c_str(), c.pearson, c.spearman);
}

}  // namespace

int cmd_calibrate(const std::string& scenario, const std::string& fit, const std::string& test,
                  const std::string& output, const std::string& objective, const std::string& scheduler,
                  std::size_t rows, const CalibrateFolds& folds, const std::atomic<bool>* stop) {
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
  if (folds.outer < 1 || folds.outer > 500)
    throw sim::InputError("", 0, 0, "--folds",
                          "expected 1 to 500 fit / test pairs, got " + std::to_string(folds.outer));
  if (folds.inner < 1 || folds.inner > 12)
    throw sim::InputError("", 0, 0, "--inner-folds", "expected 1 to 12, got " + std::to_string(folds.inner));
  const auto warmup = sim::parse_duration(folds.warmup);
  if (!warmup || *warmup < 0)
    throw sim::InputError("", 0, 0, "--warmup", "expected a duration such as 7d or 0, got \"" + folds.warmup + "\"");
  req.outer_folds = folds.outer;
  req.inner_folds = folds.inner;
  req.warmup = *warmup;
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
    const std::size_t d = done.load(), t = total.load();
    const std::string eta = d == 0 ? "?" : clock_text(s / static_cast<double>(d) * static_cast<double>(t - d));
    return "calibrate: " + std::to_string(d) + " / " + std::to_string(t) + " runs done, " + clock_text(s) + ", ETA " +
           eta;
  });
  const planner::CalibrateResult r = planner::calibrate(req);
  line.stop();
  if (r.cancelled) {
    std::cerr << "interrupted: no output written\n";
    return 130;
  }
  const auto& inf = r.inference;
  const std::string named = traces::header_scheduler_text(inf);
  const std::size_t K = r.baseline_folds.size();
  if (r.baseline_test.jobs == 0 && r.baseline_fit.jobs == 0)
    std::cerr << "warning: the scenario as given compared no job of the fit or test window (are they all rejected? "
                 "`headroom run` names the reason): nothing was calibrated\n";
  std::printf(
      "calibrate %s: fit %s, held-out test %s; %zu rules from the log, each checked on %zu inner folds "
      "(docs/fidelity.md); %zu runs\n",
      scenario.c_str(), fit.c_str(), test.c_str(), r.candidates.size(), K, r.runs);
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
      named.empty() ? "none named" : named.c_str());
  const auto& f = r.findings;
  std::printf("  what the log shows (not fitted): recorded use up to %lld GPUs at %s of the cluster's %lld%s\n",
              static_cast<long long>(f.max_in_use), results::short_duration(sim::to_seconds(f.max_in_use_at)).c_str(),
              static_cast<long long>(f.cluster_gpus),
              !f.over_capacity() ? ""
              : r.inference.time_shared.empty()
                  ? " (more than the cluster: a trace anomaly)"
                  : " (more than the cluster: jobs shared processors, as the header says, "
                    "which a replay does not model)");
  if (const std::string cleaned = traces::cleaned_log_note(inf); !cleaned.empty())
    std::printf("    %s\n", cleaned.c_str());
  if (f.with_limit > 0) {
    const std::string raised = f.raised_limit > 0 ? "; the scenario lets " + std::to_string(f.raised_limit) +
                                                        " of them run their recorded time (workload.time_limits)"
                                                  : "";
    std::printf("    time limits: %lld of %lld jobs with a requested time ran past it (%.1f%%: %s)%s\n",
                static_cast<long long>(f.past_limit), static_cast<long long>(f.with_limit),
                100.0 * static_cast<double>(f.past_limit) / static_cast<double>(f.with_limit),
                f.past_limit * 100 <= f.with_limit ? "enforced" : "not enforced, or enforced late", raised.c_str());
  }
  std::printf(
      "    %zu windows of 6 h+ with use under 80%% of the cluster while a job that fit waited "
      "(nodes down or reserved: outage / reservation candidates for failures.events)%s\n",
      f.gaps.size(), f.gaps.empty() ? "" : ":");
  for (std::size_t i = 0; i < f.gaps.size() && i < 5; ++i)
    std::printf("      %s to %s: %lld+ GPUs idle; as an event: %s\n",
                results::short_duration(sim::to_seconds(f.gaps[i].from)).c_str(),
                results::short_duration(sim::to_seconds(f.gaps[i].to)).c_str(),
                static_cast<long long>(f.gaps[i].idle_gpus), f.outage_event(f.gaps[i]).c_str());

  std::printf("\ninner folds of the fit window (rolling origin: learn on the earlier part, score the next):");
  for (std::size_t k = 0; k < K; ++k) std::printf(" %s", window_text(r.fold_edges[k + 1], r.fold_edges[k + 2]).c_str());
  std::vector<std::size_t> order(r.candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Passed rules first, then the others; rules no inner fold offered last.
  const auto rank = [&](std::size_t i) { return r.candidates[i].passed ? 0 : r.candidates[i].fit.jobs > 0 ? 1 : 2; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return r.candidates[a].objective < r.candidates[b].objective;
  });
  std::printf(
      "\nbest %zu of %zu rules by %s over the inner folds (each figure the folds' mean; wins: folds beating "
      "as given):\n",
      std::min(rows, r.candidates.size()), r.candidates.size(),
      objective == "pearson" ? "Pearson" : (objective + " absolute wait error").c_str());
  header("rule");
  row(("as given: " + r.baseline_policy).c_str(), r.baseline_fit);
  for (std::size_t k = 0; k < order.size() && k < rows; ++k) {
    const auto& c = r.candidates[order[k]];
    const std::string tag = std::string(order[k] == r.best ? "* " : "") + "[" + std::to_string(c.wins) + "/" +
                            std::to_string(K) +
                            (c.suspect         ? " suspect"
                             : c.refused       ? " refused held out"
                             : c.passed        ? ""
                             : c.fit.jobs == 0 ? " not offered in the folds"
                                               : " fails") +
                            "] ";
    row((tag + c.candidate.label).c_str(), c.fit);
  }
  if (r.as_given)
    std::printf(
        "  no rule passed (most folds, their mean by 5%%, their Pearson kept, no job held longer than the log ever "
        "did): the scenario as given is written\n");
  else
    std::printf(
        "  * chosen: of the rules that passed, the smallest mean objective; within %.0f%%, fewer parameters, "
        "then the smaller median error\n",
        100 * planner::kMeanErrorBand);
  std::printf("\nheld-out test window %s:\n", test.c_str());
  header("");
  row(("as given: " + r.baseline_policy).c_str(), r.baseline_test);
  const auto& refused = r.pairs.front().refused;
  row(r.as_given ? (refused.empty() ? "calibrated = as given (no rule passed)"
                                    : "calibrated = as given (every rule that passed was refused held out)")
                 : ("calibrated: " + r.candidates[r.best].candidate.label).c_str(),
      r.calibrated_test);
  std::printf(
      "  held-out guard (the test window's submissions only): a rule that holds a job longer than %s is refused "
      "(the fit window's longest recorded wait %s, the longest as given here %s)%s;\n"
      "  and one whose jobs there wait longer than %s on average (the fit window's mean recorded wait %s, the mean "
      "as given here %s)%s\n",
      results::short_duration(sim::to_seconds(r.pairs.front().bar.bar())).c_str(),
      results::short_duration(sim::to_seconds(r.pairs.front().bar.longest_recorded)).c_str(),
      results::short_duration(sim::to_seconds(r.pairs.front().bar.longest_as_given)).c_str(),
      r.as_given ? ""
                 : ("; the chosen rule's longest here " +
                    results::short_duration(sim::to_seconds(r.pairs.front().chosen_longest)))
                       .c_str(),
      results::short_duration(sim::to_seconds(r.pairs.front().bar.mean_bar())).c_str(),
      results::short_duration(sim::to_seconds(r.pairs.front().bar.mean_recorded)).c_str(),
      results::short_duration(sim::to_seconds(r.pairs.front().bar.mean_as_given)).c_str(),
      r.as_given
          ? ""
          : ("; the chosen rule's mean here " + results::short_duration(sim::to_seconds(r.pairs.front().chosen_mean)))
                .c_str());
  for (const auto& x : refused) std::printf("  refused: %s\n", planner::refusal_text(x, r.pairs.front().bar).c_str());
  if (r.pairs.size() > 1) {
    std::printf("\nheld-out figures over %zu fit / test pairs (--folds %d), as given | calibrated:\n", r.pairs.size(),
                folds.outer);
    std::printf("  %-26s %10s %10s %6s %6s | %10s %10s %6s %6s  chosen\n", "fit / test (days)", "med err", "mean err",
                "pears", "spear", "med err", "mean err", "pears", "spear");
    results::FidelityStats mb, mc;
    for (const auto& p : r.pairs) {
      const std::string label = window_text(p.fit_from, p.fit_to) + " / " + window_text(p.test_from, p.test_to);
      std::printf("  %-26s %10s %10s %6.2f %6.2f | %10s %10s %6.2f %6.2f  %s\n", label.c_str(),
                  results::short_duration(p.baseline_test.median_abs_error_s).c_str(),
                  results::short_duration(p.baseline_test.mean_abs_error_s).c_str(), p.baseline_test.pearson,
                  p.baseline_test.spearman, results::short_duration(p.calibrated_test.median_abs_error_s).c_str(),
                  results::short_duration(p.calibrated_test.mean_abs_error_s).c_str(), p.calibrated_test.pearson,
                  p.calibrated_test.spearman,
                  ((p.chosen.empty() ? std::string("(as given)") : p.chosen) +
                   (p.refused.empty() ? std::string()
                                      : "; refused held out: " +
                                            [&] {
                                              std::string names;
                                              for (const auto& x : p.refused)
                                                names += (names.empty() ? "" : "; ") + x.rule;
                                              return names;
                                            }()))
                      .c_str());
      for (auto [m, s] : {std::pair{&mb, &p.baseline_test}, std::pair{&mc, &p.calibrated_test}}) {
        m->median_abs_error_s += s->median_abs_error_s / static_cast<double>(r.pairs.size());
        m->mean_abs_error_s += s->mean_abs_error_s / static_cast<double>(r.pairs.size());
        m->pearson += s->pearson / static_cast<double>(r.pairs.size());
        m->spearman += s->spearman / static_cast<double>(r.pairs.size());
      }
    }
    pair_row("mean", mb, mc);
    const planner::PairsVerdict v = planner::pairs_verdict(r.pairs);
    std::printf("  worst pair, calibrated - as given: mean error %+.0f s, median error %+.0f s, Pearson %+.2f\n",
                v.worst_mean, v.worst_median, v.worst_pearson);
    std::printf(
        "  pair by pair, calibrated against as given: a rule chosen in %zu of %zu pairs; median error better in %zu, "
        "mean error worse in %zu, Pearson lower by more than %.2f in %zu\n",
        v.acted, v.pairs, v.median_better, v.mean_worse, planner::kPearsonDrop, v.pearson_lower);
  }
  const std::string text = planner::calibrated_yaml(r, req.scenario, out);
  {
    const std::string tmp = out + ".tmp";
    std::ofstream fo(tmp, std::ios::binary | std::ios::trunc);
    fo << text;
    fo.close();
    if (!fo) {
      std::remove(tmp.c_str());
      throw sim::InputError(out, 0, 0, "", "cannot write the calibrated scenario");
    }
    std::filesystem::rename(tmp, out);
  }
  std::printf("\nwrote %s (%s; run, plan, sweep and compare start from it)\n", out.c_str(),
              r.as_given ? "the scenario as given, with the calibration's record" : "the calibrated scenario");
  return 0;
}

}  // namespace headroom::app
