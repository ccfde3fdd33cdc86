// One site's nodes cut between scheduling systems (docs/split.md): routing, each system's view of
// its partition (Part), nodes moving between systems, and MultiKueue's copies of a job.
// Long file: Part (the partition view a system's policy sees) and the SplitPolicy members that
// route, move nodes and keep MultiKueue's copies all work on Part's private state (its node and job
// numbering, mirrored cluster state and dirty marks); splitting them would need that state in a
// shared header for one class's sake.
#include "policies/split/split.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <map>

#include "sim/errors.hpp"
#include "sim/suggest.hpp"

namespace headroom::policies::split {

using models::ClusterState;
using models::Job;
using models::JobState;
using models::NodeId;
using models::PoolId;

namespace {

// Each switch's uplink bandwidth on the whole site, by models::Topology::build's rule: the one given,
// else non-blocking (what its node links and its children's uplinks carry, over its parents).
std::vector<double> site_uplinks(const models::TopologySpec& spec) {
  const std::size_t n = spec.switches.size();
  std::vector<std::vector<std::size_t>> children(n);
  for (std::size_t s = 0; s < n; ++s)
    for (models::SwitchId p : spec.switches[s].parents)
      if (p < n) children[p].push_back(s);
  std::vector<std::size_t> order(n);
  for (std::size_t s = 0; s < n; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return spec.switches[a].level < spec.switches[b].level; });
  std::vector<double> up(n, 0);
  for (std::size_t s : order) {
    const auto& sw = spec.switches[s];
    double down = sw.node_gbps * static_cast<double>(sw.nodes.size());
    for (std::size_t c : children[s]) down += up[c];
    up[s] =
        sw.uplink_gbps > 0 ? sw.uplink_gbps : (sw.parents.empty() ? 0 : down / static_cast<double>(sw.parents.size()));
  }
  return up;
}

// `spec` over another numbering of some of the scenario's nodes (`id[n]`: scenario node n's id
// there, -1: left out), every switch kept with the site's uplinks and reference bandwidth.
models::TopologySpec renumbered(const models::TopologySpec& spec, const std::vector<std::int64_t>& id,
                                const std::vector<double>& uplinks, double reference_gbps) {
  models::TopologySpec out = spec;
  for (std::size_t s = 0; s < out.switches.size(); ++s) {
    auto& sw = out.switches[s];
    std::vector<NodeId> nodes;
    for (NodeId n : sw.nodes)
      if (n < id.size() && id[n] >= 0) nodes.push_back(static_cast<NodeId>(id[n]));
    std::sort(nodes.begin(), nodes.end());
    sw.nodes = std::move(nodes);
    if (!sw.parents.empty()) sw.uplink_gbps = uplinks[s];
  }
  out.reference_gbps = reference_gbps;
  return out;
}

}  // namespace

Partitioning partition_cluster(const SplitSpec& spec, const models::ClusterSpec& cluster,
                               const models::TopologySpec* topology) {
  Partitioning out;
  NodeId node = 0;
  PoolId pool = 0;
  // The engine's pools of each system's home shares: (pool name, first node, nodes).
  struct Home {
    std::string pool;
    NodeId first = 0;
    std::int32_t nodes = 0;
    PoolId engine_pool = 0;
  };
  std::vector<std::vector<Home>> homes(spec.systems.size());
  for (std::size_t si = 0; si < spec.systems.size(); ++si) {
    const System& s = spec.systems[si];
    models::ClusterSpec part;
    out.first_node.push_back(node);
    out.first_pool.push_back(pool);
    std::int32_t nodes = 0;
    for (const PoolShare& share : s.pools) {
      const auto it = std::find_if(cluster.pools.begin(), cluster.pools.end(),
                                   [&](const models::NodePool& p) { return p.name == share.pool; });
      HEADROOM_ASSERT(it != cluster.pools.end(), "split names a pool the cluster lacks (not validated)");
      models::NodePool p = *it;
      if (share.nodes >= 0) p.nodes = share.nodes;
      if (p.nodes == 0) continue;
      homes[si].push_back({p.name, node + static_cast<NodeId>(nodes), p.nodes, pool});
      nodes += p.nodes;
      part.pools.push_back(p);
      p.name += "@" + s.name;
      out.whole.pools.push_back(std::move(p));
      ++pool;
    }
    node += static_cast<NodeId>(nodes);
    out.node_count.push_back(nodes);
    out.home_pools.push_back(static_cast<std::int32_t>(part.pools.size()));
    out.parts.push_back(std::move(part));
  }
  // The scenario's node numbering: pool by pool, each pool's nodes to its shares in system order.
  std::vector<NodeId> cursor(cluster.pools.size(), 0), source_first(cluster.pools.size(), 0);
  for (std::size_t p = 1; p < cluster.pools.size(); ++p)
    source_first[p] = source_first[p - 1] + static_cast<NodeId>(std::max(cluster.pools[p - 1].nodes, 0));
  out.engine_node.assign(static_cast<std::size_t>(cluster.total_nodes()), 0);
  out.source_pool.assign(out.whole.pools.size(), 0);
  for (const auto& hs : homes)
    for (const Home& h : hs) {
      const auto p =
          static_cast<std::size_t>(std::find_if(cluster.pools.begin(), cluster.pools.end(),
                                                [&](const models::NodePool& x) { return x.name == h.pool; }) -
                                   cluster.pools.begin());
      out.source_pool[h.engine_pool] = static_cast<PoolId>(p);
      for (std::int32_t i = 0; i < h.nodes; ++i)
        out.engine_node.at(source_first[p] + cursor[p]++) = h.first + static_cast<NodeId>(i);
    }
  out.home.assign(node, 0);
  for (std::size_t si = 0; si < homes.size(); ++si)
    for (const Home& h : homes[si])
      for (std::int32_t i = 0; i < h.nodes; ++i)
        out.home[h.first + static_cast<NodeId>(i)] = static_cast<std::uint32_t>(si);
  // Each system's view: its home nodes, then a slot for every home node of a system that a move
  // hands nodes to it from (of the move's pool, or of every pool), pool by pool.
  auto index_of = [&](std::string_view name) {
    for (std::size_t s = 0; s < spec.systems.size(); ++s)
      if (spec.systems[s].name == name) return s;
    return spec.systems.size();
  };
  out.local_node.resize(spec.systems.size());
  out.local_pool.resize(spec.systems.size());
  for (std::size_t t = 0; t < spec.systems.size(); ++t) {
    std::vector<const Home*> guests;  // by source system order, then its pool order
    for (std::size_t f = 0; f < spec.systems.size(); ++f) {
      if (f == t) continue;
      for (const Home& h : homes[f]) {
        bool moved = false;
        for (const Move& m : spec.moves)
          moved = moved || (index_of(m.from) == f && index_of(m.to) == t && (m.pool.empty() || m.pool == h.pool));
        if (moved) guests.push_back(&h);
      }
    }
    models::ClusterSpec& part = out.parts[t];
    std::vector<std::vector<NodeId>> slots(part.pools.size());
    std::vector<PoolId> engine_pool;
    for (std::size_t k = 0; k < homes[t].size(); ++k) {
      engine_pool.push_back(homes[t][k].engine_pool);
      for (std::int32_t i = 0; i < homes[t][k].nodes; ++i)
        slots[k].push_back(homes[t][k].first + static_cast<NodeId>(i));
    }
    for (const Home* h : guests) {
      std::size_t k = 0;
      while (k < part.pools.size() && part.pools[k].name != h->pool) ++k;
      if (k == part.pools.size()) {
        models::NodePool p = *std::find_if(cluster.pools.begin(), cluster.pools.end(),
                                           [&](const models::NodePool& x) { return x.name == h->pool; });
        p.nodes = 0;
        part.pools.push_back(std::move(p));
        slots.emplace_back();
        engine_pool.push_back(h->engine_pool);
      }
      part.pools[k].nodes += h->nodes;
      for (std::int32_t i = 0; i < h->nodes; ++i) slots[k].push_back(h->first + static_cast<NodeId>(i));
    }
    for (const auto& v : slots) out.local_node[t].insert(out.local_node[t].end(), v.begin(), v.end());
    out.local_pool[t] = std::move(engine_pool);
  }
  if (topology != nullptr) {
    // The site's fabric in the engine's numbering, then each view's: its nodes (its slots) under
    // the same switches, with the site's bandwidths.
    const std::vector<double> up = site_uplinks(*topology);
    std::vector<std::int64_t> id(out.engine_node.begin(), out.engine_node.end());
    std::string why;
    out.whole.topology =
        models::Topology::build(out.whole, renumbered(*topology, id, up, topology->reference_gbps), why);
    if (!out.whole.topology)
      throw sim::InputError(spec.file, spec.line, spec.column, "split", "cluster.topology of the split site: " + why);
    const double reference = out.whole.topology->reference_gbps();
    for (std::size_t t = 0; t < spec.systems.size(); ++t) {
      std::vector<std::int64_t> slot(out.home.size(), -1);
      for (std::size_t i = 0; i < out.local_node[t].size(); ++i)
        slot[out.local_node[t][i]] = static_cast<std::int64_t>(i);
      for (std::size_t n = 0; n < id.size(); ++n) id[n] = slot[out.engine_node[n]];
      out.parts[t].topology = models::Topology::build(out.parts[t], renumbered(*topology, id, up, reference), why);
      if (!out.parts[t].topology)
        throw sim::InputError(spec.file, spec.systems[t].line, spec.systems[t].column,
                              "split.systems." + spec.systems[t].name,
                              "cluster.topology of this system's nodes: " + why);
      for (std::size_t n = 0; n < id.size(); ++n) id[n] = out.engine_node[n];
    }
  }
  return out;
}

