// Interconnect topology (docs/topology.md): generator shapes, hops, bottleneck bandwidth, lowest
// common switch, lowest fitting domain and the slowdown model with exact values; the scenario
// YAML (explicit and generated forms) and its errors; switch failures; Slurm topology/tree derived
// from the cluster's topology.
#include "models/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/failures.hpp"
#include "models/observer.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/run_options.hpp"
#include "simulation/simulation.hpp"
#include "sim/errors.hpp"
#include "test_support.hpp"

using namespace headroom;
using models::kNoSwitch;
using models::NodeId;
using models::SwitchId;
using models::Topology;
using sim::kHour;
namespace ht = headroom::testing;

namespace {

models::ClusterSpec pool_cluster(int nodes, int gpus, const std::string& type = "A100",
                                 const std::string& name = "a100") {
  models::ClusterSpec c;
  c.pools.push_back({name, nodes, gpus, type, 0, 0});
  return c;
}

std::shared_ptr<const Topology> built(const models::ClusterSpec& c, const models::TopologySpec& spec) {
  std::string error;
  auto t = Topology::build(c, spec, error);
  EXPECT_TRUE(t != nullptr) << error;
  return t;
}

// A scenario whose cluster is 8 A100 nodes of 8 GPUs with `topology` (indented four spaces) and
// `rest` after the workload; the topology block starts on line 6.
std::string topo_yaml(const std::string& topology, const std::string& rest = "") {
  return "name: t\ncluster:\n  pools:\n    - {name: a100, nodes: 8, gpus_per_node: 8, gpu_type: A100}\n"
         "  topology:\n" +
         topology + "policy: fifo\nworkload:\n  trace: " + std::string(HEADROOM_SOURCE_DIR) +
         "/scenarios/examples/data/ricc-2010-first-14d.swf.gz\n" + rest;
}

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> out;
  try {
    scenarios::parse_scenario(text, "topo.yaml");
  } catch (const sim::InputErrors& e) {
    for (const auto& x : e.errors()) out.push_back(x.what());
  }
  return out;
}

std::string first_error(const std::string& text) {
  const auto all = errors_of(text);
  return all.empty() ? "" : all.front();
}

std::string build_error(const models::ClusterSpec& c, const models::TopologySpec& spec) {
  std::string error;
  auto t = Topology::build(c, spec, error);
  EXPECT_TRUE(t == nullptr);
  return error;
}

template <typename T>
std::vector<T> ids(std::span<const T> s) {
  return {s.begin(), s.end()};
}

}  // namespace

// ---- generators and queries ----

TEST(Topology, LeafSpineShapeHopsBottleneckAndCommonSwitch) {
  // 8 nodes, 2 per leaf, 2 leaves per spine: leaf-0..3 (ids 0-3), spine-0 and spine-1 (4, 5), core (6).
  const auto c = pool_cluster(8, 8);
  const auto t = built(c, models::leaf_spine_spec(c, 2, 2, 400, 0, 0));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->switch_count(), 7u);
  EXPECT_EQ(t->link_count(), 8u + 4u + 2u);
  EXPECT_EQ(t->levels(), 3);
  EXPECT_EQ(t->switch_name(4), "spine-0");
  EXPECT_EQ(t->switch_name(6), "core");
  EXPECT_EQ(ids(t->switches_at(2)), (std::vector<SwitchId>{4, 5}));
  EXPECT_EQ(ids(t->parents(2)), (std::vector<SwitchId>{5}));
  EXPECT_EQ(ids(t->children(6)), (std::vector<SwitchId>{4, 5}));
  EXPECT_EQ(ids(t->nodes_under(5)), (std::vector<NodeId>{4, 5, 6, 7}));
  EXPECT_EQ(ids(t->node_leaves(3)), (std::vector<SwitchId>{1}));
  EXPECT_EQ(ids(t->ancestors(3)), (std::vector<SwitchId>{1, 4, 6}));
  EXPECT_EQ(t->hops(0, 0), 0);
  EXPECT_EQ(t->hops(0, 1), 2);
  EXPECT_EQ(t->hops(0, 2), 4);
  EXPECT_EQ(t->hops(0, 4), 6);
  EXPECT_EQ(t->hops(7, 4), 4);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0}), 4800) << "A100 NVLink: 600 GB/s";
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 1}), 400);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 2, 4}), 400) << "non-blocking uplinks: 800 and 1600";
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{0, 1}), 0u);
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{0, 3}), 4u);
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{1, 2, 5}), 6u);
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{3}), 1u);
  EXPECT_EQ(t->max_hops(std::vector<NodeId>{0, 1, 2}), 4);
  EXPECT_EQ(t->reference_gbps(), 400);
}

