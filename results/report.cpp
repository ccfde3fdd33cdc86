#include "results/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "models/job.hpp"
#include "results/check.hpp"
#include "results/fidelity.hpp"
#include "results/format.hpp"
#include "results/hdf5_io.hpp"
#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::results {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Okabe-Ito colours (distinguishable with colour-vision deficiencies), yellow replaced by black,
// then 13 more at least 49 apart in RGB from every other: a 20-run bake-off repeats none.
const char* const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
                                "#999999", "#875692", "#BE0032", "#8DB600", "#F6A600", "#882D17", "#A1CAF1",
                                "#2B3D26", "#FF00AA", "#DCD300", "#604E97", "#00C4FF", "#E25822", "#1E4620"};
constexpr std::size_t kMaxSeries = 8;  // tenants drawn in a chart (the rest are in the tables)

const char* const kOutageColours[] = {"#C62828", "#EF8F00", "#6A1B9A"};  // as the app's (gui/replay_data.cpp)
const char* const kOutageNames[] = {"outage", "maintenance drain", "node failure"};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string tick_label(double v, double step) {
  if (std::fabs(v) < step * 1e-9) v = 0;
  const double a = std::fabs(v);
  if (a >= 1e6) return fmt("%.3g", v);
  int decimals = 0;
  while (decimals < 6 &&
         std::fabs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  return grouped(v, decimals);  // thousands separators, as every number: "60,000"
}

std::string number(double v, int decimals = 3) { return grouped(v, decimals); }
std::string count(double v) { return std::isfinite(v) ? thousands(static_cast<std::int64_t>(std::llround(v))) : "-"; }

std::string truncate(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

// Time axis: days when the run spans more than 3 days, else hours.
struct TimeAxis {
  double divisor = 3600.0 * 1000.0;
  std::string unit = "hours";
};
TimeAxis time_axis(Tick span) {
  TimeAxis a;
  if (span > 3 * sim::kDay) {
    a.divisor = static_cast<double>(sim::kDay);
    a.unit = "days";
  } else {
    a.divisor = static_cast<double>(sim::kHour);
  }
  return a;
}

// The empirical CDF of `values` (sorted here) as a series of at most 400 steps from (0, 0).
Series cdf_series(std::string name, std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  Series s;
  s.name = std::move(name);
  const std::size_t n = values.size(), points = std::min<std::size_t>(n, 400);
  s.x.push_back(0);
  s.y.push_back(0);
  for (std::size_t k = 0; k < points; ++k) {
    const std::size_t i = points == n ? k : (k + 1) * n / points - 1;
    s.x.push_back(values[i]);
    s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
  }
  return s;
}

struct Row {
  std::string label, value;
};

std::string kv_table(const std::vector<Row>& rows) {
  std::string out = "<table class=\"kv\">";
  for (const auto& r : rows)
    out += "<tr><th>" + html_escape(r.label) + "</th><td>" + html_escape(r.value) + "</td></tr>";
  return out + "</table>";
}

std::vector<Row> kpi_rows(const Summary& s, const Fairness& f) {
  const std::string lower = s.never_started > 0 ? ">=" : "";
  std::vector<Row> rows = {
      {"jobs", count(static_cast<double>(s.jobs))},
      {"completed", count(static_cast<double>(s.by_state[2]))},
      {"failed", count(static_cast<double>(s.by_state[3]))},
      {"cancelled", count(static_cast<double>(s.by_state[4]))},
      {"rejected", count(static_cast<double>(s.by_state[5]))},
      {"unfinished", count(static_cast<double>(s.by_state[6]))},
      {"never started", count(static_cast<double>(s.never_started))},
      // Counting the jobs that never started, censored at the end of the run: lower bounds then.
      {"wait mean", lower + duration(s.wait.mean)},
      {"wait median", lower + duration(s.wait.median)},
      {"wait p95", lower + duration(s.wait.p95)},
      {"wait p99", lower + duration(s.wait.p99)},
      {"wait max", lower + duration(s.wait.max)},
      {"wait mean, started jobs only", duration(s.wait_started.mean)},
      {"JCT mean", duration(s.jct.mean)},
      {"JCT median", duration(s.jct.median)},
      {"JCT p95", duration(s.jct.p95)},
      {"GPU utilization", percent(s.gpu_utilization)},
      {"GPU utilization, useful work only", percent(s.gpu_busy_utilization)},
      {"makespan", duration(s.makespan_s)},
      {"preemptions", count(static_cast<double>(s.preemptions))},
      {"work lost to preemption and policy kills (e.g. TimeLimit)", number(s.lost_gpu_hours, 1) + " GPU-h"},
      {"starved (> 24 h)", count(static_cast<double>(s.starved_jobs))},
      {"Jain's index (shares / entitlement)", number(f.jain)},
      {"Jain's index, mean over time", number(f.jain_mean)},
      {"finish-time fairness rho, max tenant", number(f.rho_max, 2)},
      {"finish-time fairness rho, mean job", number(f.rho_mean, 2)},
      {"fragmentation (free GPUs no waiting job fits, of the free GPUs while jobs waited)",
       percent(s.fragmentation) + " of " + grouped(s.free_gpus_waiting_mean, 1) + " free"},
      {"fragmented GPUs, mean over the run", grouped(s.fragmented_gpus_mean, 1)},
      {"borrowed above entitlement", f.entitlements_set ? number(f.borrowed_gpu_hours, 1) + " GPU-h"
                                                        : std::string("- (the scenario sets no tenants)")},
      {"reclaims (cross-tenant preemptions)",
       f.reclaims < 0 ? std::string("-") : count(static_cast<double>(f.reclaims))},
  };
  for (const auto& sv : s.services) {
    rows.push_back({"service " + sv.name + ": SLO met (time)", percent(sv.time_attainment)});
    rows.push_back({"service " + sv.name + ": requests within the SLO", percent(sv.request_attainment)});
  }
  if (s.priced) {
    rows.push_back({"cost, every priced GPU over the run", money(s.cost, s.currency)});
    rows.push_back({"cost per GPU-hour held", money(s.cost_per_used_gpu_hour, s.currency)});
  }
  return rows;
}

const char* kStyle = R"(
body { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; margin: 24px 32px; color: #222; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px 0; }
h2 { font-size: 19px; margin: 32px 0 6px 0; border-bottom: 2px solid #0072B2; padding-bottom: 3px; }
h3 { font-size: 15px; margin: 20px 0 6px 0; }
p.meta { color: #555; font-size: 13px; margin: 2px 0; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e3e3e3; text-align: right; white-space: nowrap; }
th { background: #f3f6f9; font-weight: 600; }
td:first-child, th:first-child { text-align: left; }
table.kv th { text-align: left; background: none; font-weight: normal; color: #444; }
table.kv td { font-weight: 600; }
.grid { display: flex; flex-wrap: wrap; gap: 12px 24px; }
svg { display: block; max-width: 100%; height: auto; }
.wide { overflow-x: auto; max-width: 100%; }
table.cols th { white-space: normal; vertical-align: bottom; }
.note { color: #666; font-size: 12px; }
table.side td:first-child { white-space: normal; min-width: 14em; max-width: 22em; }
table.side th { white-space: normal; max-width: 11em; vertical-align: bottom; }
table.side td { white-space: normal; }
table.side tr.same td { color: #757575; }
table.verdicts th, table.verdicts td, table.wrap th, table.wrap td { white-space: normal; }
table.verdicts td { text-align: left; min-width: 6em; }
)";

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> out;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return out;
  if (hi <= lo) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9 && out.size() < 100; v += step) out.push_back(v);
  return out;
}

std::string series_colour(std::size_t k) {
  if (k < std::size(kColours)) return kColours[k];
  const double hue = std::fmod(static_cast<double>(k - std::size(kColours)) * 137.508, 360.0);
  return "hsl(" + fmt("%.0f", hue) + ", 70%, " + (k % 2 ? "35%" : "50%") + ")";
}

std::vector<OutageSpan> outage_spans(const RunResult& r) {
  constexpr std::uint8_t kNodeDown = 7, kNodeUp = 8, kDrain = 9;  // models::AuditKind
  struct Open {
    int kind = -1;
    Tick start = 0;
    std::uint32_t reason = 0;
  };
  std::vector<Open> open;
  std::vector<OutageSpan> single;  // one per node outage
  const auto reason = [&](std::uint32_t i) { return i < r.reasons.size() ? r.reasons[i] : std::string(); };
  const auto close = [&](const Open& o, Tick end) {
    std::string what = reason(o.reason);
    if (what.rfind("outage: ", 0) == 0) what = what.substr(8);
    single.push_back(OutageSpan{o.kind, o.start, std::max(o.start, end), 1, o.kind == 0 ? what : std::string()});
  };
  for (const EventRecord& e : r.events) {
    if ((e.kind != kNodeDown && e.kind != kNodeUp && e.kind != kDrain) || e.detail < 0 || e.detail > (1 << 24))
      continue;
    const auto node = static_cast<std::size_t>(e.detail);
    if (node >= open.size()) open.resize(node + 1);
    Open& o = open[node];
    if (e.kind == kNodeUp) {
      if (o.kind >= 0) close(o, e.time);
      o = Open{};
      continue;
    }
    if (o.kind >= 0) continue;  // a drained node going down: the drain goes on
    const std::string why = reason(e.reason);
    o.kind = e.kind == kDrain || why.find("maintenance") != std::string::npos ? 1 : why.rfind("outage", 0) == 0 ? 0 : 2;
    o.start = e.time;
    o.reason = e.reason;
  }
  for (const Open& o : open)
    if (o.kind >= 0) close(o, r.sim_end);
  std::stable_sort(single.begin(), single.end(), [](const OutageSpan& a, const OutageSpan& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.start < b.start;
  });
  std::vector<OutageSpan> out;
  for (const OutageSpan& s : single) {
    if (!out.empty() && out.back().kind == s.kind && s.start <= out.back().end) {
      out.back().end = std::max(out.back().end, s.end);
      out.back().nodes += 1;
    } else {
      out.push_back(s);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const OutageSpan& a, const OutageSpan& b) {
    return a.start != b.start ? a.start < b.start : a.kind < b.kind;
  });
  return out;
}

std::vector<Chart::Band> outage_bands(const std::vector<OutageSpan>& spans, Tick origin, double unit_ms) {
  std::vector<Chart::Band> out;
  for (const OutageSpan& s : spans) {
    const int k = std::clamp(s.kind, 0, 2);
    std::string tip = kOutageNames[k];
    if (!s.what.empty()) tip += ": " + s.what;
    tip += ", " + thousands(s.nodes) + (s.nodes == 1 ? " node, " : " nodes, ") +
           duration(static_cast<double>(s.end - s.start) / 1000.0);
    out.push_back(Chart::Band{static_cast<double>(s.start - origin) / unit_ms,
                              static_cast<double>(s.end - origin) / unit_ms, kOutageColours[k], kOutageNames[k], tip,
                              k == 0, k});
  }
  return out;
}

std::string svg_chart(const Chart& c, const std::vector<Series>& series) {
  // The legend's entries: every series, then each band label and reference line once.
  std::vector<std::pair<std::string, std::string>> keys;  // (name, colour); colour "" for a level
  std::vector<char> key_kind;                             // 's' series, 'b' band, 'l' level
  for (std::size_t k = 0; k < series.size(); ++k)
    keys.emplace_back(series[k].name, series_colour(k)), key_kind.push_back('s');
  for (const Chart::Band& b : c.bands)
    if (std::none_of(keys.begin(), keys.end(), [&](const auto& k) { return k.first == b.label; }))
      keys.emplace_back(b.label, b.colour), key_kind.push_back('b');
  for (const Chart::Level& l : c.levels) keys.emplace_back(l.label, "#444444"), key_kind.push_back('l');
  const bool legend = series.size() > 1 || keys.size() > series.size();
  // Whole names, wrapped at spaces into lines of at most 26 bytes (sweep lines read "policy=fifo,
  // arrival_scale=0.8", runs "poc-failure-drill · kai"); a longer word is split, never cut.
  std::vector<std::vector<std::string>> key_lines;
  double legend_h = 0;
  for (const auto& key : keys) {
    constexpr std::size_t kLine = 26;
    std::vector<std::string> lines(1);
    std::istringstream words(key.first);
    std::string word;
    while (words >> word) {
      while (word.size() > kLine) {
        std::size_t cut = kLine;
        while (cut > 1 && sim::utf8_continuation(word[cut])) --cut;  // whole UTF-8 characters
        if (!lines.back().empty()) lines.emplace_back();
        lines.back() = word.substr(0, cut);
        lines.emplace_back();
        word = word.substr(cut);
      }
      if (!lines.back().empty() && lines.back().size() + 1 + word.size() > kLine) lines.emplace_back();
      lines.back() += (lines.back().empty() ? "" : " ") + word;
    }
    if (lines.size() > 1 && lines.back().empty()) lines.pop_back();
    legend_h += 18.0 + 13.0 * static_cast<double>(lines.size() - 1);
    key_lines.push_back(std::move(lines));
  }
  // More keys than fit beside the plot (a bake-off's 20 runs): the legend goes under it, in columns
  // read downwards; the chart grows to hold the whole legend: no run is left out.
  constexpr double kColumnWidth = 230;
  const bool below = legend && legend_h > c.height - 34 - 48;
  const std::size_t columns =
      below ? std::max<std::size_t>(1, static_cast<std::size_t>((c.width - 72 + 10) / kColumnWidth)) : 1;
  const std::size_t per_column = (keys.size() + columns - 1) / columns;
  std::vector<double> row_h(per_column, 18.0);  // below: a row is as tall as its tallest key
  for (std::size_t k = 0; k < keys.size() && below; ++k)
    row_h[k % per_column] = std::max(row_h[k % per_column], 18.0 + 13.0 * static_cast<double>(key_lines[k].size() - 1));
  double below_h = 0;
  for (double h : row_h) below_h += below ? h : 0;
  const double left = 72, right = legend && !below ? 210 : 24, top = 34, bottom = 48;
  const int height = below ? static_cast<int>(std::ceil(c.height + below_h + 8))
                           : std::max(c.height, static_cast<int>(std::ceil(top + 6 + legend_h + 8)));
  const double pw = c.width - left - right, ph = c.height - top - bottom;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = c.y_min, y1 = c.y_max;
  double data_y1 = -std::numeric_limits<double>::infinity();
  for (const auto& s : series) {
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]);
      x1 = std::max(x1, s.x[i]);
      data_y1 = std::max(data_y1, s.y[i]);
    }
  }
  if (!c.categories.empty()) {
    x0 = -0.5;
    x1 = static_cast<double>(c.categories.size()) - 0.5;
  }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (x1 <= x0) x1 = x0 + 1;
  if (c.markers && c.categories.empty()) {  // room for the dots at both ends
    const double pad = 0.05 * (x1 - x0);
    x0 -= pad;
    x1 += pad;
  }
  if (y1 < 0) y1 = std::isfinite(data_y1) && data_y1 > y0 ? data_y1 * 1.05 : y0 + 1;
  std::vector<double> yt = nice_ticks(y0, y1, 5);
  if (c.y_max < 0 && !yt.empty() && yt.back() < y1) {
    const double step = yt.size() > 1 ? yt[1] - yt[0] : 1;
    yt.push_back(yt.back() + step);
  }
  if (!yt.empty() && c.y_max < 0) y1 = std::max(y1, yt.back());
  auto X = [&](double v) { return left + (v - x0) / (x1 - x0) * pw; };
  auto Y = [&](double v) { return top + ph - (v - y0) / (y1 - y0) * ph; };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << c.width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << c.width << ' ' << height << "\" font-family=\"DejaVu Sans, Arial, sans-serif\">";
  o << "<rect x=\"0\" y=\"0\" width=\"" << c.width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>";
  o << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">"
    << html_escape(c.title) << "</text>";
  // Grid and y ticks.
  for (double v : yt) {
    if (v < y0 - 1e-12 || v > y1 + 1e-12) continue;
    const double y = Y(v);
    o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" stroke=\"#e6e6e6\"/>";
    const double step = yt.size() > 1 ? yt[1] - yt[0] : 1;
    const std::string label = c.y_percent ? tick_label(100 * v, 100 * step) + "%" : tick_label(v, step);
    o << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">"
      << html_escape(label) << "</text>";
  }
  // x ticks.
  if (!c.categories.empty()) {
    const std::size_t n = c.categories.size();
    const std::size_t every = std::max<std::size_t>(1, n / 10 + (n % 10 != 0 ? 1 : 0));
    for (std::size_t i = 0; i < n; i += every) {
      const double x = X(static_cast<double>(i));
      o << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << top + ph << "\" y2=\"" << top + ph + 4
        << "\" stroke=\"#333\"/>";
      o << "<text x=\"" << x << "\" y=\"" << top + ph + 17
        << "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">" << html_escape(truncate(c.categories[i], 14))
        << "</text>";
    }
  } else {
    std::vector<double> xt;
    std::vector<std::string> labels;
    if (!c.x_ticks.empty()) {  // the values swept, each labelled as written
      for (std::size_t i = 0; i < c.x_ticks.size(); ++i) {
        xt.push_back(c.x_ticks[i]);
        labels.push_back(i < c.x_tick_labels.size() ? c.x_tick_labels[i] : tick_label(c.x_ticks[i], 1));
      }
    } else if (c.calendar_ms >= 0 && c.x_unit_ms > 0) {
      // Calendar ticks: whole days (or hours) in UTC.
      const double day = 86400000.0 / c.x_unit_ms;
      const double span = (x1 - x0) / day;  // days
      const int per = std::max(2, static_cast<int>(pw / 70));
      double step = day;
      for (double d : {1.0 / 24, 2.0 / 24, 3.0 / 24, 6.0 / 24, 12.0 / 24, 1.0, 2.0, 7.0, 14.0, 28.0, 91.0, 364.0}) {
        step = d * day;
        if (span / d <= per) break;
      }
      const std::int64_t into_day = ((c.calendar_ms % 86400000) + 86400000) % 86400000;
      const double anchor = -static_cast<double>(into_day) / c.x_unit_ms;
      for (double v = anchor + std::ceil((x0 - anchor) / step - 1e-9) * step; v <= x1 + 1e-9 && xt.size() < 100;
           v += step) {
        xt.push_back(v);
        const std::string when =
            calendar(c.calendar_ms + static_cast<std::int64_t>(std::llround(v * c.x_unit_ms)));  // "2010-05-03 06:00"
        labels.push_back(step >= day ? when.substr(0, 10) : when.substr(5));
      }
    } else {
      xt = nice_ticks(x0, x1, std::max(2, static_cast<int>(pw / 90)));
      const double step = xt.size() > 1 ? xt[1] - xt[0] : 1;
      for (double v : xt) labels.push_back(tick_label(v, step));
    }
    for (std::size_t i = 0; i < xt.size(); ++i) {
      const double x = X(xt[i]);
      if (x < left - 1e-6 || x > left + pw + 1e-6) continue;
      o << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << top << "\" y2=\"" << top + ph
        << "\" stroke=\"#f0f0f0\"/>";
      o << "<text x=\"" << x << "\" y=\"" << top + ph + 17
        << "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">" << html_escape(labels[i]) << "</text>";
    }
  }
  // Axes and labels.
  o << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << top + ph
    << "\" stroke=\"#333\"/>";
  o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << top + ph << "\" y2=\"" << top + ph
    << "\" stroke=\"#333\"/>";
  o << "<text x=\"" << left + pw / 2 << "\" y=\"" << c.height - 8
    << "\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">" << html_escape(c.x_label) << "</text>";
  o << "<text transform=\"translate(16," << top + ph / 2
    << ") rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">" << html_escape(c.y_label) << "</text>";
  // Node outages, their x clamped to the plot's.
  for (const Chart::Band& b : c.bands) {
    if (!(b.x1 >= x0 && b.x0 <= x1)) continue;
    double a = X(std::max(b.x0, x0)), z = X(std::min(b.x1, x1));
    if (z - a < 3) a = (a + z) / 2 - 1.5, z = a + 3;  // a 1-hour outage over weeks still shows
    // A strip just above the plot, one row a kind (data at 100% stays visible); a scripted outage also
    // shades the plot.
    o << "<g class=\"band\"><title>" << html_escape(b.tip) << "</title>";
    if (b.full)
      o << "<rect x=\"" << fmt("%.1f", a) << "\" y=\"" << top << "\" width=\"" << fmt("%.1f", z - a) << "\" height=\""
        << ph << "\" fill=\"" << b.colour << "\" fill-opacity=\"0.16\"/>";
    o << "<rect x=\"" << fmt("%.1f", a) << "\" y=\"" << top - 11 + 4 * std::clamp(b.row, 0, 2) << "\" width=\""
      << fmt("%.1f", z - a) << "\" height=\"3\" fill=\"" << b.colour << "\"/></g>";
  }
  // Series, clipped to the plot area.
  static int clip_id = 0;
  const int id = ++clip_id;
  o << "<clipPath id=\"c" << id << "\"><rect x=\"" << left << "\" y=\"" << top - 2 << "\" width=\"" << pw
    << "\" height=\"" << ph + 4 << "\"/></clipPath><g clip-path=\"url(#c" << id << ")\">";
  for (const Chart::Level& l : c.levels)
    o << "<line class=\"level\" x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << fmt("%.1f", Y(l.y))
      << "\" y2=\"" << fmt("%.1f", Y(l.y)) << "\" stroke=\"#444444\" stroke-width=\"1.4\" stroke-dasharray=\"2,3\"/>";
  const bool categorical = !c.categories.empty();
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const std::string colour = series_colour(k);
    // Categories: the series side by side within each category, never joined by lines.
    const double dodge = categorical && series.size() > 1
                             ? (static_cast<double>(k) - static_cast<double>(series.size() - 1) / 2) *
                                   std::min(0.12, 0.6 / static_cast<double>(series.size()))
                             : 0.0;
    std::string pts;
    auto flush = [&] {
      if (!pts.empty())
        o << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.8\" points=\"" << pts << "\"/>";
      pts.clear();
    };
    char b[64];
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size() && !categorical; ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        flush();
        continue;
      }
      std::snprintf(b, sizeof b, "%.1f,%.1f ", X(s.x[i]), Y(s.y[i]));
      pts += b;
    }
    flush();
    if (c.markers || categorical) {
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        o << "<circle cx=\"" << fmt("%.1f", X(s.x[i] + dodge)) << "\" cy=\"" << fmt("%.1f", Y(s.y[i])) << "\" r=\""
          << (categorical ? "4.2" : "3.2") << "\" fill=\"" << colour << "\"><title>" << html_escape(s.name) << ": "
          << html_escape(fmt("%.4g", s.y[i])) << "</title></circle>";
      }
    }
  }
  o << "</g>";
  // Legend.
  if (legend) {
    double y = top + 6;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      double x = left + pw + 14;
      if (below) {
        const std::size_t col = k / per_column, row = k % per_column;
        x = left + static_cast<double>(col) * kColumnWidth;
        y = c.height + 4;
        for (std::size_t r = 0; r < row; ++r) y += row_h[r];
      }
      const std::string& colour = keys[k].second;
      if (key_kind[k] == 'b')
        o << "<rect x=\"" << x << "\" y=\"" << y - 6 << "\" width=\"18\" height=\"12\" fill=\"" << colour
          << "\" fill-opacity=\"0.45\"/>";
      else if (key_kind[k] == 'l')
        o << "<line x1=\"" << x << "\" x2=\"" << x + 18 << "\" y1=\"" << y << "\" y2=\"" << y
          << "\" stroke=\"#444444\" stroke-width=\"1.4\" stroke-dasharray=\"2,3\"/>";
      else if (categorical)
        o << "<circle cx=\"" << x + 9 << "\" cy=\"" << y << "\" r=\"4.2\" fill=\"" << colour << "\"/>";
      else
        o << "<line x1=\"" << x << "\" x2=\"" << x + 18 << "\" y1=\"" << y << "\" y2=\"" << y << "\" stroke=\""
          << colour << "\" stroke-width=\"3\"/>";
      o << "<text class=\"key\" x=\"" << x + 24 << "\" y=\"" << y + 4 << "\" font-size=\"11\" fill=\"#222\"><title>"
        << html_escape(keys[k].first) << "</title>";
      const auto& lines = key_lines[k];
      for (std::size_t l = 0; l < lines.size(); ++l)
        o << "<tspan x=\"" << x + 24 << "\" dy=\"" << (l == 0 ? 0 : 13) << "\">" << html_escape(lines[l]) << "</tspan>";
      o << "</text>";
      y += 18.0 + 13.0 * static_cast<double>(lines.size() - 1);
    }
  }
  o << "</svg>";
  return o.str();
}

