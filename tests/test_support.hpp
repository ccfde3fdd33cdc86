#pragma once

// Builders for hand-made workloads and clusters in tests.

#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/workload.hpp"
#include "sim/time.hpp"

namespace headroom::testing {

class WorkloadBuilder {
 public:
  // Adds a job submitted at `submit_s` seconds asking for `gpus` GPUs for `runtime_s` seconds.
  WorkloadBuilder& job(double submit_s, int gpus, double runtime_s, const std::string& tenant = "t0") {
    models::Job j;
    j.trace_id = static_cast<std::int64_t>(w_.jobs.size()) + 1;
    j.submit = static_cast<sim::Tick>(submit_s * sim::kSecond);
    j.gpus = gpus;
    j.runtime = static_cast<sim::Tick>(runtime_s * sim::kSecond);
    j.tenant = w_.tenants.intern(tenant);
    j.queue = w_.queues.intern("default");
    w_.jobs.push_back(j);
    return *this;
  }
  WorkloadBuilder& status(models::TraceStatus s) {
    w_.jobs.back().trace_status = s;
    return *this;
  }
  models::Workload build() const { return w_; }

 private:
  models::Workload w_;
};

inline models::ClusterSpec cluster(int nodes, int gpus_per_node, const std::string& type = "A100") {
  models::ClusterSpec spec;
  spec.pools.push_back({"pool", nodes, gpus_per_node, type, 0, 0});
  return spec;
}

}  // namespace headroom::testing
