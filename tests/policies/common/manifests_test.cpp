// Volcano, KAI and Kubernetes manifests read directly (policies/*_manifests.cpp), on the upstream
// projects' own examples (tests/data/imports/{volcano,kai,kubernetes}/README.md), and run.
#include "policies/common/manifests.hpp"
#include "policies/system_module.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "apps/pipeline.hpp"
#include "models/job.hpp"
#include "planner/compare.hpp"
#include "policies/kai/kai.hpp"
#include "policies/kubernetes/kubernetes.hpp"
#include "policies/registry.hpp"
#include "policies/volcano/volcano.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "tests/temp_dir.hpp"
#include "traces/import.hpp"

namespace headroom {
namespace {

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/";
const std::string kVolcano = kData + "volcano/", kKai = kData + "kai/", kK8s = kData + "kubernetes/";

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

std::string error_of(const std::string& policy, const std::vector<std::string>& paths) {
  try {
    read(policy, paths);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

models::JobState state(const results::JobRecord& j) { return static_cast<models::JobState>(j.state); }

const char* kCluster =
    "cluster: {pools: [{name: a100, nodes: 2, gpus_per_node: 8, gpu_type: A100, cpus_per_node: 64}]}\n";

// ---- Volcano Queue ----

TEST(VolcanoManifests, KubectlListOfQueues) {
  const auto m = read("volcano", {kVolcano + "dequeue-strategies-queues.yaml"});
  for (const char* q : {"fifo-queue", "traverse-queue", "default-queue"}) {
    const std::string k = std::string("queues.") + q;
    EXPECT_EQ(param(m.params, k + ".weight"), "10");
    EXPECT_EQ(param(m.params, k + ".capability.cpu"), "4000m");
    EXPECT_EQ(param(m.params, k + ".capability.memory"), "8192Mi");
  }
  EXPECT_EQ(m.params.at("queues.fifo-queue.capability.cpu").line, 13);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], kVolcano +
                               "dequeue-strategies-queues.yaml:9: Queue dequeue strategy fifo is not modelled "
                               "(traverse is)");
  EXPECT_TRUE(problems("volcano", m.params).empty());
}

TEST(VolcanoManifests, CapacityDeservedAndHierarchyAnnotations) {
  const auto c = read("volcano", {kVolcano + "capacity-queues.yaml"});
  EXPECT_EQ(param(c.params, "queues.queue1.deserved.cpu"), "2000m");
  EXPECT_EQ(param(c.params, "queues.queue2.deserved.memory"), "24576Mi");
  EXPECT_EQ(param(c.params, "queues.queue2.reclaimable"), "true");
  EXPECT_TRUE(c.warnings.empty());
  auto params = c.params;
  params["tiers"] = policies::ParamValue{"[[priority, gang], [drf, predicates, capacity, nodeorder]]", "x", 1, 1};
  EXPECT_TRUE(problems("volcano", params).empty());

  const auto h = read("volcano", {kVolcano + "hierarchical-queues.yaml"});
  EXPECT_EQ(param(h.params, "queues.root-sci-dev.annotations.volcano.sh/hierarchy"), "root/sci/dev");
  EXPECT_EQ(param(h.params, "queues.root-sci-dev.annotations.volcano.sh/hierarchy-weights"), "1/8/2");
  EXPECT_TRUE(h.warnings.empty());
  // Volcano's own rule: the annotations need drf with enableHierarchy.
  const auto without = problems("volcano", h.params);
  ASSERT_FALSE(without.empty());
  EXPECT_NE(std::string(without[0].what()).find("need drf with enableHierarchy: true"), std::string::npos)
      << without[0].what();
  params = h.params;
  params["tiers"] = policies::ParamValue{
      "[[priority, gang], [{name: drf, enableHierarchy: true}, predicates, nodeorder]]", "x", 1, 1};
  EXPECT_TRUE(problems("volcano", params).empty());
}

TEST(VolcanoManifests, QueueCapabilityHoldsJobsBack) {
  // example/deployment/queue.yaml: queue test, capability cpu 2. Three 1-cpu jobs: two run.
  const auto sc = scenarios::parse_scenario(std::string("name: v\n") + kCluster +
                                                "policy: {name: volcano, manifests: [deployment-queue.yaml]}\n"
                                                "workload: {trace: jobs.csv}\n",
                                            kVolcano + "inline.yaml");
  EXPECT_EQ(param(sc.policy.params, "queues.test.capability.cpu"), "2000m");
  EXPECT_EQ(param(sc.policy.params, "queues.test.reclaimable"), "false");
  EXPECT_TRUE(sc.warnings.empty());
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 0);
  EXPECT_EQ(r.jobs[2].start, 100 * sim::kSecond);
}

// ---- KAI Queue ----

TEST(KaiManifests, QuickstartQueuesInKaiUnits) {
  const auto m = read("kai", {kKai + "default-queues.yaml"});
  EXPECT_EQ(param(m.params, "queues.default-queue.parentQueue"), "default-parent-queue");
  EXPECT_EQ(param(m.params, "queues.default-parent-queue.resources.gpu.limit"), "-1");
  EXPECT_EQ(param(m.params, "queues.default-queue.resources.cpu.overQuotaWeight"), "1");
  EXPECT_EQ(param(m.params, "queues.default-queue.resources.memory.quota"), "0");
  EXPECT_EQ(param(m.params, "queues.default-queue.resources.memory.limit"), "-1");
  EXPECT_TRUE(m.warnings.empty());
  const auto cfg = policies::kai::parse_config(m.params);
  ASSERT_EQ(cfg.queues.size(), 2u);
  EXPECT_EQ(cfg.queues[0].name, "default-parent-queue");  // creation order: as written
  EXPECT_EQ(cfg.queues[1].parent, "default-parent-queue");
}

TEST(KaiManifests, DisplayNameIgnoredPriorityRead) {
  const auto m = read("kai", {kKai + "two-queue-oscillation-queues.yaml", kKai + "priorityclasses.yaml"});
  EXPECT_EQ(param(m.params, "queues.team-a.priority"), "100");
  EXPECT_EQ(param(m.params, "queues.team-b.parentQueue"), "training-department");
  EXPECT_EQ(param(m.params, "queues.team-a.displayName"), "(absent)");
  EXPECT_TRUE(m.warnings.empty());  // KAI's own four PriorityClasses are what the policy applies
  EXPECT_TRUE(problems("kai", m.params).empty());
  const auto other = read("kai", {kK8s + "priorityclasses.yaml"});
  ASSERT_EQ(other.warnings.size(), 1u);
  EXPECT_EQ(other.warnings[0], kK8s +
                                   "priorityclasses.yaml:1: PriorityClass high-priority (value 1000000) is not one "
                                   "of KAI's own (train 50, build-preemptible 75, build 100, inference 125); the "
                                   "kai policy gives jobs those by kind (priorityClassName.<kind>)");
}

TEST(KaiManifests, MemoryQuotaInMegabytesBecomesMebibytes) {
  testing::TempDir dir;
  const std::string path =
      dir.write("q.yaml",
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\n"
                "spec:\n  resources:\n    memory: {quota: 1000, limit: 2048000}\n    gpu: {quota: 2}\n");
  const auto m = read("kai", {path});
  EXPECT_EQ(param(m.params, "queues.q.resources.memory.quota"), "953");  // 10^9 bytes = 953.67 MiB
  EXPECT_EQ(param(m.params, "queues.q.resources.memory.limit"), "1953125");
  EXPECT_EQ(param(m.params, "queues.q.resources.gpu.quota"), "2");
}

TEST(KaiManifests, QueueLimitHoldsJobsBack) {
  // docs/priority/example/limited-queue.yaml: queue test, gpu quota 1 and limit 1.
  const auto sc = scenarios::parse_scenario(std::string("name: k\n") + kCluster +
                                                "policy: {name: kai, manifests: [limited-queue.yaml]}\n"
                                                "workload: {trace: jobs.csv}\n",
                                            kKai + "inline.yaml");
  EXPECT_EQ(param(sc.policy.params, "queues.test.resources.gpu.limit"), "1");
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 100 * sim::kSecond);
}

