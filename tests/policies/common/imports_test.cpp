// Reading what admins already have (issue #19): sacct exports as sites make them (header-less,
// Open XDMoD's field list, GRES and TRES GPUs). Real public files live in tests/data/imports with
// their source and license.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/pipeline.hpp"
#include "models/workload.hpp"
#include "policies/kueue/kueue.hpp"
#include "policies/kueue/manifests.hpp"
#include "policies/slurm/slurm.hpp"
#include "policies/slurm/slurm_conf.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "tests/temp_dir.hpp"
#include "traces/import.hpp"

using namespace headroom;
using models::TraceStatus;
using traces::Format;
using traces::ImportOptions;

namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/";

// A site's slurm.conf as its cluster and policy, replaying the jobs.sacct beside it.
results::RunResult run_slurm_site(const std::string& dir, const std::string& name) {
  const auto sc = scenarios::parse_scenario(
      "name: " + name +
          "\ncluster: {slurm_conf: slurm.conf}\npolicy: {name: slurm, slurm_conf: slurm.conf}\n"
          "workload: {trace: jobs.sacct}\n",
      dir + "inline.yaml");
  return app::run_scenario(sc).result;
}

using headroom::testing::TempDir;

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
                                ":1: header: missing required column \"Submit\" of the Slurm sacct layout (required: "
                                "Submit, Start)");
  const std::string no_run = dir.write("norun.txt",
                                       "JobID|User|Submit|Start|State|AllocTRES\n"
                                       "1|alice|2024-01-01T00:00:00|2024-01-01T00:00:10|COMPLETED|gres/gpu=1\n");
  EXPECT_EQ(error_of(no_run),
            no_run + ":1: header: the Slurm sacct layout needs the run time: an Elapsed, ElapsedRaw or End column");
}

// Sites export other column sets: no Elapsed but Start and End (or ElapsedRaw), JobIDRaw without
// JobID, TimelimitRaw, AllocCPUS. What is there is read, and one warning says which columns gave what.
TEST(SacctExport, OtherColumnSetsReadAndSayWhichColumnsWereUsed) {
  TempDir dir;
  const std::string path =
      dir.write("site.txt",
                "JobIDRaw|User|Account|Partition|Submit|Start|End|State|AllocCPUS|TimelimitRaw|AllocTRES\n"
                "101|alice|vision|gpu|2024-05-01T10:00:00|2024-05-01T10:05:00|2024-05-01T11:05:30|COMPLETED|16|120|"
                "billing=16,gres/gpu=2,mem=64G,node=1\n"
                "102|bob|nlp|gpu|2024-05-01T10:01:00|2024-05-01T10:06:00|Unknown|RUNNING|8|60|gres/gpu=1\n");
  const auto w = traces::import_trace(path);
  ASSERT_EQ(w.jobs.size(), 1u);
  const models::Job& j = w.jobs[0];
  EXPECT_EQ(j.trace_id, 101);
  EXPECT_EQ(j.gpus, 2);
  EXPECT_EQ(j.cpus, 16);                             // AllocTRES has no cpu= here: AllocCPUS
  EXPECT_EQ(j.runtime, (3600 + 30) * sim::kSecond);  // End - Start
  EXPECT_EQ(j.walltime, 120 * sim::kMinute);         // TimelimitRaw counts minutes
  EXPECT_EQ(j.trace_start, 5 * sim::kMinute);
  EXPECT_EQ(w.meta.skipped, 1);  // 102 is running: no End, no Elapsed
  ASSERT_EQ(w.meta.warnings.size(), 2u);
  EXPECT_EQ(w.meta.warnings[1], "line 3: End unknown (RUNNING) and no Elapsed column: run time unknown, job skipped");
  EXPECT_EQ(
      w.meta.warnings[0],
      "sacct columns used: job JobIDRaw, submit Submit, start Start, run time End - Start, GPUs AllocTRES, tenant "
      "Account (else User), time limit TimelimitRaw, status State");
  const std::string raw = dir.write("raw.txt",
                                    "JobID|User|Submit|Start|ElapsedRaw|State|ReqTRES\n"
                                    "7|carol|2024-05-01T10:00:00|2024-05-01T10:00:00|90|COMPLETED|gres/gpu:a100=4\n");
  const auto r = traces::import_trace(raw);
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].runtime, 90 * sim::kSecond);
  EXPECT_EQ(r.jobs[0].gpus, 4);
  EXPECT_EQ(
      r.meta.warnings.at(0),
      "sacct columns used: job JobID, submit Submit, start Start, run time ElapsedRaw, GPUs ReqTRES, tenant User, "
      "time limit none, status State");
  // Without State (the issue asks only for submit, start, end or elapsed and GPUs): every job's
  // status is unknown and it ends as recorded; a row without a Start is skipped, as a job
  // cancelled before it started is (PENDING cannot be told apart).
  const std::string stateless = dir.write("stateless.txt",
                                          "JobID|User|Submit|Start|End|AllocTRES\n"
                                          "8|dave|2024-05-01T10:00:00|2024-05-01T10:05:00|2024-05-01T11:05:00|"
                                          "gres/gpu=2\n"
                                          "9|dave|2024-05-01T10:01:00|Unknown|Unknown|gres/gpu=1\n");
  const auto n = traces::import_trace(stateless);
  ASSERT_EQ(n.jobs.size(), 1u);
  EXPECT_EQ(n.jobs[0].trace_status, models::TraceStatus::Unknown);
  EXPECT_EQ(n.jobs[0].runtime, sim::kHour);
  EXPECT_EQ(n.jobs[0].trace_start, 5 * sim::kMinute);
  EXPECT_EQ(n.jobs[0].gpus, 2);
  EXPECT_EQ(n.meta.skipped, 1);
  ASSERT_EQ(n.meta.warnings.size(), 2u);
  EXPECT_EQ(n.meta.warnings[1], "line 3: never started (no State), job skipped");
  EXPECT_EQ(n.meta.warnings.at(0),
            "sacct columns used: job JobID, submit Submit, start Start, run time End - Start, GPUs AllocTRES, tenant "
            "User, time limit none, status none (no State column: status unknown)");
}

