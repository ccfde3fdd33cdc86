#include "traces/fields.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "sim/suggest.hpp"

namespace headroom::traces {

namespace {

// `sacct --helpformat`: the fields sacct prints, in the order it tries them (the fields[] table of
// src/sacct/sacct.c in SchedMD/slurm), with AllocGRES and ReqGRES of the releases before TRES.
constexpr std::array kSacctFields{"Account",
                                  "AdminComment",
                                  "AllocCPUS",
                                  "AllocGRES",
                                  "AllocNodes",
                                  "AllocTRES",
                                  "AssocID",
                                  "AveCPU",
                                  "AveCPUFreq",
                                  "AveDiskRead",
                                  "AveDiskWrite",
                                  "AvePages",
                                  "AveRSS",
                                  "AveVMSize",
                                  "BlockID",
                                  "Cluster",
                                  "Comment",
                                  "Constraints",
                                  "ConsumedEnergy",
                                  "ConsumedEnergyRaw",
                                  "Container",
                                  "CPUTime",
                                  "CPUTimeRAW",
                                  "DBIndex",
                                  "DerivedExitCode",
                                  "Elapsed",
                                  "ElapsedRaw",
                                  "Eligible",
                                  "End",
                                  "ExitCode",
                                  "Extra",
                                  "FailedNode",
                                  "Flags",
                                  "GID",
                                  "Group",
                                  "JobID",
                                  "JobIDRaw",
                                  "JobName",
                                  "Layout",
                                  "Licenses",
                                  "MaxDiskRead",
                                  "MaxDiskReadNode",
                                  "MaxDiskReadTask",
                                  "MaxDiskWrite",
                                  "MaxDiskWriteNode",
                                  "MaxDiskWriteTask",
                                  "MaxPages",
                                  "MaxPagesNode",
                                  "MaxPagesTask",
                                  "MaxRSS",
                                  "MaxRSSNode",
                                  "MaxRSSTask",
                                  "MaxVMSize",
                                  "MaxVMSizeNode",
                                  "MaxVMSizeTask",
                                  "McsLabel",
                                  "MinCPU",
                                  "MinCPUNode",
                                  "MinCPUTask",
                                  "NCPUS",
                                  "NNodes",
                                  "NodeList",
                                  "NTasks",
                                  "Partition",
                                  "Planned",
                                  "PlannedCPU",
                                  "PlannedCPURAW",
                                  "Priority",
                                  "QOS",
                                  "QOSRAW",
                                  "QOSREQ",
                                  "Reason",
                                  "ReqCPUFreq",
                                  "ReqCPUFreqGov",
                                  "ReqCPUFreqMax",
                                  "ReqCPUFreqMin",
                                  "ReqCPUS",
                                  "ReqGRES",
                                  "ReqMem",
                                  "ReqNodes",
                                  "ReqTRES",
                                  "Reservation",
                                  "ReservationId",
                                  "Restarts",
                                  "SegmentSize",
                                  "SLUID",
                                  "Start",
                                  "State",
                                  "StdErr",
                                  "StdIn",
                                  "StdOut",
                                  "Submit",
                                  "SubmitLine",
                                  "Suspended",
                                  "SystemComment",
                                  "SystemCPU",
                                  "Timelimit",
                                  "TimelimitRaw",
                                  "TotalCPU",
                                  "TRESUsageInAve",
                                  "TRESUsageInMax",
                                  "TRESUsageInMaxNode",
                                  "TRESUsageInMaxTask",
                                  "TRESUsageInMin",
                                  "TRESUsageInMinNode",
                                  "TRESUsageInMinTask",
                                  "TRESUsageInTot",
                                  "TRESUsageOutAve",
                                  "TRESUsageOutMax",
                                  "TRESUsageOutMaxNode",
                                  "TRESUsageOutMaxTask",
                                  "TRESUsageOutMin",
                                  "TRESUsageOutMinNode",
                                  "TRESUsageOutMinTask",
                                  "TRESUsageOutTot",
                                  "UID",
                                  "User",
                                  "UserCPU",
                                  "WCKey",
                                  "WCKeyID",
                                  "WorkDir"};

bool prefix_of(std::string_view name, std::string_view field) {
  if (name.empty() || name.size() > field.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) != std::tolower(static_cast<unsigned char>(field[i])))
      return false;
  return true;
}

}  // namespace

