#pragma once

// Slurm's per-user limits (AccountingStorageEnforce=limits), as the slurm policy enforces them:
//
//   policy: {name: slurm, MaxJobsPerUser: 64, MaxGPUsPerUser: 512,
//            qos: {long: {MaxJobsPerUser: 4, MaxGPUsPerUser: 64}},
//            users: {user45: {MaxJobs: 522}, user19: {MaxGPUs: 3648}}}
//
//  - QOS MaxJobsPerUser (sacctmgr MaxJobsPU) and MaxTRESPerUser=gres/gpu=N (MaxTRESPU; here
//    MaxGPUsPerUser): the running jobs and the GPUs one user holds at once in jobs of that QOS
//    (a job without a QOS is in "normal"). The top-level MaxJobsPerUser / MaxGPUsPerUser are the
//    limits of every QOS that sets none of its own. Pending reasons QOSMaxJobsPerUserLimit and
//    QOSMaxGRESPerUser.
//  - Association MaxJobs and GrpTRES=gres/gpu=N of a user's association (users.<name>.MaxJobs,
//    users.<name>.MaxGPUs): the running jobs and GPUs of all the user's jobs. Pending reasons
//    AssocMaxJobsLimit and AssocGrpGRES.
//
// Sources in SchedMD/slurm: src/slurmctld/acct_policy.c (acct_policy_job_runnable_pre_select
// checks the job counts, QOS before association; acct_policy_job_runnable_post_select the TRES,
// QOS before association; a request above a limit on its own holds the job until the limit
// changes, with the same reason), src/slurmctld/node_scheduler.c select_nodes (an accounting
// limit overrides "no resources", so a held job never marks its partition failed),
// src/slurmctld/job_scheduler.c _schedule (ESLURM_ACCOUNTING_POLICY: the job is passed over),
// src/plugins/sched/backfill/backfill.c (a job over a limit is skipped and gets no reservation
// unless SchedulerParameters=assoc_limit_stop, which is not modelled), and
// src/common/job_state_reason.c (the reasons' names). A suspended job keeps counting, as in Slurm,
// where suspension does not end its accounting. Job arrays' MaxSubmit, Grp limits of parent
// accounts and of a QOS as a whole are not modelled.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"

namespace headroom::policies::slurm {

struct UserLimit {
  std::int64_t jobs = 0;  // running jobs at once; 0 = no limit
  std::int64_t gpus = 0;  // GPUs held at once; 0 = no limit
};

struct LimitsConf {
  UserLimit qos_default;                                // MaxJobsPerUser / MaxGPUsPerUser
  std::map<std::string, UserLimit, std::less<>> qos;    // qos.<name>.MaxJobsPerUser / .MaxGPUsPerUser
  std::map<std::string, UserLimit, std::less<>> users;  // users.<name>.MaxJobs / .MaxGPUs
  bool any() const;
};

enum class LimitReason : std::uint8_t {
  None,
  QosMaxJobsPerUser,  // QOSMaxJobsPerUserLimit
  AssocMaxJobs,       // AssocMaxJobsLimit
  QosMaxGresPerUser,  // QOSMaxGRESPerUser: the user holds what the QOS allows
  QosGresTooLarge,    // QOSMaxGRESPerUser: the job alone asks more
  AssocGrpGres,       // AssocGrpGRES: the association holds what it allows
  AssocGresTooLarge,  // AssocGrpGRES: the job alone asks more
};
inline constexpr int kLimitReasons = 7;

// squeue's reason, with what it means here.
std::string_view limit_reason_text(LimitReason r);

class Limits {
 public:
  Limits() = default;
  explicit Limits(LimitsConf conf) : conf_(std::move(conf)) {}

  // Resolves the QOS and user names of the workload; call before the other members.
  void init(const models::Workload& w);
  bool active() const { return active_; }

  // Why `job` may not start now (None: it may).
  LimitReason blocks(const models::Job& job) const;
  // The job holds its resources from now / no longer. Each counts a job once: a second on_start
  // (a suspended job resuming) or on_end (a job already uncounted) changes nothing.
  void on_start(models::JobIndex j, const models::Job& job);
  void on_end(models::JobIndex j, const models::Job& job);

  // What a user runs (tests): jobs and GPUs of all its QOS.
  UserLimit used_by(models::TenantId t) const;

 private:
  struct Use {
    std::int64_t jobs = 0, gpus = 0;
  };
  std::size_t slot_of(const models::Job& job) const {
    return job.qos == models::kNone ? normal_slot_ : qos_slot_[job.qos];
  }

  LimitsConf conf_;
  bool active_ = false;
  std::size_t slots_ = 0, normal_slot_ = 0;
  std::vector<std::size_t> qos_slot_;   // Workload::qos id -> slot (one per QOS name)
  std::vector<UserLimit> slot_limit_;   // per slot
  std::vector<UserLimit> assoc_limit_;  // per tenant
  std::vector<Use> qos_use_;            // per tenant x slot
  std::vector<Use> assoc_use_;          // per tenant
  std::vector<std::uint8_t> counted_;   // per job
};

}  // namespace headroom::policies::slurm
