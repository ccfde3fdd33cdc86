#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "models/cluster.hpp"
#include "models/job.hpp"
#include "models/observer.hpp"
#include "models/workload.hpp"
#include "results/check.hpp"
#include "results/chunks.hpp"
#include "results/fairness.hpp"
#include "results/format.hpp"
#include "results/hdf5_io.hpp"
#include "results/radix_sort.hpp"
#include "results/recorder.hpp"
#include "results/report.hpp"
#include "results/run_result.hpp"
#include "results/summary.hpp"
#include "results/table.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace fs = std::filesystem;
namespace hr = headroom::results;
namespace hm = headroom::models;
using headroom::sim::InputError;
using headroom::sim::Tick;

namespace {

constexpr Tick kS = 1000;
const std::string kUnicodeTenant = "研究-ü";

std::uint8_t st(hm::JobState s) { return static_cast<std::uint8_t>(s); }

// A fresh directory per test, removed afterwards.
class ResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("headroom_results_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string tmp_name(const std::string& name) const { return name + ".tmp." + std::to_string(::getpid()); }

  fs::path dir_;
};

// The latest time a results file may hold: 2^62 - 1 ms (results/check.cpp).
constexpr Tick kLatest = (Tick{1} << 62) - 1;

hr::RunResult sample_result() {
  hr::RunResult r;
  r.scenario_name = "ricc-week";
  r.scenario_text = "name: ricc-week\nseed: 1\ncluster:\n  pools: []\n# ünïcödé 研究 \"quoted\"\n";
  r.scenario_file = "/tmp/scenarios/ricc week.yaml";
  r.policy = "fifo";
  r.seed = std::numeric_limits<std::uint64_t>::max() - 5;
  r.version = "headroom 0.1.0 (abc1234-dirty)";
  r.fingerprint = "0123456789abcdef";
  r.events_processed = (std::uint64_t{1} << 40) + 7;
  r.sim_start = -5 * kS;
  r.sim_end = 123456789012;
  r.total_gpus = 40;
  r.tenants = {"research", kUnicodeTenant, "ops"};
  r.queues = {"default", "gpu-long"};
  r.pools = {{"a100", "A100", 2, 8, 1.25}, {"h100 pool", "H100-SXM", 3, 8, 0}};
  r.currency = "EUR";
  r.unix_start = 1272639895;  // the RICC log's UnixStartTime: the charts' calendar origin
  r.reasons = {"", "quota exceeded: tenant ops", "preempted by job 2"};

  hr::JobRecord a;
  a.trace_id = std::numeric_limits<std::int64_t>::max();
  a.tenant = 0;
  a.queue = 1;
  a.kind = 0;
  a.state = st(hm::JobState::Completed);
  a.gpus = 16;
  a.gpu_milli = 0;
  a.submit = 0;
  a.start = 10 * kS;
  a.end = 110 * kS;
  a.runtime = 100 * kS;
  a.walltime = 3600 * kS;
  a.trace_start = 12 * kS;
  a.preemptions = 2;
  a.nodes_used = 2;
  a.first_node = 3;
  a.pool = 1;
  hr::JobRecord b;
  b.trace_id = -42;
  b.tenant = 1;
  b.queue = 0;
  b.kind = 3;
  b.state = st(hm::JobState::Rejected);
  b.gpus = 1;
  b.gpu_milli = 250;
  b.submit = 20 * kS;
  b.end = 20 * kS;
  b.runtime = 5;
  hr::JobRecord c;
  c.trace_id = 3;
  c.tenant = 2;
  c.state = st(hm::JobState::Unfinished);
  c.gpus = 8;
  c.submit = -7;
  c.start = 1'000'000'000'000'000'000;
  c.walltime = kLatest;  // the extremes a file may hold (results/check.hpp)
  c.trace_start = -kLatest;
  r.jobs = {a, b, c};

  r.events = {{0, 0, 0, 0, 0},
              {20 * kS, 3, 1, -1, 1},
              {60 * kS, 4, 0, 2, 2},
              {110 * kS, 2, 0, 2, 0},
              {kLatest, 6, 2, std::numeric_limits<std::int32_t>::min(), 2}};

  auto& ts = r.timeseries;
  ts.interval = 60 * kS;
  ts.time = {0, 60 * kS};
  ts.running_jobs = {1, 2};
  ts.pending_jobs = {3, 0};
  ts.pool_used_gpus = {8, 0, 16, 8};  // [2 samples x 2 pools]
  ts.pool_free_gpus = {8, 24, 0, 16};
  ts.pool_frag_gpus = {3, 0, 0, 5};
  ts.tenant_used_gpus = {8, 0, 0, 16, 0, 8};  // [2 samples x 3 tenants]
  ts.tenant_pending_jobs = {1, 1, 1, 0, 0, 0};
  ts.tenant_pending_gpus = {16, 1, 8, 0, 0, 0};
  ts.pending_by_reason.assign(2 * 9, 0);  // [2 samples x 9 pending codes]
  ts.pending_by_reason[1] = 2;
  ts.pending_by_reason[9 + 8] = 1;
  r.placements = {{0, 0, 60 * kS, 0, 8}, {1, 60 * kS, -1, 1, 4}, {1, 60 * kS, -1, 2, 4}};
  return r;
}

void expect_same_job(const hr::JobRecord& a, const hr::JobRecord& b, std::size_t i) {
  SCOPED_TRACE("job " + std::to_string(i));
  EXPECT_EQ(a.trace_id, b.trace_id);
  EXPECT_EQ(a.tenant, b.tenant);
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.gpu_milli, b.gpu_milli);
  EXPECT_EQ(a.submit, b.submit);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.runtime, b.runtime);
  EXPECT_EQ(a.walltime, b.walltime);
  EXPECT_EQ(a.trace_start, b.trace_start);
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_EQ(a.nodes_used, b.nodes_used);
  EXPECT_EQ(a.first_node, b.first_node);
  EXPECT_EQ(a.pool, b.pool);
}

bool same_job(const hr::JobRecord& a, const hr::JobRecord& b) {
  return a.trace_id == b.trace_id && a.tenant == b.tenant && a.queue == b.queue && a.kind == b.kind &&
         a.state == b.state && a.gpus == b.gpus && a.gpu_milli == b.gpu_milli && a.submit == b.submit &&
         a.start == b.start && a.end == b.end && a.runtime == b.runtime && a.walltime == b.walltime &&
         a.trace_start == b.trace_start && a.preemptions == b.preemptions && a.nodes_used == b.nodes_used &&
         a.first_node == b.first_node && a.pool == b.pool;
}

bool same_event(const hr::EventRecord& a, const hr::EventRecord& b) {
  return a.time == b.time && a.kind == b.kind && a.job == b.job && a.detail == b.detail && a.reason == b.reason;
}

void expect_same(const hr::RunResult& a, const hr::RunResult& b) {
  EXPECT_EQ(a.scenario_name, b.scenario_name);
  EXPECT_EQ(a.scenario_text, b.scenario_text);
  EXPECT_EQ(a.scenario_file, b.scenario_file);
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events_processed, b.events_processed);
  EXPECT_EQ(a.sim_start, b.sim_start);
  EXPECT_EQ(a.sim_end, b.sim_end);
  EXPECT_EQ(a.total_gpus, b.total_gpus);
  EXPECT_EQ(a.tenants, b.tenants);
  EXPECT_EQ(a.queues, b.queues);
  EXPECT_EQ(a.reasons, b.reasons);
  ASSERT_EQ(a.pools.size(), b.pools.size());
  for (std::size_t i = 0; i < a.pools.size(); ++i) {
    EXPECT_EQ(a.pools[i].name, b.pools[i].name);
    EXPECT_EQ(a.pools[i].gpu_type, b.pools[i].gpu_type);
    EXPECT_EQ(a.pools[i].nodes, b.pools[i].nodes);
    EXPECT_EQ(a.pools[i].gpus_per_node, b.pools[i].gpus_per_node);
    EXPECT_EQ(a.pools[i].gpu_hour_price, b.pools[i].gpu_hour_price);
  }
  EXPECT_EQ(a.currency, b.currency);
  EXPECT_EQ(a.unix_start, b.unix_start);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  if (a.jobs.size() <= 100) {
    for (std::size_t i = 0; i < a.jobs.size(); ++i) expect_same_job(a.jobs[i], b.jobs[i], i);
  } else {
    for (std::size_t i = 0; i < a.jobs.size(); ++i)
      if (!same_job(a.jobs[i], b.jobs[i])) {
        expect_same_job(a.jobs[i], b.jobs[i], i);
        break;
      }
  }
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    if (same_event(a.events[i], b.events[i])) continue;
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(a.events[i].time, b.events[i].time);
    EXPECT_EQ(a.events[i].kind, b.events[i].kind);
    EXPECT_EQ(a.events[i].job, b.events[i].job);
    EXPECT_EQ(a.events[i].detail, b.events[i].detail);
    EXPECT_EQ(a.events[i].reason, b.events[i].reason);
    break;
  }
  const auto& x = a.timeseries;
  const auto& y = b.timeseries;
  EXPECT_EQ(x.interval, y.interval);
  EXPECT_EQ(x.time, y.time);
  EXPECT_EQ(x.running_jobs, y.running_jobs);
  EXPECT_EQ(x.pending_jobs, y.pending_jobs);
  EXPECT_EQ(x.pool_used_gpus, y.pool_used_gpus);
  EXPECT_EQ(x.pool_free_gpus, y.pool_free_gpus);
  EXPECT_EQ(x.pool_frag_gpus, y.pool_frag_gpus);
  EXPECT_EQ(x.tenant_used_gpus, y.tenant_used_gpus);
  EXPECT_EQ(x.tenant_pending_jobs, y.tenant_pending_jobs);
  EXPECT_EQ(x.tenant_pending_gpus, y.tenant_pending_gpus);
  EXPECT_EQ(x.pending_by_reason, y.pending_by_reason);
  ASSERT_EQ(a.placements.size(), b.placements.size());
  for (std::size_t i = 0; i < a.placements.size(); ++i) {
    EXPECT_EQ(a.placements[i].job, b.placements[i].job);
    EXPECT_EQ(a.placements[i].start, b.placements[i].start);
    EXPECT_EQ(a.placements[i].end, b.placements[i].end);
    EXPECT_EQ(a.placements[i].node, b.placements[i].node);
    EXPECT_EQ(a.placements[i].gpus, b.placements[i].gpus);
  }
}

// A python3 that can import `modules`, or "" (the PATH one may be a bare pyenv build).
std::string python_with(const std::string& modules) {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    const std::string cmd = std::string(py) + " -c 'import " + modules + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return py;
  }
  return "";
}

int run_python(const std::string& python, const std::string& script_path, const std::string& script,
               const std::string& arg) {
  std::ofstream(script_path) << script;
  const std::string cmd = python + " '" + script_path + "' '" + arg + "'";
  return std::system(cmd.c_str());
}

template <class F>
std::string input_error_message(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InputError";
  return "";
}

// --- HDF5 round trip -------------------------------------------------------------------------

TEST_F(ResultsTest, RoundTripKeepsEveryField) {
  const hr::RunResult r = sample_result();
  const std::string file = path("run.h5");
  hr::write_hdf5(r, file);
  EXPECT_EQ(entries(), std::vector<std::string>{"run.h5"});
  expect_same(r, hr::read_hdf5(file));
}

TEST_F(ResultsTest, RoundTripOfEmptyResult) {
  hr::RunResult r;
  r.reasons = {""};
  const std::string file = path("empty.h5");
  hr::write_hdf5(r, file);
  expect_same(r, hr::read_hdf5(file));

  // Names but no jobs, events or samples: [0 x pools] and [0 x tenants] matrices.
  r.tenants = {kUnicodeTenant, ""};
  r.pools = {{"p", "A100", 1, 8}};
  r.queues = {"q"};
  r.timeseries.interval = 5 * kS;
  hr::write_hdf5(r, file);
  expect_same(r, hr::read_hdf5(file));
}

TEST_F(ResultsTest, RoundTripWithSamplesButNoColumns) {
  hr::RunResult r = sample_result();
  r.tenants.clear();
  r.pools.clear();
  r.jobs.clear();  // their tenants, pools and nodes are gone (results/check.hpp)
  r.events.clear();
  r.placements.clear();
  r.timeseries.tenant_used_gpus.clear();
  r.timeseries.tenant_pending_jobs.clear();
  r.timeseries.tenant_pending_gpus.clear();
  r.timeseries.pool_used_gpus.clear();
  r.timeseries.pool_free_gpus.clear();
  r.timeseries.pool_frag_gpus.clear();
  const std::string file = path("nocols.h5");
  hr::write_hdf5(r, file);
  expect_same(r, hr::read_hdf5(file));
}

