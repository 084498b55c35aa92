// The version of the result document the referee prints and the grader reads
// (schemas in docs/json-output.md). A grader reading another version says so
// instead of misreading it: a course built by another grader must be rebuilt.
#pragma once

namespace memlabs {

inline constexpr int kRefereeProtocol = 2;

}  // namespace memlabs
