#include "planner/fgd_experiment.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include "sim/errors.hpp"
#include "sim/parallel.hpp"
#include "sim/rng.hpp"
#include "traces/line_reader.hpp"
#include "traces/table.hpp"

namespace headroom::planner::fgd {

namespace gs = models::gpushare;
using policies::fgd::Policy;

namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kBig = std::numeric_limits<std::int64_t>::max() / 4;

constexpr traces::detail::Column kNodeColumns[] = {
    {"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", false},
};
constexpr traces::detail::Column kPodColumns[] = {
    {"name", true},    {"cpu_milli", true}, {"memory_mib", true},
    {"num_gpu", true}, {"gpu_milli", true}, {"gpu_spec", false},
};

double round_to(double x, double unit) { return std::round(x / unit) * unit; }

}  // namespace

OpenbInput load_openb(const std::string& nodes_csv, const std::string& pods_csv) {
  OpenbInput in;
  {
    traces::detail::LineReader lines(nodes_csv);
    traces::detail::Table t(lines, kNodeColumns, {.layout = "openb node list"});
    while (t.next()) {
      gs::ShareNode n;
      n.cpu_capacity = n.cpu_left = t.integer(1, 0, kBig);
      n.memory_capacity = n.memory_left = t.integer(2, 0, kBig);
      n.gpus = static_cast<std::int32_t>(t.integer(3, 0, gs::kMaxGpusPerNode));
      if (n.gpus > 0 && t.empty(4)) t.fail(4, "a node with GPUs needs a GPU model");
      if (n.gpus > 0) {
        try {
          n.type = in.cluster.intern_type(t.text(4));
        } catch (const std::length_error&) {  // intern_type's own bound, kMaxGpuTypes models
          t.fail(4, "a GPU model beyond the " + std::to_string(gs::kMaxGpuTypes) +
                        " the experiment tells apart (the openb node list has 7)");
        }
      }
      for (int i = 0; i < n.gpus; ++i) n.gpu_left[i] = gs::kMilli;
      in.cluster.nodes.push_back(n);
    }
    if (in.cluster.nodes.empty()) throw sim::InputError(nodes_csv, 0, 0, "", "no nodes in the node list");
  }
  traces::detail::LineReader lines(pods_csv);
  traces::detail::Table t(lines, kPodColumns, {.layout = "openb pod list"});
  while (t.next()) {
    gs::SharePod p;
    p.cpu_milli = t.integer(1, 0, kBig);
    p.memory_mib = t.integer(2, 0, kBig);
    p.num_gpu = static_cast<std::int32_t>(t.integer(3, 0, gs::kMaxGpusPerNode));
    p.gpu_milli = static_cast<std::int32_t>(t.integer(4, 0, kInt32Max));
    if (p.num_gpu == 0) {
      p.gpu_milli = 0;
    } else if (p.gpu_milli <= 0 || p.gpu_milli > gs::kMilli) {
      t.fail(4, "expected 1..1000 milli-GPU for a pod with num_gpu " + std::to_string(p.num_gpu) + ", got \"" +
                    std::string(t.text(4)) + "\"");
    } else if (p.gpu_milli < gs::kMilli && p.num_gpu != 1) {
      t.fail(4, "a fraction of a GPU needs num_gpu 1, got num_gpu " + std::to_string(p.num_gpu));
    }
    p.gpu_spec = std::string(t.text(5));
    in.cluster.resolve_types(p);
    in.pods.push_back(std::move(p));
  }
  if (in.pods.empty()) throw sim::InputError(pods_csv, 0, 0, "", "no pods in the pod list");
  return in;
}

