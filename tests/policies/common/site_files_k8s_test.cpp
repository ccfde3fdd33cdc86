// Issue #34, the Kubernetes side: real, unedited public files (tests/data/imports/*/README.md
// give each one's source and licence) that headroom refused or misread, read and run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/pipeline.hpp"
#include "models/observer.hpp"
#include "policies/common/manifests.hpp"
#include "policies/kai/manifests.hpp"
#include "policies/kubernetes/manifests.hpp"
#include "policies/kueue/manifests.hpp"
#include "policies/registry.hpp"
#include "policies/system_module.hpp"
#include "policies/volcano/manifests.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "tests/generated_docs.hpp"
#include "tests/temp_dir.hpp"
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

// Volcano's nodegroup guide writes queues with `parent:` beside a scheduler ConfigMap that does not
// enable the capacity plugin's hierarchy: Volcano's webhook takes the parent and the scheduler
// treats the queues as flat, so the set reads as-is with one warning and no parent; with the
// hierarchy enabled in the same set the parent is kept (the hierarchical guide, above).
TEST(VolcanoSchedulerConf, QueueParentWithoutHierarchyIsFlatWithAWarning) {
  const testing::TempDir tmp;
  const std::string conf = tmp.write("scheduler.yaml",
                                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap}\n"
                                     "data:\n  volcano-scheduler.conf: |\n    actions: \"enqueue, allocate\"\n"
                                     "    tiers:\n    - plugins:\n      - name: gang\n      - name: proportion\n");
  const std::string queues = tmp.write("queues.yaml",
                                       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                                       "team-a}\nspec: {weight: 1, parent: root}\n---\n"
                                       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                                       "team-a-sub}\nspec: {weight: 1, parent: team-a}\n");
  const auto m = read("volcano", {conf, queues});
  EXPECT_EQ(m.params.count("queues.team-a-sub.parent"), 0u);
  EXPECT_EQ(param(m.params, "queues.team-a-sub.weight"), "1");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0],
            queues +
                ":9: Queue parent is not used: the scheduler ConfigMap has no capacity plugin with "
                "enableHierarchy: true, so the plugins headroom models treat the queues as flat; ignored");
  const auto p = problems("volcano", m.params);
  EXPECT_TRUE(p.empty()) << (p.empty() ? "" : p[0].what());
  // The queues alone: the scenario's own tiers decide, and the policy refuses a parent there
  // without the hierarchy (as before).
  const auto alone = read("volcano", {queues});
  EXPECT_EQ(param(alone.params, "queues.team-a-sub.parent"), "team-a");
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

// A scheduler ConfigMap whose embedded configuration is not YAML, or not a map, is an input error
// at the ConfigMap's data key; an alias bomb in it is bounded as a manifest file's is.
TEST(VolcanoSchedulerConf, BadEmbeddedConfigurationIsAnInputError) {
  const testing::TempDir tmp;
  auto error_of = [&](const std::string& conf) -> std::string {
    const std::string path = tmp.write("cm.yaml",
                                       "kind: ConfigMap\n"
                                       "apiVersion: v1\n"
                                       "metadata: {name: volcano-scheduler-configmap}\n"
                                       "data:\n"
                                       "  volcano-scheduler.conf: |\n" +
                                           conf);
    try {
      read("volcano", {path});
    } catch (const sim::InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string at = tmp.path("cm.yaml") + ":5:";
  EXPECT_EQ(error_of("    actions: [\n").rfind(at, 0), 0u) << error_of("    actions: [\n");
  EXPECT_NE(error_of("    actions: [\n").find("volcano-scheduler.conf: "), std::string::npos);
  EXPECT_NE(error_of("    - allocate\n").find("volcano-scheduler.conf: expected a map with actions and tiers"),
            std::string::npos);
  std::string bomb = "    a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c)
    bomb += std::string("    ") + c + ": &" + c + " [*" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) +
            ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) +
            ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) +
            ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + "]\n";
  const std::string e = error_of(bomb);
  EXPECT_EQ(e.rfind(at, 0), 0u) << e;
  EXPECT_NE(e.find("alias"), std::string::npos) << e;
}

