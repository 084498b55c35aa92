// The rows of committed runs a lesson cites for its numbers.
//
// A paragraph of a lesson cites the run behind its figures with
//   <!-- row: FILE: KEY -->
// FILE is a log's file name (under docs/measurements/logs/) or a path under
// docs/measurements/; KEY is text that one line of that file holds: the row.
// In a measurement file of several labs (docs/measurements/h100.md) only the
// lab's own block is read. A number of the paragraph is backed when a cited row
// holds a value that rounds to it; a hint's number, when any row the lesson
// cites does. The comment is invisible where the lesson is read, and the row
// is where a reader checks the figure.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace grader {

// Where the committed logs are, from the course root; a citation names a log by file name alone.
inline constexpr const char* kMeasurementLogs = "docs/measurements/logs/";

struct CitedRow {
  std::string file;                 // as cited, resolved relative to the course root
  std::string key;                  // as cited
  std::size_t paragraph_begin = 0;  // the citing paragraph, as offsets into the lesson
  std::size_t paragraph_end = 0;
  std::string row;      // the one line of the file that holds the key; empty with a problem
  std::string problem;  // why the citation names no row: no such file, no line, several lines
};

// Every citation in `lesson`, each with its row read from under `course_root`.
std::vector<CitedRow> cited_rows(const std::string& lesson, const std::string& lab_folder,
                                 const std::filesystem::path& course_root);

// The paragraph (between blank lines) of `text` around `offset`, as [begin, end).
std::pair<std::size_t, std::size_t> paragraph_around(const std::string& text, std::size_t offset);

// The text of a committed run as a lesson of `lab_folder` may quote it: a
// measurement file's own block for the lab where it has one, else the whole file.
std::string quotable_text(const std::string& file_text, const std::filesystem::path& file,
                          const std::string& lab_folder);

}  // namespace grader
