// The transpose of a compressed structure whose entries stay within a narrow band of diagonals
// (banded matrices, narrow-band meshes in a good order): one pass that counts, one that moves.
//
// The output lists are cut into tiles of T consecutive lists (T a power of two), one CTA each.
//  1. count: a lane per input list reads the list's first and last index and, where the list
//     crosses tiles, searches where; its warp adds its 32 lists' parts up by tile, with the tile's
//     first and last input list (one atomic per tile and figure). A list spanning more than
//     kMaxSpan tiles means "not local": the pass stops there.
//  2. tiles: each tile's output offset (a scan of the counts) and the stats: the largest tile
//     input-list range and its entries, and the entries all ranges hold. The structure is local
//     when no list stopped the count, every tile's range fits one round of its CTA (kCapacity
//     entries) and its occupancy bitmap shared memory, and the ranges hold at most 5/4 of the
//     entries (the others are read and dropped); where a range is past a CTA, tiles half as wide
//     are tried once.
//  3. pull: when the stats say local (else its CTAs return at once), a tile's CTA reads the
//     entries of its input lists into registers and marks each kept one in a bitmap of (output
//     list, input list); an entry's place is its output list's offset plus the popcount of that
//     list's bits below its input list. The tile is placed in shared memory and written out
//     coalesced, with its part of out_ptr. The stats are read back after it: one synchronisation.
// Where it does not apply the caller sorts (transpose.cu). Measured on an H200 against that sort:
// docs/performance.md, "GPU format conversions".
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/lookback_scan.cuh"
#include "gpu/device_properties.hpp"

