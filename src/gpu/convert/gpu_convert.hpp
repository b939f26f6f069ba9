// GPU format conversions. Every conversion produces exactly the arrays of its host reference
// (formats/convert.hpp, formats/tiled.hpp, formats/values.hpp): structure bit for bit, values
// unchanged (or rounded exactly as the host rounds them). All of them are deterministic.
//
// Conventions:
//  - Inputs are device arrays (DeviceCsrView: zero-based, int64 row offsets, int32 columns sorted
//    and unique within each row); results own their device memory (DeviceBuffer, allocated
//    stream-ordered from the context). Work is ordered on context.stream.
//  - Synchronisation points: a conversion whose output size depends on the data reads one small
//    total back to the host before allocating (the function's comment says so); to_host() waits.
//  - Index limits: rows and columns stored as int32 must be <= 2^31 - 1 (SIZE_OVERFLOW otherwise).
//
// This header is included from .cpp files: it must not include CUDA device headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "formats/raw.hpp"
#include "formats/sparse.hpp"
#include "formats/tiled.hpp"
#include "gpu/convert/device_csr.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

// ---- Device versions of the host structs. Every array has the host's length and element order.

template <typename V>
struct DeviceCscView {
  int64_t rows = 0, cols = 0, nnz = 0;
  const int64_t* col_ptr = nullptr;  // cols + 1
  const int32_t* row_idx = nullptr;  // nnz, sorted and unique within each column
  const V* values = nullptr;         // nnz
};

template <typename V>
struct DeviceCsc {
  int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer col_ptr, row_idx, values;  // int64 cols + 1, int32 nnz, V nnz
  DeviceCscView<V> view() const {
    return {rows, cols, nnz, col_ptr.as<const int64_t>(), row_idx.as<const int32_t>(), values.as<const V>()};
  }
  CscMatrix<V> to_host(cudaStream_t stream) const;
};

template <typename V>
struct DeviceBcsr {
  int64_t rows = 0, cols = 0;
  int block_height = 0, block_width = 0;
  int64_t blocks = 0;
  DeviceBuffer block_row_ptr;  // int64, block rows + 1
  DeviceBuffer block_col;      // int32, blocks
  DeviceBuffer values;         // V, blocks * h * w (row-major in the block, zero padded)
  int64_t block_rows() const { return (rows + block_height - 1) / block_height; }
  BcsrMatrix<V> to_host(cudaStream_t stream) const;
};

template <typename V>
struct DeviceBitmapTiles {
  int64_t rows = 0, cols = 0, tiles = 0, nnz = 0;
  DeviceBuffer tile_row_ptr;    // int64, tile rows + 1
  DeviceBuffer tile_row;        // int32, tiles
  DeviceBuffer tile_col;        // int32, tiles
  DeviceBuffer bitmap;          // uint64, tiles
  DeviceBuffer element_offset;  // int64, tiles + 1
  DeviceBuffer values;          // V, nnz (tile order, bit order within a tile)
  int64_t tile_rows() const { return (rows + 7) / 8; }
  BitmapTiles<V> to_host(cudaStream_t stream) const;
};

template <typename V>
struct DeviceDcsr {
  int64_t rows = 0, cols = 0, nonempty_rows = 0, nnz = 0;
  DeviceBuffer row_idx;  // int64, nonempty_rows
  DeviceBuffer row_ptr;  // int64, nonempty_rows + 1
  DeviceBuffer col_idx;  // int32, nnz
  DeviceBuffer values;   // V, nnz
  DcsrMatrix<V> to_host(cudaStream_t stream) const;
};

template <typename V>
struct DeviceTiledDcsr {
  int64_t rows = 0, cols = 0, strip_width = 0, row_segments = 0, nnz = 0;
  DeviceBuffer strip_ptr;  // int64, strips + 1
  DeviceBuffer row_idx;    // int32, row_segments
  DeviceBuffer row_ptr;    // int64, row_segments + 1
  DeviceBuffer col_idx;    // int32, nnz
  DeviceBuffer values;     // V, nnz
  int64_t strips() const { return strip_width > 0 ? (cols + strip_width - 1) / strip_width : 0; }
  TiledDcsr<V> to_host(cudaStream_t stream) const;
};

