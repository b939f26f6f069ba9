// formats/values: loading and storing value arrays of every public value type, range checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/types.hpp"
#include "formats/values.hpp"
#include "test_support.hpp"

namespace {

using namespace sparsetc::detail;
using sparsetc_test::fresh_seed;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs f, expects an Error with this status and exactly this message.
template <typename F>
void expect_error(F&& f, sparsetc_status_t status, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
  }
}

template <typename V>
std::vector<V> store_load(const std::vector<V>& in, sparsetc_value_type_t type) {
  std::vector<unsigned char> bytes(in.size() * 8);
  store_values(in.data(), int64_t(in.size()), type, bytes.data());
  std::vector<V> out(in.size());
  load_values(bytes.data(), type, int64_t(in.size()), out.data());
  return out;
}

TEST(Values, LoadEveryType) {
  const std::vector<float> f32 = {1.5f, -2.25f, 0.0f, 3e38f};
  const std::vector<double> f64 = {1.5, -2.25, 1e300, 1e-300};
  const std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0xfc00};
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc000, 0x7f7f, 0x0001, 0xff80};
  std::vector<double> d(8);
  load_values(f32.data(), SPARSETC_VALUE_F32, 4, d.data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d[size_t(i)], double(f32[size_t(i)]));
  load_values(f64.data(), SPARSETC_VALUE_F64, 4, d.data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d[size_t(i)], f64[size_t(i)]);
  load_values(f16.data(), SPARSETC_VALUE_F16, 6, d.data());
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], -2.0);
  EXPECT_EQ(d[2], 65504.0);
  EXPECT_EQ(d[3], std::ldexp(1.0, -24));
  EXPECT_EQ(d[4], kInf);
  EXPECT_EQ(d[5], -kInf);
  load_values(bf16.data(), SPARSETC_VALUE_BF16, 5, d.data());
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], -2.0);
  EXPECT_EQ(d[2], kBfloat16Max);
  EXPECT_EQ(d[3], std::ldexp(1.0, -133));
  EXPECT_EQ(d[4], -kInf);
  std::vector<float> f(8);
  load_values(f16.data(), SPARSETC_VALUE_F16, 6, f.data());
  EXPECT_EQ(f[2], 65504.0f);
  EXPECT_EQ(f[3], std::ldexp(1.0f, -24));
  load_values(f64.data(), SPARSETC_VALUE_F64, 2, f.data());
  EXPECT_EQ(f[1], -2.25f);
  load_values(static_cast<const void*>(nullptr), SPARSETC_VALUE_F64, 0, d.data());  // empty is fine
}

TEST(Values, LoadF64IntoFloatReportsOverflow) {
  const std::vector<double> v = {1.0, 1e300};
  std::vector<float> f(2);
  expect_error([&] { load_values(v.data(), SPARSETC_VALUE_F64, 2, f.data()); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 1e+300 at entry 1 does not fit f32 (largest finite 3.4028235e+38)");
}

TEST(Values, StoreRoundsToNearestEven) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 100.0);
  std::vector<double> v(100000);
  for (double& x : v) x = normal(rng);
  v[0] = 1.0 + std::ldexp(1.0, -11);  // a binary16 tie
  std::vector<uint16_t> h(v.size()), b(v.size());
  std::vector<float> f(v.size());
  std::vector<double> d(v.size());
  store_values(v.data(), int64_t(v.size()), SPARSETC_VALUE_F16, h.data());
  store_values(v.data(), int64_t(v.size()), SPARSETC_VALUE_BF16, b.data());
  store_values(v.data(), int64_t(v.size()), SPARSETC_VALUE_F32, f.data());
  store_values(v.data(), int64_t(v.size()), SPARSETC_VALUE_F64, d.data());
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(h[i], double_to_half(v[i])) << i;
    ASSERT_EQ(b[i], double_to_bfloat16(v[i])) << i;
    ASSERT_EQ(f[i], float(v[i])) << i;
    ASSERT_EQ(d[i], v[i]) << i;
  }
  EXPECT_EQ(h[0], 0x3c00);
  // From float: bfloat16 straight from the float (one rounding).
  std::vector<float> vf(v.begin(), v.end());
  store_values(vf.data(), int64_t(vf.size()), SPARSETC_VALUE_BF16, b.data());
  store_values(vf.data(), int64_t(vf.size()), SPARSETC_VALUE_F16, h.data());
  for (size_t i = 0; i < vf.size(); ++i) {
    ASSERT_EQ(b[i], float_to_bfloat16(vf[i])) << i;
    ASSERT_EQ(h[i], double_to_half(double(vf[i]))) << i;
  }
}

