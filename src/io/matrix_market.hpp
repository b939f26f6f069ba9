// Matrix Market reader and writer (https://math.nist.gov/MatrixMarket/formats.html).
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "formats/sparse.hpp"

namespace sparsetc::detail {

struct MatrixMarketHeader {
  std::string object;    // "matrix"
  std::string format;    // "coordinate" or "array"
  std::string field;     // "real", "double", "integer", "pattern" ("complex" is refused)
  std::string symmetry;  // "general", "symmetric", "skew-symmetric", "hermitian"
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t entries = 0;   // entries stored in the file
};

// Reads a file; a name ending in ".gz" is decompressed on the fly (zlib). Symmetric,
// skew-symmetric and hermitian files are expanded to both triangles (diagonal once); pattern
// entries get 1; array (dense) files keep every stored entry, zeros included. Entries are
// returned zero-based in file order (duplicates kept: the caller decides).
// Errors: IO_ERROR when the file cannot be opened or read; FILE_FORMAT_ERROR with
// "<name>:<line>: <what>" for a bad banner, size line, entry, index out of range, too few or too
// many entries, or a complex field (NOT_SUPPORTED).
CooMatrix<double> read_matrix_market(const std::string& path, MatrixMarketHeader* header = nullptr);
CooMatrix<double> read_matrix_market(std::istream& in, const std::string& name, MatrixMarketHeader* header = nullptr);

// Writes "%%MatrixMarket matrix coordinate real general", one-based, 17 significant digits
// (round-trips doubles exactly); a path ending in ".gz" is gzip-compressed. IO_ERROR when the file
// cannot be written; INVALID_VALUE for a malformed CsrMatrix (nothing is written then).
void write_matrix_market(const std::string& path, const CsrMatrix<double>& matrix);
void write_matrix_market(std::ostream& out, const CsrMatrix<double>& matrix);

}  // namespace sparsetc::detail
