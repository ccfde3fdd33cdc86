#pragma once

// Interconnect topology of a cluster (docs/topology.md): the nodes, the switches above them and the
// links between them with their bandwidths, as a graph (Boost.Graph, hidden in topology.cpp).
// Vertices are the cluster's nodes (ClusterState node ids, pool order) followed by the switches;
// edges are links. Switches have levels: a leaf (level 1) links nodes, a switch at level L > 1
// links switches below it. A node links to one leaf, or in a rail-optimised fabric to one leaf per
// rail. Switches forward traffic, nodes do not: distances are shortest paths through switches.
//
// Everything a query needs is precomputed at build (switch-to-switch hop and widest-link tables,
// per-node ancestor sets, nodes under each switch), so placement queries cost a few array reads
// per pair of distinct leaf attachments among a job's nodes.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "models/failures.hpp"
#include "models/job.hpp"

namespace headroom::models {

using SwitchId = std::uint32_t;
inline constexpr SwitchId kNoSwitch = UINT32_MAX;

// Intra-node GPU-to-GPU bandwidth of one GPU, in Gbit/s, for a GPU type (catalogue name or alias):
// NVIDIA datasheet NVLink totals (P100 160 GB/s, V100 300 GB/s, A100 600 GB/s, H100/H200
// 900 GB/s, B200 1.8 TB/s) and PCIe x16 for cards without NVLink (T4 Gen3 32 GB/s; A10, L40S
// Gen4 64 GB/s); 1 GB/s = 8 Gbit/s. Unknown types get PCIe Gen3 x16 (256 Gbit/s).
double default_nvlink_gbps(std::string_view gpu_type);

// Communication intensity per job kind, in [0, 1]: the fraction a job slows down when spread over
// nodes under one leaf switch whose bottleneck link is the reference bandwidth (see
// Topology::slowdown). Defaults and their sources: docs/topology.md.
struct CommIntensity {
  // Indexed by JobKind: train, inference, interactive, batch.
  std::array<double, 4> by_kind = {0.25, 0.0, 0.1, 0.1};
  double of(JobKind k) const { return by_kind[static_cast<std::size_t>(k)]; }
};

// What a topology is built from. Produced by the scenario loader (explicit `switches:`) or by the
// generators below; Topology::build checks it.
struct TopologySpec {
  struct Switch {
    std::string name;
    std::int32_t level = 1;         // 1 = leaf; a switch's parents are at higher levels
    std::vector<NodeId> nodes;      // nodes linked to it (leaves only)
    double node_gbps = 0;           // bandwidth of each node link (> 0 when it has nodes)
    std::vector<SwitchId> parents;  // indices into `switches`
    double uplink_gbps = 0;         // bandwidth of each uplink; 0 = non-blocking (downlinks / parents)
  };
  std::vector<Switch> switches;
  std::string kind = "explicit";                            // explicit | fat_tree | racks | rail
  std::vector<std::pair<std::string, double>> nvlink_gbps;  // GPU type -> Gbit/s, overriding the defaults
  double reference_gbps = 0;                                // 0 = the fastest node link
  CommIntensity intensity;
};

// Generators (docs/topology.md). Nodes are taken in id order.
// Leaf-spine: leaves of `nodes_per_leaf` nodes, spines over `leaves_per_spine` leaves each, and a
// core switch over the spines when there is more than one. 0 bandwidth = non-blocking.
TopologySpec leaf_spine_spec(const ClusterSpec& cluster, std::int32_t nodes_per_leaf, std::int32_t leaves_per_spine,
                             double node_gbps, double leaf_uplink_gbps, double spine_uplink_gbps);
// The k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge (leaf) and k/2
// aggregation switches, (k/2)^2 core switches, k/2 nodes per edge switch, every link `link_gbps`.
// Holds at most k^3/4 nodes; switches with no node below them are left out.
TopologySpec fat_tree_k_spec(const ClusterSpec& cluster, std::int32_t k, double link_gbps);
// One leaf per rack (racks_of_size: `nodes_per_rack` consecutive nodes of a pool, named rack-<i>)
// and one spine over them.
TopologySpec racks_spec(const ClusterSpec& cluster, std::int32_t nodes_per_rack, double node_gbps, double uplink_gbps);
// Rail-optimised: groups of `nodes_per_group` nodes; in each group `rails` leaf switches
// (rail-<g>-<r>), rail r linking GPU r of every node of the group (one NIC per GPU, `node_gbps`
// each); one spine over all rail switches. A node links to every rail of its group.
TopologySpec rail_spec(const ClusterSpec& cluster, std::int32_t nodes_per_group, std::int32_t rails, double node_gbps,
                       double uplink_gbps);

class Topology;

// Failure domains of one switch level: one unit per switch of `level`, named after it, holding
// every node under it (docs/drills.md: `domain: switch`).
std::vector<Rack> switch_domains(const Topology& topology, std::int32_t level);

class Topology {
 public:
  // The topology of `spec` over `cluster`'s nodes, or null with `error` set: a node id out of
  // range, a node under no switch, a bandwidth <= 0, a parent not above its child, a leaf with
  // switches below it, or switches that are not all connected.
  static std::shared_ptr<const Topology> build(const ClusterSpec& cluster, const TopologySpec& spec,
                                               std::string& error);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  std::size_t node_count() const { return node_leaves_.size(); }
  std::size_t switch_count() const { return names_.size(); }
  std::size_t link_count() const;
  const std::string& kind() const { return kind_; }
  const std::string& switch_name(SwitchId s) const { return names_[s]; }
  std::optional<SwitchId> find_switch(std::string_view name) const;
  std::int32_t level(SwitchId s) const { return level_[s]; }
  std::int32_t levels() const { return static_cast<std::int32_t>(by_level_.size()); }  // highest level
  std::span<const SwitchId> switches_at(std::int32_t level) const;                     // in id order
  std::span<const SwitchId> parents(SwitchId s) const { return parents_[s]; }
  std::span<const SwitchId> children(SwitchId s) const { return children_[s]; }
  std::span<const NodeId> nodes_under(SwitchId s) const { return under_[s]; }  // ascending
  std::span<const SwitchId> node_leaves(NodeId n) const { return node_leaves_[n]; }
  std::span<const SwitchId> ancestors(NodeId n) const;  // every switch above the node, ascending id
  double node_link_gbps(NodeId n) const { return node_link_[n]; }
  double intra_node_gbps(NodeId n) const { return intra_[n]; }
  double reference_gbps() const { return reference_gbps_; }
  const CommIntensity& comm_intensity() const { return intensity_; }

