#include "io/line_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace sparsetc::detail {

namespace {

constexpr size_t kInitialBuffer = size_t(1) << 20;  // large chunks: few calls into zlib
constexpr unsigned kZlibBuffer = 256u << 10;        // zlib's own input buffer (default 8 KiB)

class GzSource final : public ByteSource {
 public:
  GzSource(gzFile file, std::string path) : file_(file), path_(std::move(path)) {}
  ~GzSource() override { gzclose(file_); }
  GzSource(const GzSource&) = delete;
  GzSource& operator=(const GzSource&) = delete;

  size_t read(char* dst, size_t capacity) override {
    const unsigned want = unsigned(std::min<size_t>(capacity, INT_MAX));
    const int got = gzread(file_, dst, want);
    if (got < 0) fail_read();
    // gzread reports a truncated stream as a plain end of input: only gzerror tells them apart.
    if (got == 0) {
      int errnum = Z_OK;
      gzerror(file_, &errnum);
      if (errnum != Z_OK) fail_read();
    }
    return size_t(got);
  }

 private:
  [[noreturn]] void fail_read() {
    int errnum = Z_OK;
    const char* message = gzerror(file_, &errnum);
    fail(SPARSETC_STATUS_IO_ERROR, "cannot read '", path_, "': ",
         errnum == Z_ERRNO ? std::strerror(errno) : message);
  }

  gzFile file_;
  std::string path_;
};

class StreamSource final : public ByteSource {
 public:
  StreamSource(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

  size_t read(char* dst, size_t capacity) override {
    in_.read(dst, std::streamsize(capacity));
    const size_t got = size_t(in_.gcount());
    // Nothing read without reaching the end: the stream was already failed or broke.
    if (in_.bad() || (got == 0 && !in_.eof()))
      fail(SPARSETC_STATUS_IO_ERROR, "cannot read '", name_, "'");
    return got;
  }

 private:
  std::istream& in_;
  std::string name_;
};

// A line without the '\r' of a CRLF ending.
std::string_view trim_cr(const char* begin, size_t length) {
  if (length > 0 && begin[length - 1] == '\r') --length;
  return {begin, length};
}

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path) {
  errno = 0;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr)
    fail(SPARSETC_STATUS_IO_ERROR, "cannot open '", path, "': ", errno != 0 ? std::strerror(errno) : "out of memory");
  gzbuffer(file, kZlibBuffer);
  return std::make_unique<GzSource>(file, path);
}

std::unique_ptr<ByteSource> stream_source(std::istream& in, const std::string& name) {
  return std::make_unique<StreamSource>(in, name);
}

LineReader::LineReader(std::unique_ptr<ByteSource> source)
    : source_(std::move(source)), buffer_(kInitialBuffer) {}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* base = buffer_.data();
    const size_t unscanned = end_ - begin_ - scanned_;
    if (const void* hit = std::memchr(base + begin_ + scanned_, '\n', unscanned)) {
      const size_t newline = size_t(static_cast<const char*>(hit) - base);
      line = trim_cr(base + begin_, newline - begin_);
      begin_ = newline + 1;
      scanned_ = 0;
      ++line_number_;
      return true;
    }
    scanned_ = end_ - begin_;
    if (refill()) continue;
    if (begin_ == end_) return false;
    // The last line has no newline.
    line = trim_cr(buffer_.data() + begin_, end_ - begin_);
    begin_ = end_;
    scanned_ = 0;
    ++line_number_;
    return true;
  }
}

// Moves the unread bytes to the front (growing the buffer for a line longer than it) and reads
// more; false at the end of the input.
bool LineReader::refill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const size_t got = source_->read(buffer_.data() + end_, buffer_.size() - end_);
  if (got == 0) {
    eof_ = true;
    return false;
  }
  end_ += got;
  return true;
}

}  // namespace sparsetc::detail
