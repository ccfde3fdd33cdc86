#include "planner/calibrate.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "planner/run.hpp"
#include "policies/common/calibration.hpp"
#include "policies/registry.hpp"
#include "policies/system_module.hpp"
#include "results/recorder.hpp"
#include "results/summary.hpp"
#include "scenarios/run_options.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/parallel.hpp"
#include "sim/text.hpp"
#include "simulation/simulation.hpp"

namespace headroom::planner {

namespace {

// The calibration hooks of the system a candidate names (nullptr: the fifo + EASY family).
const policies::Calibration* calibration_of(const std::string& policy) {
  const policies::SystemModule* system = policies::find_system(policy);
  return system != nullptr ? system->calibration : nullptr;
}

scenarios::Scenario with_candidate(const scenarios::Scenario& base, const Candidate& c) {
  scenarios::Scenario s = base;
  if (c.prime_time.enabled()) s.prime_time = c.prime_time;
  if (c.as_given_policy) return s;
  // A candidate of the scenario's own system is set over the scenario's configuration, less the
  // keys searched; any other replaces it.
  if (const policies::Calibration* cal = calibration_of(c.policy); cal != nullptr && base.policy.name == c.policy) {
    std::erase_if(s.policy.params, [&](const auto& kv) { return cal->searched(kv.first); });
  } else {
    s.policy.params.clear();
  }
  s.policy.name = c.policy;
  s.policy_overrides.clear();
  int line = 1;
  for (const auto& [k, v] : c.params) s.policy.params[k] = policies::ParamValue{v, base.file, line++, 1};
  if (c.nodes > 0 && !s.cluster.pools.empty()) s.cluster.pools[0].nodes = c.nodes;
  return s;
}

// The jobs of `all` submitted in [from, to), with its name tables.
models::Workload span_of(const models::Workload& all, sim::Tick from, sim::Tick to) {
  models::Workload w;
  w.tenants = all.tenants;
  w.queues = all.queues;
  w.groups = all.groups;
  w.qos = all.qos;
  w.gpu_type_names = all.gpu_type_names;
  w.node_sets = all.node_sets;
  w.meta = all.meta;
  const auto lo = std::lower_bound(all.jobs.begin(), all.jobs.end(), from,
                                   [](const models::Job& j, sim::Tick t) { return j.submit < t; });
  for (auto it = lo; it != all.jobs.end() && it->submit < to; ++it) w.jobs.push_back(*it);
  return w;
}

// One run's figures on its scored window.
struct Scored {
  results::FidelityStats stats;
  sim::Tick longest_sim = 0;  // the longest simulated wait of a scored job (censored: to the run's end)
  WaitFigures all;            // the longest and the mean over every job submitted in the window (simulated_waits)
};

// The trace read once (scenarios::build_workload, from the calibration's cache, which the window
// check read it into): every run replays the jobs submitted in its span of it. A scenario that
// scales arrivals or adds services builds each run's workload itself (their draws and replicas
// depend on the whole window), from the same import of the trace.
class Replayer {
 public:
  Replayer(const scenarios::Scenario& base, scenarios::TraceCache& traces)
      : traces_(traces), all_(read_all(base, traces)), shared_(plain(base) && sorted(all_)) {
    // The windows (span_of) need submit order; a run of a workload that was not in it builds its own.
    std::stable_sort(all_.jobs.begin(), all_.jobs.end(),
                     [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; });
  }

  const models::Workload& all() const { return all_; }

  // Replays the jobs submitted in [replay_from, to) under `s` and scores those submitted in [from, to).
  Scored score(const scenarios::Scenario& s, sim::Tick replay_from, sim::Tick from, sim::Tick to,
               const RunOptions& options) const {
    results::RunResult r;
    if (shared_) {
      const models::Workload w = span_of(all_, replay_from, to);
      auto policy = policies::make_policy(s.policy.name, s.policy.params, s.seed);
      results::Recorder recorder(w, s.cluster, false);
      simulation::Simulation simulation(w, s.cluster, *policy, &recorder, scenarios::simulation_options(s, w));
      const simulation::SimulationStats stats = simulation.run(options.stop);
      r = std::move(recorder.result());
      r.sim_start = stats.start;
      r.sim_end = stats.end;
    } else {
      scenarios::Scenario t = s;
      t.workload.window_start = std::max(t.workload.window_start, replay_from);
      t.workload.window_end = std::min(t.workload.window_end, to);
      t.output.events = false;
      RunOptions o = options;
      o.traces = &traces_;  // the trace read once for all these runs
      r = run_scenario(t, o).result;
    }
    Scored out;
    out.stats = results::compute_fidelity(r, from, to).all;
    for (const auto& j : r.jobs)
      if (j.submit >= from && j.submit < to && j.trace_start >= 0 && !(j.state == kRejectedState && j.start < 0))
        out.longest_sim = std::max(out.longest_sim, results::headline_wait(j, r.sim_end));
    out.all = simulated_waits(r, from, to);
    return out;
  }

 private:
  static constexpr std::uint8_t kRejectedState = static_cast<std::uint8_t>(models::JobState::Rejected);
  static bool plain(const scenarios::Scenario& base) {
    return base.workload.arrival_scale == 1.0 && base.services.empty();
  }
  static bool sorted(const models::Workload& w) {
    return std::is_sorted(w.jobs.begin(), w.jobs.end(),
                          [](const auto& a, const auto& b) { return a.submit < b.submit; });
  }
  // A plain scenario's runs replay spans of all_ alone: the cache's import is taken over (one run
  // announced), not kept beside it. The others' runs read the cache again: it keeps the import.
  static models::Workload read_all(const scenarios::Scenario& base, scenarios::TraceCache& traces) {
    if (!plain(base)) return scenarios::build_workload(base, &traces, false);
    traces.expect(base.workload);
    return scenarios::build_workload(base, &traces);
  }
  scenarios::TraceCache& traces_;  // without shared_: the runs' trace, imported once
  models::Workload all_;
  bool shared_ = false;
};

}  // namespace

std::int64_t recorded_queue_depth(const models::Workload& w) {
  // Jobs with a recorded start in submit order (ties by index); a Fenwick tree counts those
  // waiting, swept over submits and starts in time order (a start before a submit at one time).
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (w.jobs[i].trace_start >= 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return w.jobs[a].submit < w.jobs[b].submit; });
  const std::size_t n = order.size();
  std::vector<std::int64_t> tree(n + 1, 0);
  const auto add = [&](std::size_t i, std::int64_t d) {
    for (++i; i <= n; i += i & (~i + 1)) tree[i] += d;
  };
  const auto before = [&](std::size_t i) {  // waiting among ranks [0, i)
    std::int64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += tree[i];
    return s;
  };
  struct Ev {
    sim::Tick t;
    int kind;  // 0 start, 1 submit
    std::size_t rank;
  };
  std::vector<Ev> ev;
  ev.reserve(2 * n);
  for (std::size_t r = 0; r < n; ++r) {
    const auto& j = w.jobs[order[r]];
    ev.push_back({j.submit, 1, r});
    ev.push_back({std::max(j.trace_start, j.submit), 0, r});
  }
  std::sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.kind != b.kind ? a.kind > b.kind : a.rank < b.rank;
  });
  std::int64_t deepest = 0;
  for (const Ev& e : ev) {
    if (e.kind == 1) {
      add(e.rank, 1);
    } else {
      deepest = std::max(deepest, before(e.rank));
      add(e.rank, -1);
    }
  }
  return deepest;
}

