// One warp's MMA operands of one entry, loaded from a pipeline stage in shared memory: the B
// fragments of its column tiles (ldmatrix once per entry) and the A fragments of its block rows
// (only those present), then every MMA of the pair. Shared by the kernels of tc_spmm_kernel.cuh and
// tc_ws_kernel.cuh (Layout: where a stage keeps an entry's A blocks and B slab).
#pragma once

#include <cstdint>

#include "gpu/spmm/bcsr_tc/tc_stage.cuh"

namespace sparsetc::detail::tc {

// The warp's MMA tiles (kNT tiles of 8 columns from warp_n0, its first column in the CTA tile) that
// hold columns < n; warp-uniform, the rest would only multiply zeros. cols_left: n minus the CTA
// tile's first column.
template <int kNT>
__device__ __forceinline__ int live_mma_tiles(int warp_n0, int64_t cols_left) {
  const int64_t live = (cols_left - warp_n0 + 7) / 8;
  return live < 0 ? 0 : live > kNT ? kNT : int(live);
}

// kRB block rows x kNT 8-column tiles; `mine` bit rb: block row rb of the warp has a block here.
template <class T, int kRB, int kNT>
struct WarpFragments {
  typename T::AFrag a[kRB];
  typename T::BFrag b[kNT];

  template <int TN, bool kBColMajor, class Layout>
  __device__ __forceinline__ void load(uint32_t base, int slot, int entry, int g0, uint32_t mine, uint32_t a_lane,
                                       uint32_t b_lane) {
    if (mine == 0) return;
    T::template load_b<kNT, TN, kBColMajor>(b, Layout::slab(base, slot, entry) + b_lane);
    const uint32_t a_blocks = Layout::a_block(base, slot, entry, g0);
#pragma unroll
    for (int rb = 0; rb < kRB; ++rb)
      if ((mine >> rb) & 1u) T::load_a(a[rb], a_blocks + rb * kBlockBytes, a_lane);
  }

  // load and multiply where every block row of the warp has a block and every tile holds columns < n:
  // no tests per block row or tile (the dense stages of banded and blocked matrices).
  template <int TN, bool kBColMajor, class Layout>
  __device__ __forceinline__ void load_all(uint32_t base, int slot, int entry, int g0, uint32_t a_lane,
                                           uint32_t b_lane) {
    T::template load_b<kNT, TN, kBColMajor>(b, Layout::slab(base, slot, entry) + b_lane);
    const uint32_t a_blocks = Layout::a_block(base, slot, entry, g0);
#pragma unroll
    for (int rb = 0; rb < kRB; ++rb) T::load_a(a[rb], a_blocks + rb * kBlockBytes, a_lane);
  }
  __device__ __forceinline__ void multiply_all(typename T::AccTile (&acc)[kRB][kNT]) const {
#pragma unroll
    for (int rb = 0; rb < kRB; ++rb)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) T::mma(acc[rb][nt], a[rb], b[nt]);
  }

  // nt_live: the warp's tiles holding columns < n (all_live: all of them; the rest multiply zeros).
  __device__ __forceinline__ void multiply(typename T::AccTile (&acc)[kRB][kNT], uint32_t mine, bool all_live,
                                           int nt_live) const {
#pragma unroll
    for (int rb = 0; rb < kRB; ++rb) {
      if (((mine >> rb) & 1u) == 0) continue;
      if (all_live) {
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) T::mma(acc[rb][nt], a[rb], b[nt]);
      } else {
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
          if (nt < nt_live) T::mma(acc[rb][nt], a[rb], b[nt]);
      }
    }
  }
};

}  // namespace sparsetc::detail::tc
