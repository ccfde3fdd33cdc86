// Writing the HDF5 result of the bundled 14-day RICC replay (13,607 jobs), and three deflate
// codecs compared on that result's time columns, shuffled and cut into 64 KiB chunks as
// results/chunks.cpp writes them: zlib's compress2, libdeflate and ISA-L's igzip (which
// results/ uses), all at level 1 and all writing zlib streams.
#include <benchmark/benchmark.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "apps/pipeline.hpp"
#include "results/hdf5_io.hpp"
#include "scenarios/scenario.hpp"

namespace {

const headroom::results::RunResult* ricc_result() {
  static const auto outcome = [] {
    const auto sc =
        headroom::scenarios::load_scenario(std::string(HEADROOM_SOURCE_DIR) + "/scenarios/examples/ricc-14d-fifo.yaml");
    return headroom::app::run_scenario(sc);
  }();
  return &outcome.result;
}

// The int64 time columns of the jobs and events tables, each byte-shuffled (HDF5's shuffle filter).
std::vector<unsigned char> shuffled_time_columns() {
  const auto& r = *ricc_result();
  std::vector<std::vector<std::int64_t>> cols(5);
  for (const auto& j : r.jobs) {
    cols[0].push_back(j.submit);
    cols[1].push_back(j.start);
    cols[2].push_back(j.end);
    cols[3].push_back(j.runtime);
  }
  for (const auto& e : r.events) cols[4].push_back(e.time);
  std::vector<unsigned char> out;
  for (const auto& c : cols) {
    const std::size_t base = out.size();
    out.resize(base + c.size() * 8);
    const auto* in = reinterpret_cast<const unsigned char*>(c.data());
    for (std::size_t i = 0; i < c.size(); ++i)
      for (std::size_t b = 0; b < 8; ++b) out[base + b * c.size() + i] = in[i * 8 + b];
  }
  return out;
}

constexpr std::size_t kChunk = std::size_t{64} << 10;

void BM_DeflateZlibLevel1(benchmark::State& state) {
  const auto data = shuffled_time_columns();
  std::vector<unsigned char> out(compressBound(kChunk));
  std::size_t total = 0;
  for (auto _ : state) {
    total = 0;
    for (std::size_t i = 0; i < data.size(); i += kChunk) {
      uLongf size = out.size();
      compress2(out.data(), &size, data.data() + i, std::min(kChunk, data.size() - i), 1);
      total += size;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.size()));
  state.counters["ratio"] = static_cast<double>(data.size()) / static_cast<double>(total);
}

void BM_DeflateLibdeflateLevel1(benchmark::State& state) {
  const auto data = shuffled_time_columns();
  std::vector<unsigned char> out(kChunk * 2);
  libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  std::size_t total = 0;
  for (auto _ : state) {
    total = 0;
    for (std::size_t i = 0; i < data.size(); i += kChunk)
      total += libdeflate_zlib_compress(c, data.data() + i, std::min(kChunk, data.size() - i), out.data(), out.size());
  }
  libdeflate_free_compressor(c);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.size()));
  state.counters["ratio"] = static_cast<double>(data.size()) / static_cast<double>(total);
}

void BM_DeflateIsalLevel1(benchmark::State& state) {
  const auto data = shuffled_time_columns();
  std::vector<unsigned char> out(kChunk * 2);
  std::vector<std::uint8_t> level_buf(ISAL_DEF_LVL1_DEFAULT);
  std::size_t total = 0;
  for (auto _ : state) {
    total = 0;
    for (std::size_t i = 0; i < data.size(); i += kChunk) {
      isal_zstream s;
      isal_deflate_stateless_init(&s);
      s.level = 1;
      s.level_buf = level_buf.data();
      s.level_buf_size = static_cast<std::uint32_t>(level_buf.size());
      s.gzip_flag = IGZIP_ZLIB;
      s.end_of_stream = 1;
      s.next_in = const_cast<unsigned char*>(data.data() + i);
      s.avail_in = static_cast<std::uint32_t>(std::min(kChunk, data.size() - i));
      s.next_out = out.data();
      s.avail_out = static_cast<std::uint32_t>(out.size());
      if (isal_deflate_stateless(&s) != COMP_OK) state.SkipWithError("igzip failed");
      total += s.total_out;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.size()));
  state.counters["ratio"] = static_cast<double>(data.size()) / static_cast<double>(total);
}

void BM_WriteHdf5Ricc14d(benchmark::State& state) {
  const auto& r = *ricc_result();
  const std::string path =
      std::filesystem::temp_directory_path() / ("write_bench." + std::to_string(::getpid()) + ".h5");
  for (auto _ : state) headroom::results::write_hdf5(r, path);
  std::filesystem::remove(path);
  state.counters["jobs"] = static_cast<double>(r.jobs.size());
}

}  // namespace

BENCHMARK(BM_DeflateZlibLevel1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeflateLibdeflateLevel1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeflateIsalLevel1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WriteHdf5Ricc14d)->Unit(benchmark::kMillisecond)->UseRealTime();
