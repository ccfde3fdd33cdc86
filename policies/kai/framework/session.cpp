// KAI-Scheduler's framework (pkg/scheduler/framework/): the policy's notifications, the session
// (schedulePeriod; the actions allocate, consolidation, reclaim, preempt, stalegangeviction in that
// order), the queue tree and pod-group bookkeeping, and the statement (base, reserve, evict,
// pipeline: what evictions free and what pipelined groups hold). Also make_policy.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/gpu_types.hpp"
#include "policies/kai/policy.hpp"

namespace headroom::policies::kai::detail {

// Why KAI could never run a gpu-memory pod, or nullopt. Without gpuSharing KAI's admission
// webhook refuses it (admission/webhook/v1alpha2/gpusharing); with it, a pod whose memory no pool
// it may use holds (as a share) waits forever in KAI, and headroom rejects it.
std::optional<std::string> KaiPolicy::memory_pod_rejection(const Job& j) const {
  if (!is_memory_pod(j)) return std::nullopt;
  if (!cfg_.gpu_sharing)
    return std::string("gpu_memory_mib needs gpuSharing: KAI refuses a gpu-memory pod while GPU sharing is disabled");
  for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
    if (pool_ok(p, j) && cluster_->spec().pools[p].units_per_gpu == 1 && share_milli(j, p) > 0) return std::nullopt;
  return "gpu_memory_mib " + std::to_string(j.gpu_memory_mib) +
         " is less than one GPU's memory on no pool it may use (GPU memory comes from the pool's gpu_type; a "
         "type without a memory figure counts 100 MiB, as a KAI node without the nvidia.com/gpu.memory label)";
}

void KaiPolicy::on_submit(const ClusterView& view, JobIndex j) {
  ensure(view);
  const Job& job = view.workload().jobs[j];
  const std::uint32_t u = unit_of(job, j);
  Unit& unit = units_[u];
  if (unit.members.empty()) {
    unit.queue = leaf_for(job.queue);
    unit.priority = cfg_.kind_priority[static_cast<std::size_t>(job.kind)];
    unit.created = job.submit;
    unit.min_member = job.group == models::kNone ? 1 : (job.gang_min > 0 ? job.gang_min : group_size_[job.group]);
  }
  unit.members.push_back(j);
  if (unit.members.size() == 2) ++member_changes_;  // its pods are no longer movable (consolidation)
  if (job.gpus <= 0) ++unit.members_without_gpus;
  larger_than_node_[j] = larger_than_every_node(job) ? 1 : 0;
  if (larger_than_node_[j] != 0) unit.larger_than_node = true;
  std::sort(unit.members.begin(), unit.members.end());
  unit.single = unit.members.size() == 1 ? j : models::kNoJob;
  const bool simple = unit.members.size() == 1 && job.gpus > 0 && !is_share(job) && job.gpu_type == 0 &&
                      job.node_set == 0 && job.cpus == 0 && job.memory_mib == 0 && !unit.larger_than_node;
  unit.simple_gpus = simple ? job.gpus : 0;
  unit.simple_multi = simple && multi_node(job);
  if (!nodes_[unit.queue].children.empty() || undeclared(unit.queue) || memory_pod_rejection(job).has_value() ||
      never_fits(view.cluster(), job, view.workload()).has_value()) {
    to_reject_.push_back(j);
    rekey_pending(u);
    return;
  }
  add_pending(view, j);
}

void KaiPolicy::on_requeue(const ClusterView& view, JobIndex j) { add_pending(view, j); }

void KaiPolicy::on_release(const ClusterView& view, JobIndex j) {
  advance_usage(view.now());
  node_changed(view.placement(j));
  Unit& u = units_[job_unit_[j]];
  if (terminating_[j]) {
    terminating_[j] = 0;
  } else {
    --u.running;
    add(u.running_req, held(j), -1);
    add_path(u.queue, &QNode::alloc, held(j), -1);
    if (!u.preemptible()) add_path(u.queue, &QNode::np_alloc, held(j), -1);
    tally_pools(u.queue, view.placement(j), -1);
  }
  releasing_.erase(j);
  ++base_version_;
  if (victim_of_[j] != kNoUnit) {
    Unit& p = units_[victim_of_[j]];
    if (p.outstanding_victims > 0) --p.outstanding_victims;
    victim_of_[j] = kNoUnit;
  }
  refresh(job_unit_[j], view.now());
}

// A pending pod removed before it ran (models::Job::withdraw_at): out of the pending counts.
void KaiPolicy::on_withdraw(const ClusterView& view, JobIndex j) {
  if (std::find(to_reject_.begin(), to_reject_.end(), j) != to_reject_.end()) return;  // never counted
  const Job& job = view.workload().jobs[j];
  Unit& u = units_[job_unit_[j]];
  --u.pending;
  count_pending(j, -1);
  add_path(u.queue, &QNode::pending, demand(job), -1);
  set_reason(j, Reason::None);
  refresh(job_unit_[j], view.now());
}

void KaiPolicy::on_end(const ClusterView& view, JobIndex j) {
  const Job& job = view.workload().jobs[j];
  if (view.state(j) == JobState::Completed && job.group != models::kNone) {
    ++units_[job_unit_[j]].succeeded;
    refresh(job_unit_[j], view.now());
  }
}

void KaiPolicy::schedule(Session& s) {
  ensure(s);
  const Tick now = s.now();
  const Tick period = cfg_.schedule_period;
  if (now > 0 && now % period != 0) {
    s.wake_at((now / period + 1) * period);
    return;
  }
  advance_usage(now);
  ++sessions_;
  for (JobIndex j : to_reject_) {
    if (s.state(j) != JobState::Pending) continue;
    const Job& job = s.workload().jobs[j];
    const Unit& u = units_[job_unit_[j]];
    if (!nodes_[u.queue].children.empty()) {
      s.reject(j, "queue \"" + nodes_[u.queue].name + "\" is not a leaf queue; only leaf queues hold jobs");
    } else if (undeclared(u.queue)) {
      s.reject(j, "queue \"" + nodes_[u.queue].name +
                      "\" is not declared; KAI schedules no pod group of a queue that does not exist");
    } else if (auto why = memory_pod_rejection(job)) {
      s.reject(j, *why);
    } else {
      s.reject(j, *never_fits(s.cluster(), job, s.workload()));
    }
  }
  to_reject_.clear();
  compute_fair_shares(s);
  protected_until_ = sim::kNever;

  allocate(s);
  // consolidation, reclaim, preempt
  std::vector<FailedUnit>& failed = failed_;
  int consolidations = 0, searches = 0;
  // Until one of them acts, nothing that their first checks read changes (a check that fails
  // changes nothing but the counts of attempts and searches), and every lone plain pod that
  // failed is still pending and placeable, as allocate left it.
  bool acted = false;
  std::int64_t all_pools_free = 0;  // what consolidate counts as eligible for a pod of no GPU type
  for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) all_pools_free += cluster_->pool_free_gpus(p);
  // Per leaf, what reclaim's and preempt's first checks read of it until something acts.
  walk_room_.assign(nodes_.size(), kInf);
  walk_lowest_running_.assign(nodes_.size(), std::numeric_limits<std::int32_t>::max());
  for (int q : leaves_) {
    const QNode& leaf = nodes_[q];
    if (active(0)) walk_room_[static_cast<std::size_t>(q)] = leaf.fair[0] - leaf.alloc[0];
    if (!leaf.running_units.empty())
      walk_lowest_running_[static_cast<std::size_t>(q)] = std::get<0>(*leaf.running_units.begin());
  }
  ++movable_epoch_;  // consolidation reads the nodes afresh
  // One entry: passed over while nothing has acted and nothing would be done for it.
  auto visit = [&](const FailedUnit f) {
    if (!acted && f.lone) {
      const bool consolidation_open = consolidations < kConsolidationJobsPerSession && cluster_->free_gpus() > 0 &&
                                      cfg_.max_consolidation_preemptees > 0;
      const bool search_open = searches < kVictimSearchesPerSession;
      if (!may_act(f, consolidation_open, search_open, all_pools_free)) return;
    }
    const std::uint32_t u = f.unit;
    Reason r = f.reason;
    if (!units_[u].in_pending || units_[u].pipelined) return;
    if (r == Reason::TopologyNoFit) r = Reason::NoFit;  // the solvers place inside the domains too
    if (r == Reason::NoFit && consolidations < kConsolidationJobsPerSession && cluster_->free_gpus() > 0) {
      if (consolidate(s, u, consolidations)) {
        acted = true;
        return;
      }
    }
    if ((r == Reason::NoFit || r == Reason::OverLimit) && searches < kVictimSearchesPerSession) {
      if (r == Reason::NoFit && reclaim(s, u, searches)) {
        acted = true;
        return;
      }
      if (preempt(s, u, searches)) {
        acted = true;
        return;
      }
    }
  };
  // failed and failed_runs_ may grow (and move) while an entry is visited (resume_walk).
  for (std::size_t i = 0; i < failed.size(); ++i) {
    const std::uint32_t run = failed[i].run;
    if (run == kNoRun) {
      visit(failed[i]);
      continue;
    }
    if (!acted) {  // a run none of whose entries anything would be done for
      const bool consolidation_open = consolidations < kConsolidationJobsPerSession && cluster_->free_gpus() > 0 &&
                                      cfg_.max_consolidation_preemptees > 0;
      const bool search_open = searches < kVictimSearchesPerSession;
      if (!run_may_act(failed_runs_[run], consolidation_open, search_open, all_pools_free)) continue;
    }
    for (std::uint32_t off = 0; off < failed_runs_[run].end - failed_runs_[run].begin; ++off) {
      const QNode::PendKey k = run_key(failed_runs_[run], off);
      if (!k.erased) visit(run_entry(failed_runs_[run], k));
    }
  }
  cut_ = false;                           // the rest of the walk is no longer read
  live_runs_from_ = failed_runs_.size();  // nor failed_
  stale_gang_eviction(s);
  if (!stale_.empty()) s.wake_at(std::max(now, stale_.begin()->first + cfg_.staleness_grace));
  if (protected_until_ != sim::kNever) s.wake_at(protected_until_);
}

