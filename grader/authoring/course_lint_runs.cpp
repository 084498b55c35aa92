// The part of `grader check` that builds: every lab's skeleton and solution
// built with nvcc, their static checks and the fixtures' static verdicts. The
// lint of a lab's sources is course_lint.cpp, its GPU part course_lint_gpu.cpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "activity.hpp"
#include "course_lint.hpp"
#include "fixture_verdict.hpp"
#include "grading.hpp"
#include "ncu_report.hpp"
#include "referee_client.hpp"
#include "session.hpp"
#include "text.hpp"
#include "todo_regions.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

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

GradeReport grade(Session& session, const LabSources& s, const fs::path& submission, bool all_steps) {
  GradeOptions o;
  o.submission = fs::absolute(submission);
  o.all_steps = all_steps;
  return grade_lab(session, s.lab, *s.manifest, o);
}

}  // namespace

std::vector<std::string> failing_checks(const GradeReport& r) {
  std::vector<std::string> out;
  for (const auto& st : r.steps)
    for (const auto& c : st.checks)
      if (c.status == Outcome::fail)
        out.push_back("step " + std::to_string(st.id) + " fails: " + name_of(c.kind) +
                      (c.symptom ? std::string(" (") + name_of(*c.symptom) + ")" : std::string()) + ": " + c.summary);
  return out;
}

std::vector<std::string> diagnostics_lines(const std::string& text, std::size_t max_lines) {
  auto lines = split_lines(text);
  if (lines.size() > max_lines) {
    const std::size_t more = lines.size() - max_lines;
    lines.resize(max_lines);
    lines.push_back("… " + std::to_string(more) + " more lines");
  }
  return lines;
}

namespace {

LintItem* find_item(LabLint& l, const std::string& id) {
  for (auto& i : l.items)
    if (i.id == id) return &i;
  return nullptr;
}

// Compiles the fixtures a core's worth at a time, so that grading them one by
// one afterwards finds every build in the cache: nvcc, not the GPU, is most of
// a static pass, and one fixture at a time leaves all but one core idle.
void build_ahead(Session& session, const LabSources& s) {
  const std::size_t width = std::max(2u, std::thread::hardware_concurrency());
  for (std::size_t i = 0; i < s.fixtures.size(); i += width) {
    std::vector<RunnerSource> chunk;
    for (std::size_t j = i; j < std::min(s.fixtures.size(), i + width); ++j)
      chunk.push_back({s.lab.dir, fs::absolute(s.fixtures[j]), s.fixtures[j].filename().string(), s.manifest->link});
    session.builder->build(chunk);
  }
}

}  // namespace

// ---- nvcc ----

namespace {

// The skeleton builds, and which of its static checks fail (its first step
// must fail on a GPU, so failing ones are expected).
LintItem skeleton_build_item(Session& session, const LabSources& s) {
  const GradeReport sk = grade(session, s, s.lab.dir / s.manifest->student_file, /*all_steps=*/true);
  if (!sk.student_build.ok)
    return make_item("build_skeleton", LintStatus::fail, "the skeleton does not build (" + sk.student_build.stage + ")",
                     diagnostics_lines(sk.student_build.diagnostics));
  const auto fails = failing_checks(sk);
  return make_item(
      "build_skeleton", LintStatus::pass,
      fails.empty() ? "the skeleton builds; it passes every static check (its first step must fail on a GPU)"
                    : "the skeleton builds; its static checks: " + fails.front(),
      fails.size() > 1 ? std::vector<std::string>(fails.begin() + 1, fails.end()) : std::vector<std::string>{});
}

// The solution builds and passes every static check.
std::vector<LintItem> solution_build_items(Session& session, const LabSources& s) {
  const GradeReport so = grade(session, s, *s.solution_path, /*all_steps=*/true);
  if (!so.student_build.ok)
    return {
        make_item("build_solution", LintStatus::fail, "the solution does not build (" + so.student_build.stage + ")",
                  diagnostics_lines(so.student_build.diagnostics)),
        make_item("solution_static", LintStatus::skip, "the solution does not build")};
  const auto fails = failing_checks(so);
  std::size_t statics = 0;
  for (const auto& st : s.manifest->steps)
    for (const auto& c : st.checks) statics += c.is_static() ? 1 : 0;
  return {make_item("build_solution", LintStatus::pass, "the solution builds"),
          fails.empty()
              ? make_item("solution_static", LintStatus::pass,
                          "the solution passes every static check (" + std::to_string(statics) + " ptx/ptxas)")
              : make_item("solution_static", LintStatus::fail, "the solution fails a static check: " + fails.front(),
                          fails)};
}

// Each fixture whose header reads: its verdict without a GPU agrees with its
// // expect: line (a static one holds, a GPU one is not contradicted).
void lint_fixtures_statically(Session& session, const LabSources& s, LabLint& out) {
  build_ahead(session, s);
  for (const auto& f : s.fixtures) {
    LintItem* it = find_item(out, "fixture:" + f.stem().string());
    if (!it || it->status != LintStatus::pass) continue;  // a header that does not read has nothing to verify
    const FixtureExpectation e = read_expectation(f);
    const GradeReport r = grade(session, s, f, /*all_steps=*/false);
    const std::string why = static_verdict_mismatch(r, e);
    if (!why.empty()) {
      it->status = LintStatus::fail;
      it->summary = "expect: " + e.text + ", but without a GPU " + why.substr(0, why.find(": {"));
      it->details = diagnostics_lines(why, 20);
    } else {
      it->summary =
          "expect: " + e.text + (e.is_static() ? " (holds)" : " (the static checks agree; the verdict needs a GPU)");
    }
  }
}

}  // namespace

void lint_lab_builds(Session& session, const LabSources& s, LabLint& out) {
  if (!s.manifest || !s.skeleton) {
    out.items.push_back(
        make_item("builds", LintStatus::skip,
                  !s.manifest ? "lab.json does not load: nothing to build against" : "no kernel.cu to build"));
    return;
  }
  // Build items go before the fixture items, in the order a reader checks them.
  DeviceHidden static_only(session);
  std::vector<LintItem> built = {skeleton_build_item(session, s)};
  if (s.solution)
    for (auto& item : solution_build_items(session, s)) built.push_back(std::move(item));
  auto at = std::find_if(out.items.begin(), out.items.end(),
                         [](const LintItem& i) { return i.id.rfind("fixture:", 0) == 0; });
  out.items.insert(at, built.begin(), built.end());
  lint_fixtures_statically(session, s, out);
}

}  // namespace grader
