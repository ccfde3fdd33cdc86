#pragma once

// The inputs the fuzz targets (fuzz/*.cpp) and the crasher regression test (tests/crashers_test.cpp)
// feed to headroom: each entry point must either accept its bytes or reject them with a
// sim::InputError (or InputErrors). Anything else (another exception, a crash, a sanitizer
// report, a hang) is a bug.
//
// The trace importers read files, so trace bytes go to an in-memory file (memfd) opened through
// /proc/self/fd, one per process, rewritten for each input: no disk traffic and no temp files.
// The site-file readers that look for other files beside the one named (slurm.conf's Include and
// gres.conf) get a folder of their own instead (scratch_dir), also one per process.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "policies/registry.hpp"
#include "policies/slurm/slurm_conf.hpp"
#include "policies/system_module.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "traces/import.hpp"
#include "traces/infer.hpp"

namespace headroom::fuzz {

// The path of this process's in-memory file, holding exactly `data`.
inline std::string memory_file(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("headroom-fuzz", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("memfd_create failed");
  if (::ftruncate(fd, 0) != 0) throw std::runtime_error("ftruncate failed");
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) throw std::runtime_error("pwrite failed");
    done += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

// Why the last input was rejected (the first error), for the tests' messages.
inline std::string& last_rejection() {
  static std::string why;
  return why;
}

// Runs `read` and the checks of what it returned; true when both accepted it.
template <typename Read>
bool accepted(Read&& read) {
  last_rejection().clear();
  try {
    return read();
  } catch (const sim::InputError& e) {
    last_rejection() = e.what();
    return false;
  } catch (const sim::InputErrors& e) {
    last_rejection() = e.what();
    return false;
  }
}

// Imports `data` as a trace in `format`. Returns true when it was accepted.
inline bool import_trace_bytes(const std::uint8_t* data, std::size_t size, traces::Format format) {
  const std::string path = memory_file(data, size);
  traces::ImportOptions options;
  options.format = format;
  // A few inputs also run with several processors per GPU (the rounding-up path of SWF).
  if (size > 0 && data[0] % 8 == 7) options.units_per_gpu = 1 + data[size - 1] % 16;
  return accepted([&] {
    const models::Workload w = traces::import_trace(path, options);
    if (w.jobs.empty()) last_rejection() = "no jobs";
    // What trace-infer and calibrate read of an SWF log: its header (scheduler, clock, a cleaned
    // log's filters) and its recorded starts.
    if (format == traces::Format::Swf && !w.jobs.empty())
      (void)traces::infer_system(w, sim::kDay, options.units_per_gpu, path);
    return !w.jobs.empty();
  });
}

// Parses `data` as a scenario file. Returns true when it was accepted.
inline bool parse_scenario_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  return accepted([&] {
    scenarios::parse_scenario(text, "fuzz/scenario.yaml");
    return true;
  });
}

// --- The site-file readers (issue #31) -----------------------------------------------------------

// A folder of this process's own under the system's temporary folder, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string pattern = (std::filesystem::temp_directory_path() / "headroom-fuzz-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      path = pattern;
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

// Writes `text` to `name` in the scratch folder (or removes that file when `present` is false);
// its path.
inline std::string scratch_file(const std::string& name, std::string_view text, bool present = true) {
  const std::filesystem::path p = scratch_dir() / name;
  std::error_code ec;
  std::filesystem::remove_all(p, ec);
  if (present) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw std::runtime_error("cannot write " + p.string());
  }
  return p.string();
}

// What a run does with the parameters a site file gave: the registry's checks of the policy
// `system` (unknown keys, values) and of its references to the cluster's pools. Errors are
// answers, not findings.
inline bool check_params(std::string_view system, const policies::PolicyParams& params,
                         const models::ClusterSpec& cluster) {
  auto errors = policies::check_policy(system, params, "fuzz", 0, 0);
  for (auto& e : policies::check_cluster_refs(system, params, cluster)) errors.push_back(std::move(e));
  if (!errors.empty()) last_rejection() = errors.front().what();
  return errors.empty();
}
inline bool check_slurm_import(const policies::slurm::SlurmConfImport& imported) {
  return check_params("slurm", imported.params, imported.cluster);
}

// The line that splits a slurm.conf fuzz input in two: what comes before it is slurm.conf, what
// comes after is slurm-nodes.conf in the same folder (for slurm.conf to Include; absent when the
// input has no such line). A comment to slurmctld, so a whole input is still a slurm.conf.
inline constexpr std::string_view kIncludedFileMark = "\n#--- slurm-nodes.conf\n";

// slurm.conf (with Include) read as `cluster: {slurm_conf: ...}` reads it.
inline bool read_slurm_conf_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t mark = text.find(kIncludedFileMark);
  const bool included = mark != std::string_view::npos;
  scratch_file("slurm-nodes.conf", included ? text.substr(mark + kIncludedFileMark.size()) : "", included);
  scratch_file("gres.conf", "", false);
  const std::string path = scratch_file("slurm.conf", included ? text.substr(0, mark + 1) : text);
  return accepted([&] { return check_slurm_import(policies::slurm::read_slurm_conf(path)); });
}

// The slurm.conf the gres.conf fuzz input is read beside: GPU nodes with and without a type, the
// names of tests/data/imports/slurm/gres.conf (the seed).
inline constexpr std::string_view kGresSlurmConf =
    "GresTypes=gpu\n"
    "NodeName=host[0-25] CPUs=64 RealMemory=512000 Gres=gpu:4\n"
    "NodeName=host26 CPUs=32 Gres=gpu:a100:2\n"
    "PartitionName=batch Nodes=ALL Default=YES\n";

