#include "models/throughput.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cmath>

#include "models/gpu_types.hpp"
#include "sim/errors.hpp"

namespace headroom::models {

namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

using Wide = __int128;

Tick saturate(Wide v) { return v > static_cast<Wide>(INT64_MAX) ? INT64_MAX : static_cast<Tick>(v); }

// The default table, relative to V100 = 1 (docs/heterogeneity.md has it with the same sources).
// Columns: K80, P100, V100-16G, V100-32G, A100-40G, A100-80G, H100, H200.
//
// K80 and P100 (measured): Gavel's single-GPU throughputs, stanford-futuredata/gavel
// scheduler/simulation_throughputs.json (commit c4fa400), key "null" of each model with scale
// factor 1, divided by the V100 figure:
//   cnn            ResNet-50 (batch size 64):       K80 0.619, P100 2.619, V100 4.395 steps/s
//   transformer    Transformer (batch size 64):     K80 1.752, P100 5.092, V100 8.618
//   recommendation Recommendation (batch size 2048): K80 10.44, P100 16.60, V100 7.470
//   rl             A3C:                             K80 3.439, P100 5.681, V100 7.176
// A100 over V100:
//   transformer 2.2: the middle of Lambda's "approximately 1.95x to 2.5x faster than the V100"
//     for language-model training with FP16 tensor cores (lambdalabs.com/blog/
//     nvidia-a100-gpu-deep-learning-benchmarks-and-architectural-overview).
//   cnn, recommendation 2.0, inference 2.5 (= the FP16 tensor peak ratio 312/125 TFLOPS of the
//     datasheets) and rl 1.25 (A3C is bound by its CPU actors): ASSUMPTIONS inside the
//     1.25x-6x range that post quotes from NVIDIA's published numbers.
// H100 over A100 (MLPerf Training v3.0, closed division, Dell submissions with the same CPUs and
// GPU count, as compared by silvertonconsulting.com/2023/07/12/
// mlperf-results-show-h100-v-a100-and-v-habana-gaudi2-gpus):
//   cnn x1.8 (ResNet-50, 16 GPUs: 14.4 vs 7.8 minutes), recommendation x2.0 (DLRM, 8 GPUs: 8.4 vs
//   4.3 minutes). transformer x2.0, inference x2.0 and rl x1.0: ASSUMPTIONS.
// H200 over H100: the same dense compute (989 TFLOPS FP16, datasheets; models/gpu_types.cpp)
// with 1.4x the memory bandwidth; NVIDIA reports "up to 1.9x" on LLM inference (TensorRT-LLM
// docs/source/blogs/H200launch.md, Llama-2 70B), Baseten (baseten.com/blog/
// evaluating-nvidia-h200-gpus-for-llm-inference) "minimal" gains outside large models and batches.
//   cnn, recommendation, rl x1.0; transformer x1.1; inference x1.4: ASSUMPTIONS.
// The A100-40G and -80G, and the V100-16G and -32G, have the same compute: equal columns.
// Kind rows: train = batch = transformer (ASSUMPTION: most training today is transformer
// based); inference as above with K80/P100 taken from cnn (ASSUMPTION); interactive = 1
// everywhere (ASSUMPTION: a notebook session is human paced, a faster GPU does not shorten it).
constexpr std::array<const char*, 8> kGpus = {"K80",      "P100",     "V100-16G", "V100-32G",
                                              "A100-40G", "A100-80G", "H100",     "H200"};
struct Row {
  const char* name;
  std::array<double, 8> thr;
};
constexpr std::array<Row, 8> kRows{{
    {"cnn", {0.141, 0.596, 1, 1, 2.0, 2.0, 3.6, 3.6}},
    {"transformer", {0.203, 0.591, 1, 1, 2.2, 2.2, 4.4, 4.84}},
    {"recommendation", {1.398, 2.222, 1, 1, 2.0, 2.0, 4.0, 4.0}},
    {"rl", {0.479, 0.792, 1, 1, 1.25, 1.25, 1.25, 1.25}},
    {"train", {0.203, 0.591, 1, 1, 2.2, 2.2, 4.4, 4.84}},
    {"batch", {0.203, 0.591, 1, 1, 2.2, 2.2, 4.4, 4.84}},
    {"inference", {0.141, 0.596, 1, 1, 2.5, 2.5, 5.0, 7.0}},
    {"interactive", {1, 1, 1, 1, 1, 1, 1, 1}},
}};

}  // namespace

