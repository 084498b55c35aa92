// A course on disk: the root folder with labs/ and syllabus.md, and the lab
// folders found under labs/. Every subcommand starts here to turn what the
// user typed ("5", "readonly", "lab05-readonly") into a lab folder.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace grader {

struct LabInfo {
  std::string folder;  // "lab07-bank-conflicts"
  std::string id;      // "lab07"
  int number = 0;      // 7
  std::string topic;   // "bank-conflicts"
  std::filesystem::path dir;
};

class CourseError : public std::runtime_error {
  using runtime_error::runtime_error;
};

class UnknownLab : public CourseError {
 public:
  UnknownLab(const std::string& message, std::vector<std::string> suggestions)
      : CourseError(message), suggestions(std::move(suggestions)) {}
  std::vector<std::string> suggestions;  // lab folders close to what was asked for
};

// A prefix that names more than one lab.
class AmbiguousLab : public CourseError {
 public:
  AmbiguousLab(const std::string& message, std::vector<std::string> matches)
      : CourseError(message), matches(std::move(matches)) {}
  std::vector<std::string> matches;  // lab folders the prefix names
};

class Course {
 public:
  // Throws CourseError if root is not a course root, saying what is missing.
  static Course open(const std::filesystem::path& root);
  // Finds the root: explicit_root (if non-empty) > $CUDA_LABS_ROOT > the
  // current folder and its parents > the executable's folder and its parents.
  static Course discover(const std::filesystem::path& explicit_root = {});
  // Whether dir holds labs/ and syllabus.md.
  static bool is_root(const std::filesystem::path& dir);

  const std::filesystem::path& root() const { return root_; }
  const std::vector<LabInfo>& labs() const { return labs_; }  // sorted by number

  // Accepts the folder, "lab07", "lab7", "7", "07", the topic, or a unique
  // prefix of a topic; case-insensitive, surrounding spaces ignored.
  // Throws UnknownLab or AmbiguousLab.
  const LabInfo& resolve(const std::string& query) const;

  std::filesystem::path solution_kernel(const LabInfo& lab) const;  // may not exist
  // Where this user keeps the course's progress, runs and builds: root/.grader
  // in a checkout of its own, else a folder of its own (state_dir_for).
  const std::filesystem::path& state_dir() const { return state_dir_; }
  // Why the state is not in root/.grader ("" when it is): said with every grade.
  const std::string& state_note() const { return state_note_; }

 private:
  std::filesystem::path root_;
  std::vector<LabInfo> labs_;
  std::filesystem::path state_dir_;
  std::string state_note_;
};

// The state folder of the course at root for the user euid: root/.grader where
// that is (or may become) a folder of this user's that it can write; else, for a
// read-only course, a class install or another user's checkout, a folder of its
// own under $XDG_STATE_HOME (default ~/.local/state, else /tmp/cuda-memory-labs-<uid>),
// named by the course's folder and a hash of its path. `note` says which and why.
std::filesystem::path state_dir_for(const std::filesystem::path& root, unsigned euid, std::string& note);

}  // namespace grader
