// Importers of Slurm sacct, Kubernetes pod lists, Acme and PAI 2020 traces, and the synthetic
// generator. Hand-written samples in the exact published layouts live in tests/data/traces.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/workload.hpp"
#include "sim/errors.hpp"
#include "temp_dir.hpp"
#include "traces/import.hpp"
#include "traces/synthetic.hpp"

using namespace headroom;
using models::JobKind;
using models::TraceStatus;
using traces::Format;
using traces::ImportOptions;

namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/traces/";

using headroom::testing::TempDir;

ImportOptions with(Format f, bool keep_cpu_only = false) {
  ImportOptions o;
  o.format = f;
  o.keep_cpu_only = keep_cpu_only;
  return o;
}

sim::InputError import_error(const std::string& path, const ImportOptions& options = {}) {
  try {
    traces::import_trace(path, options);
  } catch (const sim::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for " << path;
  return sim::InputError("none");
}

std::vector<std::int64_t> ids(const models::Workload& w) {
  std::vector<std::int64_t> out;
  for (const auto& j : w.jobs) out.push_back(j.trace_id);
  return out;
}

constexpr sim::Tick s(std::int64_t seconds) { return seconds * sim::kSecond; }

std::string gpu_type(const models::Workload& w, const models::Job& j) {
  return j.gpu_type == 0 ? std::string() : w.gpu_type_names.at(j.gpu_type - 1);
}

const std::string kSacctHeader =
    "JobID|User|Account|Partition|QOS|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|State|NodeList\n";

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names and detection

TEST(MoreFormats, NamesAndDetection) {
  for (const char* name : {"sacct", "kubernetes", "acme", "pai"}) {
    const auto f = traces::parse_format(name);
    ASSERT_TRUE(f) << name;
    EXPECT_EQ(traces::to_string(*f), name);
  }
  EXPECT_EQ(traces::detect_format(kData + "sacct_sample.txt"), Format::Sacct);
  EXPECT_EQ(traces::detect_format(kData + "kube_pods.json"), Format::Kubernetes);
  EXPECT_EQ(traces::detect_format(kData + "acme_seren.csv"), Format::Acme);
  EXPECT_EQ(traces::detect_format(kData + "acme_kalos.csv"), Format::Acme);
  EXPECT_EQ(traces::detect_format(kData + "pai/pai_task_table.csv"), Format::Pai);
  EXPECT_EQ(traces::detect_format(kData + "pai/pai_job_table.csv"), Format::Pai);
  // The old layouts are still told apart.
  EXPECT_EQ(traces::detect_format(kData + "helios_full.csv"), Format::Helios);
  EXPECT_EQ(traces::detect_format(kData + "jobs.csv"), Format::Csv);
  TempDir tmp;
  // `sacct --parsable` ends every line with a '|'.
  EXPECT_EQ(traces::detect_format(tmp.write("acct", "JobID|Submit|Start|Elapsed|State|AllocTRES|User|\n")),
            Format::Sacct);
  EXPECT_EQ(traces::detect_format(tmp.write("pods", "\n  {\"kind\": \"PodList\", \"items\": []}\n")),
            Format::Kubernetes);
  EXPECT_EQ(
      traces::detect_format(tmp.write(
          "tasks.txt", "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n")),
      Format::Pai);
}

// ---------------------------------------------------------------------------------------------
// Slurm sacct

TEST(Sacct, SampleExactValues) {
  const auto w = traces::import_trace(kData + "sacct_sample.txt");
  EXPECT_EQ(w.meta.format, "sacct");
  EXPECT_EQ(w.meta.rows, 14);  // steps are not rows
  EXPECT_EQ(w.meta.skipped, 2);
  ASSERT_EQ(w.meta.warnings.size(), 2u);
  EXPECT_EQ(w.meta.warnings[0], "line 19: never started (CANCELLED), job skipped");
  EXPECT_EQ(w.meta.warnings[1], "line 20: CPU job (no gres/gpu in the TRES), job skipped");
  EXPECT_EQ(w.meta.unix_start, 1714557300);  // 2024-05-01T09:55:00Z, the earliest Submit
  EXPECT_EQ(ids(w),
            (std::vector<std::int64_t>{1003, 1001, 1002, 1005, 1006, 1004, 1004, 1004, 1007, 1009, 1010, 1013, 1014}));
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"vision", "nlp", "carol", "physics"}));
  EXPECT_EQ(w.queues.names(), (std::vector<std::string>{"gpu", "debug", "cpu"}));
  EXPECT_EQ(w.qos.names(), (std::vector<std::string>{"normal", "high"}));
  EXPECT_EQ(w.gpu_type_names, (std::vector<std::string>{"a100", "v100", "h100"}));

  const auto& c = w.jobs[0];  // 1003: Account empty -> User; Timelimit MM:SS; CANCELLED by uid
  EXPECT_EQ(w.tenants.name(c.tenant), "carol");
  EXPECT_EQ(w.queues.name(c.queue), "debug");
  EXPECT_EQ(c.submit, 0);
  EXPECT_EQ(c.trace_start, s(10));
  EXPECT_EQ(c.trace_end, s(70));
  EXPECT_EQ(c.runtime, s(60));
  EXPECT_EQ(c.walltime, s(1800));
  EXPECT_EQ(c.gpus, 1);
  EXPECT_EQ(c.memory_mib, 16000);
  EXPECT_EQ(c.priority, 100);
  EXPECT_EQ(c.trace_status, TraceStatus::Cancelled);

  const auto& a = w.jobs[1];  // 1001: typed and untyped gres/gpu
  EXPECT_EQ(a.submit, s(300));
  EXPECT_EQ(a.trace_start, s(330));
  EXPECT_EQ(a.trace_end, s(3930));
  EXPECT_EQ(a.runtime, s(3600));
  EXPECT_EQ(a.walltime, s(7200));
  EXPECT_EQ(a.gpus, 4);
  EXPECT_EQ(gpu_type(w, a), "a100");
  EXPECT_EQ(a.cpus, 16);
  EXPECT_EQ(a.memory_mib, 131072);
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.priority, 4294);
  EXPECT_EQ(a.trace_status, TraceStatus::Completed);
  EXPECT_EQ(a.kind, JobKind::Batch);

  const auto& b = w.jobs[2];  // 1002: Partition is the queue, QOS its own field, D-HH:MM:SS, TIMEOUT
  EXPECT_EQ(w.queues.name(b.queue), "gpu");
  ASSERT_NE(b.qos, models::kNone);
  EXPECT_EQ(w.qos.name(b.qos), "high");
  EXPECT_EQ(w.qos.name(a.qos), "normal");
  EXPECT_EQ(b.trace_start, s(1500));
  EXPECT_EQ(b.trace_end, s(95100));
  EXPECT_EQ(b.runtime, s(93600));
  EXPECT_EQ(b.walltime, s(172800));
  EXPECT_EQ(b.gpus, 8);
  EXPECT_EQ(b.gpu_type, 0);
  EXPECT_EQ(b.memory_mib, 524288);
  EXPECT_EQ(b.priority, 10000);
  EXPECT_EQ(b.trace_status, TraceStatus::Failed);

  const auto& t1 = w.jobs[3];  // 1004_1 (JobIDRaw 1005): Timelimit in minutes
  EXPECT_EQ(t1.submit, s(900));
  EXPECT_EQ(t1.runtime, s(1800));
  EXPECT_EQ(t1.walltime, s(3600));
  EXPECT_EQ(t1.gpus, 2);
  EXPECT_EQ(gpu_type(w, t1), "v100");
  EXPECT_EQ(w.jobs[4].trace_status, TraceStatus::Failed);
  for (int k = 5; k < 8; ++k) {  // 1004_[3-5%2]: three pending tasks, resources from ReqTRES
    const auto& p = w.jobs[static_cast<std::size_t>(k)];
    EXPECT_EQ(p.submit, s(900));
    EXPECT_EQ(p.trace_start, -1);
    EXPECT_EQ(p.trace_end, -1);
    EXPECT_EQ(p.runtime, s(3600));
    EXPECT_EQ(p.gpus, 2);
    EXPECT_EQ(gpu_type(w, p), "v100");
    EXPECT_EQ(p.cpus, 2);
    EXPECT_EQ(p.trace_status, TraceStatus::Unknown);
  }

  const auto& h = w.jobs[8];  // 1007+0 and 1007+1 merged
  EXPECT_EQ(w.tenants.name(h.tenant), "physics");
  EXPECT_EQ(w.queues.name(h.queue), "cpu");
  EXPECT_EQ(h.submit, s(3900));
  EXPECT_EQ(h.trace_start, s(4200));
  EXPECT_EQ(h.trace_end, s(11400));
  EXPECT_EQ(h.runtime, s(7200));
  EXPECT_EQ(h.walltime, -1);  // UNLIMITED
  EXPECT_EQ(h.gpus, 16);
  EXPECT_EQ(gpu_type(w, h), "h100");
  EXPECT_EQ(h.cpus, 40);
  EXPECT_EQ(h.memory_mib, 32768 + 1048576);
  EXPECT_EQ(h.nodes, 3);
  EXPECT_EQ(h.trace_status, TraceStatus::Completed);

  const auto& r = w.jobs[9];  // 1009: RUNNING, End Unknown, Partition_Limit
  EXPECT_EQ(r.submit, s(7500));
  EXPECT_EQ(r.trace_start, s(7500));
  EXPECT_EQ(r.trace_end, -1);
  EXPECT_EQ(r.runtime, s(11720));
  EXPECT_EQ(r.walltime, -1);
  EXPECT_EQ(r.trace_status, TraceStatus::Unknown);

  const auto& p = w.jobs[10];  // 1010: PENDING with an expected Start: not a start
  EXPECT_EQ(p.submit, s(9300));
  EXPECT_EQ(p.trace_start, -1);
  EXPECT_EQ(p.runtime, s(14400));
  EXPECT_EQ(p.walltime, s(14400));
  EXPECT_EQ(p.gpus, 8);

  const auto& f = w.jobs[11];  // 1013: NODE_FAIL, D-HH limit, mem in T with a fraction
  EXPECT_EQ(f.walltime, s(216000));
  EXPECT_EQ(f.memory_mib, 1572864);
  EXPECT_EQ(f.trace_status, TraceStatus::Failed);
  EXPECT_EQ(w.jobs[12].trace_status, TraceStatus::Cancelled);  // PREEMPTED
  EXPECT_EQ(w.jobs[12].runtime, s(1200));

  const auto all = traces::import_trace(kData + "sacct_sample.txt", with(Format::Sacct, true));
  ASSERT_EQ(all.jobs.size(), 14u);
  EXPECT_EQ(all.meta.skipped, 1);
  EXPECT_EQ(all.jobs[11].trace_id, 1012);
  EXPECT_EQ(all.jobs[11].gpus, 0);
  EXPECT_EQ(all.jobs[11].trace_status, TraceStatus::Failed);  // OUT_OF_MEMORY
}

