// The lesson rules of `grader check`: what a lab's README.md and the hints of
// its lab.json must hold (sections, thresholds not restated, hint ladders,
// symptom hints a check can report). The file and build rules are in
// course_lint.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "course_lint.hpp"
#include "fixture_expectation.hpp"
#include "text.hpp"

namespace grader {

LintItem lint_symptom_hints(const Manifest& m) {
  // A hint keyed by a symptom no check reports is never shown: usually a typo.
  std::vector<std::string> problems;
  std::size_t hints = 0;
  const auto look = [&](const std::map<std::string, std::string>& h, const std::string& where) {
    for (const auto& [symptom, text] : h) {
      ++hints;
      if (!symptom_named(symptom))
        problems.push_back(where + ": \"" + symptom + "\" is not a symptom any check reports");
    }
  };
  look(m.symptom_hints, "symptom_hints");
  for (const auto& st : m.steps) {
    look(st.symptom_hints, "step " + std::to_string(st.id) + " symptom_hints");
    // Without a fallback, a step whose only check is ncu grades nothing where ncu cannot run.
    for (const auto& c : st.checks)
      if (c.kind == CheckKind::ncu && c.fallback.empty() && st.checks.size() == 1)
        problems.push_back("step " + std::to_string(st.id) + ": its only check is ncu and it has no fallback");
  }
  if (!problems.empty())
    return make_item("symptom_hints", LintStatus::fail, std::to_string(problems.size()) + " problems", problems);
  return make_item("symptom_hints", LintStatus::pass,
                   std::to_string(hints) + " symptom hints, each for a symptom a check reports");
}

// Hints are a ladder: the idea, then where in the file, then how. Three rungs at
// least; one of them names the command that shows the evidence the step is
// graded on; the last one guides without pasting the answer (a line of code
// may show a declaration or a call, not a whole body).
LintItem lint_hints(const Manifest& m) {
  static const std::vector<std::string> kCommands = {"grader ", "nvcc", "ncu", "compute-sanitizer", "cuobjdump"};
  constexpr std::size_t kMaxStatementsInLastHint = 2;
  std::vector<std::string> problems;
  std::size_t hints = 0;
  for (const auto& st : m.steps) {
    const std::string where = "step " + std::to_string(st.id);
    hints += st.hints.size();
    if (st.hints.size() < 3)
      problems.push_back(where + " has " + std::to_string(st.hints.size()) +
                         " hints; a step needs at least 3 (idea, where, how)");
    const bool names_command = std::any_of(st.hints.begin(), st.hints.end(), [](const std::string& h) {
      return std::any_of(kCommands.begin(), kCommands.end(),
                         [&](const std::string& c) { return h.find(c) != std::string::npos; });
    });
    if (!names_command)
      problems.push_back(where + ": no hint names the command that shows the evidence (" + join(kCommands, ", ") + ")");
    if (!st.hints.empty()) {
      const auto statements = static_cast<std::size_t>(std::count(st.hints.back().begin(), st.hints.back().end(), ';'));
      if (statements > kMaxStatementsInLastHint)
        problems.push_back(where + "'s last hint holds " + std::to_string(statements) +
                           " statements of code: it should guide, not paste the answer");
    }
  }
  if (!problems.empty())
    return make_item("hints", LintStatus::fail, std::to_string(problems.size()) + " problems", problems);
  return make_item("hints", LintStatus::pass,
                   std::to_string(hints) + " hints, at least 3 a step, each step's ladder naming its evidence");
}

LintItem lint_lesson_sections(const std::string& readme) {
  // Level-2 headings outside fenced code blocks (a code block may show "## x").
  std::vector<std::string> found;
  bool fenced = false;
  for (const auto& raw : split_lines(readme)) {
    const std::string line = trim(raw);
    if (line.rfind("```", 0) == 0 || line.rfind("~~~", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced && raw.rfind("## ", 0) == 0) {
      std::string title = trim(raw.substr(3));
      while (!title.empty() && title.back() == '#') title.pop_back();  // "## Steps ##" is the same heading
      found.push_back(trim(title));
    }
  }
  const auto& want = required_lesson_sections();
  std::vector<std::string> problems;
  std::vector<std::string> in_order;  // the required ones, in the order they appear
  for (const auto& f : found)
    if (std::find(want.begin(), want.end(), f) != want.end()) in_order.push_back(f);
  for (const auto& w : want) {
    const auto n = std::count(found.begin(), found.end(), w);
    if (n == 0) problems.push_back("no \"## " + w + "\" section");
    if (n > 1) problems.push_back("\"## " + w + "\" appears " + std::to_string(n) + " times");
  }
  if (problems.empty() && in_order != want)
    problems.push_back("the sections are in the order " + join(in_order, " · ") + "; they must be " +
                       join(want, " · "));
  if (problems.empty()) return make_item("lesson_sections", LintStatus::pass, "README.md has " + join(want, " · "));
  std::vector<std::string> details = problems;
  details.push_back("level-2 headings found: " + (found.empty() ? std::string("none") : join(found, " · ")));
  return make_item("lesson_sections", LintStatus::fail, "README.md: " + problems.front(), details);
}

// A lesson that restates a threshold goes stale when lab.json changes, so
// thresholds appear only in each step's list of checks, which is generated
// from lab.json (lesson_checks.hpp) and skipped here. The rule is deliberately narrow, so that it
// never flags ordinary prose: a line is reported only when it has a threshold
// word ("threshold", "at least", "minimum", "≥", ">=") AND a number equal to
// some timed check's `min`, written as a threshold would be: with a × or x
// after it, or with a decimal point (2.5, 0.70), or for a fraction as a
// percentage (70 %). Bare integers ("at least 2 loads", "lab05"), numbers
// glued to a word or a size ("sm_90", "8192x8192") and numbers that equal no
// threshold are never flagged.
LintItem lint_lesson_thresholds(const std::string& readme, const Manifest& manifest) {
  static const std::vector<std::string> words = {"threshold", "at least", "minimum", "≥", ">="};
  static const std::regex number(R"((^|[^A-Za-z0-9_.])(\d+(?:\.\d+)?)\s?(%|×|x(?![A-Za-z0-9]))?)");
  std::vector<std::string> found;
  const auto lines = split_lines(readme);
  bool generated = false;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (starts_with(lines[n], "<!-- checks:")) generated = true;
    if (starts_with(lines[n], "<!-- /checks:")) generated = false;
    if (generated) continue;
    const std::string low = lower(lines[n]);
    std::string word;
    for (const auto& w : words)
      if (low.find(w) != std::string::npos) {
        word = w;
        break;
      }
    if (word.empty()) continue;
    for (auto it = std::sregex_iterator(lines[n].begin(), lines[n].end(), number); it != std::sregex_iterator(); ++it) {
      const std::string digits = (*it)[2];
      const std::string unit = (*it)[3];
      const double v = std::stod(digits);
      const bool has_point = digits.find('.') != std::string::npos;
      for (const auto& st : manifest.steps)
        for (const auto& c : st.checks) {
          if (!is_timed(c)) continue;
          const bool fraction = c.kind != CheckKind::speedup;
          const bool as_ratio =
              std::fabs(v - c.min) < 1e-9 && (unit == "×" || unit == "x" || (unit.empty() && has_point));
          const bool as_percent = fraction && unit == "%" && std::fabs(v - 100 * c.min) < 1e-6;
          if (as_ratio || as_percent)
            found.push_back("README.md:" + std::to_string(n + 1) + ": \"" + trim(lines[n]) + "\" restates step " +
                            std::to_string(st.id) + "'s " + name_of(c.kind) + " min (" + digits + unit +
                            ") next to \"" + word + "\"");
        }
    }
  }
  if (found.empty())
    return make_item("lesson_thresholds", LintStatus::pass, "README.md restates no threshold of lab.json");
  found.push_back(
      "say \"the threshold above\" instead: the step's generated list of checks states it, and a number in prose "
      "goes stale when lab.json changes");
  return make_item("lesson_thresholds", LintStatus::fail,
                   "README.md restates " + std::to_string(found.size() - 1) + " threshold" +
                       (found.size() == 2 ? "" : "s") + " of lab.json",
                   found);
}

}  // namespace grader
