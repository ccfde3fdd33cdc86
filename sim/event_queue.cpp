#include "sim/event_queue.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace headroom::sim {

EventId EventQueue::push(Tick time, EventClass cls, std::uint64_t payload) {
  EventId id = state_.size();
  state_.push_back(0);
  heap_.push_back(Event{time, cls, id, payload});
  std::push_heap(heap_.begin(), heap_.end(), later);
  ++live_;
  return id;
}

bool EventQueue::cancel(EventId id) {
  if (id >= state_.size() || state_[id] != 0) return false;
  state_[id] = 1;
  --live_;
  return true;
}

void EventQueue::drop_cancelled_top() {
  while (!heap_.empty() && state_[heap_.front().seq] != 0) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
}

bool EventQueue::empty() {
  drop_cancelled_top();
  return heap_.empty();
}

Event EventQueue::pop() {
  drop_cancelled_top();
  HEADROOM_ASSERT(!heap_.empty(), "pop from an empty event queue");
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event e = heap_.back();
  heap_.pop_back();
  state_[e.seq] = 1;
  --live_;
  return e;
}

Tick EventQueue::next_time() {
  drop_cancelled_top();
  return heap_.empty() ? kNever : heap_.front().time;
}

void EventQueue::reserve(std::size_t n) {
  heap_.reserve(n);
  state_.reserve(n);
}

}  // namespace headroom::sim