TEST(Sacct, DurationsAndLimits) {
  TempDir tmp;
  std::string text = kSacctHeader;
  int id = 0;
  for (const char* limit : {"5", "1:30", "1:02:03", "2-03:04", "1-00:00:01", "2-5"})
    text += std::to_string(++id) + "|u|a|p||2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:05|00:00:05|" +
            limit + "|gres/gpu=1||COMPLETED|n\n";
  const auto w = traces::import_trace(tmp.write("a.txt", text));
  ASSERT_EQ(w.jobs.size(), 6u);
  EXPECT_EQ(w.jobs[0].walltime, s(300));  // minutes
  EXPECT_EQ(w.jobs[1].walltime, s(90));   // MM:SS
  EXPECT_EQ(w.jobs[2].walltime, s(3723));
  EXPECT_EQ(w.jobs[3].walltime, s(2 * 86400 + 3 * 3600 + 4 * 60));
  EXPECT_EQ(w.jobs[4].walltime, s(86401));
  EXPECT_EQ(w.jobs[5].walltime, s(2 * 86400 + 5 * 3600));
  EXPECT_EQ(w.jobs[0].runtime, s(5));
  EXPECT_EQ(w.jobs[0].trace_end, s(5));
}

TEST(Sacct, ArrayRangesExpand) {
  TempDir tmp;
  const auto w = traces::import_trace(tmp.write(
      "a.txt",
      kSacctHeader +
          "7_[1-3,8,10-14:2%4]|u|a|p||2024-01-01T00:00:00|Unknown|Unknown|00:00:00|10||gres/gpu=1|PENDING|\n"));
  EXPECT_EQ(w.jobs.size(), 3u + 1u + 3u);
  EXPECT_EQ(w.meta.rows, 1);
  for (const auto& j : w.jobs) EXPECT_EQ(j.runtime, s(600));
}

