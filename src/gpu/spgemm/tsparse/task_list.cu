// The task list of the tSparse SpGEMM (paper Section 4.1, Algorithm 1 lines 1-15), on the GPU:
//  1. every A tile (I, K) meets the tiles of B's tile row K; a pair survives only when some column
//     k of the A tile and row k of the B tile both hold entries (col_mask & row_mask != 0), i.e.
//     exactly when the tile product is not structurally zero. Counts per A tile, scanned (int64).
//  2. the pairs are written A tile by A tile (key: the output tile column J, value: the pair's
//     number) and sorted by J within each tile row of C (CUB stable segmented sort: a C tile's
//     tasks stay in the order of A's tile columns, so its sum is deterministic);
//  3. heads of equal-J runs are flagged and scanned: C's tiles, their columns, task offsets and
//     tile-row offsets.
#include "core/error.hpp"
#include "gpu/convert/convert_common.cuh"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"

namespace sparsetc::detail {
namespace {

namespace cubns = gpuconv::cubns;
using gpuconv::kThreads;

// nnz(B(k, :)) for every entry (i, k) of A.
template <typename V>
struct EntryProducts {
  const int32_t* a_col;
  const int64_t* b_row_ptr;
  int64_t* out;
  __device__ void operator()(int64_t j) const {
    const int32_t k = a_col[j];
    out[j] = b_row_ptr[k + 1] - b_row_ptr[k];
  }
};

constexpr int kWarps = kThreads / 32;

// One warp per A tile: its lanes walk the B tiles of tile row K side by side (coalesced mask
// reads; B tile rows of dense-block matrices hold tens of tiles) and count those whose row mask
// meets the A tile's column mask.
__global__ void __launch_bounds__(kThreads)
    count_pairs_kernel(int64_t a_tiles, const int32_t* __restrict__ a_col, const uint8_t* __restrict__ a_col_mask,
                       const int64_t* __restrict__ b_tile_row_ptr, const uint8_t* __restrict__ b_row_mask,
                       int64_t* __restrict__ count) {
  const int lane = threadIdx.x & 31;
  for (int64_t t = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); t < a_tiles; t += int64_t(gridDim.x) * kWarps) {
    const int32_t k = a_col[t];
    const uint32_t mask = a_col_mask[t];
    int64_t n = 0;
    for (int64_t s0 = b_tile_row_ptr[k], end = b_tile_row_ptr[k + 1]; s0 < end; s0 += 32) {
      const int64_t s = s0 + lane;
      n += __popc(__ballot_sync(gpuconv::kFullMask, s < end && (b_row_mask[s] & mask) != 0));
    }
    if (lane == 0) count[t] = n;
  }
}

// The same walk, writing each surviving pair in B's order: key J (B's tile column), the pair's
// number, its B tile.
__global__ void __launch_bounds__(kThreads)
    write_pairs_kernel(int64_t a_tiles, const int32_t* __restrict__ a_col, const uint8_t* __restrict__ a_col_mask,
                       const int64_t* __restrict__ b_tile_row_ptr, const int32_t* __restrict__ b_col,
                       const uint8_t* __restrict__ b_row_mask, const int64_t* __restrict__ pair_ptr,
                       int32_t* __restrict__ key, int64_t* __restrict__ number, int64_t* __restrict__ pair_b) {
  const int lane = threadIdx.x & 31;
  for (int64_t t = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); t < a_tiles; t += int64_t(gridDim.x) * kWarps) {
    const int32_t k = a_col[t];
    const uint32_t mask = a_col_mask[t];
    int64_t p = pair_ptr[t];
    for (int64_t s0 = b_tile_row_ptr[k], end = b_tile_row_ptr[k + 1]; s0 < end; s0 += 32) {
      const int64_t s = s0 + lane;
      const bool meets = s < end && (b_row_mask[s] & mask) != 0;
      const uint32_t ballot = __ballot_sync(gpuconv::kFullMask, meets);
      if (meets) {
        const int64_t q = p + __popc(ballot & ((1u << lane) - 1u));
        key[q] = b_col[s];
        number[q] = q;
        pair_b[q] = s;
      }
      p += __popc(ballot);
    }
  }
}

unsigned grid_for_warps(int64_t warps) {
  const int64_t ctas = (warps + kWarps - 1) / kWarps;
  return unsigned(ctas < 65536 * 4 ? (ctas > 0 ? ctas : 1) : 65536 * 4);
}

