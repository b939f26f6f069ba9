// The B-stationary kernel (tiled DCSR) and its launch, instantiated once per precision in
// tiled_spmm_<precision>.cu.
//
// CTA b works on column tile b / items of C and on item b % items: a strip and a run of its row
// segments (a budget of segments plus entries, found by two binary searches over the monotone
// cost q + row_ptr[q]). Consecutive CTAs walk all strips of one column tile before the next tile
// (the paper's column-major traversal: the C tile being accumulated stays in L2). The CTA copies
// the strip's B tile (strip_width rows x tile columns, zero past K and N) into shared memory once,
// then groups of lanes take one row segment each, as in the C-stationary kernel, and add
// alpha * (their sum) into C with atomics (16-byte float4 atomics on sm_90 where C allows).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/cuda_core/core_values.cuh"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "gpu/spmm/cuda_core/row_kernel.cuh"

namespace sparsetc::detail::cudacore {

// B and C of a B-stationary multiply as its kernels address them.
template <typename Acc>
struct DenseTileArgs {
  int64_t n = 0;
  const void* B = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  bool b_col_major = false;
  bool b_vec = false;  // row-major B with 16-byte aligned rows: the tile is copied in 16-byte vectors
  void* C = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  bool c_vec = false;  // row-major C with 16-byte aligned rows: 16-byte atomics
  Acc alpha = 0;
};

template <typename Store, typename Acc>
DenseTileArgs<Acc> dense_tile_args(const CoreDenseArgs& args) {
  const bool c_row = args.c_order == SPARSETC_ORDER_ROW, b_row = args.b_order == SPARSETC_ORDER_ROW;
  DenseTileArgs<Acc> d;
  d.n = args.n;
  d.B = args.B;
  d.b_rs = b_row ? args.ldb : 1;
  d.b_cs = b_row ? 1 : args.ldb;
  d.b_col_major = !b_row;
  d.b_vec = b_row && aligned16(args.B) && (args.ldb * int64_t(sizeof(Store))) % 16 == 0;
  d.C = args.C;
  d.c_rs = c_row ? args.ldc : 1;
  d.c_cs = c_row ? 1 : args.ldc;
  d.c_vec = c_row && aligned16(args.C) && (args.ldc * int64_t(sizeof(Acc))) % 16 == 0;
  d.alpha = Acc(args.alpha);
  return d;
}

template <typename Acc>
struct TiledParams {
  int64_t strips = 0;
  int strip_width = 0;
  const int64_t* strip_ptr = nullptr;
  const int32_t* row_idx = nullptr;
  const int64_t* row_ptr = nullptr;
  const int32_t* col_idx = nullptr;
  const void* values = nullptr;
  const int64_t* item_ptr = nullptr;
  int64_t items = 0, budget = 0;
  int64_t k = 0;
  int lanes_n_log = 0, lanes_k_log = 0;
  DenseTileArgs<Acc> d;
};

// The raw bits of a storage type (the B tile is copied without conversion).
template <int Bytes>
struct BitsOf;
template <>
struct BitsOf<2> {
  using type = unsigned short;
};
template <>
struct BitsOf<4> {
  using type = unsigned int;
};
template <>
struct BitsOf<8> {
  using type = unsigned long long;
};

// The first q in [lo, hi] with q + row_ptr[q] >= target (hi when none).
__device__ __forceinline__ int64_t first_cost_at_least(const int64_t* row_ptr, int64_t lo, int64_t hi,
                                                       int64_t target) {
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (mid + __ldg(row_ptr + mid) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

template <int Count, typename T, typename Acc>
__device__ __forceinline__ void load_shared_vectors(const T* p, Acc (&out)[Count]) {
  constexpr int kPer = kVecOf<T>;
#pragma unroll
  for (int v = 0; v < Count / kPer; ++v) {
    const uint4 word = reinterpret_cast<const uint4*>(p)[v];
    T elements[kPer];
    memcpy(elements, &word, 16);
#pragma unroll
    for (int i = 0; i < kPer; ++i) out[v * kPer + i] = to_acc(elements[i]);
  }
}

// C[columns] += alpha * acc for `count` columns from p (stride c_cs).
template <int V, typename Out, typename Acc>
__device__ __forceinline__ void add_to_c(Out* p, int64_t c_cs, int count, bool vector, const Acc (&acc)[V],
                                         Acc alpha) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (std::is_same_v<Out, float> && V % 4 == 0) {
    if (vector && count == V) {
#pragma unroll
      for (int v = 0; v < V / 4; ++v)
        atomicAdd(reinterpret_cast<float4*>(p) + v, make_float4(alpha * acc[4 * v], alpha * acc[4 * v + 1],
                                                                alpha * acc[4 * v + 2], alpha * acc[4 * v + 3]));
      return;
    }
  }
#endif
#pragma unroll
  for (int i = 0; i < V; ++i)
    if (i < count) atomicAdd(p + i * c_cs, alpha * acc[i]);
}

// The B tile of a strip into shared memory, row-major: strip_width rows from k0 (k_here of them
// inside B) by span = V << ln_log columns from col0; zero past K and N. Every thread of the CTA
// calls it; the caller synchronises before reading the tile.
template <typename Bits, int V, bool kVecB, typename Acc>
__device__ __forceinline__ void load_b_tile(uint4* tile_words, const DenseTileArgs<Acc>& d, int strip_width,
                                            int ln_log, int64_t k0, int k_here, int64_t col0) {
  const Bits* B = static_cast<const Bits*>(d.B);
  const int64_t b_rs = d.b_rs, b_cs = d.b_cs, n = d.n;
  const bool b_col_major = d.b_col_major;
  const int span = V << ln_log;
  Bits* tile_b = reinterpret_cast<Bits*>(tile_words);
  if constexpr (kVecB) {
    const int total = strip_width << ln_log;  // 16-byte vectors
    for (int v = threadIdx.x; v < total; v += kThreads) {
      const int r = v >> ln_log;
      const int64_t c = col0 + int64_t(v & ((1 << ln_log) - 1)) * V;
      const Bits* src = B + (k0 + r) * b_rs + c;
      if (r < k_here && c + V <= n) {
        tile_words[v] = __ldg(reinterpret_cast<const uint4*>(src));
      } else {
        Bits e[V];
#pragma unroll
        for (int i = 0; i < V; ++i) e[i] = r < k_here && c + i < n ? __ldg(src + i) : Bits(0);
        memcpy(&tile_words[v], e, 16);
      }
    }
  } else {
    const int total = strip_width * span;
    for (int e = threadIdx.x; e < total; e += kThreads) {
      // Consecutive threads on consecutive addresses of B: along columns of a column-major B.
      const int r = b_col_major ? e % strip_width : e / span;
      const int c = b_col_major ? e / strip_width : e % span;
      tile_b[r * span + c] = r < k_here && col0 + c < n ? __ldg(B + (k0 + r) * b_rs + (col0 + c) * b_cs) : Bits(0);
    }
  }
}

// acc += a(e) * (row col(e) of the B tile) over e = begin + ks, begin + ks + lanes_k, ... < end,
// kUnroll entries in flight. Entries supplies col(e) (the tile row) and value(e) (as Acc).
template <int V, typename Store, typename Acc, typename Entries>
__device__ __forceinline__ void accumulate_segment(Acc (&acc)[V], int64_t begin, int64_t end, int ks, int lanes_k,
                                                   const Store* tile_cols, int span, const Entries& entries) {
  for (int64_t j = begin + ks; j < end; j += int64_t(lanes_k) * kUnroll) {
    int r[kUnroll];
    Acc a[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = j + int64_t(u) * lanes_k;
      r[u] = e < end ? entries.col(e) : -1;
      a[u] = e < end ? entries.value(e) : Acc(0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (r[u] >= 0) {
        Acc b[V];
        load_shared_vectors<V>(tile_cols + r[u] * span, b);
#pragma unroll
        for (int i = 0; i < V; ++i) acc[i] = madd(a[u], b[i], acc[i]);
      }
    }
  }
}

// Entries of the stored tiled DCSR (global memory, read through the texture path).
template <typename Store>
struct GlobalEntries {
  const int32_t* col_idx;
  const Store* values;
  int64_t k0;  // first column of the strip
  __device__ __forceinline__ int col(int64_t e) const { return int(__ldg(col_idx + e) - k0); }
  __device__ __forceinline__ auto value(int64_t e) const { return load_one(values + e); }
};

// Row segments of the stored tiled DCSR: segment q is row row(q), entries [begin(q), end(q)).
struct GlobalSegments {
  const int64_t* row_ptr;
  const int32_t* row_idx;
  __device__ __forceinline__ int64_t begin(int64_t q) const { return __ldg(row_ptr + q); }
  __device__ __forceinline__ int64_t end(int64_t q) const { return __ldg(row_ptr + q + 1); }
  __device__ __forceinline__ int64_t row(int64_t q) const { return __ldg(row_idx + q); }
};

// The multiply of a B-stationary CTA once its B tile is in shared memory: groups of lanes take
// segments qa..qb-1 one each (2^lanes_k_log lanes across a segment's entries, 2^ln_log across the
// tile's columns), sum them against the tile and add alpha * sum into C's rows with atomics.
template <int V, typename Store, typename Acc, typename Segments, typename Entries>
__device__ __forceinline__ void multiply_segments(const uint4* tile_words, int ln_log, int lanes_k_log, int64_t qa,
                                                  int64_t qb, int64_t col0, const DenseTileArgs<Acc>& d,
                                                  const Segments& segments, const Entries& entries) {
  Acc* C = static_cast<Acc*>(d.C);
  const int64_t n = d.n;
  const int span = V << ln_log;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int group_log = ln_log + lanes_k_log;
  const int group_rows = 32 >> group_log;
  const int group = lane >> group_log;
  const int ks = (lane & ((1 << group_log) - 1)) >> ln_log;
  const int ln = lane & ((1 << ln_log) - 1);
  const int lanes_k = 1 << lanes_k_log;
  const int64_t c0 = col0 + int64_t(ln) * V;
  const int count = c0 < n ? int(min(int64_t(V), n - c0)) : 0;
  const Store* tile_cols = reinterpret_cast<const Store*>(tile_words) + ln * V;
  for (int64_t base = qa + int64_t(warp) * group_rows; base < qb; base += int64_t(kWarps) * group_rows) {
    const int64_t q = base + group;
    const bool valid = q < qb;
    Acc acc[V];
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] = Acc(0);
    if (valid && count > 0)
      accumulate_segment<V>(acc, segments.begin(q), segments.end(q), ks, lanes_k, tile_cols, span, entries);
    reduce_slices(acc, ln_log, group_log);
    if (valid && ks == 0 && count > 0)
      add_to_c<V>(C + segments.row(q) * d.c_rs + c0 * d.c_cs, d.c_cs, count, d.c_vec, acc, d.alpha);
  }
}

template <CorePrecision P, bool kVecB>
__global__ void __launch_bounds__(kThreads) tiled_spmm_kernel(const TiledParams<typename Precision<P>::Acc> p) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  using Bits = typename BitsOf<sizeof(Store)>::type;
  constexpr int V = kVecOf<Store>;
  extern __shared__ uint4 tile_words[];
  __shared__ int64_t bounds[3];

  const int64_t tile = int64_t(blockIdx.x) / p.items, item = int64_t(blockIdx.x) % p.items;
  const int ln_log = p.lanes_n_log;
  const int span = V << ln_log;  // columns of the tile
  if (threadIdx.x == 0) {
    const int64_t s = last_not_above(p.item_ptr, 0, p.strips, item);
    const int64_t j = item - __ldg(p.item_ptr + s), items_here = __ldg(p.item_ptr + s + 1) - __ldg(p.item_ptr + s);
    const int64_t q0 = __ldg(p.strip_ptr + s), q1 = __ldg(p.strip_ptr + s + 1);
    const int64_t base = q0 + __ldg(p.row_ptr + q0);
    bounds[0] = s;
    bounds[1] = j == 0 ? q0 : first_cost_at_least(p.row_ptr, q0, q1, base + j * p.budget);
    bounds[2] = j + 1 == items_here ? q1 : first_cost_at_least(p.row_ptr, q0, q1, base + (j + 1) * p.budget);
  }
  __syncthreads();
  const int64_t k0 = bounds[0] * p.strip_width, qa = bounds[1], qb = bounds[2];
  const int k_here = int(min(int64_t(p.strip_width), p.k - k0));
  const int64_t col0 = tile * span;

  load_b_tile<Bits, V, kVecB>(tile_words, p.d, p.strip_width, ln_log, k0, k_here, col0);
  __syncthreads();

  multiply_segments<V, Store>(tile_words, ln_log, p.lanes_k_log, qa, qb, col0, p.d,
                              GlobalSegments{p.row_ptr, p.row_idx},
                              GlobalEntries<Store>{p.col_idx, static_cast<const Store*>(p.values), k0});
}

// C = beta * C over `lines` lines of `inner` elements, ld apart (beta == 0: C = 0, C not read).
template <typename Out, typename Acc>
__global__ void __launch_bounds__(kThreads) scale_c_kernel(Out* C, int64_t lines, int64_t inner, int64_t ld, Acc beta) {
  const int64_t total = lines * inner;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t line = ld == inner ? 0 : i / inner;
    Out* q = C + (ld == inner ? i : line * ld + (i - line * inner));
    *q = beta == Acc(0) ? Out(0) : Out(beta * *q);
  }
}

