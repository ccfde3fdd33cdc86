#include "results/fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "models/job.hpp"
#include "results/format.hpp"
#include "results/summary.hpp"

namespace headroom::results {
namespace {

constexpr auto kRejected = static_cast<std::uint8_t>(models::JobState::Rejected);

double pearson_of(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  if (n < 2) return 0;
  long double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<long double>(n);
  my /= static_cast<long double>(n);
  long double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const long double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx <= 0 || syy <= 0) return 0;
  return static_cast<double>(sxy / std::sqrt(sxx * syy));
}

// Ranks 1..n, tied values sharing the mean of their ranks.
std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = mean;
    i = j + 1;
  }
  return rank;
}

struct Pairs {
  std::vector<Tick> sim, rec;
  std::int64_t censored = 0;
};

std::vector<FidelityStats> by_group(const std::map<std::uint32_t, Pairs>& groups,
                                    const std::vector<std::string>& names) {
  std::vector<FidelityStats> out;
  for (const auto& [id, p] : groups) {
    out.push_back(fidelity_stats(p.sim, p.rec, p.censored));
    if (id < names.size())
      out.back().name = names[id];
    else
      out.back().name = std::string("#").append(std::to_string(id));
  }
  std::sort(out.begin(), out.end(), [](const FidelityStats& a, const FidelityStats& b) {
    return a.jobs != b.jobs ? a.jobs > b.jobs : a.name < b.name;
  });
  return out;
}

std::string fixed2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

void stats_json(std::ostream& out, const FidelityStats& s) {
  out << "\"jobs\": " << s.jobs << ", \"never_started\": " << s.never_started
      << ", \"mean_abs_error_s\": " << json_number(s.mean_abs_error_s)
      << ", \"median_abs_error_s\": " << json_number(s.median_abs_error_s)
      << ", \"mean_wait_sim_s\": " << json_number(s.mean_wait_sim_s)
      << ", \"mean_wait_recorded_s\": " << json_number(s.mean_wait_recorded_s)
      << ", \"pearson\": " << json_number(s.pearson) << ", \"spearman\": " << json_number(s.spearman)
      << ", \"within_10m\": " << json_number(s.within_10m) << ", \"within_1h\": " << json_number(s.within_1h);
}

}  // namespace

FidelityStats fidelity_stats(const std::vector<Tick>& sim, const std::vector<Tick>& recorded, std::int64_t censored) {
  FidelityStats s;
  const std::size_t n = std::min(sim.size(), recorded.size());
  s.jobs = static_cast<std::int64_t>(n);
  s.never_started = censored;
  if (n == 0) return s;
  std::vector<Tick> err(n);
  std::vector<double> x(n), y(n);
  long double sum_err = 0, sum_s = 0, sum_r = 0;
  std::int64_t in10 = 0, in60 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    err[i] = sim[i] > recorded[i] ? sim[i] - recorded[i] : recorded[i] - sim[i];
    sum_err += err[i];
    sum_s += sim[i];
    sum_r += recorded[i];
    in10 += err[i] <= 10 * sim::kMinute;
    in60 += err[i] <= sim::kHour;
    x[i] = sim::to_seconds(sim[i]);
    y[i] = sim::to_seconds(recorded[i]);
  }
  const auto dn = static_cast<long double>(n);
  s.mean_abs_error_s = static_cast<double>(sum_err / dn / 1000.0L);
  s.mean_wait_sim_s = static_cast<double>(sum_s / dn / 1000.0L);
  s.mean_wait_recorded_s = static_cast<double>(sum_r / dn / 1000.0L);
  const std::size_t mid = (n + 1) / 2 - 1;  // nearest rank, as the summary's median
  std::nth_element(err.begin(), err.begin() + static_cast<std::ptrdiff_t>(mid), err.end());
  s.median_abs_error_s = sim::to_seconds(err[mid]);
  s.within_10m = static_cast<double>(in10) / static_cast<double>(n);
  s.within_1h = static_cast<double>(in60) / static_cast<double>(n);
  s.pearson = pearson_of(x, y);
  s.spearman = pearson_of(ranks_of(x), ranks_of(y));
  return s;
}

Fidelity compute_fidelity(const RunResult& r, Tick from, Tick to) {
  Fidelity f;
  Pairs all;
  std::map<std::uint32_t, Pairs> tenants, queues;
  for (const JobRecord& j : r.jobs) {
    if (j.submit < from || j.submit >= to) continue;
    ++f.jobs;
    if (j.trace_start < 0) {
      ++f.without_record;
      continue;
    }
    if (j.state == kRejected && j.start < 0) {
      ++f.rejected;
      continue;
    }
    const Tick s = headline_wait(j, r.sim_end);
    const Tick rec = std::max<Tick>(0, j.trace_start - j.submit);
    const bool censored = j.start < 0;
    for (Pairs* p : {&all, &tenants[j.tenant], &queues[j.queue]}) {
      p->sim.push_back(s);
      p->rec.push_back(rec);
      p->censored += censored;
    }
  }
  f.all = fidelity_stats(all.sim, all.rec, all.censored);
  f.tenants = by_group(tenants, r.tenants);
  f.queues = by_group(queues, r.queues);
  return f;
}

