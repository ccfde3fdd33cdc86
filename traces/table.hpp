#pragma once

// Private to traces/: delimited-table reading shared by the importers of foreign CSV layouts
// (Alibaba, Helios, Acme, PAI, Slurm sacct). The native CSV importer uses the splitter only.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/workload.hpp"
#include "sim/time.hpp"
#include "traces/import.hpp"
#include "traces/line_reader.hpp"

namespace headroom::traces::detail {

inline constexpr std::size_t kMaxWarnings = 5;

std::string_view trim(std::string_view s);

// "; did you mean "x"?" or empty.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

struct Cell {
  std::string_view text;
  std::size_t offset = 0;  // of the cell's first character in the record
};

enum class SplitError { None, Unclosed, AfterQuote, StrayQuote };

struct Split {
  SplitError error = SplitError::None;
  std::size_t offset = 0;
};

// Splits one record into cells at `delimiter`. With `quotes`, a cell in double quotes may hold
// delimiters, line breaks and doubled quotes (RFC 4180); unescaped quoted cells live in `scratch`,
// which is reserved up front so that the views stay valid. Without `quotes`, quotes are plain
// characters. Cells are trimmed of spaces.
Split split_record(std::string_view rec, std::vector<Cell>& cells, std::string& scratch, char delimiter = ',',
                   bool quotes = true);

// The fast path of split_record for a record without quotes: the same cells as split_record
// (`quotes` or not) when `rec` holds no '"'; returns false, with `cells` undefined, as soon as it
// meets one (the caller then uses split_record). One pass, no scratch string. `delimiter` is
// not '"'.
bool split_unquoted(std::string_view rec, std::vector<Cell>& cells, char delimiter = ',');

// True when the quotes in `text` leave a quoted cell open.
bool open_quote(std::string_view text);

// Adds a "line N: what" warning, unless kMaxWarnings are kept already.
void warn_line(models::Workload& w, int line, const std::string& what);
// Adds a "line N: reason, job skipped" warning (at most kMaxWarnings) and counts the skip.
void skip_row(models::Workload& w, int line, const std::string& reason);

// Called in the handler of a row's sim::InputError: rethrows it unless options.skip_bad_rows (and
// the error is a row's, not the file's), else counts the row in meta.bad_rows and keeps the
// first messages as warnings.
void bad_row(models::Workload& w, const sim::InputError& e, const ImportOptions& options);

// The one rule for a job id seen twice, in every format (traces/README.md, "Bad rows"): the second
// row is an error naming its file, line and column (or, with skip_bad_rows, a counted bad row),
// never a silent second job. Ids are collected while importing and checked once at the end: one
// pass when they increase (the usual case), a sort otherwise.
class IdCheck {
 public:
  // The id of the job just added as w.jobs[job], written at `line`:`column` (0: unknown).
  void add(std::int64_t id, int line, int column, std::size_t job) { seen_.push_back({id, false, line, column, job}); }
  // A textual id (a pod's namespace/name, a Philly application id).
  void add(std::string_view id, int line, int column, std::size_t job);
  // Throws the first duplicate (in file order) as `path`:line:column: `field`: "duplicate job id
  // ... (first at line N)"; with options.skip_bad_rows drops each later copy from w.jobs instead
  // and counts it in w.meta.bad_rows.
  void finish(models::Workload& w, const ImportOptions& options, const std::string& path, const std::string& field);

 private:
  struct Seen {
    std::int64_t id;
    bool text;  // id numbers a textual id (names_), not a number of the trace
    int line, column;
    std::size_t job;
  };
  std::vector<Seen> seen_;
  std::vector<std::string> names_;                       // textual ids, by their number
  std::unordered_map<std::string, std::int64_t> index_;  // textual id -> its number
};

// The column names of the first non-blank line of a delimited header, for format detection.
std::vector<std::string> header_cells(std::string_view line, char delimiter = ',');

// One column of a foreign layout.
struct Column {
  std::string_view name;
  bool required = false;
};

struct TableOptions {
  char delimiter = ',';
  bool quotes = true;
  bool header = true;  // false: the columns are, in order, exactly `columns` (no header row)
  // With header false and names given: no header row, the file's columns are these names, in
  // order, read as a header row would be (unknown ones ignored, required ones checked).
  std::span<const std::string> names = {};
  bool ignore_case = false;  // header names match the columns whatever their case ("jobid", "JobID")
  std::string_view layout;   // for messages: "openb pod list", "Helios cluster_log"
};

// Reads the records of a delimited file one at a time: skips blank lines, joins the lines of a
// quoted cell that spans them (with `quotes`), and splits records into cells, a quote-free one in
// the same pass that looks for a quote. Shared by Table and the native CSV importer.
class RecordReader {
 public:
  RecordReader(LineReader& in, char delimiter, bool quotes) : in_(in), delimiter_(delimiter), quotes_(quotes) {}

