#include "trace_report.hpp"

#include <algorithm>
#include <sstream>

#include "protocol/candidate_marker.hpp"

namespace grader {

Trace parse_trace(const std::string& text) {
  Trace t;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag, what;
    if (!(words >> tag >> what) || tag != "memlabs-trace") continue;
    if (what == "end") {
      t.ended = true;
      continue;
    }
    TraceInterval iv;
    if (!(words >> iv.start >> iv.end >> iv.stream) || iv.end < iv.start) continue;
    if (what == "copy") {
      std::string direction;
      if (!(words >> direction)) continue;
      iv.kind = direction == "htod"   ? TraceInterval::copy_in
                : direction == "dtoh" ? TraceInterval::copy_out
                                      : TraceInterval::other_copy;
    } else if (what == "kernel") {
      iv.kind = TraceInterval::kernel;
      words >> iv.name;
    } else {
      continue;
    }
    t.intervals.push_back(iv);
  }
  return t;
}

std::vector<TraceInterval> candidate_part(const Trace& trace) {
  std::uint64_t marker_end = 0;
  bool marked = false;
  for (const auto& iv : trace.intervals)
    if (iv.kind == TraceInterval::kernel && iv.name == memlabs::kCandidateMarkerKernel) {
      marker_end = std::max(marker_end, iv.end);
      marked = true;
    }
  std::vector<TraceInterval> out;
  if (!marked) return out;
  std::uint64_t last_kernel_end = 0;
  for (const auto& iv : trace.intervals)
    if (iv.start >= marker_end && iv.kind == TraceInterval::kernel) last_kernel_end = std::max(last_kernel_end, iv.end);
  for (const auto& iv : trace.intervals) {
    if (iv.start < marker_end || iv.kind == TraceInterval::other_copy) continue;
    if (iv.kind == TraceInterval::copy_in && iv.start >= last_kernel_end) continue;  // the harness's, after the work
    out.push_back(iv);
  }
  std::sort(out.begin(), out.end(), [](const TraceInterval& a, const TraceInterval& b) { return a.start < b.start; });
  return out;
}

Overlap measure_overlap(const std::vector<TraceInterval>& intervals) {
  Overlap o;
  // Every start and end as an event; between two events, which kinds of work ran.
  struct Event {
    std::uint64_t at;
    int kind;
    int delta;
  };
  std::vector<Event> events;
  for (const auto& iv : intervals) {
    if (iv.kind == TraceInterval::other_copy) continue;
    events.push_back({iv.start, iv.kind, +1});
    events.push_back({iv.end, iv.kind, -1});
    (iv.kind == TraceInterval::copy_in ? o.copies_in : iv.kind == TraceInterval::copy_out ? o.copies_out : o.kernels)++;
  }
  if (events.empty()) return o;
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.delta < b.delta;  // ends before starts at one instant
  });
  int running[4] = {0, 0, 0, 0};
  std::uint64_t first = events.front().at, last = first, previous = first;
  for (const auto& e : events) {
    const double dt = static_cast<double>(e.at - previous);
    const bool in = running[TraceInterval::copy_in] > 0, out = running[TraceInterval::copy_out] > 0,
               kernel = running[TraceInterval::kernel] > 0;
    if (in) o.copy_in_ns += dt;
    if (out) o.copy_out_ns += dt;
    if (kernel) o.kernel_ns += dt;
    if (int(in) + int(out) + int(kernel) >= 2) o.overlapped_ns += dt;
    running[e.kind] += e.delta;
    previous = e.at;
    last = std::max(last, e.at);
  }
  o.span_ns = static_cast<double>(last - first);
  return o;
}

}  // namespace grader
