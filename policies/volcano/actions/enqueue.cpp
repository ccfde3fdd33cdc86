// actions/enqueue/enqueue.go, with the JobEnqueueable functions of overcommit, proportion and
// capacity (framework/session_plugins.go JobEnqueueable) and the per-queue lists of PodGroups
// waiting for it.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

PendEntry VolcanoPolicy::pend_key(std::uint32_t gi) const {
  const Group& g = groups_[gi];
  PendEntry e;
  for (std::size_t i = 0; i < key_fns_.size(); ++i) {
    switch (key_fns_[i]) {
      case JobOrderFn::Priority: e.key[i] = -static_cast<double>(g.priority); break;
      case JobOrderFn::Gang: e.key[i] = job_ready(g) ? 1 : 0; break;
      case JobOrderFn::Drf: e.key[i] = job_share(g); break;
      case JobOrderFn::Sla:
        e.key[i] = g.sla_wait > 0 ? static_cast<double>(g.created + g.sla_wait) : std::numeric_limits<double>::max();
        break;
    }
  }
  e.created = g.created;
  e.uid = g.uid;
  e.gi = gi;
  return e;
}

void VolcanoPolicy::block_update(PendBlock& b) const {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  b.overcommit = b.capability = b.irregular = 0;
  b.overcommit_min = b.capability_min = kMax;
  b.capability_max = {};
  b.max_seq = 0;
  for (const PendEntry& e : b.e) block_add(b, e);
}

void VolcanoPolicy::block_add(PendBlock& b, const PendEntry& e) const {
  const Group& g = groups_[e.gi];
  b.max_seq = std::max(b.max_seq, e.seq);
  if (!g.has_min_res || g.min_res[0] <= 0 || (sla_enqueue_ && g.sla_due)) {
    ++b.irregular;
  } else if (g.enqueue_reason == kEnqueueOvercommit) {
    ++b.overcommit;
    b.overcommit_min = std::min(b.overcommit_min, g.min_res[0]);
  } else if (g.enqueue_reason == kEnqueueCapability) {
    ++b.capability;
    b.capability_min = std::min(b.capability_min, g.min_res[0]);
    for (int d = 0; d < kDims; ++d) b.capability_max[d] = std::max(b.capability_max[d], g.min_res[d]);
  } else {
    ++b.irregular;
  }
}

// Every entry of the block would be refused for the reason enqueue last gave it: those refused
// by overcommit for GPUs are still (their smallest GPU request is), and those refused by
// proportion's capability still pass overcommit (their largest requests do) and are still
// refused for GPUs (their smallest GPU request is). The checks are enqueue_verdict's.
bool VolcanoPolicy::block_refused_again(const PendBlock& b, std::uint32_t q) const {
  if (b.irregular > 0) return false;
  if (b.overcommit > 0) {
    if (!overcommit_) return false;
    const double idle = static_cast<double>(total_[0]) * cfg_.overcommit_factor - static_cast<double>(used_[0]);
    if (!(static_cast<double>(inqueue_total_[0] + b.overcommit_min) > idle + kEps)) return false;
  }
  if (b.capability > 0) {
    const QueueS& qs = queues_[q];
    if (!proportion_enqueue_ || qs.conf.state != QueueState::Open) return false;
    if (overcommit_) {
      for (int d = 0; d < kDims; ++d) {
        if (b.capability_max[d] <= 0) continue;
        const double idle = static_cast<double>(total_[d]) * cfg_.overcommit_factor - static_cast<double>(used_[d]);
        if (static_cast<double>(inqueue_total_[d] + b.capability_max[d]) > idle + kEps) return false;
      }
    }
    const double r = static_cast<double>(b.capability_min + qs.allocated[0] + qs.inqueue[0] - qs.elastic[0]);
    if (!(r > qs.real_cap[0] + kEps)) return false;
  }
  return true;
}

// The first block whose last entry is not before `e` (the last block when none).
std::size_t VolcanoPolicy::pend_block(const PendList& l, const PendEntry& e) {
  std::size_t lo = 0, hi = l.blocks.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (entry_less(l.blocks[mid].e.back(), e))
      lo = mid + 1;
    else
      hi = mid;
  }
  return std::min(lo, l.blocks.size() - 1);
}

