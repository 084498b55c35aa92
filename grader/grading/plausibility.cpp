#include "plausibility.hpp"

#include <sstream>

#include "text.hpp"

namespace grader {

std::optional<std::string> implausible(const memlabs::TimingReport& t) {
  if (t.fraction_of_peak && t.fraction_of_peak->lo > kCopyMargin)
    return fixed(t.candidate_gbps, 0) + " GB/s for the bytes it must move, above the measured copy bandwidth " +
           fixed(t.memcpy_gbps.value_or(0.0), 0) + " GB/s";
  if (t.fraction_of_library && t.fraction_of_library->lo > kLibraryMargin)
    return fixed(t.fraction_of_library->lo, 1) + "× the speed of " + t.library.value_or("the library") +
           " on the same problem";
  const double got = t.candidate_gflops.value_or(0.0);
  if (t.peak_gflops > 0 && got > kPeakMargin * t.peak_gflops)
    return fixed(got, 0) + " GFLOP/s, above the GPU's peak of " + fixed(t.peak_gflops, 0) + " GFLOP/s";
  return std::nullopt;
}

}  // namespace grader
