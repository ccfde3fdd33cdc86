// The GUI's models and prepared data, offscreen: exact values on a hand-built run, and every
// model under QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QFile>
#include <QGuiApplication>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <condition_variable>
#include <mutex>
#include <set>

#include "gui/cluster.hpp"
#include "gui/jobs_model.hpp"
#include "gui/loader.hpp"
#include "gui/replay_data.hpp"
#include "gui/tables.hpp"
#include "gui/whatif.hpp"
#include "models/observer.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"

// Readable QString values in gtest failure messages.
QT_BEGIN_NAMESPACE
inline void PrintTo(const QString& s, std::ostream* os) { *os << '"' << s.toStdString() << '"'; }
QT_END_NAMESPACE

namespace headroom::gui {
namespace {

constexpr Tick H = kTicksPerHour;

results::JobRecord job(std::int64_t id, std::uint32_t tenant, std::int32_t gpus, Tick submit, Tick start, Tick end,
                       State state) {
  results::JobRecord j;
  j.trace_id = id;
  j.tenant = tenant;
  j.queue = tenant % 2;
  j.gpus = gpus;
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.runtime = start >= 0 && end >= 0 ? end - start : 0;
  j.state = static_cast<std::uint8_t>(state);
  j.pool = start >= 0 ? 0 : -1;
  j.nodes_used = start >= 0 ? 1 : 0;
  j.first_node = start >= 0 ? 0 : -1;
  return j;
}

results::EventRecord event(Tick t, EventKind kind, std::uint32_t job, std::int32_t detail = 0,
                           std::uint32_t reason = 0) {
  return {t, static_cast<std::uint8_t>(kind), job, detail, reason};
}

// Tenants a (10 GPU-hours), b (6) and c (0); 12 GPUs in two pools over 10 hours.
results::RunResult hand_built() {
  results::RunResult r;
  r.scenario_name = "hand";
  r.policy = "fifo";
  r.sim_start = 0;
  r.sim_end = 10 * H;
  r.total_gpus = 12;
  r.tenants = {"a", "b", "c"};
  r.queues = {"q0", "q1"};
  r.pools = {{"p0", "A100", 2, 4}, {"p1", "H100", 1, 4}};
  r.reasons = {"", "quota"};
  r.jobs = {job(100, 0, 4, 0, 0, 2 * H, State::Completed), job(101, 1, 2, 1 * H, 2 * H, 4 * H, State::Completed),
            job(102, 0, 1, 0, 3 * H, 5 * H, State::Cancelled), job(103, 2, 8, 2 * H, -1, 2 * H, State::Rejected),
            job(104, 1, 1, 4 * H, 6 * H, 10 * H, State::Completed)};
  r.jobs[4].gpu_milli = 500;
  r.jobs[1].preemptions = 1;
  // Job 101's life, deliberately out of order.
  r.events = {event(4 * H, EventKind::Finish, 1, 2),   event(1 * H, EventKind::Submit, 1),
              event(2 * H, EventKind::Start, 1, 2),    event(2 * H + H / 2, EventKind::Preempt, 1, 4, 1),
              event(3 * H, EventKind::Start, 1, 2),    event(2 * H + H / 2, EventKind::Requeue, 1),
              event(2 * H, EventKind::Reject, 3, 0, 1)};
  results::TimeSeries& ts = r.timeseries;
  ts.interval = 2 * H;
  ts.time = {0, 2 * H, 4 * H, 6 * H, 8 * H};
  ts.running_jobs = {2, 2, 1, 1, 1};
  ts.pending_jobs = {1, 2, 0, 0, 0};
  ts.pool_used_gpus = {4, 0, 3, 0, 3, 0, 0, 1, 0, 1};
  ts.pool_free_gpus = {4, 4, 5, 4, 5, 4, 8, 3, 8, 3};
  ts.tenant_used_gpus = {4, 0, 0, 1, 2, 0, 1, 2, 0, 0, 1, 0, 0, 1, 0};
  ts.tenant_pending_jobs = {1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ts.tenant_pending_gpus = {1, 0, 0, 0, 2, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  return r;
}

std::shared_ptr<const ReplayData> prepared() { return prepare(hand_built(), "/tmp/hand.h5"); }

QString cell(const QAbstractItemModel& m, int row, int col) { return m.data(m.index(row, col)).toString(); }

void test_model(QAbstractItemModel* model) {
  // Fatal: any broken invariant aborts the test binary.
  new QAbstractItemModelTester(model, QAbstractItemModelTester::FailureReportingMode::Fatal, model);
}

TEST(Format, Durations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(4200), "4.2s");
  EXPECT_EQ(format_duration(42000), "42s");
  EXPECT_EQ(format_duration(723000), "12m 03s");
  EXPECT_EQ(format_duration(3 * H + 7 * 60000), "3h 07m");
  EXPECT_EQ(format_duration(2 * kTicksPerDay + 5 * H), "2d 05h");
  EXPECT_EQ(format_duration(-42000), "-42s");
  EXPECT_EQ(format_offset(3 * kTicksPerDay + 4 * H + 5 * 60000 + 6000), "3d 04:05:06");
  EXPECT_EQ(format_offset(3723000), "01:02:03");
  EXPECT_EQ(state_name(5), "rejected");
  EXPECT_EQ(event_name(4), "preempt");
  EXPECT_EQ(kind_name(0), "train");
  EXPECT_EQ(state_name(42), "#42");
}

// Issue #36 items 10 and 11: a reason that names its kind is not prefixed twice; tables read dates
// (as the charts' axes do) when the trace gives its start.
TEST(Format, WhyOnceAndDatesInTables) {
  EXPECT_EQ(why_text(4, "gang: partially placed"), "gang: partially placed");
  EXPECT_EQ(why_text(4, "Gang: partially placed"), "Gang: partially placed");
  EXPECT_EQ(why_text(3, "one or more jobs of higher priority"), "priority: one or more jobs of higher priority");
  EXPECT_EQ(why_text(1, ""), "capacity");
  results::RunResult r = hand_built();
  const auto relative = prepare(r, "/tmp/hand.h5");
  EXPECT_EQ(format_date(*relative, 4 * kTicksPerDay + 15 * H + 23 * 60000 + 14000), "4d 15:23:14");
  r.unix_start = 1272835200;  // 2010-05-02 21:20:00 UTC
  const auto dated = prepare(r, "/tmp/hand.h5");
  EXPECT_EQ(format_date(*dated, 4 * kTicksPerDay + 15 * H + 23 * 60000 + 14000), "2010-05-07 12:43:14");
  JobsModel jobs;
  jobs.set_data(dated);
  EXPECT_EQ(jobs.data(jobs.index(1, JobsModel::Submit)).toString(), "2010-05-02 22:20:00");  // 1h after the start
  EXPECT_EQ(jobs.data(jobs.index(1, JobsModel::Submit), Qt::ToolTipRole).toString(),
            "2010-05-02 22:20:00 UTC (01:00:00)");
}

TEST(Prepare, KpisMatchTheHandCountAndSummarize) {
  const auto d = prepared();
  const Kpis& k = d->kpis;
  EXPECT_EQ(k.jobs, 5);
  EXPECT_EQ(k.started, 4);
  EXPECT_EQ(k.preemptions, 1);
  EXPECT_EQ(k.by_state[static_cast<int>(State::Completed)], 3);
  EXPECT_EQ(k.by_state[static_cast<int>(State::Cancelled)], 1);
  EXPECT_EQ(k.by_state[static_cast<int>(State::Rejected)], 1);
  EXPECT_DOUBLE_EQ(k.wait_mean_s, 5400);    // waits 0, 1h, 2h, 3h
  EXPECT_DOUBLE_EQ(k.wait_median_s, 3600);  // nearest rank: 2nd of 4
  EXPECT_DOUBLE_EQ(k.wait_p95_s, 10800);    // 4th of 4
  EXPECT_DOUBLE_EQ(k.jct_mean_s, 13200);    // 2h, 3h, 6h
  EXPECT_DOUBLE_EQ(k.utilization, 16.0 / 120.0);
  EXPECT_DOUBLE_EQ(k.makespan_s, 36000);

  const results::Summary s = results::summarize(hand_built());
  EXPECT_DOUBLE_EQ(k.wait_mean_s, s.wait.mean);
  EXPECT_DOUBLE_EQ(k.wait_median_s, s.wait.median);
  EXPECT_DOUBLE_EQ(k.wait_p95_s, s.wait.p95);
  EXPECT_DOUBLE_EQ(k.jct_mean_s, s.jct.mean);
  EXPECT_DOUBLE_EQ(k.utilization, s.gpu_utilization);
}

TEST(Prepare, TenantsRankedByGpuHours) {
  const auto d = prepared();
  ASSERT_EQ(d->tenants.size(), 3u);
  EXPECT_EQ(d->tenants[0].name, "a");
  EXPECT_DOUBLE_EQ(d->tenants[0].gpu_hours, 10);
  EXPECT_DOUBLE_EQ(d->tenants[0].mean_wait_s, 5400);
  EXPECT_DOUBLE_EQ(d->tenants[0].p95_wait_s, 10800);
  EXPECT_EQ(d->tenants[1].name, "b");
  EXPECT_DOUBLE_EQ(d->tenants[1].gpu_hours, 6);  // 2 GPUs x 2h + half a GPU x 4h
  EXPECT_EQ(d->tenants[2].name, "c");
  EXPECT_EQ(d->tenants[2].started, 0);
  EXPECT_EQ(d->tenant_rank, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Prepare, OneJainIndexForTheFairnessAndCompareTabs) {
  // Issue #36 item 8: the Fairness tab computed Jain over raw GPU-hours (0.121 on a drill run)
  // while the Compare tab and the report use share / entitlement (0.119). With tenant a weighing
  // 2 (entitlements 1/2, 1/4, 1/4) the two differ: GPU-hours 10, 6, 0 give 256 / 408 = 0.627;
  // shares 10/120, 6/120, 0 over entitlements give x = 1/6, 1/5, 0 and J = (11/30)^2 /
  // (3 (1/36 + 1/25)) = 121 / 183 = 0.661.
  results::RunResult r = hand_built();
  r.scenario_text = "name: hand\ntenants:\n  - {name: a, weight: 2}\n  - {name: b}\n  - {name: c}\n";
  const auto d = prepare(r, "/tmp/hand.h5");
  EXPECT_DOUBLE_EQ(d->fairness.jain, 121.0 / 183.0);
  const QString text = jain_text(*d);
  EXPECT_TRUE(text.contains("<b>0.661</b>")) << text.toStdString();
  EXPECT_TRUE(text.contains("n = 3 tenants")) << text.toStdString();
  EXPECT_FALSE(text.contains("0.627")) << text.toStdString();
  // The Compare tab's row is the same figure.
  KpiCompareModel compare;
  compare.set_runs({d});
  EXPECT_EQ(cell(compare, KpiCompareModel::Jain, 1), "0.661");
  // Equal weights: the hand-built run's 256 / 408 (x proportional to GPU-hours).
  EXPECT_DOUBLE_EQ(prepared()->fairness.jain, 256.0 / 408.0);
}

TEST(Prepare, SeriesAreCurvesPerTenantAndPool) {
  const auto d = prepared();
  const Bucketed& used = d->used_by_tenant.full();
  ASSERT_EQ(used.t_days.size(), 5u);
  EXPECT_DOUBLE_EQ(used.t_days[1], 2.0 / 24.0);
  ASSERT_EQ(used.curves.size(), 3u);  // three tenants: no "other"
  EXPECT_EQ(used.curves[0].name, "a");
  EXPECT_EQ(used.curves[0].y, (std::vector<double>{4, 1, 1, 0, 0}));
  EXPECT_EQ(used.curves[1].y, (std::vector<double>{0, 2, 2, 1, 1}));
  const Bucketed& share = d->share_by_tenant.full();
  EXPECT_DOUBLE_EQ(share.curves[0].y[1], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(share.curves[1].y[1], 2.0 / 3.0);
  for (std::size_t s = 0; s < 5; ++s) {
    double sum = 0;
    for (const Curve& c : share.curves) sum += c.y[s];
    EXPECT_DOUBLE_EQ(sum, 1.0) << "sample " << s;
  }
  const Bucketed& pools = d->used_by_pool.full();
  ASSERT_EQ(pools.curves.size(), 4u);  // in use and up, per pool
  EXPECT_EQ(pools.curves[0].name, "p0 in use");
  EXPECT_EQ(pools.curves[0].y, (std::vector<double>{4, 3, 3, 0, 0}));
  EXPECT_EQ(pools.curves[1].y, (std::vector<double>{8, 8, 8, 8, 8}));
  EXPECT_EQ(pools.curves[3].y, (std::vector<double>{4, 4, 4, 4, 4}));
  const Bucketed& totals = d->totals.full();
  EXPECT_EQ(totals.curves[0].y, (std::vector<double>{4, 3, 3, 1, 1}));
  EXPECT_EQ(totals.curves[1].name, "pending jobs");
  EXPECT_EQ(d->pending_gpus_by_tenant.full().curves[2].y, (std::vector<double>{0, 8, 0, 0, 0}));
}

TEST(Prepare, TopEightTenantsPlusOther) {
  results::RunResult r;
  r.sim_end = 10 * H;
  r.total_gpus = 100;
  for (int t = 0; t < 10; ++t) {
    r.tenants.push_back(std::string(1, 't').append(std::to_string(t)));
    r.jobs.push_back(job(t, static_cast<std::uint32_t>(t), t + 1, 0, 0, H, State::Completed));  // t + 1 GPU-hours
  }
  r.timeseries.time = {0, H};
  for (int s = 0; s < 2; ++s)
    for (int t = 0; t < 10; ++t) r.timeseries.tenant_used_gpus.push_back((s + 1) * (t + 1));
  const auto d = prepare(std::move(r), "ten.h5");
  const Bucketed& used = d->used_by_tenant.full();
  ASSERT_EQ(used.curves.size(), 9u);
  EXPECT_EQ(used.curves[0].name, "t9");
  EXPECT_EQ(used.curves[7].name, "t2");
  EXPECT_EQ(used.curves[8].name, "other (2 tenants)");
  EXPECT_EQ(used.curves[0].y, (std::vector<double>{10, 20}));
  EXPECT_EQ(used.curves[8].y, (std::vector<double>{1 + 2, 2 + 4}));  // t0 and t1
  double sum = 0;
  for (const Curve& c : used.curves) sum += c.y[0];
  EXPECT_DOUBLE_EQ(sum, 55);
  EXPECT_EQ(d->wait_cdfs.size(), 9u);  // all tenants + top 8
}

TEST(Pyramid, StackedBucketsTraceRealTotals) {
  // Two tenants that take turns: 6 GPUs, then 0 and 4, then 4 and 0 (the total is never above 6).
  // Per curve, a two-sample bucket's highest is 6 and 4: stacked, 10, a moment that never was.
  // Stacked, the bucket's lowest and highest are the tenants' values where the total is.
  const std::vector<double> t{0, 1, 2, 3};
  const std::vector<Curve> curves{Curve{"a", {6, 0, 4, 1}}, Curve{"b", {0, 4, 0, 5}}};
  const Pyramid separate = make_pyramid(t, curves, 1);
  EXPECT_DOUBLE_EQ(separate.levels[1].curves[0].high(0) + separate.levels[1].curves[1].high(0), 10);
  const Pyramid stacked = make_pyramid(t, curves, 1, Stacking::Stacked);
  const Bucketed& l = stacked.levels[1];
  EXPECT_DOUBLE_EQ(l.curves[0].high(0) + l.curves[1].high(0), 6);  // sample 0: 6 + 0
  EXPECT_DOUBLE_EQ(l.curves[0].low(0) + l.curves[1].low(0), 4);    // sample 1: 0 + 4
  EXPECT_DOUBLE_EQ(l.curves[0].high(1) + l.curves[1].high(1), 6);  // sample 3: 1 + 5
  EXPECT_DOUBLE_EQ(l.curves[0].low(1) + l.curves[1].low(1), 4);    // sample 2: 4 + 0
  EXPECT_EQ(l.curves[0].y, (std::vector<double>{3, 2.5}));         // the means stay per curve
}

TEST(Pyramid, BucketsAreMeansAndPreserveSums) {
  std::vector<double> t{0, 1, 2, 3, 4};
  const Pyramid p = make_pyramid(t, {Curve{"c", {4, 1, 1, 0, 7}}}, 1);
  ASSERT_EQ(p.levels.size(), 4u);  // 5, 3, 2, 1 buckets
  EXPECT_EQ(p.levels[1].samples_per_bucket, 2u);
  EXPECT_EQ(p.levels[1].t_days, (std::vector<double>{0, 2, 4}));
  EXPECT_EQ(p.levels[1].curves[0].y, (std::vector<double>{2.5, 0.5, 7}));
  EXPECT_EQ(p.levels[2].curves[0].y, (std::vector<double>{1.5, 7}));
  EXPECT_EQ(p.levels[3].curves[0].y, (std::vector<double>{13.0 / 5}));
  for (const Bucketed& level : p.levels) {
    double sum = 0;
    for (std::size_t b = 0; b < level.t_days.size(); ++b) {
      const std::size_t n = std::min<std::size_t>(level.samples_per_bucket, 5 - b * level.samples_per_bucket);
      sum += level.curves[0].y[b] * static_cast<double>(n);
    }
    EXPECT_DOUBLE_EQ(sum, 13) << "bucket size " << level.samples_per_bucket;
  }
  EXPECT_EQ(p.level_for(0, 4, 5).samples_per_bucket, 1u);
  EXPECT_EQ(p.level_for(0, 4, 3).samples_per_bucket, 2u);
  EXPECT_EQ(p.level_for(0, 4, 1).samples_per_bucket, 8u);
  EXPECT_EQ(p.level_for(1, 2, 2).samples_per_bucket, 1u);  // zoomed in: full detail
  // Default: stop once 64 buckets or fewer remain.
  std::vector<double> many(1000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i);
  const Pyramid big = make_pyramid(many, {Curve{"c", many}});
  EXPECT_EQ(big.levels.back().t_days.size(), 63u);  // 1000 / 16 rounded up
}

// issue #21: a bucket keeps its lowest and highest sample, so that a one-sample outage shows at
// every level of detail.
TEST(Pyramid, BucketsKeepTheirLowestAndHighestSample) {
  std::vector<double> t(10000), y(10000, 8192.0);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i) / 144;  // 10-minute samples
  y[7777] = 0;    // one sample down to 0 (the failure drill's site-wide outage)
  y[100] = 9000;  // and one peak
  const Pyramid p = make_pyramid(t, {Curve{"up", y}});
  ASSERT_GT(p.levels.size(), 5u);
  EXPECT_TRUE(p.levels[0].curves[0].lo.empty());  // level 0: the samples themselves
  for (std::size_t l = 1; l < p.levels.size(); ++l) {
    const Curve& c = p.levels[l].curves[0];
    const std::size_t size = p.levels[l].samples_per_bucket;
    ASSERT_EQ(c.lo.size(), p.levels[l].t_days.size());
    EXPECT_EQ(c.low(7777 / size), 0.0) << "bucket size " << size;
    EXPECT_EQ(c.high(7777 / size), 8192.0) << "bucket size " << size;
    EXPECT_EQ(c.high(100 / size), 9000.0) << "bucket size " << size;
    EXPECT_EQ(*std::min_element(c.lo.begin(), c.lo.end()), 0.0);
    EXPECT_GT(c.y[7777 / size], 0.0);  // the mean alone would hide it
  }
  // Hand-checked small case: [4, 1 | 1, 0 | 7].
  const Pyramid small = make_pyramid({0, 1, 2, 3, 4}, {Curve{"c", {4, 1, 1, 0, 7}}}, 1);
  EXPECT_EQ(small.levels[1].curves[0].lo, (std::vector<double>{1, 0, 7}));
  EXPECT_EQ(small.levels[1].curves[0].hi, (std::vector<double>{4, 1, 7}));
  EXPECT_EQ(small.levels[1].curves[0].lo_first, (std::vector<std::uint8_t>{0, 0, 1}));
  EXPECT_EQ(small.levels[3].curves[0].lo, (std::vector<double>{0}));
  EXPECT_EQ(small.levels[3].curves[0].hi, (std::vector<double>{7}));
}

// issue #21: node outages from the audit log, merged into the charts' markers, and the nodes out
// at an instant for the cluster map.
TEST(Outages, FromTheAuditLog) {
  constexpr std::uint8_t kDown = 7, kUp = 8, kDrain = 9;
  constexpr std::uint32_t kNoJob = 0xffffffffu;
  results::RunResult r;
  r.sim_start = 0;
  r.sim_end = 100 * H;
  r.reasons = {"", "outage: site power loss", "node failure", "maintenance", "outage over", "repaired"};
  const auto ev = [&](Tick t, std::uint8_t kind, std::int32_t node, std::uint32_t reason) {
    return results::EventRecord{t, kind, kNoJob, node, reason};
  };
  r.events = {ev(1 * H, kDown, 3, 2),                          // node 3 fails 1h-5h
              ev(5 * H, kUp, 3, 5), ev(10 * H, kDrain, 1, 3),  // node 1 drained at 10h, down at 12h, back at 14h
              ev(12 * H, kDown, 1, 3), ev(14 * H, kUp, 1, 0), ev(20 * H, kDown, 0, 1),  // the outage: nodes 0-2 at
                                                                                        // 20h, back at 21h
              ev(20 * H, kDown, 1, 1), ev(20 * H, kDown, 2, 1), ev(21 * H, kUp, 0, 4), ev(21 * H, kUp, 1, 4),
              ev(21 * H, kUp, 2, 4), ev(90 * H, kDown, 2, 2)};  // never back: ends at the run's end
  const auto outages = node_outages(r);
  ASSERT_EQ(outages.size(), 6u);
  EXPECT_EQ(outages[0].kind, OutageKind::Failure);
  EXPECT_EQ(outages[0].start, 1 * H);
  EXPECT_EQ(outages[0].end, 5 * H);
  EXPECT_EQ(outages[1].kind, OutageKind::Drain);
  EXPECT_EQ(outages[1].start, 10 * H);  // from the cordon
  EXPECT_EQ(outages[1].end, 14 * H);
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(outages[i].kind, OutageKind::Outage);
    EXPECT_EQ(outages[i].node, i - 2);
    EXPECT_EQ(outages[i].end, 21 * H);
  }
  EXPECT_EQ(outages[5].end, 100 * H);
  const auto markers = outage_markers(r, outages);
  ASSERT_EQ(markers.size(), 4u);
  EXPECT_EQ(markers[0].kind, OutageKind::Failure);
  EXPECT_EQ(markers[1].kind, OutageKind::Drain);
  EXPECT_EQ(markers[2].kind, OutageKind::Outage);
  EXPECT_EQ(markers[2].nodes, 3);
  EXPECT_EQ(markers[2].start, 20 * H);
  EXPECT_EQ(markers[2].end, 21 * H);
  EXPECT_EQ(markers[2].text, "outage: site power loss, 3 nodes, 1h 00m");
  EXPECT_EQ(markers[3].text, "node failure, 1 node, 10h 00m");
  EXPECT_EQ(nodes_out_at(outages, 4, 0), (std::vector<std::uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(nodes_out_at(outages, 4, 2 * H), (std::vector<std::uint8_t>{0, 0, 0, 3}));
  EXPECT_EQ(nodes_out_at(outages, 4, 11 * H), (std::vector<std::uint8_t>{0, 2, 0, 0}));
  EXPECT_EQ(nodes_out_at(outages, 4, 20 * H), (std::vector<std::uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(nodes_out_at(outages, 4, 21 * H), (std::vector<std::uint8_t>{0, 0, 0, 0}));  // back at 21h
  // Never back: still out at the run's last instant (the last sample counts it down too).
  EXPECT_FALSE(outages[5].back);
  EXPECT_EQ(nodes_out_at(outages, 4, 100 * H), (std::vector<std::uint8_t>{0, 0, 3, 0}));
}

TEST(Cdf, StepsAtEveryDistinctWait) {
  const Cdf c = make_cdf({3 * H, 0, H, H});
  EXPECT_EQ(c.x_hours, (std::vector<double>{0, 1, 3}));
  EXPECT_EQ(c.y, (std::vector<double>{0.25, 0.75, 1.0}));
  std::vector<Tick> waits;
  for (Tick i = 1; i <= 1000; ++i) waits.push_back(i * H);
  const Cdf d = make_cdf(waits, 4);
  EXPECT_EQ(d.x_hours, (std::vector<double>{250, 500, 750, 1000}));
  EXPECT_EQ(d.y, (std::vector<double>{0.25, 0.5, 0.75, 1.0}));
  EXPECT_TRUE(make_cdf({}).x_hours.empty());

  const auto data = prepared();
  ASSERT_EQ(data->wait_cdfs.size(), 4u);
  EXPECT_EQ(data->wait_cdfs[0].name, "all tenants");
  EXPECT_EQ(data->wait_cdfs[0].x_hours, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(data->wait_cdfs[1].name, "a");
  EXPECT_EQ(data->wait_cdfs[1].y, (std::vector<double>{0.5, 1.0}));
  EXPECT_TRUE(data->wait_cdfs[3].x_hours.empty());  // c never started
}

TEST(JobsModel, CellsAndRawValues) {
  JobsModel m;
  test_model(&m);
  m.set_data(prepared());
  ASSERT_EQ(m.rowCount(), 5);
  EXPECT_EQ(cell(m, 1, JobsModel::Job), "101");
  EXPECT_EQ(cell(m, 1, JobsModel::Tenant), "b");
  EXPECT_EQ(cell(m, 1, JobsModel::Queue), "q1");
  EXPECT_EQ(cell(m, 1, JobsModel::State), "completed");
  EXPECT_EQ(cell(m, 1, JobsModel::Submit), "01:00:00");
  EXPECT_EQ(cell(m, 1, JobsModel::Wait), "1h 00m");
  EXPECT_EQ(cell(m, 1, JobsModel::Runtime), "2h 00m");
  EXPECT_EQ(cell(m, 1, JobsModel::Pool), "p0");
  EXPECT_EQ(cell(m, 4, JobsModel::Gpus), "0.500");
  EXPECT_EQ(cell(m, 3, JobsModel::Wait), "");  // never started
  EXPECT_EQ(cell(m, 3, JobsModel::State), "rejected");
  EXPECT_EQ(m.data(m.index(1, JobsModel::Wait), kRawRole).toLongLong(), H);
  EXPECT_EQ(m.headerData(JobsModel::Wait, Qt::Horizontal).toString(), "Wait");
  m.set_data(prepare(hand_built(), "again.h5"));
  m.set_data(nullptr);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(JobsModel, FilterAndSort) {
  JobsModel m;
  JobFilterProxy proxy;
  proxy.setSourceModel(&m);
  test_model(&proxy);
  m.set_data(prepared());
  proxy.source_reset();
  EXPECT_EQ(proxy.rowCount(), 5);
  proxy.set_tenant(1);
  EXPECT_EQ(proxy.rowCount(), 2);
  proxy.set_state(static_cast<int>(State::Completed));
  EXPECT_EQ(proxy.rowCount(), 2);
  proxy.set_tenant(-1);
  EXPECT_EQ(proxy.rowCount(), 3);
  proxy.set_state(-1);
  proxy.set_text("103");
  ASSERT_EQ(proxy.rowCount(), 1);
  EXPECT_EQ(cell(proxy, 0, JobsModel::Job), "103");
  proxy.set_text("C");  // tenant c, case-insensitive
  ASSERT_EQ(proxy.rowCount(), 1);
  EXPECT_EQ(cell(proxy, 0, JobsModel::Tenant), "c");
  proxy.set_text("q0");  // queue q0: tenants a and c
  EXPECT_EQ(proxy.rowCount(), 3);
  proxy.set_text("");
  proxy.sort(JobsModel::Wait, Qt::DescendingOrder);
  QStringList order;
  for (int r = 0; r < proxy.rowCount(); ++r) order << cell(proxy, r, JobsModel::Job);
  EXPECT_EQ(order.join(','), "102,104,101,100,103");  // 3h, 2h, 1h, 0, never started
  proxy.sort(JobsModel::Tenant, Qt::AscendingOrder);
  order.clear();
  for (int r = 0; r < proxy.rowCount(); ++r) order << cell(proxy, r, JobsModel::Job);
  EXPECT_EQ(order.join(','), "100,102,101,104,103");
}

TEST(JobsModel, FiltersApplyToNewData) {
  JobsModel m;
  JobFilterProxy proxy;
  proxy.setSourceModel(&m);
  test_model(&proxy);
  m.set_data(prepared());
  proxy.source_reset();
  // Without a filter, every row of the new data at once.
  results::RunResult more = hand_built();
  more.jobs.push_back(more.jobs[0]);
  m.set_data(prepare(more, "/tmp/more.h5"));
  proxy.source_reset();
  EXPECT_EQ(proxy.rowCount(), 6);
  // A text filter matches the new data's names: tenant "b" renamed "zeta".
  proxy.set_text("zeta");
  EXPECT_EQ(proxy.rowCount(), 0);
  more.tenants[1] = "zeta";
  m.set_data(prepare(more, "/tmp/more.h5"));
  proxy.source_reset();
  EXPECT_EQ(proxy.rowCount(), 2);  // jobs 101 and 104
  proxy.set_state(static_cast<int>(State::Completed));
  m.set_data(prepared());
  proxy.source_reset();
  EXPECT_EQ(proxy.rowCount(), 0);  // no tenant "zeta" any more
  proxy.set_text("");
  EXPECT_EQ(proxy.rowCount(), 3);
}

TEST(JobEventsModel, LifeInTimeOrder) {
  JobEventsModel m;
  test_model(&m);
  const auto d = prepared();
  m.set_job(d, 1);
  EXPECT_TRUE(m.from_audit_log());
  ASSERT_EQ(m.rowCount(), 6);
  QStringList kinds;
  for (int r = 0; r < m.rowCount(); ++r) kinds << cell(m, r, JobEventsModel::Event);
  EXPECT_EQ(kinds.join(','), "submit,start,preempt,requeue,start,finish");
  EXPECT_EQ(cell(m, 2, JobEventsModel::Time), "02:30:00");
  EXPECT_EQ(cell(m, 2, JobEventsModel::Detail), "by job 104");
  EXPECT_EQ(cell(m, 2, JobEventsModel::Reason), "quota");
  EXPECT_EQ(cell(m, 5, JobEventsModel::Detail), "completed");
  // No audit events for job 100: rebuilt from /jobs.
  m.set_job(d, 0);
  EXPECT_FALSE(m.from_audit_log());
  ASSERT_EQ(m.rowCount(), 3);
  EXPECT_EQ(cell(m, 2, JobEventsModel::Event), "finish");
  EXPECT_EQ(cell(m, 2, JobEventsModel::Time), "02:00:00");
  m.set_job(d, 3);
  ASSERT_EQ(m.rowCount(), 1);
  EXPECT_EQ(cell(m, 0, JobEventsModel::Event), "reject");
  m.set_job(d, -1);
  EXPECT_EQ(m.rowCount(), 0);
  m.set_job(d, 99);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(Prepare, WaitsCountJobsThatNeverStartedUntilTheEnd) {
  // Tenant c's job 105, submitted at 8 h, never starts before the run ends at 10 h: it waits 2 h
  // (a lower bound), as in the run summary, and the tenant table marks c's waits with >=.
  results::RunResult r = hand_built();
  r.jobs.push_back(job(105, 2, 1, 8 * H, -1, -1, State::Unfinished));
  const auto d = prepare(r, "/tmp/never.h5");
  const Kpis& k = d->kpis;
  EXPECT_EQ(k.started, 4);
  EXPECT_EQ(k.never_started, 1);
  EXPECT_DOUBLE_EQ(k.wait_mean_s, 5760);  // waits 0, 1h, 2h, 3h and 2h (never started)
  const results::Summary s = results::summarize(r);
  EXPECT_EQ(s.never_started, 1);
  EXPECT_DOUBLE_EQ(k.wait_mean_s, s.wait.mean);
  EXPECT_DOUBLE_EQ(k.wait_p95_s, s.wait.p95);
  TenantModel m;
  m.set_data(d);
  ASSERT_EQ(m.rowCount(), 3);
  EXPECT_EQ(cell(m, 2, 0), "c");
  EXPECT_EQ(cell(m, 2, TenantModel::MeanWait), ">=2h 00m");
}

TEST(TenantModel, RowsAndCsv) {
  TenantModel m;
  test_model(&m);
  m.set_data(prepared());
  ASSERT_EQ(m.rowCount(), 3);
  // Two shares, two names (issue #21): of the GPU-hours used, and of the cluster as the CLI has it.
  const auto d = prepared();
  const auto cluster = [&](std::size_t t) { return results::percent(d->fairness.tenants[t].share); };
  EXPECT_EQ(to_csv(m), QString::fromStdString("Tenant,Jobs,GPU-hours,Share of GPU-hours used,Share of cluster,Mean "
                                              "wait,p95 wait\n"
                                              "a,2,10.0,62.5%," +
                                              cluster(0) + ",1h 30m,3h 00m\n" + "b,2,6.0,37.5%," + cluster(1) +
                                              ",1h 30m,2h 00m\n" + "c,1,0.0,0.0%," + cluster(2) + ",,\n"));
  results::FairnessOptions opt;
  opt.weights = results::weights_from_scenario_text(d->result);
  const results::Fairness cli = results::compute_fairness(d->result, opt);
  EXPECT_EQ(m.data(m.index(0, TenantModel::ClusterShare), kRawRole).toDouble(), cli.tenants[0].share);
  EXPECT_EQ(cluster(0), "8.3%");  // 10 GPU-hours of a 12-GPU cluster over 10 hours
  m.set_data(nullptr);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(Csv, QuotesWhereNeeded) {
  QStandardItemModel m(1, 2);
  m.setHorizontalHeaderLabels({"name", "say \"hi\""});
  m.setItem(0, 0, new QStandardItem("x,y"));
  m.setItem(0, 1, new QStandardItem("plain"));
  EXPECT_EQ(to_csv(m), "name,\"say \"\"hi\"\"\"\n\"x,y\",plain\n");
}

TEST(KpiCompareModel, ValuesAndDifferences) {
  KpiCompareModel m;
  test_model(&m);
  m.set_runs({prepared()});
  EXPECT_EQ(m.columnCount(), 2);
  // The run-wide KPIs, then the tenants' and the job kinds' rows, folded (no services here).
  ASSERT_EQ(m.rowCount(), KpiCompareModel::KpiCount + 2);
  EXPECT_EQ(m.data(m.index(KpiCompareModel::KpiCount, 0)).toString(), "Tenants (3)");
  EXPECT_EQ(m.data(m.index(KpiCompareModel::KpiCount + 1, 0)).toString(), "Job kinds (1)");
  EXPECT_EQ(m.rowCount(m.index(KpiCompareModel::KpiCount, 0)), 3);
  EXPECT_EQ(cell(m, KpiCompareModel::MeanWait, 1), "1h 30m");
  EXPECT_EQ(cell(m, KpiCompareModel::Jain, 1), "0.627");
  EXPECT_EQ(cell(m, KpiCompareModel::Utilization, 1), "13.3%");

  results::RunResult slower = hand_built();
  slower.jobs[0].start = H;  // job 100 now waits 1h and ends 1h later
  slower.jobs[0].end = 3 * H;
  m.set_runs({prepared(), prepare(std::move(slower), "/tmp/slower.h5")});
  ASSERT_EQ(m.columnCount(), 4);  // KPI, two runs, one difference
  EXPECT_EQ(m.headerData(2, Qt::Horizontal).toString(), "slower.h5");
  EXPECT_EQ(m.headerData(3, Qt::Horizontal).toString(), "Δ slower.h5");
  EXPECT_EQ(cell(m, KpiCompareModel::MeanWait, 2), "1h 45m");
  EXPECT_EQ(cell(m, KpiCompareModel::MeanWait, 3), "+15m 00s (+16.7%)");
  EXPECT_EQ(cell(m, KpiCompareModel::Jobs, 3), "0 (0.0%)");
  EXPECT_DOUBLE_EQ(m.data(m.index(KpiCompareModel::MeanWait, 3), kRawRole).toDouble(), 900);
  // A row the same under both runs (jobs) is greyed with a tooltip; one that differs is not.
  const QColor grey(0x75, 0x75, 0x75);
  EXPECT_EQ(m.data(m.index(KpiCompareModel::Jobs, 0), Qt::ForegroundRole).value<QColor>(), grey);
  EXPECT_EQ(m.data(m.index(KpiCompareModel::Jobs, 2), Qt::ForegroundRole).value<QColor>(), grey);
  EXPECT_TRUE(
      m.data(m.index(KpiCompareModel::Jobs, 1), Qt::ToolTipRole).toString().contains("does not tell them apart"));
  EXPECT_FALSE(m.data(m.index(KpiCompareModel::MeanWait, 1), Qt::ForegroundRole).isValid());
  EXPECT_FALSE(m.data(m.index(KpiCompareModel::MeanWait, 0), Qt::ToolTipRole).toString().contains("does not tell"));
  EXPECT_EQ(KpiCompareModel::format_delta(KpiCompareModel::Utilization, 0.5, 0.25), "+25.0 pp");
  EXPECT_EQ(KpiCompareModel::format_delta(KpiCompareModel::MeanWait, 60, 120), "-1m 00s (-50.0%)");
  m.set_runs({});
  EXPECT_EQ(m.columnCount(), 0);
}

// issue #32 item 7: the Compare tab's scorecard gives each verdict with its why-line, from the
// verdicts `headroom compare --keep-runs` kept in each file; one column per system.
TEST(ScorecardModel, VerdictsWithTheirWhyLinePerSystem) {
  ScorecardModel m;
  test_model(&m);
  m.set_runs({prepared()});  // a file no compare scored: no rows
  EXPECT_EQ(m.rowCount(), 0);
  results::RunResult k = hand_built();
  k.scenario_name = "poc-mixed-work";
  k.policy = "kubernetes";
  k.scorecard = {{"kind:train.completed_fraction >= 0.9", "integration needed: kubernetes+coscheduling",
                  "kind.completed_fraction 12.5%, target >= 90.0%; kubernetes+coscheduling passes it with 97.1%"},
                 {"kind:interactive.wait_p95 <= 5m", "passed 1m 30s", "kind.wait_p95 1m 30s, target <= 5m 00s"}};
  results::RunResult c = hand_built();
  c.scenario_name = "poc-mixed-work";
  c.policy = "kubernetes+coscheduling";
  c.scorecard = {
      {"kind:train.completed_fraction >= 0.9", "passed 97.1%", "kind.completed_fraction 97.1%, target >= 90.0%"}};
  m.set_runs({prepare(std::move(k), "/tmp/k.h5"), prepare(std::move(c), "/tmp/c.h5"), prepared()});
  ASSERT_EQ(m.rowCount(), 2);
  ASSERT_EQ(m.columnCount(), 4);  // drill, target, kubernetes, kubernetes+coscheduling
  EXPECT_EQ(m.headerData(2, Qt::Horizontal).toString(), "kubernetes");
  EXPECT_EQ(m.headerData(3, Qt::Horizontal).toString(), "kubernetes+coscheduling");
  EXPECT_EQ(m.data(m.index(0, 0)).toString(), "poc-mixed-work");
  EXPECT_EQ(m.data(m.index(0, 1)).toString(), "kind:train.completed_fraction >= 0.9");
  EXPECT_EQ(m.data(m.index(0, 2)).toString(), "integration needed: kubernetes+coscheduling");
  EXPECT_EQ(m.data(m.index(0, 2), ScorecardModel::WhyRole).toString(),
            "kind.completed_fraction 12.5%, target >= 90.0%; kubernetes+coscheduling passes it with 97.1%");
  EXPECT_EQ(m.data(m.index(0, 2), Qt::ToolTipRole), m.data(m.index(0, 2), ScorecardModel::WhyRole));
  EXPECT_EQ(m.data(m.index(0, 3)).toString(), "passed 97.1%");
  EXPECT_EQ(m.data(m.index(1, 3)).toString(), "-");  // the variant's file has no such target
  EXPECT_FALSE(m.data(m.index(1, 3), ScorecardModel::WhyRole).isValid());
  // The line under the table: the first verdict that did not pass, said in full.
  EXPECT_EQ(m.first_to_explain(), m.index(0, 2));
  EXPECT_EQ(m.why_line(m.first_to_explain()),
            "poc-mixed-work \u00b7 kind:train.completed_fraction >= 0.9 \u00b7 kubernetes: integration needed: "
            "kubernetes+coscheduling: kind.completed_fraction 12.5%, target >= 90.0%; kubernetes+coscheduling passes "
            "it with 97.1%");
}

// issue #21: every run-wide KPI of `headroom compare`, with the same numbers, units on each.
TEST(KpiCompareModel, EveryKpiOfCompareWithUnits) {
  KpiCompareModel m;
  test_model(&m);
  results::RunResult r = hand_built();
  r.pools[0].gpu_hour_price = 2.5;
  r.currency = "EUR";
  const results::Summary s = results::summarize(r);
  const auto d = prepare(r, "/tmp/priced.h5");
  m.set_runs({d});
  ASSERT_EQ(m.rowCount(), KpiCompareModel::KpiCount + 2);  // + tenants, job kinds
  EXPECT_EQ(KpiCompareModel::KpiCount, 54);  // compare's rows before the per-tenant, per-kind and service ones
  const std::vector<std::string> metrics = {"jobs",
                                            "completed",
                                            "failed",
                                            "cancelled",
                                            "rejected",
                                            "unfinished",
                                            "never_started",
                                            "wait_mean",
                                            "wait_median",
                                            "wait_p95",
                                            "wait_p99",
                                            "wait_max",
                                            "jct_mean",
                                            "jct_median",
                                            "jct_p95",
                                            "gpu_utilization",
                                            "gpu_busy_utilization",
                                            "makespan",
                                            "preemptions",
                                            "lost_gpu_hours",
                                            "held_idle_gpu_hours",
                                            "starved_jobs",
                                            "pending_gpus_mean",
                                            "jain_index",
                                            "jain_index_mean",
                                            "rho_max",
                                            "rho_mean",
                                            "min_share_ratio",
                                            "max_dominant_share",
                                            "fragmentation",
                                            "fragmented_gpus_mean",
                                            "borrowed_gpu_hours",
                                            "borrowing_starts",
                                            "reclaims",
                                            "denied",
                                            "jobs_killed",
                                            "failure_lost_gpu_hours",
                                            "drills_recovered",
                                            "worst_drill_recovery",
                                            "outages_with_kills",
                                            "recovery_p50",
                                            "recovery_p95",
                                            "recovery_max",
                                            "not_recovered",
                                            "drill_recovery_max",
                                            "gangs_killed",
                                            "partial_gangs",
                                            "partial_gang_gpu_hours",
                                            "outage_slo_attainment",
                                            "after_outage_slo_attainment",
                                            "slo_attainment",
                                            "cost",
                                            "cost_used",
                                            "cost_per_gpu_hour"};
  for (int k = 0; k < KpiCompareModel::KpiCount; ++k) EXPECT_EQ(KpiCompareModel::info(k).metric, metrics[k]);
  EXPECT_EQ(KpiCompareModel::value(*d, KpiCompareModel::Failed), static_cast<double>(s.by_state[3]));
  EXPECT_EQ(KpiCompareModel::value(*d, KpiCompareModel::P99Wait), s.wait.p99);
  EXPECT_EQ(KpiCompareModel::value(*d, KpiCompareModel::Preemptions), static_cast<double>(s.preemptions));
  EXPECT_EQ(KpiCompareModel::value(*d, KpiCompareModel::LostGpuHours), s.lost_gpu_hours);
  EXPECT_EQ(KpiCompareModel::value(*d, KpiCompareModel::Cost), s.cost);
  EXPECT_TRUE(std::isnan(KpiCompareModel::value(*d, KpiCompareModel::SloAttainment)));  // no services
  EXPECT_TRUE(std::isnan(KpiCompareModel::value(*d, KpiCompareModel::RecoveryP95)));    // no failures
  EXPECT_EQ(cell(m, KpiCompareModel::Cost, 1), QString::fromStdString(results::money(s.cost, "EUR")));
  EXPECT_TRUE(cell(m, KpiCompareModel::Cost, 1).endsWith(" EUR"));
  EXPECT_TRUE(cell(m, KpiCompareModel::LostGpuHours, 1).endsWith(" GPU-h"));
  EXPECT_TRUE(cell(m, KpiCompareModel::PendingGpusMean, 1).endsWith(" GPUs"));
  EXPECT_EQ(cell(m, KpiCompareModel::SloAttainment, 1), "-");
  EXPECT_EQ(KpiCompareModel::format(KpiCompareModel::LostGpuHours, 251453.04), "251,453.0 GPU-h");
  EXPECT_EQ(KpiCompareModel::format_delta(KpiCompareModel::Cost, 3737088, 1000, "EUR"), "+3,736,088 EUR (+373,608.8%)");
}

// issue #21: columns say what differs between the runs; a difference is green when better for its KPI.
TEST(KpiCompareModel, LabelsByWhatDiffersAndColoursByBetter) {
  results::RunResult a = hand_built();
  a.policy = "fifo";
  a.scenario_text = "workload:\n  trace: x.swf\n";
  results::RunResult b = a;
  b.policy = "kai";
  b.pools[0].nodes = 2048;
  b.scenario_text = "workload:\n  trace: x.swf\n  arrival_scale: 1.3   # more load\n";
  b.jobs[0].start = H;  // waits 1h longer, ends 1h later: worse waits
  b.jobs[0].end = 3 * H;
  KpiCompareModel m;
  test_model(&m);
  m.set_runs({prepare(a, "/tmp/a.h5"), prepare(b, "/tmp/b.h5")});
  EXPECT_EQ(m.differs(0), "fifo \u00b7 p0 2 nodes, p1 1 node \u00b7 arrival \u00d71");
  EXPECT_EQ(m.differs(1), "kai \u00b7 p0 2,048 nodes, p1 1 node \u00b7 arrival \u00d71.3");
  EXPECT_EQ(m.headerData(2, Qt::Horizontal).toString(), "b.h5\n" + m.differs(1));
  // Only what differs: the same policy drops out of the label.
  b.policy = "fifo";
  m.set_runs({prepare(a, "/tmp/a.h5"), prepare(b, "/tmp/b.h5")});
  EXPECT_FALSE(m.differs(1).contains("fifo"));
  EXPECT_TRUE(m.differs(1).contains("2,048 nodes"));
  // Worse waits are red, whatever the utilization did.
  const QModelIndex wait = m.index(KpiCompareModel::MeanWait, 3);
  EXPECT_GT(m.data(wait, kRawRole).toDouble(), 0);
  EXPECT_EQ(m.data(wait, Qt::ForegroundRole).value<QColor>(), QColor(0xc62828));
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::Utilization, 0.7, 0.6), 1);
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::MeanWait, 70, 60), -1);
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::Jobs, 70, 60), 0);  // neither better nor worse
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::Cost, 90, 100), 1);
  // A recovery never reached (infinite) is worse than one that was; two that never were are even.
  const double never = std::numeric_limits<double>::infinity();
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::RecoveryMax, never, 300), -1);
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::RecoveryMax, 300, never), 1);
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::RecoveryMax, never, never), 0);
  EXPECT_EQ(KpiCompareModel::verdict(KpiCompareModel::RecoveryMax, std::numeric_limits<double>::quiet_NaN(), 300), 0);
  EXPECT_FALSE(m.data(m.index(KpiCompareModel::Jobs, 3), Qt::ForegroundRole).isValid());
}

