#include "models/service.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numbers>

#include "sim/errors.hpp"
#include "sim/interrupt.hpp"

namespace headroom::models {

double LoadCurve::rate(Tick t) const {
  if (!table.empty()) {
    auto it = std::upper_bound(table.begin(), table.end(), t,
                               [](Tick v, const std::pair<Tick, double>& row) { return v < row.first; });
    return it == table.begin() ? table.front().second : std::prev(it)->second;
  }
  const double phase =
      2.0 * std::numbers::pi * static_cast<double>((t - peak) % sim::kDay) / static_cast<double>(sim::kDay);
  return std::max(0.0, mean_rate * (1.0 + diurnal_amplitude * std::cos(phase)));
}

StepRates::StepRates(const LoadCurve& load, Tick from, Tick to, Tick step) : load_(load) {
  if (!load.table.empty() || load.diurnal_amplitude == 0) return;
  if (to - from <= sim::kDay || step <= 0 || sim::kDay % step != 0) return;
  const Tick r0 = ((from - load.peak) % step + step) % step;  // (t - peak) mod step, the same for every t
  day_.resize(static_cast<std::size_t>(sim::kDay / step));
  for (std::size_t i = 0; i < day_.size(); ++i) day_[i] = load.rate(load.peak + r0 + static_cast<Tick>(i) * step);
  step_ = step;
}

double StepRates::at(Tick t) const {
  if (!load_.table.empty()) {
    const auto& rows = load_.table;
    while (next_ < rows.size() && rows[next_].first <= t) ++next_;
    return next_ == 0 ? rows.front().second : rows[next_ - 1].second;
  }
  if (load_.diurnal_amplitude == 0) return std::max(0.0, load_.mean_rate);
  if (day_.empty() || t < load_.peak) return load_.rate(t);
  return day_[static_cast<std::size_t>((t - load_.peak) % sim::kDay / step_)];
}

std::vector<std::pair<Tick, std::int32_t>> autoscale(const ServiceSpec& s, Tick end) {
  const Autoscaler& a = s.autoscaler;
  HEADROOM_ASSERT(a.interval > 0 && a.target_utilization > 0 && s.throughput > 0 && s.min_replicas >= 0 &&
                      s.max_replicas >= s.min_replicas,
                  "invalid service " + s.name);
  const StepRates rates(s.load, s.start, end, a.interval);  // read at start, start + interval, ...
  auto raw = [&](Tick t, std::int32_t current) {
    const double capacity = static_cast<double>(current) * s.throughput * a.target_utilization;
    const double demand = rates.at(t);
    std::int64_t want;
    if (current > 0 && std::fabs(demand / capacity - 1.0) <= a.tolerance) {
      want = current;
    } else {
      want = static_cast<std::int64_t>(std::ceil(demand / (s.throughput * a.target_utilization) - 1e-9));
    }
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(want, s.min_replicas, s.max_replicas));
  };
  std::vector<std::pair<Tick, std::int32_t>> steps;
  // The deployment starts at its first recommendation (no stabilization history yet).
  std::int32_t current = raw(s.start, 0);
  steps.emplace_back(s.start, current);
  std::deque<std::pair<Tick, std::int32_t>> history;  // recommendations within the longer window
  history.emplace_back(s.start, current);
  const Tick keep = std::max(a.scale_up_window, a.scale_down_window);
  constexpr Tick kPolicyPeriod = 15 * sim::kSecond;
  std::deque<std::pair<Tick, std::int32_t>> counts;  // replica counts within the scale-up policy period
  counts.emplace_back(s.start, current);
  std::uint32_t evaluations = 0;
  for (Tick t = s.start + a.interval; t < end; t += a.interval) {
    if ((++evaluations & 0xFFFFu) == 0) sim::check_interrupt();  // SIGINT / SIGTERM: a long span stops here
    const std::int32_t rec = raw(t, current);
    history.emplace_back(t, rec);
    while (!history.empty() && history.front().first <= t - keep - 1) history.pop_front();
    std::int32_t up = rec, down = rec;
    for (const auto& [ht, r] : history) {
      if (ht > t - a.scale_up_window || ht == t) up = std::min(up, r);
      if (ht > t - a.scale_down_window || ht == t) down = std::max(down, r);
    }
    std::int32_t next = current;
    if (next < up) next = up;
    if (next > down) next = down;
    // Default scale-up policies: +100 % or +4 pods per 15 s, whichever allows more, counted
    // from the smallest count of the last 15 s.
    while (!counts.empty() && counts.front().first <= t - kPolicyPeriod) counts.pop_front();
    std::int32_t base = current;
    for (const auto& [ct, c] : counts) base = std::min(base, c);
    if (next > current) next = std::min<std::int32_t>(next, base + std::max<std::int32_t>(base, 4));
    counts.emplace_back(t, next);
    if (next != current) {
      current = next;
      steps.emplace_back(t, current);
    }
  }
  return steps;
}

