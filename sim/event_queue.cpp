#include "sim/event_queue.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace headroom::sim {

EventId EventQueue::push(Tick time, EventClass cls, std::uint64_t payload) {
  const EventId id = next_seq_++;
  HEADROOM_ASSERT(id <= kSeqMask, "event sequence numbers exhausted");
  if ((id >> 6) >= done_.size()) done_.push_back(0);
  heap_.push_back(Entry{time, (static_cast<std::uint64_t>(cls) << 56) | id, payload});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  ++live_;
  return id;
}

bool EventQueue::cancel(EventId id) {
  if (id >= next_seq_ || is_done(id)) return false;
  mark_done(id);
  --live_;
  ++cancelled_in_heap_;
  return true;
}

void EventQueue::drop_cancelled_top() {
  while (cancelled_in_heap_ > 0 && !heap_.empty() && is_done(heap_.front().key & kSeqMask)) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    --cancelled_in_heap_;
  }
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_.empty();
}

Event EventQueue::pop() {
  drop_cancelled_top();
  HEADROOM_ASSERT(!heap_.empty(), "pop from an empty event queue");
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  const Entry e = heap_.back();
  heap_.pop_back();
  const EventId id = e.key & kSeqMask;
  mark_done(id);
  --live_;
  return Event{e.time, static_cast<EventClass>(e.key >> 56), id, e.payload};
}

Tick EventQueue::next_time() {
  drop_cancelled_top();
  return heap_.empty() ? kNever : heap_.front().time;
}

void EventQueue::reserve(std::size_t n) {
  heap_.reserve(n);
  done_.reserve(n / 64 + 1);
}

}  // namespace headroom::sim
