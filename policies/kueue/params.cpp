// Parameters of the kueue policy: the CRD vocabulary of ResourceFlavor, Cohort, ClusterQueue and
// AdmissionCheck plus Kueue's Configuration (fairSharing, waitForPodsReady), flattened by the
// scenario loader into dotted keys.
#include "policies/common/params.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "policies/common/param_table.hpp"
#include "policies/common/param_text.hpp"
#include "policies/common/param_tree.hpp"
#include "policies/kueue/kueue.hpp"
#include "sim/suggest.hpp"
#include "sim/text.hpp"

namespace headroom::policies::kueue {

namespace {

constexpr std::array<std::string_view, kResources> kResourceNames = {"gpu", "cpu", "memory"};

struct Parser {
  explicit Parser(const PolicyParams& p) : params(p) {}

  const PolicyParams& params;
  std::vector<sim::InputError> errors;
  Config out;

  void error(const std::string& key, const ParamValue& v, const std::string& msg) { param_error(errors, key, v, msg); }

  // A key that matches a pattern of param_keys() loosely (a <...> spans dots) but not the
  // structure; keys matching no pattern are reported by the registry.
  void unknown(const std::string& key, const ParamValue& v) {
    for (const auto& pattern : param_keys()) {
      if (key_matches(pattern, key)) {
        error(key, v, "unknown parameter \"" + key + "\" for policy kueue (see docs/policies/kueue.md)");
        return;
      }
    }
  }

  bool integer(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
    return read_integer(errors, key, v, v.text, lo, hi, dst);
  }

  bool duration(const std::string& key, const ParamValue& v, bool positive, sim::Tick& dst) {
    return read_duration(errors, key, v, positive, dst);
  }

