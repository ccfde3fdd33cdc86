// libFuzzer target: one foreign trace importer, its format fixed at build time by
// HEADROOM_FUZZ_FORMAT (fuzz/CMakeLists.txt builds one target per format: fuzz_openb, fuzz_dlrm,
// fuzz_helios, fuzz_sacct, fuzz_kubernetes, fuzz_acme, fuzz_pai, fuzz_philly). Auto-detection
// (fuzz_trace) reaches every importer too, but only with inputs that look like that format;
// these go straight to the parser.
#include "fuzz/entry_points.hpp"

#ifndef HEADROOM_FUZZ_FORMAT
#error "define HEADROOM_FUZZ_FORMAT to a headroom::traces::Format enumerator, e.g. Philly"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::import_trace_bytes(data, size, headroom::traces::Format::HEADROOM_FUZZ_FORMAT);
  return 0;
}