// ---- Kubernetes ResourceQuota and PriorityClass ----

TEST(KubernetesManifests, ResourceQuotaTakesTheTightestOfRequestsAndLimits) {
  const auto m = read("kubernetes", {kK8s + "quota-mem-cpu.yaml"});
  EXPECT_EQ(param(m.params, "quota.default.cpu"), "1000m");
  EXPECT_EQ(param(m.params, "quota.default.memory"), "1024Mi");
  EXPECT_EQ(param(m.params, "quota.default.gpu"), "(absent)");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], kK8s +
                               "quota-mem-cpu.yaml:12: ResourceQuota mem-cpu-demo: limits.cpu is checked against "
                               "the pods' requests (headroom keeps one figure per pod, the request, or the limit "
                               "where a container gives no request)");
  EXPECT_TRUE(problems("kubernetes", m.params).empty());
  const auto cfg = policies::k8s::parse_config(m.params);
  EXPECT_EQ(cfg.quota.at("default").cpu_milli, 1000);
  EXPECT_EQ(cfg.quota.at("default").memory_mib, 1024);
  EXPECT_EQ(cfg.quota.at("default").gpu, -1);
}

TEST(KubernetesManifests, ScopedQuotasAreLeftOutWithOneWarning) {
  const auto m = read("kubernetes", {kK8s + "quota.yaml"});
  EXPECT_TRUE(m.params.empty());
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], kK8s +
                               "quota.yaml:11: ResourceQuota pods-high: scopes and scopeSelector are not modelled; "
                               "a scoped quota (which counts only the pods its scopes select) is left out");
}

