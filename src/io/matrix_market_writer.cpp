// The Matrix Market writer: coordinate real general, one-based, 17 significant digits.
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "io/matrix_market.hpp"

namespace sparsetc::detail {

namespace {

constexpr size_t kChunk = size_t(1) << 20;  // formatted bytes handed to the sink at a time

// The writer trusts nothing it would turn into an unreadable file.
void check_csr(const CsrMatrix<double>& m) {
  const auto bad = [](const char* what) { fail(SPARSETC_STATUS_INVALID_VALUE, "write_matrix_market: ", what); };
  if (m.rows < 0 || m.cols < 0) bad("negative dimensions");
  if (int64_t(m.row_ptr.size()) != m.rows + 1) bad("row_ptr must hold rows + 1 offsets");
  if (m.values.size() != m.col_idx.size()) bad("col_idx and values differ in length");
  if (m.row_ptr.front() != 0 || m.row_ptr.back() != m.nnz()) bad("row_ptr must run from 0 to nnz");
  for (int64_t i = 0; i < m.rows; ++i)
    if (m.row_ptr[size_t(i)] > m.row_ptr[size_t(i + 1)]) bad("row_ptr is not monotone");
  for (const int64_t j : m.col_idx)
    if (j < 0 || j >= m.cols) bad("column index out of range");
}

// Formats into [at, end - 1), so one separator always fits after the number.
template <typename... Format>
char* append_number(char* at, char* end, Format... format) {
  const std::to_chars_result r = std::to_chars(at, end - 1, format...);
  require(r.ec == std::errc(), SPARSETC_STATUS_INTERNAL_ERROR, "a number does not fit the line buffer");
  return r.ptr;
}

// Calls sink(const char*, size_t) with the whole file, in chunks of about kChunk bytes.
template <typename Sink>
void format_matrix(const CsrMatrix<double>& m, Sink&& sink) {
  check_csr(m);
  std::string chunk = "%%MatrixMarket matrix coordinate real general\n";
  chunk += std::to_string(m.rows) + " " + std::to_string(m.cols) + " " + std::to_string(m.nnz()) + "\n";
  char line[96];  // two 20-digit integers and a 24-character double, with separators
  for (int64_t i = 0; i < m.rows; ++i) {
    for (int64_t k = m.row_ptr[size_t(i)]; k < m.row_ptr[size_t(i + 1)]; ++k) {
      char* at = append_number(line, line + sizeof line, i + 1);
      *at++ = ' ';
      at = append_number(at, line + sizeof line, m.col_idx[size_t(k)] + 1);
      *at++ = ' ';
      // Same digits as printf("%.17g"): enough for every double to read back exactly.
      at = append_number(at, line + sizeof line, m.values[size_t(k)], std::chars_format::general, 17);
      *at++ = '\n';
      chunk.append(line, size_t(at - line));
      if (chunk.size() >= kChunk) {
        sink(chunk.data(), chunk.size());
        chunk.clear();
      }
    }
  }
  sink(chunk.data(), chunk.size());
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_gzip(const std::string& path, const CsrMatrix<double>& matrix) {
  check_csr(matrix);  // before the file is created
  errno = 0;
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr)
    fail(SPARSETC_STATUS_IO_ERROR, "cannot open '", path, "' for writing: ", errno ? std::strerror(errno) : "out of memory");
  bool ok = true;
  try {
    format_matrix(matrix, [&](const char* data, size_t size) {
      if (ok && size > 0) ok = gzwrite(file, data, unsigned(size)) == int(size);
    });
  } catch (...) {
    gzclose(file);
    throw;
  }
  const int closed = gzclose(file);
  if (!ok || closed != Z_OK) fail(SPARSETC_STATUS_IO_ERROR, "cannot write '", path, "'");
}

void write_plain(const std::string& path, const CsrMatrix<double>& matrix) {
  check_csr(matrix);  // before the file is created
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    fail(SPARSETC_STATUS_IO_ERROR, "cannot open '", path, "' for writing: ", errno ? std::strerror(errno) : "unknown error");
  format_matrix(matrix, [&](const char* data, size_t size) { out.write(data, std::streamsize(size)); });
  out.close();
  if (!out) fail(SPARSETC_STATUS_IO_ERROR, "cannot write '", path, "'");
}

}  // namespace

void write_matrix_market(const std::string& path, const CsrMatrix<double>& matrix) {
  if (ends_with(path, ".gz"))
    write_gzip(path, matrix);
  else
    write_plain(path, matrix);
}

void write_matrix_market(std::ostream& out, const CsrMatrix<double>& matrix) {
  format_matrix(matrix, [&](const char* data, size_t size) { out.write(data, std::streamsize(size)); });
  if (!out) fail(SPARSETC_STATUS_IO_ERROR, "cannot write Matrix Market data: the stream failed");
}

}  // namespace sparsetc::detail
