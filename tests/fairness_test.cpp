// Fairness metrics (results/fairness.hpp) on hand-made results with values worked out by hand.
#include "results/fairness.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "models/observer.hpp"
#include "planner/plan.hpp"
#include "results/summary.hpp"
#include "sim/errors.hpp"

using namespace headroom;
using results::JobRecord;

namespace {

constexpr sim::Tick S = sim::kSecond;

JobRecord job(std::uint32_t tenant, std::int32_t gpus, sim::Tick submit, sim::Tick start, sim::Tick end,
              sim::Tick runtime, std::uint8_t state) {
  JobRecord j;
  j.tenant = tenant;
  j.gpus = gpus;
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.runtime = runtime;
  j.state = state;
  return j;
}

constexpr std::uint8_t kCompleted = 2, kRejected = 5, kUnfinished = 6;

// 8 GPUs for 100 s. Tenant a holds 4 GPUs all along; tenant b waits 50 s, then holds 2 GPUs.
// a also has a job still pending at the end (submitted at 90 s) and b one rejected job.
results::RunResult two_tenants() {
  results::RunResult r;
  r.tenants = {"a", "b"};
  r.total_gpus = 8;
  r.sim_start = 0;
  r.sim_end = 100 * S;
  r.jobs.push_back(job(0, 4, 0, 0, 100 * S, 100 * S, kCompleted));
  r.jobs.push_back(job(1, 2, 0, 50 * S, 100 * S, 50 * S, kCompleted));
  r.jobs.push_back(job(0, 8, 90 * S, -1, -1, 10 * S, kUnfinished));
  r.jobs.push_back(job(1, 1, 10 * S, -1, -1, 10 * S, kRejected));
  auto& ts = r.timeseries;
  ts.time = {0, 50 * S, 100 * S};
  ts.tenant_used_gpus = {4, 0, 4, 2, 0, 0};
  ts.tenant_pending_jobs = {0, 1, 0, 0, 0, 0};
  return r;
}

}  // namespace

