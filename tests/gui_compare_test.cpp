// The desktop app's Compare tab against `headroom compare` (issue #21): every row compare prints,
// with the same value, for runs written by compare --keep-runs and read back; grouped so that the
// tenants do not drown the headline KPIs; a difference coloured by whether it is better.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QColor>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "gui/cluster.hpp"
#include "gui/jobs_model.hpp"
#include "gui/replay_data.hpp"
#include "gui/tables.hpp"
#include "planner/compare.hpp"
#include "results/format.hpp"
#include "results/hdf5_io.hpp"

using namespace headroom;
using namespace headroom::gui;

namespace {

// Three tenants (listed: borrowing has entitlements), two job kinds, an inference service, a
// price, a node outage: every group of compare's rows.
void write_inputs(const std::filesystem::path& dir) {
  std::ofstream t(dir / "trace.csv");
  t << "id,tenant,queue,submit,gpus,runtime,kind\n";
  for (int i = 0; i < 120; ++i)
    t << i << ",t" << i % 3 << ",q," << i * 40 << "," << 1 + i % 8 << "," << 300 + (i * 37) % 900 << ","
      << (i % 4 == 0 ? "interactive" : "train") << "\n";
  std::ofstream s(dir / "parity.yaml");
  s << "name: gui-parity\nseed: 4\ncluster:\n  pools:\n    - {name: a, nodes: 3, gpus_per_node: 8, gpu_type: A100}\n"
       "costs:\n  currency: EUR\n  gpu_hour: {A100: 2.5}\n"
       "tenants:\n  - {name: t0, weight: 2}\n  - {name: t1}\n  - {name: t2}\n"
       "policy: fifo\nworkload:\n  trace: trace.csv\n"
       "services:\n  - name: chat\n    tenant: t1\n    queue: q\n    gpus_per_replica: 1\n    throughput: 25\n"
       "    replicas: {min: 1, max: 3}\n    autoscaler: {target_utilization: 0.7, interval: 15s, scale_down_window: "
       "5m}\n"
       "    load: {mean_rate: 30, diurnal_amplitude: 0.5, peak: 1h}\n    end: 2h\n"
       "failures:\n  events:\n    - {at: 30m, nodes: [a-0], duration: 20m}\n"
       "output:\n  sample_interval: 60\n";
}

struct Runs {
  planner::CompareResult compare;
  std::vector<std::shared_ptr<const ReplayData>> data;
};

Runs compare_and_read_back(const QTemporaryDir& dir, const std::vector<std::string>& policies) {
  const std::filesystem::path root = dir.path().toStdString();
  write_inputs(root);
  const auto sc = scenarios::load_scenario((root / "parity.yaml").string());
  Runs out;
  out.compare = planner::compare_all({sc}, policies, nullptr, nullptr, root.string()).front();
  for (const auto& p : policies) {
    const std::string path = planner::kept_run_path(root.string(), sc.name, p);
    out.data.push_back(prepare(results::read_hdf5(path), QString::fromStdString(path)));
  }
  return out;
}

}  // namespace

