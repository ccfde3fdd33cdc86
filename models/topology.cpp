#include "models/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "models/failures.hpp"
#include "models/gpu_types.hpp"

namespace headroom::models {

namespace {

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                         boost::property<boost::edge_weight_t, double>>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;

// Switches forward traffic, nodes do not: shortest paths are searched in the switch subgraph.
struct IsSwitch {
  std::size_t first = 0;
  bool operator()(Vertex v) const { return v >= first; }
};
using SwitchGraph = boost::filtered_graph<BoostGraph, boost::keep_all, IsSwitch>;

class BfsRecorder : public boost::default_bfs_visitor {
 public:
  BfsRecorder(std::vector<std::int32_t>& dist, std::vector<Vertex>& order) : dist_(&dist), order_(&order) {}
  template <typename G>
  void discover_vertex(Vertex v, const G&) {
    order_->push_back(v);
  }
  template <typename Edge, typename G>
  void tree_edge(Edge e, const G& g) {
    (*dist_)[boost::target(e, g)] = (*dist_)[boost::source(e, g)] + 1;
  }

 private:
  std::vector<std::int32_t>* dist_;
  std::vector<Vertex>* order_;
};

constexpr double kGbitPerGByte = 8;
// The switch-to-switch tables hold kMaxSwitches^2 entries (6 bytes each: 25 MB at most).
constexpr std::size_t kMaxSwitches = 2048;

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::int32_t cluster_nodes(const ClusterSpec& cluster) { return std::max(cluster.total_nodes(), 0); }

}  // namespace

struct Topology::Graph {
  BoostGraph g;
};

double default_nvlink_gbps(std::string_view gpu_type) {
  const GpuType* t = find_gpu_type(gpu_type);
  const std::string_view name = t != nullptr ? std::string_view(t->name) : gpu_type;
  // GB/s per GPU, NVIDIA datasheets (NVLink totals; PCIe x16 for cards without NVLink).
  static const std::pair<const char*, double> kTable[] = {
      {"P100", 160},     {"V100-16G", 300}, {"V100-32G", 300}, {"T4", 32},   {"A10", 64},    {"A100-40G", 600},
      {"A100-80G", 600}, {"H100", 900},     {"H200", 900},     {"L40S", 64}, {"B200", 1800},
  };
  for (const auto& [type, gbytes] : kTable)
    if (iequal(type, name)) return gbytes * kGbitPerGByte;
  return 32 * kGbitPerGByte;  // PCIe Gen3 x16
}

// ---- generators ----

TopologySpec leaf_spine_spec(const ClusterSpec& cluster, std::int32_t nodes_per_leaf, std::int32_t leaves_per_spine,
                             double node_gbps, double leaf_uplink_gbps, double spine_uplink_gbps) {
  TopologySpec spec;
  spec.kind = "fat_tree";
  const std::int32_t n = cluster_nodes(cluster);
  nodes_per_leaf = std::max(nodes_per_leaf, 1);
  const std::int32_t leaves = static_cast<std::int32_t>((std::int64_t{n} + nodes_per_leaf - 1) / nodes_per_leaf);
  leaves_per_spine = std::clamp(leaves_per_spine, 1, std::max(leaves, 1));
  const std::int32_t spines = (leaves + leaves_per_spine - 1) / leaves_per_spine;
  for (std::int32_t l = 0; l < leaves; ++l) {
    TopologySpec::Switch s;
    s.name = "leaf-" + std::to_string(l);
    for (std::int32_t i = l * nodes_per_leaf; i < std::min(n, (l + 1) * nodes_per_leaf); ++i)
      s.nodes.push_back(static_cast<NodeId>(i));
    s.node_gbps = node_gbps;
    s.uplink_gbps = leaf_uplink_gbps;
    s.parents.push_back(static_cast<SwitchId>(leaves + l / leaves_per_spine));
    spec.switches.push_back(std::move(s));
  }
  for (std::int32_t p = 0; p < spines; ++p) {
    TopologySpec::Switch s;
    s.name = spines == 1 ? "spine" : "spine-" + std::to_string(p);
    s.level = 2;
    s.uplink_gbps = spine_uplink_gbps;
    if (spines > 1) s.parents.push_back(static_cast<SwitchId>(leaves + spines));
    spec.switches.push_back(std::move(s));
  }
  if (spines > 1) {
    TopologySpec::Switch s;
    s.name = "core";
    s.level = 3;
    spec.switches.push_back(std::move(s));
  }
  return spec;
}

TopologySpec fat_tree_k_spec(const ClusterSpec& cluster, std::int32_t k, double link_gbps) {
  TopologySpec spec;
  spec.kind = "fat_tree";
  const std::int32_t n = cluster_nodes(cluster);
  const std::int32_t half = std::clamp(k / 2, 1, 1024);
  const std::int32_t per_pod = half * half;
  const std::int32_t pods = std::min((n + per_pod - 1) / per_pod, 2 * half);
  const std::int32_t edges_total = std::min((n + half - 1) / half, pods * half);
  // Ids: edge switches (pod-major), then aggregation switches (pod-major), then core switches.
  const auto agg_id = [&](std::int32_t pod, std::int32_t a) {
    return static_cast<SwitchId>(edges_total + pod * half + a);
  };
  const auto core_id = [&](std::int32_t a, std::int32_t j) {
    return static_cast<SwitchId>(edges_total + pods * half + a * half + j);
  };
  for (std::int32_t e = 0; e < edges_total; ++e) {
    TopologySpec::Switch s;
    const std::int32_t pod = e / half;
    s.name = "edge-" + std::to_string(pod) + "-" + std::to_string(e % half);
    for (std::int32_t i = e * half; i < std::min(n, (e + 1) * half); ++i) s.nodes.push_back(static_cast<NodeId>(i));
    s.node_gbps = link_gbps;
    s.uplink_gbps = link_gbps;
    for (std::int32_t a = 0; a < half; ++a) s.parents.push_back(agg_id(pod, a));
    spec.switches.push_back(std::move(s));
  }
  for (std::int32_t pod = 0; pod < pods; ++pod)
    for (std::int32_t a = 0; a < half; ++a) {
      TopologySpec::Switch s;
      s.name = "agg-" + std::to_string(pod) + "-" + std::to_string(a);
      s.level = 2;
      s.uplink_gbps = link_gbps;
      for (std::int32_t j = 0; j < half; ++j) s.parents.push_back(core_id(a, j));
      spec.switches.push_back(std::move(s));
    }
  for (std::int32_t a = 0; a < half; ++a)
    for (std::int32_t j = 0; j < half; ++j) {
      TopologySpec::Switch s;
      s.name = "core-" + std::to_string(a) + "-" + std::to_string(j);
      s.level = 3;
      spec.switches.push_back(std::move(s));
    }
  return spec;
}

TopologySpec racks_spec(const ClusterSpec& cluster, std::int32_t nodes_per_rack, double node_gbps, double uplink_gbps) {
  TopologySpec spec;
  spec.kind = "racks";
  const auto racks = racks_of_size(cluster, nodes_per_rack);
  for (const Rack& r : racks) {
    TopologySpec::Switch s;
    s.name = r.name;
    s.nodes = r.nodes;
    s.node_gbps = node_gbps;
    s.uplink_gbps = uplink_gbps;
    s.parents.push_back(static_cast<SwitchId>(racks.size()));
    spec.switches.push_back(std::move(s));
  }
  TopologySpec::Switch spine;
  spine.name = "spine";
  spine.level = 2;
  spec.switches.push_back(std::move(spine));
  return spec;
}

TopologySpec rail_spec(const ClusterSpec& cluster, std::int32_t nodes_per_group, std::int32_t rails, double node_gbps,
                       double uplink_gbps) {
  TopologySpec spec;
  spec.kind = "rail";
  const std::int32_t n = cluster_nodes(cluster);
  nodes_per_group = std::max(nodes_per_group, 1);
  rails = std::max(rails, 1);
  const auto groups = static_cast<std::int32_t>((std::int64_t{n} + nodes_per_group - 1) / nodes_per_group);
  const auto spine = static_cast<SwitchId>(groups * rails);
  for (std::int32_t g = 0; g < groups; ++g)
    for (std::int32_t r = 0; r < rails; ++r) {
      TopologySpec::Switch s;
      s.name = "rail-" + std::to_string(g) + "-" + std::to_string(r);
      for (std::int32_t i = g * nodes_per_group; i < std::min(n, (g + 1) * nodes_per_group); ++i)
        s.nodes.push_back(static_cast<NodeId>(i));
      s.node_gbps = node_gbps;
      s.uplink_gbps = uplink_gbps;
      s.parents.push_back(spine);
      spec.switches.push_back(std::move(s));
    }
  TopologySpec::Switch top;
  top.name = "spine";
  top.level = 2;
  spec.switches.push_back(std::move(top));
  return spec;
}

// ---- Topology ----

Topology::~Topology() = default;

std::shared_ptr<const Topology> Topology::build(const ClusterSpec& cluster, const TopologySpec& spec,
                                                std::string& error) {
  const auto n = static_cast<std::size_t>(cluster_nodes(cluster));
  const std::size_t s_count = spec.switches.size();
  std::shared_ptr<Topology> t(new Topology());
  t->kind_ = spec.kind;
  t->intensity_ = spec.intensity;
  t->graph_ = std::make_unique<Graph>();
  auto fail = [&](std::string why) {
    error = std::move(why);
    return nullptr;
  };
  if (s_count == 0) return fail("the topology has no switches");
  if (s_count > kMaxSwitches)
    return fail("the topology has " + std::to_string(s_count) + " switches; at most " + std::to_string(kMaxSwitches) +
                " are supported");

  // Checks, levels and the graph.
  std::int32_t top = 0;
  t->node_leaves_.resize(n);
  t->parents_.resize(s_count);
  t->children_.resize(s_count);
  for (std::size_t s = 0; s < s_count; ++s) {
    const auto& sw = spec.switches[s];
    if (sw.level < 1) return fail("switch \"" + sw.name + "\" has level " + std::to_string(sw.level) + " (< 1)");
    if (!sw.nodes.empty() && sw.level != 1)
      return fail("switch \"" + sw.name + "\" links nodes, so it is a leaf (level 1), not level " +
                  std::to_string(sw.level));
    if (!sw.nodes.empty() && !(sw.node_gbps > 0 && std::isfinite(sw.node_gbps)))
      return fail("switch \"" + sw.name + "\": node link bandwidth must be > 0");
    if (!(sw.uplink_gbps >= 0 && std::isfinite(sw.uplink_gbps)))
      return fail("switch \"" + sw.name + "\": uplink bandwidth must be > 0");
    top = std::max(top, sw.level);
    t->names_.push_back(sw.name);
    t->level_.push_back(sw.level);
    for (NodeId node : sw.nodes) {
      if (node >= n) return fail("switch \"" + sw.name + "\" links node " + std::to_string(node) + " (no such node)");
      auto& leaves = t->node_leaves_[node];
      if (std::find(leaves.begin(), leaves.end(), static_cast<SwitchId>(s)) != leaves.end())
        return fail("switch \"" + sw.name + "\" links node " + node_name(cluster, node) + " twice");
      leaves.push_back(static_cast<SwitchId>(s));
    }
    for (SwitchId p : sw.parents) {
      if (p >= s_count) return fail("switch \"" + sw.name + "\" has a parent that does not exist");
      if (spec.switches[p].level <= sw.level)
        return fail("switch \"" + sw.name + "\" (level " + std::to_string(sw.level) + ") links up to \"" +
                    spec.switches[p].name + "\" (level " + std::to_string(spec.switches[p].level) +
                    "): a parent must be at a higher level");
      if (!spec.switches[p].nodes.empty())
        return fail("switch \"" + sw.name + "\" links up to the leaf \"" + spec.switches[p].name + "\"");
      if (std::find(t->parents_[s].begin(), t->parents_[s].end(), p) != t->parents_[s].end())
        return fail("switch \"" + sw.name + "\" links up to \"" + spec.switches[p].name + "\" twice");
      t->parents_[s].push_back(p);
      t->children_[p].push_back(static_cast<SwitchId>(s));
    }
  }
  std::vector<NodeId> left_out;
  for (NodeId node = 0; node < n; ++node)
    if (t->node_leaves_[node].empty()) left_out.push_back(node);
  if (!left_out.empty()) {
    std::string list;
    for (std::size_t i = 0; i < left_out.size() && i < 5; ++i)
      list += (list.empty() ? "" : ", ") + node_name(cluster, left_out[i]);
    if (left_out.size() > 5) list += ", ... (" + std::to_string(left_out.size()) + " nodes)";
    return fail("nodes under no switch: " + list + " (every node must link to a leaf switch)");
  }
  for (auto& c : t->children_) std::sort(c.begin(), c.end());
  t->by_level_.resize(static_cast<std::size_t>(top));
  for (std::size_t s = 0; s < s_count; ++s)
    t->by_level_[static_cast<std::size_t>(t->level_[s] - 1)].push_back(static_cast<SwitchId>(s));

  // Bandwidths: uplinks left at 0 are non-blocking (the switch's downlink total over its parents).
  std::vector<double> up(s_count, 0);
  for (const auto& level : t->by_level_)
    for (SwitchId s : level) {
      const auto& sw = spec.switches[s];
      double down = sw.node_gbps * static_cast<double>(sw.nodes.size());
      for (SwitchId c : t->children_[s]) down += up[c];
      up[s] = sw.uplink_gbps > 0 ? sw.uplink_gbps
                                 : (sw.parents.empty() ? 0 : down / static_cast<double>(sw.parents.size()));
      if (!sw.parents.empty() && !(up[s] > 0))
        return fail("switch \"" + sw.name + "\" has no bandwidth to carry up (give uplink_gbps)");
    }

  BoostGraph& g = t->graph_->g;
  g = BoostGraph(n + s_count);
  t->node_link_.assign(n, std::numeric_limits<double>::infinity());
  for (std::size_t s = 0; s < s_count; ++s) {
    const auto& sw = spec.switches[s];
    for (NodeId node : sw.nodes) {
      boost::add_edge(node, n + s, sw.node_gbps, g);
      t->node_link_[node] = std::min(t->node_link_[node], sw.node_gbps);
    }
    for (SwitchId p : sw.parents) boost::add_edge(n + s, n + p, up[s], g);
  }

  // Switch-to-switch hops and widest shortest paths: one BFS per switch in the switch subgraph.
  SwitchGraph sg(g, boost::keep_all(), IsSwitch{n});
  const auto weight = boost::get(boost::edge_weight, g);
  t->dist_.assign(s_count * s_count, UINT16_MAX);
  t->width_.assign(s_count * s_count, 0.0f);
  std::vector<std::int32_t> dist(n + s_count);
  std::vector<double> width(n + s_count);
  std::vector<Vertex> order;
  std::vector<boost::default_color_type> colors(n + s_count);
  for (std::size_t s = 0; s < s_count; ++s) {
    std::fill(dist.begin(), dist.end(), -1);
    std::fill(colors.begin(), colors.end(), boost::white_color);
    order.clear();
    dist[n + s] = 0;
    boost::breadth_first_search(
        sg, n + s,
        boost::visitor(BfsRecorder(dist, order))
            .color_map(boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g))));
    if (order.size() != s_count) {
      for (std::size_t o = 0; o < s_count; ++o)
        if (dist[n + o] < 0)
          return fail("switches \"" + spec.switches[s].name + "\" and \"" + spec.switches[o].name +
                      "\" are not connected (the fabric must be one network)");
    }
    for (Vertex v : order) {
      if (v == n + s) {
        width[v] = std::numeric_limits<double>::infinity();
      } else {
        double best = 0;
        for (auto [e, end] = boost::out_edges(v, sg); e != end; ++e) {
          const Vertex u = boost::target(*e, sg);
          if (dist[u] == dist[v] - 1) best = std::max(best, std::min(width[u], weight[*e]));
        }
        width[v] = best;
      }
      t->dist_[s * s_count + (v - n)] = static_cast<std::uint16_t>(dist[v]);
      t->width_[s * s_count + (v - n)] = static_cast<float>(width[v]);
    }
  }

  // Nodes under each switch, switches above each switch (itself included).
  t->under_.resize(s_count);
  std::vector<std::vector<SwitchId>> above(s_count);
  for (const auto& level : t->by_level_)
    for (SwitchId s : level) {
      auto& u = t->under_[s];
      u = spec.switches[s].nodes;
      for (SwitchId c : t->children_[s]) u.insert(u.end(), t->under_[c].begin(), t->under_[c].end());
      std::sort(u.begin(), u.end());
      u.erase(std::unique(u.begin(), u.end()), u.end());
    }
  for (auto level = t->by_level_.rbegin(); level != t->by_level_.rend(); ++level)
    for (SwitchId s : *level) {
      auto& a = above[s];
      a.push_back(s);
      for (SwitchId p : t->parents_[s]) a.insert(a.end(), above[p].begin(), above[p].end());
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }

  // Attachment classes: nodes with the same leaves have the same distances and ancestors.
  std::map<std::vector<SwitchId>, std::uint32_t> classes;
  t->class_of_.resize(n);
  for (NodeId node = 0; node < n; ++node) {
    auto& leaves = t->node_leaves_[node];
    std::sort(leaves.begin(), leaves.end());
    const auto [it, added] = classes.try_emplace(leaves, static_cast<std::uint32_t>(classes.size()));
    t->class_of_[node] = it->second;
    if (added) {
      t->class_leaves_.push_back(leaves);
      std::vector<SwitchId> anc;
      for (SwitchId l : leaves) anc.insert(anc.end(), above[l].begin(), above[l].end());
      std::sort(anc.begin(), anc.end());
      anc.erase(std::unique(anc.begin(), anc.end()), anc.end());
      t->class_ancestors_.push_back(std::move(anc));
    }
  }

  // Intra-node bandwidth by GPU type, and the reference bandwidth of the slowdown model.
  t->intra_.resize(n);
  NodeId first = 0;
  for (const auto& pool : cluster.pools) {
    double gbps = default_nvlink_gbps(pool.gpu_type);
    for (const auto& [type, v] : spec.nvlink_gbps)
      if (iequal(type, pool.gpu_type)) gbps = v;
    for (std::int32_t i = 0; i < pool.nodes; ++i) t->intra_[first + static_cast<NodeId>(i)] = gbps;
    first += static_cast<NodeId>(std::max(pool.nodes, 0));
  }
  t->reference_gbps_ = spec.reference_gbps;
  if (!(t->reference_gbps_ > 0))
    for (double v : t->node_link_) t->reference_gbps_ = std::max(t->reference_gbps_, v);
  return t;
}