Tick scaled_duration(Tick work, std::int64_t speed_ppm, std::int64_t num, std::int64_t den) {
  HEADROOM_ASSERT(speed_ppm > 0 && num > 0 && den > 0, "speed must be positive");
  if (work <= 0) return work;
  if (speed_ppm == kSpeedOne && num == den) return work;
  const Wide d = static_cast<Wide>(num) * speed_ppm;
  return saturate((static_cast<Wide>(work) * den * kSpeedOne + d - 1) / d);
}

Tick scaled_work(Tick elapsed, std::int64_t speed_ppm, std::int64_t num, std::int64_t den) {
  HEADROOM_ASSERT(speed_ppm > 0 && num > 0 && den > 0, "speed must be positive");
  if (elapsed <= 0) return elapsed;
  if (speed_ppm == kSpeedOne && num == den) return elapsed;
  return saturate(static_cast<Wide>(elapsed) * num * speed_ppm / (static_cast<Wide>(den) * kSpeedOne));
}

std::int64_t speed_to_ppm(double factor) {
  HEADROOM_ASSERT(std::isfinite(factor) && factor > 0, "speed factor must be finite and positive");
  const double ppm = std::round(factor * static_cast<double>(kSpeedOne));
  if (ppm >= 9e15) return static_cast<std::int64_t>(9e15);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(ppm));
}

std::int64_t combine_speeds(std::int64_t a, std::int64_t b) {
  if (b == kSpeedOne) return a;
  if (a == kSpeedOne) return b;
  return std::max<std::int64_t>(1, saturate(static_cast<Wide>(a) * b / kSpeedOne));
}

std::string canonical_gpu_name(std::string_view name) {
  if (const GpuType* g = find_gpu_type(name)) return g->name;
  return std::string(name);
}

ThroughputMatrix ThroughputMatrix::defaults() {
  ThroughputMatrix m;
  for (const char* g : kGpus) m.add_gpu(g);
  for (const Row& r : kRows) {
    const std::size_t row = m.add_class(r.name);
    for (std::size_t c = 0; c < kGpus.size(); ++c) m.set(row, c, r.thr[c]);
  }
  return m;
}

std::size_t ThroughputMatrix::add_class(std::string_view name) {
  if (auto r = find_class(name)) return *r;
  classes_.emplace_back(name);
  values_.conservativeResize(static_cast<Eigen::Index>(classes_.size()), static_cast<Eigen::Index>(gpus_.size()));
  values_.row(values_.rows() - 1).setOnes();
  return classes_.size() - 1;
}

std::size_t ThroughputMatrix::add_gpu(std::string_view name) {
  if (auto c = find_gpu(name)) return *c;
  gpus_.push_back(canonical_gpu_name(name));
  values_.conservativeResize(static_cast<Eigen::Index>(classes_.size()), static_cast<Eigen::Index>(gpus_.size()));
  values_.col(values_.cols() - 1).setOnes();
  return gpus_.size() - 1;
}

std::optional<std::size_t> ThroughputMatrix::find_class(std::string_view name) const {
  for (std::size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i] == name) return i;
  return std::nullopt;
}

std::optional<std::size_t> ThroughputMatrix::find_gpu(std::string_view name) const {
  const std::string canon = canonical_gpu_name(name);
  for (std::size_t i = 0; i < gpus_.size(); ++i)
    if (iequal(gpus_[i], canon)) return i;
  return std::nullopt;
}

