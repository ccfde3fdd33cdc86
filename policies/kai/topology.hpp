#pragma once

// KAI-Scheduler topology-aware scheduling (pkg/scheduler/plugins/topology, docs/topology/README.md
// in NVIDIA/KAI-Scheduler) over cluster.topology: the Topology CRD's levels are the switch levels
// of cluster.topology (1 = leaf), with the whole cluster as the root domain above the highest.
// A PodGroup's topologyConstraint {requiredTopologyLevel, preferredTopologyLevel} is given to the
// jobs of `kinds` (headroom jobs carry no annotations).
//
// Rules modelled (job_filtering.go subSetNodesFn, topology_utils.go):
//  - Relevant levels: from the preferred level (else the required one) up to the required level
//    (else up to the root, the whole cluster, included).
//  - A domain holds the job when the pods fit its free resources (idle + releasing): with pods of
//    one shape, the sum over its nodes of how many pods of the largest shape each node holds is at
//    least the pod count (representor pods); with a pod larger than a node, the requested GPUs
//    (and cpu, memory) are at most the domain's free ones.
//  - The tree is sorted for bin-packing: each domain's children by the job's ratio to their free
//    resources (max over GPU, cpu, memory of request / free; 1000 where a requested resource is
//    absent), highest first (the fullest), then by switch id (KAI: domain id). Domains are tried
//    in reverse level order of that tree (the lowest level first; inside a level in the sorted
//    breadth-first order), the first one in which all pods are placed wins.
//  - A PodGroup with running pods and a required level is kept inside the required-level domains
//    that hold them (getRelevantDomainsWithAllocatedPods).
//  - No domain: the group stays pending (required), or (preferred only) the root is the last
//    domain tried, i.e. anywhere.
// Not modelled: the preferred-level node scores inside the chosen domain (calculateNodeScores; the
// nodeplacement binpack / spread order is kept), sub-group constraints, and several Topology
// CRDs (one topology: the cluster's).

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "models/topology.hpp"

namespace headroom::policies::kai {

struct TopologyConstraint {
  std::int32_t required = 0;           // requiredTopologyLevel as a switch level; 0 = none
  std::int32_t preferred = 0;          // preferredTopologyLevel; 0 = none
  std::vector<models::JobKind> kinds;  // the job kinds given the constraint; empty = every kind
  bool active() const { return required > 0 || preferred > 0; }
  bool applies_to(models::JobKind kind) const;
};

// Free (idle + releasing) gpus, cpus, memory of a node; zero for a node that is down.
using NodeFree = std::array<std::int64_t, 3>;

// The domains (switches; kNoSwitch = the whole cluster) in which the plugin tries a PodGroup, in
// order; empty when no relevant domain holds it. `pods` are the pods' requests (gpus, cpus,
// memory), `multi_node` whether one of them is larger than a node, `held` the nodes of its
// running pods.
std::vector<models::SwitchId> topology_domains(const models::Topology& topology, const TopologyConstraint& c,
                                               std::span<const NodeFree> free, std::span<const NodeFree> pods,
                                               bool multi_node, std::span<const models::NodeId> held);

// One flag per node (mask.size() nodes): whether the node is in `domain`.
void domain_mask(const models::Topology& topology, models::SwitchId domain, std::vector<char>& mask);

// A pod larger than a node inside a domain: the given (node, free GPUs) candidates with the most
// free GPUs first, lowest id among equals, until `gpus` are taken; nothing when they fall short.
std::optional<models::Placement> fill_most_free(std::vector<std::pair<std::int64_t, models::NodeId>> candidates,
                                                std::int64_t gpus);

}  // namespace headroom::policies::kai
