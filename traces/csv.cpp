// headroom's native CSV trace format (also described in traces/README.md).
//
// One job per row, RFC 4180 style: comma-separated cells; a cell in double quotes may hold commas,
// line breaks and doubled quotes (""). Spaces around a cell are ignored. Blank lines are skipped.
// The first non-blank row is a header naming the columns, in any order. Unknown or repeated column
// names are an error.
//
//   column         required  value
//   id             yes       integer trace id
//   tenant         yes       non-empty name (user, account, namespace, project)
//   queue          yes       non-empty name
//   submit         yes       seconds >= 0
//   gpus           yes       whole GPUs, integer >= 0
//   runtime        yes       recorded run time, seconds >= 0
//   gpus_per_node  no        integer >= 0; 0 = no constraint (default)
//   walltime       no        time limit, seconds > 0; empty or -1 = none (default)
//   kind           no        train | inference | interactive | batch (default batch)
//   nodes          no        integer >= 0; 0 = no constraint (default)
//   cpus           no        cores in total, integer >= 0 (default 0 = not modelled)
//   memory_mib     no        memory in total, integer >= 0 (default 0 = not modelled)
//   gpu_milli      no        fraction of one GPU in 1/1000, 0..999 (default 0 = whole GPUs);
//                            needs gpus 0 or 1
//   gpu_memory_mib no        GPU memory of one device in MiB, integer >= 0 (default 0 = not
//                            given; KAI gpu-memory); needs gpus 0 or 1 and no gpu_milli
//   gpu_type       no        GPU type name; empty = any (default)
//   priority       no        integer, larger runs first where the policy uses it (default 0)
//   preemptible    no        true | false | 1 | 0 (default false)
//   trace_start    no        start recorded by the trace, seconds >= 0; empty or -1 = unknown
//   trace_end      no        end recorded by the trace, seconds >= trace_start; empty or -1 = unknown
//   status         no        completed | failed | cancelled | unknown (default unknown)
//   group          no        pod group name: rows with the same group are the pods of one gang
//                            (PodGroup / Workload); empty = the row is a gang of its own
//   gang_min       no        minimum pods of the group to start together (minMember), integer
//                            >= 0; 0 = all; must be the same on every row of a group
//   qos            no        Slurm QOS name; empty = none
//
// Times are seconds with optional decimals ("12.5"), exact to the millisecond for up to three
// decimals and rounded to the nearest millisecond beyond. Integer cells may be written with a zero
// fraction ("8.0"). An empty optional cell takes the default; an empty required cell is an error.
// A row asking for no GPU at all (gpus 0, gpu_milli 0 and gpu_memory_mib 0) is skipped with a warning. Every error
// names the file, the row's line number, the character column, and the column's name and number.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/errors.hpp"
#include "sim/suggest.hpp"
#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

enum class Col {
  Id,
  Tenant,
  Queue,
  Submit,
  Gpus,
  Runtime,
  GpusPerNode,
  Walltime,
  Kind,
  Nodes,
  Cpus,
  MemoryMib,
  GpuMilli,
  GpuType,
  Priority,
  Preemptible,
  TraceStart,
  TraceEnd,
  Status,
  Group,
  GangMin,
  Qos,
  GpuMemoryMib,
};
constexpr std::size_t kColumnCount = 23;
constexpr std::size_t kRequiredCount = 6;  // the first kRequiredCount of Col

const std::array<std::string, kColumnCount>& column_names() {
  static const std::array<std::string, kColumnCount> names = {
      "id",          "tenant",    "queue",  "submit",     "gpus",      "runtime",  "gpus_per_node",  "walltime",
      "kind",        "nodes",     "cpus",   "memory_mib", "gpu_milli", "gpu_type", "priority",       "preemptible",
      "trace_start", "trace_end", "status", "group",      "gang_min",  "qos",      "gpu_memory_mib",
  };
  return names;
}

const std::vector<std::string>& kind_names() {
  static const std::vector<std::string> names = {"train", "inference", "interactive", "batch"};
  return names;
}

const std::vector<std::string>& status_names() {
  static const std::vector<std::string> names = {"completed", "failed", "cancelled", "unknown"};
  return names;
}

class CsvImporter {
 public:
  CsvImporter(LineReader& in, const ImportOptions& options)
      : in_(in), options_(options), keep_cpu_only_(options.keep_cpu_only), records_(in, ',', true) {
    index_.fill(-1);
  }

