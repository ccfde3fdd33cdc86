// Issue #31: hostile and malformed Kubernetes-family manifests (Kueue, Volcano, KAI, core
// ResourceQuota / PriorityClass) and kubectl pod lists, refused with file:line and the offending
// value, or read as the API server and kubectl read them (docs/importing.md, "Manifests").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/pipeline.hpp"
#include "models/job.hpp"
#include "policies/common/manifests.hpp"
#include "policies/kueue/manifests.hpp"
#include "policies/registry.hpp"
#include "policies/system_module.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "tests/temp_dir.hpp"
#include "traces/import.hpp"

namespace headroom {
namespace {

std::string param(const policies::PolicyParams& p, const std::string& key) {
  const auto it = p.find(key);
  return it == p.end() ? "(absent)" : it->second.text;
}

models::ClusterSpec one_pool() {
  models::ClusterSpec c;
  models::NodePool p;
  p.name = "a";
  p.nodes = 2;
  p.gpus_per_node = 8;
  p.gpu_type = "A100";
  c.pools.push_back(p);
  return c;
}

policies::ManifestImport read(const std::string& policy, const std::vector<std::string>& paths) {
  const policies::SystemModule* system = policies::find_system(policy);
  EXPECT_TRUE(system != nullptr && system->read_manifests != nullptr) << policy;
  return system->read_manifests(paths, one_pool(), {});
}

std::string error_of(const std::string& policy, const std::vector<std::string>& paths) {
  try {
    read(policy, paths);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string problems(const std::string& policy, const policies::PolicyParams& params) {
  std::string out;
  for (const auto& e : policies::check_policy(policy, params, "x.yaml", 1, 1)) {
    if (!out.empty()) out += '\n';
    out += e.what();
  }
  return out;
}

std::string import_error(const std::string& path) {
  try {
    traces::import_trace(path);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kVolcanoApi = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n";
const std::string kKaiApi = "apiVersion: scheduling.run.ai/v2\nkind: Queue\n";
const std::string kKueueApi = "apiVersion: kueue.x-k8s.io/v1beta1\n";

// A YAML pod list of one pod whose first container has `resources` (indented for the block).
std::string pod_yaml(const std::string& resources, const std::string& ns = "team") {
  return "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n"
         "    namespace: " +
         ns +
         "\n    creationTimestamp: \"2024-01-01T00:00:00Z\"\n  spec:\n    containers:\n    - name: c\n"
         "      resources:\n" +
         resources + "  status: {phase: Running, startTime: \"2024-01-01T00:00:05Z\"}\n";
}
const std::string kGpuPath = "items[0].spec.containers[0].resources.requests[\"nvidia.com/gpu\"]";

// ---- 1. GPU requests of a pod: non-negative integers, as the API server validates them ----

TEST(PodListGpus, NegativeUnquotedGpuRequestIsAnError) {
  testing::TempDir dir;
  const std::string f = dir.write("pods.yaml", pod_yaml("        requests:\n          nvidia.com/gpu: -4\n"));
  EXPECT_EQ(import_error(f), f + ":15:27: " + kGpuPath +
                                 ": nvidia.com/gpu must be a whole number of GPUs from 0 to 2147483647, got \"-4\"");
}

TEST(PodListGpus, FractionalGpuLimitIsAnErrorNamingKeyAndValue) {
  testing::TempDir dir;
  const std::string f = dir.write("pods.yaml", pod_yaml("        limits:\n          nvidia.com/gpu: \"0.5\"\n"));
  EXPECT_EQ(import_error(f), f + ":15:27: items[0].spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: "
                                 "nvidia.com/gpu must be a whole number of GPUs from 0 to 2147483647, got \"0.5\"");
}

TEST(PodListGpus, MemorySuffixOnAGpuCountNamesKeyAndValue) {
  testing::TempDir dir;
  const std::string f = dir.write("pods.yaml", pod_yaml("        requests:\n          nvidia.com/gpu: 4Gi\n"));
  EXPECT_EQ(import_error(f), f + ":15:27: " + kGpuPath +
                                 ": nvidia.com/gpu must be a whole number of GPUs from 0 to 2147483647, got \"4Gi\"");
}

TEST(PodListGpus, Int64OverflowingGpuCountIsQuotedAsWritten) {
  testing::TempDir dir;
  const std::string f =
      dir.write("pods.yaml", pod_yaml("        requests:\n          nvidia.com/gpu: 99999999999999999999\n"));
  EXPECT_EQ(import_error(f), f + ":15:27: " + kGpuPath +
                                 ": nvidia.com/gpu must be a whole number of GPUs from 0 to 2147483647, got "
                                 "\"99999999999999999999\"");
}

TEST(PodListGpus, NegativeGpuInAJsonPodListIsAnError) {
  testing::TempDir dir;
  const std::string f =
      dir.write("pods.json",
                "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\",\n"
                " \"metadata\": {\"name\": \"p\", \"creationTimestamp\": \"2024-01-01T00:00:00Z\"},\n"
                " \"spec\": {\"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": -4}}}]},\n"
                " \"status\": {\"phase\": \"Running\", \"startTime\": \"2024-01-01T00:00:05Z\"}}]}\n");
  const std::string e = import_error(f);
  EXPECT_NE(e.find("items[0].spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: nvidia.com/gpu must be a whole "
                   "number of GPUs from 0 to 2147483647, got \"-4\""),
            std::string::npos)
      << e;
  EXPECT_EQ(e.rfind(f + ":3:", 0), 0u) << e;
}

TEST(PodListQuantities, NegativeCpuAndAbsurdCpuAreErrors) {
  testing::TempDir dir;
  const std::string neg = dir.write("neg.yaml", pod_yaml("        requests:\n          cpu: -2\n"));
  EXPECT_EQ(import_error(neg), neg +
                                   ":15:16: items[0].spec.containers[0].resources.requests[\"cpu\"]: expected a "
                                   "non-negative quantity such as \"2\", \"500m\" or \"64Gi\", got \"-2\"");
  const std::string big = dir.write("big.yaml", pod_yaml("        requests:\n          cpu: \"1e30\"\n"));
  EXPECT_EQ(import_error(big), big +
                                   ":15:16: items[0].spec.containers[0].resources.requests[\"cpu\"]: quantity \"1e30\" "
                                   "is out of range (at most 2147483647 cores)");
}

// ---- 2. Quantities beyond int64: an error quoting the text, never a wrapped number ----

TEST(ManifestQuantities, HugeVolcanoCapabilityIsQuotedAsWritten) {
  testing::TempDir dir;
  const std::string f = dir.write("q.yaml", kVolcanoApi + "metadata: {name: a}\nspec:\n  capability:\n    cpu: 1e30\n");
  EXPECT_EQ(error_of("volcano", {f}), f + ":6:10: Queue a: capability: cpu: quantity \"1e30\" is out of range");
}

TEST(ManifestQuantities, HugeResourceQuotaIsQuotedAsWritten) {
  testing::TempDir dir;
  const std::string f = dir.write("rq.yaml",
                                  "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: ns}\n"
                                  "spec:\n  hard:\n    requests.memory: 1e30\n");
  EXPECT_EQ(error_of("kubernetes", {f}), f + ":6:22: requests.memory: quantity \"1e30\" is out of range");
}

// ---- 3. Empty manifest files: kubectl apply says "no objects passed to apply" ----

TEST(EmptyManifests, EmptyFileIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string f = dir.write("empty.yaml", "");
  EXPECT_EQ(error_of("kueue", {f}),
            f + ": no objects in the manifest file (kubectl apply refuses it: \"no objects passed to apply\")");
}

TEST(EmptyManifests, CommentsAndSeparatorsOnlyIsAnError) {
  testing::TempDir dir;
  const std::string f = dir.write("c.yaml", "# queues to come\n---\n# nothing yet\n---\n");
  EXPECT_EQ(error_of("volcano", {f}),
            f + ": no objects in the manifest file (kubectl apply refuses it: \"no objects passed to apply\")");
  const std::string list = dir.write("l.yaml", "apiVersion: v1\nkind: List\nitems: []\n");
  EXPECT_EQ(error_of("kai", {list}),
            list + ": no objects in the manifest file (kubectl apply refuses it: \"no objects passed to apply\")");
}

// A folder named as a manifest file (an ifstream opens it and fails only when read): an input
// error naming it, for every system, never an internal error.
TEST(EmptyManifests, AFolderIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string f = dir.path("queues.yaml");
  std::filesystem::create_directory(f);
  for (const char* system : {"kueue", "volcano", "kai", "kubernetes"})
    EXPECT_EQ(error_of(system, {f}), f + ": a folder, not a manifest file (name the files in it)") << system;
}

// A device or an endless pipe named as a manifest file is refused at 16 MiB, not read until memory
// runs out.
TEST(EmptyManifests, ADeviceIsRefusedAtABound) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  for (const char* system : {"kueue", "volcano"})
    EXPECT_EQ(error_of(system, {"/dev/zero"}),
              "/dev/zero:1: more than 16 MiB, far more than a manifest file ever holds: a device, an endless pipe or "
              "a log named in its place?")
        << system;
}

