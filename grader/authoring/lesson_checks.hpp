// What each step checks, in words and with its thresholds, generated from
// lab.json into the lesson so that a student reads the same numbers the grader
// applies. Each step's list sits between two markers, right under the step's
// heading ("### Step N: ..."):
//
//   <!-- checks:N: generated from lab.json by `grader check --write-lessons` -->
//   ...
//   <!-- /checks:N -->
//
// `grader check` fails a lesson whose lists differ from lab.json; with
// --write-lessons it brings them up to date first. Prose elsewhere in the
// lesson explains the checks but never restates a threshold.
//
// Under a timed check the list also gives what each GPU the course is
// calibrated for asks there, with its reference's median (calibration/*.json,
// written by `grader calibrate` on that card): a student on an H200 reads the
// threshold the grade will apply, and every lesson shows where the cards differ.
#pragma once

#include <map>
#include <string>

#include "calibration.hpp"
#include "course_lint.hpp"
#include "manifest.hpp"

namespace grader {

// One lab's calibrated timed checks on each GPU the course holds a calibration
// of: GPU name -> timed_check_id -> its check.
using ThresholdsPerGpu = std::map<std::string, std::map<std::string, CalibratedCheck>>;
ThresholdsPerGpu thresholds_per_gpu(const std::vector<Calibration>& calibrations, const std::string& lab_folder);

// A step's generated list, markers included, ending in a newline.
std::string step_checks_block(const Step& step, const ThresholdsPerGpu& per_gpu = {});
// The lesson with every step's list as lab.json says: an existing list is
// replaced, a missing one is put right under its step's heading. A step with
// no heading gets none (lint_lesson_checks reports it).
std::string with_current_checks(const std::string& readme, const Manifest& manifest,
                                const ThresholdsPerGpu& per_gpu = {});
// Passes when every step has exactly one list and each reads as lab.json says.
LintItem lint_lesson_checks(const std::string& readme, const Manifest& manifest, const ThresholdsPerGpu& per_gpu = {});

}  // namespace grader
