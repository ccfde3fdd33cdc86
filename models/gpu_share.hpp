#pragma once

// GPU sharing: nodes whose GPUs are handed out in milli-GPUs (1000 = one whole device), pods that
// ask for a fraction of one GPU or for whole GPUs (plus CPU and memory), and the fragmentation
// measure of FGD (Q. Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent", USENIX ATC'23; simulator hkust-adsl/kubernetes-scheduler-simulator).
//
// The rules follow that simulator (paths in hkust-adsl/kubernetes-scheduler-simulator):
// * a node's state is its CPU and memory left and the milli-GPUs left on each device
//   (pkg/type/resource.go NodeResource); a pod fits when its CPU and memory fit (Kubernetes
//   NodeResourcesFit), its GPU-model list allows the node's model and `num_gpu` devices each have
//   `gpu_milli` left (pkg/type/open-gpu-share/cache/gpunodeinfo.go AllocateGpuId);
// * the target workload is the pod-shape distribution of the trace: shapes (CPU, milli-GPU per
//   device, GPU count, GPU-model list) sorted by frequency, the most popular ones kept until they
//   cover `popularity_pct` % of the pods, then re-normalised (pkg/utils/frag.go GetTypicalPods);
// * a node's fragmentation for one shape (pkg/utils/frag.go GetNodePodFrag, NodeGpuShareFragAmount):
//   CPU-only shape: all free milli-GPUs are fragment (kinds XL, XR); a shape the node's model does
//   not allow: all (NoAccess); a shape that fits: the free milli-GPUs of devices with less than the
//   shape's `gpu_milli` left are fragment (LackGpu), the rest is not (Satisfied); a shape that does
//   not fit: all (LackBoth, LackGpu, LackCpu). The node's expected fragmentation is the sum over
//   shapes weighted by their frequency, of everything but Satisfied (FragAmountSumExceptQ3).
//
// Memory is checked for fit but, as in the reference, takes no part in scores or fragmentation.
//
// MIG (NVIDIA Multi-Instance GPU) is the other way to share a device: fixed geometries instead of
// arbitrary milli-GPUs. `MigDevice` below models one device's memory slices and the GPU-instance
// profiles with their allowed placements (NVML nvmlGpuInstancePlacement_t: start slice and size;
// instances may not overlap), as `nvidia-smi mig -lgipp` lists them.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace headroom::models::gpushare {

inline constexpr std::int32_t kMilli = 1000;              // milli-GPUs in one device
inline constexpr int kMaxGpusPerNode = 16;                // devices per node
inline constexpr std::int64_t kMaxSpecCpuMilli = 128000;  // normalisers of the reference scorers
inline constexpr std::int64_t kMaxSpecGpuMilli = 8000;
inline constexpr std::int64_t kDefaultCpuMilli = 100;  // Kubernetes' non-zero default CPU request
inline constexpr int kMaxGpuTypes = 64;

// GPU devices of one node as a bit set (bit i = device i).
using GpuMask = std::uint32_t;

// What a pod asks for. `gpu_milli` is per device: 1..999 shares one device (num_gpu 1), 1000
// asks for whole devices; both 0 for a CPU-only pod. `type_mask` holds the GPU models allowed (bit
// = index in the cluster's `type_names`), `any_type` when the pod has no constraint.
struct SharePod {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::int32_t num_gpu = 0;
  std::int32_t gpu_milli = 0;
  std::string gpu_spec;  // allowed models as given ("V100M16|V100M32"); empty = any
  bool any_type = true;
  std::uint64_t type_mask = 0;

  bool shares_gpu() const { return num_gpu == 1 && gpu_milli > 0 && gpu_milli < kMilli; }
  std::int64_t total_gpu_milli() const { return static_cast<std::int64_t>(num_gpu) * gpu_milli; }
  // The CPU request as the Kubernetes scorers see it (0 counts as 100m).
  std::int64_t score_cpu_milli() const { return cpu_milli > 0 ? cpu_milli : kDefaultCpuMilli; }
};

// One node and what is left on it.
struct ShareNode {
  std::uint16_t type = 0;  // index into the cluster's type_names
  std::int64_t cpu_capacity = 0;
  std::int64_t cpu_left = 0;
  std::int64_t memory_capacity = 0;
  std::int64_t memory_left = 0;
  std::int32_t gpus = 0;
  std::array<std::int32_t, kMaxGpusPerNode> gpu_left{};  // milli-GPUs free on each device
  // Pods placed here by kind (GpuClustering's "GPU affinity"): [0] GPU-sharing pods, [k] pods of
  // k whole GPUs. CPU-only pods are not counted.
  std::array<std::int32_t, kMaxGpusPerNode + 1> kind_count{};

