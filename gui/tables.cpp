#include "gui/tables.hpp"

#include <QColor>
#include <QFont>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

#include "gui/jobs_model.hpp"
#include "results/format.hpp"
#include "results/groups.hpp"

namespace headroom::gui {
namespace {

QVariant align(bool left) {
  return QVariant::fromValue(Qt::Alignment((left ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
}

QString signed_number(double v, int decimals) {
  const QString text = QString::fromStdString(results::grouped(v, decimals));  // never "-0.000"
  return (v > 0 && text.contains(QRegularExpression(QStringLiteral("[1-9]"))) ? QStringLiteral("+") : QString()) + text;
}

}  // namespace

JobEventsModel::JobEventsModel(QObject* parent) : QAbstractTableModel(parent) {}

void JobEventsModel::set_job(std::shared_ptr<const ReplayData> data, int job) {
  beginResetModel();
  data_ = std::move(data);
  rows_.clear();
  from_events_ = false;
  job_ = data_ && job >= 0 && static_cast<std::size_t>(job) < data_->result.jobs.size() ? job : -1;
  if (job_ >= 0) {
    const ReplayData& d = *data_;
    const auto& jobs = d.result.jobs;
    const std::size_t j = static_cast<std::size_t>(job_);
    for (std::uint32_t k = d.event_offset[j]; k < d.event_offset[j + 1]; ++k) {
      const results::EventRecord& e = d.result.events[d.event_index[k]];
      Row row{e.time - d.origin, e.kind, {}, {}};
      switch (static_cast<EventKind>(e.kind)) {
        case EventKind::Start: row.detail = e.detail == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(e.detail); break;
        case EventKind::Finish:
        case EventKind::Unfinished: row.detail = state_name(static_cast<std::uint8_t>(e.detail)); break;
        case EventKind::Preempt:
          row.detail = e.detail >= 0 && static_cast<std::size_t>(e.detail) < jobs.size()
                           ? tr("by job %1").arg(jobs[static_cast<std::size_t>(e.detail)].trace_id)
                           : tr("by the system");
          break;
        default:
          if (e.kind == kWaitingEvent) row.detail = pending_code_name(e.detail);
          break;
      }
      if (e.reason < d.result.reasons.size()) row.reason = QString::fromStdString(d.result.reasons[e.reason]);
      rows_.push_back(std::move(row));
    }
    from_events_ = !rows_.empty();
    if (rows_.empty()) {
      const results::JobRecord& r = jobs[j];
      rows_.push_back({r.submit - d.origin, static_cast<std::uint8_t>(EventKind::Submit), {}, {}});
      if (r.start >= 0)
        rows_.push_back({r.start - d.origin,
                         static_cast<std::uint8_t>(EventKind::Start),
                         r.gpus == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(r.gpus),
                         {}});
      if (r.end >= 0) {
        const auto kind = r.state == static_cast<std::uint8_t>(State::Rejected) ? EventKind::Reject : EventKind::Finish;
        rows_.push_back({r.end - d.origin, static_cast<std::uint8_t>(kind), state_name(r.state), {}});
      }
    }
  }
  endResetModel();
}

int JobEventsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int JobEventsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

QVariant JobEventsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == kRawRole) return index.column() == Time ? QVariant(static_cast<qint64>(r.time)) : QVariant(r.kind);
  if (role == Qt::TextAlignmentRole) return align(index.column() != Time);
  if (role == Qt::ToolTipRole && index.column() == Reason && !r.reason.isEmpty()) return r.reason;
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Time: return data_ ? format_date(*data_, r.time) : format_offset(r.time);
    case Event: return event_name(r.kind);
    case Detail: return r.detail;
    case Reason: return r.reason;
  }
  return {};
}

QVariant JobEventsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= Columns) return {};
  static const char* const names[] = {"Time", "Event", "Detail", "Reason"};
  return tr(names[section]);
}

TenantModel::TenantModel(QObject* parent) : QAbstractTableModel(parent) {}

void TenantModel::set_data(std::shared_ptr<const ReplayData> data) {
  beginResetModel();
  data_ = std::move(data);
  total_hours_ = 0;
  if (data_)
    for (const TenantStats& t : data_->tenants) total_hours_ += t.gpu_hours;
  endResetModel();
}

int TenantModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !data_ ? 0 : static_cast<int>(data_->tenants.size());
}
int TenantModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : Columns; }

