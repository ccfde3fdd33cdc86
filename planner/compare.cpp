#include "planner/compare.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "models/job.hpp"
#include "planner/run.hpp"
#include "policies/registry.hpp"
#include "policies/split/split.hpp"
#include "policies/system_module.hpp"
#include "results/groups.hpp"
#include "results/hdf5_io.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"
#include "sim/parallel.hpp"
#include "sim/suggest.hpp"

namespace headroom::planner {

std::vector<std::string> parse_policy_list(const std::string& text) {
  std::vector<std::string> known;
  for (const auto& p : policies::policy_catalogue()) known.push_back(p.name);
  known.push_back("split");  // the scenario's own `split:` block (docs/split.md)
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    std::string name;
    for (char c : cur)
      if (c != ' ') name += c;
    cur.clear();
    if (name.empty()) throw sim::InputError("", 0, 0, "--policies", "empty policy name in \"" + text + "\"");
    // A split variant (docs/split.md): checked against the scenario's split when it runs.
    const bool variant = name.rfind("split:", 0) == 0;
    if (!variant && std::find(known.begin(), known.end(), name) == known.end()) {
      std::string msg = "unknown policy \"" + name + "\"";
      if (auto s = sim::closest_match(name, known)) msg += "; did you mean \"" + *s + "\"?";
      std::string all;
      for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
      throw sim::InputError("", 0, 0, "--policies", msg + " (known: " + all + ")");
    }
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw sim::InputError("", 0, 0, "--policies", "policy \"" + name + "\" listed twice");
    out.push_back(name);
  };
  for (char c : text) {
    if (c == ',')
      flush();
    else
      cur += c;
  }
  flush();
  return out;
}

