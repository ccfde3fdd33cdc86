// The kai policy with gpuSharing (KAI gpu-fraction): fractional pods share one device, queues count
// their fractions, gpusharingorder / gpupack / gpuspread choose the node and the device, and an
// evicted share frees exactly its milli-GPUs. Each scenario is hand-worked; each also runs with
// gpuSharing off, where a fractional pod takes a whole GPU as before.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policies/kai/kai.hpp"
#include "policies/registry.hpp"
#include "sim/rng.hpp"
#include "simulation/simulation.hpp"
#include "tests/policy_test_support.hpp"
#include "tests/test_support.hpp"

using namespace headroom;
using models::JobIndex;
using models::JobState;
using sim::kSecond;
namespace kai = policies::kai;
namespace ht = headroom::testing;

namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

KeyValues sharing(bool on, KeyValues kv = {}) {
  kv.emplace_back("gpuSharing", on ? "true" : "false");
  return kv;
}

// Every start's placement and every preemption.
class Recorder : public models::SimObserver {
 public:
  void on_event(sim::Tick t, models::AuditKind kind, JobIndex j, std::int32_t, std::string_view reason) override {
    if (kind == models::AuditKind::Preempt) preempted.emplace_back(t, j, std::string(reason));
    if (kind == models::AuditKind::Reject) rejected[j] = std::string(reason);
  }
  void on_start(sim::Tick, JobIndex j, const models::Placement& p) override { placements[j] = p; }
  void on_end(sim::Tick, JobIndex, JobState) override {}
  void on_sample(const models::Sample& s) override {
    samples[s.time] = {{s.tenant_used_gpus.begin(), s.tenant_used_gpus.end()},
                       {s.tenant_pending_gpus.begin(), s.tenant_pending_gpus.end()},
                       {s.tenant_pending_jobs.begin(), s.tenant_pending_jobs.end()}};
  }

  std::map<JobIndex, models::Placement> placements;  // the last start of each job
  std::vector<std::tuple<sim::Tick, JobIndex, std::string>> preempted;
  std::map<JobIndex, std::string> rejected;
  struct TenantSample {
    std::vector<std::int32_t> used_gpus, pending_gpus, pending_jobs;
  };
  std::map<sim::Tick, TenantSample> samples;
};

struct ShareRun {
  ShareRun(models::Workload workload, models::ClusterSpec cluster, const KeyValues& kv, sim::Tick horizon = sim::kNever)
      : w(std::move(workload)), c(std::move(cluster)), policy(policies::make_policy("kai", ht::ordered_params(kv), 1)) {
    simulation::SimulationOptions opt;
    opt.horizon = horizon;
    opt.sample_interval = 10 * kSecond;
    sim = std::make_unique<simulation::Simulation>(w, c, *policy, &rec, opt);
    stats = sim->run();
  }
  double start(JobIndex j) const { return sim::to_seconds(sim->job_start(j)); }
  const models::Slice& slice(JobIndex j) const { return rec.placements.at(j).at(0); }
  std::string reason(JobIndex j) const { return kai::last_pending_reason(*policy, j); }

  models::Workload w;
  models::ClusterSpec c;
  std::unique_ptr<policies::Policy> policy;
  Recorder rec;
  std::unique_ptr<simulation::Simulation> sim;
  simulation::SimulationStats stats;
};

// Makes job j ask for `milli` thousandths of one GPU (as the openb trace: num_gpu 1, gpu_milli).
void fraction(models::Workload& w, JobIndex j, int milli) {
  w.jobs[j].gpus = 1;
  w.jobs[j].gpu_milli = milli;
}

void in_queue(models::Workload& w, JobIndex j, const std::string& q) { w.jobs[j].queue = w.queues.intern(q); }

// Makes job j ask for `mib` MiB of one GPU's memory (KAI gpu-memory annotation).
void gpu_memory(models::Workload& w, JobIndex j, std::int64_t mib) {
  w.jobs[j].gpus = 1;
  w.jobs[j].gpu_milli = 0;
  w.jobs[j].gpu_memory_mib = mib;
}

// Pools of one node each, in order: (GPU type, GPUs).
models::ClusterSpec pools(const std::vector<std::pair<std::string, int>>& types) {
  models::ClusterSpec spec;
  for (std::size_t i = 0; i < types.size(); ++i)
    spec.pools.push_back({std::string(1, 'p').append(std::to_string(i)), 1, types[i].second, types[i].first, 0, 0});
  return spec;
}

}  // namespace

