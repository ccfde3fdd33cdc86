#include "results/check.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

#include "models/job.hpp"
#include "models/observer.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::results {

namespace {

// Times beyond 2^62 ms are no run's (a trace's times stop at 10^12 s and a scenario scales them by
// 1,000 at most: 10^18 ms): within it, neither the difference nor the sum of two times overflows.
constexpr Tick kMaxTime = (Tick{1} << 62) - 1;
// The "row" of an attribute: it has none, and its message names none.
constexpr std::size_t kNoRow = std::numeric_limits<std::size_t>::max();

class Checker {
 public:
  Checker(const RunResult& r, const std::string& file) : r_(r), file_(file) {
    for (const PoolInfo& p : r.pools) nodes_ += std::max<std::int64_t>(p.nodes, 0);
  }

  [[noreturn]] void fail(std::string_view where, std::size_t row, const std::string& what) const {
    if (row == kNoRow) fail(where, what);
    throw sim::InputError(file_, 0, 0, std::string(where), "row " + std::to_string(row) + ": " + what);
  }
  [[noreturn]] void fail(std::string_view where, const std::string& what) const {
    throw sim::InputError(file_, 0, 0, std::string(where), what);
  }

  // lo <= v <= hi, else "expected <what>, got v".
  void in_range(std::string_view where, std::size_t row, std::int64_t v, std::int64_t lo, std::int64_t hi,
                std::string_view what) const {
    if (v < lo || v > hi) fail(where, row, "expected " + std::string(what) + ", got " + std::to_string(v));
  }
  // An index into a table of n rows (or `none` for no row, when allowed).
  void index(std::string_view where, std::size_t row, std::int64_t v, std::size_t n, std::string_view table,
             bool none_allowed = false) const {
    if ((none_allowed && v == -1) || (v >= 0 && static_cast<std::uint64_t>(v) < n)) return;
    fail(where, row,
         std::to_string(v) + " is not a row of " + std::string(table) + " (" + std::to_string(n) + " rows" +
             (none_allowed ? ", or -1 for none)" : ")"));
  }
  void time(std::string_view where, std::size_t row, Tick t) const {
    in_range(where, row, t, -kMaxTime, kMaxTime, "a time within +-2^62 ms");
  }
  void node(std::string_view where, std::size_t row, std::int64_t id, bool none_allowed = false) const {
    if ((none_allowed && id == -1) || (id >= 0 && id < nodes_)) return;
    fail(where, row,
         "node " + std::to_string(id) + " is not one of the " + std::to_string(nodes_) + " nodes of /meta/pool_nodes" +
             (none_allowed ? " (or -1 for none)" : ""));
  }
  // A count or an amount of GPU time: two of them add up without overflow.
  void amount(std::string_view where, std::size_t row, std::int64_t v) const {
    in_range(where, row, v, 0, kMaxTime, "a value from 0 to 2^62 - 1");
  }
  void finite(std::string_view where, std::size_t row, double v) const {
    if (!std::isfinite(v)) fail(where, row, "expected a finite number, got " + std::to_string(v));
  }
  // A matrix of one row per sample and `cols` columns (or none, when it may be absent).
  void matrix(std::string_view where, const std::vector<std::int32_t>& m, std::size_t cols, std::string_view of,
              bool optional = false) const {
    const std::size_t samples = r_.timeseries.time.size();
    if ((optional && m.empty()) || m.size() == samples * cols) return;
    fail(where, std::to_string(m.size()) + " values, expected " + std::to_string(samples) + " samples x " +
                    std::to_string(cols) + " " + std::string(of));
  }

  void run() const {
    time("attribute /@sim_start", kNoRow, r_.sim_start);
    time("attribute /@sim_end", kNoRow, r_.sim_end);
    // Seconds since 1970 (-1: no date), up to 10^12 s as a trace's times: in ms plus a time, no overflow.
    in_range("attribute /@unix_start", kNoRow, r_.unix_start, -1, 1'000'000'000'000, "-1 or seconds from 0 to 10^12");
    for (const auto& [name, v] :
         {std::pair{"total_gpus", r_.total_gpus}, std::pair{"lost_gpu_ms", r_.lost_gpu_ms},
          std::pair{"failure_lost_gpu_ms", r_.failure_lost_gpu_ms},
          std::pair{"bound_idle_gpu_ms", r_.bound_idle_gpu_ms}, std::pair{"node_outages", r_.node_outages},
          std::pair{"jobs_killed", r_.jobs_killed}, std::pair{"job_retries", r_.job_retries},
          std::pair{"jobs_failed_by_failure", r_.jobs_failed_by_failure},
          std::pair{"jobs_failed_by_policy", r_.jobs_failed_by_policy}})
      amount(std::string("attribute /@") + name, kNoRow, v);
    for (std::size_t i = 0; i < r_.pools.size(); ++i) {
      in_range("/meta/pool_nodes", i, r_.pools[i].nodes, 0, std::numeric_limits<std::int32_t>::max(), "nodes >= 0");
      in_range("/meta/pool_gpus_per_node", i, r_.pools[i].gpus_per_node, 0, std::numeric_limits<std::int32_t>::max(),
               "GPUs >= 0");
    }
    jobs();
    events();
    placements();
    recovery();
    split();
    timeseries();
  }

