// Issue #31, bounds: YAML alias bombs ("billion laughs"), nesting and document counts in every YAML
// reader (scenario, manifests, pod lists), deep JSON pod lists, and SIGINT / SIGTERM during an
// import. Each input is tiny on disk (or generated here); each must be refused at once with the
// file, line and column of the alias, node or document, never walked for hours.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"
#include "tests/temp_dir.hpp"
#include "traces/import.hpp"

using namespace headroom;

namespace {

// The first error `f` throws, as the CLI prints it (without "error: "); "" when none.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sim::InputErrors& e) {
    return e.errors().empty() ? "(no error)" : e.errors().front().what();
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "";
}

// Anchors a0..a9, each a list of nine aliases of the one before: *a9 stands for 9^9 (387 million)
// scalars. One line per anchor, each indented by `indent`.
std::string bomb(const std::string& indent) {
  std::string s = indent + "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    s += indent + "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) s += (k > 0 ? ", " : "") + prev;
    s += "]\n";
  }
  return s;
}

// The message at an alias that passes the bound.
std::string aliases(const std::string& alias) {
  return "the document expands to more than 1,000,000 nodes through aliases (anchors reused, here " + alias +
         "); refusing it";
}
const std::string kDeep = "lists and maps nested more than 256 levels deep; refusing it";

// A pod that the Kubernetes reader accepts, for the documents around the hostile one.
const std::string kPod =
    "- apiVersion: v1\n"
    "  kind: Pod\n"
    "  metadata: {name: p1, namespace: default, creationTimestamp: \"2024-01-01T00:00:00Z\"}\n"
    "  spec:\n"
    "    containers:\n"
    "    - {name: c, resources: {requests: {nvidia.com/gpu: 1}}}\n"
    "  status: {phase: Succeeded, startTime: \"2024-01-01T00:00:00Z\"}\n";

traces::ImportOptions kubernetes() {
  traces::ImportOptions o;
  o.format = traces::Format::Kubernetes;
  return o;
}

std::string import_error(const std::string& path) {
  return error_of([&] { (void)traces::import_trace(path, kubernetes()); });
}

