#pragma once

// Placement scorers for GPU-sharing workloads from the FGD study (Q. Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
// ATC'23). Each scorer is a pure function of a read-only node state and a pod; `place` runs the
// Kubernetes scheduling cycle around them (filter, score, normalise, highest score, then the device
// choice of the Open-Gpu-Share Reserve step). Ties go to the first node in the given order: the
// reference's Kubernetes fork (mental2008/kubernetes v1.20.5-minor, generic_scheduler.go
// selectHost) takes the smallest node name, and its simulator prefixes node names with a random
// permutation per run (simulator.go syncClusterResourceList), so a caller reproducing it shuffles
// the node list once per run.
//
// Rules, from hkust-adsl/kubernetes-scheduler-simulator (pkg/simulator/plugin/):
// * Random (random_score.go): every feasible node equally likely; a shared pod's device is drawn
//   uniformly among those with room (open_gpu_share.go allocateGpuIdBasedOnRandomFit).
// * DotProd (dot_product_score.go, dimExtMethod merge, normMethod max): the node's free
//   [CPU / 128 cores, all free milli-GPUs / 8000] dotted with the pod's request in the same units,
//   halved; score = int(100 * (1 - that)): the smallest product wins.
// * GpuClustering (gpu_clustering_score.go): 25 * (8000 - free milli-GPUs) / 8000 (integers) plus
//   75 when every pod on the node is of the pod's kind (GPU-sharing, or k whole GPUs), 50 when that
//   kind is among others, 25 on an empty node, 0 otherwise; CPU-only pods score 0 everywhere.
// * GpuPacking (gpu_packing_score.go): a node with all devices free scores max(33 - devices, devices);
//   a pod that must open fully free devices on a used node scores max(50 - devices opened, 33);
//   otherwise (only partly used devices) max(100 - sum(free% of the devices used) / 10, 50), the
//   devices taken least-free first; CPU-only pods score 0.
// * BestFit (best_fit_score.go): int(100 * (1 - (0.5 (CPU free - req) / 128 cores + 0.5 (milli-GPU
//   free - req) / 8000))), then min-max normalised to 0..100 over the feasible nodes with integer
//   division (plugin_utils.go NormalizeScore).
// * FGD (fgd_score.go): int(100 * sigmoid((frag before - frag after) / 1000)) with frag the node's
//   expected fragmentation against the target workload (models/gpu_share.hpp); a shared pod tries
//   each device with room and keeps the best (the first on ties); whole-GPU and CPU pods take the
//   state after the reference's packing (NodeResource.Sub).
// * Device choice for DotProd, GpuClustering, GpuPacking and BestFit: "best fit", the device with
//   the least room that holds the share (open_gpu_share.go allocateGpuIdBasedOnBestFit); whole-GPU
//   pods always take the first fully free devices (resource.go AllocateExclusiveGpuId).
// The reference draws from Go's math/rand; we draw from a seeded sim::RngStream, so runs are
// reproducible but not the reference's exact sequences.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu_share.hpp"
#include "sim/rng.hpp"

namespace headroom::policies::fgd {

enum class Policy : std::uint8_t { Random, DotProd, GpuClustering, GpuPacking, BestFit, Fgd };
inline constexpr Policy kAllPolicies[] = {Policy::Random,     Policy::DotProd, Policy::GpuClustering,
                                          Policy::GpuPacking, Policy::BestFit, Policy::Fgd};

// "Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD".
std::string_view to_string(Policy p);
// Case-insensitive; also accepts the reference's ids ("06-FGD") and "dot-prod"-style dashes.
std::optional<Policy> parse_policy(std::string_view name);
std::vector<std::string> policy_names();

// What the FGD scorer needs beyond the node and the pod: the target workload (a memo of node
// fragmentation is optional and only saves time).
struct Context {
  const models::gpushare::TargetWorkload* target = nullptr;
  models::gpushare::FragMemo* memo = nullptr;
};

// The policy's score for the pod on the node, before normalisation (precondition: node.fits(pod)).
// Random scores 0 everywhere (`place` draws its node uniformly among the feasible ones).
std::int64_t score(Policy p, const models::gpushare::ShareNode& node, const models::gpushare::SharePod& pod,
                   const Context& ctx);

// Each scorer on its own (same preconditions).
std::int64_t score_dot_product(const models::gpushare::ShareNode& node, const models::gpushare::SharePod& pod);
std::int64_t score_gpu_clustering(const models::gpushare::ShareNode& node, const models::gpushare::SharePod& pod);
std::int64_t score_gpu_packing(const models::gpushare::ShareNode& node, const models::gpushare::SharePod& pod);
std::int64_t score_best_fit(const models::gpushare::ShareNode& node, const models::gpushare::SharePod& pod);
// FGD's score and the device it would use for a shared pod (-1 for other pods).
struct FgdScore {
  std::int64_t score = 0;
  int gpu = -1;
};
FgdScore score_fgd(const models::gpushare::ShareNode& node, const models::gpushare::SharePod& pod, const Context& ctx);

// Kubernetes' NormalizeScore for the policies that have one (BestFit): min-max to 0..100 with
// integer division; all 0 when every score is equal. Other policies: unchanged.
void normalize(Policy p, std::span<std::int64_t> scores);

// The devices the pod gets on the chosen node (0 for a CPU-only pod). Random draws from `rng`.
models::gpushare::GpuMask select_gpus(Policy p, const models::gpushare::ShareNode& node,
                                      const models::gpushare::SharePod& pod, const Context& ctx, sim::RngStream& rng);

struct Placement {
  std::uint32_t node = 0;
  models::gpushare::GpuMask gpus = 0;
};

// One scheduling cycle: the feasible nodes, their scores, the highest score (the first such node;
// Random: a feasible node drawn with `rng`), the devices. nullopt when no node fits. `scratch`
// avoids reallocations.
std::optional<Placement> place(Policy p, std::span<const models::gpushare::ShareNode> nodes,
                               const models::gpushare::SharePod& pod, const Context& ctx, sim::RngStream& rng,
                               std::vector<std::int64_t>* scratch = nullptr);

}  // namespace headroom::policies::fgd