 private:
  void jobs() const {
    for (std::size_t i = 0; i < r_.jobs.size(); ++i) {
      const JobRecord& j = r_.jobs[i];
      index("/jobs/tenant", i, j.tenant, r_.tenants.size(), "/meta/tenants");
      index("/jobs/queue", i, j.queue, r_.queues.size(), "/meta/queues");
      in_range("/jobs/kind", i, j.kind, 0, 3, "0 (train), 1 (inference), 2 (interactive) or 3 (batch)");
      in_range("/jobs/state", i, j.state, 0, models::kJobStateCount - 1,
               "a job state 0 to " + std::to_string(models::kJobStateCount - 1));
      in_range("/jobs/gpus", i, j.gpus, 0, std::numeric_limits<std::int32_t>::max(), "GPUs >= 0");
      in_range("/jobs/gpu_milli", i, j.gpu_milli, 0, 1000, "milli-GPUs 0 to 1000");
      for (const auto& [where, t] :
           {std::pair{"/jobs/submit", j.submit}, std::pair{"/jobs/start", j.start}, std::pair{"/jobs/end", j.end},
            std::pair{"/jobs/runtime", j.runtime}, std::pair{"/jobs/walltime", j.walltime},
            std::pair{"/jobs/trace_start", j.trace_start}})
        time(where, i, t);
      in_range("/jobs/preemptions", i, j.preemptions, 0, std::numeric_limits<std::int32_t>::max(), "a count >= 0");
      in_range("/jobs/nodes_used", i, j.nodes_used, 0, std::numeric_limits<std::int32_t>::max(), "a count >= 0");
      node("/jobs/first_node", i, j.first_node, true);
      index("/jobs/pool", i, j.pool, r_.pools.size(), "/meta/pool_name", true);
    }
  }

  void events() const {
    using K = models::AuditKind;
    const std::size_t drills = r_.drill_start.size();
    for (std::size_t i = 0; i < r_.events.size(); ++i) {
      const EventRecord& e = r_.events[i];
      time("/events/time", i, e.time);
      in_range("/events/kind", i, e.kind, 0, models::kAuditKindCount - 1,
               "an event kind 0 to " + std::to_string(models::kAuditKindCount - 1));
      index("/events/reason", i, e.reason, r_.reasons.size(), "/meta/reasons");
      amount("/events/lost_gpu_ms", i, e.lost_gpu_ms);
      const auto kind = static_cast<K>(e.kind);
      // Node and drill events name no job (their job column holds 2^32 - 1); every other names one.
      const bool of_a_job =
          kind != K::NodeDown && kind != K::NodeUp && kind != K::Drain && kind != K::Drill && kind != K::Recovered;
      if (of_a_job) index("/events/job", i, e.job, r_.jobs.size(), "/jobs");
      switch (kind) {
        case K::Preempt: index("/events/detail", i, e.detail, r_.jobs.size(), "/jobs", true); break;
        case K::NodeDown:
        case K::NodeUp:
        case K::Drain:
        case K::Kill: node("/events/detail", i, e.detail); break;
        case K::Drill:
        case K::Recovered: index("/events/detail", i, e.detail, drills, "/meta/drill_start"); break;
        case K::Finish:
          in_range("/events/detail", i, e.detail, 0, models::kJobStateCount - 1,
                   "a job state 0 to " + std::to_string(models::kJobStateCount - 1));
          break;
        case K::Waiting:
          in_range("/events/detail", i, e.detail, 0, models::kPendingCodes - 1,
                   "a pending code 0 to " + std::to_string(models::kPendingCodes - 1));
          break;
        default: break;
      }
    }
  }

