#include "traces/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/errors.hpp"
#include "sim/rng.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces {

namespace {

[[noreturn]] void bad(const std::string& option, const std::string& message) {
  throw sim::InputError("", 0, 0, option, message);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// Index drawn from cumulative weights (the last one is the total).
std::size_t pick(sim::RngStream& rng, const std::vector<double>& cumulative) {
  const double u = rng.uniform() * cumulative.back();
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return std::min(static_cast<std::size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

void append_seconds(std::string& out, sim::Tick ms) {
  out += std::to_string(ms / 1000);
  const auto frac = static_cast<int>(ms % 1000);
  if (frac == 0) return;
  char buf[8];
  std::snprintf(buf, sizeof buf, ".%03d", frac);
  std::string f(buf);
  while (f.back() == '0') f.pop_back();
  out += f;
}

}  // namespace

std::vector<std::pair<std::int32_t, double>> SynthOptions::default_gpu_mix() {
  return {{1, 0.70}, {2, 0.10}, {4, 0.08}, {8, 0.08}, {16, 0.03}, {32, 0.01}};
}

std::vector<std::pair<std::int32_t, double>> parse_gpu_mix(std::string_view text) {
  std::vector<std::pair<std::int32_t, double>> mix;
  const std::string expected = "expected GPUS:WEIGHT items separated by commas, like \"1:.7,2:.2,8:.1\"";
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = detail::trim(text.substr(0, comma));
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) bad("--gpu-mix", expected + ", got " + detail::quoted(item));
    const std::string_view count = detail::trim(item.substr(0, colon));
    const std::string_view weight = detail::trim(item.substr(colon + 1));
    std::int64_t g = 0;
    if (detail::parse_int(count, g) != detail::Parse::Ok || g < 1 || g > 1'000'000)
      bad("--gpu-mix", "expected a GPU count in 1..1000000, got " + detail::quoted(count));
    if (!detail::is_decimal(weight)) bad("--gpu-mix", "expected a weight such as 0.7, got " + detail::quoted(weight));
    const double wt = std::stod(std::string(weight));
    if (!(wt >= 0) || !std::isfinite(wt)) bad("--gpu-mix", "weights must be >= 0, got " + detail::quoted(weight));
    for (const auto& [c, _] : mix)
      if (c == g) bad("--gpu-mix", "GPU count " + std::to_string(g) + " appears twice");
    mix.emplace_back(static_cast<std::int32_t>(g), wt);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  double total = 0;
  for (const auto& [_, wt] : mix) total += wt;
  if (!(total > 0)) bad("--gpu-mix", "the weights add up to 0");
  return mix;
}

double synth_mean_runtime_s(sim::Tick median, double sigma) {
  const double a = sim::to_seconds(kSynthMinRuntime);
  const double b = sim::to_seconds(kSynthMaxRuntime);
  const double mu = std::log(sim::to_seconds(median));
  if (sigma == 0) return std::clamp(std::exp(mu), a, b);
  const double za = (std::log(a) - mu) / sigma;
  const double zb = (std::log(b) - mu) / sigma;
  // E[min(max(X, a), b)] for ln X ~ N(mu, sigma^2).
  const double inside = std::exp(mu + sigma * sigma / 2) * (normal_cdf(zb - sigma) - normal_cdf(za - sigma));
  return a * normal_cdf(za) + b * (1 - normal_cdf(zb)) + inside;
}

namespace {

double mean_gpus(const std::vector<std::pair<std::int32_t, double>>& mix) {
  double total = 0, sum = 0;
  for (const auto& [g, wt] : mix) total += wt, sum += g * wt;
  return sum / total;
}

void validate(const SynthOptions& o) {
  if (o.jobs < 0 || o.jobs > 100'000'000) bad("--jobs", "expected a job count in 1..100000000");
  if (o.span < 0) bad("--span", "expected a positive duration");
  if (o.tenants < 1 || o.tenants > 1'000'000) bad("--tenants", "expected a tenant count in 1..1000000");
  if (o.gpu_mix.empty()) bad("--gpu-mix", "the GPU mix is empty");
  if (o.runtime_median < kSynthMinRuntime || o.runtime_median > kSynthMaxRuntime)
    bad("--runtime-median", "expected a duration in 5s..7d");
  if (!(o.runtime_sigma >= 0) || o.runtime_sigma > 10) bad("--runtime-sigma", "expected a number in 0..10");
  const bool load = o.load != 0;
  if (load != (o.cluster_gpus != 0)) bad(load ? "--cluster-gpus" : "--load", "--load and --cluster-gpus go together");
  if (load) {
    if (!(o.load > 0) || o.load > 100) bad("--load", "expected an offered load in (0, 100], e.g. 0.9");
    if (o.cluster_gpus < 1) bad("--cluster-gpus", "expected a GPU count >= 1");
    if ((o.jobs > 0) == (o.span > 0)) bad("--jobs", "with --load give either --jobs or --span (not both)");
  } else if (o.jobs < 1) {
    bad("--jobs", "expected a job count >= 1 (or --load, --cluster-gpus and --span)");
  }
}

}  // namespace

double synth_arrival_rate(const SynthOptions& o) {
  if (o.load > 0 && o.cluster_gpus > 0)
    return o.load * static_cast<double>(o.cluster_gpus) /
           (mean_gpus(o.gpu_mix) * synth_mean_runtime_s(o.runtime_median, o.runtime_sigma));
  const sim::Tick span = o.span > 0 ? o.span : 7 * sim::kDay;
  return static_cast<double>(o.jobs) / sim::to_seconds(span);
}

models::Workload synthesize(const SynthOptions& o) {
  validate(o);
  const double rate = synth_arrival_rate(o);
  if (!(rate > 0) || !std::isfinite(rate)) bad("--load", "the options give no arrivals");
  sim::RngStream arrivals(o.seed, "synth/arrivals");
  sim::RngStream gpus(o.seed, "synth/gpus");
  sim::RngStream runtimes(o.seed, "synth/runtime");
  sim::RngStream tenants(o.seed, "synth/tenants");
  std::vector<double> mix_cum, tenant_cum;
  for (const auto& [_, wt] : o.gpu_mix) mix_cum.push_back((mix_cum.empty() ? 0 : mix_cum.back()) + wt);
  for (int k = 1; k <= o.tenants; ++k)
    tenant_cum.push_back((tenant_cum.empty() ? 0 : tenant_cum.back()) +
                         (o.tenant_dist == TenantDist::Zipf ? 1.0 / k : 1.0));

  models::Workload w;
  w.meta.format = "synthetic";
  const int width = static_cast<int>(std::to_string(o.tenants).size());
  for (int k = 1; k <= o.tenants; ++k) {
    std::string n = std::to_string(k);
    w.tenants.intern("tenant-" + std::string(static_cast<std::size_t>(width) - n.size(), '0') + n);
  }
  const models::QueueId queue = w.queues.intern("default");
  const double mu = std::log(sim::to_seconds(o.runtime_median));
  const bool by_count = o.jobs > 0;
  const std::int64_t max_jobs = by_count ? o.jobs : 100'000'000;
  double t = 0;  // seconds
  for (std::int64_t i = 0; i < max_jobs; ++i) {
    t += arrivals.exponential(rate);
    const auto submit = static_cast<sim::Tick>(std::llround(t * 1000.0));
    if (!by_count && submit >= o.span) break;
    if (submit > detail::kMaxSeconds * sim::kSecond) bad("--jobs", "arrivals run past the largest time");
    models::Job j;
    j.trace_id = i + 1;
    j.queue = queue;
    j.tenant = static_cast<models::TenantId>(pick(tenants, tenant_cum));
    j.gpus = o.gpu_mix[pick(gpus, mix_cum)].first;
    const double r = runtimes.lognormal(mu, o.runtime_sigma);
    j.runtime = std::clamp(static_cast<sim::Tick>(std::llround(std::min(r, 1e12) * 1000.0)), kSynthMinRuntime,
                           kSynthMaxRuntime);
    j.submit = submit;
    w.jobs.push_back(j);
    ++w.meta.rows;
  }
  return w;
}

void write_native_csv(std::ostream& os, const models::Workload& w) {
  std::string out = "id,tenant,queue,submit,gpus,runtime\n";
  for (const models::Job& j : w.jobs) {
    out += std::to_string(j.trace_id);
    out += ',';
    out += w.tenants.name(j.tenant);
    out += ',';
    out += w.queues.name(j.queue);
    out += ',';
    append_seconds(out, j.submit);
    out += ',';
    out += std::to_string(j.gpus);
    out += ',';
    append_seconds(out, j.runtime);
    out += '\n';
    if (out.size() > (1u << 20)) {
      os << out;
      out.clear();
    }
  }
  os << out;
}

}  // namespace headroom::traces
