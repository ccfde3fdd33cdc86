#pragma once

// gavel: a heterogeneity-aware round-based scheduler in the style of Gavel (Narayanan et al.,
// "Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning Workloads", OSDI'20;
// stanford-futuredata/gavel, scheduler/scheduler.py and scheduler/policies/max_min_fairness.py),
// using the scenario's throughput matrix (models/throughput.hpp) through ClusterView::pool_speed.
// docs/heterogeneity.md describes it with its differences from Gavel.
//
//  - Normalised throughput of job m on pool p: s(m, p) = speed(m, p) / prop(m), where prop(m) is
//    its speed averaged over the GPUs of the pools it may use (the throughput an equal share of
//    every GPU type would give it: Gavel's "proportional" baseline).
//  - Attained service a(m): the sum over its runs of wall time x s(m, pool). Its rate is
//    a(m) / (now - submit).
//  - Every `round` (default 360 s, Gavel's --time_per_iteration) the allocation is re-planned:
//    (1) active jobs (pending, or running and not being evicted) in ascending rate, ties by submit
//    time then index (max-min fairness: the job furthest behind goes first), are selected while
//    their GPUs fit the cluster's up GPUs; (2) the selected jobs, in descending comparative
//    advantage max_p s(m, p) / min_p s(m, p) (ties: the selection order), each take the pool with
//    the highest s(m, p) that still has room for them (counted in GPUs per pool); (3) running jobs
//    not selected, or planned on another pool than they run on, are preempted with
//    PreemptMode::Checkpoint, no grace and `checkpoint_overhead` (default 0 s); planned pending
//    jobs start on their pool (consolidate placement inside it) as soon as it has room.
//  - Between rounds, GPUs that free up (a job ended) go to pending jobs in the same fairness
//    order, each on its fastest pool with room, once no eviction of this policy is in flight.
//  - Jobs asking for no GPU or a GPU fraction are started with the plain consolidate placement
//    and never preempted. A job that can never fit is rejected at once.
//  Not Gavel: no LP solver (the greedy selection and assignment above approximate its max-min
//  allocation), no space sharing, rounds are not aligned per GPU type, fairness is per job (no
//  priority weights), and GPUs freed mid-round are reused at once instead of at the next round.

#include <memory>

#include "policies/api.hpp"

namespace headroom::policies::gavel {

std::vector<std::string> param_keys();
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
std::unique_ptr<Policy> make_policy(const PolicyParams& params);

}  // namespace headroom::policies::gavel
