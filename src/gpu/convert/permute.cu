// Row permutation (gather) on the device: row i of the result is row permutation[i].
//
// The new offsets are an inclusive scan of the gathered row lengths (read through an iterator, no
// lengths array), and one merge-path pass over the new structure copies every entry
// (gather_segments, convert_common.cuh: rows are the segments, each starting at row_ptr[perm[i]]).
// The check rides along in the same kernel: each row is visited by exactly one tile, which marks
// its source row in a bitmap (atomicOr: a repeat finds its bit set) and records an out-of-range
// position (atomicMax of its complement). One read-back at the end (one sync); only when a repeat
// was seen do two more passes find the first repeated position, so the messages are the host's.
// (Measured on an H200, 12-14M entries: one load in flight per thread and two checking passes
// over the permutation reached 30-38% of the bandwidth floor; this scheme 47% on poisson3d27:80.)
#include <cstdint>
#include <vector>

#include <thrust/iterator/transform_iterator.h>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;

// Rows outside [0, rows) read row 0 (the result is thrown away then: the check fails).
__device__ __forceinline__ int64_t valid_row(const int64_t* perm, int64_t i, int64_t rows) {
  const int64_t p = perm[i];
  return p >= 0 && p < rows ? p : 0;
}

// The exact first repeat, on the error path only: first[p] = the smallest i with perm[i] = p,
// then bad[1] = the smallest i whose row appeared before.
struct FirstPosition {
  const int64_t* perm;
  int64_t rows;
  ull* first;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p >= 0 && p < rows) atomicMin(first + p, ull(i));
  }
};

struct FirstRepeat {
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

// The check of one position: bad[0] = ~(the first position out of range), 0 for none (a max, so
// that one zeroing starts it all); bad[1] = 1 once a row was seen twice (seen: one bit per row).
__device__ __forceinline__ void check_position(const int64_t* perm, int64_t i, int64_t rows, uint32_t* seen,
                                               ull* bad) {
  const int64_t p = perm[i];
  if (p < 0 || p >= rows) {
    atomicMax(bad, ~ull(i));
    return;
  }
  const uint32_t bit = 1u << (p & 31);
  if (atomicOr(seen + (p >> 5), bit) & bit) bad[1] = 1;
}

// Row i of the result starts at input entry row_ptr[perm[i]].
struct RowSource {
  const int64_t* perm;
  int64_t rows;
  const int64_t* row_ptr;
  __device__ int64_t operator()(int64_t i) const { return __ldg(row_ptr + valid_row(perm, i, rows)); }
};

struct CheckRow {
  const int64_t* perm;
  int64_t rows;
  uint32_t* seen;
  ull* bad;
  __device__ void operator()(int64_t i) const { check_position(perm, i, rows, seen, bad); }
};

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
  // The check's state, zeroed at once: bad[0], ~(the first position out of range); bad[1], a
  // repeat seen; then one bit per row.
  const int64_t check_words = 2 + ((rows + 31) / 32 + 1) / 2;
  DeviceBuffer check = buffer_of<ull>(check_words, context);
  ull* bad = check.as<ull>();
  uint32_t* seen = reinterpret_cast<uint32_t*>(bad + 2);
  zero(bad, check_words, context.stream);
  int64_t* new_ptr = out.row_ptr.template as<int64_t>();
  zero(new_ptr, 1, context.stream);
  if (rows > 0) {
    const auto lengths = thrustns::make_transform_iterator(thrustns::counting_iterator<int64_t>(0),
                                                           RowLength{d_permutation, rows, csr.row_ptr});
    run_cub("cub::DeviceScan::InclusiveSum", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceScan::InclusiveSum(temp, bytes, lengths, new_ptr + 1, rows, context.stream);
    });
    // Every row is visited once, so this runs for empty matrices too (the check).
    gather_segments(new_ptr, rows, csr.nnz, RowSource{d_permutation, rows, csr.row_ptr},
                    CheckRow{d_permutation, rows, seen, bad}, csr.col_idx, csr.values,
                    out.col_idx.template as<int32_t>(), out.values.template as<V>(), context);
  }
  ull found[2];
  copy_device_to_host(found, bad, sizeof found, context.stream);
  if (found[0] != 0) {
    const int64_t i = int64_t(~found[0]), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is out of range [0, ", rows,
         ")");
  }
  if (found[1] != 0) {  // the first repeat and its earlier position, as the host names them
    DeviceBuffer first = buffer_of<ull>(rows, context);
    ull* f = first.as<ull>();
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(f, 0xff, size_t(rows) * sizeof(ull), context.stream));
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(bad + 1, 0xff, sizeof(ull), context.stream));
    for_each_index(rows, context, FirstPosition{d_permutation, rows, f});
    for_each_index(rows, context, FirstRepeat{d_permutation, rows, f, bad});
    const int64_t i = int64_t(read_back(bad + 1, context.stream)), p = read_back(d_permutation + i, context.stream);
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
