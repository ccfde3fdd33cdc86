#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace headroom::models {

using sim::Tick;

// Dense index into a Workload's job vector; stable for a run.
using JobIndex = std::uint32_t;
using TenantId = std::uint32_t;
using QueueId = std::uint32_t;
inline constexpr JobIndex kNoJob = UINT32_MAX;
// Workload::groups / Workload::qos index; kNone = the job has none.
using GroupId = std::uint32_t;
using QosId = std::uint32_t;
inline constexpr std::uint32_t kNone = UINT32_MAX;

enum class JobKind : std::uint8_t { Train, Inference, Interactive, Batch };

// Terminal states are every state after Running. Each job ends in exactly one of them.
enum class JobState : std::uint8_t {
  Pending,
  Running,
  Completed,
  Failed,
  Cancelled,
  Rejected,
  Unfinished,  // still pending or running at the horizon
};
inline constexpr int kJobStateCount = 7;

// What the trace says happened to the job in reality.
enum class TraceStatus : std::uint8_t { Unknown, Completed, Failed, Cancelled };

std::string_view to_string(JobKind k);
std::string_view to_string(JobState s);
std::string_view to_string(TraceStatus s);
bool parse_job_kind(std::string_view text, JobKind& out);

struct Job {
  std::int64_t trace_id = 0;  // the id in the source trace
  TenantId tenant = 0;
  QueueId queue = 0;
  JobKind kind = JobKind::Batch;
  TraceStatus trace_status = TraceStatus::Unknown;
  bool preemptible = false;
  bool preempt_never = false;  // Kubernetes preemptionPolicy: Never
  std::uint32_t line = 0;      // the trace's line (or row) it was read from; 0 = none (generated, or not text)
  Tick submit = 0;
  std::int32_t gpus = 0;       // whole GPUs requested in total
  std::int32_t gpu_milli = 0;  // fraction of one GPU when sharing (1..999); 0 = whole GPUs
  // GPU memory of one device in MiB (KAI gpu-memory annotation), gpus 0 or 1 and no gpu_milli;
  // 0 = not given. Policies that model it convert it to a fraction per node (policies/kai/kai.hpp).
  std::int64_t gpu_memory_mib = 0;
  std::int32_t gpus_per_node = 0;  // 0 = no constraint (the placement decides)
  std::int32_t nodes = 0;          // requested node count; 0 = no constraint
  std::int32_t gang_min = 0;       // minimum members to start; 0 = all
  // The pod group (Volcano PodGroup, KAI PodGroup, Kueue Workload) this job is one pod of, or
  // kNone. Jobs of one group form one gang: gang-aware policies start at least gang_min of them
  // together (gang_min is the group's minMember, the same on every member) and may evict members
  // one by one. A job without a group is a gang of its own: it starts and stops as a whole.
  GroupId group = kNone;
  QosId qos = kNone;            // Slurm QOS name (Workload::qos), or kNone
  std::int32_t cpus = 0;        // cores, total; 0 = not modelled
  std::int64_t memory_mib = 0;  // total; 0 = not modelled
  std::int32_t priority = 0;    // trace priority or QOS level; larger runs first where used
  std::uint16_t gpu_type = 0;   // 0 = any; else index+1 into Workload::gpu_type_names
  // The loader raised walltime to the recorded run time (workload.time_limits: the log's system did
  // not enforce its limits, scenarios/workload.cpp): the job ran past the limit it asked for.
  bool walltime_raised = false;  // (in the padding after gpu_type: the struct keeps its size)
  // The pools the job may use (a nodeSelector, a Slurm partition's Nodes): 0 = any; else index+1
  // into Workload::node_sets (workload.node_selectors; in the padding too).
  std::uint8_t node_set = 0;
  Tick runtime = 0;       // recorded run time
  Tick walltime = -1;     // time limit; -1 = none
  Tick trace_start = -1;  // the trace's own start/end when known
  Tick trace_end = -1;
  // When the job leaves at a fixed time whatever it is doing (an inference service's replica
  // that its autoscaler removes, models/service.hpp): pending then it is withdrawn (Cancelled,
  // never ran), running it ends Completed. kNever (INT64_MAX) = no such time.
  Tick withdraw_at = INT64_MAX;
  std::int32_t service = -1;  // index of the inference service whose replica this is; -1 = none
};

// The pods a job runs as, by their GPUs, the same under every policy that places pods
// (docs/policies.md, "One workload model"). When the trace gives the job's shape, its pods follow
// it: pods of the trace's gpus_per_node (the last one with the rest), else `nodes` pods as even
// as possible when it gives a node count; a pod larger than every node is kept as it is (it stays
// Pending, as real kube-scheduler leaves it; Slurm rejects such a job at submit). Only a job with
// no shape is fitted to the cluster: one pod when it fits one node of its widest eligible pool
// (`widest`: that pool's GPUs per node; 0 = unknown), else node-sized pods of `widest` GPUs and
// one with the rest (8 + 8 + 4 for 20 GPUs on 8-GPU nodes), the layout of a PyTorchJob or MPIJob
// with one worker per node and of Slurm's block distribution.
std::vector<std::int32_t> pod_gpus(const Job& job, std::int32_t widest);

// The node size a job's pods are cut to when the trace gives no shape (pod_gpus' `widest`): the
// GPUs per node of the node size that holds the most GPUs among the pools the job may use (ties:
// the larger node). Users write a PyTorchJob's or MPIJob's workers for the nodes most of the
// cluster has; on one node size it is that size. Cutting to the largest node instead left CEA
// Curie's 5,040 16-GPU nodes to single-node jobs: every wider job ran as 32-GPU pods on the 360
// 32-GPU nodes (kubernetes+coscheduling 7.0 % busy on the log's first 34 days against Slurm's
// 14.0 %, and 32k-GPU jobs that could never fit). Add each eligible pool; width() is 0 when none
// was added.
class PodWidth {
 public:
  void add(std::int32_t gpus_per_node, std::int64_t nodes);
  std::int32_t width() const;

 private:
  std::vector<std::pair<std::int32_t, std::int64_t>> by_size_;  // GPUs per node, GPUs of that size
};

// GPU demand in milli-GPUs (1000 per whole GPU). A gpu-memory pod counts one GPU: its fraction
// depends on the node it runs on.
inline std::int64_t gpu_demand_milli(const Job& j) {
  if (j.gpu_memory_mib > 0 && j.gpu_milli == 0 && j.gpus <= 1) return 1000;
  return j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli : static_cast<std::int64_t>(j.gpus) * 1000;
}

}  // namespace headroom::models
