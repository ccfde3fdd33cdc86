// The slurm policy's `policy:` block: slurm.conf / sacctmgr / topology.conf vocabulary. One key
// table (kRows) holds every key and the function that reads its value: its catalogued rows are
// param_keys(), which the registry checks keys against (with "did you mean"), and read_params
// reads every parameter through it, so the accepted keys and the parsed keys cannot drift apart.
// Checks that need every key read first (PreemptType's PreemptMode, the account tree, one Default
// partition) run after it (check_across).
#include "policies/common/params.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "policies/common/param_table.hpp"
#include "policies/common/param_text.hpp"
#include "policies/slurm/slurm.hpp"

namespace headroom::policies::slurm {

namespace {

bool yes(std::string_view s, bool& out) {
  if (s == "YES" || s == "yes" || s == "Yes" || s == "true" || s == "1") return out = true, true;
  if (s == "NO" || s == "no" || s == "No" || s == "false" || s == "0") return out = false, true;
  return false;
}

// "CPU=1,Mem=0.25G,GRES/gpu=8" -> weights (a trailing G on Mem is accepted: per GB).
bool parse_tres(std::string_view text, std::map<std::string, double>& out, std::string& bad, bool negative_ok) {
  for (const auto& item : split_list(text)) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) return bad = item, false;
    std::string key = std::string(trim(std::string_view(item).substr(0, eq)));
    std::string_view val = trim(std::string_view(item).substr(eq + 1));
    if (!val.empty() && (val.back() == 'G' || val.back() == 'g')) val.remove_suffix(1);
    if (key == "cpu") key = "CPU";
    if (key == "mem") key = "Mem";
    if (key == "gres/gpu" || key == "GRES/GPU") key = "GRES/gpu";
    const auto v = parse_number(val);
    if ((key != "CPU" && key != "Mem" && key != "GRES/gpu") || !v || (*v < 0 && !negative_ok)) return bad = item, false;
    out[key] = *v;
  }
  return true;
}

// The <name> of a `group.<name>.Field` key: the text between its first dot and its last (dots
// included: "partitions.a.b.Nodes" names partition "a.b").
std::string name_of(std::string_view key) {
  const auto first = key.find('.'), last = key.rfind('.');
  return std::string(key.substr(first + 1, last - first - 1));
}

// Whether a `group.<rest>` key has a non-empty name and a field after it ("group.<name>.<field>").
bool has_name_and_field(std::string_view key) {
  const auto first = key.find('.');
  return first != std::string_view::npos && key.rfind('.') > first + 1;
}

template <typename T>
T& named(std::vector<T>& v, const std::string& name) {
  for (auto& x : v)
    if (x.name == name) return x;
  v.push_back(T{});
  v.back().name = name;
  return v.back();
}

// The parse state the key table's rows read into: the Config being filled, the errors found (each
// at its value's file:line:column, under "policy.<key>") and the typed readers the rows share.
struct Reader {
  Config& out;
  std::vector<sim::InputError>& errors;
  const ParamValue* preempt_type_at = nullptr;  // PreemptType's value, for check_across

  void error(const std::string& key, const ParamValue& v, const std::string& msg) { param_error(errors, key, v, msg); }

  bool integer(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
    return read_integer(errors, key, v, trim(v.text), lo, hi, dst);
  }

  // An integer read into a double (PriorityWeightAssoc, FairShareDampeningFactor).
  void whole(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, double& dst) {
    std::int64_t n = 0;
    if (integer(key, v, lo, hi, n)) dst = static_cast<double>(n);
  }

  // An integer count of `unit`s (seconds, minutes).
  void ticks(const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, Tick unit, Tick& dst) {
    std::int64_t n = 0;
    if (integer(key, v, lo, hi, n)) dst = n * unit;
  }

