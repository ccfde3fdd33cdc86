#pragma once

// A SystemModule is everything the layers above policies/ may ask of one scheduling system (a
// mirrored scheduler in policies/<system>/, or a literature baseline): what it is called and
// accepts, how to check and build it, and the hooks for what used to be switched on by name in the
// scenario loader, compare and calibrate (its site files and manifests, the cluster names its
// parameters refer to, its queues and quotas derived from a scenario's tenants, its calibration
// knobs). planner/, scenarios/ and apps/ ask the registry (system_modules(), find_system()) and
// never name a system; adding a scheduler is one folder plus one row of the registry table
// (policies/registry.cpp). Every hook but check and make is optional (null or empty: the system
// has no such thing).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "policies/api.hpp"
#include "policies/common/manifests.hpp"
#include "sim/errors.hpp"

namespace headroom::policies {

// What an admin's own file gives: parameters located at the file's lines, the nodes it describes
// (a cluster-level file such as slurm.conf; empty otherwise) and one warning per kind of thing
// read but not modelled.
struct SiteImport {
  PolicyParams params;
  models::ClusterSpec cluster;
  std::vector<std::string> warnings;
  std::vector<std::string> files;  // every file read (the one named, its Includes, ...)
};

// A file named under the policy (`policy: {<key>: path}`), or under `cluster:` when it is the
// system's cluster file. `read` throws sim::InputError naming the file and line.
struct SiteFile {
  std::string_view key;
  SiteImport (*read)(const std::string& path);
};

// A tenant of the scenario, for the systems whose queues and quotas `compare` derives from them.
struct TenantQuota {
  std::string name;
  double weight = 1;
  std::int64_t gpus = -1;       // guaranteed GPUs as written; -1: none written
  std::int64_t max_gpus = -1;   // most GPUs the tenant may hold; -1: no cap
  std::int64_t guaranteed = 0;  // `gpus`, else the weight's share of the cluster (rounded down)
};

struct DeriveRequest {
  const models::ClusterSpec* cluster = nullptr;
  std::vector<TenantQuota> tenants;  // empty: the scenario lists none
  bool restricted = false;           // the permission drill grants queues by name
  std::string file;                  // where derived parameters are said to come from
  // The pools of the node selectors compare gives the system's jobs (from the scenario's Slurm
  // partitions), each set once; empty: none.
  std::vector<std::vector<std::string>> node_sets;
  // The same selectors by queue (the trace's queue name; the unnamed ones as "default" and
  // "unknown"), and every queue the rules' system declares (Slurm's partitions); empty: none.
  std::vector<std::pair<std::string, std::vector<std::string>>> queue_node_sets;
  std::vector<std::string> declared_queues;
};

struct Derived {
  PolicyParams params;
  bool queue_by_tenant = false;  // jobs are queued under their tenant's name
  // What the derived set-up does for DeriveRequest's node selectors ("a ResourceFlavor per pool
  // ..."), said under compare's table; empty: it does nothing for them.
  std::string pools_set_up;