TEST(KubernetesManifests, GpuCpuAndPodQuotasAdmitPodsAsTheApiServerDoes) {
  const auto sc = scenarios::parse_scenario(
      std::string("name: q\n") + kCluster +
          "policy: {name: kubernetes, manifests: [compute-resources.yaml, object-counts.yaml, priorityclasses.yaml]}\n"
          "workload: {trace: jobs.csv}\n",
      kK8s + "inline.yaml");
  EXPECT_EQ(param(sc.policy.params, "quota.default.gpu"), "4");
  EXPECT_EQ(param(sc.policy.params, "quota.default.cpu"), "1000m");
  EXPECT_EQ(param(sc.policy.params, "quota.default.memory"), "1024Mi");
  EXPECT_EQ(param(sc.policy.params, "quota.default.pods"), "4");
  ASSERT_EQ(sc.warnings.size(), 2u);  // limits.cpu, and the PriorityClasses (pods carry their priority)
  EXPECT_NE(sc.warnings[1].find("priorityclasses.yaml:1: PriorityClass high-priority (value 1000000): checked, not "
                                "applied"),
            std::string::npos)
      << sc.warnings[1];
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].start, 0);
  // The second 1-cpu pod is refused (1 cpu of quota in use) until the first ends; its controller
  // retries every 10 s.
  EXPECT_EQ(r.jobs[1].start, 100 * sim::kSecond);
  EXPECT_EQ(state(r.jobs[2]), models::JobState::Unfinished);  // 8 GPUs > the namespace's 4
}

TEST(KubernetesManifests, QuotaParamsCheckTheirValues) {
  policies::PolicyParams p;
  p["quota.ns.memory"] = policies::ParamValue{"lots", "s.yaml", 3, 5};
  const auto errs = problems("kubernetes", p);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(std::string(errs[0].what()),
            "s.yaml:3:5: policy.quota.ns.memory: expected a quantity such as 256Gi, got "
            "\"lots\"");
}

// ---- Pod lists as they are ----

