#include "traces/table.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>

#include "sim/errors.hpp"
#include "sim/suggest.hpp"
#include "traces/fields.hpp"

namespace headroom::traces::detail {

namespace {

// A space or tab; one compare lets every character above ' ' through.
inline bool is_blank(char c) { return static_cast<unsigned char>(c) <= ' ' && (c == ' ' || c == '\t'); }

// A space, tab or '\r' (trimmed off cells), with the same one-compare test first.
inline bool is_space(char c) { return static_cast<unsigned char>(c) <= ' ' && (c == ' ' || c == '\t' || c == '\r'); }

// s[from, to) without the spaces at either end.
inline std::string_view trimmed(const char* s, std::size_t from, std::size_t to) {
  while (from < to && is_space(s[from])) ++from;
  while (to > from && is_space(s[to - 1])) --to;
  return {s + from, to - from};
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, std::int64_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

std::string_view trim(std::string_view s) { return trimmed(s.data(), 0, s.size()); }

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  if (auto m = sim::closest_match(word, candidates)) return "; did you mean " + quoted(*m) + "?";
  return {};
}

namespace {

// Byte-parallel search in a 64-bit word of 8 characters (plain integer arithmetic, "SWAR").
constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHighs = 0x8080808080808080ull;

// The high bit of each byte of `word` that equals `c` is set. The lowest set bit is exact; a
// borrow may also flag bytes above a match, which the caller never looks at.
std::uint64_t bytes_equal(std::uint64_t word, char c) {
  const std::uint64_t x = word ^ (kOnes * static_cast<unsigned char>(c));
  return (x - kOnes) & ~x & kHighs;
}

// The first position in [p, n) of `a` or `b`, or n.
inline std::size_t find_either(const char* s, std::size_t p, std::size_t n, char a, char b) {
  if constexpr (std::endian::native == std::endian::little) {
    // Eight characters at a time while a whole word fits in the record (on little-endian
    // machines the first character is the lowest byte), then one at a time.
    for (; p + 8 <= n; p += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, s + p, 8);
      const std::uint64_t hits = bytes_equal(word, a) | bytes_equal(word, b);
      if (hits != 0) return p + static_cast<std::size_t>(std::countr_zero(hits)) / 8;
    }
  }
  while (p < n && s[p] != a && s[p] != b) ++p;
  return p;
}

}  // namespace

Split split_record(std::string_view rec, std::vector<Cell>& cells, std::string& scratch, char delimiter, bool quotes) {
  cells.clear();
  scratch.clear();
  scratch.reserve(rec.size());
  std::size_t p = 0;
  const std::size_t n = rec.size();
  for (;;) {
    while (p < n && is_blank(rec[p])) ++p;
    Cell cell;
    cell.offset = p;
    if (quotes && p < n && rec[p] == '"') {
      const std::size_t from = scratch.size();
      ++p;
      for (;;) {
        const std::size_t q = rec.find('"', p);
        if (q == std::string_view::npos) return {SplitError::Unclosed, cell.offset};
        scratch.append(rec.substr(p, q - p));
        p = q + 1;
        if (p < n && rec[p] == '"') {
          scratch += '"';
          ++p;
          continue;
        }
        break;
      }
      cell.text = std::string_view(scratch).substr(from);
      while (p < n && is_space(rec[p])) ++p;
      if (p < n && rec[p] != delimiter) return {SplitError::AfterQuote, p};
    } else {
      // One pass to the delimiter, refusing a quote on the way.
      const std::size_t q = find_either(rec.data(), p, n, delimiter, quotes ? '"' : delimiter);
      if (q < n && rec[q] != delimiter) return {SplitError::StrayQuote, q};
      cell.text = trimmed(rec.data(), p, q);
      p = q;
    }
    cells.push_back(cell);
    if (p >= n) return {};
    ++p;
  }
}

bool split_unquoted(std::string_view rec, std::vector<Cell>& cells, char delimiter) {
  // split_record's unquoted branch, step for step (so that a blank delimiter behaves the same),
  // with the quote test folded into the search for the delimiter.
  cells.clear();
  const char* s = rec.data();
  const std::size_t n = rec.size();
  std::size_t p = 0;
  for (;;) {
    while (p < n && is_blank(s[p])) ++p;
    const std::size_t from = p;
    p = find_either(s, p, n, delimiter, '"');
    if (p < n && s[p] == '"') return false;
    cells.push_back(Cell{trimmed(s, from, p), from});  // the offset where the leading blanks end
    if (p >= n) return true;
    ++p;
  }
}

bool open_quote(std::string_view text) { return std::count(text.begin(), text.end(), '"') % 2 == 1; }

void warn_line(models::Workload& w, int line, const std::string& what) {
  if (w.meta.warnings.size() < kMaxWarnings) w.meta.warnings.push_back("line " + std::to_string(line) + ": " + what);
}

void skip_row(models::Workload& w, int line, const std::string& reason) {
  ++w.meta.skipped;
  warn_line(w, line, reason + ", job skipped");
}

void bad_row(models::Workload& w, const sim::InputError& e, const ImportOptions& options) {
  if (!options.skip_bad_rows || dynamic_cast<const ReadError*>(&e) != nullptr) throw;
  ++w.meta.bad_rows;
  if (w.meta.warnings.size() < kMaxWarnings) {
    std::string where = "line " + std::to_string(e.line());
    if (e.column() > 0) where += ", column " + std::to_string(e.column());
    if (!e.where().empty()) where += ", " + e.where();
    w.meta.warnings.push_back(where + ": " + e.message() + " (bad row skipped)");
  }
}

void IdCheck::add(std::string_view id, int line, int column, std::size_t job) {
  auto [it, fresh] = index_.try_emplace(std::string(id), static_cast<std::int64_t>(names_.size()));
  if (fresh) names_.emplace_back(id);
  seen_.push_back({it->second, true, line, column, job});
}

void IdCheck::finish(models::Workload& w, const ImportOptions& options, const std::string& path,
                     const std::string& field) {
  const auto less = [](const Seen& a, const Seen& b) { return a.text != b.text ? a.text < b.text : a.id < b.id; };
  const auto same = [](const Seen& a, const Seen& b) { return a.text == b.text && a.id == b.id; };
  bool increasing = true;
  for (std::size_t i = 1; i < seen_.size() && increasing; ++i) increasing = less(seen_[i - 1], seen_[i]);
  if (increasing) return;
  std::vector<std::size_t> order(seen_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return less(seen_[a], seen_[b]); });
  std::vector<std::pair<std::size_t, std::size_t>> copies;  // (later copy, first), by file order
  for (std::size_t i = 0; i < order.size();) {              // order[i] is the first of its id: the sort is stable
    std::size_t j = i + 1;
    for (; j < order.size() && same(seen_[order[j]], seen_[order[i]]); ++j) copies.emplace_back(order[j], order[i]);
    i = j;
  }
  if (copies.empty()) return;
  std::sort(copies.begin(), copies.end());
  std::vector<bool> drop(w.jobs.size(), false);
  for (const auto& [later, first] : copies) {
    const Seen& s = seen_[later];
    const std::string id = s.text ? quoted(names_[static_cast<std::size_t>(s.id)]) : std::to_string(s.id);
    const sim::InputError e(path, s.line, s.column, field,
                            "duplicate job id " + id + " (first at line " + std::to_string(seen_[first].line) + ")");
    if (!options.skip_bad_rows) throw e;
    bad_row(w, e, options);
    drop[s.job] = true;
  }
  std::size_t kept = 0;
  for (std::size_t j = 0; j < w.jobs.size(); ++j)
    if (!drop[j]) w.jobs[kept++] = std::move(w.jobs[j]);
  w.jobs.resize(kept);
}

