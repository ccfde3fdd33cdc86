// Issue #23 made slurm's backfill fast (a profile cursor kept across the walks of a pass, walks
// that start where a job asking no more stopped, the pass ending once no job left could start
// now, every reservation blocking between walks) without changing a decision: these fingerprints
// (every start, end and reason) are those of the policy before that work (commit cb4d429), on the
// bundled RICC sample under several backfill set-ups and on random multi-node jobs with CPUs,
// memory, time limits and two partitions, one of them exclusive.
// Re-pinned by issue #38 (the real slurmctld as referee), a change of behaviour: a job the main
// scheduler cannot start now takes its partition's nodes out of the pass for the jobs of every
// partition (job_scheduler.c), which changes the workloads with overlapping partitions (RICC's
// queues all span the cluster; the random jobs have two partitions); the other set-ups are as pinned.
// Re-pinned again (issue #38): backfill no longer starts a job that would end exactly when a
// reservation begins (backfill.c: slots with begin_time <= end_reserve overlap).
// And again: a backfill pass that started jobs while bf_max_job_test left jobs untested is followed
// by another bf_interval later.
// And the random multi-node jobs again: a job with a node count takes its nodes as select/cons_tres
// _eval_nodes does (consecutive node sets by free CPUs), not best fit by free GPUs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "policies/registry.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/test_support.hpp"
#include "traces/import.hpp"

using namespace headroom;
using headroom::testing::params;
namespace ht = headroom::testing;

namespace {

models::ClusterSpec pool(int count, int gpus, int cpus, std::int64_t memory_mib) {
  models::ClusterSpec spec;
  spec.pools.push_back({"gpu", count, gpus, "A100", cpus, memory_mib});
  return spec;
}

std::string fingerprint(const models::Workload& w, const models::ClusterSpec& c,
                        const std::map<std::string, std::string>& kv) {
  auto policy = policies::make_policy("slurm", params(kv), 1);
  simulation::Simulation sim(w, c, *policy, nullptr);
  return sim.run().fingerprint;
}

// Jobs of 1-4 nodes (or free placement), CPUs and memory per job, requested times from a few
// minutes to two days (some run past them), in partitions "shared" and "whole" (exclusive).
models::Workload random_jobs(std::uint64_t seed, int n) {
  sim::RngStream rng(seed, "test/slurm-backfill");
  ht::WorkloadBuilder b;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += std::floor(rng.exponential(1.0 / 40.0));
    static const int kGpus[] = {1, 1, 2, 4, 8, 3, 16, 6};
    const int gpus = kGpus[rng.below(8)];
    const double run = std::floor(rng.lognormal(7.0, 1.3)) + 1;
    const char tenant[] = {'u', static_cast<char>('0' + rng.below(5)), '\0'};
    b.job(t, gpus, run, tenant);
  }
  auto w = b.build();
  const auto shared = w.queues.intern("shared"), whole = w.queues.intern("whole");
  static const double kLimits[] = {600, 3600, 7200, 43200, 172800};
  for (auto& j : w.jobs) {
    j.queue = rng.bernoulli(0.2) ? whole : shared;
    const double limit = kLimits[rng.below(5)];
    const double want = rng.bernoulli(0.9) ? std::max(limit, sim::to_seconds(j.runtime)) : limit;
    j.walltime = sim::from_seconds(static_cast<std::int64_t>(want));
    if (j.gpus >= 8 && rng.bernoulli(0.6)) {
      j.gpus_per_node = rng.bernoulli(0.5) ? 4 : 8;
      j.nodes = (j.gpus + j.gpus_per_node - 1) / j.gpus_per_node;
    }
    j.cpus = j.gpus * static_cast<std::int32_t>(1 + rng.below(8));
    j.memory_mib = j.gpus * static_cast<std::int64_t>(1 + rng.below(4)) * 16384;
  }
  return w;
}

