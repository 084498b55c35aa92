#include "calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "activity.hpp"
#include "atomic_file.hpp"
#include "json_text.hpp"
#include "session.hpp"
#include "text.hpp"
#include "threshold_rule.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

std::map<std::string, double> timed_medians(const Manifest& m, const GradeReport& report) {
  const auto timings = timings_by_case(m, report);
  std::map<std::string, double> out;
  const auto add = [&](int step, const Check& c) {
    if (!is_timed(c)) return;
    const auto t = timings.find(c.case_name);
    if (t == timings.end()) return;
    const json& interval = t->second->value(memlabs::name_of(timed_ratio(c.kind)), json());
    if (interval.is_object() && interval.contains("median") && interval.at("median").is_number())
      out[timed_check_id(step, c)] = interval.at("median").get<double>();
  };
  for (const auto& st : m.steps)
    for (const auto& c : st.checks) {
      add(st.id, c);
      for (const auto& f : c.fallback) add(st.id, f);
    }
  return out;
}

bool calibrates_with(const FixtureExpectation& e, const Manifest& m) {
  if (e.kind == FixtureExpectation::all_pass) return true;
  if (e.kind != FixtureExpectation::step_fails) return false;
  return traits_of(e.check).ratio && m.find_step(e.step);
}

std::map<std::string, CalibratedCheck> calibrate_lab(const Manifest& m, const LabCalibrationGrades& grades,
                                                     const std::map<std::string, CalibratedCheck>* design,
                                                     bool design_card, std::vector<std::string>& problems) {
  const std::map<std::string, double> reference =
      grades.solution ? timed_medians(m, *grades.solution) : std::map<std::string, double>{};
  std::map<std::string, std::map<std::string, double>> honest;
  for (const auto& [name, report] : grades.honest) honest[name] = timed_medians(m, report);
  std::map<std::string, CalibratedCheck> out;
  const auto calibrate = [&](int step, const Check& c) {
    if (!is_timed(c)) return;
    const std::string id = timed_check_id(step, c);
    const auto ref = reference.find(id);
    if (ref == reference.end()) {
      problems.push_back(
          id + ": the solution's grade has no timing of it" +
          (grades.solution_error.empty() ? std::string(" (see its grade)") : ": " + grades.solution_error) +
          "; it stays uncalibrated");
      return;
    }
    ThresholdEvidence e;
    e.kind = c.kind;
    e.design_min = c.min;
    e.design_card = design_card;
    e.reference = ref->second;
    if (design)
      if (const auto d = design->find(id); d != design->end() && d->second.design_min == c.min)
        e.design_reference = d->second.reference;
    e.honest["solution"] = ref->second;
    for (const auto& [name, medians] : honest)
      if (const auto v = medians.find(id); v != medians.end())
        e.honest[name] = v->second;
      else  // an honest program that failed before this timing says nothing of it: `grader check` will show why
        problems.push_back(id + ": " + name + " (expected to pass) has no timing of it");
    for (const auto& [name, f] : grades.failing) {
      if (f.expectation.step != step || f.expectation.check != c.kind) continue;
      const auto medians = timed_medians(m, f.report);
      if (const auto v = medians.find(id); v != medians.end()) e.failing[name] = v->second;
    }
    out[id] = derive_threshold(e);
  };
  for (const auto& st : m.steps)
    for (const auto& c : st.checks) {
      calibrate(st.id, c);
      for (const auto& f : c.fallback) calibrate(st.id, f);
    }
  return out;
}

namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The grades one lab needs: its solution, every honest fixture, every fixture
// that must fail a timed check.
void add_lab_grades(const LabSources& s, std::vector<GpuProgramGrade>& grades) {
  GpuProgramGrade solution;
  solution.lab = &s;
  solution.submission = *s.solution_path;
  solution.name = "solution";
  solution.how = GpuProgramGrade::solution;
  solution.timed_only = true;
  grades.push_back(solution);
  for (const auto& f : s.fixtures) {
    FixtureExpectation e;
    try {
      e = read_expectation(f);
    } catch (const std::exception&) {
      continue;  // `grader check` reports a header that does not read
    }
    if (!calibrates_with(e, *s.manifest)) continue;
    GpuProgramGrade g;
    g.lab = &s;
    g.submission = f;
    g.name = f.stem().string();
    // Every step's timings, also past a failing one: a wrong program's time is what it is measured for.
    g.how = GpuProgramGrade::every_step;
    g.timed_only = true;
    grades.push_back(g);
  }
}

}  // namespace

