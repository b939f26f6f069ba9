// The multiplication kernels of the tSparse SpGEMM on tensor cores (paper Section 4.3), fragments
// filled from registers in the documented PTX layouts (tc_ptx.cuh; g = lane / 4, t = lane % 4):
//  - fp16 / bf16: one warp, two C tiles, mma.m16n8k16 with fp32 accumulation. A = diag(A0, A1),
//    B = [B0; B1]: a[0] = A0(g, 2t..2t+1), a[3] = A1(g, 2t..2t+1), a[1] = a[2] = 0, b[0] =
//    B0(2t..2t+1, g), b[1] = B1(2t..2t+1, g); then c[0..1] = C0(g, 2t..2t+1), c[2..3] = C1(g, 2t..).
//    A tile with fewer tasks than its partner multiplies zeros (the paper's Fig. 6).
//    Split values (hi + lo): the same fragments gathered twice (one rank per element serves both),
//    c += hi*hi, then hi*lo, then lo*hi per task, in task order (deterministic).
//  - fp64: one warp per C tile, mma.m8n8k4 twice per task (k 0-3, then 4-7): a = A(g, t [+4]),
//    b = B(t [+4], g), c[0..1] = C(g, 2t..2t+1): the 8x8 tile product exactly, in double.
// Each lane gathers its elements from the packed tile values (rank of the bit in the bitmap) and
// writes its two results of each C tile to their CSR positions when they are in the structure.
#include "gpu/convert/convert_common.cuh"
#include "gpu/spgemm/tsparse/tile_bits.cuh"
#include "gpu/spgemm/tsparse/tile_kernel_args.cuh"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"
#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"

