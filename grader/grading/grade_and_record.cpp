#include "grade_and_record.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "course.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace grader {
namespace {

void record_progress(ProgressStore& store, const GradeReport& r) {
  auto& p = store.lab(r.lab_id);
  p.steps_passed.clear();
  for (const auto& s : r.steps)
    if (s.status == Outcome::pass) p.steps_passed.insert(s.id);
  for (const auto& s : r.steps)
    for (const auto& c : s.checks)
      if (c.status == Outcome::pass && is_timed_kind(c.kind)) {
        const auto& iv = c.data[memlabs::name_of(timed_ratio(c.kind))];
        if (iv.is_object())
          store.record_best(r.lab_id, name_of(c.kind) + ":" + c.data.value("case", std::string()),
                            iv.value("median", 0.0));
      }
  p.last_summary = r.exit_code == kExitPass ? "all steps pass"
                   : r.current_step         ? "at step " + std::to_string(*r.current_step)
                                            : "graded";
  p.graded_at = utc_now_iso8601();
}

}  // namespace

GradeReport grade_and_record(Session& session, const LabInfo& lab, const Manifest& manifest,
                             const GradeOptions& options) {
  if (!options.submission) {
    // Deleted or renamed by mistake: say which file and how to get it back.
    const std::filesystem::path file = lab.dir / manifest.student_file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
      throw CourseError(std::filesystem::relative(file, session.course.root(), ec).generic_string() +
                        " is missing: it is the file you edit in " + lab.id + ". `grader reset " + lab.id +
                        "` writes its starting version again.");
  }
  ProgressStore store(session.course.state_dir() / "progress.json");
  std::vector<std::string> warnings = store.load();
  GradeReport report = grade_lab(session, lab, manifest, options);
  // Read again after the grade: hints shown while it ran are kept.
  if (!options.submission) {
    const auto later = store.update([&](ProgressStore& fresh) { record_progress(fresh, report); });
    for (const auto& w : later)
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  report.notes.insert(report.notes.begin(), warnings.begin(), warnings.end());
  return report;
}

}  // namespace grader