// Volcano's NUMA-aware guide: the Helm chart's tiers plus numa-aware (with its `weight`), a
// plugin Volcano registers (plugins/factory.go) and headroom does not model. Before: the whole
// ConfigMap was refused ("unknown plugin"); now the plugin is left out with one warning and the
// rest reads as written.
TEST(VolcanoSchedulerConf, UnmodelledVolcanoPluginIsLeftOutWithOneWarning) {
  const auto m = read("volcano", {kVolcano + "numa-aware-scheduler.yaml"});
  EXPECT_EQ(param(m.params, "actions"), "enqueue, allocate, backfill");
  EXPECT_EQ(param(m.params, "tiers"),
            "[{plugins: [{name: priority}, {name: gang}, {name: conformance}]}, {plugins: [{name: drf}, {name: "
            "predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}]}]");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0],
            kVolcano + "numa-aware-scheduler.yaml:7: plugin numa-aware is not modelled; left out of the tiers");
  const auto p = problems("volcano", m.params);
  EXPECT_TRUE(p.empty()) << (p.empty() ? "" : p[0].what());
}

// Volcano's GPU-number guide: deviceshare with its argument, left out the same way.
TEST(VolcanoSchedulerConf, DeviceshareGuideReadsWithOneWarning) {
  const auto m = read("volcano", {kVolcano + "gpu-number-scheduler.yaml"});
  EXPECT_EQ(param(m.params, "tiers"),
            "[{plugins: [{name: priority}, {name: gang}, {name: conformance}]}, {plugins: [{name: drf}, {name: "
            "predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}]}]");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find(":7: plugin deviceshare is not modelled"), std::string::npos) << m.warnings[0];
  EXPECT_TRUE(problems("volcano", m.params).empty());
}

// Volcano's network-topology-aware guide: the plugin with HyperNode binpack arguments, one of them
// a list of two resources ("nvidia.com/gpu, example.com/foo"). Before: the whole ConfigMap was
// refused ("only nvidia.com/gpu is modelled"); now GPUs are binpacked and the other resource, its
// weight and the normal-pod switches are left out with one warning each.
TEST(VolcanoSchedulerConf, NetworkTopologyGuideBinpacksGpusAndWarnsForTheOtherResource) {
  const std::string file = kVolcano + "network-topology-scheduler.yaml";
  const auto m = read("volcano", {file});
  EXPECT_EQ(param(m.params, "actions"), "enqueue, allocate, backfill");
  EXPECT_EQ(param(m.params, "tiers"),
            "[{plugins: [{name: priority}, {name: gang}, {name: conformance}]}, {plugins: [{name: drf}, {name: "
            "predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}, {name: network-topology-aware, "
            "arguments: {weight: 10, hypernode.binpack.cpu: 5, hypernode.binpack.memory: 1, "
            "hypernode.binpack.resources: nvidia.com/gpu, hypernode.binpack.resources.nvidia.com/gpu: 2}}]}]");
  const std::vector<std::string> want = {
      file +
          ":7: plugin network-topology-aware argument hypernode.binpack.resources: resource example.com/foo is "
          "not modelled (nvidia.com/gpu is); ignored",
      file +
          ":7: plugin network-topology-aware argument hypernode.binpack.resources.example.com/foo is not "
          "modelled; ignored",
      file + ":7: plugin network-topology-aware argument hypernode.binpack.normal-pod.enable is not modelled; ignored",
      file +
          ":7: plugin network-topology-aware argument hypernode.binpack.normal-pod.fading is not modelled; "
          "ignored"};
  EXPECT_EQ(m.warnings, want);
  const auto p = problems("volcano", m.params);
  EXPECT_TRUE(p.empty()) << (p.empty() ? "" : p[0].what());
  // A list without nvidia.com/gpu leaves the argument out, one warning per resource.
  const testing::TempDir tmp;
  const std::string other =
      tmp.write("cm.yaml",
                "kind: ConfigMap\napiVersion: v1\nmetadata: {name: volcano-scheduler-configmap}\ndata:\n"
                "  volcano-scheduler.conf: |\n    actions: \"enqueue, allocate\"\n    tiers:\n    - plugins:\n"
                "      - name: binpack\n        arguments:\n          binpack.resources: example.com/foo, "
                "example.com/bar\n");
  const auto o = read("volcano", {other});
  EXPECT_EQ(param(o.params, "tiers"), "[{plugins: [{name: binpack}]}]");
  EXPECT_EQ(o.warnings.size(), 2u);
}

