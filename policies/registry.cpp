#include "policies/registry.hpp"

#include <functional>

#include "policies/baselines/easy.hpp"
#include "policies/baselines/gavel.hpp"
#include "policies/kai/kai.hpp"
#include "policies/kubernetes/kubernetes.hpp"
#include "policies/kueue/kueue.hpp"
#include "policies/baselines/las.hpp"
#include "policies/baselines/queue_order.hpp"
#include "policies/slurm/slurm.hpp"
#include "policies/baselines/srtf.hpp"
#include "policies/volcano/volcano.hpp"
#include "sim/suggest.hpp"

namespace headroom::policies {

namespace {

struct Entry {
  PolicyInfo info;
  // Validates values of known keys; returns errors.
  std::function<void(const PolicyParams&, std::vector<sim::InputError>&)> check_values;
  std::function<std::unique_ptr<Policy>(const PolicyParams&, std::uint64_t)> make;
};

void check_placement(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  auto it = params.find("placement");
  if (it == params.end()) return;
  if (it->second.text != "consolidate")
    errors.emplace_back(it->second.file, it->second.line, it->second.column, "policy.placement",
                        "unknown placement \"" + it->second.text + "\"; expected: consolidate");
}

std::vector<std::string> fifo_param_keys() {
  std::vector<std::string> keys{"placement"};
  for (const auto& k : easy_param_keys()) keys.push_back(k);
  return keys;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {{"fifo",
        "strict first-in first-out with consolidate placement (Helios FIFO); optional EASY backfilling and per-user "
        "limits (backfill: easy, MaxJobsPerUser, MaxGPUsPerUser, users.<name>.MaxJobs / MaxGPUs)",
        fifo_param_keys()},
       [](const PolicyParams& params, std::vector<sim::InputError>& errors) {
         check_placement(params, errors);
         check_easy_params(params, errors);
       },
       [](const PolicyParams& params, std::uint64_t) {
         return wants_easy(params) ? make_easy_policy(params) : make_queue_policy(QueueKey::Submit);
       }},
      {{"sjf",
        "shortest recorded run time first, head-of-line blocking, consolidate placement (Helios SJF)",
        {"placement"}},
       check_placement,
       [](const PolicyParams&, std::uint64_t) { return make_queue_policy(QueueKey::Runtime); }},
      {{"kubernetes",
        "kube-scheduler default profile + NVIDIA device plugin (whole GPUs): priority queue with backoff, "
        "NodeResourcesFit + BalancedAllocation scoring, DefaultPreemption, ResourceQuota admission",
        k8s::param_keys()},
       k8s::check_params,
       [](const PolicyParams& params, std::uint64_t seed) { return k8s::make_policy(params, seed); }},
      {{"srtf",
        "preemptive shortest remaining time first, checkpoint overhead 7/30/60 s, consolidate placement (Helios SRTF)",
        {"checkpoint_overhead"}},
       check_checkpoint_overhead,
       [](const PolicyParams& params, std::uint64_t) { return make_srtf_policy(params); }},
      {{"las",
        "Tiresias discretised 2D-LAS: queues by attained GPU-time, FIFO within, preemptive, consolidate placement",
        {"queue_limit", "promote_knob", "checkpoint_overhead"}},
       check_las_params,
       [](const PolicyParams& params, std::uint64_t) { return make_las_policy(params); }},
      {{"volcano",
        "Volcano batch scheduler: sessions of enqueue/allocate/backfill (+ preempt, reclaim), PodGroup gang, "
        "overcommit, proportion deserved by queue weight, drf, priority, binpack/nodeorder, plugin tiers",
        volcano::param_keys()},
       volcano::check_params,
       [](const PolicyParams& params, std::uint64_t seed) { return volcano::make_policy(params, seed); }},
      {{"kueue",
        "Kueue on OpenShift AI: ClusterQueues, cohorts and flavors admit whole workloads (nominal, borrowing and "
        "lending quota, classic or fair-sharing preemption, admission checks, waitForPodsReady); kube-scheduler "
        "places the admitted pods",
        kueue::param_keys()},
       kueue::check_params,
       [](const PolicyParams& params, std::uint64_t) { return kueue::make_policy(params); }},
      {{"kai",
        "NVIDIA KAI-Scheduler (Run:ai): hierarchical queues with quota / overQuotaWeight / limit fair share, gang "
        "allocation, binpack or spread, reclaim, in-queue preemption, consolidation, stale-gang eviction",
        kai::param_keys()},
       kai::check_params,
       [](const PolicyParams& params, std::uint64_t seed) { return kai::make_policy(params, seed); }},
      {{"slurm",
        "slurmctld: multifactor priority with classic or Fair Tree fair-share, strict-priority main scheduler per "
        "partition, conservative backfill, cons_tres + GRES gpu, time limits, partition_prio / qos preemption",
        slurm::param_keys()},
       slurm::check_params,
       [](const PolicyParams& params, std::uint64_t) { return slurm::make_policy(params); }},
      {{"gavel",
        "Gavel-style heterogeneity-aware rounds (OSDI'20): max-min fairness on throughput normalised by the "
        "runtime model, jobs assigned to the GPU type they gain most on, checkpoint moves between rounds",
        gavel::param_keys()},
       gavel::check_params,
       [](const PolicyParams& params, std::uint64_t) { return gavel::make_policy(params); }},
  };
  return kEntries;
}

// A parameter key against an accepted one; a segment written <name> in the accepted key
// ("quota.<tenant>.gpu") matches any non-empty text.
bool key_matches(std::string_view pattern, std::string_view key) {
  const auto open = pattern.find('<');
  const auto close = open == std::string_view::npos ? open : pattern.find('>', open);
  if (close == std::string_view::npos) return pattern == key;
  const std::string_view prefix = pattern.substr(0, open), suffix = pattern.substr(close + 1);
  return key.size() > prefix.size() + suffix.size() && key.starts_with(prefix) && key.ends_with(suffix);
}

const Entry* find(std::string_view name) {
  for (const auto& e : entries())
    if (e.info.name == name) return &e;
  return nullptr;
}

}  // namespace

