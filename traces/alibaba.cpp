// Alibaba cluster traces (github.com/alibaba/clusterdata):
//
// * cluster-trace-gpu-v2023 ("openb", Weng et al., ATC'23) pod list
//     name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
//     deletion_time,scheduled_time
//   and node list  sn,cpu_milli,memory_mib,gpu,model  (a cluster, see cluster_import.cpp).
// * cluster-trace-gpu-v2025 (GPU-disaggregated DLRM serving, Yang et al., NSDI'25)
//     instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,rdma_limit,
//     memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,creation_time,
//     scheduled_time,deletion_time
//
// The mappings to models::Job are documented in traces/README.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// The number at the end of a name ("openb-pod-0042" -> 42), or `fallback` when there is none.
std::int64_t trailing_number(std::string_view name, std::int64_t fallback) {
  std::size_t p = name.size();
  while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9') --p;
  std::int64_t v = 0;
  if (p == name.size() || name.size() - p > 18 || parse_int(name.substr(p), v) != Parse::Ok) return fallback;
  return v;
}

std::uint16_t intern_gpu_type(models::Workload& w, std::string_view name) {
  for (std::size_t i = 0; i < w.gpu_type_names.size(); ++i)
    if (w.gpu_type_names[i] == name) return static_cast<std::uint16_t>(i + 1);
  w.gpu_type_names.emplace_back(name);
  return static_cast<std::uint16_t>(w.gpu_type_names.size());
}

// ---------------------------------------------------------------------------------------------
// openb pod list

enum OpenbCol : std::size_t {
  kName,
  kCpuMilli,
  kMemoryMib,
  kNumGpu,
  kGpuMilli,
  kGpuSpec,
  kQos,
  kPodPhase,
  kCreation,
  kDeletion,
  kScheduled,
};

constexpr Column kOpenbColumns[] = {
    {"name", true},          {"cpu_milli", true},     {"memory_mib", true},     {"num_gpu", true},
    {"gpu_milli", true},     {"gpu_spec", false},     {"qos", false},           {"pod_phase", false},
    {"creation_time", true}, {"deletion_time", true}, {"scheduled_time", true},
};

}  // namespace

models::Workload import_openb(LineReader& in, const ImportOptions& options) {
  models::Workload w;
  w.meta.format = "openb";
  Table t(in, kOpenbColumns, {.layout = "openb pod list"});
  const models::TenantId tenant = w.tenants.intern("default");
  IdCheck ids;
  for (;;) try {
      if (!t.next()) break;
      ++w.meta.rows;
      models::Job j;
      j.trace_id = trailing_number(t.text(kName), w.meta.rows);
      j.tenant = tenant;
      const std::int64_t cpu_milli = t.integer(kCpuMilli, 0, kInt64Max / 2);
      j.cpus = static_cast<std::int32_t>(std::min<std::int64_t>((cpu_milli + 999) / 1000, kInt32Max));
      j.memory_mib = t.integer(kMemoryMib, 0, kInt64Max / 2);
      j.gpus = static_cast<std::int32_t>(t.integer(kNumGpu, 0, kInt32Max));
      const auto milli = static_cast<std::int32_t>(t.integer(kGpuMilli, 0, 1000));
      if (milli > 0 && milli < 1000) {
        if (j.gpus != 1)
          t.fail(kGpuMilli, "a fraction of a GPU needs num_gpu 1, got num_gpu " + std::to_string(j.gpus));
        j.gpu_milli = milli;
      } else if (milli == 0 && j.gpus > 0) {
        t.fail(kGpuMilli,
               "expected 1..1000 milli-GPU for a pod with num_gpu " + std::to_string(j.gpus) + ", got \"0\"");
      }
      if (!t.empty(kGpuSpec)) j.gpu_type = intern_gpu_type(w, t.text(kGpuSpec));
      const std::string_view qos = t.text(kQos);
      j.queue = w.queues.intern(qos.empty() ? std::string_view("default") : t.name(kQos));
      if (qos == "LS" || qos == "Guaranteed") {
        j.priority = 2;
      } else if (qos == "Burstable") {
        j.priority = 1;
      } else if (qos == "BE") {
        j.preemptible = true;
      }
      j.kind = qos == "LS" ? models::JobKind::Inference : models::JobKind::Batch;
      const std::string_view phase = t.text(kPodPhase);
      if (phase == "Succeeded") j.trace_status = models::TraceStatus::Completed;
      if (phase == "Failed") j.trace_status = models::TraceStatus::Failed;
      j.submit = t.seconds(kCreation);
      const bool scheduled = !t.empty(kScheduled);
      const bool deleted = !t.empty(kDeletion);
      const sim::Tick deletion = deleted ? t.seconds(kDeletion) : -1;
      if (scheduled) {
        j.trace_start = t.seconds(kScheduled);
        if (j.trace_start < j.submit) t.fail(kScheduled, "scheduled_time is before creation_time");
      }
      if (deleted && deletion < std::max(j.submit, j.trace_start))
        t.fail(kDeletion, std::string("deletion_time is before ") + (scheduled ? "scheduled_time" : "creation_time"));
      if (j.gpus == 0 && j.gpu_milli == 0 && !options.keep_cpu_only) {
        skip_row(w, t.line(), "CPU-only pod (num_gpu 0)");
        continue;
      }
      if (scheduled && deleted) {
        j.trace_end = deletion;
        j.runtime = deletion - j.trace_start;
      } else if (!scheduled && deleted) {
        // Never scheduled in the trace (Pending): demand that waited from creation to deletion. It
        // is replayed as asking for that long, the most it could have run; no trace start or end.
        j.runtime = deletion - j.submit;
      } else {
        skip_row(w, t.line(), "no deletion_time, run time unknown");
        continue;
      }
      j.line = static_cast<std::uint32_t>(t.line());
      w.jobs.push_back(j);
      ids.add(t.text(kName), t.line(), t.column(kName), w.jobs.size() - 1);
    } catch (const sim::InputError& e) {
      bad_row(w, e, options);
    }
  ids.finish(w, options, in.path(), t.field(kName));
  return w;
}

