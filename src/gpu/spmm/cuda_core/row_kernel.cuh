// The C-stationary kernel (CSR or DCSR) and its launch, instantiated once per precision in
// row_spmm_<precision>.cu.
//
// One launch covers four kinds of work, in this order of the grid:
//  1. long rows (more than warp_limit entries): a CTA per chunk of up to kRowWarps * warp_limit
//     entries and column tile; its warps (as many as get warp_share entries each, at most
//     kRowWarps) split the chunk and sum their parts in shared memory in warp order; a row of
//     several chunks stores each chunk's sum and the last CTA to finish (a counter per row and
//     tile) adds them in chunk order, so the result does not depend on the schedule;
//  2. medium rows (row_limit < entries <= warp_limit): a warp each;
//  3. short rows, in row order (rows of kinds 1 and 2 are skipped there), either as streams (a
//     group of 2^lanes_n_log lanes walks rows_per_stream rows, the streams of a warp interleaved
//     over neighbouring rows, loading the next step's entries and the next row's bounds before the
//     current step's rows of B), or as groups of 2^(lanes_n_log + lanes_k_log) lanes, one row
//     each, lanes across its entries;
//  4. DCSR only: the empty rows, where C = beta * C.
// Column tiles are the inner order (the warps of a row's tiles run together), or the outer one when
// B is too large for L2 (tile_major). In a group or warp, lane (k-slice ks, column lane ln) takes
// U consecutive entries of every lanes_k * U of the row (the next U loaded while this batch's rows
// of B arrive; only the last batch checks the row's end) and the V columns of LaneColumns (pieces
// of 16 bytes of B, the tile's lanes side by side in each); the k-slices are summed with shuffles
// in a fixed order. Measured (ncu, H200, session 33), the kernel is issue-bound where B's rows hit
// in L1 and L2 (IPC 2.2-2.5, L1 hit rate 60-85%): this loop takes 25 instructions per entry in f32
// with 8 columns per lane (SASS; 27 before the addresses were held in registers, 34 before that), the
// streams' loop 40 (45).
// B's elements stay packed as loaded (Packet) until the multiply: half-precision lanes hold their
// loads in flight in half the registers, so f16/bf16 run 8 columns per lane (16-byte loads) at the
// occupancy fp32 has with 8, and 4 columns (8-byte loads) at fp32's with 4.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/cuda_core/core_values.cuh"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "gpu/spmm/cuda_core/row_shape.hpp"

namespace sparsetc::detail::cudacore {

// How a lane reads its pieces of a row of B (the kernel's template argument kB).
enum BAccess : int {
  kBElements = 0,     // element by element, each checked against C's last column: column-major B, or
                      // a lane at the right edge of C
  kBVectors = 1,      // one vector load a piece: row-major rows on the vector's boundary
  kBRowElements = 2,  // row-major rows off it (a column slice of a wider B): element loads at
                      // constant offsets from the row's address, no checks
};

template <typename Acc>
struct RowParams {
  // A
  int64_t units = 0;
  const int64_t* row_idx = nullptr;
  const int64_t* row_ptr = nullptr;
  const int32_t* col_idx = nullptr;
  const void* values = nullptr;
  // columns
  int64_t n = 0, tiles = 0;
  int lanes_n_log = 0, lanes_k_log = 0;
  int64_t row_limit = 0;
  int64_t warp_share = 1;       // long rows: fewest entries a warp of a chunk takes
  int64_t rows_per_stream = 0;  // > 0: short rows as streams (lanes_k_log is then 0)
  // work lists
  int64_t long_rows = 0, long_ctas = 0;
  const int64_t* long_unit = nullptr;
  const int64_t* chunk_ptr = nullptr;
  const int64_t* partial_ptr = nullptr;
  int32_t* counters = nullptr;
  Acc* partials = nullptr;
  int64_t medium_rows = 0;
  const int64_t* medium_unit = nullptr;
  int64_t short_warps = 0;
  int64_t tile_warps = 0;   // warps per column tile: medium + short + fill
  bool tile_major = false;  // every row for tile 0, then tile 1, ...: B's tile stays in L2
  int64_t fill_rows = 0;
  const int64_t* fill_row = nullptr;
  // dense: element (r, c) at X[r * x_rs + c * x_cs]
  const void* B = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  uint32_t b_row_bytes = 0;  // b_rs in bytes, for the row-major paths (rows < 4 GB)
  void* C = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  bool c_vec = false;
  Acc alpha = 0, beta = 0;
};

template <typename Acc>
__device__ __forceinline__ Acc madd(Acc a, Acc b, Acc c) {
  if constexpr (std::is_same_v<Acc, float>) return fmaf(a, b, c);
  else return fma(a, b, c);
}

// The columns of B and C a lane owns: V columns in kPieces pieces of kPiece consecutive columns
// (16 bytes of B, or all V when they take less), piece j at c0 + j * stride where stride is
// kPiece << lanes_n_log. The lanes of a tile read one piece of a row of B side by side, so each
// load instruction takes whole 32-byte sectors (a lane's 32 bytes in one place would take half of
// every sector per instruction, twice the L1 wavefronts).
template <typename Store, int V>
struct LaneColumns {
  static constexpr int kPiece = int(V * sizeof(Store)) > 16 ? int(16 / sizeof(Store)) : V;
  static constexpr int kPieces = V / kPiece;
  int64_t c0 = 0;  // first column of piece 0
  int64_t n = 0;   // columns of C
  int stride = 0;  // columns from one piece to the next

