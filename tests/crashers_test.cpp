// Replays the fuzzer regression inputs (tests/data/crashers/<target>/) and the fuzz seed corpus
// (fuzz/corpus/<target>/) through the fuzz targets' entry points: every input must be accepted or
// rejected with an InputError; any other exception fails the test (a crash or a sanitizer report
// ends it, which fails it too).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/entry_points.hpp"

namespace fs = std::filesystem;
using headroom::traces::Format;

namespace {

std::vector<fs::path> inputs(const std::string& target) {
  std::vector<fs::path> out;
  for (const char* base : {"tests/data/crashers/", "fuzz/corpus/"}) {
    const fs::path dir = fs::path(HEADROOM_SOURCE_DIR) / (base + target);
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().filename() != "README.md") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const auto* bytes_of(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }

void replay(const std::string& target, bool (*feed)(const std::string&)) {
  const auto files = inputs(target);
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string data = read_bytes(path);
    try {
      feed(data);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "unexpected non-standard exception";
    }
  }
  testing::Test::RecordProperty("inputs", static_cast<int>(files.size()));
}

}  // namespace

TEST(Crashers, SwfImporter) {
  replay("swf",
         [](const std::string& d) { return headroom::fuzz::import_trace_bytes(bytes_of(d), d.size(), Format::Swf); });
}

TEST(Crashers, CsvImporter) {
  replay("csv",
         [](const std::string& d) { return headroom::fuzz::import_trace_bytes(bytes_of(d), d.size(), Format::Csv); });
}

TEST(Crashers, AnyTraceWithDetection) {
  replay("trace",
         [](const std::string& d) { return headroom::fuzz::import_trace_bytes(bytes_of(d), d.size(), Format::Auto); });
}

TEST(Crashers, ScenarioLoader) {
  replay("scenario", [](const std::string& d) { return headroom::fuzz::parse_scenario_bytes(bytes_of(d), d.size()); });
}

// The seeds are real-looking inputs: most of them must be accepted, or the fuzzers start from
// error paths only.
TEST(Crashers, SeedCorpusIsMostlyValid) {
  int accepted = 0, total = 0;
  for (const auto& path : inputs("swf")) {
    if (path.string().find("/fuzz/corpus/") == std::string::npos) continue;
    const std::string d = read_bytes(path);
    ++total;
    accepted += headroom::fuzz::import_trace_bytes(bytes_of(d), d.size(), Format::Swf) ? 1 : 0;
  }
  for (const auto& path : inputs("scenario")) {
    if (path.string().find("/fuzz/corpus/") == std::string::npos) continue;
    const std::string d = read_bytes(path);
    ++total;
    accepted += headroom::fuzz::parse_scenario_bytes(bytes_of(d), d.size()) ? 1 : 0;
  }
  EXPECT_GT(total, 0);
  EXPECT_GE(accepted * 2, total) << accepted << " of " << total << " seeds accepted";
}

// One per-format fuzz target each (fuzz/fuzz_format.cpp): its seeds, which must all be accepted
// (they are the test samples in the exact published layouts), and its crashers.
TEST(Crashers, EachForeignFormat) {
  const std::vector<std::pair<std::string, Format>> formats = {
      {"openb", Format::Openb},
      {"dlrm", Format::Dlrm},
      {"helios", Format::Helios},
      {"sacct", Format::Sacct},
      {"kubernetes", Format::Kubernetes},
      {"acme", Format::Acme},
      {"pai", Format::Pai},
      {"philly", Format::Philly},
  };
  for (const auto& [target, format] : formats) {
    SCOPED_TRACE(target);
    const auto files = inputs(target);
    EXPECT_FALSE(files.empty());
    for (const auto& path : files) {
      SCOPED_TRACE(path.string());
      const std::string d = read_bytes(path);
      try {
        const bool accepted = headroom::fuzz::import_trace_bytes(bytes_of(d), d.size(), format);
        if (path.string().find("/fuzz/corpus/") != std::string::npos) {
          EXPECT_TRUE(accepted);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected exception: " << e.what();
      }
    }
  }
}
