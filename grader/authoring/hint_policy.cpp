#include "hint_policy.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "gradebook.hpp"
#include "publish.hpp"

namespace grader {

std::string HintPolicy::sentence() const {
  if (!penalty)
    return "Your instructor may take points off for hints: grader hint records how many you were shown "
           "(in .grader/progress.json), and a class grade can read that count.";
  if (*penalty <= 0) return "Hints are free in this class: none costs points.";
  return "Each hint you are shown costs " + format_number(*penalty, 3) + " point" + (*penalty == 1 ? "" : "s") +
         " in this class (a lab's score never goes below 0); a hint you have seen before is free.";
}

HintPolicy read_hint_policy(const std::filesystem::path& course_root) {
  HintPolicy p;
  std::ifstream in(course_root / kPublishedManifest);
  if (!in) return p;
  try {
    const nlohmann::json m = nlohmann::json::parse(in);
    if (m.is_object() && m.contains("hint_penalty") && m["hint_penalty"].is_number()) {
      const double v = m["hint_penalty"].get<double>();
      if (v >= 0) p.penalty = v;
    }
  } catch (const std::exception&) {
    // An unreadable manifest states nothing; `grader verify` reports it.
  }
  return p;
}

std::string with_hint_policy(const std::string& readme, const HintPolicy& policy) {
  const std::string section = "### Hints in this class\n\n" + policy.sentence() +
                              " `grader hint LAB` shows one hint at a time and says what it costs before it shows "
                              "one you have not seen.\n\n";
  // The end of "## For students": the next level-2 heading outside code, or the end.
  const std::size_t students = readme.find("## For students");
  std::size_t at = std::string::npos;
  if (students != std::string::npos) {
    bool in_code = false;
    std::size_t pos = readme.find('\n', students);
    while (pos != std::string::npos && pos + 1 < readme.size()) {
      const std::size_t line = pos + 1;
      if (readme.compare(line, 3, "```") == 0) in_code = !in_code;
      if (!in_code && readme.compare(line, 3, "## ") == 0) {
        at = line;
        break;
      }
      pos = readme.find('\n', line);
    }
  }
  if (at == std::string::npos) {
    std::string out = readme;
    if (!out.empty() && out.back() != '\n') out += "\n";
    return out + "\n" + section;
  }
  return readme.substr(0, at) + section + readme.substr(at);
}

std::string hint_penalty_warning(std::optional<double> penalty) {
  if (!penalty || !(*penalty > 0)) return "";
  return "--hint-penalty " + format_number(*penalty, 2) +
         ": for uploads the penalty is on the honour system. `grader batch` and `grader gradescope` read a student's "
         "hint count from the .grader/progress.json inside the upload, a file the student writes and can edit or "
         "delete (7 hints become 0), and every hint's text is in the copy's lab.json, readable without `grader hint`. "
         "Treat the count as the student's own report (docs/security.md, \"What it does not guarantee\").";
}

}  // namespace grader
