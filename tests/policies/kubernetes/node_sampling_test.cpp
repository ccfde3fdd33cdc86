// kube-scheduler's node sampling (policies/common/node_sampling.hpp, pkg/scheduler/schedule_one.go):
// numFeasibleNodesToFind from percentageOfNodesToScore, the nodes a cycle filters from
// nextStartNodeIndex and where the next cycle starts, and which nodes the kubernetes policy and
// Kueue's placement pick across cycles with the default and with percentageOfNodesToScore: 100.
#include "policies/common/node_sampling.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "planner/compare.hpp"
#include "planner/run.hpp"
#include "policies/kubernetes/kubernetes.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/temp_dir.hpp"
#include "tests/test_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::NodeId;
namespace k8s = policies::k8s;
namespace ht = headroom::testing;

// numFeasibleNodesToFind: under 100 nodes all; else (50 - nodes/125) %, at least 5 %, at least
// 100 nodes; a configured percentage replaces the adaptive one.
TEST(NodeSampling, NumFeasibleNodesToFindFollowsTheReferenceRule) {
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 0), 0);
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 50), 50);
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 99), 99);
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 100), 100);    // 50 % = 50 -> at least 100
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 150), 100);    // 49 % = 73 -> 100
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 1024), 430);   // RICC: 50 - 8 = 42 % of 1,024
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 5000), 500);   // 50 - 40 = 10 %
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 6250), 312);   // 50 - 50 = 0 -> 5 %
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(0, 10000), 500);  // 50 - 80 < 5 -> 5 %
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(30, 1000), 300);
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(1, 5000), 100);  // 50 -> at least 100
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(100, 10000), 10000);
  EXPECT_EQ(k8s::num_feasible_nodes_to_find(100, 40), 40);
}

