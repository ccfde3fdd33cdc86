// Slurm accounting records: `sacct --parsable2` (or `--parsable`) output with a header row, e.g.
//
//   sacct -a -X --parsable2 -S 2024-05-01 -E 2024-06-01 --format=JobID,JobIDRaw,User,Account,
//     Partition,QOS,Submit,Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,State,NodeList,NNodes,
//     NCPUS,Priority   (one argument, without the line breaks)
//
// or without one (`--noheader`), its fields then named by ImportOptions::fields. Open XDMoD's
// documented export is built in and recognised by its 26 fields: `TZ=UTC sacct --clusters C
// --allusers --parsable2 --noheader --allocations --duplicates --format jobid,jobidraw,cluster,
// partition,qos,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,state,
// nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname` (Open XDMoD docs,
// "Slurm Notes", docs/resource-manager-slurm.md in github.com/ubccr/xdmod; the same list is
// `$fieldNames` in classes/OpenXdmod/Shredder/Slurm.php).
//
// GPUs come from the first of AllocTRES, AllocGRES, ReqTRES, ReqGRES that names any: TRES items
// "gres/gpu=4", "gres/gpu:a100=2"; GRES (Slurm before TRES carried GRES) "gpu:2", "gpu:V100:32",
// "gpu:P100:2(IDX:1,3)", "gpu" (one). ReqGRES counts per node (sbatch --gres is per node) and is
// multiplied by NNodes; AllocGRES counts the job's total.
//
// Cells are separated by '|', without quoting. Columns may come in any order; unknown ones are
// ignored. Job steps (`123.batch`, `123.extern`, `123.0`) are not jobs and are passed over; array
// tasks (`123_4`) are one job each, a pending array range (`123_[1-3,7%2]`) is expanded into one
// job per task; the components of a heterogeneous job (`123+0`, `123+1`) are merged into one
// job. Times are read as UTC. The mapping to models::Job is documented in traces/README.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
// The most tasks one pending array range row may expand to (Slurm's MaxArraySize is at most
// 4,000,001; real ranges are far smaller).
constexpr std::int64_t kMaxArrayTasks = 1'000'000;

enum SacctCol : std::size_t {
  kJobId,
  kJobIdRaw,
  kUser,
  kAccount,
  kPartition,
  kQos,
  kSubmit,
  kStart,
  kEnd,
  kElapsed,
  kTimelimit,
  kAllocTres,
  kReqTres,
  kState,
  kNNodes,
  kNCpus,
  kPriority,
  kAllocGres,
  kReqGres,
  kElapsedRaw,
  kTimelimitRaw,
  kAllocCpus,
};

// Submit and Start are needed; the job id from JobID or JobIDRaw; the run time from Elapsed,
// ElapsedRaw or End - Start (checked in import_sacct, which names the columns it used). Without
// State every job's status is unknown (it ends as recorded; a PENDING job cannot be told apart,
// so a row with no Start is skipped as a job cancelled before it started is).
constexpr Column kColumns[] = {
    {"JobID", false},        {"JobIDRaw", false},  {"User", false},      {"Account", false}, {"Partition", false},
    {"QOS", false},          {"Submit", true},     {"Start", true},      {"End", false},     {"Elapsed", false},
    {"Timelimit", false},    {"AllocTRES", false}, {"ReqTRES", false},   {"State", false},   {"NNodes", false},
    {"NCPUS", false},        {"Priority", false},  {"AllocGRES", false}, {"ReqGRES", false}, {"ElapsedRaw", false},
    {"TimelimitRaw", false}, {"AllocCPUS", false},
};

// Open XDMoD's documented `sacct --format` list (see the top of this file).
constexpr std::string_view kXdmodFields =
    "jobid,jobidraw,cluster,partition,qos,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,"
    "state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname";
constexpr std::size_t kXdmodFieldCount = 26;
// The 25-field lists of earlier Open XDMoD releases, without qos: 9.5's (reqtres, alloctres) and
// the one before (reqgres, reqtres), as their "Slurm Notes" pages give `--format` (e.g.
// https://open.xdmod.org/9.5/resource-manager-slurm.html). The first row's cell 21 tells them apart:
// TRES items ("billing=1,cpu=1,...") or nothing in 9.5's, a GRES ("gpu:2") in the older one.
constexpr std::string_view kXdmod95Fields =
    "jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,state,"
    "nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname";