  void placements() const {
    for (std::size_t i = 0; i < r_.placements.size(); ++i) {
      const PlacementRecord& p = r_.placements[i];
      index("/placements/job", i, p.job, r_.jobs.size(), "/jobs");
      time("/placements/start", i, p.start);
      time("/placements/end", i, p.end);
      node("/placements/node", i, p.node);
      in_range("/placements/gpus", i, p.gpus, 0, std::numeric_limits<std::int32_t>::max(), "GPUs >= 0");
      in_range("/placements/gpu_milli", i, p.gpu_milli, 0, 1000, "milli-GPUs 0 to 1000");
      in_range("/placements/device", i, p.device, 0, std::numeric_limits<std::int32_t>::max(), "a device >= 0");
    }
    for (std::size_t i = 0; i < r_.services.size(); ++i) {
      const ServiceRecord& s = r_.services[i];
      in_range("/services/gpus_per_replica", i, s.gpus_per_replica, 0, std::numeric_limits<std::int32_t>::max(),
               "GPUs >= 0");
      time("/services/from", i, s.from);
      time("/services/to", i, s.to);
      in_range("/services/replicas", i, s.replicas, 0, std::numeric_limits<std::int64_t>::max(), "a count >= 0");
      in_range("/services/replicas_withdrawn", i, s.replicas_withdrawn, 0, std::numeric_limits<std::int64_t>::max(),
               "a count >= 0");
      for (const auto& [where, v] :
           {std::pair{"/services/throughput", s.throughput}, std::pair{"/services/time_attainment", s.time_attainment},
            std::pair{"/services/request_attainment", s.request_attainment},
            std::pair{"/services/mean_running", s.mean_running}, std::pair{"/services/mean_wanted", s.mean_wanted},
            std::pair{"/services/replica_gpu_hours", s.replica_gpu_hours}, std::pair{"/services/requests", s.requests}})
        finite(where, i, v);
    }
  }

  void recovery() const {
    const std::size_t drills = r_.drill_start.size();
    if (r_.drill_recovered.size() != drills) fail("/meta/drill_recovered", "length differs from /meta/drill_start");
    for (std::size_t i = 0; i < drills; ++i) {
      time("/meta/drill_start", i, r_.drill_start[i]);
      time("/meta/drill_recovered", i, r_.drill_recovered[i]);
    }
    for (std::size_t i = 0; i < r_.outages.size(); ++i) {
      const OutageRecord& o = r_.outages[i];
      time("/outages/start", i, o.start);
      time("/outages/end", i, o.end);
      in_range("/outages/kind", i, o.kind, 0, 2, "0 (failure), 1 (scripted) or 2 (maintenance)");
      index("/outages/drill", i, o.drill, drills, "/meta/drill_start", true);
      index("/outages/reason", i, o.reason, r_.reasons.size(), "/meta/reasons");
      in_range("/outages/nodes", i, o.nodes, 0, std::numeric_limits<std::int32_t>::max(), "a count >= 0");
    }
    for (std::size_t i = 0; i < r_.kills.size(); ++i) {
      const KillRecord& k = r_.kills[i];
      index("/kills/outage", i, k.outage, r_.outages.size(), "/outages");
      index("/kills/job", i, k.job, r_.jobs.size(), "/jobs");
      time("/kills/time", i, k.time);
      time("/kills/restart", i, k.restart);
      in_range("/kills/nodes", i, k.nodes, 0, std::numeric_limits<std::int32_t>::max(), "a count >= 0");
      amount("/kills/lost_gpu_ms", i, k.lost_gpu_ms);
      amount("/kills/partial_gpu_ms", i, k.partial_gpu_ms);
    }
    for (std::size_t i = 0; i < r_.outage_slo.size(); ++i) {
      const OutageSlo& o = r_.outage_slo[i];
      index("/outage_slo/drill", i, o.drill, drills, "/meta/drill_start", true);
      time("/outage_slo/from", i, o.from);
      time("/outage_slo/to", i, o.to);
      finite("/outage_slo/during", i, o.during);
      finite("/outage_slo/after", i, o.after);
    }
    if (r_.tenant_denied.size() > r_.tenants.size())
      fail("/meta/tenant_denied", std::to_string(r_.tenant_denied.size()) + " values, more than the " +
                                      std::to_string(r_.tenants.size()) + " tenants of /meta/tenants");
    for (std::size_t i = 0; i < r_.tenant_denied.size(); ++i)
      in_range("/meta/tenant_denied", i, r_.tenant_denied[i], 0, static_cast<std::int64_t>(r_.jobs.size()),
               "a count of jobs from 0 to the " + std::to_string(r_.jobs.size()) + " of /jobs");
  }

