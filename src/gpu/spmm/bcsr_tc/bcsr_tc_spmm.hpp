// SpMM on tensor cores over BCSR: C = alpha * A * B + beta * C with A sparse (BCSR in the block
// shape of the MMA instruction), B and C dense (row- or column-major, any leading dimension), any
// M, K, N. Paper: ../shared/papers/smat-bcsr-spmm-tensor-cores.txt, done right (fp32 accumulation,
// multi-stage cp.async pipeline, several warps sharing each A block, tails, load balancing).
//
// Precisions (input storage -> accumulation):
//   f16  : A, B fp16, mma.sync m16n8k16 with fp32 accumulation; C fp32 or fp16
//   bf16 : A, B bf16, mma.sync m16n8k16 with fp32 accumulation; C fp32 or bf16
//   tf32 : A, B fp32 rounded to tf32 (reduced precision, ~10 mantissa bits), m16n8k8, C fp32
//   f64  : A, B fp64 on the fp64 tensor cores, m8n8k4, C fp64 (full double precision)
// Results are deterministic: the same bits on every run (no floating-point atomics).
//
// This header is included from .cpp files: it must not include CUDA device headers.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/convert/device_csr.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

enum class TcPrecision { f16, bf16, tf32, f64 };

// The A block (rows x cols) the kernels of a precision consume.
struct TcBlockShape {
  int height = 0, width = 0;
};
TcBlockShape tc_block_shape(TcPrecision precision);

// Work items over the panels (tc_schedule.hpp): a panel longer than the list's chunk length is split
// into items of about equal entry counts, combined in a fixed order (deterministic). Split items come
// first.
struct TcWorkList {
  DeviceBuffer items;        // TcWorkItem x work_items
  int64_t work_items = 0;    // >= panels: every panel has one
  int64_t split_items = 0;   // items of split panels
  int64_t split_panels = 0;  // panels split into several items
};

// A prepared once for the kernels (a plan keeps it and runs many multiplies with it).
struct TcBcsrOperand {
  TcPrecision precision = TcPrecision::f16;
  int64_t rows = 0, cols = 0, nnz = 0;  // of A as multiplied
  TcBlockShape shape;
  int64_t blocks = 0;
  int64_t block_rows = 0;
  int64_t max_blocks_per_row = 0;  // longest block row (load balance)
  DeviceBuffer block_row_ptr;      // int64, block_rows + 1
  DeviceBuffer block_col;          // int32, blocks, increasing within a block row
  // blocks * height * width in the precision's storage type (f16/bf16: uint16 bits, tf32: fp32 already
  // rounded to tf32, f64: double), each block row-major. Block order is the kernels' (tc_schedule.hpp):
  // panel by panel, within a panel by block column, then by block row; not block_col's order.
  DeviceBuffer values;
  // An entry is one block column of a panel (the B slab its blocks share): TcEntry x entries, panel by
  // panel. A panel is panel_block_rows consecutive block rows (the kernels' M tile).
  DeviceBuffer entry_list;
  int panel_block_rows = 0;
  int64_t panels = 0;
  int64_t entries = 0;  // distinct (panel, block column) pairs
  // The panels' own work items: only panels of more than twice the mean entries are split.
  TcWorkList panel_items;
  // Spread work items for grids the panels' own leave short of the device (few, long panels: a
  // matrix of 8192 rows has 64 panels for 132 SMs): every panel split into chunks, the longest as
  // short as a list of at most SMs x resident CTAs items allows (at least kMinSpreadChunkEntries,
  // tc_operand.cu). narrow_items for the narrow tiles (N <= 32, two CTAs per SM), wide_items for the
  // wide tiles with one N tile (one CTA per SM). Empty (no items) where the panels' own items reach
  // that many; tc_work_list picks the list.
  TcWorkList narrow_items;
  TcWorkList wide_items;
  int sm_count = 0;  // of the device the operand was built on
  // Where the warp-specialized kernel's CTAs loop over the panels' own work items (one CTA per
  // resident slot; tc_loop_rule.hpp): bit 0 for the 32-column tiles (one N tile), bit t for the wide
  // tiles with t N tiles (t = 1 .. kLoopTileBits - 1; more tiles read the last bit). Only where the
  // panels' own list has no split items.
  static constexpr int kLoopTileBits = 9;
  uint32_t loop_tiles = 0;
  bool loops(bool narrow, int64_t n_tiles) const {
    const int64_t bit = narrow ? 0 : std::min<int64_t>(std::max<int64_t>(n_tiles, 1), kLoopTileBits - 1);
    return (loop_tiles >> bit) & 1u;
  }
  // Blocks per entry over the panel height: how many of an entry's block rows have a block.
  double entry_fill() const {
    return entries > 0 ? double(blocks) / (double(entries) * panel_block_rows) : 0.0;
  }
  // Whether the multiplies run the kernels for dense entries (tc_config.hpp: the wide tiles'
  // configuration, and the dense-stage path of the CTA-synchronous kernel; the 32-column tiles of
  // fp16 / bf16 with row-major B have that path always): entries at least half full. Measured on
  // H200: bands of half-width 64 (entry fill 0.56) to 2048 (0.98) and the scrambled blocks (0.53
  // after 1-SA, 0.79 before) run 1-23% faster with them, the 27-point Poisson matrix (0.47) 4-6%
  // slower.
  static constexpr double kDenseEntryFill = 0.5;
  bool dense_stages() const { return entry_fill() >= kDenseEntryFill; }
  // Fraction of stored block entries that are nonzeros of A: nnz / (blocks * height * width).
  double fill() const {
    return blocks > 0 ? double(nnz) / (double(blocks) * shape.height * shape.width) : 0.0;
  }
  size_t device_bytes() const {
    return block_row_ptr.size() + block_col.size() + values.size() + entry_list.size() + panel_items.items.size() +
           narrow_items.items.size() + wide_items.items.size();
  }
};