std::vector<gs::SharePod> workload_for_seed(const std::vector<gs::SharePod>& pods, std::int64_t capacity_milli,
                                            double tune_ratio, std::uint64_t seed, bool shuffle) {
  sim::RngStream rng(seed, "fgd/workload");
  std::vector<gs::SharePod> out = pods;
  if (shuffle)
    for (std::size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[rng.below(i)]);
  if (tune_ratio <= 0 || pods.empty()) return out;
  std::int64_t demand = 0;
  for (const auto& p : out) demand += p.total_gpu_milli();
  if (demand == 0) return out;  // no GPU pod: nothing to tune against
  const double target = tune_ratio * static_cast<double>(capacity_milli);
  if (static_cast<double>(demand) > target) {
    while (static_cast<double>(demand) > target && !out.empty()) {
      const auto i = static_cast<std::size_t>(rng.below(out.size()));
      demand -= out[i].total_gpu_milli();
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return out;
  }
  // Sampled with replacement from the trace until the next pod would pass the target. As in the
  // reference (tuneUpPods), the check adds the pod's milli-GPU per device, the sum its total.
  for (;;) {
    const gs::SharePod& p = pods[rng.below(pods.size())];
    if (static_cast<double>(demand + p.gpu_milli) > target) break;
    demand += p.total_gpu_milli();
    out.push_back(p);
  }
  return out;
}

RunResult run_one(const OpenbInput& input, const gs::TargetWorkload& target, Policy policy, std::uint64_t seed,
                  const ExperimentOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.policy = policy;
  r.seed = seed;
  gs::ShareCluster cluster = input.cluster;
  // The reference names nodes with a random permutation prefix and breaks score ties on the
  // smallest name: a random node order per run, ties to the first.
  sim::RngStream node_rng(seed, "fgd/nodes");
  for (std::size_t i = cluster.nodes.size(); i > 1; --i)
    std::swap(cluster.nodes[i - 1], cluster.nodes[node_rng.below(i)]);
  const std::int64_t total_gpus = cluster.total_gpus();
  const auto pods = workload_for_seed(input.pods, total_gpus * gs::kMilli, options.tune_ratio, seed, options.shuffle);
  r.pods = static_cast<std::int64_t>(pods.size());
  gs::FragMemo memo(target);
  const policies::fgd::Context ctx{&target, &memo};
  sim::RngStream rng(seed, "fgd/placement");
  std::vector<std::int64_t> scratch;
  // Samples by arrived % (rounded): sum and count of the allocation % (rounded to 0.01).
  std::map<std::int64_t, std::pair<double, std::int64_t>> samples;
  std::int64_t arrived = 0, used = 0;
  const auto gpus = static_cast<double>(total_gpus);  // milli-GPU / GPUs / 10 = % of GPUs
  for (const auto& pod : pods) {
    arrived += pod.total_gpu_milli();
    if (const auto at = policies::fgd::place(policy, cluster.nodes, pod, ctx, rng, &scratch)) {
      cluster.nodes[at->node].place(pod, at->gpus);
      used += pod.total_gpu_milli();
    } else {
      ++r.failed;
    }
    if (total_gpus == 0) continue;
    const auto bucket = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(arrived) / gpus / 10.0));
    auto& s = samples[bucket];
    s.first += round_to(static_cast<double>(used) / gpus / 10.0, 0.01);
    ++s.second;
  }
  for (const int ratio : options.ratios) {
    double sum = 0.0;
    std::int64_t n = 0;
    if (const auto it = samples.find(ratio); it != samples.end()) {
      sum = it->second.first;
      n = it->second.second;
    } else {
      for (int b = ratio - 1; b <= ratio + 1; ++b)
        if (const auto jt = samples.find(b); jt != samples.end()) {
          sum += jt->second.first;
          n += jt->second.second;
        }
    }
    r.alloc.push_back(n == 0 ? std::nan("") : round_to(sum / static_cast<double>(n), 0.01));
  }
  const std::int64_t idle = total_gpus * gs::kMilli - used;
  r.final_frag_pct = idle > 0 ? 100.0 * gs::cluster_frag(cluster, target) / static_cast<double>(idle) : 0.0;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<RunResult> run_experiment(const OpenbInput& input, const ExperimentOptions& options) {
  std::vector<Policy> pols = options.policies;
  if (pols.empty()) pols.assign(std::begin(policies::fgd::kAllPolicies), std::end(policies::fgd::kAllPolicies));
  const gs::TargetWorkload target = gs::target_workload(input.pods, options.popularity_pct, true);
  const auto seeds = static_cast<std::size_t>(std::max(options.seeds, 0));
  std::vector<RunResult> out(pols.size() * seeds);
  sim::parallel_indices(out.size(), [&](std::size_t k) {
    out[k] = run_one(input, target, pols[k / seeds], options.first_seed + k % seeds, options);
  });
  return out;
}

ReferenceTable load_reference(const std::string& csv, const std::string& workload, const std::vector<int>& ratios) {
  std::vector<traces::detail::Column> cols{{"workload", true}, {"sc_policy", true}, {"seed", true}};
  std::vector<std::string> names;
  names.reserve(ratios.size());
  for (const int r : ratios) names.push_back(std::to_string(r));
  for (const auto& n : names) cols.push_back({n, true});
  traces::detail::LineReader lines(csv);
  traces::detail::Table t(lines, cols, {.layout = "FGD analysis_allo_discrete"});
  ReferenceTable ref;
  std::map<Policy, std::map<int, std::pair<double, int>>> sums;
  while (t.next()) {
    if (t.text(0) != workload) continue;
    const auto policy = policies::fgd::parse_policy(t.text(1));
    if (!policy) continue;
    ++ref.seeds[*policy];
    for (std::size_t i = 0; i < ratios.size(); ++i) {
      if (t.empty(3 + i)) continue;
      auto& s = sums[*policy][ratios[i]];
      s.first += t.number(3 + i);
      ++s.second;
    }
  }
  for (const auto& [p, by_ratio] : sums)
    for (const auto& [r, s] : by_ratio) ref.mean[p][r] = s.first / s.second;
  if (ref.mean.empty())
    throw sim::InputError(csv, 0, 0, "workload", "no rows for workload \"" + workload + "\" with a known policy");
  return ref;
}

