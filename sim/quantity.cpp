#include "sim/quantity.hpp"

#include <charconv>
#include <cmath>

namespace headroom::sim {

std::optional<double> parse_quantity(std::string_view s) {
  static constexpr struct {
    std::string_view suffix;
    double scale;
  } kSuffixes[] = {{"Ki", 1024.0},
                   {"Mi", 1048576.0},
                   {"Gi", 1073741824.0},
                   {"Ti", 1099511627776.0},
                   {"Pi", 1125899906842624.0},
                   {"Ei", 1152921504606846976.0},
                   {"n", 1e-9},
                   {"u", 1e-6},
                   {"m", 1e-3},
                   {"k", 1e3},
                   {"M", 1e6},
                   {"G", 1e9},
                   {"T", 1e12},
                   {"P", 1e15},
                   {"E", 1e18}};
  double scale = 1;
  for (const auto& sfx : kSuffixes)
    if (s.size() > sfx.suffix.size() && s.ends_with(sfx.suffix)) {
      scale = sfx.scale;
      s.remove_suffix(sfx.suffix.size());
      break;
    }
  int exponent = 0;
  if (const std::size_t e = s.find_first_of("eE"); e != std::string_view::npos && scale == 1) {
    const std::string_view x = s.substr(e + 1);
    const auto [p, ec] = std::from_chars(x.data(), x.data() + x.size(), exponent);
    if (x.empty() || ec != std::errc() || p != x.data() + x.size() || exponent < -30 || exponent > 30)
      return std::nullopt;
    s = s.substr(0, e);
  }
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '-') return std::nullopt;
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::fixed);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  const double out = v * scale * std::pow(10.0, exponent);
  if (!std::isfinite(out)) return std::nullopt;
  return out;
}

}  // namespace headroom::sim
