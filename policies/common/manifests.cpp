// Which reader takes a policy's manifests (policies/common/manifests.hpp).
#include "policies/common/manifests.hpp"

#include "policies/kueue/manifests.hpp"
#include "policies/common/manifest_reader.hpp"

namespace headroom::policies {

bool reads_manifests(std::string_view policy) {
  return policy == "kueue" || policy == "volcano" || policy == "kai" || policy == "kubernetes";
}

ManifestImport read_manifests(std::string_view policy, const std::vector<std::string>& paths,
                              const models::ClusterSpec& cluster, const PoolLabels& labels) {
  if (policy == "kueue") return kueue::read_manifests(paths, cluster, labels);
  if (policy == "volcano") return manifests::read_volcano(paths);
  if (policy == "kai") return manifests::read_kai(paths);
  if (policy == "kubernetes") return manifests::read_kubernetes(paths);
  return {};
}

}  // namespace headroom::policies
