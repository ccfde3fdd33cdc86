// Issue #31, the planner's inputs: targets that no run can meet, `fields:` as sacct reads them, and
// calibrate's windows and written scenario. Each case failed before the issue was fixed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "planner/calibrate.hpp"
#include "planner/plan.hpp"
#include "planner/scorecard.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/workload.hpp"
#include "sim/errors.hpp"
#include "temp_dir.hpp"

using namespace headroom;

namespace {

const std::string kSlurm = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/slurm/";

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const sim::InputError& e) {
    return e.what();
  } catch (const sim::InputErrors& e) {
    return e.what();
  }
  return "";
}

// The Slurm site of tests/data/imports/slurm with `fields:` set to `fields`, in `dir`.
std::string site_with_fields(const headroom::testing::TempDir& dir, const std::string& fields) {
  return dir.write("site.yaml", "name: f\ncluster: {slurm_conf: " + kSlurm +
                                    "slurm.conf}\npolicy: fifo\nworkload: {trace: " + kSlurm + "may.sacct, fields: \"" +
                                    fields + "\"}\n");
}

}  // namespace

TEST(HostileTargets, JainAboveOneCanNeverBeMet) {
  EXPECT_EQ(error_of([] { planner::parse_target("jain >= 1.5"); }),
            "--target \"jain >= 1.5\": can never be met: jain is never above 1");
  EXPECT_NO_THROW(planner::parse_target("jain <= 1.5"));  // always met, but not wrong
}

TEST(HostileTargets, RatioAbove100PercentCanNeverBeMet) {
  EXPECT_EQ(error_of([] { planner::parse_target("utilization > 100%"); }),
            "--target \"utilization > 100%\": can never be met: utilization is never above 1 (100%)");
}

TEST(HostileTargets, NegativeWaitCanNeverBeMet) {
  EXPECT_EQ(error_of([] { planner::parse_target("p95_wait <= -1h"); }),
            "--target \"p95_wait <= -1h\": can never be met: p95_wait is never below 0");
  EXPECT_EQ(error_of([] { planner::parse_target("p95_wait < 0s"); }),
            "--target \"p95_wait < 0s\": can never be met: p95_wait is never below 0");
  EXPECT_NO_THROW(planner::parse_target("p95_wait <= 0s"));
}

TEST(HostileTargets, ScenarioTargetNamesItsTextAndLine) {
  headroom::testing::TempDir dir;
  dir.write("t.csv", "id,tenant,queue,submit,gpus,runtime\n1,a,q,0,1,60\n");
  const std::string path = dir.write("s.yaml",
                                     "name: s\n"
                                     "cluster: {pools: [{name: p, nodes: 1, gpus_per_node: 8, gpu_type: H100}]}\n"
                                     "policy: fifo\n"
                                     "workload: {trace: t.csv}\n"
                                     "targets:\n"
                                     "  - \"jain >= 1.5\"\n");
  const auto sc = scenarios::load_scenario(path);
  EXPECT_EQ(error_of([&] { planner::scenario_targets(sc, {}); }),
            path + ":6:5: targets: \"jain >= 1.5\": can never be met: jain is never above 1");
}

TEST(HostileFields, MisspeltFieldIsAnErrorAtItsLine) {
  headroom::testing::TempDir dir;
  const std::string path = site_with_fields(dir, "jobid,usr,account,submit,start,end,state,alloctres");
  // Line 4, at the list's opening quote.
  const std::string column =
      std::to_string(std::string("workload: {trace: " + kSlurm + "may.sacct, fields: ").size() + 1);
  EXPECT_EQ(error_of([&] { scenarios::load_scenario(path); }),
            path + ":4:" + column +
                ": workload.fields: unknown sacct field \"usr\" (sacct --format stops at it: Invalid field "
                "requested); did you mean \"User\"?");
}

TEST(HostileFields, AllIsRefused) {
  headroom::testing::TempDir dir;
  const std::string path = site_with_fields(dir, "ALL");
  EXPECT_NE(error_of([&] { scenarios::load_scenario(path); }).find("\"ALL\" stands for ALL"), std::string::npos);
}