void KaiPolicy::ensure(const ClusterView& view) {
  if (initialised_) return;
  initialised_ = true;
  const auto& w = view.workload();
  cluster_ = &view.cluster();
  workload_ = &w;
  const std::size_t n = w.jobs.size();
  job_unit_.assign(n, kNoUnit);
  units_.reserve(n);  // at most one unit a job: units_ never moves its units as it grows
  held_milli_.assign(n, 0);
  pod_pools_.assign(n, 0);
  pool_gpu_memory_.assign(cluster_->pool_count(), 100);
  for (models::PoolId p = 0; p < cluster_->pool_count(); ++p) {
    const models::GpuType* type = models::find_gpu_type(cluster_->spec().pools[p].gpu_type);
    if (type == nullptr || type->memory_gib <= 0) continue;
    const auto mib = static_cast<std::int64_t>(std::floor(type->memory_gib * 1024.0));
    pool_gpu_memory_[p] = std::max<std::int64_t>(100, mib - mib % 100);
  }
  terminating_.assign(n, 0);
  larger_than_node_.assign(n, 0);
  victim_of_.assign(n, kNoUnit);
  reasons_.assign(n, Reason::None);
  group_size_.assign(w.groups.size(), 0);
  group_unit_.assign(w.groups.size(), kNoUnit);
  for (const auto& j : w.jobs)
    if (j.group != models::kNone && j.group < group_size_.size()) ++group_size_[j.group];
  // The tree: node 0 is the root; declared queues in creation order.
  nodes_.emplace_back();
  nodes_[0].name = "<root>";
  nodes_[0].res.fill(QueueResource{-1, 1, -1});
  for (const auto& q : cfg_.queues) {
    QNode node;
    node.name = q.name;
    node.priority = q.priority;
    node.res = q.resources;
    if (cfg_.gpu_sharing) {  // GPU amounts in milli-GPUs
      if (node.res[0].quota > 0) node.res[0].quota *= 1000;
      if (node.res[0].limit > 0) node.res[0].limit *= 1000;
    }
    node.declared = true;
    node.creation = static_cast<int>(nodes_.size());
    by_name_[q.name] = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(node));
  }
  for (std::size_t i = 0; i < cfg_.queues.size(); ++i) {
    const int id = static_cast<int>(i) + 1;
    const auto& parent = cfg_.queues[i].parent;
    nodes_[id].parent = parent.empty() ? 0 : by_name_.at(parent);
    nodes_[nodes_[id].parent].children.push_back(id);
  }
  // Min runtimes are inherited from the closest ancestor that sets them.
  for (std::size_t i = 0; i < cfg_.queues.size(); ++i) {
    const int id = static_cast<int>(i) + 1;
    Tick pmr = -1, rmr = -1;
    for (int a = id; a > 0; a = nodes_[a].parent) {
      const auto& q = cfg_.queues[static_cast<std::size_t>(a - 1)];
      if (pmr < 0) pmr = q.preempt_min_runtime;
      if (rmr < 0) rmr = q.reclaim_min_runtime;
    }
    nodes_[id].preempt_min_runtime = pmr < 0 ? cfg_.preempt_min_runtime : pmr;
    nodes_[id].reclaim_min_runtime = rmr < 0 ? cfg_.reclaim_min_runtime : rmr;
  }
  for (std::size_t i = 1; i < nodes_.size(); ++i)
    for (int a = nodes_[i].parent; a > 0; a = nodes_[a].parent) ++nodes_[i].depth;
  rebuild_leaves();
  for (models::PoolId p = 0; p < cluster_->pool_count(); ++p)
    largest_gpus_per_node_ = std::max(largest_gpus_per_node_, cluster_->spec().pools[p].gpus_per_node);
  total_ = {view.cluster().total_gpus() * (cfg_.gpu_sharing ? 1000 : 1), 0, 0};
  for (const auto& node : view.cluster().nodes()) {
    total_[1] += std::int64_t{node.cpus} * 1000;
    total_[2] += node.memory_mib;
  }
}