namespace {

// The node rules of the scenario's own system as node selectors by queue (node_selectors_for,
// below); `declared`: every queue that system declares; `from` says whose rules they are.
struct Selectors {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_queue;
  std::vector<std::string> declared;
  std::string from;
};

// Each tenant's guaranteed GPUs: its `gpus`, else its weight's share of the cluster (rounded down).
std::vector<std::int64_t> guaranteed_gpus(const scenarios::Scenario& sc) {
  double total_weight = 0;
  for (const auto& t : sc.tenants) total_weight += t.weight;
  const auto cluster = static_cast<double>(sc.cluster.total_gpus());
  std::vector<std::int64_t> out;
  for (const auto& t : sc.tenants)
    out.push_back(t.gpus >= 0 ? t.gpus : static_cast<std::int64_t>(std::floor(cluster * t.weight / total_weight)));
  return out;
}

// What the system derives from the scenario's tenants (SystemModule::derive), or nullopt.
std::optional<policies::Derived> derive(const scenarios::Scenario& sc, const std::string& policy,
                                        const std::vector<std::vector<std::string>>& node_sets = {},
                                        const Selectors* sel = nullptr) {
  const policies::SystemModule* system = policies::find_system(policy);
  if (system == nullptr || system->derive == nullptr) return std::nullopt;
  policies::DeriveRequest request;
  request.cluster = &sc.cluster;
  request.file = sc.file;
  request.node_sets = node_sets;
  if (sel != nullptr && !sel->by_queue.empty()) {
    request.queue_node_sets = sel->by_queue;
    request.declared_queues = sel->declared;
  }
  for (const auto& g : sc.queue_grants) request.restricted = request.restricted || g.restricted;
  const auto gpus = guaranteed_gpus(sc);
  for (std::size_t i = 0; i < sc.tenants.size(); ++i) {
    const auto& t = sc.tenants[i];
    request.tenants.push_back({t.name, t.weight, t.gpus, t.max_gpus, gpus[i]});
  }
  return system->derive(request);
}

// The node rules (SystemModule::node_rules) of a policy block, add-on included; nullopt when its
// system has none or its parameters do not read (the run of that block reports them).
std::optional<policies::NodeRules> node_rules(const scenarios::PolicySpec& spec, const models::ClusterSpec& cluster) {
  const policies::SystemModule* system = policies::find_system(spec.name);
  if (system == nullptr || system->node_rules == nullptr) return std::nullopt;
  try {
    std::vector<sim::InputError> errors;
    return system->node_rules(policies::with_add_on(spec.name, spec.params, errors), cluster);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The queue names of jobs that name no queue, which a Slurm Default partition takes (as
// SlurmPolicy::partition_of reads them).
constexpr std::string_view kUnnamedQueues[] = {"", "default", models::kUnknownName};

// The run's node rules (PolicyRun::confined_queues): its system's, read from the parameters it
// ran with, and the jobs of the result in each confined queue.
void node_rules_of(const scenarios::Scenario& sc, const results::RunResult& result, PolicyRun& run) {
  run.node_selectors = !sc.workload.node_selectors.empty();
  run.node_selectors_from = sc.workload.node_selectors_from;
  run.pools_set_up = sc.workload.pools_set_up;
  auto found = node_rules(sc.policy, sc.cluster);
  if (!found) return;
  policies::NodeRules& rules = *found;
  run.other_node_rules = rules.other;
  run.confined_what = rules.what;
  std::vector<std::int64_t> jobs(rules.queues.size(), 0);
  for (const auto& j : result.jobs) {
    const std::string_view q = j.queue < result.queues.size() ? std::string_view(result.queues[j.queue]) : "";
    const bool unnamed = std::find(std::begin(kUnnamedQueues), std::end(kUnnamedQueues), q) != std::end(kUnnamedQueues);
    for (std::size_t k = 0; k < rules.queues.size(); ++k)
      if (rules.queues[k].queue == q || (unnamed && rules.queues[k].takes_unnamed)) {
        ++jobs[k];
        break;
      }
  }
  for (std::size_t k = 0; k < rules.queues.size(); ++k) {
    if (jobs[k] == 0) continue;
    run.confined_queues.push_back(std::move(rules.queues[k]));
    run.confined_jobs += jobs[k];
  }
}

}  // namespace

std::optional<policies::PolicyParams> derived_params(const scenarios::Scenario& sc, const std::string& policy) {
  auto d = derive(sc, policy);
  if (!d) return std::nullopt;
  return std::move(d->params);
}

const scenarios::PolicySpec* own_block(const scenarios::Scenario& base, const std::string& policy) {
  for (const auto& o : base.policy_overrides)
    if (o.name == policy) return &o;
  return base.policy.name == policy ? &base.policy : nullptr;
}

namespace {

// The node rules of the scenario's own system (its `policy:` block: Slurm partitions whose Nodes
// leave out a pool) as node selectors for a system that has no such rules of its own, unless the
// scenario writes `workload.node_selectors` itself: a site moving its Slurm queues to Kubernetes
// keeps their hardware (the fat nodes, the hybrid ones) with a nodeSelector per queue. Empty: none;
// `from` says whose rules they are ("slurm's partitions").

Selectors node_selectors_for(const scenarios::Scenario& base, const std::string& policy) {
  Selectors out;
  if (base.workload.node_selectors_given || policy.rfind("split", 0) == 0 || base.policy.name == "split") return out;
  if (policies::find_system(policy) == policies::find_system(base.policy.name)) return out;
  auto found = node_rules(base.policy, base.cluster);
  if (!found) return out;
  policies::NodeRules& rules = *found;
  for (auto& q : rules.queues) {
    std::sort(q.pools.begin(), q.pools.end());
    out.by_queue.emplace_back(q.queue, q.pools);
    if (q.takes_unnamed)  // jobs that name no queue: the trace's "default" or "unknown"
      for (const std::string_view unnamed : kUnnamedQueues)
        if (!unnamed.empty() &&
            std::none_of(rules.queues.begin(), rules.queues.end(), [&](const auto& o) { return o.queue == unnamed; }))
          out.by_queue.emplace_back(std::string(unnamed), q.pools);
  }
  if (!out.by_queue.empty()) {
    out.from = base.policy.name + "'s " + rules.what;
    out.declared = std::move(rules.declared);
  }
  return out;
}

scenarios::Scenario with_policy(const scenarios::Scenario& base, const std::string& policy, const Selectors& sel);

}  // namespace

scenarios::Scenario scenario_for_policy(const scenarios::Scenario& base, const std::string& policy) {
  Selectors sel = node_selectors_for(base, policy);
  scenarios::Scenario sc = with_policy(base, policy, sel);
  if (!sel.by_queue.empty()) {
    sc.workload.node_selectors = std::move(sel.by_queue);
    sc.workload.node_selectors_from = std::move(sel.from);
  }
  return sc;
}

namespace {

scenarios::Scenario with_policy(const scenarios::Scenario& base, const std::string& policy, const Selectors& sel) {
  scenarios::Scenario sc = base;
  // "split": the scenario's split site as it declares it; every other name runs the whole cluster
  // as one shared pool under that policy (docs/split.md, "Against one shared pool").
  if (policy == "split") {
    if (!base.split.declared())
      throw sim::InputError(base.file, 0, 0, "--policies",
                            "\"split\" runs the scenario's split: block, and this scenario has none (docs/split.md)");
    return sc;
  }
  // "split:slurm=0.7/kueue=0.3": the scenario's split with its shared pools cut by these shares.
  if (policy.rfind("split:", 0) == 0) {
    if (!base.split.declared())
      throw sim::InputError(base.file, 0, 0, "--policies",
                            "\"" + policy + "\" varies the scenario's split: block, and this scenario has none");
    sc.split = policies::split::split_variant(base.split, base.cluster, std::string_view(policy).substr(6),
                                              "--policies " + policy);
    sc.policy.name = "split";
    return sc;
  }
  if (const scenarios::PolicySpec* own = own_block(base, policy)) {
    sc.policy = *own;
    return sc;
  }
  // A variant (`kubernetes+coscheduling`) without a block of its own is its system as the scenario
  // configures it, plus the add-on.
  if (const auto plus = policy.find('+'); plus != std::string::npos) {
    const std::string system = policy.substr(0, plus);
    for (const auto& o : base.policy_overrides) {
      if (o.name == system) {
        sc.policy = o;
        sc.policy.name = policy;
        return sc;
      }
    }
    if (base.policy.name == system) {
      sc.policy.name = policy;
      return sc;
    }
  }
  sc.policy = scenarios::PolicySpec{policy, {}};
  std::vector<std::vector<std::string>> pool_sets;  // the selectors' pools, each set once
  for (const auto& [queue, pools] : sel.by_queue)
    if (std::find(pool_sets.begin(), pool_sets.end(), pools) == pool_sets.end()) pool_sets.push_back(pools);
  if (auto derived = derive(base, policy, pool_sets, &sel)) {
    sc.policy.params = std::move(derived->params);
    sc.workload.queue_by_tenant = derived->queue_by_tenant;
    sc.workload.pools_set_up = std::move(derived->pools_set_up);
  }
  return sc;
}

}  // namespace

std::vector<CompareResult> compare_all(const std::vector<scenarios::Scenario>& bases,
                                       const std::vector<std::string>& names, const std::atomic<bool>* stop,
                                       RunsProgress* progress, const std::string& keep_dir,
                                       scenarios::TraceCache* traces) {
  // Every (scenario, policy) pair is one task of a single parallel loop, so a slow pair of one
  // drill overlaps with the others' instead of each drill waiting for its slowest system.
  const std::size_t n = names.size();
  std::vector<std::string> labels;
  std::vector<scenarios::Scenario> scenarios;
  for (const auto& base : bases)
    for (const auto& p : names) {
      labels.push_back(bases.size() > 1 ? base.name + "/" + p : p);
      scenarios.push_back(scenario_for_policy(base, p));
    }
  if (progress != nullptr) progress->begin(labels);
  std::vector<CompareResult> out(bases.size());
  for (std::size_t b = 0; b < bases.size(); ++b) {
    out[b].scenario_name = bases[b].name;
    out[b].runs.resize(n);
  }
  // The runs likely to take longest start first (slurm's backfill, then the pod-by-pod
  // kube-scheduler systems; more arrivals before fewer), each worker taking the next one when it is
  // free: the slowest run then overlaps with all the others. Results land by index whatever the
  // order, so the table does not depend on it.
  auto cost = [&](std::size_t i) {
    const policies::SystemModule* system = policies::find_system(names[i % n]);
    const int c = system != nullptr ? system->run_cost : 1;
    return std::pair<int, double>(c, bases[i / n].workload.arrival_scale);
  };
  std::vector<std::size_t> order(scenarios.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });
  std::atomic<std::size_t> next{0};
  // Runs of the same trace read it once (the last run announced takes the import over, so a
  // single run costs what reading it itself would).
  scenarios::TraceCache own;
  scenarios::TraceCache* const shared = traces != nullptr ? traces : &own;
  for (const auto& sc : scenarios) shared->expect(sc.workload);
  const auto workers = std::min<std::size_t>(
      order.size(), static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency())));
  sim::parallel_ranges(workers, 1, [&](std::size_t, std::size_t) {
    for (std::size_t k = next++; k < order.size(); k = next++) {
      const std::size_t i = order[k];
      PolicyRun& run = out[i / n].runs[i % n];
      run.policy = names[i % n];
      if (stop != nullptr && stop->load()) continue;
      try {
        RunOptions ro;
        ro.stop = stop;
        ro.traces = shared;
        if (progress != nullptr) {
          progress->start(i);
          ro.progress = progress->hook(i);
        }
        const RunOutcome o = run_scenario(scenarios[i], ro);
        if (o.cancelled) continue;
        if (!keep_dir.empty()) results::write_hdf5(o.result, kept_run_path(keep_dir, bases[i / n].name, run.policy));
        run.summary = results::summarize(o.result);
        run.fairness = fairness_of(o);
        run.fairness.share_over_time.clear();
        run.by_tenant = stats_by_tenant(o.result);
        run.by_kind = stats_by_kind(o.result);
        for (const auto& w : o.trace.warnings)
          if (auto note = scenarios::run_note(w)) run.notes.push_back(std::move(*note));
        node_rules_of(scenarios[i], o.result, run);
        run.done = true;
      } catch (const sim::Interrupted&) {
        // SIGINT / SIGTERM while its trace was read (sim/interrupt.hpp): cancelled, as at an event.
      } catch (const sim::InputError& e) {
        run.error = e.what();
        run.input_error = std::current_exception();
      } catch (const sim::InputErrors& e) {
        run.error = e.what();
        run.input_error = std::current_exception();
      } catch (const std::exception& e) {
        run.error = e.what();
      }
      if (progress != nullptr) progress->over(i);
    }
  });
  for (auto& r : out)
    for (const auto& run : r.runs) r.cancelled = r.cancelled || (!run.done && run.error.empty());
  return out;
}

