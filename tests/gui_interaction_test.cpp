// The Replay tab and File > What-if... driven through their widgets, offscreen. The replay timer
// is not waited for: ReplayView::advance() is what each timer tick does, called with chosen wall
// milliseconds, so every cursor position is exact. The what-if runs use the build's `headroom`
// (tests/data/scenarios/minimal.yaml, three jobs) or a stand-in script for cancel and failure.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QAreaSeries>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QValueAxis>

#include "gui/charts.hpp"
#include "gui/cluster.hpp"
#include "gui/main_window.hpp"
#include "gui/replay_data.hpp"
#include "gui/replay_view.hpp"
#include "gui/views.hpp"
#include "gui/whatif.hpp"
#include "gui/whatif_dialog.hpp"
#include "results/hdf5_io.hpp"

QT_BEGIN_NAMESPACE
inline void PrintTo(const QString& s, std::ostream* os) { *os << '"' << s.toStdString() << '"'; }
QT_END_NAMESPACE

namespace headroom::gui {
namespace {

constexpr Tick H = kTicksPerHour;
constexpr Tick M = 60 * kTicksPerSecond;

results::JobRecord job(std::int64_t id, std::uint32_t tenant, std::int32_t gpus, Tick submit, Tick start, Tick end) {
  results::JobRecord j;
  j.trace_id = id;
  j.tenant = tenant;
  j.gpus = gpus;
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.state = 2;  // completed
  j.pool = 0;
  j.nodes_used = 1;
  return j;
}

// Two nodes of 4 GPUs over 10 hours. Job 0 (a, 4 GPUs) runs 0-2h on node 0; job 1 (b, 2 GPUs)
// waits for capacity from 1h and runs 3h-6h on node 1; job 2 (a, 1 GPU) waits for quota from 2h
// and runs 5h-9h on node 0.
std::shared_ptr<const ReplayData> small_run(int samples = 10) {
  results::RunResult r;
  r.scenario_name = "small";
  r.policy = "fifo";
  r.sim_start = 0;
  r.sim_end = 10 * H;
  r.total_gpus = 8;
  r.tenants = {"a", "b"};
  r.queues = {"q"};
  r.pools = {{"p0", "A100", 2, 4}};
  r.reasons = {"", "no free GPUs", "over quota"};
  r.jobs = {job(100, 0, 4, 0, 0, 2 * H), job(101, 1, 2, 1 * H, 3 * H, 6 * H), job(102, 0, 1, 2 * H, 5 * H, 9 * H)};
  r.placements = {{0, 0, 2 * H, 0, 4}, {1, 3 * H, 6 * H, 1, 2}, {2, 5 * H, 9 * H, 0, 1}};
  const auto ev = [](Tick t, std::uint8_t kind, std::uint32_t j, std::int32_t detail = 0, std::uint32_t reason = 0) {
    return results::EventRecord{t, kind, j, detail, reason};
  };
  r.events = {ev(0, 0, 0),
              ev(0, 1, 0),
              ev(1 * H, 0, 1),
              ev(1 * H, kWaitingEvent, 1, 1, 1),
              ev(2 * H, 2, 0),
              ev(2 * H, 0, 2),
              ev(2 * H, kWaitingEvent, 2, 2, 2),
              ev(3 * H, 1, 1),
              ev(5 * H, 1, 2),
              ev(6 * H, 2, 1),
              ev(9 * H, 2, 2)};
  r.timeseries.interval = H;
  for (int k = 0; k < samples; ++k) {
    r.timeseries.time.push_back(k * H);
    r.timeseries.running_jobs.push_back(0);
    r.timeseries.pending_jobs.push_back(0);
    r.timeseries.pool_used_gpus.push_back(0);
    r.timeseries.pool_free_gpus.push_back(8);
    for (int t = 0; t < 2; ++t) {
      r.timeseries.tenant_used_gpus.push_back(0);
      r.timeseries.tenant_pending_jobs.push_back(0);
      r.timeseries.tenant_pending_gpus.push_back(0);
    }
  }
  return prepare(std::move(r), "/tmp/small.h5");
}

template <class W>
W* child(const QWidget& parent, const char* name) {
  W* w = parent.findChild<W*>(QString::fromLatin1(name));
  EXPECT_NE(w, nullptr) << name;
  return w;
}

// The queue's jobs (row order) with their "why pending" text.
std::vector<std::pair<int, QString>> queue_rows(const ReplayView& v) {
  std::vector<std::pair<int, QString>> out;
  const QueueModel* q = v.queue();
  for (int row = 0; row < q->rowCount(); ++row)
    out.emplace_back(q->job_at(row), q->data(q->index(row, QueueModel::Why)).toString());
  return out;
}

using Rows = std::vector<std::pair<int, QString>>;

TEST(Replay, StepsMoveByExactlyOneStepAtEachSpeed) {
  ReplayView view;
  view.resize(1200, 700);
  view.show();
  view.set_data(small_run());
  QSignalSpy moved(&view, &ReplayView::cursor_moved);
  auto* back = child<QToolButton>(view, "replay-back");
  auto* forward = child<QToolButton>(view, "replay-forward");
  auto* speed = child<QComboBox>(view, "replay-speed");
  ASSERT_TRUE(back && forward && speed);
  EXPECT_EQ(view.time(), 0);
  EXPECT_EQ(speed->currentIndex(), 2);  // 1 hour / s
  EXPECT_EQ(view.step_ticks(), H);

  speed->setCurrentIndex(0);  // 1 min / s: a step is one simulated minute
  EXPECT_EQ(view.step_ticks(), M);
  forward->click();
  EXPECT_EQ(view.time(), M);
  forward->click();
  EXPECT_EQ(view.time(), 2 * M);
  back->click();
  EXPECT_EQ(view.time(), M);
  ASSERT_EQ(moved.size(), 3);
  EXPECT_DOUBLE_EQ(moved[2][0].toDouble(), 1.0 / (24 * 60));

  speed->setCurrentIndex(1);  // 10 min / s
  forward->click();
  EXPECT_EQ(view.time(), 11 * M);
  speed->setCurrentIndex(2);  // 1 hour / s
  back->click();
  EXPECT_EQ(view.time(), 0);  // clamped at the start
  back->click();
  EXPECT_EQ(view.time(), 0);
  speed->setCurrentIndex(3);  // 6 hours / s
  forward->click();
  EXPECT_EQ(view.time(), 6 * H);
  speed->setCurrentIndex(4);  // 1 day / s
  forward->click();
  EXPECT_EQ(view.time(), 10 * H);  // clamped at the end
  back->click();
  EXPECT_EQ(view.time(), 0);
  EXPECT_EQ(child<QLabel>(view, "replay-clock")->text(), "Cursor 00:00:00");
}

TEST(Replay, QueueAndMapFollowTheCursor) {
  ReplayView view;
  view.resize(1200, 700);
  view.show();
  view.set_data(small_run());
  auto* forward = child<QToolButton>(view, "replay-forward");
  ASSERT_TRUE(forward);
  // 0h: job 0 holds node 0; nobody waits.
  EXPECT_EQ(view.map()->occupancy().used_gpus, 4);
  EXPECT_EQ(view.map()->occupancy().full_nodes, 1);
  EXPECT_EQ(queue_rows(view), Rows{});
  forward->click();  // 1h
  EXPECT_EQ(child<QLabel>(view, "replay-clock")->text(), "Cursor 01:00:00");
  EXPECT_EQ(view.map()->occupancy().used_gpus, 4);
  EXPECT_EQ(queue_rows(view), (Rows{{1, "capacity"}}));
  EXPECT_EQ(view.queue()->data(view.queue()->index(0, QueueModel::Reason)).toString(), "no free GPUs");
  forward->click();  // 2h: job 0 ended (end is exclusive), job 2 submitted
  EXPECT_EQ(view.map()->occupancy().used_gpus, 0);
  EXPECT_EQ(view.map()->occupancy().idle_nodes, 2);
  EXPECT_EQ(queue_rows(view), (Rows{{1, "capacity"}, {2, "quota"}}));
  EXPECT_EQ(view.queue()->data(view.queue()->index(0, QueueModel::Waiting)).toString(), "1h 00m");
  forward->click();  // 3h: job 1 runs on node 1
  EXPECT_EQ(view.map()->occupancy().used_gpus, 2);
  EXPECT_EQ(view.map()->occupancy().partial_nodes, 1);
  EXPECT_EQ(queue_rows(view), (Rows{{2, "quota"}}));
  forward->click();
  forward->click();  // 5h: jobs 1 and 2 run
  EXPECT_EQ(view.map()->occupancy().used_gpus, 3);
  EXPECT_EQ(view.map()->occupancy().partial_nodes, 2);
  EXPECT_EQ(queue_rows(view), Rows{});
  // The slider moves the cursor too: 95 % of 10 h.
  auto* slider = child<QSlider>(view, "replay-slider");
  ASSERT_TRUE(slider);
  slider->setValue(9500);
  EXPECT_EQ(view.time(), 9 * H + H / 2);
  EXPECT_EQ(view.map()->occupancy().used_gpus, 0);
}

TEST(Replay, PlayAdvancesBySpeedTimesWallTimeAndStopsAtTheEnd) {
  ReplayView view;
  view.resize(1200, 700);
  view.show();
  view.set_data(small_run());
  auto* play = child<QToolButton>(view, "replay-play");
  auto* speed = child<QComboBox>(view, "replay-speed");
  ASSERT_TRUE(play && speed);
  EXPECT_FALSE(view.playing());
  play->click();
  EXPECT_TRUE(view.playing());
  view.advance(250);  // 1 hour / s: a quarter of a second is 15 simulated minutes
  EXPECT_EQ(view.time(), 15 * M);
  view.advance(1000);
  EXPECT_EQ(view.time(), H + 15 * M);
  EXPECT_EQ(queue_rows(view), (Rows{{1, "capacity"}}));
  speed->setCurrentIndex(0);  // 1 min / s while playing
  view.advance(1500);
  EXPECT_EQ(view.time(), H + 16 * M + 30 * kTicksPerSecond);
  speed->setCurrentIndex(4);  // 1 day / s
  view.advance(100);          // 2.4 simulated hours
  EXPECT_EQ(view.time(), 3 * H + 40 * M + 30 * kTicksPerSecond);
  EXPECT_EQ(view.map()->occupancy().used_gpus, 2);
  EXPECT_EQ(queue_rows(view), (Rows{{2, "quota"}}));

  play->click();  // pause: the timer stops, the cursor stays
  EXPECT_FALSE(view.playing());
  const Tick paused = view.time();
  QTest::qWait(100);
  EXPECT_EQ(view.time(), paused);

  play->click();
  view.advance(10'000);  // far past the end: clamped, and playing stops there
  EXPECT_EQ(view.time(), 10 * H);
  EXPECT_FALSE(view.playing());
  play->click();  // play at the end starts over
  EXPECT_TRUE(view.playing());
  EXPECT_EQ(view.time(), 0);
  play->click();
}

TEST(Replay, TheTimerDrivesPlay) {
  // Only that the real timer moves the cursor forward while playing: no amount is asserted.
  ReplayView view;
  view.set_data(small_run());
  child<QToolButton>(view, "replay-play")->click();
  QElapsedTimer clock;
  clock.start();
  while (view.time() == 0 && clock.elapsed() < 30'000) QTest::qWait(20);
  EXPECT_GT(view.time(), 0);
  child<QToolButton>(view, "replay-play")->click();
  EXPECT_FALSE(view.playing());
}

// A chart's curves, without the empty series that put the outage kinds in its legend.
QList<QAbstractSeries*> curves(const QChartView* view) {
  QList<QAbstractSeries*> out;
  for (QAbstractSeries* s : view->chart()->series())
    if (!s->objectName().startsWith(QLatin1String("outage-key"))) out.push_back(s);
  return out;
}

// Points of each area of the Timeline's main chart ("GPUs in use by tenant").
std::vector<qsizetype> tenant_points(const TimelineView& view) {
  std::vector<qsizetype> out;
  auto* chart = qobject_cast<CurveChart*>(view.current_chart());
  EXPECT_NE(chart, nullptr);
  if (chart == nullptr) return out;
  for (QAbstractSeries* s : chart->chart()->series())
    if (auto* area = qobject_cast<QAreaSeries*>(s)) out.push_back(area->upperSeries()->count());
  return out;
}

TEST(Timeline, ChartsRefillForNewDataZoomAndReset) {
  // Showing the same range at the same detail twice is skipped; anything else redraws.
  TimelineView view;
  view.resize(1400, 900);
  view.show();
  view.set_data(small_run(10));
  EXPECT_EQ(tenant_points(view), (std::vector<qsizetype>{10, 10}));  // tenants a and b, one point per hour
  view.set_data(small_run(20));
  EXPECT_EQ(tenant_points(view), (std::vector<qsizetype>{20, 20}));
  view.sync()->set_range(0, 4.0 / 24);  // 0-4 h: the samples in it and one past the end
  EXPECT_EQ(tenant_points(view), (std::vector<qsizetype>{6, 6}));
  view.reset_zoom();
  EXPECT_EQ(tenant_points(view), (std::vector<qsizetype>{20, 20}));
  view.resize(1000, 700);
  QTest::qWait(10);
  EXPECT_EQ(tenant_points(view), (std::vector<qsizetype>{20, 20}));
}

// issue #21: the failure drill's shape. One pool of 1,024 nodes x 8 GPUs, 14 days of 10-minute
// samples, all 8,192 GPUs in use, except the site-wide outage on day 8: three samples at 0, every
// node down (node_down / node_up rows); the trace starts 2010-05-01 00:00 UTC.
std::shared_ptr<const ReplayData> drill_run() {
  results::RunResult r;
  r.scenario_name = "drill";
  r.policy = "fifo";
  const Tick step = 10 * M;
  const int samples = 14 * 144;
  r.sim_start = 0;
  r.sim_end = samples * step;
  r.unix_start = 1272672000;
  r.total_gpus = 8192;
  r.tenants = {"a"};
  r.queues = {"q"};
  r.pools = {{"ricc", "A100", 1024, 8}};
  r.reasons = {"", "outage: site power loss", "outage over"};
  r.jobs = {job(1, 0, 8192, 0, 0, r.sim_end)};
  const Tick down = 8 * kTicksPerDay;
  for (std::int32_t n = 0; n < 1024; ++n) r.events.push_back({down, 7, 0xffffffffu, n, 1, 0});
  for (std::int32_t n = 0; n < 1024; ++n) r.events.push_back({down + 30 * M, 8, 0xffffffffu, n, 2, 0});
  r.timeseries.interval = step;
  for (int k = 0; k < samples; ++k) {
    const bool out = k >= 8 * 144 && k < 8 * 144 + 3;
    r.timeseries.time.push_back(k * step);
    r.timeseries.running_jobs.push_back(out ? 0 : 1);
    r.timeseries.pending_jobs.push_back(out ? 1 : 0);
    r.timeseries.pool_used_gpus.push_back(out ? 0 : 8192);
    r.timeseries.pool_free_gpus.push_back(0);
    r.timeseries.tenant_used_gpus.push_back(out ? 0 : 8192);
    r.timeseries.tenant_pending_jobs.push_back(out ? 1 : 0);
    r.timeseries.tenant_pending_gpus.push_back(out ? 8192 : 0);
    for (int c = 0; c < kPendingCodes; ++c) r.timeseries.pending_by_reason.push_back(c == 0 && out ? 1 : 0);
  }
  return prepare(std::move(r), "/tmp/drill.h5");
}

CurveChart* chart_titled(const QWidget& view, const QString& prefix) {
  for (CurveChart* c : view.findChildren<CurveChart*>())
    if (c->chart()->title().startsWith(prefix)) return c;
  ADD_FAILURE() << "no chart titled " << prefix.toStdString();
  return nullptr;
}

TEST(Timeline, AOneSampleOutageReachesZeroAtAnyWidth) {
  TimelineView view;
  for (const int width : {1560, 900, 3100}) {
    view.resize(width, 960);
    view.show();
    view.set_data(drill_run());
    QTest::qWait(10);
    view.reset_zoom();
    CurveChart* pools = chart_titled(view, "GPUs in use and up, by pool");
    ASSERT_NE(pools, nullptr);
    const auto series = curves(pools);
    ASSERT_EQ(series.size(), 2);  // in use, up
    for (QAbstractSeries* s : series) {
      const auto* line = qobject_cast<QLineSeries*>(s);
      ASSERT_NE(line, nullptr);
      // Thinned to the width: at most a bucket a pixel, drawn as its lowest and highest sample.
      EXPECT_LE(line->count(), 2 * std::max(200.0, pools->chart()->plotArea().width()) + 4) << width << " px";
      if (width == 900) {
        EXPECT_LT(line->count(), 14 * 144);
      }
      double lo = 1e9, hi = -1;
      for (const QPointF& p : line->points()) {
        lo = std::min(lo, p.y());
        hi = std::max(hi, p.y());
      }
      EXPECT_EQ(lo, 0.0) << s->name().toStdString() << " at " << width << " px";
      EXPECT_EQ(hi, 8192.0) << s->name().toStdString() << " at " << width << " px";
    }
    // The stacked tenant chart keeps the drop too.
    CurveChart* tenants = chart_titled(view, "GPUs in use by tenant");
    ASSERT_NE(tenants, nullptr);
    const auto* area = qobject_cast<QAreaSeries*>(tenants->chart()->series().front());
    ASSERT_NE(area, nullptr);
    double lo = 1e9;
    for (const QPointF& p : area->upperSeries()->points()) lo = std::min(lo, p.y());
    EXPECT_EQ(lo, 0.0) << width << " px";
    // The outage is marked, at least 3 px wide, at day 8.
    ASSERT_EQ(pools->marks().size(), 1u);
    EXPECT_EQ(pools->marks()[0].kind, OutageKind::Outage);
    EXPECT_GE(pools->marks()[0].right - pools->marks()[0].left, 3.0 - 1e-9);
    const QRectF plot = pools->chart()->plotArea();
    const double day8 = plot.left() + plot.width() * 8.0 / (14.0 - 1.0 / 144);
    EXPECT_NEAR((pools->marks()[0].left + pools->marks()[0].right) / 2, day8, 2.0);
  }
}

// The drill run in a view of 1560 x 960, zoomed out.
void show_drill(TimelineView& view) {
  view.resize(1560, 960);
  view.show();
  view.set_data(drill_run());
  view.reset_zoom();
}

// A count axis ("%.0f") never steps by less than 1: at most one job pending (the drill's outage)
// read "0 0 0 1 1 1" under Qt's nice step of 0.2; now 0 and 1.
TEST(Timeline, ACountAxisStepsByWholeNumbers) {
  TimelineView view;
  show_drill(view);
  CurveChart* reasons = chart_titled(view, "Pending jobs by why they wait");
  ASSERT_NE(reasons, nullptr);
  const auto* y = qobject_cast<QValueAxis*>(reasons->chart()->axes(Qt::Vertical).front());
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->min(), 0.0);
  EXPECT_EQ(y->max(), 1.0);
  EXPECT_EQ(y->tickCount(), 2);
  // Thousands of GPUs keep Qt's nice numbers.
  CurveChart* pools = chart_titled(view, "GPUs in use and up, by pool");
  ASSERT_NE(pools, nullptr);
  const auto* gpus = qobject_cast<QValueAxis*>(pools->chart()->axes(Qt::Vertical).front());
  ASSERT_NE(gpus, nullptr);
  EXPECT_GE(gpus->max(), 8192.0);
  EXPECT_GE(gpus->max() / (gpus->tickCount() - 1), 1.0);
}

TEST(Timeline, CalendarTimeWhenTheTraceHasADateElseDays) {
  TimelineView view;
  show_drill(view);
  CurveChart* pools = chart_titled(view, "GPUs in use and up, by pool");
  ASSERT_NE(pools, nullptr);
  EXPECT_TRUE(pools->calendar());
  auto labels = pools->time_labels();
  ASSERT_GE(labels.size(), 7u);
  EXPECT_EQ(labels[0].second, "May 1");  // 2010-05-01 00:00 UTC at x = 0
  EXPECT_EQ(labels[0].first, 0.0);
  EXPECT_EQ(labels[1].second, "May 3");  // every 2 days over 14
  EXPECT_EQ(labels[1].first, 2.0);
  EXPECT_EQ(pools->chart()->axes(Qt::Horizontal).front()->titleText(), "date, 2010 (UTC)");
  // Relative time as an option.
  pools->set_time_base(pools->unix_ms(), false);
  labels = pools->time_labels();
  ASSERT_GE(labels.size(), 7u);
  EXPECT_EQ(labels[1].second, "2");
  EXPECT_EQ(pools->chart()->axes(Qt::Horizontal).front()->titleText(), "days since first submit");
  // A trace without a date: days, whatever the option.
  view.set_data(small_run(10));
  CurveChart* again = chart_titled(view, "GPUs in use and up, by pool");
  again->set_time_base(-1, true);
  EXPECT_FALSE(again->calendar());
}

TEST(MainWindow, ViewCalendarTimeSwitchesEveryTimeAxis) {
  MainWindow window;
  auto* action = window.findChild<QAction*>(QStringLiteral("calendar_time"));
  ASSERT_NE(action, nullptr);
  EXPECT_TRUE(action->isChecked());
  const auto charts = window.findChildren<CurveChart*>();
  ASSERT_GE(charts.size(), 8);  // timeline 5, fairness 1, compare 2
  for (CurveChart* c : charts) EXPECT_TRUE(c->calendar_wanted());
  action->setChecked(false);
  for (CurveChart* c : charts) EXPECT_FALSE(c->calendar_wanted());
  action->setChecked(true);
  for (CurveChart* c : charts) EXPECT_TRUE(c->calendar_wanted());
}

TEST(Timeline, WhyPendingIsLabelledEvenWithoutReasons) {
  TimelineView view;
  view.resize(1560, 960);
  view.show();
  view.set_data(drill_run());
  CurveChart* why = chart_titled(view, "Pending jobs by why they wait");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->chart()->title(), "Pending jobs by why they wait: fifo gives no reasons");
  EXPECT_TRUE(why->chart()->legend()->isVisible());
  ASSERT_EQ(curves(why).size(), 1);
  EXPECT_EQ(curves(why).front()->name(), "none given");
}

TEST(Replay, TheMapCrossesOutNodesOutOfService) {
  ReplayView view;
  view.resize(1560, 960);
  view.show();
  view.set_data(drill_run());
  const ClusterMap* map = view.findChild<ClusterMap*>();
  ASSERT_NE(map, nullptr);
  view.set_cursor(8.0 + 10.0 / 1440);  // 10 minutes into the outage
  EXPECT_EQ(std::count(map->out_of_service().begin(), map->out_of_service().end(), 1), 1024);
  // The clock reads the calendar when the trace has a start date.
  EXPECT_EQ(child<QLabel>(view, "replay-clock")->text(), "Cursor 2010-05-09 00:10:00 UTC (8d 00:10:00)");
  view.set_cursor(8.0 + 40.0 / 1440);  // back
  EXPECT_EQ(std::count(map->out_of_service().begin(), map->out_of_service().end(), 0), 1024);
}

QString source(const char* path) { return QStringLiteral(HEADROOM_SOURCE_DIR "/") + QString::fromLatin1(path); }

// minimal.yaml and its trace copied into `dir`, where the what-if writes next to it.
QString copy_minimal(const QTemporaryDir& dir) {
  for (const char* name : {"minimal.yaml", "tiny.csv"})
    EXPECT_TRUE(QFile::copy(source("tests/data/scenarios/") + QString::fromLatin1(name), dir.filePath(name)));
  return dir.filePath("minimal.yaml");
}

std::string read_text(const QString& path) {
  QFile f(path);
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  return f.readAll().toStdString();
}

TEST(WhatIf, FormShowsAndEditsTheKnobs) {
  const QString yaml = source("tests/data/scenarios/minimal.yaml");
  WhatIfDialog form(yaml, read_knobs(read_text(yaml)));
  auto* name = child<QLineEdit>(form, "whatif-name");
  auto* pool = child<QSpinBox>(form, "whatif-pool-0");
  auto* policy = child<QComboBox>(form, "whatif-policy");
  auto* scale = child<QDoubleSpinBox>(form, "whatif-arrival-scale");
  ASSERT_TRUE(name && pool && policy && scale);
  EXPECT_EQ(form.windowTitle(), "What-if: minimal.yaml");
  EXPECT_EQ(name->text(), "minimal-whatif");
  EXPECT_EQ(pool->value(), 1);
  EXPECT_EQ(policy->currentText(), "sjf");
  // The choices are what `headroom policies --names` lists (the registry): the five systems and the
  // baselines, and nothing that `headroom run` would refuse (fgd is an experiment, not a policy).
  for (const char* name :
       {"fifo", "kubernetes", "volcano", "slurm", "kai", "kueue", "gavel", "kubernetes+coscheduling"})
    EXPECT_GE(policy->findText(name), 0) << name;
  EXPECT_EQ(policy->findText("fgd"), -1);
  EXPECT_DOUBLE_EQ(scale->value(), 1.0);
  pool->setValue(2);
  policy->setCurrentIndex(policy->findText("fifo"));
  scale->setValue(2.0);
  const WhatIfKnobs k = form.knobs();
  EXPECT_EQ(k.name, "minimal-whatif");
  ASSERT_EQ(k.pool_nodes.size(), 1u);
  EXPECT_EQ(k.pool_nodes[0], (std::pair<std::string, int>{"p", 2}));
  EXPECT_EQ(k.policy, "fifo");
  EXPECT_DOUBLE_EQ(k.arrival_scale, 2.0);
}

TEST(WhatIf, RunsInTheBackgroundAndOpensNextToTheOriginal) {
  const QString headroom = find_headroom(QCoreApplication::applicationDirPath());
  if (headroom.isEmpty()) GTEST_SKIP() << "no headroom binary next to the test";
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString yaml = copy_minimal(dir);
  const QString original = dir.filePath("minimal.h5");
  {
    QProcess run;
    run.setProcessChannelMode(QProcess::MergedChannels);
    run.start(headroom, {"run", yaml, "-o", original});
    ASSERT_TRUE(run.waitForFinished(120'000));
    ASSERT_EQ(run.exitCode(), 0) << run.readAll().toStdString();
  }
  MainWindow window;
  window.set_quiet(true);
  window.show();
  QSignalSpy opened(&window, &MainWindow::opened);
  window.open_files({original});
  ASSERT_TRUE(opened.wait(60'000));

  const std::string text = read_text(yaml);
  WhatIfDialog form(yaml, read_knobs(text));
  child<QSpinBox>(form, "whatif-pool-0")->setValue(2);
  auto* policy = child<QComboBox>(form, "whatif-policy");
  policy->setCurrentIndex(policy->findText("fifo"));
  child<QDoubleSpinBox>(form, "whatif-arrival-scale")->setValue(2.0);
  WhatIfRun* run = window.what_if_run();
  QSignalSpy finished(run, &WhatIfRun::finished), failed(run, &WhatIfRun::failed);
  ASSERT_TRUE(window.start_what_if(yaml, text, form.knobs())) << run->error().toStdString();
  EXPECT_TRUE(run->running());
  EXPECT_TRUE(child<QPushButton>(window, "cancel")->isVisible());
  EXPECT_EQ(run->scenario(), dir.filePath("minimal.whatif.yaml"));
  EXPECT_EQ(run->output(), dir.filePath("minimal.whatif.h5"));
  ASSERT_TRUE(finished.wait(120'000)) << (failed.empty() ? "" : failed[0][0].toString().toStdString());
  EXPECT_EQ(finished[0][0].toString(), dir.filePath("minimal.whatif.h5"));
  ASSERT_TRUE(opened.size() == 2 || opened.wait(60'000));
  EXPECT_EQ(opened[1][0].toString(), dir.filePath("minimal.whatif.h5"));
  EXPECT_FALSE(run->running());
  EXPECT_FALSE(child<QPushButton>(window, "cancel")->isVisible());

  const auto results = window.results();
  ASSERT_EQ(results.size(), 2u);
  const results::RunResult& before = results[0]->result;
  const results::RunResult& after = results[1]->result;
  EXPECT_EQ(before.scenario_name, "minimal");
  EXPECT_EQ(before.policy, "sjf");
  EXPECT_EQ(before.total_gpus, 8);
  EXPECT_EQ(before.jobs.size(), 3u);
  EXPECT_EQ(after.scenario_name, "minimal-whatif");
  EXPECT_EQ(after.policy, "fifo");
  ASSERT_EQ(after.pools.size(), 1u);
  EXPECT_EQ(after.pools[0].nodes, 2);
  EXPECT_EQ(after.total_gpus, 16);
  EXPECT_EQ(after.jobs.size(), 6u);  // arrival_scale 2: every job twice
  EXPECT_EQ(results[1]->label, "minimal.whatif.h5");
}

// A stand-in for `headroom run` that starts writing its output as write_hdf5 does
// (<output>.tmp.<pid>), says so, and then never finishes.
QString fake_headroom(const QTemporaryDir& dir, const char* body) {
  const QString path = dir.filePath("fake-headroom");
  QFile f(path);
  EXPECT_TRUE(f.open(QIODevice::WriteOnly));
  f.write(QByteArray("#!/bin/sh\n") + body);
  f.close();
  f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
  return path;
}

TEST(WhatIf, CancelLeavesNoOutputFile) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString yaml = copy_minimal(dir);
  const QString fake = fake_headroom(dir, "touch \"$4.tmp.4242\"\nexec sleep 600\n");
  qputenv("HEADROOM_BIN", fake.toLocal8Bit());
  MainWindow window;
  qunsetenv("HEADROOM_BIN");
  window.set_quiet(true);
  window.show();
  WhatIfRun* run = window.what_if_run();
  EXPECT_EQ(run->headroom(), fake);
  const QString out = dir.filePath("minimal.whatif.h5");
  QFile stale(out);  // a result of an earlier what-if: removed when the new run starts
  ASSERT_TRUE(stale.open(QIODevice::WriteOnly));
  stale.close();
  QSignalSpy cancelled(run, &WhatIfRun::cancelled), finished(run, &WhatIfRun::finished),
      failed(run, &WhatIfRun::failed);
  const std::string text = read_text(yaml);
  ASSERT_TRUE(window.start_what_if(yaml, text, read_knobs(text))) << run->error().toStdString();
  EXPECT_FALSE(QFile::exists(out));
  QElapsedTimer clock;
  clock.start();
  while (!QFile::exists(out + ".tmp.4242") && clock.elapsed() < 30'000) QTest::qWait(10);
  ASSERT_TRUE(QFile::exists(out + ".tmp.4242"));
  child<QPushButton>(window, "cancel")->click();
  ASSERT_TRUE(cancelled.wait(30'000));
  EXPECT_EQ(finished.size(), 0);
  EXPECT_EQ(failed.size(), 0);
  EXPECT_FALSE(run->running());
  EXPECT_FALSE(QFile::exists(out));
  EXPECT_FALSE(QFile::exists(out + ".tmp.4242"));
  EXPECT_TRUE(QFile::exists(dir.filePath("minimal.whatif.yaml")));  // the edited scenario stays
  EXPECT_TRUE(window.results().empty());
  EXPECT_FALSE(child<QPushButton>(window, "cancel")->isVisible());
}

TEST(WhatIf, AFailedRunSaysWhy) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString yaml = copy_minimal(dir);
  WhatIfRun run(fake_headroom(dir, "touch \"$4.tmp.77\"\necho 'error: no such policy' >&2\nexit 3\n"));
  QSignalSpy failed(&run, &WhatIfRun::failed), finished(&run, &WhatIfRun::finished);
  const std::string text = read_text(yaml);
  ASSERT_TRUE(run.start(yaml, text, read_knobs(text)));
  ASSERT_TRUE(failed.wait(30'000));
  EXPECT_EQ(finished.size(), 0);
  EXPECT_EQ(failed[0][0].toString(), "headroom run stopped (exit 3):\nerror: no such policy\n");
  EXPECT_FALSE(QFile::exists(run.output()));
  EXPECT_FALSE(QFile::exists(run.output() + ".tmp.77"));
}

TEST(WhatIf, NoBinaryNoRun) {
  QTemporaryDir dir;
  const QString yaml = copy_minimal(dir);
  WhatIfRun run{QString()};
  const std::string text = read_text(yaml);
  EXPECT_FALSE(run.start(yaml, text, read_knobs(text)));
  EXPECT_TRUE(run.error().startsWith("Cannot find the headroom program")) << run.error().toStdString();
  EXPECT_FALSE(run.running());
  // The edited scenario is written all the same, for running by hand.
  EXPECT_TRUE(QFile::exists(dir.filePath("minimal.whatif.yaml")));
}

// A run with partitions (docs/split.md, "In the app"): the Timeline's per-system charts show, each
// system in its cluster-map owner colour, what it owns dashed; a run without partitions hides them.
TEST(Timeline, PerSystemChartsOnlyForARunWithPartitions) {
  TimelineView view;
  view.resize(1560, 960);
  view.show();
  const QStringList titles = {"GPUs in use by each system", "Pending jobs by system", "Pending GPUs by system"};
  view.set_data(small_run(10));
  for (const QString& t : titles) {
    CurveChart* c = chart_titled(view, t);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c->isHidden()) << t.toStdString();
  }
  // small_run split: node 0 (jobs 0 and 2) is slurm's, node 1 (job 1) kueue's.
  results::RunResult r = small_run(10)->result;
  r.partitions.resize(2);
  r.partitions[0].name = "slurm";
  r.partitions[0].nodes = 1;
  r.partitions[0].gpus = 4;
  r.partitions[1].name = "kueue";
  r.partitions[1].first_node = 1;
  r.partitions[1].nodes = 1;
  r.partitions[1].gpus = 4;
  r.job_partition = {0, 1, 0};
  view.set_data(prepare(std::move(r), "/tmp/small-split.h5"));
  view.reset_zoom();
  CurveChart* used = chart_titled(view, titles[0]);
  ASSERT_NE(used, nullptr);
  EXPECT_FALSE(used->isHidden());
  const auto series = curves(used);
  ASSERT_EQ(series.size(), 4);
  const QStringList names = {"slurm in use", "slurm owns", "kueue in use", "kueue owns"};
  for (int i = 0; i < 4; ++i) {
    const auto* line = qobject_cast<QLineSeries*>(series[i]);
    ASSERT_NE(line, nullptr);
    EXPECT_EQ(line->name(), names[i]);
    EXPECT_EQ(line->pen().style(), i % 2 == 1 ? Qt::DashLine : Qt::SolidLine) << i;
    const QColor own = owner_colour(i / 2);
    EXPECT_EQ(line->pen().color(), i % 2 == 1 ? own.lighter(150) : own) << i;
  }
  // Hourly samples: slurm holds 4 GPUs at 0h and 1h, 1 GPU from 5h to 8h; kueue 2 GPUs 3h-5h.
  double slurm_peak = 0, kueue_peak = 0;
  for (const QPointF& p : qobject_cast<QLineSeries*>(series[0])->points()) slurm_peak = std::max(slurm_peak, p.y());
  for (const QPointF& p : qobject_cast<QLineSeries*>(series[2])->points()) kueue_peak = std::max(kueue_peak, p.y());
  EXPECT_EQ(slurm_peak, 4.0);
  EXPECT_EQ(kueue_peak, 2.0);
  for (const QString& t : titles.mid(1)) {
    CurveChart* c = chart_titled(view, t);
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(c->isHidden()) << t.toStdString();
    const auto s = curves(c);
    ASSERT_EQ(s.size(), 2);
    EXPECT_EQ(s[0]->name(), "slurm");
    EXPECT_EQ(qobject_cast<QLineSeries*>(s[1])->pen().color(), owner_colour(1));
  }
  // kueue's job 1 waits 1h-3h: pending at the 1h and 2h samples.
  double kueue_waiting = 0;
  for (const QPointF& p : qobject_cast<QLineSeries*>(curves(chart_titled(view, titles[1]))[1])->points())
    kueue_waiting = std::max(kueue_waiting, p.y());
  EXPECT_EQ(kueue_waiting, 1.0);
}
}  // namespace
}  // namespace headroom::gui

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  qRegisterMetaType<std::shared_ptr<const headroom::gui::ReplayData>>();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