void KaiPolicy::rebuild_leaves() {
  leaves_.clear();
  for (std::size_t i = 1; i < nodes_.size(); ++i)
    if (nodes_[i].children.empty()) leaves_.push_back(static_cast<int>(i));
  for (std::size_t i = 1; i < nodes_.size(); ++i) {
    QNode& q = nodes_[i];
    q.unlimited = q.unquoted = true;
    for (int a = static_cast<int>(i); a > 0; a = nodes_[a].parent) {
      for (int r = 0; r < kResources; ++r) {
        if (nodes_[a].res[r].limit >= 0) q.unlimited = false;
        if (nodes_[a].res[r].quota >= 0) q.unquoted = false;
      }
    }
  }
}

// A queue the site does not declare while it declares others: KAI's scheduler cache snapshots
// only pod groups whose queue exists (pkg/scheduler/cache/cluster_info), so such a job never
// runs, and headroom rejects it. With no queue declared (a trace alone) every queue name is a
// queue of its own with the Helm defaults; "default" and "default-queue" stand for a pod
// without a queue label.
bool KaiPolicy::undeclared(int queue) const {
  const QNode& q = nodes_[static_cast<std::size_t>(queue)];
  return !q.declared && !cfg_.queues.empty() && q.name != "default" && q.name != "default-queue";
}

