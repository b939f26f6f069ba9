// core/half.hpp: bit-exact binary16 / bfloat16 conversions, checked exhaustively and against a
// slow reference that rounds by exact comparisons with the two neighbouring representable values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/half.hpp"
#include "test_support.hpp"

namespace {

using namespace sparsetc::detail;
using sparsetc_test::fresh_seed;

uint64_t double_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// Value of a binary16 pattern from the IEEE definition, independently of half_to_float.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
  if (e == 0) return s * m * std::ldexp(1.0, -24);
  return s * (1024 + m) * std::ldexp(1.0, e - 25);
}

// Value of a bfloat16 pattern from its definition (1 sign, 8 exponent, 7 mantissa bits).
double bf16_value(uint16_t b) {
  const int e = (b >> 7) & 0xff, m = b & 0x7f;
  const double s = (b & 0x8000) ? -1.0 : 1.0;
  if (e == 255) return m ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
  if (e == 0) return s * m * std::ldexp(1.0, -133);
  return s * (128 + m) * std::ldexp(1.0, e - 134);
}

// Reference rounding: the non-negative finite patterns 0..max_pattern are increasing in value;
// the pattern after max_pattern (Inf) stands for the next value an unbounded exponent would give
// (`beyond`), which decides overflow. Nearest by comparison with the exact midpoint (the sum of
// two neighbours has few significant bits, so it is exact in double), ties to the even pattern.
struct Reference {
  std::vector<double> values;  // values[p] for p = 0..max_pattern, then `beyond`
  uint16_t round(double d) const {
    const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
    const double a = std::fabs(d);
    if (std::isinf(a)) return uint16_t(sign | (values.size() - 1));
    // Largest p with values[p] <= a.
    const size_t p = size_t(std::upper_bound(values.begin(), values.end(), a) - values.begin()) - 1;
    if (values[p] == a || p + 1 == values.size()) return uint16_t(sign | p);
    const double mid = (values[p] + values[p + 1]) / 2;
    size_t r;
    if (a < mid) r = p;
    else if (a > mid) r = p + 1;
    else r = (p % 2 == 0) ? p : p + 1;
    return uint16_t(sign | r);
  }
};

const Reference& half_reference() {
  static const Reference ref = [] {
    Reference r;
    for (uint16_t p = 0; p <= 0x7bff; ++p) r.values.push_back(half_value(p));
    r.values.push_back(65536.0);  // 2^16: where the exponent would go next
    return r;
  }();
  return ref;
}

const Reference& bf16_reference() {
  static const Reference ref = [] {
    Reference r;
    for (uint16_t p = 0; p <= 0x7f7f; ++p) r.values.push_back(bf16_value(p));
    r.values.push_back(std::ldexp(1.0, 128));
    return r;
  }();
  return ref;
}

TEST(Half, ReferenceIsSane) {
  const Reference& h = half_reference();
  EXPECT_EQ(h.values[0x7bff], 65504.0);
  EXPECT_EQ(h.values[0x3c00], 1.0);
  EXPECT_EQ(h.values[1], std::ldexp(1.0, -24));
  EXPECT_TRUE(std::is_sorted(h.values.begin(), h.values.end()));
  const Reference& b = bf16_reference();
  EXPECT_EQ(b.values[0x7f7f], kBfloat16Max);
  EXPECT_EQ(b.values[0x3f80], 1.0);
  EXPECT_TRUE(std::is_sorted(b.values.begin(), b.values.end()));
}

TEST(Half, AllPatternsWidenExactly) {
  for (uint32_t p = 0; p < 65536; ++p) {
    const uint16_t h = uint16_t(p);
    const float f = half_to_float(h);
    const double want = half_value(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << p;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << p;
      ASSERT_EQ((float_bits(f) >> 13) & 0x3ffu, h & 0x3ffu) << "payload kept, " << std::hex << p;
    } else {
      ASSERT_EQ(double(f), want) << std::hex << p;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << p;
    }
  }
}

TEST(Half, AllPatternsRoundTrip) {
  for (uint32_t p = 0; p < 65536; ++p) {
    const uint16_t h = uint16_t(p);
    const uint16_t back = double_to_half(double(half_to_float(h)));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (nan) {
      ASSERT_EQ(back, h | 0x0200) << "NaN comes back quiet with its sign and payload, " << std::hex << p;
    } else {
      ASSERT_EQ(back, h) << std::hex << p;
    }
  }
}