// The bundled RICC sample (scenarios/examples/data), and the same with every fifth job of QOS
// "high" and the others "low" (the preemption tests' split).
models::Workload ricc_sample() {
  return traces::import_trace(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/data/ricc-2010-first-14d.swf.gz");
}
models::Workload ricc_sample_high_qos_every_fifth() {
  models::Workload w = ricc_sample();
  const auto low = w.qos.intern("low"), high = w.qos.intern("high");
  for (std::size_t j = 0; j < w.jobs.size(); ++j) w.jobs[j].qos = j % 5 == 0 ? high : low;
  return w;
}

}  // namespace

TEST(SlurmDecisions, RiccSampleFingerprintsOfThePolicyBeforeTheSpeedUp) {
  auto w = ricc_sample();
  w.jobs.resize(4000);
  struct Case {
    std::map<std::string, std::string> kv;
    const char* fingerprint;
  };
  const Case cases[] = {
      {{}, "d484607cd134b0b7"},
      {{{"SchedulerParameters", "bf_interval=60,bf_resolution=300,bf_window=240,bf_max_job_test=40"}},
       "ec53c4d2171435bb"},
      {{{"SchedulerParameters", "bf_interval=30,bf_resolution=1,bf_window=2880,bf_max_job_test=2000"}},
       "55f9ede75b92fff3"},
      {{{"PriorityType", "priority/multifactor"},
        {"PriorityWeightAge", "1000"},
        {"PriorityWeightFairshare", "10000"},
        {"PriorityWeightJobSize", "500"}},
       "46f308b05f66e998"},
      {{{"partitions.queue1.Default", "YES"},
        {"partitions.queue1.MaxTime", "1440"},
        {"partitions.queue2.OverSubscribe", "EXCLUSIVE"},
        {"partitions.queue2.PriorityTier", "2"}},
       "c4a5a1a192b982e7"},
  };
  for (const Case& k : cases) {
    std::string what;
    for (const auto& [key, v] : k.kv) what += key + "=" + v + " ";
    EXPECT_EQ(fingerprint(w, pool(128, 8, 0, 0), k.kv), k.fingerprint) << what;
  }
}

TEST(SlurmDecisions, RandomMultiNodeFingerprintsOfThePolicyBeforeTheSpeedUp) {
  struct Case {
    std::uint64_t seed;
    const char* sched;
    const char* fingerprint;
  };
  const Case cases[] = {
      {1, "bf_interval=30", "e245abe0e17ef93f"},
      {2, "bf_interval=30,bf_resolution=600,bf_window=720", "5748e60f691c6620"},
      // bf_max_job_test=20 also sizes the node_space table: a pass ends at the reservation that
      // finds 20 records (issue #38, second round; was d770261f54d487cc).
      {3, "bf_interval=10,bf_max_job_test=20,bf_max_job_start=3", "338223f197a50434"},
  };
  for (const Case& k : cases) {
    const auto w = random_jobs(k.seed, 3000);
    const std::map<std::string, std::string> kv = {{"SchedulerParameters", k.sched},
                                                   {"partitions.shared.Default", "YES"},
                                                   {"partitions.whole.OverSubscribe", "EXCLUSIVE"},
                                                   {"partitions.whole.PriorityTier", "2"}};
    EXPECT_EQ(fingerprint(w, pool(24, 8, 64, 512 * 1024), kv), k.fingerprint) << "seed " << k.seed;
  }
}

