// A file written whole or not at all: a crash or a kill mid-write leaves the
// old file (or none), never half of the new one.
#pragma once

#include <filesystem>
#include <string>

namespace grader {

// Writes a temporary file beside `file`, fsyncs it and renames it over `file`,
// creating the folder. Throws std::runtime_error.
void write_file_atomically(const std::filesystem::path& file, const std::string& content);

}  // namespace grader
