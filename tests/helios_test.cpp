// Job-by-job agreement with the Helios simulator (FIFO and SJF + consolidate) on the shared
// 40,001-job synthetic trace; see tests/data/helios/README.md for how the reference was made.
#include <gtest/gtest.h>
#include <zlib.h>

#include <sstream>
#include <string>
#include <vector>

#include "policies/registry.hpp"
#include "simulation/simulation.hpp"
#include "traces/import.hpp"

using namespace headroom;

namespace {

const std::string kDir = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/helios/";

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

struct Reference {
  std::vector<std::int64_t> fifo, sjf;
};

Reference load_reference() {
  Reference r;
  std::istringstream in(gunzip(kDir + "synth40k_helios_reference.csv.gz"));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    r.fifo.push_back(std::stoll(line.substr(0, comma)));
    r.sjf.push_back(std::stoll(line.substr(comma + 1)));
  }
  return r;
}

void expect_same_starts(const std::string& policy_name, const std::vector<std::int64_t>& reference,
                        double helios_avg_jct_s) {
  const auto w = traces::import_trace(kDir + "synth40k_trace.csv.gz");
  ASSERT_EQ(w.jobs.size(), 40001u);
  ASSERT_EQ(reference.size(), w.jobs.size());
  models::ClusterSpec c;
  c.pools.push_back({"vcSynth", 52, 8, "V100-32G", 0, 0});
  auto policy = policies::make_policy(policy_name, {}, 1);
  simulation::Simulation sim(w, c, *policy, nullptr);
  sim.run();
  std::size_t differ = 0;
  double jct = 0;
  for (models::JobIndex j = 0; j < w.jobs.size(); ++j) {
    const auto id = static_cast<std::size_t>(w.jobs[j].trace_id);
    if (sim.job_start(j) != reference[id] * sim::kSecond && differ++ < 5)
      ADD_FAILURE() << policy_name << " job " << id << ": start " << sim.job_start(j) / 1000 << " s, Helios "
                    << reference[id] << " s";
    jct += sim::to_seconds(sim.job_end(j) - w.jobs[j].submit);
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_NEAR(jct / static_cast<double>(w.jobs.size()), helios_avg_jct_s, 0.005);
}

}  // namespace

TEST(Helios, FifoConsolidateStartsEveryJobWhenHeliosDoes) {
  expect_same_starts("fifo", load_reference().fifo, 48540.62);
}

TEST(Helios, SjfConsolidateStartsEveryJobWhenHeliosDoes) { expect_same_starts("sjf", load_reference().sjf, 5625.45); }