constexpr std::string_view kXdmodGresFields =
    "jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,state,"
    "nnodes,ncpus,reqcpus,reqmem,reqgres,reqtres,timelimit,nodelist,jobname";
constexpr std::size_t kXdmodOldFieldCount = 25;

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A Slurm job id cell, split.
struct JobIdCell {
  enum Kind { Plain, ArrayTask, ArrayRange, HetComponent, Step } kind = Plain;
  std::int64_t base = 0;
  std::string_view het_key;  // "123" of "123+1": the key that merges het components
  std::string_view range;    // "1-3,7%2" of "123_[1-3,7%2]"
};

bool parse_job_id(std::string_view s, JobIdCell& out) {
  if (s.find('.') != std::string_view::npos) {
    out.kind = JobIdCell::Step;
    return true;
  }
  const std::size_t sep = s.find_first_of("_+");
  const std::string_view base = s.substr(0, sep);
  if (!all_digits(base) || parse_int(base, out.base) != Parse::Ok) return false;
  if (sep == std::string_view::npos) {
    out.kind = JobIdCell::Plain;
    return true;
  }
  const std::string_view rest = s.substr(sep + 1);
  if (s[sep] == '+') {
    if (!all_digits(rest)) return false;
    out.kind = JobIdCell::HetComponent;
    out.het_key = base;
    return true;
  }
  if (all_digits(rest)) {
    out.kind = JobIdCell::ArrayTask;
    return true;
  }
  if (rest.size() < 3 || rest.front() != '[' || rest.back() != ']') return false;
  out.kind = JobIdCell::ArrayRange;
  out.range = rest.substr(1, rest.size() - 2);
  return true;
}

// Expands "1-3,7,10-20:5%2" (a throttle after '%' is ignored) into task indices. False when
// malformed or when it names more than kMaxArrayTasks tasks.
bool expand_range(std::string_view spec, std::vector<std::int64_t>& out) {
  out.clear();
  spec = spec.substr(0, spec.find('%'));
  if (spec.empty()) return false;
  std::int64_t total = 0;
  while (true) {
    const std::size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    std::int64_t step = 1;
    if (const std::size_t colon = item.find(':'); colon != std::string_view::npos) {
      if (!all_digits(item.substr(colon + 1)) || parse_int(item.substr(colon + 1), step) != Parse::Ok || step < 1)
        return false;
      item = item.substr(0, colon);
    }
    const std::size_t dash = item.find('-');
    std::int64_t lo = 0, hi = 0;
    const std::string_view a = item.substr(0, dash);
    const std::string_view b = dash == std::string_view::npos ? a : item.substr(dash + 1);
    if (!all_digits(a) || !all_digits(b) || parse_int(a, lo) != Parse::Ok || parse_int(b, hi) != Parse::Ok || hi < lo)
      return false;
    total += (hi - lo) / step + 1;
    if (total > kMaxArrayTasks) return false;
    for (std::int64_t i = lo; i <= hi; i += step) out.push_back(i);
    if (comma == std::string_view::npos) break;
    spec = spec.substr(comma + 1);
  }
  return true;
}

