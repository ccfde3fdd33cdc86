// Microsoft Philly `cluster_job_log` (msr-fiddle/philly-traces; Jeon et al., "Analysis of
// Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX ATC'19): one JSON
// array of jobs, each {status, vc, jobid, attempts: [{start_time, end_time, detail: [{ip, gpus:
// [...]}]}], submitted_time, user}. The mapping to models::Job is documented in traces/README.md.
//
// The file is parsed as a stream: characters come straight from the LineReader (plain or gzip)
// and every job object is turned into a Job and dropped as soon as it is complete, so memory stays
// proportional to one job, not to the 117,325-job file. Syntax errors name the file, line and
// column; errors inside a job name its line and JSON path ([12].attempts[0].start_time).

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/json_input.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

class PhillyLog {
 public:
  PhillyLog(LineReader& in, const ImportOptions& options) : in_(in), stream_(in), options_(options) {}

  models::Workload run() {
    w_.meta.format = "philly";
    {
      bool top_checked = false;
      [[maybe_unused]] const json discarded =
          parse_json(in_, stream_, [&](int depth, json::parse_event_t event, json& value) -> bool {
            if (!top_checked) {
              top_checked = true;
              if (event != json::parse_event_t::array_start)
                throw sim::InputError(in_.path(), stream_.line(), stream_.column(), "",
                                      "expected a JSON array of jobs (the Philly cluster_job_log layout)");
            }
            if (depth == 1 && event == json::parse_event_t::object_start) job_line_ = stream_.line();
            if (depth == 1 && event == json::parse_event_t::object_end) {
              try {
                job(value);
              } catch (const sim::InputError& e) {
                bad_row(w_, e, options_);
              }
              ++index_;
              return false;  // drop the parsed job: memory stays bounded
            }
            if (depth == 1 && event == json::parse_event_t::value)
              throw sim::InputError(in_.path(), stream_.line(), stream_.column(), "[" + std::to_string(index_) + "]",
                                    "expected a job object");
            return true;
          });
    }
    for (const std::size_t i : running_) {
      models::Job& j = w_.jobs[i];
      j.runtime += latest_ - j.trace_end;
      j.trace_end = latest_;
    }
    if (!w_.jobs.empty()) {
      for (models::Job& j : w_.jobs) {
        j.submit -= origin_;
        if (j.trace_start >= 0) j.trace_start -= origin_;
        if (j.trace_end >= 0) j.trace_end -= origin_;
      }
      w_.meta.unix_start = origin_ / sim::kSecond;
    }
    return std::move(w_);
  }

