// The (row, strip) segments of a CSR row: its pieces in one strip of `width` columns each,
// contiguous in the CSR since a row's columns are sorted. Shared by the tiled DCSR's ways
// (tiled_dcsr.cu, strip_windows.cuh).
#pragma once

#include <cstdint>

#include "gpu/convert/fast_divider.hpp"

namespace sparsetc::detail::gpuconv {

constexpr int64_t kRowWalk = 64;  // rows up to this long are walked by their own thread

// The segments of row r: visit(k, j, length, strip) for the k-th one, which starts at entry j. A
// row within one strip is one segment (its first and last column tell); one of up to kRowWalk
// entries is walked. A longer row is not visited: its upper bound (entries or strips spanned, the
// fewer) is returned and *long_row set. (A warp walking each longer row, 32 entries a step, left
// R-MAT's count at 0.3 ms: its warps walked hundreds of rows of thousands of entries in turn.)
// Returns the row's segment count.
template <typename Visit>
__device__ __forceinline__ int64_t for_each_row_segment(const int64_t* __restrict__ row_ptr,
                                                        const int32_t* __restrict__ col_idx, int64_t r,
                                                        FastDivider width, bool* long_row, Visit visit) {
  const int64_t a = __ldg(row_ptr + r), b = __ldg(row_ptr + r + 1);
  if (a == b) return 0;
  const uint32_t first_strip = width.divide(uint32_t(__ldg(col_idx + a)));
  const uint32_t last_strip = width.divide(uint32_t(__ldg(col_idx + b - 1)));
  if (first_strip == last_strip) {
    visit(int64_t(0), a, b - a, first_strip);
    return 1;
  }
  if (b - a > kRowWalk) {
    *long_row = true;
    const int64_t span = int64_t(last_strip) - int64_t(first_strip) + 1;
    return b - a < span ? b - a : span;
  }
  int64_t count = 0, start = a;
  uint32_t strip = first_strip;
  for (int64_t j = a + 1; j < b; ++j) {
    const uint32_t s = width.divide(uint32_t(__ldg(col_idx + j)));
    if (s != strip) {
      visit(count++, start, j - start, strip);
      strip = s;
      start = j;
    }
  }
  visit(count++, start, b - start, strip);
  return count;
}

}  // namespace sparsetc::detail::gpuconv
