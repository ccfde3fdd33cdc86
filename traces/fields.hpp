#pragma once

// Private to traces/: number parsing shared by the importers, and the entry points of each format.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"
#include "sim/text.hpp"
#include "traces/import.hpp"
#include "traces/line_reader.hpp"

namespace headroom::traces::detail {

// Times beyond this many seconds (about 31,700 years) are rejected, so that sums of a few trace
// times in milliseconds can never overflow.
inline constexpr std::int64_t kMaxSeconds = 1'000'000'000'000;

enum class Parse { Ok, Syntax, Range };

// The general parsers, for every form and every error. parse_int, parse_int_lenient and
// parse_seconds below first try a fast path for the common plain forms and fall back to these
// (the tests check that both give the same answer on many inputs).
Parse parse_int_general(std::string_view text, std::int64_t& out);
Parse parse_int_lenient_general(std::string_view text, std::int64_t& out);
Parse parse_seconds_general(std::string_view text, std::int64_t& out_ms);

// Fast path: `text` is an optional '-' and 1..18 ASCII digits (below 10^18, so no overflow).
// Sets `out` and returns true; else returns false and leaves `out` alone.
inline bool parse_plain_int(std::string_view text, std::int64_t& out) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty() || text.size() > 18) return false;
  std::int64_t v = 0;
  for (const char c : text) {
    const unsigned d = static_cast<unsigned char>(c) - unsigned{'0'};  // wraps above 9 for non-digits
    if (d > 9) return false;
    v = v * 10 + d;
  }
  out = negative ? -v : v;
  return true;
}

// Fast path: `text` is an optional '-', 1..12 digits (at most kMaxSeconds - 1, so never out of
// range) and optionally '.' and 0..3 digits (exact milliseconds, no rounding). Sets `out_ms` and
// returns true; else returns false and leaves `out_ms` alone.
inline bool parse_plain_seconds(std::string_view text, std::int64_t& out_ms) {
  static_assert(kMaxSeconds >= 999'999'999'999);
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t n = text.size();
  const std::size_t limit = n < 13 ? n : 13;  // 13 digits are too many; reading them cannot overflow
  std::size_t i = 0;
  std::int64_t seconds = 0;
  for (; i < limit; ++i) {
    const unsigned d = static_cast<unsigned char>(text[i]) - unsigned{'0'};
    if (d > 9) break;
    seconds = seconds * 10 + d;
  }
  if (i == 0 || i > 12) return false;
  std::int64_t ms = seconds * 1000;
  if (i < n) {
    if (text[i] != '.' || n - i > 4) return false;
    static constexpr std::int64_t kScale[] = {100, 10, 1};
    for (std::size_t k = 0; ++i < n; ++k) {
      const unsigned d = static_cast<unsigned char>(text[i]) - unsigned{'0'};
      if (d > 9) return false;
      ms += d * kScale[k];
    }
  }
  out_ms = negative ? -ms : ms;
  return true;
}

// The whole of `text` as a decimal integer (optional '-').
inline Parse parse_int(std::string_view text, std::int64_t& out) {
  return parse_plain_int(text, out) ? Parse::Ok : parse_int_general(text, out);
}

// Like parse_int, but also accepts an integral value written with a zero fraction ("8.0"), as
// data-frame tools write integer columns that have missing values.
inline Parse parse_int_lenient(std::string_view text, std::int64_t& out) {
  return parse_plain_int(text, out) ? Parse::Ok : parse_int_lenient_general(text, out);
}

// Decimal seconds ("12", "-1", "0.25", ".5") to milliseconds: exact up to 3 decimals, rounded to
// the nearest millisecond (halves up) beyond. |seconds| must be at most kMaxSeconds.
inline Parse parse_seconds(std::string_view text, std::int64_t& out_ms) {
  return parse_plain_seconds(text, out_ms) ? Parse::Ok : parse_seconds_general(text, out_ms);
}

// A plain decimal number: optional '-', digits, optional '.' and digits.
bool is_decimal(std::string_view text);

// `text` in double quotes for messages, shortened when long.
std::string quoted(std::string_view text);

using sim::utf8_error;

models::Workload import_swf(LineReader& in, const ImportOptions& options);
models::Workload import_csv(LineReader& in, const ImportOptions& options);
models::Workload import_openb(LineReader& in, const ImportOptions& options);
models::Workload import_dlrm(LineReader& in, const ImportOptions& options);
models::Workload import_helios(LineReader& in, const ImportOptions& options);
models::Workload import_sacct(LineReader& in, const ImportOptions& options);
// ImportOptions::fields with "xdmod" expanded to Open XDMoD's sacct field list.
std::vector<std::string> sacct_field_names(const std::vector<std::string>& fields);
models::Workload import_kubernetes(LineReader& in, const ImportOptions& options);
models::Workload import_acme(LineReader& in, const ImportOptions& options);
models::Workload import_pai(LineReader& in, const ImportOptions& options);
models::Workload import_philly(LineReader& in, const ImportOptions& options);

// Which PAI 2020 table a header or first data row (split at commas) belongs to: "job", "task",
// or empty when neither.
std::string_view pai_table_kind(const std::vector<std::string>& cells);

// True when `line` looks like an SWF job line: 18 whitespace-separated numeric fields.
bool looks_like_swf_job(std::string_view line);
// True when `line` looks like a headroom CSV header: comma-separated cells, one of them "submit".
bool looks_like_csv_header(std::string_view line);

}  // namespace headroom::traces::detail
