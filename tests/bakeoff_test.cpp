// The five-system bake-off (docs/policies.md, "One workload model"): the same trace job is the
// same work under every system, stated in that system's unit, and every POC drill runs under all
// five systems at their defaults without rejecting or stranding the workload.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "models/job.hpp"
#include "planner/compare.hpp"
#include "planner/plan.hpp"
#include "planner/scorecard.hpp"
#include "policies/registry.hpp"
#include "policies/system_module.hpp"
#include "results/hdf5_io.hpp"
#include "results/recorder.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "simulation/simulation.hpp"
#include "test_support.hpp"

namespace headroom {
namespace {

using models::JobIndex;
using models::JobState;
namespace ht = testing;

TEST(PodSplit, NodeSizedPodsAndTheTracesOwnShape) {
  models::Job j;
  j.gpus = 20;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{8, 8, 4}));
  j.gpus = 8;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{8}));
  j.gpus = 12;
  j.gpus_per_node = 4;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{4, 4, 4}));
  j.gpus_per_node = 0;
  j.nodes = 3;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{4, 4, 4}));
  j.nodes = 0;
  EXPECT_EQ(models::pod_gpus(j, 0), (std::vector<std::int32_t>{12})) << "no node size known: one pod";
  // Issue #32: a shape the trace gives is kept, even where no node is that large (the pod stays
  // Pending, as kube-scheduler leaves it); only a job without a shape is fitted to the nodes.
  j.gpus = 16;
  j.gpus_per_node = 16;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{16}));
  j.gpus_per_node = 0;
  j.nodes = 1;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{16}));
  j.nodes = 0;
  EXPECT_EQ(models::pod_gpus(j, 8), (std::vector<std::int32_t>{8, 8}));
}

// The node size a shapeless job's pods are cut to: the one holding the most GPUs of the pools the
// job may use (sizes summed over pools), ties to the larger node; 0 with no pool.
TEST(PodSplit, PodWidthIsTheNodeSizeHoldingTheMostGpus) {
  models::PodWidth curie;  // CEA Curie: 5,040 x 16, 360 x 32, 144 x 8
  curie.add(16, 5040);
  curie.add(32, 360);
  curie.add(8, 144);
  EXPECT_EQ(curie.width(), 16);
  models::PodWidth summed;  // two pools of 8-GPU nodes (48 GPUs) outweigh one of 32 GPUs
  summed.add(8, 3);
  summed.add(32, 1);
  summed.add(8, 3);
  EXPECT_EQ(summed.width(), 8);
  models::PodWidth tie;  // 32 GPUs each way: the larger node
  tie.add(8, 4);
  tie.add(16, 2);
  EXPECT_EQ(tie.width(), 16);
  models::PodWidth one;
  one.add(8, 10);
  EXPECT_EQ(one.width(), 8);
  one.add(8, 0);
  one.add(0, 5);
  EXPECT_EQ(one.width(), 8) << "empty pools and node sizes count for nothing";
  EXPECT_EQ(models::PodWidth{}.width(), 0);
}

policies::PolicyParams params_for(const std::string& policy) {
  policies::PolicyParams p;
  if (policy == "kueue") {
    p["resourceFlavors.default.pools"] = {"[pool]", "t.yaml", 1, 1};
    p["clusterQueues.all.namespaces"] = {"[\"*\"]", "t.yaml", 2, 1};
    p["clusterQueues.all.resources.default.gpu.nominalQuota"] = {"40", "t.yaml", 3, 1};
  }
  return p;
}

// GPUs of each slice of a placement, largest first.
std::vector<std::int32_t> slice_gpus(const models::Placement& p) {
  std::vector<std::int32_t> out;
  for (const auto& s : p) out.push_back(s.gpus);
  std::sort(out.rbegin(), out.rend());
  return out;
}

