// Prime time (models/prime_time.hpp, docs/fidelity.md "Prime time"): the local clock with its
// summer time rules, the scenario block, the simulation holding long jobs until prime time ends,
// the finding in recorded starts, and calibrate offering it as a rule.
#include "models/prime_time.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "planner/calibrate.hpp"
#include "policies/registry.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"
#include "traces/import.hpp"
#include "traces/infer.hpp"

using namespace headroom;
using models::DstRule;
using models::PrimeTime;
using sim::kHour;
using sim::kMinute;

namespace {

constexpr std::int64_t kMs = 1000;
// Monday 23 September 1996, 00:00:00 UTC (the KTH SP2 log's first day).
constexpr std::int64_t kMonday = 843436800;

PrimeTime weekdays_8_to_17(DstRule dst = DstRule::None) {
  PrimeTime p;
  p.longer_than = 4 * kHour;
  p.from_minute = 8 * 60;
  p.to_minute = 17 * 60;
  p.utc_offset_minutes = 60;
  p.dst = dst;
  return p;
}

}  // namespace

TEST(PrimeTimeClock, SummerTimeStartsAndEndsOnTheRulesDays) {
  // EU: 30 March 1997 01:00 UTC on, 27 October 1996 01:00 UTC off.
  EXPECT_EQ(models::local_time(859683600 * kMs - 1, 60, DstRule::Eu).ms_of_day, 2 * kHour - 1);
  EXPECT_EQ(models::local_time(859683600 * kMs, 60, DstRule::Eu).ms_of_day, 3 * kHour);
  EXPECT_EQ(models::local_time(846378000 * kMs - 1, 60, DstRule::Eu).ms_of_day, 3 * kHour - 1);
  EXPECT_EQ(models::local_time(846378000 * kMs, 60, DstRule::Eu).ms_of_day, 2 * kHour);
  // US (1987-2006): 2 April 2000 02:00 PST on, 29 October 2000 02:00 PDT off.
  EXPECT_EQ(models::local_time(954669600 * kMs - 1, -480, DstRule::Us).ms_of_day, 2 * kHour - 1);
  EXPECT_EQ(models::local_time(954669600 * kMs, -480, DstRule::Us).ms_of_day, 3 * kHour);
  EXPECT_EQ(models::local_time(972810000 * kMs - 1, -480, DstRule::Us).ms_of_day, 2 * kHour - 1);
  EXPECT_EQ(models::local_time(972810000 * kMs, -480, DstRule::Us).ms_of_day, 1 * kHour);
  // US (2007 on): 11 March 2007, 4 November 2007.
  EXPECT_EQ(models::local_time(1173607200 * kMs, -480, DstRule::Us).ms_of_day, 3 * kHour);
  EXPECT_EQ(models::local_time(1194166800 * kMs, -480, DstRule::Us).ms_of_day, 1 * kHour);
  // Without a rule the standard offset all year; weekdays from Monday.
  const models::LocalTime mon = models::local_time(kMonday * kMs + 23 * kHour + 30 * kMinute, 60, DstRule::None);
  EXPECT_EQ(mon.weekday, 1);  // 00:30 on Tuesday in UTC+01:00
  EXPECT_EQ(mon.ms_of_day, 30 * kMinute);
  EXPECT_EQ(models::dst_rule_of_zone("Europe/Stockholm"), DstRule::Eu);
  EXPECT_EQ(models::dst_rule_of_zone("US/Pacific"), DstRule::Us);
  EXPECT_EQ(models::dst_rule_of_zone("Asia/Tokyo"), DstRule::None);
}

