// The `headroom` command line: parses arguments and calls the libraries.
#include <tbb/global_control.h>
#include <tbb/task_group.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#include <sys/mman.h>
#endif

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "apps/calibrate_cmd.hpp"
#include "apps/compare_cmd.hpp"
#include "apps/fgd_cmd.hpp"
#include "apps/infer_cmd.hpp"
#include "apps/output_check.hpp"
#include "apps/progress_line.hpp"
#include "planner/scorecard.hpp"
#include "planner/sweep.hpp"
#ifdef HEADROOM_MPI
#include "apps/mpi_sweep.hpp"
#endif
#include "apps/pipeline.hpp"
#include "apps/plan_cmd.hpp"
#include "apps/policies_cmd.hpp"
#include "apps/report_cmd.hpp"
#include "apps/sweep_cmd.hpp"
#include "apps/trace_cmds.hpp"
#include "results/fairness.hpp"
#include "results/fidelity.hpp"
#include "results/format.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInterrupted = 130;

// SIGINT and SIGTERM, handled from the start of every command: until a command has something to
// keep (a run under way, finished runs, a result file being written), nothing has been written,
// so the process ends at once. From then on (g_defer) a signal only sets the stop flag: a trace
// or pod list being imported stops at its next chunk or node (sim::Interrupted, reported as
// below), the simulation at its next event, and a result file being written (under a temporary
// name, then renamed) is finished before the process exits.
std::atomic<bool>& g_stop = headroom::sim::stop_requested();
std::atomic<bool> g_defer{false};

extern "C" void on_signal(int) {
  g_stop.store(true);
  if (g_defer.load()) return;
  static constexpr char kMessage[] = "interrupted: no output written\n";
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(kExitInterrupted);
}

void install_signal_handlers() {
  // A signal ignored by whoever started us (a shell's background job ignores SIGINT) stays ignored.
  for (const int sig : {SIGINT, SIGTERM})
    if (std::signal(sig, on_signal) == SIG_IGN) std::signal(sig, SIG_IGN);
}

// "run: [=====     ] 42.0%  5,715 / 13,607 jobs ended, ETA 0:35, simulated 6d 02h": the
// simulated clock (since the first submission) moves while no job ends.
std::string run_progress(std::size_t done, std::size_t total, std::chrono::steady_clock::time_point begun,
                         headroom::sim::Tick simulated) {
  if (total == 0) return "run: importing and starting";
  constexpr int kWidth = 30;
  const double f = static_cast<double>(std::min(done, total)) / static_cast<double>(total);
  const int filled = static_cast<int>(f * kWidth);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  char eta[32] = "?";
  if (f > 0 && f < 1) {
    const auto s = static_cast<long long>(elapsed * (1 - f) / f + 0.5);
    std::snprintf(eta, sizeof eta, "%lld:%02lld", s / 60, s % 60);
  }
  char b[160];
  std::snprintf(b, sizeof b, "run: [%.*s%*s] %5.1f%%  %zu / %zu jobs ended, ETA %s", filled,
                "==============================", kWidth - filled, "", 100.0 * f, done, total, eta);
  std::string line = b;
  if (simulated > 0) line += ", simulated " + headroom::results::duration(headroom::sim::to_seconds(simulated));
  return line;
}

// CLI11 reads "-1" into an unsigned option as 2^64 - 1, and its range checks print the limits of
// a double; these validators (run on the text, before conversion) say what was expected instead.
std::string check_count(const std::string& text, std::uint64_t min, std::uint64_t max, const char* expected) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || end != text.data() + text.size() || ec != std::errc() || v < min || v > max)
    return std::string(expected) + ", got \"" + text + "\"";
  return {};
}
std::string check_seed(const std::string& text) {
  return check_count(text, 0, UINT64_MAX, "expected an integer in 0..18446744073709551615");
}
std::string check_threads(const std::string& text) {
  return check_count(text, 0, 65536, "expected a number of threads in 0..65536 (0 = all cores)");
}