// workload.node_selectors (models::Job::node_set): a queue's jobs use only its pools under every
// system. Pools a and b, one 8-GPU node each; the two 8-GPU jobs of queue qa may use a only, so
// the second waits for the first (100 s) though b is free; the job of queue qb, on any node, runs
// on b. Without the node set the second job starts at 10 s on b.
TEST(NodeSelectors, EverySystemKeepsAQueuesJobsOnItsPools) {
  models::ClusterSpec c;
  c.pools.push_back({"a", 1, 8, "A100", 0, 0});
  c.pools.push_back({"b", 1, 8, "A100", 0, 0});
  for (const std::string name : {"kubernetes", "kubernetes+coscheduling", "volcano", "kueue", "kai", "slurm"}) {
    for (const bool selected : {true, false}) {
      auto w = ht::WorkloadBuilder().job(0, 8, 100).job(10, 8, 100).job(20, 8, 50).build();
      w.jobs[2].queue = w.queues.intern("qb");
      if (selected) {
        w.node_sets = {{"a"}};
        w.jobs[0].node_set = w.jobs[1].node_set = 1;
      }
      auto params = params_for(name);
      if (name == "kueue") {
        params["resourceFlavors.default.pools"] = {"[a, b]", "t.yaml", 1, 1};
        params["clusterQueues.all.resources.default.gpu.nominalQuota"] = {"16", "t.yaml", 3, 1};
      }
      std::vector<sim::InputError> errors;
      auto policy = policies::make_policy(name, policies::with_add_on(name, params, errors), 1);
      ASSERT_TRUE(errors.empty()) << name;
      simulation::Simulation sim(w, c, *policy, nullptr);
      sim.run();
      const std::string what = name + (selected ? " with" : " without") + " the node set";
      EXPECT_EQ(sim.job_state(1), JobState::Completed) << what;
      if (selected) {
        EXPECT_EQ(sim.job_start(1), 100 * sim::kSecond) << what;
        ASSERT_EQ(sim.job_placement(1).size(), 1u) << what;
        EXPECT_EQ(sim.job_placement(0)[0].node, 0u) << what;
        EXPECT_EQ(sim.job_placement(1)[0].node, 0u) << what;
        // qb's job on b: at once under kube-scheduler and KAI; at Slurm's first backfill pass (the
        // main scheduler gives no node of a partition whose head job failed to a later job);
        // after job 1 under Volcano (job 1 is Inqueue: enqueue's overcommit gate, 8 + 8 + 8 GPUs
        // over 16 x 1.2) and Kueue (job 1 is admitted: 16 of the ClusterQueue's 16 GPUs).
        const std::map<std::string, int> at{{"kubernetes", 20}, {"kubernetes+coscheduling", 20},
                                            {"kai", 20},        {"slurm", 30},
                                            {"volcano", 100},   {"kueue", 100}};
        EXPECT_EQ(sim.job_start(2), at.at(name) * sim::kSecond) << what;
        EXPECT_EQ(sim.job_placement(2)[0].node, 1u) << what;
      } else {
        EXPECT_EQ(sim.job_start(1), 10 * sim::kSecond) << what;
      }
    }
  }
}

// Issue #32: a job whose trace puts 16 GPUs on one node, on 8-GPU nodes, never runs under any
// system: kube-scheduler (and the systems that place pods through it) and KAI (a pod is placed
// whole on one node) leave the pod Pending, with no head-of-line blocking (the 4-GPU job behind it
// runs); Slurm rejects it at submit.
TEST(PodSplit, APodLargerThanEveryNodeNeverRunsAnywhere) {
  for (const std::string name : {"kubernetes", "volcano", "kueue", "kai", "slurm"}) {
    auto w = ht::WorkloadBuilder().job(0, 16, 3600).job(10, 4, 3600).build();
    w.jobs[0].gpus_per_node = 16;
    auto policy = policies::make_policy(name, params_for(name), 1);
    simulation::SimulationOptions o;
    o.horizon = 2 * 86400 * sim::kSecond;
    simulation::Simulation sim(w, ht::cluster(4, 8), *policy, nullptr, o);
    sim.run();
    EXPECT_EQ(sim.job_state(0), name == "slurm" ? JobState::Rejected : JobState::Unfinished) << name;
    EXPECT_EQ(sim.job_state(1), JobState::Completed) << name;
    EXPECT_EQ(sim.job_start(1), 10 * sim::kSecond) << name << ": no head-of-line blocking";
  }
}

