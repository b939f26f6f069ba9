// Row permutation (gather) on the device: row i of the result is row permutation[i].
//
// The new offsets are an inclusive scan of the gathered row lengths (read through an iterator, no
// lengths array), and one merge-path pass over the new structure copies every entry: each CTA
// takes an equal share of (rows + entries) (its corners found beforehand, one thread each:
// merge_path_tiles), stages the start and source shift of its rows in shared memory (one gather
// per row), and copies its entries with consecutive threads on consecutive entries (reads and
// writes coalesced along the rows, balanced whatever the lengths).
// The check runs alongside: each target row records its first position (atomicMin, one per row,
// no hot counter); the first position out of range and the first repeat are read back at the end
// (one sync) and reported as the host reports them (invalid rows are clamped in the meantime, so
// nothing reads out of bounds).
#include <cstdint>
#include <vector>

#include <thrust/iterator/transform_iterator.h>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;
constexpr int kItems = 8;
constexpr int64_t kPath = int64_t(kThreads) * kItems;  // merge-path steps per CTA

// Rows outside [0, rows) read row 0 (the result is thrown away then: the check fails).
__device__ __forceinline__ int64_t valid_row(const int64_t* perm, int64_t i, int64_t rows) {
  const int64_t p = perm[i];
  return p >= 0 && p < rows ? p : 0;
}

struct FirstPosition {  // first[p]: the smallest i with perm[i] = p; bad[0]: the first out of range
  const int64_t* perm;
  int64_t rows;
  ull* first;
  ull* bad;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p >= 0 && p < rows) atomicMin(first + p, ull(i));
    else atomicMin(bad, ull(i));
  }
};

struct FirstRepeat {  // bad[1]: the first position whose row appeared before
  const int64_t* perm;
  int64_t rows;
  const ull* first;
  ull* bad;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p >= 0 && p < rows && first[p] != ull(i)) atomicMin(bad + 1, ull(i));
  }
};

struct RowLength {
  const int64_t* perm;
  int64_t rows;
  const int64_t* row_ptr;
  __device__ int64_t operator()(int64_t i) const {
    const int64_t p = valid_row(perm, i, rows);
    return row_ptr[p + 1] - row_ptr[p];
  }
};