// gres.conf, written beside a minimal slurm.conf that reads it.
inline bool read_gres_conf_bytes(const std::uint8_t* data, std::size_t size) {
  scratch_file("slurm-nodes.conf", "", false);
  scratch_file("gres.conf", std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string path = scratch_file("slurm.conf", kGresSlurmConf);
  return accepted([&] { return check_slurm_import(policies::slurm::read_slurm_conf(path)); });
}

// `sacctmgr show qos -P` as `policy: {sacctmgr_qos: ...}` reads it.
inline bool read_sacctmgr_qos_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string path = memory_file(data, size);
  return accepted([&] { return check_slurm_import(policies::slurm::read_sacctmgr_qos(path)); });
}

// `sshare -a -l -P` as `policy: {sshare: ...}` reads it.
inline bool read_sshare_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string path = memory_file(data, size);
  return accepted([&] { return check_slurm_import(policies::slurm::read_sshare(path)); });
}

// The systems with manifests (SystemModule::read_manifests); a manifest fuzz input's first byte
// picks one (its value modulo 4: '0' kueue, '1' volcano, '2' kai, '3' kubernetes).
inline constexpr std::string_view kManifestSystems[] = {"kueue", "volcano", "kai", "kubernetes"};

// The cluster manifests are read against: two pools, labelled as tests/data/imports' sites label
// theirs, so that flavors and node selectors can match (or not).
inline const models::ClusterSpec& manifest_cluster() {
  static const models::ClusterSpec cluster = [] {
    models::ClusterSpec c;
    c.pools.push_back(models::NodePool{.name = "a100", .nodes = 2, .gpus_per_node = 8, .gpu_type = "A100"});
    c.pools.push_back(models::NodePool{.name = "h100", .nodes = 4, .gpus_per_node = 8, .gpu_type = "H100"});
    return c;
  }();
  return cluster;
}
inline const policies::PoolLabels& manifest_pool_labels() {
  static const policies::PoolLabels labels = {
      {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"cloud.provider.com/node-group", "tas-group"}},
      {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}},
  };
  return labels;
}

// `manifests: [file]` under the policy `system`, then the checks a run makes of the parameters.
inline bool read_manifest_text(std::string_view system, const std::uint8_t* data, std::size_t size) {
  const policies::SystemModule* module = policies::find_system(system);
  if (module == nullptr || module->read_manifests == nullptr)
    throw std::logic_error("no manifest reader for " + std::string(system));
  const std::vector<std::string> paths = {memory_file(data, size)};
  return accepted([&] {
    const auto imported = module->read_manifests(paths, manifest_cluster(), manifest_pool_labels());
    return check_params(system, imported.params, manifest_cluster());
  });
}

// A manifest fuzz input: the system from the first byte, the manifest after it.
inline bool read_manifest_bytes(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return false;
  return read_manifest_text(kManifestSystems[data[0] % 4], data + 1, size - 1);
}

// A pod list as YAML (`kubectl get pods -o yaml`; the kubernetes trace format). An input that
// would read as JSON (its first non-blank character `{` or `[`) gets a `---` line first, so every
// input takes the YAML path (flow YAML is a superset of JSON).
inline bool import_pod_yaml_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    std::string yaml = "---\n";
    yaml.append(text);
    return import_trace_bytes(reinterpret_cast<const std::uint8_t*>(yaml.data()), yaml.size(),
                              traces::Format::Kubernetes);
  }
  return import_trace_bytes(data, size, traces::Format::Kubernetes);
}

// Imports `data` as a node list (`headroom import-cluster`: openb or PAI machine spec) and reads the
// `cluster:` block it writes back as a scenario's: it must load, with the same pools. Returns true
// when the node list was accepted; a block that does not load as written is a bug (logic_error).
inline bool import_cluster_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string path = memory_file(data, size);
  return accepted([&] {
    const traces::ClusterImport imported = traces::import_cluster(path);
    const std::string trace = scratch_file("trace.csv", "id,submit,gpus,runtime\n1,0,1,60\n");
    const std::string yaml = traces::cluster_yaml(imported, "nodes.csv") +
                             "name: imported\npolicy: fifo\nworkload:\n  trace: " + trace + "\n";
    scenarios::Scenario sc;
    try {
      sc = scenarios::parse_scenario(yaml, "cluster.yaml");
    } catch (const sim::InputErrors& e) {
      throw std::logic_error("import-cluster wrote a cluster that does not load: " + std::string(e.what()));
    } catch (const sim::InputError& e) {
      throw std::logic_error("import-cluster wrote a cluster that does not load: " + std::string(e.what()));
    }
    const auto& want = imported.cluster.pools;
    const auto& got = sc.cluster.pools;
    bool same = want.size() == got.size();
    for (std::size_t i = 0; same && i < want.size(); ++i)
      same = want[i].name == got[i].name && want[i].nodes == got[i].nodes &&
             want[i].gpus_per_node == got[i].gpus_per_node && want[i].gpu_type == got[i].gpu_type &&
             want[i].cpus_per_node == got[i].cpus_per_node && want[i].memory_gib == got[i].memory_gib;
    if (!same) throw std::logic_error("import-cluster's cluster reads back with other pools");
    return true;
  });
}

}  // namespace headroom::fuzz
