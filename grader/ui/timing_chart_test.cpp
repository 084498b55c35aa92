#include "timing_chart.hpp"

#include <gtest/gtest.h>

using namespace grader;
using nlohmann::json;

namespace {

// The fields of a timing session that charts read, as the referee writes them.
json memory_session() {
  return {{"rounds", 30},           {"bytes_moved", 536870912.0},
          {"baseline_gbps", 480.0}, {"candidate_gbps", 1600.0},
          {"memcpy_gbps", 3200.0},  {"speedup", {{"median", 3.3}, {"lo", 3.2}, {"hi", 3.4}}}};
}

const BarChartOptions kNarrow = {8, true, ""};

}  // namespace

TEST(TimingChart, MemoryBoundSessionIsGbPerSecondAgainstMemcpy) {
  EXPECT_EQ(session_chart(memory_session(), kNarrow),
            "baseline  █▎      │   480 GB/s   15.0 %\n"
            "yours     ████    │  1600 GB/s   50.0 %\n"
            "memcpy    ████████│  3200 GB/s  100.0 %\n");
}

// lab10 moves its data over the host's link: its ceiling is a copy over the link.
TEST(TimingChart, DataOverTheHostLinkIsMeasuredAgainstTheLink) {
  json s = memory_session();
  s["memcpy_gbps"] = 100.0;
  s["baseline_gbps"] = 10.0;
  s["candidate_gbps"] = 80.0;
  s["memcpy_over_host_link"] = true;
  EXPECT_EQ(session_chart(s, kNarrow),
            "baseline  ▊       │   10 GB/s   10.0 %\n"
            "yours     ██████▍ │   80 GB/s   80.0 %\n"
            "link      ████████│  100 GB/s  100.0 %\n");
}

TEST(TimingChart, AMeasuredReferenceIsDrawnOnlyWhenTheSessionHoldsIt) {
  json s = memory_session();
  s["reference_gbps"] = 2880.0;
  EXPECT_EQ(session_chart(s, kNarrow),
            "baseline   █▎      │   480 GB/s   15.0 %\n"
            "yours      ████    │  1600 GB/s   50.0 %\n"
            "reference  ███████▎│  2880 GB/s   90.0 %\n"
            "memcpy     ████████│  3200 GB/s  100.0 %\n");
}

TEST(TimingChart, ALibrarySessionIsGflopsAgainstTheLibrary) {
  json s = memory_session();
  s.update(
      {{"baseline_gflops", 6400.0}, {"candidate_gflops", 10240.0}, {"library_gflops", 51200.0}, {"library", "cuBLAS"}});
  EXPECT_EQ(session_chart(s, kNarrow),
            "baseline  █       │   6400 GFLOP/s   12.5 %\n"
            "yours     █▋      │  10240 GFLOP/s   20.0 %\n"
            "cuBLAS    ████████│  51200 GFLOP/s  100.0 %\n");
  const TimingScale scale = timing_scale(s);
  EXPECT_TRUE(scale.flops);
  EXPECT_EQ(scale.rate(s, "candidate"), 10240.0);
}

TEST(TimingChart, FlopsWithoutALibraryStayGbPerSecondAgainstMemcpy) {
  json s = memory_session();
  s.update({{"baseline_gflops", 6400.0}, {"candidate_gflops", 10240.0}});
  const TimingScale scale = timing_scale(s);
  EXPECT_FALSE(scale.flops);
  EXPECT_EQ(scale.unit, "GB/s");
  ASSERT_TRUE(scale.roofline);
  EXPECT_EQ(scale.roofline->label, "memcpy");
  EXPECT_EQ(session_chart(s, kNarrow), session_chart(memory_session(), kNarrow));
}

TEST(TimingChart, WithoutMemcpyTheFasterKernelFillsTheWidth) {
  json s = memory_session();
  s.erase("memcpy_gbps");
  EXPECT_EQ(session_chart(s, {4, false, ""}),
            "baseline  #      480 GB/s\n"
            "yours     ####  1600 GB/s\n");
}

TEST(TimingChart, DataThatHoldsNoTimingGivesNoChart) {
  EXPECT_TRUE(holds_timing(memory_session()));
  EXPECT_FALSE(holds_timing({{"cases", {"1x1"}}}));
  EXPECT_EQ(session_chart(json::object(), kNarrow), "");
  EXPECT_EQ(session_chart(json(), kNarrow), "");
  EXPECT_EQ(session_chart({{"cases", {"1x1"}}}, kNarrow), "");
  EXPECT_EQ(session_chart({{"baseline_gbps", 480.0}}, kNarrow), "");
  EXPECT_EQ(session_chart({{"baseline_gbps", "480"}, {"candidate_gbps", 1600.0}}, kNarrow), "");
}
