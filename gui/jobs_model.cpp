#include "gui/jobs_model.hpp"

#include <QBrush>

namespace headroom::gui {

JobsModel::JobsModel(QObject* parent) : QAbstractTableModel(parent) {}

void JobsModel::set_data(std::shared_ptr<const ReplayData> data) {
  beginResetModel();
  data_ = std::move(data);
  endResetModel();
}

int JobsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !data_ ? 0 : static_cast<int>(data_->result.jobs.size());
}

int JobsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

qint64 JobsModel::raw(int row, int column) const {
  const results::JobRecord& j = data_->result.jobs[static_cast<std::size_t>(row)];
  switch (column) {
    case Job: return j.trace_id;
    case Tenant: return j.tenant;
    case Queue: return j.queue;
    case Kind: return j.kind;
    case State: return j.state;
    case Gpus: return j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli : static_cast<qint64>(j.gpus) * 1000;
    case Submit: return j.submit - data_->origin;
    case Wait: return j.start >= 0 ? j.start - j.submit : -1;
    case Start: return j.start >= 0 ? j.start - data_->origin : -1;
    case End: return j.end >= 0 ? j.end - data_->origin : -1;
    case Runtime: return j.start >= 0 && j.end >= 0 ? j.end - j.start : -1;
    case Preemptions: return j.preemptions;
    case Pool: return j.pool;
  }
  return 0;
}

QVariant JobsModel::data(const QModelIndex& index, int role) const {
  if (!data_ || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const int row = index.row(), col = index.column();
  if (role == kRawRole) return raw(row, col);
  const results::JobRecord& j = data_->result.jobs[static_cast<std::size_t>(row)];
  if (role == Qt::TextAlignmentRole) {
    const bool text = col == Tenant || col == Queue || col == Kind || col == State || col == Pool;
    return QVariant::fromValue(Qt::Alignment((text ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
  }
  if (role == Qt::DecorationRole && col == Tenant) {
    const std::size_t rank = j.tenant < data_->tenant_rank.size() ? data_->tenant_rank[j.tenant] : kTopTenants;
    return tenant_colour(rank);
  }
  if (role == Qt::ToolTipRole && (col == Submit || col == Start || col == End)) {
    const qint64 t = raw(row, col);
    return t < 0 ? QVariant() : QVariant(format_when(*data_, t));
  }
  if (role != Qt::DisplayRole) return {};
  const qint64 v = raw(row, col);
  switch (col) {
    case Job: return QString::number(v);
    case Tenant: return data_->tenant_name(j.tenant);
    case Queue: return data_->queue_name(j.queue);
    case Kind: return kind_name(j.kind);
    case State: return state_name(j.state);
    case Gpus:
      return j.gpu_milli > 0 && j.gpus <= 1 ? QString::number(j.gpu_milli / 1000.0, 'f', 3) : QString::number(j.gpus);
    case Submit:
    case Start:
    case End: return v < 0 ? QString() : format_date(*data_, v);
    case Wait:
    case Runtime: return v < 0 ? QString() : format_duration(v);
    case Preemptions: return QString::number(v);
    case Pool: return data_->pool_name(j.pool);
  }
  return {};
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= Columns) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Submit: return tr("Submit time: the date (UTC) when the trace gives one, else since the first submit");
      case Start: return tr("First start: the date (UTC) when the trace gives one, else since the first submit");
      case End: return tr("End: the date (UTC) when the trace gives one, else since the first submit");
      case Runtime: return tr("End minus first start");
      case Preemptions: return tr("Times the job was preempted");
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  static const char* const names[] = {"Job",  "Tenant", "Queue", "Kind",     "State",    "GPUs", "Submit",
                                      "Wait", "Start",  "End",   "Run time", "Preempt.", "Pool"};
  return tr(names[section]);
}

JobFilterProxy::JobFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) { setSortRole(kRawRole); }

const JobsModel* JobFilterProxy::jobs() const { return qobject_cast<const JobsModel*>(sourceModel()); }

void JobFilterProxy::set_tenant(int tenant) {
  if (tenant == tenant_) return;
  tenant_ = tenant;
  invalidateFilter();
}

void JobFilterProxy::set_state(int state) {
  if (state == state_) return;
  state_ = state;
  invalidateFilter();
}

void JobFilterProxy::set_text(const QString& text) {
  const QString t = text.trimmed();
  if (t == text_) return;
  text_ = t;
  rebuild_text_match();
  invalidateFilter();
}

void JobFilterProxy::source_reset() {
  rebuild_text_match();
  // The source's reset has filtered every row already, with the text matches of the old data:
  // only a text filter needs a second pass.
  if (!text_.isEmpty()) invalidateFilter();
}

void JobFilterProxy::rebuild_text_match() {
  tenant_match_.clear();
  queue_match_.clear();
  const JobsModel* m = jobs();
  if (!m || !m->replay() || text_.isEmpty()) return;
  const results::RunResult& r = m->replay()->result;
  for (const std::string& name : r.tenants)
    tenant_match_.push_back(QString::fromStdString(name).contains(text_, Qt::CaseInsensitive));
  for (const std::string& name : r.queues)
    queue_match_.push_back(QString::fromStdString(name).contains(text_, Qt::CaseInsensitive));
}

bool JobFilterProxy::filterAcceptsRow(int source_row, const QModelIndex&) const {
  const JobsModel* m = jobs();
  if (!m || !m->replay()) return true;
  const results::JobRecord& j = m->replay()->result.jobs[static_cast<std::size_t>(source_row)];
  if (tenant_ >= 0 && j.tenant != static_cast<std::uint32_t>(tenant_)) return false;
  if (state_ >= 0 && j.state != state_) return false;
  if (text_.isEmpty()) return true;
  if (j.tenant < tenant_match_.size() && tenant_match_[j.tenant]) return true;
  if (j.queue < queue_match_.size() && queue_match_[j.queue]) return true;
  return QString::number(j.trace_id).contains(text_);
}

bool JobFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const JobsModel* m = jobs();
  const int col = left.column();
  if (!m || !m->replay()) return QSortFilterProxyModel::lessThan(left, right);
  const ReplayData& d = *m->replay();
  const auto& jobs = d.result.jobs;
  const auto& a_job = jobs[static_cast<std::size_t>(left.row())];
  const auto& b_job = jobs[static_cast<std::size_t>(right.row())];
  if (col == JobsModel::Tenant && a_job.tenant != b_job.tenant) {
    return d.tenant_alpha[a_job.tenant] < d.tenant_alpha[b_job.tenant];
  } else if (col == JobsModel::Queue && a_job.queue != b_job.queue) {
    return d.queue_alpha[a_job.queue] < d.queue_alpha[b_job.queue];
  } else {
    const qint64 a = m->raw(left.row(), col), b = m->raw(right.row(), col);
    if (a != b) return a < b;
  }
  return left.row() < right.row();
}

}  // namespace headroom::gui
