#pragma once
// SIGINT / SIGTERM while reading input: the CLI's signal handler sets stop_requested(), and the long
// import loops (trace lines, pod lists, YAML documents) call check_interrupt() between rows or
// nodes. sim::Interrupted then unwinds to main, which prints "interrupted: no output written" and
// exits 130 before anything has been written.

#include <atomic>
#include <stdexcept>

namespace headroom::sim {

// The process-wide stop flag (one instance: a function-local static of an inline function).
inline std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

// Not an InputError: --skip-bad-rows and the per-run error handlers must not take it for a bad row.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

inline void check_interrupt() {
  if (stop_requested().load(std::memory_order_relaxed)) throw Interrupted();
}

}  // namespace headroom::sim
