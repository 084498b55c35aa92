// grader watch LAB — grade a lab again every time its kernel.cu is saved.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "file_watcher.hpp"
#include "grade_and_record.hpp"
#include "json_text.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

struct WatchOptions {
  std::string lab;
  bool poll = false;
  bool sanitize = false;
  int max_grades = 0;  // 0: until Ctrl-C
};

// Ctrl-C while waiting for a save ends the watch. While a grade runs,
// run_child installs its own handlers (and restores these after), so a Ctrl-C
// then stops the program under test and arrives here as Interrupted, as in
// `grader grade`.
std::atomic<int> g_stop{0};
extern "C" void note_stop(int sig) { g_stop.store(sig); }

class StopOnSignals {
 public:
  StopOnSignals() {
    struct sigaction sa {};
    sa.sa_handler = note_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the watcher's sleep wakes at once
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

std::string clock_now() {
  char buf[16];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&t));
  return buf;
}

// Where the student stands after a grade, in a few words.
std::string standing(const GradeReport& r) {
  if (r.exit_code == kExitPass) return r.lab_id + ": all steps pass";
  if (!r.student_build.ok) return r.lab_id + ": kernel.cu does not build";
  if (!r.current_step) return r.lab_id + ": graded";
  for (const auto& s : r.steps)
    if (s.id == *r.current_step) return r.lab_id + " step " + std::to_string(s.id) + ": " + s.title;
  return r.lab_id + " step " + std::to_string(*r.current_step);
}

int run_watch(const WatchOptions& o, const GlobalOptions& g) {
  Session session = Session::open(g);
  const LabInfo& lab = session.course.resolve(o.lab);
  const Manifest manifest = load_manifest(lab.dir / "lab.json");
  const std::string file = "labs/" + lab.folder + "/" + manifest.student_file;
  // With --json, stdout carries one report per line and nothing else.
  std::ostream& status = g.json ? std::cerr : std::cout;
  const bool clear_screen = !g.json && isatty(STDOUT_FILENO);

  const StopOnSignals signals;
  FileWatcher::Options wo;
  wo.poll = o.poll;
  // Watching starts before the first grade, so a save made during it is not missed.
  FileWatcher watcher(lab.dir / manifest.student_file, wo);
  if (!watcher.fallback_reason().empty())
    status << Style::yellow("note: ") << "polling " << file << " every 0.5 s (" << watcher.fallback_reason() << ")\n";

  for (int n = 1;; ++n) {
    if (clear_screen) std::cout << "\033[H\033[2J";
    if (!g.json)
      std::cout << Style::dim("── grader watch " + lab.id + " · grade " + std::to_string(n) + " · " + clock_now() +
                              " ──")
                << "\n";
    std::cout << std::flush;
    GradeOptions go;
    go.sanitize = o.sanitize;
    go.reuse_tool_runs = true;  // a save that changes nothing in the program reruns no tool
    go.use_user_calibration = true;
    const GradeReport report = grade_and_record(session, lab, manifest, go);
    if (g.json)
      std::cout << json_text(report_to_json(report), -1) << "\n";
    else
      print_report(report, g.verbose);
    std::cout << std::flush;  // a pipe reading the reports gets each as it is made
    if (o.max_grades > 0 && n >= o.max_grades) return report.exit_code;
    status << Style::bold(standing(report)) << " · waiting for changes to " << file << " (Ctrl-C to stop)\n"
           << std::flush;
    // g_stop may also be set already: a Ctrl-C between two programs the grade ran.
    if (!watcher.wait([] { return g_stop.load() != 0; })) {
      status << "\nstopped watching " << file << "\n";
      return 130;
    }
  }
}

}  // namespace

Command watch_command() {
  return {"watch", "Grade a lab again every time you save its kernel.cu (Ctrl-C to stop)",
          [](CLI::App& sub, GlobalOptions& g) -> std::function<int()> {
            auto o = std::make_shared<WatchOptions>();
            sub.add_option("lab", o->lab, "lab07, 7, bank-conflicts or lab07-bank-conflicts")->required();
            sub.add_flag("--sanitize", o->sanitize,
                         "run compute-sanitizer in every step that checks correctness, as grade --sanitize");
            sub.add_flag("--poll", o->poll,
                         "look at the file every 0.5 s instead of using inotify (network file systems)");
            sub.add_option("--max-grades", o->max_grades,
                           "stop after N grades, exiting as the last one does (default: never)")
                ->check(CLI::Range(0, 1000000));
            return [o, &g] { return run_watch(*o, g); };
          }};
}

}  // namespace grader
