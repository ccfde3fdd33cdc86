// libFuzzer target: one reader of an admin's own files (issue #31), its entry point
// (fuzz/entry_points.hpp) fixed at build time by HEADROOM_FUZZ_SITE (fuzz/CMakeLists.txt builds
// one target per reader: fuzz_slurm_conf, fuzz_gres_conf, fuzz_sacctmgr_qos, fuzz_sshare,
// fuzz_manifests, fuzz_kubernetes_yaml). Only sim::InputError (and InputErrors) may leave it.
#include "fuzz/entry_points.hpp"

#ifndef HEADROOM_FUZZ_SITE
#error "define HEADROOM_FUZZ_SITE to an entry point of fuzz/entry_points.hpp, e.g. read_sshare_bytes"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  headroom::fuzz::HEADROOM_FUZZ_SITE(data, size);
  return 0;
}
