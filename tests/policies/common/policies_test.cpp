// fifo and sjf on hand-made cases with exact start times, and the consolidate placement rules of
// the Helios simulator (HeliosArtifact framework/QSSF Service, policies/placer/consolidate.py).
#include <gtest/gtest.h>

#include <set>

#include "policies/common/consolidate.hpp"
#include "policies/common/index_set.hpp"
#include "policies/registry.hpp"
#include "simulation/simulation.hpp"
#include "tests/test_support.hpp"

using headroom::models::JobState;
using headroom::models::Placement;
using headroom::models::Slice;
using headroom::sim::kSecond;
namespace hp = headroom::policies;
namespace ht = headroom::testing;

namespace {

struct Outcome {
  std::vector<double> start_s, end_s;
  std::vector<JobState> state;
  std::vector<Placement> placement;
};

Outcome run(const std::string& policy, const headroom::models::Workload& w, const headroom::models::ClusterSpec& c) {
  auto p = hp::make_policy(policy, {}, 1);
  headroom::simulation::Simulation sim(w, c, *p, nullptr);
  sim.run();
  Outcome o;
  for (headroom::models::JobIndex j = 0; j < w.jobs.size(); ++j) {
    o.start_s.push_back(sim.job_start(j) < 0 ? -1.0 : headroom::sim::to_seconds(sim.job_start(j)));
    o.end_s.push_back(sim.job_end(j) < 0 ? -1.0 : headroom::sim::to_seconds(sim.job_end(j)));
    o.state.push_back(sim.job_state(j));
    o.placement.push_back(sim.job_placement(j));
  }
  return o;
}

bool same(const Placement& a, const Placement& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].node != b[i].node || a[i].gpus != b[i].gpus) return false;
  return true;
}

}  // namespace

TEST(Fifo, HeadOfLineBlocksSmallerJobsBehindIt) {
  // One 8-GPU node. J1 needs the whole node; J2 would fit beside J0 but must wait behind J1.
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(10, 8, 50).job(20, 2, 10).build();
  const auto o = run("fifo", w, ht::cluster(1, 8));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 100, 150}));
  EXPECT_EQ(o.end_s, (std::vector<double>{100, 150, 160}));
}

TEST(Sjf, ShortJobsGoFirstButTheHeadStillBlocks) {
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(10, 8, 50).job(20, 2, 10).build();
  const auto o = run("sjf", w, ht::cluster(1, 8));
  // At t=20 the queue is [J2 (10 s), J1 (50 s)]: J2 fits beside J0 and starts; J1 waits for J0.
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 100, 20}));
}

TEST(Sjf, ShortestFirstEvenWhenItBlocks) {
  // When the node frees at t=100, three jobs are pending; sjf starts the shortest (8 GPUs, 5 s)
  // first, fifo the oldest.
  const auto w = ht::WorkloadBuilder().job(0, 8, 100).job(1, 2, 30).job(2, 8, 5).job(3, 1, 30).build();
  const auto o = run("sjf", w, ht::cluster(1, 8));
  // t=100: order J2 (5), J1 (30), J3 (30, later arrival): J2 takes the node until 105; then J1
  // and J3 start together at 105.
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 105, 100, 105}));
  const auto f = run("fifo", w, ht::cluster(1, 8));
  // fifo: J1 (2 GPUs) starts at 100; J2 (8 GPUs) blocks J3 until J1 ends at 130.
  EXPECT_EQ(f.start_s, (std::vector<double>{0, 100, 130, 135}));
}

TEST(Fifo, SameSubmitTimeKeepsTraceOrder) {
  const auto w = ht::WorkloadBuilder().job(0, 8, 10).job(0, 8, 10).job(0, 8, 10).build();
  const auto o = run("fifo", w, ht::cluster(1, 8));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 10, 20}));
}

TEST(Fifo, ZeroRuntimeJobsFinishAndFreeTheirGpusAtOnce) {
  const auto w = ht::WorkloadBuilder().job(0, 8, 0).job(0, 8, 5).build();
  const auto o = run("fifo", w, ht::cluster(1, 8));
  EXPECT_EQ(o.start_s, (std::vector<double>{0, 0}));
  EXPECT_EQ(o.end_s, (std::vector<double>{0, 5}));
}