// A scenario naming one Kueue manifest file, both in `dir`.
std::string kueue_scenario(const headroom::testing::TempDir& dir, const std::string& manifest) {
  dir.write("site.yaml", manifest);
  dir.write("jobs.csv", "job_id,submit_time,gpus,run_time\n1,0,1,60\n");
  return dir.write("s.yaml",
                   "name: site\n"
                   "cluster: {pools: [{name: p, nodes: 2, gpus_per_node: 8, gpu_type: A100}]}\n"
                   "policy: {name: kueue, manifests: [site.yaml]}\n"
                   "workload: {trace: jobs.csv}\n");
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(HostileYaml, ScenarioAliasBombIsRefusedAtTheAlias) {
  const std::string text = "name: x\npolicy:\n  name: fifo\n  x:\n" + bomb("    ") + "tenants: *a9\n";
  EXPECT_EQ(error_of([&] { (void)scenarios::parse_scenario(text, "s.yaml"); }), "s.yaml:11:14: " + aliases("*a5"));
}

TEST(HostileYaml, ScenarioAnchorInsideItselfIsRefused) {
  // yaml-cpp builds a cycle here; a walk of it would never end.
  EXPECT_EQ(
      error_of([] { (void)scenarios::parse_scenario("name: x\ntenants: &t [{name: a}, *t]\n", "s.yaml"); }),
      "s.yaml:2:25: an alias (*t) inside the node its anchor names (the document would be infinite); refusing it");
}

TEST(HostileYaml, ScenarioNestedTooDeepIsRefused) {
  const std::string text = "name: x\ntenants: " + std::string(300, '[') + std::string(300, ']') + "\n";
  EXPECT_EQ(error_of([&] { (void)scenarios::parse_scenario(text, "s.yaml"); }), "s.yaml:2:265: " + kDeep);
}

TEST(HostileYaml, ScenarioNestedTooDeepThroughAliasesIsRefused) {
  // Three anchors of 100 levels each, each holding the one before: 300 levels once expanded.
  const std::string text =
      "name: x\n"
      "a: &a " +
      std::string(100, '[') + "x" + std::string(100, ']') + "\n" + "b: &b " + std::string(100, '[') + "*a" +
      std::string(100, ']') + "\n" + "c: &c " + std::string(100, '[') + "*b" + std::string(100, ']') + "\n";
  EXPECT_EQ(error_of([&] { (void)scenarios::parse_scenario(text, "s.yaml"); }),
            "s.yaml:4:107: lists and maps nested more than 256 levels deep through aliases (anchors reused, here *b); "
            "refusing it");
}

TEST(HostileYaml, ScenarioDeepPolicyParamsWithinTheBoundAreReadQuickly) {
  // 250 nested maps under the policy block (below the bound): whatever the verdict, no
  // exponential walk of the nesting.
  std::string deep;
  for (int i = 0; i < 250; ++i) deep += "{k: ";
  deep += "1" + std::string(250, '}');
  const std::string text =
      "name: x\ncluster: {pools: [{name: p, nodes: 1, gpus_per_node: 8, gpu_type: A100}]}\n"
      "policy: {name: fifo, x: " +
      deep + "}\nworkload: {trace: t.csv}\n";
  EXPECT_LT(seconds_of([&] { (void)error_of([&] { (void)scenarios::parse_scenario(text, "s.yaml"); }); }), 2.0);
}

TEST(HostileYaml, ScenarioWithOrdinaryAnchorsIsStillRead) {
  const std::string text =
      "name: x\n"
      "cluster: {pools: [&p {name: a, nodes: 2, gpus_per_node: 8, gpu_type: A100}]}\n"
      "policy: {name: fifo}\n"
      "workload: {trace: t.csv}\n"
      "tenants: [&t {name: a, weight: 1}]\n";
  EXPECT_EQ(error_of([&] { (void)scenarios::parse_scenario(text, "s.yaml"); }).find("aliases"), std::string::npos);
}

TEST(HostileYaml, PodListAliasBombInAnnotationsIsRefused) {
  headroom::testing::TempDir dir;
  std::string pods = "apiVersion: v1\nkind: List\nitems:\n" + kPod;
  pods.insert(pods.find("  spec:"), "  annotations:\n" + bomb("    ") + "    all: *a9\n");
  const std::string path = dir.write("pods.yaml", pods);
  EXPECT_EQ(import_error(path), path + ":14:14: " + aliases("*a5"));
}

TEST(HostileYaml, PodListOfAliasedItemsIsRefused) {
  // kind: List whose items are one pod reused through nine levels of anchors.
  headroom::testing::TempDir dir;
  std::string pods = "apiVersion: v1\nkind: List\nx:\n  p0: &a0\n";
  for (std::size_t at = 0, next; at < kPod.size(); at = next + 1) {
    next = kPod.find('\n', at);
    pods += "    " + kPod.substr(at, next - at) + "\n";
  }
  for (int i = 1; i <= 9; ++i) {
    pods += "  p" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) pods += (k > 0 ? ", " : "") + std::string("*a") + std::to_string(i - 1);
    pods += "]\n";
  }
  pods += "items: *a9\n";
  const std::string path = dir.write("pods.yaml", pods);
  EXPECT_EQ(import_error(path), path + ":16:27: " + aliases("*a4"));
}

TEST(HostileYaml, PodListAnchorInsideItselfIsRefused) {
  headroom::testing::TempDir dir;
  const std::string path = dir.write("pods.yaml", "apiVersion: v1\nkind: List\nitems: &i [*i]\n");
  EXPECT_EQ(
      import_error(path),
      path + ":3:12: an alias (*i) inside the node its anchor names (the document would be infinite); refusing it");
}