void VolcanoPolicy::pend_insert(std::uint32_t gi) {
  Group& g = groups_[gi];
  PendList& l = pend_[g.queue];
  PendEntry e = pend_key(gi);
  e.seq = ++pend_seq_;
  l.max_seq = e.seq;
  g.entry = e;
  g.in_pend = true;
  ++l.size;
  if (l.blocks.empty()) {
    l.blocks.emplace_back();
    block_update(l.blocks[0]);
  }
  const std::size_t bi = l.blocks[0].e.empty() ? 0 : pend_block(l, e);
  PendBlock& b = l.blocks[bi];
  b.e.insert(std::upper_bound(b.e.begin(), b.e.end(), e, entry_less), e);
  block_add(b, e);
  if (b.e.size() > 2 * kBlock) {
    PendBlock tail;
    tail.e.assign(b.e.begin() + static_cast<std::ptrdiff_t>(kBlock), b.e.end());
    b.e.resize(kBlock);
    block_update(b);
    block_update(tail);
    l.blocks.insert(l.blocks.begin() + static_cast<std::ptrdiff_t>(bi) + 1, std::move(tail));
  }
}

// The enqueue refusal a listed group carries: the last pass over its queue's, if it saw the
// group, else its own.
std::uint64_t VolcanoPolicy::enqueue_memo(const PendList& l, const PendEntry& e) const {
  return l.walked_key != UINT64_MAX && e.seq <= l.walked_seq ? l.walked_key : groups_[e.gi].enqueue_failed;
}

void VolcanoPolicy::pend_erase(std::uint32_t gi) {
  Group& g = groups_[gi];
  PendList& l = pend_[g.queue];
  g.enqueue_failed = enqueue_memo(l, g.entry);
  g.in_pend = false;
  const std::size_t bi = pend_block(l, g.entry);
  PendBlock& b = l.blocks[bi];
  auto it = std::lower_bound(b.e.begin(), b.e.end(), g.entry, entry_less);
  HEADROOM_ASSERT(it != b.e.end() && it->gi == gi, "volcano: enqueue list out of order");
  b.e.erase(it);
  --l.size;
  if (b.e.empty())
    l.blocks.erase(l.blocks.begin() + static_cast<std::ptrdiff_t>(bi));
  else
    block_update(b);
}

// Keys that moved (a group touched earlier in this session; the cluster's size changed under
// drf's share): the group is listed again.
void VolcanoPolicy::pend_rekey(std::uint32_t gi) {
  const PendEntry e = pend_key(gi);
  const PendEntry& old = groups_[gi].entry;
  if (e.key == old.key && e.created == old.created && e.uid == old.uid) return;
  pend_erase(gi);
  pend_insert(gi);
}

// Volcano pops queues by QueueOrder and one PodGroup of the queue by JobOrder, then pushes the
// queue back; no order key moves during enqueue (it changes no allocation), so each queue's
// PodGroups come in JobOrder, one queue after the other. A refusal stays valid until something
// is released: within an epoch, total x factor - used - inqueue and a queue's allocated +
// inqueue - elastic only move against admission (the fit key memo). The PendList walk passes
// over what changes nothing: entries refused at this fit key, and blocks whose PodGroups would
// be refused for the reason they were given last time (block_refused_again; telling them
// again would record nothing).
// Every PodGroup in the PendLists, in list order (a copy: callers change the lists).
std::vector<std::uint32_t> VolcanoPolicy::pending_groups() const {
  std::vector<std::uint32_t> listed;
  for (const PendList& l : pend_)
    for (const PendBlock& b : l.blocks)
      for (const PendEntry& e : b.e) listed.push_back(e.gi);
  return listed;
}

void VolcanoPolicy::enqueue(Session& s) {
  if (total_ != keys_total_) {
    keys_total_ = total_;
    for (std::uint32_t gi : pending_groups()) pend_rekey(gi);
  }
  for (std::size_t i = 0; i < dirty_.size(); ++i)
    if (groups_[dirty_[i]].in_pend) pend_rekey(dirty_[i]);
  auto qcmp = [this](std::uint32_t a, std::uint32_t b) { return queue_cmp(a, b); };
  std::vector<std::uint32_t> qheap;
  for (std::uint32_t q = 0; q < pend_.size(); ++q) {
    const PendList& l = pend_[q];
    if (l.size > 0 && (l.walked_key != fit_key_ || l.max_seq > l.walked_seq)) heap_push(qheap, q, qcmp);
  }
  while (!qheap.empty()) enqueue_queue(s, heap_pop(qheap, qcmp));
  // The groups admitted now count in their queues' requests from here (their pods would be
  // created); proportion's deserved is computed again with them, as the next session would.
  if (unborn_admitted_) {
    unborn_admitted_ = false;
    compute_deserved();
  }
}