  std::int64_t gpu_left_total() const;
  std::int32_t fully_free_gpus() const;
  // Number of distinct pod kinds placed here.
  int kinds() const;
  // True when the node's model is allowed by the pod's list.
  bool accessible(const SharePod& pod) const { return pod.any_type || ((pod.type_mask >> type) & 1U) != 0; }
  // Devices with at least `milli` free.
  int devices_with(std::int32_t milli) const;
  // Whether the pod fits: CPU, memory, model, and `num_gpu` devices with `gpu_milli` free each.
  bool fits(const SharePod& pod) const;
  // The first `pod.num_gpu` fully free devices in index order (whole-GPU pods).
  GpuMask exclusive_gpus(const SharePod& pod) const;
  // The device with the least free milli-GPUs that still holds the pod's share, the lowest index
  // on ties (-1 when none); the reference's "best fit" device choice.
  int best_fit_gpu(std::int32_t milli) const;
  // Places the pod on the given devices (precondition: fits, mask has num_gpu devices each with
  // gpu_milli free).
  void place(const SharePod& pod, GpuMask gpus);
  // The reference's NodeResource.Sub: takes the pod's CPU (non-zero request) and fills its GPUs
  // from the least-free device up (stable), without checking memory. For "what if" states only.
  ShareNode minus(const SharePod& pod) const;
};

struct ShareCluster {
  std::vector<std::string> type_names;
  std::vector<ShareNode> nodes;

  std::int64_t total_gpus() const;
  std::int64_t allocated_gpu_milli() const;
  // Index of a model name, added when new. Throws std::length_error past kMaxGpuTypes models.
  std::uint16_t intern_type(std::string_view name);
  // Sets pod.any_type / pod.type_mask from pod.gpu_spec ('|'-separated models; unknown ones are
  // allowed nowhere).
  void resolve_types(SharePod& pod) const;
};

// One pod shape of the target workload and its frequency (0..1).
struct PodShape {
  std::int64_t cpu_milli = 0;  // as the scorers see it (non-zero)
  std::int32_t gpu_milli = 0;
  std::int32_t num_gpu = 0;
  std::string gpu_spec;
  bool any_type = true;
  std::uint64_t type_mask = 0;
  double freq = 0.0;
};

struct TargetWorkload {
  std::vector<PodShape> shapes;  // most frequent first
};

// The target workload of a pod list: shapes sorted by count (ties: larger CPU, milli-GPU, GPU
// count, then spec first), the most popular kept until they cover `popularity_pct` % of the pods
// (one shape at a time), re-normalised to sum to 1. `include_cpu_pods` false leaves CPU-only pods
// out. Type masks are copied from the pods (resolve them first).
TargetWorkload target_workload(std::span<const SharePod> pods, int popularity_pct = 95, bool include_cpu_pods = true);

// How a node's free GPUs relate to one shape (the reference's quadrants).
enum class FragKind : std::uint8_t {
  LackBoth = 0,       // neither the GPUs nor the CPU for the shape
  LackGpu = 1,        // CPU enough, GPUs not
  Satisfied = 2,      // the shape fits
  LackCpu = 3,        // GPUs enough, CPU not
  CpuShapeFits = 4,   // a CPU-only shape that fits (its GPUs stay idle)
  CpuShapeLacks = 5,  // a CPU-only shape that does not fit
  NoAccess = 6,       // the node's model is not allowed
};
inline constexpr int kFragKinds = 7;

FragKind classify(const ShareNode& node, const PodShape& shape);

// Expected milli-GPUs of the node in each kind against the target workload.
std::array<double, kFragKinds> frag_amount(const ShareNode& node, const TargetWorkload& target);
// The node's expected fragmented milli-GPUs: every kind but Satisfied.
double frag_score(const ShareNode& node, const TargetWorkload& target);
// Sum over the cluster's nodes.
double cluster_frag(const ShareCluster& cluster, const TargetWorkload& target);

// Memo of frag_score by node state (model, CPU left, multiset of free milli-GPUs); the score does
// not depend on anything else. Not thread-safe: one per thread or run.
class FragMemo {
 public:
  explicit FragMemo(const TargetWorkload& target) : target_(&target) {}
  double score(const ShareNode& node);
  std::size_t size() const { return memo_.size(); }

