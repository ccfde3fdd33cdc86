#include "traces/infer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string_view>
#include <utility>

#include "sim/text.hpp"
#include "traces/line_reader.hpp"
#include "traces/table.hpp"

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

constexpr std::size_t kMaxFilters = 100;  // cleaning filters kept as text (all are counted)
constexpr sim::Tick kMaxWindows = 20000;  // capacity windows at most (Inference::window_asked)

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

double cleaned_share(const Inference& inf) {
  if (inf.cleaned_removed <= 0) return 0;
  const std::int64_t span = inf.original_jobs - inf.cleaned_cut;  // the jobs of the span kept, before cleaning
  return span >= inf.cleaned_removed && span > 0 ? static_cast<double>(inf.cleaned_removed) / static_cast<double>(span)
                                                 : 1.0;  // no usable MaxJobs: taken as material
}

std::string cleaned_log_note(const Inference& inf) {
  const double share = cleaned_share(inf);
  if (share < kCleanedNoteShare) return "";
  std::string out =
      "a cleaned log: the archive's filters removed " + sim::thousands(inf.cleaned_removed) + " jobs of named users";
  if (!inf.cleaning_filters.empty()) {
    out += " (";
    const std::size_t shown = std::min<std::size_t>(inf.cleaning_filters.size(), 3);
    for (std::size_t i = 0; i < shown; ++i) out += (i > 0 ? "; " : "") + inf.cleaning_filters[i];
    if (inf.cleaning_filters.size() > shown)
      out += "; and " + std::to_string(inf.cleaning_filters.size() - shown) + " more";
    out += ")";
  }
  const std::int64_t span = inf.original_jobs - inf.cleaned_cut;
  if (span > 0 && span >= inf.cleaned_removed)
    out += ", " + std::to_string(static_cast<long long>(share * 100.0 + 0.5)) + "% of the " + sim::thousands(span) +
           " jobs of the span it keeps";
  out +=
      ". The recorded waits were shaped by the whole load, the removed jobs' included: a replay of the jobs "
      "left can wait less than the log did";
  return out;
}

std::string header_scheduler_text(const Inference& inf) {
  if (!inf.scheduler.empty()) return inf.scheduler;
  if (!inf.scheduler_line.empty()) return "\"" + inf.scheduler_line + "\" (no queueing discipline named)";
  return "";
}

bool header_names_scheduler(const std::string& line) {
  const std::string t = lower(line);
  if (t.find("job manag") != std::string::npos) return true;
  for (std::size_t at = t.find("schedul"); at != std::string::npos; at = t.find("schedul", at + 1)) {
    // "scheduler" names one; "scheduling" only when it is not a kind of scheduling ("gang scheduling")
    const std::size_t end = t.find_first_not_of("abcdefghijklmnopqrstuvwxyz", at);
    const std::string word = t.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (word == "scheduler" || word == "schedulers") return true;
  }
  return false;
}

bool header_time_shared(const std::string& line) {
  const std::string t = lower(line);
  for (const char* k :
       {"non-dedicated", "nondedicated", "time-shar", "timeshar", "time shar", "gang schedul", "gang-schedul"})
    if (t.find(k) != std::string::npos) return true;
  return false;
}

