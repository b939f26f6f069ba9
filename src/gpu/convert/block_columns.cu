// find_block_columns: the distinct column blocks of every row group, in increasing order (the
// common first half of the BCSR, bitmap-tile and VBR conversions). No global sort.
//
// First pass (narrow_blocks_kernel, 1 KB of shared memory per warp: high occupancy): a group of
// at most 256 entries (most groups of banded, stencil and scattered matrices) is read at once
// into its warp's registers, 8 loads per lane in flight, with no per-row state; each warp loads
// the entry range of its next group before working on the current one. Column blocks come from a
// multiply-high division by the width (fast_divider.hpp). If its blocks span fewer than 8192, they
// are listed by up to four rounds of 32 consecutive blocks from the smallest left, one bit each in
// a register ORed over the warp (banded rows take one round, a stencil's one per plane), and what
// is left through a small bitmap window (below). Blocks spread wider (a scattered matrix's groups)
// are sorted in the registers instead, by a bitonic network over the warp (warp_sort.cuh), and the
// distinct ones listed. (Measured on an H200: left to the second pass's 8 KB window, the groups of
// 10^6 rows of 12 uniform random columns took it 348 us.) The pass marks the groups of more than
// 256 entries in counts for the second pass, and lists the heavy ones.
//
// Second pass (distinct_blocks_kernel, the marked groups): a group of at most 1024 entries (a
// stencil's 16-row groups, 432 entries, or 24-row ones, 648) is read into the registers at once
// and listed like the first pass, mask rounds first, then its 8 KB window (measured on an H200: the
// stencil in groups of 8-24 rows, a third of them past 512 entries, 122 -> 78 us against the merge
// below for those). Otherwise the warp merges the group's rows through a bitmap over a window of
// 65536 column blocks in its shared memory (8 KB, plus a 256-byte summary with one bit per
// non-zero word): each row's entries in the window (a prefix of what is left of
// the row, since rows are sorted) are read 32 at a time, coalesced, and set their bits; then the
// summary leads to the non-zero words only, whose bits are listed in order (a warp prefix sum of
// popcounts) and cleared. The next window starts at the smallest column block left in any row, so
// empty windows are never visited. Cost: every entry read once, plus one 32-wide load per row and
// window, plus work proportional to the distinct blocks. A group of at most 32 rows whose blocks
// span at most four windows reads its entries instead as one contiguous range, once per window,
// four loads per lane in flight (no chain of loads row after row; measured on an H200, 1.3-1.7x
// faster). Lanes that set the same bit elect one of them first (a match), so dense rows cost one
// shared atomic per block, not per entry. Groups of more than 4096 entries (power-law hubs) go to
// a third kernel instead, one CTA per group with a 64 KB window (524288 column blocks), 1024
// entries per step. A group's list is written at its first entry's position (it has at most as
// many blocks as entries); after the scan of the counts (one read back: the total, with the count
// of groups that are not compact), one warp per group copies its list to block_col, or the
// consumer does (BlockListing::kInPlace). The counters take one atomic per warp, not per group (a
// stencil's every group is wide: one atomic each serialised on one address).
#include <algorithm>
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/warp_sort.cuh"

