#include "models/observer.hpp"

#include <string>
#include <utility>

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
    case AuditKind::Waiting: return "waiting";
  }
  return "?";
}

std::string_view to_string(PendingCode c) {
  switch (c) {
    case PendingCode::None: return "none given";
    case PendingCode::Capacity: return "capacity";
    case PendingCode::Quota: return "quota";
    case PendingCode::Priority: return "priority";
    case PendingCode::Gang: return "gang";
    case PendingCode::Reservation: return "reservation";
    case PendingCode::Preemption: return "preemption";
    case PendingCode::Admission: return "admission";
    case PendingCode::Other: return "other";
  }
  return "?";
}

PendingCode classify_pending_reason(std::string_view reason) {
  // Keywords in the order they are tried; the first found in the reason's leading word (up to
  // ':'), else in the whole reason, decides.
  static constexpr std::pair<std::string_view, PendingCode> kWords[] = {
      {"gang", PendingCode::Gang},
      {"podgroup", PendingCode::Gang},
      {"minmember", PendingCode::Gang},
      {"minavailable", PendingCode::Gang},
      {"quota", PendingCode::Quota},
      {"limit", PendingCode::Quota},
      {"deserved", PendingCode::Quota},
      {"reservation", PendingCode::Reservation},
      {"reserved", PendingCode::Reservation},
      {"backfill", PendingCode::Reservation},
      {"preempt", PendingCode::Preemption},
      {"nominated", PendingCode::Preemption},
      {"pipelined", PendingCode::Preemption},
      {"victim", PendingCode::Preemption},
      {"admission", PendingCode::Admission},
      {"permission", PendingCode::Admission},
      {"suspend", PendingCode::Admission},
      {"check", PendingCode::Admission},
      {"priority", PendingCode::Priority},
      {"fairshare", PendingCode::Priority},
      {"fair share", PendingCode::Priority},
      {"order", PendingCode::Priority},
      {"fifo", PendingCode::Priority},
      {"queue", PendingCode::Priority},
      {"head of line", PendingCode::Capacity},
      {"unschedulable", PendingCode::Capacity},
      {"capacity", PendingCode::Capacity},
      {"resources", PendingCode::Capacity},
      {"free", PendingCode::Capacity},
      {"fit", PendingCode::Capacity},
  };
  std::string lower(reason);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const std::string_view whole(lower);
  const std::string_view lead = whole.substr(0, whole.find(':'));
  for (const std::string_view part : {lead, whole})
    for (const auto& [word, code] : kWords)
      if (part.find(word) != std::string_view::npos) return code;
  return reason.empty() ? PendingCode::None : PendingCode::Other;
}

}  // namespace headroom::models
