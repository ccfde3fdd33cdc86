// SenseTime Helios `cluster_log.csv` (Hu et al., SC'21; github.com/S-Lab-System-Group/HeliosData):
//
//   job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
//
// and the reduced Philly-style layout that the Helios simulator also reads
//
//   user,vc,jobname,gpu_num,state,submit_time,duration
//
// Times are "YYYY-MM-DD HH:MM:SS" (read as UTC) or plain seconds; all of them are shifted so that
// the earliest submit time is 0 (its Unix time goes to TraceMeta::unix_start). The mapping to
// models::Job is documented in traces/README.md.

#include <algorithm>
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

enum HeliosCol : std::size_t {
  kJobId,
  kUser,
  kVc,
  kJobName,
  kGpuNum,
  kCpuNum,
  kNodeNum,
  kState,
  kSubmit,
  kStart,
  kEnd,
  kDuration,
  kQueue,
};

constexpr Column kColumns[] = {
    {"job_id", false},   {"user", true},      {"vc", true},     {"jobname", false},    {"gpu_num", true},
    {"cpu_num", false},  {"node_num", false}, {"state", false}, {"submit_time", true}, {"start_time", false},
    {"end_time", false}, {"duration", false}, {"queue", false},
};

models::TraceStatus parse_state(std::string_view s) {
  if (s == "Pass" || s == "COMPLETED" || s == "Completed") return models::TraceStatus::Completed;
  if (s == "Killed" || s == "CANCELLED" || s == "Cancelled") return models::TraceStatus::Cancelled;
  if (s == "Failed" || s == "FAILED" || s == "TIMEOUT" || s == "NODE_FAIL" || s == "OUT_OF_MEMORY")
    return models::TraceStatus::Failed;
  return models::TraceStatus::Unknown;
}

// A date-time cell (ms since the epoch) or plain seconds.
sim::Tick time_cell(const Table& t, std::size_t k, bool& is_datetime) {
  sim::Tick ms = 0;
  if (parse_datetime(t.text(k), ms)) {
    is_datetime = true;
    return ms;
  }
  if (!is_decimal(t.text(k)))
    t.fail(k, "expected a date and time like \"2020-04-01 00:00:15\" or seconds, got " + quoted(t.text(k)));
  return t.seconds(k);
}

}  // namespace

models::Workload import_helios(LineReader& in, const ImportOptions& options) {
  models::Workload w;
  w.meta.format = "helios";
  Table t(in, kColumns, {.layout = "Helios cluster_log"});
  if (!t.has(kDuration) && !(t.has(kStart) && t.has(kEnd)))
    throw sim::InputError(in.path(), t.line(), 0, "header",
                          "the Helios cluster_log layout needs a duration column, or start_time and end_time");
  sim::Tick origin = std::numeric_limits<sim::Tick>::max();
  bool datetimes = false;
  IdCheck ids;
  for (;;) try {
      if (!t.next()) break;
      ++w.meta.rows;
      models::Job j;
      std::int64_t id = 0;
      j.trace_id = t.has(kJobId) && parse_int(t.text(kJobId), id) == Parse::Ok ? id : w.meta.rows - 1;
      if (t.empty(kUser)) t.fail(kUser, "empty value in a required column");
      if (t.empty(kVc)) t.fail(kVc, "empty value in a required column");
      j.tenant = w.tenants.intern(t.name(kUser));
      j.queue = w.queues.intern(t.name(kVc));
      j.gpus = static_cast<std::int32_t>(t.integer(kGpuNum, 0, kInt32Max));
      if (!t.empty(kCpuNum)) j.cpus = static_cast<std::int32_t>(t.integer(kCpuNum, 0, kInt32Max));
      if (!t.empty(kNodeNum)) j.nodes = static_cast<std::int32_t>(t.integer(kNodeNum, 0, kInt32Max));
      j.trace_status = parse_state(t.text(kState));
      j.submit = time_cell(t, kSubmit, datetimes);
      if (!t.empty(kStart)) {
        j.trace_start = time_cell(t, kStart, datetimes);
        if (j.trace_start < j.submit) t.fail(kStart, "start_time is before submit_time");
      } else if (!t.empty(kQueue)) {
        j.trace_start = j.submit + t.seconds(kQueue);
      }
      if (!t.empty(kEnd)) {
        j.trace_end = time_cell(t, kEnd, datetimes);
        if (j.trace_start >= 0 && j.trace_end < j.trace_start) t.fail(kEnd, "end_time is before start_time");
      }
      if (!t.empty(kDuration)) {
        j.runtime = t.seconds(kDuration);
      } else if (j.trace_start >= 0 && j.trace_end >= 0) {
        j.runtime = j.trace_end - j.trace_start;
      } else {
        skip_row(w, t.line(), "no duration and no start and end time, run time unknown");
        continue;
      }
      if (j.trace_start < 0) j.trace_end = -1;
      if (j.trace_start >= 0 && j.trace_end < 0) j.trace_end = j.trace_start + j.runtime;
      origin = std::min(origin, j.submit);
      if (j.gpus == 0 && !options.keep_cpu_only) {
        skip_row(w, t.line(), "CPU job (gpu_num 0)");
        continue;
      }
      j.line = static_cast<std::uint32_t>(t.line());
      w.jobs.push_back(j);
      if (t.has(kJobId)) {
        if (parse_int(t.text(kJobId), id) == Parse::Ok)
          ids.add(id, t.line(), t.column(kJobId), w.jobs.size() - 1);
        else
          ids.add(t.text(kJobId), t.line(), t.column(kJobId), w.jobs.size() - 1);
      }
    } catch (const sim::InputError& e) {
      bad_row(w, e, options);
    }
  if (t.has(kJobId)) ids.finish(w, options, in.path(), t.field(kJobId));
  if (w.jobs.empty()) return w;
  if (datetimes) w.meta.unix_start = origin / sim::kSecond;
  for (models::Job& j : w.jobs) {
    j.submit -= origin;
    if (j.trace_start >= 0) j.trace_start -= origin;
    if (j.trace_end >= 0) j.trace_end -= origin;
  }
  return w;
}

}  // namespace headroom::traces::detail
