#pragma once

// Failure and maintenance model of the POC failure drill (docs/drills.md).
//
// What is modelled, and the vocabulary it borrows:
// - Random hardware failures per node or per rack (a failure domain): time between failures drawn
//   from an exponential or Weibull distribution with the given mean (MTBF), each failure followed
//   by a fixed repair time (MTTR). Each unit draws from its own named RNG stream
//   ("failures/<pool>/node/<i>", "failures/rack/<name>"), so the same seed gives the same failures
//   under every policy and adding a unit never shifts another one.
// - Scripted failures ("drills"): a rack, a list of nodes or a whole pool goes down at a time
//   for a duration.
// - Maintenance windows: nodes of a pool are cordoned and drained in batches (kubectl drain /
//   Slurm `scontrol update state=drain`): no new job lands on them, running jobs finish, then the
//   node is down for the window; an optional drain timeout kills what still runs.
// - Jobs killed by a failure lose the work since their last checkpoint and are retried after an
//   exponential back-off (Kubernetes Job backoffLimit: 10s, 20s, 40s... capped), plus a restart
//   overhead; past the retry limit they end Failed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace headroom::models {

using sim::Tick;

enum class FailureDistribution : std::uint8_t { Exponential, Weibull };

// A failure domain: nodes that fail together.
struct Rack {
  std::string name;
  std::vector<NodeId> nodes;
};

// Random failures of the nodes (or racks) of some pools.
struct RandomFailures {
  std::vector<PoolId> pools;  // the pools whose units fail; empty = every pool
  bool per_rack = false;      // the failing unit is a rack (all its nodes at once), not a node
  Tick mtbf = 0;              // mean time between failures of one unit (> 0)
  FailureDistribution distribution = FailureDistribution::Exponential;
  double shape = 1.0;  // Weibull shape k (k < 1: infant mortality, k > 1: wear-out)
  Tick repair = 0;     // how long a failed unit stays down
  // `domain: switch`: the failing units are these (the switches of one topology level, each with
  // every node under it; streams "failures/<i>/switch/<name>"). Empty: per_rack uses
  // FailureSpec::racks.
  std::vector<Rack> switches;
};

// A scripted outage: `nodes` go down at `at` (relative to the run start) for `duration`; the jobs
// on them are killed as by a failure.
struct FailureEvent {
  Tick at = 0;
  Tick duration = 0;
  std::vector<NodeId> nodes;
  std::string what;  // "rack r3", "nodes a100-0, a100-1", "pool a100": for the audit log
};

// A maintenance window over one pool, repeated every `every` (0 = once).
struct Maintenance {
  PoolId pool = 0;
  Tick start = 0;  // relative to the run start
  Tick every = 0;
  Tick duration = 0;        // how long each node is down once drained
  bool drain = true;        // false: nodes go down at once, killing their jobs
  std::int32_t batch = 0;   // nodes maintained at a time; 0 = the whole pool
  Tick drain_timeout = -1;  // kill what still runs this long after the drain began; -1 = wait
  // The window's nodes in batch order when the pool is not one run of the cluster's nodes (a pool
  // cut between the systems of a split site, docs/split.md); empty: the pool's nodes in order.
  std::vector<NodeId> nodes;
};

struct FailureSpec {
  std::vector<RandomFailures> random;
  std::vector<Rack> racks;
  std::vector<FailureEvent> events;
  std::vector<Maintenance> maintenance;
  // Jobs killed by a failure (or a drain timeout).
  std::int32_t retry_limit = 3;         // retries after which a killed job ends Failed
  Tick backoff = 10 * sim::kSecond;     // delay before the first retry; doubled at each retry
  Tick backoff_max = 6 * sim::kMinute;  // cap of the back-off
  Tick checkpoint_interval = 0;         // 0 = no checkpoints: a killed job restarts from scratch
  Tick restart_overhead = 0;            // added to the remaining work of a retried job
  // By node: the name its random failures draw their stream under ("failures/<i>/node/<name>");
  // empty: models::node_name. A split site keeps each node's name on the unsplit site, so that a
  // seed fails the same nodes at the same instants with the split as without (docs/split.md).
  std::vector<std::string> node_names;

  bool empty() const { return random.empty() && events.empty() && maintenance.empty(); }
};

// "a100-3": the pool's name and the node's index in its pool.
std::string node_name(const ClusterSpec& cluster, NodeId node);
std::optional<NodeId> find_node(const ClusterSpec& cluster, std::string_view name);
// Racks of `nodes_per_rack` consecutive nodes of each pool (a rack never spans pools), numbered
// from 0 across the cluster in node order and named "rack-<i>".
std::vector<Rack> racks_of_size(const ClusterSpec& cluster, std::int32_t nodes_per_rack);

// Time until the next failure of one unit, at least 1 ms.
Tick time_to_failure(const RandomFailures& spec, sim::RngStream& rng);
// Work kept by a job that ran `ran` since its last (re)start when it is killed: the progress up to
// its last checkpoint, taken every `interval` of run time (0 = never).
Tick checkpointed_work(Tick ran, Tick interval);
// The back-off before retry number `retry` (1-based): backoff * 2^(retry-1), at most backoff_max.
Tick retry_backoff(const FailureSpec& spec, std::int32_t retry);

}  // namespace headroom::models
