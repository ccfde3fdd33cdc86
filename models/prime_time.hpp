#pragma once
// Prime time: a site rule of many batch systems (docs/fidelity.md, "Prime time"): during the
// working hours of working days, jobs whose time limit exceeds a bound do not start; they enter
// the scheduler's queue when prime time ends, as a job submitted with Slurm's `--begin` (or held by
// a site's job_submit filter) does, and keep their submit time for their wait. Read from the
// scenario's `prime_time:` block; found in a log by traces::infer_system.

#include <cstdint>
#include <string>

#include "sim/time.hpp"

namespace headroom::models {

// Daylight saving time rules for the local clock (the trace's time zone).
enum class DstRule : std::uint8_t {
  None,
  Eu,  // the European Union's: last Sunday of March 01:00 UTC to last Sunday of October (September
       // before 1996) 01:00 UTC
  Us,  // the United States': first Sunday of April to last Sunday of October 02:00 local (1987-2006),
       // second Sunday of March to first Sunday of November (2007 on), last Sunday of April before
};

struct PrimeTime {
  sim::Tick longer_than = -1;         // jobs whose time limit exceeds this are held; -1: no rule
  std::uint8_t days = 0x1f;           // bit 0 = Monday ... bit 6 = Sunday
  std::int32_t from_minute = 8 * 60;  // local clock, from_minute < to_minute <= 1440
  std::int32_t to_minute = 18 * 60;
  std::int32_t utc_offset_minutes = 0;  // standard time
  DstRule dst = DstRule::None;
  std::uint32_t line = 0, column = 0;  // where the scenario gave it (for errors); 0 = none

  bool enabled() const { return longer_than >= 0; }
  // Whether a job with this time limit (-1: none) is subject to the rule.
  bool holds(sim::Tick walltime) const { return enabled() && walltime > longer_than; }
  // The first tick >= t outside prime time; unix_start_s is the trace's origin (tick 0) in seconds
  // since the Unix epoch.
  sim::Tick release(sim::Tick t, std::int64_t unix_start_s) const;
  // "jobs over 4h, Mon-Fri 08:00-18:00 (UTC+01:00, EU summer time)"
  std::string describe() const;
  std::string hours_text() const;   // "08:00-18:00"
  std::string offset_text() const;  // "+01:00"
  // The scenario block in YAML flow style: {longer_than: 4h, days: "Mon-Fri", hours: "08:00-18:00",
  // utc_offset: "+01:00", dst: none}
  std::string yaml_flow() const;
  // The same rule (where the scenario gave it aside).
  bool operator==(const PrimeTime& o) const {
    return longer_than == o.longer_than && days == o.days && from_minute == o.from_minute && to_minute == o.to_minute &&
           utc_offset_minutes == o.utc_offset_minutes && dst == o.dst;
  }
};

// Local time of a Unix time in ms under a standard offset and a DST rule: the day (days since
// 1970-01-01, local), the weekday (0 = Monday) and the milliseconds since local midnight.
struct LocalTime {
  std::int64_t day = 0;
  int weekday = 0;
  std::int64_t ms_of_day = 0;
};
LocalTime local_time(std::int64_t unix_ms, std::int32_t utc_offset_minutes, DstRule dst);
// The DST rule a time zone name implies ("Europe/Stockholm": Eu, "US/Pacific", "America/...": Us).
DstRule dst_rule_of_zone(const std::string& zone);
const char* dst_rule_name(DstRule r);  // "none", "eu", "us"
// "Mon-Fri", "Sat,Sun", "Mon,Wed-Fri"; and back (false when not a day list).
std::string days_text(std::uint8_t days);
bool parse_days(const std::string& text, std::uint8_t& days);
// A standard offset from UTC as the scenario writes it ("+01:00", "-08:00").
std::string utc_offset_text(std::int32_t minutes);
// A whole number of hours, minutes or seconds as the scenario writes it ("4h", "90m", "45s").
std::string duration_text(sim::Tick t);

}  // namespace headroom::models
