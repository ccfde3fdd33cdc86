// framework/session_plugins.go Preemptable / Reclaimable: the victims the plugins of one tier
// agree on, tier after tier.
#include <algorithm>
#include <string>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// The victims one plugin admits among `cands` for `preemptor` (a task needing `req`).
std::vector<JobIndex> VolcanoPolicy::plugin_victims(VictimFn plugin, bool reclaim, JobIndex preemptor, const Res& req,
                                                    const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
  if (plugin == VictimFn::Priority) {
    out = priority_victims(preemptor, cands);
  } else if (plugin == VictimFn::Gang) {
    out = gang_victims(cands);
  } else if (plugin == VictimFn::Conformance) {
    out = cands;  // headroom has no kube-system or system-critical pods
  } else if (plugin == VictimFn::Drf) {
    out = drf_victims(preemptor, req, cands);
  } else if (plugin == VictimFn::Hdrf && reclaim) {
    out = hdrf_victims(preemptor, cands);
  } else if (plugin == VictimFn::Capacity && reclaim) {
    out = capacity_victims(preemptor, cands);
  } else if (plugin == VictimFn::Proportion && reclaim) {
    out = proportion_victims(cands);
  }
  return out;
}

std::vector<JobIndex> VolcanoPolicy::tiered_victims(bool reclaim, JobIndex preemptor, const Res& req,
                                                    const std::vector<JobIndex>& cands, std::string& rule) const {
  for (const auto& tier : victim_tiers_[reclaim ? 1 : 0]) {
    std::vector<JobIndex> victims;
    bool init = false;
    std::string names;
    for (const auto& [fn, name] : tier) {
      auto c = plugin_victims(fn, reclaim, preemptor, req, cands);
      if (c.empty()) {
        victims.clear();
        break;
      }
      names += (names.empty() ? "" : ", ") + name;
      if (!init) {
        victims = std::move(c);
        init = true;
      } else {
        std::vector<JobIndex> keep;
        for (JobIndex v : victims)
          if (std::find(c.begin(), c.end(), v) != c.end()) keep.push_back(v);
        victims = std::move(keep);
      }
    }
    if (!victims.empty()) {
      rule = names;
      return victims;
    }
  }
  return {};
}

}  // namespace headroom::policies::volcano::detail
