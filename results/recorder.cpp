#include "results/recorder.hpp"

#include <algorithm>

#include "results/chunks.hpp"
#include "sim/errors.hpp"

namespace headroom::results {
namespace {

// Offers chunk `index` of a row table's column, read in place: `count` rows from row `first`.
template <class Row, class T>
void offer_rows(chunks::ChunkCache& cache, std::string where, const std::vector<Row>& rows, T Row::*member,
                std::size_t index, std::size_t first, std::size_t count, std::size_t chunk_rows,
                const chunks::Fill& fill) {
  const chunks::Elements e{reinterpret_cast<const unsigned char*>(&(rows[first].*member)), sizeof(Row), count,
                           sizeof(T)};
  cache.offer(where, index, e, chunk_rows * sizeof(T), fill);
}

// Offers the chunk of an appended-to column that its last row completed, if it did. Appended
// columns are offered with fill value zero (a constant non-zero one is filtered again on write).
template <class Row, class T>
void offer_if_full(chunks::ChunkCache& cache, const char* table, const char* name, const std::vector<Row>& rows,
                   T Row::*member) {
  constexpr std::size_t kRows = chunks::full_chunk_rows(sizeof(T), 1);
  if (rows.empty() || rows.size() % kRows != 0) return;
  offer_rows(cache, std::string(table) + name, rows, member, rows.size() / kRows - 1, rows.size() - kRows, kRows, kRows,
             chunks::Fill{});
}

}  // namespace

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
  // Most jobs log a submit, a start, an end and often a waiting event, and have one or two
  // placement rows: reserving that much up front saves the copies and fresh pages of growing
  // these tables (a reservation costs address space, not memory, until rows are written).
  if (record_events_) result_.events.reserve(4 * workload.jobs.size());
  result_.placements.reserve(2 * workload.jobs.size());
  if (!workload.jobs.empty()) submit_span_ = workload.jobs.back().submit - workload.jobs.front().submit;
  open_from_.assign(workload.jobs.size(), 0);
  result_.tenants = workload.tenants.names();
  result_.queues = workload.queues.names();
  result_.reasons.emplace_back();
  reason_slots_.resize(1024);

  // Pool p owns the node ids [nodes of pools before p, + its own nodes).
  for (std::size_t p = 0; p < cluster_.pools.size(); ++p) {
    const models::NodePool& pool = cluster_.pools[p];
    result_.pools.push_back(PoolInfo{pool.name, pool.gpu_type, pool.nodes, pool.gpus_per_node, pool.gpu_hour_price});
    node_pool_.insert(node_pool_.end(), static_cast<std::size_t>(std::max(pool.nodes, 0)),
                      static_cast<std::int32_t>(p));
  }
  result_.total_gpus = cluster_.total_gpus();
  open_preempt_.assign(workload.jobs.size(), -1);
  killed_at_.assign(workload.jobs.size(), -1);
  open_kill_.assign(workload.jobs.size(), -1);
  node_outage_.assign(node_pool_.size(), -1);
}

void Recorder::stream_chunks() {
  if (result_.chunk_cache) return;
  result_.chunk_cache = std::make_shared<chunks::ChunkCache>();
  chunks::ChunkCache& cache = *result_.chunk_cache;
  const std::vector<JobRecord>& jobs = result_.jobs;
  if (jobs.empty()) return;
  // The trace's columns are final now: all their chunks, the last one padded as on write.
  chunks::for_each_job_input_column([&](const char* name, auto member) {
    using T = std::remove_reference_t<decltype(jobs.front().*member)>;
    const std::size_t rows = std::min(jobs.size(), chunks::full_chunk_rows(sizeof(T), 1));
    const chunks::Fill fill = chunks::constant_fill(chunks::Elements{
        reinterpret_cast<const unsigned char*>(&(jobs.front().*member)), sizeof(JobRecord), jobs.size(), sizeof(T)});
    for (std::size_t first = 0, index = 0; first < jobs.size(); first += rows, ++index)
      offer_rows(cache, std::string("/jobs/") + name, jobs, member, index, first, std::min(rows, jobs.size() - first),
                 rows, fill);
  });
}

void Recorder::finish_streaming() {
  if (result_.chunk_cache) result_.chunk_cache->wait();
}

