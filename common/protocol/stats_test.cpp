#include "stats.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace memlabs;

TEST(MedianInterval, OddAndEvenMedians) {
  EXPECT_DOUBLE_EQ(median_interval({3, 1, 2}).median, 2);
  EXPECT_DOUBLE_EQ(median_interval({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(median_interval({}).n, 0u);
}

TEST(MedianInterval, FewSamplesGiveTheFullRange) {
  const auto i = median_interval({1.0, 5.0, 3.0});
  EXPECT_DOUBLE_EQ(i.lo, 1.0);
  EXPECT_DOUBLE_EQ(i.hi, 5.0);
}

TEST(MedianInterval, BracketsTheMedianAndNarrowsWithMoreSamples) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(2.0, 0.1);
  std::vector<double> small, large;
  for (int i = 0; i < 20; ++i) small.push_back(noise(rng));
  for (int i = 0; i < 2000; ++i) large.push_back(noise(rng));
  const auto a = median_interval(small), b = median_interval(large);
  EXPECT_LE(a.lo, a.median);
  EXPECT_GE(a.hi, a.median);
  EXPECT_LT(b.hi - b.lo, a.hi - a.lo);
  EXPECT_NEAR(b.median, 2.0, 0.02);
  EXPECT_LT(b.relative_half_width(), 0.01);
}

TEST(MedianInterval, CoversTheTrueMedianAboutNinetyFivePercentOfTheTime) {
  std::mt19937 rng(11);
  std::exponential_distribution<double> skewed(1.0);  // true median ln 2
  int covered = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> s(40);
    for (auto& x : s) x = skewed(rng);
    const auto i = median_interval(s);
    covered += (i.lo <= std::log(2.0) && std::log(2.0) <= i.hi);
  }
  EXPECT_GT(covered, trials * 0.93);
  EXPECT_LT(covered, trials * 0.995);
}

TEST(Decide, PassFailAndUndecided) {
  Interval i{5.0, 4.8, 5.2, 30};
  EXPECT_EQ(decide(i, 4.8), Decision::pass);  // lower bound on the threshold passes
  EXPECT_EQ(decide(i, 4.0), Decision::pass);
  EXPECT_EQ(decide(i, 5.3), Decision::fail);
  EXPECT_EQ(decide(i, 5.0), Decision::undecided);
  EXPECT_EQ(decide(Interval{}, 1.0), Decision::undecided);
}

TEST(Decide, UndecidedFallsBackToTheMedianAndSaysNoisy) {
  Interval i{5.0, 4.8, 5.2, 30};
  auto d = decide_final(i, 4.9);
  EXPECT_TRUE(d.pass);
  EXPECT_TRUE(d.noisy);
  d = decide_final(i, 5.1);
  EXPECT_FALSE(d.pass);
  EXPECT_TRUE(d.noisy);
  d = decide_final(i, 3.0);
  EXPECT_TRUE(d.pass);
  EXPECT_FALSE(d.noisy);
}

TEST(Interval, RelativeHalfWidthUsesTheWiderSide) {
  Interval i{2.0, 1.9, 2.02, 50};
  EXPECT_NEAR(i.relative_half_width(), 0.05, 1e-12);
}
