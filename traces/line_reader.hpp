#pragma once

// Private to traces/: streams the lines of a plain or gzip-compressed file.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/errors.hpp"

namespace headroom::traces::detail {

// The file itself cannot be read (missing, truncated or corrupt gzip, a line too long): never a
// bad row that --skip-bad-rows may pass over.
class ReadError : public sim::InputError {
 public:
  using sim::InputError::InputError;
};

// Reads a file in large chunks, inflating it when it starts with the gzip magic bytes (several
// concatenated gzip members are read as one stream). Lines are returned without their "\n" or
// "\r\n"; a UTF-8 byte-order mark at the start of the file is dropped. Throws sim::InputError
// when the file cannot be opened or read, and on truncated or corrupt gzip data.
class LineReader {
 public:
  explicit LineReader(std::string path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The view stays valid until the next call. Returns false at the end of the file.
  bool next_line(std::string_view& line);
  int line_number() const { return line_; }
  const std::string& path() const { return path_; }
  bool compressed() const { return gzip_ != nullptr; }
  // Bytes in the file as stored (compressed when gzip); 0 when unknown (a pipe).
  std::size_t file_size() const { return file_size_; }
  // Goes back to the first line, when the buffer still holds the file from its first byte (no line
  // read so far has been dropped from it): a pipe cannot be opened twice, so a format is detected
  // on the lines the import then reads again. False when that start is gone.
  bool restart();

 private:
  struct Gzip;

  bool fill();
  std::size_t read_raw(char* out, std::size_t capacity);
  std::size_t inflate_into(char* out, std::size_t capacity);
  [[noreturn]] void fail_gzip(const char* detail) const;

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<Gzip> gzip_;
  std::vector<char> buf_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t scanned_ = 0;  // bytes after begin_ already known to hold no '\n'
  bool eof_ = false;
  int line_ = 0;
  std::size_t file_size_ = 0;
  bool start_kept_ = true;  // buf_[0, end_) is the file's (inflated) text from its first byte
};

// Back to the first line of `in` after a look at the file's start (a format, a header): restart()
// while the buffer holds that start, else the file opened again. A pipe cannot be opened again:
// then an error at the line reached, "<what> was found only past the first 64 KiB of a pipe,
// which cannot be read again" and `then` after it.
void reread(std::optional<LineReader>& in, const std::string& what, const std::string& then = "");

}  // namespace headroom::traces::detail
