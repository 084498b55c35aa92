// Bar charts of timing sessions: the referee's "timing" object, which a timed
// check's data holds (docs/json-output.md). Each kernel's rate is drawn
// against the ceiling for that case, so a student sees how far is left to go.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bar_chart.hpp"

namespace grader {

// What a session is charted in. Where the driver times a library version in
// GFLOP/s (a matrix multiply, bound by arithmetic rather than memory), the
// chart is GFLOP/s against the library; every other session is GB/s against
// cudaMemcpy of the same bytes, the memory roofline.
struct TimingScale {
  bool flops = false;
  std::string unit;                  // "GB/s" or "GFLOP/s"
  std::optional<Roofline> roofline;  // memcpy or the library; absent when it was not timed
  // session["<who>_gbps"] (or "_gflops"): who is "baseline", "candidate" or
  // "reference"; nullopt when the session does not hold it.
  std::optional<double> rate(const nlohmann::json& session, const std::string& who) const;
};

TimingScale timing_scale(const nlohmann::json& session);

// Whether `data` is a timing session: it has the baseline's and yours' rates.
// Checks that failed before anything was timed, or were skipped, have none.
bool holds_timing(const nlohmann::json& data);

// One grade's timing session as a chart: the baseline, yours ("candidate")
// and, only when the session holds a measured one, the reference, against the
// roofline. "" when `session` does not hold timing.
std::string session_chart(const nlohmann::json& session, const BarChartOptions& options);

}  // namespace grader
