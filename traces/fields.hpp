#pragma once

// Private to traces/: number parsing shared by the importers, and the entry points of each format.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"
#include "traces/import.hpp"
#include "traces/line_reader.hpp"

namespace headroom::traces::detail {

// Times beyond this many seconds (about 31,700 years) are rejected, so that sums of a few trace
// times in milliseconds can never overflow.
inline constexpr std::int64_t kMaxSeconds = 1'000'000'000'000;

enum class Parse { Ok, Syntax, Range };

// The whole of `text` as a decimal integer (optional '-').
Parse parse_int(std::string_view text, std::int64_t& out);

// Like parse_int, but also accepts an integral value written with a zero fraction ("8.0"), as
// data-frame tools write integer columns that have missing values.
Parse parse_int_lenient(std::string_view text, std::int64_t& out);

// Decimal seconds ("12", "-1", "0.25", ".5") to milliseconds: exact up to 3 decimals, rounded to
// the nearest millisecond (halves up) beyond. |seconds| must be at most kMaxSeconds.
Parse parse_seconds(std::string_view text, std::int64_t& out_ms);

// A plain decimal number: optional '-', digits, optional '.' and digits.
bool is_decimal(std::string_view text);

// `text` in double quotes for messages, shortened when long.
std::string quoted(std::string_view text);

// The offset of the first byte of `text` that is not valid UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF included), or npos when it is all valid.
std::size_t utf8_error(std::string_view text);

models::Workload import_swf(LineReader& in, const ImportOptions& options);
models::Workload import_csv(LineReader& in, const ImportOptions& options);
models::Workload import_openb(LineReader& in, const ImportOptions& options);
models::Workload import_dlrm(LineReader& in, const ImportOptions& options);
models::Workload import_helios(LineReader& in, const ImportOptions& options);
models::Workload import_sacct(LineReader& in, const ImportOptions& options);
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