// One merge-path tile of (new row ends, entries) per CTA, as entry_rows_kernel walks it, with the
// rows' source shifts staged: entry j of new row i is entry j + shift[i] of the input.
template <typename V>
__global__ void __launch_bounds__(kThreads)
    permute_copy_kernel(const int64_t* __restrict__ new_ptr, int64_t rows, int64_t nnz,
                        const int64_t* __restrict__ corners, const int64_t* __restrict__ perm,
                        const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                        const V* __restrict__ values, int32_t* __restrict__ out_col, V* __restrict__ out_val) {
  __shared__ int64_t row_end[kPath + 1];
  __shared__ int64_t shift[kPath + 1];
  __shared__ int32_t entry_row[kPath];
  const int64_t total = rows + nnz;
  const int64_t d0 = int64_t(blockIdx.x) * kPath;
  const int64_t d1 = d0 + kPath < total ? d0 + kPath : total;
  const int64_t i0 = corners[blockIdx.x], i1 = corners[blockIdx.x + 1], j0 = d0 - i0, j1 = d1 - i1;
  const int64_t last_row = i1 < rows ? i1 : rows - 1;  // rows i0 .. last_row meet this tile
  const int row_count = int(last_row - i0 + 1);
  for (int r = threadIdx.x; r < row_count; r += kThreads) {
    const int64_t i = i0 + r;
    row_end[r] = __ldg(new_ptr + i + 1);
    shift[r] = __ldg(row_ptr + valid_row(perm, i, rows)) - __ldg(new_ptr + i);
  }
  __syncthreads();
  const int64_t local = int64_t(threadIdx.x) * kItems, steps = d1 - d0, entries = j1 - j0, consumed = i1 - i0;
  if (local < steps) {
    int64_t i = merge_path_rows(local, local > entries ? local - entries : 0, local < consumed ? local : consumed, j0,
                                [&](int64_t r) { return row_end[r]; });
    int64_t j = j0 + local - i;
    const int64_t end = local + kItems < steps ? local + kItems : steps;
    for (int64_t d = local; d < end; ++d) {
      if (i0 + i < rows && row_end[i] <= j) {
        ++i;
      } else {
        entry_row[j - j0] = int32_t(i);
        ++j;
      }
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < entries; e += kThreads) {
    const int64_t j = j0 + e, src = j + shift[entry_row[e]];
    out_col[j] = __ldg(col_idx + src);
    out_val[j] = __ldg(values + src);
  }
}

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const int64_t* d_permutation, const GpuContext& context) {
  using namespace gpuconv;
  const int64_t rows = csr.rows;
  require(d_permutation != nullptr || rows == 0, SPARSETC_STATUS_NULL_POINTER, "the permutation is NULL");
  DeviceCsr<V> out;
  out.rows = rows;
  out.cols = csr.cols;
  out.nnz = csr.nnz;
  out.row_ptr = buffer_of<int64_t>(rows + 1, context);
  out.col_idx = buffer_of<int32_t>(csr.nnz, context);
  out.values = buffer_of<V>(csr.nnz, context);
  // The check (the host's checks and messages: out of range first, then repeats) is enqueued
  // first and read back last, so the copy runs meanwhile.
  DeviceBuffer first = buffer_of<ull>(rows + 2, context);  // [rows], [rows + 1]: the first bad positions
  ull* f = first.as<ull>();
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(f, 0xff, size_t(rows + 2) * sizeof(ull), context.stream));
  for_each_index(rows, context, FirstPosition{d_permutation, rows, f, f + rows});
  for_each_index(rows, context, FirstRepeat{d_permutation, rows, f, f + rows});
  int64_t* new_ptr = out.row_ptr.template as<int64_t>();
  zero(new_ptr, 1, context.stream);
  if (rows > 0) {
    const auto lengths = thrustns::make_transform_iterator(thrustns::counting_iterator<int64_t>(0),
                                                           RowLength{d_permutation, rows, csr.row_ptr});
    run_cub("cub::DeviceScan::InclusiveSum", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceScan::InclusiveSum(temp, bytes, lengths, new_ptr + 1, rows, context.stream);
    });
  }
  if (csr.nnz > 0) {
    const MergePathTiles tiles = merge_path_tiles(new_ptr, rows, csr.nnz, kPath, context);
    permute_copy_kernel<V><<<ctas_for(rows + csr.nnz, kPath), kThreads, 0, context.stream>>>(
        new_ptr, rows, csr.nnz, tiles.corner.as<const int64_t>(), d_permutation, csr.row_ptr, csr.col_idx, csr.values,
        out.col_idx.template as<int32_t>(), out.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  ull bad[2];
  copy_device_to_host(bad, f + rows, sizeof bad, context.stream);
  if (bad[0] != ~0ull) {
    const int64_t i = int64_t(bad[0]), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is out of range [0, ", rows,
         ")");
  }
  if (bad[1] != ~0ull) {
    const int64_t i = int64_t(bad[1]), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is repeated (also permutation[",
         int64_t(read_back(f + p, context.stream)), "])");
  }
  return out;
}

template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const std::vector<int64_t>& permutation,
                              const GpuContext& context) {
  require(int64_t(permutation.size()) == csr.rows, SPARSETC_STATUS_INVALID_VALUE, "permute_rows: the permutation has ",
          permutation.size(), " entries for ", csr.rows, " rows (wrong length)");
  DeviceBuffer d_perm = gpuconv::buffer_of<int64_t>(csr.rows, context);
  copy_host_to_device(d_perm.data(), permutation.data(), permutation.size() * sizeof(int64_t), context.stream);
  return gpu_permute_rows(csr, d_perm.as<const int64_t>(), context);
}

template DeviceCsr<float> gpu_permute_rows<float>(const DeviceCsrView<float>&, const int64_t*, const GpuContext&);
template DeviceCsr<double> gpu_permute_rows<double>(const DeviceCsrView<double>&, const int64_t*, const GpuContext&);
template DeviceCsr<float> gpu_permute_rows<float>(const DeviceCsrView<float>&, const std::vector<int64_t>&,
                                                  const GpuContext&);
template DeviceCsr<double> gpu_permute_rows<double>(const DeviceCsrView<double>&, const std::vector<int64_t>&,
                                                    const GpuContext&);

}  // namespace sparsetc::detail
