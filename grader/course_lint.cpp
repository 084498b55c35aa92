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

std::optional<std::string> read_text(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

LintItem item(const std::string& id, const std::string& status, const std::string& summary,
              std::vector<std::string> details = {}) {
  return {id, status, summary, std::move(details)};
}

bool is_marker_line(const std::string& line) { return line.find("// TODO(step ") != std::string::npos; }

// A line that does something: not blank, not only a comment.
bool is_code(const std::string& line) {
  const std::string t = trim(line);
  return !t.empty() && t.rfind("//", 0) != 0;
}

// ---- grading through grade_lab, as `grader grade LAB --submission FILE` ----

// Static verdicts must not depend on whether the lint machine has a GPU, so
// the static pass grades as if there were none.
class DeviceHidden {
 public:
  explicit DeviceHidden(Session& s) : s_(s), saved_(s.device) {
    s_.device.present = false;
    s_.device.reason = "static checks only";
  }
  ~DeviceHidden() { s_.device = saved_; }
  DeviceHidden(const DeviceHidden&) = delete;
  DeviceHidden& operator=(const DeviceHidden&) = delete;

 private:
  Session& s_;
  DeviceInfo saved_;
};

GradeReport grade(Session& session, const LabSources& s, const fs::path& submission, bool all_steps,
                  double cap_s = 3.0) {
  GradeOptions o;
  o.submission = fs::absolute(submission);
  o.all_steps = all_steps;
  o.cap_s = cap_s;
  return grade_lab(session, s.lab, *s.manifest, o);
}

// "step 1 fails: ptx (transpose_kernel PTX: no ld.shared)" for each failing check.
std::vector<std::string> failing_checks(const GradeReport& r) {
  std::vector<std::string> out;
  for (const auto& st : r.steps)
    for (const auto& c : st.checks)
      if (c.status == "fail")
        out.push_back("step " + std::to_string(st.id) + " fails: " + c.kind +
                      (c.symptom.empty() ? "" : " (" + c.symptom + ")") + ": " + c.summary);
  return out;
}

std::vector<std::string> diagnostics_lines(const std::string& text, std::size_t max_lines = 12) {
  auto lines = split_lines(text);
  if (lines.size() > max_lines) {
    const std::size_t more = lines.size() - max_lines;
    lines.resize(max_lines);
    lines.push_back("… " + std::to_string(more) + " more lines");
  }
  return lines;
}

LintItem* find_item(LabLint& l, const std::string& id) {
  for (auto& i : l.items)
    if (i.id == id) return &i;
  return nullptr;
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
  if (missing.empty()) return item("files", "pass", "has " + join(required_lab_files(), ", "));
  return item("files", "fail", "lacks " + join(missing, ", "),
              {"every lab folder holds " + join(required_lab_files(), ", ") + " (docs/architecture.md)"});
}

LintItem lint_solution_present(const LabSources& s) {
  if (s.published)
    return item("solution", "skip", "a published copy (no solutions/ folder): solution-based checks skipped");
  if (s.solution) return item("solution", "pass", "solution at solutions/" + s.lab.folder + "/kernel.cu");
  return item("solution", "fail", "no solution at solutions/" + s.lab.folder + "/kernel.cu");
}

LintItem lint_manifest(const LabSources& s) {
  if (!s.manifest) return item("manifest", "fail", "lab.json does not load", {s.manifest_error});
  const auto& m = *s.manifest;
  std::size_t checks = 0;
  for (const auto& st : m.steps) checks += st.checks.size();
  if (m.id != s.lab.id)
    return item("manifest", "fail", "lab.json's id is \"" + m.id + "\", but the folder says " + s.lab.id);
  return item("manifest", "pass",
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
  if (!problems.empty()) return item("symptom_hints", "fail", std::to_string(problems.size()) + " problems", problems);
  return item("symptom_hints", "pass", std::to_string(hints) + " symptom hints, each for a symptom a check reports");
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
  if (problems.empty()) return item("lesson_sections", "pass", "README.md has " + join(want, " · "));
  std::vector<std::string> details = problems;
  details.push_back("level-2 headings found: " + (found.empty() ? std::string("none") : join(found, " · ")));
  return item("lesson_sections", "fail", "README.md: " + problems.front(), details);
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
  if (found.empty()) return item("lesson_thresholds", "pass", "README.md restates no threshold of lab.json");
  found.push_back("say \"the threshold in lab.json\" instead: a number in prose goes stale when lab.json changes");
  return item("lesson_thresholds", "fail",
              "README.md restates " + std::to_string(found.size() - 1) + " threshold" + (found.size() == 2 ? "" : "s") +
                  " of lab.json",
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
        item("todo_markers", "pass",
             std::to_string(markers.size()) + " well-formed marker" + (markers.size() == 1 ? "" : "s") + " for step" +
                 (marked.size() == 1 ? " " : "s ") + join(marked_ids, ", ") +
                 (unmarked.empty()       ? ""
                  : unmarked.size() == 1 ? "; step " + unmarked[0] + " needs no code of its own"
                                         : "; steps " + join(unmarked, ", ") + " need no code of their own")));
  } else {
    out.push_back(item("todo_markers", "fail", problems.front(), problems));
  }

  if (!solution) {
    out.push_back(item("todo_solution", "skip", "no solution to compare the TODO regions with"));
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
    out.push_back(item("todo_solution", "pass", "the solution fills every marked region with code"));
  else
    out.push_back(item("todo_solution", "fail", idle.front(), idle));
  return out;
}

LintItem lint_stray_hunks(const std::string& skeleton, const std::string& solution) {
  const auto hunks = stray_hunks(skeleton, solution);
  if (hunks.empty()) return item("stray_hunks", "pass", "the solution equals the skeleton outside the TODO regions");
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
  return item("stray_hunks", "fail",
              "the solution changes the skeleton outside every TODO region: " + std::to_string(hunks.size()) + " hunk" +
                  (hunks.size() == 1 ? "" : "s") + ", the first at line " + std::to_string(hunks.front().skeleton_line),
              details);
}

LintItem lint_fixture_header(const fs::path& fixture, const Manifest& manifest, FixtureExpectation* out) {
  const std::string id = "fixture:" + fixture.stem().string();
  try {
    FixtureExpectation e = read_expectation(fixture);
    const std::string problem = expectation_problem(e, manifest);
    if (!problem.empty()) return item(id, "fail", fixture.filename().string() + ": " + problem);
    if (out) *out = e;
    return item(id, "pass", "expect: " + e.text);
  } catch (const ExpectationError& e) {
    return item(id, "fail", e.what());
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

// ---- nvcc ----

void lint_lab_builds(Session& session, const LabSources& s, LabLint& out) {
  if (!s.manifest || !s.skeleton) {
    out.items.push_back(item(
        "builds", "skip", !s.manifest ? "lab.json does not load: nothing to build against" : "no kernel.cu to build"));
    return;
  }
  // Build items go before the fixture items, in the order a reader checks them.
  std::vector<LintItem> built;
  DeviceHidden static_only(session);
  const GradeReport sk = grade(session, s, s.lab.dir / s.manifest->student_file, /*all_steps=*/true);
  if (!sk.student_build.ok) {
    built.push_back(item("build_skeleton", "fail", "the skeleton does not build (" + sk.student_build.stage + ")",
                         diagnostics_lines(sk.student_build.diagnostics)));
  } else {
    const auto fails = failing_checks(sk);
    built.push_back(
        item("build_skeleton", "pass",
             fails.empty() ? "the skeleton builds; it passes every static check (its first step must fail on a GPU)"
                           : "the skeleton builds; its static checks: " + fails.front(),
             fails.size() > 1 ? std::vector<std::string>(fails.begin() + 1, fails.end()) : std::vector<std::string>{}));
  }
  if (s.solution) {
    const GradeReport so = grade(session, s, *s.solution_path, /*all_steps=*/true);
    if (!so.student_build.ok) {
      built.push_back(item("build_solution", "fail", "the solution does not build (" + so.student_build.stage + ")",
                           diagnostics_lines(so.student_build.diagnostics)));
      built.push_back(item("solution_static", "skip", "the solution does not build"));
    } else {
      built.push_back(item("build_solution", "pass", "the solution builds"));
      const auto fails = failing_checks(so);
      std::size_t statics = 0;
      for (const auto& st : s.manifest->steps)
        for (const auto& c : st.checks) statics += c.is_static() ? 1 : 0;
      if (fails.empty())
        built.push_back(item("solution_static", "pass",
                             "the solution passes every static check (" + std::to_string(statics) + " ptx/ptxas)"));
      else
        built.push_back(item("solution_static", "fail", "the solution fails a static check: " + fails.front(), fails));
    }
  }
  auto at = std::find_if(out.items.begin(), out.items.end(),
                         [](const LintItem& i) { return i.id.rfind("fixture:", 0) == 0; });
  out.items.insert(at, built.begin(), built.end());
  for (const auto& f : s.fixtures) {
    LintItem* it = find_item(out, "fixture:" + f.stem().string());
    if (!it || it->status != "pass") continue;  // a header that does not read has nothing to verify
    const FixtureExpectation e = read_expectation(f);
    const GradeReport r = grade(session, s, f, /*all_steps=*/false);
    const std::string why = static_verdict_mismatch(report_to_json(r), r.exit_code, e);
    if (!why.empty()) {
      it->status = "fail";
      it->summary = "expect: " + e.text + ", but without a GPU " + why.substr(0, why.find(": {"));
      it->details = diagnostics_lines(why, 20);
    } else {
      it->summary =
          "expect: " + e.text + (e.is_static() ? " (holds)" : " (the static checks agree; the verdict needs a GPU)");
    }
  }
}

// ---- GPU ----

LintItem margin_item(int step, const Check& c, double median, double required_margin) {
  const std::string id = "margin:step" + std::to_string(step) + ":" + c.kind + ":" + c.case_name;
  const double margin = c.min > 0 ? median / c.min : 0;
  const bool speedup = c.kind == "speedup";
  const std::string value = speedup ? fixed(median) + "×" : fixed(100 * median, 1) + " %";
  const std::string threshold = speedup ? fixed(c.min) + "×" : fixed(100 * c.min, 1) + " %";
  const std::string summary = "step " + std::to_string(step) + " " + c.kind + " at " + c.case_name +
                              ": the reference reaches " + value + " against a threshold of " + threshold +
                              ", a margin of " + fixed(margin) + "× (needs ≥ " + fixed(required_margin) + "×)";
  if (margin >= required_margin) return item(id, "pass", summary);
  if (c.kind == "fraction_of_peak")
    return item(id, "warn", summary,
                {"a fraction of peak near 1 cannot always clear the margin; keep the threshold as high as the "
                 "reference allows on the slowest GPU the course runs on"});
  return item(id, "fail", summary,
              {"lower the threshold in lab.json or speed up the reference: a threshold the reference clears by less "
               "than " +
               fixed(required_margin) + "× fails good submissions on a noisy or different GPU"});
}

void lint_lab_gpu(Session& session, const LabSources& s, const GpuLintOptions& o, LabLint& out) {
  if (!s.manifest || !s.skeleton) return;
  const Manifest& m = *s.manifest;
  const int first = m.steps.front().id;

  const GradeReport sk = grade(session, s, s.lab.dir / m.student_file, false, o.cap_s);
  const auto sk_fails = failing_checks(sk);
  if (sk.exit_code == kExitStepFailed && sk.current_step == first)
    out.items.push_back(
        item("skeleton_fails_first_step", "pass",
             "as shipped, the skeleton fails step " + std::to_string(first) +
                 (sk_fails.empty() ? std::string()
                                   : " (" + sk_fails.front().substr(sk_fails.front().find("fails: ") + 7) + ")")));
  else
    out.items.push_back(item("skeleton_fails_first_step", "fail",
                             "the skeleton as shipped should fail step " + std::to_string(first) + ", but " +
                                 (sk.exit_code == kExitPass ? std::string("it passes every step")
                                  : sk.current_step ? "its first unpassed step is " + std::to_string(*sk.current_step) +
                                                          " (exit " + std::to_string(sk.exit_code) + ")"
                                                    : "grading exits " + std::to_string(sk.exit_code)),
                             sk_fails));

  // A published copy grades with the referee built from its own public files,
  // so the skeleton's verdict above still means something; the rest needs the solution.
  if (!s.solution) {
    out.items.push_back(item(
        "solution_gpu", "skip",
        s.published ? "a published copy: the solution passes, threshold margins and fixture verdicts need solutions/"
                    : "no solution: the solution passes, threshold margins and fixture verdicts cannot run"));
    return;
  }
  const GradeReport so = grade(session, s, *s.solution_path, true, o.cap_s);
  if (so.exit_code == kExitPass) {
    out.items.push_back(
        item("solution_passes", "pass", "the solution passes all " + std::to_string(m.steps.size()) + " steps"));
  } else {
    std::vector<std::string> d = failing_checks(so);
    for (const auto& st : so.steps)
      for (const auto& c : st.checks)
        if (c.status == "skipped")
          d.push_back("step " + std::to_string(st.id) + " " + c.kind + " skipped: " + c.summary);
    out.items.push_back(item("solution_passes", "fail",
                             "the solution does not pass every step (exit " + std::to_string(so.exit_code) + ")", d));
  }

  // The reference solution's own timing, as grading.cpp's timing_for asks the
  // student's: one session per case decides every threshold on it.
  const auto builds = session.builder->build({{s.lab.dir, *s.solution_path, "solution kernel.cu", m.link}});
  std::map<std::string, std::vector<std::pair<int, const Check*>>> by_case;
  for (const auto& st : m.steps)
    for (const auto& c : st.checks) {
      if (is_timed(c)) by_case[c.case_name].push_back({st.id, &c});
      for (const auto& f : c.fallback)  // what grades the step where ncu cannot run needs its margin too
        if (is_timed(f)) by_case[f.case_name].push_back({st.id, &f});
    }
  const fs::path run_dir = session.new_run_dir(s.lab.id + "-margin");
  const std::uint64_t seed = std::random_device{}();
  for (const auto& [case_name, checks] : by_case) {
    if (!builds[0].ok) {
      for (const auto& [step, c] : checks)
        out.items.push_back(item("margin:step" + std::to_string(step) + ":" + c->kind + ":" + case_name, "fail",
                                 "the reference does not build"));
      continue;
    }
    RefereeCall rc;
    rc.referee = builds[0].referee;
    rc.worker = builds[0].worker;
    rc.args = {"time", "--case", case_name, "--seed", std::to_string(seed), "--cap-s", fixed(o.cap_s, 3)};
    for (const auto& [step, c] : checks)
      rc.args.insert(rc.args.end(), {"--decide", std::string(c->kind == "speedup"            ? "speedup:"
                                                             : c->kind == "fraction_of_peak" ? "fraction:"
                                                                                             : "library:") +
                                                     fixed(c->min, 4)});
    rc.work_dir = run_dir / case_name;
    rc.request_timeout_s = m.timeout_s;
    rc.timeout_s = 3 * m.timeout_s + 6 * o.cap_s + 60;
    rc.who = "the reference";
    const RunnerOutcome t = call_referee(rc);
    for (const auto& [step, c] : checks) {
      const std::string id = "margin:step" + std::to_string(step) + ":" + c->kind + ":" + case_name;
      if (!t.ok()) {
        out.items.push_back(item(id, "fail", "timing the reference at " + case_name + " failed: " + t.message));
        continue;
      }
      const json tj = t.result.is_object() && t.result.contains("timing") ? t.result.at("timing") : json::object();
      const char* key = c->kind == "speedup"            ? "speedup"
                        : c->kind == "fraction_of_peak" ? "fraction"
                                                        : "library_fraction";
      if (!tj.contains(key) || !tj[key].is_object()) {
        out.items.push_back(
            item(id, "fail", "the reference's timing at " + case_name + " has no " + key + " interval"));
        continue;
      }
      out.items.push_back(margin_item(step, *c, tj[key].value("median", 0.0), o.required_margin));
    }
  }
  if (!session.global.verbose) {
    std::error_code ec;
    fs::remove_all(run_dir, ec);
  }

  for (const auto& f : s.fixtures) {
    const std::string id = "fixture_gpu:" + f.stem().string();
    // Its static verdict may have failed; the GPU verdict still says more.
    FixtureExpectation e;
    if (lint_fixture_header(f, m, &e).status != "pass") {
      out.items.push_back(
          item(id, "skip", "its // expect: header does not read (see fixture:" + f.stem().string() + ")"));
      continue;
    }
    const GradeReport r = grade(session, s, f, false, o.cap_s);
    const std::string why = verdict_mismatch(report_to_json(r), r.exit_code, e);
    if (why.empty())
      out.items.push_back(item(id, "pass", f.filename().string() + ": " + e.text));
    else
      out.items.push_back(
          item(id, "fail", f.filename().string() + ": " + why.substr(0, why.find(": {")), diagnostics_lines(why, 20)));
  }
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
