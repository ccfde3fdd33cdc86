// plugins/proportion/proportion.go: deserved by weighted water-filling, and ReclaimableFn.
#include <algorithm>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

// proportion: water-filling of deserved by weight.
void VolcanoPolicy::compute_deserved() {
  FRes remaining{};
  for (int d = 0; d < kDims; ++d) remaining[d] = static_cast<double>(total_[d]);
  std::vector<std::uint32_t> live;
  for (std::uint32_t q = 0; q < queues_.size(); ++q) {
    QueueS& qs = queues_[q];
    qs.deserved = {};
    for (int d = 0; d < kDims; ++d) {
      double cap = static_cast<double>(total_[d] - total_guarantee_[d] + qs.conf.guarantee[d]);
      if (qs.conf.capability[d] >= 0) cap = std::min(cap, static_cast<double>(qs.conf.capability[d]));
      qs.real_cap[d] = cap;
    }
    if (qs.has_jobs) live.push_back(q);
  }
  std::vector<bool> met(queues_.size(), false);
  for (int round = 0; round < 1000; ++round) {
    double tw = 0;
    for (auto q : live)
      if (!met[q]) tw += static_cast<double>(queues_[q].conf.weight);
    if (tw == 0) break;
    const FRes old_remaining = remaining;
    FRes inc{}, dec{};
    for (auto q : live) {
      if (met[q]) continue;
      QueueS& qs = queues_[q];
      const FRes old = qs.deserved;
      bool request_met = true;
      for (int d = 0; d < kDims; ++d) {
        double v = qs.deserved[d] + remaining[d] * static_cast<double>(qs.conf.weight) / tw;
        v = std::min(v, qs.real_cap[d]);
        v = std::min(v, static_cast<double>(qs.request[d]));
        v = std::max(v, static_cast<double>(qs.conf.guarantee[d]));
        qs.deserved[d] = v;
        request_met = request_met && static_cast<double>(qs.request[d]) <= v + kEps;
        if (v > old[d])
          inc[d] += v - old[d];
        else
          dec[d] += old[d] - v;
      }
      if (request_met || qs.deserved == old) met[q] = true;
    }
    bool empty = true;
    for (int d = 0; d < kDims; ++d) {
      remaining[d] = remaining[d] - inc[d] + dec[d];
      empty = empty && remaining[d] < 1e-6;
    }
    if (empty || remaining == old_remaining) break;
  }
}

// ReclaimableFn: a victim while its queue's allocated (less the victims so far) is above deserved
// in some dimension.
std::vector<JobIndex> VolcanoPolicy::proportion_victims(const std::vector<JobIndex>& cands) const {
  std::vector<JobIndex> out;
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
  return out;
}

}  // namespace headroom::policies::volcano::detail
