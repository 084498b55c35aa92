// A lesson's measured tables, copied from the committed measurements (lesson_measurements.hpp).
#include "lesson_measurements.hpp"

#include <vector>

#include "bench_sections.hpp"
#include "text.hpp"

namespace grader {
namespace {

namespace fs = std::filesystem;

const std::string kOpen = "<!-- measured: ";
const std::string kClose = "<!-- /measured -->";

// One "<!-- measured: FILE -->" ... "<!-- /measured -->" in a lesson.
struct MeasuredTable {
  std::string file;               // as the marker names it
  std::size_t content_begin = 0;  // just past the opening marker's line
  std::size_t content_end = 0;    // where the closing marker starts
  bool closed = false;
};

std::vector<MeasuredTable> find_tables(const std::string& readme) {
  std::vector<MeasuredTable> out;
  for (std::size_t at = readme.find(kOpen); at != std::string::npos; at = readme.find(kOpen, at + 1)) {
    if (at != 0 && readme[at - 1] != '\n') continue;
    MeasuredTable t;
    const std::size_t eol = readme.find('\n', at);
    const std::string line = readme.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
    const std::size_t end_of_name = line.rfind(" -->");
    t.file = trim(
        line.substr(kOpen.size(), end_of_name == std::string::npos ? std::string::npos : end_of_name - kOpen.size()));
    t.content_begin = eol == std::string::npos ? readme.size() : eol + 1;
    const std::size_t close = readme.find(kClose, t.content_begin);
    t.closed = close != std::string::npos;
    t.content_end = t.closed ? close : readme.size();
    out.push_back(t);
  }
  return out;
}

// What the table should hold, or why it cannot be known.
struct Expected {
  std::optional<std::string> content;
  std::string problem;
};

Expected expected_content(const MeasuredTable& t, const std::string& lab_folder, const fs::path& course_root) {
  if (t.file.empty() || t.file.find("..") != std::string::npos || fs::path(t.file).is_absolute())
    return {std::nullopt, "a measured table names \"" + t.file + "\", not a file of the course"};
  const auto text = read_file(course_root / t.file);
  if (!text) return {std::nullopt, "the measured table's file " + t.file + " is not in this course"};
  auto block = measured_block(*text, lab_folder);
  if (!block) return {std::nullopt, t.file + " has no table for " + lab_folder + " (run `grader bench`)"};
  return {block, ""};
}

}  // namespace

std::optional<std::string> measured_block(const std::string& measurements, const std::string& lab_folder) {
  auto body = bench_section(measurements, lab_folder);
  // The heading belongs to the measurement file's outline, not to the lesson's.
  if (body && body->compare(0, 3, "## ") == 0) {
    const std::size_t eol = body->find('\n');
    std::size_t from = eol == std::string::npos ? body->size() : eol + 1;
    if (from < body->size() && (*body)[from] == '\n') ++from;
    body->erase(0, from);
  }
  return body;
}

std::string with_current_measurements(const std::string& readme, const std::string& lab_folder,
                                      const fs::path& course_root) {
  std::string out = readme;
  // From the last table to the first, so that earlier offsets stay valid.
  auto tables = find_tables(out);
  for (auto it = tables.rbegin(); it != tables.rend(); ++it) {
    if (!it->closed) continue;
    const Expected e = expected_content(*it, lab_folder, course_root);
    if (e.content) out.replace(it->content_begin, it->content_end - it->content_begin, *e.content);
  }
  return out;
}

LintItem lint_lesson_measurements(const std::string& readme, const std::string& lab_folder,
                                  const fs::path& course_root) {
  const auto tables = find_tables(readme);
  if (tables.empty()) return make_item("lesson_measurements", LintStatus::pass, "README.md copies no measured table");
  std::vector<std::string> problems;
  for (const auto& t : tables) {
    if (!t.closed) {
      problems.push_back("the measured table from " + t.file + " has no closing " + kClose);
      continue;
    }
    const Expected e = expected_content(t, lab_folder, course_root);
    if (!e.content)
      problems.push_back(e.problem);
    else if (readme.compare(t.content_begin, t.content_end - t.content_begin, *e.content) != 0)
      problems.push_back("the measured table differs from " + t.file);
  }
  if (problems.empty())
    return make_item("lesson_measurements", LintStatus::pass,
                     "README.md's " + std::to_string(tables.size()) + " measured table" +
                         (tables.size() == 1 ? " reads" : "s read") + " as the committed measurements");
  problems.push_back("`grader check --write-lessons` copies them again from the measurement files");
  return make_item("lesson_measurements", LintStatus::fail, "README.md: " + problems.front(), problems);
}

}  // namespace grader
