// Building blocks shared by the GPU conversions (declarations only; no CUDA device headers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail::gpuconv {

// The local transpose (local_transpose.cuh): tried for structures of at least min_entries
// entries over more than 2048 lists; tile_lists (a power of two in [32, 2048]) fixes the width of
// its tiles (0: chosen from the mean list length, and halved once where a tile overflows).
struct LocalTransposeOptions {
  int64_t min_entries = int64_t(1) << 20;
  int tile_lists = 0;
};

// The mirror transpose (mirror_transpose.cuh): square structures of at least min_entries entries
// over more than 2048 lists are probed for it.
struct MirrorTransposeOptions {
  int64_t min_entries = int64_t(1) << 16;
};

// How transpose_compressed goes about it (for tests and measurements). digit_bits: 0 picks the
// sort by the inner dimension; 1..11 forces digit_sort.cuh's passes with digits of at most that
// many bits. mirror = false never probes for the mirror transpose, local = false never tries the
// local one; took_mirror and took_local, when given, are set to whether they ran.
struct TransposeOptions {
  int digit_bits = 0;
  bool mirror = true;
  MirrorTransposeOptions mirror_options;
  bool* took_mirror = nullptr;
  bool local = true;
  LocalTransposeOptions local_options;
  bool* took_local = nullptr;
};

// Transposes a compressed structure of `outer` lists over `inner` indices (CSR -> CSC, or CSC ->
// CSR): out_ptr (int64, inner + 1), out_idx (int32, nnz), out_val (V, nnz), each output list sorted.
// Requires outer and inner <= 2^31 - 1 and nnz <= 2^33 - 1. Deterministic. Synchronisation points:
// one for the mirror transpose's probe where it runs, one more where its pass runs, and one where
// the local transpose is tried (its count's verdict; two where it retries with narrower tiles);
// none for structures of 2048 lists or fewer, or too small for either.
template <typename V>
void transpose_compressed(int64_t outer, int64_t inner, int64_t nnz, const int64_t* ptr, const int32_t* idx,
                          const V* val, DeviceBuffer& out_ptr, DeviceBuffer& out_idx, DeviceBuffer& out_val,
                          const GpuContext& context, const TransposeOptions& options = {});

// The same transpose straight from a caller's arrays into a caller's types (the device side of
// sparsetc_matrix_convert between CSR and CSC): offsets of ptr_type and int32 indices, both with
// in_base; values of value_size bytes (2, 4 or 8), moved as raw bits (exact for every value
// type); out_ptr of out_ptr_type and out_idx (int32) with out_base. Allocates the three outputs.
// Same limits and synchronisation as transpose_compressed, plus out_base + outer <= 2^31 - 1 (the
// caller checks that 32-bit output offsets hold nnz + out_base).
void transpose_user_arrays(int64_t outer, int64_t inner, int64_t nnz, const void* ptr, sparsetc_index_type_t ptr_type,
                           const int32_t* idx, int64_t in_base, const void* val, size_t value_size,
                           sparsetc_index_type_t out_ptr_type, int64_t out_base, DeviceBuffer& out_ptr,
                           DeviceBuffer& out_idx, DeviceBuffer& out_val, const GpuContext& context);

// The ways of the tiled DCSR (tiled_dcsr.cu): the counting sort by strip windows
// (strip_windows.cuh: rows near the diagonal), the sort of the (row, strip) segments and a gather
// (segments of at least 5 entries on average), the sort of the entries (shorter segments).
enum class TiledWay { kStripWindows, kSegmentSort, kEntrySort };

// way, when given, is set to the way that ran (for tests and measurements); strip_windows = false
// never takes the strip windows.
struct TiledOptions {
  TiledWay* way = nullptr;
  bool strip_windows = true;
};

// gpu_csr_to_tiled_dcsr with options.
template <typename V>
DeviceTiledDcsr<V> csr_to_tiled_dcsr(const DeviceCsrView<V>& csr, int64_t strip_width, const GpuContext& context,
                                     const TiledOptions& options);

// The ways of gpu_normalize for COO (normalize.cu): the counting sort into row buckets
// (coo_row_buckets.cuh), or the radix sort of (row, column) keys (where a bucket does not fit).
enum class CooWay { kRowBuckets, kRadixSort };

// way, when given, is set to the way that ran for COO; row_buckets = false never takes the buckets.
struct NormalizeOptions {
  CooWay* way = nullptr;
  bool row_buckets = true;
};

// gpu_normalize with options.
template <typename V>
DeviceCsr<V> normalize(const RawSparse& raw, sparsetc_duplicates_t duplicates, const GpuContext& context,
                       const NormalizeOptions& options);

