#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace headroom::sim {

// Simulated time: integer milliseconds. Never use floating-point time.
using Tick = std::int64_t;

inline constexpr Tick kMillisecond = 1;
inline constexpr Tick kSecond = 1000;
inline constexpr Tick kMinute = 60 * kSecond;
inline constexpr Tick kHour = 60 * kMinute;
inline constexpr Tick kDay = 24 * kHour;
inline constexpr Tick kNever = INT64_MAX;

constexpr Tick from_seconds(std::int64_t s) { return s * kSecond; }
constexpr double to_seconds(Tick t) { return static_cast<double>(t) / kSecond; }

// Parses "90", "90s", "500ms", "15m", "2h", "7d", "1w", or combinations like "1h30m".
// A bare number means seconds. Returns nullopt on malformed input or overflow.
std::optional<Tick> parse_duration(std::string_view text);

// Human form, e.g. "1d 02:03:04" or "12.5 s".
std::string format_duration(Tick t);

// The proleptic Gregorian calendar (H. Hinnant's public-domain description): days since
// 1970-01-01 of a date (month 1..12), and the date of such a day.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);
struct CivilDate {
  std::int64_t year = 1970;
  unsigned month = 1, day = 1;
};
CivilDate civil_from_days(std::int64_t days);

}  // namespace headroom::sim