// ---- 4. Objects declared twice: kubectl apply's last one wins, with a warning naming both ----

TEST(DuplicateObjects, ClusterQueueDeclaredTwiceLastWinsWithAWarning) {
  testing::TempDir dir;
  const std::string f =
      dir.write("k.yaml", kKueueApi + "kind: ResourceFlavor\nmetadata: {name: f}\n---\n" + kKueueApi +
                              "kind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  cohort: c\n  resourceGroups:\n"
                              "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n"
                              "      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]\n---\n" +
                              kKueueApi +
                              "kind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  resourceGroups:\n"
                              "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n"
                              "      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n");
  const auto m = policies::kueue::read_manifests({f}, one_pool(), {});
  EXPECT_EQ(param(m.params, "clusterQueues.cq.resources.f.gpu.nominalQuota"), "8");
  EXPECT_EQ(param(m.params, "clusterQueues.cq.cohort"), "(absent)");  // replaced, not merged
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], f + ":16: ClusterQueue \"cq\" is declared again (first at " + f +
                               ":5); as with kubectl apply, the later one replaces the earlier one");
}

TEST(DuplicateObjects, VolcanoQueueTwiceAcrossFilesLastWins) {
  testing::TempDir dir;
  const std::string a =
      dir.write("a.yaml", kVolcanoApi + "metadata: {name: q}\nspec: {weight: 4, reclaimable: false}\n");
  const std::string b = dir.write("b.yaml", "# second\n" + kVolcanoApi + "metadata: {name: q}\nspec: {weight: 2}\n");
  const auto m = read("volcano", {a, b});
  EXPECT_EQ(param(m.params, "queues.q.weight"), "2");
  EXPECT_EQ(param(m.params, "queues.q.reclaimable"), "(absent)");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], b + ":2: Queue \"q\" is declared again (first at " + a +
                               ":1); as with kubectl apply, the later one replaces the earlier one");
}

