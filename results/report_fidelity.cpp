// The report's fidelity section (results/fidelity.hpp, docs/fidelity.md): the block as tables, the
// recorded and simulated wait CDFs, and recorded against simulated GPUs in use over time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "results/fidelity.hpp"
#include "results/format.hpp"
#include "results/report.hpp"
#include "results/summary.hpp"

namespace headroom::results {

namespace {

std::string f2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}
std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * v);
  return b;
}

// The empirical CDF of `hours` (sorted here), at most 400 steps.
Series cdf(std::string name, std::vector<double> hours) {
  std::sort(hours.begin(), hours.end());
  Series s{std::move(name), {0}, {0}};
  const std::size_t n = hours.size(), points = std::min<std::size_t>(n, 400);
  for (std::size_t k = 0; k < points; ++k) {
    const std::size_t i = points == n ? k : (k + 1) * n / points - 1;
    s.x.push_back(hours[i]);
    s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
  }
  return s;
}

void rows(std::ostringstream& o, const char* what, const std::vector<FidelityStats>& list, std::size_t max) {
  o << "<table><tr><th>" << what
    << "</th><th>jobs</th><th>never started</th><th>mean wait sim</th><th>mean wait recorded</th><th>median abs "
       "error</th><th>mean abs error</th><th>Pearson</th><th>Spearman</th><th>within 10 min</th><th>within 1 "
       "h</th></tr>";
  for (std::size_t i = 0; i < list.size() && i < max; ++i) {
    const auto& s = list[i];
    o << "<tr><td>" << html_escape(s.name.empty() ? "all" : s.name) << "</td><td>" << thousands(s.jobs) << "</td><td>"
      << thousands(s.never_started) << "</td><td>" << short_duration(s.mean_wait_sim_s) << "</td><td>"
      << short_duration(s.mean_wait_recorded_s) << "</td><td>" << short_duration(s.median_abs_error_s) << "</td><td>"
      << short_duration(s.mean_abs_error_s) << "</td><td>" << f2(s.pearson) << "</td><td>" << f2(s.spearman)
      << "</td><td>" << pct(s.within_10m) << "</td><td>" << pct(s.within_1h) << "</td></tr>";
  }
  o << "</table>";
  if (list.size() > max)
    o << "<p class=\"note\">" << thousands(static_cast<std::int64_t>(list.size() - max)) << " more not shown.</p>";
}

}  // namespace

std::string fidelity_section(const RunResult& r) {
  const Fidelity f = compute_fidelity(r);
  if (!f.available()) return {};
  std::ostringstream o;
  o << "<h3>Fidelity: the replay against the recorded history</h3>";
  o << "<p class=\"note\">Per job, simulated wait against the wait the trace recorded; " << thousands(f.all.jobs)
    << " jobs compared";
  if (f.all.never_started > 0)
    o << ", " << thousands(f.all.never_started) << " never started (wait censored at the end)";
  if (f.without_record > 0) o << ", " << thousands(f.without_record) << " without a recorded start";
  o << ". Definitions: docs/fidelity.md.</p>";
  rows(o, "", {f.all}, 1);
  if (f.queues.size() > 1) rows(o, "queue", f.queues, 10);
  if (f.tenants.size() > 1) rows(o, "tenant", f.tenants, 10);

  std::vector<double> sim_h, rec_h;
  for (const JobRecord& j : r.jobs) {
    if (j.trace_start < 0) continue;
    const Tick w = headline_wait(j, r.sim_end);
    if (w < 0) continue;
    sim_h.push_back(sim::to_seconds(w) / 3600.0);
    rec_h.push_back(sim::to_seconds(std::max<Tick>(0, j.trace_start - j.submit)) / 3600.0);
  }
  Chart c;
  c.title = "Wait CDF: recorded vs simulated";
  c.x_label = "wait (hours)";
  c.y_label = "fraction of compared jobs";
  c.y_percent = true;
  c.y_max = 1.0;
  o << svg_chart(c, {cdf("recorded", rec_h), cdf("simulated", sim_h)});

  const auto& ts = r.timeseries;
  const std::size_t S = ts.time.size(), P = r.pools.size();
  if (S > 0 && P > 0 && ts.pool_used_gpus.size() == S * P) {
    const bool days = r.sim_end - r.sim_start > 3 * sim::kDay;
    const double div = static_cast<double>(days ? sim::kDay : sim::kHour);
    std::vector<double> recorded = recorded_gpus_in_use(r, ts.time);
    // The trace's machine may have run more GPUs than this cluster has (a larger system,
    // overlapping records): those samples are drawn at the cluster size and said so, so that one
    // anomaly neither goes past the cluster nor flattens the simulated line (issue #36).
    const double cap = static_cast<double>(r.total_gpus);
    std::int64_t over = 0;
    double peak = 0;
    if (cap > 0)
      for (double& v : recorded)
        if (v > cap) {
          ++over;
          peak = std::max(peak, v);
          v = cap;
        }
    Series sim{"simulated", {}, {}}, rec{"recorded (trace)", {}, {}};
    for (std::size_t i = 0; i < S; ++i) {
      const double x = static_cast<double>(ts.time[i] - r.sim_start) / div;
      double used = 0;
      for (std::size_t p = 0; p < P; ++p) used += ts.pool_used_gpus[i * P + p];
      sim.x.push_back(x);
      sim.y.push_back(used);
      rec.x.push_back(x);
      rec.y.push_back(recorded[i]);
    }
    Chart u;
    u.title = "GPUs in use: recorded vs simulated";
    // Dates when the trace gives its start, as on every other chart over time.
    u.calendar_ms = r.unix_start >= 0 ? r.unix_start * 1000 + r.sim_start : -1;
    u.x_unit_ms = div;
    u.x_label = u.calendar_ms >= 0 ? std::string("date (UTC)")
                                   : std::string("time since the first submit (") + (days ? "days" : "hours") + ")";
    u.y_label = "GPUs in use";
    if (cap > 0) u.levels.push_back({cap, "cluster size (" + thousands(r.total_gpus) + " GPUs)"});
    o << svg_chart(u, {rec, sim});
    if (over > 0)
      o << "<p class=\"note fidelity-clipped\">The trace recorded more GPUs in use than this cluster has in "
        << thousands(over) << " of " << thousands(static_cast<std::int64_t>(S)) << " samples (up to "
        << thousands(static_cast<std::int64_t>(std::llround(peak))) << " of " << thousands(r.total_gpus)
        << "): the recorded system was larger, or its records overlap. Those samples are drawn at the cluster "
           "size.</p>";
  }
  return o.str();
}

}  // namespace headroom::results
