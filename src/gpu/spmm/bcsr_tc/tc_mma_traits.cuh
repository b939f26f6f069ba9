// One struct per precision, holding everything the shared kernel skeleton (tc_spmm_kernel.cuh)
// needs to know about it: the A block shape, the shared-memory layouts of A blocks and B slabs
// (chosen so that every fragment load is free of bank conflicts), the fragment loads, and the MMA.
//
// Shared-memory layouts (all 16-byte chunks, so cp.async can fill them):
//  - A block: 512 bytes, row-major, chunk index XOR-swizzled by the row so that the 8 row addresses
//    of one ldmatrix phase (or one half-warp's 8-byte loads for f64) fall in distinct banks.
//  - B slab of row-major B: block-width rows of TN values, row stride padded (b_row_stride).
//  - B slab of column-major B: TN rows (one per column of B) of block-width values, padded
//    (kBColStride); the fragments then come from non-transposing loads.
#pragma once

#include <cstdint>

#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"

namespace sparsetc::detail::tc {

// ---- The 16-row A side shared by the fp16/bf16 (16x16) and tf32 (16x8) blocks: both are 512 bytes,
// two 16-byte chunks per row, swizzled by bit 2 of the row, read by one ldmatrix.x4 whose four 8x8
// b16 matrices are exactly the A fragment of m16n8k16 (and, read as 8 rows x 4 floats, of m16n8k8
// tf32); the accumulator layout of a 16x8 tile is the same for both MMAs.
struct SixteenRowA {
  using Acc = float;
  static constexpr int kAccPerTile = 4;  // accumulators per thread of one 16 x 8 tile

  struct AFrag { uint32_t r[4]; };
  struct BFrag { uint32_t r[2]; };
  struct AccTile { float v[4] = {0.f, 0.f, 0.f, 0.f}; };

  static __device__ __forceinline__ int a_offset(int row, int chunk) {
    return (row * 2 + (chunk ^ ((row >> 2) & 1))) * 16;
  }
  // This lane's ldmatrix row address in an A block (loop-invariant: computed once per thread).
  static __device__ __forceinline__ uint32_t a_lane(int lane) { return a_offset(lane & 15, lane >> 4); }
  static __device__ __forceinline__ void load_a(AFrag& a, uint32_t block, uint32_t lane_offset) {
    ldmatrix_x4(a.r, block + lane_offset);
  }
  static __device__ __forceinline__ int acc_row(int i, int lane) { return (lane >> 2) + (i >> 1) * 8; }
  static __device__ __forceinline__ int acc_col(int i, int lane) { return (lane & 3) * 2 + (i & 1); }
};

// ---- fp16 / bf16: 16x16 blocks, mma.m16n8k16 with fp32 accumulation, ldmatrix for A and B.
template <bool kBf16>
struct HalfTraits : SixteenRowA {
  using Value = uint16_t;  // A and B storage (fp16 or bf16 bits)
  static constexpr int kBlockH = 16, kBlockW = 16, kElemBytes = 2;
  static constexpr int kAChunksPerRow = kBlockW * kElemBytes / 16;
  static constexpr int b_row_stride(int tn) { return tn * kElemBytes + (tn >= 16 ? 16 : 0); }
  static constexpr int kBColStride = kBlockW * kElemBytes + 16;

  // This lane's ldmatrix row address in a B slab for the warp's first column n_first; the .x2 form
  // reads lanes 0-15 only, for which the same address holds.
  template <int TN, bool kColMajor>
  static __device__ __forceinline__ uint32_t b_lane(int n_first, int lane) {
    if constexpr (kColMajor) return (n_first + (lane & 7) + ((lane >> 4) << 3)) * kBColStride + ((lane >> 3) & 1) * 16;
    else return (lane & 15) * b_row_stride(TN) + (n_first / 8 + (lane >> 4)) * 16;
  }
  // The fragments of NT consecutive n-tiles (slab_lane: slab + b_lane).
  template <int NT, int TN, bool kColMajor>
  static __device__ __forceinline__ void load_b(BFrag (&b)[NT], uint32_t slab_lane) {
    constexpr int kTileStep = kColMajor ? 8 * kBColStride : 16;  // bytes from one n-tile to the next
#pragma unroll
    for (int p = 0; p + 1 < NT; p += 2) {
      uint32_t r[4];
      if constexpr (kColMajor) ldmatrix_x4(r, slab_lane + p * kTileStep);
      else ldmatrix_x4_trans(r, slab_lane + p * kTileStep);
      b[p].r[0] = r[0];
      b[p].r[1] = r[1];
      b[p + 1].r[0] = r[2];
      b[p + 1].r[1] = r[3];
    }
    if constexpr (NT % 2 == 1) {
      constexpr int p = NT - 1;
      if constexpr (kColMajor) ldmatrix_x2(b[p].r, slab_lane + p * kTileStep);
      else ldmatrix_x2_trans(b[p].r, slab_lane + p * kTileStep);
    }
  }
  static __device__ __forceinline__ void mma(AccTile& c, const AFrag& a, const BFrag& b) {
    if constexpr (kBf16) mma_m16n8k16_bf16(c.v, a.r, b.r);
    else mma_m16n8k16_f16(c.v, a.r, b.r);
  }
};
using F16Traits = HalfTraits<false>;
using Bf16Traits = HalfTraits<true>;

// ---- tf32: 16x8 blocks of fp32 (A stored already rounded to tf32), mma.m16n8k8; B rounded with
// cvt.rna as its fragments are loaded.
struct Tf32Traits : SixteenRowA {
  using Value = float;
  static constexpr int kBlockH = 16, kBlockW = 8, kElemBytes = 4;
  static constexpr int kAChunksPerRow = kBlockW * kElemBytes / 16;
  static constexpr int b_row_stride(int tn) { return tn * kElemBytes + 32; }
  static constexpr int kBColStride = kBlockW * kElemBytes + 16;

