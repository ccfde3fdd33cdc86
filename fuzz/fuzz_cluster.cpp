// libFuzzer target: a node list for `headroom import-cluster` (openb or PAI machine spec), and the
// `cluster:` block written from it read back as a scenario's (fuzz/entry_points.hpp).
#include "fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::import_cluster_bytes(data, size);
  return 0;
}
