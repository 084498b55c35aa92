// `grader reset`: put a lab's skeleton back into the student's file, after
// keeping the student's version as a backup that is never overwritten.
#pragma once

#include <ctime>
#include <filesystem>
#include <string>

#include "course.hpp"

namespace grader {

struct Skeleton {
  std::string text;
  std::string origin;  // where it came from, said to the student
};

// The pristine student file of `lab`. In a class copy made by `grader
// publish` (it has .grader-manifest.json) it is the copy's
// .reference/<lab-folder>/skeleton/<student_file>. In the course's own
// repository it is the committed file, `git show HEAD:./labs/<lab>/<file>`:
// the file students are handed. Never git in a class copy: there HEAD would
// be the student's own commit. Throws EnvironmentError (exit 4) saying why
// neither is available.
Skeleton find_skeleton(const Course& course, const LabInfo& lab, const std::string& student_file);

// <backups_dir>/<stem>-<UTC time>.<ext>, e.g. kernel-20261122T120000Z.cu.
std::filesystem::path backup_path(const std::filesystem::path& backups_dir, const std::string& student_file,
                                  std::time_t now);

// Writes `text` to `wanted`, or to <stem>-2<ext>, -3, ... when that name is
// taken: an existing backup is never replaced. The file appears whole or not
// at all. Creates the folder. Returns the path written. Throws
// EnvironmentError when it cannot write.
std::filesystem::path write_backup(const std::filesystem::path& wanted, const std::string& text);

// Replaces `file` with `text` atomically (a temporary file beside it, fsynced,
// renamed over it), keeping the file's permissions. Throws EnvironmentError.
void replace_file(const std::filesystem::path& file, const std::string& text);

}  // namespace grader
