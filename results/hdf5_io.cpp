#include "results/hdf5_io.hpp"

#include <hdf5.h>
#include <libdeflate.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/job.hpp"
#include "models/observer.hpp"
#include "results/check.hpp"
#include "results/chunks.hpp"
#include "results/fidelity.hpp"
#include "results/file_bounds.hpp"
#include "sim/errors.hpp"
#include "sim/parallel.hpp"

// File layout: see write_contents() below and docs (DESIGN.md, "Outputs").
//
// Writing happens in two phases. First every numeric dataset is described where it lies (a
// column of the result's row tables, read in place) and, when large, cut into chunks that are
// shuffled and deflated here, all chunks of all arrays in one parallel loop (deflate is the cost:
// HDF5 would run its filters on one thread, with zlib); the chunk pipeline and the chunks
// already filtered during the run are in results/chunks.hpp. The chunks are compressed with
// ISA-L's igzip, which writes the zlib streams HDF5's deflate filter reads, about 4x faster than
// libdeflate and 5x faster than zlib at level 1 (bench/write_bench); libdeflate reads them back.
// Then, under the HDF5 lock, the file is created and the ready chunks go in with
// H5Dwrite_chunk. The dataset's filter pipeline (shuffle, deflate) is declared as usual, so any
// HDF5 reader decodes the chunks with its own filters.

namespace headroom::results {
namespace {

constexpr std::int32_t kFormatVersion = 1;
// Datasets with at least this many elements are chunked and compressed; smaller ones stay
// contiguous (and zero-length ones must: a chunk cannot have a zero dimension).
constexpr hsize_t kCompressThreshold = 4096;
using chunks::kChunkAbsent;
using chunks::kDeflateSkipped;
using chunks::scratch;

// Writing failed; becomes sim::InputError at the API boundary.
struct WriteFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The HDF5 library keeps global state (error stack, open-object tables); all calls from this
// file go through one lock, so concurrent runs (planner sweeps) may write their files safely
// even with an HDF5 built without thread safety.
std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

// Silences HDF5's automatic error printing for the scope; errors become exceptions instead.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

herr_t collect_error(unsigned, const H5E_error2_t* err, void* data) {
  if (err != nullptr && err->desc != nullptr && err->desc[0] != '\0')
    static_cast<std::vector<std::string>*>(data)->emplace_back(err->desc);
  return 0;
}

// The outermost and innermost messages of the current HDF5 error stack, e.g.
// "unable to create file (unable to open file: name = 'x', errno = 2, ...)".
std::string hdf5_error_detail() {
  std::vector<std::string> messages;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &messages);
  H5Eclear2(H5E_DEFAULT);
  if (messages.empty()) return "HDF5 error";
  if (messages.size() == 1 || messages.front() == messages.back()) return messages.front();
  return messages.front() + " (" + messages.back() + ")";
}

// Owns one HDF5 identifier.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports whether closing worked (for the file, where it flushes).
  bool close() {
    if (id_ < 0) return true;
    return closer_(std::exchange(id_, H5I_INVALID_HID)) >= 0;
  }

 private:
  void reset() {
    if (id_ >= 0) closer_(std::exchange(id_, H5I_INVALID_HID));
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Numeric datasets are stored in the machine's native types: chunks are written as raw bytes.
template <class T>
struct H5Type;
template <>
struct H5Type<std::uint8_t> {
  static hid_t native() { return H5T_NATIVE_UINT8; }
};
template <>
struct H5Type<std::int32_t> {
  static hid_t native() { return H5T_NATIVE_INT32; }
};
template <>
struct H5Type<std::uint32_t> {
  static hid_t native() { return H5T_NATIVE_UINT32; }
};
template <>
struct H5Type<std::int64_t> {
  static hid_t native() { return H5T_NATIVE_INT64; }
};
template <>
struct H5Type<std::uint64_t> {
  static hid_t native() { return H5T_NATIVE_UINT64; }
};
template <>
struct H5Type<double> {
  static hid_t native() { return H5T_NATIVE_DOUBLE; }
};

template <class M>
struct member_type;
template <class C, class T>
struct member_type<T C::*> {
  using type = T;
};
template <class M>
using member_type_t = typename member_type<M>::type;

using chunks::for_each_event_column;
using chunks::for_each_job_column;
using chunks::for_each_placement_column;

template <class F>
void for_each_service_column(F&& f) {
  f("gpus_per_replica", &ServiceRecord::gpus_per_replica, false);
  f("min_replicas", &ServiceRecord::min_replicas, false);
  f("max_replicas", &ServiceRecord::max_replicas, false);
  f("throughput", &ServiceRecord::throughput, false);
  f("from", &ServiceRecord::from, true);
  f("to", &ServiceRecord::to, true);
  f("replicas", &ServiceRecord::replicas, false);
  f("replicas_withdrawn", &ServiceRecord::replicas_withdrawn, false);
  f("time_attainment", &ServiceRecord::time_attainment, false);
  f("request_attainment", &ServiceRecord::request_attainment, false);
  f("mean_running", &ServiceRecord::mean_running, false);
  f("mean_wanted", &ServiceRecord::mean_wanted, false);
  f("replica_gpu_hours", &ServiceRecord::replica_gpu_hours, false);
  f("requests", &ServiceRecord::requests, false);
}

// Recovery per outage (docs/drills.md); groups /outages, /kills and /outage_slo, optional on read.
template <class F>
void for_each_outage_column(F&& f) {
  f("start", &OutageRecord::start, true);
  f("end", &OutageRecord::end, true);
  f("kind", &OutageRecord::kind, false);
  f("drill", &OutageRecord::drill, false);
  f("reason", &OutageRecord::reason, false);
  f("nodes", &OutageRecord::nodes, false);
}

template <class F>
void for_each_kill_column(F&& f) {
  f("outage", &KillRecord::outage, false);
  f("job", &KillRecord::job, false);
  f("time", &KillRecord::time, true);
  f("restart", &KillRecord::restart, true);
  f("lost_gpu_ms", &KillRecord::lost_gpu_ms, false);
  f("nodes", &KillRecord::nodes, false);
  f("partial", &KillRecord::partial, false);
  f("partial_gpu_ms", &KillRecord::partial_gpu_ms, false);
}

template <class F>
void for_each_outage_slo_column(F&& f) {
  f("drill", &OutageSlo::drill, false);
  f("from", &OutageSlo::from, true);
  f("to", &OutageSlo::to, true);
  f("during", &OutageSlo::during, false);
  f("after", &OutageSlo::after, false);
}

template <class F>
void for_each_partition_column(F&& f) {
  f("first_node", &PartitionRecord::first_node, false);
  f("nodes", &PartitionRecord::nodes, false);
  f("first_pool", &PartitionRecord::first_pool, false);
  f("pools", &PartitionRecord::pools, false);
  f("gpus", &PartitionRecord::gpus, false);
  f("boundary_idle_gpu_ms", &PartitionRecord::boundary_idle_gpu_ms, true);
}

template <class F>
void for_each_move_column(F&& f) {
  f("node", &MoveRecord::node, false);
  f("from", &MoveRecord::from, false);
  f("to", &MoveRecord::to, false);
  f("rule", &MoveRecord::rule, false);
  f("on_demand", &MoveRecord::on_demand, false);
  f("gpus", &MoveRecord::gpus, false);
  f("requested", &MoveRecord::requested, true);
  f("changed", &MoveRecord::changed, true);
  f("ready", &MoveRecord::ready, true);
  f("preempted", &MoveRecord::preempted, false);
}

bool deflate_available() {
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0 || H5Zfilter_avail(H5Z_FILTER_SHUFFLE) <= 0) return false;
  unsigned info = 0;
  if (H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) < 0) return false;
  return (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0;
}

Handle utf8_string_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.valid() || H5Tset_size(type.get(), H5T_VARIABLE) < 0 || H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0)
    return Handle();
  return type;
}

