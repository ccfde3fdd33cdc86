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
  }
  return "?";
}

}  // namespace headroom::models
