// Fast line-by-line reading of text files, gzip-compressed or not, and of streams: the input is
// read in large chunks and split in place, so a line costs one memchr and no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sparsetc::detail {

// A source of raw bytes. read() returns 0 only at the end of the input and throws Error
// (SPARSETC_STATUS_IO_ERROR) when the input cannot be read.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(char* dst, size_t capacity) = 0;
};

// A file through zlib: gzip data is decompressed, anything else is passed through unchanged.
// Throws IO_ERROR naming the path when the file cannot be opened.
std::unique_ptr<ByteSource> open_file_source(const std::string& path);

// A stream the caller owns (it must outlive the source); name is used in error messages.
std::unique_ptr<ByteSource> stream_source(std::istream& in, const std::string& name);

// Splits a byte source into lines. The view next() returns stays valid until the next call.
class LineReader {
 public:
  explicit LineReader(std::unique_ptr<ByteSource> source);

  // The next line without its "\n" or "\r\n"; false at the end of the input.
  bool next(std::string_view& line);

  // 1-based number of the line last returned (0 before the first).
  int64_t line_number() const { return line_number_; }

 private:
  bool refill();

  std::unique_ptr<ByteSource> source_;
  std::vector<char> buffer_;
  size_t begin_ = 0;    // start of the unread bytes
  size_t scanned_ = 0;  // bytes after begin_ already known to hold no '\n'
  size_t end_ = 0;      // end of the valid bytes
  bool eof_ = false;
  int64_t line_number_ = 0;
};

}  // namespace sparsetc::detail
