#include "traces/import.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "sim/errors.hpp"
#include "traces/fields.hpp"
#include "traces/line_reader.hpp"
#include "traces/table.hpp"

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

namespace {

struct FormatName {
  Format format;
  std::string_view name;
};

constexpr FormatName kFormatNames[] = {
    {Format::Auto, "auto"}, {Format::Swf, "swf"},       {Format::Csv, "csv"},       {Format::Openb, "openb"},
    {Format::Dlrm, "dlrm"}, {Format::Helios, "helios"}, {Format::Sacct, "sacct"},   {Format::Kubernetes, "kubernetes"},
    {Format::Acme, "acme"}, {Format::Pai, "pai"},       {Format::Philly, "philly"},
};

bool has_all(const std::vector<std::string>& cells, std::initializer_list<std::string_view> names) {
  return std::all_of(names.begin(), names.end(),
                     [&](std::string_view n) { return std::find(cells.begin(), cells.end(), n) != cells.end(); });
}

// The foreign layout a CSV header belongs to, if any.
std::optional<Format> format_from_header(const std::string& path, int line_number, std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  // The two JSON layouts: a Kubernetes object, a Philly array of jobs.
  if (first != std::string_view::npos && line[first] == '{') return Format::Kubernetes;
  if (first != std::string_view::npos && line[first] == '[') return Format::Philly;
  // `kubectl get pods -o yaml`: a List or a Pod, its first key apiVersion (or kind, or items).
  if (first != std::string_view::npos) {
    const std::string_view rest = line.substr(first);
    for (const std::string_view key : {"apiVersion:", "kind:", "items:", "---"})
      if (rest.substr(0, key.size()) == key) return Format::Kubernetes;
  }
  if (line.find('|') != std::string_view::npos) {
    // A sacct header (whatever its other columns: the import names the missing ones), or a
    // header-less sacct export whose first cell is a job id.
    for (std::string cell : detail::header_cells(line, '|')) {
      std::transform(cell.begin(), cell.end(), cell.begin(),
                     [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
      if (cell == "jobid" || cell == "jobidraw") return Format::Sacct;
    }
    const std::string_view first_cell = detail::trim(line.substr(0, line.find('|')));
    if (!first_cell.empty() && std::isdigit(static_cast<unsigned char>(first_cell.front())) &&
        first_cell.find_first_not_of("0123456789_+.[]-,:%") == std::string_view::npos &&
        std::count(line.begin(), line.end(), '|') >= 4)
      return Format::Sacct;
  }
  if (line.find(',') == std::string_view::npos) return std::nullopt;
  const std::vector<std::string> cells = detail::header_cells(line);
  if (has_all(cells, {"name", "num_gpu", "gpu_milli", "creation_time"})) return Format::Openb;
  if (has_all(cells, {"instance_sn", "role", "app_name"})) return Format::Dlrm;
  if (has_all(cells, {"user", "vc", "gpu_num", "submit_time"})) return Format::Helios;
  if (has_all(cells, {"job_id", "user", "node_num", "gpu_num", "type", "submit_time"})) return Format::Acme;
  // PAI 2020 job and task tables: a header row, or (as published) none.
  if (!detail::pai_table_kind(cells).empty()) return Format::Pai;
  if (has_all(cells, {"sn", "gpu", "model"}))
    throw sim::InputError(path, line_number, 0, "",
                          "this is a node list (a cluster, not a trace); turn it into a scenario's cluster with "
                          "`headroom import-cluster`");
  return std::nullopt;
}

}  // namespace

std::vector<std::string> split_fields(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = detail::trim(list.substr(0, comma));
    item = item.substr(0, item.find('%'));  // sacct's "jobname%30" width
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list = list.substr(comma + 1);
  }
  return out;
}

std::optional<Format> parse_format(std::string_view name) {
  for (const auto& f : kFormatNames)
    if (f.name == name) return f.format;
  return std::nullopt;
}

std::string_view to_string(Format f) {
  for (const auto& n : kFormatNames)
    if (n.format == f) return n.name;
  return "?";
}

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : kFormatNames) out.emplace_back(f.name);
    return out;
  }();
  return names;
}