TEST(PrimeTimeClock, ReleaseIsTheEndOfPrimeTimeOnWorkingDaysOnly) {
  const PrimeTime p = weekdays_8_to_17();
  // Monday 12:00 UTC = 13:00 local: held until 17:00 local, 4 h later.
  EXPECT_EQ(p.release(12 * kHour, kMonday), 16 * kHour);
  // 07:59 local is before prime time; 17:00 local is after it.
  EXPECT_EQ(p.release(6 * kHour + 59 * kMinute, kMonday), 6 * kHour + 59 * kMinute);
  EXPECT_EQ(p.release(16 * kHour, kMonday), 16 * kHour);
  EXPECT_EQ(p.release(7 * kHour, kMonday), 16 * kHour);  // 08:00 local sharp: held
  // Saturday and Sunday are not prime time.
  EXPECT_EQ(p.release(5 * sim::kDay + 12 * kHour, kMonday), 5 * sim::kDay + 12 * kHour);
  EXPECT_EQ(p.release(6 * sim::kDay + 12 * kHour, kMonday), 6 * sim::kDay + 12 * kHour);
  // In EU summer time (September 1996) the same local hours are an hour earlier in UTC.
  EXPECT_EQ(weekdays_8_to_17(DstRule::Eu).release(12 * kHour, kMonday), 15 * kHour);
  EXPECT_TRUE(p.holds(5 * kHour));
  EXPECT_FALSE(p.holds(4 * kHour));
  EXPECT_FALSE(p.holds(-1));  // no time limit: not held
  EXPECT_EQ(p.describe(), "jobs over 4h, Mon-Fri 08:00-17:00 (UTC+01:00)");
}

TEST(PrimeTimeClock, DayListsReadAndWriteBack) {
  std::uint8_t d = 0;
  ASSERT_TRUE(models::parse_days("Mon-Fri", d));
  EXPECT_EQ(d, 0x1f);
  ASSERT_TRUE(models::parse_days("sat, Sun", d));
  EXPECT_EQ(d, 0x60);
  ASSERT_TRUE(models::parse_days("Mon,Wed-Fri", d));
  EXPECT_EQ(models::days_text(d), "Mon,Wed-Fri");
  EXPECT_EQ(models::days_text(0x03), "Mon,Tue");
  EXPECT_FALSE(models::parse_days("Fri-Mon", d));
  EXPECT_FALSE(models::parse_days("Monday", d));
  EXPECT_FALSE(models::parse_days("", d));
}

namespace {
const std::string kScenario = std::string(R"(name: pt
cluster:
  pools: [{name: p, nodes: 1, gpus_per_node: 1, gpu_type: A100}]
policy: {name: fifo}
workload: {format: swf, trace: )") +
                              HEADROOM_SOURCE_DIR + R"(/bench/data/KTH-SP2-1996-2.1-cln.swf.gz}
prime_time:
)";
}

