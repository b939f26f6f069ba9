// The tensor-core SpMM kernel, one skeleton for every precision (T: tc_mma_traits.cuh) and tile
// configuration (Cfg: tc_config.hpp). Grid: work items x N tiles, N tile fastest, so the CTAs of one
// panel run together and share its A blocks in L2.
//
// Per CTA: a multi-stage cp.async pipeline over the item's entries (KS per stage). Per entry, each
// warp that owns a block row present in it loads the B fragments of its columns once (ldmatrix) and
// multiplies them with each of its A blocks (ldmatrix, mma.sync), accumulating in registers. Then the
// warp groups' partial tiles are summed in shared memory in group order; a split item stores its tile
// to the workspace, and the last CTA of its panel to arrive sums all chunks in chunk order (same bits
// on every run, whichever CTA arrives last) and writes C.
#pragma once

#include <cstdint>

#include "gpu/spmm/bcsr_tc/tc_config.hpp"
#include "gpu/spmm/bcsr_tc/tc_epilogue.cuh"
#include "gpu/spmm/bcsr_tc/tc_fragments.cuh"
#include "gpu/spmm/bcsr_tc/tc_launch.hpp"
#include "gpu/spmm/bcsr_tc/tc_mma_traits.cuh"
#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"
#include "gpu/spmm/bcsr_tc/tc_stage.cuh"

