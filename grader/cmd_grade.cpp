// grader grade LAB (also: grader LAB) — build, check and time a lab, step by step.
#include <iostream>
#include <memory>

#include "app.hpp"
#include "grade_and_record.hpp"

namespace grader {
namespace {

struct GradeCommandOptions {
  std::string lab;
  std::string submission;
  std::string seed;
  bool all = false;
  bool sanitize = false;
  double cap_s = 3.0;
};

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
  go.sanitize = o.sanitize;

  // A fixture or a classmate's file graded with --submission is not recorded as progress.
  GradeReport report = grade_and_record(session, lab, manifest, go);

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
            sub.add_flag("--sanitize", o->sanitize,
                         "also run compute-sanitizer (memcheck, racecheck, synccheck, initcheck) in every step that checks correctness");
            sub.add_option("--cap", o->cap_s, "seconds of timing per case before deciding (default 3)");
            return [o, &g] { return run_grade(*o, g); };
          }};
}

}  // namespace grader