namespace {

// Adds up waits into their WaitFigures.
struct WaitSum {
  sim::Tick longest = 0, sum = 0, n = 0;
  void add(sim::Tick wait) {
    longest = std::max(longest, wait);
    sum += wait;
    ++n;
  }
  WaitFigures figures() const { return {longest, n == 0 ? 0 : sum / n}; }
};

}  // namespace

WaitFigures recorded_waits(const models::Workload& w, sim::Tick from, sim::Tick to) {
  WaitSum waits;
  for (const auto& j : w.jobs)
    if (j.submit >= from && j.submit < to && j.trace_start >= 0) waits.add(j.trace_start - j.submit);
  return waits.figures();
}

WaitFigures simulated_waits(const results::RunResult& r, sim::Tick from, sim::Tick to) {
  WaitSum waits;
  for (const auto& j : r.jobs)
    if (j.submit >= from && j.submit < to) waits.add(results::headline_wait(j, r.sim_end));
  return waits.figures();
}

std::size_t choose_held_out(std::vector<CandidateScore>& candidates, CalibrateObjective objective,
                            const HeldOutBar& bar, const std::function<HeldOutRun(std::size_t)>& replay,
                            std::vector<HeldOutRefusal>& refused, HeldOutRun& kept) {
  // Each refusal takes one rule out of those that passed: at most as many replays as rules.
  for (;;) {
    const std::size_t pick = choose_candidate(candidates, objective);
    if (pick >= candidates.size()) return pick;
    HeldOutRun run = replay(pick);
    if (run.longest <= bar.bar() && run.mean <= bar.mean_bar()) {
      kept = std::move(run);
      return pick;
    }
    candidates[pick].passed = false;
    candidates[pick].refused = true;
    refused.push_back({candidates[pick].candidate.label, run.longest, run.stats, run.mean});
  }
}

std::pair<sim::Tick, sim::Tick> parse_span(const std::string& text, const std::string& option) {
  const auto colon = text.find(':');
  const auto bad = [&] {
    return sim::InputError("", 0, 0, option, "expected FROM:TO durations such as 0:7d, got \"" + text + "\"");
  };
  if (colon == std::string::npos) throw bad();
  const auto from = sim::parse_duration(text.substr(0, colon));
  const auto to = sim::parse_duration(text.substr(colon + 1));
  if (!from || !to || *from < 0) throw bad();
  if (*to <= *from)
    throw sim::InputError("", 0, 0, option, "the window ends before it starts: \"" + text + "\" (expected FROM < TO)");
  return {*from, *to};
}

double calibration_objective(const results::FidelityStats& s, CalibrateObjective objective) {
  switch (objective) {
    case CalibrateObjective::MeanError: return s.mean_abs_error_s;
    case CalibrateObjective::Pearson: return -s.pearson;
    case CalibrateObjective::MedianError: break;
  }
  return s.median_abs_error_s;
}

CalibrateFamily resolve_family(CalibrateFamily family, const scenarios::Scenario& scenario) {
  if (family != CalibrateFamily::Auto) return family;
  return calibration_of(scenario.policy.name) != nullptr ? CalibrateFamily::System : CalibrateFamily::Easy;
}

