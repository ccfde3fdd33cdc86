#pragma once

// The Volcano batch scheduler (docs POLICIES.md section 2; user docs docs/policies/volcano.md).
// A PodGroup is every job sharing Job::group (one job = one pod), with minMember = Job::gang_min
// (0 = all members); a job without a group is a PodGroup of its own: rigid, started with all its
// GPUs (its tasks are its per-node slices) and evicted whole. The Volcano queue is Job::queue.
//
// Rules modelled, with their sources in volcano-sh/volcano:
//  - Session every schedule-period (cmd/scheduler/app/options/options.go, default 1 s): sessions
//    run at multiples of the period, at most one per period; a session that changed nothing is not
//    followed by another until an engine event (submit, end, eviction) arrives. The actions run in
//    the configured order (pkg/scheduler/util.go DefaultSchedulerConf: "enqueue, allocate,
//    backfill"; preempt and reclaim only when listed).
//  - Plugin tiers (framework/session_plugins.go): Queue/Job/Task order use the first plugin in
//    tier order with a non-zero comparison, then creation time, then uid (queue: first-seen order;
//    job: earliest member submit, then lowest job index; task: task priority, then pod index = job
//    index, pkg/controllers/job/helpers/helpers.go CompareTask). Preemptable/Reclaimable intersect
//    the victim sets of the plugins of one tier; an empty set from any plugin ends the tier with
//    nil and evaluation falls through to the next tier. Per-plugin switches enablePreemptable,
//    enableReclaimable, enableJobOrder, enableTaskOrder, enableQueueOrder, enableNodeOrder,
//    enableJobEnqueued. Candidates are handed to the plugins in victim order (below), the
//    deterministic stand-in for Go's map order that decides gang's victim subset.
//  - PodGroup phases Pending -> Inqueue -> Running (api/job_info.go Ready/Pipelined/Starving; ready
//    counts running, session-allocated and succeeded members); a Running group that drops below
//    minMember goes back to Pending (framework/job_updater.go). minResources: `auto` (the Volcano
//    Job controller: the requests of the first minMember tasks in task order) or `none`. A group's
//    queue and priority are its lowest-index member's.
//  - Cost: a PodGroup that fitted nowhere, or that enqueue refused, is not tried again until
//    something is released or evicted (epoch), since the answer cannot improve before then. The
//    session snapshot is kept between sessions and only what an event touched is read again; enqueue
//    walks per-queue JobOrder lists and passes over refusals that cannot change; a GPU index finds
//    the first fitting node. The decisions are those of a snapshot rebuilt every session.
//  - enqueue (actions/enqueue/enqueue.go): queues by QueueOrder, one Pending PodGroup per pop by
//    JobOrder, queue pushed back; admitted if minResources is nil or every JobEnqueueable plugin
//    permits: overcommit (plugins/overcommit: Σ minResources(Inqueue) + minResources <= total ·
//    overcommit-factor - used, in the job's requested dimensions; default factor 1.2) and
//    proportion (minResources + allocated + inqueue - elastic <= realCapability, queue Open).
//  - allocate (actions/allocate/allocate.go): queues by QueueOrder, dropped when Overused; one
//    job per pop (JobValid: enough members), tasks in TaskOrder, a task skipped when
//    !Allocatable; node gradients (idle fits, else future idle = idle + releasing - pipelined)
//    and the highest NodeOrder score (ties: lowest node index); Allocate or Pipeline; stop when
//    the job is Ready and push it back if tasks remain (elastic); commit when Ready, keep the
//    session holds when only Pipelined, else discard (gang all-or-nothing). A rigid job stops at
//    its first task that fits nowhere (NeedContinueAllocating). Pipelined holds last one session;
//    the pipelined task binds in the first session after its victims have left.
//  - backfill (actions/backfill/backfill.go): only best-effort tasks (no request in any modelled
//    dimension), on the first feasible node.
//  - preempt (actions/preempt/preempt.go): per queue, starving non-Pending jobs by JobOrder; per
//    pending task, nodes by score; candidates are running tasks of other jobs of the same queue;
//    victims = Preemptable, ordered by reverse JobOrder then reverse TaskOrder, evicted until the
//    task fits the node's future idle, then the task is pipelined; the job's evictions are
//    committed only if it ends up Pipelined. The second pass (tasks of the same job) is not
//    modelled.
//  - reclaim (actions/reclaim/reclaim.go): queues by QueueOrder (Overused dropped), one starving
//    job and one task per pop, !Allocatable (proportion's Preemptive) drops the queue; nodes in
//    index order; candidates are running tasks of other, reclaimable queues; victims =
//    Reclaimable, evicted in victim order until the reclaimed resources cover the task, which is
//    then pipelined; evictions committed per job if it is Pipelined at the end of the action.
//  - plugins: priority (JobOrder/TaskOrder higher first; Preemptable: lower job priority, or the
//    same job with lower task priority), gang (JobOrder not-ready first; Preemptable/Reclaimable
//    admit a victim while its job's occupied count stays above minAvailable), conformance (no
//    kube-system pods in headroom: admits every candidate), drf (share max_r alloc/total, lower
//    first; Preemptable within 1e-6), proportion (water-filling of deserved by weight with
//    capability, request and guarantee clamps; QueueOrder by queue priority then share; Overused;
//    Allocatable; Reclaimable above deserved), binpack (100·weight·Σ w_r (used+req)/alloc / Σ w_r
//    over requested resources, 0 on overflow; GPU only when listed), nodeorder (leastrequested,
//    mostrequested, balancedresource as kube-scheduler's NodeResourcesFit/BalancedAllocation over
//    cpu and memory; the affinity/taint/image/topology weights are accepted and score 0: headroom
//    has no such constraints), predicates (node up, GPU type, resources), overcommit.
//  - Evictions (Session::preempt, Requeue mode) take effect after termination_grace_period (30 s
//    as Kubernetes); `by` is the preemptor, the reason names the action and the deciding tier's
//    plugin rule.
//  - capacity (plugins/capacity/capacity.go; the alternative to proportion, refused beside it as
//    docs/user-guide/how_to_use_capacity_plugin.md says): explicit deserved, capability and
//    guarantee per queue. Flat: realCapability = min(capability, max(0, total - Σ guarantee) +
//    guarantee), deserved clamped to realCapability and raised to guarantee. enableHierarchy
//    (buildHierarchicalQueueAttrs, checkHierarchicalQueue): queues with `parent` under the root
//    queue "root" (unlimited capability; deserved and guarantee its children's sums); a child
//    inherits unset capability dimensions from its parent; realCapability = min(capability,
//    max(0, parent's realCapability - Σ siblings' guarantee) + guarantee); allocated, inqueue and
//    elastic add up along the ancestors; jobs only in leaf queues (the Job admission webhook
//    rejects others). share = max over deserved dimensions of allocated / deserved (1 without
//    deserved); QueueOrder: queue priority, then (hierarchical) leaves first and two leaves by the
//    shares of the children of their common ancestor (a non-leaf share is computed at session open
//    only), then share, then queues with deserved first. Allocatable: Open, a leaf, allocated +
//    request <= realCapability for the queue and its ancestors. JobEnqueueable: minResources +
//    allocated + inqueue - elastic <= realCapability likewise. Preemptive: allocated + request <=
//    realCapability and <= deserved in some requested dimension (ancestors too with
//    ancestorReclaimLevel). Reclaimable: shared dimension with the reclaimer, guarantee kept, then
//    an immediate victim (deserved names none of its dimensions) or its queue above deserved in a
//    relevant dimension (ancestors within ancestorReclaimLevel too). Victims of different queues
//    go by VictimQueueOrderFn (deeper common ancestor with the reclaimer first), else reverse
//    QueueOrder. Overused is not registered. The Queue webhook's rules
//    (webhooks/admission/queues/validate/validate_queue.go) are configuration errors.
//  - drf with enableHierarchy (plugins/drf/drf.go; docs/design/hdrf.md): a tree from the queues'
//    volcano.sh/hierarchy and hierarchy-weights annotations with the jobs as leaves; saturation,
//    scaling of unsaturated children to their least dominant share; QueueOrder down both paths
//    (saturated last, then share / weight); Reclaimable when the reclaimer's queue sorts first after
//    the move. Conflicts with proportion in one tier.
//  - network-topology-aware (plugins/network-topology-aware, actions/allocate allocateForJob) over
//    cluster.topology, HyperNode tier = switch level, with `networkTopology` given to the
//    PodGroups of some job kinds: hard mode tries, tier by tier up to highestTierAllowed, the
//    HyperNodes whose idle or future idle covers minResources, dry-running the tasks on each one's
//    nodes; the first tier with a solution decides, by the HyperNode binpack score (ties: more
//    running tasks inside, then the smallest switch id); none: the PodGroup stays pending. A
//    PodGroup with running tasks stays below the highest allowed ancestor of their nodes. Soft
//    mode adds 100 x weight x the tier score of the lowest common switch with the PodGroup's nodes
//    (plus the task-count share on ties) to the node scores.
//  Not modelled: preempt's second pass; from network-topology-aware: highestTierName, sub-group
//  policies, HyperNode binpack for pods without a constraint, topology in preempt / reclaim.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
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
  double binpack_weight = 1, binpack_cpu = 1, binpack_memory = 1, binpack_gpu = 0;
  std::int64_t leastrequested_weight = 1, mostrequested_weight = 0, balancedresource_weight = 1;
  sim::Tick schedule_period = sim::kSecond;
  sim::Tick termination_grace_period = 30 * sim::kSecond;
  bool min_resources = true;                // minResources: auto
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

const std::vector<std::string>& param_keys();
void check_params(const PolicyParams& params, std::vector<sim::InputError>& errors);
Config parse_config(const PolicyParams& params);

std::unique_ptr<Policy> make_policy(Config config);
std::unique_ptr<Policy> make_policy(const PolicyParams& params, std::uint64_t seed);

}  // namespace headroom::policies::volcano
