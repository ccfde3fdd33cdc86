#pragma once

// The sweep-table fuzz target's input (fuzz/fuzz_table.cpp), shared with the crasher replay
// (tests/crashers_test.cpp): the bytes describe a table of runs as read_table_hdf5 hands it to
// `report` and `merge` (swept keys and their values, the rows, the KPI columns, the attributes),
// mostly well formed, sometimes not. results::check_sweep_table must refuse it with a
// sim::InputError or leave it safe for the sweep report, the CSV writer and merge.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/bytes.hpp"
#include "planner/sweep.hpp"
#include "results/check.hpp"
#include "results/report.hpp"
#include "results/table.hpp"
#include "sim/errors.hpp"

namespace headroom::fuzz {

// Mostly a small number, sometimes an edge a reader computes with (NaN, infinities, 2^53, 2^64,
// 10^300) or any double at all.
inline double table_number(Bytes& in) {
  const std::uint8_t pick = in.byte();
  if (pick < 200) return static_cast<double>(pick) * (pick % 2 == 0 ? 1.0 : 0.25);
  switch (pick % 10) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return 1e300;
    case 4: return -1e300;
    case 5: return 0x1p53;
    case 6: return 0x1p64;
    case 7: return -0.5;
    case 8: return std::numeric_limits<double>::denorm_min();
    default: {
      const auto bits = in.integral<std::uint64_t>();
      double v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
  }
}

inline results::Table make_table(Bytes& in) {
  using results::Column;
  results::Table t;
  // Which optional parts the table has: seed, status, total_runs, shard, the columns attribute,
  // one thing broken on purpose, then how the runs are numbered (2 bits).
  const std::uint8_t shape = in.byte();
  struct Key {
    std::string name;
    std::vector<std::string> values;
  };
  std::vector<Key> keys(in.upto(6));
  for (Key& k : keys) {
    k.name = in.flag() ? "cluster.pools.p" + std::to_string(in.byte()) + ".nodes" : in.text(24);
    const std::size_t values = 1 + in.upto(15);
    for (std::size_t v = 0; v < values; ++v)
      k.values.push_back(in.flag() ? std::to_string(in.integral<std::int16_t>()) : in.text(12));
  }
  const std::size_t rows = in.integral<std::uint16_t>() % 2049;
  t.columns.push_back(Column{"run", false, {}, {}});
  for (const Key& k : keys) t.columns.push_back(Column{k.name, true, {}, {}});
  const bool seed = (shape & 1) != 0, status = (shape & 2) != 0;
  if (seed) t.columns.push_back(Column{"seed", false, {}, {}});
  if (status) t.columns.push_back(Column{"status", true, {}, {}});
  static const char* const kKpis[] = {"jobs",       "wait_mean_s", "wait_p95_s",  "jct_mean_s", "gpu_utilization",
                                      "jain_index", "rho_max",     "starved_jobs"};
  const std::uint8_t kpis = in.byte();
  for (std::size_t k = 0; k < 8; ++k)
    if ((kpis >> k & 1) != 0) t.columns.push_back(Column{kKpis[k], false, {}, {}});
  const bool texts = in.flag();
  if (texts) t.columns.push_back(Column{"error", true, {}, {}});
  const int numbering = shape >> 6;  // 0: 0, 1, ...; 1: backwards; 2: every other one; 3: from the bytes
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t c = 0;
    const double run = numbering == 0   ? static_cast<double>(r)
                       : numbering == 1 ? static_cast<double>(rows - 1 - r)
                       : numbering == 2 ? static_cast<double>(2 * r)
                                        : table_number(in);
    t.columns[c++].numbers.push_back(run);
    for (const Key& k : keys) t.columns[c++].strings.push_back(k.values[in.byte() % k.values.size()]);
    if (seed) t.columns[c++].numbers.push_back(in.flag() ? static_cast<double>(in.byte()) : table_number(in));
    if (status) {
      static const char* const kStatus[] = {"done", "done", "failed", "cancelled"};
      const std::uint8_t pick = in.byte();
      t.columns[c++].strings.push_back(pick < 252 ? kStatus[pick % 4] : in.text(8));
    }
    for (std::size_t k = 0; k < 8; ++k)
      if ((kpis >> k & 1) != 0) t.columns[c++].numbers.push_back(table_number(in));
    if (texts) t.columns[c++].strings.push_back(in.flag() ? std::string() : in.text(16));
  }
  t.attributes["scenario_file"] = in.flag() ? "sweep.yaml" : in.text(32);
  t.attributes["version"] = "headroom 0.1.0";
  if ((shape & 4) != 0) t.attributes["total_runs"] = in.flag() ? std::to_string(rows + in.upto(255)) : in.text(12);
  if ((shape & 8) != 0) {
    if (in.flag()) {
      const std::size_t index = in.upto(7);  // read before the count: the operands of + are not sequenced
      t.attributes["shard"] = std::to_string(index) + "/" + std::to_string(in.upto(7));
    } else {
      t.attributes["shard"] = in.text(8);
    }
  }
  if ((shape & 16) != 0) {
    std::string names;
    for (const Column& c : t.columns) names += c.name + "\n";
    t.attributes["columns"] = names;
  }
  if ((shape & 32) != 0) {  // one thing a reader could meet in a file not written by headroom
    Column& c = t.columns[in.byte() % t.columns.size()];
    switch (in.byte() % 4) {
      case 0:  // a column shorter than the others
        if (c.text && !c.strings.empty()) c.strings.pop_back();
        if (!c.text && !c.numbers.empty()) c.numbers.pop_back();
        break;
      case 1:  // numbers where text was expected, or text where numbers were
        c.text = !c.text;
        if (c.text)
          c.strings.assign(c.numbers.size(), "1");
        else
          c.numbers.assign(c.strings.size(), 1.0);
        break;
      case 2: c.name = t.columns.front().name; break;   // a name twice
      default: std::swap(t.columns.front(), c); break;  // another column first
    }
  }
  return t;
}

// One fuzz input through check_sweep_table and, when it passes, every reader of a sweep table.
// Returns true when it passed.
inline bool read_table_bytes(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  results::ReportInput input;
  input.file = "fuzz.h5";
  input.sweep = true;
  input.table = make_table(in);
  try {
    results::check_sweep_table(input.table, input.file);
  } catch (const sim::InputError&) {
    return false;  // refused, as `report` and `merge` refuse it
  }
  std::ostringstream out;
  out << results::render_report({input});
  results::write_table_csv(input.table, out);
  try {  // one shard of several is refused by merge (missing shards): that is its answer
    const results::Table merged = planner::merge_tables({input.table}, {input.file});
    results::write_table_csv(merged, out);
  } catch (const sim::InputError&) {
  }
  return true;
}

}  // namespace headroom::fuzz
