#pragma once

#include <atomic>
#include <cstdint>

#include "sim/event_queue.hpp"
#include "sim/fingerprint.hpp"

namespace headroom::sim {

class Engine;

// A model plugged into the engine: it receives each event in (time, class, sequence) order and
// may schedule or cancel further events through the engine.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(const Event& event, Engine& engine) = 0;
};

// The event loop. Owns the queue, the clock and the fingerprint of the processed events.
class Engine {
 public:
  Tick now() const { return now_; }
  EventId schedule(Tick time, EventClass cls, std::uint64_t payload = 0);
  bool cancel(EventId id) { return queue_.cancel(id); }
  // Folds a decision (beyond the event itself) into the run fingerprint.
  void record(std::uint64_t word) { fingerprint_.add(word); }

  // Processes events until the queue is empty or the next event is after `horizon`. Returns the
  // number of events processed. `stop` (optional) is polled between events for cancellation.
  std::uint64_t run(EventHandler& handler, Tick horizon = kNever, const std::atomic<bool>* stop = nullptr);

  // Ends run() after the event being handled (the handler's own stop: a livelock it detected).
  void halt() { halted_ = true; }

  const Fingerprint& fingerprint() const { return fingerprint_; }
  EventQueue& queue() { return queue_; }
  std::uint64_t processed() const { return processed_; }

 private:
  EventQueue queue_;
  Tick now_ = 0;
  Fingerprint fingerprint_;
  std::uint64_t processed_ = 0;
  bool halted_ = false;
};

}  // namespace headroom::sim