TEST(Sacct, ErrorsNameLineColumnAndField) {
  TempDir tmp;
  const auto bad = [&](const std::string& row) { return import_error(tmp.write("bad.txt", kSacctHeader + row)); };
  auto e = bad("12x|u|a|p||2024-01-01T00:00:00|Unknown|Unknown|00:00:00|10||gres/gpu=1|PENDING|\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 1);
  EXPECT_EQ(e.where(), "JobID (column 1)");
  EXPECT_NE(e.message().find("expected a Slurm job id"), std::string::npos) << e.what();
  e = bad("1|u|a|p||2024-13-01T00:00:00|Unknown|Unknown|00:00:00|10||gres/gpu=1|PENDING|\n");
  EXPECT_EQ(e.where(), "Submit (column 6)");
  EXPECT_EQ(e.column(), 10);
  e = bad("1|u|a|p||2024-01-01T00:00:00|2024-01-01T00:00:00|Unknown|1:2:3:4|10|gres/gpu=1||RUNNING|\n");
  EXPECT_EQ(e.where(), "Elapsed (column 9)");
  EXPECT_NE(e.message().find("Slurm duration"), std::string::npos) << e.what();
  e = bad("1|u|a|p||2024-01-01T00:00:00|2024-01-01T00:00:00|Unknown|00:01:00|10|gres/gpu=x||RUNNING|\n");
  EXPECT_EQ(e.where(), "AllocTRES (column 11)");
  EXPECT_NE(e.message().find("gres/gpu: expected a count"), std::string::npos) << e.what();
  e = bad("1|u|a|p||2024-01-01T00:00:00|2024-01-01T00:00:00|Unknown|00:01:00|10|gres/gpu=1,mem=12Q||RUNNING|\n");
  EXPECT_NE(e.message().find("mem: expected a size"), std::string::npos) << e.what();
  e = bad("1|u|a|p||2024-01-01T00:00:00|2023-12-31T00:00:00|Unknown|00:01:00|10|gres/gpu=1||RUNNING|\n");
  EXPECT_EQ(e.message(), "Start is before Submit");
  e = bad("1_[5-2]|u|a|p||2024-01-01T00:00:00|Unknown|Unknown|00:00:00|10||gres/gpu=1|PENDING|\n");
  EXPECT_NE(e.message().find("array range"), std::string::npos) << e.what();
  e = bad("1|u|a|p||2024-01-01T00:00:00|Unknown|Unknown|00:00:00|10||gres/gpu=1|PENDING|x|y\n");
  EXPECT_NE(e.message().find("expected 14 cells"), std::string::npos) << e.what();
  e = import_error(tmp.write("h.txt", "JobID|User|Submit|Start|Elapsed|State\n"));
  EXPECT_NE(e.message().find("AllocTRES or ReqTRES"), std::string::npos) << e.what();
  e = import_error(tmp.write("h2.txt", "JobID|User|Submit|Elapsed|State|AllocTRES\n"), with(Format::Sacct));
  EXPECT_NE(e.message().find("missing required column \"Start\""), std::string::npos) << e.what();
}

// ---------------------------------------------------------------------------------------------
// Kubernetes

// A run time assumed for pods that never started: the Pending pod is a waiting job submitted at
// its creation (12:00, 3 h after the earliest pod), with that run time and no start.
TEST(Kubernetes, PendingPodsWaitWithAnAssumedRunTime) {
  traces::ImportOptions o;
  o.assume_runtime = 2 * sim::kHour;
  const auto w = traces::import_trace(kData + "kube_pods.json", o);
  EXPECT_EQ(w.meta.skipped, 0);
  EXPECT_TRUE(w.meta.warnings.empty());
  ASSERT_EQ(w.jobs.size(), 8u);
  const auto it = std::find_if(w.jobs.begin(), w.jobs.end(), [](const models::Job& j) { return j.trace_id == 4; });
  ASSERT_NE(it, w.jobs.end());
  EXPECT_EQ(w.tenants.name(it->tenant), "vision");
  EXPECT_EQ(it->submit, s(3 * 3600));
  EXPECT_EQ(it->runtime, 2 * sim::kHour);
  EXPECT_EQ(it->trace_start, -1);
  EXPECT_EQ(it->gpus, 8);
  EXPECT_EQ(it->trace_status, TraceStatus::Unknown);
}

TEST(Kubernetes, SampleExactValues) {
  const auto w = traces::import_trace(kData + "kube_pods.json");
  EXPECT_EQ(w.meta.format, "kubernetes");
  EXPECT_EQ(w.meta.rows, 8);
  EXPECT_EQ(w.meta.skipped, 1);
  ASSERT_EQ(w.meta.warnings.size(), 1u);
  EXPECT_EQ(w.meta.warnings[0],
            "items[4] (vision/big-pending): never started (phase Pending), run time unknown "
            "(workload.assume_runtime or --assume-runtime queues it with an assumed one), job skipped");
  EXPECT_EQ(w.meta.unix_start, 1714554000);  // 2024-05-01T09:00:00Z
  EXPECT_EQ(ids(w), (std::vector<std::int64_t>{5, 3, 0, 1, 2, 6, 7}));
  EXPECT_EQ(w.gpu_type_names, (std::vector<std::string>{"NVIDIA-A100-SXM4-80GB"}));

  const auto& t1 = w.jobs[0];  // train-1: the earliest pod; a number as the GPU quantity
  EXPECT_EQ(w.tenants.name(t1.tenant), "vision");
  EXPECT_EQ(w.queues.name(t1.queue), "default");
  EXPECT_EQ(t1.submit, 0);
  EXPECT_EQ(t1.trace_start, s(120));
  EXPECT_EQ(t1.trace_end, s(10920));
  EXPECT_EQ(t1.runtime, s(10800));
  EXPECT_EQ(t1.gpus, 8);
  EXPECT_EQ(t1.cpus, 32);
  EXPECT_EQ(t1.memory_mib, 262144);
  EXPECT_EQ(t1.kind, JobKind::Batch);
  EXPECT_EQ(t1.trace_status, TraceStatus::Completed);

  const auto& cpu = w.jobs[1];  // a CPU-only pod is a job without GPUs: it takes CPU on a node
  EXPECT_EQ(cpu.gpus, 0);
  EXPECT_EQ(cpu.cpus, 1);
  EXPECT_EQ(cpu.submit, s(1800));
  EXPECT_EQ(cpu.trace_start, s(1801));

  const auto& t0 = w.jobs[2];  // train-0: Kueue queue label, two containers, GPU product selector
  EXPECT_EQ(w.queues.name(t0.queue), "team-a");
  EXPECT_EQ(t0.priority, 1000);
  EXPECT_EQ(t0.kind, JobKind::Train);
  EXPECT_EQ(t0.gpus, 4);
  EXPECT_EQ(t0.gpus_per_node, 4);
  EXPECT_EQ(t0.nodes, 1);
  EXPECT_EQ(gpu_type(w, t0), "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(t0.cpus, 9);  // 8 + 500m, rounded up
  EXPECT_EQ(t0.memory_mib, 65536 + 512);
  EXPECT_EQ(t0.submit, s(3600));
  EXPECT_EQ(t0.trace_start, s(3630));
  EXPECT_EQ(t0.trace_end, s(7240));  // the last container's finishedAt
  EXPECT_EQ(t0.runtime, s(3610));
  EXPECT_FALSE(t0.preempt_never);

  const auto& inf = w.jobs[3];  // running: until the latest time in the file (14:00:00)
  EXPECT_EQ(w.tenants.name(inf.tenant), "nlp");
  EXPECT_EQ(w.queues.name(inf.queue), "serving");  // priorityClassName
  EXPECT_EQ(inf.priority, 2000000);
  EXPECT_TRUE(inf.preempt_never);
  EXPECT_EQ(inf.kind, JobKind::Inference);
  EXPECT_EQ(inf.gpus, 1);  // limits only
  EXPECT_EQ(inf.cpus, 2);
  EXPECT_EQ(inf.memory_mib, 7630);  // 8G = 8e9 bytes
  EXPECT_EQ(inf.submit, s(3840));
  EXPECT_EQ(inf.trace_start, s(3900));
  EXPECT_EQ(inf.trace_end, -1);
  EXPECT_EQ(inf.runtime, s(14100));
  EXPECT_EQ(inf.trace_status, TraceStatus::Unknown);

  const auto& jx = w.jobs[4];  // Volcano queue annotation; an init container asks for more CPU
  EXPECT_EQ(w.queues.name(jx.queue), "batch-q");
  EXPECT_EQ(jx.kind, JobKind::Batch);
  EXPECT_EQ(jx.gpus, 2);
  EXPECT_EQ(jx.cpus, 16);
  EXPECT_EQ(jx.memory_mib, 2048);
  EXPECT_EQ(jx.runtime, s(600));
  EXPECT_EQ(jx.trace_status, TraceStatus::Failed);

  const auto& pair = w.jobs[5];  // requests in one container, limits in the other
  EXPECT_EQ(w.tenants.name(pair.tenant), "research");
  EXPECT_EQ(pair.gpus, 4);
  EXPECT_EQ(pair.submit, s(14400));
  EXPECT_EQ(pair.trace_end, s(17110));
  EXPECT_EQ(pair.runtime, s(2700));

  const auto& web = w.jobs[6];  // one container done, one running: still running
  EXPECT_EQ(web.kind, JobKind::Inference);
  EXPECT_EQ(web.trace_start, s(17700));
  EXPECT_EQ(web.trace_end, -1);
  EXPECT_EQ(web.runtime, s(300));

  const auto all = traces::import_trace(kData + "kube_pods.json", with(Format::Kubernetes, true));
  EXPECT_EQ(all.jobs.size(), 7u);
  EXPECT_EQ(all.meta.skipped, 1);
}

TEST(Kubernetes, ErrorsNamePositionOrJsonPath) {
  TempDir tmp;
  auto e = import_error(tmp.write("syntax.json", "{\n  \"kind\": \"List\",\n  \"items\": [ x ]\n}\n"));
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 14);
  EXPECT_NE(e.message().find("invalid JSON"), std::string::npos) << e.what();
  const std::string pod_head =
      "{\"kind\": \"List\", \"items\": [{\"metadata\": {\"name\": \"p\", \"creationTimestamp\": "
      "\"2024-05-01T10:00:00Z\"}, \"spec\": {\"containers\": [{\"name\": \"c\"}, {\"name\": \"d\", \"resources\": ";
  e = import_error(tmp.write("q.json", pod_head + "{\"requests\": {\"cpu\": \"2x\"}}}]}}]}"));
  EXPECT_EQ(e.where(), "items[0].spec.containers[1].resources.requests[\"cpu\"]");
  EXPECT_NE(e.message().find("quantity"), std::string::npos) << e.what();
  e = import_error(tmp.write("g.json", pod_head + "{\"requests\": {\"nvidia.com/gpu\": \"1500m\"}}}]}}]}"));
  EXPECT_EQ(e.where(), "items[0].spec.containers[1].resources.requests[\"nvidia.com/gpu\"]");
  e = import_error(tmp.write("r.json", pod_head + "[]}]}}]}"));
  EXPECT_EQ(e.where(), "items[0].spec.containers[1].resources");
  EXPECT_EQ(e.message(), "expected an object");
  e = import_error(
      tmp.write("t.json", "{\"items\": [{\"metadata\": {\"creationTimestamp\": \"yesterday\"}, \"spec\": {}}]}"));
  EXPECT_EQ(e.where(), "items[0].metadata.creationTimestamp");
  EXPECT_EQ(e.line(), 1);  // the key of the field (issue #20)
  EXPECT_EQ(e.column(), 26);
  e = import_error(tmp.write("n.json", "{\"items\": [\n {\"spec\": {\"priority\": -1e999}}]}"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 24);
  EXPECT_EQ(e.where(), "items[0].spec.priority");
  EXPECT_EQ(e.message(), "number out of range (beyond a double): -1e999");
  e = import_error(tmp.write("k.json", "{\"kind\": \"Deployment\"}"));
  EXPECT_EQ(e.where(), "kind");
  e = import_error(tmp.write("i.json", "{\"kind\": \"List\", \"items\": {}}"));
  EXPECT_EQ(e.where(), "items");
}

TEST(Kubernetes, QuantitiesAndSinglePod) {
  TempDir tmp;
  const auto w = traces::import_trace(tmp.write(
      "pod.json",
      "{\"kind\": \"Pod\", \"metadata\": {\"namespace\": \"ns\", \"creationTimestamp\": \"2024-05-01T10:00:00Z\"},"
      " \"spec\": {\"containers\": [{\"resources\": {\"requests\": {\"nvidia.com/gpu\": \"1\", \"cpu\": \"2500m\","
      " \"memory\": \"1048576Ki\"}}}, {\"resources\": {\"requests\": {\"cpu\": \"0.25\", \"memory\": \"1e9\"}}}]},"
      " \"status\": {\"phase\": \"Succeeded\", \"startTime\": \"2024-05-01T10:00:10Z\", \"containerStatuses\":"
      " [{\"state\": {\"terminated\": {\"finishedAt\": \"2024-05-01T10:01:10Z\"}}}]}}"));
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.jobs[0].cpus, 3);                 // 2.5 + 0.25
  EXPECT_EQ(w.jobs[0].memory_mib, 1024 + 954);  // 1 GiB + 1e9 bytes
  EXPECT_EQ(w.jobs[0].runtime, s(60));
}

// ---------------------------------------------------------------------------------------------
// Acme

TEST(Acme, SerenExactValues) {
  const auto w = traces::import_trace(kData + "acme_seren.csv");
  EXPECT_EQ(w.meta.format, "acme");
  EXPECT_EQ(w.meta.rows, 6);
  EXPECT_EQ(w.meta.skipped, 1);
  EXPECT_EQ(w.meta.warnings, (std::vector<std::string>{"line 4: CPU job (gpu_num 0), job skipped"}));
  EXPECT_EQ(w.meta.unix_start, 1680391800);  // 2023-04-02 07:30:00+08:00
  EXPECT_EQ(ids(w), (std::vector<std::int64_t>{6000002, 6000001, 6000004, 6000005, 6000006}));
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"u0001", "u0002", "u0003"}));
  const auto& e = w.jobs[0];
  EXPECT_EQ(w.tenants.name(e.tenant), "u0002");
  EXPECT_EQ(w.queues.name(e.queue), "Evaluation");
  EXPECT_EQ(e.kind, JobKind::Batch);
  EXPECT_EQ(e.submit, 0);
  EXPECT_EQ(e.trace_start, s(5));
  EXPECT_EQ(e.trace_end, s(125));
  EXPECT_EQ(e.runtime, s(120));
  EXPECT_EQ(e.gpus, 1);
  EXPECT_EQ(e.cpus, 16);
  EXPECT_EQ(e.nodes, 1);
  EXPECT_EQ(e.trace_status, TraceStatus::Failed);
  const auto& p = w.jobs[1];
  EXPECT_EQ(p.kind, JobKind::Train);
  EXPECT_EQ(p.submit, s(1800));
  EXPECT_EQ(p.trace_start, s(1900));
  EXPECT_EQ(p.trace_end, s(45100));
  EXPECT_EQ(p.runtime, s(43200));
  EXPECT_EQ(p.gpus, 32);
  EXPECT_EQ(p.cpus, 512);
  EXPECT_EQ(p.nodes, 4);
  EXPECT_EQ(p.trace_status, TraceStatus::Completed);
  EXPECT_EQ(w.jobs[2].kind, JobKind::Train);  // SFT
  EXPECT_EQ(w.jobs[2].trace_status, TraceStatus::Cancelled);
  EXPECT_EQ(w.jobs[2].trace_start, s(9900));
  EXPECT_EQ(w.jobs[3].kind, JobKind::Interactive);         // Debug
  EXPECT_EQ(w.jobs[3].trace_status, TraceStatus::Failed);  // TIMEOUT
  EXPECT_EQ(w.jobs[3].runtime, s(14400));
  EXPECT_EQ(w.jobs[4].trace_status, TraceStatus::Failed);  // NODE_FAIL
  EXPECT_EQ(w.jobs[4].submit, s(16200));
}

