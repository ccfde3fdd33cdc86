#include "planner/plan.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "models/job.hpp"
#include "planner/run.hpp"
#include "planner/sweep.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/parallel.hpp"
#include "sim/suggest.hpp"
#include "sim/time.hpp"

namespace headroom::planner {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

enum class Unit { Time, Ratio, Hours, Count };

const std::map<std::string, std::pair<std::string, Unit>>& kpi_names() {
  static const std::map<std::string, std::pair<std::string, Unit>> k = {
      {"wait_mean", {"wait_mean", Unit::Time}},
      {"mean_wait", {"wait_mean", Unit::Time}},
      {"wait_median", {"wait_median", Unit::Time}},
      {"median_wait", {"wait_median", Unit::Time}},
      {"wait_p95", {"wait_p95", Unit::Time}},
      {"p95_wait", {"wait_p95", Unit::Time}},
      {"wait_max", {"wait_max", Unit::Time}},
      {"max_wait", {"wait_max", Unit::Time}},
      {"jct_mean", {"jct_mean", Unit::Time}},
      {"mean_jct", {"jct_mean", Unit::Time}},
      {"jct_median", {"jct_median", Unit::Time}},
      {"median_jct", {"jct_median", Unit::Time}},
      {"jct_p95", {"jct_p95", Unit::Time}},
      {"p95_jct", {"jct_p95", Unit::Time}},
      {"wait_p99", {"wait_p99", Unit::Time}},
      {"p99_wait", {"wait_p99", Unit::Time}},
      {"jct_p99", {"jct_p99", Unit::Time}},
      {"p99_jct", {"jct_p99", Unit::Time}},
      {"preemptions", {"preemptions", Unit::Count}},
      {"lost_gpu_hours", {"lost_gpu_hours", Unit::Count}},
      {"starved_jobs", {"starved_jobs", Unit::Count}},
      {"pending_gpus", {"pending_gpus", Unit::Count}},
      {"utilization", {"utilization", Unit::Ratio}},
      {"busy_utilization", {"busy_utilization", Unit::Ratio}},
      {"makespan", {"makespan", Unit::Time}},
      {"completed_fraction", {"completed_fraction", Unit::Ratio}},
      {"served_fraction", {"served_fraction", Unit::Ratio}},
      {"fragmentation", {"fragmentation", Unit::Ratio}},
      {"slo_attainment", {"slo_attainment", Unit::Ratio}},
      {"fragmented_gpus", {"fragmented_gpus", Unit::Count}},
      // The POC drills (docs/drills.md): denied submissions, jobs killed by failures, the work they
      // lost, the slowest recovery after a scripted outage (none: not modelled), and jobs that never
      // started or that the policy rejected.
      {"denied", {"denied", Unit::Count}},
      {"jobs_killed", {"jobs_killed", Unit::Count}},
      {"failure_lost_gpu_hours", {"failure_lost_gpu_hours", Unit::Count}},
      {"worst_recovery", {"worst_recovery", Unit::Time}},
      {"recovery", {"worst_recovery", Unit::Time}},
      // Recovery per outage (docs/drills.md): kill to next start over every job an outage killed
      // (one never running again counts as never), jobs not running again, the work lost, gangs
      // left partially placed and the GPU-hours they held so, and inference SLO attainment during
      // and after the scripted outages.
      {"recovery_p50", {"recovery_p50", Unit::Time}},
      {"recovery_p95", {"recovery_p95", Unit::Time}},
      {"recovery_max", {"recovery_max", Unit::Time}},
      {"not_recovered", {"not_recovered", Unit::Count}},
      {"work_lost_gpu_hours", {"failure_lost_gpu_hours", Unit::Count}},
      {"partial_gangs", {"partial_gangs", Unit::Count}},
      {"partial_gang_gpu_hours", {"partial_gang_gpu_hours", Unit::Count}},
      {"outage_slo_attainment", {"outage_slo_attainment", Unit::Ratio}},
      {"after_outage_slo_attainment", {"after_outage_slo_attainment", Unit::Ratio}},
      {"never_started", {"never_started", Unit::Count}},
      {"rejected", {"rejected", Unit::Count}},
      // Cost (scenario `costs:`); only in runs with priced pools.
      {"cost", {"cost", Unit::Count}},
      {"cost_used", {"cost_used", Unit::Count}},
      {"cost_per_gpu_hour", {"cost_per_gpu_hour", Unit::Count}},
      // Fairness (results/fairness.hpp).
      {"jain", {"jain", Unit::Count}},
      {"jain_index", {"jain", Unit::Count}},
      {"jain_mean", {"jain_mean", Unit::Count}},
      {"rho_max", {"rho_max", Unit::Count}},
      {"max_rho", {"rho_max", Unit::Count}},
      {"rho_mean", {"rho_mean", Unit::Count}},
      {"mean_rho", {"rho_mean", Unit::Count}},
      {"min_share_ratio", {"min_share_ratio", Unit::Count}},
      {"max_dominant_share", {"max_dominant_share", Unit::Ratio}},
      {"starved", {"starved", Unit::Count}},
  };
  return k;
}

// Wait and JCT quantiles of a group (a tenant or a job kind): wait_mean ... jct_p99, also written
// mean_wait, p95_jct and so on.
const char* kGroupQuantiles =
    "wait_mean, wait_median, wait_p95, wait_p99, wait_max, jct_mean, jct_median, jct_p95, jct_p99, jct_max";

std::string canonical_quantile(const std::string& what) {
  for (const char* m : {"wait", "jct"})
    for (const char* q : {"mean", "median", "p95", "p99", "max"}) {
      const std::string a = std::string(m) + "_" + q, b = std::string(q) + "_" + m;
      if (what == a || what == b) return a;
    }
  return "";
}
bool group_quantile(const std::string& what) { return !canonical_quantile(what).empty(); }

double quantile_of(const results::Quantiles& wait, const results::Quantiles& jct, const std::string& kpi) {
  const std::string what = kpi.substr(kpi.find('.') + 1);
  const results::Quantiles& q = what.rfind("wait", 0) == 0 ? wait : jct;
  const std::string which = what.substr(what.find('_') + 1);
  return which == "mean"     ? q.mean
         : which == "median" ? q.median
         : which == "p95"    ? q.p95
         : which == "p99"    ? q.p99
                             : q.max;
}

bool is_recovery_kpi(const std::string& kpi) {
  for (const char* k : {"recovery_p50", "recovery_p95", "recovery_max", "not_recovered", "partial_gangs",
                        "partial_gang_gpu_hours", "outage_slo_attainment", "after_outage_slo_attainment"})
    if (kpi == k) return true;
  return false;
}

// A recovery KPI of the summary: none without failures (or, for the SLO ones, without a service
// alive around a scripted outage); a time never reached is infinite.
std::optional<double> recovery_kpi(const results::Summary& s, const std::string& kpi) {
  const results::FailureSummary& f = s.failures;
  if (kpi == "outage_slo_attainment" || kpi == "after_outage_slo_attainment") {
    const double v = kpi == "outage_slo_attainment" ? f.outage_slo_attainment : f.after_outage_slo_attainment;
    if (v < 0) return std::nullopt;
    return v;
  }
  if (!is_recovery_kpi(kpi) || !f.any()) return std::nullopt;
  const results::RecoveryStats& r = f.recovery;
  auto time = [](double v) { return v < 0 ? std::numeric_limits<double>::infinity() : v; };
  if (kpi == "recovery_p50") return time(r.p50_s);
  if (kpi == "recovery_p95") return time(r.p95_s);
  if (kpi == "recovery_max") return time(r.max_s);
  if (kpi == "not_recovered") return static_cast<double>(r.not_recovered);
  if (kpi == "partial_gangs") return static_cast<double>(r.partial_gangs);
  return r.partial_gpu_hours;
}

// The counts of a job kind's population (kind:train.completed_fraction >= 0.95): the share of its
// jobs that completed, its jobs that never started and those the policy rejected.
const char* kKindCounts = "completed_fraction, never_started, rejected";

std::optional<Unit> kind_count_kpi(const std::string& what) {
  if (what == "completed_fraction") return Unit::Ratio;
  if (what == "never_started" || what == "rejected") return Unit::Count;
  return std::nullopt;
}

std::optional<double> kind_count_value(const results::KindSummary& k, const std::string& kpi) {
  if (kpi == "kind.completed_fraction") {
    if (k.jobs == 0) return std::nullopt;  // no job of the kind: nothing to score
    return static_cast<double>(k.completed) / static_cast<double>(k.jobs);
  }
  if (kpi == "kind.never_started") return static_cast<double>(k.never_started);
  return static_cast<double>(k.rejected);
}

std::string known_kpis() {
  return "wait_mean, wait_median, wait_p95, wait_p99, wait_max, jct_mean, jct_median, jct_p95, jct_p99, utilization, "
         "busy_utilization, "
         "makespan, completed_fraction, served_fraction, preemptions, lost_gpu_hours, starved_jobs, pending_gpus, "
         "fragmentation, "
         "denied, jobs_killed, failure_lost_gpu_hours, worst_recovery, recovery_p50, recovery_p95, recovery_max, "
         "not_recovered, work_lost_gpu_hours, partial_gangs, partial_gang_gpu_hours, outage_slo_attainment, "
         "after_outage_slo_attainment, never_started, rejected, "
         "fragmented_gpus, slo_attainment, service:NAME.slo_attainment, service:NAME.request_attainment, cost, "
         "cost_used, "
         "cost_per_gpu_hour, "
         "jain, jain_mean, rho_max, rho_mean, min_share_ratio, max_dominant_share, starved, "
         "tenant:NAME.mean_wait, tenant:NAME.p95_wait, tenant:NAME.max_wait, tenant:NAME.gpu_hours, "
         "tenant:NAME.<wait|jct>_<mean|median|p95|p99|max>, kind:<train|inference|interactive|batch>.<wait|jct>_<...>, "
         "kind:KIND.completed_fraction, kind:KIND.never_started, kind:KIND.rejected, "
         "tenant:NAME.share, tenant:NAME.share_ratio, tenant:NAME.dominant_share, tenant:NAME.rho, "
         "tenant:NAME.starved";
}

}  // namespace

