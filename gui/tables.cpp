#include "gui/tables.hpp"

#include <QColor>
#include <cmath>

#include "gui/jobs_model.hpp"

namespace headroom::gui {
namespace {

QVariant align(bool left) {
  return QVariant::fromValue(Qt::Alignment((left ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
}

QString signed_number(double v, int decimals) {
  return (v > 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', decimals);
}

}  // namespace

JobEventsModel::JobEventsModel(QObject* parent) : QAbstractTableModel(parent) {}

void JobEventsModel::set_job(std::shared_ptr<const ReplayData> data, int job) {
  beginResetModel();
  data_ = std::move(data);
  rows_.clear();
  from_events_ = false;
  job_ = data_ && job >= 0 && static_cast<std::size_t>(job) < data_->result.jobs.size() ? job : -1;
  if (job_ >= 0) {
    const ReplayData& d = *data_;
    const auto& jobs = d.result.jobs;
    const std::size_t j = static_cast<std::size_t>(job_);
    for (std::uint32_t k = d.event_offset[j]; k < d.event_offset[j + 1]; ++k) {
      const results::EventRecord& e = d.result.events[d.event_index[k]];
      Row row{e.time - d.origin, e.kind, {}, {}};
      switch (static_cast<EventKind>(e.kind)) {
        case EventKind::Start: row.detail = e.detail == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(e.detail); break;
        case EventKind::Finish:
        case EventKind::Unfinished: row.detail = state_name(static_cast<std::uint8_t>(e.detail)); break;
        case EventKind::Preempt:
          row.detail = e.detail >= 0 && static_cast<std::size_t>(e.detail) < jobs.size()
                           ? tr("by job %1").arg(jobs[static_cast<std::size_t>(e.detail)].trace_id)
                           : tr("by the system");
          break;
        default:
          if (e.kind == kWaitingEvent) row.detail = pending_code_name(e.detail);
          break;
      }
      if (e.reason < d.result.reasons.size()) row.reason = QString::fromStdString(d.result.reasons[e.reason]);
      rows_.push_back(std::move(row));
    }
    from_events_ = !rows_.empty();
    if (rows_.empty()) {
      const results::JobRecord& r = jobs[j];
      rows_.push_back({r.submit - d.origin, static_cast<std::uint8_t>(EventKind::Submit), {}, {}});
      if (r.start >= 0)
        rows_.push_back({r.start - d.origin,
                         static_cast<std::uint8_t>(EventKind::Start),
                         r.gpus == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(r.gpus),
                         {}});
      if (r.end >= 0) {
        const auto kind = r.state == static_cast<std::uint8_t>(State::Rejected) ? EventKind::Reject : EventKind::Finish;
        rows_.push_back({r.end - d.origin, static_cast<std::uint8_t>(kind), state_name(r.state), {}});
      }
    }
  }
  endResetModel();
}

int JobEventsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int JobEventsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

QVariant JobEventsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == kRawRole) return index.column() == Time ? QVariant(static_cast<qint64>(r.time)) : QVariant(r.kind);
  if (role == Qt::TextAlignmentRole) return align(index.column() != Time);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Time: return format_offset(r.time);
    case Event: return event_name(r.kind);
    case Detail: return r.detail;
    case Reason: return r.reason;
  }
  return {};
}

QVariant JobEventsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= Columns) return {};
  static const char* const names[] = {"Time", "Event", "Detail", "Reason"};
  return tr(names[section]);
}

TenantModel::TenantModel(QObject* parent) : QAbstractTableModel(parent) {}

void TenantModel::set_data(std::shared_ptr<const ReplayData> data) {
  beginResetModel();
  data_ = std::move(data);
  total_hours_ = 0;
  if (data_)
    for (const TenantStats& t : data_->tenants) total_hours_ += t.gpu_hours;
  endResetModel();
}

int TenantModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !data_ ? 0 : static_cast<int>(data_->tenants.size());
}
int TenantModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

QVariant TenantModel::data(const QModelIndex& index, int role) const {
  if (!data_ || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const std::size_t row = static_cast<std::size_t>(index.row());
  const TenantStats& t = data_->tenants[row];
  const double share = total_hours_ > 0 ? t.gpu_hours / total_hours_ : 0.0;
  if (role == Qt::DecorationRole && index.column() == Tenant) return tenant_colour(row);
  if (role == Qt::TextAlignmentRole) return align(index.column() == Tenant);
  if (role == kRawRole) {
    switch (index.column()) {
      case Tenant: return t.name;
      case Jobs: return static_cast<qint64>(t.jobs);
      case GpuHours: return t.gpu_hours;
      case Share: return share;
      case MeanWait: return t.mean_wait_s;
      case P95Wait: return t.p95_wait_s;
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Tenant: return t.name;
    case Jobs: return QString::number(t.jobs);
    case GpuHours: return QString::number(t.gpu_hours, 'f', 1);
    case Share: return QString::number(100.0 * share, 'f', 1) + QStringLiteral(" %");
    case MeanWait:
    case P95Wait: {
      if (t.started + t.never_started == 0) return QString();
      const double v = index.column() == MeanWait ? t.mean_wait_s : t.p95_wait_s;
      // Jobs that never started count until the end of the run: the figure is a lower bound.
      return (t.never_started > 0 ? QStringLiteral(">=") : QString()) + format_duration(std::llround(v * 1000));
    }
  }
  return {};
}

QVariant TenantModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= Columns) return {};
  static const char* const names[] = {"Tenant", "Jobs", "GPU-hours", "Share of GPU-hours", "Mean wait", "p95 wait"};
  return tr(names[section]);
}

