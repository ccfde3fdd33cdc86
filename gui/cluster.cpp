#include "gui/cluster.hpp"

#include <QColor>
#include <algorithm>

#include "gui/replay_data.hpp"

namespace headroom::gui {

QString pending_code_name(int code) {
  static const char* const kNames[kPendingCodes] = {"none given",  "capacity",   "quota",     "priority", "gang",
                                                    "reservation", "preemption", "admission", "other"};
  return code >= 0 && code < kPendingCodes ? QString::fromLatin1(kNames[code]) : QStringLiteral("#%1").arg(code);
}

ClusterIndex build_cluster_index(const results::RunResult& r) {
  ClusterIndex x;
  for (std::size_t p = 0; p < r.pools.size(); ++p) {
    x.pool_first_node.push_back(x.nodes);
    for (std::int32_t n = 0; n < r.pools[p].nodes; ++n) {
      x.node_pool.push_back(static_cast<std::int32_t>(p));
      x.node_gpus.push_back(r.pools[p].gpus_per_node);
    }
    x.nodes += std::max(0, r.pools[p].nodes);
  }
  const Tick open_end = std::max(r.sim_end, r.sim_start) + 1;
  const auto end_of = [&](Tick start, Tick end) {
    return end >= 0 ? std::max(end, start) : std::max(open_end, start + 1);
  };
  // Nodes named by /placements past the pools' (an inconsistent file) get a pool of their own.
  for (const results::PlacementRecord& p : r.placements) {
    if (p.node < 0) continue;
    while (x.nodes <= p.node) {
      x.node_pool.push_back(-1);
      x.node_gpus.push_back(0);
      ++x.nodes;
    }
  }
  const auto n = static_cast<std::size_t>(x.nodes);
  std::vector<std::int32_t> sum(n, 0);
  x.slice_offset.assign(n + 1, 0);
  for (const results::PlacementRecord& p : r.placements)
    if (p.node >= 0) ++x.slice_offset[static_cast<std::size_t>(p.node) + 1];
  for (std::size_t i = 0; i < n; ++i) x.slice_offset[i + 1] += x.slice_offset[i];
  x.slices.resize(x.slice_offset[n]);
  std::vector<std::uint32_t> fill(x.slice_offset.begin(), x.slice_offset.end() - 1);
  for (const results::PlacementRecord& p : r.placements) {
    if (p.node < 0) continue;
    x.slices[fill[static_cast<std::size_t>(p.node)]++] = {p.start, end_of(p.start, p.end), p.job, p.gpus};
  }
  x.longest.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = x.slices.begin() + x.slice_offset[i], e = x.slices.begin() + x.slice_offset[i + 1];
    const auto by_start = [](const ClusterIndex::Slice& a, const ClusterIndex::Slice& c) {
      return a.start != c.start ? a.start < c.start : a.job < c.job;
    };
    if (!std::is_sorted(b, e, by_start)) std::sort(b, e, by_start);  // files list slices by start
    for (auto it = b; it != e; ++it) {
      x.longest[i] = std::max(x.longest[i], it->end - it->start);
      if (x.node_pool[i] < 0) x.node_gpus[i] = std::max(x.node_gpus[i], it->gpus);
    }
  }

