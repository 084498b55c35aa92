// A grade in a grader process of its own: `grader --json grade LAB
// --submission FILE --fresh`, its report read back. `grader check` grades its
// skeletons, solutions and fixtures so, several at once: each grade's GPU work
// takes its turns machine-wide (gpu_lock.hpp), and nothing of one grade's
// state is shared with another's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "grading.hpp"

namespace grader {

struct ChildGradeCall {
  std::filesystem::path grader;  // empty: this very program
  std::filesystem::path course_root;
  std::string lab;                   // its folder name
  std::filesystem::path submission;  // absolute
  std::string arch;                  // as this process builds
  bool all_steps = false;            // --all
  bool one_step_at_a_time = false;   // --one-step-at-a-time
  bool first_failure_only = false;   // --first-failure-only
  double decide_margin = 1.0;        // --decide-margin, when above 1
  bool timed_only = false;           // --timed-only
  std::optional<double> cap_s;       // --cap; none: the grade's default
  std::filesystem::path work_dir;    // its output and errors; made if missing
  double timeout_s = 3600;           // the whole grade
  // CUDA_VISIBLE_DEVICES for the child: the one GPU it grades on (its GPU turns
  // are that GPU's); empty: the GPUs this process sees.
  std::string visible_gpu;
};

// The child's command line: `grader --json grade LAB --submission FILE --fresh`
// with the call's options (a batch adds its own process settings around it).
std::vector<std::string> child_grade_argv(const ChildGradeCall& call);

// The child's report. Throws std::runtime_error (with what the child printed
// last) when it gave none; Interrupted when this grader is.
GradeReport grade_in_child(const ChildGradeCall& call);

}  // namespace grader
