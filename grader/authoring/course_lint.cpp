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

#include "calibration.hpp"
#include "fixture_expectation.hpp"
#include "grading.hpp"
#include "lesson_checks.hpp"
#include "lesson_measurements.hpp"
#include "lesson_numbers.hpp"
#include "red_flags.hpp"
#include "referee_client.hpp"
#include "session.hpp"
#include "step_fixes.hpp"
#include "text.hpp"
#include "todo_regions.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

const char* name_of(LintStatus status) {
  switch (status) {
    case LintStatus::pass:
      return "pass";
    case LintStatus::fail:
      return "fail";
    case LintStatus::skip:
      return "skip";
    case LintStatus::warn:
      return "warn";
  }
  return "fail";  // not reached: every LintStatus is named above
}

void to_json(nlohmann::json& j, LintStatus status) { j = name_of(status); }
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
  s.course_root = course.root();
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
  if (missing.empty()) return make_item("files", LintStatus::pass, "has " + join(required_lab_files(), ", "));
  return make_item("files", LintStatus::fail, "lacks " + join(missing, ", "),
                   {"every lab folder holds " + join(required_lab_files(), ", ") + " (docs/architecture.md)"});
}

LintItem lint_solution_present(const LabSources& s) {
  if (s.published)
    return make_item("solution", LintStatus::skip,
                     "a published copy (no solutions/ folder): solution-based checks skipped");
  if (s.solution)
    return make_item("solution", LintStatus::pass, "solution at solutions/" + s.lab.folder + "/kernel.cu");
  return make_item("solution", LintStatus::fail, "no solution at solutions/" + s.lab.folder + "/kernel.cu");
}

LintItem lint_manifest(const LabSources& s) {
  if (!s.manifest) return make_item("manifest", LintStatus::fail, "lab.json does not load", {s.manifest_error});
  const auto& m = *s.manifest;
  std::size_t checks = 0;
  for (const auto& st : m.steps) checks += st.checks.size();
  if (m.id != s.lab.id)
    return make_item("manifest", LintStatus::fail,
                     "lab.json's id is \"" + m.id + "\", but the folder says " + s.lab.id);
  // "teaches" leaves red flags out of the lab's grades by kind: a misspelt kind
  // would leave them in without a word.
  const auto& kinds = red_flag_kinds();
  for (const auto& t : m.teaches)
    if (std::find(kinds.begin(), kinds.end(), t) == kinds.end())
      return make_item("manifest", LintStatus::fail, "lab.json teaches \"" + t + "\", which is no kind of red flag",
                       {"the kinds: " + join(kinds, ", ")});
  return make_item("manifest", LintStatus::pass,
                   "valid: " + std::to_string(m.steps.size()) + " steps, " + std::to_string(checks) + " checks");
}

namespace {

struct TodoMarker {
  int line = 0;  // 0-based
  int step = 0;
};

// The skeleton's well-formed markers that name a step of lab.json, and a
// sentence for each line that looks like a marker but is not one.
std::vector<TodoMarker> find_todo_markers(const std::vector<std::string>& lines, const Manifest& manifest,
                                          std::vector<std::string>& problems) {
  static const std::regex loose(R"(TODO\s*\(\s*step)", std::regex::icase);
  static const std::regex strict(R"(// TODO\(step (\d+)\): \S.*\(~\d+ lines?\)\s*$)");
  std::vector<TodoMarker> markers;
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
  return markers;
}

LintItem markers_item(const std::vector<TodoMarker>& markers, const std::vector<std::string>& problems,
                      const Manifest& manifest) {
  if (!problems.empty()) return make_item("todo_markers", LintStatus::fail, problems.front(), problems);
  std::set<int> marked;
  for (const auto& m : markers) marked.insert(m.step);
  std::vector<std::string> unmarked;
  for (const auto& st : manifest.steps)
    if (!marked.count(st.id)) unmarked.push_back(std::to_string(st.id));
  std::vector<std::string> marked_ids;
  for (int s : marked) marked_ids.push_back(std::to_string(s));
  return make_item("todo_markers", LintStatus::pass,
                   std::to_string(markers.size()) + " well-formed marker" + (markers.size() == 1 ? "" : "s") +
                       " for step" + (marked.size() == 1 ? " " : "s ") + join(marked_ids, ", ") +
                       (unmarked.empty()       ? ""
                        : unmarked.size() == 1 ? "; step " + unmarked[0] + " needs no code of its own"
                                               : "; steps " + join(unmarked, ", ") + " need no code of their own"));
}

// A step "needs code" when its checks would differ between skeleton and
// solution; statically that is: the solution changes code in a region whose
// marker names the step. A marker whose region the solution leaves alone
// (or only loses its comment) asks the student for work the reference never did.
// A hunk is credited to every region it touches: adjacent markers filled by
// one block of code (lab07's "pad the tile" right above "stage the tile")
// cannot be told apart by a line diff, so this errs towards passing.
LintItem solution_fills_markers(const std::vector<std::string>& lines, const std::vector<TodoMarker>& markers,
                                const std::string& solution) {
  const auto in = todo_region_lines(lines);
  const auto hunks = diff_lines(lines, split_lines(solution));
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
  if (solution.find("TODO(step") != std::string::npos) idle.push_back("the solution still holds a TODO(step N) marker");
  if (idle.empty())
    return make_item("todo_solution", LintStatus::pass, "the solution fills every marked region with code");
  return make_item("todo_solution", LintStatus::fail, idle.front(), idle);
}

}  // namespace

