#include "planner/run.hpp"

#include <chrono>

#include "policies/registry.hpp"
#include "results/recorder.hpp"
#include "scenarios/simulation.hpp"
#include "scenarios/workload.hpp"

#ifndef HEADROOM_VERSION
#define HEADROOM_VERSION "0.0.0"
#endif
#ifndef HEADROOM_GIT_DESCRIBE
#define HEADROOM_GIT_DESCRIBE "unknown"
#endif

namespace headroom::planner {

std::string version_string() {
  return std::string("headroom ") + HEADROOM_VERSION + " (" + HEADROOM_GIT_DESCRIBE + ")";
}

RunOutcome run_scenario(const scenarios::Scenario& scenario, const RunOptions& options) {
  using clock = std::chrono::steady_clock;
  const std::uint64_t seed = options.seed.value_or(scenario.seed);
  scenarios::Scenario sc = scenario;
  sc.seed = seed;

  const auto t0 = clock::now();
  const models::Workload workload = scenarios::build_workload(sc);
  const auto t1 = clock::now();

  auto policy = policies::make_policy(sc.policy.name, sc.policy.params, seed);
  results::Recorder recorder(workload, sc.cluster, sc.output.events);
  scenarios::SimulationOptions sim_options;
  sim_options.horizon = sc.horizon;
  sim_options.sample_interval = sc.output.sample_interval;
  sim_options.progress = options.progress;
  scenarios::Simulation simulation(workload, sc.cluster, *policy, &recorder, sim_options);
  const scenarios::SimulationStats stats = simulation.run(options.stop);
  const auto t2 = clock::now();

  RunOutcome out;
  out.cancelled = stats.cancelled;
  out.import_seconds = std::chrono::duration<double>(t1 - t0).count();
  out.simulate_seconds = std::chrono::duration<double>(t2 - t1).count();
  out.result = std::move(recorder.result());
  out.trace = workload.meta;
  auto& r = out.result;
  r.scenario_name = sc.name;
  r.scenario_text = sc.text;
  r.scenario_file = sc.file;
  r.policy = sc.policy.name;
  r.seed = seed;
  r.version = version_string();
  r.fingerprint = stats.fingerprint;
  r.events_processed = stats.events;
  r.sim_start = stats.start;
  r.sim_end = stats.end;
  r.total_gpus = sc.cluster.total_gpus();
  r.lost_gpu_ms = simulation.lost_gpu_ms();
  r.timeseries.interval = stats.sample_interval;
  return out;
}

}  // namespace headroom::planner
