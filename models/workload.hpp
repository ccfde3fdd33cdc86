#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/job.hpp"

namespace headroom::models {

// The name an importer gives a user or queue that the trace does not record (SWF -1). As a queue it
// is not one the job named: a policy with configured queues sends it where a job naming none goes.
inline constexpr std::string_view kUnknownName = "unknown";

// Interns names (tenants, queues) into dense ids in first-seen order.
class NameTable {
 public:
  std::uint32_t intern(std::string_view name);
  std::optional<std::uint32_t> find(std::string_view name) const;
  const std::string& name(std::uint32_t id) const { return names_.at(id); }
  std::size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  // The slot of `name` in slots_, or the empty slot where it would go.
  std::size_t probe(std::string_view name) const;
  void grow();

  std::vector<std::string> names_;
  // Open addressing with linear probing, looked up by string_view without building a string (an
  // import interns a name per row): slots_ holds the id + 1 of the name placed there, 0 when
  // empty; its size is a power of two (2^(64 - shift_)), kept at most half full. Ids come from
  // names_ order, never from the hash.
  std::vector<std::uint32_t> slots_;
  int shift_ = 64;
  std::uint32_t last_ = 0;  // the id intern returned last (checked first)
};

struct Tenant {
  std::string name;
  double weight = 1.0;
  // One tenant description for every policy (headroom compare derives each policy's quota and
  // queue settings from it, docs/planner.md): GPUs guaranteed and the most it may hold; -1 = not set.
  std::int64_t gpus = -1;
  std::int64_t max_gpus = -1;
};

// What an importer learnt about the trace besides its jobs.
struct TraceMeta {
  std::string path;
  std::string format;                 // "swf", "csv", ...
  std::int64_t max_procs = -1;        // SWF MaxProcs header
  std::int64_t max_nodes = -1;        // SWF MaxNodes header
  std::int64_t unix_start = -1;       // SWF UnixStartTime header (seconds)
  std::int64_t rows = 0;              // data rows read
  std::int64_t skipped = 0;           // rows read but not turned into jobs (see warnings)
  std::int64_t bad_rows = 0;          // malformed rows passed over (ImportOptions::skip_bad_rows)
  std::vector<std::string> warnings;  // at most a few, each naming a row
};

// A job stream: jobs sorted by (submit, order in the source).
struct Workload {
  std::vector<Job> jobs;
  NameTable tenants;
  NameTable queues;
  NameTable groups;                         // Job::group names
  NameTable qos;                            // Job::qos names
  std::vector<std::string> gpu_type_names;  // Job::gpu_type - 1 indexes this
  // Job::node_set - 1 indexes this: the names of the pools such a job may use (at most 255 sets).
  std::vector<std::vector<std::string>> node_sets;
  TraceMeta meta;
};

// Whether the job's node set (Job::node_set) lets it use the pool of that name: always without
// one. The one test behind policies::pool_eligible, Slurm's --constraint and split's routing.
inline bool in_node_set(const Workload& w, const Job& j, std::string_view pool) {
  if (j.node_set == 0) return true;
  if (j.node_set > w.node_sets.size()) return false;
  const auto& names = w.node_sets[j.node_set - 1u];
  for (const auto& n : names)
    if (n == pool) return true;
  return false;
}

}  // namespace headroom::models