hr::RunResult synthetic_result(std::size_t jobs, std::size_t events, std::size_t samples, std::size_t tenants) {
  std::mt19937_64 rng(12345);
  auto below = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
  hr::RunResult r;
  r.scenario_name = "synthetic";
  r.policy = "fifo";
  r.total_gpus = 8192;
  for (std::size_t t = 0; t < tenants; ++t) r.tenants.push_back("tenant-" + std::to_string(t));
  r.queues = {"default", "long", "short"};
  r.pools = {{"a100", "A100", 512, 8}, {"h100", "H100", 384, 8}, {"v100", "V100", 128, 8}};
  r.reasons = {""};
  for (int i = 1; i < 24; ++i) r.reasons.push_back("reason number " + std::to_string(i));
  static constexpr std::array<std::int32_t, 7> kGpus = {1, 1, 2, 4, 8, 16, 64};
  Tick submit = 0;
  r.jobs.resize(jobs);
  for (std::size_t i = 0; i < jobs; ++i) {
    hr::JobRecord& j = r.jobs[i];
    submit += below(4000);
    j.trace_id = static_cast<std::int64_t>(i) + 1;
    j.tenant = static_cast<std::uint32_t>(below(static_cast<std::uint64_t>(tenants)));
    j.queue = static_cast<std::uint32_t>(below(3));
    j.kind = static_cast<std::uint8_t>(below(4));
    j.state = static_cast<std::uint8_t>(2 + below(5));
    j.gpus = kGpus[static_cast<std::size_t>(below(kGpus.size()))];
    j.gpu_milli = below(10) == 0 ? static_cast<std::int32_t>(100 * (1 + below(9))) : 0;
    j.submit = submit;
    j.runtime = below(86'400'000);
    j.walltime = below(3) == 0 ? -1 : j.runtime + below(3'600'000);
    j.trace_start = submit + below(600'000);
    if (below(20) != 0) {
      j.start = submit + below(3'600'000);
      j.end = j.start + j.runtime;
      j.nodes_used = 1 + static_cast<std::int32_t>(below(4));
      j.first_node = static_cast<std::int32_t>(below(1024));
      j.pool = j.first_node < 512 ? 0 : j.first_node < 896 ? 1 : 2;
      j.preemptions = below(10) == 0 ? 1 : 0;
    }
  }
  r.events.resize(events);
  Tick t = 0;
  for (std::size_t i = 0; i < events; ++i) {
    t += below(1500);
    r.events[i] = {t, static_cast<std::uint8_t>(below(7)), static_cast<std::uint32_t>(below(jobs)),
                   static_cast<std::int32_t>(below(7)), static_cast<std::uint32_t>(below(4) == 0 ? below(24) : 0)};
  }
  auto& ts = r.timeseries;
  ts.interval = 300 * kS;
  for (std::size_t s = 0; s < samples; ++s) {
    ts.time.push_back(static_cast<Tick>(s) * ts.interval);
    ts.running_jobs.push_back(static_cast<std::int32_t>(below(2000)));
    ts.pending_jobs.push_back(static_cast<std::int32_t>(below(5000)));
    for (std::size_t p = 0; p < r.pools.size(); ++p) {
      const auto used = static_cast<std::int32_t>(below(4097));
      ts.pool_used_gpus.push_back(used);
      ts.pool_free_gpus.push_back(4096 - used);
    }
    for (std::size_t k = 0; k < tenants; ++k) {
      ts.tenant_used_gpus.push_back(static_cast<std::int32_t>(below(64)));
      ts.tenant_pending_jobs.push_back(static_cast<std::int32_t>(below(30)));
      ts.tenant_pending_gpus.push_back(static_cast<std::int32_t>(below(200)));
    }
  }
  r.sim_end = t;
  r.events_processed = events * 3;
  return r;
}

// Full-size run (RICC: 447,794 jobs): exercises the chunked, compressed path and prints timings.
TEST_F(ResultsTest, LargeResultRoundTripsAndReportsTiming) {
  const hr::RunResult r = synthetic_result(447'794, 1'300'000, 4032, 200);
  const std::string file = path("large.h5");
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  hr::write_hdf5(r, file);
  const auto t1 = clock::now();
  const hr::RunResult back = hr::read_hdf5(file);
  const auto t2 = clock::now();
  const double raw_mb = static_cast<double>(r.jobs.size() * (sizeof(hr::JobRecord) + 8) + r.events.size() * 21) / 1e6;
  std::printf("[ timing   ] write_hdf5 %.0f ms, read_hdf5 %.0f ms, file %.1f MB (raw tables ~%.0f MB)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count(),
              static_cast<double>(fs::file_size(file)) / 1e6, raw_mb);
  EXPECT_LT(static_cast<double>(fs::file_size(file)) / 1e6, raw_mb);  // compressed
  expect_same(r, back);
}

// Random 64-bit ids do not deflate: those chunks are stored shuffled only (filter mask set).
TEST_F(ResultsTest, IncompressibleChunksRoundTrip) {
  hr::RunResult r = synthetic_result(70'000, 5'000, 3, 2);
  std::mt19937_64 rng(99);
  std::uint64_t sum = 0;
  for (auto& j : r.jobs) {
    j.trace_id = static_cast<std::int64_t>(rng());
    sum += static_cast<std::uint64_t>(j.trace_id);
  }
  const std::string file = path("random.h5");
  hr::write_hdf5(r, file);
  expect_same(r, hr::read_hdf5(file));

  const std::string python = python_with("h5py, numpy");
  if (python.empty()) GTEST_SKIP() << "python3 with h5py not available";
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "ids = h5py.File(sys.argv[1], 'r')['jobs/trace_id'][:]\n"
      "assert len(ids) == 70000\n"
      "assert int(ids.view(np.uint64).sum(dtype=np.uint64)) == " +
      std::to_string(sum) + "\n";
  EXPECT_EQ(run_python(python, path("check.py"), script, file), 0);
}

// A chunk holding only the dataset's fill value is not written: a constant column keeps only its
// first chunk (fill value = that constant), and a zero chunk inside a column is left out. Both
// read back as written, through headroom's reader and through h5py (HDF5's own read path).
TEST_F(ResultsTest, ChunksOfTheFillValueAreLeftOut) {
  hr::RunResult r = synthetic_result(70'000, 5'000, 3, 2);  // int64 columns: 9 chunks of 8,192 rows
  for (auto& j : r.jobs) {
    j.walltime = -1;    // constant, not zero: nine chunks, eight left out
    j.trace_start = 0;  // zero but for one row in the first and one in the last chunk
  }
  r.jobs.front().trace_start = 5;
  r.jobs.back().trace_start = 7;
  const std::string file = path("sparse.h5");
  hr::write_hdf5(r, file);
  expect_same(r, hr::read_hdf5(file));

  const std::string python = python_with("h5py, numpy");
  if (python.empty()) GTEST_SKIP() << "python3 with h5py not available";
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "w, t = f['jobs/walltime'], f['jobs/trace_start']\n"
      "assert w.chunks == (8192,) and w.id.get_num_chunks() == 1, w.id.get_num_chunks()\n"
      "assert w.fillvalue == -1 and (w[:] == -1).all()\n"
      "assert t.id.get_num_chunks() == 2, t.id.get_num_chunks()\n"
      "v = t[:]\n"
      "assert len(v) == 70000 and v[0] == 5 and v[-1] == 7 and np.count_nonzero(v) == 2\n";
  EXPECT_EQ(run_python(python, path("check.py"), script, file), 0);
}

// The digest ChunkCache checks a filtered chunk against: the same values give the same digest
// whatever their layout, and changing any single element changes it.
TEST(ChunkDigest, SameValuesSameDigestAnyOneChangeShows) {
  namespace ch = hr::chunks;
  std::vector<std::int64_t> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i * i % 97) - 40;
  struct Row {
    std::int32_t pad;
    std::int64_t value;
  };
  std::vector<Row> rows(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) rows[i] = {7, v[i]};
  auto contiguous = [&] {
    return ch::digest(ch::Elements{reinterpret_cast<const unsigned char*>(v.data()), 8, v.size(), 8});
  };
  const std::uint64_t d = contiguous();
  EXPECT_EQ(
      d, ch::digest(ch::Elements{reinterpret_cast<const unsigned char*>(&rows[0].value), sizeof(Row), rows.size(), 8}));
  for (std::size_t i = 0; i < v.size(); i += 37) {
    for (const std::int64_t delta : {std::int64_t{1}, std::int64_t{-1}, std::int64_t{1} << 40}) {
      v[i] += delta;
      EXPECT_NE(contiguous(), d) << "element " << i << " changed by " << delta;
      v[i] -= delta;
    }
  }
  EXPECT_EQ(contiguous(), d);
  std::swap(v[1], v[2]);
  EXPECT_NE(contiguous(), d) << "order counts";
}

// The radix sort the fairness metrics use gives exactly std::sort's (key, index) order for
// records made in index order: negative and huge keys, many ties, already sorted input.
TEST(RadixSort, SameOrderAsSortingKeyIndexPairs) {
  std::mt19937_64 rng(7);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000}, std::size_t{50'000}}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<hr::detail::Keyed> v(n);
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t key = 0;
        switch (kind) {
          case 0: key = static_cast<std::int64_t>(rng()); break;                           // full range, negatives
          case 1: key = static_cast<std::int64_t>(rng() % 50) - 25; break;                 // many ties
          case 2: key = static_cast<std::int64_t>(i) * 1000; break;                        // sorted already
          default: key = static_cast<std::int64_t>(rng() % 4) << 40 | (rng() % 3); break;  // high and low bytes only
        }
        v[i] = {key, static_cast<std::uint32_t>(i)};
      }
      std::vector<std::pair<std::int64_t, std::uint32_t>> expected;
      for (const auto& r : v) expected.emplace_back(r.key, r.index);
      std::sort(expected.begin(), expected.end());
      hr::detail::stable_sort_by_key(v);
      ASSERT_EQ(v.size(), expected.size());
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(v[i].key, expected[i].first) << "n " << n << " kind " << kind << " at " << i;
        ASSERT_EQ(v[i].index, expected[i].second) << "n " << n << " kind " << kind << " at " << i;
      }
    }
  }
}

// --- atomic writes ---------------------------------------------------------------------------

TEST_F(ResultsTest, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  const std::string file = path("no/such/dir/run.h5");
  const std::string msg = input_error_message([&] { hr::write_hdf5(sample_result(), file); });
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot write results"), std::string::npos) << msg;
  EXPECT_TRUE(entries().empty());
}

TEST_F(ResultsTest, GoodFileSurvivesWhenTempFileCannotBeCreated) {
  hr::RunResult good = sample_result();
  const std::string file = path("run.h5");
  hr::write_hdf5(good, file);
  // Something already sits where the temporary file would go.
  fs::create_directory(path(tmp_name("run.h5")));
  hr::RunResult other = sample_result();
  other.policy = "sjf";
  EXPECT_THROW(hr::write_hdf5(other, file), InputError);
  expect_same(good, hr::read_hdf5(file));
  EXPECT_TRUE(fs::is_directory(path(tmp_name("run.h5"))));  // not ours to delete
}

TEST_F(ResultsTest, GoodFileSurvivesInvalidResult) {
  hr::RunResult good = sample_result();
  const std::string file = path("run.h5");
  hr::write_hdf5(good, file);
  hr::RunResult bad = sample_result();
  bad.timeseries.pool_used_gpus.push_back(1);  // 5 values for 2 samples
  const std::string msg = input_error_message([&] { hr::write_hdf5(bad, file); });
  EXPECT_NE(msg.find("pool_used_gpus"), std::string::npos) << msg;
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_EQ(entries(), std::vector<std::string>{"run.h5"});  // temp file removed
  expect_same(good, hr::read_hdf5(file));
}

TEST_F(ResultsTest, WriteOverDirectoryFailsAtRenameAndCleansUp) {
  const std::string target = path("out.h5");
  fs::create_directories(fs::path(target) / "keep");
  const std::string msg = input_error_message([&] { hr::write_hdf5(sample_result(), target); });
  EXPECT_NE(msg.find("rename"), std::string::npos) << msg;
  EXPECT_EQ(entries(), std::vector<std::string>{"out.h5"});
  EXPECT_TRUE(fs::is_directory(fs::path(target) / "keep"));
}

TEST_F(ResultsTest, OverwritesExistingFile) {
  const std::string file = path("run.h5");
  hr::write_hdf5(sample_result(), file);
  hr::RunResult second = synthetic_result(5000, 9000, 10, 3);
  hr::write_hdf5(second, file);
  expect_same(second, hr::read_hdf5(file));
  EXPECT_EQ(entries(), std::vector<std::string>{"run.h5"});
}

