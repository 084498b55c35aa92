// The version of the result document the referee prints and the grader reads
// (schemas in docs/json-output.md). A grader reading another version says so
// instead of misreading it: a course built by another grader must be rebuilt.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace memlabs {

inline constexpr int kRefereeProtocol = 2;

// A value read from a submission's output, as the document carries it. JSON has
// no NaN or infinity (nlohmann would write null), and a wrong kernel makes both:
// they travel as the strings "nan", "inf" and "-inf".
inline nlohmann::json value_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace memlabs