// One numeric dataset, ready to go into the file: its elements (read in place from the result's
// tables) and, when large, its filtered chunks.
struct Array {
  std::string where;  // absolute path, e.g. "/jobs/start"
  hid_t (*type)() = nullptr;
  std::size_t elem_size = 0;
  int rank = 1;
  std::array<hsize_t, 2> dims{0, 0};
  bool ms = false;
  // Element i (row-major) is the elem_size bytes at src + i * stride: a column of one of the
  // result's row tables (stride = the row's size), a vector, or `owned`. The chunks are gathered
  // from there in the parallel compression loop, so no contiguous copy of each column is made.
  const unsigned char* src = nullptr;
  std::size_t stride = 0;
  std::vector<unsigned char> owned;  // computed columns; contiguous copies of small strided ones
  std::array<hsize_t, 2> chunk{0, 0};
  std::vector<std::vector<unsigned char>> chunks;
  std::vector<std::uint32_t> masks;  // per chunk: HDF5 filter mask, or kChunkAbsent
  chunks::Fill fill{};               // fill value (elem_size bytes): the array's one value, else 0

  hsize_t elements() const { return rank == 1 ? dims[0] : dims[0] * dims[1]; }
  bool chunked() const { return !chunks.empty(); }
  const unsigned char* at(std::size_t i) const { return src + i * stride; }
  chunks::Elements elements_from(std::size_t first, std::size_t count) const {
    return {count > 0 ? at(first) : src, stride, count, elem_size};
  }
  // The elements as one contiguous block (for an unchunked write); gathers a strided column once.
  const unsigned char* contiguous() {
    if (stride != elem_size && elements() > 0) {
      owned = chunks::pack(elements_from(0, static_cast<std::size_t>(elements())));
      src = owned.data();
      stride = elem_size;
    }
    return src;
  }
};

template <class T>
Array array_of(std::string where, int rank, std::array<hsize_t, 2> dims, bool ms) {
  Array a;
  a.where = std::move(where);
  a.type = &H5Type<T>::native;
  a.elem_size = sizeof(T);
  a.rank = rank;
  a.dims = dims;
  a.ms = ms;
  a.stride = sizeof(T);
  return a;
}

// A computed column: `fill` writes the elements into the array's own buffer.
template <class T, class Fill>
Array make_array(std::string where, std::size_t n, bool ms, Fill&& fill) {
  Array a = array_of<T>(std::move(where), 1, {n, 0}, ms);
  a.owned.resize(n * sizeof(T));
  if (n > 0) fill(reinterpret_cast<T*>(a.owned.data()));
  a.src = a.owned.data();
  return a;
}

// A copy of a (small) vector.
template <class T>
Array vector_array(std::string where, const std::vector<T>& v, bool ms = false) {
  return make_array<T>(std::move(where), v.size(), ms,
                       [&](T* out) { std::memcpy(out, v.data(), v.size() * sizeof(T)); });
}

// A column of a row table, read in place: `rows` must outlive the array.
template <class Row, class T>
Array column_array(std::string where, const std::vector<Row>& rows, T Row::*member, bool ms) {
  Array a = array_of<T>(std::move(where), 1, {rows.size(), 0}, ms);
  if (!rows.empty()) a.src = reinterpret_cast<const unsigned char*>(&(rows.front().*member));
  a.stride = sizeof(Row);
  return a;
}

libdeflate_decompressor* thread_decompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  return d.get();
}

// Cuts the array into chunks of about chunks::kChunkBytes along the first dimension and picks its
// fill value (sets a.chunk, a.fill and sizes a.chunks / a.masks); compress_chunk then fills one.
std::size_t plan_chunks(Array& a) {
  const hsize_t cols = a.rank == 2 ? a.dims[1] : 1;
  const hsize_t chunk_rows =
      std::min<hsize_t>(a.dims[0], chunks::full_chunk_rows(a.elem_size, static_cast<std::size_t>(cols)));
  a.chunk = {chunk_rows, cols};
  const std::size_t count = static_cast<std::size_t>((a.dims[0] + chunk_rows - 1) / chunk_rows);
  a.chunks.resize(count);
  a.masks.assign(count, 0);
  a.fill = chunks::constant_fill(a.elements_from(0, static_cast<std::size_t>(a.elements())));
  return count;
}

// Filters chunk c of a, as HDF5's own filters would (edge chunks are padded to full size), or
// marks it absent when it holds only the fill value; takes it from the cache when it was
// filtered there from the same elements.
void compress_chunk(Array& a, std::size_t c, chunks::ConstantChunks& constants, const chunks::ChunkCache* cache) {
  const std::size_t cols = static_cast<std::size_t>(a.chunk[1]);
  const std::size_t chunk_rows = static_cast<std::size_t>(a.chunk[0]);
  const std::size_t chunk_bytes = chunk_rows * cols * a.elem_size;
  const std::size_t first_row = c * chunk_rows;
  const std::size_t rows = std::min(chunk_rows, static_cast<std::size_t>(a.dims[0]) - first_row);
  const chunks::Elements e = a.elements_from(first_row * cols, rows * cols);
  if (cache != nullptr) {
    if (const chunks::Filtered* f = cache->find(a.where, c, chunk_bytes, a.fill, e)) {
      a.chunks[c] = f->bytes;
      a.masks[c] = f->mask;
      return;
    }
  }
  chunks::Filtered f = chunks::filter_chunk(e, chunk_bytes, a.fill, c == 0, constants);
  a.chunks[c] = std::move(f.bytes);
  a.masks[c] = f.mask;
}

// Compresses the chunks of every large array, all chunks of all arrays in one parallel loop (most
// arrays have one or two chunks, so a loop per array would leave threads idle).
void compress_arrays(std::vector<Array>& arrays, const chunks::ChunkCache* cache) {
  std::vector<std::pair<std::size_t, std::size_t>> work;  // (array, chunk)
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].elements() < kCompressThreshold) continue;
    const std::size_t count = plan_chunks(arrays[i]);
    for (std::size_t c = 0; c < count; ++c) work.emplace_back(i, c);
  }
  chunks::ConstantChunks constants;
  tbb::this_task_arena::isolate([&] {
    sim::parallel_indices(
        work.size(), [&](std::size_t k) { compress_chunk(arrays[work[k].first], work[k].second, constants, cache); });
  });
}

