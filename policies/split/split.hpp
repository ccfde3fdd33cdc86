#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "models/failures.hpp"
#include "models/job.hpp"
#include "models/topology.hpp"
#include "models/workload.hpp"
#include "policies/api.hpp"
#include "sim/time.hpp"

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

// `split.moves[i]`: nodes handed from one system to another (docs/split.md, "Moving nodes").
// Scheduled (`at:`): at each occurrence `nodes` nodes of `from` are drained (they take no new work;
// running jobs finish, or are preempted with `grace` once `drain_deadline` has passed), change
// owner when empty, and join `to` after `delay`. On demand (`when: idle`): after a scheduling pass,
// when `from` has whole idle nodes and `to` waiting jobs that would fill at least `threshold` of
// them, up to `nodes` idle nodes move at once (no drain needed), each kept by its new owner at
// least `hold` before a rule on demand may move it again.
struct Move {
  bool on_demand = false;
  // Scheduled: the first occurrence `at` after the run start (first submit), then every `every`
  // (0: once). daily_at >= 0: every day at that time of day (ms after midnight UTC of the
  // trace's calendar, or of the simulation clock when the trace gives no date).
  sim::Tick at = 0, every = 0, daily_at = -1;
  std::int32_t nodes = 0;
  std::string pool;  // empty: nodes of any pool
  std::string from, to;
  sim::Tick drain_deadline = -1;  // -1: wait for the running jobs to finish
  sim::Tick grace = 30 * sim::kSecond;
  sim::Tick delay = 0;
  std::int32_t threshold = 1;  // on demand
  sim::Tick hold = 0;          // on demand
  int line = 0, column = 0;
};

// How jobs reach the systems (clusters): by `routes` before the run, or by a dispatcher at submit
// (docs/split.md, "Several clusters, one front door").
enum class Dispatch : std::uint8_t {
  Routes,
  // Kueue's MultiKueue (AllAtOnce dispatcher): a copy of the job in every eligible cluster; the
  // first cluster to admit (start, or bind a pod of) it wins; the other copies are removed. A job
  // its cluster's policy preempts is dispatched again to every eligible cluster when it is pending
  // again, where every cluster's policy takes copies back (Policy::supports_resubmit).
  MultiKueue,
  // Each job to the eligible cluster with the least backlog at its submit: the GPUs its waiting
  // jobs ask for less its free GPUs (the first declared among equals).
  LeastBacklog,
};

// The most clusters a dispatcher spreads jobs over (MultiKueue keeps a job's live copies as one bit
// per cluster); the scenario reader refuses more.
inline constexpr std::size_t kMaxDispatchClusters = 64;

struct SplitSpec {
  std::vector<System> systems;
  Dispatch dispatch = Dispatch::Routes;
  int dispatch_line = 0, dispatch_column = 0;
  std::vector<Route> routes;
  std::vector<Move> moves;
  std::string default_to;  // empty: none (a job no route matches is an error)
  std::string file;
  int line = 0, column = 0;  // the `split:` key
  bool declared() const { return !systems.empty(); }
};

// The site cut by system. The engine runs `whole`: every system's pools one after another (in
// the order of `systems`), each named "pool@system", so partition s holds the nodes
// [first_node[s], first_node[s] + node_count[s]) and the pools [first_pool[s], first_pool[s] +
// home_pools[s]) at the start (its home nodes). parts[s] is what system s's policy sees: its pools
// under their own names; with moves into s, each of its pools also holds a slot for every node of
// that pool that a move could bring it (the home nodes of the systems that move nodes to s), and
// pools it has no home node of come after its own. local_node[s][i] is the engine's node of
// slot i of parts[s]; local_pool[s][p] an engine pool of the same pool (same GPUs).
struct Partitioning {
  std::vector<models::ClusterSpec> parts;
  models::ClusterSpec whole;
  std::vector<models::NodeId> first_node;
  std::vector<std::int32_t> node_count;
  std::vector<models::PoolId> first_pool;
  std::vector<std::int32_t> home_pools;
  std::vector<std::vector<models::NodeId>> local_node;
  std::vector<std::vector<models::PoolId>> local_pool;
  std::vector<std::uint32_t> home;  // by engine node: the system that holds it at the start
  // By node of the scenario's cluster (its numbering: pools in order, "<pool>-<index>"): its
  // engine node. A pool is cut in node order, so pool P's first nodes go to the first share of it.
  std::vector<models::NodeId> engine_node;
  std::vector<models::PoolId> source_pool;  // by engine pool: its pool in the scenario's cluster
};

