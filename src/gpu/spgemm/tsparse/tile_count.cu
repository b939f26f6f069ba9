// The counting step of the tSparse SpGEMM (paper Section 4.2): the structural bitmap of every C
// tile, the OR over its tasks of the boolean tile products. Two exact methods:
//  - bitwise: one thread per C tile, eight shift-multiply-and steps per pair (tile_bits.cuh);
//  - tensor cores, as the paper: the bitmaps become 0/1 fp16 tiles, one warp multiplies two C
//    tiles at once with mma.m16n8k16 (fp32 accumulation, so no count can overflow), and a ballot of
//    c > 0 gives the bitmaps.
// Packing two tiles in one m16n8k16 (an improvement over the paper's 16x16x16 WMMA, where three
// quarters of the product are wasted): A = diag(A0, A1) (16 x 16), B = [B0; B1] (16 x 8), so
// C = [A0 B0; A1 B1] - the whole 16 x 8 accumulator is useful. With g = lane / 4, t = lane % 4 the
// PTX fragments are a[0] = A0(g, 2t..2t+1), a[3] = A1(g, 2t..2t+1), a[1] = a[2] = 0 (off-diagonal),
// b[0] = B0(2t..2t+1, g), b[1] = B1(2t..2t+1, g), c[0..1] = C0(g, 2t..2t+1), c[2..3] = C1(g, 2t..2t+1).
#include "gpu/convert/convert_common.cuh"
#include "gpu/spgemm/tsparse/tile_bits.cuh"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"
#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"

namespace sparsetc::detail {
namespace {

using gpuconv::kThreads;
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads)
    count_bitwise_kernel(int64_t tiles, const int64_t* __restrict__ tile_pair_ptr, const int64_t* __restrict__ pair_a,
                         const int64_t* __restrict__ pair_b, const uint64_t* __restrict__ a_bitmap,
                         const uint64_t* __restrict__ b_bitmap, uint64_t* __restrict__ c_bitmap) {
  for (int64_t t = int64_t(blockIdx.x) * kThreads + threadIdx.x; t < tiles; t += int64_t(gridDim.x) * kThreads) {
    uint64_t bits = 0;
    for (int64_t q = tile_pair_ptr[t], end = tile_pair_ptr[t + 1]; q < end; ++q)
      bits |= tsparse::boolean_tile_product(a_bitmap[pair_a[q]], b_bitmap[pair_b[q]]);
    c_bitmap[t] = bits;
  }
}

constexpr uint32_t kHalfOne = 0x3C00u;  // 1.0 in fp16

__device__ __forceinline__ uint32_t ones(uint64_t bits, int lo_bit, int hi_bit) {
  return (((bits >> lo_bit) & 1ull) ? kHalfOne : 0u) | (((bits >> hi_bit) & 1ull) ? kHalfOne << 16 : 0u);
}

__global__ void __launch_bounds__(kThreads)
    count_tensor_core_kernel(int64_t tiles, const int64_t* __restrict__ tile_pair_ptr,
                             const int64_t* __restrict__ pair_a, const int64_t* __restrict__ pair_b,
                             const uint64_t* __restrict__ a_bitmap, const uint64_t* __restrict__ b_bitmap,
                             uint64_t* __restrict__ c_bitmap) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int64_t couples = (tiles + 1) / 2;
  for (int64_t w = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); w < couples;
       w += int64_t(gridDim.x) * kWarps) {
    const int64_t t0 = 2 * w, t1 = 2 * w + 1;
    const int64_t p0 = tile_pair_ptr[t0], n0 = tile_pair_ptr[t0 + 1] - p0;
    const int64_t p1 = t1 < tiles ? tile_pair_ptr[t1] : 0, n1 = t1 < tiles ? tile_pair_ptr[t1 + 1] - p1 : 0;
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    for (int64_t i = 0, n = n0 > n1 ? n0 : n1; i < n; ++i) {
      const uint64_t a0 = i < n0 ? a_bitmap[pair_a[p0 + i]] : 0, b0 = i < n0 ? b_bitmap[pair_b[p0 + i]] : 0;
      const uint64_t a1 = i < n1 ? a_bitmap[pair_a[p1 + i]] : 0, b1 = i < n1 ? b_bitmap[pair_b[p1 + i]] : 0;
      const uint32_t a[4] = {ones(a0, g * 8 + 2 * t, g * 8 + 2 * t + 1), 0u, 0u,
                             ones(a1, g * 8 + 2 * t, g * 8 + 2 * t + 1)};
      const uint32_t b[2] = {ones(b0, 2 * t * 8 + g, 2 * t * 8 + 8 + g), ones(b1, 2 * t * 8 + g, 2 * t * 8 + 8 + g)};
      tc::mma_m16n8k16_f16(c, a, b);
    }
    const uint64_t bits0 = tsparse::bitmap_from_ballots(c[0] > 0.f, c[1] > 0.f);
    const uint64_t bits1 = tsparse::bitmap_from_ballots(c[2] > 0.f, c[3] > 0.f);
    if (lane == 0) {
      c_bitmap[t0] = bits0;
      if (t1 < tiles) c_bitmap[t1] = bits1;
    }
  }
}

unsigned grid_for(int64_t items, int64_t per_cta) {
  const int64_t ctas = (items + per_cta - 1) / per_cta;
  return unsigned(ctas < 65536 * 4 ? (ctas > 0 ? ctas : 1) : 65536 * 4);
}

}  // namespace

DeviceBuffer count_tiles(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, TileCountMethod method,
                         const GpuContext& context) {
  DeviceBuffer bitmap = gpuconv::buffer_of<uint64_t>(tasks.tiles, context);
  if (tasks.tiles == 0) return bitmap;
  const int64_t* ptr = tasks.tile_pair_ptr.as<const int64_t>();
  const int64_t* pa = tasks.pair_a.as<const int64_t>();
  const int64_t* pb = tasks.pair_b.as<const int64_t>();
  if (method == TileCountMethod::kBitwise) {
    count_bitwise_kernel<<<grid_for(tasks.tiles, kThreads), kThreads, 0, context.stream>>>(
        tasks.tiles, ptr, pa, pb, a.bitmap.as<const uint64_t>(), b.bitmap.as<const uint64_t>(),
        bitmap.as<uint64_t>());
  } else {
    count_tensor_core_kernel<<<grid_for((tasks.tiles + 1) / 2, kWarps), kThreads, 0, context.stream>>>(
        tasks.tiles, ptr, pa, pb, a.bitmap.as<const uint64_t>(), b.bitmap.as<const uint64_t>(),
        bitmap.as<uint64_t>());
  }
  SPARSETC_CUDA_CHECK_LAUNCH();
  return bitmap;
}

}  // namespace sparsetc::detail
