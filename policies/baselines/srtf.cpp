#include "policies/baselines/srtf.hpp"

#include <set>
#include <tuple>
#include <utility>

#include "policies/common/consolidate.hpp"

namespace headroom::policies {

using models::Job;
using models::JobState;

Tick helios_checkpoint_overhead(std::int32_t gpus) {
  if (gpus == 1) return 7 * sim::kSecond;
  if (gpus <= 8) return 30 * sim::kSecond;
  return 60 * sim::kSecond;
}

Tick CheckpointOverhead::of(std::int32_t gpus) const { return helios ? helios_checkpoint_overhead(gpus) : fixed; }

namespace {

// GPU quota per pool: the GPUs of its nodes that are up.
std::vector<std::int64_t> pool_quota(const models::ClusterState& cluster) {
  std::vector<std::int64_t> q(cluster.pool_count(), 0);
  for (const auto& n : cluster.nodes())
    if (n.up) q[n.pool] += n.gpus;
  return q;
}

}  // namespace

GreedyOutcome greedy_pass(Session& s, std::span<const JobIndex> order, const CheckpointOverhead& overhead,
                          std::string_view label) {
  const auto& cluster = s.cluster();
  const auto& jobs = s.workload().jobs;
  auto quota = pool_quota(cluster);
  std::vector<JobIndex> prerun, preempt;
  const std::string behind = std::string(label) + ": waiting; the GPUs go to jobs ahead of it in the queue order";
  for (JobIndex j : order) {
    const Job& job = jobs[j];
    const JobState st = s.state(j);
    if (st == JobState::Running) {
      if (s.terminating(j)) continue;
      const auto& pl = s.placement(j);
      const models::PoolId p = pl.empty() ? 0 : cluster.node(pl.front().node).pool;
      if (job.gpus <= quota[p]) {
        quota[p] -= job.gpus;
      } else {
        preempt.push_back(j);
      }
    } else if (st == JobState::Pending) {
      bool selected = false;
      for (models::PoolId p = 0; p < cluster.pool_count(); ++p) {
        if (job.gpus > quota[p] || !pool_eligible(cluster, p, job, s.workload())) continue;
        quota[p] -= job.gpus;
        prerun.push_back(j);
        selected = true;
        break;
      }
      if (!selected) s.pending_reason(j, behind);
    }
  }
  GreedyOutcome out;
  if (!preempt.empty()) {
    const JobIndex by = prerun.empty() ? models::kNoJob : prerun.front();
    const std::string reason = std::string(label) + ": preempted for jobs ahead of it (checkpoint)";
    for (JobIndex j : preempt) {
      const std::string why = s.preempt(j, PreemptMode::Checkpoint, 0, by, reason, overhead.of(jobs[j].gpus));
      HEADROOM_ASSERT(why.empty(), std::string(label) + " preemption refused: " + why);
      out.preempted.push_back(j);
    }
    for (JobIndex j : prerun) s.pending_reason(j, std::string(label) + ": selected; starts once its victims stop");
    return out;
  }
  for (JobIndex j : prerun) {
    if (auto placement = consolidate_placement(cluster, jobs[j], s.workload())) {
      const std::string why = s.start(j, *placement, label);
      HEADROOM_ASSERT(why.empty(), "consolidate produced an invalid placement: " + why);
      out.started.push_back(j);
    } else {
      out.unplaced.push_back(j);
      s.pending_reason(j, std::string(label) + ": selected, but consolidate finds no placement (fragmented GPUs)");
    }
  }
  return out;
}

void check_checkpoint_overhead(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  auto it = params.find("checkpoint_overhead");
  if (it == params.end() || it->second.text == "helios") return;
  const auto d = sim::parse_duration(it->second.text);
  if (!d || *d < 0)
    errors.emplace_back(it->second.file, it->second.line, it->second.column, "policy.checkpoint_overhead",
                        "expected \"helios\" or a duration such as 30s, got \"" + it->second.text + "\"");
}

CheckpointOverhead parse_checkpoint_overhead(const PolicyParams& params) {
  CheckpointOverhead o;
  auto it = params.find("checkpoint_overhead");
  if (it == params.end() || it->second.text == "helios") return o;
  o.helios = false;
  o.fixed = sim::parse_duration(it->second.text).value_or(0);
  return o;
}

namespace {

class SrtfPolicy final : public Policy {
 public:
  explicit SrtfPolicy(CheckpointOverhead overhead) : overhead_(overhead) {}
  std::string_view name() const override { return "srtf"; }

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    rem_[j] = view.workload().jobs[j].runtime;
    fresh_.push_back(j);
    enqueue(j);
  }
  void on_requeue(const ClusterView& view, JobIndex j) override {
    ensure(view);
    enqueue(j);  // rem_ was charged when the preemption was asked for
  }
  void on_release(const ClusterView& view, JobIndex j) override {
    ensure(view);
    if (key_[j].first != kNone) {
      running_.erase({key_[j].first, key_[j].second, j});
      key_[j].first = kNone;
    }
  }
  void on_end(const ClusterView& view, JobIndex j) override {
    ensure(view);
    if (pending_key_[j] != kNone) {
      pending_.erase({rem_[j], pending_key_[j], j});
      pending_key_[j] = kNone;
    }
  }

