#include "apps/fgd_cmd.hpp"

#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>

#include "apps/output_check.hpp"
#include "planner/fgd_experiment.hpp"
#include "sim/errors.hpp"

namespace headroom::app {

namespace {

constexpr int kExitCheckFailed = 3;

std::vector<policies::fgd::Policy> parse_policies(const std::string& text) {
  std::vector<policies::fgd::Policy> out;
  if (text == "all") return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto p = policies::fgd::parse_policy(name);
    if (!p)
      throw sim::InputError("", 0, 0, "--policy",
                            "unknown policy \"" + name +
                                "\"; expected all or a list of Random, DotProd, "
                                "GpuClustering, GpuPacking, BestFit, FGD");
    out.push_back(*p);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int> parse_ratios(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int v = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0 || v > 1000)
      throw sim::InputError("", 0, 0, "--ratios", "expected a list of integer percentages, got \"" + text + "\"");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

CLI::App* add_fgd_command(CLI::App& app, FgdArgs& a) {
  auto* fgd = app.add_subcommand("fgd",
                                 "GPU-sharing placement experiment of the FGD paper (ATC'23): Random, DotProd, "
                                 "GpuClustering, GpuPacking, BestFit, FGD on an openb node and pod list");
  fgd->add_option("--nodes", a.nodes, "node list CSV (sn,cpu_milli,memory_mib,gpu,model)")->required();
  fgd->add_option("--pods", a.pods, "pod list CSV (openb layout)")->required();
  fgd->add_option("--policy", a.policy, "comma-separated policies, or all (default)");
  fgd->add_option("--seeds", a.seeds, "seeds per policy (default 10)")->check(CLI::Range(1, 100000));
  fgd->add_option("--seed", a.seed, "first seed (default 42)");
  fgd->add_option("--ratios", a.ratios, "arrived GPU demand, % of the GPUs, to report (default 100,110,120,130)");
  fgd->add_option("--tune", a.tune, "GPU demand sampled to this x the cluster's GPUs (default 1.3)")
      ->check(CLI::Range(0.0, 100.0));
  fgd->add_option("--popularity", a.popularity, "target workload: pod shapes covering this % of pods (default 95)")
      ->check(CLI::Range(1, 100));
  fgd->add_option("--reference", a.reference, "reference results (analysis_allo_discrete.csv) to compare with");
  fgd->add_option("--workload", a.workload, "workload name in the reference (default openb_pod_list_default)");
  fgd->add_option("--tolerance", a.tolerance, "allowed |ours - reference| in points (default 0.5)");
  fgd->add_flag("--check", a.check, "exit 3 unless within --tolerance and in the reference's order");
  fgd->add_option("--csv", a.csv, "write every run (policy,seed,pods,failed,alloc at each ratio) to this CSV")
      ->check(check_output_name);
  return fgd;
}

int cmd_fgd(const FgdArgs& a) {
  planner::fgd::ExperimentOptions o;
  o.policies = parse_policies(a.policy);
  o.ratios = parse_ratios(a.ratios);
  o.seeds = a.seeds;
  o.first_seed = a.seed;
  o.tune_ratio = a.tune;
  o.popularity_pct = a.popularity;
  if (!a.csv.empty())
    check_outputs({{"--csv", a.csv}}, {{"node list", a.nodes}, {"pod list", a.pods}, {"reference", a.reference}});
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  const auto input = planner::fgd::load_openb(a.nodes, a.pods);
  std::optional<planner::fgd::ReferenceTable> ref;
  if (!a.reference.empty()) ref = planner::fgd::load_reference(a.reference, a.workload, o.ratios);
  const auto t1 = std::chrono::steady_clock::now();
  const auto runs = planner::fgd::run_experiment(input, o);
  const auto t2 = std::chrono::steady_clock::now();
  const double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::int64_t pods = 0, failed = 0;
  for (const auto& r : runs) {
    pods += r.pods;
    failed += r.failed;
  }
  std::cout << "cluster: " << input.cluster.nodes.size() << " nodes, " << input.cluster.total_gpus()
            << " GPUs; trace: " << input.pods.size() << " pods, sampled to " << a.tune * 100
            << "% of the GPUs per seed (" << (runs.empty() ? 0 : pods / static_cast<std::int64_t>(runs.size()))
            << " pods per run on average); seeds " << o.first_seed << ".." << o.first_seed + o.seeds - 1 << "\n";
  const auto cmp = planner::fgd::print_table(std::cout, runs, o, ref ? &*ref : nullptr, a.tolerance);
  const double load_s = std::chrono::duration<double>(t1 - t0).count();
  const double run_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("runs: %zu, pods placed or failed: %lld (failed %lld)\n", runs.size(), static_cast<long long>(pods),
              static_cast<long long>(failed));
  std::printf("wall time: load %.2f s, %zu runs %.2f s on %d threads (CPU time %.2f s)\n", load_s, runs.size(), run_s,
              static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)), cpu_s);
  if (!a.csv.empty()) {
    std::ofstream out(a.csv);
    if (!out) throw sim::InputError(a.csv, 0, 0, "", "cannot write the CSV");
    out << "policy,seed,pods,failed,final_frag_pct";
    for (const int r : o.ratios) out << ",alloc_" << r;
    out << '\n';
    for (const auto& r : runs) {
      out << policies::fgd::to_string(r.policy) << ',' << r.seed << ',' << r.pods << ',' << r.failed << ','
          << r.final_frag_pct;
      for (const double v : r.alloc) out << ',' << v;
      out << '\n';
    }
  }
  if (ref) {
    std::printf("check: max |ours - reference| %.2f points (tolerance %.2f): %s; order: %s\n", cmp.max_abs_diff,
                a.tolerance, cmp.within_tolerance ? "within" : "NOT within", cmp.same_order ? "same" : "DIFFERENT");
    if (a.check && !(cmp.within_tolerance && cmp.same_order)) return kExitCheckFailed;
  }
  return 0;
}

}  // namespace headroom::app
