#include "sim/event_queue.hpp"

#include <algorithm>

#include "sim/errors.hpp"

namespace headroom::sim {

EventId EventQueue::push(Tick time, EventClass cls, std::uint64_t payload) {
  const EventId id = next_seq_++;
  HEADROOM_ASSERT(id <= kSeqMask, "event sequence numbers exhausted");
  if ((id >> 6) >= done_.size()) done_.push_back(0);
  const Entry e{time, (static_cast<std::uint64_t>(cls) << 56) | id, payload};
  ++live_;
  if (time != now_time_) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    return id;
  }
  // The sequence number is the largest so far, so the entry goes after every one of its class or
  // a lower one: scan back only over the (few) entries of higher classes.
  now_.push_back(e);
  for (std::size_t i = now_.size() - 1; i > now_head_ && now_[i - 1].key > e.key; --i) std::swap(now_[i - 1], now_[i]);
  return id;
}

bool EventQueue::cancel(EventId id) {
  if (id >= next_seq_ || is_done(id)) return false;
  mark_done(id);
  --live_;
  ++cancelled_;
  return true;
}

void EventQueue::drop_cancelled_fronts() {
  while (cancelled_ > 0 && !heap_.empty() && is_done(heap_.front().key & kSeqMask)) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    --cancelled_;
  }
  while (cancelled_ > 0 && now_head_ < now_.size() && is_done(now_[now_head_].key & kSeqMask)) {
    ++now_head_;
    --cancelled_;
  }
  if (now_head_ == now_.size()) {
    now_.clear();
    now_head_ = 0;
  }
}

// The clock moved: the list's events (all at the old now_time_) go back into the heap. Only an
// event pushed before now_time_ (which the engine refuses) can move the clock backwards while
// the list still holds events; moving forwards, the list is empty.
void EventQueue::flush_now_list() {
  for (std::size_t i = now_head_; i < now_.size(); ++i) {
    heap_.push_back(now_[i]);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  now_.clear();
  now_head_ = 0;
}

Event EventQueue::pop() {
  drop_cancelled();
  HEADROOM_ASSERT(!heap_.empty() || now_head_ < now_.size(), "pop from an empty event queue");
  Entry e;
  if (now_head_ < now_.size() && (heap_.empty() || !later(now_[now_head_], heap_.front()))) {
    e = now_[now_head_++];
    if (now_head_ == now_.size()) {
      now_.clear();
      now_head_ = 0;
    }
  } else {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    e = heap_.back();
    heap_.pop_back();
    if (e.time != now_time_) {
      if (now_head_ < now_.size()) flush_now_list();
      now_time_ = e.time;
    }
  }
  const EventId id = e.key & kSeqMask;
  mark_done(id);
  --live_;
  return Event{e.time, static_cast<EventClass>(e.key >> 56), id, e.payload};
}

void EventQueue::reserve(std::size_t n) {
  heap_.reserve(n);
  done_.reserve(n / 64 + 1);
}

}  // namespace headroom::sim