TEST(Topology, OversubscribedUplinkIsTheBottleneck) {
  const auto c = pool_cluster(8, 8);
  const auto t = built(c, models::leaf_spine_spec(c, 2, 2, 400, 200, 0));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 1}), 400) << "one leaf: only node links";
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 2}), 200);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 4}), 200) << "spine uplinks non-blocking: 2 x 200";
  EXPECT_DOUBLE_EQ(t->slowdown(std::vector<NodeId>{0, 2}, 0.25), 1 + 0.25 * 2 * 2);
}

TEST(Topology, SlowdownModel) {
  const auto c = pool_cluster(8, 8);
  const auto t = built(c, models::leaf_spine_spec(c, 2, 2, 400, 0, 0));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slowdown(std::vector<NodeId>{0}, 0.25), 1.0);
  EXPECT_EQ(t->slowdown(std::vector<NodeId>{3, 3}, 0.25), 1.0) << "one node twice is one node";
  EXPECT_EQ(t->slowdown(std::vector<NodeId>{}, 0.25), 1.0);
  EXPECT_EQ(t->slowdown(std::vector<NodeId>{0, 1}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(t->slowdown(std::vector<NodeId>{0, 1}, 0.25), 1.25);
  EXPECT_DOUBLE_EQ(t->slowdown(std::vector<NodeId>{0, 2}, 0.25), 1.5);
  EXPECT_DOUBLE_EQ(t->slowdown(std::vector<NodeId>{0, 4}, 0.25), 1.75);
  // By placement and job kind, with the default intensities (train 0.25, inference 0).
  const models::Placement p = {{0, 8, 0, 0}, {4, 8, 0, 0}};
  EXPECT_DOUBLE_EQ(t->slowdown(p, models::JobKind::Train), 1.75);
  EXPECT_EQ(t->slowdown(p, models::JobKind::Inference), 1.0);
  EXPECT_DOUBLE_EQ(t->slowdown(p, models::JobKind::Batch), 1.3);
}

TEST(Topology, LowestFittingDomainIsTheLowestLevelBestFit) {
  const auto c = pool_cluster(8, 8);
  const auto t = built(c, models::leaf_spine_spec(c, 2, 2, 400, 0, 0));
  ASSERT_TRUE(t);
  const std::vector<std::int32_t> free = {8, 2, 4, 4, 8, 8, 8, 0};  // leaves: 10, 8, 16, 8
  EXPECT_EQ(t->lowest_fitting_domain(free, 8), 1u) << "spare 0 on leaf-1 and leaf-3: smallest id";
  EXPECT_EQ(t->lowest_fitting_domain(free, 10), 0u);
  EXPECT_EQ(t->lowest_fitting_domain(free, 12), 2u);
  EXPECT_EQ(t->lowest_fitting_domain(free, 20), 5u) << "spine-0 holds 18, spine-1 24";
  EXPECT_EQ(t->lowest_fitting_domain(free, 40), 6u);
  EXPECT_EQ(t->lowest_fitting_domain(free, 43), kNoSwitch);
  EXPECT_EQ(t->lowest_fitting_domain(free, 20, 1), kNoSwitch) << "no leaf holds 20";
  EXPECT_EQ(t->lowest_fitting_domain(free, 20, 2), 5u);
  EXPECT_EQ(t->lowest_fitting_domain(free, 8, 1), 1u);
}

TEST(Topology, KAryFatTree) {
  // k = 4: 16 nodes, 8 edge switches (ids 0-7), 8 aggregation (8-15), 4 core (16-19).
  const auto c = pool_cluster(16, 8, "H100", "h100");
  const auto t = built(c, models::fat_tree_k_spec(c, 4, 400));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->switch_count(), 20u);
  EXPECT_EQ(t->link_count(), 16u + 16u + 16u);
  EXPECT_EQ(t->switch_name(8), "agg-0-0");
  EXPECT_EQ(t->switch_name(19), "core-1-1");
  EXPECT_EQ(ids(t->parents(0)), (std::vector<SwitchId>{8, 9}));
  EXPECT_EQ(ids(t->parents(8)), (std::vector<SwitchId>{16, 17}));
  EXPECT_EQ(t->hops(0, 1), 2);
  EXPECT_EQ(t->hops(0, 2), 4) << "same pod";
  EXPECT_EQ(t->hops(0, 4), 6) << "across pods";
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{0, 3}), 8u);
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{0, 15}), 16u);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 15}), 400);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{5}), 7200) << "H100 NVLink: 900 GB/s";
  // A partial tree: 6 nodes fill 3 edge switches of 2 pods; aggregation and core are kept.
  const auto c6 = pool_cluster(6, 8);
  const auto t6 = built(c6, models::fat_tree_k_spec(c6, 4, 100));
  ASSERT_TRUE(t6);
  EXPECT_EQ(t6->switch_count(), 3u + 4u + 4u);
  EXPECT_EQ(t6->hops(0, 5), 6);
}

