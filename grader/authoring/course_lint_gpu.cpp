// The GPU part of `grader check`: the skeleton's first failing step, the
// solution's grade, the threshold margins and every fixture's verdict. The
// grades run several at once, each in a grader process of its own
// (child_grade.hpp): their timings take the GPU one at a time, and the rest of
// their work (building nothing, running programs and tools that time nothing)
// shares it, so a course's check is about as long as its timings.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "activity.hpp"
#include "child_grade.hpp"
#include "course_lint.hpp"
#include "fixture_expectation.hpp"
#include "ncu_report.hpp"
#include "referee_client.hpp"
#include "session.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

std::size_t GpuLintOptions::default_gpu_lint_jobs() {
  // More grades at once only lengthen each timing's wait for the shared runs
  // in progress (compute-sanitizer's take seconds each beside many others).
  return std::clamp<std::size_t>(std::thread::hardware_concurrency() / 4, 2, 6);
}

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

// A check's GPU part can take minutes: without a spinner (a log, a pipe) each
// item is written to stderr as it comes, so the run never looks stuck.
void note_progress(const Session& session, const LintItem& item, std::chrono::steady_clock::time_point since) {
  if (session.global.json || Activity::enabled()) return;
  static std::mutex one_at_a_time;  // items finish on several threads
  const std::lock_guard<std::mutex> hold(one_at_a_time);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  std::cerr << "    " << item.id << ": " << item.status << " (" << fixed(s, 1) << " s)\n";
  // A run cut short (a time limit, ^C) never prints the lab's items: say why here.
  if (item.status == "fail") {
    std::cerr << "      " << item.summary << "\n";
    for (const auto& d : item.details) std::cerr << "      " << d << "\n";
  }
}

// One grade of the check, as `grader grade LAB --submission FILE --fresh` gives it.
struct CheckGrade {
  std::optional<GradeReport> report;
  std::string error;  // why there is none
};

CheckGrade grade_for_check(Session& session, const LabSources& s, const fs::path& submission, bool all_steps,
                           const GpuLintOptions& o, const fs::path& work_dir, bool first_failure_only = false) {
  ChildGradeCall call;
  call.course_root = s.course_root;
  call.lab = s.lab.folder;
  call.submission = fs::absolute(submission);
  call.arch = session.builder->settings().arch;
  call.all_steps = all_steps;
  // Many grades side by side: none starts work that a failing step throws away
  // (a fixture that fails step 1 would still have timed its program).
  call.one_step_at_a_time = true;
  call.first_failure_only = first_failure_only;
  call.cap_s = o.cap_s;
  call.work_dir = work_dir;
  try {
    return {grade_in_child(call), ""};
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    return {std::nullopt, e.what()};
  }
}

// As shipped, the skeleton must fail the lab's first step.
LintItem skeleton_item(const Manifest& m, const CheckGrade& g) {
  const int first = m.steps.front().id;
  if (!g.report) return make_item("skeleton_fails_first_step", "fail", "the skeleton's grade failed: " + g.error);
  const GradeReport& sk = *g.report;
  const auto sk_fails = failing_checks(sk);
  if (sk.exit_code == kExitStepFailed && sk.current_step == first)
    return make_item(
        "skeleton_fails_first_step", "pass",
        "as shipped, the skeleton fails step " + std::to_string(first) +
            (sk_fails.empty() ? std::string()
                              : " (" + sk_fails.front().substr(sk_fails.front().find("fails: ") + 7) + ")"));
  return make_item("skeleton_fails_first_step", "fail",
                   "the skeleton as shipped should fail step " + std::to_string(first) + ", but " +
                       (sk.exit_code == kExitPass ? std::string("it passes every step")
                        : sk.current_step         ? "its first unpassed step is " + std::to_string(*sk.current_step) +
                                                " (exit " + std::to_string(sk.exit_code) + ")"
                                          : "grading exits " + std::to_string(sk.exit_code)),
                   sk_fails);
}