TEST(Half, TiesToEven) {
  const double u = std::ldexp(1.0, -10);  // ulp at 1
  EXPECT_EQ(double_to_half(1.0 + u / 2), 0x3c00);      // tie, even is 1.0
  EXPECT_EQ(double_to_half(1.0 + 3 * u / 2), 0x3c02);  // tie, even is 1 + 2u
  EXPECT_EQ(double_to_half(std::nextafter(1.0 + u / 2, 2.0)), 0x3c01);
  EXPECT_EQ(double_to_half(std::nextafter(1.0 + 3 * u / 2, 0.0)), 0x3c01);
  EXPECT_EQ(double_to_half(-(1.0 + u / 2)), 0xbc00);
  EXPECT_EQ(double_to_half(2048.0 + 1.0), 0x6800);  // 2049 between 2048 and 2050: even is 2048
  EXPECT_EQ(double_to_half(2048.0 + 3.0), 0x6802);  // 2051 between 2050 and 2052: even is 2052
}

TEST(Half, Subnormals) {
  const double s = std::ldexp(1.0, -24);  // smallest subnormal
  EXPECT_EQ(double_to_half(s), 0x0001);
  EXPECT_EQ(double_to_half(s / 2), 0x0000);  // tie with zero: even is zero
  EXPECT_EQ(double_to_half(std::nextafter(s / 2, 1.0)), 0x0001);
  EXPECT_EQ(double_to_half(-s / 2), 0x8000);  // negative zero
  EXPECT_EQ(double_to_half(1.5 * s), 0x0002);
  EXPECT_EQ(double_to_half(2.5 * s), 0x0002);
  EXPECT_EQ(double_to_half(1023 * s), 0x03ff);              // largest subnormal
  EXPECT_EQ(double_to_half(1023.5 * s), 0x0400);            // tie to even: smallest normal
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(half_to_float(0x0001), float(s));
  EXPECT_EQ(half_to_float(0x83ff), -float(1023 * s));
}

TEST(Half, OverflowThreshold) {
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);
  EXPECT_EQ(double_to_half(65519.99), 0x7bff);
  EXPECT_EQ(double_to_half(std::nextafter(65520.0, 0.0)), 0x7bff);
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);  // tie between 65504 and "65536": even is Inf
  EXPECT_EQ(double_to_half(-65520.0), 0xfc00);
  EXPECT_EQ(double_to_half(1e300), 0x7c00);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::infinity()), 0x7c00);
  EXPECT_EQ(double_to_half(-std::numeric_limits<double>::infinity()), 0xfc00);
  EXPECT_EQ(double_to_half(std::nan("")) & 0x7e00, 0x7e00);
  EXPECT_EQ(double_to_half(-std::numeric_limits<double>::quiet_NaN()) & 0xfe00, 0xfe00);
}

// Random doubles across the whole half range and beyond, plus points next to every kind of
// midpoint, against the reference.
TEST(Half, RandomDoublesMatchReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const Reference& ref = half_reference();
  std::uniform_int_distribution<int> exponent(-27, 17);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 400000; ++i) {
    double d = std::ldexp(mantissa(rng), exponent(rng));
    if (rng() & 1) d = -d;
    ASSERT_EQ(double_to_half(d), ref.round(d)) << std::hexfloat << d;
  }
  std::uniform_int_distribution<int> pattern(0, 0x7bff);
  for (int i = 0; i < 200000; ++i) {
    const size_t p = size_t(pattern(rng));
    const double mid = (ref.values[p] + ref.values[p + 1]) / 2;
    for (double d : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), ref.values[p]}) {
      ASSERT_EQ(double_to_half(d), ref.round(d)) << std::hexfloat << d;
      ASSERT_EQ(double_to_half(-d), ref.round(-d)) << std::hexfloat << -d;
    }
  }
}

TEST(Bfloat16, AllPatternsWidenAndRoundTrip) {
  for (uint32_t p = 0; p < 65536; ++p) {
    const uint16_t b = uint16_t(p);
    const float f = bfloat16_to_float(b);
    ASSERT_EQ(float_bits(f), uint32_t(b) << 16) << std::hex << p;
    const double want = bf16_value(b);
    const bool nan = std::isnan(want);
    if (!nan) {
      ASSERT_EQ(double(f), want) << std::hex << p;
    }
    const uint16_t expect = nan ? uint16_t(b | 0x40) : b;  // NaN: made quiet, sign and payload kept
    ASSERT_EQ(float_to_bfloat16(f), expect) << std::hex << p;
    ASSERT_EQ(double_to_bfloat16(double(f)), expect) << std::hex << p;
  }
}

