// Shared helpers of the test programs: where the real matrices are, fresh random inputs, and an
// independent float64 reference (deliberately naive: it shares no code with the engine).
#pragma once

#include <gtest/gtest.h>
#include <sparsetc/sparsetc_types.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace sparsetc_test {

// Directory of the SuiteSparse matrices: $SPARSETC_MATRIX_DIR, else the build's default.
inline std::string matrix_dir() {
  if (const char* env = std::getenv("SPARSETC_MATRIX_DIR")) return env;
#ifdef SPARSETC_TEST_MATRIX_DIR
  return SPARSETC_TEST_MATRIX_DIR;
#else
  return "../shared/matrices";
#endif
}

// Path of a matrix file, or "" when it is not there (tests then GTEST_SKIP).
inline std::string matrix_path(const std::string& name) {
  for (const char* suffix : {".mtx.gz", ".mtx"}) {
    std::string path = matrix_dir() + "/" + name + suffix;
    if (std::ifstream(path).good()) return path;
  }
  return "";
}

// A seed that differs between runs (fresh inputs every time) but is printed for reproduction;
// SPARSETC_TEST_SEED pins it.
inline uint64_t fresh_seed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("SPARSETC_TEST_SEED")) return uint64_t(std::strtoull(env, nullptr, 10));
    return uint64_t(std::random_device{}()) << 32 | std::random_device{}();
  }();
  static uint64_t counter = 0;
  return seed + 0x9e3779b97f4a7c15ull * ++counter;
}

// Triplets (row, col) -> value, zero-based; the simplest possible sparse matrix.
struct Triplets {
  int64_t rows = 0, cols = 0;
  std::map<std::pair<int64_t, int64_t>, double> entries;
};

// Random matrix with the given density; some empty rows when allow_empty_rows.
inline Triplets random_triplets(int64_t rows, int64_t cols, double density, uint64_t seed,
                                bool allow_empty_rows = true) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Triplets t{rows, cols, {}};
  for (int64_t i = 0; i < rows; ++i) {
    if (allow_empty_rows && u(rng) < 0.1) continue;
    for (int64_t j = 0; j < cols; ++j)
      if (u(rng) < density) t.entries[{i, j}] = (u(rng) < 0.5 ? -1 : 1) * (0.5 + u(rng));
  }
  return t;
}

// Zero-based CSR arrays of a triplet set, in any integer types.
template <typename Offset = int64_t, typename Index = int32_t>
struct CsrArrays {
  std::vector<Offset> row_ptr;
  std::vector<Index> col;
  std::vector<double> val;
};
template <typename Offset = int64_t, typename Index = int32_t>
CsrArrays<Offset, Index> to_csr(const Triplets& t, int base = 0) {
  CsrArrays<Offset, Index> a;
  a.row_ptr.assign(size_t(t.rows + 1), Offset(base));
  for (const auto& [rc, v] : t.entries) a.row_ptr[size_t(rc.first + 1)]++;
  for (int64_t i = 0; i < t.rows; ++i) a.row_ptr[size_t(i + 1)] += a.row_ptr[size_t(i)] - Offset(base);
  for (const auto& [rc, v] : t.entries) {
    a.col.push_back(Index(rc.second + base));
    a.val.push_back(v);
  }
  return a;
}

// Integers as the bytes of a sparsetc index type (int32 or int64): the index arrays a test hands
// the C API in the type it names.
inline std::vector<uint8_t> index_bytes(const std::vector<int64_t>& x, sparsetc_index_type_t type) {
  const size_t width = type == SPARSETC_INDEX_64 ? 8 : 4;
  std::vector<uint8_t> out(x.size() * width);
  for (size_t i = 0; i < x.size(); ++i) {
    const int32_t narrow = int32_t(x[i]);
    std::memcpy(out.data() + width * i, width == 8 ? static_cast<const void*>(&x[i]) : &narrow, width);
  }
  return out;
}

// Dense row-major float64 product reference: C = alpha * A * B + beta * C0.
inline std::vector<double> reference_spmm(const Triplets& A, const std::vector<double>& B_rowmajor, int64_t n,
                                          double alpha, double beta, const std::vector<double>& C0_rowmajor) {
  std::vector<double> C(size_t(A.rows * n), 0.0);
  for (const auto& [rc, v] : A.entries)
    for (int64_t j = 0; j < n; ++j) C[size_t(rc.first * n + j)] += v * B_rowmajor[size_t(rc.second * n + j)];
  for (size_t k = 0; k < C.size(); ++k) C[k] = alpha * C[k] + (beta != 0 ? beta * C0_rowmajor[k] : 0.0);
  return C;
}

// Sparse product reference: structural entries of A*B with their float64 values.
inline Triplets reference_spgemm(const Triplets& A, const Triplets& B) {
  std::map<int64_t, std::vector<std::pair<int64_t, double>>> brows;
  for (const auto& [rc, v] : B.entries) brows[rc.first].push_back({rc.second, v});
  Triplets C{A.rows, B.cols, {}};
  for (const auto& [rc, v] : A.entries)
    for (const auto& [j, w] : brows[rc.second]) C.entries[{rc.first, j}] += v * w;
  return C;
}

inline double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace sparsetc_test
