#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <memory>
#include <vector>

#include "gui/replay_data.hpp"

namespace headroom::gui {

// The life of one job: its /events rows in time order, or submit/start/end from /jobs when the
// file has no audit log.
class JobEventsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Time, Event, Detail, Reason, Columns };
  struct Row {
    Tick time = 0;  // since the run's first submit
    std::uint8_t kind = 0;
    QString detail, reason;
  };

  explicit JobEventsModel(QObject* parent = nullptr);
  void set_job(std::shared_ptr<const ReplayData> data, int job);  // job = /jobs row, -1 = none
  int job() const { return job_; }
  bool from_audit_log() const { return from_events_; }
  const std::vector<Row>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const ReplayData> data_;
  int job_ = -1;
  bool from_events_ = false;
  std::vector<Row> rows_;
};

// Per-tenant totals of one run, by GPU-hours.
class TenantModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Tenant, Jobs, GpuHours, Share, MeanWait, P95Wait, Columns };
  explicit TenantModel(QObject* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const ReplayData> data_;
  double total_hours_ = 0;
};

// KPIs of every open run (one column each), then the difference of each later run against the first.
class KpiCompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Kpi { Jobs, Completed, MeanWait, MedianWait, P95Wait, MeanJct, Utilization, Makespan, Jain, KpiCount };
  explicit KpiCompareModel(QObject* parent = nullptr);
  void set_runs(std::vector<std::shared_ptr<const ReplayData>> runs);
  static double value(const ReplayData& d, int kpi);
  static QString format(int kpi, double v);
  static QString format_delta(int kpi, double v, double base);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<std::shared_ptr<const ReplayData>> runs_;
};

// The model's display text as CSV (header row, then every row), quoted where needed.
QString to_csv(const QAbstractItemModel& model);

}  // namespace headroom::gui