Target parse_target(const std::string& text) {
  auto bad = [&](const std::string& why) { throw sim::InputError("", 0, 0, "--target \"" + text + "\"", why); };
  Target t;
  t.text = text;
  static const char* kOps[] = {"<=", ">=", "<", ">"};
  std::size_t pos = std::string::npos;
  std::string op;
  for (const char* o : kOps) {
    pos = text.find(o);
    if (pos != std::string::npos) {
      op = o;
      break;
    }
  }
  if (op.empty()) bad("expected KPI <= VALUE (or <, >=, >), e.g. \"p95_wait <= 1h\"");
  std::string kpi = trim(text.substr(0, pos));
  const std::string value = trim(text.substr(pos + op.size()));
  t.at_most = op[0] == '<';
  t.strict = op.size() == 1;
  Unit unit = Unit::Time;
  if (kpi.rfind("service:", 0) == 0) {
    const std::size_t dot = kpi.rfind('.');
    if (dot == std::string::npos || dot <= 8)
      bad("expected service:NAME.slo_attainment or service:NAME.request_attainment");
    t.tenant = kpi.substr(8, dot - 8);  // the service's name
    const std::string what = kpi.substr(dot + 1);
    if (what != "slo_attainment" && what != "request_attainment")
      bad("unknown service KPI \"" + what + "\"; expected slo_attainment or request_attainment");
    t.kpi = "service." + what;
    unit = Unit::Ratio;
  } else if (kpi.rfind("kind:", 0) == 0) {
    const std::size_t dot = kpi.rfind('.');
    if (dot == std::string::npos || dot <= 5) bad("expected kind:KIND.wait_p95 or kind:KIND.jct_mean");
    t.tenant = kpi.substr(5, dot - 5);  // the job kind
    models::JobKind kind{};
    if (!models::parse_job_kind(t.tenant, kind))
      bad("unknown job kind \"" + t.tenant + "\"; expected train, inference, interactive or batch");
    const std::string what = kpi.substr(dot + 1);
    if (const auto count = kind_count_kpi(what)) {
      t.kpi = "kind." + what;
      unit = *count;
    } else {
      if (!group_quantile(what))
        bad("unknown kind KPI \"" + what + "\"; expected " + kGroupQuantiles + ", " + kKindCounts);
      t.kpi = "kind." + canonical_quantile(what);
    }
  } else if (kpi.rfind("tenant:", 0) == 0) {
    const std::size_t dot = kpi.rfind('.');
    if (dot == std::string::npos || dot <= 7) bad("expected tenant:NAME.mean_wait or tenant:NAME.gpu_hours");
    t.tenant = kpi.substr(7, dot - 7);
    const std::string what = kpi.substr(dot + 1);
    if (what == "mean_wait" || what == "wait_mean") {
      t.kpi = "tenant.mean_wait";
    } else if (what == "p95_wait" || what == "wait_p95") {
      t.kpi = "tenant.p95_wait";
    } else if (what == "max_wait" || what == "wait_max") {
      t.kpi = "tenant.max_wait";
    } else if (what == "gpu_hours") {
      t.kpi = "tenant.gpu_hours";
      unit = Unit::Hours;
    } else if (what == "share" || what == "dominant_share") {
      t.kpi = "tenant." + what;
      unit = Unit::Ratio;
    } else if (what == "share_ratio" || what == "rho" || what == "starved") {
      t.kpi = "tenant." + what;
      unit = Unit::Count;
    } else if (group_quantile(what)) {  // its wait median / p99 and JCT quantiles
      t.kpi = "tenantq." + canonical_quantile(what);
    } else {
      bad("unknown tenant KPI \"" + what +
          "\"; expected mean_wait, p95_wait, max_wait, gpu_hours, share, share_ratio, dominant_share, rho, "
          "starved or one of " +
          kGroupQuantiles);
    }
  } else {
    auto it = kpi_names().find(kpi);
    if (it == kpi_names().end()) bad("unknown KPI \"" + kpi + "\"; known: " + known_kpis());
    t.kpi = it->second.first;
    unit = it->second.second;
  }
  t.unit = unit == Unit::Time ? "time" : unit == Unit::Ratio ? "ratio" : unit == Unit::Hours ? "hours" : "number";
  if (unit == Unit::Time) {
    auto d = sim::parse_duration(value);
    if (!d && !value.empty() && value.front() == '-' && t.at_most)
      bad("can never be met: " + trim(text.substr(0, pos)) + " is never below 0");
    if (!d) bad("expected a duration like 30m, 1h or 2d, got \"" + value + "\"");
    t.bound = sim::to_seconds(*d);
  } else {
    std::string v = value;
    const bool percent = !v.empty() && v.back() == '%';
    if (percent) v.pop_back();
    double x = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || v.empty())
      bad("expected a number" + std::string(unit == Unit::Ratio ? " (0.8 or 80%)" : "") + ", got \"" + value + "\"");
    if (percent && unit != Unit::Ratio)
      bad("a percentage only makes sense for utilization, completed_fraction, served_fraction, fragmentation and "
          "shares");
    if (!std::isfinite(x)) bad("expected a finite number, got \"" + value + "\"");
    t.bound = percent ? x / 100.0 : x;
    if (unit == Unit::Ratio && (t.bound < 0 || t.bound > 1))
      bad("expected a ratio from 0 to 1 (or 0% to 100%), got \"" + value + "\"");
  }
  // Every KPI is at least 0; ratios, Jain's index and shares are at most 1. A bound past either
  // end can never be met by any run (a bound past the other end always is, and is kept).
  const bool at_most_one = unit == Unit::Ratio || t.kpi == "jain" || t.kpi == "jain_mean";
  const std::string name = trim(text.substr(0, pos));
  if (t.at_most && (t.bound < 0 || (t.strict && t.bound <= 0))) bad("can never be met: " + name + " is never below 0");
  if (!t.at_most && at_most_one && (t.bound > 1 || (t.strict && t.bound >= 1)))
    bad("can never be met: " + name + " is never above 1" + (unit == Unit::Ratio ? " (100%)" : ""));
  return t;
}

