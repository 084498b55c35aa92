// One grade of a lab as `grader grade` does it, shared by `grade` and `watch`:
// load the progress, grade, and record the result as the student's progress.
#pragma once

#include "course.hpp"
#include "grading.hpp"
#include "manifest.hpp"
#include "session.hpp"

namespace grader {

// Grades `lab` and, unless options.submission is set (a fixture or another
// student's file is not this student's progress), saves what passed to
// <course>/.grader/progress.json. Warnings about a damaged progress file come
// first in the report's notes. Throws what grade_lab and ProgressStore::save
// throw (Interrupted on Ctrl-C, before anything is recorded).
GradeReport grade_and_record(Session& session, const LabInfo& lab, const Manifest& manifest,
                             const GradeOptions& options);

}  // namespace grader