// A cluster of mostly 16-GPU nodes and a few 32-GPU ones (CEA Curie's shape, small): a 64-GPU job
// with no shape of its own runs at once as four 16-GPU pods under the systems that place pods
// (cut to the largest node, two 32-GPU pods, it could not start: the first job holds one of the
// two 32-GPU nodes), and a 20-GPU job runs too.
TEST(PodSplit, OnMixedNodesTheJobsPodsFitTheNodesMostOfTheClusterHas) {
  models::ClusterSpec c;
  c.pools.push_back({"thin", 6, 16, "A100", 0, 0});
  c.pools.push_back({"fat", 2, 32, "A100", 0, 0});
  for (const std::string name : {"kubernetes", "volcano", "kueue"}) {
    auto w = ht::WorkloadBuilder().job(0, 32, 3600).job(10, 64, 3600).job(20, 20, 3600).build();
    auto params = params_for(name);
    if (name == "kueue") params["clusterQueues.all.resources.default.gpu.nominalQuota"] = {"160", "t.yaml", 3, 1};
    if (name == "kueue") params["resourceFlavors.default.pools"] = {"[thin, fat]", "t.yaml", 1, 1};
    auto policy = policies::make_policy(name, params, 1);
    simulation::Simulation sim(w, c, *policy, nullptr);
    sim.run();
    EXPECT_EQ(sim.job_start(1), 10 * sim::kSecond) << name;
    EXPECT_EQ(slice_gpus(sim.job_placement(1)), (std::vector<std::int32_t>{16, 16, 16, 16})) << name;
    EXPECT_EQ(sim.job_start(2), 20 * sim::kSecond) << name;
    std::int32_t sum = 0;  // its 16 + 4 pods may share a 32-GPU node (one slice of 20 there)
    for (const std::int32_t g : slice_gpus(sim.job_placement(2))) sum += g;
    EXPECT_EQ(sum, 20) << name;
  }
}

class ThreeJobs : public ::testing::TestWithParam<std::string> {};

