// The volcano policy's network-topology-aware scheduling over cluster.topology (Job
// spec.networkTopology, HyperNode tier = switch level): hard mode keeps a PodGroup inside one
// HyperNode of tier <= highestTierAllowed or leaves it pending, soft mode prefers the nodes near
// the ones it already holds, the HyperNode binpack score picks among fitting HyperNodes, and the
// configuration errors. Every cluster is 4 nodes x 8 GPUs in racks of 2 (rack-0: nodes 0, 1;
// rack-1: nodes 2, 3; one spine above, tier 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/rack_run_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::NodeId;
namespace ht = headroom::testing;

namespace {

// A run of the volcano policy on the racks.
struct NtRun : ht::RackRun {
  NtRun(const models::Workload& w, const std::map<std::string, std::string>& kv, bool with_topology = true)
      : RackRun("volcano", w, kv, with_topology) {}
};

const std::map<std::string, std::string> kOff = {};
std::map<std::string, std::string> nt(const std::string& mode, const std::string& tier = "") {
  std::map<std::string, std::string> kv = {{"networkTopology.mode", mode}};
  if (!tier.empty()) kv["networkTopology.highestTierAllowed"] = tier;
  return kv;
}

// a (8 GPUs) on node 0 until 1000 s, b on node 1 until 100 s, c on node 2 until 2000 s; at 200 s
// d asks for 16 GPUs (two 8-GPU tasks). Free then: node 1 (rack-0) and node 3 (rack-1).
models::Workload spanning() {
  return ht::WorkloadBuilder().job(0, 8, 1000).job(0, 8, 100).job(0, 8, 2000).job(200, 16, 100).build();
}

}  // namespace

