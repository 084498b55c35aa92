#include "bar_chart.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace grader;

namespace {

const std::vector<BarRow> kRows = {{"baseline", 480, "GB/s"}, {"yours", 1600, "GB/s"}};
const Roofline kMemcpy = {"memcpy", 3200};

}  // namespace

TEST(BarChart, ScalesToTheRooflineWithEighthBlocksAndAMarker) {
  // 480 of 3200 over 8 cells is 1.2 cells: one full block and two eighths.
  EXPECT_EQ(render_bar_chart(kRows, kMemcpy, {8, true, ""}),
            "baseline  █▎      │   480 GB/s   15.0 %\n"
            "yours     ████    │  1600 GB/s   50.0 %\n"
            "memcpy    ████████│  3200 GB/s  100.0 %\n");
}

TEST(BarChart, AsciiUsesWholeHashCells) {
  EXPECT_EQ(render_bar_chart(kRows, kMemcpy, {8, false, "  "}),
            "  baseline  #       |   480 GB/s   15.0 %\n"
            "  yours     ####    |  1600 GB/s   50.0 %\n"
            "  memcpy    ########|  3200 GB/s  100.0 %\n");
}

TEST(BarChart, WithoutARooflineTheLargestValueFillsTheWidthAndNoPercentIsShown) {
  EXPECT_EQ(render_bar_chart({{"a", 2, "GB/s"}, {"b", 8, "GB/s"}}, std::nullopt, {4, true, ""}),
            "a  █     2.0 GB/s\n"
            "b  ████  8.0 GB/s\n");
}

TEST(BarChart, AValueAboveTheRooflineRunsPastTheMarker) {
  // Scale 4000 over 8 cells puts the marker at 6.4, drawn after cell 6; the
  // roofline's own bar stops at the marker.
  EXPECT_EQ(render_bar_chart({{"yours", 4000, "GB/s"}}, kMemcpy, {8, true, ""}),
            "yours   ██████│██  4000 GB/s  125.0 %\n"
            "memcpy  ██████│    3200 GB/s  100.0 %\n");
}

TEST(BarChart, AValueThatIsNotFiniteOrIsNegativeDrawsNoBar) {
  EXPECT_EQ(render_bar_chart({{"yours", std::nan(""), "GB/s"}, {"base", -5, "GB/s"}}, kMemcpy, {4, true, ""}),
            "yours       │          -        -\n"
            "base        │  -5.0 GB/s   -0.2 %\n"
            "memcpy  ████│  3200 GB/s  100.0 %\n");
}

TEST(BarChart, ARooflineThatIsNotPositiveIsLeftOut) {
  EXPECT_EQ(render_bar_chart({{"yours", 2, "GB/s"}}, Roofline{"memcpy", 0}, {2, true, ""}), "yours  ██  2.0 GB/s\n");
}

TEST(BarChart, SmallValuesKeepADecimalLargeOnesAreWhole) {
  EXPECT_EQ(render_bar_chart({{"slow", 4.24, "GB/s"}, {"fast", 2861.4, "GB/s"}}, std::nullopt, {1, true, ""}),
            "slow      4.2 GB/s\n"
            "fast  █  2861 GB/s\n");
}

TEST(BarChart, LabelsWithUnicodeLineUpByColumnsNotBytes) {
  EXPECT_EQ(render_bar_chart({{"×2", 1, "x"}, {"abc", 1, "x"}}, std::nullopt, {1, false, ""}),
            "×2   #  1.0 x\n"
            "abc  #  1.0 x\n");
}

TEST(RenderBar, EighthBlocksRoundToTheNearestEighth) {
  EXPECT_EQ(render_bar(1.0 / 8, 1, true), "▏");
  EXPECT_EQ(render_bar(4.0 / 8, 1, true), "▌");
  EXPECT_EQ(render_bar(7.0 / 8, 1, true), "▉");
  EXPECT_EQ(render_bar(1.0, 1, true), "█");
  EXPECT_EQ(render_bar(0.03, 1, true), " ");  // a quarter of an eighth rounds to nothing
  EXPECT_EQ(render_bar(0.44, 8, true, "░"), "███▌░░░░");
}

TEST(RenderBar, AsciiRoundsToWholeCellsAndPadsWithTheTrack) {
  EXPECT_EQ(render_bar(0.44, 8, false, "."), "####....");
  EXPECT_EQ(render_bar(0.0, 3, false, "."), "...");
}

TEST(RenderBar, FractionsOutsideZeroToOneAreClamped) {
  EXPECT_EQ(render_bar(1.5, 4, true), "████");
  EXPECT_EQ(render_bar(-1, 4, false, "."), "....");
  EXPECT_EQ(render_bar(std::nan(""), 2, true, "░"), "░░");
}