TEST(PodLists, JobsAndPyTorchJobsArePodSetsAndCpuOnlyPodsStay) {
  const auto w = traces::import_trace(kK8s + "pods-jobs.json");
  EXPECT_EQ(w.meta.rows, 11);
  EXPECT_EQ(w.meta.skipped, 0);
  ASSERT_EQ(w.jobs.size(), 8u);  // 3 + 2 pods as two pod sets, 5 Indexed Job pods, 1 lone pod
  int sets = 0, cpu_only = 0;
  for (const auto& j : w.jobs) {
    if (j.gpus == 0) {
      ++cpu_only;
      continue;
    }
    ++sets;
    if (j.gpus == 3) {  // the PyTorchJob: Master + 2 Workers of 1 GPU, from the first start to the last end
      EXPECT_EQ(j.nodes, 3);
      EXPECT_EQ(j.gpus_per_node, 1);
      EXPECT_EQ(j.kind, models::JobKind::Train);
      EXPECT_EQ(w.queues.name(j.queue), "default-queue");  // kai.scheduler/queue label
      EXPECT_EQ(j.submit, 3600 * sim::kSecond);
      EXPECT_EQ(j.trace_start, 3605 * sim::kSecond);
      EXPECT_EQ(j.runtime, 3597 * sim::kSecond);
      EXPECT_EQ(j.trace_status, models::TraceStatus::Completed);
    } else {  // the Job of parallelism 2, still running at the file's latest time (11:00:02)
      EXPECT_EQ(j.gpus, 2);
      EXPECT_EQ(j.nodes, 2);
      EXPECT_EQ(j.trace_end, -1);
      EXPECT_EQ(j.runtime, 1800 * sim::kSecond);
    }
  }
  EXPECT_EQ(sets, 2);
  EXPECT_EQ(cpu_only, 6);             // the Indexed Job's pods ran in two waves: each stays a pod of its own
  EXPECT_EQ(w.jobs.front().cpus, 2);  // web-0, the earliest
  EXPECT_EQ(w.jobs.front().memory_mib, 4096);
}

TEST(PodLists, EveryPolicyRunsCpuOnlyPodsAndPodSets) {
  // As `headroom compare --policies kubernetes,volcano,slurm,kai,kueue` runs it.
  const auto base = scenarios::parse_scenario(
      "name: p\ncluster: {pools: [{name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100, cpus_per_node: 64}]}\n"
      "policy: fifo\nworkload: {trace: pods-jobs.json}\n",
      kK8s + "inline.yaml");
  for (const char* policy : {"kubernetes", "volcano", "slurm", "kai", "kueue"}) {
    const auto sc = planner::scenario_for_policy(base, policy);
    const auto r = app::run_scenario(sc).result;
    ASSERT_EQ(r.jobs.size(), 8u) << policy;
    for (const auto& j : r.jobs) {
      EXPECT_EQ(state(j), models::JobState::Completed) << policy << " job " << j.trace_id;
      // An empty cluster: every pod set and CPU-only pod starts at once (within one scheduling
      // period) and runs its recorded time.
      EXPECT_LE(j.start - j.submit, 1 * sim::kSecond) << policy << " job " << j.trace_id;
      EXPECT_EQ(j.end - j.start, j.runtime) << policy << " job " << j.trace_id;
    }
  }
}

