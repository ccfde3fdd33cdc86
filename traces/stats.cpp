#include "traces/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace headroom::traces {

namespace {

double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(q * n - 1e-9)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

// 12345678 -> "12,345,678"; non-integral values get one decimal ("61.3").
std::string num(double v) {
  char buf[64];
  const double r = std::round(v);
  if (std::fabs(v - r) < 1e-9 || std::fabs(v) >= 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", r);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  }
  std::string s = buf;
  const std::size_t digits_end = s.find('.') == std::string::npos ? s.size() : s.find('.');
  const std::size_t digits_begin = s[0] == '-' ? 1 : 0;
  for (std::size_t i = digits_end; i > digits_begin + 3; i -= 3) s.insert(i - 3, 1, ',');
  return s;
}

std::string pct(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string seconds(sim::Tick t) { return num(sim::to_seconds(t)) + " s"; }

void print_distribution(std::ostream& os, const char* label, const Distribution& d) {
  os << label << " (n = " << num(static_cast<double>(d.n)) << ")";
  if (d.n == 0) {
    os << ": none\n";
    return;
  }
  os << ": median " << num(d.p50) << " s, mean " << num(d.mean) << " s, p90 " << num(d.p90) << " s, p99 " << num(d.p99)
     << " s, max " << num(d.max) << " s\n";
}

}  // namespace

Distribution distribution(std::vector<double>& values) {
  Distribution d;
  d.n = static_cast<std::int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  d.p50 = nearest_rank(values, 0.5);
  d.p90 = nearest_rank(values, 0.9);
  d.p99 = nearest_rank(values, 0.99);
  d.max = values.back();
  return d;
}

TraceStats compute_stats(const models::Workload& w, std::size_t top_tenants) {
  TraceStats s;
  s.path = w.meta.path;
  s.format = w.meta.format;
  s.rows = w.meta.rows;
  s.skipped = w.meta.skipped;
  s.jobs = static_cast<std::int64_t>(w.jobs.size());
  s.last_end = -1;
  std::vector<double> runtimes, delays;
  runtimes.reserve(w.jobs.size());
  std::vector<TenantShare> tenants(w.tenants.size());
  for (std::size_t i = 0; i < tenants.size(); ++i) tenants[i].name = w.tenants.name(static_cast<std::uint32_t>(i));
  bool first = true;
  for (const models::Job& j : w.jobs) {
    const std::int64_t milli = models::gpu_demand_milli(j);
    if (milli > 0) ++s.gpu_jobs;
    if (milli == 0) ++s.cpu_only_jobs;
    if (j.gpu_milli > 0 && j.gpus <= 1) ++s.fractional_jobs;
    s.max_gpus = std::max<std::int64_t>(s.max_gpus, j.gpus);
    s.first_submit = first ? j.submit : std::min(s.first_submit, j.submit);
    s.last_submit = first ? j.submit : std::max(s.last_submit, j.submit);
    first = false;
    s.last_end = std::max(s.last_end, j.trace_end);
    const double gh = static_cast<double>(milli) / 1000.0 * sim::to_seconds(j.runtime) / 3600.0;
    s.gpu_hours += gh;
    runtimes.push_back(sim::to_seconds(j.runtime));
    if (j.trace_start >= 0) delays.push_back(sim::to_seconds(j.trace_start - j.submit));
    TenantShare& t = tenants.at(j.tenant);
    ++t.jobs;
    t.gpu_hours += gh;
    ++s.status_counts[static_cast<std::size_t>(j.trace_status)];
  }
  s.runtime = distribution(runtimes);
  s.queue_delay = distribution(delays);
  std::erase_if(tenants, [](const TenantShare& t) { return t.jobs == 0; });
  s.tenant_count = static_cast<std::int64_t>(tenants.size());
  const bool by_hours = s.gpu_hours > 0;
  for (auto& t : tenants)
    t.share = by_hours ? t.gpu_hours / s.gpu_hours : static_cast<double>(t.jobs) / static_cast<double>(s.jobs);
  // Largest share first; ties keep first-seen order.
  std::stable_sort(tenants.begin(), tenants.end(),
                   [](const TenantShare& a, const TenantShare& b) { return a.share > b.share; });
  if (tenants.size() > top_tenants) {
    TenantShare rest;
    rest.name = std::string(1, '(').append(std::to_string(tenants.size() - top_tenants)).append(" others)");
    for (std::size_t i = top_tenants; i < tenants.size(); ++i) {
      rest.jobs += tenants[i].jobs;
      rest.gpu_hours += tenants[i].gpu_hours;
      rest.share += tenants[i].share;
    }
    tenants.resize(top_tenants);
    tenants.push_back(rest);
  }
  s.tenants = std::move(tenants);
  return s;
}

void print_stats(std::ostream& os, const TraceStats& s) {
  const auto jobs = static_cast<double>(s.jobs);
  os << "trace: " << s.path << " (" << s.format << ")\n";
  os << "rows: " << num(static_cast<double>(s.rows)) << " read, " << num(static_cast<double>(s.skipped))
     << " skipped\n";
  os << "jobs: " << num(jobs) << " (" << num(static_cast<double>(s.gpu_jobs)) << " with GPUs, "
     << num(static_cast<double>(s.fractional_jobs)) << " of them a fraction of one GPU; "
     << num(static_cast<double>(s.cpu_only_jobs)) << " CPU-only); largest request "
     << num(static_cast<double>(s.max_gpus)) << " GPUs\n";
  os << "span: submit " << seconds(s.first_submit) << " .. " << seconds(s.last_submit) << " ("
     << sim::format_duration(s.last_submit - s.first_submit) << ")";
  if (s.last_end >= 0) os << ", last end " << seconds(s.last_end);
  os << "\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", s.gpu_hours);
  os << "GPU-hours: " << num(std::round(s.gpu_hours)) << " (" << buf << ", GPUs x recorded run time)\n";
  print_distribution(os, "run time", s.runtime);
  print_distribution(os, "queue delay", s.queue_delay);
  os << "status: completed " << num(static_cast<double>(s.status_counts[1])) << " ("
     << pct(static_cast<double>(s.status_counts[1]), jobs) << "), failed "
     << num(static_cast<double>(s.status_counts[2])) << " (" << pct(static_cast<double>(s.status_counts[2]), jobs)
     << "), cancelled " << num(static_cast<double>(s.status_counts[3])) << " ("
     << pct(static_cast<double>(s.status_counts[3]), jobs) << "), unknown "
     << num(static_cast<double>(s.status_counts[0])) << " (" << pct(static_cast<double>(s.status_counts[0]), jobs)
     << ")\n";
  os << "tenants: " << num(static_cast<double>(s.tenant_count)) << " (share of GPU-hours)\n";
  std::size_t width = 6;
  for (const auto& t : s.tenants) width = std::max(width, t.name.size());
  for (const auto& t : s.tenants) {
    std::snprintf(buf, sizeof buf, "%6.1f %%", 100.0 * t.share);
    os << "  " << t.name << std::string(width - t.name.size(), ' ') << "  " << buf << "  "
       << num(static_cast<double>(t.jobs)) << " jobs, " << num(std::round(t.gpu_hours)) << " GPU-hours\n";
  }
}

}  // namespace headroom::traces
