// Replays the fuzzer regression inputs (tests/data/crashers/<target>/) and the fuzz seed corpus
// (fuzz/corpus/<target>/; for the site-file targets, the fixtures of tests/data/imports/ that
// scripts/fuzz makes their seeds of) through the fuzz targets' entry points: every input must be
// accepted or rejected with an InputError; any other exception fails the test (a crash or a
// sanitizer report ends it, which fails it too). Inputs listed in tests/data/crashers/KNOWN_FAILING
// (found, not fixed yet) are not run: Crashers.KnownFailing names them and is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "fuzz/entry_points.hpp"
#include "fuzz/results_input.hpp"
#include "fuzz/table_input.hpp"

namespace fs = std::filesystem;
using headroom::traces::Format;

namespace {

const fs::path kSource = HEADROOM_SOURCE_DIR;

// tests/data/crashers/KNOWN_FAILING: "<target>/<file>: why" per line ('#' starts a comment), the
// regression inputs that still crash, hang or throw something else than an InputError. Their
// readers are being fixed; scripts/fuzz leaves them out of its replay too.
std::map<std::string, std::string> known_failing() {
  std::map<std::string, std::string> out;
  std::ifstream in(kSource / "tests/data/crashers/KNOWN_FAILING");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(": ");
    out[line.substr(0, colon)] = colon == std::string::npos ? "" : line.substr(colon + 2);
  }
  return out;
}

std::vector<fs::path> inputs(const std::string& target) {
  const auto skipped = known_failing();
  std::vector<fs::path> out;
  for (const char* base : {"tests/data/crashers/", "fuzz/corpus/"}) {
    const fs::path dir = kSource / (base + target);
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().filename() != "README.md" &&
          !skipped.count(target + "/" + entry.path().filename().string()))
        out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const auto* bytes_of(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }

template <typename Feed>
void replay(const std::string& target, Feed&& feed) {
  const auto files = inputs(target);
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    if (std::getenv("HEADROOM_CRASHERS_VERBOSE") != nullptr) std::cout << path.string() << "\n";
    const std::string data = read_bytes(path);
    try {
      if constexpr (std::is_invocable_v<Feed&, const std::string&, const fs::path&>)
        feed(data, path);  // a feed that looks at where the input came from
      else
        feed(data);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "unexpected non-standard exception";
    }
  }
  testing::Test::RecordProperty("inputs", static_cast<int>(files.size()));
}

// As replay, for a target whose seeds (fuzz/corpus/<target>/) are inputs it accepts: `feed`
// returns whether it accepted one, and each seed must be accepted.
template <typename Feed>
void replay_seeds_accepted(const std::string& target, Feed&& feed) {
  EXPECT_FALSE(inputs(target).empty());
  replay(target, [&](const std::string& d, const fs::path& path) {
    const bool accepted = feed(d);
    if (path.string().find("/fuzz/corpus/") != std::string::npos) {
      EXPECT_TRUE(accepted);
    }
  });
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

// `headroom import-cluster`'s node lists (fuzz/fuzz_cluster.cpp): the seeds (an openb node list and
// rows of the real PAI 2020 machine spec) are accepted, and every cluster written loads back.
TEST(Crashers, ClusterImport) {
  replay_seeds_accepted(
      "cluster", [](const std::string& d) { return headroom::fuzz::import_cluster_bytes(bytes_of(d), d.size()); });
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

// The results-file target (fuzz/results_input.hpp): its seeds are contents check_result lets
// through (jobs, events, placements, outages and kills, partitions, samples, services), so each
// must be accepted and then read by every reader without a fault; its crashers either way.
TEST(Crashers, ResultsReaders) {
  replay_seeds_accepted("results",
                        [](const std::string& d) { return headroom::fuzz::read_results_bytes(bytes_of(d), d.size()); });
}

// The sweep-table target (fuzz/table_input.hpp): its seeds are tables check_sweep_table lets
// through (one sweep whole, shards, keys of names and of numbers, failed runs, NaN KPIs), so each
// must be accepted and then read by the report, the CSV and merge without a fault.
TEST(Crashers, SweepTableReaders) {
  replay_seeds_accepted("table",
                        [](const std::string& d) { return headroom::fuzz::read_table_bytes(bytes_of(d), d.size()); });
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

// --- The site-file readers (issue #31): one fuzz target each (fuzz/fuzz_site.cpp).

namespace {

using SiteFeed = bool (*)(const std::uint8_t*, std::size_t);

std::string fixture(const std::string& name) { return read_bytes(kSource / "tests/data/imports" / name); }

// The seeds scripts/fuzz makes for each site-file target out of tests/data/imports (the same
// files, the same way): a fuzz run starts from them, so each must be accepted.
std::vector<std::pair<std::string, std::string>> site_seeds(const std::string& target) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const std::string& name, std::string bytes) { out.emplace_back(name, std::move(bytes)); };
  if (target == "slurm_conf") {
    add("slurm/slurm.conf + slurm-nodes.conf", fixture("slurm/slurm.conf") +
                                                   std::string(headroom::fuzz::kIncludedFileMark.substr(1)) +
                                                   fixture("slurm/slurm-nodes.conf"));
    add("slurm-site/slurm.conf", fixture("slurm-site/slurm.conf"));
    for (const std::string lab : {"lambda", "packwood", "shine"})  // real lab sites, as scripts/fuzz seeds them
      add("slurm-labs/" + lab + "/slurm.conf", fixture("slurm-labs/" + lab + "/slurm.conf"));
  } else if (target == "gres_conf") {
    add("slurm/gres.conf", fixture("slurm/gres.conf"));
    for (const std::string lab : {"lambda", "packwood"})
      add("slurm-labs/" + lab + "/gres.conf", fixture("slurm-labs/" + lab + "/gres.conf"));
  } else if (target == "sacctmgr_qos") {
    add("slurm/qos.txt", fixture("slurm/qos.txt"));
    add("slurm/qos-perlmutter.txt", fixture("slurm/qos-perlmutter.txt"));
  } else if (target == "sshare") {
    add("slurm/sshare.txt", fixture("slurm/sshare.txt"));
  } else if (target == "manifests") {
    const std::vector<std::pair<std::string, char>> dirs = {
        {"kueue", '0'}, {"volcano", '1'}, {"kai", '2'}, {"kubernetes", '3'}};
    for (const auto& [dir, selector] : dirs) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(kSource / "tests/data/imports" / dir)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() == ".yaml" && name != "site.yaml" && name != "pods.yaml")
          files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) add(dir + "/" + f.filename().string(), selector + read_bytes(f));
    }
  } else if (target == "kubernetes_yaml") {
    add("kueue/pods.yaml", fixture("kueue/pods.yaml"));
    add("runai/pods.yaml", fixture("runai/pods.yaml"));
  }
  return out;
}