TEST(Acme, KalosExactValues) {
  const auto w = traces::import_trace(kData + "acme_kalos.csv");
  ASSERT_EQ(w.jobs.size(), 3u);
  EXPECT_EQ(w.meta.unix_start, 1685577600);                 // 2023-06-01 00:00:00+00:00
  EXPECT_EQ(ids(w), (std::vector<std::int64_t>{0, 1, 2}));  // string job ids: the row's position
  EXPECT_EQ(w.jobs[0].memory_mib, 2 * 500 * 1024);          // mem_per_pod_GB x node_num
  EXPECT_EQ(w.jobs[0].gpus, 16);
  EXPECT_EQ(w.jobs[0].nodes, 2);
  EXPECT_EQ(w.jobs[0].runtime, s(21600));
  EXPECT_EQ(w.jobs[0].trace_start, s(20));
  EXPECT_EQ(w.jobs[1].memory_mib, 1000 * 1024);
  EXPECT_EQ(w.jobs[1].submit, s(3600));
  EXPECT_EQ(w.jobs[1].trace_end, s(3640));
  EXPECT_EQ(w.jobs[1].trace_status, TraceStatus::Failed);
  EXPECT_EQ(w.jobs[2].trace_status, TraceStatus::Cancelled);
  EXPECT_EQ(w.jobs[2].kind, JobKind::Interactive);
  EXPECT_EQ(w.jobs[2].runtime, s(300));
}

