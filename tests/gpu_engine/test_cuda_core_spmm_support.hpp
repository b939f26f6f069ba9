// Shared by the CUDA-core SpMM tests and benchmark: a GPU handle as sparsetc_create makes it (on a
// non-blocking stream of its own), a device matrix borrowed from test-owned arrays, and dense
// operands in any value type, order, leading dimension and pointer offset, with NaN padding.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/half.hpp"
#include "engine/dense.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "formats/raw.hpp"
#include "formats/sparse.hpp"
#include "gpu/allocators.hpp"
#include "gpu/device_memory.hpp"

namespace cuda_core_test {

namespace sd = sparsetc::detail;


struct StreamOwner {
  cudaStream_t stream = nullptr;
  StreamOwner() { EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess); }
  ~StreamOwner() {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
};

// Destroyed before its stream (base classes outlive members).
struct GpuHandle : StreamOwner {
  sparsetc_handle_s handle;
  GpuHandle() {
    handle.backend = SPARSETC_BACKEND_GPU;
    EXPECT_EQ(cudaGetDevice(&handle.device), cudaSuccess);
    handle.stream = stream;
    handle.pool = std::make_unique<sd::PoolAllocator>(handle.device);
    handle.memory.set_source(handle.pool.get());
  }
  sd::GpuContext gpu() { return handle.gpu(); }
};

// A device CSR matrix (int64 offsets, int32 indices) the matrix object borrows.
struct DeviceMatrix {
  sd::DeviceBuffer offsets, indices, values;
  std::unique_ptr<sparsetc_matrix_s> matrix;
};

// A's structure with `values` (nnz elements of `element_bytes` each, stored as `type`).
inline DeviceMatrix upload_values(GpuHandle& g, const sd::CsrMatrix<double>& a, const void* values,
                                  size_t element_bytes, sparsetc_value_type_t type) {
  DeviceMatrix d;
  std::vector<int32_t> cols(a.col_idx.begin(), a.col_idx.end());
  const size_t nnz = a.col_idx.size();
  d.offsets = sd::DeviceBuffer(a.row_ptr.size() * 8, g.gpu());
  d.indices = sd::DeviceBuffer(std::max<size_t>(nnz, 1) * 4, g.gpu());
  d.values = sd::DeviceBuffer(std::max<size_t>(nnz, 1) * element_bytes, g.gpu());
  sd::copy_host_to_device(d.offsets.data(), a.row_ptr.data(), a.row_ptr.size() * 8, g.stream);
  if (nnz) {
    sd::copy_host_to_device(d.indices.data(), cols.data(), nnz * 4, g.stream);
    sd::copy_host_to_device(d.values.data(), values, nnz * element_bytes, g.stream);
  }
  sd::RawSparse raw;
  raw.format = SPARSETC_FORMAT_CSR;
  raw.rows = a.rows;
  raw.cols = a.cols;
  raw.nnz = int64_t(nnz);
  raw.offsets = d.offsets.data();
  raw.indices = d.indices.data();
  raw.values = d.values.data();
  raw.offset_type = SPARSETC_INDEX_64;
  raw.index_type = SPARSETC_INDEX_32;
  raw.value_type = type;
  d.matrix = sd::make_matrix(g.handle, raw, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW);
  return d;
}

// A with its f64 values.
inline DeviceMatrix upload(GpuHandle& g, const sd::CsrMatrix<double>& a) {
  return upload_values(g, a, a.values.data(), sizeof(double), SPARSETC_VALUE_F64);
}

inline size_t element_bytes(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F64 ? 8 : t == SPARSETC_VALUE_F32 ? 4 : 2;
}

// Stores v rounded to the type (nearest even); returns the value stored.
inline double store_value(sparsetc_value_type_t t, double v, unsigned char* p) {
  switch (t) {
    case SPARSETC_VALUE_F64: std::memcpy(p, &v, 8); return v;
    case SPARSETC_VALUE_F32: {
      const float f = float(v);
      std::memcpy(p, &f, 4);
      return f;
    }
    case SPARSETC_VALUE_F16: {
      const uint16_t h = sd::double_to_half(v);
      std::memcpy(p, &h, 2);
      return sd::half_to_float(h);
    }
    default: {
      const uint16_t b = sd::double_to_bfloat16(v);
      std::memcpy(p, &b, 2);
      return sd::bfloat16_to_float(b);
    }
  }
}

inline double load_value(sparsetc_value_type_t t, const unsigned char* p) {
  switch (t) {
    case SPARSETC_VALUE_F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case SPARSETC_VALUE_F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case SPARSETC_VALUE_F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return sd::half_to_float(h);
    }
    default: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return sd::bfloat16_to_float(b);
    }
  }
}

