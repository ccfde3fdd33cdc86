#include "policies/baselines/easy.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "policies/common/consolidate.hpp"

namespace headroom::policies {

namespace {

struct Limits {
  std::int64_t jobs = 0, gpus = 0;  // 0 = none
};

struct Config {
  bool easy = false;
  Limits all;
  std::map<std::string, Limits, std::less<>> users;
};

bool parse_count(const std::string& text, std::int64_t& v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && v >= 0;
}

std::vector<sim::InputError> parse_into(const PolicyParams& params, Config& c) {
  std::vector<sim::InputError> errors;
  const auto bad = [&](const ParamValue& v, const std::string& key, const std::string& what) {
    errors.emplace_back(v.file, v.line, v.column, "policy." + key, what + ", got \"" + v.text + "\"");
  };
  for (const auto& [key, v] : params) {
    if (key == "backfill") {
      if (v.text == "easy")
        c.easy = true;
      else if (v.text != "none")
        bad(v, key, "expected easy or none");
      continue;
    }
    std::int64_t* target = nullptr;
    Limits* user = nullptr;
    if (key.starts_with("users.")) {
      const auto dot = key.rfind('.');
      user = &c.users[key.substr(6, dot - 6)];
    }
    if (key == "MaxJobsPerUser") target = &c.all.jobs;
    if (key == "MaxGPUsPerUser") target = &c.all.gpus;
    if (user != nullptr && key.ends_with(".MaxJobs")) target = &user->jobs;
    if (user != nullptr && key.ends_with(".MaxGPUs")) target = &user->gpus;
    if (target == nullptr) continue;
    if (!parse_count(v.text, *target)) bad(v, key, "expected a count >= 0 (0 = no limit)");
  }
  return errors;
}

class EasyPolicy final : public Policy {
 public:
  explicit EasyPolicy(Config config) : config_(std::move(config)) {}

  std::string_view name() const override { return "fifo"; }

  void on_submit(const ClusterView& view, JobIndex job) override {
    (void)view;
    queue_.push_back(job);
    changed_ = true;
  }
  void on_release(const ClusterView& view, JobIndex job) override {
    const auto it = std::find(running_.begin(), running_.end(), job);
    if (it == running_.end()) return;
    running_.erase(it);
    const models::Job& j = view.workload().jobs[job];
    auto& u = use_[j.tenant];
    u.jobs -= 1;
    u.gpus -= j.gpus;
    changed_ = true;
  }

  void schedule(Session& session) override {
    const models::ClusterState& cluster = session.cluster();
    if (!changed_ && cluster.up_changes() == up_changes_) return;
    changed_ = false;
    up_changes_ = cluster.up_changes();
    const auto& w = session.workload();
    const Tick now = session.now();
    JobIndex head = models::kNoJob;
    Tick shadow = 0;
    std::int64_t extra = 0;
    std::size_t keep = 0;
    for (std::size_t i = 0; i < queue_.size(); ++i) {
      const JobIndex idx = queue_[i];
      if (session.state(idx) != models::JobState::Pending) continue;  // withdrawn
      const models::Job& job = w.jobs[idx];
      if (const char* why = over_limit(w, job)) {
        session.pending_reason(idx, why);
        queue_[keep++] = idx;
        continue;
      }
      if (head != models::kNoJob && !config_.easy) {
        queue_[keep++] = idx;
        continue;
      }
      const bool backfilling = head != models::kNoJob;
      if (backfilling && cluster.free_gpus() == 0) {
        queue_[keep++] = idx;
        continue;
      }
      if (backfilling && !(now + estimate(job) <= shadow || job.gpus <= extra)) {
        queue_[keep++] = idx;
        continue;
      }
      if (auto placement = consolidate_placement(cluster, job, w)) {
        if (backfilling && now + estimate(job) > shadow) extra -= job.gpus;
        const std::string why =
            session.start(idx, std::move(*placement), backfilling ? "EASY backfill" : "consolidate");
        HEADROOM_ASSERT(why.empty(), "consolidate produced an invalid placement: " + why);
        running_.push_back(idx);
        auto& u = use_[job.tenant];
        u.jobs += 1;
        u.gpus += job.gpus;
        continue;
      }
      if (auto why = never_fits(cluster, job, w)) {
        session.reject(idx, *why);
        continue;
      }
      queue_[keep++] = idx;
      if (!backfilling) {
        head = idx;
        session.pending_reason(idx, config_.easy ? "head of line: reserved at the shadow time (EASY)"
                                                 : "head of line: waiting for free GPUs");
        if (config_.easy) reserve(session, job, shadow, extra);
      }
    }
    queue_.resize(keep);
  }