namespace sparsetc::detail::tc {

// kDenseStages (narrow tiles only): stages where every entry has all of the warp's blocks run without
// tests per entry (for operands of mostly such entries; elsewhere the test per stage costs more than
// it saves).
template <class T, bool kBColMajor, class Cfg, bool kDenseStages>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinCtas) tc_spmm_kernel(const TcKernelParams p) {
  static_assert(!kDenseStages || Cfg::kTN < 64, "the dense-stage path is the narrow tiles'");
  using Layout = StageLayout<T, kBColMajor, Cfg>;
  using Acc = typename T::Acc;
  using AccTile = typename T::AccTile;
  constexpr int kRB = Cfg::kRB, kNT = Cfg::kNT, kS = Cfg::kStages;
  constexpr int kAcc = T::kAccPerTile;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int last_to_arrive;
  const uint32_t base = smem_address(smem);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wk = warp / (Cfg::kWM * Cfg::kWN), wmn = warp % (Cfg::kWM * Cfg::kWN);
  const int wm = wmn / Cfg::kWN, wn = wmn % Cfg::kWN;
  const int64_t item_index = int64_t(blockIdx.x) / p.n_tiles;
  const int64_t n_tile = int64_t(blockIdx.x) % p.n_tiles;
  const int64_t n0 = n_tile * Cfg::kTN;
  const TcWorkItem item = p.items[item_index];
  const int warp_n0 = wn * kNT * 8;  // first column of this warp within the tile
  const int nt_live = live_mma_tiles<kNT>(warp_n0, p.n - n0);

  AccTile acc[kRB][kNT];
  const bool all_live = nt_live == kNT;
  const uint32_t a_lane = T::a_lane(lane);
  const uint32_t b_lane = T::template b_lane<Cfg::kTN, kBColMajor>(warp_n0, lane);

  // ---- main loop: multi-stage pipeline over the item's entries
  const StageLoader<T, kBColMajor, Cfg> loader(p, n0, tid);
  const int64_t stages = (item.entry_end - item.entry_begin + Cfg::kKS - 1) / Cfg::kKS;
  loader.load_descriptors(base, item, 0, 2 * kS - 2, tid);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
#pragma unroll
  for (int s = 0; s < kS - 1; ++s) {
    if (s < stages) loader.issue(smem, base, s, s);
    cp_async_commit();
  }
  int slot = 0, ahead_slot = kS - 1;  // i % STAGES, (i + STAGES - 1) % STAGES
  for (int64_t i = 0; i < stages; ++i) {
    cp_async_wait<kS - 2>();
    __syncthreads();  // stage i is in shared memory; stage i - 1's slot is free
    const int64_t ahead = i + kS - 1;
    if (ahead < stages) loader.issue(smem, base, ahead, ahead_slot);
    if (ahead + kS - 1 < stages) loader.load_descriptors(base, item, ahead + kS - 1, 1, tid);
    cp_async_commit();

    // The warp's entries of this stage. Wide tiles (8 MMAs per block row and entry) are software-
    // pipelined in registers: the fragments of entry jj + 1 are loaded (ldmatrix) before the MMAs of
    // entry jj are issued, so the shared-memory latency hides behind tensor-core work (asm volatile keeps
    // source order). Narrow tiles have too few MMAs per entry to hide anything and load as they go.
    constexpr int kEntries = Cfg::kKS / Cfg::kWK;
    constexpr uint32_t kAllRows = (1u << kRB) - 1u;
    const uint32_t* masks = Layout::masks(smem, slot);
    uint32_t mine[kEntries];
    uint32_t every = kAllRows;
#pragma unroll
    for (int jj = 0; jj < kEntries; ++jj) {
      mine[jj] = (masks[wk + jj * Cfg::kWK] >> (wm * kRB)) & kAllRows;
      every &= mine[jj];
    }
    const bool dense = kDenseStages && all_live && every == kAllRows;
    if constexpr (Cfg::kTN >= 64) {
      WarpFragments<T, kRB, kNT> frag[2];
      frag[0].template load<Cfg::kTN, kBColMajor, Layout>(base, slot, wk, wm * kRB, mine[0], a_lane, b_lane);
#pragma unroll
      for (int jj = 0; jj < kEntries; ++jj) {
        if (jj + 1 < kEntries)
          frag[(jj + 1) & 1].template load<Cfg::kTN, kBColMajor, Layout>(base, slot, wk + (jj + 1) * Cfg::kWK,
                                                                          wm * kRB, mine[jj + 1], a_lane, b_lane);
        frag[jj & 1].multiply(acc, mine[jj], all_live, nt_live);
      }
    } else if (dense) {
#pragma unroll
      for (int jj = 0; jj < kEntries; ++jj) {
        WarpFragments<T, kRB, kNT> frag;
        frag.template load_all<Cfg::kTN, kBColMajor, Layout>(base, slot, wk + jj * Cfg::kWK, wm * kRB, a_lane, b_lane);
        frag.multiply_all(acc);
      }
    } else {
#pragma unroll
      for (int jj = 0; jj < kEntries; ++jj) {
        WarpFragments<T, kRB, kNT> frag;
        frag.template load<Cfg::kTN, kBColMajor, Layout>(base, slot, wk + jj * Cfg::kWK, wm * kRB, mine[jj], a_lane,
                                                         b_lane);
        frag.multiply(acc, mine[jj], all_live, nt_live);
      }
    }
    slot = slot + 1 == kS ? 0 : slot + 1;
    ahead_slot = ahead_slot + 1 == kS ? 0 : ahead_slot + 1;
  }
  cp_async_wait<0>();
  __syncthreads();

  // ---- warp groups 1..WK-1 hand their tiles to group 0 (summed in group order)
  if constexpr (Cfg::kWK > 1) {
    Acc* red = reinterpret_cast<Acc*>(smem);
    constexpr int kPerWarp = Layout::kAccPerThread * 32;
    if (wk > 0) {
      Acc* mine = red + ((wk - 1) * Cfg::kWM * Cfg::kWN + wmn) * kPerWarp + lane;
#pragma unroll
      for (int rb = 0; rb < kRB; ++rb)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int a = 0; a < kAcc; ++a) mine[((rb * kNT + nt) * kAcc + a) * 32] = acc[rb][nt].v[a];
    }
    __syncthreads();
    if (wk == 0) {
#pragma unroll 1
      for (int w = 1; w < Cfg::kWK; ++w) {
        const Acc* other = red + ((w - 1) * Cfg::kWM * Cfg::kWN + wmn) * kPerWarp + lane;
#pragma unroll
        for (int rb = 0; rb < kRB; ++rb)
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
            for (int a = 0; a < kAcc; ++a) acc[rb][nt].v[a] += other[((rb * kNT + nt) * kAcc + a) * 32];
      }
    }
  }

  // ---- split panels: partial tiles through the workspace, summed in chunk order by the last CTA
  if (item.chunks > 1) {
    constexpr int64_t kTile = int64_t(Cfg::kWM) * Cfg::kWN * 32 * Layout::kAccPerThread;
    if (!combine_split_chunks<T, kRB, kNT, kTile>(p, item, n_tile, acc, wk == 0, wmn, lane, last_to_arrive)) return;
  }

  // ---- epilogue
  if (wk != 0) return;
  store_tile<T, kRB, kNT>(p, acc, int64_t(item.panel) * Cfg::kG * T::kBlockH + wm * kRB * T::kBlockH, n0 + warp_n0,
                          lane);
}

}  // namespace sparsetc::detail::tc
