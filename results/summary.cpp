#include "results/summary.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string_view>

#include "models/job.hpp"
#include "models/observer.hpp"

namespace headroom::results {
namespace {

// Milli-GPUs a job asks for (a fractional job gpu_milli of one GPU); what it holds when a file
// has no /placements.
std::int64_t held_milli(const JobRecord& j) {
  return j.gpu_milli > 0 && j.gpus <= 1 ? j.gpu_milli : static_cast<std::int64_t>(j.gpus) * 1000;
}

// Mean, nearest-rank median, p95 and p99, and max of `values` (ticks), in seconds. Reorders values.
Quantiles quantiles(std::vector<Tick>& values) {
  Quantiles q;
  const std::size_t n = values.size();
  q.n = static_cast<std::int64_t>(n);
  if (n == 0) return q;
  long double sum = 0;
  for (Tick v : values) sum += static_cast<long double>(v);
  q.mean = static_cast<double>(sum / static_cast<long double>(n) / 1000.0L);
  // Nearest rank: the element at ceil(p * n) - 1, with the ceiling taken in integers.
  const std::size_t i95 = (95 * n + 99) / 100 - 1;
  const std::size_t i50 = (n + 1) / 2 - 1;
  const auto begin = values.begin();
  std::nth_element(begin, begin + static_cast<std::ptrdiff_t>(i95), values.end());
  const Tick p95 = values[i95];
  const std::size_t i99 = (99 * n + 99) / 100 - 1;
  // Everything from i95 on is >= p95, so p99 lies in that suffix.
  std::nth_element(begin + static_cast<std::ptrdiff_t>(i95), begin + static_cast<std::ptrdiff_t>(i99), values.end());
  q.p99 = sim::to_seconds(values[i99]);
  const Tick max = *std::max_element(begin + static_cast<std::ptrdiff_t>(i95), values.end());
  // Everything before i95 is <= p95, so the median lies in that prefix.
  std::nth_element(begin, begin + static_cast<std::ptrdiff_t>(i50), begin + static_cast<std::ptrdiff_t>(i95));
  q.median = sim::to_seconds(values[i50]);
  q.p95 = sim::to_seconds(p95);
  q.max = sim::to_seconds(max);
  return q;
}

// Recovery of the kills `rows` (indices into r.kills): see RecoveryStats.
RecoveryStats recovery_of(const RunResult& r, const std::vector<std::size_t>& rows) {
  RecoveryStats st;
  constexpr Tick kNeverBack = std::numeric_limits<Tick>::max();
  std::vector<Tick> times;
  Tick all = 0;
  long double lost = 0, partial = 0;
  for (std::size_t i : rows) {
    const KillRecord& k = r.kills[i];
    ++st.killed;
    lost += static_cast<long double>(k.lost_gpu_ms);
    if (k.nodes > 1) ++st.gangs;
    if (k.partial != 0) {
      ++st.partial_gangs;
      partial += static_cast<long double>(k.partial_gpu_ms);
    }
    if (k.restart < 0) {
      const JobRecord& j = r.jobs[k.job];
      if (j.state == static_cast<std::uint8_t>(models::JobState::Cancelled)) {
        ++st.withdrawn;  // withdrawn while waiting (a replica scaled down): nothing to recover
        continue;
      }
      ++st.not_recovered;
      if (j.state == static_cast<std::uint8_t>(models::JobState::Failed) && j.end == k.time) ++st.retry_exhausted;
      times.push_back(kNeverBack);
      all = kNeverBack;
      continue;
    }
    times.push_back(k.restart - k.time);
    const Tick since_start = k.restart - r.outages[k.outage].start;
    if (all != kNeverBack) all = std::max(all, since_start);
  }
  st.lost_gpu_hours = static_cast<double>(lost / static_cast<long double>(sim::kHour));
  st.partial_gpu_hours = static_cast<double>(partial / static_cast<long double>(sim::kHour));
  if (times.empty()) return st;
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  auto secs = [&](Tick t) { return t == kNeverBack ? -1.0 : sim::to_seconds(t); };
  st.p50_s = secs(times[(n + 1) / 2 - 1]);
  st.p95_s = secs(times[(95 * n + 99) / 100 - 1]);
  st.max_s = secs(times.back());
  st.all_running_s = secs(all);
  return st;
}

const char* outage_kind_name(std::uint8_t kind) {
  switch (static_cast<OutageKind>(kind)) {
    case OutageKind::Failure: return "failure";
    case OutageKind::Scripted: return "drill";
    case OutageKind::Maintenance: return "maintenance";
  }
  return "?";
}

// Fills the recovery fields of f from RunResult::outages, kills and outage_slo.
void summarize_recovery(const RunResult& r, FailureSummary& f) {
  std::vector<std::size_t> every;
  std::array<std::vector<std::size_t>, 3> by_kind;
  std::vector<std::vector<std::size_t>> by_outage(r.outages.size());
  for (std::size_t i = 0; i < r.kills.size(); ++i) {
    const KillRecord& k = r.kills[i];
    if (k.outage >= r.outages.size() || k.job >= r.jobs.size()) continue;  // hdf5_io rejects these
    every.push_back(i);
    by_outage[k.outage].push_back(i);
    const std::uint8_t kind = r.outages[k.outage].kind;
    if (kind < by_kind.size()) by_kind[kind].push_back(i);
  }
  f.recovery = recovery_of(r, every);
  for (std::size_t k = 0; k < by_kind.size(); ++k) f.by_kind[k] = recovery_of(r, by_kind[k]);
  for (const auto& rows : by_outage) f.outages += rows.empty() ? 0 : 1;
  // Each scripted outage: its row (a drill that found every node of its own already down has none).
  for (std::size_t d = 0; d < r.drill_start.size(); ++d) {
    OutageRecovery o;
    o.kind = "drill";
    o.drill = static_cast<std::int32_t>(d);
    o.start_s = sim::to_seconds(std::max<Tick>(0, r.drill_start[d] - r.sim_start));
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < r.outages.size(); ++i) {
      const OutageRecord& row = r.outages[i];
      if (row.kind != static_cast<std::uint8_t>(OutageKind::Scripted) || row.drill != o.drill) continue;
      if (row.reason < r.reasons.size()) o.reason = r.reasons[row.reason];
      o.nodes += row.nodes;
      o.duration_s = row.end >= 0 ? sim::to_seconds(row.end - row.start) : -1;
      rows.insert(rows.end(), by_outage[i].begin(), by_outage[i].end());
    }
    o.recovery = recovery_of(r, rows);
    f.drills.push_back(std::move(o));
  }
  // Over all the scripted outages, weighted by their windows' lengths: the share of the outage
  // time (and of the hours after) in which the services met their SLO.
  f.outage_slo = r.outage_slo;
  long double during = 0, during_ms = 0, after = 0, after_ms = 0;
  for (const OutageSlo& o : r.outage_slo) {
    const auto span = static_cast<long double>(std::max<Tick>(0, o.to - o.from));
    during += span * o.during;
    during_ms += span;
    after += static_cast<long double>(kAfterOutage) * o.after;
    after_ms += static_cast<long double>(kAfterOutage);
  }
  if (during_ms > 0) f.outage_slo_attainment = static_cast<double>(during / during_ms);
  if (after_ms > 0) f.after_outage_slo_attainment = static_cast<double>(after / after_ms);
}

// "never" for -1, else the duration.
std::string recovery_time(double s) { return s < 0 ? std::string("never") : duration(s); }

void print_recovery_json(std::ostream& out, const RecoveryStats& st) {
  auto t = [](double v) { return v < 0 ? std::string("null") : json_number(v); };
  out << "{\"killed\": " << st.killed << ", \"not_recovered\": " << st.not_recovered
      << ", \"retry_exhausted\": " << st.retry_exhausted << ", \"withdrawn\": " << st.withdrawn
      << ", \"p50_s\": " << t(st.p50_s) << ", \"p95_s\": " << t(st.p95_s) << ", \"max_s\": " << t(st.max_s)
      << ", \"all_running_s\": " << t(st.all_running_s) << ", \"lost_gpu_hours\": " << json_number(st.lost_gpu_hours)
      << ", \"gangs\": " << st.gangs << ", \"partial_gangs\": " << st.partial_gangs
      << ", \"partial_gpu_hours\": " << json_number(st.partial_gpu_hours) << "}";
}

// Display width of UTF-8 text, counting code points (good enough for names in a table).
std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

// Cuts `s` to at most `width` code points, marking the cut with "~".
std::string fit(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  std::size_t cps = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (cps == width - 1) break;
      ++cps;
    }
  }
  return std::string(s.substr(0, i)) + "~";
}

