#include "traces/line_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/errors.hpp"
#include "sim/interrupt.hpp"

namespace headroom::traces::detail {

namespace {

constexpr std::size_t kOutputChunk = std::size_t{4} << 20;
constexpr std::size_t kInputChunk = std::size_t{1} << 20;
constexpr std::size_t kMinChunk = std::size_t{64} << 10;
constexpr std::size_t kMaxLine = std::size_t{64} << 20;

bool is_gzip_magic(const char* p, std::size_t n) {
  return n >= 2 && static_cast<unsigned char>(p[0]) == 0x1f && static_cast<unsigned char>(p[1]) == 0x8b;
}

}  // namespace

struct LineReader::Gzip {
  z_stream zs{};
  std::vector<unsigned char> in;
  bool in_eof = false;
  bool member_ended = false;
  bool done = false;
};

LineReader::LineReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw ReadError(path_, 0, 0, "", std::string("cannot open trace file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw ReadError(path_, 0, 0, "", std::string("cannot open trace file: ") + std::strerror(EISDIR));
  }
  try {
    const auto file_size = static_cast<std::size_t>(std::max<off_t>(st.st_size, 0));
    file_size_ = file_size;
    buf_.resize(std::clamp(file_size + 1, kMinChunk, kOutputChunk));
    while (end_ < 2) {
      const std::size_t n = read_raw(buf_.data() + end_, buf_.size() - end_);
      if (n == 0) break;
      end_ += n;
    }
    if (!is_gzip_magic(buf_.data(), end_)) return;

    auto gzip = std::make_unique<Gzip>();
    gzip->in.assign(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(end_));
    gzip->in.resize(std::max(end_, std::clamp(file_size, kMinChunk, kInputChunk)));
    gzip->zs.next_in = gzip->in.data();
    gzip->zs.avail_in = static_cast<uInt>(end_);
    buf_.resize(std::clamp(file_size * 8, kMinChunk, kOutputChunk));
    end_ = 0;
    if (inflateInit2(&gzip->zs, 15 + 16) != Z_OK)
      throw ReadError(path_, 0, 0, "", "cannot initialise gzip decompression");
    gzip_ = std::move(gzip);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

LineReader::~LineReader() {
  if (gzip_) inflateEnd(&gzip_->zs);
  if (fd_ >= 0) ::close(fd_);
}

std::size_t LineReader::read_raw(char* out, std::size_t capacity) {
  for (;;) {
    const ssize_t n = ::read(fd_, out, capacity);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR)
      throw ReadError(path_, 0, 0, "", std::string("cannot read trace file: ") + std::strerror(errno));
  }
}

void LineReader::fail_gzip(const char* detail) const {
  throw ReadError(path_, 0, 0, "",
                  "truncated or corrupt gzip data (" + std::string(detail) +
                      (line_ == 0 ? std::string(", before the first line") : " after line " + std::to_string(line_)) +
                      ")");
}

std::size_t LineReader::inflate_into(char* out, std::size_t capacity) {
  Gzip& g = *gzip_;
  z_stream& zs = g.zs;
  zs.next_out = reinterpret_cast<unsigned char*>(out);
  zs.avail_out = static_cast<uInt>(capacity);
  while (zs.avail_out > 0 && !g.done) {
    if (zs.avail_in == 0 && !g.in_eof) {
      const std::size_t n = read_raw(reinterpret_cast<char*>(g.in.data()), g.in.size());
      if (n == 0) g.in_eof = true;
      zs.next_in = g.in.data();
      zs.avail_in = static_cast<uInt>(n);
    }
    if (g.member_ended) {
      // Another gzip member may follow; anything else after the first member is ignored, as gzip does.
      if (zs.avail_in == 0) {
        if (g.in_eof) g.done = true;
        continue;
      }
      if (zs.next_in[0] != 0x1f) {
        g.done = true;
        continue;
      }
      inflateReset(&zs);
      g.member_ended = false;
    }
    const int ret = inflate(&zs, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) {
      g.member_ended = true;
    } else if (ret == Z_BUF_ERROR) {
      if (zs.avail_in != 0 || !g.in_eof) fail_gzip("no progress");
      fail_gzip("unexpected end of file");
    } else if (ret != Z_OK) {
      fail_gzip(zs.msg != nullptr ? zs.msg : "invalid data");
    }
  }
  return capacity - zs.avail_out;
}

bool LineReader::fill() {
  if (eof_) return false;
  sim::check_interrupt();  // SIGINT / SIGTERM stop an import between chunks (sim/interrupt.hpp)
  // The lines read are dropped from the front only once the buffer is full: until then it still
  // holds the file from its first byte (restart()).
  if (begin_ > 0 && (end_ == buf_.size() || !start_kept_)) {
    start_kept_ = false;
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) {
    if (buf_.size() >= kMaxLine)
      throw ReadError(path_, line_ + 1, 0, "", "line longer than " + std::to_string(kMaxLine >> 20) + " MiB");
    buf_.resize(buf_.size() * 2);
  }
  const std::size_t n =
      gzip_ ? inflate_into(buf_.data() + end_, buf_.size() - end_) : read_raw(buf_.data() + end_, buf_.size() - end_);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

bool LineReader::restart() {
  if (!start_kept_) return false;
  begin_ = 0;
  scanned_ = 0;
  line_ = 0;
  return true;
}

bool LineReader::next_line(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const std::size_t avail = end_ - begin_;
    const void* nl = avail > scanned_ ? std::memchr(start + scanned_, '\n', avail - scanned_) : nullptr;
    std::size_t len = 0;
    if (nl != nullptr) {
      len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      begin_ += len + 1;
    } else {
      scanned_ = avail;
      if (fill()) continue;
      if (avail == 0) return false;
      start = buf_.data() + begin_;
      len = avail;
      begin_ = end_;
    }
    scanned_ = 0;
    if (len > 0 && start[len - 1] == '\r') --len;
    line = std::string_view(start, len);
    if (line_ == 0 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    ++line_;
    return true;
  }
}

void reread(std::optional<LineReader>& in, const std::string& what, const std::string& then) {
  if (in->restart()) return;
  const std::string path = in->path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw sim::InputError(path, in->line_number(), 0, "",
                          what + " was found only past the first 64 KiB of a pipe, which cannot be read again" + then);
  in.emplace(path);
}

}  // namespace headroom::traces::detail