TEST(PrimeTimeScenario, TheBlockIsReadAndBadValuesNameTheirLine) {
  const scenarios::Scenario s = scenarios::parse_scenario(
      kScenario + "  longer_than: 4h\n  days: Mon-Fri\n  hours: \"08:00-17:00\"\n  utc_offset: \"+01:00\"\n  dst: eu\n",
      "pt.yaml");
  EXPECT_EQ(s.prime_time.longer_than, 4 * kHour);
  EXPECT_EQ(s.prime_time.days, 0x1f);
  EXPECT_EQ(s.prime_time.from_minute, 480);
  EXPECT_EQ(s.prime_time.to_minute, 1020);
  EXPECT_EQ(s.prime_time.utc_offset_minutes, 60);
  EXPECT_EQ(s.prime_time.dst, DstRule::Eu);
  // trace-infer prints the block to paste; it reads back as the same rule.
  PrimeTime west = weekdays_8_to_17(DstRule::Us);
  west.utc_offset_minutes = -480;
  west.days = 0x60;
  EXPECT_EQ(west.yaml_flow(),
            "{longer_than: 4h, days: \"Sat,Sun\", hours: \"08:00-17:00\", utc_offset: \"-08:00\", dst: us}");
  const std::string flow = kScenario;
  EXPECT_EQ(
      scenarios::parse_scenario(flow.substr(0, flow.size() - 1) + " " + west.yaml_flow() + "\n", "pt.yaml").prime_time,
      west);
  const auto error_of = [](const std::string& block) {
    try {
      scenarios::parse_scenario(kScenario + block, "pt.yaml");
    } catch (const sim::InputErrors& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of("  longer_than: 4h\n  hours: \"18:00-08:00\"\n")
                .find("pt.yaml:8:10: prime_time.hours: expected local hours"),
            std::string::npos)
      << error_of("  longer_than: 4h\n  hours: \"18:00-08:00\"\n");
  EXPECT_NE(error_of("  longer_than: 4h\n  dst: cet\n").find("prime_time.dst: expected none, eu or us"),
            std::string::npos);
  EXPECT_NE(error_of("  longer_than: 4h\n  days: Fri-Mon\n").find("prime_time.days: expected days like Mon-Fri"),
            std::string::npos);
  EXPECT_NE(error_of("  longer_than: 4h\n  utc_offset: \"+1\"\n").find("prime_time.utc_offset"), std::string::npos);
  EXPECT_NE(error_of("  days: Mon-Fri\n").find("longer_than"), std::string::npos);
}

namespace {
// Starts of the jobs of `w` under fifo on one 1-GPU node with prime time `p`.
std::vector<sim::Tick> starts_with(const models::Workload& w, const PrimeTime& p) {
  const models::ClusterSpec c = headroom::testing::cluster(2, 1);
  auto policy = policies::make_policy("fifo", {}, 1);
  simulation::SimulationOptions o;
  o.prime_time = p;
  simulation::Simulation sim(w, c, *policy, nullptr, o);
  sim.run();
  std::vector<sim::Tick> out;
  for (std::size_t j = 0; j < w.jobs.size(); ++j) out.push_back(sim.job_start(static_cast<models::JobIndex>(j)));
  return out;
}
}  // namespace

TEST(PrimeTimeSimulation, LongJobsEnterTheQueueWhenPrimeTimeEndsAndKeepTheirSubmitTime) {
  // Monday 10:00 UTC (11:00 local): a 5-hour job with a 6-hour limit and a 1-hour job with a
  // 2-hour limit; on Saturday at the same hour another 6-hour-limit job.
  headroom::testing::WorkloadBuilder b;
  b.job(10 * 3600, 1, 5 * 3600).job(10 * 3600, 1, 3600).job(5 * 86400 + 10 * 3600, 1, 5 * 3600);
  models::Workload w = b.build();
  w.jobs[0].walltime = 6 * kHour;
  w.jobs[1].walltime = 2 * kHour;
  w.jobs[2].walltime = 6 * kHour;
  w.meta.unix_start = kMonday;
  const std::vector<sim::Tick> held = starts_with(w, weekdays_8_to_17());
  EXPECT_EQ(held[0], 16 * kHour);                  // 17:00 local
  EXPECT_EQ(held[1], 10 * kHour);                  // at once
  EXPECT_EQ(held[2], 5 * sim::kDay + 10 * kHour);  // Saturday: at once
  const std::vector<sim::Tick> free = starts_with(w, PrimeTime{});
  EXPECT_EQ(free[0], 10 * kHour);
  // The run's note says how many jobs the rule holds and for how long.
  EXPECT_EQ(scenarios::prime_time_note(weekdays_8_to_17(), w).value_or(""),
            "prime time: jobs over 4h, Mon-Fri 08:00-17:00 (UTC+01:00) holds 1 of the 2 jobs over its bound until it "
            "ends, 6 h in all (docs/fidelity.md, \"Prime time\")");
  EXPECT_FALSE(scenarios::prime_time_note(PrimeTime{}, w).has_value());
}

namespace {
// A month of recorded jobs from Monday kMonday: short jobs (3 h limit) start every hour of every
// day; long jobs (8 h limit) start every hour too, except 08:00-17:00 UTC+01:00 on working days
// when `held` says so (then they start at 17:00, or 9 hours later: spread over 17:00-01:00).
enum class Held { None, UntilItEnds, SpreadOverTheNight };
models::Workload recorded_month(Held held) {
  headroom::testing::WorkloadBuilder b;
  for (int day = 0; day < 28; ++day)
    for (int h = 0; h < 24; ++h) {
      const double t = (day * 24 + h) * 3600.0;
      b.job(t, 1, 1800);
      b.job(t, 1, 1800);
    }
  models::Workload w = b.build();
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    models::Job& j = w.jobs[i];
    const bool longer = i % 2 == 1;
    j.walltime = longer ? 8 * kHour : 3 * kHour;
    j.trace_start = j.submit;
    const std::int64_t local_h = (j.submit / kHour + 1) % 24, day = (j.submit / kHour + 1) / 24;
    if (held != Held::None && longer && day % 7 < 5 && local_h >= 8 && local_h < 17)
      j.trace_start += (held == Held::UntilItEnds ? 17 - local_h : 9) * kHour;  // at 17:00, or 17:00 to 01:00
  }
  w.meta.unix_start = kMonday;
  return w;
}
}  // namespace

