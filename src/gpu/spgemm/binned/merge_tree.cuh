// The stable merge-path tree of the binned SpGEMM (.cu files only): a row's products arrive as
// sorted runs (one per row of B met, in the order of A's entries); merging neighbouring runs
// pairwise, level by level, sorts them by column in log2(runs) passes, and stability (left run
// first on equal columns) keeps equal columns in the order of A's entries, as the canonical fold
// needs. Each thread takes ITEMS consecutive outputs of a level and finds where they start by one
// merge-path search (Green, McColl & Bader, ICS'12), then merges sequentially.
#pragma once

#include <cstdint>

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {

// Two buffers each of keys and values, buffer r at keys + r * stride, vals + r * stride. Buffer 0
// holds `runs` sorted runs in [0, n) starting at run_start[0, runs), run_start[runs] = n (zero-length
// runs allowed). Sorts them stably into buffer r and returns r (0 or 1). Whole block of THREADS
// threads, THREADS * ITEMS >= n; ends with a barrier when runs > 1.
template <int THREADS, int ITEMS, typename V>
__device__ int merge_runs(int32_t* keys_base, V* vals_base, int stride, const int32_t* run_start, int runs, int n) {
  int src = 0;
  for (int width = 1; width < runs; width <<= 1) {
    const int q0 = int(threadIdx.x) * ITEMS;
    if (q0 < n) {
      const int32_t* in = keys_base + src * stride;
      const V* in_vals = vals_base + src * stride;
      int32_t* out = keys_base + (src ^ 1) * stride;
      V* out_vals = vals_base + (src ^ 1) * stride;
      int g = last_not_above(run_start, runs, int32_t(q0)) / (2 * width) * (2 * width);
      int start = run_start[g], mid = run_start[min(g + width, runs)], end = run_start[min(g + 2 * width, runs)];
      int d = q0 - start, nl = mid - start, nr = end - mid;
      int lo = max(0, d - nr), hi = min(d, nl);
      while (lo < hi) {
        const int m = (lo + hi) >> 1;
        if (in[start + m] <= in[mid + d - 1 - m]) lo = m + 1;
        else hi = m;
      }
      int x = lo, y = d - lo;
      const int q1 = min(q0 + ITEMS, n);
      for (int q = q0; q < q1; ++q) {
        while (q >= end) {  // the next group of runs
          g += 2 * width;
          start = end;
          mid = run_start[min(g + width, runs)];
          end = run_start[min(g + 2 * width, runs)];
          nl = mid - start;
          nr = end - mid;
          x = y = 0;
        }
        const bool left = x < nl && (y >= nr || in[start + x] <= in[mid + y]);
        const int from = left ? start + x++ : mid + y++;
        out[q] = in[from];
        out_vals[q] = in_vals[from];
      }
    }
    __syncthreads();
    src ^= 1;
  }
  return src;
}

}  // namespace sparsetc::detail::binned