// [samples x columns] matrix; the column count comes from the data when there are samples.
Array matrix_array(const char* name, const std::vector<std::int32_t>& values, std::size_t rows,
                   std::size_t expected_cols) {
  std::string where = std::string("/timeseries/") + name;
  std::size_t cols = expected_cols;
  if (rows == 0) {
    if (!values.empty())
      throw WriteFailure(where + ": " + std::to_string(values.size()) + " values but no sample times");
  } else {
    if (values.size() % rows != 0)
      throw WriteFailure(where + ": " + std::to_string(values.size()) + " values is not a multiple of " +
                         std::to_string(rows) + " samples");
    cols = values.size() / rows;
  }
  Array a = array_of<std::int32_t>(std::move(where), 2, {rows, cols}, false);
  a.src = reinterpret_cast<const unsigned char*>(values.data());
  return a;
}

// Every numeric dataset of the file, in the order they are written.
std::vector<Array> prepare_arrays(const RunResult& r, bool compress) {
  if (r.chunk_cache) r.chunk_cache->wait();
  std::vector<Array> out;
  auto add = [&](Array a) { out.push_back(std::move(a)); };
  for_each_job_column([&](const char* name, auto member, bool ms) {
    add(column_array(std::string("/jobs/") + name, r.jobs, member, ms));
  });
  add(make_array<Tick>("/jobs/wait", r.jobs.size(), true, [&](Tick* out) {
    for (std::size_t i = 0; i < r.jobs.size(); ++i)
      out[i] = r.jobs[i].start >= 0 ? r.jobs[i].start - r.jobs[i].submit : -1;
  }));
  for_each_event_column([&](const char* name, auto member, bool ms) {
    add(column_array(std::string("/events/") + name, r.events, member, ms));
  });
  for_each_placement_column([&](const char* name, auto member, bool ms) {
    add(column_array(std::string("/placements/") + name, r.placements, member, ms));
  });
  // Added after format version 1 shipped: readers treat a missing column as zeros.
  add(column_array("/events/lost_gpu_ms", r.events, &EventRecord::lost_gpu_ms, false));
  add(column_array("/placements/gpu_milli", r.placements, &PlacementRecord::gpu_milli, false));
  add(column_array("/placements/device", r.placements, &PlacementRecord::device, false));
  // Inference services (optional on read; only written when the scenario has some).
  if (!r.services.empty())
    for_each_service_column([&](const char* name, auto member, bool ms) {
      add(column_array(std::string("/services/") + name, r.services, member, ms));
    });
  if (!r.outages.empty()) {
    for_each_outage_column([&](const char* name, auto member, bool ms) {
      add(column_array(std::string("/outages/") + name, r.outages, member, ms));
    });
    for_each_kill_column([&](const char* name, auto member, bool ms) {
      add(column_array(std::string("/kills/") + name, r.kills, member, ms));
    });
  }
  if (!r.outage_slo.empty())
    for_each_outage_slo_column([&](const char* name, auto member, bool ms) {
      add(column_array(std::string("/outage_slo/") + name, r.outage_slo, member, ms));
    });
  // A split site's systems (docs/split.md; optional on read, written only for a split run).
  if (!r.partitions.empty()) {
    for_each_partition_column([&](const char* name, auto member, bool ms) {
      add(column_array(std::string("/partitions/") + name, r.partitions, member, ms));
    });
    add(vector_array("/jobs/partition", r.job_partition));
  }
  if (!r.moves.empty())
    for_each_move_column([&](const char* name, auto member, bool ms) {
      add(column_array(std::string("/moves/") + name, r.moves, member, ms));
    });
  const TimeSeries& ts = r.timeseries;
  const std::size_t rows = ts.time.size();
  add(vector_array("/timeseries/time", ts.time, true));
  add(vector_array("/timeseries/running_jobs", ts.running_jobs));
  add(vector_array("/timeseries/pending_jobs", ts.pending_jobs));
  add(matrix_array("pool_used_gpus", ts.pool_used_gpus, rows, r.pools.size()));
  add(matrix_array("pool_free_gpus", ts.pool_free_gpus, rows, r.pools.size()));
  if (ts.pool_down_gpus.size() == ts.pool_free_gpus.size())
    add(matrix_array("pool_down_gpus", ts.pool_down_gpus, rows, r.pools.size()));
  if (ts.pool_frag_gpus.size() == ts.pool_free_gpus.size())
    add(matrix_array("pool_fragmented_gpus", ts.pool_frag_gpus, rows, r.pools.size()));
  add(matrix_array("tenant_used_gpus", ts.tenant_used_gpus, rows, r.tenants.size()));
  add(matrix_array("tenant_pending_jobs", ts.tenant_pending_jobs, rows, r.tenants.size()));
  add(matrix_array("tenant_pending_gpus", ts.tenant_pending_gpus, rows, r.tenants.size()));
  add(matrix_array("pending_by_reason", ts.pending_by_reason, rows,
                   ts.pending_by_reason.empty() ? 0 : models::kPendingCodes));
  std::vector<std::int32_t> nodes, gpus_per_node;
  std::vector<double> prices;
  for (const auto& p : r.pools) {
    nodes.push_back(p.nodes);
    gpus_per_node.push_back(p.gpus_per_node);
    prices.push_back(p.gpu_hour_price);
  }
  add(vector_array("/meta/pool_nodes", nodes));
  add(vector_array("/meta/pool_gpus_per_node", gpus_per_node));
  // Scenario `costs:`; optional on read (0 = unpriced).
  add(vector_array("/meta/pool_gpu_hour_price", prices));
  // The drills (docs/drills.md); optional on read.
  add(vector_array("/meta/drill_start", r.drill_start, true));
  add(vector_array("/meta/drill_recovered", r.drill_recovered, true));
  add(vector_array("/meta/tenant_denied", r.tenant_denied));
  if (compress) compress_arrays(out, r.chunk_cache.get());
  for (Array& a : out) {
    if (a.chunked()) {
      a.owned = {};
      a.src = nullptr;
    } else {
      a.contiguous();
    }
  }
  return out;
}

class Writer {
 public:
  // String writes convert each value to its file form through a buffer that HDF5 allocates and
  // zeroes per write, 1 MiB by default; the string tables here are small, so 64 KiB suffices
  // (HDF5 converts larger ones in several passes).
  // Objects are created without modification times (HDF5 stores them by default), so that the same
  // run written twice gives the same bytes.
  explicit Writer(hid_t file)
      : file_(file),
        string_xfer_(H5Pcreate(H5P_DATASET_XFER), H5Pclose),
        gcpl_(H5Pcreate(H5P_GROUP_CREATE), H5Pclose),
        strings_dcpl_(H5Pcreate(H5P_DATASET_CREATE), H5Pclose) {
    if (!string_xfer_.valid() || H5Pset_buffer(string_xfer_.get(), std::size_t{64} << 10, nullptr, nullptr) < 0)
      fail("string transfer property list");
    if (!gcpl_.valid() || H5Pset_obj_track_times(gcpl_.get(), false) < 0) fail("group creation property list");
    if (!strings_dcpl_.valid() || H5Pset_obj_track_times(strings_dcpl_.get(), false) < 0)
      fail("dataset creation property list");
  }

  Handle group(const char* where) {
    return checked(H5Gcreate2(file_, where, H5P_DEFAULT, gcpl_.get(), H5P_DEFAULT), H5Gclose, where);
  }