// A 4-GPU job (one pod), a 16-GPU job (two node-sized pods) and a 20-GPU job (8 + 8 + 4) on five
// 8-GPU nodes, all submitted at once: every system runs all three at once, on the same nodes'
// worth of GPUs, and no pod (or Slurm node share) is larger than a node.
TEST_P(ThreeJobs, SameWorkInEverySystemsUnit) {
  const std::string name = GetParam();
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(0, 16, 100).job(0, 20, 100).build();
  const auto c = ht::cluster(5, 8);
  auto policy = policies::make_policy(name, params_for(name), 1);
  simulation::Simulation sim(w, c, *policy, nullptr);
  sim.run();
  const std::vector<std::vector<std::int32_t>> pods = {{4}, {8, 8}, {8, 8, 4}};
  for (JobIndex j = 0; j < 3; ++j) {
    EXPECT_EQ(sim.job_state(j), JobState::Completed) << name << " job " << j;
    EXPECT_EQ(sim.job_start(j), 0) << name << " job " << j;
    const auto got = slice_gpus(sim.job_placement(j));
    if (name == "slurm" || name == "kai") {
      // Slurm: one job over nodes (block distribution); KAI: one PodGroup over the nodes with the
      // most free GPUs. Either way no node share exceeds a node, and the GPUs add up.
      std::int32_t sum = 0;
      for (auto g : got) {
        EXPECT_LE(g, 8) << name;
        sum += g;
      }
      EXPECT_EQ(sum, w.jobs[j].gpus) << name;
      EXPECT_EQ(got.size(), pods[j].size()) << name << " job " << j << ": nodes";
    } else {
      EXPECT_EQ(got, pods[j]) << name << " job " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Systems, ThreeJobs, ::testing::Values("kubernetes", "volcano", "slurm", "kai", "kueue"));

TEST(ThreeJobs, KubernetesHoldsWhatItBindsWhileTheLastPodWaits) {
  // Only four nodes: the 4-GPU job and the 16-GPU job start; the 20-GPU job binds the pods that
  // fit (one node left: one 8-GPU pod) and holds it until the others end at 100 s.
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(0, 16, 100).job(0, 20, 100).build();
  auto policy = policies::make_policy("kubernetes", {}, 1);
  simulation::Simulation sim(w, ht::cluster(4, 8), *policy, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_start(2), 100 * sim::kSecond);
  EXPECT_EQ(sim.held_idle_gpu_ms(), 8 * 100 * sim::kSecond);
  // Volcano's PodGroup binds nothing until all of it fits.
  auto volcano = policies::make_policy("volcano", {}, 1);
  simulation::Simulation gang(w, ht::cluster(4, 8), *volcano, nullptr);
  gang.run();
  EXPECT_EQ(gang.held_idle_gpu_ms(), 0);
  EXPECT_EQ(gang.job_state(2), JobState::Completed);
}

TEST(ThreeJobs, TheResultAndCompareCountTheGpuHoursHeldByBoundPods) {
  // The run above through the recorder: the 800 GPU-seconds the 20-GPU job's bound pod held are
  // in the result file and in the summary (and so in compare's held_idle_gpu_hours row).
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(0, 16, 100).job(0, 20, 100).build();
  const auto c = ht::cluster(4, 8);
  auto policy = policies::make_policy("kubernetes", {}, 1);
  results::Recorder rec(w, c);
  simulation::Simulation sim(w, c, *policy, &rec);
  sim.run();
  EXPECT_EQ(rec.result().bound_idle_gpu_ms, 8 * 100 * sim::kSecond);
  EXPECT_EQ(rec.result().bound_idle_gpu_ms, sim.held_idle_gpu_ms());
  const std::string file = ::testing::TempDir() + "held_idle.h5";
  results::write_hdf5(rec.result(), file);
  const results::RunResult back = results::read_hdf5(file);
  EXPECT_EQ(back.bound_idle_gpu_ms, 8 * 100 * sim::kSecond);
  EXPECT_DOUBLE_EQ(results::summarize(back).held_idle_gpu_hours, 800.0 / 3600.0);
  // Deadlocked jobs are charged up to the end of the run.
  const auto d = ht::WorkloadBuilder().job(0, 4, 100).job(1, 16, 10).job(100, 16, 10).build();
  auto w2 = d;
  w2.jobs[2].priority = 10;  // B first at 100 s: A and B each hold one node (PartialPlacementDeadlocksTwoWideJobs)
  auto policy2 = policies::make_policy("kubernetes", {}, 1);
  const auto c2 = ht::cluster(2, 8);
  results::Recorder rec2(w2, c2);
  simulation::Simulation stuck(w2, c2, *policy2, &rec2);
  stuck.run();
  EXPECT_EQ(stuck.job_state(1), JobState::Unfinished);
  EXPECT_GT(rec2.result().bound_idle_gpu_ms, 0);
  EXPECT_EQ(rec2.result().bound_idle_gpu_ms, stuck.held_idle_gpu_ms());
}

// Every "why pending" each job was given, in order (AuditKind::Waiting events), and the
// permission denials (Reject events of detail kRejectPermission).
class Reasons final : public models::SimObserver {
 public:
  explicit Reasons(std::size_t jobs) : reason(jobs) {}
  void on_event(sim::Tick, models::AuditKind kind, JobIndex job, std::int32_t detail, std::string_view why) override {
    if (kind == models::AuditKind::Waiting && job < reason.size()) reason[job].emplace_back(why);
    if (kind == models::AuditKind::Reject && detail == models::kRejectPermission) denials.emplace_back(why);
  }
  void on_start(sim::Tick, JobIndex, const models::Placement&) override {}
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample&) override {}
  std::vector<std::vector<std::string>> reason;
  std::vector<std::string> denials;  // the reasons of permission denials, in order
};

class PendingReasonsOfEveryPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(PendingReasonsOfEveryPolicy, AJobKeptWaitingIsToldWhy) {
  // One 8-GPU node held by job 0 for 100 s: job 1 (8 GPUs, longer, so srtf does not preempt for
  // it) waits, and the policy says why.
  const std::string name = GetParam();
  const auto w = ht::WorkloadBuilder().job(0, 8, 100).job(1, 8, 1000).build();
  auto policy = policies::make_policy(name, params_for(name), 1);
  Reasons obs(w.jobs.size());
  simulation::Simulation sim(w, ht::cluster(1, 8), *policy, &obs);
  sim.run();
  EXPECT_EQ(sim.job_start(1), 100 * sim::kSecond) << name;
  ASSERT_FALSE(obs.reason[1].empty()) << name << " gave job 1 no pending reason";
  EXPECT_NE(models::classify_pending_reason(obs.reason[1].front()), models::PendingCode::None) << name;
}

INSTANTIATE_TEST_SUITE_P(Registry, PendingReasonsOfEveryPolicy,
                         ::testing::Values("fifo", "sjf", "srtf", "las", "gavel", "kubernetes", "volcano", "slurm",
                                           "kai", "kueue"));

TEST(PendingReasons, FifoNamesTheHeadOfLine) {
  // One 8-GPU node: job 1 runs until 100 s; job 2 (8 GPUs) is the blocked head; job 3 (1 GPU)
  // waits behind it, and is the head itself once job 2 runs (100..110 s).
  const auto w = ht::WorkloadBuilder().job(0, 8, 100).job(1, 8, 10).job(2, 1, 10).build();
  auto policy = policies::make_policy("fifo", {}, 1);
  Reasons obs(w.jobs.size());
  simulation::Simulation sim(w, ht::cluster(1, 8), *policy, &obs);
  sim.run();
  EXPECT_EQ(obs.reason[1], (std::vector<std::string>{"head of line: waiting for free GPUs"}));
  EXPECT_EQ(obs.reason[2],
            (std::vector<std::string>{"priority: queued behind job 2, the head of line (strict order, no backfill)",
                                      "head of line: waiting for free GPUs"}));
}

TEST(PendingReasons, SlurmSaysResourcesThenPriorityAsSqueue) {
  // One 8-GPU node busy until 100 s; two 8-GPU jobs wait: the first for Resources, the second
  // behind it for Priority.
  const auto w = ht::WorkloadBuilder().job(0, 8, 100).job(1, 8, 10).job(2, 8, 10).build();
  auto policy = policies::make_policy("slurm", {}, 1);
  Reasons obs(w.jobs.size());
  simulation::Simulation sim(w, ht::cluster(1, 8), *policy, &obs);
  sim.run();
  const std::string resources = "Resources: the job is waiting for resources to become available";
  EXPECT_EQ(obs.reason[1], (std::vector<std::string>{resources}));
  ASSERT_EQ(obs.reason[2].size(), 2u);
  EXPECT_EQ(obs.reason[2][0].rfind("Priority: one or more higher priority jobs exist for partition", 0), 0u)
      << obs.reason[2][0];
  EXPECT_EQ(obs.reason[2][1], resources) << "the head once job 2 runs";
  EXPECT_EQ(models::classify_pending_reason(resources), models::PendingCode::Capacity);
  EXPECT_EQ(models::classify_pending_reason(obs.reason[2][0]), models::PendingCode::Priority);
}

TEST(PendingReasons, SlurmSaysBeginTimeWhileARequeuedJobWaitsToBeEligible) {
  // L (low QOS) runs from 0 s; H (high) preempts it at 10 s with REQUEUE; L may start again only
  // after cred_expire + 1 s (131 s) and does, the node being free since H ended at 60 s.
  auto w = ht::WorkloadBuilder().job(0, 4, 1000).job(10, 2, 50).build();
  w.jobs[0].qos = w.qos.intern("low");
  w.jobs[1].qos = w.qos.intern("high");
  policies::PolicyParams p;
  p["PreemptType"] = {"preempt/qos", "t.yaml", 1, 1};
  p["PreemptMode"] = {"REQUEUE", "t.yaml", 2, 1};
  p["qos.high.Preempt"] = {"low", "t.yaml", 3, 1};
  auto policy = policies::make_policy("slurm", p, 1);
  Reasons obs(w.jobs.size());
  simulation::Simulation sim(w, ht::cluster(1, 4), *policy, &obs);
  sim.run();
  EXPECT_EQ(sim.job_end(0), (131 + 1000) * sim::kSecond);
  EXPECT_EQ(obs.reason[0], (std::vector<std::string>{"BeginTime: the job's earliest start time has not yet been "
                                                     "reached (requeued: eligible again after cred_expire + 1 s)"}));
}

// The permission drill in each system's words: refused at submit, or held pending (Kueue).
TEST(PermissionDrill, EachSystemDeniesInItsOwnWords) {
  const auto w = ht::WorkloadBuilder().job(0, 1, 10).build();  // tenant t0, queue "default"
  const std::map<std::string, std::string> expected = {
      {"kubernetes",
       "permission denied: jobs.batch is forbidden: User \"t0\" cannot create resource \"jobs\" in API group "
       "\"batch\" in the namespace \"default\" (RBAC, 403 Forbidden at submit)"},
      {"slurm",
       "permission denied: sbatch: error: Batch job submission failed: Invalid account or account/partition "
       "combination specified (user t0, partition default)"},
      {"volcano",
       "permission denied: admission webhook \"validatejob.volcano.sh\" denied the request: user t0 may not submit "
       "to queue default"},
      {"kai",
       "permission denied: pods is forbidden: User \"t0\" cannot create resource \"pods\" for queue default (RBAC, "
       "403 Forbidden at submit)"},
      {"kueue",
       "permission denied: held pending as inadmissible: LocalQueue default doesn't exist in namespace t0 (Kueue "
       "keeps the job suspended; it never starts)"},
      {"fifo", "permission denied: tenant t0 may not submit to queue default"}};
  for (const auto& [name, text] : expected) {
    auto policy = policies::make_policy(name, params_for(name), 1);
    EXPECT_EQ(policy->deny(w, w.jobs[0]).held, name == "kueue") << name;
    simulation::SimulationOptions o;
    o.queue_access = {{false}};
    Reasons obs(w.jobs.size());
    simulation::Simulation sim(w, ht::cluster(1, 8), *policy, &obs, o);
    sim.run();
    EXPECT_EQ(sim.job_state(0), JobState::Rejected) << name;
    EXPECT_EQ(sim.jobs_denied(), 1) << name;
    EXPECT_EQ(obs.denials, (std::vector<std::string>{text})) << name;
  }
}

TEST(Scorecard, MetMissedNotModelledAndFailed) {
  planner::CompareResult r;
  r.scenario_name = "drill";
  planner::PolicyRun a, b, c;
  a.policy = "slurm";
  a.done = true;
  a.summary.jobs = 100;
  a.summary.wait.p95 = 3600;
  b.policy = "kubernetes";
  b.done = true;
  b.summary.jobs = 100;
  b.summary.wait.p95 = 600;  // a lower bound: 5 jobs never finished
  b.summary.by_state[static_cast<std::size_t>(JobState::Unfinished)] = 5;
  c.policy = "kueue";
  c.error = "internal error";
  r.runs = {a, b, c};
  planner::Scorecard card;
  const std::vector<planner::Target> targets = {planner::parse_target("p95_wait <= 2h"),
                                                planner::parse_target("worst_recovery <= 1h")};
  planner::add_drill(card, r.scenario_name, targets, r);
  ASSERT_EQ(card.policies, (std::vector<std::string>{"slurm", "kubernetes", "kueue"}));
  ASSERT_EQ(card.rows.size(), 2u);
  EXPECT_EQ(card.rows[0].cells[0].verdict, planner::Verdict::Met);
  EXPECT_EQ(card.rows[0].cells[0].value, 3600);
  EXPECT_EQ(card.rows[0].cells[1].verdict, planner::Verdict::Missed) << "its value alone would meet the target";
  EXPECT_EQ(card.rows[0].cells[1].note, "5 jobs unfinished");
  EXPECT_EQ(card.rows[0].cells[2].verdict, planner::Verdict::Failed);
  EXPECT_EQ(card.rows[1].cells[0].verdict, planner::Verdict::NotModelled) << "no scripted outage";
  EXPECT_STREQ(planner::verdict_word(planner::Verdict::NotModelled), "not covered");
}

// Issue #32: the system as configured fails a target that its variant with a real add-on
// passes: "integration needed", naming the variant and its value; a system without a passing
// variant stays failed, and the variant's own cell is an ordinary pass.
TEST(Scorecard, IntegrationNeededNamesTheVariantThatPasses) {
  planner::CompareResult r;
  r.scenario_name = "wide-jobs";
  planner::PolicyRun k, kc, s;
  k.policy = "kubernetes";
  kc.policy = "kubernetes+coscheduling";
  s.policy = "slurm";
  for (auto* run : {&k, &kc, &s}) {
    run->done = true;
    run->summary.jobs = 1000;
  }
  k.summary.by_state[static_cast<std::size_t>(JobState::Completed)] = 6;
  kc.summary.by_state[static_cast<std::size_t>(JobState::Completed)] = 995;
  s.summary.by_state[static_cast<std::size_t>(JobState::Completed)] = 900;
  r.runs = {k, kc, s};
  planner::Scorecard card;
  planner::add_drill(card, r.scenario_name, {planner::parse_target("completed_fraction >= 0.99")}, r);
  ASSERT_EQ(card.rows.size(), 1u);
  const auto& cells = card.rows[0].cells;
  EXPECT_EQ(cells[0].verdict, planner::Verdict::IntegrationNeeded);
  EXPECT_EQ(cells[0].add_on, "kubernetes+coscheduling");
  EXPECT_DOUBLE_EQ(cells[0].value, 0.006);
  EXPECT_DOUBLE_EQ(cells[0].add_on_value, 0.995);
  EXPECT_EQ(cells[1].verdict, planner::Verdict::Met);
  EXPECT_EQ(cells[2].verdict, planner::Verdict::Missed) << "slurm has no such variant in the compare";
  EXPECT_STREQ(planner::verdict_word(cells[0].verdict), "integration needed");
}

// Issue #32's must-reach KPI: the share of the jobs not denied that ran to the end the log
// records. Jobs the system or the drill ended count against it, unless the log shows the same
// TimeLimit end.
TEST(ServedFraction, WhatRanAsRecordedOfWhatWasNotDenied) {
  results::Summary s;
  s.jobs = 10;
  s.denied = 2;
  s.by_state[static_cast<std::size_t>(JobState::Completed)] = 4;
  s.by_state[static_cast<std::size_t>(JobState::Cancelled)] = 1;  // as the log cancels it
  s.by_state[static_cast<std::size_t>(JobState::Failed)] = 3;     // one each: log, drill, TimeLimit
  s.by_state[static_cast<std::size_t>(JobState::Rejected)] = 2;   // the two denials
  s.failures.jobs_failed = 1;
  s.failures.jobs_failed_by_policy = 1;
  EXPECT_DOUBLE_EQ(planner::served_fraction(s), 6.0 / 8.0);
  s.ended_at_recorded_limit = 1;  // the log ended that one at its limit too
  EXPECT_DOUBLE_EQ(planner::served_fraction(s), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(*planner::kpi_value(s, planner::parse_target("served_fraction >= 99%")), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(planner::served_fraction(results::Summary{}), 1.0);
}

// The must-reach on a second real log of wide multi-node jobs (bench/data: the KTH SP2 log, 100
// nodes, EASY): plain kubernetes deadlocks on partly bound gangs and serves under 10 % of the
// first 30 days' 1,990 jobs; the verdict names kubernetes+coscheduling, which serves them all, as
// slurm does.
TEST(ServedFraction, KthSp2WideJobsNeedCoschedulingUnderKubernetes) {
  auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/bench/scenarios/kth-sp2-poc.yaml");
  sc.workload.window_end = 30 * sim::kDay;
  const auto r = planner::compare(sc, {"kubernetes", "kubernetes+coscheduling", "slurm"});
  ASSERT_EQ(r.runs.size(), 3u);
  for (const auto& run : r.runs) ASSERT_TRUE(run.done) << run.policy << ": " << run.error;
  EXPECT_EQ(r.runs[0].summary.jobs, 1990);
  planner::Scorecard card;
  planner::add_drill(card, r.scenario_name, {planner::parse_target("served_fraction >= 0.99")}, r);
  ASSERT_EQ(card.rows.size(), 1u);
  const auto& cells = card.rows[0].cells;
  EXPECT_EQ(cells[0].verdict, planner::Verdict::IntegrationNeeded);
  EXPECT_EQ(cells[0].add_on, "kubernetes+coscheduling");
  EXPECT_LT(cells[0].value, 0.1);
  EXPECT_DOUBLE_EQ(cells[0].add_on_value, 1.0);
  EXPECT_EQ(cells[1].verdict, planner::Verdict::Met);
  EXPECT_EQ(cells[2].verdict, planner::Verdict::Met);
  EXPECT_DOUBLE_EQ(cells[2].value, 1.0);
}

// A variant is listed, checked and built by its full name; it runs with its system's block plus
// what the add-on sets, and a block that sets the add-on's key otherwise is an error there.
TEST(Variants, KubernetesPlusCoschedulingIsKubernetesWithCoscheduling) {
  EXPECT_EQ(planner::parse_policy_list("kubernetes, kubernetes+coscheduling"),
            (std::vector<std::string>{"kubernetes", "kubernetes+coscheduling"}));
  try {
    planner::parse_policy_list("kubernetes+coscheduing");
    ADD_FAILURE() << "an unknown add-on was accepted";
  } catch (const sim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean \"kubernetes+coscheduling\"?"), std::string::npos) << e.what();
  }
  ASSERT_NE(policies::find_system("kubernetes+coscheduling"), nullptr);
  EXPECT_EQ(policies::find_system("kubernetes+coscheduling")->info.name, "kubernetes");
  EXPECT_EQ(policies::find_system("slurm+coscheduling"), nullptr);
  policies::PolicyParams p;
  p["coscheduling"] = {"false", "s.yaml", 7, 19};
  const auto errors = policies::check_policy("kubernetes+coscheduling", p, "s.yaml", 1, 1);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line(), 7);
  EXPECT_NE(std::string(errors[0].what()).find("kubernetes+coscheduling sets coscheduling: true"), std::string::npos)
      << errors[0].what();
  p["coscheduling"].text = "true";
  EXPECT_TRUE(policies::check_policy("kubernetes+coscheduling", p, "s.yaml", 1, 1).empty());

  // The variant builds and runs: a 16-GPU job (two pods) and a 12-GPU job (8 + 4) on two 8-GPU
  // nodes run one after the other, each bound whole.
  const auto w = ht::WorkloadBuilder().job(0, 16, 3600).job(0, 12, 3600).build();
  auto policy = policies::make_policy("kubernetes+coscheduling", {}, 1);
  simulation::Simulation sim(w, ht::cluster(2, 8), *policy, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_state(0), JobState::Completed);
  EXPECT_EQ(sim.job_state(1), JobState::Completed);
  EXPECT_EQ(sim.job_start(1), 3600 * sim::kSecond);
}

