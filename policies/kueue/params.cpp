// Parameters of the kueue policy: the CRD vocabulary of ResourceFlavor, Cohort, ClusterQueue and
// AdmissionCheck plus Kueue's Configuration (fairSharing, waitForPodsReady), flattened by the
// scenario loader into dotted keys.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "policies/kueue/kueue.hpp"
#include "policies/common/param_text.hpp"
#include "policies/common/params.hpp"
#include "sim/suggest.hpp"
#include "sim/text.hpp"

namespace headroom::policies::kueue {

namespace {

constexpr std::array<std::string_view, kResources> kResourceNames = {"gpu", "cpu", "memory"};

struct Parser {
  const PolicyParams& params;
  std::vector<sim::InputError> errors;
  Config out;

  void error(const std::string& key, const ParamValue& v, const std::string& msg) {
    errors.emplace_back(v.file, v.line, v.column, "policy." + key, msg);
  }

  // A key that matches a pattern of param_keys() loosely (a <...> spans dots) but not the
  // structure; keys matching no pattern are reported by the registry.
  void unknown(const std::string& key, const ParamValue& v) {
    for (const auto& pattern : param_keys()) {
      const auto open = pattern.find('<');
      const auto close = open == std::string::npos ? open : pattern.find('>', open);
      const bool match = close == std::string::npos
                             ? pattern == key
                             : key.size() > open + (pattern.size() - close - 1) &&
                                   key.starts_with(pattern.substr(0, open)) && key.ends_with(pattern.substr(close + 1));
      if (match) {
        error(key, v, "unknown parameter \"" + key + "\" for policy kueue (see docs/policies/kueue.md)");
        return;
      }
    }
  }

  bool integer(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
    const auto n = parse_int(v.text);
    if (!n || *n < lo || *n > hi) {
      error(key, v,
            "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + quoted(v.text));
      return false;
    }
    dst = *n;
    return true;
  }

  bool duration(const std::string& key, const ParamValue& v, bool positive, sim::Tick& dst) {
    const auto d = sim::parse_duration(v.text);
    if (!d || *d < 0 || (positive && *d == 0)) {
      error(key, v,
            std::string("expected a ") + (positive ? "positive " : "") + "duration such as 30s, 500ms or 5m, got " +
                quoted(v.text));
      return false;
    }
    dst = *d;
    return true;
  }

  bool boolean(const std::string& key, const ParamValue& v, bool& dst) {
    if (v.text == "true" || v.text == "false") {
      dst = v.text == "true";
      return true;
    }
    error(key, v, "expected true or false, got " + quoted(v.text));
    return false;
  }

  bool weight(const std::string& key, const ParamValue& v, double& dst) {
    const auto n = parse_int(v.text);
    double w = 0;
    if (n) {
      w = static_cast<double>(*n);
    } else {
      // A decimal such as 0.5 (a resource.Quantity in Kueue).
      char* end = nullptr;
      const std::string t = v.text;
      w = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size()) w = -1;
    }
    if (!(w >= 0 && w <= 1e6)) {
      error(key, v, "expected a weight from 0 to 1000000, got " + quoted(v.text));
      return false;
    }
    dst = w;
    return true;
  }

  bool choice(const std::string& key, const ParamValue& v, const std::vector<std::string_view>& names, int& dst) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (v.text == names[i]) {
        dst = static_cast<int>(i);
        return true;
      }
    }
    std::string msg = "unknown value " + quoted(v.text) + "; expected: ";
    for (std::size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : "") + std::string(names[i]);
    error(key, v, msg);
    return false;
  }

  // A quota amount of resource r: whole GPUs, whole cores, or memory with a Mi, Gi or Ti suffix.
  bool amount(const std::string& key, const ParamValue& v, int r, std::int64_t& dst) {
    constexpr std::int64_t kMax = std::int64_t{1} << 40;
    if (r == 2) {
      static const std::pair<std::string_view, std::int64_t> kUnits[] = {{"Mi", 1}, {"Gi", 1024}, {"Ti", 1024 * 1024}};
      for (const auto& [suffix, mult] : kUnits) {
        if (v.text.size() > suffix.size() && std::string_view(v.text).ends_with(suffix)) {
          const auto n = parse_int(std::string_view(v.text).substr(0, v.text.size() - suffix.size()));
          if (n && *n >= 0 && *n <= kMax / mult) {
            dst = *n * mult;
            return true;
          }
        }
      }
      error(key, v, "expected a memory quantity such as 512Gi, 2Ti or 4096Mi, got " + quoted(v.text));
      return false;
    }
    return integer(key, v, 0, kMax, dst);
  }