namespace sparsetc::detail::gpuconv {
namespace {

constexpr int kWords = 2048;                 // bitmap words per warp: 65536 column blocks
constexpr int kSummary = kWords / 32;        // one summary bit per word
constexpr uint32_t kNone = 0xFFFFFFFFu;      // "no column block left"
constexpr int kGroupWarps = 8;
constexpr int kGroupsPerWarp = 2;
// Groups per warp of the first pass: its warps' set-up is a fifth of a band's instructions at 2 a warp
constexpr int kNarrowGroupsPerWarp = 4;
// CTAs per SM of distinct_blocks_kernel, as its shared memory allows (said to ptxas: left to itself,
// it held the kernel to 64 registers and spilled)
constexpr int kGroupCtas = 3;
constexpr int kHeavyWords = 16384;              // heavy groups: 524288 column blocks per window
constexpr int kHeavySummary = kHeavyWords / 32;
constexpr int64_t kHeavyEntries = 4096;         // groups with more entries take the CTA kernel
constexpr int kHeavyUnroll = 4;                 // entries per thread and step of the CTA kernel
constexpr int kHeavyStep = kThreads * kHeavyUnroll;
constexpr int kFlatWindows = 4;                 // short groups spanning at most this many windows: flat reads
constexpr int kFlatUnroll = 4;                  // 32-entry loads in flight per lane
constexpr int kRegisterUnroll = 8;              // groups of at most 256 entries: all loads in flight at once
// (so the first pass defers or hands to the heavy kernel exactly the long groups)
static_assert(32 * kRegisterUnroll == kSortedEntries && kHeavyEntries > kSortedEntries);
// ... and in the second pass, groups of at most 1024 (at most 512 with half the registers)
constexpr int kWideUnroll = 32;
constexpr int kNarrowWords = 256;               // the first pass's window: 8192 column blocks
constexpr int kMaskRounds = 4;                  // the first pass's rounds of 32 blocks before its window
// CTAs per SM of the first pass, said to ptxas (60 registers; left to itself the sort took it to 80,
// and at 5 CTAs it spilled: no faster on an H200)
constexpr int kNarrowCtas = 4;
constexpr int kHalfUnroll = kRegisterUnroll / 2;  // groups of at most 32 * kHalfUnroll entries: half the registers
constexpr int64_t kDeferredGroup = -1;          // counts[g] after the first pass: left to distinct_blocks_kernel
constexpr int64_t kHeavyGroup = -2;             // ... left to distinct_blocks_heavy_kernel

// The groups' rows, and the CSR's row offsets.
struct Groups : GroupRows {
  const int64_t* row_ptr;
};

__device__ __forceinline__ uint32_t warp_min(uint32_t v) { return __reduce_min_sync(kFullMask, v); }

// Sets `bit` of the window for the lanes `inside`: lanes with the same bit (the entries of one
// block, common in banded rows) elect one lane by a match, which does the two shared-memory
// atomics (instead of a segmented OR by five rounds of shuffles over runs of lanes in one word).
__device__ __forceinline__ void set_bits(uint32_t* bits, uint32_t* summary, bool inside, uint32_t bit) {
  const int lane = threadIdx.x & 31;
  const uint32_t key = inside ? bit : kNone;
  const uint32_t peers = __match_any_sync(kFullMask, key);
  if (inside && lane == __ffs(peers) - 1) {
    const uint32_t word = bit >> 5;
    atomicOr(bits + word, 1u << (bit & 31));
    atomicOr(summary + (word >> 5), 1u << (word & 31));
  }
}

// The blocks under summary word s (whose bits are `words`): how many, and listing them in order
// from out[at] while clearing their bitmap words (returns the position after the last).
__device__ __forceinline__ int blocks_under(const uint32_t* bits, int s, uint32_t words) {
  int n = 0;
  for (uint32_t t = words; t; t &= t - 1) n += __popc(bits[s * 32 + __ffs(t) - 1]);
  return n;
}

template <typename Index>
__device__ __forceinline__ Index list_and_clear(uint32_t* bits, int s, uint32_t words, uint32_t w0, uint32_t* out,
                                                Index at) {
  for (uint32_t t = words; t; t &= t - 1) {
    const int wd = s * 32 + __ffs(t) - 1;
    uint32_t word = bits[wd];
    bits[wd] = 0;
    const uint32_t base = w0 + uint32_t(wd) * 32;
    for (; word; word &= word - 1) out[at++] = base + uint32_t(__ffs(word) - 1);
  }
  return at;
}

// The position of the k-th (from 0) set bit of m (k < popc(m)): five halvings.
__device__ __forceinline__ int select_bit(uint32_t m, int k) {
  int pos = 0;
#pragma unroll
  for (int half = 16; half >= 1; half >>= 1) {
    const int low = __popc(m & ((1u << half) - 1u));
    if (k >= low) {
      k -= low;
      m >>= half;
      pos += half;
    }
  }
  return pos;
}

// Lists the window's blocks (from w0) in order to out and clears the window; returns how many.
// The summary words in rounds of 32 lanes; in a round, the non-zero bitmap words are dealt to the
// lanes 32 at a time (a lane finds its word from a prefix sum of the summary popcounts), and the
// popcounts of those words, scanned, place their blocks (the former walk, one lane per summary
// word over its words and bits in turn, left the stencil's dozen separate words to one or two
// lanes).
template <int Words = kWords>
__device__ __forceinline__ int list_window(uint32_t* bits, uint32_t* summary, uint32_t w0, uint32_t* out) {
  const int lane = threadIdx.x & 31;
  constexpr int kSummaryWords = Words / 32;
  int count = 0;
  for (int round = 0; round * 32 < kSummaryWords; ++round) {
    const int s = round * 32 + lane;
    const uint32_t words = s < kSummaryWords ? summary[s] : 0u;
    const int nonzero = __popc(words);
    const int ends = warp_inclusive_sum(nonzero);  // the non-zero words of this lane and those below
    const int total = __shfl_sync(kFullMask, ends, 31), before = ends - nonzero;
    if (total == 0) continue;  // nothing in these 1024 words
    if (words != 0) summary[s] = 0;
    for (int q0 = 0; q0 < total; q0 += 32) {
      const int q = q0 + lane;
      const int owner = count_below(ends, 32, 16, q + 1);  // the lane whose summary word holds word q
      const uint32_t owner_words = __shfl_sync(kFullMask, words, owner & 31);
      const int owner_before = __shfl_sync(kFullMask, before, owner & 31);
      uint32_t word = 0;
      int wd = 0;
      if (q < total) {
        wd = (round * 32 + owner) * 32 + select_bit(owner_words, q - owner_before);
        word = bits[wd];
        bits[wd] = 0;
      }
      const int mine = __popc(word);
      const int inclusive = warp_inclusive_sum(mine);
      int at = count + inclusive - mine;
      const uint32_t base = w0 + uint32_t(wd) * 32;
      for (; word; word &= word - 1) out[at++] = base + uint32_t(__ffs(word) - 1);
      count += __shfl_sync(kFullMask, inclusive, 31);
    }
  }
  __syncwarp();
  return count;
}

// The column blocks of a group of at most 32 * kRegisterUnroll entries, [first, stop), into the
// lanes' registers (kNone past the end): one round of loads, all in flight at once. Returns the
// warp's smallest block (kNone: no entries) and sets `highest` to its largest.
template <int Unroll>
__device__ __forceinline__ uint32_t load_group_blocks(const int32_t* __restrict__ col_idx, int64_t first, int entries,
                                                      FastDivider width, uint32_t (&bc)[Unroll], uint32_t& highest) {
  const int lane = threadIdx.x & 31;
  const int32_t* cols = col_idx + first;
  uint32_t lowest = kNone;
  highest = 0;
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    const int k = u * 32 + lane;
    bc[u] = k < entries ? width.divide(uint32_t(__ldg(cols + k))) : kNone;
    lowest = min(lowest, bc[u]);
    if (bc[u] != kNone) highest = max(highest, bc[u]);
  }
  highest = __reduce_max_sync(kFullMask, highest);
  return warp_min(lowest);
}

// A group in the registers, listed by rounds of 32 consecutive blocks from the smallest left: one
// bit per block in a register, ORed over the warp, the listing a popcount (no shared memory, no
// atomics). Banded rows take one round; a stencil's tile rows one per plane of its neighbours
// (three for the 27-point stencil). At most `rounds` rounds: returns how many blocks were listed
// (to out), marks their entries kNone and sets w0 to the smallest block left (kNone: all done).
// (Measured on an H200: the stencil's 8x8 tile rows through the 1 KB window cost 750 instructions
// each.)
template <int Unroll>
__device__ __forceinline__ int list_by_masks(uint32_t (&bc)[Unroll], int entries, uint32_t& w0, uint32_t* out,
                                             int rounds) {
  const int lane = threadIdx.x & 31;
  int count = 0;
  for (int round = 0; round < rounds && w0 != kNone; ++round) {
    uint32_t mask = 0, next = kNone;
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (u * 32 >= entries) break;  // warp-uniform
      const uint32_t offset = bc[u] - w0;
      if (bc[u] != kNone && offset < 32) {
        mask |= 1u << offset;
        bc[u] = kNone;
      } else {
        next = min(next, bc[u]);
      }
    }
    mask = __reduce_or_sync(kFullMask, mask);
    if ((mask >> lane) & 1u) out[count + __popc(mask & ((1u << lane) - 1u))] = w0 + uint32_t(lane);
    count += __popc(mask);
    w0 = warp_min(next);
  }
  return count;
}

