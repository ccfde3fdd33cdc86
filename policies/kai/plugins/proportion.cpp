// KAI-Scheduler's proportion plugin (pkg/scheduler/plugins/proportion/): the queue tree's fair
// share (resource_division/resource_division.go, proportion.go setFairShareForQueues), the
// time-based fair share's decayed usage (docs/time-based-fairshare) and the per-node room of the
// capacity checks (capacity_policy). The job-level capacity checks are KaiPolicy::capacity in
// policy.hpp (inline: allocate calls them for every pending group).
#include <algorithm>
#include <cmath>
#include <vector>

#include "policies/kai/policy.hpp"

namespace headroom::policies::kai {

// Fair-share division (resource_division.go).

std::vector<std::int64_t> divide(const std::vector<DivisionEntry>& queues, std::int64_t total, double k_value,
                                 std::int64_t unit) {
  // The working lists are kept per thread for their capacity (kai divides every session).
  thread_local std::vector<std::int64_t> requestable, levels;
  thread_local std::vector<double> fraction, share;
  thread_local std::vector<std::size_t> unsat;
  const std::size_t n = queues.size();
  std::vector<std::int64_t> fs(n, 0);
  requestable.assign(n, 0);
  std::int64_t remaining = total;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& q = queues[i];
    requestable[i] = q.limit < 0 ? q.request : std::min(q.request, q.limit);
    const std::int64_t deserved = q.deserved < 0 ? total : q.deserved;
    fs[i] = std::max<std::int64_t>(0, std::min(deserved, requestable[i]));
    remaining -= fs[i];
  }
  levels.clear();
  for (const auto& q : queues) levels.push_back(q.priority);
  std::sort(levels.begin(), levels.end(), std::greater<>());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  fraction.assign(n, 0.0);
  for (std::int64_t level : levels) {
    auto unsatisfied = [&] {
      unsat.clear();
      for (std::size_t i = 0; i < n; ++i) {
        if (queues[i].priority != level) continue;
        const auto& q = queues[i];
        if (q.request <= fs[i] || (q.limit >= 0 && q.limit <= fs[i])) continue;
        unsat.push_back(i);
      }
    };
    while (remaining > 0) {
      unsatisfied();
      if (unsat.empty()) break;
      double weights = 0;
      for (auto i : unsat) weights += queues[i].weight;
      if (weights <= 0) break;
      share.assign(n, 0.0);
      double shares = 0;
      for (auto i : unsat) {
        const double nw = queues[i].weight / weights;
        share[i] = std::max(0.0, nw + k_value * (nw - queues[i].usage));
        shares += share[i];
      }
      if (shares <= 0) break;
      std::int64_t given = 0;
      bool took_less = false;
      const auto rem = static_cast<double>(remaining);
      for (auto i : unsat) {
        const double offer = rem * share[i] / shares;
        const std::int64_t want = requestable[i] - fs[i];
        if (static_cast<double>(want) <= offer) {
          fs[i] += want;
          given += want;
          took_less = took_less || static_cast<double>(want) < offer;
          fraction[i] = 0;
        } else {
          const auto whole = static_cast<std::int64_t>(std::floor(offer / static_cast<double>(unit))) * unit;
          fs[i] += whole;
          given += whole;
          fraction[i] = offer - static_cast<double>(whole);
        }
      }
      remaining -= given;
      if (!took_less || given == 0) break;
    }
    // The leftover of the floors, one unit at a time.
    while (remaining > 0) {
      unsatisfied();
      std::erase_if(unsat, [&](std::size_t i) { return requestable[i] <= fs[i] || queues[i].weight <= 0; });
      if (unsat.empty()) break;
      std::sort(unsat.begin(), unsat.end(), [&](std::size_t a, std::size_t b) {
        if (fraction[a] != fraction[b]) return fraction[a] > fraction[b];
        if (queues[a].creation != queues[b].creation) return queues[a].creation < queues[b].creation;
        return a < b;
      });
      for (auto i : unsat) {
        if (remaining == 0) break;
        const std::int64_t give = std::min(unit, remaining);  // a fraction of a unit when that is all
        fs[i] += give;
        remaining -= give;
        fraction[i] = 0;
      }
    }
  }
  return fs;
}

}  // namespace headroom::policies::kai

