#pragma once

// What a trace says about the system that produced it (`headroom trace-infer`, docs/fidelity.md):
// the capacity actually in use over time against the nominal size, the most jobs and GPUs each
// user and queue ever ran at once, the queues, and the scheduler the log's header names. Each
// figure maps to a knob of the policies (Slurm MaxJobsPerUser / MaxTRESPerUser / GrpTRES,
// partitions, availability; Kueue nominalQuota, KAI and Volcano queue limits), and `headroom
// calibrate` searches only knobs this inference supports.
//
// Everything is computed from the recorded starts and ends (models::Job::trace_start,
// trace_start + runtime): a job without a recorded start is left out and counted.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/prime_time.hpp"
#include "models/workload.hpp"
#include "sim/time.hpp"

namespace headroom::traces {

struct Concurrency {
  std::string name;              // user (tenant) or queue
  std::int64_t jobs = 0;         // jobs with a recorded start
  std::int32_t max_jobs = 0;     // most of its jobs running at once
  std::int64_t max_gpus = 0;     // most GPUs its jobs held at once (whole GPUs)
  std::int64_t largest_job = 0;  // most GPUs one of its jobs held
  double mean_wait_s = 0;        // recorded
  double median_wait_s = 0;      // recorded (the lower middle of an even count)
};

struct CapacityWindow {
  sim::Tick start = 0;  // window [start, start + window)
  std::int64_t max_busy = 0;
  double mean_busy = 0;  // time-weighted over the window
};

// What the prime-time finding rests on: of the jobs over the bound, and of the others, the share of
// recorded starts inside the window.
struct PrimeTimeEvidence {
  std::int64_t long_jobs = 0, short_jobs = 0;
  double long_inside = 0, short_inside = 0;  // shares 0..1
  double long_release = 0;  // the share of the long jobs' starts in the busier hour of the two after it (weekdays)
};

// Prime time in recorded starts (the rule of docs/fidelity.md, "Prime time", fixed on the KTH SP2
// log, the release test after false findings on RICC and CEA Curie): for a bound T of 1, 2, 4, 8 or 12 h (smallest
// first), the weekday hours h (Mon-Fri) in which the jobs with a time limit over T started at most a quarter as often,
// as a share of their starts, as the other jobs did, taken as the longest run of such hours that holds 12:00 and lasts
// 4 h or more; the rule holds when, over that window, at least 50 jobs of each kind, the long
// jobs' share of starts inside is at most a quarter of the others' and the jobs it held start
// when it ends: the busier of the two hours after it holds at least three times the long jobs'
// mean weekday starts per hour over the other hours outside it, and a tenth of all their starts. Disabled when no bound
// gives one, or without a calendar origin.
void detect_prime_time(const models::Workload& w, std::int32_t utc_offset_minutes, models::DstRule dst,
                       models::PrimeTime& out, PrimeTimeEvidence& evidence);

struct Inference {
  std::int64_t jobs = 0, recorded = 0;  // jobs, and of them with a recorded start
  std::int64_t nominal_gpus = -1;       // MaxProcs header / units per GPU; -1 unknown
  std::int64_t max_busy = 0;            // most GPUs in use at once over the trace
  sim::Tick window = 0;
  sim::Tick window_asked = 0;  // the window asked for when `window` had to be widened (20,000 windows at most), else 0
  std::vector<CapacityWindow> capacity;
  std::vector<Concurrency> users;         // most jobs first, ties by name
  std::vector<Concurrency> queues;        // likewise
  std::string scheduler;                  // "easy", "conservative", "backfill", "fcfs" or "" (header silent)
  std::vector<std::string> header_notes;  // the header's Note / Scheduler / Queue / Partition lines
  // The header line that says jobs shared processors (time-sharing, gang scheduling, non-dedicated
  // mode: header_time_shared), or "": recorded use above the machine is then how it ran, not an anomaly.
  std::string time_shared;
  // The header line that names the system's scheduler or job manager, "Note:" left out ("Scheduler
  // was Maui 3.0.7", "uses DJM for job management": header_names_scheduler), or "". `scheduler`
  // above is the discipline (EASY, FCFS, ...) when the header names one; a product alone names none.
  std::string scheduler_line;
  // A cleaned log (the archive's "THIS IS A CLEANED VERSION" note): the jobs its filters removed
  // ("(1434 jobs removed)" after each filter, summed), of MaxJobs (the original log's count, -1
  // when the header gives none), and the filters as written. The recorded waits were shaped by
  // the whole load, the removed jobs included.
  std::int64_t cleaned_removed = 0;  // by filters naming a user (jobs that ran among the others)
  std::int64_t cleaned_cut = 0;      // by filters on the submit time or job number alone (the span cut)
  std::int64_t original_jobs = -1;
  std::vector<std::string> cleaning_filters;
  // The local clock the SWF header gives (TimeZone: the standard offset in seconds;
  // TimeZoneString: the zone, whose name gives the summer time rule); known = the header said.
  bool clock_known = false;
  std::int32_t utc_offset_minutes = 0;
  std::string zone;
  // Prime time the recorded starts show (detect_prime_time): long jobs that did not start in the
  // working hours of working days while shorter ones did; disabled when not seen.
  models::PrimeTime prime_time;
  PrimeTimeEvidence prime_evidence;
};

// `header_path`: the trace file, read for its SWF header comments (';' lines); "" to skip.
Inference infer_system(const models::Workload& w, sim::Tick window, std::int64_t units_per_gpu = 1,
                       const std::string& header_path = "");

// Whether one SWF header line says jobs shared processors (case-insensitive): "non-dedicated",
// "time-shar" / "timeshar", or "gang schedul" / "gang-schedul".
bool header_time_shared(const std::string& line);

// Whether one SWF header line names the scheduler or job manager (case-insensitive): it speaks of a
// "scheduler" or "job management" ("Scheduler is Slurm", "uses MAUI scheduler", "uses DJM for job
// management"), not of scheduling as such ("gang scheduling").
bool header_names_scheduler(const std::string& line);

// The scheduler named by SWF header text (case-insensitive): "easy" (EASY backfilling),
// "conservative" (conservative backfilling), "backfill", "fcfs", or "".
std::string scheduler_from_header(const std::string& text);

// What the header says of the scheduler, as trace-infer and calibrate print it: the discipline
// (`scheduler`), else the line that names one quoted, with "(no queueing discipline named)"; "" when
// the header names none.
std::string header_scheduler_text(const Inference& inf);

// The share of the jobs of the span a cleaned log keeps that its user filters removed:
// cleaned_removed / (original_jobs - cleaned_cut); 0 when none were, 1 when MaxJobs is missing.
double cleaned_share(const Inference& inf);

// A cleaned log whose user filters removed at least this share of its span's jobs gets a note.
inline constexpr double kCleanedNoteShare = 0.05;

// One line on a cleaned log's removed jobs (cleaned_share at least kCleanedNoteShare), or "".
std::string cleaned_log_note(const Inference& inf);

void print_inference(std::ostream& out, const Inference& inf, std::size_t max_rows = 10);

}  // namespace headroom::traces