  void put(const std::string& key, const std::string& value, const std::string& file) {
    params[key] = ParamValue{value, file, 0, 0};
  }
};

// One queue per tenant, jobs queued by their tenant (volcano, kai): `each(derived, tenant)` writes
// a tenant's queue. nullopt without tenants, or when the permission drill grants queues by name
// (they name the trace's queues).
template <typename Each>
std::optional<Derived> queue_per_tenant(const DeriveRequest& r, Each each) {
  if (r.tenants.empty() || r.restricted) return std::nullopt;
  Derived d;
  for (const auto& t : r.tenants) each(d, t);
  d.queue_by_tenant = true;
  return d;
}

// A tenant's weight as the integer weights of queues and accounts: x100, at least 1.
std::string integer_weight(double weight);
// The cluster's pool names as a flow list: "[a, b]".
std::string pool_list(const models::ClusterSpec& cluster);

// Calibration (planner/calibrate.hpp): what the fit window of a log shows, and the system's own
// knobs to try against it.
struct CalibrationUser {
  std::string name;
  std::int64_t max_jobs = 0, max_gpus = 0, largest_job = 0;  // most running at once; largest one job
  std::int64_t jobs = 0;                                     // its jobs with a recorded start
};

// A queue (partition) of the log as the fit window recorded it.
struct CalibrationQueue {
  std::string name;
  std::int64_t jobs = 0;     // its jobs with a recorded start
  double median_wait_s = 0;  // their recorded median wait
};

struct CalibrationInput {
  std::vector<CalibrationUser> users;    // most jobs first
  std::vector<CalibrationQueue> queues;  // most jobs first
  std::string recorded_scheduler;        // "fcfs", "easy", ... or "" (the log's header is silent)
  std::int64_t queue_depth = 0;          // the deepest the recorded system started into its queue
  std::vector<std::int32_t> sizes;       // the first pool's node counts to try; -1: as given
  const PolicyParams* own = nullptr;     // the scenario's parameters when its policy is this system
};

struct CalibrationCandidate {
  // The rule, without the values of one window (policies/common/calibration.hpp): "slurm, QOS
  // MaxGPUsPerUser at 1/2 of the most one user held".
  std::string label;
  std::vector<std::pair<std::string, std::string>> params;  // set over the scenario's own
  std::int32_t nodes = -1;
};

struct Calibration {
  std::vector<CalibrationCandidate> (*candidates)(const CalibrationInput& input);
  // Whether the search sets this key: the scenario's own value of it is dropped.
  bool (*searched)(std::string_view key);
};

// Where a system's rules keep jobs on part of the cluster by their queue (Slurm's partitions and
// their Nodes), for compare's note that a column without such rules places the same jobs on any
// node (apps/compare_cmd.cpp). Only queues whose pools are a strict subset of the cluster's.
struct QueueNodes {
  std::string queue;               // the job's queue name (a Slurm partition)
  std::vector<std::string> pools;  // the pools its jobs may use
  bool takes_unnamed = false;      // also jobs that name no queue (Slurm's Default partition)
};

struct NodeRules {
  std::vector<QueueNodes> queues;
  std::string what;  // what the system calls such a queue, plural ("partitions")
  // Every queue the system declares, confined or not (each Slurm partition): a system that
  // rejects jobs of undeclared queues (Volcano) declares these when it is given the rules.
  std::vector<std::string> declared;
  // The system confines jobs by something other than their queue (Kueue's ResourceFlavors that
  // select part of the pools, by namespace): compare neither counts these jobs nor names the
  // column among those that place jobs on any node.
  bool other = false;
};

// An add-on a site really installs on top of a system (issue #32), run as the variant
// `<system>+<name>` (e.g. kubernetes+coscheduling): the system with these parameters set. A
// variant is listed, checked, built and labelled (tables, result files, the app) by its full name;
// a scenario's block for it may set other keys, and one of these only to the same value.
struct AddOn {
  std::string_view name;     // "coscheduling"
  std::string_view summary;  // what a site installs, upstream
  std::span<const std::pair<std::string_view, std::string_view>> params;
};

struct SystemModule {
  PolicyInfo info;  // name, summary, accepted keys (the policy catalogue)
  // Checks the values of known keys (unknown keys are the registry's), appending errors.
  void (*check)(const PolicyParams& params, std::vector<sim::InputError>& errors) = nullptr;
  std::unique_ptr<Policy> (*make)(const PolicyParams& params, std::uint64_t seed) = nullptr;

  // `manifests: [files]` under the policy: the Kubernetes objects a site applies.
  ManifestImport (*read_manifests)(const std::vector<std::string>& paths, const models::ClusterSpec& cluster,
                                   const PoolLabels& labels) = nullptr;
  // Files named under the policy, in the order they are read.
  std::span<const SiteFile> site_files;
  // The file that may stand for `cluster.pools` (`cluster: {<key>: path}`); one of site_files.
  const SiteFile* cluster_file = nullptr;
  // References of checked parameters that the cluster does not resolve.
  void (*check_cluster_refs)(const PolicyParams& params, const models::ClusterSpec& cluster,
                             std::vector<sim::InputError>& errors) = nullptr;
  // The parameters `compare` gives the system for a scenario written for another (nullopt: none).
  std::optional<Derived> (*derive)(const DeriveRequest& request) = nullptr;
  // The rules above as these parameters set them (null: the system keeps no job off any pool by
  // its queue or tenant; GPU types aside).
  NodeRules (*node_rules)(const PolicyParams& params, const models::ClusterSpec& cluster) = nullptr;
  // How long a run takes next to the others (compare starts the costliest first); 1 is a baseline.
  int run_cost = 1;
  const Calibration* calibration = nullptr;
  std::span<const AddOn> add_ons;
};

// The registry (policies/registry.cpp), in catalogue order.
std::span<const SystemModule> system_modules();
// nullptr when no system has that name. A variant's name (`kubernetes+coscheduling`) finds its
// system when the system has that add-on.
const SystemModule* find_system(std::string_view name);
// The add-on a variant's name names; nullptr for a plain system name or an unknown add-on.
const AddOn* find_add_on(std::string_view name);
// The parameters a variant runs with: `params` plus its add-on's. An add-on key the block sets to
// another value is an error at that key (a variant is what it adds). `params` as given for a plain
// system name.
PolicyParams with_add_on(std::string_view name, const PolicyParams& params, std::vector<sim::InputError>& errors);

}  // namespace headroom::policies