std::vector<std::string> dispatch_warnings(const SplitSpec& spec, int line) {
  if (spec.dispatch != Dispatch::MultiKueue) return {};
  // The systems whose policy supports_resubmit() (the loader builds no policy to ask it).
  static constexpr std::string_view kTakesCopiesBack[] = {"kueue"};
  std::string others;
  for (const auto& s : spec.systems)
    if (std::find(std::begin(kTakesCopiesBack), std::end(kTakesCopiesBack), s.policy) == std::end(kTakesCopiesBack))
      others += (others.empty() ? "" : ", ") + s.name + " (" + s.policy + ")";
  if (others.empty()) return {};
  return {spec.file + ":" + std::to_string(line) + ": split.dispatch multikueue: cluster(s) " + others +
          " cannot take a withdrawn copy back, so a workload evicted on its worker stays with that worker instead "
          "of being dispatched again (docs/split.md)"};
}

void check_partitions(const SplitSpec& spec, const models::ClusterSpec& cluster) {
  for (const models::NodePool& pool : cluster.pools) {
    std::int64_t claimed = 0;
    bool named = false;
    for (const System& s : spec.systems)
      for (const PoolShare& share : s.pools)
        if (share.pool == pool.name) {
          named = true;
          claimed += share.nodes < 0 ? pool.nodes : share.nodes;
        }
    if (claimed != pool.nodes)
      throw sim::InputError(spec.file, spec.line, spec.column, "split",
                            "the systems hold " + std::to_string(claimed) + " nodes of pool \"" + pool.name +
                                "\", which has " + std::to_string(pool.nodes) + (named ? "" : " (no system names it)") +
                                ": every node must belong to exactly one system (a variant that changes the pool "
                                "must change the split's node counts with it)");
  }
  for (const System& s : spec.systems)
    for (const PoolShare& share : s.pools)
      if (std::none_of(cluster.pools.begin(), cluster.pools.end(),
                       [&](const models::NodePool& p) { return p.name == share.pool; }))
        throw sim::InputError(spec.file, share.line, share.column, "split.systems." + s.name,
                              "no pool named \"" + share.pool + "\" in the cluster");
}

models::FailureSpec map_failures(const models::FailureSpec& failures, const models::ClusterSpec& cluster,
                                 const Partitioning& parts) {
  models::FailureSpec out = failures;
  if (failures.empty()) return out;
  auto map_nodes = [&](std::vector<NodeId>& nodes) {
    for (NodeId& n : nodes) n = parts.engine_node.at(n);
  };
  for (models::Rack& rack : out.racks) map_nodes(rack.nodes);
  for (models::FailureEvent& e : out.events) map_nodes(e.nodes);
  for (models::RandomFailures& r : out.random) {
    for (models::Rack& sw : r.switches) map_nodes(sw.nodes);
    if (r.pools.empty()) continue;
    std::vector<PoolId> engine;
    for (PoolId p = 0; p < parts.source_pool.size(); ++p)
      if (std::find(r.pools.begin(), r.pools.end(), parts.source_pool[p]) != r.pools.end()) engine.push_back(p);
    r.pools = std::move(engine);
  }
  for (models::Maintenance& m : out.maintenance) {
    const PoolId source = m.pool;
    NodeId first = 0;
    for (PoolId p = 0; p < source; ++p) first += static_cast<NodeId>(std::max(cluster.pools[p].nodes, 0));
    m.nodes.clear();
    for (std::int32_t i = 0; i < cluster.pools.at(source).nodes; ++i)
      m.nodes.push_back(parts.engine_node.at(first + static_cast<NodeId>(i)));
    const auto it = std::find(parts.source_pool.begin(), parts.source_pool.end(), source);
    HEADROOM_ASSERT(it != parts.source_pool.end(), "split: a maintained pool went to no system");
    m.pool = static_cast<PoolId>(it - parts.source_pool.begin());
  }
  // Each node's failure stream keeps its name on the unsplit site.
  out.node_names.assign(parts.home.size(), std::string());
  for (NodeId n = 0; n < parts.engine_node.size(); ++n)
    out.node_names.at(parts.engine_node[n]) = models::node_name(cluster, n);
  return out;
}

namespace {

std::int64_t system_index(const SplitSpec& spec, std::string_view name) {
  for (std::size_t s = 0; s < spec.systems.size(); ++s)
    if (spec.systems[s].name == name) return static_cast<std::int64_t>(s);
  return -1;
}

std::uint32_t home_of(const Partitioning& parts, NodeId g) { return parts.home.at(g); }

// The first occurrence of a scheduled move at or after the run start t0 (the clock's tick 0 is
// `day_offset` ms after midnight UTC).
Tick first_occurrence(const Move& m, Tick t0, Tick day_offset) {
  if (m.daily_at < 0) return t0 + m.at;
  const Tick into_day = ((t0 + day_offset) % sim::kDay + sim::kDay) % sim::kDay;
  return t0 + ((m.daily_at - into_day) % sim::kDay + sim::kDay) % sim::kDay;
}
Tick period(const Move& m) { return m.daily_at >= 0 ? sim::kDay : m.every; }

}  // namespace

std::vector<std::uint32_t> route_jobs(const SplitSpec& spec, const models::Workload& workload) {
  struct Compiled {
    bool has_kind = false;
    models::JobKind kind{};
    bool any_tenant = true, any_queue = true;
    std::uint32_t tenant = models::kNone, queue = models::kNone;  // kNone: a name the trace lacks
    std::uint32_t to = 0;
  };
  std::vector<Compiled> routes;
  for (const Route& r : spec.routes) {
    Compiled c;
    c.has_kind = r.has_kind;
    c.kind = r.kind;
    if (!r.tenant.empty()) {
      c.any_tenant = false;
      c.tenant = workload.tenants.find(r.tenant).value_or(models::kNone);
    }
    if (!r.queue.empty()) {
      c.any_queue = false;
      c.queue = workload.queues.find(r.queue).value_or(models::kNone);
    }
    const std::int64_t to = system_index(spec, r.to);
    HEADROOM_ASSERT(to >= 0, "split route to an undeclared system (not validated)");
    c.to = static_cast<std::uint32_t>(to);
    routes.push_back(c);
  }
  const std::int64_t fallback = spec.default_to.empty() ? -1 : system_index(spec, spec.default_to);
  std::vector<std::uint32_t> out(workload.jobs.size());
  for (std::size_t j = 0; j < workload.jobs.size(); ++j) {
    const Job& job = workload.jobs[j];
    std::int64_t to = fallback;
    for (const Compiled& c : routes) {
      if (c.has_kind && c.kind != job.kind) continue;
      if (!c.any_tenant && c.tenant != job.tenant) continue;
      if (!c.any_queue && c.queue != job.queue) continue;
      to = c.to;
      break;
    }
    if (to < 0) {
      auto name = [](const models::NameTable& t, std::uint32_t id) {
        return id < t.size() ? t.name(id) : std::string("(none)");
      };
      // The trace's line of the job where its reader knows it (job.line), so that the message
      // points at the row no route takes.
      const bool at_row = job.line > 0 && !workload.meta.path.empty();
      throw sim::InputError(
          workload.meta.path.empty() ? spec.file : workload.meta.path, at_row ? static_cast<int>(job.line) : 0, 0,
          "split.routes",
          "job " + std::to_string(job.trace_id) + " of the trace (tenant " + name(workload.tenants, job.tenant) +
              ", queue " + name(workload.queues, job.queue) + ", kind " + std::string(models::to_string(job.kind)) +
              ") matches no route of split.routes (" + spec.file + ":" + std::to_string(spec.line) + ":" +
              std::to_string(spec.column) + ") and split.default is not set; add a route for it or `default: SYSTEM`");
    }
    out[j] = static_cast<std::uint32_t>(to);
  }
  return out;
}

