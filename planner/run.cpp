#include "planner/run.hpp"

#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "models/throughput.hpp"
#include "models/topology.hpp"
#include "policies/registry.hpp"
#include "policies/split/split.hpp"
#include "results/format.hpp"
#include "results/recorder.hpp"
#include "scenarios/run_options.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"
#include "simulation/simulation.hpp"

namespace headroom::planner {

results::Fairness fairness_of(const RunOutcome& outcome) {
  return results::compute_fairness(outcome.result, outcome.fairness);
}

namespace {

// An output.sample_interval whose samples would pass simulation::kMaxSampleBytes over the trace's
// submissions (1s over a year: 31.5 M samples, tens of GB with a few hundred tenants) is refused
// before the run, with the shortest interval that keeps within.
void check_sample_interval(const scenarios::Scenario& sc, const models::Workload& w, std::size_t cluster_pools) {
  const sim::Tick every = sc.output.sample_interval;
  if (every <= 0 || w.jobs.empty()) return;
  const sim::Tick span = w.jobs.back().submit - w.jobs.front().submit;
  const auto pools = static_cast<std::int64_t>(cluster_pools);
  const auto tenants = static_cast<std::int64_t>(w.tenants.size());
  const std::int64_t row = simulation::sample_bytes(cluster_pools, w.tenants.size());
  const std::int64_t fit = simulation::max_samples(cluster_pools, w.tenants.size());
  const std::int64_t samples = span / every + 1;
  if (samples <= fit) return;
  // The shortest whole-second interval whose samples fit: span / (fit - 1), rounded up.
  const sim::Tick shortest = (span / (fit - 1) / sim::kSecond + 1) * sim::kSecond;
  auto dur = [](sim::Tick t) {  // "1s", "90s", "2h 00m": whole seconds as they were given
    return t % sim::kSecond == 0 && t < 10 * sim::kSecond ? std::to_string(t / sim::kSecond) + "s"
                                                          : results::duration(static_cast<double>(t) / sim::kSecond);
  };
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.2f GiB", static_cast<double>(samples) * static_cast<double>(row) / (1 << 30));
  throw sim::InputError(sc.file, sc.output.interval_line, sc.output.interval_column, "output.sample_interval",
                        dur(every) + " gives about " + sim::thousands(samples) + " samples over the " +
                            results::duration(static_cast<double>(span) / sim::kSecond) +
                            " of the trace's submissions, " + sim::thousands(row) + " bytes each (" +
                            sim::thousands(pools) + (pools == 1 ? " pool, " : " pools, ") + sim::thousands(tenants) +
                            " tenants): " + gib + ", more than the 1 GiB of samples a run keeps; give " +
                            dur(shortest) + " or more, or leave it out (about 2,000 samples)");
}

// SLO attainment of each inference service, from the runs of its replicas in /placements.
void evaluate_services(const scenarios::Scenario& sc, const models::Workload& w, results::RunResult& r) {
  const std::size_t n = sc.services.size();
  if (n == 0) return;
  std::vector<std::vector<std::pair<sim::Tick, sim::Tick>>> runs(n);
  for (const results::JobRun& run : results::job_runs(r)) {
    const std::int32_t svc = w.jobs[run.job].service;
    if (svc >= 0) runs[static_cast<std::size_t>(svc)].emplace_back(run.start, run.end);
  }
  // Replicas created, never run, the service's last withdrawal, and the replica time wanted.
  std::vector<std::int64_t> replicas(n, 0), withdrawn(n, 0);
  std::vector<sim::Tick> last(n, sim::Tick{0});
  std::vector<long double> wanted_ms(n, 0);
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    const models::Job& job = w.jobs[j];
    if (job.service < 0) continue;
    const auto k = static_cast<std::size_t>(job.service);
    ++replicas[k];
    if (r.jobs[j].start < 0) ++withdrawn[k];
    last[k] = std::max(last[k], job.withdraw_at);
    wanted_ms[k] += static_cast<long double>(job.withdraw_at - job.submit);
  }
  for (std::size_t k = 0; k < n; ++k) {
    const models::ServiceSpec& s = sc.services[k];
    results::ServiceRecord rec;
    rec.name = s.name;
    rec.tenant = s.tenant;
    rec.gpus_per_replica = s.gpus_per_replica;
    rec.min_replicas = s.min_replicas;
    rec.max_replicas = s.max_replicas;
    rec.throughput = s.throughput;
    rec.from = s.start;
    rec.replicas = replicas[k];
    rec.replicas_withdrawn = withdrawn[k];
    rec.to = s.end != sim::kNever ? s.end : std::max(s.start, last[k]);
    if (rec.to > rec.from) {
      const models::ServiceSlo slo = models::evaluate_service(s, runs[k], rec.from, rec.to);
      rec.time_attainment = slo.time_attainment;
      rec.request_attainment = slo.request_attainment;
      rec.mean_running = slo.mean_running;
      rec.replica_gpu_hours = slo.replica_gpu_hours;
      rec.requests = slo.requests;
      rec.mean_wanted = static_cast<double>(wanted_ms[k] / static_cast<long double>(rec.to - rec.from));
    }
    r.services.push_back(std::move(rec));
  }
}

// SLO attainment of the inference services during each scripted outage and in the hour after it
// (results::OutageSlo): the lowest over the services alive in the window.
void evaluate_outage_slo(const scenarios::Scenario& sc, const models::Workload& w, results::RunResult& r) {
  const std::size_t n = sc.services.size();
  if (n == 0 || r.drill_start.empty()) return;
  std::vector<std::vector<std::pair<sim::Tick, sim::Tick>>> runs(n);
  for (const results::JobRun& run : results::job_runs(r)) {
    const std::int32_t svc = w.jobs[run.job].service;
    if (svc >= 0) runs[static_cast<std::size_t>(svc)].emplace_back(run.start, run.end);
  }
  for (std::size_t d = 0; d < r.drill_start.size() && d < sc.failures.events.size(); ++d) {
    if (r.drill_start[d] < 0) continue;
    results::OutageSlo o;
    o.drill = static_cast<std::int32_t>(d);
    o.from = r.drill_start[d];
    o.to = o.from + sc.failures.events[d].duration;
    bool any = false;
    for (std::size_t k = 0; k < n && k < r.services.size(); ++k) {
      const results::ServiceRecord& rec = r.services[k];
      const sim::Tick a = std::max(o.from, rec.from), b = std::min(o.to, rec.to);
      if (b > a) {
        o.during = std::min(o.during, models::evaluate_service(sc.services[k], runs[k], a, b).time_attainment);
        any = true;
      }
      const sim::Tick c = std::max(o.to, rec.from), e = std::min(o.to + results::kAfterOutage, rec.to);
      if (e > c) {
        o.after = std::min(o.after, models::evaluate_service(sc.services[k], runs[k], c, e).time_attainment);
        any = true;
      }
    }
    if (any) r.outage_slo.push_back(o);
  }
}

}  // namespace