// Issue #36 item 4: the 20 drill runs of a bake-off are told apart by drill and system (not three
// times "kai · ricc 1,024 nodes · arrival ×1"), each in its own colour.
TEST(KpiCompareModel, RunsOfSeveralScenariosByScenarioAndPolicy) {
  std::vector<std::shared_ptr<const ReplayData>> runs;
  for (const char* drill : {"poc-failure-drill", "poc-load-drill", "poc-capacity-drill"})
    for (const char* policy : {"kai", "slurm"}) {
      results::RunResult r = hand_built();
      r.scenario_name = drill;
      r.policy = policy;
      r.scenario_text = std::string(drill) == "poc-load-drill" ? "workload:\n  arrival_scale: 1.5\n" : "workload: {}\n";
      if (std::string(drill) == "poc-capacity-drill") r.pools[0].nodes = 1;
      runs.push_back(prepare(r, QStringLiteral("/tmp/%1-%2.h5").arg(drill, policy)));
    }
  KpiCompareModel m;
  m.set_runs(runs);
  EXPECT_EQ(m.differs(0), "poc-failure-drill \u00b7 kai");
  EXPECT_EQ(m.differs(3), "poc-load-drill \u00b7 slurm");
  EXPECT_EQ(m.differs(4), "poc-capacity-drill \u00b7 kai");
  std::set<QString> labels;
  for (std::size_t i = 0; i < runs.size(); ++i) labels.insert(m.differs(i));
  EXPECT_EQ(labels.size(), runs.size());
  // Within one scenario a changed cluster is still named.
  results::RunResult bigger = hand_built();
  bigger.scenario_name = "poc-failure-drill";
  bigger.policy = "kai";
  bigger.pools[0].nodes = 4;
  runs.push_back(prepare(bigger, "/tmp/bigger.h5"));
  m.set_runs(runs);
  EXPECT_EQ(m.differs(6), "poc-failure-drill \u00b7 kai \u00b7 p0 4 nodes, p1 1 node");
}

