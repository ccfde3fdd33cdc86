// libFuzzer target: a results file's contents as its readers take them (fuzz/results_input.hpp).
#include "fuzz/results_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::read_results_bytes(data, size);
  return 0;
}