TEST(Scorecard, TargetsOfAScenarioAreCheckedWhereWritten) {
  auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/real-tasks.yaml");
  ASSERT_EQ(sc.targets.size(), 3u);
  EXPECT_EQ(sc.targets[0].text, "p95_wait <= 12h");
  EXPECT_GT(sc.targets[0].line, 0);
  const auto t = planner::scenario_targets(sc, {"denied >= 1"});
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].kpi, "wait_p95");
  EXPECT_EQ(t[2].kpi, "served_fraction");
  EXPECT_EQ(t[3].kpi, "denied");
  sc.targets.push_back({"p95_wiat <= 1h", 40, 5});
  try {
    planner::scenario_targets(sc, {});
    FAIL() << "a misspelt KPI is bad input";
  } catch (const sim::InputErrors& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].file(), sc.file);
    EXPECT_EQ(e.errors()[0].line(), 40);
    EXPECT_EQ(e.errors()[0].column(), 5);
  }
}

TEST(ThreeJobs, KueueAdmitsWholeThenKubeSchedulerBindsPodsOneByOne) {
  // Two 8-GPU nodes, a ClusterQueue of 20 GPUs. S (4 GPUs) runs 0..100 s; W (16 GPUs: two pods)
  // arrives at 1 s and is admitted at once (4 + 16 <= 20): its first pod binds node 1 and holds
  // it, the second binds when S ends. W runs 100..110 s.
  const auto w = ht::WorkloadBuilder().job(0, 4, 100).job(1, 16, 10).build();
  policies::PolicyParams p;
  p["resourceFlavors.default.pools"] = {"[pool]", "t.yaml", 1, 1};
  p["clusterQueues.all.namespaces"] = {"[\"*\"]", "t.yaml", 2, 1};
  p["clusterQueues.all.resources.default.gpu.nominalQuota"] = {"20", "t.yaml", 3, 1};
  auto policy = policies::make_policy("kueue", p, 1);
  simulation::Simulation sim(w, ht::cluster(2, 8), *policy, nullptr);
  sim.run();
  EXPECT_EQ(sim.job_start(1), 100 * sim::kSecond);
  EXPECT_EQ(sim.job_end(1), 110 * sim::kSecond);
  EXPECT_EQ(sim.held_idle_gpu_ms(), 8 * 99 * sim::kSecond) << "one pod held its node from 1 s to 100 s";
  ASSERT_EQ(sim.job_placement(1).size(), 2u);
  EXPECT_EQ(sim.job_placement(1)[0].node, 1u);
  EXPECT_EQ(sim.job_placement(1)[1].node, 0u);
}