  void array(const Array& a) {
    const std::string& where = a.where;
    Handle space = checked(H5Screate_simple(a.rank, a.dims.data(), nullptr), H5Sclose, where);
    Handle dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, where);
    check(H5Pset_obj_track_times(dcpl.get(), false), where);
    if (a.chunked()) {
      check(H5Pset_chunk(dcpl.get(), a.rank, a.chunk.data()), where);
      check(H5Pset_shuffle(dcpl.get()), where);
      check(H5Pset_deflate(dcpl.get(), chunks::kDeflateLevel), where);
      check(H5Pset_fill_value(dcpl.get(), a.type(), a.fill.data()), where);
      check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_IFSET), where);
    } else {
      check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), where);
    }
    Handle ds = checked(H5Dcreate2(file_, where.c_str(), a.type(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        H5Dclose, where);
    if (a.chunked()) {
      for (std::size_t c = 0; c < a.chunks.size(); ++c) {
        if (a.masks[c] == kChunkAbsent) continue;
        const hsize_t offset[2] = {c * a.chunk[0], 0};
        check(H5Dwrite_chunk(ds.get(), H5P_DEFAULT, a.masks[c], offset, a.chunks[c].size(), a.chunks[c].data()), where);
      }
    } else if (a.elements() > 0) {
      check(H5Dwrite(ds.get(), a.type(), H5S_ALL, H5S_ALL, H5P_DEFAULT, a.src), where);
    }
    if (a.ms) string_attr(ds.get(), where, "units", "ms");
  }

  void strings(const std::string& where, const std::vector<std::string>& values) {
    Handle type = utf8_string_type();
    if (!type.valid()) fail(where);
    std::vector<const char*> ptrs;
    ptrs.reserve(values.size());
    for (const auto& s : values) ptrs.push_back(s.c_str());
    const hsize_t dims[1] = {values.size()};
    Handle space = checked(H5Screate_simple(1, dims, nullptr), H5Sclose, where);
    Handle ds = checked(
        H5Dcreate2(file_, where.c_str(), type.get(), space.get(), H5P_DEFAULT, strings_dcpl_.get(), H5P_DEFAULT),
        H5Dclose, where);
    if (!values.empty())
      check(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, string_xfer_.get(), ptrs.data()), where);
  }

  void string_attr(hid_t obj, const std::string& where, const char* name, const std::string& value) {
    const std::string what = where + " attribute " + name;
    Handle type = utf8_string_type();
    if (!type.valid()) fail(what);
    Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose, what);
    Handle attr = checked(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, what);
    const char* ptr = value.c_str();
    check(H5Awrite(attr.get(), type.get(), &ptr), what);
  }

  template <class T>
  void scalar_attr(hid_t obj, const std::string& where, const char* name, T value) {
    const std::string what = where + " attribute " + name;
    Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose, what);
    Handle attr =
        checked(H5Acreate2(obj, name, H5Type<T>::native(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, what);
    check(H5Awrite(attr.get(), H5Type<T>::native(), &value), what);
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { throw WriteFailure(what + ": " + hdf5_error_detail()); }
  static void check(herr_t rc, const std::string& what) {
    if (rc < 0) fail(what);
  }
  static Handle checked(hid_t id, Handle::Closer closer, const std::string& what) {
    if (id < 0) fail(what);
    return Handle(id, closer);
  }

  hid_t file_;
  Handle string_xfer_;
  Handle gcpl_;
  Handle strings_dcpl_;
};

std::vector<std::string> job_state_names() {
  std::vector<std::string> out;
  for (int s = 0; s < models::kJobStateCount; ++s)
    out.emplace_back(models::to_string(static_cast<models::JobState>(s)));
  return out;
}
std::vector<std::string> job_kind_names() {
  std::vector<std::string> out;
  for (int k = 0; k <= static_cast<int>(models::JobKind::Batch); ++k)
    out.emplace_back(models::to_string(static_cast<models::JobKind>(k)));
  return out;
}
std::vector<std::string> event_kind_names() {
  std::vector<std::string> out;
  for (int k = 0; k < models::kAuditKindCount; ++k)
    out.emplace_back(models::to_string(static_cast<models::AuditKind>(k)));
  return out;
}
std::vector<std::string> pending_reason_names() {
  std::vector<std::string> out;
  for (int k = 0; k < models::kPendingCodes; ++k)
    out.emplace_back(models::to_string(static_cast<models::PendingCode>(k)));
  return out;
}

// The fidelity block (results/fidelity.hpp) as root attributes fidelity_*, and the whole block,
// per tenant and queue, as JSON in fidelity_json; none when no job has a recorded start.
void write_fidelity_attrs(Writer& w, hid_t file, const RunResult& r) {
  const Fidelity f = compute_fidelity(r);
  if (!f.available()) return;
  const FidelityStats& a = f.all;
  w.scalar_attr<std::int64_t>(file, "/", "fidelity_jobs", a.jobs);
  w.scalar_attr<std::int64_t>(file, "/", "fidelity_never_started", a.never_started);
  w.scalar_attr<double>(file, "/", "fidelity_mean_abs_error_s", a.mean_abs_error_s);
  w.scalar_attr<double>(file, "/", "fidelity_median_abs_error_s", a.median_abs_error_s);
  w.scalar_attr<double>(file, "/", "fidelity_mean_wait_sim_s", a.mean_wait_sim_s);
  w.scalar_attr<double>(file, "/", "fidelity_mean_wait_recorded_s", a.mean_wait_recorded_s);
  w.scalar_attr<double>(file, "/", "fidelity_pearson", a.pearson);
  w.scalar_attr<double>(file, "/", "fidelity_spearman", a.spearman);
  w.scalar_attr<double>(file, "/", "fidelity_within_10m", a.within_10m);
  w.scalar_attr<double>(file, "/", "fidelity_within_1h", a.within_1h);
  std::ostringstream json;
  print_fidelity_json(json, f, 0);
  w.string_attr(file, "/", "fidelity_json", json.str());
}

// The scorecard attribute: "target<TAB>verdict<TAB>why" a line (tabs and line breaks within a
// field become spaces), and back; a line without three fields is passed over.
std::string scorecard_text(const std::vector<VerdictLine>& lines) {
  std::string out;
  auto field = [&](const std::string& f) {
    for (char c : f) out += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
  };
  for (const VerdictLine& l : lines) {
    field(l.target);
    out += '\t';
    field(l.verdict);
    out += '\t';
    field(l.why);
    out += '\n';
  }
  return out;
}

std::vector<VerdictLine> scorecard_lines(const std::string& text) {
  std::vector<VerdictLine> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t a = line.find('\t');
    const std::size_t b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos) continue;
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

void write_contents(hid_t file, const RunResult& r, const std::vector<Array>& arrays) {
  Writer w(file);
  w.string_attr(file, "/", "scenario_name", r.scenario_name);
  w.string_attr(file, "/", "scenario_text", r.scenario_text);
  w.string_attr(file, "/", "scenario_file", r.scenario_file);
  w.string_attr(file, "/", "policy", r.policy);
  w.string_attr(file, "/", "version", r.version);
  w.string_attr(file, "/", "fingerprint", r.fingerprint);
  w.scalar_attr<std::uint64_t>(file, "/", "seed", r.seed);
  w.scalar_attr<std::uint64_t>(file, "/", "events_processed", r.events_processed);
  w.scalar_attr<std::int64_t>(file, "/", "sim_start", r.sim_start);
  w.scalar_attr<std::int64_t>(file, "/", "sim_end", r.sim_end);
  w.scalar_attr<std::int64_t>(file, "/", "total_gpus", r.total_gpus);
  w.scalar_attr<std::int64_t>(file, "/", "lost_gpu_ms", r.lost_gpu_ms);
  w.scalar_attr<std::int64_t>(file, "/", "failure_lost_gpu_ms", r.failure_lost_gpu_ms);
  w.scalar_attr<std::int64_t>(file, "/", "bound_idle_gpu_ms", r.bound_idle_gpu_ms);
  w.scalar_attr<std::int64_t>(file, "/", "node_outages", r.node_outages);
  w.scalar_attr<std::int64_t>(file, "/", "jobs_killed", r.jobs_killed);
  w.scalar_attr<std::int64_t>(file, "/", "job_retries", r.job_retries);
  w.scalar_attr<std::int64_t>(file, "/", "jobs_failed_by_failure", r.jobs_failed_by_failure);
  w.scalar_attr<std::int64_t>(file, "/", "jobs_failed_by_policy", r.jobs_failed_by_policy);
  w.scalar_attr<std::int32_t>(file, "/", "format_version", kFormatVersion);
  w.string_attr(file, "/", "currency", r.currency);
  if (r.unix_start >= 0) w.scalar_attr<std::int64_t>(file, "/", "unix_start", r.unix_start);
  write_fidelity_attrs(w, file, r);
  if (!r.scorecard.empty()) w.string_attr(file, "/", "scorecard", scorecard_text(r.scorecard));

  Handle jobs = w.group("/jobs");
  Handle events = w.group("/events");
  Handle placements = w.group("/placements");
  std::optional<Handle> services;
  if (!r.services.empty()) services.emplace(w.group("/services"));
  std::optional<Handle> outages, kills, outage_slo;
  if (!r.outages.empty()) {
    outages.emplace(w.group("/outages"));
    kills.emplace(w.group("/kills"));
  }
  if (!r.outage_slo.empty()) outage_slo.emplace(w.group("/outage_slo"));
  std::optional<Handle> partitions;
  if (!r.partitions.empty()) partitions.emplace(w.group("/partitions"));
  std::optional<Handle> moves;
  if (!r.moves.empty()) moves.emplace(w.group("/moves"));
  Handle timeseries = w.group("/timeseries");
  Handle meta = w.group("/meta");
  w.scalar_attr<std::int64_t>(timeseries.get(), "/timeseries", "interval", r.timeseries.interval);
  w.string_attr(timeseries.get(), "/timeseries", "interval_units", "ms");
  for (const Array& a : arrays) w.array(a);

  w.strings("/meta/tenants", r.tenants);
  w.strings("/meta/queues", r.queues);
  w.strings("/meta/reasons", r.reasons);
  std::vector<std::string> names, types;
  for (const auto& p : r.pools) {
    names.push_back(p.name);
    types.push_back(p.gpu_type);
  }
  w.strings("/meta/pool_name", names);
  if (!r.services.empty()) {
    std::vector<std::string> svc_names, svc_tenants;
    for (const auto& sv : r.services) {
      svc_names.push_back(sv.name);
      svc_tenants.push_back(sv.tenant);
    }
    w.strings("/services/name", svc_names);
    w.strings("/services/tenant", svc_tenants);
  }
  if (!r.partitions.empty()) {
    std::vector<std::string> part_names, part_policies;
    for (const auto& p : r.partitions) {
      part_names.push_back(p.name);
      part_policies.push_back(p.policy);
    }
    w.strings("/partitions/name", part_names);
    w.strings("/partitions/policy", part_policies);
  }
  w.strings("/meta/pool_gpu_type", types);
  // Code -> name tables for the enum columns (jobs/state, jobs/kind, events/kind); not read back.
  w.strings("/meta/state_names", job_state_names());
  w.strings("/meta/kind_names", job_kind_names());
  w.strings("/meta/event_kind_names", event_kind_names());
  w.strings("/meta/pending_reason_names", pending_reason_names());
}

// Reads a dataset laid out as write_hdf5 lays it out (native type, shuffle + deflate, chunks of
// whole rows) by fetching the raw chunks and decoding them in parallel. Returns false for any
// other layout, or a chunk it cannot decode; the caller then lets H5Dread do the work (and
// report the error).
bool read_chunks(hid_t ds, hid_t type, hid_t native, std::size_t elem_size, int rank, const hsize_t* dims,
                 unsigned char* out) {
  if (H5Tequal(type, native) <= 0) return false;
  Handle dcpl(H5Dget_create_plist(ds), H5Pclose);
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED || H5Pget_nfilters(dcpl.get()) != 2) return false;
  const H5Z_filter_t expected[2] = {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE};
  for (unsigned i = 0; i < 2; ++i) {
    unsigned flags = 0, config = 0, cd[8];
    std::size_t cd_count = 8;
    char name[64];
    if (H5Pget_filter2(dcpl.get(), i, &flags, &cd_count, cd, sizeof name, name, &config) != expected[i]) return false;
  }
  hsize_t chunk[2] = {0, 0};
  if (H5Pget_chunk(dcpl.get(), rank, chunk) != rank || chunk[0] == 0) return false;
  const hsize_t cols = rank == 2 ? dims[1] : 1;
  if (rank == 2 && chunk[1] != cols) return false;
  const std::size_t row_bytes = static_cast<std::size_t>(cols) * elem_size;
  const std::size_t chunk_bytes = static_cast<std::size_t>(chunk[0]) * row_bytes;
  const std::size_t count = static_cast<std::size_t>((dims[0] + chunk[0] - 1) / chunk[0]);

  // A chunk never written reads as the fill value (write_hdf5 leaves out chunks that are).
  chunks::Fill fill{};
  if (elem_size > fill.size() || H5Pget_fill_value(dcpl.get(), native, fill.data()) < 0) return false;
  std::vector<std::vector<unsigned char>> raw(count);
  std::vector<std::uint32_t> masks(count, 0);
  for (std::size_t c = 0; c < count; ++c) {
    const hsize_t offset[2] = {c * chunk[0], 0};
    hsize_t stored = 0;
    if (H5Dget_chunk_storage_size(ds, offset, &stored) < 0) return false;
    if (stored == 0) {
      masks[c] = kChunkAbsent;
      continue;
    }
    raw[c].resize(static_cast<std::size_t>(stored));
    if (H5Dread_chunk(ds, H5P_DEFAULT, offset, &masks[c], raw[c].data()) < 0) return false;
  }

  std::atomic<bool> ok{true};
  auto one_chunk = [&](std::size_t c) {
    thread_local std::vector<unsigned char> inflated_buf, plain_buf;
    const std::size_t first_row = c * static_cast<std::size_t>(chunk[0]);
    const std::size_t rows = std::min<std::size_t>(chunk[0], static_cast<std::size_t>(dims[0]) - first_row);
    if (masks[c] == kChunkAbsent) {
      unsigned char* dst = out + first_row * row_bytes;
      for (std::size_t i = 0; i < rows * row_bytes; i += elem_size) std::memcpy(dst + i, fill.data(), elem_size);
      return;
    }
    const unsigned char* data = raw[c].data();
    std::size_t size = raw[c].size();
    if ((masks[c] & kDeflateSkipped) == 0) {
      unsigned char* inflated = scratch(inflated_buf, chunk_bytes);
      libdeflate_decompressor* d = thread_decompressor();
      std::size_t len = 0;
      if (d == nullptr ||
          libdeflate_zlib_decompress(d, data, size, inflated, chunk_bytes, &len) != LIBDEFLATE_SUCCESS) {
        ok = false;
        return;
      }
      data = inflated;
      size = len;
    }
    if (size != chunk_bytes) {
      ok = false;
      return;
    }
    if ((masks[c] & 1u) == 0) {
      unsigned char* plain = scratch(plain_buf, chunk_bytes);
      chunks::unshuffle(data, plain, elem_size, chunk_bytes / elem_size);
      data = plain;
    }
    std::memcpy(out + first_row * row_bytes, data, rows * row_bytes);
  };
  tbb::this_task_arena::isolate([&] { sim::parallel_indices(count, one_chunk); });
  return ok;
}