std::vector<double> recorded_gpus_in_use(const RunResult& r, const std::vector<Tick>& times) {
  // Changes of recorded use (+ at a start, - at an end), swept once along the sorted times.
  std::vector<std::pair<Tick, std::int64_t>> steps;
  for (const JobRecord& j : r.jobs) {
    if (j.trace_start < 0 || j.runtime <= 0) continue;
    const std::int64_t milli = j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli : std::int64_t{j.gpus} * 1000;
    steps.emplace_back(j.trace_start, milli);
    steps.emplace_back(j.trace_start + j.runtime, -milli);
  }
  std::sort(steps.begin(), steps.end());
  std::vector<std::size_t> order(times.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return times[a] < times[b]; });
  std::vector<double> out(times.size(), 0.0);
  std::int64_t level = 0;
  std::size_t k = 0;
  for (std::size_t i : order) {
    while (k < steps.size() && steps[k].first <= times[i]) level += steps[k++].second;
    out[i] = static_cast<double>(level) / 1000.0;
  }
  return out;
}

void print_fidelity(std::ostream& out, const Fidelity& f, std::size_t max_rows) {
  if (!f.available()) return;
  const FidelityStats& a = f.all;
  out << "fidelity vs the recorded history (docs/fidelity.md): " << thousands(a.jobs) << " jobs compared";
  if (a.never_started > 0) out << " (" << thousands(a.never_started) << " never started: wait censored at the end)";
  if (f.without_record > 0) out << ", " << thousands(f.without_record) << " without a recorded start";
  if (f.rejected > 0) out << ", " << thousands(f.rejected) << " rejected";
  out << "\n";
  out << "  mean wait  simulated " << short_duration(a.mean_wait_sim_s) << ", recorded "
      << short_duration(a.mean_wait_recorded_s) << "\n";
  out << "  abs error  median " << short_duration(a.median_abs_error_s) << ", mean "
      << short_duration(a.mean_abs_error_s) << "\n";
  out << "  correlation  Pearson " << fixed2(a.pearson) << ", Spearman " << fixed2(a.spearman) << "\n";
  out << "  within 10 min " << percent(a.within_10m, 0) << ", within 1 h " << percent(a.within_1h, 0) << "\n";
  const auto table = [&](const char* what, const std::vector<FidelityStats>& rows) {
    if (rows.size() < 2) return;
    char line[200];
    std::snprintf(line, sizeof line, "  %-16s %7s %10s %10s %10s %8s %8s %7s\n", what, "jobs", "wait sim", "wait rec",
                  "med err", "pearson", "spearman", "<=1h");
    out << line;
    for (std::size_t i = 0; i < rows.size() && i < max_rows; ++i) {
      const auto& s = rows[i];
      std::snprintf(line, sizeof line, "  %-16.16s %7lld %10s %10s %10s %8.2f %8.2f %7s\n", s.name.c_str(),
                    static_cast<long long>(s.jobs), short_duration(s.mean_wait_sim_s).c_str(),
                    short_duration(s.mean_wait_recorded_s).c_str(), short_duration(s.median_abs_error_s).c_str(),
                    s.pearson, s.spearman, percent(s.within_1h, 0).c_str());
      out << line;
    }
    if (rows.size() > max_rows) out << "  ... and " << rows.size() - max_rows << " more\n";
  };
  table("tenant", f.tenants);
  table("queue", f.queues);
}

void print_fidelity_json(std::ostream& out, const Fidelity& f, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  out << "{\n" << pad << "  \"jobs\": " << f.jobs << ",\n";
  out << pad << "  \"without_record\": " << f.without_record << ",\n";
  out << pad << "  \"rejected\": " << f.rejected << ",\n";
  out << pad << "  \"all\": {";
  stats_json(out, f.all);
  out << "},\n";
  const auto list = [&](const char* key, const std::vector<FidelityStats>& rows, bool last) {
    out << pad << "  \"" << key << "\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out << (i == 0 ? "\n" : ",\n") << pad << "    {\"name\": " << json_string(rows[i].name) << ", ";
      stats_json(out, rows[i]);
      out << "}";
    }
    out << (rows.empty() ? "]" : "\n" + pad + "  ]") << (last ? "\n" : ",\n");
  };
  list("tenants", f.tenants, false);
  list("queues", f.queues, true);
  out << pad << "}";
}

void print_json_with_fidelity(std::ostream& out, const std::string& json_object, const Fidelity& f) {
  const auto close = json_object.rfind('}');
  if (!f.available() || close == std::string::npos) {
    out << json_object;
    return;
  }
  std::size_t cut = close;
  while (cut > 0 && (json_object[cut - 1] == '\n' || json_object[cut - 1] == ' ')) --cut;
  out << json_object.substr(0, cut) << ",\n  \"fidelity\": ";
  print_fidelity_json(out, f, 2);
  out << "\n}" << json_object.substr(close + 1);
}

}  // namespace headroom::results