  models::Workload run() {
    w_.meta.format = "csv";
    std::string_view rec;
    if (!records_.next(rec)) throw sim::InputError(in_.path(), 0, 0, "", "no header row (the file is empty)");
    header(rec);
    std::size_t sampled_bytes = 0;
    while (records_.next(rec)) {
      ++w_.meta.rows;
      // After the first rows, reserve for the whole file from their mean length (gzip files are
      // taken as 4x compressed), so that a million jobs are not copied on every doubling.
      if (w_.meta.rows <= kSampleRows) sampled_bytes += rec.size() + 1;
      if (w_.meta.rows == kSampleRows) reserve(sampled_bytes);
      try {
        row(rec);
      } catch (const sim::InputError& e) {
        bad_row(w_, e, options_);
      }
    }
    ids_.finish(w_, options_, in_.path(),
                "id (column " + std::to_string(index_[static_cast<std::size_t>(Col::Id)] + 1) + ")");
    return std::move(w_);
  }

 private:
  static constexpr std::int64_t kSampleRows = 1024;

  void reserve(std::size_t sampled_bytes) {
    const std::size_t size = in_.file_size() * (in_.compressed() ? 4 : 1);
    const std::size_t estimate = size / std::max<std::size_t>(sampled_bytes / kSampleRows, 1) * 21 / 20;
    w_.jobs.reserve(std::min<std::size_t>(estimate, std::size_t{1} << 26));
  }

  void header(std::string_view rec) {
    records_.split(rec);
    const auto& names = column_names();
    for (std::size_t i = 0; i < records_.cells().size(); ++i) {
      const Cell& c = records_.cells()[i];
      const std::string where = "column " + std::to_string(i + 1);
      const int column = static_cast<int>(c.offset) + 1;
      if (c.text.empty())
        throw sim::InputError(in_.path(), records_.line(), column, where, "empty column name in the header");
      const auto it = std::find(names.begin(), names.end(), c.text);
      if (it == names.end()) {
        std::string msg = "unknown column " + quoted(c.text);
        const std::string hint = did_you_mean(c.text, names);
        if (!hint.empty()) {
          msg += hint;
        } else {
          msg += "; known columns:";
          for (const auto& n : names) msg += " " + n;
        }
        throw sim::InputError(in_.path(), records_.line(), column, where, msg);
      }
      const auto k = static_cast<std::size_t>(it - names.begin());
      if (index_[k] >= 0)
        throw sim::InputError(
            in_.path(), records_.line(), column, where,
            "column " + quoted(c.text) + " appears twice (also column " + std::to_string(index_[k] + 1) + ")");
      index_[k] = static_cast<int>(i);
      columns_.push_back(static_cast<Col>(k));
    }
    std::string missing;
    for (std::size_t k = 0; k < kRequiredCount; ++k) {
      if (index_[k] >= 0) continue;
      if (!missing.empty()) missing += ", ";
      missing += quoted(names[k]);
    }
    if (!missing.empty())
      throw sim::InputError(in_.path(), records_.line(), 0, "header",
                            "missing required column" +
                                std::string(missing.find(',') != std::string::npos ? "s " : " ") + missing +
                                " (required: id, tenant, queue, submit, gpus, runtime)");
  }

  [[noreturn]] void fail(std::size_t i, const std::string& message) const {
    const std::string where =
        column_names()[static_cast<std::size_t>(columns_[i])] + " (column " + std::to_string(i + 1) + ")";
    throw sim::InputError(in_.path(), records_.line(), static_cast<int>(records_.cells()[i].offset) + 1, where,
                          message);
  }

  // Small for the common case; the messages are built out of line, in bad_integer and bad_seconds.
  std::int64_t integer(std::size_t i, std::int64_t lo, std::int64_t hi) const {
    std::int64_t v = 0;
    const Parse r = parse_int_lenient(records_.cells()[i].text, v);
    if (r != Parse::Ok || v < lo || v > hi) bad_integer(i, r, lo, hi);
    return v;
  }

  // A syntax or range error, else (parsed, but not in [lo, hi]) the range it must be in.
  [[noreturn]] void bad_integer(std::size_t i, Parse r, std::int64_t lo, std::int64_t hi) const {
    const std::string_view t = records_.cells()[i].text;
    if (r == Parse::Syntax) fail(i, "expected an integer, got " + quoted(t));
    if (r == Parse::Range) fail(i, "number out of range, got " + quoted(t));
    const std::string range =
        hi == std::numeric_limits<std::int32_t>::max() || hi == std::numeric_limits<std::int64_t>::max()
            ? ">= " + std::to_string(lo)
            : "in " + std::to_string(lo) + ".." + std::to_string(hi);
    fail(i, "expected an integer " + range + ", got " + quoted(t));
  }

  // Milliseconds; -1 for "-1" when `unknown_ok`.
  sim::Tick seconds(std::size_t i, bool unknown_ok) const {
    std::int64_t ms = 0;
    const Parse r = parse_seconds(records_.cells()[i].text, ms);
    if (r == Parse::Ok && ms >= 0) return ms;
    if (r == Parse::Ok && unknown_ok && ms == -sim::kSecond) return -1;
    bad_seconds(i, r, unknown_ok);
  }

