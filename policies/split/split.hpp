#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "models/workload.hpp"
#include "policies/api.hpp"

// One site split between several systems (docs/split.md): each system owns a partition of the
// nodes (whole pools or a number of nodes of a pool) and the jobs its routes send it, and runs its
// own policy on them. SplitPolicy is a Policy like any other to the engine; to each system's policy
// it gives a view of its partition alone (its own nodes numbered from 0, its own jobs numbered
// from 0), so a policy never learns that it shares the site. Nothing here names a system.
namespace headroom::policies::split {

// `split.systems.NAME.pools[i]`: a pool, all of it (nodes = -1) or a number of its nodes.
struct PoolShare {
  std::string pool;
  std::int32_t nodes = -1;
  int line = 0, column = 0;
};

// `split.systems.NAME`: the system's partition and the policy it runs (by default its name).
struct System {
  std::string name;
  std::string policy;
  PolicyParams params;  // the `policies.<policy>` block, else `policy:` when it names this policy
  std::vector<PoolShare> pools;
  int line = 0, column = 0;
};

// `split.routes[i]`: jobs matching every key given go to system `to`. The first match wins.
struct Route {
  bool has_kind = false;
  models::JobKind kind = models::JobKind::Batch;
  std::string tenant, queue;  // empty: any
  std::string to;
  int line = 0, column = 0;
};

struct SplitSpec {
  std::vector<System> systems;
  std::vector<Route> routes;
  std::string default_to;  // empty: none (a job no route matches is an error)
  std::string file;
  int line = 0, column = 0;  // the `split:` key
  bool declared() const { return !systems.empty(); }
};

// The site cut by system. The engine runs `whole`: every system's pools one after another (in
// the order of `systems`), each named "pool@system", so partition s holds the nodes
// [first_node[s], first_node[s] + node_count[s]) and the pools [first_pool[s], first_pool[s] +
// parts[s].pools.size()). parts[s] is what system s's policy sees: its pools under their own names.
struct Partitioning {
  std::vector<models::ClusterSpec> parts;
  models::ClusterSpec whole;
  std::vector<models::NodeId> first_node;
  std::vector<std::int32_t> node_count;
  std::vector<models::PoolId> first_pool;
};

// Requires a validated spec (scenarios/ checks every share against the cluster).
Partitioning partition_cluster(const SplitSpec& spec, const models::ClusterSpec& cluster);
// Throws sim::InputError when the spec no longer gives every node of `cluster` to exactly one
// system (a sweep or plan variant changed a pool's node count but not the split's).
void check_partitions(const SplitSpec& spec, const models::ClusterSpec& cluster);

// The system each job goes to (index into spec.systems). Throws sim::InputError naming the job
// (its trace id, file, tenant, queue and kind) when no route matches and there is no default.
std::vector<std::uint32_t> route_jobs(const SplitSpec& spec, const models::Workload& workload);

// At most this many waiting jobs of the other systems, oldest first, are tried against one
// system's idle GPUs when the boundary cost is measured (docs/split.md).
inline constexpr std::size_t kBoundaryScan = 256;

class SplitPolicy final : public Policy {
 public:
  // `policies[s]` runs partition s of `parts`; `route[j]` is job j's system (route_jobs).
  SplitPolicy(std::vector<std::unique_ptr<Policy>> policies, Partitioning parts, const models::Workload& workload,
              std::vector<std::uint32_t> route);
  ~SplitPolicy() override;

  std::string_view name() const override { return "split"; }
  void on_submit(const ClusterView& view, JobIndex job) override;
  void on_end(const ClusterView& view, JobIndex job) override;
  void on_withdraw(const ClusterView& view, JobIndex job) override;
  void on_requeue(const ClusterView& view, JobIndex job) override;
  void on_release(const ClusterView& view, JobIndex job) override;
  void schedule(Session& session) override;
  models::ClusterSpec advertised_cluster(const models::ClusterSpec& spec) const override;
  Denial deny(const models::Workload& w, const models::Job& job) const override;

  // The cost of the boundary, per system: GPU-milliseconds of this system's idle GPUs that the
  // other systems' waiting jobs would have used (docs/split.md, "The cost of the boundary"),
  // counted up to the last scheduling pass or to `finish`'s time.
  const std::vector<std::int64_t>& boundary_idle_gpu_ms() const { return boundary_ms_; }
  // Counts the boundary cost on until `end` (the end of the run).
  void finish(Tick end);
  // Scheduling passes each system's policy was given (it is given one only when something of its
  // own changed or a wake-up it asked for is due).
  const std::vector<std::uint64_t>& passes() const { return passes_; }

 private:
  class Part;
  Part& part_of(JobIndex job, const ClusterView& view);
  void sync_nodes(const ClusterView& view);
  void measure_boundary(Tick now);

  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<std::uint32_t> route_;  // by global job
  std::vector<JobIndex> local_;       // by global job: its index in its system's workload
  models::ClusterSpec whole_;
  std::uint64_t up_changes_ = 0;
  std::vector<std::int64_t> boundary_ms_;
  std::vector<std::int64_t> boundary_now_;  // idle GPUs per system the others' backlog would use, since boundary_at_
  Tick boundary_at_ = 0;
  std::vector<std::uint64_t> passes_;
  // measure_boundary's scratch, kept between passes.
  std::vector<std::vector<std::int32_t>> scratch_free_;
  std::vector<std::int32_t> scratch_pods_;
  std::vector<std::pair<models::PoolId, std::int32_t>> scratch_undo_;
};

}  // namespace headroom::policies::split