namespace sparsetc::detail::gpuconv {
namespace local_transpose {

constexpr int kPullThreads = 256;
constexpr int kPullItems = 8;                               // entries a thread reads
constexpr int kPullCtas = 4;                                // resident per SM (registers for it)
constexpr int kCapacity = kPullThreads * kPullItems;        // entries of a tile's range: at most
constexpr int kMaxTileRows = 1024;                          // input lists a tile's range may span
constexpr int kMaskWords = 2048;     // lists x 32-list words of the tile's occupancy bitmap
constexpr int kMinTileLists = 32;
constexpr int kMaxTileLists = 2048;
constexpr uint32_t kMaxSpan = 8;     // tiles (past its first) a list of a local structure may span
constexpr double kAutoFill = 0.85;   // the automatic tile width: mean tile count / capacity at most
constexpr uint32_t kNoTile = 0xFFFFFFFFu;

// What the count and tiles passes leave for the pull kernel and the host (read back once).
struct Stats {
  unsigned long long abort;          // a list spanned more than kMaxSpan tiles
  unsigned long long max_rows;       // input lists of the widest tile range
  unsigned long long max_entries;    // entries of the fullest tile range
  unsigned long long range_entries;  // entries of all tiles' input-list ranges together
};

// Whether the pull kernel runs on these tiles (the kernel and the host decide alike): every tile's
// range fits one round of its CTA and its occupancy bitmap fits shared memory (else tiles half as
// wide may), and the ranges hold at most 5/4 of the entries.
enum class Verdict { kPull, kNarrower, kSort };
__host__ __device__ inline Verdict verdict_of(const Stats& s, int tile_shift, int64_t nnz) {
  if (s.abort) return Verdict::kSort;
  const unsigned long long mask_words = ((s.max_rows + 31) / 32) << tile_shift;
  if (s.max_entries > (unsigned long long)kCapacity || mask_words > (unsigned long long)kMaskWords)
    return Verdict::kNarrower;
  if (s.max_rows > (unsigned long long)kMaxTileRows || s.range_entries > (unsigned long long)(nnz + nnz / 4))
    return Verdict::kSort;
  return Verdict::kPull;
}

// Per tile: its entries, and its first and last input list as ~first and last + 1 (both 0 for
// none, so that one zeroed allocation starts them and atomicMax takes both the min and the max).
struct TileCounts {
  uint32_t* count;
  uint32_t* first_inv;
  uint32_t* last_plus1;
  Stats* stats;
};

// 1. The count: one warp per batch of 32 input lists, a lane per list. A lane reads its list's first
// and last index (the tiles it spans) and finds where it crosses into each next tile by a binary
// search; the warp then adds up its lanes' parts by tile (lists increase with the lane, so a
// tile's first and last list are its lowest and highest lane with entries there): one atomic per
// tile and figure.
template <typename O>
__global__ void __launch_bounds__(kThreads)
    count_kernel(const O* __restrict__ ptr, const int32_t* __restrict__ idx, int64_t in_base, int64_t outer,
                 int tile_shift, TileCounts tiles) {
  // A scattered structure stops every warp of the first wave at its first batch, and each of them
  // reading and then setting one global word made the pass 10.7 us long (H200: 8,448 warps on one
  // word). So a CTA's warps share a flag, the first to stop reports for its CTA, and the global
  // flag is read from a warp's second batch on: 4.6 us.
  __shared__ int cta_stopped;
  if (threadIdx.x == 0) cta_stopped = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int64_t batches = (outer + 31) / 32;
  bool first = true;
  for (int64_t b = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / 32; b < batches;
       b += int64_t(gridDim.x) * kWarps, first = false) {
    if (!first && (*reinterpret_cast<volatile int*>(&cta_stopped) ||
                   *reinterpret_cast<volatile unsigned long long*>(&tiles.stats->abort)))
      return;
    const int64_t list = b * 32 + lane;
    int64_t begin = 0, end = 0;
    if (list < outer) {
      begin = int64_t(ptr[list]) - in_base;
      end = int64_t(ptr[list + 1]) - in_base;
    }
    uint32_t first_tile = 0, last_tile = 0;
    if (end > begin) {
      first_tile = uint32_t(int64_t(__ldg(idx + begin)) - in_base) >> tile_shift;
      last_tile = uint32_t(int64_t(__ldg(idx + end - 1)) - in_base) >> tile_shift;
    }
    const uint32_t span = __reduce_max_sync(kFullMask, last_tile - first_tile);
    if (span > kMaxSpan) {
      if (lane == 0 && atomicExch_block(&cta_stopped, 1) == 0) atomicOr(&tiles.stats->abort, 1ull);
      return;
    }
    int64_t at = begin;
    for (uint32_t k = 0; k <= span; ++k) {
      uint32_t tile = kNoTile, entries = 0;
      if (end > begin && first_tile + k <= last_tile) {
        tile = first_tile + k;
        const int64_t next =
            tile == last_tile ? end : lower_bound(idx, at, end, (int64_t(tile + 1) << tile_shift) + in_base);
        entries = uint32_t(next - at);
        at = next;
      }
      for (uint32_t pending = __ballot_sync(kFullMask, entries > 0); pending != 0;) {
        const uint32_t t = __shfl_sync(kFullMask, tile, __ffs(int(pending)) - 1);
        const uint32_t in = __ballot_sync(kFullMask, entries > 0 && tile == t);
        const uint32_t sum = __reduce_add_sync(kFullMask, (in >> lane) & 1u ? entries : 0u);
        if (lane == 0) {
          atomicAdd(tiles.count + t, sum);
          atomicMax(tiles.first_inv + t, ~uint32_t(b * 32 + __ffs(int(in)) - 1));
          atomicMax(tiles.last_plus1 + t, uint32_t(b * 32 + 32 - __clz(int(in))));
        }
        pending &= ~in;
      }
    }
  }
}

// 2. Per CTA of kThreads tiles: the tiles' output offsets (a block scan of their counts, the CTAs
// chained by decoupled look-back), and the stats (one atomic per warp and figure).
template <typename O>
__global__ void __launch_bounds__(kThreads)
    tiles_kernel(const O* __restrict__ ptr, int64_t n_tiles, TileCounts tiles, TilePrefixes prefixes,
                 int64_t* __restrict__ tile_start) {
  using Scan = cubns::BlockScan<int64_t, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int64_t before;
  if (*reinterpret_cast<volatile unsigned long long*>(&tiles.stats->abort)) return;  // set by the count
  const int64_t t = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  uint32_t count = 0, rows = 0;
  unsigned long long entries = 0;
  if (t < n_tiles && tiles.last_plus1[t] != 0) {  // (entries below 2^31: transpose_local checks nnz)
    const int64_t first = ~tiles.first_inv[t], last = int64_t(tiles.last_plus1[t]) - 1;
    count = tiles.count[t];
    rows = uint32_t(last - first + 1);
    entries = (unsigned long long)(int64_t(ptr[last + 1]) - int64_t(ptr[first]));
  }
  int64_t offset = 0, cta_total = 0;
  Scan(scan).ExclusiveSum(int64_t(count), offset, cta_total);
  if (threadIdx.x < 32) {
    const int64_t p = prefixes.exclusive_prefix(blockIdx.x, cta_total);
    if (threadIdx.x == 0) before = p;
  }
  __syncthreads();
  if (t < n_tiles) tile_start[t] = before + offset;
  rows = __reduce_max_sync(kFullMask, rows);
  const uint32_t most = __reduce_max_sync(kFullMask, uint32_t(entries));
#pragma unroll
  for (int shift = 16; shift > 0; shift >>= 1) entries += __shfl_xor_sync(kFullMask, entries, shift);
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&tiles.stats->max_rows, (unsigned long long)rows);
    atomicMax(&tiles.stats->max_entries, (unsigned long long)most);
    atomicAdd(&tiles.stats->range_entries, entries);
  }
}

