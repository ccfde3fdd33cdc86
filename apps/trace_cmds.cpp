#include "apps/trace_cmds.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/errors.hpp"
#include "sim/suggest.hpp"
#include "traces/import.hpp"
#include "traces/stats.hpp"

namespace headroom::app {

int cmd_trace_stats(const std::string& path, const std::string& format) {
  traces::ImportOptions options;
  const auto f = traces::parse_format(format);
  if (!f) {
    std::string msg = "unknown trace format \"" + format + "\"; expected one of";
    for (const auto& n : traces::format_names()) msg += " " + n;
    if (auto m = sim::closest_match(format, traces::format_names())) msg += "; did you mean \"" + *m + "\"?";
    throw sim::InputError("", 0, 0, "--format", msg);
  }
  options.format = *f;
  options.keep_cpu_only = true;
  const auto w = traces::import_trace(path, options);
  traces::print_stats(std::cout, traces::compute_stats(w));
  for (const auto& warning : w.meta.warnings) std::cerr << "warning: " << path << ": " << warning << '\n';
  return 0;
}

int cmd_import_cluster(const std::string& path, const std::string& output) {
  const auto imported = traces::import_cluster(path);
  const std::string yaml = traces::cluster_yaml(imported, std::filesystem::path(path).filename().string());
  if (output.empty()) {
    std::cout << yaml;
    return 0;
  }
  const auto dir = std::filesystem::absolute(output).parent_path();
  if (!std::filesystem::is_directory(dir)) throw sim::InputError(output, 0, 0, "", "output directory does not exist");
  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << yaml;
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
  std::cerr << "wrote " << output << ": " << imported.cluster.pools.size() << " pools, "
            << imported.cluster.total_nodes() << " nodes, " << imported.cluster.total_gpus() << " GPUs\n";
  return 0;
}

}  // namespace headroom::app