sim::InputError target_error(const Target& t, const std::string& message) {
  if (t.file.empty()) return sim::InputError("", 0, 0, "--target \"" + t.text + "\"", message);
  return sim::InputError(t.file, t.line, t.column, "targets", "\"" + t.text + "\": " + message);
}

TargetNames target_names(const scenarios::Scenario& sc, const std::vector<Target>& targets,
                         scenarios::TraceCache* traces) {
  TargetNames out;
  for (const auto& s : sc.services) out.services.push_back(s.name);
  bool tenants = false;
  for (const auto& t : targets) tenants = tenants || t.kpi.rfind("tenant", 0) == 0;
  if (!tenants) return out;
  const models::Workload w = scenarios::build_workload(sc, traces, false);
  for (const auto& name : w.tenants.names()) out.tenants.emplace_back(name);
  return out;
}

std::optional<std::string> unknown_name(const Target& t, const TargetNames& names) {
  const bool service = t.kpi.rfind("service.", 0) == 0;
  if (!service && t.kpi.rfind("tenant", 0) != 0) return std::nullopt;
  const auto& known = service ? names.services : names.tenants;
  if (std::find(known.begin(), known.end(), t.tenant) != known.end()) return std::nullopt;
  std::string msg = service ? (known.empty() ? std::string("the scenario has no services")
                                             : "no service named \"" + t.tenant + "\" in the scenario")
                            : "no tenant named \"" + t.tenant + "\" in the workload";
  if (const auto near = sim::closest_match(t.tenant, known)) msg += "; did you mean \"" + *near + "\"?";
  return msg;
}

