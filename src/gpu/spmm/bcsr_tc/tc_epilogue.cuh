// The end of a CTA's work: split items combine their chunks' partial tiles (combine_split_chunks),
// then C = alpha * acc + beta * C for the tile (store_tile; beta == 0: C is never read), through the
// row map, in C's type and order. Bounds: rows < m, columns < n. Accumulator pairs of adjacent
// columns go out as one 2-element store where C allows it (row-major, aligned, even ldc); that path
// is specialised per C type and beta, the element-wise one (column-major or unaligned C) is not.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "gpu/spmm/bcsr_tc/tc_launch.hpp"
#include "gpu/spmm/bcsr_tc/tc_schedule.hpp"

namespace sparsetc::detail::tc {

template <typename Acc>
__device__ __forceinline__ Acc scaled(Acc acc, Acc alpha, Acc beta, Acc c) {
  return beta != Acc(0) ? alpha * acc + beta * c : alpha * acc;
}

template <typename Acc>
__device__ __forceinline__ void store_c(const TcKernelParams& p, int64_t c_row, int64_t col, Acc acc, Acc alpha,
                                        Acc beta) {
  const int64_t index = p.c_col_major ? col * p.ldc + c_row : c_row * p.ldc + col;
  const bool read = beta != Acc(0);
  switch (p.c_type) {
    case SPARSETC_VALUE_F32: {
      float* c = static_cast<float*>(p.c) + index;
      *c = float(scaled(acc, alpha, beta, read ? Acc(*c) : Acc(0)));
      break;
    }
    case SPARSETC_VALUE_F64: {
      double* c = static_cast<double*>(p.c) + index;
      *c = double(scaled(acc, alpha, beta, read ? Acc(*c) : Acc(0)));
      break;
    }
    case SPARSETC_VALUE_F16: {
      __half* c = static_cast<__half*>(p.c) + index;
      *c = __float2half_rn(float(scaled(acc, alpha, beta, read ? Acc(__half2float(*c)) : Acc(0))));
      break;
    }
    default: {  // SPARSETC_VALUE_BF16
      __nv_bfloat16* c = static_cast<__nv_bfloat16*>(p.c) + index;
      *c = __float2bfloat16_rn(float(scaled(acc, alpha, beta, read ? Acc(__bfloat162float(*c)) : Acc(0))));
      break;
    }
  }
}

// A split item stores its partial tile (accumulator type) to workspace slot first_slot + chunk; the
// last CTA of its panel to arrive (per N tile) sums every chunk's tile in chunk order, its own too,
// so the bits do not depend on which CTA is last. Returns whether this CTA goes on to store C.
// Called by every thread of the CTA (it has barriers); `holds`: this thread's acc is part of the
// tile, as the kRB x kNT accumulators of warp `warp_slot` (kTileAccs accumulators per CTA tile).
template <class T, int kRB, int kNT, int64_t kTileAccs>
__device__ __forceinline__ bool combine_split_chunks(const TcKernelParams& p, const TcWorkItem& item, int64_t n_tile,
                                                     typename T::AccTile (&acc)[kRB][kNT], bool holds, int warp_slot,
                                                     int lane, int& last_to_arrive) {
  using Acc = typename T::Acc;
  constexpr int kAcc = T::kAccPerTile, kPerThread = kRB * kNT * kAcc;
  Acc* partials = static_cast<Acc*>(p.partials);
  auto tile_of = [&](int64_t chunk) {
    return partials + ((item.first_slot + chunk) * p.n_tiles + n_tile) * kTileAccs +
           int64_t(warp_slot) * kPerThread * 32 + lane;
  };
  if (holds) {
    Acc* mine = tile_of(item.chunk);
#pragma unroll
    for (int rb = 0; rb < kRB; ++rb)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int a = 0; a < kAcc; ++a) __stcg(mine + ((rb * kNT + nt) * kAcc + a) * 32, acc[rb][nt].v[a]);
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* counter = p.counters + int64_t(item.split_index) * p.n_tiles + n_tile;
    last_to_arrive = atomicAdd(counter, 1u) == unsigned(item.chunks - 1);
    // Every chunk has arrived: zero again for the next multiply (TcSpmmArgs::counters).
    if (last_to_arrive) *counter = 0u;
  }
  __syncthreads();
  if (!last_to_arrive) return false;
  __threadfence();
  if (holds) {
#pragma unroll
    for (int rb = 0; rb < kRB; ++rb)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) acc[rb][nt] = typename T::AccTile{};
#pragma unroll 1
    for (int c = 0; c < item.chunks; ++c) {
      const Acc* part = tile_of(c);
#pragma unroll
      for (int rb = 0; rb < kRB; ++rb)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int a = 0; a < kAcc; ++a) acc[rb][nt].v[a] += __ldcg(part + ((rb * kNT + nt) * kAcc + a) * 32);
    }
  }
  return true;
}