TEST(Fairness, SharesJainAndEntitlementFromEqualWeights) {
  results::FairnessOptions opt;
  opt.starvation = 30 * S;
  const auto f = results::compute_fairness(two_tenants(), opt);
  ASSERT_EQ(f.tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(f.tenants[0].entitlement, 0.5);
  EXPECT_DOUBLE_EQ(f.tenants[1].entitlement, 0.5);
  EXPECT_DOUBLE_EQ(f.tenants[0].share, 0.5);    // 4 GPUs x 100 s / (8 x 100 s)
  EXPECT_DOUBLE_EQ(f.tenants[1].share, 0.125);  // 2 GPUs x 50 s / 800 GPU-s
  EXPECT_DOUBLE_EQ(f.tenants[0].share_ratio, 1.0);
  EXPECT_DOUBLE_EQ(f.tenants[1].share_ratio, 0.25);
  EXPECT_DOUBLE_EQ(f.min_share_ratio, 0.25);
  // x = (1, 0.25): (1.25)^2 / (2 x 1.0625) = 25/34.
  EXPECT_DOUBLE_EQ(f.jain, 25.0 / 34.0);
  EXPECT_EQ(f.tenants[0].jobs, 2);
  EXPECT_EQ(f.tenants[1].jobs, 2);
}

TEST(Fairness, WeightsAndExplicitEntitlement) {
  results::FairnessOptions opt;
  opt.weights = {3, 1};
  auto f = results::compute_fairness(two_tenants(), opt);
  EXPECT_DOUBLE_EQ(f.tenants[0].entitlement, 0.75);
  EXPECT_DOUBLE_EQ(f.tenants[1].entitlement, 0.25);
  // x = (2/3, 1/2): (7/6)^2 / (2 x 25/36) = 49/50.
  EXPECT_NEAR(f.jain, 0.98, 1e-15);
  // A policy-defined entitlement wins over the weights.
  opt.entitlement = {0.5, 0.5};
  f = results::compute_fairness(two_tenants(), opt);
  EXPECT_DOUBLE_EQ(f.tenants[0].entitlement, 0.5);
  EXPECT_DOUBLE_EQ(f.jain, 25.0 / 34.0);
  // Weights looked up by name; unnamed tenants weigh 1.
  const auto w = results::tenant_weights(two_tenants(), {"b", "zz"}, {4, 9});
  EXPECT_EQ(w, (std::vector<double>{1, 4}));
}

TEST(Fairness, WeightsFromTheScenarioTextOfAResult) {
  auto r = two_tenants();
  r.scenario_text = "name: x\ntenants:\n  - name: b\n    weight: 3\n";
  EXPECT_EQ(results::weights_from_scenario_text(r), (std::vector<double>{1, 3}));
  r.scenario_text = "{not: yaml: at all";
  EXPECT_EQ(results::weights_from_scenario_text(r), (std::vector<double>{1, 1}));
}

TEST(Fairness, MaxWaitAndStarvationCountPendingButNotRejectedJobs) {
  results::FairnessOptions opt;
  opt.starvation = 30 * S;
  const auto f = results::compute_fairness(two_tenants(), opt);
  EXPECT_DOUBLE_EQ(f.tenants[0].max_wait_s, 10.0);  // the pending job: 100 s - 90 s
  EXPECT_DOUBLE_EQ(f.tenants[1].max_wait_s, 50.0);  // the rejected job (90 s) does not count
  EXPECT_EQ(f.tenants[0].starved, 0);
  EXPECT_EQ(f.tenants[1].starved, 1);
  EXPECT_EQ(f.starved, 1);
  EXPECT_DOUBLE_EQ(f.max_wait_s, 50.0);
  opt.starvation = 50 * S;  // strictly longer than the threshold
  EXPECT_EQ(results::compute_fairness(two_tenants(), opt).starved, 0);
}

TEST(Fairness, DominantShareOverGpuCpuAndMemory) {
  results::FairnessOptions opt;
  opt.resources.push_back(results::ResourceUse{"cpu", 100, {10, 60, 0, 0}});
  const auto f = results::compute_fairness(two_tenants(), opt);
  EXPECT_DOUBLE_EQ(f.tenants[0].dominant_share, 0.5);  // GPU 0.5 > CPU 10 x 100 s / (100 x 100 s)
  EXPECT_EQ(f.tenants[0].dominant_resource, "gpu");
  EXPECT_DOUBLE_EQ(f.tenants[1].dominant_share, 0.3);  // CPU 60 x 50 s / 10,000 > GPU 0.125
  EXPECT_EQ(f.tenants[1].dominant_resource, "cpu");
  EXPECT_DOUBLE_EQ(f.max_dominant_share, 0.5);
}

TEST(Fairness, JainOverTimeSkipsSamplesWithoutActiveTenants) {
  const auto f = results::compute_fairness(two_tenants());
  ASSERT_EQ(f.jain_over_time.size(), 3u);
  EXPECT_DOUBLE_EQ(f.jain_over_time[0], 0.5);  // a at its share, b pending with nothing: (1, 0)
  EXPECT_DOUBLE_EQ(f.jain_over_time[1], 0.9);  // (1, 0.5): 2.25 / 2.5
  EXPECT_TRUE(std::isnan(f.jain_over_time[2]));
  EXPECT_DOUBLE_EQ(f.jain_mean, 0.7);
  ASSERT_EQ(f.share_over_time.size(), 6u);
  EXPECT_DOUBLE_EQ(f.share_over_time[2], 0.5);
  EXPECT_DOUBLE_EQ(f.share_over_time[3], 0.25);
}

TEST(Fairness, FinishTimeFairnessThemisRho) {
  // In two_tenants both are in the system at 0 s: N = 2, a 1/N share is 4 GPUs.
  // a: 4 GPUs fit the share, ideal 100 s, JCT 100 s -> 1. b: ideal 50 s, JCT 100 s -> 2.
  auto f = results::compute_fairness(two_tenants());
  EXPECT_DOUBLE_EQ(f.tenants[0].rho, 1.0);
  EXPECT_DOUBLE_EQ(f.tenants[1].rho, 2.0);
  EXPECT_DOUBLE_EQ(f.rho_max, 2.0);
  EXPECT_DOUBLE_EQ(f.rho_mean, 1.5);
  // The run's line names each figure and the worst tenant, with its completed jobs.
  std::ostringstream line;
  results::print_fairness(line, f);
  EXPECT_NE(line.str().find("finish-time rho: worst tenant 2.00 (b, 1 job), mean job 1.50   max wait"),
            std::string::npos)
      << line.str();
  f.reclaims = 348147;  // grouped as the other counts are
  line.str("");
  results::print_fairness(line, f);
  EXPECT_NE(line.str().find("reclaims (cross-tenant preemptions) 348,147"), std::string::npos) << line.str();

  // N counts the tenants with a job in the system at the submit time; a job that ended at that
  // very time is out. 8 GPUs.
  results::RunResult r;
  r.tenants = {"a", "b"};
  r.total_gpus = 8;
  r.sim_end = 30 * S;
  r.jobs.push_back(job(0, 8, 0, 0, 10 * S, 10 * S, kCompleted));            // alone: N = 1, rho 1
  r.jobs.push_back(job(1, 8, 5 * S, 10 * S, 20 * S, 10 * S, kCompleted));   // N = 2: ideal 10 s x 8/4 = 20 s
  r.jobs.push_back(job(0, 8, 20 * S, 20 * S, 30 * S, 10 * S, kCompleted));  // b ended at 20 s: N = 1
  f = results::compute_fairness(r);
  EXPECT_DOUBLE_EQ(f.tenants[1].rho, 0.75);  // JCT 15 s / ideal 20 s
  EXPECT_DOUBLE_EQ(f.tenants[0].rho, 1.0);   // (10 + 10) / (10 + 10)
  EXPECT_EQ(f.tenants[0].completed, 2);
  EXPECT_DOUBLE_EQ(f.rho_mean, (1.0 + 0.75 + 1.0) / 3.0);

  // The time limit caps the ideal run time.
  r.jobs[1].walltime = 5 * S;
  f = results::compute_fairness(r);
  EXPECT_DOUBLE_EQ(f.tenants[1].rho, 1.5);  // 15 s / (5 s x 2)
}

TEST(Fairness, EmptyAndIdleResultsAreFair) {
  results::RunResult r;
  r.total_gpus = 8;
  const auto f = results::compute_fairness(r);
  EXPECT_TRUE(f.tenants.empty());
  EXPECT_DOUBLE_EQ(f.jain, 1.0);
  EXPECT_EQ(f.starved, 0);
}

TEST(Fairness, PlanTargetsOnFairnessKpis) {
  const auto f = results::compute_fairness(two_tenants());
  const auto s = results::summarize(two_tenants());
  auto t = planner::parse_target("jain >= 0.7");
  EXPECT_EQ(t.unit, "number");
  EXPECT_FALSE(t.at_most);
  ASSERT_TRUE(planner::kpi_value(s, f, t));
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, f, t), 25.0 / 34.0);
  EXPECT_TRUE(planner::meets(t, 25.0 / 34.0));
  t = planner::parse_target("tenant:b.share >= 20%");
  EXPECT_EQ(t.unit, "ratio");
  EXPECT_DOUBLE_EQ(t.bound, 0.2);
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, f, t), 0.125);
  EXPECT_FALSE(planner::meets(t, 0.125));
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, f, planner::parse_target("tenant:b.rho <= 3")), 2.0);
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, f, planner::parse_target("rho_max <= 3")), 2.0);
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, f, planner::parse_target("tenant:b.share_ratio >= 0.5")), 0.25);
  EXPECT_FALSE(planner::kpi_value(s, f, planner::parse_target("tenant:nobody.rho <= 3")));
  // The older KPIs still come from the summary.
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, f, planner::parse_target("wait_max <= 1h")), 50.0);
  EXPECT_THROW(planner::parse_target("tenant:b.fairness <= 1"), sim::InputError);
}