// Open XDMoD's earlier 25-field exports (no qos): 9.5's list ends reqtres,alloctres,timelimit; the
// one before reqgres,reqtres,timelimit. Open XDMoD's own test log with its qos cells taken out
// reads as the 26-field log does.
TEST(SacctExport, XdmodTwentyFiveFieldExportsAreDetected) {
  std::ifstream in(kData + "xdmod/accounting-logs.log");
  std::string line, without_qos;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t at = 0;
    for (std::size_t bar; (bar = line.find('|', at)) != std::string::npos; at = bar + 1)
      cells.push_back(line.substr(at, bar - at));
    cells.push_back(line.substr(at));
    ASSERT_EQ(cells.size(), 26u);
    cells.erase(cells.begin() + 4);  // qos
    for (std::size_t i = 0; i < cells.size(); ++i) without_qos += (i ? "|" : "") + cells[i];
    without_qos += "\n";
  }
  TempDir dir;
  const auto a = traces::import_trace(kData + "xdmod/accounting-logs.log", keep_cpu());
  const auto b = traces::import_trace(dir.write("xdmod95.log", without_qos), keep_cpu());
  ASSERT_EQ(b.jobs.size(), a.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(b.jobs[i].trace_id, a.jobs[i].trace_id);
    EXPECT_EQ(b.jobs[i].gpus, a.jobs[i].gpus);
    EXPECT_EQ(b.jobs[i].cpus, a.jobs[i].cpus);
    EXPECT_EQ(b.jobs[i].submit, a.jobs[i].submit);
    EXPECT_EQ(b.jobs[i].runtime, a.jobs[i].runtime);
    EXPECT_EQ(b.jobs[i].walltime, a.jobs[i].walltime);
  }
  EXPECT_EQ(b.jobs[3].gpus, 2);
  EXPECT_NE(b.meta.warnings.at(0).find("Open XDMoD's 25-field sacct export of release 9.5"), std::string::npos)
      << b.meta.warnings[0];
  // The older list: a ReqGRES cell ("gpu:2") where 9.5 has ReqTRES, ReqGRES counting per node.
  const std::string old = dir.write(
      "xdmod-old.log",
      "5692623|5692623|ub-hpc|gpu|ccr|ccr|1|alice|1|2016-08-01T06:01:08|2016-08-01T06:01:08|2016-08-01T07:04:09|"
      "2016-08-01T08:04:09|01:00:00|0:0|COMPLETED|2|16|16|64000Mn|gpu:2|cpu=16,mem=64000M,node=2|02:00:00|g[1-2]|"
      "train\n");
  const auto c = traces::import_trace(old);
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].gpus, 4);  // gpu:2 on each of 2 nodes
  EXPECT_EQ(c.jobs[0].runtime, sim::kHour);
  EXPECT_EQ(c.jobs[0].walltime, 2 * sim::kHour);
  EXPECT_NE(c.meta.warnings.at(0).find("25-field sacct export of releases before 9.5"), std::string::npos)
      << c.meta.warnings[0];
}

// Open XDMoD's own 25-field test logs as its repository held them before the qos column came
// (tests/data/imports/xdmod/README.md): 9.5's list (reqtres, alloctres) and the one before it
// (reqgres, reqtres), read as-is with no field list.
TEST(SacctExport, RealXdmodTwentyFiveFieldLogOfRelease95) {
  const auto w = traces::import_trace(kData + "xdmod/accounting-logs-25-fields.log", keep_cpu());
  ASSERT_EQ(w.jobs.size(), 4u);
  EXPECT_EQ(w.meta.skipped, 0);
  EXPECT_EQ(w.meta.warnings.at(0),
            "no header row: read as Open XDMoD's 25-field sacct export of release 9.5 "
            "(jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,"
            "state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname)");
  const models::Job& a = w.jobs[0];
  EXPECT_EQ(a.trace_id, 4103947);
  EXPECT_EQ(w.tenants.name(a.tenant), "anon");
  EXPECT_EQ(w.queues.name(a.queue), "general-compute");
  EXPECT_EQ(a.nodes, 32);
  EXPECT_EQ(a.cpus, 256);
  EXPECT_EQ(a.gpus, 0);
  EXPECT_EQ(a.runtime, 3 * 86400 * sim::kSecond);  // Elapsed 3-00:00:00
  EXPECT_EQ(a.trace_status, TraceStatus::Failed);  // TIMEOUT
  const models::Job& b = w.jobs[1];
  EXPECT_EQ(b.trace_id, 4107166);
  EXPECT_EQ(b.runtime, ((2 * 24 + 22) * 3600 + 3 * 60 + 4) * sim::kSecond);  // 2-22:03:04
  EXPECT_EQ(b.trace_status, TraceStatus::Cancelled);                         // "CANCELLED by 102216"
  EXPECT_EQ(w.jobs[2].runtime, (14 * 3600 + 49) * sim::kSecond);             // 14:00:49
  EXPECT_EQ(w.jobs[2].walltime, (14 * 3600 + 20 * 60) * sim::kSecond);       // 14:20:00
  const models::Job& d = w.jobs[3];
  EXPECT_EQ(d.trace_id, 5692623);
  EXPECT_EQ(d.gpus, 2);  // AllocTRES gres/gpu=2 (ReqTRES empty)
  EXPECT_EQ(w.tenants.name(d.tenant), "ccr");
  EXPECT_EQ(d.trace_status, TraceStatus::Completed);
  // Without keep_cpu_only the three CPU jobs are skipped, as with the 26-field log.
  const auto g = traces::import_trace(kData + "xdmod/accounting-logs-25-fields.log");
  ASSERT_EQ(g.jobs.size(), 1u);
  EXPECT_EQ(g.jobs[0].trace_id, 5692623);
}