// What Volcano registers and headroom does not model warns and is left out: actions (shuffle,
// gangpreempt, gangreclaim), `enable...` switches of callbacks headroom lacks, plugin arguments it
// does not read, a tier of such plugins only. Names Volcano does not know either stay errors.
TEST(VolcanoSchedulerConf, UnmodelledActionsSwitchesAndArgumentsWarn) {
  const testing::TempDir tmp;
  const auto conf = [&](const std::string& body) {
    return tmp.write("cm.yaml",
                     "kind: ConfigMap\n"
                     "apiVersion: v1\n"
                     "metadata: {name: volcano-scheduler-configmap}\n"
                     "data:\n"
                     "  volcano-scheduler.conf: |\n" +
                         body);
  };
  const auto m = read("volcano", {conf("    actions: \"enqueue, allocate, shuffle, backfill, gangreclaim\"\n"
                                       "    tiers:\n"
                                       "    - plugins:\n"
                                       "      - name: task-topology\n"
                                       "      - name: tdm\n"
                                       "    - plugins:\n"
                                       "      - name: gang\n"
                                       "        enabledVictim: false\n"
                                       "        enablePreemptable: false\n"
                                       "      - name: binpack\n"
                                       "        arguments:\n"
                                       "          binpack.weight: 10\n"
                                       "          binpack.score.nodes: 3\n")});
  EXPECT_EQ(param(m.params, "actions"), "enqueue, allocate, backfill");
  EXPECT_EQ(param(m.params, "tiers"),
            "[{plugins: [{name: gang, enablePreemptable: false}, {name: binpack, arguments: {binpack.weight: 10}}]}]");
  const std::string at = tmp.path("cm.yaml") + ":5: ";
  EXPECT_EQ(m.warnings, (std::vector<std::string>{
                            at + "action shuffle is not modelled; left out of the actions",
                            at + "action gangreclaim is not modelled; left out of the actions",
                            at + "plugin task-topology is not modelled; left out of the tiers",
                            at + "plugin tdm is not modelled; left out of the tiers",
                            at + "plugin switch enabledVictim is not modelled; ignored",
                            at + "plugin binpack argument binpack.score.nodes is not modelled; ignored",
                        }));
  EXPECT_TRUE(problems("volcano", m.params).empty());
  // A name Volcano does not know is kept for the policy's error (Volcano: "failed to find Action").
  const auto typo = read("volcano", {conf("    actions: \"enqueue, alocate\"\n")});
  EXPECT_EQ(param(typo.params, "actions"), "enqueue, alocate");
  const auto p = problems("volcano", typo.params);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(std::string(p[0].what()).find("did you mean \"allocate\""), std::string::npos) << p[0].what();
  // Written in a scenario's own policy block, a Volcano plugin headroom does not model is an error
  // that says so, not "unknown plugin".
  policies::PolicyParams direct;
  direct["tiers"] = policies::ParamValue{"[{plugins: [{name: task-topology}]}]", "x.yaml", 3, 9};
  const auto q = problems("volcano", direct);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_NE(std::string(q[0].what()).find("plugin \"task-topology\" is Volcano's but not modelled by headroom"),
            std::string::npos)
      << q[0].what();
}

// ---- Kueue: kueueviz's examples (three LocalQueues in one namespace, two resource groups) ----

std::vector<std::string> kueueviz() {
  std::vector<std::string> out;
  for (const char* f :
       {"00-resource-flavor.yaml", "01-cluster-queues.yaml", "01.5-cohorts.yaml", "02-local-queues.yaml"})
    out.push_back(kKueue + "kueueviz/" + f);
  return out;
}

const char* kKueuevizCluster =
    "cluster:\n"
    "  pools:\n"
    "    - {name: gpu, nodes: 1, gpus_per_node: 4, gpu_type: A100, cpus_per_node: 8, memory_gib: 32,\n"
    "       labels: {instance-type: gpu}}\n"
    "    - {name: spot, nodes: 1, gpus_per_node: 4, gpu_type: T4, cpus_per_node: 8, memory_gib: 32,\n"
    "       labels: {instance-type: spot}}\n";

