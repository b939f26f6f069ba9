// Shared pieces of the randomised tests (test_gpu_spmm_fuzz.cpp, test_gpu_spgemm_fuzz.cpp): a
// seeded draw, sparse structures the kernels treat differently, bytes in host or device memory, and
// a sparse matrix in a drawn format (CSR, CSC, COO in any order), index widths, base and ownership,
// with two sets of values to switch between through sparsetc_matrix_set_values.
#pragma once

#include <sparsetc/sparsetc.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dense_values.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

namespace sparsetc_test {

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  bool chance(double p) { return uniform() < p; }
  int64_t between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  template <typename T>
  T pick(std::initializer_list<T> options) {
    return *(options.begin() + between(0, int64_t(options.size()) - 1));
  }
  double value() { return (chance(0.5) ? -1 : 1) * (0.25 + uniform()); }
  std::mt19937_64& engine() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// Rounds of a randomised test: SPARSETC_FUZZ_ROUNDS, else `fallback`.
inline int fuzz_rounds(int fallback) {
  const char* env = std::getenv("SPARSETC_FUZZ_ROUNDS");
  return env ? std::max(1, std::atoi(env)) : fallback;
}

// What a randomised test ran, refused (and why) and got wrong, summed over its rounds and printed
// at the end.
class FuzzTally {
 public:
  // One algorithm's outcome on a case: counted, and " refused" / "" for the round's line.
  std::string record(const std::string& algorithm, const std::string& what, sparsetc_status_t status,
                     const std::string& reason, bool correct) {
    if (!correct) wrong_.push_back(what + ": " + algorithm + " (" + reason + ")");
    if (status == SPARSETC_STATUS_SUCCESS) {
      ++ran_[algorithm];
      return "";
    }
    ++refused_[algorithm + ": " + reason.substr(0, 100)];
    return ", " + algorithm + " refused";
  }
  void print() const {
    std::cout << "[ fuzz ] ran:";
    for (const auto& [algorithm, count] : ran_) std::cout << " " << algorithm << " " << count;
    std::cout << "\n";
    for (const auto& [why, count] : refused_) std::cout << "[ fuzz ] refused " << count << "x " << why << "\n";
    for (const std::string& w : wrong_) std::cout << "[ fuzz ] WRONG " << w << "\n";
  }

 private:
  std::map<std::string, int> ran_, refused_;
  std::vector<std::string> wrong_;
};

// A matrix of rows x cols in one of the structures the kernels treat differently; `name` says which.
// max_row bounds the longest of the power-law rows.
inline Triplets draw_structure(Draw& d, int64_t rows, int64_t cols, std::string& name, int64_t max_row = 600) {
  Triplets t{rows, cols, {}};
  if (rows == 0 || cols == 0) {
    name = "empty shape";
    return t;
  }
  auto add = [&](int64_t i, int64_t j) { t.entries[{i, j}] = d.value(); };
  switch (int(d.between(0, 7))) {
    case 0: {  // uniform, some empty rows
      const double per_row = std::min<double>(double(cols), 1 + d.uniform() * 40);
      name = "uniform " + std::to_string(int(per_row)) + "/row";
      for (int64_t i = 0; i < rows; ++i) {
        if (d.chance(0.1)) continue;
        for (int64_t e = 0; e < int64_t(per_row); ++e) add(i, d.between(0, cols - 1));
      }
      break;
    }
    case 1: {  // power-law row lengths: a few rows with hundreds of entries
      name = "power-law rows";
      for (int64_t i = 0; i < rows; ++i) {
        const double x = std::pow(d.uniform(), 4.0);
        const int64_t length = std::min<int64_t>(cols, int64_t(x * double(std::min<int64_t>(cols, max_row))));
        for (int64_t e = 0; e < length; ++e) add(i, d.between(0, cols - 1));
      }
      break;
    }
    case 2: {  // a few rows longer than a warp's or a CTA's share, the rest short
      name = "long rows";
      for (int64_t i = 0; i < rows; ++i) {
        if (d.chance(0.02) || i == rows / 2) {
          for (int64_t j = 0; j < cols; ++j)
            if (d.chance(0.9)) add(i, j);
        } else {
          const int64_t length = d.between(0, std::min<int64_t>(cols, 6));
          for (int64_t e = 0; e < length; ++e) add(i, d.between(0, cols - 1));
        }
      }
      break;
    }
    case 3: {  // band
      const int64_t half = d.between(0, 70);
      name = "band half-width " + std::to_string(half);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t center = cols > 1 ? i * (cols - 1) / std::max<int64_t>(1, rows - 1) : 0;
        for (int64_t j = std::max<int64_t>(0, center - half); j <= std::min(cols - 1, center + half); ++j) add(i, j);
      }
      break;
    }
    case 4: {  // dense 16x16 blocks, rows optionally scrambled (tensor-core and VBR work)
      const bool scramble = d.chance(0.5);
      const double fill = 0.05 + 0.3 * d.uniform();
      name = std::string("blocks") + (scramble ? " scrambled" : "");
      std::vector<int64_t> row_of(static_cast<size_t>(rows));
      std::iota(row_of.begin(), row_of.end(), int64_t(0));
      if (scramble) std::shuffle(row_of.begin(), row_of.end(), d.engine());
      for (int64_t bi = 0; bi * 16 < rows; ++bi)
        for (int64_t bj = 0; bj * 16 < cols; ++bj) {
          if (!d.chance(fill)) continue;
          for (int64_t i = bi * 16; i < std::min(rows, bi * 16 + 16); ++i)
            for (int64_t j = bj * 16; j < std::min(cols, bj * 16 + 16); ++j)
              if (d.chance(0.8)) add(row_of[size_t(i)], j);
        }
      break;
    }
    case 5: {  // one dense column (every row has an entry in it) and one dense row
      name = "dense column and row";
      const int64_t column = d.between(0, cols - 1);
      for (int64_t i = 0; i < rows; ++i) add(i, column);
      const int64_t row = d.between(0, rows - 1);
      for (int64_t j = 0; j < cols; ++j) add(row, j);
      break;
    }
    case 6: {  // nearly empty: a handful of entries
      name = "nearly empty";
      const int64_t count = d.between(1, 5);
      for (int64_t e = 0; e < count; ++e) add(d.between(0, rows - 1), d.between(0, cols - 1));
      break;
    }
    default:
      name = "no entries";
      break;
  }
  return t;
}