namespace {

// The system's own knobs (SystemModule::calibration), on top of the scenario's configuration of
// that system when it is the scenario's policy.
std::vector<Candidate> system_candidates(const std::string& system, const traces::Inference& fit,
                                         const scenarios::Scenario& scenario, const std::vector<std::int32_t>& sizes,
                                         std::int64_t queue_depth) {
  const policies::Calibration* cal = calibration_of(system);
  if (cal == nullptr)
    throw sim::InputError("", 0, 0, "--scheduler", "policy \"" + system + "\" has no calibration knobs");
  policies::CalibrationInput in;
  for (const auto& u : fit.users) in.users.push_back({u.name, u.max_jobs, u.max_gpus, u.largest_job, u.jobs});
  for (const auto& q : fit.queues) in.queues.push_back({q.name, q.jobs, q.median_wait_s});
  in.recorded_scheduler = fit.scheduler;
  in.queue_depth = queue_depth;
  in.sizes = sizes;
  if (scenario.policy.name == system) in.own = &scenario.policy.params;
  std::vector<Candidate> out;
  for (auto& c : cal->candidates(in)) {
    Candidate x;
    x.policy = system;
    x.label = std::move(c.label);
    x.params = std::move(c.params);
    x.nodes = c.nodes;
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

std::vector<Candidate> calibration_candidates(const traces::Inference& fit, const scenarios::Scenario& scenario,
                                              CalibrateFamily family, std::int64_t queue_depth,
                                              const std::string& system) {
  // The cluster keeps its size: a fit window that never filled it says nothing about the nodes a
  // later window has (shrinking it to the nodes kept busy lost up to 4 h of mean error on HPC2N's
  // held-out windows, issue #33). Idle capacity while jobs waited is reported instead
  // (LogFindings: outage / reservation candidates).
  const std::vector<std::int32_t> sizes{-1};
  // Prime time the recorded starts show, on the scenario as given (unless it has its own).
  std::vector<Candidate> prime;
  if (fit.prime_time.enabled() && !scenario.prime_time.enabled()) {
    Candidate c;
    c.policy = scenario.policy.name;
    c.label = "as given, with the prime time the recorded starts show";
    c.as_given_policy = true;
    c.prime_time = fit.prime_time;
    prime.push_back(std::move(c));
  }
  if (resolve_family(family, scenario) == CalibrateFamily::System) {
    auto out = system_candidates(system.empty() ? scenario.policy.name : system, fit, scenario, sizes, queue_depth);
    out.insert(out.end(), prime.begin(), prime.end());
    return out;
  }
  std::vector<std::string> backfills{"none", "easy"};
  if (fit.scheduler == "easy") backfills = {"easy"};
  if (fit.scheduler == "fcfs") backfills = {"none"};
  std::int64_t gpu_hi = 0, job_hi = 0, biggest = 0;
  for (const auto& u : fit.users) {
    gpu_hi = std::max(gpu_hi, u.max_gpus);
    job_hi = std::max<std::int64_t>(job_hi, u.max_jobs);
    biggest = std::max(biggest, u.largest_job);
  }
  // The rules of policies/slurm/calibration.cpp in the terms of policies/baselines/easy.hpp: a cap
  // for everyone at a share of the most one user reached (never below the largest job), and
  // per-user limits with headroom for users seen often enough; others have no limit.
  using Params = std::vector<std::pair<std::string, std::string>>;
  std::vector<std::pair<std::string, Params>> limits{{"no limits", {}}};
  std::vector<Params> seen{{}};
  const auto add = [&](std::string label, Params p) {
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) return;
    seen.push_back(p);
    limits.push_back({std::move(label), std::move(p)});
  };
  for (const policies::Share& share : policies::kCapShares) {
    if (gpu_hi <= 0) break;
    const std::int64_t g = std::max(policies::scaled_share(gpu_hi, share.num, share.den), biggest);
    add(std::string("MaxGPUsPerUser at ") + share.text + " the most one user held",
        {{"MaxGPUsPerUser", std::to_string(g)}});
  }
  for (const policies::Share& share : policies::kCapShares) {
    if (job_hi <= 0) break;
    add(std::string("MaxJobsPerUser at ") + share.text + " the most one user ran",
        {{"MaxJobsPerUser", std::to_string(policies::scaled_share(job_hi, share.num, share.den))}});
  }
  const std::string often = " (users with " + std::to_string(policies::kMinJobsForUserLimit) + "+ jobs)";
  for (const bool jobs_too : {false, true}) {
    for (const policies::Headroom& h : policies::kUserHeadroom) {
      if (jobs_too && h.num != 2 * h.den) continue;
      Params p;
      for (const auto& u : fit.users) {
        if (u.jobs < policies::kMinJobsForUserLimit) continue;
        p.emplace_back("users." + u.name + ".MaxGPUs",
                       std::to_string(std::max(policies::scaled_share(u.max_gpus, h.num, h.den), u.largest_job)));
        if (jobs_too)
          p.emplace_back("users." + u.name + ".MaxJobs",
                         std::to_string(policies::scaled_share(u.max_jobs, h.num, h.den)));
      }
      if (p.empty()) continue;
      add(std::string("per-user GPUs") + (jobs_too ? " + jobs" : "") + " at " + h.text + " what each reached" + often,
          std::move(p));
    }
  }
  std::vector<Candidate> out;
  for (const std::int32_t nodes : sizes)
    for (const auto& bf : backfills)
      for (const auto& [label, params] : limits) {
        Candidate c;
        c.label = (bf == "easy" ? "EASY backfill, " : "no backfill, ") + label;
        if (nodes > 0) c.label += ", as many nodes as the fit window kept busy";
        c.nodes = nodes;
        c.params.emplace_back("placement", "consolidate");
        if (bf == "easy") c.params.emplace_back("backfill", "easy");
        c.params.insert(c.params.end(), params.begin(), params.end());
        out.push_back(std::move(c));
      }
  out.insert(out.end(), prime.begin(), prime.end());
  return out;
}

std::size_t choose_candidate(const std::vector<CandidateScore>& candidates, CalibrateObjective objective) {
  const std::size_t none = candidates.size();
  std::size_t best = none;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].passed && (best == none || candidates[i].objective < candidates[best].objective)) best = i;
  if (best == none) return none;
  // Near ties: within kMeanErrorBand of the best (relative for the errors, absolute for Pearson).
  const double top = candidates[best].objective;
  const double band = objective == CalibrateObjective::Pearson ? top + kMeanErrorBand : top * (1 + kMeanErrorBand);
  std::size_t pick = best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& a = candidates[i];
    const auto& b = candidates[pick];
    if (!a.passed || a.objective > band || i == pick) continue;
    const std::size_t pa = a.candidate.parameters(), pb = b.candidate.parameters();
    const double ma = a.fit.median_abs_error_s, mb = b.fit.median_abs_error_s;
    const bool better = pa != pb                         ? pa < pb
                        : ma != mb                       ? ma < mb
                        : a.fit.pearson != b.fit.pearson ? a.fit.pearson > b.fit.pearson
                        : a.objective != b.objective     ? a.objective < b.objective
                                                         : i < pick;
    if (better) pick = i;
  }
  return pick;
}

void judge_candidate(CandidateScore& c, const std::vector<results::FidelityStats>& baseline_folds,
                     CalibrateObjective objective) {
  c.wins = 0;
  int counted = 0, offered = 0;
  double sum = 0, base_sum = 0, pearson = 0, base_pearson = 0;
  for (std::size_t k = 0; k < baseline_folds.size(); ++k) {
    if (baseline_folds[k].jobs == 0) continue;  // a fold without jobs says nothing
    ++counted;
    if (k >= c.folds.size() || c.folds[k].jobs == 0) continue;  // not offered: lost
    ++offered;
    const double o = calibration_objective(c.folds[k], objective);
    const double b = calibration_objective(baseline_folds[k], objective);
    sum += o;
    base_sum += b;
    pearson += c.folds[k].pearson;
    base_pearson += baseline_folds[k].pearson;
    c.wins += o < b;
  }
  c.objective = offered > 0 ? sum / offered : 0;
  // Most folds, and the mean better by kPassMargin of the baseline's (for Pearson: by that much
  // absolute); the folds' mean Pearson no more than kPearsonSlack below the baseline's.
  const double margin =
      objective == CalibrateObjective::Pearson ? kPassMargin * offered : kPassMargin * std::abs(base_sum);
  c.passed = offered > 0 && !c.suspect && 2 * c.wins > counted && sum < base_sum - margin &&
             pearson >= base_pearson - kPearsonSlack * offered;
}