const std::vector<std::pair<std::string, SiteFeed>>& site_targets() {
  static const std::vector<std::pair<std::string, SiteFeed>> kTargets = {
      {"slurm_conf", headroom::fuzz::read_slurm_conf_bytes},
      {"gres_conf", headroom::fuzz::read_gres_conf_bytes},
      {"sacctmgr_qos", headroom::fuzz::read_sacctmgr_qos_bytes},
      {"sshare", headroom::fuzz::read_sshare_bytes},
      {"manifests", headroom::fuzz::read_manifest_bytes},
      {"kubernetes_yaml", headroom::fuzz::import_pod_yaml_bytes},
  };
  return kTargets;
}

}  // namespace

// Each site-file target's regression inputs (tests/data/crashers/<target>/, but those listed as
// known failing): accepted or rejected with an input error, nothing else.
TEST(Crashers, SiteFileReaders) {
  for (const auto& [target, feed] : site_targets()) {
    SCOPED_TRACE(target);
    // HEADROOM_CRASHERS_VERBOSE=1: how each input was answered.
    replay(target, [feed = feed](const std::string& d) {
      const bool accepted = feed(bytes_of(d), d.size());
      if (std::getenv("HEADROOM_CRASHERS_VERBOSE") != nullptr)
        std::cout << "  " << (accepted ? "accepted" : "rejected: " + headroom::fuzz::last_rejection()) << "\n";
      return accepted;
    });
  }
}

// Each site-file target's seeds: all accepted (a fuzz run that starts from error paths only finds
// little), but the hierarchical Volcano queues (two files), which need a scheduler configuration
// beside them.
TEST(Crashers, SiteFileSeedsAreValid) {
  for (const auto& [target, feed] : site_targets()) {
    const auto seeds = site_seeds(target);
    EXPECT_FALSE(seeds.empty()) << target;
    for (const auto& [name, bytes] : seeds) {
      SCOPED_TRACE(target + ": " + name);
      try {
        const bool accepted = feed(bytes_of(bytes), bytes.size());
        if (name == "volcano/hierarchical-queues.yaml") {
          EXPECT_FALSE(accepted);
          EXPECT_NE(headroom::fuzz::last_rejection().find("need drf with enableHierarchy: true"), std::string::npos)
              << headroom::fuzz::last_rejection();
          continue;
        }
        if (name == "volcano/hierarchical-guide-queues.yaml") {  // its scheduler ConfigMap is a file of its own
          EXPECT_FALSE(accepted);
          EXPECT_NE(
              headroom::fuzz::last_rejection().find("a parent queue needs the capacity plugin with enableHierarchy"),
              std::string::npos)
              << headroom::fuzz::last_rejection();
          continue;
        }
        EXPECT_TRUE(accepted) << headroom::fuzz::last_rejection();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected exception: " << e.what();
      }
    }
  }
}

// The regression inputs that still fail (tests/data/crashers/KNOWN_FAILING) are not run: each must
// exist, and the test is skipped naming them and why, until their readers are fixed and their
// lines removed.
TEST(Crashers, KnownFailing) {
  const auto listed = known_failing();
  std::ostringstream why;
  for (const auto& [input, reason] : listed) {
    EXPECT_TRUE(fs::is_regular_file(kSource / "tests/data/crashers" / input)) << input << " is listed but missing";
    why << "\n  " << input << ": " << reason;
  }
  if (!listed.empty()) GTEST_SKIP() << listed.size() << " known-failing regression inputs not run:" << why.str();
}
