#include "traces/import.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/line_reader.hpp"

namespace headroom::traces {

namespace {

bool ends_with_nocase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                    [](char lower, char c) { return std::tolower(static_cast<unsigned char>(c)) == lower; });
}

std::optional<Format> format_from_name(std::string_view path) {
  if (ends_with_nocase(path, ".swf") || ends_with_nocase(path, ".swf.gz")) return Format::Swf;
  if (ends_with_nocase(path, ".csv") || ends_with_nocase(path, ".csv.gz")) return Format::Csv;
  return std::nullopt;
}

bool is_blank_line(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  if (name == "auto") return Format::Auto;
  if (name == "swf") return Format::Swf;
  if (name == "csv") return Format::Csv;
  return std::nullopt;
}

std::string_view to_string(Format f) {
  switch (f) {
    case Format::Auto: return "auto";
    case Format::Swf: return "swf";
    case Format::Csv: return "csv";
  }
  return "?";
}

Format detect_format(const std::string& path) {
  if (auto f = format_from_name(path)) return *f;
  detail::LineReader in(path);
  constexpr const char* kHint = "; set `format:` to swf or csv";
  std::string_view line;
  bool found = false;
  while (in.next_line(line)) {
    if (!is_blank_line(line)) {
      found = true;
      break;
    }
  }
  if (!found)
    throw sim::InputError(path, 0, 0, "", std::string("could not detect the trace format of an empty file") + kHint);
  const std::size_t first = line.find_first_not_of(" \t");
  if (line[first] == ';' || detail::looks_like_swf_job(line)) return Format::Swf;
  if (detail::looks_like_csv_header(line)) return Format::Csv;
  throw sim::InputError(path, in.line_number(), 0, "",
                        std::string("could not detect the trace format: the first line is neither SWF (a ';' comment "
                                    "or 18 numeric fields) nor a CSV header with a \"submit\" column") +
                            kHint);
}

models::Workload import_trace(const std::string& path, const ImportOptions& options) {
  if (options.units_per_gpu < 1)
    throw sim::InputError(path, 0, 0, "units_per_gpu",
                          "must be at least 1, got " + std::to_string(options.units_per_gpu));
  const Format format = options.format == Format::Auto ? detect_format(path) : options.format;
  detail::LineReader in(path);
  models::Workload w = format == Format::Swf ? detail::import_swf(in, options) : detail::import_csv(in);
  w.meta.path = path;
  if (w.jobs.empty()) {
    std::string msg = "no jobs in trace";
    if (w.meta.skipped > 0)
      msg += " (all " + std::to_string(w.meta.skipped) + " rows skipped; " + w.meta.warnings.front() + ")";
    throw sim::InputError(path, 0, 0, "", msg);
  }
  const auto by_submit = [](const models::Job& a, const models::Job& b) { return a.submit < b.submit; };
  if (!std::is_sorted(w.jobs.begin(), w.jobs.end(), by_submit))
    std::stable_sort(w.jobs.begin(), w.jobs.end(), by_submit);
  return w;
}

}  // namespace headroom::traces
