#include "gui/replay_data.hpp"

#include <QElapsedTimer>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <numeric>
#include <tuple>

#include "gui/fidelity_curve.hpp"
#include "results/format.hpp"

namespace headroom::gui {
namespace {

constexpr const char* kStateNames[] = {"pending",   "running",  "completed", "failed",
                                       "cancelled", "rejected", "unfinished"};
constexpr const char* kKindNames[] = {"train", "inference", "interactive", "batch"};
constexpr const char* kEventNames[] = {"submit",  "start",      "finish",    "reject",    "preempt",
                                       "requeue", "unfinished", "node_down", "node_up",   "drain",
                                       "kill",    "retry",      "drill",     "recovered", "waiting"};

// Tableau 10, then grey for "other".
constexpr QRgb kPalette[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f};
constexpr QRgb kOther = 0xbab0ac;

template <std::size_t N>
QString name_of(const char* const (&names)[N], std::uint8_t code) {
  return code < N ? QString::fromLatin1(names[code]) : QStringLiteral("#%1").arg(code);
}

std::int64_t held_milli(const results::JobRecord& j) {
  return j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli : static_cast<std::int64_t>(j.gpus) * 1000;
}

double mean_s(const std::vector<Tick>& v) {
  if (v.empty()) return 0;
  long double sum = 0;
  for (Tick x : v) sum += static_cast<long double>(x);
  return static_cast<double>(sum / static_cast<long double>(v.size()) / 1000.0L);
}

double seconds(Tick t) { return static_cast<double>(t) / static_cast<double>(kTicksPerSecond); }

// Curves of a [sample][tenant] matrix: one per top tenant, then "other" when more tenants exist.
std::vector<Curve> tenant_curves(const ReplayData& d, const std::vector<std::int32_t>& matrix, std::size_t samples,
                                 bool as_share) {
  std::vector<Curve> curves;
  if (samples == 0 || matrix.size() % samples != 0) return curves;
  const std::size_t width = matrix.size() / samples;
  const std::size_t top = std::min(kTopTenants, d.tenants.size());
  const bool other = d.tenants.size() > kTopTenants;
  curves.resize(top + (other ? 1 : 0));
  for (std::size_t c = 0; c < top; ++c) curves[c].name = d.tenants[c].name;
  if (other) curves[top].name = QStringLiteral("other (%1 tenants)").arg(d.tenants.size() - top);
  for (Curve& c : curves) c.y.assign(samples, 0.0);
  for (std::size_t s = 0; s < samples; ++s) {
    const std::int32_t* row = matrix.data() + s * width;
    double total = 0;
    for (std::size_t t = 0; t < width; ++t) {
      const std::size_t rank = t < d.tenant_rank.size() ? d.tenant_rank[t] : d.tenants.size();
      const std::size_t c = rank < top ? rank : top;
      total += row[t];
      if (c < curves.size()) curves[c].y[s] += row[t];
    }
    if (as_share)
      for (Curve& c : curves) c.y[s] = total > 0 ? c.y[s] / total : 0.0;
  }
  return curves;
}

// With HEADROOM_GUI_TIMING set, prints the time since the previous mark (for `--load-only`).
class StageClock {
 public:
  StageClock() : on_(qEnvironmentVariableIsSet("HEADROOM_GUI_TIMING")) { clock_.start(); }
  void mark(const char* stage) {
    if (!on_) return;
    std::fprintf(stderr, "headroom-gui: prepare: %-18s %8.1f ms\n", stage,
                 static_cast<double>(clock_.nsecsElapsed()) / 1e6);
    clock_.restart();
  }