int KaiPolicy::leaf_for(models::QueueId qid) {
  std::string name = workload_->queues.size() > qid ? workload_->queues.name(qid) : std::string("default");
  // A job whose log recorded no queue (models::kUnknownName, unless declared under that name) has
  // no queue label, and KAI's podgrouper gives its pod group "default-queue"
  // (pkg/podgrouper/podgrouper/plugins/defaultgrouper: CalcPodGroupQueue).
  if (name == models::kUnknownName && !by_name_.count(name)) name = "default-queue";
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  // An undeclared queue: top level, Helm defaults (quota 0, overQuotaWeight 1, limit -1).
  QNode node;
  node.name = name;
  node.res[0] = QueueResource{0, 1, -1};
  node.res[1] = node.res[2] = QueueResource{-1, 1, -1};
  node.parent = 0;
  node.creation = static_cast<int>(nodes_.size());
  node.preempt_min_runtime = cfg_.preempt_min_runtime;
  node.reclaim_min_runtime = cfg_.reclaim_min_runtime;
  const int id = static_cast<int>(nodes_.size());
  nodes_.push_back(std::move(node));
  nodes_[0].children.push_back(id);
  by_name_[name] = id;
  rebuild_leaves();
  return id;
}

std::uint32_t KaiPolicy::unit_of(const Job& job, JobIndex j) {
  if (job_unit_[j] != kNoUnit) return job_unit_[j];
  std::uint32_t u = kNoUnit;
  if (job.group != models::kNone && job.group < group_unit_.size()) {
    if (group_unit_[job.group] == kNoUnit) {
      group_unit_[job.group] = static_cast<std::uint32_t>(units_.size());
      units_.emplace_back();
    }
    u = group_unit_[job.group];
  } else {
    u = static_cast<std::uint32_t>(units_.size());
    units_.emplace_back();
  }
  job_unit_[j] = u;
  return u;
}