  // A comes from SixteenRowA: through ldmatrix each 8x8 b16 matrix is 8 rows x 4 floats, and thread l
  // receives element (l / 4, l % 4) of each, exactly the tf32 A fragment.
  // Element (k = t, n = n_first + g) of the slab.
  template <int TN, bool kColMajor>
  static __device__ __forceinline__ uint32_t b_lane(int n_first, int lane) {
    const int g = lane >> 2, t = lane & 3;
    if constexpr (kColMajor) return (n_first + g) * kBColStride + t * 4;
    else return t * b_row_stride(TN) + (n_first + g) * 4;
  }
  template <int NT, int TN, bool kColMajor>
  static __device__ __forceinline__ void load_b(BFrag (&b)[NT], uint32_t slab_lane) {
    constexpr int kTileStep = kColMajor ? 8 * kBColStride : 32;  // next n-tile
    constexpr int kHalfK = kColMajor ? 16 : 4 * b_row_stride(TN);  // k + 4
#pragma unroll
    for (int p = 0; p < NT; ++p) {
      b[p].r[0] = to_tf32(lds_u32(slab_lane + p * kTileStep));
      b[p].r[1] = to_tf32(lds_u32(slab_lane + p * kTileStep + kHalfK));
    }
  }
  static __device__ __forceinline__ void mma(AccTile& c, const AFrag& a, const BFrag& b) {
    mma_m16n8k8_tf32(c.v, a.r, b.r);
  }
};

// ---- f64: 8x8 blocks of doubles, two mma.m8n8k4 k-steps per block, 8-byte shared loads.
struct F64Traits {
  using Value = double;
  using Acc = double;
  static constexpr int kBlockH = 8, kBlockW = 8, kElemBytes = 8;
  static constexpr int kAccPerTile = 2;
  static constexpr int kAChunksPerRow = kBlockW * kElemBytes / 16;
  static constexpr int b_row_stride(int tn) { return tn * kElemBytes + 32; }
  static constexpr int kBColStride = kBlockW * kElemBytes + 32;

  struct AFrag { double k[2]; };  // k-steps 0 and 1
  struct BFrag { double k[2]; };
  struct AccTile { double v[2] = {0.0, 0.0}; };

  // Rows 2-3 (mod 4) swap chunk pairs: a half-warp's rows g = 0..3 then cover all 32 banks.
  static __device__ __forceinline__ int a_offset(int row, int chunk) {
    return (row * 4 + (chunk ^ (((row >> 1) & 1) << 1))) * 16;
  }
  // Element (g, t) of k-step 0; k-step 1 (columns 4..7) is chunk index + 2, i.e. bit 5 of the offset in
  // the block flipped (the swizzle only ever flips bit 1 of the chunk index).
  static __device__ __forceinline__ uint32_t a_lane(int lane) {
    const int g = lane >> 2, t = lane & 3;
    return a_offset(g, t >> 1) + (t & 1) * 8;
  }
  static __device__ __forceinline__ void load_a(AFrag& a, uint32_t block, uint32_t lane_offset) {
    a.k[0] = lds_f64(block + lane_offset);
    a.k[1] = lds_f64(block + (lane_offset ^ 32u));
  }
  // Element (k = t, n = n_first + g) of the slab.
  template <int TN, bool kColMajor>
  static __device__ __forceinline__ uint32_t b_lane(int n_first, int lane) {
    const int g = lane >> 2, t = lane & 3;
    if constexpr (kColMajor) return (n_first + g) * kBColStride + t * 8;
    else return t * b_row_stride(TN) + (n_first + g) * 8;
  }
  template <int NT, int TN, bool kColMajor>
  static __device__ __forceinline__ void load_b(BFrag (&b)[NT], uint32_t slab_lane) {
    constexpr int kTileStep = kColMajor ? 8 * kBColStride : 64;  // next n-tile
    constexpr int kStepK = kColMajor ? 32 : 4 * b_row_stride(TN);  // k + 4
#pragma unroll
    for (int p = 0; p < NT; ++p) {
      b[p].k[0] = lds_f64(slab_lane + p * kTileStep);
      b[p].k[1] = lds_f64(slab_lane + p * kTileStep + kStepK);
    }
  }
  static __device__ __forceinline__ void mma(AccTile& c, const AFrag& a, const BFrag& b) {
    mma_m8n8k4_f64(c.v, a.k[0], b.k[0]);
    mma_m8n8k4_f64(c.v, a.k[1], b.k[1]);
  }
  static __device__ __forceinline__ int acc_row(int, int lane) { return lane >> 2; }
  static __device__ __forceinline__ int acc_col(int i, int lane) { return (lane & 3) * 2 + i; }
};

}  // namespace sparsetc::detail::tc
