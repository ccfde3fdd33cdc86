// One site split between two systems (docs/split.md, issue #35): routing, isolation, the cost of
// the boundary on a case worked by hand, determinism, the result file and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "models/observer.hpp"
#include "planner/compare.hpp"
#include "planner/run.hpp"
#include "planner/sweep.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "split_support.hpp"
#include "temp_dir.hpp"

using namespace headroom;
using headroom::testing::expect_isolated;
using headroom::testing::expect_owned;
using headroom::testing::kMoveCluster;
using headroom::testing::run_at_one_and_two_threads;
using headroom::testing::runs_of;

// Each test in a folder of its own, its trace in t.csv (tests/split_support.hpp).
class Split : public headroom::testing::SplitSite {};

namespace {

constexpr const char* kTwoPools =
    "cluster:\n  pools:\n"
    "    - {name: a, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
    "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n";

}  // namespace

TEST_F(Split, RoutesEachJobByKindTenantAndQueueFirstMatchWins) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime,kind\n"
            "1,alice,prod,0,8,100,train\n"
            "2,alice,prod,0,1,100,inference\n"
            "3,bob,dev,0,2,100,batch\n"
            "4,carol,prod,0,1,100,interactive\n"
            "5,carol,dev,0,1,100,batch\n"
            "6,dave,prod,0,4,100,batch\n");
  const auto o = run_text(std::string("name: r\n") + kTwoPools +
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

TEST_F(Split, PoolSharedByNodeCountsAndAJobNeverCrossesTheBoundary) {
  // 12 jobs of 8 GPUs for the 2-node slurm side, 12 of 8 GPUs for the 1-node kueue side: each side
  // queues; a shared pool would run them 3 at a time.
  std::string trace = "id,tenant,queue,submit,gpus,runtime,kind\n";
  for (int i = 0; i < 12; ++i) trace += std::to_string(i) + ",t,q," + std::to_string(i) + ",8,100,train\n";
  for (int i = 0; i < 12; ++i) trace += std::to_string(100 + i) + ",s,q," + std::to_string(i) + ",8,100,inference\n";
  dir.write("t.csv", trace);
  const auto o = run_text(
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
// On mixed node sizes a shapeless waiting job is cut as the pod systems cut it (models::PodWidth):
// A has three 16-GPU nodes free (48 GPUs, most of its GPUs) and its one 32-GPU node busy; B's
// waiting 24-GPU job is 16 + 8 there and fits, for B's 100 s of waiting: 2,400 GPU-s in A's row.
// Cut to A's widest node it was one 24-GPU pod that no free node holds, and the cost was 0.
TEST_F(Split, BoundaryCutsAWaitingJobToTheNodesMostOfTheSystemHas) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,tb,q,0,24,100\n"
            "2,tb,q,0,24,50\n"
            "3,ta,q,0,32,200\n");
  const auto o = run_text(
      "name: mixed\ncluster:\n  pools:\n    - {name: a16, nodes: 3, gpus_per_node: 16, gpu_type: A100}\n"
      "    - {name: a32, nodes: 1, gpus_per_node: 32, gpu_type: A100}\n"
      "    - {name: b, nodes: 3, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n    A: {policy: fifo, pools: [a16, a32]}\n    B: {policy: fifo, pools: [b]}\n"
      "  routes: [{tenant: tb, to: B}]\n  default: A\n"
      "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.jobs[1].start, 100'000);  // B's second job waits for its first
  EXPECT_EQ(r.jobs[2].start, 0);        // A's job on the 32-GPU node
  EXPECT_EQ(r.partitions[0].boundary_idle_gpu_ms, 24 * 100'000);
  EXPECT_EQ(r.partitions[1].boundary_idle_gpu_ms, 0);
}

TEST_F(Split, BoundaryCostOfAHandWorkedCase) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "2,ta,q,0,8,100\n"
            "3,tb,q,0,4,50\n");
  const std::string cluster =
      "cluster:\n  pools:\n    - {name: a, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n";
  const auto o = run_text("name: hand\n" + cluster +
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
  const auto shared = run_text("name: shared\n" + cluster + "policy: fifo\nworkload: {trace: t.csv}\n");
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
TEST_F(Split, RiccSampleIsolatedAndDeterministicAtAnyThreadCount) {
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
  const auto [one, two] = run_at_one_and_two_threads(sc);
  expect_isolated(one.result);
  std::size_t kueue_jobs = 0;
  for (std::uint32_t p : one.result.job_partition) kueue_jobs += p;
  EXPECT_EQ(kueue_jobs, 216u + 93u);
  EXPECT_LT(kueue_jobs, one.result.jobs.size());
}

TEST_F(Split, BadInputNamesTheLineColumnAndWhatWasExpected) {
  dir.write("t.csv", "id,tenant,queue,submit,gpus,runtime\n1,t,q,0,1,10\n");
  const std::string head = std::string("name: bad\n") + kTwoPools;
  // A pool claimed by two systems.
  std::string e = load_errors(head +
                              "split:\n  systems:\n    x: {policy: fifo, pools: [a, b]}\n"
                              "    y: {policy: fifo, pools: [{pool: b, nodes: 1}]}\n"
                              "  default: x\nworkload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:9:31: split.systems.y: pool \"b\" is claimed by two systems, \"x\" (line 8) and \"y\""),
            std::string::npos)
      << e;
  // Nodes that belong to no system.
  e = load_errors(head +
                  "split:\n  systems:\n    x: {policy: fifo, pools: [{pool: a, nodes: 1}, b]}\n"
                  "  default: x\nworkload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:6:1: split.systems: 1 of the 2 nodes of pool \"a\" belong to no system"), std::string::npos)
      << e;
  // A route to an undeclared system, and a default likewise.
  e = load_errors(head +
                  "split:\n  systems:\n    slurm: {pools: [a]}\n    kueue: {pools: [b]}\n"
                  "  routes: [{kind: inference, to: kuuee}]\n  default: slrum\nworkload: {trace: t.csv}\n");
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
                  "  default: x\nworkload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:8:17: split.systems.x.policy: unknown policy \"fifx\"; did you mean \"fifo\"?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:9:5: split.systems.slurmm.policy: unknown policy \"slurmm\"; did you mean \"slurm\"?"),
            std::string::npos)
      << e;
  // Unknown keys and kinds get "did you mean"; policy: beside split: is refused.
  e = load_errors(head +
                  "policy: fifo\nsplit:\n  sytems: {}\n  routes: [{kind: inferance, to: x}]\n"
                  "workload: {trace: t.csv}\n");
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
  // A job that no route matches, with no default: the run stops naming the job and its trace's
  // line (the CSV's row 2).
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
    EXPECT_NE(m.find("t.csv:2: split.routes: job 1 of the trace (tenant t, queue q, kind batch) matches no route of "
                     "split.routes (" +
                     dir.path("s.yaml") + ":6:1) and split.default is not set"),
              std::string::npos)
        << m;
  }
}