// A group in the registers, any span: through the shared bitmap window by window (no per-row
// cursors, no search for the first window: the warp's minimum is it). Returns the group's block
// count; its list goes to out.
template <int Words = kWords, int Unroll = kRegisterUnroll>
__device__ __forceinline__ int64_t distinct_blocks_in_registers(uint32_t* bits, uint32_t* summary,
                                                                const uint32_t (&bc)[Unroll], int entries, uint32_t w0,
                                                                uint32_t* out) {
  int64_t count = 0;
  while (w0 != kNone) {
    const uint64_t w1 = uint64_t(w0) + uint64_t(Words) * 32;  // window [w0, w1)
    uint32_t following = kNone;
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (u * 32 >= entries) break;  // warp-uniform
      const bool inside = bc[u] != kNone && bc[u] >= w0 && uint64_t(bc[u]) < w1;
      set_bits(bits, summary, inside, bc[u] - w0);
      if (bc[u] != kNone && uint64_t(bc[u]) >= w1) following = min(following, bc[u]);
    }
    __syncwarp();
    count += list_window<Words>(bits, summary, w0, out + count);
    w0 = warp_min(following);
  }
  return count;
}

// A warp's window of Words words and its summary cleared before their first use (listing leaves
// them clear again); a stencil's or a band's groups, listed by the masks alone, never clear it.
template <int Words>
__device__ __forceinline__ void clear_window_once(uint32_t* bits, bool& cleared) {
  if (cleared) return;
  for (int i = threadIdx.x & 31; i < Words + Words / 32; i += 32) bits[i] = 0;
  __syncwarp();
  cleared = true;
}

