#include "apps/infer_cmd.hpp"

#include <iostream>

#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "traces/import.hpp"
#include "traces/infer.hpp"

namespace headroom::app {

int cmd_trace_infer(const std::string& input, const std::string& window, const std::string& format) {
  const auto span = sim::parse_duration(window);
  if (!span || *span <= 0)
    throw sim::InputError("", 0, 0, "--window",
                          "expected a positive duration such as 1d or 6h, got \"" + window + "\"");
  const bool scenario = input.ends_with(".yaml") || input.ends_with(".yml");
  models::Workload w;
  std::string trace = input;
  std::int64_t units = 1;
  if (scenario) {
    const auto sc = scenarios::load_scenario(input);
    w = scenarios::build_workload(sc);
    trace = sc.workload.trace;
    units = sc.workload.units_per_gpu;
  } else {
    traces::ImportOptions options;
    const auto f = traces::parse_format(format);
    if (!f) throw sim::InputError("", 0, 0, "--format", "unknown trace format \"" + format + "\"");
    options.format = *f;
    w = traces::import_trace(input, options);
  }
  const bool swf = w.meta.format == "swf";
  traces::print_inference(std::cout, traces::infer_system(w, *span, units, swf ? trace : std::string()));
  return 0;
}

}  // namespace headroom::app