const std::vector<PolicyInfo>& policy_catalogue() {
  static const std::vector<PolicyInfo> kInfos = [] {
    std::vector<PolicyInfo> out;
    for (const auto& e : entries()) out.push_back(e.info);
    return out;
  }();
  return kInfos;
}

std::vector<sim::InputError> check_policy(std::string_view name, const PolicyParams& params, const std::string& file,
                                          int line, int column) {
  std::vector<sim::InputError> errors;
  const Entry* e = find(name);
  if (e == nullptr) {
    std::vector<std::string> names;
    std::string known;
    for (const auto& info : policy_catalogue()) {
      names.push_back(info.name);
      known += (known.empty() ? "" : ", ") + info.name;
    }
    std::string msg = "unknown policy \"" + std::string(name) + "\"";
    if (auto s = sim::closest_match(name, names)) msg += "; did you mean \"" + *s + "\"?";
    msg += " (known: " + known + ")";
    errors.emplace_back(file, line, column, "policy.name", msg);
    return errors;
  }
  for (const auto& [key, value] : params) {
    bool known = false;
    for (const auto& k : e->info.params) known = known || key_matches(k, key);
    if (known) continue;
    std::string msg = "unknown parameter \"" + key + "\" for policy " + e->info.name;
    if (auto s = sim::closest_match(key, e->info.params)) msg += "; did you mean \"" + *s + "\"?";
    errors.emplace_back(value.file, value.line, value.column, "policy." + key, msg);
  }
  e->check_values(params, errors);
  return errors;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyParams& params, std::uint64_t seed) {
  auto errors = check_policy(name, params, "", 0, 0);
  if (!errors.empty()) throw errors.front();
  return find(name)->make(params, seed);
}

}  // namespace headroom::policies