TEST(Topology, RacksGeneratorKeepsRacksInsidePools) {
  models::ClusterSpec c = pool_cluster(4, 8);
  c.pools.push_back({"h100", 3, 8, "H100", 0, 0});
  const auto t = built(c, models::racks_spec(c, 2, 200, 0));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->switch_count(), 5u);
  EXPECT_EQ(t->switch_name(3), "rack-3");
  EXPECT_EQ(ids(t->nodes_under(2)), (std::vector<NodeId>{4, 5}));
  EXPECT_EQ(ids(t->nodes_under(3)), (std::vector<NodeId>{6}));
  EXPECT_EQ(t->hops(0, 1), 2);
  EXPECT_EQ(t->hops(3, 4), 4);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{4}), 7200);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0}), 4800);
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{0, 6}), 4u);
}

TEST(Topology, RailOptimisedFabric) {
  // 4 nodes x 4 GPUs in 2 groups of 2: rail-0-0..3 (ids 0-3), rail-1-0..3 (4-7), spine (8).
  const auto c = pool_cluster(4, 4);
  const auto t = built(c, models::rail_spec(c, 2, 4, 400, 0));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->switch_count(), 9u);
  EXPECT_EQ(t->link_count(), 16u + 8u);
  EXPECT_EQ(ids(t->node_leaves(0)), (std::vector<SwitchId>{0, 1, 2, 3}));
  EXPECT_EQ(ids(t->node_leaves(3)), (std::vector<SwitchId>{4, 5, 6, 7}));
  EXPECT_EQ(ids(t->nodes_under(6)), (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(t->hops(0, 1), 2) << "same group: over a rail";
  EXPECT_EQ(t->hops(0, 2), 4) << "other group: rail, spine, rail";
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 1}), 400) << "per rail (one NIC per GPU)";
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 2}), 400) << "rail uplinks non-blocking: 2 x 400";
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{0, 1}), 0u) << "rail 0 of group 0 (smallest id)";
  EXPECT_EQ(t->lowest_common_switch(std::vector<NodeId>{1, 2}), 8u);
  const auto o = built(c, models::rail_spec(c, 2, 4, 400, 100));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->bottleneck_gbps(std::vector<NodeId>{0, 2}), 100);
  EXPECT_DOUBLE_EQ(o->slowdown(std::vector<NodeId>{0, 2}, 0.25), 1 + 0.25 * 2 * 4);
  const std::vector<std::int32_t> free = {4, 4, 2, 4};
  EXPECT_EQ(o->lowest_fitting_domain(free, 6), 4u) << "group 1 (6 free) fits best; its first rail";
  EXPECT_EQ(o->lowest_fitting_domain(free, 8), 0u);
  EXPECT_EQ(o->lowest_fitting_domain(free, 9), 8u);
}

TEST(Topology, NvlinkDefaultsAndOverrides) {
  EXPECT_EQ(models::default_nvlink_gbps("V100"), 2400);
  EXPECT_EQ(models::default_nvlink_gbps("a100"), 4800);
  EXPECT_EQ(models::default_nvlink_gbps("H200"), 7200);
  EXPECT_EQ(models::default_nvlink_gbps("T4"), 256);
  EXPECT_EQ(models::default_nvlink_gbps("G2"), 256) << "unknown type: PCIe Gen3 x16";
  const auto c = pool_cluster(2, 8);
  auto spec = models::racks_spec(c, 2, 100, 0);
  spec.nvlink_gbps.emplace_back("a100", 1000);
  const auto t = built(c, spec);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->intra_node_gbps(1), 1000);
}

TEST(Topology, BuildRejectsBrokenSpecs) {
  const auto c = pool_cluster(4, 8);
  auto spec = models::racks_spec(c, 2, 100, 0);
  spec.switches[1].nodes = {2};
  EXPECT_EQ(build_error(c, spec), "nodes under no switch: a100-3 (every node must link to a leaf switch)");
  spec = models::racks_spec(c, 2, 0, 0);
  EXPECT_EQ(build_error(c, spec), "switch \"rack-0\": node link bandwidth must be > 0");
  spec = models::racks_spec(c, 2, 100, 0);
  spec.switches[2].level = 1;
  EXPECT_EQ(build_error(c, spec),
            "switch \"rack-0\" (level 1) links up to \"spine\" (level 1): a parent must be at a higher level");
  spec = models::racks_spec(c, 2, 100, 0);
  spec.switches[1].parents.clear();
  EXPECT_EQ(build_error(c, spec),
            "switches \"rack-0\" and \"rack-1\" are not connected (the fabric must be one network)");
}

// ---- scenario YAML ----

