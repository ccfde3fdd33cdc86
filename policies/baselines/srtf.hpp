#pragma once

// Preemptive literature baselines shared code, and `srtf`.
//
// srtf: preemptive shortest-remaining-time-first as in the Helios simulator
// (S-Lab-System-Group/HeliosArtifact, framework/QSSF Service, policies/srtf.py and
// policies/policy.py `ckpt_overhead`). Each pass:
//  1. sorts the pending and running jobs together by remaining run time (the recorded run time
//     minus the work done, plus every checkpoint overhead charged so far), shortest first; ties
//     keep Helios's list order: pending jobs (in queue-entry order: arrival, or preemption for a
//     preempted job) before running jobs (in start order);
//  2. walks that order with a GPU quota equal to the cluster's GPUs (of nodes that are up): a job
//     whose GPU count fits the quota left takes it (a pending one is to start); a running job that
//     does not fit is preempted. A pending job that does not fit is skipped, so a smaller one
//     behind it may still be selected (no head-of-line blocking);
//  3. preempts those jobs (PreemptMode::Checkpoint, no grace, as Helios releases at once), adding
//     the checkpoint overhead to their remaining time: 7 s for a 1-GPU job, 30 s up to 8 GPUs, 60 s
//     above (Helios's rule; a 0-GPU job gets 30 s);
//  4. starts the selected pending jobs in that order with the `consolidate` placement; one that
//     cannot be placed (fragmentation) stays pending with its quota counted for this pass.
// When step 3 preempts anything, step 4 runs in the pass the engine makes once the victims have
// released their GPUs (the same tick), as Helios releases before it allocates.
// With several pools, the quota is kept per pool (GPUs of its nodes that are up); a running job
// counts against its own pool, a pending one against the first eligible pool (in scenario order)
// with quota enough. A job that could not fit the empty cluster is rejected (as fifo/sjf).
//
// Differences from Helios, by design: headroom is event-driven in milliseconds. Helios steps
// every second and, in srtf.py, decrements `remain` the second after a start and notices the end
// one step after it reaches 0, so each run segment ends 1 s later than its remaining time. The
// order of the jobs only changes at events (running jobs' remaining times all fall at the same
// rate), so re-deciding at events gives the decisions Helios makes every second.
// Not compared job by job with Helios: tests/data/helios holds reference starts for fifo and sjf
// only (bench/peers/helios/compare.py could produce srtf ones, minding the 1-s shift above).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "policies/api.hpp"

namespace headroom::policies {

// How much a checkpoint/restore costs a preempted job.
struct CheckpointOverhead {
  bool helios = true;  // Helios's rule by GPU count
  Tick fixed = 0;      // used when !helios
  Tick of(std::int32_t gpus) const;
};

// Helios policy.py ckpt_overhead: 7 s for 1 GPU, 30 s for at most 8 (0 included), else 60 s.
Tick helios_checkpoint_overhead(std::int32_t gpus);

// One decision pass of a quota-greedy preemptive policy (Helios srtf.py steps 3-5, Tiresias
// dlas): `order` lists pending and running jobs, most preferred first. Selected pending jobs are
// started with the consolidate placement (unless a preemption was needed: then nothing starts in
// this pass); running jobs not selected are preempted with PreemptMode::Checkpoint, no grace and
// `overhead.of(gpus)`. `label` names the policy in reasons.
struct GreedyOutcome {
  std::vector<JobIndex> started;
  std::vector<JobIndex> preempted;
  std::vector<JobIndex> unplaced;  // selected pending jobs without a placement
};
GreedyOutcome greedy_pass(Session& s, std::span<const JobIndex> order, const CheckpointOverhead& overhead,
                          std::string_view label);

// Parameters both preemptive baselines accept: checkpoint_overhead ("helios" or a duration).
void check_checkpoint_overhead(const PolicyParams& params, std::vector<sim::InputError>& errors);
CheckpointOverhead parse_checkpoint_overhead(const PolicyParams& params);

std::unique_ptr<Policy> make_srtf_policy(const PolicyParams& params);

}  // namespace headroom::policies