 private:
  bool on_;
  QElapsedTimer clock_;
};

// The GPUs each system of a split site owns at each sample (docs/split.md, "Moving nodes"), by
// partition then "in transit" (partitions + 1 rows of `time.size()` values): its home partition's
// GPUs, less the nodes that changed owner away from it, plus those that joined it (after the move
// delay); a node between its owner change and joining counts as in transit.
std::vector<std::vector<double>> owned_gpus(const results::RunResult& r, const std::vector<Tick>& time) {
  // Each move as two steps in time order (the owner change: from -> in transit; joining, at the
  // later of ready and the change: in transit -> to), swept once along the samples.
  struct Step {
    Tick at;
    std::size_t from, to;
    double gpus;
  };
  const std::size_t transit = r.partitions.size();
  std::vector<Step> steps;
  for (const results::MoveRecord& m : r.moves) {
    if (m.changed < 0 || m.from < 0 || m.to < 0 || static_cast<std::size_t>(std::max(m.from, m.to)) >= transit)
      continue;
    steps.push_back({m.changed, static_cast<std::size_t>(m.from), transit, static_cast<double>(m.gpus)});
    if (m.ready >= 0)
      steps.push_back(
          {std::max(m.ready, m.changed), transit, static_cast<std::size_t>(m.to), static_cast<double>(m.gpus)});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  std::vector<double> gpus(transit + 1, 0.0);
  for (std::size_t k = 0; k < transit; ++k) gpus[k] = static_cast<double>(r.partitions[k].gpus);
  std::vector<std::vector<double>> owned(transit + 1);
  for (auto& o : owned) o.reserve(time.size());
  std::size_t next = 0;
  for (const Tick t : time) {  // the samples' times ascend
    for (; next < steps.size() && steps[next].at <= t; ++next) {
      gpus[steps[next].from] -= steps[next].gpus;
      gpus[steps[next].to] += steps[next].gpus;
    }
    for (std::size_t k = 0; k < gpus.size(); ++k) owned[k].push_back(gpus[k]);
  }
  return owned;
}

// Counts of states that hold over [from, until) at the samples, per partition: a state shows at
// every sample t with from <= t < until (until < 0: to the end), as a state entered at an event
// of the sample's instant already does. A difference array of (partitions x (samples + 1)), summed
// once: memory bounded by the samples, one binary search per interval.
class SampleCounts {
 public:
  SampleCounts(const std::vector<Tick>& time, std::size_t partitions)
      : time_(time), stride_(time.size() + 1), diff_(partitions * stride_, 0) {}
  void add(std::size_t partition, Tick from, Tick until, std::int64_t amount) {
    const std::size_t s0 = first_at_or_after(from);
    const std::size_t s1 = until < 0 ? time_.size() : first_at_or_after(until);
    if (s0 >= s1) return;  // no sample inside
    diff_[partition * stride_ + s0] += amount;
    diff_[partition * stride_ + s1] -= amount;
  }
  // The totals of partition k at each sample, through `convert` (e.g. milli-GPUs to whole GPUs).
  template <class F>
  std::vector<double> totals(std::size_t k, F convert) const {
    std::vector<double> y(time_.size());
    std::int64_t sum = 0;
    for (std::size_t s = 0; s < time_.size(); ++s) y[s] = convert(sum += diff_[k * stride_ + s]);
    return y;
  }

 private:
  std::size_t first_at_or_after(Tick t) const {
    return static_cast<std::size_t>(std::lower_bound(time_.begin(), time_.end(), t) - time_.begin());
  }
  const std::vector<Tick>& time_;
  std::size_t stride_;
  std::vector<std::int64_t> diff_;
};

// /events/kind of a killed job pending again after its back-off (models::AuditKind::Retry).
constexpr std::uint8_t kRetryEvent = 11;

double whole_gpus(std::int64_t milli) { return static_cast<double>((milli + 999) / 1000); }

// The Timeline's per-partition charts of a run with partitions (docs/split.md, "In the app"):
// GPUs in use by each system's jobs (from /placements and /jobs/partition) against the GPUs it
// owns, and its pending jobs and GPUs (from each job's events: pending from its submit, requeue
// or retry until it starts, is rejected, withdrawn or left unfinished).
void partition_curves(ReplayData& d, const std::vector<double>& t_days) {
  const results::RunResult& r = d.result;
  const std::vector<Tick>& time = r.timeseries.time;
  const std::size_t parts = r.partitions.size();
  if (parts == 0 || time.empty() || r.job_partition.size() != r.jobs.size()) return;
  SampleCounts used(time, parts), pending_jobs(time, parts), pending_milli(time, parts);
  for (const results::PlacementRecord& p : r.placements) {
    if (p.job >= r.jobs.size() || r.job_partition[p.job] >= parts) continue;
    used.add(r.job_partition[p.job], p.start, p.end,
             static_cast<std::int64_t>(p.gpus) * 1000 + static_cast<std::int64_t>(p.gpu_milli));
  }
  for (std::size_t j = 0; j < r.jobs.size(); ++j) {
    const std::size_t k = r.job_partition[j];
    if (k >= parts) continue;
    const results::JobRecord& job = r.jobs[j];
    // The GPUs it asks for, as models::gpu_demand_milli counts them.
    const std::int64_t demand = job.gpu_milli > 0 && job.gpus <= 1 ? job.gpu_milli : std::int64_t{job.gpus} * 1000;
    Tick since = -1;  // pending since; -1: not pending
    for (std::uint32_t i = d.event_offset[j]; i < d.event_offset[j + 1]; ++i) {
      const results::EventRecord& e = r.events[d.event_index[i]];
      switch (static_cast<EventKind>(e.kind)) {
        case EventKind::Submit:
        case EventKind::Requeue:
          if (since < 0) since = e.time;
          break;
        case EventKind::Start:
        case EventKind::Finish:
        case EventKind::Reject:
        case EventKind::Unfinished:
          if (since >= 0) {
            pending_jobs.add(k, since, e.time, 1);
            pending_milli.add(k, since, e.time, demand);
          }
          since = -1;
          break;
        default:
          if (e.kind == kRetryEvent && since < 0) since = e.time;
          break;
      }
    }
    if (since >= 0) {
      pending_jobs.add(k, since, -1, 1);
      pending_milli.add(k, since, -1, demand);
    }
  }
  std::vector<Curve> in_use, jobs, gpus;
  const std::vector<std::vector<double>> owned = owned_gpus(r, time);
  const auto same = [](std::int64_t v) { return static_cast<double>(v); };
  for (std::size_t k = 0; k < parts; ++k) {
    const QString name = QString::fromStdString(r.partitions[k].name);
    in_use.push_back({name + QStringLiteral(" in use"), used.totals(k, whole_gpus)});
    in_use.push_back({name + QStringLiteral(" owns"), owned[k]});
    jobs.push_back({name, pending_jobs.totals(k, same)});
    gpus.push_back({name, pending_milli.totals(k, whole_gpus)});
  }
  d.used_by_partition = make_pyramid(t_days, std::move(in_use));
  d.pending_jobs_by_partition = make_pyramid(t_days, std::move(jobs));
  d.pending_gpus_by_partition = make_pyramid(t_days, std::move(gpus));
}

}  // namespace

QString state_name(std::uint8_t state) { return name_of(kStateNames, state); }
QString kind_name(std::uint8_t kind) { return name_of(kKindNames, kind); }
QString event_name(std::uint8_t kind) { return name_of(kEventNames, kind); }

QColor tenant_colour(std::size_t rank) { return QColor(rank < kTopTenants ? kPalette[rank] : kOther); }
// A split site's systems: the frame (and idle colour) of each node says who owns it.
QColor owner_colour(std::int32_t system) {
  static const std::array<QColor, 6> colours = {QColor(0x1f, 0x4e, 0x9c), QColor(0x2e, 0x8b, 0x3e),
                                                QColor(0x8e, 0x3b, 0x9c), QColor(0xb0, 0x5a, 0x00),
                                                QColor(0x00, 0x7f, 0x86), QColor(0x9c, 0x1f, 0x3a)};
  return colours[static_cast<std::size_t>(std::max(system, 0)) % colours.size()];
}

QColor series_colour(std::size_t index) {
  // Tableau 10 (less its grey), then 12 more chosen (mostly from K. L. Kelly's "Twenty-two colors of
  // maximum contrast", 1965) at least 49 apart in RGB from every other; past those, hues a golden
  // angle apart. Every run of a 20-run bake-off gets its own colour.
  static constexpr QRgb kMore[] = {0x875692, 0x008856, 0xbe0032, 0x0067a5, 0xf6a600, 0x882d17,
                                   0x8db600, 0x00c4ff, 0xdcd300, 0x2b3d26, 0xa1caf1, 0xff00aa};
  constexpr std::size_t a = std::size(kPalette), b = std::size(kMore);
  if (index < a) return QColor(kPalette[index]);
  if (index < a + b) return QColor(kMore[index - a]);
  const double hue = std::fmod(static_cast<double>(index - a - b) * 137.508, 360.0);
  return QColor::fromHsvF(static_cast<float>(hue / 360.0), 0.75f, index % 2 ? 0.6f : 0.85f);
}

const Bucketed& Pyramid::level_for(double x0, double x1, std::size_t max_points) const {
  for (const Bucketed& level : levels) {
    const auto lo = std::lower_bound(level.t_days.begin(), level.t_days.end(), x0);
    const auto hi = std::upper_bound(level.t_days.begin(), level.t_days.end(), x1);
    if (static_cast<std::size_t>(hi - lo) <= max_points) return level;
  }
  return levels.back();
}

Pyramid make_pyramid(std::vector<double> t_days, std::vector<Curve> curves, std::size_t min_points, Stacking stacking) {
  Pyramid p;
  const std::size_t n = t_days.size();
  // Stacked: each sample's total over the curves, to pick a bucket's lowest and highest sample.
  std::vector<double> total;
  if (stacking == Stacking::Stacked) {
    total.assign(n, 0.0);
    for (const Curve& c : curves)
      for (std::size_t i = 0; i < n && i < c.y.size(); ++i) total[i] += c.y[i];
  }
  for (std::size_t size = 1;; size *= 2) {
    Bucketed level;
    level.samples_per_bucket = size;
    const std::size_t buckets = (n + size - 1) / size;
    level.t_days.reserve(buckets);
    for (std::size_t b = 0; b < buckets; ++b) level.t_days.push_back(t_days[b * size]);
    for (const Curve& c : curves) {
      Curve out{c.name, {}};
      out.y.reserve(buckets);
      if (size > 1) {
        out.lo.reserve(buckets);
        out.hi.reserve(buckets);
        out.lo_first.reserve(buckets);
      }
      for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t begin = b * size, end = std::min(n, begin + size);
        double sum = 0;
        std::size_t lo = begin, hi = begin;
        const std::vector<double>& by = total.empty() ? c.y : total;
        for (std::size_t i = begin; i < end; ++i) {
          sum += c.y[i];
          if (by[i] < by[lo]) lo = i;
          if (by[i] > by[hi]) hi = i;
        }
        out.y.push_back(sum / static_cast<double>(end - begin));
        if (size > 1) {
          out.lo.push_back(c.y[lo]);
          out.hi.push_back(c.y[hi]);
          out.lo_first.push_back(lo <= hi);
        }
      }
      level.curves.push_back(std::move(out));
    }
    p.levels.push_back(std::move(level));
    if (buckets <= min_points) break;
  }
  return p;
}

QString outage_kind_name(OutageKind kind) {
  switch (kind) {
    case OutageKind::Outage: return QStringLiteral("outage");
    case OutageKind::Drain: return QStringLiteral("maintenance drain");
    case OutageKind::Failure: return QStringLiteral("node failure");
  }
  return {};
}

QColor outage_colour(OutageKind kind) {
  switch (kind) {
    case OutageKind::Outage: return QColor(0xc6, 0x28, 0x28);
    case OutageKind::Drain: return QColor(0xef, 0x8f, 0x00);
    case OutageKind::Failure: return QColor(0x6a, 0x1b, 0x9a);
  }
  return {};
}

std::vector<NodeOutage> node_outages(const results::RunResult& r) {
  constexpr std::uint8_t kNodeDown = 7, kNodeUp = 8, kDrain = 9;
  std::vector<NodeOutage> out;
  std::vector<std::int64_t> open;  // by node: index into out of its open outage, -1 when in service
  const auto reason = [&](std::uint32_t i) { return i < r.reasons.size() ? r.reasons[i] : std::string(); };
  for (const results::EventRecord& e : r.events) {
    if (e.kind != kNodeDown && e.kind != kNodeUp && e.kind != kDrain) continue;
    if (e.detail < 0) continue;
    const auto node = static_cast<std::size_t>(e.detail);
    if (node >= open.size()) open.resize(node + 1, -1);
    if (e.kind == kNodeUp) {
      if (open[node] >= 0) out[static_cast<std::size_t>(open[node])].end = e.time;
      open[node] = -1;
      continue;
    }
    if (open[node] >= 0) {  // a drained node going down: the drain goes on; keep the down row's words
      NodeOutage& o = out[static_cast<std::size_t>(open[node])];
      if (e.kind == kNodeDown && e.reason != 0) o.reason = e.reason;
      continue;
    }
    const std::string why = reason(e.reason);
    OutageKind kind = OutageKind::Failure;
    if (e.kind == kDrain || why.find("maintenance") != std::string::npos)
      kind = OutageKind::Drain;
    else if (why.rfind("outage", 0) == 0)
      kind = OutageKind::Outage;
    open[node] = static_cast<std::int64_t>(out.size());
    out.push_back(NodeOutage{e.time, -1, e.detail, kind, e.reason});
  }
  for (NodeOutage& o : out)
    if (o.end < 0) {
      o.end = std::max(o.start, r.sim_end);
      o.back = false;
    }
  std::stable_sort(out.begin(), out.end(), [](const NodeOutage& a, const NodeOutage& b) {
    return a.start != b.start ? a.start < b.start : a.node < b.node;
  });
  return out;
}

std::vector<Marker> outage_markers(const results::RunResult& r, const std::vector<NodeOutage>& outages) {
  std::vector<Marker> out;
  for (int k = 0; k < kOutageKinds; ++k) {
    const auto kind = static_cast<OutageKind>(k);
    Marker m;
    std::uint32_t reason = 0;
    const auto close = [&] {
      if (m.nodes == 0) return;
      std::string what = reason < r.reasons.size() ? r.reasons[reason] : std::string();
      if (what.rfind("outage: ", 0) == 0) what = what.substr(8);
      QString text = outage_kind_name(kind);
      if (!what.empty() && kind == OutageKind::Outage) text += QStringLiteral(": ") + QString::fromStdString(what);
      text += QStringLiteral(", %1 %2, %3")
                  .arg(QString::fromStdString(results::thousands(m.nodes)), m.nodes == 1 ? "node" : "nodes",
                       QString::fromStdString(results::duration(static_cast<double>(m.end - m.start) / 1000.0)));
      m.text = text;
      out.push_back(m);
      m = Marker{};
    };
    for (const NodeOutage& o : outages) {
      if (o.kind != kind) continue;
      if (m.nodes > 0 && o.start > m.end) close();
      if (m.nodes == 0) {
        m.kind = kind;
        m.start = o.start;
        m.end = o.end;
        reason = o.reason;
      }
      m.end = std::max(m.end, o.end);
      ++m.nodes;
    }
    close();
  }
  std::stable_sort(out.begin(), out.end(), [](const Marker& a, const Marker& b) {
    return a.start != b.start ? a.start < b.start : a.kind < b.kind;
  });
  return out;
}

std::vector<std::uint8_t> nodes_out_at(const std::vector<NodeOutage>& outages, std::int32_t nodes, Tick t) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(std::max(nodes, 0)), 0);
  for (const NodeOutage& o : outages) {
    if (o.start > t) break;
    if ((t < o.end || !o.back) && o.node >= 0 && o.node < nodes)
      out[static_cast<std::size_t>(o.node)] = 1 + static_cast<std::uint8_t>(o.kind);
  }
  return out;
}

