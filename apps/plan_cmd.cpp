#include "apps/plan_cmd.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "apps/progress_line.hpp"
#include "planner/plan.hpp"
#include "planner/sweep.hpp"
#include "results/format.hpp"
#include "sim/errors.hpp"
#include "sim/time.hpp"

namespace headroom::app {

namespace {

std::string show(const planner::Target& t, double v) {
  if (t.unit == "number") return std::fabs(v) >= 1000 ? results::grouped(v, 0) : results::grouped(v, 3);
  if (t.unit == "ratio") return results::percent(v);
  if (t.kpi == "tenant.gpu_hours") return results::grouped(v, 1) + " GPU-h";
  return results::duration(v);
}

std::int64_t parse_int(const std::string& s, const std::string& where) {
  std::int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty())
    throw sim::InputError("", 0, 0, where, "expected LO:HI with integers, got \"" + s + "\"");
  return v;
}

// What the answer means: its GPUs and cost, the scenario's size as it is, the margin between
// the two, and how far each KPI is from its target there.
void print_answer_details(const planner::PlanRequest& req, const planner::PlanResult& r) {
  const planner::Probe* at = nullptr;
  for (const auto& p : r.curve)
    if (p.value == *r.answer) at = &p;
  if (at == nullptr) return;
  std::printf("  at the answer: %s GPUs", results::thousands(at->gpus).c_str());
  if (!std::isnan(at->cost)) std::printf(", cost %s for the run", results::money(at->cost, at->currency).c_str());
  std::printf("\n");
  if (r.current) {
    const std::int64_t dv = *r.current - *r.answer, dg = r.current_gpus - at->gpus;
    std::printf("  as the scenario is: %s = %lld (%s GPUs): ", req.vary.c_str(), static_cast<long long>(*r.current),
                results::thousands(r.current_gpus).c_str());
    if (dv == 0)
      std::printf("exactly the answer, no margin\n");
    else
      std::printf(
          "%s %s (%s GPUs, %s of its GPUs)\n", dv > 0 ? "margin" : "short by", results::thousands(std::abs(dv)).c_str(),
          results::thousands(std::abs(dg)).c_str(),
          results::percent(r.current_gpus > 0 ? static_cast<double>(std::abs(dg)) / static_cast<double>(r.current_gpus)
                                              : 0.0)
              .c_str());
  } else {
    std::printf("  as the scenario is: %s GPUs\n", results::thousands(r.current_gpus).c_str());
  }
  for (std::size_t k = 0; k < req.targets.size(); ++k) {
    const planner::Target& t = req.targets[k];
    const double v = at->worst[k], slack = t.at_most ? t.bound - v : v - t.bound;
    planner::Target bound = t;
    std::printf("  %s: %s at the answer, %s to spare\n", t.text.c_str(), show(t, v).c_str(),
                show(bound, slack).c_str());
  }
}

}  // namespace

int cmd_plan(const std::string& scenario, const std::string& vary, const std::string& range,
             const std::vector<std::string>& targets, int seeds, std::atomic<bool>* stop) {
  planner::PlanRequest req;
  req.scenario = scenario;
  req.vary = vary;
  const auto colon = range.find(':');
  if (colon == std::string::npos) throw sim::InputError("", 0, 0, "--range", "expected LO:HI, got \"" + range + "\"");
  req.lo = parse_int(range.substr(0, colon), "--range");
  req.hi = parse_int(range.substr(colon + 1), "--range");
  for (const auto& t : targets) req.targets.push_back(planner::parse_target(t));
  if (seeds > 0) {
    const auto base = planner::load_sweep(scenario);
    for (int i = 0; i < seeds; ++i) req.seeds.push_back(base.seeds.front() + static_cast<std::uint64_t>(i));
  }
  req.stop = stop;
  planner::RunsProgress progress;
  req.progress = &progress;
  ProgressLine line([&] { return "plan: " + progress.line("probe runs"); });
  req.on_probe = [&](std::int64_t v, bool pass) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "  probed %s = %lld: %s\n", vary.c_str(), static_cast<long long>(v),
                  pass ? "meets" : "misses");
    line.message(buf);
  };
  const planner::PlanResult r = planner::plan(req);
  line.stop();

  std::printf("%-10s %9s %-6s %-7s", vary.substr(vary.rfind('.') + 1).c_str(), "GPUs", "result", "seeds");
  for (const auto& t : req.targets) std::printf("  %-24s", t.text.c_str());
  std::printf("\n");
  for (const auto& p : r.curve) {
    std::printf("%-10lld %9s %-6s %zu/%-5zu", static_cast<long long>(p.value), results::thousands(p.gpus).c_str(),
                p.pass ? "meets" : "misses", p.seeds_passing, r.seeds);
    std::string why;  // targets missed because jobs never ran
    for (std::size_t k = 0; k < req.targets.size(); ++k) {
      const planner::NotRun& n = p.not_run[k];
      // Their waits are lower bounds then.
      std::printf("  %-24s", ((n.never_started > 0 ? ">=" : "") + show(req.targets[k], p.worst[k])).c_str());
      if (n.any()) why += (why.empty() ? "" : "; ") + req.targets[k].text + " missed: " + planner::describe(n);
    }
    if (!why.empty()) std::printf("  (%s)", why.c_str());
    std::printf("\n");
  }
  std::printf("(KPI columns: the worst value over the %zu seed%s)\n", r.seeds, r.seeds == 1 ? "" : "s");
  if (!r.monotone)
    std::printf(
        "warning: the KPIs are not monotone in %s: a smaller value met the targets where a larger one did not; "
        "the answer is the smallest value found above every failure\n",
        vary.c_str());
  if (r.cancelled) {
    std::fprintf(stderr, "interrupted: the search stopped early\n");
    return 130;
  }
  if (r.answer) {
    std::printf("answer: %s = %lld is the smallest value in [%lld, %lld] meeting every target on all %zu seeds\n",
                vary.c_str(), static_cast<long long>(*r.answer), static_cast<long long>(req.lo),
                static_cast<long long>(req.hi), r.seeds);
    print_answer_details(req, r);
  } else {
    std::string missed;
    if (!r.curve.empty()) {
      const auto& top = r.curve.back();
      for (std::size_t k = 0; k < req.targets.size(); ++k) {
        const planner::NotRun& n = top.not_run[k];
        if (!planner::meets(req.targets[k], top.worst[k]) || n.any())
          missed += (missed.empty() ? "" : ", ") + req.targets[k].text + " (" + (n.never_started > 0 ? ">=" : "") +
                    show(req.targets[k], top.worst[k]) +
                    (n.any() ? "; missed: " + planner::describe(n) : std::string()) + ")";
      }
    }
    std::printf(
        "answer: no value in [%lld, %lld] meets every target; at %s = %lld it still misses %s\n"
        "(the search assumes that a larger value never makes a target worse)\n",
        static_cast<long long>(req.lo), static_cast<long long>(req.hi), vary.c_str(), static_cast<long long>(req.hi),
        missed.c_str());
  }
  return 0;
}

}  // namespace headroom::app