// alpha * v (+ beta * old where C is read: kRead, beta != 0), fixed at compile time.
template <bool kRead, typename Acc>
__device__ __forceinline__ Acc scaled_as(Acc v, Acc alpha, Acc beta, Acc old) {
  return kRead ? alpha * v + beta * old : alpha * v;
}

// One element of a row of C in its type Out.
template <typename Out, bool kRead, typename Acc>
__device__ __forceinline__ void store_one(Out* c, Acc v, Acc alpha, Acc beta) {
  if constexpr (std::is_same_v<Out, __half>) {
    *c = __float2half_rn(float(scaled_as<kRead>(v, alpha, beta, kRead ? Acc(__half2float(*c)) : Acc(0))));
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    *c = __float2bfloat16_rn(float(scaled_as<kRead>(v, alpha, beta, kRead ? Acc(__bfloat162float(*c)) : Acc(0))));
  } else {
    *c = Out(scaled_as<kRead>(v, alpha, beta, kRead ? Acc(*c) : Acc(0)));
  }
}

// Two adjacent elements of a row of C in its type Out, as one store (c aligned to two elements).
template <typename Out, bool kRead, typename Acc>
__device__ __forceinline__ void store_two(Out* c, Acc v0, Acc v1, Acc alpha, Acc beta) {
  if constexpr (std::is_same_v<Out, __half>) {
    const float2 old = kRead ? __half22float2(*reinterpret_cast<const __half2*>(c)) : make_float2(0.f, 0.f);
    *reinterpret_cast<__half2*>(c) = __floats2half2_rn(float(scaled_as<kRead>(v0, alpha, beta, Acc(old.x))),
                                                       float(scaled_as<kRead>(v1, alpha, beta, Acc(old.y))));
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    const float2 old =
        kRead ? __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(c)) : make_float2(0.f, 0.f);
    *reinterpret_cast<__nv_bfloat162*>(c) = __floats2bfloat162_rn(
        float(scaled_as<kRead>(v0, alpha, beta, Acc(old.x))), float(scaled_as<kRead>(v1, alpha, beta, Acc(old.y))));
  } else if constexpr (std::is_same_v<Out, float>) {
    const float2 old = kRead ? *reinterpret_cast<const float2*>(c) : make_float2(0.f, 0.f);
    *reinterpret_cast<float2*>(c) = make_float2(float(scaled_as<kRead>(v0, alpha, beta, Acc(old.x))),
                                                float(scaled_as<kRead>(v1, alpha, beta, Acc(old.y))));
  } else {
    const double2 old = kRead ? *reinterpret_cast<const double2*>(c) : make_double2(0.0, 0.0);
    *reinterpret_cast<double2*>(c) = make_double2(double(scaled_as<kRead>(v0, alpha, beta, Acc(old.x))),
                                                  double(scaled_as<kRead>(v1, alpha, beta, Acc(old.y))));
  }
}

