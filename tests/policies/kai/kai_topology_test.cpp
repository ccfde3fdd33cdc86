// The kai policy's topology-aware scheduling over cluster.topology (PodGroup topologyConstraint
// requiredTopologyLevel / preferredTopologyLevel as switch levels, topology.hpp): a required
// level keeps a PodGroup inside one domain of that level or leaves it pending, a preferred level
// falls back to the whole cluster, domains are tried fullest first (bin-packing), and the
// configuration errors. Every cluster is 4 nodes x 8 GPUs in racks of 2 (rack-0: nodes 0, 1;
// rack-1: nodes 2, 3; one spine above, level 2).
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

// A run of the kai policy on the racks.
struct NtRun : ht::RackRun {
  NtRun(const models::Workload& w, const std::map<std::string, std::string>& kv, bool with_topology = true)
      : RackRun("kai", w, kv, with_topology) {}
};

const std::map<std::string, std::string> kOff = {};
std::map<std::string, std::string> required(const std::string& level) {
  return {{"topologyConstraint.requiredTopologyLevel", level}};
}
std::map<std::string, std::string> preferred(const std::string& level) {
  return {{"topologyConstraint.preferredTopologyLevel", level}};
}

void gang(models::Workload& w, JobIndex first, JobIndex last, const std::string& name) {
  const auto g = w.groups.intern(name);
  for (JobIndex j = first; j < last; ++j) {
    w.jobs[j].group = g;
    w.jobs[j].gang_min = static_cast<std::int32_t>(last - first);
  }
}

// a (8 GPUs) on node 0 until 1000 s, b on node 1 until 100 s, c on node 2 until 2000 s; at 200 s
// d asks for 16 GPUs: one pod larger than a node (job 3), or a PodGroup of two 8-GPU pods
// (jobs 3, 4). Free then: node 1 (rack-0) and node 3 (rack-1).
models::Workload spanning(bool two_pods) {
  ht::WorkloadBuilder b;
  b.job(0, 8, 1000).job(0, 8, 100).job(0, 8, 2000);
  if (two_pods) {
    b.job(200, 8, 100).job(200, 8, 100);
    auto w = b.build();
    gang(w, 3, 5, "d");
    return w;
  }
  return b.job(200, 16, 100).build();
}

const std::string kNoDomain =
    "Unschedulable: no domain of cluster.topology at the required level or below can hold the pod group (topology)";

}  // namespace

TEST(KaiTopology, RequiredLevelWaitsForOneRackThenStartsThere) {
  for (const bool two_pods : {false, true}) {
    SCOPED_TRACE(two_pods ? "two 8-GPU pods" : "one 16-GPU pod");
    const auto w = spanning(two_pods);
    auto nodes_of_d = [&](const NtRun& r) {
      auto n = r.nodes(3);
      if (two_pods) n.push_back(r.nodes(4).at(0));
      std::sort(n.begin(), n.end());
      return n;
    };
    const NtRun plain(w, kOff);
    EXPECT_EQ(plain.nodes(0), std::vector<NodeId>{0});
    EXPECT_EQ(plain.nodes(1), std::vector<NodeId>{1});
    EXPECT_EQ(plain.nodes(2), std::vector<NodeId>{2});
    EXPECT_EQ(nodes_of_d(plain), (std::vector<NodeId>{1, 3})) << "without a constraint d spans the racks";
    EXPECT_EQ(plain.start(3), 200);
    const NtRun rack(w, required("1"));
    EXPECT_EQ(nodes_of_d(rack), (std::vector<NodeId>{0, 1}));
    EXPECT_EQ(rack.start(3), 1000);
    EXPECT_EQ(rack.audit.waiting.at(3), kNoDomain);
    // Level 2 (the spine) and a preferred rack both let d start at once across the racks.
    const NtRun spine(w, required("2"));
    EXPECT_EQ(nodes_of_d(spine), (std::vector<NodeId>{1, 3}));
    EXPECT_EQ(spine.start(3), 200);
    const NtRun soft(w, preferred("1"));
    EXPECT_EQ(nodes_of_d(soft), (std::vector<NodeId>{1, 3}));
    EXPECT_EQ(soft.start(3), 200);
  }
}