LogFindings log_findings(const models::Workload& w, std::int64_t cluster_gpus, sim::Tick from, sim::Tick to) {
  LogFindings f;
  f.cluster_gpus = cluster_gpus;
  // Recorded use: +gpus at each recorded start, -gpus at its end; and the jobs waiting (submitted,
  // not yet started) by size. Over every job of the log (a job submitted before the window may
  // run in it), sampled in [from, to) only.
  struct Ev {
    sim::Tick t;
    int order;  // 0 end, 1 start, 2 submit, 3 wait over
    std::int64_t gpus;
  };
  std::vector<Ev> ev;
  for (const auto& j : w.jobs) {
    const bool in = j.submit >= from && j.submit < to;
    if (in && j.walltime > 0) {
      ++f.with_limit;
      // A limit the loader raised to the run time (the log's system did not enforce it) was still
      // run past in the log.
      f.past_limit += j.runtime > j.walltime || j.walltime_raised;
      f.raised_limit += j.walltime_raised;
    }
    if (j.trace_start < 0 || j.trace_start >= to || j.trace_start + std::max<sim::Tick>(j.runtime, 0) < from) continue;
    const std::int64_t g = std::max<std::int64_t>(j.gpus, 0);
    ev.push_back({j.trace_start, 1, g});
    ev.push_back({j.trace_start + std::max<sim::Tick>(j.runtime, 0), 0, g});
    if (j.trace_start > j.submit) {
      ev.push_back({j.submit, 2, g});
      ev.push_back({j.trace_start, 3, g});
    }
  }
  std::sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.order != b.order ? a.order < b.order : a.gpus < b.gpus;
  });
  std::int64_t in_use = 0;
  std::multiset<std::int64_t> waiting;
  // Sampled each hour (the state after every event up to that time): in use below 80 % of the
  // cluster while the smallest waiting job would fit in the idle GPUs.
  const sim::Tick step = sim::kHour;
  sim::Tick next = (std::max<sim::Tick>(from, 0) + step - 1) / step * step;
  LogFindings::Gap open{-1, -1, 0};
  const auto close = [&] {
    if (open.from >= 0 && open.to - open.from >= 6 * sim::kHour) f.gaps.push_back(open);
    open = {-1, -1, 0};
  };
  const auto sample_until = [&](sim::Tick t) {  // samples before t
    for (; cluster_gpus > 0 && next < t && next < to; next += step) {
      const std::int64_t idle = cluster_gpus - in_use;
      if (5 * in_use < 4 * cluster_gpus && !waiting.empty() && *waiting.begin() <= idle) {
        if (open.from < 0) open = {next, next, idle};
        open.to = next + step;
        open.idle_gpus = std::min(open.idle_gpus, idle);
      } else {
        close();
      }
    }
  };
  for (const Ev& e : ev) {
    sample_until(e.t);
    switch (e.order) {
      case 0: in_use -= e.gpus; break;
      case 1:
        in_use += e.gpus;
        if (in_use > f.max_in_use && e.t >= from) f.max_in_use = in_use, f.max_in_use_at = e.t;
        break;
      case 2: waiting.insert(e.gpus); break;
      default: waiting.erase(waiting.find(e.gpus)); break;
    }
  }
  sample_until(to);
  close();
  return f;
}

