#include "policies/baselines/gavel.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "policies/common/consolidate.hpp"
#include "policies/common/params.hpp"

namespace headroom::policies::gavel {

using models::Job;
using models::JobState;
using models::PoolId;

namespace {

constexpr Tick kDefaultRound = 360 * sim::kSecond;

struct Config {
  Tick round = kDefaultRound;
  Tick overhead = 0;
};

std::vector<sim::InputError> parse(const PolicyParams& params, Config& out) {
  std::vector<sim::InputError> errors;
  auto duration = [&](const char* key, bool positive, Tick& into) {
    auto it = params.find(key);
    if (it == params.end()) return;
    const auto d = sim::parse_duration(it->second.text);
    if (!d || *d < 0 || (positive && *d == 0)) {
      errors.emplace_back(it->second.file, it->second.line, it->second.column, std::string("policy.") + key,
                          std::string("expected a duration") + (positive ? " > 0" : "") + " such as 6m, got \"" +
                              it->second.text + "\"");
      return;
    }
    into = *d;
  };
  duration("round", true, out.round);
  duration("checkpoint_overhead", false, out.overhead);
  return errors;
}

class GavelPolicy final : public Policy {
 public:
  explicit GavelPolicy(Config c) : cfg_(c) {}
  std::string_view name() const override { return "gavel"; }

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    alive_.insert(j);
    fresh_.push_back(j);
  }
  void on_requeue(const ClusterView& view, JobIndex j) override {
    ensure(view);
    held_[j] = false;
  }
  void on_release(const ClusterView& view, JobIndex j) override {
    ensure(view);
    if (pool_[j] != kNoPool) attained_[j] += static_cast<double>(view.now() - started_[j]) * norm(view, j, pool_[j]);
    pool_[j] = kNoPool;
    held_[j] = true;  // until on_requeue (a preemption or a failure retry) or on_end
    evicting_.erase(j);
  }
  void on_end(const ClusterView& view, JobIndex j) override {
    ensure(view);
    alive_.erase(j);
    plan_.erase(j);
    evicting_.erase(j);
  }

  void schedule(Session& s) override {
    ensure(s);
    const auto& w = s.workload();
    for (JobIndex j : fresh_)
      if (s.state(j) == JobState::Pending)
        if (auto why = never_fits(s.cluster(), w.jobs[j], w)) s.reject(j, *why);  // on_end drops it
    fresh_.clear();
    const Tick now = s.now();
    const std::vector<JobIndex> order = fairness_order(s);
    if (now >= next_round_) {
      plan_round(s, order);
      next_round_ = now + cfg_.round;
    }
    // Planned pending jobs on their pool.
    for (JobIndex j : order) {
      const auto it = plan_.find(j);
      if (it == plan_.end() || s.state(j) != JobState::Pending || held_[j]) continue;
      if (auto p = consolidate_in_pool(s.cluster(), it->second, w.jobs[j].gpus))
        start(s, j, it->second, *p, "round plan");
    }
    // Free GPUs between rounds: pending jobs in fairness order, each on its fastest pool with room.
    if (evicting_.empty()) {
      for (JobIndex j : order) {
        if (s.state(j) != JobState::Pending || held_[j]) continue;
        const Job& job = w.jobs[j];
        if (!whole(job)) {
          if (auto p = consolidate_placement(s.cluster(), job, w)) start(s, j, kNoPool, *p, "fits");
          continue;
        }
        for (PoolId p : pools_by_speed(s, j)) {
          if (auto pl = consolidate_in_pool(s.cluster(), p, job.gpus)) {
            plan_[j] = p;
            start(s, j, p, *pl, "free GPUs between rounds");
            break;
          }
        }
      }
    }
    // What still waits: no pool of its round plan, nor any free between rounds, has room.
    for (JobIndex j : order)
      if (s.state(j) == JobState::Pending && !held_[j])
        s.pending_reason(j, "gavel: waiting; no pool has room for it in this round's allocation (fairness order)");
    if (!alive_.empty()) s.wake_at(next_round_);
  }

 private:
  static constexpr PoolId kNoPool = UINT32_MAX;

  static bool whole(const Job& job) { return job.gpus > 0 && job.gpu_milli == 0; }

  void ensure(const ClusterView& view) {
    if (!held_.empty()) return;
    const std::size_t n = view.workload().jobs.size();
    held_.assign(n, false);
    pool_.assign(n, kNoPool);
    started_.assign(n, 0);
    attained_.assign(n, 0.0);
    prop_.assign(n, -1.0);
  }

  // The job's speed averaged over the GPUs of the pools it may use.
  double prop(const ClusterView& v, JobIndex j) {
    if (prop_[j] >= 0) return prop_[j];
    const auto& cl = v.cluster();
    double sum = 0, gpus = 0;
    for (PoolId p = 0; p < cl.pool_count(); ++p) {
      if (!pool_eligible(cl, p, v.workload().jobs[j], v.workload())) continue;
      const double g = static_cast<double>(cl.pool_node_count(p)) * cl.spec().pools[p].gpus_per_node;
      sum += g * static_cast<double>(v.pool_speed(j, p));
      gpus += g;
    }
    prop_[j] = gpus > 0 && sum > 0 ? sum / gpus : static_cast<double>(models::kSpeedOne);
    return prop_[j];
  }
  double norm(const ClusterView& v, JobIndex j, PoolId p) {
    return static_cast<double>(v.pool_speed(j, p)) / prop(v, j);
  }