SplitSpec split_variant(const SplitSpec& spec, const models::ClusterSpec& cluster, std::string_view text,
                        const std::string& where) {
  auto fail = [&](const std::string& msg) {
    throw sim::InputError("", 0, 0, where,
                          msg +
                              " (expected SYSTEM=SHARE/SYSTEM=SHARE..., shares adding up to 1, e.g. "
                              "slurm=0.7/kueue=0.3)");
  };
  if (!spec.declared()) fail("the scenario has no split: block to vary");
  std::vector<double> share(spec.systems.size(), -1);
  std::vector<std::string> names;
  for (const System& s : spec.systems) names.push_back(s.name);
  std::size_t at = 0;
  double sum = 0;
  while (at <= text.size()) {
    const std::size_t slash = std::min(text.find('/', at), text.size());
    std::string_view item = text.substr(at, slash - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    // "slurm=0.7" or "slurm 0.7".
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) eq = item.rfind(' ');
    if (eq == std::string_view::npos) fail("\"" + std::string(item) + "\" is not SYSTEM=SHARE");
    std::string name(item.substr(0, eq));
    while (!name.empty() && name.back() == ' ') name.pop_back();
    const std::int64_t s = system_index(spec, name);
    if (s < 0) {
      std::string msg = "no system named \"" + name + "\" in the scenario's split";
      if (auto m = sim::closest_match(name, names)) msg += "; did you mean \"" + *m + "\"?";
      fail(msg);
    }
    std::string value(item.substr(eq + 1));
    while (!value.empty() && value.front() == ' ') value.erase(value.begin());
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(v > 0 && v <= 1))
      fail("share \"" + value + "\" of " + name + " is not a number in (0, 1]");
    if (share[static_cast<std::size_t>(s)] >= 0) fail("system " + name + " is given twice");
    share[static_cast<std::size_t>(s)] = v;
    sum += v;
    at = slash + 1;
  }
  for (std::size_t s = 0; s < share.size(); ++s)
    if (share[s] < 0) fail("no share for system " + spec.systems[s].name);
  if (std::abs(sum - 1.0) > 1e-6) fail("the shares add up to " + std::to_string(sum) + ", not 1");
  SplitSpec out = spec;
  for (const models::NodePool& pool : cluster.pools) {
    std::vector<std::pair<std::size_t, std::size_t>> holders;  // (system, share index)
    for (std::size_t s = 0; s < out.systems.size(); ++s)
      for (std::size_t k = 0; k < out.systems[s].pools.size(); ++k)
        if (out.systems[s].pools[k].pool == pool.name) holders.emplace_back(s, k);
    if (holders.size() < 2) continue;
    double weight = 0;
    for (auto [s, k] : holders) weight += share[s];
    std::int32_t given = 0;
    for (std::size_t h = 0; h < holders.size(); ++h) {
      const auto [s, k] = holders[h];
      const std::int32_t n =
          h + 1 == holders.size()
              ? pool.nodes - given
              : std::min(pool.nodes - given, static_cast<std::int32_t>(std::llround(pool.nodes * share[s] / weight)));
      out.systems[s].pools[k].nodes = n;
      given += n;
    }
  }
  for (System& s : out.systems) {
    std::erase_if(s.pools, [](const PoolShare& p) { return p.nodes == 0; });
    if (s.pools.empty()) fail("system " + s.name + " would get no node");
  }
  return out;
}

void check_moves(const SplitSpec& spec, const Partitioning& parts, const std::vector<std::uint32_t>& route,
                 const models::Workload& workload) {
  if (spec.moves.empty() || workload.jobs.empty()) return;
  const std::size_t n = spec.systems.size();
  // Nodes each system holds, in all and by pool name.
  std::vector<std::int64_t> total(n, 0);
  std::vector<std::map<std::string, std::int64_t>> by_pool(n);
  for (std::size_t s = 0; s < n; ++s)
    for (std::int32_t p = 0; p < parts.home_pools[s]; ++p) {
      const models::NodePool& pool = parts.parts[s].pools[static_cast<std::size_t>(p)];
      const std::int32_t home = parts.whole.pools[parts.first_pool[s] + static_cast<PoolId>(p)].nodes;
      total[s] += home;
      by_pool[s][pool.name] += home;
    }
  const Tick t0 = workload.jobs.front().submit, last = workload.jobs.back().submit;
  const Tick day_offset = workload.meta.unix_start >= 0 ? (workload.meta.unix_start * sim::kSecond) % sim::kDay : 0;
  // The scheduled moves' occurrences up to the last submit, in time order (rule order at one
  // instant), at most kMaxOccurrences of them (the check stops there).
  constexpr std::size_t kMaxOccurrences = 100'000;
  std::vector<std::pair<Tick, std::size_t>> when;
  for (std::size_t r = 0; r < spec.moves.size() && when.size() < kMaxOccurrences; ++r) {
    const Move& m = spec.moves[r];
    if (m.on_demand) continue;
    const Tick every = period(m);
    for (Tick t = first_occurrence(m, t0, day_offset); t <= last && when.size() < kMaxOccurrences; t += every) {
      when.emplace_back(t, r);
      if (every <= 0) break;
    }
  }
  std::sort(when.begin(), when.end());
  // Jobs routed to each system, by submit time (the workload is sorted by submit).
  std::vector<std::vector<std::size_t>> jobs_of(n);
  for (std::size_t j = 0; j < route.size(); ++j) jobs_of[route[j]].push_back(j);
  // "1d 2h 3m 4s" (zero parts left out), or seconds with their milliseconds.
  auto fmt = [&](Tick t) {
    t -= t0;
    if (t % sim::kSecond != 0) return std::to_string(t / sim::kSecond) + "." + std::to_string(t % sim::kSecond) + "s";
    std::string out;
    const std::pair<Tick, const char*> parts[] = {
        {sim::kDay, "d"}, {sim::kHour, "h"}, {sim::kMinute, "m"}, {sim::kSecond, "s"}};
    for (const auto& [unit, name] : parts)
      if (t >= unit) {
        out += (out.empty() ? "" : " ") + std::to_string(t / unit) + name;
        t %= unit;
      }
    return out.empty() ? std::string("0s") : out;
  };
  for (std::size_t k = 0; k < when.size(); ++k) {
    const auto [t, r] = when[k];
    const Move& m = spec.moves[r];
    const auto from = static_cast<std::size_t>(system_index(spec, m.from));
    const auto to = static_cast<std::size_t>(system_index(spec, m.to));
    const std::int64_t held = m.pool.empty() ? total[from] : by_pool[from][m.pool];
    const std::string where = "split.moves[" + std::to_string(r) + "]";
    if (m.nodes > held)
      throw sim::InputError(spec.file, m.line, m.column, where,
                            "moves " + std::to_string(m.nodes) + " nodes" +
                                (m.pool.empty() ? std::string() : " of pool \"" + m.pool + "\"") + " from \"" + m.from +
                                "\" " + fmt(t) + " after the run start, when it holds " + std::to_string(held) +
                                "; the schedule must give nodes back before it takes them again");
    std::int64_t left = m.nodes;
    for (auto& [pool, count] : by_pool[from]) {
      if (!m.pool.empty() && pool != m.pool) continue;
      const std::int64_t d = std::min(left, count);
      count -= d;
      by_pool[to][pool] += d;
      left -= d;
    }
    total[from] -= m.nodes;
    total[to] += m.nodes;
    if (total[from] > 0 || jobs_of[from].empty()) continue;
    // No node left: jobs routed to `from` that arrive before a later move gives it one back (or
    // ever) would be stranded.
    Tick back = sim::kNever;
    for (const Move& b : spec.moves) {
      if (b.on_demand || static_cast<std::size_t>(system_index(spec, b.to)) != from) continue;
      // Its first occurrence after t (or at t, after this one in rule order).
      Tick u = first_occurrence(b, t0, day_offset);
      const Tick every = period(b);
      if (u < t && every > 0) u += (t - u + every - 1) / every * every;
      if (u == t && &b <= &m) u = every > 0 ? u + every : sim::kNever;
      if (u >= t) back = std::min(back, u);
    }
    const auto& mine = jobs_of[from];
    const auto first = std::lower_bound(mine.begin(), mine.end(), t,
                                        [&](std::size_t j, Tick x) { return workload.jobs[j].submit < x; });
    std::size_t stranded = 0;
    for (auto it = first; it != mine.end() && workload.jobs[*it].submit < back; ++it) ++stranded;
    if (stranded == 0) continue;
    const models::Job& job = workload.jobs[*first];
    throw sim::InputError(spec.file, m.line, m.column, where,
                          "this move leaves system \"" + m.from + "\" no node from " + fmt(t) + " after the run start" +
                              (back == sim::kNever ? std::string(" on") : " until " + fmt(back)) + ", while " +
                              std::to_string(stranded) + " job" + (stranded == 1 ? "" : "s") + " routed to it " +
                              (stranded == 1 ? "arrives" : "arrive") + " then (the first: job " +
                              std::to_string(job.trace_id) + " at " + fmt(job.submit) +
                              "); keep a node in it or route those jobs to another system");
  }
}