 private:
  Tick estimate(const models::Job& j) const { return j.walltime > 0 ? j.walltime : j.runtime; }

  // The head's shadow time and the GPUs free then beyond its need.
  void reserve(const Session& session, const models::Job& head, Tick& shadow, std::int64_t& extra) const {
    const auto& w = session.workload();
    std::vector<std::pair<Tick, std::int64_t>> ends;
    ends.reserve(running_.size());
    for (JobIndex r : running_)
      ends.emplace_back(std::max(session.now(), session.run_start(r) + estimate(w.jobs[r])), w.jobs[r].gpus);
    std::sort(ends.begin(), ends.end());
    std::int64_t free = session.cluster().free_gpus();
    shadow = session.now();
    for (const auto& [t, g] : ends) {
      if (free >= head.gpus) break;
      free += g;
      shadow = t;
    }
    if (free < head.gpus) shadow = sim::kNever;  // down nodes: no end frees enough
    extra = std::max<std::int64_t>(0, free - head.gpus);
  }

  const char* over_limit(const models::Workload& w, const models::Job& job) {
    Limits lim = config_.all;
    if (!config_.users.empty()) {
      const auto it = config_.users.find(w.tenants.name(job.tenant));
      if (it != config_.users.end()) {
        if (it->second.jobs > 0) lim.jobs = it->second.jobs;
        if (it->second.gpus > 0) lim.gpus = it->second.gpus;
      }
    }
    if (lim.jobs == 0 && lim.gpus == 0) return nullptr;
    const auto u = use_.find(job.tenant);
    const Use use = u == use_.end() ? Use{} : u->second;
    if (lim.jobs > 0 && use.jobs + 1 > lim.jobs) return "QOSMaxJobsPerUserLimit: the user runs its most jobs at once";
    // A job larger than the limit alone could never start: it may run when the user runs nothing.
    if (lim.gpus > 0 && use.gpus + job.gpus > lim.gpus && use.jobs > 0)
      return "QOSMaxGRESPerUser: the user holds its most GPUs at once";
    return nullptr;
  }

  struct Use {
    std::int64_t jobs = 0, gpus = 0;
  };
  Config config_;
  std::vector<JobIndex> queue_;    // pending, in submit order
  std::vector<JobIndex> running_;  // in start order
  std::map<std::uint32_t, Use> use_;
  bool changed_ = true;
  std::uint64_t up_changes_ = 0;
};

}  // namespace

const std::vector<std::string>& easy_param_keys() {
  static const std::vector<std::string> kKeys = {"backfill", "MaxJobsPerUser", "MaxGPUsPerUser", "users.<name>.MaxJobs",
                                                 "users.<name>.MaxGPUs"};
  return kKeys;
}

bool wants_easy(const PolicyParams& params) {
  for (const auto& [key, v] : params)
    if (key != "placement") return true;
  return false;
}

void check_easy_params(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  Config c;
  for (auto& e : parse_into(params, c)) errors.push_back(std::move(e));
}

std::unique_ptr<Policy> make_easy_policy(const PolicyParams& params) {
  Config c;
  auto errors = parse_into(params, c);
  if (!errors.empty()) throw errors.front();
  return std::make_unique<EasyPolicy>(std::move(c));
}

}  // namespace headroom::policies