template <typename O, typename W, typename PO>
struct PullParams {
  const O* ptr;
  const int32_t* idx;
  const W* val;
  int64_t in_base, inner, out_base;
  int tile_shift;
  const uint32_t* first_inv;
  const uint32_t* last_plus1;
  const int64_t* tile_start;
  const Stats* stats;
  int64_t nnz, tiles;
  PO* out_ptr;
  int32_t* out_idx;
  W* out_val;
};

// 3. One CTA per tile of output lists [c0, c0 + lists), over its input lists first .. first + rows - 1,
// when the stats' verdict says so (otherwise every CTA returns at once). An entry's place in the
// tile is its list's offset plus the entries of that list in earlier input lists: the popcount of
// the list's occupancy bits below its own (one bit per input list of the range, set as the entries
// are read), so no sort. Each thread holds its entries in registers until their places are known,
// puts them there in shared memory, and the tile is written out coalesced.
template <typename O, typename W, typename PO>
__global__ void __launch_bounds__(kPullThreads, kPullCtas) pull_kernel(const PullParams<O, W, PO> p) {
  using Scan = cubns::BlockScan<uint32_t, kPullThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint32_t list_start[kMaxTileRows + 1];  // the range's input lists, from its first entry
  __shared__ uint32_t occupied[kMaskWords];          // output list c, input lists 32w..32w+31: c * words + w
  __shared__ uint32_t below[kMaskWords];             // entries of the tile before word c * words + w
  __shared__ int32_t placed_index[kCapacity];
  __shared__ W placed_value[kCapacity];

  if (verdict_of(*p.stats, p.tile_shift, p.nnz) != Verdict::kPull) return;
  const int tid = threadIdx.x;
  // Persistent CTAs (a grid of resident ones: when the verdict says no, one short wave). Shared
  // memory is reused from tile to tile: each tile's first barrier follows the last one's reads.
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t c0 = t << p.tile_shift;
    const int lists = int(min(int64_t(1) << p.tile_shift, p.inner - c0));
    const int64_t start = p.tile_start[t];
    const uint32_t last_plus1 = p.last_plus1[t];
    const int64_t first = last_plus1 != 0 ? int64_t(~p.first_inv[t]) : 0;
    const int rows = last_plus1 != 0 ? int(int64_t(last_plus1) - first) : 0;
    const int words = (rows + 31) / 32;
    const int64_t e0 = rows > 0 ? int64_t(p.ptr[first]) - p.in_base : 0;
    for (int i = tid; i <= rows; i += kPullThreads)
      list_start[i] = uint32_t(int64_t(p.ptr[first + i]) - p.in_base - e0);
    for (int i = tid; i < lists * words; i += kPullThreads) occupied[i] = 0;
    __syncthreads();

    // Read the range's entries (at most kCapacity; each thread kPullItems consecutive ones, indices
    // and values at once) and mark each kept entry's bit.
    const uint32_t entries = list_start[rows];
    const uint32_t q0 = uint32_t(threadIdx.x) * kPullItems;
    constexpr uint32_t kDropped = 0xFFFFFFFFu;
    uint32_t where[kPullItems];  // list in the tile << 16 | input list in the range
    W x[kPullItems];
#pragma unroll
    for (int j = 0; j < kPullItems; ++j) {
      where[j] = kDropped;
      if (q0 + j < entries) {
        const int32_t column = int32_t(int64_t(__ldg(p.idx + e0 + q0 + j)) - p.in_base - c0);
        x[j] = __ldg(p.val + e0 + q0 + j);
        if (column >= 0 && column < lists) where[j] = uint32_t(column) << 16;
      }
    }
    if (q0 < entries) {
      // the input list of entry q0: the last one starting at or before it (32-bit search)
      int row = 0;
      for (int size = rows; size > 1;) {
        const int half = size >> 1;
        if (list_start[row + half] <= q0) row += half;
        size -= half;
      }
#pragma unroll
      for (int j = 0; j < kPullItems; ++j) {
        if (where[j] == kDropped) continue;
        while (list_start[row + 1] <= q0 + j) ++row;
        where[j] |= uint32_t(row);
        atomicOr(occupied + int(where[j] >> 16) * words + (row >> 5), 1u << (row & 31));
      }
    }
    __syncthreads();

    // A thread per output list: its entries (popcounts of its words), their scan over the lists (the
    // list's offset, written to out_ptr), and the entries before each of its words.
    uint32_t count = 0;
    for (int first_list = 0; first_list < lists; first_list += kPullThreads) {
      const int c = first_list + tid;
      uint32_t total = 0;
      if (c < lists)
        for (int w = 0; w < words; ++w) total += uint32_t(__popc(occupied[c * words + w]));
      uint32_t at = 0, chunk = 0;
      Scan(scan).ExclusiveSum(total, at, chunk);
      at += count;
      if (c < lists) {
        p.out_ptr[c0 + c] = PO(start + at + p.out_base);
        for (int w = 0; w < words; ++w) {
          below[c * words + w] = at;
          at += uint32_t(__popc(occupied[c * words + w]));
        }
      }
      count += chunk;
      __syncthreads();  // the scan's storage; below[] complete
    }
    if (c0 + lists == p.inner && tid == 0) p.out_ptr[p.inner] = PO(start + count + p.out_base);

    // Each entry to its place: the entries before its word plus its list's bits below its own.
#pragma unroll
    for (int j = 0; j < kPullItems; ++j) {
      if (where[j] == kDropped) continue;
      const int row = int(where[j] & 0xFFFFu);
      const int word = int(where[j] >> 16) * words + (row >> 5);
      const uint32_t place = below[word] + uint32_t(__popc(occupied[word] & ((1u << (row & 31)) - 1u)));
      placed_index[place] = int32_t(first + row + p.out_base);
      placed_value[place] = x[j];
    }
    __syncthreads();
    int32_t* out_idx = p.out_idx + start;
    W* out_val = p.out_val + start;
    for (uint32_t s = tid; s < count; s += kPullThreads) {
      out_idx[s] = placed_index[s];
      out_val[s] = placed_value[s];
    }
  }
}

}  // namespace local_transpose