namespace headroom::policies::kai::detail {

void KaiPolicy::advance_usage(Tick now) {
  if (!cfg_.time_based_fairshare || now <= usage_at_) {
    usage_at_ = std::max(usage_at_, now);
    return;
  }
  const auto dt = static_cast<double>(now - usage_at_);
  double decay = 1.0, integral = dt;
  if (cfg_.half_life > 0) {
    const double h = static_cast<double>(cfg_.half_life);
    decay = std::pow(0.5, dt / h);
    integral = h / std::log(2.0) * (1.0 - decay);
  }
  for (int q : leaves_) nodes_[q].usage = nodes_[q].usage * decay + static_cast<double>(nodes_[q].alloc[0]) * integral;
  window_ = window_ * decay + integral;
  usage_at_ = now;
}

void KaiPolicy::compute_fair_shares(const ClusterView& view) {
  (void)view;
  // Usage of internal queues: the sum of their leaves'.
  std::vector<double>& usage = fair_usage_;  // kept for its capacity
  usage.assign(nodes_.size(), 0.0);
  for (int q : leaves_)
    for (int a = q; a >= 0; a = nodes_[a].parent) usage[static_cast<std::size_t>(a)] += nodes_[q].usage;
  const double capacity = static_cast<double>(total_[0]) * window_;
  nodes_[0].fair = total_;
  nodes_[0].allocatable = total_;
  if (division_memo_.size() < nodes_.size()) division_memo_.resize(nodes_.size());
  divide_children(0, usage, capacity);
}

namespace {

bool same_entries(const std::vector<DivisionEntry>& a, const std::vector<DivisionEntry>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const DivisionEntry& x, const DivisionEntry& y) {
    return x.deserved == y.deserved && x.limit == y.limit && x.request == y.request && x.weight == y.weight &&
           x.priority == y.priority && x.usage == y.usage && x.creation == y.creation;
  });
}

}  // namespace

void KaiPolicy::divide_children(int parent, const std::vector<double>& usage, double capacity) {
  const auto& kids = nodes_[parent].children;
  if (kids.empty()) return;
  for (int r = 0; r < kResources; ++r) {
    std::vector<DivisionEntry>& entries = division_entries_;  // kept for its capacity
    entries.clear();
    for (int c : kids) {
      const QNode& q = nodes_[c];
      DivisionEntry e;
      e.deserved = q.res[r].quota;
      e.limit = q.res[r].limit;
      e.request = q.alloc[r] + q.pending[r];
      e.weight = q.res[r].over_quota_weight;
      e.priority = q.priority;
      e.usage = r == 0 && capacity > 0 ? usage[static_cast<std::size_t>(c)] / capacity : 0.0;
      e.creation = q.creation;
      entries.push_back(e);
    }
    // divide is a function of its arguments only (k_value and the unit are fixed for the run): the
    // division of the last session is reused while they are the same (cpu and memory, not modelled,
    // always; GPUs between sessions where no queue's request or usage changed).
    DivisionMemo& memo = division_memo_[static_cast<std::size_t>(parent)][static_cast<std::size_t>(r)];
    if (!memo.valid || memo.total != nodes_[parent].fair[r] || !same_entries(memo.entries, entries)) {
      memo.fs = divide(entries, nodes_[parent].fair[r], cfg_.k_value, r == 0 && cfg_.gpu_sharing ? 1000 : 1);
      memo.entries = entries;
      memo.total = nodes_[parent].fair[r];
      memo.valid = true;
    }
    const std::vector<std::int64_t>& fs = memo.fs;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      QNode& q = nodes_[kids[i]];
      q.fair[r] = fs[i];
      const std::int64_t limit = q.res[r].limit < 0 ? kInf : q.res[r].limit;
      const std::int64_t deserved = q.res[r].quota < 0 ? kInf : q.res[r].quota;
      q.allocatable[r] = std::min(limit, std::max(deserved, fs[i]));
    }
  }
  for (int c : kids) divide_children(c, usage, capacity);
}

// The GPUs (milli) that gpu-memory pods of `u` may still take beside `other` without going over
// a limit, or for a non-preemptible group over a quota, at the queue or an ancestor; and the
// reason to give when a pod fits no node within it.
std::pair<std::int64_t, Reason> KaiPolicy::share_room(const Unit& u, std::int64_t other) const {
  std::int64_t room = kInf;
  Reason why = Reason::OverLimit;
  for (int q = u.queue; q > 0; q = nodes_[q].parent) {
    const QNode& n = nodes_[q];
    if (n.res[0].limit >= 0) room = std::min(room, n.res[0].limit - n.alloc[0] - other);
  }
  if (!u.preemptible()) {
    for (int q = u.queue; q > 0; q = nodes_[q].parent) {
      const QNode& n = nodes_[q];
      if (n.res[0].quota >= 0 && n.res[0].quota - n.np_alloc[0] - other < room) {
        room = n.res[0].quota - n.np_alloc[0] - other;
        why = Reason::NonPreemptibleOverQuota;
      }
    }
  }
  return {room, why};
}

}  // namespace headroom::policies::kai::detail
