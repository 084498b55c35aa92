#include "grading.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "activity.hpp"
#include "compiler_report.hpp"
#include "lab/compare.hpp"
#include "lab_grader.hpp"
#include "ncu_report.hpp"
#include "phase_log.hpp"
#include "plausibility.hpp"
#include "protocol/stats.hpp"
#include "red_flags.hpp"
#include "referee_client.hpp"
#include "sandbox.hpp"
#include "sanitizer_report.hpp"
#include "text.hpp"
#include "tool_run.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

CheckResult LabGrader::skipped(const Check& c, const std::string& why) {
  CheckResult r;
  r.kind = c.kind;
  r.status = Outcome::skipped;
  r.summary = why;
  return r;
}

CheckResult LabGrader::failed(const Check& c, const std::string& summary, std::optional<Symptom> symptom) {
  CheckResult r;
  r.kind = c.kind;
  r.status = Outcome::fail;
  r.summary = summary;
  r.symptom = symptom;
  return r;
}

std::vector<CheckResult> checks_not_graded(const Step& step, const std::string& why) {
  std::vector<CheckResult> out;
  for (const auto& c : step.checks) {
    CheckResult r;
    r.kind = c.kind;
    r.status = Outcome::skipped;
    r.summary = "not graded: " + why;
    r.data["not_graded"] = why;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<int> compute_capability_of(const std::string& arch) {
  const auto underscore = arch.find('_');
  if (underscore == std::string::npos) return std::nullopt;
  std::size_t end = underscore + 1;
  while (end < arch.size() && std::isdigit(static_cast<unsigned char>(arch[end]))) ++end;
  if (end == underscore + 1 || end - underscore > 4) return std::nullopt;
  return std::stoi(arch.substr(underscore + 1, end - underscore - 1));
}

std::optional<std::string> compute_capability_shortfall(const Step& step, const DeviceInfo& device,
                                                        const std::string& arch) {
  if (!step.min_compute_capability) return std::nullopt;
  const int need = *step.min_compute_capability;
  const std::string needs = "needs compute capability " + dotted_compute_capability(need) + "; ";
  if (device.present)
    if (const auto gpu = compute_capability_of(device.arch); gpu && *gpu < need)
      return needs + "this GPU is " + dotted_compute_capability(*gpu);
  if (const auto built = compute_capability_of(arch); built && *built < need) return needs + "building for " + arch;
  return std::nullopt;
}

std::optional<std::string> LabGrader::gpu_unavailable() const {
  if (!s_.device.present) return "skipped: needs a GPU";
  return std::nullopt;
}

bool LabGrader::build() {
  Activity activity("building " + (o_.submission ? o_.submission->filename().string() : m_.student_file));
  const RunnerSource student{lab_.dir, o_.submission.value_or(lab_.dir / m_.student_file), "kernel.cu", m_.link};
  rep_.student_build = s_.builder->build({student})[0];
  if (rep_.student_build.kernel.ok) {
    ptx_ = parse_ptx(read_file(rep_.student_build.kernel.ptx_file).value_or(""));
    resources_ = parse_ptxas_report(rep_.student_build.kernel.ptxas_log);
  }
  return rep_.student_build.ok;
}

// The referee of this lab grading the student's program: `tag` names the work folder.
RefereeCall LabGrader::referee_call(const std::string& tag) const {
  RefereeCall rc;
  rc.referee = rep_.student_build.referee;
  rc.worker = rep_.student_build.worker;
  rc.work_dir = run_dir_ / tag;
  rc.request_timeout_s = m_.timeout_s;
  return rc;
}
CheckResult LabGrader::check(const Check& c) {
  switch (c.kind) {
    case CheckKind::ptx:
      return check_ptx(c);
    case CheckKind::ptxas:
      return check_ptxas(c);
    case CheckKind::correct:
      return check_correct(c);
    case CheckKind::api:
      return check_api(c);
    case CheckKind::ncu:
      return check_ncu(c);
    case CheckKind::sanitizer:
      return check_sanitizer(c);
    case CheckKind::overlap:
      return check_overlap(c);
    case CheckKind::speedup:
    case CheckKind::fraction_of_peak:
    case CheckKind::fraction_of_library:
      return check_timing(c);
  }
  return failed(c, "a check of no known kind (a grader problem)");  // not reached
}

bool has_a_run_of_its_own(CheckKind kind) { return traits_of(kind).cost_rank >= 2; }

std::vector<std::size_t> cheapest_first(const std::vector<Check>& checks) {
  std::vector<std::size_t> order(checks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return traits_of(checks[a].kind).cost_rank < traits_of(checks[b].kind).cost_rank;
  });
  return order;
}

bool not_run_after_a_failure(const CheckResult& c) { return c.data.value("not_run", "") == "first_failure_only"; }

// A step's checks, in the manifest's order in the report.
std::vector<CheckResult> LabGrader::grade_step(const Step& step) {
  // Not this machine's to grade: nothing of the step runs, and its checks, all
  // skipped, leave it skipped, as checks that need a GPU do without one.
  if (const auto why = shortfalls_.find(step.id); why != shortfalls_.end()) return checks_not_graded(step, why->second);
  std::vector<CheckResult> out(step.checks.size());
  if (!o_.first_failure_only) {
    for (std::size_t i = 0; i < step.checks.size(); ++i) out[i] = check(step.checks[i]);
    return out;
  }
  bool failed_already = false;
  for (const std::size_t i : cheapest_first(step.checks)) {
    if (failed_already && has_a_run_of_its_own(step.checks[i].kind)) {
      out[i] = skipped(step.checks[i], "not run: another check of this step failed (--first-failure-only)");
      out[i].advisory = true;  // the step fails anyway
      out[i].data["not_run"] = "first_failure_only";
      continue;
    }
    out[i] = check(step.checks[i]);
    failed_already = failed_already || out[i].status == Outcome::fail;
  }
  return out;
}

namespace {

// What names a kept tool report besides the call: the GPU it ran on. Reports of
// the very same program are reused in a student's own grades (kept_tool_runs.hpp);
// never in a sandbox, where the grade is the one that counts (""  keeps nothing).
std::string kept_tool_run_tag(const Session& s, const GradeOptions& o) {
  if (!o.reuse_tool_runs || isolation_from_environment().enabled()) return "";
  return s.device.name + " " + s.device.uuid + " " + std::to_string(s.device.driver_version);
}

}  // namespace

LabGrader::LabGrader(Session& s, const LabInfo& lab, const Manifest& m, const GradeOptions& o)
    : s_(s), lab_(lab), m_(m), o_(o), tool_runs_(s.builder->settings().cache_dir, kept_tool_run_tag(s, o)) {}

GradeReport LabGrader::run() {
  const auto t0 = std::chrono::steady_clock::now();
  rep_.lab_folder = lab_.folder;
  rep_.lab_id = lab_.id;
  rep_.title = m_.title;
  rep_.submission = o_.submission ? o_.submission->string() : (lab_.dir / m_.student_file).string();
  rep_.arch = s_.builder->settings().arch;
  rep_.device = s_.device;
  rep_.seed = o_.seed.value_or(std::random_device{}());  // fresh inputs every grade
  run_dir_ = s_.new_run_dir(lab_.id);
  for (const auto& step : m_.steps)
    if (auto why = compute_capability_shortfall(step, s_.device, rep_.arch)) shortfalls_[step.id] = *why;

  for (const auto& step : m_.steps) rep_.steps.push_back({step.id, step.title, step.points, Outcome::locked, {}, ""});
  if (!build()) {
    rep_.exit_code = kExitBuildFailed;
    rep_.current_step = m_.steps.front().id;
  } else {
    bool blocked = false;
    for (std::size_t i = 0; i < m_.steps.size(); ++i) {
      if (blocked && !o_.all_steps) break;
      auto& sr = rep_.steps[i];
      bool any_fail = false, any_skip = false;
      sr.checks = grade_step(m_.steps[i]);
      for (const auto& r : sr.checks) {
        any_fail = any_fail || r.status == Outcome::fail;
        any_skip = any_skip || (r.status == Outcome::skipped && !r.advisory);
      }
      sr.status = any_fail ? Outcome::fail : any_skip ? Outcome::skipped : Outcome::pass;
      sr.symptom_hint = symptom_hint(m_, m_.steps[i], sr.checks);
      if (sr.status != Outcome::pass && !rep_.current_step) rep_.current_step = sr.id;
      blocked = blocked || any_fail;
    }
    bool failed_step = false, skipped_step = false;
    for (const auto& st : rep_.steps) {
      failed_step = failed_step || st.status == Outcome::fail;
      skipped_step = skipped_step || st.status == Outcome::skipped;
    }
    rep_.exit_code = failed_step ? kExitStepFailed : skipped_step ? kExitEnvironment : kExitPass;
    if (!s_.device.present) rep_.notes.push_back("no GPU: only the static checks ran (" + s_.device.reason + ")");
    if (!s_.course.state_note().empty()) rep_.notes.push_back(s_.course.state_note());
    for (const auto& f : red_flags(read_file(rep_.submission).value_or(""), m_.teaches))
      rep_.notes.push_back("kernel.cu:" + std::to_string(f.line) + ": " + f.what +
                           " (noted for whoever reads this grade; the checks decide)");
  }
  stop_tool_runs();  // of steps a failed step locked: no check reads them, and their folders go next
  if (!s_.global.verbose) {
    std::error_code ec;
    fs::remove_all(run_dir_, ec);
  }
  rep_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  make_printable(rep_);
  return rep_;
}

std::string value_text(const json& v) {
  if (v.is_number()) return fixed(v.get<double>(), 6);
  if (v.is_string()) return v.get<std::string>();
  return v.is_null() ? "nan" : v.dump();  // null: a non-finite value written by nlohmann
}

// The hint that matches what was measured beats the generic next hint: the
// step's own symptom_hints first, then the lab's.
std::string symptom_hint(const Manifest& m, const Step& step, const std::vector<CheckResult>& checks) {
  const auto lookup = [&](Symptom symptom) -> std::string {
    if (auto h = step.symptom_hints.find(name_of(symptom)); h != step.symptom_hints.end()) return h->second;
    if (auto h = m.symptom_hints.find(name_of(symptom)); h != m.symptom_hints.end()) return h->second;
    return "";
  };
  std::vector<Symptom> seen;
  for (const auto& c : checks)
    if (c.status == Outcome::fail && c.symptom) seen.push_back(*c.symptom);
  const auto& order = symptoms_closest_to_the_cause_first();
  std::stable_sort(seen.begin(), seen.end(), [&](Symptom a, Symptom b) {
    return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
  });
  for (const auto& symptom : seen)
    if (auto h = lookup(symptom); !h.empty()) return h;
  return "";
}

// The thresholds of this GPU's calibration (calibration.hpp), and what the
// report says of them: a header line, and each timed verdict a calibration has
// no value for says so.
GradeReport grade_lab(Session& session, const LabInfo& lab, const Manifest& manifest, const GradeOptions& options) {
  CalibrationUse use = calibration_for(session.course.root(), session.device.present ? session.device.name : "",
                                       options.use_user_calibration ? session.user_calibration() : std::nullopt);
  const Manifest calibrated = with_calibration(manifest, lab.folder, use);
  if (const fs::path rel = use.file.lexically_relative(session.course.root());
      !use.file.empty() && !rel.empty() && *rel.begin() != "..")
    use.file = rel;  // the header names a course file by its place in the course
  const Manifest graded = options.timed_only ? timed_checks_only(calibrated)
                          : options.sanitize ? with_sanitizer_checks(calibrated)
                                             : calibrated;
  GradeReport report = LabGrader(session, lab, graded, options).run();
  for (std::size_t i = 0; i < graded.steps.size() && i < report.steps.size(); ++i)
    for (std::size_t j = 0; j < graded.steps[i].checks.size() && j < report.steps[i].checks.size(); ++j) {
      CheckResult& r = report.steps[i].checks[j];
      const Check* c = &graded.steps[i].checks[j];
      for (const auto& f : c->fallback)
        if (r.kind == f.kind) c = &f;  // the fallback graded the step
      if (is_timed(*c) && r.kind == c->kind && r.status != Outcome::skipped)
        r.summary += use.timed_suffix(timed_check_id(graded.steps[i].id, *c));
    }
  report.calibration = std::move(use);
  return report;
}

Manifest timed_checks_only(Manifest manifest) {
  for (auto& step : manifest.steps) {
    std::vector<Check> timed;
    for (const auto& c : step.checks) {
      if (is_timed(c)) timed.push_back(c);
      for (const auto& f : c.fallback)
        if (is_timed(f)) timed.push_back(f);
    }
    step.checks = std::move(timed);
  }
  return manifest;
}

Manifest with_sanitizer_checks(Manifest manifest) {
  for (auto& step : manifest.steps) {
    const auto has = [&](CheckKind kind) {
      return std::any_of(step.checks.begin(), step.checks.end(), [&](const Check& c) { return c.kind == kind; });
    };
    if (has(CheckKind::sanitizer)) continue;
    for (std::size_t i = 0; i < step.checks.size(); ++i) {
      if (step.checks[i].kind != CheckKind::correct) continue;
      Check c;
      c.kind = CheckKind::sanitizer;
      c.cases = step.checks[i].cases;
      c.tools = sanitizer_tools();
      step.checks.insert(step.checks.begin() + static_cast<std::ptrdiff_t>(i) + 1, c);
      break;
    }
  }
  return manifest;
}

}  // namespace grader
