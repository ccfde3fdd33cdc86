// Sweeps: variant expansion, key-path overrides, determinism across thread counts, cancellation.
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "planner/sweep.hpp"
#include "results/chunks.hpp"
#include "results/hdf5_io.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"

using namespace headroom;

namespace {

std::string write_scenario(const std::string& name, const std::string& extra) {
  // One folder per process: CTest runs the cases of this file in parallel processes.
  const auto dir = std::filesystem::temp_directory_path() / ("headroom-planner-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream t(dir / "trace.csv");
    t << "id,tenant,queue,submit,gpus,runtime\n";
    for (int i = 0; i < 200; ++i)
      t << i << ",t" << i % 3 << ",q," << i * 7 << "," << 1 + i % 8 << "," << 50 + (i * 37) % 400 << "\n";
  }
  const auto path = dir / name;
  std::ofstream s(path);
  s << "name: sweep-test\nseed: 5\ncluster:\n  pools:\n    - name: a100\n      nodes: 4\n      gpus_per_node: 8\n"
       "      gpu_type: A100\n    - name: t4\n      nodes: 2\n      gpus_per_node: 4\n      gpu_type: T4\n"
       "policy: fifo\nworkload:\n  trace: trace.csv\n"
    << extra;
  return path.string();
}

// The text of a policy parameter, "(none)" when it is not set.
std::string param_text(const policies::PolicyParams& p, const std::string& key) {
  const auto it = p.find(key);
  return it == p.end() ? std::string("(none)") : it->second.text;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Four A100 nodes and one T4 node behind two Slurm partitions (big, the Default, and small), and
// 11 jobs of 8 GPUs at once: six of queue small, four of big, one of "other", which is no
// partition. Writes the trace into a folder of its own (named by `tag`) and returns the
// scenario's path there; the scenario text is kStrand plus `extra`, written there too.
constexpr const char* kStrand =
    "name: strand\nseed: 1\ncluster:\n  pools:\n    - {name: big, nodes: 4, gpus_per_node: 8, gpu_type: A100}\n"
    "    - {name: small, nodes: 1, gpus_per_node: 8, gpu_type: T4}\npolicy:\n  name: slurm\n  partitions:\n"
    "    big: {Nodes: big, Default: YES}\n    small: {Nodes: small}\nworkload:\n  trace: trace.csv\n";

std::string write_strand(const std::string& tag, const std::string& extra = "") {
  const auto dir = std::filesystem::temp_directory_path() / ("headroom-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream t(dir / "trace.csv");
  t << "id,tenant,queue,submit,gpus,runtime\n";
  for (int i = 0; i < 6; ++i) t << i << ",t,small,0,8,1000\n";
  for (int i = 6; i < 10; ++i) t << i << ",t,big,0,8,1000\n";
  t << "10,t,other,0,8,1000\n";
  std::ofstream(dir / "strand.yaml") << kStrand << extra;
  return (dir / "strand.yaml").string();
}

}  // namespace

TEST(Sweep, ExpandsTheCrossProductFirstVariableSlowest) {
  const auto path = write_scenario(
      "expand.yaml", "variants:\n  policy: [fifo, sjf]\n  cluster.pools.t4.nodes: [1, 2, 3]\nseeds: [7, 8]\n");
  const auto spec = planner::load_sweep(path);
  ASSERT_EQ(spec.variables.size(), 2u);
  EXPECT_EQ(spec.variables[0].path, "policy");
  EXPECT_EQ(spec.variables[1].values, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(spec.seeds, (std::vector<std::uint64_t>{7, 8}));
  const auto points = planner::expand(spec);
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points[0].choice, (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(points[1].seed, 8u);
  EXPECT_EQ(points[2].choice, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(points[11].choice, (std::vector<std::size_t>{1, 2}));
  const auto sc = planner::point_scenario(spec, points[11]);
  EXPECT_EQ(sc.policy.name, "sjf");
  EXPECT_EQ(sc.cluster.pools[1].nodes, 3);
  EXPECT_EQ(sc.cluster.pools[0].nodes, 4) << "other pools untouched";
  EXPECT_EQ(sc.seed, 8u);
}

// Every point is made from the file as load_sweep read it: an edit while the sweep is set up or
// runs (its points are made one by one) does not reach some points and not others.
TEST(Sweep, PointsAreMadeFromTheFileAsLoaded) {
  const auto path = write_scenario("edited.yaml", "variants:\n  cluster.pools.t4.nodes: [1, 3]\n");
  const auto spec = planner::load_sweep(path);
  std::ofstream(path) << "name: other\n";  // no longer a sweep, nor a valid scenario
  const auto points = planner::expand(spec);
  ASSERT_EQ(points.size(), 2u);
  const auto sc = planner::point_scenario(spec, points[1]);
  EXPECT_EQ(sc.name, "sweep-test");
  EXPECT_EQ(sc.cluster.pools[1].nodes, 3);
  EXPECT_EQ(sc.cluster.pools[0].nodes, 4);
}

TEST(Sweep, SeedCountCountsFromTheScenarioSeed) {
  const auto spec = planner::load_sweep(write_scenario("seeds.yaml", "seeds: 3\n"));
  EXPECT_EQ(spec.seeds, (std::vector<std::uint64_t>{5, 6, 7}));
  EXPECT_EQ(planner::expand(spec).size(), 3u);
}

// `variants: {seed: [...]}` varies the seed as `seeds:` does; both at once are an error (issue #20).
TEST(Sweep, SeedVariantsAreTheSeeds) {
  const auto spec =
      planner::load_sweep(write_scenario("vseed.yaml", "variants:\n  seed: [11, 12]\n  policy: [fifo, sjf]\n"));
  EXPECT_EQ(spec.seeds, (std::vector<std::uint64_t>{11, 12}));
  ASSERT_EQ(spec.variables.size(), 1u);
  const auto points = planner::expand(spec);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(planner::point_scenario(spec, points[3]).seed, 12u);
  const auto table = planner::sweep_table(planner::run_sweep(spec));
  EXPECT_EQ(table.rows(), 4u);
  try {
    planner::load_sweep(write_scenario("vseed2.yaml", "variants:\n  seed: [1, -2]\nseeds: 2\n"));
    FAIL() << "expected InputErrors";
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(std::string(e.errors()[0].what()).substr(e.errors()[0].file().size()),
              ":17:13: variants.seed: expected a non-negative integer seed, got \"-2\"");
    EXPECT_EQ(std::string(e.errors()[1].what()).substr(e.errors()[1].file().size()),
              ":17:3: variants.seed: the seeds are given twice, here and under `seeds:` (line 18); keep one");
  }
}

// A point's keys go into one tree in order (the names of a list's elements are looked up once
// per tree): a key that renames an element, or replaces the list, is seen by the keys after it.
TEST(Sweep, KeysAfterARenameOrAReplacedListFindTheNewElements) {
  const auto renamed = write_scenario("renamed.yaml",
                                      "variants:\n  cluster.pools.t4.nodes: [1]\n  cluster.pools.t4.name: [l4]\n"
                                      "  cluster.pools.l4.gpus_per_node: [2]\n");
  auto spec = planner::load_sweep(renamed);
  auto sc = planner::point_scenario(spec, planner::expand(spec).front());
  ASSERT_EQ(sc.cluster.pools.size(), 2u);
  EXPECT_EQ(sc.cluster.pools[1].name, "l4");
  EXPECT_EQ(sc.cluster.pools[1].nodes, 1);
  EXPECT_EQ(sc.cluster.pools[1].gpus_per_node, 2);
  const auto replaced = write_scenario("replaced.yaml",
                                       "variants:\n  cluster.pools.t4.nodes: [1]\n"
                                       "  cluster.pools: [[{name: h100, nodes: 3, gpus_per_node: 8, gpu_type: H100}]]\n"
                                       "  cluster.pools.h100.nodes: [5]\n");
  spec = planner::load_sweep(replaced);
  sc = planner::point_scenario(spec, planner::expand(spec).front());
  ASSERT_EQ(sc.cluster.pools.size(), 1u);
  EXPECT_EQ(sc.cluster.pools[0].name, "h100");
  EXPECT_EQ(sc.cluster.pools[0].nodes, 5);
  // The name that left is gone for the keys after it.
  try {
    planner::load_sweep(
        write_scenario("gone.yaml", "variants:\n  cluster.pools.t4.name: [l4]\n  cluster.pools.t4.nodes: [1]\n"));
    FAIL() << "expected InputErrors";
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_NE(std::string(e.errors()[0].what())
                  .find("variants.cluster.pools.t4.nodes: cannot vary this key: no list "
                        "element named \"t4\""),
              std::string::npos)
        << e.errors()[0].what();
  }
}

TEST(Sweep, BadVariantsAreErrorsWithLocations) {
  const auto path = write_scenario("bad.yaml", "variants:\n  cluster.pools.h100.nodes: [1, 2]\n  horizon: 3d\n");
  try {
    planner::load_sweep(path);
    FAIL() << "expected InputErrors";
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(e.errors()[0].line(), 17);
    EXPECT_NE(std::string(e.errors()[0].what()).find("no list element named \"h100\""), std::string::npos);
    EXPECT_NE(std::string(e.errors()[1].what()).find("expected a non-empty list"), std::string::npos);
  }
  const auto bad_value = write_scenario("badvalue.yaml", "variants:\n  cluster.pools.t4.nodes: [2, -1]\n");
  const auto spec = planner::load_sweep(bad_value);
  try {
    planner::run_sweep(spec);
    FAIL() << "expected InputErrors";
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_NE(std::string(e.errors()[0].what()).find("in run 1 (cluster.pools.t4.nodes=-1, seed=5)"), std::string::npos)
        << e.errors()[0].what();
  }
}

TEST(Sweep, SameTableAtOneAndTwoThreads) {
  const auto spec = planner::load_sweep(
      write_scenario("det.yaml", "variants:\n  policy: [fifo, sjf]\n  workload.arrival_scale: [0.5, 1.5]\nseeds: 2\n"));
  auto table_at = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return planner::sweep_table(planner::run_sweep(spec));
  };
  const auto one = table_at(1), two = table_at(2);
  ASSERT_EQ(one.rows(), 8u);
  ASSERT_EQ(one.columns.size(), two.columns.size());
  for (std::size_t c = 0; c < one.columns.size(); ++c) {
    EXPECT_EQ(one.columns[c].strings, two.columns[c].strings) << one.columns[c].name;
    for (std::size_t r = 0; r < one.rows() && !one.columns[c].text; ++r) {
      const double a = one.columns[c].numbers[r], b = two.columns[c].numbers[r];
      if (std::isnan(a)) {
        EXPECT_TRUE(std::isnan(b)) << one.columns[c].name;  // e.g. cost: the scenario prices nothing
      } else {
        EXPECT_EQ(a, b) << one.columns[c].name;
      }
    }
  }
  // Seeds matter when arrivals are thinned: the two seeds of a point differ.
  std::size_t fp = 0;
  while (one.columns[fp].name != "fingerprint") ++fp;
  EXPECT_NE(one.columns[fp].strings[0], one.columns[fp].strings[1]);
}

TEST(Sweep, CancellationKeepsFinishedRuns) {
  const auto spec = planner::load_sweep(write_scenario("cancel.yaml", "seeds: 6\n"));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
  std::atomic<bool> stop{false};
  planner::SweepOptions o;
  o.stop = &stop;
  o.progress = [&](std::size_t done, std::size_t) {
    if (done == 2) stop = true;
  };
  const auto r = planner::run_sweep(spec, o);
  int done = 0, cancelled = 0;
  for (const auto& x : r.results) {
    done += x.status == planner::RunStatus::Done;
    cancelled += x.status == planner::RunStatus::Cancelled;
  }
  EXPECT_EQ(done, 2);
  EXPECT_EQ(cancelled, 4);
  const auto t = planner::sweep_table(r);
  EXPECT_EQ(t.rows(), 6u);
}

// A stop asked for while the points are made (a sweep of many points takes a while to make them):
// nothing runs, and it unwinds as an interrupted import does.
TEST(Sweep, AStopBeforeTheRunsEndsItThere) {
  const auto spec = planner::load_sweep(write_scenario("stop.yaml", "seeds: 6\n"));
  std::atomic<bool> stop{true};
  planner::SweepOptions o;
  o.stop = &stop;
  std::size_t runs = 0;
  o.progress = [&](std::size_t, std::size_t) { ++runs; };
  EXPECT_THROW(planner::run_sweep(spec, o), sim::Interrupted);
  EXPECT_EQ(runs, 0u);
}

// A sweep is bounded: more than a million runs (each run's figures are kept until the table is
// written) is refused when the file is read, at its `variants:`, before any point is made.
TEST(Sweep, MoreThanAMillionRunsIsRefusedWhereTheVariantsAre) {
  std::string values = "[";
  for (int i = 1; i <= 2000; ++i) values += (i > 1 ? ", " : "") + std::to_string(i);
  values += "]";
  const auto path = write_scenario("huge.yaml", "variants:\n  cluster.pools.a100.nodes: " + values +
                                                    "\n  cluster.pools.t4.nodes: " + values + "\nseeds: 1\n");
  try {
    planner::load_sweep(path);
    FAIL() << "expected InputErrors";
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].line(), 17);
    EXPECT_EQ(e.errors()[0].message(),
              "the values and seeds make 4,000,000 runs, more than the 1,000,000 one sweep holds (each run's figures "
              "are kept until the table is written): give fewer values or seeds, or split the values over several "
              "sweeps");
  }
  // At the bound itself: read (1,000 x 1,000 points).
  std::string thousand = "[";
  for (int i = 1; i <= 1000; ++i) thousand += (i > 1 ? ", " : "") + std::to_string(i);
  thousand += "]";
  const auto at_bound = write_scenario("bound.yaml", "variants:\n  cluster.pools.a100.nodes: " + thousand +
                                                         "\n  cluster.pools.t4.nodes: " + thousand + "\n");
  EXPECT_EQ(planner::expand(planner::load_sweep(at_bound)).size(), 1'000'000u);
}

#include "planner/plan.hpp"
#include "planner/run.hpp"

TEST(Plan, ParsesTargets) {
  auto t = planner::parse_target("p95_wait <= 1h");
  EXPECT_EQ(t.kpi, "wait_p95");
  EXPECT_TRUE(t.at_most);
  EXPECT_FALSE(t.strict);
  EXPECT_EQ(t.bound, 3600);
  t = planner::parse_target("utilization >= 80%");
  EXPECT_EQ(t.kpi, "utilization");
  EXPECT_FALSE(t.at_most);
  EXPECT_DOUBLE_EQ(t.bound, 0.8);
  t = planner::parse_target("tenant:research.mean_wait < 30m");
  EXPECT_EQ(t.kpi, "tenant.mean_wait");
  EXPECT_EQ(t.tenant, "research");
  EXPECT_TRUE(t.strict);
  EXPECT_EQ(t.bound, 1800);
  EXPECT_TRUE(planner::meets(t, 1799));
  EXPECT_FALSE(planner::meets(t, 1800));
  EXPECT_THROW(planner::parse_target("p95_wiat <= 1h"), sim::InputError);
  EXPECT_THROW(planner::parse_target("p95_wait 1h"), sim::InputError);
  EXPECT_THROW(planner::parse_target("p95_wait <= soon"), sim::InputError);
  EXPECT_THROW(planner::parse_target("utilization >= lots"), sim::InputError);
  EXPECT_THROW(planner::parse_target("utilization >= nan"), sim::InputError);   // issue #20
  EXPECT_THROW(planner::parse_target("cost <= inf"), sim::InputError);          // never a real bound
  EXPECT_THROW(planner::parse_target("utilization >= 150%"), sim::InputError);  // a ratio is 0..1
  // Per job kind and per tenant quantiles of wait and JCT.
  t = planner::parse_target("kind:train.jct_p95 <= 2h");
  EXPECT_EQ(t.kpi, "kind.jct_p95");
  EXPECT_EQ(t.tenant, "train");
  EXPECT_EQ(t.bound, 7200);
  EXPECT_EQ(planner::parse_target("kind:inference.p99_wait <= 1m").kpi, "kind.wait_p99");
  EXPECT_EQ(planner::parse_target("tenant:research.p99_wait <= 1h").kpi, "tenantq.wait_p99");
  EXPECT_EQ(planner::parse_target("tenant:research.jct_median <= 1h").kpi, "tenantq.jct_median");
  EXPECT_EQ(planner::parse_target("tenant:research.mean_wait <= 1h").kpi, "tenant.mean_wait");
  EXPECT_THROW(planner::parse_target("kind:training.jct_p95 <= 2h"), sim::InputError);
  EXPECT_THROW(planner::parse_target("kind:train.jct_p90 <= 2h"), sim::InputError);
  {
    results::Summary q;
    results::KindSummary k;
    k.name = "train";
    k.jobs = 4;  // a kind without jobs has no figure
    k.jct.p95 = 3600;
    k.wait.p99 = 60;
    q.kinds.push_back(k);
    results::TenantSummary ten;
    ten.name = "research";
    ten.wait.p99 = 42;
    ten.jct.median = 7;
    q.tenants.push_back(ten);
    EXPECT_EQ(planner::kpi_value(q, planner::parse_target("kind:train.jct_p95 <= 2h")), 3600.0);
    EXPECT_EQ(planner::kpi_value(q, planner::parse_target("kind:train.wait_p99 <= 2h")), 60.0);
    EXPECT_FALSE(planner::kpi_value(q, planner::parse_target("kind:batch.wait_p99 <= 2h")).has_value());
    EXPECT_EQ(planner::kpi_value(q, planner::parse_target("tenant:research.p99_wait <= 1h")), 42.0);
    EXPECT_EQ(planner::kpi_value(q, planner::parse_target("tenant:research.jct_median <= 1h")), 7.0);
  }
  t = planner::parse_target("cost <= 25000");
  EXPECT_EQ(t.kpi, "cost");
  EXPECT_EQ(t.bound, 25000);
  t = planner::parse_target("fragmentation <= 10%");
  EXPECT_EQ(t.kpi, "fragmentation");
  EXPECT_DOUBLE_EQ(t.bound, 0.1);
  // Cost KPIs exist only where the scenario prices GPUs.
  results::Summary s;
  EXPECT_FALSE(planner::kpi_value(s, planner::parse_target("cost <= 1")).has_value());
  s.priced = true;
  s.cost = 12.5;
  s.cost_per_used_gpu_hour = 3;
  EXPECT_EQ(planner::kpi_value(s, planner::parse_target("cost <= 1")), 12.5);
  EXPECT_EQ(planner::kpi_value(s, planner::parse_target("cost_per_gpu_hour <= 1")), 3.0);
}

TEST(Plan, FindsTheSmallestValueMeetingTheTarget) {
  const auto path = write_scenario("plan.yaml", "");
  planner::PlanRequest req;
  req.scenario = path;
  req.vary = "cluster.pools.a100.nodes";
  req.lo = 1;
  req.hi = 40;
  req.targets = {planner::parse_target("wait_mean <= 2m")};
  const auto r = planner::plan(req);
  ASSERT_TRUE(r.answer);
  EXPECT_TRUE(r.monotone);
  // Check the answer by direct runs: it meets the target and one node fewer does not.
  auto mean_wait = [&](std::int64_t nodes) {
    planner::SweepSpec spec = planner::load_sweep(path);
    spec.variables = {planner::Variable{"cluster.pools.a100.nodes", {std::to_string(nodes)}, 0, 0}};
    const auto sc = planner::point_scenario(spec, planner::SweepPoint{0, {0}, spec.seeds[0]});
    return results::summarize(planner::run_scenario(sc).result).wait.mean;
  };
  EXPECT_LE(mean_wait(*r.answer), 120.0);
  EXPECT_GT(mean_wait(*r.answer - 1), 120.0);
  EXPECT_GE(r.curve.size(), 3u);
  for (std::size_t i = 1; i < r.curve.size(); ++i) EXPECT_LT(r.curve[i - 1].value, r.curve[i].value);
}

// plan searches a number: a key that takes any text (a name) is refused before any run (issue #20).
TEST(Plan, VaryingAKeyThatIsNotANumberIsAnError) {
  planner::PlanRequest req;
  req.scenario = write_scenario("plan-name.yaml", "");
  req.lo = 1;
  req.hi = 3;
  req.targets = {planner::parse_target("wait_mean <= 1h")};
  for (const char* key : {"name", "cluster.pools.a100.gpu_type"}) {
    req.vary = key;
    try {
      planner::plan(req);
      ADD_FAILURE() << key;
    } catch (const sim::InputError& e) {
      EXPECT_EQ(e.where(), "--vary");
      EXPECT_EQ(e.message(), std::string("\"") + key +
                                 "\" is not a numeric key (it takes any text); plan searches a count such as "
                                 "cluster.pools.<pool>.nodes");
    }
  }
}

TEST(Plan, SaysWhenNoValueInTheRangeMeetsTheTarget) {
  planner::PlanRequest req;
  req.scenario = write_scenario("plan-none.yaml", "");
  req.vary = "cluster.pools.a100.nodes";
  req.lo = 1;
  req.hi = 3;
  req.targets = {planner::parse_target("wait_mean <= 1s")};
  const auto r = planner::plan(req);
  EXPECT_FALSE(r.answer);
  ASSERT_EQ(r.curve.size(), 2u) << "both ends measured, nothing in between";
  EXPECT_FALSE(r.curve.back().pass);
}

// The run stops at a 2 h 15 min horizon: with 4 GPUs a node, 35 jobs are still waiting then and
// never start. Their censored waits stay well under the loose bound, so only counting the jobs that never
// ran makes those sizes miss it.
TEST(Plan, ATargetIsMissedWhileJobsNeverStarted) {
  planner::PlanRequest req;
  req.scenario = write_scenario("plan-never.yaml", "horizon: 2h15m\n");
  {
    // The same scenario under kubernetes (policy: is fifo in write_scenario).
    std::ifstream in(req.scenario);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("policy: fifo"), 12, "policy: kubernetes");
    std::ofstream(req.scenario) << text;
  }
  req.vary = "cluster.pools.a100.gpus_per_node";
  req.lo = 4;
  req.hi = 8;
  req.targets = {planner::parse_target("wait_max <= 30d"), planner::parse_target("utilization >= 0")};
  const auto r = planner::plan(req);
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(*r.answer, 6);
  ASSERT_GE(r.curve.size(), 2u);
  const planner::Probe& four = r.curve.front();
  EXPECT_EQ(four.value, 4);
  EXPECT_FALSE(four.pass);
  EXPECT_LE(four.worst[0], 30.0 * 86400) << "the value alone would meet the bound";
  EXPECT_EQ(four.not_run[0].never_started, 35);
  EXPECT_EQ(planner::describe(four.not_run[0]), "35 jobs never started");
  EXPECT_FALSE(four.not_run[1].any()) << "utilization is not a wait or JCT target";
  EXPECT_TRUE(r.curve.back().pass);
  EXPECT_FALSE(r.curve.back().not_run[0].any());
  // Tenant and kind targets count their own population; a rejection by the policy counts too.
  results::Summary s;
  s.never_started = 3;
  s.tenants.resize(1);
  s.tenants[0].name = "t0";
  s.tenants[0].rejected = 2;
  s.kinds.resize(1);
  s.kinds[0].name = "batch";
  const auto tenant = planner::not_run(s, planner::parse_target("tenant:t0.p95_wait <= 1h"));
  EXPECT_EQ(tenant.never_started, 0);
  EXPECT_EQ(tenant.rejected, 2);
  EXPECT_EQ(planner::describe(tenant), "2 jobs rejected by the policy");
  EXPECT_FALSE(planner::not_run(s, planner::parse_target("kind:batch.jct_mean <= 1h")).any());
  EXPECT_FALSE(planner::not_run(s, planner::parse_target("tenant:t0.gpu_hours >= 1")).any());
  EXPECT_EQ(planner::describe(planner::not_run(s, planner::parse_target("jct_p95 <= 1h"))), "3 jobs never started");
}

#include <sstream>

namespace {

std::string csv_of(const results::Table& t) {
  std::ostringstream out;
  results::write_table_csv(t, out);
  return out.str();
}

}  // namespace

TEST(Shards, ThreeShardsMergeIntoTheTableOfOneRun) {
  const auto spec = planner::load_sweep(write_scenario(
      "shards.yaml", "variants:\n  policy: [fifo, sjf]\n  workload.arrival_scale: [0.5, 1.5]\nseeds: 2\n"));
  const auto whole = planner::sweep_table(planner::run_sweep(spec));
  ASSERT_EQ(whole.rows(), 8u);
  std::vector<results::Table> shards;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < 3; ++i) {
    planner::SweepOptions o;
    o.shard_index = i;
    o.shard_count = 3;
    const auto r = planner::run_sweep(spec, o);
    EXPECT_EQ(r.selected.size(), i < 2 ? 3u : 2u);  // round robin: 0,3,6 / 1,4,7 / 2,5
    shards.push_back(planner::sweep_table(r));
    EXPECT_EQ(shards.back().attributes.at("shard"), std::to_string(i) + "/3");
    names.push_back("shard" + std::to_string(i) + ".h5");
  }
  EXPECT_EQ(shards[2].columns[0].numbers, (std::vector<double>{2, 5}));
  // In any order; through HDF5 files and back.
  const auto dir = std::filesystem::temp_directory_path() / ("headroom-shards-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<results::Table> read;
  for (std::size_t i : {2u, 0u, 1u}) {
    const std::string p = (dir / names[i]).string();
    results::write_table_hdf5(shards[i], p, "runs");
    read.push_back(results::read_table_hdf5(p, "runs"));
  }
  const auto merged = planner::merge_tables(read, {names[2], names[0], names[1]});
  EXPECT_EQ(csv_of(merged), csv_of(whole));
  EXPECT_EQ(merged.attributes, whole.attributes);
  // The merged table written and read back is still the same, value for value.
  results::write_table_hdf5(merged, (dir / "merged.h5").string(), "runs");
  EXPECT_EQ(csv_of(results::read_table_hdf5((dir / "merged.h5").string(), "runs")), csv_of(whole));
  std::filesystem::remove_all(dir);
}

TEST(Shards, MergeRefusesMissingDuplicateOrForeignShards) {
  const auto spec = planner::load_sweep(write_scenario("shards2.yaml", "seeds: 4\n"));
  auto shard = [&](std::size_t i, std::size_t n) {
    planner::SweepOptions o;
    o.shard_index = i;
    o.shard_count = n;
    return planner::sweep_table(planner::run_sweep(spec, o));
  };
  const auto s0 = shard(0, 3), s1 = shard(1, 3), s2 = shard(2, 3);
  auto message = [&](const std::vector<results::Table>& t) {
    try {
      planner::merge_tables(t, {"a.h5", "b.h5", "c.h5"});
    } catch (const sim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({s0, s2}).find("missing shard(s) 1 of 3 (4 runs in all)"), std::string::npos) << message({s0, s2});
  EXPECT_NE(message({s0, s1, s1}).find("c.h5: shard 1/3 given twice"), std::string::npos) << message({s0, s1, s1});
  EXPECT_NE(message({s0, shard(1, 2)}).find("b.h5: is shard 1/2"), std::string::npos);
  EXPECT_EQ(message({s0, s1, s2}), "no error") << "shards of one sweep merge";
  EXPECT_EQ(planner::merge_tables({s0, s1, s2}, {"a", "b", "c"}).rows(), 4u);
  EXPECT_THROW(planner::parse_shard("3/3"), sim::InputError);
  EXPECT_THROW(planner::parse_shard("1"), sim::InputError);
  EXPECT_THROW(planner::parse_shard("0/1000001"), sim::InputError);  // more shards than a sweep has runs
  EXPECT_EQ(planner::parse_shard("2/5"), (std::pair<std::size_t, std::size_t>{2, 5}));
  // A shard named by a folder, an empty file or a text file: what it is, with its name.
  const auto dir = std::filesystem::temp_directory_path() / ("headroom-merge-inputs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "shard.h5");
  std::ofstream((dir / "empty.h5").string()).close();
  std::ofstream((dir / "text.h5").string()) << "hello\n";
  for (const auto& [name, why] : {std::pair{"shard.h5", "is a directory"}, std::pair{"empty.h5", "not an HDF5 file"},
                                  std::pair{"text.h5", "not an HDF5 file"}}) {
    try {
      results::read_table_hdf5((dir / name).string(), "runs");
      ADD_FAILURE() << name << " read";
    } catch (const sim::InputError& e) {
      EXPECT_EQ(e.file(), (dir / name).string());
      EXPECT_EQ(e.message(), why);
    }
  }
  std::filesystem::remove_all(dir);
}

#include "planner/compare.hpp"
#include "planner/scorecard.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"

namespace {

double metric(const results::Table& t, const std::string& name, const std::string& policy) {
  std::size_t col = 0;
  while (col < t.columns.size() && t.columns[col].name != policy) ++col;
  for (std::size_t r = 0; r < t.rows(); ++r)
    if (t.columns[0].strings[r] == name) return t.columns.at(col).numbers[r];
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

}  // namespace

TEST(Compare, PerPolicyBlocksDefaultBlockOrDefaults) {
  const auto sc = scenarios::load_scenario(
      write_scenario("cmp-blocks.yaml", "policies:\n  kubernetes:\n    quota: {t0: {gpu: 4}}\n  sjf:\n"));
  ASSERT_EQ(sc.policy_overrides.size(), 2u);
  auto k = planner::scenario_for_policy(sc, "kubernetes");
  EXPECT_EQ(k.policy.name, "kubernetes");
  EXPECT_EQ(k.policy.params.count("quota.t0.gpu"), 1u);
  EXPECT_EQ(planner::scenario_for_policy(sc, "sjf").policy.params.size(), 0u);
  EXPECT_EQ(planner::scenario_for_policy(sc, "fifo").policy.name, "fifo");  // the `policy:` block
  EXPECT_EQ(planner::scenario_for_policy(sc, "fifo").cluster.total_gpus(), sc.cluster.total_gpus());
}

TEST(Compare, BadPolicyBlocksAndListsAreErrorsWithLocations) {
  try {
    scenarios::load_scenario(
        write_scenario("cmp-bad.yaml", "policies:\n  kubernetes: {podMaxBackof: 3}\n  fifx: {}\n"));
    FAIL() << "expected InputErrors";
  } catch (const sim::InputErrors& e) {
    std::string all;
    for (const auto& x : e.errors()) all += std::string(x.what()) + "\n";
    EXPECT_NE(all.find("cmp-bad.yaml:17:"), std::string::npos) << all;
    EXPECT_NE(all.find("podMaxBackof"), std::string::npos) << all;
    EXPECT_NE(all.find("policies.kubernetes.podMaxBackof: unknown parameter"), std::string::npos) << all;
    EXPECT_NE(all.find("cmp-bad.yaml:18:3"), std::string::npos) << all;
    EXPECT_NE(all.find("fifx"), std::string::npos) << all;
  }
  EXPECT_EQ(planner::parse_policy_list("fifo, sjf,kubernetes"),
            (std::vector<std::string>{"fifo", "sjf", "kubernetes"}));
  try {
    planner::parse_policy_list("fifo,sfj");
    FAIL();
  } catch (const sim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown policy \"sfj\"; did you mean \"sjf\"?"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(planner::parse_policy_list("fifo,fifo"), sim::InputError);
  EXPECT_THROW(planner::parse_policy_list("fifo,"), sim::InputError);
}

TEST(Compare, SameTableAtAnyThreadCountAndMatchesSingleRuns) {
  // The tenants are listed (weight 1 each): borrowing is measured against their entitlements.
  const auto sc = scenarios::load_scenario(write_scenario("cmp.yaml",
                                                          "tenants:\n  - {name: t0}\n  - {name: t1}\n  - {name: t2}\n"
                                                          "policies:\n  kubernetes:\n    quota: {t0: {gpu: 4}}\n"));
  const std::vector<std::string> names = {"fifo", "sjf", "kubernetes"};
  auto table_at = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return planner::compare_table(planner::compare(sc, names));
  };
  const auto one = table_at(1), two = table_at(3);
  EXPECT_EQ(csv_of(one), csv_of(two));
  ASSERT_EQ(one.columns.size(), 5u);
  EXPECT_EQ(one.columns[2].name, "fifo");
  EXPECT_EQ(one.columns[4].name, "kubernetes");
  // Each column is the run of that policy alone.
  for (const auto& p : names) {
    const auto o = planner::run_scenario(planner::scenario_for_policy(sc, p));
    const auto s = results::summarize(o.result);
    EXPECT_EQ(metric(one, "wait_mean", p), s.wait.mean) << p;
    EXPECT_EQ(metric(one, "jct_p95", p), s.jct.p95) << p;
    EXPECT_EQ(metric(one, "gpu_utilization", p), s.gpu_utilization) << p;
    EXPECT_EQ(metric(one, "completed", p), static_cast<double>(s.by_state[2])) << p;
    EXPECT_EQ(metric(one, "jain_index", p), planner::fairness_of(o).jain) << p;
    const auto by_tenant = planner::stats_by_tenant(o.result);
    ASSERT_EQ(by_tenant.size(), 3u);
    EXPECT_EQ(metric(one, "tenant:t1.wait_mean", p), by_tenant[1].wait_mean_s) << p;
    const auto f = planner::fairness_of(o);
    EXPECT_EQ(metric(one, "fragmentation", p), s.fragmentation) << p;
    EXPECT_EQ(metric(one, "borrowed_gpu_hours", p), f.borrowed_gpu_hours) << p;
    EXPECT_EQ(metric(one, "borrowing_starts", p), static_cast<double>(f.borrowing_starts)) << p;
    EXPECT_EQ(metric(one, "reclaims", p), static_cast<double>(f.reclaims)) << p;
    EXPECT_EQ(metric(one, "tenant:t0.borrowed_gpu_hours", p), f.tenants[0].borrowed_gpu_hours) << p;
  }
  // No prices in this scenario: no cost rows.
  EXPECT_EQ(std::find(one.columns[0].strings.begin(), one.columns[0].strings.end(), "cost"),
            one.columns[0].strings.end());
  // The quota of the kubernetes block holds t0 back: it gets fewer GPU-hours than without it.
  auto plain = sc;
  plain.policy_overrides.clear();
  const auto without = planner::compare_table(planner::compare(plain, {"kubernetes"}));
  EXPECT_LT(metric(one, "tenant:t0.gpu_hours", "kubernetes"), metric(without, "tenant:t0.gpu_hours", "kubernetes"));
  EXPECT_GT(metric(one, "unfinished", "kubernetes"), metric(without, "unfinished", "kubernetes"));
  // Every job is a batch job in this trace: one kind row set, all 200 jobs.
  EXPECT_EQ(metric(one, "kind:batch.jobs", "sjf"), 200);
}

// A tenant target's check reads the workload for the tenants' names; given the command's cache
// (as headroom compare and plan give it), the runs after it reuse that import.
TEST(Compare, ATenantTargetsCheckAndTheRunsReadTheTraceOnce) {
  const auto sc = scenarios::load_scenario(write_scenario("cmp-once.yaml", ""));
  const std::vector<std::vector<planner::Target>> targets = {{planner::parse_target("tenant:t1.wait_mean <= 1h")}};
  scenarios::TraceCache traces;
  planner::check_drill_targets({sc}, targets, &traces);
  EXPECT_EQ(traces.reads(), 1u);
  const auto all = planner::compare_all({sc}, {"fifo", "kubernetes"}, nullptr, nullptr, "", &traces);
  EXPECT_EQ(traces.reads(), 1u);
  ASSERT_EQ(all.size(), 1u);
  for (const auto& run : all.front().runs) EXPECT_TRUE(run.done) << run.policy << ": " << run.error;
  EXPECT_EQ(csv_of(planner::compare_table(all.front())),
            csv_of(planner::compare_table(planner::compare(sc, {"fifo", "kubernetes"}))));
  // A name the workload lacks is still refused, from the same import.
  const std::vector<std::vector<planner::Target>> typo = {{planner::parse_target("tenant:t9.wait_mean <= 1h")}};
  EXPECT_THROW(planner::check_drill_targets({sc}, typo, &traces), sim::InputErrors);
  EXPECT_EQ(traces.reads(), 2u) << "after its announced runs the cache let the trace go";
}

// issue #21: without `tenants:` nobody set an entitlement (each tenant is compared with an equal
// 1/N only for the share ratios), so compare reports no borrowing above one; the fairness block
// says so.
TEST(Compare, NoBorrowingWithoutTenantEntitlements) {
  const auto sc = scenarios::load_scenario(write_scenario("cmp-plain.yaml", ""));
  ASSERT_TRUE(sc.tenants.empty());
  const auto result = planner::compare(sc, {"fifo"});
  ASSERT_TRUE(result.runs[0].done);
  const auto& f = result.runs[0].fairness;
  EXPECT_FALSE(f.entitlements_set);
  EXPECT_GT(f.borrowed_gpu_hours, 0);  // measured against 1/3 each, but not reported
  const auto t = planner::compare_table(result);
  const auto& names = t.columns[0].strings;
  for (const char* m : {"borrowed_gpu_hours", "borrowing_starts", "tenant:t0.borrowed_gpu_hours"})
    EXPECT_EQ(std::find(names.begin(), names.end(), m), names.end()) << m;
  EXPECT_NE(std::find(names.begin(), names.end(), "reclaims"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "tenant:t0.share"), names.end());
  std::ostringstream text, json;
  results::print_fairness(text, f);
  EXPECT_NE(text.str().find("borrowing: not measured (the scenario sets no tenants"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("above entitlement"), std::string::npos) << text.str();
  results::print_fairness_json(json, f);
  EXPECT_NE(json.str().find("\"entitlements_set\": false"), std::string::npos);
}

TEST(Compare, GroupStatsPerTenantAndKind) {
  results::RunResult r;
  r.tenants = {"a", "b"};
  r.sim_end = 100 * sim::kSecond;
  auto add = [&](std::uint32_t tenant, std::uint8_t kind, sim::Tick submit, sim::Tick start, sim::Tick end,
                 std::uint8_t state) {
    results::JobRecord j;
    j.tenant = tenant;
    j.kind = kind;
    j.gpus = 2;
    j.submit = submit * sim::kSecond;
    j.start = start < 0 ? -1 : start * sim::kSecond;
    j.end = end < 0 ? -1 : end * sim::kSecond;
    j.state = state;
    r.jobs.push_back(j);
  };
  add(0, 0, 0, 10, 20, 2);  // a train: wait 10, JCT 20
  add(0, 0, 0, 30, 40, 2);  // a train: wait 30, JCT 40
  add(1, 3, 5, -1, -1, 5);  // b batch rejected
  add(1, 1, 0, 0, 50, 3);   // b inference failed: wait 0, no JCT
  const auto t = planner::stats_by_tenant(r);
  EXPECT_DOUBLE_EQ(t[0].wait_mean_s, 20);
  EXPECT_DOUBLE_EQ(t[0].wait_p95_s, 30);
  EXPECT_DOUBLE_EQ(t[0].jct_mean_s, 30);
  EXPECT_DOUBLE_EQ(t[0].gpu_hours, 2.0 * 20 / 3600);
  EXPECT_EQ(t[1].rejected, 1);
  EXPECT_EQ(t[1].completed, 0);
  EXPECT_TRUE(std::isnan(t[1].jct_mean_s));
  const auto k = planner::stats_by_kind(r);
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k[0].name, "train");
  EXPECT_EQ(k[0].jobs, 2);
  EXPECT_EQ(k[1].name, "inference");
  EXPECT_DOUBLE_EQ(k[1].wait_mean_s, 0);
  EXPECT_EQ(k[2].jobs, 0);
  EXPECT_EQ(k[3].rejected, 1);
}

TEST(Compare, GroupStatsCountNeverStartedJobsCensoredAtTheEnd) {
  results::RunResult r;
  r.tenants = {"a"};
  r.sim_end = 100 * sim::kSecond;
  auto add = [&](sim::Tick submit, sim::Tick start, sim::Tick end, models::JobState state) {
    results::JobRecord j;
    j.gpus = 1;
    j.submit = submit * sim::kSecond;
    j.start = start < 0 ? -1 : start * sim::kSecond;
    j.end = end < 0 ? -1 : end * sim::kSecond;
    j.state = static_cast<std::uint8_t>(state);
    r.jobs.push_back(j);
  };
  add(0, 10, 50, models::JobState::Completed);    // wait 10
  add(20, -1, -1, models::JobState::Unfinished);  // never started: wait 80 (censored at sim_end)
  add(30, -1, 30, models::JobState::Rejected);    // no wait
  const auto t = planner::stats_by_tenant(r);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].never_started, 1);
  EXPECT_EQ(t[0].rejected, 1);
  EXPECT_EQ(t[0].started, 1);
  EXPECT_DOUBLE_EQ(t[0].wait_mean_s, 45);
  EXPECT_DOUBLE_EQ(t[0].wait_p95_s, 80);
  const auto k = planner::stats_by_kind(r);
  EXPECT_EQ(k[0].never_started, 1);
  EXPECT_DOUBLE_EQ(k[0].wait_mean_s, 45);
}

// Two policies on which different tenants come out biggest, and which list the tenants in another
// order: every tenant gets its rows, each run's figures found by name, NaN where a run lacks one.
TEST(Compare, TenantRowsCoverEveryRunByName) {
  planner::CompareResult r;
  r.scenario_name = "two";
  auto group = [](const char* name, std::int64_t jobs, double gpu_hours, std::int64_t never_started) {
    planner::GroupStats g;
    g.name = name;
    g.jobs = jobs;
    g.gpu_hours = gpu_hours;
    g.never_started = never_started;
    return g;
  };
  auto fair = [](const char* name, double share) {
    results::TenantFairness f;
    f.name = name;
    f.share = share;
    return f;
  };
  planner::PolicyRun k8s, slurm;
  k8s.policy = "kubernetes";
  k8s.done = true;
  k8s.summary.never_started = 90;
  k8s.by_tenant = {group("small", 10, 50, 0), group("big", 90, 1, 90)};  // big never got going
  k8s.fairness.tenants = {fair("small", 0.5), fair("big", 0.01)};
  slurm.policy = "slurm";
  slurm.done = true;
  slurm.by_tenant = {group("big", 90, 400, 0), group("small", 10, 40, 0), group("late", 3, 2, 0)};
  slurm.fairness.tenants = {fair("big", 0.8), fair("small", 0.1), fair("late", 0.01)};
  planner::PolicyRun failed;
  failed.policy = "kai";
  failed.error = "boom";
  failed.by_tenant = {group("ghost", 5, 999, 0)};  // a failed run names no tenant
  r.runs = {k8s, slurm, failed};
  const auto t = planner::compare_table(r);
  EXPECT_EQ(metric(t, "tenant:big.gpu_hours", "kubernetes"), 1);
  EXPECT_EQ(metric(t, "tenant:big.gpu_hours", "slurm"), 400);
  EXPECT_EQ(metric(t, "tenant:small.gpu_hours", "kubernetes"), 50);
  EXPECT_EQ(metric(t, "tenant:small.gpu_hours", "slurm"), 40);
  EXPECT_EQ(metric(t, "tenant:big.never_started", "kubernetes"), 90);
  EXPECT_EQ(metric(t, "tenant:big.share", "slurm"), 0.8);
  EXPECT_EQ(metric(t, "tenant:small.share", "slurm"), 0.1);
  EXPECT_EQ(metric(t, "tenant:late.gpu_hours", "slurm"), 2);
  EXPECT_TRUE(std::isnan(metric(t, "tenant:late.gpu_hours", "kubernetes")));
  EXPECT_TRUE(std::isnan(metric(t, "tenant:late.share", "kubernetes")));
  EXPECT_EQ(metric(t, "never_started", "kubernetes"), 90);
  EXPECT_EQ(metric(t, "never_started", "slurm"), 0);
  // never_started comes right after unfinished.
  const auto& names = t.columns[0].strings;
  const auto at = std::find(names.begin(), names.end(), "unfinished");
  ASSERT_NE(at, names.end());
  EXPECT_EQ(*(at + 1), "never_started");
  EXPECT_EQ(std::find(names.begin(), names.end(), "tenant:ghost.gpu_hours"), names.end());
  // The tenants shown first: by their largest GPU-hours under any finished policy.
  EXPECT_EQ(planner::largest_tenants(r, 2), (std::vector<std::string>{"big", "small"}));
  EXPECT_EQ(planner::largest_tenants(r, 10), (std::vector<std::string>{"big", "small", "late"}));
  r.runs[1].by_tenant[2].gpu_hours = 50;  // ties with small: by name
  EXPECT_EQ(planner::largest_tenants(r, 10), (std::vector<std::string>{"big", "late", "small"}));
}

#include "results/report.hpp"

TEST(Report, NiceTicksAndEscaping) {
  EXPECT_EQ(results::nice_ticks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_EQ(results::nice_ticks(0, 17.2, 5), (std::vector<double>{0, 5, 10, 15}));
  EXPECT_EQ(results::nice_ticks(768, 1280, 4), (std::vector<double>{800, 1000, 1200}));
  EXPECT_EQ(results::html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

TEST(Report, ChartsAreInlineSvgWithEscapedLabelsAndLegends) {
  results::Chart c;
  c.title = "wait <p95>";
  c.x_label = "hours";
  c.y_label = "jobs";
  const std::string one = results::svg_chart(c, {results::Series{"a", {0, 1, 2}, {0, 5, 3}}});
  EXPECT_EQ(one.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(one.find("wait &lt;p95&gt;"), std::string::npos);
  EXPECT_EQ(one.find("<p95>"), std::string::npos);
  EXPECT_EQ(one.find("stroke-width=\"3\""), std::string::npos) << "no legend for a single series";
  // A NaN breaks the line into two polylines; two series get a legend.
  const std::string two = results::svg_chart(
      c, {results::Series{"a", {0, 1, 2, 3}, {1, std::nan(""), 2, 3}}, results::Series{"b", {0, 3}, {0, 1}}});
  std::size_t polylines = 0;
  for (std::size_t p = two.find("<polyline"); p != std::string::npos; p = two.find("<polyline", p + 1)) ++polylines;
  EXPECT_EQ(polylines, 3u);
  EXPECT_NE(two.find("<title>b</title><tspan x=\"788\" dy=\"0\">b</tspan></text>"), std::string::npos) << two;
  // issue #21: tick labels have thousands separators like every other number.
  const std::string big = results::svg_chart(c, {results::Series{"a", {0, 1, 2}, {0, 56000, 3}}});
  EXPECT_NE(big.find(">40,000</text>"), std::string::npos) << big;
  EXPECT_EQ(big.find(">40000</text>"), std::string::npos) << big;
}

// issue #21: categorical variants are dots, never joined; numeric ones get ticks at the values
// swept; legends keep whole names; time axes read dates when the trace has one.
TEST(Report, CategoriesSweptTicksLegendsAndDates) {
  results::Chart c;
  c.title = "mean wait";
  c.categories = {"fifo", "sjf"};
  const std::string cat = results::svg_chart(c, {results::Series{"nodes=768, arrival_scale=0.8", {0, 1}, {3, 4}},
                                                 results::Series{"nodes=1024", {0, 1}, {1, 2}}});
  EXPECT_EQ(cat.find("<polyline"), std::string::npos) << "fifo and sjf joined by a line";
  std::size_t dots = 0;
  for (std::size_t p = cat.find("<circle"); p != std::string::npos; p = cat.find("<circle", p + 1)) ++dots;
  EXPECT_EQ(dots, 4u + 2u);  // four points, two legend dots
  EXPECT_NE(cat.find(">fifo</text>"), std::string::npos);
  EXPECT_NE(cat.find(">nodes=768,</tspan>"), std::string::npos) << cat;
  EXPECT_NE(cat.find(">arrival_scale=0.8</tspan>"), std::string::npos) << cat;
  EXPECT_EQ(cat.find("~"), std::string::npos) << "a legend cut off";

  results::Chart n;
  n.x_ticks = {768, 1024, 1280};
  n.x_tick_labels = {"768", "1024", "1280"};
  const std::string num = results::svg_chart(n, {results::Series{"a", {768, 1024, 1280}, {5, 3, 2}}});
  for (const char* v : {">768</text>", ">1024</text>", ">1280</text>"}) EXPECT_NE(num.find(v), std::string::npos) << v;
  EXPECT_EQ(num.find(">1000</text>"), std::string::npos);

  results::Chart t;
  t.calendar_ms = 1272672000000LL;  // 2010-05-01 00:00 UTC
  t.x_unit_ms = 86400000.0;         // x in days
  const std::string dates = results::svg_chart(t, {results::Series{"a", {0, 14}, {1, 2}}});
  EXPECT_NE(dates.find(">2010-05-01</text>"), std::string::npos) << dates;
  EXPECT_NE(dates.find(">2010-05-03</text>"), std::string::npos) << dates;
  EXPECT_EQ(dates.find(">2010-05-02</text>"), std::string::npos) << "every 2 days over 14";
}

// issue #21: a drills section for each run, with the numbers `headroom run` prints.
TEST(Report, EachRunHasADrillsSection) {
  results::ReportInput in;
  in.file = "drill.h5";
  in.run.scenario_name = "drill";
  in.run.policy = "kai";
  in.run.sim_end = 14 * sim::kDay;
  in.run.unix_start = 1272672000;
  in.run.total_gpus = 8192;
  in.run.node_outages = 3067;
  in.run.jobs_killed = 1299;
  in.run.job_retries = 1294;
  in.run.jobs_failed_by_failure = 5;
  in.run.failure_lost_gpu_ms = static_cast<std::int64_t>(54869.3 * 3600e3);
  in.run.drill_start = {3 * sim::kDay, 8 * sim::kDay};
  in.run.drill_recovered = {3 * sim::kDay + 6 * sim::kHour, -1};
  in.summary = results::summarize(in.run);
  const results::FailureSummary& f = in.summary.failures;
  ASSERT_EQ(f.drill_recovery_s.size(), 2u);
  const std::string html = results::render_report({in});
  EXPECT_NE(html.find("<h3>Drills</h3>"), std::string::npos);
  EXPECT_NE(html.find("<td>3,067</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>1,299</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>54,869.3 GPU-h</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>1 of 2</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>2010-05-04 00:00 UTC</td><td>6h 00m</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>2010-05-09 00:00 UTC</td><td>not by the end of the run</td>"), std::string::npos);
  // A run without drills has no such section.
  results::ReportInput calm;
  calm.run.sim_end = sim::kDay;
  calm.summary = results::summarize(calm.run);
  EXPECT_EQ(results::render_report({calm}).find("<h3>Drills</h3>"), std::string::npos);
  // A banner of two lines (a warning and a note) is two paragraphs.
  calm.summary.banner = "WARNING: 1 of 4 jobs (25.0%) never started\nNOTE: the 20 started jobs of 8 GPUs waited 2d";
  const std::string two = results::render_report({calm});
  EXPECT_NE(two.find("<p class=\"warning\"><b>WARNING: 1 of 4 jobs (25.0%) never started</b></p><p class=\"warning\">"
                     "<b>NOTE: the 20 started jobs of 8 GPUs waited 2d</b></p>"),
            std::string::npos);
}

// issue #21: plan answers with GPUs and cost at the answer, and the scenario's own size for the margin.
TEST(Plan, GivesGpusCostAndTheCurrentSize) {
  const auto path = write_scenario("plan-cost.yaml", "costs: {gpu_hour: {A100: 2.0, T4: 0.5}, currency: EUR}\n");
  planner::PlanRequest req;
  req.scenario = path;
  req.vary = "cluster.pools.a100.nodes";
  req.lo = 2;
  req.hi = 3;
  req.targets = {planner::parse_target("wait_mean <= 30d")};
  const auto r = planner::plan(req);
  ASSERT_TRUE(r.answer);
  EXPECT_EQ(*r.answer, 2);
  ASSERT_TRUE(r.current);
  EXPECT_EQ(*r.current, 4);       // a100 nodes as the file has them
  EXPECT_EQ(r.current_gpus, 40);  // 4 x 8 A100 + 2 x 4 T4
  ASSERT_EQ(r.curve.size(), 2u);
  EXPECT_EQ(r.curve[0].gpus, 24);  // 2 x 8 + 8
  EXPECT_EQ(r.curve[1].gpus, 32);
  EXPECT_EQ(r.curve[0].currency, "EUR");
  // The cost is the run's own (Summary::cost) at that size.
  planner::SweepSpec spec = planner::load_sweep(path);
  spec.variables = {planner::Variable{"cluster.pools.a100.nodes", {"2"}, 0, 0}};
  const auto sc = planner::point_scenario(spec, planner::SweepPoint{0, {0}, spec.seeds[0]});
  const auto s = results::summarize(planner::run_scenario(sc).result);
  ASSERT_TRUE(s.priced);
  EXPECT_DOUBLE_EQ(r.curve[0].cost, s.cost);
  // Varying something other than a pool's nodes: no current value, GPUs still known.
  req.vary = "workload.arrival_scale";
  req.lo = req.hi = 1;
  const auto other = planner::plan(req);
  EXPECT_FALSE(other.current);
  EXPECT_EQ(other.current_gpus, 40);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// issue #36 item 12: node outages from the audit log, merged by kind, as the report marks them.
TEST(Report, OutagesFromTheAuditLogAreMarkedOnCharts) {
  constexpr std::uint8_t kDown = 7, kUp = 8, kDrain = 9;
  results::RunResult r;
  r.sim_end = 100 * sim::kHour;
  r.reasons = {"", "outage: rack A power", "node failure", "maintenance"};
  const auto ev = [](sim::Tick t, std::uint8_t kind, std::int32_t node, std::uint32_t reason) {
    return results::EventRecord{t, kind, 0xffffffffu, node, reason};
  };
  r.events = {ev(10 * sim::kHour, kDown, 0, 1),  ev(10 * sim::kHour, kDown, 1, 1),  // rack A: 6 hours
              ev(20 * sim::kHour, kDrain, 2, 3), ev(21 * sim::kHour, kDown, 2, 3),  // drained, down, back
              ev(16 * sim::kHour, kUp, 0, 0),    ev(16 * sim::kHour, kUp, 1, 0),
              ev(22 * sim::kHour, kUp, 2, 0),    ev(90 * sim::kHour, kDown, 3, 2)};  // never back
  const auto spans = results::outage_spans(r);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].kind, 0);
  EXPECT_EQ(spans[0].start, 10 * sim::kHour);
  EXPECT_EQ(spans[0].end, 16 * sim::kHour);
  EXPECT_EQ(spans[0].nodes, 2);
  EXPECT_EQ(spans[0].what, "rack A power");
  EXPECT_EQ(spans[1].kind, 1);  // from the cordon until back
  EXPECT_EQ(spans[1].start, 20 * sim::kHour);
  EXPECT_EQ(spans[1].end, 22 * sim::kHour);
  EXPECT_EQ(spans[2].kind, 2);
  EXPECT_EQ(spans[2].end, 100 * sim::kHour);
  const auto bands = results::outage_bands(spans, 0, static_cast<double>(sim::kHour));
  ASSERT_EQ(bands.size(), 3u);
  EXPECT_DOUBLE_EQ(bands[0].x0, 10);
  EXPECT_DOUBLE_EQ(bands[0].x1, 16);
  EXPECT_EQ(bands[0].tip, "outage: rack A power, 2 nodes, 6h 00m");
  EXPECT_TRUE(bands[0].full);
  EXPECT_FALSE(bands[1].full);  // drains and failures: a strip along the top
  results::Chart c;
  c.bands = bands;
  const std::string svg = results::svg_chart(c, {results::Series{"GPUs", {0, 100}, {1, 2}}});
  EXPECT_EQ(occurrences(svg, "<g class=\"band\">"), 3u);
  EXPECT_NE(svg.find("<title>outage: rack A power, 2 nodes, 6h 00m</title>"), std::string::npos);
  for (const char* key : {">outage</tspan>", ">maintenance drain</tspan>", ">node failure</tspan>"})
    EXPECT_NE(svg.find(key), std::string::npos) << key << svg;
  // A one-hour outage over 14 days is still 3 px wide.
  results::Chart wide;
  wide.bands = {results::Chart::Band{100, 101, "#C62828", "outage", "1 h", true, 0}};
  const std::string thin = results::svg_chart(wide, {results::Series{"a", {0, 14 * 24}, {1, 2}}});
  EXPECT_NE(thin.find("width=\"3.0\" height"), std::string::npos) << thin;
}

// issue #36 item 4: 20 runs, 20 colours, every name whole in a legend under the chart.
TEST(Report, TwentyRunsTwentyColoursWholeNames) {
  std::set<std::string> colours;
  for (std::size_t k = 0; k < 20; ++k) colours.insert(results::series_colour(k));
  EXPECT_EQ(colours.size(), 20u);
  std::vector<results::Series> runs;
  for (const char* drill : {"poc-failure-drill", "poc-permission-drill", "poc-real-tasks", "poc-resource-shortage"})
    for (const char* system : {"kubernetes", "volcano", "slurm", "kai", "kueue"})
      runs.push_back(results::Series{std::string(drill) + " \u00b7 " + system, {0, 1}, {1, 2}});
  results::Chart c;
  const std::string svg = results::svg_chart(c, runs);
  EXPECT_EQ(occurrences(svg, "<text class=\"key\""), 20u);
  for (const auto& s : runs) EXPECT_NE(svg.find("<title>" + s.name + "</title>"), std::string::npos) << s.name;
  EXPECT_NE(svg.find(">poc-resource-shortage \u00b7</tspan>"), std::string::npos) << svg;  // wrapped, not cut
  EXPECT_EQ(svg.find("~"), std::string::npos);
  // Under the plot: the chart is taller than asked and every key lies inside it.
  EXPECT_EQ(svg.find("height=\"300\" viewBox"), std::string::npos);
}

// issue #35 item 5: a split site's run shows its partitions (utilization, waits, the boundary's
// cost) and its node moves in the report; a run without a split shows none of it.
TEST(Report, SplitRunShowsItsPartitionsAndMoves) {
  results::ReportInput in;
  in.file = "split.h5";
  in.run.scenario_name = "split";
  in.run.policy = "split";
  in.run.sim_end = sim::kDay;
  in.summary = results::summarize(in.run);
  EXPECT_EQ(results::render_report({in}).find("Partitions of the split site"), std::string::npos);
  results::PartitionSummary a;
  a.name = "slurm";
  a.policy = "slurm";
  a.gpus = 7776;
  a.jobs = 13607;
  a.gpu_utilization = 0.664;
  a.boundary_idle_gpu_hours = 191.1;
  a.nodes_out = 628;
  a.nodes_in = 654;
  a.gpus_at_end = 7984;
  in.summary.partitions.push_back(a);
  in.summary.moves = 1282;
  in.summary.moves_on_demand = 624;
  in.summary.move_drain_mean_s = 7020;
  in.summary.move_delay_mean_s = 300;
  in.summary.boundary_idle_gpu_hours = 191.1;
  const std::string html = results::render_report({in});
  EXPECT_NE(html.find("<h3>Partitions of the split site</h3>"), std::string::npos);
  EXPECT_NE(html.find("<td>slurm</td><td>slurm</td><td>7,776</td><td>13,607</td><td>66.4%</td>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>628 / 654</td><td>7,984</td>"), std::string::npos);
  EXPECT_NE(html.find("Node moves: 1,282 (624 on demand), mean drain 1h 57m, mean delay 5m 00s"), std::string::npos);
}

// issue #36 item 5: the side-by-side KPIs of runs of several drills, one table a drill, headed
// by the system, the file only as hover text.
TEST(Report, RunsSideBySideOneTableADrill) {
  std::vector<results::ReportInput> in;
  for (const char* drill : {"poc-failure-drill", "poc-load-drill"})
    for (const char* system : {"slurm", "kai"}) {
      results::ReportInput r;
      r.file = std::string("/very/long/path/") + drill + "-" + system + ".h5";
      r.run.scenario_name = drill;
      r.run.policy = system;
      r.run.sim_end = sim::kDay;
      r.summary = results::summarize(r.run);
      in.push_back(std::move(r));
    }
  const std::string html = results::render_report(in);
  EXPECT_EQ(occurrences(html, "<table class=\"side\">"), 2u);
  EXPECT_NE(html.find("<h3>poc-failure-drill</h3>"), std::string::npos);
  EXPECT_NE(html.find("<th title=\"/very/long/path/poc-load-drill-kai.h5\">kai</th>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<th>/very/long"), std::string::npos);
  // The drills table under the overlays names drill and system.
  EXPECT_NE(html.find("<td>poc-load-drill \u00b7 slurm</td>"), std::string::npos) << html;
}

TEST(Report, RendersRunAndSweepFilesSelfContained) {
  const auto path = write_scenario("report.yaml", "variants:\n  policy: [fifo, sjf]\n");
  const auto dir = std::filesystem::temp_directory_path() / ("headroom-report-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  planner::SweepOptions o;
  o.keep_runs_dir = dir.string();
  const auto sweep = planner::run_sweep(planner::load_sweep(path), o);
  results::write_table_hdf5(planner::sweep_table(sweep), (dir / "sweep.h5").string(), "runs");
  std::vector<results::ReportInput> inputs = {results::load_report_input((dir / "run-0.h5").string()),
                                              results::load_report_input((dir / "run-1.h5").string()),
                                              results::load_report_input((dir / "sweep.h5").string())};
  EXPECT_FALSE(inputs[0].sweep);
  EXPECT_TRUE(inputs[2].sweep);
  EXPECT_EQ(inputs[0].summary.jobs, 200);
  const std::string html = results::render_report(inputs);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Runs side by side"), std::string::npos);
  // fifo and sjf run the same 200 jobs: that row is greyed as the same under every run; the
  // mean wait differs and is not.
  EXPECT_NE(html.find("<tr class=\"same\" title=\"the same under every run: does not tell them apart\"><td>jobs</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>wait mean</td>"), std::string::npos);
  EXPECT_NE(html.find("GPU utilization over time"), std::string::npos);
  EXPECT_NE(html.find("Wait CDF per tenant"), std::string::npos);
  EXPECT_NE(html.find("KPIs against policy"), std::string::npos);
  EXPECT_NE(html.find("Jain&#39;s index over time"), std::string::npos);
  // Self-contained: no scripts, no links to other files or hosts.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg"), html.find("xmlns=\"http://www.w3.org/2000/svg\"") + 7);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_THROW(results::load_report_input((dir / "missing.h5").string()), sim::InputError);
  std::filesystem::remove_all(dir);
}

// The rules that keep jobs on part of the pools by their queue (compare's node-rules line): a Slurm
// partition whose Nodes leave out a pool, with the Default partition taking jobs that name none;
// Kueue's flavors that select part of the pools, said without counting; neither when every pool
// is named.
TEST(Compare, NodeRulesOfSlurmPartitionsAndKueueFlavors) {
  const auto sc = scenarios::load_scenario(write_scenario("rules.yaml", ""));  // pools a100 and t4
  auto param = [](const std::string& text) { return policies::ParamValue{text, "rules.yaml", 1, 1}; };
  const policies::SystemModule* slurm = policies::find_system("slurm");
  ASSERT_NE(slurm, nullptr);
  ASSERT_NE(slurm->node_rules, nullptr);
  policies::PolicyParams p;
  p["partitions.big.Nodes"] = param("a100");
  p["partitions.small.Nodes"] = param("t4");
  p["partitions.small.Default"] = param("YES");
  p["partitions.all.Nodes"] = param("a100,t4");
  p["partitions.every.Nodes"] = param("ALL");
  const policies::NodeRules r = slurm->node_rules(p, sc.cluster);
  ASSERT_EQ(r.queues.size(), 2u);
  EXPECT_EQ(r.queues[0].queue, "big");
  EXPECT_EQ(r.queues[0].pools, std::vector<std::string>{"a100"});
  EXPECT_FALSE(r.queues[0].takes_unnamed);
  EXPECT_EQ(r.queues[1].queue, "small");
  EXPECT_TRUE(r.queues[1].takes_unnamed);
  EXPECT_FALSE(r.other);
  // Without partitions every queue is a partition over all nodes.
  EXPECT_TRUE(slurm->node_rules({}, sc.cluster).queues.empty());

  const policies::SystemModule* kueue = policies::find_system("kueue");
  ASSERT_NE(kueue->node_rules, nullptr);
  policies::PolicyParams k;
  k["resourceFlavors.default.pools"] = param("[a100, t4]");
  EXPECT_FALSE(kueue->node_rules(k, sc.cluster).other);
  k["resourceFlavors.fast.pools"] = param("[a100]");
  EXPECT_TRUE(kueue->node_rules(k, sc.cluster).other);
  EXPECT_TRUE(kueue->node_rules(k, sc.cluster).queues.empty());
  // Systems with no node rules by queue: the line names them among those placing jobs anywhere.
  EXPECT_EQ(policies::find_system("kubernetes")->node_rules, nullptr);
  EXPECT_EQ(policies::find_system("volcano")->node_rules, nullptr);
  EXPECT_EQ(policies::find_system("kai")->node_rules, nullptr);
}

// workload.node_selectors: the jobs of queue q get the set {t4} (models::Job::node_set) and run on
// the two T4 nodes only (ids 4 and 5), under fifo as under every system (bakeoff_test.cpp).
// compare gives a system without partitions the Slurm partitions of the scenario's own block as
// selectors, unless the scenario writes its own (even empty: none).
TEST(Compare, NodeSelectorsKeepAQueuesJobsOnItsPools) {
  const auto sc = scenarios::load_scenario(write_scenario("sel.yaml", "  node_selectors: {q: [t4]}\n"));
  ASSERT_EQ(sc.workload.node_selectors.size(), 1u);
  const models::Workload w = scenarios::build_workload(sc);
  ASSERT_EQ(w.node_sets, (std::vector<std::vector<std::string>>{{"t4"}}));
  for (const auto& j : w.jobs) EXPECT_EQ(j.node_set, 1);
  const auto o = planner::run_scenario(sc);
  std::size_t started = 0;
  for (const auto& j : o.result.jobs) {
    if (j.start < 0) continue;
    ++started;
    EXPECT_EQ(j.pool, 1) << "job " << j.trace_id;
    EXPECT_GE(j.first_node, 4);
  }
  EXPECT_EQ(started, 200u);

  const std::string path = write_scenario("sel-slurm.yaml", "");
  std::string text = file_text(path);
  const std::string slurm_block = "policy:\n  name: slurm\n  partitions:\n    q: {Nodes: t4}\n";
  text.replace(text.find("policy: fifo\n"), 13, slurm_block);
  const auto base = scenarios::parse_scenario(text, path);
  const auto k8s = planner::scenario_for_policy(base, "kubernetes");
  // q is the only partition, so the Default one: jobs naming no queue ("default", "unknown") too.
  ASSERT_EQ(k8s.workload.node_selectors.size(), 3u);
  EXPECT_EQ(k8s.workload.node_selectors[0].first, "q");
  EXPECT_EQ(k8s.workload.node_selectors[1].first, "default");
  EXPECT_EQ(k8s.workload.node_selectors[2].first, "unknown");
  EXPECT_EQ(k8s.workload.node_selectors[0].second, std::vector<std::string>{"t4"});
  EXPECT_EQ(k8s.workload.node_selectors_from, "slurm's partitions");
  EXPECT_TRUE(planner::scenario_for_policy(base, "slurm").workload.node_selectors.empty());
  // Kueue gets a ResourceFlavor per pool, each pool's GPUs as its quota, so that a workload is
  // admitted against the pools its pods may use; without selectors one flavor over all pools.
  const auto value = param_text;
  const auto kueue = planner::scenario_for_policy(base, "kueue").policy.params;
  EXPECT_EQ(value(kueue, "resourceFlavors.t4.pools"), "[t4]");
  EXPECT_EQ(value(kueue, "resourceFlavors.a100.pools"), "[a100]");
  EXPECT_EQ(value(kueue, "clusterQueues.all-tenants.resources.t4.gpu.nominalQuota"), "8");
  EXPECT_EQ(value(kueue, "clusterQueues.all-tenants.resources.a100.gpu.nominalQuota"), "32");
  EXPECT_EQ(value(kueue, "resourceFlavors.default.pools"), "(none)");
  text.replace(text.find("  trace: trace.csv\n"), 19, "  trace: trace.csv\n  node_selectors: {}\n");
  const auto opted_out = scenarios::parse_scenario(text, path);
  EXPECT_TRUE(opted_out.workload.node_selectors_given);
  EXPECT_TRUE(planner::scenario_for_policy(opted_out, "kubernetes").workload.node_selectors.empty());
  EXPECT_EQ(value(planner::scenario_for_policy(opted_out, "kueue").policy.params, "resourceFlavors.default.pools"),
            "[a100, t4]");
}

// Volcano's proportion water-fills deserved over the whole cluster and knows no node selector.
// Given Slurm's partitions as node selectors, compare also gives Volcano a Queue per partition,
// capability the GPUs of its pools: without it the queue kept to the one T4 node (six 8-GPU jobs
// waiting) is deserved half the cluster, and the queue on the four A100 nodes is held to the
// other half, two of its four jobs waiting beside idle nodes (CEA Curie's full log: 29.5 % busy,
// bench/RESULTS.md). A job of a queue that is no partition is rejected under both, as Volcano's
// admission rejects a job of an undeclared queue.
TEST(Compare, VolcanoQueuesOfPartitionsKeptToTheirPoolsGetTheirPoolsAsCapability) {
  const std::string path = write_strand("strand");
  const auto base = scenarios::load_scenario(path);
  const auto volcano = planner::scenario_for_policy(base, "volcano");
  auto value = [&](const std::string& key) { return param_text(volcano.policy.params, key); };
  EXPECT_EQ(value("queues.big.weight"), "1");
  EXPECT_EQ(value("queues.small.weight"), "1");
  EXPECT_EQ(value("queues.big.capability.gpu"), "32");
  EXPECT_EQ(value("queues.small.capability.gpu"), "8");
  EXPECT_EQ(value("queues.default.capability.gpu"), "32");  // jobs naming no queue: the Default partition's
  EXPECT_EQ(value("queues.unknown.capability.gpu"), "(none)");
  EXPECT_EQ(volcano.workload.pools_set_up, "a Queue per partition, capability the GPUs of its pools");

  // The starts of the big queue's jobs (trace ids 6-9) and the rejected jobs.
  auto run = [](const scenarios::Scenario& sc) {
    const auto o = planner::run_scenario(sc);
    std::vector<sim::Tick> big;
    int rejected = 0;
    for (const auto& j : o.result.jobs) {
      if (j.trace_id >= 6 && j.trace_id <= 9) big.push_back(j.start);
      rejected += j.state == static_cast<std::uint8_t>(models::JobState::Rejected);
    }
    return std::pair{big, rejected};
  };
  const auto derived = run(volcano);
  EXPECT_EQ(derived.first, (std::vector<sim::Tick>{0, 0, 0, 0}));
  EXPECT_EQ(derived.second, 1);
  EXPECT_EQ(run(planner::scenario_for_policy(base, "slurm")), derived);
  // The same selectors written in the scenario: Volcano runs with its defaults (no queue
  // declared, no capability; the job of queue "other" runs anywhere). Three queues are deserved a
  // third of the cluster each, so one big job starts at once, beside two idle A100 nodes.
  const std::string text = std::string(kStrand) + "  node_selectors: {big: [big], small: [small], default: [big]}\n";
  const auto written = planner::scenario_for_policy(scenarios::parse_scenario(text, path), "volcano");
  EXPECT_TRUE(written.policy.params.empty());
  const auto plain = run(written);
  EXPECT_EQ(plain.first, (std::vector<sim::Tick>{0, 1000 * sim::kSecond, 2000 * sim::kSecond, 2000 * sim::kSecond}));
  EXPECT_EQ(plain.second, 0);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// With tenants and the scenario's Slurm partitions as node selectors, Kueue gets a ResourceFlavor
// per pool and each tenant's quota split over the pools by their GPUs (A100 32, T4 8 of 40), by
// largest remainder: t0's 8 as 6 + 2, t1's 24 as 19 + 5; "unlisted-tenants" gets what is left.
TEST(Compare, KueueTenantQuotasSplitOverThePoolsOfTheirFlavors) {
  const std::string path =
      write_scenario("tenant-pools.yaml",
                     "tenants:\n  - {name: t0, gpus: 8}\n  - {name: t1, weight: 3, max_gpus: 30}\n  - {name: t2}\n");
  std::string text = file_text(path);
  text.replace(text.find("policy: fifo\n"), 13, "policy:\n  name: slurm\n  partitions:\n    q: {Nodes: t4}\n");
  const auto base = scenarios::parse_scenario(text, path);
  const auto kueue = planner::scenario_for_policy(base, "kueue");
  auto value = [&](const std::string& key) { return param_text(kueue.policy.params, key); };
  EXPECT_EQ(value("resourceFlavors.a100.pools"), "[a100]");
  EXPECT_EQ(value("resourceFlavors.t4.pools"), "[t4]");
  EXPECT_EQ(value("resourceFlavors.default.pools"), "(none)");
  EXPECT_EQ(value("clusterQueues.t0.cohort"), "all");
  EXPECT_EQ(value("clusterQueues.t0.resources.a100.gpu.nominalQuota"), "6");
  EXPECT_EQ(value("clusterQueues.t0.resources.t4.gpu.nominalQuota"), "2");
  EXPECT_EQ(value("clusterQueues.t0.resources.t4.gpu.borrowingLimit"), "(none)");
  EXPECT_EQ(value("clusterQueues.t1.resources.a100.gpu.nominalQuota"), "19");
  EXPECT_EQ(value("clusterQueues.t1.resources.t4.gpu.nominalQuota"), "5");
  // Its cap of 30 leaves 6 to borrow: 4.8 and 1.2 of them.
  EXPECT_EQ(value("clusterQueues.t1.resources.a100.gpu.borrowingLimit"), "5");
  EXPECT_EQ(value("clusterQueues.t1.resources.t4.gpu.borrowingLimit"), "1");
  EXPECT_EQ(value("clusterQueues.t2.resources.a100.gpu.nominalQuota"), "6");
  EXPECT_EQ(value("clusterQueues.t2.resources.t4.gpu.nominalQuota"), "2");
  EXPECT_EQ(value("clusterQueues.unlisted-tenants.resources.a100.gpu.nominalQuota"), "1");
  EXPECT_EQ(value("clusterQueues.unlisted-tenants.resources.t4.gpu.nominalQuota"), "0");
  EXPECT_NE(kueue.workload.pools_set_up.find("each tenant's ClusterQueue quota split over the pools"),
            std::string::npos);
  // The set-up is valid and runs: the jobs of queue q (every job) run on the T4 nodes only.
  const auto o = planner::run_scenario(kueue);
  std::size_t started = 0;
  for (const auto& j : o.result.jobs) {
    if (j.start < 0) continue;
    ++started;
    EXPECT_EQ(j.pool, 1) << "job " << j.trace_id;
  }
  EXPECT_GT(started, 0u);
}

// A sweep's `policy:` variants run each system as compare runs it: Slurm keeps the scenario's own
// block (its partitions; a bare `slurm` used to replace it), and the others get its partitions
// as node selectors and the settings derived from them. Same fingerprints as compare's columns.
TEST(Sweep, PolicyVariantsRunEachSystemAsCompareDoes) {
  const std::string path = write_strand("sweep-pol", "variants:\n  policy: [slurm, volcano, kubernetes]\n");
  const auto spec = planner::load_sweep(path);
  const auto points = planner::expand(spec);
  ASSERT_EQ(points.size(), 3u);
  const auto slurm = planner::point_scenario(spec, points[0]);
  EXPECT_EQ(slurm.policy.name, "slurm");
  EXPECT_EQ(slurm.policy.params.count("partitions.small.Nodes"), 1u);
  EXPECT_TRUE(slurm.workload.node_selectors.empty());
  const auto volcano = planner::point_scenario(spec, points[1]);
  EXPECT_EQ(volcano.policy.params.at("queues.small.capability.gpu").text, "8");
  ASSERT_EQ(volcano.workload.node_selectors.size(), 4u);  // big, small, and the unnamed default, unknown
  EXPECT_EQ(volcano.workload.node_selectors_from, "slurm's partitions");
  const auto swept = planner::run_sweep(spec);
  const auto cmp = planner::compare(scenarios::load_scenario(path), {"slurm", "volcano", "kubernetes"});
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(swept.results[i].status, planner::RunStatus::Done) << swept.results[i].error;
    ASSERT_TRUE(cmp.runs[i].done) << cmp.runs[i].error;
    EXPECT_EQ(swept.results[i].summary.fingerprint, cmp.runs[i].summary.fingerprint) << cmp.runs[i].policy;
  }
  // Queue "other" is no partition: Slurm rejects its job, so does Volcano, where only the
  // partitions are declared queues; Kubernetes has no queues and runs it anywhere.
  EXPECT_EQ(swept.results[0].summary.rejected, 1);
  EXPECT_EQ(swept.results[1].summary.rejected, 1);
  EXPECT_EQ(swept.results[2].summary.rejected, 0);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// headroom compare derives each policy's quota and queue settings from one tenant description.
TEST(Compare, PolicySettingsDerivedFromTheTenantDescription) {
  // 40 GPUs (4 x 8 A100 + 2 x 4 T4); t0 guaranteed 8, t1 weight 3 capped at 24, t2 weight 1.
  const auto sc = scenarios::load_scenario(write_scenario(
      "derive.yaml", "tenants:\n  - {name: t0, gpus: 8}\n  - {name: t1, weight: 3, max_gpus: 24}\n  - {name: t2}\n"));
  const auto value = param_text;
  const auto k8s = planner::derived_params(sc, "kubernetes").value();
  EXPECT_EQ(k8s.size(), 1u);
  EXPECT_EQ(value(k8s, "quota.t1.gpu"), "24");
  const auto kueue = planner::derived_params(sc, "kueue").value();
  EXPECT_EQ(value(kueue, "resourceFlavors.default.pools"), "[a100, t4]");
  EXPECT_EQ(value(kueue, "clusterQueues.t0.namespaces"), "[t0]");
  EXPECT_EQ(value(kueue, "clusterQueues.t0.cohort"), "all");
  EXPECT_EQ(value(kueue, "clusterQueues.t0.resources.default.gpu.nominalQuota"), "8");
  // Weight shares of 40 GPUs over weights 1 + 3 + 1: t1 24, t2 8.
  EXPECT_EQ(value(kueue, "clusterQueues.t1.resources.default.gpu.nominalQuota"), "24");
  EXPECT_EQ(value(kueue, "clusterQueues.t1.resources.default.gpu.borrowingLimit"), "0");
  EXPECT_EQ(value(kueue, "clusterQueues.t2.resources.default.gpu.nominalQuota"), "8");
  EXPECT_EQ(value(kueue, "clusterQueues.t2.resources.default.gpu.borrowingLimit"), "(none)");
  EXPECT_EQ(value(kueue, "clusterQueues.unlisted-tenants.resources.default.gpu.nominalQuota"), "0");
  const auto kai = planner::derived_params(sc, "kai").value();
  EXPECT_EQ(value(kai, "queues.t0.resources.gpu.quota"), "8");
  EXPECT_EQ(value(kai, "queues.t1.resources.gpu.overQuotaWeight"), "3");
  EXPECT_EQ(value(kai, "queues.t1.resources.gpu.limit"), "24");
  EXPECT_EQ(value(kai, "queues.t2.resources.gpu.limit"), "-1");
  const auto volcano = planner::derived_params(sc, "volcano").value();
  EXPECT_EQ(value(volcano, "queues.t1.weight"), "300");
  EXPECT_EQ(value(volcano, "queues.t1.capability.gpu"), "24");
  EXPECT_EQ(value(volcano, "queues.t0.guarantee.resource.gpu"), "8");
  const auto slurm = planner::derived_params(sc, "slurm").value();
  EXPECT_EQ(value(slurm, "accounts.t1.shares"), "300");
  EXPECT_EQ(value(slurm, "accounts.t1.users"), "[t1]");
  EXPECT_FALSE(planner::derived_params(sc, "fifo").has_value());
  // Used when the scenario has no block for the policy; kai and volcano then queue by tenant.
  const auto for_kai = planner::scenario_for_policy(sc, "kai");
  EXPECT_EQ(for_kai.policy.params.size(), kai.size());
  EXPECT_TRUE(for_kai.workload.queue_by_tenant);
  EXPECT_FALSE(planner::scenario_for_policy(sc, "kubernetes").workload.queue_by_tenant);
  // Every derived configuration is valid for its policy and runs: the quota holds t1 to 24 GPUs
  // under kubernetes, and every job finishes under every policy.
  const auto table = planner::compare_table(planner::compare(sc, {"kubernetes", "volcano", "kai", "kueue", "slurm"}));
  for (const char* p : {"kubernetes", "volcano", "kai", "kueue", "slurm"}) {
    EXPECT_EQ(metric(table, "completed", p), 200) << p;
    EXPECT_EQ(metric(table, "rejected", p), 0) << p;
  }
  // No tenants: nothing to derive, but Kueue, which admits nothing without a ClusterQueue, gets
  // one over every namespace with the whole cluster (4 x 8 + 2 x 4 GPUs).
  const auto bare = scenarios::load_scenario(write_scenario("bare.yaml", ""));
  EXPECT_FALSE(planner::derived_params(bare, "volcano").has_value());
  const auto kq = planner::derived_params(bare, "kueue");
  ASSERT_TRUE(kq.has_value());
  EXPECT_EQ(kq->at("clusterQueues.all-tenants.namespaces").text, "[\"*\"]");
  EXPECT_EQ(kq->at("clusterQueues.all-tenants.resources.default.gpu.nominalQuota").text, "40");
  EXPECT_EQ(kq->at("resourceFlavors.default.pools").text, "[a100, t4]");
}

namespace {

// Every field of two results' tables, column by column.
void expect_same_tables(const results::RunResult& a, const results::RunResult& b) {
  namespace ch = results::chunks;
  auto same_rows = [](const auto& x, const auto& y, auto&& each) {
    ASSERT_EQ(x.size(), y.size());
    each([&](const char* name, auto member, auto...) {
      for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i].*member, y[i].*member) << name << " row " << i;
    });
  };
  same_rows(a.jobs, b.jobs, [](auto&& f) { ch::for_each_job_column(f); });
  same_rows(a.events, b.events, [](auto&& f) {
    ch::for_each_event_column(f);
    f("lost_gpu_ms", &results::EventRecord::lost_gpu_ms);
  });
  same_rows(a.placements, b.placements, [](auto&& f) {
    ch::for_each_placement_column(f);
    f("gpu_milli", &results::PlacementRecord::gpu_milli);
    f("device", &results::PlacementRecord::device);
  });
  EXPECT_EQ(a.timeseries.time, b.timeseries.time);
  EXPECT_EQ(a.timeseries.running_jobs, b.timeseries.running_jobs);
  ch::for_each_timeseries_matrix(
      [&](const char* name, auto member) { EXPECT_EQ(a.timeseries.*member, b.timeseries.*member) << name; });
}

}  // namespace

// `headroom run -o` deflates the file's chunks on a worker thread while the simulation goes on
// (RunOptions::stream_chunks). The file must not depend on it: a streamed and a plain run read
// back the same, every chunk offered is taken, and a chunk whose rows changed after it was
// offered is filtered again from the rows as they are.
TEST(StreamChunks, SameFileAsWithoutAndChangedRowsAreFilteredAgain) {
  const auto dir = std::filesystem::temp_directory_path() / ("headroom-stream-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    // 12,000 jobs: about 36,000 audit rows, several full chunks of each event column.
    std::ofstream t(dir / "trace.csv");
    t << "id,tenant,queue,submit,gpus,runtime\n";
    for (int i = 0; i < 12000; ++i)
      t << i << ",t" << i % 3 << ",q," << i * 5 << "," << 1 + i % 8 << "," << 50 + (i * 37) % 400 << "\n";
    std::ofstream s(dir / "s.yaml");
    s << "name: stream\nseed: 1\ncluster:\n  pools:\n    - {name: a, nodes: 8, gpus_per_node: 8, gpu_type: A100}\n"
         "policy: fifo\nworkload:\n  trace: trace.csv\n";
  }
  const auto sc = scenarios::load_scenario((dir / "s.yaml").string());
  planner::RunOptions streamed;
  streamed.stream_chunks = true;
  const auto plain = planner::run_scenario(sc);
  // Streaming needs a second thread (with one it is skipped): allow two, whatever the machine.
  const tbb::global_control two(tbb::global_control::max_allowed_parallelism, 2);
  auto stream = planner::run_scenario(sc, streamed);
  ASSERT_EQ(plain.result.chunk_cache, nullptr);
  ASSERT_NE(stream.result.chunk_cache, nullptr);
  ASSERT_EQ(stream.result.events.size(), 54472u);  // fifo names the head each waiting job queued behind
  ASSERT_EQ(stream.result.placements.size(), 12000u);
  ASSERT_EQ(stream.result.timeseries.time.size(), 4176u);

  const std::string plain_file = (dir / "plain.h5").string(), stream_file = (dir / "stream.h5").string();
  results::write_hdf5(plain.result, plain_file);
  results::write_hdf5(stream.result, stream_file);
  const results::chunks::ChunkCache& cache = *stream.result.chunk_cache;
  // Full chunks are 64 KiB: 8,192 rows of int64, 16,384 of int32, 65,536 of uint8. Offered: the
  // 10 trace columns of /jobs, all chunks (5 int64 columns of 2 chunks, 5 narrower of 1); 6 chunks
  // of events/time, 3 of each int32 event column (job, detail, reason), none of kind;
  // placements/start 1; pending_by_reason ([sample][9 reasons]: 1,820 rows a chunk) 2.
  EXPECT_EQ(cache.offered(), (5u * 2 + 5) + (6 + 3 * 3) + 1 + 2);
  EXPECT_EQ(cache.used(), cache.offered());
  const results::RunResult from_plain = results::read_hdf5(plain_file);
  const results::RunResult from_stream = results::read_hdf5(stream_file);
  expect_same_tables(plain.result, from_plain);
  expect_same_tables(from_plain, from_stream);

  // A row of an offered chunk changed after the run: that chunk is filtered again.
  stream.result.events[100].time += 1;
  stream.result.jobs[5].submit -= 1;
  const std::size_t used_before = cache.used();
  results::write_hdf5(stream.result, stream_file);
  EXPECT_EQ(cache.used() - used_before, cache.offered() - 2);
  const results::RunResult changed = results::read_hdf5(stream_file);
  EXPECT_EQ(changed.events[100].time, stream.result.events[100].time);
  EXPECT_EQ(changed.jobs[5].submit, stream.result.jobs[5].submit);
  expect_same_tables(stream.result, changed);
  std::filesystem::remove_all(dir);
}