TEST(Fifo, JobLargerThanTheClusterIsRejectedNotBlocking) {
  const auto w = ht::WorkloadBuilder().job(0, 100, 10).job(1, 4, 10).build();
  const auto o = run("fifo", w, ht::cluster(2, 8));
  EXPECT_EQ(o.state[0], JobState::Rejected);
  EXPECT_EQ(o.start_s[0], -1);
  EXPECT_EQ(o.start_s[1], 1);
  EXPECT_EQ(o.state[1], JobState::Completed);
}

TEST(Fifo, TraceOutcomeBecomesTheTerminalState) {
  const auto w = ht::WorkloadBuilder()
                     .job(0, 1, 10)
                     .status(headroom::models::TraceStatus::Failed)
                     .job(0, 1, 10)
                     .status(headroom::models::TraceStatus::Cancelled)
                     .job(0, 1, 10)
                     .build();
  const auto o = run("fifo", w, ht::cluster(1, 8));
  EXPECT_EQ(o.state, (std::vector<JobState>{JobState::Failed, JobState::Cancelled, JobState::Completed}));
}

TEST(Consolidate, SingleNodeJobsGoToTheFullestNodeThatFits) {
  const auto w = ht::WorkloadBuilder().job(0, 6, 1000).job(1, 2, 1000).job(2, 3, 1000).job(3, 1, 1000).build();
  const auto o = run("fifo", w, ht::cluster(2, 8));
  EXPECT_TRUE(same(o.placement[0], {Slice{0, 6}}));
  EXPECT_TRUE(same(o.placement[1], {Slice{0, 2}})) << "best fit: node 0 has exactly 2 free";
  EXPECT_TRUE(same(o.placement[2], {Slice{1, 3}}));
  EXPECT_TRUE(same(o.placement[3], {Slice{1, 1}})) << "node 1 has 5 free, node 0 none";
}

TEST(Consolidate, MultiNodeJobsTakeWholeNodesThenTheRemainder) {
  // 3 nodes; J0 leaves node 0 with 5 free. J1 (12 = 8 + 4): two free nodes remain, so the
  // remainder goes to the second free node, not to node 0 (Helios sorts by free GPUs, descending).
  const auto w = ht::WorkloadBuilder().job(0, 3, 100).job(1, 12, 100).build();
  const auto o = run("fifo", w, ht::cluster(3, 8));
  EXPECT_TRUE(same(o.placement[0], {Slice{0, 3}}));
  EXPECT_TRUE(same(o.placement[1], {Slice{1, 8}, Slice{2, 4}}));
}

TEST(Consolidate, RemainderGoesToTheNodeWithTheMostFreeGpus) {
  headroom::models::ClusterState c(ht::cluster(3, 8));
  c.allocate({Slice{0, 2}});  // node 0: 6 free
  c.allocate({Slice{1, 5}});  // node 1: 3 free
  headroom::models::Workload w;
  headroom::models::Job j;
  j.gpus = 14;  // 8 on node 2, 6 on node 0
  auto p = hp::consolidate_placement(c, j, w);
  ASSERT_TRUE(p);
  EXPECT_TRUE(same(*p, {Slice{2, 8}, Slice{0, 6}}));
  j.gpus = 15;  // remainder 7 > 6: does not fit, although 17 GPUs are free
  EXPECT_FALSE(hp::consolidate_placement(c, j, w));
  j.gpus = 16;  // needs two fully free nodes
  EXPECT_FALSE(hp::consolidate_placement(c, j, w));
  j.gpus = 8;
  p = hp::consolidate_placement(c, j, w);
  ASSERT_TRUE(p);
  EXPECT_TRUE(same(*p, {Slice{2, 8}}));
}

TEST(Consolidate, RespectsGpuTypeConstraints) {
  headroom::models::ClusterSpec spec;
  spec.pools.push_back({"t4", 1, 4, "T4", 0, 0});
  spec.pools.push_back({"a100", 1, 8, "A100", 0, 0});
  headroom::models::ClusterState c(spec);
  headroom::models::Workload w;
  w.gpu_type_names = {"a100"};
  headroom::models::Job j;
  j.gpus = 2;
  auto any = hp::consolidate_placement(c, j, w);
  ASSERT_TRUE(any);
  EXPECT_EQ((*any)[0].node, 0u) << "fullest fitting node is the 4-GPU T4 node";
  j.gpu_type = 1;
  auto typed = hp::consolidate_placement(c, j, w);
  ASSERT_TRUE(typed);
  EXPECT_EQ((*typed)[0].node, 1u);
  j.gpu_type = 2;  // names an unknown type index
  EXPECT_TRUE(hp::never_fits(c, j, w));
}