std::string pad_right(std::string_view s, std::size_t width) {
  std::string out(s);
  for (std::size_t w = display_width(s); w < width; ++w) out += ' ';
  return out;
}

std::string pad_left(std::string_view s, std::size_t width) {
  std::string out;
  for (std::size_t w = display_width(s); w < width; ++w) out += ' ';
  return out.append(s);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::isfinite(v) ? v : 0.0);
  return buf;
}

void json_quantiles(std::ostream& out, const Quantiles& q) {
  out << "{\"mean\": " << json_number(q.mean) << ", \"median\": " << json_number(q.median)
      << ", \"p95\": " << json_number(q.p95) << ", \"p99\": " << json_number(q.p99)
      << ", \"max\": " << json_number(q.max) << ", \"n\": " << q.n << "}";
}

constexpr auto kRejected = static_cast<std::uint8_t>(models::JobState::Rejected);
constexpr std::uint32_t kNoReason = UINT32_MAX;

// The reason most jobs gave (ties: the first by text), nullptr when there is none.
using ReasonCount = std::pair<const std::string, std::int64_t>;
const ReasonCount* most_common(const std::map<std::string, std::int64_t>& by_reason) {
  const ReasonCount* top = nullptr;
  for (const auto& kv : by_reason)
    if (top == nullptr || kv.second > top->second) top = &kv;
  return top;
}

// `"reason" (N jobs)`.
std::string quoted_with_count(const ReasonCount& rc) {
  return json_string(rc.first) + " (" + jobs_count(rc.second) + ")";
}

// The banner of a summary (Summary::banner): `not_run` jobs never started or were rejected by the
// policy. Reads the audit events once for their reasons.
std::string make_banner(const RunResult& r, std::int64_t unstarted, std::int64_t policy_rejected) {
  const std::int64_t not_run = unstarted + policy_rejected;
  const auto jobs = static_cast<std::int64_t>(r.jobs.size());
  // Past 1 % of the jobs a warning; below it, jobs the policy rejected still get a note with its
  // reason (a few jobs of a tenant no queue was derived for, a job wider than any node).
  const bool warn = not_run > 0 && not_run * 100 > jobs;
  if (!warn && policy_rejected <= 0) return "";
  // Per job: the reason of its Unfinished / Reject / Finish event, and of its last Waiting event.
  std::vector<std::uint32_t> ending(r.jobs.size(), kNoReason), waiting(r.jobs.size(), kNoReason);
  std::vector<bool> denied(r.jobs.size(), false);
  for (const EventRecord& e : r.events) {
    if (e.job >= r.jobs.size()) continue;
    switch (static_cast<models::AuditKind>(e.kind)) {
      case models::AuditKind::Waiting: waiting[e.job] = e.reason; break;
      case models::AuditKind::Reject:
        ending[e.job] = e.reason;
        denied[e.job] = e.detail == models::kRejectPermission;
        break;
      case models::AuditKind::Unfinished:
      case models::AuditKind::Finish: ending[e.job] = e.reason; break;
      default: break;
    }
  }
  auto text = [&](std::uint32_t reason) -> std::string {
    return reason < r.reasons.size() ? r.reasons[reason] : std::string();
  };
  std::map<std::string, std::int64_t> by_reason;
  std::vector<std::string> why_of(r.jobs.size());
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobRecord& j = r.jobs[i];
    const bool rejected = j.state == kRejected && j.start < 0 && !denied[i];
    if (!(rejected || (warn && never_started(j)))) continue;
    std::string why = text(ending[i]);
    if (why.empty() && j.state != kRejected) why = text(waiting[i]);
    if (why.empty()) why = "unknown: no audit event gives one";
    ++by_reason[why];
    why_of[i] = std::move(why);
  }
  const ReasonCount* main = most_common(by_reason);
  // When the run ended them (Unfinished: nothing left to start them, or the horizon), what the
  // policy last said while they waited tells why: the most common of those jobs' last pending
  // reasons.
  std::map<std::string, std::int64_t> last_pending;
  if (main != nullptr)
    for (std::size_t i = 0; i < r.jobs.size(); ++i)
      if (never_started(r.jobs[i]) && why_of[i] == main->first && !text(ending[i]).empty() && !text(waiting[i]).empty())
        ++last_pending[text(waiting[i])];
  const ReasonCount* last = most_common(last_pending);
  char pct[32];
  if (!warn) {
    const double share = 100.0 * static_cast<double>(policy_rejected) / static_cast<double>(jobs);
    if (share < 0.05)
      std::snprintf(pct, sizeof pct, "under 0.1%%");
    else
      std::snprintf(pct, sizeof pct, "%.1f%%", share);
    return "NOTE: " + thousands(policy_rejected) + " of " + thousands(jobs) + " jobs (" + pct +
           ") were rejected by the policy" + (main != nullptr ? "; main reason: " + quoted_with_count(*main) : "");
  }
  std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * static_cast<double>(not_run) / static_cast<double>(jobs));
  std::string b = "WARNING: " + thousands(not_run) + " of " + thousands(jobs) + " jobs (" + pct + ") ";
  if (policy_rejected == 0)
    b += "never started";
  else if (unstarted == 0)
    b += "were rejected by the policy";
  else
    b += "never started (" + thousands(unstarted) + ") or were rejected by the policy (" + thousands(policy_rejected) +
         ")";
  // The livelock guard's reason is spelled out by stopped_note's warning, which follows: named here.
  if (main != nullptr && main->first.starts_with(models::kRunStopped))
    b += "; main reason: the run stopped itself (" + jobs_count(main->second) + "; the last warning says why)";
  else if (main != nullptr)
    b += "; main reason: " + quoted_with_count(*main);
  if (last != nullptr) b += "; their last pending reason: " + quoted_with_count(*last);
  return b;
}

// The cluster's GPU time over the run, in GPU-ms (the denominator of gpu_utilization).
long double cluster_gpu_ms(const RunResult& r) {
  return static_cast<long double>(r.total_gpus) * static_cast<long double>(r.sim_end - r.sim_start);
}

// "NOTE: 145,818 GPU-h (4.2% of the cluster's GPU time)" for `gpu_ms` of GPU time that is at
// least `floor` of the cluster's; empty below it (or with no GPU time).
std::string gpu_time_note(const RunResult& r, long double gpu_ms, double floor) {
  const long double capacity_ms = cluster_gpu_ms(r);
  if (gpu_ms <= 0 || capacity_ms <= 0) return "";
  const double share = static_cast<double>(gpu_ms / capacity_ms);
  if (share < floor) return "";
  const double gpu_hours = static_cast<double>(gpu_ms) / static_cast<double>(sim::kHour);
  return "NOTE: " + grouped(gpu_hours, gpu_hours < 10 ? 1 : 0) + " GPU-h (" + percent(share) +
         " of the cluster's GPU time)";
}

// When pods bound while their job's other pods waited held 1 % or more of the cluster's GPU time
// idle (no gang scheduling: RunResult::bound_idle_gpu_ms), how much and why; empty otherwise. The
// held_idle_gpu_hours figure alone does not say that it can dwarf every wait (HPC2N's log under
// kubernetes: two thirds of the GPU time, waits of years).
std::string held_idle_note(const RunResult& r) {
  const std::string lead = gpu_time_note(r, static_cast<long double>(r.bound_idle_gpu_ms), 0.01);
  if (lead.empty()) return "";
  return lead +
         " were held idle by pods bound while their job's other pods waited: without "
         "gang scheduling a multi-pod job's first pods hold their GPUs until its last pod binds, and jobs that "
         "each hold part of the cluster wait on each other (a gang scheduler binds a job's pods together, as "
         "kubernetes+coscheduling does; Kueue's waitForPodsReady evicts and requeues an admitted workload whose "
         "pods are not all running within its timeout)";
}

