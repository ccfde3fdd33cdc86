#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "models/workload.hpp"

namespace headroom::traces {

enum class Format {
  Auto,
  Swf,
  Csv,
  Openb,       // Alibaba GPU 2023 "openb" pod list
  Dlrm,        // Alibaba GPU 2025 disaggregated DLRM trace
  Helios,      // SenseTime Helios cluster_log.csv (full or Philly-style reduced layout)
  Sacct,       // Slurm `sacct --parsable2` output, with a header row or a named field list
  Kubernetes,  // `kubectl get pods -A -o json` pod list
  Acme,        // Shanghai AI Lab Acme (Seren, Kalos) job trace
  Pai,         // Alibaba PAI 2020 job and task tables
  Philly,      // Microsoft Philly cluster_job_log (JSON array of jobs with attempts)
};

// "auto", "swf", "csv", "openb", "dlrm", "helios", "sacct", "kubernetes", "acme", "pai", "philly".
std::optional<Format> parse_format(std::string_view name);
std::string_view to_string(Format f);
// Every format name parse_format accepts, in enum order (for messages and did-you-mean).
const std::vector<std::string>& format_names();

struct ImportOptions {
  Format format = Format::Auto;
  int units_per_gpu = 1;       // SWF: processors that make one GPU
  bool keep_cpu_only = false;  // keep jobs asking for no GPU (trace-stats) instead of skipping them
  // Count and report malformed rows (TraceMeta::bad_rows and warnings) instead of stopping at the
  // first. A file that cannot be read (truncated gzip) or a bad header still stops the import.
  bool skip_bad_rows = false;
  // sacct: the field list of a header-less export (`sacct --noheader --format ...`), in order, as
  // given to --format (case and "%width" suffixes ignored); {"xdmod"} is Open XDMoD's documented
  // list. Empty: the file's header row names them (a header-less file of Open XDMoD's 26 fields is
  // recognised). Naming fields implies the sacct format when `format` is Auto.
  std::vector<std::string> fields;
  // Pod lists: the run time (ms) given to a pod that never started (phase Pending, no
  // status.startTime), which then waits as a job submitted at its creationTimestamp; -1: such a
  // pod is skipped with a warning (its run time is unknown). A snapshot of a queue is mostly such
  // pods (traces/README.md, "kubernetes").
  std::int64_t assume_runtime = -1;
};

// Splits a field list ("jobid,jobidraw,cluster" or "xdmod") into names (empty items dropped).
std::vector<std::string> split_fields(std::string_view list);
// The sacct field a --format name stands for (traces/fields.cpp): "sub" and "SUBMIT" are Submit;
// nullopt when it names none.
std::optional<std::string> sacct_field(std::string_view name);
// Why a field list (split_fields) is not one `sacct --format` accepts: a name that is no sacct field
// (with "did you mean"), or ALL; nullopt when it is.
std::optional<std::string> check_sacct_fields(const std::vector<std::string>& names);
// The sacct columns the importer reads, in its table's order, each with whether it is required
// (docs/importing.md's list is made from this; which of several stand in is said in traces/sacct.cpp).
std::vector<std::pair<std::string, bool>> sacct_columns();
// What the pod-list reader (traces/kubernetes.cpp) reads, skips and refuses, as a Markdown table
// made from its own tables (docs/importing.md; a test checks the page against it).
std::string pod_list_keys_markdown();

// Reads a trace file (plain or gzip-compressed) into a job stream sorted by (submit, file order).
// Throws sim::InputError naming the file, the line (row) and the field on malformed input.
models::Workload import_trace(const std::string& path, const ImportOptions& options = {});

// Detects the format from the file name and first lines. Throws sim::InputError when unsure.
Format detect_format(const std::string& path);

// A node inventory turned into node pools: the Alibaba openb node list (sn,cpu_milli,memory_mib,
// gpu,model) or the PAI 2020 machine spec (machine,gpu_type,cap_cpu,cap_mem,cap_gpu, no header).
// Nodes with the same (model, GPUs, CPUs, memory) form one pool; pools are sorted by model, then
// GPUs, CPUs and memory. Nodes without GPUs are left out and counted in `cpu_only_nodes`.
struct ClusterImport {
  models::ClusterSpec cluster;
  std::string format;  // "openb-nodes" or "pai-machines"
  std::int64_t nodes_read = 0;
  std::int64_t cpu_only_nodes = 0;
};
ClusterImport import_cluster(const std::string& path);

// A `cluster:` block for a scenario, with a comment naming the source.
std::string cluster_yaml(const ClusterImport& imported, const std::string& source);

}  // namespace headroom::traces