// Requires a validated spec (scenarios/ checks every share against the cluster). With `topology`
// (cluster.topology's spec, over the scenario's nodes), `whole` gets the site's fabric in the
// engine's numbering and each `parts[s]` the fabric of the nodes its view has (every switch, each
// leaf linking the view's nodes under it), with the site's link bandwidths: a switch's uplink and
// the reference bandwidth are the whole site's, not those of the nodes one system holds (docs/
// split.md, "The topology"). Throws sim::InputError at `split:` when one cannot be built.
Partitioning partition_cluster(const SplitSpec& spec, const models::ClusterSpec& cluster,
                               const models::TopologySpec* topology = nullptr);

// The engine's cluster: the pools of `parts.whole`, each as the system that holds it advertises
// it (advertised[s]: system s's policy's Policy::advertised_cluster of parts.parts[s]).
models::ClusterSpec engine_cluster(const Partitioning& parts, const std::vector<models::ClusterSpec>& advertised);
// The failure drill (failures:, models/failures.hpp) of the scenario's cluster, in the engine's
// numbering of the partitioned site (docs/split.md, "Failures and maintenance"): outages, racks
// and switches name the same physical nodes; random failures of a pool cover every engine pool cut
// from it, each node drawing from the stream of its name in the scenario ("failures/0/node/ricc-3"),
// so a seed fails the same nodes at the same instants as on the unsplit site; a maintenance window
// of a pool walks that pool's nodes in the scenario's order wherever they went.
models::FailureSpec map_failures(const models::FailureSpec& failures, const models::ClusterSpec& cluster,
                                 const Partitioning& parts);

// Throws sim::InputError when the spec no longer gives every node of `cluster` to exactly one
// system (a sweep or plan variant changed a pool's node count but not the split's).
void check_partitions(const SplitSpec& spec, const models::ClusterSpec& cluster);
// The load's warnings about the dispatcher: with MultiKueue, the clusters whose policy cannot take
// a withdrawn copy back (Policy::supports_resubmit: only kueue's can), so that a workload evicted
// on its worker stays there instead of being dispatched again. `line` is the dispatch key's.
std::vector<std::string> dispatch_warnings(const SplitSpec& spec, int line);

// The system each job goes to (index into spec.systems). Throws sim::InputError naming the job
// (its trace id, file, tenant, queue and kind) when no route matches and there is no default.
std::vector<std::uint32_t> route_jobs(const SplitSpec& spec, const models::Workload& workload);

// A split variant (`compare --policies split:slurm=0.7/kueue=0.3`, docs/split.md): every pool
// that two or more systems share is cut again by these shares (among the systems holding it, in
// declaration order, each rounded to nodes, the last holder taking the rest); pools one system
// holds alone stay as they are. `text` is the part after "split:". Throws sim::InputError naming
// `where` when a name is not a system ("did you mean"), a system is missing, a share is not a
// number in (0, 1], the shares do not add up to 1, or a system would be left with no node.
SplitSpec split_variant(const SplitSpec& spec, const models::ClusterSpec& cluster, std::string_view text,
                        const std::string& where);

// Throws sim::InputError at the move (file:line:col) when the scheduled moves, taken in time
// order from the first submit to the last, would leave a system with no node while jobs are
// routed to it, or ask a system for more nodes (of the move's pool) than it holds then.
void check_moves(const SplitSpec& spec, const Partitioning& parts, const std::vector<std::uint32_t>& route,
                 const models::Workload& workload);

// One node handed from one system to another (/moves of the result file).
struct MoveEvent {
  models::NodeId node = 0;  // the engine's node
  std::uint32_t from = 0, to = 0;
  std::int32_t rule = 0;  // index into SplitSpec::moves
  bool on_demand = false;
  std::int32_t gpus = 0;       // the node's GPUs
  Tick requested = 0;          // the drain began (on demand: the node was taken idle)
  Tick changed = -1;           // the node was empty and changed owner; -1: never
  Tick ready = -1;             // it joined `to` (after the move delay); -1: never
  std::int32_t preempted = 0;  // jobs preempted when the drain deadline passed
};

// At most this many waiting jobs of the other systems, oldest first, are tried against one
// system's idle GPUs when the boundary cost is measured (docs/split.md).
inline constexpr std::size_t kBoundaryScan = 256;