TEST(TopologyYaml, ExplicitSwitches) {
  const auto sc = scenarios::parse_scenario(topo_yaml(R"(    switches:
      - {name: leaf0, nodes: "a100-[0-3]", node_gbps: 200, uplink_gbps: 400}
      - {name: leaf1, nodes: [a100-4, "a100-[5-7]"]}
      - {name: spine, switches: [leaf0, leaf1]}
    comm_intensity: {train: 0.5}
    nvlink_gbps: {A100: 2400}
)"),
                                            "topo.yaml");
  const auto& t = sc.cluster.topology;
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), "explicit");
  EXPECT_EQ(t->switch_count(), 3u);
  EXPECT_EQ(t->level(2), 2);
  EXPECT_EQ(ids(t->nodes_under(1)), (std::vector<NodeId>{4, 5, 6, 7}));
  EXPECT_EQ(t->hops(0, 3), 2);
  EXPECT_EQ(t->hops(0, 4), 4);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{4, 5, 6}), 400) << "default node link: 400 Gbit/s";
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0, 1}), 200);
  EXPECT_EQ(t->bottleneck_gbps(std::vector<NodeId>{0}), 2400) << "nvlink_gbps override";
  EXPECT_EQ(t->reference_gbps(), 400);
  EXPECT_EQ(t->comm_intensity().of(models::JobKind::Train), 0.5);
  EXPECT_EQ(t->comm_intensity().of(models::JobKind::Batch), 0.1) << "default kept";
  // leaf0 uplink 400 < leaf1's non-blocking 1600: across leaves the bottleneck is node links of 200.
  EXPECT_DOUBLE_EQ(t->slowdown(std::vector<NodeId>{0, 4}, 0.5), 1 + 0.5 * 2 * (400.0 / 200));
}

TEST(TopologyYaml, Generators) {
  auto topo = [](const std::string& block) {
    return scenarios::parse_scenario(topo_yaml(block), "topo.yaml").cluster.topology;
  };
  const auto leaf_spine = topo("    fat_tree: {nodes_per_leaf: 2, leaves_per_spine: 2, node_gbps: 100}\n");
  ASSERT_TRUE(leaf_spine);
  EXPECT_EQ(leaf_spine->switch_count(), 7u);
  EXPECT_EQ(leaf_spine->hops(0, 7), 6);
  EXPECT_EQ(leaf_spine->reference_gbps(), 100);
  const auto one_spine = topo("    fat_tree: {nodes_per_leaf: 4}\n");
  ASSERT_TRUE(one_spine);
  EXPECT_EQ(one_spine->switch_count(), 3u);
  const auto k4 = topo("    fat_tree: {k: 4, link_gbps: 200}\n");
  ASSERT_TRUE(k4);
  EXPECT_EQ(k4->switch_count(), 4u + 4u + 4u) << "2 pods of 2 edge + 2 aggregation switches, 4 cores";
  EXPECT_EQ(k4->hops(0, 7), 6);
  EXPECT_EQ(k4->kind(), "fat_tree");
  const auto racks = topo("    racks: {nodes_per_rack: 4, uplink_gbps: 800}\n");
  ASSERT_TRUE(racks);
  EXPECT_EQ(racks->switch_count(), 3u);
  EXPECT_EQ(racks->switch_name(1), "rack-1");
  EXPECT_EQ(racks->bottleneck_gbps(std::vector<NodeId>{0, 7}), 400);
  const auto rail = topo("    rail: {nodes_per_group: 4}\n");
  ASSERT_TRUE(rail);
  EXPECT_EQ(rail->switch_count(), 8u * 2u + 1u) << "8 rails (GPUs per node) in 2 groups, a spine";
  EXPECT_EQ(rail->node_leaves(5).size(), 8u);
  EXPECT_EQ(rail->hops(0, 3), 2);
  EXPECT_EQ(rail->hops(0, 4), 4);
}