// The fourth round (release slices kept from pass to pass, plain slices applied apart, the
// free nodes' reservation times kept in order) changed no decision either: these fingerprints are
// those of commit 9c9565b, on the RICC sample with a high QOS preempting a low one (every fifth
// job high) by REQUEUE and CANCEL, and with random node failures that kill and requeue running
// jobs: jobs released before their time limit, in and out of the kept release slices.
TEST(SlurmDecisions, PreemptionAndFailureFingerprintsOfThePolicyBeforeTheFourthRound) {
  auto w = ricc_sample_high_qos_every_fifth();
  struct Case {
    const char* mode;
    bool failures;
    std::size_t jobs;
    const char* fingerprint;
  };
  const Case cases[] = {
      {"REQUEUE", false, 600, "9caa2590fd8e8fde"},
      {"CANCEL", false, 600, "24de26403dacfb96"},
      // Random failures fall between whole seconds: since issue #38's second round backfill runs on
      // slurmctld's one-second clock (next_backfill), not at the failure's instant (was c2b2be4c1226505a).
      {"REQUEUE", true, 600, "799fd82ca6524caf"},
  };
  for (const Case& k : cases) {
    auto jobs = w;
    jobs.jobs.resize(k.jobs);
    auto policy = policies::make_policy("slurm",
                                        params({{"PreemptType", "preempt/qos"},
                                                {"PreemptMode", k.mode},
                                                {"qos.high.Preempt", "low"},
                                                {"qos.high.Priority", "100"}}),
                                        1);
    simulation::SimulationOptions o;
    if (k.failures) {
      models::RandomFailures rf;
      rf.mtbf = 3 * sim::kDay;
      rf.repair = 4 * 3600 * sim::kSecond;
      o.failures.random.push_back(rf);
      o.seed = 7;
    }
    simulation::Simulation sim(jobs, pool(128, 8, 0, 0), *policy, nullptr, o);
    EXPECT_EQ(sim.run().fingerprint, k.fingerprint) << k.mode << (k.failures ? " with failures" : "");
  }
}

// A gang pair whose members swapped roles outside a time slice (the member meant to run back in
// the queue, the other running) used to ask for a wake-up at its past slice end, that is at now,
// on every pass: the run never left that instant. On the first 60 jobs of the RICC sample it
// now ends, every job in a final state, long before the watchdog would stop it.
TEST(SlurmDecisions, GangPairsOutOfStepDoNotStopTheClock) {
  auto w = ricc_sample_high_qos_every_fifth();
  w.jobs.resize(60);
  auto policy = policies::make_policy(
      "slurm", params({{"PreemptType", "preempt/qos"}, {"PreemptMode", "SUSPEND,GANG"}, {"qos.high.Preempt", "low"}}),
      1);
  simulation::Simulation sim(w, pool(128, 8, 0, 0), *policy, nullptr);
  std::atomic<bool> stop{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 600 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop = true;
  });
  const auto stats = sim.run(&stop);
  const bool cancelled = stats.cancelled;
  stop = true;
  watchdog.join();
  ASSERT_FALSE(cancelled) << "the run did not end within 60 s";
  for (models::JobIndex j = 0; j < w.jobs.size(); ++j) {
    const auto st = sim.job_state(j);
    EXPECT_TRUE(st != models::JobState::Pending && st != models::JobState::Running &&
                st != models::JobState::Unfinished)
        << "job " << j << " state " << static_cast<int>(st);
  }
  EXPECT_GT(sim.job_preemptions(0) + sim.job_preemptions(1) + sim.job_preemptions(2), 0);
}

