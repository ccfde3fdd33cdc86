#include "policies/split/split.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace headroom::policies::split {

using models::ClusterState;
using models::Job;
using models::JobState;
using models::NodeId;
using models::PoolId;

Partitioning partition_cluster(const SplitSpec& spec, const models::ClusterSpec& cluster) {
  Partitioning out;
  NodeId node = 0;
  PoolId pool = 0;
  for (const System& s : spec.systems) {
    models::ClusterSpec part;
    out.first_node.push_back(node);
    out.first_pool.push_back(pool);
    std::int32_t nodes = 0;
    for (const PoolShare& share : s.pools) {
      const auto it = std::find_if(cluster.pools.begin(), cluster.pools.end(),
                                   [&](const models::NodePool& p) { return p.name == share.pool; });
      HEADROOM_ASSERT(it != cluster.pools.end(), "split names a pool the cluster lacks (not validated)");
      models::NodePool p = *it;
      if (share.nodes >= 0) p.nodes = share.nodes;
      if (p.nodes == 0) continue;
      nodes += p.nodes;
      part.pools.push_back(p);
      p.name += "@" + s.name;
      out.whole.pools.push_back(std::move(p));
      ++pool;
    }
    node += static_cast<NodeId>(nodes);
    out.node_count.push_back(nodes);
    out.parts.push_back(std::move(part));
  }
  return out;
}

void check_partitions(const SplitSpec& spec, const models::ClusterSpec& cluster) {
  for (const models::NodePool& pool : cluster.pools) {
    std::int64_t claimed = 0;
    bool named = false;
    for (const System& s : spec.systems)
      for (const PoolShare& share : s.pools)
        if (share.pool == pool.name) {
          named = true;
          claimed += share.nodes < 0 ? pool.nodes : share.nodes;
        }
    if (claimed != pool.nodes)
      throw sim::InputError(spec.file, spec.line, spec.column, "split",
                            "the systems hold " + std::to_string(claimed) + " nodes of pool \"" + pool.name +
                                "\", which has " + std::to_string(pool.nodes) + (named ? "" : " (no system names it)") +
                                ": every node must belong to exactly one system (a variant that changes the pool "
                                "must change the split's node counts with it)");
  }
  for (const System& s : spec.systems)
    for (const PoolShare& share : s.pools)
      if (std::none_of(cluster.pools.begin(), cluster.pools.end(),
                       [&](const models::NodePool& p) { return p.name == share.pool; }))
        throw sim::InputError(spec.file, share.line, share.column, "split.systems." + s.name,
                              "no pool named \"" + share.pool + "\" in the cluster");
}

namespace {

std::int64_t system_index(const SplitSpec& spec, std::string_view name) {
  for (std::size_t s = 0; s < spec.systems.size(); ++s)
    if (spec.systems[s].name == name) return static_cast<std::int64_t>(s);
  return -1;
}

}  // namespace

std::vector<std::uint32_t> route_jobs(const SplitSpec& spec, const models::Workload& workload) {
  struct Compiled {
    bool has_kind = false;
    models::JobKind kind{};
    bool any_tenant = true, any_queue = true;
    std::uint32_t tenant = models::kNone, queue = models::kNone;  // kNone: a name the trace lacks
    std::uint32_t to = 0;
  };
  std::vector<Compiled> routes;
  for (const Route& r : spec.routes) {
    Compiled c;
    c.has_kind = r.has_kind;
    c.kind = r.kind;
    if (!r.tenant.empty()) {
      c.any_tenant = false;
      c.tenant = workload.tenants.find(r.tenant).value_or(models::kNone);
    }
    if (!r.queue.empty()) {
      c.any_queue = false;
      c.queue = workload.queues.find(r.queue).value_or(models::kNone);
    }
    const std::int64_t to = system_index(spec, r.to);
    HEADROOM_ASSERT(to >= 0, "split route to an undeclared system (not validated)");
    c.to = static_cast<std::uint32_t>(to);
    routes.push_back(c);
  }
  const std::int64_t fallback = spec.default_to.empty() ? -1 : system_index(spec, spec.default_to);
  std::vector<std::uint32_t> out(workload.jobs.size());
  for (std::size_t j = 0; j < workload.jobs.size(); ++j) {
    const Job& job = workload.jobs[j];
    std::int64_t to = fallback;
    for (const Compiled& c : routes) {
      if (c.has_kind && c.kind != job.kind) continue;
      if (!c.any_tenant && c.tenant != job.tenant) continue;
      if (!c.any_queue && c.queue != job.queue) continue;
      to = c.to;
      break;
    }
    if (to < 0) {
      auto name = [](const models::NameTable& t, std::uint32_t id) {
        return id < t.size() ? t.name(id) : std::string("(none)");
      };
      throw sim::InputError(
          workload.meta.path.empty() ? spec.file : workload.meta.path, 0, 0, "split.routes",
          "job " + std::to_string(job.trace_id) + " of the trace (tenant " + name(workload.tenants, job.tenant) +
              ", queue " + name(workload.queues, job.queue) + ", kind " + std::string(models::to_string(job.kind)) +
              ") matches no route of split.routes (" + spec.file + ":" + std::to_string(spec.line) + ":" +
              std::to_string(spec.column) + ") and split.default is not set; add a route for it or `default: SYSTEM`");
    }
    out[j] = static_cast<std::uint32_t>(to);
  }
  return out;
}