// The first pass on a group of at most 32 * Unroll entries from `first` (Unroll: the fewest
// registers that hold it, so a band's 8-row groups of about 100 entries issue half the loads and
// tests): blocks spanning fewer than kNarrowWords * 32 by masks and then the window, others by the
// sort (the window cleared first where `cleared` is false). Its list goes to list + first; returns
// its block count.
template <int Unroll>
__device__ __forceinline__ int64_t list_short_group(const int32_t* __restrict__ col_idx, int64_t first, int entries,
                                                    FastDivider width, uint32_t* bits, uint32_t* summary,
                                                    bool& cleared, uint32_t* list) {
  uint32_t bc[Unroll], highest;
  uint32_t w0 = load_group_blocks(col_idx, first, entries, width, bc, highest);
  if (w0 == kNone) return 0;
  if (highest - w0 >= uint32_t(kNarrowWords) * 32) return list_distinct_sorted(bc, kNone, list + first);
  int64_t count = list_by_masks(bc, entries, w0, list + first, kMaskRounds);
  if (w0 != kNone) {
    clear_window_once<kNarrowWords>(bits, cleared);
    count += distinct_blocks_in_registers<kNarrowWords>(bits, summary, bc, entries, w0, list + first + count);
  }
  return count;
}

// The entry range of group g, loaded one group ahead of its use.
struct EntryRange {
  int64_t first = 0, stop = 0;
  __device__ void load(const Groups& groups_of, int64_t g) {
    int64_t r0, r1;
    groups_of.range(g, r0, r1);
    first = groups_of.row_ptr[r0];
    stop = groups_of.row_ptr[r1];
  }
};

// A warp's counts of groups that are not compact and of those past the staged limits: one atomic
// each (lane 0).
__device__ __forceinline__ void add_group_counts(ListCounters* counters, unsigned wide, unsigned large) {
  if ((threadIdx.x & 31) != 0) return;
  if (wide > 0) atomicAdd(&counters->wide_groups, (unsigned long long)wide);
  if (large > 0) atomicAdd(&counters->large_groups, (unsigned long long)large);
}

// First pass, with a small window (1 KB per warp: high occupancy): groups of at most
// 32 * kRegisterUnroll entries are done here (blocks spanning fewer than kNarrowWords * 32:
// list_by_masks, then the bitmap; wider: sorted); heavy groups are listed for
// distinct_blocks_heavy_kernel and the others for distinct_blocks_kernel (in no particular order).
__global__ void __launch_bounds__(kThreads, kNarrowCtas)
    narrow_blocks_kernel(Groups groups_of, int64_t groups, const int32_t* __restrict__ col_idx, FastDivider width,
                         uint32_t* __restrict__ list, int64_t* __restrict__ counts, int64_t* __restrict__ heavy,
                         ListCounters* __restrict__ counters) {
  __shared__ uint32_t narrow_bits[kWarps][kNarrowWords + kNarrowWords / 32];
  const int lane = threadIdx.x & 31;
  uint32_t* bits = narrow_bits[threadIdx.x >> 5];
  uint32_t* summary = bits + kNarrowWords;
  bool cleared = false;  // the window, cleared before its first use (a band's warps never use it)
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  int64_t g = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  EntryRange ahead;
  // one atomic per warp for each counter (one per group contends on a stencil's every group)
  unsigned wide = 0, large = 0, deferred = 0;  // (32 bits: a warp's share of the groups)
  if (g < groups) ahead.load(groups_of, g);
  for (; g < groups; g += warps) {
    const EntryRange range = ahead;
    if (g + warps < groups) ahead.load(groups_of, g + warps);
    const int64_t entries = range.stop - range.first;
    if (entries > kHeavyEntries) {
      if (lane == 0) {
        heavy[atomicAdd(&counters->heavy_groups, 1ull)] = g;
        counts[g] = kHeavyGroup;
      }
      ++wide;
      ++large;
      continue;
    }
    if (entries <= 32 * kRegisterUnroll) {
      const int64_t count =
          entries <= 32 * kHalfUnroll
              ? list_short_group<kHalfUnroll>(col_idx, range.first, int(entries), width, bits, summary, cleared, list)
              : list_short_group<kRegisterUnroll>(col_idx, range.first, int(entries), width, bits, summary, cleared,
                                                  list);
      if (lane == 0) counts[g] = count;
      wide += !is_compact_group(entries, count);
      large += !is_staged_group(entries, count);
      continue;
    }
    if (lane == 0) counts[g] = kDeferredGroup;
    ++deferred;
  }
  add_group_counts(counters, wide, large);
  if (lane == 0 && deferred > 0) atomicAdd(&counters->deferred_groups, (unsigned long long)deferred);
}