std::size_t Topology::link_count() const { return boost::num_edges(graph_->g); }

std::optional<SwitchId> Topology::find_switch(std::string_view name) const {
  for (std::size_t s = 0; s < names_.size(); ++s)
    if (names_[s] == name) return static_cast<SwitchId>(s);
  return std::nullopt;
}

std::span<const SwitchId> Topology::switches_at(std::int32_t level) const {
  if (level < 1 || level > levels()) return {};
  return by_level_[static_cast<std::size_t>(level - 1)];
}

std::span<const SwitchId> Topology::ancestors(NodeId n) const { return class_ancestors_[class_of_[n]]; }

void Topology::classes_of(std::span<const NodeId> nodes, std::vector<std::uint32_t>& out) const {
  out.clear();
  for (NodeId n : nodes) out.push_back(class_of_[n]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

std::pair<std::int32_t, double> Topology::class_pair(std::uint32_t a, std::uint32_t b) const {
  if (a == b) return {2, std::numeric_limits<double>::infinity()};
  const std::size_t s = names_.size();
  std::int32_t best = INT32_MAX;
  double wide = 0;
  for (SwitchId la : class_leaves_[a])
    for (SwitchId lb : class_leaves_[b]) {
      const std::int32_t d = dist_[la * s + lb];
      const double w = width_[la * s + lb];
      if (d < best || (d == best && w > wide)) {
        best = d;
        wide = w;
      }
    }
  return {best + 2, wide};
}

std::int32_t Topology::hops(NodeId a, NodeId b) const {
  if (a == b) return 0;
  return class_pair(class_of_[a], class_of_[b]).first;
}

namespace {
bool several_nodes(std::span<const NodeId> nodes) {
  for (NodeId n : nodes)
    if (n != nodes.front()) return true;
  return false;
}
}  // namespace

std::int32_t Topology::max_hops(std::span<const NodeId> nodes) const {
  if (nodes.empty() || !several_nodes(nodes)) return 0;
  std::vector<std::uint32_t> cls;
  classes_of(nodes, cls);
  std::int32_t h = 2;
  for (std::size_t i = 0; i < cls.size(); ++i)
    for (std::size_t j = i + 1; j < cls.size(); ++j) h = std::max(h, class_pair(cls[i], cls[j]).first);
  return h;
}

double Topology::bottleneck_gbps(std::span<const NodeId> nodes) const {
  if (nodes.empty()) return 0;
  if (!several_nodes(nodes)) return intra_[nodes.front()];
  double b = std::numeric_limits<double>::infinity();
  for (NodeId n : nodes) b = std::min(b, node_link_[n]);
  std::vector<std::uint32_t> cls;
  classes_of(nodes, cls);
  for (std::size_t i = 0; i < cls.size(); ++i)
    for (std::size_t j = i + 1; j < cls.size(); ++j) b = std::min(b, class_pair(cls[i], cls[j]).second);
  return b;
}

SwitchId Topology::lowest_common_switch(std::span<const NodeId> nodes) const {
  if (nodes.empty()) return kNoSwitch;
  std::vector<std::uint32_t> cls;
  classes_of(nodes, cls);
  std::vector<SwitchId> common = class_ancestors_[cls.front()], next;
  for (std::size_t i = 1; i < cls.size() && !common.empty(); ++i) {
    const auto& a = class_ancestors_[cls[i]];
    next.clear();
    std::set_intersection(common.begin(), common.end(), a.begin(), a.end(), std::back_inserter(next));
    common.swap(next);
  }
  SwitchId best = kNoSwitch;
  for (SwitchId s : common)
    if (best == kNoSwitch || level_[s] < level_[best]) best = s;  // ascending ids: ties keep the smallest
  return best;
}

SwitchId Topology::lowest_fitting_domain(std::span<const std::int32_t> free_gpus, std::int64_t need,
                                         std::int32_t max_level) const {
  for (std::size_t l = 0; l < by_level_.size() && static_cast<std::int64_t>(l) < max_level; ++l) {
    const auto& level = by_level_[l];
    SwitchId best = kNoSwitch;
    std::int64_t best_spare = 0;
    for (SwitchId s : level) {
      std::int64_t sum = 0;
      for (NodeId n : under_[s])
        if (n < free_gpus.size()) sum += std::max(free_gpus[n], 0);
      if (sum < need) continue;
      if (best == kNoSwitch || sum - need < best_spare) {
        best = s;
        best_spare = sum - need;
      }
    }
    if (best != kNoSwitch) return best;
  }
  return kNoSwitch;
}

std::vector<Rack> switch_domains(const Topology& topology, std::int32_t level) {
  std::vector<Rack> out;
  for (SwitchId s : topology.switches_at(level)) {
    const auto nodes = topology.nodes_under(s);
    out.push_back({topology.switch_name(s), {nodes.begin(), nodes.end()}});
  }
  return out;
}

double Topology::slowdown(std::span<const NodeId> nodes, double comm_intensity) const {
  if (!(comm_intensity > 0) || nodes.empty() || !several_nodes(nodes)) return 1.0;
  // max_hops and bottleneck_gbps in one pass over the attachment classes.
  double b = std::numeric_limits<double>::infinity();
  for (NodeId n : nodes) b = std::min(b, node_link_[n]);
  std::vector<std::uint32_t> cls;
  classes_of(nodes, cls);
  std::int32_t h = 2;
  for (std::size_t i = 0; i < cls.size(); ++i)
    for (std::size_t j = i + 1; j < cls.size(); ++j) {
      const auto [hops, width] = class_pair(cls[i], cls[j]);
      h = std::max(h, hops);
      b = std::min(b, width);
    }
  return 1.0 + comm_intensity * (h / 2.0) * (reference_gbps_ / b);
}

double Topology::slowdown(const Placement& placement, JobKind kind) const {
  std::vector<NodeId> nodes;
  nodes.reserve(placement.size());
  for (const Slice& s : placement) nodes.push_back(s.node);
  return slowdown(nodes, intensity_.of(kind));
}

}  // namespace headroom::models
