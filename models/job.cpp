#include "models/job.hpp"

#include <algorithm>

namespace headroom::models {

std::string_view to_string(JobKind k) {
  switch (k) {
    case JobKind::Train: return "train";
    case JobKind::Inference: return "inference";
    case JobKind::Interactive: return "interactive";
    case JobKind::Batch: return "batch";
  }
  return "?";
}

std::string_view to_string(JobState s) {
  switch (s) {
    case JobState::Pending: return "pending";
    case JobState::Running: return "running";
    case JobState::Completed: return "completed";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
    case JobState::Rejected: return "rejected";
    case JobState::Unfinished: return "unfinished";
  }
  return "?";
}

std::string_view to_string(TraceStatus s) {
  switch (s) {
    case TraceStatus::Unknown: return "unknown";
    case TraceStatus::Completed: return "completed";
    case TraceStatus::Failed: return "failed";
    case TraceStatus::Cancelled: return "cancelled";
  }
  return "?";
}

bool parse_job_kind(std::string_view text, JobKind& out) {
  if (text == "train")
    out = JobKind::Train;
  else if (text == "inference")
    out = JobKind::Inference;
  else if (text == "interactive")
    out = JobKind::Interactive;
  else if (text == "batch")
    out = JobKind::Batch;
  else
    return false;
  return true;
}

std::vector<std::int32_t> pod_gpus(const Job& job, std::int32_t widest) {
  std::vector<std::int32_t> out;
  if (job.gpus_per_node > 0) {
    // The trace gives the shape: pods of that many GPUs, even where no node is that large (such a
    // pod stays Pending, as kube-scheduler leaves it: "Insufficient nvidia.com/gpu").
    for (std::int32_t left = job.gpus; left > 0; left -= job.gpus_per_node)
      out.push_back(std::min(left, job.gpus_per_node));
  } else if (job.nodes > 0) {
    for (std::int32_t i = 0; i < job.nodes; ++i) out.push_back(job.gpus / job.nodes + (i < job.gpus % job.nodes));
  } else if (widest > 0 && job.gpus > widest) {
    for (std::int32_t left = job.gpus; left > 0; left -= widest) out.push_back(std::min(left, widest));
  } else {
    out.push_back(job.gpus);
  }
  return out;
}

void PodWidth::add(std::int32_t gpus_per_node, std::int64_t nodes) {
  if (gpus_per_node <= 0 || nodes <= 0) return;
  const std::int64_t gpus = nodes * gpus_per_node;
  for (auto& [size, total] : by_size_)
    if (size == gpus_per_node) {
      total += gpus;
      return;
    }
  by_size_.emplace_back(gpus_per_node, gpus);
}

std::int32_t PodWidth::width() const {
  std::int32_t best = 0;
  std::int64_t most = 0;
  for (const auto& [size, total] : by_size_)
    if (total > most || (total == most && size > best)) {
      best = size;
      most = total;
    }
  return best;
}

}  // namespace headroom::models
