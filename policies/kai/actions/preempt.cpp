// KAI-Scheduler's preempt action (pkg/scheduler/actions/preempt/preempt.go): victims of the same
// leaf queue, preemptible, of strictly lower priority, newest first.
#include <optional>
#include <tuple>
#include <vector>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

bool KaiPolicy::preempt(Session& s, std::uint32_t id, int& searches) {
  Unit& u = units_[id];
  QNode& leaf = nodes_[u.queue];
  if (leaf.running_units.empty() || std::get<0>(*leaf.running_units.begin()) >= u.priority) return false;
  Amounts req{};
  if (!next_demand(s, u, req)) return false;
  // The preemptor's non-preemptible quota rule first (victims are preemptible: they do not
  // change allocatedNonPreemptible).
  if (!u.preemptible() && capacity(u, req, {}) == Reason::NonPreemptibleOverQuota) return false;
  const auto pods = next_pods(s, u);
  ++searches;
  const Tick now = s.now();
  Amounts released{};
  auto accept = [&](std::uint32_t v) {
    if (protected_by_min_runtime(units_[v], leaf.preempt_min_runtime, now)) return false;
    add(released, unit_alloc(units_[v]));
    return true;
  };
  // Victims until the pods fit and the limit holds.
  Overlay ov = base();
  std::vector<models::Placement> plan;
  std::vector<std::uint32_t> chosen;
  std::optional<std::vector<std::uint32_t>> victims;
  for (const auto& key : leaf.running_units) {
    if (std::get<0>(key) >= u.priority || std::get<0>(key) >= 100) break;
    const auto v = static_cast<std::uint32_t>(-std::get<2>(key));
    if (!accept(v)) continue;
    chosen.push_back(v);
    for (JobIndex j : active_members(units_[v])) ov.take(*cluster_, view_->placement(j), -1);
    if (capacity(u, req, released) != Reason::None) continue;
    Overlay trial = ov;
    if (auto p = place(pods, trial)) {
      plan = std::move(*p);
      victims = chosen;
      break;
    }
  }
  if (!victims) return false;
  for (std::uint32_t v : *victims)
    evict(s, v, pods.front(), id, "preempt: strictly lower priority in queue " + leaf.name);
  pipeline(s, id, pods, plan);
  return true;
}

}  // namespace headroom::policies::kai::detail