TEST(Acme, Errors) {
  TempDir tmp;
  const std::string header =
      "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n";
  auto e = import_error(
      tmp.write("a.csv", header + "1,u,1,x,8,Other,COMPLETED,2023-04-02 08:00:00+08:00,2023-04-02 08:00:00+08:00,"
                                  "2023-04-02 08:01:00+08:00,60,0,60\n"));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.where(), "gpu_num (column 4)");
  e = import_error(
      tmp.write("b.csv", header + "1,u,1,1,8,Other,COMPLETED,2023-04-02 08:00:00+08:00,2023-04-02 07:00:00+08:00,"
                                  "2023-04-02 08:01:00+08:00,60,0,60\n"));
  EXPECT_EQ(e.where(), "start_time (column 9)");
  EXPECT_EQ(e.message(), "start_time is before submit_time");
}

// ---------------------------------------------------------------------------------------------
// PAI 2020

TEST(Pai, JobAndTaskTablesExactValues) {
  for (const char* file : {"pai/pai_job_table.csv", "pai/pai_task_table.csv"}) {
    SCOPED_TRACE(file);
    const auto w = traces::import_trace(kData + file);
    EXPECT_EQ(w.meta.format, "pai");
    EXPECT_EQ(w.meta.rows, 6);
    EXPECT_EQ(w.meta.skipped, 2);
    EXPECT_EQ(w.meta.warnings,
              (std::vector<std::string>{"line 4: waiting, never started: run time unknown, job skipped",
                                        "line 5: CPU job (plan_gpu 0), job skipped"}));
    EXPECT_EQ(w.meta.unix_start, -1);  // desensitized times
    EXPECT_EQ(ids(w), (std::vector<std::int64_t>{5, 0, 1, 2}));
    EXPECT_EQ(w.gpu_type_names, (std::vector<std::string>{"V100", "T4", "V100M32", "P100"}));
    const auto& j6 = w.jobs[0];
    EXPECT_EQ(w.tenants.name(j6.tenant), "u4");
    EXPECT_EQ(j6.submit, 0);
    EXPECT_EQ(j6.trace_start, s(5));
    EXPECT_EQ(j6.trace_end, s(50));
    EXPECT_EQ(j6.runtime, s(45));
    EXPECT_EQ(j6.gpus, 2);  // plan_gpu 200 = two GPUs
    EXPECT_EQ(j6.gpu_milli, 0);
    EXPECT_EQ(gpu_type(w, j6), "P100");
    EXPECT_EQ(j6.cpus, 1);
    EXPECT_EQ(j6.memory_mib, 2560);
    EXPECT_EQ(j6.trace_status, TraceStatus::Completed);
    const auto& j1 = w.jobs[1];  // ps (no GPU) + 2 workers at 50 %
    EXPECT_EQ(w.tenants.name(j1.tenant), "u1");
    EXPECT_EQ(j1.submit, s(100));
    EXPECT_EQ(j1.trace_start, s(110));
    EXPECT_EQ(j1.trace_end, s(4100));
    EXPECT_EQ(j1.runtime, s(3990));
    EXPECT_EQ(j1.gpus, 1);
    EXPECT_EQ(j1.gpu_milli, 0);
    EXPECT_EQ(gpu_type(w, j1), "V100");
    EXPECT_EQ(j1.cpus, 14);
    EXPECT_EQ(j1.memory_mib, 50480);
    const auto& j2 = w.jobs[2];  // 25 % of one GPU
    EXPECT_EQ(j2.gpus, 1);
    EXPECT_EQ(j2.gpu_milli, 250);
    EXPECT_EQ(j2.trace_status, TraceStatus::Failed);
    EXPECT_EQ(j2.runtime, s(50));
    const auto& j3 = w.jobs[3];  // running: until the latest time in the tables
    EXPECT_EQ(j3.gpus, 4);
    EXPECT_EQ(j3.cpus, 48);
    EXPECT_EQ(j3.trace_start, s(1200));
    EXPECT_EQ(j3.trace_end, -1);
    EXPECT_EQ(j3.runtime, s(2900));
    EXPECT_EQ(j3.trace_status, TraceStatus::Unknown);
  }
}

