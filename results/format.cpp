#include "results/format.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/text.hpp"
#include "sim/time.hpp"

namespace headroom::results {

std::string duration(double seconds) {
  if (seconds == std::numeric_limits<double>::infinity()) return "never";
  if (!std::isfinite(seconds)) return "-";
  if (seconds < 0) return std::string(1, '-').append(duration(-seconds));
  if (seconds == 0) return "0s";
  char buf[48];
  if (seconds < 9.95) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
    return buf;
  }
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm %02llds", s / 60, s % 60);
  else if (s < 86400)
    std::snprintf(buf, sizeof buf, "%lldh %02lldm", s / 3600, (s / 60) % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldd %02lldh", s / 86400, (s / 3600) % 24);
  return buf;
}

std::string thousands(std::int64_t n) { return sim::thousands(n); }

std::string jobs_count(std::int64_t n) { return thousands(n) + (n == 1 ? " job" : " jobs"); }

std::string grouped(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
  std::string text = buf;
  const std::size_t point = text.find('.');
  const std::string whole = text.substr(0, point);
  std::string out;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  if (point != std::string::npos) out += text.substr(point);
  const bool zero = out.find_first_not_of("0.,") == std::string::npos;
  return v < 0 && !zero ? "-" + out : out;
}

std::string percent(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return "-";
  return grouped(100.0 * fraction, decimals) + "%";
}

std::string money(double amount, std::string_view currency) {
  if (!std::isfinite(amount)) return "-";
  std::string out = grouped(amount, std::fabs(amount) < 100 ? 2 : 0);
  if (!currency.empty()) out.append(" ").append(currency);
  return out;
}

std::string with_unit(double v, std::string_view unit) {
  if (unit == "s") return duration(v);
  if (!std::isfinite(v)) return "-";
  if (unit == "fraction") return percent(v);
  if (unit == "count") return thousands(static_cast<std::int64_t>(std::llround(v)));
  if (unit == "GPU-h") return grouped(v, 1) + " GPU-h";
  if (unit == "GPUs") return grouped(v, 1) + " GPUs";
  if (unit == "replicas") return grouped(v, 1) + " replicas";
  if (unit == "cost") return money(v, "");
  if (unit.substr(0, 5) == "cost:") return money(v, unit.substr(5));
  return grouped(v, 3);
}

std::string calendar(std::int64_t unix_ms, bool seconds) {
  std::int64_t secs = unix_ms >= 0 ? unix_ms / 1000 : -((-unix_ms + 999) / 1000);
  const std::int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  const std::int64_t sod = secs - days * 86400;
  const sim::CivilDate date = sim::civil_from_days(days);
  const auto y = static_cast<long long>(date.year), m = static_cast<long long>(date.month),
             d = static_cast<long long>(date.day);
  char buf[128];
  if (seconds)
    std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld", y, m, d,
                  static_cast<long long>(sod / 3600), static_cast<long long>((sod / 60) % 60),
                  static_cast<long long>(sod % 60));
  else
    std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld %02lld:%02lld", y, m, d, static_cast<long long>(sod / 3600),
                  static_cast<long long>((sod / 60) % 60));
  return buf;
}

}  // namespace headroom::results