int cmd_validate(const std::string& path) {
  const auto sc = headroom::scenarios::load_scenario(path);
  for (const auto& w : sc.warnings) std::cerr << "warning: " << w << '\n';
  headroom::planner::scenario_targets(sc, {});  // the `targets:` of the scorecard, as compare reads them
  // A sweep (`variants:`, `seeds:`): its keys, its size and every point's scenario, as `headroom
  // sweep` checks them before its first run.
  const auto spec = headroom::planner::load_sweep(sc, path);
  std::string sweep;
  if (!spec.variables.empty() || spec.seeds.size() > 1) {
    const auto points = headroom::planner::expand(spec);
    g_defer.store(true);  // from here a signal stops the points being made (sim::Interrupted)
    headroom::planner::check_points(spec, points, &g_stop);
    sweep = "sweep of " + headroom::results::thousands(static_cast<std::int64_t>(points.size())) + " runs, ";
  }
  std::cout << path << ": ok (" << sweep << "scenario \"" << sc.name << "\", policy " << sc.policy.name << ", "
            << sc.cluster.total_nodes() << " nodes, " << sc.cluster.total_gpus() << " GPUs)\n";
  return kExitOk;
}

int cmd_run(const std::string& path, const std::string& output, bool json, std::optional<std::uint64_t> seed,
            bool skip_bad_rows, const std::string& assume_runtime) {
  const headroom::sim::Tick assumed = headroom::app::assume_runtime_option(assume_runtime);
  auto sc = headroom::scenarios::load_scenario(path);
  for (const auto& w : sc.warnings) std::cerr << "warning: " << w << '\n';
  if (skip_bad_rows) sc.workload.skip_bad_rows = true;
  if (assumed > 0) sc.workload.assume_runtime = assumed;
  // Found before the run rather than when the finished result cannot be renamed onto it.
  // Every file the scenario read: its trace, site files with their Includes, manifests.
  if (!output.empty()) {
    std::vector<headroom::app::CommandInput> inputs{{"scenario", path}};
    headroom::app::add_scenario_inputs(inputs, sc);
    headroom::app::check_outputs({{"-o", output}}, inputs);
  }
  headroom::app::RunOptions options;
  options.seed = seed;
  options.stop = &g_stop;
  options.stream_chunks = !output.empty();
  // On a terminal: jobs ended and an ETA, redrawn twice a second (ProgressLine).
  std::atomic<std::size_t> ended{0}, total{0};
  std::atomic<headroom::sim::Tick> clock{0};
  const auto begun = std::chrono::steady_clock::now();
  if (isatty(STDERR_FILENO) != 0) {
    options.progress = [&](std::size_t done, std::size_t all) {
      ended.store(done);
      total.store(all);
    };
    options.clock = &clock;
  }
  headroom::app::ProgressLine line(
      [&] { return run_progress(ended.load(), total.load(), begun, clock.load(std::memory_order_relaxed)); });
  g_defer.store(true);
  auto outcome = headroom::app::run_scenario(sc, options);
  line.stop();
  for (const auto& w : outcome.trace.warnings)
    if (auto note = headroom::scenarios::run_note(w)) std::cerr << "note: " << *note << '\n';
  if (outcome.trace.bad_rows > 0) {
    std::cerr << "warning: " << sc.workload.trace << ": " << outcome.trace.bad_rows
              << " malformed row(s) skipped (skip_bad_rows); the first:\n";
    for (const auto& w : outcome.trace.warnings)
      if (w.find("(bad row skipped)") != std::string::npos) std::cerr << "  " << w << '\n';
  }
  if (outcome.cancelled || g_stop.load()) {
    std::cerr << "interrupted: no output written\n";
    return kExitInterrupted;
  }
  const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // The file is written while the summary is computed: both only read the result.
  double write_s = 0;
  tbb::task_group writing;
  if (!output.empty()) {
    writing.run([&] {
      const auto t = std::chrono::steady_clock::now();
      headroom::results::write_hdf5(outcome.result, output);
      write_s = seconds_since(t);
    });
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<headroom::results::Summary> summary;
  std::optional<headroom::results::Fairness> fairness;
  std::optional<headroom::results::Fidelity> fidelity;
  try {
    // The summary and the fairness metrics are independent: one of them on another thread
    // (run_and_wait waits for both, and then rethrows what either threw).
    tbb::task_group metrics;
    metrics.run([&] { fairness = headroom::planner::fairness_of(outcome); });
    metrics.run([&] { fidelity = headroom::results::compute_fidelity(outcome.result); });
    metrics.run_and_wait([&] { summary = headroom::results::summarize(outcome.result); });
  } catch (...) {
    writing.wait();
    throw;
  }
  const double summary_s = seconds_since(t0);
  writing.wait();  // rethrows a failed write
  if (g_stop.load()) {
    std::cerr << "interrupted after the results were complete: " << output << " written\n";
    return kExitInterrupted;
  }
  if (json) {
    std::ostringstream text;
    headroom::results::print_summary_json_with_fairness(text, *summary, *fairness);
    headroom::results::print_json_with_fidelity(std::cout, text.str(), *fidelity);
  } else {
    headroom::results::print_summary(std::cout, *summary);
    std::cout << "\n";
    headroom::results::print_fairness(std::cout, *fairness, 10);
    if (fidelity->available()) {
      std::cout << "\n";
      headroom::results::print_fidelity(std::cout, *fidelity, 10);
    }
    std::fprintf(stdout, "time: import %.2f s, simulate %.2f s, summary %.2f s", outcome.import_seconds,
                 outcome.simulate_seconds, summary_s);
    if (!output.empty()) std::fprintf(stdout, ", write %.2f s (%s)", write_s, output.c_str());
    std::fputc('\n', stdout);
  }
  return kExitOk;
}

#ifdef __GLIBC__
// Heap settings for one process that builds large tables once and keeps them (measured in
// bench/RESULTS.md, "Helios sjf end to end: huge pages, ISA-L and a faster import").
void tune_heap() {
  // Large vectors (the result tables, the event queue) grow by reallocation. By default glibc maps
  // each large block afresh and unmaps it when freed, so every growth faults in new zeroed pages;
  // keeping them in the heap lets later allocations reuse pages already touched.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // Faulting memory in 4 KiB at a time is costly on a virtual machine: 7,000 faults took about a
  // fifth of a 40k-job run. Grow the heap once by 64 MiB (address space only) and ask for
  // transparent huge pages on it, as glibc's own glibc.malloc.hugetlb=1 tunable does. Where THP is
  // off ("never") the advice is ignored and nothing else changes.
  constexpr std::size_t kPad = std::size_t{64} << 20, kHuge = std::size_t{2} << 20;
  mallopt(M_TOP_PAD, static_cast<int>(kPad));
  void* probe = std::malloc(kHuge);  // larger than the initial heap: glibc extends it by kPad more
  if (probe == nullptr) return;
  const auto first = (reinterpret_cast<std::uintptr_t>(probe) + kHuge - 1) & ~(kHuge - 1);
  const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));
  if (top > first) madvise(reinterpret_cast<void*>(first), top - first, MADV_HUGEPAGE);
  std::free(probe);
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef __GLIBC__
  tune_heap();
