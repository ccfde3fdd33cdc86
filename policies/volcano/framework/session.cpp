// framework/session.go (OpenSession, CloseSession: the snapshot of jobs, queues and nodes the
// actions read), framework/statement.go (Allocate, Pipeline, Evict; Commit and Discard), the
// scheduler loop (scheduler.go runOnce, every schedule-period) and the Job admission webhook.
#include <algorithm>
#include <charconv>
#include <functional>
#include <string>
#include <utility>

#include "policies/volcano/policy.hpp"

namespace headroom::policies::volcano::detail {

VolcanoPolicy::VolcanoPolicy(Config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.tiers.empty()) cfg_.tiers = default_tiers();
  enqueue_listed_ = std::find(cfg_.actions.begin(), cfg_.actions.end(), Action::Enqueue) != cfg_.actions.end();
  for (const auto& tier : cfg_.tiers)
    for (const auto& p : tier) {
      if (p.name == "gang") gang_ = true;
      if (p.name == "proportion") proportion_ = true;
      if (p.name == "overcommit" && p.job_enqueued) overcommit_ = true;
      if (p.name == "proportion" && p.job_enqueued) proportion_enqueue_ = true;
      if (p.name == "capacity") capacity_ = true;
      if (p.name == "capacity" && p.job_enqueued) capacity_enqueue_ = true;
      if (p.name == "capacity" && p.hierarchy) hierarchy_ = true;
      if (p.name == "drf" && p.hierarchy) hdrf_ = true;
      if (p.queue_order && p.name == "drf" && p.hierarchy) queue_order_.push_back(QueueOrderFn::Hdrf);
      if (p.queue_order && p.name == "capacity") queue_order_.push_back(QueueOrderFn::Capacity);
      if (p.queue_order && p.name == "proportion") queue_order_.push_back(QueueOrderFn::Proportion);
      if (p.name == "binpack" && p.node_order) binpack_ = true;
      if (p.name == "nodeorder" && p.node_order) nodeorder_ = true;
      if (p.name == "priority" && p.task_order) task_priority_ = true;
      if (p.job_order && p.name == "priority") job_order_.push_back(JobOrderFn::Priority);
      if (p.job_order && p.name == "gang") job_order_.push_back(JobOrderFn::Gang);
      if (p.job_order && p.name == "drf") job_order_.push_back(JobOrderFn::Drf);
      if (p.job_order && p.name == "sla" && (cfg_.sla_waiting_time > 0 || cfg_.sla_annotation_time > 0))
        job_order_.push_back(JobOrderFn::Sla);
      if (p.name == "network-topology-aware") nta_ = true;
    }
  // Tier by tier (framework/session_plugins.go JobEnqueueable, JobPipelined): the first tier of each.
  int gang_tier = -1, sla_tier = -1;
  for (std::size_t t = 0; t < cfg_.tiers.size(); ++t)
    for (const auto& p : cfg_.tiers[t]) {
      const int ti = static_cast<int>(t);
      auto first = [&](int& at) {
        if (at < 0) at = ti;
      };
      if (p.name == "gang") first(gang_tier);
      if (p.name == "sla") first(sla_tier);
      if (p.name == "sla" && p.job_enqueued) first(sla_enqueue_tier_);
      if (p.name == "overcommit" && p.job_enqueued) first(overcommit_tier_);
      if (p.name == "proportion" && p.job_enqueued) first(proportion_tier_);
      if (p.name == "capacity" && p.job_enqueued) first(capacity_tier_);
    }
  sla_ = sla_tier >= 0 && (cfg_.sla_waiting_time > 0 || cfg_.sla_annotation_time > 0);
  sla_pipelined_ = sla_ && (gang_tier < 0 || sla_tier < gang_tier);
  sla_enqueue_ = sla_ && sla_enqueue_tier_ >= 0 &&
                 std::max({overcommit_tier_, proportion_tier_, capacity_tier_}) > sla_enqueue_tier_;
  sla_timed_ = sla_enqueue_ || sla_pipelined_;
  // A plugin listed again never decides a JobOrder comparison the first one left tied.
  for (const JobOrderFn f : job_order_)
    if (std::find(key_fns_.begin(), key_fns_.end(), f) == key_fns_.end()) key_fns_.push_back(f);
  // Session.Preemptable / Reclaimable: the plugins of each tier that register the function.
  for (int reclaim = 0; reclaim < 2; ++reclaim) {
    for (const auto& tier : cfg_.tiers) {
      std::vector<std::pair<VictimFn, std::string>> fns;
      for (const auto& p : tier) {
        if (!(reclaim ? p.reclaimable : p.preemptable)) continue;
        if (p.name == "priority" && !reclaim) fns.emplace_back(VictimFn::Priority, p.name);
        if (p.name == "gang") fns.emplace_back(VictimFn::Gang, p.name);
        if (p.name == "conformance") fns.emplace_back(VictimFn::Conformance, p.name);
        if (p.name == "drf" && !reclaim) fns.emplace_back(VictimFn::Drf, p.name);
        if (p.name == "proportion" && reclaim) fns.emplace_back(VictimFn::Proportion, p.name);
        if (p.name == "capacity" && reclaim) fns.emplace_back(VictimFn::Capacity, p.name);
        if (p.name == "drf" && reclaim && p.hierarchy) fns.emplace_back(VictimFn::Hdrf, p.name);
      }
      victim_tiers_[reclaim].push_back(std::move(fns));
    }
  }
}

