#include "plausibility.hpp"

#include <sstream>

#include "text.hpp"

namespace grader {
namespace {

double lower_bound(const nlohmann::json& timing, const char* key) {
  const auto it = timing.find(key);
  if (it == timing.end() || !it->is_object()) return 0;
  return it->value("lo", 0.0);
}

}  // namespace

std::optional<std::string> implausible(const nlohmann::json& t) {
  if (!t.is_object()) return std::nullopt;
  if (lower_bound(t, "fraction") > kCopyMargin)
    return fixed(t.value("candidate_gbps", 0.0), 0) +
           " GB/s for the bytes it must move, above the measured copy bandwidth " +
           fixed(t.value("memcpy_gbps", 0.0), 0) + " GB/s";
  if (lower_bound(t, "library_fraction") > kLibraryMargin)
    return fixed(lower_bound(t, "library_fraction"), 1) + "× the speed of " +
           t.value("library", std::string("the library")) + " on the same problem";
  const double peak = t.value("peak_gflops", 0.0), got = t.value("candidate_gflops", 0.0);
  if (peak > 0 && got > kPeakMargin * peak)
    return fixed(got, 0) + " GFLOP/s, above the GPU's peak of " + fixed(peak, 0) + " GFLOP/s";
  return std::nullopt;
}

}  // namespace grader
