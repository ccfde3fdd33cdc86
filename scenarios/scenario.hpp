#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "models/failures.hpp"
#include "models/prime_time.hpp"
#include "models/service.hpp"
#include "models/throughput.hpp"
#include "models/topology.hpp"
#include "models/workload.hpp"
#include "policies/api.hpp"
#include "policies/split/split.hpp"
#include "sim/time.hpp"

namespace headroom::scenarios {

using sim::Tick;

struct PolicySpec {
  std::string name;               // "fifo", "sjf", ...
  policies::PolicyParams params;  // every other key under `policy:`, as dotted paths
};

// `workload.kinds`: a rule that gives the trace's jobs of a shape a job kind (a log of MPI jobs
// says nothing of training or batch: `{kind: train, min_gpus: 9}` calls the jobs wider than one
// 8-GPU node training). Rules apply in order, the first that matches wins; a job no rule matches
// keeps the kind its trace gave it.
struct KindRule {
  models::JobKind kind = models::JobKind::Batch;
  std::int32_t min_gpus = 0;          // the job's GPUs are at least this
  std::int32_t max_gpus = INT32_MAX;  // and at most this
};

// `workload.sessions`: a seeded stream of generated interactive sessions (notebooks: short, a
// few GPUs, a person waiting) added to the trace's jobs (docs/drills.md, "Mixed work"). Each day
// (counted from time 0, the trace's first submit, as a service's `peak`), sessions arrive as a
// Poisson process of `per_day` sessions over [hours_start, hours_end); each lasts a lognormal
// time (median, sigma) within [1 min, max_duration].
struct SessionSpec {
  std::string name;
  std::string tenant;
  std::string queue;  // empty: the trace's first queue
  std::int32_t gpus = 1;
  std::int32_t priority = 0;
  double per_day = 0;
  Tick hours_start = 9 * sim::kHour, hours_end = 18 * sim::kHour;
  Tick median_duration = 30 * sim::kMinute;
  double sigma = 0.8;
  Tick max_duration = 8 * sim::kHour;
  Tick start = 0;
  Tick end = sim::kNever;  // kNever: the horizon, else the trace's last submit
};

struct WorkloadSpec {
  std::string trace;            // resolved path (relative paths are relative to the scenario file)
  std::string format = "auto";  // auto | swf | csv
  Tick window_start = 0;        // keep jobs submitted in [window_start, window_end)
  Tick window_end = sim::kNever;
  double arrival_scale = 1.0;                                     // < 1 thins, > 1 replicates arrivals (seeded)
  std::int32_t units_per_gpu = 1;                                 // SWF: processors per GPU
  std::vector<std::string> tenants;                               // keep only these tenants (empty: all)
  std::vector<std::string> queues;                                // keep only these queues (empty: all)
  double runtime_scale = 1.0;                                     // multiplies run times and time limits
  std::vector<std::pair<std::string, std::string>> gpu_type_map;  // trace GPU type -> pool GPU type
  bool skip_bad_rows = false;       // count and report malformed trace rows instead of stopping
  std::vector<std::string> fields;  // sacct: field list of a header-less export ("xdmod": Open XDMoD's)
  sim::Tick assume_runtime = -1;    // pod lists: run time of pods that never started; -1: they are skipped
  // Whether the replay kills a job at its recorded time limit (Slurm's TimeLimit): "enforce"; or
  // raises each limit below the job's recorded run time to it: "as_recorded"; or "auto" (the
  // default): enforce, unless the log shows that its own system did not (scenarios/workload.cpp).
  std::string time_limits = "auto";
  // Each job's queue becomes its tenant's name (set by headroom compare when it derives per-tenant
  // queues for policies that queue by job queue: kai, volcano).
  bool queue_by_tenant = false;
  std::vector<KindRule> kinds;
  std::vector<SessionSpec> sessions;
  // `workload.node_selectors: {QUEUE: [pool, ...]}`: the pools the jobs of a queue may use, as a
  // nodeSelector on their pods (sbatch --constraint under slurm): every system places them there
  // only (models::Job::node_set). Given, even empty, it is the scenario's word: headroom compare
  // derives none (below).
  std::vector<std::pair<std::string, std::vector<std::string>>> node_selectors;
  bool node_selectors_given = false;
  // Set by headroom compare when the selectors come from another system's rules (the scenario's
  // Slurm partitions whose Nodes leave out a pool, for the systems that have no partitions):
  // "slurm's partitions". Empty when written in the scenario or absent.
  std::string node_selectors_from;
  // Set by headroom compare when the system's set-up it derives follows those selectors (Kueue's
  // ResourceFlavor per pool, Volcano's capability per queue): what it is. Empty otherwise.
  std::string pools_set_up;
};

struct OutputSpec {
  Tick sample_interval = 0;                    // 0 = automatic (about 2,000 samples over the run)
  bool events = true;                          // write the /events audit log
  int interval_line = 0, interval_column = 0;  // where sample_interval was given (for errors)
};

// `costs:`: prices per GPU-hour by GPU type, copied onto the pools (NodePool::gpu_hour_price).
struct CostSpec {
  std::string currency = "USD";
  std::vector<std::pair<std::string, double>> gpu_hour;  // GPU type -> price, in pool order
};

// `tenants[].queues`: the queues a tenant may submit to (the permission drill).
struct QueueGrant {
  std::string tenant;
  bool restricted = false;  // false: no `queues:` key, every queue is allowed
  std::vector<std::string> queues;
};

// One acceptance target of `targets:` ("p95_wait <= 12h", the syntax of `headroom plan --target`),
// with where it was written; planner::parse_target reads it (headroom compare's scorecard).
struct TargetSpec {
  std::string text;
  int line = 0;
  int column = 0;
};

// One file loading the scenario read, and what it is ("scenario", "trace", "slurm_conf", "file
// read by slurm_conf" (an Include, gres.conf), "manifest", ...): an output must never be one of
// them (apps/output_check.hpp).
struct FileRead {
  std::string what;
  std::string path;
};

struct Scenario {
  std::string file;  // the path it was loaded from
  std::string text;  // the YAML source, stored in results
  std::string name;
  std::uint64_t seed = 1;
  models::ClusterSpec cluster;
  // What cluster.topology was built from (null without one): a split site rebuilds it in the
  // engine's numbering and for each system's nodes (policies::split::partition_cluster).
  std::shared_ptr<const models::TopologySpec> topology_spec;
  std::vector<models::Tenant> tenants;
  std::vector<QueueGrant> queue_grants;  // one per tenant of `tenants`
  PolicySpec policy;
  std::vector<PolicySpec> policy_overrides;  // `policies: {NAME: {params}}`: per-policy blocks (headroom compare)
  WorkloadSpec workload;
  Tick horizon = sim::kNever;  // kNever: until the last job ends
  OutputSpec output;
  models::FailureSpec failures;               // `failures:` (docs/drills.md)
  CostSpec costs;                             // `costs:` (docs/planner.md, "Cost")
  std::vector<models::ServiceSpec> services;  // `services:` (docs/services.md)
  models::RuntimeSpec runtime;                // `runtime:` (docs/heterogeneity.md)
  models::PrimeTime prime_time;               // `prime_time:` (docs/fidelity.md, "Prime time")
  std::vector<TargetSpec> targets;            // `targets:` (docs/planner.md, "Scorecard")
  // `split:` (docs/split.md): the site cut between several systems; policy.name is "split" then.
  policies::split::SplitSpec split;
  // What reading the admins' own files (slurm_conf:, manifests:) found and does not model, one
  // line each ("slurm.conf:12: DefMemPerCPU=4000 changes scheduling and is not modelled").
  std::vector<std::string> warnings;
  // Every file read: the scenario itself, its trace, each site file and what it pulled in (a
  // slurm.conf's Includes, ...), each manifest, in `policy:` and in the `policies:` blocks.
  std::vector<FileRead> files;
};

// Loads and validates a scenario file. On any problem throws sim::InputErrors holding every
// problem found, each with file:line:column and the key path.
Scenario load_scenario(const std::string& path);
// Same, from text (tests); `file` names the source in messages and resolves relative paths.
Scenario parse_scenario(const std::string& text, const std::string& file);

}  // namespace headroom::scenarios
