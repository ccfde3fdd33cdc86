#pragma once

// The runtime model of heterogeneous GPUs (docs/heterogeneity.md): an Eigen matrix of relative
// training/serving throughput, rows = job classes, columns = GPU types. A job's recorded run time
// is work measured on its reference GPU type; placed on type T it runs at
// speed = thr(class, T) / thr(class, reference), held as an integer in parts per million
// (kSpeedOne = 1.0) so that durations and progress stay integer ticks.

#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "models/speed.hpp"
#include "models/workload.hpp"

namespace headroom::models {

class ThroughputMatrix {
 public:
  // The built-in table (models/throughput.cpp cites each figure). Columns are catalogue names
  // (models/gpu_types.hpp) plus K80, which only Gavel's table has.
  static ThroughputMatrix defaults();

  // Row / column by name; added with every entry 1 when new. GPU names are matched as
  // models::find_gpu_type resolves them (aliases: "A100" -> A100-80G), else case-insensitively.
  std::size_t add_class(std::string_view name);
  std::size_t add_gpu(std::string_view name);
  std::optional<std::size_t> find_class(std::string_view name) const;
  std::optional<std::size_t> find_gpu(std::string_view name) const;
  void set(std::size_t row, std::size_t col, double value) {
    values_(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(col)) = value;
  }
  double at(std::size_t row, std::size_t col) const {
    return values_(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(col));
  }
  // thr(row, gpu); 1 for a GPU type that is no column.
  double throughput(std::size_t row, std::string_view gpu) const;

  const std::vector<std::string>& classes() const { return classes_; }
  const std::vector<std::string>& gpus() const { return gpus_; }
  const Eigen::MatrixXd& values() const { return values_; }

 private:
  std::vector<std::string> classes_, gpus_;
  Eigen::MatrixXd values_;
};

// The canonical column name of a GPU type: the catalogue name when known, else as written.
std::string canonical_gpu_name(std::string_view name);

// `runtime.classes`: jobs whose tenant, queue or kind equals `value` get class `cls`.
struct ClassRule {
  enum class Field : std::uint8_t { Tenant, Queue, Kind };
  Field field = Field::Kind;
  std::string value;
  std::string cls;
};

// The scenario's `runtime:` block, resolved against the defaults.
struct RuntimeSpec {
  bool enabled = false;          // false: no block, no scaling at all
  std::string reference_gpu;     // what run times of jobs without a GPU type were measured on; "" = none
  std::vector<ClassRule> rules;  // first match wins; else the class named after the job's kind
  ThroughputMatrix matrix = ThroughputMatrix::defaults();
};

// A RuntimeSpec bound to one workload and cluster: each job's class and reference throughput,
// each pool's column.
class RuntimeModel {
 public:
  RuntimeModel(const RuntimeSpec& spec, const Workload& workload, const ClusterSpec& cluster);

  // Speed (ppm) of job j on a GPU of pool p; kSpeedOne when the job has no reference GPU, or is
  // an inference service's replica (its life is set by its autoscaler, not by work).
  std::int64_t pool_speed(JobIndex j, PoolId p) const;
  // The slowest pool of the placement (kSpeedOne for an empty one).
  std::int64_t placement_speed(JobIndex j, const Placement& placement, const ClusterState& cluster) const;
  // thr(class of j, GPU type of pool p), not normalised.
  double pool_throughput(JobIndex j, PoolId p) const;
  std::size_t job_class(JobIndex j) const { return job_class_.at(j); }
  const ThroughputMatrix& matrix() const { return matrix_; }

 private:
  ThroughputMatrix matrix_;
  std::vector<std::uint32_t> job_class_;
  std::vector<double> job_ref_;  // thr of the reference GPU; 0 = no scaling
  std::vector<std::string> pool_gpu_;
  Eigen::MatrixXd class_pool_;  // thr(class, pool)
};

}  // namespace headroom::models
