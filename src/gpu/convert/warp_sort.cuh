// A warp's 32 * U keys sorted by a bitonic network in registers, and the distinct ones listed in
// order: no shared memory, no atomics. Keys are lane-blocked: lane l's key[u] sits at position
// l * U + u, so the network's strides below U are exchanges within a lane and only the strides
// from U up take a shuffle (15 steps of the network for any U).
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"

namespace sparsetc::detail::gpuconv {

// Sorts the warp's keys ascending (U a power of two): afterwards position l * U + u, lane l's
// key[u], holds the (l * U + u)-th smallest.
template <int U>
__device__ __forceinline__ void warp_bitonic_sort(uint32_t (&key)[U]) {
  static_assert(U >= 1 && (U & (U - 1)) == 0, "keys per lane: a power of two");
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int k = 2; k <= 32 * U; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      if (j < U) {  // partner key in the same lane
#pragma unroll
        for (int e = 0; e < U; ++e) {
          const int partner = e ^ j;
          if (partner < e) continue;
          // ascending where position bit k is clear (k < U: a bit of e; else a bit of the lane)
          const bool ascending = k < U ? (e & k) == 0 : (lane & (k / U)) == 0;
          const uint32_t lo = min(key[e], key[partner]), hi = max(key[e], key[partner]);
          key[e] = ascending ? lo : hi;
          key[partner] = ascending ? hi : lo;
        }
      } else {  // partner lane ^ (j / U), same slot; the lower position keeps the minimum if ascending
        const int lanes = j / U;
        const bool keep_min = ((lane & (k / U)) == 0) == ((lane & lanes) == 0);
#pragma unroll
        for (int e = 0; e < U; ++e) {
          const uint32_t other = __shfl_xor_sync(kFullMask, key[e], lanes);
          key[e] = keep_min ? min(key[e], other) : max(key[e], other);
        }
      }
    }
  }
}

// Sorts the keys and writes the distinct ones below `none` (the padding) to out in increasing
// order; returns how many (the same in every lane). The keys are left sorted.
template <int U>
__device__ __forceinline__ int list_distinct_sorted(uint32_t (&key)[U], uint32_t none, uint32_t* out) {
  static_assert(U <= 32, "one flag bit per key of a lane");
  warp_bitonic_sort(key);
  const int lane = threadIdx.x & 31;
  uint32_t before = __shfl_up_sync(kFullMask, key[U - 1], 1);  // the key at the position before
  if (lane == 0) before = none;
  uint32_t distinct = 0;  // bit u: key[u] is the first of its value, and not padding
#pragma unroll
  for (int u = 0; u < U; ++u) {
    distinct |= uint32_t(key[u] != none && key[u] != before) << u;
    before = key[u];
  }
  const int mine = __popc(distinct);
  const int inclusive = warp_inclusive_sum(mine);
  int at = inclusive - mine;
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (distinct & (1u << u)) out[at++] = key[u];
  return __shfl_sync(kFullMask, inclusive, 31);
}

}  // namespace sparsetc::detail::gpuconv