  // Runs by job: distinct starts of its slices, or first start to end from /jobs. Grouped by job
  // with a counting sort (rows come in time order, not job order), then each job's few runs
  // sorted by start, the longest first among equal starts, which `unique` keeps.
  struct Run {
    Tick start, end;
  };
  x.from_placements = !r.placements.empty();
  std::size_t jobs = r.jobs.size();
  for (const results::PlacementRecord& p : r.placements) jobs = std::max<std::size_t>(jobs, p.job + std::size_t{1});
  std::vector<std::uint32_t> count(jobs + 1, 0);
  if (x.from_placements) {
    for (const results::PlacementRecord& p : r.placements) ++count[p.job + 1];
  } else {
    for (std::size_t j = 0; j < r.jobs.size(); ++j) count[j + 1] += r.jobs[j].start >= 0;
  }
  for (std::size_t j = 0; j < jobs; ++j) count[j + 1] += count[j];
  std::vector<Run> runs(count[jobs]);
  {
    std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
    if (x.from_placements) {
      for (const results::PlacementRecord& p : r.placements) runs[fill[p.job]++] = {p.start, end_of(p.start, p.end)};
    } else {
      for (std::size_t j = 0; j < r.jobs.size(); ++j)
        if (r.jobs[j].start >= 0) runs[fill[j]++] = {r.jobs[j].start, end_of(r.jobs[j].start, r.jobs[j].end)};
    }
  }
  x.run_offset.assign(jobs + 1, 0);
  x.runs.reserve(runs.size());
  for (std::size_t j = 0; j < jobs; ++j) {
    const auto b = runs.begin() + count[j], e = runs.begin() + count[j + 1];
    if (e - b > 1)
      std::sort(b, e,
                [](const Run& a, const Run& c) { return a.start != c.start ? a.start < c.start : a.end > c.end; });
    for (auto it = b; it != e; ++it)
      if (it == b || it->start != (it - 1)->start) x.runs.emplace_back(it->start, it->end);
    x.run_offset[j + 1] = static_cast<std::uint32_t>(x.runs.size());
  }
  return x;
}

Occupancy occupancy_at(const ClusterIndex& x, Tick t, const std::vector<std::uint8_t>& out) {
  Occupancy o;
  o.time = t;
  const auto n = static_cast<std::size_t>(x.nodes);
  o.offset.assign(n + 1, 0);
  o.used.assign(n, 0);
  std::vector<Occupancy::Use> here;
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = x.slices.begin() + x.slice_offset[i], e = x.slices.begin() + x.slice_offset[i + 1];
    auto it = std::upper_bound(b, e, t, [](Tick v, const ClusterIndex::Slice& s) { return v < s.start; });
    here.clear();
    // Only slices starting after t - longest can still run at t.
    while (it != b) {
      --it;
      if (it->start <= t - x.longest[i] - 1) break;
      if (it->end > t) here.push_back({it->job, it->gpus});
    }
    std::int32_t used = 0;
    for (auto u = here.rbegin(); u != here.rend(); ++u) {
      o.uses.push_back(*u);
      used += u->gpus;
    }
    o.used[i] = std::min(used, x.node_gpus[i]);
    o.offset[i + 1] = static_cast<std::uint32_t>(o.uses.size());
    o.used_gpus += o.used[i];
    if (i < out.size() && out[i] > 0) {
      o.down_gpus += x.node_gpus[i] - o.used[i];
      ++(o.used[i] > 0 ? o.draining_nodes : o.out_nodes);
    } else if (o.used[i] == 0)
      ++o.idle_nodes;
    else if (o.used[i] >= x.node_gpus[i])
      ++o.full_nodes;
    else
      ++o.partial_nodes;
  }
  return o;
}

bool running_at(const ClusterIndex& x, std::uint32_t job, Tick t) {
  if (job + std::size_t{1} >= x.run_offset.size()) return false;
  const auto b = x.runs.begin() + x.run_offset[job], e = x.runs.begin() + x.run_offset[job + 1];
  for (auto it = b; it != e && it->first <= t; ++it)
    if (t < it->second) return true;
  return false;
}

std::vector<QueueEntry> queue_at(const ReplayData& d, Tick t) {
  std::vector<QueueEntry> out;
  const results::RunResult& r = d.result;
  const ClusterIndex& x = d.cluster;
  for (std::size_t j = 0; j < r.jobs.size(); ++j) {
    const results::JobRecord& job = r.jobs[j];
    if (job.submit > t) continue;
    if (job.end >= 0 && job.end <= t) continue;
    const auto id = static_cast<std::uint32_t>(j);
    if (running_at(x, id, t)) continue;
    QueueEntry q;
    q.job = id;
    q.since = job.submit;
    if (id + std::size_t{1} < x.run_offset.size())
      for (std::uint32_t k = x.run_offset[id]; k < x.run_offset[id + 1] && x.runs[k].first <= t; ++k)
        q.since = std::max(q.since, x.runs[k].second);
    if (j + 1 < d.event_offset.size()) {
      for (std::uint32_t k = d.event_offset[j]; k < d.event_offset[j + 1]; ++k) {
        const results::EventRecord& e = r.events[d.event_index[k]];
        if (e.time > t) break;
        if (e.kind != kWaitingEvent || e.time < q.since) continue;
        q.code = e.detail;
        q.reason = e.reason;
      }
    }
    out.push_back(q);
  }
  std::sort(out.begin(), out.end(), [](const QueueEntry& a, const QueueEntry& b) {
    return a.since != b.since ? a.since < b.since : a.job < b.job;
  });
  return out;
}