TEST(CompareTab, EveryRowOfCompareWithTheSameValue) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const Runs runs = compare_and_read_back(dir, {"fifo", "sjf"});
  for (const auto& r : runs.compare.runs) ASSERT_TRUE(r.done) << r.error;
  const results::Table table = planner::compare_table(runs.compare);
  KpiCompareModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.set_runs(runs.data);
  ASSERT_EQ(m.columnCount(), 4);  // KPI, fifo, sjf, their difference

  const auto& names = table.columns[0].strings;
  int groups[4] = {0, 0, 0, 0};  // tenant:, kind:, service:, run-wide
  for (std::size_t row = 0; row < names.size(); ++row) {
    const QString metric = QString::fromStdString(names[row]);
    const QModelIndex at = m.find(metric);
    ASSERT_TRUE(at.isValid()) << names[row] << " is missing from the Compare tab";
    ++groups[metric.startsWith("tenant:") ? 0 : metric.startsWith("kind:") ? 1 : metric.startsWith("service:") ? 2 : 3];
    for (int run = 0; run < 2; ++run) {
      const double cli = table.columns[static_cast<std::size_t>(run) + 2].numbers[row];
      const double gui = m.data(m.index(at.row(), run + 1, at.parent()), kRawRole).toDouble();
      if (std::isnan(cli))
        EXPECT_TRUE(std::isnan(gui)) << names[row];
      else
        EXPECT_DOUBLE_EQ(gui, cli) << names[row] << " run " << run;
    }
  }
  // Every group compare prints is here: 3 tenants x 11, 3 kinds (train, interactive, and the
  // service's replicas: inference) x 6, 1 service x 3 (+ its slo_attainment run-wide), the cost rows.
  EXPECT_EQ(groups[0], 33);
  EXPECT_EQ(groups[1], 18);
  EXPECT_EQ(groups[2], 3);
  for (const char* must : {"cost", "worst_drill_recovery", "borrowed_gpu_hours", "slo_attainment", "jobs_killed"})
    EXPECT_NE(std::find(names.begin(), names.end(), must), names.end()) << must;
  // And the tab has nothing compare lacks, but the run-wide KPIs compare leaves out when no run has
  // them (they show "-").
  for (const QString& metric : m.metrics()) {
    if (std::find(names.begin(), names.end(), metric.toStdString()) != names.end()) continue;
    const QModelIndex at = m.find(metric, 1);
    EXPECT_FALSE(at.parent().isValid()) << metric.toStdString();
    EXPECT_EQ(m.data(at).toString(), "-") << metric.toStdString();
  }

  // The top level: the run-wide KPIs, then three folded groups.
  ASSERT_EQ(m.rowCount(), KpiCompareModel::KpiCount + 3);
  EXPECT_EQ(m.data(m.index(KpiCompareModel::KpiCount, 0)).toString(), "Inference services (1)");
  EXPECT_EQ(m.data(m.index(KpiCompareModel::KpiCount + 1, 0)).toString(), "Tenants (3)");
  EXPECT_EQ(m.data(m.index(KpiCompareModel::KpiCount + 2, 0)).toString(), "Job kinds (3)");
  const QModelIndex tenants = m.index(KpiCompareModel::KpiCount + 1, 0);
  ASSERT_EQ(m.rowCount(tenants), 3);
  // Tenants by GPU-hours, largest first.
  const auto hours = [&](const QModelIndex& tenant) {
    return m.data(m.index(4, 1, tenant), kRawRole).toDouble();  // row 4: GPU-hours held
  };
  EXPECT_EQ(m.metric(m.index(4, 0, m.index(0, 0, tenants))).section('.', 1), "gpu_hours");
  EXPECT_GE(hours(m.index(0, 0, tenants)), hours(m.index(1, 0, tenants)));
  EXPECT_GE(hours(m.index(1, 0, tenants)), hours(m.index(2, 0, tenants)));
  EXPECT_EQ(m.data(m.index(0, 1, tenants)).toString(), "");  // a group row has no values
  // A tenant's metric reads with its unit, and CSV names its path.
  const QModelIndex wait = m.find("tenant:t0.wait_mean", 1);
  EXPECT_EQ(m.data(wait).toString(), QString::fromStdString(results::duration(m.data(wait, kRawRole).toDouble())));
  EXPECT_TRUE(to_csv(m).contains("Tenants (3) / t0 / Mean wait,"));
  EXPECT_EQ(m.data(m.find("tenant:t0.gpu_hours", 1)).toString().right(6), " GPU-h");
  EXPECT_EQ(m.data(m.find("cost", 1)).toString().right(4), " EUR");
}

// A difference is coloured by whether it is better for that KPI, also inside the groups; neutral
// KPIs (GPU-hours held, share) stay uncoloured.
TEST(CompareTab, ColoursByBetterInsideTheGroups) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const Runs runs = compare_and_read_back(dir, {"fifo", "sjf"});
  KpiCompareModel m;
  m.set_runs(runs.data);
  int coloured = 0, checked = 0;
  for (const QString& metric : m.metrics()) {
    const QModelIndex delta = m.find(metric, 3);
    const double d = m.data(delta, kRawRole).toDouble();
    const QVariant colour = m.data(delta, Qt::ForegroundRole);
    const bool neutral = metric.endsWith(".gpu_hours") || metric.endsWith(".share") || metric == "jobs" ||
                         metric.endsWith(".jobs") || metric.endsWith("replicas_running_mean");
    const bool reads_as_none = !m.data(delta).toString().contains(QRegularExpression("[1-9]"));  // "0.000"
    if (neutral || !std::isfinite(d) || d == 0 || reads_as_none) {
      EXPECT_FALSE(colour.isValid()) << metric.toStdString();
      continue;
    }
    ++checked;
    const bool lower_better = metric.contains("wait") || metric.contains("jct") || metric.endsWith(".rho") ||
                              metric.endsWith("never_started") || metric.endsWith("rejected") ||
                              metric.endsWith("reclaimed");
    if (!metric.contains(':') || !lower_better) continue;  // the run-wide ones: KpiCompareModel tests
    ++coloured;
    EXPECT_EQ(colour.value<QColor>(), d < 0 ? QColor(0x2e7d32) : QColor(0xc62828)) << metric.toStdString();
  }
  EXPECT_GT(checked, 0);
  EXPECT_GT(coloured, 10);  // fifo and sjf differ in the tenants' waits
}

