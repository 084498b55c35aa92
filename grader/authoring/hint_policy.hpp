// What a hint costs in this class. The instructor states it when publishing
// (`grader publish --hint-penalty P`): the class copy's .grader-manifest.json
// records it, the copy's README says it, and `grader hint` says it (and, when
// hints cost points, asks) before it shows a hint the student has not seen.
// In the instructor's own course, or a copy published without it, the cost is
// unknown and every message says that hints are counted.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace grader {

struct HintPolicy {
  std::optional<double> penalty;  // points off per hint shown; nullopt: not stated

  bool costs_points() const { return penalty && *penalty > 0; }
  // One sentence for a terminal: "Each hint you are shown costs 0.5 points in this class."
  std::string sentence() const;
};

// Reads "hint_penalty" from <root>/.grader-manifest.json; any other case
// (no manifest, no key, unreadable) is a policy that was not stated.
HintPolicy read_hint_policy(const std::filesystem::path& course_root);

// The class copy's README with a "### Hints in this class" section added at
// the end of its "## For students" section.
std::string with_hint_policy(const std::string& student_readme, const HintPolicy& policy);

// The warning `grader publish --hint-penalty P` (P > 0) gives: an upload's hint
// count is the student's own word (docs/security.md). Empty when the penalty
// is 0 or not stated.
std::string hint_penalty_warning(std::optional<double> penalty);

}  // namespace grader
