// The GPU part of `grader check`: the skeleton's first failing step, the
// solution's grade and the threshold margins read from its timings, and every
// fixture's verdict. The grades run several at once, each in a grader process of its own
// (child_grade.hpp): their timings take the GPU one at a time, and the rest of
// their work (building nothing, running programs and tools that time nothing)
// shares it, so a course's check is about as long as its timings.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "activity.hpp"
#include "calibration.hpp"
#include "child_grade.hpp"
#include "course_lint.hpp"
#include "fixture_verdict.hpp"
#include "ncu_report.hpp"
#include "session.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

std::size_t GpuLintOptions::default_gpu_lint_jobs(std::size_t gpus) {
  // The check's time is its timings' (each has its GPU alone) and the waits for
  // the shared runs they drain; between them, more grades keep the GPU busier.
  // On a 16-core H100 machine the whole course took 714 s at 8 and 696 s at 12
  // (docs/measurements/logs/h100-check-whole-course.log): past half the cores
  // more grades only wait longer, and load the host that lab03's timing needs.
  return std::clamp<std::size_t>(std::thread::hardware_concurrency() / 2, 2, 8 * std::max<std::size_t>(1, gpus));
}

std::vector<std::string> check_gpus(int devices, const char* visible) {
  std::vector<std::string> out;
  if (visible && *visible) {
    std::istringstream entries(visible);
    for (std::string entry; std::getline(entries, entry, ',');)
      if (const std::string e = trim(entry); !e.empty() && static_cast<int>(out.size()) < devices) out.push_back(e);
    return out;
  }
  for (int i = 0; i < devices; ++i) out.push_back(std::to_string(i));
  return out;
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
  if (margin >= required_margin) return make_item(id, LintStatus::pass, summary);
  if (c.kind == CheckKind::fraction_of_peak)
    return make_item(id, LintStatus::warn, summary,
                     {"a fraction of peak near 1 cannot always clear the margin; keep the threshold as high as the "
                      "reference allows on the slowest GPU the course runs on"});
  return make_item(
      id, LintStatus::fail, summary,
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
  std::cerr << "    " << item.id << ": " << name_of(item.status) << " (" << fixed(s, 1) << " s)\n";
  // A run cut short (a time limit, ^C) never prints the lab's items: say why here.
  if (item.status == LintStatus::fail) {
    std::cerr << "      " << item.summary << "\n";
    for (const auto& d : item.details) std::cerr << "      " << d << "\n";
  }
}

// One grade of the check, as `grader grade LAB --submission FILE --fresh` gives it.
struct CheckGrade {
  std::optional<GradeReport> report;
  std::string error;  // why there is none
};

// How the check grades a submission: a skeleton or a fixture up to its first
// failure (--first-failure-only), a fixture's failing step in full, the
// solution's every step with its timings decided at threshold × margin too, or
// (calibrate's honest programs) every step, also past a failing one.
enum class GradedAs { first_failure, whole_steps, solution, every_step };

CheckGrade grade_for_check(Session& session, const LabSources& s, const fs::path& submission, GradedAs as,
                           const GpuLintOptions& o, const std::string& gpu, const fs::path& work_dir,
                           bool timed_only = false) {
  ChildGradeCall call;
  call.visible_gpu = gpu;
  call.course_root = s.course_root;
  call.lab = s.lab.folder;
  call.submission = fs::absolute(submission);
  call.arch = session.builder->settings().arch;
  call.all_steps = as == GradedAs::solution || as == GradedAs::every_step;
  // Many grades side by side: none starts work that a failing step throws away
  // (a fixture that fails step 1 would still have timed its program).
  call.one_step_at_a_time = true;
  call.first_failure_only = as == GradedAs::first_failure;
  call.decide_margin = as == GradedAs::solution ? o.required_margin : 1.0;
  call.cap_s = o.cap_s;
  call.work_dir = work_dir;
  call.timed_only = timed_only;
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
  if (!g.report)
    return make_item("skeleton_fails_first_step", LintStatus::fail, "the skeleton's grade failed: " + g.error);
  const GradeReport& sk = *g.report;
  const auto sk_fails = failing_checks(sk);
  if (sk.exit_code == kExitStepFailed && sk.current_step == first)
    return make_item(
        "skeleton_fails_first_step", LintStatus::pass,
        "as shipped, the skeleton fails step " + std::to_string(first) +
            (sk_fails.empty() ? std::string()
                              : " (" + sk_fails.front().substr(sk_fails.front().find("fails: ") + 7) + ")"));
  return make_item("skeleton_fails_first_step", LintStatus::fail,
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
  if (!g.report) return {make_item("solution_passes", LintStatus::fail, "the solution's grade failed: " + g.error)};
  const GradeReport& so = *g.report;
  if (so.exit_code != kExitPass) {
    std::vector<std::string> d = failing_checks(so);
    for (const auto& st : so.steps)
      for (const auto& c : st.checks)
        if (c.status == Outcome::skipped)
          d.push_back("step " + std::to_string(st.id) + " " + name_of(c.kind) + " skipped: " + c.summary);
    return {make_item("solution_passes", LintStatus::fail,
                      "the solution does not pass every step (exit " + std::to_string(so.exit_code) + ")", d)};
  }
  std::vector<LintItem> out = {make_item("solution_passes", LintStatus::pass,
                                         "the solution passes all " + std::to_string(m.steps.size()) + " steps")};
  for (const auto& st : so.steps)
    for (const auto& c : st.checks)
      if (const NcuMeasure* nm = c.kind == CheckKind::ncu && c.status == Outcome::pass
                                     ? find_ncu_measure(c.data.value("metric", ""))
                                     : nullptr)
        out.push_back(make_item(
            "counter:step" + std::to_string(st.id) + ":" + nm->name + ":" + c.data.value("case", ""), LintStatus::pass,
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
  if (!g.report) return make_item(id, LintStatus::fail, f.filename().string() + ": its grade failed: " + g.error);
  const std::string why = verdict_mismatch(*g.report, e);
  if (why.empty()) return make_item(id, LintStatus::pass, f.filename().string() + ": " + e.text);
  return make_item(id, LintStatus::fail, f.filename().string() + ": " + why.substr(0, why.find(": {")),
                   diagnostics_lines(why, 20));
}

}  // namespace

// Every timed threshold (a fallback's too) against the reference's own timing:
// the solution's grade timed each case until its intervals were also clear of
// threshold × margin (--decide-margin), and each of its timed checks carries
// its case's whole timing report.
std::map<std::string, const json*> timings_by_case(const Manifest& m, const GradeReport& report) {
  std::map<std::string, const json*> timing_of_case;
  for (std::size_t i = 0; i < m.steps.size() && i < report.steps.size(); ++i)
    for (std::size_t j = 0; j < m.steps[i].checks.size() && j < report.steps[i].checks.size(); ++j) {
      const Check& c = m.steps[i].checks[j];
      const CheckResult& r = report.steps[i].checks[j];
      const Check* timed = is_timed(c) ? &c : nullptr;
      for (const auto& f : c.fallback)
        if (!timed && is_timed(f) && r.kind == f.kind) timed = &f;
      if (timed && r.data.contains("rounds")) timing_of_case.emplace(timed->case_name, &r.data);
    }
  return timing_of_case;
}

std::vector<LintItem> margin_items(const Manifest& m, const GradeReport* solution, double required_margin) {
  std::map<std::string, const json*> timing_of_case;
  if (solution) timing_of_case = timings_by_case(m, *solution);
  std::vector<LintItem> out;
  const auto add = [&](int step, const Check& c) {
    if (!is_timed(c)) return;
    const std::string id = "margin:step" + std::to_string(step) + ":" + name_of(c.kind) + ":" + c.case_name;
    const auto t = timing_of_case.find(c.case_name);
    const std::string key = memlabs::name_of(timed_ratio(c.kind));
    if (t == timing_of_case.end())
      out.push_back(make_item(id, LintStatus::fail,
                              "the solution's grade has no timing of " + c.case_name + " (see solution_passes)"));
    else if (!t->second->contains(key) || !(*t->second)[key].is_object())
      out.push_back(
          make_item(id, LintStatus::fail, "the reference's timing at " + c.case_name + " has no " + key + " interval"));
    else
      out.push_back(margin_item(step, c, (*t->second)[key].value("median", 0.0), required_margin));
  };
  for (const auto& st : m.steps)
    for (const auto& c : st.checks) {
      add(st.id, c);
      for (const auto& f : c.fallback) add(st.id, f);  // what grades the step where ncu cannot run
    }
  return out;
}

namespace {

// One piece of a lab's GPU check: it makes its items in a slot of its own.
struct GpuJob {
  // Grades on `gpu` (a CUDA_VISIBLE_DEVICES entry; empty: every GPU this process sees).
  std::function<std::vector<LintItem>(const std::string& gpu)> run;
  std::vector<LintItem> items;
  double runs = 0;  // how many program runs its grade is expected to make (the queue's order)
};

// The program runs (the correctness run, each compute-sanitizer tool, each ncu
// profile, each timing) of a grade that passes steps [0, passed) and stops in
// the step after, where it runs only what a first failure leaves: about one.
double expected_runs(const Manifest& m, std::size_t passed) {
  double runs = 0;
  for (std::size_t i = 0; i < m.steps.size(); ++i) {
    if (i == passed) return runs + 1;
    std::set<std::string> timed, profiled;
    for (const auto& c : m.steps[i].checks) {
      if (c.kind == CheckKind::sanitizer) runs += static_cast<double>(c.tools.size());
      if (c.kind == CheckKind::ncu) profiled.insert(c.kernel + " " + c.case_name);
      if (is_timed(c)) timed.insert(c.case_name);
    }
    runs += 1 + static_cast<double>(profiled.size() + timed.size());
  }
  return runs;
}

// How many steps a fixture's grade passes, as its // expect: line says.
std::size_t steps_passed(const Manifest& m, const FixtureExpectation& e) {
  if (e.kind == FixtureExpectation::all_pass) return m.steps.size();
  if (e.kind == FixtureExpectation::build_fails) return 0;
  for (std::size_t i = 0; i < m.steps.size(); ++i)
    if (m.steps[i].id == e.step) return i;
  return 0;
}

// The solution passes every step (graded with --decide-margin), and the
// threshold margins read from its timings.
std::vector<LintItem> solution_gpu_items(Session& session, const LabSources& s, const GpuLintOptions& o,
                                         const std::string& gpu, const fs::path& dir) {
  const CheckGrade g = grade_for_check(session, s, *s.solution_path, GradedAs::solution, o, gpu, dir);
  std::vector<LintItem> items = solution_items(*s.manifest, g);
  // The margins over the thresholds this GPU grades with (its calibration's, where the course has one).
  CalibrationUse use = calibration_for(s.course_root, session.device.name);
  const Manifest graded = with_calibration(*s.manifest, s.lab.folder, use);
  items.push_back(make_item("thresholds",
                            use.state == CalibrationUse::State::uncalibrated ? LintStatus::warn : LintStatus::pass,
                            use.header(s.course_root.string())));
  for (auto& item : margin_items(graded, g.report ? &*g.report : nullptr, o.required_margin))
    items.push_back(std::move(item));
  return items;
}

// A fixture's GPU verdict. A failing step stops at its first failing check:
// the verdict needs no more. Where the failure the fixture expects was among
// the checks not run, the whole step decides.
LintItem fixture_gpu_item(Session& session, const LabSources& s, const GpuLintOptions& o, const std::string& gpu,
                          const fs::path& f, const FixtureExpectation& e, const fs::path& dir) {
  const CheckGrade g = grade_for_check(session, s, f, GradedAs::first_failure, o, gpu, dir);
  const LintItem item = fixture_item(f, e, g);
  if (item.status != LintStatus::fail || !some_check_not_run(g)) return item;
  return fixture_item(f, e, grade_for_check(session, s, f, GradedAs::whole_steps, o, gpu, dir / "whole-steps"));
}

// The jobs of one lab, in the order its items are listed.
std::vector<GpuJob> lab_gpu_jobs(Session& session, const LabSources& s, const GpuLintOptions& o,
                                 const fs::path& work_dir) {
  const Manifest& m = *s.manifest;
  std::vector<GpuJob> jobs;
  const auto timed = [&session](auto make) {
    return [&session, make](const std::string& gpu) {
      const auto since = std::chrono::steady_clock::now();
      std::vector<LintItem> items = make(gpu);
      for (const auto& i : items) note_progress(session, i, since);
      return items;
    };
  };
  jobs.push_back({timed([&, work_dir](const std::string& gpu) {
                    return std::vector<LintItem>{
                        skeleton_item(m, grade_for_check(session, s, s.lab.dir / m.student_file,
                                                         GradedAs::first_failure, o, gpu, work_dir / "skeleton"))};
                  }),
                  {},
                  expected_runs(m, 0)});
  // A published copy grades with the referee built from its own public files,
  // so the skeleton's verdict above still means something; the rest needs the solution.
  if (!s.solution) {
    jobs.push_back({{},
                    {make_item("solution_gpu", LintStatus::skip,
                               s.published ? "a published copy: the solution passes, threshold margins and fixture "
                                             "verdicts need solutions/"
                                           : "no solution: the solution passes, threshold margins and fixture "
                                             "verdicts cannot run")}});
    return jobs;
  }
  jobs.push_back({timed([&, work_dir](const std::string& gpu) {
                    return solution_gpu_items(session, s, o, gpu, work_dir / "solution");
                  }),
                  {},
                  expected_runs(m, m.steps.size())});
  for (const auto& f : s.fixtures) {
    // Its static verdict may have failed; the GPU verdict still says more.
    FixtureExpectation e;
    if (lint_fixture_header(f, m, &e).status != LintStatus::pass) {
      jobs.push_back({{},
                      {make_item("fixture_gpu:" + f.stem().string(), LintStatus::skip,
                                 "its // expect: header does not read (see fixture:" + f.stem().string() + ")")}});
      continue;
    }
    const fs::path dir = work_dir / ("fixture-" + f.stem().string());
    jobs.push_back({timed([&, f, e, dir](const std::string& gpu) {
                      return std::vector<LintItem>{fixture_gpu_item(session, s, o, gpu, f, e, dir)};
                    }),
                    {},
                    expected_runs(m, steps_passed(m, e))});
  }
  return jobs;
}

// Runs every job, `width` at a time, in the queue's order. With several GPUs,
// each worker grades on one of them, in turn: a GPU's grades take turns on its
// own lock, so the timings of different GPUs run at the same moment.
void run_jobs(std::vector<GpuJob*>& jobs, std::size_t width, const std::vector<std::string>& gpus) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&](const std::string& gpu) {
    for (std::size_t i; (i = next++) < jobs.size();) {
      try {
        jobs[i]->items = jobs[i]->run(gpu);
      } catch (...) {
        const std::lock_guard<std::mutex> hold(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = jobs.size();  // start nothing more; the others finish theirs
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::max<std::size_t>(1, std::min(width, jobs.size())); ++t)
    threads.emplace_back(worker, gpus.size() > 1 ? gpus[t % gpus.size()] : std::string());
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void grade_on_gpu(Session& session, std::vector<GpuProgramGrade>& grades, const GpuLintOptions& o,
                  const fs::path& work_dir) {
  std::vector<GpuJob> jobs;
  for (std::size_t i = 0; i < grades.size(); ++i) {
    GpuProgramGrade& g = grades[i];
    const GradedAs as = g.how == GpuProgramGrade::solution     ? GradedAs::solution
                        : g.how == GpuProgramGrade::every_step ? GradedAs::every_step
                                                               : GradedAs::first_failure;
    const Manifest& m = *g.lab->manifest;
    const fs::path dir = work_dir / g.lab->lab.folder / (std::to_string(i) + "-" + g.name);
    jobs.push_back({[&session, &g, &o, as, dir](const std::string& gpu) {
                      const CheckGrade c =
                          grade_for_check(session, *g.lab, g.submission, as, o, gpu, dir, g.timed_only);
                      g.report = c.report ? std::make_shared<GradeReport>(*c.report) : nullptr;
                      g.error = c.error;
                      return std::vector<LintItem>{};
                    },
                    {},
                    expected_runs(m, as == GradedAs::first_failure ? 0 : m.steps.size())});
  }
  std::vector<GpuJob*> queue;
  for (auto& j : jobs) queue.push_back(&j);
  std::stable_sort(queue.begin(), queue.end(), [](const GpuJob* a, const GpuJob* b) { return a->runs > b->runs; });
  run_jobs(queue, o.jobs, o.gpus);
}

void lint_labs_gpu(Session& session, const std::vector<std::pair<const LabSources*, LabLint*>>& labs,
                   const GpuLintOptions& o) {
  const fs::path work_dir = session.new_run_dir("check");
  std::vector<std::vector<GpuJob>> per_lab;
  for (const auto& [s, out] : labs)
    per_lab.push_back(s->manifest && s->skeleton ? lab_gpu_jobs(session, *s, o, work_dir / s->lab.folder)
                                                 : std::vector<GpuJob>{});
  // The longest grades first, whatever their lab: the check then ends on short
  // ones, not on one lab's long grades all started last, and those long grades
  // (lab06's compute-sanitizer runs take seconds each) run beside short ones.
  std::vector<GpuJob*> queue;
  for (auto& jobs : per_lab)
    for (auto& j : jobs)
      if (j.run) queue.push_back(&j);
  std::stable_sort(queue.begin(), queue.end(), [](const GpuJob* a, const GpuJob* b) { return a->runs > b->runs; });
  {
    Activity a("grading " + std::to_string(queue.size()) + " checks on " +
               (o.gpus.size() > 1 ? std::to_string(o.gpus.size()) + " GPUs, " : std::string("the GPU, ")) +
               std::to_string(o.jobs) + " at a time");
    run_jobs(queue, o.jobs, o.gpus);
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
