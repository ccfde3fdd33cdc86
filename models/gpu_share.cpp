#include "models/gpu_share.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <tuple>

namespace headroom::models::gpushare {

std::int64_t ShareNode::gpu_left_total() const {
  std::int64_t t = 0;
  for (int i = 0; i < gpus; ++i) t += gpu_left[i];
  return t;
}

std::int32_t ShareNode::fully_free_gpus() const {
  std::int32_t n = 0;
  for (int i = 0; i < gpus; ++i) n += gpu_left[i] == kMilli ? 1 : 0;
  return n;
}

int ShareNode::kinds() const {
  int n = 0;
  for (const auto c : kind_count) n += c > 0 ? 1 : 0;
  return n;
}

int ShareNode::devices_with(std::int32_t milli) const {
  int n = 0;
  for (int i = 0; i < gpus; ++i) n += gpu_left[i] >= milli ? 1 : 0;
  return n;
}

bool ShareNode::fits(const SharePod& pod) const {
  if (pod.cpu_milli > cpu_left || pod.memory_mib > memory_left) return false;
  if (pod.num_gpu <= 0 || pod.gpu_milli <= 0) return true;
  if (gpus == 0 || !accessible(pod)) return false;
  return devices_with(pod.gpu_milli) >= pod.num_gpu;
}

GpuMask ShareNode::exclusive_gpus(const SharePod& pod) const {
  GpuMask m = 0;
  int need = pod.num_gpu;
  for (int i = 0; i < gpus && need > 0; ++i)
    if (gpu_left[i] == kMilli) {
      m |= GpuMask{1} << i;
      --need;
    }
  return need == 0 ? m : 0;
}

int ShareNode::best_fit_gpu(std::int32_t milli) const {
  int best = -1;
  for (int i = 0; i < gpus; ++i)
    if (gpu_left[i] >= milli && (best < 0 || gpu_left[i] < gpu_left[best])) best = i;
  return best;
}

void ShareNode::place(const SharePod& pod, GpuMask mask) {
  cpu_left -= pod.cpu_milli;
  memory_left -= pod.memory_mib;
  if (pod.num_gpu <= 0 || pod.gpu_milli <= 0) return;
  for (int i = 0; i < gpus; ++i)
    if ((mask >> i) & 1U) gpu_left[i] -= pod.gpu_milli;
  ++kind_count[pod.shares_gpu() ? 0 : std::min(pod.num_gpu, kMaxGpusPerNode)];
}

ShareNode ShareNode::minus(const SharePod& pod) const {
  ShareNode out = *this;
  out.cpu_left -= pod.score_cpu_milli();
  if (pod.num_gpu <= 0) return out;
  std::array<int, kMaxGpusPerNode> order{};
  for (int i = 0; i < gpus; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + gpus, [&](int a, int b) { return gpu_left[a] < gpu_left[b]; });
  int need = pod.num_gpu;
  for (int k = 0; k < gpus && need > 0; ++k) {
    const int i = order[k];
    if (pod.gpu_milli <= out.gpu_left[i]) {
      out.gpu_left[i] -= pod.gpu_milli;
      --need;
    }
  }
  return out;
}

std::int64_t ShareCluster::total_gpus() const {
  std::int64_t t = 0;
  for (const auto& n : nodes) t += n.gpus;
  return t;
}

std::int64_t ShareCluster::allocated_gpu_milli() const {
  std::int64_t t = 0;
  for (const auto& n : nodes) t += static_cast<std::int64_t>(n.gpus) * kMilli - n.gpu_left_total();
  return t;
}

std::uint16_t ShareCluster::intern_type(std::string_view name) {
  for (std::size_t i = 0; i < type_names.size(); ++i)
    if (type_names[i] == name) return static_cast<std::uint16_t>(i);
  if (type_names.size() >= static_cast<std::size_t>(kMaxGpuTypes))
    throw std::length_error("more than 64 GPU models in one cluster");
  type_names.emplace_back(name);
  return static_cast<std::uint16_t>(type_names.size() - 1);
}

void ShareCluster::resolve_types(SharePod& pod) const {
  pod.any_type = true;
  pod.type_mask = 0;
  std::string_view rest = pod.gpu_spec;
  while (!rest.empty()) {
    const auto bar = rest.find('|');
    const std::string_view name = rest.substr(0, bar);
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    if (name.empty()) continue;
    pod.any_type = false;  // at least one model named: only those are allowed
    for (std::size_t i = 0; i < type_names.size(); ++i)
      if (type_names[i] == name) pod.type_mask |= std::uint64_t{1} << i;
  }
}

TargetWorkload target_workload(std::span<const SharePod> pods, int popularity_pct, bool include_cpu_pods) {
  using ShapeKey = std::tuple<std::int64_t, std::int32_t, std::int32_t, std::string>;
  std::map<ShapeKey, std::pair<std::int64_t, const SharePod*>> counts;
  std::int64_t total = 0;
  for (const auto& p : pods) {
    if (!include_cpu_pods && p.num_gpu == 0) continue;
    auto& c = counts[{p.score_cpu_milli(), p.gpu_milli, p.num_gpu, p.gpu_spec}];
    if (c.first++ == 0) c.second = &p;
    ++total;
  }
  std::vector<std::pair<ShapeKey, std::pair<std::int64_t, const SharePod*>>> sorted(counts.begin(), counts.end());
  // Decreasing count; equal counts: the larger shape first (the reference sorts by (count, CPU,
  // milli-GPU, GPU count, model list) and reverses).
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second.first != b.second.first) return a.second.first > b.second.first;
    return a.first > b.first;
  });
  TargetWorkload out;
  if (total == 0) return out;
  const double wanted = static_cast<double>(popularity_pct) * static_cast<double>(total) / 100.0;
  double cum = 0.0;
  std::size_t keep = 0;
  while (cum < wanted && keep < sorted.size()) cum += static_cast<double>(sorted[keep++].second.first);
  for (std::size_t i = 0; i < keep; ++i) {
    const auto& [key, cnt] = sorted[i];
    PodShape s;
    s.cpu_milli = std::get<0>(key);
    s.gpu_milli = std::get<1>(key);
    s.num_gpu = std::get<2>(key);
    s.gpu_spec = std::get<3>(key);
    s.any_type = cnt.second->any_type;
    s.type_mask = cnt.second->type_mask;
    // Normalised to the pods counted, then to the part kept (as the reference does, in two steps).
    s.freq = static_cast<double>(cnt.first) / static_cast<double>(total);
    if (keep < sorted.size()) s.freq /= cum / static_cast<double>(total);
    out.shapes.push_back(std::move(s));
  }
  return out;
}