  // Links on the shortest path between two nodes (through switches); 0 for the same node.
  std::int32_t hops(NodeId a, NodeId b) const;
  // The largest hop count between two of the nodes (0 for one node).
  std::int32_t max_hops(std::span<const NodeId> nodes) const;
  // The smallest link bandwidth on the paths connecting the nodes: for each pair, the widest of its
  // shortest paths; the minimum over pairs. One node: its intra-node (NVLink) bandwidth.
  double bottleneck_gbps(std::span<const NodeId> nodes) const;
  // The lowest-level switch above every one of the nodes (ties: smallest id), kNoSwitch if none.
  SwitchId lowest_common_switch(std::span<const NodeId> nodes) const;
  // Placement helper: the lowest-level switch whose nodes' free GPUs (`free_gpus[node]`) sum to at
  // least `need`; among those of that level the best fit (fewest spare GPUs), then smallest id.
  // kNoSwitch when no switch of level <= max_level can hold the need.
  SwitchId lowest_fitting_domain(std::span<const std::int32_t> free_gpus, std::int64_t need,
                                 std::int32_t max_level = INT32_MAX) const;

  // Runtime slowdown (>= 1) of a distributed job on `nodes` with communication intensity `c`:
  // 1 for one node; else 1 + c * (max_hops / 2) * (reference_gbps / bottleneck_gbps).
  double slowdown(std::span<const NodeId> nodes, double comm_intensity) const;
  // The same for a placement and a job kind (intensity from comm_intensity()).
  double slowdown(const Placement& placement, JobKind kind) const;

 private:
  Topology() = default;
  struct Graph;

  // The attachment classes (nodes with the same leaves) of a node set, sorted, without repeats.
  void classes_of(std::span<const NodeId> nodes, std::vector<std::uint32_t>& out) const;
  std::pair<std::int32_t, double> class_pair(std::uint32_t a, std::uint32_t b) const;  // hops, widest

  std::unique_ptr<Graph> graph_;
  std::string kind_;
  std::vector<std::string> names_;
  std::vector<std::int32_t> level_;
  std::vector<std::vector<SwitchId>> by_level_;  // [level-1]
  std::vector<std::vector<SwitchId>> parents_, children_;
  std::vector<std::vector<NodeId>> under_;
  std::vector<std::vector<SwitchId>> node_leaves_;
  std::vector<double> node_link_, intra_;
  std::vector<std::uint32_t> class_of_;                 // node -> attachment class
  std::vector<std::vector<SwitchId>> class_leaves_;     // class -> its leaves
  std::vector<std::vector<SwitchId>> class_ancestors_;  // class -> ancestors, ascending id
  std::vector<std::uint16_t> dist_;                     // [a * S + b]: switch hops; UINT16_MAX = none
  std::vector<float> width_;                            // [a * S + b]: widest link bottleneck on a shortest path
  double reference_gbps_ = 0;
  CommIntensity intensity_;
};

}  // namespace headroom::models
