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
  const Group& pg = groups_[members_[preemptor].group];
  if (plugin == VictimFn::Priority) {
    for (JobIndex v : cands) {
      const std::uint32_t vg = members_[v].group;
      if (vg != members_[preemptor].group ? groups_[vg].priority < pg.priority
                                          : (*jobs_)[v].priority < (*jobs_)[preemptor].priority)
        out.push_back(v);
    }
  } else if (plugin == VictimFn::Gang) {
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
  } else if (plugin == VictimFn::Conformance) {
    out = cands;  // headroom has no kube-system or system-critical pods
  } else if (plugin == VictimFn::Drf) {
    Res l = add(pg.alloc, req);
    double ls = 0;
    for (int d = 0; d < kDims; ++d)
      if (total_[d] > 0) ls = std::max(ls, static_cast<double>(l[d]) / static_cast<double>(total_[d]));
    std::vector<std::pair<std::uint32_t, Res>> allocs;
    for (JobIndex v : cands) {
      const std::uint32_t vg = members_[v].group;
      auto it = std::find_if(allocs.begin(), allocs.end(), [&](const auto& o) { return o.first == vg; });
      if (it == allocs.end()) {
        allocs.emplace_back(vg, groups_[vg].alloc);
        it = allocs.end() - 1;
      }
      it->second = sub(it->second, members_[v].total);
      double rs = 0;
      for (int d = 0; d < kDims; ++d)
        if (total_[d] > 0) rs = std::max(rs, static_cast<double>(it->second[d]) / static_cast<double>(total_[d]));
      if (ls < rs || std::abs(ls - rs) <= 1e-6) out.push_back(v);
    }
  } else if (plugin == VictimFn::Hdrf && reclaim) {
    out = hdrf_victims(preemptor, cands);
  } else if (plugin == VictimFn::Capacity && reclaim) {
    out = capacity_victims(preemptor, cands);
  } else if (plugin == VictimFn::Proportion && reclaim) {
    std::vector<std::pair<std::uint32_t, Res>> allocs;
    for (JobIndex v : cands) {
      const std::uint32_t q = groups_[members_[v].group].queue;
      auto it = std::find_if(allocs.begin(), allocs.end(), [&](const auto& o) { return o.first == q; });
      if (it == allocs.end()) {
        allocs.emplace_back(q, queues_[q].allocated);
        it = allocs.end() - 1;
      }
      bool above = false;
      for (int d = 0; d < kDims; ++d)
        above = above || (total_[d] > 0 && static_cast<double>(it->second[d]) > queues_[q].deserved[d] + kEps);
      if (above) {
        it->second = sub(it->second, members_[v].total);
        out.push_back(v);
      }
    }
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