TEST(Registry, KnowsFifoAndSjfAndSuggestsNames) {
  const auto& cat = hp::policy_catalogue();
  ASSERT_GE(cat.size(), 2u);
  EXPECT_EQ(cat[0].name, "fifo");
  EXPECT_EQ(cat[1].name, "sjf");
  auto errors = hp::check_policy("fifx", {}, "s.yaml", 4, 9);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_STREQ(errors[0].what(),
               "s.yaml:4:9: policy.name: unknown policy \"fifx\"; did you mean \"fifo\"? (known: fifo, sjf, "
               "kubernetes, kubernetes+coscheduling, srtf, las, volcano, kueue, kai, slurm, gavel)");
  hp::PolicyParams params{{"placment", {"consolidate", "s.yaml", 5, 3}}};
  errors = hp::check_policy("fifo", params, "s.yaml", 4, 9);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_STREQ(
      errors[0].what(),
      "s.yaml:5:3: policy.placment: unknown parameter \"placment\" for policy fifo; did you mean \"placement\"?");
  params = {{"placement", {"random", "s.yaml", 5, 14}}};
  errors = hp::check_policy("sjf", params, "s.yaml", 4, 9);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 5);
  EXPECT_THROW(hp::make_policy("nope", {}, 1), headroom::sim::InputError);
}

// The live-group set of Volcano's allocate and backfill: walked in increasing order as a
// std::set would be, across empty words and past the summary level's own word bounds (64 x 64
// indices), with an index inserted ahead of the walk seen and one erased ahead of it not seen.
TEST(IndexSet, WalksInOrderAsASetWouldAcrossEmptyWordsAndSummaryBounds) {
  headroom::policies::IndexSet set;
  std::set<std::uint32_t> ref;
  auto walk = [](const headroom::policies::IndexSet& s) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i : s) out.push_back(i);
    return out;
  };
  for (std::uint32_t i : {0u, 63u, 64u, 4095u, 4096u, 4097u, 262143u, 262144u, 447793u}) {
    set.insert(i);
    ref.insert(i);
  }
  EXPECT_EQ(walk(set), std::vector<std::uint32_t>(ref.begin(), ref.end()));
  // Emptying a word (4096's) and a summary word's only word (262144's) is skipped by the walk.
  for (std::uint32_t i : {4096u, 4097u, 262144u, 0u}) {
    set.erase(i);
    ref.erase(i);
  }
  EXPECT_EQ(walk(set), std::vector<std::uint32_t>(ref.begin(), ref.end()));
  for (std::uint32_t i : {0u, 63u, 64u, 4095u, 4096u, 4097u, 262143u, 262144u, 447793u, 447794u, 1u << 30})
    EXPECT_EQ(set.contains(i), ref.count(i) == 1) << i;
  EXPECT_EQ(set.next(4096), 262143u);
  EXPECT_EQ(set.next(447794), headroom::policies::IndexSet::kEnd);
  EXPECT_EQ(set.next(1u << 30), headroom::policies::IndexSet::kEnd);
  set.erase(1u << 30);  // beyond the words: nothing to do
  // During a walk: an index inserted ahead is seen, one erased ahead is not, one behind is not.
  std::vector<std::uint32_t> seen;
  for (std::uint32_t i : set) {
    seen.push_back(i);
    if (i == 63) {
      set.insert(100000);
      set.erase(447793);
      set.insert(1);
    }
  }
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{63, 64, 4095, 100000, 262143}));
  // A pseudo-random set of a million indices, some erased, walks as the std::set does.
  headroom::policies::IndexSet big;
  std::set<std::uint32_t> big_ref;
  std::uint64_t x = 88172645463325252ull;
  for (int k = 0; k < 200000; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto i = static_cast<std::uint32_t>(x % 1'000'000);
    if (k % 3 == 2) {
      big.erase(i);
      big_ref.erase(i);
    } else {
      big.insert(i);
      big_ref.insert(i);
    }
  }
  EXPECT_EQ(walk(big), std::vector<std::uint32_t>(big_ref.begin(), big_ref.end()));
}