void VolcanoPolicy::on_submit(const ClusterView& view, JobIndex j) {
  ensure(view);
  Group& g = groups_[members_[j].group];
  submitted_upto_ = std::max(submitted_upto_, j + 1);
  ++g.submitted;
  if (g.submitted == 1) {
    g.created = view.workload().jobs[j].submit;
    if (sla_) {
      std::int64_t gpus = 0;
      for (JobIndex m : members(g)) gpus += members_[m].total[0];
      g.sla_wait = cfg_.sla_annotation_time > 0 && gpus >= cfg_.sla_annotation_min_gpus ? cfg_.sla_annotation_time
                                                                                        : cfg_.sla_waiting_time;
    }
    if (sla_timed_ && g.sla_wait > 0) {
      sla_heap_.emplace_back(g.created + g.sla_wait, members_[j].group);
      std::push_heap(sla_heap_.begin(), sla_heap_.end(), std::greater<>{});
    }
  }
  const std::uint32_t gi = members_[j].group;
  auto at = std::lower_bound(active_.begin(), active_.end(), gi);
  if (at == active_.end() || *at != gi) {
    active_.insert(at, gi);
    g.active = true;
    ++queues_[g.queue].active_groups;
  }
  touch(gi);
  admission_due_ = true;
}

void VolcanoPolicy::on_end(const ClusterView& view, JobIndex j) {
  ensure(view);
  const std::uint32_t gi = members_[j].group;
  Group& g = groups_[gi];
  ++g.ended;
  if (view.state(j) == JobState::Completed) ++g.succeeded;
  if (g.ended == static_cast<int>(g.member_count)) {
    auto at = std::lower_bound(active_.begin(), active_.end(), gi);
    if (at != active_.end() && *at == gi) {
      active_.erase(at);
      g.active = false;
      --queues_[g.queue].active_groups;
    }
  }
  touch(gi);
  ++epoch_;
}

void VolcanoPolicy::on_requeue(const ClusterView& view, JobIndex j) {
  ensure(view);
  touch(members_[j].group);
  admission_due_ = true;
}

void VolcanoPolicy::on_release(const ClusterView& view, JobIndex j) {
  ensure(view);
  touch(members_[j].group);
  for (const auto& sl : view.placement(j)) node_changed(sl.node);
  ++epoch_;
}

