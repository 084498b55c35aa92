// What makes a build cache entry trustworthy before the grader runs or reads
// it. The referee, the common objects and the workers are executed from
// .grader/cache/; the submission's processes run sealed or in bwrap, where the
// cache is neither writable nor visible, and this is the check behind that:
// an entry is used only when it and every file in it belong to the grader's
// own user, no one else may write them, and each file still has the content
// recorded when it was built. Anything else is rebuilt, never run.
#pragma once

#include <filesystem>
#include <string>

namespace grader::builder_detail {

// Seals a freshly built entry folder: takes group and other write permission
// off it and its files, and writes `.complete` with the SHA-256 of every file.
// Throws std::runtime_error when a file cannot be read.
void write_entry_manifest(const std::filesystem::path& dir);

// Why the entry at dir cannot be used ("" when it can): no or an old-format
// `.complete`, a file missing, changed, a link, owned by another user or
// writable by others.
std::string entry_problem(const std::filesystem::path& dir);

}  // namespace grader::builder_detail
