#include "trace_report.hpp"

#include <gtest/gtest.h>

#include "protocol/candidate_marker.hpp"

using namespace grader;

namespace {

std::string line(const std::string& what, unsigned long long start, unsigned long long end, int stream,
                 const std::string& rest) {
  return "memlabs-trace " + what + " " + std::to_string(start) + " " + std::to_string(end) + " " +
         std::to_string(stream) + " " + rest + "\n";
}
std::string marker(unsigned long long start, unsigned long long end) {
  return line("kernel", start, end, 7, memlabs::kCandidateMarkerKernel);
}

}  // namespace

// The library's lines among the program's own output; a torn or foreign line is skipped.
TEST(TraceReport, ReadsItsOwnLinesAndSkipsTheRest) {
  const Trace t =
      parse_trace("the program's own line\n" + line("copy", 10, 20, 7, "htod 4096") +
                  line("kernel", 20, 30, 7, "_Z16transform_kernelPfPKfm") + "memlabs-trace copy 40 35 7 dtoh 4096\n" +
                  "memlabs-trace kernel x y\n" + line("copy", 30, 45, 9, "dtoh 4096") + "memlabs-trace end\n");
  ASSERT_EQ(t.intervals.size(), 3u);
  EXPECT_TRUE(t.ended);
  EXPECT_EQ(t.intervals[0].kind, TraceInterval::copy_in);
  EXPECT_EQ(t.intervals[1].name, "_Z16transform_kernelPfPKfm");
  EXPECT_EQ(t.intervals[2].kind, TraceInterval::copy_out);
  EXPECT_EQ(t.intervals[2].stream, 9u);
  EXPECT_FALSE(parse_trace(line("copy", 1, 2, 7, "htod 4")).ended) << "a program that died before its exit";
  // A run that died before it printed a line of the trace: nothing says the library worked.
  EXPECT_FALSE(recorded_anything(parse_trace("the program's own line\n")));
  EXPECT_TRUE(recorded_anything(parse_trace(line("copy", 1, 2, 7, "htod 4"))));
  EXPECT_TRUE(recorded_anything(parse_trace("memlabs-trace end\n")));
}

// One thing at a time: no overlap at all. The harness's copy of the results
// after the work and everything before the marker are not the candidate's.
TEST(TraceReport, SerialCopiesAndKernelOverlapNothing) {
  const Trace t = parse_trace(line("copy", 0, 50, 7, "htod 64") + marker(60, 61) +
                              line("copy", 100, 200, 7, "htod 64") + line("kernel", 200, 260, 7, "k") +
                              line("copy", 260, 360, 7, "dtoh 64") + line("copy", 400, 500, 7, "htod 64"));
  const auto part = candidate_part(t);
  ASSERT_EQ(part.size(), 3u);
  const Overlap o = measure_overlap(part);
  EXPECT_EQ(o.span_ns, 260);
  EXPECT_EQ(o.overlapped_ns, 0);
  EXPECT_EQ(o.copies_in, 1);
  EXPECT_EQ(o.kernels, 1);
  EXPECT_EQ(o.fraction(), 0);
}

// Three chunks on three streams: while chunk 1 computes, chunk 2 comes in; while
// chunk 2 computes, chunk 1 goes out and chunk 3 comes in.
TEST(TraceReport, APipelineOverlapsMostOfItsSpan) {
  std::string s = marker(0, 1);
  for (int k = 0; k < 3; ++k) {
    const unsigned long long t0 = 10 + 100ull * k;
    s += line("copy", t0, t0 + 100, k + 1, "htod 64");
    s += line("kernel", t0 + 100, t0 + 160, k + 1, "k");
    s += line("copy", t0 + 160, t0 + 260, k + 1, "dtoh 64");
  }
  const Overlap o = measure_overlap(candidate_part(parse_trace(s)));
  EXPECT_EQ(o.span_ns, 460);     // 10 .. 470
  EXPECT_GT(o.fraction(), 0.5);  // copies in, kernels and copies out side by side
  EXPECT_EQ(o.copy_in_ns, 300);  // 10 .. 310, one after another
  EXPECT_EQ(o.copies_in + o.copies_out + o.kernels, 9);
}

// Two kernels at once, or two copies the same way, are one kind of work: not the overlap the step asks for.
TEST(TraceReport, OneKindOfWorkAtOnceIsNoOverlap) {
  const std::string s = marker(0, 1) + line("kernel", 10, 110, 1, "k") + line("kernel", 10, 110, 2, "k") +
                        line("copy", 110, 210, 1, "htod 64") + line("copy", 110, 210, 2, "htod 64");
  EXPECT_EQ(measure_overlap(candidate_part(parse_trace(s))).overlapped_ns, 0);
}

// No marker, no candidate: nothing to judge.
TEST(TraceReport, WithoutTheMarkerNothingIsTheCandidates) {
  EXPECT_TRUE(candidate_part(parse_trace(line("kernel", 1, 2, 7, "k"))).empty());
}

// Lines a program prints in the library's format are read as the library's;
// one that claims a span longer than its run lasted gives itself away.
TEST(TraceReport, AForgedSpanLongerThanTheRunGivesItselfAway) {
  std::string s = marker(1000, 1001) + line("copy", 2000, 3000, 7, "htod 64") + line("kernel", 3000, 4000, 7, "k") +
                  line("copy", 4000, 5000, 7, "dtoh 64");
  const Overlap honest = measure_overlap(candidate_part(parse_trace(s)));
  EXPECT_EQ(honest.fraction(), 0);
  EXPECT_FALSE(spans_longer_than_the_run(honest, 1.0));
  s += line("copy", 4000000000000000000ULL, 9000000000000000000ULL, 8, "htod 64") +
       line("kernel", 4000000000000000000ULL, 9000000000000000000ULL, 9, "k") +
       line("copy", 4000000000000000000ULL, 9000000000000000000ULL, 10, "dtoh 64");
  const Overlap forged = measure_overlap(candidate_part(parse_trace(s)));
  EXPECT_GT(forged.fraction(), 0.5) << "the overlap alone believes it";
  EXPECT_TRUE(spans_longer_than_the_run(forged, 3.0));
  EXPECT_FALSE(spans_longer_than_the_run(forged, 0)) << "a run whose time is unknown is not held against it";
}
