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
    // select/cons_tres _eval_nodes (issue #38, checked against slurmctld 22.05): the candidate
    // nodes fall into sets of consecutive node ids of one Weight (a node that cannot hold the
    // job ends a set); the set taken is the lowest Weight, then the first that suffices, then the
    // one that suffices with the fewest free CPUs (one that does not suffice replaces the best so
    // far when it has more). From it, a one-node job takes the node with the fewest free CPUs
    // (the first on a tie), a wider job its nodes in id order; a set too small is taken whole and
    // the next best set gives the rest. Free CPUs are the node's where CPUs are modelled, else its
    // free GPUs.
    const std::size_t k = s.slices.size();
    std::sort(cand_.begin(), cand_.end());
    auto measure = [&](NodeId id) -> std::int64_t {
      return cap_[id].cpus > 0 ? std::max<std::int64_t>(av[id].cpus, 0) : gpus_of(id);
    };
    const std::int64_t per_node = cap_.empty() || cand_.empty() || cap_[cand_[0].first].cpus <= 0
                                      ? std::max<std::int64_t>(1, s.need)
                                      : std::max<std::int64_t>(1, s.cpn);
    struct Set {
      std::size_t begin, end;  // into cand_
      std::int64_t weight, measure;
    };
    std::vector<Set> sets;
    for (std::size_t i = 0; i < cand_.size(); ++i) {
      const NodeId id = cand_[i].first;
      if (sets.empty() || cand_[i - 1].first + 1 != id || weight_[id] != sets.back().weight)
        sets.push_back({i, i, weight_[id], 0});
      sets.back().end = i + 1;
      sets.back().measure += measure(id);
    }
    std::int64_t rem_nodes = static_cast<std::int64_t>(k);
    std::int64_t rem_cpus = rem_nodes * per_node;
    std::vector<NodeId> chosen;
    std::vector<char> used(sets.size(), 0);
    while (rem_nodes > 0) {
      int best = -1;
      bool best_suff = false;
      for (std::size_t i = 0; i < sets.size(); ++i) {
        if (used[i] != 0) continue;
        const Set& x = sets[i];
        const bool suff = x.measure >= rem_cpus && static_cast<std::int64_t>(x.end - x.begin) >= rem_nodes;
        bool take = best < 0 || x.weight < sets[static_cast<std::size_t>(best)].weight;
        if (!take && x.weight == sets[static_cast<std::size_t>(best)].weight) {
          const std::int64_t bm = sets[static_cast<std::size_t>(best)].measure;
          take = (suff && !best_suff) || (suff && x.measure < bm) || (!suff && x.measure > bm);
        }
        if (take) {
          best = static_cast<int>(i);
          best_suff = suff;
        }
      }
      if (best < 0) break;
      const Set& x = sets[static_cast<std::size_t>(best)];
      used[static_cast<std::size_t>(best)] = 1;
      std::size_t single = x.end;
      if (rem_nodes <= 1)
        for (std::size_t i = x.begin; i < x.end; ++i)
          if (measure(cand_[i].first) >= rem_cpus &&
              (single == x.end || measure(cand_[i].first) < measure(cand_[single].first)))
            single = i;
      if (single != x.end) {
        chosen.push_back(cand_[single].first);
        break;
      }
      for (std::size_t i = x.begin; i < x.end && (rem_nodes > 0 || rem_cpus > 0); ++i) {
        chosen.push_back(cand_[i].first);
        --rem_nodes;
        rem_cpus -= measure(cand_[i].first);
      }
    }
    if (chosen.size() != k) return {};
    for (std::size_t i = 0; i < k; ++i) slice(chosen[i], s.slices[i]);
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