// Without `tenants:` compare reports no borrowing (no entitlement was set): neither does the tab.
TEST(CompareTab, NoBorrowingRowsWithoutTenantEntitlements) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const std::filesystem::path root = dir.path().toStdString();
  write_inputs(root);
  std::ofstream(root / "plain.yaml")
      << "name: plain\ncluster:\n  pools:\n    - {name: a, nodes: 3, gpus_per_node: 8, gpu_type: A100}\n"
         "policy: fifo\nworkload:\n  trace: trace.csv\n";
  const auto sc = scenarios::load_scenario((root / "plain.yaml").string());
  planner::compare_all({sc}, {"fifo"}, nullptr, nullptr, root.string());
  const std::string path = planner::kept_run_path(root.string(), "plain", "fifo");
  KpiCompareModel m;
  m.set_runs({prepare(results::read_hdf5(path), QString::fromStdString(path))});
  EXPECT_FALSE(m.find("tenant:t0.borrowed_gpu_hours").isValid());
  EXPECT_TRUE(m.find("tenant:t0.share").isValid());
  EXPECT_EQ(m.data(m.find("borrowed_gpu_hours", 1)).toString(), "-");
  EXPECT_TRUE(m.data(m.find("borrowed_gpu_hours", 0), Qt::ToolTipRole).toString().contains("sets no tenants"));
}