void detect_prime_time(const models::Workload& w, std::int32_t utc_offset_minutes, models::DstRule dst,
                       models::PrimeTime& out, PrimeTimeEvidence& evidence) {
  out = models::PrimeTime{};
  evidence = PrimeTimeEvidence{};
  if (w.meta.unix_start < 0) return;
  // Each recorded start's weekday hour (0..119, Monday 00:00 first) or -1 on a weekend.
  struct Start {
    sim::Tick walltime;
    int hour;
  };
  std::vector<Start> starts;
  for (const models::Job& j : w.jobs) {
    if (j.trace_start < 0 || j.walltime <= 0) continue;
    const models::LocalTime lt = models::local_time(w.meta.unix_start * 1000 + j.trace_start, utc_offset_minutes, dst);
    starts.push_back({j.walltime, lt.weekday < 5 ? lt.weekday * 24 + static_cast<int>(lt.ms_of_day / sim::kHour) : -1});
  }
  constexpr std::int64_t kMinJobs = 50;
  constexpr double kQuarter = 0.25;
  constexpr double kRelease = 3;
  constexpr double kReleaseShare = 0.1;
  for (const sim::Tick bound : {sim::kHour, 2 * sim::kHour, 4 * sim::kHour, 8 * sim::kHour, 12 * sim::kHour}) {
    std::array<std::int64_t, 24> long_at{}, short_at{};
    std::int64_t longs = 0, shorts = 0;
    for (const Start& s : starts) {
      (s.walltime > bound ? longs : shorts) += 1;
      if (s.hour >= 0) (s.walltime > bound ? long_at : short_at)[static_cast<std::size_t>(s.hour % 24)] += 1;
    }
    if (longs < kMinJobs || shorts < kMinJobs) continue;
    // An hour is quiet for the long jobs when their share of starts there is at most a quarter of
    // the others' (and the others do start then).
    const auto quiet = [&](int h) {
      const double ls = static_cast<double>(long_at[static_cast<std::size_t>(h)]) / static_cast<double>(longs);
      const double ss = static_cast<double>(short_at[static_cast<std::size_t>(h)]) / static_cast<double>(shorts);
      return ss > 0 && ls <= kQuarter * ss;
    };
    if (!quiet(12)) continue;
    int from = 12, to = 13;
    while (from > 0 && quiet(from - 1)) --from;
    while (to < 24 && quiet(to)) ++to;
    if (to - from < 4) continue;
    std::int64_t li = 0, si = 0;
    for (int h = from; h < to; ++h) {
      li += long_at[static_cast<std::size_t>(h)];
      si += short_at[static_cast<std::size_t>(h)];
    }
    const double long_inside = static_cast<double>(li) / static_cast<double>(longs);
    const double short_inside = static_cast<double>(si) / static_cast<double>(shorts);
    if (long_inside > kQuarter * short_inside) continue;
    // The jobs it held start when it ends: the busier of the two hours after the window holds at
    // least three times the long jobs' mean weekday starts per hour over the other hours outside
    // it (two: a window's last hour may see a few long starts), and a tenth of all their starts
    // (2.4 times an even spread over the day). Without that release, a window of few long starts
    // is the long jobs' own rhythm, not a rule.
    if (to >= 24) continue;
    const int last = std::min(to + 2, 24);
    std::int64_t peak = 0, others = 0;
    for (int h = to; h < last; ++h) peak = std::max(peak, long_at[static_cast<std::size_t>(h)]);
    for (int h = 0; h < 24; ++h)
      if (h < from || h >= last) others += long_at[static_cast<std::size_t>(h)];
    const int other_hours = 24 - (last - from);
    if (other_hours > 0 &&
        static_cast<double>(peak) < kRelease * static_cast<double>(others) / static_cast<double>(other_hours))
      continue;
    if (static_cast<double>(peak) < kReleaseShare * static_cast<double>(longs)) continue;
    out.longer_than = bound;
    out.days = 0x1f;
    out.from_minute = from * 60;
    out.to_minute = to * 60;
    out.utc_offset_minutes = utc_offset_minutes;
    out.dst = dst;
    const double release = static_cast<double>(peak) / static_cast<double>(longs);
    evidence = {longs, shorts, long_inside, short_inside, release};
    return;
  }
}

namespace {
// The first HH:MM:SS in a header line ("Tue Feb 01 15:38:44 CET 2011"), in seconds; -1 when none.
std::int64_t clock_seconds(std::string_view text) {
  for (std::size_t i = 0; i + 8 <= text.size(); ++i) {
    const auto digit = [&](std::size_t k) { return text[i + k] >= '0' && text[i + k] <= '9'; };
    if (digit(0) && digit(1) && text[i + 2] == ':' && digit(3) && digit(4) && text[i + 5] == ':' && digit(6) &&
        digit(7)) {
      const int h = (text[i] - '0') * 10 + (text[i + 1] - '0');
      const int m = (text[i + 3] - '0') * 10 + (text[i + 4] - '0');
      const int sec = (text[i + 6] - '0') * 10 + (text[i + 7] - '0');
      if (h < 24 && m < 60 && sec < 61) return h * 3600 + m * 60 + sec;
    }
  }
  return -1;
}
}  // namespace