QVariant TenantModel::data(const QModelIndex& index, int role) const {
  if (!data_ || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const std::size_t row = static_cast<std::size_t>(index.row());
  const TenantStats& t = data_->tenants[row];
  const double share = total_hours_ > 0 ? t.gpu_hours / total_hours_ : 0.0;
  const double cluster_share =
      t.id < data_->fairness.tenants.size() ? data_->fairness.tenants[t.id].share : std::nan("");
  if (role == Qt::DecorationRole && index.column() == Tenant) return tenant_colour(row);
  if (role == Qt::TextAlignmentRole) return align(index.column() == Tenant);
  if (role == kRawRole) {
    switch (index.column()) {
      case Tenant: return t.name;
      case Jobs: return static_cast<qint64>(t.jobs);
      case GpuHours: return t.gpu_hours;
      case Share: return share;
      case ClusterShare: return cluster_share;
      case MeanWait: return t.mean_wait_s;
      case P95Wait: return t.p95_wait_s;
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Tenant: return t.name;
    case Jobs: return QString::fromStdString(results::thousands(t.jobs));
    case GpuHours: return QString::fromStdString(results::grouped(t.gpu_hours, 1));
    case Share: return QString::fromStdString(results::percent(share));
    case ClusterShare: return QString::fromStdString(results::percent(cluster_share));
    case MeanWait:
    case P95Wait: {
      if (t.started + t.never_started == 0) return QString();
      const double v = index.column() == MeanWait ? t.mean_wait_s : t.p95_wait_s;
      // Jobs that never started count until the end of the run: the figure is a lower bound.
      return (t.never_started > 0 ? QStringLiteral(">=") : QString()) + format_duration(std::llround(v * 1000));
    }
  }
  return {};
}

QVariant TenantModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == Share)
    return tr("The tenant's GPU-hours over the GPU-hours of every tenant");
  if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == ClusterShare)
    return tr(
        "The tenant's GPU-hours over the cluster's GPU-time (GPUs x the run's span): the \"share\" of "
        "headroom run and headroom compare");
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= Columns) return {};
  static const char* const names[] = {"Tenant",           "Jobs",      "GPU-hours", "Share of GPU-hours used",
                                      "Share of cluster", "Mean wait", "p95 wait"};
  return tr(names[section]);
}

