// `grader publish`: a class copy of the course without its solutions in any
// form. The copy holds the chosen labs, the grader, common/, the tests (no
// fixtures), the build files, a student README, the syllabus rows of the
// published labs, each lab's skeleton as handed out (.reference/<lab>/skeleton/,
// for `grader reset`), and .grader-manifest.json: the sha256 of every file a
// student must not edit, so `grader verify` can tell a class copy is intact.
// Nothing is built: a copy grades with the referee built from its own public
// driver.cu and common/, exactly as the instructor's course does. Everything
// is read from the course's last commit (committed_course.hpp), and nothing
// is published where a file or a free hint holds a step's fix (step_fixes.hpp).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "course.hpp"
#include "solution_probe.hpp"

namespace grader {

inline constexpr const char* kPublishedManifest = ".grader-manifest.json";
inline constexpr const char* kPublishedSchema = "cuda-memory-labs/published/2";
inline constexpr const char* kReferenceDir = ".reference";

// An expected failure of publish or verify, with the exit code it maps to (app.hpp).
class PublishError : public std::runtime_error {
 public:
  PublishError(const std::string& message, int exit_code) : std::runtime_error(message), exit_code(exit_code) {}
  int exit_code;
};

// ---- pieces (pure functions of their inputs, unit-tested) ----

// The course files copied verbatim, relative to root, sorted: the chosen lab
// folders, grader/, common/, tests/ without tests/fixtures/, the build files,
// scripts/setup and the two reference docs. Dot-files and dot-folders inside
// the copied trees (editor and build leftovers) are not copied. Throws
// PublishError (exit 2) naming a required file the course lacks.
std::vector<std::filesystem::path> select_files(const std::filesystem::path& root,
                                                const std::vector<std::string>& lab_folders);

// The syllabus with only the table rows of the published labs.
std::string filter_syllabus(const std::string& syllabus, const std::vector<std::string>& lab_folders);

// The student README: the course README without its "## For instructors"
// section and without blocks between <!-- instructor-only --> and
// <!-- /instructor-only -->. Throws PublishError when the README has no
// "## For students" section (then it is not the README this expects).
std::string student_readme(const std::string& course_readme);

// "path: holds solutions/labNN/kernel.cu" for every file under dir that does.
std::vector<std::string> find_solution_leaks(const std::filesystem::path& dir,
                                             const std::vector<SolutionProbe>& probes);

// Whether a change to `relative` (a path under one of the folders publish
// reads) changes the copy: not in tests/fixtures, tests/faults or
// tests/adversarial, and no dot-file or dot-folder, which are never copied
// (the required .clang-format aside).
bool read_by_publish(const std::string& relative);

// Where a class copy keeps each lab's student file as handed out, for
// `grader reset`: <root>/.reference/<lab_folder>/skeleton/<student_file>.
// Publish writes it; like every file but the student's, it is protected.
std::filesystem::path published_skeleton(const std::filesystem::path& root, const std::string& lab_folder,
                                         const std::string& student_file);

// ---- the protected-file manifest ----

// Relative paths of the files a student edits (each published lab's student file).
bool is_student_file(const std::string& relative, const std::vector<std::string>& student_files);
nlohmann::json make_published_manifest(const std::filesystem::path& dir, const std::vector<std::string>& lab_folders,
                                       const std::vector<std::string>& student_files);

struct VerifyResult {
  std::filesystem::path root;
  std::size_t checked = 0;
  std::vector<std::string> modified, missing;
  bool ok() const { return modified.empty() && missing.empty(); }
};
// Throws PublishError (exit 2) when root is not a published copy.
VerifyResult verify_published(const std::filesystem::path& root);

// ---- the whole command ----

struct PublishOptions {
  std::filesystem::path out;
  std::vector<std::string> labs;  // as typed (lab07, 7, ...); empty = every lab
  bool force = false;
  std::optional<double> hint_penalty;  // points per hint, stated in the copy (hint_policy.hpp); nullopt: not stated
  // Read the files on disk, not the last commit: uncommitted edits and
  // untracked files included. Needed where the course is not in git.
  bool from_working_tree = false;
};

struct PublishResult {
  std::filesystem::path out;
  std::vector<std::string> labs, notes, warnings;
  std::string source;  // "commit 1a2b3c4 (HEAD)" or "the working tree (--from-working-tree)"
  std::size_t files = 0, protected_files = 0;
  double seconds = 0;
};

// Writes into <out>.tmp-<pid> and renames it to out at the end, so a failure
// leaves no half copy. Throws PublishError with the exit code to use.
PublishResult publish(const Course& course, const PublishOptions& options);

}  // namespace grader
