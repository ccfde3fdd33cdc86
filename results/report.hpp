#pragma once

// `headroom report`: one self-contained HTML page (inline CSS and SVG, no scripts, no external
// assets) for results files, for people who would rather look than read.
//
// - A run file (`headroom run -o`): KPI table, GPU utilization over time (all pools and each
//   pool), wait CDF per tenant (the 8 with the most GPU-hours), Jain's index over time, and the
//   fairness table per tenant (results/fairness.hpp).
// - A sweep file (`headroom sweep -o`, or `merge -o`): the runs table and, per swept key, the
//   KPIs (mean over seeds) against the key's values, one line per combination of the other keys.
// - Several run files: a KPI table with one column per run first.
#include <cstdint>
#include <string>
#include <vector>

#include "results/fairness.hpp"
#include "results/run_result.hpp"
#include "results/summary.hpp"
#include "results/table.hpp"

namespace headroom::results {

struct ReportInput {
  std::string file;  // as given, shown in headings
  bool sweep = false;
  RunResult run;  // when !sweep
  Summary summary;
  Fairness fairness;
  Table table;  // when sweep
};

// Reads a run file or a sweep table (told apart by the /runs group). Throws sim::InputError.
ReportInput load_report_input(const std::string& path);

std::string render_report(const std::vector<ReportInput>& inputs);

// Building blocks, exposed for tests.
struct Series {
  std::string name;
  std::vector<double> x, y;  // NaN in y breaks the line
};
struct Chart {
  std::string title, x_label, y_label;
  int width = 960, height = 300;
  bool y_percent = false;  // y in 0..1, labelled as %
  bool markers = false;    // a dot at every point
  // When set, x = 0..n-1 is labelled with these, and each series is drawn as dots (offset a
  // little per series), not joined by lines: the values are categories, not numbers.
  std::vector<std::string> categories;
  // Ticks at exactly these x values (e.g. the values a sweep swept), labelled with x_tick_labels
  // when given; empty: "nice" ticks.
  std::vector<double> x_ticks;
  std::vector<std::string> x_tick_labels;
  // Calendar time: x is in units of x_unit_ms since calendar_ms (ms since the Unix epoch, UTC);
  // ticks fall on UTC midnights (or whole hours) and read as dates. -1: plain numbers.
  std::int64_t calendar_ms = -1;
  double x_unit_ms = 0;
  double y_min = 0;
  double y_max = -1;  // -1: from the data
  // Spans marked on the plot (node outages, maintenance drains, failures), at least 3 px wide: a
  // strip along its top, the plot shaded too when `full`; each label once in the legend; `tip` is
  // the span's hover text.
  struct Band {
    double x0 = 0, x1 = 0;
    std::string colour, label, tip;
    bool full = true;  // shade the plot's height; false: only a strip along its top
    int row = 0;       // the strip's row (one a kind)
  };
  std::vector<Band> bands;
  // Horizontal reference lines (the cluster's size), drawn dashed and named in the legend.
  struct Level {
    double y = 0;
    std::string label;
  };
  std::vector<Level> levels;
};
std::string svg_chart(const Chart& chart, const std::vector<Series>& series);
// The colour of series k: 21 colours at least 49 apart in RGB (Okabe-Ito first), then hues a
// golden angle apart; the same run keeps its colour in every chart.
std::string series_colour(std::size_t k);
// Node outages from the audit log, overlapping ones of a kind merged: what the charts shade.
struct OutageSpan {
  int kind = 0;  // 0 scripted outage, 1 maintenance drain, 2 node failure
  Tick start = 0, end = 0;
  std::int64_t nodes = 0;
  std::string what;  // the outage's reason ("site power loss")
};
std::vector<OutageSpan> outage_spans(const RunResult& r);
// Bands for `spans` on a time axis of x = (t - origin) / unit_ms.
std::vector<Chart::Band> outage_bands(const std::vector<OutageSpan>& spans, Tick origin, double unit_ms);
// "Nice" tick positions (1, 2, 2.5, 5 x 10^k steps) covering [lo, hi], about `count` of them.
std::vector<double> nice_ticks(double lo, double hi, int count);
std::string html_escape(const std::string& text);

}  // namespace headroom::results
