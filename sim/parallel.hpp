#pragma once

// TBB fan-outs used across headroom: the only way its parts run work in parallel. Each is a
// plain tbb::parallel_for; under ThreadSanitizer (scripts/test --tsan) it also tells TSan about
// the hand-offs at the start and the join, which TBB's own, uninstrumented, synchronisation hides
// (Debian's oneTBB is not built with TSan): without them every read of the caller's data in a
// worker and every later write by the caller is reported as a race.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>

#if defined(__SANITIZE_THREAD__)
#define HEADROOM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HEADROOM_TSAN 1
#endif
#endif

#ifdef HEADROOM_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace headroom::sim {

namespace detail {
inline void fan_out_begin(void* token) {
#ifdef HEADROOM_TSAN
  __tsan_release(token);
#else
  (void)token;
#endif
}
inline void fan_out_acquire(void* token) {
#ifdef HEADROOM_TSAN
  __tsan_acquire(token);
#else
  (void)token;
#endif
}
inline void fan_out_release(void* token) { fan_out_begin(token); }
}  // namespace detail

// f(lo, hi) for consecutive chunks of [0, n), at least `grain` indices each (0: TBB decides).
template <typename F>
void parallel_ranges(std::size_t n, std::size_t grain, F&& f) {
  char token = 0;
  detail::fan_out_begin(&token);
  auto body = [&](const tbb::blocked_range<std::size_t>& r) {
    detail::fan_out_acquire(&token);
    f(r.begin(), r.end());
    detail::fan_out_release(&token);
  };
  if (grain > 0)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain), body);
  else
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), body);
  detail::fan_out_acquire(&token);
}

// f(i) for every i in [0, n), one index per task.
template <typename F>
void parallel_indices(std::size_t n, F&& f) {
  parallel_ranges(n, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) f(i);
  });
}

}  // namespace headroom::sim
