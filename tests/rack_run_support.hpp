#pragma once

// A policy run on 4 nodes x 8 GPUs in racks of 2 (rack-0: nodes 0, 1; rack-1: nodes 2, 3; one
// spine above at level 2), recording each job's last waiting reason and start reason: the
// harness of the topology-aware placement tests of volcano and kai.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/topology.hpp"
#include "policies/registry.hpp"
#include "policy_test_support.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"

namespace headroom::testing {

class WaitingObserver : public models::SimObserver {
 public:
  void on_event(sim::Tick, models::AuditKind k, models::JobIndex j, std::int32_t, std::string_view reason) override {
    if (k == models::AuditKind::Waiting && !reason.empty()) waiting[j] = std::string(reason);
    if (k == models::AuditKind::Start) started[j] = std::string(reason);
  }
  void on_start(sim::Tick, models::JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, models::JobIndex, models::JobState) override {}
  void on_sample(const models::Sample&) override {}
  std::map<models::JobIndex, std::string> waiting, started;
};

inline models::ClusterSpec racks(bool with_topology) {
  models::ClusterSpec c = cluster(4, 8);
  if (with_topology) {
    std::string error;
    c.topology = models::Topology::build(c, models::racks_spec(c, 2, 400, 0), error);
    EXPECT_TRUE(c.topology != nullptr) << error;
  }
  return c;
}

struct RackRun {
  RackRun(const std::string& policy_name, const models::Workload& w, const std::map<std::string, std::string>& kv,
          bool with_topology = true)
      : c(racks(with_topology)), policy(policies::make_policy(policy_name, params(kv), 1)) {
    sim = std::make_unique<simulation::Simulation>(w, c, *policy, &audit);
    sim->run();
  }
  std::vector<models::NodeId> nodes(models::JobIndex j) const {
    std::vector<models::NodeId> out;
    for (const auto& sl : sim->job_placement(j)) out.push_back(sl.node);
    std::sort(out.begin(), out.end());
    return out;
  }
  double start(models::JobIndex j) const { return sim::to_seconds(sim->job_start(j)); }

  models::ClusterSpec c;
  WaitingObserver audit;
  std::unique_ptr<policies::Policy> policy;
  std::unique_ptr<simulation::Simulation> sim;
};

// Every error (one per line) of a scenario on 4 x 8 A100 GPUs whose policy block is
// "policy:\n  name: NAME\n" followed by `policy_lines`, over the bundled RICC sample.
inline std::string policy_errors(const std::string& name, const std::string& policy_lines) {
  const std::string text =
      "name: t\ncluster:\n  pools:\n    - {name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100}\n"
      "policy:\n  name: " +
      name + "\n" + policy_lines + "workload:\n  trace: " + std::string(HEADROOM_SOURCE_DIR) +
      "/scenarios/examples/data/ricc-2010-first-14d.swf.gz\n";
  std::string all;
  for (const auto& e : scenario_errors(text)) all += std::string(e.what()) + "\n";
  return all;
}

}  // namespace headroom::testing
