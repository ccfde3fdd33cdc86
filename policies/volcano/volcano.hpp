#pragma once

// The Volcano batch scheduler (docs POLICIES.md section 2; user docs docs/policies/volcano.md).
// A PodGroup is every job sharing Job::group (one job = one pod), with minMember = Job::gang_min
// (0 = all members); a job without a group is a PodGroup of its own: rigid, started with all its
// GPUs (its tasks are its per-node slices) and evicted whole. The Volcano queue is Job::queue.
//
// The rules modelled, their upstream sources and what is not modelled: README.md in this folder.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policies/api.hpp"

namespace headroom::policies::volcano {

enum class Action : std::uint8_t { Enqueue, Allocate, Backfill, Preempt, Reclaim };

// One plugin of a tier with its per-function switches and arguments.
struct PluginConf {
  std::string name;
  bool job_order = true, task_order = true, queue_order = true, node_order = true;
  bool preemptable = true, reclaimable = true, job_enqueued = true;
  bool hierarchy = false;  // enableHierarchy (capacity: hierarchical queues)
};

enum class QueueState : std::uint8_t { Open, Closing, Closed };

enum class NetworkTopologyMode : std::uint8_t { Off, Hard, Soft };

// Resources in headroom units: GPUs, millicores, MiB. -1 in a capability = unlimited.
using Resources = std::array<std::int64_t, 3>;

struct QueueConf {
  std::int64_t weight = 1;
  Resources capability{-1, -1, -1};
  Resources guarantee{0, 0, 0};
  Resources deserved{-1, -1, -1};  // capacity plugin; -1 = not set
  std::string parent;              // capacity with enableHierarchy; empty = the root queue
  // drf with enableHierarchy: annotations volcano.sh/hierarchy ("root/eng/dev") and
  // volcano.sh/hierarchy-weights ("1/2/8").
  std::string hierarchy, hierarchy_weights;
  bool reclaimable = true;
  std::int32_t priority = 0;
  QueueState state = QueueState::Open;
};

struct Config {
  std::vector<Action> actions{Action::Enqueue, Action::Allocate, Action::Backfill};
  std::vector<std::vector<PluginConf>> tiers;  // default: the Helm chart's volcano-scheduler.conf
  double overcommit_factor = 1.2;
  // The sla plugin's sla-waiting-time (plugins/sla/sla.go): a job waiting this long since its
  // creation is permitted to enqueue and to be pipelined; 0 = not set (the plugin does nothing).
  sim::Tick sla_waiting_time = 0;
  // The Job annotation sla-waiting-time (sla.go reads it before the argument), as a site puts it on
  // its wide jobs: on every PodGroup asking for at least sla_annotation_min_gpus GPUs in all
  // (slaAnnotation.waitingTime / .minGpus); 0 = none.
  sim::Tick sla_annotation_time = 0;
  std::int64_t sla_annotation_min_gpus = 0;
  double binpack_weight = 1, binpack_cpu = 1, binpack_memory = 1, binpack_gpu = 0;
  std::int64_t leastrequested_weight = 1, mostrequested_weight = 0, balancedresource_weight = 1;
  sim::Tick schedule_period = sim::kSecond;
  sim::Tick termination_grace_period = 30 * sim::kSecond;
  bool min_resources = true;  // minResources: auto
  // podsCreated: inqueue (training and batch work are Volcano Jobs, whose controller creates a
  // job's pods once its PodGroup has left Pending, so a Pending group's tasks are in no queue's
  // request) or submit (controllers that create the pods at once, e.g. Kubeflow's
  // training-operator with a PodGroup). Inference and interactive pods exist from the start.
  bool pods_at_submit = false;
  std::int64_t ancestor_reclaim_level = 0;  // capacity argument ancestorReclaimLevel
  std::map<std::string, QueueConf> queues;
  // Job spec.networkTopology, given to the PodGroups whose lowest-index member's kind is in
  // `network_topology_kinds` (empty = every kind), over cluster.topology (HyperNode tier = switch
  // level, tier 1 = leaf). Needs the network-topology-aware plugin in the tiers (added to the
  // default tiers when `tiers` is not given); without a cluster topology it does nothing.
  NetworkTopologyMode network_topology = NetworkTopologyMode::Off;
  std::int32_t highest_tier_allowed = 0;  // hard mode
  std::vector<models::JobKind> network_topology_kinds;
  // network-topology-aware plugin arguments: weight and the HyperNode-level binpack weights.
  double nta_weight = 1, nta_binpack_cpu = 1, nta_binpack_memory = 1, nta_binpack_gpu = 0;
};

// The Helm chart's tiers: [priority, gang (enablePreemptable: false), conformance],
// [overcommit, drf (enablePreemptable: false), predicates, proportion, nodeorder, binpack].
std::vector<std::vector<PluginConf>> default_tiers();

// The plugin arguments that switch on Dynamic Resource Allocation (capacity.go
// DynamicResourceAllocationEnable, DRAConsumableCapacityEnable; predicates' own switch): accepted,
// DRA is not modelled (GPUs are nvidia.com/gpu requests); the manifest reader warns once each.
bool is_dra_argument(std::string_view name);

// What the volcano policy reads in volcano-scheduler.conf: the plugins it models, their arguments
// and `enable...` switches. The upstream lists are what Volcano itself registers (plugins/factory.go,
// actions/factory.go, conf/scheduler_conf.go) and headroom does not model: the manifest reader
// leaves them out of a site's ConfigMap with one warning each (Volcano would run them), where a
// name Volcano does not know either stays an error with "did you mean".
const std::vector<std::string>& action_names();
const std::vector<std::string>& plugin_names();
const std::vector<std::string>& argument_names();
const std::vector<std::string>& switch_names();
bool is_modelled_argument(std::string_view name);
const std::vector<std::string>& upstream_unmodelled_plugins();
const std::vector<std::string>& upstream_unmodelled_actions();
const std::vector<std::string>& upstream_unmodelled_switches();

const std::vector<std::string>& param_keys();
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
Config parse_config(const PolicyParams& params);

std::unique_ptr<Policy> make_policy(Config config);
std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed);

}  // namespace headroom::policies::volcano
