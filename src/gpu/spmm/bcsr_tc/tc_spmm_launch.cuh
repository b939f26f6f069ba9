// Host side of one kernel instantiation: shared-memory opt-in, grid size, launch check. Included by
// the per-precision translation units (tc_spmm_<precision>.cu), which compile in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <climits>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/bcsr_tc/tc_config.hpp"
#include "gpu/spmm/bcsr_tc/tc_launch.hpp"
#include "gpu/spmm/bcsr_tc/tc_spmm_kernel.cuh"
#include "gpu/spmm/bcsr_tc/tc_ws_kernel.cuh"

namespace sparsetc::detail::tc {

// Opts `kernel` into `smem` bytes of dynamic shared memory (once per device: `configured` holds a
// bit per device id below 64), then launches it on work items x N tiles, or on at most max_grid CTAs
// (> 0: a kernel whose CTAs loop over the work).
inline void launch_on_grid(void (*kernel)(TcKernelParams), std::atomic<uint64_t>& configured, int smem, int threads,
                           const TcKernelParams& p, int64_t work_items, cudaStream_t stream, int64_t max_grid = 0) {
  if (smem > 48 * 1024) {
    int device = 0;
    SPARSETC_CUDA_CHECK(cudaGetDevice(&device));
    const uint64_t bit = device < 64 ? uint64_t(1) << device : 0;
    if ((configured.load(std::memory_order_relaxed) & bit) == 0 || bit == 0) {
      SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      configured.fetch_or(bit, std::memory_order_relaxed);
    }
  }
  int64_t grid = work_items * p.n_tiles;
  if (max_grid > 0 && grid > max_grid) grid = max_grid;
  require(grid <= INT_MAX, SPARSETC_STATUS_SIZE_OVERFLOW, "tensor-core SpMM: ", work_items, " work items x ",
          p.n_tiles, " column tiles exceed one launch");
  kernel<<<unsigned(grid), threads, smem, stream>>>(p);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <class T, bool kBColMajor, class Cfg, bool kDenseStages>
void launch_kernel(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  constexpr int smem = StageLayout<T, kBColMajor, Cfg>::kSmemBytes;
  static_assert(smem <= 227 * 1024, "more shared memory than a CTA of sm_90 can have");
  static std::atomic<uint64_t> configured{0};
  launch_on_grid(&tc_spmm_kernel<T, kBColMajor, Cfg, kDenseStages>, configured, smem, Cfg::kThreads, p, work_items,
                 stream);
}

// A kernel on the warp-specialized stage ring (WsLayout; row-major B only): the mma.sync kernel
// below, or the wgmma one (tc_wgmma_sm90a.cu).
template <class T, class Cfg, void (*kKernel)(TcKernelParams)>
void launch_ring_kernel(const TcKernelParams& p, int64_t work_items, cudaStream_t stream, int64_t max_grid = 0) {
  constexpr int smem = WsLayout<T, Cfg>::kSmemBytes;
  static_assert(smem <= 227 * 1024, "more shared memory than a CTA of sm_90 can have");
  static std::atomic<uint64_t> configured{0};
  launch_on_grid(kKernel, configured, smem, Cfg::kThreads, p, work_items, stream, max_grid);
}

// p.loop_ctas > 0: that many CTAs, which loop over the work (tc_spmm_ws_kernel).
template <class T, class Cfg, bool kDenseStages = false>
void launch_ws_kernel(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  launch_ring_kernel<T, Cfg, &tc_spmm_ws_kernel<T, Cfg, kDenseStages>>(p, work_items, stream, p.loop_ctas);
}

// The narrow tiles come in two kernels, with and without the dense-stage path (p.dense_stages); the
// wide tiles of this kernel in one, without it.
template <class T, class RowB, class ColB>
void launch_config(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  static_assert(RowB::kTN == ColB::kTN, "one tile width per configuration");
  constexpr bool kNarrow = RowB::kTN < 64;
  if (kNarrow && p.dense_stages) {
    if (p.b_col_major) launch_kernel<T, true, ColB, kNarrow>(p, work_items, stream);
    else launch_kernel<T, false, RowB, kNarrow>(p, work_items, stream);
  } else {
    if (p.b_col_major) launch_kernel<T, true, ColB, false>(p, work_items, stream);
    else launch_kernel<T, false, RowB, false>(p, work_items, stream);
  }
}

// The configurations of a precision by N (Wide, WideColB: the ones for n > 32 and each order of B).
template <class T, class Wide, class WideColB>
void launch_for_n(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  switch (tc_config_for(p.n)) {
    case TcConfigId::n8: launch_config<T, TcConfigN8, TcConfigN8>(p, work_items, stream); break;
    case TcConfigId::n32: launch_config<T, TcConfigN32, TcConfigN32>(p, work_items, stream); break;
    default: launch_config<T, Wide, WideColB>(p, work_items, stream); break;
  }
}

template <class Cfg>
inline constexpr int64_t kTileAccumulators = int64_t(Cfg::kWM) * Cfg::kWN * 32 * Cfg::kRB * Cfg::kNT * 4;
static_assert(kTileAccumulators<TcWsConfigN32> == kTileAccumulators<TcConfigN32>,
              "both 32-column kernels store the same partial tiles (one workspace size)");
static_assert(kTileAccumulators<TcWsConfigN128> == kTileAccumulators<TcConfigN128> &&
                  kTileAccumulators<TcWsConfigN128Pairs> == kTileAccumulators<TcConfigN128> &&
                  kTileAccumulators<TcWsConfigN128Coarse> == kTileAccumulators<TcConfigN128> &&
                  kTileAccumulators<TcWgConfigN128> == kTileAccumulators<TcConfigN128>,
              "every wide kernel stores the same partial tiles (one workspace size)");

// fp16 / bf16 with row-major B: the 32-column and the wide tiles take the warp-specialized kernel;
// the wide tiles in the configuration for dense entries where p.dense_stages, the 32-column ones
// always with the dense-stage path (measured on H200 at N = 24 and 32 without it: 1.3-1.5x slower
// on every matrix of the suite, sparse entries too). p.kernel_variant picks another for
// benchmarks (1: the CTA-synchronous kernel, 2: wide stages of 8 entries; 3, the wgmma kernel, is
// launched by the host where it can run, tc_spmm.cpp).
template <class T>
void launch_half(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  static_assert(2 * (WsLayout<T, TcWsConfigN32>::kSmemBytes + 1024) <= 228 * 1024,
                "32-column tiles: two CTAs per SM, as the spread lists assume (tc_resident_ctas)");
  const TcConfigId id = tc_config_for(p.n);
  if (id == TcConfigId::n8 || p.b_col_major || p.kernel_variant == 1)
    launch_for_n<T, TcConfigN128, TcConfigN128ColB>(p, work_items, stream);
  else if (id == TcConfigId::n32)
    launch_ws_kernel<T, TcWsConfigN32, true>(p, work_items, stream);
  else if (p.kernel_variant == 2)
    launch_ws_kernel<T, TcWsConfigN128Coarse>(p, work_items, stream);
  else if (p.dense_stages)
    launch_ws_kernel<T, TcWsConfigN128Pairs, true>(p, work_items, stream);
  else
    launch_ws_kernel<T, TcWsConfigN128>(p, work_items, stream);
}

}  // namespace sparsetc::detail::tc
