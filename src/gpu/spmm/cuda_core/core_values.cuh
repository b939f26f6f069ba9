// Element access of the CUDA-core SpMM kernels (.cu files only): the storage and accumulator type
// of each precision, 16-byte vector loads and stores, and conversions between storage, accumulator
// and C's type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "gpu/spmm/cuda_core/row_shape.hpp"

namespace sparsetc::detail::cudacore {

constexpr int kThreads = 256;  // threads per CTA of every kernel here
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

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

// ---- loads of read-only data (A, B) through the non-coherent cache

// V elements of T as loaded: whole 32-bit words, converted to the accumulator only where used. A
// half-precision packet keeps two elements per register, so a lane holds its loads in flight in
// half the registers of fp32 (the row kernel's occupancy depends on it).
template <typename T, int V>
struct Packet {
  static_assert((V * sizeof(T)) % 4 == 0, "whole 32-bit words");
  static constexpr int kWords = int(V * sizeof(T) / 4);
  uint32_t w[kWords];

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = 0;
  }
  // Element i as the accumulator type (i a compile-time constant after unrolling).
  __device__ __forceinline__ auto at(int i) const {
    if constexpr (std::is_same_v<T, float>) {
      return __uint_as_float(w[i]);
    } else if constexpr (std::is_same_v<T, double>) {
      return __hiloint2double(int(w[2 * i + 1]), int(w[2 * i]));
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      // bf16 is the upper half of an fp32: a shift or a mask, no conversion instruction.
      return __uint_as_float((i & 1) ? (w[i >> 1] & 0xFFFF0000u) : (w[i >> 1] << 16));
    } else {
      return __half2float(__ushort_as_half((unsigned short)(w[i >> 1] >> ((i & 1) * 16))));
    }
  }
  // Element i's bits from one scalar load.
  __device__ __forceinline__ void set_bits(int i, const T* p) {
    if constexpr (sizeof(T) == 2) {
      const uint32_t bits = __ldg(reinterpret_cast<const unsigned short*>(p));
      w[i >> 1] |= bits << ((i & 1) * 16);
    } else if constexpr (sizeof(T) == 4) {
      w[i] = __ldg(reinterpret_cast<const unsigned int*>(p));
    } else {
      const unsigned long long bits = __ldg(reinterpret_cast<const unsigned long long*>(p));
      w[2 * i] = uint32_t(bits);
      w[2 * i + 1] = uint32_t(bits >> 32);
    }
  }
};

// The packet from an address aligned to min(16, its size) bytes: 16-byte loads, or one of 8 bytes.
template <typename T, int V>
__device__ __forceinline__ void load_packet(Packet<T, V>& out, const T* p) {
  constexpr int kBytes = int(V * sizeof(T));
  static_assert(kBytes % 16 == 0 || kBytes == 8, "16-byte vectors or one 8-byte vector");
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (int v = 0; v < kBytes / 16; ++v) {
      const uint4 word = __ldg(reinterpret_cast<const uint4*>(p) + v);
      out.w[4 * v] = word.x;
      out.w[4 * v + 1] = word.y;
      out.w[4 * v + 2] = word.z;
      out.w[4 * v + 3] = word.w;
    }
  } else {
    const uint2 word = __ldg(reinterpret_cast<const uint2*>(p));
    out.w[0] = word.x;
    out.w[1] = word.y;
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

// ---- C: `Count` elements of T at an address aligned to the vector used: 16 bytes, or one vector
// of 8 (half-precision C with four columns per lane).

template <int Bytes>
struct VectorOf;
template <>
struct VectorOf<16> {
  using type = uint4;
};
template <>
struct VectorOf<8> {
  using type = uint2;
};

template <int Count, typename T>
constexpr int kCVectorBytes = (Count * sizeof(T)) % 16 == 0 ? 16 : (Count * sizeof(T)) % 8 == 0 ? 8 : 0;

// Read before it is written: plain loads (C may alias nothing the kernel reads otherwise).
template <int Count, typename T, typename Acc>
__device__ __forceinline__ void load_c_vectors(const T* p, Acc (&out)[Count]) {
  constexpr int kBytes = kCVectorBytes<Count, T>;
  constexpr int kPer = kBytes / int(sizeof(T));
  using Vector = typename VectorOf<kBytes>::type;
#pragma unroll
  for (int v = 0; v < Count / kPer; ++v) {
    const Vector word = reinterpret_cast<const Vector*>(p)[v];
    T elements[kPer];
    memcpy(elements, &word, kBytes);
#pragma unroll
    for (int i = 0; i < kPer; ++i) out[v * kPer + i] = to_acc(elements[i]);
  }
}

// Written once: streaming stores (evict first), so B keeps its place in L2.
template <int Count, typename T, typename Acc>
__device__ __forceinline__ void store_c_vectors(T* p, const Acc (&in)[Count]) {
  constexpr int kBytes = kCVectorBytes<Count, T>;
  constexpr int kPer = kBytes / int(sizeof(T));
  using Vector = typename VectorOf<kBytes>::type;
#pragma unroll
  for (int v = 0; v < Count / kPer; ++v) {
    T elements[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) elements[i] = from_acc<T>(in[v * kPer + i]);
    Vector word;
    memcpy(&word, elements, kBytes);
    __stcs(reinterpret_cast<Vector*>(p) + v, word);
  }
}

// ---- the epilogue: C = alpha * acc + beta * C for `count` columns from p (stride c_cs); the
// vector path (kCVectorBytes<V, Out>) when `vector` (row-major, aligned) and the lane's columns
// are all inside C.
template <int V, typename Out, typename Acc>
__device__ __forceinline__ void write_c(Out* p, int64_t c_cs, int count, bool vector, const Acc (&acc)[V], Acc alpha,
                                        Acc beta) {
  if constexpr (kCVectorBytes<V, Out> > 0) {
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