void VolcanoPolicy::schedule(Session& s) {
  ensure(s);
  // The admission webhook's refusals, for the jobs that arrived (or came back from a retry's
  // back-off) since the last call: no other job can newly be refused.
  if (admission_due_) {
    if (any_undeclared_) reject_undeclared(s);
    if (hierarchy_) reject_outside_leaves(s);
    admission_due_ = false;
  }
  const Tick now = s.now();
  const Tick period = cfg_.schedule_period;
  const Tick tick = now % period == 0 ? now : (now / period + 1) * period;
  if (tick != now || (last_session_ >= 0 && now < last_session_ + period)) {
    s.wake_at(std::max(tick, last_session_ < 0 ? tick : last_session_ + period));
    return;
  }
  last_session_ = now;
  changed_ = false;
  if (sla_timed_) sla_mark_due(now);
  open_session(s);
  for (Action a : cfg_.actions) {
    switch (a) {
      case Action::Enqueue: enqueue(s); break;
      case Action::Allocate: allocate(s); break;
      case Action::Backfill: backfill(s); break;
      case Action::Preempt: preempt_action(s); break;
      case Action::Reclaim: reclaim_action(s); break;
    }
  }
  close_session();
  if (changed_) s.wake_at(now + period);
  // sla: a session when the next waiting time ends (Volcano runs one every period anyway).
  if (sla_timed_) {
    while (!sla_heap_.empty() && groups_[sla_heap_.front().second].phase == Phase::Running) {
      std::pop_heap(sla_heap_.begin(), sla_heap_.end(), std::greater<>{});
      sla_heap_.pop_back();
    }
    if (!sla_heap_.empty()) s.wake_at(std::max(sla_heap_.front().first, now + period));
  }
}

// The groups whose waiting time has ended by now become due (sla.go: time.Since(creation) >=
// sla-waiting-time). A due group still waiting for enqueue is listed again, so that enqueue's
// memos of earlier refusals do not pass over it; one that failed to fit is tried again.
void VolcanoPolicy::sla_mark_due(Tick now) {
  while (!sla_heap_.empty() && sla_heap_.front().first <= now) {
    const std::uint32_t gi = sla_heap_.front().second;
    std::pop_heap(sla_heap_.begin(), sla_heap_.end(), std::greater<>{});
    sla_heap_.pop_back();
    Group& g = groups_[gi];
    if (g.sla_due) continue;
    g.sla_due = true;
    g.failed_epoch = UINT64_MAX;
    touch(gi);
    if (g.in_pend) {
      pend_erase(gi);
      g.enqueue_failed = UINT64_MAX;
      g.enqueue_reason = kEnqueueUnknown;
      pend_insert(gi);
    }
  }
}

// The Job admission webhook (webhooks/admission/jobs/validate/admit_job.go) refuses a job whose
// queue does not exist ("unable to find job queue"): where the site's queues are declared, a job
// naming another one is rejected when it arrives. With no queue declared headroom keeps a
// trace's queue names as open queues of their own.
void VolcanoPolicy::reject_undeclared(Session& s) {
  std::vector<std::pair<JobIndex, std::uint32_t>> out;
  for (std::uint32_t gi : active()) {
    const Group& g = groups_[gi];
    if (!queues_[g.queue].undeclared) continue;
    for (JobIndex j : members(g))
      if (j < submitted_upto_ && s.state(j) == JobState::Pending && !s.retrying(j)) out.emplace_back(j, g.queue);
  }
  for (const auto& [j, q] : out) s.reject(j, "volcano admission: unable to find job queue `" + queues_[q].name + "`");
}

// The Job admission webhook (webhooks/admission/jobs/validate/admit_job.go) refuses a job for
// the root queue or for a queue with child queues; the job is rejected when it arrives.
void VolcanoPolicy::reject_outside_leaves(Session& s) {
  std::vector<std::pair<JobIndex, std::uint32_t>> out;
  for (std::uint32_t gi : active()) {
    const Group& g = groups_[gi];
    if (queues_[g.queue].children == 0 && g.queue != root_) continue;
    for (JobIndex j : members(g))
      if (j < submitted_upto_ && s.state(j) == JobState::Pending && !s.retrying(j)) out.emplace_back(j, g.queue);
  }
  for (const auto& [j, q] : out) {
    const QueueS& qs = queues_[q];
    s.reject(j, q == root_ ? std::string("volcano admission: can not submit job to root queue")
                           : "volcano admission: can only submit job to leaf queue, queue `" + qs.name + "` has " +
                                 std::to_string(qs.children) + " child queues");
  }
}

