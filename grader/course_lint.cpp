#include "course_lint.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "fixture_expectation.hpp"
#include "grading.hpp"
#include "referee_client.hpp"
#include "session.hpp"
#include "text.hpp"
#include "todo_regions.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

// A lab file's text; nothing for a folder or a missing file.
std::optional<std::string> read_text(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  return read_file(p);
}

bool is_marker_line(const std::string& line) { return line.find("// TODO(step ") != std::string::npos; }

// A line that does something: not blank, not only a comment.
bool is_code(const std::string& line) {
  const std::string t = trim(line);
  return !t.empty() && t.rfind("//", 0) != 0;
}

}  // namespace

// ---- reading a lab ----

const std::vector<std::string>& required_lab_files() {
  static const std::vector<std::string> f = {"README.md", "lab.json", "lab.cuh", "kernel.cu", "driver.cu"};
  return f;
}

const std::vector<std::string>& required_lesson_sections() {
  static const std::vector<std::string> s = {"Why it matters", "What the hardware does", "Your task", "Steps",
                                             "Going further"};
  return s;
}

LabSources read_lab_sources(const Course& course, const LabInfo& lab) {
  LabSources s;
  s.lab = lab;
  try {
    s.manifest = load_manifest(lab.dir / "lab.json");
  } catch (const std::exception& e) {
    s.manifest_error = e.what();
  }
  s.readme = read_text(lab.dir / "README.md");
  s.skeleton = read_text(lab.dir / (s.manifest ? s.manifest->student_file : std::string("kernel.cu")));
  std::error_code ec;
  s.published = !fs::is_directory(course.root() / "solutions", ec);
  if (!s.published) {
    s.solution_path = course.solution_kernel(lab);
    s.solution = read_text(*s.solution_path);
  }
  const fs::path fixtures = course.root() / "tests" / "fixtures" / lab.folder;
  if (fs::is_directory(fixtures, ec))
    for (const auto& f : fs::directory_iterator(fixtures, ec))
      if (f.path().extension() == ".cu") s.fixtures.push_back(f.path());
  std::sort(s.fixtures.begin(), s.fixtures.end());
  return s;
}

// ---- text-only rules ----

LintItem lint_files(const fs::path& lab_dir) {
  std::vector<std::string> missing;
  for (const auto& f : required_lab_files())
    if (!fs::is_regular_file(lab_dir / f)) missing.push_back(f);
  if (missing.empty()) return make_item("files", "pass", "has " + join(required_lab_files(), ", "));
  return make_item("files", "fail", "lacks " + join(missing, ", "),
                   {"every lab folder holds " + join(required_lab_files(), ", ") + " (docs/architecture.md)"});
}

LintItem lint_solution_present(const LabSources& s) {
  if (s.published)
    return make_item("solution", "skip", "a published copy (no solutions/ folder): solution-based checks skipped");
  if (s.solution) return make_item("solution", "pass", "solution at solutions/" + s.lab.folder + "/kernel.cu");
  return make_item("solution", "fail", "no solution at solutions/" + s.lab.folder + "/kernel.cu");
}

LintItem lint_manifest(const LabSources& s) {
  if (!s.manifest) return make_item("manifest", "fail", "lab.json does not load", {s.manifest_error});
  const auto& m = *s.manifest;
  std::size_t checks = 0;
  for (const auto& st : m.steps) checks += st.checks.size();
  if (m.id != s.lab.id)
    return make_item("manifest", "fail", "lab.json's id is \"" + m.id + "\", but the folder says " + s.lab.id);
  return make_item("manifest", "pass",
                   "valid: " + std::to_string(m.steps.size()) + " steps, " + std::to_string(checks) + " checks");
}