// Issue #36 item 9: fragmentation is read against its denominator (96 % of 20 free GPUs and 13 %
// of 29 look contradictory without it).
TEST(KpiCompareModel, FragmentationWithItsDenominator) {
  results::RunResult r = hand_built();
  // Jobs wait for GPUs in the first two samples only: free 4 + 4 and 5 + 4, fragmented 1 and 0.
  r.timeseries.pool_frag_gpus = {1, 0, 0, 0, 0, 0, 2, 0, 0, 0};
  KpiCompareModel m;
  m.set_runs({prepare(r, "/tmp/frag.h5")});
  EXPECT_DOUBLE_EQ(m.data(m.index(KpiCompareModel::Fragmentation, 1), kRawRole).toDouble(), 1.0 / 17.0);
  EXPECT_EQ(cell(m, KpiCompareModel::Fragmentation, 1), "5.9% of 8.5 free");
  EXPECT_EQ(cell(m, KpiCompareModel::Fragmentation, 0), "Fragmentation (of the free GPUs while jobs waited)");
}

TEST(Colours, TwentyRunsTwentyDistinctColours) {
  for (std::size_t i = 0; i < 24; ++i)
    for (std::size_t j = i + 1; j < 24; ++j) {
      const QColor a = series_colour(i), b = series_colour(j);
      const double d = std::hypot(a.red() - b.red(), a.green() - b.green(), a.blue() - b.blue());
      EXPECT_GE(d, i < 21 && j < 21 ? 49.0 : 20.0)
          << i << " " << j << " " << a.name().toStdString() << " " << b.name().toStdString();
    }
  EXPECT_EQ(series_colour(3), series_colour(3));  // stable
}

