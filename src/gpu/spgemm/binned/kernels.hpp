// Launchers of the binned SpGEMM's device stages, called by the pipeline (binned_spgemm.cpp). Each
// enqueues its work on context.stream; none synchronises unless its comment says so.
//
// Conventions shared by every stage:
//  - A (m x k) and B (k x n) are canonical device CSR (DeviceCsrView): int64 row offsets, int32
//    columns sorted within each row (repeats allowed: each is one more product), values V.
//  - The canonical value of c_ij is the left fold ((0 + p_1) + p_2) + ... over its products
//    p = a_ik * b_kj (each rounded, no FMA contraction) in the order of A's entries. Every kernel
//    (heap, ESC, merge, numeric-only) produces exactly this, so results are bit-identical run to
//    run, across panels and between the full product and numeric-only reuse.
//  - Rows of C are int64 (m <= 2^31 - 1 is checked by the pipeline: bin lists hold int32 rows
//    relative to the panel); every count of entries or products is int64.
//
// This header is included from .cpp files: no device code.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gpu/convert/device_csr.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/spgemm/binned/bins.hpp"

namespace sparsetc::detail::binned {

// A merge-path row's state in device memory: where its result lives and where to resume after a
// checkpoint (the progressive scheme of the paper, section 4.1).
template <typename V>
struct MergeRow {
  int64_t row = 0;       // row of C
  int64_t a_pos = 0;     // next entry of A to multiply (resume point)
  int64_t b_off = 0;     // products of that entry already merged
  int64_t length = 0;    // entries in the result so far
  int64_t capacity = 0;  // entries the global region holds
  int64_t bound = 0;     // upper bound u: never more than this is needed
  int64_t needed = 0;    // after an overflow: entries the interrupted batch needs
  int32_t* cols = nullptr;
  V* vals = nullptr;
  int32_t waiting = 0;   // 1: done in a dense window but its region was too small; redone once grown
  int32_t exact = 0;     // 1: needed is the row's exact length (counted by block_dense_round)
};

// ---- Stage 1: bound[i] = products of row i of A with B, and cap_scan[0..rows] = exclusive scan of
// the rows' C~ room (bins.hpp). Returns a device int64 holding the sum of the bounds, for the
// caller to read back (with bin_rows' offsets: no synchronisation here).
template <typename V>
DeviceBuffer upper_bounds(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t merge_initial, int64_t* bound,
                          int64_t* cap_scan, const GpuContext& context);

// Row boundaries of `panels` panels of nearly equal C~ room: the first row whose cap_scan reaches
// p * total / panels, for p = 0..panels, and cap_scan there (one read back: a synchronisation point).
struct PanelBounds {
  std::vector<int64_t> rows, room_before;
};
PanelBounds panel_bounds(const int64_t* cap_scan, int64_t rows, int64_t panels, const GpuContext& context);

// ---- Stage 2: rows [r0, r1) into the 38 bins. Writes bin[i] and count[i] for bins 0 and 1;
// rows (int32, relative to r0) grouped by sort_key (bins.hpp), a key's rows in row order but for
// the order of runs of up to 32 within a block's rows (which may change run to run);
// offsets[key]..offsets[key + 1] delimit a key's rows (read back: a synchronisation point, which
// also reads the int64 at each non-null address of `along` into read_along of the result).
constexpr int kReadAlong = 10;  // stage 1's two totals, the operands' order counters (BinnedSpgemm)
struct ReadAlong {
  const int64_t* at[kReadAlong] = {};
};
struct BinnedRows {
  std::array<int64_t, kSortKeys + 1> offsets{};
  std::array<int64_t, kReadAlong> read_along{};
  DeviceBuffer rows;  // int32, r1 - r0
  int64_t begin(int key) const { return offsets[size_t(key)]; }
  int64_t end(int key) const { return offsets[size_t(key + 1)]; }
  // A bin's rows by bin, not key (bins 0, 1, 33..37): bin 33 spans keys kShortEscKey and 33.
  int64_t bin_begin(int bin) const { return begin(bin == kFirstEscBin ? kShortEscKey : bin); }
  int64_t bin_end(int bin) const { return end(bin); }
};
BinnedRows bin_rows(const int64_t* bound, const int64_t* a_row_ptr, int64_t r0, int64_t r1, uint8_t* bin,
                    int64_t* count, const GpuContext& context, const ReadAlong& along = {});

// ---- Stage 3. Every kernel takes the rows rows[begin, end) (relative to r0) of one bin or bin
// range, writes row i's sorted, duplicate-free entries at C~ offset cap_scan[i] - cap_scan[r0] and
// their number at count[i].
// bound: every row's u (stage 1), the products its kernel meets; its room in C~ may be less
// (bins.hpp, row_capacity).
struct Temporary {
  int64_t r0 = 0;
  const int64_t* cap_scan = nullptr;
  const int64_t* bound = nullptr;
  int32_t* cols = nullptr;
  void* vals = nullptr;
};

// Heap method (bins 2..32): one thread per row; heap_capacity in {4, 8, 16, 32} >= the nodes the
// rows' heaps need (bins.hpp). queue_in_registers: heaps of up to 8 nodes as a queue in registers
// scanned linearly instead of a heap in shared memory (the same bits).
template <typename V>
void heap_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
               int heap_capacity, bool queue_in_registers, const Temporary& t, int64_t* count,
               const GpuContext& context);