Cdf make_cdf(std::vector<Tick> waits, std::size_t max_points) {
  Cdf cdf;
  std::sort(waits.begin(), waits.end());
  const std::size_t n = waits.size();
  if (n == 0 || max_points == 0) return cdf;
  const auto add = [&](Tick v) {
    const double x = static_cast<double>(v) / static_cast<double>(kTicksPerHour);
    if (!cdf.x_hours.empty() && cdf.x_hours.back() == x) return;
    const auto at = std::upper_bound(waits.begin(), waits.end(), v) - waits.begin();
    cdf.x_hours.push_back(x);
    cdf.y.push_back(static_cast<double>(at) / static_cast<double>(n));
  };
  std::size_t distinct = 1;
  for (std::size_t i = 1; i < n && distinct <= max_points; ++i) distinct += waits[i] != waits[i - 1];
  if (distinct <= max_points) {
    for (Tick v : waits) add(v);
  } else {
    for (std::size_t k = 1; k <= max_points; ++k) add(waits[(k * n + max_points - 1) / max_points - 1]);
  }
  return cdf;
}

Tick nearest_rank(const std::vector<Tick>& sorted, int percent) {
  if (sorted.empty()) return 0;
  const std::size_t n = sorted.size();
  const std::size_t i = (static_cast<std::size_t>(percent) * n + 99) / 100;
  return sorted[std::max<std::size_t>(i, 1) - 1];
}