// The older list's GPU test log: 24 rows of one job id, each a ReqGRES form (gpu:2, gpu:V100:32,
// hbm:0,gpu:4, gpu:P100:2(IDX:1,3), ...), as Open XDMoD's SlurmShredderTest reads them, one row
// at a time. Its expected output (the .expected.json beside it) is the GPU count Open XDMoD 9.0
// read from ReqGRES alone; sacct's ReqGRES is per node (sbatch --gres), so headroom counts it on
// each of the row's NNodes (8 in every row).
TEST(SacctExport, RealXdmodTwentyFiveFieldGresLogRowByRow) {
  std::ifstream in(kData + "xdmod/accounting-logs-with-gpu-gres-25-fields.log");
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(line);
  std::ifstream ex(kData + "xdmod/accounting-logs-with-gpu-gres-25-fields.expected.json");
  std::vector<int> per_node;
  for (std::string tok; ex >> tok;) {
    std::string digits;
    for (const char c : tok)
      if (c >= '0' && c <= '9') digits += c;
    if (!digits.empty()) per_node.push_back(std::stoi(digits));
  }
  ASSERT_EQ(rows.size(), 24u);
  ASSERT_EQ(per_node.size(), rows.size());
  TempDir dir;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto w = traces::import_trace(dir.write("row" + std::to_string(i) + ".log", rows[i] + "\n"), keep_cpu());
    ASSERT_EQ(w.jobs.size(), 1u) << rows[i];
    EXPECT_EQ(w.jobs[0].gpus, per_node[i] * 8) << "row " << i + 1 << ": " << rows[i];
    EXPECT_EQ(w.jobs[0].nodes, 8);
    EXPECT_EQ(w.jobs[0].runtime, sim::kSecond);  // Elapsed 0-00:00:01
    EXPECT_NE(w.meta.warnings.at(0).find("25-field sacct export of releases before 9.5"), std::string::npos)
        << w.meta.warnings[0];
  }
  // Read whole, the repeated job id is a bad row each time after the first (traces/README.md).
  EXPECT_NE(error_of(kData + "xdmod/accounting-logs-with-gpu-gres-25-fields.log")
                .find(":2:1: JobID (column 1): duplicate job id \"1\" (first at line 1)"),
            std::string::npos);
}

// Real exports with a header row in other column sets, from EPCC's SAFE accounting test data
// (tests/data/imports/safe/README.md): Oxford ARC's (JobIDRaw, AllocGRES, Submit after Start and
// End) and Cirrus's (AllocTRES, running jobs whose End is Unknown, a trailing '|' on every line).
TEST(SacctExport, RealOxfordArcExportWithAllocGres) {
  const auto w = traces::import_trace(kData + "safe/oxford-arc.sacct", keep_cpu());
  ASSERT_EQ(w.jobs.size(), 53u);  // 57 rows, four of them steps (605711.1, ...)
  EXPECT_EQ(w.meta.skipped, 0);
  EXPECT_EQ(w.meta.warnings.at(0),
            "sacct columns used: job JobID, submit Submit, start Start, run time Elapsed, GPUs AllocGRES, tenant "
            "Account (else User), time limit Timelimit, status State");
  int gpu_jobs = 0;
  for (const models::Job& j : w.jobs) gpu_jobs += j.gpus > 0;
  EXPECT_EQ(gpu_jobs, 4);
  const auto find = [&](std::int64_t id) -> const models::Job& {
    for (const models::Job& j : w.jobs)
      if (j.trace_id == id) return j;
    ADD_FAILURE() << "no job " << id;
    return w.jobs[0];
  };
  const models::Job& g = find(605717);  // gpu:2, 3-15:54:02 of 4-03:50:00
  EXPECT_EQ(g.gpus, 2);
  EXPECT_EQ(w.queues.name(g.queue), "gpu");
  EXPECT_EQ(w.tenants.name(g.tenant), "opic-3dem");
  EXPECT_EQ(g.runtime, ((3 * 24 + 15) * 3600 + 54 * 60 + 2) * sim::kSecond);
  EXPECT_EQ(g.walltime, ((4 * 24 + 3) * 3600 + 50 * 60) * sim::kSecond);
  EXPECT_EQ(g.trace_status, TraceStatus::Completed);
  EXPECT_EQ(find(609197).gpus, 1);
  EXPECT_EQ(find(609197).trace_status, TraceStatus::Failed);     // TIMEOUT
  EXPECT_EQ(find(611415).trace_status, TraceStatus::Cancelled);  // "CANCELLED by 4594"
  const models::Job& c = find(605603);                           // 128 CPUs on 8 nodes, no GRES
  EXPECT_EQ(c.gpus, 0);
  EXPECT_EQ(c.nodes, 8);
  // 605711: submitted 11:37:31, started 12:14:11.
  EXPECT_EQ(find(605711).trace_start - find(605711).submit, (36 * 60 + 40) * sim::kSecond);
}