TEST(DuplicateObjects, KaiQueueTwiceLastWins) {
  testing::TempDir dir;
  const std::string f = dir.write("k.yaml", kKaiApi + "metadata: {name: q}\nspec: {priority: 5}\n---\n" + kKaiApi +
                                                "metadata: {name: q}\nspec:\n  resources: {gpu: {quota: 3}}\n");
  const auto m = read("kai", {f});
  EXPECT_EQ(param(m.params, "queues.q.priority"), "(absent)");
  EXPECT_EQ(param(m.params, "queues.q.resources.gpu.quota"), "3");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], f + ":6: Queue \"q\" is declared again (first at " + f +
                               ":1); as with kubectl apply, the later one replaces the earlier one");
}

TEST(DuplicateObjects, LocalQueueAndResourceFlavorAndPriorityClassTwice) {
  testing::TempDir dir;
  const std::string f = dir.write(
      "k.yaml",
      kKueueApi + "kind: ClusterQueue\nmetadata: {name: one}\n---\n" + kKueueApi +
          "kind: ClusterQueue\nmetadata: {name: two}\n---\n" + kKueueApi +
          "kind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: one}\n---\n" + kKueueApi +
          "kind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: two}\n---\n" + kKueueApi +
          "kind: LocalQueue\nmetadata: {name: lq, namespace: other}\nspec: {clusterQueue: one}\n---\n"
          "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\nvalue: 10\n"
          "globalDefault: true\n---\n"
          "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\nvalue: 20\n"
          "globalDefault: true\n");
  const auto m = policies::kueue::read_manifests({f}, one_pool(), {});
  EXPECT_EQ(param(m.params, "clusterQueues.two.namespaces"), "[ns]");
  EXPECT_EQ(param(m.params, "clusterQueues.one.namespaces"), "[other]");  // another namespace: another object
  ASSERT_EQ(m.warnings.size(), 3u);
  EXPECT_EQ(m.warnings[0], f + ":14: LocalQueue \"ns/lq\" is declared again (first at " + f +
                               ":9); as with kubectl apply, the later one replaces the earlier one");
  EXPECT_EQ(m.warnings[1], f + ":30: PriorityClass \"hi\" is declared again (first at " + f +
                               ":24); as with kubectl apply, the later one replaces the earlier one");
}