void KaiPolicy::add_pending(const ClusterView& view, JobIndex j) {
  Unit& u = units_[job_unit_[j]];
  ++u.pending;
  count_pending(j, 1);
  add_path(u.queue, &QNode::pending, demand(view.workload().jobs[j]), 1);
  refresh(job_unit_[j], view.now());
}

// Puts a pending unit's key back when its copy of the unit's single and simple_* is out of date
// (a member was added that does not wait); its place in the order is the same.
void KaiPolicy::rekey_pending(std::uint32_t id) {
  Unit& u = units_[id];
  if (!u.in_pending) return;
  const QNode::PendKey pk = pend_key(u, u.pkey.tier, id);
  if (pk == u.pkey) return;
  copy_failed_runs();
  QNode& leaf = nodes_[u.queue];
  leaf.pending_units.erase(u.pkey);
  leaf.pending_units.insert(pk, leaf.cursor);
  u.pkey = pk;
}

// Re-keys the unit in its leaf's pending and running sets and its staleness.
void KaiPolicy::refresh(std::uint32_t id, Tick now) {
  Unit& u = units_[id];
  QNode& leaf = nodes_[u.queue];
  const bool pend = u.pending > 0 && !u.pipelined;
  const int tier = u.running < u.min_member ? 0 : (u.running == u.min_member ? 1 : 2);
  const QNode::PendKey pk = pend_key(u, tier, id);
  // The runs of failed_ read the pending lists as the walk left them: a key inserted (which moves
  // the keys after it) or, after allocate, erased.
  if ((pend && (!u.in_pending || pk != u.pkey)) || (!in_allocate_ && u.in_pending && !pend)) copy_failed_runs();
  if (u.in_pending && (!pend || pk != u.pkey)) {
    leaf.pending_units.erase(u.pkey);  // the walk passes over it (PendingList)
    u.in_pending = false;
  }
  if (pend && !u.in_pending) {
    u.pkey = pk;
    leaf.pending_units.insert(pk, leaf.cursor);
    u.in_pending = true;
  }
  const bool run = u.running > 0;
  const QNode::RunKey rk{u.priority, -u.created, -static_cast<std::int64_t>(id)};
  if (u.in_running && !run) {
    leaf.running_units.erase(u.rkey);
    u.in_running = false;
  }
  if (run && !u.in_running) {
    u.rkey = rk;
    leaf.running_units.insert(rk);
    u.in_running = true;
  }
  const bool stale = u.running > 0 && u.running + u.succeeded < u.min_member;
  if (stale && u.stale_since < 0) {
    u.stale_since = now;
    stale_.insert({now, id});
  } else if (!stale && u.stale_since >= 0) {
    stale_.erase({u.stale_since, id});
    u.stale_since = -1;
  }
}

