#include "models/failures.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace headroom::models {

std::string node_name(const ClusterSpec& cluster, NodeId node) {
  NodeId first = 0;
  for (const auto& pool : cluster.pools) {
    const auto n = static_cast<NodeId>(std::max(pool.nodes, 0));
    if (node < first + n) return pool.name + "-" + std::to_string(node - first);
    first += n;
  }
  return "node-" + std::to_string(node);
}

std::optional<NodeId> find_node(const ClusterSpec& cluster, std::string_view name) {
  NodeId first = 0;
  for (const auto& pool : cluster.pools) {
    const auto n = static_cast<NodeId>(std::max(pool.nodes, 0));
    if (name.size() > pool.name.size() + 1 && name.substr(0, pool.name.size()) == pool.name &&
        name[pool.name.size()] == '-') {
      const std::string_view digits = name.substr(pool.name.size() + 1);
      NodeId index = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (ec == std::errc() && end == digits.data() + digits.size() && index < n &&
          (digits.size() == 1 || digits.front() != '0'))
        return first + index;
    }
    first += n;
  }
  return std::nullopt;
}

std::vector<Rack> racks_of_size(const ClusterSpec& cluster, std::int32_t nodes_per_rack) {
  std::vector<Rack> racks;
  if (nodes_per_rack <= 0) return racks;
  NodeId first = 0;
  for (const auto& pool : cluster.pools) {
    const auto n = static_cast<NodeId>(std::max(pool.nodes, 0));
    for (NodeId i = 0; i < n; i += static_cast<NodeId>(nodes_per_rack)) {
      Rack rack;
      rack.name = "rack-" + std::to_string(racks.size());
      for (NodeId k = i; k < std::min(n, i + static_cast<NodeId>(nodes_per_rack)); ++k) rack.nodes.push_back(first + k);
      racks.push_back(std::move(rack));
    }
    first += n;
  }
  return racks;
}

Tick time_to_failure(const RandomFailures& spec, sim::RngStream& rng) {
  // Inverse transform of one uniform draw, so each unit uses one number per failure.
  const double e = -std::log1p(-rng.uniform());  // Exp(1)
  double t = static_cast<double>(spec.mtbf);
  if (spec.distribution == FailureDistribution::Weibull) {
    // Scale chosen so that the mean is the MTBF: mean = scale * Gamma(1 + 1/k).
    const double k = spec.shape;
    t = t / std::tgamma(1.0 + 1.0 / k) * std::pow(e, 1.0 / k);
  } else {
    t *= e;
  }
  if (!(t < 4.0e18)) return static_cast<Tick>(4.0e18);  // effectively never (also catches NaN)
  return std::max<Tick>(1, std::llround(t));
}

Tick checkpointed_work(Tick ran, Tick interval) {
  if (interval <= 0 || ran <= 0) return 0;
  return ran / interval * interval;
}

Tick retry_backoff(const FailureSpec& spec, std::int32_t retry) {
  Tick b = spec.backoff;
  for (std::int32_t i = 1; i < retry && b < spec.backoff_max; ++i) b = b > sim::kNever / 2 ? sim::kNever : 2 * b;
  return std::min(b, spec.backoff_max);
}

}  // namespace headroom::models
