#include "apps/mpi_sweep.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "apps/output_check.hpp"
#include "planner/sweep.hpp"
#include "results/table.hpp"
#include "sim/errors.hpp"

namespace headroom::app {

namespace {

// A table as bytes: little-endian host layout is fine, every rank runs the same binary.
void put_u64(std::string& b, std::uint64_t v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_str(std::string& b, const std::string& s) {
  put_u64(b, s.size());
  b += s;
}

std::string serialise(const results::Table& t) {
  std::string b;
  put_u64(b, t.attributes.size());
  for (const auto& [k, v] : t.attributes) {
    put_str(b, k);
    put_str(b, v);
  }
  put_u64(b, t.columns.size());
  put_u64(b, t.rows());
  for (const auto& c : t.columns) {
    put_str(b, c.name);
    b += static_cast<char>(c.text);
    if (c.text) {
      for (const auto& s : c.strings) put_str(b, s);
    } else {
      b.append(reinterpret_cast<const char*>(c.numbers.data()), c.numbers.size() * sizeof(double));
    }
  }
  return b;
}

struct Reader {
  const std::string& b;
  std::size_t pos = 0;
  void need(std::size_t n) {
    if (pos + n > b.size()) throw sim::InternalError("MPI sweep: truncated shard table");
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v;
    std::memcpy(&v, b.data() + pos, 8);
    pos += 8;
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = b.substr(pos, n);
    pos += n;
    return s;
  }
};

results::Table deserialise(const std::string& b) {
  Reader r{b};
  results::Table t;
  for (std::uint64_t i = 0, n = r.u64(); i < n; ++i) {
    std::string k = r.str();
    t.attributes[k] = r.str();
  }
  const std::uint64_t cols = r.u64(), rows = r.u64();
  for (std::uint64_t c = 0; c < cols; ++c) {
    results::Column col;
    col.name = r.str();
    r.need(1);
    col.text = b[r.pos++] != 0;
    if (col.text) {
      for (std::uint64_t i = 0; i < rows; ++i) col.strings.push_back(r.str());
    } else {
      r.need(rows * sizeof(double));
      col.numbers.resize(rows);
      std::memcpy(col.numbers.data(), b.data() + r.pos, rows * sizeof(double));
      r.pos += rows * sizeof(double);
    }
    t.columns.push_back(std::move(col));
  }
  return t;
}

}  // namespace

int cmd_sweep_mpi(const std::string& scenario, const std::string& output, const std::string& csv,
                  std::atomic<bool>* stop) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank runs its shard; a failure on one rank still takes part in the gather (an empty
  // payload and the error text), so no rank waits forever.
  std::string payload, error;
  int bad_input = 0;
  try {
    planner::SweepOptions options;
    options.stop = stop;
    options.shard_index = static_cast<std::size_t>(rank);
    options.shard_count = static_cast<std::size_t>(size);
    const auto spec = planner::load_sweep(scenario);
    {  // before any run, as `headroom sweep` (apps/output_check.hpp)
      std::vector<PlannedOutput> out;
      if (!output.empty()) out.push_back({"-o", output});
      if (!csv.empty()) out.push_back({"--csv", csv});
      std::vector<CommandInput> in{{"scenario", scenario}};
      add_scenario_inputs(in, planner::point_scenario(spec, planner::expand(spec).front()));
      check_outputs(out, in);
    }
    payload = serialise(planner::sweep_table(planner::run_sweep(spec, options)));
  } catch (const sim::InputErrors& e) {
    error = e.errors().empty() ? "bad input" : e.errors().front().what();
    bad_input = 1;
  } catch (const sim::InputError& e) {
    error = e.what();
    bad_input = 1;
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::string message = error.empty() ? payload : "\x01" + std::to_string(bad_input) + error;
  const int n = static_cast<int>(message.size());
  std::vector<int> sizes(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int i = 0; i < size; ++i) {
      offsets[static_cast<std::size_t>(i)] = total;
      total += sizes[static_cast<std::size_t>(i)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(message.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  int rc = 0;
  if (rank == 0) {
    std::vector<results::Table> tables;
    std::vector<std::string> names;
    for (int i = 0; i < size && rc == 0; ++i) {
      const std::string part = all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(i)]),
                                          static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)]));
      if (!part.empty() && part[0] == '\x01') {
        std::fprintf(stderr, "error: rank %d: %s\n", i, part.substr(2).c_str());
        rc = part[1] == '1' ? 2 : 1;
        break;
      }
      tables.push_back(deserialise(part));
      names.push_back("rank " + std::to_string(i));
    }
    if (rc == 0) {
      try {
        const results::Table merged = planner::merge_tables(tables, names);
        if (!output.empty()) results::write_table_hdf5(merged, output, "runs");
        if (!csv.empty()) {
          const std::string tmp = csv + ".tmp";
          {
            std::ofstream out(tmp);
            results::write_table_csv(merged, out);
            if (!out) throw sim::InputError(csv, 0, 0, "", "cannot write the CSV table");
          }
          std::filesystem::rename(tmp, csv);
        }
        std::size_t failed = 0;
        for (const auto& c : merged.columns)
          if (c.name == "status")
            for (const auto& s : c.strings) failed += s != "done";
        std::printf("%zu runs on %d MPI ranks: %zu done, %zu not done\n", merged.rows(), size, merged.rows() - failed,
                    failed);
        rc = failed > 0 ? 1 : 0;
      } catch (const sim::InputError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        rc = 2;
      }
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  if (stop != nullptr && stop->load()) return 130;
  return rc;
}

}  // namespace headroom::app