  __device__ __forceinline__ LaneColumns(int64_t tile, int ln, int ln_log, int64_t columns) {
    stride = kPiece << ln_log;
    c0 = tile * (int64_t(V) << ln_log) + int64_t(ln) * kPiece;
    n = columns;
  }
  // Columns of piece j inside C (0 .. kPiece).
  __device__ __forceinline__ int count(int j) const {
    const int64_t first = c0 + int64_t(j) * stride;
    return first < n ? int(min(int64_t(kPiece), n - first)) : 0;
  }
  __device__ __forceinline__ bool any() const { return c0 < n; }
  // Every column inside C (the last piece is the rightmost).
  __device__ __forceinline__ bool full() const { return c0 + int64_t(kPieces - 1) * stride + kPiece <= n; }
  // Offset of element i (piece i / kPiece) from column c0.
  __device__ __forceinline__ int offset(int i) const { return (i / kPiece) * stride + i % kPiece; }
};

// A batch of U entries of A held by one lane: columns (-1 past the end) and values.
template <typename Acc, int U>
struct Batch {
  int32_t col[U];
  Acc a[U];
};

// The first min(U, left) entries of cols and vals; the rest -1 and 0. Consecutive entries: one
// base address and constant offsets, held in registers (the empty asm keeps ptxas from rebuilding
// the address from the kernel parameter under each entry's predicate: 16 instructions a step).
template <typename Store, typename Acc, int U>
__device__ __forceinline__ void load_batch(Batch<Acc, U>& batch, const int32_t* cols, const Store* vals, int left) {
  asm("" : "+l"(cols), "+l"(vals));
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool inside = u < left;
    batch.col[u] = inside ? __ldg(cols + u) : -1;
    batch.a[u] = inside ? load_one(vals + u) : Acc(0);
  }
}

// The lane's columns of one row of B (b_row: column c0 of the row), every column inside C unless
// kB is kBElements:
//  - kBVectors: kPieces vector loads;
//  - kBRowElements: V element loads at constant offsets from b_row;
//  - kBElements: element by element, zero outside C.
template <BAccess kB, typename Store, int V>
__device__ __forceinline__ void load_b_row(Packet<Store, V>& out, const Store* b_row, int64_t b_cs,
                                           const LaneColumns<Store, V>& lc) {
  using Cols = LaneColumns<Store, V>;
  if constexpr (kB == kBVectors) {
    constexpr int kWords = Packet<Store, Cols::kPiece>::kWords;
#pragma unroll
    for (int j = 0; j < Cols::kPieces; ++j) {
      Packet<Store, Cols::kPiece> piece;
      load_packet(piece, b_row + j * lc.stride);
#pragma unroll
      for (int w = 0; w < kWords; ++w) out.w[j * kWords + w] = piece.w[w];
    }
  } else if constexpr (kB == kBRowElements) {
    out.clear();
#pragma unroll
    for (int j = 0; j < Cols::kPieces; ++j) {
      const Store* piece = b_row + j * lc.stride;
#pragma unroll
      for (int i = 0; i < Cols::kPiece; ++i) out.set_bits(j * Cols::kPiece + i, piece + i);
    }
  } else {
    out.clear();
#pragma unroll
    for (int i = 0; i < V; ++i)
      if (i % Cols::kPiece < lc.count(i / Cols::kPiece)) out.set_bits(i, b_row + lc.offset(i) * b_cs);
  }
}