void VolcanoPolicy::ensure(const ClusterView& view) {
  if (jobs_ != nullptr) return;
  const auto& w = view.workload();
  jobs_ = &w.jobs;
  const auto& nodes = view.cluster().nodes();
  for (const auto& n : nodes) {
    modelled_[1] = modelled_[1] || n.cpus > 0;
    modelled_[2] = modelled_[2] || n.memory_mib > 0;
  }
  idle_.resize(nodes.size());
  rel_.resize(nodes.size());
  pipe_.resize(nodes.size());
  cap_.resize(nodes.size());
  up_.assign(nodes.size(), 0);
  node_is_dirty_.assign(nodes.size(), 0);
  free_tree_.resize(nodes.size());
  classes_on_ = !flat_scores();
  node_class_.assign(nodes.size(), kNoClass);
  node_pool_.resize(nodes.size());
  for (NodeId n = 0; n < nodes.size(); ++n) node_pool_[n] = nodes[n].pool;
  // Queues: the workload's, in first-seen order. A job whose log recorded no queue
  // (models::kUnknownName, unless declared under that name) names none, and Volcano's job webhook
  // gives such a job the queue "default": it joins the workload's "default" queue, or this one
  // stands for it under that name.
  const auto named_default = w.queues.find("default");
  queue_of_.resize(w.queues.size());
  for (std::uint32_t q = 0; q < w.queues.size(); ++q) {
    queue_of_[q] = q;
    QueueS qs;
    qs.name = w.queues.name(q);
    const bool no_queue = qs.name == models::kUnknownName && !cfg_.queues.count(qs.name);
    if (no_queue && named_default)
      queue_of_[q] = *named_default;  // this one stays empty
    else if (no_queue)
      qs.name = "default";
    if (auto it = cfg_.queues.find(qs.name); it != cfg_.queues.end()) qs.conf = it->second;
    // "default" and "root" exist in every Volcano cluster (the controller creates them).
    qs.undeclared =
        !no_queue && !cfg_.queues.empty() && !cfg_.queues.count(qs.name) && qs.name != "default" && qs.name != "root";
    any_undeclared_ = any_undeclared_ || qs.undeclared;
    queues_.push_back(qs);
  }
  if (queues_.empty()) queues_.push_back(QueueS{"default", QueueConf{}});
  if (hierarchy_) build_tree();
  for (const QueueS& qs : queues_) {
    std::vector<std::string> path;
    std::vector<double> weights;
    for (auto [text, out] : {std::pair{&qs.conf.hierarchy, 0}, std::pair{&qs.conf.hierarchy_weights, 1}}) {
      std::size_t at = 0;
      while (true) {
        const auto slash = text->find('/', at);
        const std::string part = text->substr(at, slash == std::string::npos ? std::string::npos : slash - at);
        if (out == 0) {
          path.push_back(part);
        } else {
          double w = 0;
          std::from_chars(part.data(), part.data() + part.size(), w);
          weights.push_back(w);
        }
        if (slash == std::string::npos) break;
        at = slash + 1;
      }
    }
    qpath_.push_back(std::move(path));
    qweights_.push_back(std::move(weights));
  }
  for (const auto& [name, conf] : cfg_.queues)
    for (int d = 0; d < kDims; ++d) total_guarantee_[d] += conf.guarantee[d];
  pend_.resize(queues_.size());
  // Groups.
  members_.resize(w.jobs.size());
  marks_.assign(w.jobs.size(), Mark::None);
  groups_.reserve(w.jobs.size());  // at most one a job: no copy of them all while they grow
  slices_.clear();
  slices_.reserve(w.jobs.size());  // mostly one a job
  std::vector<std::uint32_t> named(w.groups.size(), UINT32_MAX);
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    const Job& job = w.jobs[j];
    std::uint32_t gi = 0;
    if (job.group != models::kNone && job.group < named.size()) {
      if (named[job.group] == UINT32_MAX) {
        named[job.group] = static_cast<std::uint32_t>(groups_.size());
        groups_.emplace_back();
      }
      gi = named[job.group];
    } else {
      gi = static_cast<std::uint32_t>(groups_.size());
      groups_.emplace_back();
    }
    Group& g = groups_[gi];
    if (g.member_count == 0) {
      g.queue = job.queue < queue_of_.size() ? queue_of_[job.queue] : 0;
      g.priority = job.priority;
      g.uid = j;
      g.created = job.submit;
      g.min = job.gang_min;
    }
    ++g.member_count;
    members_[j].group = gi;
    split(view, j);
  }
  // Each group's tasks in job order, then sorted in place.
  std::uint32_t at = 0;
  for (Group& g : groups_) {
    g.member0 = at;
    at += std::exchange(g.member_count, 0);
  }
  group_members_.assign(at, 0);
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    Group& g = groups_[members_[j].group];
    group_members_[g.member0 + g.member_count++] = j;
  }
  for (Group& g : groups_) {
    const auto n = static_cast<std::int32_t>(g.member_count);
    if (g.min <= 0 || g.min > n) g.min = n;
    const auto order = group_members_.begin() + g.member0;
    std::sort(order, order + n, [&](JobIndex a, JobIndex b) { return task_cmp(a, b) < 0; });
    g.has_min_res = cfg_.min_resources;
    for (std::int32_t i = 0; i < g.min; ++i) g.min_res = add(g.min_res, members_[order[i]].total);
    // Training and batch work as Volcano Jobs; inference and interactive pods come from
    // Deployments and the like, whose pods exist from the start.
    const models::JobKind kind = n > 0 ? w.jobs[*order].kind : models::JobKind::Batch;
    g.pods_after_inqueue =
        g.has_min_res && !cfg_.pods_at_submit && (kind == models::JobKind::Train || kind == models::JobKind::Batch);
  }
}

