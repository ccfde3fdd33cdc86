#pragma once

#include <QColor>
#include <QString>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gui/cluster.hpp"
#include "results/fairness.hpp"
#include "results/run_result.hpp"
#include "results/summary.hpp"

namespace headroom::gui {

using results::Tick;

inline constexpr Tick kTicksPerSecond = 1000;
inline constexpr Tick kTicksPerHour = 3600 * kTicksPerSecond;
inline constexpr Tick kTicksPerDay = 24 * kTicksPerHour;

// How many tenants get their own curve and colour; the rest are summed as "other".
inline constexpr std::size_t kTopTenants = 8;
inline constexpr int kJobStates = 7;

// Codes of /jobs/state, /jobs/kind and /events/kind (README "Output format").
enum class State : std::uint8_t { Pending, Running, Completed, Failed, Cancelled, Rejected, Unfinished };
enum class EventKind : std::uint8_t { Submit, Start, Finish, Reject, Preempt, Requeue, Unfinished };

QString state_name(std::uint8_t state);
QString kind_name(std::uint8_t kind);
QString event_name(std::uint8_t kind);

// Colour of a tenant's curve by its rank (0 = most GPU-hours); ranks >= kTopTenants are "other".
QColor tenant_colour(std::size_t rank);
QColor series_colour(std::size_t index);
// Colour of system (partition) `system` of a split site: the cluster map's owner frames and the
// Timeline's per-system curves.
QColor owner_colour(std::int32_t system);

struct Curve {
  Curve() = default;
  Curve(QString n, std::vector<double> v) : name(std::move(n)), y(std::move(v)) {}
  QString name;
  std::vector<double> y;  // one value per bucket: the mean of its samples
  // The lowest and highest sample of each bucket, and whether the lowest came first: what a chart
  // draws so that a one-sample outage (or peak) shows at any zoom. Empty at level 0 (= y).
  std::vector<double> lo, hi;
  std::vector<std::uint8_t> lo_first;
  double low(std::size_t b) const { return lo.empty() ? y[b] : lo[b]; }
  double high(std::size_t b) const { return hi.empty() ? y[b] : hi[b]; }
};

// Curves over one time axis, at one bucket size.
struct Bucketed {
  std::size_t samples_per_bucket = 1;
  std::vector<double> t_days;  // bucket start, days since the run's first submit
  std::vector<Curve> curves;
};

// The same curves at bucket sizes 1, 2, 4, ... samples; each bucket holds the mean, the lowest and
// the highest of its samples.
struct Pyramid {
  std::vector<Bucketed> levels;
  bool empty() const { return levels.empty() || levels.front().t_days.empty(); }
  const Bucketed& full() const { return levels.front(); }
  // The finest level that shows [x0, x1] (days) with at most max_points buckets.
  const Bucketed& level_for(double x0, double x1, std::size_t max_points) const;
};

// Builds the pyramid from curves sampled at t_days (level 0), halving until <= min_points remain.
// For curves drawn stacked, a bucket's lowest and highest are the curves' values at the sample
// where their sum is lowest and highest: the stack's outline then traces real totals (a per-curve
// highest would stack peaks of different moments above anything that happened).
enum class Stacking : std::uint8_t { Separate, Stacked };
Pyramid make_pyramid(std::vector<double> t_days, std::vector<Curve> curves, std::size_t min_points = 64,
                     Stacking stacking = Stacking::Separate);

// Empirical CDF of waits: y[i] is the fraction of waits <= x_hours[i].
struct Cdf {
  QString name;
  std::size_t rank = 0;  // tenant rank (colour); kTopTenants for "all tenants"
  std::vector<double> x_hours;
  std::vector<double> y;
};

// Waits in ticks -> at most max_points CDF steps (every distinct value when they fit).
Cdf make_cdf(std::vector<Tick> waits, std::size_t max_points = 256);

struct TenantStats {
  std::uint32_t id = 0;
  QString name;
  std::int64_t jobs = 0;
  std::int64_t started = 0;
  std::int64_t never_started = 0;  // not rejected; their waits count until the end (lower bounds)
  double gpu_hours = 0;
  double mean_wait_s = 0;
  double p95_wait_s = 0;
};

struct Kpis {
  std::int64_t jobs = 0;
  std::array<std::int64_t, kJobStates> by_state{};
  std::int64_t started = 0;
  std::int64_t never_started = 0;  // not rejected: counted in the waits until the run's end
  std::int64_t preemptions = 0;
  // Over every job not rejected, never-started ones until the end (lower bounds while
  // never_started > 0), nearest rank.
  double wait_mean_s = 0, wait_median_s = 0, wait_p95_s = 0;
  double jct_mean_s = 0;   // submit to end, completed jobs
  double utilization = 0;  // GPU-seconds held / (total GPUs x (sim_end - sim_start))
  double makespan_s = 0;
  // Jain's index is ReplayData::fairness.jain (results/fairness.hpp), the figure `headroom run`,
  // the Compare tab and the report show: one computation.
};

// Nodes out of service, from the audit log: a scripted outage (failure drill), a maintenance
// drain (from the cordon until the node is back) or a node failure.
enum class OutageKind : std::uint8_t { Outage, Drain, Failure };
inline constexpr int kOutageKinds = 3;
QString outage_kind_name(OutageKind kind);
QColor outage_colour(OutageKind kind);

struct NodeOutage {
  Tick start = 0, end = 0;  // [start, end); end = the run's end when the node never came back
  std::int32_t node = 0;
  OutageKind kind = OutageKind::Failure;
  std::uint32_t reason = 0;  // index into RunResult::reasons: the node_down row's (the drain's when none)
  bool back = true;          // false: never back, out at the run's end too (end = sim_end)
};

// A span in which nodes of one kind were out, overlapping node outages merged: what the charts
// mark on their time axis.
struct Marker {
  OutageKind kind = OutageKind::Failure;
  Tick start = 0, end = 0;
  std::int32_t nodes = 0;  // node outages merged into it
  QString text;            // "outage: site power loss, 1,024 nodes, 2h 00m"
};

// From /events (empty without node rows): node outages by start then node, and the markers by
// start then kind.
std::vector<NodeOutage> node_outages(const results::RunResult& r);
std::vector<Marker> outage_markers(const results::RunResult& r, const std::vector<NodeOutage>& outages);
// Per node: 1 + the OutageKind of an outage in force at t (start <= t < end), 0 when in service.
std::vector<std::uint8_t> nodes_out_at(const std::vector<NodeOutage>& outages, std::int32_t nodes, Tick t);

// Nearest-rank quantile of `values` (sorted ascending), p in (0, 1].
Tick nearest_rank(const std::vector<Tick>& sorted, int percent);

// Everything the views show for one result file, prepared once off the GUI thread and then
// shared read-only (std::shared_ptr<const ReplayData>) between models and views.
struct ReplayData {
  QString path;
  QString label;  // file name + policy, for tabs, legends and the compare table
  results::RunResult result;

