// ReuseGaps::reused_within (gpu/spmm/cuda_core/reuse_gaps.hpp): the share of entries whose gap is
// below a window, from the binned gaps, on bins whose answer is worked out by hand.
#include <gtest/gtest.h>

#include "gpu/spmm/cuda_core/reuse_gaps.hpp"

namespace {

using sparsetc::detail::ReuseGaps;

TEST(ReuseGaps, WholeBinsBelowTheWindowCount) {
  ReuseGaps g;
  g.entries = 100;
  g.bins[0] = 10;  // gap 1
  g.bins[1] = 20;  // gaps 2-3
  g.bins[4] = 30;  // gaps 16-31
  // 40 entries never reused (first of their column), so not in any bin
  EXPECT_DOUBLE_EQ(g.reused_within(1), 0.0);   // no gap is below 1
  EXPECT_DOUBLE_EQ(g.reused_within(2), 0.1);   // gap 1
  EXPECT_DOUBLE_EQ(g.reused_within(4), 0.3);   // gaps 1-3
  EXPECT_DOUBLE_EQ(g.reused_within(16), 0.3);  // nothing in 4-15
  EXPECT_DOUBLE_EQ(g.reused_within(32), 0.6);
  EXPECT_DOUBLE_EQ(g.reused_within(1e9), 0.6);
}

TEST(ReuseGaps, PartBinsSpreadEvenly) {
  ReuseGaps g;
  g.entries = 64;
  g.bins[4] = 32;  // gaps 16-31, taken as spread evenly
  EXPECT_DOUBLE_EQ(g.reused_within(20), 8.0 / 64.0);   // 4 of the bin's 16 widths
  EXPECT_DOUBLE_EQ(g.reused_within(24), 16.0 / 64.0);  // half
  EXPECT_DOUBLE_EQ(g.reused_within(3), 0.0);
}

TEST(ReuseGaps, NothingLookedAt) {
  const ReuseGaps g;
  EXPECT_DOUBLE_EQ(g.reused_within(1e6), 0.0);
}

}  // namespace