// Issue #37: the clear-node tally (quick_pick) also serves jobs that ask no CPUs or memory per GPU
// on nodes that model them, and the main scheduler builds it when no backfill pass has: the
// decisions are those of commit 91b01cd (every such job scanned every node). The RICC sample's
// first 4,000 jobs on 128 nodes with CPUs and memory: as they are (no CPUs asked: the tally
// serves), with DefCpuPerGPU=16 (16 CPUs a GPU on 64-CPU nodes: at most 4 GPUs of a node, so the
// tally must not serve; the decisions differ from the first case's), with DefMemPerGPU (the tally
// must not serve either), with half the jobs asking CPUs of their own, and with a short window.
TEST(SlurmDecisions, ClearTallyWithCpusModelledPicksAsScanningEveryNode) {
  auto w = ricc_sample();
  w.jobs.resize(4000);
  for (auto& j : w.jobs) j.cpus = 0, j.memory_mib = 0;
  auto half = w;
  for (std::size_t j = 0; j < half.jobs.size(); j += 2) half.jobs[j].cpus = half.jobs[j].gpus * 12;
  struct Case {
    const models::Workload* w;
    std::map<std::string, std::string> kv;
    const char* fingerprint;
  };
  const Case cases[] = {
      {&w, {}, "d484607cd134b0b7"},
      {&w, {{"DefCpuPerGPU", "16"}}, "a515e72f96277e4c"},
      {&w, {{"DefMemPerGPU", "131072"}}, "d484607cd134b0b7"},
      {&half, {}, "068f0f369985e25b"},
      {&w,
       {{"SchedulerParameters", "bf_interval=60,bf_resolution=300,bf_window=240,bf_max_job_test=40"}},
       "ec53c4d2171435bb"},
  };
  for (const Case& k : cases) {
    std::string what = k.w == &half ? "half with CPUs " : "";
    for (const auto& [key, v] : k.kv) what += key + "=" + v + " ";
    EXPECT_EQ(fingerprint(*k.w, pool(128, 8, 64, 512 * 1024), k.kv), k.fingerprint) << what;
  }
}

// Issue #37: backfill's clear-node tally (quick_pick) also serves the jobs of a partition on part of
// the nodes, reading only its members' bits (as on the CEA Curie log's thin, fat and hybrid pools),
// and the profile's nodes with a GPU free are kept node by node: the decisions are those of commit
// 45ea276, where such jobs scanned every node of their partition at each walk step. The RICC
// sample's first 4,000 jobs on a thin pool (96 x 8 GPUs) and a fat one (16 x 16), in a partition on
// each pool and one on both, under the sample's backfill set-up and a shorter window.
TEST(SlurmDecisions, ClearTallyOfAPartitionOnPartOfTheNodesPicksAsScanningItsNodes) {
  auto w = ricc_sample();
  w.jobs.resize(4000);
  const models::QueueId parts[] = {w.queues.intern("thin"), w.queues.intern("fat"), w.queues.intern("both")};
  for (std::size_t j = 0; j < w.jobs.size(); ++j) w.jobs[j].queue = parts[j % 3];
  models::ClusterSpec c;
  c.pools.push_back({"thin", 96, 8, "A100", 0, 0});
  c.pools.push_back({"fat", 16, 16, "A100", 0, 0});
  const std::map<std::string, std::string> base = {{"partitions.thin.Nodes", "thin"},
                                                   {"partitions.thin.Default", "YES"},
                                                   {"partitions.fat.Nodes", "fat"},
                                                   {"partitions.both.Nodes", "thin,fat"}};
  auto with = [&](std::map<std::string, std::string> kv) {
    kv.insert(base.begin(), base.end());
    return kv;
  };
  EXPECT_EQ(
      fingerprint(
          w, c, with({{"SchedulerParameters", "bf_interval=30,bf_resolution=60,bf_window=1440,bf_max_job_test=500"}})),
      "366bc2c485977317");
  EXPECT_EQ(
      fingerprint(w, c,
                  with({{"SchedulerParameters", "bf_interval=60,bf_resolution=300,bf_window=240,bf_max_job_test=40"}})),
      "52f61d86e3f5d6c2");
}