FragKind classify(const ShareNode& node, const PodShape& shape) {
  if (shape.gpu_milli == 0) return node.cpu_left >= shape.cpu_milli ? FragKind::CpuShapeFits : FragKind::CpuShapeLacks;
  if (!(shape.any_type || ((shape.type_mask >> node.type) & 1U) != 0)) return FragKind::NoAccess;
  const bool gpu_ok = node.devices_with(shape.gpu_milli) >= shape.num_gpu;
  const bool cpu_ok = node.cpu_left >= shape.cpu_milli;
  if (gpu_ok) return cpu_ok ? FragKind::Satisfied : FragKind::LackCpu;
  return cpu_ok ? FragKind::LackGpu : FragKind::LackBoth;
}

std::array<double, kFragKinds> frag_amount(const ShareNode& node, const TargetWorkload& target) {
  std::array<double, kFragKinds> out{};
  const auto left = static_cast<double>(node.gpu_left_total());
  for (const auto& s : target.shapes) {
    const FragKind k = classify(node, s);
    if (k == FragKind::Satisfied) {
      // Devices too small for the shape are fragment even though the shape fits elsewhere.
      std::int64_t small = 0;
      for (int i = 0; i < node.gpus; ++i)
        if (node.gpu_left[i] < s.gpu_milli) small += node.gpu_left[i];
      out[static_cast<int>(FragKind::LackGpu)] += s.freq * static_cast<double>(small);
      out[static_cast<int>(FragKind::Satisfied)] += s.freq * (left - static_cast<double>(small));
    } else {
      out[static_cast<int>(k)] += s.freq * left;
    }
  }
  return out;
}

