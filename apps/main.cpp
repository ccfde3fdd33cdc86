// The `headroom` command line: parses arguments and calls the libraries.
#include <tbb/global_control.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "apps/pipeline.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop.store(true); }

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInterrupted = 130;

void progress_bar(std::size_t done, std::size_t total) {
  constexpr int kWidth = 40;
  const double f = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(f * kWidth);
  std::fprintf(stderr, "\r[%.*s%*s] %5.1f%%  %zu / %zu jobs done", filled,
               "========================================", kWidth - filled, "", 100.0 * f, done, total);
  std::fflush(stderr);
}

int cmd_validate(const std::string& path) {
  const auto sc = headroom::scenarios::load_scenario(path);
  std::cout << path << ": ok (scenario \"" << sc.name << "\", policy " << sc.policy.name << ", "
            << sc.cluster.total_nodes() << " nodes, " << sc.cluster.total_gpus() << " GPUs)\n";
  return kExitOk;
}

int cmd_run(const std::string& path, const std::string& output, bool json, std::optional<std::uint64_t> seed) {
  const auto sc = headroom::scenarios::load_scenario(path);
  if (!output.empty()) {
    const auto dir = std::filesystem::absolute(output).parent_path();
    if (!std::filesystem::is_directory(dir))
      throw headroom::sim::InputError(output, 0, 0, "", "output directory does not exist");
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  headroom::app::RunOptions options;
  options.seed = seed;
  options.stop = &g_stop;
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) options.progress = progress_bar;
  auto outcome = headroom::app::run_scenario(sc, options);
  if (tty) std::fputs("\r\033[K", stderr);
  if (outcome.cancelled) {
    std::cerr << "interrupted: no output written\n";
    return kExitInterrupted;
  }
  if (!output.empty()) headroom::results::write_hdf5(outcome.result, output);
  const auto summary = headroom::results::summarize(outcome.result);
  if (json) {
    headroom::results::print_summary_json(std::cout, summary);
  } else {
    headroom::results::print_summary(std::cout, summary);
    std::fprintf(stdout, "time: import %.2f s, simulate %.2f s%s%s\n", outcome.import_seconds, outcome.simulate_seconds,
                 output.empty() ? "" : ", results in ", output.c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"headroom: a discrete-event simulator and capacity planner for GPU clusters"};
  app.set_version_flag("--version", headroom::app::version_string());
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "worker threads for parallel parts (default: all cores)")
      ->check(CLI::NonNegativeNumber);

  std::string scenario_path, output;
  bool json = false;
  std::optional<std::uint64_t> seed;
  auto* run = app.add_subcommand("run", "replay a scenario and print its summary");
  run->add_option("scenario", scenario_path, "scenario YAML file")->required();
  run->add_option("-o,--output", output, "write the results to this HDF5 file");
  run->add_flag("--json", json, "print the summary as JSON");
  run->add_option("--seed", seed, "override the scenario's seed");
  run->add_option("--threads", threads, "worker threads for parallel parts (default: all cores)")
      ->check(CLI::NonNegativeNumber);

  auto* validate = app.add_subcommand("validate", "check a scenario file and report every problem");
  validate->add_option("scenario", scenario_path, "scenario YAML file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);

  try {
    if (*run) return cmd_run(scenario_path, output, json, seed);
    if (*validate) return cmd_validate(scenario_path);
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