template <class T>
void Recorder::make_room(const std::vector<T>& table, std::size_t n) {
  // Offered chunks are read in place by the cache's thread: let it finish before a table moves.
  if (result_.chunk_cache && table.size() + n > table.capacity()) result_.chunk_cache->wait();
}

void Recorder::offer_event_chunks() {
  // The int64 column's chunks are the shortest; the others' are whole multiples of them.
  if (result_.events.size() % chunks::full_chunk_rows(sizeof(Tick), 1) != 0) return;
  chunks::for_each_event_column([&](const char* name, auto member, bool) {
    offer_if_full(*result_.chunk_cache, "/events/", name, result_.events, member);
  });
}

void Recorder::offer_placement_chunks() {
  if (result_.placements.size() % chunks::full_chunk_rows(sizeof(Tick), 1) != 0) return;
  chunks::for_each_placement_fixed_column([&](const char* name, auto member) {
    offer_if_full(*result_.chunk_cache, "/placements/", name, result_.placements, member);
  });
}

void Recorder::offer_sample_chunks() {
  chunks::ChunkCache& cache = *result_.chunk_cache;
  const TimeSeries& ts = result_.timeseries;
  const std::size_t rows = ts.time.size();
  auto offer_vector = [&](const char* name, const auto& v, std::size_t cols) {
    using T = typename std::remove_reference_t<decltype(v)>::value_type;
    if (cols == 0 || v.size() != rows * cols) return;
    const std::size_t chunk_rows = chunks::full_chunk_rows(sizeof(T), cols);
    if (rows % chunk_rows != 0) return;
    const std::size_t count = chunk_rows * cols;
    const chunks::Elements e{reinterpret_cast<const unsigned char*>(v.data() + (v.size() - count)), sizeof(T), count,
                             sizeof(T)};
    cache.offer(std::string("/timeseries/") + name, rows / chunk_rows - 1, e, count * sizeof(T), chunks::Fill{});
  };
  offer_vector("time", ts.time, 1);
  offer_vector("running_jobs", ts.running_jobs, 1);
  offer_vector("pending_jobs", ts.pending_jobs, 1);
  chunks::for_each_timeseries_matrix([&](const char* name, auto member) {
    const auto& v = ts.*member;
    if (rows > 0 && v.size() % rows == 0) offer_vector(name, v, v.size() / rows);
  });
}

std::uint32_t Recorder::reason_id(std::string_view reason) {
  if (reason.empty()) return 0;
  // Runs repeat a few reasons: the last ones found are checked before the index.
  for (const RecentReason& r : recent_reasons_)
    if (r.id != 0 && r.text == reason) return r.id;
  const std::uint64_t hash = std::hash<std::string_view>{}(reason);
  const std::size_t mask = reason_slots_.size() - 1;
  std::size_t i = hash & mask;
  while (reason_slots_[i].id != 0 && (reason_slots_[i].hash != hash || result_.reasons[reason_slots_[i].id] != reason))
    i = (i + 1) & mask;
  std::uint32_t id = reason_slots_[i].id;
  if (id == 0) {
    id = static_cast<std::uint32_t>(result_.reasons.size());
    result_.reasons.emplace_back(reason);
    reason_slots_[i] = {hash, id};
    if (++reason_slots_used_ * 2 > reason_slots_.size()) {
      std::vector<ReasonSlot> old(reason_slots_.size() * 2);
      old.swap(reason_slots_);
      const std::size_t m = reason_slots_.size() - 1;
      for (const ReasonSlot& s : old) {
        if (s.id == 0) continue;
        std::size_t k = s.hash & m;
        while (reason_slots_[k].id != 0) k = (k + 1) & m;
        reason_slots_[k] = s;
      }
    }
  }
  RecentReason& r = recent_reasons_[recent_next_];
  recent_next_ = (recent_next_ + 1) % recent_reasons_.size();
  r.text.assign(reason);
  r.id = id;
  return id;
}

void Recorder::on_event(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                        std::string_view reason) {
  on_lost_work(time, kind, job, detail, reason, 0);
}

