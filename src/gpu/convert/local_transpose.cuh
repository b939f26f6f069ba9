// The transpose of a compressed structure whose entries stay near a few diagonals (banded,
// stencil and mesh matrices in a good order): one read of the input, one write of the output.
//
// The output lists are cut into tiles of C consecutive lists (C a power of two), one CTA each.
//  0. probe: one warp for each of 256 batches of 32 input lists spread over the input counts the
//     tiles its batch reaches; a batch reaching more than kMaxBatchTiles tiles, or more than
//     kMaxFar groups of entries outside a window of kWindow tiles, means "not local". The verdict
//     is read back: a scattered structure costs this probe and nothing more.
//  1. locate: one warp per batch reads its indices once, coalesced, and marks in a bitmap which
//     tiles the batch reaches (one bit per tile and chunk of 32 << k lists), counting each tile's
//     entries and visits in shared memory first. The structure is local when no batch passes the
//     probe's limits, a tile is visited by at most kLocalMaxBatches batches, and all tiles
//     together by at most nnz / 64 (half as many lists as entries; a limit shared out evenly over
//     32 stripes of batches, so that a warp passing it stops every warp at once). The verdict is
//     read back; when it is "not local" nothing is written and the caller sorts.
//  2. pull: a tile's CTA takes its offset from the scan of the tile counts and visits the input
//     lists of its chunks: a lane per list finds the list's part in the tile (a scan of short
//     lists, binary searches in long ones), the warp walks the parts' entries flattened
//     (coalesced). A first walk counts the tile's output lists in shared memory, a second drops
//     each entry into its list (a shared cursor per list) in a staging area of shared memory;
//     each list is then put back in input order by an insertion sort (warps walk their batches
//     in increasing order, so only entries of batches in flight together arrive out of order),
//     and the tile is written out coalesced, with its part of out_ptr. A tile with more entries
//     than the staging area holds stages in its place of the output instead (same code, global
//     addresses).
// (Measured on an H200 against the stable radix sort it replaces on such matrices: see
// docs/performance.md, "GPU format conversions".)
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"

