// SpMM on CUDA cores: C = alpha * A * B + beta * C with A sparse, B and C dense (row- or
// column-major, any leading dimension, any N). Paper: ../shared/papers/dcsr-near-memory-spmm.txt.
//
//  - C-stationary (row_spmm): A as CSR, or as DCSR (only its non-empty rows are scheduled). A group
//    of lanes owns a tile of C's columns (a lane per 16 bytes of a row of B) and either a stream of
//    consecutive short rows (the next entries prefetched while B's rows arrive) or one row with
//    lanes across its entries (shuffle-reduced at the end). Rows too long for a group
//    go to a whole warp, and very long rows to CTAs of 4 warps (reduced in shared memory; a row
//    longer than one CTA's share is combined by the last of its CTAs, in a fixed order). One
//    launch per multiply, and the result is deterministic: the same bits on every run.
//  - B-stationary (tiled_spmm): A as tiled DCSR over vertical strips. A CTA holds the strip's tile
//    of B in shared memory and adds its rows' partial sums into C with atomics; CTAs walk the
//    strips of one column tile of C before the next (the paper's column-major traversal: C's tile
//    stays in L2). C is first scaled by beta by a small prior kernel (two launches). NOT bitwise
//    deterministic: the order of the atomic additions varies between runs.
//
// Precisions (A and B storage -> accumulation -> C):
//   f32  : f32 -> f32 -> f32 (exact fp32)
//   f64  : f64 -> f64 -> f64
//   f16  : f16 -> f32 -> f32 or f16
//   bf16 : bf16 -> f32 -> f32 or bf16
// Half-precision C is only written by the C-stationary kernels (atomics would round every partial).
//
// This header is included from .cpp files: it must not include CUDA device headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

enum class CorePrecision { f32, f64, f16, bf16 };

size_t core_value_bytes(CorePrecision precision);        // storage of A's and B's values
size_t core_accumulator_bytes(CorePrecision precision);  // 4, or 8 for f64
sparsetc_value_type_t core_value_type(CorePrecision precision);
// C types a precision writes: f32 -> f32; f64 -> f64; f16 -> f32 or f16; bf16 -> f32 or bf16.
bool core_supports_output(CorePrecision precision, sparsetc_value_type_t c_type);

// How C's columns are cut: each lane owns `vec` consecutive columns (16 bytes of B unless asked
// otherwise), 2^lanes_n_log lanes cover a tile of tile_width columns, tiles tiles cover N.
struct CoreColumnTiling {
  int vec = 4;
  int lanes_n_log = 0;
  int64_t tile_width = 4;
  int64_t tiles = 0;
};
// vec = 0: 16 bytes of B per lane. max_lanes (a power of two, 1-32) caps the lanes of a tile, so
// a narrower tile can be asked for (more tiles).
CoreColumnTiling core_column_tiling(CorePrecision precision, int64_t n, int vec = 0, int max_lanes = 32);

// Dense operands of one multiply (device memory). B holds values of the precision's storage type.
struct CoreDenseArgs {
  int64_t n = 0;  // columns of B and C
  const void* B = nullptr;
  sparsetc_order_t b_order = SPARSETC_ORDER_ROW;
  int64_t ldb = 0;
  void* C = nullptr;
  sparsetc_value_type_t c_type = SPARSETC_VALUE_F32;
  sparsetc_order_t c_order = SPARSETC_ORDER_ROW;
  int64_t ldc = 0;
  double alpha = 1.0, beta = 0.0;  // beta == 0: C is only written (NaN/Inf already in C do not propagate)
};

// ---- C-stationary: CSR or DCSR.

// A's rows as the kernels read them. CSR: units = rows, row_idx = nullptr. DCSR: units = the
// non-empty rows, row_idx their row numbers. Values in the precision's storage type.
struct CoreRows {
  int64_t rows = 0, cols = 0, units = 0, nnz = 0;
  const int64_t* row_idx = nullptr;  // units (DCSR) or nullptr (CSR)
  const int64_t* row_ptr = nullptr;  // units + 1
  const int32_t* col_idx = nullptr;  // nnz
  const void* values = nullptr;      // nnz
};