TEST(KaiShare, TenantSamplesCountSharesAsPartsOfAGpu) {
  // Four half-GPU pods of one tenant on one GPU: two share the device, two wait. The tenant holds
  // one GPU's worth and waits for one, not two and two (each pod's gpus).
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).build();
  for (JobIndex j = 0; j < 4; ++j) fraction(w, j, 500);
  const ShareRun on(w, ht::cluster(1, 1), sharing(true));
  ASSERT_EQ(on.rec.samples.count(50 * kSecond), 1u);
  const auto& s50 = on.rec.samples.at(50 * kSecond);
  EXPECT_EQ(s50.used_gpus, std::vector<std::int32_t>{1});
  EXPECT_EQ(s50.pending_gpus, std::vector<std::int32_t>{1});
  EXPECT_EQ(s50.pending_jobs, std::vector<std::int32_t>{2});
  // gpuSharing off: each pod holds the whole GPU; one runs, three wait for 1.5 GPUs' worth.
  const ShareRun off(w, ht::cluster(1, 1), sharing(false));
  ASSERT_EQ(off.rec.samples.count(50 * kSecond), 1u);
  EXPECT_EQ(off.rec.samples.at(50 * kSecond).used_gpus, std::vector<std::int32_t>{1});
  EXPECT_EQ(off.rec.samples.at(50 * kSecond).pending_gpus, std::vector<std::int32_t>{2});
}

TEST(KaiShare, TwoHalvesShareOneDeviceAndAThirdWaits) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).build();
  for (JobIndex j = 0; j < 3; ++j) fraction(w, j, 500);
  const ShareRun on(w, ht::cluster(1, 1), sharing(true));
  EXPECT_DOUBLE_EQ(on.start(0), 0.0);
  EXPECT_DOUBLE_EQ(on.start(1), 0.0);
  EXPECT_DOUBLE_EQ(on.start(2), 100.0) << "the device is full until both halves end";
  for (JobIndex j = 0; j < 3; ++j) {
    EXPECT_EQ(on.slice(j).gpus, 0);
    EXPECT_EQ(on.slice(j).gpu_milli, 500);
    EXPECT_EQ(on.slice(j).device, 0);
  }
  // gpuSharing off: each pod takes the whole GPU, one after the other.
  const ShareRun off(w, ht::cluster(1, 1), sharing(false));
  EXPECT_DOUBLE_EQ(off.start(0), 0.0);
  EXPECT_DOUBLE_EQ(off.start(1), 100.0);
  EXPECT_DOUBLE_EQ(off.start(2), 200.0);
  EXPECT_EQ(off.slice(1).gpus, 1);
  EXPECT_EQ(off.slice(1).gpu_milli, 0);
  // Unset means off.
  const ShareRun unset(w, ht::cluster(1, 1), {});
  EXPECT_DOUBLE_EQ(unset.start(2), 200.0);
}

TEST(KaiShare, SharesThatDoNotFitTogetherOpenAnotherDevice) {
  // 0.7 then 0.4 on a 2-GPU node: 1.1 does not fit one device, so the second opens device 1; a
  // 0.3 then joins device 0 (gpupack: the most used device with room).
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(1, 1, 1000).job(2, 1, 1000).build();
  fraction(w, 0, 700);
  fraction(w, 1, 400);
  fraction(w, 2, 300);
  const ShareRun run(w, ht::cluster(1, 2), sharing(true));
  EXPECT_EQ(run.slice(0).device, 0);
  EXPECT_EQ(run.slice(1).device, 1);
  EXPECT_EQ(run.slice(2).device, 0);
  EXPECT_DOUBLE_EQ(run.start(2), 2.0);
}

TEST(KaiShare, GpuSharingOrderPrefersTheNodeWithARoomyShareOverBinpack) {
  // 2 nodes x 4 GPUs. X (4 GPUs, ends at 50) takes n0, S1 (0.5) opens a device on n1, Y (1 GPU)
  // joins n1 (2 whole GPUs left there). After X, C (3 GPUs) takes n0 (1 left). S2 (0.5): binpack
  // alone would take n0 (1 free GPU against 2), but gpusharingorder scores n1's half-used device.
  auto w =
      ht::WorkloadBuilder().job(0, 4, 50).job(0, 1, 5000).job(1, 1, 5000).job(60, 3, 5000).job(70, 1, 5000).build();
  fraction(w, 1, 500);
  fraction(w, 4, 500);
  const ShareRun run(w, ht::cluster(2, 4), sharing(true));
  EXPECT_EQ(run.slice(0).node, 0u);
  EXPECT_EQ(run.slice(1).node, 1u);
  EXPECT_EQ(run.slice(2).node, 1u);
  EXPECT_EQ(run.slice(3).node, 0u);
  EXPECT_DOUBLE_EQ(run.start(4), 70.0);
  EXPECT_EQ(run.slice(4).node, 1u);
  EXPECT_EQ(run.slice(4).device, run.slice(1).device);
  EXPECT_EQ(run.slice(4).gpu_milli, 500);
}