// Rows of u <= max_bound sorted in registers, one thread per row (register_sort.cu): the heap's
// rows (bins 2..32) and those of bin 33 of u <= kShortEscBound (sort key kShortEscKey). max_bound:
// 8, 16, 32 or 64 (the keys sorted). The bits of the heap and of the ESC sort. B has at most
// kRegisterSortMaxColumns columns (32-bit keys).
constexpr int64_t kRegisterSortMaxColumns = (int64_t(1) << 26) - 1;
template <typename V>
void register_sort_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                        int64_t end, int max_bound, const Temporary& t, int64_t* count, const GpuContext& context);

// Short rows (bins 2..32) in registers (short_rows.cu): a group of `lanes` (8, 16, 32) >= the rows'
// u per row sorts its products with shuffles; rows[begin, end) is one u-range of one heap class.
template <typename V>
void short_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
                int lanes, const Temporary& t, int64_t* count, const GpuContext& context);

// Rows of u <= kWarpEscMaxBound (bins 33, 34, or heap bins) by ESC with one warp per row
// (middle_rows.cu): each lane gathers its own products, the warp sorts 32, 64, 128 or 256 keys in
// registers; the bits of esc_rows. Rows of a larger u are passed over (esc_rows with skip_up_to
// takes them). listed (optional, device): as for esc_rows.
template <typename V>
void middle_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                 int64_t end, const Temporary& t, int64_t* count, const GpuContext& context,
                 const int32_t* listed = nullptr);

// Bitonic ESC (bins 33..36): one block per row, the sort in shared memory. listed (optional, device):
// only rows[begin, begin + *listed) are taken (the rows the accumulators left; end - begin blocks
// are launched, the surplus ones return at once: no read back). Rows of u <= skip_up_to are passed
// over (middle_rows took them).
template <typename V>
void esc_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
              int bin, const Temporary& t, int64_t* count, const GpuContext& context, const int32_t* listed = nullptr,
              int64_t skip_up_to = 0);

// Shared-memory accumulators for ESC rows (bins 34..36, accumulators.cu): one warp per row of
// rows[begin, end); a row whose columns span at most dense_window_columns (and modes.dense) goes to
// a dense window, else one with u <= kHashSlots (and modes.hash) to a hash table when the bin's
// probe (a launch over its first rows) showed compression in the tally (products probed, distinct
// columns: two counters); the others are appended to rest (in no particular order) for esc_rows.
// paths[0..2] += rows dense, hashed, left (paths[2] is the length of rest). The caller zeroes
// paths and tally first. B's rows must not repeat a column.
struct AccumulatorModes {
  bool dense = true, hash = true;
  int min_row_of_b = 16;    // products per entry of A a row needs (BinnedSpgemmOptions)
  int min_compression = 4;  // products per distinct column the bin's probe needs for hashing
};
template <typename V>
void accumulate_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                     int64_t end, const Temporary& t, int64_t* count, const AccumulatorModes& modes, int32_t* rest,
                     int32_t* paths, unsigned long long* tally, const GpuContext& context);

// Merge path (bin 37): states for rows[begin, end), their first regions carved from C~.
template <typename V>
void init_merge_rows(const DeviceCsrView<V>& a, const int64_t* bound, const int32_t* rows, int64_t begin,
                     int64_t end, const Temporary& t, MergeRow<V>* states, int32_t* list, const GpuContext& context);
// One round over the states list[0..n): each row runs until done or until its next batch does not
// fit its region (checkpoint: its index is appended to overflow[*overflow_count], which the caller
// zeroes before the round's first kernel). Rows already done or waiting are skipped. b_unique: no
// repeated column within a row of B (then narrow rows may use the dense window).
template <typename V>
void merge_round(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, MergeRow<V>* states, const int32_t* list,
                 int64_t n, int32_t* overflow, int32_t* overflow_count, int64_t* count, bool b_unique,
                 const GpuContext& context);