TEST(TopologyYaml, ErrorsNameFileLineColumnAndWhatWasExpected) {
  // Unknown node, by range and by pool.
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-8]\"}\n")),
            "topo.yaml:7:30: cluster.topology.switches[0].nodes: no node named \"a100-8\" (pool \"a100\" has nodes "
            "a100-0 to a100-7)");
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: [h100-1]}\n")),
            "topo.yaml:7:31: cluster.topology.switches[0].nodes[0]: no node named \"h100-1\" (nodes are named "
            "<pool>-<index>; did you mean pool \"a100\"?)");
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[3-1]\"}\n")),
            "topo.yaml:7:30: cluster.topology.switches[0].nodes: expected a node name or a range like "
            "\"a100-[0-15]\" or \"a100-[0-3,8]\", got \"a100-[3-1]\"");
  // A node under two leaves.
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-4]\"}\n"
                                  "      - {name: leaf1, nodes: \"a100-[4-7]\"}\n"
                                  "      - {name: spine, switches: [leaf0, leaf1]}\n")),
            "topo.yaml:8:30: cluster.topology.switches[1].nodes: node \"a100-4\" is already under switch \"leaf0\" "
            "(line 7); a node links to one leaf switch (for rails use the rail generator)");
  // A cycle.
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-7]\"}\n"
                                  "      - {name: s1, switches: [leaf0, s2]}\n"
                                  "      - {name: s2, switches: [s1]}\n")),
            "topo.yaml:8:16: cluster.topology.switches[1].name: switches form a cycle: \"s1\" -> \"s2\" -> \"s1\"");
  // Nodes left out.
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-5]\"}\n")),
            "topo.yaml:6:5: cluster.topology: nodes under no switch: a100-6, a100-7 (every node must link to a leaf "
            "switch)");
  // Bad bandwidths.
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-7]\", node_gbps: 0}\n")),
            "topo.yaml:7:55: cluster.topology.switches[0].node_gbps: expected a number > 0 and < 1e+08, got \"0\"");
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4, uplink_gbps: fast}\n")),
            "topo.yaml:6:45: cluster.topology.racks.uplink_gbps: expected a number > 0 and < 1e+08, got \"fast\"");
  // Unknown switch below another, with a suggestion.
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-7]\"}\n"
                                  "      - {name: spine, switches: [leaf9]}\n")),
            "topo.yaml:8:34: cluster.topology.switches[1].switches[0]: no switch named \"leaf9\"; did you mean "
            "\"leaf0\"?");
  // Shapes.
  EXPECT_EQ(first_error(topo_yaml("    fat_tree: {k: 2}\n")),
            "topo.yaml:6:19: cluster.topology.fat_tree.k: a k=2 fat tree holds 2 nodes (k^3/4); the cluster has 8");
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4}\n    rail: {nodes_per_group: 4}\n")),
            "topo.yaml:6:5: cluster.topology: give only one of switches, fat_tree, racks or rail");
  const auto typo = errors_of(topo_yaml("    fat_tree: {nodes_per_lef: 2}\n"));
  ASSERT_EQ(typo.size(), 2u);
  EXPECT_EQ(typo[1],
            "topo.yaml:6:16: cluster.topology.fat_tree.nodes_per_lef: unknown key \"nodes_per_lef\"; did "
            "you mean \"nodes_per_leaf\"?");
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4}\n    comm_intensity: {train: 1.5}\n")),
            "topo.yaml:7:29: cluster.topology.comm_intensity.train: expected a number from 0 to 1, got \"1.5\"");
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4}\n    nvlink_gbps: {A10: 100}\n")),
            "topo.yaml:7:19: cluster.topology.nvlink_gbps.A10: unknown key \"A10\"; did you mean \"A100\"?");
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-7]\", switches: [x]}\n")),
            "topo.yaml:7:54: cluster.topology.switches[0].switches: a switch links either nodes (a leaf) or "
            "switches, not both");
  EXPECT_EQ(first_error(topo_yaml("    switches:\n      - {name: leaf0, nodes: \"a100-[0-7]\"}\n"
                                  "      - {name: spine, switches: [leaf0], level: 1}\n")),
            "topo.yaml:8:49: cluster.topology.switches[1].level: expected a level >= 2 (one above the switches "
            "below it), got \"1\"");
}

// ---- failure domains ----

namespace {

class DownObserver : public models::SimObserver {
 public:
  void on_event(sim::Tick t, models::AuditKind k, models::JobIndex j, std::int32_t detail,
                std::string_view reason) override {
    if (k == models::AuditKind::NodeDown) down.emplace_back(t, static_cast<NodeId>(detail), std::string(reason));
    if (k == models::AuditKind::Kill) killed.emplace_back(t, j);
  }
  void on_start(sim::Tick, models::JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, models::JobIndex, models::JobState) override {}
  void on_sample(const models::Sample&) override {}
  std::vector<std::tuple<sim::Tick, NodeId, std::string>> down;
  std::vector<std::pair<sim::Tick, models::JobIndex>> killed;
};

struct TopoRun {
  TopoRun(const scenarios::Scenario& sc, models::Workload workload, const std::string& policy_name = "fifo")
      : w(std::move(workload)), policy(policies::make_policy(policy_name, {}, 1)) {
    simulation::SimulationOptions o;
    o.failures = sc.failures;
    o.seed = sc.seed;
    sim = std::make_unique<simulation::Simulation>(w, sc.cluster, *policy, &obs, o);
    sim->run();
  }
  models::Workload w;
  std::unique_ptr<policies::Policy> policy;
  DownObserver obs;
  std::unique_ptr<simulation::Simulation> sim;
};

}  // namespace

