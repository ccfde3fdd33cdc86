#include "scenarios/workload.hpp"

#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/errors.hpp"
#include "sim/rng.hpp"
#include "sim/text.hpp"
#include "sim/time.hpp"
#include "traces/import.hpp"

namespace headroom::scenarios {

namespace {

// Extra copies of a job (arrival_scale > 1) are submitted up to this long after the original.
constexpr sim::Tick kCopyJitter = 60 * sim::kSecond;

void apply_window(const WorkloadSpec& spec, models::Workload& w) {
  if (spec.window_start <= 0 && spec.window_end == sim::kNever) return;
  const std::size_t before = w.jobs.size();
  std::erase_if(w.jobs,
                [&](const models::Job& j) { return j.submit < spec.window_start || j.submit >= spec.window_end; });
  const std::size_t dropped = before - w.jobs.size();
  if (dropped > 0) {
    const std::string end = spec.window_end == sim::kNever ? "end" : sim::format_duration(spec.window_end);
    w.meta.warnings.push_back("workload window [" + sim::format_duration(spec.window_start) + ", " + end + ") kept " +
                              std::to_string(w.jobs.size()) + " of " + std::to_string(before) + " jobs");
  }
}

// arrival_scale s < 1 keeps each job with probability s. s > 1 submits each job floor(s) times,
// plus once more with probability frac(s). The original keeps its submit time and trace id; copy
// c (1, 2, ...) is submitted at a uniform whole millisecond in [submit, submit + 60 s), with the
// trace's own start and end shifted alike, and has trace_id = original * 1000 + c. Draws come
// from one stream, in job order: the keep (or extra-copy) draw first, then one per copy.
void apply_arrival_scale(const Scenario& scenario, models::Workload& w) {
  const double s = scenario.workload.arrival_scale;
  if (s == 1.0) return;
  sim::RngStream rng(scenario.seed, "workload/arrival_scale");
  std::vector<models::Job> out;
  if (s < 1.0) {
    for (auto& j : w.jobs)
      if (rng.bernoulli(s)) out.push_back(std::move(j));
    w.jobs = std::move(out);
    return;
  }
  const double whole = std::floor(s);
  const double frac = s - whole;
  out.reserve(static_cast<std::size_t>(static_cast<double>(w.jobs.size()) * s) + 1);
  for (const auto& j : w.jobs) {
    auto copies = static_cast<std::int64_t>(whole);
    if (frac > 0 && rng.bernoulli(frac)) ++copies;
    out.push_back(j);
    for (std::int64_t c = 1; c < copies; ++c) {
      models::Job copy = j;
      const auto shift = static_cast<sim::Tick>(rng.below(static_cast<std::uint64_t>(kCopyJitter)));
      copy.submit += shift;
      if (copy.trace_start >= 0) copy.trace_start += shift;
      if (copy.trace_end >= 0) copy.trace_end += shift;
      // Unsigned arithmetic: ids near INT64_MAX wrap instead of overflowing (undefined behaviour).
      copy.trace_id =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(j.trace_id) * 1000u + static_cast<std::uint64_t>(c));
      out.push_back(std::move(copy));
    }
  }
  // Built in (original order, copy number); a stable sort on submit keeps that order for ties.
  std::stable_sort(out.begin(), out.end(),
                   [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; });
  w.jobs = std::move(out);
}

}  // namespace

