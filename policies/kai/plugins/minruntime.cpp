// KAI-Scheduler's minruntime plugin (docs/plugins/minruntime.md, pkg/scheduler/plugins/minruntime/):
// victims that have run less than their queue's preemptMinRuntime / reclaimMinRuntime are
// protected.
#include <algorithm>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

bool KaiPolicy::protected_by_min_runtime(const Unit& v, Tick min_runtime, Tick now) {
  if (min_runtime <= 0) return false;
  bool prot = false;
  for (JobIndex j : active_members(v)) {
    const Tick until = view_->run_start(j) + min_runtime;
    if (until > now) {
      prot = true;
      protected_until_ = std::min(protected_until_, until);
    }
  }
  return prot;
}

}  // namespace headroom::policies::kai::detail
