// Standard Workload Format (Parallel Workloads Archive, Feitelson et al.): ';' header comments,
// then one job per line of 18 whitespace-separated fields, -1 meaning unknown.
//
// Mapping to models::Job: trace_id = job id; submit = submit time; runtime = run time; gpus =
// allocated processors (requested processors when the allocation is unknown) divided by
// units_per_gpu, rounded up; walltime = requested time when positive; trace_start = submit + wait
// and trace_end = trace_start + run time when the wait is known; trace_status from the status
// (1 completed, 0 failed, 5 cancelled); tenant "user<id>" and queue "queue<id>" ("unknown" for
// -1), or "partition<id>" from field 16 when the queue is -1 and the partition a whole number other
// than -1 (a Slurm log such as CEA Curie records its partitions there and no queue); kind batch.
// Jobs without a submit time, run time or processor count are skipped with a warning. Fields 6, 7,
// 10, 13, 14, 16, 17 and 18 are checked to be numbers (decimals allowed) and otherwise ignored
// (but for field 16 as said); the others must be integers.

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sim/errors.hpp"
#include "sim/time.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

constexpr int kFields = 18;
constexpr std::int64_t kMaxReserve = 2'000'000;  // jobs reserved up front from the MaxJobs header

enum Field : int {
  kJobId = 0,
  kSubmit = 1,
  kWait = 2,
  kRunTime = 3,
  kAllocProcs = 4,
  kAvgCpuTime = 5,
  kUsedMemory = 6,
  kReqProcs = 7,
  kReqTime = 8,
  kReqMemory = 9,
  kStatus = 10,
  kUserId = 11,
  kGroupId = 12,
  kExecutable = 13,
  kQueueId = 14,
  kPartition = 15,
  kPrecedingJob = 16,
  kThinkTime = 17,
};

constexpr std::array<const char*, kFields> kFieldNames = {
    "job id (field 1)",
    "submit time (field 2)",
    "wait time (field 3)",
    "run time (field 4)",
    "allocated processors (field 5)",
    "average CPU time (field 6)",
    "used memory (field 7)",
    "requested processors (field 8)",
    "requested time (field 9)",
    "requested memory (field 10)",
    "status (field 11)",
    "user id (field 12)",
    "group id (field 13)",
    "executable id (field 14)",
    "queue id (field 15)",
    "partition id (field 16)",
    "preceding job (field 17)",
    "think time (field 18)",
};

constexpr bool decimal_allowed(int field) {
  switch (field) {
    case kAvgCpuTime:
    case kUsedMemory:
    case kReqMemory:
    case kGroupId:
    case kExecutable:
    case kPartition:
    case kPrecedingJob:
    case kThinkTime: return true;
    default: return false;
  }
}

