#pragma once

// fifo with EASY backfilling and per-user limits (docs/fidelity.md, docs/policies.md):
//
//   policy: {name: fifo, backfill: easy, MaxJobsPerUser: 64, MaxGPUsPerUser: 512,
//            users: {user45: {MaxJobs: 522}, user19: {MaxGPUs: 3648}}}
//
// EASY backfilling (D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; A. Mu'alem and
// D. Feitelson, "Utilization, predictability, workloads, and user runtime estimates in scheduling
// the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001): jobs start in submit order while they
// fit. The first that does not (the head) gets the only reservation: its shadow time is when,
// with running jobs ending at start + estimate (the time limit, the log's requested time, else the
// recorded run time), enough GPUs are free for it; the GPUs then free beyond its need are the
// extra GPUs. A later job may start now if it fits and either ends by the shadow time or uses no
// more than the extra GPUs (which it then takes). Unlike conservative backfilling (Slurm's
// sched/backfill) no other job holds a reservation.
//
// Per-user limits, as Slurm's QOS MaxJobsPerUser and MaxTRESPerUser=gres/gpu=N (or an
// association's MaxJobs / GrpTRES=gres/gpu=N under users.<name>): a job whose user is at a limit
// stays pending and is passed over (it does not block the queue, as in Slurm, where such a job
// pends with reason QOSMaxJobsPerUserLimit); users.<name> overrides the global values. 0 = no limit.
//
// Placement is the fifo's consolidate placement. With `backfill: none` (the default) and no limits
// this is exactly the strict fifo.

#include <memory>
#include <vector>

#include "policies/api.hpp"

namespace headroom::policies {

// The keys this option adds to fifo.
const std::vector<std::string>& easy_param_keys();
// True when `params` asks for backfill or limits (the fifo's plain queue policy serves otherwise).
bool wants_easy(const PolicyParams& params);
void check_easy_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
std::unique_ptr<Policy> make_easy_policy(const PolicyParams& params);

}  // namespace headroom::policies
