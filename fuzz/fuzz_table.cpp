// libFuzzer target: a sweep table's contents as `report` and `merge` take them
// (fuzz/table_input.hpp).
#include "fuzz/table_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::read_table_bytes(data, size);
  return 0;
}
