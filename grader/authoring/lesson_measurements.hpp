// Measured tables in a lesson, copied from the committed measurements that
// `grader bench` writes (docs/measurements/<gpu>.md), so that a lesson never
// shows a number no run produced. A lesson asks for its lab's table with
//
//   <!-- measured: docs/measurements/h100.md -->
//   ...
//   <!-- /measured -->
//
// and gets that file's block for the lab (between `<!-- bench:LAB -->` and
// `<!-- /bench:LAB -->`), without its heading. `grader check` fails a lesson
// whose copy differs from the file; `grader check --write-lessons` copies it
// again. Prose around the table names its rows instead of restating numbers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "course_lint.hpp"

namespace grader {

// The lab's block of a measurement file, without the markers and its "## " heading; nullopt when absent.
std::optional<std::string> measured_block(const std::string& measurements, const std::string& lab_folder);
// The lesson with every measured table copied again from its file (a path
// relative to the course root). A table whose file or block is missing stays
// as it is (lint_lesson_measurements reports it).
std::string with_current_measurements(const std::string& readme, const std::string& lab_folder,
                                      const std::filesystem::path& course_root);
// Passes when every measured table reads as its file says (or the lesson has none).
LintItem lint_lesson_measurements(const std::string& readme, const std::string& lab_folder,
                                  const std::filesystem::path& course_root);

}  // namespace grader
