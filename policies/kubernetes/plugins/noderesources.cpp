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
    for (NodeId id = 0; id < view.cluster().nodes().size() && p.fits_somewhere == 0; ++id) {
      const models::Node& n = view.cluster().node(id);
      if (eligible(view, n.pool, job) && covers(n, {gpu_capacity(n, job), n.cpus, n.memory_mib}, job))
        p.fits_somewhere = 1;
    }
  }
  return p.fits_somewhere == 1;
}

}  // namespace headroom::policies::k8s