std::vector<std::string> header_cells(std::string_view line, char delimiter) {
  std::vector<Cell> cells;
  std::string scratch;
  std::vector<std::string> out;
  if (split_record(line, cells, scratch, delimiter, true).error != SplitError::None) return out;
  for (const Cell& c : cells) out.emplace_back(c.text);
  return out;
}

bool parse_datetime(std::string_view s, sim::Tick& out_ms) {
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!digits(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || (s[10] != ' ' && s[10] != 'T') || !digits(s, 11, 2, h) || s[13] != ':' ||
      !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, se))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap)) return false;
  std::size_t p = 19;
  std::int64_t millis = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    const std::size_t from = p;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (p - from < 3) millis = millis * 10 + (s[p] - '0');
      ++p;
    }
    if (p == from) return false;
    for (std::size_t k = p - from; k < 3; ++k) millis *= 10;
  }
  std::int64_t offset_s = 0;
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    std::int64_t oh = 0, om = 0;
    const bool minus = s[p] == '-';
    if (!digits(s, p + 1, 2, oh)) return false;
    p += 3;
    if (p < s.size() && s[p] == ':') ++p;
    if (!digits(s, p, 2, om)) return false;
    p += 2;
    if (oh > 23 || om > 59) return false;
    offset_s = (minus ? -1 : 1) * (oh * 3600 + om * 60);
  }
  if (p != s.size()) return false;
  const std::int64_t days = sim::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - offset_s;
  out_ms = secs * sim::kSecond + millis;
  return true;
}