TEST(TopologyFailures, ScriptedSwitchOutageTakesEveryNodeUnderIt) {
  // 8 nodes in racks of 4 (rack-0: nodes 0-3, rack-1: 4-7); eight 8-GPU jobs of 5 h fill the
  // nodes; rack-1's switch fails at 1 h for 1 h: exactly nodes 4-7 go down and their jobs die.
  const auto sc = scenarios::parse_scenario(
      topo_yaml("    racks: {nodes_per_rack: 4}\n",
                "failures:\n  events: [{at: 1h, switch: rack-1, duration: 1h}]\n  jobs: {retry: {backoff: 0s}}\n"),
      "topo.yaml");
  ASSERT_EQ(sc.failures.events.size(), 1u);
  EXPECT_EQ(sc.failures.events[0].nodes, (std::vector<NodeId>{4, 5, 6, 7}));
  EXPECT_EQ(sc.failures.events[0].what, "switch rack-1");
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 8, 5 * 3600);
  const TopoRun r(sc, b.build());
  std::set<NodeId> down;
  for (const auto& [t, node, reason] : r.obs.down) {
    EXPECT_EQ(t, kHour);
    down.insert(node);
  }
  EXPECT_EQ(down, (std::set<NodeId>{4, 5, 6, 7}));
  std::set<models::JobIndex> killed;
  for (const auto& [t, j] : r.obs.killed) {
    EXPECT_EQ(t, kHour);
    killed.insert(j);
    EXPECT_GE(r.sim->job_placement(j).at(0).node, 4u);
  }
  EXPECT_EQ(killed.size(), 4u);
  for (models::JobIndex j = 0; j < 8; ++j) {
    const bool hit = killed.count(j) != 0;
    EXPECT_EQ(r.sim->job_end(j), hit ? 2 * kHour + 5 * kHour : 5 * kHour) << "job " << j;
  }
}

TEST(TopologyFailures, RandomSwitchFailuresTakeWholeLeavesAndKeepOtherStreams) {
  const std::string nodes = "  nodes:\n    - {mtbf: 2h, repair: 30m}\n";
  const std::string switches = "    - {domain: switch, level: 1, mtbf: 3h, repair: 1h}\n";
  const auto with = scenarios::parse_scenario(
      topo_yaml("    fat_tree: {nodes_per_leaf: 4}\n", "failures:\n" + nodes + switches), "topo.yaml");
  const auto without =
      scenarios::parse_scenario(topo_yaml("    fat_tree: {nodes_per_leaf: 4}\n", "failures:\n" + nodes), "topo.yaml");
  ASSERT_EQ(with.failures.random.size(), 2u);
  ASSERT_EQ(with.failures.random[1].switches.size(), 2u);
  EXPECT_EQ(with.failures.random[1].switches[1].name, "leaf-1");
  EXPECT_EQ(with.failures.random[1].switches[1].nodes, (std::vector<NodeId>{4, 5, 6, 7}));
  ht::WorkloadBuilder b;
  for (int i = 0; i < 40; ++i) b.job(i * 600.0, 8, 3600);
  const TopoRun a(with, b.build());
  const TopoRun n(without, b.build());
  // Until the first switch failure both runs are the same: the node failures of spec 0 come from
  // their own streams ("failures/0/node/<name>"), which the switch units ("failures/1/switch/<name>")
  // do not shift.
  sim::Tick first_switch = sim::kNever;
  for (const auto& [t, node, reason] : a.obs.down)
    if (reason.rfind("switch failure", 0) == 0) first_switch = std::min(first_switch, t);
  ASSERT_LT(first_switch, sim::kNever);
  auto node_failures_before = [&](const TopoRun& r) {
    std::vector<std::tuple<sim::Tick, NodeId, std::string>> out;
    for (const auto& e : r.obs.down)
      if (std::get<0>(e) < first_switch) out.push_back(e);
    return out;
  };
  const auto before = node_failures_before(n);
  EXPECT_FALSE(before.empty());
  EXPECT_EQ(node_failures_before(a), before);
  // Each switch failure takes down every node of its leaf at one time.
  std::map<std::pair<sim::Tick, std::string>, std::set<NodeId>> by_failure;
  for (const auto& [t, node, reason] : a.obs.down)
    if (reason.rfind("switch failure", 0) == 0) by_failure[{t, reason}].insert(node);
  ASSERT_FALSE(by_failure.empty());
  int full = 0;
  for (const auto& [key, got] : by_failure) {
    const bool leaf1 = key.second == "switch failure (leaf-1)";
    EXPECT_TRUE(leaf1 || key.second == "switch failure (leaf-0)") << key.second;
    std::set<NodeId> expected;
    for (NodeId i = leaf1 ? 4 : 0; i < (leaf1 ? 8u : 4u); ++i) expected.insert(i);
    // Nodes already down by a node failure are not reported again.
    for (NodeId node : got) EXPECT_TRUE(expected.count(node) != 0);
    full += got == expected;
  }
  EXPECT_GT(full, 0) << "some switch failure found its whole leaf up";
}

