// Single-pass exclusive scan of per-CTA int64 sums by decoupled look-back (Merrill and Garland,
// "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA 2016), for kernels that
// scan something and use the result in the same launch.
//
// Each tile publishes its own sum at once, then the sum of everything up to it, in one 64-bit word
// per tile: two flag bits over a 62-bit value, so one store publishes both and no fence has to
// order a value before its flag. A tile's warp reads 32 predecessors at a time, adds the sums up to
// the nearest one that already has its inclusive prefix, and stops there. The words start zeroed
// (not ready). Tiles are blockIdx.x: a CTA waits only on CTAs launched before it, which the
// hardware has started (CUB's single-pass scans rely on the same order).
#pragma once

#include <cstdint>

namespace sparsetc::detail::gpuconv {

struct TilePrefixes {
  unsigned long long* words;  // one per tile, zeroed before the launch

  static constexpr unsigned long long kSum = 1ull << 62;        // the tile's own sum is ready
  static constexpr unsigned long long kInclusive = 2ull << 62;  // the sum of tiles 0..t is ready
  static constexpr unsigned long long kValue = kSum - 1;        // sums stay below 2^62

  // Called by the 32 lanes of one warp of tile `tile` with the tile's sum (the same on every
  // lane); returns the sum of the tiles before it on every lane.
  __device__ int64_t exclusive_prefix(int64_t tile, int64_t sum) const {
    const int lane = int(threadIdx.x & 31);
    if (tile == 0) {
      if (lane == 0) publish(0, kInclusive | (unsigned long long)sum);
      return 0;
    }
    if (lane == 0) publish(tile, kSum | (unsigned long long)sum);
    int64_t prefix = 0;
    for (int64_t newest = tile - 1;; newest -= 32) {
      const int64_t t = newest - lane;  // lane 0 reads the nearest predecessor
      unsigned long long word = t < 0 ? kInclusive : 0;  // before tile 0: an inclusive zero
      while (!__all_sync(0xFFFFFFFFu, word != 0)) {
        if (word == 0) word = load(t);
      }
      const unsigned inclusive = __ballot_sync(0xFFFFFFFFu, word >= kInclusive);
      const int counted = inclusive ? __ffs(int(inclusive)) : 32;  // lanes up to the nearest inclusive one
      int64_t part = lane < counted ? int64_t(word & kValue) : 0;
      for (int offset = 16; offset > 0; offset >>= 1) part += __shfl_xor_sync(0xFFFFFFFFu, part, offset);
      prefix += part;
      if (inclusive) break;
    }
    if (lane == 0) publish(tile, kInclusive | (unsigned long long)(prefix + sum));
    return prefix;
  }

 private:
  __device__ void publish(int64_t tile, unsigned long long word) const {
    *reinterpret_cast<volatile unsigned long long*>(words + tile) = word;
  }
  __device__ unsigned long long load(int64_t tile) const {
    return *reinterpret_cast<const volatile unsigned long long*>(words + tile);
  }
};

}  // namespace sparsetc::detail::gpuconv