namespace sparsetc::detail::gpuconv {
namespace local_transpose {

constexpr int kLocalMaxBatches = 256;  // batches of 32 input lists a tile may visit
constexpr int kPullThreads = 512;
constexpr int kPullUnroll = 4;  // entries a lane loads before it uses them
constexpr int kPullWarps = kPullThreads / 32;
constexpr int kMaxTileLists = 2048;
constexpr int kMinTileLists = 32;
constexpr int64_t kSharedBytes = 110 * 1024;  // two CTAs per SM on sm_90 (228 KB)
constexpr int kLocateUnroll = 4;
constexpr int kWindow = 128;      // tiles a locate warp counts in shared memory
constexpr int kMaxFar = 64;       // groups outside the window a batch of a local structure may have
constexpr int kMaxBatchTiles = 32;  // tiles a batch of 32 lists of a local structure may reach
constexpr int kLinearSearch = 48;  // lists up to this long are scanned, longer ones searched
constexpr uint32_t kNoTile = 0xFFFFFFFFu;

// Shared memory of the pull kernel besides its staging area, as pull_kernel lays it out: the batch
// list, offset and cursor per list, 32 warp sums, each warp's part ends (4 bytes) and begins (8),
// and 64 bytes of alignment slack.
inline int64_t fixed_shared_bytes(int tile_lists) {
  return int64_t(kLocalMaxBatches) * 4 + int64_t(tile_lists) * 8 + 32 * 4 + int64_t(kPullWarps) * 32 * 12 + 64;
}

// What the locate pass keeps: the (tile, chunk) bitmap, each tile's entries and visits (batches
// reaching it), the visits of each of kStripes stripes of batches (batch % kStripes), and `abort`, set
// once a tile or a stripe passes its limit (the structure is then not local: the other warps stop).
// Each count only grows and is the same whatever the order the warps run in, so whether the pass
// aborts is decided by the structure alone.
constexpr int kStripes = 32;
struct LocateState {
  uint32_t* bitmap;
  uint32_t* tile_count;
  uint32_t* tile_visits;
  unsigned long long* stripe_visits;
  uint32_t* abort;
  int64_t words_per_tile;
  uint32_t max_tile_visits;
  unsigned long long max_stripe_visits;
  uint32_t max_far;          // groups of a batch outside its window
  uint32_t max_batch_tiles;  // tiles a batch reaches
};

// The tiles of entries k0 + u * 32 + lane (u < kLocateUnroll) below e1, kNoTile past it: the
// loads all issued before any is used.
__device__ __forceinline__ void load_tiles(const int32_t* __restrict__ idx, int64_t in_base, int64_t k0, int64_t e1,
                                           int tile_shift, uint32_t (&tile)[kLocateUnroll]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int u = 0; u < kLocateUnroll; ++u) {
    const int64_t k = k0 + u * 32 + lane;
    tile[u] = k < e1 ? uint32_t(int64_t(__ldg(idx + k)) - in_base) >> tile_shift : kNoTile;
  }
}

// The first tile of a batch's window: kWindow / 2 before the tile of its first entry e0.
__device__ __forceinline__ uint32_t window_base(const int32_t* __restrict__ idx, int64_t in_base, int64_t e0,
                                                int tile_shift) {
  const uint32_t first = uint32_t(int64_t(__ldg(idx + e0)) - in_base) >> tile_shift;
  return first > kWindow / 2 ? first - kWindow / 2 : 0u;
}

// The batch accounting the probe and the locate pass share. Walks the batch's entries [e0, e1):
// the lanes of one tile elect a leader, which calls in_window(tile - base, entries) for a tile of
// the window and outside(tile, entries) for one beyond it. Returns the groups outside the window,
// stopping as soon as they pass max_far (the batch is then not local).
template <typename InWindow, typename Outside>
__device__ __forceinline__ uint32_t walk_batch_tiles(const int32_t* __restrict__ idx, int64_t in_base, int64_t e0,
                                                     int64_t e1, int tile_shift, uint32_t base, uint32_t max_far,
                                                     InWindow in_window, Outside outside) {
  const int lane = threadIdx.x & 31;
  uint32_t far = 0;
  for (int64_t k0 = e0; k0 < e1; k0 += 32 * kLocateUnroll) {
    uint32_t tile[kLocateUnroll];
    load_tiles(idx, in_base, k0, e1, tile_shift, tile);
#pragma unroll
    for (int u = 0; u < kLocateUnroll; ++u) {
      const uint32_t same = __match_any_sync(kFullMask, tile[u]);
      const bool leader = tile[u] != kNoTile && lane == __ffs(same) - 1;
      const bool inside = tile[u] - base < uint32_t(kWindow);
      far += __popc(__ballot_sync(kFullMask, leader && !inside));
      if (far > max_far) return far;
      if (!leader) continue;
      if (inside) in_window(tile[u] - base, uint32_t(__popc(same)));
      else outside(tile[u], uint32_t(__popc(same)));
    }
  }
  return far;
}

// Tiles a batch reaches: its far groups plus the non-zero slots of its window.
__device__ __forceinline__ uint32_t tiles_touched(const uint32_t* window, uint32_t far) {
  const int lane = threadIdx.x & 31;
  __syncwarp();
  uint32_t touched = far;
#pragma unroll
  for (int i0 = 0; i0 < kWindow; i0 += 32) touched += __popc(__ballot_sync(kFullMask, window[i0 + lane] != 0));
  return touched;
}

// 1. Marks (tile, chunk) pairs, counts each tile's entries and visits, aborts past the limits.
// A warp counts its batch's entries per tile in shared memory over a window of kWindow tiles
// around the batch's first entry (lanes of one tile combined first), then flushes each tile it
// reached once: its count, its bit, its visit. Tiles outside the window go to global memory at
// once (and count one visit per 32 entries: still the same whatever the order of the warps).
template <typename O>
__global__ void __launch_bounds__(kThreads)
    locate_kernel(const O* __restrict__ ptr, const int32_t* __restrict__ idx, int64_t in_base, int64_t outer,
                  int tile_shift, int chunk_shift, LocateState state) {
  __shared__ uint32_t window_count[kWarps][kWindow];
  const int lane = threadIdx.x & 31;
  uint32_t* window = window_count[threadIdx.x >> 5];
  for (int i = lane; i < kWindow; i += 32) window[i] = 0;
  __syncwarp();
  const int64_t batches = (outer + 31) / 32;
  for (int64_t b = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / 32; b < batches;
       b += int64_t(gridDim.x) * kWarps) {
    if (*reinterpret_cast<volatile uint32_t*>(state.abort)) return;
    const int64_t r0 = b * 32, r1 = min(r0 + 32, outer);
    const int64_t e0 = int64_t(ptr[r0]) - in_base, e1 = int64_t(ptr[r1]) - in_base;
    if (e0 == e1) continue;
    const int64_t chunk = r0 >> chunk_shift;
    const int64_t word = chunk >> 5;
    const uint32_t bit = 1u << (chunk & 31);
    const uint32_t base = window_base(idx, in_base, e0, tile_shift);
    uint32_t new_visits = 0;
    bool over = false;
    // One visit of tile t by this batch: its entries, its (tile, chunk) bit, the visit itself.
    const auto visit = [&](int64_t t, uint32_t entries) {
      atomicAdd(state.tile_count + t, entries);
      atomicOr(state.bitmap + t * state.words_per_tile + word, bit);
      over |= atomicAdd(state.tile_visits + t, 1u) + 1 > state.max_tile_visits;
      ++new_visits;
    };
    const uint32_t far = walk_batch_tiles(
        idx, in_base, e0, e1, tile_shift, base, state.max_far,
        [&](uint32_t slot, uint32_t entries) { atomicAdd(window + slot, entries); },
        [&](uint32_t t, uint32_t entries) { visit(t, entries); });
    // Far tiles: a batch reaching more than max_far groups outside its window is not local.
    if (far > state.max_far) {
      if (lane == 0) atomicExch(state.abort, 1u);
      return;
    }
    // A batch of a local structure reaches few tiles: past kMaxBatchTiles it is not local.
    const uint32_t touched = tiles_touched(window, far);
    if (touched > state.max_batch_tiles) {
      if (lane == 0) atomicExch(state.abort, 1u);
      return;
    }
    for (int i = lane; i < kWindow; i += 32) {
      const uint32_t count = window[i];
      if (count == 0) continue;
      window[i] = 0;
      visit(int64_t(base) + i, count);
    }
    __syncwarp();
    new_visits = __reduce_add_sync(kFullMask, new_visits);
    if (lane == 0)
      over |= atomicAdd(state.stripe_visits + b % kStripes, (unsigned long long)new_visits) + new_visits >
              state.max_stripe_visits;
    if (__any_sync(kFullMask, over)) {
      if (lane == 0) atomicExch(state.abort, 1u);
      return;
    }
  }
}

// 0. The probe: one warp for each of kProbeBatches batches spread over the input, each counted
// as the locate pass counts it (tiles reached, groups outside the window); *verdict = 1 when one
// passes the limits. It spares scattered structures the locate pass.
constexpr int kProbeBatches = 256;
template <typename O>
__global__ void __launch_bounds__(kThreads)
    probe_kernel(const O* __restrict__ ptr, const int32_t* __restrict__ idx, int64_t in_base, int64_t outer,
                 int tile_shift, uint32_t max_far, uint32_t max_batch_tiles, uint32_t* __restrict__ verdict) {
  __shared__ uint32_t window_flags[kWarps][kWindow];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint32_t* window = window_flags[warp];
  const int64_t batches = (outer + 31) / 32;
  {
    const int i = blockIdx.x * kWarps + warp;  // one sample batch per warp
    for (int j = lane; j < kWindow; j += 32) window[j] = 0;
    __syncwarp();
    const int64_t b = int64_t(i) * batches / kProbeBatches;
    const int64_t r0 = b * 32, r1 = min(r0 + 32, outer);
    const int64_t e0 = int64_t(ptr[r0]) - in_base, e1 = int64_t(ptr[r1]) - in_base;
    if (e0 == e1) return;
    const uint32_t base = window_base(idx, in_base, e0, tile_shift);
    const uint32_t far = walk_batch_tiles(
        idx, in_base, e0, e1, tile_shift, base, max_far, [&](uint32_t slot, uint32_t) { window[slot] = 1; },
        [](uint32_t, uint32_t) {});
    const uint32_t touched = far > max_far ? far : tiles_touched(window, far);
    if (lane == 0 && (far > max_far || touched > max_batch_tiles)) atomicExch(verdict, 1u);
  }
}

// Exclusive scan of one value per thread of the pull kernel's CTA; `total` gets the sum.
__device__ __forceinline__ uint32_t block_exclusive_scan(uint32_t v, uint32_t* warp_sums, uint32_t& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t inclusive = warp_inclusive_sum(v);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  uint32_t before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < kPullWarps; ++w) {
    const uint32_t s = warp_sums[w];
    if (w < warp) before += s;
    total += s;
  }
  __syncthreads();  // warp_sums reusable
  return before + inclusive - v;
}

