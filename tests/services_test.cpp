// Inference services (models/service.hpp): load curves, the HPA autoscaler, replicas as jobs,
// SLO attainment, the `services:` scenario block, and whole runs with services.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/service.hpp"
#include "planner/compare.hpp"
#include "planner/plan.hpp"
#include "planner/run.hpp"
#include "results/hdf5_io.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"

using namespace headroom;
using models::LoadCurve;
using models::ServiceSpec;
using sim::Tick;

namespace {

constexpr Tick S = sim::kSecond;
constexpr Tick H = sim::kHour;

const std::string kInline = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios/inline.yaml";

// A service carrying 5 requests/s per replica at its 0.5 target (10 req/s per replica).
ServiceSpec step_service() {
  ServiceSpec s;
  s.name = "chat";
  s.tenant = "prod";
  s.gpus_per_replica = 2;
  s.throughput = 10;
  s.min_replicas = 1;
  s.max_replicas = 20;
  s.autoscaler.target_utilization = 0.5;
  s.load.table = {{0, 20.0}, {60 * S, 52.0}, {300 * S, 9.0}};
  return s;
}

}  // namespace

TEST(LoadCurve, DiurnalAndTable) {
  LoadCurve d;
  d.mean_rate = 100;
  d.diurnal_amplitude = 0.5;
  d.peak = 14 * H;
  EXPECT_DOUBLE_EQ(d.rate(14 * H), 150.0);
  EXPECT_DOUBLE_EQ(d.rate(2 * H), 50.0);                    // 12 h from the peak
  EXPECT_DOUBLE_EQ(d.rate(14 * H + 7 * sim::kDay), 150.0);  // every day
  EXPECT_NEAR(d.rate(20 * H), 100.0, 1e-9);
  LoadCurve t;
  t.table = {{0, 10.0}, {3600 * S, 20.0}};
  EXPECT_EQ(t.rate(-5 * S), 10.0);  // before the first row: its rate
  EXPECT_EQ(t.rate(3599 * S), 10.0);
  EXPECT_EQ(t.rate(3600 * S), 20.0);
  EXPECT_EQ(t.rate(1000 * H), 20.0);
}

TEST(Autoscaler, HpaStepsWithToleranceRateLimitAndDownscaleWindow) {
  // 20 req/s -> 4 replicas; at 60 s 52 req/s wants ceil(10.4) = 11, but the default scale-up
  // policy allows +max(100 %, 4 pods) per 15 s: 8 at 60 s, 11 at 75 s. At 300 s 9 req/s wants 2,
  // held at 11 until the last recommendation of 11 (285 s) leaves the 300 s window: 2 at 585 s.
  const auto steps = models::autoscale(step_service(), 600 * S);
  const std::vector<std::pair<Tick, std::int32_t>> expected = {{0, 4}, {60 * S, 8}, {75 * S, 11}, {585 * S, 2}};
  EXPECT_EQ(steps, expected);
  // Within the tolerance nothing moves: 4 replicas carry 20 req/s at exactly the target, and
  // 21 req/s (ratio 1.05) stays at 4.
  ServiceSpec s = step_service();
  s.load.table = {{0, 20.0}, {60 * S, 21.0}};
  EXPECT_EQ(models::autoscale(s, 600 * S), (std::vector<std::pair<Tick, std::int32_t>>{{0, 4}}));
  // Clamped to max; no scale-down window: down as soon as the load falls.
  s = step_service();
  s.max_replicas = 6;
  s.autoscaler.scale_down_window = 0;
  EXPECT_EQ(models::autoscale(s, 600 * S),
            (std::vector<std::pair<Tick, std::int32_t>>{{0, 4}, {60 * S, 6}, {300 * S, 2}}));
}

TEST(Autoscaler, ReplicasAreJobsNewestRemovedFirst) {
  const auto jobs = models::replica_jobs(step_service(), 3, 7, 1, 600 * S);
  ASSERT_EQ(jobs.size(), 11u);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE(i);
    const Tick submit = i < 4 ? 0 : i < 8 ? 60 * S : 75 * S;
    EXPECT_EQ(jobs[i].submit, submit);
    // The two oldest live to the end; the 9 newer ones go at 585 s.
    EXPECT_EQ(jobs[i].withdraw_at, i < 2 ? 600 * S : 585 * S);
    EXPECT_EQ(jobs[i].runtime, jobs[i].withdraw_at - submit);
    EXPECT_EQ(jobs[i].gpus, 2);
    EXPECT_EQ(jobs[i].gpus_per_node, 2);
    EXPECT_EQ(jobs[i].kind, models::JobKind::Inference);
    EXPECT_EQ(jobs[i].service, 3);
    EXPECT_EQ(jobs[i].tenant, 7u);
    EXPECT_EQ(jobs[i].queue, 1u);
  }
}