TEST(SacctExport, RealCirrusExportWithRunningJobs) {
  const auto w = traces::import_trace(kData + "safe/cirrus_acct.txt", keep_cpu());
  ASSERT_EQ(w.jobs.size(), 72u);  // 279 rows, 207 of them steps
  EXPECT_EQ(w.meta.warnings.at(0),
            "sacct columns used: job JobID, submit Submit, start Start, run time Elapsed, GPUs AllocTRES, tenant "
            "Account (else User), time limit Timelimit, status State");
  int status[4] = {0, 0, 0, 0};
  for (const models::Job& j : w.jobs) {
    ++status[static_cast<int>(j.trace_status)];
    EXPECT_EQ(j.gpus, 0);  // Cirrus's CPU partition: no gres/gpu in any AllocTRES
  }
  EXPECT_EQ(status[static_cast<int>(TraceStatus::Unknown)], 43);  // RUNNING (End Unknown): Elapsed so far
  EXPECT_EQ(status[static_cast<int>(TraceStatus::Completed)], 16);
  EXPECT_EQ(status[static_cast<int>(TraceStatus::Failed)], 10);
  EXPECT_EQ(status[static_cast<int>(TraceStatus::Cancelled)], 3);
  const models::Job& a = w.jobs[0];
  EXPECT_EQ(a.trace_id, 11999);
  EXPECT_EQ(w.tenants.name(a.tenant), "ec113");
  EXPECT_EQ(w.queues.name(a.queue), "standard");
  EXPECT_EQ(a.cpus, 144);
  EXPECT_EQ(a.nodes, 4);
  EXPECT_EQ(a.runtime, ((5 * 24 + 19) * 3600 + 27 * 60 + 52) * sim::kSecond);  // 5-19:27:52 so far
  EXPECT_EQ(a.walltime, (13 * 24 + 8) * 3600 * sim::kSecond);                  // 13-08:00:00
  EXPECT_EQ(a.trace_start - a.submit, sim::kSecond);
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

// ---- slurm.conf read directly ----

namespace slurm = policies::slurm;

const std::string kSlurm = kData + "slurm/";

std::string param(const policies::PolicyParams& p, const std::string& key) {
  const auto it = p.find(key);
  return it == p.end() ? "(absent)" : it->second.text;
}

TEST(SlurmConf, HostlistsExpandAsSlurmDoes) {
  EXPECT_EQ(slurm::expand_hostlist("gpu[01-03,7],login1"),
            (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu7", "login1"}));
  EXPECT_EQ(slurm::expand_hostlist("n[08-11]"), (std::vector<std::string>{"n08", "n09", "n10", "n11"}));
  EXPECT_EQ(slurm::expand_hostlist("r[1-2]n[0-1]"), (std::vector<std::string>{"r1n0", "r1n1", "r2n0", "r2n1"}));
  // Three brackets of sizes 2, 3 and 2: the last varies fastest, the first slowest.
  EXPECT_EQ(slurm::expand_hostlist("c[1-2]r[0,3-4]n[7-8]"),
            (std::vector<std::string>{"c1r0n7", "c1r0n8", "c1r3n7", "c1r3n8", "c1r4n7", "c1r4n8", "c2r0n7", "c2r0n8",
                                      "c2r3n7", "c2r3n8", "c2r4n7", "c2r4n8"}));
  EXPECT_THROW(slurm::expand_hostlist("a[3-1]"), std::invalid_argument);
  EXPECT_THROW(slurm::expand_hostlist("a[1-2"), std::invalid_argument);
}

TEST(SlurmConf, NodesBecomePoolsByNodeLineAndPartitions) {
  const auto c = slurm::read_slurm_conf(kSlurm + "slurm.conf");
  ASSERT_EQ(c.cluster.pools.size(), 4u);
  const auto& p = c.cluster.pools;
  // host0-3 are in debug and the drained old partition, host4-8 and 18-25 in debug only.
  EXPECT_EQ(p[0].name, "host0-3");
  EXPECT_EQ(p[0].nodes, 4);
  EXPECT_EQ(p[1].name, "host4-8_18-25");
  EXPECT_EQ(p[1].nodes, 13);
  EXPECT_EQ(p[2].name, "host9-17");
  EXPECT_EQ(p[2].nodes, 9);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p[i].gpus_per_node, 4);
    EXPECT_EQ(p[i].gpu_type, "v100");
    EXPECT_EQ(p[i].cpus_per_node, 2);  // NodeName=DEFAULT Procs=2
  }
  EXPECT_EQ(p[3].name, "host26");
  EXPECT_EQ(p[3].gpus_per_node, 2);
  EXPECT_EQ(p[3].gpu_type, "a100");  // from gres.conf
  EXPECT_EQ(c.cpu_only_nodes, 1);    // login1
}

TEST(SlurmConf, SchedulingKeysBecomePolicyParameters) {
  const auto c = slurm::read_slurm_conf(kSlurm + "slurm.conf");
  EXPECT_EQ(param(c.params, "PriorityType"), "priority/multifactor");
  EXPECT_EQ(param(c.params, "PriorityUsageResetPeriod"), "MONTHLY");
  EXPECT_EQ(param(c.params, "PriorityWeightAssoc"), "500");
  EXPECT_EQ(param(c.params, "SchedulerParameters"), "bf_interval=60,bf_window=2880,default_queue_depth=200");
  EXPECT_EQ(param(c.params, "cred_expire"), "120");
  EXPECT_EQ(param(c.params, "PreemptMode"), "REQUEUE");
  EXPECT_EQ(param(c.params, "ClusterName"), "(absent)");  // accepted, changes nothing
  EXPECT_EQ(param(c.params, "partitions.debug.Nodes"), "[host0-3, host4-8_18-25]");
  EXPECT_EQ(param(c.params, "partitions.debug.Default"), "YES");
  EXPECT_EQ(param(c.params, "partitions.debug.MaxTime"), "30");  // PartitionName=DEFAULT
  EXPECT_EQ(param(c.params, "partitions.batch.Nodes"), "[host9-17, host26]");
  EXPECT_EQ(param(c.params, "partitions.batch.PriorityTier"), "2");
  EXPECT_EQ(param(c.params, "partitions.old.State"), "DRAIN");
  EXPECT_EQ(param(c.params, "nodes.host9-17.Weight"), "16");
  EXPECT_EQ(param(c.params, "nodes.host26.Weight"), "32");
  const auto& at = c.params.at("PriorityWeightAssoc");
  EXPECT_EQ(at.file, kSlurm + "slurm.conf");
  EXPECT_EQ(at.line, 22);
  // Every key is one the slurm policy reads.
  const slurm::Config config = slurm::parse_config(c.params);
  EXPECT_EQ(config.usage_reset, slurm::ResetPeriod::Monthly);
  EXPECT_EQ(config.w_assoc, 500);
  EXPECT_EQ(config.default_queue_depth, 200);
  ASSERT_EQ(config.partitions.size(), 3u);
}

TEST(SlurmConf, UnmodelledSchedulingKeysWarnOnce) {
  const auto c = slurm::read_slurm_conf(kSlurm + "slurm.conf");
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0], kSlurm + "slurm.conf:26: DefMemPerCPU=4000 changes scheduling and is not modelled");
  EXPECT_EQ(c.warnings[1],
            kSlurm + "slurm-nodes.conf:6: partition field maxnodes=26 changes scheduling and is not modelled");
}

