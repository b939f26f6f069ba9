// Whether the warp-specialized kernel's CTAs should loop over a work list (tc_ws_kernel.cuh): host
// code, no CUDA. A looping grid has one CTA per resident slot, and CTA c takes work c, c + ctas,
// c + 2 ctas, ... (work w: item w / tiles, N tile w % tiles): the next item's first stages are in
// flight while the last one's C tile is stored, but the spread is fixed in advance, where one CTA per
// work lets the device hand each item to whichever SM frees first.
#pragma once

#include <cstdint>
#include <vector>

namespace sparsetc::detail::tc {

// Cost of an item beside its entries, in entries (start-up and C tile; Poisson's 47 entries an item
// ran 16% faster looping, items of about 10 entries lose nothing to it).
inline constexpr int64_t kLoopItemOverhead = 8;
// Looping pays where the grid is at least this many waves ...
inline constexpr double kLoopMinWaves = 1.5;
// ... and the fixed spread's busiest CTA has at most this much more work than the greedy spread's.
inline constexpr double kLoopMaxExcess = 1.05;

// The fixed spread's busiest CTA over the greedy spread's (each work to the CTA with the least so
// far, in order: what one CTA per work gets from the device), with kLoopItemOverhead per work.
// item_entries: entries of each work item; tiles: N tiles per item; ctas: resident CTAs.
double loop_spread_excess(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas);

// The rule: enough waves and little excess (measured on H200 over the 30 real matrices of at least
// 100k entries and issue 5's suite, docs/performance.md).
bool loop_pays(const std::vector<int64_t>& item_entries, int64_t tiles, int64_t ctas);

}  // namespace sparsetc::detail::tc
