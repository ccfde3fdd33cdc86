#pragma once

// Internal to results/: what a result or table file of a given size can hold, checked before a
// dataset is read into memory. A damaged or crafted file may declare a dataset of 2^40 rows in
// 33 KB (chunks never written read as the fill value): reading it would ask for terabytes.
//
// Every dataset headroom writes is stored plain or deflated (zlib packs at most 1,032:1), and a
// dataset of fill values alone (all chunks left out) has as many rows as the others of its group,
// which are stored. So no dataset of a real file holds more than 1,032 bytes per byte of the file.

#include <cstdint>
#include <string>

#include "sim/errors.hpp"
#include "sim/text.hpp"

namespace headroom::results::detail {

inline constexpr std::uint64_t kMaxInflation = 1032;
inline constexpr std::uint64_t kSmallDataset = std::uint64_t{1} << 20;  // always allowed (bytes)

// Throws sim::InputError at `path` and `where` when `elements` of `element_bytes` each could not be
// in a file of `file_bytes`.
inline void check_declared_size(const std::string& path, const std::string& where, std::uint64_t elements,
                                std::uint64_t element_bytes, std::uint64_t file_bytes) {
  const std::uint64_t limit = kSmallDataset + kMaxInflation * file_bytes;
  const bool over = element_bytes != 0 && elements > limit / element_bytes;
  if (!over) return;
  throw sim::InputError(path, 0, 0, where,
                        "declares " +
                            sim::thousands(static_cast<std::int64_t>(
                                std::min<std::uint64_t>(elements, static_cast<std::uint64_t>(INT64_MAX)))) +
                            " values, more than a file of " + sim::thousands(static_cast<std::int64_t>(file_bytes)) +
                            " bytes can hold (deflate packs at most 1,032:1): a damaged or crafted file");
}

}  // namespace headroom::results::detail