// A pod larger than every node is counted nowhere: it never fits (all_would_fail need not wait
// for it).
void KaiPolicy::count_pending(JobIndex j, std::int64_t sign) {
  if (larger_than_node_[j] != 0) return;
  const Job& job = workload_->jobs[j];
  const bool simple = job.group == models::kNone && job.gpus > 0 && !is_share(job) && job.gpu_type == 0 &&
                      job.node_set == 0 && job.cpus == 0 && job.memory_mib == 0;
  if (!simple) {
    other_pending_ += sign;
  } else if (multi_node(job)) {
    if ((multi_pending_[job.gpus] += sign) == 0) multi_pending_.erase(job.gpus);
  } else {
    if (single_pending_.size() <= static_cast<std::size_t>(job.gpus)) single_pending_.resize(job.gpus + 1u, 0);
    single_pending_[static_cast<std::size_t>(job.gpus)] += sign;
  }
}

// Resources that pipelined groups will bind to once their victims are gone.
void KaiPolicy::reserve(const models::Placement& p, std::int64_t sign) {
  ++base_version_;
  for (const auto& sl : p) {
    Free& r = reserved_[sl.node];
    r.node = sl.node;
    r.gpus += sign * sl.gpus;
    r.cpus += sign * sl.cpus;
    r.memory += sign * sl.memory_mib;
    if (sl.gpu_milli > 0) {
      if (r.dev.empty()) r.dev.assign(static_cast<std::size_t>(cluster_->node(sl.node).gpus), 0);
      r.dev[static_cast<std::size_t>(sl.device)] += static_cast<std::int32_t>(sign) * sl.gpu_milli;
    }
    if (r.gpus == 0 && r.cpus == 0 && r.memory == 0 &&
        std::all_of(r.dev.begin(), r.dev.end(), [](std::int32_t m) { return m == 0; }))
      reserved_.erase(sl.node);
  }
}

// A fresh statement: the cluster plus what the victims of pipelined groups are releasing, minus
// the reservations of those groups.
// With `now`, only what is free at this instant (for binding rather than pipelining).
void KaiPolicy::base_into(Overlay& ov, bool now) const {
  ov.nodes.clear();
  ov.reset_index();
  for (const auto& [n, r] : reserved_) {
    const auto& node = cluster_->node(n);
    ov.nodes.push_back(Free{n, node.free_gpus - r.gpus, node.free_cpus - r.cpus, node.free_memory_mib - r.memory, {}});
    for (std::size_t d = 0; d < r.dev.size(); ++d)
      if (r.dev[d] != 0) Overlay::share(*cluster_, ov.nodes.back(), static_cast<std::int32_t>(d), r.dev[d]);
  }
  for (JobIndex j : releasing_) ov.take(*cluster_, view_->placement(j), -1);
  if (now) {
    for (Free& f : ov.nodes) {
      const auto& node = cluster_->node(f.node);
      f.gpus = std::min<std::int64_t>(f.gpus, node.free_gpus);
      f.cpus = std::min<std::int64_t>(f.cpus, node.free_cpus);
      f.memory = std::min(f.memory, node.free_memory_mib);
      for (std::size_t d = 0; d < f.dev.size(); ++d)
        f.dev[d] = std::max(f.dev[d], cluster_->device_milli(f.node, static_cast<std::int32_t>(d)));
    }
  }
}