TEST(VolcanoNetworkTopology, HardModeWaitsForOneRackThenStartsThere) {
  const auto w = spanning();
  const NtRun plain(w, kOff);
  EXPECT_EQ(plain.nodes(0), std::vector<NodeId>{0});
  EXPECT_EQ(plain.nodes(1), std::vector<NodeId>{1});
  EXPECT_EQ(plain.nodes(2), std::vector<NodeId>{2});
  EXPECT_EQ(plain.nodes(3), (std::vector<NodeId>{1, 3})) << "without networkTopology d spans the racks";
  EXPECT_EQ(plain.start(3), 200);
  // Tier 1 (a rack): no rack has 16 free GPUs until a ends at 1000 s; then rack-0 holds d.
  const NtRun hard(w, nt("hard", "1"));
  EXPECT_EQ(hard.nodes(3), (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(hard.start(3), 1000);
  EXPECT_EQ(hard.audit.waiting.at(3),
            "volcano allocate: no HyperNode of tier 1 or below (cluster.topology) fits minMember tasks of the "
            "PodGroup (network-topology-aware, hard mode)");
  EXPECT_EQ(hard.audit.started.at(3),
            "volcano allocate: PodGroup ready (gang), highest-scoring node in HyperNode rack-0 "
            "(network-topology-aware, hard mode)");
}

TEST(VolcanoNetworkTopology, HighestTierTwoAllowsTheSpineAndSoftModeDoesNotWait) {
  const auto w = spanning();
  const NtRun tier2(w, nt("hard", "2"));
  EXPECT_EQ(tier2.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(tier2.start(3), 200);
  EXPECT_EQ(tier2.audit.started.at(3),
            "volcano allocate: PodGroup ready (gang), highest-scoring node in HyperNode spine "
            "(network-topology-aware, hard mode)");
  const NtRun soft(w, nt("soft"));
  EXPECT_EQ(soft.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(soft.start(3), 200);
}

TEST(VolcanoNetworkTopology, KindsAndAMissingTopologyLeavePlacementUnchanged) {
  const auto w = spanning();  // batch jobs
  auto kv = nt("hard", "1");
  kv["networkTopology.kinds"] = "[train]";
  const NtRun other_kind(w, kv);
  EXPECT_EQ(other_kind.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(other_kind.start(3), 200);
  kv["networkTopology.kinds"] = "[train, batch]";
  const NtRun batch(w, kv);
  EXPECT_EQ(batch.start(3), 1000);
  const NtRun no_topology(w, nt("hard", "1"), false);
  EXPECT_EQ(no_topology.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(no_topology.start(3), 200);
}

TEST(VolcanoNetworkTopology, SoftModePlacesALaterTaskInTheRackOfTheFirst) {
  // j0 (4 GPUs) and j1 (4 GPUs, ends at 100 s) share node 0, j2 fills node 1, j3 (4 GPUs) is on
  // node 2. At 200 s the PodGroup {j4: 8 GPUs, j5: 4 GPUs} arrives; free: node 0 4, node 2 4,
  // node 3 8. j4 goes to node 3 (the only fit); j5 to node 0 (lowest index) without topology,
  // to node 2 (rack-1, with j4) in soft mode.
  auto w = ht::WorkloadBuilder()
               .job(0, 4, 5000)
               .job(0, 4, 100)
               .job(0, 8, 5000)
               .job(0, 4, 5000)
               .job(200, 8, 100)
               .job(200, 4, 100)
               .build();
  const auto g = w.groups.intern("G");
  for (JobIndex j : {4u, 5u}) {
    w.jobs[j].group = g;
    w.jobs[j].gang_min = 2;
  }
  const NtRun plain(w, kOff);
  EXPECT_EQ(plain.nodes(4), std::vector<NodeId>{3});
  EXPECT_EQ(plain.nodes(5), std::vector<NodeId>{0});
  const NtRun soft(w, nt("soft"));
  EXPECT_EQ(soft.nodes(4), std::vector<NodeId>{3});
  EXPECT_EQ(soft.nodes(5), std::vector<NodeId>{2});
  EXPECT_EQ(soft.start(5), 200);
  const NtRun hard(w, nt("hard", "1"));
  EXPECT_EQ(hard.nodes(5), std::vector<NodeId>{2});
}

TEST(VolcanoNetworkTopology, HyperNodeBinpackPicksTheFullerRack) {
  // j0, j1 on nodes 0, 1 until 100 s; j2 on node 2 until 5000 s. At 200 s j3 (8 GPUs) fits in
  // both racks: rack-0 16 free GPUs, rack-1 8. With the default arguments (GPU not weighted) every
  // rack scores 0 and the smallest switch id wins (rack-0, node 0); weighting nvidia.com/gpu
  // scores rack-1 (8 + 8) / 16 = 1 over rack-0 8 / 16, so j3 runs on node 3.
  const auto w = ht::WorkloadBuilder().job(0, 8, 100).job(0, 8, 100).job(0, 8, 5000).job(200, 8, 100).build();
  const NtRun plain(w, kOff);
  EXPECT_EQ(plain.nodes(3), std::vector<NodeId>{0});
  const NtRun unweighted(w, nt("hard", "1"));
  EXPECT_EQ(unweighted.nodes(3), std::vector<NodeId>{0});
  auto kv = nt("hard", "1");
  kv["tiers"] =
      "[[priority, gang, conformance], [overcommit, drf, predicates, proportion, nodeorder, binpack, "
      "{name: network-topology-aware, arguments: {hypernode.binpack.resources: nvidia.com/gpu}}]]";
  const NtRun gpu(w, kv);
  EXPECT_EQ(gpu.nodes(3), std::vector<NodeId>{3});
  EXPECT_EQ(gpu.audit.started.at(3),
            "volcano allocate: PodGroup ready (gang), highest-scoring node in HyperNode rack-1 "
            "(network-topology-aware, hard mode)");
}

TEST(VolcanoNetworkTopology, AnElasticPodGroupStaysInTheHyperNodeItHolds) {
  // A PodGroup of three 8-GPU tasks with minMember 2 on an idle cluster: its first two tasks take
  // rack-0 (tie: smallest switch id). The third, tried once the group is running, may only go below
  // the tier-1 ancestor of the nodes the group holds (rack-0), so it waits until task 0 ends at
  // 100 s; without the option it starts at once on node 2.
  auto w = ht::WorkloadBuilder().job(0, 8, 100).job(0, 8, 1000).job(0, 8, 100).build();
  const auto g = w.groups.intern("G");
  for (JobIndex j = 0; j < 3; ++j) {
    w.jobs[j].group = g;
    w.jobs[j].gang_min = 2;
  }
  const NtRun plain(w, kOff);
  EXPECT_EQ(plain.nodes(2), std::vector<NodeId>{2});
  EXPECT_EQ(plain.start(2), 0);
  const NtRun hard(w, nt("hard", "1"));
  EXPECT_EQ(hard.nodes(0), std::vector<NodeId>{0});
  EXPECT_EQ(hard.nodes(1), std::vector<NodeId>{1});
  EXPECT_EQ(hard.nodes(2), std::vector<NodeId>{0});
  EXPECT_EQ(hard.start(2), 100);
}

TEST(VolcanoNetworkTopology, ConfigurationErrors) {
  auto errors = [](const std::string& policy) { return ht::policy_errors("volcano", policy); };
  EXPECT_NE(errors("  networkTopology: {mode: firm}\n")
                .find("networkTopology.mode: unknown mode \"firm\"; expected: "
                      "hard, soft"),
            std::string::npos);
  EXPECT_NE(errors("  networkTopology: {mode: hard}\n").find("hard mode needs highestTierAllowed"), std::string::npos);
  EXPECT_NE(errors("  networkTopology: {mode: hard, highestTierAllowed: 0}\n")
                .find("networkTopology.highestTierAllowed: expected an integer from 1 to 64, got \"0\""),
            std::string::npos);
  EXPECT_NE(errors("  networkTopology: {mode: soft, kinds: [trian]}\n")
                .find("networkTopology.kinds: unknown job kind \"trian\""),
            std::string::npos);
  EXPECT_NE(errors("  networkTopology: {highestTierAllowed: 1}\n").find("networkTopology needs a mode (hard or soft)"),
            std::string::npos);
  EXPECT_NE(errors("  networkTopology: {mode: soft}\n  tiers: [[priority, gang], [predicates, proportion]]\n")
                .find("networkTopology needs the network-topology-aware plugin in the tiers"),
            std::string::npos);
  EXPECT_NE(errors("  tiers: [[{name: binpack, arguments: {hypernode.binpack.cpu: 2}}]]\n")
                .find("an argument of the network-topology-aware plugin"),
            std::string::npos);
}