// A deferred group of at most 32 * Unroll entries from `first`, read into the registers at once:
// mask rounds first, as in the first pass, then the warp's window. Its list goes to list + first;
// returns its block count.
template <int Unroll>
__device__ __forceinline__ int64_t list_group_in_registers(const int32_t* __restrict__ col_idx, int64_t first,
                                                           int entries, FastDivider width, uint32_t* bits,
                                                           uint32_t* summary, bool& cleared, uint32_t* list) {
  uint32_t bc[Unroll], highest;
  uint32_t w0 = load_group_blocks(col_idx, first, entries, width, bc, highest);
  int64_t count = list_by_masks(bc, entries, w0, list + first, kMaskRounds);
  if (w0 != kNone) {
    clear_window_once<kWords>(bits, cleared);
    count += distinct_blocks_in_registers<kWords, Unroll>(bits, summary, bc, entries, w0, list + first + count);
  }
  return count;
}

// The groups narrow_blocks_kernel deferred (counts[g] == kDeferredGroup), one warp each
// (grid-stride over all groups: the warps skip the others).
__global__ void __launch_bounds__(kGroupWarps * 32, kGroupCtas)
    distinct_blocks_kernel(Groups groups_of, int64_t groups, const int32_t* __restrict__ col_idx, FastDivider width,
                           int64_t* __restrict__ row_cursor, uint32_t* __restrict__ list, int64_t* __restrict__ counts,
                           ListCounters* __restrict__ counters) {
  // (A band's or a stencil's groups are all done by the first pass: no grid-stride over them.)
  if (counters->deferred_groups == 0) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  extern __shared__ uint32_t shared_bits[];
  uint32_t* bits = shared_bits + warp * (kWords + kSummary);
  uint32_t* summary = bits + kWords;
  bool cleared = false;  // the window is cleared before its first use
  unsigned wide = 0, large = 0;
  const int64_t* row_ptr = groups_of.row_ptr;
  const int64_t warps = int64_t(gridDim.x) * kGroupWarps;
  // A group's state and entry range are loaded one group ahead, so their latency hides behind the
  // group before.
  int64_t g = int64_t(blockIdx.x) * kGroupWarps + warp, ahead_state = 0;
  EntryRange ahead;
  if (g < groups) {
    ahead_state = counts[g];
    ahead.load(groups_of, g);
  }
  for (; g < groups; g += warps) {
    const int64_t state = ahead_state, first_entry = ahead.first, group_end = ahead.stop;
    if (g + warps < groups) {
      ahead_state = counts[g + warps];
      ahead.load(groups_of, g + warps);
    }
    if (state != kDeferredGroup) continue;
    int64_t r0, r1;
    groups_of.range(g, r0, r1);
    const int64_t nrows = r1 - r0;
    if (group_end - first_entry <= 32 * kWideUnroll) {  // mask rounds first, as in the first pass
      const int entries = int(group_end - first_entry);
      const int64_t count = entries <= 32 * kWideUnroll / 2
                                ? list_group_in_registers<kWideUnroll / 2>(col_idx, first_entry, entries, width, bits,
                                                                           summary, cleared, list)
                                : list_group_in_registers<kWideUnroll>(col_idx, first_entry, entries, width, bits,
                                                                       summary, cleared, list);
      if (lane == 0) counts[g] = count;
      wide += !is_compact_group(entries, count);
      large += !is_staged_group(entries, count);
      continue;
    }
    clear_window_once<kWords>(bits, cleared);
    const bool tall = nrows > 32;  // cursors in row_cursor instead of lane registers
    // The lane's row (short groups): its cursor and end.
    int64_t cur = 0, end = 0;
    uint32_t next = kNone, last = 0;
    if (!tall) {
      if (lane < nrows) {
        cur = row_ptr[r0 + lane];
        end = row_ptr[r0 + lane + 1];
        if (cur < end) {
          next = width.divide(uint32_t(col_idx[cur]));
          last = width.divide(uint32_t(col_idx[end - 1]));
        }
      }
    } else {
      for (int64_t r = r0 + lane; r < r1; r += 32) {
        const int64_t c = row_ptr[r];
        row_cursor[r] = c;
        if (c < row_ptr[r + 1]) next = min(next, width.divide(uint32_t(col_idx[c])));
      }
    }
    uint32_t w0 = warp_min(next);
    // A short group whose blocks span few windows reads all its entries at once, window by window
    // (one contiguous range, loads independent of one another); otherwise row by row with cursors.
    const bool flat = !tall && w0 != kNone &&
                      uint64_t(__reduce_max_sync(kFullMask, last) - w0) < uint64_t(kFlatWindows) * kWords * 32;
    const int64_t stop = flat ? group_end : 0;
    int64_t count = 0;
    while (w0 != kNone) {
      const uint64_t w1 = uint64_t(w0) + uint64_t(kWords) * 32;  // window [w0, w1)
      uint32_t following = kNone;                                // smallest column block at or past w1
      if (flat) {
        for (int64_t j0 = first_entry; j0 < stop; j0 += 32 * kFlatUnroll) {
          uint32_t bc[kFlatUnroll];
#pragma unroll
          for (int u = 0; u < kFlatUnroll; ++u) {
            const int64_t j = j0 + u * 32 + lane;
            bc[u] = j < stop ? width.divide(uint32_t(__ldg(col_idx + j))) : kNone;
          }
#pragma unroll
          for (int u = 0; u < kFlatUnroll; ++u) {
            const bool inside = bc[u] != kNone && bc[u] >= w0 && uint64_t(bc[u]) < w1;
            set_bits(bits, summary, inside, bc[u] - w0);
            if (bc[u] != kNone && uint64_t(bc[u]) >= w1) following = min(following, bc[u]);
          }
        }
        following = warp_min(following);
      }
      for (int64_t batch = 0; !flat && batch < nrows; batch += 32) {
        int64_t bcur = cur, bend = end;
        const int64_t my_row = r0 + batch + lane;
        if (tall) {
          bcur = my_row < r1 ? row_cursor[my_row] : 0;
          bend = my_row < r1 ? row_ptr[my_row + 1] : 0;
        }
        const int in_batch = int(nrows - batch < 32 ? nrows - batch : 32);
        for (int rr = 0; rr < in_batch; ++rr) {
          int64_t c = __shfl_sync(kFullMask, bcur, rr);
          const int64_t e = __shfl_sync(kFullMask, bend, rr);
          uint32_t row_next;
          while (true) {
            const int64_t k = c + lane;
            const uint32_t bc = k < e ? width.divide(uint32_t(__ldg(col_idx + k))) : kNone;
            const bool inside = k < e && uint64_t(bc) < w1;
            set_bits(bits, summary, inside, bc - w0);
            const int n = __popc(__ballot_sync(kFullMask, inside));  // a prefix: rows are sorted
            c += n;
            if (n < 32) {
              row_next = __shfl_sync(kFullMask, bc, n);
              break;
            }
          }
          if (lane == rr) bcur = c;
          following = min(following, row_next);
        }
        if (tall) {
          if (my_row < r1) row_cursor[my_row] = bcur;
        } else {
          cur = bcur;
        }
      }
      __syncwarp();
      count += list_window(bits, summary, w0, list + first_entry + count);
      __syncwarp();
      w0 = following;
    }
    if (lane == 0) counts[g] = count;
    wide += !is_compact_group(group_end - first_entry, count);
    large += !is_staged_group(group_end - first_entry, count);
  }
  add_group_counts(counters, wide, large);
}

