// The generated "Checked" list of each step of a lesson (lesson_checks.hpp).
#include "lesson_checks.hpp"

#include <cmath>
#include <regex>

#include "text.hpp"

namespace grader {
namespace {

std::string open_marker(int step) {
  return "<!-- checks:" + std::to_string(step) + ": generated from lab.json by `grader check --write-lessons` -->";
}
std::string close_marker(int step) { return "<!-- /checks:" + std::to_string(step) + " -->"; }

// Where each step's block starts and ends in the lesson (npos when absent).
struct BlockPlace {
  std::size_t begin = std::string::npos, end = std::string::npos;  // end: just past the closing marker's line
  int count = 0;
};

BlockPlace find_block(const std::string& readme, int step) {
  BlockPlace p;
  const std::string open = "<!-- checks:" + std::to_string(step) + ":";
  const std::string close = close_marker(step);
  for (std::size_t at = readme.find(open); at != std::string::npos; at = readme.find(open, at + 1)) {
    if (at != 0 && readme[at - 1] != '\n') continue;
    ++p.count;
    if (p.count > 1) continue;
    const std::size_t c = readme.find(close, at);
    if (c == std::string::npos) continue;
    p.begin = at;
    const std::size_t eol = readme.find('\n', c);
    p.end = eol == std::string::npos ? readme.size() : eol + 1;
  }
  return p;
}

// Just past the line "### Step N..." and the blank line after it.
std::size_t after_step_heading(const std::string& readme, int step) {
  static const std::regex heading(R"((^|\n)### Step (\d+)\b[^\n]*\n)");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), heading); it != std::sregex_iterator(); ++it) {
    if (std::stoi((*it)[2]) != step) continue;
    std::size_t at = static_cast<std::size_t>(it->position(0) + it->length(0));
    if (at < readme.size() && readme[at] == '\n') ++at;
    return at;
  }
  return std::string::npos;
}

std::string timed_value(const Check& c, double v) {
  if (c.kind == CheckKind::speedup) return plain_number(std::round(v * 100) / 100) + "×";
  return plain_number(std::round(v * 1000) / 10) + " %";
}

// "  - per GPU, ...: NVIDIA H200 asks 38.3 % (the reference reaches 53.3 %); ...", or "" when no
// calibration has a value made for this lab.json threshold (a stale one is not what a grade applies).
std::string per_gpu_line(int step, const Check& c, const ThresholdsPerGpu& per_gpu, const std::string& lead) {
  if (!is_timed(c)) return "";
  const std::string id = timed_check_id(step, c);
  std::vector<std::string> cards;
  for (const auto& [gpu, checks] : per_gpu) {
    const auto k = checks.find(id);
    if (k == checks.end() || k->second.design_min != c.min) continue;
    std::string card = gpu + " asks " + timed_value(c, k->second.min);
    if (k->second.reference) card += " (the reference reaches " + timed_value(c, *k->second.reference) + ")";
    cards.push_back(card);
  }
  if (cards.empty()) return "";
  return "  - " + lead + "per GPU, as `grader calibrate` measured it there: " + join(cards, "; ") + "\n";
}

}  // namespace

ThresholdsPerGpu thresholds_per_gpu(const std::vector<Calibration>& calibrations, const std::string& lab_folder) {
  ThresholdsPerGpu out;
  for (const auto& c : calibrations)
    if (const auto l = c.labs.find(lab_folder); l != c.labs.end()) out[c.gpu] = l->second;
  return out;
}

std::string step_checks_block(const Step& step, const ThresholdsPerGpu& per_gpu) {
  std::string s = open_marker(step.id) + "\n**Checked** (" + std::to_string(step.points) + " point" +
                  (step.points == 1 ? "" : "s") + "):\n\n";
  // A step an older GPU does not grade says so where its checks are listed.
  if (const auto cc = step.min_compute_capability)
    s += "Graded on GPUs of compute capability " + dotted_compute_capability(*cc) +
         " and later; on an older one the grader says it is not graded there.\n\n";
  for (const auto& c : step.checks) {
    s += "- " + check_in_words(c) + "\n";
    s += per_gpu_line(step.id, c, per_gpu, "");
    for (const auto& f : c.fallback) s += per_gpu_line(step.id, f, per_gpu, "without the counters, ");
  }
  return s + close_marker(step.id) + "\n";
}

std::string with_current_checks(const std::string& readme, const Manifest& manifest, const ThresholdsPerGpu& per_gpu) {
  std::string out = readme;
  for (const auto& step : manifest.steps) {
    const std::string block = step_checks_block(step, per_gpu);
    const BlockPlace p = find_block(out, step.id);
    if (p.begin != std::string::npos) {
      out.replace(p.begin, p.end - p.begin, block);
      continue;
    }
    if (p.count > 0) continue;  // an opening marker without its end: the lint says so
    const std::size_t at = after_step_heading(out, step.id);
    if (at != std::string::npos) out.insert(at, block + "\n");
  }
  return out;
}

LintItem lint_lesson_checks(const std::string& readme, const Manifest& manifest, const ThresholdsPerGpu& per_gpu) {
  std::vector<std::string> problems;
  for (const auto& step : manifest.steps) {
    const std::string n = std::to_string(step.id);
    const BlockPlace p = find_block(readme, step.id);
    if (p.count > 1) {
      problems.push_back("step " + n + " has " + std::to_string(p.count) + " lists of checks; it needs one");
    } else if (p.count == 1 && p.begin == std::string::npos) {
      problems.push_back("step " + n + "'s list of checks has no closing " + close_marker(step.id));
    } else if (p.count == 0) {
      problems.push_back("step " + n + " has no list of checks" +
                         (after_step_heading(readme, step.id) == std::string::npos
                              ? " and no \"### Step " + n + "\" heading to put one under"
                              : ""));
    } else if (readme.compare(p.begin, p.end - p.begin, step_checks_block(step, per_gpu)) != 0) {
      problems.push_back("step " + n + "'s list of checks differs from lab.json and the course's calibrations");
    }
  }
  if (problems.empty())
    return make_item("lesson_checks", LintStatus::pass, "README.md lists every step's checks as lab.json states them");
  problems.push_back("`grader check --write-lessons` writes them from lab.json and calibration/*.json");
  return make_item("lesson_checks", LintStatus::fail, "README.md: " + problems.front(), problems);
}

}  // namespace grader