// The part of a batch of 32 input lists that falls in one tile, flattened across the warp: each
// lane's list part [begin, begin + length) in shared memory, `ends` its inclusive prefix.
struct BatchParts {
  int64_t* begin;
  uint32_t* ends;
  uint32_t total;
  int64_t first_list;

  // Lane owning flattened entry q < total, and the entry's position.
  __device__ __forceinline__ int64_t position(uint32_t q, int& owner) const {
    int lo = 0;
#pragma unroll
    for (int step = 16; step >= 1; step >>= 1)
      if (ends[lo + step - 1] <= q) lo += step;
    owner = lo;
    return begin[lo] + (q - (lo > 0 ? ends[lo - 1] : 0u));
  }
};

template <typename O>
__device__ __forceinline__ BatchParts batch_parts(const O* ptr, const int32_t* idx, int64_t in_base, int64_t outer,
                                                  int64_t batch, int64_t c0, int64_t c1, int64_t* begin,
                                                  uint32_t* ends) {
  const int lane = threadIdx.x & 31;
  const int64_t list = batch * 32 + lane;
  int64_t s = 0, e = 0;
  if (list < outer) {
    const int64_t rs = int64_t(ptr[list]) - in_base, re = int64_t(ptr[list + 1]) - in_base;
    if (re - rs <= kLinearSearch) {  // independent loads instead of a chain of dependent ones
      int below0 = 0, below1 = 0;
#pragma unroll 8
      for (int64_t k = rs; k < re; ++k) {
        const int64_t x = int64_t(__ldg(idx + k)) - in_base;
        below0 += x < c0;
        below1 += x < c1;
      }
      s = rs + below0;
      e = rs + below1;
    } else {
      s = lower_bound(idx, rs, re, c0 + in_base);
      e = lower_bound(idx, s, re, c1 + in_base);
    }
  }
  const uint32_t inclusive = warp_inclusive_sum(uint32_t(e - s));
  __syncwarp();  // the previous batch's readers are done
  begin[lane] = s;
  ends[lane] = inclusive;
  __syncwarp();
  return BatchParts{begin, ends, __shfl_sync(kFullMask, inclusive, 31), batch * 32};
}

