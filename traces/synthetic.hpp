#pragma once

// A seeded synthetic workload for load studies (`headroom synth`): Poisson arrivals, lognormal run
// times, a GPU-count mix and Zipf-like or uniform tenants. The same options and seed give the same
// jobs on every machine that computes the same libm results; each quantity draws from its own
// named stream (sim::RngStream(seed, "synth/...")), so changing one distribution leaves the
// others' draws unchanged.

#include <cstdint>
#include <ostream>
#include <string_view>
#include <utility>
#include <vector>

#include "models/workload.hpp"
#include "sim/time.hpp"

namespace headroom::traces {

enum class TenantDist { Zipf, Uniform };

struct SynthOptions {
  std::int64_t jobs = 0;  // number of jobs; 0 = as many as arrive within `span` (needs `load`)
  sim::Tick span = 0;     // arrival window; 0 = unset (7 days without `load`)
  std::uint64_t seed = 1;
  int tenants = 8;
  TenantDist tenant_dist = TenantDist::Zipf;  // tenant k of K drawn with weight 1/k, or uniformly
  std::vector<std::pair<std::int32_t, double>> gpu_mix = default_gpu_mix();  // (GPUs, weight)
  sim::Tick runtime_median = 600 * sim::kSecond;
  double runtime_sigma = 2.0;  // of ln(run time)
  double load = 0;             // target offered load (GPU demand / capacity); 0 = unset
  std::int64_t cluster_gpus = 0;

  static std::vector<std::pair<std::int32_t, double>> default_gpu_mix();
};

inline constexpr sim::Tick kSynthMinRuntime = 5 * sim::kSecond;
inline constexpr sim::Tick kSynthMaxRuntime = 7 * sim::kDay;

// "1:.7,2:.1,4:.08" -> {(1, .7), (2, .1), (4, .08)}; weights need not sum to 1. Throws
// sim::InputError (where = "--gpu-mix") when malformed.
std::vector<std::pair<std::int32_t, double>> parse_gpu_mix(std::string_view text);

// Mean of a lognormal run time (median, sigma) clipped to [kSynthMinRuntime, kSynthMaxRuntime], s.
double synth_mean_runtime_s(sim::Tick median, double sigma);

// The arrival rate (jobs per second) the options imply: jobs / span, or, with `load` and
// `cluster_gpus`, load x cluster_gpus / (mean GPUs x mean run time).
double synth_arrival_rate(const SynthOptions& options);

// Throws sim::InputError (where = the option, e.g. "--load") on inconsistent options.
models::Workload synthesize(const SynthOptions& options);

// The workload in headroom's native CSV (id,tenant,queue,submit,gpus,runtime); times in seconds
// with up to three decimals.
void write_native_csv(std::ostream& os, const models::Workload& w);

}  // namespace headroom::traces