// The blocks of a CSR cut into row groups (fixed height, or the partition group_ptr) and column
// blocks of `block_width`: for each group, its distinct column blocks in increasing order.
//
// A compact group has at most kCompactEntries entries and kCompactBlocks blocks: its entries fit
// one round of a warp's register loads and its blocks the lanes (the consumers' one-warp path).
constexpr int64_t kCompactEntries = 256;
constexpr int64_t kCompactBlocks = 32;

// The one rule the counters, the task split and the one-warp kernels share.
constexpr bool is_compact_group(int64_t entries, int64_t blocks) {
  return entries <= kCompactEntries && blocks <= kCompactBlocks;
}

// A staged group has at most kStagedEntries entries and kStagedBlocks blocks: its entries fit one
// round of a CTA's register loads and its list shared memory (the one-CTA path of BCSR and VBR,
// staged_block_rows.cuh). Every compact group is within these limits.
constexpr int64_t kStagedEntries = 1024;
constexpr int64_t kStagedBlocks = 256;

constexpr bool is_staged_group(int64_t entries, int64_t blocks) {
  return entries <= kStagedEntries && blocks <= kStagedBlocks;
}

// A tile row of the bitmap tiles with at most kSortedEntries entries and tiles spanning fewer than
// kSortedSpan columns of tiles (span: last tile column - first) can be done by one warp sorting its
// entries in the registers by (tile, bit), one 32-bit key each (the tile from the first, 18 bits;
// the bit, 6; the entry, 8): sorted_tile_rows.cuh, for tile rows that are not compact (scattered
// rows, as many tiles as entries) or for all where most are not.
constexpr int64_t kSortedEntries = 256;
constexpr int64_t kSortedSpan = int64_t(1) << 18;

constexpr bool sorts_in_warp(int64_t entries, int64_t span) {
  return entries <= kSortedEntries && span < kSortedSpan;
}

// CSR -> bitmap tiles takes a warp per four tile rows (bitmap_quads.cuh) where every tile row is
// compact: then a quad's entries and tiles fit its shared memory. (Measured on an H200, it is
// faster than a warp per tile row on every such matrix tried: 7-20% on bands, 16% on a 7-point
// stencil, 2-4% on a 27-point one.)
constexpr bool bitmap_takes_quads(int64_t wide_tile_rows) { return wide_tile_rows == 0; }

// What find_block_columns hands back besides block_ptr: block_col (and block_group), or the lists
// in place (list: group g's blocks from list[row_ptr[first row of g]], for a consumer that writes
// block_col itself as it goes).
enum class BlockListing { kColumns, kColumnsAndGroups, kInPlace };

struct BlockColumns {
  int64_t groups = 0, blocks = 0;
  int64_t wide_groups = 0;   // groups that are not compact
  int64_t large_groups = 0;  // groups past the staged limits (a subset of the wide ones)
  int64_t long_groups = 0;   // groups of more than kSortedEntries entries (a subset of the wide ones)
  int64_t extra = 0;         // what BeforeReadBack left in its slot (0 without one)
  DeviceBuffer block_ptr;    // int64, groups + 1: the blocks of each group
  DeviceBuffer block_col;    // int32, blocks: column block, increasing within a group
  DeviceBuffer block_group;  // int32, blocks: the group of each block (kColumnsAndGroups)
  DeviceBuffer list;         // uint32, nnz: the lists in place (kInPlace)
};

// Device counters of find_block_columns (read back together; deferred_groups also tells the 8 KB
// kernel whether it has anything to do).
struct ListCounters {
  unsigned long long heavy_groups, wide_groups, large_groups, deferred_groups, blocks, extra;
};

// Work a consumer queues on the stream before find_block_columns' one read-back, given block_ptr
// (groups + 1, scanned) and a device slot that is read back with the counters (BlockColumns::extra):
// a total the consumer needs on the host costs no second round trip.
using BeforeReadBack = std::function<void(const int64_t* block_ptr, unsigned long long* extra)>;

// fixed_height > 0: groups of fixed_height rows (the last one partial); otherwise d_group_ptr
// (device, groups + 1 row boundaries) with max_group_rows the tallest group. Requires
// column blocks < 2^32 - 1. One synchronisation point (the block count is read back).
BlockColumns find_block_columns(const int64_t* row_ptr, const int32_t* col_idx, int64_t rows, int64_t cols,
                                int64_t nnz, int fixed_height, const int64_t* d_group_ptr, int64_t groups,
                                int64_t max_group_rows, int64_t block_width, BlockListing listing,
                                const GpuContext& context, const BeforeReadBack& before_read_back = {});

// The lists left in place (kInPlace) copied to b.block_col (and b.block_group), as the other
// listings do; b.list is released. The same groups as find_block_columns was given.
void copy_block_lists(BlockColumns& b, const int64_t* row_ptr, int64_t rows, int fixed_height,
                      const int64_t* d_group_ptr, bool with_groups, const GpuContext& context);

}  // namespace sparsetc::detail::gpuconv