TEST(HostileYaml, PodListOfTooManyDocumentsIsRefused) {
  headroom::testing::TempDir dir;
  std::string text;
  for (int i = 0; i <= 100'000; ++i) text += "--- {}\n";
  const std::string path = dir.write("pods.yaml", text);
  EXPECT_EQ(import_error(path), path + ":100001:1: more than 100,000 YAML documents in one file; refusing it");
}

TEST(HostileYaml, PodListNestedTooDeepIsRefused) {
  headroom::testing::TempDir dir;
  std::string pods = "apiVersion: v1\nkind: List\nitems:\n" + kPod;
  pods.insert(pods.find("  spec:"), "  annotations: {x: " + std::string(300, '[') + std::string(300, ']') + "}\n");
  const std::string path = dir.write("pods.yaml", pods);
  EXPECT_EQ(import_error(path), path + ":7:272: " + kDeep);
}

TEST(HostileYaml, ClusterQueueAliasBombIsRefused) {
  headroom::testing::TempDir dir;
  const std::string s = kueue_scenario(dir,
                                       "apiVersion: kueue.x-k8s.io/v1beta1\n"
                                       "kind: ClusterQueue\n"
                                       "metadata: {name: cq}\n"
                                       "spec:\n"
                                       "  x:\n" +
                                           bomb("    ") + "  namespaceSelector: {matchLabels: {a: *a9}}\n");
  EXPECT_EQ(error_of([&] { (void)scenarios::load_scenario(s); }), dir.path("site.yaml") + ":12:14: " + aliases("*a5"));
}

TEST(HostileYaml, ManifestAnchorInsideItselfIsRefused) {
  headroom::testing::TempDir dir;
  const std::string s = kueue_scenario(dir,
                                       "apiVersion: kueue.x-k8s.io/v1beta1\n"
                                       "kind: ClusterQueue\n"
                                       "metadata: {name: cq}\n"
                                       "spec: &s {cohort: *s}\n");
  EXPECT_EQ(error_of([&] { (void)scenarios::load_scenario(s); }),
            dir.path("site.yaml") +
                ":4:19: an alias (*s) inside the node its anchor names (the document would be infinite); refusing it");
}

TEST(HostileJson, PodListOfAMebibyteOfOpenBracketsIsRefusedQuickly) {
  headroom::testing::TempDir dir;
  const std::string path = dir.write("pods.json", std::string(std::size_t{1} << 20, '['));
  std::string error;
  EXPECT_LT(seconds_of([&] { error = import_error(path); }), 2.0);
  EXPECT_EQ(error, path + ":1:257: lists and objects nested more than 256 levels deep; refusing it");
}

TEST(HostileJson, PodListOfDeepObjectsIsRefusedAtTheLevelPastTheBound) {
  headroom::testing::TempDir dir;
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "{\"a\": ";
  const std::string path = dir.write(
      "pods.json", "{\"kind\": \"List\", \"items\": [{\"metadata\": " + deep + "1" + std::string(300, '}') + "}]}\n");
  // The 257th level: the 254th {"a": (after the root, the list and its item).
  EXPECT_EQ(import_error(path), path + ":1:1559: lists and objects nested more than 256 levels deep; refusing it");
}

TEST(HostileJson, PodListOfAMebibyteOfEmptyItemsIsReadInLinearTime) {
  // 350,000 "{}" pods: nlohmann's callback parser took about a minute (a scan of the array at the
  // end of every object); the first pod's error now comes at once.
  headroom::testing::TempDir dir;
  std::string items;
  for (int i = 0; i < 349'000; ++i) items += i > 0 ? ",{}" : "{}";
  const std::string path = dir.write("pods.json", "{\"items\": [" + items + "]}\n");
  std::string error;
  EXPECT_LT(seconds_of([&] { error = import_error(path); }), 2.0);
  EXPECT_EQ(error, path + ":1:12: items[0].spec: missing: a pod has a spec");
}

TEST(HostileInterrupt, AStopRequestEndsATraceImport) {
  // What SIGINT / SIGTERM do during an import (apps/main.cpp sets the flag): the reader stops at
  // its next chunk with sim::Interrupted, never with a half-read workload.
  headroom::testing::TempDir dir;
  const std::string path = dir.write("pods.json", "{\"kind\": \"List\", \"items\": []}\n");
  sim::stop_requested().store(true);
  bool interrupted = false;
  try {
    (void)traces::import_trace(path, kubernetes());
  } catch (const sim::Interrupted&) {
    interrupted = true;
  }
  sim::stop_requested().store(false);
  EXPECT_TRUE(interrupted);
}
