#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "models/workload.hpp"

namespace headroom::traces {

enum class Format { Auto, Swf, Csv };

std::optional<Format> parse_format(std::string_view name);  // "auto", "swf", "csv"
std::string_view to_string(Format f);

struct ImportOptions {
  Format format = Format::Auto;
  int units_per_gpu = 1;  // SWF: processors that make one GPU
};

// Reads a trace file (plain or gzip-compressed) into a job stream sorted by (submit, file order).
// Throws sim::InputError naming the file, the line (row) and the field on malformed input.
models::Workload import_trace(const std::string& path, const ImportOptions& options = {});

// Detects the format from the file name and first lines. Throws sim::InputError when unsure.
Format detect_format(const std::string& path);

}  // namespace headroom::traces
