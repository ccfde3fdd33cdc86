// Job submission, requeue and end, and time limits (src/slurmctld/job_mgr.c: job_allocate and
// _valid_job_part's checks at submit, _requeue_delay, job_time_limit; the partition list of
// `sbatch -p a,b` as _get_job_parts reads it).

#include <cstdlib>

#include "policies/slurm/policy.hpp"
#include "sim/text.hpp"

namespace headroom::policies::slurm::detail {

// slurmctld's association check refuses the submission (sbatch exits with an error).
Policy::Denial SlurmPolicy::deny(const models::Workload& w, const Job& job) const {
  return {false,
          "permission denied: sbatch: error: Batch job submission failed: Invalid account or "
          "account/partition combination specified (user " +
              name_of(w.tenants, job.tenant) + ", partition " + name_of(w.queues, job.queue) + ")"};
}

void SlurmPolicy::on_submit(const ClusterView& view, JobIndex j) {
  init(view);
  advance_usage(view.now());
  const Job& job = view.workload().jobs[j];
  part_[j] = partition_of(view, job);
  eligible_[j] = job.submit;
  if (part_[j] == kNoPart) {
    to_reject_.push_back({j, "invalid partition \"" + view.workload().queues.name(job.queue) +
                                 "\": not among the configured partitions"});
    return;
  }
  if (const PartitionState st = parts_[static_cast<std::size_t>(part_[j])].conf.state;
      st == PartitionState::Drain || st == PartitionState::Inactive) {
    to_reject_.push_back({j, "partition " + parts_[static_cast<std::size_t>(part_[j])].conf.name + " is " +
                                 (st == PartitionState::Drain ? "DRAIN" : "INACTIVE") +
                                 ": sbatch: error: Batch job submission failed: Partition in invalid state"});
    return;
  }
  shape_[j] = make_shape(view, job, parts_[static_cast<std::size_t>(part_[j])]);
  limit_[j] = time_limit(job, parts_[static_cast<std::size_t>(part_[j])]);
  if (std::string why = never_fits(view, j); !why.empty()) {
    to_reject_.push_back({j, why});
    return;
  }
  prio_[j] = compute_priority(view, j, view.now());
  enqueue(j);
  fresh_.push_back(j);
  dirty_ = true;
}

void SlurmPolicy::on_requeue(const ClusterView& view, JobIndex j) {
  advance_usage(view.now());
  dirty_ = true;
  if (suspended_.count(j) != 0) return;  // waits for its preemptor to end, off the queue
  used_limit_[j] = 0;
  eligible_[j] = view.now() + c_.cred_expire + sim::kSecond;
  waiting_.insert({eligible_[j], j});
  begin_wait_.push_back(j);
}

void SlurmPolicy::on_release(const ClusterView& view, JobIndex j) {
  advance_usage(view.now());
  dirty_ = true;
  for (const auto& sl : view.placement(j)) avail_stale_.push_back(sl.node);
  by_kill_.erase({kill_at_[j], j});
  unbook_release(j);
  const Job& job = view.workload().jobs[j];
  const auto leaf = static_cast<std::size_t>(leaf_of_[job.tenant]);
  charge(leaf, view.now());
  rate_[leaf] -= rate_of_[j];
  if (std::abs(rate_[leaf]) < 1e-9) rate_[leaf] = 0;
  rate_of_[j] = 0;
  if (shape_[j].exclusive)
    for (const auto& s : view.placement(j)) --excl_[s.node];
  if (suspended_.count(j) != 0) used_limit_[j] += view.now() - my_start_[j];
  if (suspended_.count(j) == 0) limits_.on_end(j, job);  // a suspended job keeps counting
  ++queue_version_;                                      // a limit may hold a job no more
  // Victims this job suspended resume once it is gone.
  for (auto& [victim, s] : suspended_)
    if (s.by == j) s.resumable = true;
  nominee_.erase(j);
}

void SlurmPolicy::on_end(const ClusterView& view, JobIndex j) {
  limits_.on_end(j, view.workload().jobs[j]);
  ++queue_version_;
  dequeue(j);
  nominee_.erase(j);
  dirty_ = true;
}

int SlurmPolicy::partition_of(const ClusterView& view, const Job& job) const {
  const std::string& q = view.workload().queues.name(job.queue);
  for (std::size_t i = 0; i < parts_.size(); ++i)
    if (parts_[i].conf.name == q) return static_cast<int>(i);
  if (q.find(',') != std::string::npos) {
    // `sbatch -p lo,hi`: the listed partition that takes jobs, an UP one before a DOWN one,
    // then the highest PriorityTier, then the first listed.
    int best = kNoPart;
    const auto rank = [&](int i) {
      const auto& c = parts_[static_cast<std::size_t>(i)].conf;
      return std::pair<int, std::int64_t>(c.state == PartitionState::Up ? 1 : 0, c.tier);
    };
    for (const std::string& name : sim::split_on(q, ',')) {
      for (std::size_t i = 0; i < parts_.size(); ++i) {
        const auto& c = parts_[i].conf;
        if (c.name != name || c.state == PartitionState::Drain || c.state == PartitionState::Inactive) continue;
        if (best == kNoPart || rank(static_cast<int>(i)) > rank(best)) best = static_cast<int>(i);
      }
    }
    if (best != kNoPart) return best;
  }
  // No partition named: the Default one, as sbatch without -p. A job whose log recorded no queue
  // (models::kUnknownName) named none either; a partition of that name was matched above.
  if (configured_parts_ && (q.empty() || q == "default" || q == models::kUnknownName)) {
    for (std::size_t i = 0; i < parts_.size(); ++i)
      if (parts_[i].conf.is_default) return static_cast<int>(i);
    return 0;
  }
  return kNoPart;
}

Shape SlurmPolicy::make_shape(const ClusterView& view, const Job& job, const Part& p) const {
  Shape s;
  s.total = job.gpus;
  s.exclusive = p.conf.exclusive;
  const std::int32_t g = job.gpus;
  // A job that names no CPUs (memory) gets DefCpuPerGPU (DefMemPerGPU) per GPU: its partition's,
  // else the global one (slurm.conf(5), DefCpuPerGPU and DefMemPerGPU).
  const std::int64_t cpu_per_gpu = p.conf.def_cpu_per_gpu > 0 ? p.conf.def_cpu_per_gpu : c_.def_cpu_per_gpu;
  const std::int64_t mem_per_gpu = p.conf.def_mem_per_gpu > 0 ? p.conf.def_mem_per_gpu : c_.def_mem_per_gpu;
  const std::int64_t cpus = job.cpus > 0 || g <= 0 ? job.cpus : std::min<std::int64_t>(g * cpu_per_gpu, INT32_MAX);
  const std::int64_t memory_mib = job.memory_mib > 0 || g <= 0 ? job.memory_mib : g * mem_per_gpu;
  std::int32_t k = 0;
  if (job.gpus_per_node > 0 && g > 0) {
    k = (g + job.gpus_per_node - 1) / job.gpus_per_node;
    if (job.nodes > k) k = job.nodes;
  } else if (job.nodes > 0 || g <= 0) {
    k = std::max<std::int32_t>(1, job.nodes);
  }
  if (k > 0) {
    s.fixed = true;
    if (job.gpus_per_node > 0 && g > 0) {
      for (std::int32_t left = g, i = 0; i < k; ++i) {
        s.slices.push_back(std::min(left, job.gpus_per_node));
        left -= s.slices.back();
      }
    } else {
      for (std::int32_t i = 0; i < k; ++i) s.slices.push_back(g / k + (i < g % k ? 1 : 0));
    }
    s.need = s.slices.front();
    s.cpn = cpus > 0 ? static_cast<std::int32_t>((cpus + k - 1) / k) : 0;
    s.mpn = memory_mib > 0 ? (memory_mib + k - 1) / k : 0;
  } else {
    s.cpg = cpus > 0 ? static_cast<std::int32_t>((cpus + g - 1) / g) : 0;
    s.mpg = memory_mib > 0 ? (memory_mib + g - 1) / g : 0;
  }
  (void)view;
  return s;
}

std::string SlurmPolicy::never_fits(const ClusterView& view, JobIndex j) const {
  const Job& job = view.workload().jobs[j];
  const Part& p = parts_[static_cast<std::size_t>(part_[j])];
  const Shape& s = shape_[j];
  // What the partition's nodes hold of this shape when empty, once per kind of ask.
  const auto key = std::tuple(part_[j], constraint_of(job), s.fixed, s.exclusive, s.need, s.cpn, s.mpn, s.cpg, s.mpg);
  auto [at, fresh] = room_of_.try_emplace(key, 0);
  if (fresh)
    for (NodeId id : p.nodes) {
      if (!type_ok(view, job, id)) continue;
      const auto& node = view.cluster().node(id);
      const Avail full{node.gpus, node.cpus, node.memory_mib, true};
      at->second += capacity(view, s, id, full) > 0 ? (s.fixed ? 1 : capacity(view, s, id, full)) : 0;
    }
  const std::int64_t have = at->second;
  const std::int64_t want = s.fixed ? static_cast<std::int64_t>(s.slices.size()) : s.total;
  if (have >= want) return {};
  return "never fits partition " + p.conf.name + ": asks for " + std::to_string(job.gpus) + " GPUs" +
         (s.fixed ? " on " + std::to_string(s.slices.size()) + " nodes" : "") +
         " (Requested node configuration is not available)";
}

// A job still running at its TimeLimit ends there in state TIMEOUT: here Failed (as the sacct
// importer reads TIMEOUT) with the reason, not a preemption. Collected first: failing a job
// calls back into this policy (on_release, on_end), which edits by_kill_.
void SlurmPolicy::kill_overruns(Session& s) {
  const Tick now = s.now();
  std::vector<JobIndex> due;
  for (auto it = by_kill_.begin(); it != by_kill_.end() && it->first <= now; ++it) {
    const JobIndex j = it->second;
    if (limit_[j] == kUnlimited || s.terminating(j)) continue;
    due.push_back(j);
  }
  for (const JobIndex j : due)
    if (s.state(j) == JobState::Running) s.fail(j, "timeout: TimeLimit reached");
}

}  // namespace headroom::policies::slurm::detail