TEST(ServiceSlo, TimeAndRequestAttainmentByHand) {
  ServiceSpec s;
  s.gpus_per_replica = 2;
  s.throughput = 4;
  s.load.table = {{0, 10.0}};
  // Two replicas all along, a third from 50 s: 8 < 10 req/s for 50 s, then 12 >= 10.
  const auto slo = models::evaluate_service(s, {{0, 100 * S}, {0, 100 * S}, {50 * S, 200 * S}}, 0, 100 * S);
  EXPECT_DOUBLE_EQ(slo.time_attainment, 0.5);
  EXPECT_DOUBLE_EQ(slo.request_attainment, (8.0 * 50 + 10.0 * 50) / 1000.0);
  EXPECT_DOUBLE_EQ(slo.mean_running, 2.5);
  EXPECT_DOUBLE_EQ(slo.replica_gpu_hours, 2.0 * 250 / 3600.0);
  EXPECT_DOUBLE_EQ(slo.requests, 1000.0);
}

// StepRates gives LoadCurve::rate's doubles at every step, for any start against the peak and any
// step that divides a day (and for those that do not: rate() itself).
TEST(LoadCurve, StepRatesAreTheRatesOfTheCurve) {
  LoadCurve daily;
  daily.mean_rate = 100;
  daily.diurnal_amplitude = 0.8;
  daily.peak = 20 * H + 123;
  LoadCurve table;
  table.table = {{-5 * S, 40.0}, {2 * H + 7, 95.5}, {30 * H, 10.0}, {50 * H + 999, 130.0}};
  LoadCurve flat = daily;
  flat.diurnal_amplitude = 0;
  for (const LoadCurve* curve : {&daily, &table, &flat})
    for (const Tick step : {S, 15 * S, 7 * S, Tick{250}})
      for (const Tick from : {Tick{0}, Tick{1234}, 21 * H, -3 * H - 5}) {
        SCOPED_TRACE("step " + std::to_string(step) + " from " + std::to_string(from));
        const Tick to = from + 3 * sim::kDay + 11;
        const models::StepRates rates(*curve, from, to, step);
        std::size_t differ = 0;
        for (Tick t = from; t < to; t += step) differ += rates.at(t) != curve->rate(t) ? 1 : 0;
        EXPECT_EQ(differ, 0u);
      }
}

// evaluate_service reads the curve once a second through a cursor (table), one number (flat) or one
// day of values (daily, over more than a day): the figures are those of LoadCurve::rate read
// every second, to the last bit, wherever the span starts against the peak and the second.
TEST(ServiceSlo, TheFiguresAreThoseOfTheCurveReadEverySecond) {
  auto by_hand = [](const ServiceSpec& s, const std::vector<std::pair<Tick, Tick>>& runs, Tick from, Tick to) {
    long double covered = 0, served = 0, demand = 0;
    for (Tick t = from; t < to; t += S) {
      std::int64_t running = 0;
      for (const auto& [a, b] : runs) running += a <= t && t < b ? 1 : 0;
      const double secs = sim::to_seconds(std::min(S, to - t));
      const double rate = s.load.rate(t), capacity = static_cast<double>(running) * s.throughput;
      if (capacity >= rate) covered += secs;
      served += std::min(rate, capacity) * secs;
      demand += rate * secs;
    }
    return std::array<double, 2>{static_cast<double>(covered / sim::to_seconds(to - from)),
                                 static_cast<double>(served / demand)};
  };
  ServiceSpec daily;
  daily.throughput = 30;
  daily.load.mean_rate = 100;
  daily.load.diurnal_amplitude = 0.8;
  daily.load.peak = 20 * H + 123;
  ServiceSpec table = daily;
  table.load.table = {{-5 * S, 40.0}, {2 * H + 7, 95.5}, {30 * H, 10.0}, {50 * H + 999, 130.0}};
  ServiceSpec flat = daily;
  flat.load.diurnal_amplitude = 0;
  const std::vector<std::pair<Tick, Tick>> runs = {
      {0, 70 * H}, {3 * H + 1, 20 * H}, {25 * H, 60 * H}, {26 * H, 27 * H}};
  for (const ServiceSpec* s : {&daily, &table, &flat})
    for (const auto& [from, to] : {std::pair{Tick{0}, 70 * H}, std::pair{Tick{1234}, 49 * H + 17},
                                   std::pair{21 * H, 70 * H - 1}, std::pair{5 * H, 6 * H}}) {
      SCOPED_TRACE(std::to_string(from) + " to " + std::to_string(to));
      const auto slo = models::evaluate_service(*s, runs, from, to);
      const auto expected = by_hand(*s, runs, from, to);
      EXPECT_EQ(slo.time_attainment, expected[0]);
      EXPECT_EQ(slo.request_attainment, expected[1]);
    }
}