  void real(const std::string& key, const ParamValue& v, double lo, double hi, double& dst) {
    const auto d = parse_number(trim(v.text));
    if (!d || *d < lo || *d > hi) {
      error(key, v,
            "expected a number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + quoted(v.text));
      return;
    }
    dst = *d;
  }

  // Slurm time (parse_slurm_time); `unlimited_ok` accepts UNLIMITED/INFINITE, `positive` rejects 0.
  void slurm_time(const std::string& key, const ParamValue& v, Tick unit, bool unlimited_ok, bool positive, Tick& dst) {
    const auto t = parse_slurm_time(trim(v.text), unit);
    if (!t || (*t == kUnlimited && !unlimited_ok) || (positive && *t == 0) || *t < kUnlimited) {
      error(key, v,
            std::string("expected a ") + (positive ? "positive " : "") + "Slurm time (" +
                (unit == sim::kMinute ? "minutes" : "seconds") + ", or [days-]hours:minutes:seconds" +
                (unlimited_ok ? ", or UNLIMITED" : "") + "), got " + quoted(v.text));
      return;
    }
    dst = *t;
  }

  void yes_no(const std::string& key, const ParamValue& v, bool& dst) {
    if (!yes(trim(v.text), dst)) error(key, v, "expected YES or NO, got " + quoted(v.text));
  }

  // PriorityWeightTRES may be negative (slurm_get_tres_weight_array reads each weight with strtod,
  // no sign check: SchedMD/slurm src/common/slurm_protocol_api.c); billing weights may not.
  void tres(const std::string& key, const ParamValue& v, std::map<std::string, double>& dst, bool negative_ok = false) {
    std::string bad;
    if (!parse_tres(trim(v.text), dst, bad, negative_ok))
      error(key, v,
            "expected TRES=weight items such as \"CPU=1,Mem=0.25G,GRES/gpu=8\" (TRES: CPU, Mem, GRES/gpu), got " +
                quoted(bad));
  }

  // The value of the option whose text the value is; false (and `dst` kept) when none is.
  template <typename T>
  static bool lookup(std::string_view text,
                     std::initializer_list<std::pair<std::string_view, std::type_identity_t<T>>> options, T& dst) {
    for (const auto& [name, value] : options)
      if (text == name) return dst = value, true;
    return false;
  }

  // One of `options`; otherwise the error `<unknown> "<value>"; <listed>: <the options' texts>`.
  template <typename T>
  void choice(const std::string& key, const ParamValue& v,
              std::initializer_list<std::pair<std::string_view, std::type_identity_t<T>>> options, T& dst,
              std::string_view unknown, std::string_view listed) {
    if (lookup(trim(v.text), options, dst)) return;
    std::string names;
    for (const auto& option : options) names += (names.empty() ? "" : ", ") + std::string(option.first);
    error(key, v, std::string(unknown) + " " + quoted(v.text) + "; " + std::string(listed) + ": " + names);
  }

  // The entry a `group.<name>.Field` key configures (created on first mention).
  PartitionConf& partition(const std::string& key) { return named(out.partitions, name_of(key)); }
  QosConf& qos(const std::string& key) { return named(out.qos, name_of(key)); }
  SwitchConf& topology_switch(const std::string& key) { return named(out.switches, name_of(key)); }
  AccountConf& account(const std::string& key, const ParamValue& v) {
    const std::string name = name_of(key);
    auto& a = named(out.accounts, name);
    if (name == "root") error(key, v, "root is the tree's top; it is not configured");
    return a;
  }
  void node_weight(const std::string& key, const ParamValue& v) {
    std::int64_t w = 1;
    if (integer(key, v, 0, 4294967295, w)) out.node_weight[name_of(key)] = w;  // a uint32, as slurm.conf's
  }
};

// A row's reader: (reader, key, value).
using R = Reader&;
using K = const std::string&;
using V = const ParamValue&;

constexpr double kMaxWeight = 4294967295.0;        // PriorityWeight*: uint32
constexpr std::int64_t kMaxLimit = 1'000'000'000;  // MaxJobs / MaxGPUs limits
constexpr std::int64_t kMaxGraceSeconds = 86400 * 7;
// DefCpuPerGPU, DefMemPerGPU: a scenario node's CPUs (scenarios/scenario.cpp kMaxCpusPerNode) and
// 1 PB of memory per GPU at most.
constexpr std::int64_t kMaxCpusPerGpu = 1'000'000;
constexpr std::int64_t kMaxMemPerGpuMb = 1'000'000'000;

// SchedulerParameters' items, in kSchedulerParameters' order (the slurm.conf reader keeps those);
// a row reads the text after '=' under the key "SchedulerParameters.<item>".
constexpr ParamKey<Reader> kSchedulerItems[] = {
    {"default_queue_depth", [](R r, K key, V v) { r.integer(key, v, 1, 1'000'000, r.out.default_queue_depth); }},
    {"sched_interval", [](R r, K key, V v) { r.ticks(key, v, 0, 86400, sim::kSecond, r.out.sched_interval); }},
    {"bf_interval", [](R r, K key, V v) { r.ticks(key, v, 1, 10800, sim::kSecond, r.out.bf_interval); }},
    {"bf_resolution", [](R r, K key, V v) { r.ticks(key, v, 1, 3600, sim::kSecond, r.out.bf_resolution); }},
    {"bf_window", [](R r, K key, V v) { r.ticks(key, v, 1, 43200, sim::kMinute, r.out.bf_window); }},
    {"bf_max_job_test", [](R r, K key, V v) { r.integer(key, v, 1, 1'000'000, r.out.bf_max_job_test); }},
    {"bf_max_job_start", [](R r, K key, V v) { r.integer(key, v, 0, 10000, r.out.bf_max_job_start); }},
};

constexpr bool scheduler_items_are_the_modelled_ones() {
  if (std::size(kSchedulerItems) != kSchedulerParameters.size()) return false;
  for (std::size_t i = 0; i < kSchedulerParameters.size(); ++i)
    if (kSchedulerItems[i].pattern != kSchedulerParameters[i]) return false;
  return true;
}
static_assert(scheduler_items_are_the_modelled_ones(), "kSchedulerItems must list kSchedulerParameters, in order");

void read_scheduler_parameters(Reader& r, const std::string& key, const ParamValue& v) {
  for (const auto& item : split_list(trim(v.text))) {
    const auto eq = item.find('=');
    const std::string k = item.substr(0, eq);
    const ParamValue sub{eq == std::string::npos ? std::string() : item.substr(eq + 1), v.file, v.line, v.column};
    const auto* row = std::ranges::find_if(kSchedulerItems, [&](const auto& i) { return i.pattern == k; });
    if (row != std::end(kSchedulerItems)) {
      row->read(r, key + "." + k, sub);
      continue;
    }
    std::string modelled;
    for (const auto& i : kSchedulerItems) modelled += (modelled.empty() ? "" : ", ") + std::string(i.pattern);
    r.error(key, v, "unknown or unmodelled SchedulerParameters item " + quoted(item) + "; modelled: " + modelled);
  }
}

// Every key, in the order the policy catalogue lists them. The last kUncatalogued rows are not
// keys: they match only what the catalogued rows do not, which the registry reports as unknown,
// and repeat what the parser before the table did with such keys (the entry named is created; an
// unknown accounts.root.* field is still "root is the tree's top"; any nodes.<pool>.* field reads
// a Weight), so that every error list stays as it was.
constexpr std::size_t kUncatalogued = 5;
constexpr ParamKey<Reader> kRows[] = {
    {"PriorityType",
     [](R r, K key, V v) {
       r.choice(key, v, {{"priority/multifactor", true}, {"priority/basic", false}}, r.out.multifactor,
                "unknown PriorityType", "expected");
     }},
    {"PriorityWeightAge", [](R r, K key, V v) { r.real(key, v, 0, kMaxWeight, r.out.w_age); }},
    {"PriorityWeightFairshare", [](R r, K key, V v) { r.real(key, v, 0, kMaxWeight, r.out.w_fairshare); }},
    {"PriorityWeightJobSize", [](R r, K key, V v) { r.real(key, v, 0, kMaxWeight, r.out.w_jobsize); }},
    {"PriorityWeightPartition", [](R r, K key, V v) { r.real(key, v, 0, kMaxWeight, r.out.w_partition); }},
    {"PriorityWeightQOS", [](R r, K key, V v) { r.real(key, v, 0, kMaxWeight, r.out.w_qos); }},
    {"PriorityWeightTRES", [](R r, K key, V v) { r.tres(key, v, r.out.w_tres, true); }},
    {"PriorityMaxAge", [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, false, true, r.out.max_age); }},
    {"PriorityDecayHalfLife",
     [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, false, false, r.out.half_life); }},
    {"PriorityCalcPeriod",
     [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, false, true, r.out.calc_period); }},
    {"PriorityFavorSmall", [](R r, K key, V v) { r.yes_no(key, v, r.out.favor_small); }},
    {"will_run_groups", [](R r, K key, V v) { r.yes_no(key, v, r.out.will_run_groups); }},
    {"first_pass_backfill", [](R r, K key, V v) { r.yes_no(key, v, r.out.first_pass_backfill); }},
    {"PriorityFlags",
     [](R r, K key, V v) {
       for (const auto& f : split_list(trim(v.text))) {
         if (f == "NO_FAIR_TREE")
           r.out.fair_tree = false;
         else if (f == "FAIR_TREE")
           r.out.fair_tree = true;
         else if (f == "SMALL_RELATIVE_TO_TIME")
           r.out.small_relative_to_time = true;
         else if (f == "NO_NORMAL_PART")
           r.out.no_normal_part = true;
         else if (f == "NO_NORMAL_QOS")
           r.out.no_normal_qos = true;
         else
           r.error(key, v,
                   "unknown or unmodelled PriorityFlags item " + quoted(f) +
                       "; modelled: NO_FAIR_TREE, SMALL_RELATIVE_TO_TIME, NO_NORMAL_PART, NO_NORMAL_QOS");
       }
     }},
    {"PriorityUsageResetPeriod",
     [](R r, K key, V v) {
       r.choice(key, v,
                {{"NONE", ResetPeriod::None},
                 {"DAILY", ResetPeriod::Daily},
                 {"WEEKLY", ResetPeriod::Weekly},
                 {"MONTHLY", ResetPeriod::Monthly},
                 {"QUARTERLY", ResetPeriod::Quarterly},
                 {"YEARLY", ResetPeriod::Yearly}},
                r.out.usage_reset, "unknown or unmodelled PriorityUsageResetPeriod", "modelled");
     }},
    {"PriorityWeightAssoc", [](R r, K key, V v) { r.whole(key, v, 0, 4294967295LL, r.out.w_assoc); }},
    {"FairShareDampeningFactor", [](R r, K key, V v) { r.whole(key, v, 1, 65535, r.out.dampening); }},
    {"TRESBillingWeights", [](R r, K key, V v) { r.tres(key, v, r.out.billing); }},
    {"SchedulerType",
     [](R r, K key, V v) {
       r.choice(key, v, {{"sched/backfill", true}, {"sched/builtin", false}}, r.out.backfill, "unknown SchedulerType",
                "expected");
     }},
    {"SchedulerParameters", read_scheduler_parameters},
    {"PreemptType",
     [](R r, K key, V v) {
       r.preempt_type_at = &v;
       r.choice(key, v,
                {{"preempt/none", PreemptType::None},
                 {"preempt/partition_prio", PreemptType::PartitionPrio},
                 {"preempt/qos", PreemptType::Qos}},
                r.out.preempt_type, "unknown PreemptType", "expected");
     }},
    {"PreemptMode",
     [](R r, K key, V v) {
       for (const auto& f : split_list(trim(v.text))) {
         if (f == "OFF")
           r.out.preempt_mode = PreemptModeS::Off;
         else if (f == "CANCEL")
           r.out.preempt_mode = PreemptModeS::Cancel;
         else if (f == "REQUEUE")
           r.out.preempt_mode = PreemptModeS::Requeue;
         else if (f == "SUSPEND")
           r.out.preempt_mode = PreemptModeS::Suspend;
         else if (f == "GANG")
           continue;
         else if (f == "WITHIN")
           r.out.preempt_within = true;
         else if (f == "PRIORITY")
           r.out.preempt_priority = true;
         else
           r.error(key, v,
                   "unknown PreemptMode item " + quoted(f) +
                       "; expected: OFF, CANCEL, REQUEUE, SUSPEND, GANG, WITHIN, PRIORITY");
       }
     }},
    {"PreemptParameters",
     [](R r, K key, V v) {
       for (const auto& f : split_list(trim(v.text))) {
         if (f == "youngest_first")
           r.out.youngest_first = true;
         else
           r.error(key, v, "unknown or unmodelled PreemptParameters item " + quoted(f) + "; modelled: youngest_first");
       }
     }},
    {"PreemptExemptTime",
     [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, false, false, r.out.preempt_exempt); }},
    {"SchedulerTimeSlice", [](R r, K key, V v) { r.ticks(key, v, 5, 65533, sim::kSecond, r.out.time_slice); }},
    {"DefCpuPerGPU", [](R r, K key, V v) { r.integer(key, v, 0, kMaxCpusPerGpu, r.out.def_cpu_per_gpu); }},
    {"DefMemPerGPU", [](R r, K key, V v) { r.integer(key, v, 0, kMaxMemPerGpuMb, r.out.def_mem_per_gpu); }},
    {"cred_expire", [](R r, K key, V v) { r.ticks(key, v, 0, 86400, sim::kSecond, r.out.cred_expire); }},
    {"partitions.<name>.Nodes",
     [](R r, K key, V v) {
       auto& p = r.partition(key);
       p.pools = split_list(trim(v.text));
       // Nodes=ALL, as slurm.conf writes it: every pool (no list).
       if (p.pools.size() == 1 && is_all_nodes(p.pools[0])) {
         p.pools.clear();
         return;
       }
       if (p.pools.empty()) r.error(key, v, "expected pool names or ALL, got " + quoted(v.text));
     }},
    {"partitions.<name>.PriorityTier", [](R r, K key, V v) { r.integer(key, v, 0, 65533, r.partition(key).tier); }},
    {"partitions.<name>.PriorityJobFactor",
     [](R r, K key, V v) { r.integer(key, v, 0, 65533, r.partition(key).job_factor); }},
    {"partitions.<name>.MaxTime",
     [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, true, true, r.partition(key).max_time); }},
    {"partitions.<name>.DefaultTime",
     [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, true, true, r.partition(key).default_time); }},
    {"partitions.<name>.Default", [](R r, K key, V v) { r.yes_no(key, v, r.partition(key).is_default); }},
    {"partitions.<name>.OverSubscribe",
     [](R r, K key, V v) {
       r.choice(key, v, {{"NO", false}, {"EXCLUSIVE", true}}, r.partition(key).exclusive,
                "unknown or unmodelled OverSubscribe", "modelled");
     }},
    {"partitions.<name>.DefCpuPerGPU",
     [](R r, K key, V v) { r.integer(key, v, 0, kMaxCpusPerGpu, r.partition(key).def_cpu_per_gpu); }},
    {"partitions.<name>.DefMemPerGPU",
     [](R r, K key, V v) { r.integer(key, v, 0, kMaxMemPerGpuMb, r.partition(key).def_mem_per_gpu); }},
    {"partitions.<name>.GraceTime",
     [](R r, K key, V v) { r.ticks(key, v, 0, kMaxGraceSeconds, sim::kSecond, r.partition(key).grace); }},
    {"partitions.<name>.State",
     [](R r, K key, V v) {
       if (!Reader::lookup(trim(v.text),
                           {{"UP", PartitionState::Up},
                            {"DOWN", PartitionState::Down},
                            {"DRAIN", PartitionState::Drain},
                            {"INACTIVE", PartitionState::Inactive}},
                           r.partition(key).state))
         r.error(key, v, "expected UP, DOWN, DRAIN or INACTIVE, got " + quoted(v.text));
     }},
    {"qos.<name>.Priority", [](R r, K key, V v) { r.integer(key, v, 0, 4294967295LL, r.qos(key).priority); }},
    {"qos.<name>.Preempt", [](R r, K key, V v) { r.qos(key).preempt = split_list(trim(v.text)); }},
    {"qos.<name>.UsageFactor", [](R r, K key, V v) { r.real(key, v, 0, 1e6, r.qos(key).usage_factor); }},
    {"qos.<name>.GraceTime",
     [](R r, K key, V v) { r.ticks(key, v, 0, kMaxGraceSeconds, sim::kSecond, r.qos(key).grace); }},
    {"qos.<name>.PreemptExemptTime",
     [](R r, K key, V v) { r.slurm_time(key, v, sim::kMinute, false, false, r.qos(key).preempt_exempt); }},
    {"qos.<name>.MaxJobsPerUser",
     [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.out.limits.qos[name_of(key)].jobs); }},
    {"qos.<name>.MaxGPUsPerUser",
     [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.out.limits.qos[name_of(key)].gpus); }},
    {"MaxJobsPerUser", [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.out.limits.qos_default.jobs); }},
    {"MaxGPUsPerUser", [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.out.limits.qos_default.gpus); }},
    {"users.<name>.MaxJobs",
     [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.out.limits.users[name_of(key)].jobs); }},
    {"users.<name>.MaxGPUs",
     [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.out.limits.users[name_of(key)].gpus); }},
    {"accounts.<name>.shares", [](R r, K key, V v) { r.integer(key, v, 0, kMaxLimit, r.account(key, v).shares); }},
    {"accounts.<name>.parent", [](R r, K key, V v) { r.account(key, v).parent = std::string(trim(v.text)); }},
    {"accounts.<name>.users", [](R r, K key, V v) { r.account(key, v).users = split_list(trim(v.text)); }},
    {"usage.<user>", [](R r, K key, V v) { r.real(key, v, 0, 1e18, r.out.raw_usage[key.substr(key.find('.') + 1)]); }},
    {"nodes.<pool>.Weight", [](R r, K key, V v) { r.node_weight(key, v); }},
    {"topology.<SwitchName>.Switches",
     [](R r, K key, V v) { r.topology_switch(key).switches = split_list(trim(v.text)); }},
    {"topology.<SwitchName>.Nodes", [](R r, K key, V v) { r.topology_switch(key).nodes = std::string(trim(v.text)); }},
    // Not keys (kUncatalogued): an unknown field of an entry.
    {"partitions.<name>",
     [](R r, K key, V) {
       if (has_name_and_field(key)) r.partition(key);
     }},
    {"qos.<name>",
     [](R r, K key, V) {
       if (has_name_and_field(key)) r.qos(key);
     }},
    {"accounts.<name>",
     [](R r, K key, V v) {
       if (has_name_and_field(key)) r.account(key, v);
     }},
    {"nodes.<name>",
     [](R r, K key, V v) {
       if (has_name_and_field(key)) r.node_weight(key, v);
     }},
    {"topology.<name>",
     [](R r, K key, V) {
       if (has_name_and_field(key)) r.topology_switch(key);
     }},
};