Table::Table(LineReader& in, std::span<const Column> columns, TableOptions options)
    : in_(in),
      columns_(columns),
      options_(options),
      index_(columns.size(), -1),
      records_(in, options.delimiter, options.quotes) {
  if (!options_.header && !options_.names.empty()) {
    std::vector<Cell> cells;
    for (const std::string& n : options_.names) cells.push_back({n, 0});
    map_names(cells);
    return;
  }
  if (!options_.header) {
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      index_[k] = static_cast<int>(k);
      header_names_.emplace_back(columns_[k].name);
    }
    return;
  }
  std::string_view rec;
  if (!records_.next(rec)) throw sim::InputError(in_.path(), 0, 0, "", "no header row (the file is empty)");
  header(rec);
}

bool RecordReader::next(std::string_view& rec) {
  std::string_view line;
  for (;;) {
    if (!in_.next_line(line)) return false;
    // Not blank when it starts with a character above ' ' (most lines), else as trim() says.
    if (!line.empty() && static_cast<unsigned char>(line.front()) > ' ') break;
    if (!trim(line).empty()) break;
  }
  line_ = in_.line_number();
  // Most records hold no quote: split them at once, in the one pass that looks for a quote.
  cells_ready_ = split_unquoted(line, cells_, delimiter_);
  if (cells_ready_ || !quotes_) {
    rec = line;
    return true;
  }
  // A quote: the general split, whose cells serve when the line is a whole record. An odd number
  // of quotes continues the record on the next line only when a quoted cell is open; a stray
  // quote in an unquoted cell is reported where it is (by split).
  const SplitError error = split_record(line, cells_, scratch_, delimiter_, true).error;
  cells_ready_ = error == SplitError::None;
  if (error != SplitError::Unclosed || !open_quote(line)) {
    rec = line;
    return true;
  }
  joined_.assign(line);
  while (open_quote(joined_)) {
    if (!in_.next_line(line))
      throw sim::InputError(in_.path(), line_, 0, "", "quoted cell not closed before the end of the file");
    joined_ += '\n';
    joined_.append(line);
  }
  rec = joined_;
  return true;
}

void RecordReader::split(std::string_view rec) {
  if (cells_ready_) return;
  const Split r = split_record(rec, cells_, scratch_, delimiter_, quotes_);
  const char* message = nullptr;
  switch (r.error) {
    case SplitError::None: return;
    case SplitError::Unclosed: message = "quoted cell not closed"; break;
    case SplitError::AfterQuote: message = "unexpected character after a closing quote"; break;
    case SplitError::StrayQuote:
      message = "quote inside an unquoted cell (quote the whole cell and double the quotes in it)";
      break;
  }
  throw sim::InputError(in_.path(), line_, static_cast<int>(r.offset) + 1,
                        "column " + std::to_string(cells_.size() + 1), message);
}

void Table::header(std::string_view rec) {
  records_.split(rec);
  // `sacct --parsable` (not parsable2) ends every line with the delimiter.
  if (records_.cells().size() > 1 && records_.cells().back().text.empty()) records_.cells().pop_back();
  map_names(records_.cells());
}

void Table::map_names(const std::vector<Cell>& cells) {
  const auto same = [&](std::string_view a, std::string_view b) {
    if (!options_.ignore_case) return a == b;
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  const char* where = options_.header ? "header" : "field list";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    header_names_.emplace_back(cells[i].text);
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      if (!same(columns_[k].name, cells[i].text)) continue;
      if (index_[k] >= 0)
        throw sim::InputError(
            in_.path(), records_.line(), static_cast<int>(cells[i].offset) + 1,
            options_.header ? "column " + std::to_string(i + 1) : std::string(where),
            "column " + quoted(cells[i].text) + " appears twice (also column " + std::to_string(index_[k] + 1) + ")");
      index_[k] = static_cast<int>(i);
    }
  }
  std::string missing;
  std::string required;
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    if (!columns_[k].required) continue;
    required += required.empty() ? "" : ", ";
    required += columns_[k].name;
    if (index_[k] >= 0) continue;
    if (!missing.empty()) missing += ", ";
    missing += quoted(columns_[k].name);
  }
  if (!missing.empty())
    throw sim::InputError(in_.path(), records_.line(), 0, where,
                          "missing required column" + std::string(missing.find(',') != std::string::npos ? "s " : " ") +
                              missing + " of the " + std::string(options_.layout) + " layout (required: " + required +
                              ")");
}