TEST(KaiTopology, KindsAndAMissingTopologyLeavePlacementUnchanged) {
  const auto w = spanning(false);  // batch jobs
  auto kv = required("1");
  kv["topologyConstraint.kinds"] = "[train]";
  const NtRun other_kind(w, kv);
  EXPECT_EQ(other_kind.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(other_kind.start(3), 200);
  kv["topologyConstraint.kinds"] = "[batch]";
  const NtRun batch(w, kv);
  EXPECT_EQ(batch.start(3), 1000);
  const NtRun no_topology(w, required("1"), false);
  EXPECT_EQ(no_topology.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(no_topology.start(3), 200);
}

TEST(KaiTopology, DomainsAreTriedFullestFirst) {
  // j0, j1 on nodes 0, 1 until 100 s; j2 on node 2 until 5000 s. At 200 s j3 (8 GPUs) fits in
  // both racks; rack-1 (ratio 8 / 8 = 1) sorts before rack-0 (8 / 16), so j3 runs on node 3; the
  // binpack node order alone takes node 0 (all free nodes have 8 GPUs, lowest index).
  const auto w = ht::WorkloadBuilder().job(0, 8, 100).job(0, 8, 100).job(0, 8, 5000).job(200, 8, 100).build();
  const NtRun plain(w, kOff);
  EXPECT_EQ(plain.nodes(3), std::vector<NodeId>{0});
  const NtRun rack(w, required("1"));
  EXPECT_EQ(rack.nodes(3), std::vector<NodeId>{3});
  EXPECT_EQ(rack.start(3), 200);
}

TEST(KaiTopology, PreferredLevelKeepsAGangInOneRackWhenOneHoldsIt) {
  // j0 on node 0; at 200 s a PodGroup of two 8-GPU pods. rack-0 holds one more pod, rack-1 two:
  // with preferredTopologyLevel 1 both pods go to rack-1 (nodes 2, 3); without it binpack takes
  // nodes 1 and 2.
  auto w = ht::WorkloadBuilder().job(0, 8, 5000).job(200, 8, 100).job(200, 8, 100).build();
  gang(w, 1, 3, "g");
  const NtRun plain(w, kOff);
  EXPECT_EQ(plain.nodes(1), std::vector<NodeId>{1});
  EXPECT_EQ(plain.nodes(2), std::vector<NodeId>{2});
  const NtRun soft(w, preferred("1"));
  EXPECT_EQ(soft.nodes(1), std::vector<NodeId>{2});
  EXPECT_EQ(soft.nodes(2), std::vector<NodeId>{3});
  EXPECT_EQ(soft.start(1), 200);
}

TEST(KaiTopology, PreemptFreesARackForARequiredLevel) {
  // a on node 0 and c on node 2 (batch: priority class train, preemptible) run long; b leaves
  // node 1 at 100 s. At 200 s d (inference, priority 125, 16 GPUs in one pod) would span nodes 1
  // and 3. With requiredTopologyLevel 1 no rack holds it, so preempt evicts inside the queue until
  // a rack does: c (the newest lower-priority group), and d binds on rack-1 after the 30 s grace.
  auto w = ht::WorkloadBuilder().job(0, 8, 5000).job(0, 8, 100).job(0, 8, 5000).job(200, 16, 100).build();
  w.jobs[3].kind = models::JobKind::Inference;
  std::map<std::string, std::string> queue = {{"queues.default.resources.gpu.quota", "32"},
                                              {"queues.default.resources.gpu.limit", "-1"}};
  const NtRun plain(w, queue);
  EXPECT_EQ(plain.nodes(3), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(plain.start(3), 200);
  EXPECT_EQ(plain.sim->job_preemptions(2), 0);
  auto kv = queue;
  kv["topologyConstraint.requiredTopologyLevel"] = "1";
  const NtRun rack(w, kv);
  EXPECT_EQ(rack.sim->job_preemptions(0), 0);
  EXPECT_EQ(rack.sim->job_preemptions(2), 1);
  EXPECT_EQ(rack.nodes(3), (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(rack.start(3), 230);
}

TEST(KaiTopology, ConfigurationErrors) {
  auto errors = [](const std::string& policy) { return ht::policy_errors("kai", policy); };
  EXPECT_NE(errors("  topologyConstraint: {requiredTopologyLevel: 0}\n")
                .find("topologyConstraint.requiredTopologyLevel: expected a switch level of cluster.topology from 1 "
                      "(leaf) to 64, got \"0\""),
            std::string::npos);
  EXPECT_NE(errors("  topologyConstraint: {requiredTopologyLevel: 1, preferredTopologyLevel: 2}\n")
                .find("the preferred level 2 is above the required level 1"),
            std::string::npos);
  EXPECT_NE(errors("  topologyConstraint: {preferredTopologyLevel: 1, kinds: [trian]}\n")
                .find("topologyConstraint.kinds: unknown job kind \"trian\""),
            std::string::npos);
  EXPECT_NE(
      errors("  topologyConstraint: {kinds: [train]}\n").find("give requiredTopologyLevel or preferredTopologyLevel"),
      std::string::npos);
}

// With gpuSharing, a PodGroup of two 0.6-GPU shares (they cannot share one device) under a
// required rack level: a (8 GPUs, node 0, until 1000 s), b (7, node 1), c (8, node 2) and d (7,
// node 3) leave one free GPU on node 1 (rack-0) and one on node 3 (rack-1). Unconstrained, the
// shares take those two at 200 s, across the racks. Required rack: they wait until a ends and
// then both go into rack-0, the second onto node 0 although binpack alone would pick node 3.
TEST(KaiTopology, SharesOfARequiredGroupStayInTheDomain) {
  auto w = ht::WorkloadBuilder()
               .job(0, 8, 1000)
               .job(0, 7, 5000)
               .job(0, 8, 5000)
               .job(0, 7, 5000)
               .job(200, 1, 100)
               .job(200, 1, 100)
               .build();
  for (JobIndex j : {JobIndex{4}, JobIndex{5}}) w.jobs[j].gpu_milli = 600;
  gang(w, 4, 6, "shares");
  const NtRun free_run(w, {{"gpuSharing", "true"}});
  EXPECT_DOUBLE_EQ(free_run.start(4), 200.0);
  EXPECT_EQ(free_run.nodes(4), std::vector<NodeId>{1});
  EXPECT_EQ(free_run.nodes(5), std::vector<NodeId>{3});
  const NtRun rack(w, {{"gpuSharing", "true"}, {"topologyConstraint.requiredTopologyLevel", "1"}});
  EXPECT_DOUBLE_EQ(rack.start(4), 1000.0);
  EXPECT_DOUBLE_EQ(rack.start(5), 1000.0);
  EXPECT_EQ(rack.nodes(4), std::vector<NodeId>{1});
  EXPECT_EQ(rack.nodes(5), std::vector<NodeId>{0});
  EXPECT_EQ(rack.audit.waiting.at(4), kNoDomain);
}