namespace local_transpose {

// log2 of the tiles' width: options.tile_lists, or the widest tiles whose mean count leaves a CTA
// room for wider ranges.
inline int tile_shift_for(int64_t nnz, int64_t inner, const LocalTransposeOptions& options) {
  int tile_shift = 5;
  if (options.tile_lists > 0) {
    require(options.tile_lists >= kMinTileLists && options.tile_lists <= kMaxTileLists &&
                (options.tile_lists & (options.tile_lists - 1)) == 0,
            SPARSETC_STATUS_INVALID_VALUE, "local transpose: tile of ", options.tile_lists, " lists");
    while ((1 << tile_shift) < options.tile_lists) ++tile_shift;
  } else {
    while ((2 << tile_shift) <= kMaxTileLists &&
           double(2 << tile_shift) * double(nnz) / double(inner) <= kAutoFill * kCapacity)
      ++tile_shift;
  }
  return tile_shift;
}

}  // namespace local_transpose

// Whether the local transpose could take a structure with a list whose indices span `widest`
// (last minus first): false where that list alone stops its count (it spans more than kMaxSpan
// tiles past its first at the first tile width tried, and the retry only narrows them).
inline bool local_transpose_admits_span(int64_t widest, int64_t nnz, int64_t inner,
                                        const LocalTransposeOptions& options) {
  using namespace local_transpose;
  return widest < (int64_t(kMaxSpan) + 1) << tile_shift_for(nnz, inner, options);
}

