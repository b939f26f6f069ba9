// The tSparse SpGEMM on the GPU (Zachariadis et al., "Accelerating sparse matrix-matrix
// multiplication with GPU Tensor Cores", Comput. Electr. Eng. 2020; Algorithm 1), every step on the
// device with 64-bit counts:
//   1. operands as 8x8 bitmap tiles (tile CSR; bit = row * 8 + column; values packed per tile in
//      bit order, in the storage type of the tile arithmetic) - make_tile_operand;
//   2. the task list: (A tile, B tile) pairs per output tile, pairs whose bitmaps cannot meet culled
//      (A's column mask & B's row mask == 0), a CUB segmented sort per tile row of C, unique output
//      tiles and their task offsets - count_tile_pairs, make_tile_tasks;
//   3. the counting kernel: the structural bitmap of every C tile, by the exact bitwise 8x8 boolean
//      product or by the paper's tensor-core 0/1 product with a ballot - count_tiles;
//   4. ONE allocation of C (the CSR structure of the structural product) - make_tile_csr_structure;
//   5. the multiplication kernel: mma.sync m16n8k16 (fp16 / bf16 in, fp32 accumulate; two C tiles
//      per MMA), mma.sync m8n8k4 (fp64), or the paper's nonTCU variant on CUDA cores (fp32) -
//      multiply_tiles;
//   6. compaction of entries that cancel to zero (and with them empty tiles) - done by the caller
//      with binned::drop_small(c, 0).
// docs/spgemm.md describes the pipeline and its numbers.
//
// Host synchronisation points, all documented read-backs of sizes: the pair total (count), the C
// tile count (tasks), nnz of the structure, and the fp16/bf16 range check of the operand values.
//
// This header is included from .cpp files: no device code.
#pragma once

#include <array>
#include <cstdint>

#include "gpu/convert/device_csr.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {

// Arithmetic of the tile products; it fixes the operands' value storage and C's value type.
enum class TileArithmetic {
  kF16,        // fp16 tiles (uint16 bits), mma.m16n8k16 with fp32 accumulation; C in float
  kBf16,       // bf16 tiles, the same MMA shape; C in float
  kF64,        // double tiles, mma.m8n8k4 in fp64; C in double
  kCudaCores,  // float tiles, fp32 FMAs on CUDA cores (the paper's nonTCU variant); C in float
  // Split ("hi + lo") values for accuracy beyond one rounding: x = hi + lo + e with hi = round(x),
  // lo = round(x - hi), so |e| <= u^2 |x| (fp16: 2^-22, bf16: 2^-16). The tile product is
  // hi*hi + hi*lo + lo*hi (three MMAs; lo*lo is below u^2); the multiplication is bound by gathering
  // tile elements, and hi and lo share one gather (same offset and rank).
  kF16Split,   // fp16 hi and lo (fp16 range); C in float
  kBf16Split,  // bf16 hi and lo (fp32 range); C in float
};

inline bool is_half_arithmetic(TileArithmetic arithmetic) {
  return arithmetic == TileArithmetic::kF16 || arithmetic == TileArithmetic::kBf16 ||
         arithmetic == TileArithmetic::kF16Split || arithmetic == TileArithmetic::kBf16Split;
}
inline bool is_split_arithmetic(TileArithmetic arithmetic) {
  return arithmetic == TileArithmetic::kF16Split || arithmetic == TileArithmetic::kBf16Split;
}
inline bool is_bf16_arithmetic(TileArithmetic arithmetic) {
  return arithmetic == TileArithmetic::kBf16 || arithmetic == TileArithmetic::kBf16Split;
}

// How the counting step finds C's tile bitmaps (both exact; kept side by side to measure them).
enum class TileCountMethod {
  kBitwise,     // eight shift-multiply-and steps per tile pair on 64-bit words
  kTensorCore,  // the paper: 0/1 tiles through mma.m16n8k16 (fp16, fp32 accumulate), ballot of c > 0
};