namespace {

// The format of the file `in` reads, from its name (`by_name`) and its first lines; `in` is left
// somewhere after them.
Format detect_in(detail::LineReader& in, const std::optional<Format>& by_name) {
  const std::string& path = in.path();
  constexpr const char* kHint =
      "; set `format:` to swf or csv (or openb, dlrm, helios, sacct, kubernetes, acme, pai, philly)";
  std::string_view line;
  bool found = false;
  while (in.next_line(line)) {
    if (!is_blank_line(line)) {
      found = true;
      break;
    }
  }
  if (!found) {
    if (by_name) return *by_name;
    throw sim::InputError(path, 0, 0, "", std::string("could not detect the trace format of an empty file") + kHint);
  }
  if (auto f = format_from_header(path, in.line_number(), line)) return *f;
  if (by_name) return *by_name;
  const std::size_t first = line.find_first_not_of(" \t");
  if (line[first] == '#') {
    // YAML comments above a `kubectl ... -o yaml` pod list: the first line after them decides.
    const int first_line = in.line_number();
    std::string_view next;
    while (in.next_line(next)) {
      const std::size_t at = next.find_first_not_of(" \t\r");
      if (at == std::string_view::npos || next[at] == '#') continue;
      for (const std::string_view key : {"apiVersion:", "kind:", "items:", "---"})
        if (next.substr(at, key.size()) == key) return Format::Kubernetes;
      break;
    }
    throw sim::InputError(path, first_line, 0, "",
                          std::string("could not detect the trace format: the file starts with '#' comments that "
                                      "are not followed by a Kubernetes pod list in YAML") +
                              kHint);
  }
  if (line[first] == ';' || detail::looks_like_swf_job(line)) return Format::Swf;
  if (detail::looks_like_csv_header(line)) return Format::Csv;
  throw sim::InputError(path, in.line_number(), 0, "",
                        std::string("could not detect the trace format: the first line is neither SWF (a ';' comment "
                                    "or 18 numeric fields) nor a CSV header of a known layout") +
                            kHint);
}

}  // namespace

Format detect_format(const std::string& path) {
  const std::optional<Format> by_name = format_from_name(path);
  if (by_name == Format::Swf) return Format::Swf;
  std::optional<detail::LineReader> reader;
  if (by_name == Format::Csv) {
    // A CSV name still needs its header to tell the layouts apart; a file that cannot be opened
    // is reported by the import itself.
    try {
      reader.emplace(path);
    } catch (const sim::InputError&) {
      return Format::Csv;
    }
  } else {
    reader.emplace(path);
  }
  return detect_in(*reader, by_name);
}

models::Workload import_trace(const std::string& path, const ImportOptions& options) {
  if (options.units_per_gpu < 1)
    throw sim::InputError(path, 0, 0, "units_per_gpu",
                          "must be at least 1, got " + std::to_string(options.units_per_gpu));
  // One reader for the detection and the import: a pipe or /dev/stdin cannot be opened twice (a
  // second open reads on from where the detection stopped), so the import reads the lines the
  // detection read again from the reader's buffer.
  std::optional<detail::LineReader> reader;
  reader.emplace(path);
  Format format = options.format != Format::Auto ? options.format
                  : !options.fields.empty()      ? Format::Sacct
                                                 : Format::Auto;
  if (format == Format::Auto) {
    const std::optional<Format> by_name = format_from_name(path);
    format = by_name == Format::Swf ? Format::Swf : detect_in(*reader, by_name);
    detail::reread(reader, "the trace format", ": set `format:` (or --format) to " + std::string(to_string(format)));
  }
  if (!options.fields.empty() && format != Format::Sacct)
    throw sim::InputError(path, 0, 0, "fields",
                          "a field list names the columns of a header-less sacct export; the format here is " +
                              std::string(to_string(format)));
  detail::LineReader& in = *reader;
  models::Workload w;
  switch (format) {
    case Format::Auto:
    case Format::Swf: w = detail::import_swf(in, options); break;
    case Format::Csv: w = detail::import_csv(in, options); break;
    case Format::Openb: w = detail::import_openb(in, options); break;
    case Format::Dlrm: w = detail::import_dlrm(in, options); break;
    case Format::Helios: w = detail::import_helios(in, options); break;
    case Format::Sacct: w = detail::import_sacct(in, options); break;
    case Format::Kubernetes: w = detail::import_kubernetes(in, options); break;
    case Format::Acme: w = detail::import_acme(in, options); break;
    case Format::Pai: w = detail::import_pai(in, options); break;
    case Format::Philly: w = detail::import_philly(in, options); break;
  }
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
