// Reading what admins already have (issue #19): sacct exports as sites make them (header-less,
// Open XDMoD's field list, GRES and TRES GPUs). Real public files live in tests/data/imports with
// their source and license.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/workload.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "traces/import.hpp"

using namespace headroom;
using models::TraceStatus;
using traces::Format;
using traces::ImportOptions;

namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/";

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("headroom-imports-" + std::string(info->name()) + "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& content) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

 private:
  fs::path dir_;
};

std::string error_of(const std::string& path, const ImportOptions& options = {}) {
  try {
    traces::import_trace(path, options);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

ImportOptions keep_cpu() {
  ImportOptions o;
  o.keep_cpu_only = true;
  return o;
}

// ---- sacct as sites export it ----

TEST(SacctExport, XdmodHeaderlessExportIsDetectedAndKeepsItsGpuJob) {
  const auto w = traces::import_trace(kData + "xdmod/accounting-logs.log");
  EXPECT_EQ(w.meta.format, "sacct");
  ASSERT_EQ(w.jobs.size(), 1u);  // three CPU jobs are skipped
  EXPECT_EQ(w.meta.skipped, 3);
  const models::Job& j = w.jobs[0];
  EXPECT_EQ(j.trace_id, 5692623);
  EXPECT_EQ(j.gpus, 2);  // AllocTRES gres/gpu=2
  EXPECT_EQ(w.tenants.name(j.tenant), "ccr");
  EXPECT_EQ(w.queues.name(j.queue), "default");  // empty Partition
  EXPECT_EQ(j.submit, 34704248000);              // 2016-08-01T06:01:08 after the first Submit, 2015-06-26T13:57:00
  EXPECT_EQ(j.trace_start, 34708029000);
  EXPECT_EQ(j.runtime, 0);
  EXPECT_EQ(j.trace_status, TraceStatus::Completed);
  EXPECT_EQ(w.meta.unix_start, 1435327020);
  ASSERT_FALSE(w.meta.warnings.empty());
  EXPECT_NE(w.meta.warnings[0].find("Open XDMoD's 26-field sacct export"), std::string::npos) << w.meta.warnings[0];
}

TEST(SacctExport, XdmodCpuJobsKeepTheirNodesCpusMemoryAndLimits) {
  const auto w = traces::import_trace(kData + "xdmod/accounting-logs.log", keep_cpu());
  ASSERT_EQ(w.jobs.size(), 4u);
  const models::Job& a = w.jobs[0];
  EXPECT_EQ(a.trace_id, 4103947);
  EXPECT_EQ(w.tenants.name(a.tenant), "anon");
  EXPECT_EQ(w.queues.name(a.queue), "general-compute");
  EXPECT_EQ(w.qos.name(a.qos), "qos");
  EXPECT_EQ(a.gpus, 0);
  EXPECT_EQ(a.nodes, 32);
  EXPECT_EQ(a.cpus, 256);
  EXPECT_EQ(a.memory_mib, 3000);
  EXPECT_EQ(a.runtime, 3 * 86400 * 1000LL);
  EXPECT_EQ(a.walltime, 3 * 86400 * 1000LL);
  EXPECT_EQ(a.trace_status, TraceStatus::Failed);  // TIMEOUT
  const models::Job& b = w.jobs[1];
  EXPECT_EQ(b.trace_id, 4107166);
  EXPECT_EQ(b.submit, 21265000);
  EXPECT_EQ(b.runtime, ((2 * 24 + 22) * 3600 + 3 * 60 + 4) * 1000LL);  // 2-22:03:04
  EXPECT_EQ(b.trace_status, TraceStatus::Cancelled);                   // "CANCELLED by 102216"
  EXPECT_EQ(b.memory_mib, 48000);
}

TEST(SacctExport, XdmodJobArraysExpandToOneJobPerTask) {
  const auto w = traces::import_trace(kData + "xdmod/accounting-logs-with-job-arrays.log", keep_cpu());
  // 4103947_100, [1-3], [1,5], [9-11,20], [91,100-102], [9-11,13,16-20].
  EXPECT_EQ(w.jobs.size(), 1u + 3 + 2 + 4 + 4 + 9);
  EXPECT_EQ(w.jobs[0].nodes, 32);
}

TEST(SacctExport, FieldListXdmodNamesTheSameColumns) {
  ImportOptions o = keep_cpu();
  o.fields = {"xdmod"};
  const auto w = traces::import_trace(kData + "xdmod/accounting-logs.log", o);
  ASSERT_EQ(w.jobs.size(), 4u);
  EXPECT_TRUE(w.meta.warnings.empty());
  EXPECT_EQ(w.jobs[3].gpus, 2);
}

TEST(SacctExport, SplitFieldsDropsWidthsAndBlanks) {
  EXPECT_EQ(traces::split_fields(" jobid, user ,jobname%30,,State"),
            (std::vector<std::string>{"jobid", "user", "jobname", "State"}));
}

TEST(SacctExport, GresAndTresGpuCountsAndTypes) {
  TempDir dir;
  // A header-less export of an older Slurm (GPUs in GRES) and a newer one (typed TRES).
  const std::string path = dir.write(
      "old.txt",
      "1|alice|lab|gpu|2024-01-01T00:00:00|2024-01-01T00:00:10|00:10:00|COMPLETED|2||gpu:2|\n"
      "2|bob|lab|gpu|2024-01-01T00:01:00|2024-01-01T00:01:10|00:10:00|COMPLETED|4|gpu:V100:32||\n"
      "3|carol|lab|gpu|2024-01-01T00:02:00|2024-01-01T00:02:10|00:10:00|COMPLETED|1|gpu:P100:2(IDX:1,3)|gpu:2|\n"
      "4|dan|lab|gpu|2024-01-01T00:03:00|2024-01-01T00:03:10|00:10:00|COMPLETED|1|||billing=2,cpu=2,gres/"
      "gpu:a100=2,node=1\n"
      "5|erin|lab|gpu|2024-01-01T00:04:00|2024-01-01T00:04:10|00:10:00|COMPLETED|1|||gres/gpu=4\n"
      "6|fay|lab|gpu|2024-01-01T00:05:00|2024-01-01T00:05:10|00:10:00|COMPLETED|1|mps:100,gpu||cpu=1\n");
  ImportOptions o;
  o.fields =
      traces::split_fields("JobID,User,Account,Partition,Submit,Start,Elapsed,State,NNodes,AllocGRES,ReqGRES,ReqTRES");
  const auto w = traces::import_trace(path, o);
  ASSERT_EQ(w.jobs.size(), 6u);
  EXPECT_EQ(w.jobs[0].gpus, 4);  // ReqGRES gpu:2 per node x 2 nodes
  EXPECT_EQ(w.jobs[0].gpu_type, 0);
  EXPECT_EQ(w.jobs[1].gpus, 32);  // AllocGRES counts the job
  ASSERT_GT(w.jobs[1].gpu_type, 0);
  EXPECT_EQ(w.gpu_type_names[w.jobs[1].gpu_type - 1], "V100");
  EXPECT_EQ(w.jobs[2].gpus, 2);  // AllocGRES before ReqGRES; the device indices are not a count
  EXPECT_EQ(w.gpu_type_names[w.jobs[2].gpu_type - 1], "P100");
  EXPECT_EQ(w.jobs[3].gpus, 2);
  EXPECT_EQ(w.gpu_type_names[w.jobs[3].gpu_type - 1], "a100");
  EXPECT_EQ(w.jobs[4].gpus, 4);
  EXPECT_EQ(w.jobs[5].gpus, 1);  // "gpu" alone is one
  EXPECT_EQ(w.jobs[5].cpus, 1);
}

TEST(SacctExport, BadGresNamesTheCell) {
  TempDir dir;
  const std::string path =
      dir.write("bad.txt", "1|alice|2024-01-01T00:00:00|2024-01-01T00:00:10|00:10:00|COMPLETED|gpu:V100:x\n");
  ImportOptions o;
  o.fields = traces::split_fields("jobid,user,submit,start,elapsed,state,allocgres");
  EXPECT_EQ(error_of(path, o), path +
                                   ":1:68: AllocGRES (column 7): expected a GRES like \"gpu:2\", \"gpu:V100:4\" or "
                                   "\"gpu:P100:2(IDX:1,3)\", got \"gpu:V100:x\"");
}

TEST(SacctExport, SacctLikeHeaderNamesTheMissingColumns) {
  TempDir dir;
  const std::string path = dir.write("min.txt",
                                     "JobID|User|Start|State|AllocTRES\n"
                                     "1|alice|2024-01-01T00:00:10|COMPLETED|gres/gpu=1\n");
  EXPECT_EQ(error_of(path), path +
                                ":1: header: missing required columns \"Submit\", \"Elapsed\" of the Slurm sacct "
                                "layout (required: JobID, Submit, Start, Elapsed, State)");
}

TEST(SacctExport, HeaderlessExportOfOtherFieldsAsksForTheList) {
  TempDir dir;
  const std::string path =
      dir.write("nohdr.txt", "1|alice|2024-01-01T00:00:00|2024-01-01T00:00:10|00:10:00|COMPLETED\n");
  const std::string e = error_of(path);
  EXPECT_NE(e.find("a header-less sacct export (the first line is a job, 6 fields)"), std::string::npos) << e;
  EXPECT_NE(e.find("`workload.fields`"), std::string::npos) << e;
}

TEST(SacctExport, FieldListWithAnotherFormatIsAnError) {
  ImportOptions o;
  o.format = Format::Swf;
  o.fields = {"jobid"};
  EXPECT_NE(
      error_of(kData + "xdmod/accounting-logs.log", o).find("a field list names the columns of a header-less sacct"),
      std::string::npos);
}

TEST(SacctExport, ScenarioWorkloadFieldsReachTheImporter) {
  const auto s = scenarios::parse_scenario(
      "name: x\ncluster: {pools: [{name: p, nodes: 1, gpus_per_node: 8, gpu_type: A100}]}\npolicy: {name: fifo}\n"
      "workload: {trace: " +
          kData + "xdmod/accounting-logs.log, fields: [jobid, \"jobidraw,cluster\"]}\n",
      "inline.yaml");
  EXPECT_EQ(s.workload.fields, (std::vector<std::string>{"jobid", "jobidraw", "cluster"}));
  const auto t = scenarios::parse_scenario(
      "name: x\ncluster: {pools: [{name: p, nodes: 1, gpus_per_node: 8, gpu_type: A100}]}\npolicy: {name: fifo}\n"
      "workload: {trace: " +
          kData + "xdmod/accounting-logs.log, fields: xdmod}\n",
      "inline.yaml");
  EXPECT_EQ(t.workload.fields, (std::vector<std::string>{"xdmod"}));
}

}  // namespace
