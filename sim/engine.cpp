#include "sim/engine.hpp"

#include <string>

#include "sim/errors.hpp"

namespace headroom::sim {

EventId Engine::schedule(Tick time, EventClass cls, std::uint64_t payload) {
  HEADROOM_ASSERT(time >= now_,
                  "event scheduled in the past at " + std::to_string(time) + " (now " + std::to_string(now_) + ")");
  return queue_.push(time, cls, payload);
}

std::uint64_t Engine::run(EventHandler& handler, Tick horizon, const std::atomic<bool>* stop) {
  std::uint64_t n = 0;
  while (!queue_.empty() && !halted_) {
    if (queue_.next_time() > horizon) break;
    if (stop != nullptr && (n & 1023) == 0 && stop->load(std::memory_order_relaxed)) break;
    Event e = queue_.pop();
    now_ = e.time;
    fingerprint_.add(static_cast<std::uint64_t>(e.time));
    fingerprint_.add((static_cast<std::uint64_t>(e.cls) << 56) ^ e.payload);
    handler.handle(e, *this);
    ++n;
  }
  processed_ += n;
  return n;
}

}  // namespace headroom::sim
