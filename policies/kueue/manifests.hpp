#pragma once

// Kueue's own manifests (what `kubectl apply -f` takes, or `kubectl get ... -o yaml` prints: several
// documents, or a `kind: List`) turned into the kueue policy's parameters (policies/kueue/params.cpp).
// See docs/importing.md.

#include <string>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "policies/common/manifests.hpp"

namespace headroom::policies::kueue {

using ManifestImport = policies::ManifestImport;

// ResourceFlavor, ClusterQueue, LocalQueue, Cohort and Topology of kueue.x-k8s.io (any version),
// v1 Namespace (ignored). A ResourceFlavor's nodeLabels select the pools whose `labels` hold them
// all (no nodeLabels: every pool). Throws sim::InputError naming file:line:column.
// `labels[i]` are the labels of cluster.pools[i] (scenario `labels:` of each pool).
using PoolLabels = policies::PoolLabels;
ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec& cluster,
                              const PoolLabels& labels);

// Every object, field and key the reader reads, warns about or refuses, as a Markdown table made
// from the reader's own tables and the kueue policy's key table (docs/importing.md; a test checks
// the page against it).
std::string site_keys_markdown();

}  // namespace headroom::policies::kueue