// The solution must pass every step; each hardware-counter reading is shown
// beside its bound (timed thresholds get margin items of their own).
std::vector<LintItem> solution_items(const Manifest& m, const CheckGrade& g) {
  if (!g.report) return {make_item("solution_passes", "fail", "the solution's grade failed: " + g.error)};
  const GradeReport& so = *g.report;
  if (so.exit_code != kExitPass) {
    std::vector<std::string> d = failing_checks(so);
    for (const auto& st : so.steps)
      for (const auto& c : st.checks)
        if (c.status == Outcome::skipped)
          d.push_back("step " + std::to_string(st.id) + " " + c.kind + " skipped: " + c.summary);
    return {make_item("solution_passes", "fail",
                      "the solution does not pass every step (exit " + std::to_string(so.exit_code) + ")", d)};
  }
  std::vector<LintItem> out = {
      make_item("solution_passes", "pass", "the solution passes all " + std::to_string(m.steps.size()) + " steps")};
  for (const auto& st : so.steps)
    for (const auto& c : st.checks)
      if (const NcuMeasure* nm =
              c.kind == "ncu" && c.status == Outcome::pass ? find_ncu_measure(c.data.value("metric", "")) : nullptr)
        out.push_back(make_item(
            "counter:step" + std::to_string(st.id) + ":" + nm->name + ":" + c.data.value("case", ""), "pass",
            "the reference's " + c.summary + " (needs " +
                ncu_bound_in_words(*nm, c.data.value(nm->rule == NcuMeasure::at_least ? "min" : "max", 0.0)) + ")"));
  return out;
}

// Whether --first-failure-only left checks out of a grade.
bool some_check_not_run(const CheckGrade& g) {
  if (!g.report) return false;
  for (const auto& st : g.report->steps)
    for (const auto& c : st.checks)
      if (not_run_after_a_failure(c)) return true;
  return false;
}

// A fixture's GPU verdict against its // expect: line.
LintItem fixture_item(const fs::path& f, const FixtureExpectation& e, const CheckGrade& g) {
  const std::string id = "fixture_gpu:" + f.stem().string();
  if (!g.report) return make_item(id, "fail", f.filename().string() + ": its grade failed: " + g.error);
  const std::string why = verdict_mismatch(report_to_json(*g.report), g.report->exit_code, e);
  if (why.empty()) return make_item(id, "pass", f.filename().string() + ": " + e.text);
  return make_item(id, "fail", f.filename().string() + ": " + why.substr(0, why.find(": {")),
                   diagnostics_lines(why, 20));
}

// What the margin lint decides is the margin, not the threshold: the session
// may stop early only once every interval is clear of threshold × margin.
void add_margin_decisions(RefereeCall& rc, const std::vector<std::pair<int, const Check*>>& checks,
                          double required_margin) {
  for (const auto& [step, c] : checks)
    rc.args.insert(rc.args.end(), {"--decide", timing_decide_name(c->kind) + ":" + fixed(c->min * required_margin, 4)});
}

// The items of one case's margins, from the reference's timing of it.
std::vector<LintItem> case_margin_items(const std::string& case_name,
                                        const std::vector<std::pair<int, const Check*>>& checks, const RunnerOutcome& t,
                                        double required_margin) {
  std::vector<LintItem> out;
  for (const auto& [step, c] : checks) {
    const std::string id = "margin:step" + std::to_string(step) + ":" + name_of(c->kind) + ":" + case_name;
    if (!t.ok()) {
      out.push_back(make_item(id, "fail",
                              "timing the reference at " + case_name + " failed (" + t.category + ")" +
                                  (t.message.empty() ? "" : ": " + t.message)));
      continue;
    }
    const std::string key = timing_interval_key(c->kind);
    const std::optional<memlabs::RatioInterval>* measured =
        t.timing ? memlabs::interval_named(*t.timing, key) : nullptr;
    if (!measured || !*measured) {
      out.push_back(make_item(id, "fail", "the reference's timing at " + case_name + " has no " + key + " interval"));
      continue;
    }
    out.push_back(margin_item(step, *c, (*measured)->median, required_margin));
  }
  return out;
}