TEST(Loader, ReadsAFileOffTheGuiThread) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString path = dir.filePath("hand.h5");
  results::write_hdf5(hand_built(), path.toStdString());
  Loader loader;
  QSignalSpy loaded(&loader, &Loader::loaded), idle(&loader, &Loader::idle), stages(&loader, &Loader::stage);
  const quint64 job = loader.load(path);
  EXPECT_TRUE(loader.busy());
  ASSERT_TRUE(idle.wait(20000));
  ASSERT_EQ(loaded.size(), 1);
  EXPECT_EQ(loaded[0][0].toULongLong(), job);
  const auto data = loaded[0][1].value<std::shared_ptr<const ReplayData>>();
  ASSERT_TRUE(data);
  EXPECT_EQ(data->result.jobs.size(), 5u);
  EXPECT_EQ(data->label, "hand.h5");
  EXPECT_DOUBLE_EQ(data->fairness.jain, 256.0 / 408.0);
  EXPECT_GE(stages.size(), 1);
  EXPECT_FALSE(loader.busy());
}

TEST(Loader, ReportsAMissingFile) {
  Loader loader;
  QSignalSpy failed(&loader, &Loader::failed), idle(&loader, &Loader::idle);
  loader.load("/nonexistent/run.h5");
  ASSERT_TRUE(idle.wait(20000));
  ASSERT_EQ(failed.size(), 1);
  EXPECT_EQ(failed[0][1].toString(), "/nonexistent/run.h5");
  EXPECT_TRUE(failed[0][2].toString().contains("run.h5")) << failed[0][2].toString().toStdString();
}

