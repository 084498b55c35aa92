// The rows of committed runs a lesson cites (lesson_rows.hpp).
#include "lesson_rows.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "lesson_measurements.hpp"
#include "text.hpp"

namespace grader {
namespace {

namespace fs = std::filesystem;

const std::string kRowOpen = "<!-- row: ";
const std::string kRowClose = " -->";

// A cited file's path from the course root: a bare log name is a log's.
std::string resolved(const std::string& cited) {
  return cited.find('/') == std::string::npos ? kMeasurementLogs + cited : cited;
}

// The one distinct line of `text` holding `key`, or why there is not one.
void find_row(CitedRow& c, const std::string& text) {
  std::set<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.find(c.key) != std::string::npos) lines.insert(trim(line));
    start = end + 1;
  }
  if (lines.size() == 1)
    c.row = *lines.begin();
  else if (lines.empty())
    c.problem = "no line of " + c.file + " holds \"" + c.key + "\"";
  else
    c.problem = std::to_string(lines.size()) + " different lines of " + c.file + " hold \"" + c.key +
                "\": cite more of the one row meant";
}

}  // namespace

std::pair<std::size_t, std::size_t> paragraph_around(const std::string& text, std::size_t offset) {
  std::size_t begin = offset == 0 ? std::string::npos : text.rfind("\n\n", offset - 1);
  begin = begin == std::string::npos ? 0 : begin + 2;
  std::size_t end = text.find("\n\n", offset);
  return {begin, end == std::string::npos ? text.size() : end};
}

std::string quotable_text(const std::string& file_text, const fs::path& file, const std::string& lab_folder) {
  if (file.extension() != ".md") return file_text;
  // A measurement file's other labs are not this lesson's runs.
  const auto block = measured_block(file_text, lab_folder);
  return block ? *block : file_text;
}

std::vector<CitedRow> cited_rows(const std::string& lesson, const std::string& lab_folder,
                                 const fs::path& course_root) {
  std::vector<CitedRow> out;
  for (std::size_t at = lesson.find(kRowOpen); at != std::string::npos; at = lesson.find(kRowOpen, at + 1)) {
    CitedRow c;
    std::tie(c.paragraph_begin, c.paragraph_end) = paragraph_around(lesson, at);
    const std::size_t close = lesson.find(kRowClose, at + kRowOpen.size());
    const std::size_t eol = lesson.find('\n', at);
    const std::string inside = close == std::string::npos || close > eol
                                   ? ""
                                   : lesson.substr(at + kRowOpen.size(), close - at - kRowOpen.size());
    const std::size_t colon = inside.find(": ");
    if (colon == std::string::npos || trim(inside.substr(colon + 2)).empty()) {
      c.problem = "a row citation reads \"FILE: KEY -->\" on one line: " + lesson.substr(at, eol - at);
      out.push_back(c);
      continue;
    }
    c.file = resolved(trim(inside.substr(0, colon)));
    c.key = trim(inside.substr(colon + 2));
    if (std::none_of(c.key.begin(), c.key.end(), [](unsigned char ch) { return std::isalpha(ch); }))
      c.problem = "the row citation's key \"" + c.key + "\" names no row: cite the row's name, not only its number";
    else if (c.file.find("..") != std::string::npos || fs::path(c.file).is_absolute() ||
             !starts_with(c.file, "docs/measurements/"))
      c.problem = "a row citation names \"" + c.file + "\", not a file under docs/measurements/";
    else if (const auto text = read_file(course_root / c.file))
      find_row(c, quotable_text(*text, c.file, lab_folder));
    else
      c.problem = "a row citation names " + c.file + ", which is not in this course";
    out.push_back(c);
  }
  return out;
}

}  // namespace grader
