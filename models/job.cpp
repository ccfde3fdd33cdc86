#include "models/job.hpp"

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

}  // namespace headroom::models