void Recorder::on_lost_work(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                            std::string_view reason, std::int64_t lost_gpu_ms) {
  using K = models::AuditKind;
  const bool known_job = job < result_.jobs.size();
  std::int64_t row_lost = lost_gpu_ms;
  switch (kind) {
    case K::Preempt:
      if (known_job) {
        ++result_.jobs[job].preemptions;
        open_preempt_[job] = record_events_ ? static_cast<std::int64_t>(result_.events.size()) : -1;
      }
      break;
    case K::Requeue:
    case K::Finish:
      if (kind == K::Requeue) close_placement(job, time);  // back to pending: released
      // A preemption taking effect: its lost work goes on the preempt row, which names the
      // victim, the preemptor and the rule.
      if (known_job && open_preempt_[job] >= 0) {
        result_.events[static_cast<std::size_t>(open_preempt_[job])].lost_gpu_ms += lost_gpu_ms;
        row_lost = 0;
      }
      if (known_job) open_preempt_[job] = -1;
      // A job ended Failed by the failure drill (killed by a node failure with no retry left: the
      // engine ends it at the instant of the kill) or by the system itself (a Slurm TimeLimit kill,
      // a kubelet refusal): counted apart, so the drill reports only what it caused.
      if (kind == K::Finish && detail == static_cast<std::int32_t>(models::JobState::Failed) && !reason.empty()) {
        if (known_job && killed_at_[job] == time)
          ++result_.jobs_failed_by_failure;
        else
          ++result_.jobs_failed_by_policy;
      }
      break;
    case K::Kill:
      if (known_job) open_preempt_[job] = -1;  // a failure overtook a pending preemption
      if (known_job) killed_at_[job] = time;
      close_placement(job, time);  // its node went down: released
      ++result_.jobs_killed;
      result_.failure_lost_gpu_ms += lost_gpu_ms;
      break;
    case K::Reject:
      if (detail == models::kRejectPermission && known_job) {
        const std::uint32_t t = result_.jobs[job].tenant;
        if (result_.tenant_denied.size() <= t)
          result_.tenant_denied.resize(std::max(result_.tenants.size(), std::size_t{t} + 1));
        ++result_.tenant_denied[t];
      }
      break;
    case K::NodeDown: ++result_.node_outages; break;
    case K::Retry: ++result_.job_retries; break;
    case K::Drill: {
      const auto d = static_cast<std::size_t>(std::max(detail, 0));
      if (result_.drill_start.size() <= d) {
        result_.drill_start.resize(d + 1, -1);
        result_.drill_recovered.resize(d + 1, -1);
      }
      result_.drill_start[d] = time;
      break;
    }
    case K::Recovered: {
      const auto d = static_cast<std::size_t>(std::max(detail, 0));
      if (d < result_.drill_recovered.size()) result_.drill_recovered[d] = time;
      break;
    }
    default: break;
  }
  track_outage(time, kind, job, detail, reason, lost_gpu_ms);
  if (!record_events_) return;
  make_room(result_.events, 1);
  result_.events.push_back(
      EventRecord{time, static_cast<std::uint8_t>(kind), job, detail, reason_id(reason), row_lost});
  if (result_.chunk_cache) offer_event_chunks();
}

std::uint32_t Recorder::outage_row(Tick time, std::string_view reason) {
  const std::uint32_t rid = reason_id(reason);
  // The rows begun at this instant, newest first (a kill may drain another node, whose
  // maintenance row comes between a scripted outage's node_down rows).
  for (std::size_t i = result_.outages.size(); i-- > 0 && result_.outages[i].start == time;) {
    OutageRecord& o = result_.outages[i];
    const bool open_drill =
        o.kind == static_cast<std::uint8_t>(OutageKind::Scripted) && o.reason == 0 && reason.rfind("outage:", 0) == 0;
    if (o.reason == rid || open_drill) {
      o.reason = rid;
      return static_cast<std::uint32_t>(i);
    }
  }
  OutageRecord o;
  o.start = time;
  o.reason = rid;
  o.kind = static_cast<std::uint8_t>(reason.rfind("maintenance", 0) == 0 ? OutageKind::Maintenance
                                     : reason.rfind("outage:", 0) == 0   ? OutageKind::Scripted
                                                                         : OutageKind::Failure);
  result_.outages.push_back(o);
  outage_down_.push_back(0);
  return static_cast<std::uint32_t>(result_.outages.size() - 1);
}

