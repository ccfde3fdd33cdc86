#pragma once

#include <QAbstractItemModel>
#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
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

// Every KPI of `headroom compare` (the same figures: results::summarize, results::compute_fairness
// and results::stats_by_tenant / stats_by_kind) for every open run, one column each, then the
// difference of each later run against the first, green when better for that KPI, red when worse,
// uncoloured when neither. A tree: the run-wide KPIs at the top level (rows 0..KpiCount-1, in
// compare's order), then collapsible groups with a split site's partitions (its cost of the
// boundary and partition:NAME.* rows, when some run split), compare's per-service (service:NAME.*),
// per-tenant (tenant:NAME.*, tenants by GPU-hours, largest first) and per-kind (kind:KIND.*)
// rows. Columns are labelled by the file and by what differs between the runs: policy, pool
// sizes, arrival scale.
class KpiCompareModel : public QAbstractItemModel {
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
    HeldIdleGpuHours,
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
    OutagesWithKills,
    RecoveryP50,
    RecoveryP95,
    RecoveryMax,
    NotRecovered,
    DrillRecoveryMax,
    GangsKilled,
    PartialGangs,
    PartialGangGpuHours,
    OutageSloAttainment,
    AfterOutageSloAttainment,
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

  // The row of compare's metric ("wait_mean", "tenant:user19.wait_p95", "kind:batch.jobs",
  // "service:chat.slo_attainment") in column `column`; invalid when the model has no such row.
  QModelIndex find(const QString& metric, int column = 0) const;
  // Compare's metric name of a row; empty for a group row ("Tenants (70)", "user19").
  QString metric(const QModelIndex& index) const;
  // Every metric row's name, depth first in display order.
  QStringList metrics() const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Node {
    std::size_t parent = 0;  // node index; the root (node 0) is its own parent
    int row = 0;
    std::vector<std::size_t> children;
    QString label, tip;
    std::string metric, unit;  // empty metric: a group
    int better = 0;
    std::vector<double> values;  // by run; NaN where the run has no such figure
    bool same = false;           // a KPI row that reads the same under every run (set_runs)
  };
  std::size_t add(std::size_t parent, Node node);
  const Node& node(const QModelIndex& index) const;

  std::vector<std::shared_ptr<const ReplayData>> runs_;
  std::vector<QString> differs_;
  std::vector<Node> nodes_;
};

// The scorecard of the open runs, as `headroom compare --keep-runs` kept it in each file
// (results::RunResult::scorecard): one row per drill and target, one column per system (the run's
// policy), each cell the verdict word (passed, FAILED, not covered, integration needed: ADD-ON),
// with its why-line (the KPI, its value against the target, the add-on that passes it) as the
// tooltip and WhyRole. Columns 0 and 1 are the drill and the target. Empty when no open run was
// scored.
class ScorecardModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int WhyRole = Qt::UserRole + 1;
  explicit ScorecardModel(QObject* parent = nullptr);
  void set_runs(const std::vector<std::shared_ptr<const ReplayData>>& runs);
  // "DRILL · TARGET · POLICY: VERDICT: WHY" for a verdict cell (column >= 2), else empty.
  QString why_line(const QModelIndex& index) const;
  // The first cell that did not pass (else the first cell), for the line under the table.
  QModelIndex first_to_explain() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString drill, target;
    std::vector<const results::VerdictLine*> cells;  // by policy; null where no run has it
  };
  std::vector<std::shared_ptr<const ReplayData>> runs_;  // keeps the lines alive
  QStringList policies_;
  std::vector<Row> rows_;
};

// The Fairness tab's line on Jain's index: results::Fairness::jain (over share / entitlement, the
// same figure as the Compare tab, `headroom compare` and the report), rich text.
QString jain_text(const ReplayData& d);

// The model's display text as CSV (header row, then every row), quoted where needed.
QString to_csv(const QAbstractItemModel& model);

}  // namespace headroom::gui
