// fifo with EASY backfilling and per-user limits (policies/baselines/easy.hpp): exact start times on
// hand-made cases.
#include <gtest/gtest.h>

#include "policies/registry.hpp"
#include "tests/policy_test_support.hpp"
#include "simulation/simulation.hpp"
#include "tests/test_support.hpp"

using headroom::models::JobState;
namespace hp = headroom::policies;
namespace ht = headroom::testing;

namespace {

struct Outcome {
  std::vector<double> start_s;
  std::vector<JobState> state;
};

Outcome run(const std::map<std::string, std::string>& params, const headroom::models::Workload& w,
            const headroom::models::ClusterSpec& c) {
  auto p = hp::make_policy("fifo", ht::params(params), 1);
  headroom::simulation::Simulation sim(w, c, *p, nullptr);
  sim.run();
  Outcome o;
  for (headroom::models::JobIndex j = 0; j < w.jobs.size(); ++j) {
    o.start_s.push_back(sim.job_start(j) < 0 ? -1.0 : headroom::sim::to_seconds(sim.job_start(j)));
    o.state.push_back(sim.job_state(j));
  }
  return o;
}

// One 8-GPU node. J0 (4 GPUs, 100 s) runs; J1 (8 GPUs) is the head, shadow time 100 s, no extra
// GPUs; J2 (4 GPUs, 90 s) ends by then; J3 (2 GPUs, 200 s) would not; J4 (2 GPUs, 60 s) would
// but finds no free GPU once J2 runs.
headroom::models::Workload easy_case() {
  return ht::WorkloadBuilder().job(0, 4, 100).job(1, 8, 50).job(2, 4, 90).job(3, 2, 200).job(4, 2, 60).build();
}

}  // namespace

TEST(EasyBackfill, ShortJobsFillTheHoleBeforeTheHeadsReservation) {
  const auto o = run({{"backfill", "easy"}}, easy_case(), ht::cluster(1, 8));
  // J2 backfills at 2 s and ends at 92 s; J1 starts at its shadow time 100 s, ends at 150 s;
  // then J3 and J4 start together.
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 100, 2, 150, 150}));
}

TEST(EasyBackfill, WithoutItFifoWaitsBehindTheHead) {
  const auto o = run({{"backfill", "none"}}, easy_case(), ht::cluster(1, 8));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 100, 150, 150, 150}));  // 4 + 2 + 2 GPUs at 150 s
  const auto plain = run({}, easy_case(), ht::cluster(1, 8));
  EXPECT_EQ(plain.start_s, o.start_s);
}

TEST(EasyBackfill, ExtraGpusAtTheShadowTimeLetLongJobsIn) {
  // Two 4-GPU nodes. J0 (4 GPUs, 100 s) runs; J1 (6 GPUs) is the head: at 100 s 8 GPUs are free,
  // 2 of them extra. J2 (2 GPUs, 500 s) outlives the shadow time but fits in the extra GPUs; J3
  // (2 GPUs, 500 s) finds the extra taken and waits.
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(1, 6, 50).job(2, 2, 500).job(3, 2, 500).build();
  const auto o = run({{"backfill", "easy"}}, w, ht::cluster(2, 4));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 100, 2, 150}));
}

TEST(EasyBackfill, TimeLimitIsTheEstimate) {
  // J2 runs 10 s but asks for 200 s: by its estimate it would delay the head, so it waits.
  auto w = easy_case();
  w.jobs[2].runtime = 10 * headroom::sim::kSecond;
  w.jobs[2].walltime = 200 * headroom::sim::kSecond;
  const auto o = run({{"backfill", "easy"}}, w, ht::cluster(1, 8));
  EXPECT_EQ(o.start_s[2], 150);
}

TEST(UserLimits, MaxJobsPerUserPassesOverTheUserWithoutBlockingOthers) {
  // u runs one job at a time; v's job behind u's second starts at once.
  const auto w =
      ht::WorkloadBuilder().job(0, 1, 100, "u").job(1, 1, 100, "u").job(2, 1, 100, "v").job(3, 1, 10, "u").build();
  const auto o = run({{"MaxJobsPerUser", "1"}}, w, ht::cluster(1, 8));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 100, 2, 200}));
}

TEST(UserLimits, PerUserGpuLimitOverridesTheGlobalOne) {
  // Global 2 GPUs per user; u may hold 4. A 3-GPU job alone is allowed past a limit of 2.
  const auto w = ht::WorkloadBuilder()
                     .job(0, 2, 100, "u")
                     .job(0, 2, 100, "u")
                     .job(0, 2, 100, "v")
                     .job(0, 1, 100, "v")
                     .job(0, 3, 10, "w")
                     .build();
  const auto o = run({{"MaxGPUsPerUser", "2"}, {"users.u.MaxGPUs", "4"}}, w, ht::cluster(2, 8));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 0, 0, 100, 0}));
}

TEST(UserLimits, BadValuesNameTheKey) {
  std::vector<headroom::sim::InputError> errors =
      hp::check_policy("fifo", ht::params({{"backfill", "conservative"}, {"MaxJobsPerUser", "-1"}}), "test.yaml", 1, 1);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(std::string(errors[0].what()).find("policy.MaxJobsPerUser"), std::string::npos) << errors[0].what();
  EXPECT_NE(std::string(errors[1].what()).find("expected easy or none"), std::string::npos) << errors[1].what();
}
