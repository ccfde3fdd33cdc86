#include "apps/sweep_cmd.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <tuple>

#include "apps/output_check.hpp"
#include "planner/sweep.hpp"
#include "results/format.hpp"
#include "results/table.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"
#include "sim/time.hpp"

namespace headroom::app {

namespace {

// The inputs of a sweep: the scenario file and every file its points read (traces, site files,
// manifests). A swept key may name files of its own (`variants: {workload.trace: [a.csv, b.csv]}`,
// `policy.slurm_conf`): each value of each variable is loaded once, with the other variables at
// their first value, so the points loaded grow with the values, not with their product. A point
// that does not load is left out here; the sweep reports it as failed.
std::vector<CommandInput> sweep_inputs(const std::string& scenario, const planner::SweepSpec& spec,
                                       const std::vector<planner::SweepPoint>& points) {
  std::vector<CommandInput> in{{"scenario", scenario}};
  if (points.empty()) return in;
  auto add = [&](const planner::SweepPoint& p) {
    sim::check_interrupt();  // SIGINT / SIGTERM: a sweep of many values stops here too
    try {
      add_scenario_inputs(in, planner::point_scenario(spec, p));
    } catch (const sim::InputError&) {
    } catch (const sim::InputErrors&) {
    }
  };
  add(points.front());
  for (std::size_t v = 0; v < spec.variables.size(); ++v)
    for (std::size_t k = 1; k < spec.variables[v].values.size(); ++k) {
      planner::SweepPoint p = points.front();
      p.choice[v] = k;
      add(p);
    }
  return in;
}

void write_csv(const results::Table& table, const std::string& csv) {
  if (csv.empty()) return;
  const std::string tmp = csv + ".tmp";
  {
    std::ofstream out(tmp);
    results::write_table_csv(table, out);
    if (!out) throw sim::InputError(csv, 0, 0, "", "cannot write the CSV table");
  }
  std::filesystem::rename(tmp, csv);
}

}  // namespace

void check_sweep_outputs(const std::string& scenario, const planner::SweepSpec& spec, const std::string& output,
                         const std::string& csv, const std::string& keep_runs) {
  const auto points = planner::expand(spec);
  const auto in = sweep_inputs(scenario, spec, points);
  std::vector<PlannedOutput> out;
  if (!output.empty()) out.push_back({"-o", output});
  if (!csv.empty()) out.push_back({"--csv", csv});
  check_outputs(out, in);
  if (!keep_runs.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < points.size(); ++i) names.push_back("run-" + std::to_string(i) + ".h5");
    check_output_folder("--keep-runs", keep_runs, names, in);
  }
}

#ifndef HEADROOM_MPI
int cmd_sweep_mpi(const std::string&, const std::string&, const std::string&, const std::string&, const std::string&,
                  std::atomic<bool>*) {
  throw sim::InputError("", 0, 0, "--mpi",
                        "this headroom was built without MPI (install libopenmpi-dev and openmpi-bin and rebuild; "
                        "CMake builds it when MPI is found); without MPI, run `headroom sweep --shard I/N -o "
                        "shard-I.h5` once per shard and join them with `headroom merge`");
}
#endif

int cmd_merge(const std::vector<std::string>& inputs, const std::string& output, const std::string& csv) {
  if (output.empty() && csv.empty()) throw sim::InputError("", 0, 0, "-o", "give -o OUT.h5 and/or --csv OUT.csv");
  std::vector<CommandInput> in;
  for (const auto& path : inputs) in.push_back({"shard table", path});
  std::vector<PlannedOutput> out;
  if (!output.empty()) out.push_back({"-o", output});
  if (!csv.empty()) out.push_back({"--csv", csv});
  check_outputs(out, in);
  std::vector<results::Table> tables;
  for (const auto& in : inputs) tables.push_back(results::read_table_hdf5(in, "runs"));
  const results::Table merged = planner::merge_tables(tables, inputs);
  if (!output.empty()) results::write_table_hdf5(merged, output, "runs");
  write_csv(merged, csv);
  std::printf("merged %zu shard file%s: %zu runs%s%s\n", inputs.size(), inputs.size() == 1 ? "" : "s", merged.rows(),
              output.empty() ? "" : ", table in ", output.c_str());
  return 0;
}