// One system's partition as its policy sees it: its own nodes (numbered from 0) in a cluster state
// that mirrors the engine's allocations on them, its own jobs (numbered from 0); every request is
// translated to the engine's numbering and passed on.
class SplitPolicy::Part final : public Session {
 public:
  // `to_global[i]`: the engine's node of this view's node i; `slot[g]`: the view's node of engine
  // node g, or -1; `pools[p]`: an engine pool of this view's pool p.
  Part(std::unique_ptr<Policy> policy, const models::ClusterSpec& advertised, std::vector<NodeId> to_global,
       std::vector<std::int32_t> slot, std::vector<PoolId> pools)
      : policy_(std::move(policy)),
        state_(advertised),
        to_global_(std::move(to_global)),
        slot_(std::move(slot)),
        pools_(std::move(pools)) {
    node_jobs_.resize(state_.nodes().size());
  }

  void add_job(JobIndex global, const Job& job) {
    global_.push_back(global);
    workload_.jobs.push_back(job);
  }
  void finish_jobs(const models::Workload& whole) {
    workload_.tenants = whole.tenants;
    workload_.queues = whole.queues;
    workload_.groups = whole.groups;
    workload_.qos = whole.qos;
    workload_.gpu_type_names = whole.gpu_type_names;
    workload_.node_sets = whole.node_sets;
    workload_.meta = whole.meta;
    held_.resize(global_.size());
    placement_.resize(global_.size());
    bound_.resize(global_.size());
  }

  Policy& policy() { return *policy_; }
  const Policy& policy() const { return *policy_; }
  ClusterState& state() { return state_; }
  const std::set<JobIndex>& waiting() const { return waiting_; }
  void use(const ClusterView* view, Session* session) {
    view_ = view;
    session_ = session;
  }
  // A notification may come in the middle of the system's own pass (a job it rejects ends at
  // once): the session it is using stays.
  void use(const ClusterView* view) { view_ = view; }
  JobIndex global(JobIndex local) const { return global_[local]; }
  NodeId global_node(NodeId local) const { return to_global_[local]; }
  std::int32_t slot(NodeId global) const { return slot_[global]; }

  // Bookkeeping on the engine's notifications (before the policy hears them).
  void submitted(JobIndex l) {
    if (waiting_.insert(l).second) waiting_gpus_ += std::max(workload_.jobs[l].gpus, 1);
  }
  void left(JobIndex l) {
    if (waiting_.erase(l) > 0) waiting_gpus_ -= std::max(workload_.jobs[l].gpus, 1);
  }
  // GPUs its waiting jobs ask for (a job of a share or none: 1).
  std::int64_t waiting_gpus() const { return waiting_gpus_; }
  // A dispatched job's copy that another cluster admitted (removed here: it reads as Cancelled).
  void remove_copy(JobIndex l) {
    if (removed_.empty()) removed_.assign(global_.size(), false);
    removed_[l] = true;
    left(l);
  }
  bool removed(JobIndex l) const { return !removed_.empty() && removed_[l]; }
  // A removed copy given back (MultiKueue's re-dispatch of an evicted job): pending here again.
  void restore_copy(JobIndex l) {
    if (!removed_.empty()) removed_[l] = false;
    submitted(l);
  }
  void released(JobIndex l) {
    if (!held_[l].empty()) {
      state_.release(held_[l]);
      --holding_;
    }
    held_[l].clear();
  }
  // Jobs that hold GPUs (running, or pending with bound pods).
  std::int64_t holding() const { return holding_; }

  // Wake-ups asked for and due at `now` (dropped as they are taken).
  bool wake_due(Tick now) {
    bool due = false;
    while (!wakes_.empty() && *wakes_.begin() <= now) {
      wakes_.erase(wakes_.begin());
      due = true;
    }
    return due;
  }
  bool dirty = true;

  // ClusterView
  Tick now() const override { return view_->now(); }
  const ClusterState& cluster() const override { return state_; }
  const models::Workload& workload() const override { return workload_; }
  JobState state(JobIndex job) const override {
    return removed(job) ? JobState::Cancelled : view_->state(global_.at(job));
  }
  bool retrying(JobIndex job) const override { return view_->retrying(global_.at(job)); }
  std::size_t pending_count() const override { return waiting_.size(); }
  Tick run_start(JobIndex job) const override { return view_->run_start(global_.at(job)); }
  const models::Placement& placement(JobIndex job) const override {
    return to_local(view_->placement(global_.at(job)), placement_[job]);
  }
  bool terminating(JobIndex job) const override { return view_->terminating(global_.at(job)); }
  std::span<const JobIndex> jobs_on_node(NodeId node) const override {
    const std::span<const JobIndex> jobs = view_->jobs_on_node(to_global_.at(node));
    std::vector<JobIndex>& out = node_jobs_.at(node);
    out.clear();
    // A node that moved may hold another system's jobs while it is down in this view.
    for (JobIndex g : jobs)
      if ((*route_)[g] == index_) out.push_back((*local_of_)[g]);
    return out;
  }
  std::span<const models::Slice> bound(JobIndex job) const override {
    const std::span<const models::Slice> b = view_->bound(global_.at(job));
    models::Placement& out = bound_[job];
    out.assign(b.begin(), b.end());
    for (auto& s : out) s.node = static_cast<NodeId>(slot_[s.node]);
    return out;
  }
  std::int64_t pool_speed(JobIndex job, PoolId pool) const override {
    return view_->pool_speed(global_.at(job), pools_.at(pool));
  }

  // Session
  std::string start(JobIndex job, models::Placement placement, std::string_view reason) override {
    std::string why = session_->start(global_.at(job), to_global(placement), reason);
    if (why.empty()) {
      state_.allocate(placement);
      if (held_[job].empty()) ++holding_;
      held_[job].insert(held_[job].end(), placement.begin(), placement.end());
      left(job);
      if (owner_ != nullptr) owner_->claim(index_, global_.at(job), *view_);
    }
    return why;
  }
  std::string bind(JobIndex job, const models::Slice& slice, std::string_view reason) override {
    models::Slice g = slice;
    g.node = to_global_.at(slice.node);
    std::string why = session_->bind(global_.at(job), g, reason);
    if (why.empty()) {
      state_.allocate({slice});
      if (held_[job].empty()) ++holding_;
      held_[job].push_back(slice);
      if (owner_ != nullptr) owner_->claim(index_, global_.at(job), *view_);
    }
    return why;
  }
  std::string unbind(JobIndex job, std::string_view reason) override {
    std::string why = session_->unbind(global_.at(job), reason);
    if (why.empty()) released(job);
    return why;
  }
  void reject(JobIndex job, std::string_view reason) override {
    // A dispatched job that other clusters still hold a copy of: only this copy goes.
    if (owner_ != nullptr && owner_->drop_copy(index_, global_.at(job), *view_)) return;
    session_->reject(global_.at(job), reason);
  }
  void pending_reason(JobIndex job, std::string_view reason) override {
    session_->pending_reason(global_.at(job), reason);
  }
  std::string preempt(JobIndex job, PreemptMode mode, Tick grace, JobIndex by, std::string_view reason,
                      Tick overhead) override {
    std::string why =
        session_->preempt(global_.at(job), mode, grace, by == models::kNoJob ? by : global_.at(by), reason, overhead);
    if (why.empty() && owner_ != nullptr && mode != PreemptMode::Cancel) owner_->evicted(index_, global_.at(job));
    return why;
  }
  void wake_at(Tick time) override {
    wakes_.insert(time);
    session_->wake_at(time);
  }
  std::string fail(JobIndex job, std::string_view reason) override { return session_->fail(global_.at(job), reason); }