// One system's partition as its policy sees it: its own nodes (numbered from 0) in a cluster state
// that mirrors the engine's allocations on them, its own jobs (numbered from 0); every request is
// translated to the engine's numbering and passed on.
class SplitPolicy::Part final : public Session {
 public:
  Part(std::unique_ptr<Policy> policy, const models::ClusterSpec& advertised, NodeId first_node, PoolId first_pool)
      : policy_(std::move(policy)), state_(advertised), first_node_(first_node), first_pool_(first_pool) {
    node_jobs_.resize(state_.nodes().size());
  }

  void add_job(JobIndex global, const Job& job) {
    global_.push_back(global);
    workload_.jobs.push_back(job);
  }
  void finish_jobs(const models::Workload& whole) {
    workload_.tenants = whole.tenants;
    workload_.queues = whole.queues;
    workload_.groups = whole.groups;
    workload_.qos = whole.qos;
    workload_.gpu_type_names = whole.gpu_type_names;
    workload_.meta = whole.meta;
    held_.resize(global_.size());
    placement_.resize(global_.size());
    bound_.resize(global_.size());
  }

  Policy& policy() { return *policy_; }
  const Policy& policy() const { return *policy_; }
  ClusterState& state() { return state_; }
  const std::set<JobIndex>& waiting() const { return waiting_; }
  void use(const ClusterView* view, Session* session) {
    view_ = view;
    session_ = session;
  }
  // A notification may come in the middle of the system's own pass (a job it rejects ends at
  // once): the session it is using stays.
  void use(const ClusterView* view) { view_ = view; }
  JobIndex global(JobIndex local) const { return global_[local]; }
  NodeId first_node() const { return first_node_; }

  // Bookkeeping on the engine's notifications (before the policy hears them).
  void submitted(JobIndex l) { waiting_.insert(l); }
  void left(JobIndex l) { waiting_.erase(l); }
  void released(JobIndex l) {
    if (!held_[l].empty()) state_.release(held_[l]);
    held_[l].clear();
  }

  // Wake-ups asked for and due at `now` (dropped as they are taken).
  bool wake_due(Tick now) {
    bool due = false;
    while (!wakes_.empty() && *wakes_.begin() <= now) {
      wakes_.erase(wakes_.begin());
      due = true;
    }
    return due;
  }
  bool dirty = true;

  // ClusterView
  Tick now() const override { return view_->now(); }
  const ClusterState& cluster() const override { return state_; }
  const models::Workload& workload() const override { return workload_; }
  JobState state(JobIndex job) const override { return view_->state(global_.at(job)); }
  bool retrying(JobIndex job) const override { return view_->retrying(global_.at(job)); }
  std::size_t pending_count() const override { return waiting_.size(); }
  Tick run_start(JobIndex job) const override { return view_->run_start(global_.at(job)); }
  const models::Placement& placement(JobIndex job) const override {
    return to_local(view_->placement(global_.at(job)), placement_[job]);
  }
  bool terminating(JobIndex job) const override { return view_->terminating(global_.at(job)); }
  std::span<const JobIndex> jobs_on_node(NodeId node) const override {
    const std::span<const JobIndex> jobs = view_->jobs_on_node(node + first_node_);
    std::vector<JobIndex>& out = node_jobs_.at(node);
    out.clear();
    for (JobIndex g : jobs) out.push_back((*local_of_)[g]);
    return out;
  }
  std::span<const models::Slice> bound(JobIndex job) const override {
    const std::span<const models::Slice> b = view_->bound(global_.at(job));
    models::Placement& out = bound_[job];
    out.assign(b.begin(), b.end());
    for (auto& s : out) s.node -= first_node_;
    return out;
  }
  std::int64_t pool_speed(JobIndex job, PoolId pool) const override {
    return view_->pool_speed(global_.at(job), pool + first_pool_);
  }