TEST(PodLists, RealRunAiPodsAsKubectlPrintsThemInYaml) {
  // Two pods of a Run:ai cluster as `kubectl get pod -o yaml` printed them (run-ai/fake-gpu-operator,
  // tests/data/imports/runai/README.md): a reservation pod holding one whole GPU, and a training
  // pod sharing half of it through the gpu-fraction annotation. Both still running.
  const std::string file = kData + "runai/pods.yaml";
  const auto w = traces::import_trace(file);
  EXPECT_EQ(w.meta.format, "kubernetes");
  EXPECT_EQ(w.meta.rows, 2);
  EXPECT_EQ(w.meta.skipped, 0);
  EXPECT_EQ(w.meta.unix_start, 1711875802);  // 2024-03-31T09:03:22Z, frac-1-0-0's creation
  ASSERT_EQ(w.jobs.size(), 2u);
  const models::Job& frac = w.jobs[0];  // runai-pa/frac-1-0-0
  EXPECT_EQ(w.tenants.name(frac.tenant), "runai-pa");
  EXPECT_EQ(frac.gpus, 1);
  EXPECT_EQ(frac.gpu_milli, 500);
  EXPECT_EQ(frac.nodes, 1);
  EXPECT_EQ(frac.cpus, 1);         // 100m, rounded up
  EXPECT_EQ(frac.memory_mib, 96);  // 100M = 10^8 bytes
  EXPECT_EQ(frac.submit, 0);
  EXPECT_EQ(frac.trace_start, 5 * sim::kSecond);  // startTime 09:03:27
  EXPECT_EQ(frac.trace_end, -1);
  EXPECT_EQ(frac.runtime, 0);          // started at the latest time the file names
  const models::Job& res = w.jobs[1];  // runai-reservation/runai-reservation-gpu-i-0b498db53280b86a6-fzdhl
  EXPECT_EQ(w.tenants.name(res.tenant), "runai-reservation");
  EXPECT_EQ(res.gpus, 1);
  EXPECT_EQ(res.gpu_milli, 0);
  EXPECT_EQ(res.cpus, 0);
  EXPECT_EQ(res.submit, 3 * sim::kSecond);
  EXPECT_EQ(res.trace_start, 3 * sim::kSecond);
  EXPECT_EQ(res.runtime, 2 * sim::kSecond);  // running until 09:03:27
  EXPECT_EQ(res.trace_status, models::TraceStatus::Unknown);
}

TEST(PodLists, YamlAfterCommentLinesIsDetected) {
  // The Kueue site's pod list of docs/importing.md starts with two `#` lines.
  const auto w = traces::import_trace(kData + "kueue/pods.yaml");
  EXPECT_EQ(w.meta.format, "kubernetes");
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(w.queues.name(w.jobs[2].queue), "team-queue");  // kueue.x-k8s.io/queue-name
  EXPECT_EQ(w.tenants.name(w.jobs[2].tenant), "vision");
  EXPECT_EQ(w.jobs[2].gpus, 8);
  EXPECT_EQ(w.jobs[2].cpus, 32);
  EXPECT_EQ(w.jobs[2].memory_mib, 256 * 1024);
  EXPECT_EQ(w.jobs[2].submit, 600 * sim::kSecond);
  EXPECT_EQ(w.jobs[2].trace_start, 3605 * sim::kSecond);
  EXPECT_EQ(w.jobs[2].runtime, 1800 * sim::kSecond);
  EXPECT_EQ(w.jobs[2].trace_status, models::TraceStatus::Completed);
  testing::TempDir dir;
  const std::string notes = dir.write("notes.txt", "# a note\nnothing else\n");
  try {
    traces::import_trace(notes);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(notes + ":1: could not detect the trace format: the file starts with '#'"),
              std::string::npos)
        << e.what();
  }
}

