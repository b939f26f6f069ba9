// The canonical CSR on the device, which every GPU conversion and analysis reads: zero-based,
// 64-bit row offsets, 32-bit column indices, values of the compute type (float or double).
#pragma once

#include <cstdint>

#include "formats/sparse.hpp"
#include "gpu/device_memory.hpp"

namespace sparsetc::detail {

// Non-owning view of device arrays.
template <typename V>
struct DeviceCsrView {
  int64_t rows = 0, cols = 0, nnz = 0;
  const int64_t* row_ptr = nullptr;  // rows + 1
  const int32_t* col_idx = nullptr;  // nnz, sorted and unique within each row
  const V* values = nullptr;         // nnz
};

// Owning device CSR.
template <typename V>
struct DeviceCsr {
  int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer row_ptr, col_idx, values;
  DeviceCsrView<V> view() const {
    return {rows, cols, nnz, row_ptr.as<const int64_t>(), col_idx.as<const int32_t>(), values.as<const V>()};
  }
};

}  // namespace sparsetc::detail
