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
  // Share: of the GPU-hours the run's jobs held; ClusterShare: of the cluster's GPU-time (GPUs x
  // span), what `headroom run` and compare call a tenant's share.
  enum Column { Tenant, Jobs, GpuHours, Share, ClusterShare, MeanWait, P95Wait, Columns };
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

// Every KPI of `headroom compare` (planner::compare_table's run-wide rows, the same figures:
// results::summarize and results::compute_fairness) for every open run, one column each, then the
// difference of each later run against the first, green when better for that KPI, red when worse.
// Columns are labelled by the file and by what differs between the runs: policy, pool sizes,
// arrival scale.
class KpiCompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Kpi {
    Jobs,
    Completed,
    Failed,
    Cancelled,
    Rejected,
    Unfinished,
    NeverStarted,
    MeanWait,
    MedianWait,
    P95Wait,
    P99Wait,
    MaxWait,
    MeanJct,
    MedianJct,
    P95Jct,
    Utilization,
    BusyUtilization,
    Makespan,
    Preemptions,
    LostGpuHours,
    StarvedJobs,
    PendingGpusMean,
    Jain,
    JainMean,
    RhoMax,
    RhoMean,
    MinShareRatio,
    MaxDominantShare,
    Fragmentation,
    FragmentedGpusMean,
    BorrowedGpuHours,
    BorrowingStarts,
    Reclaims,
    Denied,
    JobsKilled,
    FailureLostGpuHours,
    DrillsRecovered,
    WorstDrillRecovery,
    SloAttainment,
    Cost,
    CostUsed,
    CostPerGpuHour,
    KpiCount
  };
  struct KpiInfo {
    const char* metric;  // compare's metric name
    const char* label;
    const char* unit;  // results::with_unit's units; "cost" takes the run's currency
    int better;        // +1: higher is better, -1: lower is better, 0: neither
  };
  static const KpiInfo& info(int kpi);

  explicit KpiCompareModel(QObject* parent = nullptr);
  void set_runs(std::vector<std::shared_ptr<const ReplayData>> runs);
  static double value(const ReplayData& d, int kpi);  // NaN when the run has no such figure
  static QString format(int kpi, double v, const std::string& currency = {});
  static QString format_delta(int kpi, double v, double base, const std::string& currency = {});
  // +1 when v is better than base for this KPI, -1 when worse, 0 when equal or neither.
  static int verdict(int kpi, double v, double base);
  // "kai · ricc 1,024 nodes · arrival ×1.3": what sets run i apart from the others (empty when
  // nothing does or there is one run).
  QString differs(std::size_t run) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<std::shared_ptr<const ReplayData>> runs_;
  std::vector<QString> differs_;
};

// The model's display text as CSV (header row, then every row), quoted where needed.
QString to_csv(const QAbstractItemModel& model);

}  // namespace headroom::gui