// When preemption threw away 5 % or more of the cluster's GPU time in work (the Preempt events),
// how much, by how many preemptions of how many jobs, and the most one job was taken; empty
// otherwise. The lost_gpu_hours figure alone does not say that the same jobs are taken again and
// again (SDSC Blue's and SDSC Paragon's logs under kai, queues reclaiming from each other).
std::string preemption_note(const RunResult& r) {
  // The work the Preempt rows threw away (lost_gpu_ms also holds policy kills: Slurm's time limits).
  long double lost_ms = 0;  // rows of up to 2^62 each (results/check.hpp): summed without overflow
  for (const EventRecord& e : r.events)
    if (e.kind == static_cast<std::uint8_t>(models::AuditKind::Preempt))
      lost_ms += static_cast<long double>(e.lost_gpu_ms);
  std::string note = gpu_time_note(r, lost_ms, 0.05);
  if (note.empty()) return "";
  std::int64_t preemptions = 0, jobs = 0;
  std::int32_t most = 0;
  for (const JobRecord& j : r.jobs) {
    if (j.preemptions <= 0) continue;
    preemptions += j.preemptions;
    ++jobs;
    most = std::max(most, j.preemptions);
  }
  note += " of work were thrown away by preemption";
  if (jobs > 0)
    note += ": " + thousands(preemptions) + (preemptions == 1 ? " preemption of " : " preemptions of ") +
            jobs_count(jobs) + (most > 1 ? ", one of them taken " + thousands(most) + " times" : "");
  return note;
}

// When the run stopped itself (Simulation's livelock guard: the Unfinished events' reason begins
// models::kRunStopped), that reason and the jobs it left unfinished, started or not. Empty otherwise.
std::string stopped_note(const RunResult& r) {
  std::int64_t jobs = 0;
  std::uint32_t reason = kNoReason;
  for (const EventRecord& e : r.events) {
    if (static_cast<models::AuditKind>(e.kind) != models::AuditKind::Unfinished || e.reason >= r.reasons.size() ||
        !r.reasons[e.reason].starts_with(models::kRunStopped))
      continue;
    reason = e.reason;
    ++jobs;
  }
  if (jobs == 0) return "";
  return "WARNING: the run " + r.reasons[reason] + "; " + jobs_count(jobs) + " left unfinished";
}

// A note when more than 1 % of the jobs ended Failed by the system's own hand (a Finish event with
// a reason: a Slurm TimeLimit kill, a kubelet refusal, a failure past its retry limit), naming the
// main reason; failures the trace records carry no reason and are left out. Empty otherwise.
std::string failure_note(const RunResult& r) {
  const auto failed = static_cast<std::uint8_t>(models::JobState::Failed);
  const auto jobs = static_cast<std::int64_t>(r.jobs.size());
  // At most the Failed jobs can count: without more than 1 % of them the events need no reading.
  const auto any_failed =
      std::count_if(r.jobs.begin(), r.jobs.end(), [&](const JobRecord& j) { return j.state == failed; });
  if (any_failed * 100 <= jobs) return "";
  std::vector<std::uint32_t> why(r.jobs.size(), kNoReason);
  for (const EventRecord& e : r.events)
    if (e.job < r.jobs.size() && static_cast<models::AuditKind>(e.kind) == models::AuditKind::Finish)
      why[e.job] = e.reason;
  std::map<std::string, std::int64_t> by_reason;
  std::int64_t n = 0;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    if (r.jobs[i].state != failed || why[i] >= r.reasons.size() || r.reasons[why[i]].empty()) continue;
    ++by_reason[r.reasons[why[i]]];
    ++n;
  }
  if (n * 100 <= jobs) return "";
  const ReasonCount* main = most_common(by_reason);
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * static_cast<double>(n) / static_cast<double>(jobs));
  return "NOTE: " + thousands(n) + " of " + thousands(jobs) + " jobs (" + pct +
         ") were ended Failed by the system; main reason: " + quoted_with_count(*main);
}

// A note when one job size waited far longer than the rest (large gangs starved by a stream of
// small jobs, a queue's gate that the small ones keep full): among the GPU counts of at least
// max(20, 0.5 %) started jobs, the one with the longest mean wait, when that mean is over
// kStarvationWait and at least 5 times the other started jobs'. It names the reason those jobs
// spent most of their waiting under: the time from each Waiting event to the next, or to the start.
std::string starvation_note(const RunResult& r) {
  struct Size {
    std::int64_t jobs = 0;
    double wait = 0;  // seconds, summed
  };
  std::map<std::int32_t, Size> by_gpus;
  std::int64_t started = 0;
  double all_wait = 0;
  for (const JobRecord& j : r.jobs) {
    if (j.start < 0) continue;
    const double w = sim::to_seconds(j.start - j.submit);
    Size& z = by_gpus[j.gpus];
    ++z.jobs;
    z.wait += w;
    ++started;
    all_wait += w;
  }
  const std::int64_t least = std::max<std::int64_t>(20, (started + 199) / 200);
  const Size* worst = nullptr;
  std::int32_t worst_gpus = 0;
  for (const auto& [g, z] : by_gpus)
    if (z.jobs >= least && z.jobs < started &&
        (worst == nullptr || z.wait / static_cast<double>(z.jobs) > worst->wait / static_cast<double>(worst->jobs))) {
      worst = &z;
      worst_gpus = g;
    }
  if (worst == nullptr) return "";
  const double mean = worst->wait / static_cast<double>(worst->jobs);
  const double others = (all_wait - worst->wait) / static_cast<double>(started - worst->jobs);
  if (mean <= sim::to_seconds(kStarvationWait) || mean < 5 * others) return "";
  // Their waiting by reason: each Waiting event's reason holds until the job's next one, or its start.
  std::vector<std::uint32_t> reason(r.jobs.size(), kNoReason);
  std::vector<Tick> since(r.jobs.size(), -1);
  std::map<std::uint32_t, double> held;
  auto close = [&](std::uint32_t j, Tick t) {
    if (since[j] >= 0 && reason[j] != kNoReason) held[reason[j]] += sim::to_seconds(t - since[j]);
  };
  for (const EventRecord& e : r.events) {
    // Only the wait before the first start counts (a requeued job waits again later).
    if (e.job >= r.jobs.size() || r.jobs[e.job].gpus != worst_gpus || r.jobs[e.job].start < 0 ||
        e.time > r.jobs[e.job].start)
      continue;
    const auto kind = static_cast<models::AuditKind>(e.kind);
    if (kind == models::AuditKind::Waiting) {
      close(e.job, e.time);
      reason[e.job] = e.reason;
      since[e.job] = e.time;
    } else if (kind == models::AuditKind::Start && since[e.job] >= 0) {
      close(e.job, e.time);
      since[e.job] = -1;
    }
  }
  std::string b = "NOTE: the " + thousands(worst->jobs) + " started jobs of " + std::to_string(worst_gpus) +
                  (worst_gpus == 1 ? " GPU" : " GPUs") + " waited " + duration(mean) + " on average, against " +
                  duration(others) + " for the other started jobs";
  double total = 0;
  const std::pair<const std::uint32_t, double>* top = nullptr;
  for (const auto& h : held) {
    total += h.second;
    if (h.first < r.reasons.size() && !r.reasons[h.first].empty() && (top == nullptr || h.second > top->second))
      top = &h;
  }
  if (top != nullptr && total > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * top->second / total);
    b += "; most of their waiting (" + std::string(pct) + ") under " + json_string(r.reasons[top->first]);
  }
  return b;
}

// What the summary reads from the audit events, in one pass over them.
struct EventFacts {
  std::vector<bool> denied;  // by job: the permission drill denied it (a Reject event says so)
  // Jobs ended Failed by the system itself (a Finish with a reason, not at the instant of a kill by
  // the failure drill) whose recorded run time is past their time limit by at most a minute: the
  // grace of scenarios/workload.cpp's time-limit inference (a system that kills at the limit lets
  // a job run a little past it).
  std::int64_t ended_at_recorded_limit = 0;
};

