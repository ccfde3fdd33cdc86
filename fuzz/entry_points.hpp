#pragma once

// The inputs the fuzz targets (fuzz/*.cpp) and the crasher regression test (tests/crashers_test.cpp)
// feed to headroom: each entry point must either accept its bytes or reject them with a
// sim::InputError (or InputErrors). Anything else (another exception, a crash, a sanitizer
// report, a hang) is a bug.
//
// The trace importers read files, so trace bytes go to an in-memory file (memfd) opened through
// /proc/self/fd, one per process, rewritten for each input: no disk traffic and no temp files.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "traces/import.hpp"

namespace headroom::fuzz {

// The path of this process's in-memory file, holding exactly `data`.
inline std::string memory_file(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("headroom-fuzz", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("memfd_create failed");
  if (::ftruncate(fd, 0) != 0) throw std::runtime_error("ftruncate failed");
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) throw std::runtime_error("pwrite failed");
    done += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

// Imports `data` as a trace in `format`. Returns true when it was accepted.
inline bool import_trace_bytes(const std::uint8_t* data, std::size_t size, traces::Format format) {
  const std::string path = memory_file(data, size);
  traces::ImportOptions options;
  options.format = format;
  // A few inputs also run with several processors per GPU (the rounding-up path of SWF).
  if (size > 0 && data[0] % 8 == 7) options.units_per_gpu = 1 + data[size - 1] % 16;
  try {
    const models::Workload w = traces::import_trace(path, options);
    return !w.jobs.empty();
  } catch (const sim::InputError&) {
    return false;
  } catch (const sim::InputErrors&) {
    return false;
  }
}

// Parses `data` as a scenario file. Returns true when it was accepted.
inline bool parse_scenario_bytes(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    scenarios::parse_scenario(text, "fuzz/scenario.yaml");
    return true;
  } catch (const sim::InputError&) {
    return false;
  } catch (const sim::InputErrors&) {
    return false;
  }
}

}  // namespace headroom::fuzz
