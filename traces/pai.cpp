// Alibaba PAI 2020 (cluster-trace-gpu-v2020, Weng et al., "MLaaS in the Wild", NSDI'22;
// github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2020), the CSVs in its tar.gz
// files, without a header row (the column names are in the .header files; a header row is also
// accepted):
//
//   pai_job_table.csv   job_name,inst_id,user,status,start_time,end_time
//   pai_task_table.csv  job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,
//                       plan_gpu,gpu_type
//
// The task table carries the resources (plan_cpu and plan_gpu in percent of one core / GPU,
// plan_mem in GB, per instance); the job table the user and the submission time. Either file may
// be given: the other one is looked for next to it (the name with "task_table" for "job_table"
// or back). Times are seconds, shifted so that the earliest submission is 0. The mapping to
// models::Job is documented in traces/README.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

enum JobCol : std::size_t { kJName, kJInstId, kJUser, kJStatus, kJStart, kJEnd };
constexpr Column kJobColumns[] = {
    {"job_name", true}, {"inst_id", true}, {"user", true}, {"status", true}, {"start_time", true}, {"end_time", true},
};

enum TaskCol : std::size_t { kTJob, kTTask, kTInstNum, kTStatus, kTStart, kTEnd, kTCpu, kTMem, kTGpu, kTGpuType };
constexpr Column kTaskColumns[] = {
    {"job_name", true}, {"task_name", true}, {"inst_num", true}, {"status", true},   {"start_time", true},
    {"end_time", true}, {"plan_cpu", true},  {"plan_mem", true}, {"plan_gpu", true}, {"gpu_type", true},
};

bool is_status(std::string_view s) {
  return s == "Terminated" || s == "Failed" || s == "Running" || s == "Waiting" || s == "Interrupted";
}

bool number_or_empty(std::string_view s) { return s.empty() || is_decimal(s); }

// The first non-blank line of a file, split at commas.
std::vector<std::string> first_cells(const std::string& path) {
  LineReader in(path);
  std::string_view line;
  while (in.next_line(line))
    if (!trim(line).empty()) return header_cells(line);
  return {};
}

// True when the first non-blank line is a header row (the published files have none).
bool has_header(const std::string& path) {
  const std::vector<std::string> cells = first_cells(path);
  return !cells.empty() && cells.front() == "job_name";
}

models::TraceStatus status_of(std::string_view s) {
  if (s == "Terminated") return models::TraceStatus::Completed;
  if (s == "Failed") return models::TraceStatus::Failed;
  return models::TraceStatus::Unknown;
}

// The sibling table: the last `from` in the file name replaced by `to`; nullopt when absent.
std::optional<std::string> sibling(const std::string& path, std::string_view from, std::string_view to) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::string name = p.filename().string();
  const std::size_t at = name.rfind(from);
  if (at == std::string::npos) return std::nullopt;
  name.replace(at, from.size(), to);
  const fs::path other = p.parent_path() / name;
  std::error_code ec;
  if (!fs::is_regular_file(other, ec)) return std::nullopt;
  return other.string();
}

struct Agg {
  std::string name;
  int line = 0;
  sim::Tick start = -1, end = -1;
  bool open = false;  // a task without an end time
  bool failed = false, all_terminated = true;
  double gpu_pct = 0, cpu_pct = 0, mem_gb = 0;
  std::string gpu_type;
  bool several_types = false;
};

// A time cell in seconds, or -1 when empty.
sim::Tick opt_seconds(const Table& t, std::size_t k) { return t.empty(k) ? -1 : t.seconds(k); }
double opt_number(const Table& t, std::size_t k) { return t.empty(k) ? 0.0 : t.number(k); }

}  // namespace

// Which PAI table a header or first row belongs to: "job", "task" or empty.
std::string_view pai_table_kind(const std::vector<std::string>& c) {
  if (c.size() == 6 && c[0] == "job_name" && c[1] == "inst_id") return "job";
  if (c.size() == 10 && c[0] == "job_name" && c[1] == "task_name") return "task";
  if (c.size() == 6 && !c[0].empty() && is_status(c[3]) && number_or_empty(c[4]) && number_or_empty(c[5])) return "job";
  if (c.size() == 10 && !c[0].empty() && is_decimal(c[2]) && is_status(c[3]) && number_or_empty(c[4]) &&
      number_or_empty(c[5]) && number_or_empty(c[6]) && number_or_empty(c[7]) && number_or_empty(c[8]))
    return "task";
  return {};
}