#endif
  CLI::App app{"headroom: a discrete-event simulator and capacity planner for GPU clusters"};
  app.set_version_flag("--version", headroom::app::version_string());
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "worker threads for parallel parts (default: all cores)")->check(check_threads);

  std::string scenario_path, output;
  bool json = false;
  std::optional<std::uint64_t> seed;
  auto* run = app.add_subcommand("run", "replay a scenario and print its summary");
  run->add_option("scenario", scenario_path, "scenario YAML file")->required();
  run->add_option("-o,--output", output, "write the results to this HDF5 file")
      ->check(headroom::app::check_output_name);
  run->add_flag("--json", json, "print the summary as JSON");
  bool skip_bad_rows = false;
  run->add_flag("--skip-bad-rows", skip_bad_rows,
                "count and report malformed trace rows instead of stopping at the first (as workload.skip_bad_rows)");
  std::string assume_runtime;
  run->add_option("--assume-runtime", assume_runtime,
                  "pod lists: queue the pods that never started (Pending) with this run time, e.g. 1h (as "
                  "workload.assume_runtime)");
  run->add_option("--seed", seed, "override the scenario's seed")->check(check_seed);
  run->add_option("--threads", threads, "worker threads for parallel parts (default: all cores)")->check(check_threads);

  auto* validate = app.add_subcommand("validate", "check a scenario file and report every problem");
  validate->add_option("scenario", scenario_path, "scenario YAML file")->required();

  bool policies_names = false, policies_params = false;
  auto* policies_cmd =
      app.add_subcommand("policies", "list the scheduling systems and baselines, what each reads and accepts");
  policies_cmd->add_flag("--names", policies_names, "only the names, one a line");
  policies_cmd->add_flag("--params", policies_params, "also every parameter key of each policy block");

  std::string trace_path, trace_format = "auto", trace_fields;
  auto* trace_stats = app.add_subcommand("trace-stats",
                                         "print a trace's job count, span, GPU-hours, run-time and queue-delay "
                                         "quantiles, tenant shares and status split");
  trace_stats->add_option("trace", trace_path, "trace file (plain or gzip)")->required();
  trace_stats->add_option("--format", trace_format, "trace format (default: auto-detect)");
  trace_stats->add_option("--fields", trace_fields,
                          "sacct: the field list of a header-less export, as given to `sacct --format` "
                          "(\"xdmod\": Open XDMoD's documented list)");
  trace_stats->add_flag("--skip-bad-rows", skip_bad_rows, "count and report malformed rows instead of stopping");
  trace_stats->add_option("--assume-runtime", assume_runtime,
                          "pod lists: count the pods that never started (Pending) with this run time, e.g. 1h");

  std::string infer_input, infer_window = "1d";
  auto* trace_infer = app.add_subcommand(
      "trace-infer",
      "what a trace says about the real system before a run: capacity in use over time, the most jobs and GPUs each "
      "user and queue ran at once, queues, the scheduler its header names; and the policy knob each maps to");
  trace_infer->add_option("input", infer_input, "scenario YAML (its workload) or trace file")->required();
  trace_infer->add_option("--window", infer_window, "capacity window (default 1d)");
  trace_infer->add_option("--format", trace_format, "trace format when INPUT is a trace (default: auto-detect)");

  std::string node_list, cluster_output;
  auto* import_cluster = app.add_subcommand(
      "import-cluster", "turn a node list (Alibaba openb, PAI machine spec) into a scenario `cluster:` block");
  import_cluster->add_option("nodes", node_list, "node list CSV (plain or gzip)")->required();
  import_cluster->add_option("-o,--output", cluster_output, "write the YAML to this file instead of stdout")
      ->check(headroom::app::check_output_name);

  headroom::app::SynthArgs synth_args;
  auto* synth = headroom::app::add_synth_command(app, synth_args);

  std::string sweep_output, sweep_csv, keep_runs;
  auto* sweep = app.add_subcommand("sweep", "run every variant x seed of a scenario in parallel and tabulate the KPIs");
  sweep->add_option("scenario", scenario_path, "scenario YAML file with `variants:` and `seeds:`")->required();
  sweep->add_option("-o,--output", sweep_output, "write the table to this HDF5 file (group /runs)")
      ->check(headroom::app::check_output_name);
  sweep->add_option("--csv", sweep_csv, "write the table to this CSV file")->check(headroom::app::check_output_name);
  sweep->add_option("--keep-runs", keep_runs, "also write each run's full results as DIR/run-<index>.h5")
      ->check(headroom::app::check_output_name);
  sweep->add_option("--threads", threads, "worker threads (default: all cores)")->check(check_threads);
  bool sweep_mpi = false;
  sweep->add_flag("--mpi", sweep_mpi, "under mpirun: rank R of N runs shard R/N, rank 0 merges and writes the table");
  std::string shard;
  sweep->add_option("--shard", shard, "run only shard I of N (0-based, round robin), e.g. 0/4; join with merge");

  std::vector<std::string> merge_inputs;
  std::string merge_output, merge_csv;
  auto* merge = app.add_subcommand("merge", "join the tables of `sweep --shard I/N` runs into the table of one run");
  merge->add_option("inputs", merge_inputs, "shard tables (HDF5 written by sweep -o)")->required();
  merge->add_option("-o,--output", merge_output, "write the merged table to this HDF5 file")
      ->check(headroom::app::check_output_name);
  merge->add_option("--csv", merge_csv, "write the merged table to this CSV file")
      ->check(headroom::app::check_output_name);

  std::string vary, range;
  std::vector<std::string> targets;
  int plan_seeds = 0;
  auto* plan =
      app.add_subcommand("plan", "find the smallest value of a key (e.g. a pool's node count) meeting targets");
  plan->add_option("scenario", scenario_path, "scenario YAML file")->required();
  plan->add_option("--vary", vary, "key path of an integer field, e.g. cluster.pools.h100.nodes")->required();
  plan->add_option("--range", range, "inclusive search range LO:HI, e.g. 8:128")->required();
  plan->add_option("--target", targets,
                   "a target such as \"p95_wait <= 1h\", \"tenant:research.mean_wait <= 30m\" or "
                   "\"kind:train.completed_fraction >= 0.95\"")
      ->required();
  plan->footer(
      "Targets: KPI OP VALUE, OP one of <=, <, >=, >. Per job kind: kind:KIND.KPI, KIND one of train, inference, "
      "interactive, batch; KPI a wait or JCT quantile (wait_p95, jct_mean, ...), completed_fraction, never_started "
      "or rejected (e.g. \"kind:interactive.wait_p95 <= 5m\"). Per tenant: tenant:NAME.KPI; per inference service: "
      "service:NAME.slo_attainment or service:NAME.request_attainment. The same syntax serves a scenario's "
      "targets: and compare --target (docs/planner.md).");
  // As `seeds: N` in a sweep file: each probe runs every seed, and a sweep keeps each run's figures.
  plan->add_option("--seeds", plan_seeds, "seeds per value, counted from the scenario's seed (default: its seeds:)")
      ->check([](const std::string& text) {
        return check_count(text, 1, 100000, "expected a number of seeds in 1..100000");
      });
  plan->add_option("--threads", threads, "worker threads (default: all cores)")->check(check_threads);

  headroom::app::FgdArgs fgd_args;
  auto* fgd = headroom::app::add_fgd_command(app, fgd_args);
  fgd->add_option("--threads", threads, "worker threads (default: all cores)")->check(check_threads);

  std::string compare_policies, compare_csv, compare_keep;
  std::vector<std::string> compare_scenarios, compare_targets;
  bool compare_json = false;
  std::optional<std::uint64_t> compare_seed;
  std::size_t compare_tenants = 10;
  auto* compare = app.add_subcommand(
      "compare", "run scenarios (the POC drills) under several policies: KPIs side by side and a scorecard");
  compare->add_option("scenarios", compare_scenarios, "scenario YAML files (per-policy blocks under `policies:`)")
      ->required();
  compare->add_option("--policies", compare_policies, "comma-separated policies (headroom policies lists them)")
      ->required();
  compare->add_option("-o,--output", compare_csv, "write the comparison as CSV (one row per metric)")
      ->check(headroom::app::check_output_name);
  compare->add_flag("--json", compare_json, "print the comparison as JSON");
  compare->add_option("--seed", compare_seed, "override the scenario's seed")->check(check_seed);
  compare->add_option("--tenants", compare_tenants, "tenant rows shown (largest by GPU-hours; default 10)");
  compare->add_option("--target", compare_targets,
                      "an acceptance target for every scenario, as in plan (e.g. \"p95_wait <= 12h\"); repeatable");
  compare
      ->add_option("--keep-runs", compare_keep,
                   "also write each run's full result as DIR/<scenario>-<policy>.h5 (DIR is created)")
      ->check(headroom::app::check_output_name);
  compare->add_option("--threads", threads, "worker threads (default: all cores)")->check(check_threads);

  std::string cal_fit, cal_test, cal_output, cal_objective = "mean", cal_scheduler = "auto";
  std::size_t cal_rows = 12;
  int cal_folds = 1, cal_inner = 3;
  std::string cal_warmup = "7d";
  auto* calibrate = app.add_subcommand(
      "calibrate", "fit the policy knobs the log supports to its recorded waits, check them on a held-out window");
  calibrate->add_option("scenario", scenario_path, "scenario YAML file (its trace must record starts)")->required();
  calibrate->add_option("--fit", cal_fit, "fit window FROM:TO of submit times, e.g. 0:7d")->required();
  calibrate->add_option("--test", cal_test, "held-out test window FROM:TO, e.g. 7d:14d")->required();
  calibrate->add_option("-o,--output", cal_output,
                        "write the calibrated scenario here (default: NAME-calibrated.yaml)");
  calibrate->add_option("--objective", cal_objective, "mean (default) or median absolute wait error, or pearson");
  calibrate->add_option("--rows", cal_rows, "candidates shown (default 12)");
  calibrate->add_option("--folds", cal_folds,
                        "fit / test pairs: the windows given, then shifted by the test window's length (default 1)");
  calibrate->add_option("--inner-folds", cal_inner,
                        "rolling-origin folds inside the fit window that a rule must win (default 3)");
  calibrate->add_option("--warmup", cal_warmup,
                        "replayed before each scored window (default 7d; earlier jobs are not replayed)");
  calibrate->add_option("--scheduler", cal_scheduler,
                        "knobs searched: auto (default: the scenario's system's own knobs when it has some, else "
                        "fifo + EASY), easy, or the name of a system with knobs of its own");
  calibrate->add_option("--threads", threads, "worker threads (default: all cores)")->check(check_threads);

  std::vector<std::string> report_inputs;
  std::string report_output;
  auto* report = app.add_subcommand("report", "write a self-contained HTML report (inline SVG plots) of results");
  report->add_option("inputs", report_inputs, "run results or sweep tables (HDF5)")->required();
  report->add_option("-o,--output", report_output, "the HTML file to write")
      ->check(headroom::app::check_output_name)
      ->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors read like the other errors: "error: ..." and exit code 2.
    app.failure_message([](const CLI::App*, const CLI::Error& err) {
      return "error: " + std::string(err.what()) + "\nRun with --help for more information.\n";
    });
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  install_signal_handlers();
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);

  try {
    if (*run) {
#ifdef __GLIBC__
      // One simulation and a few coarse parallel parts (compression, summary): worker threads
      // share the main heap and its huge pages instead of each faulting in an arena of its own.
      mallopt(M_ARENA_MAX, 1);
#endif
      return cmd_run(scenario_path, output, json, seed, skip_bad_rows, assume_runtime);
    }
    if (*validate) return cmd_validate(scenario_path);
    if (*policies_cmd) return headroom::app::cmd_policies(policies_names, policies_params);
    if (*plan) {
      g_defer.store(true);  // runs finished before a signal are kept
      return headroom::app::cmd_plan(scenario_path, vary, range, targets, plan_seeds, &g_stop);
    }
    if (*sweep) {
      g_defer.store(true);  // runs finished before a signal are kept
      if (sweep_mpi)
        return headroom::app::cmd_sweep_mpi(scenario_path, sweep_output, sweep_csv, keep_runs, shard, &g_stop);
      return headroom::app::cmd_sweep(scenario_path, sweep_output, sweep_csv, keep_runs, &g_stop, shard);
    }
    if (*compare) {
      g_defer.store(true);
      return headroom::app::cmd_compare(compare_scenarios, compare_policies, compare_csv, compare_json, compare_seed,
                                        compare_tenants, compare_targets, compare_keep, &g_stop);
    }
    if (*calibrate) {
      g_defer.store(true);
      return headroom::app::cmd_calibrate(scenario_path, cal_fit, cal_test, cal_output, cal_objective, cal_scheduler,
                                          cal_rows, {cal_folds, cal_inner, cal_warmup}, &g_stop);
    }
    if (*report) return headroom::app::cmd_report(report_inputs, report_output);
    if (*merge) return headroom::app::cmd_merge(merge_inputs, merge_output, merge_csv);
    if (*trace_stats)
      return headroom::app::cmd_trace_stats(trace_path, trace_format, skip_bad_rows, trace_fields, assume_runtime);
    if (*trace_infer) return headroom::app::cmd_trace_infer(infer_input, infer_window, trace_format);
    if (*import_cluster) return headroom::app::cmd_import_cluster(node_list, cluster_output);
    if (*synth) return headroom::app::cmd_synth(synth_args);
    if (*fgd) return headroom::app::cmd_fgd(fgd_args);
  } catch (const headroom::sim::Interrupted&) {
    // SIGINT / SIGTERM while a trace, pod list or site file was being read: nothing written yet.
    std::cerr << "interrupted: no output written\n";
    return kExitInterrupted;
  } catch (const headroom::sim::InputErrors& e) {
    for (const auto& err : e.errors()) std::cerr << "error: " << err.what() << '\n';
    return kExitBadInput;
  } catch (const headroom::sim::InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const headroom::sim::InternalError& e) {
    std::cerr << e.what() << "\nplease report this as a bug\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return kExitInternal;
  }
  return kExitInternal;
}