// A job's tasks: one per node it needs.
void VolcanoPolicy::split(const ClusterView& view, JobIndex j) {
  const Job& job = (*jobs_)[j];
  Member& m = members_[j];
  models::PodWidth width;  // the node size holding most of the eligible pools' GPUs
  const auto& cl = view.cluster();
  for (models::PoolId p = 0; p < cl.pool_count(); ++p)
    if (pool_eligible(cl, p, job, view.workload()))
      width.add(cl.spec().pools[p].gpus_per_node, cl.spec().pools[p].nodes);
  const std::vector<std::int32_t> gpus = models::pod_gpus(job, width.width());
  const auto n = static_cast<std::int32_t>(gpus.size());
  m.slice0 = static_cast<std::uint32_t>(slices_.size());
  m.slice_count = static_cast<std::uint32_t>(n);
  for (std::int32_t i = 0; i < n; ++i) {
    SliceReq s;
    s.gpus = gpus[i];
    s.cpus = job.cpus / n + (i < job.cpus % n);
    s.memory_mib = job.memory_mib / n + (i < job.memory_mib % n);
    s.r = {s.gpus, modelled_[1] ? std::int64_t{s.cpus} * 1000 : 0, modelled_[2] ? s.memory_mib : 0};
    m.total = add(m.total, s.r);
    slices_.push_back(s);
  }
  m.best_effort = is_zero(m.total);
}

void VolcanoPolicy::open_session(Session& s) {
  view_ = &s;
  const auto& nodes = s.cluster().nodes();
  if (s.cluster().up_changes() != up_changes_seen_) {
    // A node went down or came back: everything is read again.
    up_changes_seen_ = s.cluster().up_changes();
    total_ = used_ = {};
    up_nodes_ = 0;
    for (NodeId n = 0; n < nodes.size(); ++n) {
      const auto& node = nodes[n];
      cap_[n] = {node.gpus, std::int64_t{node.cpus} * 1000, node.memory_mib};
      idle_[n] = {node.free_gpus, std::int64_t{node.free_cpus} * 1000, node.free_memory_mib};
      rel_[n] = {};
      pipe_[n] = {};
      up_[n] = node.up;
      free_tree_.set(n, node.up ? idle_[n][0] : -1);
      reclass(n);
      if (!node.up) continue;
      ++up_nodes_;
      total_ = add(total_, cap_[n]);
      used_ = add(used_, sub(cap_[n], idle_[n]));
    }
    for (NodeId n : node_dirty_) node_is_dirty_[n] = 0;
  } else {
    // Only the nodes where something started or ended since the last session changed.
    for (NodeId n : node_dirty_) {
      node_is_dirty_[n] = 0;
      const auto& node = nodes[n];
      set_idle(n, {node.free_gpus, std::int64_t{node.free_cpus} * 1000, node.free_memory_mib});
    }
    if (future_on_)
      for (NodeId n = 0; n < nodes.size(); ++n) rel_[n] = pipe_[n] = {};
  }
  node_dirty_.clear();
  future_on_ = !evicting_.empty();
  // Releasing: tasks evicted and still inside their grace period.
  for (auto it = evicting_.begin(); it != evicting_.end();) {
    if (s.state(*it) != JobState::Running || !s.terminating(*it)) {
      it = evicting_.erase(it);
      continue;
    }
    for (const auto& sl : s.placement(*it))
      rel_[sl.node] = add(rel_[sl.node],
                          {sl.gpus, modelled_[1] ? std::int64_t{sl.cpus} * 1000 : 0, modelled_[2] ? sl.memory_mib : 0});
    ++it;
  }
  fit_key_ = epoch_ * 1'000'003 + up_nodes_;
  // Only the groups something happened to since the last session are looked at again: the
  // others would come out the same (their members' states are unchanged).
  for (std::uint32_t gi : dirty_) refresh(s, gi);
  dirty_.clear();
  for (auto& q : queues_) {
    q.allocated = q.base_allocated;
    q.request = q.base_request;
    q.inqueue = q.base_inqueue;
    q.elastic = q.base_elastic;
    q.has_jobs = q.active_groups > 0;
  }
  inqueue_total_ = base_inqueue_total_;
  if (capacity_)
    capacity_attrs();
  else
    compute_deserved();
  if (hdrf_) hdrf_build();
}

