// The end of a CTA's work: C = alpha * acc + beta * C for its tile (beta == 0: C is never read),
// through the row map, in C's type and order. Bounds: rows < m, columns < n. Accumulator pairs of
// adjacent columns go out as one 2-element store where C allows it (row-major, aligned, even ldc).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gpu/spmm/bcsr_tc/tc_launch.hpp"

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

}  // namespace sparsetc::detail::tc