TEST(Loader, CancelDropsStaleResults) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  Loader loader(nullptr, [&](const std::string&) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return release; });
    return hand_built();
  });
  QSignalSpy loaded(&loader, &Loader::loaded), cancelled(&loader, &Loader::cancelled), idle(&loader, &Loader::idle);
  loader.load("first.h5");
  loader.load("second.h5");
  loader.cancel();
  const quint64 fresh = loader.load("third.h5");
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(idle.wait(20000));
  EXPECT_EQ(cancelled.size(), 2);
  ASSERT_EQ(loaded.size(), 1);
  EXPECT_EQ(loaded[0][0].toULongLong(), fresh);
}

// hand_built() plus where each run ran (/placements) and why the waiting jobs waited.
// Nodes: p0 = nodes 0 and 1 (4 GPUs each), p1 = node 2 (4 GPUs).
results::RunResult with_placements() {
  results::RunResult r = hand_built();
  r.reasons = {"", "quota", "capacity: no free GPUs", "priority: older jobs first"};
  r.placements = {{0, 0, 2 * H, 0, 4},
                  {1, 2 * H, 2 * H + H / 2, 1, 2},
                  {1, 3 * H, 4 * H, 2, 2},
                  {2, 3 * H, 5 * H, 0, 1},
                  {4, 6 * H, -1, 2, 1}};
  constexpr auto kWaiting = static_cast<EventKind>(kWaitingEvent);
  r.events.push_back(event(0, kWaiting, 2, 1, 2));              // 102: capacity from its submit
  r.events.push_back(event(1 * H, kWaiting, 2, 3, 3));          // 102: then priority
  r.events.push_back(event(1 * H, kWaiting, 1, 1, 2));          // 101: capacity before its first run
  r.events.push_back(event(2 * H + H / 2, kWaiting, 1, 2, 1));  // 101: quota after its preemption
  return r;
}

struct NodeUse {
  std::int32_t used;
  std::vector<std::pair<std::uint32_t, std::int32_t>> jobs;
  bool operator==(const NodeUse&) const = default;
};

std::vector<NodeUse> uses(const Occupancy& o) {
  std::vector<NodeUse> out;
  for (std::size_t n = 0; n + 1 < o.offset.size(); ++n) {
    NodeUse u{o.used[n], {}};
    for (std::uint32_t k = o.offset[n]; k < o.offset[n + 1]; ++k) u.jobs.emplace_back(o.uses[k].job, o.uses[k].gpus);
    out.push_back(u);
  }
  return out;
}