class Reader {
 public:
  Reader(const std::string& path, hid_t file) : path_(path), file_(file) {
    hsize_t size = 0;
    if (H5Fget_filesize(file, &size) >= 0) file_bytes_ = size;
  }

  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw sim::InputError(path_, 0, 0, where, message);
  }

  Handle group(const char* name) const {
    const std::string where = std::string("/") + name;
    if (H5Lexists(file_, name, H5P_DEFAULT) <= 0) fail(where, "missing group");
    const hid_t id = H5Gopen2(file_, name, H5P_DEFAULT);
    if (id < 0) fail(where, "cannot open group: " + hdf5_error_detail());
    return Handle(id, H5Gclose);
  }

  template <class T>
  std::vector<T> array(hid_t group, const std::string& where, int rank, hsize_t* dims_out = nullptr) const {
    Handle ds = dataset(group, where);
    Handle type(H5Dget_type(ds.get()), H5Tclose);
    constexpr H5T_class_t kClass = std::is_floating_point_v<T> ? H5T_FLOAT : H5T_INTEGER;
    if (!type.valid() || H5Tget_class(type.get()) != kClass)
      fail(where, std::is_floating_point_v<T> ? "expected a floating-point dataset" : "expected an integer dataset");
    Handle space(H5Dget_space(ds.get()), H5Sclose);
    const int ndims = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (ndims != rank)
      fail(where, "expected a " + std::to_string(rank) + "-D dataset, found " + std::to_string(ndims) + "-D");
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space.get(), dims, nullptr);
    hsize_t total = 1;
    for (int i = 0; i < rank; ++i) {
      detail::check_declared_size(path_, where, dims[i], 1, file_bytes_);  // each bound first: no overflow below
      total *= dims[i];
    }
    detail::check_declared_size(path_, where, total, sizeof(T), file_bytes_);
    std::vector<T> out(total);
    if (total > 0 &&
        !read_chunks(ds.get(), type.get(), H5Type<T>::native(), sizeof(T), rank, dims,
                     reinterpret_cast<unsigned char*>(out.data())) &&
        H5Dread(ds.get(), H5Type<T>::native(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
      fail(where, "cannot read dataset: " + hdf5_error_detail());
    if (dims_out != nullptr) std::copy(dims, dims + rank, dims_out);
    return out;
  }

  std::vector<std::string> strings(hid_t group, const std::string& where) const {
    Handle ds = dataset(group, where);
    Handle type(H5Dget_type(ds.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) fail(where, "expected a string dataset");
    Handle space(H5Dget_space(ds.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1) fail(where, "expected a 1-D dataset");
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    std::vector<std::string> out;
    if (n <= 0) return out;
    // A variable-length string is stored as a 16-byte reference at least, a fixed one as its size.
    detail::check_declared_size(
        path_, where, static_cast<std::uint64_t>(n),
        H5Tis_variable_str(type.get()) > 0 ? 16 : std::max<std::size_t>(H5Tget_size(type.get()), 1), file_bytes_);
    out.reserve(static_cast<std::size_t>(n));
    const H5T_cset_t cset = H5Tget_cset(type.get());
    if (H5Tis_variable_str(type.get()) > 0) {
      Handle mem = string_mem_type(H5T_VARIABLE, cset, where);
      std::vector<char*> ptrs(static_cast<std::size_t>(n), nullptr);
      if (H5Dread(ds.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
        fail(where, "cannot read dataset: " + hdf5_error_detail());
      for (char* p : ptrs) out.emplace_back(p != nullptr ? p : "");
      reclaim(mem.get(), space.get(), ptrs.data());
    } else {
      const std::size_t size = H5Tget_size(type.get());
      Handle mem = string_mem_type(size, cset, where);
      std::vector<char> buf(size * static_cast<std::size_t>(n));
      if (H5Dread(ds.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
        fail(where, "cannot read dataset: " + hdf5_error_detail());
      for (hssize_t i = 0; i < n; ++i) out.push_back(fixed_string(buf.data() + i * size, size));
    }
    return out;
  }

  std::string string_attr(hid_t obj, const std::string& where, const char* name) const {
    const std::string what = attr_where(where, name);
    Handle attr = attribute(obj, what, name);
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) fail(what, "expected a string attribute");
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1) fail(what, "expected a scalar attribute");
    const H5T_cset_t cset = H5Tget_cset(type.get());
    if (H5Tis_variable_str(type.get()) > 0) {
      Handle mem = string_mem_type(H5T_VARIABLE, cset, what);
      char* ptr = nullptr;
      if (H5Aread(attr.get(), mem.get(), &ptr) < 0) fail(what, "cannot read attribute: " + hdf5_error_detail());
      std::string out = ptr != nullptr ? ptr : "";
      reclaim(mem.get(), space.get(), &ptr);
      return out;
    }
    const std::size_t size = H5Tget_size(type.get());
    Handle mem = string_mem_type(size, cset, what);
    std::vector<char> buf(size);
    if (H5Aread(attr.get(), mem.get(), buf.data()) < 0) fail(what, "cannot read attribute: " + hdf5_error_detail());
    return fixed_string(buf.data(), size);
  }

  template <class T>
  T scalar_attr(hid_t obj, const std::string& where, const char* name) const {
    const std::string what = attr_where(where, name);
    Handle attr = attribute(obj, what, name);
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER) fail(what, "expected an integer attribute");
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1) fail(what, "expected a scalar attribute");
    T value{};
    if (H5Aread(attr.get(), H5Type<T>::native(), &value) < 0)
      fail(what, "cannot read attribute: " + hdf5_error_detail());
    return value;
  }

  bool has_attr(hid_t obj, const char* name) const { return H5Aexists(obj, name) > 0; }
  bool has_link(const char* name) const { return has_link(file_, name); }
  bool has_link(hid_t group, const char* name) const { return H5Lexists(group, name, H5P_DEFAULT) > 0; }
  bool has_dataset(hid_t group, const char* name) const { return H5Lexists(group, name, H5P_DEFAULT) > 0; }

 private:
  static std::string attr_where(const std::string& where, const char* name) {
    return "attribute " + (where == "/" ? std::string("/") : where + "/") + "@" + name;
  }

  Handle dataset(hid_t group, const std::string& where) const {
    const char* name = where.c_str() + where.rfind('/') + 1;
    if (H5Lexists(group, name, H5P_DEFAULT) <= 0) fail(where, "missing dataset");
    const hid_t id = H5Dopen2(group, name, H5P_DEFAULT);
    if (id < 0) fail(where, "cannot open dataset: " + hdf5_error_detail());
    return Handle(id, H5Dclose);
  }

  Handle attribute(hid_t obj, const std::string& what, const char* name) const {
    if (H5Aexists(obj, name) <= 0) fail(what, "missing attribute");
    const hid_t id = H5Aopen(obj, name, H5P_DEFAULT);
    if (id < 0) fail(what, "cannot open attribute: " + hdf5_error_detail());
    return Handle(id, H5Aclose);
  }

  Handle string_mem_type(std::size_t size, H5T_cset_t cset, const std::string& where) const {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    if (!type.valid() || H5Tset_size(type.get(), size) < 0 || H5Tset_cset(type.get(), cset) < 0)
      fail(where, "cannot read strings: " + hdf5_error_detail());
    return type;
  }

  static void reclaim(hid_t mem_type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem_type, space, H5P_DEFAULT, buf);
#else
    H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buf);
#endif
  }

  static std::string fixed_string(const char* data, std::size_t size) {
    std::size_t len = 0;
    while (len < size && data[len] != '\0') ++len;
    while (len > 0 && data[len - 1] == ' ') --len;  // space-padded strings
    return std::string(data, len);
  }

  const std::string& path_;
  hid_t file_;
  std::uint64_t file_bytes_ = 0;  // the file's size: what its datasets may declare (file_bounds.hpp)
};

RunResult read_contents(const Reader& rd, hid_t file) {
  RunResult r;
  if (!rd.has_attr(file, "format_version")) rd.fail("", "not a headroom results file (no format_version attribute)");
  const auto version = rd.scalar_attr<std::int32_t>(file, "/", "format_version");
  if (version < 1 || version > kFormatVersion)
    rd.fail("attribute /@format_version", "format version " + std::to_string(version) +
                                              " is not supported (this build reads version " +
                                              std::to_string(kFormatVersion) + ")");
  r.scenario_name = rd.string_attr(file, "/", "scenario_name");
  r.scenario_text = rd.string_attr(file, "/", "scenario_text");
  r.scenario_file = rd.string_attr(file, "/", "scenario_file");
  r.policy = rd.string_attr(file, "/", "policy");
  r.version = rd.string_attr(file, "/", "version");
  r.fingerprint = rd.string_attr(file, "/", "fingerprint");
  r.seed = rd.scalar_attr<std::uint64_t>(file, "/", "seed");
  if (rd.has_attr(file, "currency")) r.currency = rd.string_attr(file, "/", "currency");
  r.events_processed = rd.scalar_attr<std::uint64_t>(file, "/", "events_processed");
  r.sim_start = rd.scalar_attr<std::int64_t>(file, "/", "sim_start");
  r.sim_end = rd.scalar_attr<std::int64_t>(file, "/", "sim_end");
  r.total_gpus = rd.scalar_attr<std::int64_t>(file, "/", "total_gpus");
  r.lost_gpu_ms = rd.scalar_attr<std::int64_t>(file, "/", "lost_gpu_ms");
  // The drill attributes and datasets came after format version 1: absent means none.
  auto optional_attr = [&](const char* name) {
    return rd.has_attr(file, name) ? rd.scalar_attr<std::int64_t>(file, "/", name) : std::int64_t{0};
  };
  r.failure_lost_gpu_ms = optional_attr("failure_lost_gpu_ms");
  r.bound_idle_gpu_ms = optional_attr("bound_idle_gpu_ms");
  r.node_outages = optional_attr("node_outages");
  r.jobs_killed = optional_attr("jobs_killed");
  r.job_retries = optional_attr("job_retries");
  r.jobs_failed_by_failure = optional_attr("jobs_failed_by_failure");
  r.jobs_failed_by_policy = optional_attr("jobs_failed_by_policy");
  r.unix_start = rd.has_attr(file, "unix_start") ? rd.scalar_attr<std::int64_t>(file, "/", "unix_start") : -1;
  if (rd.has_attr(file, "scorecard")) r.scorecard = scorecard_lines(rd.string_attr(file, "/", "scorecard"));

  // Reads the columns of one table into `rows`; every column must have the same length.
  auto read_table = [&](const char* group_name, auto& rows, auto for_each_column) {
    Handle g = rd.group(group_name);
    bool first = true;
    for_each_column([&](const char* name, auto member, bool) {
      using T = member_type_t<decltype(member)>;
      const std::string where = std::string("/") + group_name + "/" + name;
      const std::vector<T> col = rd.array<T>(g.get(), where, 1);
      if (first) {
        rows.resize(col.size());
        first = false;
      } else if (col.size() != rows.size()) {
        rd.fail(where, std::to_string(col.size()) + " rows, expected " + std::to_string(rows.size()));
      }
      for (std::size_t i = 0; i < col.size(); ++i) rows[i].*member = col[i];
    });
  };
  read_table("jobs", r.jobs, [](auto&& f) { for_each_job_column(f); });
  read_table("events", r.events, [](auto&& f) { for_each_event_column(f); });
  // Written since the GUI's cluster map; absent from older files.
  if (rd.has_link("placements")) read_table("placements", r.placements, [](auto&& f) { for_each_placement_column(f); });
  if (rd.has_link("services")) {
    read_table("services", r.services, [](auto&& f) { for_each_service_column(f); });
    Handle g = rd.group("services");
    const auto names = rd.strings(g.get(), "/services/name");
    const auto tenants = rd.strings(g.get(), "/services/tenant");
    if (names.size() != r.services.size() || tenants.size() != r.services.size())
      rd.fail("/services/name", "length differs from the other /services columns");
    for (std::size_t i = 0; i < names.size(); ++i) {
      r.services[i].name = names[i];
      r.services[i].tenant = tenants[i];
    }
  }
  if (rd.has_link("partitions")) {
    read_table("partitions", r.partitions, [](auto&& f) { for_each_partition_column(f); });
    Handle g = rd.group("partitions");
    const auto names = rd.strings(g.get(), "/partitions/name");
    const auto policies = rd.strings(g.get(), "/partitions/policy");
    if (names.size() != r.partitions.size() || policies.size() != r.partitions.size())
      rd.fail("/partitions/name", "length differs from the other /partitions columns");
    for (std::size_t i = 0; i < names.size(); ++i) {
      r.partitions[i].name = names[i];
      r.partitions[i].policy = policies[i];
    }
    Handle jobs = rd.group("jobs");
    r.job_partition = rd.array<std::uint32_t>(jobs.get(), "/jobs/partition", 1);
    if (r.job_partition.size() != r.jobs.size())
      rd.fail("/jobs/partition",
              std::to_string(r.job_partition.size()) + " rows, expected " + std::to_string(r.jobs.size()));
    // Node moves came after /partitions: absent means none.
    if (rd.has_link("moves")) read_table("moves", r.moves, [](auto&& f) { for_each_move_column(f); });
  }
  if (rd.has_link("placements")) {
    Handle g = rd.group("placements");
    for (const auto& [name, member] :
         {std::pair{"gpu_milli", &PlacementRecord::gpu_milli}, std::pair{"device", &PlacementRecord::device}}) {
      if (!rd.has_dataset(g.get(), name)) continue;
      const std::string where = std::string("/placements/") + name;
      const auto col = rd.array<std::int32_t>(g.get(), where, 1);
      if (col.size() != r.placements.size())
        rd.fail(where, std::to_string(col.size()) + " rows, expected " + std::to_string(r.placements.size()));
      for (std::size_t i = 0; i < col.size(); ++i) r.placements[i].*member = col[i];
    }
  }
  {
    Handle g = rd.group("events");
    if (rd.has_dataset(g.get(), "lost_gpu_ms")) {
      const auto col = rd.array<std::int64_t>(g.get(), "/events/lost_gpu_ms", 1);
      if (col.size() != r.events.size())
        rd.fail("/events/lost_gpu_ms",
                std::to_string(col.size()) + " rows, expected " + std::to_string(r.events.size()));
      for (std::size_t i = 0; i < col.size(); ++i) r.events[i].lost_gpu_ms = col[i];
    }
  }

  // Recovery per outage: written since issue #32; absent from older files.
  if (rd.has_link("outages") && rd.has_link("kills")) {
    read_table("outages", r.outages, [](auto&& f) { for_each_outage_column(f); });
    read_table("kills", r.kills, [](auto&& f) { for_each_kill_column(f); });
  }
  if (rd.has_link("outage_slo"))
    read_table("outage_slo", r.outage_slo, [](auto&& f) { for_each_outage_slo_column(f); });
  {
    Handle g = rd.group("timeseries");
    TimeSeries& ts = r.timeseries;
    ts.interval = rd.scalar_attr<std::int64_t>(g.get(), "/timeseries", "interval");
    ts.time = rd.array<Tick>(g.get(), "/timeseries/time", 1);
    ts.running_jobs = rd.array<std::int32_t>(g.get(), "/timeseries/running_jobs", 1);
    ts.pending_jobs = rd.array<std::int32_t>(g.get(), "/timeseries/pending_jobs", 1);
    auto matrix = [&](const char* name) {
      const std::string where = std::string("/timeseries/") + name;
      hsize_t dims[2] = {0, 0};
      auto values = rd.array<std::int32_t>(g.get(), where, 2, dims);
      if (dims[0] != ts.time.size())
        rd.fail(where, std::to_string(dims[0]) + " rows, expected " + std::to_string(ts.time.size()) +
                           " (one per sample time)");
      return values;
    };
    ts.pool_used_gpus = matrix("pool_used_gpus");
    ts.pool_free_gpus = matrix("pool_free_gpus");
    if (rd.has_dataset(g.get(), "pool_down_gpus")) ts.pool_down_gpus = matrix("pool_down_gpus");
    if (rd.has_dataset(g.get(), "pool_fragmented_gpus")) ts.pool_frag_gpus = matrix("pool_fragmented_gpus");
    ts.tenant_used_gpus = matrix("tenant_used_gpus");
    ts.tenant_pending_jobs = matrix("tenant_pending_jobs");
    ts.tenant_pending_gpus = matrix("tenant_pending_gpus");
    if (rd.has_link(g.get(), "pending_by_reason")) ts.pending_by_reason = matrix("pending_by_reason");
  }
  {
    Handle g = rd.group("meta");
    r.tenants = rd.strings(g.get(), "/meta/tenants");
    r.queues = rd.strings(g.get(), "/meta/queues");
    r.reasons = rd.strings(g.get(), "/meta/reasons");
    const auto names = rd.strings(g.get(), "/meta/pool_name");
    const auto types = rd.strings(g.get(), "/meta/pool_gpu_type");
    const auto nodes = rd.array<std::int32_t>(g.get(), "/meta/pool_nodes", 1);
    const auto per_node = rd.array<std::int32_t>(g.get(), "/meta/pool_gpus_per_node", 1);
    const std::size_t n = names.size();
    if (types.size() != n || nodes.size() != n || per_node.size() != n)
      rd.fail("/meta", "pool_name, pool_gpu_type, pool_nodes and pool_gpus_per_node differ in length");
    r.pools.resize(n);
    for (std::size_t i = 0; i < n; ++i) r.pools[i] = PoolInfo{names[i], types[i], nodes[i], per_node[i]};
    if (rd.has_dataset(g.get(), "pool_gpu_hour_price")) {
      const auto prices = rd.array<double>(g.get(), "/meta/pool_gpu_hour_price", 1);
      if (prices.size() != n) rd.fail("/meta/pool_gpu_hour_price", "length differs from /meta/pool_name");
      for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(prices[i]) || prices[i] < 0)
          rd.fail("/meta/pool_gpu_hour_price", "expected prices >= 0, got " + std::to_string(prices[i]));
        r.pools[i].gpu_hour_price = prices[i];
      }
    }
    if (rd.has_dataset(g.get(), "drill_start")) r.drill_start = rd.array<Tick>(g.get(), "/meta/drill_start", 1);
    if (rd.has_dataset(g.get(), "drill_recovered"))
      r.drill_recovered = rd.array<Tick>(g.get(), "/meta/drill_recovered", 1);
    if (r.drill_recovered.size() != r.drill_start.size())
      rd.fail("/meta/drill_recovered", "length differs from /meta/drill_start");
    if (rd.has_dataset(g.get(), "tenant_denied"))
      r.tenant_denied = rd.array<std::int64_t>(g.get(), "/meta/tenant_denied", 1);
  }
  return r;
}

}  // namespace

