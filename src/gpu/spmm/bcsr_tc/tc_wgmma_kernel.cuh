// The wgmma tensor-core SpMM kernel for wide tiles of fp16 / bf16 with row-major B (sm_90a only;
// configuration TcWgConfigN128 in tc_config.hpp; TcSpmmArgs::kernel_variant = 3). Grid: work items x
// N tiles, N tile fastest.
//
// Why another kernel: the warp-specialized mma.sync kernel (tc_ws_kernel.cuh) issues about ten
// instructions per m16n8k16 MMA (fragment loads, addresses, the MMA). One wgmma.m64n128k16 does the
// work of 64 such MMAs from one instruction, with both operands read by the tensor cores from shared
// memory. Measured (tc_config.hpp) it ties the mma.sync kernels on the 27-point Poisson matrix and
// the 1-SA scrambled blocks and loses on bands: its consumers wait on full stages (ncu: a fifth of
// the stall samples on the `full` barrier), though its tensor cores are busy a fifth of the time.
//  - Producers: the warp-specialized kernel's (WsProducer): the same ring of stages and barriers, A
//    and B laid out as wgmma's core matrices (CoreMatrixAPanel, CoreMatrixSlab), the absent blocks
//    of a warpgroup's half of an entry zero-filled.
//  - Consumers: two warpgroups, one per half of the panel (block rows 0-3 and 4-7). For each entry
//    whose half has a block, the warpgroup issues one wgmma; the stage's MMAs are committed as one
//    group, and a stage is handed back (its `empty` barrier) once the next stage's MMAs are issued
//    and its own group is done, so the tensor cores always have the next stage's work queued.
// The end (split chunks, C) is the other kernels'.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpu/spmm/bcsr_tc/tc_ws_kernel.cuh"
#include "gpu/spmm/bcsr_tc/tc_wgmma_ptx.cuh"

namespace sparsetc::detail::tc {

template <class T, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) tc_spmm_wgmma_kernel(const TcKernelParams p) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // built for sm_90a only; the host launches it on compute capability 9.0 devices only
#else
  using Layout = WsLayout<T, Cfg>;
  using Slab = typename Layout::Slab;
  using AccTile = typename T::AccTile;
  constexpr int kKS = Cfg::kKS, kNT = Cfg::kNT;
  static_assert(Cfg::kCoreMatrices && Layout::APanel::kZeroGroup == 4 && Cfg::kWN == 1 && Cfg::kRB == 1 &&
                    Cfg::kTN == 128 && Cfg::kG == 8,
                "two warpgroups of 4 block rows x 128 columns");
  constexpr bool kBf16 = std::is_same_v<T, Bf16Traits>;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int last_to_arrive;
  const uint32_t base = Layout::base_of(smem);

  const RingCta<T, Cfg> cta = RingCta<T, Cfg>::start(p, base);  // warp and stages warp-uniform for ptxas
  const int lane = cta.lane, warp = cta.warp;
  const int64_t stages = cta.stages;

  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
  if (cta.producer) {
    WsProducer<T, Cfg>::run(p, cta.item, cta.n0, base, warp - Cfg::kConsumerWarps, lane, stages);
  } else if (stages > 0) {
    const int half = warp / 4;  // this warp's warpgroup: block rows 4 * half .. 4 * half + 3
    using APanel = typename Layout::APanel;
    int slot = 0, previous = -1;  // previous: the stage whose MMAs may still be in flight
    uint32_t parity = 0;
    wgmma_fence();  // the accumulators' zeros before the first MMA reads them
    for (int64_t s = 0; s < stages; ++s) {
      mbarrier_wait(Layout::full(base, slot), parity);
      fence_proxy_async_shared();
#pragma unroll
      for (int j = 0; j < kKS; ++j) {
        // whether this half has a block here (warpgroup-uniform)
        const uint32_t mask = lds_u32(Layout::mask(base, slot, j));
        const int run = ((mask >> (4 * half)) & 0xFu) != 0;
        const uint64_t a_desc = wgmma_descriptor(Layout::a_block(base, slot, j, 4 * half), APanel::kLeadingBytes,
                                                 APanel::kStrideBytes, kNoSwizzle);
        const uint64_t b_desc =
            wgmma_descriptor(Layout::slab(base, slot, j), Slab::kLeadingBytes, Slab::kStrideBytes, Slab::kSwizzle);
        wgmma_m64n128k16<kBf16>(d, a_desc, b_desc, 1, run);
      }
      wgmma_commit();
      wgmma_wait<1>();  // the previous stage's MMAs are done
      if (previous >= 0) {
        __syncwarp();
        if (lane == 0) mbarrier_arrive(Layout::empty(base, previous));
      }
      previous = slot;
      if (++slot == Cfg::kStages) {
        slot = 0;
        parity ^= 1u;
      }
    }
    wgmma_wait<0>();
    fence_accumulators(d);
  }

  AccTile acc[1][kNT];
#pragma unroll
  for (int t = 0; t < kNT; ++t)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[0][t].v[i] = d[4 * t + i];

  cta.template finish<1, kNT>(p, acc, last_to_arrive);
#endif
}

}  // namespace sparsetc::detail::tc
