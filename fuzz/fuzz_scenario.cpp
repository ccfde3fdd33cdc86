// libFuzzer target: the scenario YAML loader (parse_scenario from a string).
#include "fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::parse_scenario_bytes(data, size);
  return 0;
}