// The tile of store_tile into row-major C whose rows take 2-element stores (p.c_pairs), in C's type
// Out with beta read or not fixed at compile time: a few instructions per store.
template <class T, int kRB, int kNT, typename Out, bool kRead>
__device__ __forceinline__ void store_tile_pairs(const TcKernelParams& p, const typename T::AccTile (&acc)[kRB][kNT],
                                                 int64_t row0, int64_t col0, int lane) {
  using Acc = typename T::Acc;
  const Acc alpha = Acc(p.alpha), beta = Acc(p.beta);
  Out* c = static_cast<Out*>(p.c);
#pragma unroll
  for (int rb = 0; rb < kRB; ++rb) {
#pragma unroll
    for (int a = 0; a < T::kAccPerTile; a += 2) {  // accumulators a, a + 1: adjacent columns of one row
      const int64_t row = row0 + rb * T::kBlockH + T::acc_row(a, lane);
      if (row >= p.m) continue;
      Out* line = c + (p.row_map ? __ldg(p.row_map + row) : row) * p.ldc;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        const int64_t col = col0 + nt * 8 + T::acc_col(a, lane);
        if (col + 1 < p.n) store_two<Out, kRead>(line + col, acc[rb][nt].v[a], acc[rb][nt].v[a + 1], alpha, beta);
        else if (col < p.n) store_one<Out, kRead>(line + col, acc[rb][nt].v[a], alpha, beta);
      }
    }
  }
}

template <class T, int kRB, int kNT, bool kRead>
__device__ __forceinline__ void store_tile_pairs_as(const TcKernelParams& p, const typename T::AccTile (&acc)[kRB][kNT],
                                                    int64_t row0, int64_t col0, int lane) {
  if constexpr (std::is_same_v<typename T::Acc, double>) {
    store_tile_pairs<T, kRB, kNT, double, kRead>(p, acc, row0, col0, lane);  // f64: C is f64
  } else {
    switch (p.c_type) {
      case SPARSETC_VALUE_F32: store_tile_pairs<T, kRB, kNT, float, kRead>(p, acc, row0, col0, lane); break;
      case SPARSETC_VALUE_F16: store_tile_pairs<T, kRB, kNT, __half, kRead>(p, acc, row0, col0, lane); break;
      default: store_tile_pairs<T, kRB, kNT, __nv_bfloat16, kRead>(p, acc, row0, col0, lane); break;
    }
  }
}

// One warp's kRB block rows (from row row0 on) x kNT 8-column tiles (from column col0 on) to C.
// Row-major C with 2-element rows (the common case) takes one branch on C's type and beta for the
// whole tile: a branch per store made the epilogue the largest part of the narrow kernels' code,
// which each warp runs once, so every instruction was fetched cold (ncu on band hw64 at N = 32: 40%
// of the kernel's stall samples were instruction-fetch waits on these stores).
template <class T, int kRB, int kNT>
__device__ __forceinline__ void store_tile(const TcKernelParams& p, const typename T::AccTile (&acc)[kRB][kNT],
                                           int64_t row0, int64_t col0, int lane) {
  using Acc = typename T::Acc;
  if (p.c_pairs) {
    if (Acc(p.beta) != Acc(0)) store_tile_pairs_as<T, kRB, kNT, true>(p, acc, row0, col0, lane);
    else store_tile_pairs_as<T, kRB, kNT, false>(p, acc, row0, col0, lane);
    return;
  }
  const Acc alpha = Acc(p.alpha), beta = Acc(p.beta);
#pragma unroll
  for (int rb = 0; rb < kRB; ++rb) {
#pragma unroll
    for (int a = 0; a < T::kAccPerTile; a += 2) {
      const int64_t row = row0 + rb * T::kBlockH + T::acc_row(a, lane);
      if (row >= p.m) continue;
      const int64_t c_row = p.row_map ? __ldg(p.row_map + row) : row;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        const int64_t col = col0 + nt * 8 + T::acc_col(a, lane);
        if (col < p.n) store_c(p, c_row, col, acc[rb][nt].v[a], alpha, beta);
        if (col + 1 < p.n) store_c(p, c_row, col + 1, acc[rb][nt].v[a + 1], alpha, beta);
      }
    }
  }
}

}  // namespace sparsetc::detail::tc
