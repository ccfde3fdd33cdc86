// slurm's calibration knobs (SystemModule::calibration, planner/calibrate.hpp): on top of the
// scenario's own slurm configuration, Slurm's per-user limits (policies/slurm/limits.hpp), a
// backfill that looks as deep into the queue as the recorded system started, and the multifactor
// fair-share factor.
#include "policies/slurm/calibration.hpp"

#include <algorithm>

#include "policies/common/calibration.hpp"
#include "policies/slurm/slurm.hpp"
#include "sim/text.hpp"

namespace headroom::policies::slurm {

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

// The scenario's SchedulerParameters with bf_max_job_test set to `n`.
std::string with_bf_max_job_test(const PolicyParams* own, std::int64_t n) {
  std::string text;
  if (own != nullptr)
    if (const auto it = own->find("SchedulerParameters"); it != own->end()) text = it->second.text;
  std::string out;
  if (!text.empty())
    for (const std::string& item : sim::split_on(text, ','))
      if (!item.empty() && !item.starts_with("bf_max_job_test=")) out += item + ",";
  return out + "bf_max_job_test=" + std::to_string(n);
}

std::string factor_key(const std::string& partition) { return "partitions." + partition + ".PriorityJobFactor"; }

// The scenario's partitions that the fit window saw start kMinJobsForUserLimit jobs or more, each
// with its PriorityJobFactor by rank of its recorded median wait: the least-waiting the highest,
// equal medians the same, the longest-waiting 1 (Slurm's default, which the partitions seen too
// rarely keep). In the order of their keys; empty when fewer than two such partitions wait
// differently.
std::vector<std::pair<std::string, std::int64_t>> partition_ranks(const CalibrationInput& in, const Config& config) {
  std::vector<const CalibrationQueue*> ranked;
  for (const CalibrationQueue& q : in.queues) {
    if (q.jobs < kMinJobsForUserLimit) continue;
    if (std::any_of(config.partitions.begin(), config.partitions.end(),
                    [&](const PartitionConf& p) { return p.name == q.name; }))
      ranked.push_back(&q);
  }
  std::sort(ranked.begin(), ranked.end(), [](const CalibrationQueue* a, const CalibrationQueue* b) {
    return a->median_wait_s != b->median_wait_s ? a->median_wait_s < b->median_wait_s : a->name < b->name;
  });
  std::vector<std::int64_t> level(ranked.size());  // 0: the least-waiting median
  for (std::size_t i = 1; i < ranked.size(); ++i)
    level[i] = level[i - 1] + (ranked[i]->median_wait_s != ranked[i - 1]->median_wait_s);
  if (ranked.empty() || level.back() == 0) return {};
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t i = 0; i < ranked.size(); ++i) out.emplace_back(ranked[i]->name, level.back() + 1 - level[i]);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return factor_key(a.first) < factor_key(b.first); });
  return out;
}

}  // namespace

bool searched_key(std::string_view key) {
  return key == "MaxJobsPerUser" || key == "MaxGPUsPerUser" ||
         (key.starts_with("users.") && (key.ends_with(".MaxJobs") || key.ends_with(".MaxGPUs")));
}