// A Slurm duration: "M", "M:S", "H:M:S", "D-H", "D-H:M" or "D-H:M:S" (seconds may carry a
// fraction), to milliseconds.
bool parse_slurm_duration(std::string_view s, sim::Tick& out_ms) {
  std::int64_t days = 0;
  bool has_days = false;
  if (const std::size_t dash = s.find('-'); dash != std::string_view::npos) {
    if (!all_digits(s.substr(0, dash)) || parse_int(s.substr(0, dash), days) != Parse::Ok) return false;
    has_days = true;
    s = s.substr(dash + 1);
  }
  std::string_view parts[3];
  std::size_t n = 0;
  while (true) {
    if (n == 3) return false;
    const std::size_t colon = s.find(':');
    parts[n++] = s.substr(0, colon);
    if (colon == std::string_view::npos) break;
    s = s.substr(colon + 1);
  }
  // Fields in units of seconds, from the first; the last may have a fraction when it is seconds.
  std::int64_t unit[3] = {0, 0, 0};
  if (has_days) {
    unit[0] = 3600, unit[1] = 60, unit[2] = 1;
  } else if (n == 1) {
    unit[0] = 60;
  } else if (n == 2) {
    unit[0] = 60, unit[1] = 1;
  } else {
    unit[0] = 3600, unit[1] = 60, unit[2] = 1;
  }
  if (days > kMaxSeconds / 86400) return false;
  std::int64_t ms = days * 86400 * sim::kSecond;
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t v = 0;
    if (unit[i] == 1 && i == n - 1) {
      if (!is_decimal(parts[i]) || parts[i].front() == '-' || parse_seconds(parts[i], v) != Parse::Ok) return false;
      if (i > 0 && v >= 60 * sim::kSecond) return false;
    } else {
      if (!all_digits(parts[i]) || parse_int(parts[i], v) != Parse::Ok || v > kMaxSeconds / unit[i]) return false;
      // A clock field after a larger one stays in its range: minutes and seconds 0-59, hours 0-23
      // after days (issue #20: "25:99:99" is not a duration).
      if ((i > 0 || has_days) && v >= (unit[i] == 3600 ? 24 : 60)) return false;
      v *= unit[i] * sim::kSecond;
    }
    ms += v;
    if (ms > kMaxSeconds * sim::kSecond) return false;
  }
  out_ms = ms;
  return true;
}

// "Unknown", "None" or empty: not known (-1); else a date-time in ms since the epoch.
sim::Tick time_cell(const Table& t, std::size_t k) {
  const std::string_view v = t.text(k);
  if (v.empty() || v == "Unknown" || v == "None") return -1;
  sim::Tick ms = 0;
  if (!parse_datetime(v, ms))
    t.fail(k, "expected a date and time like \"2024-05-01T10:00:00\" (or Unknown, None), got " + quoted(v));
  return ms;
}

sim::Tick duration_cell(const Table& t, std::size_t k) {
  sim::Tick ms = 0;
  if (!parse_slurm_duration(t.text(k), ms))
    t.fail(k,
           "expected a Slurm duration like \"1-02:03:04\", \"02:03:04\", \"03:04\" or minutes (minutes and seconds "
           "0-59, hours 0-23 after days), got " +
               quoted(t.text(k)));
  return ms;
}

struct Tres {
  std::int64_t gpus = -1;  // untyped gres/gpu, -1 when absent
  std::int64_t typed = 0;  // sum of gres/gpu:<type>
  std::string_view type;   // the one type named; empty when none or several
  bool several_types = false;
  std::int64_t cpus = -1;
  std::int64_t mem_mib = -1;
  std::int64_t nodes = -1;
};

// "mem=16G" etc.: K, M (default), G, T, P suffixes (binary), to MiB rounding up.
bool parse_mem(std::string_view v, std::int64_t& mib) {
  double scale = 1;
  if (!v.empty() && !(v.back() >= '0' && v.back() <= '9')) {
    switch (v.back()) {
      case 'K': scale = 1.0 / 1024; break;
      case 'M': scale = 1; break;
      case 'G': scale = 1024; break;
      case 'T': scale = 1024.0 * 1024; break;
      case 'P': scale = 1024.0 * 1024 * 1024; break;
      default: return false;
    }
    v.remove_suffix(1);
  }
  if (!is_decimal(v) || v.front() == '-') return false;
  const double x = std::ceil(std::stod(std::string(v)) * scale);
  if (!(x <= 1e15)) return false;
  mib = static_cast<std::int64_t>(x);
  return true;
}