TEST_F(ResultsTest, SameResultWrittenTwiceGivesTheSameBytes) {
  // HDF5 stores each object's modification time (whole seconds) unless told not to; the two
  // writes are more than a second apart, so any time stored would show.
  const hr::RunResult r = synthetic_result(5000, 9000, 10, 3);
  const std::string a = path("a.h5"), b = path("b.h5");
  hr::write_hdf5(r, a);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  hr::write_hdf5(r, b);
  auto bytes = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string first = bytes(a), second = bytes(b);
  ASSERT_GT(first.size(), 1000u);
  EXPECT_TRUE(first == second) << "the files differ although the result is the same";
}

// --- read errors -----------------------------------------------------------------------------

TEST_F(ResultsTest, ReadMissingFileNamesIt) {
  const std::string file = path("absent.h5");
  try {
    hr::read_hdf5(file);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
  }
}

TEST_F(ResultsTest, ReadNonHdf5FileNamesIt) {
  const std::string file = path("trace.swf");
  std::ofstream(file) << "; not an HDF5 file\n1 0 10 100 4\n";
  const std::string msg = input_error_message([&] { hr::read_hdf5(file); });
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an HDF5 file"), std::string::npos) << msg;

  std::ofstream(path("empty.h5")).close();
  EXPECT_THROW(hr::read_hdf5(path("empty.h5")), InputError);
  EXPECT_THROW(hr::read_hdf5(dir_.string()), InputError);
}

TEST_F(ResultsTest, ReadTruncatedFileThrowsInputError) {
  const std::string file = path("run.h5");
  hr::write_hdf5(synthetic_result(20000, 20000, 10, 3), file);
  fs::resize_file(file, fs::file_size(file) / 2);
  EXPECT_THROW(hr::read_hdf5(file), InputError);
}

namespace {

// Replaces dataset `name` of `file` by an 8-byte integer one declaring `rows` rows in chunks that
// are never written (they read as the fill value): a few bytes on disk, terabytes once read.
void declare_rows(const std::string& file, const char* name, hsize_t rows) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  ASSERT_GE(H5Ldelete(f, name, H5P_DEFAULT), 0);
  const hsize_t chunk = 1024;
  const hid_t space = H5Screate_simple(1, &rows, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  const hid_t ds = H5Dcreate2(f, name, H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(f);
}

}  // namespace

// A damaged or crafted file that declares 2^40 rows in 33 KB: refused before anything is
// allocated for it (before, std::bad_alloc, or all the machine's memory for 2^31 rows).
TEST_F(ResultsTest, ADatasetDeclaringMoreThanItsFileCanHoldIsRefused) {
  const std::string file = path("run.h5");
  hr::write_hdf5(sample_result(), file);
  declare_rows(file, "/jobs/submit", hsize_t{1} << 40);
  const std::string bytes = headroom::sim::thousands(static_cast<std::int64_t>(fs::file_size(file)));
  EXPECT_EQ(input_error_message([&] { hr::read_hdf5(file); }),
            file + ": /jobs/submit: declares 1,099,511,627,776 values, more than a file of " + bytes +
                " bytes can hold (deflate packs at most 1,032:1): a damaged or crafted file");
  // A sweep table's column, the same.
  hr::Table t;
  hr::Column c;
  c.name = "wait_mean";
  c.numbers = {1.0, 2.0};
  t.columns.push_back(c);
  const std::string table = path("table.h5");
  hr::write_table_hdf5(t, table, "runs");
  declare_rows(table, "/runs/wait_mean", hsize_t{1} << 40);
  const std::string table_bytes = headroom::sim::thousands(static_cast<std::int64_t>(fs::file_size(table)));
  EXPECT_EQ(input_error_message([&] { hr::read_table_hdf5(table, "runs"); }),
            table + ": /runs/wait_mean: declares 1,099,511,627,776 values, more than a file of " + table_bytes +
                " bytes can hold (deflate packs at most 1,032:1): a damaged or crafted file");
  // Within the bound, such a column reads as its fill value.
  hr::write_table_hdf5(t, table, "runs");
  declare_rows(table, "/runs/wait_mean", 4096);
  EXPECT_EQ(hr::read_table_hdf5(table, "runs").rows(), 4096u);
}

// A file whose values point past their tables (written by another tool, hand-edited or crafted)
// is refused when read, with the dataset and the row, before the summary, the report or the
// desktop app index anything with them (fuzz/fuzz_results.cpp finds what would reach them).
TEST_F(ResultsTest, AValueOutsideItsTableIsRefusedWithTheDatasetAndRow) {
  const std::string file = path("run.h5");
  hr::RunResult r = sample_result();
  r.jobs[1].tenant = 7;
  hr::write_hdf5(r, file);
  EXPECT_EQ(input_error_message([&] { hr::read_hdf5(file); }),
            file + ": /jobs/tenant: row 1: 7 is not a row of /meta/tenants (3 rows)");
  // A matrix of the right rows but not one column per pool: 2 samples x 3 columns for 2 pools.
  r = sample_result();
  r.timeseries.pool_used_gpus = {8, 0, 0, 16, 8, 0};
  hr::write_hdf5(r, file);
  EXPECT_EQ(input_error_message([&] { hr::read_hdf5(file); }),
            file + ": /timeseries/pool_used_gpus: 6 values, expected 2 samples x 2 pools");
}

TEST(CheckResult, EachReferenceAndRangeNamesItsDatasetRowAndWhatWasExpected) {
  ASSERT_NO_THROW(hr::check_result(sample_result(), "f.h5"));
  using K = hm::AuditKind;
  const auto ev = [](K k) { return static_cast<std::uint8_t>(k); };
  const std::vector<std::pair<std::function<void(hr::RunResult&)>, std::string>> cases = {
      {[](hr::RunResult& r) { r.jobs[2].queue = 2; }, "/jobs/queue: row 2: 2 is not a row of /meta/queues (2 rows)"},
      {[](hr::RunResult& r) { r.jobs[0].kind = 4; },
       "/jobs/kind: row 0: expected 0 (train), 1 (inference), 2 (interactive) or 3 (batch), got 4"},
      {[](hr::RunResult& r) { r.jobs[0].state = 7; }, "/jobs/state: row 0: expected a job state 0 to 6, got 7"},
      {[](hr::RunResult& r) { r.jobs[0].gpus = -1; }, "/jobs/gpus: row 0: expected GPUs >= 0, got -1"},
      {[](hr::RunResult& r) { r.jobs[1].submit = std::numeric_limits<Tick>::min(); },
       "/jobs/submit: row 1: expected a time within +-2^62 ms, got -9223372036854775808"},
      {[](hr::RunResult& r) { r.jobs[0].first_node = 5; },
       "/jobs/first_node: row 0: node 5 is not one of the 5 nodes of /meta/pool_nodes (or -1 for none)"},
      {[](hr::RunResult& r) { r.jobs[0].pool = 2; },
       "/jobs/pool: row 0: 2 is not a row of /meta/pool_name (2 rows, or -1 for none)"},
      {[](hr::RunResult& r) { r.events[1].reason = 3; },
       "/events/reason: row 1: 3 is not a row of /meta/reasons (3 rows)"},
      {[](hr::RunResult& r) { r.events[2].job = 3; }, "/events/job: row 2: 3 is not a row of /jobs (3 rows)"},
      {[](hr::RunResult& r) { r.events[2].detail = 3; },  // a preemptor past /jobs
       "/events/detail: row 2: 3 is not a row of /jobs (3 rows, or -1 for none)"},
      {[&](hr::RunResult& r) {
         r.events.push_back({0, ev(K::NodeDown), hm::kNoJob, 5, 0});
       },
       "/events/detail: row 5: node 5 is not one of the 5 nodes of /meta/pool_nodes"},
      {[&](hr::RunResult& r) {
         r.events.push_back({0, ev(K::Drill), hm::kNoJob, 0, 0});
       },
       "/events/detail: row 5: 0 is not a row of /meta/drill_start (0 rows)"},
      {[&](hr::RunResult& r) {
         r.events.push_back({0, ev(K::Waiting), 0, 9, 0});
       },
       "/events/detail: row 5: expected a pending code 0 to 8, got 9"},
      {[](hr::RunResult& r) { r.events[0].kind = 15; }, "/events/kind: row 0: expected an event kind 0 to 14, got 15"},
      {[](hr::RunResult& r) { r.placements[2].job = 9; }, "/placements/job: row 2: 9 is not a row of /jobs (3 rows)"},
      {[](hr::RunResult& r) { r.placements[0].node = -1; },
       "/placements/node: row 0: node -1 is not one of the 5 nodes of /meta/pool_nodes"},
      {[](hr::RunResult& r) { r.timeseries.tenant_pending_gpus.pop_back(); },
       "/timeseries/tenant_pending_gpus: 5 values, expected 2 samples x 3 tenants"},
      {[](hr::RunResult& r) { r.timeseries.running_jobs.push_back(0); },
       "/timeseries/running_jobs: 3 values, expected 2 (one per sample time)"},
      {[](hr::RunResult& r) {
         r.tenant_denied = {0, 0, 0, 1};
       },
       "/meta/tenant_denied: 4 values, more than the 3 tenants of /meta/tenants"},
      {[](hr::RunResult& r) {
         r.outages.push_back({0, -1, 0, -1, 0, 1});
         r.kills.push_back({1, 0, 0, -1, 0, 1, 0, 0});
       },
       "/kills/outage: row 0: 1 is not a row of /outages (1 rows)"},
      {[](hr::RunResult& r) {
         hr::ServiceRecord s;
         s.time_attainment = std::nan("");
         r.services.push_back(s);
       },
       "/services/time_attainment: row 0: expected a finite number, got nan"},
      {[](hr::RunResult& r) {
         r.partitions.push_back({"a", "fifo", 3, 3, 0, 1, 8, 0});
       },
       "/partitions/nodes: row 0: expected nodes up to the cluster's last, got 3"},
      {[](hr::RunResult& r) { r.moves.push_back({}); }, "/moves: node moves but no /partitions"},
      // An attribute has no rows: its message names none.
      {[](hr::RunResult& r) { r.unix_start = -2; },
       "attribute /@unix_start: expected -1 or seconds from 0 to 10^12, got -2"},
      {[](hr::RunResult& r) { r.timeseries.interval = -1; },
       "attribute /timeseries/@interval: expected a time >= 0, got -1"},
  };
  for (const auto& [mutate, expected] : cases) {
    hr::RunResult r = sample_result();
    mutate(r);
    EXPECT_EQ(input_error_message([&] { hr::check_result(r, "f.h5"); }), "f.h5: " + expected);
  }
}

TEST_F(ResultsTest, ReadNamesMissingDataset) {
  const std::string python = python_with("h5py");
  if (python.empty()) GTEST_SKIP() << "python3 with h5py not available";
  const std::string file = path("run.h5");
  hr::write_hdf5(sample_result(), file);
  ASSERT_EQ(run_python(python, path("del.py"),
                       "import sys, h5py\n"
                       "with h5py.File(sys.argv[1], 'r+') as f:\n"
                       "    del f['jobs/start']\n",
                       file),
            0);
  const std::string msg = input_error_message([&] { hr::read_hdf5(file); });
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
  EXPECT_NE(msg.find("/jobs/start"), std::string::npos) << msg;
}

// --- python / pandas -------------------------------------------------------------------------

TEST_F(ResultsTest, FileLoadsIntoPandas) {
  const std::string python = python_with("h5py, pandas");
  if (python.empty()) GTEST_SKIP() << "python3 with h5py and pandas not available";
  const std::string file = path("run.h5");
  hr::write_hdf5(sample_result(), file);
  const std::string script = R"PY(
import sys, h5py, numpy as np, pandas as pd
def s(x):
    return x.decode() if isinstance(x, bytes) else x
f = h5py.File(sys.argv[1], 'r')
jobs = pd.DataFrame({k: f['jobs'][k][:] for k in f['jobs']})
assert len(jobs) == 3, len(jobs)
cols = {'trace_id', 'tenant', 'queue', 'kind', 'state', 'gpus', 'gpu_milli', 'submit', 'start', 'end',
        'runtime', 'walltime', 'trace_start', 'preemptions', 'nodes_used', 'first_node', 'pool', 'wait'}
assert set(jobs.columns) == cols, set(jobs.columns) ^ cols
assert jobs['submit'].dtype == np.int64 and jobs['tenant'].dtype == np.uint32 and jobs['kind'].dtype == np.uint8
assert list(jobs['wait']) == [10000, -1, 10**18 + 7], list(jobs['wait'])
assert list(jobs['trace_id'])[0] == 2**63 - 1
assert s(f['jobs/end'].attrs['units']) == 'ms'
events = pd.DataFrame({k: f['events'][k][:] for k in f['events']})
assert len(events) == 5 and list(events['reason']) == [0, 1, 2, 0, 2]
tenants = [s(t) for t in f['meta/tenants'][:]]
assert tenants == ['research', '研究-ü', 'ops'], tenants
assert [s(x) for x in f['meta/reasons'][:]][1] == 'quota exceeded: tenant ops'
assert [s(x) for x in f['meta/pool_name'][:]] == ['a100', 'h100 pool']
assert list(f['meta/pool_nodes'][:]) == [2, 3]
assert f['timeseries/pool_used_gpus'].shape == (2, 2)
assert f['timeseries/tenant_used_gpus'].shape == (2, 3)
assert f['timeseries'].attrs['interval'] == 60000
assert f.attrs['format_version'] == 1
assert f.attrs['seed'] == 2**64 - 6
assert f.attrs['total_gpus'] == 40
assert s(f.attrs['policy']) == 'fifo'
assert 'ünïcödé 研究' in s(f.attrs['scenario_text'])
assert s(f['meta/state_names'][:][2]) == 'completed'
)PY";
  EXPECT_EQ(run_python(python, path("check.py"), script, file), 0);
}