  // Session
  std::string start(JobIndex job, models::Placement placement, std::string_view reason) override {
    std::string why = session_->start(global_.at(job), to_global(placement), reason);
    if (why.empty()) {
      state_.allocate(placement);
      held_[job].insert(held_[job].end(), placement.begin(), placement.end());
      waiting_.erase(job);
    }
    return why;
  }
  std::string bind(JobIndex job, const models::Slice& slice, std::string_view reason) override {
    models::Slice g = slice;
    g.node += first_node_;
    std::string why = session_->bind(global_.at(job), g, reason);
    if (why.empty()) {
      state_.allocate({slice});
      held_[job].push_back(slice);
    }
    return why;
  }
  std::string unbind(JobIndex job, std::string_view reason) override {
    std::string why = session_->unbind(global_.at(job), reason);
    if (why.empty()) released(job);
    return why;
  }
  void reject(JobIndex job, std::string_view reason) override { session_->reject(global_.at(job), reason); }
  void pending_reason(JobIndex job, std::string_view reason) override {
    session_->pending_reason(global_.at(job), reason);
  }
  std::string preempt(JobIndex job, PreemptMode mode, Tick grace, JobIndex by, std::string_view reason,
                      Tick overhead) override {
    return session_->preempt(global_.at(job), mode, grace, by == models::kNoJob ? by : global_.at(by), reason,
                             overhead);
  }
  void wake_at(Tick time) override {
    wakes_.insert(time);
    session_->wake_at(time);
  }
  std::string fail(JobIndex job, std::string_view reason) override { return session_->fail(global_.at(job), reason); }

  // Set by SplitPolicy: global job -> local index (valid for its own jobs).
  const std::vector<JobIndex>* local_of_ = nullptr;

 private:
  models::Placement to_global(const models::Placement& p) const {
    models::Placement out = p;
    for (auto& s : out) s.node += first_node_;
    return out;
  }
  const models::Placement& to_local(const models::Placement& p, models::Placement& out) const {
    out.assign(p.begin(), p.end());
    for (auto& s : out) s.node -= first_node_;
    return out;
  }

  std::unique_ptr<Policy> policy_;
  ClusterState state_;
  NodeId first_node_;
  PoolId first_pool_;
  models::Workload workload_;
  std::vector<JobIndex> global_;
  std::vector<models::Placement> held_;  // what the engine allocated to each job, in local node ids
  std::set<JobIndex> waiting_;           // pending and in the queue (not retrying), oldest first
  std::set<Tick> wakes_;
  const ClusterView* view_ = nullptr;
  Session* session_ = nullptr;
  // Scratch returned by reference or span: one slot per job / node, so that a policy may hold
  // one while it asks for another.
  mutable std::vector<models::Placement> placement_, bound_;
  mutable std::vector<std::vector<JobIndex>> node_jobs_;
};

SplitPolicy::SplitPolicy(std::vector<std::unique_ptr<Policy>> policies, Partitioning parts,
                         const models::Workload& workload, std::vector<std::uint32_t> route)
    : route_(std::move(route)) {
  HEADROOM_ASSERT(policies.size() == parts.parts.size(), "split: one policy per partition");
  HEADROOM_ASSERT(route_.size() == workload.jobs.size(), "split: one route per job");
  for (std::size_t s = 0; s < policies.size(); ++s) {
    models::ClusterSpec advertised = policies[s]->advertised_cluster(parts.parts[s]);
    HEADROOM_ASSERT(advertised.pools.size() == parts.parts[s].pools.size(), "split: a policy changed its pools");
    for (std::size_t p = 0; p < advertised.pools.size(); ++p) {
      models::NodePool pool = advertised.pools[p];
      pool.name = parts.whole.pools[parts.first_pool[s] + p].name;
      whole_.pools.push_back(std::move(pool));
    }
    parts_.push_back(
        std::make_unique<Part>(std::move(policies[s]), advertised, parts.first_node[s], parts.first_pool[s]));
  }
  local_.resize(route_.size());
  for (std::size_t j = 0; j < route_.size(); ++j) {
    Part& p = *parts_.at(route_[j]);
    local_[j] = static_cast<JobIndex>(p.workload().jobs.size());
    p.add_job(static_cast<JobIndex>(j), workload.jobs[j]);
  }
  for (auto& p : parts_) {
    p->finish_jobs(workload);
    p->local_of_ = &local_;
  }
  boundary_ms_.assign(parts_.size(), 0);
  boundary_now_.assign(parts_.size(), 0);
  passes_.assign(parts_.size(), 0);
}

