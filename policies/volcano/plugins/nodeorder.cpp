// plugins/nodeorder/nodeorder.go (leastrequested, mostrequested, balancedresource, as
// kube-scheduler scores them) and plugins/binpack/binpack.go: a node's score for one task.
#include "policies/kubernetes/kubernetes.hpp"
#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

double VolcanoPolicy::node_score(NodeId n, const SliceReq& sl) const {
  double score = 0;
  const models::Node& node = view_->cluster().node(n);
  const Res used = sub(cap_[n], idle_[n]);
  if (binpack_ && cfg_.binpack_weight > 0) {
    const double w[kDims] = {cfg_.binpack_gpu, cfg_.binpack_cpu, cfg_.binpack_memory};
    double sum = 0, wsum = 0;
    bool overflow = false;
    for (int d = 0; d < kDims; ++d) {
      if (sl.r[d] == 0 || w[d] == 0) continue;
      if (cap_[n][d] == 0 || used[d] + sl.r[d] > cap_[n][d]) {
        overflow = true;
        break;
      }
      sum += static_cast<double>(used[d] + sl.r[d]) * w[d] / static_cast<double>(cap_[n][d]);
      wsum += w[d];
    }
    if (!overflow && wsum > 0) score += sum / wsum * 100.0 * cfg_.binpack_weight;
  }
  if (nodeorder_ && (modelled_[1] || modelled_[2])) {
    k8s::NodeUsage u;
    u.gpus = used[0];
    u.cpu_milli = u.nonzero_cpu_milli = used[1];
    u.memory_mib = u.nonzero_memory_mib = used[2];
    Job pod;
    pod.gpus = sl.gpus;
    pod.cpus = sl.cpus;
    pod.memory_mib = sl.memory_mib;
    if (cfg_.leastrequested_weight > 0)
      score += static_cast<double>(cfg_.leastrequested_weight * k8s::score_node({}, node, u, pod).fit);
    if (cfg_.mostrequested_weight > 0) {
      k8s::ScoringStrategy most;
      most.type = k8s::ScoringType::MostAllocated;
      score += static_cast<double>(cfg_.mostrequested_weight * k8s::score_node(most, node, u, pod).fit);
    }
    if (cfg_.balancedresource_weight > 0)
      score += static_cast<double>(cfg_.balancedresource_weight * k8s::score_node({}, node, u, pod).balanced);
  }
  return score;
}

}  // namespace headroom::policies::volcano::detail