// will_run_groups: YES (issue #38, third round: reservations where select/cons_tres's will-run test
// places them) pinned on the RICC sample and on the random multi-node jobs (CPUs, memory, an
// exclusive partition), as the slow first form (commit c29c4d6, which walked every trial's groups up
// from now) decided them, so that its speed work keeps every decision. Moved by the fourth round
// (issue #38, workloads 16 and 30): a running job off the candidate nodes does not close a group, a
// group ends after its last job in job order among equal ends, and a pass that started jobs is
// followed by another at the next tick.
TEST(SlurmDecisions, WillRunGroupsFingerprintsOfTheFirstForm) {
  auto ricc = ricc_sample();
  ricc.jobs.resize(4000);
  EXPECT_EQ(fingerprint(ricc, pool(128, 8, 0, 0), {{"will_run_groups", "YES"}}), "f0766e4f062f8ec9");
  EXPECT_EQ(
      fingerprint(ricc, pool(128, 8, 0, 0),
                  {{"will_run_groups", "YES"},
                   {"SchedulerParameters", "bf_interval=30,bf_resolution=1,bf_window=2880,bf_max_job_test=2000"}}),
      "2465029d6888aca9");
  const auto w = random_jobs(1, 3000);
  EXPECT_EQ(fingerprint(w, pool(24, 8, 64, 512 * 1024),
                        {{"will_run_groups", "YES"},
                         {"SchedulerParameters", "bf_interval=30"},
                         {"partitions.shared.Default", "YES"},
                         {"partitions.whole.OverSubscribe", "EXCLUSIVE"},
                         {"partitions.whole.PriorityTier", "2"}}),
            "81b3e7d2141b4376");
}

// Issue #37 (branch slurm, 2026-12-05): the main scheduler's failed partitions kept as bits (a job
// whose partition has no node left is not offered to choose()), a reservation's flips written out
// when no node is held, the release book read in runs, and a backfill start patched into the
// profile cursor where it stands (a job that does not hold its nodes whole; the cursor still goes
// back to now for the others and under will_run_groups) changed no decision: these fingerprints
// are those of main at 0a936c1, before that work. Random jobs in three partitions on two pools
// ("shared" on both, "whole" exclusive on both, "half" on pool b alone, so that a failed "half"
// blocks part of the nodes and a failed "shared" all of them), on plain nodes (no CPUs or memory:
// quick_pick and the plain release slices) and on nodes with CPUs and memory, with a long window
// and bf_max_job_test=500 (many starts and reservations a pass) and with bf_max_job_start; and the
// RICC sample with every other job in a partition on half of the nodes.
TEST(SlurmDecisions, StartsPatchedIntoTheCursorDecideAsBefore) {
  struct Case {
    std::uint64_t seed;
    bool plain;
    const char* sched;
    const char* fingerprint;
  };
  const Case cases[] = {
      {4, true, "bf_interval=30,bf_resolution=60,bf_window=1440,bf_max_job_test=500", "78fb4e544f351625"},
      {5, false, "bf_interval=30,bf_resolution=60,bf_window=1440,bf_max_job_test=500", "812814c31b8617f9"},
      {6, true, "bf_interval=30,bf_max_job_test=100,bf_max_job_start=5", "033dfdd3fc082ff0"},
  };
  for (const Case& k : cases) {
    auto w = random_jobs(k.seed, 3000);
    const auto shared = w.queues.intern("shared"), half = w.queues.intern("half");
    for (std::size_t j = 0; j < w.jobs.size(); j += 4)
      if (w.jobs[j].queue == shared) w.jobs[j].queue = half;
    if (k.plain)
      for (auto& j : w.jobs) j.cpus = 0, j.memory_mib = 0;
    models::ClusterSpec c;
    c.pools.push_back({"a", 16, 8, "A100", k.plain ? 0 : 64, k.plain ? 0 : 512 * 1024});
    c.pools.push_back({"b", 8, 8, "A100", k.plain ? 0 : 64, k.plain ? 0 : 512 * 1024});
    const std::map<std::string, std::string> kv = {{"SchedulerParameters", k.sched},
                                                   {"partitions.shared.Default", "YES"},
                                                   {"partitions.half.Nodes", "b"},
                                                   {"partitions.whole.OverSubscribe", "EXCLUSIVE"},
                                                   {"partitions.whole.PriorityTier", "2"}};
    EXPECT_EQ(fingerprint(w, c, kv), k.fingerprint) << "seed " << k.seed;
  }
  auto ricc = ricc_sample();
  ricc.jobs.resize(4000);
  const auto all = ricc.queues.intern("all"), thin = ricc.queues.intern("thin");
  for (std::size_t j = 0; j < ricc.jobs.size(); ++j) ricc.jobs[j].queue = j % 2 == 0 ? all : thin;
  models::ClusterSpec c;
  c.pools.push_back({"thin", 64, 8, "A100", 0, 0});
  c.pools.push_back({"fat", 64, 8, "A100", 0, 0});
  EXPECT_EQ(fingerprint(ricc, c, {{"partitions.all.Default", "YES"}, {"partitions.thin.Nodes", "thin"}}),
            "79dbf3859a6d2238");
}