TEST(KaiShare, GpuSpreadTakesAWholeGpuOnTheSharedNode) {
  // spread, 2 nodes x 2 GPUs. S1 opens device 0 of n0 (equal nodes: the lowest index). S2 still
  // goes to n0, whose shared device it fits (gpusharingorder), but gpuspread ranks a whole free
  // GPU (score 1) above the half-used device (1 - 0.5): device 1. Plain spread would take n1.
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(10, 1, 1000).build();
  fraction(w, 0, 500);
  fraction(w, 1, 500);
  KeyValues kv = sharing(true, {{"placementStrategy.gpu", "spread"}});
  const ShareRun run(w, ht::cluster(2, 2), kv);
  EXPECT_EQ(run.slice(0).node, 0u);
  EXPECT_EQ(run.slice(0).device, 0);
  EXPECT_EQ(run.slice(1).node, 0u);
  EXPECT_EQ(run.slice(1).device, 1);
}

TEST(KaiShare, AGangPlacesWholeGpusAndSharesConsistentlyInOneStatement) {
  // 1 node x 2 GPUs. Gang g (1 GPU, 0.7, 0.7) cannot fit: the whole pod leaves one GPU, the first
  // 0.7 opens it and the second has no device left, so g waits whole. Gang h (1 GPU, 0.5, 0.5)
  // fits: both halves share the one device left.
  auto w = ht::WorkloadBuilder()
               .job(0, 1, 100)
               .job(0, 1, 100)
               .job(0, 1, 100)
               .job(0, 1, 100)
               .job(0, 1, 100)
               .job(0, 1, 100)
               .build();
  fraction(w, 1, 700);
  fraction(w, 2, 700);
  fraction(w, 4, 500);
  fraction(w, 5, 500);
  for (JobIndex j = 0; j < 6; ++j) {
    w.jobs[j].group = w.groups.intern(j < 3 ? "g" : "h");
    w.jobs[j].gang_min = 3;
  }
  const ShareRun run(w, ht::cluster(1, 2), sharing(true), 50 * kSecond);
  for (JobIndex j = 0; j < 3; ++j) {
    EXPECT_EQ(run.sim->job_start(j), -1) << "job " << j;
    EXPECT_EQ(run.reason(j).rfind("Unschedulable", 0), 0u) << run.reason(j);
  }
  for (JobIndex j = 3; j < 6; ++j) EXPECT_DOUBLE_EQ(run.start(j), 0.0) << "job " << j;
  EXPECT_EQ(run.slice(3).gpus, 1);
  EXPECT_EQ(run.slice(4).device, run.slice(5).device);
}

TEST(KaiShare, QueueLimitCountsTheFraction) {
  // Queue A has limit 1 GPU; three 0.4 pods on an idle 4-GPU node: 0.8 runs, the third would
  // make 1.2 and waits with OverLimit. Off: each pod counts 1 GPU, so only the first runs.
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(0, 1, 1000).job(0, 1, 1000).build();
  for (JobIndex j = 0; j < 3; ++j) {
    fraction(w, j, 400);
    in_queue(w, j, "A");
  }
  KeyValues kv;
  ht::kai_queue(kv, "A", 1, 1, 1);
  const ShareRun on(w, ht::cluster(1, 4), sharing(true, kv), 500 * kSecond);
  EXPECT_DOUBLE_EQ(on.start(0), 0.0);
  EXPECT_DOUBLE_EQ(on.start(1), 0.0);
  EXPECT_EQ(on.sim->job_start(2), -1);
  EXPECT_EQ(on.reason(2).rfind("OverLimit", 0), 0u) << on.reason(2);
  const ShareRun off(w, ht::cluster(1, 4), sharing(false, kv), 500 * kSecond);
  EXPECT_DOUBLE_EQ(off.start(0), 0.0);
  EXPECT_EQ(off.sim->job_start(1), -1);
  EXPECT_EQ(off.reason(1).rfind("OverLimit", 0), 0u) << off.reason(1);
}

