// The end of a CTA's work: split items combine their chunks' partial tiles (combine_split_chunks),
// then C = alpha * acc + beta * C for the tile (store_tile; beta == 0: C is never read), through the
// row map, in C's type and order. Bounds: rows < m, columns < n. Accumulator pairs of adjacent
// columns go out as one 2-element store where C allows it (row-major, aligned, even ldc).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

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

// Columns col and col + 1 (col even, col < n) of one row.
template <typename Acc>
__device__ __forceinline__ void store_c_pair(const TcKernelParams& p, int64_t c_row, int64_t col, Acc a0, Acc a1,
                                             Acc alpha, Acc beta) {
  if (!p.c_pairs || col + 1 >= p.n) {
    store_c(p, c_row, col, a0, alpha, beta);
    if (col + 1 < p.n) store_c(p, c_row, col + 1, a1, alpha, beta);
    return;
  }
  const int64_t index = c_row * p.ldc + col;
  const bool read = beta != Acc(0);
  switch (p.c_type) {
    case SPARSETC_VALUE_F32: {
      float2* c = reinterpret_cast<float2*>(static_cast<float*>(p.c) + index);
      const float2 old = read ? *c : make_float2(0.f, 0.f);
      *c = make_float2(float(scaled(a0, alpha, beta, Acc(old.x))), float(scaled(a1, alpha, beta, Acc(old.y))));
      break;
    }
    case SPARSETC_VALUE_F64: {
      double2* c = reinterpret_cast<double2*>(static_cast<double*>(p.c) + index);
      const double2 old = read ? *c : make_double2(0.0, 0.0);
      *c = make_double2(double(scaled(a0, alpha, beta, Acc(old.x))), double(scaled(a1, alpha, beta, Acc(old.y))));
      break;
    }
    case SPARSETC_VALUE_F16: {
      __half2* c = reinterpret_cast<__half2*>(static_cast<__half*>(p.c) + index);
      const float2 old = read ? __half22float2(*c) : make_float2(0.f, 0.f);
      *c = __floats2half2_rn(float(scaled(a0, alpha, beta, Acc(old.x))), float(scaled(a1, alpha, beta, Acc(old.y))));
      break;
    }
    default: {
      __nv_bfloat162* c = reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(p.c) + index);
      const float2 old = read ? __bfloat1622float2(*c) : make_float2(0.f, 0.f);
      *c = __floats2bfloat162_rn(float(scaled(a0, alpha, beta, Acc(old.x))),
                                 float(scaled(a1, alpha, beta, Acc(old.y))));
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

// One warp's kRB block rows (from row row0 on) x kNT 8-column tiles (from column col0 on) to C.
template <class T, int kRB, int kNT>
__device__ __forceinline__ void store_tile(const TcKernelParams& p, const typename T::AccTile (&acc)[kRB][kNT],
                                           int64_t row0, int64_t col0, int lane) {
  using Acc = typename T::Acc;
  const Acc alpha = Acc(p.alpha), beta = Acc(p.beta);
#pragma unroll
  for (int rb = 0; rb < kRB; ++rb) {
#pragma unroll
    for (int a = 0; a < T::kAccPerTile; a += 2) {  // accumulators a, a + 1: adjacent columns of one row
      const int64_t row = row0 + rb * T::kBlockH + T::acc_row(a, lane);
      if (row >= p.m) continue;
      const int64_t c_row = p.row_map ? __ldg(p.row_map + row) : row;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        const int64_t col = col0 + nt * 8 + T::acc_col(a, lane);
        if (col < p.n) store_c_pair<Acc>(p, c_row, col, acc[rb][nt].v[a], acc[rb][nt].v[a + 1], alpha, beta);
      }
    }
  }
}

}  // namespace sparsetc::detail::tc