// Plan-time choices of make_row_schedule; the defaults decide from A's shape and N (row_rule).
struct RowScheduleOptions {
  int short_rows = -1;          // -1: choose; 0: groups (lanes across one row's entries); 1: streams
  int lanes_k_log = -1;         // groups: log2 of the lanes across a row's entries (-1: from lane_entries)
  int64_t rows_per_stream = 0;  // streams: rows each stream owns (0: from stream_entries)
  int lane_columns = 0;         // f32, f16, bf16: columns per lane, 4 or 8 (0: choose from N); f64: 2
  int64_t stream_entries = 0;   // streams: entries a stream aims at (0: the rule's)
  int64_t lane_entries = 0;     // groups: entries a lane aims at on a row of mean length (0: the rule's)
  int tile_lanes = 0;           // lanes across a column tile, a power of two up to 32 (0: choose)
};

// The default short-row schedule for a width N (measured on the H200, docs/performance.md): rows
// averaging at least group_from_mean entries go to groups whose lanes take about lane_entries of a
// row each, shorter ones to streams of about stream_entries entries.
struct RowRule {
  double group_from_mean = 0;
  int64_t stream_entries = 0;
  int64_t lane_entries = 0;
};
RowRule row_rule(CorePrecision precision, int64_t n);

// Columns per lane of the C-stationary kernel: `requested` (4 or 8; f64 only 2), or 0 to choose:
// f64 2; f32, f16 and bf16 8 from N = 32 on (16-byte loads of half precision, two of fp32), else 4
// (narrow N: more lanes per row).
int row_lane_columns(CorePrecision precision, int64_t n, int requested = 0);

// The work decomposition for one A and one N, built once (a plan keeps it).
struct RowSchedule {
  CoreColumnTiling tiling;
  int64_t rows_per_stream = 0;  // > 0: short rows as streams of this many rows, interleaved across
                                // the streams of a warp (lanes_k_log = 0)
  int lanes_k_log = 0;      // short rows as groups of 2^(lanes_n_log + lanes_k_log) lanes
  int64_t row_limit = 0;    // longest row a stream or group takes
  int64_t warp_limit = 0;   // longest row one warp takes (grows with the work); longer: CTA chunks
  int64_t medium_rows = 0;  // rows for one warp each
  int64_t long_rows = 0, chunks = 0, partial_chunks = 0;
  int64_t fill_rows = 0;    // DCSR: the empty rows (written with beta * C only)
  DeviceBuffer medium_unit;  // int64, medium_rows
  DeviceBuffer long_unit;    // int64, long_rows
  DeviceBuffer chunk_ptr;    // int64, long_rows + 1: each long row's CTA chunks
  DeviceBuffer partial_ptr;  // int64, long_rows + 1: its partial sums (rows of 2+ chunks)
  DeviceBuffer counters;     // int32, long_rows * tiles, zero between multiplies
  DeviceBuffer fill_row;     // int64, fill_rows
  size_t workspace_bytes = 0;  // partial sums of rows of 2+ chunks
  std::string note;            // the column tiles' width and why, where it was weighed (else empty)
  size_t device_bytes() const {
    return medium_unit.size() + long_unit.size() + chunk_ptr.size() + partial_ptr.size() + counters.size() +
           fill_row.size();
  }
};

// csr_row_ptr: for a DCSR, the row offsets of the CSR it came from (rows + 1), to list the empty
// rows; nullptr for a CSR. Reads back a few counts (synchronisation points).
RowSchedule make_row_schedule(const CoreRows& a, CorePrecision precision, int64_t n, const int64_t* csr_row_ptr,
                              const GpuContext& context, const RowScheduleOptions& options = {});

// Every element of C is written. workspace: schedule.workspace_bytes (may be null when 0).
// Executions with one schedule are ordered on one stream (its counters are shared). No sync.
void row_spmm(const CoreRows& a, CorePrecision precision, RowSchedule& schedule, const CoreDenseArgs& args,
              void* workspace, cudaStream_t stream);

// Copies of B and C for the row kernel, whose lanes read and write 16 bytes of a row at once (in
// column-major storage, one element per 32-byte sector; in rows off 16-byte boundaries, element by
// element). No sync.
// B (k x n, leading dimension ldb, elements of element_bytes = 2, 4 or 8) copied row-major into
// out (leading dimension ld_out >= n; columns past n are not written).
void copy_b_row_major(const void* b, int64_t ldb, int64_t k, int64_t n, int element_bytes, void* out,
                      int64_t ld_out, cudaStream_t stream);
// A row-major B whose rows are not 16-byte aligned (pointer or leading dimension) copied row-major
// into out, whose rows are (leading dimension ld_out >= n): the kernel's vector loads then apply.
void copy_b_aligned(const void* b, int64_t ldb, int64_t k, int64_t n, int element_bytes, void* out, int64_t ld_out,
                    cudaStream_t stream);