// --- summary ---------------------------------------------------------------------------------

// Five jobs on 8 GPUs over 1000 s; the expected figures are worked out in the comments.
hr::RunResult five_jobs() {
  hr::RunResult r;
  r.scenario_name = "five";
  r.policy = "fifo";
  r.seed = 7;
  r.fingerprint = "00000000deadbeef";
  r.sim_start = 0;
  r.sim_end = 1000 * kS;
  r.total_gpus = 8;
  r.tenants = {"a", "b", "c"};
  auto job = [](std::uint32_t tenant, int gpus, int milli, Tick submit, Tick start, Tick end, hm::JobState s) {
    hr::JobRecord j;
    j.tenant = tenant;
    j.gpus = gpus;
    j.gpu_milli = milli;
    j.submit = submit * kS;
    j.start = start < 0 ? -1 : start * kS;
    j.end = end < 0 ? -1 : end * kS;
    j.state = st(s);
    return j;
  };
  r.jobs = {
      job(0, 4, 0, 0, 10, 110, hm::JobState::Completed),     // wait 10, jct 110, 400 GPU-s
      job(0, 2, 0, 20, 50, 250, hm::JobState::Completed),    // wait 30, jct 230, 400 GPU-s
      job(1, 1, 500, 100, 100, 700, hm::JobState::Failed),   // wait 0, half a GPU: 300 GPU-s
      job(1, 8, 0, 200, -1, 200, hm::JobState::Rejected),    // never started
      job(0, 1, 0, 300, 900, -1, hm::JobState::Unfinished),  // wait 600, runs to sim_end: 100 GPU-s
  };
  return r;
}

// Pods bound while their job's other pods waited: a banner note from 1 % of the cluster's GPU time
// (here 3,600 GPUs over 1,000 s: 1,000 GPU-h), with the figure and the remedy.
TEST(Summary, HeldIdleGpuTimeFromOnePercentIsNotedInTheBanner) {
  hr::RunResult r = five_jobs();
  r.total_gpus = 3600;
  r.bound_idle_gpu_ms = 99 * headroom::sim::kHour / 10;  // 9.9 GPU-h: 0.99 %
  EXPECT_EQ(hr::summarize(r).banner.find("held idle"), std::string::npos);
  r.bound_idle_gpu_ms = 10 * headroom::sim::kHour;
  const std::string banner = hr::summarize(r).banner;
  EXPECT_NE(banner.find("\nNOTE: 10 GPU-h (1.0% of the cluster's GPU time) were held idle by pods bound while their "
                        "job's other pods waited"),
            std::string::npos)
      << banner;
  EXPECT_NE(banner.find("kubernetes+coscheduling"), std::string::npos);
  r.bound_idle_gpu_ms = 20 * headroom::sim::kHour / 10;
  r.total_gpus = 8;  // 2 GPU-h of 2.2: 90 %
  EXPECT_NE(hr::summarize(r).banner.find("NOTE: 2.0 GPU-h (90.0% of the cluster's GPU time)"), std::string::npos);
}

// Work thrown away by preemption (the Preempt rows, not Slurm's time-limit kills): a banner note
// from 5 % of the cluster's GPU time (8 GPUs over 1,000 s: 8,000 GPU-s), with the preemptions.
TEST(Summary, WorkThrownAwayByPreemptionFromFivePercentIsNotedInTheBanner) {
  hr::RunResult r = five_jobs();
  r.jobs[0].preemptions = 3;
  r.jobs[1].preemptions = 1;
  auto preempt = [](std::uint32_t job, std::int64_t lost_gpu_s) {
    hr::EventRecord e;
    e.kind = static_cast<std::uint8_t>(hm::AuditKind::Preempt);
    e.job = job;
    e.lost_gpu_ms = lost_gpu_s * 1000;
    return e;
  };
  r.events = {preempt(0, 100), preempt(0, 100), preempt(1, 100), preempt(0, 99)};  // 399 GPU-s: 4.99 %
  r.lost_gpu_ms = 10 * 399'000;  // policy kills count there too, and do not make a note
  EXPECT_EQ(hr::summarize(r).banner.find("thrown away"), std::string::npos);
  r.events.back().lost_gpu_ms = 100'000;  // 400 GPU-s: 5 %
  EXPECT_NE(hr::summarize(r).banner.find("\nNOTE: 0.1 GPU-h (5.0% of the cluster's GPU time) of work were thrown away "
                                         "by preemption: 4 preemptions of 2 jobs, one of them taken 3 times"),
            std::string::npos)
      << hr::summarize(r).banner;
}

TEST(Summary, FiveJobsByHand) {
  const hr::Summary s = hr::summarize(five_jobs());
  EXPECT_EQ(s.scenario_name, "five");
  EXPECT_EQ(s.policy, "fifo");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.fingerprint, "00000000deadbeef");
  EXPECT_EQ(s.jobs, 5);
  const std::array<std::int64_t, 7> states = {0, 0, 2, 1, 0, 1, 1};
  EXPECT_EQ(s.by_state, states);
  // waits {0, 10, 30, 600}: median = sorted[ceil(2)-1] = 10, p95 = sorted[ceil(3.8)-1] = 600.
  EXPECT_EQ(s.wait.n, 4);
  EXPECT_DOUBLE_EQ(s.wait.mean, 160.0);
  EXPECT_DOUBLE_EQ(s.wait.median, 10.0);
  EXPECT_DOUBLE_EQ(s.wait.p95, 600.0);
  EXPECT_DOUBLE_EQ(s.wait.max, 600.0);
  // jct {110, 230}: median = sorted[0], p95 = sorted[ceil(1.9)-1] = sorted[1].
  EXPECT_EQ(s.jct.n, 2);
  EXPECT_DOUBLE_EQ(s.jct.mean, 170.0);
  EXPECT_DOUBLE_EQ(s.jct.median, 110.0);
  EXPECT_DOUBLE_EQ(s.jct.p95, 230.0);
  EXPECT_DOUBLE_EQ(s.jct.max, 230.0);
  // (400 + 400 + 300 + 100) GPU-s / (8 GPUs x 1000 s)
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 0.15);
  EXPECT_DOUBLE_EQ(s.makespan_s, 1000.0);
  ASSERT_EQ(s.tenants.size(), 3u);
  EXPECT_EQ(s.tenants[0].name, "a");
  EXPECT_EQ(s.tenants[0].jobs, 3);
  EXPECT_DOUBLE_EQ(s.tenants[0].gpu_hours, 900.0 / 3600.0);
  EXPECT_DOUBLE_EQ(s.tenants[0].mean_wait_s, 640.0 / 3.0);
  EXPECT_EQ(s.tenants[1].name, "b");
  EXPECT_EQ(s.tenants[1].jobs, 2);
  EXPECT_DOUBLE_EQ(s.tenants[1].gpu_hours, 300.0 / 3600.0);
  EXPECT_DOUBLE_EQ(s.tenants[1].mean_wait_s, 0.0);
  EXPECT_EQ(s.tenants[2].name, "c");
  EXPECT_EQ(s.tenants[2].jobs, 0);
  EXPECT_DOUBLE_EQ(s.tenants[2].gpu_hours, 0.0);
  // Per tenant quantiles: a's waits {10, 30, 600}, JCTs {110, 230}; b's wait {0}, no JCT.
  EXPECT_DOUBLE_EQ(s.tenants[0].wait.median, 30.0);
  EXPECT_DOUBLE_EQ(s.tenants[0].wait.p99, 600.0);
  EXPECT_DOUBLE_EQ(s.tenants[0].jct.mean, 170.0);
  EXPECT_DOUBLE_EQ(s.tenants[0].jct.p95, 230.0);
  EXPECT_EQ(s.tenants[1].jct.n, 0);
  // Per kind: every job here is of kind 0 (train): the overall figures; the other kinds are empty.
  ASSERT_EQ(s.kinds.size(), 4u);
  EXPECT_EQ(s.kinds[0].name, "train");
  EXPECT_EQ(s.kinds[0].jobs, 5);
  EXPECT_DOUBLE_EQ(s.kinds[0].wait.mean, 160.0);
  EXPECT_DOUBLE_EQ(s.kinds[0].jct.p95, 230.0);
  EXPECT_EQ(s.kinds[1].name, "inference");
  EXPECT_EQ(s.kinds[1].jobs, 0);
}