  bool boolean(const std::string& key, const ParamValue& v, bool& dst) {
    return read_boolean(errors, key, v, v.text, dst);
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

  // What the keys declare, gathered before the cross-object checks of finish().
  std::map<std::string, FlavorConfig> flavors;
  std::map<std::string, CohortConfig> cohorts;
  std::map<std::string, ClusterQueueConfig> cqs;
  std::map<std::string, AdmissionCheckConfig> checks;
  std::map<std::string, std::map<std::string, std::pair<std::tuple<int, int>, FlavorQuotas>>> cq_quotas, cohort_quotas;
  std::map<std::string, const ParamValue*> cq_at, cohort_parent_at, cq_cohort_at;
  std::map<std::string, const ParamValue*> cohort_flavor_at;  // "<cohort>.<flavor>": its first quota key
  std::set<std::string> cq_declared;  // ClusterQueues given by a key other than namespaces (a LocalQueue's)
  std::pair<std::string, const ParamValue*> afs_scope{"", nullptr};  // a CQ asking for AFS
  PolicyParams scheduler;
  std::map<std::string, std::vector<std::string>> topologies;  // Topology objects: node labels, outermost first
  std::vector<std::pair<std::string, const ParamValue*>> tas_asked;

  // The ClusterQueue a clusterQueues.<cq>.<field> key names (declared by any key under it). Null
  // when the key is not `field` of it: a quota key (read here), or a name with dots, whose key
  // is then unknown.
  ClusterQueueConfig* cluster_queue(const std::string& key, const ParamValue& v, std::string_view field) {
    const auto seg = sim::split_on(key, '.');
    auto& q = cqs[seg[1]];
    q.name = seg[1];
    if (!cq_at.count(seg[1])) cq_at[seg[1]] = &v;
    if (seg[2] != "namespaces" && seg[2] != "localQueues") cq_declared.insert(seg[1]);
    if (seg[2] == "resources") {
      quota(key, v, seg, cq_quotas);
      return nullptr;
    }
    if (key.substr(seg[0].size() + seg[1].size() + 2) != field) {
      unknown(key, v);
      return nullptr;
    }
    return &q;
  }

  // The same for cohorts.<cohort>.<field>.
  CohortConfig* cohort(const std::string& key, const ParamValue& v, std::string_view field) {
    const auto seg = sim::split_on(key, '.');
    auto& c = cohorts[seg[1]];
    c.name = seg[1];
    if (seg[2] == "resources") {
      if (seg.size() > 3) cohort_flavor_at.try_emplace(seg[1] + "." + seg[3], &v);
      quota(key, v, seg, cohort_quotas);
      return nullptr;
    }
    if (key.substr(seg[0].size() + seg[1].size() + 2) != field) {
      unknown(key, v);
      return nullptr;
    }
    return &c;
  }

  // The <name> of a key of `segments` segments with a one-segment name, else null (a name with
  // dots: the key is unknown).
  const std::string* name_of(const std::string& key, const ParamValue& v, std::size_t segments,
                             std::vector<std::string>& seg) {
    seg = sim::split_on(key, '.');
    if (seg.size() == segments) return &seg[1];
    unknown(key, v);
    return nullptr;
  }

  std::vector<models::JobKind> job_kinds(const std::string& key, const ParamValue& v) {
    std::vector<models::JobKind> out_kinds;
    for (const auto& s : parse_flow_list(v.text)) {
      models::JobKind k{};
      if (models::parse_job_kind(s, k)) {
        out_kinds.push_back(k);
      } else {
        error(key, v, "unknown job kind " + quoted(s) + "; expected: train, inference, interactive, batch");
      }
    }
    return out_kinds;
  }

  void fair_sharing_strategies(const std::string& key, const ParamValue& v) {
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
  }

  void resource_weight(const std::string& key, const ParamValue& v) {
    std::vector<std::string> seg;
    if (!name_of(key, v, 3, seg)) return;
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
  }

  // A key no row of the table matches (the registry reports it as unknown): a scheduler key is
  // still the scheduler's to check; a key under a ClusterQueue or cohort declares it, and one
  // under its resources is read as a quota (which names what is wrong with it); one of the form
  // admissionChecks.<check>.<field> declares the check.
  void unmatched(const std::string& key, const ParamValue& v) {
    const auto seg = sim::split_on(key, '.');
    if (key.starts_with("scoringStrategy.") || key.starts_with("weights.")) {
      scheduler[key] = v;
    } else if (seg[0] == "cohorts" && seg.size() >= 3) {
      cohort(key, v, {});
    } else if (seg[0] == "clusterQueues" && seg.size() >= 3) {
      cluster_queue(key, v, {});
    } else if (seg[0] == "admissionChecks" && seg.size() == 3) {
      checks[seg[1]].name = seg[1];
    }
  }

  // clusterQueues.<cq>.cohort or .cohortName (one of them).
  void cq_cohort(const std::string& key, const ParamValue& v, std::string_view field) {
    ClusterQueueConfig* q = cluster_queue(key, v, field);
    if (!q) return;
    if (cq_cohort_at.count(q->name)) error(key, v, "cohort and cohortName both given");
    q->cohort = v.text;
    cq_cohort_at[q->name] = &v;
  }

  void run();
  void finish();
};

using Row = ParamKey<Parser>;

// The `policy:` keys, in the order the policy catalogue lists them, each with its reader.
const std::vector<Row>& table() {
  static const std::vector<Row> kTable = [] {
    std::vector<Row> rows = {
        {"resourceFlavors.<flavor>.pools",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::vector<std::string> seg;
           if (const std::string* name = p.name_of(key, v, 3, seg)) {
             p.flavors[*name].name = *name;
             p.flavors[*name].pools = parse_flow_list(v.text);
           }
         }},
        {"cohorts.<cohort>.parentName",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           if (CohortConfig* c = p.cohort(key, v, "parentName")) {
             c->parent = v.text;
             p.cohort_parent_at[c->name] = &v;
           }
         }},
        {"cohorts.<cohort>.fairSharing.weight",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           if (CohortConfig* c = p.cohort(key, v, "fairSharing.weight")) p.weight(key, v, c->weight);
         }},
        {"clusterQueues.<cq>.cohort", [](Parser& p, const std::string& key, const ParamValue& v) { p.cq_cohort(key, v, "cohort"); }},
        {"clusterQueues.<cq>.cohortName", [](Parser& p, const std::string& key, const ParamValue& v) { p.cq_cohort(key, v, "cohortName"); }},
        {"clusterQueues.<cq>.namespaces",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "namespaces")) q->namespaces = parse_flow_list(v.text);
         }},
        {"clusterQueues.<cq>.resourceGroups",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           ClusterQueueConfig* q = p.cluster_queue(key, v, "resourceGroups");
           if (q == nullptr) return;
           const auto tree = parse_param_tree(v.text);
           const char* expected = "expected the coveredResources of each resource group, as [[cpu, memory], [gpu]]";
           if (!tree || tree->kind != ParamTree::List) {
             p.error(key, v, expected);
             return;
           }
           q->resource_groups.clear();
           for (const ParamTree& g : tree->items) {
             if (g.kind != ParamTree::List) {
               p.error(key, v, expected);
               return;
             }
             std::array<bool, kResources> covered{};
             for (const ParamTree& r : g.items) {
               const int i = r.text == "gpu" ? 0 : (r.text == "cpu" ? 1 : (r.text == "memory" ? 2 : -1));
               if (r.kind != ParamTree::Scalar || i < 0) {
                 p.error(key, v, "resource groups cover gpu, cpu and memory, got " + quoted(r.text));
                 return;
               }
               covered[i] = true;
             }
             q->resource_groups.push_back(covered);
           }
         }},
        {"clusterQueues.<cq>.stopPolicy",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "stopPolicy"))
             if (p.choice(key, v, {"None", "Hold", "HoldAndDrain"}, c)) q->stopped = c != 0;
         }},
        {"clusterQueues.<cq>.localQueues",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "localQueues")) {
             q->local_queues = parse_flow_list(v.text);
             for (const auto& lq : q->local_queues) {
               const auto slash = lq.find('/');
               if (slash == std::string::npos || slash == 0 || slash + 1 == lq.size() ||
                   lq.find('/', slash + 1) != std::string::npos)
                 p.error(key, v, "expected LocalQueues as namespace/name, got " + quoted(lq));
             }
           }
         }},
        {"clusterQueues.<cq>.queueingStrategy",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "queueingStrategy"))
             if (p.choice(key, v, {"BestEffortFIFO", "StrictFIFO"}, c)) q->strict_fifo = c == 1;
         }},
        {"clusterQueues.<cq>.admissionChecks",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "admissionChecks"))
             q->admission_checks = parse_flow_list(v.text);
         }},
        {"clusterQueues.<cq>.preemption.withinClusterQueue",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "preemption.withinClusterQueue"))
             if (p.choice(key, v, {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}, c))
               q->within_cluster_queue = static_cast<PreemptionPolicy>(c);
         }},
        {"clusterQueues.<cq>.preemption.reclaimWithinCohort",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "preemption.reclaimWithinCohort"))
             if (p.choice(key, v, {"Never", "LowerPriority", "Any"}, c))
               q->reclaim_within_cohort = c == 2 ? PreemptionPolicy::Any : static_cast<PreemptionPolicy>(c);
         }},
        {"clusterQueues.<cq>.preemption.borrowWithinCohort.policy",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "preemption.borrowWithinCohort.policy"))
             if (p.choice(key, v, {"Never", "LowerPriority"}, c)) q->borrow_within_cohort = c == 1;
         }},
        {"clusterQueues.<cq>.preemption.borrowWithinCohort.maxPriorityThreshold",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::int64_t n = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "preemption.borrowWithinCohort.maxPriorityThreshold"))
             if (p.integer(key, v, -2'000'000'000, 2'000'000'000, n))
               q->max_priority_threshold = static_cast<std::int32_t>(n);
         }},
        // Borrow is the name before v1beta2 of MayStopSearch.
        {"clusterQueues.<cq>.flavorFungibility.whenCanBorrow",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "flavorFungibility.whenCanBorrow"))
             if (p.choice(key, v, {"MayStopSearch", "TryNextFlavor", "Borrow"}, c)) q->stop_when_can_borrow = c != 1;
         }},
        {"clusterQueues.<cq>.flavorFungibility.whenCanPreempt",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "flavorFungibility.whenCanPreempt"))
             if (p.choice(key, v, {"TryNextFlavor", "MayStopSearch", "Preempt"}, c)) q->stop_when_can_preempt = c != 0;
         }},
        {"clusterQueues.<cq>.flavorFungibility.preference",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "flavorFungibility.preference"))
             if (p.choice(key, v, {"BorrowingOverPreemption", "PreemptionOverBorrowing"}, c))
               q->prefer_borrowing = c == 0;
         }},
        {"clusterQueues.<cq>.fairSharing.weight",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "fairSharing.weight")) p.weight(key, v, q->weight);
         }},
        {"clusterQueues.<cq>.admissionScope.admissionMode",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           int c = 0;
           if (ClusterQueueConfig* q = p.cluster_queue(key, v, "admissionScope.admissionMode"))
             if (p.choice(key, v, {"NoAdmissionFairSharing", "UsageBasedAdmissionFairSharing"}, c)) {
               q->usage_based_afs = c == 1;
               if (q->usage_based_afs) p.afs_scope = {key, &v};
             }
         }},
        {"admissionFairSharing.usageHalfLifeTime",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           p.out.afs.enabled = true;
           p.duration(key, v, false, p.out.afs.half_life);
         }},
        {"admissionFairSharing.usageSamplingInterval",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           p.out.afs.enabled = true;
           p.duration(key, v, true, p.out.afs.sampling);
         }},
        {"admissionFairSharing.resourceWeights.<resource>",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.resource_weight(key, v); }},
        {"localQueues.<namespace>.fairSharing.weight",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::vector<std::string> seg;
           if (const std::string* ns = p.name_of(key, v, 4, seg)) p.weight(key, v, p.out.local_queue_weights[*ns]);
         }},
        {"admissionChecks.<check>.delay",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::vector<std::string> seg;
           if (const std::string* name = p.name_of(key, v, 3, seg)) {
             auto& c = p.checks[*name];
             c.name = *name;
             p.duration(key, v, false, c.delay);
           }
         }},
        {"admissionChecks.<check>.retries",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::vector<std::string> seg;
           if (const std::string* name = p.name_of(key, v, 3, seg)) {
             auto& c = p.checks[*name];
             c.name = *name;
             std::int64_t n = 0;
             if (p.integer(key, v, 0, 1000, n)) c.retries = static_cast<int>(n);
           }
         }},
        {"fairSharing.enable",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.boolean(key, v, p.out.fair_sharing); }},
        {"fairSharing.preemptionStrategies",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.fair_sharing_strategies(key, v); }},
        {"waitForPodsReady.enable",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.boolean(key, v, p.out.wait_for_pods_ready); }},
        {"waitForPodsReady.timeout",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           p.duration(key, v, true, p.out.pods_ready_timeout);
         }},
        {"waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::int64_t s = 0;
           if (p.integer(key, v, 0, 86400 * 365, s)) p.out.backoff_base = s * sim::kSecond;
         }},
        {"waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::int64_t s = 0;
           if (p.integer(key, v, 0, 86400 * 365, s)) p.out.backoff_max = s * sim::kSecond;
         }},
        {"waitForPodsReady.requeuingStrategy.backoffLimitCount",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           p.integer(key, v, 0, 1'000'000, p.out.backoff_limit);
         }},
        {"rayCluster.kinds",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           p.out.ray_kinds = p.job_kinds(key, v);
         }},
        {"rayCluster.deleteAfterIdle",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           p.duration(key, v, false, p.out.ray_delete_after_idle);
         }},
        // After the loop (finish): a level may be named by a Topology's label.
        {"topologyAwareScheduling.podsetRequiredTopology",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.tas_asked.emplace_back(key, &v); }},
        {"topologyAwareScheduling.podsetPreferredTopology",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.tas_asked.emplace_back(key, &v); }},
        {"topologies.<topology>.levels",
         [](Parser& p, const std::string& key, const ParamValue& v) {
           std::vector<std::string> seg;
           if (const std::string* name = p.name_of(key, v, 3, seg)) p.topologies[*name] = parse_flow_list(v.text);
         }},
        {"topologyAwareScheduling.kinds",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.out.tas_kinds = p.job_kinds(key, v); }},
        {"termination_grace_period",
         [](Parser& p, const std::string& key, const ParamValue& v) { p.scheduler[key] = v; }},
    };
    // The <...> of a pattern spans several segments here: <cq.resources.flavor.resource> stands
    // for <cq>.resources.<flavor>.<gpu|cpu|memory>; quota() reads all three fields.
    auto cq_quota = [](Parser& p, const std::string& key, const ParamValue& v) { p.cluster_queue(key, v, {}); };
    auto cohort_quota = [](Parser& p, const std::string& key, const ParamValue& v) { p.cohort(key, v, {}); };
    rows.push_back({"clusterQueues.<cq.resources.flavor.resource>.nominalQuota", cq_quota});
    rows.push_back({"clusterQueues.<cq.resources.flavor.resource>.borrowingLimit", cq_quota});
    rows.push_back({"clusterQueues.<cq.resources.flavor.resource>.lendingLimit", cq_quota});
    rows.push_back({"cohorts.<cohort.resources.flavor.resource>.nominalQuota", cohort_quota});
    rows.push_back({"cohorts.<cohort.resources.flavor.resource>.borrowingLimit", cohort_quota});
    rows.push_back({"cohorts.<cohort.resources.flavor.resource>.lendingLimit", cohort_quota});
    // kube-scheduler's keys, checked by its own reader.
    for (const auto& key : k8s::param_keys())
      if (key.starts_with("scoringStrategy.") || key.starts_with("weights.") || key == "percentageOfNodesToScore")
        rows.push_back({key, [](Parser& p, const std::string& k, const ParamValue& v) { p.scheduler[k] = v; }});
    return rows;
  }();
  return kTable;
}

