#pragma once

#include <cstdint>
#include <memory>

#include "policies/api.hpp"

namespace headroom::policies {

// Strict head-of-line queue policies of the Helios simulator (framework/QSSF Service,
// policies/fifo.py and sjf.py): each pass sorts the pending jobs by a key and starts them in
// that order until the first one that does not fit; nothing behind it may start (no backfill).
// fifo orders by submit time, sjf by recorded run time; ties keep arrival order (Python's
// stable sort in Helios). A job that could never fit on the empty cluster is rejected rather
// than blocking the queue forever.
enum class QueueKey { Submit, Runtime };

std::unique_ptr<Policy> make_queue_policy(QueueKey key);

}  // namespace headroom::policies