void check_target_names(const std::vector<Target>& targets, const scenarios::Scenario& sc,
                        scenarios::TraceCache* traces) {
  const TargetNames names = target_names(sc, targets, traces);
  std::vector<sim::InputError> errors;
  for (const auto& t : targets)
    if (const auto why = unknown_name(t, names)) errors.push_back(target_error(t, *why));
  if (!errors.empty()) throw sim::InputErrors(std::move(errors));
}

double served_fraction(const results::Summary& s) {
  using models::JobState;
  const auto state = [&](JobState st) { return s.by_state[static_cast<std::size_t>(st)]; };
  const std::int64_t asked = s.jobs - s.denied;
  if (asked <= 0) return 1;
  const std::int64_t ended_by_system =
      s.failures.jobs_failed + s.failures.jobs_failed_by_policy - s.ended_at_recorded_limit;
  const std::int64_t served = state(JobState::Completed) + state(JobState::Cancelled) +
                              std::max<std::int64_t>(0, state(JobState::Failed) - ended_by_system);
  return static_cast<double>(served) / static_cast<double>(asked);
}

std::optional<double> kpi_value(const results::Summary& s, const Target& t) {
  if (t.kpi == "wait_mean") return s.wait.mean;
  if (t.kpi == "wait_median") return s.wait.median;
  if (t.kpi == "wait_p95") return s.wait.p95;
  if (t.kpi == "wait_max") return s.wait.max;
  if (t.kpi == "wait_p99") return s.wait.p99;
  if (t.kpi == "jct_p99") return s.jct.p99;
  if (t.kpi == "preemptions") return static_cast<double>(s.preemptions);
  if (t.kpi == "lost_gpu_hours") return s.lost_gpu_hours;
  if (t.kpi == "starved_jobs") return static_cast<double>(s.starved_jobs);
  if (t.kpi == "pending_gpus") return s.pending_gpus_mean;
  if (t.kpi == "jct_mean") return s.jct.mean;
  if (t.kpi == "jct_median") return s.jct.median;
  if (t.kpi == "jct_p95") return s.jct.p95;
  if (t.kpi == "utilization") return s.gpu_utilization;
  if (t.kpi == "busy_utilization") return s.gpu_busy_utilization;
  if (t.kpi == "makespan") return s.makespan_s;
  if (t.kpi == "fragmentation") return s.fragmentation;
  if (t.kpi == "slo_attainment") {
    if (s.services.empty()) return std::nullopt;
    return s.slo_attainment;
  }
  if (t.kpi == "service.slo_attainment" || t.kpi == "service.request_attainment") {
    for (const auto& sv : s.services)
      if (sv.name == t.tenant) return t.kpi == "service.slo_attainment" ? sv.time_attainment : sv.request_attainment;
    return std::nullopt;
  }
  if (t.kpi == "fragmented_gpus") return s.fragmented_gpus_mean;
  if (t.kpi == "denied") return static_cast<double>(s.denied);
  if (t.kpi == "jobs_killed") return static_cast<double>(s.failures.jobs_killed);
  if (t.kpi == "failure_lost_gpu_hours") return s.failures.lost_gpu_hours;
  if (t.kpi == "worst_recovery") {
    if (s.failures.drill_recovery_s.empty()) return std::nullopt;  // no scripted outage
    if (s.failures.drills_recovered < static_cast<std::int64_t>(s.failures.drill_recovery_s.size()))
      return std::numeric_limits<double>::infinity();  // an outage the queue never recovered from
    return s.failures.worst_recovery_s;
  }
  if (std::optional<double> v = recovery_kpi(s, t.kpi); v || is_recovery_kpi(t.kpi)) return v;
  if (t.kpi == "never_started") return static_cast<double>(s.never_started);
  if (t.kpi == "rejected") return static_cast<double>(s.rejected);
  if (t.kpi == "cost" || t.kpi == "cost_used" || t.kpi == "cost_per_gpu_hour") {
    if (!s.priced) return std::nullopt;
    return t.kpi == "cost" ? s.cost : t.kpi == "cost_used" ? s.cost_used : s.cost_per_used_gpu_hour;
  }
  if (t.kpi == "completed_fraction")
    return s.jobs == 0 ? 0.0 : static_cast<double>(s.by_state[2]) / static_cast<double>(s.jobs);
  if (t.kpi == "served_fraction") return served_fraction(s);
  if (t.kpi.rfind("kind.", 0) == 0) {
    for (const auto& k : s.kinds) {
      if (k.name != t.tenant) continue;
      if (k.jobs == 0) return std::nullopt;  // no job of the kind: no figure (not covered), not 0 s
      if (kind_count_kpi(t.kpi.substr(5))) return kind_count_value(k, t.kpi);
      return quantile_of(k.wait, k.jct, t.kpi);
    }
    return std::nullopt;
  }
  for (const auto& ten : s.tenants) {
    if (ten.name != t.tenant) continue;
    if (t.kpi.rfind("tenantq.", 0) == 0) return quantile_of(ten.wait, ten.jct, t.kpi);
    if (t.kpi == "tenant.mean_wait") return ten.mean_wait_s;
    if (t.kpi == "tenant.p95_wait") return ten.p95_wait_s;
    if (t.kpi == "tenant.max_wait") return ten.max_wait_s;
    return ten.gpu_hours;
  }
  return std::nullopt;
}