std::vector<Job> replica_jobs(const ServiceSpec& s, std::int32_t service, TenantId tenant, QueueId queue, Tick end) {
  std::vector<Job> out;
  std::vector<std::size_t> live;  // indices into out, oldest first
  auto add = [&](Tick t) {
    Job j;
    j.trace_id =
        9'000'000'000LL + static_cast<std::int64_t>(service) * 10'000'000LL + static_cast<std::int64_t>(out.size());
    j.tenant = tenant;
    j.queue = queue;
    j.kind = JobKind::Inference;
    j.trace_status = TraceStatus::Completed;
    j.preemptible = s.preemptible;
    j.submit = t;
    j.gpus = s.gpus_per_replica;
    j.gpus_per_node = s.gpus_per_replica;
    j.nodes = 1;
    j.cpus = s.cpus_per_replica;
    j.memory_mib = s.memory_mib_per_replica;
    j.priority = s.priority;
    j.service = service;
    live.push_back(out.size());
    out.push_back(j);
  };
  auto remove = [&](Tick t) {
    Job& j = out[live.back()];
    live.pop_back();
    j.withdraw_at = t;
    j.runtime = t - j.submit;
  };
  for (const auto& [t, n] : autoscale(s, end)) {
    while (static_cast<std::int32_t>(live.size()) < n) add(t);
    while (static_cast<std::int32_t>(live.size()) > n) remove(t);
  }
  while (!live.empty()) remove(end);
  // Replicas that lived no time at all (a count raised and lowered at one instant) are dropped.
  std::erase_if(out, [](const Job& j) { return j.withdraw_at <= j.submit; });
  std::stable_sort(out.begin(), out.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
  return out;
}

ServiceSlo evaluate_service(const ServiceSpec& s, const std::vector<std::pair<Tick, Tick>>& runs, Tick from, Tick to) {
  ServiceSlo out;
  if (to <= from) return out;
  // Running replicas as a step function: +1 at each start, -1 at each end.
  std::vector<std::pair<Tick, int>> changes;
  for (const auto& [a, b] : runs) {
    const Tick x = std::max(a, from), y = std::min(b, to);
    if (y <= x) continue;
    changes.emplace_back(x, 1);
    changes.emplace_back(y, -1);
    out.replica_gpu_hours += static_cast<double>(s.gpus_per_replica) * sim::to_seconds(y - x) / 3600.0;
  }
  std::sort(changes.begin(), changes.end());
  std::size_t ci = 0;
  std::int64_t running = 0;
  long double covered_time = 0, served = 0, demand = 0, running_time = 0;
  constexpr Tick kStep = sim::kSecond;
  const StepRates rates(s.load, from, to, kStep);
  std::uint32_t steps = 0;
  for (Tick t = from; t < to; t += kStep) {
    if ((++steps & 0xFFFFFu) == 0) sim::check_interrupt();  // SIGINT / SIGTERM: a service of years stops here
    while (ci < changes.size() && changes[ci].first <= t) running += changes[ci++].second;
    const Tick dt = std::min(kStep, to - t);
    const double secs = sim::to_seconds(dt);
    const double rate = rates.at(t);
    const double capacity = static_cast<double>(running) * s.throughput;
    if (capacity >= rate) covered_time += secs;
    served += std::min(rate, capacity) * secs;
    demand += rate * secs;
    running_time += static_cast<long double>(running) * secs;
  }
  const double span = sim::to_seconds(to - from);
  out.time_attainment = static_cast<double>(covered_time / span);
  out.request_attainment = demand > 0 ? static_cast<double>(served / demand) : 1.0;
  out.mean_running = static_cast<double>(running_time / span);
  out.requests = static_cast<double>(demand);
  return out;
}

}  // namespace headroom::models