void KaiPolicy::evict(Session& s, std::uint32_t victim, JobIndex by, std::uint32_t by_unit, const std::string& why) {
  resume_walk(s);  // failed_ as the whole walk makes it, before anything changes
  ++movable_epoch_;
  Unit& v = units_[victim];
  for (JobIndex j : active_members(v)) {
    const std::string err = s.preempt(j, PreemptMode::Requeue, cfg_.termination_grace, by, why);
    if (!err.empty()) throw sim::InternalError("kai: preempt refused: " + err);
    terminating_[j] = 1;
    node_changed(s.placement(j));
    --v.running;
    add(v.running_req, held(j), -1);
    add_path(v.queue, &QNode::alloc, held(j), -1);
    if (!v.preemptible()) add_path(v.queue, &QNode::np_alloc, held(j), -1);
    tally_pools(v.queue, s.placement(j), -1);
    if (by_unit != kNoUnit) {
      releasing_.insert(j);
      ++base_version_;
      victim_of_[j] = by_unit;
      ++units_[by_unit].outstanding_victims;
    }
  }
  refresh(victim, s.now());
}

// The preemptor waits for its victims with its resources reserved in its queue.
void KaiPolicy::pipeline(Session& s, std::uint32_t id, const std::vector<JobIndex>& pods,
                         const std::vector<models::Placement>& plan) {
  resume_walk(s);
  Unit& u = units_[id];
  for (const auto& p : plan) reserve(p, 1);
  plans_[id] = plan;
  const Amounts req = pods_demand(pods);
  u.pipelined = true;
  u.reserved = req;
  add_path(u.queue, &QNode::pending, req, -1);
  add_path(u.queue, &QNode::alloc, req, 1);
  if (!u.preemptible()) add_path(u.queue, &QNode::np_alloc, req, 1);
  pipelined_.insert(id);
  for (JobIndex j : pods) set_reason(j, Reason::Pipelined);
  refresh(id, s.now());
}

namespace {

// Binds the view for the duration of each notification.
class BoundKai final : public Policy {
 public:
  explicit BoundKai(Config cfg) : inner_(std::move(cfg)) {}
  std::string_view name() const override { return "kai"; }
  // Access to a KAI queue is Kubernetes RBAC on the project's namespace: refused at submit.
  Denial deny(const models::Workload& w, const Job& job) const override {
    return {false, "permission denied: pods is forbidden: User \"" + name_of(w.tenants, job.tenant) +
                       "\" cannot create resource \"pods\" for queue " + name_of(w.queues, job.queue) +
                       " (RBAC, 403 Forbidden at submit)"};
  }
  void on_submit(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_submit(v, j);
  }
  void on_end(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_end(v, j);
  }
  void on_withdraw(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_withdraw(v, j);
  }
  void on_requeue(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_requeue(v, j);
  }
  void on_release(const ClusterView& v, JobIndex j) override {
    inner_.bind(&v, nullptr);
    inner_.on_release(v, j);
  }
  void schedule(Session& s) override {
    inner_.bind(&s, &s);
    inner_.schedule(s);
    inner_.bind(nullptr, nullptr);
  }
  const KaiPolicy& inner() const { return inner_; }

 private:
  KaiPolicy inner_;
};

}  // namespace

}  // namespace headroom::policies::kai::detail

namespace headroom::policies::kai {

using detail::BoundKai;
using detail::reason_text;

std::string last_pending_reason(const Policy& policy, JobIndex job) {
  const auto* p = dynamic_cast<const BoundKai*>(&policy);
  if (p == nullptr) return {};
  return std::string(reason_text(p->inner().reason(job)));
}

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<BoundKai>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed) {
  (void)seed;  // every tie breaks on queue creation order or job / node index
  return make_policy(parse_config(params));
}

}  // namespace headroom::policies::kai
