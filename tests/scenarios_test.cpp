#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "traces/import.hpp"

namespace headroom::scenarios {
namespace {

namespace fs = std::filesystem;

const std::string kDataDir = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios";
// Inline scenarios are named as if they lived next to the test data, so `trace: tiny.csv` resolves.
const std::string kInline = kDataDir + "/inline.yaml";

// A valid scenario that the error tests break one line at a time.
const std::string kBase = R"(name: base
cluster:
  pools:
    - name: a100
      nodes: 4
      gpus_per_node: 8
      gpu_type: A100
policy: fifo
workload:
  trace: tiny.csv
)";

std::vector<sim::InputError> errors_of(const std::string& text, const std::string& file = kInline) {
  try {
    parse_scenario(text, file);
  } catch (const sim::InputErrors& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected InputErrors for:\n" << text;
  return {};
}

struct Expected {
  int line;
  int column;
  std::string where;
  std::string message;
};

void expect_error(const sim::InputError& e, const Expected& x, const std::string& file = kInline) {
  EXPECT_EQ(e.file(), file);
  EXPECT_EQ(e.line(), x.line) << e.what();
  EXPECT_EQ(e.column(), x.column) << e.what();
  EXPECT_EQ(e.where(), x.where) << e.what();
  EXPECT_EQ(e.message(), x.message) << e.what();
}

// Exactly one error, matching `x`.
void expect_only(const std::string& text, const Expected& x) {
  const auto errors = errors_of(text);
  ASSERT_EQ(errors.size(), 1u);
  expect_error(errors[0], x);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("headroom-scenarios-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// ---------------------------------------------------------------------------------------------
// Valid scenarios

TEST(Scenario, FullExampleParsesToExactValues) {
  const std::string path = kDataDir + "/valid.yaml";
  const Scenario s = load_scenario(path);
  EXPECT_EQ(s.file, path);
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(s.text, std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  EXPECT_EQ(s.name, "full-example");
  EXPECT_EQ(s.seed, 42u);

  ASSERT_EQ(s.cluster.pools.size(), 2u);
  const auto& a = s.cluster.pools[0];
  EXPECT_EQ(a.name, "a100");
  EXPECT_EQ(a.nodes, 64);
  EXPECT_EQ(a.gpus_per_node, 8);
  EXPECT_EQ(a.gpu_type, "A100");
  EXPECT_EQ(a.cpus_per_node, 128);
  EXPECT_EQ(a.memory_gib, 1024);
  const auto& g = s.cluster.pools[1];
  EXPECT_EQ(g.name, "g2");
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.gpus_per_node, 0);
  EXPECT_EQ(g.gpu_type, "G2");  // not in the catalogue: accepted as the trace's own model name
  EXPECT_EQ(g.cpus_per_node, 0);
  EXPECT_EQ(g.memory_gib, 0);

  ASSERT_EQ(s.tenants.size(), 2u);
  EXPECT_EQ(s.tenants[0].name, "research");
  EXPECT_DOUBLE_EQ(s.tenants[0].weight, 2.5);
  EXPECT_EQ(s.tenants[1].name, "prod");
  EXPECT_DOUBLE_EQ(s.tenants[1].weight, 1.0);

  EXPECT_EQ(s.policy.name, "fifo");
  ASSERT_EQ(s.policy.params.size(), 1u);
  const auto& p = s.policy.params.at("placement");
  EXPECT_EQ(p.text, "consolidate");
  EXPECT_EQ(p.file, path);
  EXPECT_EQ(p.line, 22);
  EXPECT_EQ(p.column, 14);

  EXPECT_EQ(s.workload.trace, kDataDir + "/tiny.csv");
  EXPECT_EQ(s.workload.format, "csv");
  EXPECT_EQ(s.workload.window_start, 0);
  EXPECT_EQ(s.workload.window_end, 7 * 24 * 3600 * 1000LL);
  EXPECT_DOUBLE_EQ(s.workload.arrival_scale, 1.5);
  EXPECT_EQ(s.workload.units_per_gpu, 4);
  EXPECT_EQ(s.horizon, 5400 * 1000LL);
  EXPECT_EQ(s.output.sample_interval, 90 * 1000);
  EXPECT_FALSE(s.output.events);
}

TEST(Scenario, DefaultsOfAMinimalScenario) {
  const Scenario s = load_scenario(kDataDir + "/minimal.yaml");
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.seed, 1u);
  ASSERT_EQ(s.cluster.pools.size(), 1u);
  EXPECT_EQ(s.cluster.pools[0].gpu_type, "H100");
  EXPECT_TRUE(s.tenants.empty());
  EXPECT_EQ(s.policy.name, "sjf");
  EXPECT_TRUE(s.policy.params.empty());
  EXPECT_EQ(s.workload.trace, kDataDir + "/tiny.csv");
  EXPECT_EQ(s.workload.format, "auto");
  EXPECT_EQ(s.workload.window_start, 0);
  EXPECT_EQ(s.workload.window_end, sim::kNever);
  EXPECT_DOUBLE_EQ(s.workload.arrival_scale, 1.0);
  EXPECT_EQ(s.workload.units_per_gpu, 1);
  EXPECT_EQ(s.horizon, sim::kNever);
  EXPECT_EQ(s.output.sample_interval, 0);
  EXPECT_TRUE(s.output.events);
}

TEST(Scenario, ShippedExamplesLoad) {
  for (const char* name : {"ricc-14d-fifo.yaml", "ricc-14d-sjf.yaml"}) {
    const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/" + name;
    if (!fs::exists(path)) continue;
    const Scenario s = load_scenario(path);
    EXPECT_EQ(s.workload.trace,
              std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz");
    EXPECT_EQ(s.output.sample_interval, 10 * 60 * 1000);
  }
}

TEST(Scenario, PolicyAsScalarOrMap) {
  const Scenario scalar = parse_scenario(kBase, kInline);
  EXPECT_EQ(scalar.policy.name, "fifo");
  EXPECT_TRUE(scalar.policy.params.empty());

  const Scenario map =
      parse_scenario(replace(kBase, "policy: fifo\n", "policy:\n  placement: consolidate\n  name: sjf\n"), kInline);
  EXPECT_EQ(map.policy.name, "sjf");
  ASSERT_EQ(map.policy.params.count("placement"), 1u);
  const auto& p = map.policy.params.at("placement");
  EXPECT_EQ(p.text, "consolidate");
  EXPECT_EQ(p.file, kInline);
  EXPECT_EQ(p.line, 9);
  EXPECT_EQ(p.column, 14);
}

TEST(Scenario, NestedPolicyParamsAreFlattenedWithLocations) {
  // Unknown to fifo, so the registry reports each flattened key at its own location.
  const auto errors = errors_of(
      replace(kBase, "policy: fifo\n", "policy:\n  name: fifo\n  backfill:\n    window: 2h\n    depth: [1, 2]\n"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].where(), "policy.backfill.window");
  EXPECT_EQ(errors[0].line(), 11);
  EXPECT_EQ(errors[0].column(), 13);
  EXPECT_EQ(errors[1].where(), "policy.backfill.depth");
  EXPECT_EQ(errors[1].line(), 12);
  EXPECT_EQ(errors[1].column(), 12);
}

TEST(Scenario, DurationsAcceptIntegersAndUnits) {
  for (const auto& [text, ms] : std::vector<std::pair<std::string, sim::Tick>>{{"90", 90'000},
                                                                               {"90s", 90'000},
                                                                               {"15m", 900'000},
                                                                               {"2h", 7'200'000},
                                                                               {"7d", 604'800'000},
                                                                               {"1h30m", 5'400'000},
                                                                               {"500ms", 500}}) {
    const Scenario s = parse_scenario(kBase + "horizon: " + text + "\n", kInline);
    EXPECT_EQ(s.horizon, ms) << text;
  }
}

TEST(Scenario, GpuTypeAnyNonEmptyName) {
  for (const char* type : {"A100", "a100", "V100M32", "G2", "A10O"}) {
    const Scenario s = parse_scenario(replace(kBase, "gpu_type: A100", std::string("gpu_type: ") + type), kInline);
    EXPECT_EQ(s.cluster.pools[0].gpu_type, type);
  }
  expect_only(replace(kBase, "gpu_type: A100", "gpu_type: \"\""),
              {7, 17, "cluster.pools[0].gpu_type", "expected a non-empty string, got \"\""});
}

TEST(Scenario, AbsoluteTracePathIsKept) {
  const std::string trace = kDataDir + "/tiny.csv";
  const Scenario s = parse_scenario(replace(kBase, "trace: tiny.csv", "trace: " + trace), "elsewhere/x.yaml");
  EXPECT_EQ(s.workload.trace, trace);
}

// ---------------------------------------------------------------------------------------------
// Errors, one kind at a time

TEST(ScenarioErrors, YamlSyntaxError) {
  const auto errors = errors_of("name: x\ncluster: {pools: [\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 3);
  EXPECT_EQ(errors[0].column(), 1);
  EXPECT_EQ(errors[0].where(), "");
  EXPECT_EQ(errors[0].message(), "end of sequence flow not found");

  expect_only("name: x\n  bad: indent\n", {2, 6, "", "illegal map value"});
}

TEST(ScenarioErrors, StringWhereIntegerExpected) {
  expect_only(replace(kBase, "nodes: 4", "nodes: abc"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1, got \"abc\""});
  expect_only(replace(kBase, "nodes: 4", "nodes: 2.5"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1, got \"2.5\""});
}

TEST(ScenarioErrors, NegativeAndOutOfRangeNumbers) {
  expect_only(replace(kBase, "nodes: 4", "nodes: -3"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1, got \"-3\""});
  expect_only(replace(kBase, "nodes: 4", "nodes: 0"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1, got \"0\""});
  expect_only(replace(kBase, "gpus_per_node: 8", "gpus_per_node: -1"),
              {6, 22, "cluster.pools[0].gpus_per_node", "expected an integer >= 0, got \"-1\""});
  expect_only(replace(kBase, "nodes: 4", "nodes: 99999999999"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1 and <= 1000000, got \"99999999999\""});
  expect_only(kBase + "seed: -1\n", {11, 7, "seed", "expected a non-negative integer, got \"-1\""});
  expect_only(replace(kBase, "trace: tiny.csv", "trace: tiny.csv\n  arrival_scale: 0"),
              {11, 18, "workload.arrival_scale", "expected a number > 0 and < 1000, got \"0\""});
  expect_only(kBase + "tenants:\n  - {name: t, weight: -2}\n",
              {12, 23, "tenants[0].weight", "expected a number > 0 and < 1e+06, got \"-2\""});
}

// Pool sizes have stated limits (README, "Scenario format"), so a typo never asks for gigabytes
// nor trips an assertion (issue #20).
TEST(ScenarioErrors, PoolSizeLimits) {
  expect_only(replace(kBase, "gpus_per_node: 8", "gpus_per_node: 2147483647"),
              {6, 22, "cluster.pools[0].gpus_per_node", "expected an integer >= 0 and <= 1024, got \"2147483647\""});
  expect_only(replace(kBase, "nodes: 4", "nodes: 300000000"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1 and <= 1000000, got \"300000000\""});
  EXPECT_EQ(parse_scenario(replace(kBase, "nodes: 4", "nodes: 1000000"), kInline).cluster.total_nodes(), 1000000);
}

// The free-GPU index holds a set per pool and free count: 20 nodes of 1,024 GPUs time-sliced
// 1,024 ways in 10 pools took 1.4 GB, and as many pools again would take gigabytes more. Bounded
// at 2,097,152 entries (a pool's units + 1, summed over pools), counted with the units the policy
// advertises, so the same pool passes as plain GPUs and is refused time-sliced.
TEST(ScenarioErrors, FreeIndexBound) {
  const std::string two = replace(replace(kBase, "gpus_per_node: 8", "gpus_per_node: 1024"), "policy: fifo\n",
                                  "    - {name: b, nodes: 1, gpus_per_node: 1024, gpu_type: A100}\n"
                                  "policy:\n  name: kubernetes\n"
                                  "  devicePlugin: {sharing: {timeSlicing: {replicas: 1024}}}\n");
  expect_only(two, {2, 1, "cluster",
                    "2 pools of nodes advertising up to 1,048,576 GPU units each (GPUs per node x time-slicing "
                    "replicas) need a free-GPU index of 2,097,154 entries (a pool's units + 1, summed), more than "
                    "the 2,097,152 a run holds; join pools of like nodes, or give fewer replicas"});
  EXPECT_NO_THROW(parse_scenario(replace(two, "replicas: 1024", "replicas: 1023"), kInline));
  // Split: each system's part is within the bound, the engine's index of both is not.
  const std::string split =
      replace(replace(two, "policy:\n  name: kubernetes\n  devicePlugin: {sharing: {timeSlicing: {replicas: 1024}}}\n",
                      "split:\n  systems:\n    east: {policy: kubernetes, pools: [a100]}\n"
                      "    west: {policy: kubernetes, pools: [b]}\n  default: east\n"
                      "policies:\n  kubernetes:\n    devicePlugin: {sharing: {timeSlicing: {replicas: 1024}}}\n"),
              "nodes: 4", "nodes: 1");
  expect_only(split, {2, 1, "cluster",
                      "the systems' 2 pools of nodes advertising up to 1,048,576 GPU units each (GPUs per node x "
                      "time-slicing replicas) need a free-GPU index of 2,097,154 entries (a pool's units + 1, "
                      "summed), more than the 2,097,152 a run holds; join pools of like nodes, or give fewer "
                      "replicas"});
  EXPECT_NO_THROW(
      parse_scenario(replace(two, "  devicePlugin: {sharing: {timeSlicing: {replicas: 1024}}}\n", ""), kInline))
      << "without time-slicing each pool counts 1,025 entries";
}

// Every pool, QOS, switch and node a policy block names exists (issue #20).
TEST(ScenarioErrors, PolicyReferencesResolve) {
  auto slurm = [](const std::string& block) {
    return replace(kBase, "policy: fifo", "policy:\n  name: slurm\n" + block);
  };
  expect_only(slurm("  partitions:\n    gpu: {Nodes: [a100, b200]}"),
              {11, 18, "policy.partitions.gpu.Nodes", "no pool named \"b200\" (pools: a100); did you mean \"a100\"?"});
  expect_only(slurm("  nodes:\n    a10: {Weight: 2}"),
              {11, 19, "policy.nodes.a10.Weight", "no pool named \"a10\" (pools: a100); did you mean \"a100\"?"});
  expect_only(slurm("  qos:\n    high: {Preempt: [lo]}\n    low: {Priority: 1}"),
              {11, 21, "policy.qos.high.Preempt",
               "Preempt names no QOS \"lo\" (QOS: high, low, normal); did you mean \"low\"?"});
  expect_only(
      slurm("  topology:\n    leaf: {Nodes: \"a100[0-4]\"}"),
      {11, 19, "policy.topology.leaf.Nodes", "no node named \"a1004\" (pool \"a100\" has nodes a1000 to a1003)"});
  expect_only(slurm("  topology:\n    s1: {Switches: s2}\n    s2: {Switches: s1}"),
              {12, 20, "policy.topology.s2.Switches", "the switches form a cycle: s1 -> s2 -> s1"});
  // The documented forms resolve.
  EXPECT_NO_THROW(parse_scenario(slurm("  partitions:\n    gpu: {Nodes: ALL}\n"), kInline));  // slurm.conf's keyword
  EXPECT_NO_THROW(
      parse_scenario(slurm("  partitions:\n    gpu: {Nodes: a100}\n  qos:\n    high: {Preempt: [normal]}\n"
                           "  topology:\n    leaf0: {Nodes: \"a100[0-1]\"}\n    leaf1: {Nodes: \"a100[2-3]\"}\n"
                           "    spine: {Switches: \"leaf0,leaf1\"}"),
                     kInline));
  expect_only(
      replace(kBase, "policy: fifo",
              "policy:\n  name: kueue\n  resourceFlavors: {f: {pools: [h100]}}\n  clusterQueues:\n"
              "    all: {namespaces: [\"*\"], resources: {f: {gpu: {nominalQuota: 8}}}}"),
      {10, 32, "policy.resourceFlavors.f.pools", "no pool named \"h100\" (pools: a100); did you mean \"a100\"?"});
}

TEST(ScenarioErrors, WrongNodeTypes) {
  expect_only(replace(kBase, "nodes: 4", "nodes: [4]"),
              {5, 14, "cluster.pools[0].nodes", "expected an integer >= 1, got a list"});
  expect_only("name: x\ncluster: [1, 2]\npolicy: fifo\nworkload: {trace: tiny.csv}\n",
              {2, 10, "cluster", "expected a map with a pools list, got a list"});
  expect_only(replace(kBase, "policy: fifo", "policy: [fifo]"),
              {8, 9, "policy", "expected a policy name or a map with a name key, got a list"});
  expect_only(replace(kBase, "name: base", "name: {a: 1}"), {1, 7, "name", "expected a string, got a map"});
  expect_only("- 1\n- 2\n",
              {1, 1, "", "expected a map with keys name, cluster, policy and workload at the top level, got a list"});
  expect_only(kBase + "output: {events: maybe}\n", {11, 18, "output.events", "expected true or false, got \"maybe\""});
}

TEST(ScenarioErrors, PoolsMustBeAListOfMaps) {
  const std::string pools_map = "name: x\ncluster:\n  pools:\n    name: a\npolicy: fifo\nworkload: {trace: tiny.csv}\n";
  expect_only(pools_map, {4, 5, "cluster.pools", "expected a list, got a map"});
  expect_only(
      replace(kBase, "    - name: a100\n      nodes: 4\n      gpus_per_node: 8\n      gpu_type: A100\n",
              "    - a100\n"),
      {4, 7, "cluster.pools[0]", "expected a pool (a map with name, nodes, gpus_per_node and gpu_type), got \"a100\""});
  expect_only(
      replace(kBase, "  pools:\n    - name: a100\n      nodes: 4\n      gpus_per_node: 8\n      gpu_type: A100\n",
              "  pools: []\n"),
      {3, 10, "cluster.pools", "expected at least one pool, got an empty list"});
}

TEST(ScenarioErrors, UnknownTopLevelKeyWithSuggestion) {
  expect_only(kBase + "horizn: 7d\n", {11, 1, "horizn", "unknown key \"horizn\"; did you mean \"horizon\"?"});
  expect_only(
      kBase + "zzzzzzzz: 1\n",
      {11, 1, "zzzzzzzz",
       "unknown key \"zzzzzzzz\" (expected one of: name, seed, cluster, tenants, policy, policies, workload, horizon, "
       "output, variants, seeds, failures, costs, services, runtime, targets, split, prime_time)"});
}

TEST(Scenario, CostsPriceThePoolsByGpuType) {
  const std::string text = replace(kBase, "policy: fifo", R"(    - name: h100
      nodes: 2
      gpus_per_node: 8
      gpu_type: H100
    - name: h100-b
      nodes: 1
      gpus_per_node: 4
      gpu_type: H100
costs:
  currency: EUR
  gpu_hour: {H100: 2.99}
policy: fifo)");
  const Scenario s = parse_scenario(text, kInline);
  ASSERT_EQ(s.cluster.pools.size(), 3u);
  EXPECT_EQ(s.cluster.pools[0].gpu_hour_price, 0.0);  // A100: unpriced
  EXPECT_EQ(s.cluster.pools[1].gpu_hour_price, 2.99);
  EXPECT_EQ(s.cluster.pools[2].gpu_hour_price, 2.99);
  EXPECT_EQ(s.costs.currency, "EUR");
  ASSERT_EQ(s.costs.gpu_hour.size(), 1u);
  EXPECT_EQ(s.costs.gpu_hour[0].first, "H100");
  // Without `costs:` nothing is priced and the currency defaults to USD.
  const Scenario plain = parse_scenario(kBase, kInline);
  EXPECT_EQ(plain.cluster.pools[0].gpu_hour_price, 0.0);
  EXPECT_TRUE(plain.costs.gpu_hour.empty());
  EXPECT_EQ(plain.costs.currency, "USD");
}

TEST(ScenarioErrors, CostsNameAPoolTypeAndPositivePrices) {
  expect_only(kBase + "costs:\n  gpu_hour: {A10: 1.5}\n",
              {12, 14, "costs.gpu_hour.A10", "unknown key \"A10\"; did you mean \"A100\"?"});
  expect_only(kBase + "costs:\n  gpu_hour: {A100: -1}\n",
              {12, 20, "costs.gpu_hour.A100", "expected a number > 0 and < 1e+09, got \"-1\""});
  expect_only(kBase + "costs:\n  gpu_hour: {A100: cheap}\n",
              {12, 20, "costs.gpu_hour.A100", "expected a number > 0 and < 1e+09, got \"cheap\""});
  expect_only(kBase + "costs:\n  currency: EUR\n", {12, 3, "costs.gpu_hour", "missing required key \"gpu_hour\""});
  expect_only(
      kBase + "costs: 3\n",
      {11, 8, "costs", "expected a map with gpu_hour (prices per GPU-hour by GPU type) and currency, got \"3\""});
}

TEST(ScenarioErrors, UnknownPoolKeyWithSuggestion) {
  expect_only(replace(kBase, "gpu_type: A100", "gpu_type: A100\n      gpu_typ: A100"),
              {8, 7, "cluster.pools[0].gpu_typ", "unknown key \"gpu_typ\"; did you mean \"gpu_type\"?"});
}

TEST(ScenarioErrors, MissingRequiredKeys) {
  expect_only(replace(kBase, "      nodes: 4\n", ""),
              {4, 7, "cluster.pools[0].nodes", "missing required key \"nodes\""});
  expect_only(replace(kBase, "name: base\n", ""), {1, 1, "name", "missing required key \"name\""});
  expect_only(replace(kBase, "  trace: tiny.csv\n", "  format: csv\n"),
              {10, 3, "workload.trace", "missing required key \"trace\""});
  expect_only(replace(kBase, "policy: fifo", "policy: {placement: consolidate}"),
              {8, 9, "policy.name", "missing required key \"name\""});
  // `key:` with nothing after it is not a value.
  expect_only(replace(kBase, "name: base", "name:"), {1, 1, "name", "expected a string, got nothing"});

  const auto errors = errors_of("seed: 3\n");
  ASSERT_EQ(errors.size(), 4u);
  expect_error(errors[0], {1, 1, "name", "missing required key \"name\""});
  expect_error(errors[1], {1, 1, "cluster", "missing required key \"cluster\""});
  expect_error(errors[2], {1, 1, "policy", "missing required key \"policy\""});
  expect_error(errors[3], {1, 1, "workload", "missing required key \"workload\""});
}

TEST(ScenarioErrors, DuplicateNames) {
  const std::string two = replace(kBase, "      gpu_type: A100\n",
                                  "      gpu_type: A100\n    - name: a100\n      nodes: 1\n      gpus_per_node: 4\n"
                                  "      gpu_type: V100\n");
  expect_only(two, {8, 13, "cluster.pools[1].name", "duplicate pool name \"a100\" (first used at line 4)"});
  expect_only(kBase + "tenants:\n  - name: t\n  - name: t\n",
              {13, 11, "tenants[1].name", "duplicate tenant name \"t\" (first used at line 12)"});
  expect_only(kBase + "seed: 1\nseed: 2\n", {12, 1, "seed", "duplicate key \"seed\" (first given at line 11)"});
}

TEST(ScenarioErrors, UnknownPolicyWithSuggestion) {
  const auto errors = errors_of(replace(kBase, "policy: fifo", "policy: fifx"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 8);
  EXPECT_EQ(errors[0].column(), 9);
  EXPECT_EQ(errors[0].where(), "policy.name");
  EXPECT_EQ(errors[0].message().rfind("unknown policy \"fifx\"; did you mean \"fifo\"?", 0), 0u) << errors[0].message();

  const auto in_map = errors_of(replace(kBase, "policy: fifo", "policy:\n  name: fifx"));
  ASSERT_EQ(in_map.size(), 1u);
  EXPECT_EQ(in_map[0].line(), 9);
  EXPECT_EQ(in_map[0].column(), 9);
}

TEST(ScenarioErrors, UnknownPolicyParam) {
  expect_only(
      replace(kBase, "policy: fifo", "policy:\n  name: fifo\n  placment: consolidate"),
      {10, 13, "policy.placment", "unknown parameter \"placment\" for policy fifo; did you mean \"placement\"?"});
}

TEST(ScenarioErrors, BadDuration) {
  expect_only(kBase + "horizon: 7 days\n",
              {11, 10, "horizon", "expected a duration like 90s, 15m, 2h or 7d, got \"7 days\""});
  expect_only(kBase + "horizon: -5\n", {11, 10, "horizon", "expected a duration like 90s, 15m, 2h or 7d, got \"-5\""});
  expect_only(kBase + "horizon: 0s\n", {11, 10, "horizon", "expected a duration > 0, got \"0s\""});
  expect_only(kBase + "output:\n  sample_interval: {a: 1}\n",
              {12, 20, "output.sample_interval", "expected a duration like 90s, 15m, 2h or 7d, got a map"});
}

TEST(ScenarioErrors, MissingTraceFileNamesResolvedPath) {
  expect_only(replace(kBase, "trace: tiny.csv", "trace: nope/missing.swf"),
              {10, 10, "workload.trace", "trace file not found: " + kDataDir + "/nope/missing.swf"});
  // A directory is not a trace.
  expect_only(replace(kBase, "trace: tiny.csv", "trace: ."),
              {10, 10, "workload.trace", "cannot read trace file: " + kDataDir + "/."});
}

std::string known_formats() {
  std::string out;
  for (const auto& n : headroom::traces::format_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

TEST(ScenarioErrors, BadFormat) {
  expect_only(
      replace(kBase, "trace: tiny.csv", "trace: tiny.csv\n  format: swff"),
      {11, 11, "workload.format", "expected one of " + known_formats() + ", got \"swff\"; did you mean \"swf\"?"});
}

TEST(ScenarioErrors, WindowEndMustFollowStart) {
  expect_only(replace(kBase, "trace: tiny.csv", "trace: tiny.csv\n  window: {start: 2d, end: 1d}"),
              {11, 28, "workload.window.end", "expected a duration after the window start (2d), got \"1d\""});
  expect_only(replace(kBase, "trace: tiny.csv", "trace: tiny.csv\n  window: {start: 1h, end: 1h}"),
              {11, 28, "workload.window.end", "expected a duration after the window start (1h), got \"1h\""});
  expect_only(replace(kBase, "trace: tiny.csv", "trace: tiny.csv\n  window: {end: 0}"),
              {11, 17, "workload.window.end", "expected a duration after the window start (0s), got \"0\""});
  const Scenario open_end =
      parse_scenario(replace(kBase, "trace: tiny.csv", "trace: tiny.csv\n  window: {start: 1d}"), kInline);
  EXPECT_EQ(open_end.workload.window_start, 24 * 3600 * 1000LL);
  EXPECT_EQ(open_end.workload.window_end, sim::kNever);
}

TEST(ScenarioErrors, ManyErrorsReportedTogether) {
  const std::string text = R"(name: many
seed: abc
cluster:
  pools:
    - name: a
      nodes: -1
      gpus_per_node: x
      gpu_typ: A100
    - name: a
      nodes: 1
      gpus_per_node: 8
      gpu_type: H100
policy:
  name: fifo
  placment: consolidate
workload:
  trace: missing.csv
  arrival_scale: fast
horizn: 7d
)";
  const auto errors = errors_of(text);
  std::vector<std::string> wheres;
  for (const auto& e : errors) wheres.push_back(e.where() + "@" + std::to_string(e.line()));
  EXPECT_EQ(wheres, (std::vector<std::string>{
                        "seed@2",
                        "cluster.pools[0].gpu_type@5",
                        "cluster.pools[0].nodes@6",
                        "cluster.pools[0].gpus_per_node@7",
                        "cluster.pools[0].gpu_typ@8",
                        "cluster.pools[1].name@9",
                        "policy.placment@15",
                        "workload.trace@17",
                        "workload.arrival_scale@18",
                        "horizn@19",
                    }));
  // The combined message lists every problem, one per line, as file:line:column: where: message.
  try {
    parse_scenario(text, "many.yaml");
    FAIL();
  } catch (const sim::InputErrors& e) {
    const std::string what = e.what();
    EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 9);
    EXPECT_NE(what.find("many.yaml:6:14: cluster.pools[0].nodes: expected an integer >= 1, got \"-1\""),
              std::string::npos)
        << what;
  }
}

TEST(ScenarioErrors, InvalidExampleFile) {
  const std::string path = kDataDir + "/invalid.yaml";
  try {
    load_scenario(path);
    FAIL();
  } catch (const sim::InputErrors& e) {
    const auto& errors = e.errors();
    ASSERT_EQ(errors.size(), 6u) << e.what();
    expect_error(errors[0], {5, 7, "cluster.pools[0].gpu_type", "missing required key \"gpu_type\""}, path);
    expect_error(errors[1], {6, 14, "cluster.pools[0].nodes", "expected an integer >= 1, got \"abc\""}, path);
    expect_error(errors[2], {8, 7, "cluster.pools[0].gpu_typ", "unknown key \"gpu_typ\"; did you mean \"gpu_type\"?"},
                 path);
    EXPECT_EQ(errors[3].where(), "policy.name");
    EXPECT_EQ(errors[3].line(), 9);
    expect_error(errors[4], {11, 10, "workload.trace", "trace file not found: " + kDataDir + "/missing.swf"}, path);
    expect_error(errors[5], {12, 1, "horizn", "unknown key \"horizn\"; did you mean \"horizon\"?"}, path);
  }
}

TEST(ScenarioErrors, AtMostAHundredProblemsAreListed) {
  std::string text = kBase;
  for (int i = 0; i < 150; ++i) text += "bad_key_" + std::to_string(i) + ": 1\n";
  const auto errors = errors_of(text);
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors[99].where(), "bad_key_99");
  expect_error(errors[100], {0, 0, "", "... and 50 more problems"});
}

TEST(ScenarioErrors, EmptyFile) {
  for (const char* text : {"", "\n\n", "# only a comment\n", "---\n"}) {
    const auto errors = errors_of(text);
    ASSERT_EQ(errors.size(), 1u) << text;
    expect_error(errors[0],
                 {1, 1, "", "the scenario is empty; expected a map with keys name, cluster, policy and workload"});
  }
}

TEST(ScenarioErrors, MoreThanOneDocument) {
  expect_only(kBase + "---\nname: second\n",
              {11, 1, "", "a scenario file holds one YAML document; a second one starts here"});
}

TEST(ScenarioErrors, StrayTokensAreNotIgnored) {
  // yaml-cpp 0.7 would drop these silently (or loop forever); they are reported instead.
  expect_only(",ame: base\n", {1, 1, "", "unexpected \",\" where a YAML value or a new key should be"});
  expect_only("[a],\n", {1, 4, "", "unexpected \",\" where a YAML value or a new key should be"});
  expect_only("- a\n,\n", {2, 1, "", "unexpected \",\" where a YAML value or a new key should be"});
  expect_only(kBase + ",\n", {11, 1, "", "end of map not found"});
}

TEST(ScenarioErrors, BinaryAndNonUtf8Input) {
  expect_only(std::string("name: x\x00y\n", 10),
              {1, 8, "", "not a text file: control character 0x00 is not allowed in a scenario file"});
  expect_only("name: caf\xe9\n",
              {1, 10, "", "not UTF-8 text: byte 0xe9 is not valid UTF-8 (a scenario file must be UTF-8)"});
  expect_only("\x89PNG\r\n\x1a\n",
              {1, 1, "", "not UTF-8 text: byte 0x89 is not valid UTF-8 (a scenario file must be UTF-8)"});
  // Valid UTF-8 (and a byte-order mark) is fine.
  const Scenario s = parse_scenario("\xef\xbb\xbf" + replace(kBase, "name: base", "name: caf\xc3\xa9"), kInline);
  EXPECT_EQ(s.name, "caf\xc3\xa9");
}

TEST(ScenarioErrors, RandomBytesNeverCrash) {
  std::mt19937_64 gen(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(gen() % 200, '\0');
    for (auto& c : text) c = static_cast<char>(gen() % 256);
    EXPECT_FALSE(errors_of(text).empty());
  }
}

TEST(ScenarioErrors, MutatedScenariosNeverCrash) {
  // Printable mutations of a valid scenario: each parses or throws InputErrors, nothing else.
  std::mt19937_64 gen(11);
  const std::string alphabet = " \n:-[]{},'\"&*!|>#?%@`0123456789abcxyz.";
  int failures = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = kBase + "horizon: 7d\ntenants: [{name: a}]\n";
    const int edits = 1 + static_cast<int>(gen() % 4);
    for (int k = 0; k < edits; ++k) text[gen() % text.size()] = alphabet[gen() % alphabet.size()];
    try {
      parse_scenario(text, kInline);
    } catch (const sim::InputErrors& e) {
      ++failures;
      for (const auto& err : e.errors()) EXPECT_FALSE(err.message().empty());
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(ScenarioErrors, AliasCyclesAndBombsAreBounded) {
  // A self-referencing list and an exponential alias bomb under `policy:` end in errors.
  const auto cycle = errors_of(replace(kBase, "policy: fifo", "policy:\n  name: fifo\n  p: &a [*a]"));
  ASSERT_FALSE(cycle.empty());
  // Refused before the tree is walked, at the alias (sim/yaml_documents.hpp).
  EXPECT_EQ(cycle[0].message(),
            "an alias (*a) inside the node its anchor names (the document would be infinite); refusing it");
  std::string bomb = "policy:\n  name: fifo\n  l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i)
    bomb += "  l" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  const auto bombed = errors_of(replace(kBase, "policy: fifo\n", bomb));
  ASSERT_FALSE(bombed.empty());
  // The same with maps, which are flattened rather than printed.
  std::string map_bomb = "policy:\n  name: fifo\n  m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n";
  for (int i = 1; i < 8; ++i) {
    const std::string prev = "*m" + std::to_string(i - 1);
    map_bomb += "  m" + std::to_string(i) + ": &m" + std::to_string(i) + " {a: " + prev + ", b: " + prev +
                ", c: " + prev + ", d: " + prev + ", e: " + prev + ", f: " + prev + ", g: " + prev + ", h: " + prev +
                "}\n";
  }
  const auto map_bombed = errors_of(replace(kBase, "policy: fifo\n", map_bomb));
  ASSERT_FALSE(map_bombed.empty());
  EXPECT_LE(map_bombed.size(), 101u);
  bool too_large = false;
  for (const auto& e : map_bombed)
    too_large = too_large || e.message().find("too large") != std::string::npos ||
                e.message().find("nodes through aliases") != std::string::npos;
  EXPECT_TRUE(too_large);
  const auto map_cycle = errors_of(replace(kBase, "policy: fifo", "policy:\n  name: fifo\n  p: &a {x: *a}"));
  ASSERT_FALSE(map_cycle.empty());
}

TEST(ScenarioErrors, DeepNestingIsAnError) {
  std::string deep = "name: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  const auto errors = errors_of(deep);
  ASSERT_FALSE(errors.empty());
}

TEST(ScenarioErrors, MissingScenarioFile) {
  const std::string path = kDataDir + "/does-not-exist.yaml";
  try {
    load_scenario(path);
    FAIL();
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].file(), path);
    EXPECT_EQ(e.errors()[0].message(), "cannot read scenario file: No such file or directory");
  }
  try {
    load_scenario(kDataDir);
    FAIL();
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].message(), "cannot read scenario file (a directory)");
  }
  // A device named as the scenario (or an endless pipe): refused at 16 MiB.
  if (std::filesystem::exists("/dev/zero")) {
    try {
      load_scenario("/dev/zero");
      FAIL();
    } catch (const sim::InputErrors& e) {
      ASSERT_EQ(e.errors().size(), 1u);
      EXPECT_EQ(e.errors()[0].file(), "/dev/zero");
      EXPECT_EQ(e.errors()[0].line(), 1);
      EXPECT_EQ(e.errors()[0].message(),
                "more than 16 MiB, far more than a scenario file ever holds: a device, an endless pipe or a log named "
                "in its place?");
    }
  }
}

TEST(ScenarioErrors, LoadedFileNamesItselfInErrors) {
  TempDir dir;
  const std::string path = dir.write("bad.yaml", replace(kBase, "trace: tiny.csv", "trace: t.csv") + "horizn: 1d\n");
  dir.write("t.csv", "id,tenant,queue,submit,gpus,runtime\n");
  try {
    load_scenario(path);
    FAIL();
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    expect_error(e.errors()[0], {11, 1, "horizn", "unknown key \"horizn\"; did you mean \"horizon\"?"}, path);
  }
}

// ---------------------------------------------------------------------------------------------
// build_workload

// A native CSV trace: job i is submitted at i * 10 s, tenants alternate a/b.
std::string csv_trace(int jobs) {
  std::string out = "id,tenant,queue,submit,gpus,runtime\n";
  for (int i = 0; i < jobs; ++i)
    out += std::to_string(i + 1) + "," + (i % 2 == 0 ? "a" : "b") + ",q," + std::to_string(i * 10) + ",1,100\n";
  return out;
}

Scenario workload_scenario(const TempDir& dir, const std::string& workload_extra, int jobs = 100) {
  dir.write("trace.csv", csv_trace(jobs));
  const std::string text =
      "name: w\nseed: 5\ncluster:\n  pools: [{name: p, nodes: 2, gpus_per_node: 8, gpu_type: A100}]\n"
      "tenants: [{name: a}, {name: idle}]\npolicy: fifo\nworkload:\n  trace: trace.csv\n" +
      workload_extra;
  return parse_scenario(text, (dir.path() / "s.yaml").string());
}

void expect_sorted(const models::Workload& w) {
  for (std::size_t i = 1; i < w.jobs.size(); ++i) ASSERT_LE(w.jobs[i - 1].submit, w.jobs[i].submit);
}

TEST(BuildWorkload, ImportsTheTraceAndAddsDeclaredTenants) {
  TempDir dir;
  const auto w = build_workload(workload_scenario(dir, ""));
  ASSERT_EQ(w.jobs.size(), 100u);
  EXPECT_EQ(w.jobs[3].trace_id, 4);
  EXPECT_EQ(w.jobs[3].submit, 30 * 1000);
  EXPECT_TRUE(w.tenants.find("a").has_value());
  EXPECT_TRUE(w.tenants.find("b").has_value());
  ASSERT_TRUE(w.tenants.find("idle").has_value());  // declared, no jobs
  EXPECT_EQ(*w.tenants.find("idle"), 2u);
}

// The runs of one command share one import of a trace: later runs see the jobs the first one read
// even after the file changed, each run's transforms apply to its own copy, and different import
// settings are different entries.
TEST(BuildWorkload, TraceCacheReadsEachTraceOnceForAllRuns) {
  TempDir dir;
  const Scenario all = workload_scenario(dir, "");
  const Scenario window = workload_scenario(dir, "  window: {start: 100s, end: 200s}\n");
  TraceCache cache;
  const models::Workload first = build_workload(all, &cache);
  ASSERT_EQ(first.jobs.size(), 100u);
  dir.write("trace.csv", csv_trace(7));  // the file changes while the command runs
  const models::Workload later = build_workload(all, &cache);
  EXPECT_EQ(later.jobs.size(), 100u);
  EXPECT_EQ(cache.get(all.workload).get(), cache.get(window.workload).get()) << "a window is not a new import";
  const models::Workload windowed = build_workload(window, &cache);
  EXPECT_EQ(windowed.jobs.size(), 10u);
  EXPECT_EQ(cache.get(all.workload)->jobs.size(), 100u) << "the shared import is left as read";
  EXPECT_EQ(cache.reads(), 1u);
  // The same as reading it without a cache (before the file changed: `first`).
  ASSERT_EQ(build_workload(all).jobs.size(), 7u);
  for (std::size_t i = 0; i < first.jobs.size(); ++i) {
    EXPECT_EQ(later.jobs[i].submit, first.jobs[i].submit);
    EXPECT_EQ(later.jobs[i].trace_id, first.jobs[i].trace_id);
  }
  Scenario skip = all;
  skip.workload.skip_bad_rows = true;
  EXPECT_EQ(build_workload(skip, &cache).jobs.size(), 7u) << "other import settings read the file again";
  EXPECT_EQ(cache.reads(), 2u);

  // Announced runs: once the last of them has taken the trace, the cache lets it go (that run
  // takes the jobs over), and a run after them reads the file again. A look before the runs (a
  // tenant target's check, `look`) reads the trace for them and is not one of them: both runs
  // still get that import.
  for (const bool look : {false, true}) {
    SCOPED_TRACE(look ? "a look first" : "runs only");
    TraceCache counted;
    counted.expect(all.workload);
    counted.expect(all.workload);
    dir.write("trace.csv", csv_trace(100));
    if (look) {
      EXPECT_EQ(build_workload(all, &counted, false).jobs.size(), 100u);
    }
    EXPECT_EQ(build_workload(all, &counted).jobs.size(), 100u);
    dir.write("trace.csv", csv_trace(7));
    const models::Workload last = build_workload(all, &counted);
    EXPECT_EQ(last.jobs.size(), 100u) << "the second announced run shares the first one's import";
    EXPECT_EQ(last.jobs[99].trace_id, 100);
    EXPECT_EQ(build_workload(all, &counted).jobs.size(), 7u) << "let go after the announced runs";
    EXPECT_EQ(counted.reads(), 2u);
  }

  // Several runs asking at once get the one import.
  TraceCache shared;
  std::vector<const models::Workload*> got(4, nullptr);
  {
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < got.size(); ++k)
      threads.emplace_back([&, k] { got[k] = shared.get(all.workload).get(); });
    for (auto& t : threads) t.join();
  }
  for (const auto* w : got) EXPECT_EQ(w, got.front());
  EXPECT_EQ(shared.reads(), 1u);

  // A trace that cannot be read fails every run that asks for it, with the file's error.
  Scenario missing = all;
  missing.workload.trace = (dir.path() / "absent.csv").string();
  for (int k = 0; k < 2; ++k) {
    try {
      build_workload(missing, &cache);
      ADD_FAILURE() << "no error";
    } catch (const sim::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("absent.csv"), std::string::npos) << e.what();
    }
  }
}

TEST(BuildWorkload, WindowKeepsSubmitsInHalfOpenRange) {
  TempDir dir;
  const auto w = build_workload(workload_scenario(dir, "  window: {start: 100s, end: 200s}\n"));
  ASSERT_EQ(w.jobs.size(), 10u);  // submits 100, 110, ..., 190
  EXPECT_EQ(w.jobs.front().submit, 100 * 1000);
  EXPECT_EQ(w.jobs.back().submit, 190 * 1000);
  EXPECT_EQ(w.jobs.front().trace_id, 11);
  ASSERT_FALSE(w.meta.warnings.empty());
  EXPECT_NE(w.meta.warnings.back().find("kept 10 of 100 jobs"), std::string::npos) << w.meta.warnings.back();
}

TEST(BuildWorkload, ThinningIsSeededAndDeterministic) {
  TempDir dir;
  const Scenario s = workload_scenario(dir, "  arrival_scale: 0.5\n", 1000);
  const auto a = build_workload(s);
  const auto b = build_workload(s);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) EXPECT_EQ(a.jobs[i].trace_id, b.jobs[i].trace_id);
  // About half survive; the exact count is fixed by seed 5 and the stream's draw order.
  EXPECT_EQ(a.jobs.size(), 484u);
  expect_sorted(a);
  // A different seed thins differently.
  Scenario other = s;
  other.seed = 6;
  const auto c = build_workload(other);
  bool differs = c.jobs.size() != a.jobs.size();
  for (std::size_t i = 0; !differs && i < a.jobs.size(); ++i) differs = a.jobs[i].trace_id != c.jobs[i].trace_id;
  EXPECT_TRUE(differs);
}

TEST(BuildWorkload, ScaleTwoDoublesEveryJob) {
  TempDir dir;
  const Scenario s = workload_scenario(dir, "  arrival_scale: 2.0\n");
  const auto a = build_workload(s);
  ASSERT_EQ(a.jobs.size(), 200u);
  expect_sorted(a);
  std::map<std::int64_t, int> ids;
  for (const auto& j : a.jobs) ++ids[j.trace_id];
  for (int i = 1; i <= 100; ++i) {
    EXPECT_EQ(ids[i], 1) << i;
    EXPECT_EQ(ids[i * 1000 + 1], 1) << i;
  }
  // Each copy lands within [submit, submit + 60 s) of its original; the original comes first on ties.
  std::map<std::int64_t, sim::Tick> submit;
  for (const auto& j : a.jobs)
    if (j.trace_id <= 100) submit[j.trace_id] = j.submit;
  for (const auto& j : a.jobs) {
    if (j.trace_id <= 100) continue;
    const sim::Tick base = submit[j.trace_id / 1000];
    EXPECT_GE(j.submit, base);
    EXPECT_LT(j.submit, base + 60'000);
  }
  const auto b = build_workload(s);
  ASSERT_EQ(b.jobs.size(), a.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].trace_id, b.jobs[i].trace_id);
    EXPECT_EQ(a.jobs[i].submit, b.jobs[i].submit);
  }
}

TEST(BuildWorkload, FractionalScaleAddsSomeCopies) {
  TempDir dir;
  const Scenario s = workload_scenario(dir, "  arrival_scale: 1.25\n", 1000);
  const auto a = build_workload(s);
  EXPECT_EQ(a.jobs.size(), 1245u);  // seed 5: 245 of 1000 jobs get a second copy
  EXPECT_EQ(build_workload(s).jobs.size(), a.jobs.size());
  expect_sorted(a);
}

TEST(BuildWorkload, TenantFilterRuntimeScaleAndGpuTypeMap) {
  TempDir dir;
  const auto w = build_workload(
      workload_scenario(dir, "  tenants: [b, nobody]\n  runtime_scale: 0.25\n  gpu_type_map: {V100: A100}\n"));
  ASSERT_EQ(w.jobs.size(), 50u);  // every second job is b's
  for (const auto& j : w.jobs) {
    EXPECT_EQ(w.tenants.name(j.tenant), "b");
    EXPECT_EQ(j.runtime, 25 * 1000);
  }
  bool warned = false;
  for (const auto& m : w.meta.warnings) warned = warned || m.find("\"nobody\" does not occur") != std::string::npos;
  EXPECT_TRUE(warned);
  const auto q = build_workload(workload_scenario(dir, "  queues: [q]\n"));
  EXPECT_EQ(q.jobs.size(), 100u);
  EXPECT_THROW(workload_scenario(dir, "  tenants: []\n"), headroom::sim::InputErrors);
  EXPECT_THROW(workload_scenario(dir, "  runtime_scale: -1\n"), headroom::sim::InputErrors);
  EXPECT_THROW(workload_scenario(dir, "  gpu_type_map: [V100]\n"), headroom::sim::InputErrors);
}

TEST(BuildWorkload, WindowThenScale) {
  TempDir dir;
  const auto w = build_workload(workload_scenario(dir, "  window: {start: 0, end: 100}\n  arrival_scale: 3\n"));
  EXPECT_EQ(w.jobs.size(), 30u);
  expect_sorted(w);
}

TEST(BuildWorkload, RealSwfTraceWithWindow) {
  const std::string trace = std::string(HEADROOM_SHARED_DIR) + "/traces/swf-pwa/NASA-iPSC-1993-3.1-cln.swf.gz";
  if (!fs::exists(trace)) GTEST_SKIP() << "not available: " << trace;
  const std::string text =
      "name: nasa\ncluster:\n  pools: [{name: ipsc, nodes: 128, gpus_per_node: 1, gpu_type: G1}]\n"
      "policy: fifo\nworkload:\n  trace: " +
      trace + "\n  window: {start: 1d, end: 8d}\n";
  const Scenario s = parse_scenario(text, "nasa.yaml");
  const auto all = [&] {
    Scenario whole = s;
    whole.workload.window_start = 0;
    whole.workload.window_end = sim::kNever;
    return build_workload(whole);
  }();
  const auto w = build_workload(s);
  ASSERT_FALSE(w.jobs.empty());
  EXPECT_LT(w.jobs.size(), all.jobs.size());
  std::size_t expected = 0;
  for (const auto& j : all.jobs) expected += j.submit >= sim::kDay && j.submit < 8 * sim::kDay;
  EXPECT_EQ(w.jobs.size(), expected);
  for (const auto& j : w.jobs) {
    EXPECT_GE(j.submit, sim::kDay);
    EXPECT_LT(j.submit, 8 * sim::kDay);
  }
  expect_sorted(w);
}

// Issue #32, item 5: whether the log's system enforced its time limits. 200 jobs with a one-hour
// limit; `past` of them ran `by` past it.
models::Workload limited_jobs(int past, Tick by) {
  models::Workload w;
  for (int i = 0; i < 200; ++i) {
    models::Job j;
    j.gpus = 1;
    j.walltime = 3600 * sim::kSecond;
    j.runtime = i < past ? j.walltime + by : 1800 * sim::kSecond;
    w.jobs.push_back(j);
  }
  return w;
}

TEST(TimeLimits, OverrunsOfSecondsAreAnEnforcingSystemsKillsAndAreKept) {
  // 10 of 200 ran 20 s past: killed at the limit (KillWait), as RICC's are.
  auto w = limited_jobs(10, 20 * sim::kSecond);
  WorkloadSpec spec;
  const auto note = apply_time_limits(spec, w);
  ASSERT_TRUE(note);
  EXPECT_EQ(*note,
            "time limits: 10 of 200 jobs with a time limit (5.0%) ran past it in the log, 10 of them by under a "
            "minute (median 20 s): its system enforced its limits, as the replay does (a system with time limits "
            "ends them at the limit, TIMEOUT; workload.time_limits: as_recorded lets them run their recorded time)");
  EXPECT_EQ(w.jobs[0].walltime, 3600 * sim::kSecond);
}

TEST(TimeLimits, RunsOfHoursPastTheLimitMeanItWasNotEnforcedAndAreRaised) {
  // 3 of 200 (1.5%) ran two hours past their limit: the log's system did not kill at the limit.
  auto w = limited_jobs(3, 7200 * sim::kSecond);
  WorkloadSpec spec;
  EXPECT_TRUE(apply_time_limits(spec, w)) << "fewer than 5 such jobs: still said, not raised";
  EXPECT_EQ(w.jobs[0].walltime, 3600 * sim::kSecond);
  w = limited_jobs(6, 7200 * sim::kSecond);
  const auto note = apply_time_limits(spec, w);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("6 of 200 jobs with a time limit (3.0%) ran more than a minute past it"), std::string::npos)
      << *note;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w.jobs[i].walltime, w.jobs[i].runtime) << i;
  EXPECT_EQ(w.jobs[6].walltime, 3600 * sim::kSecond);
  // enforce: the limits as written; as_recorded: raised whatever the log shows.
  w = limited_jobs(6, 7200 * sim::kSecond);
  spec.time_limits = "enforce";
  EXPECT_FALSE(apply_time_limits(spec, w));
  EXPECT_EQ(w.jobs[0].walltime, 3600 * sim::kSecond);
  w = limited_jobs(10, 20 * sim::kSecond);
  spec.time_limits = "as_recorded";
  EXPECT_EQ(apply_time_limits(spec, w).value_or(""),
            "time limits: 10 limits below the recorded run time raised to it (workload.time_limits: as_recorded)");
  EXPECT_EQ(w.jobs[0].walltime, w.jobs[0].runtime);
}

}  // namespace
}  // namespace headroom::scenarios
