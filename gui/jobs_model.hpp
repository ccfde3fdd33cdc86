#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <memory>
#include <vector>

#include "gui/replay_data.hpp"

namespace headroom::gui {

// Raw value of a cell (ticks, counts, codes) for sorting and exact tests.
inline constexpr int kRawRole = Qt::UserRole + 1;

// One row per /jobs row; cells are formatted on demand, so a million rows cost nothing up front.
class JobsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Job, Tenant, Queue, Kind, State, Gpus, Submit, Wait, Start, End, Runtime, Preemptions, Pool, Columns };

  explicit JobsModel(QObject* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  const std::shared_ptr<const ReplayData>& replay() const { return data_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // The sort key of (row, column): ticks, counts or codes; names sort by tenant rank / id.
  qint64 raw(int row, int column) const;

 private:
  std::shared_ptr<const ReplayData> data_;
};

// Filters by tenant, state and free text (job id, tenant or queue name); sorts on raw values.
class JobFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit JobFilterProxy(QObject* parent = nullptr);
  void set_tenant(int tenant);  // tenant id, -1 = all
  void set_state(int state);    // state code, -1 = all
  void set_text(const QString& text);
  void source_reset();  // call after the source model got new data

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  void rebuild_text_match();
  const JobsModel* jobs() const;

  int tenant_ = -1;
  int state_ = -1;
  QString text_;
  std::vector<bool> tenant_match_, queue_match_;
};

}  // namespace headroom::gui
