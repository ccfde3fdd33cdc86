#pragma once

// The ResourceQuota and PriorityClass manifests a site applies, read into the kubernetes policy's
// parameters (SystemModule::read_manifests; policies/common/manifest_reader.hpp walks the
// documents).

#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "policies/common/manifests.hpp"

namespace headroom::policies::k8s {

// Throws sim::InputError naming file:line:column for malformed YAML or a field of the wrong shape.
ManifestImport read_manifests(const std::vector<std::string>& paths, const models::ClusterSpec& cluster,
                              const PoolLabels& labels);

// Every object, field and key the reader reads, warns about or refuses, as a Markdown table made
// from the reader's own tables (docs/importing.md; a test checks the page against it).
std::string site_keys_markdown();

}  // namespace headroom::policies::k8s