int cmd_sweep(const std::string& scenario, const std::string& output, const std::string& csv,
              const std::string& keep_runs, std::atomic<bool>* stop, const std::string& shard) {
  planner::SweepOptions options;
  if (!shard.empty()) std::tie(options.shard_index, options.shard_count) = planner::parse_shard(shard);
  const planner::SweepSpec spec = planner::load_sweep(scenario);
  check_sweep_outputs(scenario, spec, output, csv, keep_runs);
  options.stop = stop;
  options.keep_runs_dir = keep_runs;
  const bool tty = isatty(STDERR_FILENO) != 0;
  std::mutex mu;
  const auto t0 = std::chrono::steady_clock::now();
  if (tty) {
    options.progress = [&](std::size_t done, std::size_t total) {
      std::lock_guard<std::mutex> lock(mu);
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double eta = done == 0 ? 0 : elapsed / static_cast<double>(done) * static_cast<double>(total - done);
      std::fprintf(stderr, "\r\033[Kruns %zu / %zu done, ETA %.0f s", done, total, eta);
      std::fflush(stderr);
    };
  }
  const planner::SweepResult result = planner::run_sweep(spec, options);
  if (tty) std::fputs("\r\033[K", stderr);
  const results::Table table = planner::sweep_table(result);

  // Human table: variables, seed, status and the headline KPIs.
  std::size_t failed = 0, cancelled = 0;
  std::printf("%-4s", "run");
  for (const auto& v : spec.variables) std::printf("  %-16s", v.path.substr(v.path.rfind('.') + 1).c_str());
  std::printf("  %6s  %-9s  %12s  %12s  %12s  %7s\n", "seed", "status", "wait mean", "wait p95", "JCT mean",
              "GPU util");
  for (std::size_t i : result.selected) {
    const auto& p = result.points[i];
    const auto& r = result.results[i];
    std::printf("%-4zu", i);
    for (std::size_t v = 0; v < spec.variables.size(); ++v)
      std::printf("  %-16s", spec.variables[v].values[p.choice[v]].c_str());
    const char* status = r.status == planner::RunStatus::Done     ? "done"
                         : r.status == planner::RunStatus::Failed ? "failed"
                                                                  : "cancelled";
    failed += r.status == planner::RunStatus::Failed;
    cancelled += r.status == planner::RunStatus::Cancelled;
    // Waits counting jobs that never started are lower bounds.
    const std::string lower = r.summary.never_started > 0 ? ">=" : "";
    if (r.status == planner::RunStatus::Done)
      std::printf("  %6llu  %-9s  %12s  %12s  %12s  %7s\n", static_cast<unsigned long long>(p.seed), status,
                  (lower + results::duration(r.summary.wait.mean)).c_str(),
                  (lower + results::duration(r.summary.wait.p95)).c_str(),
                  results::duration(r.summary.jct.mean).c_str(), results::percent(r.summary.gpu_utilization).c_str());
    else
      std::printf("  %6llu  %-9s  %s\n", static_cast<unsigned long long>(p.seed), status, r.error.c_str());
  }
  if (!output.empty()) results::write_table_hdf5(table, output, "runs");
  write_csv(table, csv);
  if (result.shard_count > 1) std::printf("shard %zu/%zu: ", result.shard_index, result.shard_count);
  std::printf("%s runs: %s done, %zu failed, %zu cancelled\n", results::thousands(std::ssize(result.selected)).c_str(),
              results::thousands(static_cast<std::int64_t>(result.selected.size() - failed - cancelled)).c_str(),
              failed, cancelled);
  if (stop != nullptr && stop->load()) {
    std::fprintf(stderr, "interrupted: the finished runs were kept\n");
    return 130;
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace headroom::app