std::vector<CalibrationCandidate> calibration_candidates(const CalibrationInput& in) {
  std::int64_t gpu_hi = 0, job_hi = 0, biggest = 0;
  for (const auto& u : in.users) {
    gpu_hi = std::max(gpu_hi, u.max_gpus);
    job_hi = std::max(job_hi, u.max_jobs);
    biggest = std::max(biggest, u.largest_job);
  }
  // Few rules, each a knob that should hold on a later window (issue #33): QOS caps for everyone
  // at a share of the most one user reached (one parameter each), and association limits with
  // headroom above what each user reached, only for users seen often enough
  // (kMinJobsForUserLimit); a user not seen that often has no limit of its own. A GPU limit never
  // falls below the largest job of the fit window (or the user's own): a job asking alone for more
  // than its limit would be held for good, as in Slurm. Rules whose values coincide are tried once.
  std::vector<std::pair<std::string, Params>> limits{{"no limits", {}}};
  std::vector<Params> seen{{}};
  const auto add = [&](std::string label, Params p) {
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) return;
    seen.push_back(p);
    limits.push_back({std::move(label), std::move(p)});
  };
  for (const Share& share : kCapShares) {
    if (gpu_hi <= 0) break;
    const std::int64_t g = std::max(scaled_share(gpu_hi, share.num, share.den), biggest);
    add(std::string("QOS MaxGPUsPerUser at ") + share.text + " the most one user held",
        {{"MaxGPUsPerUser", std::to_string(g)}});
  }
  for (const Share& share : kCapShares) {
    if (job_hi <= 0) break;
    add(std::string("QOS MaxJobsPerUser at ") + share.text + " the most one user ran",
        {{"MaxJobsPerUser", std::to_string(scaled_share(job_hi, share.num, share.den))}});
  }
  const std::string often = " (users with " + std::to_string(kMinJobsForUserLimit) + "+ jobs; association limits)";
  for (const bool jobs_too : {false, true}) {
    for (const Headroom& h : kUserHeadroom) {
      if (jobs_too && h.num != 2 * h.den) continue;  // GPUs + jobs at 2x only
      Params p;
      for (const auto& u : in.users) {
        if (u.jobs < kMinJobsForUserLimit) continue;
        p.emplace_back("users." + u.name + ".MaxGPUs",
                       std::to_string(std::max(scaled_share(u.max_gpus, h.num, h.den), u.largest_job)));
        if (jobs_too)
          p.emplace_back("users." + u.name + ".MaxJobs", std::to_string(scaled_share(u.max_jobs, h.num, h.den)));
      }
      if (p.empty()) continue;
      add(std::string("per-user GPUs") + (jobs_too ? " + jobs" : "") + " at " + h.text + " what each reached" + often,
          std::move(p));
    }
  }
  // The scenario's backfill is kept, unless the log's header says the system ran FCFS.
  // Backfill looks at bf_max_job_test jobs; when the recorded system started jobs from deeper in
  // its queue (queue_depth: the most jobs submitted earlier and still waiting when one started),
  // a backfill that looks that deep is a knob too.
  const Config config = in.own != nullptr ? parse_config(*in.own) : Config{};
  std::vector<std::pair<std::string, Params>> scheds{{"", {}}};
  if (in.recorded_scheduler == "fcfs") {
    scheds[0].second.emplace_back("SchedulerType", "sched/builtin");
  } else if (in.queue_depth > config.bf_max_job_test) {
    scheds.push_back({", bf_max_job_test at the recorded queue depth",
                      {{"SchedulerParameters", with_bf_max_job_test(in.own, in.queue_depth)}}});
  }
  // The job's priority: the scenario's, and, when it weighs no fair share and the log has more
  // than one user, Slurm's multifactor fair-share factor (its defaults otherwise: Fair Tree,
  // PriorityDecayHalfLife 7 days) weighted above every other factor. The log supports it: the
  // SWF's user field names each job's association.
  std::vector<std::pair<std::string, Params>> prios{{"", {}}};
  // A header naming EASY, conservative backfilling or FCFS names a first-come-first-served order:
  // fair share is not what that system did, and is not offered.
  const bool fcfs_order =
      in.recorded_scheduler == "easy" || in.recorded_scheduler == "conservative" || in.recorded_scheduler == "fcfs";
  if (in.users.size() > 1 && !(config.w_fairshare > 0) && !fcfs_order)
    prios.push_back({", fair share", {{"PriorityType", "priority/multifactor"}, {"PriorityWeightFairshare", "10000"}}});
  std::vector<CalibrationCandidate> out;
  const auto emit = [&](const std::string& label, const std::string& slabel, const Params& sparams,
                        const std::string& plabel, const Params& pparams, const Params& params, std::int32_t nodes) {
    CalibrationCandidate c;
    c.label = "slurm, " + label + slabel + plabel;
    if (nodes > 0) c.label += ", as many nodes as the fit window kept busy";
    c.nodes = nodes;
    c.params = pparams;
    c.params.insert(c.params.end(), sparams.begin(), sparams.end());
    c.params.insert(c.params.end(), params.begin(), params.end());
    out.push_back(std::move(c));
  };
  for (const std::int32_t nodes : in.sizes)
    for (const auto& [plabel, pparams] : prios)
      for (const auto& [slabel, sparams] : scheds)
        for (const auto& [label, params] : limits) emit(label, slabel, sparams, plabel, pparams, params, nodes);
  // The partitions' priority as the log's queues show it, as sites give an express or a high
  // queue priority over a normal and a low one: the partition whose jobs the fit window saw wait
  // least first (one parameter), or every partition seen often enough by rank of its recorded
  // median wait; PriorityJobFactor weighted above every other factor. Offered with no limits
  // only, alone and with fair share (a handful of runs more).
  const auto ranks = partition_ranks(in, config);
  if (!(config.w_partition > 0) && !fcfs_order && !ranks.empty()) {
    // The least-waiting first: factor 2 for the partitions of the top rank, the default for the rest.
    const std::int64_t top = std::max_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
                               return a.second < b.second;
                             })->second;
    std::vector<std::pair<std::string, Params>> orders;
    for (const bool first_only : {true, false}) {
      Params alone{{"PriorityType", "priority/multifactor"}, {"PriorityWeightPartition", "10000"}};
      for (const auto& [name, factor] : ranks)
        if (!first_only || factor == top) alone.emplace_back(factor_key(name), std::to_string(first_only ? 2 : factor));
      const std::string label = first_only ? ", the partition whose jobs waited least first"
                                           : ", partition priority by the queues' recorded waits";
      orders.push_back({label, alone});
      if (prios.size() > 1) {
        Params both = alone;
        both.emplace_back("PriorityWeightFairshare", "10000");
        orders.push_back({label + ", fair share", both});
      }
    }
    for (const std::int32_t nodes : in.sizes)
      for (const auto& [plabel, pparams] : orders)
        for (const auto& [slabel, sparams] : scheds) emit("no limits", slabel, sparams, plabel, pparams, {}, nodes);
  }
  return out;
}

}  // namespace headroom::policies::slurm