namespace {

// "7d", "12h", "90m", "45s", "1.5s": as --fit and --test are written.
std::string short_time(sim::Tick t) {
  if (t % sim::kSecond != 0) return sim::format_duration(t);
  const std::int64_t s = t / sim::kSecond;
  if (s != 0 && s % 86400 == 0) return std::to_string(s / 86400) + "d";
  if (s != 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s != 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace

void check_windows(const CalibrateRequest& req, scenarios::TraceCache* traces) {
  const auto span = [](sim::Tick from, sim::Tick to) { return short_time(from) + ":" + short_time(to); };
  const std::string fit = span(req.fit_from, req.fit_to), test = span(req.test_from, req.test_to);
  // A test window that shares time with the fit window is not held out: its jobs were fitted.
  if (req.test_from < req.fit_to && req.fit_from < req.test_to) {
    const bool same = req.test_from == req.fit_from && req.test_to == req.fit_to;
    throw sim::InputError("", 0, 0, "--test",
                          "the test window " + test + (same ? " equals" : " overlaps") + " the fit window " + fit +
                              "; a held-out window must not share time with it (e.g. --fit 0:7d --test 7d:14d)");
  }
  const models::Workload w = scenarios::build_workload(req.scenario, traces, false);
  std::int64_t in_fit = 0, in_test = 0;
  sim::Tick first = sim::kNever, last = -1;
  for (const auto& j : w.jobs) {
    in_fit += j.submit >= req.fit_from && j.submit < req.fit_to;
    in_test += j.submit >= req.test_from && j.submit < req.test_to;
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  // Where the jobs are, in the whole days the options take, with a 28-day fit and 14-day test
  // window that holds jobs when the log spans them (a cleaned log may start weeks in).
  const auto where = [&] {
    std::string text = " (its jobs are submitted from " + short_time(first) + " to " + short_time(last);
    const std::int64_t day0 = (first + sim::kDay - 1) / sim::kDay, day_last = last / sim::kDay;
    if (day0 >= 1 && day0 + 42 <= day_last)
      text += ", days " + std::to_string(day0) + " to " + std::to_string(day_last) + ": e.g. --fit " +
              std::to_string(day0) + "d:" + std::to_string(day0 + 28) + "d --test " + std::to_string(day0 + 28) +
              "d:" + std::to_string(day0 + 42) + "d";
    return text + ")";
  };
  const auto none = [&](const char* option, const char* which, const std::string& window) {
    return sim::InputError("", 0, 0, option,
                           std::string("the ") + which + " window " + window + " holds no job of " +
                               req.scenario.workload.trace +
                               (w.jobs.empty() ? std::string(" (it has none)") : where()));
  };
  if (in_fit == 0) throw none("--fit", "fit", fit);
  if (in_test == 0) throw none("--test", "test", test);
}

namespace {

// Everything calibrate runs for one fit / test pair, planned before any run.
struct PairPlan {
  CalibratePair windows;
  std::vector<sim::Tick> edges;                    // inner folds: fold k scores [edges[k+1], edges[k+2])
  std::vector<std::vector<Candidate>> fold_cands;  // the rules learned on [edges[0], edges[k+1])
  std::vector<sim::Tick> longest_recorded;         // per fold: the longest recorded wait up to its end
  std::vector<Candidate> cands;                    // the rules learned on the whole fit window
  traces::Inference inference;
  std::int64_t queue_depth = 0;
};

struct Learned {
  traces::Inference inference;
  std::int64_t queue_depth = 0;
  std::vector<Candidate> cands;
};

Learned learn(const CalibrateRequest& req, const models::Workload& all, sim::Tick from, sim::Tick to) {
  const scenarios::Scenario& base = req.scenario;
  Learned l;
  const models::Workload w = span_of(all, from, to);
  l.queue_depth = recorded_queue_depth(w);
  l.inference = traces::infer_system(w, sim::kDay, base.workload.units_per_gpu,
                                     w.meta.format == "swf" ? base.workload.trace : std::string());
  if (l.inference.recorded > 0)
    l.cands = calibration_candidates(l.inference, base, req.family, l.queue_depth, req.system);
  return l;
}

bool holds_jobs(const models::Workload& all, sim::Tick from, sim::Tick to) {
  const auto lo = std::lower_bound(all.jobs.begin(), all.jobs.end(), from,
                                   [](const models::Job& j, sim::Tick t) { return j.submit < t; });
  return lo != all.jobs.end() && lo->submit < to;
}

// Each figure's mean over `v` (jobs and never_started: summed); folds without jobs are left out.
results::FidelityStats mean_stats(const std::vector<results::FidelityStats>& v) {
  results::FidelityStats m;
  int n = 0;
  for (const auto& s : v) {
    if (s.jobs == 0) continue;
    ++n;
    m.jobs += s.jobs;
    m.never_started += s.never_started;
    m.mean_abs_error_s += s.mean_abs_error_s;
    m.median_abs_error_s += s.median_abs_error_s;
    m.mean_wait_sim_s += s.mean_wait_sim_s;
    m.mean_wait_recorded_s += s.mean_wait_recorded_s;
    m.pearson += s.pearson;
    m.spearman += s.spearman;
    m.within_10m += s.within_10m;
    m.within_1h += s.within_1h;
  }
  if (n == 0) return m;
  for (double* d : {&m.mean_abs_error_s, &m.median_abs_error_s, &m.mean_wait_sim_s, &m.mean_wait_recorded_s, &m.pearson,
                    &m.spearman, &m.within_10m, &m.within_1h})
    *d /= n;
  return m;
}

}  // namespace

CalibrateResult calibrate(const CalibrateRequest& req) {
  CalibrateResult r;
  const scenarios::Scenario& base = req.scenario;
  if (req.inner_folds < 1 || req.inner_folds > 12)
    throw sim::InputError("", 0, 0, "--inner-folds", "expected 1 to 12, got " + std::to_string(req.inner_folds));
  if (req.outer_folds < 1 || req.outer_folds > 500)
    throw sim::InputError("", 0, 0, "--folds", "expected 1 to 500, got " + std::to_string(req.outer_folds));
  if (req.warmup < 0) throw sim::InputError("", 0, 0, "--warmup", "expected a duration >= 0");
  // One import of the trace for the check and every run (a trace read from a pipe can be read once).
  scenarios::TraceCache traces;
  check_windows(req, &traces);  // before any run
  r.baseline_policy = base.policy.name;
  const Replayer replayer(base, traces);
  const models::Workload& all = replayer.all();

  // The pairs: the windows given, then shifted by the test window's length while both hold jobs.
  const sim::Tick shift = req.test_to - req.test_from;
  const int folds = req.inner_folds;
  std::vector<PairPlan> plans;
  for (int p = 0; p < req.outer_folds; ++p) {
    PairPlan plan;
    const sim::Tick d = p * shift;
    plan.windows = {req.fit_from + d, req.fit_to + d, req.test_from + d, req.test_to + d, "", {}, {}, {}, 0, 0, {}};
    const auto& w = plan.windows;
    if (p > 0 && (!holds_jobs(all, w.fit_from, w.fit_to) || !holds_jobs(all, w.test_from, w.test_to))) break;
    const sim::Tick part = (w.fit_to - w.fit_from) / (folds + 1);
    if (part <= 0) throw sim::InputError("", 0, 0, "--fit", "the fit window is too short for its inner folds");
    for (int k = 0; k <= folds + 1; ++k) plan.edges.push_back(k == folds + 1 ? w.fit_to : w.fit_from + k * part);
    Learned whole = learn(req, all, w.fit_from, w.fit_to);
    if (whole.inference.recorded == 0)
      throw sim::InputError(base.workload.trace, 0, 0, "workload.trace",
                            "no job of the fit window has a recorded start: nothing to calibrate against "
                            "(the log has no wait times)");
    for (int k = 0; k < folds; ++k) {
      // Only the rules the whole fit window offers can be chosen: the folds run those alone.
      std::vector<Candidate> cands = learn(req, all, w.fit_from, plan.edges[k + 1]).cands;
      std::erase_if(cands, [&](const Candidate& c) {
        return std::none_of(whole.cands.begin(), whole.cands.end(),
                            [&](const Candidate& x) { return x.label == c.label; });
      });
      plan.fold_cands.push_back(std::move(cands));
      plan.longest_recorded.push_back(recorded_waits(all, w.fit_from, plan.edges[k + 2]).longest);
    }
    plan.inference = std::move(whole.inference);
    plan.queue_depth = whole.queue_depth;
    plan.cands = std::move(whole.cands);
    plans.push_back(std::move(plan));
  }

  // Runs: per pair, per inner fold the baseline and every rule learned before it, and the baseline
  // on the held-out window; then each pair's chosen rule on its held-out window.
  struct RunSpec {
    std::size_t pair;
    int fold;               // -1: the held-out test window
    const Candidate* cand;  // nullptr: the baseline
  };
  std::vector<RunSpec> specs;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (int k = 0; k < folds; ++k) {
      specs.push_back({p, k, nullptr});
      for (const auto& c : plans[p].fold_cands[k]) specs.push_back({p, k, &c});
    }
    specs.push_back({p, -1, nullptr});
  }
  // One held-out run of a chosen rule per pair; each rule the held-out guard refuses adds one.
  std::atomic<std::size_t> total{specs.size() + plans.size()};
  std::atomic<std::size_t> done{0};
  RunOptions ro;
  ro.stop = req.stop;
  const auto tick = [&] {
    const std::size_t d = ++done;
    if (req.progress) req.progress(d, total.load());
  };
  const auto span = [&](const PairPlan& plan, int fold) {
    return fold < 0 ? std::make_pair(plan.windows.test_from, plan.windows.test_to)
                    : std::make_pair(plan.edges[fold + 1], plan.edges[fold + 2]);
  };
  // The costliest runs first (the held-out windows, the last folds): the pool ends together.
  std::vector<std::size_t> order(specs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return specs[a].fold < 0 && specs[b].fold >= 0; });
  std::vector<Scored> scored(specs.size());
  sim::parallel_indices(specs.size(), [&](std::size_t n) {
    if (req.stop != nullptr && req.stop->load()) return;
    const RunSpec& sp = specs[order[n]];
    const auto [from, to] = span(plans[sp.pair], sp.fold);
    const scenarios::Scenario s = sp.cand != nullptr ? with_candidate(base, *sp.cand) : base;
    scored[order[n]] = replayer.score(s, std::max<sim::Tick>(0, from - req.warmup), from, to, ro);
    tick();
  });
  if (req.stop != nullptr && req.stop->load()) {
    r.cancelled = true;
    return r;
  }

  // Judge every rule of each pair on its inner folds and choose.
  struct Judged {
    std::vector<CandidateScore> candidates;
    std::vector<results::FidelityStats> baseline_folds;
    results::FidelityStats baseline_test;
    WaitFigures baseline_test_waits;  // Scored::all of the baseline on the test window
    std::size_t best = 0;
  };
  std::vector<Judged> judged(plans.size());
  std::size_t at = 0;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    Judged& jd = judged[p];
    const PairPlan& plan = plans[p];
    std::vector<std::vector<Scored>> by_fold(folds);
    std::vector<Scored> base_fold(folds);
    for (int k = 0; k < folds; ++k) {
      base_fold[k] = scored[at++];
      jd.baseline_folds.push_back(base_fold[k].stats);
      for (std::size_t i = 0; i < plan.fold_cands[k].size(); ++i) by_fold[k].push_back(scored[at++]);
    }
    jd.baseline_test = scored[at].stats;
    jd.baseline_test_waits = scored[at++].all;
    for (const Candidate& c : plan.cands) {
      CandidateScore cs;
      cs.candidate = c;
      cs.folds.resize(folds);
      for (int k = 0; k < folds; ++k) {
        const auto& fc = plan.fold_cands[k];
        const auto it = std::find_if(fc.begin(), fc.end(), [&](const Candidate& x) { return x.label == c.label; });
        if (it == fc.end()) continue;
        const Scored& sc = by_fold[k][static_cast<std::size_t>(it - fc.begin())];
        cs.folds[k] = sc.stats;
        if (sc.longest_sim > std::max(plan.longest_recorded[k], base_fold[k].longest_sim)) cs.suspect = true;
      }
      cs.fit = mean_stats(cs.folds);
      judge_candidate(cs, jd.baseline_folds, req.objective);
      jd.candidates.push_back(std::move(cs));
    }
    jd.best = choose_candidate(jd.candidates, req.objective);
  }

  // Each pair's chosen rule, learned on its whole fit window, on its held-out window, under the
  // held-out guard (choose_held_out): a rule that holds a test-window job longer than the bar is
  // refused and the next one that passed is replayed. Pairs in parallel, each in its own order.
  std::vector<results::FidelityStats> chosen_test(plans.size());
  std::vector<HeldOutBar> bars(plans.size());
  std::vector<std::vector<HeldOutRefusal>> refusals(plans.size());
  std::vector<std::size_t> held_out_runs(plans.size(), 0);
  std::vector<sim::Tick> kept_longest(plans.size(), 0), kept_mean(plans.size(), 0);
  sim::parallel_indices(plans.size(), [&](std::size_t p) {
    if (req.stop != nullptr && req.stop->load()) return;
    Judged& jd = judged[p];
    // Not a structured binding: the lambda below captures them (clang before 16 cannot capture bindings).
    const std::pair<sim::Tick, sim::Tick> test_span = span(plans[p], -1);
    const sim::Tick from = test_span.first, to = test_span.second;
    const WaitFigures recorded = recorded_waits(all, plans[p].windows.fit_from, plans[p].windows.fit_to);
    bars[p] = {recorded.longest, jd.baseline_test_waits.longest, recorded.mean, jd.baseline_test_waits.mean};
    HeldOutRun kept;
    std::size_t replays = 0;
    jd.best = choose_held_out(
        jd.candidates, req.objective, bars[p],
        [&](std::size_t i) {
          if (replays++ > 0) ++total;  // a refusal: one run more than planned
          const Scored sc = replayer.score(with_candidate(base, jd.candidates[i].candidate),
                                           std::max<sim::Tick>(0, from - req.warmup), from, to, ro);
          tick();
          return HeldOutRun{sc.stats, sc.all.longest, sc.all.mean};
        },
        refusals[p], kept);
    if (replays == 0) tick();  // the planned run was not needed
    held_out_runs[p] = replays;
    chosen_test[p] = jd.best < jd.candidates.size() ? kept.stats : jd.baseline_test;
    kept_longest[p] = jd.best < jd.candidates.size() ? kept.longest : 0;
    kept_mean[p] = jd.best < jd.candidates.size() ? kept.mean : 0;
  });
  if (req.stop != nullptr && req.stop->load()) {
    r.cancelled = true;
    return r;
  }
  r.runs = specs.size();
  for (std::size_t p = 0; p < plans.size(); ++p) {
    CalibratePair pair = plans[p].windows;
    const Judged& jd = judged[p];
    r.runs += held_out_runs[p];
    pair.chosen = jd.best < jd.candidates.size() ? jd.candidates[jd.best].candidate.label : "";
    pair.baseline_test = jd.baseline_test;
    pair.calibrated_test = chosen_test[p];
    pair.bar = bars[p];
    pair.chosen_longest = kept_longest[p];
    pair.chosen_mean = kept_mean[p];
    pair.refused = std::move(refusals[p]);
    r.pairs.push_back(std::move(pair));
  }
  PairPlan& first = plans[0];
  Judged& jd = judged[0];
  r.inference = std::move(first.inference);
  r.queue_depth = first.queue_depth;
  r.fold_edges = first.edges;
  r.candidates = std::move(jd.candidates);
  r.best = jd.best;
  r.as_given = r.best >= r.candidates.size();
  r.baseline_folds = jd.baseline_folds;
  r.baseline_fit = mean_stats(jd.baseline_folds);
  r.baseline_test = jd.baseline_test;
  r.calibrated_test = chosen_test[0];
  r.calibrated = r.as_given ? base : with_candidate(base, r.candidates[r.best].candidate);
  r.findings = log_findings(all, base.cluster.total_gpus(), req.fit_from, req.fit_to);
  if (!base.cluster.pools.empty()) {
    r.findings.pool = base.cluster.pools[0].name;
    r.findings.gpus_per_node = base.cluster.pools[0].gpus_per_node;
  }
  return r;
}

namespace {

// Drops from a policy block the values at the keys the search sets (dotted paths below the
// block), and the maps that removing them left empty.
void prune_searched(YAML::Node node, const std::string& path, const policies::Calibration& cal) {
  std::vector<std::string> drop;
  for (auto it : node) {
    if (!it.first.IsScalar()) continue;
    const std::string key = it.first.Scalar();
    const std::string child = path.empty() ? key : path + "." + key;
    YAML::Node value = it.second;
    if (value.IsMap()) {
      const bool had = value.size() > 0;
      prune_searched(value, child, cal);
      if (had && value.size() == 0) drop.push_back(key);
    } else if (cal.searched(child)) {
      drop.push_back(key);
    }
  }
  for (const auto& key : drop) node.remove(key);
}

// A path the original scenario names (relative to its folder unless absolute), as a file in
// `out_dir` must name it.
void move_path(YAML::Node node, const std::filesystem::path& from_dir, const std::filesystem::path& out_dir) {
  namespace fs = std::filesystem;
  if (!node || !node.IsScalar() || node.Scalar().empty()) return;
  const fs::path p(node.Scalar());
  if (p.is_absolute()) return;
  node = (from_dir / p).lexically_normal().lexically_relative(out_dir).generic_string();
}

// Every path a scenario's YAML may name, made relative to the written file's folder: the trace,
// each system's site files under `cluster:` and under the policy block (slurm_conf, sacctmgr_qos,
// sshare), its manifests, and each service's load curve file (the keys scenarios/scenario.cpp
// resolves against the scenario's folder).
void move_paths(YAML::Node root, const std::filesystem::path& from_dir, const std::filesystem::path& out_dir) {
  const auto move = [&](YAML::Node n) { move_path(n, from_dir, out_dir); };
  if (root["workload"] && root["workload"].IsMap()) move(root["workload"]["trace"]);
  YAML::Node cluster = root["cluster"];
  YAML::Node policy = root["policy"];
  for (const auto& system : policies::system_modules()) {
    if (system.cluster_file != nullptr && cluster && cluster.IsMap())
      move(cluster[std::string(system.cluster_file->key)]);
    if (policy && policy.IsMap())
      for (const auto& kind : system.site_files) move(policy[std::string(kind.key)]);
  }
  if (policy && policy.IsMap() && policy["manifests"]) {
    YAML::Node m = policy["manifests"];
    if (m.IsSequence())
      for (std::size_t i = 0; i < m.size(); ++i) move(m[i]);
    else
      move(m);
  }
  if (YAML::Node services = root["services"]; services && services.IsSequence())
    for (std::size_t i = 0; i < services.size(); ++i)
      if (services[i].IsMap() && services[i]["load"] && services[i]["load"].IsMap()) move(services[i]["load"]["file"]);
}

}  // namespace

namespace {

std::string figures(const results::FidelityStats& s) {
  char b[200];
  std::snprintf(b, sizeof b, "median abs error %.0f s, mean %.0f s, Pearson %.2f, Spearman %.2f", s.median_abs_error_s,
                s.mean_abs_error_s, s.pearson, s.spearman);
  return b;
}

// "1d 01h (90000 s)": a wait, readable and exact.
std::string wait_text(sim::Tick t) {
  return results::short_duration(sim::to_seconds(t)) + " (" + std::to_string(t / sim::kSecond) + " s)";
}

}  // namespace

PairsVerdict pairs_verdict(const std::vector<CalibratePair>& pairs) {
  PairsVerdict v;
  v.pairs = pairs.size();
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& b = pairs[i].baseline_test;
    const auto& c = pairs[i].calibrated_test;
    v.acted += !pairs[i].chosen.empty();
    v.median_better += c.median_abs_error_s < b.median_abs_error_s;
    v.mean_worse += c.mean_abs_error_s > b.mean_abs_error_s;
    v.pearson_lower += c.pearson < b.pearson - kPearsonDrop;
    const double mean = c.mean_abs_error_s - b.mean_abs_error_s, median = c.median_abs_error_s - b.median_abs_error_s,
                 pearson = c.pearson - b.pearson;
    v.worst_mean = i == 0 ? mean : std::max(v.worst_mean, mean);
    v.worst_median = i == 0 ? median : std::max(v.worst_median, median);
    v.worst_pearson = i == 0 ? pearson : std::min(v.worst_pearson, pearson);
  }
  return v;
}