// The key rows: kRows less the uncatalogued ones.
constexpr std::span<const ParamKey<Reader>> kKeys = std::span(kRows).first(std::size(kRows) - kUncatalogued);

// The checks that need every key read: a PreemptType other than none needs a PreemptMode that
// preempts; the account tree reaches root without cycles; at most one partition is the Default.
void check_across(const PolicyParams& params, Reader& r) {
  const Config& out = r.out;
  if (out.preempt_type != PreemptType::None && out.preempt_mode == PreemptModeS::Off && r.preempt_type_at != nullptr)
    r.error("PreemptType", *r.preempt_type_at,
            "PreemptType " + quoted(r.preempt_type_at->text) + " needs PreemptMode CANCEL, REQUEUE or SUSPEND");
  for (const auto& a : out.accounts) {
    std::set<std::string> seen{a.name};
    std::string at = a.parent;
    while (at != "root") {
      auto it =
          std::find_if(out.accounts.begin(), out.accounts.end(), [&](const AccountConf& x) { return x.name == at; });
      const auto pk = "accounts." + a.name + ".parent";
      const auto pv = params.find(pk);
      const ParamValue where = pv != params.end() ? pv->second : ParamValue{};
      if (it == out.accounts.end()) {
        r.error(pk, where, "unknown parent account " + quoted(at) + " (accounts must reach root)");
        break;
      }
      if (!seen.insert(at).second) {
        r.error(pk, where, "the account tree has a cycle through " + quoted(at));
        break;
      }
      at = it->parent;
    }
  }
  int defaults = 0;
  for (const auto& p : out.partitions) defaults += p.is_default ? 1 : 0;
  if (defaults > 1) {
    const auto& [k, v] = *params.begin();
    r.error(k, v, "more than one partition has Default: YES");
  }
}