// ---- 5. References to objects that do not exist ----

TEST(MissingReferences, LocalQueueNamingAMissingClusterQueueIsAnError) {
  testing::TempDir dir;
  const std::string f =
      dir.write("k.yaml", kKueueApi + "kind: ClusterQueue\nmetadata: {name: real}\n---\n" + kKueueApi +
                              "kind: LocalQueue\nmetadata: {name: lq, namespace: team}\nspec:\n  clusterQueue: typo\n");
  const auto m = policies::kueue::read_manifests({f}, one_pool(), {});
  EXPECT_EQ(
      problems("kueue", m.params),
      f + ":9:17: policy.clusterQueues.typo.namespaces: ClusterQueue \"typo\" is not declared; the LocalQueues of "
          "namespaces [team] point at it (Kueue keeps such a LocalQueue inactive, ClusterQueueDoesNotExist, and "
          "admits none of its workloads)");
}

TEST(MissingReferences, TwoGlobalDefaultPriorityClassesAreRefused) {
  testing::TempDir dir;
  const std::string f = dir.write("pc.yaml",
                                  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\n"
                                  "value: 10\nglobalDefault: true\n---\n"
                                  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
                                  "value: 20\nglobalDefault: true\n");
  EXPECT_EQ(error_of("kubernetes", {f}), f + ":11:16: PriorityClass high: globalDefault: PriorityClass low (at " + f +
                                             ":5) is already the default; the API server allows one");
}

// A scenario whose policy reads `manifest` and whose trace's jobs name queue `queue`.
results::RunResult run_with(const std::string& policy, const testing::TempDir& dir, const std::string& manifest,
                            const std::string& queue) {
  dir.write("m.yaml", manifest);
  dir.write("jobs.csv", "id,tenant,queue,submit,gpus,runtime\n1,t," + queue + ",0,1,100\n2,t,q,0,1,100\n");
  const auto sc = scenarios::parse_scenario(
      "name: s\ncluster: {pools: [{name: a, nodes: 1, gpus_per_node: 8, gpu_type: A100}]}\n"
      "policy: {name: " +
          policy + ", manifests: [m.yaml]}\nworkload: {trace: jobs.csv}\n",
      dir.path("s.yaml"));
  return app::run_scenario(sc).result;
}

bool has_reason(const results::RunResult& r, const std::string& reason) {
  return std::find(r.reasons.begin(), r.reasons.end(), reason) != r.reasons.end();
}

TEST(MissingReferences, PodOfAnUndeclaredVolcanoQueueIsRejected) {
  testing::TempDir dir;
  const auto r = run_with("volcano", dir, kVolcanoApi + "metadata: {name: q}\nspec: {weight: 1}\n", "typo");
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].state, static_cast<std::uint8_t>(models::JobState::Rejected));
  EXPECT_EQ(r.jobs[1].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_TRUE(has_reason(r, "volcano admission: unable to find job queue `typo`"));
}

TEST(MissingReferences, PodOfAnUndeclaredKaiQueueIsRejected) {
  testing::TempDir dir;
  const auto r = run_with("kai", dir,
                          kKaiApi +
                              "metadata: {name: q}\nspec:\n  resources: {gpu: {quota: -1, limit: -1}, cpu: "
                              "{quota: -1, limit: -1}, memory: {quota: -1, limit: -1}}\n",
                          "typo");
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].state, static_cast<std::uint8_t>(models::JobState::Rejected));
  EXPECT_EQ(r.jobs[1].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_TRUE(
      has_reason(r, "queue \"typo\" is not declared; KAI schedules no pod group of a queue that does not exist"));
}