// C = beta * C for the B-stationary kernels, which then add their partial sums into it.
template <typename Acc>
void scale_c(const CoreDenseArgs& args, int64_t rows, cudaStream_t stream) {
  const bool c_row = args.c_order == SPARSETC_ORDER_ROW;
  const int64_t lines = c_row ? rows : args.n, inner = c_row ? args.n : rows;
  const int64_t blocks = (lines * inner + int64_t(kThreads) * 4 - 1) / (int64_t(kThreads) * 4);
  scale_c_kernel<Acc, Acc><<<unsigned(std::min<int64_t>(blocks, 65536 * 8)), kThreads, 0, stream>>>(
      static_cast<Acc*>(args.C), lines, inner, args.ldc, Acc(args.beta));
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <CorePrecision P>
void run_tiled_spmm(const CoreTiled& a, const TiledSchedule& s, const CoreDenseArgs& args, cudaStream_t stream) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  constexpr int V = kVecOf<Store>;
  if (a.rows == 0 || args.n == 0) return;
  scale_c<Acc>(args, a.rows, stream);
  if (s.items == 0 || a.nnz == 0) return;
  const CoreColumnTiling& t = s.tiling;
  TiledParams<Acc> p;
  p.strips = a.strips;
  p.strip_width = int(a.strip_width);
  p.strip_ptr = a.strip_ptr;
  p.row_idx = a.row_idx;
  p.row_ptr = a.row_ptr;
  p.col_idx = a.col_idx;
  p.values = a.values;
  p.item_ptr = s.item_ptr.as<const int64_t>();
  p.items = s.items;
  p.budget = s.budget;
  p.k = a.cols;
  p.lanes_n_log = t.lanes_n_log;
  p.lanes_k_log = s.lanes_k_log;
  p.d = dense_tile_args<Store, Acc>(args);
  const size_t smem = size_t(a.strip_width) * size_t(int64_t(V) << t.lanes_n_log) * sizeof(Store);
  require(smem <= 48 * 1024, SPARSETC_STATUS_NOT_SUPPORTED, "tiled DCSR SpMM: a B tile of ", a.strip_width,
          " rows needs ", smem, " bytes of shared memory (at most 49152)");
  const int64_t ctas = s.items * t.tiles;
  require(ctas <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR SpMM: ", ctas, " CTAs exceed one launch");
  if (p.d.b_vec) tiled_spmm_kernel<P, true><<<unsigned(ctas), kThreads, smem, stream>>>(p);
  else tiled_spmm_kernel<P, false><<<unsigned(ctas), kThreads, smem, stream>>>(p);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace sparsetc::detail::cudacore
