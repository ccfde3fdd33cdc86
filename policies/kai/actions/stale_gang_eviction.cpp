// KAI-Scheduler's stalegangeviction action (pkg/scheduler/actions/stalegangeviction/): a running
// group below minMember for longer than default-staleness-grace-period is evicted whole.
#include <string>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

void KaiPolicy::stale_gang_eviction(Session& s) {
  const Tick now = s.now();
  while (!stale_.empty() && stale_.begin()->first + cfg_.staleness_grace <= now) {
    const std::uint32_t id = stale_.begin()->second;
    const Unit& u = units_[id];
    evict(s, id, models::kNoJob, kNoUnit,
          "stalegangeviction: " + std::to_string(u.running + u.succeeded) + " of minMember " +
              std::to_string(u.min_member) + " pods for longer than the staleness grace period");
    // evict() refreshes the unit, which leaves the stale set once nothing runs.
    if (!stale_.empty() && stale_.begin()->second == id) {
      stale_.erase(stale_.begin());
      units_[id].stale_since = -1;
    }
  }
}

}  // namespace headroom::policies::kai::detail
