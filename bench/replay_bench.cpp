// Full replays through the whole pipeline (import, policy, simulation, result tables).
// The RICC log comes from ../shared/traces; the benchmark is skipped where it is absent.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "apps/pipeline.hpp"
#include "scenarios/scenario.hpp"

namespace {

void replay(benchmark::State& state, const char* scenario_rel, std::size_t expected_jobs) {
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/" + scenario_rel;
  headroom::scenarios::Scenario sc;
  try {
    sc = headroom::scenarios::load_scenario(path);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::size_t jobs = 0;
  for (auto _ : state) {
    auto out = headroom::app::run_scenario(sc);
    jobs = out.result.jobs.size();
    benchmark::DoNotOptimize(out.result.fingerprint);
  }
  if (jobs != expected_jobs) state.SkipWithError("unexpected job count");
  state.counters["jobs"] = static_cast<double>(jobs);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(jobs));
}

void BM_ReplayRiccFullFifo(benchmark::State& state) { replay(state, "bench/scenarios/ricc-full-fifo.yaml", 447794); }
void BM_ReplayRicc14dFifo(benchmark::State& state) { replay(state, "scenarios/examples/ricc-14d-fifo.yaml", 13607); }

}  // namespace

BENCHMARK(BM_ReplayRicc14dFifo)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayRiccFullFifo)->Unit(benchmark::kMillisecond)->Iterations(3);