std::exception_ptr common_input_error(const CompareResult& result) {
  if (result.runs.empty()) return nullptr;
  for (const auto& run : result.runs)
    if (run.done || !run.input_error || run.error != result.runs.front().error) return nullptr;
  return result.runs.front().input_error;
}

std::string kept_run_path(const std::string& dir, const std::string& scenario, const std::string& policy) {
  std::string name = scenario + "-" + policy;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  return (std::filesystem::path(dir) / (name + ".h5")).string();
}

CompareResult compare(const scenarios::Scenario& base, const std::vector<std::string>& names,
                      const std::atomic<bool>* stop, RunsProgress* progress) {
  return compare_all({base}, names, stop, progress, {}).front();
}

// The first finished run that has inference services, or null.
static const PolicyRun* ref_services(const CompareResult& r) {
  for (const auto& run : r.runs)
    if (run.done && !run.summary.services.empty()) return &run;
  return nullptr;
}

std::vector<std::string> largest_tenants(const CompareResult& r, std::size_t n) {
  std::map<std::string, double> most;  // by name: deterministic, and ties by name below
  for (const auto& run : r.runs) {
    if (!run.done) continue;
    for (const auto& g : run.by_tenant) {
      if (g.jobs == 0) continue;
      auto [it, fresh] = most.emplace(g.name, g.gpu_hours);
      if (!fresh) it->second = std::max(it->second, g.gpu_hours);
    }
  }
  std::vector<std::pair<std::string, double>> order(most.begin(), most.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < order.size() && i < n; ++i) out.push_back(order[i].first);
  return out;
}