TEST(KaiShare, FractionalFairShareAndReclaimOfExactlyOneShare) {
  // 1 node x 2 GPUs; A and B have quota 1 GPU each. A runs four 0.5 pods (2 GPUs). At 10 s B asks
  // for one 0.5 pod. Fair shares in milli-GPUs: deserved A 1000, B 500; the 500 left is offered to
  // A, floored to whole GPUs (0), then handed out as min(1 GPU, 500): A 1500. B is within its fair
  // share, A above (2000 > 1500): reclaim evicts A's newest pod (job 3), which frees exactly the
  // half of device 1 that B then takes at 40 s (30 s termination grace).
  auto w = ht::WorkloadBuilder()
               .job(0, 1, 10000)
               .job(0, 1, 10000)
               .job(0, 1, 10000)
               .job(0, 1, 10000)
               .job(10, 1, 10000)
               .build();
  for (JobIndex j = 0; j < 5; ++j) {
    fraction(w, j, 500);
    in_queue(w, j, j < 4 ? "A" : "B");
  }
  KeyValues kv;
  ht::kai_queue(kv, "A", 1, 1, -1);
  ht::kai_queue(kv, "B", 1, 1, -1);
  const ShareRun run(w, ht::cluster(1, 2), sharing(true, kv), 1000 * kSecond);
  ASSERT_EQ(run.rec.preempted.size(), 1u);
  EXPECT_EQ(std::get<0>(run.rec.preempted[0]), 10 * kSecond);
  EXPECT_EQ(std::get<1>(run.rec.preempted[0]), 3u);
  EXPECT_EQ(std::get<2>(run.rec.preempted[0]).rfind("reclaim: MaintainFairShare", 0), 0u);
  EXPECT_EQ(run.slice(3).device, 1);
  EXPECT_DOUBLE_EQ(run.start(4), 40.0);
  EXPECT_EQ(run.slice(4).device, 1);
  EXPECT_EQ(run.slice(4).gpu_milli, 500);
  EXPECT_EQ(run.sim->job_state(3), JobState::Unfinished) << "A is at its fair share: job 3 waits";
  // The evicted share ran 40 s (until the end of its grace period) on half a GPU.
  EXPECT_EQ(run.sim->lost_gpu_ms(), 20 * kSecond);
  // Off: A holds both GPUs with two whole pods; B's pod (1 GPU) is within B's fair share of 1 and
  // reclaims one of them.
  const ShareRun off(w, ht::cluster(1, 2), sharing(false, kv), 1000 * kSecond);
  EXPECT_EQ(off.sim->job_start(2), -1);
  ASSERT_EQ(off.rec.preempted.size(), 1u);
  EXPECT_EQ(std::get<1>(off.rec.preempted[0]), 1u);
  EXPECT_EQ(off.slice(4).gpus, 1);
}

TEST(KaiShare, PreemptEvictsOneShareForAHigherPriorityShare) {
  // 1 node x 1 GPU, queue A with quota 1. Two train 0.5 pods fill the device; at 10 s a build
  // (interactive, priority 100) 0.5 pod preempts the newer train pod only, and takes its half of
  // the device at 40 s.
  auto w = ht::WorkloadBuilder().job(0, 1, 10000).job(0, 1, 10000).job(10, 1, 10000).build();
  for (JobIndex j = 0; j < 3; ++j) {
    fraction(w, j, 500);
    in_queue(w, j, "A");
  }
  w.jobs[2].kind = models::JobKind::Interactive;
  KeyValues kv;
  ht::kai_queue(kv, "A", 1, 1, -1);
  const ShareRun run(w, ht::cluster(1, 1), sharing(true, kv), 1000 * kSecond);
  ASSERT_EQ(run.rec.preempted.size(), 1u);
  EXPECT_EQ(std::get<1>(run.rec.preempted[0]), 1u);
  EXPECT_EQ(std::get<2>(run.rec.preempted[0]).rfind("preempt:", 0), 0u);
  EXPECT_EQ(run.sim->job_preemptions(0), 0);
  EXPECT_DOUBLE_EQ(run.start(2), 40.0);
  EXPECT_EQ(run.slice(2).gpu_milli, 500);
  EXPECT_EQ(run.sim->job_state(1), JobState::Unfinished);
}