namespace {

constexpr KpiCompareModel::KpiInfo kKpis[] = {
    {"jobs", "Jobs", "count", 0},
    {"completed", "Completed", "count", 1},
    {"failed", "Failed", "count", -1},
    {"cancelled", "Cancelled", "count", 0},
    {"rejected", "Rejected", "count", -1},
    {"unfinished", "Unfinished", "count", -1},
    {"never_started", "Never started", "count", -1},
    {"wait_mean", "Mean wait", "s", -1},
    {"wait_median", "Median wait", "s", -1},
    {"wait_p95", "p95 wait", "s", -1},
    {"wait_p99", "p99 wait", "s", -1},
    {"wait_max", "Max wait", "s", -1},
    {"jct_mean", "Mean JCT", "s", -1},
    {"jct_median", "Median JCT", "s", -1},
    {"jct_p95", "p95 JCT", "s", -1},
    {"gpu_utilization", "GPU utilization", "fraction", 1},
    {"gpu_busy_utilization", "Useful GPU utilization", "fraction", 1},
    {"makespan", "Makespan", "s", -1},
    {"preemptions", "Preemptions", "count", -1},
    {"lost_gpu_hours", "Work lost to preemption and policy kills", "GPU-h", -1},
    {"held_idle_gpu_hours", "Held idle by partly bound jobs", "GPU-h", -1},
    {"starved_jobs", "Starved jobs (waited > 24h)", "count", -1},
    {"pending_gpus_mean", "Mean pending GPUs", "GPUs", -1},
    {"jain_index", "Jain's index", "index", 1},
    {"jain_index_mean", "Jain's index over time", "index", 1},
    {"rho_max", "Finish-time rho, max", "index", -1},
    {"rho_mean", "Finish-time rho, mean", "index", -1},
    {"min_share_ratio", "Min share / entitlement", "index", 1},
    {"max_dominant_share", "Max dominant share", "fraction", 0},
    {"fragmentation", "Fragmentation (of the free GPUs while jobs waited)", "fraction", -1},
    {"fragmented_gpus_mean", "Mean fragmented GPUs", "GPUs", -1},
    {"borrowed_gpu_hours", "Borrowed above entitlement", "GPU-h", 0},
    {"borrowing_starts", "Starts over entitlement", "count", 0},
    {"reclaims", "Reclaims", "count", -1},
    {"denied", "Denied submissions", "count", 0},
    {"jobs_killed", "Jobs killed by failures", "count", -1},
    {"failure_lost_gpu_hours", "Work lost to failures", "GPU-h", -1},
    {"drills_recovered", "Outages recovered from", "count", 1},
    {"worst_drill_recovery", "Worst recovery", "s", -1},
    {"outages_with_kills", "Outages that killed jobs", "count", 0},
    {"recovery_p50", "Killed jobs back running, p50", "s", -1},
    {"recovery_p95", "Killed jobs back running, p95", "s", -1},
    {"recovery_max", "Killed jobs back running, max", "s", -1},
    {"not_recovered", "Killed jobs never running again", "count", -1},
    {"drill_recovery_max", "Scripted outage: slowest job back", "s", -1},
    {"gangs_killed", "Multi-node jobs killed", "count", 0},
    {"partial_gangs", "Gangs left partially placed", "count", -1},
    {"partial_gang_gpu_hours", "GPU-hours held by partial gangs", "GPU-h", -1},
    {"outage_slo_attainment", "Service SLO during outages", "fraction", 1},
    {"after_outage_slo_attainment", "Service SLO in the hour after", "fraction", 1},
    {"slo_attainment", "Service SLO attainment", "fraction", 1},
    {"cost", "Cost", "cost", -1},
    {"cost_used", "Cost of GPU-hours held", "cost", 0},
    {"cost_per_gpu_hour", "Cost per GPU-hour held", "cost", -1},
};
static_assert(std::size(kKpis) == KpiCompareModel::KpiCount);

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The scenario's workload.arrival_scale as its text says (1 when absent).
double arrival_scale(const std::string& text) {
  const std::size_t at = text.find("arrival_scale:");
  if (at == std::string::npos) return 1.0;
  const std::size_t begin = text.find_first_not_of(" \t", at + 14);
  if (begin == std::string::npos) return 1.0;
  bool ok = false;
  const double v =
      QString::fromStdString(text.substr(begin, text.find_first_of(" \t\r\n#", begin) - begin)).toDouble(&ok);
  return ok ? v : 1.0;
}

QString pools_text(const results::RunResult& r) {
  QStringList parts;
  for (const results::PoolInfo& p : r.pools)
    parts << QStringLiteral("%1 %2 %3")
                 .arg(QString::fromStdString(p.name), QString::fromStdString(results::thousands(p.nodes)),
                      p.nodes == 1 ? QStringLiteral("node") : QStringLiteral("nodes"));
  return parts.join(QStringLiteral(", "));
}

// A value and a difference in one of compare's units; whether a difference is better.
QString format_in(const std::string& unit, double v, const std::string& currency) {
  return QString::fromStdString(results::with_unit(v, unit == "cost" ? "cost:" + currency : unit));
}

QString delta_in(const std::string& unit, double v, double base, const std::string& currency) {
  if (!std::isfinite(v) || !std::isfinite(base)) return QStringLiteral("-");
  const double diff = v - base;
  if (unit == "fraction") return signed_number(100.0 * diff, 1) + QStringLiteral(" pp");
  if (unit == "index" || unit == "ratio") return signed_number(diff, 3);
  QString text = format_in(unit, diff, currency);
  if (diff > 0) text.prepend(QLatin1Char('+'));
  if (base != 0) text += QStringLiteral(" (%1%)").arg(signed_number(100.0 * diff / base, 1));
  return text;
}

// A time never reached (infinite) is worse than any that was, when less is better.
int verdict_of(int better, double v, double base) {
  if (std::isnan(v) || std::isnan(base) || v == base) return 0;
  return better * (v > base ? 1 : -1);
}

// compare's tenant:NAME.* rows (planner/compare.cpp), labels, units and which way is better.
struct GroupMetric {
  const char* metric;
  const char* label;
  const char* unit;
  int better;
};
constexpr GroupMetric kTenantMetrics[] = {
    {"wait_mean", "Mean wait", "s", -1},
    {"wait_p95", "p95 wait", "s", -1},
    {"jct_mean", "Mean JCT", "s", -1},
    {"jct_p95", "p95 JCT", "s", -1},
    {"gpu_hours", "GPU-hours held", "GPU-h", 0},
    {"rejected", "Rejected", "count", -1},
    {"never_started", "Never started", "count", -1},
    {"share", "Share of cluster", "fraction", 0},
    {"rho", "Finish-time rho", "ratio", -1},
    {"borrowed_gpu_hours", "Borrowed above entitlement", "GPU-h", 0},
    {"reclaimed", "Jobs preempted for another tenant", "count", -1},
};
constexpr GroupMetric kKindMetrics[] = {
    {"jobs", "Jobs", "count", 0},        {"never_started", "Never started", "count", -1},
    {"wait_mean", "Mean wait", "s", -1}, {"wait_p95", "p95 wait", "s", -1},
    {"jct_mean", "Mean JCT", "s", -1},   {"jct_p95", "p95 JCT", "s", -1},
};
constexpr GroupMetric kServiceMetrics[] = {
    {"slo_attainment", "SLO attainment (time)", "fraction", 1},
    {"request_attainment", "Requests within the SLO", "fraction", 1},
    {"replicas_running_mean", "Mean replicas running", "replicas", 0},
};

double tenant_value(const results::GroupStats* g, const results::TenantFairness* f, bool entitled, std::string_view m) {
  if (m == "share" || m == "rho" || m == "borrowed_gpu_hours" || m == "reclaimed") {
    if (f == nullptr) return kNaN;
    if (m == "share") return f->share;
    if (m == "rho") return f->rho;
    if (m == "borrowed_gpu_hours") return entitled ? f->borrowed_gpu_hours : kNaN;
    return f->reclaimed < 0 ? kNaN : static_cast<double>(f->reclaimed);
  }
  if (g == nullptr) return kNaN;
  if (m == "wait_mean") return g->wait_mean_s;
  if (m == "wait_p95") return g->wait_p95_s;
  if (m == "jct_mean") return g->jct_mean_s;
  if (m == "jct_p95") return g->jct_p95_s;
  if (m == "gpu_hours") return g->gpu_hours;
  if (m == "rejected") return static_cast<double>(g->rejected);
  if (m == "never_started") return static_cast<double>(g->never_started);
  if (m == "jobs") return static_cast<double>(g->jobs);
  return kNaN;
}

}  // namespace

const KpiCompareModel::KpiInfo& KpiCompareModel::info(int kpi) { return kKpis[std::clamp(kpi, 0, KpiCount - 1)]; }

KpiCompareModel::KpiCompareModel(QObject* parent) : QAbstractItemModel(parent) {}

std::size_t KpiCompareModel::add(std::size_t parent, Node node) {
  node.parent = parent;
  node.row = static_cast<int>(nodes_[parent].children.size());
  nodes_.push_back(std::move(node));
  nodes_[parent].children.push_back(nodes_.size() - 1);
  return nodes_.size() - 1;
}

const KpiCompareModel::Node& KpiCompareModel::node(const QModelIndex& index) const {
  const auto id = index.isValid() ? static_cast<std::size_t>(index.internalId()) : 0;
  return nodes_[id < nodes_.size() ? id : 0];
}