namespace sparsetc::detail::tsparse {
namespace {

template <bool kBf16>
__device__ __forceinline__ void mma_half(float (&c)[4], const uint32_t (&fa)[4], const uint32_t (&fb)[2]) {
  if constexpr (kBf16) tc::mma_m16n8k16_bf16(c, fa, fb);
  else tc::mma_m16n8k16_f16(c, fa, fb);
}

template <bool kBf16, bool kSplit>
__global__ void __launch_bounds__(kThreads) multiply_half_kernel(TaskArrays tasks, TileArrays a, TileArrays b,
                                                                 float* __restrict__ out) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const uint16_t* av = static_cast<const uint16_t*>(a.values);
  const uint16_t* bv = static_cast<const uint16_t*>(b.values);
  const uint16_t* av_lo = static_cast<const uint16_t*>(a.values_lo);
  const uint16_t* bv_lo = static_cast<const uint16_t*>(b.values_lo);
  const int64_t couples = (tasks.tiles + 1) / 2;
  for (int64_t w = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); w < couples;
       w += int64_t(gridDim.x) * kWarps) {
    const int64_t t0 = 2 * w, t1 = 2 * w + 1;
    const bool second = t1 < tasks.tiles;
    const int64_t p0 = tasks.tile_pair_ptr[t0], n0 = tasks.tile_pair_ptr[t0 + 1] - p0;
    const int64_t p1 = second ? tasks.tile_pair_ptr[t1] : 0, n1 = second ? tasks.tile_pair_ptr[t1 + 1] - p1 : 0;
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    for (int64_t i = 0, n = n0 > n1 ? n0 : n1; i < n; ++i) {
      uint32_t fa[4] = {0u, 0u, 0u, 0u}, fb[2] = {0u, 0u};
      uint32_t fa_lo[4] = {0u, 0u, 0u, 0u}, fb_lo[2] = {0u, 0u};
      if (i < n0) {
        const int64_t x = tasks.pair_a[p0 + i], y = tasks.pair_b[p0 + i];
        fa[0] = tile_pair_u16(av, a.offset[x], a.bitmap[x], g * 8 + 2 * t);
        fb[0] = tile_column_pair_u16(bv, b.offset[y], b.bitmap[y], 2 * t, g);
        if constexpr (kSplit) {
          fa_lo[0] = tile_pair_u16(av_lo, a.offset[x], a.bitmap[x], g * 8 + 2 * t);
          fb_lo[0] = tile_column_pair_u16(bv_lo, b.offset[y], b.bitmap[y], 2 * t, g);
        }
      }
      if (i < n1) {
        const int64_t x = tasks.pair_a[p1 + i], y = tasks.pair_b[p1 + i];
        fa[3] = tile_pair_u16(av, a.offset[x], a.bitmap[x], g * 8 + 2 * t);
        fb[1] = tile_column_pair_u16(bv, b.offset[y], b.bitmap[y], 2 * t, g);
        if constexpr (kSplit) {
          fa_lo[3] = tile_pair_u16(av_lo, a.offset[x], a.bitmap[x], g * 8 + 2 * t);
          fb_lo[1] = tile_column_pair_u16(bv_lo, b.offset[y], b.bitmap[y], 2 * t, g);
        }
      }
      mma_half<kBf16>(c, fa, fb);
      if constexpr (kSplit) {
        mma_half<kBf16>(c, fa, fb_lo);
        mma_half<kBf16>(c, fa_lo, fb);
      }
    }
    const uint64_t bits0 = tasks.c_bitmap[t0];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t pos = output_position(tasks.row_pos, t0, bits0, g, 2 * t + e);
      if (pos >= 0) out[pos] = c[e];
    }
    if (second) {
      const uint64_t bits1 = tasks.c_bitmap[t1];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int64_t pos = output_position(tasks.row_pos, t1, bits1, g, 2 * t + e);
        if (pos >= 0) out[pos] = c[2 + e];
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads) multiply_f64_kernel(TaskArrays tasks, TileArrays a, TileArrays b,
                                                                double* __restrict__ out) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const double* av = static_cast<const double*>(a.values);
  const double* bv = static_cast<const double*>(b.values);
  for (int64_t tile = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); tile < tasks.tiles;
       tile += int64_t(gridDim.x) * kWarps) {
    double c[2] = {0.0, 0.0};
    for (int64_t q = tasks.tile_pair_ptr[tile], end = tasks.tile_pair_ptr[tile + 1]; q < end; ++q) {
      const int64_t x = tasks.pair_a[q], y = tasks.pair_b[q];
      const uint64_t abits = a.bitmap[x], bbits = b.bitmap[y];
      const int64_t aoff = a.offset[x], boff = b.offset[y];
      tc::mma_m8n8k4_f64(c, tile_value(av, aoff, abits, g * 8 + t), tile_value(bv, boff, bbits, t * 8 + g));
      tc::mma_m8n8k4_f64(c, tile_value(av, aoff, abits, g * 8 + t + 4), tile_value(bv, boff, bbits, (t + 4) * 8 + g));
    }
    const uint64_t bits = tasks.c_bitmap[tile];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t pos = output_position(tasks.row_pos, tile, bits, g, 2 * t + e);
      if (pos >= 0) out[pos] = c[e];
    }
  }
}

}  // namespace

void multiply_half(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const uint64_t* bitmap,
                   const int64_t* row_pos, float* values, const GpuContext& context) {
  if (tasks.tiles == 0) return;
  const TaskArrays t = task_arrays(tasks, bitmap, row_pos);
  const unsigned grid = grid_for_warps((tasks.tiles + 1) / 2);
  const TileArrays ta = arrays_of(a), tb = arrays_of(b);
  const auto launch = [&](auto kernel) { kernel<<<grid, kThreads, 0, context.stream>>>(t, ta, tb, values); };
  switch (a.arithmetic) {
    case TileArithmetic::kBf16: launch(multiply_half_kernel<true, false>); break;
    case TileArithmetic::kF16Split: launch(multiply_half_kernel<false, true>); break;
    case TileArithmetic::kBf16Split: launch(multiply_half_kernel<true, true>); break;
    default: launch(multiply_half_kernel<false, false>); break;
  }
  SPARSETC_CUDA_CHECK_LAUNCH();
}

void multiply_f64(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const uint64_t* bitmap,
                  const int64_t* row_pos, double* values, const GpuContext& context) {
  if (tasks.tiles == 0) return;
  multiply_f64_kernel<<<grid_for_warps(tasks.tiles), kThreads, 0, context.stream>>>(
      task_arrays(tasks, bitmap, row_pos), arrays_of(a), arrays_of(b), values);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace sparsetc::detail::tsparse
