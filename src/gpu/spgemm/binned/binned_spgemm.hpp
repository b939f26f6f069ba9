// The binned merge-path SpGEMM on the GPU (Liu & Vinter, "A framework for general sparse
// matrix-matrix multiplication on GPUs and heterogeneous processors", JPDC 2015), every stage on
// the device: (1) per-row upper bound, (2) binning into 38 bins, (3) heap / bitonic ESC / merge
// path per bin, the merge rows growing progressively, (4) arrangement into the exact CSR. When the
// temporary matrix C~ would exceed the memory budget, rows are processed in panels (consecutive row
// ranges) whose pieces are concatenated. docs/spgemm.md describes the pipeline and its numbers.
//
// Host synchronisation points, all documented read-backs of sizes: the product count (stage 1) with
// the bin offsets of all rows (stage 2) and the operands' pending order checks, the panel
// boundaries and per panel its bin offsets when there are several panels, the overflow count of
// each merge round (and the new arena's size when rows grew), and the panel's entry count.
//
// This header is included from .cpp files: no device code.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "formats/raw.hpp"
#include "gpu/convert/device_csr.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/side_stream.hpp"
#include "gpu/spgemm/binned/bins.hpp"
#include "gpu/spgemm/binned/kernels.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

struct BinnedSpgemmOptions {
  // Bytes the temporary matrix C~ of one panel may take; 0: half of the device memory free when
  // the plan is made. Never too small: a panel always takes at least a few rows.
  size_t memory_budget = 0;
  // Room of a merge row in C~ before it grows (<= binned::kMergeInitialCapacity); tests lower it
  // to exercise the checkpoint-and-grow rounds.
  int64_t merge_initial_capacity = binned::kMergeInitialCapacity;
  // Time the stages with events (one more synchronisation per panel): BinnedSpgemmStats::stage_ms.
  bool time_stages = false;
  // B has no repeated column within a row (canonical CSR): merge rows with a narrow column window may
  // then accumulate in a dense window. prepare_operand reports it.
  bool b_rows_unique = true;
  // Merge rows with a wide column window may accumulate in a dense window in global memory
  // (dense_window.cu); false: the merge path for all of them.
  bool global_windows = true;
  // ESC rows (bins 34..36) may accumulate in a dense window or a hash table in shared memory
  // (accumulators.cu, bins.hpp) when b_rows_unique; false: the ESC sort for them. The same bits
  // either way.
  // (A bin hashes after its first rows show compression, accumulators.cu: H200, fp32, with / without
  // hash tables: poisson3d27:64 4.75 / 11.69 ms; hashing whichever rows came first cost wiki-Vote
  // 0.596 / 0.543.)
  bool esc_dense_windows = true;
  bool esc_hash_tables = true;
  // Which rows the accumulators take: rows averaging at least accumulator_min_row_of_b products per
  // entry of A (0: all; a warp walks a row of B a step, a load latency each, so rows meeting many
  // short rows of B are cheaper in the ESC sort), hashing when the bin's probe folds at least
  // accumulator_min_compression products to a column (H200, fp32, hashing from 2:1 against none:
  // wiki-Vote, 2.5:1 overall, 1.40 / 1.08 ms; ca-AstroPh, 2.8:1, 3.46 / 3.30; cage11, 2.3:1,
  // 0.65 / 0.59; poisson3d27:64, 5.8:1, 4.83 / 11.6); from bin accumulator_first_bin (34, or 33
  // for the rows of u = 33..128).
  int accumulator_min_row_of_b = binned::AccumulatorModes{}.min_row_of_b;  // 16
  int accumulator_min_compression = binned::AccumulatorModes{}.min_compression;  // 4
  int accumulator_first_bin = binned::kFirstAccumulatorBin;
  // Rows of u <= 32 (bins 2..32), per heap class and u range (u <= 8, 16, 32): a range of n rows
  // with n * lanes <= 32 * short_group_warps goes to groups, 8 or 16 lanes per row in registers
  // (short_rows.cu) for u <= 16, a warp per row (middle_rows.cu) above; larger ranges to the paper's
  // heap, a thread per row (heap.cu). 0: the heap for all. The same bits every way; docs/spgemm.md
  // gives the measurements (H200: groups win while the rows fill the GPU a few times at most).
  int64_t short_group_warps = 32768;
  // Heap rows whose heap needs more than this many nodes (rows of A with over 16 entries meeting
  // rows of B of one or two) go to the warp kernel whatever their number: a heap of 32 nodes
  // leaves room for 64 threads per block and 14% occupancy (H200, fp32, AP of the Galerkin product:
  // heap 285 us, docs/spgemm.md has the warp's time). 32: the heap keeps them. Only where the heap
  // takes the rows (heap_rows_sorted off): the register sort has no nodes.
  int heap_largest_capacity = 16;
  // Heaps of up to 8 nodes as a queue in registers (heap.cu): the shared-memory heaps leave the L1
  // too little room to cache the rows of B that neighbouring rows share. false: the shared heap.
  bool heap_queue_in_registers = true;
  // The heap's rows sorted in registers instead, a thread per row, the products first copied to
  // shared memory (register_sort.cu): no chain of dependent loads. Needs B of at most
  // binned::kRegisterSortMaxColumns columns (else the heap). The same bits.
  bool heap_rows_sorted = true;
  // Force every row of u <= 32 into the register groups (8, 16, 32 lanes) or into a warp each.
  bool short_rows_in_registers = false;
  bool short_rows_in_warps = false;
  // Rows of bins >= block_dense_first_bin (35..37) in a dense accumulator in shared memory, one
  // block per row (block_dense.cu), when B's rows have no repeated column and B's columns fit
  // block_dense_bytes of shared memory per block in at most block_dense_passes passes: the ESC rows
  // the warp accumulators leave, instead of the ESC sort, and the merge rows, instead of the
  // global windows and the merge path. false: the paper's kernels. The same bits either way.
  bool block_dense = true;
  int block_dense_first_bin = binned::kFirstEscBin + 2;
  size_t block_dense_bytes = size_t(100) << 10;
  int block_dense_passes = 8;
  // (B's columns that need several passes in block_dense_bytes get them: one pass in up to 200 KB,
  // a block per SM, lost once the compaction took full words a lane per bit, H200, fp32: bloweya
  // 6.0 against 5.1 ms; cage11, rgg, delaunay_n15, vt2010, de2010 within the runs' spread.)
  // Chunks of rows of A of at least this many entries over mostly short rows of B (and none of
  // block_dense_stream_long_row_of_b or more) are added by one warp without barriers
  // (BlockDenseShape).
  int64_t block_dense_stream_min_entries = 1024;
  int32_t block_dense_stream_long_row_of_b = 64;
  // Rows of bin 33 (u = 33..128): ESC with one warp per row, eight rows a block (middle_rows.cu),
  // instead of one 32-thread block per row (esc.cu). The same bits either way.
  bool middle_rows_in_warps = true;
  // Of those, the rows of u <= 64 sorted in registers a thread per row (register_sort.cu) when the
  // bin has more than middle_rows_sorted_from of them (a warp per row is quicker where the rows fill
  // the GPU a few times at most); needs B of at most binned::kRegisterSortMaxColumns columns. The
  // same bits.
  bool middle_rows_sorted = true;
  int64_t middle_rows_sorted_from = 32768;
  // Rows of bin 34 (u = 129..512) that the accumulators leave: those of u <= 256 by ESC with one
  // warp per row too (256 keys in registers), the others a block per row.
  bool wide_rows_in_warps = true;
  // The merge rows (bin 37) on a second stream beside the other bins, joined before the
  // arrangement (not with time_stages, whose stage times need the stages in turn). The same bits.
  bool overlap_merge_rows = true;
};

