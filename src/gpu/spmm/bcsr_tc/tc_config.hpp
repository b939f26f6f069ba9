// CTA tile configurations of the tensor-core SpMM (host and device). A CTA computes a panel of
// G block rows x TN columns of C with WM x WN x WK warps:
//   WM  warps along the panel's block rows (each owns G / WM of them),
//   WN  warps along the N tile (each owns TN / WN columns, NT = TN / WN / 8 MMA tiles),
//   WK  warp groups splitting the entries (small N: too few columns to keep 8 warps busy otherwise);
//       their partial tiles are summed in shared memory in group order (deterministic).
// Each pipeline stage holds KS entries (their B slabs and up to G A blocks each); STAGES - 1 stages
// are in flight while one is computed, and the entry descriptors travel 2 * STAGES - 2 stages ahead.
#pragma once

#include <cstdint>
#include <type_traits>

namespace sparsetc::detail::tc {

template <class T, int TN>
struct PaddedRowSlab;  // tc_slab.cuh
template <class T, int TN>
struct CoreMatrixSlab;
template <class T>
struct SwizzledABlocks;
template <class T, int G>
struct CoreMatrixAPanel;

// G of every configuration (the operand's panel height): 8 block rows share each B slab, which halves
// the B traffic from L2 against 4 on banded matrices (B slabs dominate it from N = 32 on).
inline constexpr int kPanelBlockRows = 8;

template <int G_, int TN_, int WM_, int WN_, int WK_, int KS_, int STAGES_, int MIN_CTAS_>
struct TcConfig {
  static constexpr int kG = G_, kTN = TN_, kWM = WM_, kWN = WN_, kWK = WK_, kKS = KS_, kStages = STAGES_;
  static constexpr int kMinCtas = MIN_CTAS_;  // CTAs per SM the register budget is sized for
  static constexpr int kThreads = 32 * kWM * kWN * kWK;
  static constexpr int kRB = kG / kWM;        // block rows per warp
  static constexpr int kNT = kTN / kWN / 8;   // 8-column MMA tiles per warp
  static_assert(kG % kWM == 0 && kTN % (8 * kWN) == 0 && kKS % kWK == 0 && kThreads % kKS == 0, "tile shape");
  static_assert(kStages >= 2, "a pipeline");
};

// By N (columns of B and C): the narrowest tile that covers N, up to TN = 128 (64 for f64).
// Narrow tiles: each warp owns 2 block rows, so every B fragment it loads feeds two MMAs. Stages: as
// deep as two CTAs per SM allow (about 100 KB of shared memory each). The 32-column tiles of fp16 /
// bf16 with row-major B take the warp-specialized kernel instead (TcWsConfigN32 below).
using TcConfigN8 = TcConfig<kPanelBlockRows, 8, 4, 1, 2, 4, 6, 2>;
using TcConfigN32 = TcConfig<kPanelBlockRows, 32, 4, 1, 2, 4, 5, 2>;
// Wide tiles of the CTA-synchronous kernel (tf32, column-major B; fp16 / bf16 with row-major B take
// the warp-specialized kernel below). Measured on H200, band and Poisson matrices, N = 128 and 512:
// 16 warps, each one block row x 64 columns (8 MMAs per A fragment; 2 x 8 tiles on 8 warps issue too
// few instructions per cycle to hide their own latencies), one CTA per SM. The kernel is issue- and
// latency-bound, and every stage costs a CTA barrier that holds all warps in step: the more entries
// per stage, the faster (8 entries x 3 stages beat 4 x 4 by 7-14%). Column-major B slabs are padded
// 1.5x wider (a 16-column row per column of B), so that order keeps 4 entries per stage to stay
// within shared memory.
using TcConfigN128 = TcConfig<kPanelBlockRows, 128, 8, 2, 1, 8, 3, 1>;
using TcConfigN128ColB = TcConfig<kPanelBlockRows, 128, 8, 2, 1, 4, 4, 1>;
static_assert(TcConfigN128::kTN == TcConfigN128ColB::kTN && TcConfigN128::kWM == TcConfigN128ColB::kWM &&
                  TcConfigN128::kWN == TcConfigN128ColB::kWN,
              "both orders of B store the same partial tiles (one workspace size)");
using TcConfigF64N64 = TcConfig<kPanelBlockRows, 64, 4, 4, 1, 2, 6, 1>;

// The warp-specialized wide tiles of fp16 / bf16 with row-major B (tc_ws_kernel.cuh): WM x WN
// consumer warps that only load fragments and multiply, and P producer warps that fill a ring of
// STAGES stages of KS entries with cp.async (entry e of the item by producer e % P), handing each
// stage over through a pair of mbarriers (full, empty): no CTA barrier in the main loop, so the
// consumer warps drift apart and overlap each other's latencies. P = 4: one producer per SM
// sub-partition (a single producer warp issues all copies through one sub-partition's memory pipe:
// measured 2.5x slower than the CTA-synchronous kernel). Each consumer owns RB = G / WM block rows x
// TN / WN columns.
template <int G_, int TN_, int WM_, int WN_, int KS_, int STAGES_, int P_, bool kCoreMatrices_ = false>
struct TcWsConfig {
  static constexpr int kG = G_, kTN = TN_, kWM = WM_, kWN = WN_, kKS = KS_, kStages = STAGES_;
  // A blocks and B slabs for ldmatrix (swizzled blocks, padded rows) or for wgmma (core matrices):
  // tc_slab.cuh.
  static constexpr bool kCoreMatrices = kCoreMatrices_;
  template <class T>
  using Slab = std::conditional_t<kCoreMatrices, CoreMatrixSlab<T, TN_>, PaddedRowSlab<T, TN_>>;
  template <class T>
  using APanel = std::conditional_t<kCoreMatrices, CoreMatrixAPanel<T, G_>, SwizzledABlocks<T>>;
  static constexpr int kProducerWarps = P_;
  static constexpr int kWK = 1;
  static constexpr int kConsumerWarps = kWM * kWN;
  static constexpr int kThreads = 32 * (kConsumerWarps + kProducerWarps);  // producers last
  static constexpr int kRB = kG / kWM;
  static constexpr int kNT = kTN / kWN / 8;
  // CTAs per SM the kernel's registers must allow: two for the 32-column tiles (the spread lists
  // assume it, tc_resident_ctas), one for the wide ones.
  static constexpr int kMinCtas = TN_ <= 32 ? 2 : 1;
  static_assert(kG % kWM == 0 && kTN % (8 * kWN) == 0, "tile shape");
  static_assert(kKS % 2 == 0 && 32 % kKS == 0, "fragments double-buffered across stages; 32 descriptors a batch");
  static_assert(kStages >= 2, "a pipeline");
};
// Measured on H200 (f16, C fp32; bands hw 64/512/2048, Poisson 27-point 64^3, 1-SA scrambled blocks;
// N = 128 and 512), against the CTA-synchronous kernel: 16 consumers of 1 block row x 64 columns and
// 4 producers (640 threads, 94 registers, one CTA per SM), stages of 4 entries, 6 deep: 1.13-1.22x on
// bands of half-width 512 and 2048, 1.09-1.11x on the scrambled blocks, 0.98-1.03x on band hw64 and
// Poisson. Each slower than this one by: 8 consumers of 2 block rows (fewer B fragment loads, half
// the warps to hide latencies) 1.06-1.27x, stages of 2 entries x 12 1.02-1.05x, B slabs by bulk
// copies through the copy engine 1.02-1.21x, A prefetched into L2 by bulk prefetches 16 entries
// ahead 1.0-1.12x.
using TcWsConfigN128 = TcWsConfig<kPanelBlockRows, 128, 8, 2, 4, 6, 4>;
// Operands of dense entries (TcBcsrOperand::dense_stages: bands, blocked matrices) take 8 consumers of
// 2 block rows x 64 columns instead (150 registers, 384 threads), whose stages where every entry has
// all of a warp's blocks run without tests per entry (tc_ws_kernel.cuh): each B fragment feeds two
// MMAs, half the shared-memory reads of B per MMA. Measured on H200 (f16, C fp32, same run) against
// the configuration above: 1.10-1.14x on band hw512, 1.19-1.23x on hw2048, 1.01-1.08x on the
// scrambled blocks with and without 1-SA (N = 128 and 512); 1.05-1.06x slower on the 27-point Poisson
// matrix, whose entries hold 3.8 of 8 blocks (hence the operand's choice). 2 x 32 on 16 consumers:
// 1.09-1.14x on the bands, 0.93x on band hw64; 4 x 32 on 8: 0.8-0.97x off the wide bands.
using TcWsConfigN128Pairs = TcWsConfig<kPanelBlockRows, 128, 4, 2, 4, 6, 4>;
// The 32-column tiles of fp16 / bf16 with row-major B (8 < N <= 32) on the same kernel: 8 consumers
// of 1 block row x 32 columns, 4 producers, stages of 4 entries 5 deep (about 107 KB of shared
// memory, 76 registers: two CTAs per SM, as the spread lists assume), with the dense-stage path.
// Measured on H200 (f16, C fp32, N = 24 and 32, same run) against the CTA-synchronous kernel's
// TcConfigN32: 1.11-1.13x on band hw64, 1.04-1.10x on hw512, 1.02-1.05x on hw2048, 1.15-1.16x on
// the 27-point Poisson matrix, 1.09-1.11x on the 1-SA scrambled blocks; 1.09-1.62x (geomean 1.28x)
// on the 30 real matrices of at least 100k entries at N = 32. 4 consumers of 2 block rows: 1.0-1.05x
// slower off the wide bands; 4 stages or 2 x 10 entries: within 3% or slower; 10 stages (one CTA per
// SM): 1.1-1.6x slower. The 8-column tiles keep TcConfigN8 (a padded-row slab holds whole B rows per
// pass).
using TcWsConfigN32 = TcWsConfig<kPanelBlockRows, 32, 8, 1, 4, 5, 4>;
// Stages of 8 entries x 3 (half the barrier waits, coarser hand-over): 2-4% faster on Poisson and
// the scrambled blocks, 1-3% slower on the bands (benchmarks: TcSpmmArgs::kernel_variant = 2).
using TcWsConfigN128Coarse = TcWsConfig<kPanelBlockRows, 128, 8, 2, 8, 3, 4>;
// The wgmma kernel (tc_wgmma_kernel.cuh, sm_90a; benchmarks: TcSpmmArgs::kernel_variant = 3): 8
// consumer warps in two warpgroups, each 4 block rows x 128 columns (one wgmma.m64n128k16 per entry,
// A and B from shared memory as core matrices), 8 producer warps taking turns over the stages (2 per
// SM sub-partition: with 4, as above, 1.0-1.2x slower on the scrambled blocks). Measured on H200
// against the kernels above (f16, C fp32, same run): 0.99-1.01x on the 27-point Poisson matrix and
// 1.0x on the 1-SA scrambled blocks at N = 128 (0.9x at 512), 1.25-1.55x slower on the bands than the
// kernel for dense entries; not the default.
using TcWgConfigN128 = TcWsConfig<kPanelBlockRows, 128, 8, 1, 4, 6, 8, true>;

enum class TcConfigId { n8, n32, wide };
inline TcConfigId tc_config_for(int64_t n) {
  return n <= 8 ? TcConfigId::n8 : n <= 32 ? TcConfigId::n32 : TcConfigId::wide;
}
// CTAs per SM the configurations of an id keep resident (the spread work lists are cut to fill that
// many: TcBcsrOperand::narrow_items, wide_items).
static_assert(TcConfigN8::kMinCtas == TcConfigN32::kMinCtas, "narrow tiles: one residency");
static_assert(TcConfigN128::kMinCtas == 1 && TcConfigN128ColB::kMinCtas == 1 && TcConfigF64N64::kMinCtas == 1,
              "wide tiles: one CTA per SM (the warp-specialized ones fill shared memory alone)");
inline int tc_resident_ctas(TcConfigId id) { return id == TcConfigId::wide ? 1 : TcConfigN8::kMinCtas; }

}  // namespace sparsetc::detail::tc