// Cost: pool 0 (4 GPUs) at 2.00 per GPU-hour, pool 1 (4 GPUs) unpriced. Jobs 0, 2 and 4 ran on
// pool 0 (400 + 300 + 100 GPU-s), job 1 on pool 1. Fragmentation from three samples.
TEST(Summary, CostAndFragmentationByHand) {
  hr::RunResult r = five_jobs();
  r.pools = {{"a", "A100", 1, 4, 2.0}, {"h", "H100", 1, 4, 0}};
  r.currency = "EUR";
  r.jobs[0].pool = r.jobs[2].pool = r.jobs[4].pool = 0;
  r.jobs[1].pool = 1;
  auto& ts = r.timeseries;
  ts.time = {0, 500 * kS, 1000 * kS};
  ts.pool_free_gpus = {2, 4, 4, 0, 1, 1};  // [3 samples x 2 pools]
  ts.pool_used_gpus = {2, 0, 0, 4, 3, 3};
  ts.pool_frag_gpus = {2, 0, 1, 0, 1, 1};
  ts.tenant_pending_gpus = {1, 0, 0, 0, 0, 0, 0, 8, 0};  // jobs wait in samples 0 and 2
  r.lost_gpu_ms = 150 * kS;                              // GPU-ms thrown away by preemption
  r.failure_lost_gpu_ms = 50 * kS;                       // and by failures
  const hr::Summary s = hr::summarize(r);
  ASSERT_TRUE(s.priced);
  EXPECT_EQ(s.currency, "EUR");
  EXPECT_DOUBLE_EQ(s.cost, 4 * 2.0 * 1000.0 / 3600.0);  // every priced GPU for the whole run
  EXPECT_DOUBLE_EQ(s.cost_used, 800 * 2.0 / 3600.0);    // GPU-s held on pool 0
  EXPECT_DOUBLE_EQ(s.cost_per_used_gpu_hour, 10.0);
  // Busy: (1200 GPU-s allocated - 200 lost) / (8 GPUs x 1000 s).
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 0.15);
  EXPECT_DOUBLE_EQ(s.gpu_busy_utilization, 0.125);
  // (2 + 0 + 1 + 1) fragmented of (2 + 4 + 1 + 1) free in the samples with waiting jobs.
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.5);
  EXPECT_DOUBLE_EQ(s.fragmented_gpus_mean, 5.0 / 3.0);
  std::ostringstream out;
  hr::print_summary(out, s);
  EXPECT_NE(out.str().find("fragmentation 50.0% of free GPUs while jobs waited"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("cost 2.22 EUR"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("per GPU-hour held 10.00 EUR"), std::string::npos) << out.str();
  // issue #21: units and plain words; lost work without a preemption is said to come from the policy's kills.
  EXPECT_EQ(s.preemptions, 0);
  EXPECT_NE(out.str().find("GPU utilization 15.0%, useful work 12.5% (the rest was lost to preemption, policy kills "
                           "and failures)"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("lost to preemption and policy kills 0.0 GPU-h (none preempted: jobs the policy ended, "
                           "e.g. TimeLimit)"),
            std::string::npos)
      << out.str();

  // Unpriced: no cost line, and no fragmentation column (an older file) reads as 0.
  r.pools[0].gpu_hour_price = 0;
  ts.pool_frag_gpus.clear();
  const hr::Summary u = hr::summarize(r);
  EXPECT_FALSE(u.priced);
  EXPECT_EQ(u.cost, 0.0);
  EXPECT_EQ(u.fragmentation, 0.0);
  std::ostringstream out2;
  hr::print_summary(out2, u);
  EXPECT_EQ(out2.str().find("\ncost "), std::string::npos) << out2.str();
}

TEST(Summary, NearestRankUsesExactCeiling) {
  hr::RunResult r;
  r.tenants = {"t"};
  for (int i = 1; i <= 20; ++i) {
    hr::JobRecord j;
    j.submit = 0;
    j.start = i * kS;
    j.end = j.start + kS;
    j.state = st(hm::JobState::Completed);
    r.jobs.push_back(j);
  }
  const hr::Summary s = hr::summarize(r);
  EXPECT_DOUBLE_EQ(s.wait.median, 10.0);  // ceil(0.5 * 20) = 10th value
  EXPECT_DOUBLE_EQ(s.wait.p95, 19.0);     // ceil(0.95 * 20) = 19th value, not the 20th
  EXPECT_DOUBLE_EQ(s.wait.max, 20.0);
  EXPECT_DOUBLE_EQ(s.wait.mean, 10.5);
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 0.0);  // no GPUs in the cluster: defined as 0
}

TEST(Summary, TenantsTieOnGpuHoursByName) {
  hr::RunResult r;
  r.tenants = {"zeta", "alpha", "mid"};
  const hr::Summary s = hr::summarize(r);
  ASSERT_EQ(s.tenants.size(), 3u);
  EXPECT_EQ(s.tenants[0].name, "alpha");
  EXPECT_EQ(s.tenants[1].name, "mid");
  EXPECT_EQ(s.tenants[2].name, "zeta");
}

TEST(Summary, PrintsCompactTable) {
  const hr::Summary s = hr::summarize(five_jobs());
  std::ostringstream out;
  hr::print_summary(out, s, 2);
  const std::string text = out.str();
  for (const char* piece :
       {"five", "fifo", "completed", "failed", "rejected", "unfinished", "wait", "jct", "15.0%", "GPU-hours",
        "... and 1 more", "fingerprint 00000000deadbeef", "2m 40s", "10m 00s", "16m 40s"}) {
    EXPECT_NE(text.find(piece), std::string::npos) << "missing '" << piece << "' in\n" << text;
  }
  EXPECT_EQ(text.find("\n  pending"), std::string::npos) << text;  // the zero state row is not shown
  EXPECT_EQ(text.find("\nc "), std::string::npos) << text;         // third tenant is cut
}

TEST_F(ResultsTest, JsonSummaryIsValidAndComplete) {
  hr::RunResult r = five_jobs();
  r.scenario_name = "quote\" back\\slash\nnew\tline \x01";
  r.tenants[2] = "bad \xff utf8 " + kUnicodeTenant;
  std::ostringstream out;
  hr::print_summary_json(out, hr::summarize(r));
  const std::string json = out.str();
  EXPECT_NE(json.find(R"("scenario": "quote\" back\\slash\nnew\tline \u0001")"), std::string::npos) << json;
  EXPECT_NE(json.find("\"bad \xEF\xBF\xBD utf8 " + kUnicodeTenant + "\""), std::string::npos) << json;
  EXPECT_NE(json.find(R"("gpu_utilization": 0.15)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("completed": 2)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("wait_s": {"mean": 160, "median": 10, "p95": 600, "p99": 600, "max": 600)"), std::string::npos)
      << json;
  EXPECT_EQ(json.find(": nan"), std::string::npos);
  EXPECT_EQ(json.find(": inf"), std::string::npos);

  const std::string python = python_with("json");
  if (python.empty()) GTEST_SKIP() << "python3 not available to parse the JSON";
  const std::string file = path("summary.json");
  std::ofstream(file) << json;
  EXPECT_EQ(run_python(python, path("check.py"),
                       "import sys, json\n"
                       "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
                       "assert d['jobs'] == 5 and d['seed'] == 7 and d['policy'] == 'fifo'\n"
                       "assert d['states'] == {'pending': 0, 'running': 0, 'completed': 2, 'failed': 1,\n"
                       "                       'cancelled': 0, 'rejected': 1, 'unfinished': 1}, d['states']\n"
                       "assert d['jct_s']['median'] == 110 and d['makespan_s'] == 1000\n"
                       "assert [t['name'] for t in d['tenants']][:2] == ['a', 'b']\n"
                       "assert len(d['tenants']) == 3\n"
                       "assert abs(d['tenants'][0]['mean_wait_s'] - 640 / 3) < 1e-9\n",
                       file),
            0);
}

TEST(Summary, EmptyResultGivesZerosAndValidJson) {
  hr::RunResult r;
  const hr::Summary s = hr::summarize(r);
  EXPECT_EQ(s.jobs, 0);
  EXPECT_EQ(s.wait.n, 0);
  EXPECT_DOUBLE_EQ(s.wait.mean, 0.0);
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 0.0);
  std::ostringstream json, text;
  hr::print_summary_json(json, s);
  hr::print_summary(text, s);
  EXPECT_NE(json.str().find("\"tenants\": []"), std::string::npos) << json.str();
  EXPECT_EQ(json.str().find(": nan"), std::string::npos);
  EXPECT_NE(text.str().find("fingerprint"), std::string::npos);
}

// Four jobs over 100 s: one waits 10 s, one never starts (submitted at 0, still pending at the
// end), one is rejected by the policy, one starts at once. Its reasons are in the audit log.
hr::RunResult four_jobs_one_never_started() {
  hr::RunResult r;
  r.scenario_name = "four";
  r.policy = "kubernetes";
  r.sim_start = 0;
  r.sim_end = 100 * kS;
  r.total_gpus = 4;
  r.tenants = {"a", "b"};
  r.reasons = {"", "unschedulable: 0/1 nodes have 8 free GPUs", "never scheduled: no further event could start it",
               "too big: asks for more GPUs than the cluster has"};
  auto job = [](std::uint32_t tenant, Tick submit, Tick start, Tick end, hm::JobState s) {
    hr::JobRecord j;
    j.tenant = tenant;
    j.gpus = 1;
    j.submit = submit * kS;
    j.start = start < 0 ? -1 : start * kS;
    j.end = end < 0 ? -1 : end * kS;
    j.state = st(s);
    return j;
  };
  r.jobs = {
      job(0, 0, 10, 50, hm::JobState::Completed),   // wait 10
      job(1, 0, -1, -1, hm::JobState::Unfinished),  // never started: wait censored at 100
      job(1, 5, -1, 5, hm::JobState::Rejected),     // no wait
      job(0, 20, 20, 60, hm::JobState::Completed),  // wait 0
  };
  auto event = [](Tick t, hm::AuditKind kind, std::uint32_t job, std::int32_t detail, std::uint32_t reason) {
    hr::EventRecord e;
    e.time = t * kS;
    e.kind = static_cast<std::uint8_t>(kind);
    e.job = job;
    e.detail = detail;
    e.reason = reason;
    return e;
  };
  r.events = {
      event(0, hm::AuditKind::Waiting, 1, 1, 1),
      event(5, hm::AuditKind::Reject, 2, hm::kRejectByPolicy, 3),
      event(100, hm::AuditKind::Unfinished, 1, 0, 2),
  };
  return r;
}

TEST(Summary, NeverStartedJobsCountInTheWaitAsLowerBounds) {
  const hr::RunResult r = four_jobs_one_never_started();
  const hr::Summary s = hr::summarize(r);
  EXPECT_EQ(s.never_started, 1);
  // Waits {10, 100 (censored), 0}; the rejected job has none.
  EXPECT_EQ(s.wait.n, 3);
  EXPECT_DOUBLE_EQ(s.wait.mean, 110.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.wait.median, 10.0);
  EXPECT_DOUBLE_EQ(s.wait.max, 100.0);
  EXPECT_EQ(s.wait_started.n, 2);
  EXPECT_DOUBLE_EQ(s.wait_started.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.wait_started.max, 10.0);
  // Per tenant and kind the same way: b's only wait is the censored 100 s.
  ASSERT_EQ(s.tenants.size(), 2u);
  const hr::TenantSummary& b = s.tenants[0].name == "b" ? s.tenants[0] : s.tenants[1];
  EXPECT_EQ(b.never_started, 1);
  EXPECT_DOUBLE_EQ(b.mean_wait_s, 100.0);
  EXPECT_DOUBLE_EQ(b.max_wait_s, 100.0);
  EXPECT_EQ(b.wait_started.n, 0);
  EXPECT_EQ(s.kinds[0].never_started, 1);
  EXPECT_EQ(s.kinds[0].rejected, 1);
  EXPECT_DOUBLE_EQ(s.kinds[0].wait.mean, 110.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.kinds[0].wait_started.mean, 5.0);
  // 2 of 4 did not run; the two reasons tie at one job each, and the first by text wins.
  EXPECT_EQ(s.banner,
            "WARNING: 2 of 4 jobs (50.0%) never started (1) or were rejected by the policy (1); main reason: "
            "\"never scheduled: no further event could start it\" (1 job); their last pending reason: "
            "\"unschedulable: 0/1 nodes have 8 free GPUs\" (1 job)");

  std::ostringstream text;
  hr::print_summary(text, s);
  const std::string out = text.str();
  EXPECT_EQ(out.rfind(s.banner, 0), 0u) << out;  // the banner comes first
  EXPECT_NE(out.find("(incl. 1 never started: lower bounds)"), std::string::npos) << out;
  EXPECT_NE(out.find(">=37s"), std::string::npos) << out;  // the mean, 110/3 s
  EXPECT_NE(out.find(">=1m 40s"), std::string::npos) << out;
}

TEST(Summary, ANoteNamesJobsTheSystemEndedFailed) {
  hr::RunResult r = four_jobs_one_never_started();
  // Job 3 is killed at its time limit (a Finish event with a reason); a failure the trace records
  // (no reason) would not count.
  r.jobs[3].state = st(hm::JobState::Failed);
  r.reasons.push_back("timeout: TimeLimit reached");
  hr::EventRecord e;
  e.time = 60 * kS;
  e.kind = static_cast<std::uint8_t>(hm::AuditKind::Finish);
  e.job = 3;
  e.detail = static_cast<std::int32_t>(hm::JobState::Failed);
  e.reason = static_cast<std::uint32_t>(r.reasons.size() - 1);
  r.events.push_back(e);
  const hr::Summary s = hr::summarize(r);
  const std::string note =
      "NOTE: 1 of 4 jobs (25.0%) were ended Failed by the system; main reason: \"timeout: TimeLimit reached\" (1 job)";
  ASSERT_NE(s.banner.find('\n'), std::string::npos) << s.banner;
  EXPECT_EQ(s.banner.substr(s.banner.find('\n') + 1), note);
  r.events.back().reason = 0;  // no reason: as the trace says
  EXPECT_EQ(hr::summarize(r).banner.find("NOTE"), std::string::npos);
}

// A run the livelock guard stopped (Simulation::check_stall): its Unfinished events' reason, begun
// "stopped: ", is told with the jobs it left unfinished, started ones too; other Unfinished
// reasons (nothing could start them, the horizon) are not.
TEST(Summary, AWarningTellsARunTheLivelockGuardStopped) {
  hr::RunResult r = four_jobs_one_never_started();
  EXPECT_EQ(hr::summarize(r).banner.find("the run stopped"), std::string::npos);
  const std::string why = "stopped: a preemption livelock: no job ended in 30 days of simulated time";
  r.reasons.push_back(why);
  for (std::uint32_t j : {1u, 3u}) {
    r.jobs[j].state = st(hm::JobState::Unfinished);
    hr::EventRecord e;
    e.time = 100 * kS;
    e.kind = static_cast<std::uint8_t>(hm::AuditKind::Unfinished);
    e.job = j;
    e.reason = static_cast<std::uint32_t>(r.reasons.size() - 1);
    r.events.push_back(e);
  }
  std::erase_if(r.events, [](const hr::EventRecord& e) {
    return static_cast<hm::AuditKind>(e.kind) == hm::AuditKind::Unfinished && e.reason == 2;
  });
  const hr::Summary s = hr::summarize(r);
  const std::string note = "WARNING: the run " + why + "; 2 jobs left unfinished";
  ASSERT_NE(s.banner.rfind('\n'), std::string::npos) << s.banner;
  EXPECT_EQ(s.banner.substr(s.banner.rfind('\n') + 1), note);
  // The never-started warning names the stop without repeating its text.
  const std::string first = s.banner.substr(0, s.banner.find('\n'));
  EXPECT_NE(first.find("main reason: the run stopped itself (1 job; the last warning says why)"), std::string::npos)
      << first;
  EXPECT_EQ(first.find(why), std::string::npos) << first;
}

// Issue #32: a TimeLimit kill of a job the log shows running at most a minute past its limit is
// how its own system ended it too (SIGTERM, KillWait, SIGKILL): ended as recorded.
TEST(Summary, TimeLimitKillsTheLogAlsoShowsAreEndedAsRecorded) {
  hr::RunResult r = four_jobs_one_never_started();
  r.jobs[3].state = st(hm::JobState::Failed);
  r.jobs[3].walltime = 60 * kS;
  r.jobs[3].runtime = 65 * kS;
  r.reasons.push_back("timeout: TimeLimit reached");
  hr::EventRecord e;
  e.time = 80 * kS;
  e.kind = static_cast<std::uint8_t>(hm::AuditKind::Finish);
  e.job = 3;
  e.detail = static_cast<std::int32_t>(hm::JobState::Failed);
  e.reason = static_cast<std::uint32_t>(r.reasons.size() - 1);
  r.events.push_back(e);
  EXPECT_EQ(hr::summarize(r).ended_at_recorded_limit, 1);
  r.jobs[3].runtime = 120 * kS;  // exactly a minute past: still the kill's grace
  EXPECT_EQ(hr::summarize(r).ended_at_recorded_limit, 1);
  r.jobs[3].runtime = 121 * kS;  // the log shows it running on: the replay ended it early
  EXPECT_EQ(hr::summarize(r).ended_at_recorded_limit, 0);
  r.jobs[3].runtime = 65 * kS;
  r.events.back().reason = 0;  // no reason: a failure the trace records, not the system's kill
  EXPECT_EQ(hr::summarize(r).ended_at_recorded_limit, 0);
  r.events.back().reason = static_cast<std::uint32_t>(r.reasons.size() - 1);
  hr::EventRecord kill = e;  // killed by the failure drill at that instant: the drill's, not a limit
  kill.kind = static_cast<std::uint8_t>(hm::AuditKind::Kill);
  r.events.insert(r.events.end() - 1, kill);
  EXPECT_EQ(hr::summarize(r).ended_at_recorded_limit, 0);
}

// One job size waited far longer than the rest (LANL CM-5's 512-processor gangs under volcano):
// the banner notes it with the reason those jobs waited under most. 40 one-GPU jobs start at
// once; 20 eight-GPU jobs wait 2 days: 1 day under "gate" then 1 day under "nodes" for 19 of
// them, the last 1 day under "gate" and 1 day with no reason yet (its Waiting event comes late).
TEST(Summary, BannerNotesTheJobSizeThatWaitedFarLongerThanTheRest) {
  constexpr Tick kDay = 86400 * kS;
  hr::RunResult r;
  r.scenario_name = "wide";
  r.policy = "volcano";
  r.sim_end = 10 * kDay;
  r.total_gpus = 8;
  r.tenants = {"a"};
  r.reasons = {"", "gate: overcommit", "nodes: no node set holds the group"};
  auto event = [](Tick t, hm::AuditKind kind, std::uint32_t job, std::uint32_t reason) {
    hr::EventRecord e;
    e.time = t;
    e.kind = static_cast<std::uint8_t>(kind);
    e.job = job;
    e.reason = reason;
    return e;
  };
  for (std::uint32_t i = 0; i < 60; ++i) {
    hr::JobRecord j;
    j.gpus = i < 40 ? 1 : 8;
    j.submit = 0;
    j.start = i < 40 ? 0 : 2 * kDay;
    j.end = j.start + kS;
    j.state = st(hm::JobState::Completed);
    r.jobs.push_back(j);
  }
  for (std::uint32_t i = 40; i < 60; ++i) {
    if (i < 59) {
      r.events.push_back(event(0, hm::AuditKind::Waiting, i, 1));
      r.events.push_back(event(kDay, hm::AuditKind::Waiting, i, 2));
    } else {
      r.events.push_back(event(kDay, hm::AuditKind::Waiting, i, 1));
    }
    r.events.push_back(event(2 * kDay, hm::AuditKind::Start, i, 0));
  }
  // 19 days under the gate before the 19 moves, 1 more for the last job: 20 of 39 days (51%). A
  // later wait (the job requeued after its start, then waiting under "nodes") does not count.
  r.events.push_back(event(3 * kDay, hm::AuditKind::Waiting, 59, 2));
  r.events.push_back(event(9 * kDay, hm::AuditKind::Start, 59, 0));
  EXPECT_EQ(hr::summarize(r).banner,
            "NOTE: the 20 started jobs of 8 GPUs waited 2d 00h on average, against 0s for the other started jobs; most "
            "of their waiting (51%) under \"gate: overcommit\"");
  // A wait of a day is not starvation (the bar is over kStarvationWait)...
  for (std::uint32_t i = 40; i < 60; ++i) r.jobs[i].start = kDay;
  EXPECT_EQ(hr::summarize(r).banner, "");
  // ... nor is a long wait that the other jobs share (under 5 times theirs).
  for (std::uint32_t i = 0; i < 60; ++i) r.jobs[i].start = (i < 40 ? 1 : 3) * kDay;
  EXPECT_EQ(hr::summarize(r).banner, "");
  // Nor a size with fewer than 20 started jobs (one of the 8-GPU jobs becomes a 1-GPU job that
  // starts at once).
  for (std::uint32_t i = 0; i < 60; ++i) r.jobs[i].start = i < 41 ? 0 : 2 * kDay;
  r.jobs[40].gpus = 1;
  EXPECT_EQ(hr::summarize(r).banner, "");
  r.jobs[40].gpus = 8;  // with it back (20 jobs, one of them not waiting): noted again
  EXPECT_NE(hr::summarize(r).banner.find("NOTE: the 20 started jobs of 8 GPUs waited 1d 21h on average"),
            std::string::npos);
}

TEST(Summary, BannerNamesTheMainReasonAndLeavesPermissionDenialsOut) {
  hr::RunResult r = four_jobs_one_never_started();
  // The rejection becomes a permission denial: not in the banner's count.
  r.events[1].detail = hm::kRejectPermission;
  r.tenant_denied = {0, 1};
  hr::Summary s = hr::summarize(r);
  EXPECT_EQ(s.denied, 1);
  EXPECT_EQ(s.kinds[0].rejected, 0);  // by kind, the denial is known from its Reject event
  EXPECT_EQ(s.banner,
            "WARNING: 1 of 4 jobs (25.0%) never started; main reason: \"never scheduled: no further event could "
            "start it\" (1 job); their last pending reason: \"unschedulable: 0/1 nodes have 8 free GPUs\" (1 job)");
  // Without a reason on the Unfinished event, the last pending reason names it.
  r.events[2].reason = 0;
  s = hr::summarize(r);
  EXPECT_NE(s.banner.find("main reason: \"unschedulable: 0/1 nodes have 8 free GPUs\""), std::string::npos) << s.banner;
  // Only the denial left: no banner, and the waits are exact again.
  r.jobs[1].start = 30 * kS;
  r.jobs[1].state = st(hm::JobState::Completed);
  r.jobs[1].end = 40 * kS;
  s = hr::summarize(r);
  EXPECT_EQ(s.never_started, 0);
  EXPECT_EQ(s.banner, "");
  EXPECT_DOUBLE_EQ(s.wait.mean, 40.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.wait_started.mean, 40.0 / 3.0);
  std::ostringstream text;
  hr::print_summary(text, s);
  EXPECT_EQ(text.str().find(">="), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("WARNING"), std::string::npos) << text.str();
}

// Under 1 % of the jobs not run there is no warning, but jobs the policy rejected still get a
// note with the main reason (500 tenant queues derived, a 501st tenant's 102 jobs rejected by KAI
// and Volcano, showed only as a `rejected` row that kueue's column did not have). A job that
// never started is not counted there.
TEST(Summary, BannerNotesRejectionsBelowTheWarningsShare) {
  hr::RunResult r = four_jobs_one_never_started();
  const hr::JobRecord done = r.jobs[0];
  for (int i = 0; i < 400; ++i) r.jobs.push_back(done);  // 404 jobs: 2 not run are 0.5 %
  EXPECT_EQ(hr::summarize(r).banner,
            "NOTE: 1 of 404 jobs (0.2%) were rejected by the policy; main reason: \"too big: asks for more GPUs than "
            "the cluster has\" (1 job)");
  for (int i = 0; i < 2000; ++i) r.jobs.push_back(done);  // 1 of 2,404: under 0.1 %
  EXPECT_EQ(hr::summarize(r).banner.substr(0, 42), "NOTE: 1 of 2,404 jobs (under 0.1%) were re");
  r.events[1].detail = hm::kRejectPermission;  // a permission denial is not the policy's rejection
  r.tenant_denied = {0, 1};
  EXPECT_EQ(hr::summarize(r).banner, "");
}

TEST_F(ResultsTest, JsonSummaryShowsNeverStartedJobs) {
  std::ostringstream out;
  hr::print_summary_json(out, hr::summarize(four_jobs_one_never_started()));
  const std::string json = out.str();
  EXPECT_NE(json.find(R"("never_started": 1,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("wait_lower_bound": true,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("warning": "WARNING: 2 of 4 jobs (50.0%))"), std::string::npos) << json;
  const std::string python = python_with("json");
  if (python.empty()) GTEST_SKIP() << "python3 not available to parse the JSON";
  const std::string file = path("never_started.json");
  std::ofstream(file) << json;
  EXPECT_EQ(run_python(python, path("check.py"),
                       "import sys, json\n"
                       "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
                       "assert d['never_started'] == 1 and d['wait_lower_bound'] is True\n"
                       "assert abs(d['wait_s']['mean'] - 110 / 3) < 1e-9 and d['wait_s']['max'] == 100\n"
                       "assert d['wait_s']['n'] == 3 and d['wait_started_s']['n'] == 2\n"
                       "assert d['wait_started_s']['mean'] == 5\n"
                       "assert 'never scheduled' in d['warning'], d['warning']\n"
                       "b = [t for t in d['tenants'] if t['name'] == 'b'][0]\n"
                       "assert b['never_started'] == 1 and b['mean_wait_s'] == 100\n",
                       file),
            0);
  // Nothing left out: no warning, and the flag is false.
  std::ostringstream plain;
  hr::print_summary_json(plain, hr::summarize(hr::RunResult{}));
  EXPECT_NE(plain.str().find(R"("warning": "",)"), std::string::npos) << plain.str();
  EXPECT_NE(plain.str().find(R"("wait_lower_bound": false,)"), std::string::npos) << plain.str();
}

// --- recorder --------------------------------------------------------------------------------

struct RecorderFixture {
  hm::Workload workload;
  hm::ClusterSpec cluster;
  RecorderFixture() {
    auto add = [&](std::int64_t id, const char* tenant, const char* queue, int gpus, int milli, Tick submit) {
      hm::Job j;
      j.trace_id = id;
      j.tenant = workload.tenants.intern(tenant);
      j.queue = workload.queues.intern(queue);
      j.kind = hm::JobKind::Train;
      j.gpus = gpus;
      j.gpu_milli = milli;
      j.submit = submit;
      j.runtime = 100 * kS;
      j.walltime = 200 * kS;
      j.trace_start = submit + 5;
      workload.jobs.push_back(j);
    };
    add(101, "research", "default", 12, 0, 0);
    add(102, kUnicodeTenant.c_str(), "default", 1, 0, 10 * kS);
    add(103, "research", "long", 1, 250, 20 * kS);
    cluster.pools.push_back({"small", 2, 4, "A100", 0, 0});  // nodes 0-1
    cluster.pools.push_back({"big", 3, 8, "H100", 0, 0});    // nodes 2-4
  }
};

// Issue #36 item 1: the failure drill's "failed past their retry limit" counts only the jobs a
// node failure killed with no retry left (the engine ends them Failed at the instant of the kill);
// a job the system itself ends Failed (a Slurm TimeLimit kill) is counted apart.
TEST(Recorder, RetryLimitFailuresAndTimeLimitKillsAreCountedApart) {
  RecorderFixture fx;
  hr::Recorder rec(fx.workload, fx.cluster);
  using K = hm::AuditKind;
  const auto failed = st(hm::JobState::Failed);
  for (hm::JobIndex j = 0; j < 3; ++j) {
    rec.on_event(0, K::Submit, j, 0, "");
    rec.on_event(0, K::Start, j, 1, "");
    rec.on_start(0, j, {{2, 1, 0, 0}});
  }
  // Job 0: killed at 10 s with a retry left, then killed again at 50 s with none.
  rec.on_lost_work(10 * kS, K::Kill, 0, 2, "node 2 failed", 10);
  rec.on_start(20 * kS, 0, {{3, 1, 0, 0}});
  rec.on_lost_work(50 * kS, K::Kill, 0, 3, "node 3 failed", 30);
  rec.on_event(50 * kS, K::Finish, 0, failed, "node 3 failed; retry limit (1) reached");
  rec.on_end(50 * kS, 0, hm::JobState::Failed);
  // Job 1: killed by a failure and retried, later ended by its time limit.
  rec.on_lost_work(15 * kS, K::Kill, 1, 2, "node 2 failed", 10);
  rec.on_start(30 * kS, 1, {{4, 1, 0, 0}});
  rec.on_event(90 * kS, K::Finish, 1, failed, "TimeLimit: ran past its time limit of 1 min");
  rec.on_end(90 * kS, 1, hm::JobState::Failed);
  // Job 2: a TimeLimit kill in a run without any failure.
  rec.on_event(60 * kS, K::Finish, 2, failed, "TimeLimit: ran past its time limit of 1 min");
  rec.on_end(60 * kS, 2, hm::JobState::Failed);
  const hr::RunResult& r = rec.result();
  EXPECT_EQ(r.jobs_killed, 3);
  EXPECT_EQ(r.jobs_failed_by_failure, 1);
  EXPECT_EQ(r.jobs_failed_by_policy, 2);
}

TEST(Recorder, BuildsRecordsFromObserverCalls) {
  RecorderFixture fx;
  hr::Recorder rec(fx.workload, fx.cluster);
  const hr::RunResult& r0 = rec.result();
  ASSERT_EQ(r0.jobs.size(), 3u);
  EXPECT_EQ(r0.jobs[2].trace_id, 103);
  EXPECT_EQ(r0.jobs[2].gpu_milli, 250);
  EXPECT_EQ(r0.jobs[2].queue, 1u);
  EXPECT_EQ(r0.jobs[2].walltime, 200 * kS);
  EXPECT_EQ(r0.jobs[2].trace_start, 20 * kS + 5);
  EXPECT_EQ(r0.jobs[0].state, st(hm::JobState::Pending));
  EXPECT_EQ(r0.jobs[0].start, -1);
  EXPECT_EQ(r0.tenants, (std::vector<std::string>{"research", kUnicodeTenant}));
  EXPECT_EQ(r0.queues, (std::vector<std::string>{"default", "long"}));
  EXPECT_EQ(r0.reasons, std::vector<std::string>{""});
  ASSERT_EQ(r0.pools.size(), 2u);
  EXPECT_EQ(r0.pools[1].name, "big");
  EXPECT_EQ(r0.pools[1].gpu_type, "H100");
  EXPECT_EQ(r0.pools[1].nodes, 3);
  EXPECT_EQ(r0.pools[1].gpus_per_node, 8);

  using K = hm::AuditKind;
  rec.on_event(0, K::Submit, 0, 0, "");
  rec.on_event(0, K::Start, 0, 12, "");
  rec.on_start(0, 0, {{4, 4, 0, 0}, {1, 4, 0, 0}, {4, 4, 0, 0}});  // node 1 (pool 0) and 4, twice
  rec.on_event(10 * kS, K::Reject, 1, 0, "no access to queue default");
  rec.on_end(10 * kS, 1, hm::JobState::Rejected);
  rec.on_event(30 * kS, K::Preempt, 0, 2, "preempted by higher priority");
  rec.on_start(30 * kS, 2, {{3, 1, 0, 0}});
  rec.on_event(40 * kS, K::Requeue, 0, 0, "");
  rec.on_start(50 * kS, 0, {{2, 8, 0, 0}, {3, 4, 0, 0}});  // restart elsewhere
  rec.on_event(60 * kS, K::Preempt, 0, -1, "preempted by higher priority");
  rec.on_start(70 * kS, 0, {{3, 8, 0, 0}, {2, 4, 0, 0}});
  rec.on_event(170 * kS, K::Finish, 0, st(hm::JobState::Completed), "");
  rec.on_end(170 * kS, 0, hm::JobState::Completed);
  rec.on_event(200 * kS, K::Unfinished, 2, 0, "horizon");
  rec.on_end(200 * kS, 2, hm::JobState::Unfinished);

  const std::array<std::int32_t, 2> pool_used = {4, 12}, pool_free = {4, 12};
  const std::array<std::int32_t, 2> t_used = {16, 0}, t_jobs = {0, 1}, t_gpus = {0, 1};
  hm::Sample sample;
  sample.time = 60 * kS;
  sample.pool_used_gpus = pool_used;
  sample.pool_free_gpus = pool_free;
  sample.tenant_used_gpus = t_used;
  sample.tenant_pending_jobs = t_jobs;
  sample.tenant_pending_gpus = t_gpus;
  sample.running_jobs = 2;
  sample.pending_jobs = 1;
  rec.on_sample(sample);
  sample.time = 120 * kS;
  sample.running_jobs = 1;
  rec.on_sample(sample);

  const hr::RunResult& r = rec.result();
  const hr::JobRecord& a = r.jobs[0];
  EXPECT_EQ(a.start, 0);  // first start is kept
  EXPECT_EQ(a.end, 170 * kS);
  EXPECT_EQ(a.state, st(hm::JobState::Completed));
  EXPECT_EQ(a.preemptions, 2);
  EXPECT_EQ(a.nodes_used, 2);  // of the last placement
  EXPECT_EQ(a.first_node, 2);
  EXPECT_EQ(a.pool, 1);
  const hr::JobRecord& b = r.jobs[1];
  EXPECT_EQ(b.start, -1);
  EXPECT_EQ(b.end, 10 * kS);
  EXPECT_EQ(b.state, st(hm::JobState::Rejected));
  EXPECT_EQ(b.first_node, -1);
  EXPECT_EQ(b.pool, -1);
  const hr::JobRecord& c = r.jobs[2];
  EXPECT_EQ(c.start, 30 * kS);
  EXPECT_EQ(c.end, -1);
  EXPECT_EQ(c.state, st(hm::JobState::Unfinished));
  EXPECT_EQ(c.nodes_used, 1);
  EXPECT_EQ(c.first_node, 3);
  EXPECT_EQ(c.pool, 1);

  EXPECT_EQ(r.reasons,
            (std::vector<std::string>{"", "no access to queue default", "preempted by higher priority", "horizon"}));
  ASSERT_EQ(r.events.size(), 8u);
  EXPECT_TRUE(same_event(r.events[2], {10 * kS, 3, 1, 0, 1}));
  EXPECT_TRUE(same_event(r.events[3], {30 * kS, 4, 0, 2, 2}));
  EXPECT_TRUE(same_event(r.events[5], {60 * kS, 4, 0, -1, 2}));
  EXPECT_TRUE(same_event(r.events[7], {200 * kS, 6, 2, 0, 3}));

  const hr::TimeSeries& ts = r.timeseries;
  EXPECT_EQ(ts.time, (std::vector<Tick>{60 * kS, 120 * kS}));
  EXPECT_EQ(ts.running_jobs, (std::vector<std::int32_t>{2, 1}));
  EXPECT_EQ(ts.pending_jobs, (std::vector<std::int32_t>{1, 1}));
  EXPECT_EQ(ts.pool_used_gpus, (std::vector<std::int32_t>{4, 12, 4, 12}));
  EXPECT_EQ(ts.tenant_used_gpus, (std::vector<std::int32_t>{16, 0, 16, 0}));
  EXPECT_EQ(ts.tenant_pending_gpus, (std::vector<std::int32_t>{0, 1, 0, 1}));

  // node 1 belongs to the first pool
  rec.on_start(80 * kS, 1, {{1, 1, 0, 0}});
  EXPECT_EQ(rec.result().jobs[1].pool, 0);
}

TEST(Recorder, WithoutEventsStillCountsPreemptions) {
  RecorderFixture fx;
  hr::Recorder rec(fx.workload, fx.cluster, false);
  rec.on_event(5, hm::AuditKind::Preempt, 0, 1, "victim");
  rec.on_event(6, hm::AuditKind::Preempt, 0, 1, "victim");
  EXPECT_TRUE(rec.result().events.empty());
  EXPECT_EQ(rec.result().reasons, std::vector<std::string>{""});
  EXPECT_EQ(rec.result().jobs[0].preemptions, 2);
}

TEST_F(ResultsTest, RecorderOutputRoundTrips) {
  RecorderFixture fx;
  hr::Recorder rec(fx.workload, fx.cluster);
  rec.on_event(0, hm::AuditKind::Submit, 0, 0, "");
  rec.on_start(0, 0, {{2, 8, 0, 0}, {3, 4, 0, 0}});
  rec.on_event(100 * kS, hm::AuditKind::Finish, 0, 2, "done");
  rec.on_end(100 * kS, 0, hm::JobState::Completed);
  hr::RunResult r = std::move(rec.result());
  r.sim_end = 100 * kS;
  hr::write_hdf5(r, path("rec.h5"));
  expect_same(r, hr::read_hdf5(path("rec.h5")));
}

TEST(Summary, UtilizationCountsOnlyTheRunsOfAPreemptedJob) {
  // One 1-GPU job ran [0, 100 s) and, after a preemption, [200 s, 300 s): the GPU was held 200 of
  // the 300 s, not from first start to end.
  hr::RunResult r;
  r.total_gpus = 1;
  r.sim_start = 0;
  r.sim_end = 300000;
  hr::JobRecord j;
  j.gpus = 1;
  j.start = 0;
  j.end = 300000;
  j.runtime = 200000;
  j.state = static_cast<std::uint8_t>(hm::JobState::Completed);
  j.preemptions = 1;
  r.jobs.push_back(j);
  r.placements.push_back(hr::PlacementRecord{0, 0, 100000, 0, 1});
  r.placements.push_back(hr::PlacementRecord{0, 200000, 300000, 0, 1});
  EXPECT_DOUBLE_EQ(hr::summarize(r).gpu_utilization, 200.0 / 300.0);
  r.tenants = {"t"};
  EXPECT_DOUBLE_EQ(hr::compute_fairness(r).tenants.at(0).share, 200.0 / 300.0) << "fairness counts the runs too";
  r.placements.clear();  // a file without /placements: one run from first start to end
  EXPECT_DOUBLE_EQ(hr::summarize(r).gpu_utilization, 1.0);
}

TEST(Summary, AFractionalJobCountsWhatItsPlacementHolds) {
  // Two jobs asking for half a GPU each on a 2-GPU cluster over 100 s. Job 0 got a share of
  // device 0 (gpu_milli 500); job 1 was given a whole GPU by a policy without sharing: the cluster
  // was 0.5 + 1 of 2 GPUs busy. Without /placements both count what they ask: 0.5 + 0.5.
  hr::RunResult r;
  r.total_gpus = 2;
  r.sim_start = 0;
  r.sim_end = 100000;
  r.tenants = {"a", "b"};
  for (std::uint32_t t = 0; t < 2; ++t) {
    hr::JobRecord j;
    j.tenant = t;
    j.gpus = 1;
    j.gpu_milli = 500;
    j.start = 0;
    j.end = 100000;
    j.runtime = 100000;
    j.state = static_cast<std::uint8_t>(hm::JobState::Completed);
    r.jobs.push_back(j);
  }
  hr::PlacementRecord share{0, 0, 100000, 0, 0};
  share.gpu_milli = 500;
  share.device = 0;
  r.placements.push_back(share);
  r.placements.push_back(hr::PlacementRecord{1, 0, 100000, 1, 1});
  EXPECT_DOUBLE_EQ(hr::summarize(r).gpu_utilization, 1.5 / 2.0);
  const hr::Fairness f = hr::compute_fairness(r);
  EXPECT_DOUBLE_EQ(f.tenants.at(0).share, 0.5 / 2.0);
  EXPECT_DOUBLE_EQ(f.tenants.at(1).share, 1.0 / 2.0);
  r.placements.clear();
  EXPECT_DOUBLE_EQ(hr::summarize(r).gpu_utilization, 1.0 / 2.0);
}

}  // namespace

// results/format.hpp: the one way headroom writes durations, counts, costs and dates.
TEST(Format, DurationHasOneShapeAtEveryScale) {
  EXPECT_EQ(hr::duration(0), "0s");
  EXPECT_EQ(hr::duration(4.24), "4.2s");
  EXPECT_EQ(hr::duration(42.4), "42s");
  EXPECT_EQ(hr::duration(12 * 60 + 3), "12m 03s");
  EXPECT_EQ(hr::duration(3 * 3600 + 7 * 60 + 20), "3h 07m");
  EXPECT_EQ(hr::duration(2 * 86400 + 5 * 3600 + 59), "2d 05h");
  EXPECT_EQ(hr::duration(-90), "-1m 30s");
  EXPECT_EQ(hr::duration(std::numeric_limits<double>::infinity()), "never");  // a recovery never reached
  EXPECT_EQ(hr::duration(-std::numeric_limits<double>::infinity()), "-");
  EXPECT_EQ(hr::duration(std::numeric_limits<double>::quiet_NaN()), "-");  // nothing to show
  EXPECT_EQ(hr::with_unit(std::numeric_limits<double>::infinity(), "s"), "never");
  EXPECT_EQ(hr::with_unit(std::numeric_limits<double>::quiet_NaN(), "s"), "-");
  EXPECT_EQ(hr::with_unit(std::numeric_limits<double>::infinity(), "count"), "-");
  EXPECT_EQ(hr::short_duration(25755), hr::duration(25755));  // 7h 09m either way
  EXPECT_EQ(hr::duration(25755), "7h 09m");
}

TEST(Format, NumbersHaveThousandsSeparatorsAndUnits) {
  EXPECT_EQ(hr::thousands(0), "0");
  EXPECT_EQ(hr::thousands(999), "999");
  EXPECT_EQ(hr::thousands(1000), "1,000");
  EXPECT_EQ(hr::thousands(-1234567), "-1,234,567");
  EXPECT_EQ(hr::grouped(1686355.31, 1), "1,686,355.3");  // issue #21's "1686355.3"
  EXPECT_EQ(hr::grouped(-0.04, 1), "0.0");
  EXPECT_EQ(hr::grouped(-1234.5, 0), "-1,234");  // printf rounds half to even
  EXPECT_EQ(hr::percent(0.6471), "64.7%");
  EXPECT_EQ(hr::money(3737088.0, "EUR"), "3,737,088 EUR");  // issue #21's "cost 3737088.00"
  EXPECT_EQ(hr::money(2.5, "USD"), "2.50 USD");
  EXPECT_EQ(hr::money(1234.4, ""), "1,234");
  EXPECT_EQ(hr::with_unit(251453.04, "GPU-h"), "251,453.0 GPU-h");
  EXPECT_EQ(hr::with_unit(8192, "GPUs"), "8,192.0 GPUs");
  EXPECT_EQ(hr::with_unit(13607, "count"), "13,607");
  EXPECT_EQ(hr::with_unit(0.191, "fraction"), "19.1%");
  EXPECT_EQ(hr::with_unit(3600, "s"), "1h 00m");
  EXPECT_EQ(hr::with_unit(3737088.0, "cost:EUR"), "3,737,088 EUR");
  EXPECT_EQ(hr::with_unit(0.87654, "index"), "0.877");
  EXPECT_EQ(hr::with_unit(std::nan(""), "count"), "-");
}

TEST(Format, CalendarTimeIsUtc) {
  EXPECT_EQ(hr::calendar(0), "1970-01-01 00:00");
  EXPECT_EQ(hr::calendar(1714557300000LL), "2024-05-01 09:55");  // sacct test trace's first submit
  EXPECT_EQ(hr::calendar(1585699199000LL, true), "2020-03-31 23:59:59");
  EXPECT_EQ(hr::calendar(951782400000LL), "2000-02-29 00:00");  // a leap day
  EXPECT_EQ(hr::calendar(-1000, true), "1969-12-31 23:59:59");
}

// issue #21: the run summary states the replayed span in calendar time, UTC, when the trace has
// a start date, and says nothing of dates when it has none.
TEST(Format, SummaryStatesTheSpanInUtc) {
  hr::RunResult r;
  r.scenario_name = "dated";
  r.policy = "fifo";
  r.sim_start = 5 * 60 * 1000;                 // the first submit, 5 minutes after the trace's start
  r.sim_end = r.sim_start + 26 * 3600 * 1000;  // 26 hours later
  r.unix_start = 1272639895;                   // RICC's UnixStartTime: 2010-04-30 15:04:55 UTC
  hr::Summary s = hr::summarize(r);
  EXPECT_EQ(s.first_submit_unix_ms, 1272639895000LL + 300000);
  std::ostringstream out;
  hr::print_summary(out, s);
  EXPECT_NE(out.str().find("seed 0   2010-04-30 15:09 to 2010-05-01 17:09 UTC\n"), std::string::npos) << out.str();
  r.unix_start = -1;
  s = hr::summarize(r);
  EXPECT_EQ(s.first_submit_unix_ms, -1);
  std::ostringstream plain;
  hr::print_summary(plain, s);
  EXPECT_EQ(plain.str().find("UTC"), std::string::npos) << plain.str();
}

// --- sweep tables ------------------------------------------------------------------------------

namespace {

// A sweep table as `headroom sweep` writes one: 2 keys (3 node counts, 2 policies) x 2 seeds.
hr::Table sample_sweep() {
  hr::Table t;
  t.columns = {{"run", false, {}, {}},
               {"cluster.pools.a.nodes", true, {}, {}},
               {"policy", true, {}, {}},
               {"seed", false, {}, {}},
               {"status", true, {}, {}},
               {"wait_mean_s", false, {}, {}},
               {"gpu_utilization", false, {}, {}}};
  for (std::size_t r = 0; r < 12; ++r) {
    t.columns[0].numbers.push_back(static_cast<double>(r));
    t.columns[1].strings.push_back(std::to_string(8 * (1 + r / 4)));
    t.columns[2].strings.push_back(r / 2 % 2 == 0 ? "fifo" : "sjf");
    t.columns[3].numbers.push_back(static_cast<double>(1 + r % 2));
    t.columns[4].strings.push_back(r == 5 ? "failed" : "done");
    t.columns[5].numbers.push_back(r == 5 ? std::nan("") : 3600.0 * static_cast<double>(12 - r));
    t.columns[6].numbers.push_back(0.05 * static_cast<double>(r));
  }
  t.attributes = {{"scenario_file", "sweep.yaml"}, {"version", "headroom test"}, {"total_runs", "12"}};
  for (const hr::Column& c : t.columns) t.attributes["columns"] += c.name + "\n";  // their order in the file
  return t;
}

}  // namespace

// What `report` and `merge` rely on in a sweep table, checked when it is read: each break named
// by its column (or attribute) and row. Before, a total_runs of "abc" ended merge with "internal
// error: stoull", one of 10^12 with std::bad_alloc, and a run of 0.5 was taken for run 0.
TEST(CheckSweepTable, EachBreakNamesItsColumnRowAndWhatWasExpected) {
  ASSERT_NO_THROW(hr::check_sweep_table(sample_sweep(), "s.h5"));
  {  // a shard of more shards than runs holds none: `sweep --shard 30/31` of these 12 runs writes it
    hr::Table none = sample_sweep();
    for (hr::Column& c : none.columns) c.numbers.clear(), c.strings.clear();
    none.attributes["shard"] = "30/31";
    EXPECT_NO_THROW(hr::check_sweep_table(none, "s.h5"));
  }
  const std::vector<std::pair<std::function<void(hr::Table&)>, std::string>> cases = {
      {[](hr::Table& t) { t.columns[0].numbers[3] = 0.5; },
       "/runs/run: row 3: expected a run of the sweep, a whole number from 0 to 11, got 0.5"},
      {[](hr::Table& t) { t.columns[0].numbers[3] = 1e300; },
       "/runs/run: row 3: expected a run of the sweep, a whole number from 0 to 11, got 1e+300"},
      {[](hr::Table& t) { t.columns[0].numbers[3] = std::nan(""); },
       "/runs/run: row 3: expected a run of the sweep, a whole number from 0 to 11, got nan"},
      {[](hr::Table& t) { t.columns[0].numbers[7] = 2; }, "/runs/run: row 7: run 2 appears twice"},
      {[](hr::Table& t) { t.attributes["total_runs"] = "abc"; },
       "attribute /@total_runs: expected the sweep's number of runs, a whole number from 12 (the rows of /runs) to "
       "1,000,000, got \"abc\""},
      {[](hr::Table& t) { t.attributes["total_runs"] = "1000000000000"; },
       "attribute /@total_runs: expected the sweep's number of runs, a whole number from 12 (the rows of /runs) to "
       "1,000,000, got \"1000000000000\""},
      {[](hr::Table& t) { t.attributes["total_runs"] = "11"; },
       "attribute /@total_runs: expected the sweep's number of runs, a whole number from 12 (the rows of /runs) to "
       "1,000,000, got \"11\""},
      {[](hr::Table& t) { t.attributes["shard"] = "5/2"; },
       "attribute /@shard: expected I/N with 0 <= I < N <= 1,000,000, got \"5/2\""},
      {[](hr::Table& t) { t.attributes["shard"] = "0/1000001"; },
       "attribute /@shard: expected I/N with 0 <= I < N <= 1,000,000, got \"0/1000001\""},
      {[](hr::Table& t) { t.columns[3].numbers[0] = -1; },
       "/runs/seed: row 0: expected a seed, a whole number from 0 to 2^64 - 1, got -1"},
      {[](hr::Table& t) { t.columns[3].numbers[1] = 0x1p64; },
       "/runs/seed: row 1: expected a seed, a whole number from 0 to 2^64 - 1, got 18446744073709551616"},
      {[](hr::Table& t) {
         t.columns[4] = {"status", false, std::vector<double>(12, 0.0), {}};
       },
       "/runs/status: expected text (done, failed or cancelled), not numbers"},
      {[](hr::Table& t) { t.columns[2].strings[4] = "fi\xff"; }, "/runs/policy: row 4: not valid UTF-8 (byte 2)"},
      {[](hr::Table& t) { t.columns[6].numbers.pop_back(); },
       "/runs/gpu_utilization: 11 values, expected 12 (one per run, as /runs/run)"},
      {[](hr::Table& t) { std::swap(t.columns[0], t.columns[1]); },
       "/runs: not a sweep table: its first column is \"cluster.pools.a.nodes\", expected \"run\" (numbers)"},
      {[](hr::Table& t) { t.attributes["scenario_file"] = "\xc3"; },
       "attribute /@scenario_file: not valid UTF-8 (byte 0)"},
  };
  for (const auto& [mutate, expected] : cases) {
    hr::Table t = sample_sweep();
    mutate(t);
    EXPECT_EQ(input_error_message([&] { hr::check_sweep_table(t, "s.h5"); }), "s.h5: " + expected);
  }
  // More rows than a sweep makes.
  hr::Table big;
  big.columns = {{"run", false, std::vector<double>(1'000'001, 0.0), {}}};
  EXPECT_EQ(input_error_message([&] { hr::check_sweep_table(big, "s.h5"); }),
            "s.h5: /runs/run: 1000001 runs, more than the 1,000,000 a sweep holds");
}

// `report` reads the checked table (a file that breaks it is refused with the file's name), and
// draws each swept key with the runs grouped once: a key of 200,000 distinct values is named,
// not drawn, and more keys than a sweep can vary are counted in a note. Before, such a table took
// more than two minutes (every row compared with every value and every line).
TEST_F(ResultsTest, ASweepReportDrawsEachKeyOnceAndNamesWhatItCannotDraw) {
  const std::string file = path("sweep.h5");
  hr::Table t = sample_sweep();
  hr::write_table_hdf5(t, file, "runs");
  const std::string html = hr::render_report({hr::load_report_input(file)});
  EXPECT_NE(html.find("<h3>KPIs against cluster.pools.a.nodes</h3>"), std::string::npos);
  EXPECT_NE(html.find("<h3>KPIs against policy</h3>"), std::string::npos);
  EXPECT_NE(html.find("nodes=8"), std::string::npos);  // a line of the policy charts
  t.attributes["total_runs"] = "7";
  hr::write_table_hdf5(t, file, "runs");
  EXPECT_EQ(input_error_message([&] { hr::load_report_input(file); }),
            file +
                ": attribute /@total_runs: expected the sweep's number of runs, a whole number from 12 (the rows of "
                "/runs) to 1,000,000, got \"7\"");

  hr::ReportInput in;
  in.file = "many.h5";
  in.sweep = true;
  const std::size_t rows = 200'000;
  in.table.columns = {
      {"run", false, {}, {}}, {"x", true, {}, {}}, {"seed", false, {}, {}}, {"wait_mean_s", false, {}, {}}};
  for (std::size_t r = 0; r < rows; ++r) {
    in.table.columns[0].numbers.push_back(static_cast<double>(r));
    in.table.columns[1].strings.push_back(std::to_string(r));
    in.table.columns[2].numbers.push_back(0);
    in.table.columns[3].numbers.push_back(1);
  }
  ASSERT_NO_THROW(hr::check_sweep_table(in.table, in.file));
  const std::string many = hr::render_report({in});
  EXPECT_NE(many.find("200,000 values: more than a chart shows one point each for (2000 numbers)"), std::string::npos);
  EXPECT_EQ(many.find("<svg"), std::string::npos);

  // 24 keys of two values each (2^24 combinations; 64 runs here): the first 20 are drawn.
  in.table.columns.resize(1);
  in.table.columns[0].numbers.resize(64);
  for (std::size_t k = 0; k < 24; ++k) {
    hr::Column c{std::string("k").append(std::to_string(k)), true, {}, {}};  // not "k" + ...: GCC 12's -Wrestrict
    for (std::size_t r = 0; r < 64; ++r) c.strings.push_back(std::to_string((r >> (k % 6)) & 1));
    in.table.columns.push_back(std::move(c));
  }
  ASSERT_NO_THROW(hr::check_sweep_table(in.table, in.file));
  const std::string keys = hr::render_report({in});
  EXPECT_NE(keys.find("<h3>KPIs against k19</h3>"), std::string::npos);
  EXPECT_EQ(keys.find("<h3>KPIs against k20</h3>"), std::string::npos);
  EXPECT_NE(keys.find("4 more keys with several values are not drawn"), std::string::npos);
}
