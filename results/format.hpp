#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// How every human-facing number of headroom reads: the CLI summaries (run, sweep, plan, compare),
// the HTML report and the desktop app use these, so that a duration, a count or a cost looks the
// same wherever it is shown. Machine outputs (CSV, JSON) keep plain numbers.
namespace headroom::results {

// The one duration format: "0s", "4.2s", "42s", "12m 03s", "3h 07m", "2d 05h"; a leading "-" when
// negative; "never" when infinite (a time that was never reached: a killed job that did not run
// again), "-" when not a number or minus infinity (nothing to show).
std::string duration(double seconds);
// 13607 -> "13,607".
std::string thousands(std::int64_t n);
// A count of jobs: 1 -> "1 job", 13607 -> "13,607 jobs".
std::string jobs_count(std::int64_t n);
// A number with `decimals` digits after the point and thousands separators: 1686355.25, 1 ->
// "1,686,355.3"; "-" when not finite.
std::string grouped(double v, int decimals);
// A fraction as a percentage: 0.6471 -> "64.7%"; "-" when not finite.
std::string percent(double fraction, int decimals = 1);
// An amount of money: 3737088 "EUR" -> "3,737,088 EUR" (two decimals below 100: "2.50 EUR"); no
// currency: the amount alone.
std::string money(double amount, std::string_view currency);
// A value in one of the units of the comparison tables (planner::compare_table): "s" (a
// duration), "fraction" (a percentage), "count", "GPU-h", "GPUs", "replicas", "cost" or
// "cost:<currency>"; any other unit ("index", "ratio") gives three decimals. Not finite: "-",
// but "never" for an infinite duration, as duration() writes it.
std::string with_unit(double v, std::string_view unit);
// A point in calendar time, UTC: ms since the Unix epoch -> "2026-11-27 14:05" ("2026-11-27
// 14:05:09" with seconds).
std::string calendar(std::int64_t unix_ms, bool seconds = false);

}  // namespace headroom::results