// Builds the operand from the canonical device CSR. float input: f16, bf16 or tf32; double input:
// any precision (f64 keeps full precision). f16: throws VALUE_OUT_OF_RANGE (with the entry and its
// value, like the host's check) when a finite value exceeds the fp16 range. Reads back the block
// count (one sync).
TcBcsrOperand make_tc_bcsr(const DeviceCsrView<float>& csr, TcPrecision precision, const GpuContext& context);
TcBcsrOperand make_tc_bcsr(const DeviceCsrView<double>& csr, TcPrecision precision, const GpuContext& context);

// Dense operands of one multiply, in device memory.
struct TcSpmmArgs {
  int64_t n = 0;  // columns of B and C
  const void* B = nullptr;
  sparsetc_value_type_t b_type = SPARSETC_VALUE_F16;
  sparsetc_order_t b_order = SPARSETC_ORDER_ROW;
  int64_t ldb = 0;
  void* C = nullptr;
  sparsetc_value_type_t c_type = SPARSETC_VALUE_F32;
  sparsetc_order_t c_order = SPARSETC_ORDER_ROW;
  int64_t ldc = 0;
  double alpha = 1.0, beta = 0.0;  // beta == 0: C is only written (NaN/Inf already in C do not propagate)
  // nullptr, or `rows` int64 in device memory: row i of A is written to (and, beta != 0, read from)
  // row row_map[i] of C — how a row-reordered A answers in the original row order.
  const int64_t* row_map = nullptr;
  // Benchmarks only: the kernel of fp16 / bf16 with n > 8 and row-major B. 0: the default (warp-
  // specialized mma.sync), 1: the CTA-synchronous kernel; for n > 32 also 2: warp-specialized with
  // stages of 8 entries, 3: wgmma (sm_90a; on devices other than compute capability 9.0 the default).
  int kernel_variant = 0;
  // Benchmarks and tests: -1 takes the kernels TcBcsrOperand::dense_stages picks, 0 those for sparse
  // entries, 1 those for dense entries.
  int dense_stages = -1;
  // The warp-specialized kernel's grid on the panels' own work items: -1, CTAs looping over them
  // where the operand says it pays (TcBcsrOperand::loops), else one per work item and N tile; 0, one
  // per work item and N tile; benchmarks and tests: > 0, that many CTAs looping over any list
  // without split items.
  int loop_ctas = -1;
  // Benchmarks and tests: false runs the panels' own work items where tc_work_list would pick a
  // spread list (TcBcsrOperand::narrow_items, wide_items).
  bool spread = true;
  // nullptr, or at least tc_spmm_counter_count(a, n) arrival counters of split panels in device
  // memory, all zero. Every multiply leaves them zero again (the last chunk of a panel to arrive
  // resets its counter), so a plan keeps one set for all its multiplies and none needs a memset: a
  // second operation on the stream, which costs 1-2 us beside kernels of 10 us at N <= 32. With
  // nullptr the counters live in the workspace and are zeroed there on every call. A set must not
  // serve two multiplies that run at the same time.
  unsigned* counters = nullptr;
  int64_t counter_count = 0;  // of `counters`
};

// Which operand types a precision takes: f16: B f16, C f32 or f16; bf16: B bf16, C f32 or bf16;
// tf32: B f32, C f32; f64: B f64, C f64.
bool tc_supports(TcPrecision precision, sparsetc_value_type_t b_type, sparsetc_value_type_t c_type);

// The work items a multiply with n columns runs (spread: TcSpmmArgs::spread): the narrow tiles'
// spread list for n <= 32, the wide tiles' for one N tile, where the operand has them; else the
// panels' own. With two or more N tiles the grid is already that many times the items; spread
// further, chunks cost more than they gain (at N = 128 the wide tiles split into 2 waves of 2 chunks
// per panel ran band hw512 1.6x slower on H200: a partial tile of 64 KB per chunk).
const TcWorkList& tc_work_list(const TcBcsrOperand& a, int64_t n, bool spread = true);

// Workspace one multiply with n columns needs (0 when none); the same for every call with this n,
// with or without TcSpmmArgs::spread. own_counters: the caller passes TcSpmmArgs::counters, so the
// workspace holds only the split items' partial tiles.
size_t tc_spmm_workspace_bytes(const TcBcsrOperand& a, int64_t n, bool own_counters = false);

// Arrival counters a multiply with n columns uses (TcSpmmArgs::counters): one per split panel and
// N tile, for the list of n and for the panels' own.
int64_t tc_spmm_counter_count(const TcBcsrOperand& a, int64_t n);

// Every element of C (all rows, including rows of empty block rows, and all n columns) is written.
// Throws NOT_SUPPORTED for type pairs tc_supports rejects, INVALID_VALUE for bad leading
// dimensions, WORKSPACE_TOO_SMALL when workspace_bytes < tc_spmm_workspace_bytes. Stream-ordered,
// no sync.
void tc_spmm(const TcBcsrOperand& a, const TcSpmmArgs& args, void* workspace, size_t workspace_bytes,
             cudaStream_t stream);

}  // namespace sparsetc::detail
