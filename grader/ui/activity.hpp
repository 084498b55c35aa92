// A spinner on stderr while long work runs ("⠹ building kernel.cu  3 s"), so
// a build or a timing session that takes a minute does not look hung.
//
// It draws only on an interactive terminal: never with --json, never with
// --verbose (whose compiler commands are the progress shown then), never when
// stderr is not a TTY, never with TERM=dumb; otherwise it prints nothing at
// all, so piped and --json output stay byte for byte the same. It waits a
// quarter second before drawing, so quick (cached) work shows nothing, and it
// erases its line when it ends, also when an exception (Interrupted on
// Ctrl-C) unwinds through it. Nothing else may write to the terminal while
// one is alive: print results after it ends.
//
//   {
//     Activity a("building kernel.cu");
//     ...
//     a.update("timing 8192x8192");
//     ...
//   }  // line erased here
//   print_report(...);
//
// Activities may nest, also across threads: one line shows them all, outermost
// first ("checking lab07 · timing 8192x8192  4 s"), with the seconds of the
// innermost one. Each one, drawn or not, is noted in the phase log when it
// ends (phase_log.hpp).
#pragma once

#include <chrono>
#include <string>

namespace grader {

class Activity {
 public:
  // Decides once, like Style::configure: animate only when `allow` (not --json,
  // not --verbose), stderr is a terminal and TERM is not "dumb".
  static void configure(bool allow);
  static bool enabled();

  explicit Activity(std::string what);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  // What is being done now; its seconds count from here.
  void update(std::string what);

 private:
  friend struct ActivityLine;
  bool shown_ = false;  // registered with the line (animation on)
  std::string what_;
  std::chrono::steady_clock::time_point since_;
  int depth_ = 0;  // Activities already alive on this thread (phase_log.hpp)
};

}  // namespace grader