KpiCompareModel::KpiCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void KpiCompareModel::set_runs(std::vector<std::shared_ptr<const ReplayData>> runs) {
  beginResetModel();
  runs_ = std::move(runs);
  endResetModel();
}

double KpiCompareModel::value(const ReplayData& d, int kpi) {
  const Kpis& k = d.kpis;
  switch (kpi) {
    case Jobs: return static_cast<double>(k.jobs);
    case Completed: return static_cast<double>(k.by_state[static_cast<std::size_t>(State::Completed)]);
    case MeanWait: return k.wait_mean_s;
    case MedianWait: return k.wait_median_s;
    case P95Wait: return k.wait_p95_s;
    case MeanJct: return k.jct_mean_s;
    case Utilization: return k.utilization;
    case Makespan: return k.makespan_s;
    case Jain: return k.jain;
  }
  return 0;
}

QString KpiCompareModel::format(int kpi, double v) {
  switch (kpi) {
    case Jobs:
    case Completed: return QString::number(static_cast<qint64>(std::llround(v)));
    case Utilization: return QString::number(100.0 * v, 'f', 1) + QStringLiteral(" %");
    case Jain: return QString::number(v, 'f', 3);
    default: return format_duration(std::llround(v * 1000));
  }
}

QString KpiCompareModel::format_delta(int kpi, double v, double base) {
  const double diff = v - base;
  switch (kpi) {
    case Utilization: return signed_number(100.0 * diff, 1) + QStringLiteral(" pp");
    case Jain: return signed_number(diff, 3);
    default: break;
  }
  QString text = kpi == Jobs || kpi == Completed
                     ? signed_number(diff, 0)
                     : (diff > 0 ? QStringLiteral("+") : QString()) + format_duration(std::llround(diff * 1000));
  if (base != 0) text += QStringLiteral(" (%1 %)").arg(signed_number(100.0 * diff / base, 1));
  return text;
}

int KpiCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || runs_.empty() ? 0 : KpiCount;
}

int KpiCompareModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || runs_.empty()) return 0;
  return 1 + static_cast<int>(runs_.size()) + static_cast<int>(runs_.size()) - 1;
}

QVariant KpiCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const int kpi = index.row(), col = index.column();
  const int n = static_cast<int>(runs_.size());
  if (role == Qt::TextAlignmentRole) return align(col == 0);
  if (col == 0) {
    if (role == Qt::DisplayRole) return headerData(kpi, Qt::Vertical, role);
    if (role == Qt::ToolTipRole && kpi == Jain)
      return tr(
          "Jain's fairness index over tenants' GPU-hours: (sum x)^2 / (n * sum x^2); 1 = all equal, 1/n = one tenant "
          "has all");
    return {};
  }
  const bool delta = col > n;
  const std::size_t run = static_cast<std::size_t>(delta ? col - n : col - 1);
  const double v = value(*runs_[run], kpi);
  const double base = value(*runs_.front(), kpi);
  if (role == kRawRole) return delta ? v - base : v;
  if (role == Qt::DisplayRole) return delta ? format_delta(kpi, v, base) : format(kpi, v);
  if (role == Qt::ForegroundRole && delta && v != base) {
    // Less waiting, more completed work, higher utilization and fairness are better.
    const bool higher_better = kpi == Completed || kpi == Utilization || kpi == Jain;
    if (kpi == Jobs) return {};
    return (v > base) == higher_better ? QColor(0x2e7d32) : QColor(0xc62828);
  }
  return {};
}

QVariant KpiCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  const int n = static_cast<int>(runs_.size());
  if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section > n && section < columnCount())
    return tr("Difference against %1").arg(runs_.front()->label);
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) {
    static const char* const names[] = {"Jobs",     "Completed",       "Mean wait", "Median wait", "p95 wait",
                                        "Mean JCT", "GPU utilization", "Makespan",  "Jain's index"};
    return section >= 0 && section < KpiCount ? tr(names[section]) : QVariant();
  }
  if (section == 0) return tr("KPI");
  if (section >= 1 && section <= n) return runs_[static_cast<std::size_t>(section - 1)]->label;
  if (section > n && section < columnCount())
    return tr("\u0394 %1").arg(runs_[static_cast<std::size_t>(section - n)]->label);
  return {};
}

QString to_csv(const QAbstractItemModel& model) {
  const auto field = [](QString s) {
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n'))) {
      s.replace(QLatin1Char('"'), QStringLiteral("\"\""));
      s = QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
  };
  QString out;
  const int rows = model.rowCount(), cols = model.columnCount();
  for (int c = 0; c < cols; ++c) {
    if (c) out += QLatin1Char(',');
    out += field(model.headerData(c, Qt::Horizontal).toString());
  }
  out += QLatin1Char('\n');
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (c) out += QLatin1Char(',');
      out += field(model.data(model.index(r, c)).toString());
    }
    out += QLatin1Char('\n');
  }
  return out;
}

}  // namespace headroom::gui