// A dense matrix in device memory: `offset` elements before the first, `ld` apart, the rest NaN.
struct Dense {
  int64_t rows = 0, cols = 0, ld = 0, offset = 0;
  sparsetc_order_t order = SPARSETC_ORDER_ROW;
  sparsetc_value_type_t type = SPARSETC_VALUE_F32;
  std::vector<unsigned char> host;
  sd::DeviceBuffer device;

  Dense(int64_t rows_, int64_t cols_, sparsetc_order_t order_, sparsetc_value_type_t type_, int64_t pad,
        int64_t offset_)
      : rows(rows_), cols(cols_), offset(offset_), order(order_), type(type_) {
    ld = (order == SPARSETC_ORDER_ROW ? cols : rows) + pad;
    if (ld < 1) ld = 1;
    const int64_t lines = order == SPARSETC_ORDER_ROW ? rows : cols;
    const size_t elements = size_t(offset + ld * lines + 1), bytes = element_bytes(type);
    host.resize(elements * bytes);
    unsigned char nan_bits[8];
    store_value(type, std::nan(""), nan_bits);
    std::memcpy(host.data(), nan_bits, bytes);
    // Doubling copies: fast for the benchmark's gigabyte operands.
    for (size_t done = bytes; done < host.size(); done *= 2)
      std::memcpy(host.data() + done, host.data(), std::min(done, host.size() - done));
  }
  size_t at(int64_t r, int64_t c) const {
    return size_t(offset + (order == SPARSETC_ORDER_ROW ? r * ld + c : c * ld + r)) * element_bytes(type);
  }
  double set(int64_t r, int64_t c, double v) { return store_value(type, v, host.data() + at(r, c)); }
  double get(int64_t r, int64_t c) const { return load_value(type, host.data() + at(r, c)); }
  void to_device(GpuHandle& g) {
    device = sd::DeviceBuffer(host.size(), g.gpu());
    sd::copy_host_to_device(device.data(), host.data(), host.size(), g.stream);
  }
  void to_host(GpuHandle& g) { sd::copy_device_to_host(host.data(), device.data(), host.size(), g.stream); }
  sparsetc_dense_s desc() const {
    sparsetc_dense_s d;
    d.rows = rows;
    d.cols = cols;
    d.ld = ld;
    d.values = static_cast<unsigned char*>(device.data()) + size_t(offset) * element_bytes(type);
    d.value_type = type;
    d.order = order;
    d.memory = SPARSETC_MEMORY_DEVICE;
    return d;
  }
  // Describes the shape only (what a plan keeps).
  sparsetc_dense_s shape() const {
    sparsetc_dense_s d = desc();
    d.values = nullptr;
    return d;
  }
};

// Random entries in +-[0.5, 1.5].
inline double random_entry(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.5, 1.5);
  const double v = u(rng);
  return (rng() & 1) ? -v : v;
}

// rows x cols with the given row lengths (distinct random columns, sorted; values random).
inline sd::CsrMatrix<double> matrix_with_rows(int64_t cols, const std::vector<int64_t>& lengths, uint64_t seed) {
  std::mt19937_64 rng(seed);
  sd::CsrMatrix<double> m;
  m.rows = int64_t(lengths.size());
  m.cols = cols;
  std::vector<char> taken(size_t(cols), 0);
  std::vector<int64_t> picked;
  for (int64_t length : lengths) {
    length = std::max<int64_t>(0, std::min(length, cols));
    picked.clear();
    if (length * 3 > cols) {
      for (int64_t c = 0; c < cols; ++c)
        if (int64_t(rng() % uint64_t(cols)) < length) picked.push_back(c);
    } else {
      std::uniform_int_distribution<int64_t> col(0, cols - 1);
      while (int64_t(picked.size()) < length) {
        const int64_t c = col(rng);
        if (!taken[size_t(c)]) {
          taken[size_t(c)] = 1;
          picked.push_back(c);
        }
      }
      for (int64_t c : picked) taken[size_t(c)] = 0;
      std::sort(picked.begin(), picked.end());
    }
    for (int64_t c : picked) {
      m.col_idx.push_back(c);
      m.values.push_back(random_entry(rng));
    }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  return m;
}

inline sd::CsrMatrix<double> transpose(const sd::CsrMatrix<double>& a) {
  sd::CsrMatrix<double> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.row_ptr.assign(size_t(a.cols + 1), 0);
  for (int64_t c : a.col_idx) t.row_ptr[size_t(c + 1)]++;
  for (int64_t i = 0; i < a.cols; ++i) t.row_ptr[size_t(i + 1)] += t.row_ptr[size_t(i)];
  std::vector<int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  t.col_idx.resize(a.col_idx.size());
  t.values.resize(a.values.size());
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t j = a.row_ptr[size_t(r)]; j < a.row_ptr[size_t(r + 1)]; ++j) {
      const int64_t at = next[size_t(a.col_idx[size_t(j)])]++;
      t.col_idx[size_t(at)] = r;
      t.values[size_t(at)] = a.values[size_t(j)];
    }
  return t;
}

}  // namespace cuda_core_test
