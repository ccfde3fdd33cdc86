#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace headroom::sim {

// Event classes order events that share a time stamp. Lower runs first: resources are released
// before new work arrives, and the scheduler sees both.
enum class EventClass : std::uint8_t {
  NodeChange = 10,  // failures, repairs, drains
  JobFinish = 20,   // a running job completes (or hits its limit)
  JobEvict = 25,    // a preempted job's grace period ends and it releases its resources
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
//
// Events pushed for the time of the last pop (a scheduling pass that the event being handled
// asks for, the next job arriving in the same second) skip the heap: they wait in a short list
// sorted by (class, sequence), and pop takes the smaller of its front and the heap's top. The
// order is the same total order; only the cost differs (such an event would otherwise sift
// through the whole heap twice, in and out).
class EventQueue {
 public:
  EventId push(Tick time, EventClass cls, std::uint64_t payload = 0);
  // Cancels a pending event; returns false if it already ran, was cancelled, or never existed.
  bool cancel(EventId id);
  bool empty() {
    drop_cancelled();
    return heap_.empty() && now_head_ == now_.size();
  }
  // Removes and returns the next live event. Precondition: !empty().
  Event pop();
  // Time of the next live event, or kNever.
  Tick next_time() {
    drop_cancelled();
    const Tick heap_time = heap_.empty() ? kNever : heap_.front().time;
    return now_head_ < now_.size() ? std::min(heap_time, now_time_) : heap_time;
  }
  std::size_t live_size() const { return live_; }
  void reserve(std::size_t n);

 private:
  // Heap entries are 24 bytes: the class sits in the top byte of the order key, above the
  // sequence number, so one integer comparison breaks time ties.
  struct Entry {
    Tick time;
    std::uint64_t key;  // class << 56 | sequence
    std::uint64_t payload;
  };
  static constexpr std::uint64_t kSeqMask = (1ull << 56) - 1;
  static bool later(const Entry& a, const Entry& b) { return a.time != b.time ? a.time > b.time : a.key > b.key; }
  // The same order as a function object, which the std:: heap algorithms inline (through a
  // function pointer every comparison was an out-of-line call).
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const { return later(a, b); }
  };
  bool is_done(EventId id) const { return (done_[id >> 6] >> (id & 63)) & 1u; }
  void mark_done(EventId id) { done_[id >> 6] |= 1ull << (id & 63); }
  void drop_cancelled() {
    if (cancelled_ != 0) drop_cancelled_fronts();
  }
  void drop_cancelled_fronts();
  void flush_now_list();

  std::vector<Entry> heap_;
  // The list of events at now_time_: now_[now_head_..] in (class, sequence) order.
  std::vector<Entry> now_;
  std::size_t now_head_ = 0;
  Tick now_time_ = kNever;           // the time of the last pop (kNever before the first)
  std::vector<std::uint64_t> done_;  // one bit per sequence number: ran or cancelled
  EventId next_seq_ = 0;
  std::size_t live_ = 0;
  std::size_t cancelled_ = 0;  // cancelled entries still in the heap or the list
};

}  // namespace headroom::sim