Inference infer_system(const models::Workload& w, sim::Tick window, std::int64_t units_per_gpu,
                       const std::string& header_path) {
  Inference inf;
  inf.window = window > 0 ? window : sim::kDay;
  inf.jobs = static_cast<std::int64_t>(w.jobs.size());
  if (w.meta.max_procs > 0 && units_per_gpu > 0)
    inf.nominal_gpus = w.meta.max_procs / units_per_gpu + (w.meta.max_procs % units_per_gpu != 0 ? 1 : 0);
  std::vector<Step> steps;
  std::vector<Concurrency> users(w.tenants.size()), queues(w.queues.size());
  for (std::size_t i = 0; i < users.size(); ++i) users[i].name = w.tenants.name(static_cast<std::uint32_t>(i));
  for (std::size_t i = 0; i < queues.size(); ++i) queues[i].name = w.queues.name(static_cast<std::uint32_t>(i));
  std::vector<std::vector<double>> user_waits(users.size()), queue_waits(queues.size());
  for (const models::Job& j : w.jobs) {
    if (j.trace_start < 0) continue;
    ++inf.recorded;
    const double wait = sim::to_seconds(std::max<sim::Tick>(0, j.trace_start - j.submit));
    user_waits[j.tenant].push_back(wait);
    queue_waits[j.queue].push_back(wait);
    for (Concurrency* c : {&users[j.tenant], &queues[j.queue]}) {
      ++c->jobs;
      c->largest_job = std::max<std::int64_t>(c->largest_job, j.gpus);
    }
    steps.push_back({j.trace_start, j.gpus, j.tenant, j.queue});
    steps.push_back({j.trace_start + std::max<sim::Tick>(0, j.runtime), -std::int64_t{j.gpus}, j.tenant, j.queue});
  }
  // Each one's mean and median recorded wait (summed in job order, then the lower middle).
  const auto wait_figures = [](std::vector<Concurrency>& of, std::vector<std::vector<double>>& waits) {
    for (std::size_t i = 0; i < of.size(); ++i) {
      auto& v = waits[i];
      if (v.empty()) continue;
      double sum = 0;
      for (const double x : v) sum += x;
      of[i].mean_wait_s = sum / static_cast<double>(v.size());
      const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
      std::nth_element(v.begin(), mid, v.end());
      of[i].median_wait_s = *mid;
      std::vector<double>().swap(v);
    }
  };
  wait_figures(users, user_waits);
  wait_figures(queues, queue_waits);
  // Ends before starts at the same time: a job ending frees its GPUs for one starting then.
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return a.time != b.time ? a.time < b.time : (a.gpus < 0) > (b.gpus < 0);
  });
  // At most kMaxWindows capacity windows: a longer span (a short --window over a long log, or a
  // run time of centuries) takes whole multiples of the window asked for.
  if (!steps.empty()) {
    const sim::Tick span = steps.back().time - steps.front().time;
    if (span / inf.window >= kMaxWindows) {
      const sim::Tick per = span / kMaxWindows + 1;  // the least window that gives fewer
      // a multiple of the window asked that is whole days, hours or minutes as `per` is over them
      const sim::Tick unit = per > sim::kDay ? sim::kDay : per > sim::kHour ? sim::kHour : sim::kMinute;
      const sim::Tick step = std::lcm(inf.window, unit);
      inf.window_asked = inf.window;
      inf.window = (per / step + (per % step != 0 ? 1 : 0)) * step;
    }
  }
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
    std::int64_t start_clock = -1;  // the StartTime line's local clock, seconds after midnight
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
      if (inf.time_shared.empty() && header_time_shared(std::string(text))) inf.time_shared = std::string(text);
      if (inf.scheduler_line.empty() && header_names_scheduler(std::string(text))) {
        inf.scheduler_line = std::string(detail::trim(l.starts_with("note:") ? text.substr(5) : text));
      }
      // "MaxJobs: 80714"; a cleaning filter: "user=174 (44617 jobs removed)". A count as strtoll
      // reads it (leading blanks and a sign allowed), -1 when there is none or it is negative;
      // `whole`: nothing may follow it.
      const auto count = [](const std::string& v, bool whole) -> long long {
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        return end != v.c_str() && (!whole || *end == '\0') && n >= 0 ? n : -1;
      };
      if (l.starts_with("maxjobs:")) {
        if (const long long n = count(l.substr(8), false); n >= 0) inf.original_jobs = n;
      } else if (const std::size_t at = l.rfind(" jobs removed)"); at != std::string::npos) {
        const std::size_t open = l.rfind('(', at);
        if (open != std::string::npos) {
          const long long n = count(l.substr(open + 1, at - open - 1), true);
          if (n >= 0 && n <= (1LL << 40)) {
            const std::string_view filter = detail::trim(text.substr(0, open));
            // A filter naming a user removed jobs that ran among the others; one on the submit
            // time or job number alone ("submit<=2012-02-03 00:00:00", "job<=14") cut the log's span.
            const bool users = l.substr(0, open).find("user") != std::string::npos;
            std::int64_t& count = users ? inf.cleaned_removed : inf.cleaned_cut;
            count = std::min<std::int64_t>(count + n, std::int64_t{1} << 62);
            if (users && inf.cleaning_filters.size() < kMaxFilters)
              inf.cleaning_filters.emplace_back(filter.substr(0, 200));
          }
        }
      }
      // "TimeZone: 3600" (seconds east of UTC, standard time), "TimeZoneString: Europe/Stockholm"
      if (l.starts_with("timezonestring:")) {
        std::string_view z = text.substr(text.find(':') + 1);
        while (!z.empty() && (z.front() == ' ' || z.front() == '\t')) z.remove_prefix(1);
        inf.zone = std::string(z.substr(0, z.find_first_of(" \t")));
      } else if (l.starts_with("timezone:")) {
        const std::string v = l.substr(9);
        char* end = nullptr;
        const long seconds = std::strtol(v.c_str(), &end, 10);
        if (end != v.c_str() && seconds >= -14 * 3600 && seconds <= 14 * 3600) {
          inf.clock_known = true;
          inf.utc_offset_minutes = static_cast<std::int32_t>(seconds / 60);
        }
      } else if (l.starts_with("starttime:")) {
        start_clock = clock_seconds(l.substr(10));
      }
    }
    inf.scheduler = scheduler_from_header(all);
    // Without TimeZone (CEA Curie's, RICC's headers): the offset from the local StartTime against
    // the UnixStartTime it names, less an hour when the zone's summer time was in force then.
    if (!inf.clock_known && start_clock >= 0 && w.meta.unix_start >= 0) {
      const std::int64_t utc = ((w.meta.unix_start % 86400) + 86400) % 86400;
      std::int64_t diff = ((start_clock - utc) % 86400 + 86400) % 86400;                               // 0 .. 1 day
      if (diff > 14 * 3600) diff -= 86400;                                                             // -10 h .. +14 h
      std::int32_t minutes = static_cast<std::int32_t>((diff + (diff >= 0 ? 450 : -450)) / 900 * 15);  // to 15 min
      const models::DstRule rule = models::dst_rule_of_zone(inf.zone);
      // Summer time was in force at the start when the zone's rule, from the standard offset an
      // hour less, gives the same local clock.
      const std::int64_t at = w.meta.unix_start * 1000;
      if (rule != models::DstRule::None && models::local_time(at, minutes - 60, rule).ms_of_day ==
                                               models::local_time(at, minutes, models::DstRule::None).ms_of_day)
        minutes -= 60;
      inf.clock_known = true;
      inf.utc_offset_minutes = minutes;
    }
    if (inf.clock_known) {
      // The zone's summer time rule, and the standard clock all year (a scheduler on a clock that
      // ignores summer time, as KTH's was): the one under which more of the held jobs start in the
      // hour prime time ends (on the wrong clock that hour moves half the year).
      const models::DstRule rule = models::dst_rule_of_zone(inf.zone);
      detect_prime_time(w, inf.utc_offset_minutes, rule, inf.prime_time, inf.prime_evidence);
      if (rule != models::DstRule::None) {
        models::PrimeTime plain;
        PrimeTimeEvidence ev;
        detect_prime_time(w, inf.utc_offset_minutes, models::DstRule::None, plain, ev);
        if (plain.enabled() && (!inf.prime_time.enabled() || ev.long_release > inf.prime_evidence.long_release)) {
          inf.prime_time = plain;
          inf.prime_evidence = ev;
        }
      }
    }
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
  out << "\ncapacity in use (busy GPUs per " << sim::format_duration(inf.window);
  if (inf.window_asked > 0)
    out << ", widened from the " << sim::format_duration(inf.window_asked)
        << " asked: the trace spans more than 20,000 of those";
  out << ")";
  if (inf.nominal_gpus > 0)
    out << ", nominal " << inf.nominal_gpus << " GPUs (MaxProcs header)";
  else
    out << ", nominal size unknown (the trace has no SWF MaxProcs header)";
  out << ":\n";
  std::snprintf(b, sizeof b, "  %-12s %9s %9s %9s\n", "window", "max busy", "mean busy", "of nominal");
  out << b;
  for (const auto& c : inf.capacity) {
    // Without a nominal size the share is not known: "-", not 0 %.
    char of[16] = "        -";
    if (inf.nominal_gpus > 0)
      std::snprintf(of, sizeof of, "%8.0f %%", 100.0 * c.mean_busy / static_cast<double>(inf.nominal_gpus));
    const std::string label = inf.window % sim::kDay == 0      ? "day " + std::to_string(c.start / sim::kDay)
                              : inf.window % sim::kHour == 0   ? std::to_string(c.start / sim::kHour) + " h"
                              : inf.window % sim::kMinute == 0 ? std::to_string(c.start / sim::kMinute) + " min"
                                                               : std::to_string(c.start / sim::kSecond) + " s";
    std::snprintf(b, sizeof b, "  %-12s %9lld %9.0f %s\n", label.c_str(), static_cast<long long>(c.max_busy),
                  c.mean_busy, of);
    out << b;
  }
  out << "  most busy at once: " << inf.max_busy << " GPUs";
  if (inf.nominal_gpus > 0)
    out << " ("
        << static_cast<int>(100.0 * static_cast<double>(inf.max_busy) / static_cast<double>(inf.nominal_gpus) + 0.5)
        << " % of nominal)";
  if (!inf.time_shared.empty() && inf.nominal_gpus > 0 && inf.max_busy > inf.nominal_gpus)
    out << "\n  above nominal because jobs shared processors, as the header says (\"" << inf.time_shared
        << "\"): a replay gives each job its own GPUs, so it cannot run this log's load as recorded";
  out << "\n  -> availability: the cluster size, or Slurm DOWN nodes / maint reservations for windows that never\n"
         "     reach nominal; Kueue ClusterQueue nominalQuota; KAI and Volcano queue capability\n";
  const auto table = [&](const char* what, const std::vector<Concurrency>& rows) {
    std::snprintf(b, sizeof b, "\n  %-14s %8s %9s %9s %12s %12s\n", what, "jobs", "max jobs", "max GPUs", "mean wait",
                  "median wait");
    out << b;
    for (std::size_t i = 0; i < rows.size() && i < max_rows; ++i) {
      const auto& c = rows[i];
      // Waits as durations ("1d 19:48:12", "00:05:38", "0.0 s"), whole seconds.
      auto wait = [](double seconds) { return sim::format_duration(sim::from_seconds(std::llround(seconds))); };
      std::snprintf(b, sizeof b, "  %-14.14s %8lld %9d %9lld %12s %12s\n", c.name.c_str(),
                    static_cast<long long>(c.jobs), c.max_jobs, static_cast<long long>(c.max_gpus),
                    wait(c.mean_wait_s).c_str(), wait(c.median_wait_s).c_str());
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
  out << "  -> queues: Slurm partitions (one per queue) with GrpTRES; Kueue ClusterQueues; KAI and Volcano queues;\n"
         "     queues that wait differently: Slurm PriorityJobFactor per partition (calibrate tries it)\n";
  const std::string named = header_scheduler_text(inf);
  out << "\nscheduler named by the header: " << (named.empty() ? "none (the header is silent)" : named);
  if (inf.scheduler == "easy") out << " -> fifo with backfill: easy";
  if (inf.scheduler == "conservative" || inf.scheduler == "backfill") out << " -> slurm sched/backfill";
  if (inf.scheduler == "fcfs") out << " -> fifo (no backfill)";
  out << "\n";
  if (const std::string cleaned = cleaned_log_note(inf); !cleaned.empty()) out << cleaned << "\n";
  for (const auto& n : inf.header_notes) out << "  ; " << n << "\n";
  if (inf.clock_known) {
    out << "local clock (header): UTC" << models::utc_offset_text(inf.utc_offset_minutes)
        << (inf.zone.empty() ? "" : ", " + inf.zone)
        << "; prime time in the recorded starts: " << (inf.prime_time.enabled() ? "yes" : "none") << "\n";
  }
  if (inf.prime_time.enabled()) {
    std::snprintf(b, sizeof b,
                  "\nprime time in the recorded starts: %s: %.0f %% of the %lld jobs over the bound started inside, "
                  "%.0f %% of the %lld others; %.0f %% of them in the busier hour of the two after it\n",
                  inf.prime_time.describe().c_str(), 100 * inf.prime_evidence.long_inside,
                  static_cast<long long>(inf.prime_evidence.long_jobs), 100 * inf.prime_evidence.short_inside,
                  static_cast<long long>(inf.prime_evidence.short_jobs), 100 * inf.prime_evidence.long_release);
    out << b << "  -> prime_time: " << inf.prime_time.yaml_flow() << " (docs/fidelity.md, \"Prime time\")\n";
  }
}

}  // namespace headroom::traces