// Row `col` of B at column c0 (b_cols: column c0 of row 0). The row-major paths'
// B has rows of fewer than 2^32 bytes: one 32x32->64-bit multiply-add (the run function checks).
template <BAccess kB, typename Store, typename Acc>
__device__ __forceinline__ const Store* b_row_of(const Store* b_cols, int32_t col,
                                                 const RowParams<Acc>& p) {
  if constexpr (kB != kBElements) {
    // One mad.wide.u32 (C++'s 64-bit form costs ptxas a second add of a zero high word).
    uint64_t address;
    asm("mad.wide.u32 %0, %1, %2, %3;"
        : "=l"(address)
        : "r"(uint32_t(col)), "r"(p.b_row_bytes), "l"(reinterpret_cast<uint64_t>(b_cols)));
    return reinterpret_cast<const Store*>(address);
  } else {
    return b_cols + int64_t(col) * p.b_rs;
  }
}

// acc += batch's values times their rows of B: all B loads first, kept as loaded (Packet) and
// converted at the multiply. kGuard: some entries may be past the end (col -1, value 0); their
// rows read as zero (B's own rows could hold Inf or NaN).
template <BAccess kB, bool kGuard, int V, int U, typename Store, typename Acc>
__device__ __forceinline__ void multiply_batch(Acc (&acc)[V], const Batch<Acc, U>& batch, const Store* b_cols,
                                               const RowParams<Acc>& p, const LaneColumns<Store, V>& lc) {
  Packet<Store, V> b[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (!kGuard || batch.col[u] >= 0)
      load_b_row<kB>(b[u], b_row_of<kB>(b_cols, batch.col[u], p), p.b_cs, lc);
    else
      b[u].clear();
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] = madd(batch.a[u], b[u].at(i), acc[i]);
}

// acc += A[row, its entries in [first, end) of k-slice ks of lanes_k] * B[those rows, the lane's
// columns]. Slice ks takes U consecutive entries of every lanes_k * U (the slices of a step read
// lanes_k * U consecutive entries together, each lane's at one address plus constants).
// Software-pipelined: the next batch of A is loaded before this batch's rows of B; only the last
// batch checks for entries past the end.
template <CorePrecision P, BAccess kB, int U, int V>
__device__ __forceinline__ void accumulate_row(typename Precision<P>::Acc (&acc)[V],
                                               const RowParams<typename Precision<P>::Acc>& p, int64_t first,
                                               int64_t end, int ks, int lanes_k,
                                               const LaneColumns<typename Precision<P>::Store, V>& lc) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  first += int64_t(ks) * U;
  if (first >= end) return;
  const Store* b_cols = static_cast<const Store*>(p.B) + lc.c0 * p.b_cs;
  // A row's part here (a chunk of a long row at most) has fewer than 2^31 entries.
  const int32_t* cols = p.col_idx + first;
  const Store* vals = static_cast<const Store*>(p.values) + first;
  int left = int(end - first);
  const int step = lanes_k * U;
  Batch<Acc, U> batch;
  load_batch(batch, cols, vals, left);
  while (true) {
    cols += step;
    vals += step;
    const bool whole = left >= U;  // all U entries of this batch inside
    left -= step;
    Batch<Acc, U> next;
    load_batch(next, cols, vals, left);
    if (whole) {
      multiply_batch<kB, false>(acc, batch, b_cols, p, lc);
      if (left <= 0) return;
    } else {
      multiply_batch<kB, true>(acc, batch, b_cols, p, lc);
      return;
    }
    batch = next;
  }
}

// As accumulate_row, with the row-major loads when the lane may use them.
template <CorePrecision P, BAccess kB, int U, int V>
__device__ __forceinline__ void accumulate_lane(typename Precision<P>::Acc (&acc)[V],
                                                const RowParams<typename Precision<P>::Acc>& p, int64_t first,
                                                int64_t end, int ks, int lanes_k,
                                                const LaneColumns<typename Precision<P>::Store, V>& lc) {
  if (kB != kBElements && lc.full()) accumulate_row<P, kB, U>(acc, p, first, end, ks, lanes_k, lc);
  else accumulate_row<P, kBElements, U>(acc, p, first, end, ks, lanes_k, lc);
}