// Every key through the first row whose pattern it matches, in the order of the keys (so the
// errors are); a key no row matches goes to unmatched().
void Parser::run() {
  const auto& rows = table();
  for (const auto& [key, v] : params) {
    const auto row =
        std::find_if(rows.begin(), rows.end(), [&key = key](const Row& r) { return key_matches(r.pattern, key); });
    if (row != rows.end()) {
      row->read(*this, key, v);
    } else {
      unmatched(key, v);
    }
  }
  finish();
}

void Parser::finish() {
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
  std::map<std::string, std::string> ns_owner, lq_owner;
  // A namespace whose LocalQueues are named may point at several ClusterQueues (a job picks one
  // by its queue label); one named by a bare `namespaces` entry only may not.
  std::set<std::string> named_ns;
  for (const auto& [name, q] : cqs)
    for (const auto& lq : q.local_queues) named_ns.insert(lq.substr(0, lq.find('/')));
  for (auto& [name, q] : cqs) {
    q.resources = ordered(cq_quotas[name]);
    const ParamValue& at = *cq_at[name];
    // Only LocalQueues name it: Kueue's LocalQueue reconciler marks each inactive
    // (ClusterQueueDoesNotExist, pkg/controller/core/localqueue_controller.go) and none of their
    // workloads is ever admitted; said here, at the (first) LocalQueue, rather than by pods that
    // never start.
    if (!cq_declared.count(name)) {
      std::string list;
      for (const auto& ns : q.namespaces) list += (list.empty() ? "" : ", ") + ns;
      error("clusterQueues." + name + ".namespaces", at,
            "ClusterQueue " + quoted(name) + " is not declared; the LocalQueues of namespaces [" + list +
                "] point at it (Kueue keeps such a LocalQueue inactive, ClusterQueueDoesNotExist, and admits none of "
                "its workloads)");
      continue;
    }
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
    for (const auto& lq : q.local_queues) {
      auto [it, fresh] = lq_owner.emplace(lq, name);
      if (!fresh)
        error("clusterQueues." + name + ".localQueues", at,
              "LocalQueue " + quoted(lq) + " already points at ClusterQueue " + quoted(it->second));
    }
    for (const auto& ns : q.namespaces) {
      if (named_ns.count(ns)) continue;
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
      if (!flavor_known(fq.flavor)) {
        const std::string key = "cohorts." + c.name + ".resources." + fq.flavor;
        const std::string msg = "unknown flavor " + quoted(fq.flavor) + "; declare it under resourceFlavors";
        if (const auto at = cohort_flavor_at.find(c.name + "." + fq.flavor); at != cohort_flavor_at.end())
          error(key, *at->second, msg);
        else
          errors.emplace_back("", 0, 0, "policy." + key, msg);
      }
}

}  // namespace

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> kKeys = param_patterns(std::span<const Row>(table()));
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  Parser p(params);
  p.run();
  for (auto& e : p.errors) errors.push_back(std::move(e));
}

Config parse_config(const PolicyParams& params) {
  Parser p(params);
  p.run();
  if (!p.errors.empty()) throw p.errors.front();
  return std::move(p.out);
}

}  // namespace headroom::policies::kueue
