#pragma once

// Slurm's slurmctld scheduling (docs POLICIES.md section 3): multifactor priority with classic or
// Fair Tree fair-share, the strict-priority main scheduler per partition, conservative backfill,
// cons_tres node selection with GRES gpu, node Weight and topology/tree, time limits, and
// preemption (preempt/partition_prio, preempt/qos; CANCEL, REQUEUE, SUSPEND). Parameters use the
// slurm.conf / sacctmgr vocabulary (docs/policies/slurm.md has a YAML example).
//
// Mapping onto headroom: job.queue is the partition; job.qos the QOS (kNone = "normal"); job.tenant
// the association: a user listed under an account of the `accounts` tree, an account itself (then
// its own user), or, when named nowhere, an account of its own with shares 1 under root holding one
// user. Without a `partitions` block every queue name is a partition over all nodes (PriorityTier
// 1, MaxTime UNLIMITED); with one, "default" (or an empty name) means the Default partition and any
// other unknown name is rejected. A QOS not in the `qos` block has Priority 0, UsageFactor 1 and
// preempts nothing. Resources are GPUs (GRES gpu) plus CPUs and memory where both node and job
// model them; a job without CPUs counts its GPUs as CPUs for JobSize and billing.
//
// The rules modelled, each with its source in SchedMD/slurm, and the headroom file that holds it:
// policies/slurm/README.md.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policies/api.hpp"
#include "policies/slurm/limits.hpp"

namespace headroom::policies::slurm {

enum class PreemptType : std::uint8_t { None, PartitionPrio, Qos };
enum class PreemptModeS : std::uint8_t { Off, Cancel, Requeue, Suspend };
enum class ResetPeriod : std::uint8_t { None, Daily, Weekly, Monthly, Quarterly, Yearly };

// Partition State: UP takes and starts jobs; DOWN takes them but starts none; DRAIN and INACTIVE
// take no new ones (a job naming only such partitions is rejected) and start none.
enum class PartitionState : std::uint8_t { Up, Down, Drain, Inactive };

inline constexpr Tick kUnlimited = -1;

// A partition's Nodes written as slurm.conf's keyword for every node ("ALL", or "all").
inline bool is_all_nodes(std::string_view nodes) { return nodes == "ALL" || nodes == "all"; }

struct PartitionConf {
  std::string name;
  std::vector<std::string> pools;             // Nodes: pool names; empty = every node
  std::int64_t tier = 1;                      // PriorityTier
  std::int64_t job_factor = 1;                // PriorityJobFactor
  Tick max_time = kUnlimited;                 // MaxTime
  Tick default_time = kUnlimited;             // DefaultTime
  bool is_default = false;                    // Default=YES
  bool exclusive = false;                     // OverSubscribe=EXCLUSIVE
  Tick grace = 0;                             // GraceTime
  PartitionState state = PartitionState::Up;  // State
  // DefCpuPerGPU, DefMemPerGPU (MB): what a job that names no CPUs (memory) gets per GPU; 0 = the
  // global value.
  std::int64_t def_cpu_per_gpu = 0, def_mem_per_gpu = 0;
};

struct QosConf {
  std::string name;
  std::int64_t priority = 0;
  std::vector<std::string> preempt;
  double usage_factor = 1.0;
  Tick grace = 0;
  Tick preempt_exempt = kUnlimited;  // kUnlimited: the global PreemptExemptTime
};

struct AccountConf {
  std::string name;
  std::string parent = "root";
  std::int64_t shares = 1;
  std::vector<std::string> users;
};

struct SwitchConf {
  std::string name;
  std::vector<std::string> switches;
  std::string nodes;  // hostlist over <pool><index> names
};

struct Config {
  bool multifactor = true;  // PriorityType
  double w_age = 0, w_fairshare = 0, w_jobsize = 0, w_partition = 0, w_qos = 0;
  // PriorityWeightAssoc: weighs the association's Priority (sacctmgr), which headroom does not
  // load: the factor is 0, as in Slurm for associations without a Priority.
  double w_assoc = 0;
  // usage.<user or account>: fair-share usage at time 0 (sshare's RawUsage).
  std::map<std::string, double> raw_usage;
  std::map<std::string, double> w_tres;  // PriorityWeightTRES: CPU, Mem, GRES/gpu
  Tick max_age = 7 * sim::kDay;
  Tick half_life = 7 * sim::kDay;  // 0 = no decay
  Tick calc_period = 5 * sim::kMinute;
  bool favor_small = false;
  bool fair_tree = true;
  bool small_relative_to_time = false;
  bool no_normal_part = false, no_normal_qos = false;
  ResetPeriod usage_reset = ResetPeriod::None;
  double dampening = 1.0;
  std::map<std::string, double> billing;  // TRESBillingWeights; empty = CPUs

