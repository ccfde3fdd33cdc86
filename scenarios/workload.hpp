#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "models/workload.hpp"
#include "scenarios/scenario.hpp"

namespace headroom::scenarios {

// Traces read once for the runs of one command (a sweep's points, compare's systems, a plan's
// probes): runs naming the same trace file with the same import settings start from one import
// of it, so a sweep of 64 variants reads and parses the file once, and every run sees the same
// jobs even when the file changes while they run. Thread-safe: the first run to ask reads the
// file, the others wait for it; an import's error reaches every run that asked. Holds a trace
// until its announced runs have taken it (expect), else until the cache is destroyed: give it
// the lifetime of the command.
class TraceCache {
 public:
  // Announces a run that will take this workload's trace. Once as many runs as were announced
  // have taken it, the cache lets it go, and the last run takes its jobs over instead of copying
  // them. A trace never announced is held until the cache is destroyed.
  void expect(const WorkloadSpec& spec);
  // The trace as traces::import_trace reads it for this workload block (before its window,
  // filters and other transforms). With `take` false it is a look before the runs (a check of the
  // tenant names a target uses): read or shared like a run's, but not one of the announced runs.
  std::shared_ptr<const models::Workload> get(const WorkloadSpec& spec, bool take = true);
  // How many imports were made.
  std::size_t reads() const;

 private:
  struct Entry {
    std::optional<std::shared_future<std::shared_ptr<const models::Workload>>> trace;
    std::size_t expected = 0, taken = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> traces_;
  std::size_t reads_ = 0;
};

// Imports the scenario's trace and applies its transforms (time window, arrival scale with a
// seeded stream named "workload/arrival_scale"). Throws sim::InputError on trace problems. With
// a cache, the trace comes from it (read by the first run that asks; `take` as TraceCache::get).
models::Workload build_workload(const Scenario& scenario, TraceCache* cache = nullptr, bool take = true);
// The note build_workload leaves when the scenario has prime time: how many jobs it holds and for
// how long in all ("prime time (jobs over 4h, ...) holds 2051 of the 5242 jobs ..."); none without.
std::optional<std::string> prime_time_note(const models::PrimeTime& p, const models::Workload& w);

// The note build_workload leaves among the workload's warnings (meta.warnings) when it raised time
// limits the log shows its system did not enforce; commands print it as a note.
inline constexpr std::string_view kTimeLimitsNote = "time limits: ";
inline constexpr std::string_view kPrimeTimeNote = "prime time: ";
// The text a run prints as a note for one of the workload's warnings (the time limits note without
// its prefix, the prime time note whole); none for the others.
inline std::optional<std::string> run_note(const std::string& warning) {
  if (warning.starts_with(kTimeLimitsNote)) return warning.substr(kTimeLimitsNote.size());
  if (warning.starts_with(kPrimeTimeNote)) return warning;
  return std::nullopt;
}

// `workload.time_limits` (scenario.hpp) applied to the jobs: a log in which more than 1% of the
// jobs with a limit (and at least 5) ran over it by more than a minute (Slurm's KillWait and
// OverTimeLimit allow a little) was not enforcing its limits, so under "auto" their limits become
// their recorded run times; "as_recorded" does that always, "enforce" never. Returns the note:
// what was raised, or, under "auto" with limits enforced, how far past them jobs ran (RICC: 914
// jobs, 882 of them by under a minute, median 5 s: killed at the limit).
std::optional<std::string> apply_time_limits(const WorkloadSpec& spec, models::Workload& w);

}  // namespace headroom::scenarios
