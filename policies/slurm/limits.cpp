#include "policies/slurm/limits.hpp"

namespace headroom::policies::slurm {

bool LimitsConf::any() const {
  const auto set = [](const UserLimit& l) { return l.jobs > 0 || l.gpus > 0; };
  if (set(qos_default)) return true;
  for (const auto& [name, l] : qos)
    if (set(l)) return true;
  for (const auto& [name, l] : users)
    if (set(l)) return true;
  return false;
}

std::string_view limit_reason_text(LimitReason r) {
  switch (r) {
    case LimitReason::QosMaxJobsPerUser:
      return "QOSMaxJobsPerUserLimit: the user runs as many jobs as its QOS allows a user (MaxJobsPerUser)";
    case LimitReason::AssocMaxJobs:
      return "AssocMaxJobsLimit: the user's association runs as many jobs as it allows (MaxJobs)";
    case LimitReason::QosMaxGresPerUser:
      return "QOSMaxGRESPerUser: the user holds as many GPUs as its QOS's per-user limit allows "
             "(MaxTRESPerUser=gres/gpu)";
    case LimitReason::QosGresTooLarge:
      return "QOSMaxGRESPerUser: the job asks for more GPUs than its QOS allows a user "
             "(MaxTRESPerUser=gres/gpu); held until the limit changes";
    case LimitReason::AssocGrpGres:
      return "AssocGrpGRES: the user's association holds as many GPUs as its limit allows (GrpTRES=gres/gpu)";
    case LimitReason::AssocGresTooLarge:
      return "AssocGrpGRES: the job asks for more GPUs than the user's association allows "
             "(GrpTRES=gres/gpu); held until the limit changes";
    case LimitReason::None: break;
  }
  return "";
}

void Limits::init(const models::Workload& w) {
  active_ = conf_.any();
  if (!active_) return;
  // One slot per QOS name; jobs without a QOS are in "normal".
  std::map<std::string, std::size_t, std::less<>> slot;
  const auto slot_for = [&](const std::string& name) {
    const auto [it, added] = slot.emplace(name, slot.size());
    if (added) {
      const auto c = conf_.qos.find(name);
      UserLimit l = conf_.qos_default;
      if (c != conf_.qos.end()) {
        if (c->second.jobs > 0) l.jobs = c->second.jobs;
        if (c->second.gpus > 0) l.gpus = c->second.gpus;
      }
      slot_limit_.push_back(l);
    }
    return it->second;
  };
  normal_slot_ = slot_for("normal");
  qos_slot_.clear();
  for (const auto& name : w.qos.names()) qos_slot_.push_back(slot_for(name));
  slots_ = slot.size();
  const std::size_t tenants = w.tenants.size();
  assoc_limit_.assign(tenants, UserLimit{});
  for (std::size_t t = 0; t < tenants; ++t) {
    const auto it = conf_.users.find(w.tenants.name(static_cast<std::uint32_t>(t)));
    if (it != conf_.users.end()) assoc_limit_[t] = it->second;
  }
  qos_use_.assign(tenants * slots_, Use{});
  assoc_use_.assign(tenants, Use{});
  counted_.assign(w.jobs.size(), 0);
}

LimitReason Limits::blocks(const models::Job& job) const {
  if (!active_) return LimitReason::None;
  const std::size_t slot = slot_of(job);
  const UserLimit& ql = slot_limit_[slot];
  const UserLimit& al = assoc_limit_[job.tenant];
  const Use& qu = qos_use_[job.tenant * slots_ + slot];
  const Use& au = assoc_use_[job.tenant];
  // acct_policy_job_runnable_pre_select: job counts, QOS first.
  if (ql.jobs > 0 && qu.jobs >= ql.jobs) return LimitReason::QosMaxJobsPerUser;
  if (al.jobs > 0 && au.jobs >= al.jobs) return LimitReason::AssocMaxJobs;
  // acct_policy_job_runnable_post_select: GPUs, QOS first.
  if (ql.gpus > 0 && job.gpus > ql.gpus) return LimitReason::QosGresTooLarge;
  if (ql.gpus > 0 && qu.gpus + job.gpus > ql.gpus) return LimitReason::QosMaxGresPerUser;
  if (al.gpus > 0 && job.gpus > al.gpus) return LimitReason::AssocGresTooLarge;
  if (al.gpus > 0 && au.gpus + job.gpus > al.gpus) return LimitReason::AssocGrpGres;
  return LimitReason::None;
}

void Limits::on_start(models::JobIndex j, const models::Job& job) {
  if (!active_ || counted_[j] != 0) return;
  counted_[j] = 1;
  Use& qu = qos_use_[job.tenant * slots_ + slot_of(job)];
  Use& au = assoc_use_[job.tenant];
  qu.jobs += 1;
  qu.gpus += job.gpus;
  au.jobs += 1;
  au.gpus += job.gpus;
}

void Limits::on_end(models::JobIndex j, const models::Job& job) {
  if (!active_ || counted_[j] == 0) return;
  counted_[j] = 0;
  Use& qu = qos_use_[job.tenant * slots_ + slot_of(job)];
  Use& au = assoc_use_[job.tenant];
  qu.jobs -= 1;
  qu.gpus -= job.gpus;
  au.jobs -= 1;
  au.gpus -= job.gpus;
}

UserLimit Limits::used_by(models::TenantId t) const {
  if (!active_ || t >= assoc_use_.size()) return {};
  return {assoc_use_[t].jobs, assoc_use_[t].gpus};
}

}  // namespace headroom::policies::slurm