// A split with one system that owns every node and every job is the run under that policy alone:
// the same events and decisions, so the same fingerprint (the view each policy gets changes
// nothing but the numbering). Three days of the RICC sample under each system.
TEST_F(Split, OneSystemOwningEverythingGivesTheUnsplitRun) {
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

// A scheduled move with a drain, worked by hand. Node 0 is A's, node 1 is B's (8 GPUs each, fifo
// on both). At 50 s node 1 is drained for A: B's job b1 (0..100 s) runs on; node 1 takes no new
// work, is empty when b1 ends at 100 s, changes owner then, and joins A after the 10 s move
// delay. A's third job a3 starts on it at 110 s (a2 took node 0 at 100 s). At 200 s the second
// move hands A's node going home (node 1, idle) back to B: it changes owner at once and is ready
// at 210 s, when B's job b2 (submitted at 205 s) starts on it. As Slurm's DRAIN (running jobs
// finish, no new ones start; slurm doc/man/man1/scontrol.1) and kubectl cordon + drain (the node
// is unschedulable; its pods leave by eviction: kubernetes pkg/kubectl/drain via
// staging/src/k8s.io/kubectl/pkg/drain/drain.go), without a deadline.
TEST_F(Split, ScheduledMoveDrainsTheNodeAndHandsItOverWhenEmpty) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "2,ta,q,0,8,30\n"
            "3,ta,q,0,8,50\n"
            "4,tb,q,0,8,100\n"
            "5,tb,q,205,4,10\n");
  const auto o = run_text(std::string("name: move\n") + kMoveCluster +
                          "  moves:\n"
                          "    - {at: 50s, nodes: 1, from: B, to: A, delay: 10s}\n"
                          "    - {at: 200s, nodes: 1, from: A, to: B, delay: 10s}\n"
                          "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.moves.size(), 2u);
  EXPECT_EQ(r.moves[0].node, 1);
  EXPECT_EQ(r.moves[0].from, 1);
  EXPECT_EQ(r.moves[0].to, 0);
  EXPECT_EQ(r.moves[0].rule, 0);
  EXPECT_EQ(r.moves[0].on_demand, 0);
  EXPECT_EQ(r.moves[0].gpus, 8);
  EXPECT_EQ(r.moves[0].requested, 50'000);
  EXPECT_EQ(r.moves[0].changed, 100'000);  // b1 ended
  EXPECT_EQ(r.moves[0].ready, 110'000);
  EXPECT_EQ(r.moves[0].preempted, 0);
  EXPECT_EQ(r.moves[1].node, 1);  // the node going home, not A's own node 0
  EXPECT_EQ(r.moves[1].from, 0);
  EXPECT_EQ(r.moves[1].to, 1);
  EXPECT_EQ(r.moves[1].requested, 200'000);
  EXPECT_EQ(r.moves[1].changed, 200'000);  // idle: no drain to wait for
  EXPECT_EQ(r.moves[1].ready, 210'000);
  // Which job ran where and when.
  const std::vector<sim::Tick> start = {0, 100'000, 110'000, 0, 210'000};
  const std::vector<std::int32_t> node = {0, 0, 1, 1, 1};
  for (std::size_t j = 0; j < 5; ++j) {
    SCOPED_TRACE("job " + std::to_string(r.jobs[j].trace_id));
    EXPECT_EQ(r.jobs[j].state, static_cast<std::uint8_t>(models::JobState::Completed));
    EXPECT_EQ(r.jobs[j].start, start[j]);
    EXPECT_EQ(r.jobs[j].first_node, node[j]);
  }
  EXPECT_EQ(r.sim_end, 220'000);
  expect_owned(r);
  // Utilization over the GPU time each side owned: A node 0 for 220 s and node 1 for 100..200 s
  // (2,560 GPU-s), its jobs 1,440 GPU-s; B node 1 for 0..100 and 200..220 s (960 GPU-s), its jobs
  // 840 GPU-s.
  const results::Summary s = results::summarize(r);
  ASSERT_EQ(s.partitions.size(), 2u);
  EXPECT_DOUBLE_EQ(s.partitions[0].gpu_utilization, 1440.0 / 2560.0);
  EXPECT_DOUBLE_EQ(s.partitions[1].gpu_utilization, 840.0 / 960.0);
  EXPECT_EQ(s.moves, 2);
  EXPECT_EQ(s.partitions[0].nodes_in, 1);
  EXPECT_EQ(s.partitions[0].nodes_out, 1);
  EXPECT_EQ(s.partitions[1].gpus_at_end, 8);
  EXPECT_DOUBLE_EQ(s.move_drain_mean_s, 25.0);  // 50 s and 0 s
  EXPECT_DOUBLE_EQ(s.move_delay_mean_s, 10.0);
  std::ostringstream text, json;
  results::print_summary(text, s);
  EXPECT_NE(text.str().find("node moves: 2 (0 on demand)"), std::string::npos) << text.str();
  results::print_summary_json(json, s);
  EXPECT_NE(json.str().find("\"moves\": {\"count\": 2, \"on_demand\": 0, \"preempted_jobs\": 0, \"drain_mean_s\": 25, "
                            "\"delay_mean_s\": 10}"),
            std::string::npos)
      << json.str();
  // The result file keeps the moves; a file without /moves reads as none.
  const std::string h5 = dir.path("m.h5");
  results::write_hdf5(r, h5);
  const results::RunResult back = results::read_hdf5(h5);
  ASSERT_EQ(back.moves.size(), 2u);
  EXPECT_EQ(back.moves[0].changed, 100'000);
  EXPECT_EQ(back.moves[1].ready, 210'000);
  EXPECT_EQ(back.moves[1].to, 1);
  results::RunResult none = r;
  none.moves.clear();
  results::write_hdf5(none, h5);
  EXPECT_TRUE(results::read_hdf5(h5).moves.empty());
  // Deterministic: the same run again gives the same fingerprint.
  EXPECT_EQ(run_text(std::string("name: move\n") + kMoveCluster +
                     "  moves:\n"
                     "    - {at: 50s, nodes: 1, from: B, to: A, delay: 10s}\n"
                     "    - {at: 200s, nodes: 1, from: A, to: B, delay: 10s}\n"
                     "workload: {trace: t.csv}\n")
                .result.fingerprint,
            r.fingerprint);
}

// The drain deadline: at 50 s node 1 is drained with a 20 s deadline. At 70 s b1 still runs: it
// is preempted as its owner would (requeued, after a 5 s grace: Slurm requeues a batch job whose
// node goes DOWN when JobRequeue=1, kubectl drain evicts the pod and its controller recreates it),
// so node 1 is empty at 75 s, changes owner then and joins A at 85 s, where a2 starts. b1 waits
// for a node of B: node 1 comes back at 200 s (ready at 210 s), b1 reruns 210..310 s and b2 after
// it, 310..320 s.
TEST_F(Split, DrainDeadlinePreemptsWhatStillRunsAndRequeuesIt) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "2,ta,q,0,8,30\n"
            "3,ta,q,0,8,50\n"
            "4,tb,q,0,8,100\n"
            "5,tb,q,205,4,10\n");
  const auto o = run_text(std::string("name: deadline\n") + kMoveCluster +
                          "  moves:\n"
                          "    - {at: 50s, nodes: 1, from: B, to: A, delay: 10s, drain_deadline: 20s, "
                          "grace: 5s}\n"
                          "    - {at: 200s, nodes: 1, from: A, to: B, delay: 10s}\n"
                          "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.moves.size(), 2u);
  EXPECT_EQ(r.moves[0].requested, 50'000);
  EXPECT_EQ(r.moves[0].changed, 75'000);
  EXPECT_EQ(r.moves[0].ready, 85'000);
  EXPECT_EQ(r.moves[0].preempted, 1);
  EXPECT_EQ(r.moves[1].changed, 200'000);
  EXPECT_EQ(r.moves[1].ready, 210'000);
  EXPECT_EQ(r.jobs[1].start, 85'000);  // a2 on the moved node
  EXPECT_EQ(r.jobs[1].first_node, 1);
  EXPECT_EQ(r.jobs[2].start, 100'000);  // a3 on node 0 when a1 ends
  EXPECT_EQ(r.jobs[3].preemptions, 1);
  EXPECT_EQ(r.jobs[3].end, 310'000);
  EXPECT_EQ(r.jobs[4].start, 310'000);
  for (const auto& j : r.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
  // b1's two runs on node 1: until the eviction, and after the node came back.
  std::vector<std::pair<sim::Tick, sim::Tick>> runs;
  for (const auto& pl : r.placements)
    if (pl.job == 3) runs.emplace_back(pl.start, pl.end);
  EXPECT_EQ(runs, (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 75'000}, {210'000, 310'000}}));
  expect_owned(r);
  EXPECT_EQ(results::summarize(r).move_preempted_jobs, 1);
}

// On demand: A (node 0) has a backlog of two 8-GPU jobs while B's two nodes are idle. After the
// first pass B gives one idle node (the last of its partition, node 2; it keeps one since jobs
// are routed to it) with no drain; it joins A after the 10 s delay and a2 starts on it. a3 waits
// for node 0. B's own job at 500 s runs on the node B kept.
TEST_F(Split, MoveOnDemandTakesIdleNodesWhileTheOtherSideHasABacklog) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "2,ta,q,0,8,100\n"
            "3,ta,q,0,8,100\n"
            "4,tb,q,500,8,10\n");
  const auto o = run_text(
      "name: demand\n"
      "cluster:\n  pools:\n    - {name: p, nodes: 3, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
      "    B: {policy: fifo, pools: [{pool: p, nodes: 2}]}\n"
      "  routes: [{tenant: tb, to: B}]\n  default: A\n"
      "  moves:\n"
      "    - {when: idle, nodes: 4, from: B, to: A, delay: 10s, hold: 1h}\n"
      "    - {when: idle, nodes: 4, from: A, to: B}\n"
      "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.moves.size(), 1u);
  EXPECT_EQ(r.moves[0].node, 2);
  EXPECT_EQ(r.moves[0].from, 1);
  EXPECT_EQ(r.moves[0].to, 0);
  EXPECT_EQ(r.moves[0].on_demand, 1);
  EXPECT_EQ(r.moves[0].requested, 0);
  EXPECT_EQ(r.moves[0].changed, 0);
  EXPECT_EQ(r.moves[0].ready, 10'000);
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 10'000);
  EXPECT_EQ(r.jobs[1].first_node, 2);
  EXPECT_EQ(r.jobs[2].start, 100'000);
  EXPECT_EQ(r.jobs[2].first_node, 0);
  EXPECT_EQ(r.jobs[3].start, 500'000);
  EXPECT_EQ(r.jobs[3].first_node, 1);
  expect_owned(r);
  EXPECT_EQ(results::summarize(r).moves_on_demand, 1);
}

TEST_F(Split, BadMovesNameTheLineColumnAndWhatWasExpected) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "4,tb,q,0,8,100\n"
            "5,tb,q,60,4,10\n");
  const std::string head = std::string("name: bad\n") + kMoveCluster;
  // A schedule that empties B while its job 5 arrives (60 s): exit 2 at the move.
  const auto sc = scenarios::parse_scenario(head +
                                                "  moves:\n"
                                                "    - {at: 50s, nodes: 1, from: B, to: A}\n"
                                                "    - {at: 200s, nodes: 1, from: A, to: B}\n"
                                                "workload: {trace: t.csv}\n",
                                            dir.path("s.yaml"));
  try {
    (void)planner::run_scenario(sc);
    FAIL() << "a schedule that strands B's jobs must stop the run";
  } catch (const sim::InputError& err) {
    EXPECT_NE(
        std::string(err.what())
            .find("s.yaml:12:7: split.moves[0]: this move leaves system \"B\" no node from 50s after the run start "
                  "until 3m 20s, while 1 job routed to it arrives then (the first: job 5 at 1m); keep a node in it or "
                  "route those jobs to another system"),
        std::string::npos)
        << err.what();
  }
  // More nodes than the system holds then.
  const auto more = scenarios::parse_scenario(head +
                                                  "  moves:\n"
                                                  "    - {at: 1m, every: 1h, nodes: 1, from: A, to: B}\n"
                                                  "workload: {trace: t.csv}\n",
                                              dir.path("s.yaml"));
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,ta,q,0,8,100\n"
            "4,tb,q,0,8,100\n"
            "5,tb,q,7200,4,10\n");
  try {
    (void)planner::run_scenario(more);
    FAIL() << "a schedule that takes more nodes than A holds must stop the run";
  } catch (const sim::InputError& err) {
    EXPECT_NE(std::string(err.what())
                  .find("s.yaml:12:7: split.moves[0]: moves 1 nodes from \"A\" 1h 1m after the run "
                        "start, when it holds 0"),
              std::string::npos)
        << err.what();
  }
  // The reader: unknown keys and systems get "did you mean", a bad time of day, both at and when.
  const std::string e = load_errors(head +
                                    "  moves:\n"
                                    "    - {at: 50s, nodes: 1, from: B, to: A, dealy: 10s}\n"
                                    "    - {at: \"daily 25:00\", nodes: 1, from: B, to: A}\n"
                                    "    - {at: 1h, when: idle, nodes: 1, from: slrum, to: A}\n"
                                    "    - {when: busy, nodes: 0, from: A, to: A, drain_deadline: 1h}\n"
                                    "workload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:12:43: split.moves[0].dealy: unknown key \"dealy\"; did you mean \"delay\"?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:13:12: split.moves[1].at: expected \"daily HH:MM\" (00:00 to 23:59)"), std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:14:7: split.moves[2]: a move has at: or when:, not both"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:14:44: split.moves[2].from: no system named \"slrum\" in split.systems"), std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:15:14: split.moves[3].when: expected idle"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:15:62: split.moves[3].drain_deadline: a move on demand takes idle nodes only"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:15:27: split.moves[3].nodes: expected an integer >= 1, got \"0\""), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:15:43: split.moves[3].to: a move goes to another system than from:"), std::string::npos)
      << e;
}

// The bundled 14 days split between Slurm and Kueue with the example's moves (nights to Slurm,
// mornings back with a 2 h drain deadline, idle nodes on demand both ways): no job ever runs on a
// node its system did not own for the whole run, none starts in a move delay, every move's
// delay is the 5 minutes declared, and the run is the same at 1 and 2 threads.
TEST_F(Split, RiccMovesKeepEveryJobOnItsOwnersNodesAtAnyThreadCount) {
  const auto sc =
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-split-moves.yaml");
  const auto [one, two] = run_at_one_and_two_threads(sc);
  const auto& r = one.result;
  expect_owned(r);
  std::int64_t on_demand = 0, preempted = 0;
  for (const auto& m : r.moves) {
    on_demand += m.on_demand;
    preempted += m.preempted;
    ASSERT_GE(m.changed, m.requested);
    if (m.on_demand != 0) {
      EXPECT_EQ(m.changed, m.requested);
    }
    if (m.ready >= 0) {
      EXPECT_EQ(m.ready, m.changed + 5 * sim::kMinute);
    }
  }
  EXPECT_GT(r.moves.size(), 0u);
  EXPECT_GT(on_demand, 0);
  EXPECT_LT(on_demand, static_cast<std::int64_t>(r.moves.size()));
  EXPECT_GT(preempted, 0);
  ASSERT_EQ(two.result.moves.size(), r.moves.size());
  for (std::size_t i = 0; i < r.moves.size(); ++i) EXPECT_EQ(two.result.moves[i].changed, r.moves[i].changed);
}

// The same with the POC failure drill's failures (random node failures, the rack, two-node and
// power outages, the rolling maintenance drain), on the first 4 days: a node that fails is down
// in whichever system owns it, so no job starts on a node while it is down, no job runs on a node
// its system does not own, and the run is the same at 1 and 2 threads.
TEST_F(Split, RiccMovesUnderTheFailureDrillKeepEveryJobOnItsOwnersUpNodes) {
  auto sc =
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-split-moves.yaml");
  sc.failures =
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml").failures;
  sc.workload.window_end = 4 * sim::kDay;
  const auto [one, two] = run_at_one_and_two_threads(sc);
  const auto& r = one.result;
  expect_owned(r);
  EXPECT_GT(r.jobs_killed, 0);
  EXPECT_GT(r.moves.size(), 0u);
  EXPECT_GT(headroom::testing::expect_no_start_while_down(r), 0);
}

namespace {

std::string two_clusters(const std::string& dispatch) {
  return "name: front-door\n"
         "cluster:\n  pools:\n    - {name: a, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
         "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
         "split:\n  systems:\n    east: {policy: fifo, pools: [a]}\n    west: {policy: fifo, pools: [b]}\n"
         "  dispatch: " +
         dispatch + "\nworkload: {trace: t.csv}\n";
}

}  // namespace

// Two clusters behind one front door, east busy. MultiKueue (AllAtOnce dispatcher, kueue
// pkg/controller/admissionchecks/multikueue/workload.go: nominateAndSynchronizeWorkers creates the
// workload's copy in every worker; reconcileGroup keeps the worker whose copy was admitted first,
// bestMatchByCondition(WorkloadAdmitted), and removes the other copies, RemoveRemoteObjects).
// j1 (1,000 s) at 0 s: both copies; east admits it first, west's copy goes. j2 at 10 s: east is
// full, west admits it at once. j3 at 20 s: both full; west frees at 110 s and admits it then,
// east's copy goes. A plain least-backlog router sends j3 at 20 s to east (both have no free GPU
// and nothing waiting: the first declared), where it waits for j1 until 1,000 s.
TEST_F(Split, MultiKueueFirstAdmittedWinsAgainstLeastBacklog) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n"
            "1,t,q,0,8,1000\n"
            "2,t,q,10,8,100\n"
            "3,t,q,20,8,100\n");
  const auto mk = run_text(two_clusters("multikueue")).result;
  EXPECT_EQ(mk.job_partition, (std::vector<std::uint32_t>{0, 1, 1}));
  EXPECT_EQ(mk.jobs[0].start, 0);
  EXPECT_EQ(mk.jobs[1].start, 10'000);
  EXPECT_EQ(mk.jobs[2].start, 110'000);
  EXPECT_EQ(mk.jobs[2].first_node, 1);
  EXPECT_EQ(mk.sim_end, 1'000'000);
  for (const auto& j : mk.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
  // Per-cluster and global KPIs: east ran j1 (8,000 GPU-s of 8 GPUs x 1,000 s), west j2 and j3.
  const results::Summary s = results::summarize(mk);
  ASSERT_EQ(s.partitions.size(), 2u);
  EXPECT_EQ(s.partitions[0].jobs, 1);
  EXPECT_EQ(s.partitions[1].jobs, 2);
  EXPECT_DOUBLE_EQ(s.partitions[0].gpu_utilization, 1.0);
  EXPECT_DOUBLE_EQ(s.partitions[1].gpu_utilization, 0.2);
  EXPECT_DOUBLE_EQ(s.partitions[1].wait.max, 90.0);
  EXPECT_DOUBLE_EQ(s.wait.mean, 30.0);  // 0, 0 and 90 s
  EXPECT_DOUBLE_EQ(s.boundary_idle_gpu_hours, 0.0);

  const auto lb = run_text(two_clusters("least-backlog")).result;
  EXPECT_EQ(lb.job_partition, (std::vector<std::uint32_t>{0, 1, 0}));
  EXPECT_EQ(lb.jobs[1].start, 10'000);
  EXPECT_EQ(lb.jobs[2].start, 1'000'000);
  EXPECT_EQ(lb.jobs[2].first_node, 0);
  EXPECT_EQ(lb.sim_end, 1'100'000);
  expect_isolated(lb);
  EXPECT_DOUBLE_EQ(results::summarize(lb).wait.mean, 980.0 / 3.0);

  // Bad input: an unknown dispatcher, routes beside a dispatcher.
  const std::string e =
      load_errors(two_clusters("multikue") + "") +
      load_errors(std::string("name: x\n") + kTwoPools +
                  "split:\n  systems:\n    east: {policy: fifo, pools: [a]}\n    west: {policy: fifo, pools: [b]}\n"
                  "  routes: [{kind: inference, to: west}]\n  dispatch: least-backlog\nworkload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:10:13: split.dispatch: unknown dispatcher \"multikue\"; did you mean \"multikueue\"?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("s.yaml:10:11: split.routes: not used with dispatch: least-backlog"), std::string::npos) << e;

  // A dispatcher over 65 clusters was an internal error; the reader names the limit.
  auto clusters = [](int n) {
    std::string text = "name: x\ncluster:\n  pools:\n    - {name: a, nodes: " + std::to_string(n) +
                       ", gpus_per_node: 8, gpu_type: A100}\nsplit:\n  systems:\n";
    for (int c = 0; c < n; ++c)
      text += "    c" + std::to_string(c) + ": {policy: fifo, pools: [{pool: a, nodes: 1}]}\n";
    return text + "  dispatch: multikueue\nworkload: {trace: t.csv}\n";
  };
  const std::string m = load_errors(clusters(65));
  EXPECT_NE(m.find("s.yaml:72:13: split.dispatch: dispatch: multikueue spreads jobs over at most 64 clusters; "
                   "split.systems declares 65"),
            std::string::npos)
      << m;
  EXPECT_EQ(load_errors(clusters(64)), "") << "64 clusters are accepted";
}

namespace {

// Two Kueue clusters of one 8-GPU node each behind MultiKueue (east A100, west H100), one
// ClusterQueue each whose workloads preempt lower-priority ones (withinClusterQueue
// LowerPriority); west runs `west` instead of kueue when it is given.
std::string kueue_workers(const std::string& west = "kueue") {
  return "name: redispatch\n"
         "cluster:\n  pools:\n    - {name: a, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
         "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: H100}\n"
         "split:\n  systems:\n    east: {policy: kueue, pools: [a]}\n    west: {policy: " +
         west +
         ", pools: [b]}\n  dispatch: multikueue\n"
         "policies:\n  kueue:\n    resourceFlavors: {default: {pools: []}}\n"
         "    clusterQueues:\n      all:\n        namespaces: [\"*\"]\n"
         "        resources: {default: {gpu: {nominalQuota: 8}}}\n"
         "        preemption: {withinClusterQueue: LowerPriority}\n"
         "workload: {trace: t.csv}\n";
}

}  // namespace

// MultiKueue re-dispatches a workload its worker evicted (kueue pkg/controller/admissionchecks/
// multikueue/workload.go, reconcileGroup: step 4 sets the admission check to Retry, "Workload
// evicted on worker cluster ..., resetting for re-admission", so the workload loses its quota
// reservation; step 2 then deletes every remote copy, and nominateAndSynchronizeWorkers creates
// them again in every worker, the first to admit winning again).
// j1 (priority 10, any GPU, 1,000 s) at 0 s: east (first declared) admits it, west's copy goes.
// j2 (priority 100, H100, 300 s) at 0 s: west only, admitted at once. j3 (priority 100, A100,
// 500 s) at 100 s: east only; it preempts j1 (LowerPriority), which stops after Kueue's 30 s
// termination grace period, at 130 s, and is requeued, its progress lost. j3 starts at 130 s and
// ends at 630 s. With re-dispatch west gets j1's copy back at 130 s and admits it when j2 ends,
// at 300 s (east's copy goes): j1 ends at 1,300 s. With a west that cannot take a copy back
// (fifo), j1 waits in east for j3: it starts at 630 s and ends at 1,630 s.
TEST_F(Split, MultiKueueRedispatchesAWorkloadItsWorkerEvicted) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime,gpu_type,priority\n"
            "1,t,q,0,8,1000,,10\n"
            "2,t,q,0,8,300,H100,100\n"
            "3,t,q,100,8,500,A100,100\n");
  const auto mk = run_text(kueue_workers()).result;
  EXPECT_EQ(runs_of(mk, 0), (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 130'000}, {300'000, 1'300'000}}));
  EXPECT_EQ(mk.job_partition, (std::vector<std::uint32_t>{1, 1, 0}));
  // j1 ran first on east's node (0), then on west's (1).
  std::vector<std::pair<sim::Tick, std::int32_t>> j1_nodes;
  for (const auto& pl : mk.placements)
    if (pl.job == 0) j1_nodes.emplace_back(pl.start, pl.node);
  EXPECT_EQ(j1_nodes, (std::vector<std::pair<sim::Tick, std::int32_t>>{{0, 0}, {300'000, 1}}));
  EXPECT_EQ(mk.jobs[0].first_node, 1);
  EXPECT_EQ(mk.jobs[0].preemptions, 1);
  EXPECT_EQ(mk.jobs[1].start, 0);
  EXPECT_EQ(mk.jobs[2].start, 130'000);
  EXPECT_EQ(mk.sim_end, 1'300'000);
  for (const auto& j : mk.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));

  // West runs fifo, which cannot take a withdrawn copy back: no re-dispatch (one warning at load).
  const auto sc = scenarios::parse_scenario(kueue_workers("fifo"), dir.path("s.yaml"));
  ASSERT_EQ(sc.warnings.size(), 1u);
  EXPECT_NE(sc.warnings[0].find("s.yaml:10: split.dispatch multikueue: cluster(s) west (fifo) cannot take a "
                                "withdrawn copy back"),
            std::string::npos)
      << sc.warnings[0];
  const auto stay = planner::run_scenario(sc).result;
  EXPECT_EQ(runs_of(stay, 0), (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 130'000}, {630'000, 1'630'000}}));
  EXPECT_EQ(stay.job_partition, (std::vector<std::uint32_t>{0, 1, 0}));
  EXPECT_EQ(stay.jobs[0].first_node, 0);
  EXPECT_EQ(stay.jobs[2].start, 130'000);
  EXPECT_EQ(stay.sim_end, 1'630'000);
  expect_isolated(stay);
  EXPECT_TRUE(scenarios::parse_scenario(kueue_workers(), dir.path("s.yaml")).warnings.empty());
}

// A failure is not an eviction: the worker's Job controller retries the job in the same worker,
// and MultiKueue leaves it there. j1 (any GPU, 1,000 s) at 0 s in east, j2 (H100, 300 s) in west;
// east's node fails at 50 s for 100 s: j1 is killed, back from its 10 s retry back-off at 60 s,
// and waits in east for the node, starting again at 150 s (re-dispatched, west would have run it
// from 300 s).
TEST_F(Split, MultiKueueRetriesAFailedJobInItsWorker) {
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime,gpu_type,priority\n"
            "1,t,q,0,8,1000,,10\n"
            "2,t,q,0,8,300,H100,100\n");
  const auto r = run_text(kueue_workers() + "failures:\n  events: [{at: 50s, nodes: [a-0], duration: 100s}]\n").result;
  EXPECT_EQ(runs_of(r, 0), (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 50'000}, {150'000, 1'150'000}}));
  EXPECT_EQ(r.job_partition, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(r.sim_end, 1'150'000);
  expect_isolated(r);
}

// Three days of the RICC sample over two Kueue clusters of 512 nodes behind MultiKueue: every job
// runs in the cluster that admitted it (its copies elsewhere never run), and the run is the same
// at 1 and 2 threads.
TEST_F(Split, MultiKueueOverTwoKueueClustersIsIsolatedAndDeterministic) {
  const std::string text =
      "name: ricc-multikueue\n"
      "cluster:\n  pools:\n    - {name: ricc, nodes: 1024, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n"
      "  systems:\n"
      "    east: {policy: kueue, pools: [{pool: ricc, nodes: 512}]}\n"
      "    west: {policy: kueue, pools: [{pool: ricc, nodes: 512}]}\n"
      "  dispatch: multikueue\n"
      "policies:\n  kueue:\n    resourceFlavors: {default: {pools: [ricc]}}\n"
      "    clusterQueues:\n      all:\n        namespaces: [\"*\"]\n"
      "        resources: {default: {gpu: {nominalQuota: 4096}}}\n"
      "workload: {trace: data/ricc-2010-first-14d.swf.gz, window: {end: 3d}}\n";
  const auto sc = scenarios::parse_scenario(text, std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/mk.yaml");
  const auto [one, two] = run_at_one_and_two_threads(sc);
  expect_isolated(one.result);
  std::size_t west = 0;
  for (std::uint32_t p : one.result.job_partition) west += p;
  EXPECT_GT(west, 0u);
  EXPECT_LT(west, one.result.jobs.size());
}

// Re-dispatch at RICC scale: three days of the sample over two Kueue clusters of 512 nodes whose
// ClusterQueue admits twice the GPUs a cluster has, with waitForPodsReady: a workload admitted by
// quota whose pods find no room is evicted after 5 min and dispatched again to both clusters. Some
// jobs run in both; the run is the same at 1 and 2 threads.
TEST_F(Split, MultiKueueRedispatchOverRiccIsDeterministic) {
  const std::string text =
      "name: ricc-multikueue-redispatch\n"
      "cluster:\n  pools:\n    - {name: ricc, nodes: 1024, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n"
      "  systems:\n"
      "    east: {policy: kueue, pools: [{pool: ricc, nodes: 512}]}\n"
      "    west: {policy: kueue, pools: [{pool: ricc, nodes: 512}]}\n"
      "  dispatch: multikueue\n"
      "policies:\n  kueue:\n    resourceFlavors: {default: {pools: [ricc]}}\n"
      "    clusterQueues:\n      all:\n        namespaces: [\"*\"]\n"
      "        resources: {default: {gpu: {nominalQuota: 4096}}}\n"
      "        preemption: {withinClusterQueue: LowerPriority}\n"
      "workload:\n  trace: data/ricc-2010-first-14d.swf.gz\n  window: {end: 3d}\n"
      "  sessions:\n    - {name: nb, tenant: nb, queue: nb, gpus: 8, priority: 500, per_day: 2000,\n"
      "       hours: {start: 9h, end: 18h}, duration: {median: 2h, sigma: 0.8, max: 8h}}\n";
  const auto sc = scenarios::parse_scenario(text, std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/mk.yaml");
  const auto [one, two] = run_at_one_and_two_threads(sc);
  const auto& r = one.result;
  // Jobs with runs in both clusters (east's nodes are 0-511, west's 512-1023).
  std::vector<std::uint8_t> seen(r.jobs.size(), 0);
  for (const auto& pl : r.placements) seen[pl.job] |= pl.node < 512 ? 1 : 2;
  std::int64_t both = 0, preempted = 0;
  for (auto b : seen) both += b == 3;
  for (const auto& j : r.jobs) preempted += j.preemptions > 0;
  std::printf("jobs %zu, preempted %lld, in both clusters %lld, fingerprint %s\n", r.jobs.size(),
              static_cast<long long>(preempted), static_cast<long long>(both), r.fingerprint.c_str());
  EXPECT_GT(both, 0);
  EXPECT_GE(preempted, both);
  // A job's last run is in the cluster it counts for (the one that admitted it last).
  std::vector<const results::PlacementRecord*> last(r.jobs.size(), nullptr);
  for (const auto& pl : r.placements)
    if (last[pl.job] == nullptr || pl.start >= last[pl.job]->start) last[pl.job] = &pl;
  for (std::size_t j = 0; j < r.jobs.size(); ++j)
    if (last[j] != nullptr) {
      EXPECT_EQ(last[j]->node < 512 ? 0u : 1u, r.job_partition[j]) << "job " << j;
    }
}

// compare's split variants: `split:A=0.7/B=0.3` cuts the pool the two systems share 7/3 (of 10
// nodes), the pool B holds alone stays B's; the run is the scenario's split with those counts.
TEST_F(Split, CompareTakesSplitVariantsBySharesOfTheSharedPools) {
  std::string trace = "id,tenant,queue,submit,gpus,runtime\n";
  for (int i = 0; i < 20; ++i) trace += std::to_string(i) + ",ta,q,0,8,100\n";
  for (int i = 0; i < 4; ++i) trace += std::to_string(100 + i) + ",tb,q,0,8,100\n";
  dir.write("t.csv", trace);
  const std::string text =
      "name: variants\n"
      "cluster:\n  pools:\n    - {name: p, nodes: 10, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: q, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 5}]}\n"
      "    B: {policy: fifo, pools: [{pool: p, nodes: 5}, q]}\n"
      "  routes: [{tenant: tb, to: B}]\n  default: A\nworkload: {trace: t.csv}\n";
  const auto base = scenarios::parse_scenario(text, dir.path("s.yaml"));
  const auto names = planner::parse_policy_list("fifo,split,split:A=0.7/B=0.3,split:B=0.5/A=0.5");
  ASSERT_EQ(names.size(), 4u);
  const auto cmp = planner::compare_all({base}, names, nullptr, nullptr, "");
  ASSERT_EQ(cmp.size(), 1u);
  for (const auto& run : cmp[0].runs) ASSERT_TRUE(run.done) << run.error;
  const auto v = planner::scenario_for_policy(base, "split:A=0.7/B=0.3");
  EXPECT_EQ(v.policy.name, "split");
  ASSERT_EQ(v.split.systems[0].pools.size(), 1u);
  EXPECT_EQ(v.split.systems[0].pools[0].nodes, 7);
  EXPECT_EQ(v.split.systems[1].pools[0].nodes, 3);
  EXPECT_EQ(v.split.systems[1].pools[1].nodes, -1);  // q: all of it, still B's
  const auto r = planner::run_scenario(v).result;
  EXPECT_EQ(r.partitions[0].nodes, 7);
  EXPECT_EQ(r.partitions[1].nodes, 4);
  // A's 20 jobs of one node, 100 s each: 7 at a time, the last three start at 200 s.
  sim::Tick last = 0;
  for (std::size_t j = 0; j < r.jobs.size(); ++j)
    if (r.job_partition[j] == 0) last = std::max(last, r.jobs[j].start);
  EXPECT_EQ(last, 200'000);
  // The same split declared in the file gives the same run.
  std::string declared = text;
  declared.replace(declared.find("{pool: p, nodes: 5}]}"), 21, "{pool: p, nodes: 7}]}");
  declared.replace(declared.find("{pool: p, nodes: 5}, q"), 22, "{pool: p, nodes: 3}, q");
  EXPECT_EQ(planner::run_scenario(scenarios::parse_scenario(declared, dir.path("s.yaml"))).result.fingerprint,
            r.fingerprint);
  EXPECT_EQ(cmp[0].runs[2].summary.fingerprint, r.fingerprint);
  // 50/50 is the file's own split.
  EXPECT_EQ(cmp[0].runs[3].summary.fingerprint, cmp[0].runs[1].summary.fingerprint);
  // Bad variants name what was expected.
  auto error_of = [&](const std::string& policy) {
    try {
      (void)planner::scenario_for_policy(base, policy);
    } catch (const sim::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("split:A=0.7/C=0.3").find("no system named \"C\" in the scenario's split"), std::string::npos);
  EXPECT_NE(error_of("split:A=0.7/b=0.3").find("did you mean \"B\"?"), std::string::npos);
  EXPECT_NE(error_of("split:A=0.7/B=0.2").find("the shares add up to 0.9"), std::string::npos);
  EXPECT_NE(error_of("split:A=0.7").find("no share for system B"), std::string::npos);
  EXPECT_NE(error_of("split:A=x/B=0.3").find("share \"x\" of A is not a number in (0, 1]"), std::string::npos);
  EXPECT_NE(error_of("split:A=0.01/B=0.99").find("system A would get no node"), std::string::npos);
  // B keeps pool q when its share of p rounds to no node.
  EXPECT_EQ(planner::scenario_for_policy(base, "split:A=0.99/B=0.01").split.systems[1].pools.size(), 1u);
}

// `split.shares` re-cuts the shared pools in the file, so a sweep varies the split as a value:
// `variants: {split.shares: ["A=0.7/B=0.3", "A 0.2 / B 0.8"]}`.
TEST_F(Split, SweepVariesTheSplitThroughShares) {
  dir.write("t.csv", "id,tenant,queue,submit,gpus,runtime\n1,ta,q,0,8,100\n2,tb,q,0,8,100\n");
  dir.write("s.yaml",
            "name: sweep-split\n"
            "cluster:\n  pools:\n    - {name: p, nodes: 10, gpus_per_node: 8, gpu_type: A100}\n"
            "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 5}]}\n"
            "    B: {policy: fifo, pools: [{pool: p, nodes: 5}]}\n"
            "  routes: [{tenant: tb, to: B}]\n  default: A\n"
            "variants:\n  split.shares: [\"A=0.7/B=0.3\", \"A 0.2 / B 0.8\"]\n"
            "workload: {trace: t.csv}\n");
  const planner::SweepSpec spec = planner::load_sweep(dir.path("s.yaml"));
  const auto points = planner::expand(spec);
  ASSERT_EQ(points.size(), 2u);
  const auto first = planner::point_scenario(spec, points[0]);
  EXPECT_EQ(first.split.systems[0].pools[0].nodes, 7);
  EXPECT_EQ(first.split.systems[1].pools[0].nodes, 3);
  const auto second = planner::point_scenario(spec, points[1]);
  EXPECT_EQ(second.split.systems[0].pools[0].nodes, 2);
  EXPECT_EQ(second.split.systems[1].pools[0].nodes, 8);
  EXPECT_EQ(planner::run_scenario(second).result.partitions[1].nodes, 8);
  // A bad share in the file is an error at the key.
  const std::string e = load_errors(
      "name: x\ncluster:\n  pools:\n    - {name: p, nodes: 10, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 5}]}\n"
      "    B: {policy: fifo, pools: [{pool: p, nodes: 5}]}\n  default: A\n  shares: \"A=0.7/C=0.3\"\n"
      "workload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:10:11: split.shares: no system named \"C\" in the scenario's split"), std::string::npos)
      << e;
}
