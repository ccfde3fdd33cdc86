#pragma once

// The results-file fuzz target's input (fuzz/fuzz_results.cpp), shared with the crasher replay
// (tests/crashers_test.cpp): the bytes describe a RunResult table by table (sizes, then each
// field: mostly a small value, sometimes an extreme one), as read_hdf5 would hand it to `report`,
// `compare`, `run`'s summary and the desktop app. results::check_result must refuse it with a
// sim::InputError or leave it safe for every reader run here: the summary, the fairness and
// fidelity figures, the per-group tables and the HTML report (one run, and two side by side).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/bytes.hpp"
#include "models/job.hpp"
#include "models/observer.hpp"
#include "results/check.hpp"
#include "results/fairness.hpp"
#include "results/fidelity.hpp"
#include "results/groups.hpp"
#include "results/report.hpp"
#include "results/summary.hpp"
#include "sim/errors.hpp"

namespace headroom::fuzz {

using results::Tick;

struct Maker {
  Bytes& in;

  // Mostly a value of [lo, lo + span) (the valid range, when the caller gives it), sometimes
  // just outside it or an edge of T's range or of what a reader computes with (2^31, 2^53).
  template <class T>
  T value(std::int64_t lo, std::int64_t span) {
    const std::uint8_t pick = in.byte();
    if (pick < 240 || span <= 0)
      return static_cast<T>(lo + static_cast<std::int64_t>(pick % std::max<std::int64_t>(span, 1)));
    switch (pick % 8) {
      case 0: return std::numeric_limits<T>::max();
      case 1: return std::numeric_limits<T>::min();
      case 2: return static_cast<T>(lo - 1);
      case 3: return static_cast<T>(lo + span);  // one past the range
      case 4: return static_cast<T>(std::int64_t{1} << 53);
      case 5: return static_cast<T>(std::int64_t{1} << 31);
      case 6: return static_cast<T>(std::numeric_limits<T>::max() - 1);
      default: return in.integral<T>();
    }
  }
  Tick time() {
    const Tick t = value<Tick>(-1, 200);
    return t >= -1 && t < 200 && in.flag() ? t * 1000 : t;  // seconds, sometimes
  }
  std::size_t count(std::size_t most) { return static_cast<std::size_t>(in.upto(most)); }
  double real() {
    switch (in.byte() % 8) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -1;
      case 3: return 1e300;
      default: return static_cast<int>(in.upto(100)) / 10.0;
    }
  }
  // A column of n values, or (sometimes) a column of another length: a matrix's shape wrong.
  template <class T>
  std::vector<T> column(std::size_t n, std::int64_t lo, std::int64_t span) {
    if (in.byte() >= 248) n = count(n + 3);
    std::vector<T> out(n);
    for (auto& v : out) v = value<T>(lo, span);
    return out;
  }
};

