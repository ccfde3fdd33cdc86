#include "models/prime_time.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace headroom::models {

namespace {

constexpr std::array<const char*, 7> kDayNames{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int weekday_of(std::int64_t day) { return static_cast<int>(((day + 3) % 7 + 7) % 7); }  // 0 = Monday (1970-01-01: Thu)

// The n-th (1-based) Sunday of a month, or the last one (n = 0), as days since the epoch.
std::int64_t sunday(std::int64_t y, int m, int n) {
  if (n == 0) {
    const std::int64_t last =
        sim::days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1u : static_cast<unsigned>(m + 1), 1) - 1;
    return last - (weekday_of(last) + 1) % 7;
  }
  const std::int64_t first = sim::days_from_civil(y, static_cast<unsigned>(m), 1);
  return first + (6 - weekday_of(first) + 7) % 7 + 7 * (n - 1);
}

// Whether summer time is in force at this UTC instant.
bool summer(std::int64_t unix_ms, std::int32_t offset_minutes, DstRule dst) {
  if (dst == DstRule::None) return false;
  const std::int64_t std_ms = unix_ms + std::int64_t{offset_minutes} * 60'000;
  const std::int64_t y = sim::civil_from_days(floor_div(std_ms, sim::kDay)).year;
  if (dst == DstRule::Eu) {
    if (y < 1981) return false;
    const std::int64_t on = sunday(y, 3, 0) * sim::kDay + sim::kHour;  // 01:00 UTC
    const std::int64_t off = sunday(y, y < 1996 ? 9 : 10, 0) * sim::kDay + sim::kHour;
    return unix_ms >= on && unix_ms < off;
  }
  // US: the changes are at 02:00 local standard time (on) and 02:00 local summer time (off).
  if (y < 1967) return false;
  std::int64_t on_day = 0, off_day = 0;
  if (y >= 2007) {
    on_day = sunday(y, 3, 2);
    off_day = sunday(y, 11, 1);
  } else if (y >= 1987) {
    on_day = sunday(y, 4, 1);
    off_day = sunday(y, 10, 0);
  } else {
    on_day = sunday(y, 4, 0);
    off_day = sunday(y, 10, 0);
  }
  const std::int64_t on = on_day * sim::kDay + 2 * sim::kHour;
  const std::int64_t off = off_day * sim::kDay + sim::kHour;  // 02:00 summer = 01:00 standard
  return std_ms >= on && std_ms < off;
}

}  // namespace

LocalTime local_time(std::int64_t unix_ms, std::int32_t utc_offset_minutes, DstRule dst) {
  std::int64_t local = unix_ms + std::int64_t{utc_offset_minutes} * 60'000;
  if (summer(unix_ms, utc_offset_minutes, dst)) local += sim::kHour;
  LocalTime out;
  out.day = floor_div(local, sim::kDay);
  out.ms_of_day = local - out.day * sim::kDay;
  out.weekday = weekday_of(out.day);
  return out;
}

sim::Tick PrimeTime::release(sim::Tick t, std::int64_t unix_start_s) const {
  if (!enabled() || from_minute >= to_minute) return t;
  const std::int64_t base = unix_start_s * 1000;
  const LocalTime lt = local_time(base + t, utc_offset_minutes, dst);
  if ((days >> lt.weekday & 1u) == 0) return t;
  const std::int64_t from = std::int64_t{from_minute} * 60'000, to = std::int64_t{to_minute} * 60'000;
  if (lt.ms_of_day < from || lt.ms_of_day >= to) return t;
  // Prime time ends at to_minute on the local clock of this day (a change of summer time inside
  // the window, twice a year at night, is not looked for).
  return t + (to - lt.ms_of_day);
}

std::string days_text(std::uint8_t days) {
  std::string out;
  for (int d = 0; d < 7;) {
    if ((days >> d & 1u) == 0) {
      ++d;
      continue;
    }
    int e = d;
    while (e + 1 < 7 && (days >> (e + 1) & 1u) != 0) ++e;
    if (!out.empty()) out += ',';
    out += kDayNames[static_cast<std::size_t>(d)];
    if (e > d) out += std::string(e == d + 1 ? "," : "-") + kDayNames[static_cast<std::size_t>(e)];
    d = e + 1;
  }
  return out;
}

bool parse_days(const std::string& text, std::uint8_t& days) {
  const auto day_of = [](const std::string& s) {
    for (std::size_t i = 0; i < kDayNames.size(); ++i) {
      const std::string n = kDayNames[i];
      if (s.size() == 3 && std::tolower(static_cast<unsigned char>(s[0])) == std::tolower(n[0]) &&
          std::tolower(static_cast<unsigned char>(s[1])) == n[1] &&
          std::tolower(static_cast<unsigned char>(s[2])) == n[2])
        return static_cast<int>(i);
    }
    return -1;
  };
  std::uint8_t out = 0;
  std::size_t pos = 0;
  if (text.empty()) return false;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    std::string item = text.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    const std::size_t dash = item.find('-');
    const int a = day_of(item.substr(0, dash));
    const int b = dash == std::string::npos ? a : day_of(item.substr(dash + 1));
    if (a < 0 || b < 0 || b < a) return false;
    for (int d = a; d <= b; ++d) out = static_cast<std::uint8_t>(out | (1u << d));
    pos = comma + 1;
  }
  days = out;
  return true;
}

DstRule dst_rule_of_zone(const std::string& zone) {
  if (zone.rfind("Europe/", 0) == 0 || zone == "CET" || zone == "MET" || zone == "WET" || zone == "EET")
    return DstRule::Eu;
  if (zone.rfind("US/", 0) == 0 || zone.rfind("America/", 0) == 0 || zone == "EST5EDT" || zone == "CST6CDT" ||
      zone == "MST7MDT" || zone == "PST8PDT")
    return DstRule::Us;
  return DstRule::None;
}

const char* dst_rule_name(DstRule r) {
  switch (r) {
    case DstRule::Eu: return "eu";
    case DstRule::Us: return "us";
    case DstRule::None: break;
  }
  return "none";
}

std::string duration_text(sim::Tick t) {
  if (t % sim::kHour == 0) return std::to_string(t / sim::kHour) + "h";
  if (t % sim::kMinute == 0) return std::to_string(t / sim::kMinute) + "m";
  return std::to_string(t / sim::kSecond) + "s";
}

namespace {
std::string hhmm(std::int32_t m) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02d:%02d", static_cast<int>(m / 60), static_cast<int>(m % 60));
  return buf;
}
}  // namespace

std::string PrimeTime::hours_text() const { return hhmm(from_minute) + "-" + hhmm(to_minute); }

std::string utc_offset_text(std::int32_t minutes) {
  std::string out(1, minutes < 0 ? '-' : '+');
  out += hhmm(minutes < 0 ? -minutes : minutes);
  return out;
}

std::string PrimeTime::offset_text() const { return utc_offset_text(utc_offset_minutes); }

std::string PrimeTime::describe() const {
  std::string out =
      "jobs over " + duration_text(longer_than) + ", " + days_text(days) + " " + hours_text() + " (UTC" + offset_text();
  if (dst == DstRule::Eu) out += ", EU summer time";
  if (dst == DstRule::Us) out += ", US daylight time";
  return out + ")";
}

std::string PrimeTime::yaml_flow() const {
  return "{longer_than: " + duration_text(longer_than) + ", days: \"" + days_text(days) + "\", hours: \"" +
         hours_text() + "\", utc_offset: \"" + offset_text() + "\", dst: " + dst_rule_name(dst) + "}";
}

}  // namespace headroom::models