std::string refusal_text(const HeldOutRefusal& refusal, const HeldOutBar& bar) {
  std::string why;
  if (refusal.longest > bar.bar())
    why = " held a test-window job " + wait_text(refusal.longest) +
          ", longer than both the fit window's longest recorded wait, " + wait_text(bar.longest_recorded) +
          ", and the longest wait as given there, " + wait_text(bar.longest_as_given);
  if (refusal.mean > bar.mean_bar())
    why += std::string(why.empty() ? "" : "; and it") + " made the test window's jobs wait " + wait_text(refusal.mean) +
           " on average, longer than both the fit window's mean recorded wait, " + wait_text(bar.mean_recorded) +
           ", and the mean wait as given there, " + wait_text(bar.mean_as_given);
  return refusal.rule + why + "; its held-out figures would have been " + figures(refusal.test);
}

std::string LogFindings::outage_event(const Gap& gap) const {
  const std::int64_t per = std::max(1, gpus_per_node);
  const std::int64_t nodes = std::max<std::int64_t>(1, gap.idle_gpus / per);
  const std::string span = "{at: " + short_time(gap.from) + ", ";
  const std::string last = ", duration: " + short_time(gap.to - gap.from) + "}";
  if (nodes > 32)  // too many names for one line: say which
    return span + "nodes: [" + pool + "-0 .. " + pool + "-" + std::to_string(nodes - 1) + ", " + std::to_string(nodes) +
           " names]" + last;
  std::string list;
  for (std::int64_t n = 0; n < nodes; ++n) list += (n == 0 ? "" : ", ") + pool + "-" + std::to_string(n);
  return span + "nodes: [" + list + "]" + last;
}