// A group's session state from the engine's view (Volcano's snapshot of one PodGroup), and its
// part of the queue sums.
void VolcanoPolicy::refresh(const ClusterView& s, std::uint32_t gi) {
  Group& g = groups_[gi];
  g.dirty = false;
  QueueS& q = queues_[g.queue];
  q.base_request = sub(q.base_request, g.own_request);
  q.base_allocated = sub(q.base_allocated, g.own_allocated);
  q.base_inqueue = sub(q.base_inqueue, g.own_inqueue);
  q.base_elastic = sub(q.base_elastic, g.own_elastic);
  base_inqueue_total_ = sub(base_inqueue_total_, g.own_inqueue);
  g.own_request = g.own_allocated = g.own_inqueue = g.own_elastic = g.unborn = {};
  g.cursor = 0;
  g.enqueue_reason = kEnqueueUnknown;
  set_live(gi, false);
  if (g.in_pend) pend_erase(gi);
  if (!g.active) return;
  g.ready = g.succeeded;
  g.waiting = g.pending_be = 0;
  g.alloc = {};
  g.pending.clear();
  int running = 0;
  for (JobIndex j : members(g)) {
    const JobState st = s.state(j);
    if (st == JobState::Pending) {
      // Not yet submitted, or killed by a failure and waiting for its retry back-off (its pod
      // is recreated only then).
      if (j >= submitted_upto_ || s.retrying(j)) continue;
      if (g.phase == Phase::Pending && g.pods_after_inqueue)
        g.unborn = add(g.unborn, members_[j].total);
      else
        g.own_request = add(g.own_request, members_[j].total);
      if (members_[j].best_effort)
        ++g.pending_be;
      else
        g.pending.push_back(j);
    } else if (st == JobState::Running) {
      g.own_request = add(g.own_request, members_[j].total);
      if (s.terminating(j)) continue;
      ++running;
      g.alloc = add(g.alloc, members_[j].total);
    }
  }
  g.ready += running;
  g.own_allocated = g.alloc;
  // framework/job_updater.go: enough allocated -> Running; a Running group that fell below
  // minMember (evictions) goes back to Pending; Inqueue stays Inqueue.
  if (running + g.succeeded >= g.min && g.phase != Phase::Pending) {
    g.phase = Phase::Running;
  } else if (g.phase == Phase::Running) {
    g.phase = Phase::Pending;
  }
  if (g.phase == Phase::Inqueue && g.has_min_res) g.own_inqueue = g.min_res;
  if (g.phase == Phase::Running && g.has_min_res)
    for (int d = 0; d < kDims; ++d) g.own_elastic[d] = std::max<std::int64_t>(0, g.alloc[d] - g.min_res[d]);
  q.base_request = add(q.base_request, g.own_request);
  q.base_allocated = add(q.base_allocated, g.own_allocated);
  q.base_inqueue = add(q.base_inqueue, g.own_inqueue);
  q.base_elastic = add(q.base_elastic, g.own_elastic);
  base_inqueue_total_ = add(base_inqueue_total_, g.own_inqueue);
  set_live(gi, g.phase != Phase::Pending && (!g.pending.empty() || g.pending_be > 0));
  if (g.phase == Phase::Pending && (!g.pending.empty() || g.pending_be > 0)) pend_insert(gi);
}