  // Set by SplitPolicy: global job -> local index (valid for its own jobs); global job -> its
  // system, and this system's index.
  const std::vector<JobIndex>* local_of_ = nullptr;
  const std::vector<std::uint32_t>* route_ = nullptr;
  std::uint32_t index_ = 0;
  SplitPolicy* owner_ = nullptr;  // set with a dispatcher (MultiKueue): copies are claimed

 private:
  models::Placement to_global(const models::Placement& p) const {
    models::Placement out = p;
    for (auto& s : out) s.node = to_global_.at(s.node);
    return out;
  }
  const models::Placement& to_local(const models::Placement& p, models::Placement& out) const {
    out.assign(p.begin(), p.end());
    for (auto& s : out) s.node = static_cast<NodeId>(slot_[s.node]);
    return out;
  }

  std::unique_ptr<Policy> policy_;
  ClusterState state_;
  std::vector<NodeId> to_global_;
  std::vector<std::int32_t> slot_;
  std::vector<PoolId> pools_;
  std::int64_t holding_ = 0;
  std::int64_t waiting_gpus_ = 0;
  std::vector<bool> removed_;
  models::Workload workload_;
  std::vector<JobIndex> global_;
  std::vector<models::Placement> held_;  // what the engine allocated to each job, in local node ids
  std::set<JobIndex> waiting_;           // pending and in the queue (not retrying), oldest first
  std::set<Tick> wakes_;
  const ClusterView* view_ = nullptr;
  Session* session_ = nullptr;
  // Scratch returned by reference or span: one slot per job / node, so that a policy may hold
  // one while it asks for another.
  mutable std::vector<models::Placement> placement_, bound_;
  mutable std::vector<std::vector<JobIndex>> node_jobs_;
};

SplitPolicy::SplitPolicy(std::vector<std::unique_ptr<Policy>> policies, Partitioning parts,
                         const models::Workload& workload, std::vector<std::uint32_t> route, const SplitSpec* spec)
    : route_(std::move(route)) {
  std::string file;
  workload_ = &workload;
  if (spec != nullptr) {
    file = spec->file;
    dispatch_ = spec->dispatch;
    for (const Move& m : spec->moves) {
      rules_.push_back(m);
      rule_from_.push_back(static_cast<std::uint32_t>(system_index(*spec, m.from)));
      rule_to_.push_back(static_cast<std::uint32_t>(system_index(*spec, m.to)));
    }
  }
  HEADROOM_ASSERT(policies.size() == parts.parts.size(), "split: one policy per partition");
  HEADROOM_ASSERT(route_.size() == workload.jobs.size(), "split: one route per job");
  const std::size_t engine_nodes = parts.home.size();
  std::vector<models::ClusterSpec> advertised(policies.size());
  for (std::size_t s = 0; s < policies.size(); ++s) advertised[s] = policies[s]->advertised_cluster(parts.parts[s]);
  whole_.pools = engine_cluster(parts, advertised).pools;
  // A node that moves keeps the engine's pool of its home system: the receiving system must count
  // its GPUs the same way (no time-slicing or MIG on one side only).
  std::vector<PoolId> engine_pool_of(engine_nodes, 0);
  {
    NodeId n = 0;
    for (PoolId p = 0; p < whole_.pools.size(); ++p)
      for (std::int32_t i = 0; i < whole_.pools[p].nodes; ++i) engine_pool_of[n++] = p;
  }
  for (std::size_t s = 0; s < policies.size(); ++s) {
    std::vector<std::int32_t> slot(engine_nodes, -1);
    const std::vector<NodeId>& nodes = parts.local_node[s];
    NodeId i = 0;
    for (std::size_t p = 0; p < advertised[s].pools.size(); ++p) {
      const models::NodePool& mine = advertised[s].pools[p];
      for (std::int32_t k = 0; k < mine.nodes; ++k, ++i) {
        const NodeId g = nodes.at(i);
        slot[g] = static_cast<std::int32_t>(i);
        const models::NodePool& engine = whole_.pools[engine_pool_of[g]];
        if (engine.units_per_gpu != mine.units_per_gpu || engine.units_per_node != mine.units_per_node ||
            engine.time_sliced != mine.time_sliced || engine.gpus_per_node != mine.gpus_per_node) {
          const Move* m = nullptr;
          for (std::size_t r = 0; r < rules_.size() && m == nullptr; ++r)
            if (rule_to_[r] == s && rule_from_[r] == home_of(parts, g)) m = &rules_[r];
          throw sim::InputError(file, m != nullptr ? m->line : 0, m != nullptr ? m->column : 0, "split.moves",
                                "a node of pool " + engine.name + " would move to a system whose policy counts " +
                                    mine.name +
                                    "'s GPUs differently (device-plugin time-slicing or MIG on one side "
                                    "only); nodes can move only between systems that advertise them alike");
        }
      }
    }
    parts_.push_back(std::make_unique<Part>(std::move(policies[s]), advertised[s], nodes, slot, parts.local_pool[s]));
    slot_.push_back(std::move(slot));
  }
  local_.resize(route_.size());
  if (dispatch_ != Dispatch::Routes) {
    // A dispatcher decides at submit: every cluster knows every job, under its own index.
    HEADROOM_ASSERT(parts_.size() <= kMaxDispatchClusters, "split: a dispatcher over more than 64 clusters");
    for (std::size_t j = 0; j < route_.size(); ++j) {
      local_[j] = static_cast<JobIndex>(j);
      for (auto& p : parts_) p->add_job(static_cast<JobIndex>(j), workload.jobs[j]);
    }
    copies_.assign(route_.size(), 0);
    for (std::size_t s = 0; s < parts_.size(); ++s) {
      gpu_types_.emplace_back();
      pool_names_.emplace_back();
      for (const auto& pool : parts.parts[s].pools) {
        gpu_types_.back().push_back(pool.gpu_type);
        pool_names_.back().push_back(pool.name);
      }
    }
  } else {
    for (std::size_t j = 0; j < route_.size(); ++j) {
      Part& p = *parts_.at(route_[j]);
      local_[j] = static_cast<JobIndex>(p.workload().jobs.size());
      p.add_job(static_cast<JobIndex>(j), workload.jobs[j]);
    }
  }
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    parts_[s]->finish_jobs(workload);
    parts_[s]->local_of_ = &local_;
    parts_[s]->route_ = &route_;
    parts_[s]->index_ = static_cast<std::uint32_t>(s);
    if (dispatch_ == Dispatch::MultiKueue) parts_[s]->owner_ = this;
  }
  if (dispatch_ == Dispatch::MultiKueue) {
    // Re-dispatch of an evicted workload needs every cluster to take a withdrawn copy back (Kueue
    // workers do); otherwise the job stays with the cluster that admitted it.
    redispatch_ = parts_.size() > 1;
    for (const auto& p : parts_) redispatch_ = redispatch_ && p->policy().supports_resubmit();
    if (redispatch_) evicted_.assign(route_.size(), false);
  }
  boundary_ms_.assign(parts_.size(), 0);
  boundary_now_.assign(parts_.size(), 0);
  passes_.assign(parts_.size(), 0);
  if (rules_.empty()) return;
  // Moves: every node starts with its home system; the slots of other systems' nodes are down in
  // a system's view until a node moves in.
  home_ = parts.home;
  nodes_.resize(engine_nodes);
  owned_.assign(parts_.size(), 0);
  for (NodeId g = 0; g < engine_nodes; ++g) {
    nodes_[g].owner = home_[g];
    ++owned_[home_[g]];
  }
  for (std::size_t s = 0; s < parts_.size(); ++s)
    for (NodeId i = 0; i < parts_[s]->state().nodes().size(); ++i)
      if (home_[parts_[s]->global_node(i)] != s) parts_[s]->state().set_up(i, false);
  pinned_.assign(parts_.size(), 0);
  for (std::uint32_t r : route_) ++pinned_[r];
  const Tick t0 = workload.jobs.empty() ? 0 : workload.jobs.front().submit;
  last_submit_ = workload.jobs.empty() ? 0 : workload.jobs.back().submit;
  day_offset_ = workload.meta.unix_start >= 0 ? (workload.meta.unix_start * sim::kSecond) % sim::kDay : 0;
  for (const Move& m : rules_) next_at_.push_back(m.on_demand ? sim::kNever : first_occurrence(m, t0, day_offset_));
}