// Tenant and queue filters, run-time scaling and GPU-type remapping, in that order.
void apply_filters(const WorkloadSpec& spec, models::Workload& w) {
  auto keep_ids = [&](const std::vector<std::string>& names, const models::NameTable& table, const char* what) {
    std::vector<bool> keep(table.size(), names.empty());
    for (const auto& n : names) {
      if (auto id = table.find(n)) {
        keep[*id] = true;
      } else {
        w.meta.warnings.push_back(std::string("workload.") + what + ": \"" + n + "\" does not occur in the trace");
      }
    }
    return keep;
  };
  if (!spec.tenants.empty() || !spec.queues.empty()) {
    const auto tenants = keep_ids(spec.tenants, w.tenants, "tenants");
    const auto queues = keep_ids(spec.queues, w.queues, "queues");
    const std::size_t before = w.jobs.size();
    std::erase_if(w.jobs, [&](const models::Job& j) { return !tenants[j.tenant] || !queues[j.queue]; });
    w.meta.warnings.push_back("tenant/queue filter kept " + std::to_string(w.jobs.size()) + " of " +
                              std::to_string(before) + " jobs");
  }
  if (spec.runtime_scale != 1.0) {
    for (auto& j : w.jobs) {
      j.runtime = static_cast<sim::Tick>(std::llround(static_cast<double>(j.runtime) * spec.runtime_scale));
      if (j.walltime >= 0)
        j.walltime = static_cast<sim::Tick>(std::llround(static_cast<double>(j.walltime) * spec.runtime_scale));
    }
  }
  for (const auto& [from, to] : spec.gpu_type_map) {
    for (std::size_t i = 0; i < w.gpu_type_names.size(); ++i)
      if (w.gpu_type_names[i] == from) w.gpu_type_names[i] = to;
  }
}

