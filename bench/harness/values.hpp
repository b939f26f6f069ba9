// Deterministic operand values, identical on the host (references) and the device (generation):
// the dense B is generated on the GPU and the host reference recomputes only the entries it needs.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <library_types.h>

#include <cstdint>

#if defined(__CUDACC__)
#define BENCH_HD __host__ __device__
#else
#define BENCH_HD
#endif

namespace bench {

BENCH_HD inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Entry (i, j) of a dense operand: uniform on [-1, 1) with 24 random bits, exact in float.
BENCH_HD inline float dense_value(uint64_t seed, int64_t i, int64_t j) {
  const uint64_t h = mix64(seed ^ mix64(uint64_t(i) * 0x100000001B3ull + uint64_t(j)));
  const int32_t m = int32_t(h >> 40) - (1 << 23);  // [-2^23, 2^23)
  return float(m) * (1.0f / 8388608.0f);
}

// Entry (i, j) of a sparse operand: ±[0.5, 1.5), the convention of sparsetc's generators. Keyed by
// position, so the transpose of a matrix gets the transposed values.
inline double sparse_value(uint64_t seed, int64_t i, int64_t j) {
  const uint64_t h = mix64(seed * 0xD6E8FEB86659FD93ull ^ mix64(uint64_t(i) * 0x100000001B3ull + uint64_t(j)));
  const double magnitude = 0.5 + double(h >> 40) * (1.0 / 16777216.0);
  return (h & 1) ? -magnitude : magnitude;
}

// Rounds a value the way the device copy of it is rounded (double -> float -> half/bf16, nearest).
inline double round_to(cudaDataType type, double x) {
  switch (type) {
    case CUDA_R_32F: return double(float(x));
    case CUDA_R_16F: return double(__half2float(__float2half_rn(float(x))));
    case CUDA_R_16BF: return double(__bfloat162float(__float2bfloat16_rn(float(x))));
    default: return x;
  }
}

inline size_t type_size(cudaDataType type) {
  switch (type) {
    case CUDA_R_64F: return 8;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    default: return 4;
  }
}

inline const char* type_name(cudaDataType type) {
  switch (type) {
    case CUDA_R_64F: return "f64";
    case CUDA_R_16F: return "f16";
    case CUDA_R_16BF: return "bf16";
    case CUDA_R_32F: return "f32";
    default: return "?";
  }
}

}  // namespace bench
