#pragma once

// las: Tiresias's discretised two-dimensional least-attained-service scheduler (Gu et al.,
// "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19, section 3.2-3.3,
// "Discretized 2D-LAS"), following its simulator's `dlas-gpu` scheme
// (SymbioticLab/Tiresias, simulator/run_sim.py dlas_sim_jobs(gputime=True, solve_starvation),
// simulator/jobs.py queue_limit):
//  - Attained service = GPUs x time the job has run (two-dimensional: space and time). It is
//    information-agnostic: the recorded run time is never looked at.
//  - Queues Q0..Q(K-1) with thresholds `queue_limit` (GPU-seconds; default 3250, the first
//    threshold of the simulator's jobs.py, giving K = 2 queues). A new job enters Q0; a running job
//    whose attained service reaches the threshold of its queue moves to the end of the next one
//    (at the exact tick; the policy asks the engine to wake it then).
//  - Starvation prevention (PROMOTEKNOB, `promote_knob`, 0 = off, the `dlas-gpu` default): a
//    pending job below Q0 that has run before is promoted to the end of Q0, with its attained
//    service for queueing reset to 0, once the time it has waited since it last entered Q0 reaches
//    promote_knob x its run time since then (the simulator's last_pending_time >=
//    executed_time x solve_starvation).
//  - Each pass walks Q0, Q1, ... and each queue in its order with a GPU quota equal to the
//    cluster's GPUs: a job that fits the quota left keeps running or is selected to start; a
//    running job that does not fit is preempted (PreemptMode::Checkpoint, no grace); a pending one
//    is skipped (fit-first within FIFO). After the pass each queue is reordered running jobs first,
//    then pending ones, each keeping its order (as the simulator does).
//  - Differences from the simulator: jobs are placed with `consolidate` (the simulator's `count`
//    scheme only counts GPUs), so a selected job may still wait for a placement; a preempted job is
//    charged a checkpoint overhead (`checkpoint_overhead`, default Helios's 7/30/60 s by GPU count;
//    the simulator charges none), and its run time, including that overhead, counts as attained
//    service. Quota per pool and rejection of never-fitting jobs as in srtf (policies/baselines/srtf.hpp).

#include <memory>

#include "policies/api.hpp"

namespace headroom::policies {

void check_las_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
std::unique_ptr<Policy> make_las_policy(const PolicyParams& params);

}  // namespace headroom::policies