void VolcanoPolicy::enqueue_queue(Session& s, std::uint32_t q) {
  PendList& l = pend_[q];
  const std::uint64_t key = fit_key_;
  const bool seen = l.walked_key == key;
  std::vector<std::uint32_t> admitted;
  for (PendBlock& b : l.blocks) {
    if (seen && b.max_seq <= l.walked_seq) continue;
    if (block_refused_again(b, q)) continue;
    bool told = false;
    for (const PendEntry& e : b.e) {
      if (enqueue_memo(l, e) == key) continue;
      Group& g = groups_[e.gi];
      const std::uint32_t verdict = enqueue_verdict(g, q);
      if (verdict == kEnqueueOk) {
        g.phase = Phase::Inqueue;
        touch(e.gi);
        set_live(e.gi, true);
        changed_ = true;
        if (!capacity_ && g.unborn != Res{}) {
          queues_[q].request = add(queues_[q].request, g.unborn);
          unborn_admitted_ = true;
        }
        if (g.has_min_res) {
          inqueue_total_ = add(inqueue_total_, g.min_res);
          leaf_up(q, [&](std::uint32_t a) {
            queues_[a].inqueue = add(queues_[a].inqueue, g.min_res);
            return false;
          });
        }
        admitted.push_back(e.gi);
        continue;
      }
      g.enqueue_failed = key;
      if (verdict == g.enqueue_reason) continue;  // its tasks were told so already
      const std::string why = enqueue_reason_text(verdict, q);
      for (JobIndex j : g.pending) s.pending_reason(j, why);
      g.enqueue_reason = verdict;
      told = true;
    }
    if (told) block_update(b);
  }
  for (std::uint32_t gi : admitted) pend_erase(gi);
  l.walked_key = key;
  l.walked_seq = pend_seq_;
}

// JobEnqueueable over the plugins: kEnqueueOk or the refusal.
std::uint32_t VolcanoPolicy::enqueue_verdict(const Group& g, std::uint32_t q) const {
  if (g.has_min_res) {
    if (overcommit_ && refuses(g, overcommit_tier_)) {
      for (int d = 0; d < kDims; ++d) {
        if (g.min_res[d] <= 0) continue;
        const double idle = static_cast<double>(total_[d]) * cfg_.overcommit_factor - static_cast<double>(used_[d]);
        if (static_cast<double>(inqueue_total_[d] + g.min_res[d]) > idle + kEps)
          return kEnqueueOvercommit + static_cast<std::uint32_t>(d);
      }
    }
    if (proportion_enqueue_ && refuses(g, proportion_tier_)) {
      const QueueS& qs = queues_[q];
      if (qs.conf.state != QueueState::Open) return kEnqueueClosed;
      for (int d = 0; d < kDims; ++d) {
        if (g.min_res[d] <= 0) continue;
        const double r = static_cast<double>(g.min_res[d] + qs.allocated[d] + qs.inqueue[d] - qs.elastic[d]);
        if (r > qs.real_cap[d] + kEps) return kEnqueueCapability;
      }
    }
    if (capacity_enqueue_ && refuses(g, capacity_tier_))
      if (const std::uint32_t b = capacity_enqueue_block(q, g.min_res); b != kNoQueue) return kEnqueueCapacity + b;
  } else if (((proportion_enqueue_ && refuses(g, proportion_tier_)) ||
              (capacity_enqueue_ && refuses(g, capacity_tier_))) &&
             queues_[q].conf.state != QueueState::Open) {
    return kEnqueueClosedNoMin;
  }
  return kEnqueueOk;
}

std::string VolcanoPolicy::enqueue_reason_text(std::uint32_t verdict, std::uint32_t q) const {
  const QueueS& qs = queues_[q];
  if (verdict < kEnqueueClosed)
    return std::string("volcano enqueue: overcommit: inqueue minResources + this PodGroup's exceed ") +
           "total x overcommit-factor - used (" + kDimName[verdict - kEnqueueOvercommit] + ")";
  if (verdict == kEnqueueClosed) return "volcano enqueue: queue " + qs.name + " is not Open (proportion)";
  if (verdict == kEnqueueCapability)
    return "volcano enqueue: queue " + qs.name + " would exceed its capability (proportion)";
  if (verdict == kEnqueueClosedNoMin)
    return "volcano enqueue: queue " + qs.name + " is not Open (" + (capacity_enqueue_ ? "capacity" : "proportion") +
           ")";
  return capacity_refusal("volcano enqueue", q, verdict - kEnqueueCapacity);
}

}  // namespace headroom::policies::volcano::detail