// The four POC drills x the five systems, on the first four days of the bundled RICC log.
class Drills : public ::testing::TestWithParam<std::string> {};

TEST_P(Drills, EverySystemRunsTheDrillWithoutRejectingOrStrandingJobs) {
  auto sc = scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/poc/" + GetParam() + ".yaml");
  sc.workload.window_end = 4 * sim::kDay;
  const auto r = planner::compare(sc, {"kubernetes", "volcano", "slurm", "kai", "kueue"});
  ASSERT_FALSE(r.cancelled);
  for (const auto& run : r.runs) {
    ASSERT_TRUE(run.done) << run.policy << ": " << run.error;
    const auto& s = run.summary;
    EXPECT_GT(s.jobs, 1000) << run.policy;
    const auto rejected = s.by_state[static_cast<std::size_t>(JobState::Rejected)];
    const auto unfinished = s.by_state[static_cast<std::size_t>(JobState::Unfinished)];
    EXPECT_LE(rejected - s.denied, s.jobs / 100) << run.policy << " rejects jobs the drill does not deny";
    EXPECT_LE(unfinished, s.jobs / 100) << run.policy << " strands jobs";
    if (GetParam() == "permission-drill") {
      EXPECT_GT(s.denied, 0) << run.policy;
    } else {
      EXPECT_EQ(s.denied, 0) << run.policy;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Poc, Drills,
                         ::testing::Values("real-tasks", "resource-shortage", "permission-drill", "failure-drill"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace headroom
