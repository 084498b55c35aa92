#include "plausibility.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

using nlohmann::json;

json interval(double lo) { return {{"median", lo * 1.01}, {"lo", lo}, {"hi", lo * 1.02}, {"n", 20}}; }

TEST(Plausibility, AnHonestResultPasses) {
  const json t = {{"fraction", interval(0.93)},
                  {"library_fraction", interval(1.02)},
                  {"candidate_gflops", 40000.0},
                  {"peak_gflops", 66900.0}};
  EXPECT_FALSE(implausible(t));
}

TEST(Plausibility, FasterThanACopyOfTheSameBytesFails) {
  const json t = {{"fraction", interval(1.3)}, {"candidate_gbps", 3900.0}, {"memcpy_gbps", 2900.0}};
  const auto why = implausible(t);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("3900 GB/s"), std::string::npos);
  EXPECT_NE(why->find("2900 GB/s"), std::string::npos);
}

TEST(Plausibility, WithinTheCopyMarginPasses) {
  EXPECT_FALSE(implausible({{"fraction", interval(kCopyMargin - 0.01)}}));
}

TEST(Plausibility, FarFasterThanTheLibraryFails) {
  const json t = {{"fraction", interval(0.1)}, {"library_fraction", interval(9.5)}, {"library", "cuBLAS"}};
  const auto why = implausible(t);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cuBLAS"), std::string::npos);
}

TEST(Plausibility, MoreFlopsThanThePeakFails) {
  const json t = {{"candidate_gflops", 90000.0}, {"peak_gflops", 66900.0}};
  const auto why = implausible(t);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("peak"), std::string::npos);
}

TEST(Plausibility, NoPeakKnownSaysNothingAboutFlops) {
  EXPECT_FALSE(implausible({{"candidate_gflops", 1e9}, {"peak_gflops", 0.0}}));
  EXPECT_FALSE(implausible(json(nullptr)));
}

}  // namespace
}  // namespace grader