namespace {

// The feasible nodes each cycle offers, in order, and where the next one starts.
struct Cycle {
  std::vector<NodeId> feasible;
  std::int64_t next_start;
};

Cycle run_cycle(k8s::NodeSampler& s, const models::ClusterState& c, std::int64_t percentage, std::int32_t gpus) {
  Cycle out;
  s.cycle(
      c, percentage, gpus, [](models::PoolId) { return true; },
      [&](NodeId id) {
        out.feasible.push_back(id);
        return true;
      });
  out.next_start = s.next_start();
  return out;
}

// Pools a and b of that many 8-GPU nodes.
models::ClusterSpec two_pools(std::int32_t a, std::int32_t b) {
  models::ClusterSpec spec;
  spec.pools.push_back({"a", a, 8, "A100", 0, 0});
  spec.pools.push_back({"b", b, 8, "A100", 0, 0});
  return spec;
}

std::vector<NodeId> ids(NodeId from, NodeId to) {  // [from, to)
  std::vector<NodeId> v;
  for (NodeId i = from; i < to; ++i) v.push_back(i);
  return v;
}

std::vector<NodeId> concat(std::vector<NodeId> a, const std::vector<NodeId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// 150 nodes (two pools, 100 + 50): a cycle wants 100 feasible nodes. The next one starts after the
// last node processed: feasible or not, every node from the start to the 100th feasible counts
// (processedNodes = feasible + filtered out); a cycle that finds fewer processes every node and
// leaves the start where it was.
TEST(NodeSampling, CyclesStartWhereTheLastOneStopped) {
  const models::ClusterSpec spec = two_pools(100, 50);
  models::ClusterState c(spec);
  k8s::NodeSampler s;

  Cycle k = run_cycle(s, c, 0, 1);
  EXPECT_EQ(k.feasible, ids(0, 100));
  EXPECT_EQ(k.next_start, 100);
  k = run_cycle(s, c, 0, 1);
  EXPECT_EQ(k.feasible, concat(ids(100, 150), ids(0, 50)));
  EXPECT_EQ(k.next_start, 50);

  // Nodes 60..79 (pool a) and 120..139 (pool b) full: they are processed but not feasible.
  for (NodeId id = 60; id < 80; ++id) c.allocate({models::Slice{id, 8, 0, 0}});
  for (NodeId id = 120; id < 140; ++id) c.allocate({models::Slice{id, 8, 0, 0}});
  k = run_cycle(s, c, 0, 1);  // from 50: 50..59, 80..119, 140..149, 0..39 = 100 feasible
  EXPECT_EQ(k.feasible, concat(concat(concat(ids(50, 60), ids(80, 120)), ids(140, 150)), ids(0, 40)));
  EXPECT_EQ(k.next_start, 40);

  // Asking for 2 GPUs where only nodes 10 and 145 have them: both found, every node processed.
  for (NodeId id = 0; id < 150; ++id) {
    const std::int32_t free = c.node(id).free_gpus;
    const std::int32_t keep = id == 10 || id == 145 ? 2 : 1;
    if (free > keep) c.allocate({models::Slice{id, free - keep, 0, 0}});
  }
  k = run_cycle(s, c, 0, 2);
  EXPECT_EQ(k.feasible, (std::vector<NodeId>{145, 10}));
  EXPECT_EQ(k.next_start, 40);

  // percentageOfNodesToScore 100: every node, and the start stays.
  k = run_cycle(s, c, 100, 0);
  EXPECT_EQ(k.feasible.size(), 150u);
  EXPECT_EQ(k.feasible.front(), 40u);
  EXPECT_EQ(k.next_start, 40);
}

// Counting the nodes 64 at a time (cycle_all_pass, for a filter the index alone decides) ends where
// offering them one by one does, and finds the same first node.
TEST(NodeSampling, CountingAllPassingNodesMovesTheStartAsOfferingThem) {
  const models::ClusterSpec spec = two_pools(130, 70);
  models::ClusterState c(spec);
  for (NodeId id = 0; id < 200; id += 3) c.allocate({models::Slice{id, 8, 0, 0}});  // every third full
  for (NodeId id = 1; id < 200; id += 7)
    if (id % 3 != 0) c.allocate({models::Slice{id, 7, 0, 0}});  // some with 1 GPU free
  k8s::NodeSampler one, counted;
  const std::int32_t gpus[] = {1, 2, 1, 1, 8, 1, 2};
  std::vector<NodeId> firsts;
  std::vector<std::int64_t> starts;
  for (const std::int32_t g : gpus) {
    NodeId first = UINT32_MAX;
    one.cycle(
        c, 0, g, [](models::PoolId) { return true; },
        [&](NodeId id) {
          if (first == UINT32_MAX) first = id;
          return true;
        });
    EXPECT_EQ(counted.cycle_all_pass(c, 0, g, [](models::PoolId) { return true; }), first) << g;
    EXPECT_EQ(counted.next_start(), one.next_start()) << g;
    firsts.push_back(first);
    starts.push_back(one.next_start());
  }
  // 200 nodes want 100. One GPU from 0: the nodes not a multiple of 3 pass, the 100th is 149.
  // Two GPUs from 150: 150 is full, 151 (not 1 mod 7) has 8.
  EXPECT_EQ(firsts[0], 1u);
  EXPECT_EQ(starts[0], 150);
  EXPECT_EQ(firsts[1], 151u);
}

// The word-at-a-time cycle (cycle_words, Kueue's placement; cycle and cycle_all_pass are it with
// a one-by-one or an identity filter): take gets the nodes the filter passes, in order, up to the
// numFeasibleNodesToFind-th and none after it, even within its word; the start moves past it.
// 200 nodes (130 + 70) want 100; the filter drops every multiple of 5.
TEST(NodeSampling, WordCycleTakesThePassingNodesUpToTheOneItNeeds) {
  const models::ClusterSpec spec = two_pools(130, 70);
  models::ClusterState c(spec);
  k8s::NodeSampler s;
  std::int64_t filtered = 0;
  auto filter = [&](NodeId base, std::uint64_t bits) {
    ++filtered;
    for (std::uint64_t t = bits; t != 0; t &= t - 1) {
      const int b = std::countr_zero(t);
      if ((base + static_cast<NodeId>(b)) % 5 == 0) bits &= ~(std::uint64_t{1} << b);
    }
    return bits;
  };
  auto run = [&](bool first_only, std::int64_t offered) {
    std::vector<NodeId> taken;
    s.cycle_words(
        c, 0, 1, [](models::PoolId) { return true; }, filter,
        [&](NodeId base, std::uint64_t bits) {
          for (; bits != 0; bits &= bits - 1) taken.push_back(base + static_cast<NodeId>(std::countr_zero(bits)));
        },
        first_only, offered);
    return taken;
  };
  auto passing = [](NodeId from, NodeId to) {  // [from, to) less the multiples of 5
    std::vector<NodeId> v;
    for (NodeId i = from; i < to; ++i)
      if (i % 5 != 0) v.push_back(i);
    return v;
  };
  // From 0: 1..124 hold the 100 passing nodes; 126 and 127, in 124's word, are not taken.
  EXPECT_EQ(run(false, -1), passing(0, 125));
  EXPECT_EQ(s.next_start(), 125);
  // From 125: 126..129, 131..199 (60), then 1..49 (40).
  EXPECT_EQ(run(false, -1), concat(passing(125, 200), passing(0, 50)));
  EXPECT_EQ(s.next_start(), 50);
  // At most 3 can pass (fewer than 100): every node would be processed, so the start stays, and
  // with first_only the scan ends at the first word holding a passing node.
  filtered = 0;
  const std::vector<NodeId> first = run(true, 3);
  EXPECT_EQ(first, passing(50, 64));
  EXPECT_EQ(filtered, 1);
  EXPECT_EQ(s.next_start(), 50);
  // None can pass: nothing is filtered.
  filtered = 0;
  EXPECT_TRUE(run(true, 0).empty());
  EXPECT_TRUE(run(false, 0).empty());
  EXPECT_EQ(filtered, 0);
  EXPECT_EQ(s.next_start(), 50);
}

namespace {

// Five one-GPU pods with cpu and memory requests, one a second, each running long, on 150 idle
// nodes of 64 cores and 512 GiB: the node each lands on.
std::vector<NodeId> placements(const std::string& policy, const policies::PolicyParams& params) {
  ht::WorkloadBuilder b;
  for (int i = 0; i < 5; ++i) b.job(i, 1, 10000);
  models::Workload w = b.build();
  for (auto& j : w.jobs) {
    j.cpus = 8;
    j.memory_mib = 64 * 1024;
  }
  models::ClusterSpec c;
  c.pools.push_back({"pool", 150, 8, "A100", 64, 512});
  auto p = policies::make_policy(policy, params, 1);
  simulation::Simulation sim(w, c, *p, nullptr);
  sim.run();
  std::vector<NodeId> out;
  for (JobIndex j = 0; j < w.jobs.size(); ++j) out.push_back(sim.job_placement(j).at(0).node);
  return out;
}

policies::PolicyParams kueue_params(const std::string& extra) {
  const std::string text =
      "name: q\ncluster:\n  pools:\n    - {name: pool, nodes: 1, gpus_per_node: 8, gpu_type: A100}\n"
      "policy:\n  name: kueue\n  resourceFlavors: {default: {pools: [pool]}}\n"
      "  clusterQueues: {cq: {namespaces: [\"*\"], resources: {default: {gpu: {nominalQuota: 1200}}}}}\n" +
      extra + "workload:\n  trace: tiny.csv\n";
  return scenarios::parse_scenario(text, ht::kInlineScenario).policy.params;
}

}  // namespace

// LeastAllocated scores an idle node 87 and a node with one such pod 75, so each pod takes the first
// idle node its cycle finds. With 150 nodes a cycle looks for 100: the first pod scans 0..99
// (node 0), the second 100..149, 0..49 (node 100), the third 50..149 (node 50), the fourth
// 0..99 (node 1), the fifth 100..149, 0..49 (node 101). Scoring every node, they fill 0..4.
TEST(NodeSampling, KubernetesPicksAmongTheNodesItsCycleFound) {
  EXPECT_EQ(placements("kubernetes", {}), (std::vector<NodeId>{0, 100, 50, 1, 101}));
  EXPECT_EQ(placements("kubernetes", ht::params({{"percentageOfNodesToScore", "100"}})),
            (std::vector<NodeId>{0, 1, 2, 3, 4}));
  EXPECT_EQ(placements("kubernetes", ht::params({{"percentageOfNodesToScore", "0"}})),
            (std::vector<NodeId>{0, 100, 50, 1, 101}));
}

TEST(NodeSampling, KueuePlacesItsPodsByTheSameSampling) {
  EXPECT_EQ(placements("kueue", kueue_params("")), (std::vector<NodeId>{0, 100, 50, 1, 101}));
  EXPECT_EQ(placements("kueue", kueue_params("  percentageOfNodesToScore: 100\n")),
            (std::vector<NodeId>{0, 1, 2, 3, 4}));
}

TEST(NodeSampling, PercentageOutsideZeroToHundredIsAnError) {
  for (const char* bad : {"101", "-1", "half"}) {
    std::vector<sim::InputError> errors;
    k8s::check_params(ht::params({{"percentageOfNodesToScore", bad}}), errors);
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_EQ(errors[0].where(), "policy.percentageOfNodesToScore");
    EXPECT_EQ(errors[0].message(), std::string("expected an integer from 0 to 100, got \"") + bad + "\"");
  }
  std::vector<sim::InputError> none;
  k8s::check_params(ht::params({{"percentageOfNodesToScore", "50"}}), none);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(k8s::parse_config(ht::params({{"percentageOfNodesToScore", "50"}})).percentage_of_nodes_to_score, 50);
  EXPECT_EQ(k8s::parse_config({}).percentage_of_nodes_to_score, 0);
}

namespace {

// The fingerprint of `headroom compare SCENARIO --policies POLICY`'s run of `policy`, with
// percentageOfNodesToScore set when `percentage` is given.
std::string compare_fingerprint(const std::string& scenario, const std::string& policy, const char* percentage) {
  const auto base = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/" + scenario);
  auto sc = planner::scenario_for_policy(base, policy);
  if (percentage != nullptr) sc.policy.params["percentageOfNodesToScore"] = policies::ParamValue{percentage, "t", 1, 1};
  return planner::run_scenario(sc).result.fingerprint;
}

}  // namespace

// On the RICC drills (1,024 nodes; resource-shortage 768), percentageOfNodesToScore: 100 gives
// exactly the fingerprints every node scored gave before sampling was modelled (main at 91b01cd:
// bench/RESULTS.md), so nothing else changed; the default (430 of 1,024 nodes) gives the new ones.
TEST(NodeSampling, EveryNodeScoredGivesTheFingerprintsOfBefore) {
  struct Case {
    const char* scenario;
    const char* policy;
    const char* before;   // percentageOfNodesToScore: 100, and the code before it was modelled
    const char* sampled;  // the default
  };
  const Case cases[] = {
      {"scenarios/poc/real-tasks.yaml", "kubernetes", "1b4729aa6a1e1e49", "cc131d51d704930c"},
      {"scenarios/poc/real-tasks.yaml", "kueue", "e35637fd1e4b583f", "909c00e5f96a5fe7"},
      {"scenarios/poc/failure-drill.yaml", "kubernetes+coscheduling", "c6ebfb53b930b6f9", "ed2d0c037703c4dd"},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(compare_fingerprint(k.scenario, k.policy, "100"), k.before) << k.scenario << " " << k.policy;
    EXPECT_EQ(compare_fingerprint(k.scenario, k.policy, nullptr), k.sampled) << k.scenario << " " << k.policy;
  }
}

namespace {

// 400 gangs on 160 nodes of 16 GPUs (a sampled cycle looks for 100): pods of 4 and 6 GPUs share
// nodes, and a job whose GPUs its pod size does not divide ends with a smaller pod, so Kueue's
// placement sees its own tentative pods fill nodes part-way and then whole, at two pod sizes.
std::string gangs_scenario(const ht::TempDir& dir) {
  std::string csv = "submit,id,tenant,queue,gpus,runtime,gpus_per_node\n";
  std::uint64_t x = 12345;
  auto next = [&](std::uint64_t n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % n;
  };
  const int gpus[] = {1, 3, 6, 14, 30, 50, 100, 250};
  const int per_node[] = {0, 4, 6, 16};
  for (int i = 0; i < 400; ++i) {
    const int g = gpus[next(8)];
    const int p = per_node[next(4)];
    // Drawn one at a time, the run time first as GCC evaluated the + chain (the operands of + are
    // not sequenced: under clang this workload differed, and the pinned fingerprint with it).
    const auto runtime = 600 + next(7200);
    const auto tenant = next(3);
    csv += std::to_string(i * 40) + "," + std::to_string(i + 1) + ",t" + std::to_string(tenant) + ",q," +
           std::to_string(g) + "," + std::to_string(runtime) + "," + (p > 0 ? std::to_string(p) : "") + "\n";
  }
  dir.write("gangs.csv", csv);
  return dir.write(
      "s.yaml",
      "name: gangs\ncluster:\n  pools:\n    - {name: pool, nodes: 160, gpus_per_node: 16, gpu_type: A100}\n"
      "policy:\n  name: kueue\n  resourceFlavors: {default: {pools: [pool]}}\n"
      "  clusterQueues: {cq: {namespaces: [\"*\"], resources: {default: {gpu: {nominalQuota: 2560}}}}}\n"
      "workload: {trace: gangs.csv}\n");
}

}  // namespace

// Kueue's sampled cycles drop the nodes a job's own earlier pods have filled a word at a time
// (full_bits_ in policies/kueue/placement.cpp, kept for one pod size and worked out again when
// the size changes). Pinned: the fingerprint of main before that (7bad187), which tested each of
// those nodes pod after pod; a node dropped that a smaller last pod still fits, or one kept that
// is full, changes it.
TEST(NodeSampling, KueueGangsOfPartNodePodsPlaceAsTestingEachFilledNode) {
  ht::TempDir dir;
  const auto sc = scenarios::load_scenario(gangs_scenario(dir));
  const auto out = planner::run_scenario(sc);
  EXPECT_EQ(out.result.fingerprint, "23ec142c91c40921");
}