TEST(Bfloat16, TiesToEven) {
  const float u = std::ldexp(1.0f, -7);
  EXPECT_EQ(float_to_bfloat16(1.0f + u / 2), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * u / 2), 0x3f82);
  EXPECT_EQ(float_to_bfloat16(std::nextafter(1.0f + u / 2, 2.0f)), 0x3f81);
  EXPECT_EQ(float_to_bfloat16(-(1.0f + u / 2)), 0xbf80);
  EXPECT_EQ(double_to_bfloat16(1.0 + u / 2), 0x3f80);
  EXPECT_EQ(double_to_bfloat16(1.0 + 3 * u / 2), 0x3f82);
  // Double rounding trap: just above the midpoint, but within half a float ulp of it, so that
  // float(value) is the midpoint itself and would tie to even the wrong way.
  EXPECT_EQ(double_to_bfloat16(1.0 + u / 2 + std::ldexp(1.0, -40)), 0x3f81);
  EXPECT_EQ(double_to_bfloat16(-(1.0 + u / 2 + std::ldexp(1.0, -40))), 0xbf81);
  EXPECT_EQ(double_to_bfloat16(1.0 + 3 * u / 2 - std::ldexp(1.0, -40)), 0x3f81);
  // Subnormals: bfloat16 keeps float's.
  EXPECT_EQ(float_to_bfloat16(std::ldexp(1.0f, -133)), 0x0001);
  EXPECT_EQ(double_to_bfloat16(std::ldexp(1.0, -134)), 0x0000);                           // tie: zero
  EXPECT_EQ(double_to_bfloat16(std::ldexp(1.0, -134) + std::ldexp(1.0, -170)), 0x0001);  // below float
  EXPECT_EQ(double_to_bfloat16(std::ldexp(3.0, -134)), 0x0002);
  EXPECT_EQ(double_to_bfloat16(-0.0), 0x8000);
  EXPECT_EQ(double_to_bfloat16(1e-300), 0x0000);
}

TEST(Bfloat16, OverflowThreshold) {
  const double threshold = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);  // max + half an ulp
  EXPECT_EQ(double_to_bfloat16(kBfloat16Max), 0x7f7f);
  EXPECT_EQ(double_to_bfloat16(std::nextafter(threshold, 0.0)), 0x7f7f);
  EXPECT_EQ(double_to_bfloat16(threshold), 0x7f80);
  EXPECT_EQ(double_to_bfloat16(std::nextafter(threshold, 1e300)), 0x7f80);
  EXPECT_EQ(double_to_bfloat16(3.4e38), 0x7f80);  // finite as a float, beyond bfloat16
  EXPECT_EQ(double_to_bfloat16(-3.4e38), 0xff80);
  EXPECT_EQ(double_to_bfloat16(1e300), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(float(threshold)), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(std::nextafter(float(threshold), 0.0f)), 0x7f7f);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(double_to_bfloat16(-std::numeric_limits<double>::infinity()), 0xff80);
  EXPECT_EQ(double_to_bfloat16(std::nan("")) & 0x7fc0, 0x7fc0);
  EXPECT_EQ(double_to_bfloat16(-std::numeric_limits<double>::quiet_NaN()), 0xffc0);
}

TEST(Bfloat16, RandomValuesMatchReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const Reference& ref = bf16_reference();
  std::uniform_int_distribution<int> exponent(-140, 129);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 400000; ++i) {
    double d = std::ldexp(mantissa(rng), exponent(rng));
    if (rng() & 1) d = -d;
    ASSERT_EQ(double_to_bfloat16(d), ref.round(d)) << std::hexfloat << d;
    const float f = float(d);
    ASSERT_EQ(float_to_bfloat16(f), ref.round(double(f))) << std::hexfloat << f;
  }
  std::uniform_int_distribution<int> pattern(0, 0x7f7f);
  for (int i = 0; i < 200000; ++i) {
    const size_t p = size_t(pattern(rng));
    const double mid = (ref.values[p] + ref.values[p + 1]) / 2;
    // Doubles next to the midpoint (the double-rounding cases) and floats next to it.
    for (double d : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300), ref.values[p],
                     double(std::nextafter(float(mid), 0.0f)), double(std::nextafter(float(mid), 1e30f))}) {
      ASSERT_EQ(double_to_bfloat16(d), ref.round(d)) << std::hexfloat << d;
      ASSERT_EQ(double_to_bfloat16(-d), ref.round(-d)) << std::hexfloat << -d;
      if (double(float(d)) == d && !std::isinf(float(d))) {
        ASSERT_EQ(float_to_bfloat16(float(d)), ref.round(d)) << std::hexfloat << d;
      }
    }
  }
}

TEST(Bfloat16, NaNPayloadFromDouble) {
  // A double NaN keeps its sign and top payload bits and comes back quiet.
  double d;
  const uint64_t bits = 0xfffa800000000000ull;  // negative, quiet, mantissa 1010 1000 ...
  std::memcpy(&d, &bits, sizeof d);
  ASSERT_TRUE(std::isnan(d));
  EXPECT_EQ(double_to_bfloat16(d), 0xffd4);
  EXPECT_EQ(double_to_half(d), 0xfea0);
  EXPECT_EQ(double_to_half(d), 0xfe00 | uint16_t((double_bits(d) >> 42) & 0x3ff));
}

}  // namespace