TEST(PrimeTimeFinding, RecordedStartsThatAvoidWorkingHoursGiveTheRuleAndUniformOnesDoNot) {
  PrimeTime p;
  traces::PrimeTimeEvidence e;
  traces::detect_prime_time(recorded_month(Held::UntilItEnds), 60, DstRule::None, p, e);
  ASSERT_TRUE(p.enabled());
  EXPECT_EQ(p.longer_than, 4 * kHour);  // over 1 h or 2 h, the 3-hour jobs count as long too
  EXPECT_EQ(p.from_minute, 8 * 60);
  EXPECT_EQ(p.to_minute, 17 * 60);
  EXPECT_EQ(p.days, 0x1f);
  EXPECT_EQ(e.long_jobs, 672);
  EXPECT_DOUBLE_EQ(e.long_inside, 0.0);
  EXPECT_NEAR(e.long_release, 10.0 * 20 / 672, 1e-12);  // 9 held + the one submitted at 17:00, 20 days
  traces::detect_prime_time(recorded_month(Held::None), 60, DstRule::None, p, e);
  EXPECT_FALSE(p.enabled());
  // Long jobs that do not start in working hours but are not released when they end (they start
  // spread over the night): their own rhythm, not a rule.
  traces::detect_prime_time(recorded_month(Held::SpreadOverTheNight), 60, DstRule::None, p, e);
  EXPECT_FALSE(p.enabled());
  // Without a calendar origin there is no local clock.
  models::Workload undated = recorded_month(Held::UntilItEnds);
  undated.meta.unix_start = -1;
  traces::detect_prime_time(undated, 60, DstRule::None, p, e);
  EXPECT_FALSE(p.enabled());
}

TEST(PrimeTimeFinding, TheLocalClockComesFromTheSwfHeaderOrFromItsStartTime) {
  // A header with TimeZone (KTH's), one without it in summer time (as CEA Curie's and RICC's
  // headers have only TimeZoneString and StartTime) and one in Tokyo.
  const auto clock_of = [](const std::string& header) {
    const std::string path = std::string(::testing::TempDir()) + "/prime-clock.swf";
    {
      std::ofstream out(path);
      out << header << "1 0 10 100 1 -1 -1 1 3600 -1 1 1 1 -1 1 -1 -1 -1\n";
    }
    traces::ImportOptions o;
    o.format = traces::Format::Swf;
    const models::Workload w = traces::import_trace(path, o);
    const traces::Inference inf = traces::infer_system(w, sim::kDay, 1, path);
    return inf.clock_known ? inf.utc_offset_minutes : -9999;
  };
  EXPECT_EQ(clock_of("; UnixStartTime: 843480031\n; TimeZone: 3600\n; TimeZoneString: Europe/Stockholm\n"), 60);
  EXPECT_EQ(clock_of("; UnixStartTime: 843480031\n; TimeZoneString: Europe/Stockholm\n"
                     "; StartTime: Mon Sep 23 14:00:31 CEST 1996\n"),
            60);  // 12:00:31 UTC read as 14:00:31: UTC+2 in summer time, UTC+1 standard
  EXPECT_EQ(clock_of("; UnixStartTime: 1296571124\n; TimeZoneString: Europe/Paris\n"
                     "; StartTime: Tue Feb 01 15:38:44 CET 2011\n"),
            60);
  EXPECT_EQ(clock_of("; UnixStartTime: 1272639895\n; TimeZoneString: Asia/Tokyo\n"
                     "; StartTime: Sat May 01 00:04:55 JST 2010\n"),
            540);
  EXPECT_EQ(clock_of("; UnixStartTime: 1272639895\n"), -9999);  // no clock: prime time is not looked for
}