  // <prefix>.<owner>.resources.<flavor>.<resource>.<field>, owner at segment 1.
  void quota(const std::string& key, const ParamValue& v, const std::vector<std::string>& seg,
             std::map<std::string, std::map<std::string, std::pair<std::tuple<int, int>, FlavorQuotas>>>& into) {
    if (seg.size() != 6) {
      error(key, v,
            "expected " + seg[0] +
                ".<name>.resources.<flavor>.<gpu|cpu|memory>.<nominalQuota|borrowingLimit|lendingLimit>");
      return;
    }
    const auto rit = std::find(kResourceNames.begin(), kResourceNames.end(), seg[4]);
    if (rit == kResourceNames.end()) {
      std::string msg = "unknown resource " + quoted(seg[4]) + "; expected: gpu, cpu, memory";
      if (auto s = sim::closest_match(seg[4], std::vector<std::string>{"gpu", "cpu", "memory"}))
        msg += " (did you mean \"" + *s + "\"?)";
      error(key, v, msg);
      return;
    }
    const int r = static_cast<int>(rit - kResourceNames.begin());
    auto& [pos, fq] = into[seg[1]][seg[3]];
    if (fq.flavor.empty()) {
      fq.flavor = seg[3];
      pos = {v.line, v.column};
    }
    pos = std::min(pos, std::tuple<int, int>{v.line, v.column});
    if (!fq.resources[r]) fq.resources[r] = Quota{};
    Quota& q = *fq.resources[r];
    if (seg[5] == "nominalQuota") {
      amount(key, v, r, q.nominal);
    } else if (seg[5] == "borrowingLimit") {
      amount(key, v, r, q.borrowing_limit);
    } else if (seg[5] == "lendingLimit") {
      amount(key, v, r, q.lending_limit);
    } else {
      std::string msg =
          "unknown quota field " + quoted(seg[5]) + "; expected: nominalQuota, borrowingLimit, lendingLimit";
      if (auto s =
              sim::closest_match(seg[5], std::vector<std::string>{"nominalQuota", "borrowingLimit", "lendingLimit"}))
        msg += " (did you mean \"" + *s + "\"?)";
      error(key, v, msg);
    }
  }

  static std::vector<FlavorQuotas> ordered(std::map<std::string, std::pair<std::tuple<int, int>, FlavorQuotas>>& m) {
    std::vector<std::pair<std::tuple<int, int>, FlavorQuotas>> v;
    for (auto& [name, e] : m) v.push_back(e);
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<FlavorQuotas> out;
    for (auto& e : v) out.push_back(std::move(e.second));
    return out;
  }

