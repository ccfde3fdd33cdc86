#include "gui/fidelity_curve.hpp"

#include <algorithm>

#include "results/fidelity.hpp"

namespace headroom::gui {

Pyramid fidelity_curves(const results::RunResult& r, std::vector<double> t_days) {
  const auto& ts = r.timeseries;
  const std::size_t samples = ts.time.size();
  const bool recorded = std::any_of(r.jobs.begin(), r.jobs.end(), [](const auto& j) { return j.trace_start >= 0; });
  if (!recorded || samples == 0 || t_days.size() != samples || ts.pool_used_gpus.size() % samples != 0) return {};
  Curve rec{QStringLiteral("recorded (trace)"), results::recorded_gpus_in_use(r, ts.time)};
  Curve sim{QStringLiteral("simulated"), std::vector<double>(samples, 0.0)};
  const std::size_t width = ts.pool_used_gpus.size() / samples;
  for (std::size_t s = 0; s < samples; ++s)
    for (std::size_t p = 0; p < width; ++p) sim.y[s] += ts.pool_used_gpus[s * width + p];
  return make_pyramid(std::move(t_days), {std::move(rec), std::move(sim)});
}

}  // namespace headroom::gui