std::string calibration_comment(const CalibrateResult& result, const std::string& source) {
  std::ostringstream o;
  const std::size_t folds = result.baseline_folds.size();
  o << "# Calibrated by `headroom calibrate` (docs/fidelity.md) from " << source << ".\n";
  const std::vector<HeldOutRefusal> none;
  const auto& refused = result.pairs.empty() ? none : result.pairs[0].refused;
  if (result.as_given && !refused.empty()) {
    o << "# No rule left: " << refused.size() << (refused.size() == 1 ? " rule" : " rules")
      << " passed the inner folds of the fit window but the held-out guard refused "
      << (refused.size() == 1 ? "it" : "them") << " (below). This is the scenario as given.\n";
  } else if (result.as_given) {
    o << "# No rule passed: none beat the scenario as given in most of the " << folds
      << " inner folds of the fit window and on their mean by 5 %,\n"
      << "# without lowering their Pearson or holding a job longer than the log ever did. This is the scenario as "
         "given.\n";
  } else {
    const auto& b = result.candidates[result.best];
    o << "# Chosen: " << b.candidate.label << ".\n"
      << "# Why: it beat the scenario as given in " << b.wins << " of " << folds
      << " inner folds (rolling origin) and on their mean by 5 %; of the rules that did, the smallest mean\n"
      << "# objective (near ties: fewer parameters, then the smaller median error).\n"
      << "# Inner folds, mean: " << figures(b.fit) << ".\n";
  }
  o << "# Inner folds, as given: " << figures(result.baseline_fit) << ".\n";
  if (!refused.empty())
    o << "# Held-out guard: a rule whose replay of the test window's submissions holds a job longer than both the\n"
      << "# longest wait recorded in the fit window and the longest wait of the scenario as given on the test window,\n"
      << "# or makes their mean wait longer than both the fit window's mean recorded wait and the mean wait as given\n"
      << "# there, is refused, and the next rule that passed is tried (docs/fidelity.md).\n";
  for (std::size_t p = 0; p < result.pairs.size(); ++p) {
    const auto& pr = result.pairs[p];
    o << "# Held out [" << sim::format_duration(pr.test_from) << ", " << sim::format_duration(pr.test_to)
      << "): calibrated " << figures(pr.calibrated_test) << "; as given " << figures(pr.baseline_test) << ".\n";
    for (const auto& x : pr.refused) o << "#   Refused by the held-out guard: " << refusal_text(x, pr.bar) << ".\n";
    if (!pr.chosen.empty())
      o << "#   Kept by the held-out guard: its longest wait there " << wait_text(pr.chosen_longest)
        << ", not longer than the larger of the fit window's longest recorded wait, "
        << wait_text(pr.bar.longest_recorded) << ", and the longest wait as given there, "
        << wait_text(pr.bar.longest_as_given) << "; its mean wait there " << wait_text(pr.chosen_mean)
        << ", not longer than the larger of the fit window's mean recorded wait, " << wait_text(pr.bar.mean_recorded)
        << ", and the mean wait as given there, " << wait_text(pr.bar.mean_as_given) << ".\n";
  }
  const LogFindings& f = result.findings;
  if (f.over_capacity() && !result.inference.time_shared.empty())
    o << "# Not fitted: the log has " << f.max_in_use << " GPUs in use at " << sim::format_duration(f.max_in_use_at)
      << ", more than the cluster's " << f.cluster_gpus << ": jobs shared processors, as the header says (\""
      << result.inference.time_shared << "\"), which a replay does not model.\n";
  else if (f.over_capacity())
    o << "# Trace anomaly (not fitted): the log has " << f.max_in_use << " GPUs in use at "
      << sim::format_duration(f.max_in_use_at) << ", more than the cluster's " << f.cluster_gpus << ".\n";
  if (const std::string cleaned = traces::cleaned_log_note(result.inference); !cleaned.empty())
    o << "# Not fitted: " << cleaned << ".\n";
  if (f.with_limit > 0)
    o << "# Time limits: " << f.past_limit << " of " << f.with_limit << " jobs ran past their requested time"
      << (f.raised_limit > 0 ? " (the scenario lets " + std::to_string(f.raised_limit) +
                                   " of them run their recorded time: workload.time_limits)"
                             : std::string())
      << ".\n";
  if (!f.gaps.empty())
    o << "# Outage / reservation candidates (recorded use under 80 % while a job that fit waited; check the\n"
      << "# site's records before adding them under failures: events:):\n";
  for (std::size_t i = 0; i < f.gaps.size() && i < 5; ++i)
    o << "#   - " << f.outage_event(f.gaps[i]) << "  # " << f.gaps[i].idle_gpus << "+ GPUs idle\n";
  return o.str();
}

