// The hold model: with N events pending, pop the earliest and push one a random interval later.
// Measures headroom's EventQueue against a bare binary heap of (time, sequence) pairs.
#include <benchmark/benchmark.h>

#include <queue>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

namespace hs = headroom::sim;

namespace {

std::vector<hs::Tick> increments(std::size_t n) {
  hs::RngStream rng(1, "bench/hold");
  std::vector<hs::Tick> out(n);
  for (auto& v : out) v = static_cast<hs::Tick>(rng.exponential(1.0 / 1000.0));
  return out;
}

void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const auto inc = increments(1 << 16);
  hs::EventQueue q;
  for (std::size_t i = 0; i < pending; ++i) q.push(inc[i & 0xffff], hs::EventClass::JobFinish, i);
  std::size_t k = 0;
  std::uint64_t checksum = 0;
  for (auto _ : state) {
    const hs::Event e = q.pop();
    checksum += e.payload;
    q.push(e.time + inc[k++ & 0xffff], hs::EventClass::JobFinish, e.payload);
  }
  benchmark::DoNotOptimize(checksum);
  if (q.live_size() != pending) state.SkipWithError("queue size changed");
  state.SetItemsProcessed(state.iterations());
}

// Same hold loop, but every other pushed event is cancelled (a preempted job's finish event).
void BM_EventQueueHoldWithCancel(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const auto inc = increments(1 << 16);
  hs::EventQueue q;
  for (std::size_t i = 0; i < pending; ++i) q.push(inc[i & 0xffff], hs::EventClass::JobFinish, i);
  std::size_t k = 0;
  for (auto _ : state) {
    const hs::Event e = q.pop();
    const auto id = q.push(e.time + inc[k++ & 0xffff], hs::EventClass::JobFinish, e.payload);
    const auto extra = q.push(e.time + inc[k++ & 0xffff], hs::EventClass::JobFinish, e.payload);
    q.cancel((k & 2) ? id : extra);
  }
  state.SetItemsProcessed(state.iterations());
}

struct Bare {
  hs::Tick time;
  std::uint64_t seq;
  bool operator>(const Bare& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

void BM_BareBinaryHeapHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const auto inc = increments(1 << 16);
  std::priority_queue<Bare, std::vector<Bare>, std::greater<>> q;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < pending; ++i) q.push({inc[i & 0xffff], seq++});
  std::size_t k = 0;
  std::uint64_t checksum = 0;
  for (auto _ : state) {
    const Bare e = q.top();
    q.pop();
    checksum += e.seq;
    q.push({e.time + inc[k++ & 0xffff], seq++});
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_EventQueueHold)->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_EventQueueHoldWithCancel)->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_BareBinaryHeapHold)->Arg(1000)->Arg(100000)->Arg(1000000);
