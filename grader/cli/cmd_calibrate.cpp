// grader calibrate [LAB...] — on this GPU, each timed threshold of the course
// chosen for this card (authoring/calibrate.hpp), written to
// calibration/<gpu model>.json for the course to commit (or, --self-study, to a
// file of this user's that their own grades on this GPU read).
#include <iostream>
#include <memory>

#include "activity.hpp"
#include "app.hpp"
#include "calibrate.hpp"
#include "json_text.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

struct CalibrateCommandOptions {
  std::vector<std::string> labs;
  std::string out;
  bool self_study = false;
  double cap_s = 3.0;
  std::size_t jobs = 0;
};

// The sources of the labs asked for (every lab by default); each needs its solution and a manifest that loads.
std::vector<LabSources> sources_to_calibrate(const Course& course, const std::vector<std::string>& queries) {
  std::vector<LabInfo> labs;
  if (queries.empty()) labs = course.labs();
  for (const auto& q : queries) labs.push_back(course.resolve(q));
  std::vector<LabSources> sources;
  for (const auto& l : labs) {
    sources.push_back(read_lab_sources(course, l));
    const LabSources& s = sources.back();
    if (s.published || !s.solution_path)
      throw CourseError(l.folder +
                        " has no solution here: calibrate where the course's solutions are (a class copy "
                        "grades with the calibrations its instructor committed)");
    if (!s.manifest) throw CourseError(l.folder + "/lab.json does not load: " + s.manifest_error);
  }
  return sources;
}

// Lab by lab, `file` written after each: a run cut short keeps every lab it finished.
CalibrateResult calibrate_lab_by_lab(Session& session, const std::vector<LabSources>& sources, const GpuLintOptions& go,
                                     const fs::path& file, bool json) {
  CalibrateResult r;
  for (const auto& s : sources) {
    CalibrateResult one = calibrate_labs(session, {s}, go);
    const std::size_t checks = one.calibration.labs.empty() ? 0 : one.calibration.labs.begin()->second.size();
    if (!json)
      std::cerr << Style::dim(s.lab.folder + ": " + std::to_string(checks) + " timed check(s) calibrated" +
                              (one.problems.empty() ? "" : ", " + std::to_string(one.problems.size()) + " problem(s)"))
                << "\n";
    const Calibration so_far = r.calibration;
    r.calibration = std::move(one.calibration);
    for (const auto& [lab, done] : so_far.labs) r.calibration.labs.emplace(lab, done);
    r.problems.insert(r.problems.end(), one.problems.begin(), one.problems.end());
    write_calibration(file, r.calibration);
  }
  return r;
}

void print_calibration(const CalibrateResult& r, const fs::path& file, std::size_t conflicts, bool for_the_course) {
  std::cout << Style::bold("calibration for " + r.calibration.gpu) << " (CUDA " << r.calibration.toolkit << ")\n";
  for (const auto& line : calibration_table(r.calibration)) std::cout << "  " << line << "\n";
  for (const auto& p : r.problems) std::cout << "  " << Style::fail_mark() << " " << p << "\n";
  std::cout << "\nwrote " << file.string() << "\n";
  if (conflicts)
    std::cout << Style::red(std::to_string(conflicts) + " check(s) cannot keep their meaning on this GPU") +
                     " (listed above with the numbers): change the lab, its fixtures or its threshold, then calibrate "
                     "again\n";
  if (!r.problems.empty()) std::cout << Style::red("some checks are not calibrated (listed above)") << "\n";
  if (for_the_course && !conflicts && r.problems.empty())
    std::cout << "commit it with the course, and the lessons' lists of checks rewritten from it (grader check "
                 "--write-lessons): a class copy carries it, and every grade on this GPU model reads it\n";
}

int run_calibrate(const CalibrateCommandOptions& o, const GlobalOptions& g) {
  Session session = Session::open(g);
  if (!session.device.present)
    throw EnvironmentError("grader calibrate times programs on a GPU, and there is none here (" +
                           session.device.reason + ")");
  const std::vector<LabSources> sources = sources_to_calibrate(session.course, o.labs);
  GpuLintOptions go;
  go.cap_s = o.cap_s;
  go.gpus = {};  // one GPU: the one this calibration is for
  go.jobs = o.jobs > 0 ? o.jobs : GpuLintOptions::default_gpu_lint_jobs(1);
  if (!g.json && !Activity::enabled())
    std::cerr << Style::dim("calibrating " + std::to_string(sources.size()) + " lab(s) on " + session.device.name +
                            ", " + std::to_string(go.jobs) + " grades at a time…")
              << "\n";
  const fs::path file =
      !o.out.empty() ? fs::absolute(o.out)
      : o.self_study ? *session.user_calibration()
                     : session.course.root() / kCalibrationFolder / (gpu_model_key(session.device.name) + ".json");
  const CalibrateResult r = calibrate_lab_by_lab(session, sources, go, file, g.json);

  std::size_t conflicts = 0;
  for (const auto& [lab, checks] : r.calibration.labs)
    for (const auto& [id, k] : checks) conflicts += k.status == CalibratedCheck::Status::conflict;
  const int rc = conflicts || !r.problems.empty() ? kExitStepFailed : kExitPass;
  if (g.json) {
    std::cout << json_text({{"gpu", r.calibration.gpu},
                            {"file", file.string()},
                            {"calibration", calibration_to_json(r.calibration)},
                            {"conflicts", conflicts},
                            {"problems", r.problems},
                            {"exit_code", rc}})
              << "\n";
    return rc;
  }
  print_calibration(r, file, conflicts, !o.self_study && o.out.empty());
  return rc;
}

}  // namespace

Command calibrate_command() {
  return {
      "calibrate", "Choose the timed thresholds for this GPU (instructor: a course with its solutions)",
      [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
        auto o = std::make_shared<CalibrateCommandOptions>();
        sub.add_option("labs", o->labs, "labs to calibrate (default: every lab)");
        sub.add_option("--out", o->out,
                       "write the calibration here (default: calibration/<gpu model>.json in the course)");
        sub.add_flag("--self-study", o->self_study,
                     "keep it for this user only (their own grades on this GPU and toolkit read it)");
        sub.add_option("--cap", o->cap_s, "seconds of timing per case (default 3)")
            ->check(number_between(0.1, 600, "seconds"));
        sub.add_option("--jobs", o->jobs, "grades at once (default: half the cores, 2 to 8)")->check(CLI::Range(1, 64));
        return [o, &g] { return run_calibrate(*o, g); };
      }};
}

}  // namespace grader
