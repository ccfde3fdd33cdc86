// Topology queries on the shapes a 1M-job run asks about at every multi-node job start: the
// slowdown (hops + bottleneck) of a job's nodes and the lowest fitting domain, on a 1,024-node
// leaf-spine (128 leaves of 8 nodes, 16 leaves per spine, a core) and a 1,024-node rail fabric
// (32 groups of 32 nodes x 8 rails, a spine); plus the one-off build.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "models/topology.hpp"
#include "sim/rng.hpp"

namespace hm = headroom::models;

namespace {

hm::ClusterSpec cluster(int nodes) {
  hm::ClusterSpec c;
  c.pools.push_back({"h100", nodes, 8, "H100", 0, 0});
  return c;
}

std::shared_ptr<const hm::Topology> make(const hm::ClusterSpec& c, bool rail) {
  std::string error;
  auto spec = rail ? hm::rail_spec(c, 32, 8, 400, 0) : hm::leaf_spine_spec(c, 8, 16, 400, 0, 0);
  return hm::Topology::build(c, spec, error);
}

// Jobs of `nodes` nodes: a random first node and its neighbours (some span leaves), fixed seed.
std::vector<std::vector<hm::NodeId>> jobs(int count, int nodes, int total) {
  headroom::sim::RngStream rng(1, "bench/topology");
  std::vector<std::vector<hm::NodeId>> out(static_cast<std::size_t>(count));
  for (auto& j : out) {
    const auto first = static_cast<hm::NodeId>(rng.uniform() * (total - nodes));
    for (int i = 0; i < nodes; ++i) j.push_back(first + static_cast<hm::NodeId>(i * (1 + (i % 3))));
  }
  return out;
}

void slowdown(benchmark::State& state, bool rail) {
  const auto c = cluster(1024);
  const auto t = make(c, rail);
  const auto js = jobs(4096, static_cast<int>(state.range(0)), 820);
  std::size_t k = 0;
  double sum = 0;
  for (auto _ : state) sum += t->slowdown(js[k++ & 4095], 0.25);
  benchmark::DoNotOptimize(sum);
  if (!(sum >= static_cast<double>(state.iterations()))) state.SkipWithError("slowdown below 1");
  state.SetItemsProcessed(state.iterations());
}
void BM_SlowdownLeafSpine(benchmark::State& state) { slowdown(state, false); }
void BM_SlowdownRail(benchmark::State& state) { slowdown(state, true); }

void BM_LowestFittingDomain(benchmark::State& state) {
  const auto c = cluster(1024);
  const auto t = make(c, false);
  headroom::sim::RngStream rng(2, "bench/topology/free");
  std::vector<std::int32_t> free(1024);
  for (auto& f : free) f = static_cast<std::int32_t>(rng.uniform() * 9);
  std::int64_t need = 1;
  std::uint64_t found = 0;
  for (auto _ : state) {
    found += t->lowest_fitting_domain(free, need) != hm::kNoSwitch;
    need = need % 256 + 7;
  }
  benchmark::DoNotOptimize(found);
  if (found == 0) state.SkipWithError("no domain found");
  state.SetItemsProcessed(state.iterations());
}

void BM_Build(benchmark::State& state) {
  const auto c = cluster(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto t = make(c, false);
    if (!t) state.SkipWithError("build failed");
    benchmark::DoNotOptimize(t);
  }
}

}  // namespace

BENCHMARK(BM_SlowdownLeafSpine)->Arg(2)->Arg(8)->Arg(64);
BENCHMARK(BM_SlowdownRail)->Arg(2)->Arg(8)->Arg(64);
BENCHMARK(BM_LowestFittingDomain);
BENCHMARK(BM_Build)->Arg(1024)->Arg(10000);
