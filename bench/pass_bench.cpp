// Cost of a scheduling pass over a backlog (issue #23: "the cost per scheduling pass at 1k and 10k
// pending jobs, so growth is visible"), for each of the five systems at the bake-off's defaults.
//
// A cluster of 64 nodes x 8 GPUs is kept full by 512 one-GPU jobs. Behind them
// wait P jobs (1, 2, 4 or 8 GPUs, or 16 and 32 GPUs: pod sets of 8-GPU pods where the system
// splits them), submitted at t = 1 s, in 8 tenants. From t = 600 s one of the running jobs ends
// every 30 s, 300 times: each end frees one GPU and the systems run their passes (kube-scheduler's
// cluster event, Volcano's and KAI's session, Slurm's main scheduler and backfill, Kueue's
// admission cycle); a freed GPU is taken by a one-GPU job, the others keep waiting. The run stops
// at t = 9,600 s. Reported: wall time per ended job (`per_end`, the passes it triggers), with
// the time up to the first end (building the simulation, the first passes) measured separately
// and subtracted. `pending` is P; compare P = 1,000 with P = 10,000 to see how a pass grows with
// the backlog (linear: 10x; a pass independent of the backlog: 1x).
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "models/cluster.hpp"
#include "models/workload.hpp"
#include "policies/registry.hpp"
#include "simulation/simulation.hpp"

namespace {

using namespace headroom;

constexpr int kNodes = 64;
constexpr int kRunning = kNodes * 8;
constexpr int kEnds = 300;
constexpr int kEvery = 30;  // seconds between ends

models::Workload backlog(std::int64_t pending) {
  models::Workload w;
  for (char t = '0'; t < '8'; ++t) w.tenants.intern(std::string{'t', t});
  const auto queue = w.queues.intern("default");
  auto add = [&](std::int64_t id, sim::Tick submit, std::int32_t gpus, sim::Tick runtime) {
    models::Job j;
    j.trace_id = id;
    j.tenant = static_cast<models::TenantId>(id % 8);
    j.queue = queue;
    j.submit = submit;
    j.gpus = gpus;
    j.runtime = runtime;
    j.walltime = runtime + 3600 * sim::kSecond;
    w.jobs.push_back(j);
  };
  // Running: the first kEnds end at 600 s, 630 s, ...; the rest after the run.
  for (int i = 0; i < kRunning; ++i) {
    const sim::Tick runtime = i < kEnds ? (600 + kEvery * i) * sim::kSecond : 100000 * sim::kSecond;
    add(i + 1, 0, 1, runtime);
  }
  static const std::int32_t kGpus[] = {1, 2, 4, 8, 1, 2, 16, 32};
  for (std::int64_t i = 0; i < pending; ++i) add(kRunning + i + 1, sim::kSecond, kGpus[i % 8], 3600 * sim::kSecond);
  return w;
}

policies::PolicyParams params(const std::string& policy) {
  policies::PolicyParams p;
  auto put = [&](const std::string& k, const std::string& v) { p[k] = policies::ParamValue{v, "bench", 1, 1}; };
  if (policy == "kueue") {
    // Kueue admits nothing without a ClusterQueue: one over every namespace, as `compare` derives.
    put("resourceFlavors.default.pools", "[a100]");
    put("clusterQueues.all-tenants.namespaces", "[\"*\"]");
    put("clusterQueues.all-tenants.resources.default.gpu.nominalQuota", std::to_string(kNodes * 8));
  }
  return p;
}

double run_until(const models::Workload& w, const models::ClusterSpec& c, const std::string& policy, sim::Tick until) {
  simulation::SimulationOptions options;
  options.horizon = until;
  const auto begin = std::chrono::steady_clock::now();
  auto p = policies::make_policy(policy, params(policy), 1);
  simulation::Simulation sim(w, c, *p, nullptr, options);
  benchmark::DoNotOptimize(sim.run());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void pass(benchmark::State& state, const char* policy) {
  const std::int64_t pending = state.range(0);
  const models::Workload w = backlog(pending);
  models::ClusterSpec c;
  c.pools.push_back({"a100", kNodes, 8, "A100", 0, 0});
  double setup = 0;
  for (auto _ : state) {
    // Up to just before the first end (building, the first passes over the backlog), then the
    // whole run: the difference is the ends' passes.
    setup = run_until(w, c, policy, 599 * sim::kSecond);
    const double all = run_until(w, c, policy, (600 + kEvery * kEnds) * sim::kSecond);
    state.SetIterationTime(std::max(0.0, all - setup) / kEnds);
  }
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["setup_s"] = setup;
}

void BM_PassKubernetes(benchmark::State& state) { pass(state, "kubernetes"); }
void BM_PassVolcano(benchmark::State& state) { pass(state, "volcano"); }
void BM_PassSlurm(benchmark::State& state) { pass(state, "slurm"); }
void BM_PassKai(benchmark::State& state) { pass(state, "kai"); }
void BM_PassKueue(benchmark::State& state) { pass(state, "kueue"); }

}  // namespace

// Each iteration's time is one ended job's share of the run (its passes).
BENCHMARK(BM_PassKubernetes)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PassVolcano)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PassSlurm)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PassKai)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PassKueue)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
