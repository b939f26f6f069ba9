// The looping-CTA rule of the tensor-core SpMM (tc_loop_rule.hpp): the fixed spread against the
// greedy one on work lists whose answer is known by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu/spmm/bcsr_tc/tc_loop_rule.hpp"

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

}  // namespace