// Before: "namespace default already has a LocalQueue" (the three LocalQueues name no namespace),
// and 300m of cpu was no quota headroom could read.
TEST(KueueSiteFiles, KueuevizLocalQueuesResourceGroupsAndQuantities) {
  models::ClusterSpec cluster;
  for (const char* name : {"gpu", "spot"}) {
    models::NodePool p;
    p.name = name;
    p.nodes = 1;
    cluster.pools.push_back(p);
  }
  const policies::PoolLabels labels = {{{"instance-type", "gpu"}}, {{"instance-type", "spot"}}};
  const auto m = policies::find_system("kueue")->read_manifests(kueueviz(), cluster, labels);
  EXPECT_EQ(param(m.params, "clusterQueues.emergency-cluster-queue.localQueues"), "[default/emergency-queue]");
  EXPECT_EQ(param(m.params, "clusterQueues.llm-cluster-queue.localQueues"), "[default/llm-model-queue]");
  EXPECT_EQ(param(m.params, "clusterQueues.agi-cluster-queue.namespaces"), "[default]");
  EXPECT_EQ(param(m.params, "clusterQueues.emergency-cluster-queue.resourceGroups"), "[[cpu, memory], [gpu]]");
  EXPECT_EQ(param(m.params, "clusterQueues.agi-cluster-queue.resourceGroups"), "[[cpu, memory]]");
  EXPECT_EQ(param(m.params, "clusterQueues.agi-cluster-queue.resources.default-flavor.cpu.nominalQuota"), "1");
  EXPECT_EQ(param(m.params, "clusterQueues.agi-cluster-queue.resources.default-flavor.memory.nominalQuota"), "300Mi");
  EXPECT_EQ(param(m.params, "clusterQueues.emergency-cluster-queue.resources.gpu.gpu.nominalQuota"), "1073741824");
  EXPECT_EQ(param(m.params, "clusterQueues.emergency-cluster-queue.preemption.borrowWithinCohort.policy"),
            "LowerPriority");
  EXPECT_EQ(param(m.params, "clusterQueues.emergency-cluster-queue.preemption.reclaimWithinCohort"), "Any");
  const auto p = problems("kueue", m.params);
  EXPECT_TRUE(p.empty()) << (p.empty() ? "" : p[0].what());
}

// The pods pick their LocalQueue by label; the emergency queue's two groups put cpu and memory on
// default-flavor and GPUs on the gpu flavor (pods land on the pool both select); a GPU pod of
// agi-model-queue (whose ClusterQueue covers cpu and memory only) stays pending with Kueue's reason.
TEST(KueueSiteFiles, KueuevizQueuesRun) {
  std::string manifests;
  for (const auto& f : kueueviz()) manifests += (manifests.empty() ? "" : ", ") + f;
  const auto sc =
      scenarios::parse_scenario(std::string("name: k\n") + kKueuevizCluster + "policy: {name: kueue, manifests: [" +
                                    manifests + "]}\nworkload: {trace: kueueviz-pods.yaml, assume_runtime: 1h}\n",
                                kKueue + "inline.yaml");
  const auto out = app::run_scenario(sc);
  const auto& r = out.result;
  ASSERT_EQ(r.jobs.size(), 4u);
  // emergency-a: 1 GPU, 1 cpu: both groups fit; placed on the gpu pool (default-flavor selects
  // every pool, gpu only the gpu pool).
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(static_cast<models::JobState>(r.jobs[0].state), models::JobState::Completed);
  // agi-b: 1 cpu in agi-cluster-queue (300m read as 1 core).
  EXPECT_EQ(r.jobs[1].start, 0);
  // agi-gpu-c: nvidia.com/gpu is no resource of agi-cluster-queue: it never starts, with Kueue's
  // reason.
  EXPECT_EQ(r.jobs[2].start, -1);
  EXPECT_EQ(static_cast<models::JobState>(r.jobs[2].state), models::JobState::Unfinished);
  std::string why;
  for (const auto& e : r.events)
    if (e.job == 2 && e.kind == static_cast<std::uint8_t>(models::AuditKind::Waiting)) why = r.reasons[e.reason];
  EXPECT_EQ(why,
            "quota: couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in ClusterQueue "
            "agi-cluster-queue (kueue)");
  // emergency-d (created 1 s later): a second core beyond emergency-cluster-queue's 1, borrowed
  // from llm-cluster-queue's idle core in their cohort; it starts when it arrives.
  EXPECT_EQ(r.jobs[3].submit, sim::kSecond);
  EXPECT_EQ(r.jobs[3].start, sim::kSecond);
  // emergency-a ran on the gpu pool, the one pool both its flavors select.
  EXPECT_EQ(r.jobs[0].pool, 0);
}

