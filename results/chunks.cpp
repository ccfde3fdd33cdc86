#include "results/chunks.hpp"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace headroom::results::chunks {
namespace {

// HDF5's shuffle filter over `count` elements gathered from `in` every `stride` bytes, padded with
// zero elements to `total`: byte k of element i goes to out[k * total + i].
template <std::size_t Size>
void shuffle_fixed(const unsigned char* in, std::size_t stride, unsigned char* out, std::size_t count,
                   std::size_t total) {
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t b = 0; b < Size; ++b) out[b * total + i] = in[i * stride + b];
  for (std::size_t b = 0; b < Size; ++b) std::memset(out + b * total + count, 0, total - count);
}

void shuffle(const Elements& e, unsigned char* out, std::size_t total) {
  switch (e.elem_size) {
    case 1: shuffle_fixed<1>(e.data, e.stride, out, e.count, total); return;
    case 4: shuffle_fixed<4>(e.data, e.stride, out, e.count, total); return;
    case 8: shuffle_fixed<8>(e.data, e.stride, out, e.count, total); return;
    default:
      for (std::size_t i = 0; i < e.count; ++i)
        for (std::size_t b = 0; b < e.elem_size; ++b) out[b * total + i] = e.at(i)[b];
      for (std::size_t b = 0; b < e.elem_size; ++b) std::memset(out + b * total + e.count, 0, total - e.count);
  }
}

template <std::size_t Size>
void unshuffle_fixed(const unsigned char* in, unsigned char* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t b = 0; b < Size; ++b) out[i * Size + b] = in[b * count + i];
}

// Deflates `size` bytes into at most `room` bytes as one zlib stream (HDF5's deflate filter reads
// zlib streams) with ISA-L's igzip at level 1; returns 0 when the stream does not fit.
std::size_t zlib_compress(const unsigned char* in, std::size_t size, unsigned char* out, std::size_t room) {
  // igzip's level 1 keeps its hash table in a caller's buffer; a fixed size keeps the output fixed.
  thread_local std::vector<std::uint8_t> level_buf(ISAL_DEF_LVL1_DEFAULT);
  isal_zstream s;
  isal_deflate_stateless_init(&s);
  s.level = kDeflateLevel;
  s.level_buf = level_buf.data();
  s.level_buf_size = static_cast<std::uint32_t>(level_buf.size());
  s.gzip_flag = IGZIP_ZLIB;
  s.end_of_stream = 1;
  s.flush = NO_FLUSH;
  s.next_in = const_cast<std::uint8_t*>(in);
  s.avail_in = static_cast<std::uint32_t>(size);
  s.next_out = out;
  s.avail_out = static_cast<std::uint32_t>(room);
  switch (isal_deflate_stateless(&s)) {
    case COMP_OK: return s.total_out;
    case STATELESS_OVERFLOW: return 0;
    default: throw std::runtime_error("igzip: cannot compress a chunk");
  }
}

Filtered shuffle_and_deflate(const Elements& e, std::size_t chunk_bytes) {
  thread_local std::vector<unsigned char> shuffled_buf, deflated_buf;
  unsigned char* shuffled = scratch(shuffled_buf, chunk_bytes);
  shuffle(e, shuffled, chunk_bytes / e.elem_size);
  // Room for chunk_bytes - 1 bytes: a chunk that does not compress below its size is stored as is.
  const std::size_t room = chunk_bytes - 1;
  unsigned char* deflated = scratch(deflated_buf, room);
  const std::size_t size = zlib_compress(shuffled, chunk_bytes, deflated, room);
  Filtered out;
  if (size == 0) {  // incompressible: store it shuffled only, as HDF5 would
    out.bytes.assign(shuffled, shuffled + chunk_bytes);
    out.mask = kDeflateSkipped;
  } else {
    out.bytes.assign(deflated, deflated + size);
  }
  return out;
}

std::uint64_t load(const unsigned char* p, std::size_t elem_size) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, elem_size);
  return v;
}

// Calls f with the element size as a compile-time constant for the usual sizes (so the per-element
// copies and comparisons inline), else with the run-time size.
template <class F>
auto by_size(std::size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 8: return f(std::integral_constant<std::size_t, 8>{});
    default: return f(elem_size);
  }
}

}  // namespace

unsigned char* scratch(std::vector<unsigned char>& buf, std::size_t size) {
  if (buf.size() < size) buf.resize(size);
  return buf.data();
}

void unshuffle(const unsigned char* in, unsigned char* out, std::size_t elem_size, std::size_t count) {
  switch (elem_size) {
    case 1: std::memcpy(out, in, count); return;
    case 4: unshuffle_fixed<4>(in, out, count); return;
    case 8: unshuffle_fixed<8>(in, out, count); return;
    default:
      for (std::size_t i = 0; i < count; ++i)
        for (std::size_t b = 0; b < elem_size; ++b) out[i * elem_size + b] = in[b * count + i];
  }
}

Fill constant_fill(const Elements& e) {
  Fill fill{};
  if (e.count == 0 || e.elem_size > fill.size()) return fill;
  const bool constant = by_size(e.elem_size, [&](auto size) {
    const std::uint64_t first = load(e.data, size);
    for (std::size_t i = 1; i < e.count; ++i)
      if (load(e.at(i), size) != first) return false;  // stops at the first different element
    return true;
  });
  if (constant) std::memcpy(fill.data(), e.data, e.elem_size);
  return fill;
}

