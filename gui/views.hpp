#pragma once

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QTableView>
#include <QTreeView>
#include <QWidget>
#include <memory>
#include <vector>

#include "gui/charts.hpp"
#include "gui/jobs_model.hpp"
#include "gui/replay_data.hpp"
#include "gui/tables.hpp"

namespace headroom::gui {

// A tab that can hand its current chart and table to File > Export.
class View : public QWidget {
  Q_OBJECT
 public:
  using QWidget::QWidget;
  virtual QWidget* current_chart() const { return last_chart_ ? last_chart_.data() : default_chart(); }
  virtual QAbstractItemModel* current_table() const { return nullptr; }
  virtual void reset_zoom() {}

 protected:
  virtual QWidget* default_chart() const { return nullptr; }
  void track(ChartView* view);
  QPointer<QWidget> last_chart_;
};

// Charts over time sharing one x range and one time cursor.
class TimeCharts : public QObject {
  Q_OBJECT
 public:
  explicit TimeCharts(QObject* parent = nullptr) : QObject(parent) {}
  void add(CurveChart* chart);
  void reset();
  void set_range(double x0, double x1);
  void set_cursor(double x);
  double cursor() const { return cursor_; }

 signals:
  void cursor_changed(double x);

 private:
  std::vector<CurveChart*> charts_;
  double cursor_ = std::numeric_limits<double>::quiet_NaN();
};

// The least height a Timeline chart keeps (title, legend, axis labels and a plot of ~150 px);
// below it the Timeline scrolls.
inline constexpr int kChartMinHeight = 320;
inline constexpr int kWideChartMinHeight = 240;
// Up to this many runs, the Compare tab's charts have their own legends; past it, one under both.
inline constexpr std::size_t kChartLegendRuns = 6;

class TimelineView : public View {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  void reset_zoom() override { sync_->reset(); }
  void set_cursor(double x) { sync_->set_cursor(x); }
  TimeCharts* sync() const { return sync_; }

 protected:
  QWidget* default_chart() const override { return by_tenant_; }

 private:
  void update_readout(double x);
  std::shared_ptr<const ReplayData> data_;
  TimeCharts* sync_;
  CurveChart *by_tenant_, *by_pool_, *pending_jobs_, *pending_gpus_, *pending_reason_;
  CurveChart* owners_;  // a split site's GPUs by owning system; hidden without node moves
  // A run with partitions (split site, dispatcher's clusters): GPUs in use by each system against
  // what it owns, and its pending jobs and GPUs; hidden without partitions.
  CurveChart *parts_used_, *parts_pending_jobs_, *parts_pending_gpus_;
  CurveChart* fidelity_;  // recorded vs simulated GPUs in use; hidden without recorded starts
  QLabel* readout_;
};

class JobsView : public View {
  Q_OBJECT
 public:
  explicit JobsView(QWidget* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  QAbstractItemModel* current_table() const override { return proxy_; }
  void select_row(int proxy_row);
  // Selects /jobs row `job`, clearing the filters when they hide it.
  void select_job(int job);

 signals:
  void job_selected(int job);  // -1: none

 private:
  void show_job(int job);
  void update_count();
  std::shared_ptr<const ReplayData> data_;
  JobsModel* model_;
  JobFilterProxy* proxy_;
  JobEventsModel* events_;
  QComboBox *tenant_, *state_;
  QLineEdit* text_;
  QLabel *count_, *title_, *summary_;
  QTableView *table_, *events_view_;
};

class FairnessView : public View {
  Q_OBJECT
 public:
  explicit FairnessView(QWidget* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  QAbstractItemModel* current_table() const override { return tenants_; }
  void reset_zoom() override { sync_->reset(); }

 protected:
  QWidget* default_chart() const override { return share_; }

 private:
  std::shared_ptr<const ReplayData> data_;
  TimeCharts* sync_;
  CurveChart* share_;
  CdfChart* cdf_;
  QLabel* jain_;
  TenantModel* tenants_;
};

class CompareView : public View {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);
  void set_runs(std::vector<std::shared_ptr<const ReplayData>> runs);
  QAbstractItemModel* current_table() const override { return kpis_; }
  void reset_zoom() override { sync_->reset(); }

 protected:
  QWidget* default_chart() const override { return used_; }

 private:
  std::vector<std::shared_ptr<const ReplayData>> runs_;
  KpiCompareModel* kpis_;
  QTreeView* table_;
  QLabel* hint_;
  TimeCharts* sync_;
  CurveChart *used_, *pending_;
  QLabel* run_legend_;  // one legend for both charts when there are more than kChartLegendRuns runs
  // The drills' verdicts kept in the files (compare --keep-runs), and the why-line of the current
  // cell under them; hidden when no open run was scored.
  ScorecardModel* verdicts_;
  QTableView* verdict_table_;
  QLabel* why_;
};

}  // namespace headroom::gui