void VolcanoPolicy::apply_place(Op& op, int sign) {
  touch(members_[op.job].group);
  Group& g = groups_[members_[op.job].group];
  bool pipelined = false;
  for (auto& [n, r, pipe] : op.where) {
    if (pipe) {
      pipe_[n] = sign > 0 ? add(pipe_[n], r) : sub(pipe_[n], r);
      future_on_ = true;
      pipelined = true;
    } else {
      set_idle(n, sign > 0 ? sub(idle_[n], r) : add(idle_[n], r));
      node_changed(n);
    }
  }
  (pipelined ? g.waiting : g.ready) += sign;
  const Res& t = members_[op.job].total;
  g.alloc = sign > 0 ? add(g.alloc, t) : sub(g.alloc, t);
  account(g.queue, t, sign);
  set_mark(op.job, sign > 0 ? (pipelined ? Mark::Pipelined : Mark::Allocated) : Mark::None);
}

void VolcanoPolicy::apply_evict(const Op& op, int sign) {
  for (const auto& [n, r, pipe] : op.where) rel_[n] = sign > 0 ? add(rel_[n], r) : sub(rel_[n], r);
  future_on_ = true;
  touch(members_[op.job].group);
  Group& g = groups_[members_[op.job].group];
  g.ready -= sign;
  const Res& t = members_[op.job].total;
  g.alloc = sign > 0 ? sub(g.alloc, t) : add(g.alloc, t);
  account(g.queue, t, -sign);
  set_mark(op.job, sign > 0 ? Mark::Evicted : Mark::None);
}

// The Allocate / Deallocate event handlers: the queue's allocated (and its ancestors' with
// enableHierarchy); capacity updates the share of the job's queue only.
void VolcanoPolicy::account(std::uint32_t qi, const Res& t, int sign) {
  leaf_up(qi, [&](std::uint32_t a) {
    queues_[a].allocated = sign > 0 ? add(queues_[a].allocated, t) : sub(queues_[a].allocated, t);
    return false;
  });
  if (capacity_) update_share(queues_[qi]);
  hdirty_ = true;
}

void VolcanoPolicy::undo(std::vector<Op>& ops) {
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (it->kind == Op::Evict)
      apply_evict(*it, -1);
    else
      apply_place(*it, -1);
  }
  ops.clear();
}

void VolcanoPolicy::commit(Session& s, std::vector<Op>& ops, std::string_view start_reason) {
  for (Op& op : ops) {
    if (op.kind == Op::Alloc) {
      // One slice per node, in the order the nodes first come (a gang over thousands of nodes
      // finds its node's slice by the slot, not by a search of the placement).
      models::Placement placement;
      const auto slices = this->slices(op.job);
      if (commit_slot_.size() < cap_.size()) commit_slot_.resize(cap_.size(), 0);
      for (std::size_t i = 0; i < op.where.size(); ++i) {
        const NodeId n = std::get<0>(op.where[i]);
        std::uint32_t& slot = commit_slot_[n];
        if (slot == 0) {
          placement.push_back({n, 0, 0, 0});
          slot = static_cast<std::uint32_t>(placement.size());
        }
        models::Slice& it = placement[slot - 1];
        it.gpus += slices[i].gpus;
        it.cpus += slices[i].cpus;
        it.memory_mib += slices[i].memory_mib;
      }
      for (const models::Slice& x : placement) commit_slot_[x.node] = 0;
      const std::string why = s.start(op.job, placement, start_reason);
      HEADROOM_ASSERT(why.empty(), "volcano produced an invalid placement: " + why);
      changed_ = true;
    } else if (op.kind == Op::Evict) {
      const std::string why = s.preempt(op.job, PreemptMode::Requeue, cfg_.termination_grace_period, op.by, op.reason);
      HEADROOM_ASSERT(why.empty(), "volcano eviction refused: " + why);
      evicting_.insert(op.job);
      ++epoch_;
      changed_ = true;
    }
  }
  ops.clear();
}

}  // namespace headroom::policies::volcano::detail

namespace headroom::policies::volcano {

std::unique_ptr<Policy> make_policy(Config config) {
  return std::make_unique<detail::VolcanoPolicy>(std::move(config));
}

std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed) {
  (void)seed;  // every tie breaks on stable ids
  return make_policy(parse_config(params));
}

}  // namespace headroom::policies::volcano