// Recovery per outage (docs/drills.md): rows when some run had failures. A recovery time that
// was never reached (a killed job that did not run again) is infinite, shown "never"; not_recovered
// says how many. SLO rows only when a service was measured around a scripted outage.
template <class Row>
void add_recovery_rows(const CompareResult& r, Row& row) {
  using R = const PolicyRun&;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  bool failures = false, slo = false;
  for (const auto& run : r.runs) {
    if (!run.done) continue;
    failures = failures || run.summary.failures.any();
    slo = slo || !run.summary.failures.outage_slo.empty();
  }
  if (failures) {
    auto time = [inf](double v) { return v < 0 ? inf : v; };
    row("outages_with_kills", "count", [](R x) { return x.summary.failures.outages; });
    row("recovery_p50", "s", [time](R x) { return time(x.summary.failures.recovery.p50_s); });
    row("recovery_p95", "s", [time](R x) { return time(x.summary.failures.recovery.p95_s); });
    row("recovery_max", "s", [time](R x) { return time(x.summary.failures.recovery.max_s); });
    row("not_recovered", "count", [](R x) { return x.summary.failures.recovery.not_recovered; });
    row("drill_recovery_max", "s", [time, nan](R x) {
      double worst = x.summary.failures.drills.empty() ? nan : 0.0;
      for (const auto& d : x.summary.failures.drills)
        worst = d.recovery.killed == 0 ? worst : std::max(worst, time(d.recovery.max_s));
      return worst;
    });
    row("gangs_killed", "count", [](R x) { return x.summary.failures.recovery.gangs; });
    row("partial_gangs", "count", [](R x) { return x.summary.failures.recovery.partial_gangs; });
    row("partial_gang_gpu_hours", "GPU-h", [](R x) { return x.summary.failures.recovery.partial_gpu_hours; });
  }
  if (slo) {
    auto at = [nan](double v) { return v < 0 ? nan : v; };
    row("outage_slo_attainment", "fraction", [at](R x) { return at(x.summary.failures.outage_slo_attainment); });
    row("after_outage_slo_attainment", "fraction",
        [at](R x) { return at(x.summary.failures.after_outage_slo_attainment); });
  }
}

