#include "apps/policies_cmd.hpp"

#include <cstdio>
#include <string>

#include "policies/system_module.hpp"

namespace headroom::app {

int cmd_policies(bool names, bool params) {
  for (const auto& system : policies::system_modules()) {
    const auto& info = system.info;
    if (names) {
      std::printf("%s\n", info.name.c_str());
      continue;
    }
    std::printf("%-11s %s\n", info.name.c_str(), info.summary.c_str());
    std::string reads;
    if (system.read_manifests != nullptr) reads += "manifests";
    for (const auto& file : system.site_files) reads += (reads.empty() ? "" : ", ") + std::string(file.key);
    if (!reads.empty()) std::printf("%-11s reads: %s\n", "", reads.c_str());
    if (system.cluster_file != nullptr)
      std::printf("%-11s cluster from: cluster.%s\n", "", std::string(system.cluster_file->key).c_str());
    if (params && !info.params.empty()) {
      std::printf("%-11s parameters:\n", "");
      for (const auto& key : info.params) std::printf("%-13s %s\n", "", key.c_str());
    }
  }
  return 0;
}

}  // namespace headroom::app