// 2. One CTA per tile of output lists [c0, c0 + C).
template <typename O, typename W, typename PO>
__global__ void __launch_bounds__(kPullThreads, 2)
    pull_kernel(const O* __restrict__ ptr, const int32_t* __restrict__ idx, const W* __restrict__ val, int64_t in_base,
                int64_t outer, int64_t inner, int64_t out_base, int tile_shift, int chunk_shift,
                int64_t words_per_tile, const uint32_t* __restrict__ bitmap, const int64_t* __restrict__ tile_start,
                int64_t staging_capacity, PO* __restrict__ out_ptr, int32_t* __restrict__ out_idx,
                W* __restrict__ out_val) {
  extern __shared__ __align__(16) unsigned char shared[];
  const int tile_lists = 1 << tile_shift;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // layout: staging values (W), staging lists (int32), then the fixed part
  W* shared_vals = reinterpret_cast<W*>(shared);
  int32_t* shared_rows = reinterpret_cast<int32_t*>(shared_vals + staging_capacity);
  uint32_t* batch_list = reinterpret_cast<uint32_t*>(shared_rows + staging_capacity);
  uint32_t* offset = batch_list + kLocalMaxBatches;  // tile_lists + 1 after the scan
  uint32_t* cursor = offset + tile_lists;
  uint32_t* warp_sums = cursor + tile_lists;
  uint32_t* ends = warp_sums + 32;
  int64_t* begin = reinterpret_cast<int64_t*>(ends + kPullWarps * 32);
  ends += warp * 32;
  begin += warp * 32;

  const int64_t t = blockIdx.x;
  const int64_t c0 = t << tile_shift, c1 = min(c0 + tile_lists, inner);
  const int lists = int(c1 - c0);
  const int64_t p0 = tile_start[t], count = tile_start[t + 1] - p0;
  const bool staged = count <= staging_capacity;
  W* stage_vals = staged ? shared_vals : out_val + p0;
  int32_t* stage_rows = staged ? shared_rows : out_idx + p0;

  for (int c = threadIdx.x; c < tile_lists; c += kPullThreads) offset[c] = 0;
  // The visited batches, increasing.
  const int per_chunk = 1 << (chunk_shift - 5);
  const int64_t batches_total = (outer + 31) / 32;
  uint32_t listed = 0;
  for (int64_t w0 = 0; w0 < words_per_tile; w0 += kPullThreads) {
    const int64_t w = w0 + threadIdx.x;
    uint32_t bits = w < words_per_tile ? bitmap[t * words_per_tile + w] : 0u;
    uint32_t round_total = 0;
    uint32_t at = listed + block_exclusive_scan(uint32_t(__popc(bits)) * per_chunk, warp_sums, round_total);
    while (bits) {
      const int64_t chunk = w * 32 + (__ffs(bits) - 1);
      bits &= bits - 1;
      for (int k = 0; k < per_chunk; ++k, ++at) {
        const int64_t batch = chunk * per_chunk + k;
        if (at < kLocalMaxBatches) batch_list[at] = batch < batches_total ? uint32_t(batch) : kNoTile;
      }
    }
    listed += round_total;
  }
  listed = min(listed, uint32_t(kLocalMaxBatches));  // never more: the locate pass's limit
  __syncthreads();

  // Walk 1: the length of every output list of the tile. Each lane also asks the L2 for its part's
  // values, which walk 2 reads (measured on an H200: walk 2, latency bound on them, took half the time).
  for (uint32_t v = warp; v < listed; v += kPullWarps) {
    if (batch_list[v] == kNoTile) continue;
    const BatchParts parts = batch_parts(ptr, idx, in_base, outer, batch_list[v], c0, c1, begin, ends);
    {
      const int64_t s = begin[lane];
      const int64_t n = int64_t(ends[lane]) - (lane > 0 ? int64_t(ends[lane - 1]) : 0);
      for (int64_t k = 0; k < n; k += 128 / int64_t(sizeof(W)))
        asm volatile("prefetch.global.L2 [%0];" ::"l"(val + s + k));
    }
    for (uint32_t q0 = 0; q0 < parts.total; q0 += 32 * kPullUnroll) {
      int32_t column[kPullUnroll];
#pragma unroll
      for (int u = 0; u < kPullUnroll; ++u) {
        const uint32_t q = q0 + u * 32 + lane;
        int owner;
        column[u] = q < parts.total ? __ldg(idx + parts.position(q, owner)) : -1;
      }
#pragma unroll
      for (int u = 0; u < kPullUnroll; ++u)
        if (column[u] >= 0) atomicAdd(offset + (int64_t(column[u]) - in_base - c0), 1u);
    }
  }
  __syncthreads();
  // Offsets of the lists in the tile (each thread scans a run of tile_lists / kPullThreads).
  {
    const int per = tile_lists > kPullThreads ? tile_lists / kPullThreads : 1;
    const int first = threadIdx.x * per;
    uint32_t run[kMaxTileLists / kPullThreads];
    uint32_t sum = 0;
#pragma unroll
    for (int i = 0; i < kMaxTileLists / kPullThreads; ++i) {
      run[i] = i < per && first + i < tile_lists ? offset[first + i] : 0u;
      sum += run[i];
    }
    uint32_t total = 0;
    uint32_t at = block_exclusive_scan(sum, warp_sums, total);
#pragma unroll
    for (int i = 0; i < kMaxTileLists / kPullThreads; ++i) {
      if (i < per && first + i < tile_lists) {
        offset[first + i] = at;
        cursor[first + i] = at;
      }
      at += run[i];
    }
  }
  __syncthreads();
  // Walk 2: every entry into its list.
  for (uint32_t v = warp; v < listed; v += kPullWarps) {
    if (batch_list[v] == kNoTile) continue;
    const BatchParts parts = batch_parts(ptr, idx, in_base, outer, batch_list[v], c0, c1, begin, ends);
    for (uint32_t q0 = 0; q0 < parts.total; q0 += 32 * kPullUnroll) {
      int32_t column[kPullUnroll];
      int owner[kPullUnroll];
      W x[kPullUnroll];
#pragma unroll
      for (int u = 0; u < kPullUnroll; ++u) {
        const uint32_t q = q0 + u * 32 + lane;
        column[u] = -1;
        if (q < parts.total) {
          const int64_t k = parts.position(q, owner[u]);
          column[u] = __ldg(idx + k);
          x[u] = __ldg(val + k);
        }
      }
#pragma unroll
      for (int u = 0; u < kPullUnroll; ++u) {
        if (column[u] < 0) continue;
        const uint32_t slot = atomicAdd(cursor + (int64_t(column[u]) - in_base - c0), 1u);
        stage_rows[slot] = int32_t(parts.first_list + owner[u] + out_base);
        stage_vals[slot] = x[u];
      }
    }
  }
  __syncthreads();
  // Each list in input order: insertion sort (lists arrive nearly sorted).
  for (int c = threadIdx.x; c < lists; c += kPullThreads) {
    const uint32_t lo = offset[c], hi = cursor[c];
    for (uint32_t i = lo + 1; i < hi; ++i) {
      const int32_t r = stage_rows[i];
      if (stage_rows[i - 1] <= r) continue;
      const W x = stage_vals[i];
      uint32_t j = i;
      do {
        stage_rows[j] = stage_rows[j - 1];
        stage_vals[j] = stage_vals[j - 1];
        --j;
      } while (j > lo && stage_rows[j - 1] > r);
      stage_rows[j] = r;
      stage_vals[j] = x;
    }
  }
  for (int c = threadIdx.x; c < lists; c += kPullThreads) out_ptr[c0 + c] = PO(p0 + offset[c] + out_base);
  if (c1 == inner && threadIdx.x == 0) out_ptr[inner] = PO(p0 + count + out_base);
  __syncthreads();
  if (staged) {
    for (int64_t q = threadIdx.x; q < count; q += kPullThreads) {
      out_idx[p0 + q] = shared_rows[q];
      out_val[p0 + q] = shared_vals[q];
    }
  }
}

}  // namespace local_transpose