double ThroughputMatrix::throughput(std::size_t row, std::string_view gpu) const {
  const auto col = find_gpu(gpu);
  return col ? at(row, *col) : 1.0;
}

RuntimeModel::RuntimeModel(const RuntimeSpec& spec, const Workload& workload, const ClusterSpec& cluster)
    : matrix_(spec.matrix) {
  // Every class a job can get must be a row: the kind names and the rules' classes.
  for (JobKind k : {JobKind::Train, JobKind::Inference, JobKind::Interactive, JobKind::Batch})
    matrix_.add_class(to_string(k));
  for (const auto& r : spec.rules) matrix_.add_class(r.cls);
  for (const auto& pool : cluster.pools) pool_gpu_.push_back(pool.gpu_type);
  const auto rows = static_cast<Eigen::Index>(matrix_.classes().size());
  const auto pools = static_cast<Eigen::Index>(pool_gpu_.size());
  class_pool_.resize(rows, pools);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index p = 0; p < pools; ++p)
      class_pool_(r, p) = matrix_.throughput(static_cast<std::size_t>(r), pool_gpu_[static_cast<std::size_t>(p)]);

  // Rules resolved to ids once: (field, id or kind, row).
  struct Bound {
    ClassRule::Field field;
    std::uint32_t id;
    std::uint32_t row;
  };
  std::vector<Bound> bound;
  for (const auto& r : spec.rules) {
    std::optional<std::uint32_t> id;
    if (r.field == ClassRule::Field::Tenant) id = workload.tenants.find(r.value);
    if (r.field == ClassRule::Field::Queue) id = workload.queues.find(r.value);
    if (r.field == ClassRule::Field::Kind) {
      JobKind k{};
      if (parse_job_kind(r.value, k)) id = static_cast<std::uint32_t>(k);
    }
    if (id) bound.push_back({r.field, *id, static_cast<std::uint32_t>(*matrix_.find_class(r.cls))});
  }
  const std::size_t n = workload.jobs.size();
  job_class_.resize(n);
  job_ref_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Job& job = workload.jobs[i];
    std::uint32_t row = static_cast<std::uint32_t>(*matrix_.find_class(to_string(job.kind)));
    for (const auto& b : bound) {
      const std::uint32_t v = b.field == ClassRule::Field::Tenant  ? job.tenant
                              : b.field == ClassRule::Field::Queue ? job.queue
                                                                   : static_cast<std::uint32_t>(job.kind);
      if (v == b.id) {
        row = b.row;
        break;
      }
    }
    job_class_[i] = row;
    if (job.service >= 0) continue;
    if (job.gpu_type > 0 && job.gpu_type - 1u < workload.gpu_type_names.size()) {
      job_ref_[i] = matrix_.throughput(row, workload.gpu_type_names[job.gpu_type - 1u]);
    } else if (!spec.reference_gpu.empty()) {
      job_ref_[i] = matrix_.throughput(row, spec.reference_gpu);
    }
  }
}

double RuntimeModel::pool_throughput(JobIndex j, PoolId p) const {
  return class_pool_(static_cast<Eigen::Index>(job_class_.at(j)), static_cast<Eigen::Index>(p));
}

std::int64_t RuntimeModel::pool_speed(JobIndex j, PoolId p) const {
  const double ref = job_ref_.at(j);
  if (ref <= 0) return kSpeedOne;
  return speed_to_ppm(pool_throughput(j, p) / ref);
}

std::int64_t RuntimeModel::placement_speed(JobIndex j, const Placement& placement, const ClusterState& cluster) const {
  if (placement.empty() || job_ref_.at(j) <= 0) return kSpeedOne;
  std::int64_t slowest = INT64_MAX;
  for (const auto& s : placement) slowest = std::min(slowest, pool_speed(j, cluster.node(s.node).pool));
  return slowest;
}

}  // namespace headroom::models