ReportInput load_report_input(const std::string& path) {
  ReportInput in;
  in.file = path;
  if (has_hdf5_group(path, "runs")) {
    in.sweep = true;
    in.table = read_table_hdf5(path, "runs");
    check_sweep_table(in.table, path);
    return in;
  }
  in.run = read_hdf5(path);
  in.summary = summarize(in.run);
  FairnessOptions opt;
  opt.weights = weights_from_scenario_text(in.run);
  opt.entitlements_set = tenants_in_scenario_text(in.run);
  in.fairness = compute_fairness(in.run, opt);
  return in;
}

namespace {

// The drills of one run (docs/drills.md), the figures `headroom run` prints: each scripted outage
// with when it began and how long the queue took to recover, jobs killed and retried, the work
// lost, and the submissions the permission drill denied. Empty when the run had none.
std::string drills_section(const ReportInput& in) {
  const RunResult& r = in.run;
  const Summary& s = in.summary;
  const FailureSummary& f = s.failures;
  if (!f.any() && s.denied == 0) return {};
  std::ostringstream o;
  o << "<h3>Drills</h3><div class=\"grid\"><div>";
  o << kv_table(
      {{"node outages (failures, outages, maintenance)", thousands(f.node_outages)},
       {"jobs killed by failures", thousands(f.jobs_killed)},
       {"retried after their back-off", thousands(f.job_retries)},
       {"failed past their retry limit", thousands(f.jobs_failed)},
       {"ended Failed by the system itself (e.g. TimeLimit; not the drill's)", thousands(f.jobs_failed_by_policy)},
       {"work lost to failures", grouped(f.lost_gpu_hours, 1) + " GPU-h"},
       {"work lost to preemption and policy kills", grouped(s.lost_gpu_hours, 1) + " GPU-h"},
       {"scripted outages recovered from",
        thousands(f.drills_recovered) + " of " + thousands(static_cast<std::int64_t>(f.drill_recovery_s.size()))},
       {"worst recovery", f.worst_recovery_s >= 0 ? duration(f.worst_recovery_s) : std::string("-")},
       {"denied submissions (permission drill)", thousands(s.denied)}});
  o << "</div>";
  if (!f.drill_recovery_s.empty()) {
    o << "<div><table><tr><th>scripted outage</th><th>began</th><th>recovered after</th></tr>";
    for (std::size_t i = 0; i < f.drill_recovery_s.size(); ++i) {
      std::string began = "-";
      if (i < r.drill_start.size()) {
        const Tick at = r.drill_start[i];
        began = r.unix_start >= 0
                    ? calendar(r.unix_start * 1000 + at) + " UTC"
                    : duration(static_cast<double>(at - r.sim_start) / 1000.0) + " after the first submit";
      }
      const double rec = f.drill_recovery_s[i];
      o << "<tr><td>" << i + 1 << "</td><td>" << html_escape(began) << "</td><td>"
        << (rec < 0 ? std::string("not by the end of the run") : duration(rec)) << "</td></tr>";
    }
    o << "</table><p class=\"note\">Recovered: the pending queue back to its level before the outage, once it was "
         "over.</p></div>";
  }
  if (s.denied > 0) {
    o << "<div><table><tr><th>tenant</th><th>denied submissions</th></tr>";
    for (const auto& t : s.tenants)
      if (t.denied > 0)
        o << "<tr><td>" << html_escape(truncate(t.name, 28)) << "</td><td>" << thousands(t.denied) << "</td></tr>";
    o << "</table></div>";
  }
  o << "</div>";
  return o.str();
}

// Recovery per outage (docs/drills.md): how long the jobs each outage killed took to run again,
// the work lost, gangs left partially placed, and the services' SLO around the scripted outages.
std::string recovery_section(const ReportInput& in) {
  const FailureSummary& f = in.summary.failures;
  if (f.recovery.killed == 0 && f.outage_slo.empty()) return {};
  auto t = [](double v) { return v < 0 ? std::string("never") : duration(v); };
  std::ostringstream o;
  o << "<h3>Recovery per outage</h3><div><table class=\"wrap\"><tr><th>outages</th><th>jobs killed</th><th>not running "
       "again "
       "(past retry limit)</th><th>back p50</th><th>p95</th><th>max</th><th>all running again after</th>"
       "<th>work lost</th><th>gangs killed</th><th>left partial (GPU-h held)</th><th>SLO during / hour after</th>"
       "</tr>";
  auto row = [&](const std::string& name, const RecoveryStats& st, const std::string& slo) {
    o << "<tr><td>" << html_escape(name) << "</td><td>" << thousands(st.killed) << "</td><td>"
      << thousands(st.not_recovered) << " (" << thousands(st.retry_exhausted) << ")</td><td>" << t(st.p50_s)
      << "</td><td>" << t(st.p95_s) << "</td><td>" << t(st.max_s) << "</td><td>"
      << (st.killed == 0 ? std::string("-") : t(st.all_running_s)) << "</td><td>" << grouped(st.lost_gpu_hours, 1)
      << " GPU-h</td><td>" << thousands(st.gangs) << "</td><td>" << thousands(st.partial_gangs) << " ("
      << grouped(st.partial_gpu_hours, 1) << ")</td><td>" << slo << "</td></tr>";
  };
  row("all (" + thousands(f.outages) + " that killed jobs)", f.recovery, "-");
  const char* kinds[] = {"random failures", "scripted outages", "maintenance"};
  for (std::size_t k = 0; k < f.by_kind.size(); ++k)
    if (f.by_kind[k].killed > 0) row(kinds[k], f.by_kind[k], "-");
  for (const OutageRecovery& d : f.drills) {
    std::string slo = "-";
    for (const OutageSlo& x : f.outage_slo)
      if (x.drill == d.drill) slo = percent(x.during) + " / " + percent(x.after);
    row("drill " + std::to_string(d.drill + 1) + ": " + (d.reason.empty() ? std::string("-") : d.reason), d.recovery,
        slo);
  }
  o << "</table><p class=\"note\">Back: from a job's kill to its next start (a job that never ran again counts "
       "as never). All running again: from the outage's start until the last job it killed was running again. "
       "Work lost: run time back to the last checkpoint plus restart overheads. Left partial: a multi-node job "
       "with some pods bound while the others waited (no gang scheduling). SLO: the lowest time attainment of "
       "any inference service during the outage and in the hour after it.</p></div>";
  return o.str();
}

// The acceptance targets of the run's drill, as `headroom compare --keep-runs` scored them under
// the run's system (RunResult::scorecard): each verdict with why, in one line. Empty when the
// file has none.
std::string verdicts_section(const ReportInput& in) {
  if (in.run.scorecard.empty()) return {};
  std::ostringstream o;
  o << "<h3>Acceptance targets (headroom compare's scorecard)</h3><table class=\"verdicts\"><tr><th>target</th>"
       "<th>verdict</th><th>why</th></tr>";
  for (const VerdictLine& v : in.run.scorecard)
    o << "<tr><td>" << html_escape(v.target) << "</td><td>" << html_escape(v.verdict) << "</td><td>"
      << html_escape(v.why) << "</td></tr>";
  o << "</table>";
  return o.str();
}

// A split site (docs/split.md): each system's partition, its utilization and waits, the cost of
// the boundary, and the node moves. Empty when the run did not split the site.
std::string partitions_section(const ReportInput& in) {
  const Summary& s = in.summary;
  if (s.partitions.empty()) return {};
  std::ostringstream o;
  o << "<h3>Partitions of the split site</h3><table class=\"wrap\"><tr><th>system</th><th>policy</th><th>GPUs</th>"
       "<th>jobs</th><th>GPU utilization</th><th>wait mean</th><th>wait p95</th><th>idle GPU-h the others' "
       "backlog would have used</th>";
  if (s.moves > 0) o << "<th>nodes given / got</th><th>GPUs at the end</th>";
  o << "</tr>";
  for (const PartitionSummary& p : s.partitions) {
    o << "<tr><td>" << html_escape(p.name) << "</td><td>" << html_escape(p.policy) << "</td><td>" << thousands(p.gpus)
      << "</td><td>" << thousands(p.jobs) << "</td><td>" << percent(p.gpu_utilization) << "</td><td>"
      << duration(p.wait.mean) << "</td><td>" << duration(p.wait.p95) << "</td><td>"
      << grouped(p.boundary_idle_gpu_hours, 1) << "</td>";
    if (s.moves > 0)
      o << "<td>" << thousands(p.nodes_out) << " / " << thousands(p.nodes_in) << "</td><td>" << thousands(p.gpus_at_end)
        << "</td>";
    o << "</tr>";
  }
  o << "</table><p class=\"note\">The cost of the boundary: " << grouped(s.boundary_idle_gpu_hours, 1)
    << " GPU-hours idle in one partition while another's waiting jobs would have fit them.";
  if (s.moves > 0)
    o << " Node moves: " << thousands(s.moves) << " (" << thousands(s.moves_on_demand) << " on demand), mean drain "
      << duration(s.move_drain_mean_s) << ", mean delay " << duration(s.move_delay_mean_s) << ", "
      << thousands(s.move_preempted_jobs) << " jobs preempted at a drain deadline.";
  o << "</p>";
  return o.str();
}

std::string run_section(const ReportInput& in) {
  const RunResult& r = in.run;
  const Summary& s = in.summary;
  const Fairness& f = in.fairness;
  std::ostringstream o;
  o << "<h2>" << html_escape(r.scenario_name.empty() ? in.file : r.scenario_name) << " &mdash; policy "
    << html_escape(r.policy) << "</h2>";
  o << "<p class=\"meta\">file " << html_escape(in.file) << " &middot; seed " << r.seed << " &middot; " << r.total_gpus
    << " GPUs in " << r.pools.size() << " pool" << (r.pools.size() == 1 ? "" : "s") << " &middot; fingerprint "
    << html_escape(r.fingerprint) << " &middot; " << html_escape(r.version) << "</p>";
  // One paragraph per line of the banner (a warning, then notes).
  if (!s.banner.empty())
    for (const std::string& line : sim::split_on(s.banner, '\n'))
      o << "<p class=\"warning\"><b>" << html_escape(line) << "</b></p>";
  o << "<div class=\"grid\"><div><h3>Key figures</h3>" << kv_table(kpi_rows(s, f)) << "</div><div class=\"wide\">";

  // Fairness per tenant (largest share first).
  std::vector<std::size_t> order;
  for (std::size_t t = 0; t < f.tenants.size(); ++t)
    if (f.tenants[t].jobs > 0) order.push_back(t);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return f.tenants[a].share > f.tenants[b].share; });
  o << "<h3>Tenants (by share of GPU-time)</h3><table><tr><th>tenant</th><th>jobs</th><th>entitled</th>"
       "<th>share</th><th>share / entitled</th><th>dominant share</th><th>rho</th><th>max wait</th>"
       "<th>starved</th></tr>";
  const std::size_t shown = std::min<std::size_t>(order.size(), 20);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& t = f.tenants[order[i]];
    o << "<tr><td>" << html_escape(truncate(t.name, 28)) << "</td><td>" << thousands(t.jobs) << "</td><td>"
      << percent(t.entitlement) << "</td><td>" << percent(t.share) << "</td><td>" << number(t.share_ratio, 2)
      << "</td><td>" << percent(t.dominant_share) << " " << html_escape(t.dominant_resource) << "</td><td>"
      << number(t.rho, 2) << "</td><td>" << duration(t.max_wait_s) << "</td><td>" << thousands(t.starved)
      << "</td></tr>";
  }
  o << "</table>";
  if (order.size() > shown) o << "<p class=\"note\">" << order.size() - shown << " more tenants not shown.</p>";
  o << "</div></div>";
  o << drills_section(in);
  o << recovery_section(in);
  o << verdicts_section(in);
  o << partitions_section(in);

  const auto& ts = r.timeseries;
  const std::size_t S = ts.time.size();
  const TimeAxis axis = time_axis(r.sim_end - r.sim_start);
  // Calendar time when the trace gives a start date.
  const std::int64_t calendar_ms = r.unix_start >= 0 ? r.unix_start * 1000 + r.sim_start : -1;
  const std::string x_label =
      calendar_ms >= 0 ? std::string("date (UTC)") : "time since the first submit (" + axis.unit + ")";
  // Node outages shaded on every chart over time, as the app marks them (issue #36).
  const std::vector<Chart::Band> bands = outage_bands(outage_spans(r), r.sim_start, axis.divisor);
  const auto timed = [&](Chart& c) {
    c.calendar_ms = calendar_ms;
    c.x_unit_ms = axis.divisor;
    c.bands = bands;
  };
  // Utilization over time: all pools, and each pool when there are several.
  if (S > 0 && r.total_gpus > 0 && ts.pool_used_gpus.size() == S * r.pools.size()) {
    std::vector<Series> series(1);
    series[0].name = "all pools";
    const std::size_t P = r.pools.size();
    if (P > 1)
      for (std::size_t p = 0; p < std::min(P, kMaxSeries - 1); ++p) series.push_back(Series{r.pools[p].name, {}, {}});
    for (std::size_t i = 0; i < S; ++i) {
      const double x = static_cast<double>(ts.time[i] - r.sim_start) / axis.divisor;
      double used = 0;
      for (std::size_t p = 0; p < P; ++p) {
        const double u = ts.pool_used_gpus[i * P + p];
        used += u;
        const double cap = static_cast<double>(r.pools[p].nodes) * r.pools[p].gpus_per_node;
        if (P > 1 && p + 1 < series.size()) {
          series[p + 1].x.push_back(x);
          series[p + 1].y.push_back(cap > 0 ? u / cap : kNaN);
        }
      }
      series[0].x.push_back(x);
      series[0].y.push_back(used / static_cast<double>(r.total_gpus));
    }
    Chart c;
    c.title = "GPU utilization over time";
    c.x_label = x_label;
    timed(c);
    c.y_label = "GPUs in use / GPUs";
    c.y_percent = true;
    c.y_max = 1.0;
    o << "<h3>Utilization</h3>" << svg_chart(c, series);
  }
  // Wait CDF per tenant, the 8 tenants with the most GPU-time.
  {
    std::vector<std::size_t> top(order.begin(),
                                 order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), kMaxSeries)));
    std::vector<std::vector<double>> waits(f.tenants.size());
    for (const auto& j : r.jobs)
      if (j.start >= 0 && j.tenant < waits.size())
        waits[j.tenant].push_back(sim::to_seconds(j.start - j.submit) / 3600.0);
    std::vector<Series> series;
    for (std::size_t t : top) {
      auto& w = waits[t];
      if (w.empty()) continue;
      series.push_back(cdf_series(f.tenants[t].name + " (" + std::to_string(w.size()) + " jobs)", w));
    }
    if (!series.empty()) {
      Chart c;
      c.title = "Wait CDF per tenant (the " + std::to_string(series.size()) + " with the most GPU-time)";
      c.x_label = "wait (hours)";
      c.y_label = "fraction of started jobs";
      c.y_percent = true;
      c.y_max = 1.0;
      o << "<h3>Waits</h3>" << svg_chart(c, series);
    }
  }
  // Jain's index over time and the shares of the largest tenants.
  if (!f.jain_over_time.empty() && f.jain_over_time.size() == S) {
    Series j{"Jain's index", {}, {}};
    for (std::size_t i = 0; i < S; ++i) {
      j.x.push_back(static_cast<double>(ts.time[i] - r.sim_start) / axis.divisor);
      j.y.push_back(f.jain_over_time[i]);
    }
    Chart c;
    c.title = "Jain's index over time (tenants with running or pending jobs, shares / entitlement)";
    c.x_label = x_label;
    timed(c);
    c.y_label = "Jain's index";
    c.y_max = 1.0;
    o << "<h3>Fairness</h3>" << svg_chart(c, {j});
    const std::size_t T = r.tenants.size();
    if (T > 0 && f.share_over_time.size() == S * T) {
      std::vector<Series> shares;
      for (std::size_t k = 0; k < std::min(order.size(), kMaxSeries); ++k) {
        const std::size_t t = order[k];
        if (t >= T) continue;
        Series s{f.tenants[t].name, j.x, {}};
        for (std::size_t i = 0; i < S; ++i) s.y.push_back(f.share_over_time[i * T + t]);
        shares.push_back(std::move(s));
      }
      Chart cs;
      cs.title = "Share of the cluster's GPUs per tenant";
      cs.x_label = x_label;
      timed(cs);
      cs.y_label = "GPUs held / GPUs";
      cs.y_percent = true;
      o << svg_chart(cs, shares);
    }
  }
  return o.str();
}