// Bytes in host or device memory (operands handed to the library in either space).
class Buffer {
 public:
  Buffer(const std::vector<uint8_t>& bytes, sparsetc_memory_t memory) : host_(bytes) {
    if (memory == SPARSETC_MEMORY_DEVICE) device_ = std::make_unique<DeviceArray<uint8_t>>(bytes);
  }
  void* get() const { return device_ ? static_cast<void*>(device_->get()) : static_cast<void*>(host_.data()); }
  void* at(int64_t byte) const { return static_cast<uint8_t*>(get()) + byte; }
  std::vector<uint8_t> download() const { return device_ ? device_->download() : host_; }
  // New contents of the same size, in place.
  void upload(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(bytes.size(), host_.size());
    if (device_) {
      ASSERT_EQ(cudaMemcpy(device_->get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
    } else {
      std::copy(bytes.begin(), bytes.end(), host_.begin());
    }
  }

 private:
  mutable std::vector<uint8_t> host_;  // the contents in host memory (and the upload for the device)
  std::unique_ptr<DeviceArray<uint8_t>> device_;
};

// How a sparse operand is handed to the library.
struct SparseLayout {
  sparsetc_format_t format = SPARSETC_FORMAT_CSR;
  sparsetc_index_type_t offsets = SPARSETC_INDEX_32, indices = SPARSETC_INDEX_32;
  sparsetc_index_base_t base = SPARSETC_BASE_ZERO;
  sparsetc_ownership_t ownership = SPARSETC_COPY;
};

inline SparseLayout draw_layout(Draw& d) {
  SparseLayout l;
  l.format = d.chance(0.7) ? SPARSETC_FORMAT_CSR : d.pick({SPARSETC_FORMAT_CSC, SPARSETC_FORMAT_COO});
  l.offsets = d.pick({SPARSETC_INDEX_32, SPARSETC_INDEX_64});
  l.indices = d.chance(0.75) ? SPARSETC_INDEX_32 : SPARSETC_INDEX_64;
  l.base = d.chance(0.8) ? SPARSETC_BASE_ZERO : SPARSETC_BASE_ONE;
  l.ownership = d.chance(0.5) ? SPARSETC_COPY : SPARSETC_BORROW;
  return l;
}

inline std::string describe(const SparseLayout& l) {
  static const char* formats[] = {"", "CSR", "CSC", "COO"};
  std::ostringstream s;
  s << formats[l.format] << " offsets/indices " << (l.offsets == SPARSETC_INDEX_64 ? 64 : 32) << "/"
    << (l.indices == SPARSETC_INDEX_64 ? 64 : 32) << " base " << l.base
    << (l.ownership == SPARSETC_BORROW ? " borrowed" : "");
  return s.str();
}

inline const char* type_name(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F64 ? "f64" : t == SPARSETC_VALUE_F32 ? "f32" : t == SPARSETC_VALUE_F16 ? "f16" : "bf16";
}

// A sparse matrix in host or device memory in a drawn layout, with two sets of values (rounded to
// its value type) in the order of its own entries; set 0 is current after construction.
class SparseOperand {
 public:
  SparseOperand(sparsetc_handle_t h, const Triplets& t, const SparseLayout& l, sparsetc_value_type_t type,
                sparsetc_memory_t memory, Draw& d)
      : h_(h), rows_(t.rows), cols_(t.cols), type_(type) {
    const int64_t base = l.base == SPARSETC_BASE_ONE ? 1 : 0;
    for (const auto& [rc, v] : t.entries) order_.push_back(rc);
    if (l.format == SPARSETC_FORMAT_CSC)
      std::stable_sort(order_.begin(), order_.end(), [](auto& x, auto& y) { return x.second < y.second; });
    std::vector<int64_t> first, second;
    if (l.format == SPARSETC_FORMAT_COO) {
      std::shuffle(order_.begin(), order_.end(), d.engine());
      for (const auto& rc : order_) {
        first.push_back(rc.first + base);
        second.push_back(rc.second + base);
      }
    } else {
      const bool csr = l.format == SPARSETC_FORMAT_CSR;
      const int64_t lines = csr ? t.rows : t.cols;
      first.assign(size_t(lines) + 1, 0);
      for (const auto& rc : order_) first[size_t(csr ? rc.first : rc.second) + 1]++;
      for (int64_t i = 0; i < lines; ++i) first[size_t(i) + 1] += first[size_t(i)];
      for (int64_t& x : first) x += base;
      for (const auto& rc : order_) second.push_back((csr ? rc.second : rc.first) + base);
    }
    for (int set = 0; set < 2; ++set) {
      std::vector<double> v(order_.size());
      for (double& x : v) x = d.value();
      const std::vector<uint8_t> bytes = pack(v, type);
      values_[set] = unpack(bytes, type);
      stored_values_[set] = std::make_unique<Buffer>(bytes, memory);
    }
    first_ = std::make_unique<Buffer>(
        index_bytes(first, l.format == SPARSETC_FORMAT_COO ? l.indices : l.offsets), memory);
    second_ = std::make_unique<Buffer>(index_bytes(second, l.indices), memory);
    const int64_t nnz = int64_t(order_.size());
    void* vals = nnz ? stored_values_[0]->get() : nullptr;
    sparsetc_status_t status = SPARSETC_STATUS_SUCCESS;
    if (l.format == SPARSETC_FORMAT_CSR)
      status = sparsetc_matrix_create_csr(h, &matrix_, rows_, cols_, nnz, first_->get(), second_->get(), vals,
                                          l.offsets, l.indices, l.base, type, memory, l.ownership);
    else if (l.format == SPARSETC_FORMAT_CSC)
      status = sparsetc_matrix_create_csc(h, &matrix_, rows_, cols_, nnz, first_->get(), second_->get(), vals,
                                          l.offsets, l.indices, l.base, type, memory, l.ownership);
    else
      status = sparsetc_matrix_create_coo(h, &matrix_, rows_, cols_, nnz, first_->get(), second_->get(), vals,
                                          l.indices, l.base, type, memory, l.ownership);
    EXPECT_EQ(status, SPARSETC_STATUS_SUCCESS) << last_error(h);
  }
  ~SparseOperand() { sparsetc_matrix_destroy(matrix_); }
  SparseOperand(const SparseOperand&) = delete;
  SparseOperand& operator=(const SparseOperand&) = delete;

  sparsetc_matrix_t get() const { return matrix_; }
  int64_t nnz() const { return int64_t(order_.size()); }
  // Entry p of the matrix's own order: (row, col) and its current value.
  const std::pair<int64_t, int64_t>& entry(size_t p) const { return order_[p]; }
  double value(size_t p) const { return values_[current_][p]; }
  // Switches to the other set of values through sparsetc_matrix_set_values.
  void switch_values() {
    current_ ^= 1;
    if (!order_.empty()) {
      EXPECT_EQ(sparsetc_matrix_set_values(h_, matrix_, stored_values_[current_]->get()), SPARSETC_STATUS_SUCCESS)
          << last_error(h_);
    }
  }

 private:
  sparsetc_handle_t h_;
  int64_t rows_, cols_;
  sparsetc_value_type_t type_;
  std::vector<std::pair<int64_t, int64_t>> order_;
  std::vector<double> values_[2];
  int current_ = 0;
  std::unique_ptr<Buffer> first_, second_, stored_values_[2];
  sparsetc_matrix_t matrix_ = nullptr;
};

}  // namespace sparsetc_test
