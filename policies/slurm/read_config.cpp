// Setting up from the configuration (src/slurmctld/read_config.c: partitions and node weights;
// the QOS Preempt graph; the association tree as assoc_mgr holds it; topology/tree's switches),
// once, at the first event; and make_policy.

#include <numeric>

#include "models/topology.hpp"
#include "policies/slurm/policy.hpp"

namespace headroom::policies::slurm::detail {

namespace {

// Node names <pool><index> in hostlist syntax: "gpu[0-3,8],cpu0".
std::vector<std::string> expand_hostlist(const std::string& text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = i;
    int depth = 0;
    while (j < text.size() && (text[j] != ',' || depth > 0)) {
      if (text[j] == '[') ++depth;
      if (text[j] == ']') --depth;
      ++j;
    }
    std::string item = text.substr(i, j - i);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    const auto open = item.find('[');
    if (open == std::string::npos || item.back() != ']') {
      if (!item.empty()) out.push_back(item);
    } else {
      const std::string prefix = item.substr(0, open);
      const std::string ranges = item.substr(open + 1, item.size() - open - 2);
      std::size_t k = 0;
      while (k <= ranges.size()) {
        std::size_t e = ranges.find(',', k);
        if (e == std::string::npos) e = ranges.size();
        const std::string r = ranges.substr(k, e - k);
        const auto dash = r.find('-');
        try {
          const long lo = std::stol(r.substr(0, dash));
          const long hi = dash == std::string::npos ? lo : std::stol(r.substr(dash + 1));
          for (long x = lo; x <= hi && x - lo < 1'000'000; ++x) out.push_back(prefix + std::to_string(x));
        } catch (...) {
          out.push_back(prefix + r);  // not a number: an unknown node name, reported as such
        }
        k = e + 1;
      }
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

void SlurmPolicy::init(const ClusterView& view) {
  if (ready_) return;
  ready_ = true;
  workload_ = &view.workload();
  limits_ = Limits(c_.limits);
  limits_.init(view.workload());
  const auto& cl = view.cluster();
  const auto& w = view.workload();
  const std::size_t n = cl.nodes().size(), jobs = w.jobs.size();
  weight_.assign(n, 1);
  for (NodeId id = 0; id < n; ++id) {
    const auto it = c_.node_weight.find(cl.spec().pools[cl.node(id).pool].name);
    if (it != c_.node_weight.end()) weight_[id] = it->second;
  }
  excl_.assign(n, 0);
  for (const auto& node : cl.nodes()) cap_.push_back(NodeCap{node.gpus, node.cpus, node.memory_mib});
  one_weight_ = std::all_of(weight_.begin(), weight_.end(), [&](std::int64_t w) { return w == weight_.front(); });
  any_cpus_ = std::any_of(cap_.begin(), cap_.end(), [](const NodeCap& c) { return c.cpus > 0; });
  any_mem_ = std::any_of(cap_.begin(), cap_.end(), [](const NodeCap& c) { return c.memory_mib > 0; });
  plain_nodes_ = one_weight_ && !any_cpus_ && !any_mem_;
  held_for_.assign(n, kNoJob);
  for (const auto& node : cl.nodes()) {
    total_gpus_ += node.gpus;
    total_cpus_ += node.cpus;
  }
  // Partitions.
  auto make_part = [&](const PartitionConf& conf) {
    Part p;
    p.conf = conf;
    p.member.assign(n, 0);
    for (NodeId id = 0; id < n; ++id) {
      const auto& pool = cl.spec().pools[cl.node(id).pool].name;
      if (conf.pools.empty() || std::find(conf.pools.begin(), conf.pools.end(), pool) != conf.pools.end()) {
        p.member[id] = 1;
        p.nodes.push_back(id);
        p.gpus += cl.node(id).gpus;
        p.cpus += cl.node(id).cpus;
        p.mem += cl.node(id).memory_mib;
        p.biggest = std::max(p.biggest, cl.node(id).gpus);
      }
    }
    std::stable_sort(p.nodes.begin(), p.nodes.end(), [&](NodeId a, NodeId b) { return weight_[a] < weight_[b]; });
    p.by_id = std::is_sorted(p.nodes.begin(), p.nodes.end());
    p.bits.assign((n + 63) / 64, 0);
    for (NodeId id : p.nodes) p.bits[id / 64] |= std::uint64_t{1} << (id % 64);
    return p;
  };
  configured_parts_ = !c_.partitions.empty();
  if (configured_parts_) {
    for (const auto& pc : c_.partitions) parts_.push_back(make_part(pc));
  } else {
    for (const auto& q : w.queues.names()) {
      PartitionConf pc;
      pc.name = q;
      parts_.push_back(make_part(pc));
    }
  }
  for (const auto& p : parts_) max_job_factor_ = std::max(max_job_factor_, p.conf.job_factor);
  // Node classes: the nodes grouped by which partitions hold them (kept only when a partition holds
  // part of the nodes, and the groups are few).
  if (std::any_of(parts_.begin(), parts_.end(), [&](const Part& p) { return p.nodes.size() != n; })) {
    std::map<std::vector<char>, std::uint8_t> cls_of;
    std::vector<char> sig(parts_.size());
    node_cls_.assign(n, 0);
    for (NodeId id = 0; id < n && cls_of.size() <= kMaxClasses; ++id) {
      for (std::size_t k = 0; k < parts_.size(); ++k) sig[k] = parts_[k].member[id];
      const auto [it, fresh] = cls_of.try_emplace(sig, static_cast<std::uint8_t>(cls_of.size()));
      node_cls_[id] = it->second;
      if (fresh && cls_of.size() <= kMaxClasses)
        for (std::size_t k = 0; k < parts_.size(); ++k)
          if (sig[k] != 0) parts_[k].classes.push_back(it->second);
    }
    classes_ = cls_of.size();
    if (classes_ > kMaxClasses) {
      node_cls_.clear();
      classes_ = 0;
      for (auto& p : parts_) p.classes.clear();
    }
  }
  // QOS: configured ones, then "normal" and every name of the workload not configured.
  for (const auto& q : c_.qos) qos_.push_back({q, {}, 0});
  auto qos_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < qos_.size(); ++i)
      if (qos_[i].conf.name == name) return static_cast<int>(i);
    QosR r;
    r.conf.name = name;
    qos_.push_back(r);
    return static_cast<int>(qos_.size() - 1);
  };
  normal_qos_ = qos_index("normal");
  for (const auto& q : w.qos.names()) qos_of_id_.push_back(qos_index(q));
  for (auto& q : qos_) {
    for (const auto& target : q.conf.preempt)
      for (std::size_t i = 0; i < qos_.size(); ++i)
        if (qos_[i].conf.name == target) q.preempts.push_back(static_cast<int>(i));
    max_qos_prio_ = std::max(max_qos_prio_, q.conf.priority);
  }
  // Levels in the Preempt graph (longest chain, bounded against cycles).
  for (std::size_t round = 0; round < qos_.size(); ++round)
    for (auto& q : qos_)
      for (int t : q.preempts)
        q.level = std::max(q.level, std::min<std::int64_t>(qos_[static_cast<std::size_t>(t)].level + 1,
                                                           static_cast<std::int64_t>(qos_.size())));
  // Associations.
  tree_.add("root", -1, 1, false);
  std::map<std::string, int> account, user;
  for (const auto& a : c_.accounts) account[a.name] = tree_.add(a.name, -1, static_cast<double>(a.shares), false);
  for (const auto& a : c_.accounts) {
    const int id = account[a.name];
    const int par = a.parent == "root" ? 0 : account.at(a.parent);
    tree_.parent[static_cast<std::size_t>(id)] = par;
    tree_.children[static_cast<std::size_t>(par)].push_back(id);
  }
  for (const auto& a : c_.accounts)
    for (const auto& u : a.users)
      if (user.count(u) == 0) user[u] = tree_.add(u, account[a.name], 1, true);
  for (const auto& t : w.tenants.names()) {
    if (user.count(t) != 0) {
      leaf_of_.push_back(user[t]);
    } else if (account.count(t) != 0) {
      user[t] = tree_.add(t, account[t], 1, true);
      leaf_of_.push_back(user[t]);
    } else {
      const int acc = tree_.add(t, 0, 1, false);
      user[t] = tree_.add(t, acc, 1, true);
      leaf_of_.push_back(user[t]);
    }
  }
  const std::size_t na = tree_.name.size();
  usage_.assign(na, 0);
  for (const auto& [who, u] : c_.raw_usage)  // sshare's RawUsage, on the tree's leaves
    if (const auto it = user.find(who); it != user.end()) usage_[static_cast<std::size_t>(it->second)] = u;
  pend_.assign(na, 0);
  rate_.assign(na, 0);
  since_.assign(na, 0);
  refresh_fairshare();
  // Topology.
  std::map<std::string, NodeId> node_by_name;
  for (NodeId id = 0; id < n; ++id) {
    const auto p = cl.node(id).pool;
    node_by_name[cl.spec().pools[p].name + std::to_string(id - cl.pool_first_node(p))] = id;
  }
  if (c_.switches.empty() && cl.spec().topology) use_cluster_topology(*cl.spec().topology);
  for (const auto& sc : c_.switches) {
    Switch sw;
    sw.name = sc.name;
    for (const auto& nn : expand_hostlist(sc.nodes)) {
      const auto it = node_by_name.find(nn);
      if (it != node_by_name.end()) sw.nodes.push_back(it->second);
    }
    switches_.push_back(std::move(sw));
  }
  for (std::size_t i = 0; i < c_.switches.size(); ++i)
    for (const auto& child : c_.switches[i].switches)
      for (std::size_t k = 0; k < switches_.size(); ++k)
        if (switches_[k].name == child && k != i) {
          switches_[i].children.push_back(static_cast<int>(k));
          switches_[i].leaf = false;
        }
  for (std::size_t round = 0; round < switches_.size(); ++round)
    for (auto& sw : switches_)
      for (int ch : sw.children)
        sw.level = std::max(
            sw.level, std::min(switches_[static_cast<std::size_t>(ch)].level + 1, static_cast<int>(switches_.size())));
  // Nodes below each switch (leaves first by level order).
  std::vector<std::size_t> by_level(switches_.size());
  std::iota(by_level.begin(), by_level.end(), 0);
  std::stable_sort(by_level.begin(), by_level.end(),
                   [&](std::size_t a, std::size_t b) { return switches_[a].level < switches_[b].level; });
  for (std::size_t i : by_level) {
    auto& sw = switches_[i];
    for (int ch : sw.children)
      for (NodeId id : switches_[static_cast<std::size_t>(ch)].nodes) sw.nodes.push_back(id);
    std::sort(sw.nodes.begin(), sw.nodes.end());
    sw.nodes.erase(std::unique(sw.nodes.begin(), sw.nodes.end()), sw.nodes.end());
  }
  // Per-job state.
  part_.assign(jobs, kNoPart);
  shape_.assign(jobs, {});
  limit_.assign(jobs, kUnlimited);
  used_limit_.assign(jobs, 0);
  eligible_.assign(jobs, 0);
  prio_.assign(jobs, 1);
  key_.assign(jobs, {});
  queued_.assign(jobs, 0);
  kill_at_.assign(jobs, 0);
  my_start_.assign(jobs, 0);
  rate_of_.assign(jobs, 0);
  next_calc_ = (w.jobs.empty() ? 0 : w.jobs.front().submit) + c_.calc_period;
  last_calc_ = next_calc_ - c_.calc_period;
}

// Without a topology block of its own, topology/tree follows the cluster's topology
// (cluster.topology, docs/topology.md): its switches, levels (leaf = Slurm level 0) and nodes.
void SlurmPolicy::use_cluster_topology(const models::Topology& t) {
  for (models::SwitchId i = 0; i < t.switch_count(); ++i) {
    Switch sw;
    sw.name = t.switch_name(i);
    sw.level = t.level(i) - 1;
    for (models::SwitchId ch : t.children(i)) sw.children.push_back(static_cast<int>(ch));
    sw.leaf = sw.children.empty();
    const auto under = t.nodes_under(i);
    sw.nodes.assign(under.begin(), under.end());
    switches_.push_back(std::move(sw));
  }
}

}  // namespace headroom::policies::slurm::detail

namespace headroom::policies::slurm {

std::unique_ptr<Policy> make_policy(Config config) { return std::make_unique<detail::SlurmPolicy>(std::move(config)); }

std::unique_ptr<Policy> make_policy(const PolicyParams& params) { return make_policy(parse_config(params)); }

}  // namespace headroom::policies::slurm