void Recorder::track_outage(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                            std::string_view reason, std::int64_t lost_gpu_ms) {
  using K = models::AuditKind;
  const bool known_node = detail >= 0 && static_cast<std::size_t>(detail) < node_outage_.size();
  const auto node = static_cast<std::size_t>(std::max(detail, 0));
  switch (kind) {
    case K::Drill: {
      // The scripted outage's node_down and kill rows follow at the same instant.
      OutageRecord o;
      o.start = time;
      o.kind = static_cast<std::uint8_t>(OutageKind::Scripted);
      o.drill = detail;
      result_.outages.push_back(o);
      outage_down_.push_back(0);
      break;
    }
    case K::NodeDown: {
      if (!known_node) break;
      // A node whose jobs a drain timeout just killed goes down for the same maintenance.
      std::int64_t row = node_outage_[node];
      if (row < 0 || result_.outages[static_cast<std::size_t>(row)].start != time) row = outage_row(time, reason);
      node_outage_[node] = row;
      ++result_.outages[static_cast<std::size_t>(row)].nodes;
      ++outage_down_[static_cast<std::size_t>(row)];
      break;
    }
    case K::NodeUp: {
      if (!known_node || node_outage_[node] < 0) break;
      const auto row = static_cast<std::size_t>(node_outage_[node]);
      node_outage_[node] = -1;
      if (outage_down_[row] > 0 && --outage_down_[row] == 0) result_.outages[row].end = time;
      break;
    }
    case K::Kill: {
      if (job >= result_.jobs.size()) break;
      std::int64_t row = known_node ? node_outage_[node] : -1;
      if (row < 0 || result_.outages[static_cast<std::size_t>(row)].start != time) {
        row = outage_row(time, reason);
        if (known_node && node_outage_[node] < 0) node_outage_[node] = row;  // down once drained, below
      }
      KillRecord k;
      k.outage = static_cast<std::uint32_t>(row);
      k.job = job;
      k.time = time;
      k.lost_gpu_ms = lost_gpu_ms;
      k.nodes = result_.jobs[job].nodes_used;
      open_kill_[job] = static_cast<std::int64_t>(result_.kills.size());
      result_.kills.push_back(k);
      break;
    }
    default: break;
  }
}

void Recorder::on_bound(Tick time, models::JobIndex job, std::int32_t gpus) {
  settle_bound(job, time);
  if (gpus > 0) bound_[job] = {gpus, time};
}

void Recorder::settle_bound(models::JobIndex job, Tick time) {
  const auto it = bound_.find(job);
  if (it == bound_.end()) return;
  const std::int64_t held = std::int64_t{it->second.first} * std::max<Tick>(0, time - it->second.second);
  result_.bound_idle_gpu_ms += held;
  // Bound ahead of a restart (a kill is open only for a job that was running, whose pods were
  // settled when it started, so all of this was bound after the kill): partial only when the
  // bound pods held their GPUs for some time (a gang bound and started in one scheduling pass was
  // re-formed whole).
  if (job < open_kill_.size() && open_kill_[job] >= 0 && held > 0) {
    KillRecord& k = result_.kills[static_cast<std::size_t>(open_kill_[job])];
    k.partial = 1;
    k.partial_gpu_ms += held;
  }
  bound_.erase(it);
}

void Recorder::on_start(Tick time, models::JobIndex job, const models::Placement& placement) {
  HEADROOM_ASSERT(job < result_.jobs.size(), "on_start for unknown job " + std::to_string(job));
  settle_bound(job, time);
  if (open_kill_[job] >= 0) {
    result_.kills[static_cast<std::size_t>(open_kill_[job])].restart = time;
    open_kill_[job] = -1;
  }
  JobRecord& rec = result_.jobs[job];
  if (rec.start < 0) rec.start = time;
  rec.state = static_cast<std::uint8_t>(models::JobState::Running);
  close_placement(job, time);
  open_from_[job] = result_.placements.size() + 1;
  for (const models::Slice& s : placement) {
    make_room(result_.placements, 1);
    result_.placements.push_back(PlacementRecord{job, time, -1, static_cast<std::int32_t>(s.node),
                                                 static_cast<std::int32_t>(s.gpus), s.gpu_milli,
                                                 s.gpu_milli > 0 ? s.device : 0});
    if (result_.chunk_cache) offer_placement_chunks();
  }

  // The distinct nodes and the lowest. A placement names each node once (ClusterState::check),
  // so the slices are counted; a repeat (policies' tests may record one) is counted once.
  std::int32_t distinct = 0;
  models::NodeId lowest = 0;
  if (models::first_repeat(placement) == placement.size()) {
    distinct = static_cast<std::int32_t>(placement.size());
    if (!placement.empty()) lowest = placement.front().node;
    for (const models::Slice& s : placement) lowest = std::min(lowest, s.node);
  } else {
    std::vector<models::NodeId> ids;
    for (const models::Slice& s : placement) ids.push_back(s.node);
    std::sort(ids.begin(), ids.end());
    distinct = static_cast<std::int32_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
    lowest = ids.front();
  }
  rec.nodes_used = distinct;
  if (distinct == 0) {
    rec.first_node = -1;
    rec.pool = -1;
  } else {
    rec.first_node = static_cast<std::int32_t>(lowest);
    rec.pool = lowest < node_pool_.size() ? node_pool_[lowest] : -1;
  }
}

