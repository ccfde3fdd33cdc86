// Node choice (src/plugins/select/cons_tres/job_test.c and topology/common/eval_nodes.c):
// best fit by node Weight and free GPUs, and topology/tree's switch choice. choose(), which
// gathers the candidate nodes, is a template defined in policy.hpp.

#include "policies/slurm/policy.hpp"

namespace headroom::policies::slurm::detail {

// topology/tree: keep the candidates of the lowest switch that holds the job, and there of one
// best-fit leaf or of the leaves with the most room first.
void SlurmPolicy::restrict_to_topology(const Shape& s, std::int64_t want) {
  // The candidates' capacities by node (-1: not a candidate), reset before returning.
  if (tcap_.size() < cap_.size()) tcap_.assign(cap_.size(), -1);
  for (const auto& [id, c] : cand_) tcap_[id] = c;
  auto reset = [&] {
    for (const auto& c : cand_) tcap_[c.first] = -1;
  };
  auto room = [&](const Switch& sw) {
    std::int64_t r = 0;
    for (NodeId id : sw.nodes)
      if (tcap_[id] >= 0) r += s.fixed ? 1 : tcap_[id];
    return r;
  };
  int best = -1;
  std::int64_t best_room = 0;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    const std::int64_t r = room(switches_[i]);
    if (r < want) continue;
    if (best < 0 || switches_[i].level < switches_[static_cast<std::size_t>(best)].level ||
        (switches_[i].level == switches_[static_cast<std::size_t>(best)].level && r < best_room)) {
      best = static_cast<int>(i);
      best_room = r;
    }
  }
  if (best < 0) {  // no switch holds the job: topology is ignored
    reset();
    return;
  }
  const Switch& top = switches_[static_cast<std::size_t>(best)];
  std::vector<NodeId> keep;
  if (top.leaf) {
    keep = top.nodes;
  } else {
    if (leaves_under_.size() != switches_.size()) {
      leaves_under_.assign(switches_.size(), {});
      for (std::size_t u = 0; u < switches_.size(); ++u)
        for (std::size_t i = 0; i < switches_.size(); ++i) {
          const auto& un = switches_[u].nodes;
          const auto& ln = switches_[i].nodes;
          if (switches_[i].leaf && !ln.empty() && std::includes(un.begin(), un.end(), ln.begin(), ln.end()))
            leaves_under_[u].push_back(i);
        }
    }
    std::vector<std::pair<std::int64_t, std::size_t>> leaves;
    for (std::size_t i : leaves_under_[static_cast<std::size_t>(best)]) leaves.push_back({room(switches_[i]), i});
    std::stable_sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::int64_t got = 0;
    for (const auto& [r, i] : leaves) {
      if (got >= want) break;
      keep.insert(keep.end(), switches_[i].nodes.begin(), switches_[i].nodes.end());
      got += r;
    }
    // One leaf enough: the best-fit one.
    for (auto it = leaves.rbegin(); it != leaves.rend(); ++it)
      if (it->first >= want) {
        keep = switches_[it->second].nodes;
        break;
      }
  }
  reset();
  std::sort(keep.begin(), keep.end());
  std::erase_if(cand_, [&](const auto& c) { return !std::binary_search(keep.begin(), keep.end(), c.first); });
}

models::Placement SlurmPolicy::pick(const ClusterView& view, JobIndex j, const std::vector<Avail>& av) {
  const Shape& s = shape_[j];
  models::Placement pl;
  auto slice = [&](NodeId id, std::int32_t g) {
    const auto& node = view.cluster().node(id);
    models::Slice sl{id, g, 0, 0};
    // The shape's CPUs and memory: the job's own, or its partition's per-GPU defaults (make_shape).
    if (node.cpus > 0 && (s.fixed ? s.cpn : s.cpg) > 0) sl.cpus = s.fixed ? s.cpn : std::min(av[id].cpus, g * s.cpg);
    if (node.memory_mib > 0 && (s.fixed ? s.mpn : s.mpg) > 0)
      sl.memory_mib = s.fixed ? s.mpn : std::min(av[id].mem, g * s.mpg);
    pl.push_back(sl);
  };
  auto gpus_of = [&](NodeId id) { return av[id].gpus; };
  if (s.fixed) {
    // Best fit: lowest weight, fewest free GPUs, lowest id.
    const std::size_t k = s.slices.size();
    auto better = [&](const auto& a, const auto& b) {
      return std::tuple(weight_[a.first], gpus_of(a.first), a.first) <
             std::tuple(weight_[b.first], gpus_of(b.first), b.first);
    };
    std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(k), cand_.end(), better);
    for (std::size_t i = 0; i < k; ++i) slice(cand_[i].first, s.slices[i]);
    return pl;
  }
  // Flexible: the best-fit single node within the lowest weight that can hold the job...
  std::int64_t min_w = std::numeric_limits<std::int64_t>::max();
  {
    std::map<std::int64_t, std::int64_t> room;
    for (const auto& [id, c] : cand_) room[weight_[id]] += c;
    std::int64_t acc = 0;
    for (const auto& [w, r] : room) {
      acc += r;
      if (acc >= s.total) {
        min_w = w;
        break;
      }
    }
  }
  std::erase_if(cand_, [&](const auto& c) { return weight_[c.first] > min_w; });
  const std::pair<NodeId, std::int32_t>* single = nullptr;
  for (const auto& c : cand_)
    if (c.second >= s.total &&
        (single == nullptr || std::tuple(weight_[c.first], c.second, c.first) <
                                  std::tuple(weight_[single->first], single->second, single->first)))
      single = &c;
  if (single != nullptr) {
    slice(single->first, s.total);
    return pl;
  }
  // ...else the nodes with the most room first, and the best fit for what is left.
  std::stable_sort(cand_.begin(), cand_.end(), [&](const auto& a, const auto& b) {
    return std::tuple(weight_[a.first], -a.second, a.first) < std::tuple(weight_[b.first], -b.second, b.first);
  });
  std::int32_t left = s.total;
  std::size_t i = 0;
  for (; i < cand_.size() && left > cand_[i].second; ++i) {
    slice(cand_[i].first, cand_[i].second);
    left -= cand_[i].second;
  }
  std::size_t fit = i;
  for (std::size_t k = i; k < cand_.size(); ++k)
    if (cand_[k].second >= left && cand_[k].second < cand_[fit].second) fit = k;
  slice(cand_[fit].first, left);
  return pl;
}

}  // namespace headroom::policies::slurm::detail