  void split() const {
    if (r_.partitions.empty()) {
      if (!r_.job_partition.empty()) fail("/jobs/partition", "partitions of jobs but no /partitions");
      if (!r_.moves.empty()) fail("/moves", "node moves but no /partitions");
      return;
    }
    for (std::size_t i = 0; i < r_.partitions.size(); ++i) {
      const PartitionRecord& p = r_.partitions[i];
      in_range("/partitions/first_node", i, p.first_node, 0, nodes_, "a node of /meta/pool_nodes");
      in_range("/partitions/nodes", i, p.nodes, 0, nodes_ - p.first_node, "nodes up to the cluster's last");
      in_range("/partitions/first_pool", i, p.first_pool, 0, static_cast<std::int64_t>(r_.pools.size()),
               "a row of /meta/pool_name");
      in_range("/partitions/pools", i, p.pools, 0, static_cast<std::int64_t>(r_.pools.size()) - p.first_pool,
               "pools up to the last of /meta/pool_name");
      amount("/partitions/gpus", i, p.gpus);
      amount("/partitions/boundary_idle_gpu_ms", i, p.boundary_idle_gpu_ms);
    }
    if (r_.job_partition.size() != r_.jobs.size())
      fail("/jobs/partition",
           std::to_string(r_.job_partition.size()) + " rows, expected " + std::to_string(r_.jobs.size()));
    for (std::size_t i = 0; i < r_.job_partition.size(); ++i)
      index("/jobs/partition", i, r_.job_partition[i], r_.partitions.size(), "/partitions");
    for (std::size_t i = 0; i < r_.moves.size(); ++i) {
      const MoveRecord& m = r_.moves[i];
      node("/moves/node", i, m.node);
      index("/moves/from", i, m.from, r_.partitions.size(), "/partitions");
      index("/moves/to", i, m.to, r_.partitions.size(), "/partitions");
      in_range("/moves/gpus", i, m.gpus, 0, std::numeric_limits<std::int32_t>::max(), "GPUs >= 0");
      time("/moves/requested", i, m.requested);
      time("/moves/changed", i, m.changed);
      time("/moves/ready", i, m.ready);
    }
  }

  void timeseries() const {
    const TimeSeries& ts = r_.timeseries;
    const std::size_t samples = ts.time.size();
    in_range("attribute /timeseries/@interval", kNoRow, ts.interval, 0, kMaxTime, "a time >= 0");
    for (std::size_t i = 0; i < samples; ++i) time("/timeseries/time", i, ts.time[i]);
    for (const auto& [where, column] : {std::pair{"/timeseries/running_jobs", &ts.running_jobs},
                                        std::pair{"/timeseries/pending_jobs", &ts.pending_jobs}})
      if (column->size() != samples)
        fail(where, std::to_string(column->size()) + " values, expected " + std::to_string(samples) +
                        " (one per sample time)");
    const std::size_t pools = r_.pools.size(), tenants = r_.tenants.size();
    matrix("/timeseries/pool_used_gpus", ts.pool_used_gpus, pools, "pools");
    matrix("/timeseries/pool_free_gpus", ts.pool_free_gpus, pools, "pools");
    matrix("/timeseries/pool_down_gpus", ts.pool_down_gpus, pools, "pools", true);
    matrix("/timeseries/pool_fragmented_gpus", ts.pool_frag_gpus, pools, "pools", true);
    matrix("/timeseries/tenant_used_gpus", ts.tenant_used_gpus, tenants, "tenants");
    matrix("/timeseries/tenant_pending_jobs", ts.tenant_pending_jobs, tenants, "tenants");
    matrix("/timeseries/tenant_pending_gpus", ts.tenant_pending_gpus, tenants, "tenants");
    matrix("/timeseries/pending_by_reason", ts.pending_by_reason, models::kPendingCodes, "pending codes", true);
  }

  const RunResult& r_;
  const std::string& file_;
  std::int64_t nodes_ = 0;  // the cluster's nodes: those of every pool
};

}  // namespace

void check_result(const RunResult& r, const std::string& file) { Checker(r, file).run(); }

