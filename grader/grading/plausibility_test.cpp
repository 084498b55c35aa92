#include "plausibility.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

using memlabs::RatioInterval;
using memlabs::TimingReport;

RatioInterval interval(double lo) { return {lo * 1.01, lo, lo * 1.02, 20}; }

TEST(Plausibility, AnHonestResultPasses) {
  TimingReport t;
  t.fraction_of_peak = interval(0.93);
  t.fraction_of_library = interval(1.02);
  t.candidate_gflops = 40000.0;
  t.peak_gflops = 66900.0;
  EXPECT_FALSE(implausible(t));
}

TEST(Plausibility, FasterThanACopyOfTheSameBytesFails) {
  TimingReport t;
  t.fraction_of_peak = interval(1.3);
  t.candidate_gbps = 3900.0;
  t.memcpy_gbps = 2900.0;
  const auto why = implausible(t);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("3900 GB/s"), std::string::npos);
  EXPECT_NE(why->find("2900 GB/s"), std::string::npos);
}

TEST(Plausibility, WithinTheCopyMarginPasses) {
  TimingReport t;
  t.fraction_of_peak = interval(kCopyMargin - 0.01);
  EXPECT_FALSE(implausible(t));
}

TEST(Plausibility, FarFasterThanTheLibraryFails) {
  TimingReport t;
  t.fraction_of_peak = interval(0.1);
  t.fraction_of_library = interval(9.5);
  t.library = "cuBLAS";
  const auto why = implausible(t);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cuBLAS"), std::string::npos);
}

TEST(Plausibility, MoreFlopsThanThePeakFails) {
  TimingReport t;
  t.candidate_gflops = 90000.0;
  t.peak_gflops = 66900.0;
  const auto why = implausible(t);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("peak"), std::string::npos);
}

TEST(Plausibility, NoPeakKnownSaysNothingAboutFlops) {
  TimingReport t;
  t.candidate_gflops = 1e9;
  EXPECT_FALSE(implausible(t));
  EXPECT_FALSE(implausible(TimingReport{}));
}

}  // namespace
}  // namespace grader