// C = alpha * acc + beta * C at the lane's columns of one row (c_row points at column c0).
template <int V, typename Store, typename Out, typename Acc>
__device__ __forceinline__ void write_lane(Out* c_row, int64_t c_cs, bool vector, const LaneColumns<Store, V>& lc,
                                           const Acc (&acc)[V], Acc alpha, Acc beta) {
  using Cols = LaneColumns<Store, V>;
#pragma unroll
  for (int j = 0; j < Cols::kPieces; ++j) {
    Acc piece[Cols::kPiece];
#pragma unroll
    for (int i = 0; i < Cols::kPiece; ++i) piece[i] = acc[j * Cols::kPiece + i];
    write_c<Cols::kPiece>(c_row + int64_t(j * lc.stride) * c_cs, c_cs, lc.count(j), vector, piece, alpha, beta);
  }
}

// Short rows as streams: a group of 2^lanes_n_log lanes (one per vector of the tile's columns) owns
// units u, u + stride, ... below u_end and walks their entries U at a time, all lanes on the
// same entries. The streams of a warp take neighbouring units (stride = streams per warp), so
// their loads of A coalesce. The next step's A entries and the next unit's bounds (and row number)
// are loaded before the current step's rows of B: about one memory latency per step is exposed.
// Rows longer than row_limit are skipped (other warps own them); C is written as each row ends.
template <CorePrecision P, BAccess kB, bool kDcsr, int U, typename Out, int V>
__device__ __forceinline__ void stream_rows(const RowParams<typename Precision<P>::Acc>& p, int64_t u,
                                            int64_t u_end, int64_t stride,
                                            const LaneColumns<typename Precision<P>::Store, V>& lc, Out* C) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  const Store* values = static_cast<const Store*>(p.values);
  const Store* b_cols = static_cast<const Store*>(p.B) + lc.c0 * p.b_cs;
  // A DCSR's units name their rows (loaded a unit ahead); a CSR's units are the rows.
  auto row_of = [&](int64_t unit) { return kDcsr ? __ldg(p.row_idx + unit) : unit; };
  // The current step: unit u (C row `row`, entries up to re, owned or skipped), entries from e.
  int64_t e = __ldg(p.row_ptr + u), re = __ldg(p.row_ptr + u + 1);
  bool own = re - e <= p.row_limit;
  if (!own) e = re;
  int64_t row = row_of(u);
  // The next unit's bounds and row, loaded one unit ahead.
  int64_t next_rs = 0, next_re = 0, next_row = 0;
  if (u + stride < u_end) {
    next_rs = __ldg(p.row_ptr + u + stride);
    next_re = __ldg(p.row_ptr + u + stride + 1);
    next_row = row_of(u + stride);
  }
  Batch<Acc, U> batch;
  load_batch(batch, p.col_idx + e, values + e, int(min(re - e, int64_t(U))));
  Acc acc[V];
#pragma unroll
  for (int i = 0; i < V; ++i) acc[i] = Acc(0);
  while (true) {
    const bool row_done = e + U >= re;
    int64_t nu = u, ne = e + U, nre = re, nrow = row;
    int64_t nnext_rs = next_rs, nnext_re = next_re, nnext_row = next_row;
    bool nown = own;
    if (row_done) {
      nu = u + stride;
      ne = next_rs;
      nre = next_re;
      nrow = next_row;
      nown = nre - ne <= p.row_limit;
      if (!nown) ne = nre;
      if (nu + stride < u_end) {
        nnext_rs = __ldg(p.row_ptr + nu + stride);
        nnext_re = __ldg(p.row_ptr + nu + stride + 1);
        nnext_row = row_of(nu + stride);
      }
    }
    Batch<Acc, U> next;
    load_batch(next, p.col_idx + ne, values + ne, nu < u_end ? int(min(nre - ne, int64_t(U))) : 0);
    multiply_batch<kB, true>(acc, batch, b_cols, p, lc);
    if (row_done) {
      if (own) write_lane(C + (kDcsr ? row : u) * p.c_rs + lc.c0 * p.c_cs, p.c_cs, p.c_vec, lc, acc, p.alpha, p.beta);
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] = Acc(0);
      if (nu >= u_end) return;
    }
    u = nu;
    e = ne;
    re = nre;
    own = nown;
    row = nrow;
    next_rs = nnext_rs;
    next_re = nnext_re;
    next_row = nnext_row;
    batch = next;
  }
}