enum BinnedStage { kStageBinning, kStageHeap, kStageEsc, kStageMerge, kStageArrange, kStages };

struct BinnedSpgemmStats {
  int64_t products = 0;           // sum of the upper bounds: the multiplications done
  int64_t temporary_entries = 0;  // C~ room of all rows at the start
  int64_t panels = 0;             // row panels of the last multiply
  int64_t grow_rounds = 0;        // merge relaunches after checkpoints (all panels)
  int64_t grown_rows = 0;         // checkpoints taken (a row may grow several times)
  std::array<int64_t, binned::kBins> bin_rows{};  // rows per bin
  std::array<double, kStages> stage_ms{};         // with options.time_stages: milliseconds per stage
  // With options.time_stages: rows of the accumulator bins (34..36, or from accumulator_first_bin)
  // done in a dense window, a hash table, and left to the ESC sort or the block dense accumulator.
  std::array<int64_t, 3> esc_paths{};
  // Passes over B's columns of the block dense accumulator; 0: not used (options, or B too wide).
  int64_t block_dense_passes = 0;
};

namespace binned {

// The row order of a CSR operand: rows sorted, and free of repeated columns.
struct RowOrder {
  bool sorted = true, unique = true;
};
// An operand's order check still on the device (prepare_operand with `pending`): descents and
// repeats of neighbouring entries over all entries, then over the pairs that straddle two rows
// (int64 each). BinnedSpgemm reads them back with stage 2, one synchronisation fewer per product.
constexpr int kRowOrderCounters = 4;
struct PendingRowOrder {
  DeviceBuffer counters;
};
RowOrder row_order_of(const int64_t (&counters)[kRowOrderCounters]);

}  // namespace binned