std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& out) {
  std::vector<sim::InputError> errors;
  Reader reader{out, errors};
  read_params<Reader>(reader, params, kRows);
  check_across(params, reader);
  return errors;
}

}  // namespace

std::optional<Tick> parse_slurm_time(std::string_view text, Tick bare_unit) {
  if (text == "UNLIMITED" || text == "INFINITE" || text == "unlimited" || text == "infinite") return kUnlimited;
  if (text.empty()) return std::nullopt;
  const bool slurm_form =
      std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '-' || c == ':'; });
  if (!slurm_form) return sim::parse_duration(text);
  std::int64_t days = 0;
  std::string_view rest = text;
  const auto dash = text.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    const auto d = parse_int(text.substr(0, dash));
    if (!d || *d < 0) return std::nullopt;
    days = *d;
    rest = text.substr(dash + 1);
  }
  std::vector<std::int64_t> parts;
  while (true) {
    const auto colon = rest.find(':');
    const auto n = parse_int(rest.substr(0, colon));
    if (!n || *n < 0 || *n > 1'000'000'000) return std::nullopt;
    parts.push_back(*n);
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (parts.size() > 3 || days > 1'000'000) return std::nullopt;
  std::int64_t seconds = 0;
  if (has_days) {
    // D-H, D-H:M, D-H:M:S
    seconds =
        days * 86400 + parts[0] * 3600 + (parts.size() > 1 ? parts[1] * 60 : 0) + (parts.size() > 2 ? parts[2] : 0);
    return seconds * sim::kSecond;
  }
  if (parts.size() == 1) return parts[0] * bare_unit;
  if (parts.size() == 2) return (parts[0] * 60 + parts[1]) * sim::kSecond;  // M:S
  return (parts[0] * 3600 + parts[1] * 60 + parts[2]) * sim::kSecond;       // H:M:S
}

const std::vector<std::string>& param_keys() {
  static const std::vector<std::string> keys = param_patterns<Reader>(kKeys);
  return keys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse_into);
}

Config parse_config(const PolicyParams& params) { return parse_params_or_throw<Config>(params, parse_into); }

}  // namespace headroom::policies::slurm