namespace {

// The end of services without their own: the horizon, else when the last trace job would end.
Tick services_end(const Scenario& scenario, const models::Workload& w) {
  if (scenario.horizon != sim::kNever) return scenario.horizon;
  Tick end = 0;
  for (const auto& j : w.jobs) end = std::max(end, j.submit + std::max<Tick>(j.runtime, 0));
  for (const auto& s : scenario.services) end = std::max(end, s.start + sim::kDay);
  return end;
}

// At most this many autoscaler evaluations a service (models::autoscale runs them before the
// simulation): a year at the default 15 s is 2.1 M; 50 M is 23 years.
constexpr Tick kMaxAutoscalerSteps = 50'000'000;

// Inference services (models/service.hpp): their replicas join the trace's jobs, in submit
// order (a replica after trace jobs submitted at the same instant).
void add_services(const Scenario& scenario, models::Workload& w) {
  if (scenario.services.empty()) return;
  const Tick default_end = services_end(scenario, w);
  std::vector<models::Job> replicas;
  for (std::size_t i = 0; i < scenario.services.size(); ++i) {
    const models::ServiceSpec& s = scenario.services[i];
    const models::TenantId tenant = w.tenants.intern(s.tenant);
    const models::QueueId queue =
        !s.queue.empty() ? w.queues.intern(s.queue) : (w.queues.size() > 0 ? 0u : w.queues.intern("default"));
    const Tick end = s.end != sim::kNever ? s.end : default_end;
    if (end <= s.start) continue;
    // The autoscaler is evaluated every interval of the service's span before the run: bounded.
    if (const Tick steps = (end - s.start) / s.autoscaler.interval; steps > kMaxAutoscalerSteps)
      throw sim::InputError(scenario.file, 0, 0, "services[" + std::to_string(i) + "]",
                            "service " + s.name + " runs " + sim::format_duration(end - s.start) +
                                " with its autoscaler every " + sim::format_duration(s.autoscaler.interval) + ": " +
                                sim::thousands(steps) + " evaluations, more than the " +
                                sim::thousands(kMaxAutoscalerSteps) +
                                " modelled; give the service an end (or the scenario a shorter horizon) or a longer "
                                "autoscaler.interval");
    auto jobs = models::replica_jobs(s, static_cast<std::int32_t>(i), tenant, queue, end);
    replicas.insert(replicas.end(), jobs.begin(), jobs.end());
  }
  std::stable_sort(replicas.begin(), replicas.end(),
                   [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; });
  std::vector<models::Job> merged;
  merged.reserve(w.jobs.size() + replicas.size());
  std::merge(w.jobs.begin(), w.jobs.end(), replicas.begin(), replicas.end(), std::back_inserter(merged),
             [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; });
  w.jobs = std::move(merged);
}

// `workload.kinds`: the first rule matching a trace job's GPUs gives it its kind.
void apply_kind_rules(const WorkloadSpec& spec, models::Workload& w) {
  if (spec.kinds.empty()) return;
  for (auto& j : w.jobs)
    for (const KindRule& rule : spec.kinds)
      if (j.gpus >= rule.min_gpus && j.gpus <= rule.max_gpus) {
        j.kind = rule.kind;
        break;
      }
}

// Ids of generated sessions: past any trace's ids and apart from service replicas (9e9...).
constexpr std::int64_t kSessionIdBase = 8'000'000'000LL;
// At most this many generated sessions in all (bounded memory whatever the per_day and span).
constexpr std::size_t kMaxSessions = 1'000'000;

// `workload.sessions`: each stream's sessions (SessionSpec), merged into the jobs in submit order
// (a session after trace jobs submitted at the same instant). Each stream draws from its own named
// random streams, so adding a stream leaves the others' sessions as they were.
void add_sessions(const Scenario& scenario, models::Workload& w) {
  if (scenario.workload.sessions.empty()) return;
  Tick last_submit = 0;
  for (const auto& j : w.jobs) last_submit = std::max(last_submit, j.submit);
  std::vector<models::Job> sessions;
  for (std::size_t i = 0; i < scenario.workload.sessions.size(); ++i) {
    const SessionSpec& s = scenario.workload.sessions[i];
    const models::TenantId tenant = w.tenants.intern(s.tenant);
    const models::QueueId queue =
        !s.queue.empty() ? w.queues.intern(s.queue) : (w.queues.size() > 0 ? 0u : w.queues.intern("default"));
    const Tick end = s.end != sim::kNever ? s.end : scenario.horizon != sim::kNever ? scenario.horizon : last_submit;
    const Tick window = s.hours_end - s.hours_start;
    if (window <= 0 || s.per_day <= 0) continue;
    const double rate = s.per_day / sim::to_seconds(window);  // arrivals per second within the hours
    sim::RngStream arrivals(scenario.seed, "sessions/" + s.name + "/arrivals");
    sim::RngStream durations(scenario.seed, "sessions/" + s.name + "/durations");
    const double mu = std::log(sim::to_seconds(s.median_duration));
    std::int64_t n = 0;
    for (Tick day = 0; day < end; day += sim::kDay) {
      const Tick open = day + s.hours_start, close = std::min(day + s.hours_end, end);
      double t = sim::to_seconds(open);
      while (true) {
        t += arrivals.exponential(rate);
        const Tick at = static_cast<Tick>(std::llround(t * static_cast<double>(sim::kSecond)));
        if (at >= close) break;
        if (at < s.start) continue;
        const double d = std::clamp(durations.lognormal(mu, s.sigma), 60.0, sim::to_seconds(s.max_duration));
        if (sessions.size() >= kMaxSessions)
          throw sim::InputError(scenario.file, 0, 0, "workload.sessions",
                                "more than " + std::to_string(kMaxSessions) +
                                    " generated sessions; lower per_day or end the stream sooner");
        models::Job j;
        j.trace_id = kSessionIdBase + static_cast<std::int64_t>(i) * 10'000'000LL + n++;
        j.tenant = tenant;
        j.queue = queue;
        j.kind = models::JobKind::Interactive;
        j.trace_status = models::TraceStatus::Completed;
        j.submit = at;
        j.gpus = s.gpus;
        j.nodes = 1;
        j.priority = s.priority;
        j.runtime = static_cast<Tick>(std::llround(d * static_cast<double>(sim::kSecond)));
        sessions.push_back(j);
      }
    }
  }
  std::stable_sort(sessions.begin(), sessions.end(),
                   [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; });
  std::vector<models::Job> merged;
  merged.reserve(w.jobs.size() + sessions.size());
  std::merge(w.jobs.begin(), w.jobs.end(), sessions.begin(), sessions.end(), std::back_inserter(merged),
             [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; });
  w.jobs = std::move(merged);
}

}  // namespace

