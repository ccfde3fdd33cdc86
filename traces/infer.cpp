#include "traces/infer.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>

#include "traces/line_reader.hpp"

namespace headroom::traces {
namespace {

struct Step {
  sim::Tick time;
  std::int64_t gpus;  // + at a start, - at an end
  std::uint32_t user, queue;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<Concurrency> sorted(std::vector<Concurrency> v) {
  std::sort(v.begin(), v.end(), [](const Concurrency& a, const Concurrency& b) {
    return a.jobs != b.jobs ? a.jobs > b.jobs : a.name < b.name;
  });
  return v;
}

}  // namespace

std::string scheduler_from_header(const std::string& text) {
  const std::string t = lower(text);
  if (t.find("easy") != std::string::npos) return "easy";
  if (t.find("conservative") != std::string::npos) return "conservative";
  if (t.find("backfill") != std::string::npos) return "backfill";
  if (t.find("fcfs") != std::string::npos || t.find("first-come") != std::string::npos ||
      t.find("first come") != std::string::npos)
    return "fcfs";
  return "";
}

Inference infer_system(const models::Workload& w, sim::Tick window, std::int64_t units_per_gpu,
                       const std::string& header_path) {
  Inference inf;
  inf.window = window > 0 ? window : sim::kDay;
  inf.jobs = static_cast<std::int64_t>(w.jobs.size());
  if (w.meta.max_procs > 0 && units_per_gpu > 0)
    inf.nominal_gpus = (w.meta.max_procs + units_per_gpu - 1) / units_per_gpu;
  std::vector<Step> steps;
  std::vector<Concurrency> users(w.tenants.size()), queues(w.queues.size());
  for (std::size_t i = 0; i < users.size(); ++i) users[i].name = w.tenants.name(static_cast<std::uint32_t>(i));
  for (std::size_t i = 0; i < queues.size(); ++i) queues[i].name = w.queues.name(static_cast<std::uint32_t>(i));
  for (const models::Job& j : w.jobs) {
    if (j.trace_start < 0) continue;
    ++inf.recorded;
    const double wait = sim::to_seconds(std::max<sim::Tick>(0, j.trace_start - j.submit));
    for (Concurrency* c : {&users[j.tenant], &queues[j.queue]}) {
      c->mean_wait_s += wait;
      ++c->jobs;
      c->largest_job = std::max<std::int64_t>(c->largest_job, j.gpus);
    }
    steps.push_back({j.trace_start, j.gpus, j.tenant, j.queue});
    steps.push_back({j.trace_start + std::max<sim::Tick>(0, j.runtime), -std::int64_t{j.gpus}, j.tenant, j.queue});
  }
  for (auto* v : {&users, &queues})
    for (auto& c : *v)
      if (c.jobs > 0) c.mean_wait_s /= static_cast<double>(c.jobs);
  // Ends before starts at the same time: a job ending frees its GPUs for one starting then.
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return a.time != b.time ? a.time < b.time : (a.gpus < 0) > (b.gpus < 0);
  });
  std::vector<std::int32_t> ujobs(users.size()), qjobs(queues.size());
  std::vector<std::int64_t> ugpus(users.size()), qgpus(queues.size());
  std::int64_t busy = 0;
  sim::Tick last = steps.empty() ? 0 : steps.front().time;
  const auto window_of = [&](sim::Tick t) { return (t >= 0 ? t : t - inf.window + 1) / inf.window; };
  std::map<std::int64_t, std::pair<std::int64_t, long double>> windows;  // max, busy x ms
  const auto spread = [&](sim::Tick from, sim::Tick to) {                // busy held over [from, to)
    while (from < to) {
      const std::int64_t k = window_of(from);
      const sim::Tick end = std::min(to, (k + 1) * inf.window);
      auto& win = windows[k];
      win.first = std::max(win.first, busy);
      win.second += static_cast<long double>(busy) * static_cast<long double>(end - from);
      from = end;
    }
  };
  for (const Step& s : steps) {
    spread(last, s.time);
    last = s.time;
    const int d = s.gpus >= 0 ? 1 : -1;
    busy += s.gpus;
    ujobs[s.user] += d;
    qjobs[s.queue] += d;
    ugpus[s.user] += s.gpus;
    qgpus[s.queue] += s.gpus;
    users[s.user].max_jobs = std::max(users[s.user].max_jobs, ujobs[s.user]);
    queues[s.queue].max_jobs = std::max(queues[s.queue].max_jobs, qjobs[s.queue]);
    users[s.user].max_gpus = std::max(users[s.user].max_gpus, ugpus[s.user]);
    queues[s.queue].max_gpus = std::max(queues[s.queue].max_gpus, qgpus[s.queue]);
    inf.max_busy = std::max(inf.max_busy, busy);
    auto& win = windows[window_of(s.time)];
    win.first = std::max(win.first, busy);
  }
  for (const auto& [k, v] : windows)
    inf.capacity.push_back({k * inf.window, v.first, static_cast<double>(v.second / inf.window)});
  std::erase_if(users, [](const Concurrency& c) { return c.jobs == 0; });
  std::erase_if(queues, [](const Concurrency& c) { return c.jobs == 0; });
  inf.users = sorted(std::move(users));
  inf.queues = sorted(std::move(queues));

