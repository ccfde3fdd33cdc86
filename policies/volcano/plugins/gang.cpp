// plugins/gang/gang.go PreemptableFn / ReclaimableFn. Its JobOrderFn (not ready first) and the
// job states it decides (JobReady, JobPipelined, JobStarving, JobValid) are inline in policy.hpp.
#include <algorithm>
#include <utility>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// A victim while its job's occupied count stays above minAvailable (the candidates in victim
// order).
std::vector<JobIndex> VolcanoPolicy::gang_victims(const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
  std::vector<std::pair<std::uint32_t, int>> occupied;
  for (JobIndex v : cands) {
    const std::uint32_t vg = members_[v].group;
    auto it = std::find_if(occupied.begin(), occupied.end(), [&](const auto& o) { return o.first == vg; });
    if (it == occupied.end()) {
      occupied.emplace_back(vg, groups_[vg].ready);
      it = occupied.end() - 1;
    }
    if (it->second > groups_[vg].min) {
      --it->second;
      out.push_back(v);
    }
  }
  return out;
}

}  // namespace headroom::policies::volcano::detail
