// The student's progress: <course>/.grader/progress.json. Losing it would only
// cost a regrade, so a damaged file is set aside with a warning rather than
// stopping the grader; writes are atomic so a crash never leaves half a file.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace grader {

inline constexpr int kProgressFormatVersion = 1;

struct LabProgress {
  std::set<int> steps_passed;
  std::map<int, int> hints_shown;       // step id -> how many hints shown
  std::map<std::string, double> best;   // e.g. "speedup:8192x8192" -> 6.5
  std::string last_summary, graded_at;  // graded_at: utc_now_iso8601()
};

// Saving failed (disk full, no permission); the message names the file.
class ProgressError : public std::runtime_error {
  using runtime_error::runtime_error;
};

class ProgressStore {
 public:
  explicit ProgressStore(std::filesystem::path file);

  // A missing file is empty progress. A file that is not valid progress is
  // renamed to <file>.corrupt-<UTC timestamp> and progress starts empty; the
  // returned warnings say so. Never throws for either.
  std::vector<std::string> load();

  LabProgress& lab(const std::string& lab_id);  // created empty on first use
  const LabProgress* find(const std::string& lab_id) const;
  // Keeps the larger value; a non-finite value is not a measurement and is ignored.
  void record_best(const std::string& lab_id, const std::string& key, double value);

  // Atomic: writes <file>.tmp.<pid> beside the file, fsyncs it, renames it over
  // the file. Creates the folder. Throws ProgressError on failure.
  void save() const;

  // One read-modify-write under <file>.lock (flock): load, `change`, save.
  // A grade and a hint in two terminals, or two hints at once, never lose
  // each other's counts. Under the lock, temporary files left by a writer
  // that was killed mid-save are removed. Returns load()'s warnings.
  std::vector<std::string> update(const std::function<void(ProgressStore&)>& change);

  const std::filesystem::path& file() const { return file_; }
  const std::map<std::string, LabProgress>& labs() const { return labs_; }

 private:
  std::filesystem::path file_;
  std::map<std::string, LabProgress> labs_;
};

// "2026-11-22T12:00:00Z"
std::string utc_now_iso8601();

}  // namespace grader
