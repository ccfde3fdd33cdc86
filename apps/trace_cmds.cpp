#include "apps/trace_cmds.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/output_check.hpp"
#include "sim/errors.hpp"
#include "sim/suggest.hpp"
#include "traces/import.hpp"
#include "traces/stats.hpp"
#include "traces/synthetic.hpp"

namespace headroom::app {

sim::Tick assume_runtime_option(const std::string& text) {
  if (text.empty()) return -1;
  const auto d = sim::parse_duration(text);
  if (!d || *d <= 0)
    throw sim::InputError("", 0, 0, "--assume-runtime",
                          "expected a duration above zero (\"1h\", \"90m\", seconds), got \"" + text + "\"");
  return *d;
}

int cmd_trace_stats(const std::string& path, const std::string& format, bool skip_bad_rows, const std::string& fields,
                    const std::string& assume_runtime) {
  traces::ImportOptions options;
  options.assume_runtime = assume_runtime_option(assume_runtime);
  const auto f = traces::parse_format(format);
  if (!f) {
    std::string msg = "unknown trace format \"" + format + "\"; expected one of";
    for (const auto& n : traces::format_names()) msg += " " + n;
    if (auto m = sim::closest_match(format, traces::format_names())) msg += "; did you mean \"" + *m + "\"?";
    throw sim::InputError("", 0, 0, "--format", msg);
  }
  options.format = *f;
  options.keep_cpu_only = true;
  options.skip_bad_rows = skip_bad_rows;
  options.fields = traces::split_fields(fields);
  if (const auto why = traces::check_sacct_fields(options.fields)) throw sim::InputError("", 0, 0, "--fields", *why);
  const auto w = traces::import_trace(path, options);
  traces::print_stats(std::cout, traces::compute_stats(w));
  if (skip_bad_rows) std::cout << "bad rows: " << w.meta.bad_rows << " skipped\n";
  for (const auto& warning : w.meta.warnings) std::cerr << "warning: " << path << ": " << warning << '\n';
  return 0;
}

namespace {

// Writes `text` to `output` under a temporary name, then renames it.
void write_atomically(const std::string& output, const std::string& text) {
  const auto dir = std::filesystem::absolute(output).parent_path();
  if (!std::filesystem::is_directory(dir)) throw sim::InputError(output, 0, 0, "", "output directory does not exist");
  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw sim::InputError(output, 0, 0, "", "cannot write the output file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, output, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw sim::InputError(output, 0, 0, "", "cannot write the output file: " + ec.message());
  }
}

sim::Tick duration_option(const std::string& option, const std::string& text) {
  const auto d = sim::parse_duration(text);
  if (!d || *d <= 0)
    throw sim::InputError("", 0, 0, option,
                          "expected a positive duration such as 600s, 2h or 7d, got \"" + text + "\"");
  return *d;
}

}  // namespace

int cmd_import_cluster(const std::string& path, const std::string& output) {
  if (!output.empty()) check_outputs({{"-o", output}}, {{"node list", path}});
  const auto imported = traces::import_cluster(path);
  const std::string yaml = traces::cluster_yaml(imported, std::filesystem::path(path).filename().string());
  if (output.empty()) {
    std::cout << yaml;
    return 0;
  }
  write_atomically(output, yaml);
  std::cerr << "wrote " << output << ": " << imported.cluster.pools.size() << " pools, "
            << imported.cluster.total_nodes() << " nodes, " << imported.cluster.total_gpus() << " GPUs\n";
  return 0;
}

CLI::App* add_synth_command(CLI::App& app, SynthArgs& a) {
  auto* synth = app.add_subcommand("synth",
                                   "write a seeded synthetic trace (Poisson arrivals, lognormal run times, a GPU mix, "
                                   "tenants) in headroom's CSV");
  synth->add_option("--jobs", a.jobs, "number of jobs");
  synth->add_option("--span", a.span, "arrival window, e.g. 7d (default 7d; with --load: --jobs or --span)");
  synth->add_option("--seed", a.seed, "random seed (default 1)")->check(CLI::NonNegativeNumber);
  synth->add_option("--tenants", a.tenants, "number of tenants (default 8)");
  synth->add_option("--tenant-dist", a.tenant_dist, "zipf (tenant k has weight 1/k, default) or uniform");
  synth->add_option("--gpu-mix", a.gpu_mix, "GPUS:WEIGHT list (default \"1:.7,2:.1,4:.08,8:.08,16:.03,32:.01\")");
  synth->add_option("--runtime-median", a.runtime_median, "median run time (default 600s)");
  synth->add_option("--runtime-sigma", a.runtime_sigma, "sigma of ln(run time) (default 2.0)");
  synth->add_option("--load", a.load, "target offered load, e.g. 0.9 (with --cluster-gpus)");
  synth->add_option("--cluster-gpus", a.cluster_gpus, "GPUs of the cluster the load refers to");
  synth->add_option("-o,--output", a.output, "write the CSV to this file instead of stdout")->check(check_output_name);
  return synth;
}

int cmd_synth(const SynthArgs& a) {
  traces::SynthOptions o;
  o.jobs = a.jobs;
  if (!a.span.empty()) o.span = duration_option("--span", a.span);
  o.seed = a.seed;
  o.tenants = a.tenants;
  if (a.tenant_dist == "zipf") {
    o.tenant_dist = traces::TenantDist::Zipf;
  } else if (a.tenant_dist == "uniform") {
    o.tenant_dist = traces::TenantDist::Uniform;
  } else {
    throw sim::InputError("", 0, 0, "--tenant-dist", "expected zipf or uniform, got \"" + a.tenant_dist + "\"");
  }
  if (!a.gpu_mix.empty()) o.gpu_mix = traces::parse_gpu_mix(a.gpu_mix);
  o.runtime_median = duration_option("--runtime-median", a.runtime_median);
  o.runtime_sigma = a.runtime_sigma;
  o.load = a.load;
  o.cluster_gpus = a.cluster_gpus;
  if (!a.output.empty()) check_outputs({{"-o", a.output}}, {});
  const auto w = traces::synthesize(o);
  std::ostringstream csv;
  traces::write_native_csv(csv, w);
  if (a.output.empty()) {
    std::cout << csv.str();
    return 0;
  }
  write_atomically(a.output, csv.str());
  std::cerr << "wrote " << a.output << ": " << w.jobs.size() << " jobs\n";
  return 0;
}

}  // namespace headroom::app