void KpiCompareModel::set_runs(std::vector<std::shared_ptr<const ReplayData>> runs) {
  beginResetModel();
  runs_ = std::move(runs);
  differs_.assign(runs_.size(), QString());
  if (runs_.size() > 1) {
    std::vector<QString> scenario, policy, pools, scale;
    for (const auto& r : runs_) {
      scenario.push_back(QString::fromStdString(r->result.scenario_name));
      policy.push_back(QString::fromStdString(r->result.policy));
      pools.push_back(pools_text(r->result));
      const double a = arrival_scale(r->result.scenario_text);
      scale.push_back(QStringLiteral("arrival \u00d7%1").arg(QString::number(a, 'g', 4)));
    }
    const auto varies = [](const std::vector<QString>& v) {
      return std::any_of(v.begin(), v.end(), [&](const QString& x) { return x != v.front(); });
    };
    // Runs of several scenarios (the drills kept by `compare --keep-runs`): the scenario's name
    // first; the cluster and the load then only when they differ between runs of one scenario
    // (a drill's capacity or load change is its name's to tell).
    const bool n = varies(scenario), p = varies(policy);
    const auto varies_within = [&](const std::vector<QString>& v) {
      for (std::size_t i = 0; i < v.size(); ++i)
        for (std::size_t j = i + 1; j < v.size(); ++j)
          if ((!n || scenario[i] == scenario[j]) && v[i] != v[j]) return true;
      return false;
    };
    const bool c = varies_within(pools), a = varies_within(scale);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      QStringList parts;
      if (n) parts << scenario[i];
      if (p) parts << policy[i];
      if (c) parts << pools[i];
      if (a) parts << scale[i];
      differs_[i] = parts.join(QStringLiteral(" \u00b7 "));
    }
  }

  nodes_.assign(1, Node{});
  const std::size_t n = runs_.size();
  if (n > 0) {
    const auto metric_node = [&](std::string metric, QString label, std::string unit, int better,
                                 std::vector<double> values) {
      Node x;
      x.tip = QObject::tr("headroom compare: %1").arg(QString::fromStdString(metric));
      x.metric = std::move(metric);
      x.label = std::move(label);
      x.unit = std::move(unit);
      x.better = better;
      x.values = std::move(values);
      return x;
    };
    const auto group_node = [](QString label, QString tip) {
      Node x;
      x.label = std::move(label);
      x.tip = std::move(tip);
      return x;
    };
    // The run-wide KPIs.
    for (int k = 0; k < KpiCount; ++k) {
      std::vector<double> v;
      for (const auto& r : runs_) v.push_back(value(*r, k));
      Node x = metric_node(info(k).metric, tr(info(k).label), info(k).unit, info(k).better, std::move(v));
      if (k == Jain)
        x.tip +=
            tr("\nJain's fairness index over tenants' share of GPU-time / entitlement x: (sum x)^2 / (n * sum x^2); "
               "1 = every tenant got its entitlement in equal measure, 1/n = one tenant has all");
      if ((k == BorrowedGpuHours || k == BorrowingStarts) &&
          std::none_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->fairness.entitlements_set; })) {
        x.label += tr(" (not measured: no tenants set)");
        x.tip += tr("\nNot measured: the scenario sets no tenants, so there is no entitlement to borrow above");
      }
      add(0, std::move(x));
    }

    // A split site (docs/split.md): compare's boundary_idle_gpu_hours and partition:NAME.* rows,
    // the systems of the first run that split, in its order; only when some run split.
    const ReplayData* split_run = nullptr;
    for (const auto& r : runs_)
      if (split_run == nullptr && !r->summary.partitions.empty()) split_run = r.get();
    if (split_run != nullptr) {
      const auto& parts = split_run->summary.partitions;
      const std::size_t g = add(0, group_node(tr("Partitions of the split site (%1)").arg(parts.size()),
                                              tr("compare's boundary_idle_gpu_hours and partition:NAME.* rows: each "
                                                 "system's own partition (docs/split.md)")));
      std::vector<double> cost;
      for (const auto& r : runs_)
        cost.push_back(r->summary.partitions.empty() ? kNaN : r->summary.boundary_idle_gpu_hours);
      Node boundary = metric_node("boundary_idle_gpu_hours", tr("Cost of the boundary"), "GPU-h", -1, std::move(cost));
      boundary.tip += tr("\nGPU-hours idle in one system while another system's waiting jobs would have fit them");
      add(g, std::move(boundary));
      for (const auto& part : parts) {
        const std::string& name = part.name;
        const std::size_t item = add(g, group_node(QString::fromStdString(name),
                                                   tr("system %1 (policy %2)").arg(name.c_str(), part.policy.c_str())));
        std::vector<double> util, wait;
        for (const auto& r : runs_) {
          const results::PartitionSummary* mine = nullptr;
          for (const auto& p : r->summary.partitions)
            if (p.name == name) mine = &p;
          util.push_back(mine == nullptr ? kNaN : mine->gpu_utilization);
          wait.push_back(mine == nullptr ? kNaN : mine->wait.mean);
        }
        add(item, metric_node("partition:" + name + ".gpu_utilization", tr("GPU utilization"), "fraction", 1,
                              std::move(util)));
        add(item, metric_node("partition:" + name + ".wait_mean", tr("Mean wait"), "s", -1, std::move(wait)));
      }
    }

    // Services: by name, in the order of the first run that has them.
    std::vector<std::string> services;
    for (const auto& r : runs_)
      for (const auto& sv : r->summary.services)
        if (std::find(services.begin(), services.end(), sv.name) == services.end()) services.push_back(sv.name);
    if (!services.empty()) {
      const std::size_t g =
          add(0, group_node(tr("Inference services (%1)").arg(services.size()), tr("compare's service:NAME.* rows")));
      for (const std::string& name : services) {
        const std::size_t item = add(g, group_node(QString::fromStdString(name), tr("service %1").arg(name.c_str())));
        for (const GroupMetric& m : kServiceMetrics) {
          std::vector<double> v;
          for (const auto& r : runs_) {
            double x = kNaN;
            for (const auto& sv : r->summary.services) {
              if (sv.name != name) continue;
              const std::string_view id = m.metric;
              x = id == "slo_attainment"       ? sv.time_attainment
                  : id == "request_attainment" ? sv.request_attainment
                                               : sv.mean_running;
            }
            v.push_back(x);
          }
          add(item, metric_node("service:" + name + "." + m.metric, tr(m.label), m.unit, m.better, std::move(v)));
        }
      }
    }

    // Tenants: every tenant with jobs in any run, by its largest GPU-hours, ties by name.
    std::vector<std::vector<results::GroupStats>> by_tenant, by_kind;
    for (const auto& r : runs_) {
      by_tenant.push_back(results::stats_by_tenant(r->result));
      by_kind.push_back(results::stats_by_kind(r->result));
    }
    std::map<std::string, double> most;
    for (const auto& groups : by_tenant)
      for (const auto& t : groups) {
        if (t.jobs == 0) continue;
        auto [it, fresh] = most.emplace(t.name, t.gpu_hours);
        if (!fresh) it->second = std::max(it->second, t.gpu_hours);
      }
    std::vector<std::pair<std::string, double>> tenants(most.begin(), most.end());
    std::stable_sort(tenants.begin(), tenants.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    const bool entitled =
        std::any_of(runs_.begin(), runs_.end(), [](const auto& r) { return r->fairness.entitlements_set; });
    if (!tenants.empty()) {
      const std::size_t g =
          add(0, group_node(tr("Tenants (%1)").arg(tenants.size()),
                            tr("compare's tenant:NAME.* rows, tenants by their GPU-hours, largest first")));
      // Each run's tenants by name, looked up once per tenant and metric (a scan of every tenant
      // there took minutes with 10,000 tenants); the last of a name, as such a scan found it.
      std::vector<std::unordered_map<std::string_view, const results::GroupStats*>> stats_of(n);
      std::vector<std::unordered_map<std::string_view, const results::TenantFairness*>> fairness_of(n);
      for (std::size_t i = 0; i < n; ++i) {
        for (const auto& t : by_tenant[i]) stats_of[i][t.name] = &t;
        for (const auto& t : runs_[i]->fairness.tenants) fairness_of[i][t.name] = &t;
      }
      auto find = [](const auto& by_name, const std::string& name) {
        const auto it = by_name.find(name);
        return it == by_name.end() ? nullptr : it->second;
      };
      for (const auto& [name, hours] : tenants) {
        (void)hours;
        const std::size_t item = add(g, group_node(QString::fromStdString(name), tr("tenant %1").arg(name.c_str())));
        for (const GroupMetric& m : kTenantMetrics) {
          if (std::string_view(m.metric) == "borrowed_gpu_hours" && !entitled) continue;  // as compare
          std::vector<double> v;
          for (std::size_t i = 0; i < n; ++i)
            v.push_back(tenant_value(find(stats_of[i], name), find(fairness_of[i], name),
                                     runs_[i]->fairness.entitlements_set, m.metric));
          add(item, metric_node("tenant:" + name + "." + m.metric, tr(m.label), m.unit, m.better, std::move(v)));
        }
      }
    }

    // Job kinds: those with jobs in the first run (every run replays the same workload).
    std::vector<std::size_t> kinds;
    for (std::size_t k = 0; k < by_kind.front().size(); ++k)
      if (by_kind.front()[k].jobs > 0) kinds.push_back(k);
    if (!kinds.empty()) {
      const std::size_t g =
          add(0, group_node(tr("Job kinds (%1)").arg(kinds.size()), tr("compare's kind:KIND.* rows")));
      for (std::size_t k : kinds) {
        const std::string& name = by_kind.front()[k].name;
        const std::size_t item = add(g, group_node(QString::fromStdString(name), tr("%1 jobs").arg(name.c_str())));
        for (const GroupMetric& m : kKindMetrics) {
          std::vector<double> v;
          for (std::size_t i = 0; i < n; ++i)
            v.push_back(tenant_value(k < by_kind[i].size() ? &by_kind[i][k] : nullptr, nullptr, true, m.metric));
          add(item, metric_node("kind:" + name + "." + m.metric, tr(m.label), m.unit, m.better, std::move(v)));
        }
      }
    }
  }
  // A KPI row that reads the same under every open run does not tell them apart (compare's "the
  // same under every system"): the view greys it.
  for (Node& x : nodes_) {
    if (x.metric.empty() || n < 2) continue;
    const QString first = format_in(x.unit, x.values.front(), runs_.front()->summary.currency);
    x.same = true;
    for (std::size_t r = 1; r < n && x.same; ++r)
      x.same = format_in(x.unit, x.values[r], runs_[r]->summary.currency) == first;
  }
  endResetModel();
}