CalibrateResult calibrate_labs(Session& session, const std::vector<LabSources>& labs, const GpuLintOptions& options) {
  CalibrateResult r;
  Calibration& c = r.calibration;
  c.gpu = session.device.name;
  c.toolkit = session.toolchain.version;
  c.driver = cuda_version_string(session.device.driver_version);
  c.made_at = utc_now();
  c.design_gpu = design_gpu(session.course.root());
  const bool design_card = is_design_card(c.gpu, c.design_gpu);
  std::optional<Calibration> design;
  if (!design_card && !c.design_gpu.empty()) {
    const fs::path file = session.course.root() / kCalibrationFolder / (gpu_model_key(c.design_gpu) + ".json");
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) design = read_calibration(file);
  }

  std::vector<GpuProgramGrade> grades;
  for (const auto& s : labs)
    if (s.manifest && s.solution_path) add_lab_grades(s, grades);
  const fs::path work_dir = session.new_run_dir("calibrate");
  {
    Activity a("calibrating: " + std::to_string(grades.size()) + " grades on " + c.gpu + ", " +
               std::to_string(options.jobs) + " at a time");
    grade_on_gpu(session, grades, options, work_dir);
  }
  for (const auto& s : labs) {
    if (!s.manifest || !s.solution_path) continue;
    LabCalibrationGrades lg;
    for (const auto& g : grades) {
      if (g.lab != &s) continue;
      if (!g.report) {
        if (g.how == GpuProgramGrade::solution) lg.solution_error = g.error;
        r.problems.push_back(s.lab.folder + ": " + g.name + ": its grade failed: " + g.error);
        continue;
      }
      if (g.how == GpuProgramGrade::solution) {
        lg.solution = *g.report;
        continue;
      }
      const FixtureExpectation e = read_expectation(g.submission);
      if (e.kind == FixtureExpectation::all_pass)
        lg.honest[g.name] = *g.report;
      else
        lg.failing[g.name] = {e, *g.report};
    }
    const std::map<std::string, CalibratedCheck>* d = nullptr;
    if (design)
      if (const auto l = design->labs.find(s.lab.folder); l != design->labs.end()) d = &l->second;
    std::vector<std::string> problems;
    auto checks = calibrate_lab(timed_checks_only(*s.manifest), lg, d, design_card, problems);
    for (const auto& p : problems) r.problems.push_back(s.lab.folder + ": " + p);
    if (!checks.empty()) c.labs[s.lab.folder] = std::move(checks);
  }
  if (!session.global.verbose) {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  }
  return r;
}

std::vector<std::string> calibration_table(const Calibration& c) {
  std::vector<std::string> out;
  for (const auto& [lab, checks] : c.labs)
    for (const auto& [id, k] : checks) {
      const bool speedup = id.find(":speedup:") != std::string::npos;
      const auto v = [&](double x) { return speedup ? fixed(x, 2) + "×" : fixed(100 * x, 1) + " %"; };
      std::string line = lab + " " + id + ": " + v(k.design_min) + " → " + v(k.min) + " (" + name_of(k.status) + ")";
      if (k.reference) line += "; reference " + v(*k.reference) + ", a margin of " + fixed(*k.reference / k.min) + "×";
      const auto lowest = std::min_element(k.honest.begin(), k.honest.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
      if (lowest != k.honest.end()) line += "; lowest honest " + lowest->first + " " + v(lowest->second);
      const auto highest = std::max_element(k.failing.begin(), k.failing.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
      if (highest != k.failing.end()) line += "; highest wrong " + highest->first + " " + v(highest->second);
      if (k.status == CalibratedCheck::Status::moved || k.status == CalibratedCheck::Status::conflict)
        line += "\n      " + k.why;
      out.push_back(line);
    }
  return out;
}

// A lab whose lab.json has a timed check: there is something to calibrate. A
// lab without one would have its solution and fixtures graded for nothing to
// keep, and, nothing kept, again at the next grade.
bool has_timed_check(const Course& course, const LabInfo& lab) {
  const LabSources s = read_lab_sources(course, lab);
  if (!s.manifest) return false;  // the grade itself says what is wrong with lab.json
  for (const auto& step : s.manifest->steps)
    if (std::any_of(step.checks.begin(), step.checks.end(), [](const Check& c) { return is_timed(c); })) return true;
  return false;
}

bool needs_self_study_calibration(const Session& session, const LabInfo& lab) {
  if (!session.device.present) return false;
  std::error_code ec;
  if (!fs::is_regular_file(session.course.solution_kernel(lab), ec)) return false;
  if (!has_timed_check(session.course, lab)) return false;
  const CalibrationUse use = calibration_for(session.course.root(), session.device.name, session.user_calibration());
  switch (use.state) {
    case CalibrationUse::State::no_gpu:
    case CalibrationUse::State::design_card:
      return false;
    case CalibrationUse::State::uncalibrated:
      return true;
    case CalibrationUse::State::calibrated:
      // A course file for this GPU without this lab: the lab is as uncalibrated as on a card with no file
      // (on the design card lab.json's values are the card's own).
      return !use.has_lab(lab.folder) && !is_design_card(use.gpu, use.design_gpu);
  }
  return false;
}

bool calibrate_lab_for_self_study(Session& session, const LabInfo& lab) {
  const LabSources s = read_lab_sources(session.course, lab);
  if (!s.manifest || !s.solution_path) return false;
  GpuLintOptions o;
  o.jobs = GpuLintOptions::default_gpu_lint_jobs(1);
  CalibrateResult r = calibrate_labs(session, {s}, o);
  if (r.calibration.labs.empty()) return false;
  write_calibration(*session.user_calibration(), std::move(r.calibration));
  return true;
}

void write_calibration(const fs::path& file, Calibration fresh) {
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    try {
      const Calibration old = read_calibration(file);
      if (old.gpu == fresh.gpu && old.toolkit == fresh.toolkit)
        for (const auto& [lab, checks] : old.labs) fresh.labs.emplace(lab, checks);
    } catch (const CalibrationError&) {
      // one that does not read is replaced whole
    }
  }
  fs::create_directories(file.parent_path());
  write_file_atomically(file, json_text(calibration_to_json(fresh)) + "\n");
}

Calibration published_calibration(Calibration c) {
  for (auto& [lab, checks] : c.labs)
    for (auto& [id, k] : checks) {
      k.honest.clear();
      k.failing.clear();
      switch (k.status) {
        case CalibratedCheck::Status::design:
        case CalibratedCheck::Status::scaled:
          break;  // its words name no program
        case CalibratedCheck::Status::moved:
          k.why = "moved off the scaled value so the course's honest programs pass and its wrong ones fail";
          break;
        case CalibratedCheck::Status::conflict:
          k.why = "no value let every honest program of the course pass and every wrong one fail on this card";
          break;
      }
    }
  return c;
}

}  // namespace grader