TEST(Pai, TaskTableAloneWithHeader) {
  TempDir tmp;
  std::ifstream in(kData + "pai/pai_task_table.csv");
  std::stringstream body;
  body << in.rdbuf();
  const auto path = tmp.write(
      "tasks.csv",
      "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n" + body.str());
  const auto w = traces::import_trace(path);
  EXPECT_EQ(w.meta.rows, 6);  // jobs (task groups)
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"default"}));
  ASSERT_EQ(w.jobs.size(), 4u);
  EXPECT_EQ(ids(w), (std::vector<std::int64_t>{5, 0, 1, 2}));
  EXPECT_EQ(w.jobs[0].submit, 0);       // j6's first task start, 905
  EXPECT_EQ(w.jobs[1].submit, s(105));  // j1: 1010
  EXPECT_EQ(w.jobs[1].trace_start, s(105));
  EXPECT_EQ(w.jobs[1].trace_status, TraceStatus::Completed);
  EXPECT_EQ(w.jobs[2].trace_status, TraceStatus::Failed);
}

TEST(Pai, Errors) {
  TempDir tmp;
  auto e = import_error(tmp.write("pai_job_table.csv", "j1,i1,u1,Terminated,1000.0,5000.0\n"), with(Format::Pai));
  EXPECT_NE(e.message().find("task table"), std::string::npos) << e.what();
  e = import_error(tmp.write("pai_task_table.csv", "j1,w,1.0,Terminated,1000.0,900.0,100,1,100,T4\n"));
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.where(), "end_time (column 6)");
  e = import_error(tmp.write("t2.csv", "j1,w,x,Terminated,1000.0,1900.0,100,1,100,T4\n"), with(Format::Pai));
  EXPECT_NE(e.message().find("not a PAI 2020"), std::string::npos) << e.what();
  e = import_error(tmp.write("t3.csv", "j1,w,1.0,Terminated,1000.0,1900.0,1x0,1,100,T4\n"), with(Format::Pai));
  EXPECT_NE(e.message().find("not a PAI 2020"), std::string::npos) << e.what();
  e = import_error(tmp.write("t4.csv", "j1,w,1.0,Terminated,1000.0,1900.0,100,1,100,T4\nj2,w,1.5,Failed,1,2,1,1,1,\n"),
                   with(Format::Pai));
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.where(), "inst_num (column 3)");
}

// ---------------------------------------------------------------------------------------------
// Synthetic generator

namespace {

std::string synth_csv(const traces::SynthOptions& o) {
  std::ostringstream os;
  traces::write_native_csv(os, traces::synthesize(o));
  return os.str();
}

}  // namespace

TEST(Synth, DeterministicPerSeed) {
  traces::SynthOptions o;
  o.jobs = 2000;
  o.span = 7 * sim::kDay;
  o.seed = 42;
  const std::string a = synth_csv(o);
  EXPECT_EQ(a, synth_csv(o));
  o.seed = 43;
  EXPECT_NE(a, synth_csv(o));
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 2001);
  EXPECT_EQ(a.substr(0, a.find('\n')), "id,tenant,queue,submit,gpus,runtime");
  // The CSV reads back as the same jobs.
  TempDir tmp;
  o.seed = 42;
  const auto w = traces::synthesize(o);
  const auto back = traces::import_trace(tmp.write("synth.csv", a));
  ASSERT_EQ(back.jobs.size(), w.jobs.size());
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    EXPECT_EQ(back.jobs[i].submit, w.jobs[i].submit);
    EXPECT_EQ(back.jobs[i].runtime, w.jobs[i].runtime);
    EXPECT_EQ(back.jobs[i].gpus, w.jobs[i].gpus);
  }
}

TEST(Synth, CountsMixRuntimesAndTenants) {
  traces::SynthOptions o;
  o.jobs = 200000;
  o.span = 30 * sim::kDay;
  o.seed = 7;
  o.tenants = 4;
  const auto w = traces::synthesize(o);
  ASSERT_EQ(w.jobs.size(), 200000u);
  std::map<int, double> freq;
  std::vector<double> per_tenant(4, 0);
  std::vector<sim::Tick> runtimes;
  for (const auto& j : w.jobs) {
    freq[j.gpus] += 1.0 / 200000;
    per_tenant[j.tenant] += 1.0 / 200000;
    EXPECT_GE(j.runtime, traces::kSynthMinRuntime);
    EXPECT_LE(j.runtime, traces::kSynthMaxRuntime);
    runtimes.push_back(j.runtime);
  }
  for (const auto& [g, p] : traces::SynthOptions::default_gpu_mix()) EXPECT_NEAR(freq[g], p, 0.005) << g << " GPUs";
  EXPECT_EQ(freq.size(), 6u);
  // Zipf over 4 tenants: weights 1, 1/2, 1/3, 1/4 of 25/12.
  const double h = 1 + 0.5 + 1.0 / 3 + 0.25;
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(per_tenant[static_cast<std::size_t>(k)], 1.0 / (k + 1) / h, 0.005);
  EXPECT_EQ(w.tenants.names(), (std::vector<std::string>{"tenant-1", "tenant-2", "tenant-3", "tenant-4"}));
  std::nth_element(runtimes.begin(), runtimes.begin() + 100000, runtimes.end());
  EXPECT_NEAR(sim::to_seconds(runtimes[100000]), 600.0, 15.0);  // the median
  // Arrivals: rate jobs / span, so the last one is near the end of the span.
  EXPECT_NEAR(sim::to_seconds(w.jobs.back().submit) / sim::to_seconds(o.span), 1.0, 0.02);
  EXPECT_TRUE(
      std::is_sorted(w.jobs.begin(), w.jobs.end(), [](const auto& a, const auto& b) { return a.submit < b.submit; }));

  o.tenant_dist = traces::TenantDist::Uniform;
  o.jobs = 40000;
  std::vector<double> uniform(4, 0);
  for (const auto& j : traces::synthesize(o).jobs) uniform[j.tenant] += 1.0 / 40000;
  for (double p : uniform) EXPECT_NEAR(p, 0.25, 0.01);
}