std::optional<std::string> apply_time_limits(const WorkloadSpec& spec, models::Workload& w) {
  if (spec.time_limits == "enforce") return std::nullopt;
  constexpr Tick kGrace = 60 * sim::kSecond;
  std::size_t limited = 0, past = 0, over = 0, raised = 0;
  std::vector<Tick> by;  // how far past their limit the jobs that ran past it went
  for (const auto& j : w.jobs) {
    if (j.walltime <= 0) continue;
    ++limited;
    if (j.runtime <= j.walltime) continue;
    ++past;
    over += j.runtime > j.walltime + kGrace;
    by.push_back(j.runtime - j.walltime);
  }
  if (past == 0) return std::nullopt;
  const auto pct = [&](std::size_t n) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", 100.0 * static_cast<double>(n) / static_cast<double>(limited));
    return std::string(b);
  };
  const bool unenforced = over >= 5 && over * 100 > limited;
  std::string note = std::string(kTimeLimitsNote);
  if (spec.time_limits == "auto" && !unenforced) {
    // A system that kills at the limit lets a job run a little past it (SIGTERM, KillWait, then
    // SIGKILL): such overruns are its signature, not a sign that limits went unenforced.
    std::nth_element(by.begin(), by.begin() + static_cast<std::ptrdiff_t>(by.size() / 2), by.end());
    note += std::to_string(past) + " of " + std::to_string(limited) + " jobs with a time limit (" + pct(past) +
            ") ran past it in the log, " + std::to_string(past - over) + " of them by under a minute (median " +
            std::to_string(by[by.size() / 2] / sim::kSecond) +
            " s): its system enforced its limits, as the replay does (a system with time limits ends them at the "
            "limit, TIMEOUT; workload.time_limits: as_recorded lets them run their recorded time)";
    return note;
  }
  for (auto& j : w.jobs)
    if (j.walltime > 0 && j.runtime > j.walltime) {
      j.walltime = j.runtime;
      j.walltime_raised = true;
      ++raised;
    }
  if (spec.time_limits == "auto") {
    note += std::to_string(over) + " of " + std::to_string(limited) + " jobs with a time limit (" + pct(over) +
            ") ran more than a minute past it in the log, so its system did not enforce limits; the " +
            std::to_string(raised) +
            " limits below the recorded run time are raised to it (workload.time_limits: enforce kills those jobs "
            "at their limit instead)";
  } else {
    note += std::to_string(raised) +
            " limits below the recorded run time raised to it (workload.time_limits: " + spec.time_limits + ")";
  }
  return note;
}

std::optional<std::string> prime_time_note(const models::PrimeTime& p, const models::Workload& w) {
  if (!p.enabled() || w.meta.unix_start < 0) return std::nullopt;
  std::size_t held = 0, limited = 0;
  sim::Tick total = 0;
  for (const models::Job& j : w.jobs) {
    if (!p.holds(j.walltime)) continue;
    ++limited;
    const sim::Tick at = p.release(j.submit, w.meta.unix_start);
    if (at > j.submit) {
      ++held;
      total += at - j.submit;
    }
  }
  return std::string(kPrimeTimeNote) + p.describe() + " holds " + std::to_string(held) + " of the " +
         std::to_string(limited) + " jobs over its bound until it ends, " + std::to_string(total / sim::kHour) +
         " h in all (docs/fidelity.md, \"Prime time\")";
}

// `workload.node_selectors`: each job of a listed queue gets its pools' set (Job::node_set), by the
// trace's queue names (before queue_by_tenant renames them). Identical sets share one entry.
void apply_node_selectors(const WorkloadSpec& spec, models::Workload& w) {
  if (spec.node_selectors.empty()) return;
  std::vector<std::uint8_t> set_of_queue(w.queues.size(), 0);
  for (const auto& [queue, pools] : spec.node_selectors) {
    const auto id = w.queues.find(queue);
    if (!id) continue;  // a queue with no job here (a window, a filter)
    auto it = std::find(w.node_sets.begin(), w.node_sets.end(), pools);
    if (it == w.node_sets.end()) {
      if (w.node_sets.size() >= 255) throw sim::InputError("workload.node_selectors: more than 255 pool sets");
      w.node_sets.push_back(pools);
      it = w.node_sets.end() - 1;
    }
    set_of_queue[*id] = static_cast<std::uint8_t>(it - w.node_sets.begin() + 1);
  }
  for (auto& j : w.jobs)
    if (j.queue < set_of_queue.size()) j.node_set = set_of_queue[j.queue];
}

