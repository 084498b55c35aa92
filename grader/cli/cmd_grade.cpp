// grader grade LAB (also: grader LAB) — build, check and time a lab, step by step.
#include <iostream>
#include <memory>

#include "app.hpp"
#include "calibrate.hpp"
#include "grade_and_record.hpp"
#include "json_text.hpp"
#include "phase_log.hpp"

namespace grader {
namespace {

struct GradeCommandOptions {
  std::string lab;
  std::string submission;
  std::string seed;
  bool all = false;
  bool sanitize = false;
  double cap_s = 3.0;
  bool timings = false;
  bool fresh = false;
  bool one_step_at_a_time = false;
  bool first_failure_only = false;
  double decide_margin = 1.0;
  bool timed_only = false;
};

int run_grade(const GradeCommandOptions& o, const GlobalOptions& g) {
  Session session = Session::open(g);
  const LabInfo& lab = session.course.resolve(o.lab);
  const Manifest manifest = load_manifest(lab.dir / "lab.json");
  GradeOptions go;
  if (!o.submission.empty()) {
    go.submission = std::filesystem::absolute(o.submission);
    if (!std::filesystem::is_regular_file(*go.submission)) throw CourseError("no submission file at " + o.submission);
  }
  if (!o.seed.empty()) go.seed = parse_seed(o.seed).value();  // seed_number() let only a seed through
  go.all_steps = o.all;
  go.cap_s = o.cap_s;
  go.sanitize = o.sanitize;
  go.reuse_tool_runs = !o.fresh;
  go.use_user_calibration = !o.fresh;
  go.overlap_runs = !o.one_step_at_a_time;
  go.first_failure_only = o.first_failure_only;
  go.decide_margin = o.decide_margin;
  go.timed_only = o.timed_only;

  // Self-study of a lab the course has no thresholds of for this GPU: it is calibrated once first (grader
  // calibrate --self-study does every lab by hand); a batch, a check and --fresh grades never do.
  if (!o.fresh && needs_self_study_calibration(session, lab)) {
    if (!g.json)
      std::cerr << "this course has no thresholds of " << lab.folder << " for " << session.device.name
                << ": timing its solution and honest alternatives once, to calibrate them for this GPU (kept as "
                   "yours; grader calibrate --self-study does every lab)…\n";
    calibrate_lab_for_self_study(session, lab);
  }

  // A fixture or a classmate's file graded with --submission is not recorded as progress.
  GradeReport report = grade_and_record(session, lab, manifest, go);

  // Where this grade's time went (phase_log.hpp): in every JSON report, and
  // printed after the report with --timings.
  const std::vector<Phase> phases = noted_phases();
  const double total_s = seconds_since_start();
  if (g.json) {
    nlohmann::json j = report_to_json(report);
    j["process_seconds"] = total_s;
    j["phases"] = nlohmann::json::array();
    for (const auto& p : phases)
      j["phases"].push_back({{"what", p.what}, {"start", p.start_s}, {"seconds", p.seconds}, {"depth", p.depth}});
    std::cout << json_text(j) << "\n";
  } else {
    print_report(report, g.verbose);
    if (o.timings) std::cout << "\nWhere the time went:\n" << format_phases(phases, total_s);
  }
  return report.exit_code;
}

}  // namespace

Command grade_command() {
  return {"grade", "Build and grade a lab, step by step (also: grader LAB)",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<GradeCommandOptions>();
            sub.add_option("lab", o->lab, "lab07, 7, bank-conflicts or lab07-bank-conflicts")->required();
            sub.add_option("--submission", o->submission,
                           "grade this file instead of the lab's kernel.cu (progress is not recorded)");
            sub.add_option("--seed", o->seed, "reuse the inputs of an earlier grade (its seed is printed)")
                ->check(seed_number());
            sub.add_flag("--all", o->all, "grade every step, also after one fails");
            sub.add_flag("--sanitize", o->sanitize,
                         "also run compute-sanitizer (memcheck, racecheck, synccheck, initcheck) in every step that "
                         "checks correctness");
            sub.add_flag("--timings", o->timings,
                         "after the report, list where the grade's time went (build, each run, each tool)");
            sub.add_option("--cap", o->cap_s, "seconds of timing per case before deciding (default 3)")
                ->check(number_between(0.1, 600, "seconds"));
            sub.add_flag("--fresh", o->fresh,
                         "run ncu and compute-sanitizer again even where this very program was checked by an "
                         "earlier grade (their reports are kept and reused otherwise)");
            sub.add_flag("--one-step-at-a-time", o->one_step_at_a_time,
                         "start ncu, compute-sanitizer and the timing only when their step is graded, not beside "
                         "the first run: one grade takes longer, but many side by side waste nothing on steps a "
                         "failing step locks (grader check grades so)");
            sub.add_flag("--first-failure-only", o->first_failure_only,
                         "in a failing step, start no compute-sanitizer, ncu or timing run once a check has "
                         "failed, taking the cheapest checks first; those are reported as not run (the same "
                         "verdict, sooner; grader check grades its fixtures so)");
            sub.add_option("--decide-margin", o->decide_margin,
                           "time each case until its interval is also clear of every threshold times this "
                           "(default 1); the verdict still reads the threshold (grader check grades its "
                           "solutions so, for the thresholds' margins)")
                ->check(number_between(1, 10, ""));
            sub.add_flag("--timed-only", o->timed_only,
                         "grade only the timed checks of every step (grader calibrate reads their times; the "
                         "verdict is not a grade of the lab)");
            return [o, &g] { return run_grade(*o, g); };
          }};
}

}  // namespace grader