SplitPolicy::~SplitPolicy() = default;

models::ClusterSpec SplitPolicy::advertised_cluster(const models::ClusterSpec& spec) const {
  HEADROOM_ASSERT(spec.pools.size() == whole_.pools.size(), "split: the engine's cluster is not the partitioned one");
  models::ClusterSpec out = whole_;
  out.topology = spec.topology;
  return out;
}

SplitPolicy::Part& SplitPolicy::part_of(JobIndex job, const ClusterView& view) {
  sync_nodes(view);
  Part& p = *parts_.at(route_.at(job));
  p.use(&view);
  p.dirty = true;
  return p;
}

// Nodes that went down or came back (failures, maintenance) in the engine's state, copied into
// each partition's own.
void SplitPolicy::sync_nodes(const ClusterView& view) {
  const ClusterState& global = view.cluster();
  if (global.up_changes() == up_changes_) return;
  up_changes_ = global.up_changes();
  for (auto& p : parts_) {
    ClusterState& local = p->state();
    for (NodeId n = 0; n < local.nodes().size(); ++n) {
      const bool up = global.node(n + p->first_node()).up;
      if (local.node(n).up != up) {
        local.set_up(n, up);
        p->dirty = true;
      }
    }
  }
}

void SplitPolicy::on_submit(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.submitted(local_[job]);
  p.policy().on_submit(p, local_[job]);
}

void SplitPolicy::on_end(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.left(local_[job]);
  p.policy().on_end(p, local_[job]);
}

void SplitPolicy::on_withdraw(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.left(local_[job]);
  p.policy().on_withdraw(p, local_[job]);
}

void SplitPolicy::on_requeue(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.submitted(local_[job]);
  p.policy().on_requeue(p, local_[job]);
}

void SplitPolicy::on_release(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.released(local_[job]);
  p.policy().on_release(p, local_[job]);
}

Policy::Denial SplitPolicy::deny(const models::Workload& w, const models::Job& job) const {
  const auto j = static_cast<std::size_t>(&job - w.jobs.data());
  HEADROOM_ASSERT(j < route_.size(), "split: deny of a job outside the workload");
  const Part& p = *parts_[route_[j]];
  return p.policy().deny(p.workload(), p.workload().jobs[local_[j]]);
}

void SplitPolicy::schedule(Session& session) {
  sync_nodes(session);
  const Tick now = session.now();
  bool any = false;
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    Part& p = *parts_[s];
    const bool due = p.wake_due(now);
    if (!p.dirty && !due) continue;
    p.dirty = false;
    p.use(&session, &session);
    ++passes_[s];
    p.policy().schedule(p);
    p.use(&session, nullptr);
    any = true;
  }
  if (any) measure_boundary(now);
}

void SplitPolicy::finish(Tick end) {
  if (end <= boundary_at_) return;
  for (std::size_t s = 0; s < parts_.size(); ++s) boundary_ms_[s] += boundary_now_[s] * (end - boundary_at_);
  boundary_at_ = end;
}