EventFacts read_events(const RunResult& r) {
  constexpr Tick kGrace = 60 * sim::kSecond;
  const auto failed = static_cast<std::int32_t>(models::JobState::Failed);
  EventFacts out;
  out.denied.assign(r.jobs.size(), false);
  std::vector<Tick> killed_at(r.jobs.size(), -1);
  for (const EventRecord& e : r.events) {
    if (e.job >= r.jobs.size()) continue;
    const auto kind = static_cast<models::AuditKind>(e.kind);
    if (kind == models::AuditKind::Reject && e.detail == models::kRejectPermission) out.denied[e.job] = true;
    if (kind == models::AuditKind::Kill) killed_at[e.job] = e.time;
    if (kind != models::AuditKind::Finish || e.detail != failed || e.reason >= r.reasons.size() ||
        r.reasons[e.reason].empty() || killed_at[e.job] == e.time)
      continue;
    const JobRecord& j = r.jobs[e.job];
    if (j.walltime > 0 && j.runtime > j.walltime && j.runtime <= j.walltime + kGrace) ++out.ended_at_recorded_limit;
  }
  return out;
}

}  // namespace

bool never_started(const JobRecord& j) { return j.start < 0 && j.state != kRejected; }

Tick headline_wait(const JobRecord& j, Tick sim_end) {
  if (j.start >= 0) return j.start - j.submit;
  if (j.state == kRejected) return -1;
  return std::max<Tick>(0, (j.end >= 0 ? j.end : sim_end) - j.submit);
}

