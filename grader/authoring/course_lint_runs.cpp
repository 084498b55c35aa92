// The parts of `grader check` that build and grade: every lab's skeleton and
// solution built with nvcc, the fixtures' static verdicts, and on a GPU the
// solution's grade, the skeleton's first failing step, the threshold margins
// and the fixtures' GPU verdicts. The lint of a lab's sources is course_lint.cpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "activity.hpp"
#include "course_lint.hpp"
#include "fixture_expectation.hpp"
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
      if (c.status == Outcome::fail)
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
    return make_item("build_skeleton", "fail", "the skeleton does not build (" + sk.student_build.stage + ")",
                     diagnostics_lines(sk.student_build.diagnostics));
  const auto fails = failing_checks(sk);
  return make_item(
      "build_skeleton", "pass",
      fails.empty() ? "the skeleton builds; it passes every static check (its first step must fail on a GPU)"
                    : "the skeleton builds; its static checks: " + fails.front(),
      fails.size() > 1 ? std::vector<std::string>(fails.begin() + 1, fails.end()) : std::vector<std::string>{});
}

// The solution builds and passes every static check.
std::vector<LintItem> solution_build_items(Session& session, const LabSources& s) {
  const GradeReport so = grade(session, s, *s.solution_path, /*all_steps=*/true);
  if (!so.student_build.ok)
    return {make_item("build_solution", "fail", "the solution does not build (" + so.student_build.stage + ")",
                      diagnostics_lines(so.student_build.diagnostics)),
            make_item("solution_static", "skip", "the solution does not build")};
  const auto fails = failing_checks(so);
  std::size_t statics = 0;
  for (const auto& st : s.manifest->steps)
    for (const auto& c : st.checks) statics += c.is_static() ? 1 : 0;
  return {make_item("build_solution", "pass", "the solution builds"),
          fails.empty()
              ? make_item("solution_static", "pass",
                          "the solution passes every static check (" + std::to_string(statics) + " ptx/ptxas)")
              : make_item("solution_static", "fail", "the solution fails a static check: " + fails.front(), fails)};
}

// Each fixture whose header reads: its verdict without a GPU agrees with its
// // expect: line (a static one holds, a GPU one is not contradicted).
void lint_fixtures_statically(Session& session, const LabSources& s, LabLint& out) {
  build_ahead(session, s);
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

}  // namespace