class SplitPolicy final : public Policy {
 public:
  // `policies[s]` runs partition s of `parts`; `route[j]` is job j's system (route_jobs).
  // `spec` gives the moves (none without it); it need not outlive the constructor.
  SplitPolicy(std::vector<std::unique_ptr<Policy>> policies, Partitioning parts, const models::Workload& workload,
              std::vector<std::uint32_t> route, const SplitSpec* spec = nullptr);
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
  // Every node move, in the order the moves began.
  const std::vector<MoveEvent>& moves() const { return log_; }
  // Each job's system: its route, or with a dispatcher the cluster that admitted it (a job no
  // cluster admitted: the first eligible one).
  const std::vector<std::uint32_t>& route() const { return route_; }

 private:
  class Part;
  // A job left the engine (ended or withdrawn): its system hears it through `hook`, or with
  // MultiKueue every cluster still holding a copy of it does.
  void job_left(const ClusterView& view, JobIndex job, void (Policy::*hook)(const ClusterView&, JobIndex));
  // A node's standing in the split: its owner, and where it is in a move.
  enum class Phase : std::uint8_t { Active, Draining, Moving };
  struct NodeOwner {
    std::uint32_t owner = 0;
    Phase phase = Phase::Active;
    Tick since = INT64_MIN;  // when it joined its owner (ready)
    Tick until = 0;          // Draining: the deadline (kNever: none); Moving: when it is ready
    std::int32_t row = -1;   // its move in log_
  };
  Part& part_of(JobIndex job, const ClusterView& view);
  void sync_nodes(const ClusterView& view);
  void measure_boundary(Tick now);
  void set_node(const ClusterView& view, models::NodeId node);
  void run_moves(Session& session);
  void moves_on_demand(Session& session);
  void start_move(Session& session, models::NodeId node, std::size_t rule, bool drain);
  bool more_work(Tick now) const;
  // Dispatchers: the clusters that can run job j (its GPU type, when it names one).
  bool eligible(std::size_t s, JobIndex j) const;
  // Cluster s admitted job j: the other clusters' copies are removed.
  void claim(std::uint32_t s, JobIndex j, const ClusterView& view);
  // Cluster s's policy rejected its copy of j: true when other copies live on (only s's goes).
  bool drop_copy(std::uint32_t s, JobIndex j, const ClusterView& view);
  // The clusters eligible for job j, a bit each (none eligible: the first).
  std::uint64_t eligible_mask(JobIndex j) const;
  // Cluster s's policy preempted job j (requeued or checkpointed): an eviction on the worker.
  void evicted(std::uint32_t s, JobIndex j);

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
  // Dispatchers.
  Dispatch dispatch_ = Dispatch::Routes;
  std::vector<std::uint64_t> copies_;  // MultiKueue: by job, a bit per cluster holding a live copy
  // MultiKueue's re-dispatch: every cluster's policy takes withdrawn copies back
  // (Policy::supports_resubmit); by job, preempted by its cluster's policy and not yet requeued.
  bool redispatch_ = false;
  std::vector<bool> evicted_;
  const models::Workload* workload_ = nullptr;
  std::vector<std::vector<std::string>> gpu_types_;   // by cluster: its pools' GPU types
  std::vector<std::vector<std::string>> pool_names_;  // and their names (node sets name them)
  // Moves.
  std::vector<Move> rules_;
  std::vector<std::uint32_t> rule_from_, rule_to_;
  std::vector<models::NodeId> busy_;  // nodes draining or moving
  std::vector<Tick> next_at_;         // by rule: its next occurrence (kNever: none left); -1: not yet set
  std::vector<NodeOwner> nodes_;      // by engine node (empty without moves)
  std::vector<std::uint32_t> home_;
  std::vector<std::vector<std::int32_t>> slot_;  // [system][engine node]: its slot in the system's view, or -1
  std::vector<MoveEvent> log_;
  std::vector<std::int64_t> pinned_;  // by system: jobs routed to it
  std::vector<std::int64_t> owned_;   // by system: nodes it owns (in a move: the owner of record)
  std::vector<models::NodeId> scratch_idle_;
  Tick last_submit_ = 0;
  std::int64_t day_offset_ = 0;  // ms from midnight (UTC) to tick 0 of the clock
};

}  // namespace headroom::policies::split
