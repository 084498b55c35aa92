// Gradebook exports of one batch: grades.csv, Gradescope's results.json per
// student, and a JUnit XML file (formats: docs/batch.md). Points per step come
// from the manifest; a step earns its points only when it passes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch.hpp"
#include "manifest.hpp"

namespace grader {

struct GradebookInfo {
  std::string lab_id, lab_folder, title;
  std::vector<Step> steps;                                // from the manifest: ids, titles, points, checks
  double hint_penalty = 0;                                // points off per hint used, never below 0
  nlohmann::json environment = nlohmann::json::object();  // {gpu, driver, cuda, isolation}: Gradescope's extra_data

  static GradebookInfo from_manifest(const Manifest& m, const std::string& lab_folder);
  double total_points() const;
};

// A timed check's column: "step 2 speedup 8192x8192".
struct TimedColumn {
  std::size_t step_index = 0, check_index = 0;
  std::string label;
  CheckKind kind;
};
std::vector<TimedColumn> timed_columns(const GradebookInfo& info);

// Points of the passed steps, before the penalty.
double earned_points(const BatchRow& row, const GradebookInfo& info);
// earned - penalty * hints, clamped at 0.
double final_score(double earned, int hints, double penalty);
// The manifest's i-th step's outcome in the row's report; nothing when the row has no report.
std::optional<Outcome> step_status(const BatchRow& row, std::size_t step_index);
// The median of a timed check, or nullopt-like NaN when it was not measured.
double timed_value(const BatchRow& row, const TimedColumn& column);

// The sentence an instructor is shown beside a penalty; empty when it is 0.
std::string self_reported_hints_note(double hint_penalty);

// RFC 4180 field: quoted when it holds a comma, quote, CR/LF or edge spaces; a
// text that a spreadsheet would run as a formula (=, +, -, @) gets a leading '.
std::string csv_field(const std::string& text, bool is_text = true);
// Number for a gradebook: "3", "2.5", "0.333".
std::string format_number(double v, int max_decimals = 3);
std::string xml_escape(const std::string& text);

std::string grades_csv(const std::vector<BatchRow>& rows, const GradebookInfo& info);
nlohmann::json gradescope_result(const BatchRow& row, const GradebookInfo& info);
std::string junit_xml(const std::vector<BatchRow>& rows, const GradebookInfo& info);

// A sentence for the notes column / Gradescope's top-level output.
std::string row_notes(const BatchRow& row, const GradebookInfo& info);

// A submission's row as `grader --json batch` and `grader --json collect` list
// it: id, status, reason, points (null when not graded), hints used, notes.
nlohmann::json row_json(const BatchRow& row, const GradebookInfo& info);

}  // namespace grader
