// The timeline's recorded-vs-simulated curve (gui/fidelity_curve.hpp).
#include <gtest/gtest.h>

#include "gui/fidelity_curve.hpp"

using namespace headroom;
using sim::kSecond;

namespace {

results::RunResult two_samples() {
  results::RunResult r;
  results::PoolInfo pool;
  pool.nodes = 1;
  pool.gpus_per_node = 8;
  r.pools.push_back(pool);
  r.timeseries.time = {0, 100 * kSecond};
  r.timeseries.pool_used_gpus = {3, 5};
  results::JobRecord j;
  j.gpus = 4;
  j.runtime = 150 * kSecond;
  j.trace_start = 50 * kSecond;  // recorded: [50 s, 200 s) on 4 GPUs
  r.jobs.push_back(j);
  return r;
}

}  // namespace

TEST(GuiFidelityCurve, RecordedThenSimulatedGpusAtTheSamples) {
  const auto p = gui::fidelity_curves(two_samples(), {0.0, 100.0 / 86400});
  ASSERT_FALSE(p.empty());
  ASSERT_EQ(p.full().curves.size(), 3u);
  EXPECT_EQ(p.full().curves[0].name, QStringLiteral("recorded (trace)"));
  EXPECT_EQ(p.full().curves[0].y, (std::vector<double>{0, 4}));
  EXPECT_EQ(p.full().curves[1].y, (std::vector<double>{3, 5}));
  EXPECT_EQ(p.full().curves[2].name, QStringLiteral("cluster size (8 GPUs)"));
  EXPECT_EQ(p.full().curves[2].y, (std::vector<double>{8, 8}));
}

// Issue #36 item 7: the trace recorded 12 GPUs in use on an 8-GPU cluster (8,650 of 8,192 on the
// RICC log): drawn at the cluster size, and the legend says so.
TEST(GuiFidelityCurve, RecordedAboveTheClusterIsClippedAndSaidSo) {
  auto r = two_samples();
  r.total_gpus = 8;
  r.jobs.push_back(r.jobs[0]);
  r.jobs.push_back(r.jobs[0]);  // three recorded jobs of 4 GPUs at 100 s: 12 > 8
  const auto p = gui::fidelity_curves(r, {0.0, 100.0 / 86400});
  ASSERT_EQ(p.full().curves.size(), 3u);
  EXPECT_EQ(p.full().curves[0].y, (std::vector<double>{0, 8}));
  EXPECT_EQ(p.full().curves[0].name, QStringLiteral("recorded (trace), drawn at most 8: 1 sample above, peak 12"));
  EXPECT_EQ(p.full().curves[2].y, (std::vector<double>{8, 8}));
}

TEST(GuiFidelityCurve, NoneWithoutRecordedStarts) {
  auto r = two_samples();
  r.jobs[0].trace_start = -1;
  EXPECT_TRUE(gui::fidelity_curves(r, {0.0, 100.0 / 86400}).empty());
}