double parse_number(const std::string& s, bool& ok) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  ok = !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
  return v;
}

std::string sweep_section(const ReportInput& in) {
  const Table& t = in.table;
  std::ostringstream o;
  auto attr = [&](const char* k) {
    auto it = t.attributes.find(k);
    return it == t.attributes.end() ? std::string() : it->second;
  };
  o << "<h2>Sweep " << html_escape(attr("scenario_file")) << "</h2>";
  o << "<p class=\"meta\">file " << html_escape(in.file) << " &middot; " << t.rows() << " runs &middot; "
    << html_escape(attr("version")) << "</p>";
  auto col = [&](const std::string& name) -> const Column* {
    for (const auto& c : t.columns)
      if (c.name == name) return &c;
    return nullptr;
  };
  // The swept keys: the text columns between `run` and `seed`.
  // Keys with a single value (in this table) are neither drawn nor named in legends.
  // Each key's values are numbered in order of first appearance (ids: one per row), so that the
  // runs are grouped in one pass per key and KPI, whatever the number of runs and values.
  struct Key {
    const Column* column;
    std::vector<std::string_view> values;  // distinct, in order of first appearance
    std::vector<std::uint32_t> ids;        // per row: its value's place in `values`
  };
  std::vector<const Column*> all_vars;
  std::vector<Key> vars;
  for (std::size_t i = 1; i < t.columns.size() && t.columns[i].name != "seed"; ++i) {
    const Column& c = t.columns[i];
    if (!c.text) continue;
    all_vars.push_back(&c);
    Key k{&c, {}, {}};
    std::unordered_map<std::string_view, std::uint32_t> id_of;
    k.ids.reserve(c.strings.size());
    for (const std::string& v : c.strings) {
      const auto [it, added] = id_of.try_emplace(v, static_cast<std::uint32_t>(k.values.size()));
      if (added) k.values.push_back(v);
      k.ids.push_back(it->second);
    }
    if (k.values.size() > 1) vars.push_back(std::move(k));
  }
  const Column* status = col("status");
  std::vector<bool> done(t.rows(), true);  // the runs whose KPIs are drawn: those that finished
  if (status != nullptr && status->text)
    for (std::size_t r = 0; r < t.rows(); ++r) done[r] = status->strings[r] == "done";
  struct Kpi {
    const char* column;
    const char* label;
    int kind;          // 0 duration (s), 1 fraction, 2 number
    const char* unit;  // the y axis
  };
  const std::vector<Kpi> kpis = {{"wait_mean_s", "mean wait", 0, "hours"},
                                 {"wait_p95_s", "p95 wait", 0, "hours"},
                                 {"jct_mean_s", "mean JCT", 0, "hours"},
                                 {"gpu_utilization", "GPU utilization", 1, "GPUs in use / GPUs"},
                                 {"jain_index", "Jain's index", 2, "index"},
                                 {"rho_max", "finish-time rho (max tenant)", 2, "JCT / ideal"},
                                 {"starved_jobs", "starved jobs (waited > 24 h)", 2, "jobs"}};
  auto show = [](double v, int kind) {
    return kind == 0 ? duration(v) : kind == 1 ? percent(v) : number(v, std::fabs(v) >= 100 ? 0 : 3);
  };

  // A sweep's keys multiply: 2^20 runs are more than a sweep holds, so a table with more keys of
  // several values was not made by one sweep; the first kMaxKeysDrawn are drawn. A key with more
  // values than a chart can show one point each for is named, not drawn.
  constexpr std::size_t kMaxKeysDrawn = 20, kMaxNumbersDrawn = 2000, kMaxCategoriesDrawn = 100, kMarkersUpTo = 200;
  const std::size_t keys_drawn = std::min(vars.size(), kMaxKeysDrawn);
  // KPI vs each key's values, mean over seeds (and over runs that share every other key).
  for (std::size_t vk = 0; vk < keys_drawn; ++vk) {
    const Key& var = vars[vk];
    std::vector<std::string> values(var.values.begin(), var.values.end());
    bool numeric = true;
    std::vector<double> xs;
    for (const auto& v : values) {
      bool ok = false;
      xs.push_back(parse_number(v, ok));
      numeric = numeric && ok;
    }
    // at[id]: where the value with that id is drawn (numbers in increasing order, else as they came).
    std::vector<std::size_t> at(values.size());
    for (std::size_t i = 0; i < at.size(); ++i) at[i] = i;
    if (numeric) {
      std::vector<std::size_t> idx = at;
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
      std::vector<std::string> v2;
      std::vector<double> x2;
      for (std::size_t k = 0; k < idx.size(); ++k) {
        at[idx[k]] = k;
        v2.push_back(values[idx[k]]);
        x2.push_back(xs[idx[k]]);
      }
      values = std::move(v2);
      xs = std::move(x2);
    }
    o << "<h3>KPIs against " << html_escape(var.column->name) << "</h3>";
    if (values.size() > (numeric ? kMaxNumbersDrawn : kMaxCategoriesDrawn)) {
      o << "<p class=\"note\">" << thousands(static_cast<std::int64_t>(values.size()))
        << " values: more than a chart shows one point each for (" << (numeric ? kMaxNumbersDrawn : kMaxCategoriesDrawn)
        << (numeric ? " numbers" : " names") << "); the table of runs and <code>--csv</code> hold every run.</p>";
      continue;
    }
    // Lines: the combinations of the other keys, in order of first appearance. Rows with the same
    // ids in every other key share a line (a hash of those ids finds the candidates).
    std::vector<std::size_t> line_of(t.rows()), first_row;  // first_row: each line's first run
    {
      std::unordered_multimap<std::uint64_t, std::size_t> by_hash;
      for (std::size_t r = 0; r < t.rows(); ++r) {
        std::uint64_t h = 0x9e3779b97f4a7c15ULL;
        for (std::size_t other = 0; other < vars.size(); ++other)
          if (other != vk) h = (h ^ vars[other].ids[r]) * 0x100000001b3ULL + (h >> 29);
        auto [lo, hi] = by_hash.equal_range(h);
        std::size_t line = first_row.size();
        for (; lo != hi; ++lo) {
          const std::size_t f = first_row[lo->second];
          bool same = true;
          for (std::size_t other = 0; other < vars.size() && same; ++other)
            same = other == vk || vars[other].ids[f] == vars[other].ids[r];
          if (same) {
            line = lo->second;
            break;
          }
        }
        if (line == first_row.size()) {
          first_row.push_back(r);
          by_hash.emplace(h, line);
        }
        line_of[r] = line;
      }
    }
    const bool too_many = first_row.size() > kMaxSeries;
    const std::size_t lines = std::min(first_row.size(), kMaxSeries);
    std::vector<std::string> line_name(lines);
    for (std::size_t l = 0; l < lines; ++l) {
      std::string key;
      for (std::size_t other = 0; other < vars.size(); ++other)
        if (other != vk) {
          const std::string& name = vars[other].column->name;
          key += (key.empty() ? "" : ", ") + name.substr(name.rfind('.') + 1) + "=" +
                 vars[other].column->strings[first_row[l]];
        }
      line_name[l] = key.empty() ? "all runs" : key;
    }
    o << "<div class=\"grid\">";
    for (const auto& k : kpis) {
      const Column* kc = col(k.column);
      if (kc == nullptr || kc->text) continue;
      // Sums per (line, value), the runs added in row order.
      std::vector<double> sum(lines * values.size(), 0.0);
      std::vector<int> n(lines * values.size(), 0);
      for (std::size_t r = 0; r < t.rows(); ++r) {
        if (line_of[r] >= lines || !done[r] || !std::isfinite(kc->numbers[r])) continue;
        const std::size_t cell = line_of[r] * values.size() + at[var.ids[r]];
        sum[cell] += kc->numbers[r];
        ++n[cell];
      }
      std::vector<Series> series;
      for (std::size_t l = 0; l < lines; ++l) {
        Series s{line_name[l], {}, {}};
        for (std::size_t vi = 0; vi < values.size(); ++vi) {
          const std::size_t cell = l * values.size() + vi;
          s.x.push_back(numeric ? xs[vi] : static_cast<double>(vi));
          double y = n[cell] > 0 ? sum[cell] / n[cell] : kNaN;
          if (k.kind == 0 && std::isfinite(y)) y /= 3600.0;
          s.y.push_back(y);
        }
        series.push_back(std::move(s));
      }
      Chart c;
      c.width = 540;
      c.height = 270;
      c.title = k.label;
      c.x_label = var.column->name;
      c.y_label = k.unit;
      c.y_percent = k.kind == 1;
      c.markers = values.size() <= kMarkersUpTo;
      if (!numeric) c.categories = values;
      if (numeric && values.size() <= 12) {  // ticks at the values swept (768, 1024, 1280), not at round numbers
        c.x_ticks = xs;
        c.x_tick_labels = values;
      }
      if (k.kind == 1 || std::string(k.column) == "jain_index") c.y_max = 1.0;
      o << "<div>" << svg_chart(c, series) << "</div>";
    }
    o << "</div>";
    if (too_many)
      o << "<p class=\"note\">Only the first " << kMaxSeries << " combinations of the other keys are drawn.</p>";
    o << "<p class=\"note\">Each point: the mean over the seeds of the finished runs.</p>";
  }
  if (vars.size() > keys_drawn)
    o << "<p class=\"note\">" << vars.size() - keys_drawn << " more keys with several values are not drawn: "
      << "more keys than one sweep of at most " << thousands(kMaxSweepRuns) << " runs can vary.</p>";

  // The table of runs.
  o << "<h3>Runs</h3><div class=\"wide\"><table><tr><th>run</th>";
  for (const Column* v : all_vars) o << "<th>" << html_escape(v->name) << "</th>";
  o << "<th>seed</th><th>status</th>";
  for (const auto& k : kpis)
    if (col(k.column) != nullptr) o << "<th>" << html_escape(k.label) << "</th>";
  o << "</tr>";
  const Column* run = col("run");
  const Column* seed = col("seed");
  const std::size_t shown = std::min<std::size_t>(t.rows(), 500);
  for (std::size_t r = 0; r < shown; ++r) {
    o << "<tr><td>" << (run != nullptr && !run->text ? count(run->numbers[r]) : std::to_string(r)) << "</td>";
    for (const Column* v : all_vars) o << "<td>" << html_escape(v->strings[r]) << "</td>";
    o << "<td>" << (seed != nullptr && !seed->text ? count(seed->numbers[r]) : "") << "</td><td>"
      << (status != nullptr && status->text ? html_escape(status->strings[r]) : "") << "</td>";
    for (const auto& k : kpis) {
      const Column* kc = col(k.column);
      if (kc == nullptr) continue;
      o << "<td>" << (kc->text ? html_escape(kc->strings[r]) : show(kc->numbers[r], k.kind)) << "</td>";
    }
    o << "</tr>";
  }
  o << "</table></div>";
  if (t.rows() > shown) o << "<p class=\"note\">" << t.rows() - shown << " more runs not shown.</p>";
  return o.str();
}

}  // namespace