// Groups of more than kHeavyEntries entries, one CTA each (the list of them and its length come
// from distinct_blocks_kernel, in no particular order). Same algorithm as distinct_blocks_kernel with the CTA's
// 256 threads on each row, 1024 entries a step, and a 64 KB window; the listing is a CTA prefix
// sum.
__global__ void __launch_bounds__(kThreads)
    distinct_blocks_heavy_kernel(Groups groups_of, const int64_t* __restrict__ which,
                                 const ListCounters* __restrict__ counters, const int32_t* __restrict__ col_idx,
                                 FastDivider width, int64_t* __restrict__ row_cursor, uint32_t* __restrict__ list,
                                 int64_t* __restrict__ counts) {
  using Scan = cubns::BlockScan<int, kThreads>;
  const int64_t heavy = int64_t(counters->heavy_groups);
  if (blockIdx.x >= heavy) return;  // (most launches: no heavy group, nothing to clear)
  extern __shared__ uint32_t shared_bits[];
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ uint32_t shared_min, shared_next;
  __shared__ int shared_first[2];  // per step, alternately: the first position outside the window
  if (threadIdx.x < 2) shared_first[threadIdx.x] = kHeavyStep;
  int step = 0;
  uint32_t* bits = shared_bits;
  uint32_t* summary = bits + kHeavyWords;
  const int tid = threadIdx.x;
  for (int i = tid; i < kHeavyWords + kHeavySummary; i += kThreads) bits[i] = 0;
  const int64_t* row_ptr = groups_of.row_ptr;
  for (int64_t m = blockIdx.x; m < heavy; m += gridDim.x) {
    const int64_t g = which[m];
    int64_t r0, r1;
    groups_of.range(g, r0, r1);
    const int64_t first_entry = row_ptr[r0];
    if (tid == 0) shared_min = kNone;
    __syncthreads();
    uint32_t next = kNone;
    for (int64_t r = r0 + tid; r < r1; r += kThreads) {
      const int64_t c = row_ptr[r];
      row_cursor[r] = c;
      if (c < row_ptr[r + 1]) next = min(next, width.divide(uint32_t(col_idx[c])));
    }
    atomicMin(&shared_min, next);
    __syncthreads();
    uint32_t w0 = shared_min;
    int64_t count = 0;
    while (w0 != kNone) {
      const uint64_t w1 = uint64_t(w0) + uint64_t(kHeavyWords) * 32;
      uint32_t following = kNone;
      for (int64_t r = r0; r < r1; ++r) {
        int64_t c = row_cursor[r];
        const int64_t e = row_ptr[r + 1];
        while (true) {  // kHeavyStep entries per step, position u * kThreads + tid for thread tid
          uint32_t bc[kHeavyUnroll];
#pragma unroll
          for (int u = 0; u < kHeavyUnroll; ++u) {
            const int64_t k = c + u * kThreads + tid;
            bc[u] = k < e ? width.divide(uint32_t(__ldg(col_idx + k))) : kNone;
          }
          int first_out = kHeavyStep;  // the first position of this thread outside the window
#pragma unroll
          for (int u = kHeavyUnroll - 1; u >= 0; --u) {
            const bool inside = bc[u] != kNone && uint64_t(bc[u]) < w1;
            set_bits(bits, summary, inside, bc[u] - w0);
            if (!inside) first_out = u * kThreads + tid;
          }
          atomicMin(&shared_first[step & 1], first_out);  // inside is a prefix: rows are sorted
          __syncthreads();
          const int n = shared_first[step & 1];
          if (tid == 0) shared_first[(step & 1) ^ 1] = kHeavyStep;
          if (n < kHeavyStep && tid == n % kThreads) {
            uint32_t at_n = bc[0];
#pragma unroll
            for (int u = 1; u < kHeavyUnroll; ++u)
              if (u == n / kThreads) at_n = bc[u];
            shared_next = at_n;
          }
          ++step;
          __syncthreads();
          c += n;
          if (n < kHeavyStep) break;
        }
        following = min(following, shared_next);
        if (tid == 0) row_cursor[r] = c;
      }
      __syncthreads();
      // List the window's blocks: thread t owns summary words 2t and 2t + 1 (bit words 64t ..).
      int mine = 0;
      for (int s = 2 * tid; s < 2 * tid + 2; ++s) mine += blocks_under(bits, s, summary[s]);
      int offset = 0, window_total = 0;
      Scan(scan_temp).ExclusiveSum(mine, offset, window_total);
      int64_t out = first_entry + count + offset;
      for (int s = 2 * tid; s < 2 * tid + 2; ++s) {
        out = list_and_clear(bits, s, summary[s], w0, list, out);
        summary[s] = 0;
      }
      count += window_total;
      __syncthreads();
      w0 = following;
    }
    if (tid == 0) counts[g] = count;
    __syncthreads();
  }
}