TEST(ClusterMap, IndexFromPlacements) {
  const ClusterIndex x = build_cluster_index(with_placements());
  EXPECT_TRUE(x.from_placements);
  EXPECT_EQ(x.nodes, 3);
  EXPECT_EQ(x.node_pool, (std::vector<std::int32_t>{0, 0, 1}));
  EXPECT_EQ(x.node_gpus, (std::vector<std::int32_t>{4, 4, 4}));
  EXPECT_EQ(x.pool_first_node, (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(x.slice_offset, (std::vector<std::uint32_t>{0, 2, 3, 5}));
  // The run still going at the end closes just after sim_end.
  EXPECT_EQ(x.slices[4].job, 4u);
  EXPECT_EQ(x.slices[4].end, 10 * H + 1);
  EXPECT_EQ(x.longest, (std::vector<Tick>{2 * H, H / 2, 4 * H + 1}));
  // Job 101 ran twice.
  EXPECT_EQ(x.run_offset[2] - x.run_offset[1], 2u);
}

TEST(ClusterMap, OccupancyExactAtEveryInstant) {
  const ClusterIndex x = build_cluster_index(with_placements());
  using J = std::vector<std::pair<std::uint32_t, std::int32_t>>;
  EXPECT_EQ(uses(occupancy_at(x, 1 * H)), (std::vector<NodeUse>{{4, J{{0, 4}}}, {0, {}}, {0, {}}}));
  // End is exclusive: at 2h job 100 is gone and 101 has started.
  EXPECT_EQ(uses(occupancy_at(x, 2 * H)), (std::vector<NodeUse>{{0, {}}, {2, J{{1, 2}}}, {0, {}}}));
  EXPECT_EQ(uses(occupancy_at(x, 2 * H + 3 * H / 4)), (std::vector<NodeUse>{{0, {}}, {0, {}}, {0, {}}}));
  EXPECT_EQ(uses(occupancy_at(x, 3 * H + H / 2)), (std::vector<NodeUse>{{1, J{{2, 1}}}, {0, {}}, {2, J{{1, 2}}}}));
  EXPECT_EQ(uses(occupancy_at(x, 10 * H)), (std::vector<NodeUse>{{0, {}}, {0, {}}, {1, J{{4, 1}}}}));
  const Occupancy o = occupancy_at(x, 3 * H + H / 2);
  EXPECT_EQ(o.used_gpus, 3);
  EXPECT_EQ(o.partial_nodes, 2);
  EXPECT_EQ(o.idle_nodes, 1);
  EXPECT_EQ(o.full_nodes, 0);
  EXPECT_EQ(occupancy_at(x, 1 * H).full_nodes, 1);
}

// Issue #36 item 6: a node out of service is not idle; a cordoned node still running jobs is
// draining (its jobs drawn, its free GPUs down); the GPUs down are /timeseries' (total - used - free).
TEST(ClusterMap, OutOfServiceNodesAreNotIdle) {
  const ClusterIndex x = build_cluster_index(with_placements());
  // At 3.5h: node 0 runs job 102 (1 of 4 GPUs), node 1 is empty, node 2 runs job 101 (2 of 4).
  const Tick t = 3 * H + H / 2;
  const Occupancy all_in = occupancy_at(x, t);
  EXPECT_EQ(all_in.idle_nodes, 1);
  EXPECT_EQ(all_in.partial_nodes, 2);
  EXPECT_EQ(all_in.down_gpus, 0);
  // Node 0 cordoned for maintenance (kind 2 = drain, +1), node 1 failed (3 = failure, +1).
  const Occupancy o = occupancy_at(
      x, t, {1 + static_cast<std::uint8_t>(OutageKind::Drain), 1 + static_cast<std::uint8_t>(OutageKind::Failure), 0});
  EXPECT_EQ(o.used_gpus, 3);
  EXPECT_EQ(o.full_nodes, 0);
  EXPECT_EQ(o.partial_nodes, 1);  // node 2 only
  EXPECT_EQ(o.idle_nodes, 0);     // node 1 is out, not idle
  EXPECT_EQ(o.draining_nodes, 1);
  EXPECT_EQ(o.out_nodes, 1);
  EXPECT_EQ(o.down_gpus, 3 + 4);  // node 0's 3 free GPUs, node 1's 4
  EXPECT_EQ(o.full_nodes + o.partial_nodes + o.idle_nodes + o.draining_nodes + o.out_nodes, x.nodes);
  // Every node out and empty: nothing idle, everything down (the drill's "0 full, 0 partly used,
  // 1024 idle · 1,024 nodes out of service").
  const Occupancy dark = occupancy_at(x, 2 * H + 3 * H / 4, {1, 1, 1});
  EXPECT_EQ(dark.idle_nodes, 0);
  EXPECT_EQ(dark.out_nodes, 3);
  EXPECT_EQ(dark.down_gpus, 12);
}

TEST(ClusterMap, OccupancyMatchesABruteForceSweep) {
  // Many overlapping slices of mixed lengths on few nodes: the indexed query equals a scan of all.
  results::RunResult r;
  r.pools = {{"p", "A100", 4, 8}};
  r.sim_end = 1000;
  std::uint64_t s = 12345;
  const auto rnd = [&s](std::uint64_t m) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<Tick>((s >> 33) % m);
  };
  for (std::uint32_t j = 0; j < 300; ++j) {
    const Tick start = rnd(900);
    const Tick len = j % 17 == 0 ? 400 + rnd(500) : 1 + rnd(30);
    r.placements.push_back({j, start, j % 23 == 0 ? -1 : start + len, static_cast<std::int32_t>(rnd(4)), 1});
  }
  const ClusterIndex x = build_cluster_index(r);
  for (Tick t = 0; t <= 1000; t += 7) {
    const Occupancy o = occupancy_at(x, t);
    for (std::int32_t n = 0; n < 4; ++n) {
      std::vector<std::uint32_t> want;
      for (const auto& p : r.placements)
        if (p.node == n && p.start <= t && (p.end < 0 ? t <= 1000 : t < p.end)) want.push_back(p.job);
      std::vector<std::uint32_t> got;
      for (std::uint32_t k = o.offset[n]; k < o.offset[n + 1]; ++k) got.push_back(o.uses[k].job);
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      ASSERT_EQ(got, want) << "t=" << t << " node=" << n;
    }
  }
}

// A run of 600 jobs of 12 tenants on two pools with events and placements out of order, several
// runs per job and duplicate placements of a run on two nodes: everything prepare() derives.
results::RunResult scrambled_run() {
  results::RunResult r;
  r.scenario_name = "scrambled";
  r.policy = "fifo";
  r.sim_start = 0;
  r.sim_end = 400 * H;
  r.pools = {{"p0", "A100", 6, 8}, {"p1", "H100", 3, 4}};
  r.total_gpus = 6 * 8 + 3 * 4;
  for (int t = 0; t < 12; ++t) r.tenants.push_back(QStringLiteral("t%1").arg((t * 7) % 12).toStdString());
  r.queues = {"q0", "q1"};
  r.reasons = {"", "quota", "capacity"};
  std::uint64_t s = 99;
  const auto rnd = [&s](std::uint64_t m) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<Tick>((s >> 33) % m);
  };
  constexpr auto kWaiting = static_cast<EventKind>(kWaitingEvent);
  for (std::uint32_t j = 0; j < 600; ++j) {
    const Tick submit = rnd(300) * H / 2 + rnd(1000);
    const bool started = j % 11 != 0;
    const Tick start = started ? submit + rnd(20) * H / 4 : -1;
    const Tick end = !started ? (j % 22 == 0 ? submit : -1) : (j % 37 == 0 ? -1 : start + 1 + rnd(30) * H / 3);
    const State st = !started  ? (j % 22 == 0 ? State::Rejected : State::Unfinished)
                     : end < 0 ? State::Unfinished
                               : (j % 5 == 0 ? State::Failed : State::Completed);
    r.jobs.push_back(job(1000 + j, static_cast<std::uint32_t>(rnd(12)), static_cast<std::int32_t>(1 + rnd(8)), submit,
                         start, end, st));
    if (j % 9 == 0) r.jobs.back().gpu_milli = static_cast<std::int32_t>(100 + rnd(800));
    r.events.push_back(event(submit, EventKind::Submit, j));
    if (started) {
      r.events.push_back(event(start, EventKind::Start, j, 1));
      r.events.push_back(event(submit + (start - submit) / 2, kWaiting, j, static_cast<std::int32_t>(rnd(9)),
                               static_cast<std::uint32_t>(rnd(3))));
      const std::int32_t node = static_cast<std::int32_t>(rnd(9));
      const Tick first_end = end < 0 ? -1 : end;
      r.placements.push_back({j, start, first_end, node, r.jobs.back().gpus});
      if (j % 4 == 0) r.placements.push_back({j, start, first_end, (node + 1) % 9, 1});  // a second node
      if (j % 6 == 0 && end > start + 2) {                                               // an earlier, preempted run
        r.placements.back().start = start + (end - start) / 2;
        r.placements.push_back({j, start, start + (end - start) / 2, node, 1});
        r.events.push_back(event(start + (end - start) / 2, EventKind::Preempt, j, 3, 1));
        ++r.jobs.back().preemptions;
      }
      if (end >= 0) r.events.push_back(event(end, EventKind::Finish, j, 2));
    }
  }
  // Out of order, as a hand-edited or merged file could be.
  for (std::size_t i = r.events.size(); i > 1; --i) std::swap(r.events[i - 1], r.events[rnd(i)]);
  for (std::size_t i = r.placements.size(); i > 1; --i) std::swap(r.placements[i - 1], r.placements[rnd(i)]);
  results::TimeSeries& ts = r.timeseries;
  ts.interval = H;
  for (int k = 0; k < 400; ++k) {
    ts.time.push_back(k * H);
    ts.running_jobs.push_back(static_cast<std::int32_t>(rnd(50)));
    ts.pending_jobs.push_back(static_cast<std::int32_t>(rnd(50)));
    ts.pool_used_gpus.push_back(static_cast<std::int32_t>(rnd(48)));
    ts.pool_used_gpus.push_back(static_cast<std::int32_t>(rnd(12)));
    ts.pool_free_gpus.push_back(48 - ts.pool_used_gpus[ts.pool_used_gpus.size() - 2]);
    ts.pool_free_gpus.push_back(12 - ts.pool_used_gpus.back());
    for (int t = 0; t < 12; ++t) {
      ts.tenant_used_gpus.push_back(static_cast<std::int32_t>(rnd(8)));
      ts.tenant_pending_jobs.push_back(static_cast<std::int32_t>(rnd(5)));
      ts.tenant_pending_gpus.push_back(static_cast<std::int32_t>(rnd(20)));
    }
    for (int c = 0; c < kPendingCodes; ++c) ts.pending_by_reason.push_back(static_cast<std::int32_t>(rnd(7)));
  }
  return r;
}

