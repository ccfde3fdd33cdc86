#include "planner/calibrate.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "planner/run.hpp"
#include "policies/common/calibration.hpp"
#include "policies/system_module.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/parallel.hpp"
#include "sim/text.hpp"

namespace headroom::planner {

namespace {

std::int64_t median_of(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() + 1) / 2 - 1];
}

// The calibration hooks of the system a candidate names (nullptr: the fifo + EASY family).
const policies::Calibration* calibration_of(const std::string& policy) {
  const policies::SystemModule* system = policies::find_system(policy);
  return system != nullptr ? system->calibration : nullptr;
}

scenarios::Scenario with_candidate(const scenarios::Scenario& base, const Candidate& c) {
  scenarios::Scenario s = base;
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

// The scenario replaying jobs submitted in [window start, to).
scenarios::Scenario until(scenarios::Scenario s, sim::Tick to) {
  s.workload.window_end = std::min(s.workload.window_end, to);
  return s;
}

results::FidelityStats score(const scenarios::Scenario& s, sim::Tick from, sim::Tick to, const RunOptions& options) {
  const RunOutcome out = run_scenario(until(s, to), options);
  return results::compute_fidelity(out.result, from, to).all;
}

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
  for (const auto& u : fit.users) in.users.push_back({u.name, u.max_jobs, u.max_gpus, u.largest_job});
  in.recorded_scheduler = fit.scheduler;
  in.queue_depth = queue_depth;
  in.sizes = sizes;
  if (scenario.policy.name == system) in.own = &scenario.policy.params;
  std::vector<Candidate> out;
  for (auto& c : cal->candidates(in)) out.push_back({system, std::move(c.label), std::move(c.params), c.nodes});
  return out;
}

}  // namespace

std::vector<Candidate> calibration_candidates(const traces::Inference& fit, const scenarios::Scenario& scenario,
                                              CalibrateFamily family, std::int64_t queue_depth,
                                              const std::string& system) {
  std::vector<std::int32_t> sizes{-1};
  if (scenario.cluster.pools.size() == 1 && fit.max_busy > 0) {
    const auto& pool = scenario.cluster.pools[0];
    const std::int64_t per_node = std::max(1, pool.gpus_per_node);
    const auto busy_nodes = static_cast<std::int32_t>((fit.max_busy + per_node - 1) / per_node);
    if (busy_nodes < pool.nodes) sizes.push_back(busy_nodes);
  }
  if (resolve_family(family, scenario) == CalibrateFamily::System)
    return system_candidates(system.empty() ? scenario.policy.name : system, fit, scenario, sizes, queue_depth);
  std::vector<std::string> backfills{"none", "easy"};
  if (fit.scheduler == "easy") backfills = {"easy"};
  if (fit.scheduler == "fcfs") backfills = {"none"};
  std::vector<std::int64_t> gpus, jobs;
  for (const auto& u : fit.users) {
    gpus.push_back(u.max_gpus);
    jobs.push_back(u.max_jobs);
  }
  const std::int64_t gpu_lo = gpus.empty() ? 0 : *std::min_element(gpus.begin(), gpus.end());
  const std::int64_t gpu_hi = gpus.empty() ? 0 : *std::max_element(gpus.begin(), gpus.end());
  const std::int64_t job_lo = jobs.empty() ? 0 : *std::min_element(jobs.begin(), jobs.end());
  const std::int64_t job_hi = jobs.empty() ? 0 : *std::max_element(jobs.begin(), jobs.end());

  using Params = std::vector<std::pair<std::string, std::string>>;
  std::vector<std::pair<std::string, Params>> limits{{"no limits", {}}};
  for (std::int64_t g : policies::limit_ladder(gpu_lo, gpu_hi))
    limits.push_back({"MaxGPUsPerUser " + std::to_string(g), {{"MaxGPUsPerUser", std::to_string(g)}}});
  for (std::int64_t j : policies::limit_ladder(job_lo, job_hi))
    limits.push_back({"MaxJobsPerUser " + std::to_string(j), {{"MaxJobsPerUser", std::to_string(j)}}});
  // Per user at a share of what each reached; users the fit window did not see get the median.
  const std::pair<int, int> shares[] = {{1, 2}, {3, 4}, {1, 1}};
  for (const char* what : {"GPUs", "Jobs", "both"}) {
    for (const auto& [num, den] : shares) {
      if (std::string(what) == "both" && num != den) continue;
      Params p;
      const bool g = std::string(what) != "Jobs", j = std::string(what) != "GPUs";
      if (g) p.emplace_back("MaxGPUsPerUser", std::to_string(policies::scaled_share(median_of(gpus), num, den)));
      if (j) p.emplace_back("MaxJobsPerUser", std::to_string(policies::scaled_share(median_of(jobs), num, den)));
      for (const auto& u : fit.users) {
        if (g)
          p.emplace_back("users." + u.name + ".MaxGPUs", std::to_string(policies::scaled_share(u.max_gpus, num, den)));
        if (j)
          p.emplace_back("users." + u.name + ".MaxJobs", std::to_string(policies::scaled_share(u.max_jobs, num, den)));
      }
      const std::string share = num == den ? "all" : std::to_string(num) + "/" + std::to_string(den);
      limits.push_back({"per-user " + std::string(what == std::string("both") ? "GPUs + jobs" : what) + " at " + share +
                            " of observed",
                        std::move(p)});
    }
  }
  std::vector<Candidate> out;
  for (const std::int32_t nodes : sizes)
    for (const auto& bf : backfills)
      for (const auto& [label, params] : limits) {
        Candidate c;
        c.label = (bf == "easy" ? "EASY backfill, " : "no backfill, ") + label;
        if (nodes > 0) c.label += ", " + std::to_string(nodes) + " nodes";
        c.nodes = nodes;
        c.params.emplace_back("placement", "consolidate");
        if (bf == "easy") c.params.emplace_back("backfill", "easy");
        c.params.insert(c.params.end(), params.begin(), params.end());
        out.push_back(std::move(c));
      }
  return out;
}