constexpr bool is_time(int field) {
  return field == kSubmit || field == kWait || field == kRunTime || field == kReqTime;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `line` at whitespace and returns the number of fields; stores the first `max` + 1 of them.
int split_fields(std::string_view line, std::string_view* fields, int max) {
  const char* p = line.data();
  const char* const end = p + line.size();
  int n = 0;
  for (;;) {
    while (p < end && is_space(*p)) ++p;
    if (p == end) return n;
    const char* start = p;
    while (p < end && !is_space(*p)) ++p;
    if (n <= max) fields[n] = std::string_view(start, static_cast<std::size_t>(p - start));
    ++n;
  }
}

class SwfImporter {
 public:
  SwfImporter(LineReader& in, const ImportOptions& options)
      : in_(in), options_(options), units_per_gpu_(options.units_per_gpu) {}

  models::Workload run() {
    w_.meta.format = "swf";
    std::string_view line;
    while (in_.next_line(line)) {
      const std::string_view text = trim(line);
      if (text.empty()) continue;
      if (text.front() == ';') {
        header(text.substr(1));
        continue;
      }
      ++w_.meta.rows;
      try {
        job(line);
      } catch (const sim::InputError& e) {
        bad_row(w_, e, options_);
      }
    }
    ids_.finish(w_, options_, in_.path(), kFieldNames[kJobId]);
    return std::move(w_);
  }

 private:
  void header(std::string_view text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = trim(text.substr(0, colon));
    std::string_view value = trim(text.substr(colon + 1));
    std::int64_t* target = nullptr;
    std::int64_t max_jobs = -1;
    if (key == "MaxProcs")
      target = &w_.meta.max_procs;
    else if (key == "MaxNodes")
      target = &w_.meta.max_nodes;
    else if (key == "UnixStartTime")
      target = &w_.meta.unix_start;
    else if (key == "MaxJobs")
      target = &max_jobs;
    else
      return;
    value = value.substr(0, value.find_first_of(" \t\r\v\f"));
    std::int64_t v = 0;
    if (parse_int(value, v) != Parse::Ok) return;
    // The calendar's origin (prime time, the replay's dates) is read in milliseconds: a start
    // before 1970 or beyond kMaxSeconds is no date; the trace is read without one.
    if (target == &w_.meta.unix_start && (v < 0 || v > kMaxSeconds)) {
      warn_line(w_, in_.line_number(),
                "UnixStartTime " + std::to_string(v) +
                    " is not seconds from 0 to 1,000,000,000,000 (1970 to about the year 33,600), ignored");
      return;
    }
    *target = v;
    if (max_jobs > 0 && w_.jobs.empty()) {
      // The header is only a hint: never reserve more jobs than the file can hold (a job line
      // takes at least 35 bytes, and gzip inflates at most about 1,032 times).
      const std::size_t fits = in_.file_size() / 35 * (in_.compressed() ? 1032 : 1);
      w_.jobs.reserve(std::min({static_cast<std::size_t>(std::min(max_jobs, kMaxReserve)), fits}));
    }
  }

  [[noreturn]] void fail(std::string_view line, std::string_view at, const std::string& where,
                         const std::string& message) const {
    const int column = static_cast<int>(at.data() - line.data()) + 1;
    throw sim::InputError(in_.path(), in_.line_number(), column, where, message);
  }

  void warn_skip(const std::string& reason) { skip_row(w_, in_.line_number(), reason); }

  void job(std::string_view line) {
    std::array<std::string_view, kFields + 1> tok;
    const int n = split_fields(line, tok.data(), kFields);
    if (n != kFields) {
      const std::string msg =
          "expected " + std::to_string(kFields) + " whitespace-separated fields, got " + std::to_string(n);
      if (n > kFields) fail(line, tok[kFields], "", msg);
      fail(line, line.substr(line.size()), "", msg);
    }
    std::array<std::int64_t, kFields> v{};
    for (int f = 0; f < kFields; ++f) {
      const Parse r = parse_int(tok[f], v[f]);
      if (r == Parse::Ok) {
        if (is_time(f) && (v[f] > kMaxSeconds || v[f] < -kMaxSeconds))
          fail(line, tok[f], kFieldNames[f],
               "time out of range (at most " + std::to_string(kMaxSeconds) + " s), got " + quoted(tok[f]));
        continue;
      }
      if (r == Parse::Syntax && decimal_allowed(f)) {
        if (is_decimal(tok[f])) continue;
        fail(line, tok[f], kFieldNames[f], "expected a number, got " + quoted(tok[f]));
      }
      if (r == Parse::Range) fail(line, tok[f], kFieldNames[f], "number out of range, got " + quoted(tok[f]));
      fail(line, tok[f], kFieldNames[f], "expected an integer, got " + quoted(tok[f]));
    }

    // A negative time other than SWF's -1 (unknown) is an error in every time field, as a
    // negative duration is in every format (traces/README.md, "Bad rows").
    for (const int f : {kSubmit, kWait, kRunTime, kReqTime})
      if (v[f] < -1)
        fail(line, tok[f], kFieldNames[f], "expected a time >= 0 (or -1 for unknown), got " + quoted(tok[f]));
    if (v[kSubmit] == -1) return warn_skip("submit time unknown (-1)");
    if (v[kRunTime] < 0) return warn_skip("run time unknown (" + std::to_string(v[kRunTime]) + ")");
    const int proc_field = v[kAllocProcs] > 0 ? kAllocProcs : kReqProcs;
    const std::int64_t procs = v[proc_field];
    if (procs <= 0)
      return warn_skip("processors unknown (allocated " + std::to_string(v[kAllocProcs]) + ", requested " +
                       std::to_string(v[kReqProcs]) + ")");
    const std::int64_t gpus = procs / units_per_gpu_ + (procs % units_per_gpu_ != 0 ? 1 : 0);
    if (gpus > std::numeric_limits<std::int32_t>::max())
      fail(line, tok[proc_field], kFieldNames[proc_field], "too many processors, got " + quoted(tok[proc_field]));

    models::Job j;
    j.trace_id = v[kJobId];
    j.kind = models::JobKind::Batch;
    j.submit = sim::from_seconds(v[kSubmit]);
    j.runtime = sim::from_seconds(v[kRunTime]);
    j.gpus = static_cast<std::int32_t>(gpus);
    j.walltime = v[kReqTime] > 0 ? sim::from_seconds(v[kReqTime]) : -1;
    if (v[kWait] >= 0) {
      j.trace_start = j.submit + sim::from_seconds(v[kWait]);
      j.trace_end = j.trace_start + j.runtime;
    }
    switch (v[kStatus]) {
      case 1: j.trace_status = models::TraceStatus::Completed; break;
      case 0: j.trace_status = models::TraceStatus::Failed; break;
      case 5: j.trace_status = models::TraceStatus::Cancelled; break;
      default: j.trace_status = models::TraceStatus::Unknown; break;
    }
    j.tenant = intern(w_.tenants, tenant_ids_, "user", v[kUserId]);
    // No queue but a partition (field 16, which may be a decimal: then it names none): the partition.
    std::int64_t partition = -1;
    if (v[kQueueId] == -1 && parse_int(tok[kPartition], partition) == Parse::Ok && partition != -1)
      j.queue = intern(w_.queues, partition_ids_, "partition", partition);
    else
      j.queue = intern(w_.queues, queue_ids_, "queue", v[kQueueId]);
    j.line = static_cast<std::uint32_t>(in_.line_number());
    w_.jobs.push_back(j);
    ids_.add(v[kJobId], in_.line_number(), static_cast<int>(tok[kJobId].data() - line.data()) + 1, w_.jobs.size() - 1);
  }

  static std::uint32_t intern(models::NameTable& table, std::unordered_map<std::int64_t, std::uint32_t>& cache,
                              std::string_view prefix, std::int64_t id) {
    const auto it = cache.find(id);
    if (it != cache.end()) return it->second;
    std::uint32_t index = 0;
    if (id == -1) {
      index = table.intern(models::kUnknownName);
    } else {
      std::array<char, 32> buf{};
      std::copy(prefix.begin(), prefix.end(), buf.begin());
      const char* end = std::to_chars(buf.data() + prefix.size(), buf.data() + buf.size(), id).ptr;
      index = table.intern(std::string_view(buf.data(), static_cast<std::size_t>(end - buf.data())));
    }
    cache.emplace(id, index);
    return index;
  }

  LineReader& in_;
  const ImportOptions& options_;
  std::int64_t units_per_gpu_;
  models::Workload w_;
  std::unordered_map<std::int64_t, std::uint32_t> tenant_ids_;
  std::unordered_map<std::int64_t, std::uint32_t> queue_ids_;
  std::unordered_map<std::int64_t, std::uint32_t> partition_ids_;
  IdCheck ids_;
};

}  // namespace

models::Workload import_swf(LineReader& in, const ImportOptions& options) { return SwfImporter(in, options).run(); }

bool looks_like_swf_job(std::string_view line) {
  std::array<std::string_view, kFields + 1> tok;
  if (split_fields(line, tok.data(), kFields) != kFields) return false;
  for (int f = 0; f < kFields; ++f)
    if (!is_decimal(tok[f])) return false;
  return true;
}

}  // namespace headroom::traces::detail