std::string calibrated_yaml(const CalibrateResult& result, const scenarios::Scenario& original,
                            const std::string& output) {
  YAML::Node root = YAML::Load(original.text);
  if (!result.as_given && result.candidates[result.best].candidate.prime_time.enabled()) {
    const models::PrimeTime& p = result.candidates[result.best].candidate.prime_time;
    // The block trace-infer prints, written in block style.
    YAML::Node pt = YAML::Load(p.yaml_flow());
    pt.SetStyle(YAML::EmitterStyle::Block);
    root["prime_time"] = pt;
  }
  if (!result.as_given && !result.candidates[result.best].candidate.as_given_policy) {
    const Candidate& c = result.candidates[result.best].candidate;
    YAML::Node policy(YAML::NodeType::Map);
    if (const policies::Calibration* cal = calibration_of(c.policy);
        cal != nullptr && original.policy.name == c.policy && root["policy"] && root["policy"].IsMap()) {
      // The scenario's block of that system, less the knobs searched.
      policy = YAML::Clone(root["policy"]);
      prune_searched(policy, "", *cal);
    }
    policy["name"] = c.policy;
    for (const auto& [key, value] : c.params) {
      YAML::Node cur = policy;
      std::string rest = key;
      for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
        YAML::Node next = cur[rest.substr(0, dot)];
        cur.reset(next);
        rest = rest.substr(dot + 1);
      }
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec == std::errc() && end == value.data() + value.size())
        cur[rest] = v;
      else
        cur[rest] = value;
    }
    root["policy"] = policy;
    root.remove("policies");
    if (c.nodes > 0 && root["cluster"] && root["cluster"]["pools"] && root["cluster"]["pools"].IsSequence())
      root["cluster"]["pools"][0]["nodes"] = c.nodes;
  }
  namespace fs = std::filesystem;
  // With -o in another folder every relative path the scenario names still names its file.
  const fs::path out_dir = fs::absolute(output).lexically_normal().parent_path();
  move_paths(root, fs::absolute(original.file).lexically_normal().parent_path(), out_dir);
  if (root["name"]) root["name"] = root["name"].as<std::string>() + "-calibrated";
  YAML::Emitter e;
  e << root;
  return calibration_comment(result, original.file) + e.c_str() + "\n";
}

}  // namespace headroom::planner