template <typename V>
class BinnedSpgemm {
 public:
  // Stage 1 and the panel plan for C = A * B (A m x k, B k x n, canonical device CSR with sorted
  // rows; the arrays must outlive this object). Reads back the product count and panel bounds.
  // With a_order / b_order (order checks of operands read in place, not yet known sorted), those
  // come back too, in row_order(): where an operand turns out unsorted, or B repeats a column
  // within a row, this object is void (stage 1 assumed sorted rows without repeats) and the
  // caller settles the operand and makes another.
  BinnedSpgemm(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const BinnedSpgemmOptions& options,
               const GpuContext& context, const binned::PendingRowOrder* a_order = nullptr,
               const binned::PendingRowOrder* b_order = nullptr);
  // The order of A (operand 0) or B (1) as checked with stage 2; sorted and unique when not asked.
  binned::RowOrder row_order(int operand) const { return orders_[size_t(operand)]; }
  // False when that check found A or B unsorted, or a row of B repeating a column.
  bool usable() const { return orders_[0].sorted && orders_[1].sorted && orders_[1].unique; }

  int64_t products() const { return stats_.products; }
  // Working memory of one multiply: C~ of the largest panel, the per-row arrays, the bin lists.
  size_t memory_estimate() const;
  // Stages 2-4: the exact C (sorted, duplicate-free rows; explicit zeros kept).
  DeviceCsr<V> multiply();
  const BinnedSpgemmStats& stats() const { return stats_; }

 private:
  DeviceCsrView<V> a_, b_;
  BinnedSpgemmOptions options_;
  GpuContext context_;
  DeviceBuffer bound_, cap_scan_;  // int64 m, int64 m + 1
  DeviceBuffer bin_, count_;       // uint8 m, int64 m: each row's bin and entry count (bins 0, 1: from stage 2)
  std::optional<binned::BinnedRows> all_rows_;  // stage 2 of the constructor, when one panel takes all rows
  binned::BlockDenseShape dense_shape_;         // the block dense accumulator for B; empty: not used
  std::vector<int64_t> panel_rows_, panel_caps_;  // boundaries (rows, and C~ prefix there)
  BinnedSpgemmStats stats_;
  SideStream side_;  // for the merge rows (options.overlap_merge_rows)
  std::array<binned::RowOrder, 2> orders_{};
};

// Numeric-only: values of C = A * B for C's pattern (c.values ignored) into `values` (c.nnz),
// bit-identical to BinnedSpgemm::multiply's for the same operands. No synchronisation.
// short_rows_in_threads: rows of few products on few entries of C a thread each (numeric.cu);
// false: a warp for every row (tests compare the two).
template <typename V>
void binned_numeric(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const DeviceCsrView<V>& c, V* values,
                    const GpuContext& context, bool short_rows_in_threads = true);

namespace binned {

// A device matrix (any format, index widths, base, value type) to the canonical device CSR of
// op(M) with sorted rows (one read back of flags for CSR input). *rows_unique (optional): whether
// no row repeats a column (CSR input may, under a relaxed validation level). With `pending`, a
// CSR read in place (zero-based, int32 indices, values of type V, not transposed) comes back as it
// is, its order check left in *pending for BinnedSpgemm to read along (no read back here; *rows_unique
// untouched): settle_row_order then sorts it if it was not.
template <typename V>
DeviceCsr<V> prepare_operand(const RawSparse& raw, sparsetc_duplicates_t duplicates, bool transpose,
                             const GpuContext& context, bool* rows_unique = nullptr,
                             PendingRowOrder* pending = nullptr);
// Sorts the rows of an operand whose check found them unsorted; returns whether its rows are free
// of repeated columns.
template <typename V>
bool settle_row_order(DeviceCsr<V>& csr, RowOrder order, const GpuContext& context);

// C without the entries with |c| <= tolerance (NaN kept); one read back of the kept count.
template <typename V>
DeviceCsr<V> drop_small(const DeviceCsrView<V>& c, double tolerance, const GpuContext& context);

// Row offsets (rows + 1, int64 in) as `type` plus base; column indices plus base.
DeviceBuffer export_offsets(const int64_t* row_ptr, int64_t rows, sparsetc_index_type_t type, int base,
                            const GpuContext& context);
DeviceBuffer export_indices(const int32_t* cols, int64_t nnz, int base, const GpuContext& context);

}  // namespace binned
}  // namespace sparsetc::detail