QString ReplayData::tenant_name(std::uint32_t id) const {
  return id < result.tenants.size() ? QString::fromStdString(result.tenants[id]) : QStringLiteral("#%1").arg(id);
}
QString ReplayData::queue_name(std::uint32_t id) const {
  return id < result.queues.size() ? QString::fromStdString(result.queues[id]) : QStringLiteral("#%1").arg(id);
}
QString ReplayData::pool_name(std::int32_t id) const {
  if (id < 0) return {};
  return static_cast<std::size_t>(id) < result.pools.size() ? QString::fromStdString(result.pools[id].name)
                                                            : QStringLiteral("#%1").arg(id);
}

std::shared_ptr<const ReplayData> prepare(results::RunResult result, const QString& path) {
  StageClock clock;
  auto d = std::make_shared<ReplayData>();
  d->path = path;
  d->result = std::move(result);
  const results::RunResult& r = d->result;
  // The cluster index reads the result only and writes nothing else: built on a second thread
  // while the rest is prepared here (the same index whichever finishes first).
  std::future<ClusterIndex> cluster = std::async(std::launch::async, [&r] { return build_cluster_index(r); });
  std::future<std::pair<results::Summary, results::Fairness>> figures = std::async(std::launch::async, [&r] {
    results::FairnessOptions opt;
    opt.weights = results::weights_from_scenario_text(r);
    opt.entitlements_set = results::tenants_in_scenario_text(r);
    return std::make_pair(results::summarize(r), results::compute_fairness(r, opt));
  });
  d->label = QFileInfo(path).fileName();
  if (d->label.isEmpty()) d->label = QString::fromStdString(r.scenario_name);
  d->origin = r.sim_start;

  // Per-tenant totals; ids past the name table (a hand-built result) still count.
  std::size_t tenant_count = r.tenants.size();
  for (const auto& j : r.jobs) tenant_count = std::max<std::size_t>(tenant_count, j.tenant + std::size_t{1});
  std::vector<std::vector<Tick>> tenant_waits(tenant_count);
  std::vector<long double> tenant_milli_ms(tenant_count, 0);
  std::vector<Tick> waits, jcts;
  long double milli_ms_total = 0;
  Kpis& k = d->kpis;
  k.jobs = static_cast<std::int64_t>(r.jobs.size());
  d->tenants.resize(tenant_count);
  for (const auto& j : r.jobs) {
    if (j.state < kJobStates) ++k.by_state[j.state];
    k.preemptions += j.preemptions;
    ++d->tenants[j.tenant].jobs;
    if (j.state == static_cast<std::uint8_t>(State::Completed) && j.end >= 0) jcts.push_back(j.end - j.submit);
    if (j.start < 0) {
      // A job that never started (and was not rejected) waits until it left or the run ended: its
      // wait counts as a lower bound, as in the run summary (results/summary.hpp).
      if (j.state == static_cast<std::uint8_t>(State::Rejected)) continue;
      const Tick until = j.end >= 0 ? j.end : r.sim_end;
      waits.push_back(std::max<Tick>(0, until - j.submit));
      tenant_waits[j.tenant].push_back(std::max<Tick>(0, until - j.submit));
      ++k.never_started;
      ++d->tenants[j.tenant].never_started;
      continue;
    }
    waits.push_back(j.start - j.submit);
    tenant_waits[j.tenant].push_back(j.start - j.submit);
    const Tick until = j.end >= 0 ? j.end : r.sim_end;
    const long double held =
        static_cast<long double>(held_milli(j)) * static_cast<long double>(std::max<Tick>(0, until - j.start));
    tenant_milli_ms[j.tenant] += held;
    milli_ms_total += held;
  }
  std::sort(waits.begin(), waits.end());
  k.started = static_cast<std::int64_t>(waits.size()) - k.never_started;
  k.wait_mean_s = mean_s(waits);
  k.wait_median_s = seconds(nearest_rank(waits, 50));
  k.wait_p95_s = seconds(nearest_rank(waits, 95));
  k.jct_mean_s = mean_s(jcts);
  k.makespan_s = seconds(r.sim_end - r.sim_start);
  const long double capacity_ms =
      static_cast<long double>(r.total_gpus) * static_cast<long double>(r.sim_end - r.sim_start);
  k.utilization = capacity_ms > 0 ? static_cast<double>(milli_ms_total / 1000.0L / capacity_ms) : 0.0;

  for (std::size_t t = 0; t < tenant_count; ++t) {
    TenantStats& ts = d->tenants[t];
    ts.id = static_cast<std::uint32_t>(t);
    ts.name = d->tenant_name(ts.id);
    std::vector<Tick>& w = tenant_waits[t];
    std::sort(w.begin(), w.end());
    ts.started = static_cast<std::int64_t>(w.size()) - ts.never_started;
    ts.gpu_hours = static_cast<double>(tenant_milli_ms[t] / 1000.0L / static_cast<long double>(kTicksPerHour));
    ts.mean_wait_s = mean_s(w);
    ts.p95_wait_s = seconds(nearest_rank(w, 95));
  }
  clock.mark("kpis");

  std::sort(d->tenants.begin(), d->tenants.end(), [](const TenantStats& a, const TenantStats& b) {
    if (a.gpu_hours != b.gpu_hours) return a.gpu_hours > b.gpu_hours;
    if (a.name != b.name) return a.name < b.name;
    return a.id < b.id;
  });
  d->tenant_rank.assign(tenant_count, 0);
  for (std::size_t i = 0; i < d->tenants.size(); ++i) d->tenant_rank[d->tenants[i].id] = i;

  const auto alpha = [](const std::vector<std::string>& names, std::size_t count) {
    std::vector<std::uint32_t> ids(count), pos(count);
    std::iota(ids.begin(), ids.end(), 0u);
    const auto name = [&](std::uint32_t i) { return i < names.size() ? names[i] : std::string(); };
    std::stable_sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) { return name(a) < name(b); });
    for (std::uint32_t i = 0; i < count; ++i) pos[ids[i]] = i;
    return pos;
  };
  std::size_t queue_count = r.queues.size();
  for (const auto& j : r.jobs) queue_count = std::max<std::size_t>(queue_count, j.queue + std::size_t{1});
  d->tenant_alpha = alpha(r.tenants, tenant_count);
  d->queue_alpha = alpha(r.queues, queue_count);
  clock.mark("tenant ranks");

  // Wait CDFs: all tenants, then each top tenant.
  Cdf all = make_cdf(waits);
  all.name = QStringLiteral("all tenants");
  all.rank = kTopTenants;
  d->wait_cdfs.push_back(std::move(all));
  for (std::size_t i = 0; i < std::min(kTopTenants, d->tenants.size()); ++i) {
    Cdf c = make_cdf(tenant_waits[d->tenants[i].id]);
    c.name = d->tenants[i].name;
    c.rank = i;
    d->wait_cdfs.push_back(std::move(c));
  }

  clock.mark("wait cdfs");

  d->outages = node_outages(r);
  d->markers = outage_markers(r, d->outages);
  clock.mark("outages");

  // Time series, bucketed.
  const results::TimeSeries& ts = r.timeseries;
  const std::size_t samples = ts.time.size();
  std::vector<double> t_days;
  t_days.reserve(samples);
  for (Tick t : ts.time) t_days.push_back(d->x_days(t));
  d->used_by_tenant =
      make_pyramid(t_days, tenant_curves(*d, ts.tenant_used_gpus, samples, false), 64, Stacking::Stacked);
  d->pending_jobs_by_tenant =
      make_pyramid(t_days, tenant_curves(*d, ts.tenant_pending_jobs, samples, false), 64, Stacking::Stacked);
  d->pending_gpus_by_tenant =
      make_pyramid(t_days, tenant_curves(*d, ts.tenant_pending_gpus, samples, false), 64, Stacking::Stacked);
  d->share_by_tenant =
      make_pyramid(t_days, tenant_curves(*d, ts.tenant_used_gpus, samples, true), 64, Stacking::Stacked);
  d->recorded_vs_simulated = fidelity_curves(r, t_days);
  {
    std::vector<Curve> pools;
    const std::size_t width =
        samples > 0 && ts.pool_used_gpus.size() % samples == 0 ? ts.pool_used_gpus.size() / samples : 0;
    const bool have_free = ts.pool_free_gpus.size() == ts.pool_used_gpus.size();
    for (std::size_t p = 0; p < width; ++p) {
      Curve used{d->pool_name(static_cast<std::int32_t>(p)) + QStringLiteral(" in use"), {}};
      Curve cap{d->pool_name(static_cast<std::int32_t>(p)) + QStringLiteral(" up"), {}};
      for (std::size_t s = 0; s < samples; ++s) {
        used.y.push_back(ts.pool_used_gpus[s * width + p]);
        if (have_free) cap.y.push_back(ts.pool_used_gpus[s * width + p] + ts.pool_free_gpus[s * width + p]);
      }
      pools.push_back(std::move(used));
      if (have_free) pools.push_back(std::move(cap));
    }
    d->used_by_pool = make_pyramid(t_days, std::move(pools));
  }
  if (!r.partitions.empty() && !r.moves.empty() && samples > 0) {
    std::vector<std::vector<double>> gpus = owned_gpus(r, ts.time);
    std::vector<Curve> owned;
    for (std::size_t k = 0; k < gpus.size(); ++k)
      owned.push_back(
          {k < r.partitions.size() ? QString::fromStdString(r.partitions[k].name) : QStringLiteral("in transit"),
           std::move(gpus[k])});
    d->owned_by_partition = make_pyramid(t_days, std::move(owned));
  }
  if (samples > 0 && ts.pending_by_reason.size() == samples * kPendingCodes) {
    std::vector<Curve> reasons;
    for (int c = 0; c < kPendingCodes; ++c) {
      Curve curve{pending_code_name(c), {}};
      curve.y.reserve(samples);
      for (std::size_t s = 0; s < samples; ++s) curve.y.push_back(ts.pending_by_reason[s * kPendingCodes + c]);
      reasons.push_back(std::move(curve));
    }
    d->pending_by_reason = make_pyramid(t_days, std::move(reasons), 64, Stacking::Stacked);
  }
  {
    Curve used{QStringLiteral("GPUs in use"), std::vector<double>(samples, 0.0)};
    Curve pending{QStringLiteral("pending jobs"), {}}, running{QStringLiteral("running jobs"), {}};
    const std::size_t width = samples > 0 ? ts.pool_used_gpus.size() / samples : 0;
    for (std::size_t s = 0; s < samples; ++s)
      for (std::size_t p = 0; p < width; ++p) used.y[s] += ts.pool_used_gpus[s * width + p];
    if (ts.pending_jobs.size() == samples) pending.y.assign(ts.pending_jobs.begin(), ts.pending_jobs.end());
    if (ts.running_jobs.size() == samples) running.y.assign(ts.running_jobs.begin(), ts.running_jobs.end());
    std::vector<Curve> totals{std::move(used)};
    if (!pending.y.empty()) totals.push_back(std::move(pending));
    if (!running.y.empty()) totals.push_back(std::move(running));
    d->totals = make_pyramid(t_days, std::move(totals));
  }

  clock.mark("time series");

  // Events grouped by job, each group in time order.
  const std::size_t jobs = r.jobs.size();
  d->event_offset.assign(jobs + 1, 0);
  for (const auto& e : r.events)
    if (e.job < jobs) ++d->event_offset[e.job + 1];
  std::partial_sum(d->event_offset.begin(), d->event_offset.end(), d->event_offset.begin());
  d->event_index.resize(d->event_offset[jobs]);
  std::vector<std::uint32_t> fill(d->event_offset.begin(), d->event_offset.end() - 1);
  for (std::size_t i = 0; i < r.events.size(); ++i)
    if (r.events[i].job < jobs) d->event_index[fill[r.events[i].job]++] = static_cast<std::uint32_t>(i);
  // Files list events in time order, so the groups mostly are already; sorting is then skipped.
  const auto earlier = [&](std::uint32_t a, std::uint32_t b) { return r.events[a].time < r.events[b].time; };
  for (std::size_t j = 0; j < jobs; ++j) {
    const auto b = d->event_index.begin() + d->event_offset[j], e = d->event_index.begin() + d->event_offset[j + 1];
    if (!std::is_sorted(b, e, earlier)) std::stable_sort(b, e, earlier);
  }
  clock.mark("events by job");
  partition_curves(*d, t_days);  // nothing without partitions
  clock.mark("partitions");
  d->cluster = cluster.get();
  std::tie(d->summary, d->fairness) = figures.get();
  clock.mark("cluster index wait");
  return d;
}

