// The looping-CTA rule of the tensor-core SpMM (tc_loop_rule.hpp): the fixed spread against the
// greedy one on work lists whose answer is known by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu/spmm/bcsr_tc/tc_loop_rule.hpp"
#include "test_support.hpp"

namespace {

namespace tc = sparsetc::detail::tc;

TEST(TcLoopRule, EqualItemsSpreadEvenly) {
  const std::vector<int64_t> items(400, 40);  // 400 items, 4 CTAs: 100 each either way
  EXPECT_DOUBLE_EQ(tc::loop_spread_excess(items, 1, 4), 1.0);
  EXPECT_TRUE(tc::loop_pays(items, 1, 4));
  EXPECT_TRUE(tc::loop_pays(items, 3, 132));  // 1200 works: 9 waves
}

TEST(TcLoopRule, LongItemsOnOneCtaAreCaught) {
  // Every 4th item is long: the fixed spread gives them all to CTA 0 (cost 5 x (92 + 8) = 500
  // against 5 x (4 + 8) = 60 for the others); the greedy one evens them out.
  std::vector<int64_t> items;
  for (int i = 0; i < 20; ++i) items.push_back(i % 4 == 0 ? 92 : 4);
  const double excess = tc::loop_spread_excess(items, 1, 4);
  // greedy (each to the least loaded CTA, in order): loads 224, 172, 148, 136
  EXPECT_NEAR(excess, 500.0 / 224.0, 1e-12);
  EXPECT_FALSE(tc::loop_pays(items, 1, 4));
}

TEST(TcLoopRule, TilesOfAnItemGoToConsecutiveCtas) {
  // 2 items of 2 tiles on 2 CTAs: the fixed spread puts one tile of each item on each CTA
  const std::vector<int64_t> items = {100, 10};
  EXPECT_DOUBLE_EQ(tc::loop_spread_excess(items, 2, 2), 1.0);
  // on 3 CTAs: works (108, 108, 18, 18) -> CTA 0 gets 108 + 18; greedy: 108, 108, 18 + 18 = 36 -> 108
  EXPECT_NEAR(tc::loop_spread_excess(items, 2, 3), 126.0 / 108.0, 1e-12);
}

TEST(TcLoopRule, TooFewWavesDoNotLoop) {
  const std::vector<int64_t> items(140, 40);  // 140 works on 132 CTAs: 1.06 waves
  EXPECT_FALSE(tc::loop_pays(items, 1, 132));
  EXPECT_TRUE(tc::loop_pays(items, 2, 132));  // 280 works: 2.1 waves, all equal
  EXPECT_FALSE(tc::loop_pays({}, 1, 132));
  EXPECT_FALSE(tc::loop_pays(items, 1, 0));
}

// loop_pays decides most lists from bounds on the greedy spread (without simulating it): it must
// agree with the definition on lists of every kind.
TEST(TcLoopRule, BoundsAgreeWithTheSimulation) {
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t ctas = 1 + int64_t(rng() % 300);
    const int64_t tiles = 1 + int64_t(rng() % 9);
    std::vector<int64_t> items(size_t(1 + rng() % 3000));
    const int64_t spread = 1 + int64_t(rng() % 200);
    for (size_t i = 0; i < items.size(); ++i)
      items[i] = trial % 4 == 0 && i % 7 == 0 ? 500 + int64_t(rng() % 500) : int64_t(rng() % uint64_t(spread));
    const bool waves = double(items.size()) * double(tiles) >= tc::kLoopMinWaves * double(ctas);
    const bool want = waves && tc::loop_spread_excess(items, tiles, ctas) <= tc::kLoopMaxExcess;
    EXPECT_EQ(tc::loop_pays(items, tiles, ctas), want)
        << items.size() << " items, " << tiles << " tiles, " << ctas << " CTAs, excess "
        << tc::loop_spread_excess(items, tiles, ctas);
  }
}

}  // namespace
