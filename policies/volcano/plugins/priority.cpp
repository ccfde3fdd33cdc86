// plugins/priority/priority.go PreemptableFn. Its JobOrderFn and TaskOrderFn are inline in
// policy.hpp (job_cmp, task_cmp).
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// PreemptableFn: a victim of another job with lower job priority, or of the same job with lower
// task priority.
std::vector<JobIndex> VolcanoPolicy::priority_victims(JobIndex preemptor, const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
  const Group& pg = groups_[members_[preemptor].group];
  for (JobIndex v : cands) {
    const std::uint32_t vg = members_[v].group;
    if (vg != members_[preemptor].group ? groups_[vg].priority < pg.priority
                                        : (*jobs_)[v].priority < (*jobs_)[preemptor].priority)
      out.push_back(v);
  }
  return out;
}

}  // namespace headroom::policies::volcano::detail
