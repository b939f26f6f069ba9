// Device helpers of the binned SpGEMM kernels (.cu files only): the canonical product and sum
// (rounded separately, never contracted into an FMA, so every kernel folds the same bits), and
// small search helpers.
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/device_csr.hpp"
#include "gpu/spgemm/binned/kernels.hpp"

namespace sparsetc::detail::binned {

namespace cubns = gpuconv::cubns;
using gpuconv::ctas_for;
using gpuconv::kFullMask;

__device__ __forceinline__ float product(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double product(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float sum(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double sum(double a, double b) { return __dadd_rn(a, b); }

// Row i of B that entry p of A meets: [begin, end) in B's arrays.
template <typename V>
__device__ __forceinline__ void row_of_b(const DeviceCsrView<V>& b, int32_t k, int64_t& begin, int64_t& end) {
  begin = __ldg(b.row_ptr + k);
  end = __ldg(b.row_ptr + k + 1);
}

// First position in [0, n) of sorted `a` whose value is >= key (n when none).
template <typename T>
__device__ __forceinline__ int64_t lower_bound_in(const T* a, int64_t n, T key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Last position r in [0, n) with a[r] <= key, for a[0] <= key (the run holding product `key`).
template <typename T>
__device__ __forceinline__ int last_not_above(const T* a, int n, T key) {
  int lo = 0, hi = n;
  while (hi - lo > 1) {
    const int mid = (lo + hi) >> 1;
    if (a[mid] <= key) lo = mid;
    else hi = mid;
  }
  return lo;
}

// Smallest power of two >= n (n >= 1).
__device__ __forceinline__ int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace sparsetc::detail::binned