  // Eligible pools, fastest first (ties: lower pool id).
  std::vector<PoolId> pools_by_speed(const ClusterView& v, JobIndex j) {
    std::vector<PoolId> out;
    for (PoolId p = 0; p < v.cluster().pool_count(); ++p)
      if (pool_eligible(v.cluster(), p, v.workload().jobs[j], v.workload())) out.push_back(p);
    std::stable_sort(out.begin(), out.end(),
                     [&](PoolId a, PoolId b) { return v.pool_speed(j, a) > v.pool_speed(j, b); });
    return out;
  }

  // Alive jobs, lowest attained-service rate first (ties: submit time, index).
  std::vector<JobIndex> fairness_order(const ClusterView& v) {
    struct Key {
      double rate;
      Tick submit;
      JobIndex j;
    };
    std::vector<Key> keys;
    const Tick now = v.now();
    for (JobIndex j : alive_) {
      double a = attained_[j];
      if (pool_[j] != kNoPool) a += static_cast<double>(now - started_[j]) * norm(v, j, pool_[j]);
      const Tick age = now - v.workload().jobs[j].submit;
      keys.push_back({age > 0 ? a / static_cast<double>(age) : 0.0, v.workload().jobs[j].submit, j});
    }
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
      if (a.rate != b.rate) return a.rate < b.rate;
      if (a.submit != b.submit) return a.submit < b.submit;
      return a.j < b.j;
    });
    std::vector<JobIndex> out;
    out.reserve(keys.size());
    for (const Key& k : keys) out.push_back(k.j);
    return out;
  }

  void plan_round(Session& s, const std::vector<JobIndex>& order) {
    const auto& cl = s.cluster();
    const auto& jobs = s.workload().jobs;
    plan_.clear();
    // (1) Selection by fairness while the cluster's up GPUs last.
    std::int64_t left = 0;
    std::vector<std::int64_t> room(cl.pool_count());
    for (PoolId p = 0; p < cl.pool_count(); ++p) left += room[p] = cl.pool_up_gpus(p);
    std::vector<JobIndex> selected;
    for (JobIndex j : order) {
      const Job& job = jobs[j];
      const bool running = s.state(j) == JobState::Running && !s.terminating(j);
      const bool pending = s.state(j) == JobState::Pending && !held_[j];
      if (!whole(job) || (!running && !pending) || (running && pool_[j] == kNoPool)) continue;
      if (job.gpus > left) continue;
      left -= job.gpus;
      selected.push_back(j);
    }
    // (2) Assignment by comparative advantage.
    std::vector<double> advantage(selected.size());
    std::vector<std::size_t> by_advantage(selected.size());
    for (std::size_t i = 0; i < selected.size(); ++i) {
      by_advantage[i] = i;
      double lo = 0, hi = 0;
      bool any = false;
      for (PoolId p : pools_by_speed(s, selected[i])) {
        const double x = norm(s, selected[i], p);
        lo = any ? std::min(lo, x) : x;
        hi = any ? std::max(hi, x) : x;
        any = true;
      }
      advantage[i] = any && lo > 0 ? hi / lo : 1.0;
    }
    std::stable_sort(by_advantage.begin(), by_advantage.end(),
                     [&](std::size_t a, std::size_t b) { return advantage[a] > advantage[b]; });
    for (std::size_t i : by_advantage) {
      const JobIndex j = selected[i];
      for (PoolId p : pools_by_speed(s, j)) {
        if (room[p] < jobs[j].gpus) continue;
        room[p] -= jobs[j].gpus;
        plan_[j] = p;
        break;
      }
    }
    // (3) Running jobs off the plan, or planned elsewhere, stop with a checkpoint.
    for (JobIndex j : order) {
      if (s.state(j) != JobState::Running || s.terminating(j) || pool_[j] == kNoPool) continue;
      const auto it = plan_.find(j);
      if (it != plan_.end() && it->second == pool_[j]) continue;
      const char* why = it == plan_.end() ? "gavel: round over, not selected for the next round"
                                          : "gavel: round over, moved to a faster GPU type";
      if (s.preempt(j, PreemptMode::Checkpoint, 0, models::kNoJob, why, cfg_.overhead).empty()) evicting_.insert(j);
    }
  }

  void start(Session& s, JobIndex j, PoolId pool, const models::Placement& p, std::string_view why) {
    if (!s.start(j, p, why).empty()) return;
    pool_[j] = pool == kNoPool ? s.cluster().node(p.front().node).pool : pool;
    started_[j] = s.now();
    if (!whole(s.workload().jobs[j])) pool_[j] = kNoPool;  // never preempted, not accounted
  }

  Config cfg_;
  Tick next_round_ = 0;
  std::set<JobIndex> alive_, evicting_;
  std::vector<JobIndex> fresh_;
  std::map<JobIndex, PoolId> plan_;
  std::vector<bool> held_;
  std::vector<PoolId> pool_;
  std::vector<Tick> started_;
  std::vector<double> attained_, prop_;
};

}  // namespace

std::vector<std::string> param_keys() { return {"round", "checkpoint_overhead"}; }

void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<Config>(params, errors, parse);
}

std::unique_ptr<Policy> make_policy(const PolicyParams& params) {
  return std::make_unique<GavelPolicy>(parse_params_or_throw<Config>(params, parse));
}

}  // namespace headroom::policies::gavel