TEST(KaiShare, OverQuotaOffersAreFlooredToWholeGpus) {
  // 1 node x 4 GPUs; queues A, B, C (in that order) without quota, weight 1. A and B run four 0.5
  // pods each (the node is full); at 10 s C asks for six. Requests 2, 2 and 3 GPUs: each is offered
  // 4/3, floored to 1 GPU, and the GPU left goes to the oldest queue: A 2, B 1, C 1 (in milli-GPUs
  // without the floor it would be 1.334, 1.333, 1.333). So C reclaims two pods, both from B (the
  // most saturated, 2 against a fair share of 1), and A keeps all four.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 8; ++i) b.job(0, 1, 10000);
  for (int i = 0; i < 6; ++i) b.job(10, 1, 10000);
  auto w = b.build();
  for (JobIndex j = 0; j < w.jobs.size(); ++j) {
    fraction(w, j, 500);
    in_queue(w, j, j < 4 ? "A" : (j < 8 ? "B" : "C"));
  }
  KeyValues kv;
  ht::kai_queue(kv, "A", 0, 1, -1);
  ht::kai_queue(kv, "B", 0, 1, -1);
  ht::kai_queue(kv, "C", 0, 1, -1);
  const ShareRun run(w, ht::cluster(1, 4), sharing(true, kv), 1000 * kSecond);
  ASSERT_EQ(run.rec.preempted.size(), 2u);
  EXPECT_EQ(std::get<1>(run.rec.preempted[0]), 7u);
  EXPECT_EQ(std::get<1>(run.rec.preempted[1]), 6u);
  for (JobIndex j = 0; j < 4; ++j) EXPECT_EQ(run.sim->job_preemptions(j), 0) << "job " << j;
  EXPECT_DOUBLE_EQ(run.start(8), 40.0);
  EXPECT_DOUBLE_EQ(run.start(9), 40.0);
  for (JobIndex j = 10; j < 14; ++j) EXPECT_EQ(run.sim->job_start(j), -1) << "job " << j;
}

TEST(KaiShare, DivideFloorsToWholeGpusAndHandsOutTheFractionLeft) {
  // 2.5 GPUs in milli-GPUs between two queues without quota asking for 2 GPUs each: offers 1.25
  // floor to 1 GPU each, the 0.5 left goes to the older queue.
  std::vector<kai::DivisionEntry> q(2);
  q[0] = {0, -1, 2000, 1.0, 100, 0.0, 0};
  q[1] = {0, -1, 2000, 1.0, 100, 0.0, 1};
  EXPECT_EQ(kai::divide(q, 2500, 1.0, 1000), (std::vector<std::int64_t>{1500, 1000}));
  // A request below its offer is met exactly, fraction included.
  q[0].request = 700;
  EXPECT_EQ(kai::divide(q, 2500, 1.0, 1000), (std::vector<std::int64_t>{700, 1800}));
}

TEST(KaiShare, BadGpuSharingValueIsAnError) {
  std::vector<sim::InputError> errors;
  kai::check_params(ht::ordered_params({{"gpuSharing", "yes"}}), errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where(), "policy.gpuSharing");
  EXPECT_NE(errors[0].message().find("expected true or false"), std::string::npos) << errors[0].message();
}

TEST(KaiShare, RandomFractionalWorkloadNeverOvercommitsAndEveryJobEnds) {
  // The engine checks every placement (a share over its device throws); a mix of fractional and
  // whole pods in two queues with reclaim must run to completion, the same at every run.
  auto make = [] {
    ht::WorkloadBuilder b;
    sim::RngStream rng(7);
    double t = 0;
    for (int i = 0; i < 300; ++i) {
      t += static_cast<double>(rng.below(20));
      // Drawn one at a time, the last argument first as GCC evaluated them (a call's arguments are not
      // sequenced: under clang these workloads differed and the pinned fingerprints with them).
      const double run = 10 + static_cast<double>(rng.below(400));
      b.job(t, 1 + static_cast<int>(rng.below(3)), run);
    }
    auto w = b.build();
    for (JobIndex j = 0; j < w.jobs.size(); ++j) {
      if (j % 3 != 0) fraction(w, j, 100 * (1 + static_cast<int>(j % 9)));
      in_queue(w, j, j % 2 == 0 ? "A" : "B");
    }
    return w;
  };
  KeyValues kv;
  ht::kai_queue(kv, "A", 2, 1, -1);
  ht::kai_queue(kv, "B", 3, 1, -1);
  const ShareRun a(make(), ht::cluster(2, 4), sharing(true, kv));
  const ShareRun b(make(), ht::cluster(2, 4), sharing(true, kv));
  int shares = 0;
  for (JobIndex j = 0; j < a.w.jobs.size(); ++j) {
    EXPECT_EQ(a.sim->job_state(j), JobState::Completed) << "job " << j;
    EXPECT_EQ(a.sim->job_start(j), b.sim->job_start(j));
    shares += a.slice(j).gpu_milli > 0;
  }
  EXPECT_EQ(shares, 200);
}