std::vector<LintItem> lint_todo_markers(const std::string& skeleton, const std::optional<std::string>& solution,
                                        const Manifest& manifest) {
  const auto lines = split_lines(skeleton);
  std::vector<std::string> problems;
  const auto markers = find_todo_markers(lines, manifest, problems);
  std::vector<LintItem> out = {markers_item(markers, problems, manifest)};
  if (!solution)
    out.push_back(make_item("todo_solution", LintStatus::skip, "no solution to compare the TODO regions with"));
  else
    out.push_back(solution_fills_markers(lines, markers, *solution));
  return out;
}

LintItem lint_stray_hunks(const std::string& skeleton, const std::string& solution) {
  const auto hunks = stray_hunks(skeleton, solution);
  if (hunks.empty())
    return make_item("stray_hunks", LintStatus::pass, "the solution equals the skeleton outside the TODO regions");
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
  return make_item("stray_hunks", LintStatus::fail,
                   "the solution changes the skeleton outside every TODO region: " + std::to_string(hunks.size()) +
                       " hunk" + (hunks.size() == 1 ? "" : "s") + ", the first at line " +
                       std::to_string(hunks.front().skeleton_line),
                   details);
}

LintItem lint_given_fixes(const LabSources& s) {
  if (!s.solution || !s.skeleton || !s.manifest)
    return make_item("fixes_not_given", LintStatus::skip, "no solution to take the steps' fixes from");
  // Every file of the folder a student gets, as publish copies it (no dot-files).
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(s.lab.dir, ec); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename().string().rfind('.', 0) == 0) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink())
      if (auto text = read_text(it->path()))
        files.emplace_back("labs/" + s.lab.folder + "/" + fs::relative(it->path(), s.lab.dir).generic_string(), *text);
  }
  std::sort(files.begin(), files.end());
  const auto fixes = step_fixes(*s.skeleton, *s.solution);
  const auto found =
      find_given_fixes(files, {{"solutions/" + s.lab.folder + "/kernel.cu", fixes, free_hints(*s.manifest)}});
  if (found.empty())
    return make_item("fixes_not_given", LintStatus::pass,
                     "no file of the lab and no free hint holds any of the solution's " + std::to_string(fixes.size()) +
                         " filled TODO regions");
  auto details = found;
  details.push_back(
      "a free hint should point at the fix without stating it (the paid hints can show code); a published file "
      "should not hold it at all, under any names");
  return make_item("fixes_not_given", LintStatus::fail, found.front(), details);
}

LintItem lint_fixture_header(const fs::path& fixture, const Manifest& manifest, FixtureExpectation* out) {
  const std::string id = "fixture:" + fixture.stem().string();
  try {
    FixtureExpectation e = read_expectation(fixture);
    const std::string problem = expectation_problem(e, manifest);
    if (!problem.empty()) return make_item(id, LintStatus::fail, fixture.filename().string() + ": " + problem);
    if (out) *out = e;
    return make_item(id, LintStatus::pass, "expect: " + e.text);
  } catch (const ExpectationError& e) {
    return make_item(id, LintStatus::fail, e.what());
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
    if (s.manifest) {
      // The lists give each calibrated GPU's threshold too: a calibration that does not read fails the list.
      try {
        l.items.push_back(lint_lesson_checks(*s.readme, *s.manifest,
                                             thresholds_per_gpu(course_calibrations(s.course_root), s.lab.folder)));
      } catch (const CalibrationError& e) {
        l.items.push_back(make_item("lesson_checks", LintStatus::fail, e.what()));
      }
    }
    // A published copy holds no measurement files; the lessons it was made from were checked.
    l.items.push_back(s.published ? make_item("lesson_measurements", LintStatus::skip,
                                              "a published copy holds no measurement files to compare with")
                                  : lint_lesson_measurements(*s.readme, s.lab.folder, s.course_root));
    if (s.manifest) l.items.push_back(lint_lesson_thresholds(*s.readme, *s.manifest));
    if (s.published) {
      l.items.push_back(
          make_item("lesson_numbers", LintStatus::skip, "a published copy holds no measurements to quote"));
    } else {
      std::vector<LessonHint> hints;
      if (s.manifest) {
        for (const auto& st : s.manifest->steps) {
          for (std::size_t h = 0; h < st.hints.size(); ++h)
            hints.push_back({"lab.json step " + std::to_string(st.id) + " hint " + std::to_string(h + 1), st.hints[h]});
          for (const auto& [symptom, text] : st.symptom_hints)
            hints.push_back({"lab.json step " + std::to_string(st.id) + " symptom hint " + symptom, text});
        }
        // The lab's own and the course's (labs/symptom_hints.json), which every lab shows.
        for (const auto& [symptom, text] : s.manifest->symptom_hints)
          hints.push_back({"symptom hint " + symptom, text});
      }
      l.items.push_back(lint_lesson_numbers(*s.readme, hints, s.lab.folder, s.course_root));
    }
  }
  if (s.skeleton && s.manifest)
    for (auto& i : lint_todo_markers(*s.skeleton, s.solution, *s.manifest)) l.items.push_back(std::move(i));
  if (s.skeleton && s.solution) l.items.push_back(lint_stray_hunks(*s.skeleton, *s.solution));
  if (s.skeleton && s.manifest) l.items.push_back(lint_given_fixes(s));
  if (s.manifest)
    for (const auto& f : s.fixtures) l.items.push_back(lint_fixture_header(f, *s.manifest));
  return l;
}

// ---- the whole course ----

int lint_exit_code(const CourseLint& c, bool not_all_checked) {
  bool failed = false;
  for (const auto& l : c.labs) {
    if (l.manifest_error) return kExitUsage;
    for (const auto& i : l.items) failed = failed || i.status == LintStatus::fail;
  }
  if (failed) return kExitStepFailed;
  if (not_all_checked) return kExitEnvironment;
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
      ++counts[name_of(i.status)];
      ok = ok && i.status != LintStatus::fail;
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
