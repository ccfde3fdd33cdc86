#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "models/cluster.hpp"
#include "models/observer.hpp"
#include "models/workload.hpp"
#include "results/run_result.hpp"

namespace headroom::results {

// Builds a RunResult from what the simulation reports. One Recorder per run.
class Recorder : public models::SimObserver {
 public:
  Recorder(const models::Workload& workload, const models::ClusterSpec& cluster, bool record_events = true);

  void on_event(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                std::string_view reason) override;
  void on_lost_work(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                    std::string_view reason, std::int64_t lost_gpu_ms) override;
  void on_start(Tick time, models::JobIndex job, const models::Placement& placement) override;
  void on_end(Tick time, models::JobIndex job, models::JobState state) override;
  void on_sample(const models::Sample& sample) override;
  void on_bound(Tick time, models::JobIndex job, std::int32_t gpus) override;

  // From now on, every chunk of the result file whose rows are complete (the trace's job
  // columns at once; audit log, placement and sample rows as they fill up) is deflated on a
  // thread of its own while the run goes on, for write_hdf5 to take; it reads the rows in place.
  // Call it when the result will be written.
  void stream_chunks();
  // Waits until the chunks offered so far are filtered (they are read in place): call it before
  // the result is copied, changed or freed.
  void finish_streaming();

  // The collected tables; the caller fills in the root attributes (scenario, seed, ...).
  RunResult& result() { return result_; }

 private:
  std::uint32_t reason_id(std::string_view reason);
  // Ends the /placements rows of the job's current run at `time`.
  void close_placement(models::JobIndex job, Tick time);
  // Recovery per outage (RunResult::outages, kills): the outage row an event belongs to, and
  // the bookkeeping of node_down, node_up, drill and kill events.
  std::uint32_t outage_row(Tick time, std::string_view reason);
  void track_outage(Tick time, models::AuditKind kind, models::JobIndex job, std::int32_t detail,
                    std::string_view reason, std::int64_t lost_gpu_ms);
  // Adds the GPU time a job's bound pods held until `time` to RunResult::bound_idle_gpu_ms and,
  // while the job awaits its restart after a kill, to that kill row (partial).
  void settle_bound(models::JobIndex job, Tick time);
  // Before appending n rows to one of the result's tables: when streaming and the table would
  // move to grow, waits for the chunk thread (it reads offered chunks in place).
  template <class T>
  void make_room(const std::vector<T>& table, std::size_t n);
  // stream_chunks: offers the chunks the last appended row completed.
  void offer_event_chunks();
  void offer_placement_chunks();
  void offer_sample_chunks();

  const models::ClusterSpec& cluster_;
  bool record_events_;
  std::vector<std::int32_t> node_pool_;
  RunResult result_;
  // Reason text -> its id (ids are given in order of first use, so the index's own order does not
  // matter): an open-addressing table of (hash, id), the text compared in result_.reasons on a
  // hash match. Runs with bound pods record hundreds of thousands of distinct reasons (each names
  // its pod, node and GPUs held); a slot is one cache line's eighth, not a heap node and a string.
  struct ReasonSlot {
    std::uint64_t hash = 0;
    std::uint32_t id = 0;  // 0: empty (the empty reason is never looked up)
  };
  std::vector<ReasonSlot> reason_slots_;  // a power of two, at most half full
  std::size_t reason_slots_used_ = 0;
  // The reasons reason_id found last, with their ids (0: none), replaced in turn: runs repeat a
  // few reasons, often two in alternation (a pod bound, then unbound).
  struct RecentReason {
    std::string text;
    std::uint32_t id = 0;
  };
  std::array<RecentReason, 4> recent_reasons_;
  std::size_t recent_next_ = 0;
  std::vector<std::size_t> open_from_;      // by job: 1 + the first /placements row of its current run, 0 = none
  std::vector<std::int64_t> open_preempt_;  // per job: its last preempt row not yet taken effect, or -1
  std::vector<Tick> killed_at_;             // per job: when a node failure last killed it, or -1
  Tick submit_span_ = 0;                    // last submit - first: sizes the time series on the second sample
  // Recovery per outage: by job, its kill row awaiting a restart (-1 none); by node, the outage
  // row of its current down time (-1 none); by outage row, its nodes still down.
  std::vector<std::int64_t> open_kill_;
  std::vector<std::int64_t> node_outage_;
  std::vector<std::int32_t> outage_down_;
  // Every pending job's pods bound ahead of its start (GPUs held, since when), settled by
  // settle_bound when the job starts, unbinds or ends.
  std::unordered_map<models::JobIndex, std::pair<std::int32_t, Tick>> bound_;
};

}  // namespace headroom::results