// "billing=8,cpu=8,gres/gpu:a100=4,gres/gpu=4,mem=64G,node=1".
void parse_tres(const Table& t, std::size_t k, Tres& out) {
  std::string_view s = t.text(k);
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) t.fail(k, "expected name=value items, got " + quoted(item));
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    const auto count = [&](std::int64_t hi) {
      std::int64_t v = 0;
      if (!all_digits(value) || parse_int(value, v) != Parse::Ok || v > hi)
        t.fail(k, std::string(key) + ": expected a count, got " + quoted(value));
      return v;
    };
    if (key == "gres/gpu") {
      out.gpus = count(kInt32Max);
    } else if (key.starts_with("gres/gpu:")) {
      out.typed = std::min<std::int64_t>(out.typed + count(kInt32Max), kInt32Max);
      const std::string_view type = key.substr(9);
      if (!out.type.empty() && out.type != type) out.several_types = true;
      if (out.type.empty()) out.type = type;
    } else if (key == "cpu") {
      out.cpus = count(kInt32Max);
    } else if (key == "node") {
      out.nodes = count(kInt32Max);
    } else if (key == "mem") {
      if (!parse_mem(value, out.mem_mib))
        t.fail(k, "mem: expected a size like \"64G\", \"500M\" or \"1.5T\", got " + quoted(value));
    }
  }
}

// A GRES list: "gpu:2", "gpu:V100:32,mps:100", "gpu:P100:2(IDX:1,3)", "gpu:tesla:2(IDX:0-1)",
// "gpu" (one). Only gpu items count; the "(IDX:...)" device index list is passed over.
void parse_gres(const Table& t, std::size_t k, Tres& out) {
  std::string_view s = t.text(k);
  while (!s.empty()) {
    // Items are separated by commas outside parentheses.
    std::size_t end = 0;
    int depth = 0;
    for (; end < s.size(); ++end) {
      if (s[end] == '(') ++depth;
      if (s[end] == ')') depth = std::max(depth - 1, 0);
      if (s[end] == ',' && depth == 0) break;
    }
    std::string_view item = s.substr(0, end);
    s = end < s.size() ? s.substr(end + 1) : std::string_view();
    item = item.substr(0, item.find('('));
    if (item.empty()) continue;
    const std::size_t c1 = item.find(':');
    if (item.substr(0, c1) != "gpu" && item.substr(0, c1) != "gres/gpu") continue;
    std::string_view type;
    std::string_view count = "1";
    if (c1 != std::string_view::npos) {
      const std::string_view rest = item.substr(c1 + 1);
      const std::size_t c2 = rest.find(':');
      if (c2 != std::string_view::npos) {
        type = rest.substr(0, c2);
        count = rest.substr(c2 + 1);
      } else if (all_digits(rest)) {
        count = rest;
      } else {
        type = rest;  // "gpu:k80": one GPU of a type
      }
    }
    std::int64_t v = 0;
    if (!all_digits(count) || parse_int(count, v) != Parse::Ok || v > kInt32Max)
      t.fail(k, "expected a GRES like \"gpu:2\", \"gpu:V100:4\" or \"gpu:P100:2(IDX:1,3)\", got " + quoted(item));
    if (type.empty()) {
      out.gpus = std::min<std::int64_t>(std::max<std::int64_t>(out.gpus, 0) + v, kInt32Max);
    } else {
      out.typed = std::min<std::int64_t>(out.typed + v, kInt32Max);
      if (!out.type.empty() && out.type != type) out.several_types = true;
      if (out.type.empty()) out.type = type;
    }
  }
}

bool names_gpus(const Tres& t) { return t.gpus >= 0 || t.typed > 0; }

// The first word of State ("CANCELLED by 1234" -> CANCELLED).
models::TraceStatus parse_state(std::string_view state) {
  const std::string_view s = state.substr(0, state.find(' '));
  if (s == "COMPLETED") return models::TraceStatus::Completed;
  if (s == "CANCELLED" || s == "PREEMPTED" || s == "REVOKED") return models::TraceStatus::Cancelled;
  if (s == "FAILED" || s == "TIMEOUT" || s == "OUT_OF_MEMORY" || s == "NODE_FAIL" || s == "BOOT_FAIL" ||
      s == "DEADLINE")
    return models::TraceStatus::Failed;
  return models::TraceStatus::Unknown;  // PENDING, RUNNING, REQUEUED, SUSPENDED, RESIZING, ...
}

