#pragma once

// The Kubernetes manifests a site applies (what `kubectl apply -f` takes, or `kubectl get ... -o
// yaml` prints: several documents, or a `kind: List`) turned into a policy's parameters, for the
// policies that have such objects: kueue (policies/kueue/manifests.cpp), volcano
// (volcano_manifests.cpp), kai (kai_manifests.cpp) and kubernetes (kubernetes_manifests.cpp).
// See docs/importing.md.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "policies/api.hpp"

namespace headroom::policies {

struct ManifestImport {
  PolicyParams params;                // located at the manifest's lines
  std::vector<std::string> warnings;  // "queues.yaml:12: ...", once per kind of thing not modelled
};

// `labels[i]` are the labels of cluster.pools[i] (scenario `labels:` of each pool).
using PoolLabels = std::vector<std::vector<std::pair<std::string, std::string>>>;

// Whether `policy` reads manifests (a `manifests:` key under it).
bool reads_manifests(std::string_view policy);

// Every object of every file, as that policy's parameters. Throws sim::InputError naming
// file:line:column for malformed YAML or a field of the wrong shape.
ManifestImport read_manifests(std::string_view policy, const std::vector<std::string>& paths,
                              const models::ClusterSpec& cluster, const PoolLabels& labels);

}  // namespace headroom::policies
