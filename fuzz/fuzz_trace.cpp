// libFuzzer target: any trace, its format detected from its first lines.
#include "fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::import_trace_bytes(data, size, headroom::traces::Format::Auto);
  return 0;
}
