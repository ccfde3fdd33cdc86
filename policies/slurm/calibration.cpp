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

}  // namespace

bool searched_key(std::string_view key) {
  return key == "MaxJobsPerUser" || key == "MaxGPUsPerUser" ||
         (key.starts_with("users.") && (key.ends_with(".MaxJobs") || key.ends_with(".MaxGPUs")));
}

std::vector<CalibrationCandidate> calibration_candidates(const CalibrationInput& in) {
  std::int64_t gpu_lo = 0, gpu_hi = 0, job_lo = 0, job_hi = 0, biggest = 0;
  for (std::size_t i = 0; i < in.users.size(); ++i) {
    const auto& u = in.users[i];
    gpu_lo = i == 0 ? u.max_gpus : std::min(gpu_lo, u.max_gpus);
    job_lo = i == 0 ? u.max_jobs : std::min<std::int64_t>(job_lo, u.max_jobs);
    gpu_hi = std::max(gpu_hi, u.max_gpus);
    job_hi = std::max<std::int64_t>(job_hi, u.max_jobs);
    biggest = std::max(biggest, u.largest_job);
  }
  std::vector<std::pair<std::string, Params>> limits{{"no limits", {}}};
  // A job asking alone for more than a GPU limit would be held for good (as in Slurm): the global
  // caps start at the largest job of the fit window, each user's at its own largest job.
  for (std::int64_t g : limit_ladder(std::max(gpu_lo, biggest), gpu_hi))
    limits.push_back({"QOS MaxGPUsPerUser " + std::to_string(g), {{"MaxGPUsPerUser", std::to_string(g)}}});
  for (std::int64_t j : limit_ladder(job_lo, job_hi))
    limits.push_back({"QOS MaxJobsPerUser " + std::to_string(j), {{"MaxJobsPerUser", std::to_string(j)}}});
  // Per user: association limits at a share of what each reached; users the fit window did not see
  // are held by a QOS limit at the largest of those (which binds no user seen).
  const std::pair<int, int> shares[] = {{1, 2}, {3, 4}, {1, 1}};
  for (const std::string what : {"GPUs", "jobs", "GPUs + jobs"}) {
    for (const auto& [num, den] : shares) {
      if (what == "GPUs + jobs" && num != den) continue;
      const bool g = what != "jobs", j = what != "GPUs";
      Params p;
      std::int64_t top_g = 0, top_j = 0;
      for (const auto& u : in.users) {
        const std::int64_t ug = std::max(scaled_share(u.max_gpus, num, den), u.largest_job);
        const std::int64_t uj = scaled_share(u.max_jobs, num, den);
        top_g = std::max(top_g, ug);
        top_j = std::max(top_j, uj);
        if (g) p.emplace_back("users." + u.name + ".MaxGPUs", std::to_string(ug));
        if (j) p.emplace_back("users." + u.name + ".MaxJobs", std::to_string(uj));
      }
      if (j) p.emplace_back("MaxJobsPerUser", std::to_string(top_j));
      const std::string share = num == den ? "all" : std::to_string(num) + "/" + std::to_string(den);
      const std::string label = "per-user " + what + " at " + share + " of observed (association limits)";
      if (!g) {
        limits.push_back({label, std::move(p)});
        continue;
      }
      // With all of observed, also a QOS GPU cap for everyone from the ladder below the largest
      // per-user value (never below the largest job).
      for (std::int64_t cap : limit_ladder(std::max(gpu_lo, biggest), top_g)) {
        if (cap < top_g && num != den) continue;
        Params q = p;
        q.emplace_back("MaxGPUsPerUser", std::to_string(cap));
        limits.push_back({label + (cap < top_g ? ", QOS MaxGPUsPerUser " + std::to_string(cap) : ""), std::move(q)});
      }
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
    scheds.push_back({", bf_max_job_test " + std::to_string(in.queue_depth),
                      {{"SchedulerParameters", with_bf_max_job_test(in.own, in.queue_depth)}}});
  }
  // The job's priority: the scenario's, and, when it weighs no fair share and the log has more
  // than one user, Slurm's multifactor fair-share factor (its defaults otherwise: Fair Tree,
  // PriorityDecayHalfLife 7 days) weighted above every other factor. The log supports it: the
  // SWF's user field names each job's association.
  std::vector<std::pair<std::string, Params>> prios{{"", {}}};
  if (in.users.size() > 1 && !(config.w_fairshare > 0))
    prios.push_back({", fair share", {{"PriorityType", "priority/multifactor"}, {"PriorityWeightFairshare", "10000"}}});
  std::vector<CalibrationCandidate> out;
  for (const std::int32_t nodes : in.sizes)
    for (const auto& [plabel, pparams] : prios)
      for (const auto& [slabel, sparams] : scheds)
        for (const auto& [label, params] : limits) {
          CalibrationCandidate c;
          c.label = "slurm, " + label + slabel + plabel;
          if (nodes > 0) c.label += ", " + std::to_string(nodes) + " nodes";
          c.nodes = nodes;
          c.params = pparams;
          c.params.insert(c.params.end(), sparams.begin(), sparams.end());
          c.params.insert(c.params.end(), params.begin(), params.end());
          out.push_back(std::move(c));
        }
  return out;
}

}  // namespace headroom::policies::slurm