// Segment of tile row I of C in the pair list: the pairs of A's tile row I.
struct SegmentOffsets {
  const int64_t* a_tile_row_ptr;
  const int64_t* pair_ptr;
  int64_t* out;
  __device__ void operator()(int64_t i) const { out[i] = pair_ptr[a_tile_row_ptr[i]]; }
};

// After the sort: the A tile (the last A tile whose pairs start at or before the pair's number) and
// the B tile of every task, in sorted order.
struct GatherPairs {
  const int64_t* sorted_number;
  const int64_t* pair_ptr;
  int64_t a_tiles;
  const int64_t* unsorted_b;
  int64_t* pair_a;
  int64_t* pair_b;
  __device__ void operator()(int64_t q) const {
    const int64_t p = sorted_number[q];
    pair_a[q] = gpuconv::last_not_above(pair_ptr, int64_t(0), a_tiles, p);
    pair_b[q] = unsorted_b[p];
  }
};

struct HeadFlags {
  const int64_t* segment;
  const int32_t* key;
  int32_t* head;
  __device__ void operator()(int64_t q, int64_t i) const {
    head[q] = (q == segment[i] || key[q] != key[q - 1]) ? 1 : 0;
  }
};

struct WriteTiles {
  const int32_t* head;
  const int64_t* tile_of;  // exclusive scan of head
  const int32_t* key;
  int32_t* tile_col;
  int64_t* tile_pair_ptr;
  __device__ void operator()(int64_t q) const {
    if (!head[q]) return;
    const int64_t t = tile_of[q];
    tile_col[t] = key[q];
    tile_pair_ptr[t] = q;
  }
};

struct TileRowOffsets {
  const int64_t* segment;
  const int64_t* tile_of;
  int64_t* out;
  __device__ void operator()(int64_t i) const { out[i] = tile_of[segment[i]]; }
};

struct SetLast {
  int64_t* at;
  int64_t value;
  __device__ void operator()(int64_t) const { *at = value; }
};

}  // namespace

template <typename V>
int64_t count_products(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const GpuContext& context) {
  using namespace gpuconv;
  if (a.nnz == 0) return 0;
  DeviceBuffer per_entry = buffer_of<int64_t>(a.nnz, context), scan = buffer_of<int64_t>(a.nnz + 1, context);
  for_each_index(a.nnz, context, EntryProducts<V>{a.col_idx, b.row_ptr, per_entry.as<int64_t>()});
  exclusive_scan_total(per_entry.as<const int64_t>(), scan.as<int64_t>(), a.nnz, context);
  return read_back(scan.as<const int64_t>() + a.nnz, context.stream);
}

template int64_t count_products<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const GpuContext&);
template int64_t count_products<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&,
                                        const GpuContext&);