TEST(Synth, OfferedLoadMatchesTarget) {
  traces::SynthOptions o;
  o.jobs = 300000;
  o.seed = 3;
  o.load = 0.9;
  o.cluster_gpus = 416;
  const auto w = traces::synthesize(o);
  ASSERT_EQ(w.jobs.size(), 300000u);
  double gpu_seconds = 0;
  for (const auto& j : w.jobs) gpu_seconds += j.gpus * sim::to_seconds(j.runtime);
  const double offered = gpu_seconds / (416.0 * sim::to_seconds(w.jobs.back().submit));
  EXPECT_NEAR(offered, 0.9, 0.9 * 0.05);
  // The clipped lognormal mean: 600 s x e^2 is 4433.4 s unclipped; clipping at 7 days takes 156 s
  // off (checked by numerical integration).
  EXPECT_NEAR(traces::synth_mean_runtime_s(600 * sim::kSecond, 2.0), 4276.9467, 1e-3);
  EXPECT_DOUBLE_EQ(traces::synth_mean_runtime_s(600 * sim::kSecond, 0.0), 600.0);

  // By span: as many jobs as arrive in it.
  o.jobs = 0;
  o.span = 2 * sim::kDay;
  const auto by_span = traces::synthesize(o);
  const double expected = traces::synth_arrival_rate(o) * 2 * 86400;
  EXPECT_NEAR(static_cast<double>(by_span.jobs.size()), expected, 4 * std::sqrt(expected));
  EXPECT_LT(by_span.jobs.back().submit, 2 * sim::kDay);
}

TEST(Synth, GpuMixAndOptionErrors) {
  EXPECT_EQ(traces::parse_gpu_mix("1:.5, 8:0.5"), (std::vector<std::pair<std::int32_t, double>>{{1, 0.5}, {8, 0.5}}));
  const auto where = [](auto f) {
    try {
      f();
    } catch (const sim::InputError& e) {
      return e.where() + ": " + e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(where([] { traces::parse_gpu_mix("1:.5,2"); }),
            "--gpu-mix: expected GPUS:WEIGHT items separated by commas, like \"1:.7,2:.2,8:.1\", got \"2\"");
  EXPECT_EQ(where([] { traces::parse_gpu_mix("0:1"); }), "--gpu-mix: expected a GPU count in 1..1000000, got \"0\"");
  EXPECT_EQ(where([] { traces::parse_gpu_mix("1:0,2:0"); }), "--gpu-mix: the weights add up to 0");
  EXPECT_EQ(where([] { traces::parse_gpu_mix("1:1,1:2"); }), "--gpu-mix: GPU count 1 appears twice");
  traces::SynthOptions o;
  EXPECT_NE(where([&] { traces::synthesize(o); }).find("--jobs"), std::string::npos);
  o.jobs = 10;
  o.load = 0.5;
  EXPECT_EQ(where([&] { traces::synthesize(o); }), "--cluster-gpus: --load and --cluster-gpus go together");
  o.cluster_gpus = 8;
  o.span = sim::kDay;
  EXPECT_EQ(where([&] { traces::synthesize(o); }), "--jobs: with --load give either --jobs or --span (not both)");
  o = {};
  o.jobs = 10;
  o.runtime_median = sim::kSecond;
  EXPECT_EQ(where([&] { traces::synthesize(o); }), "--runtime-median: expected a duration in 5s..7d");
}

// ---------------------------------------------------------------------------------------------
// Microsoft Philly cluster_job_log (msr-fiddle/philly-traces layout; the sample's first job is
// the README's example entry with its second attempt shortened to one hour)

TEST(Philly, SampleExactValues) {
  EXPECT_EQ(traces::detect_format(kData + "philly_cluster_job_log.json"), Format::Philly);
  const auto w = traces::import_trace(kData + "philly_cluster_job_log.json");
  EXPECT_EQ(w.meta.format, "philly");
  EXPECT_EQ(w.meta.rows, 4);
  EXPECT_EQ(w.meta.skipped, 1);  // the Failed job without attempts never ran
  ASSERT_EQ(w.jobs.size(), 3u);
  ASSERT_FALSE(w.meta.warnings.empty());
  EXPECT_NE(w.meta.warnings[0].find("job [2]: no attempt with a start time"), std::string::npos) << w.meta.warnings[0];
  // Job 0: two attempts, 74 s + 3,600 s of run time; submitted at the origin (01:11:39).
  const auto& a = w.jobs[0];
  EXPECT_EQ(a.trace_id, 1506638472019LL * 1'000'000 + 14199);
  EXPECT_EQ(w.tenants.name(a.tenant), "ce2f4c");
  EXPECT_EQ(w.queues.name(a.queue), "ee9e8c");
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.trace_start, s(30));
  EXPECT_EQ(a.runtime, s(74 + 3600));
  EXPECT_EQ(a.trace_end, s(3711));
  EXPECT_EQ(a.gpus, 8);
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.gpus_per_node, 8);
  EXPECT_EQ(a.trace_status, TraceStatus::Completed);
  // Job 1: two machines x 8 GPUs, killed after 30 minutes.
  const auto& b = w.jobs[1];
  EXPECT_EQ(b.submit, s(1));
  EXPECT_EQ(b.gpus, 16);
  EXPECT_EQ(b.nodes, 2);
  EXPECT_EQ(b.gpus_per_node, 8);
  EXPECT_EQ(b.runtime, s(1800));
  EXPECT_EQ(b.trace_status, TraceStatus::Cancelled);
  // Job 3: a logging gap, then an attempt still running when the trace was taken: it runs until
  // the latest time in the file (job 0's end, 02:13:30). Uneven GPUs per machine: no per-node shape.
  const auto& c = w.jobs[2];
  EXPECT_EQ(c.submit, s(2841));
  EXPECT_EQ(c.trace_start, s(2901));
  EXPECT_EQ(c.runtime, s(810));
  EXPECT_EQ(c.trace_end, s(3711));
  EXPECT_EQ(c.gpus, 3);
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.gpus_per_node, 0);
  // Submit times relative to the earliest; its Unix time is kept.
  EXPECT_EQ(w.meta.unix_start, 1507338699);  // 2017-10-07 01:11:39 read as UTC
}