namespace {

std::string scenario_text(int nodes, const std::string& service_extra = "") {
  return "name: svc\n"
         "cluster:\n  pools:\n    - {name: a100, nodes: " +
         std::to_string(nodes) +
         ", gpus_per_node: 8, gpu_type: A100}\n"
         "policy: fifo\n"
         "workload:\n  trace: tiny.csv\n"
         "services:\n"
         "  - name: chat\n"
         "    tenant: prod\n"
         "    gpus_per_replica: 2\n"
         "    throughput: 10\n"
         "    replicas: {min: 1, max: 16}\n"
         "    autoscaler: {target_utilization: 0.5}\n"
         "    load: {mean_rate: 40, diurnal_amplitude: 0.5, peak: 14h}\n"
         "    end: 2d\n" +
         service_extra;
}

std::vector<sim::InputError> errors_of(const std::string& text) {
  try {
    scenarios::parse_scenario(text, kInline);
  } catch (const sim::InputErrors& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected errors for\n" << text;
  return {};
}

}  // namespace

TEST(ServicesScenario, ParsesEveryField) {
  const auto sc = scenarios::parse_scenario(
      scenario_text(
          2,
          "  - name: batch-embed\n    tenant: research\n    queue: low\n    gpus_per_replica: 1\n"
          "    cpus_per_replica: 4\n    memory_gib_per_replica: 16\n    priority: 1000\n    preemptible: true\n"
          "    throughput: 2.5\n    replicas: {min: 0, max: 3}\n"
          "    autoscaler: {target_utilization: 0.8, interval: 30s, scale_up_window: 1m, scale_down_window: 0s, "
          "tolerance: 0.05}\n"
          "    load: {mean_rate: 5}\n    start: 1h\n"),
      kInline);
  ASSERT_EQ(sc.services.size(), 2u);
  const auto& a = sc.services[0];
  EXPECT_EQ(a.name, "chat");
  EXPECT_EQ(a.tenant, "prod");
  EXPECT_EQ(a.gpus_per_replica, 2);
  EXPECT_EQ(a.throughput, 10.0);
  EXPECT_EQ(a.max_replicas, 16);
  EXPECT_EQ(a.autoscaler.target_utilization, 0.5);
  EXPECT_EQ(a.autoscaler.interval, 15 * S);            // HPA's default sync period
  EXPECT_EQ(a.autoscaler.scale_down_window, 300 * S);  // and downscale stabilization
  EXPECT_EQ(a.load.mean_rate, 40.0);
  EXPECT_EQ(a.load.diurnal_amplitude, 0.5);
  EXPECT_EQ(a.end, 2 * sim::kDay);
  const auto& b = sc.services[1];
  EXPECT_EQ(b.queue, "low");
  EXPECT_EQ(b.cpus_per_replica, 4);
  EXPECT_EQ(b.memory_mib_per_replica, 16 * 1024);
  EXPECT_EQ(b.priority, 1000);
  EXPECT_TRUE(b.preemptible);
  EXPECT_EQ(b.min_replicas, 0);
  EXPECT_EQ(b.autoscaler.interval, 30 * S);
  EXPECT_EQ(b.autoscaler.scale_up_window, 60 * S);
  EXPECT_EQ(b.autoscaler.scale_down_window, 0);
  EXPECT_EQ(b.autoscaler.tolerance, 0.05);
  EXPECT_EQ(b.start, H);
  EXPECT_EQ(b.end, sim::kNever);
}

TEST(ServicesScenario, LoadFromCsvAndItsErrorsNameFileAndLine) {
  const std::string dir = std::filesystem::temp_directory_path() / ("headroom-svc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = dir + "/load.csv", bad = dir + "/bad.csv";
  std::ofstream(good) << "time,rate\n# comment\n0,10\n1h,25.5\n7200,0\n";
  std::ofstream(bad) << "time,rate\n0,10\n1h,-3\n";
  auto text = [&](const std::string& file) {
    std::string t = scenario_text(2);
    t.replace(t.find("{mean_rate: 40, diurnal_amplitude: 0.5, peak: 14h}"), 50, "{file: " + file + "}");
    return t;
  };
  const auto sc = scenarios::parse_scenario(text(good), kInline);
  const std::vector<std::pair<Tick, double>> rows = {{0, 10.0}, {H, 25.5}, {2 * H, 0.0}};
  EXPECT_EQ(sc.services.at(0).load.table, rows);
  const auto errs = errors_of(text(bad));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].file(), bad);
  EXPECT_EQ(errs[0].line(), 3);
  EXPECT_EQ(errs[0].message(),
            "expected a rate >= 0 (requests/s), got \"-3\" (in the load file of services[0].load.file)");
  // A device named as the load file is refused at 256 MiB, on its first line.
  if (std::filesystem::exists("/dev/zero")) {
    const auto dev = errors_of(text("/dev/zero"));
    ASSERT_EQ(dev.size(), 1u);
    EXPECT_EQ(dev[0].file(), "/dev/zero");
    EXPECT_EQ(dev[0].line(), 1);
    EXPECT_EQ(dev[0].message(),
              "more than 256 MiB, far more than a load curve ever holds: a device, an endless pipe or a log named in "
              "its place? (in the load file of services[0].load.file)");
  }
  std::filesystem::remove_all(dir);
}