  if (!header_path.empty()) {
    detail::LineReader in(header_path);
    std::string_view line;
    std::string all;
    while (in.next_line(line)) {
      std::size_t i = 0;
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i == line.size()) continue;
      if (line[i] != ';') break;  // the header ends at the first job
      std::string_view text = line.substr(i + 1);
      while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
      while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.remove_suffix(1);
      const std::string l = lower(text);
      if (l.starts_with("note") || l.starts_with("scheduler") || l.starts_with("queue") || l.starts_with("partition") ||
          l.starts_with("maxqueues") || l.starts_with("maxpartitions") ||
          (!inf.header_notes.empty() && !l.empty() && l.find(':') == std::string::npos))
        inf.header_notes.emplace_back(text);
      all += std::string(text) + "\n";
    }
    inf.scheduler = scheduler_from_header(all);
  }
  return inf;
}

void print_inference(std::ostream& out, const Inference& inf, std::size_t max_rows) {
  char b[256];
  out << "what the log says about the system (docs/fidelity.md): " << inf.recorded << " of " << inf.jobs
      << " jobs have a recorded start\n";
  if (inf.recorded == 0) {
    out << "  no recorded starts: nothing to infer (no concurrency, no capacity, no wait to calibrate against)\n";
    return;
  }
  out << "\ncapacity in use (busy GPUs per " << sim::format_duration(inf.window) << ")";
  if (inf.nominal_gpus > 0) out << ", nominal " << inf.nominal_gpus << " GPUs (MaxProcs header)";
  out << ":\n";
  std::snprintf(b, sizeof b, "  %-12s %9s %9s %9s\n", "window", "max busy", "mean busy", "of nominal");
  out << b;
  for (const auto& c : inf.capacity) {
    const double of = inf.nominal_gpus > 0 ? 100.0 * c.mean_busy / static_cast<double>(inf.nominal_gpus) : 0;
    const std::string label = inf.window % sim::kDay == 0 ? "day " + std::to_string(c.start / sim::kDay)
                                                          : std::to_string(c.start / sim::kHour) + " h";
    std::snprintf(b, sizeof b, "  %-12s %9lld %9.0f %8.0f %%\n", label.c_str(), static_cast<long long>(c.max_busy),
                  c.mean_busy, of);
    out << b;
  }
  out << "  most busy at once: " << inf.max_busy << " GPUs";
  if (inf.nominal_gpus > 0)
    out << " ("
        << static_cast<int>(100.0 * static_cast<double>(inf.max_busy) / static_cast<double>(inf.nominal_gpus) + 0.5)
        << " % of nominal)";
  out << "\n  -> availability: the cluster size, or Slurm DOWN nodes / maint reservations for windows that never\n"
         "     reach nominal; Kueue ClusterQueue nominalQuota; KAI and Volcano queue capability\n";
  const auto table = [&](const char* what, const std::vector<Concurrency>& rows) {
    std::snprintf(b, sizeof b, "\n  %-14s %8s %9s %9s %12s\n", what, "jobs", "max jobs", "max GPUs", "mean wait");
    out << b;
    for (std::size_t i = 0; i < rows.size() && i < max_rows; ++i) {
      const auto& c = rows[i];
      std::snprintf(b, sizeof b, "  %-14.14s %8lld %9d %9lld %11.0fs\n", c.name.c_str(), static_cast<long long>(c.jobs),
                    c.max_jobs, static_cast<long long>(c.max_gpus), c.mean_wait_s);
      out << b;
    }
    if (rows.size() > max_rows) out << "  ... and " << rows.size() - max_rows << " more\n";
  };
  out << "\nobserved concurrency (most running at once):";
  table("user", inf.users);
  out << "  -> per-user limits: Slurm MaxJobsPerUser and MaxTRESPerUser=gres/gpu=N (QOS) or an association's\n"
         "     MaxJobs / GrpTRES; fifo+EASY MaxJobsPerUser / MaxGPUsPerUser; Kueue and KAI: a queue per user with\n"
         "     nominalQuota / limit\n";
  table("queue", inf.queues);
  out << "  -> queues: Slurm partitions (one per queue) with GrpTRES; Kueue ClusterQueues; KAI and Volcano queues\n";
  out << "\nscheduler named by the header: "
      << (inf.scheduler.empty() ? std::string("none (the header is silent)") : inf.scheduler);
  if (inf.scheduler == "easy") out << " -> fifo with backfill: easy";
  if (inf.scheduler == "conservative" || inf.scheduler == "backfill") out << " -> slurm sched/backfill";
  if (inf.scheduler == "fcfs") out << " -> fifo (no backfill)";
  out << "\n";
  for (const auto& n : inf.header_notes) out << "  ; " << n << "\n";
}

}  // namespace headroom::traces