TilePairCount count_tile_pairs(const TileOperand& a, const TileOperand& b, const GpuContext& context) {
  using namespace gpuconv;
  require(a.cols == b.rows, SPARSETC_STATUS_DIMENSION_MISMATCH, "tSparse SpGEMM: A is ", a.rows, "x", a.cols,
          ", B is ", b.rows, "x", b.cols);
  TilePairCount count;
  count.pair_ptr = buffer_of<int64_t>(a.tiles + 1, context);
  if (a.tiles == 0) {
    zero(count.pair_ptr.as<int64_t>(), 1, context.stream);
    return count;
  }
  DeviceBuffer per_tile = buffer_of<int64_t>(a.tiles, context);
  count_pairs_kernel<<<grid_for_warps(a.tiles), kThreads, 0, context.stream>>>(
      a.tiles, a.tile_col.as<const int32_t>(), a.col_mask.as<const uint8_t>(), b.tile_row_ptr.as<const int64_t>(),
      b.row_mask.as<const uint8_t>(), per_tile.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  exclusive_scan_total(per_tile.as<const int64_t>(), count.pair_ptr.as<int64_t>(), a.tiles, context);
  count.pairs = read_back(count.pair_ptr.as<const int64_t>() + a.tiles, context.stream);
  return count;
}

TileTasks make_tile_tasks(const TileOperand& a, const TileOperand& b, const TilePairCount& count,
                          const GpuContext& context) {
  using namespace gpuconv;
  TileTasks tasks;
  tasks.rows = a.rows;
  tasks.cols = b.cols;
  tasks.pairs = count.pairs;
  const int64_t tile_rows = tasks.tile_rows(), pairs = count.pairs;
  const int64_t* pair_ptr = count.pair_ptr.as<const int64_t>();
  tasks.tile_row_ptr = buffer_of<int64_t>(tile_rows + 1, context);
  if (pairs == 0) {
    zero(tasks.tile_row_ptr.as<int64_t>(), tile_rows + 1, context.stream);
    tasks.tile_pair_ptr = buffer_of<int64_t>(1, context);
    zero(tasks.tile_pair_ptr.as<int64_t>(), 1, context.stream);
    return tasks;
  }
  // 1. The pairs, A tile by A tile.
  DeviceBuffer key = buffer_of<int32_t>(pairs, context), number = buffer_of<int64_t>(pairs, context),
               unsorted_b = buffer_of<int64_t>(pairs, context);
  write_pairs_kernel<<<grid_for_warps(a.tiles), kThreads, 0, context.stream>>>(
      a.tiles, a.tile_col.as<const int32_t>(), a.col_mask.as<const uint8_t>(), b.tile_row_ptr.as<const int64_t>(),
      b.tile_col.as<const int32_t>(), b.row_mask.as<const uint8_t>(), pair_ptr, key.as<int32_t>(),
      number.as<int64_t>(), unsorted_b.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  // 2. Sorted by output tile column within each tile row of C.
  DeviceBuffer segment = buffer_of<int64_t>(tile_rows + 1, context);
  for_each_index(tile_rows + 1, context,
                 SegmentOffsets{a.tile_row_ptr.as<const int64_t>(), pair_ptr, segment.as<int64_t>()});
  DeviceBuffer sorted_key = buffer_of<int32_t>(pairs, context), sorted_number = buffer_of<int64_t>(pairs, context);
  const int64_t* seg = segment.as<const int64_t>();
  run_cub("cub::DeviceSegmentedSort::StableSortPairs", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceSegmentedSort::StableSortPairs(temp, bytes, key.as<const int32_t>(), sorted_key.as<int32_t>(),
                                                       number.as<const int64_t>(), sorted_number.as<int64_t>(), pairs,
                                                       tile_rows, seg, seg + 1, context.stream);
  });
  key = DeviceBuffer();
  number = DeviceBuffer();
  tasks.pair_a = buffer_of<int64_t>(pairs, context);
  tasks.pair_b = buffer_of<int64_t>(pairs, context);
  for_each_index(pairs, context,
                 GatherPairs{sorted_number.as<const int64_t>(), pair_ptr, a.tiles, unsorted_b.as<const int64_t>(),
                             tasks.pair_a.as<int64_t>(), tasks.pair_b.as<int64_t>()});
  sorted_number = DeviceBuffer();
  unsorted_b = DeviceBuffer();
  // 3. Unique output tiles.
  DeviceBuffer head = buffer_of<int32_t>(pairs, context), tile_of = buffer_of<int64_t>(pairs + 1, context);
  for_each_entry_with_row(seg, tile_rows, pairs, context,
                          HeadFlags{seg, sorted_key.as<const int32_t>(), head.as<int32_t>()});
  exclusive_scan_total(head.as<const int32_t>(), tile_of.as<int64_t>(), pairs, context);
  tasks.tiles = read_back(tile_of.as<const int64_t>() + pairs, context.stream);
  tasks.tile_col = buffer_of<int32_t>(tasks.tiles, context);
  tasks.tile_pair_ptr = buffer_of<int64_t>(tasks.tiles + 1, context);
  for_each_index(pairs, context,
                 WriteTiles{head.as<const int32_t>(), tile_of.as<const int64_t>(), sorted_key.as<const int32_t>(),
                            tasks.tile_col.as<int32_t>(), tasks.tile_pair_ptr.as<int64_t>()});
  for_each_index(1, context, SetLast{tasks.tile_pair_ptr.as<int64_t>() + tasks.tiles, pairs});
  for_each_index(tile_rows + 1, context,
                 TileRowOffsets{seg, tile_of.as<const int64_t>(), tasks.tile_row_ptr.as<int64_t>()});
  return tasks;
}

}  // namespace sparsetc::detail
