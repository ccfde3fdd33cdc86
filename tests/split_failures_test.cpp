// A split site (docs/split.md) under the failure drill, the runtime model and cluster.topology
// (issue #35): the failures, outages and maintenance windows, the pools' GPU types and the fabric
// name the scenario's nodes and pools; the engine runs the partitioned cluster, so they are
// mapped to it, and a node that fails is down in whichever system owns it then, its jobs killed
// and retried as on a site of one system.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "models/observer.hpp"
#include "planner/run.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "split_support.hpp"

using namespace headroom;

using headroom::testing::expect_owned;
using headroom::testing::kMoveCluster;
using headroom::testing::node_downs;
using headroom::testing::runs_of;

// Each test in a folder of its own, its trace in t.csv (tests/split_support.hpp).
class SplitFailures : public headroom::testing::SplitSite {};
class SplitTopology : public headroom::testing::SplitSite {};

// The outage names a-1, the scenario's second node of pool a. The engine runs S's pools first
// (b@S: node 0 = b-0, a@S: node 1 = a-0), then T's (a@T: node 2 = a-1), so the outage takes
// engine node 2, T's, down: T's job t1 (0..100 s there) is killed at 30 s, keeps the 20 s of its
// checkpoint (every 20 s), is retried after the 10 s back-off (40 s), waits for its node until
// the outage ends at 50 s and reruns there with 80 s of work left plus the 5 s restart overhead,
// ending at 135 s. Lost: 10 s since the checkpoint + 5 s overhead, on 8 GPUs = 120 GPU-s. S's
// jobs on nodes 0 and 1 are not touched. Unmapped, the outage would have hit node 1, S's a-0.
TEST_F(SplitFailures, AnOutageHitsTheSystemThatOwnsTheNamedNode) {
  trace(
      "id,tenant,queue,submit,gpus,runtime\n"
      "1,ts,q,0,8,100\n"
      "2,ts,q,0,8,100\n"
      "3,tt,q,0,8,100\n");
  const std::string text =
      "name: outage\n"
      "cluster:\n  pools:\n"
      "    - {name: a, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n"
      "    S: {policy: fifo, pools: [b, {pool: a, nodes: 1}]}\n"
      "    T: {policy: fifo, pools: [{pool: a, nodes: 1}]}\n"
      "  routes: [{tenant: tt, to: T}]\n  default: S\n"
      "failures:\n"
      "  events:\n    - {at: 30s, nodes: [a-1], duration: 20s}\n"
      "  jobs:\n    retry: {limit: 3, backoff: 10s}\n    checkpoint_interval: 20s\n    restart_overhead: 5s\n"
      "workload: {trace: t.csv}\n";
  const auto o = run_text(text);
  const auto& r = o.result;
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.job_partition, (std::vector<std::uint32_t>{0, 0, 1}));
  EXPECT_EQ(node_downs(r, sim::kNever), (std::vector<std::pair<sim::Tick, std::int32_t>>{{30'000, 2}}));
  EXPECT_EQ(r.jobs_killed, 1);
  EXPECT_EQ(r.failure_lost_gpu_ms, 120'000);
  ASSERT_EQ(r.kills.size(), 1u);
  EXPECT_EQ(r.kills[0].job, 2u);
  EXPECT_EQ(r.kills[0].time, 30'000);
  EXPECT_EQ(r.kills[0].restart, 50'000);
  EXPECT_EQ(runs_of(r, 2), (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 30'000}, {50'000, 135'000}}));
  EXPECT_EQ(r.jobs[2].first_node, 2);
  for (std::uint32_t j : {0u, 1u}) {
    EXPECT_EQ(runs_of(r, j), (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 100'000}})) << "job " << j;
    EXPECT_LT(r.jobs[j].first_node, 2);
  }
  for (const auto& j : r.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.sim_end, 135'000);
  // The drill's KPIs: one scripted outage, its recovery.
  const results::Summary s = results::summarize(r);
  EXPECT_EQ(s.failures.jobs_killed, 1);
  ASSERT_EQ(r.drill_start.size(), 1u);
  EXPECT_EQ(r.drill_start[0], 30'000);
  EXPECT_EQ(run_text(text).result.fingerprint, r.fingerprint);
}

// A node that fails while it drains for a move. Node 0 is A's, node 1 B's (8 GPUs each, fifo on
// both). At 50 s node 1 starts draining for A (its job b1 runs on, 0..100 s); at 70 s an outage
// takes it down for 20 s. b1 is killed as on a site of one system (no checkpoint: all 70 s lost)
// and retried after 10 s, in B's queue; the node is now empty, so it changes owner at once (70 s)
// and joins A after the 10 s move delay (80 s), but stays down in A's view until the outage ends
// at 90 s, when A's second job a2 starts on it (90..120 s). a3 takes node 0 when a1 ends (100 s).
// B has no node until the move of 200 s hands node 1 back (idle: at once, ready at 210 s): b1
// reruns 210..310 s, then b2 (submitted at 205 s) 310..320 s.
TEST_F(SplitFailures, ANodeThatFailsWhileItDrainsForAMoveKillsItsOwnersJob) {
  trace(
      "id,tenant,queue,submit,gpus,runtime\n"
      "1,ta,q,0,8,100\n"
      "2,ta,q,0,8,30\n"
      "3,ta,q,0,8,50\n"
      "4,tb,q,0,8,100\n"
      "5,tb,q,205,4,10\n");
  const auto o = run_text(std::string("name: drain-fail\n") + kMoveCluster +
                          "  moves:\n"
                          "    - {at: 50s, nodes: 1, from: B, to: A, delay: 10s}\n"
                          "    - {at: 200s, nodes: 1, from: A, to: B, delay: 10s}\n"
                          "failures:\n"
                          "  events:\n    - {at: 70s, nodes: [p-1], duration: 20s}\n"
                          "  jobs:\n    retry: {limit: 3, backoff: 10s}\n"
                          "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  ASSERT_EQ(r.moves.size(), 2u);
  EXPECT_EQ(r.moves[0].node, 1);
  EXPECT_EQ(r.moves[0].requested, 50'000);
  EXPECT_EQ(r.moves[0].changed, 70'000);  // emptied by the failure
  EXPECT_EQ(r.moves[0].ready, 80'000);
  EXPECT_EQ(r.moves[0].preempted, 0);
  EXPECT_EQ(r.moves[1].node, 1);
  EXPECT_EQ(r.moves[1].changed, 200'000);
  EXPECT_EQ(r.moves[1].ready, 210'000);
  EXPECT_EQ(r.jobs_killed, 1);
  EXPECT_EQ(r.failure_lost_gpu_ms, 8 * 70'000);
  ASSERT_EQ(r.kills.size(), 1u);
  EXPECT_EQ(r.kills[0].job, 3u);
  EXPECT_EQ(r.kills[0].restart, 210'000);
  EXPECT_EQ(runs_of(r, 3), (std::vector<std::pair<sim::Tick, sim::Tick>>{{0, 70'000}, {210'000, 310'000}}));
  EXPECT_EQ(r.jobs[3].preemptions, 0);  // killed by the failure, not preempted by the drain
  const std::vector<sim::Tick> start = {0, 90'000, 100'000, 0, 310'000};  // b1: its first start
  const std::vector<std::int32_t> node = {0, 1, 0, 1, 1};
  for (std::size_t j = 0; j < 5; ++j) {
    SCOPED_TRACE("job " + std::to_string(r.jobs[j].trace_id));
    EXPECT_EQ(r.jobs[j].state, static_cast<std::uint8_t>(models::JobState::Completed));
    EXPECT_EQ(r.jobs[j].start, start[j]);
    EXPECT_EQ(r.jobs[j].first_node, node[j]);
  }
  EXPECT_EQ(r.sim_end, 320'000);
  expect_owned(r);
  EXPECT_GT(headroom::testing::expect_no_start_while_down(r), 0);
}

// A maintenance window of pool p, whose nodes two systems share, walks the pool's nodes in the
// scenario's order wherever they went: p-0 (A's) first, then p-1 (B's), one at a time (batch 1),
// each drained (running jobs finish) and down 20 s. From 10 s node 0 drains; a1 ends at 30 s, the
// node is down 30..50 s, and a2 (submitted at 35 s) starts at 50 s. Then node 1 drains from 50 s:
// B's b2 (45..65 s) runs on, the node is down 65..85 s, and b3 (submitted at 66 s) starts at 85 s.
TEST_F(SplitFailures, MaintenanceOfASharedPoolDrainsEachSystemsNodesInTurn) {
  trace(
      "id,tenant,queue,submit,gpus,runtime\n"
      "1,ta,q,0,8,30\n"
      "3,tb,q,0,8,30\n"
      "2,ta,q,35,8,10\n"
      "4,tb,q,45,8,20\n"
      "5,tb,q,66,8,10\n");
  const auto o = run_text(
      "name: maintenance\n"
      "cluster:\n  pools:\n    - {name: p, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
      "    B: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
      "  routes: [{tenant: tb, to: B}]\n  default: A\n"
      "failures:\n"
      "  maintenance:\n    - {pool: p, start: 10s, duration: 20s, drain: true, batch: 1}\n"
      "workload: {trace: t.csv}\n");
  const auto& r = o.result;
  EXPECT_EQ(node_downs(r, sim::kNever), (std::vector<std::pair<sim::Tick, std::int32_t>>{{30'000, 0}, {65'000, 1}}));
  const std::vector<sim::Tick> start = {0, 0, 50'000, 45'000, 85'000};
  const std::vector<std::int32_t> node = {0, 1, 0, 1, 1};
  for (std::size_t j = 0; j < 5; ++j) {
    SCOPED_TRACE("job " + std::to_string(r.jobs[j].trace_id));
    EXPECT_EQ(r.jobs[j].state, static_cast<std::uint8_t>(models::JobState::Completed));
    EXPECT_EQ(r.jobs[j].start, start[j]);
    EXPECT_EQ(r.jobs[j].first_node, node[j]);
  }
  EXPECT_EQ(r.jobs_killed, 0);
  EXPECT_EQ(r.sim_end, 95'000);
}

// Random failures draw each node's stream under its name on the unsplit site, so a seed fails
// the same nodes at the same instants with the split as without it (here the two runs' engine
// numbering is the same: A holds p-0 and p-1, B p-2 and p-3), while jobs run on every node.
TEST_F(SplitFailures, RandomFailuresHitTheSameNodesAsOnTheUnsplitSite) {
  std::string csv = "id,tenant,queue,submit,gpus,runtime\n";
  for (int j = 0; j < 8; ++j) csv += std::to_string(j + 1) + (j % 2 == 0 ? ",ta" : ",tb") + ",q,0,8,86400\n";
  trace(csv);
  const std::string common =
      "cluster:\n  pools:\n    - {name: p, nodes: 4, gpus_per_node: 8, gpu_type: A100}\n"
      "failures:\n  nodes: {mtbf: 2h, repair: 10m}\n  jobs:\n    retry: {limit: 1000, backoff: 10s}\n"
      "    checkpoint_interval: 10m\n"
      "workload: {trace: t.csv}\n";
  const auto shared = run_text("name: shared\npolicy: {name: fifo}\n" + common);
  const auto split = run_text("name: split\n" + common +
                              "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 2}]}\n"
                              "    B: {policy: fifo, pools: [{pool: p, nodes: 2}]}\n"
                              "  routes: [{tenant: tb, to: B}]\n  default: A\n");
  const auto a = node_downs(shared.result, 12 * sim::kHour);
  EXPECT_GE(a.size(), 12u);
  EXPECT_EQ(node_downs(split.result, 12 * sim::kHour), a);
}

// Bad input keeps its place in the file: a failure naming a node that is not in the cluster.
TEST_F(SplitFailures, AnOutageOfAMissingNodeNamesTheLineAndColumn) {
  trace("id,tenant,queue,submit,gpus,runtime\n1,ta,q,0,8,100\n");
  const std::string e = load_errors(
      "name: bad\n"
      "cluster:\n  pools:\n    - {name: p, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n    A: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
      "    B: {policy: fifo, pools: [{pool: p, nodes: 1}]}\n"
      "  default: A\n"
      "failures:\n  events:\n    - {at: 30s, nodes: [p-2], duration: 20s}\n"
      "workload: {trace: t.csv}\n");
  EXPECT_NE(e.find("s.yaml:12:25"), std::string::npos) << e;
  EXPECT_NE(e.find("no node named \"p-2\""), std::string::npos) << e;
}

// The runtime model (runtime:, docs/heterogeneity.md) on a split site: each pool keeps its GPU
// type wherever the split puts it. Pools v (V100) and a (A100); S holds a, T holds v, so the
// engine runs a@S first (pool 0) and v@T (pool 1), the reverse of the scenario's order. Class c
// runs twice as fast on an A100 as on the reference V100: S's job of 100 s (measured on a V100)
// takes 50 s on S's A100 node, T's job 100 s on T's V100 node.
TEST_F(SplitFailures, TheRuntimeModelScalesEachJobByItsOwnersGpuType) {
  trace(
      "id,tenant,queue,submit,gpus,runtime\n"
      "1,ts,q,0,8,100\n"
      "2,tt,q,0,8,100\n");
  const std::string text =
      "name: runtime\n"
      "cluster:\n  pools:\n"
      "    - {name: v, nodes: 1, gpus_per_node: 8, gpu_type: V100}\n"
      "    - {name: a, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "split:\n  systems:\n"
      "    S: {policy: fifo, pools: [a]}\n"
      "    T: {policy: fifo, pools: [v]}\n"
      "  routes: [{tenant: tt, to: T}]\n  default: S\n"
      "runtime:\n  reference_gpu: V100\n  classes: [{queue: q, class: c}]\n"
      "  throughput: {c: {V100: 1, A100: 2}}\n"
      "workload: {trace: t.csv}\n";
  const auto o = run_text(text);
  const auto& r = o.result;
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].first_node, 0);  // a@S
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[0].end, 50'000);
  EXPECT_EQ(r.jobs[1].first_node, 1);  // v@T
  EXPECT_EQ(r.jobs[1].end, 100'000);
  EXPECT_EQ(r.sim_end, 100'000);
}

// Without a split nothing of the mapping applies: the same failures (an outage, a maintenance
// window walking a pool batch by batch) keep the fingerprints of the code before it, on a small
// case and on the bundled failure drill (fifo, bench/RESULTS.md).
TEST_F(SplitFailures, TheSameFailuresWithoutASplitKeepTheirFingerprints) {
  trace(
      "id,tenant,queue,submit,gpus,runtime\n"
      "1,ts,q,0,8,100\n"
      "2,ts,q,0,8,100\n"
      "3,tt,q,0,8,100\n");
  const auto o = run_text(
      "name: outage\n"
      "cluster:\n  pools:\n"
      "    - {name: a, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: b, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "policy: fifo\n"
      "failures:\n"
      "  events:\n    - {at: 30s, nodes: [a-1], duration: 20s}\n"
      "  maintenance:\n    - {pool: a, start: 60s, duration: 20s, drain: true, batch: 1}\n"
      "  jobs:\n    retry: {limit: 3, backoff: 10s}\n    checkpoint_interval: 20s\n"
      "    restart_overhead: 5s\n"
      "workload: {trace: t.csv}\n");
  EXPECT_EQ(o.result.fingerprint, "47debaf6725aa68f");
  EXPECT_EQ(o.result.node_outages, 3);
  const auto drill = planner::run_scenario(
      scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/failure-drill.yaml"));
  EXPECT_EQ(drill.result.fingerprint, "4be7341471d0553d");
}

// cluster.topology with split: (docs/split.md, "The topology"): the engine's slowdown model reads
// the site's fabric in its own numbering, and each system's view has the topology of its own
// nodes. Pools x and y of two 8-GPU nodes, each pool under a leaf switch of its own (l0: x-0,
// x-1; l1: y-0, y-1), one spine. A holds x-0 and pool y, in that order (its view: node 0 = x-0
// under l0, nodes 1 and 2 = y-0 and y-1 under l1); B holds x-1. A runs Slurm, whose topology/tree
// follows the view's topology: A's 16-GPU training job goes to the leaf that holds two of A's
// nodes, y-0 and y-1 (engine nodes 1 and 2), one leaf apart: slowdown 1 + 0.25 x (2 / 2) x
// (400 / 400) = 1.25 (docs/topology.md), so its 100 s take 125 s. Spread over x-0 and y-0 it
// would cross the spine (4 hops, 1.5: 150 s), as it does when A's view has no topology (Slurm
// then takes its first nodes, 0 and 1); read in the scenario's numbering, engine nodes 1 and 2
// would be x-1 and y-0, across the spine too. B's one-node job runs its 100 s.
TEST_F(SplitTopology, EachSystemPlacesOnTheTopologyOfItsOwnNodes) {
  trace(
      "id,tenant,queue,submit,gpus,runtime,kind\n"
      "1,ta,q,0,16,100,train\n"
      "2,tb,q,0,8,100,train\n");
  const std::string text =
      "name: topology\n"
      "cluster:\n  pools:\n"
      "    - {name: x, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
      "    - {name: y, nodes: 2, gpus_per_node: 8, gpu_type: A100}\n"
      "  topology:\n    switches:\n"
      "      - {name: l0, nodes: \"x-[0-1]\", node_gbps: 400}\n"
      "      - {name: l1, nodes: \"y-[0-1]\", node_gbps: 400}\n"
      "      - {name: spine, switches: [l0, l1]}\n"
      "split:\n  systems:\n"
      "    A: {policy: slurm, pools: [{pool: x, nodes: 1}, y]}\n"
      "    B: {policy: fifo, pools: [{pool: x, nodes: 1}]}\n"
      "  routes: [{tenant: tb, to: B}]\n  default: A\n"
      "workload: {trace: t.csv}\n";
  const auto o = run_text(text);
  const auto& r = o.result;
  ASSERT_EQ(r.jobs.size(), 2u);
  std::vector<std::int32_t> nodes;
  for (const auto& pl : r.placements)
    if (pl.job == 0) nodes.push_back(pl.node);
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(nodes, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[0].end, 125'000);
  EXPECT_EQ(r.jobs[1].first_node, 3);
  EXPECT_EQ(r.jobs[1].end, 100'000);
  // A failure domain of the topology (domain: switch) names the same nodes: l1's outage at 50 s
  // stops A's job, not B's.
  const auto f = run_text(text + "failures:\n  events:\n    - {at: 50s, switch: l1, duration: 10s}\n");
  ASSERT_EQ(f.result.kills.size(), 1u);
  EXPECT_EQ(f.result.kills[0].job, 0u);
  EXPECT_EQ(f.result.jobs[1].end, 100'000);
}
