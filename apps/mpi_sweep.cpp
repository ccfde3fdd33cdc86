#include "apps/mpi_sweep.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "apps/sweep_cmd.hpp"
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

// The text of an input error as `headroom` prints it: one problem per line.
std::string describe(const sim::InputErrors& e) {
  std::string text;
  for (const auto& err : e.errors()) {
    if (!text.empty()) text += '\n';
    text += err.what();
  }
  return text.empty() ? "bad input" : text;
}

}  // namespace

int cmd_sweep_mpi(const std::string& scenario, const std::string& output, const std::string& csv,
                  const std::string& keep_runs, const std::string& shard, std::atomic<bool>* stop) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank loads the sweep and checks the outputs; the ranks then agree whether all did
  // before any runs, so a bad scenario ends every rank at once. Every rank takes part in every
  // collective call whatever happened to it (an error travels as text), so no rank waits forever.
  std::string payload, error;
  int bad_input = 0;
  auto guarded = [&](auto&& step) {
    try {
      step();
    } catch (const sim::InputErrors& e) {
      error = describe(e);
      bad_input = 1;
    } catch (const sim::InputError& e) {
      error = e.what();
      bad_input = 1;
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  planner::SweepSpec spec;
  guarded([&] {
    if (!shard.empty())
      throw sim::InputError("", 0, 0, "--shard", "not with --mpi: the MPI ranks are the shards (rank R of N runs R/N)");
    spec = planner::load_sweep(scenario);
    check_sweep_outputs(scenario, spec, output, csv, keep_runs);
  });
  int failed_before = error.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed_before, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed_before == 0) {
    guarded([&] {
      planner::SweepOptions options;
      options.stop = stop;
      options.keep_runs_dir = keep_runs;
      options.shard_index = static_cast<std::size_t>(rank);
      options.shard_count = static_cast<std::size_t>(size);
      payload = serialise(planner::sweep_table(planner::run_sweep(spec, options)));
    });
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
    std::vector<std::string> parts;  // the shard tables, rank by rank
    for (int i = 0; i < size && rc == 0; ++i) {
      const std::string part = all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(i)]),
                                          static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)]));
      if (!part.empty() && part[0] == '\x01') {
        // The first rank that failed; when every rank read the same bad file that is rank 0, and
        // its message reads as the one-process command's. A rank that did not fail but was told
        // to stop (another rank's error before the runs) sends nothing.
        const std::string where = i == 0 ? "" : "on MPI rank " + std::to_string(i) + ": ";
        const std::string text = part.substr(2);
        for (std::size_t at = 0; at <= text.size();) {
          const std::size_t nl = std::min(text.find('\n', at), text.size());
          std::fprintf(stderr, "error: %s%s\n", where.c_str(), text.substr(at, nl - at).c_str());
          at = nl + 1;
        }
        rc = part[1] == '1' ? 2 : 1;
        break;
      }
      if (part.empty()) continue;
      parts.push_back(part);
    }
    if (rc == 0) {
      try {
        std::vector<results::Table> tables;
        std::vector<std::string> names;
        for (std::size_t i = 0; i < parts.size(); ++i) {
          tables.push_back(deserialise(parts[i]));
          names.push_back("rank " + std::to_string(i));
        }
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
      } catch (const std::exception& e) {  // caught here: the other ranks wait in MPI_Bcast below
        std::fprintf(stderr, "internal error: %s\n", e.what());
        rc = 1;
      }
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  if (stop != nullptr && stop->load()) return 130;
  return rc;
}

}  // namespace headroom::app
