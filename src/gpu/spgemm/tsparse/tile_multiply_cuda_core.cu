// The paper's nonTCU variant of the multiplication kernel (fp32 on CUDA cores), for the comparison
// it reports: the same task list and output positions as the tensor-core kernels, one warp per C
// tile; per task the warp unpacks the A and B tiles into dense 8x8 tiles in shared memory (lane
// l = 4g + t unpacks elements (g, 2t) and (g, 2t + 1) of each) and accumulates its two outputs
// C(g, 2t..2t+1) with eight FMAs each, in the order k = 0..7.
#include "gpu/spgemm/tsparse/tile_bits.cuh"
#include "gpu/spgemm/tsparse/tile_kernel_args.cuh"

namespace sparsetc::detail::tsparse {
namespace {

__global__ void __launch_bounds__(kThreads) multiply_cuda_core_kernel(TaskArrays tasks, TileArrays a, TileArrays b,
                                                                      float* __restrict__ out) {
  __shared__ float dense[kWarps][2][64];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  float* da = dense[warp][0];
  float* db = dense[warp][1];
  const float* av = static_cast<const float*>(a.values);
  const float* bv = static_cast<const float*>(b.values);
  for (int64_t tile = int64_t(blockIdx.x) * kWarps + warp; tile < tasks.tiles; tile += int64_t(gridDim.x) * kWarps) {
    float c0 = 0.f, c1 = 0.f;
    for (int64_t q = tasks.tile_pair_ptr[tile], end = tasks.tile_pair_ptr[tile + 1]; q < end; ++q) {
      const int64_t x = tasks.pair_a[q], y = tasks.pair_b[q];
      const uint64_t abits = a.bitmap[x], bbits = b.bitmap[y];
      const int64_t aoff = a.offset[x], boff = b.offset[y];
      da[2 * lane] = tile_value(av, aoff, abits, 2 * lane);
      da[2 * lane + 1] = tile_value(av, aoff, abits, 2 * lane + 1);
      db[2 * lane] = tile_value(bv, boff, bbits, 2 * lane);
      db[2 * lane + 1] = tile_value(bv, boff, bbits, 2 * lane + 1);
      __syncwarp();
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float x_gk = da[g * 8 + k];
        c0 = fmaf(x_gk, db[k * 8 + 2 * t], c0);
        c1 = fmaf(x_gk, db[k * 8 + 2 * t + 1], c1);
      }
      __syncwarp();
    }
    const uint64_t bits = tasks.c_bitmap[tile];
    const int64_t p0 = output_position(tasks.row_pos, tile, bits, g, 2 * t);
    const int64_t p1 = output_position(tasks.row_pos, tile, bits, g, 2 * t + 1);
    if (p0 >= 0) out[p0] = c0;
    if (p1 >= 0) out[p1] = c1;
  }
}

}  // namespace

void multiply_cuda_cores(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const uint64_t* bitmap,
                         const int64_t* row_pos, float* values, const GpuContext& context) {
  if (tasks.tiles == 0) return;
  multiply_cuda_core_kernel<<<grid_for_warps(tasks.tiles), kThreads, 0, context.stream>>>(
      task_arrays(tasks, bitmap, row_pos), arrays_of(a), arrays_of(b), values);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace sparsetc::detail::tsparse