// Kueue's StopPolicy example: `stopPolicy: Hold` (before: a warning, and the ClusterQueue
// admitted as if running). Now the ClusterQueue admits nothing, with Kueue's words.
TEST(KueueSiteFiles, StopPolicyHoldAdmitsNothing) {
  const auto m = read("kueue", {kKueue + "stop-policy-hold.yaml"});
  EXPECT_EQ(param(m.params, "clusterQueues.team-a-cq.stopPolicy"), "Hold");
  EXPECT_TRUE(m.warnings.empty());
  const auto sc = scenarios::parse_scenario(
      "name: hold\n"
      "cluster: {pools: [{name: a100, nodes: 1, gpus_per_node: 8, gpu_type: A100}]}\n"
      "policy: {name: kueue, manifests: [stop-policy-hold.yaml],\n"
      "         clusterQueues: {team-a-cq: {namespaces: [default]}}}\n"
      "workload: {trace: kueueviz-pods.yaml, assume_runtime: 1h}\n",
      kKueue + "inline.yaml");
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 4u);
  for (const auto& j : r.jobs) EXPECT_EQ(j.start, -1);
  std::string why;
  for (const auto& e : r.events)
    if (e.job == 0 && e.kind == static_cast<std::uint8_t>(models::AuditKind::Waiting)) why = r.reasons[e.reason];
  EXPECT_EQ(why, "admission: ClusterQueue team-a-cq is inactive (stopPolicy; kueue)");
}

// Kueue's "Multiple ResourceFlavors setup" (administer_cluster_quotas.md): cpu in one group with
// flavors x86 (9 cores) then arm (12), memory in another on default-flavor. Four 5-core pods: the
// first on x86; the second and third do not fit x86's 9 and go to arm; the fourth fits neither
// (x86 10 > 9, arm 15 > 12) and waits until the first ends, 10 minutes later, then takes x86.
TEST(KueueSiteFiles, AdminQuotasCpuGroupFallsBackToTheNextFlavor) {
  std::string manifests;
  for (const char* f :
       {"default-flavor.yaml", "flavor-x86.yaml", "flavor-arm.yaml", "cluster-queue.yaml", "default-user-queue.yaml"})
    manifests += std::string(manifests.empty() ? "" : ", ") + "admin-quotas/" + f;
  const auto sc = scenarios::parse_scenario(
      "name: arch\n"
      "cluster:\n"
      "  pools:\n"
      "    - {name: x86, nodes: 1, gpus_per_node: 8, gpu_type: A100, cpus_per_node: 16, memory_gib: 64,\n"
      "       labels: {cpu-arch: x86}}\n"
      "    - {name: arm, nodes: 1, gpus_per_node: 8, gpu_type: A100, cpus_per_node: 16, memory_gib: 64,\n"
      "       labels: {cpu-arch: arm}}\n"
      "policy: {name: kueue, manifests: [" +
          manifests +
          "]}\n"
          "workload: {trace: admin-quotas-pods.yaml}\n",
      kKueue + "inline.yaml");
  EXPECT_EQ(sc.policy.params.at("clusterQueues.cluster-queue.resourceGroups").text, "[[cpu], [memory]]");
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 4u);
  const sim::Tick s = sim::kSecond;
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[0].pool, 0);  // x86
  EXPECT_EQ(r.jobs[1].start, 1 * s);
  EXPECT_EQ(r.jobs[1].pool, 1);  // arm
  EXPECT_EQ(r.jobs[2].start, 2 * s);
  EXPECT_EQ(r.jobs[2].pool, 1);
  EXPECT_EQ(r.jobs[3].start, 600 * s);  // when the first pod's 5 x86 cores come back
  EXPECT_EQ(r.jobs[3].pool, 0);
}

// ---- Kubernetes pod snapshots: a queue of pods that never started ----