constexpr int kRowThreads = 32 * kRowWarps;  // kRowWarps: row_shape.hpp

// CTAs per SM the register budget must allow: latency hiding needs warps, spills cost more. Four
// fp32 columns per lane (f32, or f16/bf16 whose packets keep two halves per register) fit 64
// registers (8 CTAs, 32 warps). f32 with eight columns holds 8 sums and 32 registers of packets:
// 96 registers (5 CTAs, 20 warps) and no spills, where 80 (24 warps) spilled 282 bytes and ran 3-5%
// slower. f16/bf16 with eight columns and f64 keep 80 (6 CTAs, 24 warps): 20 warps made f16 5-7%
// slower at N = 32-512 (H200, 30 matrices).
template <CorePrecision P, int V>
constexpr int kRowMinCtas = P == CorePrecision::f32 && V == 8 ? 5 : P == CorePrecision::f64 || V == 8 ? 6 : 8;

// V: columns per lane (the schedule's tiling.vec; 2, 4 or 8). U: entries per lane and step.
template <CorePrecision P, int V, int U, typename Out, BAccess kB, bool kDcsr>
__global__ void __launch_bounds__(kRowThreads, kRowMinCtas<P, V>)
    row_spmm_kernel(const RowParams<typename Precision<P>::Acc> p) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  __shared__ Acc warp_sums[kRowWarps][32 * V];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int ln_log = p.lanes_n_log;
  const int ln = lane & ((1 << ln_log) - 1);
  const int64_t span = int64_t(V) << ln_log;  // columns of a tile
  Out* C = static_cast<Out*>(p.C);
  Acc acc[V];
