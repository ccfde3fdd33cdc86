// libFuzzer target: the CSV trace importer (plain or gzip input).
#include "fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::import_trace_bytes(data, size, headroom::traces::Format::Csv);
  return 0;
}