  // A syntax or range error, else (parsed, but negative and not the -1 allowed) the rule.
  [[noreturn]] void bad_seconds(std::size_t i, Parse r, bool unknown_ok) const {
    const std::string_view t = records_.cells()[i].text;
    if (r == Parse::Syntax) fail(i, "expected a number of seconds, got " + quoted(t));
    if (r == Parse::Range)
      fail(i, "time out of range (at most " + std::to_string(kMaxSeconds) + " s), got " + quoted(t));
    fail(i, std::string("expected a non-negative number of seconds") + (unknown_ok ? " (or -1 for unknown)" : "") +
                ", got " + quoted(t));
  }

  // A name cell (tenant, queue, GPU type): stored in results as UTF-8 strings, so it must be UTF-8.
  std::string_view name(std::size_t i) const {
    const std::string_view t = records_.cells()[i].text;
    // ASCII, the usual case, is valid UTF-8: the full check only when there is another byte.
    for (const char c : t) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        check_utf8(i);
        break;
      }
    }
    return t;
  }

  void check_utf8(std::size_t i) const {
    const std::string_view t = records_.cells()[i].text;
    const std::size_t bad = utf8_error(t);
    if (bad != std::string_view::npos) {
      fail(i, "not UTF-8 text: byte " + sim::hex_byte(static_cast<unsigned char>(t[bad])) +
                  " is not valid UTF-8 (save the trace as UTF-8)");
    }
  }

  std::uint16_t gpu_type(std::size_t i) {
    const std::string_view t = name(i);
    const auto it = gpu_types_.find(t);
    if (it != gpu_types_.end()) return it->second;
    if (w_.gpu_type_names.size() >= std::numeric_limits<std::uint16_t>::max())
      fail(i, "too many distinct GPU types (at most 65535)");
    w_.gpu_type_names.emplace_back(t);
    const auto id = static_cast<std::uint16_t>(w_.gpu_type_names.size());
    gpu_types_.emplace(std::string(t), id);
    return id;
  }

  void row(std::string_view rec) {
    records_.split(rec);
    if (records_.cells().size() != columns_.size()) {
      const std::string msg = "expected " + std::to_string(columns_.size()) + " cells as in the header, got " +
                              std::to_string(records_.cells().size());
      const std::size_t at =
          records_.cells().size() > columns_.size() ? records_.cells()[columns_.size()].offset : rec.size();
      throw sim::InputError(in_.path(), records_.line(), static_cast<int>(at) + 1, "", msg);
    }
    constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
    models::Job j;
    sim::Tick start = -1;
    sim::Tick end = -1;
    std::size_t end_cell = 0;
    std::size_t milli_cell = 0, memory_cell = 0;
    std::size_t group_cell = 0, gang_cell = records_.cells().size();
    // The cell count and the columns in locals: the calls below may not be assumed to keep them.
    const std::size_t count = records_.cells().size();
    const Col* columns = columns_.data();
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view t = records_.cells()[i].text;
      const Col col = columns[i];
      if (t.empty()) {
        if (static_cast<std::size_t>(col) < kRequiredCount) fail(i, "empty value in a required column");
        continue;
      }
      switch (col) {
        case Col::Id:
          j.trace_id = integer(i, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
          break;
        case Col::Tenant: j.tenant = w_.tenants.intern(name(i)); break;
        case Col::Queue: j.queue = w_.queues.intern(name(i)); break;
        case Col::Submit: j.submit = seconds(i, false); break;
        case Col::Gpus: j.gpus = static_cast<std::int32_t>(integer(i, 0, kInt32Max)); break;
        case Col::Runtime: j.runtime = seconds(i, false); break;
        case Col::GpusPerNode: j.gpus_per_node = static_cast<std::int32_t>(integer(i, 0, kInt32Max)); break;
        case Col::Walltime:
          j.walltime = seconds(i, true);
          if (j.walltime == 0) fail(i, "expected a positive number of seconds (or -1 for none), got " + quoted(t));
          break;
        case Col::Kind:
          if (!models::parse_job_kind(t, j.kind))
            fail(i, "expected one of train, inference, interactive, batch, got " + quoted(t) +
                        did_you_mean(t, kind_names()));
          break;
        case Col::Nodes: j.nodes = static_cast<std::int32_t>(integer(i, 0, kInt32Max)); break;
        case Col::Cpus: j.cpus = static_cast<std::int32_t>(integer(i, 0, kInt32Max)); break;
        case Col::MemoryMib: j.memory_mib = integer(i, 0, std::numeric_limits<std::int64_t>::max()); break;
        case Col::GpuMilli:
          j.gpu_milli = static_cast<std::int32_t>(integer(i, 0, 999));
          milli_cell = i;
          break;
        case Col::GpuType: j.gpu_type = gpu_type(i); break;
        case Col::Priority:
          j.priority = static_cast<std::int32_t>(integer(i, std::numeric_limits<std::int32_t>::min(), kInt32Max));
          break;
        case Col::Preemptible:
          if (t == "true" || t == "1")
            j.preemptible = true;
          else if (t == "false" || t == "0")
            j.preemptible = false;
          else
            fail(i, "expected true, false, 1 or 0, got " + quoted(t));
          break;
        case Col::TraceStart: start = seconds(i, true); break;
        case Col::TraceEnd:
          end = seconds(i, true);
          end_cell = i;
          break;
        case Col::Status:
          if (t == "completed")
            j.trace_status = models::TraceStatus::Completed;
          else if (t == "failed")
            j.trace_status = models::TraceStatus::Failed;
          else if (t == "cancelled")
            j.trace_status = models::TraceStatus::Cancelled;
          else if (t == "unknown")
            j.trace_status = models::TraceStatus::Unknown;
          else
            fail(i, "expected one of completed, failed, cancelled, unknown, got " + quoted(t) +
                        did_you_mean(t, status_names()));
          break;
        case Col::Group:
          j.group = w_.groups.intern(name(i));
          group_cell = i;
          break;
        case Col::GangMin:
          j.gang_min = static_cast<std::int32_t>(integer(i, 0, kInt32Max));
          gang_cell = i;
          break;
        case Col::Qos: j.qos = w_.qos.intern(name(i)); break;
        case Col::GpuMemoryMib:
          j.gpu_memory_mib = integer(i, 0, std::numeric_limits<std::int64_t>::max());
          memory_cell = i;
          break;
      }
    }
    if (start >= 0 && end >= 0 && end < start)
      fail(end_cell, "trace_end " + quoted(records_.cells()[end_cell].text) + " is before trace_start");
    if (j.gpu_milli > 0 && j.gpus > 1)
      fail(milli_cell, "a fraction of a GPU needs gpus 0 or 1, got gpus " + std::to_string(j.gpus));
    if (j.gpu_memory_mib > 0 && j.gpu_milli > 0)
      fail(memory_cell,
           "give gpu_milli or gpu_memory_mib, not both (gpu_milli is " + std::to_string(j.gpu_milli) + ")");
    if (j.gpu_memory_mib > 0 && j.gpus > 1)
      fail(memory_cell, "GPU memory of one device needs gpus 0 or 1, got gpus " + std::to_string(j.gpus));
    if (j.group != models::kNone) {
      if (j.group >= group_gang_min_.size()) group_gang_min_.resize(j.group + 1, -1);
      std::int32_t& seen = group_gang_min_[j.group];
      if (seen >= 0 && seen != j.gang_min)
        fail(gang_cell < records_.cells().size() ? gang_cell : group_cell,
             "gang_min " + std::to_string(j.gang_min) + " differs from " + std::to_string(seen) +
                 " on an earlier row of group " + quoted(records_.cells()[group_cell].text));
      seen = j.gang_min;
    }
    j.trace_start = start;
    j.trace_end = end;
    if (j.gpus == 0 && j.gpu_milli == 0 && j.gpu_memory_mib == 0 && !keep_cpu_only_) {
      skip_row(w_, records_.line(), "no GPU requested (gpus 0)");
      return;
    }
    j.line = static_cast<std::uint32_t>(records_.line());
    w_.jobs.push_back(j);
    const int id_cell = index_[static_cast<std::size_t>(Col::Id)];
    ids_.add(j.trace_id, records_.line(),
             static_cast<int>(records_.cells()[static_cast<std::size_t>(id_cell)].offset) + 1, w_.jobs.size() - 1);
  }

  LineReader& in_;
  const ImportOptions& options_;
  bool keep_cpu_only_ = false;
  models::Workload w_;
  std::array<int, kColumnCount> index_{};  // cell index of each Col, -1 when absent
  std::vector<Col> columns_;               // Col of each cell
  RecordReader records_;
  std::map<std::string, std::uint16_t, std::less<>> gpu_types_;
  std::vector<std::int32_t> group_gang_min_;  // gang_min seen per group, -1 = none yet
  IdCheck ids_;
};

}  // namespace

models::Workload import_csv(LineReader& in, const ImportOptions& options) { return CsvImporter(in, options).run(); }

bool looks_like_csv_header(std::string_view line) {
  if (line.find(',') == std::string_view::npos) return false;
  std::vector<Cell> cells;
  std::string scratch;
  if (split_record(line, cells, scratch).error != SplitError::None) return false;
  return std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.text == "submit"; });
}

}  // namespace headroom::traces::detail
