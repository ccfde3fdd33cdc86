#include "apps/report_cmd.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "apps/output_check.hpp"
#include "results/report.hpp"
#include "sim/errors.hpp"

namespace headroom::app {

int cmd_report(const std::vector<std::string>& inputs, const std::string& output) {
  std::vector<CommandInput> in;
  for (const auto& path : inputs) in.push_back({"result", path});
  check_outputs({{"-o", output}}, in);
  std::vector<results::ReportInput> loaded;
  for (const auto& in : inputs) loaded.push_back(results::load_report_input(in));
  const std::string html = results::render_report(loaded);
  const std::string tmp = output + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << html;
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw sim::InputError(output, 0, 0, "", "cannot write the report");
    }
  }
  std::filesystem::rename(tmp, output);
  std::printf("report of %zu file%s written to %s (%zu KiB)\n", inputs.size(), inputs.size() == 1 ? "" : "s",
              output.c_str(), (html.size() + 1023) / 1024);
  return 0;
}

}  // namespace headroom::app
