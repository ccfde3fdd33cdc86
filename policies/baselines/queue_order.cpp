#include "policies/baselines/queue_order.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "policies/common/consolidate.hpp"

namespace headroom::policies {

namespace {

// Pending jobs ordered by (key, arrival sequence).
class OrderedQueue {
 public:
  explicit OrderedQueue(QueueKey key) : key_(key) {}
  void push(const models::Job& job, JobIndex idx) {
    const std::int64_t k = key_ == QueueKey::Submit ? job.submit : job.runtime;
    heap_.push_back(Entry{k, seq_++, idx});
    std::push_heap(heap_.begin(), heap_.end(), After{});
  }
  bool empty() const { return heap_.empty(); }
  JobIndex front() const { return heap_.front().job; }
  void pop_front() {
    std::pop_heap(heap_.begin(), heap_.end(), After{});
    heap_.pop_back();
  }

 private:
  struct Entry {
    std::int64_t key;
    std::uint64_t seq;
    JobIndex job;
  };
  // A min-heap on (key, seq): the keys are distinct, so it pops in the order a sorted set would.
  struct After {
    bool operator()(const Entry& a, const Entry& b) const { return a.key != b.key ? a.key > b.key : a.seq > b.seq; }
  };
  QueueKey key_;
  std::uint64_t seq_ = 0;
  std::vector<Entry> heap_;
};

class QueuePolicy final : public Policy {
 public:
  explicit QueuePolicy(QueueKey key) : key_(key), queue_(key) {}

  std::string_view name() const override { return key_ == QueueKey::Submit ? "fifo" : "sjf"; }

  void on_submit(const ClusterView& view, JobIndex job) override {
    queue_.push(view.workload().jobs[job], job);
    fresh_.push_back(job);
  }
  void on_release(const ClusterView& view, JobIndex job) override {
    (void)view, (void)job;
    ++releases_;
  }

  void schedule(Session& session) override {
    const auto& jobs = session.workload().jobs;
    const models::ClusterState& cluster = session.cluster();
    while (!queue_.empty()) {
      const JobIndex head = queue_.front();
      if (session.state(head) != models::JobState::Pending) {  // withdrawn while queued
        queue_.pop_front();
        continue;
      }
      // Taking GPUs never makes a placement fit: a head that did not fit still does not while no
      // job has released GPUs and no node has come up (or gone down) since.
      if (head == blocked_.job && releases_ == blocked_.releases && cluster.up_changes() == blocked_.up_changes) break;
      const models::Job& job = jobs[head];
      if (auto placement = consolidate_placement(cluster, job, session.workload())) {
        queue_.pop_front();
        const std::string why = session.start(head, std::move(*placement), "consolidate");
        HEADROOM_ASSERT(why.empty(), "consolidate produced an invalid placement: " + why);
        continue;
      }
      if (auto why = never_fits(cluster, job, session.workload())) {
        queue_.pop_front();
        session.reject(head, *why);
        continue;
      }
      session.pending_reason(head, "head of line: waiting for free GPUs");
      blocked_ = Blocked{head, releases_, cluster.up_changes()};
      break;
    }
    // Jobs that arrived behind a blocked head wait for it (strict order, no backfill). Said once
    // per job, naming the head it first queued behind; the head itself says why it waits.
    if (blocked_.job != models::kNoJob && session.state(blocked_.job) == models::JobState::Pending) {
      const std::string why = "priority: queued behind job " + std::to_string(jobs[blocked_.job].trace_id) +
                              ", the head of line (strict order, no backfill)";
      for (JobIndex j : fresh_)
        if (j != blocked_.job && session.state(j) == models::JobState::Pending) session.pending_reason(j, why);
    }
    fresh_.clear();
  }

 private:
  QueueKey key_;
  OrderedQueue queue_;
  std::uint64_t releases_ = 0;   // jobs that released their resources (on_release)
  std::vector<JobIndex> fresh_;  // submitted since the last pass
  // The head that found no placement, with releases_ and the cluster's up_changes() then.
  struct Blocked {
    JobIndex job = models::kNoJob;
    std::uint64_t releases = 0;
    std::uint64_t up_changes = 0;
  };
  Blocked blocked_;
};

}  // namespace

std::unique_ptr<Policy> make_queue_policy(QueueKey key) { return std::make_unique<QueuePolicy>(key); }

}  // namespace headroom::policies