models::ClusterSpec engine_cluster(const Partitioning& parts, const std::vector<models::ClusterSpec>& advertised) {
  models::ClusterSpec out;
  for (std::size_t s = 0; s < advertised.size() && s < parts.parts.size(); ++s) {
    HEADROOM_ASSERT(advertised[s].pools.size() == parts.parts[s].pools.size(), "split: a policy changed its pools");
    for (std::int32_t p = 0; p < parts.home_pools[s]; ++p) {
      models::NodePool pool = advertised[s].pools[static_cast<std::size_t>(p)];
      const models::NodePool& engine = parts.whole.pools[parts.first_pool[s] + static_cast<PoolId>(p)];
      pool.name = engine.name;
      pool.nodes = engine.nodes;
      out.pools.push_back(std::move(pool));
    }
  }
  return out;
}

SplitPolicy::~SplitPolicy() = default;

models::ClusterSpec SplitPolicy::advertised_cluster(const models::ClusterSpec& spec) const {
  HEADROOM_ASSERT(spec.pools.size() == whole_.pools.size(), "split: the engine's cluster is not the partitioned one");
  models::ClusterSpec out = whole_;
  out.topology = spec.topology;
  return out;
}

SplitPolicy::Part& SplitPolicy::part_of(JobIndex job, const ClusterView& view) {
  sync_nodes(view);
  Part& p = *parts_.at(route_.at(job));
  p.use(&view);
  p.dirty = true;
  return p;
}

// Nodes that went down or came back (failures, maintenance) in the engine's state, copied into
// each partition's own (a node is up in a system's view only while that system owns it and it is
// in no move).
void SplitPolicy::sync_nodes(const ClusterView& view) {
  const ClusterState& global = view.cluster();
  if (global.up_changes() == up_changes_) return;
  up_changes_ = global.up_changes();
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    Part& p = *parts_[s];
    ClusterState& local = p.state();
    for (NodeId n = 0; n < local.nodes().size(); ++n) {
      const NodeId g = p.global_node(n);
      const bool up =
          global.node(g).up && (nodes_.empty() || (nodes_[g].owner == s && nodes_[g].phase == Phase::Active));
      if (local.node(n).up != up) {
        local.set_up(n, up);
        p.dirty = true;
      }
    }
  }
}

// Node g's standing copied into every view that has a slot for it.
void SplitPolicy::set_node(const ClusterView& view, NodeId g) {
  const bool engine_up = view.cluster().node(g).up;
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    const std::int32_t i = slot_[s][g];
    if (i < 0) continue;
    ClusterState& local = parts_[s]->state();
    const bool up = engine_up && nodes_[g].owner == s && nodes_[g].phase == Phase::Active;
    if (local.node(static_cast<NodeId>(i)).up != up) {
      local.set_up(static_cast<NodeId>(i), up);
      parts_[s]->dirty = true;
    }
  }
}

bool SplitPolicy::more_work(Tick now) const {
  if (now < last_submit_) return true;
  for (const auto& p : parts_)
    if (!p->waiting().empty() || p->holding() > 0) return true;
  return false;
}

// Node g leaves its owner for rule r's system: drained first when `drain` (it takes no new work
// and changes owner once empty), else (an idle node) at once.
void SplitPolicy::start_move(Session& session, NodeId g, std::size_t r, bool drain) {
  const Tick now = session.now();
  NodeOwner& n = nodes_[g];
  MoveEvent ev;
  ev.node = g;
  ev.from = n.owner;
  ev.to = rule_to_[r];
  ev.rule = static_cast<std::int32_t>(r);
  ev.on_demand = rules_[r].on_demand;
  ev.gpus = session.cluster().node(g).gpus;
  ev.requested = now;
  n.row = static_cast<std::int32_t>(log_.size());
  log_.push_back(ev);
  n.phase = Phase::Draining;
  n.until = drain && rules_[r].drain_deadline >= 0 ? now + rules_[r].drain_deadline : sim::kNever;
  busy_.push_back(g);
  set_node(session, g);
}

// Scheduled moves due now, drains that are done or past their deadline, and move delays that are
// over (before the systems' passes, so that they see the nodes they own now).
void SplitPolicy::run_moves(Session& session) {
  const Tick now = session.now();
  const ClusterState& engine = session.cluster();
  // Once every job has ended (nothing waits, runs or is still to come) no move begins.
  const bool work = more_work(now);
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    while (next_at_[r] <= now) {
      const Move& m = rules_[r];
      if (!work) {
        const Tick every = period(m);
        next_at_[r] = every > 0 ? next_at_[r] + (now - next_at_[r]) / every * every + every : sim::kNever;
        continue;
      }
      std::vector<std::pair<std::int64_t, NodeId>> pick;  // (order key, node)
      for (NodeId g = 0; g < nodes_.size(); ++g) {
        const NodeOwner& n = nodes_[g];
        if (n.owner != rule_from_[r] || n.phase != Phase::Active || slot_[rule_to_[r]][g] < 0) continue;
        const models::Node& node = engine.node(g);
        if (!m.pool.empty() && engine.spec().pools[node.pool].name.rfind(m.pool + "@", 0) != 0) continue;
        // The emptiest nodes first, then nodes going home, then the last nodes of the partition.
        const std::int64_t used = node.gpus - node.free_gpus + node.shared_gpus;
        const std::int64_t key = (used * 2 + (home_[g] == rule_to_[r] ? 0 : 1)) * (std::int64_t{1} << 32) +
                                 (std::int64_t{0xffffffff} - static_cast<std::int64_t>(g));
        pick.emplace_back(key, g);
      }
      std::sort(pick.begin(), pick.end());
      const std::size_t take = std::min<std::size_t>(pick.size(), static_cast<std::size_t>(m.nodes));
      for (std::size_t k = 0; k < take; ++k) start_move(session, pick[k].second, r, true);
      const Tick every = period(m);
      next_at_[r] = every > 0 ? next_at_[r] + every : sim::kNever;
    }
  }
  // Drains and delays.
  std::size_t keep = 0;
  for (std::size_t k = 0; k < busy_.size(); ++k) {
    const NodeId g = busy_[k];
    NodeOwner& n = nodes_[g];
    MoveEvent& ev = log_[static_cast<std::size_t>(n.row)];
    const Move& m = rules_[static_cast<std::size_t>(ev.rule)];
    if (n.phase == Phase::Draining) {
      if (session.jobs_on_node(g).empty()) {
        // Empty: the node changes owner, and joins the new one after the move delay.
        ev.changed = now;
        --owned_[n.owner];
        ++owned_[ev.to];
        n.owner = ev.to;
        n.phase = Phase::Moving;
        n.until = now + m.delay;
      } else if (now >= n.until) {
        // The drain deadline passed: what still runs is preempted as its owner would (requeued
        // after the grace period), once.
        std::vector<JobIndex> jobs(session.jobs_on_node(g).begin(), session.jobs_on_node(g).end());
        for (JobIndex j : jobs)
          if (session.state(j) == JobState::Running && !session.terminating(j) &&
              session
                  .preempt(j, PreemptMode::Requeue, m.grace, models::kNoJob,
                           "node drained for a move to another system: drain deadline passed")
                  .empty())
            ++ev.preempted;
        n.until = sim::kNever;
      }
    }
    if (n.phase == Phase::Moving && n.until <= now) {
      n.phase = Phase::Active;
      n.since = now;
      ev.ready = now;
      n.row = -1;
      set_node(session, g);
      continue;
    }
    busy_[keep++] = g;
  }
  busy_.resize(keep);
}

