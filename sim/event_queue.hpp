#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace headroom::sim {

// Event classes order events that share a time stamp. Lower runs first: resources are released
// before new work arrives, and the scheduler sees both.
enum class EventClass : std::uint8_t {
  NodeChange = 10,  // failures, repairs, drains
  JobFinish = 20,   // a running job completes (or hits its limit)
  JobSubmit = 30,   // a job arrives
  Timer = 40,       // policy timers (backoff, periodic cycles)
  Schedule = 50,    // a scheduling pass
  Sample = 60,      // metric sampling, sees the state after scheduling
};

using EventId = std::uint64_t;  // the event's sequence number, unique per queue

struct Event {
  Tick time = 0;
  EventClass cls = EventClass::Timer;
  EventId seq = 0;
  std::uint64_t payload = 0;  // e.g. a job index
};

// Min-heap on (time, class, sequence): a total order, so equal-time events never depend on heap
// layout. Cancellation is lazy: cancelled entries are skipped when they reach the top.
class EventQueue {
 public:
  EventId push(Tick time, EventClass cls, std::uint64_t payload = 0);
  // Cancels a pending event; returns false if it already ran, was cancelled, or never existed.
  bool cancel(EventId id);
  bool empty();
  // Removes and returns the next live event. Precondition: !empty().
  Event pop();
  // Time of the next live event, or kNever.
  Tick next_time();
  std::size_t live_size() const { return live_; }
  void reserve(std::size_t n);

 private:
  static bool later(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time > b.time;
    if (a.cls != b.cls) return a.cls > b.cls;
    return a.seq > b.seq;
  }
  void drop_cancelled_top();

  std::vector<Event> heap_;
  // state_[seq]: 0 = pending, 1 = done or cancelled.
  std::vector<std::uint8_t> state_;
  std::size_t live_ = 0;
};

}  // namespace headroom::sim