TEST(SlurmConf, RealSiteBioMedIA) {
  // Imperial College BioMedIA's slurm.conf settings as published (tests/data/imports/slurm-site/README.md).
  const std::string conf = kData + "slurm-site/slurm.conf";
  const auto c = slurm::read_slurm_conf(conf);
  ASSERT_EQ(c.cluster.pools.size(), 3u);  // GPU nodes only (their memory and cores differ)
  std::int64_t gpus = 0, nodes = 0;
  for (const auto& p : c.cluster.pools) {
    gpus += std::int64_t{p.nodes} * p.gpus_per_node;
    nodes += p.nodes;
  }
  EXPECT_EQ(nodes, 3);
  EXPECT_EQ(gpus, 20);
  EXPECT_EQ(param(c.params, "partitions.gpus.MaxTime"), "10080");
  EXPECT_EQ(param(c.params, "partitions.long.Nodes"), "(absent)");  // no GPU nodes
  EXPECT_EQ(param(c.params, "SchedulerType"), "sched/builtin");
  EXPECT_EQ(param(c.params, "PriorityWeightFairshare"), "10000");
  EXPECT_EQ(param(c.params, "PriorityFavorSmall"), "YES");
  ASSERT_EQ(c.warnings.size(), 5u);
  EXPECT_EQ(c.warnings[0], conf + ":29: DefMemPerCPU=2048 changes scheduling and is not modelled");
  EXPECT_EQ(c.warnings[1], conf +
                               ":52: AccountingStorageEnforce=associations,limits changes scheduling and is not "
                               "modelled");
  EXPECT_EQ(c.warnings[2], conf + ":94: partition long has no GPU nodes; left out");
  const slurm::Config config = slurm::parse_config(c.params);
  ASSERT_EQ(config.partitions.size(), 1u);
  // And it runs: two 8-GPU jobs take monal01-02, the 4-GPU job monal03; the third 8-GPU job
  // waits for one of them (20 min), and under sched/builtin nothing passes it.
  const auto r = run_slurm_site(kData + "slurm-site/", "biomedia");
  ASSERT_EQ(r.jobs.size(), 4u);
  for (const auto& j : r.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[2].start, 20 * sim::kMinute);
  EXPECT_EQ(r.jobs[3].start, 20 * sim::kMinute);  // FIFO: behind the waiting 8-GPU job
}

TEST(SlurmConf, AwsParallelClusterRendered) {
  // AWS ParallelCluster's slurm.conf and the partition files its generator writes
  // (tests/data/imports/parallelcluster/README.md): lower-case `include`, NodeSet records named by
  // PartitionName Nodes=, State=CLOUD nodes, SchedulerParameters the policy does not model.
  const std::string dir = kData + "parallelcluster/";
  const auto c = slurm::read_slurm_conf(dir + "slurm.conf");
  ASSERT_EQ(c.cluster.pools.size(), 3u);  // the gpu partition's three NodeName lines
  const auto& p = c.cluster.pools;
  EXPECT_EQ(p[0].name, "gpu-st-gpu-g38xlarge-1");
  EXPECT_EQ(p[0].nodes, 1);
  EXPECT_EQ(p[0].gpus_per_node, 2);
  EXPECT_EQ(p[0].gpu_type, "m60");
  EXPECT_EQ(p[0].cpus_per_node, 16);
  EXPECT_EQ(p[1].name, "gpu-dy-gpu-g38xlarge-1-4");
  EXPECT_EQ(p[1].nodes, 4);
  EXPECT_EQ(p[1].gpus_per_node, 2);
  EXPECT_EQ(p[2].name, "gpu-dy-gpu-p3dn24xlarge-1-10");
  EXPECT_EQ(p[2].nodes, 10);
  EXPECT_EQ(p[2].gpus_per_node, 8);
  EXPECT_EQ(p[2].gpu_type, "v100");
  EXPECT_EQ(p[2].cpus_per_node, 48);
  EXPECT_EQ(c.cpu_only_nodes, 20);  // multiple_spot 15 + efa 5
  EXPECT_EQ(param(c.params, "partitions.gpu.Nodes"),
            "[gpu-st-gpu-g38xlarge-1, gpu-dy-gpu-g38xlarge-1-4, gpu-dy-gpu-p3dn24xlarge-1-10]");
  EXPECT_EQ(param(c.params, "SchedulerParameters"), "(absent)");  // nohold_on_prolog_fail only
  EXPECT_EQ(param(c.params, "cred_expire"), "70");
  ASSERT_EQ(c.warnings.size(), 4u);
  EXPECT_EQ(c.warnings[0], dir + "slurm.conf:54: EnforcePartLimits=ALL changes scheduling and is not modelled");
  EXPECT_EQ(c.warnings[1], dir +
                               "pcluster/slurm_parallelcluster_multiple_spot_partition.conf:3: State=CLOUD nodes "
                               "are counted as powered up: power saving (a node booted for a job, ResumeTimeout, "
                               "SuspendTime) is not modelled");
  // And it runs: ten 8-GPU jobs take the ten p3dn nodes for an hour; the eleventh waits for one;
  // the 2-GPU job and the two-node 4-GPU job go to the g3 nodes at once (backfill passes them).
  const auto r = run_slurm_site(dir, "pcluster");
  ASSERT_EQ(r.jobs.size(), 13u);
  for (const auto& j : r.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r.jobs[i].start, 0);
  EXPECT_EQ(r.jobs[10].start, 60 * sim::kMinute);
  EXPECT_EQ(r.jobs[11].start, 6 * sim::kMinute);  // at its submit time
  EXPECT_EQ(r.jobs[12].start, 7 * sim::kMinute);
}

TEST(SlurmConf, NodeSetErrorsNameFileAndLine) {
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4 Feature=a100\nNodeSet=s\nPartitionName=p Nodes=s\n");
  try {
    slurm::read_slurm_conf(conf);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), conf + ":2: NodeSet s: expected Nodes= or Feature= (one of them)");
  }
  // Feature= selects the nodes that list the feature.
  const std::string feat = dir.write("feat.conf",
                                     "NodeName=g[1-2] Gres=gpu:4 Feature=a100,ib\nNodeName=h1 Gres=gpu:2\n"
                                     "NodeSet=s Feature=ib\nPartitionName=p Nodes=s\n");
  const auto c = slurm::read_slurm_conf(feat);
  EXPECT_EQ(param(c.params, "partitions.p.Nodes"), "[g1-2]");
}

TEST(SlurmConf, ErrorsNameFileAndLine) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "ClusterName=x\nNodeName=g[1-2] Gres=gpu:4 Weight=heavy\n");
  try {
    slurm::read_slurm_conf(conf);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), conf + ":2: Weight: expected an integer from 0 to 4294967295, got \"heavy\"");
  }
  // A node name with a number too long to count with is a name like any other.
  const std::string longname = dir.write("long.conf", "NodeName=n123456789012345678901234 Gres=gpu:2\n");
  ASSERT_EQ(slurm::read_slurm_conf(longname).cluster.pools.size(), 1u);
  EXPECT_EQ(slurm::read_slurm_conf(longname).cluster.pools[0].name, "n123456789012345678901234");
  const std::string loop = dir.write("loop.conf", "Include loop.conf\n");
  try {
    slurm::read_slurm_conf(loop);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("loop.conf:1: Include loop.conf: the file includes itself"), std::string::npos)
        << e.what();
  }
}

