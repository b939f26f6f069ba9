// Element access of the CUDA-core SpMM kernels (.cu files only): the storage and accumulator type
// of each precision, 16-byte vector loads and stores, and conversions between storage, accumulator
// and C's type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"

namespace sparsetc::detail::cudacore {

constexpr int kThreads = 256;  // threads per CTA of every kernel here
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kUnroll = 4;  // entries each lane has in flight per step

template <CorePrecision P>
struct Precision;
template <>
struct Precision<CorePrecision::f32> {
  using Store = float;
  using Acc = float;
};
template <>
struct Precision<CorePrecision::f64> {
  using Store = double;
  using Acc = double;
};
template <>
struct Precision<CorePrecision::f16> {
  using Store = __half;
  using Acc = float;
};
template <>
struct Precision<CorePrecision::bf16> {
  using Store = __nv_bfloat16;
  using Acc = float;
};

// Elements of T in one 16-byte vector.
template <typename T>
constexpr int kVecOf = int(16 / sizeof(T));

// ---- conversions

__device__ __forceinline__ float to_acc(float x) { return x; }
__device__ __forceinline__ double to_acc(double x) { return x; }
__device__ __forceinline__ float to_acc(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename Out, typename Acc>
__device__ __forceinline__ Out from_acc(Acc x) {
  if constexpr (std::is_same_v<Out, __half>) return __float2half_rn(float(x));
  else if constexpr (std::is_same_v<Out, __nv_bfloat16>) return __float2bfloat16_rn(float(x));
  else return Out(x);
}

// ---- loads: `Count` elements (a multiple of one 16-byte vector) from an aligned address

// Read-only data (A, B): through the non-coherent cache.
template <int Count, typename T, typename Acc>
__device__ __forceinline__ void load_vectors(const T* p, Acc (&out)[Count]) {
  static_assert((Count * sizeof(T)) % 16 == 0, "whole 16-byte vectors");
  constexpr int kPer = kVecOf<T>;
#pragma unroll
  for (int v = 0; v < Count / kPer; ++v) {
    const uint4 word = __ldg(reinterpret_cast<const uint4*>(p) + v);
    T elements[kPer];
    memcpy(elements, &word, 16);
#pragma unroll
    for (int i = 0; i < kPer; ++i) out[v * kPer + i] = to_acc(elements[i]);
  }
}

// One element of read-only data.
template <typename T>
__device__ __forceinline__ auto load_one(const T* p) {
  if constexpr (sizeof(T) == 2) {
    const unsigned short bits = __ldg(reinterpret_cast<const unsigned short*>(p));
    T x;
    memcpy(&x, &bits, 2);
    return to_acc(x);
  } else {
    return to_acc(__ldg(p));
  }
}

// C (read before it is written; plain loads, C may alias nothing the kernel reads otherwise).
template <int Count, typename T, typename Acc>
__device__ __forceinline__ void load_c_vectors(const T* p, Acc (&out)[Count]) {
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

// C, written once: streaming stores (evict first), so B keeps its place in L2.
template <int Count, typename T, typename Acc>
__device__ __forceinline__ void store_c_vectors(T* p, const Acc (&in)[Count]) {
  constexpr int kPer = kVecOf<T>;
#pragma unroll
  for (int v = 0; v < Count / kPer; ++v) {
    T elements[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) elements[i] = from_acc<T>(in[v * kPer + i]);
    uint4 word;
    memcpy(&word, elements, 16);
    __stcs(reinterpret_cast<uint4*>(p) + v, word);
  }
}

// ---- the epilogue: C = alpha * acc + beta * C for `count` columns from p (stride c_cs); the
// 16-byte path when `vector` (row-major, aligned) and the lane's columns are all inside C.
template <int V, typename Out, typename Acc>
__device__ __forceinline__ void write_c(Out* p, int64_t c_cs, int count, bool vector, const Acc (&acc)[V], Acc alpha,
                                        Acc beta) {
  if constexpr ((V * sizeof(Out)) % 16 == 0) {
    if (vector && count == V) {
      Acc result[V];
      if (beta != Acc(0)) {
        Acc old[V];
        load_c_vectors<V>(p, old);
#pragma unroll
        for (int i = 0; i < V; ++i) result[i] = alpha * acc[i] + beta * old[i];
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) result[i] = alpha * acc[i];
      }
      store_c_vectors<V>(p, result);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < V; ++i) {
    if (i < count) {
      Out* q = p + i * c_cs;
      const Acc value = beta != Acc(0) ? alpha * acc[i] + beta * to_acc(*q) : alpha * acc[i];
      *q = from_acc<Out>(value);
    }
  }
}

// Sums acc over the lanes that share a lane's columns: lanes lane ^ (lanes_n << t) for the
// k-slices of a group of 2^group_log lanes. Every lane of the warp must call it.
template <int V, typename Acc>
__device__ __forceinline__ void reduce_slices(Acc (&acc)[V], int lanes_n_log, int group_log) {
  for (int offset = 1 << lanes_n_log; offset < (1 << group_log); offset <<= 1) {
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] += __shfl_xor_sync(kFullMask, acc[i], offset);
  }
}

// The last position p in [lo, hi) with a[p] <= key, for a[lo] <= key.
__device__ __forceinline__ int64_t last_not_above(const int64_t* a, int64_t lo, int64_t hi, int64_t key) {
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) >> 1;
    if (__ldg(a + mid) <= key) lo = mid;
    else hi = mid;
  }
  return lo;
}

}  // namespace sparsetc::detail::cudacore
