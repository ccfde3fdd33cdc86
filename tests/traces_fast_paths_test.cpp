// The fast paths of the trace parsers (traces/fields.hpp, traces/table.hpp) against the general
// paths they stand in for: on every input, the same result, the same value and the same error.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "traces/fields.hpp"
#include "traces/table.hpp"

namespace {

using headroom::traces::detail::Cell;
using headroom::traces::detail::Parse;
namespace d = headroom::traces::detail;

// Hand-picked edge cases of numbers and cells.
const std::vector<std::string>& edge_cases() {
  static const std::vector<std::string> cases = {
      "",
      "0",
      "1",
      "-1",
      "-0",
      "-",
      "--1",
      "+1",
      "007",
      "1084",
      ".5",
      "-.5",
      "1.",
      "-1.",
      ".",
      "-.",
      "1.5",
      "1.25",
      "1.125",
      "1.1234",
      "1.0005",
      "1.9995",
      "0.0004",
      "8.0",
      "8.00",
      "8.000",
      "8.0000",
      "8.01",
      "1.2.3",
      "1..2",
      "1e5",
      "0x10",
      " 1",
      "1 ",
      "1\r",
      "\r1",
      "12a",
      "a12",
      "1,2",
      "999999999999",
      "999999999999.999",
      "-999999999999.999",
      "1000000000000",
      "1000000000000.0",
      "1000000000000.001",
      "1000000000000.0004",
      "1000000000000.0005",
      "9999999999999",
      "99999999999999999",
      "999999999999999999",
      "1000000000000000000",
      "-999999999999999999",
      "9223372036854775807",
      "9223372036854775808",
      "-9223372036854775808",
      "-9223372036854775809",
      "99999999999999999999999999999999",
      "00000000000000000000000000000001",
      "0000000000000.5",
      "\xc3\xa9",
      "1\xff",
  };
  return cases;
}

// Random short strings over the characters that matter, weighted towards digits.
std::vector<std::string> random_cases(std::size_t count) {
  static constexpr char kAlphabet[] = "0123456789012345678901234567890123456789.-+ e\r";
  std::mt19937_64 rng(7);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < count; ++k) {
    std::string s;
    const std::size_t len = rng() % 24;
    for (std::size_t i = 0; i < len; ++i) s += kAlphabet[rng() % (sizeof kAlphabet - 1)];
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> all_cases() {
  std::vector<std::string> cases = edge_cases();
  for (auto& s : random_cases(200'000)) cases.push_back(std::move(s));
  return cases;
}

std::string show(std::string_view s) {
  std::string out = "input \"";
  out.append(s);
  out += '"';
  return out;
}

// Every case through `parser` (a fast path in front of a general parser) and `general`: the same
// result and the same value. Returns how many cases `plain` (the fast path alone) accepted.
using Parser = Parse (*)(std::string_view, std::int64_t&);
int expect_same_as_general(Parser parser, Parser general, bool (*plain)(std::string_view, std::int64_t&)) {
  int fast = 0;
  for (const std::string& s : all_cases()) {
    std::int64_t a = 42, b = 42, c = 42;
    const Parse ra = parser(s, a);
    const Parse rb = general(s, b);
    EXPECT_EQ(ra, rb) << show(s);
    EXPECT_EQ(a, b) << show(s);
    if (ra != rb || a != b) break;  // one input is enough to see
    fast += plain(s, c);
  }
  return fast;
}

TEST(TraceFastPaths, ParseIntMatchesTheGeneralPath) {
  // The fast path was taken (and agreed) on many inputs.
  EXPECT_GT(expect_same_as_general(d::parse_int, d::parse_int_general, d::parse_plain_int), 1000);
}

TEST(TraceFastPaths, ParseIntLenientMatchesTheGeneralPath) {
  EXPECT_GT(expect_same_as_general(d::parse_int_lenient, d::parse_int_lenient_general, d::parse_plain_int), 1000);
}

TEST(TraceFastPaths, ParseSecondsMatchesTheGeneralPath) {
  EXPECT_GT(expect_same_as_general(d::parse_seconds, d::parse_seconds_general, d::parse_plain_seconds), 1000);
}

TEST(TraceFastPaths, PlainFormsTakeTheFastPath) {
  // What the fast paths are for; the values are checked against the general path above.
  std::int64_t v = 0;
  EXPECT_TRUE(d::parse_plain_int("1084", v));
  EXPECT_EQ(v, 1084);
  EXPECT_TRUE(d::parse_plain_int("-7", v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(d::parse_plain_int("999999999999999999", v));
  EXPECT_FALSE(d::parse_plain_int("1000000000000000000", v));  // 19 digits: the general path
  EXPECT_FALSE(d::parse_plain_int("8.0", v));
  EXPECT_TRUE(d::parse_plain_seconds("1084", v));
  EXPECT_EQ(v, 1'084'000);
  EXPECT_TRUE(d::parse_plain_seconds("12.345", v));
  EXPECT_EQ(v, 12'345);
  EXPECT_TRUE(d::parse_plain_seconds("-1", v));
  EXPECT_EQ(v, -1000);
  EXPECT_TRUE(d::parse_plain_seconds("1.", v));
  EXPECT_EQ(v, 1000);
  EXPECT_FALSE(d::parse_plain_seconds(".5", v));
  EXPECT_FALSE(d::parse_plain_seconds("1.2345", v));
  EXPECT_FALSE(d::parse_plain_seconds("1000000000000", v));
}

// Records to split: quote-free ones (the fast path must agree with split_record) and quoted ones
// (the fast path must step aside).
std::vector<std::string> records() {
  std::vector<std::string> recs = {
      "",
      ",",
      ",,",
      " ",
      "a",
      "a,b",
      " a , b ",
      "a,,b",
      "a, ,b",
      "\ta\t,\tb",
      "a\r",
      "a,\rb\r,c",
      " \r a \r ,x",
      "0,u0,vcSynth,0,1,1",
      "40000,u186,vcSynth,1209567,1,704",
      "id,tenant,queue,submit,gpus,runtime",
      "a,b,",
      ",a,b",
      "a\"b,c",
      "\"a\",b",
      " \"a,b\" ,c",
      "a,\"b\"\"c\"",
      "a,b\"",
      "\"",
      "a|b|c",
      "a\t\tb\tc",
  };
  std::mt19937_64 rng(11);
  static constexpr char kAlphabet[] = "ab1,,, \t\r\"|";
  for (int k = 0; k < 100'000; ++k) {
    std::string s;
    const std::size_t len = rng() % 40;
    for (std::size_t i = 0; i < len; ++i) s += kAlphabet[rng() % (sizeof kAlphabet - 1)];
    recs.push_back(s);
  }
  return recs;
}

// The byte-at-a-time split of a quote-free record (split_record before its word-wide search),
// written out as the reference: leading blanks skipped (the offset), then trimmed of blanks and '\r'.
std::vector<Cell> reference_split(std::string_view rec, char delimiter) {
  std::vector<Cell> cells;
  std::size_t p = 0;
  for (;;) {
    while (p < rec.size() && (rec[p] == ' ' || rec[p] == '\t')) ++p;
    std::size_t q = p;
    while (q < rec.size() && rec[q] != delimiter) ++q;
    cells.push_back(Cell{d::trim(rec.substr(p, q - p)), p});
    if (q >= rec.size()) return cells;
    p = q + 1;
  }
}

void expect_same_cells(const std::vector<Cell>& a, const std::vector<Cell>& b, const std::string& rec) {
  ASSERT_EQ(a.size(), b.size()) << show(rec);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].text, b[i].text) << show(rec) << " cell " << i;
    ASSERT_EQ(a[i].offset, b[i].offset) << show(rec) << " cell " << i;
  }
}

void expect_same_split(char delimiter, bool quotes) {
  int fast = 0;
  for (const std::string& rec : records()) {
    std::vector<Cell> a, b;
    std::string scratch;
    if (!d::split_unquoted(rec, a, delimiter)) {
      ASSERT_NE(rec.find('"'), std::string::npos) << show(rec);  // stepped aside: only for a quote
      continue;
    }
    ASSERT_EQ(rec.find('"'), std::string::npos) << show(rec);  // never passes over a quote
    ++fast;
    const auto r = d::split_record(rec, b, scratch, delimiter, quotes);
    ASSERT_EQ(r.error, d::SplitError::None) << show(rec);
    expect_same_cells(a, b, rec);
    expect_same_cells(a, reference_split(rec, delimiter), rec);
    for (const Cell& c : a)  // views into the record itself
      ASSERT_TRUE(c.text.empty() || (c.text.data() >= rec.data() && c.text.data() < rec.data() + rec.size()));
  }
  EXPECT_GT(fast, 10'000);
}

TEST(TraceFastPaths, SplitRecordFindsTheFirstStrayQuote) {
  // A quote inside an unquoted cell is reported at its own offset; later cells are not read.
  for (const std::string& rec : records()) {
    std::vector<Cell> cells;
    std::string scratch;
    const auto r = d::split_record(rec, cells, scratch, ',', true);
    if (r.error != d::SplitError::StrayQuote) continue;
    ASSERT_EQ(rec[r.offset], '"') << show(rec);
    const std::size_t cell_start = rec.rfind(',', r.offset);
    const std::size_t from = cell_start == std::string::npos ? 0 : cell_start + 1;
    ASSERT_EQ(rec.find('"', from), r.offset) << show(rec);  // the first quote of its cell
  }
}

TEST(TraceFastPaths, SplitUnquotedMatchesSplitRecord) {
  expect_same_split(',', true);
  expect_same_split(',', false);
  expect_same_split('|', true);
  expect_same_split('\t', false);  // a blank delimiter: leading blanks swallow empty cells alike
}

}  // namespace