// KAI-Scheduler's own `kubectl get pods -o yaml` of a RayCluster that waits for GPUs: nine pods,
// all Pending, none with a startTime. Before: "no jobs in trace".
TEST(PodSnapshots, PendingPodsNeedAnAssumedRunTime) {
  try {
    traces::import_trace(kKai + "pending-pods.yaml");
    FAIL() << "expected no jobs";
  } catch (const sim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no jobs in trace (all 9 rows skipped; items[0] "
                                         "(demo/rayjob-team-a-47fh9-gpu-shmorkers-worker-dqktf): never started "
                                         "(phase Pending), run time unknown (workload.assume_runtime or "
                                         "--assume-runtime queues it with an assumed one)"),
              std::string::npos)
        << e.what();
  }
  traces::ImportOptions o;
  o.assume_runtime = sim::kHour;
  o.keep_cpu_only = true;
  const auto w = traces::import_trace(kKai + "pending-pods.yaml", o);
  ASSERT_EQ(w.jobs.size(), 9u);
  int with_gpus = 0;
  for (const auto& j : w.jobs) {
    // The head pod was created at 14:58:45, the workers a second later.
    EXPECT_EQ(j.submit, j.gpus > 0 ? sim::kSecond : 0);
    EXPECT_EQ(j.runtime, sim::kHour);
    EXPECT_EQ(j.trace_start, -1);
    EXPECT_EQ(w.tenants.name(j.tenant), "demo");
    if (j.gpus > 0) {
      ++with_gpus;
      EXPECT_EQ(j.gpus, 8);
      EXPECT_EQ(j.cpus, 1);  // 200m, rounded up
    }
  }
  EXPECT_EQ(with_gpus, 8);
  EXPECT_EQ(w.meta.unix_start, 1772031525);  // 2026-02-25T14:58:45Z
}

// The snapshot replayed on four 8-GPU nodes with an assumed hour each (fifo, so that no
// scheduler's retry timing enters): the eight 8-GPU workers, submitted at 1 s, run four at a
// time, at 1 s and when the first four end, 1 h later.
TEST(PodSnapshots, PendingPodsReplayAsAQueue) {
  const auto sc = scenarios::parse_scenario(
      "name: snapshot\n"
      "cluster: {pools: [{name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100, cpus_per_node: 64}]}\n"
      "policy: fifo\n"
      "workload: {trace: pending-pods.yaml, assume_runtime: 1h}\n",
      kKai + "inline.yaml");
  const auto r = app::run_scenario(sc).result;
  std::vector<sim::Tick> starts;
  for (const auto& j : r.jobs)
    if (j.gpus > 0) starts.push_back(j.start);
  std::sort(starts.begin(), starts.end());
  ASSERT_EQ(starts.size(), 8u);
  const sim::Tick a = sim::kSecond, b = sim::kSecond + sim::kHour;
  EXPECT_EQ(starts, (std::vector<sim::Tick>{a, a, a, a, b, b, b, b}));
}

// ---- docs/importing.md: the Kubernetes-side key tables are the readers' own ----

TEST(ImportingDocs, KubernetesSideKeyTablesAreTheReadersOwnTables) {
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/docs/importing.md";
  const std::string begin =
      "<!-- generated: kubernetes-side keys (site_files_k8s_test's ImportingDocs test; HEADROOM_UPDATE_DOCS=1 "
      "rewrites it) -->\n";
  const std::string end = "<!-- end of generated kubernetes-side keys -->";
  const std::string want = policies::kueue::site_keys_markdown() + "\n" + policies::volcano::site_keys_markdown() +
                           "\n" + policies::kai::site_keys_markdown() + "\n" + policies::k8s::site_keys_markdown() +
                           "\n" + traces::pod_list_keys_markdown();
  const auto block = headroom::testing::generated_block(path, begin, end, want);
  ASSERT_TRUE(block.has_value()) << path << " has no generated block";
  const std::string& have = *block;
  EXPECT_EQ(have, want) << "run with HEADROOM_UPDATE_DOCS=1 to rewrite the block";
  // Spot checks: each of the readers' lists is on the page.
  for (const char* key :
       {"preemption.borrowWithinCohort.policy", "lendingLimit", "amd.com/gpu", "hierarchy-weights", "gangreclaim",
        "numa-aware", "enabledVictim", "binpack.resources", "reclaimMinRuntime", "overQuotaWeight",
        "build-preemptible 75", "requests.nvidia.com/gpu -> quota.NAMESPACE.gpu", "pods / count/pods", "scopeSelector",
        "kai.scheduler/queue", "XGBoostJob", "TrainJob (train)", "CLASS.storageclass.storage.k8s.io/RESOURCE"})
    EXPECT_NE(have.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace headroom
