// Node inventories to node pools: the Alibaba openb node list (sn,cpu_milli,memory_mib,gpu,model)
// and the Alibaba PAI 2020 machine spec (machine,gpu_type,cap_cpu,cap_mem,cap_gpu; no header).

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "sim/errors.hpp"
#include "sim/text.hpp"
#include "traces/fields.hpp"
#include "traces/import.hpp"
#include "traces/table.hpp"

namespace headroom::traces {

namespace {

using Key = std::tuple<std::string, std::int32_t, std::int32_t, std::int64_t>;  // model, GPUs, CPUs, GiB

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

constexpr detail::Column kOpenbNodeColumns[] = {
    {"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", false},
};
constexpr detail::Column kPaiColumns[] = {
    {"machine", true}, {"gpu_type", true}, {"cap_cpu", true}, {"cap_mem", true}, {"cap_gpu", true},
};

std::string pool_name(const Key& k) {
  std::string model;
  for (const char c : std::get<0>(k))
    model += std::isalnum(static_cast<unsigned char>(c))
                 ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                 : '-';
  return model + "-" + std::to_string(std::get<1>(k)) + "gpu-" + std::to_string(std::get<2>(k)) + "cpu-" +
         std::to_string(std::get<3>(k)) + "gib";
}

// YAML plain scalars would misread some names (a number, "true", a leading '-'); quote unless the
// name is plainly safe.
std::string yaml_scalar(const std::string& s) {
  const bool safe =
      !s.empty() && std::isalpha(static_cast<unsigned char>(s.front())) && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  const bool reserved = s == "true" || s == "false" || s == "yes" || s == "no" || s == "null" || s == "on" ||
                        s == "off" || s == "True" || s == "False" || s == "Yes" || s == "No" || s == "Null";
  if (safe && !reserved) return s;
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {  // a control character: YAML's \xNN
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

ClusterImport import_cluster(const std::string& path) {
  ClusterImport out;
  // One reader for the header's look and the rows: a pipe (`<(zcat nodes.csv.gz)`) cannot be
  // opened twice, so the rows are read again from the reader's buffer.
  std::optional<detail::LineReader> in;
  in.emplace(path);
  bool openb = false;
  {
    std::string_view line;
    while (in->next_line(line))
      if (!detail::trim(line).empty()) break;
    const auto cells = detail::header_cells(line);
    openb = std::find(cells.begin(), cells.end(), "sn") != cells.end();
    if (!openb && cells.size() != 5)
      throw sim::InputError(path, in->line_number(), 0, "",
                            "not a known node list: expected the openb header sn,cpu_milli,memory_mib,gpu,model or "
                            "5 cells machine,gpu_type,cap_cpu,cap_mem,cap_gpu (PAI machine spec, no header)");
    detail::reread(in, "the header");
  }
  std::map<Key, std::int64_t> pools;
  std::int64_t gpu_nodes = 0;
  // A node with GPUs, as a scenario's pool can hold it (models/cluster.hpp: at most 1,024 GPUs and
  // 1,000,000 CPUs a node, 1,000,000 nodes a cluster), so the YAML written always loads.
  auto add = [&](const detail::Table& t, std::size_t model, std::int32_t gpus, std::int64_t cpus, std::int64_t gib,
                 std::size_t gpu_col, std::size_t cpu_col) {
    if (gpus > models::kMaxNodeGpus)
      t.fail(gpu_col,
             "more than " + std::to_string(models::kMaxNodeGpus) + " GPUs on one node (a scenario pool's most)");
    if (cpus > models::kMaxNodeCpus)
      t.fail(cpu_col,
             "more than " + sim::thousands(models::kMaxNodeCpus) + " CPUs on one node (a scenario pool's most)");
    if (t.empty(model)) t.fail(model, "a node with GPUs needs a GPU model");
    if (++gpu_nodes > models::kMaxClusterNodes)
      t.fail(gpu_col, "more than " + sim::thousands(models::kMaxClusterNodes) +
                          " nodes with GPUs (the most one simulation holds)");
    ++pools[{std::string(t.name(model)), gpus, static_cast<std::int32_t>(cpus), gib}];
  };
  if (openb) {
    out.format = "openb-nodes";
    detail::Table t(*in, kOpenbNodeColumns, {.layout = "openb node list"});
    while (t.next()) {
      ++out.nodes_read;
      const std::int64_t cpu_milli = t.integer(1, 0, kInt32Max * 1000);
      const std::int64_t mem_mib = t.integer(2, 0, std::numeric_limits<std::int64_t>::max() / 2);
      const auto gpus = static_cast<std::int32_t>(t.integer(3, 0, kInt32Max));
      if (gpus == 0) {
        ++out.cpu_only_nodes;
        continue;
      }
      add(t, 4, gpus, cpu_milli / 1000, mem_mib / 1024, 3, 1);
    }
  } else {
    out.format = "pai-machines";
    detail::Table t(*in, kPaiColumns, {.header = false, .layout = "PAI machine spec"});
    while (t.next()) {
      ++out.nodes_read;
      const auto cpus = static_cast<std::int32_t>(t.integer(2, 0, kInt32Max));
      const std::int64_t mem_gb = t.integer(3, 0, std::numeric_limits<std::int64_t>::max() / 2048);
      const auto gpus = static_cast<std::int32_t>(t.integer(4, 0, kInt32Max));
      if (gpus == 0) {
        ++out.cpu_only_nodes;
        continue;
      }
      add(t, 1, gpus, cpus, mem_gb, 4, 2);
    }
  }
  if (out.nodes_read == 0) throw sim::InputError(path, 0, 0, "", "no nodes in the node list");
  if (pools.empty())
    throw sim::InputError(
        path, 0, 0, "",
        "no node with GPUs in the node list (" + std::to_string(out.cpu_only_nodes) + " CPU-only nodes)");
  // Two models can make one name ("A-100" and "A_100" are both a-100-...): the later ones get -2, -3.
  std::set<std::string> taken;
  for (const auto& [key, count] : pools) {
    std::string name = pool_name(key);
    for (int k = 2; !taken.insert(name).second; ++k) name = pool_name(key) + "-" + std::to_string(k);
    out.cluster.pools.push_back({std::move(name), static_cast<std::int32_t>(count), std::get<1>(key), std::get<0>(key),
                                 std::get<2>(key), std::get<3>(key)});
  }
  return out;
}

std::string cluster_yaml(const ClusterImport& imported, const std::string& source) {
  std::ostringstream os;
  const auto& c = imported.cluster;
  std::string named = source;  // one comment line whatever the file's name holds
  for (char& ch : named)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  os << "# from " << named << " (" << imported.format << "): " << imported.nodes_read << " nodes, " << c.total_nodes()
     << " with GPUs in " << c.pools.size() << " pools, " << c.total_gpus() << " GPUs";
  if (imported.cpu_only_nodes > 0) os << "; " << imported.cpu_only_nodes << " CPU-only nodes left out";
  os << "\ncluster:\n  pools:\n";
  for (const auto& p : c.pools) {
    os << "    - name: " << yaml_scalar(p.name) << "\n"
       << "      nodes: " << p.nodes << "\n"
       << "      gpus_per_node: " << p.gpus_per_node << "\n"
       << "      gpu_type: " << yaml_scalar(p.gpu_type) << "\n";
    if (p.cpus_per_node > 0) os << "      cpus_per_node: " << p.cpus_per_node << "\n";
    if (p.memory_gib > 0) os << "      memory_gib: " << p.memory_gib << "\n";
  }
  return os.str();
}

}  // namespace headroom::traces