// Gres= items read as Debian's slurmctld 22.05 reads them, checked against the daemon with
// `scontrol show node` (2026-12-07): Gres=gpu:-4 shows as gpu:-4:1 (a type "-4", one GPU: a count
// must start with a digit), gpu::4 as gpu:4, gpu:4k as gpu:4K (suffix_mult's k: 4,096, over the
// per-node cap here, refused). Forms the daemon keeps as opaque text (gpu:4.5, gpu:4x, gpu:1e30, gpu:4:)
// are refused here with the line, since no GPU count can be read from them.
TEST(SlurmConf, GresCountsReadAsSlurmctldReadsThem) {
  TempDir dir;
  auto pool_of = [&](const std::string& gres) {
    const auto c = slurm::read_slurm_conf(dir.write("g.conf", "NodeName=n0 CPUs=8 Gres=" + gres + "\n"));
    EXPECT_EQ(c.cluster.pools.size(), 1u) << gres;
    return c.cluster.pools.at(0);
  };
  EXPECT_EQ(pool_of("gpu:-4").gpus_per_node, 1);
  EXPECT_EQ(pool_of("gpu:-4").gpu_type, "-4");
  EXPECT_EQ(pool_of("gpu::4").gpus_per_node, 4);
  EXPECT_EQ(pool_of("gpu:a100:2,gpu:a100:2").gpus_per_node, 4);
  auto error_of = [&](const std::string& gres) -> std::string {
    const std::string conf = dir.write("bad.conf", "ClusterName=x\nNodeName=n0 CPUs=8 Gres=" + gres + "\n");
    try {
      slurm::read_slurm_conf(conf);
    } catch (const sim::InputError& e) {
      return std::string(e.what()).substr(conf.size());
    }
    return "no error";
  };
  EXPECT_EQ(error_of("gpu:4k"),
            ":2: Gres: \"gpu:4k\" gives a node more than 1024 GPUs (the most a scenario's pool may have per node)");
  for (const std::string bad : {"gpu:4.5", "gpu:4x", "gpu:1e30", "gpu:4:"})
    EXPECT_EQ(error_of(bad), ":2: Gres: expected a GPU count like gpu:8 or gpu:a100:8, got \"" + bad + "\"");
}
TEST(SlurmConf, ScenarioRunsFromTheSitesOwnFiles) {
  const auto sc = scenarios::parse_scenario(
      "name: site\ncluster: {slurm_conf: slurm.conf}\npolicy: {name: slurm, slurm_conf: slurm.conf}\n"
      "workload: {trace: jobs.sacct}\n",
      kSlurm + "inline.yaml");
  ASSERT_EQ(sc.cluster.pools.size(), 4u);
  EXPECT_EQ(sc.cluster.total_gpus(), 26 * 4 + 2);
  EXPECT_EQ(param(sc.policy.params, "slurm_conf"), "(absent)");
  EXPECT_EQ(sc.warnings.size(), 2u);
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 4u);
  EXPECT_EQ(r.jobs[0].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[1].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[1].pool, 2);  // batch's v100 nodes
  // -p debug,batch: batch, the higher PriorityTier, runs it.
  EXPECT_EQ(r.jobs[2].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[2].pool, 2);
  // The drained partition takes no job.
  EXPECT_EQ(r.jobs[3].state, static_cast<std::uint8_t>(models::JobState::Rejected));
}

TEST(SlurmConf, DownPartitionQueuesButStartsNothing) {
  TempDir dir;
  dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:a100:8\nPartitionName=main Nodes=ALL State=DOWN Default=YES\n");
  dir.write("jobs.sacct",
            "JobID|User|Partition|Submit|Start|Elapsed|State|AllocTRES\n"
            "1|alice|main|2024-05-01T10:00:00|2024-05-01T10:00:00|00:20:00|COMPLETED|gres/gpu=8\n");
  const std::string path = dir.write("s.yaml",
                                     "name: s\ncluster: {slurm_conf: slurm.conf}\npolicy: {name: slurm, slurm_conf: "
                                     "slurm.conf}\nworkload: {trace: jobs.sacct}\nhorizon: 1d\n");
  const auto r = app::run_scenario(scenarios::load_scenario(path)).result;
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].state, static_cast<std::uint8_t>(models::JobState::Unfinished));
  EXPECT_EQ(r.jobs[0].start, -1);
}

TEST(SlurmConf, SacctmgrQosBecomesQosParameters) {
  const auto q = slurm::read_sacctmgr_qos(kSlurm + "qos.txt");
  EXPECT_EQ(param(q.params, "qos.high.Priority"), "100");
  EXPECT_EQ(param(q.params, "qos.high.Preempt"), "normal");
  EXPECT_EQ(param(q.params, "qos.high.GraceTime"), "120");
  EXPECT_EQ(param(q.params, "qos.high.PreemptExemptTime"), "00:10:00");
  EXPECT_EQ(param(q.params, "qos.high.UsageFactor"), "2.000000");
  EXPECT_EQ(param(q.params, "qos.normal.Priority"), "0");
  EXPECT_EQ(param(q.params, "qos.high.MaxJobsPerUser"), "4");
  EXPECT_EQ(param(q.params, "qos.high.MaxGPUsPerUser"), "8");
  ASSERT_EQ(q.warnings.size(), 2u);
  EXPECT_EQ(q.warnings[0],
            kSlurm + "qos.txt:3: QOS grptres=gres/gpu=16 (QOS high) changes scheduling and is not modelled");
  EXPECT_EQ(q.warnings[1],
            kSlurm + "qos.txt:3: QOS MaxTRESPU=cpu=64 (QOS high) changes scheduling and is not modelled (gres/gpu is)");
  const slurm::Config config = slurm::parse_config(q.params);
  ASSERT_EQ(config.qos.size(), 2u);
  EXPECT_EQ(config.limits.qos.at("high").jobs, 4);
  EXPECT_EQ(config.limits.qos.at("high").gpus, 8);
}