QueueModel::QueueModel(QObject* parent) : QAbstractTableModel(parent) {}

void QueueModel::set_data(std::shared_ptr<const ReplayData> data) {
  beginResetModel();
  data_ = std::move(data);
  rows_.clear();
  endResetModel();
}

void QueueModel::set_time(Tick t) {
  beginResetModel();
  time_ = t;
  rows_ = data_ ? queue_at(*data_, t) : std::vector<QueueEntry>{};
  endResetModel();
}

int QueueModel::job_at(int row) const {
  return row >= 0 && static_cast<std::size_t>(row) < rows_.size() ? static_cast<int>(rows_[row].job) : -1;
}

int QueueModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int QueueModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

QVariant QueueModel::data(const QModelIndex& index, int role) const {
  if (!data_ || !index.isValid() || index.row() >= rowCount() || index.column() >= Columns) return {};
  const QueueEntry& q = rows_[static_cast<std::size_t>(index.row())];
  const results::JobRecord& j = data_->result.jobs[q.job];
  if (role == Qt::DecorationRole && index.column() == Tenant) {
    // As on the cluster map: "other tenants" darker than in the charts.
    const std::size_t rank = j.tenant < data_->tenant_rank.size() ? data_->tenant_rank[j.tenant] : kTopTenants;
    return rank >= kTopTenants ? tenant_colour(kTopTenants).darker(135) : tenant_colour(rank);
  }
  if (role == Qt::TextAlignmentRole)
    return index.column() == Gpus || index.column() == Waiting || index.column() == Job
               ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
               : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && index.column() == Reason && q.reason < data_->result.reasons.size())
    return QString::fromStdString(data_->result.reasons[q.reason]);  // the column is often too narrow
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case Job: return static_cast<qlonglong>(j.trace_id);
      case Tenant: return j.tenant;
      case Gpus: return j.gpus;
      case Waiting: return static_cast<qlonglong>(time_ - q.since);
      case Why: return q.code;
      case Reason: return q.reason;
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Job: return QString::number(j.trace_id);
    case Tenant: return data_->tenant_name(j.tenant);
    case Gpus:
      return j.gpu_milli > 0 && j.gpus <= 1 ? QString::number(j.gpu_milli / 1000.0, 'f', 3) : QString::number(j.gpus);
    case Waiting: return format_duration(time_ - q.since);
    case Why: return pending_code_name(q.code);
    case Reason:
      return q.reason < data_->result.reasons.size() ? QString::fromStdString(data_->result.reasons[q.reason])
                                                     : QString();
  }
  return {};
}

QVariant QueueModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Job: return tr("Job");
    case Tenant: return tr("Tenant");
    case Gpus: return tr("GPUs");
    case Waiting: return tr("Waiting");
    case Why: return tr("Why pending");
    case Reason: return tr("Policy's words");
  }
  return {};
}

std::vector<std::int32_t> node_owner_at(const results::RunResult& r, std::int32_t nodes, Tick t) {
  std::vector<std::int32_t> owner;
  if (r.partitions.empty() || nodes <= 0) return owner;
  owner.assign(static_cast<std::size_t>(nodes), -1);
  for (std::size_t p = 0; p < r.partitions.size(); ++p) {
    const auto& part = r.partitions[p];
    for (std::int32_t n = part.first_node; n < part.first_node + part.nodes && n < nodes; ++n)
      if (n >= 0) owner[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(p);
  }
  // /moves is in the order the moves began; a node's owner changes are in time order.
  for (const auto& m : r.moves)
    if (m.changed >= 0 && m.changed <= t && m.node >= 0 && m.node < nodes)
      owner[static_cast<std::size_t>(m.node)] = m.to;
  return owner;
}

}  // namespace headroom::gui