// ----- gpu-memory pods ---------------------------------------------------------------------------
// A40 = A100-40G: 40 GiB = 40960 MiB, floored to 40900 (KAI floors the node label to a multiple of
// 100). A80 = A100-80G: 81920 -> 81900 MiB. A pod's fraction on a node is memory / device memory
// rounded up to hundredths: 20000 MiB is 0.49 on a 40 GB GPU, 30000 MiB 0.74 on 40 GB and 0.37 on
// 80 GB, 16000 MiB 0.40 and 0.20.

TEST(KaiShare, MemoryPodsShareADeviceByTheirFractionOnTheNode) {
  // One 40 GB GPU: two 20000-MiB pods take 0.49 each (0.98) and share it; a third would need 1.47
  // and waits until both end.
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).build();
  for (JobIndex j = 0; j < 3; ++j) gpu_memory(w, j, 20000);
  const ShareRun on(w, ht::cluster(1, 1, "A100-40G"), sharing(true));
  EXPECT_DOUBLE_EQ(on.start(0), 0.0);
  EXPECT_DOUBLE_EQ(on.start(1), 0.0);
  EXPECT_DOUBLE_EQ(on.start(2), 100.0);
  for (JobIndex j = 0; j < 3; ++j) {
    EXPECT_EQ(on.slice(j).gpus, 0) << "job " << j;
    EXPECT_EQ(on.slice(j).gpu_milli, 490) << "job " << j;
    EXPECT_EQ(on.slice(j).device, 0) << "job " << j;
  }
  // The share's GPU time is its fraction on the node: 3 x 0.49 x 100 s.
  EXPECT_EQ(on.sim->job_state(2), JobState::Completed);
  // On an 80 GB GPU the same pods take 0.25 each (20000 / 81900 = 0.2442): all three share it.
  const ShareRun big(w, ht::cluster(1, 1, "A100-80G"), sharing(true));
  for (JobIndex j = 0; j < 3; ++j) {
    EXPECT_DOUBLE_EQ(big.start(j), 0.0) << "job " << j;
    EXPECT_EQ(big.slice(j).gpu_milli, 250) << "job " << j;
  }
}

TEST(KaiShare, MemoryPodsWithoutGpuSharingAreRefusedAsByKaisWebhook) {
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).build();
  gpu_memory(w, 0, 20000);
  const ShareRun off(w, ht::cluster(1, 1, "A100-40G"), sharing(false));
  EXPECT_EQ(off.sim->job_state(0), JobState::Rejected);
  EXPECT_EQ(off.rec.rejected.at(0),
            "gpu_memory_mib needs gpuSharing: KAI refuses a gpu-memory pod while GPU sharing is disabled");
  EXPECT_DOUBLE_EQ(off.start(1), 0.0) << "a whole-GPU pod is not affected";
}

TEST(KaiShare, MemoryPodLargerThanEveryPoolsGpuIsRejected) {
  // A GPU type without a memory figure counts 100 MiB per GPU (KAI's default for a node without
  // the nvidia.com/gpu.memory label): a 20000-MiB pod fits no device there. 50000 MiB fits no
  // 40 GB GPU. A 100-MiB pod takes the whole 100 MiB (1.00), which is not a share: rejected too.
  auto w = ht::WorkloadBuilder().job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).job(0, 1, 100).build();
  gpu_memory(w, 0, 20000);
  gpu_memory(w, 1, 99);
  gpu_memory(w, 2, 100);
  const ShareRun nolabel(w, ht::cluster(1, 1, "G1"), sharing(true));
  EXPECT_EQ(nolabel.sim->job_state(0), JobState::Rejected);
  EXPECT_EQ(nolabel.rec.rejected.at(0),
            "gpu_memory_mib 20000 is less than one GPU's memory on no pool it may use (GPU memory comes from the "
            "pool's gpu_type; a type without a memory figure counts 100 MiB, as a KAI node without the "
            "nvidia.com/gpu.memory label)");
  EXPECT_DOUBLE_EQ(nolabel.start(1), 0.0) << "99 MiB of 100 is 0.99";
  EXPECT_EQ(nolabel.slice(1).gpu_milli, 990);
  EXPECT_EQ(nolabel.sim->job_state(2), JobState::Rejected);
  auto w2 = ht::WorkloadBuilder().job(0, 1, 100).build();
  gpu_memory(w2, 0, 50000);
  const ShareRun small(w2, ht::cluster(1, 1, "A100-40G"), sharing(true));
  EXPECT_EQ(small.sim->job_state(0), JobState::Rejected);
}

