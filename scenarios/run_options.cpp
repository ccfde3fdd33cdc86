#include "scenarios/run_options.hpp"

#include <memory>

#include "models/throughput.hpp"
#include "models/topology.hpp"
#include "sim/errors.hpp"

namespace headroom::scenarios {

simulation::SimulationOptions simulation_options(const Scenario& scenario, const models::Workload& workload) {
  simulation::SimulationOptions o;
  o.horizon = scenario.horizon;
  o.sample_interval = scenario.output.sample_interval;
  o.failures = scenario.failures;
  o.seed = scenario.seed;
  o.prime_time = scenario.prime_time;
  if (o.prime_time.enabled() && workload.meta.unix_start < 0)
    throw sim::InputError(scenario.file, static_cast<int>(o.prime_time.line), static_cast<int>(o.prime_time.column),
                          "prime_time",
                          "prime time needs a trace that dates its jobs (an SWF header's UnixStartTime, sacct or "
                          "kubectl times); " +
                              scenario.workload.trace + " gives none");
  if (scenario.runtime.enabled)
    o.runtime = std::make_shared<const models::RuntimeModel>(scenario.runtime, workload, scenario.cluster);
  // Placement locality: a job spread over switches runs slower by the topology's slowdown model
  // (docs/topology.md); a job on one node, or of a kind with no communication intensity, does not.
  if (auto topology = scenario.cluster.topology)
    o.placement_speed = [topology](const models::Job& job, const models::Placement& placement) {
      return 1.0 / topology->slowdown(placement, job.kind);
    };
  bool restricted = false;
  for (const auto& grant : scenario.queue_grants) restricted = restricted || grant.restricted;
  if (!restricted) return o;
  o.queue_access.resize(workload.tenants.size());
  for (const auto& grant : scenario.queue_grants) {
    if (!grant.restricted) continue;
    const auto tenant = workload.tenants.find(grant.tenant);
    if (!tenant) continue;  // no job of this tenant in the workload
    auto& row = o.queue_access[*tenant];
    row.assign(workload.queues.size(), false);
    for (const auto& q : grant.queues)
      if (const auto queue = workload.queues.find(q)) row[*queue] = true;
    // A tenant granted no queue of this workload has a row of false; when the workload has no
    // queue names at all the row would be empty (= unrestricted), so give it one false entry.
    if (row.empty()) row.push_back(false);
  }
  return o;
}

}  // namespace headroom::scenarios