TEST(Philly, Errors) {
  TempDir tmp;
  auto e = import_error(
      tmp.write("log.json", "[\n  {\"user\": \"u\", \"vc\": \"v\",\n   \"submitted_time\": \"yesterday\"}\n]\n"));
  EXPECT_EQ(e.line(), 3);  // the field's own key
  EXPECT_EQ(e.column(), 4);
  EXPECT_EQ(e.where(), "[0].submitted_time");
  EXPECT_NE(e.message().find("expected a time"), std::string::npos) << e.what();
  e = import_error(tmp.write("log2.json",
                             "[\n {\"user\": \"u\", \"vc\": \"v\", \"submitted_time\": \"2017-10-07 01:11:39\",\n"
                             "  \"attempts\": [{\"start_time\": \"2017-10-07 01:11:00\"}]}\n]\n"));
  EXPECT_EQ(e.where(), "[0].attempts[0].start_time");
  EXPECT_NE(e.message().find("before submitted_time"), std::string::npos) << e.what();
  e = import_error(tmp.write("log3.json", "[\n {\"user\": \"u\",\n  \"vc\": }\n]\n"));
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("invalid JSON"), std::string::npos) << e.what();
  e = import_error(tmp.write("log4.json", "{\"jobs\": []}\n"), with(Format::Philly));
  EXPECT_NE(e.message().find("expected a JSON array of jobs"), std::string::npos) << e.what();
  // A number beyond a double is the field's error, with its line and column (issue #20).
  e = import_error(tmp.write("log6.json", "[\n {\"user\": \"u\",\n  \"vc\": 1e999}\n]\n"), with(Format::Philly));
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 9);
  EXPECT_EQ(e.where(), "[0].vc");
  EXPECT_EQ(e.message(), "number out of range (beyond a double): 1e999");
  // A huge number or string is named by its first (or last) 40 characters and its size, not
  // copied whole into the message.
  e = import_error(tmp.write("log7.json", "[\n {\"vc\": " + std::string(100000, '9') + "}\n]\n"), with(Format::Philly));
  EXPECT_EQ(e.column(), 9);
  EXPECT_EQ(e.message(), "number out of range (beyond a double): " + std::string(40, '9') + "... (100000 characters)");
  e = import_error(tmp.write("log8.json", "[\n {\"vc\": \"" + std::string(100000, 'v') + "\n\"}]\n"),
                   with(Format::Philly));
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message(),
            "invalid JSON: syntax error while parsing value - invalid string: control character U+000A (LF) must be "
            "escaped to \\u000A or \\n; last read: '..." +
                std::string(32, 'v') + "<U+000A> (100009 characters)'");
  e = import_error(tmp.write("log5.json", "[1, 2]\n"));
  EXPECT_EQ(e.where(), "[0]");
  e = import_error(tmp.write("log6.json",
                             "[{\"user\": \"u\", \"vc\": \"v\", \"submitted_time\": \"2017-10-07 01:11:39\","
                             " \"status\": \"Done\"}]"));
  EXPECT_NE(e.message().find("expected Pass, Killed or Failed"), std::string::npos) << e.what();
}

TEST(Philly, GzipStreamsLikePlain) {
  TempDir tmp;
  std::ifstream in(kData + "philly_cluster_job_log.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string plain = tmp.write("log.json", text);
  ASSERT_EQ(std::system(("gzip -k " + plain).c_str()), 0);
  const auto a = traces::import_trace(plain), b = traces::import_trace(plain + ".gz");
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].submit, b.jobs[i].submit);
    EXPECT_EQ(a.jobs[i].runtime, b.jobs[i].runtime);
  }
}

// ---------------------------------------------------------------------------------------------
// --skip-bad-rows: malformed rows are counted and reported, the rest imported

TEST(SkipBadRows, EveryRowFormatCountsAndReports) {
  TempDir tmp;
  ImportOptions skip;
  skip.skip_bad_rows = true;
  struct Case {
    std::string name, text;
    std::size_t jobs;
    std::string first_warning;  // part of the first bad-row warning
  };
  const std::vector<Case> cases = {
      {"jobs.csv", "id,tenant,queue,submit,gpus,runtime\n1,a,q,0,1,10\n2,a,q,x,1,10\n3,a,q,5,1,10\n4,a,q,6,-1,1\n", 2,
       "line 3, column 7, submit (column 4)"},
      {"log.swf", "1 0 0 10 4 -1 -1 4 -1 -1 1 1 1 -1 1 -1 -1 -1\n2 5 0 1x 4 -1 -1 4 -1 -1 1 1 1 -1 1 -1 -1 -1\n", 1,
       "line 2"},
      {"log.json",
       "[{\"user\": \"u\", \"vc\": \"v\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": [{\"start_time\": "
       "\"2017-10-07 01:12:00\", \"end_time\": \"2017-10-07 01:13:00\", \"detail\": [{\"ip\": \"m1\", \"gpus\": "
       "[\"gpu0\"]}]}]},\n {\"user\": \"u\", \"vc\": \"v\", \"submitted_time\": \"soon\"}]\n",
       1, "[1].submitted_time"},
      {"acct.txt",
       "JobID|User|Account|Partition|Submit|Start|End|Elapsed|AllocTRES|State\n"
       "1|u|a|gpu|2024-05-01T00:00:00|2024-05-01T00:00:10|2024-05-01T00:01:10|00:01:00|gres/gpu=1|COMPLETED\n"
       "2|u|a|gpu|yesterday|2024-05-01T00:00:10|2024-05-01T00:01:10|00:01:00|gres/gpu=1|COMPLETED\n",
       1, "Submit"},
      {"cluster_log.csv",
       "job_id,user,vc,gpu_num,submit_time,duration,state\n1,u,v,1,0,10,COMPLETED\n2,u,v,two,5,10,COMPLETED\n", 1,
       "gpu_num"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = tmp.write(c.name, c.text);
    EXPECT_THROW(traces::import_trace(path), sim::InputError);  // stops by default
    const auto w = traces::import_trace(path, skip);
    EXPECT_EQ(w.jobs.size(), c.jobs);
    EXPECT_EQ(w.meta.bad_rows + static_cast<std::int64_t>(w.jobs.size()) + w.meta.skipped, w.meta.rows);
    ASSERT_FALSE(w.meta.warnings.empty());
    EXPECT_NE(w.meta.warnings.front().find(c.first_warning), std::string::npos) << w.meta.warnings.front();
    EXPECT_NE(w.meta.warnings.front().find("(bad row skipped)"), std::string::npos) << w.meta.warnings.front();
  }
  // The CSV case: both malformed rows counted, the good ones kept exactly.
  const auto w = traces::import_trace(tmp.dir().string() + "/jobs.csv", skip);
  EXPECT_EQ(w.meta.bad_rows, 2);
  EXPECT_EQ(w.jobs[1].trace_id, 3);
  EXPECT_EQ(w.jobs[1].submit, s(5));
}

TEST(SkipBadRows, AnUnreadableFileStillStops) {
  TempDir tmp;
  // A gzip stream cut short: the file's fault, not a row's.
  const std::string plain = tmp.write("jobs.csv", "id,tenant,queue,submit,gpus,runtime\n1,a,q,0,1,10\n");
  ASSERT_EQ(std::system(("gzip -k " + plain).c_str()), 0);
  std::ifstream in(plain + ".gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = tmp.write("cut.csv.gz", gz.substr(0, gz.size() - 12));
  ImportOptions skip;
  skip.skip_bad_rows = true;
  EXPECT_THROW(traces::import_trace(cut, skip), sim::InputError);
}