QString format_duration(Tick t) {
  return QString::fromStdString(results::duration(static_cast<double>(t) / static_cast<double>(kTicksPerSecond)));
}

QString format_when(const ReplayData& d, Tick t) {
  if (d.result.unix_start < 0) return format_offset(t);
  return QStringLiteral("%1 UTC (%2)")
      .arg(QString::fromStdString(results::calendar(d.result.unix_start * 1000 + d.origin + t, true)),
           format_offset(t));
}

QString format_date(const ReplayData& d, Tick t) {
  if (d.result.unix_start < 0) return format_offset(t);
  return QString::fromStdString(results::calendar(d.result.unix_start * 1000 + d.origin + t, true));
}

QString why_text(int code, const QString& words) {
  const QString kind = pending_code_name(code);
  if (words.startsWith(kind + QLatin1Char(':'), Qt::CaseInsensitive) || words.compare(kind, Qt::CaseInsensitive) == 0)
    return words;
  return words.isEmpty() ? kind : kind + QStringLiteral(": ") + words;
}

QString format_offset(Tick t) {
  if (t < 0) return QStringLiteral("-") + format_offset(-t);
  const long long s = t / kTicksPerSecond;
  const QString hms = QStringLiteral("%1:%2:%3")
                          .arg((s / 3600) % 24, 2, 10, QLatin1Char('0'))
                          .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
                          .arg(s % 60, 2, 10, QLatin1Char('0'));
  return s >= 86400 ? QStringLiteral("%1d %2").arg(s / 86400).arg(hms) : hms;
}

}  // namespace headroom::gui
