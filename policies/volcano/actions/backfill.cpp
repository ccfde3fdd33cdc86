// actions/backfill/backfill.go: best-effort tasks on the first feasible node.
#include <string>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

void VolcanoPolicy::backfill(Session& s) {
  for (std::uint32_t gi : be_live_) {
    Group& g = groups_[gi];
    if (g.phase == Phase::Pending || g.pending_be == 0) continue;
    for (JobIndex j : members(g)) {
      if (!members_[j].best_effort || s.state(j) != JobState::Pending || j >= submitted_upto_ || s.retrying(j))
        continue;
      const Job& job = (*jobs_)[j];
      for (NodeId n = 0; n < cap_.size(); ++n) {
        if (!eligible(n, job)) continue;
        models::Placement p{models::Slice{n, job.gpus, job.cpus, job.memory_mib}};
        if (!s.cluster().check(p).empty()) continue;
        const std::string why = s.start(j, p, "volcano backfill: best-effort task");
        HEADROOM_ASSERT(why.empty(), "volcano backfill refused: " + why);
        node_changed(n);
        touch(gi);
        --g.pending_be;
        ++g.ready;
        changed_ = true;
        break;
      }
    }
  }
}

}  // namespace headroom::policies::volcano::detail