TEST(PrimeTimeCalibrate, OfferedOnTheScenarioAsGivenWhenTheLogShowsIt) {
  traces::Inference fit;
  fit.recorded = 10;
  fit.prime_time = weekdays_8_to_17();
  scenarios::Scenario s;
  s.cluster.pools.push_back({"p", 4, 1, "A100", 0, 0});
  s.policy.name = "fifo";
  const auto cands = planner::calibration_candidates(fit, s, planner::CalibrateFamily::Auto, 0, "");
  ASSERT_FALSE(cands.empty());
  const planner::Candidate& c = cands.back();
  EXPECT_EQ(c.label, "as given, with the prime time the recorded starts show");
  EXPECT_TRUE(c.as_given_policy);
  EXPECT_EQ(c.prime_time, fit.prime_time);
  EXPECT_EQ(c.parameters(), 3u);
  // A scenario with prime time of its own is not offered another.
  s.prime_time = weekdays_8_to_17();
  for (const auto& x : planner::calibration_candidates(fit, s, planner::CalibrateFamily::Auto, 0, ""))
    EXPECT_FALSE(x.prime_time.enabled());
}

TEST(PrimeTimeCalibrate, OnTheKthLogTheRuleIsFoundChosenAndWrittenAsAScenarioThatRuns) {
  // The bundled KTH SP2 log (bench/data/README.md): the first pair of bench/RESULTS.md's table.
  planner::CalibrateRequest req;
  req.scenario = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/bench/scenarios/kth-sp2-slurm.yaml");
  std::tie(req.fit_from, req.fit_to) = planner::parse_span("28d:56d", "--fit");
  std::tie(req.test_from, req.test_to) = planner::parse_span("56d:70d", "--test");
  const planner::CalibrateResult r = planner::calibrate(req);
  ASSERT_FALSE(r.as_given);
  const planner::Candidate& c = r.candidates[r.best].candidate;
  EXPECT_EQ(c.label, "as given, with the prime time the recorded starts show");
  EXPECT_EQ(c.prime_time.longer_than, 4 * kHour);
  EXPECT_EQ(c.prime_time.to_minute, 17 * 60);
  EXPECT_EQ(c.prime_time.utc_offset_minutes, 60);
  EXPECT_EQ(c.prime_time.dst, DstRule::None);
  const std::string out = std::string(::testing::TempDir()) + "/kth-calibrated.yaml";
  const std::string yaml = planner::calibrated_yaml(r, req.scenario, out);
  EXPECT_NE(yaml.find("prime_time:\n  longer_than: 4h\n  days: Mon-Fri\n"), std::string::npos) << yaml;
  const scenarios::Scenario back = scenarios::parse_scenario(yaml, out);
  EXPECT_EQ(back.prime_time, c.prime_time);
  EXPECT_EQ(back.policy.name, "slurm");
  // The held-out replay improves on the scenario as given (bench/RESULTS.md's first row).
  EXPECT_LT(r.calibrated_test.median_abs_error_s, r.baseline_test.median_abs_error_s);
  EXPECT_LT(r.calibrated_test.mean_abs_error_s, r.baseline_test.mean_abs_error_s);
}
