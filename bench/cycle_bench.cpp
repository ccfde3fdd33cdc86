// Scheduling-cycle cost per pending job (issue "Performance, scale and reliability", Scale): a
// cluster of N nodes x 8 GPUs (128 cores, 1 TiB each), empty, and 4 x N pending pods of 1 GPU,
// 4 cores and 16 GiB submitted at t = 0; one scheduling pass binds them all (half the GPUs), and
// the run stops at 1 ms. Reported: wall time per pending job (the pass dominates; building the
// simulation is O(nodes + jobs)). Arguments: nodes, TBB threads.
//   kubernetes:        the default profile (ties to the lowest index: one node per node class)
//   kubernetes_seeded: tie_break: seeded, which scores every node through sim::parallel_ranges
//   kai:               the KAI defaults
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <string>

#include "models/cluster.hpp"
#include "models/workload.hpp"
#include "policies/registry.hpp"
#include "simulation/simulation.hpp"

namespace {

using namespace headroom;

models::Workload pending_pods(std::int64_t count) {
  models::Workload w;
  const auto tenant = w.tenants.intern("t0");
  const auto queue = w.queues.intern("default");
  for (std::int64_t i = 0; i < count; ++i) {
    models::Job j;
    j.trace_id = i + 1;
    j.tenant = tenant;
    j.queue = queue;
    j.gpus = 1;
    j.cpus = 4;
    j.memory_mib = 16 * 1024;
    j.runtime = 3600 * sim::kSecond;
    w.jobs.push_back(j);
  }
  return w;
}

void cycle(benchmark::State& state, const char* policy, const policies::PolicyParams& params) {
  const int nodes = static_cast<int>(state.range(0));
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(state.range(1)));
  const std::int64_t pending = 4 * std::int64_t{nodes};
  const models::Workload w = pending_pods(pending);
  models::ClusterSpec c;
  c.pools.push_back({"a100", nodes, 8, "A100", 128, 1024});
  simulation::SimulationOptions options;
  options.horizon = 1;  // one pass at t = 0
  std::string fingerprint;
  for (auto _ : state) {
    auto p = policies::make_policy(policy, params, 1);
    simulation::Simulation sim(w, c, *p, nullptr, options);
    const auto stats = sim.run();
    fingerprint = stats.fingerprint;
    if (sim.job_start(static_cast<models::JobIndex>(pending - 1)) != 0) {
      state.SkipWithError("the last pod was not bound in the first pass");
      return;
    }
  }
  benchmark::DoNotOptimize(fingerprint);
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["per_job"] = benchmark::Counter(static_cast<double>(pending) * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

policies::PolicyParams seeded() {
  policies::PolicyParams p;
  p["tie_break"] = policies::ParamValue{"seeded", "bench", 1, 1};
  return p;
}

void BM_CycleKubernetes(benchmark::State& state) { cycle(state, "kubernetes", {}); }
void BM_CycleKubernetesSeeded(benchmark::State& state) { cycle(state, "kubernetes", seeded()); }
void BM_CycleKai(benchmark::State& state) { cycle(state, "kai", {}); }

}  // namespace

BENCHMARK(BM_CycleKubernetes)->ArgsProduct({{100, 1000, 10000}, {1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CycleKubernetesSeeded)
    ->ArgsProduct({{100, 1000, 10000}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CycleKai)->ArgsProduct({{100, 1000, 10000}, {1}})->Unit(benchmark::kMillisecond);