// One warp per group: its list to block_col (and the group of each block).
__global__ void __launch_bounds__(kThreads)
    copy_lists_kernel(Groups groups_of, int64_t groups, const uint32_t* __restrict__ list,
                      const int64_t* __restrict__ block_ptr, int32_t* __restrict__ block_col,
                      int32_t* __restrict__ block_group) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  for (int64_t g = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); g < groups; g += warps) {
    int64_t r0, r1;
    groups_of.range(g, r0, r1);
    const int64_t from = groups_of.row_ptr[r0], b0 = block_ptr[g], n = block_ptr[g + 1] - b0;
    for (int64_t k = lane; k < n; k += 32) {
      block_col[b0 + k] = int32_t(list[from + k]);
      if (block_group) block_group[b0 + k] = int32_t(g);
    }
  }
}

unsigned warp_grid(int64_t items, int warps_per_cta) {
  const int64_t ctas = (items + warps_per_cta - 1) / warps_per_cta;
  return unsigned(std::min<int64_t>(std::max<int64_t>(ctas, 1), 65536));
}

}  // namespace

BlockColumns find_block_columns(const int64_t* row_ptr, const int32_t* col_idx, int64_t rows, int64_t cols,
                                int64_t nnz, int fixed_height, const int64_t* d_group_ptr, int64_t groups,
                                int64_t max_group_rows, int64_t block_width, BlockListing listing,
                                const GpuContext& context, const BeforeReadBack& before_read_back) {
  require(block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, "block width ", block_width, " must be positive");
  const int64_t column_blocks = (cols + block_width - 1) / block_width;
  require(column_blocks < int64_t(kNone) && column_blocks <= kMaxInt32 + int64_t(1), SPARSETC_STATUS_SIZE_OVERFLOW,
          column_blocks, " column blocks do not fit 32-bit indices");
  BlockColumns result;
  result.groups = groups;
  result.block_ptr = buffer_of<int64_t>(groups + 1, context);
  const Groups groups_of{{rows, fixed_height, d_group_ptr}, row_ptr};
  DeviceBuffer counts = buffer_of<int64_t>(groups, context);
  result.list = buffer_of<uint32_t>(nnz, context);
  uint32_t* list = result.list.as<uint32_t>();
  DeviceBuffer counters = buffer_of<ListCounters>(1, context);
  ListCounters* d_counters = counters.as<ListCounters>();
  zero(d_counters, 1, context.stream);
  // row cursors for groups of more than 32 rows and for the heavy kernel
  DeviceBuffer cursors = buffer_of<int64_t>(max_group_rows > 32 || nnz > kHeavyEntries ? rows : 0, context);
  // (a width past 2^31 puts every column in block 0, as the divisor 2^31 - 1 does)
  const FastDivider divider(uint32_t(std::min<int64_t>(block_width, kMaxInt32)));
  if (groups > 0) {
    // heavy groups, listed by the narrow kernel as it meets them (at most one per kHeavyEntries
    // entries); it marks the groups it leaves to distinct_blocks_kernel in counts
    const int64_t most_heavy = std::min<int64_t>(groups, nnz / kHeavyEntries + 1);
    DeviceBuffer heavy = buffer_of<int64_t>(most_heavy, context);
    narrow_blocks_kernel<<<warp_grid((groups + kNarrowGroupsPerWarp - 1) / kNarrowGroupsPerWarp, kWarps), kThreads, 0,
                           context.stream>>>(groups_of, groups, col_idx, divider, list, counts.as<int64_t>(),
                                             heavy.as<int64_t>(), d_counters);
    SPARSETC_CUDA_CHECK_LAUNCH();
    const size_t shared = size_t(kGroupWarps) * (kWords + kSummary) * sizeof(uint32_t);
    allow_dynamic_shared(distinct_blocks_kernel, shared);
    // Two groups per warp: each warp clears its 8 KB window once for both, and the CTAs still come
    // in waves that the hardware balances. (Measured on an H200: a persistent grid was 3-8% faster
    // on a band and a stencil but 19% slower on R-MAT, whose groups differ widely; one group per
    // warp pays a clearing per group.)
    const unsigned grid = warp_grid((groups + kGroupsPerWarp - 1) / kGroupsPerWarp, kGroupWarps);
    distinct_blocks_kernel<<<grid, kGroupWarps * 32, shared, context.stream>>>(
        groups_of, groups, col_idx, divider, cursors.as<int64_t>(), list, counts.as<int64_t>(), d_counters);
    SPARSETC_CUDA_CHECK_LAUNCH();
    if (nnz > kHeavyEntries) {
      const size_t heavy_shared = size_t(kHeavyWords + kHeavySummary) * sizeof(uint32_t);
      allow_dynamic_shared(distinct_blocks_heavy_kernel, heavy_shared);
      distinct_blocks_heavy_kernel<<<unsigned(std::min<int64_t>(most_heavy, 1024)), kThreads, heavy_shared,
                                     context.stream>>>(groups_of, heavy.as<const int64_t>(), d_counters, col_idx,
                                                       divider, cursors.as<int64_t>(), list, counts.as<int64_t>());
      SPARSETC_CUDA_CHECK_LAUNCH();
    }
  }
  exclusive_scan_total(counts.as<const int64_t>(), result.block_ptr.as<int64_t>(), groups, context);
  // One read-back: the block count (copied next to the counters) and the wide groups.
  copy_device_to_device(&d_counters->blocks, result.block_ptr.as<const int64_t>() + groups, sizeof(int64_t),
                        context.stream);
  if (before_read_back) before_read_back(result.block_ptr.as<const int64_t>(), &d_counters->extra);
  const ListCounters totals = read_back(d_counters, context.stream);
  result.blocks = int64_t(totals.blocks);
  result.wide_groups = int64_t(totals.wide_groups);
  result.large_groups = int64_t(totals.large_groups);
  result.long_groups = int64_t(totals.heavy_groups + totals.deferred_groups);
  result.extra = int64_t(totals.extra);
  if (listing != BlockListing::kInPlace)
    copy_block_lists(result, row_ptr, rows, fixed_height, d_group_ptr, listing == BlockListing::kColumnsAndGroups,
                     context);
  return result;
}

void copy_block_lists(BlockColumns& b, const int64_t* row_ptr, int64_t rows, int fixed_height,
                      const int64_t* d_group_ptr, bool with_groups, const GpuContext& context) {
  const Groups groups_of{{rows, fixed_height, d_group_ptr}, row_ptr};
  b.block_col = buffer_of<int32_t>(b.blocks, context);
  if (with_groups) b.block_group = buffer_of<int32_t>(b.blocks, context);
  if (b.blocks > 0) {
    copy_lists_kernel<<<warp_grid(b.groups, kWarps), kThreads, 0, context.stream>>>(
        groups_of, b.groups, b.list.as<const uint32_t>(), b.block_ptr.as<const int64_t>(), b.block_col.as<int32_t>(),
        with_groups ? b.block_group.as<int32_t>() : nullptr);
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  b.list = DeviceBuffer();
}

}  // namespace sparsetc::detail::gpuconv