LintItem lint_symptom_hints(const Manifest& m) {
  // A hint keyed by a symptom no check reports is never shown: usually a typo.
  const auto& known = known_symptoms();
  std::vector<std::string> problems;
  std::size_t hints = 0;
  const auto look = [&](const std::map<std::string, std::string>& h, const std::string& where) {
    for (const auto& [symptom, text] : h) {
      ++hints;
      if (std::find(known.begin(), known.end(), symptom) == known.end())
        problems.push_back(where + ": \"" + symptom + "\" is not a symptom any check reports");
    }
  };
  look(m.symptom_hints, "symptom_hints");
  for (const auto& st : m.steps) {
    look(st.symptom_hints, "step " + std::to_string(st.id) + " symptom_hints");
    // Without a fallback, a step whose only check is ncu grades nothing where ncu cannot run.
    for (const auto& c : st.checks)
      if (c.kind == "ncu" && c.fallback.empty() && st.checks.size() == 1)
        problems.push_back("step " + std::to_string(st.id) + ": its only check is ncu and it has no fallback");
  }
  if (!problems.empty())
    return make_item("symptom_hints", "fail", std::to_string(problems.size()) + " problems", problems);
  return make_item("symptom_hints", "pass",
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
  if (!problems.empty()) return make_item("hints", "fail", std::to_string(problems.size()) + " problems", problems);
  return make_item("hints", "pass",
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
  if (problems.empty()) return make_item("lesson_sections", "pass", "README.md has " + join(want, " · "));
  std::vector<std::string> details = problems;
  details.push_back("level-2 headings found: " + (found.empty() ? std::string("none") : join(found, " · ")));
  return make_item("lesson_sections", "fail", "README.md: " + problems.front(), details);
}

// A lesson that restates a threshold goes stale when lab.json changes, so
// thresholds live only in lab.json. The rule is deliberately narrow, so that it
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
  for (std::size_t n = 0; n < lines.size(); ++n) {
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
          const bool fraction = c.kind != "speedup";
          const bool as_ratio =
              std::fabs(v - c.min) < 1e-9 && (unit == "×" || unit == "x" || (unit.empty() && has_point));
          const bool as_percent = fraction && unit == "%" && std::fabs(v - 100 * c.min) < 1e-6;
          if (as_ratio || as_percent)
            found.push_back("README.md:" + std::to_string(n + 1) + ": \"" + trim(lines[n]) + "\" restates step " +
                            std::to_string(st.id) + "'s " + c.kind + " min (" + digits + unit + ") next to \"" + word +
                            "\"");
        }
    }
  }
  if (found.empty()) return make_item("lesson_thresholds", "pass", "README.md restates no threshold of lab.json");
  found.push_back("say \"the threshold in lab.json\" instead: a number in prose goes stale when lab.json changes");
  return make_item("lesson_thresholds", "fail",
                   "README.md restates " + std::to_string(found.size() - 1) + " threshold" +
                       (found.size() == 2 ? "" : "s") + " of lab.json",
                   found);
}