TEST(HostileFields, PrefixesReadAsSacctReadsThem) {
  // sacct --format takes any prefix of a field's name, in any case (src/sacct/options.c).
  headroom::testing::TempDir a, b;
  const auto full = scenarios::build_workload(scenarios::load_scenario(site_with_fields(a, "xdmod")));
  const auto abbreviated = scenarios::build_workload(scenarios::load_scenario(site_with_fields(
      b,
      "JOBID,jobidr,cl,part,qos,acc,gr,gid,user,uid,sub,elig,start,end,elapsed,exit,state,nn,ncpus,reqcpus,reqmem,reqt,"
      "alloct,timelimit,nodel,jobn")));
  ASSERT_EQ(abbreviated.jobs.size(), full.jobs.size());
  for (std::size_t i = 0; i < full.jobs.size(); ++i) {
    EXPECT_EQ(abbreviated.jobs[i].submit, full.jobs[i].submit);
    EXPECT_EQ(abbreviated.jobs[i].gpus, full.jobs[i].gpus);
    EXPECT_EQ(abbreviated.jobs[i].runtime, full.jobs[i].runtime);
    EXPECT_EQ(abbreviated.jobs[i].trace_start, full.jobs[i].trace_start);
  }
}

namespace {

planner::CalibrateRequest site_request(sim::Tick fit_from, sim::Tick fit_to, sim::Tick test_from, sim::Tick test_to) {
  planner::CalibrateRequest req;
  req.scenario = scenarios::load_scenario(kSlurm + "site.yaml");
  req.fit_from = fit_from;
  req.fit_to = fit_to;
  req.test_from = test_from;
  req.test_to = test_to;
  return req;
}

}  // namespace

TEST(HostileCalibrate, TestWindowEqualToFitWindowIsRefused) {
  const auto req = site_request(0, sim::kDay, 0, sim::kDay);
  EXPECT_EQ(error_of([&] { planner::calibrate(req); }),
            "--test: the test window 0s:1d equals the fit window 0s:1d; a held-out window must not share time with "
            "it (e.g. --fit 0:7d --test 7d:14d)");
}

TEST(HostileCalibrate, TestWindowWithoutJobsIsRefused) {
  const auto req = site_request(0, sim::kDay, 5 * sim::kDay, 6 * sim::kDay);
  EXPECT_EQ(error_of([&] { planner::calibrate(req); }), "--test: the test window 5d:6d holds no job of " + kSlurm +
                                                            "may.sacct (its jobs are submitted from 0s to 2m)");
}

TEST(HostileCalibrate, AWindowBeforeACleanedLogsFirstJobNamesWindowsThatHoldJobs) {
  // LLNL Atlas's cleaned log (PWA) submits its first job 3,279,379 s in, its last at 19,951,051 s:
  // the usual --fit 7d:35d holds nothing, and the error says which days do.
  headroom::testing::TempDir dir;
  dir.write("t.csv",
            "id,tenant,queue,submit,gpus,runtime\n1,a,q,3279379,1,60\n2,a,q,9000000,1,60\n"
            "3,a,q,19951051,1,60\n");
  const std::string path = dir.write("s.yaml",
                                     "name: s\n"
                                     "cluster: {pools: [{name: p, nodes: 1, gpus_per_node: 8, gpu_type: H100}]}\n"
                                     "policy: fifo\n"
                                     "workload: {trace: t.csv}\n");
  planner::CalibrateRequest req;
  req.scenario = scenarios::load_scenario(path);
  req.fit_from = 7 * sim::kDay;
  req.fit_to = 35 * sim::kDay;
  req.test_from = 35 * sim::kDay;
  req.test_to = 49 * sim::kDay;
  EXPECT_EQ(error_of([&] { planner::calibrate(req); }),
            "--fit: the fit window 7d:35d holds no job of " + req.scenario.workload.trace +
                " (its jobs are submitted from 3279379s to 19951051s, days 38 to 230: e.g. --fit 38d:66d --test "
                "66d:80d)");
}

TEST(HostileCalibrate, WrittenScenarioElsewhereNamesEveryFileRelativeToItself) {
  headroom::testing::TempDir dir;
  std::filesystem::create_directories(dir.path("out/deep"));
  const std::string out = dir.path("out/deep/cal.yaml");
  const auto original = scenarios::load_scenario(kSlurm + "site.yaml");
  planner::CalibrateResult r;
  planner::Candidate c;
  c.policy = "slurm";
  c.label = "slurm, as given";
  planner::CandidateScore score;
  score.candidate = c;
  r.candidates.push_back(score);
  r.baseline_policy = "slurm";
  std::ofstream(out) << planner::calibrated_yaml(r, original, out);
  // slurm_conf (under cluster: and policy:), sacctmgr_qos, sshare and the trace all still resolve.
  scenarios::Scenario written;
  EXPECT_EQ(error_of([&] { written = scenarios::load_scenario(out); }), "");
  EXPECT_EQ(written.cluster.total_gpus(), original.cluster.total_gpus());
  EXPECT_EQ(written.policy.params.size(), original.policy.params.size());
}
