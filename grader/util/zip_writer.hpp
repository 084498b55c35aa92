// A .zip archive of files kept as they are (the "stored" method, no
// compression): what Gradescope takes as an autograder, readable by every
// unzip. Each entry keeps its Unix mode, so a script stays executable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace grader {

struct ZipEntry {
  std::string name;     // the path inside the archive, '/'-separated, relative
  std::string content;  // the file's bytes
  std::uint32_t mode = 0644;
};

// The archive's bytes. Throws std::invalid_argument for a name that is empty,
// absolute, holds ".." or a backslash, or an entry too large for a plain zip.
std::string zip_archive(const std::vector<ZipEntry>& entries);

// Every regular file under `dir`, by its path relative to it, sorted, with its mode.
std::vector<ZipEntry> zip_entries_of(const std::filesystem::path& dir);

std::uint32_t crc32(const std::string& bytes);

}  // namespace grader