// Rules on demand, after the systems' passes: `from`'s whole idle nodes (kept by it at least
// `hold`) go to `to` when `to`'s waiting jobs would fill at least `threshold` of them.
void SplitPolicy::moves_on_demand(Session& session) {
  const Tick now = session.now();
  const ClusterState& engine = session.cluster();
  bool moved_now = false;
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    const Move& m = rules_[r];
    if (!m.on_demand) continue;
    const std::uint32_t from = rule_from_[r], to = rule_to_[r];
    const Part& wanting = *parts_[to];
    if (wanting.waiting().empty()) continue;
    // `from`'s whole idle nodes: up and all free in its view (so owned by it and in no move).
    std::vector<NodeId>& idle = scratch_idle_;
    idle.clear();
    std::int32_t width = 0;
    const ClusterState& mine = parts_[from]->state();
    for (PoolId p = 0; p < mine.pool_count(); ++p) {
      for (NodeId i : mine.nodes_with_free(p, mine.node_units(p))) {
        const NodeId g = parts_[from]->global_node(i);
        const NodeOwner& n = nodes_[g];
        if (slot_[to][g] < 0 || engine.node(g).jobs > 0) continue;
        const models::NodePool& pool = engine.spec().pools[engine.node(g).pool];
        if (!m.pool.empty() && pool.name.rfind(m.pool + "@", 0) != 0) continue;
        if (n.since != INT64_MIN && now - n.since < m.hold) continue;
        idle.push_back(g);
        width = std::max(width, pool.gpus_per_node);
      }
    }
    if (idle.empty() || width <= 0) continue;
    // The backlog that would fit such nodes, in nodes (its GPUs over a node's, rounded up), less
    // the nodes already on their way. A job counts when its widest pod fits one such node.
    std::int64_t transit = 0;
    for (NodeId g : busy_) transit += log_[static_cast<std::size_t>(nodes_[g].row)].to == to ? 1 : 0;
    std::int64_t gpus = 0;
    const std::int64_t enough = (static_cast<std::int64_t>(idle.size()) + transit) * width;
    std::size_t scanned = 0;
    for (JobIndex l : wanting.waiting()) {
      if (scanned++ == kBoundaryScan || gpus >= enough) break;
      const Job& job = wanting.workload().jobs[l];
      if (job.gpus <= 0 && job.gpu_milli <= 0 && job.gpu_memory_mib <= 0) continue;
      const std::int32_t pod = job.gpus_per_node > 0 ? job.gpus_per_node
                               : job.nodes > 0       ? (job.gpus + job.nodes - 1) / job.nodes
                                                     : std::min(job.gpus, width);
      if (pod > width) continue;
      gpus += std::max(job.gpus, 1);
    }
    const std::int64_t needed = (gpus + width - 1) / width - transit;
    std::int64_t take = std::min<std::int64_t>({needed, static_cast<std::int64_t>(idle.size()), m.nodes});
    // A system with jobs routed to it keeps a node.
    if (pinned_[from] > 0) take = std::min(take, owned_[from] - 1);
    if (take < m.threshold || take <= 0) continue;
    // Nodes going home first, then the last nodes of the partition.
    std::sort(idle.begin(), idle.end(), [&](NodeId x, NodeId y) {
      const bool hx = home_[x] == to, hy = home_[y] == to;
      return hx != hy ? hx : x > y;
    });
    for (std::int64_t k = 0; k < take; ++k) {
      const NodeId g = idle[static_cast<std::size_t>(k)];
      start_move(session, g, r, false);
      NodeOwner& n = nodes_[g];
      MoveEvent& ev = log_[static_cast<std::size_t>(n.row)];
      ev.changed = now;
      --owned_[n.owner];
      ++owned_[to];
      n.owner = to;
      n.phase = Phase::Moving;
      n.until = now + m.delay;
      moved_now = moved_now || m.delay == 0;
    }
  }
  if (moved_now) session.wake_at(now);  // a pass for the nodes that joined at once
}

bool SplitPolicy::eligible(std::size_t s, JobIndex j) const {
  const Job& job = workload_->jobs[j];
  if (job.gpu_type == 0 && job.node_set == 0) return true;
  // A pool of system s of the job's GPU type and in its node set.
  for (std::size_t k = 0; k < gpu_types_[s].size(); ++k) {
    if (job.gpu_type != 0 && gpu_types_[s][k] != workload_->gpu_type_names.at(job.gpu_type - 1u)) continue;
    if (models::in_node_set(*workload_, job, pool_names_[s][k])) return true;
  }
  return false;
}

void SplitPolicy::on_submit(const ClusterView& view, JobIndex job) {
  if (dispatch_ == Dispatch::LeastBacklog) {
    // The eligible cluster with the least backlog now: the GPUs its waiting jobs ask for, less
    // its free GPUs; the first declared among equals.
    sync_nodes(view);
    std::int64_t best = 0;
    std::int64_t pick = -1;
    for (std::size_t s = 0; s < parts_.size(); ++s) {
      if (!eligible(s, job)) continue;
      const std::int64_t backlog = parts_[s]->waiting_gpus() - parts_[s]->state().free_gpus();
      if (pick < 0 || backlog < best) best = backlog, pick = static_cast<std::int64_t>(s);
    }
    route_[job] = static_cast<std::uint32_t>(std::max<std::int64_t>(pick, 0));
  } else if (dispatch_ == Dispatch::MultiKueue) {
    // A copy in every eligible cluster (MultiKueue's AllAtOnce dispatcher).
    sync_nodes(view);
    const std::uint64_t mask = eligible_mask(job);
    copies_[job] = mask;
    route_[job] = static_cast<std::uint32_t>(std::countr_zero(mask));
    for (std::size_t s = 0; s < parts_.size(); ++s) {
      if ((mask >> s & 1u) == 0) continue;
      Part& p = *parts_[s];
      p.use(&view);
      p.dirty = true;
      p.submitted(job);
      p.policy().on_submit(p, job);
    }
    return;
  }
  Part& p = part_of(job, view);
  p.submitted(local_[job]);
  p.policy().on_submit(p, local_[job]);
}

std::uint64_t SplitPolicy::eligible_mask(JobIndex j) const {
  std::uint64_t mask = 0;
  for (std::size_t s = 0; s < parts_.size(); ++s)
    if (eligible(s, j)) mask |= std::uint64_t{1} << s;
  return mask == 0 ? 1 : mask;  // no cluster can run it: the first keeps it pending or rejects it
}

void SplitPolicy::evicted(std::uint32_t s, JobIndex j) {
  (void)s;
  if (redispatch_) evicted_[j] = true;
}

void SplitPolicy::claim(std::uint32_t s, JobIndex j, const ClusterView& view) {
  const std::uint64_t others = copies_[j] & ~(std::uint64_t{1} << s);
  route_[j] = s;
  if (others == 0) return;
  copies_[j] = std::uint64_t{1} << s;
  // The first cluster to admit the workload wins; the other clusters' copies are removed
  // (kueue pkg/controller/admissionchecks/multikueue/workload.go).
  for (std::size_t o = 0; o < parts_.size(); ++o) {
    if ((others >> o & 1u) == 0) continue;
    Part& p = *parts_[o];
    p.use(&view);
    p.remove_copy(j);
    p.dirty = true;
    p.policy().on_withdraw(p, j);
  }
}

bool SplitPolicy::drop_copy(std::uint32_t s, JobIndex j, const ClusterView& view) {
  if ((copies_[j] & ~(std::uint64_t{1} << s)) == 0) return false;
  copies_[j] &= ~(std::uint64_t{1} << s);
  route_[j] = static_cast<std::uint32_t>(std::countr_zero(copies_[j]));
  Part& p = *parts_[s];
  p.use(&view);
  p.remove_copy(j);
  p.policy().on_end(p, j);  // as the engine tells a policy of the job it rejected
  return true;
}

void SplitPolicy::job_left(const ClusterView& view, JobIndex job, void (Policy::*hook)(const ClusterView&, JobIndex)) {
  if (dispatch_ == Dispatch::MultiKueue && std::popcount(copies_[job]) > 1) {
    // Left before any cluster admitted it (withdrawn, or the run's end): every copy hears it.
    for (std::size_t s = 0; s < parts_.size(); ++s)
      if ((copies_[job] >> s & 1u) != 0) {
        Part& p = *parts_[s];
        p.use(&view);
        p.dirty = true;
        p.left(job);
        (p.policy().*hook)(p, job);
      }
    return;
  }
  Part& p = part_of(job, view);
  p.left(local_[job]);
  (p.policy().*hook)(p, local_[job]);
}

void SplitPolicy::on_end(const ClusterView& view, JobIndex job) {
  if (!evicted_.empty()) evicted_[job] = false;  // it finished within its grace period
  job_left(view, job, &Policy::on_end);
}

void SplitPolicy::on_withdraw(const ClusterView& view, JobIndex job) {
  if (!evicted_.empty()) evicted_[job] = false;
  job_left(view, job, &Policy::on_withdraw);
}

