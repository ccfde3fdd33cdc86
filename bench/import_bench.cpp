// Trace import speed: headroom's CSV (the target: at least 1 M rows/s on the 2-core
// build machine), plain and gzip, and the real RICC SWF log (447,794 jobs) from ../shared/traces.
// The CSV files are written once per process from a fixed seed; rows look like a real export
// (every column filled, quoted tenant names, decimals).
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "traces/import.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kRows = 1'000'000;

const std::string& csv_path(bool gzip) {
  static const std::string plain = [] {
    const std::string path = (fs::temp_directory_path() / "headroom-import-bench.csv").string();
    std::ofstream out(path, std::ios::binary);
    out.setf(std::ios::fixed);
    out.precision(3);
    out << "id,tenant,queue,submit,gpus,runtime,gpus_per_node,walltime,kind,priority,status\n";
    std::mt19937_64 rng(42);
    double t = 0;
    static const char* kKinds[] = {"train", "inference", "interactive", "batch"};
    static const char* kStatus[] = {"completed", "failed", "cancelled"};
    for (int i = 0; i < kRows; ++i) {
      t += static_cast<double>(rng() % 10'000) / 1000.0;
      const int gpus = 1 << (rng() % 4);
      out << i << ",\"team " << rng() % 40 << "\",q" << rng() % 4 << ',' << t << ',' << gpus << ','
          << 5 + rng() % 86'400 << ',' << (gpus >= 8 ? 8 : 0) << ',' << 90'000 << ',' << kKinds[rng() % 4] << ','
          << rng() % 100 << ',' << kStatus[rng() % 3] << '\n';
    }
    return path;
  }();
  static const std::string gz = [] {
    const std::string path = plain + ".gz";
    std::ifstream in(plain, std::ios::binary);
    gzFile out = gzopen(path.c_str(), "wb6");
    std::string buf(1 << 20, '\0');
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      gzwrite(out, buf.data(), static_cast<unsigned>(in.gcount()));
    }
    gzclose(out);
    return path;
  }();
  return gzip ? gz : plain;
}

void import(benchmark::State& state, const std::string& path, headroom::traces::Format format) {
  headroom::traces::ImportOptions options;
  options.format = format;
  std::size_t rows = 0;
  for (auto _ : state) {
    try {
      const auto w = headroom::traces::import_trace(path, options);
      rows = static_cast<std::size_t>(w.meta.rows);
      benchmark::DoNotOptimize(w.jobs.data());
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["MB"] = static_cast<double>(fs::file_size(path)) / 1e6;
}

void BM_ImportCsv1M(benchmark::State& state) { import(state, csv_path(false), headroom::traces::Format::Csv); }
void BM_ImportCsv1MGzip(benchmark::State& state) { import(state, csv_path(true), headroom::traces::Format::Csv); }
void BM_ImportRiccSwf(benchmark::State& state) {
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/../shared/traces/swf-pwa/RICC-2010-2.swf.gz";
  if (!fs::exists(path)) {
    state.SkipWithError("../shared/traces/swf-pwa/RICC-2010-2.swf.gz not found");
    return;
  }
  import(state, path, headroom::traces::Format::Swf);
}

}  // namespace

BENCHMARK(BM_ImportCsv1M)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ImportCsv1MGzip)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ImportRiccSwf)->Unit(benchmark::kMillisecond)->Iterations(3);