// Bytes of one stored value of an arithmetic.
inline int tile_value_bytes(TileArithmetic arithmetic) {
  switch (arithmetic) {
    case TileArithmetic::kF16:
    case TileArithmetic::kBf16: return 2;
    case TileArithmetic::kF64: return 8;
    case TileArithmetic::kF16Split:
    case TileArithmetic::kBf16Split: return 4;  // hi and lo
    default: return 4;
  }
}

// An operand as 8x8 bitmap tiles in tile-CSR order (tile rows, then tile columns increasing).
struct TileOperand {
  int64_t rows = 0, cols = 0, tiles = 0, nnz = 0;
  TileArithmetic arithmetic = TileArithmetic::kF16;
  DeviceBuffer tile_row_ptr;    // int64, tile rows + 1
  DeviceBuffer tile_col;        // int32, tiles
  DeviceBuffer bitmap;          // uint64, tiles: bit r * 8 + c for entry (r, c) of the tile
  DeviceBuffer row_mask;        // uint8, tiles: bit r when row r of the tile has an entry
  DeviceBuffer col_mask;        // uint8, tiles: bit c when column c of the tile has an entry
  DeviceBuffer element_offset;  // int64, tiles + 1: the tile's first value
  DeviceBuffer values;          // nnz values, tile by tile in bit order (uint16 / float / double); hi when split
  DeviceBuffer values_lo;       // split arithmetic only: nnz uint16, lo = round(x - hi), same order
  int64_t tile_rows() const { return (rows + 7) / 8; }
};

// The canonical device CSR (V = float or double) as tiles in `arithmetic`'s storage. fp16 and bf16
// values are rounded to nearest even (split: hi rounded, lo = the rounded remainder); a finite value beyond the type's range throws
// SPARSETC_STATUS_VALUE_OUT_OF_RANGE (fp16: the message points to bf16) - never a silent Inf.
// `what` names the operand in that message. Sync points: the tile count, the range check.
template <typename V>
TileOperand make_tile_operand(const DeviceCsrView<V>& csr, TileArithmetic arithmetic, const char* what,
                              const GpuContext& context);

// The multiplications of C = A * B counted entry by entry (sum over A's entries (i, k) of nnz(B(k, :))).
// One read back.
template <typename V>
int64_t count_products(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const GpuContext& context);

// Culled tile pairs per A tile: pair_ptr (int64, A tiles + 1) is their exclusive scan; `pairs` the
// total (read back).
struct TilePairCount {
  int64_t pairs = 0;
  DeviceBuffer pair_ptr;
};
TilePairCount count_tile_pairs(const TileOperand& a, const TileOperand& b, const GpuContext& context);

// The task list: C's tiles (tile CSR, columns sorted in each tile row) and, for every C tile, its
// (A tile, B tile) pairs in the order of A's tile columns (stable sort: deterministic sums).
struct TileTasks {
  int64_t rows = 0, cols = 0;   // of C
  int64_t pairs = 0, tiles = 0;
  DeviceBuffer pair_a, pair_b;  // int64, pairs: the A tile and B tile of each task, grouped by C tile
  DeviceBuffer tile_pair_ptr;   // int64, tiles + 1: tasks of C tile t are [ptr[t], ptr[t + 1])
  DeviceBuffer tile_row_ptr;    // int64, tile rows of C + 1
  DeviceBuffer tile_col;        // int32, tiles
  int64_t tile_rows() const { return (rows + 7) / 8; }
};
// Reads back the C tile count.
TileTasks make_tile_tasks(const TileOperand& a, const TileOperand& b, const TilePairCount& count,
                          const GpuContext& context);

// The structural bitmap of every C tile (uint64, tasks.tiles): the boolean product of the pairs.
DeviceBuffer count_tiles(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, TileCountMethod method,
                         const GpuContext& context);