TEST(ServicesScenario, BadFieldsAreErrorsWithLocations) {
  auto only = [](const std::string& text, const std::string& where, const std::string& message) {
    const auto errs = errors_of(text);
    ASSERT_EQ(errs.size(), 1u) << text;
    EXPECT_EQ(errs[0].where(), where);
    EXPECT_EQ(errs[0].message(), message);
  };
  std::string t = scenario_text(2);
  only(t.replace(t.find("{min: 1, max: 16}"), 17, "{min: 5, max: 3}"), "services[0].replicas.max",
       "expected max >= min (5), got \"3\"");
  t = scenario_text(2);
  only(t.replace(t.find("throughput: 10"), 14, "throughput: fast"), "services[0].throughput",
       "expected a number > 0 and < 1e+12, got \"fast\"");
  t = scenario_text(2);
  only(t.replace(t.find("target_utilization: 0.5"), 23, "target_utilization: 1.5"),
       "services[0].autoscaler.target_utilization", "expected a number from 0.01 to 1, got \"1.5\"");
  t = scenario_text(2);
  only(t.replace(t.find("{mean_rate: 40, diurnal_amplitude: 0.5, peak: 14h}"), 50, "{diurnal_amplitude: 0.5}"),
       "services[0].load", "expected either mean_rate (a parametric diurnal curve) or file (a CSV of time,rate rows)");
  only(scenario_text(2,
                     "  - name: chat\n    tenant: a\n    gpus_per_replica: 1\n    throughput: 1\n"
                     "    replicas: {min: 1, max: 1}\n    load: {mean_rate: 1}\n"),
       "services[1].name", "duplicate service name \"chat\" (first used at line 9)");
}

// The autoscaler is evaluated over the service's whole span before the run: a span of 274 years
// (576 M evaluations, minutes of CPU) is refused with what to change, and a long one stops at a
// signal (SIGINT / SIGTERM set the stop flag; the CLI reports it and exits 130).
TEST(ServicesRun, AServicesSpanIsBoundedAndItsEvaluationsStopOnASignal) {
  std::string text = scenario_text(2);
  text.replace(text.find("    end: 2d\n"), 12, "    end: 100000d\n");
  const auto sc = scenarios::parse_scenario(text, kInline);
  try {
    scenarios::build_workload(sc);
    FAIL() << "expected an InputError";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(e.where(), "services[0]");
    EXPECT_EQ(e.message(),
              "service chat runs 100000d 00:00:00 with its autoscaler every 15.0 s: 576,000,000 evaluations, more than "
              "the 50,000,000 modelled; give the service an end (or the scenario a shorter horizon) or a longer "
              "autoscaler.interval");
  }
  const ServiceSpec s = step_service();
  const Tick end = s.start + 70'000 * s.autoscaler.interval;
  sim::stop_requested() = true;
  EXPECT_THROW(models::autoscale(s, end), sim::Interrupted);
  sim::stop_requested() = false;
  EXPECT_FALSE(models::autoscale(s, end).empty());
}

