#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "models/workload.hpp"
#include "sim/errors.hpp"
#include "temp_dir.hpp"
#include "traces/import.hpp"
#include "traces/infer.hpp"

using namespace headroom;
using namespace std::string_literals;
using models::JobKind;
using models::TraceStatus;
using traces::Format;
using traces::ImportOptions;

namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/traces/";
const std::string kShared = std::string(HEADROOM_SHARED_DIR) + "/traces/swf-pwa/";

// One job line of an SWF file; fields not given are -1.
const char* const kSwfJob = "1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";

using headroom::testing::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The InputError thrown by importing `path`; fails the test when none is thrown.
sim::InputError import_error(const std::string& path, const ImportOptions& options = {}) {
  try {
    traces::import_trace(path, options);
  } catch (const sim::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for " << path;
  return sim::InputError("none");
}

std::int64_t count_status(const models::Workload& w, TraceStatus s) {
  return std::count_if(w.jobs.begin(), w.jobs.end(), [s](const models::Job& j) { return j.trace_status == s; });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Formats

TEST(TraceFormat, ParsesAndPrintsNames) {
  EXPECT_EQ(traces::parse_format("auto"), Format::Auto);
  EXPECT_EQ(traces::parse_format("swf"), Format::Swf);
  EXPECT_EQ(traces::parse_format("csv"), Format::Csv);
  EXPECT_FALSE(traces::parse_format("json"));
  EXPECT_FALSE(traces::parse_format(""));
  for (Format f : {Format::Auto, Format::Swf, Format::Csv}) EXPECT_EQ(traces::parse_format(traces::to_string(f)), f);
}

TEST(TraceFormat, DetectsFromTheName) {
  // The name decides without opening the file.
  EXPECT_EQ(traces::detect_format("/nowhere/log.swf"), Format::Swf);
  EXPECT_EQ(traces::detect_format("/nowhere/log.SWF.gz"), Format::Swf);
  EXPECT_EQ(traces::detect_format("/nowhere/jobs.csv"), Format::Csv);
  EXPECT_EQ(traces::detect_format("/nowhere/jobs.csv.gz"), Format::Csv);
}

TEST(TraceFormat, DetectsFromTheFirstNonEmptyLine) {
  TempDir tmp;
  EXPECT_EQ(traces::detect_format(tmp.write("a.log", "\n  \n; Version: 2.2\n")), Format::Swf);
  EXPECT_EQ(traces::detect_format(tmp.write("b.log", std::string("\n") + kSwfJob)), Format::Swf);
  EXPECT_EQ(traces::detect_format(tmp.write("c.txt", "id,tenant,queue,submit,gpus,runtime\n1,a,q,0,1,1\n")),
            Format::Csv);
  EXPECT_EQ(traces::detect_format(tmp.write("d.txt", "\"submit\",id\n")), Format::Csv);
  // Gzip content is recognised by its magic bytes, whatever the name.
  EXPECT_EQ(traces::detect_format(tmp.write("e.dat", read_bytes(kData + "small.swf.gz"))), Format::Swf);

  const std::string unknown = tmp.write("f.txt", "job,user,start\n1,2,3\n");
  try {
    traces::detect_format(unknown);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(e.file(), unknown);
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(std::string(e.what()).find("could not detect the trace format"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("set `format:` to swf or csv"), std::string::npos) << e.what();
  }
  EXPECT_THROW(traces::detect_format(tmp.write("g.txt", "1 2 3\n")), sim::InputError);
  EXPECT_THROW(traces::detect_format(tmp.write("h.txt", "\n\n")), sim::InputError);
}

TEST(TraceFormat, AutoImportUsesTheDetectedFormat) {
  TempDir tmp;
  const auto swf = traces::import_trace(tmp.write("log.txt", std::string("; MaxProcs: 4\n") + kSwfJob));
  EXPECT_EQ(swf.meta.format, "swf");
  EXPECT_EQ(swf.meta.max_procs, 4);
  const auto csv = traces::import_trace(tmp.write("jobs.txt", "id,tenant,queue,submit,gpus,runtime\n7,a,q,0,1,1\n"));
  EXPECT_EQ(csv.meta.format, "csv");
  ASSERT_EQ(csv.jobs.size(), 1u);
  EXPECT_EQ(csv.jobs[0].trace_id, 7);
  // An explicit format wins over the name.
  ImportOptions as_csv;
  as_csv.format = Format::Csv;
  EXPECT_EQ(traces::import_trace(tmp.write("jobs.swf", "id,tenant,queue,submit,gpus,runtime\n7,a,q,0,1,1\n"), as_csv)
                .meta.format,
            "csv");
}

TEST(TraceImport, MissingFileIsAnInputError) {
  const std::string path = kData + "does-not-exist.swf";
  const sim::InputError e = import_error(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.message(), "cannot open trace file: No such file or directory");
  EXPECT_EQ(std::string(e.what()), path + ": cannot open trace file: No such file or directory");
  // Auto-detection of a name that does not tell opens the file too.
  EXPECT_EQ(import_error(kData + "does-not-exist").message(), "cannot open trace file: No such file or directory");
  EXPECT_EQ(import_error(kData).message(), "cannot open trace file: Is a directory");
}

namespace {

// What `read` returns for `bytes` written into a pipe by another thread, named as /dev/fd/N (a
// process substitution's name, or /dev/stdin at the end of a pipeline): a file that can be read
// only once.
template <class Read>
auto through_pipe(const std::string& bytes, std::string* name, Read&& read) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
  std::thread writer([&] {
    for (std::size_t at = 0; at < bytes.size();) {
      const ssize_t n = ::write(fds[1], bytes.data() + at, bytes.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  *name = "/dev/fd/" + std::to_string(fds[0]);
  decltype(read(*name)) out{};
  std::exception_ptr error;
  try {
    out = read(*name);
  } catch (...) {
    error = std::current_exception();
  }
  ::close(fds[0]);  // the writer then stops at a broken pipe if the read stopped early
  writer.join();
  if (error) std::rethrow_exception(error);
  return out;
}

models::Workload import_through_pipe(const std::string& bytes, std::string* name, const ImportOptions& options = {}) {
  return through_pipe(bytes, name, [&](const std::string& path) { return traces::import_trace(path, options); });
}

}  // namespace

// A pipe cannot be opened twice: the format is detected on the lines the import then reads again
// (before, the import opened it a second time and read on from where the detection had stopped).
// `headroom import-cluster <(zcat nodes.csv.gz)`: the header is looked at and the rows read from
// one reader (before, the second open of the pipe found it empty: "no header row").
TEST(ClusterImport, APipeIsReadOnce) {
  if (!fs::exists("/dev/fd")) GTEST_SKIP() << "no /dev/fd";
  ::signal(SIGPIPE, SIG_IGN);
  std::string name;
  const auto read = [](const std::string& path) { return traces::import_cluster(path); };
  const traces::ClusterImport plain = traces::import_cluster(kData + "openb_nodes.csv");
  const traces::ClusterImport piped = through_pipe(read_bytes(kData + "openb_nodes.csv"), &name, read);
  EXPECT_EQ(traces::cluster_yaml(piped, "n"), traces::cluster_yaml(plain, "n"));
  const traces::ClusterImport pai = through_pipe("m1,T4,96,512,2\nm2,T4,96,512,2\n", &name, read);
  EXPECT_EQ(pai.format, "pai-machines");
  EXPECT_EQ(pai.cluster.total_gpus(), 4);
}

TEST(TraceImport, APipeIsReadOnceWithItsFormatDetectedOnIt) {
  if (!fs::exists("/dev/fd")) GTEST_SKIP() << "no /dev/fd";
  ::signal(SIGPIPE, SIG_IGN);
  std::string name;
  for (const char* file : {"small.swf", "small.swf.gz"}) {
    SCOPED_TRACE(file);
    const models::Workload plain = traces::import_trace(kData + file);
    const models::Workload piped = import_through_pipe(read_bytes(kData + file), &name);
    EXPECT_EQ(piped.meta.format, "swf");
    ASSERT_EQ(piped.jobs.size(), plain.jobs.size());
    for (std::size_t i = 0; i < plain.jobs.size(); ++i) {
      EXPECT_EQ(piped.jobs[i].trace_id, plain.jobs[i].trace_id);
      EXPECT_EQ(piped.jobs[i].submit, plain.jobs[i].submit);
      EXPECT_EQ(piped.jobs[i].gpus, plain.jobs[i].gpus);
    }
  }
  const models::Workload csv = import_through_pipe("id,tenant,queue,submit,gpus,runtime\n7,a,q,0,1,1\n", &name);
  EXPECT_EQ(csv.meta.format, "csv");
  ASSERT_EQ(csv.jobs.size(), 1u);
  // Blank lines up to the buffer's 64 KiB: still read again. Past it: said, with the way out.
  const std::string job = read_bytes(kData + "small.swf");
  EXPECT_EQ(import_through_pipe(std::string(60'000, '\n') + job, &name).jobs.size(), 5u);
  const std::string far = std::string(70'000, '\n') + job;
  try {
    import_through_pipe(far, &name);
    ADD_FAILURE() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(e.file(), name);
    EXPECT_EQ(e.line(), 70'001);
    EXPECT_EQ(e.message(),
              "the trace format was found only past the first 64 KiB of a pipe, which cannot be read again: set "
              "`format:` (or --format) to swf");
  }
  ImportOptions swf;
  swf.format = Format::Swf;
  EXPECT_EQ(import_through_pipe(far, &name, swf).jobs.size(), 5u);
}

TEST(TraceImport, UnitsPerGpuMustBePositive) {
  ImportOptions options;
  options.units_per_gpu = 0;
  const sim::InputError e = import_error(kData + "small.swf", options);
  EXPECT_EQ(e.where(), "units_per_gpu");
  EXPECT_EQ(e.message(), "must be at least 1, got 0");
}

// ---------------------------------------------------------------------------------------------
// SWF

// Found by fuzz_swf: a UnixStartTime of 1.9e16 s overflowed trace-infer's milliseconds. A start
// that is no date is ignored with a warning, and the trace is read without a calendar.
TEST(SwfImport, AUnixStartTimeThatIsNoDateIsIgnoredWithAWarning) {
  TempDir tmp;
  const std::string path = tmp.write(
      "far-start.swf",
      std::string("; UnixStartTime: 19100000000000020\n; StartTime: Sat May 02 00:04:55 JST 2010\n") + kSwfJob);
  const models::Workload w = traces::import_trace(path);
  EXPECT_EQ(w.meta.unix_start, -1);
  ASSERT_EQ(w.meta.warnings.size(), 1u);
  EXPECT_EQ(w.meta.warnings[0],
            "line 1: UnixStartTime 19100000000000020 is not seconds from 0 to 1,000,000,000,000 (1970 to about the "
            "year 33,600), ignored");
  ASSERT_EQ(w.jobs.size(), 1u);
  const traces::Inference inf = traces::infer_system(w, sim::kDay, 1, path);
  EXPECT_FALSE(inf.clock_known);
  auto start_of = [&](const std::string& start) {
    return traces::import_trace(tmp.write("start.swf", "; UnixStartTime: " + start + "\n" + kSwfJob)).meta.unix_start;
  };
  EXPECT_EQ(start_of("-5"), -1);
  EXPECT_EQ(start_of("1000000000001"), -1);
  EXPECT_EQ(start_of("1000000000000"), 1'000'000'000'000);  // the bound itself is kept
}

TEST(SwfImport, ReadsHeaderCommentsAndMapsEveryField) {
  const models::Workload w = traces::import_trace(kData + "small.swf");
  EXPECT_EQ(w.meta.path, kData + "small.swf");
  EXPECT_EQ(w.meta.format, "swf");
  EXPECT_EQ(w.meta.max_procs, 32);
  EXPECT_EQ(w.meta.max_nodes, 4);
  EXPECT_EQ(w.meta.unix_start, 1000000000);
  EXPECT_EQ(w.meta.rows, 5);
  EXPECT_EQ(w.meta.skipped, 0);
  EXPECT_TRUE(w.meta.warnings.empty());

  // Sorted by submit; jobs 2 and 5 tie at 5 s and keep their file order.
  ASSERT_EQ(w.jobs.size(), 5u);
  std::vector<std::int64_t> ids;
  for (const auto& j : w.jobs) ids.push_back(j.trace_id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{1, 3, 2, 5, 4}));
  // Each job keeps its line in the file (errors about a job name it: a split's unrouted job).
  std::vector<std::uint32_t> lines;
  for (const auto& j : w.jobs) lines.push_back(j.line);
  EXPECT_EQ(lines, (std::vector<std::uint32_t>{9, 13, 11, 15, 14}));

  ASSERT_EQ(w.tenants.names(), (std::vector<std::string>{"user3", "unknown", "user4"}));
  ASSERT_EQ(w.queues.names(), (std::vector<std::string>{"queue1", "queue2", "unknown"}));

  const models::Job& j1 = w.jobs[0];
  EXPECT_EQ(j1.submit, 0);
  EXPECT_EQ(j1.runtime, 100'000);
  EXPECT_EQ(j1.gpus, 8);
  EXPECT_EQ(j1.walltime, 200'000);
  EXPECT_EQ(j1.trace_start, 10'000);
  EXPECT_EQ(j1.trace_end, 110'000);
  EXPECT_EQ(j1.trace_status, TraceStatus::Completed);
  EXPECT_EQ(j1.kind, JobKind::Batch);
  EXPECT_EQ(w.tenants.name(j1.tenant), "user3");
  EXPECT_EQ(w.queues.name(j1.queue), "queue1");
  EXPECT_EQ(j1.gpu_milli, 0);
  EXPECT_EQ(j1.nodes, 0);
  EXPECT_EQ(j1.gpu_type, 0);

  const models::Job& j3 = w.jobs[1];
  EXPECT_EQ(j3.submit, 3'000);
  EXPECT_EQ(j3.runtime, 0);  // a zero run time is a valid job
  EXPECT_EQ(j3.gpus, 1);
  EXPECT_EQ(j3.walltime, 60'000);
  EXPECT_EQ(j3.trace_start, 3'000);
  EXPECT_EQ(j3.trace_end, 3'000);
  EXPECT_EQ(j3.trace_status, TraceStatus::Cancelled);

  const models::Job& j2 = w.jobs[2];
  EXPECT_EQ(j2.submit, 5'000);
  EXPECT_EQ(j2.runtime, 50'000);
  EXPECT_EQ(j2.gpus, 9);  // allocation unknown: the request counts
  EXPECT_EQ(j2.walltime, -1);
  EXPECT_EQ(j2.trace_start, -1);  // wait unknown
  EXPECT_EQ(j2.trace_end, -1);
  EXPECT_EQ(j2.trace_status, TraceStatus::Failed);
  EXPECT_EQ(w.tenants.name(j2.tenant), "unknown");
  EXPECT_EQ(w.queues.name(j2.queue), "queue2");

  const models::Job& j5 = w.jobs[3];  // tab-separated in the file
  EXPECT_EQ(j5.submit, 5'000);
  EXPECT_EQ(j5.runtime, 7'000);
  EXPECT_EQ(j5.gpus, 4);
  EXPECT_EQ(j5.walltime, -1);  // requested time 0 means no limit
  EXPECT_EQ(j5.trace_start, 6'000);
  EXPECT_EQ(j5.trace_end, 13'000);
  EXPECT_EQ(w.tenants.name(j5.tenant), "user4");

  const models::Job& j4 = w.jobs[4];  // fractional CPU time and memory fields are accepted
  EXPECT_EQ(j4.submit, 20'000);
  EXPECT_EQ(j4.gpus, 16);
  EXPECT_EQ(j4.walltime, 3'600'000);
  EXPECT_EQ(j4.trace_start, 22'000);
  EXPECT_EQ(j4.trace_end, 52'000);
  EXPECT_EQ(j4.trace_status, TraceStatus::Unknown);  // status 7
  EXPECT_EQ(w.queues.name(j4.queue), "unknown");
}

TEST(SwfImport, PartitionIsTheQueueWhenTheLogRecordsNone) {
  // CEA Curie (Slurm) records no queue (-1) and its Slurm partition in field 16: the job's queue
  // is "partition<id>", in order of first appearance (jobs sorted by submit).
  const models::Workload w = traces::import_trace(kData + "curie-excerpt.swf");
  ASSERT_EQ(w.jobs.size(), 8u);
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"partition4", "partition8", "partition10", "partition17"}));
  std::vector<std::string> queues;
  std::vector<std::int32_t> gpus;
  for (const auto& j : w.jobs) queues.push_back(w.queues.name(j.queue)), gpus.push_back(j.gpus);
  EXPECT_EQ(queues, (std::vector<std::string>{"partition4", "partition4", "partition8", "partition8", "partition10",
                                              "partition10", "partition17", "partition17"}));
  EXPECT_EQ(gpus, (std::vector<std::int32_t>{256, 2048, 8, 8, 37360, 45824, 128, 128}));
  EXPECT_EQ(w.jobs[1].trace_start - w.jobs[1].submit, sim::from_seconds(249861));
  EXPECT_EQ(w.meta.max_procs, 93312);

  // A queue id wins over the partition; a partition of -1 or a decimal one names none.
  TempDir tmp;
  std::string text = "1 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 3 7 -1 -1\n";
  text += "2 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";
  text += "3 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 -1 2.5 -1 -1\n";
  text += "4 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 -1 3 -1 -1\n";
  const models::Workload m = traces::import_trace(tmp.write("mixed.swf", text));
  std::vector<std::string> names;
  for (const auto& j : m.jobs) names.push_back(m.queues.name(j.queue));
  EXPECT_EQ(names, (std::vector<std::string>{"queue3", "unknown", "unknown", "partition3"}));
}

TEST(SwfImport, AHeaderlessGridLogWithQueuesAndClusters) {
  // MetaCentrum 2009 (PBSpro, 14 clusters) as the PWA mirror has it: no header at all, a queue
  // (field 15) and a cluster (field 16) for every job, a wait but no requested time. The queue
  // names the job's queue; the cluster is not read; nothing gives the cluster's size.
  const models::Workload w = traces::import_trace(kData + "metacentrum-excerpt.swf");
  ASSERT_EQ(w.jobs.size(), 12u);
  EXPECT_EQ(w.meta.max_procs, -1);
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"queue2", "queue1"}));
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"user1", "user2", "user3", "user4"}));
  const models::Job& first = w.jobs[0];
  EXPECT_EQ(first.trace_id, 1);
  EXPECT_EQ(first.runtime, sim::from_seconds(2592042));  // 30 days
  EXPECT_EQ(first.gpus, 1);
  EXPECT_EQ(first.walltime, -1);
  EXPECT_EQ(first.trace_start, sim::from_seconds(65));
  EXPECT_EQ(first.trace_status, TraceStatus::Failed);  // status 0
  const models::Job& fifth = w.jobs[4];
  EXPECT_EQ(fifth.gpus, 2);
  EXPECT_EQ(fifth.trace_start, sim::from_seconds(516420 + 15));
  EXPECT_EQ(w.queues.name(fifth.queue), "queue1");
  EXPECT_EQ(w.jobs[5].trace_status, TraceStatus::Completed);
  std::size_t waited = 0;
  for (const auto& j : w.jobs) waited += j.trace_start >= j.submit ? 1u : 0u;
  EXPECT_EQ(waited, 12u);
}

TEST(SwfImport, UnitsPerGpuRoundsUp) {
  const auto gpus_with = [](int units) {
    ImportOptions options;
    options.units_per_gpu = units;
    std::vector<std::int32_t> out;
    for (const auto& j : traces::import_trace(kData + "small.swf", options).jobs) out.push_back(j.gpus);
    return out;
  };
  // Processors in sorted order: 8, 1, 9, 4, 16.
  EXPECT_EQ(gpus_with(1), (std::vector<std::int32_t>{8, 1, 9, 4, 16}));
  EXPECT_EQ(gpus_with(4), (std::vector<std::int32_t>{2, 1, 3, 1, 4}));
  EXPECT_EQ(gpus_with(3), (std::vector<std::int32_t>{3, 1, 3, 2, 6}));
  EXPECT_EQ(gpus_with(100), (std::vector<std::int32_t>{1, 1, 1, 1, 1}));
}

TEST(SwfImport, GzipMatchesPlainAndIsDetectedByContent) {
  const models::Workload plain = traces::import_trace(kData + "small.swf");
  const models::Workload gz = traces::import_trace(kData + "small.swf.gz");
  ASSERT_EQ(gz.jobs.size(), plain.jobs.size());
  for (std::size_t i = 0; i < plain.jobs.size(); ++i) {
    EXPECT_EQ(gz.jobs[i].trace_id, plain.jobs[i].trace_id);
    EXPECT_EQ(gz.jobs[i].submit, plain.jobs[i].submit);
    EXPECT_EQ(gz.jobs[i].gpus, plain.jobs[i].gpus);
  }
  EXPECT_EQ(gz.meta.unix_start, 1000000000);

  TempDir tmp;
  const std::string bytes = read_bytes(kData + "small.swf.gz");
  // Compressed data under a plain name, and plain data under a .gz name.
  EXPECT_EQ(traces::import_trace(tmp.write("renamed.swf", bytes)).jobs.size(), 5u);
  EXPECT_EQ(traces::import_trace(tmp.write("plain.swf.gz", read_bytes(kData + "small.swf"))).jobs.size(), 5u);
  // Concatenated gzip members read as one stream: the second copy's job ids are duplicates
  // (counted bad rows under skip_bad_rows).
  ImportOptions skip;
  skip.skip_bad_rows = true;
  const models::Workload twice = traces::import_trace(tmp.write("twice.swf.gz", bytes + bytes), skip);
  EXPECT_EQ(twice.meta.rows, 10);
  EXPECT_EQ(twice.meta.bad_rows, 5);
  EXPECT_EQ(twice.jobs.size(), 5u);
}

TEST(SwfImport, TruncatedOrCorruptGzipIsAnInputError) {
  TempDir tmp;
  const std::string bytes = read_bytes(kData + "small.swf.gz");
  ASSERT_GT(bytes.size(), 40u);
  for (std::size_t keep : {std::size_t{2}, std::size_t{10}, bytes.size() / 2, bytes.size() - 4, bytes.size() - 1}) {
    const std::string path = tmp.write("cut" + std::to_string(keep) + ".swf.gz", bytes.substr(0, keep));
    const sim::InputError e = import_error(path);
    EXPECT_EQ(e.file(), path);
    EXPECT_TRUE(e.message().starts_with("truncated or corrupt gzip data")) << keep << ": " << e.what();
  }
  std::string corrupt = bytes;
  for (std::size_t i = 20; i < 40; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  const sim::InputError e = import_error(tmp.write("corrupt.swf.gz", corrupt));
  EXPECT_TRUE(e.message().starts_with("truncated or corrupt gzip data")) << e.what();
}

TEST(SwfImport, TruncatedLargeGzipIsAnInputError) {
  const std::string path = kShared + "RICC-2010-2.swf.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  TempDir tmp;
  const std::string bytes = read_bytes(path);
  const std::string cut = tmp.write("ricc-cut.swf.gz", bytes.substr(0, bytes.size() / 2));
  const sim::InputError e = import_error(cut);
  EXPECT_EQ(e.file(), cut);
  EXPECT_NE(e.message().find("truncated or corrupt gzip data (unexpected end of file after line "), std::string::npos)
      << e.what();
}

TEST(SwfImport, MalformedFieldNamesFileLineColumnAndField) {
  TempDir tmp;
  const std::string path = tmp.write(
      "bad.swf", std::string("; MaxProcs: 8\n") + kSwfJob + "2 5 0 12x 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n");
  const sim::InputError e = import_error(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 7);
  EXPECT_EQ(e.where(), "run time (field 4)");
  EXPECT_EQ(e.message(), "expected an integer, got \"12x\"");
  EXPECT_EQ(std::string(e.what()), path + ":3:7: run time (field 4): expected an integer, got \"12x\"");
}

TEST(SwfImport, RejectsBadNumbers) {
  TempDir tmp;
  const auto error_for = [&](const std::string& line) {
    return import_error(tmp.write("n.swf", std::string(kSwfJob) + line + "\n"));
  };
  sim::InputError e = error_for("99999999999999999999 0 0 1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 1);
  EXPECT_EQ(e.where(), "job id (field 1)");
  EXPECT_EQ(e.message(), "number out of range, got \"99999999999999999999\"");

  e = error_for("2 2000000000000 0 1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1");
  EXPECT_EQ(e.column(), 3);
  EXPECT_EQ(e.where(), "submit time (field 2)");
  EXPECT_EQ(e.message(), "time out of range (at most 1000000000000 s), got \"2000000000000\"");

  e = error_for("2 -5 0 1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1");
  EXPECT_EQ(e.where(), "submit time (field 2)");
  EXPECT_EQ(e.message(), "expected a time >= 0 (or -1 for unknown), got \"-5\"");

  e = error_for("2 0 0 1 1 -1 -1 1.5 -1 -1 1 1 1 -1 1 -1 -1 -1");
  EXPECT_EQ(e.where(), "requested processors (field 8)");
  EXPECT_EQ(e.column(), 17);
  EXPECT_EQ(e.message(), "expected an integer, got \"1.5\"");

  e = error_for("2 0 0 1 1 abc -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1");
  EXPECT_EQ(e.where(), "average CPU time (field 6)");
  EXPECT_EQ(e.message(), "expected a number, got \"abc\"");

  e = error_for("2 0 0 1 1 -1 -1 1 -1 -1 +1 1 1 -1 1 -1 -1 -1");
  EXPECT_EQ(e.where(), "status (field 11)");

  // Control bytes are escaped in messages.
  e = error_for("2 0 0 1\0\x01 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1"s);
  EXPECT_EQ(e.where(), "run time (field 4)");
  EXPECT_EQ(e.message(), "expected an integer, got \"1\\x00\\x01\"");
}

TEST(SwfImport, WrongFieldCount) {
  TempDir tmp;
  const std::string short_line = "2 0 0 1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1";  // 17 fields
  sim::InputError e = import_error(tmp.write("short.swf", std::string(kSwfJob) + short_line + "\n"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), static_cast<int>(short_line.size()) + 1);
  EXPECT_EQ(e.message(), "expected 18 whitespace-separated fields, got 17");

  e = import_error(tmp.write("long.swf", std::string(kSwfJob) + short_line + " -1 99 100\n"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), static_cast<int>(short_line.size()) + 5);  // the 19th field
  EXPECT_EQ(e.message(), "expected 18 whitespace-separated fields, got 20");
}

TEST(SwfImport, SkipsJobsThatCannotBeSimulatedWithWarnings) {
  TempDir tmp;
  std::string text = "; comment\n";
  text += "10 0 0 -1 4 -1 -1 4 -1 -1 1 1 1 -1 1 -1 -1 -1\n";   // line 2: run time unknown
  text += "11 0 0 5 -1 -1 -1 -1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";  // line 3: processors unknown
  text += "12 0 0 5 0 -1 -1 0 -1 -1 1 1 1 -1 1 -1 -1 -1\n";    // line 4: zero processors
  text += "13 -1 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";   // line 5: submit unknown
  text += "14 1 0 5 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1\n";    // line 6: fine
  text += "15 2 0 -1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";   // line 7: run time unknown
  text += "16 3 0 -1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";   // line 8: not warned (only 5 kept)
  text += "17 3 0 9 0 -1 -1 3 -1 -1 1 1 1 -1 1 -1 -1 -1\n";    // line 9: allocation 0, request 3: fine
  const models::Workload w = traces::import_trace(tmp.write("skip.swf", text));
  EXPECT_EQ(w.meta.rows, 8);
  EXPECT_EQ(w.meta.skipped, 6);
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.jobs[0].trace_id, 14);
  EXPECT_EQ(w.jobs[1].trace_id, 17);
  EXPECT_EQ(w.jobs[1].gpus, 3);
  EXPECT_EQ(w.meta.warnings, (std::vector<std::string>{
                                 "line 2: run time unknown (-1), job skipped",
                                 "line 3: processors unknown (allocated -1, requested -1), job skipped",
                                 "line 4: processors unknown (allocated 0, requested 0), job skipped",
                                 "line 5: submit time unknown (-1), job skipped",
                                 "line 7: run time unknown (-1), job skipped",
                             }));
}

// A negative time other than -1 (unknown) and a job id seen twice are errors, as in every format,
// or counted bad rows under skip_bad_rows (traces/README.md, "Bad rows"; issue #20).
TEST(SwfImport, NegativeTimesAndDuplicateIdsAreBadRows) {
  TempDir tmp;
  std::string text = "1 0 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
  text += "2 0 0 -7 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";  // line 2: run time negative
  text += "3 0 -2 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";  // line 3: wait negative
  text += "1 4 0 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";   // line 4: job 1 again
  text += "4 5 0 5 1 -1 -1 1 -3 -1 1 1 1 -1 1 -1 -1 -1\n";   // line 5: requested time negative
  const std::string path = tmp.write("neg.swf", text);
  const sim::InputError e = import_error(path);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 7);
  EXPECT_EQ(e.where(), "run time (field 4)");
  EXPECT_EQ(e.message(), "expected a time >= 0 (or -1 for unknown), got \"-7\"");
  ImportOptions skip;
  skip.skip_bad_rows = true;
  const models::Workload w = traces::import_trace(path, skip);
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.jobs[0].trace_id, 1);
  EXPECT_EQ(w.jobs[0].submit, 0);  // the first row with id 1 stays; the later copy goes
  EXPECT_EQ(w.meta.bad_rows, 4);
  EXPECT_EQ(w.meta.warnings.back(),
            "line 4, column 1, job id (field 1): duplicate job id 1 (first at line 1) (bad row skipped)");
}

TEST(SwfImport, BlankLinesCrLfAndNoFinalNewline) {
  TempDir tmp;
  const std::string text =
      "; MaxNodes: 2\r\n\r\n \t \r\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\r\n"
      "2 1 0 10 2 -1 -1 2 5 -1 1 1 1 -1 1 -1 -1 -1";
  const models::Workload w = traces::import_trace(tmp.write("crlf.swf", text));
  EXPECT_EQ(w.meta.max_nodes, 2);
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.jobs[1].walltime, 5'000);
  EXPECT_EQ(w.meta.rows, 2);
}

TEST(SwfImport, LinesLongerThanTheReadBuffer) {
  TempDir tmp;
  std::string text = "; Note: " + std::string(300'000, 'x') + "\n";
  for (int i = 1; i <= 20'000; ++i)
    text += std::to_string(i) + " " + std::to_string(i) + " 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
  text += "; MaxProcs: " + std::string(200'000, ' ') + "64\n";
  const models::Workload w = traces::import_trace(tmp.write("long.swf", text));
  ASSERT_EQ(w.jobs.size(), 20'000u);
  EXPECT_EQ(w.jobs.back().trace_id, 20'000);
  EXPECT_EQ(w.jobs.back().submit, 20'000'000);
  EXPECT_EQ(w.meta.max_procs, 64);
}

TEST(SwfImport, EmptyTraceIsAnInputError) {
  TempDir tmp;
  const std::string path = tmp.write("empty.swf", "; MaxProcs: 8\n;\n\n");
  const sim::InputError e = import_error(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.message(), "no jobs in trace");
  EXPECT_EQ(import_error(tmp.write("nothing.swf", "")).message(), "no jobs in trace");
  EXPECT_EQ(import_error(tmp.write("skipped.swf", "1 0 0 -1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n")).message(),
            "no jobs in trace (all 1 rows skipped; line 1: run time unknown (-1), job skipped)");
}

// ---------------------------------------------------------------------------------------------
// Real logs from the Parallel Workloads Archive (../shared/traces/swf-pwa).

TEST(SwfImport, RiccLog) {
  const std::string path = kShared + "RICC-2010-2.swf.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  const auto t0 = std::chrono::steady_clock::now();
  const models::Workload w = traces::import_trace(path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ info     ] RICC-2010-2.swf.gz: %zu jobs imported in %.3f s\n", w.jobs.size(), seconds);

  EXPECT_EQ(w.meta.format, "swf");
  EXPECT_EQ(w.meta.rows, 447'794);
  EXPECT_EQ(w.meta.skipped, 0);
  ASSERT_EQ(w.jobs.size(), 447'794u);
  EXPECT_EQ(w.meta.max_procs, 8192);
  EXPECT_EQ(w.meta.max_nodes, 1024);
  EXPECT_EQ(w.meta.unix_start, 1272639895);

  const models::Job& first = w.jobs.front();
  EXPECT_EQ(first.trace_id, 1);
  EXPECT_EQ(first.submit, 0);
  EXPECT_EQ(first.runtime, 222'000);
  EXPECT_EQ(first.gpus, 80);
  EXPECT_EQ(first.walltime, 14'400'000);
  EXPECT_EQ(first.trace_start, 0);
  EXPECT_EQ(first.trace_end, 222'000);
  EXPECT_EQ(first.trace_status, TraceStatus::Completed);
  EXPECT_EQ(w.tenants.name(first.tenant), "user1");
  EXPECT_EQ(w.queues.name(first.queue), "queue1");
  const models::Job& last = w.jobs.back();
  EXPECT_EQ(last.trace_id, 447'794);
  EXPECT_EQ(last.submit, 13'216'249'000);

  EXPECT_EQ(count_status(w, TraceStatus::Completed), 431'549);
  EXPECT_EQ(count_status(w, TraceStatus::Cancelled), 16'245);
  EXPECT_EQ(count_status(w, TraceStatus::Failed), 0);
  EXPECT_EQ(w.tenants.size(), 176u);
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"queue1", "queue2"}));
  const auto in_queue2 = std::count_if(w.jobs.begin(), w.jobs.end(),
                                       [&](const models::Job& j) { return w.queues.name(j.queue) == "queue2"; });
  EXPECT_EQ(in_queue2, 329);

  std::int64_t gpus = 0;
  std::int64_t runtime_s = 0;
  for (const auto& j : w.jobs) {
    gpus += j.gpus;
    runtime_s += j.runtime / 1000;
  }
  // Sums of field 5 (field 8 where 5 is -1) and field 4, checked with awk.
  EXPECT_EQ(gpus, 7'172'150);
  EXPECT_EQ(runtime_s, 5'305'148'426);
  EXPECT_TRUE(std::is_sorted(w.jobs.begin(), w.jobs.end(),
                             [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; }));

  ImportOptions per_node;
  per_node.units_per_gpu = 8;
  std::int64_t gpus8 = 0;
  for (const auto& j : traces::import_trace(path, per_node).jobs) gpus8 += j.gpus;
  EXPECT_EQ(gpus8, 1'205'954);  // sum of ceil(processors / 8)
}

TEST(SwfImport, NasaLog) {
  const std::string path = kShared + "NASA-iPSC-1993-3.1-cln.swf.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  const models::Workload w = traces::import_trace(path);
  // Every one of the 18,239 job lines has a run time and an allocation, so none is skipped.
  EXPECT_EQ(w.meta.rows, 18'239);
  EXPECT_EQ(w.meta.skipped, 0);
  ASSERT_EQ(w.jobs.size(), 18'239u);
  EXPECT_EQ(w.meta.max_procs, 128);
  EXPECT_EQ(w.meta.max_nodes, 128);
  EXPECT_EQ(w.meta.unix_start, 749458803);
  EXPECT_EQ(w.tenants.size(), 69u);
  // The log has no queues, wait times, requests or statuses.
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"unknown"}));
  EXPECT_EQ(count_status(w, TraceStatus::Unknown), 18'239);
  EXPECT_TRUE(std::all_of(w.jobs.begin(), w.jobs.end(), [](const models::Job& j) {
    return j.trace_start == -1 && j.trace_end == -1 && j.walltime == -1;
  }));
  const models::Job& first = w.jobs.front();
  EXPECT_EQ(first.trace_id, 1);
  EXPECT_EQ(first.runtime, 1'451'000);
  EXPECT_EQ(first.gpus, 128);
  std::int64_t gpus = 0;
  for (const auto& j : w.jobs) gpus += j.gpus;
  EXPECT_EQ(gpus, 309'953);
}

// ---------------------------------------------------------------------------------------------
// Native CSV

TEST(CsvImport, ReadsAllColumnsInAnyOrder) {
  const models::Workload w = traces::import_trace(kData + "jobs.csv");
  EXPECT_EQ(w.meta.format, "csv");
  EXPECT_EQ(w.meta.rows, 4);
  EXPECT_EQ(w.meta.skipped, 0);
  ASSERT_EQ(w.jobs.size(), 4u);
  std::vector<std::int64_t> ids;
  for (const auto& j : w.jobs) ids.push_back(j.trace_id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{1, 3, 4, 2}));  // 3 and 4 tie at 1.0005 s -> 1001 ms
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"team, research", "say \"hi\"", "ops"}));
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"prod", "dev"}));
  EXPECT_EQ(w.gpu_type_names, (std::vector<std::string>{"A100", "H100"}));

  const models::Job& j1 = w.jobs[0];
  EXPECT_EQ(j1.submit, 0);
  EXPECT_EQ(w.tenants.name(j1.tenant), "team, research");
  EXPECT_EQ(w.queues.name(j1.queue), "prod");
  EXPECT_EQ(j1.gpus, 8);
  EXPECT_EQ(j1.runtime, 3'600'000);
  EXPECT_EQ(j1.kind, JobKind::Train);
  EXPECT_EQ(j1.gpu_type, 1);
  EXPECT_EQ(j1.walltime, 7'200'000);
  EXPECT_TRUE(j1.preemptible);
  EXPECT_EQ(j1.trace_status, TraceStatus::Completed);
  EXPECT_EQ(j1.gpu_milli, 0);
  EXPECT_EQ(j1.priority, 10);
  EXPECT_EQ(j1.trace_start, 0);
  EXPECT_EQ(j1.trace_end, 3'600'000);
  EXPECT_EQ(j1.nodes, 1);
  EXPECT_EQ(j1.gpus_per_node, 8);
  EXPECT_EQ(j1.cpus, 64);
  EXPECT_EQ(j1.memory_mib, 512'000);

  const models::Job& j3 = w.jobs[1];
  EXPECT_EQ(j3.submit, 1'001);                // 1.0005 s rounds to the nearest millisecond
  EXPECT_EQ(w.queues.name(j3.queue), "dev");  // " dev " is trimmed
  EXPECT_EQ(j3.gpus, 0);
  EXPECT_EQ(j3.gpu_milli, 250);
  EXPECT_EQ(j3.runtime, 90'250);
  EXPECT_EQ(j3.kind, JobKind::Interactive);
  EXPECT_EQ(j3.gpu_type, 2);
  EXPECT_EQ(j3.walltime, -1);
  EXPECT_TRUE(j3.preemptible);
  EXPECT_EQ(j3.trace_status, TraceStatus::Cancelled);
  EXPECT_EQ(j3.priority, -3);
  EXPECT_EQ(j3.trace_start, -1);
  EXPECT_EQ(j3.trace_end, -1);

  const models::Job& j4 = w.jobs[2];
  EXPECT_EQ(j4.gpus, 2);  // written "2.0"
  EXPECT_EQ(j4.kind, JobKind::Batch);
  EXPECT_EQ(j4.gpu_type, 1);
  EXPECT_FALSE(j4.preemptible);
  EXPECT_EQ(j4.trace_status, TraceStatus::Unknown);

  const models::Job& j2 = w.jobs[3];
  EXPECT_EQ(j2.submit, 12'500);
  EXPECT_EQ(w.tenants.name(j2.tenant), "say \"hi\"");
  EXPECT_EQ(j2.runtime, 1);  // 0.001 s
  EXPECT_EQ(j2.kind, JobKind::Inference);
  EXPECT_EQ(j2.gpu_type, 0);
  EXPECT_EQ(j2.gpu_milli, 500);
  EXPECT_EQ(j2.walltime, -1);
  EXPECT_FALSE(j2.preemptible);
  EXPECT_EQ(j2.trace_status, TraceStatus::Failed);
  EXPECT_EQ(j2.priority, 0);
  EXPECT_EQ(j2.nodes, 0);
  EXPECT_EQ(j2.cpus, 0);
  EXPECT_EQ(j2.memory_mib, 0);
}

TEST(CsvImport, DefaultsWithOnlyRequiredColumns) {
  TempDir tmp;
  const models::Workload w = traces::import_trace(tmp.write("min.csv",
                                                            "runtime,gpus,submit,queue,tenant,id\n"
                                                            "  1.5 , 3 , 2 , q , t , 9\n"));
  ASSERT_EQ(w.jobs.size(), 1u);
  const models::Job& j = w.jobs[0];
  EXPECT_EQ(j.trace_id, 9);
  EXPECT_EQ(j.submit, 2'000);
  EXPECT_EQ(j.runtime, 1'500);
  EXPECT_EQ(j.gpus, 3);
  EXPECT_EQ(j.kind, JobKind::Batch);
  EXPECT_EQ(j.walltime, -1);
  EXPECT_EQ(j.trace_start, -1);
  EXPECT_EQ(j.trace_end, -1);
  EXPECT_EQ(j.trace_status, TraceStatus::Unknown);
  EXPECT_FALSE(j.preemptible);
  EXPECT_EQ(j.gpu_type, 0);
  EXPECT_TRUE(w.gpu_type_names.empty());
}

TEST(CsvImport, QuotedCellsPerRfc4180) {
  TempDir tmp;
  const std::string text =
      "id,tenant,queue,submit,gpus,runtime\r\n"
      "1,\"a,b\",\"q\",0,1,1\r\n"
      "2,\"line one\nline two\",q,1,1,1\n"
      "3,\"\"\"quoted\"\"\",\"\",2,1,1\n"
      "4,  \"padded\"  ,q,3,1,1\n";
  // Row 3 has an empty required cell, so check it separately.
  const sim::InputError e = import_error(tmp.write("quotes.csv", text));
  EXPECT_EQ(e.line(), 5);  // row 3 starts on line 5: row 2 spans lines 3 and 4
  EXPECT_EQ(e.where(), "queue (column 3)");
  EXPECT_EQ(e.message(), "empty value in a required column");

  std::string fixed = text;
  fixed.replace(fixed.find(",\"\",2"), 5, ",q,2");
  const models::Workload w = traces::import_trace(tmp.write("quotes2.csv", fixed));
  EXPECT_EQ(w.meta.rows, 4);
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"a,b", "line one\nline two", "\"quoted\"", "padded"}));
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"q"}));
}

TEST(CsvImport, BadQuotingIsAnError) {
  TempDir tmp;
  sim::InputError e = import_error(tmp.write("q1.csv", "id,tenant,queue,submit,gpus,runtime\n1,\"a\"b,q,0,1,1\n"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 6);
  EXPECT_EQ(e.message(), "unexpected character after a closing quote");
  e = import_error(tmp.write("q2.csv", "id,tenant,queue,submit,gpus,runtime\n1,a\"b,q,0,1,1\n2,a,q,0,1,1\n"));
  // An odd quote count: the stray quote is reported where it is, not as a cell open to the end.
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 4);
  EXPECT_EQ(e.message(), "quote inside an unquoted cell (quote the whole cell and double the quotes in it)");
  e = import_error(tmp.write("q3.csv", "id,tenant,queue,submit,gpus,runtime\n1,a\"\"b,q,0,1,1\n"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 4);
  EXPECT_EQ(e.message(), "quote inside an unquoted cell (quote the whole cell and double the quotes in it)");
}

TEST(CsvImport, UnknownColumnSuggestsTheClosestName) {
  TempDir tmp;
  const std::string path = tmp.write("typo.csv", "id,tenant,queue,subimt,gpus,runtime\n1,a,q,0,1,1\n");
  const sim::InputError e = import_error(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 17);
  EXPECT_EQ(e.where(), "column 4");
  EXPECT_EQ(e.message(), "unknown column \"subimt\"; did you mean \"submit\"?");
  EXPECT_EQ(std::string(e.what()), path + ":1:17: column 4: unknown column \"subimt\"; did you mean \"submit\"?");

  const sim::InputError far = import_error(tmp.write("far.csv", "id,tenant,queue,submit,gpus,runtime,colour\n"));
  EXPECT_TRUE(far.message().starts_with("unknown column \"colour\"; known columns: id tenant queue")) << far.what();

  const sim::InputError twice = import_error(tmp.write("twice.csv", "id,tenant,queue,submit,gpus,runtime,gpus\n"));
  EXPECT_EQ(twice.where(), "column 7");
  EXPECT_EQ(twice.message(), "column \"gpus\" appears twice (also column 5)");
}

TEST(CsvImport, MissingRequiredColumn) {
  TempDir tmp;
  sim::InputError e = import_error(tmp.write("missing.csv", "id,tenant,queue,submit,gpus\n1,a,q,0,1\n"));
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.where(), "header");
  EXPECT_EQ(e.message(), "missing required column \"runtime\" (required: id, tenant, queue, submit, gpus, runtime)");
  e = import_error(tmp.write("missing2.csv", "id,submit,gpus,runtime\n"));
  EXPECT_EQ(e.message(),
            "missing required columns \"tenant\", \"queue\" (required: id, tenant, queue, submit, gpus, runtime)");
  e = import_error(tmp.write("empty.csv", "\n\n"));
  EXPECT_EQ(e.message(), "no header row (the file is empty)");
}

TEST(CsvImport, DecimalSeconds) {
  TempDir tmp;
  const models::Workload w =
      traces::import_trace(tmp.write("dec.csv",
                                     "id,tenant,queue,submit,gpus,runtime,walltime,trace_start,trace_end\n"
                                     "1,a,q,0.5,1,12.345,.25,1.,2.9994\n"
                                     "2,a,q,86400,1,0.0004,60,100,100.0005\n"
                                     "3,a,q,1000000000000,1,3.1,-1,-1,-1\n"));
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(w.jobs[0].submit, 500);
  EXPECT_EQ(w.jobs[0].runtime, 12'345);
  EXPECT_EQ(w.jobs[0].walltime, 250);
  EXPECT_EQ(w.jobs[0].trace_start, 1'000);
  EXPECT_EQ(w.jobs[0].trace_end, 2'999);
  EXPECT_EQ(w.jobs[1].submit, 86'400'000);
  EXPECT_EQ(w.jobs[1].runtime, 0);
  EXPECT_EQ(w.jobs[1].walltime, 60'000);
  EXPECT_EQ(w.jobs[1].trace_start, 100'000);
  EXPECT_EQ(w.jobs[1].trace_end, 100'001);
  EXPECT_EQ(w.jobs[2].submit, 1'000'000'000'000'000);
  EXPECT_EQ(w.jobs[2].runtime, 3'100);
  EXPECT_EQ(w.jobs[2].walltime, -1);
}

TEST(CsvImport, BadValuesNameRowColumnAndName) {
  TempDir tmp;
  const std::string header =
      "id,tenant,queue,submit,gpus,runtime,kind,status,preemptible,gpu_milli,trace_start,trace_end\n";
  const auto error_for = [&](const std::string& row) {
    return import_error(tmp.write("bad.csv", header + "1,a,q,0,1,1,,,,,,\n" + row + "\n"));
  };
  sim::InputError e = error_for("2,a,q,0,x,1,,,,,,");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 9);
  EXPECT_EQ(e.where(), "gpus (column 5)");
  EXPECT_EQ(e.message(), "expected an integer, got \"x\"");
  EXPECT_NE(std::string(e.what()).find("bad.csv:3:9: gpus (column 5): expected an integer, got \"x\""),
            std::string::npos);

  e = error_for("2,a,q,-1,1,1,,,,,,");
  EXPECT_EQ(e.where(), "submit (column 4)");
  EXPECT_EQ(e.message(), "expected a non-negative number of seconds, got \"-1\"");
  e = error_for("2,a,q,1e3,1,1,,,,,,");
  EXPECT_EQ(e.message(), "expected a number of seconds, got \"1e3\"");
  e = error_for("2,a,q,0,-2,1,,,,,,");
  EXPECT_EQ(e.message(), "expected an integer >= 0, got \"-2\"");
  e = error_for("2,a,q,0,1,1,,,,1000,,");
  EXPECT_EQ(e.where(), "gpu_milli (column 10)");
  EXPECT_EQ(e.message(), "expected an integer in 0..999, got \"1000\"");
  e = error_for("2,a,q,0,4,1,,,,500,,");
  EXPECT_EQ(e.message(), "a fraction of a GPU needs gpus 0 or 1, got gpus 4");
  e = error_for("2,a,q,0,1,1,trian,,,,,");
  EXPECT_EQ(e.where(), "kind (column 7)");
  EXPECT_EQ(e.message(),
            "expected one of train, inference, interactive, batch, got \"trian\"; did you mean \"train\"?");
  e = error_for("2,a,q,0,1,1,,canceled,,,,");
  EXPECT_EQ(e.message(),
            "expected one of completed, failed, cancelled, unknown, got \"canceled\"; did you mean "
            "\"cancelled\"?");
  e = error_for("2,a,q,0,1,1,,,yes,,,");
  EXPECT_EQ(e.message(), "expected true, false, 1 or 0, got \"yes\"");
  e = error_for("2,a,q,0,1,1,,,,,10,5");
  EXPECT_EQ(e.where(), "trace_end (column 12)");
  EXPECT_EQ(e.message(), "trace_end \"5\" is before trace_start");
  e = error_for("99999999999999999999,a,q,0,1,1,,,,,,");
  EXPECT_EQ(e.message(), "number out of range, got \"99999999999999999999\"");
  e = error_for("2,a,q,0,1,1,,,");
  EXPECT_EQ(e.where(), "");
  EXPECT_EQ(e.message(), "expected 12 cells as in the header, got 9");
  e = error_for("2,a,q,0,1,1,,,,,,,extra");
  EXPECT_EQ(e.column(), 19);
  EXPECT_EQ(e.message(), "expected 12 cells as in the header, got 13");
}

TEST(CsvImport, RowsWithoutGpusAreSkippedWithAWarning) {
  TempDir tmp;
  const models::Workload w =
      traces::import_trace(tmp.write("nogpu.csv", "id,tenant,queue,submit,gpus,runtime\n1,a,q,0,0,5\n2,a,q,0,1,5\n"));
  EXPECT_EQ(w.meta.rows, 2);
  EXPECT_EQ(w.meta.skipped, 1);
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.jobs[0].trace_id, 2);
  EXPECT_EQ(w.meta.warnings, (std::vector<std::string>{"line 2: no GPU requested (gpus 0), job skipped"}));
}

TEST(CsvImport, GpuMemoryMibColumn) {
  // Optional: absent or empty is 0 (not given). A row with only GPU memory (gpus 0) is kept.
  TempDir tmp;
  const models::Workload w = traces::import_trace(
      tmp.write("mem.csv",
                "id,tenant,queue,submit,gpus,runtime,gpu_memory_mib\n1,a,q,0,1,5,20000\n2,a,q,0,0,5,2000\n"
                "3,a,q,0,2,5,\n"));
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(w.jobs[0].gpu_memory_mib, 20000);
  EXPECT_EQ(w.jobs[0].gpus, 1);
  EXPECT_EQ(w.jobs[1].gpu_memory_mib, 2000);
  EXPECT_EQ(w.jobs[1].gpus, 0);
  EXPECT_EQ(w.jobs[2].gpu_memory_mib, 0);
  EXPECT_EQ(w.meta.skipped, 0);
  EXPECT_EQ(traces::import_trace(tmp.write("none.csv", "id,tenant,queue,submit,gpus,runtime\n1,a,q,0,1,5\n"))
                .jobs[0]
                .gpu_memory_mib,
            0);

  const std::string header = "id,tenant,queue,submit,gpus,runtime,gpu_milli,gpu_memory_mib\n";
  sim::InputError e = import_error(tmp.write("bad.csv", header + "1,a,q,0,1,5,,-5\n"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 14);
  EXPECT_EQ(e.where(), "gpu_memory_mib (column 8)");
  EXPECT_EQ(e.message(), "expected an integer >= 0, got \"-5\"");
  e = import_error(tmp.write("text.csv", header + "1,a,q,0,1,5,,20GB\n"));
  EXPECT_EQ(e.message(), "expected an integer, got \"20GB\"");
  e = import_error(tmp.write("both.csv", header + "1,a,q,0,1,5,500,20000\n"));
  EXPECT_EQ(e.where(), "gpu_memory_mib (column 8)");
  EXPECT_EQ(e.message(), "give gpu_milli or gpu_memory_mib, not both (gpu_milli is 500)");
  e = import_error(tmp.write("many.csv", header + "1,a,q,0,2,5,,20000\n"));
  EXPECT_EQ(e.message(), "GPU memory of one device needs gpus 0 or 1, got gpus 2");
}

TEST(CsvImport, HeaderOnlyIsAnEmptyTrace) {
  TempDir tmp;
  const std::string path = tmp.write("header.csv", "id,tenant,queue,submit,gpus,runtime\n\n");
  const sim::InputError e = import_error(path);
  EXPECT_EQ(std::string(e.what()), path + ": no jobs in trace");
}

TEST(CsvImport, GzipCompressedCsv) {
  TempDir tmp;
  // A gzip member holding "id,tenant,queue,submit,gpus,runtime\n5,t,q,1,2,3\n", stored uncompressed.
  const std::string payload = "id,tenant,queue,submit,gpus,runtime\n5,t,q,1,2,3\n";
  std::uint32_t crc = 0xffffffffu;
  for (unsigned char c : payload) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  std::string gz = {'\x1f', '\x8b', '\x08', '\0', '\0', '\0', '\0', '\0', '\0', '\xff'};
  const auto len = static_cast<std::uint16_t>(payload.size());
  gz += '\x01';
  gz += static_cast<char>(len & 0xff);
  gz += static_cast<char>(len >> 8);
  gz += static_cast<char>(~len & 0xff);
  gz += static_cast<char>((~len >> 8) & 0xff);
  gz += payload;
  for (int k = 0; k < 4; ++k) gz += static_cast<char>((crc >> (8 * k)) & 0xff);
  for (int k = 0; k < 4; ++k) gz += static_cast<char>((payload.size() >> (8 * k)) & 0xff);

  const models::Workload w = traces::import_trace(tmp.write("jobs.csv.gz", gz));
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.jobs[0].trace_id, 5);
  EXPECT_EQ(w.jobs[0].runtime, 3'000);
  EXPECT_EQ(traces::detect_format(tmp.write("jobs.gz", gz)), Format::Csv);

  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 1);
  EXPECT_TRUE(
      import_error(tmp.write("badcrc.csv.gz", bad_crc)).message().starts_with("truncated or corrupt gzip data"));
}

TEST(CsvImport, GroupGangMinAndQosColumns) {
  const std::string path = ::testing::TempDir() + "/groups.csv";
  {
    std::ofstream out(path);
    out << "id,tenant,queue,submit,gpus,runtime,group,gang_min,qos\n"
           "1,a,q,0,1,10,pg1,2,high\n"
           "2,a,q,0,1,10,pg1,2,\n"
           "3,b,q,1,2,10,,,low\n";
  }
  const auto w = headroom::traces::import_trace(path, {});
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(w.jobs[0].group, w.jobs[1].group);
  EXPECT_EQ(w.groups.name(w.jobs[0].group), "pg1");
  EXPECT_EQ(w.jobs[0].gang_min, 2);
  EXPECT_EQ(w.jobs[2].group, headroom::models::kNone);
  EXPECT_EQ(w.qos.name(w.jobs[0].qos), "high");
  EXPECT_EQ(w.jobs[1].qos, headroom::models::kNone);
  EXPECT_EQ(w.qos.name(w.jobs[2].qos), "low");
}

TEST(CsvImport, GangMinMustAgreeWithinAGroup) {
  const std::string path = ::testing::TempDir() + "/groups_bad.csv";
  {
    std::ofstream out(path);
    out << "id,tenant,queue,submit,gpus,runtime,group,gang_min\n"
           "1,a,q,0,1,10,pg1,2\n"
           "2,a,q,0,1,10,pg1,3\n";
  }
  try {
    headroom::traces::import_trace(path, {});
    FAIL() << "expected an InputError";
  } catch (const headroom::sim::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("groups_bad.csv:3:"), std::string::npos) << what;
    EXPECT_NE(what.find("gang_min 3 differs from 2"), std::string::npos) << what;
  }
}
