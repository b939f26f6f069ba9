// Shared-memory layouts of the operands of one entry for the warp-specialized kernels: its A blocks
// (G blocks of the panel's block rows, 512 bytes each) and its B slab (block-width rows of B x TN
// columns, row-major B).
//
// B: which producer lane copies which 16-byte chunk: chunk (row, c) holds B[k0 + row][n0 + c * EPC,
// + EPC). A pass copies 32 chunks, one per lane.
//  - PaddedRowSlab: rows of TN values at a padded stride, read by ldmatrix.trans (mma.sync kernel);
//    a pass copies whole rows.
//  - CoreMatrixSlab: the N-major layout of wgmma's B operand with the 128-byte swizzle: atoms of
//    8 rows x 64 columns (1 KB, 1 KB-aligned), each row's 128 bytes contiguous with its 16-byte
//    chunks XOR-permuted by the row; atoms along N 1 KB apart, the second 8 rows after all of the
//    first. A pass copies 4 rows x 128 bytes: full lines of B in global memory, and 32 shared-memory
//    writes over all 32 banks.
// A: chunk (row, c) of a block (c: its 16-byte chunks along the row) lies at the block's start
// (kBlockStride apart) + offset(row, c).
//  - SwizzledABlocks: each block row-major, chunks XOR-swizzled for ldmatrix (T::a_offset).
//  - CoreMatrixAPanel: the K-major, unswizzled layout of wgmma's A operand over the whole panel:
//    its 16 G rows as 8-row core matrices 128 bytes apart, the second 8 columns after all of the
//    first (G * 256 bytes on). A group of kZeroGroup blocks (a warpgroup's 64 rows) is read whole,
//    so the producers zero-fill its absent blocks.
#pragma once

#include <cstdint>

#include "gpu/spmm/bcsr_tc/tc_stage.cuh"

namespace sparsetc::detail::tc {

template <class T>
struct SwizzledABlocks {
  static constexpr int kBlockStride = kBlockBytes;
  static constexpr int kZeroGroup = 1;
  // The chunk a producer lane copies: in the block's order (lane * 16 bytes on); the swizzle spreads
  // a warp's writes over all banks.
  static __device__ __forceinline__ int lane_row(int lane) { return lane / T::kAChunksPerRow; }
  static __device__ __forceinline__ int lane_chunk(int lane) { return lane % T::kAChunksPerRow; }
  static __device__ __forceinline__ uint32_t offset(int row, int chunk) { return uint32_t(T::a_offset(row, chunk)); }
};

template <class T, int G>
struct CoreMatrixAPanel {
  static_assert(T::kElemBytes == 2 && T::kBlockW == 16 && T::kBlockH == 16, "16 x 16 blocks of 16-bit values");
  static constexpr int kBlockStride = 16 * 16;       // a block's 16 rows of 16 bytes (each half)
  static constexpr int kStrideBytes = 128;           // next 8 rows (descriptor: SBO)
  static constexpr int kLeadingBytes = G * 256;      // next 8 columns (descriptor: LBO)
  static constexpr int kZeroGroup = 4;               // a warpgroup's 64 rows (wgmma m64)
  // The chunk a producer lane copies: chunk-major (lanes 0-15 the first 8 columns of rows 0-15), so
  // a warp writes two runs of 256 bytes. In the block's order, the two chunks of a row (one 32-byte
  // sector of A) went to places 2 KB apart: measured on H200, every copy took 8 times the ideal
  // shared-memory wavefronts and twice the L2 sectors.
  static __device__ __forceinline__ int lane_row(int lane) { return lane % 16; }
  static __device__ __forceinline__ int lane_chunk(int lane) { return lane / 16; }
  static __device__ __forceinline__ uint32_t offset(int row, int chunk) {
    return uint32_t(chunk * kLeadingBytes + row * 16);
  }
};

template <class T, int TN>
struct PaddedRowSlab {
  static constexpr int kEPC = 16 / T::kElemBytes;
  static constexpr int kRowBytes = T::b_row_stride(TN);
  static constexpr int kBytes = T::kBlockW * kRowBytes;
  static constexpr int kChunksPerRow = TN / kEPC;
  static constexpr int kRowsPerPass = 32 / kChunksPerRow;
  static constexpr int kPasses = T::kBlockW / kRowsPerPass;
  static constexpr int kAlign = 16;
  static_assert(32 % kChunksPerRow == 0 && T::kBlockW % kRowsPerPass == 0, "whole B rows per pass");

  // row(pass, lane) = row_step(pass) + row(0, lane), and likewise the chunk
  static constexpr int row_step(int pass) { return pass * kRowsPerPass; }
  static constexpr int chunk_step(int) { return 0; }
  static __device__ __forceinline__ int row(int pass, int lane) { return row_step(pass) + lane / kChunksPerRow; }
  static __device__ __forceinline__ int chunk(int pass, int lane) { return chunk_step(pass) + lane % kChunksPerRow; }
  static __device__ __forceinline__ uint32_t offset(int row, int chunk) {
    return uint32_t(row * kRowBytes + chunk * 16);
  }
};

template <class T, int TN>
struct CoreMatrixSlab {
  static_assert(T::kElemBytes == 2 && T::kBlockW == 16, "16-bit values, two 8-row groups deep");
  static_assert(TN % 64 == 0, "whole 128-byte rows of 64 columns");
  static constexpr int kEPC = 8;
  static constexpr int kAtomBytes = 1024;                        // 8 rows x 128 bytes (64 columns)
  static constexpr int kLeadingBytes = kAtomBytes;               // next 64 columns (descriptor: LBO)
  static constexpr int kStrideBytes = TN / 64 * kAtomBytes;      // next 8 rows (descriptor: SBO)
  static constexpr int kBytes = 2 * kStrideBytes;
  static constexpr int kAlign = kAtomBytes;                      // the swizzle follows address bits
  static constexpr uint32_t kSwizzle = 1;                        // 128-byte swizzle (descriptor mode)
  static constexpr int kPasses = 16 * (TN / kEPC) / 32;

  static constexpr int row_step(int pass) { return pass / (TN / 64) * 4; }
  static constexpr int chunk_step(int pass) { return pass % (TN / 64) * 8; }
  static __device__ __forceinline__ int row(int pass, int lane) { return row_step(pass) + lane / 8; }
  static __device__ __forceinline__ int chunk(int pass, int lane) { return chunk_step(pass) + lane % 8; }
  static __device__ __forceinline__ uint32_t offset(int row, int chunk) {
    return uint32_t((row / 8) * kStrideBytes + (chunk / 8) * kAtomBytes + (row % 8) * 128 +
                    (((chunk % 8) ^ (row % 8)) * 16));
  }
};

}  // namespace sparsetc::detail::tc