// A job whose log recorded no queue (an SWF queue of -1, read as models::kUnknownName) names none:
// Volcano's job webhook gives it the queue "default" and KAI's podgrouper "default-queue", both of
// which exist without a declaration, so it runs where queues are declared (it was rejected as an
// undeclared queue, as Slurm rejected it as an invalid partition).
TEST(MissingReferences, AJobWhoseLogRecordedNoQueueRunsInTheDefaultQueue) {
  const std::string unknown(models::kUnknownName);
  for (const auto& [policy, manifest] :
       {std::pair{std::string("volcano"), kVolcanoApi + "metadata: {name: q}\nspec: {weight: 1}\n"},
        std::pair{std::string("kai"), kKaiApi +
                                          "metadata: {name: q}\nspec:\n  resources: {gpu: {quota: -1, limit: -1}, "
                                          "cpu: {quota: -1, limit: -1}, memory: {quota: -1, limit: -1}}\n"}}) {
    testing::TempDir dir;
    const auto r = run_with(policy, dir, manifest, unknown);
    ASSERT_EQ(r.jobs.size(), 2u) << policy;
    EXPECT_EQ(r.jobs[0].state, static_cast<std::uint8_t>(models::JobState::Completed)) << policy;
    EXPECT_EQ(r.jobs[1].state, static_cast<std::uint8_t>(models::JobState::Completed)) << policy;
  }
}

// ---- 6. A Volcano capability of 4Gi GPUs, or any absurd GPU count ----

TEST(VolcanoGpus, MemorySuffixOnAGpuCapabilityIsRefused) {
  testing::TempDir dir;
  const std::string f =
      dir.write("q.yaml", kVolcanoApi + "metadata: {name: a}\nspec:\n  capability:\n    nvidia.com/gpu: 4Gi\n");
  EXPECT_EQ(error_of("volcano", {f}),
            f + ":6:21: Queue a: capability: nvidia.com/gpu: expected a whole number of GPUs up to 2147483647, got "
                "\"4Gi\"");
}

TEST(VolcanoGpus, AbsurdGpuCountInParamsIsRefused) {
  policies::PolicyParams p;
  p["queues.a.capability.nvidia.com/gpu"] = policies::ParamValue{"99999999999", "s.yaml", 4, 7};
  EXPECT_EQ(problems("volcano", p),
            "s.yaml:4:7: policy.queues.a.capability.nvidia.com/gpu: expected a quantity such as 8, got "
            "\"99999999999\"");
}

// ---- 7. Non-UTF-8 names ----

TEST(NonUtf8, ClusterQueueNameInAManifestIsRefused) {
  testing::TempDir dir;
  const std::string f = dir.write("k.yaml", kKueueApi + "kind: ClusterQueue\nmetadata:\n  name: caf\xe9\n");
  EXPECT_EQ(error_of("kueue", {f}),
            f + ":4:12: not UTF-8 text: byte 0xe9 is not valid UTF-8 (kubectl's YAML reader refuses the file)");
  const std::string label = dir.write("l.yaml", kKueueApi +
                                                    "kind: ResourceFlavor\nmetadata: {name: f}\nspec:\n"
                                                    "  nodeLabels: {zone: \"\xff\"}\n");
  EXPECT_EQ(error_of("kueue", {label}),
            label + ":5:23: not UTF-8 text: byte 0xff is not valid UTF-8 (kubectl's YAML reader refuses the file)");
}

TEST(NonUtf8, NamespaceInAYamlPodListIsRefused) {
  testing::TempDir dir;
  const std::string f = dir.write("pods.yaml", pod_yaml("        requests: {cpu: 1}\n", "caf\xc3"));
  EXPECT_EQ(import_error(f), f + ":8:16: items[0].metadata.namespace: not UTF-8 text: byte 0xc3 is not valid UTF-8");
}

// ---- 8. Errors that say where ----

TEST(Located, UnknownFlavorInACohortNamesFileAndLine) {
  testing::TempDir dir;
  const std::string f = dir.write("k.yaml", kKueueApi +
                                                "kind: Cohort\nmetadata: {name: c}\nspec:\n  resourceGroups:\n"
                                                "  - coveredResources: [cpu]\n    flavors:\n    - name: nope\n"
                                                "      resources:\n      - name: cpu\n        nominalQuota: 4\n");
  const auto m = policies::kueue::read_manifests({f}, one_pool(), {});
  EXPECT_EQ(problems("kueue", m.params), f + ":11:23: policy.cohorts.c.resources.nope: unknown flavor \"nope\"; "
                                             "declare it under resourceFlavors");
}

}  // namespace
}  // namespace headroom