// FNV-1a over everything prepare() derives from a run (doubles by their bits).
class Digest {
 public:
  template <class T>
  void add(const T& v) requires std::is_arithmetic_v<T> {
    const auto* p = reinterpret_cast<const unsigned char*>(&v);
    for (std::size_t i = 0; i < sizeof v; ++i) h_ = (h_ ^ p[i]) * 1099511628211ULL;
  }
  void add(const QString& s) {
    for (QChar c : s) add(c.unicode());
    add(s.size());
  }
  template <class T>
  void add(const std::vector<T>& v) {
    add(v.size());
    for (const T& x : v) add(x);
  }
  template <class A, class B>
  void add(const std::pair<A, B>& p) {
    add(p.first);
    add(p.second);
  }
  void add(const ClusterIndex::Slice& s) { add(s.start), add(s.end), add(s.job), add(s.gpus); }
  void add(const Curve& c) { add(c.name), add(c.y); }
  void add(const Bucketed& b) { add(b.samples_per_bucket), add(b.t_days), add(b.curves); }
  void add(const Pyramid& p) { add(p.levels); }
  void add(const Cdf& c) { add(c.name), add(c.rank), add(c.x_hours), add(c.y); }
  void add(const TenantStats& t) {
    add(t.id), add(t.name), add(t.jobs), add(t.started), add(t.gpu_hours), add(t.mean_wait_s), add(t.p95_wait_s);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ULL;
};

std::uint64_t digest(const ReplayData& d) {
  Digest h;
  h.add(d.label), h.add(d.origin), h.add(d.tenants), h.add(d.tenant_rank), h.add(d.tenant_alpha), h.add(d.queue_alpha);
  const Kpis& k = d.kpis;
  h.add(k.jobs), h.add(std::vector<std::int64_t>(k.by_state.begin(), k.by_state.end())), h.add(k.started);
  h.add(k.preemptions), h.add(k.wait_mean_s), h.add(k.wait_median_s), h.add(k.wait_p95_s), h.add(k.jct_mean_s);
  h.add(k.utilization), h.add(k.makespan_s), h.add(d.fairness.jain);
  for (const Pyramid* p : {&d.used_by_tenant, &d.used_by_pool, &d.pending_jobs_by_tenant, &d.pending_gpus_by_tenant,
                           &d.share_by_tenant, &d.totals, &d.pending_by_reason})
    h.add(*p);
  h.add(d.wait_cdfs);
  const ClusterIndex& x = d.cluster;
  h.add(x.nodes), h.add(x.node_pool), h.add(x.node_gpus), h.add(x.pool_first_node), h.add(x.slice_offset);
  h.add(x.slices), h.add(x.longest), h.add(x.run_offset), h.add(x.runs), h.add(x.from_placements);
  h.add(d.event_offset), h.add(d.event_index);
  return h.value();
}

TEST(Prepare, OutputUnchangedOnAScrambledRun) {
  // The digest of prepare()'s output as computed before prepare was restructured for speed
  // (concurrent cluster index, counting sorts): any change to what the views show changes it.
  // Recorded again when the waits came to count jobs that never started (until the run's end), and
  // when Jain's index came to be results::Fairness::jain (issue #36), the only figure that changed.
  const auto d = prepare(scrambled_run(), "/tmp/scrambled.h5");
  EXPECT_EQ(d->result.jobs.size(), 600u);
  EXPECT_EQ(d->cluster.run_offset.size(), 601u);
  EXPECT_EQ(digest(*d), 1387417580629508000ULL);
  // The same through the Loader, from a file written and read back.
  QTemporaryDir dir;
  const QString path = dir.filePath("scrambled.h5");
  results::write_hdf5(scrambled_run(), path.toStdString());
  Loader loader;
  QSignalSpy loaded(&loader, &Loader::loaded), idle(&loader, &Loader::idle);
  loader.load(path);
  ASSERT_TRUE(idle.wait(20000));
  ASSERT_EQ(loaded.size(), 1);
  const auto from_file = loaded[0][1].value<std::shared_ptr<const ReplayData>>();
  EXPECT_EQ(digest(*from_file), digest(*d));
}

TEST(QueueAtCursor, PendingJobsAndTheReasonInForce) {
  const auto d = prepare(with_placements(), "/tmp/hand.h5");
  const auto jobs = [&](Tick t) {
    std::vector<std::tuple<std::uint32_t, Tick, int, std::uint32_t>> out;
    for (const QueueEntry& q : queue_at(*d, t)) out.emplace_back(q.job, q.since, q.code, q.reason);
    return out;
  };
  using Rows = std::vector<std::tuple<std::uint32_t, Tick, int, std::uint32_t>>;
  EXPECT_EQ(jobs(H / 2), (Rows{{2, 0, 1, 2}}));
  EXPECT_EQ(jobs(H + H / 2), (Rows{{2, 0, 3, 3}, {1, 1 * H, 1, 2}}));
  // 101 was preempted at 2h30: it waits again since then, and its earlier reason no longer holds.
  EXPECT_EQ(jobs(2 * H + 3 * H / 4), (Rows{{2, 0, 3, 3}, {1, 2 * H + H / 2, 2, 1}}));
  EXPECT_EQ(jobs(3 * H), Rows{});
  EXPECT_EQ(jobs(5 * H), (Rows{{4, 4 * H, 0, 0}}));
  // Rejected job 103 never waits.
  for (Tick t = 0; t <= 10 * H; t += H / 4)
    for (const QueueEntry& q : queue_at(*d, t)) EXPECT_NE(q.job, 3u);
}

TEST(QueueAtCursor, WithoutPlacementsRunsComeFromJobs) {
  const auto d = prepared();
  EXPECT_FALSE(d->cluster.from_placements);
  // 101 runs from its first start to its end as far as /jobs tells.
  std::vector<std::uint32_t> pending;
  for (const QueueEntry& q : queue_at(*d, 2 * H + 3 * H / 4)) pending.push_back(q.job);
  EXPECT_EQ(pending, (std::vector<std::uint32_t>{2}));
}

// The GUI repeats the simulator's audit codes (it links results/ only); they must agree.
static_assert(kWaitingEvent == static_cast<std::uint8_t>(models::AuditKind::Waiting));
static_assert(kPendingCodes == models::kPendingCodes);

TEST(JobEventsModel, WaitingEventsSayWhy) {
  JobEventsModel m;
  test_model(&m);
  const auto d = prepare(with_placements(), "/tmp/hand.h5");
  EXPECT_EQ(event_name(kWaitingEvent), "waiting");
  m.set_job(d, 2);
  ASSERT_EQ(m.rowCount(), 2);  // its two reasons; it never ran
  EXPECT_EQ(cell(m, 0, JobEventsModel::Event), "waiting");
  EXPECT_EQ(cell(m, 0, JobEventsModel::Detail), "capacity");
  EXPECT_EQ(cell(m, 0, JobEventsModel::Reason), "capacity: no free GPUs");
  EXPECT_EQ(cell(m, 1, JobEventsModel::Event), "waiting");
  EXPECT_EQ(cell(m, 1, JobEventsModel::Detail), "priority");
  EXPECT_EQ(cell(m, 1, JobEventsModel::Reason), "priority: older jobs first");
}

TEST(QueueModel, CellsAtTheCursor) {
  QueueModel m;
  test_model(&m);
  m.set_data(prepare(with_placements(), "/tmp/hand.h5"));
  EXPECT_EQ(m.rowCount(), 0);
  m.set_time(H + H / 2);
  ASSERT_EQ(m.rowCount(), 2);
  EXPECT_EQ(cell(m, 0, QueueModel::Job), "102");
  EXPECT_EQ(cell(m, 0, QueueModel::Tenant), "a");
  EXPECT_EQ(cell(m, 0, QueueModel::Gpus), "1");
  EXPECT_EQ(cell(m, 0, QueueModel::Waiting), "1h 30m");
  EXPECT_EQ(cell(m, 0, QueueModel::Why), "priority");
  EXPECT_EQ(cell(m, 0, QueueModel::Reason), "priority: older jobs first");
  EXPECT_EQ(cell(m, 1, QueueModel::Job), "101");
  EXPECT_EQ(cell(m, 1, QueueModel::Waiting), "30m 00s");
  EXPECT_EQ(cell(m, 1, QueueModel::Why), "capacity");
  EXPECT_EQ(m.data(m.index(1, QueueModel::Waiting), Qt::UserRole).toLongLong(), H / 2);
  EXPECT_EQ(m.job_at(1), 1);
  EXPECT_EQ(m.job_at(2), -1);
  m.set_time(3 * H);
  EXPECT_EQ(m.rowCount(), 0);
  m.set_time(5 * H);
  ASSERT_EQ(m.rowCount(), 1);
  EXPECT_EQ(cell(m, 0, QueueModel::Why), "none given");
  EXPECT_EQ(cell(m, 0, QueueModel::Gpus), "0.500");
}

TEST(Prepare, PendingByReasonCurves) {
  results::RunResult r = with_placements();
  EXPECT_TRUE(prepare(r, "x.h5")->pending_by_reason.empty());
  r.timeseries.pending_by_reason.assign(5 * kPendingCodes, 0);
  r.timeseries.pending_by_reason[1 * kPendingCodes + 3] = 2;  // sample 1: two waiting on priority
  const auto d = prepare(r, "x.h5");
  ASSERT_FALSE(d->pending_by_reason.empty());
  ASSERT_EQ(d->pending_by_reason.full().curves.size(), std::size_t{kPendingCodes});
  EXPECT_EQ(d->pending_by_reason.full().curves[3].name, "priority");
  EXPECT_EQ(d->pending_by_reason.full().curves[3].y, (std::vector<double>{0, 2, 0, 0, 0}));
}

constexpr const char* kScenario = R"(# a comment
name: small
seed: 3
cluster:
  pools:
    - name: a100
      nodes: 16
      gpus_per_node: 8
    - name: h100
      nodes: 4
      gpus_per_node: 8
policy:
  name: fifo
  placement: consolidate
workload:
  trace: data/trace.csv
  format: csv
)";

TEST(WhatIf, ReadsTheKnobs) {
  const WhatIfKnobs k = read_knobs(kScenario);
  EXPECT_EQ(k.name, "small");
  ASSERT_EQ(k.pool_nodes.size(), 2u);
  EXPECT_EQ(k.pool_nodes[0], (std::pair<std::string, int>{"a100", 16}));
  EXPECT_EQ(k.pool_nodes[1], (std::pair<std::string, int>{"h100", 4}));
  EXPECT_EQ(k.policy, "fifo");
  EXPECT_EQ(k.arrival_scale, 1.0);
  EXPECT_THROW(read_knobs("name: x\n"), std::runtime_error);
  EXPECT_THROW(read_knobs("cluster: [\n"), std::runtime_error);
}

TEST(WhatIf, EditRoundTrip) {
  // Unchanged knobs: the same knobs back, parameters and everything else kept.
  const std::string same = apply_knobs(kScenario, read_knobs(kScenario), "/base");
  const WhatIfKnobs k0 = read_knobs(same);
  EXPECT_EQ(k0.pool_nodes, read_knobs(kScenario).pool_nodes);
  EXPECT_EQ(k0.policy, "fifo");
  EXPECT_NE(same.find("placement: consolidate"), std::string::npos);
  EXPECT_NE(same.find("trace: /base/data/trace.csv"), std::string::npos);
  EXPECT_NE(same.find("gpus_per_node: 8"), std::string::npos);
  EXPECT_NE(same.find("seed: 3"), std::string::npos);

  WhatIfKnobs k = read_knobs(kScenario);
  k.name = "small-whatif";
  k.pool_nodes[0].second = 24;
  k.pool_nodes[1].second = 0;
  k.policy = "sjf";
  k.arrival_scale = 1.5;
  const std::string edited = apply_knobs(kScenario, k, "/base");
  const WhatIfKnobs back = read_knobs(edited);
  EXPECT_EQ(back.name, "small-whatif");
  EXPECT_EQ(back.pool_nodes, (std::vector<std::pair<std::string, int>>{{"a100", 24}, {"h100", 0}}));
  EXPECT_EQ(back.policy, "sjf");
  EXPECT_EQ(back.arrival_scale, 1.5);
  // A new policy keeps only its name; the old one's parameters are dropped.
  EXPECT_EQ(edited.find("placement"), std::string::npos);
  EXPECT_NE(edited.find("format: csv"), std::string::npos);
  // Absolute traces stay as they are.
  const std::string abs = apply_knobs(
      "cluster: {pools: [{name: p, nodes: 1}]}\npolicy: fifo\n"
      "workload: {trace: /data/t.swf}\n",
      read_knobs("cluster: {pools: [{name: p, nodes: 1}]}\npolicy: fifo\n"), "/base");
  EXPECT_NE(abs.find("/data/t.swf"), std::string::npos);
  EXPECT_EQ(abs.find("/base"), std::string::npos);
}

