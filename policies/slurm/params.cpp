// The slurm policy's `policy:` block: slurm.conf / sacctmgr / topology.conf vocabulary.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include "policies/common/param_text.hpp"
#include "policies/common/params.hpp"
#include "policies/slurm/slurm.hpp"

namespace headroom::policies::slurm {

namespace {

bool yes(std::string_view s, bool& out) {
  if (s == "YES" || s == "yes" || s == "Yes" || s == "true" || s == "1") return out = true, true;
  if (s == "NO" || s == "no" || s == "No" || s == "false" || s == "0") return out = false, true;
  return false;
}

// "CPU=1,Mem=0.25G,GRES/gpu=8" -> weights (a trailing G on Mem is accepted: per GB).
bool parse_tres(std::string_view text, std::map<std::string, double>& out, std::string& bad) {
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
    if ((key != "CPU" && key != "Mem" && key != "GRES/gpu") || !v || *v < 0) return bad = item, false;
    out[key] = *v;
  }
  return true;
}

// `prefix.<name>.<field>` -> name and field.
bool split_named(std::string_view key, std::string_view prefix, std::string& name, std::string& field) {
  if (!key.starts_with(prefix)) return false;
  key.remove_prefix(prefix.size());
  const auto dot = key.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  name = std::string(key.substr(0, dot));
  field = std::string(key.substr(dot + 1));
  return true;
}

template <typename T>
T& named(std::vector<T>& v, const std::string& name) {
  for (auto& x : v)
    if (x.name == name) return x;
  v.push_back(T{});
  v.back().name = name;
  return v.back();
}

std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& out) {
  std::vector<sim::InputError> errors;
  auto err = [&](const std::string& key, const ParamValue& v, const std::string& msg) {
    errors.emplace_back(v.file, v.line, v.column, "policy." + key, msg);
  };
  auto integer = [&](const std::string& key, const ParamValue& v, std::int64_t lo, std::int64_t hi, std::int64_t& dst) {
    const auto n = parse_int(trim(v.text));
    if (!n || *n < lo || *n > hi) {
      err(key, v,
          "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + quoted(v.text));
      return false;
    }
    dst = *n;
    return true;
  };
  auto real = [&](const std::string& key, const ParamValue& v, double lo, double hi, double& dst) {
    const auto d = parse_number(trim(v.text));
    if (!d || *d < lo || *d > hi) {
      err(key, v,
          "expected a number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + quoted(v.text));
      return false;
    }
    dst = *d;
    return true;
  };
  // Slurm time; `unlimited_ok` accepts UNLIMITED/INFINITE.
  auto time = [&](const std::string& key, const ParamValue& v, Tick unit, bool unlimited_ok, bool positive, Tick& dst) {
    const auto t = parse_slurm_time(trim(v.text), unit);
    if (!t || (*t == kUnlimited && !unlimited_ok) || (positive && *t == 0) || *t < kUnlimited) {
      err(key, v,
          std::string("expected a ") + (positive ? "positive " : "") + "Slurm time (" +
              (unit == sim::kMinute ? "minutes" : "seconds") + ", or [days-]hours:minutes:seconds" +
              (unlimited_ok ? ", or UNLIMITED" : "") + "), got " + quoted(v.text));
      return false;
    }
    dst = *t;
    return true;
  };
  const ParamValue* mode_at = nullptr;
  const ParamValue* type_at = nullptr;
  for (const auto& [key, v] : params) {
    const std::string_view text = trim(v.text);
    std::string name, field;
    if (key == "PriorityType") {
      if (text == "priority/multifactor" || text == "priority/basic")
        out.multifactor = text == "priority/multifactor";
      else
        err(key, v, "unknown PriorityType " + quoted(v.text) + "; expected: priority/multifactor, priority/basic");
    } else if (key == "PriorityWeightAge") {
      real(key, v, 0, 4294967295.0, out.w_age);
    } else if (key == "PriorityWeightFairshare") {
      real(key, v, 0, 4294967295.0, out.w_fairshare);
    } else if (key == "PriorityWeightJobSize") {
      real(key, v, 0, 4294967295.0, out.w_jobsize);
    } else if (key == "PriorityWeightPartition") {
      real(key, v, 0, 4294967295.0, out.w_partition);
    } else if (key == "PriorityWeightQOS") {
      real(key, v, 0, 4294967295.0, out.w_qos);
    } else if (key == "PriorityWeightTRES" || key == "TRESBillingWeights") {
      std::string bad;
      auto& dst = key == "TRESBillingWeights" ? out.billing : out.w_tres;
      if (!parse_tres(text, dst, bad))
        err(key, v,
            "expected TRES=weight items such as \"CPU=1,Mem=0.25G,GRES/gpu=8\" (TRES: CPU, Mem, GRES/gpu), got " +
                quoted(bad));
    } else if (key == "PriorityMaxAge") {
      time(key, v, sim::kMinute, false, true, out.max_age);
    } else if (key == "PriorityDecayHalfLife") {
      time(key, v, sim::kMinute, false, false, out.half_life);
    } else if (key == "PriorityCalcPeriod") {
      time(key, v, sim::kMinute, false, true, out.calc_period);
    } else if (key == "PriorityFavorSmall") {
      if (!yes(text, out.favor_small)) err(key, v, "expected YES or NO, got " + quoted(v.text));
    } else if (key == "PriorityFlags") {
      for (const auto& f : split_list(text)) {
        if (f == "NO_FAIR_TREE")
          out.fair_tree = false;
        else if (f == "FAIR_TREE")
          out.fair_tree = true;
        else if (f == "SMALL_RELATIVE_TO_TIME")
          out.small_relative_to_time = true;
        else if (f == "NO_NORMAL_PART")
          out.no_normal_part = true;
        else if (f == "NO_NORMAL_QOS")
          out.no_normal_qos = true;
        else
          err(key, v,
              "unknown or unmodelled PriorityFlags item " + quoted(f) +
                  "; modelled: NO_FAIR_TREE, SMALL_RELATIVE_TO_TIME, NO_NORMAL_PART, NO_NORMAL_QOS");
      }
    } else if (key == "PriorityUsageResetPeriod") {
      if (text == "NONE")
        out.usage_reset = ResetPeriod::None;
      else if (text == "DAILY")
        out.usage_reset = ResetPeriod::Daily;
      else if (text == "WEEKLY")
        out.usage_reset = ResetPeriod::Weekly;
      else if (text == "MONTHLY")
        out.usage_reset = ResetPeriod::Monthly;
      else if (text == "QUARTERLY")
        out.usage_reset = ResetPeriod::Quarterly;
      else if (text == "YEARLY")
        out.usage_reset = ResetPeriod::Yearly;
      else
        err(key, v,
            "unknown or unmodelled PriorityUsageResetPeriod " + quoted(v.text) +
                "; modelled: NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY");
    } else if (key == "PriorityWeightAssoc") {
      std::int64_t n = 0;
      if (integer(key, v, 0, 4294967295LL, n)) out.w_assoc = static_cast<double>(n);
    } else if (key == "FairShareDampeningFactor") {
      std::int64_t d = 1;
      if (integer(key, v, 1, 65535, d)) out.dampening = static_cast<double>(d);
    } else if (key == "SchedulerType") {
      if (text == "sched/backfill" || text == "sched/builtin")
        out.backfill = text == "sched/backfill";
      else
        err(key, v, "unknown SchedulerType " + quoted(v.text) + "; expected: sched/backfill, sched/builtin");
    } else if (key == "SchedulerParameters") {
      for (const auto& item : split_list(text)) {
        const auto eq = item.find('=');
        const std::string k = item.substr(0, eq);
        const ParamValue sub{eq == std::string::npos ? std::string() : item.substr(eq + 1), v.file, v.line, v.column};
        const std::string where = key + "." + k;
        std::int64_t n = 0;
        if (k == "default_queue_depth") {
          integer(where, sub, 1, 1'000'000, out.default_queue_depth);
        } else if (k == "sched_interval") {
          if (integer(where, sub, 0, 86400, n)) out.sched_interval = n * sim::kSecond;
        } else if (k == "bf_interval") {
          if (integer(where, sub, 1, 10800, n)) out.bf_interval = n * sim::kSecond;
        } else if (k == "bf_resolution") {
          if (integer(where, sub, 1, 3600, n)) out.bf_resolution = n * sim::kSecond;
        } else if (k == "bf_window") {
          if (integer(where, sub, 1, 43200, n)) out.bf_window = n * sim::kMinute;
        } else if (k == "bf_max_job_test") {
          integer(where, sub, 1, 1'000'000, out.bf_max_job_test);
        } else if (k == "bf_max_job_start") {
          integer(where, sub, 0, 10000, out.bf_max_job_start);
        } else {
          std::string modelled;
          for (const std::string_view m : kSchedulerParameters)
            modelled += (modelled.empty() ? "" : ", ") + std::string(m);
          err(key, v, "unknown or unmodelled SchedulerParameters item " + quoted(item) + "; modelled: " + modelled);
        }
      }
    } else if (key == "PreemptType") {
      type_at = &v;
      if (text == "preempt/none")
        out.preempt_type = PreemptType::None;
      else if (text == "preempt/partition_prio")
        out.preempt_type = PreemptType::PartitionPrio;
      else if (text == "preempt/qos")
        out.preempt_type = PreemptType::Qos;
      else
        err(key, v,
            "unknown PreemptType " + quoted(v.text) + "; expected: preempt/none, preempt/partition_prio, preempt/qos");
    } else if (key == "PreemptMode") {
      mode_at = &v;
      for (const auto& f : split_list(text)) {
        if (f == "OFF")
          out.preempt_mode = PreemptModeS::Off;
        else if (f == "CANCEL")
          out.preempt_mode = PreemptModeS::Cancel;
        else if (f == "REQUEUE")
          out.preempt_mode = PreemptModeS::Requeue;
        else if (f == "SUSPEND")
          out.preempt_mode = PreemptModeS::Suspend;
        else if (f == "GANG")
          continue;
        else if (f == "WITHIN")
          out.preempt_within = true;
        else if (f == "PRIORITY")
          out.preempt_priority = true;
        else
          err(key, v,
              "unknown PreemptMode item " + quoted(f) +
                  "; expected: OFF, CANCEL, REQUEUE, SUSPEND, GANG, WITHIN, PRIORITY");
      }
    } else if (key == "PreemptParameters") {
      for (const auto& f : split_list(text)) {
        if (f == "youngest_first")
          out.youngest_first = true;
        else
          err(key, v, "unknown or unmodelled PreemptParameters item " + quoted(f) + "; modelled: youngest_first");
      }
    } else if (key == "PreemptExemptTime") {
      time(key, v, sim::kMinute, false, false, out.preempt_exempt);
    } else if (key == "SchedulerTimeSlice") {
      std::int64_t n = 0;
      if (integer(key, v, 5, 65533, n)) out.time_slice = n * sim::kSecond;
    } else if (key == "cred_expire") {
      std::int64_t n = 0;
      if (integer(key, v, 0, 86400, n)) out.cred_expire = n * sim::kSecond;
    } else if (split_named(key, "partitions.", name, field)) {
      auto& p = named(out.partitions, name);
      if (field == "Nodes") {
        p.pools = split_list(text);
        if (p.pools.empty()) err(key, v, "expected pool names, got " + quoted(v.text));
      } else if (field == "PriorityTier") {
        integer(key, v, 0, 65533, p.tier);
      } else if (field == "PriorityJobFactor") {
        integer(key, v, 0, 65533, p.job_factor);
      } else if (field == "MaxTime") {
        time(key, v, sim::kMinute, true, true, p.max_time);
      } else if (field == "DefaultTime") {
        time(key, v, sim::kMinute, true, true, p.default_time);
      } else if (field == "Default") {
        if (!yes(text, p.is_default)) err(key, v, "expected YES or NO, got " + quoted(v.text));
      } else if (field == "OverSubscribe") {
        if (text == "EXCLUSIVE" || text == "NO")
          p.exclusive = text == "EXCLUSIVE";
        else
          err(key, v, "unknown or unmodelled OverSubscribe " + quoted(v.text) + "; modelled: NO, EXCLUSIVE");
      } else if (field == "GraceTime") {
        std::int64_t n = 0;
        if (integer(key, v, 0, 86400 * 7, n)) p.grace = n * sim::kSecond;
      } else if (field == "State") {
        if (text == "UP")
          p.state = PartitionState::Up;
        else if (text == "DOWN")
          p.state = PartitionState::Down;
        else if (text == "DRAIN")
          p.state = PartitionState::Drain;
        else if (text == "INACTIVE")
          p.state = PartitionState::Inactive;
        else
          err(key, v, "expected UP, DOWN, DRAIN or INACTIVE, got " + quoted(v.text));
      }
    } else if (key == "MaxJobsPerUser" || key == "MaxGPUsPerUser") {
      integer(key, v, 0, 1'000'000'000,
              key == "MaxJobsPerUser" ? out.limits.qos_default.jobs : out.limits.qos_default.gpus);
    } else if (split_named(key, "qos.", name, field) && (field == "MaxJobsPerUser" || field == "MaxGPUsPerUser")) {
      auto& l = out.limits.qos[name];
      integer(key, v, 0, 1'000'000'000, field == "MaxJobsPerUser" ? l.jobs : l.gpus);
    } else if (split_named(key, "users.", name, field) && (field == "MaxJobs" || field == "MaxGPUs")) {
      auto& l = out.limits.users[name];
      integer(key, v, 0, 1'000'000'000, field == "MaxJobs" ? l.jobs : l.gpus);
    } else if (split_named(key, "qos.", name, field)) {
      auto& q = named(out.qos, name);
      if (field == "Priority") {
        integer(key, v, 0, 4294967295LL, q.priority);
      } else if (field == "Preempt") {
        q.preempt = split_list(text);
      } else if (field == "UsageFactor") {
        real(key, v, 0, 1e6, q.usage_factor);
      } else if (field == "GraceTime") {
        std::int64_t n = 0;
        if (integer(key, v, 0, 86400 * 7, n)) q.grace = n * sim::kSecond;
      } else if (field == "PreemptExemptTime") {
        time(key, v, sim::kMinute, false, false, q.preempt_exempt);
      }
    } else if (key.rfind("usage.", 0) == 0 && key.size() > 6) {
      real(key, v, 0, 1e18, out.raw_usage[key.substr(6)]);
    } else if (split_named(key, "accounts.", name, field)) {
      auto& a = named(out.accounts, name);
      if (name == "root") err(key, v, "root is the tree's top; it is not configured");
      if (field == "shares") {
        integer(key, v, 0, 1'000'000'000, a.shares);
      } else if (field == "parent") {
        a.parent = std::string(text);
      } else if (field == "users") {
        a.users = split_list(text);
      }
    } else if (split_named(key, "nodes.", name, field)) {
      std::int64_t w = 1;
      if (integer(key, v, 0, 65533, w)) out.node_weight[name] = w;
    } else if (split_named(key, "topology.", name, field)) {
      auto& s = named(out.switches, name);
      if (field == "Switches")
        s.switches = split_list(text);
      else if (field == "Nodes")
        s.nodes = std::string(text);
    }
  }
  if (out.preempt_type != PreemptType::None && out.preempt_mode == PreemptModeS::Off && type_at != nullptr)
    err("PreemptType", *type_at,
        "PreemptType " + quoted(type_at->text) + " needs PreemptMode CANCEL, REQUEUE or SUSPEND");
  (void)mode_at;
  // The account tree must reach root without cycles.
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
        err(pk, where, "unknown parent account " + quoted(at) + " (accounts must reach root)");
        break;
      }
      if (!seen.insert(at).second) {
        err(pk, where, "the account tree has a cycle through " + quoted(at));
        break;
      }
      at = it->parent;
    }
  }
  int defaults = 0;
  for (const auto& p : out.partitions) defaults += p.is_default ? 1 : 0;
  if (defaults > 1) {
    const auto& [k, v] = *params.begin();
    err(k, v, "more than one partition has Default: YES");
  }
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
  static const std::vector<std::string> kKeys = {"PriorityType",
                                                 "PriorityWeightAge",
                                                 "PriorityWeightFairshare",
                                                 "PriorityWeightJobSize",
                                                 "PriorityWeightPartition",
                                                 "PriorityWeightQOS",
                                                 "PriorityWeightTRES",
                                                 "PriorityMaxAge",
                                                 "PriorityDecayHalfLife",
                                                 "PriorityCalcPeriod",
                                                 "PriorityFavorSmall",
                                                 "PriorityFlags",
                                                 "PriorityUsageResetPeriod",
                                                 "PriorityWeightAssoc",
                                                 "FairShareDampeningFactor",
                                                 "TRESBillingWeights",
                                                 "SchedulerType",
                                                 "SchedulerParameters",
                                                 "PreemptType",
                                                 "PreemptMode",
                                                 "PreemptParameters",
                                                 "PreemptExemptTime",
                                                 "SchedulerTimeSlice",
                                                 "cred_expire",
                                                 "partitions.<name>.Nodes",
                                                 "partitions.<name>.PriorityTier",
                                                 "partitions.<name>.PriorityJobFactor",
                                                 "partitions.<name>.MaxTime",
                                                 "partitions.<name>.DefaultTime",
                                                 "partitions.<name>.Default",
                                                 "partitions.<name>.OverSubscribe",
                                                 "partitions.<name>.GraceTime",
                                                 "partitions.<name>.State",
                                                 "qos.<name>.Priority",
                                                 "qos.<name>.Preempt",
                                                 "qos.<name>.UsageFactor",
                                                 "qos.<name>.GraceTime",
                                                 "qos.<name>.PreemptExemptTime",
                                                 "qos.<name>.MaxJobsPerUser",
                                                 "qos.<name>.MaxGPUsPerUser",
                                                 "MaxJobsPerUser",
                                                 "MaxGPUsPerUser",
                                                 "users.<name>.MaxJobs",
                                                 "users.<name>.MaxGPUs",
                                                 "accounts.<name>.shares",
                                                 "accounts.<name>.parent",
                                                 "accounts.<name>.users",
                                                 "usage.<user>",
                                                 "nodes.<pool>.Weight",
                                                 "topology.<SwitchName>.Switches",
                                                 "topology.<SwitchName>.Nodes"};
  return kKeys;
}

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse_into);
}

Config parse_config(const PolicyParams& params) { return parse_params_or_throw<Config>(params, parse_into); }

}  // namespace headroom::policies::slurm