std::vector<LintItem> lint_todo_markers(const std::string& skeleton, const std::optional<std::string>& solution,
                                        const Manifest& manifest) {
  static const std::regex loose(R"(TODO\s*\(\s*step)", std::regex::icase);
  static const std::regex strict(R"(// TODO\(step (\d+)\): \S.*\(~\d+ lines?\)\s*$)");
  const auto lines = split_lines(skeleton);
  struct Marker {
    int line = 0;  // 0-based
    int step = 0;
  };
  std::vector<Marker> markers;
  std::vector<std::string> problems;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (!std::regex_search(lines[n], loose)) continue;
    std::smatch m;
    const std::string where = "kernel.cu:" + std::to_string(n + 1) + ": ";
    if (!std::regex_search(lines[n], m, strict) || !is_marker_line(lines[n])) {
      problems.push_back(where + "malformed marker \"" + trim(lines[n]) +
                         "\" (want \"// TODO(step N): <what to write> (~K lines)\")");
      continue;
    }
    const int step = std::stoi(m[1]);
    if (!manifest.find_step(step)) {
      std::string ids;
      for (const auto& st : manifest.steps) ids += (ids.empty() ? "" : ", ") + std::to_string(st.id);
      problems.push_back(where + "the marker names step " + std::to_string(step) +
                         ", which lab.json does not have (steps: " + ids + ")");
      continue;
    }
    markers.push_back({static_cast<int>(n), step});
  }
  if (markers.empty() && problems.empty())
    problems.push_back("kernel.cu has no TODO(step N) marker: what is the student to write?");
  std::set<int> marked;
  for (const auto& m : markers) marked.insert(m.step);
  std::vector<std::string> unmarked;
  for (const auto& st : manifest.steps)
    if (!marked.count(st.id)) unmarked.push_back(std::to_string(st.id));
  std::vector<std::string> marked_ids;
  for (int s : marked) marked_ids.push_back(std::to_string(s));

  std::vector<LintItem> out;
  if (problems.empty()) {
    out.push_back(
        make_item("todo_markers", "pass",
                  std::to_string(markers.size()) + " well-formed marker" + (markers.size() == 1 ? "" : "s") +
                      " for step" + (marked.size() == 1 ? " " : "s ") + join(marked_ids, ", ") +
                      (unmarked.empty()       ? ""
                       : unmarked.size() == 1 ? "; step " + unmarked[0] + " needs no code of its own"
                                              : "; steps " + join(unmarked, ", ") + " need no code of their own")));
  } else {
    out.push_back(make_item("todo_markers", "fail", problems.front(), problems));
  }

  if (!solution) {
    out.push_back(make_item("todo_solution", "skip", "no solution to compare the TODO regions with"));
    return out;
  }
  // A step "needs code" when its checks would differ between skeleton and
  // solution; statically that is: the solution changes code in a region whose
  // marker names the step. A marker whose region the solution leaves alone
  // (or only loses its comment) asks the student for work the reference never did.
  // A hunk is credited to every region it touches: adjacent markers filled by
  // one block of code (lab07's "pad the tile" right above "stage the tile")
  // cannot be told apart by a line diff, so this errs towards passing.
  const auto in = todo_region_lines(lines);
  const auto hunks = diff_lines(lines, split_lines(*solution));
  std::vector<std::string> idle;
  for (const auto& mk : markers) {
    int end = mk.line;
    while (end + 1 < static_cast<int>(lines.size()) && in[end + 1] && !is_marker_line(lines[end + 1])) ++end;
    bool changed = false;
    for (const auto& h : hunks) {
      const int first = h.skeleton_line - 1;
      const int last = first + static_cast<int>(h.removed.size()) - 1;
      const bool touches = h.removed.empty()
                               ? ((first - 1 >= mk.line && first - 1 <= end) || (first >= mk.line && first <= end))
                               : (first <= end && last >= mk.line);
      if (!touches) continue;
      bool code = std::any_of(h.added.begin(), h.added.end(), is_code);
      for (int k = std::max(first, mk.line); k <= std::min(last, end) && !code; ++k) code = is_code(lines[k]);
      changed = changed || code;
    }
    if (!changed)
      idle.push_back("kernel.cu:" + std::to_string(mk.line + 1) + ": step " + std::to_string(mk.step) +
                     " has a marker, but the solution changes no code in its region");
  }
  const bool solution_keeps_markers = solution->find("TODO(step") != std::string::npos;
  if (solution_keeps_markers) idle.push_back("the solution still holds a TODO(step N) marker");
  if (idle.empty())
    out.push_back(make_item("todo_solution", "pass", "the solution fills every marked region with code"));
  else
    out.push_back(make_item("todo_solution", "fail", idle.front(), idle));
  return out;
}