TEST(WhatIf, EditedScenarioRunsWithHeadroom) {
  // The build tree's headroom (build/apps/headroom next to build/gui/); skipped where not built.
  const QString headroom = find_headroom(QCoreApplication::applicationDirPath());
  if (headroom.isEmpty()) GTEST_SKIP() << "no headroom binary next to the test";
  const QString source = QStringLiteral(HEADROOM_SOURCE_DIR "/scenarios/examples/ricc-14d-fifo.yaml");
  QFile f(source);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const std::string text = f.readAll().toStdString();
  WhatIfKnobs k = read_knobs(text);
  k.name = "ricc-whatif";
  k.pool_nodes[0].second = 512;
  k.policy = "sjf";
  k.arrival_scale = 0.5;
  QTemporaryDir dir;
  const QString yaml = dir.filePath("edited.yaml"), out = dir.filePath("edited.h5");
  QFile e(yaml);
  ASSERT_TRUE(e.open(QIODevice::WriteOnly));
  e.write(QByteArray::fromStdString(apply_knobs(text, k, HEADROOM_SOURCE_DIR "/scenarios/examples")));
  e.close();
  QProcess run;
  run.setProcessChannelMode(QProcess::MergedChannels);
  run.start(headroom, {"run", yaml, "-o", out});
  ASSERT_TRUE(run.waitForFinished(120000));
  ASSERT_EQ(run.exitCode(), 0) << run.readAll().toStdString();
  const results::RunResult r = results::read_hdf5(out.toStdString());
  EXPECT_EQ(r.scenario_name, "ricc-whatif");
  EXPECT_EQ(r.policy, "sjf");
  ASSERT_EQ(r.pools.size(), 1u);
  EXPECT_EQ(r.pools[0].nodes, 512);
  EXPECT_EQ(r.total_gpus, 512 * 8);
}

}  // namespace
}  // namespace headroom::gui

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  qRegisterMetaType<std::shared_ptr<const headroom::gui::ReplayData>>();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// A split site's cluster map colours each node by its owner (docs/split.md): the home partition,
// then the system a move handed it to from the instant it changed owner.
TEST(ClusterMap, NodeOwnerFollowsTheSplitsMoves) {
  using headroom::gui::node_owner_at;
  namespace results = headroom::results;
  results::RunResult r;
  EXPECT_TRUE(node_owner_at(r, 3, 0).empty());  // no split: no owners
  r.partitions.resize(2);
  r.partitions[0].first_node = 0;
  r.partitions[0].nodes = 2;
  r.partitions[1].first_node = 2;
  r.partitions[1].nodes = 1;
  results::MoveRecord m;
  m.node = 2;
  m.from = 1;
  m.to = 0;
  m.requested = 50'000;
  m.changed = 100'000;
  m.ready = 110'000;
  r.moves.push_back(m);
  m.from = 0;
  m.to = 1;
  m.requested = m.changed = 200'000;
  m.ready = 210'000;
  r.moves.push_back(m);
  EXPECT_EQ(node_owner_at(r, 3, 99'999), (std::vector<std::int32_t>{0, 0, 1}));   // draining: still B's
  EXPECT_EQ(node_owner_at(r, 3, 100'000), (std::vector<std::int32_t>{0, 0, 0}));  // changed owner
  EXPECT_EQ(node_owner_at(r, 3, 200'000), (std::vector<std::int32_t>{0, 0, 1}));  // back home
}

namespace headroom::gui {

namespace {

// hand_built() as a split site: nodes 0-1 slurm's (8 GPUs), node 2 kueue's (4 GPUs), which kueue
// gives to slurm: asked at 2h, owner change at 3h, joins at 5h.
void split_with_a_move(results::RunResult& r) {
  r.partitions.resize(2);
  r.partitions[0].name = "slurm";
  r.partitions[0].nodes = 2;
  r.partitions[0].gpus = 8;
  r.partitions[1].name = "kueue";
  r.partitions[1].first_node = 2;
  r.partitions[1].nodes = 1;
  r.partitions[1].gpus = 4;
  results::MoveRecord m;
  m.node = 2;
  m.from = 1;
  m.to = 0;
  m.gpus = 4;
  m.requested = 2 * H;
  m.changed = 3 * H;
  m.ready = 5 * H;
  r.moves.push_back(m);
}

}  // namespace

// The Timeline's chart of a split site whose nodes move: the GPUs each system owns at each sample,
// then those in transit (between the owner change and joining, the move delay); absent without moves.
TEST(Timeline, GpusOwnedBySystemFollowTheMoves) {
  results::RunResult r = hand_built();
  EXPECT_TRUE(prepare(r, "/tmp/split-none.h5")->owned_by_partition.empty());
  split_with_a_move(r);
  const auto d = prepare(r, "/tmp/split-moves.h5");
  const auto& curves = d->owned_by_partition.full().curves;
  ASSERT_EQ(curves.size(), 3u);
  EXPECT_EQ(curves[0].name, "slurm");
  EXPECT_EQ(curves[2].name, "in transit");
  // Samples at 0, 2h, 4h, 6h, 8h: the node leaves kueue at 3h and joins slurm at 5h.
  EXPECT_EQ(curves[0].y, (std::vector<double>{8, 8, 8, 12, 12}));
  EXPECT_EQ(curves[1].y, (std::vector<double>{4, 4, 0, 0, 0}));
  EXPECT_EQ(curves[2].y, (std::vector<double>{0, 0, 4, 0, 0}));
}

}  // namespace headroom::gui

namespace headroom::gui {

// The Timeline's per-system charts of a run with partitions (docs/split.md, "In the app"), worked
// by hand on hand_built() (samples at 0, 2h, 4h, 6h, 8h; a state shows at every sample at or after
// it began and before it ended). Jobs 0 and 1 run under "slurm" (nodes 0-1), jobs 2-4 under
// "kueue" (node 2), which hands its node to slurm at 3h (joining at 5h).
TEST(Timeline, UseAndQueueBySystemOverTime) {
  results::RunResult r = hand_built();
  const auto none = prepare(r, "/tmp/split-none.h5");  // no partitions: nothing computed
  EXPECT_TRUE(none->used_by_partition.empty());
  EXPECT_TRUE(none->pending_jobs_by_partition.empty());
  EXPECT_TRUE(none->pending_gpus_by_partition.empty());
  split_with_a_move(r);
  r.job_partition = {0, 0, 1, 1, 1};
  // What the jobs held: job 0 4 GPUs [0, 2h); job 1 2 GPUs [2h, 2.5h) then, after its
  // preemption and requeue, [3h, 4h); job 2 1 GPU [3h, 5h); job 4 half a GPU [6h, 10h).
  r.placements = {{0, 0, 2 * H, 0, 4, 0, 0},
                  {1, 2 * H, 2 * H + H / 2, 1, 2, 0, 0},
                  {1, 3 * H, 4 * H, 1, 2, 0, 0},
                  {2, 3 * H, 5 * H, 2, 1, 0, 0},
                  {4, 6 * H, -1, 2, 0, 500, 0}};
  // The other jobs' lives (job 1's is hand_built's own, out of order as there): job 3 is
  // rejected at once; job 4 waits 4h to 6h.
  r.events.push_back(event(0, EventKind::Submit, 0, 4));
  r.events.push_back(event(0, EventKind::Start, 0, 4));
  r.events.push_back(event(2 * H, EventKind::Finish, 0, 2));
  r.events.push_back(event(0, EventKind::Submit, 2, 1));
  r.events.push_back(event(3 * H, EventKind::Start, 2, 1));
  r.events.push_back(event(5 * H, EventKind::Finish, 2, 4));
  r.events.insert(r.events.begin(), event(2 * H, EventKind::Submit, 3, 8));  // before its Reject, as in a file
  r.events.push_back(event(4 * H, EventKind::Submit, 4, 1));
  r.events.push_back(event(6 * H, EventKind::Start, 4, 1));
  const auto d = prepare(r, "/tmp/split.h5");
  const auto& used = d->used_by_partition.full().curves;
  ASSERT_EQ(used.size(), 4u);
  EXPECT_EQ(used[0].name, "slurm in use");
  EXPECT_EQ(used[1].name, "slurm owns");
  EXPECT_EQ(used[2].name, "kueue in use");
  EXPECT_EQ(used[3].name, "kueue owns");
  // At 2h job 1 has just started (job 0 just ended); at 4h job 1 just ended; at 2h and 4h kueue's
  // job 2 runs from 3h to 5h; job 4's half GPU counts as one from 6h on.
  EXPECT_EQ(used[0].y, (std::vector<double>{4, 2, 0, 0, 0}));
  EXPECT_EQ(used[1].y, (std::vector<double>{8, 8, 8, 12, 12}));  // kueue's node joins at 5h
  EXPECT_EQ(used[2].y, (std::vector<double>{0, 0, 1, 1, 1}));
  EXPECT_EQ(used[3].y, (std::vector<double>{4, 4, 0, 0, 0}));  // gone at its owner change, 3h
  const auto& jobs = d->pending_jobs_by_partition.full().curves;
  const auto& gpus = d->pending_gpus_by_partition.full().curves;
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(jobs[0].name, "slurm");
  EXPECT_EQ(gpus[1].name, "kueue");
  // slurm: job 1 waits [1h, 2h) and, requeued, [2.5h, 3h): no sample inside either.
  EXPECT_EQ(jobs[0].y, (std::vector<double>{0, 0, 0, 0, 0}));
  // kueue: job 2 waits [0, 3h) (1 GPU), job 3 is rejected as it arrives, job 4 waits [4h, 6h)
  // asking for half a GPU (one GPU when rounded up).
  EXPECT_EQ(jobs[1].y, (std::vector<double>{1, 1, 1, 0, 0}));
  EXPECT_EQ(gpus[1].y, (std::vector<double>{1, 1, 1, 0, 0}));
  EXPECT_EQ(gpus[0].y, (std::vector<double>{0, 0, 0, 0, 0}));
  // A job still waiting at the end counts to the last sample; a requeued one again from its requeue.
  r.events.push_back(event(5 * H, EventKind::Submit, 3, 8));  // as if job 3 arrived again at 5h
  r.job_partition[3] = 0;
  const auto again = prepare(r, "/tmp/split.h5");
  EXPECT_EQ(again->pending_jobs_by_partition.full().curves[0].y, (std::vector<double>{0, 0, 0, 1, 1}));
  EXPECT_EQ(again->pending_gpus_by_partition.full().curves[0].y, (std::vector<double>{0, 0, 0, 8, 8}));
}

// On the bundled split scenarios (and a dispatcher's clusters, MultiKueue), the per-system curves
// add up, at every sample, to what the simulator itself counted for the whole site: pending jobs
// (/timeseries/pending_jobs), pending GPUs and GPUs in use (the per-tenant matrices, where jobs ask
// for whole GPUs); what each system owns adds up to the site's GPUs less those in transit.
TEST(Timeline, SystemsAddUpToTheSitesOwnCounts) {
  const QString headroom = find_headroom(QCoreApplication::applicationDirPath());
  if (headroom.isEmpty()) GTEST_SKIP() << "no headroom binary next to the test";
  for (const char* name : {"ricc-14d-split", "ricc-14d-split-moves", "ricc-14d-multikueue"}) {
    SCOPED_TRACE(name);
    const bool multikueue = std::string(name) == "ricc-14d-multikueue";
    QTemporaryDir dir;
    const QString out = dir.filePath("split.h5");
    QProcess run;
    run.setProcessChannelMode(QProcess::MergedChannels);
    run.start(headroom,
              {"run", QStringLiteral(HEADROOM_SOURCE_DIR "/scenarios/examples/%1.yaml").arg(name), "-o", out});
    ASSERT_TRUE(run.waitForFinished(120000));
    ASSERT_EQ(run.exitCode(), 0) << run.readAll().toStdString();
    const auto d = prepare(results::read_hdf5(out.toStdString()), out);
    const results::RunResult& r = d->result;
    const results::TimeSeries& ts = r.timeseries;
    const std::size_t parts = r.partitions.size(), samples = ts.time.size(), tenants = r.tenants.size();
    ASSERT_EQ(parts, 2u);
    ASSERT_GT(samples, 100u);
    ASSERT_EQ(ts.tenant_used_gpus.size(), samples * tenants);
    const auto& used = d->used_by_partition.full().curves;
    const auto& jobs = d->pending_jobs_by_partition.full().curves;
    const auto& gpus = d->pending_gpus_by_partition.full().curves;
    ASSERT_EQ(used.size(), 2 * parts);
    double peak_pending[2] = {0, 0};
    for (std::size_t s = 0; s < samples; ++s) {
      double in_use = 0, owned = 0, waiting = 0, asked = 0, site_used = 0, site_asked = 0;
      for (std::size_t k = 0; k < parts; ++k) {
        in_use += used[2 * k].y[s];
        owned += used[2 * k + 1].y[s];
        waiting += jobs[k].y[s];
        asked += gpus[k].y[s];
        peak_pending[k] = std::max(peak_pending[k], jobs[k].y[s]);
        EXPECT_LE(used[2 * k].y[s], used[2 * k + 1].y[s] + 1e-9) << "sample " << s;  // in use within owned
      }
      for (std::size_t t = 0; t < tenants; ++t) {
        site_used += ts.tenant_used_gpus[s * tenants + t];
        site_asked += ts.tenant_pending_gpus[s * tenants + t];
      }
      ASSERT_EQ(waiting, ts.pending_jobs[s]) << "sample " << s;
      ASSERT_EQ(asked, site_asked) << "sample " << s;
      // Under MultiKueue the GPUs in use from /placements (which agree with /jobs' start and end)
      // fall short of the simulator's counters at some samples (by 24 to 168 GPUs on this run):
      // GPUs held with no placement row yet, as pods bound ahead of their job's start are; so only
      // the routed splits are held to it.
      if (!multikueue) {
        ASSERT_EQ(in_use, site_used) << "sample " << s;
      }
      const double transit = d->owned_by_partition.empty() ? 0 : d->owned_by_partition.full().curves[parts].y[s];
      ASSERT_EQ(owned + transit, static_cast<double>(r.total_gpus)) << "sample " << s;
    }
    EXPECT_GT(peak_pending[0] + peak_pending[1], 0);  // a queue to show
  }
}

}  // namespace headroom::gui