void Recorder::on_end(Tick time, models::JobIndex job, models::JobState state) {
  HEADROOM_ASSERT(job < result_.jobs.size(), "on_end for unknown job " + std::to_string(job));
  settle_bound(job, time);  // a killed job that never ran again: its kill row too
  if (open_kill_[job] >= 0) {
    open_kill_[job] = -1;
  }
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
  // A run's rows were appended together in on_start: they are the ones from open_from_ on that
  // name this job, so the scan stops at the first row of another job's run.
  for (std::size_t i = open_from_[job] - 1; i < result_.placements.size() && result_.placements[i].job == job; ++i)
    result_.placements[i].end = time;
  open_from_[job] = 0;
}

void Recorder::on_sample(const models::Sample& sample) {
  TimeSeries& ts = result_.timeseries;
  if (ts.time.size() == 1 && sample.time > ts.time.front()) {
    // The second sample gives the interval: reserve room for twice the samples of the submit
    // span (the tenant matrices grow by a row of every tenant per sample).
    const auto rows = static_cast<std::size_t>(2 * (submit_span_ / (sample.time - ts.time.front())) + 16);
    auto reserve = [&](std::vector<std::int32_t>& v, std::size_t cols) { v.reserve(rows * cols); };
    ts.time.reserve(rows);
    reserve(ts.running_jobs, 1);
    reserve(ts.pending_jobs, 1);
    const std::size_t pools = sample.pool_free_gpus.size();
    reserve(ts.pool_used_gpus, pools);
    reserve(ts.pool_free_gpus, pools);
    reserve(ts.pool_down_gpus, pools);
    reserve(ts.pool_frag_gpus, pools);
    reserve(ts.tenant_used_gpus, sample.tenant_used_gpus.size());
    reserve(ts.tenant_pending_jobs, sample.tenant_pending_jobs.size());
    reserve(ts.tenant_pending_gpus, sample.tenant_pending_gpus.size());
    reserve(ts.pending_by_reason, sample.pending_by_reason.size());
  }
  make_room(ts.time, 1);
  ts.time.push_back(sample.time);
  make_room(ts.running_jobs, 1);
  ts.running_jobs.push_back(sample.running_jobs);
  make_room(ts.pending_jobs, 1);
  ts.pending_jobs.push_back(sample.pending_jobs);
  auto append = [&](std::vector<std::int32_t>& out, std::span<const std::int32_t> row) {
    make_room(out, row.size());
    out.insert(out.end(), row.begin(), row.end());
  };
  auto append_zeros = [&](std::vector<std::int32_t>& out, std::size_t n) {
    make_room(out, n);
    out.insert(out.end(), n, 0);
  };
  append(ts.pool_used_gpus, sample.pool_used_gpus);
  append(ts.pool_free_gpus, sample.pool_free_gpus);
  if (sample.pool_down_gpus.size() == sample.pool_free_gpus.size()) {
    append(ts.pool_down_gpus, sample.pool_down_gpus);
  } else {
    append_zeros(ts.pool_down_gpus, sample.pool_free_gpus.size());
  }
  if (sample.pool_frag_gpus.size() == sample.pool_free_gpus.size()) {
    append(ts.pool_frag_gpus, sample.pool_frag_gpus);
  } else {
    append_zeros(ts.pool_frag_gpus, sample.pool_free_gpus.size());
  }
  append(ts.tenant_used_gpus, sample.tenant_used_gpus);
  append(ts.tenant_pending_jobs, sample.tenant_pending_jobs);
  append(ts.tenant_pending_gpus, sample.tenant_pending_gpus);
  append(ts.pending_by_reason, sample.pending_by_reason);
  if (result_.chunk_cache) offer_sample_chunks();
}

}  // namespace headroom::results