TEST(KaiShare, MemoryPodFractionDiffersPerNodeOnAMixedCluster) {
  // Node 0: one 40 GB GPU (pool p0); node 1: two 80 GB GPUs (pool p1). Binpack.
  //  t=0 A (0.3): node 0 has the fewest free GPUs (1 against 2): device 0 of node 0 (0.3).
  //  t=1 B (0.3): gpusharingorder: node 0's shared device has room: 0.6 there.
  //  t=2 M (30000 MiB): 0.74 on node 0 would make 1.34; node 1 takes it on a whole GPU: 0.37.
  //  t=3 N (16000 MiB): 0.40 on node 0 fits exactly (0.6 + 0.4 = 1.0), 0.20 on node 1 fits too;
  //      both have a shared device with room and node 0 has fewer whole free GPUs (0 against 1).
  //  t=4 P (30000 MiB): node 0 is full; gpupack puts it on node 1's shared device (0.37 + 0.37)
  //      rather than on the whole free GPU 1.
  auto w =
      ht::WorkloadBuilder().job(0, 1, 1000).job(1, 1, 1000).job(2, 1, 1000).job(3, 1, 1000).job(4, 1, 1000).build();
  fraction(w, 0, 300);
  fraction(w, 1, 300);
  gpu_memory(w, 2, 30000);
  gpu_memory(w, 3, 16000);
  gpu_memory(w, 4, 30000);
  const auto cluster = pools({{"A100-40G", 1}, {"A100-80G", 2}});
  const ShareRun run(w, cluster, sharing(true));
  const std::vector<std::tuple<models::NodeId, std::int32_t, std::int32_t>> want = {
      {0, 0, 300}, {0, 0, 300}, {1, 0, 370}, {0, 0, 400}, {1, 0, 370}};
  for (JobIndex j = 0; j < 5; ++j) {
    EXPECT_DOUBLE_EQ(run.start(j), static_cast<double>(j)) << "job " << j;
    EXPECT_EQ(run.slice(j).node, std::get<0>(want[j])) << "job " << j;
    EXPECT_EQ(run.slice(j).device, std::get<1>(want[j])) << "job " << j;
    EXPECT_EQ(run.slice(j).gpu_milli, std::get<2>(want[j])) << "job " << j;
  }
  // spread: A goes to node 1 (most free GPUs), device 0; B to node 1 (gpusharingorder), whole
  // device 1 (gpuspread prefers a whole GPU). M: node 1's shared devices have room for 0.37, so
  // node 1, the least used device (0.3 and 0.3: device 0). N (0.20 there): device 1 (0.3 < 0.67).
  // P: 0.37 fits only device 1 (0.5 + 0.37). Node 0 stays empty.
  const ShareRun spread(w, cluster, sharing(true, {{"placementStrategy.gpu", "spread"}}));
  const std::vector<std::tuple<models::NodeId, std::int32_t, std::int32_t>> want_spread = {
      {1, 0, 300}, {1, 1, 300}, {1, 0, 370}, {1, 1, 200}, {1, 1, 370}};
  for (JobIndex j = 0; j < 5; ++j) {
    EXPECT_DOUBLE_EQ(spread.start(j), static_cast<double>(j)) << "job " << j;
    EXPECT_EQ(spread.slice(j).node, std::get<0>(want_spread[j])) << "job " << j;
    EXPECT_EQ(spread.slice(j).device, std::get<1>(want_spread[j])) << "job " << j;
    EXPECT_EQ(spread.slice(j).gpu_milli, std::get<2>(want_spread[j])) << "job " << j;
  }
}