std::string json_number(double v, std::string_view non_finite) {
  if (!std::isfinite(v)) return std::string(non_finite);
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// JSON string literal. Invalid UTF-8 bytes become U+FFFD so the output always parses.
std::string json_string(std::string_view s) {
  std::string out = "\"";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // Multi-byte sequence: check length, continuation bytes, overlongs and surrogates.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0)
      len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
      len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
      len = 4, cp = c & 0x07;
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80)
        ok = false;
      else
        cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (ok) {
      static constexpr std::uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  out += '"';
  return out;
}

std::vector<JobRun> job_runs(const RunResult& r) {
  std::vector<JobRun> out;
  auto end_of = [&](Tick end) { return end < 0 ? r.sim_end : end; };
  if (!r.placements.empty()) {
    for (std::size_t i = 0; i < r.placements.size(); ++i) {
      const PlacementRecord& p = r.placements[i];
      const std::int64_t milli = static_cast<std::int64_t>(p.gpus) * 1000 + p.gpu_milli;
      if (i > 0 && r.placements[i - 1].job == p.job && r.placements[i - 1].start == p.start) {
        out.back().milli += milli;
        continue;
      }
      out.push_back({p.job, p.start, end_of(p.end), milli});
    }
  } else {
    for (std::uint32_t j = 0; j < r.jobs.size(); ++j)
      if (r.jobs[j].start >= 0) out.push_back({j, r.jobs[j].start, end_of(r.jobs[j].end), held_milli(r.jobs[j])});
  }
  return out;
}

std::vector<long double> held_milli_ms(const RunResult& r, const std::vector<JobRun>& runs) {
  std::vector<long double> held(r.jobs.size(), 0);
  for (const JobRun& run : runs)
    if (run.job < held.size())
      held[run.job] +=
          static_cast<long double>(run.milli) * static_cast<long double>(std::max<Tick>(0, run.end - run.start));
  return held;
}

std::vector<Tick> held_times(const RunResult& r, const std::vector<JobRun>& runs) {
  std::vector<Tick> held(r.jobs.size(), 0);
  for (const JobRun& run : runs)
    if (run.job < held.size()) held[run.job] += std::max<Tick>(0, run.end - run.start);
  return held;
}

namespace {

void summarize_partitions(const RunResult& result, const std::vector<long double>& held_gpu, Summary& s) {
  if (result.partitions.empty() || result.job_partition.size() != result.jobs.size()) return;
  const std::size_t n = result.partitions.size();
  const std::size_t queues = std::max<std::size_t>(result.queues.size(), 1);
  std::vector<std::vector<Tick>> waits(n), by_kind(n * 4), by_queue(n * queues);
  std::vector<long double> held(n, 0);
  std::vector<std::int64_t> jobs(n, 0);
  for (std::size_t j = 0; j < result.jobs.size(); ++j) {
    const std::size_t p = result.job_partition[j];
    if (p >= n) continue;
    const JobRecord& job = result.jobs[j];
    ++jobs[p];
    if (j < held_gpu.size()) held[p] += held_gpu[j];
    const Tick w = headline_wait(job, result.sim_end);
    if (w < 0) continue;
    waits[p].push_back(w);
    if (job.kind < 4) by_kind[p * 4 + job.kind].push_back(w);
    if (job.queue < queues) by_queue[p * queues + job.queue].push_back(w);
  }
  const long double span = static_cast<long double>(std::max<Tick>(result.sim_end - result.sim_start, 0));
  // GPU time each partition owned: its GPUs over the span, less the GPUs it gave from the instant
  // they changed owner, plus those it got.
  std::vector<long double> owned(n, 0);
  std::vector<std::int64_t> out(n, 0), in(n, 0), at_end(n, 0);
  for (std::size_t p = 0; p < n; ++p) {
    owned[p] = static_cast<long double>(result.partitions[p].gpus) * span;
    at_end[p] = result.partitions[p].gpus;
  }
  long double drain = 0, delay = 0;
  std::int64_t changed = 0, ready = 0;
  for (const MoveRecord& m : result.moves) {
    ++s.moves;
    s.moves_on_demand += m.on_demand != 0;
    s.move_preempted_jobs += m.preempted;
    if (m.changed < 0 || static_cast<std::size_t>(m.from) >= n || static_cast<std::size_t>(m.to) >= n) continue;
    const long double after =
        static_cast<long double>(m.gpus) * static_cast<long double>(std::max<Tick>(result.sim_end - m.changed, 0));
    owned[static_cast<std::size_t>(m.from)] -= after;
    owned[static_cast<std::size_t>(m.to)] += after;
    ++out[static_cast<std::size_t>(m.from)];
    ++in[static_cast<std::size_t>(m.to)];
    at_end[static_cast<std::size_t>(m.from)] -= m.gpus;
    at_end[static_cast<std::size_t>(m.to)] += m.gpus;
    drain += static_cast<long double>(m.changed - m.requested);
    ++changed;
    if (m.ready >= 0) {
      delay += static_cast<long double>(m.ready - m.changed);
      ++ready;
    }
  }
  if (changed > 0) s.move_drain_mean_s = static_cast<double>(drain / changed / 1000.0L);
  if (ready > 0) s.move_delay_mean_s = static_cast<double>(delay / ready / 1000.0L);
  for (std::size_t p = 0; p < n; ++p) {
    const PartitionRecord& rec = result.partitions[p];
    PartitionSummary ps;
    ps.name = rec.name;
    ps.policy = rec.policy;
    ps.gpus = rec.gpus;
    ps.jobs = jobs[p];
    ps.nodes_out = out[p];
    ps.nodes_in = in[p];
    ps.gpus_at_end = at_end[p];
    const long double capacity = owned[p] * 1000.0L;
    ps.gpu_utilization = capacity > 0 ? static_cast<double>(held[p] / capacity) : 0.0;
    ps.boundary_idle_gpu_hours = static_cast<double>(rec.boundary_idle_gpu_ms) / static_cast<double>(sim::kHour);
    ps.wait = quantiles(waits[p]);
    for (std::size_t k = 0; k < 4; ++k)
      if (!by_kind[p * 4 + k].empty())
        ps.wait_by_kind.emplace_back(std::string(models::to_string(static_cast<models::JobKind>(k))),
                                     quantiles(by_kind[p * 4 + k]));
    for (std::size_t q = 0; q < queues; ++q)
      if (!by_queue[p * queues + q].empty())
        ps.wait_by_queue.emplace_back(q < result.queues.size() ? result.queues[q] : std::string("(none)"),
                                      quantiles(by_queue[p * queues + q]));
    s.boundary_idle_gpu_hours += ps.boundary_idle_gpu_hours;
    s.partitions.push_back(std::move(ps));
  }
}

}  // namespace

Summary summarize(const RunResult& result) {
  Summary s;
  s.scenario_name = result.scenario_name;
  s.policy = result.policy;
  s.fingerprint = result.fingerprint;
  s.seed = result.seed;
  if (result.unix_start >= 0) {
    s.first_submit_unix_ms = result.unix_start * 1000 + result.sim_start;
    s.end_unix_ms = result.unix_start * 1000 + result.sim_end;
  }
  s.jobs = static_cast<std::int64_t>(result.jobs.size());
  s.makespan_s = sim::to_seconds(result.sim_end - result.sim_start);

  // Tenant ids past the name table (a hand-built result) still get a row.
  std::size_t tenant_count = result.tenants.size();
  for (const JobRecord& j : result.jobs) tenant_count = std::max<std::size_t>(tenant_count, j.tenant + std::size_t{1});
  struct Acc {
    // rejected: less the denials the audit log names; rejected_all: every rejection.
    std::int64_t jobs = 0, never_started = 0, rejected = 0, rejected_all = 0;
    long double milli_ms = 0;
    std::vector<Tick> waits, started_waits, jcts;  // waits: headline_wait of every job not rejected
  };
  std::vector<Acc> by_kind(4);
  std::vector<Acc> acc(tenant_count);

  // Cost: the price of each job's pool (PoolInfo::gpu_hour_price), by pool index.
  long double priced_capacity = 0;  // GPUs x price, summed over pools
  for (const PoolInfo& p : result.pools) {
    if (p.gpu_hour_price <= 0) continue;
    s.priced = true;
    priced_capacity += static_cast<long double>(p.nodes) * p.gpus_per_node * p.gpu_hour_price;
  }
  long double used_cost = 0, priced_milli_ms = 0;

  const std::vector<long double> held_gpu = held_milli_ms(result, job_runs(result));

  const EventFacts events = read_events(result);

  std::vector<Tick> waits, started_waits, jcts;
  waits.reserve(result.jobs.size());
  started_waits.reserve(result.jobs.size());
  jcts.reserve(result.jobs.size());
  long double milli_ms_total = 0;
  for (const JobRecord& j : result.jobs) {
    if (j.state < s.by_state.size()) ++s.by_state[j.state];
    Acc& a = acc[j.tenant];
    Acc& k = by_kind[j.kind < by_kind.size() ? j.kind : by_kind.size() - 1];
    ++a.jobs;
    ++k.jobs;
    if (j.state == static_cast<std::uint8_t>(models::JobState::Completed) && j.end >= 0) {
      jcts.push_back(j.end - j.submit);
      a.jcts.push_back(j.end - j.submit);
      k.jcts.push_back(j.end - j.submit);
    }
    s.preemptions += j.preemptions;
    if (const Tick wait = headline_wait(j, result.sim_end); wait >= 0) {
      waits.push_back(wait);
      a.waits.push_back(wait);
      k.waits.push_back(wait);
    }
    if (j.state == kRejected) {
      ++a.rejected_all;
      const bool by_policy = !events.denied[static_cast<std::size_t>(&j - result.jobs.data())];
      a.rejected += by_policy;
      k.rejected += by_policy;
    }
    if (j.start < 0) {
      // A rejected job (by the policy, or denied by the permission drill) did not starve.
      if (never_started(j)) {
        ++s.never_started;
        ++a.never_started;
        ++k.never_started;
        if (result.sim_end - j.submit > kStarvationWait) ++s.starved_jobs;
      }
      continue;
    }
    const Tick wait = j.start - j.submit;
    started_waits.push_back(wait);
    a.started_waits.push_back(wait);
    k.started_waits.push_back(wait);
    if (wait > kStarvationWait) ++s.starved_jobs;
    const long double held = held_gpu[static_cast<std::size_t>(&j - result.jobs.data())];
    a.milli_ms += held;
    milli_ms_total += held;
    if (s.priced && j.pool >= 0 && static_cast<std::size_t>(j.pool) < result.pools.size()) {
      const double price = result.pools[static_cast<std::size_t>(j.pool)].gpu_hour_price;
      if (price > 0) {
        used_cost += held * price;
        priced_milli_ms += held;
      }
    }
  }
  s.wait = quantiles(waits);
  s.wait_started = quantiles(started_waits);
  s.jct = quantiles(jcts);

  const long double capacity_ms = cluster_gpu_ms(result);
  s.gpu_utilization = capacity_ms > 0 ? static_cast<double>(milli_ms_total / 1000.0L / capacity_ms) : 0.0;
  if (capacity_ms > 0) {
    const long double lost =
        static_cast<long double>(result.lost_gpu_ms) + static_cast<long double>(result.failure_lost_gpu_ms);
    s.gpu_busy_utilization =
        static_cast<double>(std::max<long double>(0, milli_ms_total / 1000.0L - lost) / capacity_ms);
  }

  if (s.priced) {
    constexpr long double kMilliHour = 1000.0L * static_cast<long double>(sim::kHour);
    s.currency = result.currency;
    s.cost = static_cast<double>(priced_capacity * static_cast<long double>(result.sim_end - result.sim_start) /
                                 static_cast<long double>(sim::kHour));
    s.cost_used = static_cast<double>(used_cost / kMilliHour);
    s.cost_per_used_gpu_hour =
        priced_milli_ms > 0 ? static_cast<double>(static_cast<long double>(s.cost) / (priced_milli_ms / kMilliHour))
                            : 0.0;
  }

  s.services = result.services;
  for (const auto& sv : s.services) s.slo_attainment = std::min(s.slo_attainment, sv.time_attainment);

  s.lost_gpu_hours = static_cast<double>(result.lost_gpu_ms) / static_cast<double>(sim::kHour);
  s.held_idle_gpu_hours = static_cast<double>(result.bound_idle_gpu_ms) / static_cast<double>(sim::kHour);
  const auto& ts_all = result.timeseries;
  if (!ts_all.time.empty() && ts_all.pool_frag_gpus.size() == ts_all.pool_free_gpus.size() &&
      ts_all.pool_free_gpus.size() == ts_all.time.size() * result.pools.size() && !result.pools.empty()) {
    const std::size_t pools = result.pools.size(), tenants = result.tenants.size();
    const bool waiting_known = ts_all.tenant_pending_gpus.size() == ts_all.time.size() * tenants;
    long double frag_all = 0, frag_waiting = 0, free_waiting = 0;
    std::int64_t waiting_samples = 0;
    for (std::size_t i = 0; i < ts_all.time.size(); ++i) {
      std::int64_t frag = 0, free = 0, pending = waiting_known ? 0 : 1;
      for (std::size_t p = 0; p < pools; ++p) {
        frag += ts_all.pool_frag_gpus[i * pools + p];
        free += ts_all.pool_free_gpus[i * pools + p];
      }
      if (waiting_known)
        for (std::size_t t = 0; t < tenants; ++t) pending += ts_all.tenant_pending_gpus[i * tenants + t];
      frag_all += frag;
      if (pending > 0) {
        frag_waiting += frag;
        free_waiting += free;
        ++waiting_samples;
      }
    }
    s.fragmented_gpus_mean = static_cast<double>(frag_all / static_cast<long double>(ts_all.time.size()));
    s.fragmentation = free_waiting > 0 ? static_cast<double>(frag_waiting / free_waiting) : 0.0;
    s.free_gpus_waiting_mean =
        waiting_samples > 0 ? static_cast<double>(free_waiting / static_cast<long double>(waiting_samples)) : 0.0;
  }
  if (!ts_all.time.empty() && !ts_all.tenant_pending_gpus.empty()) {
    long double sum = 0;
    for (std::int32_t v : ts_all.tenant_pending_gpus) sum += v;
    s.pending_gpus_mean = static_cast<double>(sum / static_cast<long double>(ts_all.time.size()));
  }
  s.tenants.reserve(tenant_count);
  for (std::size_t t = 0; t < tenant_count; ++t) {
    TenantSummary ts;
    ts.name = t < result.tenants.size() ? result.tenants[t] : std::string(1, '#').append(std::to_string(t));
    ts.jobs = acc[t].jobs;
    ts.gpu_hours = static_cast<double>(acc[t].milli_ms / 1000.0L / static_cast<long double>(sim::kHour));
    const Quantiles tq = quantiles(acc[t].waits);
    ts.wait = tq;
    ts.wait_started = quantiles(acc[t].started_waits);
    ts.never_started = acc[t].never_started;
    ts.denied = t < result.tenant_denied.size() ? result.tenant_denied[t] : 0;
    // The drill's own count of denials (the audit log may be off).
    ts.rejected = std::max<std::int64_t>(0, acc[t].rejected_all - ts.denied);
    ts.jct = quantiles(acc[t].jcts);
    ts.p95_wait_s = tq.p95;
    ts.max_wait_s = tq.max;
    ts.mean_wait_s = tq.mean;
    s.denied += ts.denied;
    s.tenants.push_back(std::move(ts));
  }
  for (std::size_t k = 0; k < by_kind.size(); ++k) {
    KindSummary ks;
    ks.name = std::string(models::to_string(static_cast<models::JobKind>(k)));
    ks.jobs = by_kind[k].jobs;
    ks.wait = quantiles(by_kind[k].waits);
    ks.wait_started = quantiles(by_kind[k].started_waits);
    ks.never_started = by_kind[k].never_started;
    ks.rejected = by_kind[k].rejected;
    ks.jct = quantiles(by_kind[k].jcts);
    ks.completed = static_cast<std::int64_t>(by_kind[k].jcts.size());
    s.kinds.push_back(std::move(ks));
  }
  summarize_partitions(result, held_gpu, s);
  FailureSummary& f = s.failures;
  f.node_outages = result.node_outages;
  f.jobs_killed = result.jobs_killed;
  f.job_retries = result.job_retries;
  f.jobs_failed = result.jobs_failed_by_failure;
  f.jobs_failed_by_policy = result.jobs_failed_by_policy;
  f.lost_gpu_hours = static_cast<double>(result.failure_lost_gpu_ms) / static_cast<double>(sim::kHour);
  for (std::size_t d = 0; d < result.drill_start.size(); ++d) {
    const Tick rec = d < result.drill_recovered.size() ? result.drill_recovered[d] : -1;
    if (rec < 0 || result.drill_start[d] < 0) {
      f.drill_recovery_s.push_back(-1);
      continue;
    }
    const double secs = sim::to_seconds(rec - result.drill_start[d]);
    f.drill_recovery_s.push_back(secs);
    ++f.drills_recovered;
    f.worst_recovery_s = std::max(f.worst_recovery_s, secs);
  }
  summarize_recovery(result, f);
  s.rejected = std::max<std::int64_t>(0, s.by_state[static_cast<std::size_t>(kRejected)] - s.denied);
  s.ended_at_recorded_limit = events.ended_at_recorded_limit;
  s.banner = make_banner(result, s.never_started, s.rejected);
  if (std::string note = failure_note(result); !note.empty()) s.banner += (s.banner.empty() ? "" : "\n") + note;
  if (std::string note = starvation_note(result); !note.empty()) s.banner += (s.banner.empty() ? "" : "\n") + note;
  if (std::string note = stopped_note(result); !note.empty()) s.banner += (s.banner.empty() ? "" : "\n") + note;
  if (std::string note = held_idle_note(result); !note.empty()) s.banner += (s.banner.empty() ? "" : "\n") + note;
  if (std::string note = preemption_note(result); !note.empty()) s.banner += (s.banner.empty() ? "" : "\n") + note;
  std::sort(s.tenants.begin(), s.tenants.end(), [](const TenantSummary& a, const TenantSummary& b) {
    if (a.gpu_hours != b.gpu_hours) return a.gpu_hours > b.gpu_hours;
    return a.name < b.name;
  });
  return s;
}

void print_recovery(std::ostream& out, const FailureSummary& f) {
  if (f.recovery.killed == 0 && f.outage_slo.empty()) return;
  auto line = [&](const RecoveryStats& st) {
    out << thousands(st.killed) << " killed, not running again " << thousands(st.not_recovered);
    if (st.retry_exhausted > 0) out << " (" << thousands(st.retry_exhausted) << " past their retry limit)";
    if (st.withdrawn > 0) out << ", withdrawn " << thousands(st.withdrawn);
    out << "   back p50 " << recovery_time(st.p50_s) << " p95 " << recovery_time(st.p95_s) << " max "
        << recovery_time(st.max_s) << "   lost work " << grouped(st.lost_gpu_hours, 1) << " GPU-h";
    if (st.gangs > 0)
      out << "   gangs " << thousands(st.gangs) << ", left partial " << thousands(st.partial_gangs) << " ("
          << grouped(st.partial_gpu_hours, 1) << " GPU-h held)";
  };
  if (f.recovery.killed > 0) {
    out << "recovery (kill to next start): " << thousands(f.outages) << " outages killed jobs: ";
    line(f.recovery);
    out << "\n";
    for (std::size_t k = 0; k < f.by_kind.size(); ++k) {
      if (f.by_kind[k].killed == 0) continue;
      out << "  " << outage_kind_name(static_cast<std::uint8_t>(k)) << ": ";
      line(f.by_kind[k]);
      out << "\n";
    }
  }
  for (const OutageRecovery& o : f.drills) {
    out << "  drill " << o.drill + 1 << " at " << duration(o.start_s) << " (" << (o.reason.empty() ? "-" : o.reason)
        << ", " << o.nodes << " nodes, back after " << recovery_time(o.duration_s) << "): ";
    line(o.recovery);
    out << "   all running again after "
        << (o.recovery.killed == 0 ? std::string("-") : recovery_time(o.recovery.all_running_s));
    for (const OutageSlo& slo : f.outage_slo)
      if (slo.drill == o.drill)
        out << "   service SLO met " << fixed(100.0 * slo.during, 1) << "% during, " << fixed(100.0 * slo.after, 1)
            << "% in the hour after";
    out << "\n";
  }
}

static void print_recovery_json_fields(std::ostream& out, const FailureSummary& f) {
  out << ", \"outages_with_kills\": " << f.outages << ", \"recovery\": ";
  print_recovery_json(out, f.recovery);
  out << ", \"recovery_by_kind\": {";
  for (std::size_t k = 0; k < f.by_kind.size(); ++k) {
    out << (k == 0 ? "" : ", ") << json_string(outage_kind_name(static_cast<std::uint8_t>(k))) << ": ";
    print_recovery_json(out, f.by_kind[k]);
  }
  out << "}, \"drills\": [";
  for (std::size_t i = 0; i < f.drills.size(); ++i) {
    const OutageRecovery& o = f.drills[i];
    out << (i == 0 ? "" : ", ") << "{\"drill\": " << o.drill << ", \"reason\": " << json_string(o.reason)
        << ", \"start_s\": " << json_number(o.start_s) << ", \"nodes\": " << o.nodes
        << ", \"duration_s\": " << (o.duration_s < 0 ? std::string("null") : json_number(o.duration_s));
    for (const OutageSlo& slo : f.outage_slo)
      if (slo.drill == o.drill)
        out << ", \"slo_attainment_during\": " << json_number(slo.during)
            << ", \"slo_attainment_after\": " << json_number(slo.after);
    out << ", \"recovery\": ";
    print_recovery_json(out, o.recovery);
    out << "}";
  }
  out << "], \"outage_slo_attainment\": "
      << (f.outage_slo_attainment < 0 ? std::string("null") : json_number(f.outage_slo_attainment))
      << ", \"after_outage_slo_attainment\": "
      << (f.after_outage_slo_attainment < 0 ? std::string("null") : json_number(f.after_outage_slo_attainment));
}

void print_summary(std::ostream& out, const Summary& s, std::size_t max_tenants) {
  if (!s.banner.empty()) out << s.banner << "\n\n";
  out << "scenario " << (s.scenario_name.empty() ? "-" : s.scenario_name) << "   policy "
      << (s.policy.empty() ? "-" : s.policy) << "   seed " << s.seed;
  if (s.first_submit_unix_ms >= 0)  // dates in UTC, as everywhere (results/format.hpp calendar)
    out << "   " << calendar(s.first_submit_unix_ms) << " to " << calendar(s.end_unix_ms) << " UTC";
  out << "\n";
  out << "makespan " << duration(s.makespan_s) << "   GPU utilization " << percent(s.gpu_utilization);
  if (percent(s.gpu_busy_utilization) == percent(s.gpu_utilization))
    out << " (no work lost to preemption, policy kills or failures)\n\n";
  else
    out << ", useful work " << percent(s.gpu_busy_utilization)
        << " (the rest was lost to preemption, policy kills and failures)\n\n";
  if (s.held_idle_gpu_hours > 0)
    out << "held idle by pods bound while their job's other pods waited (no gang scheduling): "
        << grouped(s.held_idle_gpu_hours, 1) << " GPU-h\n\n";

  const std::size_t count_width = std::max<std::size_t>(6, thousands(s.jobs).size());
  out << pad_right("jobs", 13) << pad_left(thousands(s.jobs), count_width) << "\n";
  for (int st = 0; st < models::kJobStateCount; ++st) {
    const auto state = static_cast<models::JobState>(st);
    const std::int64_t n = s.by_state[static_cast<std::size_t>(st)];
    // Pending and Running only show up when a run stopped early.
    if (n == 0 && (state == models::JobState::Pending || state == models::JobState::Running)) continue;
    const double pct = s.jobs > 0 ? 100.0 * static_cast<double>(n) / static_cast<double>(s.jobs) : 0.0;
    out << "  " << pad_right(models::to_string(state), 11) << pad_left(thousands(n), count_width)
        << pad_left(fixed(pct, 1) + "%", 8) << "\n";
  }

  constexpr std::size_t kCol = 10;
  out << "\n"
      << pad_right("", 12) << pad_left("mean", kCol) << pad_left("median", kCol) << pad_left("p95", kCol)
      << pad_left("p99", kCol) << pad_left("max", kCol) << pad_left("jobs", count_width + 2) << "\n";
  // With jobs that never started, the wait figures are lower bounds: ">=" says so.
  auto row = [&](std::string_view label, const Quantiles& q, bool lower_bound = false, std::string_view note = {}) {
    const auto d = [&](double v) { return (lower_bound ? ">=" : "") + duration(v); };
    out << pad_right(label, 12) << pad_left(d(q.mean), kCol) << pad_left(d(q.median), kCol) << pad_left(d(q.p95), kCol)
        << pad_left(d(q.p99), kCol) << pad_left(d(q.max), kCol) << pad_left(thousands(q.n), count_width + 2) << note
        << "\n";
  };
  if (s.never_started > 0) {
    row("wait", s.wait, true, "  (incl. " + thousands(s.never_started) + " never started: lower bounds)");
    row("  started", s.wait_started, false, "  (started jobs only)");
  } else {
    row("wait", s.wait);
  }
  row("jct", s.jct);
  out << "\nstarved (waited > 24h) " << thousands(s.starved_jobs) << " jobs   preemptions " << thousands(s.preemptions)
      << "   lost to preemption and policy kills " << grouped(s.lost_gpu_hours, 1) << " GPU-h"
      << (s.preemptions == 0 && s.lost_gpu_hours > 0 ? " (none preempted: jobs the policy ended, e.g. TimeLimit)" : "")
      << "   mean pending " << grouped(s.pending_gpus_mean, 1) << " GPUs\n";
  out << "fragmentation " << percent(s.fragmentation)
      << " of free GPUs while jobs waited (no waiting job fits them)   mean fragmented "
      << grouped(s.fragmented_gpus_mean, 1) << " GPUs\n";
  if (s.priced) {
    out << "cost " << money(s.cost, s.currency) << " (priced GPUs for the whole run)   on GPU-hours held "
        << money(s.cost_used, s.currency) << "   per GPU-hour held " << money(s.cost_per_used_gpu_hour, s.currency)
        << "\n";
  }

  for (const auto& sv : s.services) {
    out << "service " << sv.name << " (" << sv.tenant << "): SLO met " << fixed(100.0 * sv.time_attainment, 1)
        << "% of the time, " << fixed(100.0 * sv.request_attainment, 1) << "% of requests   replicas running "
        << fixed(sv.mean_running, 1) << " of " << fixed(sv.mean_wanted, 1) << " wanted (mean)   "
        << sv.replicas_withdrawn << " of " << sv.replicas << " replicas never started\n";
  }
  if (!s.partitions.empty()) {
    out << "\nsplit site: the cost of the boundary " << grouped(s.boundary_idle_gpu_hours, 1)
        << " GPU-h (GPUs idle in one system while another's waiting jobs would have fit them)\n";
    out << pad_right("system", 14) << pad_right("policy", 12) << pad_left("GPUs", 8) << pad_left("jobs", 9)
        << pad_left("GPU util", 10) << pad_left("mean wait", 11) << pad_left("p95 wait", 10)
        << pad_left("idle, other side waits", 24) << "\n";
    for (const auto& p : s.partitions)
      out << pad_right(fit(p.name, 13), 14) << pad_right(fit(p.policy, 11), 12) << pad_left(thousands(p.gpus), 8)
          << pad_left(thousands(p.jobs), 9) << pad_left(percent(p.gpu_utilization), 10)
          << pad_left(duration(p.wait.mean), 11) << pad_left(duration(p.wait.p95), 10)
          << pad_left(grouped(p.boundary_idle_gpu_hours, 1) + " GPU-h", 24) << "\n";
    for (const auto& p : s.partitions)
      for (const auto& [kind, q] : p.wait_by_kind)
        out << "  " << pad_right(fit(p.name, 13), 14) << pad_right(kind, 12) << "wait mean " << duration(q.mean)
            << "   p95 " << duration(q.p95) << "   " << thousands(q.n) << " jobs\n";
    if (s.moves > 0) {
      out << "node moves: " << thousands(s.moves) << " (" << thousands(s.moves_on_demand) << " on demand)   drain mean "
          << duration(s.move_drain_mean_s) << "   delay mean " << duration(s.move_delay_mean_s) << "   "
          << thousands(s.move_preempted_jobs) << " jobs preempted at a drain deadline\n";
      for (const auto& p : s.partitions)
        out << "  " << pad_right(fit(p.name, 13), 14) << "nodes out " << thousands(p.nodes_out) << "   in "
            << thousands(p.nodes_in) << "   GPUs at the end " << thousands(p.gpus_at_end) << "\n";
    }
    out << "\n";
  }
  if (s.failures.any()) {
    const FailureSummary& f = s.failures;
    out << "failures: node outages " << thousands(f.node_outages) << "   jobs killed " << thousands(f.jobs_killed)
        << "   retried " << thousands(f.job_retries) << "   failed " << thousands(f.jobs_failed) << "   lost work "
        << grouped(f.lost_gpu_hours, 1) << " GPU-h\n";
    if (!f.drill_recovery_s.empty()) {
      out << "failure drill: " << f.drill_recovery_s.size() << (f.drill_recovery_s.size() == 1 ? " outage" : " outages")
          << ", recovered " << f.drills_recovered << "   recovery (queue back to its pre-outage level)";
      for (double r : f.drill_recovery_s) out << " " << (r < 0 ? std::string("never") : duration(r));
      out << "\n";
    }
    print_recovery(out, f);
  }
  if (s.denied > 0) {
    out << "permission denied: " << thousands(s.denied) << (s.denied == 1 ? " submission" : " submissions") << " (";
    std::vector<const TenantSummary*> denied;
    for (const auto& t : s.tenants)
      if (t.denied > 0) denied.push_back(&t);
    std::sort(denied.begin(), denied.end(), [](const TenantSummary* a, const TenantSummary* b) {
      return a->denied != b->denied ? a->denied > b->denied : a->name < b->name;
    });
    for (std::size_t i = 0; i < denied.size() && i < max_tenants; ++i)
      out << (i == 0 ? "" : ", ") << fit(denied[i]->name, 24) << " " << thousands(denied[i]->denied);
    if (denied.size() > max_tenants) out << ", ... " << (denied.size() - max_tenants) << " more tenants";
    out << ")\n";
  }

  if (!s.tenants.empty() && max_tenants > 0) {
    const std::size_t shown = std::min(max_tenants, s.tenants.size());
    std::size_t name_width = 6;
    for (std::size_t i = 0; i < shown; ++i)
      name_width = std::max(name_width, std::min<std::size_t>(24, display_width(s.tenants[i].name)));
    out << "\n"
        << pad_right("tenant", name_width) << pad_left("jobs", count_width + 2) << pad_left("GPU-hours", 12)
        << pad_left("mean wait", 11) << "\n";
    for (std::size_t i = 0; i < shown; ++i) {
      const TenantSummary& t = s.tenants[i];
      out << pad_right(fit(t.name, name_width), name_width) << pad_left(thousands(t.jobs), count_width + 2)
          << pad_left(grouped(t.gpu_hours, t.gpu_hours >= 1000 ? 0
                                           : t.gpu_hours >= 10 ? 1
                                                               : 2),
                      12)
          << pad_left((t.never_started > 0 ? ">=" : "") + duration(t.mean_wait_s), 11) << "\n";
    }
    if (s.tenants.size() > shown) out << "... and " << (s.tenants.size() - shown) << " more\n";
  }
  out << "\nfingerprint " << (s.fingerprint.empty() ? "-" : s.fingerprint) << "\n";
}

void print_summary_json(std::ostream& out, const Summary& s) {
  out << "{\n";
  out << "  \"scenario\": " << json_string(s.scenario_name) << ",\n";
  out << "  \"policy\": " << json_string(s.policy) << ",\n";
  out << "  \"seed\": " << s.seed << ",\n";
  out << "  \"fingerprint\": " << json_string(s.fingerprint) << ",\n";
  out << "  \"jobs\": " << s.jobs << ",\n";
  out << "  \"states\": {";
  for (int st = 0; st < models::kJobStateCount; ++st) {
    out << (st == 0 ? "" : ", ") << json_string(models::to_string(static_cast<models::JobState>(st))) << ": "
        << s.by_state[static_cast<std::size_t>(st)];
  }
  out << "},\n";
  out << "  \"warning\": " << json_string(s.banner) << ",\n";
  out << "  \"never_started\": " << s.never_started << ",\n";
  out << "  \"wait_lower_bound\": " << (s.never_started > 0 ? "true" : "false") << ",\n";
  out << "  \"wait_s\": ";
  json_quantiles(out, s.wait);
  out << ",\n  \"wait_started_s\": ";
  json_quantiles(out, s.wait_started);
  out << ",\n  \"jct_s\": ";
  json_quantiles(out, s.jct);
  out << ",\n";
  out << "  \"gpu_utilization\": " << json_number(s.gpu_utilization) << ",\n";
  out << "  \"gpu_busy_utilization\": " << json_number(s.gpu_busy_utilization) << ",\n";
  out << "  \"makespan_s\": " << json_number(s.makespan_s) << ",\n";
  out << "  \"preemptions\": " << s.preemptions << ",\n";
  out << "  \"lost_gpu_hours\": " << json_number(s.lost_gpu_hours) << ",\n";
  out << "  \"held_idle_gpu_hours\": " << json_number(s.held_idle_gpu_hours) << ",\n";
  out << "  \"starved_jobs\": " << s.starved_jobs << ",\n";
  out << "  \"pending_gpus_mean\": " << json_number(s.pending_gpus_mean) << ",\n";
  out << "  \"fragmentation\": " << json_number(s.fragmentation) << ",\n";
  if (!s.services.empty()) {
    out << "  \"slo_attainment\": " << json_number(s.slo_attainment) << ",\n  \"services\": [";
    for (std::size_t i = 0; i < s.services.size(); ++i) {
      const auto& sv = s.services[i];
      out << (i == 0 ? "" : ", ") << "{\"name\": " << json_string(sv.name) << ", \"tenant\": " << json_string(sv.tenant)
          << ", \"time_attainment\": " << json_number(sv.time_attainment)
          << ", \"request_attainment\": " << json_number(sv.request_attainment)
          << ", \"mean_running\": " << json_number(sv.mean_running)
          << ", \"mean_wanted\": " << json_number(sv.mean_wanted) << ", \"replicas\": " << sv.replicas
          << ", \"replicas_withdrawn\": " << sv.replicas_withdrawn
          << ", \"replica_gpu_hours\": " << json_number(sv.replica_gpu_hours) << "}";
    }
    out << "],\n";
  }
  out << "  \"fragmented_gpus_mean\": " << json_number(s.fragmented_gpus_mean) << ",\n";
  if (s.priced)
    out << "  \"cost\": {\"currency\": " << json_string(s.currency) << ", \"total\": " << json_number(s.cost)
        << ", \"used\": " << json_number(s.cost_used)
        << ", \"per_used_gpu_hour\": " << json_number(s.cost_per_used_gpu_hour) << "},\n";
  {
    const FailureSummary& f = s.failures;
    out << "  \"failures\": {\"node_outages\": " << f.node_outages << ", \"jobs_killed\": " << f.jobs_killed
        << ", \"job_retries\": " << f.job_retries << ", \"jobs_failed\": " << f.jobs_failed
        << ", \"jobs_failed_by_policy\": " << f.jobs_failed_by_policy
        << ", \"lost_gpu_hours\": " << json_number(f.lost_gpu_hours) << ", \"drill_recovery_s\": [";
    for (std::size_t i = 0; i < f.drill_recovery_s.size(); ++i)
      out << (i == 0 ? "" : ", ")
          << (f.drill_recovery_s[i] < 0 ? std::string("null") : json_number(f.drill_recovery_s[i]));
    out << "], \"drills_recovered\": " << f.drills_recovered << ", \"worst_recovery_s\": "
        << (f.worst_recovery_s < 0 ? std::string("null") : json_number(f.worst_recovery_s));
    print_recovery_json_fields(out, f);
    out << "},\n";
  }
  if (!s.partitions.empty()) {
    auto waits = [&](const std::vector<std::pair<std::string, Quantiles>>& v) {
      out << "{";
      for (std::size_t i = 0; i < v.size(); ++i) {
        out << (i == 0 ? "" : ", ") << json_string(v[i].first) << ": ";
        json_quantiles(out, v[i].second);
      }
      out << "}";
    };
    out << "  \"boundary_idle_gpu_hours\": " << json_number(s.boundary_idle_gpu_hours) << ",\n";
    if (s.moves > 0)
      out << "  \"moves\": {\"count\": " << s.moves << ", \"on_demand\": " << s.moves_on_demand
          << ", \"preempted_jobs\": " << s.move_preempted_jobs
          << ", \"drain_mean_s\": " << json_number(s.move_drain_mean_s)
          << ", \"delay_mean_s\": " << json_number(s.move_delay_mean_s) << "},\n";
    out << "  \"partitions\": [";
    for (std::size_t i = 0; i < s.partitions.size(); ++i) {
      const auto& p = s.partitions[i];
      out << (i == 0 ? "\n" : ",\n") << "    {\"name\": " << json_string(p.name)
          << ", \"policy\": " << json_string(p.policy) << ", \"gpus\": " << p.gpus << ", \"jobs\": " << p.jobs
          << ", \"gpu_utilization\": " << json_number(p.gpu_utilization)
          << ", \"boundary_idle_gpu_hours\": " << json_number(p.boundary_idle_gpu_hours);
      if (s.moves > 0)
        out << ", \"nodes_out\": " << p.nodes_out << ", \"nodes_in\": " << p.nodes_in
            << ", \"gpus_at_end\": " << p.gpus_at_end;
      out << ", \"wait_s\": ";
      json_quantiles(out, p.wait);
      out << ", \"wait_by_kind_s\": ";
      waits(p.wait_by_kind);
      out << ", \"wait_by_queue_s\": ";
      waits(p.wait_by_queue);
      out << "}";
    }
    out << "\n  ],\n";
  }
  out << "  \"denied\": " << s.denied << ",\n";
  out << "  \"tenants\": [";
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    const TenantSummary& t = s.tenants[i];
    out << (i == 0 ? "\n" : ",\n") << "    {\"name\": " << json_string(t.name) << ", \"jobs\": " << t.jobs
        << ", \"gpu_hours\": " << json_number(t.gpu_hours) << ", \"mean_wait_s\": " << json_number(t.mean_wait_s)
        << ", \"p95_wait_s\": " << json_number(t.p95_wait_s) << ", \"max_wait_s\": " << json_number(t.max_wait_s)
        << ", \"denied\": " << t.denied << ", \"never_started\": " << t.never_started << "}";
  }
  out << (s.tenants.empty() ? "]\n" : "\n  ]\n");
  out << "}\n";
}

}  // namespace headroom::results