std::size_t choose_candidate(const std::vector<CandidateScore>& candidates, CalibrateObjective objective) {
  std::size_t best = 0;
  // The smallest objective; ties by higher Pearson, then by index.
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const auto& a = candidates[i];
    const auto& b = candidates[best];
    if (a.objective < b.objective || (a.objective == b.objective && a.fit.pearson > b.fit.pearson)) best = i;
  }
  if (objective != CalibrateObjective::MeanError || candidates.empty()) return best;
  // The mean absolute error is dominated by the longest waits: candidates within kMeanErrorBand of
  // the smallest are told apart by the median absolute error (the bulk of the jobs), then by
  // higher Pearson, smaller mean error and index.
  const double band = candidates[best].objective * (1 + kMeanErrorBand);
  std::size_t pick = best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& a = candidates[i];
    const auto& b = candidates[pick];
    if (a.objective > band) continue;
    const double ma = a.fit.median_abs_error_s, mb = b.fit.median_abs_error_s;
    if (ma < mb ||
        (ma == mb && (a.fit.pearson > b.fit.pearson || (a.fit.pearson == b.fit.pearson && a.objective < b.objective))))
      pick = i;
  }
  return pick;
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

void check_windows(const CalibrateRequest& req) {
  const auto span = [](sim::Tick from, sim::Tick to) { return short_time(from) + ":" + short_time(to); };
  const std::string fit = span(req.fit_from, req.fit_to), test = span(req.test_from, req.test_to);
  // A test window that shares time with the fit window is not held out: its jobs were fitted.
  if (req.test_from < req.fit_to && req.fit_from < req.test_to) {
    const bool same = req.test_from == req.fit_from && req.test_to == req.fit_to;
    throw sim::InputError("", 0, 0, "--test",
                          "the test window " + test + (same ? " equals" : " overlaps") + " the fit window " + fit +
                              "; a held-out window must not share time with it (e.g. --fit 0:7d --test 7d:14d)");
  }
  const models::Workload w = scenarios::build_workload(req.scenario);
  std::int64_t in_fit = 0, in_test = 0;
  sim::Tick first = sim::kNever, last = -1;
  for (const auto& j : w.jobs) {
    in_fit += j.submit >= req.fit_from && j.submit < req.fit_to;
    in_test += j.submit >= req.test_from && j.submit < req.test_to;
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  const auto none = [&](const char* option, const char* which, const std::string& window) {
    return sim::InputError(
        "", 0, 0, option,
        std::string("the ") + which + " window " + window + " holds no job of " + req.scenario.workload.trace +
            (w.jobs.empty() ? std::string(" (it has none)")
                            : " (its jobs are submitted from " + short_time(first) + " to " + short_time(last) + ")"));
  };
  if (in_fit == 0) throw none("--fit", "fit", fit);
  if (in_test == 0) throw none("--test", "test", test);
}

CalibrateResult calibrate(const CalibrateRequest& req) {
  CalibrateResult r;
  const scenarios::Scenario& base = req.scenario;
  check_windows(req);  // before any run
  r.baseline_policy = base.policy.name;
  {
    models::Workload w = scenarios::build_workload(until(base, req.fit_to));
    std::erase_if(w.jobs, [&](const models::Job& j) { return j.submit < req.fit_from; });
    r.queue_depth = recorded_queue_depth(w);
    r.inference = traces::infer_system(w, sim::kDay, base.workload.units_per_gpu,
                                       w.meta.format == "swf" ? base.workload.trace : std::string());
  }
  if (r.inference.recorded == 0)
    throw sim::InputError(base.workload.trace, 0, 0, "workload.trace",
                          "no job of the fit window has a recorded start: nothing to calibrate against "
                          "(the log has no wait times)");
  const std::vector<Candidate> cands = calibration_candidates(r.inference, base, req.family, r.queue_depth, req.system);
  // Runs: every candidate on the fit window, then the baseline on both windows.
  const std::size_t n = cands.size(), total = n + 3;
  std::vector<results::FidelityStats> fit(n);
  std::atomic<std::size_t> done{0};
  RunOptions ro;
  ro.stop = req.stop;
  const auto tick = [&] {
    const std::size_t d = ++done;
    if (req.progress) req.progress(d, total);
  };
  sim::parallel_indices(n + 2, [&](std::size_t i) {
    if (req.stop != nullptr && req.stop->load()) return;
    if (i < n)
      fit[i] = score(with_candidate(base, cands[i]), req.fit_from, req.fit_to, ro);
    else if (i == n)
      r.baseline_fit = score(base, req.fit_from, req.fit_to, ro);
    else
      r.baseline_test = score(base, req.test_from, req.test_to, ro);
    tick();
  });
  if (req.stop != nullptr && req.stop->load()) {
    r.cancelled = true;
    return r;
  }
  for (std::size_t i = 0; i < n; ++i)
    r.candidates.push_back({cands[i], fit[i], calibration_objective(fit[i], req.objective)});
  r.best = choose_candidate(r.candidates, req.objective);
  r.calibrated = with_candidate(base, cands[r.best]);
  r.calibrated_test = score(r.calibrated, req.test_from, req.test_to, ro);
  tick();
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

std::string calibrated_yaml(const CalibrateResult& result, const scenarios::Scenario& original,
                            const std::string& output) {
  YAML::Node root = YAML::Load(original.text);
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
  namespace fs = std::filesystem;
  // With -o in another folder every relative path the scenario names still names its file.
  const fs::path out_dir = fs::absolute(output).lexically_normal().parent_path();
  move_paths(root, fs::absolute(original.file).lexically_normal().parent_path(), out_dir);
  if (root["name"]) root["name"] = root["name"].as<std::string>() + "-calibrated";
  YAML::Emitter e;
  e << root;
  std::ostringstream text;
  const auto& b = result.candidates[result.best];
  char line[320];
  std::snprintf(line, sizeof line,
                "# Fit window: median abs wait error %.0f s, Pearson %.2f. Held-out test window: median abs error "
                "%.0f s, Pearson %.2f (baseline %s: %.0f s, %.2f).\n",
                b.fit.median_abs_error_s, b.fit.pearson, result.calibrated_test.median_abs_error_s,
                result.calibrated_test.pearson, result.baseline_policy.c_str(), result.baseline_test.median_abs_error_s,
                result.baseline_test.pearson);
  text << "# Calibrated by `headroom calibrate` (docs/fidelity.md) from " << original.file << ":\n"
       << "# " << c.label << ".\n"
       << line << e.c_str() << "\n";
  return text.str();
}

}  // namespace headroom::planner
