#include "policies/baselines/fgd.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace headroom::policies::fgd {

namespace gs = models::gpushare;

namespace {

constexpr std::int64_t kMaxNodeScore = 100;
constexpr std::int64_t kMinNodeScore = 0;

double frag_of(const gs::ShareNode& node, const Context& ctx) {
  return ctx.memo != nullptr ? ctx.memo->score(node) : gs::frag_score(node, *ctx.target);
}

std::int64_t sigmoid_score(double before, double after) {
  const double x = (before - after) / 1000.0;
  return static_cast<std::int64_t>(1.0 / (1.0 + std::exp(-x)) * static_cast<double>(kMaxNodeScore));
}

std::string canonical(std::string_view s) {
  std::string out;
  for (const char c : s)
    if (std::isalpha(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view to_string(Policy p) {
  switch (p) {
    case Policy::Random: return "Random";
    case Policy::DotProd: return "DotProd";
    case Policy::GpuClustering: return "GpuClustering";
    case Policy::GpuPacking: return "GpuPacking";
    case Policy::BestFit: return "BestFit";
    case Policy::Fgd: return "FGD";
  }
  return "?";
}

std::optional<Policy> parse_policy(std::string_view name) {
  const std::string want = canonical(name);  // "06-FGD" -> "fgd", "dot-prod" -> "dotprod"
  for (const Policy p : kAllPolicies)
    if (canonical(to_string(p)) == want) return p;
  if (want == "dotproduct") return Policy::DotProd;
  return std::nullopt;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> out;
  for (const Policy p : kAllPolicies) out.emplace_back(to_string(p));
  return out;
}

std::int64_t score_dot_product(const gs::ShareNode& node, const gs::SharePod& pod) {
  const auto cpu = static_cast<double>(pod.score_cpu_milli());
  if (node.cpu_left < pod.score_cpu_milli()) return kMinNodeScore;
  const double max_cpu = static_cast<double>(gs::kMaxSpecCpuMilli);
  const double max_gpu = static_cast<double>(gs::kMaxSpecGpuMilli);
  double dot = 0.0;
  dot += static_cast<double>(node.cpu_left) / max_cpu * (cpu / max_cpu);
  dot += static_cast<double>(node.gpu_left_total()) / max_gpu * (static_cast<double>(pod.total_gpu_milli()) / max_gpu);
  const double s = 1.0 - dot / 2.0;
  return static_cast<std::int64_t>(static_cast<double>(kMaxNodeScore) * s);
}

std::int64_t score_gpu_clustering(const gs::ShareNode& node, const gs::SharePod& pod) {
  if (pod.num_gpu <= 0 || pod.gpu_milli <= 0) return kMinNodeScore;
  const int kind = pod.shares_gpu() ? 0 : std::min(pod.num_gpu, gs::kMaxGpusPerNode);
  const std::int64_t base = kMaxNodeScore / 4 * (gs::kMaxSpecGpuMilli - node.gpu_left_total()) / gs::kMaxSpecGpuMilli;
  const int kinds = node.kinds();
  if (node.kind_count[kind] > 0) return base + (kinds == 1 ? kMaxNodeScore * 3 / 4 : kMaxNodeScore * 2 / 4);
  return base + (kinds == 0 ? kMaxNodeScore / 4 : 0);
}

std::int64_t score_gpu_packing(const gs::ShareNode& node, const gs::SharePod& pod) {
  if (pod.gpu_milli <= 0) return kMinNodeScore;
  const std::int32_t free = node.fully_free_gpus();
  if (free == node.gpus) return std::max<std::int64_t>(kMaxNodeScore / 3 - free, free);
  std::array<int, gs::kMaxGpusPerNode> order{};
  for (int i = 0; i < node.gpus; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + node.gpus,
                   [&](int a, int b) { return node.gpu_left[a] < node.gpu_left[b]; });
  int need = pod.num_gpu;
  int opened = 0;
  std::int64_t free_pct = 0;
  for (int k = 0; k < node.gpus && need > 0; ++k) {
    const int i = order[k];
    if (pod.gpu_milli <= node.gpu_left[i]) {
      --need;
      if (node.gpu_left[i] == gs::kMilli) ++opened;
      free_pct += static_cast<std::int64_t>(node.gpu_left[i]) * 100 / gs::kMilli;
    }
  }
  if (need != 0) return kMinNodeScore;
  if (opened > 0) return std::max<std::int64_t>(kMaxNodeScore / 2 - opened, kMaxNodeScore / 3);
  return std::max<std::int64_t>(kMaxNodeScore - free_pct / 10, kMaxNodeScore / 2);
}

std::int64_t score_best_fit(const gs::ShareNode& node, const gs::SharePod& pod) {
  const double free[2] = {static_cast<double>(node.cpu_left), static_cast<double>(node.gpu_left_total())};
  const double req[2] = {static_cast<double>(pod.score_cpu_milli()), static_cast<double>(pod.total_gpu_milli())};
  const double max[2] = {static_cast<double>(gs::kMaxSpecCpuMilli), static_cast<double>(gs::kMaxSpecGpuMilli)};
  double s = 0.0;
  for (int i = 0; i < 2; ++i) {
    if (free[i] < req[i]) return kMinNodeScore;
    s += (free[i] - req[i]) / max[i] * 0.5;
  }
  return static_cast<std::int64_t>((1.0 - s) * static_cast<double>(kMaxNodeScore));
}

FgdScore score_fgd(const gs::ShareNode& node, const gs::SharePod& pod, const Context& ctx) {
  const double before = frag_of(node, ctx);
  FgdScore out;
  if (pod.shares_gpu()) {
    for (int i = 0; i < node.gpus; ++i) {
      if (node.gpu_left[i] < pod.gpu_milli) continue;
      // A device with the same room as an earlier one leads to the same state: the earlier wins.
      bool seen = false;
      for (int j = 0; j < i && !seen; ++j) seen = node.gpu_left[j] == node.gpu_left[i];
      if (seen) continue;
      gs::ShareNode next = node;
      next.cpu_left -= pod.score_cpu_milli();
      next.gpu_left[i] -= pod.gpu_milli;
      const std::int64_t s = sigmoid_score(before, frag_of(next, ctx));
      if (out.gpu < 0 || s > out.score) {
        out.score = s;
        out.gpu = i;
      }
    }
    return out;
  }
  out.score = sigmoid_score(before, frag_of(node.minus(pod), ctx));
  return out;
}

std::int64_t score(Policy p, const gs::ShareNode& node, const gs::SharePod& pod, const Context& ctx) {
  switch (p) {
    case Policy::Random: return 0;
    case Policy::DotProd: return score_dot_product(node, pod);
    case Policy::GpuClustering: return score_gpu_clustering(node, pod);
    case Policy::GpuPacking: return score_gpu_packing(node, pod);
    case Policy::BestFit: return score_best_fit(node, pod);
    case Policy::Fgd: return score_fgd(node, pod, ctx).score;
  }
  return 0;
}

void normalize(Policy p, std::span<std::int64_t> scores) {
  if (p != Policy::BestFit || scores.empty()) return;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  const std::int64_t lowest = *lo;
  const std::int64_t range = *hi - lowest;
  for (auto& s : scores)
    s = range == 0 ? kMinNodeScore : (s - lowest) * (kMaxNodeScore - kMinNodeScore) / range + kMinNodeScore;
}

gs::GpuMask select_gpus(Policy p, const gs::ShareNode& node, const gs::SharePod& pod, const Context& ctx,
                        sim::RngStream& rng) {
  if (pod.num_gpu <= 0 || pod.gpu_milli <= 0) return 0;
  if (!pod.shares_gpu()) return node.exclusive_gpus(pod);
  int gpu = -1;
  if (p == Policy::Random) {
    std::uint64_t seen = 0;
    for (int i = 0; i < node.gpus; ++i)
      if (node.gpu_left[i] >= pod.gpu_milli && rng.below(++seen) == 0) gpu = i;
  } else if (p == Policy::Fgd) {
    gpu = score_fgd(node, pod, ctx).gpu;
  } else {
    gpu = node.best_fit_gpu(pod.gpu_milli);
  }
  return gpu < 0 ? 0 : gs::GpuMask{1} << gpu;
}

std::optional<Placement> place(Policy p, std::span<const gs::ShareNode> nodes, const gs::SharePod& pod,
                               const Context& ctx, sim::RngStream& rng, std::vector<std::int64_t>* scratch) {
  std::vector<std::int64_t> local;
  std::vector<std::int64_t>& scores = scratch != nullptr ? *scratch : local;
  scores.clear();
  // Feasible nodes get their score, others a marker below any score.
  constexpr std::int64_t kInfeasible = std::numeric_limits<std::int64_t>::min();
  std::size_t feasible = 0;
  for (const auto& n : nodes) {
    if (n.fits(pod)) {
      scores.push_back(score(p, n, pod, ctx));
      ++feasible;
    } else {
      scores.push_back(kInfeasible);
    }
  }
  if (feasible == 0) return std::nullopt;
  if (p == Policy::BestFit) {
    std::vector<std::int64_t> feasible_scores;
    for (const auto v : scores)
      if (v != kInfeasible) feasible_scores.push_back(v);
    normalize(p, feasible_scores);
    std::size_t k = 0;
    for (auto& v : scores)
      if (v != kInfeasible) v = feasible_scores[k++];
  }
  std::uint32_t chosen = 0;
  if (p == Policy::Random) {
    // RandomScore: one feasible node drawn uniformly gets the only non-zero score.
    std::uint64_t k = rng.below(feasible);
    for (std::size_t i = 0; i < scores.size(); ++i)
      if (scores[i] != kInfeasible && k-- == 0) {
        chosen = static_cast<std::uint32_t>(i);
        break;
      }
  } else {
    // The highest score; on ties the first node (the reference's scheduler takes the smallest
    // node name, and its node names carry a random per-run prefix: shuffle the nodes for that).
    std::int64_t best = kInfeasible;
    for (std::size_t i = 0; i < scores.size(); ++i)
      if (scores[i] > best) {
        best = scores[i];
        chosen = static_cast<std::uint32_t>(i);
      }
  }
  return Placement{chosen, select_gpus(p, nodes[chosen], pod, ctx, rng)};
}

}  // namespace headroom::policies::fgd
