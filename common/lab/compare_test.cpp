#include "compare.hpp"

#include <gtest/gtest.h>

#include <limits>

using namespace memlabs;

TEST(Compare, ExactFloatsMatch) {
  const std::vector<float> a = {1, 2, 3}, b = {1, 2, 3};
  const auto r = compare_values(DType::f32, a.data(), DType::f32, b.data(), 3, {3}, {});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.count, 3u);
}

TEST(Compare, RelativeToleranceScalesWithTheExpectedValue) {
  const std::vector<float> want = {1000.0f, 1.0f}, got = {1000.5f, 1.5f};
  const auto r = compare_values(DType::f32, want.data(), DType::f32, got.data(), 2, {2}, {1e-3, 0});
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, 1u);
  EXPECT_EQ(r.first[0].where, "[1]");
}

TEST(Compare, NaNNeverPasses) {
  const std::vector<float> want = {1.0f}, got = {std::numeric_limits<float>::quiet_NaN()};
  EXPECT_FALSE(compare_values(DType::f32, want.data(), DType::f32, got.data(), 1, {1}, {1, 1}).ok());
}

TEST(Compare, IntegersCompareExactlyWhateverTheTolerance) {
  const std::vector<std::int32_t> want = {5, 6}, got = {5, 7};
  const auto r = compare_values(DType::i32, want.data(), DType::i32, got.data(), 2, {2}, {0.5, 10});
  EXPECT_EQ(r.mismatches, 1u);
}

TEST(Compare, ReportsTwoDimensionalIndicesAndKeepsOnlyTheFirstFew) {
  std::vector<float> want(6 * 7, 0.0f), got(6 * 7, 1.0f);
  const auto r = compare_values(DType::f32, want.data(), DType::f32, got.data(), want.size(), {6, 7}, {}, 3);
  EXPECT_EQ(r.mismatches, 42u);
  ASSERT_EQ(r.first.size(), 3u);
  EXPECT_EQ(r.first[2].where, "[0, 2]");
  EXPECT_EQ(format_index(7 * 5 + 6, {6, 7}), "[5, 6]");
  EXPECT_NE(describe_mismatches(r).find("42 of 42"), std::string::npos);
}

TEST(Compare, Float64OracleAgainstFloatOutput) {
  const std::vector<double> want = {0.1, 0.2};
  const std::vector<float> got = {0.1f, 0.2f};
  EXPECT_FALSE(compare_values(DType::f64, want.data(), DType::f32, got.data(), 2, {2}, {0, 0}).ok());
  EXPECT_TRUE(compare_values(DType::f64, want.data(), DType::f32, got.data(), 2, {2}, {1e-6, 0}).ok());
}
