// kube-scheduler pkg/scheduler/framework/plugins/noderesources/fit.go: NodeResourcesFit's
// filter, the parts called once per cycle (the per-node checks are inline in policy.hpp; the
// NodeResourcesFit and BalancedAllocation scores are policies/common/node_scoring.cpp).

#include "policies/kubernetes/policy.hpp"

namespace headroom::policies::k8s {

// Whether the pod fits some eligible node's allocatable at all (node capacities are fixed). A
// pod that does not can neither bind nor preempt, so its cycles are cut short; the outcome is
// the same failure.
bool KubernetesPolicy::fits_somewhere(const ClusterView& view, JobIndex j, const Job& job) {
  Pod& p = pods_[j];
  if (p.fits_somewhere < 0) {
    p.fits_somewhere = 0;
    // Pool by pool: a pool the pod may not use is passed over whole (a pool's nodes are one
    // contiguous run of ids), not node by node.
    const models::ClusterState& c = view.cluster();
    for (models::PoolId pool = 0; pool < c.pool_count() && p.fits_somewhere == 0; ++pool) {
      if (!eligible(view, pool, job)) continue;
      const NodeId end = c.pool_first_node(pool) + static_cast<NodeId>(c.pool_node_count(pool));
      for (NodeId id = c.pool_first_node(pool); id < end && p.fits_somewhere == 0; ++id) {
        const models::Node& n = c.node(id);
        if (covers(n, {gpu_capacity(n, job), n.cpus, n.memory_mib}, job)) p.fits_somewhere = 1;
      }
    }
  }
  return p.fits_somewhere == 1;
}

}  // namespace headroom::policies::k8s