#pragma unroll
  for (int i = 0; i < V; ++i) acc[i] = Acc(0);

  if (int64_t(blockIdx.x) < p.long_ctas) {
    // 1. A chunk of a long row; CTA-uniform branch.
    const int64_t chunks = p.long_ctas / p.tiles;
    const int64_t tile = p.tile_major ? int64_t(blockIdx.x) / chunks : int64_t(blockIdx.x) % p.tiles;
    const int64_t chunk = p.tile_major ? int64_t(blockIdx.x) % chunks : int64_t(blockIdx.x) / p.tiles;
    const LaneColumns<Store, V> lc(tile, ln, ln_log, p.n);
    const int64_t l = last_not_above(p.chunk_ptr, 0, p.long_rows, chunk);
    const int64_t unit = __ldg(p.long_unit + l);
    const int64_t first_chunk = __ldg(p.chunk_ptr + l), row_chunks = __ldg(p.chunk_ptr + l + 1) - first_chunk;
    const int64_t c = chunk - first_chunk;
    const int64_t begin = __ldg(p.row_ptr + unit), length = __ldg(p.row_ptr + unit + 1) - begin;
    const int64_t cb = begin + length * c / row_chunks, ce = begin + length * (c + 1) / row_chunks;
    // Enough warps that each takes at least warp_share entries (a warp's chain of dependent
    // loads costs as much as many steps).
    const int active = int(min(int64_t(kRowWarps), max(int64_t(1), (ce - cb + p.warp_share - 1) / p.warp_share)));
    const int64_t wb = cb + (ce - cb) * warp / active, we = cb + (ce - cb) * (warp + 1) / active;
    const int ks = lane >> ln_log;
    if (lc.any() && warp < active) accumulate_lane<P, kB, U>(acc, p, wb, we, ks, 32 >> ln_log, lc);
    reduce_slices(acc, ln_log, 5);
    if (ks == 0) {
#pragma unroll
      for (int i = 0; i < V; ++i) warp_sums[warp][ln * V + i] = acc[i];
    }
    __syncthreads();
    if (warp != 0) return;
    if (ks == 0) {
#pragma unroll
      for (int i = 0; i < V; ++i) {
        Acc sum = warp_sums[0][ln * V + i];
        for (int w = 1; w < kRowWarps; ++w) sum += warp_sums[w][ln * V + i];
        acc[i] = sum;
      }
    }
    const int64_t row = kDcsr ? __ldg(p.row_idx + unit) : unit;
    Out* c_row = C + row * p.c_rs + lc.c0 * p.c_cs;
    if (row_chunks == 1) {
      if (ks == 0) write_lane(c_row, p.c_cs, p.c_vec, lc, acc, p.alpha, p.beta);
      return;
    }
    const int64_t first_partial = __ldg(p.partial_ptr + l);
    if (ks == 0 && lc.any()) {
      Acc* mine = p.partials + ((first_partial + c) * p.tiles + tile) * span + int64_t(ln) * V;
#pragma unroll
      for (int i = 0; i < V; ++i) __stcg(mine + i, acc[i]);
    }
    __threadfence();
    __syncwarp();
    int last = 0;
    if (lane == 0) last = atomicAdd(p.counters + l * p.tiles + tile, 1) == int(row_chunks - 1);
    last = __shfl_sync(kFullMask, last, 0);
    if (!last) return;
    __threadfence();
    if (ks == 0 && lc.any()) {
      Acc total[V];
#pragma unroll
      for (int i = 0; i < V; ++i) total[i] = Acc(0);
      for (int64_t k = 0; k < row_chunks; ++k) {
        const Acc* part = p.partials + ((first_partial + k) * p.tiles + tile) * span + int64_t(ln) * V;
#pragma unroll
        for (int i = 0; i < V; ++i) total[i] += __ldcg(part + i);
      }
      write_lane(c_row, p.c_cs, p.c_vec, lc, total, p.alpha, p.beta);
    }
    if (lane == 0) p.counters[l * p.tiles + tile] = 0;  // ready for the next multiply
    return;
  }

  const int64_t g = (int64_t(blockIdx.x) - p.long_ctas) * kRowWarps + warp;
  if (g >= p.tiles * p.tile_warps) return;  // the last CTA's spare warps
  const int64_t tile = p.tile_major ? g / p.tile_warps : g % p.tiles;
  int64_t w = p.tile_major ? g % p.tile_warps : g / p.tiles;
  const LaneColumns<Store, V> lc(tile, ln, ln_log, p.n);

  if (w < p.medium_rows) {
    // 2. A medium row, one warp; warp-uniform branch.
    const int64_t unit = __ldg(p.medium_unit + w);
    const int ks = lane >> ln_log;
    if (lc.any())
      accumulate_lane<P, kB, U>(acc, p, __ldg(p.row_ptr + unit), __ldg(p.row_ptr + unit + 1), ks, 32 >> ln_log, lc);
    reduce_slices(acc, ln_log, 5);
    const int64_t row = kDcsr ? __ldg(p.row_idx + unit) : unit;
    if (ks == 0 && lc.any()) write_lane(C + row * p.c_rs + lc.c0 * p.c_cs, p.c_cs, p.c_vec, lc, acc, p.alpha, p.beta);
    return;
  }
  w -= p.medium_rows;

  const int group_log = ln_log + p.lanes_k_log;
  const int group = lane >> group_log;
  const int ks = (lane & ((1 << group_log) - 1)) >> ln_log;
  if (w < p.short_warps) {
    if (p.rows_per_stream > 0) {
      // 3. Short rows as streams: the warp's streams interleave over its units.
      const int64_t streams = int64_t(1) << (5 - ln_log);
      const int64_t base = w * streams * p.rows_per_stream;
      const int64_t first = base + (lane >> ln_log), end = min(base + streams * p.rows_per_stream, p.units);
      if (first < end && lc.any()) {
        if (kB != kBElements && lc.full()) stream_rows<P, kB, kDcsr, U, Out, V>(p, first, end, streams, lc, C);
        else stream_rows<P, kBElements, kDcsr, U, Out, V>(p, first, end, streams, lc, C);
      }
      return;
    }
    // 3. Short rows, a group each.
    const int64_t unit = (w << (5 - group_log)) + group;
    bool active = false;
    int64_t begin = 0, end = 0;
    if (unit < p.units) {
      begin = __ldg(p.row_ptr + unit);
      end = __ldg(p.row_ptr + unit + 1);
      active = end - begin <= p.row_limit;
    }
    if (active && lc.any()) accumulate_lane<P, kB, U>(acc, p, begin, end, ks, 1 << p.lanes_k_log, lc);
    reduce_slices(acc, ln_log, group_log);
    if (active && ks == 0 && lc.any()) {
      const int64_t row = kDcsr ? __ldg(p.row_idx + unit) : unit;
      write_lane(C + row * p.c_rs + lc.c0 * p.c_cs, p.c_cs, p.c_vec, lc, acc, p.alpha, p.beta);
    }
    return;
  }
  w -= p.short_warps;

  // 4. Empty rows of a DCSR: C = beta * C (alpha times an empty sum).
  const int64_t index = (w << (5 - group_log)) + group;
  if (index < p.fill_rows && ks == 0 && lc.any()) {
    const int64_t row = __ldg(p.fill_row + index);
    write_lane(C + row * p.c_rs + lc.c0 * p.c_cs, p.c_cs, p.c_vec, lc, acc, p.alpha, p.beta);
  }
}