TEST(SlurmConf, SacctmgrQosOfPerlmutterGivesMaxJobsPerUser) {
  // Real `sacctmgr show qos -P` output (tests/data/imports/slurm/README.md): gpu_debug allows a
  // user 2 running jobs; MaxTRES (per job), MaxWall, MaxSubmitPU and Flags are not modelled.
  const auto q = slurm::read_sacctmgr_qos(kSlurm + "qos-perlmutter.txt");
  EXPECT_EQ(param(q.params, "qos.gpu_debug.MaxJobsPerUser"), "2");
  EXPECT_EQ(param(q.params, "qos.gpu_debug.Priority"), "69119");
  EXPECT_EQ(param(q.params, "qos.gpu_regular.MaxJobsPerUser"), "(absent)");
  EXPECT_EQ(param(q.params, "qos.gpu_shared.MaxGPUsPerUser"), "(absent)") << "gres/gpu=2 there is MaxTRES, per job";
  const slurm::Config config = slurm::parse_config(q.params);
  ASSERT_EQ(config.limits.qos.size(), 1u);
  EXPECT_EQ(config.limits.qos.at("gpu_debug").jobs, 2);
  EXPECT_EQ(config.limits.qos.at("gpu_debug").gpus, 0);
}

TEST(SlurmConf, SshareGivesTheTreeAndSeedsUsage) {
  const auto sh = slurm::read_sshare(kSlurm + "sshare.txt");
  EXPECT_EQ(param(sh.params, "accounts.vision.parent"), "root");
  EXPECT_EQ(param(sh.params, "accounts.vision.shares"), "3");
  EXPECT_EQ(param(sh.params, "accounts.vision.users"), "[alice]");
  EXPECT_EQ(param(sh.params, "accounts.nlp.shares"), "1");
  EXPECT_EQ(param(sh.params, "usage.alice"), "3000000");
  EXPECT_EQ(param(sh.params, "usage.nlp"), "600000");  // no user row holds it
  EXPECT_EQ(param(sh.params, "usage.vision"), "(absent)");
  const slurm::Config config = slurm::parse_config(sh.params);
  EXPECT_EQ(config.raw_usage.at("alice"), 3000000);
  ASSERT_EQ(config.accounts.size(), 2u);
}

TEST(SlurmConf, SeededUsageOrdersTheQueue) {
  // One node of 8 GPUs, two 8-GPU jobs submitted together: without usage, FIFO by submit order
  // (vision first); with sshare's usage, nlp (less used) starts first.
  TempDir dir;
  dir.write("slurm.conf",
            "NodeName=g1 Gres=gpu:8\nPartitionName=main Nodes=ALL Default=YES\nPriorityType=priority/multifactor\n"
            "PriorityWeightFairshare=10000\nPriorityDecayHalfLife=0\n");
  dir.write("jobs.sacct",
            "JobID|User|Account|Partition|Submit|Start|Elapsed|State|AllocTRES\n"
            "1|alice|vision|main|2024-05-01T10:00:00|2024-05-01T10:00:00|01:00:00|COMPLETED|gres/gpu=8\n"
            "2|bob|nlp|main|2024-05-01T10:00:00|2024-05-01T10:00:00|01:00:00|COMPLETED|gres/gpu=8\n");
  dir.write("sshare.txt", "Account|User|RawShares|RawUsage\nroot|||1000\n vision||1|900\n nlp||1|100\n");
  const std::string base = "name: s\ncluster: {slurm_conf: slurm.conf}\nworkload: {trace: jobs.sacct}\n";
  const std::string plain = dir.write("a.yaml", base + "policy: {name: slurm, slurm_conf: slurm.conf}\n");
  const std::string seeded =
      dir.write("b.yaml", base + "policy: {name: slurm, slurm_conf: slurm.conf, sshare: sshare.txt}\n");
  const auto a = app::run_scenario(scenarios::load_scenario(plain)).result;
  const auto b = app::run_scenario(scenarios::load_scenario(seeded)).result;
  ASSERT_EQ(a.jobs.size(), 2u);
  ASSERT_EQ(b.jobs.size(), 2u);
  EXPECT_LT(a.jobs[0].start, a.jobs[1].start);
  EXPECT_GT(b.jobs[0].start, b.jobs[1].start);
  EXPECT_EQ(b.jobs[0].start - b.jobs[1].start, 3600 * 1000);
}

TEST(SlurmConf, UsageResetPeriodsOfMonthsQuartersYearsAreAccepted) {
  for (const char* period : {"MONTHLY", "QUARTERLY", "YEARLY"}) {
    policies::PolicyParams p;
    p["PriorityUsageResetPeriod"] = policies::ParamValue{period, "x", 1, 1};
    EXPECT_NO_THROW(slurm::parse_config(p)) << period;
  }
  policies::PolicyParams bad;
  bad["PriorityUsageResetPeriod"] = policies::ParamValue{"HOURLY", "x", 1, 1};
  EXPECT_THROW(slurm::parse_config(bad), sim::InputError);
}

// ---- Kueue manifests read directly ----

const std::string kKueue = kData + "kueue/";

models::ClusterSpec pools(std::initializer_list<const char*> names) {
  models::ClusterSpec c;
  for (const char* n : names) {
    models::NodePool p;
    p.name = n;
    p.nodes = 2;
    p.gpus_per_node = 8;
    p.gpu_type = "A100";
    c.pools.push_back(p);
  }
  return c;
}

TEST(KueueManifests, UpstreamSingleClusterQueueSetup) {
  const auto m = policies::kueue::read_manifests({kKueue + "single-clusterqueue-setup.yaml"}, pools({"p"}), {});
  EXPECT_EQ(param(m.params, "resourceFlavors.default-flavor.pools"), "[p]");  // no nodeLabels: every pool
  EXPECT_EQ(param(m.params, "clusterQueues.cluster-queue.resources.default-flavor.cpu.nominalQuota"), "9");
  EXPECT_EQ(param(m.params, "clusterQueues.cluster-queue.resources.default-flavor.memory.nominalQuota"), "36Gi");
  EXPECT_EQ(param(m.params, "clusterQueues.cluster-queue.namespaces"), "[default]");
  const auto& at = m.params.at("clusterQueues.cluster-queue.resources.default-flavor.cpu.nominalQuota");
  EXPECT_EQ(at.line, 18);
  EXPECT_EQ(at.column, 23);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_NO_THROW(policies::kueue::parse_config(m.params));
}

