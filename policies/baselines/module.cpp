// The literature baselines as SystemModules (policies/system_module.hpp): fifo (with optional EASY
// backfilling and per-user limits), sjf, srtf, las and gavel.
#include "policies/baselines/easy.hpp"
#include "policies/baselines/gavel.hpp"
#include "policies/baselines/las.hpp"
#include "policies/baselines/queue_order.hpp"
#include "policies/baselines/srtf.hpp"
#include "policies/system_module.hpp"

namespace headroom::policies::baselines {

namespace {

void check_placement(const PolicyParams& params, std::vector<sim::InputError>& errors) {
  auto it = params.find("placement");
  if (it == params.end()) return;
  if (it->second.text != "consolidate")
    errors.emplace_back(it->second.file, it->second.line, it->second.column, "policy.placement",
                        "unknown placement \"" + it->second.text + "\"; expected: consolidate");
}

std::vector<std::string> fifo_param_keys() {
  std::vector<std::string> keys{"placement"};
  for (const auto& k : easy_param_keys()) keys.push_back(k);
  return keys;
}

}  // namespace

SystemModule fifo_module() {
  SystemModule m;
  m.info = {"fifo",
            "strict first-in first-out with consolidate placement (Helios FIFO); optional EASY backfilling and "
            "per-user limits (backfill: easy, MaxJobsPerUser, MaxGPUsPerUser, users.<name>.MaxJobs / MaxGPUs)",
            fifo_param_keys()};
  m.check = [](const PolicyParams& params, std::vector<sim::InputError>& errors) {
    check_placement(params, errors);
    check_easy_params(params, errors);
  };
  m.make = [](const PolicyParams& params, std::uint64_t) {
    return wants_easy(params) ? make_easy_policy(params) : make_queue_policy(QueueKey::Submit);
  };
  return m;
}

SystemModule sjf_module() {
  SystemModule m;
  m.info = {"sjf",
            "shortest recorded run time first, head-of-line blocking, consolidate placement (Helios SJF)",
            {"placement"}};
  m.check = check_placement;
  m.make = [](const PolicyParams&, std::uint64_t) { return make_queue_policy(QueueKey::Runtime); };
  return m;
}

SystemModule srtf_module() {
  SystemModule m;
  m.info = {"srtf",
            "preemptive shortest remaining time first, checkpoint overhead 7/30/60 s, consolidate placement (Helios "
            "SRTF)",
            {"checkpoint_overhead"}};
  m.check = check_checkpoint_overhead;
  m.make = [](const PolicyParams& params, std::uint64_t) { return make_srtf_policy(params); };
  return m;
}

SystemModule las_module() {
  SystemModule m;
  m.info = {"las",
            "Tiresias discretised 2D-LAS: queues by attained GPU-time, FIFO within, preemptive, consolidate placement",
            {"queue_limit", "promote_knob", "checkpoint_overhead"}};
  m.check = check_las_params;
  m.make = [](const PolicyParams& params, std::uint64_t) { return make_las_policy(params); };
  return m;
}

SystemModule gavel_module() {
  SystemModule m;
  m.info = {"gavel",
            "Gavel-style heterogeneity-aware rounds (OSDI'20): max-min fairness on throughput normalised by the "
            "runtime model, jobs assigned to the GPU type they gain most on, checkpoint moves between rounds",
            gavel::param_keys()};
  m.check = gavel::check_params;
  m.make = [](const PolicyParams& params, std::uint64_t) { return gavel::make_policy(params); };
  return m;
}

}  // namespace headroom::policies::baselines
