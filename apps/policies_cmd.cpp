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
  // Add-on variants (kubernetes+coscheduling): the system plus what a site installs on it, listed
  // after the systems; they take their system's parameters.
  for (const auto& system : policies::system_modules()) {
    for (const auto& add_on : system.add_ons) {
      const std::string name = system.info.name + "+" + std::string(add_on.name);
      if (names) {
        std::printf("%s\n", name.c_str());
        continue;
      }
      std::printf("%s\n%-11s %s\n", name.c_str(), "", std::string(add_on.summary).c_str());
      std::string sets;
      for (const auto& [key, value] : add_on.params)
        sets += (sets.empty() ? "" : ", ") + std::string(key) + ": " + std::string(value);
      std::printf("%-11s sets %s on top of %s (its parameters as %s's)\n", "", sets.c_str(), system.info.name.c_str(),
                  system.info.name.c_str());
    }
  }
  return 0;
}

}  // namespace headroom::app
