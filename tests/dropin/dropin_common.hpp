// Helpers of the drop-in test programs (tests/dropin): random CSR inputs, float64 references,
// result files and their comparison. Nothing here names cuSPARSE, so the same programs compile
// against cuSPARSE and, renamed, against sparsetc_cusparse.h.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace dropin {

constexpr int kSkipped = 77;  // CTest's SKIP_RETURN_CODE

inline void exit_if_no_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: skipped\n");
    std::exit(kSkipped);
  }
}

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    const cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// Host CSR, zero-based, sorted unique columns, with empty rows and uneven lengths.
struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> offsets, columns;
  std::vector<double> values;
  int64_t nnz() const { return int64_t(columns.size()); }
};

inline Csr random_csr(int64_t rows, int64_t cols, int mean_per_row, std::mt19937_64& rng) {
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.offsets.assign(size_t(rows) + 1, 0);
  std::uniform_int_distribution<int> length(0, 2 * mean_per_row);
  std::uniform_int_distribution<int64_t> column(0, cols - 1);
  std::uniform_real_distribution<double> value(0.5, 1.5);
  std::bernoulli_distribution empty(0.1), negative(0.5);
  std::vector<int32_t> row;
  for (int64_t i = 0; i < rows; ++i) {
    row.clear();
    const int n = empty(rng) ? 0 : length(rng);
    for (int j = 0; j < n; ++j) row.push_back(int32_t(column(rng)));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    for (int32_t c : row) {
      a.columns.push_back(c);
      a.values.push_back(negative(rng) ? -value(rng) : value(rng));
    }
    a.offsets[size_t(i) + 1] = int32_t(a.columns.size());
  }
  return a;
}

// C (m x n, column-major) = A * B with B column-major (k x n), in float64.
inline std::vector<double> reference_spmm(const Csr& a, const std::vector<double>& b, int64_t n) {
  std::vector<double> c(size_t(a.rows * n), 0.0);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int32_t p = a.offsets[i]; p < a.offsets[i + 1]; ++p)
      for (int64_t j = 0; j < n; ++j) c[size_t(i + j * a.rows)] += a.values[p] * b[size_t(a.columns[p] + j * a.cols)];
  return c;
}

// alpha * A * B in float64, every structural entry kept, rows sorted.
inline Csr reference_spgemm(const Csr& a, const Csr& b, double alpha) {
  Csr c;
  c.rows = a.rows;
  c.cols = b.cols;
  c.offsets.assign(size_t(a.rows) + 1, 0);
  std::vector<double> accumulator(size_t(b.cols), 0.0);
  std::vector<char> seen(size_t(b.cols), 0);
  std::vector<int32_t> row;
  for (int64_t i = 0; i < a.rows; ++i) {
    row.clear();
    for (int32_t p = a.offsets[i]; p < a.offsets[i + 1]; ++p)
      for (int32_t q = b.offsets[a.columns[p]]; q < b.offsets[a.columns[p] + 1]; ++q) {
        const int32_t j = b.columns[q];
        if (!seen[j]) {
          seen[j] = 1;
          row.push_back(j);
        }
        accumulator[j] += a.values[p] * b.values[q];
      }
    std::sort(row.begin(), row.end());
    for (int32_t j : row) {
      c.columns.push_back(j);
      c.values.push_back(alpha * accumulator[j]);
      accumulator[j] = 0.0;
      seen[j] = 0;
    }
    c.offsets[size_t(i) + 1] = int32_t(c.columns.size());
  }
  return c;
}

// |got - want| <= rtol * scale + rtol, scale the largest |want| of the whole result.
inline bool close(const std::vector<double>& got, const std::vector<double>& want, double rtol, const char* what) {
  if (got.size() != want.size()) {
    std::fprintf(stderr, "%s: %zu values, expected %zu\n", what, got.size(), want.size());
    return false;
  }
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= rtol * (scale + 1.0))) {
      std::fprintf(stderr, "%s: entry %zu is %.9g, expected %.9g\n", what, i, got[i], want[i]);
      return false;
    }
  }
  return true;
}

inline void write_numbers(const std::string& path, const std::vector<double>& numbers) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  for (double x : numbers) std::fprintf(f, "%.17g\n", x);
  std::fclose(f);
}

inline std::vector<double> read_numbers(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> numbers;
  double x;
  while (in >> x) numbers.push_back(x);
  return numbers;
}

// `program --compare a b rtol`: the results of two runs agree (exit 0) or not (exit 1).
inline int compare_files(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s --compare <a> <b> <rtol>\n", argv[0]);
    return 2;
  }
  const std::vector<double> a = read_numbers(argv[2]), b = read_numbers(argv[3]);
  if (a.empty()) {
    std::fprintf(stderr, "%s is empty\n", argv[2]);
    return 1;
  }
  return close(b, a, std::atof(argv[4]), "results of the two runs") ? 0 : 1;
}

}  // namespace dropin