double frag_score(const ShareNode& node, const TargetWorkload& target) {
  const auto a = frag_amount(node, target);
  double s = 0.0;
  for (int k = 0; k < kFragKinds; ++k)
    if (k != static_cast<int>(FragKind::Satisfied)) s += a[k];
  return s;
}

double cluster_frag(const ShareCluster& cluster, const TargetWorkload& target) {
  double s = 0.0;
  for (const auto& n : cluster.nodes) s += frag_score(n, target);
  return s;
}

std::size_t FragMemo::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = static_cast<std::uint64_t>(k.cpu_left) * 0x9E3779B97F4A7C15ULL;
  h ^= (static_cast<std::uint64_t>(k.type) << 8 | k.gpus) + 0x7F4A7C15ULL + (h << 6) + (h >> 2);
  for (int i = 0; i < k.gpus; ++i)
    h ^= static_cast<std::uint64_t>(static_cast<std::uint16_t>(k.left[i])) + 0x9E3779B9ULL + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

double FragMemo::score(const ShareNode& node) {
  Key k{};
  k.cpu_left = node.cpu_left;
  k.type = node.type;
  k.gpus = static_cast<std::uint8_t>(node.gpus);
  for (int i = 0; i < node.gpus; ++i) k.left[i] = static_cast<std::int16_t>(node.gpu_left[i]);
  std::sort(k.left.begin(), k.left.begin() + node.gpus);
  const auto it = memo_.find(k);
  if (it != memo_.end()) return it->second;
  const double v = frag_score(node, *target_);
  memo_.emplace(k, v);
  return v;
}