  Tick origin = 0;                                       // x = 0 of every chart: the first submit
  std::vector<TenantStats> tenants;                      // by GPU-hours descending, ties by name
  std::vector<std::size_t> tenant_rank;                  // by tenant id: position in `tenants`
  std::vector<std::uint32_t> tenant_alpha, queue_alpha;  // by id: position in name order
  Kpis kpis;
  // What `headroom run` and `headroom compare` report for this file (results::summarize and
  // results::compute_fairness with the scenario's tenant weights): the Compare tab's figures.
  results::Summary summary;
  results::Fairness fairness;

  Pyramid used_by_tenant;          // top tenants + "other"
  Pyramid used_by_pool;            // one curve per pool, then capacity per pool
  Pyramid owned_by_partition;      // a split site with node moves: GPUs each system owns, then in transit
  Pyramid pending_jobs_by_tenant;  // top tenants + "other"
  Pyramid pending_gpus_by_tenant;  // top tenants + "other"
  Pyramid share_by_tenant;         // fraction of GPUs in use, top tenants + "other"
  Pyramid totals;                  // GPUs in use, pending jobs, running jobs
  std::vector<Cdf> wait_cdfs;      // "all tenants", then one per top tenant
  Pyramid pending_by_reason;       // pending jobs by PendingCode; empty when the file has none
  Pyramid recorded_vs_simulated;   // GPUs in use, recorded then simulated (gui/fidelity_curve.hpp)
  // A run with partitions (a split site's systems, a dispatcher's clusters; docs/split.md), one or
  // two curves per partition in /partitions order; all empty for a run without partitions.
  // used_by_partition: "<system> in use" (GPUs its jobs hold, wherever they run; a share rounded
  // up to whole GPUs as the tenant curves are), then "<system> owns" (its capacity: its home
  // GPUs, less nodes moved away from the owner change on, plus nodes that joined it).
  Pyramid used_by_partition;
  Pyramid pending_jobs_by_partition;  // jobs of each system waiting to start
  Pyramid pending_gpus_by_partition;  // the GPUs they ask for (shares rounded up, per system)

  ClusterIndex cluster;             // who held which node when, for the Replay tab's map and queue
  std::vector<NodeOutage> outages;  // nodes out of service (failure drill, maintenance)
  std::vector<Marker> markers;      // the outages merged, for the charts' time axes

  // Events of job j are event_index[event_offset[j] .. event_offset[j + 1]), in time order.
  std::vector<std::uint32_t> event_offset;
  std::vector<std::uint32_t> event_index;

  QString tenant_name(std::uint32_t id) const;
  QString queue_name(std::uint32_t id) const;
  QString pool_name(std::int32_t id) const;
  double x_days(Tick t) const { return static_cast<double>(t - origin) / static_cast<double>(kTicksPerDay); }
};

// Builds the snapshot. `path` names the source in labels; the result is moved in.
std::shared_ptr<const ReplayData> prepare(results::RunResult result, const QString& path);

// "0s", "4.2s", "42s", "12m 03s", "3h 07m", "2d 05h" (negative with a leading "-").
QString format_duration(Tick t);
// A point in time as an offset from the run start: "3d 04:05:06" or "04:05:06".
QString format_offset(Tick t);
// A point in time of run `d` (t: since its first submit): the UTC date and time when the trace
// gives a start date, "2010-05-07 09:34:55 UTC (6d 18:30:00)", else format_offset(t).
QString format_when(const ReplayData& d, Tick t);
// The same for a table cell, as the charts' axes read: "2010-05-07 09:34:55" when the trace gives a
// start date (UTC), else format_offset(t).
QString format_date(const ReplayData& d, Tick t);
// A pending job's reason after its kind, once: "gang: partially placed" (never "gang: gang: ...").
QString why_text(int code, const QString& words);

}  // namespace headroom::gui