  // The next non-blank record; false at the end of the file. Throws when a quoted cell is still
  // open at the end of the file.
  bool next(std::string_view& rec);
  // Fills cells() with the cells of `rec`, the record next() returned last; throws an InputError
  // naming its line, the character and the column when a quote is misplaced.
  void split(std::string_view rec);
  std::vector<Cell>& cells() { return cells_; }
  const std::vector<Cell>& cells() const { return cells_; }
  // The line the last record starts on.
  int line() const { return line_; }

 private:
  LineReader& in_;
  char delimiter_;
  bool quotes_;
  std::vector<Cell> cells_;
  bool cells_ready_ = false;  // cells_ hold the cells of the record next() returned
  std::string scratch_;
  std::string joined_;
  int line_ = 0;
};

// Reads a table whose first non-blank row is a header (unknown columns are ignored; a missing
// required column is an error) and hands out typed cells by column index (the position in the
// `columns` given). Errors name the file, the row's line, the character column, and the column's
// name and number, like the native CSV importer: `pods.csv:3:9: num_gpu (column 4): ...`.
class Table {
 public:
  Table(LineReader& in, std::span<const Column> columns, TableOptions options);

  // The next non-blank data row; false at the end of the file.
  bool next();

  int line() const { return records_.line(); }
  const std::string& path() const { return in_.path(); }
  bool has(std::size_t k) const { return index_[k] >= 0; }
  // Trimmed text of column k in this row; empty when the column is absent from the file.
  std::string_view text(std::size_t k) const;
  // text(k) of a name (a user, an account, a queue): an error unless it is UTF-8, as in every
  // importer ("not UTF-8 text: byte 0xe9 ...").
  std::string_view name(std::size_t k) const;
  bool empty(std::size_t k) const { return text(k).empty(); }

  [[noreturn]] void fail(std::size_t k, const std::string& message) const;
  // Where column k is, for messages built elsewhere (IdCheck): its character column in this row
  // (0 when absent) and "name (column N)".
  int column(std::size_t k) const;
  std::string field(std::size_t k) const { return where(k); }

  // Integer in [lo, hi] (a zero fraction such as "8.0" is accepted).
  std::int64_t integer(std::size_t k, std::int64_t lo, std::int64_t hi) const;
  // Non-negative decimal seconds to milliseconds.
  sim::Tick seconds(std::size_t k) const;
  // A decimal number >= 0.
  double number(std::size_t k) const;
  // "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (optionally ".fff" and "Z"), read as UTC, to
  // seconds since the Unix epoch, in milliseconds.
  sim::Tick datetime(std::size_t k) const;

 private:
  void header(std::string_view rec);
  // Maps header names (cells of the header row, or TableOptions::names) to the columns.
  void map_names(const std::vector<Cell>& cells);
  std::string where(std::size_t k) const;

  LineReader& in_;
  std::span<const Column> columns_;
  TableOptions options_;
  std::vector<int> index_;  // cell index of each column, -1 when absent
  std::vector<std::string> header_names_;
  RecordReader records_;
};

// Parses an ISO-like date and time ("2020-04-01 00:00:15", "2020-04-01T00:00:15.5Z",
// "2020-04-01T00:00:15+08:00") to milliseconds since the Unix epoch (UTC). False when malformed.
bool parse_datetime(std::string_view text, sim::Tick& out_ms);

}  // namespace headroom::traces::detail
