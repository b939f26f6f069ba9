// Division of values below 2^31 by a divisor fixed before a launch: a multiply-high, an add and a
// shift instead of the ~20-instruction integer division (Granlund and Montgomery, "Division by
// invariant integers using multiplication", PLDI 1994). With l = ceil(log2 d) and
// m = floor(2^32 (2^l - d) / d) + 1, n / d = (mulhi(m, n) + n) >> l; the sum stays below 2^32
// since mulhi(m, n) <= n < 2^31. A power of two gets m = 1, so mulhi(m, n) = 0.
//
// Usable from host and device code (the host path is the unit tests' reference).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SPARSETC_DIVIDER_HD __host__ __device__
#else
#define SPARSETC_DIVIDER_HD
#endif

namespace sparsetc::detail::gpuconv {

struct FastDivider {
  uint32_t divisor = 1, multiplier = 1, shift = 0;

  FastDivider() = default;
  // d in [1, 2^31].
  SPARSETC_DIVIDER_HD constexpr explicit FastDivider(uint32_t d) : divisor(d) {
    while ((uint64_t(1) << shift) < d) ++shift;
    multiplier = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }

  // n / divisor for n < 2^31.
  SPARSETC_DIVIDER_HD uint32_t divide(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(multiplier, n);
#else
    const uint32_t high = uint32_t((uint64_t(multiplier) * n) >> 32);
#endif
    return (high + n) >> shift;
  }

  // n - quotient * divisor, for quotient = divide(n).
  SPARSETC_DIVIDER_HD uint32_t remainder(uint32_t n, uint32_t quotient) const { return n - quotient * divisor; }
};

}  // namespace sparsetc::detail::gpuconv

#undef SPARSETC_DIVIDER_HD