// Every timed threshold against the reference's own timing, case by case (as
// grading_timing.cpp's timing_for asks the student's: one session per case).
std::vector<LintItem> margin_items(Session& session, const LabSources& s, const GpuLintOptions& o) {
  const Manifest& m = *s.manifest;
  std::vector<RunnerBuild> builds;
  {
    static std::mutex builder;  // the margins of several labs run at once; the builder is one
    const std::lock_guard<std::mutex> hold(builder);
    builds = session.builder->build({{s.lab.dir, *s.solution_path, "solution kernel.cu", m.link}});
  }
  std::map<std::string, std::vector<std::pair<int, const Check*>>> by_case;
  for (const auto& st : m.steps)
    for (const auto& c : st.checks) {
      if (is_timed(c)) by_case[c.case_name].push_back({st.id, &c});
      for (const auto& f : c.fallback)  // what grades the step where ncu cannot run needs its margin too
        if (is_timed(f)) by_case[f.case_name].push_back({st.id, &f});
    }
  const fs::path run_dir = session.new_run_dir(s.lab.id + "-margin");
  const std::uint64_t seed = std::random_device{}();
  std::vector<LintItem> out;
  for (const auto& [case_name, checks] : by_case) {
    if (!builds[0].ok) {
      for (const auto& [step, c] : checks)
        out.push_back(make_item("margin:step" + std::to_string(step) + ":" + name_of(c->kind) + ":" + case_name, "fail",
                                "the reference does not build"));
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
    for (auto& item : case_margin_items(case_name, checks, t, o.required_margin)) out.push_back(std::move(item));
  }
  if (!session.global.verbose) {
    std::error_code ec;
    fs::remove_all(run_dir, ec);
  }
  return out;
}

// One piece of a lab's GPU check: it makes its items in a slot of its own.
struct GpuJob {
  std::function<std::vector<LintItem>()> run;
  std::vector<LintItem> items;
};

// The jobs of one lab, in the order its items are listed.
std::vector<GpuJob> lab_gpu_jobs(Session& session, const LabSources& s, const GpuLintOptions& o,
                                 const fs::path& work_dir) {
  const Manifest& m = *s.manifest;
  std::vector<GpuJob> jobs;
  const auto timed = [&session](auto make) {
    return [&session, make] {
      const auto since = std::chrono::steady_clock::now();
      std::vector<LintItem> items = make();
      for (const auto& i : items) note_progress(session, i, since);
      return items;
    };
  };
  jobs.push_back(
      {timed([&, work_dir] {
         return std::vector<LintItem>{skeleton_item(
             m, grade_for_check(session, s, s.lab.dir / m.student_file, false, o, work_dir / "skeleton", true))};
       }),
       {}});
  // A published copy grades with the referee built from its own public files,
  // so the skeleton's verdict above still means something; the rest needs the solution.
  if (!s.solution) {
    jobs.push_back({{},
                    {make_item("solution_gpu", "skip",
                               s.published ? "a published copy: the solution passes, threshold margins and fixture "
                                             "verdicts need solutions/"
                                           : "no solution: the solution passes, threshold margins and fixture "
                                             "verdicts cannot run")}});
    return jobs;
  }
  jobs.push_back({timed([&, work_dir] {
                    return solution_items(
                        m, grade_for_check(session, s, *s.solution_path, true, o, work_dir / "solution"));
                  }),
                  {}});
  jobs.push_back({timed([&] { return margin_items(session, s, o); }), {}});
  for (const auto& f : s.fixtures) {
    // Its static verdict may have failed; the GPU verdict still says more.
    FixtureExpectation e;
    if (lint_fixture_header(f, m, &e).status != "pass") {
      jobs.push_back({{},
                      {make_item("fixture_gpu:" + f.stem().string(), "skip",
                                 "its // expect: header does not read (see fixture:" + f.stem().string() + ")")}});
      continue;
    }
    const fs::path dir = work_dir / ("fixture-" + f.stem().string());
    jobs.push_back({timed([&, f, e, dir] {
                      // A failing step stops at its first failing check: the verdict needs no more. Where
                      // the failure the fixture expects was among the checks not run, the whole step decides.
                      const CheckGrade g = grade_for_check(session, s, f, false, o, dir, true);
                      LintItem item = fixture_item(f, e, g);
                      if (item.status == "fail" && some_check_not_run(g))
                        item = fixture_item(f, e, grade_for_check(session, s, f, false, o, dir / "whole-steps"));
                      return std::vector<LintItem>{item};
                    }),
                    {}});
  }
  return jobs;
}

// Runs every job, `width` at a time, the longest queue first taken in order.
void run_jobs(std::vector<GpuJob*>& jobs, std::size_t width) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < jobs.size();) {
      try {
        jobs[i]->items = jobs[i]->run();
      } catch (...) {
        const std::lock_guard<std::mutex> hold(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = jobs.size();  // start nothing more; the others finish theirs
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::max<std::size_t>(1, std::min(width, jobs.size())); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void lint_labs_gpu(Session& session, const std::vector<std::pair<const LabSources*, LabLint*>>& labs,
                   const GpuLintOptions& o) {
  const fs::path work_dir = session.new_run_dir("check");
  std::vector<std::vector<GpuJob>> per_lab;
  for (const auto& [s, out] : labs)
    per_lab.push_back(s->manifest && s->skeleton ? lab_gpu_jobs(session, *s, o, work_dir / s->lab.folder)
                                                 : std::vector<GpuJob>{});
  std::vector<GpuJob*> queue;
  for (auto& jobs : per_lab)
    for (auto& j : jobs)
      if (j.run) queue.push_back(&j);
  {
    Activity a("grading " + std::to_string(queue.size()) + " checks on the GPU, " + std::to_string(o.jobs) +
               " at a time");
    run_jobs(queue, o.jobs);
  }
  for (std::size_t i = 0; i < labs.size(); ++i)
    for (auto& j : per_lab[i])
      for (auto& item : j.items) labs[i].second->items.push_back(std::move(item));
  if (!session.global.verbose) {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  }
}

}  // namespace grader
