#pragma once

// slurm.conf (with Include) and gres.conf read as Slurm reads them, turned into a cluster (node
// pools) and the slurm policy's parameters (policies/slurm/params.cpp's keys). See
// docs/policies/slurm.md, "Reading slurm.conf".

#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "policies/api.hpp"

namespace headroom::policies::slurm {

struct SlurmConfImport {
  // Parameters as under `policy:` (PriorityWeightAge, partitions.gpu.Nodes, nodes.<pool>.Weight,
  // ...), each located at its slurm.conf line.
  PolicyParams params;
  // One pool per group of nodes with the same NodeName line and the same partitions; nodes
  // without GPUs are left out (counted in cpu_only_nodes).
  models::ClusterSpec cluster;
  std::int64_t cpu_only_nodes = 0;
  // "slurm.conf:12: DefMemPerCPU changes scheduling and is not modelled" (once per key).
  std::vector<std::string> warnings;
  // Every file read, the one named first (an output must never be one of them).
  std::vector<std::string> files;
};

// Throws sim::InputError naming the file and line on malformed input.
SlurmConfImport read_slurm_conf(const std::string& path);

// `sacctmgr show qos -P` (a '|' table with a header row): qos.<name>.Priority, Preempt,
// UsageFactor, GraceTime, PreemptExemptTime, and the per-user limits MaxJobsPU (MaxJobsPerUser)
// and the gres/gpu of MaxTRESPU (MaxGPUsPerUser); other limits (GrpTRES, MaxWall, other TRES of
// MaxTRESPU, ...) and Flags are listed once as warnings. Same result type; its cluster stays empty.
SlurmConfImport read_sacctmgr_qos(const std::string& path);

// `sshare -a -l -P`: the association tree (leading spaces of Account give the depth) becomes
// accounts.<name>.shares / parent / users, and RawUsage seeds fair-share usage as
// usage.<user or account> (TRES-billing-seconds, as Slurm counts it).
SlurmConfImport read_sshare(const std::string& path);

// docs/importing.md's table of what read_slurm_conf does with each record, key and field (read,
// warned once, accepted quietly, refused), made from the tables it reads by; a test checks the
// page holds exactly this.
std::string site_keys_markdown();

// Expands a Slurm hostlist ("gpu[01-04,07],login1") into names; throws std::invalid_argument
// naming the problem when malformed or longer than 1,000,000 names.
std::vector<std::string> expand_hostlist(const std::string& list);

}  // namespace headroom::policies::slurm