QString KpiCompareModel::differs(std::size_t run) const { return run < differs_.size() ? differs_[run] : QString(); }

double KpiCompareModel::value(const ReplayData& d, int kpi) {
  const results::Summary& s = d.summary;
  const results::Fairness& f = d.fairness;
  const auto state = [&](int st) { return static_cast<double>(s.by_state[static_cast<std::size_t>(st)]); };
  const auto count = [](std::int64_t v) { return static_cast<double>(v); };
  switch (kpi) {
    case Jobs: return count(s.jobs);
    case Completed: return state(static_cast<int>(State::Completed));
    case Failed: return state(static_cast<int>(State::Failed));
    case Cancelled: return state(static_cast<int>(State::Cancelled));
    case Rejected: return state(static_cast<int>(State::Rejected));
    case Unfinished: return state(static_cast<int>(State::Unfinished));
    case NeverStarted: return count(s.never_started);
    case MeanWait: return s.wait.mean;
    case MedianWait: return s.wait.median;
    case P95Wait: return s.wait.p95;
    case P99Wait: return s.wait.p99;
    case MaxWait: return s.wait.max;
    case MeanJct: return s.jct.mean;
    case MedianJct: return s.jct.median;
    case P95Jct: return s.jct.p95;
    case Utilization: return s.gpu_utilization;
    case BusyUtilization: return s.gpu_busy_utilization;
    case Makespan: return s.makespan_s;
    case Preemptions: return count(s.preemptions);
    case LostGpuHours: return s.lost_gpu_hours;
    case HeldIdleGpuHours: return s.held_idle_gpu_hours;
    case StarvedJobs: return count(s.starved_jobs);
    case PendingGpusMean: return s.pending_gpus_mean;
    case Jain: return f.jain;
    case JainMean: return f.jain_mean;
    case RhoMax: return f.rho_max;
    case RhoMean: return f.rho_mean;
    case MinShareRatio: return f.min_share_ratio;
    case MaxDominantShare: return f.max_dominant_share;
    case Fragmentation: return s.fragmentation;
    case FragmentedGpusMean: return s.fragmented_gpus_mean;
    case BorrowedGpuHours: return f.entitlements_set ? f.borrowed_gpu_hours : kNaN;
    case BorrowingStarts: return f.entitlements_set ? count(f.borrowing_starts) : kNaN;
    case Reclaims: return f.reclaims < 0 ? kNaN : count(f.reclaims);
    case Denied: return count(s.denied);
    case JobsKilled: return count(s.failures.jobs_killed);
    case FailureLostGpuHours: return s.failures.lost_gpu_hours;
    case DrillsRecovered: return s.failures.drill_recovery_s.empty() ? kNaN : count(s.failures.drills_recovered);
    case WorstDrillRecovery: return s.failures.worst_recovery_s < 0 ? kNaN : s.failures.worst_recovery_s;
    // As compare's add_recovery_rows (planner/compare.cpp): NaN without failures (or, for the SLO
    // rows, without a service around a scripted outage); a time never reached is infinite.
    case OutagesWithKills:
    case RecoveryP50:
    case RecoveryP95:
    case RecoveryMax:
    case NotRecovered:
    case DrillRecoveryMax:
    case GangsKilled:
    case PartialGangs:
    case PartialGangGpuHours: {
      const results::FailureSummary& fs = s.failures;
      if (!fs.any()) return kNaN;
      const auto time = [](double v) { return v < 0 ? std::numeric_limits<double>::infinity() : v; };
      const results::RecoveryStats& rs = fs.recovery;
      switch (kpi) {
        case OutagesWithKills: return count(fs.outages);
        case RecoveryP50: return time(rs.p50_s);
        case RecoveryP95: return time(rs.p95_s);
        case RecoveryMax: return time(rs.max_s);
        case NotRecovered: return count(rs.not_recovered);
        case DrillRecoveryMax: {
          double worst = fs.drills.empty() ? kNaN : 0.0;
          for (const auto& d : fs.drills)
            worst = d.recovery.killed == 0 ? worst : std::max(worst, time(d.recovery.max_s));
          return worst;
        }
        case GangsKilled: return count(rs.gangs);
        case PartialGangs: return count(rs.partial_gangs);
        default: return rs.partial_gpu_hours;
      }
    }
    case OutageSloAttainment:
      return s.failures.outage_slo.empty() || s.failures.outage_slo_attainment < 0 ? kNaN
                                                                                   : s.failures.outage_slo_attainment;
    case AfterOutageSloAttainment:
      return s.failures.outage_slo.empty() || s.failures.after_outage_slo_attainment < 0
                 ? kNaN
                 : s.failures.after_outage_slo_attainment;
    case SloAttainment: return s.services.empty() ? kNaN : s.slo_attainment;
    case Cost: return s.priced ? s.cost : kNaN;
    case CostUsed: return s.priced ? s.cost_used : kNaN;
    case CostPerGpuHour: return s.priced ? s.cost_per_used_gpu_hour : kNaN;
  }
  return kNaN;
}

