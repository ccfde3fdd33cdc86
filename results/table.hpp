#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headroom::results {

// A column-oriented table of numbers or text, e.g. one row per run of a sweep.
struct Column {
  std::string name;
  bool text = false;
  std::vector<double> numbers;       // when !text
  std::vector<std::string> strings;  // when text
  std::size_t size() const { return text ? strings.size() : numbers.size(); }
};

// The most runs one sweep makes (planner::load_sweep refuses more), and so the most rows a sweep
// table holds.
inline constexpr std::int64_t kMaxSweepRuns = 1'000'000;

// "I/N" (`sweep --shard`, a shard table's attribute `shard`) with 0 <= I < N <= kMaxSweepRuns, in
// decimal digits: {I, N}, or nothing when the text is not one.
std::optional<std::pair<std::size_t, std::size_t>> parse_shard_text(std::string_view text);

struct Table {
  std::vector<Column> columns;
  std::map<std::string, std::string> attributes;  // written as root attributes
  std::size_t rows() const { return columns.empty() ? 0 : columns.front().size(); }
};

// Writes the table as group `/<group>` with one 1-D dataset per column (float64 or UTF-8
// strings), through a temporary file renamed into place. Throws sim::InputError on failure.
void write_table_hdf5(const Table& table, const std::string& path, const std::string& group);

// Reads a table written by write_table_hdf5: every 1-D dataset of `/<group>` (float64 or strings)
// and the string root attributes. Columns come in the order the root attribute `columns` lists
// (newline-separated names) when it exists, else by name. Throws sim::InputError naming the file.
Table read_table_hdf5(const std::string& path, const std::string& group);
// True when the file is HDF5 and has the group `/<group>`.
bool has_hdf5_group(const std::string& path, const std::string& group);

// RFC 4180 CSV with a header row; numbers in shortest round-trip form.
void write_table_csv(const Table& table, std::ostream& out);

}  // namespace headroom::results
