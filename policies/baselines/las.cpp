#include "policies/baselines/las.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "policies/common/consolidate.hpp"
#include "policies/common/params.hpp"
#include "policies/baselines/srtf.hpp"

namespace headroom::policies {

using models::JobState;

namespace {

struct LasConfig {
  std::vector<std::int64_t> limits_gpu_ms = {3250 * sim::kSecond};  // thresholds in GPU-milliseconds
  double promote_knob = 0;
  CheckpointOverhead overhead;
};

std::optional<double> parse_number(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<sim::InputError> parse_las(const PolicyParams& params, LasConfig& out) {
  std::vector<sim::InputError> errors;
  check_checkpoint_overhead(params, errors);
  out.overhead = parse_checkpoint_overhead(params);
  if (auto it = params.find("queue_limit"); it != params.end()) {
    const ParamValue& v = it->second;
    std::vector<std::int64_t> limits;
    std::string_view text = v.text;
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
    bool ok = true;
    while (ok) {
      const auto comma = text.find(',');
      const auto n = parse_number(text.substr(0, comma));
      if (!n || *n <= 0 || *n > 1e12 || (!limits.empty() && *n * 1000 <= static_cast<double>(limits.back()))) {
        ok = false;
        break;
      }
      limits.push_back(static_cast<std::int64_t>(std::llround(*n * 1000)));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
    if (!ok) {
      errors.emplace_back(v.file, v.line, v.column, "policy.queue_limit",
                          "expected increasing positive GPU-second thresholds such as \"3250\" or \"3250,7200\", "
                          "got \"" +
                              v.text + "\"");
    } else {
      out.limits_gpu_ms = std::move(limits);
    }
  }
  if (auto it = params.find("promote_knob"); it != params.end()) {
    const auto n = parse_number(it->second.text);
    if (!n || *n < 0 || *n > 1e6) {
      errors.emplace_back(it->second.file, it->second.line, it->second.column, "policy.promote_knob",
                          "expected a number >= 0 (0 = no promotion), got \"" + it->second.text + "\"");
    } else {
      out.promote_knob = *n;
    }
  }
  return errors;
}

class LasPolicy final : public Policy {
 public:
  explicit LasPolicy(LasConfig cfg) : cfg_(std::move(cfg)), queues_(cfg_.limits_gpu_ms.size() + 1) {}
  std::string_view name() const override { return "las"; }

  void on_submit(const ClusterView& view, JobIndex j) override {
    ensure(view);
    Acct& a = acct_[j];
    a.last_check = view.now();
    a.queue = 0;
    alive_.insert(j);
    fresh_.push_back(j);
    queues_[0].push_back(j);
  }
  void on_requeue(const ClusterView& view, JobIndex) override { ensure(view); }
  void on_end(const ClusterView& view, JobIndex j) override {
    ensure(view);
    alive_.erase(j);
    auto& q = queues_[acct_[j].queue];
    q.erase(std::find(q.begin(), q.end(), j));
  }

  void schedule(Session& s) override {
    ensure(s);
    const auto& jobs = s.workload().jobs;
    for (JobIndex j : fresh_)
      if (s.state(j) == JobState::Pending)
        if (auto why = never_fits(s.cluster(), jobs[j], s.workload())) s.reject(j, *why);  // on_end drops it
    fresh_.clear();
    const Tick now = s.now();
    const std::size_t last = queues_.size() - 1;
    // Accounting since the last pass, demotion and promotion (in arrival order, as the simulator
    // walks its runnable jobs).
    for (JobIndex j : alive_) {
      Acct& a = acct_[j];
      const Tick delta = now - a.last_check;
      a.last_check = now;
      if (s.state(j) == JobState::Running) {
        a.executed += delta;
        a.total += delta;
        std::size_t q = a.queue;
        while (q < last && a.executed * jobs[j].gpus >= cfg_.limits_gpu_ms[q]) ++q;
        if (q != a.queue) move(j, q);
      } else {
        if (a.executed > 0) a.last_pending += delta;
        if (cfg_.promote_knob > 0 && a.queue > 0 && a.total > 0 && a.executed > 0 &&
            a.last_pending >= starve_limit(a)) {
          a.executed = 0;
          a.last_pending = 0;
          move(j, 0);
        }
      }
    }
    order_.clear();
    for (const auto& q : queues_) order_.insert(order_.end(), q.begin(), q.end());
    const GreedyOutcome out = greedy_pass(s, order_, cfg_.overhead, "las");
    // Running jobs first in each queue, then pending ones (a job being preempted counts as pending).
    preempted_.assign(out.preempted.begin(), out.preempted.end());
    std::sort(preempted_.begin(), preempted_.end());
    auto runs = [&](JobIndex j) {
      return s.state(j) == JobState::Running && !std::binary_search(preempted_.begin(), preempted_.end(), j);
    };
    for (auto& q : queues_) std::stable_partition(q.begin(), q.end(), runs);
    // Wake at the next demotion or promotion.
    Tick next = sim::kNever;
    for (JobIndex j : alive_) {
      const Acct& a = acct_[j];
      const std::int64_t g = jobs[j].gpus;
      if (runs(j)) {
        if (a.queue < last && g > 0 && !s.terminating(j)) {
          const std::int64_t left = cfg_.limits_gpu_ms[a.queue] - a.executed * g;
          next = std::min(next, now + (left + g - 1) / g);
        }
      } else if (cfg_.promote_knob > 0 && a.queue > 0 && a.total > 0 && a.executed > 0) {
        const Tick wait = starve_limit(a) - a.last_pending;
        if (wait > 0) next = std::min(next, now + wait);
      }
    }
    if (next != sim::kNever) s.wake_at(next);
  }

 private:
  struct Acct {
    std::size_t queue = 0;
    Tick last_check = 0;
    Tick executed = 0;      // run time since it last entered Q0 (the simulator's executed_time)
    Tick total = 0;         // run time in all
    Tick last_pending = 0;  // waiting time since it last entered Q0, counted once it has run
  };

  Tick starve_limit(const Acct& a) const {
    return static_cast<Tick>(static_cast<double>(a.executed) * cfg_.promote_knob);
  }

  void move(JobIndex j, std::size_t to) {
    auto& from = queues_[acct_[j].queue];
    from.erase(std::find(from.begin(), from.end(), j));
    acct_[j].queue = to;
    queues_[to].push_back(j);
  }

  void ensure(const ClusterView& view) {
    if (acct_.empty()) acct_.resize(view.workload().jobs.size());
  }

  LasConfig cfg_;
  std::vector<std::vector<JobIndex>> queues_;
  std::vector<Acct> acct_;
  std::set<JobIndex> alive_;
  std::vector<JobIndex> fresh_, order_, preempted_;
};

}  // namespace

void check_las_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  collect_param_errors<LasConfig>(params, errors, parse_las);
}

std::unique_ptr<Policy> make_las_policy(const PolicyParams& params) {
  return std::make_unique<LasPolicy>(parse_params_or_throw<LasConfig>(params, parse_las));
}

}  // namespace headroom::policies