results::Table compare_table(const CompareResult& r) {
  results::Table t;
  t.columns.push_back(results::Column{"metric", true, {}, {}});
  t.columns.push_back(results::Column{"unit", true, {}, {}});
  for (const auto& run : r.runs) t.columns.push_back(results::Column{run.policy, false, {}, {}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // One row: the metric's value under each policy (NaN where the run did not finish).
  auto row = [&](const std::string& name, const char* unit, auto value) {
    t.columns[0].strings.push_back(name);
    t.columns[1].strings.push_back(unit);
    for (std::size_t i = 0; i < r.runs.size(); ++i)
      t.columns[i + 2].numbers.push_back(r.runs[i].done ? static_cast<double>(value(r.runs[i])) : nan);
  };
  using R = const PolicyRun&;
  row("jobs", "count", [](R x) { return x.summary.jobs; });
  const char* states[] = {"completed", "failed", "cancelled", "rejected", "unfinished"};
  for (int s = 2; s <= 6; ++s)
    row(states[s - 2], "count", [s](R x) { return x.summary.by_state[static_cast<std::size_t>(s)]; });
  // Jobs that never started (rejected ones aside): the waits below count them censored at the
  // end of the run, so they are lower bounds when this is not 0.
  row("never_started", "count", [](R x) { return x.summary.never_started; });
  row("wait_mean", "s", [](R x) { return x.summary.wait.mean; });
  row("wait_median", "s", [](R x) { return x.summary.wait.median; });
  row("wait_p95", "s", [](R x) { return x.summary.wait.p95; });
  row("wait_p99", "s", [](R x) { return x.summary.wait.p99; });
  row("wait_max", "s", [](R x) { return x.summary.wait.max; });
  row("jct_mean", "s", [](R x) { return x.summary.jct.mean; });
  row("jct_median", "s", [](R x) { return x.summary.jct.median; });
  row("jct_p95", "s", [](R x) { return x.summary.jct.p95; });
  row("gpu_utilization", "fraction", [](R x) { return x.summary.gpu_utilization; });
  row("gpu_busy_utilization", "fraction", [](R x) { return x.summary.gpu_busy_utilization; });
  row("makespan", "s", [](R x) { return x.summary.makespan_s; });
  row("preemptions", "count", [](R x) { return x.summary.preemptions; });
  row("lost_gpu_hours", "GPU-h", [](R x) { return x.summary.lost_gpu_hours; });
  row("held_idle_gpu_hours", "GPU-h", [](R x) { return x.summary.held_idle_gpu_hours; });
  row("starved_jobs", "count", [](R x) { return x.summary.starved_jobs; });
  row("pending_gpus_mean", "GPUs", [](R x) { return x.summary.pending_gpus_mean; });
  row("jain_index", "index", [](R x) { return x.fairness.jain; });
  row("jain_index_mean", "index", [](R x) { return x.fairness.jain_mean; });
  row("rho_max", "ratio", [](R x) { return x.fairness.rho_max; });
  row("rho_mean", "ratio", [](R x) { return x.fairness.rho_mean; });
  row("min_share_ratio", "ratio", [](R x) { return x.fairness.min_share_ratio; });
  row("max_dominant_share", "fraction", [](R x) { return x.fairness.max_dominant_share; });
  row("fragmentation", "fraction", [](R x) { return x.summary.fragmentation; });
  row("fragmented_gpus_mean", "GPUs", [](R x) { return x.summary.fragmented_gpus_mean; });
  // Quota borrowing and reclaim, against each tenant's entitlement (results/fairness.hpp).
  // Not when no scenario sets tenants: an equal 1/N each is no quota anyone set (fairness.hpp).
  bool entitled = false;
  for (const auto& run : r.runs) entitled = entitled || (run.done && run.fairness.entitlements_set);
  if (entitled) {
    row("borrowed_gpu_hours", "GPU-h", [](R x) { return x.fairness.borrowed_gpu_hours; });
    row("borrowing_starts", "count", [](R x) { return x.fairness.borrowing_starts; });
  }
  row("reclaims", "count",
      [nan](R x) { return x.fairness.reclaims < 0 ? nan : static_cast<double>(x.fairness.reclaims); });
  // The permission and failure drills.
  row("denied", "count", [](R x) { return x.summary.denied; });
  row("jobs_killed", "count", [](R x) { return x.summary.failures.jobs_killed; });
  row("failure_lost_gpu_hours", "GPU-h", [](R x) { return x.summary.failures.lost_gpu_hours; });
  bool drills = false, priced = false;
  std::string currency;
  for (const auto& run : r.runs) {
    if (!run.done) continue;
    drills = drills || !run.summary.failures.drill_recovery_s.empty();
    priced = priced || run.summary.priced;
    if (currency.empty()) currency = run.summary.currency;
  }
  if (drills) {
    row("drills_recovered", "count", [](R x) { return x.summary.failures.drills_recovered; });
    row("worst_drill_recovery", "s",
        [nan](R x) { return x.summary.failures.worst_recovery_s < 0 ? nan : x.summary.failures.worst_recovery_s; });
  }
  add_recovery_rows(r, row);
  // A split site (docs/split.md): the boundary's cost and each system's share; only when some run
  // split, so tables without one are unchanged.
  const PolicyRun* split_run = nullptr;
  for (const auto& run : r.runs)
    if (split_run == nullptr && run.done && !run.summary.partitions.empty()) split_run = &run;
  if (split_run != nullptr) {
    row("boundary_idle_gpu_hours", "GPU-h",
        [nan](R x) { return x.summary.partitions.empty() ? nan : x.summary.boundary_idle_gpu_hours; });
    for (const auto& part : split_run->summary.partitions) {
      const std::string name = part.name;
      auto find = [name](R x) -> const results::PartitionSummary* {
        for (const auto& p : x.summary.partitions)
          if (p.name == name) return &p;
        return nullptr;
      };
      row("partition:" + name + ".gpu_utilization", "fraction", [find, nan](R x) {
        const auto* p = find(x);
        return p == nullptr ? nan : p->gpu_utilization;
      });
      row("partition:" + name + ".wait_mean", "s", [find, nan](R x) {
        const auto* p = find(x);
        return p == nullptr ? nan : p->wait.mean;
      });
    }
  }
  if (ref_services(r)) {
    row("slo_attainment", "fraction",
        [nan](R x) { return x.summary.services.empty() ? nan : x.summary.slo_attainment; });
    const auto& first = ref_services(r)->summary.services;
    for (std::size_t k = 0; k < first.size(); ++k) {
      const std::string p = "service:" + first[k].name + ".";
      auto at = [k, nan](R x, auto member) {
        return k < x.summary.services.size() ? static_cast<double>(x.summary.services[k].*member) : nan;
      };
      row(p + "slo_attainment", "fraction", [&](R x) { return at(x, &results::ServiceRecord::time_attainment); });
      row(p + "request_attainment", "fraction",
          [&](R x) { return at(x, &results::ServiceRecord::request_attainment); });
      row(p + "replicas_running_mean", "replicas", [&](R x) { return at(x, &results::ServiceRecord::mean_running); });
    }
  }
  if (priced) {
    // Unit "cost:CURRENCY" (plain "cost" when the scenario names none).
    const std::string unit = currency.empty() ? "cost" : "cost:" + currency;
    row("cost", unit.c_str(), [nan](R x) { return x.summary.priced ? x.summary.cost : nan; });
    row("cost_used", unit.c_str(), [nan](R x) { return x.summary.priced ? x.summary.cost_used : nan; });
    row("cost_per_gpu_hour", unit.c_str(),
        [nan](R x) { return x.summary.priced ? x.summary.cost_per_used_gpu_hour : nan; });
  }

  // Tenants: every tenant with jobs in any finished run, in the order they first appear (the runs
  // in order, each by tenant index), looked up by name in each run (a policy may see the tenants in
  // another order, or one run may lack one: NaN there).
  // Each run's tenants are indexed by name once (the first of a name, as a scan finds it): a scan
  // per tenant, metric and run took most of a compare of 20,000 tenants.
  std::vector<std::string> tenant_names;
  std::unordered_set<std::string_view> named;
  for (const auto& run : r.runs) {
    if (!run.done) continue;
    for (const auto& g : run.by_tenant)
      if (g.jobs > 0 && named.insert(g.name).second) tenant_names.push_back(g.name);
  }
  std::vector<std::unordered_map<std::string_view, const GroupStats*>> groups_of(r.runs.size());
  std::vector<std::unordered_map<std::string_view, const results::TenantFairness*>> fairness_of(r.runs.size());
  if (!tenant_names.empty())
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      for (const auto& g : r.runs[i].by_tenant) groups_of[i].try_emplace(g.name, &g);
      for (const auto& f : r.runs[i].fairness.tenants) fairness_of[i].try_emplace(f.name, &f);
    }
  auto index_of = [&r](R x) { return static_cast<std::size_t>(&x - r.runs.data()); };  // x is one of r.runs
  for (const std::string& name : tenant_names) {
    const std::string p = "tenant:" + name + ".";
    auto group = [&](R x) -> const GroupStats* {
      const auto& by_name = groups_of[index_of(x)];
      const auto it = by_name.find(name);
      return it == by_name.end() ? nullptr : it->second;
    };
    auto fair = [&](R x) -> const results::TenantFairness* {
      const auto& by_name = fairness_of[index_of(x)];
      const auto it = by_name.find(name);
      return it == by_name.end() ? nullptr : it->second;
    };
    auto stat = [&](auto member) {
      return [&group, member, nan](R x) {
        const GroupStats* g = group(x);
        return g == nullptr ? nan : static_cast<double>(g->*member);
      };
    };
    auto fairness = [&](auto member) {
      return [&fair, member, nan](R x) {
        const results::TenantFairness* f = fair(x);
        return f == nullptr ? nan : static_cast<double>(f->*member);
      };
    };
    row(p + "wait_mean", "s", stat(&GroupStats::wait_mean_s));
    row(p + "wait_p95", "s", stat(&GroupStats::wait_p95_s));
    row(p + "jct_mean", "s", stat(&GroupStats::jct_mean_s));
    row(p + "jct_p95", "s", stat(&GroupStats::jct_p95_s));
    row(p + "gpu_hours", "GPU-h", stat(&GroupStats::gpu_hours));
    row(p + "rejected", "count", stat(&GroupStats::rejected));
    row(p + "never_started", "count", stat(&GroupStats::never_started));
    row(p + "share", "fraction", fairness(&results::TenantFairness::share));
    row(p + "rho", "ratio", fairness(&results::TenantFairness::rho));
    if (entitled) row(p + "borrowed_gpu_hours", "GPU-h", fairness(&results::TenantFairness::borrowed_gpu_hours));
    row(p + "reclaimed", "count", [&fair, nan](R x) {
      const results::TenantFairness* f = fair(x);
      return f == nullptr || f->reclaimed < 0 ? nan : static_cast<double>(f->reclaimed);
    });
  }
  // Job kinds: every policy sees the same workload, so the first finished run's kinds.
  const PolicyRun* ref = nullptr;
  for (const auto& run : r.runs)
    if (run.done && ref == nullptr) ref = &run;
  if (ref != nullptr) {
    for (std::size_t k = 0; k < ref->by_kind.size(); ++k) {
      if (ref->by_kind[k].jobs == 0) continue;
      const std::string p = "kind:" + ref->by_kind[k].name + ".";
      auto at = [k](R x) -> const GroupStats& { return x.by_kind[k]; };
      row(p + "jobs", "count", [&](R x) { return at(x).jobs; });
      row(p + "never_started", "count", [&](R x) { return at(x).never_started; });
      row(p + "wait_mean", "s", [&](R x) { return at(x).wait_mean_s; });
      row(p + "wait_p95", "s", [&](R x) { return at(x).wait_p95_s; });
      row(p + "jct_mean", "s", [&](R x) { return at(x).jct_mean_s; });
      row(p + "jct_p95", "s", [&](R x) { return at(x).jct_p95_s; });
    }
  }
  t.attributes["scenario_name"] = r.scenario_name;
  t.attributes["version"] = version_string();
  return t;
}

}  // namespace headroom::planner
