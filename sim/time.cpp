#include "sim/time.hpp"

#include <cctype>
#include <cstdio>

namespace headroom::sim {

std::optional<Tick> parse_duration(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  Tick total = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    std::int64_t value = 0;
    std::int64_t frac_num = 0, frac_den = 1;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (value > (INT64_MAX - 9) / 10) return std::nullopt;
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (frac_den < 1'000'000'000) {
          frac_num = frac_num * 10 + (text[i] - '0');
          frac_den *= 10;
        }
        ++i;
      }
    }
    std::string_view unit;
    std::size_t u0 = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    unit = text.substr(u0, i - u0);
    Tick scale;
    if (unit.empty() || unit == "s")
      scale = kSecond;
    else if (unit == "ms")
      scale = kMillisecond;
    else if (unit == "m" || unit == "min")
      scale = kMinute;
    else if (unit == "h")
      scale = kHour;
    else if (unit == "d")
      scale = kDay;
    else if (unit == "w")
      scale = 7 * kDay;
    else
      return std::nullopt;
    if (unit.empty() && i < text.size()) return std::nullopt;
    if (value > INT64_MAX / scale) return std::nullopt;
    Tick part = value * scale + (frac_num * scale) / frac_den;
    if (total > INT64_MAX - part) return std::nullopt;
    total += part;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

std::string format_duration(Tick t) {
  char buf[64];
  bool neg = t < 0;
  if (neg) t = -t;
  if (t < kMinute) {
    std::snprintf(buf, sizeof buf, "%s%.1f s", neg ? "-" : "", to_seconds(t));
    return buf;
  }
  std::int64_t s = t / kSecond;
  std::int64_t d = s / 86400;
  s %= 86400;
  if (d > 0)
    std::snprintf(buf, sizeof buf, "%s%lldd %02lld:%02lld:%02lld", neg ? "-" : "", static_cast<long long>(d),
                  static_cast<long long>(s / 3600), static_cast<long long>((s / 60) % 60),
                  static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%s%02lld:%02lld:%02lld", neg ? "-" : "", static_cast<long long>(s / 3600),
                  static_cast<long long>((s / 60) % 60), static_cast<long long>(s % 60));
  return buf;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

CivilDate civil_from_days(std::int64_t days) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  CivilDate out;
  out.day = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  out.month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  out.year = yoe + era * 400 + (out.month <= 2);
  return out;
}

}  // namespace headroom::sim