models::Workload import_pai(LineReader& in, const ImportOptions& options) {
  models::Workload w;
  w.meta.format = "pai";
  const std::vector<std::string> cells = first_cells(in.path());
  const std::string_view kind = pai_table_kind(cells);
  if (kind.empty())
    throw sim::InputError(
        in.path(), 1, 0, "",
        "not a PAI 2020 job table (job_name,inst_id,user,status,start_time,end_time) or task table "
        "(job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type)");
  std::optional<std::string> task_path, job_path;
  if (kind == "task") {
    task_path = in.path();
    job_path = sibling(in.path(), "task_table", "job_table");
  } else {
    job_path = in.path();
    task_path = sibling(in.path(), "job_table", "task_table");
    if (!task_path)
      throw sim::InputError(in.path(), 0, 0, "",
                            "a PAI job table has no resources: put its task table (the same name with task_table for "
                            "job_table) next to it, or import the task table");
  }

  // Tasks, grouped by job.
  std::vector<Agg> jobs;
  std::map<std::string, std::size_t, std::less<>> by_name;
  sim::Tick latest = 0;
  {
    std::optional<LineReader> own;
    LineReader& tin = kind == "task" ? in : own.emplace(*task_path);
    const bool header = has_header(tin.path());
    Table t(tin, kTaskColumns, {.header = header, .layout = "PAI task table"});
    for (;;) try {
        if (!t.next()) break;
        const std::string_view name = t.text(kTJob);
        if (name.empty()) t.fail(kTJob, "empty value in a required column");
        // Every cell is read (and may fail) before the row changes anything.
        const double inst = static_cast<double>(t.integer(kTInstNum, 0, kInt32Max));
        const sim::Tick start = opt_seconds(t, kTStart);
        const sim::Tick end = opt_seconds(t, kTEnd);
        if (start >= 0 && end >= 0 && end < start) t.fail(kTEnd, "end_time is before start_time");
        const double gpu = opt_number(t, kTGpu) * inst;
        const double cpu = opt_number(t, kTCpu) * inst;
        const double mem = opt_number(t, kTMem) * inst;
        auto it = by_name.find(name);
        if (it == by_name.end()) {
          it = by_name.emplace(std::string(name), jobs.size()).first;
          Agg fresh;
          fresh.name = std::string(name);
          fresh.line = t.line();
          jobs.push_back(std::move(fresh));
        }
        Agg& a = jobs[it->second];
        if (start >= 0) a.start = a.start < 0 ? start : std::min(a.start, start);
        if (end >= 0) {
          a.end = std::max(a.end, end);
        } else {
          a.open = true;
        }
        latest = std::max({latest, start, end});
        const std::string_view status = t.text(kTStatus);
        if (status == "Failed") a.failed = true;
        if (status != "Terminated") a.all_terminated = false;
        a.gpu_pct += gpu;
        a.cpu_pct += cpu;
        a.mem_gb += mem;
        const std::string_view type = t.text(kTGpuType);
        if (gpu > 0 && !type.empty()) {
          if (a.gpu_type.empty()) a.gpu_type = std::string(type);
          if (a.gpu_type != type) a.several_types = true;
        }
      } catch (const sim::InputError& e) {
        bad_row(w, e, options);
      }
  }

  // Jobs: user and submission time, when the job table is there.
  struct JobRow {
    std::size_t agg;
    int line;
    std::string user;
    models::TraceStatus status;
    sim::Tick submit;
  };
  std::vector<JobRow> order;
  if (job_path) {
    std::optional<LineReader> own;
    LineReader& jin = kind == "job" ? in : own.emplace(*job_path);
    const bool header = has_header(jin.path());
    Table t(jin, kJobColumns, {.header = header, .layout = "PAI job table"});
    std::vector<int> first_line(jobs.size(), 0);  // the job table's row of each job, 0 before it
    for (;;) try {
        if (!t.next()) break;
        ++w.meta.rows;
        const auto it = by_name.find(t.text(kJName));
        if (it == by_name.end()) {
          skip_row(w, t.line(), "no task in the task table");
          continue;
        }
        if (first_line[it->second] > 0)  // the one rule for ids seen twice (IdCheck)
          t.fail(kJName, "duplicate job id " + quoted(t.text(kJName)) + " (first at line " +
                             std::to_string(first_line[it->second]) + ")");
        const sim::Tick submit = opt_seconds(t, kJStart);
        const std::string user(t.name(kJUser));
        latest = std::max(latest, submit);
        first_line[it->second] = t.line();
        order.push_back({it->second, t.line(), user, status_of(t.text(kJStatus)), submit});
      } catch (const sim::InputError& e) {
        bad_row(w, e, options);
      }
  } else {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      ++w.meta.rows;
      const Agg& a = jobs[i];
      const models::TraceStatus s = a.failed           ? models::TraceStatus::Failed
                                    : a.all_terminated ? models::TraceStatus::Completed
                                                       : models::TraceStatus::Unknown;
      order.push_back({i, a.line, "default", s, -1});
    }
  }

  sim::Tick origin = std::numeric_limits<sim::Tick>::max();
  for (std::size_t n = 0; n < order.size(); ++n) {
    const JobRow& r = order[n];
    const Agg& a = jobs[r.agg];
    models::Job j;
    j.trace_id = static_cast<std::int64_t>(n);
    j.tenant = w.tenants.intern(r.user.empty() ? "default" : r.user);
    j.queue = w.queues.intern("default");
    j.trace_status = r.status;
    j.submit = r.submit >= 0 ? r.submit : a.start;
    if (j.submit < 0) {
      skip_row(w, r.line, "never started and no submission time");
      continue;
    }
    origin = std::min(origin, j.submit);
    if (a.start < 0) {
      skip_row(w, r.line, "waiting, never started: run time unknown");
      continue;
    }
    j.trace_start = std::max(a.start, j.submit);
    const double gpu = a.gpu_pct;
    if (gpu > 0 && gpu < 99.95) {
      j.gpus = 1;
      j.gpu_milli = std::max(1, static_cast<std::int32_t>(std::lround(gpu * 10)));
    } else if (gpu > 0) {
      j.gpus = static_cast<std::int32_t>(std::min(std::ceil(gpu / 100.0 - 1e-9), static_cast<double>(kInt32Max)));
    }
    j.cpus = static_cast<std::int32_t>(std::min(std::ceil(a.cpu_pct / 100.0 - 1e-9), static_cast<double>(kInt32Max)));
    j.memory_mib = static_cast<std::int64_t>(std::min(std::ceil(a.mem_gb * 1024.0 - 1e-9), 1e15));
    if (!a.gpu_type.empty() && !a.several_types && gpu > 0) {
      const auto found = std::find(w.gpu_type_names.begin(), w.gpu_type_names.end(), a.gpu_type);
      if (found == w.gpu_type_names.end()) w.gpu_type_names.push_back(a.gpu_type);
      j.gpu_type = static_cast<std::uint16_t>(std::find(w.gpu_type_names.begin(), w.gpu_type_names.end(), a.gpu_type) -
                                              w.gpu_type_names.begin() + 1);
    }
    if (!a.open) {
      j.trace_end = std::max(a.end, j.trace_start);
      j.runtime = j.trace_end - j.trace_start;
    } else {
      j.runtime = std::max<sim::Tick>(latest - j.trace_start, 0);  // still running at the end of the trace
    }
    if (j.gpus == 0 && !options.keep_cpu_only) {
      skip_row(w, r.line, "CPU job (plan_gpu 0)");
      continue;
    }
    j.line = static_cast<std::uint32_t>(r.line);
    w.jobs.push_back(j);
  }
  if (w.jobs.empty()) return w;
  for (models::Job& j : w.jobs) {
    j.submit -= origin;
    if (j.trace_start >= 0) j.trace_start -= origin;
    if (j.trace_end >= 0) j.trace_end -= origin;
  }
  return w;
}

}  // namespace headroom::traces::detail
