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

namespace sparsetc::detail::tc {

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

// By N (columns of B and C): the narrowest tile that covers N, up to TN = 128 (64 for f64). Each warp
// owns 2 block rows, so every B fragment it loads feeds two MMAs (shared-memory bandwidth, not the
// tensor cores, limits one-block-row warps).
// Stages: as deep as the CTAs per SM allow (about 100 KB of shared memory each for two): the loads
// are latency-bound long before they are bandwidth-bound.
using TcConfigN8 = TcConfig<kPanelBlockRows, 8, 4, 1, 2, 4, 6, 2>;
using TcConfigN32 = TcConfig<kPanelBlockRows, 32, 4, 1, 2, 4, 5, 2>;
// Wide tiles: 16 warps (each 2 block rows x 32 columns) and one CTA per SM with a deep pipeline; a
// single 8-warp CTA per SM (banded matrices give about one panel per SM) cannot hide the latencies
// of its own instruction stream.
using TcConfigN128 = TcConfig<kPanelBlockRows, 128, 4, 4, 1, 2, 8, 1>;
using TcConfigF64N64 = TcConfig<kPanelBlockRows, 64, 4, 4, 1, 2, 6, 1>;

enum class TcConfigId { n8, n32, wide };
inline TcConfigId tc_config_for(int64_t n) {
  return n <= 8 ? TcConfigId::n8 : n <= 32 ? TcConfigId::n32 : TcConfigId::wide;
}

}  // namespace sparsetc::detail::tc
