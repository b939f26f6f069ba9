// FastDivider (the GPU conversions' division by a block width) against the / operator: every
// divisor up to 4096, random divisors up to 2^31, and the dividends at the edges (0, d - 1, d,
// d + 1, multiples of d around 2^31) plus random ones below 2^31.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu/convert/fast_divider.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::gpuconv::FastDivider;

void expect_exact(uint32_t d, std::mt19937_64& rng) {
  const FastDivider divider(d);
  const uint32_t top = 0x7FFFFFFFu;  // the largest dividend
  std::vector<uint32_t> dividends = {0, 1, d - 1, d, top, top - 1, top - top % d, top - top % d - 1};
  if (d < top) dividends.push_back(d + 1);
  std::uniform_int_distribution<uint32_t> any(0, top);
  for (int k = 0; k < 64; ++k) dividends.push_back(any(rng));
  for (const uint32_t n : dividends) {
    if (n > top) continue;
    const uint32_t q = divider.divide(n);
    ASSERT_EQ(q, n / d) << n << " / " << d;
    ASSERT_EQ(divider.remainder(n, q), n % d) << n << " % " << d;
  }
}

TEST(FastDivider, MatchesIntegerDivision) {
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  for (uint32_t d = 1; d <= 4096; ++d) expect_exact(d, rng);
  std::uniform_int_distribution<uint32_t> wide(4097, 0x80000000u);
  for (int k = 0; k < 4096; ++k) expect_exact(wide(rng), rng);
  expect_exact(0x7FFFFFFFu, rng);
  expect_exact(0x80000000u, rng);
}

TEST(FastDivider, PowersOfTwoAreShifts) {
  for (uint32_t l = 0; l <= 31; ++l) {
    const FastDivider divider(uint32_t(1) << l);
    EXPECT_EQ(divider.multiplier, 1u);
    EXPECT_EQ(divider.shift, l);
  }
}

}  // namespace