TEST(KueueManifests, NodeLabelsSelectPoolsAndTopologyNamesLevels) {
  const policies::kueue::PoolLabels labels = {{}, {{"cloud.provider.com/node-group", "tas-group"}}};
  const auto m = policies::kueue::read_manifests({kKueue + "sample-queues.yaml"}, pools({"a", "b"}), labels);
  EXPECT_EQ(param(m.params, "resourceFlavors.tas-flavor.pools"), "[b]");
  EXPECT_EQ(param(m.params, "clusterQueues.tas-cluster-queue.namespaces"), "[story-large-podgroup]");
  // The Topology's one level, a rack label, names cluster.topology's leaf switches (level 1).
  EXPECT_EQ(param(m.params, "topologies.racks.levels"), "[cloud.provider.com/rack]");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("topologyName"), std::string::npos) << m.warnings[0];
  auto p = m.params;
  p["topologyAwareScheduling.podsetRequiredTopology"] = {"cloud.provider.com/rack", "q.yaml", 3, 5};
  const auto c = policies::kueue::parse_config(p);
  EXPECT_EQ(c.tas_level, 1);
  EXPECT_TRUE(c.tas_required);
  // Kueue's usual three levels: the hostname level is one node, the rack level the leaf switches.
  p["topologies.dc.levels"] = {
      "[cloud.provider.com/topology-block, cloud.provider.com/topology-rack, "
      "kubernetes.io/hostname]",
      "t.yaml", 4, 3};
  p.erase("topologyAwareScheduling.podsetRequiredTopology");
  p["topologyAwareScheduling.podsetPreferredTopology"] = {"cloud.provider.com/topology-block", "q.yaml", 3, 5};
  EXPECT_EQ(policies::kueue::parse_config(p).tas_level, 2);
  EXPECT_FALSE(policies::kueue::parse_config(p).tas_required);
  p["topologyAwareScheduling.podsetPreferredTopology"].text = "cloud.provider.com/topology-rack";
  EXPECT_EQ(policies::kueue::parse_config(p).tas_level, 1);
  p["topologyAwareScheduling.podsetPreferredTopology"].text = "kubernetes.io/hostname";
  EXPECT_THROW(policies::kueue::parse_config(p), sim::InputError);
  p["topologyAwareScheduling.podsetPreferredTopology"].text = "zone";
  try {
    policies::kueue::parse_config(p);
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("q.yaml:3:5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got \"zone\""), std::string::npos) << e.what();
  }
}

TEST(KueueManifests, TopologyWithoutLevelsNamesTheLine) {
  TempDir dir;
  const std::string f = dir.write("topo.yaml",
                                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: dc}\n"
                                  "spec:\n  levels:\n  - name: rack\n");
  try {
    policies::kueue::read_manifests({f}, pools({"a"}), {});
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), f + ":6:5: Topology dc: each level needs a nodeLabel");
  }
}

TEST(KueueManifests, UnmatchedNodeLabelsNameTheFlavor) {
  try {
    policies::kueue::read_manifests({kKueue + "sample-queues.yaml"}, pools({"a"}), {});
    FAIL() << "no error";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), kKueue +
                                         "sample-queues.yaml:25:5: ResourceFlavor tas-flavor: no pool's labels match "
                                         "its nodeLabels; give the pools `labels:` as the nodes carry them");
  }
}

TEST(KueueManifests, ScenarioRunsFromAKubectlList) {
  const auto sc = scenarios::parse_scenario(
      "name: site\n"
      "cluster: {pools: [{name: a100, nodes: 2, gpus_per_node: 8, gpu_type: A100,\n"
      "  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}]}\n"
      "policy: {name: kueue, manifests: [gpu-site.yaml]}\n"
      "workload: {trace: ../slurm/jobs.sacct}\n",
      kKueue + "inline.yaml");
  EXPECT_EQ(param(sc.policy.params, "clusterQueues.vision.resources.a100.gpu.borrowingLimit"), "8");
  EXPECT_EQ(param(sc.policy.params, "clusterQueues.vision.cohort"), "research");
  EXPECT_EQ(param(sc.policy.params, "clusterQueues.vision.preemption.reclaimWithinCohort"), "Any");
  EXPECT_EQ(param(sc.policy.params, "clusterQueues.nlp.namespaces"), "[nlp]");
  ASSERT_EQ(sc.warnings.size(), 1u);
  EXPECT_EQ(
      sc.warnings[0],
      kKueue + "gpu-site.yaml:37: resource pods is not modelled (gpu, cpu and memory are); its quota is left out");
  const auto r = app::run_scenario(sc).result;
  ASSERT_EQ(r.jobs.size(), 4u);
  for (const auto& j : r.jobs) EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
}

TEST(SiteFiles, OneScenarioComparesTheSlurmAndKueueSites) {
  // headroom compare --policies slurm,kueue: each policy reads its own site's files. The cluster
  // is the Slurm site's (the partitions of its slurm.conf name its nodes, which must be pools of
  // the scenario); the Kueue manifests here select no nodes by label (Kueue's own sample).
  const auto sc = scenarios::parse_scenario(
      "name: both\n"
      "cluster: {slurm_conf: slurm.conf}\n"
      "policy: {name: fifo}\n"
      "policies:\n"
      "  kueue: {manifests: [../kueue/single-clusterqueue-setup.yaml]}\n"
      "  slurm: {slurm_conf: slurm.conf, sacctmgr_qos: qos.txt, sshare: sshare.txt}\n"
      "workload: {trace: jobs.sacct}\n",
      kSlurm + "inline.yaml");
  ASSERT_EQ(sc.policy_overrides.size(), 2u);
  EXPECT_EQ(sc.policy_overrides[0].name, "kueue");
  EXPECT_EQ(param(sc.policy_overrides[0].params, "clusterQueues.cluster-queue.namespaces"), "[default]");
  EXPECT_EQ(param(sc.policy_overrides[0].params, "manifests"), "(absent)");
  EXPECT_EQ(sc.policy_overrides[1].name, "slurm");
  EXPECT_EQ(param(sc.policy_overrides[1].params, "qos.high.Priority"), "100");
  EXPECT_EQ(param(sc.policy_overrides[1].params, "usage.alice"), "3000000");
  EXPECT_EQ(param(sc.policy_overrides[1].params, "PriorityWeightAssoc"), "500");
}

}  // namespace