template <typename V>
struct DeviceVbr {
  int64_t rows = 0, cols = 0, block_width = 0, groups = 0, blocks = 0, value_count = 0;
  DeviceBuffer group_ptr;     // int64, groups + 1
  DeviceBuffer block_ptr;     // int64, groups + 1
  DeviceBuffer block_col;     // int32, blocks
  DeviceBuffer value_offset;  // int64, blocks + 1
  DeviceBuffer values;        // V, value_count (column-major height x block_width blocks)
  VbrMatrix<V> to_host(cudaStream_t stream) const;
};

// ---- Host <-> device copies of the canonical CSR (tests, tools). csr_to_device throws
// SIZE_OVERFLOW when cols > 2^31 - 1.
template <typename V>
DeviceCsr<V> csr_to_device(const CsrMatrix<V>& csr, const GpuContext& context);
template <typename V>
CsrMatrix<V> csr_to_host(const DeviceCsrView<V>& csr, cudaStream_t stream);
template <typename V>
CscMatrix<V> csc_to_host(const DeviceCscView<V>& csc, cudaStream_t stream);
// The structure of a device CSR on the host, columns widened to int64, without its values (what
// host reordering reads).
struct HostCsrPattern {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> row_ptr;  // rows + 1
  std::vector<int64_t> col_idx;  // row_ptr[rows]
};
template <typename V>
HostCsrPattern csr_pattern_to_host(const DeviceCsrView<V>& csr, cudaStream_t stream);

// ---- 1. A user's device arrays -> canonical device CSR.
// raw: pointers into device memory; any index widths, base 0/1, values of any sparsetc value type
// (converted to V exactly as load_values does; f64 -> float out of range throws
// VALUE_OUT_OF_RANGE like the host). The structure is assumed valid (validate_raw's job); COO is
// sorted by (row, column) (row buckets sorted in shared memory, or a stable CUB radix sort where a
// bucket does not fit) and duplicates are summed in input order (SUM) or reported like the host's
// import (ERROR: DUPLICATE_ENTRY, first repeat, caller's numbering). Sync points: COO reads back
// its largest bucket and the number of unique entries (and takes nnz < 2^32); f64 -> float reads
// back the range check.
template <typename V>
DeviceCsr<V> gpu_normalize(const RawSparse& raw, sparsetc_duplicates_t duplicates, const GpuContext& context);
// The first entry of a device COO whose row is below the entry before it, or -1 when the entries
// are in row order (what cuSPARSE's COO kernels assume). One pass and one read-back (a sync point).
int64_t gpu_coo_first_unsorted_row(const RawSparse& coo, const GpuContext& context);

// ---- 2. CSR <-> CSC (the transpose of the compressed structure; rows, cols <= 2^31 - 1, nnz <= 2^33
// - 1). No sync point.
template <typename V>
DeviceCsc<V> gpu_csr_to_csc(const DeviceCsrView<V>& csr, const GpuContext& context);
template <typename V>
DeviceCsr<V> gpu_csc_to_csr(const DeviceCscView<V>& csc, const GpuContext& context);
// The CSC of A read as the CSR of A^T (the arrays move; no work on the device).
template <typename V>
DeviceCsr<V> as_transposed_csr(DeviceCsc<V>&& csc) {
  DeviceCsr<V> t;
  t.rows = csc.cols;
  t.cols = csc.rows;
  t.nnz = csc.nnz;
  t.row_ptr = std::move(csc.col_ptr);
  t.col_idx = std::move(csc.row_idx);
  t.values = std::move(csc.values);
  return t;
}