TEST(TopologyFailures, YamlErrors) {
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4}\n",
                                  "failures:\n  events: [{at: 1h, switch: rak-1, duration: 1h}]\n")),
            "topo.yaml:11:29: failures.events[0].switch: no switch named \"rak-1\"; did you mean \"rack-1\"?");
  const std::string no_topology =
      "name: t\ncluster:\n  pools:\n    - {name: a100, nodes: 8, gpus_per_node: 8, gpu_type: A100}\n"
      "policy: fifo\nworkload:\n  trace: " +
      std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz\n";
  EXPECT_EQ(first_error(no_topology + "failures:\n  events: [{at: 1h, switch: rack-1, duration: 1h}]\n"),
            "topo.yaml:9:29: failures.events[0].switch: no topology is defined (cluster.topology)");
  EXPECT_EQ(first_error(no_topology + "failures:\n  nodes: {domain: switch, mtbf: 1d, repair: 1h}\n"),
            "topo.yaml:9:19: failures.nodes.domain: domain switch needs a topology (cluster.topology)");
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4}\n",
                                  "failures:\n  nodes: {domain: switch, level: 3, mtbf: 1d, repair: 1h}\n")),
            "topo.yaml:11:34: failures.nodes.level: expected a switch level from 1 to 2, got \"3\"");
  EXPECT_EQ(first_error(topo_yaml("    racks: {nodes_per_rack: 4}\n",
                                  "failures:\n  nodes: {domain: swich, mtbf: 1d, repair: 1h}\n")),
            "topo.yaml:11:19: failures.nodes.domain: expected node, rack or switch, got \"swich\"; did you mean "
            "\"switch\"?");
}

// ---- topology-aware placement ----

TEST(TopologyRuntime, AJobAcrossLeavesRunsSlowerByTheSlowdown) {
  using sim::kSecond;
  // Racks of 2 nodes (default bandwidths): a train job on 3 nodes spans both racks (4 hops),
  // so it runs 1 + 0.25 x 2 x 1 = 1.5x its 1000 s; a 1-node job keeps its time. With the train
  // intensity set to 0 neither slows.
  const std::string racks = "    racks: {nodes_per_rack: 2}\n";
  auto w = ht::WorkloadBuilder().job(0, 24, 1000).job(0, 8, 1000).build();
  w.jobs[0].kind = models::JobKind::Train;
  w.jobs[0].gpus_per_node = 8;
  w.jobs[1].kind = models::JobKind::Train;
  const auto sc = scenarios::parse_scenario(topo_yaml(racks, ""), "topo.yaml");
  ASSERT_TRUE(sc.cluster.topology);
  const double s = sc.cluster.topology->slowdown(std::vector<NodeId>{0, 1, 2}, 0.25);
  auto run = [&](const scenarios::Scenario& scenario) {
    auto policy = policies::make_policy("fifo", {}, 1);
    simulation::Simulation sim(w, scenario.cluster, *policy, nullptr, scenarios::simulation_options(scenario, w));
    sim.run();
    return std::pair{sim.job_end(0) - sim.job_start(0), sim.job_end(1) - sim.job_start(1)};
  };
  const auto [wide, narrow] = run(sc);
  EXPECT_DOUBLE_EQ(s, 1.5);
  EXPECT_EQ(wide, static_cast<sim::Tick>(std::ceil(1000.0 * kSecond * s - 1e-6)));
  EXPECT_EQ(narrow, 1000 * kSecond);
  const auto off = scenarios::parse_scenario(topo_yaml(racks + "    comm_intensity: {train: 0}\n", ""), "topo.yaml");
  EXPECT_EQ(run(off).first, 1000 * kSecond);
}

TEST(TopologyPlacement, SlurmTreeFollowsTheClusterTopology) {
  // As Slurm.TopologyKeepsAJobOnOneLeafSwitch, with the switches from cluster.topology (racks of 2)
  // instead of a topology block: a 1-node job on node 0 leaves rack-0 one free node, rack-1 two;
  // the 2-node job goes to rack-1 (nodes 2, 3), not to nodes 1 + 2 as without a topology.
  auto w = ht::WorkloadBuilder().job(0, 4, 1000).job(1, 8, 100).build();
  w.jobs[0].gpus_per_node = 4;
  w.jobs[1].gpus_per_node = 4;
  auto run = [&](const models::ClusterSpec& c) {
    auto policy = policies::make_policy("slurm", {}, 1);
    simulation::Simulation sim(w, c, *policy, nullptr);
    sim.run();
    std::vector<std::vector<NodeId>> out;
    for (models::JobIndex j = 0; j < 2; ++j) {
      out.emplace_back();
      for (const auto& s : sim.job_placement(j)) out.back().push_back(s.node);
    }
    return out;
  };
  models::ClusterSpec c = pool_cluster(4, 4);
  const auto flat = run(c);
  EXPECT_EQ(flat[1], (std::vector<NodeId>{1, 2}));
  c.topology = built(c, models::racks_spec(c, 2, 400, 0));
  const auto tree = run(c);
  EXPECT_EQ(tree[0], (std::vector<NodeId>{0}));
  EXPECT_EQ(tree[1], (std::vector<NodeId>{2, 3}));
}