TEST(Fairness, JsonAddsAFairnessMemberToTheSummary) {
  const auto r = two_tenants();
  std::ostringstream out;
  results::print_summary_json_with_fairness(out, results::summarize(r), results::compute_fairness(r));
  const std::string text = out.str();
  EXPECT_NE(text.find("\"fairness\": {"), std::string::npos);
  EXPECT_NE(text.find("\"rho_max\": 2,"), std::string::npos);
  EXPECT_NE(text.find("\"name\": \"b\""), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");
  EXPECT_EQ(text.find("}\n,"), std::string::npos);
}

// Borrowing against entitlements of 4 GPUs each (8 GPUs, equal weights), from the job intervals
// (no /placements): a holds exactly its 4 all along, b's 2 stay within its 4: nothing borrowed.
TEST(Fairness, NoBorrowingWithinEntitlement) {
  const auto f = results::compute_fairness(two_tenants());
  EXPECT_EQ(f.borrowed_gpu_hours, 0.0);
  EXPECT_EQ(f.borrowing_starts, 0);
  EXPECT_EQ(f.reclaims, 0);
}

// Tenant a runs 6 GPUs for 1 h (2 over its 4), then a second run of the same job after a
// preemption by b's job; /placements holds the two runs (two slices each for the first).
TEST(Fairness, BorrowedGpuHoursAndStartsFromPlacementRunsAndReclaimsFromEvents) {
  constexpr sim::Tick H = sim::kHour;
  results::RunResult r;
  r.tenants = {"a", "b"};
  r.total_gpus = 8;
  r.sim_end = 4 * H;
  r.jobs.push_back(job(0, 6, 0, 0, 4 * H, 3 * H, kCompleted));            // a: runs [0,1h) and [2h,4h)
  r.jobs.push_back(job(1, 4, 30 * 60 * S, 1 * H, 2 * H, H, kCompleted));  // b: [1h,2h), preempts a
  r.jobs.push_back(job(1, 2, 0, 2 * H, 3 * H, H, kCompleted));            // b: [2h,3h), within 4
  r.jobs[0].preemptions = 1;
  r.placements = {
      {0, 0, 1 * H, 0, 4}, {0, 0, 1 * H, 1, 2}, {1, 1 * H, 2 * H, 0, 4}, {0, 2 * H, -1, 0, 6}, {2, 2 * H, 3 * H, 1, 2}};
  r.events.push_back({1 * H, static_cast<std::uint8_t>(models::AuditKind::Preempt), 0, 1, 0, 0});
  const auto f = results::compute_fairness(r);
  // a: 2 GPUs over for 1 h, then again for 2 h (the run open at the end lasts to sim_end).
  EXPECT_DOUBLE_EQ(f.tenants[0].borrowed_gpu_hours, 6.0);
  EXPECT_EQ(f.tenants[0].borrowing_starts, 2);
  EXPECT_EQ(f.tenants[0].reclaimed, 1);
  EXPECT_DOUBLE_EQ(f.tenants[1].borrowed_gpu_hours, 0.0);
  EXPECT_EQ(f.tenants[1].borrowing_starts, 0);
  EXPECT_EQ(f.tenants[1].reclaimed, 0);
  EXPECT_DOUBLE_EQ(f.borrowed_gpu_hours, 6.0);
  EXPECT_EQ(f.borrowing_starts, 2);
  EXPECT_EQ(f.reclaims, 1);

  // A preemption within one tenant is not a reclaim; without /events it is unknown.
  r.jobs[1].tenant = 0;
  EXPECT_EQ(results::compute_fairness(r).reclaims, 0);
  r.events.clear();
  EXPECT_EQ(results::compute_fairness(r).reclaims, -1);
  // An explicit entitlement (a policy's quota): a owns 3/4 of the cluster, 6 GPUs.
  r.jobs[1].tenant = 1;
  results::FairnessOptions opt;
  opt.entitlement = {0.75, 0.25};
  const auto g = results::compute_fairness(r, opt);
  EXPECT_DOUBLE_EQ(g.tenants[0].borrowed_gpu_hours, 0.0);
  // b: 4 GPUs over 2 for 1 h.
  EXPECT_DOUBLE_EQ(g.tenants[1].borrowed_gpu_hours, 2.0);
  EXPECT_EQ(g.borrowing_starts, 1);
}