bool all_equal(const Elements& e, const Fill& fill) {
  if (e.elem_size > fill.size()) return false;
  return by_size(e.elem_size, [&](auto size) {
    const std::uint64_t pattern = load(fill.data(), size);
    for (std::size_t i = 0; i < e.count; ++i)
      if (load(e.at(i), size) != pattern) return false;
    return true;
  });
}

std::vector<unsigned char> pack(const Elements& e) {
  if (e.stride == e.elem_size || e.count == 0) return {e.data, e.data + e.count * e.elem_size};
  std::vector<unsigned char> out(e.count * e.elem_size);
  by_size(e.elem_size, [&](auto size) {
    for (std::size_t i = 0; i < e.count; ++i) std::memcpy(out.data() + i * size, e.at(i), size);
  });
  return out;
}

std::uint64_t digest(const Elements& e) {
  // Four independent chains (elements i, i+4, ... go to lane i % 4, so the multiplications
  // overlap), then the lanes folded the same way. Each step maps its lane one-to-one for a given
  // element (xor, multiplication by an odd constant, xor-shift), and so does each fold step for a
  // given lane: changing exactly one element always changes the result.
  constexpr std::uint64_t kMul = 0x9e3779b97f4a7c15ull;
  auto step = [](std::uint64_t h, std::uint64_t v) {
    h = (h ^ v) * kMul;
    return h ^ (h >> 29);
  };
  return by_size(e.elem_size, [&](auto size) {
    // An element wider than 8 bytes goes in as several 8-byte words.
    auto element = [&](std::uint64_t h, const unsigned char* p) {
      for (std::size_t w = 0; w < size; w += 8) h = step(h, load(p + w, std::min<std::size_t>(8, size - w)));
      return h;
    };
    std::uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                             0x082efa98ec4e6c89ull};
    std::size_t i = 0;
    for (; i + 4 <= e.count; i += 4)
      for (std::size_t k = 0; k < 4; ++k) lane[k] = element(lane[k], e.at(i + k));
    for (std::size_t k = 0; i < e.count; ++i, ++k) lane[k] = element(lane[k], e.at(i));
    std::uint64_t h = step(e.count, lane[0]);
    for (std::size_t k = 1; k < 4; ++k) h = step(h, lane[k]);
    return h;
  });
}

Filtered ConstantChunks::get(std::size_t elem_size, const Fill& fill, std::size_t chunk_bytes) {
  const auto key = std::make_tuple(elem_size, fill, chunk_bytes);
  {
    std::lock_guard lock(mutex_);
    if (auto it = made_.find(key); it != made_.end()) return it->second;
  }
  // One element read chunk_bytes / elem_size times (stride 0).
  Filtered f = shuffle_and_deflate(Elements{fill.data(), 0, chunk_bytes / elem_size, elem_size}, chunk_bytes);
  std::lock_guard lock(mutex_);
  made_.emplace(key, f);  // two threads may make the same one: the same bytes
  return f;
}

Filtered filter_chunk(const Elements& e, std::size_t chunk_bytes, const Fill& fill, bool first_chunk,
                      ConstantChunks& constants) {
  if (all_equal(e, fill)) {
    if (!first_chunk) return Filtered{{}, kChunkAbsent};
    // The first chunk is full-size unless it is the only one (then it holds exactly the rows).
    return constants.get(e.elem_size, fill, chunk_bytes);
  }
  return shuffle_and_deflate(e, chunk_bytes);
}

ChunkCache::~ChunkCache() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void ChunkCache::offer(const std::string& where, std::size_t index, const Elements& elements, std::size_t chunk_bytes,
                       const Fill& fill) {
  auto entry = std::make_unique<Entry>();
  entry->source = elements;
  entry->chunk_bytes = chunk_bytes;
  entry->fill = fill;
  {
    std::lock_guard lock(mutex_);
    Entry* e = entry.get();
    if (!entries_.emplace(std::make_pair(where, index), std::move(entry)).second) return;  // offered before
    queue_.emplace_back(e, index);
    if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
  }
  wake_.notify_one();
}

void ChunkCache::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    const auto [e, index] = queue_.front();
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      // Constant chunks are rare among appended rows: each is filtered on its own here.
      ConstantChunks constants;
      e->filtered = filter_chunk(e->source, e->chunk_bytes, e->fill, index == 0, constants);
      e->digest = digest(e->source);
      e->ready = true;
    } catch (...) {  // out of memory: the write filters this chunk itself
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

void ChunkCache::wait() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

const Filtered* ChunkCache::find(const std::string& where, std::size_t index, std::size_t chunk_bytes, const Fill& fill,
                                 const Elements& e) const {
  const Entry* entry = nullptr;
  {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find({where, index});
    if (it == entries_.end()) return nullptr;
    entry = it->second.get();
  }
  if (!entry->ready || entry->source.elem_size != e.elem_size || entry->source.count != e.count ||
      entry->chunk_bytes != chunk_bytes || entry->fill != fill || entry->digest != digest(e))
    return nullptr;
  ++used_;
  return &entry->filtered;
}

std::size_t ChunkCache::offered() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace headroom::results::chunks