// ---- 3. Blocked and tiled formats (tiled.hpp). Each reads back its block/tile/row count (one sync;
// VBR two: blocks, then values). Column blocks (tiles, strips) must fit int32 like the host's.
// BCSR shapes: 1 <= h <= 32, 1 <= w, h * w <= 1024 (the MMA shapes 16x8, 16x16, 8x8 and more).
// Tiled DCSR: nnz <= 2^33 - 1.
template <typename V>
DeviceBcsr<V> gpu_csr_to_bcsr(const DeviceCsrView<V>& csr, int block_height, int block_width,
                              const GpuContext& context);
// Bitmap tiles' ways (bitmap_tiles.cu): a warp per four tile rows, or a warp per tile row (compact
// ones, and scattered ones by a sort) and tasks for the others, or (kTasks) tasks for every tile
// row that is not compact. kChosen picks by the matrix; the others force one (tests and the
// benchmark run them all on the same matrices), except that kQuads needs every tile row compact
// and takes the second way where one is not.
enum class BitmapWay { kChosen, kQuads, kTileRows, kTasks };
template <typename V>
DeviceBitmapTiles<V> gpu_csr_to_bitmap_tiles(const DeviceCsrView<V>& csr, const GpuContext& context,
                                             BitmapWay way = BitmapWay::kChosen);
template <typename V>
DeviceDcsr<V> gpu_csr_to_dcsr(const DeviceCsrView<V>& csr, const GpuContext& context);
template <typename V>
DeviceTiledDcsr<V> gpu_csr_to_tiled_dcsr(const DeviceCsrView<V>& csr, int64_t strip_width, const GpuContext& context);
// group_ptr: a partition of [0, rows) into consecutive groups (checked: INVALID_VALUE otherwise).
template <typename V>
DeviceVbr<V> gpu_csr_to_vbr(const DeviceCsrView<V>& csr, const std::vector<int64_t>& group_ptr, int64_t block_width,
                            const GpuContext& context);
// Row i of the result is row permutation[i] of the input. d_permutation: `rows` int64 in device
// memory; INVALID_VALUE when it is not a permutation of [0, rows), with permute_rows' message
// (checked on the device alongside the copy; one sync at the end).
template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const int64_t* d_permutation, const GpuContext& context);
template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const std::vector<int64_t>& permutation,
                              const GpuContext& context);

// ---- 4. Values: dst[i] = src[i] rounded to `type` exactly as store_values rounds (nearest even;
// NaN and Inf kept). Every element is written; a finite value beyond the type's range becomes
// +-Inf there and is counted: the caller raises VALUE_OUT_OF_RANGE (see value_out_of_range_error)
// when out_of_range > 0. One sync (the 16-byte counter is read back).
struct ValueConversion {
  int64_t out_of_range = 0;         // finite values whose magnitude rounds beyond the type's largest
  int64_t first_out_of_range = -1;  // the smallest such index, or -1
};
template <typename V>
ValueConversion gpu_convert_values(const V* d_src, int64_t n, sparsetc_value_type_t type, void* d_dst,
                                   const GpuContext& context);
// The host's VALUE_OUT_OF_RANGE error for entry `index` (whose value is read back from d_src).
template <typename V>
[[noreturn]] void value_out_of_range_error(const V* d_src, int64_t index, sparsetc_value_type_t type,
                                           cudaStream_t stream);

// ---- 5. Export: canonical compressed arrays (CSR: outer = rows; CSC: outer = cols) written with
// the caller's offset and index widths, base and value type. SIZE_OVERFLOW when nnz does not fit
// 32-bit offsets; VALUE_OUT_OF_RANGE (the host's message) when a value does not fit value_type.
// One sync (the value conversion's counter).
struct ExportedArrays {
  DeviceBuffer offsets, indices, values;
};
template <typename V>
ExportedArrays gpu_export_compressed(int64_t outer, int64_t nnz, const int64_t* ptr, const int32_t* idx,
                                     const V* values, sparsetc_index_type_t offset_type,
                                     sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                     sparsetc_value_type_t value_type, const GpuContext& context);

}  // namespace sparsetc::detail