SweepShape check_sweep_table(const Table& t, const std::string& file) {
  auto fail = [&](const std::string& where, const std::string& what) {
    throw sim::InputError(file, 0, 0, where, what);
  };
  auto fail_row = [&](const Column& c, std::size_t row, const std::string& what) {
    fail("/runs/" + c.name, "row " + std::to_string(row) + ": " + what);
  };
  auto shown = [](double v) {  // shortest round-trip form, as the CSV writes it
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
  };
  auto attr = [&](const char* key) -> const std::string* {
    const auto it = t.attributes.find(key);
    return it == t.attributes.end() ? nullptr : &it->second;
  };
  // A whole number in decimal digits, at most `max`.
  auto whole = [](const std::string& text, std::uint64_t max, std::uint64_t& v) {
    const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
    return !text.empty() && res.ec == std::errc() && res.ptr == text.data() + text.size() && v <= max;
  };
  for (const Column& c : t.columns)
    if (c.size() != t.rows())
      fail("/runs/" + c.name, std::to_string(c.size()) + " values, expected " + std::to_string(t.rows()) +
                                  " (one per run, as /runs/" + t.columns.front().name + ")");
  for (const auto& [key, value] : t.attributes)
    if (const std::size_t bad = sim::utf8_error(value); bad != std::string::npos)
      fail("attribute /@" + key, "not valid UTF-8 (byte " + std::to_string(bad) + ")");
  for (const Column& c : t.columns) {
    if (const std::size_t bad = sim::utf8_error(c.name); bad != std::string::npos)
      fail("/runs", "a column's name is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    if (!c.text) continue;
    for (std::size_t r = 0; r < c.strings.size(); ++r)
      if (const std::size_t bad = sim::utf8_error(c.strings[r]); bad != std::string::npos)
        fail_row(c, r, "not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  if (t.columns.empty() || t.columns.front().name != "run" || t.columns.front().text)
    fail("/runs", "not a sweep table: its first column is " +
                      (t.columns.empty() ? std::string("missing") : "\"" + t.columns.front().name + "\"") +
                      ", expected \"run\" (numbers)");
  const std::size_t rows = t.rows();
  constexpr auto kMax = static_cast<std::uint64_t>(kMaxSweepRuns);
  if (rows > kMax)
    fail("/runs/run",
         std::to_string(rows) + " runs, more than the " + sim::thousands(kMaxSweepRuns) + " a sweep holds");
  std::uint64_t total = rows;
  if (const std::string* text = attr("total_runs")) {
    if (!whole(*text, kMax, total) || total == 0 || total < rows)
      fail("attribute /@total_runs", "expected the sweep's number of runs, a whole number from " +
                                         std::to_string(std::max<std::size_t>(rows, 1)) + " (the rows of /runs) to " +
                                         sim::thousands(kMaxSweepRuns) + ", got \"" + *text + "\"");
  }
  SweepShape shape;
  shape.total_runs = static_cast<std::size_t>(total);
  if (const std::string* text = attr("shard")) {
    const auto shard = parse_shard_text(*text);
    if (!shard)
      fail("attribute /@shard",
           "expected I/N with 0 <= I < N <= " + sim::thousands(kMaxSweepRuns) + ", got \"" + *text + "\"");
    std::tie(shape.shard_index, shape.shard_count) = *shard;
  }
  // Each run once: a bit per run of the sweep (at most 10^6).
  const Column& run = t.columns.front();
  std::vector<bool> seen(static_cast<std::size_t>(total), false);
  for (std::size_t r = 0; r < rows; ++r) {
    const double v = run.numbers[r];
    if (!(v >= 0 && v < static_cast<double>(total) && v == std::floor(v)))
      fail_row(
          run, r,
          "expected a run of the sweep, a whole number from 0 to " + std::to_string(total - 1) + ", got " + shown(v));
    const auto k = static_cast<std::size_t>(v);
    if (seen[k]) fail_row(run, r, "run " + std::to_string(k) + " appears twice");
    seen[k] = true;
  }
  for (const Column& c : t.columns) {
    if (c.name == "seed") {
      if (c.text) fail("/runs/seed", "expected numbers, not text");
      for (std::size_t r = 0; r < rows; ++r)
        if (const double v = c.numbers[r]; !(v >= 0 && v < 0x1p64 && v == std::floor(v)))
          fail_row(c, r, "expected a seed, a whole number from 0 to 2^64 - 1, got " + shown(v));
    } else if (c.name == "status" && !c.text) {
      fail("/runs/status", "expected text (done, failed or cancelled), not numbers");
    }
  }
  return shape;
}

}  // namespace headroom::results