// As sacct reads --format (src/sacct/options.c, the field list loop): case is ignored, and a name
// stands for the first field, in the table's order, that it begins ("sub" is Submit, "n" NCPUS).
std::optional<std::string> sacct_field(std::string_view name) {
  name = name.substr(0, name.find('%'));  // "jobname%30": a column width
  for (const char* f : kSacctFields)
    if (prefix_of(name, f)) return std::string(f);
  return std::nullopt;
}

std::optional<std::string> check_sacct_fields(const std::vector<std::string>& names) {
  if (names.size() == 1 && (names[0] == "xdmod" || names[0] == "XDMoD")) return std::nullopt;
  for (const auto& name : names) {
    // sacct tries ALL (every field of that sacct's release, in its order) before the table.
    if (prefix_of(name, "ALL"))
      return "\"" + name +
             "\" stands for ALL, every field of your Slurm release's sacct in its own order: name the fields "
             "in the order given to `sacct --format`, or export with a header row";
    if (sacct_field(name)) continue;
    std::string msg = "unknown sacct field \"" + name + "\" (sacct --format stops at it: Invalid field requested)";
    static const std::vector<std::string> known(kSacctFields.begin(), kSacctFields.end());
    if (const auto near = sim::closest_match(name, known)) msg += "; did you mean \"" + *near + "\"?";
    return msg;
  }
  return std::nullopt;
}

}  // namespace headroom::traces

namespace headroom::traces::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view s) {
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}

}  // namespace

Parse parse_int_general(std::string_view text, std::int64_t& out) {
  if (text.empty()) return Parse::Syntax;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, out);
  if (ptr != last) return Parse::Syntax;
  if (ec == std::errc::result_out_of_range) return Parse::Range;
  if (ec != std::errc()) return Parse::Syntax;
  return Parse::Ok;
}

Parse parse_int_lenient_general(std::string_view text, std::int64_t& out) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return parse_int_general(text, out);
  const std::string_view frac = text.substr(dot + 1);
  if (frac.empty() || !all_digits(frac)) return Parse::Syntax;
  for (char c : frac)
    if (c != '0') return Parse::Syntax;
  return parse_int_general(text.substr(0, dot), out);
}

Parse parse_seconds_general(std::string_view text, std::int64_t& out_ms) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() && frac.empty()) return Parse::Syntax;
  // Digits only (a syntax error wins over a range error); the value is read in the same pass,
  // and anything above kMaxSeconds is out of range however large.
  std::int64_t seconds = 0;
  bool too_large = false;
  for (const char c : whole) {
    if (!is_digit(c)) return Parse::Syntax;
    if (too_large) continue;
    seconds = seconds * 10 + (c - '0');
    too_large = seconds > kMaxSeconds;
  }
  if (!all_digits(frac)) return Parse::Syntax;
  if (too_large) return Parse::Range;
  std::int64_t millis = 0;
  for (std::size_t i = 0; i < 3; ++i) millis = millis * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  if (frac.size() > 3 && frac[3] >= '5') ++millis;
  std::int64_t ms = seconds * 1000 + millis;
  if (ms > kMaxSeconds * 1000) return Parse::Range;
  out_ms = negative ? -ms : ms;
  return Parse::Ok;
}

bool is_decimal(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  return !(whole.empty() && frac.empty()) && all_digits(whole) && all_digits(frac);
}

std::string quoted(std::string_view text) {
  constexpr std::size_t kMax = 40;
  constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  if (text.size() > kMax) out += "...";
  out += '"';
  return out;
}

}  // namespace headroom::traces::detail
