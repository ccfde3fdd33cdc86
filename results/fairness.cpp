#include "results/fairness.hpp"

#include <yaml-cpp/yaml.h>

#include <Eigen/Dense>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "models/job.hpp"
#include "models/observer.hpp"
#include "results/format.hpp"
#include "results/radix_sort.hpp"
#include "results/summary.hpp"
#include "sim/errors.hpp"

namespace headroom::results {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double held_gpus(const JobRecord& j) {
  return j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli / 1000.0 : static_cast<double>(j.gpus);
}

// Jain's index of the entries of x; 1 when x is empty or all zero.
double jain(const Eigen::VectorXd& x) {
  if (x.size() == 0) return 1.0;
  const double sq = x.squaredNorm();
  if (sq == 0) return 1.0;
  const double s = x.sum();
  return s * s / (static_cast<double>(x.size()) * sq);
}

std::string number(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

// Borrowing over the runs of the jobs: a run holds its GPUs over [start, end).
void borrowing(const RunResult& r, const std::vector<JobRun>& runs, const Eigen::VectorXd& e,
               std::vector<TenantFairness>& ten, Fairness& f) {
  struct Change {
    Tick time;
    std::uint32_t job;
    bool start;
    double gpus;  // what the run holds
  };
  // The changes in time order, releases before starts at the same tick (a start sees the
  // capacity an end freed), and otherwise in the order of the runs: the starts and the ends are
  // each sorted by (time, run) and then merged, which is the order a stable sort of the runs'
  // (start, end) pairs by (time, release first) gives, without sorting twice as many entries.
  using Point = detail::Keyed;  // (time, run)
  auto by_time = [](const Point& a, const Point& b) { return a.key < b.key; };
  std::vector<Point> starts, ends;
  starts.reserve(runs.size());
  ends.reserve(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const JobRun& run = runs[i];
    if (run.job >= r.jobs.size() || r.jobs[run.job].tenant >= ten.size() || run.end <= run.start) continue;
    starts.push_back({run.start, static_cast<std::uint32_t>(i)});
    ends.push_back({run.end, static_cast<std::uint32_t>(i)});
  }
  // Made in run order, so a stable sort by time gives (time, run) order.
  if (!std::is_sorted(starts.begin(), starts.end(), by_time)) detail::stable_sort_by_key(starts);
  if (!std::is_sorted(ends.begin(), ends.end(), by_time)) detail::stable_sort_by_key(ends);
  std::vector<Change> changes;
  changes.reserve(starts.size() + ends.size());
  auto add = [&](const Point& p, bool start) {
    const JobRun& run = runs[p.index];
    changes.push_back({p.key, run.job, start, run.milli / 1000.0});
  };
  std::size_t si = 0, ei = 0;
  while (si < starts.size() || ei < ends.size()) {
    if (ei < ends.size() && (si == starts.size() || ends[ei].key <= starts[si].key)) {
      add(ends[ei++], false);
    } else {
      add(starts[si++], true);
    }
  }
  const double C = static_cast<double>(r.total_gpus);
  std::vector<double> held(ten.size(), 0.0), since(ten.size(), 0.0), over_ms(ten.size(), 0.0);
  for (const Change& c : changes) {
    const std::size_t t = r.jobs[c.job].tenant;
    const double limit = e[static_cast<Eigen::Index>(t)] * C;
    over_ms[t] += std::max(0.0, held[t] - limit) * (static_cast<double>(c.time) - since[t]);
    since[t] = static_cast<double>(c.time);
    held[t] += (c.start ? 1.0 : -1.0) * c.gpus;
    if (c.start && held[t] > limit * (1 + 1e-12) + 1e-9) ++ten[t].borrowing_starts;
  }
  for (std::size_t t = 0; t < ten.size(); ++t) {
    ten[t].borrowed_gpu_hours = over_ms[t] / static_cast<double>(sim::kHour);
    f.borrowed_gpu_hours += ten[t].borrowed_gpu_hours;
    f.borrowing_starts += ten[t].borrowing_starts;
  }

  // Reclaims: preempt rows name the preemptor in `detail`.
  std::int64_t preempted = 0;
  for (const JobRecord& j : r.jobs) preempted += j.preemptions;
  std::int64_t preempt_rows = 0;
  for (const EventRecord& ev : r.events) {
    if (ev.kind != static_cast<std::uint8_t>(models::AuditKind::Preempt)) continue;
    ++preempt_rows;
    if (ev.detail < 0 || ev.job >= r.jobs.size() || static_cast<std::size_t>(ev.detail) >= r.jobs.size()) continue;
    const std::uint32_t victim = r.jobs[ev.job].tenant, by = r.jobs[static_cast<std::size_t>(ev.detail)].tenant;
    if (victim == by || victim >= ten.size()) continue;
    ++ten[victim].reclaimed;
    ++f.reclaims;
  }
  if (preempt_rows == 0 && preempted > 0) {
    f.reclaims = -1;
    for (auto& t : ten) t.reclaimed = -1;
  }
}

}  // namespace

std::vector<double> tenant_weights(const RunResult& result, const std::vector<std::string>& names,
                                   const std::vector<double>& weights) {
  std::map<std::string, double> by_name;
  for (std::size_t i = 0; i < names.size() && i < weights.size(); ++i) by_name[names[i]] = weights[i];
  std::vector<double> out(result.tenants.size(), 1.0);
  for (std::size_t t = 0; t < result.tenants.size(); ++t)
    if (auto it = by_name.find(result.tenants[t]); it != by_name.end()) out[t] = it->second;
  return out;
}

std::vector<double> weights_from_scenario_text(const RunResult& result) {
  std::vector<std::string> names;
  std::vector<double> weights;
  try {
    const YAML::Node root = YAML::Load(result.scenario_text);
    if (const YAML::Node ts = root["tenants"]; ts && ts.IsSequence()) {
      for (const auto& t : ts) {
        if (!t.IsMap() || !t["name"]) continue;
        names.push_back(t["name"].as<std::string>());
        weights.push_back(t["weight"] ? t["weight"].as<double>() : 1.0);
      }
    }
  } catch (const YAML::Exception&) {
    // A result without (valid) scenario text: every tenant weighs 1.
  }
  return tenant_weights(result, names, weights);
}

bool tenants_in_scenario_text(const RunResult& result) {
  try {
    const YAML::Node ts = YAML::Load(result.scenario_text)["tenants"];
    return ts && ts.IsSequence() && ts.size() > 0;
  } catch (const YAML::Exception&) {
    return false;
  }
}

Fairness compute_fairness(const RunResult& r, const FairnessOptions& opt) {
  Fairness f;
  f.entitlements_set = opt.entitlements_set;
  std::size_t n_tenants = r.tenants.size();
  for (const JobRecord& j : r.jobs) n_tenants = std::max<std::size_t>(n_tenants, j.tenant + std::size_t{1});
  const auto T = static_cast<Eigen::Index>(n_tenants);

  // Entitlements.
  Eigen::VectorXd w = Eigen::VectorXd::Ones(T);
  for (std::size_t t = 0; t < n_tenants && t < opt.weights.size(); ++t)
    w[static_cast<Eigen::Index>(t)] = opt.weights[t];
  Eigen::VectorXd e(T);
  if (!opt.entitlement.empty()) {
    e.setZero();
    for (std::size_t t = 0; t < n_tenants && t < opt.entitlement.size(); ++t)
      e[static_cast<Eigen::Index>(t)] = opt.entitlement[t];
  } else {
    e = w.sum() > 0 ? Eigen::VectorXd(w / w.sum()) : Eigen::VectorXd::Zero(T);
  }

  // Time-averaged use of each resource per tenant: resource 0 is GPUs.
  const double span_ms = static_cast<double>(std::max<Tick>(0, r.sim_end - r.sim_start));
  const std::size_t R = 1 + opt.resources.size();
  Eigen::MatrixXd used = Eigen::MatrixXd::Zero(T, static_cast<Eigen::Index>(R));  // resource-ms
  Eigen::VectorXd capacity(static_cast<Eigen::Index>(R));
  capacity[0] = static_cast<double>(r.total_gpus);
  for (std::size_t k = 0; k < opt.resources.size(); ++k)
    capacity[static_cast<Eigen::Index>(k + 1)] = opt.resources[k].capacity;

  Eigen::VectorXd jct_sum = Eigen::VectorXd::Zero(T), ideal_sum = Eigen::VectorXd::Zero(T);
  std::vector<TenantFairness> ten(n_tenants);
  for (std::size_t t = 0; t < n_tenants; ++t) {
    if (t < r.tenants.size()) {
      ten[t].name = r.tenants[t];
    } else {
      ten[t].name = "#";
      ten[t].name.append(std::to_string(t));
    }
    ten[t].weight = w[static_cast<Eigen::Index>(t)];
    ten[t].entitlement = e[static_cast<Eigen::Index>(t)];
  }

  // Tenants in the system at each submit time (for Themis' N): jobs in submit order, ends sorted.
  const std::size_t J = r.jobs.size();
  std::vector<std::size_t> by_submit(J), by_end(J);
  for (std::size_t i = 0; i < J; ++i) by_submit[i] = by_end[i] = i;
  auto end_of = [&](const JobRecord& j) { return j.end >= 0 ? j.end : r.sim_end; };
  // Stable orders: traces come in submit order, so the first sort is mostly a check; the ends
  // are sorted by (end, index), which is the stable order, as plain pairs.
  const auto by_submit_time = [&](std::size_t a, std::size_t b) { return r.jobs[a].submit < r.jobs[b].submit; };
  if (!std::is_sorted(by_submit.begin(), by_submit.end(), by_submit_time))
    std::stable_sort(by_submit.begin(), by_submit.end(), by_submit_time);
  {
    HEADROOM_ASSERT(J <= UINT32_MAX, "too many jobs for 32-bit row indices");
    std::vector<detail::Keyed> ends(J);
    for (std::size_t i = 0; i < J; ++i) ends[i] = {end_of(r.jobs[i]), static_cast<std::uint32_t>(i)};
    detail::stable_sort_by_key(ends);  // made in index order: (end, index) order
    for (std::size_t i = 0; i < J; ++i) by_end[i] = ends[i].index;
  }
  std::vector<std::int64_t> in_system(n_tenants, 0);
  std::int64_t tenants_in_system = 0;
  std::size_t next_submit = 0, next_end = 0;
  double rho_job_sum = 0;
  std::int64_t rho_jobs = 0;
  const auto completed = static_cast<std::uint8_t>(models::JobState::Completed);
  const auto rejected = static_cast<std::uint8_t>(models::JobState::Rejected);
  const double C = static_cast<double>(r.total_gpus);
  const std::vector<JobRun> runs = job_runs(r);
  const std::vector<Tick> held_time = held_times(r, runs);
  const std::vector<long double> held_gpu = held_milli_ms(r, runs);

  for (std::size_t q = 0; q < J; ++q) {
    const std::size_t ji = by_submit[q];
    const JobRecord& j = r.jobs[ji];
    while (next_submit < J && r.jobs[by_submit[next_submit]].submit <= j.submit) {
      if (in_system[r.jobs[by_submit[next_submit]].tenant]++ == 0) ++tenants_in_system;
      ++next_submit;
    }
    while (next_end < J && end_of(r.jobs[by_end[next_end]]) <= j.submit) {
      if (--in_system[r.jobs[by_end[next_end]].tenant] == 0) --tenants_in_system;
      ++next_end;
    }
    TenantFairness& tf = ten[j.tenant];
    const auto ti = static_cast<Eigen::Index>(j.tenant);
    ++tf.jobs;
    // Waits and starvation.
    if (j.state != rejected || j.start >= 0) {
      const Tick wait = (j.start >= 0 ? j.start : r.sim_end) - j.submit;
      tf.max_wait_s = std::max(tf.max_wait_s, sim::to_seconds(std::max<Tick>(0, wait)));
      if (wait > opt.starvation) ++tf.starved;
    }
    if (j.start < 0) continue;
    // Resources held from start to end.
    const double held_ms = static_cast<double>(held_time[ji]);
    used(ti, 0) += static_cast<double>(held_gpu[ji] / 1000);
    for (std::size_t k = 0; k < opt.resources.size(); ++k)
      if (ji < opt.resources[k].per_job.size())
        used(ti, static_cast<Eigen::Index>(k + 1)) += opt.resources[k].per_job[ji] * held_ms;
    // Finish-time fairness.
    if (j.state == completed && j.end >= 0) {
      Tick run = j.runtime;
      if (j.walltime >= 0) run = std::min(run, j.walltime);
      if (run <= 0 || C <= 0) continue;
      const double N = static_cast<double>(std::max<std::int64_t>(1, tenants_in_system));
      const double ideal = static_cast<double>(run) * std::max(1.0, held_gpus(j) / (C / N));
      const double jct = static_cast<double>(j.end - j.submit);
      jct_sum[ti] += jct;
      ideal_sum[ti] += ideal;
      const double rho = jct / ideal;
      tf.rho_job_max = std::max(tf.rho_job_max, rho);
      ++tf.completed;
      rho_job_sum += rho;
      ++rho_jobs;
    }
  }

  // Shares: resource-ms over capacity x span, column by column.
  Eigen::MatrixXd share = Eigen::MatrixXd::Zero(T, static_cast<Eigen::Index>(R));
  for (Eigen::Index k = 0; k < static_cast<Eigen::Index>(R); ++k)
    if (capacity[k] > 0 && span_ms > 0) share.col(k) = used.col(k) / (capacity[k] * span_ms);

  std::vector<double> active_x;
  f.min_share_ratio = kNaN;
  for (std::size_t t = 0; t < n_tenants; ++t) {
    const auto ti = static_cast<Eigen::Index>(t);
    TenantFairness& tf = ten[t];
    tf.share = share(ti, 0);
    tf.share_ratio = tf.entitlement > 0 ? tf.share / tf.entitlement : kNaN;
    Eigen::Index best = 0;
    tf.dominant_share = share.row(ti).maxCoeff(&best);
    tf.dominant_resource = best == 0 ? "gpu" : opt.resources[static_cast<std::size_t>(best - 1)].name;
    tf.rho = ideal_sum[ti] > 0 ? jct_sum[ti] / ideal_sum[ti] : 0.0;
    f.rho_max = std::max(f.rho_max, tf.rho);
    f.max_wait_s = std::max(f.max_wait_s, tf.max_wait_s);
    f.starved += tf.starved;
    f.max_dominant_share = std::max(f.max_dominant_share, tf.dominant_share);
    if (tf.jobs > 0 && tf.entitlement > 0) {
      active_x.push_back(tf.share_ratio);
      if (!(tf.share_ratio >= f.min_share_ratio)) f.min_share_ratio = tf.share_ratio;
    }
  }
  f.jain = jain(Eigen::Map<const Eigen::VectorXd>(active_x.data(), static_cast<Eigen::Index>(active_x.size())));
  borrowing(r, runs, e, ten, f);
  f.rho_mean = rho_jobs > 0 ? rho_job_sum / static_cast<double>(rho_jobs) : 0.0;

  // Over time, from the samples.
  const auto& ts = r.timeseries;
  const std::size_t S = ts.time.size();
  f.time = ts.time;
  const bool have_used = ts.tenant_used_gpus.size() == S * r.tenants.size() && S > 0 && !r.tenants.empty();
  if (have_used && C > 0) {
    const auto TS = static_cast<Eigen::Index>(r.tenants.size());
    using RowMajor = Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::Map<const RowMajor> u(ts.tenant_used_gpus.data(), static_cast<Eigen::Index>(S), TS);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> sh = u.cast<double>() / C;
    f.share_over_time.assign(sh.data(), sh.data() + sh.size());
    const bool have_pending = ts.tenant_pending_jobs.size() == S * r.tenants.size();
    double sum = 0;
    std::int64_t counted = 0;
    f.jain_over_time.assign(S, kNaN);
    std::vector<double> x;
    for (std::size_t s = 0; s < S; ++s) {
      x.clear();
      for (Eigen::Index t = 0; t < TS; ++t) {
        const bool active =
            u(static_cast<Eigen::Index>(s), t) > 0 ||
            (have_pending && ts.tenant_pending_jobs[s * r.tenants.size() + static_cast<std::size_t>(t)] > 0);
        if (active && e[t] > 0) x.push_back(sh(static_cast<Eigen::Index>(s), t) / e[t]);
      }
      if (x.empty()) continue;
      f.jain_over_time[s] = jain(Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size())));
      sum += f.jain_over_time[s];
      ++counted;
    }
    f.jain_mean = counted > 0 ? sum / static_cast<double>(counted) : kNaN;
  } else {
    f.jain_mean = kNaN;
  }
  f.tenants = std::move(ten);
  return f;
}

