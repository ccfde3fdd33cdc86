// Issue #34, the Kubernetes side: real, unedited public files (tests/data/imports/*/README.md
// give each one's source and licence) that headroom refused or misread, read and run.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "apps/pipeline.hpp"
#include "models/observer.hpp"
#include "policies/common/manifests.hpp"
#include "policies/registry.hpp"
#include "policies/system_module.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "traces/import.hpp"

namespace headroom {
namespace {

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/";
const std::string kVolcano = kData + "volcano/", kKueue = kData + "kueue/", kKai = kData + "kai/";

std::string param(const policies::PolicyParams& p, const std::string& key) {
  const auto it = p.find(key);
  return it == p.end() ? "(absent)" : it->second.text;
}

policies::ManifestImport read(const std::string& policy, const std::vector<std::string>& paths) {
  const policies::SystemModule* system = policies::find_system(policy);
  EXPECT_TRUE(system != nullptr && system->read_manifests != nullptr) << policy;
  return system->read_manifests(paths, models::ClusterSpec{}, {});
}

std::vector<sim::InputError> problems(const std::string& policy, const policies::PolicyParams& params) {
  return policies::check_policy(policy, params, "x.yaml", 1, 1);
}

// ---- Volcano: the scheduler's ConfigMap ----

// Volcano's hierarchical-queue guide: actions "allocate, preempt, reclaim" (no enqueue).
TEST(VolcanoSchedulerConf, GuideConfigMapGivesActionsAndTiers) {
  const auto m = read("volcano", {kVolcano + "hierarchical-guide-scheduler.yaml"});
  EXPECT_EQ(param(m.params, "actions"), "allocate, preempt, reclaim");
  EXPECT_EQ(param(m.params, "tiers"),
            "[{plugins: [{name: priority}, {name: gang, enablePreemptable: false}]}, {plugins: [{name: drf, "
            "enablePreemptable: false}, {name: predicates}, {name: capacity, enableHierarchy: true}, {name: "
            "nodeorder}]}]");
  EXPECT_EQ(m.params.at("actions").line, 7);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_TRUE(problems("volcano", m.params).empty());
}

// Without enqueue, allocate moves Pending PodGroups to Inqueue (allocate.go: "no enqueue action
// is configured") and places them: before, every job stayed pending and none completed.
TEST(VolcanoSchedulerConf, NoEnqueueActionAllocateStillRunsJobs) {
  const auto sc = scenarios::parse_scenario(
      "name: v\n"
      "cluster: {pools: [{name: a100, nodes: 2, gpus_per_node: 8, gpu_type: A100, cpus_per_node: 64, "
      "memory_gib: 256}]}\n"
      "policy: {name: volcano, manifests: [hierarchical-guide-scheduler.yaml, hierarchical-guide-queues.yaml]}\n"
      "workload: {trace: hierarchical-jobs.csv}\n",
      kVolcano + "inline.yaml");
  EXPECT_EQ(param(sc.policy.params, "actions"), "allocate, preempt, reclaim");
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 4u);
  // Jobs 1-3 fill the 16 GPUs at the first session (t = 0); job 4 (8 GPUs, t = 10 s) starts when
  // job 3's 8 GPUs free at 100 s.
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 0);
  EXPECT_EQ(r.jobs[2].start, 0);
  EXPECT_EQ(r.jobs[3].start, 100 * sim::kSecond);
  for (const auto& j : r.jobs) EXPECT_EQ(static_cast<models::JobState>(j.state), models::JobState::Completed);
}

// Volcano's DRA quota guide: the capacity plugin's DRA switches are accepted, one warning each.
TEST(VolcanoSchedulerConf, CapacityDraArgumentsAcceptedWithWarning) {
  const auto m = read("volcano", {kVolcano + "dra-quota-scheduler.yaml"});
  EXPECT_EQ(param(m.params, "actions"), "enqueue, allocate, backfill, reclaim");
  ASSERT_EQ(m.warnings.size(), 2u);
  const std::string at = kVolcano + "dra-quota-scheduler.yaml:7: plugin argument ";
  EXPECT_EQ(m.warnings[0], at + "capacity.DynamicResourceAllocationEnable: Dynamic Resource Allocation is not "
                                "modelled (GPUs are nvidia.com/gpu requests); accepted");
  EXPECT_EQ(m.warnings[1], at + "capacity.DRAConsumableCapacityEnable: Dynamic Resource Allocation is not modelled "
                                "(GPUs are nvidia.com/gpu requests); accepted");
  const auto p = problems("volcano", m.params);
  EXPECT_TRUE(p.empty()) << (p.empty() ? "" : p[0].what());
}

}  // namespace
}  // namespace headroom
