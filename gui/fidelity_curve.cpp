#include "gui/fidelity_curve.hpp"

#include <algorithm>
#include <cmath>

#include "results/fidelity.hpp"
#include "results/format.hpp"

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
  std::int64_t capacity = r.total_gpus;
  if (capacity <= 0)
    for (const results::PoolInfo& p : r.pools) capacity += static_cast<std::int64_t>(p.nodes) * p.gpus_per_node;
  if (capacity <= 0) return make_pyramid(std::move(t_days), {std::move(rec), std::move(sim)});
  // The trace's machine may have held more than this cluster has (a larger system, overlapping
  // records): such samples are drawn at the cluster size and the legend says how many and how
  // high, so that one anomaly does not stretch the axis and flatten the simulated line.
  const auto cap = static_cast<double>(capacity);
  std::size_t over = 0;
  double peak = 0;
  for (double& v : rec.y)
    if (v > cap) {
      ++over;
      peak = std::max(peak, v);
      v = cap;
    }
  const QString gpus = QString::fromStdString(results::thousands(capacity));
  if (over > 0)
    rec.name = QStringLiteral("recorded (trace), drawn at most %1: %2 above, peak %3")
                   .arg(gpus,
                        QString::fromStdString(results::thousands(static_cast<std::int64_t>(over))) +
                            (over == 1 ? QStringLiteral(" sample") : QStringLiteral(" samples")),
                        QString::fromStdString(results::thousands(static_cast<std::int64_t>(std::llround(peak)))));
  Curve size{QStringLiteral("cluster size (%1 GPUs)").arg(gpus), std::vector<double>(samples, cap)};
  return make_pyramid(std::move(t_days), {std::move(rec), std::move(sim), std::move(size)});
}

}  // namespace headroom::gui