// The main scheduler's and backfill's first jobs come from the queue's head kept as jobs enter and
// leave the queue (top_) when default_queue_depth and bf_max_job_test are at most 4096, else from a
// walk of the queue itself. With at most 1,200 jobs, 4,000 and 5,000 test every queued job (and
// the node_space table, as large, never fills): the two paths must give the same decisions, here
// with priorities that change while jobs wait (age and fair share re-key the queue). (A head kept
// short of a queue longer than it, refilled as jobs leave, is pinned by the fingerprints above:
// RiccSample's bf_max_job_test=40 and the random jobs' 20 fail when the refill is left out.)
TEST(SlurmDecisions, QueueHeadKeptAsJobsComeAndGoDecidesAsWalkingTheQueue) {
  for (const std::uint64_t seed : {7, 8}) {
    const auto w = random_jobs(seed, 1200);
    for (const bool multifactor : {false, true}) {
      std::map<std::string, std::string> kv = {{"partitions.shared.Default", "YES"},
                                               {"partitions.whole.OverSubscribe", "EXCLUSIVE"},
                                               {"partitions.whole.PriorityTier", "2"}};
      if (multifactor) {
        kv["PriorityType"] = "priority/multifactor";
        kv["PriorityWeightAge"] = "1000";
        kv["PriorityWeightFairshare"] = "10000";
      }
      kv["SchedulerParameters"] = "bf_interval=30,bf_max_job_test=4000,default_queue_depth=100";
      const std::string kept = fingerprint(w, pool(24, 8, 64, 512 * 1024), kv);
      kv["SchedulerParameters"] = "bf_interval=30,bf_max_job_test=5000,default_queue_depth=100";
      EXPECT_EQ(kept, fingerprint(w, pool(24, 8, 64, 512 * 1024), kv)) << "seed " << seed << " " << multifactor;
      kv["SchedulerParameters"] = "bf_interval=30,bf_max_job_test=40,default_queue_depth=5000";
      const std::string walked = fingerprint(w, pool(24, 8, 64, 512 * 1024), kv);
      kv["SchedulerParameters"] = "bf_interval=30,bf_max_job_test=40,default_queue_depth=4000";
      EXPECT_EQ(walked, fingerprint(w, pool(24, 8, 64, 512 * 1024), kv)) << "seed " << seed << " " << multifactor;
    }
  }
}

// Issue #37 (fourth round): with nodes held for a suspended job's preemptor (PreemptMode
// SUSPEND,GANG), a backfill pass reads the shortest-limit suffix of its tested jobs (the early end
// of the pass), now computed only then, and the least-GPU suffix follows the tested jobs instead of
// being rebuilt each pass. The decisions are those of commit edbf5ec (before that change): the RICC
// sample's first 1,500 jobs, every fifth of QOS high (which preempts low), on 64 and 128 nodes.
TEST(SlurmDecisions, HeldNodesPassesDecideAsBeforeTheSetUpWasTrimmed) {
  auto w = ricc_sample_high_qos_every_fifth();
  w.jobs.resize(1500);
  const std::map<std::string, std::string> kv = {
      {"PreemptType", "preempt/qos"}, {"PreemptMode", "SUSPEND,GANG"}, {"qos.high.Preempt", "low"}};
  EXPECT_EQ(fingerprint(w, pool(64, 8, 0, 0), kv), "3ce7ca76a89f7330");
  EXPECT_EQ(fingerprint(w, pool(128, 8, 0, 0), kv), "a0edc2106e0f5af7");
}