TEST(ServicesRun, RoomyClusterMeetsTheSloAndCrowdedOneDoesNot) {
  auto run = [](int nodes) {
    auto sc = scenarios::parse_scenario(scenario_text(nodes), kInline);
    return planner::run_scenario(sc);
  };
  // 8 nodes (64 GPUs): the at most 16 replicas of 2 GPUs always fit next to the trace's jobs.
  const auto roomy = run(8);
  ASSERT_EQ(roomy.result.services.size(), 1u);
  const auto& a = roomy.result.services[0];
  EXPECT_EQ(a.name, "chat");
  EXPECT_EQ(a.from, 0);
  EXPECT_EQ(a.to, 2 * sim::kDay);
  EXPECT_GT(a.replicas, 2);
  EXPECT_EQ(a.replicas_withdrawn, 0);
  EXPECT_DOUBLE_EQ(a.time_attainment, 1.0);
  EXPECT_DOUBLE_EQ(a.request_attainment, 1.0);
  EXPECT_NEAR(a.mean_running, a.mean_wanted, 1e-9);
  // Load 20..60 req/s at 5 req/s per replica: between 4 and 12 replicas.
  EXPECT_GT(a.mean_running, 4.0);
  EXPECT_LT(a.mean_running, 12.0);
  // 1 node (8 GPUs): at most 4 replicas run, fewer while trace jobs hold GPUs.
  const auto crowded = run(1);
  const auto& b = crowded.result.services[0];
  EXPECT_LT(b.time_attainment, 0.9);
  EXPECT_LT(b.request_attainment, a.request_attainment);
  EXPECT_GT(b.replicas_withdrawn, 0);
  EXPECT_LE(b.mean_running, 4.0 + 1e-9);
  // The summary, the plan KPIs and the compare table read it.
  const auto s = results::summarize(crowded.result);
  EXPECT_EQ(s.slo_attainment, b.time_attainment);
  EXPECT_EQ(planner::kpi_value(s, planner::parse_target("slo_attainment >= 99%")), b.time_attainment);
  EXPECT_EQ(planner::kpi_value(s, planner::parse_target("service:chat.request_attainment >= 0.9")),
            b.request_attainment);
  EXPECT_FALSE(planner::kpi_value(s, planner::parse_target("service:nope.slo_attainment >= 0.9")).has_value());
  // The result file keeps every field.
  const std::string file =
      std::filesystem::temp_directory_path() / ("headroom-svc-" + std::to_string(::getpid()) + ".h5");
  results::write_hdf5(crowded.result, file);
  const auto back = results::read_hdf5(file);
  std::filesystem::remove(file);
  ASSERT_EQ(back.services.size(), 1u);
  const auto& c = back.services[0];
  EXPECT_EQ(c.name, b.name);
  EXPECT_EQ(c.tenant, b.tenant);
  EXPECT_EQ(c.gpus_per_replica, b.gpus_per_replica);
  EXPECT_EQ(c.min_replicas, b.min_replicas);
  EXPECT_EQ(c.max_replicas, b.max_replicas);
  EXPECT_EQ(c.throughput, b.throughput);
  EXPECT_EQ(c.from, b.from);
  EXPECT_EQ(c.to, b.to);
  EXPECT_EQ(c.replicas, b.replicas);
  EXPECT_EQ(c.replicas_withdrawn, b.replicas_withdrawn);
  EXPECT_EQ(c.time_attainment, b.time_attainment);
  EXPECT_EQ(c.request_attainment, b.request_attainment);
  EXPECT_EQ(c.mean_running, b.mean_running);
  EXPECT_EQ(c.mean_wanted, b.mean_wanted);
  EXPECT_EQ(c.replica_gpu_hours, b.replica_gpu_hours);
  EXPECT_EQ(c.requests, b.requests);
}

TEST(ServicesRun, CompareTableHasServiceRowsUnderEveryPolicy) {
  auto sc = scenarios::parse_scenario(scenario_text(1), kInline);
  const auto table = planner::compare_table(planner::compare(sc, {"fifo", "kubernetes", "kai", "slurm"}));
  const auto& names = table.columns[0].strings;
  const auto row = std::find(names.begin(), names.end(), "service:chat.slo_attainment");
  ASSERT_NE(row, names.end());
  const auto r = static_cast<std::size_t>(row - names.begin());
  for (std::size_t c = 2; c < table.columns.size(); ++c) {
    const double v = table.columns[c].numbers[r];
    EXPECT_GE(v, 0.0) << table.columns[c].name;
    EXPECT_LE(v, 1.0) << table.columns[c].name;
  }
}
