// `grader package gradescope`: one lab's class copy (publish.hpp) with the two
// scripts Gradescope runs, as the autograder zip its "upload autograder" takes.
// Gradescope unpacks it into /autograder/source, runs setup.sh once as root
// when it builds the image, and run_autograder for every submission; the
// grading itself is `grader gradescope` (docs/batch.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "course.hpp"

namespace grader {

struct GradescopePackageOptions {
  std::filesystem::path out;  // the .zip to write
  std::string lab;            // as typed (lab07, 7, ...)
  std::optional<double> hint_penalty;
  bool from_working_tree = false;
  bool force = false;  // replace an existing file
};

struct GradescopePackageResult {
  std::filesystem::path out;
  std::string lab;     // its folder, e.g. lab07-bank-conflicts
  std::string source;  // what was published: a commit or the working tree
  std::size_t files = 0, bytes = 0;
  std::vector<std::string> notes, warnings;
};

// The scripts, as the zip holds them.
std::string gradescope_setup_script();
std::string gradescope_run_script(const std::string& lab_folder, std::optional<double> hint_penalty);

// Throws PublishError with the exit code to use (a course that cannot be published, an existing file).
GradescopePackageResult package_gradescope(const Course& course, const GradescopePackageOptions& options);

}  // namespace grader