// C (m x n, c_order, leading dimension ldc, of c_type) = t + beta * C, where t is the row kernel's
// result alpha * op(A) B written row-major (leading dimension ld_t, 16-byte aligned rows) in its
// sums' type (double where double_sums, else float): one rounding to C's type. C is not read where
// beta = 0.
void add_c(const void* t, int64_t ld_t, bool double_sums, int64_t m, int64_t n, double beta, void* c,
           sparsetc_value_type_t c_type, sparsetc_order_t c_order, int64_t ldc, cudaStream_t stream);

// ---- B-stationary: tiled DCSR.

// Strip width (rows of the B tile) for a precision and N: the B tile fills about 32 KB.
int64_t tiled_strip_width(CorePrecision precision, int64_t n);

struct CoreTiled {
  int64_t rows = 0, cols = 0, strip_width = 0, strips = 0, segments = 0, nnz = 0;
  const int64_t* strip_ptr = nullptr;  // strips + 1
  const int32_t* row_idx = nullptr;    // segments
  const int64_t* row_ptr = nullptr;    // segments + 1
  const int32_t* col_idx = nullptr;    // nnz
  const void* values = nullptr;        // nnz
};

struct TiledSchedule {
  CoreColumnTiling tiling;
  int lanes_k_log = 0;
  int64_t budget = 0;    // segments + entries per CTA
  int64_t items = 0;     // CTAs per column tile
  DeviceBuffer item_ptr;  // int64, strips + 1: each strip's first CTA
  size_t device_bytes() const { return item_ptr.size(); }
};

// Reads back the CTA count (one synchronisation point).
TiledSchedule make_tiled_schedule(const CoreTiled& a, CorePrecision precision, int64_t n, const GpuContext& context);

// Every element of C is written (scaled by beta first, then the products added). Throws
// NOT_SUPPORTED for half-precision C. No sync.
void tiled_spmm(const CoreTiled& a, CorePrecision precision, const TiledSchedule& schedule,
                const CoreDenseArgs& args, cudaStream_t stream);

// ---- B-stationary from CSC: the paper's near-memory CSC -> DCSR conversion (§4.2, Fig. 13) done
// in software. A stays in CSC; each CTA takes a window (a strip of columns x a range of rows),
// finds each column's frontier in the window, builds the window's DCSR in shared memory from the
// frontiers, then multiplies it as tiled_spmm does. No tiled copy of A is kept: beside the CSC the
// plan holds 16 bytes per window.

// A in canonical CSC (rows increasing within a column), values in the precision's storage type.
struct CoreCsc {
  int64_t rows = 0, cols = 0, nnz = 0;
  const int64_t* col_ptr = nullptr;  // cols + 1
  const int32_t* row_idx = nullptr;  // nnz
  const void* values = nullptr;      // nnz
};

// Rows of a window: the kernel counts them in a shared array of this size.
inline constexpr int64_t kCscWindowRows = 1024;
// Most entries of a window (the kernel's shared entry buffer); >= the widest strip, so a row's
// part of a strip always fits.
int64_t csc_window_capacity(CorePrecision precision);

struct CscWindow {
  int32_t strip, row_begin, row_end, entries;  // rows [row_begin, row_end) of strip `strip`
};

struct CscTiledSchedule {
  CoreColumnTiling tiling;
  int64_t strip_width = 0;
  int lanes_k_log = 0;
  int64_t windows = 0;  // CTAs per column tile
  int64_t segments = 0;  // non-empty (row, strip) pairs: the tiled DCSR's row segments
  DeviceBuffer window;   // CscWindow, windows (strip-major, rows increasing)
  size_t device_bytes() const { return window.size(); }
};

// Cuts each strip's rows into windows of at most csc_window_capacity entries and kCscWindowRows
// rows. Reads the pattern back to the host (a synchronisation point, O(nnz) host work): plan time.
CscTiledSchedule make_csc_tiled_schedule(const CoreCsc& a, CorePrecision precision, int64_t n,
                                         const GpuContext& context);

// As tiled_spmm (C scaled by beta, then partial sums added with atomics; C in the accumulator's
// type; not bitwise deterministic). No sync.
void csc_tiled_spmm(const CoreCsc& a, CorePrecision precision, const CscTiledSchedule& schedule,
                    const CoreDenseArgs& args, cudaStream_t stream);

}  // namespace sparsetc::detail