void print_fairness(std::ostream& out, const Fairness& f, std::size_t max_tenants) {
  // The worst tenant by name, with its completed jobs: a few short jobs that waited give a large rho.
  const TenantFairness* worst = nullptr;
  for (const TenantFairness& t : f.tenants)
    if (t.rho > 0 && (worst == nullptr || t.rho > worst->rho)) worst = &t;
  out << "fairness: Jain " << number(f.jain, 3) << " (mean over time " << number(f.jain_mean, 3)
      << ")   finish-time rho: worst tenant " << number(f.rho_max, 2);
  if (worst != nullptr) out << " (" << worst->name << ", " << jobs_count(worst->completed) << ")";
  out << ", mean job " << number(f.rho_mean, 2) << "   max wait " << duration(f.max_wait_s) << "   starved "
      << thousands(f.starved) << " jobs\n";
  const std::string reclaims = "reclaims (cross-tenant preemptions) " +
                               (f.reclaims < 0 ? std::string("unknown (no /events)") : thousands(f.reclaims));
  if (f.entitlements_set)
    out << "borrowing: " << grouped(f.borrowed_gpu_hours, 1) << " GPU-h above entitlement, "
        << thousands(f.borrowing_starts) << " starts over entitlement   " << reclaims << "\n";
  else
    out << "borrowing: not measured (the scenario sets no tenants, so no entitlement; \"entitled\" below is an "
           "equal share each)   "
        << reclaims << "\n";
  std::vector<std::size_t> order;
  for (std::size_t t = 0; t < f.tenants.size(); ++t)
    if (f.tenants[t].jobs > 0) order.push_back(t);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return f.tenants[a].share > f.tenants[b].share; });
  if (order.empty() || max_tenants == 0) return;
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %9s %9s %7s %9s %7s %10s %8s\n", "tenant", "entitled", "share", "ratio",
                "dominant", "rho", "max wait", "starved");
  out << line;
  for (std::size_t i = 0; i < std::min(max_tenants, order.size()); ++i) {
    const auto& t = f.tenants[order[i]];
    std::string name = t.name.size() > 20 ? t.name.substr(0, 19) + "~" : t.name;
    std::snprintf(line, sizeof line, "%-20s %8s%% %8s%% %7s %8s%% %7s %10s %8lld\n", name.c_str(),
                  number(100 * t.entitlement, 1).c_str(), number(100 * t.share, 1).c_str(),
                  number(t.share_ratio, 2).c_str(), number(100 * t.dominant_share, 1).c_str(), number(t.rho, 2).c_str(),
                  duration(t.max_wait_s).c_str(), static_cast<long long>(t.starved));
    out << line;
  }
  if (order.size() > max_tenants) out << "... and " << (order.size() - max_tenants) << " more\n";
}

