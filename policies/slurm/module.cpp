// slurmctld as a SystemModule (policies/system_module.hpp).
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
  m.run_cost = 5;  // backfill's reservations
  m.calibration = &kCalibration;
  return m;
}

}  // namespace headroom::policies::slurm