void SplitPolicy::on_requeue(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.submitted(local_[job]);
  p.policy().on_requeue(p, local_[job]);
  if (evicted_.empty() || !evicted_[job]) return;  // a failure retry stays in its worker
  // Evicted on its worker: the manager resets the admission check to Retry, the workload loses its
  // quota reservation, its remote copies are deleted and it is dispatched again to every eligible
  // worker, the first to admit it winning again (kueue pkg/controller/admissionchecks/multikueue/
  // workload.go, reconcileGroup steps 2 and 4). The cluster that evicted it keeps its copy (it
  // heard on_requeue); every other eligible cluster gets its copy back.
  evicted_[job] = false;
  const std::uint64_t mask = eligible_mask(job);
  const std::uint64_t back = mask & ~copies_[job];
  copies_[job] |= mask;
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    if ((back >> s & 1u) == 0) continue;
    Part& o = *parts_[s];
    o.use(&view);
    o.dirty = true;
    o.restore_copy(job);
    o.policy().on_resubmit(o, job);
  }
}

void SplitPolicy::on_release(const ClusterView& view, JobIndex job) {
  Part& p = part_of(job, view);
  p.released(local_[job]);
  p.policy().on_release(p, local_[job]);
}

Policy::Denial SplitPolicy::deny(const models::Workload& w, const models::Job& job) const {
  const auto j = static_cast<std::size_t>(&job - w.jobs.data());
  HEADROOM_ASSERT(j < route_.size(), "split: deny of a job outside the workload");
  const Part& p = *parts_[route_[j]];
  return p.policy().deny(p.workload(), p.workload().jobs[local_[j]]);
}

void SplitPolicy::schedule(Session& session) {
  sync_nodes(session);
  const Tick now = session.now();
  if (!rules_.empty()) run_moves(session);
  bool any = false;
  for (std::size_t s = 0; s < parts_.size(); ++s) {
    Part& p = *parts_[s];
    const bool due = p.wake_due(now);
    if (!p.dirty && !due) continue;
    p.dirty = false;
    p.use(&session, &session);
    ++passes_[s];
    p.policy().schedule(p);
    p.use(&session, nullptr);
    any = true;
  }
  // The cost of the boundary is a static split's: with a dispatcher a job may go anywhere.
  if (any && dispatch_ == Dispatch::Routes) measure_boundary(now);
  if (rules_.empty()) return;
  moves_on_demand(session);
  // The next instant a move needs a pass: a drain deadline or a move delay's end, and while there
  // is work, a scheduled move.
  Tick next = sim::kNever;
  for (NodeId g : busy_)
    if (nodes_[g].until > now) next = std::min(next, nodes_[g].until);
  if (more_work(now))
    for (Tick t : next_at_) next = std::min(next, t);
  if (next != sim::kNever) session.wake_at(next);
}

void SplitPolicy::finish(Tick end) {
  if (end <= boundary_at_) return;
  for (std::size_t s = 0; s < parts_.size(); ++s) boundary_ms_[s] += boundary_now_[s] * (end - boundary_at_);
  boundary_at_ = end;
}

// The cost of the boundary at this instant (docs/split.md): for each system A, the oldest waiting
// jobs of the other systems (at most kBoundaryScan per system) are placed, whole or not at all,
// best fit by GPUs on A's free GPUs of up nodes; the GPUs they take are A's idle GPUs that the
// other side's backlog would have used. The count holds until the next pass.
void SplitPolicy::measure_boundary(Tick now) {
  finish(now);
  boundary_at_ = now;
  std::vector<std::vector<std::int32_t>>& free = scratch_free_;  // [pool][whole free GPUs] -> nodes
  std::vector<std::int32_t>& pods = scratch_pods_;
  std::vector<std::pair<PoolId, std::int32_t>>& undo = scratch_undo_;
  for (std::size_t a = 0; a < parts_.size(); ++a) {
    boundary_now_[a] = 0;
    const ClusterState& st = parts_[a]->state();
    if (st.free_gpus() <= 0) continue;
    bool others_wait = false;
    for (std::size_t b = 0; b < parts_.size(); ++b)
      others_wait = others_wait || (b != a && !parts_[b]->waiting().empty());
    if (!others_wait) continue;
    free.resize(st.pool_count());
    std::int64_t total = 0;
    std::int32_t most = 0;  // most free whole GPUs on one node
    for (PoolId p = 0; p < st.pool_count(); ++p) {
      const models::NodePool& pool = st.spec().pools[p];
      const std::int32_t per_gpu = std::max(pool.units_per_gpu, 1);
      free[p].assign(static_cast<std::size_t>(pool.gpus_per_node) + 1, 0);
      for (std::int32_t f = 1; f <= st.node_units(p); ++f) {
        const auto nodes = static_cast<std::int32_t>(st.nodes_with_free(p, f).size());
        const std::int32_t whole = std::min(f / per_gpu, pool.gpus_per_node);
        if (nodes == 0 || whole == 0) continue;
        free[p][static_cast<std::size_t>(whole)] += nodes;
        total += static_cast<std::int64_t>(whole) * nodes;
        most = std::max(most, whole);
      }
    }
    for (std::size_t b = 0; b < parts_.size() && total > 0; ++b) {
      if (b == a) continue;
      const Part& other = *parts_[b];
      std::size_t scanned = 0;
      for (JobIndex l : other.waiting()) {
        if (scanned++ == kBoundaryScan || total <= 0) break;
        const Job& job = other.workload().jobs[l];
        if (job.gpus <= 0 && job.gpu_milli <= 0 && job.gpu_memory_mib <= 0) continue;
        // Cheap refusals first: more GPUs than A has free, or a pod wider than any free node.
        const std::int32_t need = std::max(job.gpus, 1);
        if (need > total) continue;
        const std::string* type = job.gpu_type == 0 ? nullptr : &other.workload().gpu_type_names.at(job.gpu_type - 1u);
        // A shapeless job's pods are cut as the pod systems cut them (models::PodWidth): to the
        // node size holding most of A's GPUs of the job's type.
        models::PodWidth width;
        auto usable = [&](PoolId p) {  // of the job's GPU type and node set
          return (type == nullptr || st.spec().pools[p].gpu_type == *type) &&
                 models::in_node_set(other.workload(), job, st.spec().pools[p].name);
        };
        for (PoolId p = 0; p < st.pool_count(); ++p)
          if (usable(p)) width.add(st.spec().pools[p].gpus_per_node, st.spec().pools[p].nodes);
        const std::int32_t cut = width.width();
        const bool one_pod = job.gpus <= 1 || (job.gpus_per_node <= 0 && job.nodes <= 0 && job.gpus <= cut);
        if (one_pod && need > most) continue;
        if (one_pod) {
          pods.assign(1, need);
        } else {
          pods = models::pod_gpus(job, cut);
          std::sort(pods.rbegin(), pods.rend());
          if (pods.front() > most) continue;
        }
        undo.clear();
        std::int64_t took = 0;
        bool fits = true;
        for (std::int32_t pod : pods) {
          PoolId best_pool = 0;
          std::int32_t best = -1;
          for (PoolId p = 0; p < free.size(); ++p) {
            if (!usable(p)) continue;
            for (std::int32_t f = std::max(pod, 1); f < static_cast<std::int32_t>(free[p].size()); ++f) {
              if (free[p][static_cast<std::size_t>(f)] == 0) continue;
              if (best < 0 || f < best) best = f, best_pool = p;
              break;
            }
          }
          if (best < 0) {
            fits = false;
            break;
          }
          --free[best_pool][static_cast<std::size_t>(best)];
          ++free[best_pool][static_cast<std::size_t>(best - pod)];
          undo.emplace_back(best_pool, best);
          undo.emplace_back(best_pool, -(best - pod) - 1);
          took += pod;
        }
        if (!fits) {
          for (auto [p, f] : undo) {
            if (f >= 0)
              ++free[p][static_cast<std::size_t>(f)];
            else
              --free[p][static_cast<std::size_t>(-f - 1)];
          }
          continue;
        }
        boundary_now_[a] += took;
        total -= took;
        if (took > 0) {
          // The widest free node may be gone.
          most = 0;
          for (const auto& counts : free)
            for (std::size_t f = counts.size(); f-- > 1;)
              if (counts[f] > 0) {
                most = std::max(most, static_cast<std::int32_t>(f));
                break;
              }
        }
      }
    }
  }
}

}  // namespace headroom::policies::split