RunOutcome run_scenario(const scenarios::Scenario& scenario, const RunOptions& options) {
  using clock = std::chrono::steady_clock;
  const std::uint64_t seed = options.seed.value_or(scenario.seed);
  scenarios::Scenario sc = scenario;
  sc.seed = seed;

  const auto t0 = clock::now();
  const models::Workload workload = scenarios::build_workload(sc, options.traces);
  const auto t1 = clock::now();

  std::unique_ptr<policies::Policy> policy;
  policies::split::SplitPolicy* split = nullptr;
  models::ClusterSpec cluster = sc.cluster;
  std::vector<std::uint32_t> route;
  policies::split::Partitioning parts;
  if (sc.split.declared() && sc.policy.name == "split") {
    // One site, several systems (docs/split.md): the engine runs the partitioned cluster under a
    // policy that gives each system its own partition and jobs.
    policies::split::check_partitions(sc.split, sc.cluster);
    parts = policies::split::partition_cluster(sc.split, sc.cluster, sc.topology_spec.get());
    if (sc.split.dispatch == policies::split::Dispatch::Routes) {
      route = policies::split::route_jobs(sc.split, workload);
      policies::split::check_moves(sc.split, parts, route, workload);
    } else {
      route.assign(workload.jobs.size(), 0);  // the dispatcher decides at submit
    }
    std::vector<std::unique_ptr<policies::Policy>> systems;
    for (const auto& s : sc.split.systems) systems.push_back(policies::make_policy(s.policy, s.params, seed));
    cluster = parts.whole;
    auto sp = std::make_unique<policies::split::SplitPolicy>(std::move(systems), parts, workload, route, &sc.split);
    split = sp.get();
    policy = std::move(sp);
  } else {
    policy = policies::make_policy(sc.policy.name, sc.policy.params, seed);
  }
  check_sample_interval(sc, workload, cluster.pools.size());  // the pools the samples will hold
  results::Recorder recorder(workload, cluster, sc.output.events);
  // Streaming deflates on a thread of its own: with the run held to one thread (--threads 1)
  // it would only add work (the chunks' digests) to that thread.
  if (options.stream_chunks && tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) > 1)
    recorder.stream_chunks();
  simulation::SimulationOptions sim_options = scenarios::simulation_options(sc, workload);
  sim_options.progress = options.progress;
  sim_options.clock = options.clock;
  if (split != nullptr) {
    // The failure drill and the runtime model name the scenario's nodes and pools: the engine
    // runs the partitioned cluster (docs/split.md, "Failures, maintenance and the runtime model").
    sim_options.failures = policies::split::map_failures(sc.failures, sc.cluster, parts);
    if (sc.runtime.enabled)
      sim_options.runtime = std::make_shared<const models::RuntimeModel>(sc.runtime, workload, cluster);
    // The slowdown of a job spread over switches (docs/topology.md), on the site's fabric in the
    // engine's numbering.
    sim_options.placement_speed = nullptr;
    if (auto topology = cluster.topology)
      sim_options.placement_speed = [topology](const models::Job& job, const models::Placement& placement) {
        return 1.0 / topology->slowdown(placement, job.kind);
      };
  }
  simulation::Simulation simulation(workload, cluster, *policy, &recorder, sim_options);
  const simulation::SimulationStats stats = simulation.run(options.stop);
  if (split != nullptr) split->finish(stats.end);
  const auto t2 = clock::now();

  RunOutcome out;
  out.cancelled = stats.cancelled;
  out.import_seconds = std::chrono::duration<double>(t1 - t0).count();
  out.simulate_seconds = std::chrono::duration<double>(t2 - t1).count();
  recorder.finish_streaming();
  out.result = std::move(recorder.result());
  out.trace = workload.meta;
  auto& r = out.result;
  r.scenario_name = sc.name;
  r.scenario_text = sc.text;
  r.scenario_file = sc.file;
  r.policy = sc.policy.name;
  if (!sc.costs.gpu_hour.empty()) r.currency = sc.costs.currency;
  r.seed = seed;
  r.version = version_string();
  r.fingerprint = stats.fingerprint;
  r.events_processed = stats.events;
  r.sim_start = stats.start;
  r.sim_end = stats.end;
  r.unix_start = workload.meta.unix_start;
  r.total_gpus = sc.cluster.total_gpus();
  r.lost_gpu_ms = simulation.lost_gpu_ms();
  r.timeseries.interval = stats.sample_interval;
  evaluate_services(sc, workload, r);
  evaluate_outage_slo(sc, workload, r);
  if (split != nullptr) {
    for (std::size_t s = 0; s < sc.split.systems.size(); ++s) {
      results::PartitionRecord p;
      p.name = sc.split.systems[s].name;
      p.policy = sc.split.systems[s].policy;
      p.first_node = static_cast<std::int32_t>(parts.first_node[s]);
      p.nodes = parts.node_count[s];
      p.first_pool = static_cast<std::int32_t>(parts.first_pool[s]);
      // Its home pools: the slots of nodes that moves may bring it are not its own.
      p.pools = parts.home_pools[s];
      p.gpus = 0;
      for (std::int32_t k = 0; k < p.pools; ++k) {
        const models::NodePool& pool = parts.whole.pools[parts.first_pool[s] + static_cast<models::PoolId>(k)];
        p.gpus += static_cast<std::int64_t>(pool.nodes) * pool.gpus_per_node;
      }
      p.boundary_idle_gpu_ms = split->boundary_idle_gpu_ms()[s];
      r.partitions.push_back(std::move(p));
    }
    r.job_partition = split->route();
    for (const policies::split::MoveEvent& m : split->moves()) {
      results::MoveRecord rec;
      rec.node = static_cast<std::int32_t>(m.node);
      rec.from = static_cast<std::int32_t>(m.from);
      rec.to = static_cast<std::int32_t>(m.to);
      rec.rule = m.rule;
      rec.on_demand = m.on_demand ? 1 : 0;
      rec.gpus = m.gpus;
      rec.requested = m.requested;
      rec.changed = m.changed;
      rec.ready = m.ready;
      rec.preempted = m.preempted;
      r.moves.push_back(rec);
    }
  }

  std::vector<std::string> names;
  std::vector<double> weights;
  for (const auto& t : sc.tenants) {
    names.push_back(t.name);
    weights.push_back(t.weight);
  }
  out.fairness.weights = results::tenant_weights(r, names, weights);
  out.fairness.entitlements_set = !sc.tenants.empty();
  double cpus = 0, memory_mib = 0;
  for (const auto& p : sc.cluster.pools) {
    cpus += static_cast<double>(p.nodes) * p.cpus_per_node;
    memory_mib += static_cast<double>(p.nodes) * static_cast<double>(p.memory_gib) * 1024.0;
  }
  if (cpus > 0) {
    results::ResourceUse use{"cpu", cpus, {}};
    for (const auto& j : workload.jobs) use.per_job.push_back(j.cpus);
    out.fairness.resources.push_back(std::move(use));
  }
  if (memory_mib > 0) {
    results::ResourceUse use{"memory", memory_mib, {}};
    for (const auto& j : workload.jobs) use.per_job.push_back(static_cast<double>(j.memory_mib));
    out.fairness.resources.push_back(std::move(use));
  }
  return out;
}

