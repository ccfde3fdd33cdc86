// slurmctld as a SystemModule (policies/system_module.hpp).
#include <algorithm>

#include "policies/slurm/calibration.hpp"
#include "policies/slurm/cluster_refs.hpp"
#include "policies/slurm/slurm.hpp"
#include "policies/slurm/slurm_conf.hpp"
#include "policies/system_module.hpp"

namespace headroom::policies::slurm {

namespace {

SiteImport site_import(SlurmConfImport imported) {
  return {std::move(imported.params), std::move(imported.cluster), std::move(imported.warnings),
          std::move(imported.files)};
}

// The site's own files under `policy:`, read in this order: slurm.conf (with its Include and
// gres.conf), `sacctmgr show qos -P`, `sshare -a -l -P` (policies/slurm/slurm_conf.hpp).
const SiteFile kSiteFiles[] = {
    {"slurm_conf", [](const std::string& path) { return site_import(read_slurm_conf(path)); }},
    {"sacctmgr_qos", [](const std::string& path) { return site_import(read_sacctmgr_qos(path)); }},
    {"sshare", [](const std::string& path) { return site_import(read_sshare(path)); }},
};

const Calibration kCalibration{calibration_candidates, searched_key};

// Fair-share accounts weighted like the tenants (they matter once PriorityWeightFairshare > 0).
std::optional<Derived> derive(const DeriveRequest& r) {
  if (r.tenants.empty()) return std::nullopt;
  Derived d;
  for (const auto& t : r.tenants) {
    d.put("accounts." + t.name + ".shares", integer_weight(t.weight), r.file);
    d.put("accounts." + t.name + ".users", "[" + t.name + "]", r.file);
  }
  return d;
}

// Partitions whose Nodes leave out some of the cluster's pools (slurm.conf's PartitionName
// Nodes=, or `partitions.<name>.Nodes`); jobs naming no partition go to the Default one.
NodeRules node_rules(const PolicyParams& params, const models::ClusterSpec& cluster) {
  NodeRules out;
  out.what = "partitions";
  const Config c = parse_config(params);
  for (const PartitionConf& p : c.partitions) {
    out.declared.push_back(p.name);
    if (p.pools.empty()) continue;
    bool all = true;
    for (const auto& pool : cluster.pools)
      all = all && std::find(p.pools.begin(), p.pools.end(), pool.name) != p.pools.end();
    if (all) continue;
    // Without Default: YES the first partition is the default (job_mgr.cpp, partition_of).
    const bool is_default = p.is_default || (&p == &c.partitions.front() &&
                                             std::none_of(c.partitions.begin(), c.partitions.end(),
                                                          [](const PartitionConf& q) { return q.is_default; }));
    out.queues.push_back({p.name, p.pools, is_default});
  }
  return out;
}

}  // namespace

SystemModule module() {
  SystemModule m;
  m.info = {"slurm",
            "slurmctld: multifactor priority with classic or Fair Tree fair-share, strict-priority main scheduler per "
            "partition, conservative backfill, cons_tres + GRES gpu, time limits, partition_prio / qos preemption",
            param_keys()};
  m.check = check_params;
  m.make = [](const PolicyParams& params, std::uint64_t) { return make_policy(params); };
  m.site_files = kSiteFiles;
  m.cluster_file = &kSiteFiles[0];
  m.check_cluster_refs = check_cluster_refs;
  m.derive = derive;
  m.node_rules = node_rules;
  m.run_cost = 5;  // backfill's reservations
  m.calibration = &kCalibration;
  return m;
}

}  // namespace headroom::policies::slurm
