#pragma once

// The Kubernetes manifests a site applies (what `kubectl apply -f` takes, or `kubectl get ... -o
// yaml` prints: several documents, or a `kind: List`) turned into a policy's parameters, for the
// systems that have such objects (SystemModule::read_manifests: kueue, volcano, kai and
// kubernetes, each in its folder's manifests.cpp). See docs/importing.md.

#include <string>
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

}  // namespace headroom::policies