TEST(KaiShare, QueueIsChargedTheMemoryPodsFractionOnItsNode) {
  // Queue A has limit 1 GPU. On a 40 GB node, 20000-MiB pods count 0.49: two run (0.98), a third
  // would make 1.47 and waits with OverLimit. On an 80 GB node they count 0.25: all three run
  // (0.75) and a fourth too (1.0).
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(0, 1, 1000).job(0, 1, 1000).job(0, 1, 1000).build();
  for (JobIndex j = 0; j < 4; ++j) {
    gpu_memory(w, j, 20000);
    in_queue(w, j, "A");
  }
  KeyValues kv;
  ht::kai_queue(kv, "A", 1, 1, 1);
  const ShareRun small(w, ht::cluster(1, 4, "A100-40G"), sharing(true, kv), 500 * kSecond);
  EXPECT_DOUBLE_EQ(small.start(0), 0.0);
  EXPECT_DOUBLE_EQ(small.start(1), 0.0);
  EXPECT_EQ(small.sim->job_start(2), -1);
  EXPECT_EQ(small.reason(2).rfind("OverLimit", 0), 0u) << small.reason(2);
  const ShareRun big(w, ht::cluster(1, 4, "A100-80G"), sharing(true, kv), 500 * kSecond);
  for (JobIndex j = 0; j < 4; ++j) EXPECT_DOUBLE_EQ(big.start(j), 0.0) << "job " << j;
  EXPECT_EQ(big.slice(3).device, 0);
}

TEST(KaiShare, MemoryPodCapacityIsCheckedWithItsFractionOnEachNode) {
  // Queue A has limit 1 GPU. Node 0: one 80 GB GPU, node 1: one 40 GB GPU. Five 20000-MiB pods:
  // 0.25 each on node 0, 0.49 on node 1. KAI checks the limit per node with the pod's fraction
  // there: four run on node 0 (1.0 in all), the fifth fits node 1's free GPU but 0.49 would take
  // A over its limit: OverLimit.
  ht::WorkloadBuilder b;
  for (int i = 0; i < 5; ++i) b.job(0, 1, 1000);
  auto w = b.build();
  for (JobIndex j = 0; j < 5; ++j) {
    gpu_memory(w, j, 20000);
    in_queue(w, j, "A");
  }
  KeyValues kv;
  ht::kai_queue(kv, "A", 1, 1, 1);
  const ShareRun run(w, pools({{"A100-80G", 1}, {"A100-40G", 1}}), sharing(true, kv), 500 * kSecond);
  for (JobIndex j = 0; j < 4; ++j) {
    EXPECT_DOUBLE_EQ(run.start(j), 0.0) << "job " << j;
    EXPECT_EQ(run.slice(j).node, 0u) << "job " << j;
    EXPECT_EQ(run.slice(j).gpu_milli, 250) << "job " << j;
  }
  EXPECT_EQ(run.sim->job_start(4), -1);
  EXPECT_EQ(run.reason(4).rfind("OverLimit", 0), 0u) << run.reason(4);
}

TEST(KaiShare, MemoryPodGoesWhereItsFractionStaysWithinTheQueueLimit) {
  // Node 0: one 40 GB GPU, node 1: two 80 GB GPUs. B1 (queue B, 0.3) binpacks onto node 0; A1
  // (queue A, limit 1, 0.8) does not fit node 0's device and opens device 0 of node 1. M (queue A,
  // 16000 MiB) is 0.40 on node 0 and 0.20 on node 1; both nodes have a shared device with room and
  // binpack would pick node 0 (no whole GPU free), but 0.40 would take A to 1.2: M goes to node 1.
  auto w = ht::WorkloadBuilder().job(0, 1, 1000).job(1, 1, 1000).job(2, 1, 1000).build();
  fraction(w, 0, 300);
  fraction(w, 1, 800);
  gpu_memory(w, 2, 16000);
  in_queue(w, 0, "B");
  in_queue(w, 1, "A");
  in_queue(w, 2, "A");
  KeyValues kv;
  ht::kai_queue(kv, "A", 1, 1, 1);
  ht::kai_queue(kv, "B", 1, 1, -1);
  const ShareRun run(w, pools({{"A100-40G", 1}, {"A100-80G", 2}}), sharing(true, kv));
  EXPECT_EQ(run.slice(0).node, 0u);
  EXPECT_EQ(run.slice(1).node, 1u);
  EXPECT_DOUBLE_EQ(run.start(2), 2.0);
  EXPECT_EQ(run.slice(2).node, 1u);
  EXPECT_EQ(run.slice(2).device, 0);
  EXPECT_EQ(run.slice(2).gpu_milli, 200);
  // Without the limit, binpack takes node 0 at 0.40.
  KeyValues open;
  ht::kai_queue(open, "A", 1, 1, -1);
  ht::kai_queue(open, "B", 1, 1, -1);
  const ShareRun free_run(w, pools({{"A100-40G", 1}, {"A100-80G", 2}}), sharing(true, open));
  EXPECT_EQ(free_run.slice(2).node, 0u);
  EXPECT_EQ(free_run.slice(2).gpu_milli, 400);
}
