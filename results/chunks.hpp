#pragma once

// Internal to results/ (not included by public headers): the result file's columns and the
// filter pipeline of its chunks, shared by write_hdf5 and the Recorder.
//
// Large datasets are stored in chunks of whole rows of about kChunkBytes, each shuffled and
// deflated here as HDF5's own filters would (HDF5 decodes them on read). A chunk whose elements
// all equal the dataset's fill value is not written at all (HDF5 reads it as the fill value),
// except the first, so that no dataset has empty storage (h5diff refuses to compare those).
//
// ChunkCache filters chunks ahead of the write: the Recorder offers each chunk of an
// append-only column (the audit log, placements, samples, the trace's own job columns) as soon
// as its rows are complete, and the cache's own thread deflates it in place while the simulation
// goes on (a plain thread that sleeps when idle: it neither spins beside the simulation nor
// depends on which TBB arena offers or waits). write_hdf5 takes a cached chunk only when the
// dataset's elements still have the digest they had when it was filtered; the digest is a chain
// of bijections of each element, so a change to any one element always shows, and the cache
// makes a write faster, not different.

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "results/run_result.hpp"

namespace headroom::results::chunks {

constexpr std::size_t kChunkBytes = std::size_t{64} << 10;
constexpr int kDeflateLevel = 1;
// Filter mask bit for "deflate skipped" on a chunk (deflate is the second filter, after shuffle).
constexpr std::uint32_t kDeflateSkipped = 1u << 1;
// Not a filter mask: the chunk holds only the fill value and is not written.
constexpr std::uint32_t kChunkAbsent = ~0u;

// A fill value: elem_size bytes (at most 8) of one element.
using Fill = std::array<unsigned char, 8>;

// Rows of a full chunk of a dataset whose rows are `cols` elements of elem_size bytes. A dataset
// with fewer rows is one chunk of exactly its rows.
constexpr std::size_t full_chunk_rows(std::size_t elem_size, std::size_t cols) {
  const std::size_t per_chunk = kChunkBytes / elem_size;
  return per_chunk / cols > 0 ? per_chunk / cols : 1;
}

// `count` elements of elem_size bytes, element i at data + i * stride (a column of a row table
// when the stride is the row's size).
struct Elements {
  const unsigned char* data = nullptr;
  std::size_t stride = 0;
  std::size_t count = 0;
  std::size_t elem_size = 0;
  const unsigned char* at(std::size_t i) const { return data + i * stride; }
};

// The fill value of a dataset: its one value when every element is equal, else zero.
Fill constant_fill(const Elements& e);
// Whether every element equals `fill`.
bool all_equal(const Elements& e, const Fill& fill);
// The elements copied into one contiguous block.
std::vector<unsigned char> pack(const Elements& e);
// A 64-bit digest of the elements' values in order; differs whenever exactly one element does.
std::uint64_t digest(const Elements& e);

// One chunk after the filters: its bytes and HDF5 filter mask, or mask kChunkAbsent.
struct Filtered {
  std::vector<unsigned char> bytes;
  std::uint32_t mask = 0;
};

// The filtered form of a full chunk that repeats one element, made once per distinct (element
// size, value, chunk size) and shared by the datasets that have one.
class ConstantChunks {
 public:
  Filtered get(std::size_t elem_size, const Fill& fill, std::size_t chunk_bytes);

 private:
  std::mutex mutex_;
  std::map<std::tuple<std::size_t, Fill, std::size_t>, Filtered> made_;
};

// Filters one chunk of chunk_bytes bytes (the elements, padded with zeros): absent when every
// element equals the fill value and it is not the first chunk; shuffled and deflated otherwise
// (shuffled only when deflate does not make it smaller).
Filtered filter_chunk(const Elements& e, std::size_t chunk_bytes, const Fill& fill, bool first_chunk,
                      ConstantChunks& constants);

// Undoes HDF5's shuffle filter on `count` elements of elem_size bytes (for reading chunks back).
void unshuffle(const unsigned char* in, unsigned char* out, std::size_t elem_size, std::size_t count);

// Per-thread scratch space; grows, never shrinks.
unsigned char* scratch(std::vector<unsigned char>& buf, std::size_t size);

class ChunkCache {
 public:
  ChunkCache() = default;
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;
  ~ChunkCache();