LintItem lint_stray_hunks(const std::string& skeleton, const std::string& solution) {
  const auto hunks = stray_hunks(skeleton, solution);
  if (hunks.empty())
    return make_item("stray_hunks", "pass", "the solution equals the skeleton outside the TODO regions");
  std::vector<std::string> details;
  for (const auto& h : hunks) {
    details.push_back("kernel.cu line " + std::to_string(h.skeleton_line) + ":");
    std::size_t shown = 0;
    for (const auto& l : h.removed)
      if (shown++ < 6) details.push_back("  - " + l);
    for (const auto& l : h.added)
      if (shown++ < 12) details.push_back("  + " + l);
    if (shown > 12) details.push_back("  … " + std::to_string(shown - 12) + " more lines");
  }
  return make_item("stray_hunks", "fail",
                   "the solution changes the skeleton outside every TODO region: " + std::to_string(hunks.size()) +
                       " hunk" + (hunks.size() == 1 ? "" : "s") + ", the first at line " +
                       std::to_string(hunks.front().skeleton_line),
                   details);
}

LintItem lint_fixture_header(const fs::path& fixture, const Manifest& manifest, FixtureExpectation* out) {
  const std::string id = "fixture:" + fixture.stem().string();
  try {
    FixtureExpectation e = read_expectation(fixture);
    const std::string problem = expectation_problem(e, manifest);
    if (!problem.empty()) return make_item(id, "fail", fixture.filename().string() + ": " + problem);
    if (out) *out = e;
    return make_item(id, "pass", "expect: " + e.text);
  } catch (const ExpectationError& e) {
    return make_item(id, "fail", e.what());
  }
}

LabLint lint_lab_sources(const LabSources& s) {
  LabLint l;
  l.lab = s.lab.folder;
  l.items.push_back(lint_files(s.lab.dir));
  l.items.push_back(lint_solution_present(s));
  l.items.push_back(lint_manifest(s));
  l.manifest_error = !s.manifest;
  if (s.manifest) l.items.push_back(lint_symptom_hints(*s.manifest));
  if (s.manifest) l.items.push_back(lint_hints(*s.manifest));
  if (s.readme) {
    l.items.push_back(lint_lesson_sections(*s.readme));
    if (s.manifest) l.items.push_back(lint_lesson_thresholds(*s.readme, *s.manifest));
  }
  if (s.skeleton && s.manifest)
    for (auto& i : lint_todo_markers(*s.skeleton, s.solution, *s.manifest)) l.items.push_back(std::move(i));
  if (s.skeleton && s.solution) l.items.push_back(lint_stray_hunks(*s.skeleton, *s.solution));
  if (s.manifest)
    for (const auto& f : s.fixtures) l.items.push_back(lint_fixture_header(f, *s.manifest));
  return l;
}

// ---- the whole course ----

int lint_exit_code(const CourseLint& c, bool no_toolkit) {
  bool failed = false;
  for (const auto& l : c.labs) {
    if (l.manifest_error) return kExitUsage;
    for (const auto& i : l.items) failed = failed || i.status == "fail";
  }
  if (failed) return kExitStepFailed;
  if (no_toolkit) return kExitEnvironment;
  return kExitPass;
}

json lint_to_json(const CourseLint& c) {
  json labs = json::array();
  std::map<std::string, int> counts = {{"pass", 0}, {"fail", 0}, {"skip", 0}, {"warn", 0}};
  for (const auto& l : c.labs) {
    json items = json::array();
    bool ok = true;
    for (const auto& i : l.items) {
      items.push_back({{"id", i.id}, {"status", i.status}, {"summary", i.summary}, {"details", i.details}});
      ++counts[i.status];
      ok = ok && i.status != "fail";
    }
    labs.push_back(
        {{"lab", l.lab}, {"ok", ok && !l.manifest_error}, {"manifest_error", l.manifest_error}, {"items", items}});
  }
  json skipped = json::array();
  for (const auto& [what, why] : c.skipped) skipped.push_back({{"what", what}, {"why", why}});
  return {{"schema", "cuda-memory-labs/check/1"},
          {"root", c.root},
          {"published", c.published},
          {"static_only", c.static_only},
          {"arch", c.arch.empty() ? json(nullptr) : json(c.arch)},
          {"gpu", c.gpu},
          {"labs", labs},
          {"skipped", skipped},
          {"counts", counts},
          {"exit_code", c.exit_code}};
}

}  // namespace grader