  void run() {
    std::map<std::string, FlavorConfig> flavors;
    std::map<std::string, CohortConfig> cohorts;
    std::map<std::string, ClusterQueueConfig> cqs;
    std::map<std::string, AdmissionCheckConfig> checks;
    std::map<std::string, std::map<std::string, std::pair<std::tuple<int, int>, FlavorQuotas>>> cq_quotas,
        cohort_quotas;
    std::map<std::string, const ParamValue*> cq_at, cohort_parent_at, cq_cohort_at;
    std::pair<std::string, const ParamValue*> afs_scope{"", nullptr};  // a CQ asking for AFS
    PolicyParams scheduler;
    std::map<std::string, std::vector<std::string>> topologies;  // Topology objects: node labels, outermost first
    std::vector<std::pair<std::string, const ParamValue*>> tas_asked;
    for (const auto& [key, v] : params) {
      const auto seg = sim::split_on(key, '.');
      const std::string& head = seg[0];
      if (key.starts_with("scoringStrategy.") || key.starts_with("weights.") || key == "termination_grace_period") {
        scheduler[key] = v;
      } else if (key == "fairSharing.enable") {
        boolean(key, v, out.fair_sharing);
      } else if (key == "fairSharing.preemptionStrategies") {
        out.strategies.clear();
        for (const auto& s : parse_flow_list(v.text)) {
          if (s == "LessThanOrEqualToFinalShare") {
            out.strategies.push_back(FsStrategy::LessThanOrEqualToFinalShare);
          } else if (s == "LessThanInitialShare") {
            out.strategies.push_back(FsStrategy::LessThanInitialShare);
          } else {
            error(key, v,
                  "unknown strategy " + quoted(s) + "; expected: LessThanOrEqualToFinalShare, LessThanInitialShare");
          }
        }
        const bool valid = out.strategies == std::vector<FsStrategy>{FsStrategy::LessThanOrEqualToFinalShare} ||
                           out.strategies == std::vector<FsStrategy>{FsStrategy::LessThanInitialShare} ||
                           out.strategies == std::vector<FsStrategy>{FsStrategy::LessThanOrEqualToFinalShare,
                                                                     FsStrategy::LessThanInitialShare};
        if (!valid && errors.empty())
          error(key, v,
                "expected [LessThanOrEqualToFinalShare], [LessThanInitialShare] or [LessThanOrEqualToFinalShare, "
                "LessThanInitialShare]");
      } else if (key == "waitForPodsReady.enable") {
        boolean(key, v, out.wait_for_pods_ready);
      } else if (key == "waitForPodsReady.timeout") {
        duration(key, v, true, out.pods_ready_timeout);
      } else if (key == "waitForPodsReady.requeuingStrategy.backoffBaseSeconds" ||
                 key == "waitForPodsReady.requeuingStrategy.backoffMaxSeconds") {
        std::int64_t s = 0;
        if (integer(key, v, 0, 86400 * 365, s))
          (key.ends_with("BaseSeconds") ? out.backoff_base : out.backoff_max) = s * sim::kSecond;
      } else if (key == "waitForPodsReady.requeuingStrategy.backoffLimitCount") {
        integer(key, v, 0, 1'000'000, out.backoff_limit);
      } else if (key == "admissionFairSharing.usageHalfLifeTime") {
        out.afs.enabled = true;
        duration(key, v, false, out.afs.half_life);
      } else if (key == "admissionFairSharing.usageSamplingInterval") {
        out.afs.enabled = true;
        duration(key, v, true, out.afs.sampling);
      } else if (head == "admissionFairSharing" && seg.size() == 3 && seg[1] == "resourceWeights") {
        out.afs.enabled = true;
        const auto rit = std::find(kResourceNames.begin(), kResourceNames.end(), seg[2]);
        if (rit == kResourceNames.end()) {
          std::string msg = "unknown resource " + quoted(seg[2]) + "; expected: gpu, cpu, memory";
          if (auto s = sim::closest_match(seg[2], std::vector<std::string>{"gpu", "cpu", "memory"}))
            msg += " (did you mean \"" + *s + "\"?)";
          error(key, v, msg);
        } else {
          weight(key, v, out.afs.weights[rit - kResourceNames.begin()]);
        }
      } else if (head == "localQueues" && seg.size() == 4 && seg[2] == "fairSharing" && seg[3] == "weight") {
        weight(key, v, out.local_queue_weights[seg[1]]);
      } else if (key == "rayCluster.kinds") {
        out.ray_kinds.clear();
        for (const auto& s : parse_flow_list(v.text)) {
          models::JobKind k{};
          if (models::parse_job_kind(s, k)) {
            out.ray_kinds.push_back(k);
          } else {
            error(key, v, "unknown job kind " + quoted(s) + "; expected: train, inference, interactive, batch");
          }
        }
      } else if (seg.size() == 3 && head == "topologies" && seg[2] == "levels") {
        topologies[seg[1]] = parse_flow_list(v.text);
      } else if (key == "topologyAwareScheduling.podsetRequiredTopology" ||
                 key == "topologyAwareScheduling.podsetPreferredTopology") {
        tas_asked.emplace_back(key, &v);  // after the loop: a level may be named by a Topology's label
      } else if (key == "topologyAwareScheduling.kinds") {
        out.tas_kinds.clear();
        for (const auto& s : parse_flow_list(v.text)) {
          models::JobKind k{};
          if (models::parse_job_kind(s, k)) {
            out.tas_kinds.push_back(k);
          } else {
            error(key, v, "unknown job kind " + quoted(s) + "; expected: train, inference, interactive, batch");
          }
        }
      } else if (key == "rayCluster.deleteAfterIdle") {
        duration(key, v, false, out.ray_delete_after_idle);
      } else if (head == "resourceFlavors" && seg.size() == 3 && seg[2] == "pools") {
        flavors[seg[1]].name = seg[1];
        flavors[seg[1]].pools = parse_flow_list(v.text);
      } else if (head == "admissionChecks" && seg.size() == 3) {
        auto& c = checks[seg[1]];
        c.name = seg[1];
        if (seg[2] == "delay") {
          duration(key, v, false, c.delay);
        } else if (seg[2] == "retries") {
          std::int64_t n = 0;
          if (integer(key, v, 0, 1000, n)) c.retries = static_cast<int>(n);
        } else {
          unknown(key, v);
        }
      } else if (head == "cohorts" && seg.size() >= 3) {
        auto& c = cohorts[seg[1]];
        c.name = seg[1];
        if (seg[2] == "resources") {
          quota(key, v, seg, cohort_quotas);
        } else if (seg.size() == 3 && seg[2] == "parentName") {
          c.parent = v.text;
          cohort_parent_at[seg[1]] = &v;
        } else if (seg.size() == 4 && seg[2] == "fairSharing" && seg[3] == "weight") {
          weight(key, v, c.weight);
        } else {
          unknown(key, v);
        }
      } else if (head == "clusterQueues" && seg.size() >= 3) {
        auto& q = cqs[seg[1]];
        q.name = seg[1];
        if (!cq_at.count(seg[1])) cq_at[seg[1]] = &v;
        const std::string rest = key.substr(head.size() + seg[1].size() + 2);
        int c = 0;
        if (seg[2] == "resources") {
          quota(key, v, seg, cq_quotas);
        } else if (rest == "cohort" || rest == "cohortName") {
          if (cq_cohort_at.count(seg[1])) error(key, v, "cohort and cohortName both given");
          q.cohort = v.text;
          cq_cohort_at[seg[1]] = &v;
        } else if (rest == "namespaces") {
          q.namespaces = parse_flow_list(v.text);
        } else if (rest == "queueingStrategy") {
          if (choice(key, v, {"BestEffortFIFO", "StrictFIFO"}, c)) q.strict_fifo = c == 1;
        } else if (rest == "admissionChecks") {
          q.admission_checks = parse_flow_list(v.text);
        } else if (rest == "preemption.withinClusterQueue") {
          if (choice(key, v, {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}, c))
            q.within_cluster_queue = static_cast<PreemptionPolicy>(c);
        } else if (rest == "preemption.reclaimWithinCohort") {
          if (choice(key, v, {"Never", "LowerPriority", "Any"}, c))
            q.reclaim_within_cohort = c == 2 ? PreemptionPolicy::Any : static_cast<PreemptionPolicy>(c);
        } else if (rest == "preemption.borrowWithinCohort.policy") {
          if (choice(key, v, {"Never", "LowerPriority"}, c)) q.borrow_within_cohort = c == 1;
        } else if (rest == "preemption.borrowWithinCohort.maxPriorityThreshold") {
          std::int64_t n = 0;
          if (integer(key, v, -2'000'000'000, 2'000'000'000, n))
            q.max_priority_threshold = static_cast<std::int32_t>(n);
        } else if (rest == "flavorFungibility.whenCanBorrow") {
          // Borrow is the name before v1beta2 of MayStopSearch.
          if (choice(key, v, {"MayStopSearch", "TryNextFlavor", "Borrow"}, c)) q.stop_when_can_borrow = c != 1;
        } else if (rest == "flavorFungibility.whenCanPreempt") {
          if (choice(key, v, {"TryNextFlavor", "MayStopSearch", "Preempt"}, c)) q.stop_when_can_preempt = c != 0;
        } else if (rest == "flavorFungibility.preference") {
          if (choice(key, v, {"BorrowingOverPreemption", "PreemptionOverBorrowing"}, c)) q.prefer_borrowing = c == 0;
        } else if (rest == "fairSharing.weight") {
          weight(key, v, q.weight);
        } else if (rest == "admissionScope.admissionMode") {
          if (choice(key, v, {"NoAdmissionFairSharing", "UsageBasedAdmissionFairSharing"}, c)) {
            q.usage_based_afs = c == 1;
            if (q.usage_based_afs) afs_scope = {key, &v};
          }
        } else {
          unknown(key, v);
        }
      } else {
        unknown(key, v);
      }
    }

    // TAS: a level number (1 = the leaf switches of cluster.topology), or a Topology's node label:
    // its lowest level is one node when it is kubernetes.io/hostname (a leaf switch otherwise), and
    // each label above it one level up.
    for (const auto& [key, vp] : tas_asked) {
      const ParamValue& v = *vp;
      const bool required = key.ends_with("RequiredTopology");
      if (out.tas_level > 0 && out.tas_required != required) {
        error(key, v, "give one of podsetRequiredTopology and podsetPreferredTopology");
        continue;
      }
      std::int64_t level = -1;
      if (parse_int(v.text)) {
        if (!integer(key, v, 1, 64, level)) continue;
      } else {
        std::string names;
        for (const auto& [topo, labels] : topologies)
          for (std::size_t i = 0; i < labels.size(); ++i) {
            names += (names.empty() ? "" : ", ") + labels[i];
            if (labels[i] != v.text || level >= 0) continue;
            const bool host = labels.back() == "kubernetes.io/hostname";
            level = static_cast<std::int64_t>(labels.size() - i) - (host ? 1 : 0);
          }
        if (level == 0) {
          error(key, v,
                "kubernetes.io/hostname (the whole workload on one node) is not modelled; give a rack or "
                "block level");
          continue;
        }
        if (level < 0) {
          error(key, v,
                "expected a level number (1 = leaf switches of cluster.topology) or a node label of a Topology "
                "in the manifests" +
                    (names.empty() ? std::string(" (none given)") : ": " + names) + ", got " + quoted(v.text));
          continue;
        }
      }
      out.tas_level = static_cast<std::int32_t>(level);
      out.tas_required = required;
    }

    if (afs_scope.second && !out.afs.enabled)
      error(afs_scope.first, *afs_scope.second,
            "UsageBasedAdmissionFairSharing needs Kueue's admissionFairSharing block (usageHalfLifeTime, "
            "usageSamplingInterval, resourceWeights); without it Kueue ignores the admission scope");

    if (!scheduler.empty()) {
      std::vector<sim::InputError> e;
      k8s::check_params(scheduler, e);
      for (auto& x : e) errors.push_back(std::move(x));
      if (e.empty()) out.scheduler = k8s::parse_config(scheduler);
    }

    for (auto& [name, f] : flavors) out.flavors.push_back(f);
    for (auto& [name, c] : checks) out.admission_checks.push_back(c);
    auto flavor_known = [&](const std::string& f) { return flavors.count(f) != 0; };
    // Cohorts: implicit ones for names used but not declared.
    for (auto& [name, q] : cqs)
      if (!q.cohort.empty() && !cohorts.count(q.cohort)) cohorts[q.cohort].name = q.cohort;
    for (auto& [name, c] : std::map<std::string, CohortConfig>(cohorts))
      if (!c.parent.empty() && !cohorts.count(c.parent)) cohorts[c.parent].name = c.parent;
    for (auto& [name, c] : cohorts) {
      if (cqs.count(name))
        error("cohorts." + name, *cq_at[name], "a cohort and a ClusterQueue are both named " + quoted(name));
      // Cycles.
      std::set<std::string> seen{name};
      for (std::string p = c.parent; !p.empty(); p = cohorts[p].parent) {
        if (!seen.insert(p).second) {
          error("cohorts." + name + ".parentName", *cohort_parent_at[name],
                "cohort parents form a cycle through " + quoted(name));
          break;
        }
      }
      c.resources = ordered(cohort_quotas[name]);
    }
    for (auto& [name, c] : cohorts) out.cohorts.push_back(c);
    std::map<std::string, std::string> ns_owner;
    for (auto& [name, q] : cqs) {
      q.resources = ordered(cq_quotas[name]);
      const ParamValue& at = *cq_at[name];
      for (const auto& fq : q.resources) {
        if (!flavor_known(fq.flavor))
          error("clusterQueues." + name + ".resources." + fq.flavor, at,
                "unknown flavor " + quoted(fq.flavor) + "; declare it under resourceFlavors");
        for (int r = 0; r < kResources; ++r) {
          if (!fq.resources[r]) continue;
          const Quota& qq = *fq.resources[r];
          if (qq.lending_limit > qq.nominal)
            error("clusterQueues." + name + ".resources." + fq.flavor, at, "lendingLimit must not exceed nominalQuota");
          if ((qq.borrowing_limit >= 0 || qq.lending_limit >= 0) && q.cohort.empty())
            error("clusterQueues." + name + ".resources." + fq.flavor, at,
                  "borrowingLimit and lendingLimit need a cohort");
        }
      }
      for (const auto& ns : q.namespaces) {
        auto [it, fresh] = ns_owner.emplace(ns, name);
        if (!fresh)
          error("clusterQueues." + name + ".namespaces", at,
                "namespace " + quoted(ns) + " already has a LocalQueue for ClusterQueue " + quoted(it->second));
      }
      for (const auto& c : q.admission_checks)
        if (!checks.count(c))
          error("clusterQueues." + name + ".admissionChecks", at,
                "unknown admission check " + quoted(c) + "; declare it under admissionChecks");
      out.cluster_queues.push_back(q);
    }
    for (auto& c : out.cohorts)
      for (const auto& fq : c.resources)
        if (!flavor_known(fq.flavor))
          errors.emplace_back("", 0, 0, "policy.cohorts." + c.name + ".resources." + fq.flavor,
                              "unknown flavor " + quoted(fq.flavor) + "; declare it under resourceFlavors");
  }
};

}  // namespace

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> k = {
        "resourceFlavors.<flavor>.pools",
        "cohorts.<cohort>.parentName",
        "cohorts.<cohort>.fairSharing.weight",
        "clusterQueues.<cq>.cohort",
        "clusterQueues.<cq>.cohortName",
        "clusterQueues.<cq>.namespaces",
        "clusterQueues.<cq>.queueingStrategy",
        "clusterQueues.<cq>.admissionChecks",
        "clusterQueues.<cq>.preemption.withinClusterQueue",
        "clusterQueues.<cq>.preemption.reclaimWithinCohort",
        "clusterQueues.<cq>.preemption.borrowWithinCohort.policy",
        "clusterQueues.<cq>.preemption.borrowWithinCohort.maxPriorityThreshold",
        "clusterQueues.<cq>.flavorFungibility.whenCanBorrow",
        "clusterQueues.<cq>.flavorFungibility.whenCanPreempt",
        "clusterQueues.<cq>.flavorFungibility.preference",
        "clusterQueues.<cq>.fairSharing.weight",
        "clusterQueues.<cq>.admissionScope.admissionMode",
        "admissionFairSharing.usageHalfLifeTime",
        "admissionFairSharing.usageSamplingInterval",
        "admissionFairSharing.resourceWeights.<resource>",
        "localQueues.<namespace>.fairSharing.weight",
        "admissionChecks.<check>.delay",
        "admissionChecks.<check>.retries",
        "fairSharing.enable",
        "fairSharing.preemptionStrategies",
        "waitForPodsReady.enable",
        "waitForPodsReady.timeout",
        "waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
        "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
        "waitForPodsReady.requeuingStrategy.backoffLimitCount",
        "rayCluster.kinds",
        "rayCluster.deleteAfterIdle",
        "topologyAwareScheduling.podsetRequiredTopology",
        "topologyAwareScheduling.podsetPreferredTopology",
        "topologies.<topology>.levels",
        "topologyAwareScheduling.kinds",
        "termination_grace_period",
    };
    // The <...> of a pattern spans several segments here: <cq.resources.flavor.resource> stands
    // for <cq>.resources.<flavor>.<gpu|cpu|memory>.
    for (const char* owner : {"clusterQueues.<cq", "cohorts.<cohort"})
      for (const char* field : {"nominalQuota", "borrowingLimit", "lendingLimit"})
        k.push_back(std::string(owner) + ".resources.flavor.resource>." + field);
    for (const auto& key : k8s::param_keys())
      if (key.starts_with("scoringStrategy.") || key.starts_with("weights.")) k.push_back(key);
    return k;
  }();
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  Parser p{params, {}, {}};
  p.run();
  for (auto& e : p.errors) errors.push_back(std::move(e));
}

Config parse_config(const PolicyParams& params) {
  Parser p{params, {}, {}};
  p.run();
  if (!p.errors.empty()) throw p.errors.front();
  return std::move(p.out);
}

}  // namespace headroom::policies::kueue
