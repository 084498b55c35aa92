// grader check [LAB...] — the course lint an instructor runs before
// publishing: every lab's files, manifest, lesson, TODO markers, solution,
// builds and fixtures, and on a GPU every verdict and threshold margin.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "activity.hpp"
#include "app.hpp"
#include "course_lint.hpp"
#include "json_text.hpp"
#include "lab_reset.hpp"
#include "lesson_checks.hpp"
#include "lesson_measurements.hpp"
#include "session.hpp"
#include "terminal.hpp"
#include "text.hpp"

namespace grader {
namespace {

struct CheckCommandOptions {
  std::vector<std::string> labs;
  bool static_only = false;
  bool write_lessons = false;
  double cap_s = 3.0;
  std::size_t jobs = 0;  // 0: GpuLintOptions::default_gpu_lint_jobs for the GPUs there are
};

// --write-lessons: each step's list of checks in the lab's README.md, as
// lab.json states them (lesson_checks.hpp), and each measured table as the
// committed measurements hold it (lesson_measurements.hpp). A lab.json that
// does not load is left to the lint to report.
void write_lesson(const LabInfo& lab, const std::filesystem::path& course_root, bool json) {
  const auto readme = read_file(lab.dir / "README.md");
  if (!readme) return;
  Manifest m;
  try {
    m = load_manifest(lab.dir / "lab.json");
  } catch (const std::exception&) {
    return;
  }
  ThresholdsPerGpu per_gpu;
  try {
    per_gpu = thresholds_per_gpu(course_calibrations(course_root), lab.folder);
  } catch (const CalibrationError&) {
    return;  // the lint reports the calibration that does not read
  }
  const std::string current =
      with_current_measurements(with_current_checks(*readme, m, per_gpu), lab.folder, course_root);
  if (current == *readme) return;
  replace_file(lab.dir / "README.md", current);
  if (!json)
    std::cerr << "wrote the lists of checks and measured tables in " << (lab.dir / "README.md").string()
              << " from lab.json and the measurement files\n";
}

std::string mark(LintStatus status) {
  switch (status) {
    case LintStatus::pass:
      return Style::pass_mark();
    case LintStatus::fail:
      return Style::fail_mark();
    case LintStatus::warn:
      return Style::yellow("!");
    case LintStatus::skip:
      return Style::skip_mark();
  }
  return Style::skip_mark();  // not reached
}

void print_lab(const LabLint& l, bool verbose) {
  bool ok = !l.manifest_error;
  for (const auto& i : l.items) ok = ok && i.status != LintStatus::fail;
  std::cout << (ok ? Style::pass_mark() : Style::fail_mark()) << " " << Style::bold(l.lab) << "\n";
  for (const auto& i : l.items) {
    std::cout << "    " << mark(i.status) << " " << Style::dim(i.id + ":") << " " << i.summary << "\n";
    // Passing items keep their details (e.g. the skeleton's other static
    // failures) for --verbose; what is wrong is always shown in full.
    if (i.status != LintStatus::pass || verbose)
      for (const auto& d : i.details) std::cout << "        " << d << "\n";
  }
}

// One lab's lint: its sources, then (with a toolkit) its builds and fixtures'
// static verdicts. Without GPU checks to come it is printed as it finishes.
void check_one_lab(const Course& course, const LabInfo& lab, Session* session, bool gpu, const CheckCommandOptions& o,
                   const GlobalOptions& g, CourseLint& c, LabSources& src) {
  // The spinner says which lab is being checked; without one, a line does.
  if (!g.json && !Activity::enabled()) std::cerr << Style::dim("checking " + lab.folder + "…") << "\n";
  if (o.write_lessons) write_lesson(lab, course.root(), g.json);
  LabLint l;
  {
    Activity a("checking " + lab.folder + ": files, lesson and markers");
    src = read_lab_sources(course, lab);
    l = lint_lab_sources(src);
    if (session) {
      a.update("checking " + lab.folder + ": builds and fixtures");
      lint_lab_builds(*session, src, l);
    }
  }
  c.published = c.published || src.published;
  if (l.manifest_error) c.skipped.push_back({lab.folder + ": builds and GPU checks", "lab.json does not load"});
  if (!g.json && !gpu) print_lab(l, g.verbose);
  c.labs.push_back(std::move(l));
}

// Every lab's GPU checks at once (their grades share the GPU as grades do),
// then every lab printed in order.
void check_labs_on_gpu(Session& session, const std::vector<LabSources>& sources, const CheckCommandOptions& o,
                       const GlobalOptions& g, CourseLint& c) {
  GpuLintOptions go;
  go.cap_s = o.cap_s;
  // Every GPU the driver shows this process (CUDA_VISIBLE_DEVICES picks them).
  const int devices = session.device.raw.is_object() ? session.device.raw.value("devices", 1) : 1;
  go.gpus = check_gpus(devices, std::getenv("CUDA_VISIBLE_DEVICES"));
  go.jobs = o.jobs > 0 ? o.jobs : GpuLintOptions::default_gpu_lint_jobs(go.gpus.size());
  const std::string on = go.gpus.size() > 1 ? " on " + std::to_string(go.gpus.size()) + " GPUs" : "";
  if (!g.json && !Activity::enabled())
    std::cerr << Style::dim("checking on the GPU: " + std::to_string(c.labs.size()) + " lab" +
                            (c.labs.size() == 1 ? "" : "s") + ", " + std::to_string(go.jobs) + " grades at a time" +
                            on + "…")
              << "\n";
  std::vector<std::pair<const LabSources*, LabLint*>> labs;
  for (std::size_t i = 0; i < sources.size(); ++i) labs.push_back({&sources[i], &c.labs[i]});
  lint_labs_gpu(session, labs, go);
  if (!g.json)
    for (const auto& l : c.labs) print_lab(l, g.verbose);
}

// What was skipped and why, the counts, and what the exit code means.
void print_totals(const CourseLint& c) {
  std::size_t pass = 0, fail = 0, skip = 0, warn = 0;
  for (const auto& l : c.labs)
    for (const auto& i : l.items)
      (i.status == LintStatus::pass   ? pass
       : i.status == LintStatus::fail ? fail
       : i.status == LintStatus::warn ? warn
                                      : skip)++;
  if (!c.skipped.empty()) {
    std::cout << "\n" << Style::bold("skipped") << "\n";
    for (const auto& [what, why] : c.skipped)
      std::cout << "    " << Style::skip_mark() << " " << what << ": " << why << "\n";
  }
  std::cout << "\n"
            << c.labs.size() << " lab" << (c.labs.size() == 1 ? "" : "s") << ": " << pass << " hold, "
            << (fail ? Style::red(std::to_string(fail) + " fail") : std::string("0 fail")) << ", " << skip << " skipped"
            << (c.skipped.empty() ? std::string()
                                  : " (and " + std::to_string(c.skipped.size()) + " group" +
                                        (c.skipped.size() == 1 ? "" : "s") + " of checks not run: listed above)")
            << (warn ? ", " + Style::yellow(std::to_string(warn) + " warn") : std::string()) << "\n";
  if (c.exit_code == kExitUsage) std::cout << Style::red("a lab.json does not load: fix it first (exit 2)") << "\n";
  if (c.exit_code == kExitEnvironment)
    std::cout << Style::yellow(c.arch.empty() ? "no CUDA toolkit: nothing could be built (exit 4)"
                                              : "no GPU: the GPU checks did not run, so this was not the whole check "
                                                "(exit 4; --static-only asks for the static checks alone)")
              << "\n";
}

int run_check(const CheckCommandOptions& o, const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  std::vector<LabInfo> labs;
  if (o.labs.empty()) labs = course.labs();
  for (const auto& q : o.labs) labs.push_back(course.resolve(q));
  if (labs.empty()) throw CourseError("no lab to check under " + (course.root() / "labs").string());

  CourseLint c;
  c.root = course.root().string();
  c.static_only = o.static_only;
  c.gpu = nullptr;

  std::optional<Session> session;
  bool no_toolkit = false;
  try {
    Activity a("looking for the CUDA toolkit and a GPU");
    session.emplace(Session::open(g));
    c.arch = session->builder->settings().arch;
    if (session->device.present) c.gpu = session->device.raw;
  } catch (const EnvironmentError& e) {
    no_toolkit = true;
    c.skipped.push_back({"builds, static checks, fixture verdicts and every GPU check", e.what()});
  }
  const bool gpu = session && session->device.present && !o.static_only;
  if (session && !gpu)
    c.skipped.push_back(
        {"GPU checks (the skeleton fails its first step, the solution passes, threshold margins, "
         "fixture verdicts on the GPU)",
         o.static_only ? std::string("--static-only") : "no GPU: " + session->device.reason});

  std::vector<LabSources> sources(labs.size());
  for (std::size_t i = 0; i < labs.size(); ++i)
    check_one_lab(course, labs[i], session ? &*session : nullptr, gpu, o, g, c, sources[i]);
  if (gpu) check_labs_on_gpu(*session, sources, o, g, c);
  if (c.published)
    c.skipped.insert(c.skipped.begin(), {"solution-based checks (solution builds and passes, stray hunks, TODO regions "
                                         "filled, threshold margins, fixture verdicts)",
                                         "a published copy: the course has no solutions/ folder"});
  const bool no_gpu = session && !gpu && !o.static_only;
  c.exit_code = lint_exit_code(c, no_toolkit || no_gpu);

  if (g.json) {
    std::cout << json_text(lint_to_json(c)) << "\n";
    return c.exit_code;
  }
  print_totals(c);
  return c.exit_code;
}

}  // namespace

Command check_command() {
  return {"check", "Lint the course before publishing: files, lessons, markers, solutions, fixtures, thresholds",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<CheckCommandOptions>();
            sub.add_option("labs", o->labs, "labs to check (default: every lab)");
            sub.add_flag("--static-only", o->static_only, "no GPU checks, even when a GPU is visible");
            sub.add_flag("--write-lessons", o->write_lessons,
                         "first write each lesson's lists of checks (from lab.json) and measured tables (from "
                         "docs/measurements)");
            sub.add_option("--cap", o->cap_s, "seconds of timing per case on the GPU (default 3)")
                ->check(number_between(0.1, 600, "seconds"));
            sub.add_option("--jobs", o->jobs,
                           "grades at once (default: half the cores, 2 to 8 for each GPU; the grades spread over every "
                           "visible GPU)")
                ->check(CLI::Range(1, 64));
            return [o, &g] { return run_check(*o, g); };
          }};
}

}  // namespace grader
