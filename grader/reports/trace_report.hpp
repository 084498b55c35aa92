// What a traced run shows (grader/probe/trace_injection.cpp): when each of the
// program's copies and kernels ran, and how much of that time copies in, copies
// out and kernels ran at once. The overlap check of a lab whose lesson is
// pipelining (lab10) judges it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace grader {

struct TraceInterval {
  enum Kind { copy_in, copy_out, other_copy, kernel } kind = kernel;
  std::uint64_t start = 0, end = 0;  // the GPU's nanoseconds
  std::uint32_t stream = 0;
  std::string name;  // a kernel's
};

struct Trace {
  std::vector<TraceInterval> intervals;  // in the order the lines came
  bool ended = false;                    // the library's last line was read: the program exited whole
};

// The "memlabs-trace" lines of `text` (the program's stderr); other lines are the
// program's own and are skipped, as are malformed ones.
Trace parse_trace(const std::string& text);

// Whether the library recorded anything: a traced run that ended badly without
// one line of it never had the library working, and says nothing of the program.
inline bool recorded_anything(const Trace& t) { return t.ended || !t.intervals.empty(); }

// What the candidate ran: the intervals that start after the harness's marker
// kernel (common/protocol/candidate_marker.hpp) ends, in start order, less the
// copies in that start after its last kernel ended (the harness's own, moving
// the results to be checked). Empty without a marker.
std::vector<TraceInterval> candidate_part(const Trace& trace);

struct Overlap {
  double span_ns = 0;                                     // from the first start to the last end
  double overlapped_ns = 0;                               // while at least two of copy in, copy out and kernel ran
  double copy_in_ns = 0, copy_out_ns = 0, kernel_ns = 0;  // while each ran
  int copies_in = 0, copies_out = 0, kernels = 0;
  double fraction() const { return span_ns > 0 ? overlapped_ns / span_ns : 0; }
};

// How much of the span copies in, copies out and kernels ran at the same time
// (two kernels at once, or two copies the same way, do not count: one kind of
// work only).
Overlap measure_overlap(const std::vector<TraceInterval>& intervals);

// Whether an overlap spans more time than the run that printed it lasted
// (`run_s`, its wall time; 0 when unknown): every interval the library records
// ran while the program did, so such a span holds lines the program printed
// itself, in the library's format.
inline bool spans_longer_than_the_run(const Overlap& o, double run_s) { return run_s > 0 && o.span_ns > run_s * 1e9; }

}  // namespace grader
