// Job priority (src/plugins/priority/multifactor/priority_multifactor.c): the multifactor sum
// (priority_p_set, _get_priority_internal), its factors, billable usage (_apply_new_usage,
// _handle_assoc_tres_run_secs) decayed every PriorityCalcPeriod, and PriorityUsageResetPeriod.
// The fair-share factors themselves are in fair_tree.cpp.

#include "policies/slurm/policy.hpp"

namespace headroom::policies::slurm {

std::uint32_t multifactor_priority(const Config& c, const Factors& fa) {
  double p = c.w_age * fa.age + c.w_fairshare * fa.fairshare + c.w_jobsize * fa.jobsize + c.w_partition * fa.partition +
             c.w_qos * fa.qos;
  for (const auto& [r, w] : c.w_tres) {
    const auto it = fa.tres.find(r);
    if (it != fa.tres.end()) p += w * it->second;
  }
  if (!(p >= 1)) return 1;
  if (p >= 4294967295.0) return 4294967295u;
  return static_cast<std::uint32_t>(std::floor(p));
}

namespace detail {

double SlurmPolicy::billing(const Job& job) const {
  if (c_.billing.empty()) return job.cpus > 0 ? job.cpus : job.gpus;
  double b = 0;
  for (const auto& [r, w] : c_.billing) {
    if (r == "CPU") b += w * (job.cpus > 0 ? job.cpus : 0);
    if (r == "Mem") b += w * static_cast<double>(job.memory_mib) / 1024.0;
    if (r == "GRES/gpu") b += w * job.gpus;
  }
  return b;
}

// Applies every PriorityCalcPeriod tick up to `now`.
void SlurmPolicy::advance_usage(Tick now) {
  if (!ready_ || now < next_calc_) return;
  while (next_calc_ <= now) {
    bool quiet = c_.usage_reset == ResetPeriod::None;
    for (std::size_t i = 0; quiet && i < rate_.size(); ++i) quiet = rate_[i] == 0 && pend_[i] == 0;
    Tick t = next_calc_;
    if (quiet) t = next_calc_ + (now - next_calc_) / c_.calc_period * c_.calc_period;
    const double d =
        c_.half_life > 0 ? std::exp2(-sim::to_seconds(t - last_calc_) / sim::to_seconds(c_.half_life)) : 1.0;
    // From time 0 of the trace; months, quarters and years of 30, 91 and 365 days.
    const Tick period = c_.usage_reset == ResetPeriod::Daily       ? sim::kDay
                        : c_.usage_reset == ResetPeriod::Weekly    ? 7 * sim::kDay
                        : c_.usage_reset == ResetPeriod::Monthly   ? 30 * sim::kDay
                        : c_.usage_reset == ResetPeriod::Quarterly ? 91 * sim::kDay
                                                                   : 365 * sim::kDay;
    const bool reset = c_.usage_reset != ResetPeriod::None && t / period != last_calc_ / period;
    for (std::size_t i = 0; i < usage_.size(); ++i) {
      charge(i, t);
      usage_[i] = (reset ? 0.0 : usage_[i] * d) + pend_[i];
      pend_[i] = 0;
    }
    last_calc_ = t;
    next_calc_ = t + c_.calc_period;
  }
  refresh_fairshare();
  prio_stale_ = true;
}

std::uint32_t SlurmPolicy::compute_priority(const ClusterView& view, JobIndex j, Tick now) const {
  if (!c_.multifactor) return 1;
  const Job& job = view.workload().jobs[j];
  const Part& p = parts_[static_cast<std::size_t>(part_[j])];
  const Shape& s = shape_[j];
  Factors f;
  if (c_.w_age > 0) f.age = std::clamp(sim::to_seconds(now - eligible_[j]) / sim::to_seconds(c_.max_age), 0.0, 1.0);
  if (c_.w_fairshare > 0) f.fairshare = fairshare().at(static_cast<std::size_t>(leaf_of_.at(job.tenant)));
  const bool have_cpus = total_cpus_ > 0 && job.cpus > 0;
  const double cpus = have_cpus ? job.cpus : job.gpus;
  const double cluster_cpus = static_cast<double>(have_cpus ? total_cpus_ : total_gpus_);
  if (c_.w_jobsize > 0 && cluster_cpus > 0) {
    const double nodes_total = static_cast<double>(view.cluster().nodes().size());
    double min_nodes = s.fixed ? static_cast<double>(s.slices.size()) : 1.0;
    if (!s.fixed) min_nodes = std::ceil(static_cast<double>(job.gpus) / p.biggest);
    if (c_.small_relative_to_time) {
      const Tick lim = limit_[j] == kUnlimited ? kYear : limit_[j];
      const double per_node = cluster_cpus / nodes_total;
      const double size = std::max(cpus, min_nodes * per_node) / std::max(1.0, sim::to_seconds(lim) / 60.0);
      f.jobsize = std::min(1.0, size / cluster_cpus);
      if (c_.favor_small) f.jobsize = 1.0 - f.jobsize;
    } else if (c_.favor_small) {
      f.jobsize = ((nodes_total - min_nodes) / nodes_total + (cluster_cpus - cpus) / cluster_cpus) / 2;
    } else {
      f.jobsize = (min_nodes / nodes_total + cpus / cluster_cpus) / 2;
    }
  }
  if (c_.w_partition > 0)
    f.partition = c_.no_normal_part
                      ? static_cast<double>(p.conf.job_factor)
                      : (max_job_factor_ > 0 ? static_cast<double>(p.conf.job_factor) / max_job_factor_ : 0);
  if (c_.w_qos > 0) {
    const double qp = static_cast<double>(qos_of(job).conf.priority);
    f.qos = c_.no_normal_qos ? qp : (max_qos_prio_ > 0 ? qp / static_cast<double>(max_qos_prio_) : 0);
  }
  for (const auto& [r, w] : c_.w_tres) {
    (void)w;
    if (r == "CPU") f.tres[r] = p.cpus > 0 ? job.cpus / static_cast<double>(p.cpus) : 0;
    if (r == "Mem") f.tres[r] = p.mem > 0 ? static_cast<double>(job.memory_mib) / static_cast<double>(p.mem) : 0;
    if (r == "GRES/gpu") f.tres[r] = p.gpus > 0 ? job.gpus / static_cast<double>(p.gpus) : 0;
  }
  return multifactor_priority(c_, f);
}

void SlurmPolicy::recompute_priorities(const ClusterView& view, Tick now) {
  prio_stale_ = false;
  // Only the age and fair-share factors change while a job waits: without their weights every
  // priority stays what it was when the job was queued.
  if (!c_.multifactor || (c_.w_age <= 0 && c_.w_fairshare <= 0)) return;
  std::vector<JobIndex> jobs;
  jobs.reserve(queue_.size());
  for (const auto& k : queue_) jobs.push_back(k.j);
  bool changed = false;
  for (JobIndex j : jobs) {
    const auto p = compute_priority(view, j, now);
    if (p == prio_[j]) continue;
    changed = true;
    dequeue(j);
    prio_[j] = p;
    enqueue(j);
  }
  if (changed) dirty_ = true;
}

}  // namespace detail

}  // namespace headroom::policies::slurm
