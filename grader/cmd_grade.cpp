// grader grade LAB (also: grader LAB) — build, check and time a lab, step by step.
#include <iostream>
#include <memory>

#include "app.hpp"
#include "grading.hpp"
#include "progress.hpp"

namespace grader {
namespace {

struct GradeCommandOptions {
  std::string lab;
  std::string submission;
  std::string seed;
  bool all = false;
  double cap_s = 3.0;
};

void record_progress(ProgressStore& store, const GradeReport& r) {
  auto& p = store.lab(r.lab_id);
  p.steps_passed.clear();
  for (const auto& s : r.steps)
    if (s.status == "pass") p.steps_passed.insert(s.id);
  for (const auto& s : r.steps)
    for (const auto& c : s.checks)
      if (c.status == "pass" && (c.kind == "speedup" || c.kind == "fraction_of_peak" || c.kind == "fraction_of_library")) {
        const auto& iv = c.data[c.kind == "speedup" ? "speedup" : c.kind == "fraction_of_peak" ? "fraction" : "library_fraction"];
        if (iv.is_object()) store.record_best(r.lab_id, c.kind + ":" + c.data.value("case", std::string()), iv.value("median", 0.0));
      }
  p.last_summary = r.exit_code == kExitPass ? "all steps pass"
                   : r.current_step       ? "at step " + std::to_string(*r.current_step)
                                          : "graded";
  p.graded_at = utc_now_iso8601();
  store.save();
}

int run_grade(const GradeCommandOptions& o, const GlobalOptions& g) {
  Session session = Session::open(g);
  const LabInfo& lab = session.course.resolve(o.lab);
  const Manifest manifest = load_manifest(lab.dir / "lab.json");
  GradeOptions go;
  if (!o.submission.empty()) {
    go.submission = std::filesystem::absolute(o.submission);
    if (!std::filesystem::is_regular_file(*go.submission))
      throw CourseError("no submission file at " + o.submission);
  }
  if (!o.seed.empty()) go.seed = std::stoull(o.seed, nullptr, 0);
  go.all_steps = o.all;
  go.cap_s = o.cap_s;

  ProgressStore store(session.course.state_dir() / "progress.json");
  std::vector<std::string> warnings = store.load();
  GradeReport report = grade_lab(session, lab, manifest, go);
  report.notes.insert(report.notes.begin(), warnings.begin(), warnings.end());
  // A fixture or a classmate's file graded with --submission is not the student's progress.
  if (!go.submission) record_progress(store, report);

  if (g.json) std::cout << report_to_json(report).dump(2) << "\n";
  else print_report(report, g.verbose);
  return report.exit_code;
}

}  // namespace

Command grade_command() {
  return {"grade", "Build and grade a lab, step by step (also: grader LAB)",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<GradeCommandOptions>();
            sub.add_option("lab", o->lab, "lab07, 7, bank-conflicts or lab07-bank-conflicts")->required();
            sub.add_option("--submission", o->submission, "grade this file instead of the lab's kernel.cu (progress is not recorded)");
            sub.add_option("--seed", o->seed, "reuse the inputs of an earlier grade (its seed is printed)");
            sub.add_flag("--all", o->all, "grade every step, also after one fails");
            sub.add_option("--cap", o->cap_s, "seconds of timing per case before deciding (default 3)");
            return [o, &g] { return run_grade(*o, g); };
          }};
}

}  // namespace grader