// Global dense windows (dense_window.cu), for fresh merge rows whose columns span more than the
// merge kernel's shared window but at most `window` columns, with rows of B of 8 products or more on
// average, when B's rows have no repeats: each block of a persistent grid owns a window of `window`
// columns in global memory (flags and values, zero between rows) and accumulates its rows there,
// one row of B after the other (the canonical fold), then compacts them into their regions; a row
// whose result does not fit its region is reset, marked waiting and appended to the overflow list
// with needed = its length. Run before merge_round in each round.
template <typename V>
struct WindowScratch {
  int64_t window = 0;  // columns per block (a multiple of 4096); 0: no global windows
  int64_t blocks = 0;
  DeviceBuffer flags;  // uint8, blocks * window, zero
  DeviceBuffer vals;   // V, blocks * window, zero
};
template <typename V>
WindowScratch<V> make_window_scratch(int64_t merge_rows, int64_t cols, const GpuContext& context);
template <typename V>
void window_round(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, MergeRow<V>* states, const int32_t* list,
                  int64_t n, int32_t* overflow, int32_t* overflow_count, int64_t* count, WindowScratch<V>& scratch,
                  const GpuContext& context);

// Dense accumulators in shared memory, one block per row (block_dense.cu): the row's products are
// added into an accumulator spanning B's columns (passes of pass_width columns when they do not
// fit), the columns it touches marked in a bitmap of all of B's columns, then compacted in order.
// Needs B without repeated columns in a row. block_dense_shape: the shape for B's column count
// within shared_bytes of shared memory per block and at most max_passes passes; pass_width 0 when
// none fits (the caller keeps the ESC sort and the merge path).
struct BlockDenseShape {
  int32_t pass_width = 0;
  int32_t passes = 0;
  size_t shared_bytes = 0;  // dynamic shared memory per block
  // A chunk of 256 entries of a row of A of at least stream_min_entries entries, most of whose rows
  // of B are short and none stream_long_row_of_b or longer, is added by one warp (block_dense.cuh).
  int64_t stream_min_entries = 1024;
  int32_t stream_long_row_of_b = 64;
  explicit operator bool() const { return pass_width > 0; }
};
template <typename V>
BlockDenseShape block_dense_shape(int64_t b_cols, size_t shared_bytes, int max_passes);
// ESC rows (room for u entries in C~): rows[begin, end), or rows[begin, begin + *listed) when listed
// (device count, as esc_rows).
template <typename V>
void block_dense_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                      int64_t end, const Temporary& t, int64_t* count, const BlockDenseShape& shape,
                      const GpuContext& context, const int32_t* listed = nullptr);
// Merge rows, in place of window_round: each fresh row of list[0..n) is counted first (a symbolic
// pass over its bits) unless its exact length is known; a row that does not fit its region is
// marked waiting, needed = its exact length, and appended to the overflow list; the others are
// computed and done.
template <typename V>
void block_dense_round(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, MergeRow<V>* states, const int32_t* list,
                       int64_t n, int32_t* overflow, int32_t* overflow_count, int64_t* count,
                       const BlockDenseShape& shape, const GpuContext& context);

// Grows the regions of the n overflowed rows (2x, at least what they need, at most u) into a new
// arena and moves their results there. Returns the arena (one read back of its size).
struct Arena {
  DeviceBuffer cols, vals;
};
template <typename V>
Arena grow_merge_rows(MergeRow<V>* states, const int32_t* overflow, int64_t n, const GpuContext& context);

// ---- Stage 4: out[0..n] = exclusive scan of the counts (n + 1 entries).
void exclusive_scan_counts(const int64_t* count, int64_t* out, int64_t n, const GpuContext& context);

// Rows [r0, r1) into the exact arrays cols/vals (piece_nnz entries) at offsets piece_ptr[i - r0]
// (the exclusive scan of count over the panel). Bin-1 rows are computed here.
template <typename V>
void arrange(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const uint8_t* bin, const Temporary& t, int64_t r1,
             const int64_t* piece_ptr, int64_t piece_nnz, const MergeRow<V>* states, int64_t merge_rows, int32_t* cols,
             V* vals, const GpuContext& context);

// ---- Numeric-only: values of C for the pattern (row_ptr, cols) of A * B; where C's rows average at
// most 8 entries, short rows a thread each (short_rows_in_threads; false: every row to the warps),
// the others a warp each.
template <typename V>
void numeric_values(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int64_t* c_row_ptr,
                    const int32_t* c_cols, int64_t c_nnz, V* c_vals, const GpuContext& context,
                    bool short_rows_in_threads = true);

}  // namespace sparsetc::detail::binned
