// Shanghai AI Lab Acme traces (Hu et al., "Characterization of Large Language Model Development in
// the Datacenter", NSDI'24; github.com/InternLM/AcmeTrace, data/job_trace/):
//
//   trace_seren.csv  job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,
//                    end_time,duration,queue,gpu_time
//   trace_kalos.csv  job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,
//                    state,submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time
//
// Times are "2023-03-01 00:18:22+08:00"; `duration` and `queue` are seconds (run time and
// queueing delay). The mapping to models::Job is documented in traces/README.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

enum AcmeCol : std::size_t {
  kJobId,
  kUser,
  kNodeNum,
  kGpuNum,
  kCpuNum,
  kMemPerPod,
  kType,
  kState,
  kSubmit,
  kStart,
  kEnd,
  kDuration,
  kQueue,
};

constexpr Column kColumns[] = {
    {"job_id", true},          {"user", true},     {"node_num", true}, {"gpu_num", true},     {"cpu_num", true},
    {"mem_per_pod_GB", false}, {"type", true},     {"state", true},    {"submit_time", true}, {"start_time", true},
    {"end_time", true},        {"duration", true}, {"queue", false},
};

models::TraceStatus parse_state(std::string_view s) {
  if (s == "COMPLETED") return models::TraceStatus::Completed;
  if (s == "CANCELLED") return models::TraceStatus::Cancelled;
  if (s == "FAILED" || s == "TIMEOUT" || s == "NODE_FAIL") return models::TraceStatus::Failed;
  return models::TraceStatus::Unknown;
}

models::JobKind kind_of(std::string_view type) {
  if (type == "Pretrain" || type == "SFT" || type == "MLLM") return models::JobKind::Train;
  if (type == "Debug") return models::JobKind::Interactive;
  return models::JobKind::Batch;  // Evaluation, Other
}

sim::Tick time_cell(const Table& t, std::size_t k) {
  if (t.empty(k)) return -1;
  sim::Tick ms = 0;
  if (!parse_datetime(t.text(k), ms))
    t.fail(k, "expected a date and time like \"2023-03-01 00:18:22+08:00\", got " + quoted(t.text(k)));
  return ms;
}

}  // namespace

models::Workload import_acme(LineReader& in, const ImportOptions& options) {
  models::Workload w;
  w.meta.format = "acme";
  Table t(in, kColumns, {.layout = "Acme job trace"});
  sim::Tick origin = std::numeric_limits<sim::Tick>::max();
  IdCheck ids;
  for (;;) try {
      if (!t.next()) break;
      ++w.meta.rows;
      models::Job j;
      std::int64_t id = 0;
      j.trace_id = parse_int(t.text(kJobId), id) == Parse::Ok ? id : w.meta.rows - 1;
      if (t.empty(kUser)) t.fail(kUser, "empty value in a required column");
      j.tenant = w.tenants.intern(t.name(kUser));
      const std::string_view type = t.text(kType);
      j.queue = w.queues.intern(type.empty() ? std::string_view("default") : type);
      j.kind = kind_of(type);
      j.nodes = static_cast<std::int32_t>(t.integer(kNodeNum, 0, kInt32Max));
      j.gpus = static_cast<std::int32_t>(t.integer(kGpuNum, 0, kInt32Max));
      j.cpus = static_cast<std::int32_t>(t.integer(kCpuNum, 0, kInt32Max));
      if (t.has(kMemPerPod) && !t.empty(kMemPerPod)) {
        const double gib = t.number(kMemPerPod) * std::max<std::int32_t>(j.nodes, 1);
        j.memory_mib = static_cast<std::int64_t>(std::min(std::ceil(gib * 1024.0), 1e15));
      }
      j.trace_status = parse_state(t.text(kState));
      j.submit = time_cell(t, kSubmit);
      if (j.submit < 0) t.fail(kSubmit, "empty value in a required column");
      origin = std::min(origin, j.submit);
      j.trace_start = time_cell(t, kStart);
      if (j.trace_start >= 0 && j.trace_start < j.submit) t.fail(kStart, "start_time is before submit_time");
      if (j.trace_start >= 0) {
        j.trace_end = time_cell(t, kEnd);
        if (j.trace_end >= 0 && j.trace_end < j.trace_start) t.fail(kEnd, "end_time is before start_time");
      }
      if (!t.empty(kDuration)) {
        j.runtime = t.seconds(kDuration);
      } else if (j.trace_start >= 0 && j.trace_end >= 0) {
        j.runtime = j.trace_end - j.trace_start;
      } else {
        skip_row(w, t.line(), "no duration and no start and end time, run time unknown");
        continue;
      }
      if (j.trace_start < 0) {
        skip_row(w, t.line(), "never started (no start_time)");
        continue;
      }
      if (j.trace_end < 0) j.trace_end = j.trace_start + j.runtime;
      if (j.gpus == 0 && !options.keep_cpu_only) {
        skip_row(w, t.line(), "CPU job (gpu_num 0)");
        continue;
      }
      j.line = static_cast<std::uint32_t>(t.line());
      w.jobs.push_back(j);
      ids.add(t.text(kJobId), t.line(), t.column(kJobId), w.jobs.size() - 1);
    } catch (const sim::InputError& e) {
      bad_row(w, e, options);
    }
  ids.finish(w, options, in.path(), t.field(kJobId));
  if (w.jobs.empty()) return w;
  w.meta.unix_start = origin / sim::kSecond;
  for (models::Job& j : w.jobs) {
    j.submit -= origin;
    if (j.trace_start >= 0) j.trace_start -= origin;
    if (j.trace_end >= 0) j.trace_end -= origin;
  }
  return w;
}

}  // namespace headroom::traces::detail