void RunsProgress::begin(std::vector<std::string> labels) {
  std::lock_guard<std::mutex> lock(mu_);
  runs_.clear();
  begun_ = std::chrono::steady_clock::now();
  for (auto& l : labels) runs_.push_back(Run{std::move(l), State::Waiting, 0, 0});
}

void RunsProgress::start(std::size_t run) {
  std::lock_guard<std::mutex> lock(mu_);
  if (run < runs_.size()) runs_[run].state = State::Running;
}

void RunsProgress::over(std::size_t run) {
  std::lock_guard<std::mutex> lock(mu_);
  if (run < runs_.size()) runs_[run].state = State::Over;
}

std::function<void(std::size_t, std::size_t)> RunsProgress::hook(std::size_t run) {
  return [this, run](std::size_t ended, std::size_t total) {
    std::lock_guard<std::mutex> lock(mu_);
    if (run >= runs_.size()) return;
    runs_[run].ended = ended;
    runs_[run].total = total;
  };
}

std::vector<RunsProgress::Run> RunsProgress::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

std::string RunsProgress::line(std::string_view noun) const {
  std::vector<Run> rs;
  double elapsed_s = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rs = runs_;
    elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun_).count();
  }
  if (rs.empty()) return "starting the " + std::string(noun);
  std::size_t over = 0;
  std::string running;
  double share = 0;  // mean over the runs of the share of their jobs ended
  for (const Run& r : rs) {
    if (r.state == State::Over) {
      ++over;
      share += 1;
    } else if (r.state == State::Running) {
      running += (running.empty() ? "" : ", ") + r.label;
      if (r.total > 0) share += static_cast<double>(std::min(r.ended, r.total)) / static_cast<double>(r.total);
    }
  }
  share = rs.empty() ? 1.0 : share / static_cast<double>(rs.size());
  std::string out = std::to_string(over) + "/" + std::to_string(rs.size()) + " " + std::string(noun) + " done";
  if (!running.empty()) out += " (" + running + " running)";
  char buf[96];
  std::snprintf(buf, sizeof buf, " %.0f%% of jobs ended, ETA ", 100.0 * share);
  out += buf;
  if (share <= 0 || share >= 1 || !(elapsed_s >= 0)) {
    out += share >= 1 ? "0:00" : "?";
  } else {
    const auto eta = static_cast<long long>(elapsed_s * (1 - share) / share + 0.5);
    if (eta >= 3600)
      std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", eta / 3600, eta / 60 % 60, eta % 60);
    else
      std::snprintf(buf, sizeof buf, "%lld:%02lld", eta / 60, eta % 60);
    out += buf;
  }
  return out;
}

}  // namespace headroom::planner