 private:
  // Errors inside a job name the line and column of the field (the file is read again to find it,
  // for the first few errors only), else the line where the job's object starts.
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    if (located_ < kMaxWarnings) {
      ++located_;
      const auto [line, column] = json_position(in_.path(), path);
      if (line > 0) throw sim::InputError(in_.path(), line, column, path, message);
    }
    throw sim::InputError(in_.path(), job_line_, 0, path, message);
  }

  std::string string_at(const json& obj, std::string_view key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    if (!it->is_string()) fail(path + "." + std::string(key), "expected a string");
    return it->get<std::string>();
  }

  // A time ("2017-10-07 01:12:09"); -1 when absent, null or "None" (the trace's logging gaps).
  sim::Tick time_at(const json& obj, std::string_view key, const std::string& path) {
    const std::string text = string_at(obj, key, path);
    if (text.empty() || text == "None") return -1;
    sim::Tick ms = 0;
    if (!parse_datetime(text, ms))
      fail(path + "." + std::string(key), "expected a time like \"2017-10-07 01:12:09\", got " + detail::quoted(text));
    row_latest_ = std::max(row_latest_, ms);
    return ms;
  }

  void skip(const std::string& why) { skip_row(w_, job_line_, "job [" + std::to_string(index_) + "]: " + why); }

  void job(const json& o) {
    std::string path = "[";  // appended, not concatenated: GCC 12 warns (-Wrestrict) on "[" + to_string
    path += std::to_string(index_);
    path += ']';
    ++w_.meta.rows;
    row_latest_ = std::numeric_limits<sim::Tick>::min();
    models::Job j;
    j.trace_id = static_cast<std::int64_t>(index_);
    const std::string id = string_at(o, "jobid", path);
    if (!id.empty()) {  // the one rule for ids seen twice (traces/README.md, "Bad rows")
      const auto [seen, fresh] = first_index_.try_emplace(id, index_);
      if (!fresh)
        fail(path + ".jobid",
             "duplicate job id " + detail::quoted(id) + " (first in job [" + std::to_string(seen->second) + "])");
    }
    if (const std::size_t us = id.rfind('_'); us != std::string::npos) {
      std::int64_t seq = 0, cluster = 0;
      const std::size_t us0 = id.rfind('_', us - 1);
      if (us0 != std::string::npos && parse_int(id.substr(us + 1), seq) == Parse::Ok &&
          parse_int(id.substr(us0 + 1, us - us0 - 1), cluster) == Parse::Ok && seq >= 0 && seq < 1'000'000 &&
          cluster >= 0 && cluster < 9'000'000'000'000)
        j.trace_id = cluster * 1'000'000 + seq;  // application_<cluster start>_<sequence>
    }
    const std::string user = string_at(o, "user", path), vc = string_at(o, "vc", path);
    if (user.empty()) fail(path + ".user", "missing or empty");
    if (vc.empty()) fail(path + ".vc", "missing or empty");
    if (utf8_error(user) != std::string::npos) fail(path + ".user", "not UTF-8 text");
    if (utf8_error(vc) != std::string::npos) fail(path + ".vc", "not UTF-8 text");
    j.tenant = w_.tenants.intern(user);
    j.queue = w_.queues.intern(vc);
    const std::string status = string_at(o, "status", path);
    if (status == "Pass")
      j.trace_status = models::TraceStatus::Completed;
    else if (status == "Killed")
      j.trace_status = models::TraceStatus::Cancelled;
    else if (status == "Failed")
      j.trace_status = models::TraceStatus::Failed;
    else if (!status.empty())
      fail(path + ".status", "expected Pass, Killed or Failed, got " + detail::quoted(status));
    const sim::Tick submit = time_at(o, "submitted_time", path);
    if (submit < 0) fail(path + ".submitted_time", "missing");
    j.submit = submit;

    const auto attempts = o.find("attempts");
    if (attempts != o.end() && !attempts->is_null() && !attempts->is_array())
      fail(path + ".attempts", "expected an array");
    bool running = false;
    bool have_shape = false;
    if (attempts != o.end() && attempts->is_array()) {
      for (std::size_t a = 0; a < attempts->size(); ++a) {
        const json& at = (*attempts)[a];
        const std::string apath = path + ".attempts[" + std::to_string(a) + "]";
        if (!at.is_object()) fail(apath, "expected an object");
        const sim::Tick start = time_at(at, "start_time", apath), end = time_at(at, "end_time", apath);
        if (start >= 0 && start < submit) fail(apath + ".start_time", "before submitted_time");
        if (start >= 0 && end >= 0 && end < start) fail(apath + ".end_time", "before start_time");
        const auto detail = at.find("detail");
        if (detail != at.end() && !detail->is_null()) {
          if (!detail->is_array()) fail(apath + ".detail", "expected an array");
          std::int64_t gpus = 0, per_node = -1;
          for (std::size_t d = 0; d < detail->size(); ++d) {
            const json& m = (*detail)[d];
            const std::string dpath = apath + ".detail[" + std::to_string(d) + "]";
            if (!m.is_object()) fail(dpath, "expected an object");
            const auto g = m.find("gpus");
            if (g == m.end() || g->is_null()) continue;
            if (!g->is_array()) fail(dpath + ".gpus", "expected an array of GPU names");
            const auto n = static_cast<std::int64_t>(g->size());
            gpus += n;
            per_node = per_node < 0 || per_node == n ? n : 0;
          }
          if (!have_shape && gpus > 0 && gpus <= kInt32Max) {  // the first attempt's shape is the request
            have_shape = true;
            j.gpus = static_cast<std::int32_t>(gpus);
            j.nodes = static_cast<std::int32_t>(detail->size());
            j.gpus_per_node = static_cast<std::int32_t>(std::max<std::int64_t>(per_node, 0));
          }
        }
        if (start < 0) continue;  // a logging gap: the attempt's time is unknown
        if (j.trace_start < 0) j.trace_start = start;
        const bool last = a + 1 == attempts->size();
        if (end < 0) {
          if (!last) continue;
          running = true;  // still running when the trace was taken
          j.trace_end = start;
        } else {
          j.runtime += end - start;
          j.trace_end = end;
        }
      }
    }
    latest_ = std::max(latest_, row_latest_);  // only a job read without error counts
    if (j.trace_start < 0) return skip("no attempt with a start time, the job never ran");
    if (j.gpus == 0 && !options_.keep_cpu_only) return skip("no GPU in any attempt's detail");
    origin_ = std::min(origin_, j.submit);
    if (running) running_.push_back(w_.jobs.size());
    w_.jobs.push_back(j);
  }

  LineReader& in_;
  CharStream stream_;
  const ImportOptions& options_;
  models::Workload w_;
  std::size_t index_ = 0;
  int job_line_ = 0;
  mutable std::size_t located_ = 0;                           // errors located by json_position so far
  std::unordered_map<std::string, std::size_t> first_index_;  // jobid -> the job that had it first
  std::vector<std::size_t> running_;
  sim::Tick latest_ = std::numeric_limits<sim::Tick>::min();      // over the jobs read so far
  sim::Tick row_latest_ = std::numeric_limits<sim::Tick>::min();  // in the job being read
  sim::Tick origin_ = std::numeric_limits<sim::Tick>::max();
};

}  // namespace

models::Workload import_philly(LineReader& in, const ImportOptions& options) { return PhillyLog(in, options).run(); }

}  // namespace headroom::traces::detail