  void schedule(Session& s) override {
    ensure(s);
    const auto& jobs = s.workload().jobs;
    for (JobIndex j : fresh_) {
      if (s.state(j) != JobState::Pending) continue;
      if (auto why = never_fits(s.cluster(), jobs[j], s.workload())) {
        pending_.erase({rem_[j], pending_key_[j], j});
        pending_key_[j] = kNone;
        s.reject(j, *why);
      }
    }
    fresh_.clear();
    const Tick now = s.now();
    // Merge the two sorted sets: pending by remaining time, running by finish time - now.
    order_.clear();
    auto p = pending_.begin();
    auto r = running_.begin();
    while (p != pending_.end() || r != running_.end()) {
      if (r == running_.end() || (p != pending_.end() && std::get<0>(*p) <= std::get<0>(*r) - now)) {
        order_.push_back(std::get<2>(*p++));
      } else {
        order_.push_back(std::get<2>(*r++));
      }
    }
    const GreedyOutcome out = greedy_pass(s, order_, overhead_, "srtf");
    for (JobIndex j : out.preempted) {
      const Tick finish = key_[j].first;
      rem_[j] = finish - now + overhead_.of(jobs[j].gpus);
    }
    for (JobIndex j : out.started) {
      pending_.erase({rem_[j], pending_key_[j], j});
      pending_key_[j] = kNone;
      key_[j] = {now + rem_[j], seq_++};
      running_.emplace(key_[j].first, key_[j].second, j);
    }
  }

 private:
  static constexpr std::int64_t kNone = INT64_MIN;

  void ensure(const ClusterView& view) {
    if (!rem_.empty() || view.workload().jobs.empty()) return;
    const std::size_t n = view.workload().jobs.size();
    rem_.assign(n, 0);
    pending_key_.assign(n, kNone);
    key_.assign(n, {kNone, 0});
  }

  void enqueue(JobIndex j) {
    pending_key_[j] = static_cast<std::int64_t>(seq_++);
    pending_.emplace(rem_[j], pending_key_[j], j);
  }

  CheckpointOverhead overhead_;
  std::vector<Tick> rem_;  // remaining work while pending; at the last start while running
  std::vector<std::int64_t> pending_key_;
  std::vector<std::pair<Tick, std::uint64_t>> key_;  // running: (finish time, start sequence)
  std::uint64_t seq_ = 0;
  std::set<std::tuple<Tick, std::int64_t, JobIndex>> pending_;   // (remaining, entry sequence, job)
  std::set<std::tuple<Tick, std::uint64_t, JobIndex>> running_;  // (finish time, start sequence, job)
  std::vector<JobIndex> fresh_, order_;
};

}  // namespace

std::unique_ptr<Policy> make_srtf_policy(const PolicyParams& params) {
  return std::make_unique<SrtfPolicy>(parse_checkpoint_overhead(params));
}

}  // namespace headroom::policies