namespace {

// Kueue on 4 nodes x 8 GPUs in racks of 2 (rack-0: nodes 0, 1; rack-1: nodes 2, 3), one
// ClusterQueue with quota for everything, and `tas` under topologyAwareScheduling.
std::vector<std::vector<NodeId>> kueue_tas_run(const models::Workload& w, const std::string& tas,
                                               std::vector<double>* starts = nullptr) {
  const std::string text =
      "name: q\ncluster:\n  pools:\n    - {name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100}\n"
      "  topology:\n    racks: {nodes_per_rack: 2}\n"
      "policy:\n  name: kueue\n  resourceFlavors: {default: {pools: [a100]}}\n"
      "  clusterQueues:\n    cq: {namespaces: [ns], resources: {default: {gpu: {nominalQuota: 64}}}}\n" +
      (tas.empty() ? "" : "  topologyAwareScheduling: " + tas + "\n") +
      "workload:\n  trace: " + std::string(HEADROOM_SOURCE_DIR) +
      "/scenarios/examples/data/ricc-2010-first-14d.swf.gz\n";
  const auto sc = scenarios::parse_scenario(text, "kueue.yaml");
  auto policy = policies::make_policy("kueue", sc.policy.params, 1);
  simulation::Simulation sim(w, sc.cluster, *policy, nullptr);
  sim.run();
  std::vector<std::vector<NodeId>> out;
  for (models::JobIndex j = 0; j < w.jobs.size(); ++j) {
    out.emplace_back();
    for (const auto& sl : sim.job_placement(j)) out.back().push_back(sl.node);
    std::sort(out.back().begin(), out.back().end());
    if (starts != nullptr) starts->push_back(sim::to_seconds(sim.job_start(j)));
  }
  return out;
}

}  // namespace

TEST(TopologyPlacement, KueueTasKeepsAWorkloadInOneRack) {
  // a (8 GPUs) on node 0 until 1000 s, b on node 1 until 100 s, c on node 2 until 2000 s; at 200 s
  // d asks for 16 GPUs (two 8-GPU pods). Free then: node 1 (rack-0) and node 3 (rack-1).
  auto w = ht::WorkloadBuilder()
               .job(0, 8, 1000, "ns")
               .job(0, 8, 100, "ns")
               .job(0, 8, 2000, "ns")
               .job(200, 16, 100, "ns")
               .build();
  std::vector<double> starts;
  const auto plain = kueue_tas_run(w, "", &starts);
  EXPECT_EQ(plain[0], std::vector<NodeId>{0});
  EXPECT_EQ(plain[1], std::vector<NodeId>{1});
  EXPECT_EQ(plain[2], std::vector<NodeId>{2});
  EXPECT_EQ(plain[3], (std::vector<NodeId>{1, 3})) << "kube-scheduler alone spans the racks";
  EXPECT_EQ(starts[3], 200);
  // Required rack level: d waits until rack-0 is free (a ends at 1000 s), then runs on nodes 0, 1.
  starts.clear();
  const auto required = kueue_tas_run(w, "{podsetRequiredTopology: 1}", &starts);
  EXPECT_EQ(required[3], (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(starts[3], 1000);
  // Preferred: no rack fits at 200 s, so it runs across them at once.
  starts.clear();
  const auto preferred = kueue_tas_run(w, "{podsetPreferredTopology: 1}", &starts);
  EXPECT_EQ(preferred[3], (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(starts[3], 200);
  // Only train jobs carry the annotation: d (batch) is not held back.
  starts.clear();
  const auto kinds = kueue_tas_run(w, "{podsetRequiredTopology: 1, kinds: [train]}", &starts);
  EXPECT_EQ(starts[3], 200);
}

TEST(TopologyPlacement, KueueTasParameters) {
  const std::string base =
      "name: q\ncluster:\n  pools:\n    - {name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100}\n"
      "policy:\n  name: kueue\n  topologyAwareScheduling: ";
  const std::string tail = "\nworkload:\n  trace: " + std::string(HEADROOM_SOURCE_DIR) +
                           "/scenarios/examples/data/ricc-2010-first-14d.swf.gz\n";
  EXPECT_EQ(first_error(base + "{podsetRequiredTopology: 0}" + tail),
            "topo.yaml:7:53: policy.topologyAwareScheduling.podsetRequiredTopology: expected an integer from 1 to "
            "64, got \"0\"");
  EXPECT_EQ(first_error(base + "{podsetRequiredTopology: 1, podsetPreferredTopology: 2}" + tail),
            "topo.yaml:7:53: policy.topologyAwareScheduling.podsetRequiredTopology: give one of "
            "podsetRequiredTopology and podsetPreferredTopology");
  EXPECT_EQ(first_error(base + "{kinds: [trian]}" + tail),
            "topo.yaml:7:36: policy.topologyAwareScheduling.kinds: unknown job kind \"trian\"; expected: train, "
            "inference, interactive, batch");
}