// The transpose above, into out_ptr (inner + 1), out_idx and out_val (nnz each); false (nothing
// written) when the structure is not local enough or too small (options.min_entries).
template <typename O, typename W, typename PO>
bool transpose_local(int64_t outer, int64_t inner, int64_t nnz, const O* ptr, const int32_t* idx, const W* val,
                     int64_t in_base, PO* out_ptr, int32_t* out_idx, W* out_val, int64_t out_base,
                     const GpuContext& context, const LocalTransposeOptions& options) {
  using namespace local_transpose;
  // (a tile's entries are counted in 32 bits)
  if (nnz < std::max<int64_t>(options.min_entries, 1) || nnz > int64_t(kMaxInt32) || outer < 1 || inner < 1)
    return false;
  int tile_shift = tile_shift_for(nnz, inner, options);
  const int sms = current_device_sm_count();
  for (bool retried = false;; retried = true) {
    const int64_t tiles = (inner + (int64_t(1) << tile_shift) - 1) >> tile_shift;
    require(tiles <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "local transpose: ", tiles, " tiles");
    const int64_t scan_ctas = (tiles + kThreads - 1) / kThreads;
    // one zeroed allocation: the stats, the look-back words, the tiles' offsets, then three words per tile
    const int64_t head = int64_t(sizeof(Stats)) / 8 + scan_ctas;
    const int64_t words = head + tiles + (3 * tiles + 1) / 2;
    DeviceBuffer scratch = buffer_of<unsigned long long>(words, context);
    zero(scratch.as<unsigned long long>(), words, context.stream);
    TileCounts counts;
    counts.stats = scratch.as<Stats>();
    const TilePrefixes prefixes{scratch.as<unsigned long long>() + sizeof(Stats) / 8};
    int64_t* tile_start = reinterpret_cast<int64_t*>(scratch.as<unsigned long long>() + head);
    counts.count = reinterpret_cast<uint32_t*>(tile_start + tiles);
    counts.first_inv = counts.count + tiles;
    counts.last_plus1 = counts.first_inv + tiles;
    // a grid of a few waves: on a structure that is not local, every warp stops at its next batch
    const unsigned count_ctas = std::min<unsigned>(ctas_for((outer + 31) / 32, kWarps), unsigned(sms) * 8u);
    count_kernel<O><<<count_ctas, kThreads, 0, context.stream>>>(ptr, idx, in_base, outer, tile_shift, counts);
    SPARSETC_CUDA_CHECK_LAUNCH();
    tiles_kernel<O><<<ctas_for(tiles, kThreads), kThreads, 0, context.stream>>>(ptr, tiles, counts, prefixes,
                                                                                tile_start);
    SPARSETC_CUDA_CHECK_LAUNCH();
    // The pull kernel reads the verdict itself, so it follows at once; the one read-back comes after.
    PullParams<O, W, PO> params;
    params.ptr = ptr;
    params.idx = idx;
    params.val = val;
    params.in_base = in_base;
    params.inner = inner;
    params.out_base = out_base;
    params.tile_shift = tile_shift;
    params.first_inv = counts.first_inv;
    params.last_plus1 = counts.last_plus1;
    params.tile_start = tile_start;
    params.stats = counts.stats;
    params.nnz = nnz;
    params.tiles = tiles;
    params.out_ptr = out_ptr;
    params.out_idx = out_idx;
    params.out_val = out_val;
    const unsigned pull_ctas = unsigned(std::min<int64_t>(tiles, int64_t(sms) * kPullCtas));
    pull_kernel<O, W, PO><<<pull_ctas, kPullThreads, 0, context.stream>>>(params);
    SPARSETC_CUDA_CHECK_LAUNCH();
    switch (verdict_of(read_back(counts.stats, context.stream), tile_shift, nnz)) {
      case Verdict::kPull:
        return true;
      case Verdict::kNarrower:
        if (options.tile_lists > 0 || retried || tile_shift == 5) return false;
        --tile_shift;
        continue;
      case Verdict::kSort:
        return false;
    }
  }
}

}  // namespace sparsetc::detail::gpuconv