// The cost of the boundary at this instant (docs/split.md): for each system A, the oldest waiting
// jobs of the other systems (at most kBoundaryScan per system) are placed, whole or not at all,
// best fit by GPUs on A's free GPUs of up nodes; the GPUs they take are A's idle GPUs that the
// other side's backlog would have used. The count holds until the next pass.
void SplitPolicy::measure_boundary(Tick now) {
  finish(now);
  boundary_at_ = now;
  std::vector<std::vector<std::int32_t>>& free = scratch_free_;  // [pool][whole free GPUs] -> nodes
  std::vector<std::int32_t>& pods = scratch_pods_;
  std::vector<std::pair<PoolId, std::int32_t>>& undo = scratch_undo_;
  for (std::size_t a = 0; a < parts_.size(); ++a) {
    boundary_now_[a] = 0;
    const ClusterState& st = parts_[a]->state();
    if (st.free_gpus() <= 0) continue;
    bool others_wait = false;
    for (std::size_t b = 0; b < parts_.size(); ++b)
      others_wait = others_wait || (b != a && !parts_[b]->waiting().empty());
    if (!others_wait) continue;
    free.resize(st.pool_count());
    std::int64_t total = 0;
    std::int32_t widest = 0, most = 0;  // widest node; most free whole GPUs on one node
    for (PoolId p = 0; p < st.pool_count(); ++p) {
      const models::NodePool& pool = st.spec().pools[p];
      const std::int32_t per_gpu = std::max(pool.units_per_gpu, 1);
      free[p].assign(static_cast<std::size_t>(pool.gpus_per_node) + 1, 0);
      widest = std::max(widest, pool.gpus_per_node);
      for (std::int32_t f = 1; f <= st.node_units(p); ++f) {
        const auto nodes = static_cast<std::int32_t>(st.nodes_with_free(p, f).size());
        const std::int32_t whole = std::min(f / per_gpu, pool.gpus_per_node);
        if (nodes == 0 || whole == 0) continue;
        free[p][static_cast<std::size_t>(whole)] += nodes;
        total += static_cast<std::int64_t>(whole) * nodes;
        most = std::max(most, whole);
      }
    }
    for (std::size_t b = 0; b < parts_.size() && total > 0; ++b) {
      if (b == a) continue;
      const Part& other = *parts_[b];
      std::size_t scanned = 0;
      for (JobIndex l : other.waiting()) {
        if (scanned++ == kBoundaryScan || total <= 0) break;
        const Job& job = other.workload().jobs[l];
        if (job.gpus <= 0 && job.gpu_milli <= 0 && job.gpu_memory_mib <= 0) continue;
        // Cheap refusals first: more GPUs than A has free, or a pod wider than any free node.
        const std::int32_t need = std::max(job.gpus, 1);
        if (need > total) continue;
        const bool one_pod = job.gpus <= 1 || (job.gpus_per_node <= 0 && job.nodes <= 0 && job.gpus <= widest);
        if (one_pod && need > most) continue;
        if (one_pod) {
          pods.assign(1, need);
        } else {
          pods = models::pod_gpus(job, widest);
          std::sort(pods.rbegin(), pods.rend());
          if (pods.front() > most) continue;
        }
        const std::string* type = job.gpu_type == 0 ? nullptr : &other.workload().gpu_type_names.at(job.gpu_type - 1u);
        undo.clear();
        std::int64_t took = 0;
        bool fits = true;
        for (std::int32_t pod : pods) {
          PoolId best_pool = 0;
          std::int32_t best = -1;
          for (PoolId p = 0; p < free.size(); ++p) {
            if (type != nullptr && st.spec().pools[p].gpu_type != *type) continue;
            for (std::int32_t f = std::max(pod, 1); f < static_cast<std::int32_t>(free[p].size()); ++f) {
              if (free[p][static_cast<std::size_t>(f)] == 0) continue;
              if (best < 0 || f < best) best = f, best_pool = p;
              break;
            }
          }
          if (best < 0) {
            fits = false;
            break;
          }
          --free[best_pool][static_cast<std::size_t>(best)];
          ++free[best_pool][static_cast<std::size_t>(best - pod)];
          undo.emplace_back(best_pool, best);
          undo.emplace_back(best_pool, -(best - pod) - 1);
          took += pod;
        }
        if (!fits) {
          for (auto [p, f] : undo) {
            if (f >= 0)
              ++free[p][static_cast<std::size_t>(f)];
            else
              --free[p][static_cast<std::size_t>(-f - 1)];
          }
          continue;
        }
        boundary_now_[a] += took;
        total -= took;
        if (took > 0) {
          // The widest free node may be gone.
          most = 0;
          for (const auto& counts : free)
            for (std::size_t f = counts.size(); f-- > 1;)
              if (counts[f] > 0) {
                most = std::max(most, static_cast<std::int32_t>(f));
                break;
              }
        }
      }
    }
  }
}

}  // namespace headroom::policies::split