// The transpose above, into out_ptr (inner + 1), out_idx and out_val (nnz each); false (nothing
// written) when the structure is not local enough or too small (options.min_entries).
template <typename O, typename W, typename PO>
bool transpose_local(int64_t outer, int64_t inner, int64_t nnz, const O* ptr, const int32_t* idx, const W* val,
                     int64_t in_base, PO* out_ptr, int32_t* out_idx, W* out_val, int64_t out_base,
                     const GpuContext& context, const LocalTransposeOptions& options) {
  using namespace local_transpose;
  if (nnz < std::max<int64_t>(options.min_entries, 1) || outer < 1 || inner < 1) return false;
  int device = 0, optin = 0;
  SPARSETC_CUDA_CHECK(cudaGetDevice(&device));
  SPARSETC_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int64_t shared = std::min<int64_t>(kSharedBytes, optin);
  const int64_t entry_bytes = 4 + int64_t(sizeof(W));
  // Tile width: the widest power of two whose average tile fills at most 85% of the staging.
  int tile_shift = 0;
  if (options.tile_lists > 0) {
    require(options.tile_lists >= kMinTileLists && options.tile_lists <= kMaxTileLists &&
                (options.tile_lists & (options.tile_lists - 1)) == 0,
            SPARSETC_STATUS_INVALID_VALUE, "local transpose: tile of ", options.tile_lists, " lists");
    while ((1 << tile_shift) < options.tile_lists) ++tile_shift;
  } else {
    tile_shift = 5;
    while ((2 << tile_shift) <= kMaxTileLists) {
      const int next = 2 << tile_shift;
      const double capacity = double(shared - fixed_shared_bytes(next)) / double(entry_bytes);
      if (double(next) * double(nnz) / double(inner) > 0.85 * capacity) break;
      ++tile_shift;
    }
  }
  const int tile_lists = 1 << tile_shift;
  int64_t capacity = (shared - fixed_shared_bytes(tile_lists)) / entry_bytes;
  if (options.staging_entries > 0) capacity = std::min(capacity, options.staging_entries);
  capacity &= ~int64_t(3);  // keeps the parts after the staging 8-byte aligned
  if (capacity < 4) return false;
  const int64_t tiles = (inner + tile_lists - 1) / tile_lists;
  // Chunks of 32 << k input lists: the bitmap stays below nnz / 2 bytes.
  int chunk_shift = 5;
  auto words_for = [&](int shift) { return (((outer - 1) >> shift) + 1 + 31) / 32; };
  while (chunk_shift < 20 && tiles * words_for(chunk_shift) * 4 > std::max<int64_t>(nnz / 2, 4096)) ++chunk_shift;
  if (int64_t(1) << (chunk_shift - 5) > kLocalMaxBatches) return false;
  const int64_t words_per_tile = words_for(chunk_shift);
  require(tiles <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "local transpose: ", tiles, " tiles");

  if (!options.any_structure) {
    DeviceBuffer verdict = buffer_of<uint32_t>(1, context);
    zero(verdict.as<uint32_t>(), 1, context.stream);
    probe_kernel<O><<<kProbeBatches / kWarps, kThreads, 0, context.stream>>>(ptr, idx, in_base, outer, tile_shift, uint32_t(kMaxFar),
                                                         uint32_t(kMaxBatchTiles), verdict.as<uint32_t>());
    SPARSETC_CUDA_CHECK_LAUNCH();
    if (read_back(verdict.as<const uint32_t>(), context.stream) != 0) return false;
  }
  const int64_t chunk_lists = int64_t(1) << chunk_shift;
  // The limits: a tile visits at most kLocalMaxBatches batches; all tiles together at most
  // nnz / 64 batches (half as many lists as entries), shared out evenly over the stripes.
  const int64_t batches = (outer + 31) / 32;
  const uint32_t max_tile_visits = uint32_t(kLocalMaxBatches / (chunk_lists / 32));
  const double max_visits = options.any_structure ? double(tiles) * double(batches) : double(nnz) / 64.0;
  const unsigned long long max_stripe_visits =
      (unsigned long long)(max_visits * double((batches + kStripes - 1) / kStripes) / double(batches));
  // one zeroed allocation: stripes (8-byte counts) and abort flag, bitmap, tile counts and visits
  const int64_t head = 2 * kStripes + 2, words = head + tiles * words_per_tile + 2 * tiles;
  DeviceBuffer scratch = buffer_of<uint32_t>(words, context);
  zero(scratch.as<uint32_t>(), words, context.stream);
  LocateState state;
  state.stripe_visits = scratch.as<unsigned long long>();
  state.abort = scratch.as<uint32_t>() + 2 * kStripes;
  state.bitmap = scratch.as<uint32_t>() + head;
  state.tile_count = state.bitmap + tiles * words_per_tile;
  state.tile_visits = state.tile_count + tiles;
  state.words_per_tile = words_per_tile;
  state.max_tile_visits = max_tile_visits;
  state.max_stripe_visits = max_stripe_visits;
  state.max_far = options.any_structure ? 0xFFFFFFFFu : uint32_t(kMaxFar);
  state.max_batch_tiles = options.any_structure ? 0xFFFFFFFFu : uint32_t(kMaxBatchTiles);
  locate_kernel<O><<<ctas_for((outer + 31) / 32, kWarps), kThreads, 0, context.stream>>>(
      ptr, idx, in_base, outer, tile_shift, chunk_shift, state);
  SPARSETC_CUDA_CHECK_LAUNCH();
  if (read_back(state.abort, context.stream) != 0) return false;

  DeviceBuffer starts = buffer_of<int64_t>(tiles + 1, context);
  exclusive_scan_total(state.tile_count, starts.as<int64_t>(), tiles, context);
  const size_t bytes = size_t(capacity * entry_bytes + fixed_shared_bytes(tile_lists));
  auto kernel = pull_kernel<O, W, PO>;
  SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  kernel<<<unsigned(tiles), kPullThreads, bytes, context.stream>>>(
      ptr, idx, val, in_base, outer, inner, out_base, tile_shift, chunk_shift, words_per_tile,
      state.bitmap, starts.as<const int64_t>(), capacity, out_ptr, out_idx, out_val);
  SPARSETC_CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace sparsetc::detail::gpuconv