constexpr double kTileMajorBytes = 24.0 * 1024 * 1024;  // B larger than this: tiles in the outer order

inline bool aligned_to(const void* p, int64_t bytes) { return (reinterpret_cast<uintptr_t>(p) % uint64_t(bytes)) == 0; }
inline bool aligned16(const void* p) { return aligned_to(p, 16); }

template <CorePrecision P, int V, int U, typename Out, BAccess kB>
void launch_row_kernel(const RowParams<typename Precision<P>::Acc>& p, int64_t ctas, cudaStream_t stream) {
  if (p.row_idx != nullptr) row_spmm_kernel<P, V, U, Out, kB, true><<<unsigned(ctas), kRowThreads, 0, stream>>>(p);
  else row_spmm_kernel<P, V, U, Out, kB, false><<<unsigned(ctas), kRowThreads, 0, stream>>>(p);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <CorePrecision P, int V, int U, typename Out>
void launch_row_kernel(const RowParams<typename Precision<P>::Acc>& p, BAccess b_access, int64_t ctas,
                       cudaStream_t stream) {
  switch (b_access) {
    case kBVectors: return launch_row_kernel<P, V, U, Out, kBVectors>(p, ctas, stream);
    case kBRowElements: return launch_row_kernel<P, V, U, Out, kBRowElements>(p, ctas, stream);
    default: return launch_row_kernel<P, V, U, Out, kBElements>(p, ctas, stream);
  }
}

// The instantiations, by columns per lane: f64 2 (16 bytes of B); f32 4 or 8 (16 or 32 bytes);
// f16/bf16 4 or 8 (8 or 16 bytes). kUnroll entries per step.
template <CorePrecision P, typename Out>
void launch_row_kernel(const RowParams<typename Precision<P>::Acc>& p, int vec, BAccess b_access, int64_t ctas,
                       cudaStream_t stream) {
  if constexpr (P == CorePrecision::f64) {
    require(vec == 2, SPARSETC_STATUS_INTERNAL_ERROR, "CUDA-core SpMM: no f64 kernel for ", vec, " columns per lane");
    launch_row_kernel<P, 2, kUnroll, Out>(p, b_access, ctas, stream);
  } else {
    require(vec == 4 || vec == 8, SPARSETC_STATUS_INTERNAL_ERROR, "CUDA-core SpMM: no kernel for ", vec,
            " columns per lane");
    if (vec == 4) launch_row_kernel<P, 4, kUnroll, Out>(p, b_access, ctas, stream);
    else launch_row_kernel<P, 8, kUnroll, Out>(p, b_access, ctas, stream);
  }
}

// Fills the parameters from the operands and the schedule, then launches (nothing for an empty C).
template <CorePrecision P>
void run_row_spmm(const CoreRows& a, RowSchedule& s, const CoreDenseArgs& args, void* workspace,
                  cudaStream_t stream) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  if (a.rows == 0 || args.n == 0) return;
  const CoreColumnTiling& t = s.tiling;
  RowParams<Acc> p;
  p.units = a.units;
  p.row_idx = a.row_idx;
  p.row_ptr = a.row_ptr;
  p.col_idx = a.col_idx;
  p.values = a.values;
  p.n = args.n;
  p.tiles = t.tiles;
  p.lanes_n_log = t.lanes_n_log;
  p.lanes_k_log = s.lanes_k_log;
  p.row_limit = s.row_limit;
  p.warp_share = std::max<int64_t>(1, s.warp_limit / 4);
  p.long_rows = s.long_rows;
  p.long_ctas = s.chunks * t.tiles;
  p.long_unit = s.long_unit.as<const int64_t>();
  p.chunk_ptr = s.chunk_ptr.as<const int64_t>();
  p.partial_ptr = s.partial_ptr.as<const int64_t>();
  p.counters = s.counters.as<int32_t>();
  p.partials = static_cast<Acc*>(workspace);
  p.medium_rows = s.medium_rows;
  p.medium_unit = s.medium_unit.as<const int64_t>();
  p.rows_per_stream = s.rows_per_stream;
  const int64_t group_rows = int64_t(32) >> (t.lanes_n_log + s.lanes_k_log);
  const int64_t warp_units = s.rows_per_stream > 0 ? s.rows_per_stream << (5 - t.lanes_n_log) : group_rows;
  p.short_warps = (a.units + warp_units - 1) / warp_units;
  p.fill_rows = s.fill_rows;
  p.fill_row = s.fill_row.as<const int64_t>();
  const int64_t fill_warps = (s.fill_rows + group_rows - 1) / group_rows;
  const bool b_row = args.b_order == SPARSETC_ORDER_ROW, c_row = args.c_order == SPARSETC_ORDER_ROW;
  p.B = args.B;
  p.b_rs = b_row ? args.ldb : 1;
  p.b_cs = b_row ? 1 : args.ldb;
  p.C = args.C;
  p.c_rs = c_row ? args.ldc : 1;
  p.c_cs = c_row ? 1 : args.ldc;
  p.alpha = Acc(args.alpha);
  p.beta = Acc(args.beta);
  // Vector loads of a lane's columns need B's rows aligned to the vector (16 bytes, or 8 for four
  // half-precision columns); C's vector stores the same for its element type.
  const int64_t b_vector = std::min<int64_t>(16, int64_t(t.vec) * int64_t(sizeof(Store)));
  const int64_t b_row_bytes = args.ldb * int64_t(sizeof(Store));
  BAccess b_access = kBElements;
  if (b_row && b_row_bytes <= UINT32_MAX)
    b_access = aligned_to(args.B, b_vector) && b_row_bytes % b_vector == 0 ? kBVectors : kBRowElements;
  p.b_row_bytes = b_access != kBElements ? uint32_t(b_row_bytes) : 0;
  const int64_t c_bytes = core_value_bytes(P) == 2 && args.c_type != SPARSETC_VALUE_F32 ? 2 : int64_t(sizeof(Acc));
  const int64_t c_vector = std::min<int64_t>(16, int64_t(t.vec) * c_bytes);
  p.c_vec = c_row && aligned_to(args.C, c_vector) && (args.ldc * c_bytes) % c_vector == 0;
  require(s.chunks == 0 || s.workspace_bytes == 0 || workspace != nullptr, SPARSETC_STATUS_INVALID_VALUE,
          "CUDA-core SpMM: the schedule needs ", s.workspace_bytes, " bytes of workspace");
  p.tile_warps = s.medium_rows + p.short_warps + fill_warps;
  // Tiles in the outer order when B is too large to stay in L2 whole: then each tile of B is read
  // from memory about once (A, much smaller, is read once per tile).
  p.tile_major = t.tiles > 1 && double(a.cols) * double(args.n) * double(sizeof(Store)) > kTileMajorBytes;
  const int64_t warps = t.tiles * p.tile_warps;
  const int64_t ctas = p.long_ctas + (warps + kRowWarps - 1) / kRowWarps;
  require(ctas <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "CUDA-core SpMM: ", ctas, " CTAs exceed one launch");
  if (ctas == 0) return;
  if constexpr (P == CorePrecision::f32) launch_row_kernel<P, float>(p, t.vec, b_access, ctas, stream);
  else if constexpr (P == CorePrecision::f64) launch_row_kernel<P, double>(p, t.vec, b_access, ctas, stream);
  else if (args.c_type == SPARSETC_VALUE_F32) launch_row_kernel<P, float>(p, t.vec, b_access, ctas, stream);
  else launch_row_kernel<P, Store>(p, t.vec, b_access, ctas, stream);
}

}  // namespace sparsetc::detail::cudacore