std::uint16_t intern_gpu_type(models::Workload& w, std::string_view name) {
  for (std::size_t i = 0; i < w.gpu_type_names.size(); ++i)
    if (w.gpu_type_names[i] == name) return static_cast<std::uint16_t>(i + 1);
  w.gpu_type_names.emplace_back(name);
  return static_cast<std::uint16_t>(w.gpu_type_names.size());
}

struct Entry {
  models::Job job;
  int line = 0;
  bool pending = false;  // State PENDING: never started, asks for its time limit
  bool started = false;
  std::string state;  // for warnings
};

std::int32_t clamp32(std::int64_t v) { return static_cast<std::int32_t>(std::min(v, kInt32Max)); }

// True when the first cell of a '|' line is a Slurm job id ("123", "123_4", "123_[1-3]",
// "123+0", "123.batch"): a data row, not a header.
bool starts_with_job_id(std::string_view line) {
  const std::string_view first = line.substr(0, line.find('|'));
  JobIdCell id;
  return !first.empty() && first.front() >= '0' && first.front() <= '9' && parse_job_id(trim(first), id);
}

std::size_t cell_count(std::string_view line) {
  std::size_t n = static_cast<std::size_t>(std::count(line.begin(), line.end(), '|')) + 1;
  if (n > 1 && line.back() == '|') --n;  // --parsable ends lines with the delimiter
  return n;
}

}  // namespace

}  // namespace headroom::traces::detail

namespace headroom::traces {

std::vector<std::pair<std::string, bool>> sacct_columns() {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& c : detail::kColumns) out.emplace_back(c.name, c.required);
  return out;
}

}  // namespace headroom::traces

