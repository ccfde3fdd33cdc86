#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "models/workload.hpp"

namespace headroom::policies {

// The `consolidate` placement of the Helios simulator (HeliosArtifact, framework/QSSF Service,
// policies/placer/consolidate.py), generalised from 8-GPU nodes to each pool's node size G:
//  - a job of at most G GPUs goes to the node with the fewest free GPUs that still fit it
//    (best fit; ties: lowest node id);
//  - a job of k*G GPUs takes the k lowest-id fully free nodes;
//  - a job of k*G + r GPUs (0 < r < G) takes k fully free nodes, and its remaining r GPUs go to
//    the next node in descending-free order: another fully free node if there is one, else the
//    node with the most free GPUs (ties: lowest id), which must have at least r free.
// Multi-node jobs stay within one pool (the first, in scenario order, where they fit). Only GPUs
// are placed, as in Helios. A job asking for 0 GPUs goes to the fullest node that still has a free
// GPU (Helios's behaviour for such jobs).
std::optional<models::Placement> consolidate_placement(const models::ClusterState& cluster, const models::Job& job,
                                                       const models::Workload& workload);

// The same rules inside one pool only: best fit on one node (fewest free GPUs that fit, then
// lowest id), else the multi-node rule above. For policies that choose the GPU type themselves.
std::optional<models::Placement> consolidate_in_pool(const models::ClusterState& cluster, models::PoolId pool,
                                                     std::int32_t gpus);

// True if the pool's GPU type satisfies the job's GPU-type constraint and the pool is one of its
// node set's (Job::node_set: workload.node_selectors).
bool pool_eligible(const models::ClusterState& cluster, models::PoolId pool, const models::Job& job,
                   const models::Workload& workload);

// pool_eligible's answers, worked out once per (GPU type, node set, pool): a policy's node scans
// ask it of every node, thousands a pod on CEA Curie with its partitions' pools (string
// compares). One per policy instance: its cluster's pools and workload do not change.
class PoolEligibility {
 public:
  bool operator()(const models::ClusterState& cluster, models::PoolId pool, const models::Job& job,
                  const models::Workload& workload) const {
    if (job.gpu_type == 0 && job.node_set == 0) return true;
    const std::size_t key = (static_cast<std::size_t>(job.gpu_type) * 256 + job.node_set) * cluster.pool_count() + pool;
    if (key >= known_.size()) known_.resize(key + 1, -1);
    if (known_[key] < 0) known_[key] = pool_eligible(cluster, pool, job, workload) ? 1 : 0;
    return known_[key] != 0;
  }

 private:
  mutable std::vector<std::int8_t> known_;  // -1: not asked yet
};

// Whether the job could ever be placed on the empty cluster; if not, why.
std::optional<std::string> never_fits(const models::ClusterState& cluster, const models::Job& job,
                                      const models::Workload& workload);

}  // namespace headroom::policies