namespace {

struct MigModel {
  std::string_view model;
  int slices;
  std::vector<MigProfile> profiles;
};

const std::vector<MigModel>& mig_models() {
  static const std::vector<MigModel> models = [] {
    auto a100 = [](std::string_view model, const char* m1, const char* m1d, const char* m2, const char* m3,
                   const char* m4, const char* m7) {
      return MigModel{model,
                      8,
                      {{m1, 1, 1, {0, 1, 2, 3, 4, 5, 6}},
                       {m1d, 1, 2, {0, 2, 4, 6}},
                       {m2, 2, 2, {0, 2, 4}},
                       {m3, 3, 4, {0, 4}},
                       {m4, 4, 4, {0}},
                       {m7, 7, 8, {0}}}};
    };
    std::vector<MigModel> v;
    v.push_back(a100("A100-40GB", "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"));
    v.push_back(a100("A100-80GB", "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
    v.push_back(a100("H100-80GB", "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
    v.push_back(
        MigModel{"A30", 4, {{"1g.6gb", 1, 1, {0, 1, 2, 3}}, {"2g.12gb", 2, 2, {0, 2}}, {"4g.24gb", 4, 4, {0}}}});
    return v;
  }();
  return models;
}

const MigModel* find_model(std::string_view model) {
  for (const auto& m : mig_models())
    if (m.model == model) return &m;
  return nullptr;
}

std::uint32_t slice_mask(const MigProfile& p, int start) { return ((std::uint32_t{1} << p.size) - 1U) << start; }

}  // namespace

std::span<const MigProfile> mig_profiles(std::string_view model) {
  const MigModel* m = find_model(model);
  return m != nullptr ? std::span<const MigProfile>(m->profiles) : std::span<const MigProfile>();
}

int mig_memory_slices(std::string_view model) {
  const MigModel* m = find_model(model);
  return m != nullptr ? m->slices : 0;
}

const MigProfile* find_mig_profile(std::string_view model, std::string_view name) {
  for (const auto& p : mig_profiles(model))
    if (p.name == name) return &p;
  return nullptr;
}

int MigDevice::free_slices() const {
  int n = 0;
  for (int i = 0; i < slices; ++i) n += ((used >> i) & 1U) == 0 ? 1 : 0;
  return n;
}

int MigDevice::first_fit(const MigProfile& p) const {
  for (const int start : p.starts)
    if (start + p.size <= slices && (used & slice_mask(p, start)) == 0) return start;
  return -1;
}

int MigDevice::last_fit(const MigProfile& p) const {
  for (auto it = p.starts.rbegin(); it != p.starts.rend(); ++it)
    if (*it + p.size <= slices && (used & slice_mask(p, *it)) == 0) return *it;
  return -1;
}

void MigDevice::take(const MigProfile& p, int start) { used |= slice_mask(p, start); }

void MigDevice::release(const MigProfile& p, int start) { used &= ~slice_mask(p, start); }

int MigDevice::room_for(const MigProfile& p) const {
  MigDevice d = *this;
  int n = 0;
  for (int start = d.first_fit(p); start >= 0; start = d.first_fit(p)) {
    d.take(p, start);
    ++n;
  }
  return n;
}

std::vector<std::string_view> mig_models_for(std::string_view gpu_type) {
  // Upper case, separators as '-': "NVIDIA A100 80GB PCIe" -> "A100-80GB-PCIE".
  std::string t;
  for (const char c : gpu_type)
    t += std::isalnum(static_cast<unsigned char>(c)) != 0
             ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
             : '-';
  for (const std::string_view prefix : {"NVIDIA-", "TESLA-"})
    if (t.starts_with(prefix)) t.erase(0, prefix.size());
  auto family = [&](std::string_view f) {
    return t.starts_with(f) && (t.size() == f.size() || std::isdigit(static_cast<unsigned char>(t[f.size()])) == 0);
  };
  const auto has = [&](std::string_view part) { return t.find(part) != std::string::npos; };
  if (family("A100")) {
    if (has("80G")) return {"A100-80GB"};
    if (has("40G")) return {"A100-40GB"};
    return {"A100-80GB", "A100-40GB"};
  }
  if (family("H100")) {
    if (has("NVL") || has("94G") || has("96G")) return {};
    return {"H100-80GB"};
  }
  if (family("A30")) return {"A30"};
  return {};
}

const MigProfile* place_geometry(std::string_view model, const std::map<std::string, std::int32_t>& geometry,
                                 MigDevice& device) {
  std::vector<std::pair<const MigProfile*, std::int32_t>> order;
  for (const auto& [name, n] : geometry) order.emplace_back(find_mig_profile(model, name), n);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first->size, a.first->compute) > std::tie(b.first->size, b.first->compute);
  });
  for (const auto& [p, n] : order) {
    for (std::int32_t i = 0; i < n; ++i) {
      const int start = device.last_fit(*p);
      if (start < 0) return p;
      device.take(*p, start);
    }
  }
  return nullptr;
}

std::optional<MigGeometry> mig_named_config(std::string_view model, std::string_view name) {
  const MigModel* m = find_model(model);
  if (m == nullptr) return std::nullopt;
  if (name == "all-disabled") return MigGeometry{false, {}};
  if (name == "all-enabled") return MigGeometry{true, {}};
  if (name == "all-balanced") {
    // 2 x 1g + 2g + 3g; the A30 has no 3g. The smallest 1g (the default config uses no
    // double-memory 1g).
    MigGeometry g;
    for (const int compute : {1, 2, 3}) {
      const auto it = std::find_if(m->profiles.begin(), m->profiles.end(),
                                   [&](const MigProfile& p) { return p.compute == compute; });
      if (it != m->profiles.end()) g.devices[it->name] = compute == 1 ? 2 : 1;
    }
    return g;
  }
  if (!name.starts_with("all-")) return std::nullopt;
  const MigProfile* p = find_mig_profile(model, name.substr(4));
  if (p == nullptr) return std::nullopt;
  return MigGeometry{true, {{p->name, MigDevice{m->slices, 0}.room_for(*p)}}};
}

}  // namespace headroom::models::gpushare