namespace {

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What tells the runs apart (issue #36): the scenario (drill) when they differ in it, the system
// when they differ in it, the file name when neither does (or both are the same for two runs).
std::vector<std::string> run_labels(const std::vector<const ReportInput*>& runs) {
  const auto varies = [&](auto get) {
    return std::any_of(runs.begin(), runs.end(), [&](const ReportInput* r) { return get(*r) != get(*runs.front()); });
  };
  const bool scenario = varies([](const ReportInput& r) { return r.run.scenario_name; });
  const bool policy = varies([](const ReportInput& r) { return r.run.policy; });
  std::vector<std::string> out;
  for (const auto* r : runs) {
    std::string l;
    if (scenario) l = r->run.scenario_name;
    if (policy) l += (l.empty() ? "" : " \u00b7 ") + r->run.policy;
    out.push_back(l);
  }
  std::vector<bool> twin(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    twin[i] = out[i].empty() || std::count(out.begin(), out.end(), out[i]) > 1;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (twin[i]) out[i] += (out[i].empty() ? "" : " \u00b7 ") + base_name(runs[i]->file);
  return out;
}

}  // namespace

// The scorecard of a bake-off's kept runs: one row per (drill, target), one column per run of
// that drill, each cell the verdict and its why-line. Empty when no run has verdicts.
template <class Label>
std::string verdicts_side_by_side(const std::vector<const ReportInput*>& runs, Label&& label) {
  std::vector<std::string> drills;
  for (const auto* in : runs)
    if (!in->run.scorecard.empty() && std::find(drills.begin(), drills.end(), in->run.scenario_name) == drills.end())
      drills.push_back(in->run.scenario_name);
  if (drills.empty()) return {};
  std::ostringstream o;
  o << "<h3>Scorecard side by side</h3><p class=\"note\">Each drill's acceptance targets under each system, "
       "as headroom compare scored them: passed, FAILED, not covered, or integration needed (a variant with a real "
       "add-on passes it), each with why.</p>";
  for (const std::string& drill : drills) {
    std::vector<const ReportInput*> cols;
    std::vector<std::string> targets;
    for (const auto* in : runs) {
      if (in->run.scenario_name != drill || in->run.scorecard.empty()) continue;
      cols.push_back(in);
      for (const VerdictLine& v : in->run.scorecard)
        if (std::find(targets.begin(), targets.end(), v.target) == targets.end()) targets.push_back(v.target);
    }
    o << "<div class=\"wide\"><table class=\"cols verdicts\"><tr><th>" << html_escape(drill) << "</th>";
    for (const auto* in : cols) o << "<th>" << html_escape(label(*in)) << "</th>";
    o << "</tr>";
    for (const std::string& t : targets) {
      o << "<tr><td>" << html_escape(t) << "</td>";
      for (const auto* in : cols) {
        const VerdictLine* hit = nullptr;
        for (const VerdictLine& v : in->run.scorecard)
          if (v.target == t) hit = &v;
        if (hit == nullptr) {
          o << "<td>-</td>";
          continue;
        }
        o << "<td><b>" << html_escape(hit->verdict) << "</b><br><span class=\"note\">" << html_escape(hit->why)
          << "</span></td>";
      }
      o << "</tr>";
    }
    o << "</table></div>\n";
  }
  return o.str();
}

// Several runs (a bake-off's --keep-runs files): wait CDFs, utilization and pending GPUs overlaid,
// one series per run, and the drills side by side.
static std::string runs_overlay(const std::vector<const ReportInput*>& runs) {
  std::ostringstream o;
  const std::vector<std::string> labels = run_labels(runs);
  std::map<const ReportInput*, std::string> label_of;
  for (std::size_t i = 0; i < runs.size(); ++i) label_of[runs[i]] = labels[i];
  auto label = [&](const ReportInput& in) { return label_of[&in]; };
  Tick span = 0;
  for (const auto* in : runs) span = std::max(span, in->run.sim_end - in->run.sim_start);
  const TimeAxis axis = time_axis(span);
  // Calendar time when the runs replay one trace with a start date (the first run's, then).
  const RunResult& first = runs.front()->run;
  bool same_start = first.unix_start >= 0;
  for (const auto* in : runs)
    same_start = same_start && in->run.unix_start == first.unix_start && in->run.sim_start == first.sim_start;
  const std::int64_t calendar_ms = same_start ? first.unix_start * 1000 + first.sim_start : -1;
  const std::string x_label = calendar_ms >= 0 ? std::string("date (UTC)") : axis.unit + " since the first submit";
  // Every run's node outages (the failure drill's under each system), shaded once.
  std::vector<Chart::Band> bands;
  for (const auto* in : runs)
    for (Chart::Band& b : outage_bands(outage_spans(in->run), in->run.sim_start, axis.divisor))
      if (std::none_of(bands.begin(), bands.end(), [&](const Chart::Band& o) {
            return o.label == b.label && std::fabs(o.x0 - b.x0) < 1e-9 && std::fabs(o.x1 - b.x1) < 1e-9;
          })) {
        b.tip = label(*in) + ": " + b.tip;
        bands.push_back(std::move(b));
      }
  const auto timed = [&](Chart& c) {
    c.calendar_ms = calendar_ms;
    c.x_unit_ms = axis.divisor;
    c.bands = bands;
  };
  // Wait CDF over every job not rejected; a job that never started counts until the end of its run.
  std::vector<Series> cdfs;
  for (const auto* in : runs) {
    const RunResult& r = in->run;
    std::vector<double> w;
    for (const auto& j : r.jobs) {
      if (j.state == static_cast<std::uint8_t>(models::JobState::Rejected)) continue;
      const Tick until = j.start >= 0 ? j.start : (j.end >= 0 ? j.end : r.sim_end);
      w.push_back(sim::to_seconds(std::max<Tick>(0, until - j.submit)) / 3600.0);
    }
    if (w.empty()) continue;
    cdfs.push_back(cdf_series(label(*in), w));
  }
  if (!cdfs.empty()) {
    Chart c;
    c.title = "Wait CDF per run (jobs that never started count until the end of the run)";
    c.x_label = "wait (hours)";
    c.y_label = "fraction of jobs not rejected";
    c.y_percent = true;
    c.y_max = 1.0;
    o << "<h3>Waits side by side</h3>" << svg_chart(c, cdfs);
  }
  // Utilization and pending GPUs over time.
  std::vector<Series> used, pending;
  for (const auto* in : runs) {
    const RunResult& r = in->run;
    const auto& ts = r.timeseries;
    const std::size_t S = ts.time.size(), P = r.pools.size(), T = r.tenants.size();
    if (S == 0 || r.total_gpus <= 0) continue;
    Series u{label(*in), {}, {}}, q{label(*in), {}, {}};
    for (std::size_t i = 0; i < S; ++i) {
      const double x = static_cast<double>(ts.time[i] - r.sim_start) / axis.divisor;
      if (ts.pool_used_gpus.size() == S * P) {
        double sum = 0;
        for (std::size_t p = 0; p < P; ++p) sum += ts.pool_used_gpus[i * P + p];
        u.x.push_back(x);
        u.y.push_back(sum / static_cast<double>(r.total_gpus));
      }
      if (T > 0 && ts.tenant_pending_gpus.size() == S * T) {
        double sum = 0;
        for (std::size_t t = 0; t < T; ++t) sum += ts.tenant_pending_gpus[i * T + t];
        q.x.push_back(x);
        q.y.push_back(sum);
      }
    }
    if (!u.x.empty()) used.push_back(std::move(u));
    if (!q.x.empty()) pending.push_back(std::move(q));
  }
  if (!used.empty()) {
    Chart c;
    c.title = "GPU utilization over time per run";
    c.x_label = x_label;
    timed(c);
    c.y_label = "GPUs in use / GPUs";
    c.y_percent = true;
    c.y_max = 1.0;
    o << "<h3>Utilization side by side</h3>" << svg_chart(c, used);
  }
  if (!pending.empty()) {
    Chart c;
    c.title = "GPUs asked for by pending jobs, per run";
    c.x_label = x_label;
    timed(c);
    c.y_label = "pending GPUs";
    o << "<h3>Pending side by side</h3>" << svg_chart(c, pending);
  }
  // The drills: outages and their recovery, jobs killed, work lost, denied submissions.
  o << "<h3>Drills side by side</h3><div class=\"wide\"><table class=\"cols\"><tr><th>run</th><th>node "
       "outages</th><th>jobs killed</th>"
       "<th>retries</th><th>failed after retries</th><th>work lost to failures (GPU-h)</th>"
       "<th>scripted outages recovered</th><th>worst recovery</th><th>denied submissions</th>"
       "<th>never started</th></tr>";
  for (const auto* in : runs) {
    const Summary& sm = in->summary;
    const auto& f = sm.failures;
    o << "<tr><td>" << html_escape(label(*in)) << "</td><td>" << thousands(f.node_outages) << "</td><td>"
      << thousands(f.jobs_killed) << "</td><td>" << thousands(f.job_retries) << "</td><td>" << thousands(f.jobs_failed)
      << "</td><td>" << grouped(f.lost_gpu_hours, 1) << "</td><td>" << f.drills_recovered << " of "
      << f.drill_recovery_s.size() << "</td><td>"
      << (f.worst_recovery_s >= 0 ? html_escape(duration(f.worst_recovery_s)) : std::string("-")) << "</td><td>"
      << thousands(sm.denied) << "</td><td>" << thousands(sm.never_started) << "</td></tr>";
  }
  o << "</table></div>\n";
  o << verdicts_side_by_side(runs, label);
  return o.str();
}

std::string render_report(const std::vector<ReportInput>& inputs) {
  std::ostringstream o;
  std::string title = "headroom report";
  if (inputs.size() == 1)
    title +=
        ": " + (inputs[0].sweep ? inputs[0].file
                                : (inputs[0].run.scenario_name.empty() ? inputs[0].file : inputs[0].run.scenario_name));
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html_escape(title)
    << "</title><style>" << kStyle << "</style></head><body>\n";
  o << "<h1>" << html_escape(title) << "</h1>\n";
  std::vector<const ReportInput*> runs;
  for (const auto& in : inputs)
    if (!in.sweep) runs.push_back(&in);
  if (runs.size() > 1) {
    // One table per scenario (the drills of a bake-off: its systems side by side), at most
    // kColumns runs a table, headed by what tells the runs apart; the file is the header's hover
    // text. The page never scrolls sideways (issue #36: 20 columns of file paths ran off it).
    constexpr std::size_t kColumns = 6;
    const std::vector<std::string> labels = run_labels(runs);
    std::vector<std::string> groups;
    for (const auto* r : runs)
      if (std::find(groups.begin(), groups.end(), r->run.scenario_name) == groups.end())
        groups.push_back(r->run.scenario_name);
    const bool by_scenario = groups.size() > 1;
    if (!by_scenario) groups.assign(1, std::string());
    o << "<h2>Runs side by side</h2>";
    for (const std::string& g : groups) {
      std::vector<std::size_t> members;
      for (std::size_t i = 0; i < runs.size(); ++i)
        if (!by_scenario || runs[i]->run.scenario_name == g) members.push_back(i);
      // Each member's KPI rows, once; a row that reads the same under every run of the group (not
      // only one table's columns) does not tell them apart: greyed, as compare names them.
      std::vector<std::vector<Row>> group_rows;
      for (const std::size_t i : members) group_rows.push_back(kpi_rows(runs[i]->summary, runs[i]->fairness));
      auto same = [&](std::size_t k) {
        if (group_rows.size() < 2) return false;
        for (const auto& rows : group_rows)
          if (k >= rows.size() || rows[k].value != group_rows.front()[k].value) return false;
        return true;
      };
      for (std::size_t from = 0; from < members.size(); from += kColumns) {
        if (by_scenario && from == 0) o << "<h3>" << html_escape(g.empty() ? "(no scenario name)" : g) << "</h3>";
        const std::size_t to = std::min(members.size(), from + kColumns);
        o << "<div class=\"wide\"><table class=\"side\"><tr><th>KPI</th>";
        for (std::size_t m = from; m < to; ++m) {
          const std::size_t i = members[m];
          std::string head = labels[i];
          if (by_scenario && head.rfind(g + " \u00b7 ", 0) == 0)
            head = head.substr(g.size() + std::string(" \u00b7 ").size());
          o << "<th title=\"" << html_escape(runs[i]->file) << "\">" << html_escape(head) << "</th>";
        }
        o << "</tr>";
        const std::vector<Row>& rows0 = group_rows[from];
        for (std::size_t k = 0; k < rows0.size(); ++k) {
          o << (same(k) ? "<tr class=\"same\" title=\"the same under every run: does not tell them apart\">" : "<tr>")
            << "<td>" << html_escape(rows0[k].label) << "</td>";
          for (std::size_t m = from; m < to; ++m) {
            const std::vector<Row>& rows = group_rows[m];
            o << "<td>" << (k < rows.size() ? html_escape(rows[k].value) : "") << "</td>";
          }
          o << "</tr>";
        }
        o << "</table></div>\n";
      }
    }
    o << "<p class=\"note\">Grey rows read the same under every run of their table: they do not tell the runs "
         "apart (docs/drills.md says why for the bundled drills).</p>\n";
    o << runs_overlay(runs);
  }
  for (const auto& in : inputs)
    o << (in.sweep ? sweep_section(in) : run_section(in) + fidelity_section(in.run)) << "\n";
  o << "<p class=\"note\">Definitions: wait = start - submit over every job not rejected, a job that never started "
       "counted until the end of the run (so the waits are lower bounds, marked &gt;=, when any never started); JCT = "
       "end - submit over completed "
       "jobs; share = GPU-time held / (GPUs x span); entitlement = weight-proportional share of the cluster; Jain's "
       "index over share / entitlement; rho = JCT / (run time alone on 1/N of the cluster), Themis (NSDI'20). "
       "See docs/planner.md.</p>\n";
  o << "</body></html>\n";
  return o.str();
}

}  // namespace headroom::results