void write_hdf5(const RunResult& result, const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  bool created = false;
  try {
    bool compress = false;
    {
      std::lock_guard<std::mutex> lock(hdf5_mutex());
      QuietErrors quiet;
      compress = deflate_available();
    }
    const std::vector<Array> arrays = prepare_arrays(result, compress);

    std::lock_guard<std::mutex> lock(hdf5_mutex());
    QuietErrors quiet;
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    // SEMI: closing the file fails (instead of silently staying open) if an object leaked.
    if (!fapl.valid() || H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_SEMI) < 0) throw WriteFailure(hdf5_error_detail());
    Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    if (!file.valid()) throw WriteFailure("cannot create " + tmp + ": " + hdf5_error_detail());
    created = true;
    write_contents(file.get(), result, arrays);
    if (!file.close()) throw WriteFailure("cannot close " + tmp + ": " + hdf5_error_detail());
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw WriteFailure("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  } catch (const WriteFailure& e) {
    if (created) ::unlink(tmp.c_str());
    throw sim::InputError(path, 0, 0, "", std::string("cannot write results: ") + e.what());
  } catch (...) {
    if (created) ::unlink(tmp.c_str());
    throw;
  }
}

RunResult read_hdf5(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw sim::InputError(path, 0, 0, "", "cannot read results: no such file");
  if (std::filesystem::is_directory(status))
    throw sim::InputError(path, 0, 0, "", "cannot read results: is a directory");

  std::lock_guard<std::mutex> lock(hdf5_mutex());
  QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw sim::InputError(path, 0, 0, "", "cannot read results: not an HDF5 file");
  }
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (fapl.valid()) H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.valid() ? fapl.get() : H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw sim::InputError(path, 0, 0, "", "cannot read results: " + hdf5_error_detail());
  const Reader reader(path, file.get());
  RunResult r = read_contents(reader, file.get());
  check_result(r, path);  // every index within its table, before any reader of the result uses one
  return r;
}

}  // namespace headroom::results