std::map<Policy, std::map<int, double>> mean_alloc(const std::vector<RunResult>& runs, const std::vector<int>& ratios) {
  std::map<Policy, std::map<int, std::pair<double, int>>> sums;
  for (const auto& r : runs)
    for (std::size_t i = 0; i < ratios.size() && i < r.alloc.size(); ++i) {
      if (std::isnan(r.alloc[i])) continue;
      auto& s = sums[r.policy][ratios[i]];
      s.first += r.alloc[i];
      ++s.second;
    }
  std::map<Policy, std::map<int, double>> out;
  for (const auto& [p, by_ratio] : sums)
    for (const auto& [ratio, s] : by_ratio) out[p][ratio] = s.first / s.second;
  return out;
}

namespace {

// Policies from lowest to highest mean at one ratio (ties keep the policy order).
std::vector<Policy> ranking(const std::map<Policy, std::map<int, double>>& means, int ratio,
                            const std::vector<Policy>& pols) {
  std::vector<Policy> order;
  for (const Policy p : pols)
    if (const auto it = means.find(p); it != means.end() && it->second.count(ratio) != 0) order.push_back(p);
  std::stable_sort(order.begin(), order.end(),
                   [&](Policy a, Policy b) { return means.at(a).at(ratio) < means.at(b).at(ratio); });
  return order;
}

}  // namespace

Comparison print_table(std::ostream& os, const std::vector<RunResult>& runs, const ExperimentOptions& options,
                       const ReferenceTable* reference, double tolerance_pp) {
  Comparison cmp;
  std::vector<Policy> pols;
  for (const auto& r : runs)
    if (std::find(pols.begin(), pols.end(), r.policy) == pols.end()) pols.push_back(r.policy);
  const auto ours = mean_alloc(runs, options.ratios);
  char buf[128];
  os << "GPU allocation ratio (% of GPUs), mean over " << options.seeds << " seeds, by arrived GPU demand\n";
  std::snprintf(buf, sizeof buf, "%-14s", "policy");
  os << buf;
  for (const int r : options.ratios) {
    std::snprintf(buf, sizeof buf, reference ? " | %4d%%: ours    ref   diff" : " | %4d%%: ours", r);
    os << buf;
  }
  os << '\n';
  for (const Policy p : pols) {
    std::snprintf(buf, sizeof buf, "%-14s", std::string(policies::fgd::to_string(p)).c_str());
    os << buf;
    for (const int r : options.ratios) {
      const auto it = ours.find(p);
      const double mine = it != ours.end() && it->second.count(r) ? it->second.at(r) : std::nan("");
      if (reference == nullptr) {
        std::snprintf(buf, sizeof buf, " |      %6.2f", mine);
        os << buf;
        continue;
      }
      const auto rt = reference->mean.find(p);
      const double ref = rt != reference->mean.end() && rt->second.count(r) ? rt->second.at(r) : std::nan("");
      const double diff = mine - ref;
      std::snprintf(buf, sizeof buf, " |      %6.2f %6.2f %+6.2f", mine, ref, diff);
      os << buf;
      if (std::isnan(diff) || std::fabs(diff) > tolerance_pp) cmp.within_tolerance = false;
      if (!std::isnan(diff)) cmp.max_abs_diff = std::max(cmp.max_abs_diff, std::fabs(diff));
    }
    os << '\n';
  }
  if (reference != nullptr) {
    for (const int r : options.ratios) {
      const auto a = ranking(ours, r, pols);
      const auto b = ranking(reference->mean, r, pols);
      const bool same = a == b;
      cmp.same_order = cmp.same_order && same;
      os << "order at " << r << "%: ";
      for (std::size_t i = 0; i < a.size(); ++i) os << (i ? " < " : "") << policies::fgd::to_string(a[i]);
      if (!same) {
        os << "  (reference: ";
        for (std::size_t i = 0; i < b.size(); ++i) os << (i ? " < " : "") << policies::fgd::to_string(b[i]);
        os << ")";
      } else {
        os << "  (same as the reference)";
      }
      os << '\n';
    }
  }
  return cmp;
}

}  // namespace headroom::planner::fgd