inline results::RunResult make_result(Bytes& in) {
  using namespace results;
  Maker m{in};
  RunResult r;
  r.policy = "fuzz";
  r.fingerprint = "0000000000000000";
  if (in.flag()) r.scenario_text = in.text(256);
  r.sim_start = m.time();
  r.sim_end = m.time();
  r.total_gpus = m.value<std::int64_t>(0, 64);
  r.lost_gpu_ms = m.value<std::int64_t>(0, 1000);
  r.failure_lost_gpu_ms = m.value<std::int64_t>(0, 1000);
  r.bound_idle_gpu_ms = m.value<std::int64_t>(0, 1000);
  r.node_outages = m.value<std::int64_t>(0, 4);
  r.jobs_killed = m.value<std::int64_t>(0, 4);
  r.unix_start = in.flag() ? -1 : m.value<std::int64_t>(1'000'000'000, 100);
  for (std::size_t i = m.count(4); i-- > 0;) r.tenants.push_back("t" + std::to_string(i));
  for (std::size_t i = m.count(3); i-- > 0;) r.queues.push_back("q" + std::to_string(i));
  for (std::size_t i = m.count(5); i-- > 0;) r.reasons.push_back(i == 0 ? "" : in.text(24));
  std::int64_t nodes = 0;
  for (std::size_t i = m.count(3); i-- > 0;) {
    PoolInfo p{"p" + std::to_string(i), "A100", m.value<std::int32_t>(0, 4), m.value<std::int32_t>(0, 9), 0};
    if (in.flag()) p.gpu_hour_price = m.real();
    nodes += p.nodes;
    r.pools.push_back(p);
  }
  const auto tenants = static_cast<std::int64_t>(r.tenants.size()), queues = static_cast<std::int64_t>(r.queues.size());
  const auto pools = static_cast<std::int64_t>(r.pools.size()), reasons = static_cast<std::int64_t>(r.reasons.size());
  for (std::size_t i = m.count(12); i-- > 0;) {
    JobRecord j;
    j.trace_id = m.value<std::int64_t>(0, 1000);
    j.tenant = m.value<std::uint32_t>(0, tenants);
    j.queue = m.value<std::uint32_t>(0, queues);
    j.kind = m.value<std::uint8_t>(0, 4);
    j.state = m.value<std::uint8_t>(0, 7);
    j.gpus = m.value<std::int32_t>(0, 9);
    j.gpu_milli = in.flag() ? static_cast<std::int32_t>(in.upto(2)) * 500 : m.value<std::int32_t>(0, 1001);
    j.submit = m.time();
    j.start = m.time();
    j.end = m.time();
    j.runtime = m.time();
    j.walltime = m.time();
    j.trace_start = m.time();
    j.preemptions = m.value<std::int32_t>(0, 3);
    j.nodes_used = m.value<std::int32_t>(0, 3);
    j.first_node = m.value<std::int32_t>(-1, nodes + 1);
    j.pool = m.value<std::int32_t>(-1, pools + 1);
    r.jobs.push_back(j);
  }
  const std::int64_t jobs = static_cast<std::int64_t>(r.jobs.size());
  const std::int64_t drills = static_cast<std::int64_t>(in.upto(2));  // /meta/drill_start's rows, made below
  for (std::size_t i = m.count(24); i-- > 0;) {
    using K = models::AuditKind;
    EventRecord e;
    e.time = m.time();
    e.kind = m.value<std::uint8_t>(0, models::kAuditKindCount);
    const auto kind = static_cast<K>(e.kind);
    const bool of_node =
        kind == K::NodeDown || kind == K::NodeUp || kind == K::Drain || kind == K::Drill || kind == K::Recovered;
    e.job = of_node && in.flag() ? std::numeric_limits<std::uint32_t>::max() : m.value<std::uint32_t>(0, jobs);
    switch (kind) {
      case K::Preempt: e.detail = m.value<std::int32_t>(-1, jobs + 1); break;
      case K::NodeDown:
      case K::NodeUp:
      case K::Drain:
      case K::Kill: e.detail = m.value<std::int32_t>(0, nodes); break;
      case K::Drill:
      case K::Recovered: e.detail = m.value<std::int32_t>(0, drills); break;
      case K::Finish: e.detail = m.value<std::int32_t>(0, models::kJobStateCount); break;
      case K::Waiting: e.detail = m.value<std::int32_t>(0, models::kPendingCodes); break;
      default: e.detail = m.value<std::int32_t>(-1, 10);
    }
    e.reason = m.value<std::uint32_t>(0, reasons);
    e.lost_gpu_ms = m.value<std::int64_t>(0, 1000);
    r.events.push_back(e);
  }
  for (std::size_t i = m.count(12); i-- > 0;) {
    PlacementRecord p;
    p.job = m.value<std::uint32_t>(0, jobs);
    p.start = m.time();
    p.end = m.time();
    p.node = m.value<std::int32_t>(0, nodes);
    p.gpus = m.value<std::int32_t>(0, 9);
    if (in.flag()) {
      p.gpu_milli = m.value<std::int32_t>(0, 1001);
      p.device = m.value<std::int32_t>(0, 9);
    }
    r.placements.push_back(p);
  }
  for (std::size_t i = m.count(2); i-- > 0;) {
    ServiceRecord s;
    s.name = "svc";
    s.tenant = "t0";
    s.gpus_per_replica = m.value<std::int32_t>(0, 4);
    s.from = m.time();
    s.to = m.time();
    s.replicas = m.value<std::int64_t>(0, 4);
    s.time_attainment = m.real();
    s.request_attainment = m.real();
    s.mean_running = m.real();
    s.requests = m.real();
    r.services.push_back(s);
  }
  for (std::size_t i = m.count(3); i-- > 0;) {
    OutageRecord o;
    o.start = m.time();
    o.end = m.time();
    o.kind = m.value<std::uint8_t>(0, 3);
    o.drill = m.value<std::int32_t>(-1, drills + 1);
    o.reason = m.value<std::uint32_t>(0, reasons);
    o.nodes = m.value<std::int32_t>(0, 4);
    r.outages.push_back(o);
  }
  for (std::size_t i = m.count(6); i-- > 0;) {
    KillRecord k;
    k.outage = m.value<std::uint32_t>(0, static_cast<std::int64_t>(r.outages.size()));
    k.job = m.value<std::uint32_t>(0, jobs);
    k.time = m.time();
    k.restart = m.time();
    k.lost_gpu_ms = m.value<std::int64_t>(0, 1000);
    k.nodes = m.value<std::int32_t>(0, 3);
    k.partial = m.value<std::uint8_t>(0, 2);
    k.partial_gpu_ms = m.value<std::int64_t>(0, 1000);
    r.kills.push_back(k);
  }
  for (std::int64_t i = 0; i < drills; ++i) r.drill_start.push_back(m.time());
  r.drill_recovered = m.column<Tick>(r.drill_start.size(), -1, 200);
  if (in.flag()) r.tenant_denied = m.column<std::int64_t>(r.tenants.size(), 0, jobs + 1);
  for (std::size_t i = m.count(2); i-- > 0;)
    r.outage_slo.push_back(OutageSlo{m.value<std::int32_t>(-1, drills + 1), m.time(), m.time(), m.real(), m.real()});
  if (in.flag()) {  // a split site: partitions over the pools, each job's partition
    for (std::size_t i = m.count(2) + 1; i-- > 0;)
      r.partitions.push_back(PartitionRecord{"part", "fifo", m.value<std::int32_t>(0, nodes + 1),
                                             m.value<std::int32_t>(0, nodes + 1), m.value<std::int32_t>(0, pools + 1),
                                             m.value<std::int32_t>(0, pools + 1), m.value<std::int64_t>(0, 32), 0});
    const auto parts = static_cast<std::int64_t>(r.partitions.size());
    r.job_partition = m.column<std::uint32_t>(r.jobs.size(), 0, parts);
    for (std::size_t i = m.count(2); i-- > 0;) {
      MoveRecord mv;
      mv.node = m.value<std::int32_t>(0, nodes);
      mv.from = m.value<std::int32_t>(0, parts);
      mv.to = m.value<std::int32_t>(0, parts);
      mv.gpus = m.value<std::int32_t>(0, 9);
      mv.requested = m.time();
      mv.changed = m.time();
      mv.ready = m.time();
      r.moves.push_back(mv);
    }
  }
  TimeSeries& ts = r.timeseries;
  ts.interval = in.flag() ? static_cast<Tick>(in.upto(3)) * 60'000 : m.value<Tick>(0, 3);
  const std::size_t samples = m.count(6);
  for (std::size_t i = 0; i < samples; ++i) ts.time.push_back(in.flag() ? static_cast<Tick>(i) * 60'000 : m.time());
  ts.running_jobs = m.column<std::int32_t>(samples, 0, 4);
  ts.pending_jobs = m.column<std::int32_t>(samples, 0, 4);
  const auto per_pool = samples * r.pools.size(), per_tenant = samples * r.tenants.size();
  ts.pool_used_gpus = m.column<std::int32_t>(per_pool, 0, 9);
  ts.pool_free_gpus = m.column<std::int32_t>(per_pool, 0, 9);
  if (in.flag()) ts.pool_down_gpus = m.column<std::int32_t>(per_pool, 0, 9);
  if (in.flag()) ts.pool_frag_gpus = m.column<std::int32_t>(per_pool, 0, 9);
  ts.tenant_used_gpus = m.column<std::int32_t>(per_tenant, 0, 9);
  ts.tenant_pending_jobs = m.column<std::int32_t>(per_tenant, 0, 4);
  ts.tenant_pending_gpus = m.column<std::int32_t>(per_tenant, 0, 9);
  if (in.flag()) ts.pending_by_reason = m.column<std::int32_t>(samples * 9, 0, 4);
  for (std::size_t i = m.count(2); i-- > 0;)
    r.scorecard.push_back(VerdictLine{in.text(16), in.flag() ? "passed" : "FAILED", in.text(16)});
  return r;
}

// One fuzz input through check_result and, when it passes, every reader of a result. Returns
// true when it passed.
inline bool read_results_bytes(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  results::ReportInput input;
  input.file = "fuzz.h5";
  input.run = make_result(in);
  try {
    results::check_result(input.run, input.file);
  } catch (const sim::InputError&) {
    return false;  // refused, as read_hdf5 refuses it
  }
  const results::RunResult& r = input.run;
  std::ostringstream out;
  input.summary = results::summarize(r);
  results::print_summary(out, input.summary);
  results::print_summary_json(out, input.summary);
  results::FairnessOptions options;
  options.weights = results::weights_from_scenario_text(r);
  options.entitlements_set = results::tenants_in_scenario_text(r);
  input.fairness = results::compute_fairness(r, options);
  results::print_fairness(out, input.fairness);
  results::print_fairness_json(out, input.fairness);
  const results::Fidelity fidelity = results::compute_fidelity(r);
  results::print_fidelity(out, fidelity);
  out << results::fidelity_section(r);
  (void)results::stats_by_tenant(r);
  (void)results::stats_by_kind(r);
  const auto runs = results::job_runs(r);
  (void)results::held_times(r, runs);
  (void)results::held_milli_ms(r, runs);
  out << results::render_report({input});
  out << results::render_report({input, input});  // several runs side by side
  return true;
}

}  // namespace headroom::fuzz
