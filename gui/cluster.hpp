#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "results/run_result.hpp"

namespace headroom::gui {

using results::Tick;
struct ReplayData;

// Why a pending job waits: the codes of the `waiting` audit events' detail and of
// timeseries.pending_by_reason's columns (models::PendingCode; gui sees results only, so the
// names are repeated here).
inline constexpr int kPendingCodes = 9;
inline constexpr std::uint8_t kWaitingEvent = 14;  // models::AuditKind::Waiting (after the drill kinds)
QString pending_code_name(int code);

// Who holds what at any time, from /placements: per node, the slices that ran on it sorted by
// start, so that the cluster at time t costs one binary search per node plus the slices open at t.
struct ClusterIndex {
  struct Slice {
    Tick start = 0;
    Tick end = 0;  // exclusive; the end of the run when /placements says -1
    std::uint32_t job = 0;
    std::int32_t gpus = 0;
  };
  std::int32_t nodes = 0;
  std::vector<std::int32_t> node_pool;        // by node
  std::vector<std::int32_t> node_gpus;        // by node: GPUs it has
  std::vector<std::int32_t> pool_first_node;  // by pool
  std::vector<std::uint32_t> slice_offset;    // node n's slices: slices[slice_offset[n] .. slice_offset[n + 1])
  std::vector<Slice> slices;
  std::vector<Tick> longest;  // by node: the longest slice, to bound the backward scan
  // Every run of every job: job j's runs are runs[run_offset[j] .. run_offset[j + 1]), by start.
  std::vector<std::uint32_t> run_offset;
  std::vector<std::pair<Tick, Tick>> runs;  // [start, end)
  bool from_placements = false;             // false: rebuilt from /jobs (first start to end)

  bool empty() const { return nodes == 0; }
};

// Builds the index; `horizon` closes slices still open at the end (end -1).
ClusterIndex build_cluster_index(const results::RunResult& r);

// The cluster at one instant: for every node, the jobs on it (by start, then job) and their GPUs.
struct Occupancy {
  Tick time = 0;
  struct Use {
    std::uint32_t job = 0;
    std::int32_t gpus = 0;
  };
  std::vector<std::uint32_t> offset;  // node n: uses[offset[n] .. offset[n + 1])
  std::vector<Use> uses;
  std::vector<std::int32_t> used;  // by node: GPUs in use (capped at the node's GPUs)
  // Every node is counted once: in service it is full, partly used or idle; out of service (down,
  // or cordoned for maintenance) it is draining while jobs still run on it, else out. down_gpus
  // are the GPUs neither in use nor placeable (an out node's GPUs, a draining node's free ones):
  // /timeseries' GPUs down (total - used - free) at the same instant.
  std::int64_t used_gpus = 0, partial_nodes = 0, idle_nodes = 0, full_nodes = 0;
  std::int64_t draining_nodes = 0, out_nodes = 0, down_gpus = 0;
};

// Running at `t` means start <= t < end. `out`: per node, nonzero while out of service at t
// (nodes_out_at); empty: every node in service.
Occupancy occupancy_at(const ClusterIndex& index, Tick t, const std::vector<std::uint8_t>& out = {});

// A split site (docs/split.md): by node, the row of /partitions that owns it at t (its home
// partition, changed by the /moves whose owner change is at or before t); empty when the run
// did not split the site.
std::vector<std::int32_t> node_owner_at(const results::RunResult& r, std::int32_t nodes, Tick t);

// Whether job j runs at t (from its runs in the index).
bool running_at(const ClusterIndex& index, std::uint32_t job, Tick t);

// One pending job at an instant and why it waits.
struct QueueEntry {
  std::uint32_t job = 0;
  Tick since = 0;            // submit, or the end of its last run (requeued after a preemption or failure)
  int code = 0;              // PendingCode in force at the instant (0 when none was given)
  std::uint32_t reason = 0;  // index into RunResult::reasons
};

// Pending at t: submitted at or before t, not ended at or before t and not running at t. Ordered
// by `since`, then job: the longest wait first.
std::vector<QueueEntry> queue_at(const ReplayData& d, Tick t);

// The queue at the time cursor.
class QueueModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Job, Tenant, Gpus, Waiting, Why, Reason, Columns };
  explicit QueueModel(QObject* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  void set_time(Tick t);  // absolute ticks
  const std::vector<QueueEntry>& entries() const { return rows_; }
  int job_at(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const ReplayData> data_;
  Tick time_ = 0;
  std::vector<QueueEntry> rows_;
};

}  // namespace headroom::gui