void lint_lab_builds(Session& session, const LabSources& s, LabLint& out) {
  if (!s.manifest || !s.skeleton) {
    out.items.push_back(make_item(
        "builds", "skip", !s.manifest ? "lab.json does not load: nothing to build against" : "no kernel.cu to build"));
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

// ---- GPU ----

LintItem margin_item(int step, const Check& c, double median, double required_margin) {
  const std::string id = "margin:step" + std::to_string(step) + ":" + name_of(c.kind) + ":" + c.case_name;
  const double margin = c.min > 0 ? median / c.min : 0;
  const bool speedup = c.kind == CheckKind::speedup;
  const std::string value = speedup ? fixed(median) + "×" : fixed(100 * median, 1) + " %";
  const std::string threshold = speedup ? fixed(c.min) + "×" : fixed(100 * c.min, 1) + " %";
  const std::string summary = "step " + std::to_string(step) + " " + name_of(c.kind) + " at " + c.case_name +
                              ": the reference reaches " + value + " against a threshold of " + threshold +
                              ", a margin of " + fixed(margin) + "× (needs ≥ " + fixed(required_margin) + "×)";
  if (margin >= required_margin) return make_item(id, "pass", summary);
  if (c.kind == CheckKind::fraction_of_peak)
    return make_item(id, "warn", summary,
                     {"a fraction of peak near 1 cannot always clear the margin; keep the threshold as high as the "
                      "reference allows on the slowest GPU the course runs on"});
  return make_item(
      id, "fail", summary,
      {"lower the threshold in lab.json or speed up the reference: a threshold the reference clears by less "
       "than " +
       fixed(required_margin) + "× fails good submissions on a noisy or different GPU"});
}

namespace {

// A lab's GPU checks can take minutes: without a spinner (a log, a pipe) the
// skeleton's, the solution's and each fixture's verdict is written to stderr as
// it comes, so the run never looks stuck.
void note_progress(const Session& session, const LintItem& item, std::chrono::steady_clock::time_point since) {
  if (session.global.json || Activity::enabled()) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  std::cerr << "    " << item.id << ": " << item.status << " (" << fixed(s, 1) << " s)\n";
  // A run cut short (a time limit, ^C) never prints the lab's items: say why here.
  if (item.status == "fail") {
    std::cerr << "      " << item.summary << "\n";
    for (const auto& d : item.details) std::cerr << "      " << d << "\n";
  }
}

// As shipped, the skeleton must fail the lab's first step.
void lint_skeleton_on_gpu(Session& session, const LabSources& s, const GpuLintOptions& o, LabLint& out) {
  const Manifest& m = *s.manifest;
  const int first = m.steps.front().id;
  const auto skeleton_since = std::chrono::steady_clock::now();
  const GradeReport sk = grade(session, s, s.lab.dir / m.student_file, false, o.cap_s);
  const auto sk_fails = failing_checks(sk);
  if (sk.exit_code == kExitStepFailed && sk.current_step == first)
    out.items.push_back(
        make_item("skeleton_fails_first_step", "pass",
                  "as shipped, the skeleton fails step " + std::to_string(first) +
                      (sk_fails.empty() ? std::string()
                                        : " (" + sk_fails.front().substr(sk_fails.front().find("fails: ") + 7) + ")")));
  else
    out.items.push_back(
        make_item("skeleton_fails_first_step", "fail",
                  "the skeleton as shipped should fail step " + std::to_string(first) + ", but " +
                      (sk.exit_code == kExitPass ? std::string("it passes every step")
                       : sk.current_step         ? "its first unpassed step is " + std::to_string(*sk.current_step) +
                                               " (exit " + std::to_string(sk.exit_code) + ")"
                                         : "grading exits " + std::to_string(sk.exit_code)),
                  sk_fails));
  note_progress(session, out.items.back(), skeleton_since);
}

// The solution must pass every step.
void lint_solution_on_gpu(Session& session, const LabSources& s, const GpuLintOptions& o, LabLint& out) {
  const Manifest& m = *s.manifest;
  const auto solution_since = std::chrono::steady_clock::now();
  const GradeReport so = grade(session, s, *s.solution_path, true, o.cap_s);
  if (so.exit_code == kExitPass) {
    out.items.push_back(
        make_item("solution_passes", "pass", "the solution passes all " + std::to_string(m.steps.size()) + " steps"));
    // Each hardware-counter reading beside its bound: how far the reference
    // is from every ncu rule (timed thresholds get margin items of their own).
    for (const auto& st : so.steps)
      for (const auto& c : st.checks)
        if (const NcuMeasure* m =
                c.kind == "ncu" && c.status == Outcome::pass ? find_ncu_measure(c.data.value("metric", "")) : nullptr)
          out.items.push_back(make_item(
              "counter:step" + std::to_string(st.id) + ":" + m->name + ":" + c.data.value("case", ""), "pass",
              "the reference's " + c.summary + " (needs " +
                  ncu_bound_in_words(*m, c.data.value(m->rule == NcuMeasure::at_least ? "min" : "max", 0.0)) + ")"));
  } else {
    std::vector<std::string> d = failing_checks(so);
    for (const auto& st : so.steps)
      for (const auto& c : st.checks)
        if (c.status == Outcome::skipped)
          d.push_back("step " + std::to_string(st.id) + " " + c.kind + " skipped: " + c.summary);
    out.items.push_back(make_item("solution_passes", "fail",
                                  "the solution does not pass every step (exit " + std::to_string(so.exit_code) + ")",
                                  d));
  }
  note_progress(session, out.items.back(), solution_since);
}

// What the margin lint decides is the margin, not the threshold: the session
// may stop early only once every interval is clear of threshold × margin.
void add_margin_decisions(RefereeCall& rc, const std::vector<std::pair<int, const Check*>>& checks,
                          double required_margin) {
  for (const auto& [step, c] : checks)
    rc.args.insert(rc.args.end(), {"--decide", timing_decide_name(c->kind) + ":" + fixed(c->min * required_margin, 4)});
}

// Every timed threshold against the reference's own timing, case by case.
void lint_margins(Session& session, const LabSources& s, const GpuLintOptions& o, LabLint& out) {
  const Manifest& m = *s.manifest;
  // The reference solution's own timing, as grading.cpp's timing_for asks the
  // student's: one session per case decides every margin on it.
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
        out.items.push_back(make_item("margin:step" + std::to_string(step) + ":" + name_of(c->kind) + ":" + case_name,
                                      "fail", "the reference does not build"));
      continue;
    }
    RefereeCall rc;
    rc.referee = builds[0].referee;
    rc.worker = builds[0].worker;
    make_timing_call(rc, case_name, seed, o.cap_s, m.timeout_s);
    add_margin_decisions(rc, checks, o.required_margin);
    rc.work_dir = run_dir / case_name;
    rc.who = "the reference";
    // A GPU disturbed while the reference ran (another process's work, a clock
    // change) is the machine's state, not the threshold's: time it again, as a
    // student whose grade says "interference" is told to.
    RunnerOutcome t = call_referee(rc);
    for (int again = 0; again < 2 && t.category == "interference"; ++again) t = call_referee(rc);
    for (const auto& [step, c] : checks) {
      const std::string id = "margin:step" + std::to_string(step) + ":" + name_of(c->kind) + ":" + case_name;
      if (!t.ok()) {
        out.items.push_back(make_item(id, "fail",
                                      "timing the reference at " + case_name + " failed (" + t.category + ")" +
                                          (t.message.empty() ? "" : ": " + t.message)));
        continue;
      }
      const std::string key = timing_interval_key(c->kind);
      const std::optional<memlabs::RatioInterval>* measured =
          t.timing ? memlabs::interval_named(*t.timing, key) : nullptr;
      if (!measured || !*measured) {
        out.items.push_back(
            make_item(id, "fail", "the reference's timing at " + case_name + " has no " + key + " interval"));
        continue;
      }
      out.items.push_back(margin_item(step, *c, (*measured)->median, o.required_margin));
    }
  }
  if (!session.global.verbose) {
    std::error_code ec;
    fs::remove_all(run_dir, ec);
  }
}

// Every fixture's GPU verdict against its // expect: line.
void lint_fixtures_on_gpu(Session& session, const LabSources& s, const GpuLintOptions& o, LabLint& out) {
  const Manifest& m = *s.manifest;
  for (const auto& f : s.fixtures) {
    const std::string id = "fixture_gpu:" + f.stem().string();
    // Its static verdict may have failed; the GPU verdict still says more.
    FixtureExpectation e;
    if (lint_fixture_header(f, m, &e).status != "pass") {
      out.items.push_back(
          make_item(id, "skip", "its // expect: header does not read (see fixture:" + f.stem().string() + ")"));
      continue;
    }
    const auto since = std::chrono::steady_clock::now();
    Activity a("grading the fixture " + f.filename().string() + " on the GPU");
    const GradeReport r = grade(session, s, f, false, o.cap_s);
    const std::string why = verdict_mismatch(report_to_json(r), r.exit_code, e);
    if (why.empty())
      out.items.push_back(make_item(id, "pass", f.filename().string() + ": " + e.text));
    else
      out.items.push_back(make_item(id, "fail", f.filename().string() + ": " + why.substr(0, why.find(": {")),
                                    diagnostics_lines(why, 20)));
    note_progress(session, out.items.back(), since);
  }
}

}  // namespace

void lint_lab_gpu(Session& session, const LabSources& s, const GpuLintOptions& o, LabLint& out) {
  if (!s.manifest || !s.skeleton) return;
  lint_skeleton_on_gpu(session, s, o, out);
  // A published copy grades with the referee built from its own public files,
  // so the skeleton's verdict above still means something; the rest needs the solution.
  if (!s.solution) {
    out.items.push_back(make_item(
        "solution_gpu", "skip",
        s.published ? "a published copy: the solution passes, threshold margins and fixture verdicts need solutions/"
                    : "no solution: the solution passes, threshold margins and fixture verdicts cannot run"));
    return;
  }
  lint_solution_on_gpu(session, s, o, out);
  lint_margins(session, s, o, out);
  lint_fixtures_on_gpu(session, s, o, out);
}

}  // namespace grader