TEST(Values, RoundTripExactValues) {
  // Values every type holds exactly come back unchanged, through every type.
  std::vector<double> v = {0.0, -0.0, 1.0, -1.5, 0.375, 256.0, -1024.0, 24576.0, std::ldexp(1.0, -14)};
  for (auto type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}) {
    const std::vector<double> back = store_load(v, type);
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(back[i], v[i]) << value_type_name(type) << " " << i;
      EXPECT_EQ(std::signbit(back[i]), std::signbit(v[i])) << value_type_name(type) << " " << i;
    }
    std::vector<float> vf(v.begin(), v.end());
    const std::vector<float> backf = store_load(vf, type);
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(backf[i], vf[i]) << value_type_name(type) << " " << i;
  }
}

TEST(Values, NonFinitePassThrough) {
  const std::vector<double> v = {kNaN, kInf, -kInf, 1.0};
  for (auto type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}) {
    const std::vector<double> back = store_load(v, type);
    EXPECT_TRUE(std::isnan(back[0])) << value_type_name(type);
    EXPECT_EQ(back[1], kInf) << value_type_name(type);
    EXPECT_EQ(back[2], -kInf) << value_type_name(type);
    EXPECT_EQ(back[3], 1.0) << value_type_name(type);
  }
}

TEST(Values, HalfRange) {
  std::vector<double> v(20, 1.0);
  v[12] = 70000;
  uint16_t out[20];
  expect_error([&] { store_values(v.data(), 20, SPARSETC_VALUE_F16, out); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 70000 at entry 12 does not fit f16 (largest finite 65504)");
  // Values that round to the largest finite value fit; those that would round to Inf do not.
  const std::vector<double> fits = {65504.0, 65519.99, -65519.99, std::nextafter(65520.0, 0.0)};
  uint16_t h[4];
  store_values(fits.data(), 4, SPARSETC_VALUE_F16, h);
  EXPECT_EQ(h[0], 0x7bff);
  EXPECT_EQ(h[1], 0x7bff);
  EXPECT_EQ(h[2], 0xfbff);
  EXPECT_EQ(h[3], 0x7bff);
  const double at = 65520.0, neg = -65520.0;
  expect_error([&] { store_values(&at, 1, SPARSETC_VALUE_F16, h); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 65520 at entry 0 does not fit f16 (largest finite 65504)");
  expect_error([&] { store_values(&neg, 1, SPARSETC_VALUE_F16, h); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value -65520 at entry 0 does not fit f16 (largest finite 65504)");
  const float atf = 65520.0f;
  expect_error([&] { store_values(&atf, 1, SPARSETC_VALUE_F16, h); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 65520 at entry 0 does not fit f16 (largest finite 65504)");
  const float below = std::nextafter(65520.0f, 0.0f);
  store_values(&below, 1, SPARSETC_VALUE_F16, h);
  EXPECT_EQ(h[0], 0x7bff);
}

TEST(Values, Bfloat16AndFloatRange) {
  uint16_t b[2];
  const double big = 3.4e38;
  expect_error([&] { store_values(&big, 1, SPARSETC_VALUE_BF16, b); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 3.4e+38 at entry 0 does not fit bf16 (largest finite 3.3895314e+38)");
  const float bigf = 3.4e38f;
  expect_error([&] { store_values(&bigf, 1, SPARSETC_VALUE_BF16, b); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 3.4e+38 at entry 0 does not fit bf16 (largest finite 3.3895314e+38)");
  const double threshold = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  const double below = std::nextafter(threshold, 0.0);
  store_values(&below, 1, SPARSETC_VALUE_BF16, b);
  EXPECT_EQ(b[0], 0x7f7f);
  EXPECT_THROW(store_values(&threshold, 1, SPARSETC_VALUE_BF16, b), Error);

  float f[2];
  const double huge = 1e300;
  expect_error([&] { store_values(&huge, 1, SPARSETC_VALUE_F32, f); }, SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
               "value 1e+300 at entry 0 does not fit f32 (largest finite 3.4028235e+38)");
  const double fthreshold = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
  const double fbelow = std::nextafter(fthreshold, 0.0);
  store_values(&fbelow, 1, SPARSETC_VALUE_F32, f);
  EXPECT_EQ(f[0], std::numeric_limits<float>::max());
  EXPECT_THROW(store_values(&fthreshold, 1, SPARSETC_VALUE_F32, f), Error);
  const double dmax = std::numeric_limits<double>::max();
  double d;
  store_values(&dmax, 1, SPARSETC_VALUE_F64, &d);  // f64 holds everything
  EXPECT_EQ(d, dmax);
}

TEST(Values, FirstOutOfRangeIsReportedDeterministically) {
  std::vector<double> v(3000000, 0.5);
  v[2500000] = 1e6;
  v[700001] = -1e5;
  std::vector<uint16_t> h(v.size());
  for (int repeat = 0; repeat < 3; ++repeat)
    expect_error([&] { store_values(v.data(), int64_t(v.size()), SPARSETC_VALUE_F16, h.data()); },
                 SPARSETC_STATUS_VALUE_OUT_OF_RANGE,
                 "value -100000 at entry 700001 does not fit f16 (largest finite 65504)");
}

TEST(Values, FindNonFinite) {
  const std::vector<double> d = {1, 2, kInf, kNaN};
  EXPECT_EQ(find_non_finite(d.data(), SPARSETC_VALUE_F64, 4), 2);
  EXPECT_EQ(find_non_finite(d.data(), SPARSETC_VALUE_F64, 2), -1);
  const std::vector<float> f = {1, 2, 3, -std::numeric_limits<float>::infinity()};
  EXPECT_EQ(find_non_finite(f.data(), SPARSETC_VALUE_F32, 4), 3);
  const std::vector<uint16_t> h = {0x7bff, 0xfbff, 0x0001, 0xfc00, 0x7e00};
  EXPECT_EQ(find_non_finite(h.data(), SPARSETC_VALUE_F16, 5), 3);
  EXPECT_EQ(find_non_finite(h.data(), SPARSETC_VALUE_F16, 3), -1);
  const std::vector<uint16_t> b = {0x7f7f, 0xff7f, 0x3f80, 0x7f81};
  EXPECT_EQ(find_non_finite(b.data(), SPARSETC_VALUE_BF16, 4), 3);
  EXPECT_EQ(find_non_finite(b.data(), SPARSETC_VALUE_BF16, 3), -1);
  EXPECT_EQ(find_non_finite(nullptr, SPARSETC_VALUE_F64, 0), -1);
  // Large input with two: the first is found, whatever the schedule.
  std::vector<double> big(5000000, 1.0);
  big[4900000] = kNaN;
  big[1234567] = -kInf;
  for (int repeat = 0; repeat < 3; ++repeat)
    EXPECT_EQ(find_non_finite(big.data(), SPARSETC_VALUE_F64, int64_t(big.size())), 1234567);
}

TEST(Values, MaxFiniteAndNames) {
  EXPECT_EQ(max_finite(SPARSETC_VALUE_F16), 65504.0);
  EXPECT_EQ(max_finite(SPARSETC_VALUE_BF16), std::ldexp(255.0, 120));
  EXPECT_EQ(max_finite(SPARSETC_VALUE_F32), double(std::numeric_limits<float>::max()));
  EXPECT_EQ(max_finite(SPARSETC_VALUE_F64), std::numeric_limits<double>::max());
  EXPECT_THROW(max_finite(5), Error);
  EXPECT_EQ(format_number(70000.0), "70000");
  EXPECT_EQ(format_number(100000.0), "100000");
  EXPECT_EQ(format_number(1e-7), "1e-07");
  EXPECT_EQ(format_number(1e16), "1e+16");
  EXPECT_EQ(format_number(0.0), "0");
  EXPECT_EQ(format_number(3.4e38f), "3.4e+38");
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(0.1f), "0.1");
  EXPECT_EQ(format_number(-2.5), "-2.5");
  EXPECT_EQ(format_number(kNaN), "NaN");
  EXPECT_EQ(format_number(-kInf), "-Inf");
  EXPECT_EQ(format_number(kInf), "Inf");
}

TEST(Values, BadArguments) {
  double d = 1;
  uint16_t h;
  expect_error([&] { store_values(&d, 1, 7, &h); }, SPARSETC_STATUS_INVALID_VALUE, "unknown value type 7");
  expect_error([&] { load_values(&h, 7, 1, &d); }, SPARSETC_STATUS_INVALID_VALUE, "unknown value type 7");
  EXPECT_THROW(find_non_finite(&h, 9, 1), Error);
  EXPECT_THROW(store_values(&d, 1, SPARSETC_VALUE_F16, nullptr), Error);
}

}  // namespace
