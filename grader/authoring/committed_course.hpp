// Where `grader publish` reads the course from: its last commit (HEAD), never
// the working tree. A half-done kernel.cu or a scratch file left in a lab
// folder would otherwise reach every student, the kernel.cu even as the
// copy's reset skeleton. A course with changes in what publish reads is
// refused, naming them, so that nobody publishes HEAD believing it holds an
// edit it does not.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace grader {

// The course's files to read, and where they came from. An export of HEAD is
// removed when this goes.
class CourseSnapshot {
 public:
  CourseSnapshot(std::filesystem::path root, std::string source, bool owned)
      : root_(std::move(root)), source_(std::move(source)), owned_(owned) {}
  CourseSnapshot(const CourseSnapshot&) = delete;
  CourseSnapshot& operator=(const CourseSnapshot&) = delete;
  ~CourseSnapshot();

  const std::filesystem::path& root() const { return root_; }
  // "commit 1a2b3c4 (HEAD)", or "the working tree (--from-working-tree)".
  const std::string& source() const { return source_; }

 private:
  std::filesystem::path root_;
  std::string source_;
  bool owned_;
};

// One line of `git status --porcelain=v1 -z`: a path relative to the course
// root and what git says of it.
struct UncommittedFile {
  std::string path;
  std::string state;  // "modified", "untracked", "deleted", "added", "renamed", ...
};
// Parses `git status --porcelain=v1 -z` output, whose paths are relative to
// the repository's top: `prefix` (git rev-parse --show-prefix) is taken off.
std::vector<UncommittedFile> parse_git_status(const std::string& porcelain_z, const std::string& prefix);

// The course as of HEAD, exported into a private temporary folder. `paths`
// (folders and files, relative to the course root) are what publish reads;
// an uncommitted change under one of them for which `matters` holds refuses
// the publish. Throws PublishError: exit 2 when the course is not in a git
// repository, the repository has no commit or such a change exists; exit 4
// when git or tar cannot be run.
std::unique_ptr<CourseSnapshot> committed_course(const std::filesystem::path& root,
                                                 const std::vector<std::string>& paths,
                                                 const std::function<bool(const std::string&)>& matters);

// The course as it is on disk, for --from-working-tree.
std::unique_ptr<CourseSnapshot> working_tree(const std::filesystem::path& root);

}  // namespace grader