  bool backfill = true;  // SchedulerType
  std::int64_t default_queue_depth = 100;
  Tick sched_interval = 60 * sim::kSecond;
  Tick bf_interval = 30 * sim::kSecond;
  Tick bf_resolution = 60 * sim::kSecond;
  Tick bf_window = 1440 * sim::kMinute;
  std::int64_t bf_max_job_test = 500;
  std::int64_t bf_max_job_start = 0;
  // will_run_groups (headroom's, not slurm.conf's): backfill places a reservation as
  // select/cons_tres's will-run test does (_will_run_test: running jobs' ends freed in groups on
  // 30-s barriers, the start at a group's last end; backfill.c's TRY_LATER), not at the earliest
  // instant the job fits. Off by default: exact against the real slurmctld (issue #38), but many
  // times the CPU time of a long replay.
  bool will_run_groups = false;
  // first_pass_backfill (headroom's): the replay's first scheduling pass (at its first instant
  // with jobs pending) is a backfill pass, then the main scheduler's. slurmctld after `scontrol
  // update PartitionName=... State=UP` with jobs queued: the update only queues the main
  // scheduler (queue_job_scheduler), and backfill's one-second tick comes first (issue #38: the
  // referee's start instant).
  bool first_pass_backfill = false;

  PreemptType preempt_type = PreemptType::None;
  PreemptModeS preempt_mode = PreemptModeS::Off;
  bool preempt_within = false, preempt_priority = false;
  bool youngest_first = false;
  Tick preempt_exempt = 0;
  // SchedulerTimeSlice: with PreemptType=preempt/qos and PreemptMode=SUSPEND, a preemptor and its
  // victim in the same partition are gang-scheduled: they take turns of this length.
  Tick time_slice = 30 * sim::kSecond;
  Tick cred_expire = 120 * sim::kSecond;
  // DefCpuPerGPU, DefMemPerGPU (MB) of slurm.conf: per-GPU defaults of partitions that set none.
  std::int64_t def_cpu_per_gpu = 0, def_mem_per_gpu = 0;

  std::vector<PartitionConf> partitions;
  std::vector<QosConf> qos;
  std::vector<AccountConf> accounts;
  std::map<std::string, std::int64_t> node_weight;  // pool name -> Weight
  std::vector<SwitchConf> switches;
  LimitsConf limits;  // per-user QOS and association limits (policies/slurm/limits.hpp)
};

// --- Fair-share arithmetic, exposed for tests ---------------------------------------------------

// An association tree: node 0 is root; parent[i] < i is not required. Users are leaves.
struct AssocTree {
  std::vector<std::string> name;
  std::vector<int> parent;  // -1 for root
  std::vector<double> shares;
  std::vector<bool> is_user;
  std::vector<std::vector<int>> children;
  int add(const std::string& n, int par, double sh, bool user);
};

// Classic fair-share factor of every node (users are the ones used): 2^(-(UE/S)/dampening).
std::vector<double> classic_fairshare(const AssocTree& tree, const std::vector<double>& usage, double dampening);
// Fair Tree factor of every user (rank / #users); other nodes get their level FS in `level_fs`.
std::vector<double> fair_tree_fairshare(const AssocTree& tree, const std::vector<double>& usage,
                                        std::vector<double>* level_fs = nullptr);

// The multifactor sum, floored, at least 1.
struct Factors {
  double age = 0, fairshare = 0, jobsize = 0, partition = 0, qos = 0;
  std::map<std::string, double> tres;
};
std::uint32_t multifactor_priority(const Config& c, const Factors& f);

// Slurm time strings: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", UNLIMITED/INFINITE (->
// kUnlimited); a bare number is `bare_unit`; "30s", "2h" etc. are read as headroom durations.
std::optional<Tick> parse_slurm_time(std::string_view text, Tick bare_unit);

// Parameter keys accepted under `policy:` (a <name> segment matches any name).
const std::vector<std::string>& param_keys();
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
Config parse_config(const PolicyParams& params);

// The SchedulerParameters items parse_config reads (slurm.conf's reader keeps only these).
inline constexpr std::array<std::string_view, 7> kSchedulerParameters = {
    "default_queue_depth", "sched_interval",  "bf_interval",     "bf_resolution",
    "bf_window",           "bf_max_job_test", "bf_max_job_start"};

// Inspection for tests (dynamic_cast the Policy).
class Inspect {
 public:
  virtual ~Inspect() = default;
  virtual std::uint32_t job_priority(JobIndex j) const = 0;
  virtual double fairshare_of(models::TenantId t) const = 0;  // as of the last PriorityCalcPeriod
  virtual double usage_of(models::TenantId t) const = 0;      // decayed raw usage of the user
  virtual std::int64_t backfill_starts() const = 0;
};

std::unique_ptr<Policy> make_policy(Config config);
std::unique_ptr<Policy> make_policy(const PolicyParams& params);

}  // namespace headroom::policies::slurm
