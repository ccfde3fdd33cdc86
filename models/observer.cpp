#include "models/observer.hpp"

namespace headroom::models {

std::string_view to_string(AuditKind k) {
  switch (k) {
    case AuditKind::Submit: return "submit";
    case AuditKind::Start: return "start";
    case AuditKind::Finish: return "finish";
    case AuditKind::Reject: return "reject";
    case AuditKind::Preempt: return "preempt";
    case AuditKind::Requeue: return "requeue";
    case AuditKind::Unfinished: return "unfinished";
    case AuditKind::NodeDown: return "node_down";
    case AuditKind::NodeUp: return "node_up";
    case AuditKind::Drain: return "drain";
    case AuditKind::Kill: return "kill";
    case AuditKind::Retry: return "retry";
    case AuditKind::Drill: return "drill";
    case AuditKind::Recovered: return "recovered";
  }
  return "?";
}

}  // namespace headroom::models
