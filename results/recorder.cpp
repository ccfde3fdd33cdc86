#include "results/recorder.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace headroom::results {

Recorder::Recorder(const models::Workload& workload, const models::ClusterSpec& cluster, bool record_events)
    : cluster_(cluster), record_events_(record_events) {
  result_.jobs.reserve(workload.jobs.size());
  for (const models::Job& j : workload.jobs) {
    JobRecord rec;
    rec.trace_id = j.trace_id;
    rec.tenant = j.tenant;
    rec.queue = j.queue;
    rec.kind = static_cast<std::uint8_t>(j.kind);
    rec.state = static_cast<std::uint8_t>(models::JobState::Pending);
    rec.gpus = j.gpus;
    rec.gpu_milli = j.gpu_milli;
    rec.submit = j.submit;
    rec.runtime = j.runtime;
    rec.walltime = j.walltime;
    rec.trace_start = j.trace_start;
    result_.jobs.push_back(rec);
  }
  open_from_.assign(workload.jobs.size(), 0);
  result_.tenants = workload.tenants.names();
  result_.queues = workload.queues.names();
  result_.reasons.emplace_back();
  reason_index_.emplace(std::string(), 0);

  // Pool p owns the node ids [nodes of pools before p, + its own nodes).
  for (std::size_t p = 0; p < cluster_.pools.size(); ++p) {
    const models::NodePool& pool = cluster_.pools[p];
    result_.pools.push_back(PoolInfo{pool.name, pool.gpu_type, pool.nodes, pool.gpus_per_node});
    node_pool_.insert(node_pool_.end(), static_cast<std::size_t>(std::max(pool.nodes, 0)),
                      static_cast<std::int32_t>(p));
  }
  result_.total_gpus = cluster_.total_gpus();
}

std::uint32_t Recorder::reason_id(std::string_view reason) {
  if (reason.empty()) return 0;
  if (const auto it = reason_index_.find(reason); it != reason_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(result_.reasons.size());
  result_.reasons.emplace_back(reason);
  reason_index_.emplace(std::string(reason), id);
  return id;
}

void Recorder::on_event(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                        std::string_view reason) {
  if (kind == models::AuditKind::Preempt && job < result_.jobs.size()) ++result_.jobs[job].preemptions;
  if (kind == models::AuditKind::Requeue) close_placement(job, time);  // back to pending: released
  if (!record_events_) return;
  result_.events.push_back(EventRecord{time, static_cast<std::uint8_t>(kind), job, detail, reason_id(reason)});
}

void Recorder::on_start(Tick time, models::JobIndex job, const models::Placement& placement) {
  HEADROOM_ASSERT(job < result_.jobs.size(), "on_start for unknown job " + std::to_string(job));
  JobRecord& rec = result_.jobs[job];
  if (rec.start < 0) rec.start = time;
  rec.state = static_cast<std::uint8_t>(models::JobState::Running);
  close_placement(job, time);
  open_from_[job] = result_.placements.size() + 1;
  for (const models::Slice& s : placement)
    result_.placements.push_back(
        PlacementRecord{job, time, -1, static_cast<std::int32_t>(s.node), static_cast<std::int32_t>(s.gpus)});

  // Placements hold a handful of slices; a small sort beats a set.
  std::vector<models::NodeId> nodes;
  nodes.reserve(placement.size());
  for (const models::Slice& s : placement) nodes.push_back(s.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  rec.nodes_used = static_cast<std::int32_t>(nodes.size());
  if (nodes.empty()) {
    rec.first_node = -1;
    rec.pool = -1;
  } else {
    rec.first_node = static_cast<std::int32_t>(nodes.front());
    rec.pool = nodes.front() < node_pool_.size() ? node_pool_[nodes.front()] : -1;
  }
}

void Recorder::on_end(Tick time, models::JobIndex job, models::JobState state) {
  HEADROOM_ASSERT(job < result_.jobs.size(), "on_end for unknown job " + std::to_string(job));
  JobRecord& rec = result_.jobs[job];
  rec.state = static_cast<std::uint8_t>(state);
  // Unfinished jobs have no end: the summary charges a running one up to sim_end.
  if (state != models::JobState::Unfinished) {
    rec.end = time;
    close_placement(job, time);
  }
}

void Recorder::close_placement(models::JobIndex job, Tick time) {
  if (job >= open_from_.size() || open_from_[job] == 0) return;
  for (std::size_t i = open_from_[job] - 1; i < result_.placements.size(); ++i)
    if (result_.placements[i].job == job && result_.placements[i].end < 0) result_.placements[i].end = time;
  open_from_[job] = 0;
}

void Recorder::on_sample(const models::Sample& sample) {
  TimeSeries& ts = result_.timeseries;
  ts.time.push_back(sample.time);
  ts.running_jobs.push_back(sample.running_jobs);
  ts.pending_jobs.push_back(sample.pending_jobs);
  auto append = [](std::vector<std::int32_t>& out, std::span<const std::int32_t> row) {
    out.insert(out.end(), row.begin(), row.end());
  };
  append(ts.pool_used_gpus, sample.pool_used_gpus);
  append(ts.pool_free_gpus, sample.pool_free_gpus);
  append(ts.tenant_used_gpus, sample.tenant_used_gpus);
  append(ts.tenant_pending_jobs, sample.tenant_pending_jobs);
  append(ts.tenant_pending_gpus, sample.tenant_pending_gpus);
  append(ts.pending_by_reason, sample.pending_by_reason);
}

}  // namespace headroom::results
