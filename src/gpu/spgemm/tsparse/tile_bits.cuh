// Device helpers of the tSparse kernels on 8x8 bitmap tiles (bit = row * 8 + column).
#pragma once

#include <cstdint>

namespace sparsetc::detail::tsparse {

constexpr uint64_t kByteLowBits = 0x0101010101010101ull;

// The boolean product of two tiles: bit (r, c) set when some k has A(r, k) and B(k, c). For each
// k, column k of A spread to whole bytes (byte r = 0xFF when A(r, k)) masks row k of B copied to
// every byte. Exact: every byte stays within 0..0xFF, so the products never carry.
__device__ __forceinline__ uint64_t boolean_tile_product(uint64_t a, uint64_t b) {
  uint64_t c = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint64_t column = (a >> k) & kByteLowBits;
    const uint64_t row = (b >> (8 * k)) & 0xFFull;
    c |= (column * 0xFFull) & (row * kByteLowBits);
  }
  return c;
}

// Bit l of x moved to bit 2l (Morton spreading).
__device__ __forceinline__ uint64_t spread_bits(uint32_t x) {
  uint64_t v = x;
  v = (v | (v << 16)) & 0x0000FFFF0000FFFFull;
  v = (v | (v << 8)) & 0x00FF00FF00FF00FFull;
  v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0Full;
  v = (v | (v << 2)) & 0x3333333333333333ull;
  v = (v | (v << 1)) & 0x5555555555555555ull;
  return v;
}

// Lane l = 4g + t holds a tile's elements (g, 2t) and (g, 2t + 1) - bits 2l and 2l + 1 - in the
// accumulator layout of m16n8k16 (rows 0-7 or 8-15) and of m8n8k4: the tile's bitmap of the
// elements for which `first` / `second` hold, from two ballots.
__device__ __forceinline__ uint64_t bitmap_from_ballots(bool first, bool second) {
  const uint32_t even = __ballot_sync(0xFFFFFFFFu, first), odd = __ballot_sync(0xFFFFFFFFu, second);
  return spread_bits(even) | (spread_bits(odd) << 1);
}

// Position of bit `bit` among the set bits of `bits` (the value's index within its tile).
__device__ __forceinline__ int rank_in_tile(uint64_t bits, int bit) {
  return __popcll(bits & ((1ull << bit) - 1ull));
}

// The stored value of element `bit` of a tile, or zero when the bit is clear.
template <typename T>
__device__ __forceinline__ T tile_value(const T* __restrict__ values, int64_t offset, uint64_t bits, int bit) {
  return (bits >> bit) & 1ull ? values[offset + rank_in_tile(bits, bit)] : T(0);
}

// Elements `bit` and `bit` + 1 (same tile row) of a 16-bit tile packed low / high.
__device__ __forceinline__ uint32_t tile_pair_u16(const uint16_t* __restrict__ values, int64_t offset, uint64_t bits,
                                                  int bit) {
  const uint32_t lo = tile_value(values, offset, bits, bit), hi = tile_value(values, offset, bits, bit + 1);
  return lo | (hi << 16);
}

// Elements (k, n) and (k + 1, n) of a 16-bit tile (bits k * 8 + n and k * 8 + 8 + n) packed low / high:
// the B operand layout of m16n8k16 (two consecutive k of one column).
__device__ __forceinline__ uint32_t tile_column_pair_u16(const uint16_t* __restrict__ values, int64_t offset,
                                                         uint64_t bits, int k, int n) {
  const uint32_t lo = tile_value(values, offset, bits, k * 8 + n), hi = tile_value(values, offset, bits, k * 8 + 8 + n);
  return lo | (hi << 16);
}

// CSR position of element (g, c) of C tile t, or -1 when it is not in the structure.
__device__ __forceinline__ int64_t output_position(const int64_t* __restrict__ row_pos, int64_t t, uint64_t bits,
                                                   int g, int c) {
  const uint32_t row = uint32_t(bits >> (8 * g)) & 0xFFu;
  if (!((row >> c) & 1u)) return -1;
  return row_pos[t * 8 + g] + __popc(row & ((1u << c) - 1u));
}

}  // namespace sparsetc::detail::tsparse