QString KpiCompareModel::format(int kpi, double v, const std::string& currency) {
  return format_in(info(kpi).unit, v, currency);
}

QString KpiCompareModel::format_delta(int kpi, double v, double base, const std::string& currency) {
  return delta_in(info(kpi).unit, v, base, currency);
}

int KpiCompareModel::verdict(int kpi, double v, double base) { return verdict_of(info(kpi).better, v, base); }

QModelIndex KpiCompareModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= columnCount() || nodes_.empty()) return {};
  const Node& p = node(parent);
  if (parent.isValid() && parent.column() != 0) return {};
  if (static_cast<std::size_t>(row) >= p.children.size()) return {};
  return createIndex(row, column, static_cast<quintptr>(p.children[static_cast<std::size_t>(row)]));
}

QModelIndex KpiCompareModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  const std::size_t p = node(child).parent;
  if (p == 0) return {};
  return createIndex(nodes_[p].row, 0, static_cast<quintptr>(p));
}

int KpiCompareModel::rowCount(const QModelIndex& parent) const {
  if (runs_.empty() || nodes_.empty() || (parent.isValid() && parent.column() != 0)) return 0;
  return static_cast<int>(node(parent).children.size());
}

int KpiCompareModel::columnCount(const QModelIndex&) const {
  if (runs_.empty()) return 0;
  return 1 + static_cast<int>(runs_.size()) + static_cast<int>(runs_.size()) - 1;
}