namespace {

traces::ImportOptions import_options(const WorkloadSpec& spec) {
  traces::ImportOptions options;
  options.format = traces::parse_format(spec.format).value_or(traces::Format::Auto);
  options.units_per_gpu = spec.units_per_gpu;
  options.skip_bad_rows = spec.skip_bad_rows;
  options.fields = spec.fields;
  options.assume_runtime = spec.assume_runtime;
  return options;
}

// Everything import_trace reads (the path and import_options' settings), as one key: fields are
// joined by a byte no name holds.
std::string trace_key(const WorkloadSpec& spec) {
  const traces::ImportOptions o = import_options(spec);
  std::string key = spec.trace + '\0' + std::to_string(static_cast<int>(o.format)) + '\0' +
                    std::to_string(o.units_per_gpu) + '\0' + (o.keep_cpu_only ? "1" : "0") + '\0' +
                    (o.skip_bad_rows ? "1" : "0") + '\0' + std::to_string(o.assume_runtime);
  for (const auto& f : o.fields) key += '\0' + f;
  return key;
}

}  // namespace

void TraceCache::expect(const WorkloadSpec& spec) {
  const std::lock_guard lock(mutex_);
  ++traces_[trace_key(spec)].expected;
}

std::shared_ptr<const models::Workload> TraceCache::get(const WorkloadSpec& spec, bool take) {
  const std::string key = trace_key(spec);
  std::promise<std::shared_ptr<const models::Workload>> promise;
  std::shared_future<std::shared_ptr<const models::Workload>> future;
  bool reader = false;
  {
    const std::lock_guard lock(mutex_);
    auto it = traces_.try_emplace(key).first;
    Entry& e = it->second;
    if (!e.trace) {
      e.trace = promise.get_future().share();
      reader = true;
      ++reads_;
    }
    future = *e.trace;
    if (take && ++e.taken == e.expected) traces_.erase(it);  // the last run announced: let it go
  }
  if (reader) {
    try {
      // Isolated: while it reads, this thread takes no other run's work that could wait for it.
      // Made as a mutable object, so that its last holder may take it over (build_workload).
      tbb::this_task_arena::isolate([&] {
        promise.set_value(std::make_shared<models::Workload>(traces::import_trace(spec.trace, import_options(spec))));
      });
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

std::size_t TraceCache::reads() const {
  const std::lock_guard lock(mutex_);
  return reads_;
}

models::Workload build_workload(const Scenario& scenario, TraceCache* cache, bool take) {
  const WorkloadSpec& spec = scenario.workload;
  models::Workload w;
  if (cache == nullptr) {
    w = traces::import_trace(spec.trace, import_options(spec));
  } else {
    std::shared_ptr<const models::Workload> shared = cache->get(spec, take);
    // The only holder left (the cache let it go and every other run has its copy) takes the jobs
    // over. The import was made as a mutable object (TraceCache::get), so this move is sound.
    if (shared.use_count() == 1)
      w = std::move(const_cast<models::Workload&>(*shared));
    else
      w = *shared;
  }
  apply_window(spec, w);
  apply_filters(spec, w);
  if (auto note = apply_time_limits(spec, w)) w.meta.warnings.push_back(std::move(*note));
  apply_arrival_scale(scenario, w);
  apply_kind_rules(spec, w);
  // Declared tenants exist even when the trace has no job of theirs.
  for (const auto& t : scenario.tenants) w.tenants.intern(t.name);
  add_sessions(scenario, w);
  add_services(scenario, w);
  apply_node_selectors(spec, w);
  if (spec.queue_by_tenant) {
    models::NameTable queues;
    for (const auto& name : w.tenants.names()) queues.intern(name);
    for (auto& j : w.jobs) j.queue = j.tenant;  // the same ids: queues interned in tenant order
    w.queues = std::move(queues);
  }
  if (auto note = prime_time_note(scenario.prime_time, w)) w.meta.warnings.push_back(std::move(*note));
  return w;
}

}  // namespace headroom::scenarios
