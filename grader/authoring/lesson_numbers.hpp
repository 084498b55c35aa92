// Every number a lesson states comes from a committed run or a stated fact.
//
// A stated number here is a number with a unit of time (s, ms, µs, us, ns,
// cycles), of rate (GB/s, TB/s, GFLOP/s, TFLOP/s), a ratio (×, x, "N times
// faster"/"slower"/"as"/"the"/"more"/"less", N in digits or a word from two to
// twelve, and "twice as"), a percentage, or a count of what the hardware has
// or does (registers, warps, threads, bytes, MiB, sectors, wavefronts, ...),
// in the lesson's prose or in its hints. It is backed when a row of a
// committed run that its paragraph cites (`<!-- row: FILE: KEY -->`,
// lesson_rows.hpp) holds a value that rounds to it at the precision the lesson
// writes (4.93 from 4.925, 48 % from 48.0), or when the lesson states it once
// as a fact with its source (`<!-- fact: 32 threads: a warp (CUDA C++
// Programming Guide) -->`: the hardware's, or the lab's design); a hint's
// number, when a row the lesson cites or a fact it states does. Any other
// number of the same file is no evidence: a log holds many numbers.
// Sizes (1000×777, 32 × 32 blocks) are not stated numbers; nor is anything in
// code, in a generated block (measured tables, lists of checks) or in a
// sentence or paragraph marked `<!-- not measured: WHY -->` (a source
// lesson's claim being corrected, arithmetic): after a sentence, the mark
// covers the sentence; opening a paragraph, the paragraph.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "course_lint.hpp"

namespace grader {

// A number with its unit as the lesson writes it, and where.
struct StatedNumber {
  std::string value;  // digits as written, without thousands separators: "1306", "4.93"
  std::string unit;   // "ms", "GB/s", "×", "%", ...
  std::string where;  // "README.md:41" or "lab.json step 3 hint 2"
  std::string context;
  std::size_t offset = 0;  // where it starts in the text it was read from
};

// The measurements stated in `text`, each `where` being `where_prefix` and
// (when `line_numbers`) the line; skips what the header above says is skipped.
std::vector<StatedNumber> stated_numbers(const std::string& text, const std::string& where_prefix,
                                         bool line_numbers = true);
// Whether some number in `source` rounds to `value` at value's precision.
bool backed_by(const std::string& value, const std::string& source);
// A hint's text, with where it is ("lab.json step 3 hint 2").
struct LessonHint {
  std::string where, text;
};
// Passes when every stated measurement of the lesson and its hints is backed
// and every row citation names one row; a failure suggests rows that would back.
LintItem lint_lesson_numbers(const std::string& readme, const std::vector<LessonHint>& hints,
                             const std::string& lab_folder, const std::filesystem::path& course_root);

}  // namespace grader