// C's CSR structure from the tile bitmaps (rows sorted; explicit product pattern), and for every C
// tile and tile row rr the CSR position of its first entry in that row (row_pos[tile * 8 + rr]),
// where the multiplication kernels write. Reads back nnz.
struct TileCsrStructure {
  int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer row_ptr;  // int64, rows + 1
  DeviceBuffer col_idx;  // int32, nnz
  DeviceBuffer row_pos;  // int64, tiles * 8
};
TileCsrStructure make_tile_csr_structure(const TileTasks& tasks, const DeviceBuffer& bitmap,
                                         const GpuContext& context);

// The values of every structural entry of C (in the structure's CSR order) from the tasks, in
// a's and b's arithmetic (which agree). V = double for kF64, float otherwise. No sync.
template <typename V>
void multiply_tiles(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const DeviceBuffer& bitmap,
                    const TileCsrStructure& structure, V* values, const GpuContext& context);

namespace tsparse {
// Entry points per arithmetic (tile_multiply_tc.cu, tile_multiply_cuda_core.cu).
void multiply_half(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const uint64_t* bitmap,
                   const int64_t* row_pos, float* values, const GpuContext& context);
void multiply_f64(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const uint64_t* bitmap,
                  const int64_t* row_pos, double* values, const GpuContext& context);
void multiply_cuda_cores(const TileOperand& a, const TileOperand& b, const TileTasks& tasks, const uint64_t* bitmap,
                         const int64_t* row_pos, float* values, const GpuContext& context);
}  // namespace tsparse

enum TsparseStage { kTsparseTasks, kTsparseCount, kTsparseStructure, kTsparseMultiply, kTsparseCompact, kTsparseStages };

struct TsparseSpgemmOptions {
  TileCountMethod count = TileCountMethod::kBitwise;
  // Time the stages with events (one more synchronisation each): TsparseSpgemmStats::stage_ms.
  bool time_stages = false;
};

struct TsparseSpgemmStats {
  int64_t pairs = 0;           // culled tile pairs (tasks)
  int64_t c_tiles = 0;         // non-empty tiles of the structural product
  int64_t structural_nnz = 0;  // entries of C before compaction of cancelled zeros
  std::array<double, kTsparseStages> stage_ms{};
};

// C = A * B on tiles (A m x k, B k x n, tiles of the same arithmetic; they must outlive this object).
// The constructor counts the culled pairs; symbolic() builds the tasks, counts, and allocates C's
// structure (kept for repeated numeric products); multiply() gives C's values with the entries
// that cancel to exactly zero removed.
template <typename V>
class TsparseSpgemm {
 public:
  TsparseSpgemm(const TileOperand& a, const TileOperand& b, const TsparseSpgemmOptions& options,
                const GpuContext& context);
  int64_t pairs() const { return count_.pairs; }
  // Bytes of the symbolic product's working memory (tasks, sort, bitmaps, structure).
  size_t memory_estimate() const;
  // Returns nnz of the structural product (before cancelled zeros are removed).
  int64_t symbolic();
  bool has_structure() const { return structured_; }
  // The product (symbolic() first) without the entries with |c| <= max(drop_tolerance, 0): entries
  // that cancel to zero always go (NaN stays). Reads back the count of kept entries.
  DeviceCsr<V> multiply(double drop_tolerance = 0);
  // The structural product's values (symbolic() first), in structure().col_idx order; no sync.
  void multiply_structural(V* values);
  const TileCsrStructure& structure() const { return structure_; }
  const TsparseSpgemmStats& stats() const { return stats_; }

 private:
  const TileOperand* a_;
  const TileOperand* b_;
  TsparseSpgemmOptions options_;
  GpuContext context_;
  TilePairCount count_;
  TileTasks tasks_;
  DeviceBuffer bitmap_;
  TileCsrStructure structure_;
  bool structured_ = false;
  TsparseSpgemmStats stats_;
};

}  // namespace sparsetc::detail