  // Filters chunk `index` of dataset `where` on the cache's thread, reading `elements` in place:
  // the offerer keeps them where they are and unchanged until wait() returns. chunk_bytes is the
  // chunk's full size, fill the dataset's fill value as the offerer expects it. Thread-safe
  // against concurrent offers; not against find() before wait().
  void offer(const std::string& where, std::size_t index, const Elements& elements, std::size_t chunk_bytes,
             const Fill& fill);
  // Waits for every offered chunk.
  void wait();
  // After wait(): the filtered chunk if it was offered with this geometry and fill and e has the
  // digest its elements had then, else null. Counts the chunks it hands out.
  const Filtered* find(const std::string& where, std::size_t index, std::size_t chunk_bytes, const Fill& fill,
                       const Elements& e) const;
  std::size_t offered() const;
  std::size_t used() const { return used_.load(); }

 private:
  struct Entry {
    Elements source;
    std::size_t chunk_bytes = 0;
    Fill fill{};
    Filtered filtered;
    std::uint64_t digest = 0;
    bool ready = false;  // filtered (set by the thread before wait() returns)
  };
  void work();

  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::pair<Entry*, std::size_t>> queue_;  // (entry, chunk index) not filtered yet
  bool busy_ = false, stop_ = false;
  std::map<std::pair<std::string, std::size_t>, std::unique_ptr<Entry>> entries_;
  mutable std::atomic<std::size_t> used_{0};
  std::thread thread_;  // started by the first offer
};

// The columns of the row tables: name, member, whether it is a time in ms.
template <class F>
void for_each_job_column(F&& f) {
  f("trace_id", &JobRecord::trace_id, false);
  f("tenant", &JobRecord::tenant, false);
  f("queue", &JobRecord::queue, false);
  f("kind", &JobRecord::kind, false);
  f("state", &JobRecord::state, false);
  f("gpus", &JobRecord::gpus, false);
  f("gpu_milli", &JobRecord::gpu_milli, false);
  f("submit", &JobRecord::submit, true);
  f("start", &JobRecord::start, true);
  f("end", &JobRecord::end, true);
  f("runtime", &JobRecord::runtime, true);
  f("walltime", &JobRecord::walltime, true);
  f("trace_start", &JobRecord::trace_start, true);
  f("preemptions", &JobRecord::preemptions, false);
  f("nodes_used", &JobRecord::nodes_used, false);
  f("first_node", &JobRecord::first_node, false);
  f("pool", &JobRecord::pool, false);
}

// The /jobs columns that come from the trace and never change during a run.
template <class F>
void for_each_job_input_column(F&& f) {
  f("trace_id", &JobRecord::trace_id);
  f("tenant", &JobRecord::tenant);
  f("queue", &JobRecord::queue);
  f("kind", &JobRecord::kind);
  f("gpus", &JobRecord::gpus);
  f("gpu_milli", &JobRecord::gpu_milli);
  f("submit", &JobRecord::submit);
  f("runtime", &JobRecord::runtime);
  f("walltime", &JobRecord::walltime);
  f("trace_start", &JobRecord::trace_start);
}

template <class F>
void for_each_event_column(F&& f) {
  f("time", &EventRecord::time, true);
  f("kind", &EventRecord::kind, false);
  f("job", &EventRecord::job, false);
  f("detail", &EventRecord::detail, false);
  f("reason", &EventRecord::reason, false);
}

template <typename F>
void for_each_placement_column(F&& f) {
  f("job", &PlacementRecord::job, false);
  f("start", &PlacementRecord::start, true);
  f("end", &PlacementRecord::end, true);
  f("node", &PlacementRecord::node, false);
  f("gpus", &PlacementRecord::gpus, false);
}

// The /placements columns fixed when the row is appended (all but end).
template <class F>
void for_each_placement_fixed_column(F&& f) {
  f("job", &PlacementRecord::job);
  f("start", &PlacementRecord::start);
  f("node", &PlacementRecord::node);
  f("gpus", &PlacementRecord::gpus);
  f("gpu_milli", &PlacementRecord::gpu_milli);
  f("device", &PlacementRecord::device);
}

// The /timeseries matrices ([sample][pool], [sample][tenant], [sample][reason]).
template <class F>
void for_each_timeseries_matrix(F&& f) {
  f("pool_used_gpus", &TimeSeries::pool_used_gpus);
  f("pool_free_gpus", &TimeSeries::pool_free_gpus);
  f("pool_down_gpus", &TimeSeries::pool_down_gpus);
  f("pool_fragmented_gpus", &TimeSeries::pool_frag_gpus);
  f("tenant_used_gpus", &TimeSeries::tenant_used_gpus);
  f("tenant_pending_jobs", &TimeSeries::tenant_pending_jobs);
  f("tenant_pending_gpus", &TimeSeries::tenant_pending_gpus);
  f("pending_by_reason", &TimeSeries::pending_by_reason);
}

}  // namespace headroom::results::chunks