// ---------------------------------------------------------------------------------------------
// 2025 DLRM trace

namespace {

enum DlrmCol : std::size_t {
  kInstance,
  kRole,
  kApp,
  kCpuRequest,
  kGpuRequest,
  kRdmaRequest,
  kMemoryRequest,
  kDlrmCreation,
  kDlrmScheduled,
  kDlrmDeletion,
};

constexpr Column kDlrmColumns[] = {
    {"instance_sn", true},    {"role", true},          {"app_name", true},       {"cpu_request", true},
    {"gpu_request", true},    {"rdma_request", false}, {"memory_request", true}, {"creation_time", true},
    {"scheduled_time", true}, {"deletion_time", true},
};

}  // namespace

models::Workload import_dlrm(LineReader& in, const ImportOptions& options) {
  models::Workload w;
  w.meta.format = "dlrm";
  Table t(in, kDlrmColumns, {.layout = "Alibaba 2025 DLRM trace"});
  sim::Tick last_time = 0;  // the latest time in the file: the end of the trace window
  std::vector<std::size_t> open_ended;
  IdCheck ids;
  for (;;) try {
      if (!t.next()) break;
      ++w.meta.rows;
      models::Job j;
      j.trace_id = trailing_number(t.text(kInstance), w.meta.rows);
      const std::string_view role = t.text(kRole);
      if (role != "HN" && role != "CN") t.fail(kRole, "expected HN or CN, got " + quoted(role));
      if (t.empty(kApp)) t.fail(kApp, "empty value in a required column");
      j.tenant = w.tenants.intern(t.name(kApp));
      j.queue = w.queues.intern(role);
      j.kind = models::JobKind::Inference;
      const double cpus = t.number(kCpuRequest);
      j.cpus = static_cast<std::int32_t>(std::min(std::ceil(cpus), static_cast<double>(kInt32Max)));
      const double mem_gib = t.number(kMemoryRequest);
      j.memory_mib = static_cast<std::int64_t>(std::min(std::ceil(mem_gib * 1024.0), 1e15));
      if (!t.empty(kRdmaRequest)) t.number(kRdmaRequest);  // checked; no network model
      // Every HN instance asks for exactly one whole GPU in this trace; CN instances for none.
      j.gpus = static_cast<std::int32_t>(t.integer(kGpuRequest, 0, kInt32Max));
      const bool created = !t.empty(kDlrmCreation);
      const bool scheduled = !t.empty(kDlrmScheduled);
      const bool deleted = !t.empty(kDlrmDeletion);
      // An empty time fell outside the trace window: no creation = alive before the start (submitted
      // at 0, start unknown); no deletion = alive at the end (runs to the last time in the file).
      j.submit = created ? t.seconds(kDlrmCreation) : 0;
      if (scheduled) {
        j.trace_start = t.seconds(kDlrmScheduled);
        if (j.trace_start < j.submit) t.fail(kDlrmScheduled, "scheduled_time is before creation_time");
      }
      sim::Tick deletion = -1;
      if (deleted) {
        deletion = t.seconds(kDlrmDeletion);
        if (deletion < std::max(j.submit, j.trace_start))
          t.fail(kDlrmDeletion,
                 std::string("deletion_time is before ") + (j.trace_start >= 0 ? "scheduled_time" : "creation_time"));
      }
      last_time = std::max({last_time, j.submit, j.trace_start, deletion});
      if (j.gpus == 0 && !options.keep_cpu_only) {
        skip_row(w, t.line(), "CPU-node (CN) instance without GPU");
        continue;
      }
      if (j.trace_start >= 0 && deleted) {
        j.trace_end = deletion;
        j.runtime = deletion - j.trace_start;
        j.trace_status = models::TraceStatus::Completed;
      } else if (deleted) {
        j.runtime = deletion - j.submit;  // alive before the start, or never scheduled
      } else {
        open_ended.push_back(w.jobs.size());
      }
      j.line = static_cast<std::uint32_t>(t.line());
      w.jobs.push_back(j);
      ids.add(t.text(kInstance), t.line(), t.column(kInstance), w.jobs.size() - 1);
    } catch (const sim::InputError& e) {
      bad_row(w, e, options);
    }
  for (const std::size_t i : open_ended) {
    models::Job& j = w.jobs[i];
    j.runtime = last_time - (j.trace_start >= 0 ? j.trace_start : j.submit);
  }
  ids.finish(w, options, in.path(), t.field(kInstance));  // after the indexes in open_ended are used
  return w;
}

}  // namespace headroom::traces::detail