QModelIndex KpiCompareModel::find(const QString& metric, int column) const {
  const std::string m = metric.toStdString();
  for (std::size_t i = 1; i < nodes_.size(); ++i)
    if (nodes_[i].metric == m) return createIndex(nodes_[i].row, column, static_cast<quintptr>(i));
  return {};
}

QString KpiCompareModel::metric(const QModelIndex& index) const {
  return index.isValid() ? QString::fromStdString(node(index).metric) : QString();
}

QStringList KpiCompareModel::metrics() const {
  QStringList out;
  std::vector<std::size_t> stack{0};
  while (!stack.empty()) {
    const std::size_t at = stack.back();
    stack.pop_back();
    if (!nodes_[at].metric.empty()) out << QString::fromStdString(nodes_[at].metric);
    for (auto it = nodes_[at].children.rbegin(); it != nodes_[at].children.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

QVariant KpiCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Node& x = node(index);
  const int col = index.column();
  const int n = static_cast<int>(runs_.size());
  if (role == Qt::TextAlignmentRole) return align(col == 0);
  // A row the same under every open run (Node::same, from set_runs): greyed, with a tooltip saying so.
  if (col <= n && (role == Qt::ForegroundRole || role == Qt::ToolTipRole) && x.same) {
    if (role == Qt::ForegroundRole) return QColor(0x75, 0x75, 0x75);
    const QString why =
        tr("The same under every open run: this KPI does not tell them apart (docs/drills.md says "
           "why for the bundled drills)");
    return col == 0 && !x.tip.isEmpty() ? x.tip + QStringLiteral("\n") + why : why;
  }
  if (col == 0) {
    if (role == Qt::DisplayRole) return x.label;
    if (role == Qt::ToolTipRole) return x.tip;
    if (role == Qt::FontRole && x.metric.empty()) {
      QFont bold;
      bold.setBold(true);
      return bold;
    }
    return {};
  }
  if (x.metric.empty()) return {};  // a group row
  const bool delta = col > n;
  const std::size_t run = static_cast<std::size_t>(delta ? col - n : col - 1);
  const double v = x.values[run];
  const double base = x.values.front();
  const std::string& currency = runs_[run]->summary.currency;
  if (role == kRawRole) return delta ? v - base : v;
  if (role == Qt::DisplayRole && !delta && x.metric == "fragmentation")  // with its denominator (issue #36)
    return tr("%1 of %2 free")
        .arg(format_in(x.unit, v, currency),
             QString::fromStdString(results::grouped(runs_[run]->summary.free_gpus_waiting_mean, 1)));
  if (role == Qt::DisplayRole) return delta ? delta_in(x.unit, v, base, currency) : format_in(x.unit, v, currency);
  if ((role == Qt::ForegroundRole || role == Qt::ToolTipRole) && delta) {
    // A difference that reads as none ("0.000", "+0.0 pp") is not coloured either.
    const int better = verdict_of(x.better, v, base);
    if (better == 0 || !delta_in(x.unit, v, base, currency).contains(QRegularExpression(QStringLiteral("[1-9]"))))
      return {};
    if (role == Qt::ToolTipRole)
      return better > 0 ? tr("better than %1").arg(runs_.front()->label)
                        : tr("worse than %1").arg(runs_.front()->label);
    return better > 0 ? QColor(0x2e7d32) : QColor(0xc62828);
  }
  return {};
}

QVariant KpiCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  const int n = static_cast<int>(runs_.size());
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section > n && section < columnCount())
    return tr("Difference against %1; green: better for that KPI, red: worse, uncoloured: neither")
        .arg(runs_.front()->label);
  if (role != Qt::DisplayRole) return {};
  const auto title = [&](std::size_t run) {
    const QString d = differs(run);
    return d.isEmpty() ? runs_[run]->label : runs_[run]->label + QLatin1Char('\n') + d;
  };
  if (section == 0) return tr("KPI");
  if (section >= 1 && section <= n) return title(static_cast<std::size_t>(section - 1));
  if (section > n && section < columnCount()) return tr("\u0394 %1").arg(title(static_cast<std::size_t>(section - n)));
  return {};
}

QString jain_text(const ReplayData& d) {
  const results::Fairness& f = d.fairness;
  std::size_t n = 0;
  for (const results::TenantFairness& t : f.tenants) n += t.jobs > 0 && t.entitlement > 0;
  const auto fixed = [](double v) { return std::isnan(v) ? QStringLiteral("-") : QString::number(v, 'f', 3); };
  return QObject::tr(
             "<b>Jain's fairness index</b> over tenants' share of GPU-time divided by their entitlement, x = s / e: "
             "J = (\u03a3x)\u00b2 / (n \u00b7 \u03a3x\u00b2) = <b>%1</b> &nbsp; (n = %2 tenants with jobs; 1 = "
             "every tenant got the same fraction of its entitlement, 1/n = %3 = one tenant got all; the figure "
             "of the Compare tab, <tt>headroom run</tt> and the report)")
      .arg(fixed(f.jain))
      .arg(n)
      .arg(n > 0 ? QString::number(1.0 / static_cast<double>(n), 'f', 3) : QStringLiteral("-"));
}