// Issue #35: a split site's runs show compare's boundary_idle_gpu_hours and partition:NAME.* rows,
// with the same values, in a group of their own (one row group per system, in the split's
// order); the shared pool's column reads "-" there, as compare's empty cells.
TEST(CompareTab, SplitRunsShowEachPartitionAsCompareDoes) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const std::filesystem::path root = dir.path().toStdString();
  write_inputs(root);
  std::ofstream(root / "split.yaml")
      << "name: gui-split\ncluster:\n  pools:\n    - {name: a, nodes: 3, gpus_per_node: 8, gpu_type: A100}\n"
         "split:\n  systems:\n    S: {policy: fifo, pools: [{pool: a, nodes: 2}]}\n"
         "    T: {policy: sjf, pools: [{pool: a, nodes: 1}]}\n"
         "  routes: [{kind: interactive, to: T}]\n  default: S\n"
         "workload:\n  trace: trace.csv\n";
  const auto sc = scenarios::load_scenario((root / "split.yaml").string());
  const std::vector<std::string> policies = {"fifo", "split"};
  const auto result = planner::compare_all({sc}, policies, nullptr, nullptr, root.string()).front();
  for (const auto& r : result.runs) ASSERT_TRUE(r.done) << r.error;
  std::vector<std::shared_ptr<const ReplayData>> data;
  for (const auto& p : policies) {
    const std::string path = planner::kept_run_path(root.string(), sc.name, p);
    data.push_back(prepare(results::read_hdf5(path), QString::fromStdString(path)));
  }
  KpiCompareModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.set_runs(data);
  const results::Table table = planner::compare_table(result);
  const auto& names = table.columns[0].strings;
  int split_rows = 0;
  for (std::size_t row = 0; row < names.size(); ++row) {
    const QString metric = QString::fromStdString(names[row]);
    if (!metric.startsWith("partition:") && metric != "boundary_idle_gpu_hours") continue;
    ++split_rows;
    const QModelIndex at = m.find(metric);
    ASSERT_TRUE(at.isValid()) << names[row] << " is missing from the Compare tab";
    EXPECT_TRUE(at.parent().isValid()) << names[row] << " is in the partitions' group";
    EXPECT_TRUE(std::isnan(m.data(m.index(at.row(), 1, at.parent()), kRawRole).toDouble())) << names[row];
    EXPECT_EQ(m.data(m.index(at.row(), 1, at.parent())).toString(), "-") << names[row];
    const double cli = table.columns[3].numbers[row];
    ASSERT_TRUE(std::isfinite(cli)) << names[row];
    EXPECT_DOUBLE_EQ(m.data(m.index(at.row(), 2, at.parent()), kRawRole).toDouble(), cli) << names[row];
  }
  EXPECT_EQ(split_rows, 5);  // the boundary's cost, and utilization and mean wait of S and T
  // The partitions' group follows the run-wide KPIs: the cost of the boundary, then S, then T.
  const QModelIndex group = m.index(KpiCompareModel::KpiCount, 0);
  EXPECT_EQ(m.data(group).toString(), "Partitions of the split site (2)");
  ASSERT_EQ(m.rowCount(group), 3);
  EXPECT_EQ(m.metric(m.index(0, 0, group)), "boundary_idle_gpu_hours");
  EXPECT_EQ(m.data(m.index(1, 0, group)).toString(), "S");
  EXPECT_EQ(m.data(m.index(2, 0, group)).toString(), "T");
  EXPECT_EQ(m.metric(m.index(0, 0, m.index(2, 0, group))), "partition:T.gpu_utilization");
  EXPECT_EQ(m.metric(m.index(1, 0, m.index(2, 0, group))), "partition:T.wait_mean");
  const QModelIndex util = m.find("partition:S.gpu_utilization", 2);
  EXPECT_EQ(m.data(util).toString(),
            QString::fromStdString(results::with_unit(m.data(util, kRawRole).toDouble(), "fraction")));
  EXPECT_TRUE(to_csv(m).contains("Partitions of the split site (2) / T / Mean wait,"));
  // Runs without a split have no such group.
  KpiCompareModel plain;
  plain.set_runs({data.front()});
  EXPECT_FALSE(plain.find("partition:S.gpu_utilization").isValid());
  EXPECT_FALSE(plain.find("boundary_idle_gpu_hours").isValid());
}

// Issue #36 item 6: the Replay tab's counts at every sample of the KAI failure drill (scripted
// outages, maintenance drains with jobs still running, random failures): every node counted once,
// and the GPUs in use and down equal to /timeseries' (down = total - used - free).
TEST(ReplayCounts, GpusDownAndInUseMatchTheTimeSeriesOfTheFailureDrill) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml");
  planner::compare_all({sc}, {"kai"}, nullptr, nullptr, dir.path().toStdString());
  const std::string path = planner::kept_run_path(dir.path().toStdString(), sc.name, "kai");
  const auto d = prepare(results::read_hdf5(path), QString::fromStdString(path));
  const results::TimeSeries& ts = d->result.timeseries;
  const std::size_t P = d->result.pools.size(), S = ts.time.size();
  ASSERT_GT(S, 1000u);
  ASSERT_EQ(ts.pool_down_gpus.size(), S * P);
  std::int64_t draining = 0, out = 0, mismatched = 0;
  for (std::size_t i = 0; i < S; ++i) {
    const Tick t = ts.time[i];
    const Occupancy o = occupancy_at(d->cluster, t, nodes_out_at(d->outages, d->cluster.nodes, t));
    std::int64_t down = 0, used = 0;
    for (std::size_t p = 0; p < P; ++p) down += ts.pool_down_gpus[i * P + p], used += ts.pool_used_gpus[i * P + p];
    ASSERT_EQ(o.full_nodes + o.partial_nodes + o.idle_nodes + o.draining_nodes + o.out_nodes, d->cluster.nodes);
    if (o.down_gpus != down || o.used_gpus != used) {
      if (++mismatched <= 3)
        ADD_FAILURE() << "sample " << i << " at " << format_offset(t - d->origin).toStdString() << ": map down "
                      << o.down_gpus << " used " << o.used_gpus << ", /timeseries down " << down << " used " << used;
    }
    draining += o.draining_nodes;
    out += o.out_nodes;
  }
  EXPECT_EQ(mismatched, 0);
  EXPECT_GT(draining, 0);  // the drill drains nodes with jobs on them
  EXPECT_GT(out, 0);
}

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