 private:
  struct Key {
    std::int64_t cpu_left;
    std::uint16_t type;
    std::uint8_t gpus;
    std::array<std::int16_t, kMaxGpusPerNode> left;  // sorted ascending, first `gpus` used
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  const TargetWorkload* target_;
  std::unordered_map<Key, double, KeyHash> memo_;
};

// ---------------------------------------------------------------------------------------------
// MIG geometries

// A GPU-instance profile: its name ("3g.20gb"), compute slices, memory slices occupied, and the
// memory slices an instance may start at.
struct MigProfile {
  std::string name;
  int compute = 0;
  int size = 0;
  std::vector<int> starts;
};

// The profiles of a MIG-capable model ("A100-40GB", "A100-80GB", "H100-80GB", "A30"), smallest
// first; empty for a model without MIG. A100 and H100: 8 memory slices, 7 compute slices,
// 1g {0..6}:1, 1g double memory {0,2,4,6}:2, 2g {0,2,4}:2, 3g {0,4}:4, 4g {0}:4, 7g {0}:8.
// A30: 4 slices, 1g {0..3}:1, 2g {0,2}:2, 4g {0}:4.
std::span<const MigProfile> mig_profiles(std::string_view model);
// The number of memory slices of a MIG-capable model (8, or 4 for A30); 0 without MIG.
int mig_memory_slices(std::string_view model);
// A profile of the model by name, nullptr when unknown.
const MigProfile* find_mig_profile(std::string_view model, std::string_view name);

// One device in MIG mode: which memory slices its GPU instances occupy.
struct MigDevice {
  int slices = 8;
  std::uint32_t used = 0;  // bit i = memory slice i

  int free_slices() const;
  // The first allowed start where an instance of `p` does not overlap another; -1 when none.
  int first_fit(const MigProfile& p) const;
  // The last such start; -1 when none.
  int last_fit(const MigProfile& p) const;
  bool fits(const MigProfile& p) const { return first_fit(p) >= 0; }
  // Creates an instance at `start` (precondition: an allowed, free placement).
  void take(const MigProfile& p, int start);
  void release(const MigProfile& p, int start);
  // How many more instances of `p` fit (placed first-fit one after another).
  int room_for(const MigProfile& p) const;
};

// The MIG model of a GPU type name as scenarios and traces write it ("A100-SXM4-40GB",
// "a100-80gb", "H100-SXM5-80GB", "H100", "A30"): {"A100-40GB"}, {"A100-80GB"}, {"H100-80GB"},
// {"A30"}; case, "NVIDIA " and separators do not matter. A bare "A100" names no memory size: both
// A100 models, the catalogue's (models/gpu_types.cpp: A100-80G) first. Empty for a model without
// MIG here (H100 NVL and H100 96GB have other profiles, not modelled).
std::vector<std::string_view> mig_models_for(std::string_view gpu_type);

// A per-GPU geometry: MIG mode and the instances of each profile (the "mig-enabled" and
// "mig-devices" of a mig-parted config entry).
struct MigGeometry {
  bool enabled = true;
  std::map<std::string, std::int32_t> devices;
};

// Creates the geometry's instances on `device`, largest first (memory slices, then compute
// slices), each at its highest free allowed start. For the models here this places every geometry
// that has some non-overlapping placement (tests/mig_test.cpp checks it against an exhaustive
// search), as mig-parted and NVML do (lowest starts first would refuse valid layouts such as
// 3g.20gb + 2g.10gb + 2 x 1g.5gb: the 3g at slice 0 and the 2g at 4 leave slice 7 to no 1g).
// Returns the profile that found no free placement (device then holds what was placed before it),
// or nullptr when all fit. Precondition: every profile is one of the model's.
const MigProfile* place_geometry(std::string_view model, const std::map<std::string, std::int32_t>& geometry,
                                 MigDevice& device);

// A named config of NVIDIA's default mig-parted configuration (NVIDIA/mig-parted
// deployments/systemd/config-default.yaml, the GPU Operator's default-mig-parted-config) for the
// model: all-disabled, all-enabled (MIG on, no instances), all-balanced (A100-40GB: 1g.5gb x2,
// 2g.10gb, 3g.20gb; A100-80GB and H100-80GB: 1g.10gb x2, 2g.20gb, 3g.40gb; A30: 1g.6gb x2,
// 2g.12gb) and all-<profile> (as many instances of the profile as fit: all-1g.5gb 7, all-1g.10gb 4
// on A100-40GB and 7 on the 80 GB models, ...). nullopt for another name or a profile the model
// lacks.
std::optional<MigGeometry> mig_named_config(std::string_view model, std::string_view name);

}  // namespace headroom::models::gpushare