namespace headroom::traces::detail {

std::vector<std::string> sacct_field_names(const std::vector<std::string>& fields) {
  if (fields.size() == 1 && (fields[0] == "xdmod" || fields[0] == "XDMoD")) return split_fields(kXdmodFields);
  std::vector<std::string> out;  // each as the field sacct prints for it ("sub": Submit)
  for (const auto& f : fields) out.push_back(sacct_field(f).value_or(f));
  return out;
}

models::Workload import_sacct(LineReader& in, const ImportOptions& options) {
  models::Workload w;
  w.meta.format = "sacct";
  std::vector<std::string> names = sacct_field_names(options.fields);
  const char* where = names.empty() ? "header" : "field list";
  if (names.empty()) {
    // No field list given: a header row, or Open XDMoD's header-less export.
    LineReader peek(in.path());
    std::string_view first;
    while (peek.next_line(first) && trim(first).empty()) {
    }
    if (!trim(first).empty() && starts_with_job_id(first)) {
      const std::size_t n = cell_count(first);
      if (n == kXdmodOldFieldCount) {
        std::string_view cell = first;
        for (int i = 0; i < 20; ++i) cell = cell.substr(cell.find('|') + 1);
        cell = cell.substr(0, cell.find('|'));
        // Empty (a job that asked for no TRES, or no GRES): 9.5's; read the other way the cells
        // would still give the same GPUs (ReqTRES as AllocTRES).
        const bool tres = cell.empty() || cell.find('=') != std::string_view::npos;
        const std::string_view list = tres ? kXdmod95Fields : kXdmodGresFields;
        names = split_fields(list);
        where = "field list";
        w.meta.warnings.push_back(std::string("no header row: read as Open XDMoD's 25-field sacct export of ") +
                                  (tres ? "release 9.5" : "releases before 9.5") + " (" + std::string(list) + ")");
      } else if (n != kXdmodFieldCount)
        throw sim::InputError(in.path(), peek.line_number(), 0, "",
                              "a header-less sacct export (the first line is a job, " + std::to_string(n) +
                                  " fields): name its fields, in the order given to `sacct --format`, with "
                                  "`--fields` (trace-stats) or `workload.fields` (scenario), e.g. "
                                  "\"jobid,user,account,partition,submit,start,end,elapsed,state,alloctres\"; "
                                  "\"xdmod\" names Open XDMoD's 26 fields");
      if (names.empty()) {
        names = split_fields(kXdmodFields);
        where = "field list";
        w.meta.warnings.push_back("no header row: read as Open XDMoD's 26-field sacct export (" +
                                  std::string(kXdmodFields) + ")");
      }
    }
  }
  Table t(in, kColumns,
          {.delimiter = '|',
           .quotes = false,
           .header = names.empty(),
           .names = names,
           .ignore_case = true,
           .layout = "Slurm sacct"});
  if (!t.has(kJobId) && !t.has(kJobIdRaw))
    throw sim::InputError(in.path(), t.line(), 0, where, "the Slurm sacct layout needs a JobID or JobIDRaw column");
  if (!t.has(kElapsed) && !t.has(kElapsedRaw) && !t.has(kEnd))
    throw sim::InputError(in.path(), t.line(), 0, where,
                          "the Slurm sacct layout needs the run time: an Elapsed, ElapsedRaw or End column");
  if (!t.has(kAccount) && !t.has(kUser))
    throw sim::InputError(in.path(), t.line(), 0, where, "the Slurm sacct layout needs an Account or User column");
  if (!t.has(kAllocTres) && !t.has(kReqTres) && !t.has(kAllocGres) && !t.has(kReqGres))
    throw sim::InputError(in.path(), t.line(), 0, where,
                          "the Slurm sacct layout needs an AllocTRES or ReqTRES column (or AllocGRES, ReqGRES) "
                          "for the GPUs");
  // Which columns give what, said once (sacct layouts differ from site to site).
  {
    const auto name = [&](std::size_t k) { return std::string(kColumns[k].name); };
    const std::size_t id = t.has(kJobId) ? kJobId : kJobIdRaw;
    const std::string run = t.has(kElapsed) ? name(kElapsed) : t.has(kElapsedRaw) ? name(kElapsedRaw) : "End - Start";
    std::string gpus;
    for (const std::size_t k : {kAllocTres, kAllocGres, kReqTres, kReqGres})
      if (t.has(k)) gpus += (gpus.empty() ? "" : ", then ") + name(k);
    std::string tenant = t.has(kAccount) ? name(kAccount) : name(kUser);
    if (t.has(kAccount) && t.has(kUser)) tenant += " (else User)";
    std::string limit = t.has(kTimelimit) ? name(kTimelimit) : t.has(kTimelimitRaw) ? name(kTimelimitRaw) : "none";
    // Said when the layout is not sacct's usual one (JobID, Elapsed, Timelimit): which stood in.
    const bool usual = t.has(kJobId) && t.has(kElapsed) && (t.has(kTimelimit) || !t.has(kTimelimitRaw)) &&
                       (t.has(kNCpus) || !t.has(kAllocCpus)) && t.has(kState);
    if (!usual)
      w.meta.warnings.push_back("sacct columns used: job " + name(id) + ", submit " + name(kSubmit) + ", start " +
                                name(kStart) + ", run time " + run + ", GPUs " + gpus + ", tenant " + tenant +
                                ", time limit " + limit + ", status " +
                                (t.has(kState) ? name(kState) : "none (no State column: status unknown)"));
  }
  sim::Tick origin = std::numeric_limits<sim::Tick>::max();
  std::vector<Entry> entries;
  std::map<std::string, std::size_t, std::less<>> het;  // het job key -> entry
  std::vector<std::int64_t> tasks;
  std::unordered_map<std::string, int> first_line;  // JobID -> the line of its row
  for (;;) try {
      if (!t.next()) break;
      JobIdCell id;
      const std::size_t id_col = t.has(kJobId) ? kJobId : kJobIdRaw;
      if (!parse_job_id(t.text(id_col), id))
        t.fail(id_col, "expected a Slurm job id like 123, 123_4, 123_[1-3], 123+1 or a step 123.batch, got " +
                           quoted(t.text(id_col)));
      if (id.kind == JobIdCell::Step) continue;  // steps run inside their job's allocation
      ++w.meta.rows;
      // A job's own row comes once (steps and het components have ids of their own).
      if (const auto [seen, fresh] = first_line.try_emplace(std::string(t.text(id_col)), t.line()); !fresh)
        t.fail(id_col,
               "duplicate job id " + quoted(t.text(id_col)) + " (first at line " + std::to_string(seen->second) + ")");
      Entry e;
      e.line = t.line();
      models::Job& j = e.job;
      j.trace_id = id.base;
      if (t.has(kJobIdRaw) && id.kind != JobIdCell::ArrayRange) {
        std::int64_t raw = 0;
        if (parse_int(t.text(kJobIdRaw), raw) == Parse::Ok) j.trace_id = raw;
      }
      const std::string_view account = t.name(kAccount);
      const std::string_view user = t.name(kUser);
      if (account.empty() && user.empty()) t.fail(t.has(kAccount) ? kAccount : kUser, "empty Account and User");
      j.tenant = w.tenants.intern(account.empty() ? user : account);
      const std::string_view partition = t.name(kPartition);
      const std::string_view qos = t.name(kQos);
      j.queue = w.queues.intern(partition.empty() ? std::string_view("default") : partition);
      if (!qos.empty()) j.qos = w.qos.intern(qos);
      const std::string_view state = t.text(kState);
      j.trace_status = parse_state(state);
      e.state = std::string(state.substr(0, state.find(' ')));
      e.pending = e.state == "PENDING";
      j.submit = time_cell(t, kSubmit);
      if (j.submit < 0) t.fail(kSubmit, "submit time unknown");
      origin = std::min(origin, j.submit);
      // A pending job's Start is the scheduler's expected start, not a start.
      j.trace_start = e.pending ? -1 : time_cell(t, kStart);
      if (j.trace_start >= 0 && j.trace_start < j.submit) t.fail(kStart, "Start is before Submit");
      e.started = j.trace_start >= 0;
      if (e.started && t.has(kEnd)) {
        j.trace_end = time_cell(t, kEnd);
        if (j.trace_end >= 0 && j.trace_end < j.trace_start) t.fail(kEnd, "End is before Start");
      }
      if (!e.started) {
        j.runtime = 0;
      } else if (t.has(kElapsed)) {
        j.runtime = duration_cell(t, kElapsed);
      } else if (t.has(kElapsedRaw)) {
        j.runtime = t.integer(kElapsedRaw, 0, kMaxSeconds) * sim::kSecond;
      } else {
        // End - Start; a job still running (End Unknown) has run for an unknown time.
        if (j.trace_end < 0) {
          skip_row(w, t.line(), "End unknown (" + e.state + ") and no Elapsed column: run time unknown");
          continue;
        }
        j.runtime = j.trace_end - j.trace_start;
      }
      const std::size_t limit_col = t.has(kTimelimit) ? kTimelimit : kTimelimitRaw;
      const std::string_view limit = t.text(limit_col);
      if (!limit.empty() && limit != "UNLIMITED" && limit != "Partition_Limit") {
        // TimelimitRaw counts minutes, as a bare Timelimit does.
        j.walltime = duration_cell(t, limit_col);
        if (j.walltime == 0) j.walltime = -1;
      }
      Tres tres;
      const std::size_t tres_col = !t.empty(kAllocTres) ? kAllocTres : kReqTres;
      parse_tres(t, tres_col, tres);
      // GPUs: the first of AllocTRES, AllocGRES, ReqTRES, ReqGRES that names any.
      Tres gpu;
      for (const std::size_t k : {kAllocTres, kAllocGres, kReqTres, kReqGres}) {
        if (t.empty(k)) continue;
        Tres c;
        if (k == kAllocTres || k == kReqTres) {
          parse_tres(t, k, c);
        } else {
          parse_gres(t, k, c);
        }
        if (k == kReqGres) {
          // sbatch --gres counts per node.
          const std::int64_t nodes = std::max<std::int64_t>(
              !t.empty(kNNodes) ? t.integer(kNNodes, 0, kInt32Max) : std::max<std::int64_t>(tres.nodes, 1), 1);
          if (c.gpus > 0) c.gpus = std::min(c.gpus * nodes, kInt32Max);
          c.typed = std::min(c.typed * nodes, kInt32Max);
        }
        if (names_gpus(c)) {
          gpu = c;
          break;
        }
      }
      j.gpus = clamp32(gpu.gpus >= 0 ? gpu.gpus : gpu.typed);
      if (!gpu.type.empty() && !gpu.several_types && j.gpus > 0) j.gpu_type = intern_gpu_type(w, gpu.type);
      if (tres.cpus >= 0) {
        j.cpus = clamp32(tres.cpus);
      } else if (!t.empty(kNCpus)) {
        j.cpus = clamp32(t.integer(kNCpus, 0, kInt32Max));
      } else if (!t.empty(kAllocCpus)) {
        j.cpus = clamp32(t.integer(kAllocCpus, 0, kInt32Max));
      }
      if (tres.mem_mib >= 0) j.memory_mib = tres.mem_mib;
      if (!t.empty(kNNodes)) {
        j.nodes = clamp32(t.integer(kNNodes, 0, kInt32Max));
      } else if (tres.nodes >= 0) {
        j.nodes = clamp32(tres.nodes);
      }
      if (!t.empty(kPriority)) j.priority = clamp32(t.integer(kPriority, 0, std::numeric_limits<std::int64_t>::max()));

      if (id.kind == JobIdCell::HetComponent) {
        const auto it = het.find(id.het_key);
        if (it != het.end()) {
          // Components of a heterogeneous job are allocated and started together: one gang job.
          models::Job& m = entries[it->second].job;
          m.gpus = clamp32(static_cast<std::int64_t>(m.gpus) + j.gpus);
          m.cpus = clamp32(static_cast<std::int64_t>(m.cpus) + j.cpus);
          m.nodes = clamp32(static_cast<std::int64_t>(m.nodes) + j.nodes);
          m.memory_mib += j.memory_mib;
          if (j.gpus > 0 && m.gpu_type != j.gpu_type) m.gpu_type = m.gpus == j.gpus ? j.gpu_type : 0;
          m.submit = std::min(m.submit, j.submit);
          m.runtime = std::max(m.runtime, j.runtime);
          m.walltime = m.walltime < 0 || j.walltime < 0 ? -1 : std::max(m.walltime, j.walltime);
          m.trace_end = m.trace_end < 0 || j.trace_end < 0 ? -1 : std::max(m.trace_end, j.trace_end);
          continue;
        }
        het.emplace(std::string(id.het_key), entries.size());
        entries.push_back(std::move(e));
        continue;
      }
      if (id.kind == JobIdCell::ArrayRange) {
        if (!expand_range(id.range, tasks))
          t.fail(kJobId, "expected an array range like 123_[1-3,5,7-9%2] of at most " + std::to_string(kMaxArrayTasks) +
                             " tasks, got " + quoted(t.text(kJobId)));
        for (std::size_t i = 0; i < tasks.size(); ++i) entries.push_back(e);
        continue;
      }
      entries.push_back(std::move(e));
    } catch (const sim::InputError& e) {
      bad_row(w, e, options);
    }
  for (Entry& e : entries) {
    models::Job& j = e.job;
    if (!e.started && !e.pending) {
      skip_row(w, e.line, "never started (" + (e.state.empty() ? std::string("no State") : e.state) + ")");
      continue;
    }
    if (e.pending) {
      if (j.walltime < 0) {
        skip_row(w, e.line, "pending without a time limit, run time unknown");
        continue;
      }
      j.runtime = j.walltime;  // the backlog: asks for its time limit
    }
    if (j.gpus == 0 && !options.keep_cpu_only) {
      skip_row(w, e.line, "CPU job (no gres/gpu in the TRES)");
      continue;
    }
    j.submit -= origin;
    if (j.trace_start >= 0) j.trace_start -= origin;
    if (j.trace_end >= 0) j.trace_end -= origin;
    j.line = static_cast<std::uint32_t>(e.line);
    w.jobs.push_back(j);
  }
  if (!w.jobs.empty()) w.meta.unix_start = origin / sim::kSecond;
  return w;
}

}  // namespace headroom::traces::detail