TEST(PodLists, YamlErrorsNameFileLineColumn) {
  testing::TempDir dir;
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  creationTimestamp: \"2024-01-01T00:00:00Z\"\n"
      "  annotations:\n    gpu-fraction: \"1.5\"\nspec:\n  containers: []\n";
  const std::string bad = dir.write("frac.yaml", pod);
  try {
    traces::import_trace(bad);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), bad +
                                         ":7:19: metadata.annotations.gpu-fraction: expected a fraction of one GPU "
                                         "above 0 and at most 1, got \"1.5\"");
  }
  const std::string cpu =
      dir.write("cpu.yaml",
                "kind: List\nitems:\n- kind: Pod\n  metadata: {name: a, creationTimestamp: \"2024-01-01T00:00:00Z\"}\n"
                "  spec:\n    containers:\n    - resources: {requests: {cpu: 2x}}\n");
  try {
    traces::import_trace(cpu);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), cpu +
                                         ":7:35: items[0].spec.containers[0].resources.requests[\"cpu\"]: expected a "
                                         "non-negative quantity such as \"2\", \"500m\" or \"64Gi\", got \"2x\"");
  }
  const std::string broken = dir.write("broken.yaml", "apiVersion: v1\nkind: List\nitems: [\n");
  try {
    traces::import_trace(broken);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(broken + ":4:1: malformed YAML: ", 0), 0u) << e.what();
  }
  // A stray token after a value, on which yaml-cpp 0.7's LoadAll never returns (found by
  // fuzz_kubernetes): an error at the token, at once.
  const std::string stray = dir.write("stray.json", "\"List\", \"it9}}9]}\n");
  try {
    traces::ImportOptions as_pods;
    as_pods.format = traces::Format::Kubernetes;
    traces::import_trace(stray, as_pods);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              stray + ":1:7: malformed YAML: unexpected text where a value or a new key should be");
  }
}

// ---- Shared: errors and warnings ----

TEST(Manifests, MalformedYamlAndBadFieldsNameFileLineColumn) {
  testing::TempDir dir;
  const std::string bad = dir.write("bad.yaml", "apiVersion: v1\nkind: ResourceQuota\nspec: {hard: [\n");
  EXPECT_EQ(error_of("kubernetes", {bad}).rfind(bad + ":4:1: not YAML: ", 0), 0u) << error_of("kubernetes", {bad});
  const std::string stray = dir.write("stray.yaml", "kind: ResourceQuota\n---\n\"List\", \"x\"\n");
  EXPECT_EQ(error_of("kubernetes", {stray}),
            stray + ":3:7: not YAML: unexpected text where a value or a new key should be");
  const std::string pc =
      dir.write("pc.yaml",
                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: 10\n"
                "preemptionPolicy: Sometimes\n");
  EXPECT_EQ(error_of("volcano", {pc}),
            pc + ":5:19: PriorityClass x: preemptionPolicy must be PreemptLowerPriority or Never, got \"Sometimes\"");
  const std::string q = dir.write("q.yaml",
                                  "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
                                  "spec:\n  capability: {nvidia.com/gpu: 1.5}\n");
  EXPECT_EQ(error_of("volcano", {q}), q + ":5:32: Queue a: capability: nvidia.com/gpu must be a whole number");
}

TEST(Manifests, UnknownKindsAndFieldsWarnOnce) {
  testing::TempDir dir;
  const std::string f = dir.write("m.yaml",
                                  "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\n---\n"
                                  "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l2}\n---\n"
                                  "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
                                  "spec: {weight: 2, capability: {pods: 10, cpu: 1.5}, extendClusters: [{name: c}]}\n"
                                  "status: {state: Closed, allocated: {cpu: 1}}\n");
  const auto m = read("volcano", {f});
  EXPECT_EQ(param(m.params, "queues.a.weight"), "2");
  EXPECT_EQ(param(m.params, "queues.a.capability.cpu"), "1500m");
  EXPECT_EQ(param(m.params, "queues.a.state"), "Closed");
  ASSERT_EQ(m.warnings.size(), 3u);
  EXPECT_EQ(m.warnings[0], f + ":1: kind LimitRange (v1) is not a Volcano Queue; ignored");
  EXPECT_EQ(m.warnings[1], f + ":12: resource pods is not modelled (nvidia.com/gpu, cpu and memory are); left out of "
                               "queue a's capability");
  EXPECT_EQ(m.warnings[2], f + ":12: Queue extendClusters is not modelled; ignored");
  EXPECT_NE(policies::find_system("kai")->read_manifests, nullptr);
  EXPECT_EQ(policies::find_system("slurm")->read_manifests, nullptr);
}

}  // namespace
}  // namespace headroom