QString to_csv(const QAbstractItemModel& model) {
  const auto field = [](QString s) {
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n'))) {
      s.replace(QLatin1Char('"'), QStringLiteral("\"\""));
      s = QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
  };
  QString out;
  const int cols = model.columnCount();
  for (int c = 0; c < cols; ++c) {
    if (c) out += QLatin1Char(',');
    out += field(model.headerData(c, Qt::Horizontal).toString());
  }
  out += QLatin1Char('\n');
  // Every row, a tree's depth first; a nested row's first cell names its parents ("Tenants (70) /
  // user19 / Mean wait").
  const auto rows = [&](const auto& self, const QModelIndex& parent, const QString& path) -> void {
    for (int r = 0; r < model.rowCount(parent); ++r) {
      const QString name = model.data(model.index(r, 0, parent)).toString();
      const QString full = path.isEmpty() ? name : path + QStringLiteral(" / ") + name;
      for (int c = 0; c < cols; ++c) {
        if (c) out += QLatin1Char(',');
        out += field(c == 0 ? full : model.data(model.index(r, c, parent)).toString());
      }
      out += QLatin1Char('\n');
      const QModelIndex at = model.index(r, 0, parent);
      if (model.hasChildren(at)) self(self, at, full);
    }
  };
  rows(rows, QModelIndex(), QString());
  return out;
}

ScorecardModel::ScorecardModel(QObject* parent) : QAbstractTableModel(parent) {}

void ScorecardModel::set_runs(const std::vector<std::shared_ptr<const ReplayData>>& runs) {
  beginResetModel();
  runs_ = runs;
  policies_.clear();
  rows_.clear();
  for (const auto& r : runs_) {
    if (r->result.scorecard.empty()) continue;
    const QString p = QString::fromStdString(r->result.policy);
    if (!policies_.contains(p)) policies_ << p;
  }
  for (const auto& r : runs_) {
    const QString drill = QString::fromStdString(r->result.scenario_name);
    const auto column = static_cast<std::size_t>(policies_.indexOf(QString::fromStdString(r->result.policy)));
    for (const results::VerdictLine& v : r->result.scorecard) {
      const QString target = QString::fromStdString(v.target);
      auto it = std::find_if(rows_.begin(), rows_.end(),
                             [&](const Row& row) { return row.drill == drill && row.target == target; });
      if (it == rows_.end()) {
        rows_.push_back(Row{drill, target, std::vector<const results::VerdictLine*>(policies_.size(), nullptr)});
        it = std::prev(rows_.end());
      }
      it->cells[column] = &v;
    }
  }
  endResetModel();
}

int ScorecardModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ScorecardModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 2 + static_cast<int>(policies_.size());
}

QString ScorecardModel::why_line(const QModelIndex& index) const {
  if (!index.isValid() || index.column() < 2 || index.row() >= rowCount()) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const results::VerdictLine* v = row.cells[static_cast<std::size_t>(index.column() - 2)];
  if (v == nullptr) return {};
  return QStringLiteral("%1 \u00b7 %2 \u00b7 %3: %4: %5")
      .arg(row.drill, row.target, policies_[index.column() - 2], QString::fromStdString(v->verdict),
           QString::fromStdString(v->why));
}

QModelIndex ScorecardModel::first_to_explain() const {
  for (int r = 0; r < rowCount(); ++r)
    for (int c = 2; c < columnCount(); ++c) {
      const results::VerdictLine* v = rows_[static_cast<std::size_t>(r)].cells[static_cast<std::size_t>(c - 2)];
      if (v != nullptr && v->verdict.rfind("passed", 0) != 0) return index(r, c);
    }
  return rowCount() > 0 && columnCount() > 2 ? index(0, 2) : QModelIndex();
}

QVariant ScorecardModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  if (index.column() < 2) {
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) return index.column() == 0 ? row.drill : row.target;
    return {};
  }
  const results::VerdictLine* v = row.cells[static_cast<std::size_t>(index.column() - 2)];
  if (v == nullptr) return role == Qt::DisplayRole ? QVariant(QStringLiteral("-")) : QVariant();
  const QString verdict = QString::fromStdString(v->verdict);
  switch (role) {
    case Qt::DisplayRole: return verdict;
    case Qt::ToolTipRole:
    case WhyRole: return QString::fromStdString(v->why);
    case Qt::ForegroundRole:
      if (verdict.startsWith(QLatin1String("passed"))) return QColor(0x1b, 0x7a, 0x2e);
      if (verdict.startsWith(QLatin1String("FAILED")) || verdict.startsWith(QLatin1String("error")))
        return QColor(0xb0, 0x1c, 0x1c);
      if (verdict.startsWith(QLatin1String("integration"))) return QColor(0xa3, 0x5f, 0x00);
      return QColor(0x66, 0x66, 0x66);
    default: return {};
  }
}

QVariant ScorecardModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == 0) return tr("drill");
  if (section == 1) return tr("target");
  return section - 2 < policies_.size() ? policies_[section - 2] : QVariant();
}

}  // namespace headroom::gui