std::optional<double> kpi_value(const results::Summary& s, const results::Fairness& f, const Target& t) {
  if (t.kpi == "jain") return f.jain;
  if (t.kpi == "jain_mean") return f.jain_mean;
  if (t.kpi == "rho_max") return f.rho_max;
  if (t.kpi == "rho_mean") return f.rho_mean;
  if (t.kpi == "min_share_ratio") return f.min_share_ratio;
  if (t.kpi == "max_dominant_share") return f.max_dominant_share;
  if (t.kpi == "starved") return static_cast<double>(f.starved);
  if (t.kpi == "tenant.share" || t.kpi == "tenant.share_ratio" || t.kpi == "tenant.dominant_share" ||
      t.kpi == "tenant.rho" || t.kpi == "tenant.starved") {
    for (const auto& ten : f.tenants) {
      if (ten.name != t.tenant) continue;
      if (t.kpi == "tenant.share") return ten.share;
      if (t.kpi == "tenant.share_ratio") return ten.share_ratio;
      if (t.kpi == "tenant.dominant_share") return ten.dominant_share;
      if (t.kpi == "tenant.rho") return ten.rho;
      return static_cast<double>(ten.starved);
    }
    return std::nullopt;
  }
  return kpi_value(s, t);
}

NotRun not_run(const results::Summary& s, const Target& t) {
  const bool time_kpi = t.kpi.rfind("wait_", 0) == 0 || t.kpi.rfind("jct_", 0) == 0;
  if (time_kpi) return NotRun{s.never_started, s.rejected};
  if (t.kpi.rfind("kind.", 0) == 0) {
    if (kind_count_kpi(t.kpi.substr(5))) return {};  // a count, not a wait: every job has one
    for (const auto& k : s.kinds)
      if (k.name == t.tenant) return NotRun{k.never_started, k.rejected};
    return {};
  }
  if (t.kpi == "tenant.mean_wait" || t.kpi == "tenant.p95_wait" || t.kpi == "tenant.max_wait" ||
      t.kpi.rfind("tenantq.", 0) == 0) {
    for (const auto& ten : s.tenants)
      if (ten.name == t.tenant) return NotRun{ten.never_started, ten.rejected};
  }
  return {};
}