bool Table::next() {
  std::string_view rec;
  if (!records_.next(rec)) return false;
  records_.split(rec);
  const std::size_t want = header_names_.size();
  if (records_.cells().size() == want + 1 && records_.cells().back().text.empty()) records_.cells().pop_back();
  if (records_.cells().size() != want) {
    const std::string msg = "expected " + std::to_string(want) + " cells as in the " +
                            (options_.header          ? "header"
                             : options_.names.empty() ? std::string(options_.layout) + " layout"
                                                      : "field list") +
                            ", got " + std::to_string(records_.cells().size());
    const std::size_t at = records_.cells().size() > want ? records_.cells()[want].offset : rec.size();
    throw sim::InputError(in_.path(), records_.line(), static_cast<int>(at) + 1, "", msg);
  }
  return true;
}

std::string_view Table::text(std::size_t k) const {
  const int i = index_[k];
  return i < 0 ? std::string_view() : records_.cells()[static_cast<std::size_t>(i)].text;
}

int Table::column(std::size_t k) const {
  const int i = index_[k];
  return i < 0 ? 0 : static_cast<int>(records_.cells()[static_cast<std::size_t>(i)].offset) + 1;
}

std::string_view Table::name(std::size_t k) const {
  const std::string_view t = text(k);
  const std::size_t bad = utf8_error(t);
  if (bad != std::string_view::npos) {
    fail(k, "not UTF-8 text: byte " + sim::hex_byte(static_cast<unsigned char>(t[bad])) +
                " is not valid UTF-8 (save the trace as UTF-8)");
  }
  return t;
}

std::string Table::where(std::size_t k) const {
  return std::string(columns_[k].name) + " (column " + std::to_string(index_[k] + 1) + ")";
}

void Table::fail(std::size_t k, const std::string& message) const {
  const int i = index_[k];
  const int column = i < 0 ? 0 : static_cast<int>(records_.cells()[static_cast<std::size_t>(i)].offset) + 1;
  throw sim::InputError(in_.path(), records_.line(), column, i < 0 ? std::string(columns_[k].name) : where(k), message);
}

std::int64_t Table::integer(std::size_t k, std::int64_t lo, std::int64_t hi) const {
  const std::string_view t = text(k);
  std::int64_t v = 0;
  const Parse r = parse_int_lenient(t, v);
  if (r == Parse::Syntax) fail(k, "expected an integer, got " + quoted(t));
  if (r == Parse::Range) fail(k, "number out of range, got " + quoted(t));
  if (v < lo || v > hi) {
    const std::string range =
        hi == std::numeric_limits<std::int32_t>::max() || hi == std::numeric_limits<std::int64_t>::max()
            ? ">= " + std::to_string(lo)
            : "in " + std::to_string(lo) + ".." + std::to_string(hi);
    fail(k, "expected an integer " + range + ", got " + quoted(t));
  }
  return v;
}

sim::Tick Table::seconds(std::size_t k) const {
  const std::string_view t = text(k);
  std::int64_t ms = 0;
  const Parse r = parse_seconds(t, ms);
  if (r == Parse::Syntax) fail(k, "expected a number of seconds, got " + quoted(t));
  if (r == Parse::Range) fail(k, "time out of range (at most " + std::to_string(kMaxSeconds) + " s), got " + quoted(t));
  if (ms < 0) fail(k, "expected a non-negative number of seconds, got " + quoted(t));
  return ms;
}

double Table::number(std::size_t k) const {
  const std::string_view t = text(k);
  if (!is_decimal(t)) fail(k, "expected a number, got " + quoted(t));
  const double v = std::stod(std::string(t));
  if (v < 0) fail(k, "expected a non-negative number, got " + quoted(t));
  return v;
}

sim::Tick Table::datetime(std::size_t k) const {
  const std::string_view t = text(k);
  sim::Tick ms = 0;
  if (!parse_datetime(t, ms)) fail(k, "expected a date and time like \"2020-04-01 00:00:15\", got " + quoted(t));
  return ms;
}

}  // namespace headroom::traces::detail
