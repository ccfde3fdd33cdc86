#include "results/groups.hpp"

#include <algorithm>
#include <limits>

#include "models/job.hpp"
#include "results/summary.hpp"

namespace headroom::results {

namespace {

struct Acc {
  std::int64_t jobs = 0, started = 0, completed = 0, rejected = 0, never_started = 0;
  long double milli_ms = 0;
  std::vector<Tick> waits, jcts;
};

// Mean and p95 in seconds; NaN for an empty group (shown as "-", null in JSON).
double mean_s(const std::vector<Tick>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  long double s = 0;
  for (Tick x : v) s += static_cast<long double>(x);
  return static_cast<double>(s / static_cast<long double>(v.size()) / 1000.0L);
}

// Nearest rank: the element at ceil(0.95 n) - 1.
double p95_s(std::vector<Tick> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t i = (95 * v.size() + 99) / 100 - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return sim::to_seconds(v[i]);
}

template <class Key>
std::vector<GroupStats> group_stats(const RunResult& r, std::size_t groups, Key key) {
  std::vector<Acc> acc(groups);
  const auto completed = static_cast<std::uint8_t>(models::JobState::Completed);
  const auto rejected = static_cast<std::uint8_t>(models::JobState::Rejected);
  for (const auto& j : r.jobs) {
    const std::size_t g = key(j);
    if (g >= acc.size()) acc.resize(g + 1);
    Acc& a = acc[g];
    ++a.jobs;
    a.rejected += j.state == rejected;
    if (const Tick wait = headline_wait(j, r.sim_end); wait >= 0) a.waits.push_back(wait);
    if (j.start < 0) {
      a.never_started += never_started(j);
      continue;
    }
    ++a.started;
    const Tick until = j.end >= 0 ? j.end : r.sim_end;
    const std::int64_t milli = j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli : static_cast<std::int64_t>(j.gpus) * 1000;
    a.milli_ms += static_cast<long double>(milli) * static_cast<long double>(std::max<Tick>(0, until - j.start));
    if (j.state == completed && j.end >= 0) {
      ++a.completed;
      a.jcts.push_back(j.end - j.submit);
    }
  }
  std::vector<GroupStats> out(acc.size());
  for (std::size_t g = 0; g < acc.size(); ++g) {
    GroupStats& s = out[g];
    s.jobs = acc[g].jobs;
    s.started = acc[g].started;
    s.completed = acc[g].completed;
    s.rejected = acc[g].rejected;
    s.never_started = acc[g].never_started;
    s.wait_mean_s = mean_s(acc[g].waits);
    s.wait_p95_s = p95_s(acc[g].waits);
    s.jct_mean_s = mean_s(acc[g].jcts);
    s.jct_p95_s = p95_s(acc[g].jcts);
    s.gpu_hours = static_cast<double>(acc[g].milli_ms / 1000.0L / static_cast<long double>(sim::kHour));
  }
  return out;
}

// "#N" for a group without a name (built by append: GCC 12 warns falsely on "#" + to_string).
std::string unnamed(std::size_t i) {
  std::string s = "#";
  s.append(std::to_string(i));
  return s;
}

}  // namespace

std::vector<GroupStats> stats_by_tenant(const RunResult& r) {
  auto out = group_stats(r, r.tenants.size(), [](const JobRecord& j) { return std::size_t{j.tenant}; });
  for (std::size_t t = 0; t < out.size(); ++t) out[t].name = t < r.tenants.size() ? r.tenants[t] : unnamed(t);
  return out;
}

std::vector<GroupStats> stats_by_kind(const RunResult& r) {
  auto out = group_stats(r, 4, [](const JobRecord& j) { return std::size_t{j.kind}; });
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k].name = k < 4 ? std::string(models::to_string(static_cast<models::JobKind>(k))) : unnamed(k);
  return out;
}

}  // namespace headroom::results