void print_fairness_json(std::ostream& out, const Fairness& f, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  out << "{\n";
  out << pad << "  \"jain\": " << json_number(f.jain, "null") << ",\n";
  out << pad << "  \"jain_mean\": " << json_number(f.jain_mean, "null") << ",\n";
  out << pad << "  \"rho_max\": " << json_number(f.rho_max, "null") << ",\n";
  out << pad << "  \"rho_mean\": " << json_number(f.rho_mean, "null") << ",\n";
  out << pad << "  \"min_share_ratio\": " << json_number(f.min_share_ratio, "null") << ",\n";
  out << pad << "  \"max_dominant_share\": " << json_number(f.max_dominant_share, "null") << ",\n";
  out << pad << "  \"max_wait_s\": " << json_number(f.max_wait_s, "null") << ",\n";
  out << pad << "  \"starved\": " << f.starved << ",\n";
  out << pad << "  \"entitlements_set\": " << (f.entitlements_set ? "true" : "false") << ",\n";
  out << pad << "  \"borrowed_gpu_hours\": " << json_number(f.borrowed_gpu_hours, "null") << ",\n";
  out << pad << "  \"borrowing_starts\": " << f.borrowing_starts << ",\n";
  out << pad << "  \"reclaims\": " << (f.reclaims < 0 ? std::string("null") : std::to_string(f.reclaims)) << ",\n";
  out << pad << "  \"tenants\": [";
  for (std::size_t i = 0; i < f.tenants.size(); ++i) {
    const auto& t = f.tenants[i];
    out << (i == 0 ? "\n" : ",\n") << pad << "    {\"name\": " << json_string(t.name) << ", \"jobs\": " << t.jobs
        << ", \"weight\": " << json_number(t.weight, "null")
        << ", \"entitlement\": " << json_number(t.entitlement, "null")
        << ", \"share\": " << json_number(t.share, "null")
        << ", \"share_ratio\": " << json_number(t.share_ratio, "null")
        << ", \"dominant_share\": " << json_number(t.dominant_share, "null")
        << ", \"dominant_resource\": " << json_string(t.dominant_resource)
        << ", \"rho\": " << json_number(t.rho, "null") << ", \"rho_job_max\": " << json_number(t.rho_job_max, "null")
        << ", \"max_wait_s\": " << json_number(t.max_wait_s, "null") << ", \"starved\": " << t.starved
        << ", \"borrowed_gpu_hours\": " << json_number(t.borrowed_gpu_hours, "null")
        << ", \"borrowing_starts\": " << t.borrowing_starts
        << ", \"reclaimed\": " << (t.reclaimed < 0 ? std::string("null") : std::to_string(t.reclaimed)) << "}";
  }
  out << (f.tenants.empty() ? "]\n" : "\n" + pad + "  ]\n") << pad << "}";
}

void print_summary_json_with_fairness(std::ostream& out, const Summary& s, const Fairness& f) {
  std::ostringstream base;
  print_summary_json(base, s);
  std::string text = base.str();
  // The summary object ends with "\n}\n": put the fairness member before its closing brace.
  const auto close = text.rfind('}');
  std::size_t cut = close;
  while (cut > 0 && (text[cut - 1] == '\n' || text[cut - 1] == ' ')) --cut;
  out << text.substr(0, cut) << ",\n  \"fairness\": ";
  print_fairness_json(out, f, 2);
  out << "\n}\n";
}

}  // namespace headroom::results
