// One site split between two systems (docs/split.md, issue #35): routing, isolation, the cost of
// the boundary on a case worked by hand, determinism, the result file and bad input.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "planner/compare.hpp"
#include "planner/run.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "temp_dir.hpp"

using namespace headroom;

namespace {

constexpr const char* kTwoPools =
    "cluster:\n  pools:\n"
    "    - {name: a, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
    "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n";

// Every error message of a scenario that must not load, joined.
std::string load_errors(const std::string& text, const headroom::testing::TempDir& dir) {
  try {
    (void)scenarios::parse_scenario(text, dir.path("s.yaml"));
  } catch (const sim::InputErrors& e) {
    return e.what();
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "";
}

planner::RunOutcome run_text(const headroom::testing::TempDir& dir, const std::string& text) {
  return planner::run_scenario(scenarios::parse_scenario(text, dir.path("s.yaml")));
}

// Every placement of the run lies in the partition of its job.
void expect_isolated(const results::RunResult& r) {
  ASSERT_EQ(r.job_partition.size(), r.jobs.size());
  ASSERT_FALSE(r.placements.empty());
  for (const auto& pl : r.placements) {
    const auto& part = r.partitions.at(r.job_partition.at(pl.job));
    EXPECT_GE(pl.node, part.first_node) << "job " << r.jobs[pl.job].trace_id << " of " << part.name;
    EXPECT_LT(pl.node, part.first_node + part.nodes) << "job " << r.jobs[pl.job].trace_id << " of " << part.name;
  }
}

}  // namespace

TEST(Split, RoutesEachJobByKindTenantAndQueueFirstMatchWins) {
  headroom::testing::TempDir dir;
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime,kind\n"
            "1,alice,prod,0,8,100,train\n"
            "2,alice,prod,0,1,100,inference\n"
            "3,bob,dev,0,2,100,batch\n"
            "4,carol,prod,0,1,100,interactive\n"
            "5,carol,dev,0,1,100,batch\n"
            "6,dave,prod,0,4,100,batch\n");
  const auto o = run_text(dir, std::string("name: r\n") + kTwoPools +
                                   "split:\n"
                                   "  systems:\n"
                                   "    train: {policy: fifo, pools: [a]}\n"
                                   "    serve: {policy: sjf, pools: [b]}\n"
                                   "  routes:\n"
                                   "    - {kind: inference, to: serve}\n"
                                   "    - {tenant: carol, queue: dev, to: serve}\n"
                                   "    - {kind: interactive, to: serve}\n"
                                   "    - {tenant: carol, to: train}\n"
                                   "  default: train\n"
                                   "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].name, "train");
  EXPECT_EQ(r.partitions[0].policy, "fifo");
  EXPECT_EQ(r.partitions[0].first_node, 0);
  EXPECT_EQ(r.partitions[0].nodes, 2);
  EXPECT_EQ(r.partitions[0].gpus, 16);
  EXPECT_EQ(r.partitions[1].name, "serve");
  EXPECT_EQ(r.partitions[1].first_node, 2);
  EXPECT_EQ(r.partitions[1].gpus, 8);
  ASSERT_EQ(r.pools.size(), 2u);
  EXPECT_EQ(r.pools[0].name, "a@train");
  EXPECT_EQ(r.pools[1].name, "b@serve");
  EXPECT_EQ(r.policy, "split");
  // Trace order: train, inference, bob's batch (default), carol's interactive, carol's dev
  // batch (second route before the fourth), dave (default).
  EXPECT_EQ(r.job_partition, (std::vector<std::uint32_t>{0, 1, 0, 1, 1, 0}));
  expect_isolated(r);
  for (const auto& j : r.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
}

TEST(Split, PoolSharedByNodeCountsAndAJobNeverCrossesTheBoundary) {
  headroom::testing::TempDir dir;
  // 12 jobs of 8 GPUs for the 2-node slurm side, 12 of 8 GPUs for the 1-node kueue side: each side
  // queues; a shared pool would run them 3 at a time.
  std::string trace = "id,tenant,queue,submit,gpus,runtime,kind\n";
  for (int i = 0; i < 12; ++i) trace += std::to_string(i) + ",t,q," + std::to_string(i) + ",8,100,train\n";
  for (int i = 0; i < 12; ++i) trace += std::to_string(100 + i) + ",s,q," + std::to_string(i) + ",8,100,inference\n";
  dir.write("t.csv", trace);
  const auto o =
      run_text(dir,
               "name: iso\ncluster:\n  pools:\n    - {name: ricc, nodes: 3, gpus_per_node: 8, gpu_type: A100}\n"
               "split:\n"
               "  systems:\n"
               "    slurm: {pools: [{pool: ricc, nodes: 2}]}\n"
               "    kueue: {pools: [{pool: ricc, nodes: 1}]}\n"
               "  routes: [{kind: inference, to: kueue}]\n"
               "  default: slurm\n"
               "policies:\n  kueue:\n    resourceFlavors: {default: {pools: [ricc]}}\n"
               "    clusterQueues:\n      all:\n        namespaces: [\"*\"]\n"
               "        resources: {default: {gpu: {nominalQuota: 8}}}\n"
               "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].policy, "slurm");
  EXPECT_EQ(r.partitions[1].policy, "kueue");
  EXPECT_EQ(r.partitions[1].first_node, 2);
  expect_isolated(r);
  // The kueue side runs its 12 jobs one after another on its one node: the last starts at 1,100 s.
  sim::Tick last_kueue_start = 0, last_slurm_start = 0;
  for (std::size_t j = 0; j < r.jobs.size(); ++j) {
    ASSERT_EQ(r.jobs[j].state, static_cast<std::uint8_t>(models::JobState::Completed));
    (r.job_partition[j] == 1 ? last_kueue_start : last_slurm_start) =
        std::max(r.job_partition[j] == 1 ? last_kueue_start : last_slurm_start, r.jobs[j].start);
  }
  EXPECT_EQ(last_kueue_start, 1'100'000);
  EXPECT_EQ(last_slurm_start, 501'000);  // two at a time: the 12th (submitted at 11 s) at 501 s
}

// Worked by hand (docs/split.md): two 8-GPU nodes, one per system, fifo on each. System A gets
// two 8-GPU jobs of 100 s at t = 0, system B one 4-GPU job of 50 s at t = 0. A runs its first job
// at 0 and its second at 100 (a 100 s wait); B runs its job at 0..50. B's free GPUs: 4 during
// 0..50 (A's waiting job needs 8: it would not fit), 8 during 50..100 (it would): 8 x 50 s =
// 400 GPU-s idle in B while A's backlog would have fit. A never has free GPUs while B waits.
TEST(Split, BoundaryCostOfAHandWorkedCase) {
  headroom::testing::TempDir dir;
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "2,ta,q,0,8,100\n"
            "3,tb,q,0,4,50\n");
  const std::string cluster =
      "cluster:\n  pools:\n    - {name: a, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n";
  const auto o =
      run_text(dir, "name: hand\n" + cluster +
                        "split:\n  systems:\n    A: {policy: fifo, pools: [a]}\n    B: {policy: fifo, pools: [b]}\n"
                        "  routes: [{tenant: tb, to: B}]\n  default: A\n"
                        "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].boundary_idle_gpu_ms, 0);
  EXPECT_EQ(r.partitions[1].boundary_idle_gpu_ms, 8 * 50'000);
  EXPECT_EQ(r.jobs[1].start, 100'000);
  EXPECT_EQ(r.sim_end, 200'000);
  const results::Summary s = results::summarize(r);
  ASSERT_EQ(s.partitions.size(), 2u);
  EXPECT_DOUBLE_EQ(s.boundary_idle_gpu_hours, 400.0 / 3600.0);
  EXPECT_DOUBLE_EQ(s.partitions[0].gpu_utilization, 1.0);    // 1,600 GPU-s of 8 GPUs x 200 s
  EXPECT_DOUBLE_EQ(s.partitions[1].gpu_utilization, 0.125);  // 200 GPU-s of 1,600
  EXPECT_DOUBLE_EQ(s.partitions[0].wait.mean, 50.0);         // 0 s and 100 s
  EXPECT_DOUBLE_EQ(s.partitions[1].wait.max, 0.0);
  ASSERT_EQ(s.partitions[0].wait_by_queue.size(), 1u);
  EXPECT_EQ(s.partitions[0].wait_by_queue[0].first, "q");
  EXPECT_DOUBLE_EQ(s.partitions[0].wait_by_queue[0].second.max, 100.0);
  // One shared pool under fifo: A's second job starts at once on node b.
  const auto shared = run_text(dir, "name: shared\n" + cluster + "policy: fifo\nworkload: {trace: t.csv}\n");
  EXPECT_EQ(shared.result.jobs[1].start, 0);
  EXPECT_TRUE(shared.result.partitions.empty());
  EXPECT_TRUE(shared.result.job_partition.empty());

  // The result file keeps the partitions; the JSON summary names them.
  const std::string h5 = dir.path("r.h5");
  results::write_hdf5(r, h5);
  const results::RunResult back = results::read_hdf5(h5);
  ASSERT_EQ(back.partitions.size(), 2u);
  EXPECT_EQ(back.partitions[1].name, "B");
  EXPECT_EQ(back.partitions[1].policy, "fifo");
  EXPECT_EQ(back.partitions[1].boundary_idle_gpu_ms, 400'000);
  EXPECT_EQ(back.partitions[1].first_node, 1);
  EXPECT_EQ(back.job_partition, (std::vector<std::uint32_t>{0, 0, 1}));
  std::ostringstream json;
  results::print_summary_json(json, results::summarize(back));
  EXPECT_NE(json.str().find("\"boundary_idle_gpu_hours\": 0.1111111111111111"), std::string::npos) << json.str();
  // headroom compare runs "split" as declared and any other name on the whole cluster as one
  // pool: the boundary and each partition get rows of their own (NaN for the shared run).
  const auto base = scenarios::parse_scenario(
      "name: hand\n" + cluster +
          "split:\n  systems:\n    A: {policy: fifo, pools: [a]}\n    B: {policy: fifo, pools: [b]}\n"
          "  routes: [{tenant: tb, to: B}]\n  default: A\nworkload: {trace: t.csv}\n",
      dir.path("s.yaml"));
  const auto cmp = planner::compare_all({base}, {"fifo", "split"}, nullptr, nullptr, "");
  ASSERT_EQ(cmp.size(), 1u);
  ASSERT_TRUE(cmp[0].runs[0].done && cmp[0].runs[1].done) << cmp[0].runs[0].error << cmp[0].runs[1].error;
  EXPECT_EQ(cmp[0].runs[0].summary.fingerprint, shared.result.fingerprint);
  EXPECT_EQ(cmp[0].runs[1].summary.fingerprint, r.fingerprint);
  const results::Table table = planner::compare_table(cmp[0]);
  auto value = [&](const std::string& metric, std::size_t run) {
    for (std::size_t i = 0; i < table.columns[0].strings.size(); ++i)
      if (table.columns[0].strings[i] == metric) return table.columns[2 + run].numbers[i];
    ADD_FAILURE() << "no row " << metric;
    return -1.0;
  };
  EXPECT_TRUE(std::isnan(value("boundary_idle_gpu_hours", 0)));
  EXPECT_DOUBLE_EQ(value("boundary_idle_gpu_hours", 1), 400.0 / 3600.0);
  EXPECT_DOUBLE_EQ(value("partition:B.gpu_utilization", 1), 0.125);
  EXPECT_DOUBLE_EQ(value("partition:A.wait_mean", 1), 50.0);
  EXPECT_TRUE(std::isnan(value("partition:A.wait_mean", 0)));
  const std::string plain_h5 = dir.path("plain.h5");
  results::write_hdf5(shared.result, plain_h5);
  EXPECT_TRUE(results::read_hdf5(plain_h5).partitions.empty());
}

// The bundled RICC sample split between slurm and kueue (two users' jobs): every slurm job
// stays on slurm's nodes over the whole run, and the run is the same at 1 and 2 threads.
TEST(Split, RiccSampleIsolatedAndDeterministicAtAnyThreadCount) {
  const std::string text =
      "name: ricc-split\n"
      "cluster:\n  pools:\n    - {name: ricc, nodes: 1024, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n"
      "  systems:\n"
      "    slurm: {pools: [{pool: ricc, nodes: 717}]}\n"
      "    kueue: {pools: [{pool: ricc, nodes: 307}]}\n"
      "  routes: [{tenant: user17, to: kueue}, {tenant: user33, to: kueue}]\n"
      "  default: slurm\n"
      "policies:\n  kueue:\n    resourceFlavors: {default: {pools: [ricc]}}\n"
      "    clusterQueues:\n      all:\n        namespaces: [\"*\"]\n"
      "        resources: {default: {gpu: {nominalQuota: 2456}}}\n"
      "workload: {trace: data/ricc-2010-first-14d.swf.gz}\n";
  const auto sc = scenarios::parse_scenario(text, std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/split.yaml");
  planner::RunOutcome one, two;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = planner::run_scenario(sc);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    two = planner::run_scenario(sc);
  }
  EXPECT_EQ(one.result.fingerprint, two.result.fingerprint);
  expect_isolated(one.result);
  std::size_t kueue_jobs = 0;
  for (std::uint32_t p : one.result.job_partition) kueue_jobs += p;
  EXPECT_EQ(kueue_jobs, 216u + 93u);
  EXPECT_LT(kueue_jobs, one.result.jobs.size());
}

TEST(Split, BadInputNamesTheLineColumnAndWhatWasExpected) {
  headroom::testing::TempDir dir;
  dir.write("t.csv", "id,tenant,queue,submit,gpus,runtime\n1,t,q,0,1,10\n");
  const std::string head = std::string("name: bad\n") + kTwoPools;
  // A pool claimed by two systems.
  std::string e = load_errors(head +
                                  "split:\n  systems:\n    x: {policy: fifo, pools: [a, b]}\n"
                                  "    y: {policy: fifo, pools: [{pool: b, nodes: 1}]}\n"
                                  "  default: x\nworkload: {trace: t.csv}\n",
                              dir);
  EXPECT_NE(e.find("s.yaml:9:31: split.systems.y: pool \"b\" is claimed by two systems, \"x\" (line 8) and \"y\""),
            std::string::npos)
      << e;
  // Nodes that belong to no system.
  e = load_errors(head +
                      "split:\n  systems:\n    x: {policy: fifo, pools: [{pool: a, nodes: 1}, b]}\n"
                      "  default: x\nworkload: {trace: t.csv}\n",
                  dir);
  EXPECT_NE(e.find("s.yaml:6:1: split.systems: 1 of the 2 nodes of pool \"a\" belong to no system"), std::string::npos)
      << e;
  // A route to an undeclared system, and a default likewise.
  e = load_errors(head +
                      "split:\n  systems:\n    slurm: {pools: [a]}\n    kueue: {pools: [b]}\n"
                      "  routes: [{kind: inference, to: kuuee}]\n  default: slrum\nworkload: {trace: t.csv}\n",
                  dir);
  EXPECT_NE(e.find("s.yaml:10:34: split.routes[0].to: no system named \"kuuee\" in split.systems; did you mean "
                   "\"kueue\"?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:11:12: split.default: no system named \"slrum\" in split.systems; did you mean \"slurm\"?"),
            std::string::npos)
      << e;
  // A system whose policy is unknown: at the name (the key when policy: is not given).
  e = load_errors(head +
                      "split:\n  systems:\n    x: {policy: fifx, pools: [a]}\n    slurmm: {pools: [b]}\n"
                      "  default: x\nworkload: {trace: t.csv}\n",
                  dir);
  EXPECT_NE(e.find("s.yaml:8:17: split.systems.x.policy: unknown policy \"fifx\"; did you mean \"fifo\"?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:9:5: split.systems.slurmm.policy: unknown policy \"slurmm\"; did you mean \"slurm\"?"),
            std::string::npos)
      << e;
  // Unknown keys and kinds get "did you mean"; policy: beside split: is refused.
  e = load_errors(head +
                      "policy: fifo\nsplit:\n  sytems: {}\n  routes: [{kind: inferance, to: x}]\n"
                      "workload: {trace: t.csv}\n",
                  dir);
  EXPECT_NE(e.find("s.yaml:6:1: policy: a scenario with split: runs the policy of each system"), std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:8:3: split.sytems: unknown key \"sytems\"; did you mean \"systems\"?"), std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:9:19: split.routes[0].kind: unknown job kind \"inferance\"; did you mean \"inference\"?"),
            std::string::npos)
      << e;
  // A variant that changes a pool behind the split's back (sweep, plan) stops the run.
  {
    auto changed = scenarios::parse_scenario(head +
                                                 "split:\n  systems:\n    x: {policy: fifo, pools: [a]}\n"
                                                 "    y: {policy: fifo, pools: [b]}\n"
                                                 "  default: x\nworkload: {trace: t.csv}\n",
                                             dir.path("s.yaml"));
    changed.cluster.pools[1].nodes = 3;
    EXPECT_EQ(changed.split.systems[1].pools[0].nodes, -1);  // all of b: still consistent
    (void)planner::run_scenario(changed);
    changed.split.systems[1].pools[0].nodes = 1;
    try {
      (void)planner::run_scenario(changed);
      FAIL() << "a split that no longer covers its pool must stop the run";
    } catch (const sim::InputError& err) {
      EXPECT_NE(std::string(err.what()).find("the systems hold 1 nodes of pool \"b\", which has 3"), std::string::npos)
          << err.what();
    }
  }
  // A job that no route matches, with no default: the run stops naming the job and its trace.
  const auto sc = scenarios::parse_scenario(head +
                                                "split:\n  systems:\n    x: {policy: fifo, pools: [a]}\n"
                                                "    y: {policy: fifo, pools: [b]}\n"
                                                "  routes: [{kind: inference, to: y}]\nworkload: {trace: t.csv}\n",
                                            dir.path("s.yaml"));
  try {
    (void)planner::run_scenario(sc);
    FAIL() << "a job no route matches must stop the run";
  } catch (const sim::InputError& err) {
    const std::string m = err.what();
    EXPECT_NE(m.find("t.csv: split.routes: job 1 of the trace (tenant t, queue q, kind batch) matches no route of "
                     "split.routes (" +
                     dir.path("s.yaml") + ":6:1) and split.default is not set"),
              std::string::npos)
        << m;
  }
}

// A split with one system that owns every node and every job is the run under that policy alone:
// the same events and decisions, so the same fingerprint (the view each policy gets changes
// nothing but the numbering). Three days of the RICC sample under each system.
TEST(Split, OneSystemOwningEverythingGivesTheUnsplitRun) {
  for (const std::string policy : {"slurm", "kubernetes", "volcano", "kai", "kueue", "fifo"}) {
    SCOPED_TRACE(policy);
    const std::string common =
        "cluster:\n  pools:\n    - {name: ricc, nodes: 1024, gpus_per_node: 8, gpu_type: A100}\n"
        "workload: {trace: data/ricc-2010-first-14d.swf.gz, window: {end: 3d}}\n";
    const std::string file = std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/one.yaml";
    const auto plain =
        planner::run_scenario(scenarios::parse_scenario("name: p\npolicy: " + policy + "\n" + common, file));
    const auto split = planner::run_scenario(scenarios::parse_scenario(
        "name: s\nsplit:\n  systems:\n    only: {policy: " + policy + ", pools: [ricc]}\n  default: only\n" + common,
        file));
    EXPECT_EQ(split.result.fingerprint, plain.result.fingerprint);
    ASSERT_EQ(split.result.jobs.size(), plain.result.jobs.size());
    for (std::size_t j = 0; j < plain.result.jobs.size(); ++j) {
      EXPECT_EQ(split.result.jobs[j].start, plain.result.jobs[j].start) << "job " << plain.result.jobs[j].trace_id;
      EXPECT_EQ(split.result.jobs[j].state, plain.result.jobs[j].state) << "job " << plain.result.jobs[j].trace_id;
    }
    EXPECT_EQ(split.result.partitions.at(0).boundary_idle_gpu_ms, 0);
  }
}