std::string describe(const NotRun& n) {
  std::string out;
  if (n.never_started > 0) out = results::jobs_count(n.never_started) + " never started";
  if (n.rejected > 0) out += (out.empty() ? "" : ", ") + results::jobs_count(n.rejected) + " rejected by the policy";
  return out;
}

bool meets(const Target& t, double v) {
  if (t.at_most) return t.strict ? v < t.bound : v <= t.bound;
  return t.strict ? v > t.bound : v >= t.bound;
}

PlanResult plan(const PlanRequest& req) {
  if (req.lo > req.hi) throw sim::InputError("", 0, 0, "--range", "expected LO:HI with LO <= HI");
  if (req.targets.empty()) throw sim::InputError("", 0, 0, "--target", "at least one target is needed");
  SweepSpec spec = load_sweep(req.scenario);
  scenarios::TraceCache traces;  // every probe's trace, read once for the whole search
  spec.variables.clear();
  spec.variables.push_back(Variable{req.vary, {std::to_string(req.lo)}, 0, 0});
  if (!req.seeds.empty()) spec.seeds = req.seeds;
  // Check the key path once, and that the base scenario's tenants exist for tenant targets.
  point_scenario(spec, SweepPoint{0, {0}, spec.seeds.front()});
  // The key must be a number: one that also takes a word (name, gpu_type) is not (issue #20).
  {
    SweepSpec word = spec;
    word.variables[0].values = {"not-a-number"};
    bool takes_word = true;
    try {
      point_scenario(word, SweepPoint{0, {0}, spec.seeds.front()});
    } catch (const sim::InputError&) {
      takes_word = false;
    } catch (const sim::InputErrors&) {
      takes_word = false;
    }
    if (takes_word)
      throw sim::InputError("", 0, 0, "--vary",
                            "\"" + req.vary +
                                "\" is not a numeric key (it takes any text); plan searches a count such as "
                                "cluster.pools.<pool>.nodes");
  }

  PlanResult out;
  out.seeds = spec.seeds.size();
  {
    SweepSpec as_is = spec;
    as_is.variables.clear();
    const scenarios::Scenario base = point_scenario(as_is, SweepPoint{0, {}, spec.seeds.front()});
    // A target naming a tenant or service the scenario lacks, before any run (as compare).
    check_target_names(req.targets, base, &traces);
    out.current_gpus = base.cluster.total_gpus();
    const std::string prefix = "cluster.pools.", suffix = ".nodes";
    if (req.vary.size() > prefix.size() + suffix.size() && req.vary.rfind(prefix, 0) == 0 &&
        req.vary.compare(req.vary.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string pool = req.vary.substr(prefix.size(), req.vary.size() - prefix.size() - suffix.size());
      for (const auto& p : base.cluster.pools)
        if (p.name == pool) out.current = p.nodes;
    }
  }
  std::map<std::int64_t, Probe> measured;

  auto evaluate = [&](const std::vector<std::int64_t>& values) {
    struct Task {
      std::int64_t value;
      std::uint64_t seed;
      scenarios::Scenario sc;
      bool done = false;
      std::vector<std::optional<double>> kpis;
      std::vector<NotRun> not_run;
      std::int64_t gpus = 0;
      double cost = std::numeric_limits<double>::quiet_NaN();
      std::string currency;
    };
    std::vector<Task> tasks;
    for (std::int64_t v : values) {
      SweepSpec s = spec;
      s.variables[0].values = {std::to_string(v)};
      for (std::uint64_t seed : spec.seeds)
        tasks.push_back(Task{v, seed, point_scenario(s, SweepPoint{0, {0}, seed}), false, {}, {}, 0, {}, {}});
    }
    if (req.progress != nullptr) {
      std::vector<std::string> labels;
      for (const auto& task : tasks)
        labels.push_back(std::to_string(task.value) +
                         (spec.seeds.size() > 1 ? " seed " + std::to_string(task.seed) : std::string()));
      req.progress->begin(std::move(labels));
    }
    sim::parallel_indices(tasks.size(), [&](std::size_t i) {
      if (req.stop != nullptr && req.stop->load()) return;
      RunOptions ro;
      ro.stop = req.stop;
      ro.traces = &traces;
      if (req.progress != nullptr) {
        req.progress->start(i);
        ro.progress = req.progress->hook(i);
      }
      auto o = run_scenario(tasks[i].sc, ro);
      if (req.progress != nullptr) req.progress->over(i);
      if (o.cancelled) return;
      const auto summary = results::summarize(o.result);
      const auto fairness = fairness_of(o);
      for (const auto& t : req.targets) {
        tasks[i].kpis.push_back(kpi_value(summary, fairness, t));
        tasks[i].not_run.push_back(not_run(summary, t));
      }
      tasks[i].gpus = o.result.total_gpus;
      if (summary.priced) {
        tasks[i].cost = summary.cost;
        tasks[i].currency = summary.currency;
      }
      tasks[i].done = true;
    });
    for (std::int64_t v : values) {
      Probe p;
      p.value = v;
      p.worst.assign(req.targets.size(), 0);
      p.not_run.assign(req.targets.size(), NotRun{});
      bool complete = true;
      std::size_t first = 0;
      for (const auto& task : tasks) {
        if (task.value != v) continue;
        if (!task.done) {
          complete = false;
          continue;
        }
        bool ok = true;
        for (std::size_t k = 0; k < req.targets.size(); ++k) {
          const auto& t = req.targets[k];
          if (!task.kpis[k])
            throw target_error(t, t.kpi.rfind("service.", 0) == 0 || t.kpi == "slo_attainment"
                                      ? (t.tenant.empty() ? std::string("the scenario has no services")
                                                          : "no service named \"" + t.tenant + "\" in the scenario")
                                  : t.tenant.empty() ? "the scenario prices no GPU (add costs.gpu_hour, e.g. "
                                                       "costs: {gpu_hour: {H100: 2.99}})"
                                                     : "no tenant named \"" + t.tenant + "\" in the workload");
          const double x = *task.kpis[k];
          if (first == 0 || (t.at_most ? x > p.worst[k] : x < p.worst[k])) p.worst[k] = x;
          const NotRun& n = task.not_run[k];
          p.not_run[k].never_started = std::max(p.not_run[k].never_started, n.never_started);
          p.not_run[k].rejected = std::max(p.not_run[k].rejected, n.rejected);
          ok = ok && meets(t, x) && !n.any();
        }
        ++first;
        p.seeds_passing += ok;
        p.gpus = task.gpus;
        if (!std::isnan(task.cost) && !(p.cost >= task.cost)) p.cost = task.cost;
        p.currency = task.currency;
      }
      if (!complete) {
        out.cancelled = true;
        continue;
      }
      p.pass = p.seeds_passing == spec.seeds.size();
      measured[v] = p;
      if (req.on_probe) req.on_probe(v, p.pass);
    }
  };

  auto finish = [&] {
    for (auto& [v, p] : measured) out.curve.push_back(p);
    bool seen_pass = false;
    for (const auto& p : out.curve) {
      if (p.pass)
        seen_pass = true;
      else if (seen_pass)
        out.monotone = false;
    }
    return out;
  };

  evaluate(req.lo == req.hi ? std::vector<std::int64_t>{req.lo} : std::vector<std::int64_t>{req.lo, req.hi});
  if (out.cancelled) return finish();
  if (!measured[req.hi].pass) return finish();
  if (measured[req.lo].pass) {
    out.answer = req.lo;
    return finish();
  }
  std::int64_t fail_at = req.lo, pass_at = req.hi;
  const auto k = static_cast<std::int64_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
  while (pass_at - fail_at > 1) {
    std::vector<std::int64_t> probes;
    for (std::int64_t i = 1; i <= k; ++i) {
      const std::int64_t v = fail_at + (pass_at - fail_at) * i / (k + 1);
      if (v > fail_at && v < pass_at && (probes.empty() || probes.back() != v)) probes.push_back(v);
    }
    evaluate(probes);
    if (out.cancelled) return finish();
    for (std::int64_t v : probes) {
      if (measured[v].pass) {
        pass_at = std::min(pass_at, v);
        break;
      }
    }
    for (std::int64_t v : probes)
      if (!measured[v].pass && v < pass_at) fail_at = std::max(fail_at, v);
  }
  out.answer = pass_at;
  return finish();
}

}  // namespace headroom::planner
